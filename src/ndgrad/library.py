"""`torch.library`: custom operators that libraries register (`custom_op`, `register_fake`,
`register_autograd`, `register_kernel`, `Library.define/impl`), callable as
`torch.ops.<namespace>.<name>` (and `.default`). ndgrad has one backend and no compiler, so an
operator runs its Python implementation (the kernel registered for "cpu" or without a device,
else the function itself); a registered autograd formula becomes a custom autograd Function
(backward(ctx, *grads), after setup_context(ctx, inputs, output)); fake (meta) kernels are kept
and never needed."""
import functools
import inspect

__all__ = ["Library", "define", "impl", "impl_abstract", "register_fake", "register_kernel",
           "register_autograd", "custom_op", "get_ctx", "opcheck", "register_torch_dispatch",
           "register_vmap", "infer_schema", "fallthrough_kernel", "register_autocast",
           "get_kernel", "triton_op", "wrap_triton"]

_OPS = {}          # namespace -> {name: CustomOpDef}


def _split(qualname):
    if "::" not in qualname:
        raise ValueError(f"Expected there to be a namespace in {qualname}, i.e. The operator "
                         "name should look something like ns::foo")
    ns, name = qualname.split("::", 1)
    return ns, name.split(".")[0]


class CustomOpDef:
    """A registered operator: call it like its function."""

    def __init__(self, namespace, name, schema, fn, mutates_args=()):
        self._namespace, self._name = namespace, name
        self._schema = schema
        self._init_fn = fn
        self._mutates_args = mutates_args
        self._kernels = {}
        self._abstract_fn = None
        self._backward_fn = None
        self._setup_context_fn = None
        self._autograd_fn = None
        self._autocast = {}      # device type -> dtype (register_autocast)
        if fn is not None:
            functools.update_wrapper(self, fn)

    def __repr__(self):
        return f"<CustomOpDef({self._namespace}::{self._name})>"

    @property
    def default(self):
        return self

    def _impl(self):
        for key in ("cpu", None, "CPU", "CompositeExplicitAutograd",
                    "CompositeImplicitAutograd"):
            if key in self._kernels:
                return self._kernels[key]
        if self._init_fn is None:
            raise NotImplementedError(f"{self._namespace}::{self._name}: no kernel registered")
        return self._init_fn

    def __call__(self, *args, **kwargs):
        if self._autocast:
            args, kwargs, ctx = self._autocast_inputs(args, kwargs)
            if ctx is not None:
                with ctx:
                    return self._call(*args, **kwargs)
        return self._call(*args, **kwargs)

    def _call(self, *args, **kwargs):
        if self._backward_fn is None:
            return self._impl()(*args, **kwargs)
        return self._autograd().apply(*args, **kwargs)

    def _autocast_inputs(self, args, kwargs):
        """Inside an autocast region of a device type with a rule (register_autocast): the
        floating tensors cast to its dtype, the op run with autocast off there, as PyTorch's."""
        from . import amp, _tensor
        for device_type, dtype in self._autocast.items():
            if amp.is_autocast_available(device_type) and \
                    _is_autocast_enabled(device_type):
                def cast(v):
                    if isinstance(v, _tensor.Tensor) and v.is_floating_point() and \
                            v.device.type == device_type:
                        return v.to(dtype)
                    if isinstance(v, (list, tuple)):
                        return type(v)(cast(x) for x in v)
                    return v
                return (tuple(cast(a) for a in args), {k: cast(v) for k, v in kwargs.items()},
                        amp.autocast(device_type, enabled=False))
        return args, kwargs, None

    def _autograd(self):
        if self._autograd_fn is None:
            from .autograd import Function
            op = self

            class _CustomOp(Function):
                @staticmethod
                def forward(ctx, *args):
                    out = op._impl()(*args)
                    if op._setup_context_fn is not None:
                        op._setup_context_fn(ctx, args, out)
                    return out

                @staticmethod
                def backward(ctx, *grads):
                    return op._backward_fn(ctx, *grads)
            _CustomOp.__name__ = _CustomOp.__qualname__ = f"{self._name}"
            self._autograd_fn = _CustomOp
        return self._autograd_fn

    def register_kernel(self, device_types, fn=None):
        def register(fn):
            types = [device_types] if device_types is None or isinstance(device_types, str) \
                else list(device_types)
            for t in types:
                self._kernels[t] = fn
            return fn
        return register(fn) if fn is not None else register

    def register_fake(self, fn):
        self._abstract_fn = fn
        return fn

    def register_autograd(self, backward, *, setup_context=None):
        self._backward_fn = backward
        self._setup_context_fn = setup_context
        self._autograd_fn = None

    def register_torch_dispatch(self, torch_dispatch_class, fn=None):
        return fn if fn is not None else (lambda f: f)

    def register_vmap(self, func=None):
        return func if func is not None else (lambda f: f)

    def set_kernel_enabled(self, device_type, enabled=True):
        import contextlib
        return contextlib.nullcontext()


def _lookup(op, create=False):
    if isinstance(op, CustomOpDef):
        return op
    if hasattr(op, "_ndgrad_custom_op"):
        return op._ndgrad_custom_op
    ns, name = _split(op)
    table = _OPS.setdefault(ns, {})
    if name not in table:
        if not create:
            raise ValueError(f"register_fake(...): the operator {op} does not exist yet. "
                             "Please define it first (torch.library.custom_op or define).")
        table[name] = CustomOpDef(ns, name, None, None)
    return table[name]


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Register fn as the operator `ns::name` (returns the callable operator)."""
    def inner(fn):
        ns, opname = _split(name)
        op = CustomOpDef(ns, opname, schema, fn, mutates_args)
        if device_types is not None:
            op.register_kernel(device_types, fn)
        _OPS.setdefault(ns, {})[opname] = op
        return op
    return inner(fn) if fn is not None else inner


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=False):
    """Register the fake (shape-only) kernel of an operator; kept, never needed here."""
    def register(func):
        _lookup(op, create=True).register_fake(func)
        return func
    return register(func) if func is not None else register


impl_abstract = register_fake


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """backward(ctx, *grads) -> gradients of the inputs; setup_context(ctx, inputs, output)."""
    _lookup(op, create=True).register_autograd(backward, setup_context=setup_context)


def register_kernel(op, device_types, func=None, /, *, lib=None):
    def register(func):
        _lookup(op, create=True).register_kernel(device_types, func)
        return func
    return register(func) if func is not None else register


def register_torch_dispatch(op, torch_dispatch_class, func=None, /, *, lib=None):
    return func if func is not None else (lambda f: f)


def register_vmap(op, func=None, /, *, lib=None):
    return func if func is not None else (lambda f: f)


def define(qualname, schema, *, lib=None, tags=()):
    """Declare the operator `ns::name` with its schema (an implementation comes with impl)."""
    ns, name = _split(qualname)
    op = _OPS.setdefault(ns, {}).get(name)
    if op is None:
        _OPS[ns][name] = CustomOpDef(ns, name, schema, None)
    return qualname


def impl(qualname, types, func=None, *, lib=None):
    """Register func as the operator's kernel for the device types."""
    def register(func):
        _lookup(qualname, create=True).register_kernel(
            None if types in ("default", "CompositeImplicitAutograd",
                              "CompositeExplicitAutograd") else types, func)
        return func
    return register(func) if func is not None else register


def fallthrough_kernel():
    raise NotImplementedError("fallthrough_kernel() should never be called.")


class Library:
    """A namespace's operators: `lib.define("foo(Tensor x) -> Tensor")`, `lib.impl("foo", fn,
    "CPU")`."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError("Unsupported kind: ", kind)
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
        self._op_defs = set()

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema, alias_analysis="", *, tags=()):
        name = schema.split("(", 1)[0].strip().split(".")[0]
        define(f"{self.ns}::{name}", schema)
        self._op_defs.add(name)
        return name

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False, allow_override=False):
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type "
                            f"{type(fn)}")
        name = getattr(op_name, "_name", op_name)
        name = name.split("::")[-1].split(".")[0]
        key = (dispatch_key or self.dispatch_key or "").lower() or None
        _lookup(f"{self.ns}::{name}", create=True).register_kernel(
            None if key in (None, "compositeimplicitautograd", "compositeexplicitautograd",
                            "autograd") else key, fn)

    def fallback(self, fn, dispatch_key="", *, with_keyset=False):
        pass

    def _destroy(self):
        for name in self._op_defs:
            _OPS.get(self.ns, {}).pop(name, None)
        self._op_defs.clear()


def get_ctx():
    raise RuntimeError("torch.library.get_ctx() is only meaningful inside a fake kernel, which "
                       "ndgrad never runs")


def opcheck(op, args, kwargs=None, *, test_utils=None, raise_exception=True, atol=None,
            rtol=None):
    """Run the operator on the arguments (PyTorch's checks need its dispatcher)."""
    op(*args, **(kwargs or {}))
    return {"test_schema": "SUCCESS", "test_autograd_registration": "SUCCESS",
            "test_faketensor": "SUCCESS", "test_aot_dispatch_dynamic": "SUCCESS"}


def infer_schema(prototype_function, /, *, mutates_args, op_name=None):
    sig = inspect.signature(prototype_function)
    params = ", ".join(f"Tensor {n}" for n in sig.parameters)
    return f"({params}) -> Tensor"


def _is_autocast_enabled(device_type):
    from . import is_autocast_enabled
    return is_autocast_enabled(device_type)


def register_autocast(op, device_type, cast_inputs, /, *, lib=None):
    """Under autocast on `device_type`, the custom op's floating tensors are cast to
    `cast_inputs` and it runs with autocast off."""
    if not isinstance(op, (str, CustomOpDef)) and not hasattr(op, "_ndgrad_custom_op"):
        raise ValueError(f"register_autocast({op}): got unexpected type for op: {type(op)}")
    if device_type not in ("cpu", "cuda", "xpu", "mps", "hpu", "xla", "mtia", "maia"):
        raise ValueError(f"Unknown device type: {device_type}")
    _lookup(op, create=True)._autocast[device_type] = cast_inputs


def triton_op(name, fn=None, /, *, mutates_args, schema=None):
    """A custom operator whose body launches triton kernels (`wrap_triton`): registered as
    custom_op registers it; it runs its Python body, on a machine with triton and a GPU."""
    return custom_op(name, fn, mutates_args=mutates_args, schema=schema)


class _TritonLauncher:
    def __init__(self, kernel):
        self.kernel = kernel

    def __getitem__(self, grid):
        return self.kernel[grid]

    def run(self, *args, grid, warmup=False, **kwargs):
        return self.kernel.run(*args, grid=grid, warmup=warmup, **kwargs)


def wrap_triton(triton_kernel, /):
    """`wrap_triton(kernel)[grid](*args)`: a triton.jit or triton.autotune kernel, launched as
    is (ndgrad traces nothing into it)."""
    try:
        from triton.runtime.autotuner import Autotuner
        from triton.runtime.jit import JITFunction
    except ImportError:
        raise ModuleNotFoundError("No module named 'triton'", name="triton") from None
    if not isinstance(triton_kernel, (JITFunction, Autotuner)):
        raise RuntimeError("wrap_triton only works on functions annotated with triton.jit or "
                           "triton.autotune")
    return _TritonLauncher(triton_kernel)


class _SafeKernelFunction:
    """get_kernel's result: `call_boxed(keyset, *args, **kwargs)` runs the kernel."""

    def __init__(self, fn, name):
        self._fn, self._name = fn, name

    def call_boxed(self, keyset, *args, **kwargs):
        return self._fn(*args, **kwargs)

    @property
    def op_handle(self):
        return self._name

    def __repr__(self):
        return f"SafeKernelFunction({self._name})"


def get_kernel(op, dispatch_key):
    """The kernel an operator runs for a dispatch key ("CPU", "CUDA", ... or a DispatchKey):
    a custom op's registered kernel, an ATen operator's function."""
    key = getattr(dispatch_key, "name", dispatch_key)
    if isinstance(op, str):
        qualname = op
        ns, name = _split(op)
        overload = op.split("::", 1)[1].partition(".")[2] or "default"
        if ns == "aten":
            packet = getattr(ATEN, name, None)
            if packet is None:
                raise RuntimeError(f"operator {op} does not exist")
            return _SafeKernelFunction(getattr(packet, overload), qualname)
        if name not in _OPS.get(ns, {}):
            raise RuntimeError(f"operator {op} does not exist")
        op = _OPS[ns][name]
    if isinstance(op, OpOverload):
        return _SafeKernelFunction(op, op.name())
    op = _lookup(op)
    k = op._kernels.get(str(key).lower(), op._kernels.get(key))
    return _SafeKernelFunction(k if k is not None else op._impl(),
                               f"{op._namespace}::{op._name}")


# ---------------------------------------------------------------- torch.ops.aten
class OpOverload:
    """torch.ops.aten.<name>.<overload>: callable; `name()` is "aten::<name>.<overload>"."""

    def __init__(self, packet, overload):
        self.overloadpacket, self._overloadname = packet, overload
        self._op = packet._op
        self.__name__ = f"{packet.__name__}.{overload}"
        self.__qualname__ = self._opname = packet.__name__
        self.namespace = "aten"

    def name(self):
        return f"aten::{self.overloadpacket.__name__}" + \
            ("" if self._overloadname == "default" else f".{self._overloadname}")

    def __call__(self, *args, **kwargs):
        return self._op(*args, **kwargs)

    def __repr__(self):
        return f"<OpOverload(op='aten.{self.overloadpacket.__name__}', " \
            f"overload='{self._overloadname}')>"

    def __str__(self):
        return f"aten.{self.__name__}"


class OpOverloadPacket:
    """torch.ops.aten.<name>: callable, with its overloads as attributes (`.default`,
    `.Tensor`, `.Scalar`, `.out`, ...: every overload runs ndgrad's function of that name)."""

    def __init__(self, name, op):
        self.__name__ = self._qualified_op_name = name
        self._qualified_op_name = f"aten::{name}"
        self._op = op
        self._overloads = {}

    def __getattr__(self, overload):
        if overload.startswith("__"):
            raise AttributeError(overload)
        o = self._overloads.get(overload)
        if o is None:
            o = self._overloads[overload] = OpOverload(self, overload)
        return o

    def overloads(self):
        return list(self._overloads) or ["default"]

    def __call__(self, *args, **kwargs):
        return self._op(*args, **kwargs)

    def __repr__(self):
        return f"<OpOverloadPacket(op='aten.{self.__name__}')>"

    def __str__(self):
        return f"aten.{self.__name__}"


class _AtenNamespace:
    """torch.ops.aten: ATen's operators by name, each running ndgrad's function of that name (the
    ATen forms of nn ops in nn/_aten.py first, then torch.<name>, Tensor.<name>,
    torch.nn.functional.<name>, and linalg_/special_/fft_ names in their namespaces). ndgrad has
    no dispatcher below them: this is for programs that call an ATen op or compare with one."""

    def __init__(self):
        self._packets = {}

    def __getattr__(self, name):
        p = self._packets.get(name)
        if p is None:
            fn = _aten_function(name)
            if fn is None:
                raise AttributeError(f"'_OpNamespace' 'aten' object has no attribute '{name}'")
            p = self._packets[name] = OpOverloadPacket(name, fn)
        return p


def _aten_function(name):
    import importlib
    import ndgrad
    from .nn import _aten, functional as F
    if name.startswith("sym_") and name[4:] in ("size", "stride", "numel", "storage_offset"):
        name = name[4:]              # (symbolic sizes are plain ints here)
    places = [(_aten, name), (ndgrad, name), (F, name)]
    for prefix in ("linalg_", "special_", "fft_"):
        if name.startswith(prefix):
            places.append((importlib.import_module(f"ndgrad.{prefix[:-1]}"), name[len(prefix):]))
    for mod, attr in places:
        f = getattr(mod, attr, None)
        if callable(f) and not isinstance(f, type):
            return f
    method = getattr(ndgrad.Tensor, name, None)
    if callable(method) and not isinstance(method, (type, property)):
        return lambda self, *args, **kwargs: getattr(self, name)(*args, **kwargs)
    return None


ATEN = _AtenNamespace()


class _Namespace:
    """torch.ops.<namespace>: its registered operators by name."""

    def __init__(self, ns):
        self._ns = ns

    def __getattr__(self, name):
        ops = _OPS.get(self._ns, {})
        if name in ops:
            return ops[name]
        raise AttributeError(f"'_OpNamespace' '{self._ns}' object has no attribute '{name}'")


def _namespace(ns):
    if ns == "aten":
        return ATEN
    return _Namespace(ns) if ns in _OPS else None
