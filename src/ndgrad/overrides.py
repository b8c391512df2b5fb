"""`torch.overrides`: the `__torch_function__` protocol's Python side (PyTorch's semantics).

An argument whose type defines `__torch_function__` (a Tensor subclass, or any class such as
linear_operator's LinearOperator) takes over a torch function called with it:
`handle_torch_function(f, relevant_args, *args, **kwargs)` calls the argument types'
`__torch_function__(f, types, args, kwargs)` (subclasses before their bases, otherwise left to
right) until one does not return NotImplemented, after the innermost `TorchFunctionMode` if one
is active. Exact `Tensor`s and `Parameter`s, and types whose `__torch_function__` is
`torch._C._disabled_torch_function_impl`, never dispatch. `DisableTorchFunctionSubclass` turns
subclass dispatch off in its block (what Tensor's default `__torch_function__` uses);
`DisableTorchFunction` turns modes off too. The state is thread-local, as PyTorch's.
"""
import contextlib
import functools
import inspect
import threading
import types as _types
import warnings

__all__ = ["get_ignored_functions", "get_overridable_functions", "get_testing_overrides",
           "handle_torch_function", "has_torch_function", "resolve_name", "is_tensor_like",
           "is_tensor_method_or_property", "wrap_torch_function", "enable_reentrant_dispatch",
           "redispatch_function"]


class _State(threading.local):
    def __init__(self):
        self.subclass_enabled = True     # DisableTorchFunctionSubclass turns this off
        self.all_enabled = True          # DisableTorchFunction turns this (and modes) off
        self.modes = []


_state = _State()


def _is_torch_function_enabled():
    return _state.subclass_enabled and _state.all_enabled


def _is_torch_function_mode_enabled():
    return _state.all_enabled and bool(_state.modes)


def _is_torch_function_all_disabled():
    return not _state.all_enabled


def _exact_types():
    from ._tensor import Tensor
    from .nn.parameter import Parameter
    return (Tensor, Parameter)


_BASIC = frozenset((int, float, bool, complex, str, bytes, type(None), list, tuple, dict,
                    slice, type(Ellipsis)))


def _dispatches(arg_type):
    from ._tensor import Tensor, _dispatching
    if arg_type in _BASIC or arg_type is Tensor:
        return False
    if issubclass(arg_type, Tensor):
        return arg_type._tf
    return _dispatching(arg_type)


def has_torch_function(relevant_args):
    """Whether any of relevant_args overrides __torch_function__ (or a mode is active)."""
    if _is_torch_function_mode_enabled():
        return True
    if not _is_torch_function_enabled():
        return False
    return any(_dispatches(type(a)) for a in relevant_args)


def has_torch_function_unary(input):
    return has_torch_function((input,))


def has_torch_function_variadic(*args):
    return has_torch_function(args)


def _get_overloaded_args(relevant_args, get_type_fn=None):
    """The arguments whose __torch_function__ to call, in calling order (NEP-18's: one per
    type, a subclass before its base, otherwise left to right)."""
    if get_type_fn is None:
        get_type_fn = type
    if not _is_torch_function_enabled():
        return []
    overloaded_types, overloaded_args = set(), []
    for arg in relevant_args:
        arg_type = get_type_fn(arg)
        if arg_type not in overloaded_types and _dispatches(arg_type):
            if overloaded_types:
                overloaded_types.add(arg_type)
                index = len(overloaded_args)
                for i, old_arg in enumerate(overloaded_args):
                    if issubclass(arg_type, get_type_fn(old_arg)):
                        index = i
                        break
                overloaded_args.insert(index, arg)
            else:
                overloaded_types = {arg_type}
                overloaded_args = [arg]
    return overloaded_args


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call the overriding __torch_function__ (mode first, then argument types) for
    public_api(*args, **kwargs); TypeError when every one returns NotImplemented."""
    return _handle(public_api, relevant_args, args, kwargs, False)


def _dispatch_builtin(public_api, relevant_args, args, kwargs):
    """handle_torch_function for the functions PyTorch implements in C++ (its message when
    every override returns NotImplemented differs from the Python helper's)."""
    return _handle(public_api, relevant_args, args, kwargs, True)


def _handle(public_api, relevant_args, args, kwargs, builtin):
    overloaded_args = _get_overloaded_args(relevant_args)
    types = tuple(map(type, overloaded_args))
    if _is_torch_function_mode_enabled():
        with _pop_mode_temporarily() as mode:
            result = mode.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    for overloaded_arg in overloaded_args:
        method = overloaded_arg.__torch_function__
        if getattr(method, "__self__", None) is overloaded_arg:
            warnings.warn("Defining your `__torch_function__ as a plain method is deprecated "
                          "and will be an error in future, please define it as a classmethod.",
                          DeprecationWarning, stacklevel=2)
        result = method(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    if builtin:
        owner = "torch.Tensor" if getattr(public_api, "__qualname__", "").startswith(
            "Tensor.") else "torch"
        lines = "".join(f"\n  - tensor subclass {type(a)}" for a in overloaded_args)
        if _is_torch_function_mode_enabled():
            lines += f"\n  - mode object {_get_current_function_mode()}"
        raise TypeError(f"Multiple dispatch failed for '{owner}.{public_api.__name__}'; all "
                        f"__torch_function__ handlers returned NotImplemented:\n{lines}\n\n"
                        "For more information, try re-running with TORCH_LOGS=not_implemented")
    func_name = f"{public_api.__module__}.{public_api.__name__}"
    msg = (f"no implementation found for '{func_name}' on types that implement "
           f"__torch_function__: {[type(arg) for arg in overloaded_args]}")
    if _is_torch_function_mode_enabled():
        msg += f" nor in mode {_get_current_function_mode()}"
    raise TypeError(msg)


def _dispatch_args(public_api, args, kwargs):
    """The torch function entry's check: the relevant arguments are the tensors among the
    positional and keyword arguments (sequences of them included); None when nothing
    dispatches."""
    if not (_state.modes and _state.all_enabled) and not _is_torch_function_enabled():
        return None
    relevant = []
    for a in args:
        if isinstance(a, (list, tuple)):
            relevant.extend(a)
        else:
            relevant.append(a)
    for a in kwargs.values():
        if isinstance(a, (list, tuple)):
            relevant.extend(a)
        else:
            relevant.append(a)
    if has_torch_function(relevant):
        return relevant
    return None


def wrap_torch_function(dispatcher):
    """Decorator: make a Python function dispatch through __torch_function__ on the arguments
    `dispatcher(*args, **kwargs)` names."""
    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant_args = dispatcher(*args, **kwargs)
            if has_torch_function(relevant_args):
                return handle_torch_function(wrapped, relevant_args, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner


def is_tensor_like(inp):
    """True for a Tensor or anything whose type has __torch_function__."""
    from ._tensor import Tensor
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


# ---------------------------------------------------------------- context managers and modes
class DisableTorchFunctionSubclass:
    """Within the block, Tensor subclasses do not dispatch (modes still do)."""

    def __enter__(self):
        self._prev = _state.subclass_enabled
        _state.subclass_enabled = False
        return self

    def __exit__(self, *exc):
        _state.subclass_enabled = self._prev


class DisableTorchFunction:
    """Within the block, neither subclasses nor modes dispatch."""

    def __enter__(self):
        self._prev = (_state.subclass_enabled, _state.all_enabled)
        _state.subclass_enabled = False
        _state.all_enabled = False
        return self

    def __exit__(self, *exc):
        _state.subclass_enabled, _state.all_enabled = self._prev


class _EnableTorchFunction:
    def __enter__(self):
        self._prev = (_state.subclass_enabled, _state.all_enabled)
        _state.subclass_enabled = _state.all_enabled = True
        return self

    def __exit__(self, *exc):
        _state.subclass_enabled, _state.all_enabled = self._prev


def _len_torch_function_stack():
    return len(_state.modes)


def _get_function_stack_at(i):
    return _state.modes[i]


def _push_on_torch_function_stack(mode):
    from .ops import _registry
    _state.modes.append(mode)
    _registry._TF_MODES += 1          # ops leave their fast path while any mode is active


def _pop_torch_function_stack():
    from .ops import _registry
    if not _state.modes:
        raise RuntimeError("Trying to pop from an empty mode stack")
    _registry._TF_MODES -= 1
    return _state.modes.pop()


class TorchFunctionMode:
    """Override every torch function within a `with` block: `__torch_function__(func, types,
    args, kwargs)`. Inside it, torch calls go to the next mode down (the current one is popped
    while it runs)."""

    def __init__(self):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just "
                      "`with Mode()`", stacklevel=2)
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _get_current_function_mode():
    return _state.modes[-1] if _state.modes else None


def _get_current_function_mode_stack():
    return list(_state.modes)


def _push_mode(mode):
    _push_on_torch_function_stack(mode)


def _pop_mode():
    return _pop_torch_function_stack()


@contextlib.contextmanager
def _pop_mode_temporarily():
    old = _pop_mode()
    try:
        yield old
    finally:
        _push_mode(old)


@contextlib.contextmanager
def enable_reentrant_dispatch():
    yield


def redispatch_function(func, types, args, kwargs):
    """Call func skipping one level of __torch_function__ dispatch."""
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


# ---------------------------------------------------------------- the function tables
def get_ignored_functions():
    """The public torch functions that cannot be overridden (they take no tensor, or are
    about types and state)."""
    import sys
    torch = sys.modules[__name__.rpartition(".")[0]]
    names = ("typename is_tensor is_storage set_default_dtype get_default_dtype "
             "set_default_tensor_type set_default_device get_default_device manual_seed seed "
             "initial_seed get_rng_state set_rng_state set_printoptions set_grad_enabled "
             "is_grad_enabled no_grad enable_grad inference_mode is_inference_mode_enabled "
             "set_num_threads get_num_threads set_num_interop_threads get_num_interop_threads "
             "use_deterministic_algorithms are_deterministic_algorithms_enabled compile "
             "promote_types result_type can_cast zeros ones empty full eye arange range linspace "
             "logspace rand randn randint randperm tensor as_tensor asarray from_numpy "
             "frombuffer empty_strided sparse_coo_tensor sparse_csr_tensor hann_window "
             "hamming_window blackman_window bartlett_window kaiser_window tril_indices "
             "triu_indices finfo iinfo get_float32_matmul_precision "
             "set_float32_matmul_precision is_anomaly_enabled alias_torch").split()
    return {getattr(torch, n) for n in names if hasattr(torch, n)}


def get_default_nowrap_functions():
    """Tensor methods whose result Tensor's default __torch_function__ does not re-wrap."""
    from ._tensor import Tensor
    out = set()
    for name in ("_base", "grad", "_grad"):
        attr = inspect.getattr_static(Tensor, name, None)
        if hasattr(attr, "__get__"):
            out.add(attr.__get__)
    return out


@functools.lru_cache(maxsize=None)
def _get_overridable_functions():
    import sys
    torch = sys.modules[__name__.rpartition(".")[0]]
    from ._tensor import Tensor
    ignored = get_ignored_functions()
    overridable, index = {}, {}
    namespaces = [(torch, "torch")]
    for sub in ("functional", "nn.functional", "nn.init", "linalg", "fft", "special",
                "sparse"):
        mod = torch
        for part in sub.split("."):
            mod = getattr(mod, part, None)
        if isinstance(mod, _types.ModuleType):
            namespaces.append((mod, "torch." + sub))
    for ns, ns_name in namespaces:
        funcs = overridable.setdefault(ns, [])
        for name in dir(ns):
            if name.startswith("_"):
                continue
            func = getattr(ns, name)
            if isinstance(func, type) or isinstance(func, _types.ModuleType) or \
                    not callable(func) or func in ignored:
                continue
            if name[0].isupper():
                continue
            funcs.append(func)
            index.setdefault(func, f"{ns_name}.{name}")
    methods = overridable.setdefault(Tensor, [])
    for name, attr in vars(Tensor).items():
        if name in ("__init__", "__new__", "__torch_function__", "__class__", "__dict__",
                    "__slots__", "__module__", "__doc__", "__weakref__", "__init_subclass__",
                    "__subclasshook__", "__getattribute__", "__setattr__", "__delattr__"):
            continue
        if isinstance(attr, property):
            func = attr.__get__
        elif isinstance(attr, (staticmethod, classmethod)):
            continue
        elif callable(attr):
            func = attr
        else:
            continue
        methods.append(func)
        index.setdefault(func, f"torch.Tensor.{name}")
    return overridable, index


def get_overridable_functions():
    """{namespace: [functions that dispatch through __torch_function__]}."""
    return _get_overridable_functions()[0]


def resolve_name(f):
    """The torch name of an overridable function ("torch.add", "torch.Tensor.add"), or None."""
    if isinstance(f, (_types.MethodWrapperType, _types.WrapperDescriptorType)):
        return str(f)
    return _get_overridable_functions()[1].get(f)


def get_testing_overrides():
    """{overridable function: a dummy with its signature returning -1} (what PyTorch's tests
    use to check that every function dispatches)."""
    out = {}
    for funcs in get_overridable_functions().values():
        for f in funcs:
            try:
                sig = inspect.signature(f)
            except (TypeError, ValueError):
                sig = None

            def dummy(*args, **kwargs):
                return -1
            if sig is not None:
                dummy.__signature__ = sig
            out[f] = dummy
    return out


@functools.lru_cache(maxsize=None)
def _get_tensor_methods():
    from ._tensor import Tensor
    return frozenset(get_overridable_functions()[Tensor])


def is_tensor_method_or_property(func):
    """Whether func is a Tensor method or a property's __get__ (as __torch_function__ gets)."""
    return func in _get_tensor_methods() or getattr(func, "__name__", None) == "__get__"
