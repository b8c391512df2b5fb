"""`torch.export`: capture a module's forward on example inputs as an fx graph.

`export(mod, args)` runs `mod.forward` once on the example inputs wrapped in tracing values that
carry the real tensors (Python control flow on shapes, dtypes and other metadata follows the
example, as PyTorch's non-strict export does) and records every torch function, Tensor method
and operator applied to them, through submodules down to ndgrad's functional calls
(`torch.nn.functional.linear`, `torch.Tensor.view`, `operator.add`, ...). Unlike PyTorch's,
the graph's targets are ndgrad's torch-level functions, not ATen operators, and
`run_decompositions()` returns an equivalent program (there is no lower op set to decompose
to). Branching on tensor values (`if x.sum() > 0`, `.item()`) raises, as in PyTorch.

What differs from PyTorch, besides the targets: values computed in Python from shapes are
constants of the capture, so the exported module checks every input dim at its example size
unless `dynamic_shapes` declares it dynamic and the forward never read a traced tensor's shape;
tensors made inside forward from no traced value (`torch.randn(3)`) are frozen as lifted
constants; buffers updated in place (BatchNorm's running statistics in training mode) are
updated by the graph's in-place calls, not returned as BUFFER_MUTATION outputs, and
BatchNorm's `num_batches_tracked` counter is not advanced by the exported module.

`save(ep, f)`/`load(f)` use ndgrad's own zip format (the graph as JSON, targets resolved by
name inside ndgrad, weights in ndgrad's checkpoint format loaded with weights_only): it is not
PyTorch's .pt2 format, and loading runs no pickled code.
"""
import inspect
import io
import json
import operator
import builtins
import zipfile

from ..fx.graph import Graph, CodeGen
from ..fx.graph_module import GraphModule
from ..fx.node import Node, map_arg, map_aggregate, _qualified_name, _public_is
from ..fx.proxy import Proxy
from ..fx._symbolic_trace import Tracer
from . import graph_signature, dynamic_shapes  # noqa: F401
from .graph_signature import (ExportGraphSignature, InputKind, InputSpec, OutputKind,
                              OutputSpec, TensorArgument, ConstantArgument)
from .dynamic_shapes import (Dim, dims, DimHint, ShapesCollection,  # noqa: F401
                             _check_dynamic_shapes)

__all__ = ["export", "ExportedProgram", "ExportGraphSignature", "Dim", "dims",
           "ShapesCollection", "save", "load", "export_for_training", "ModuleCallSignature",
           "ModuleCallEntry"]


class ModuleCallSignature:
    def __init__(self, inputs=(), outputs=(), in_spec=None, out_spec=None):
        self.inputs, self.outputs, self.in_spec, self.out_spec = inputs, outputs, in_spec, \
            out_spec


class ModuleCallEntry:
    def __init__(self, fqn, signature=None):
        self.fqn, self.signature = fqn, signature


class _DataDependentError(RuntimeError):
    pass


def _data_dependent(what):
    return _DataDependentError(
        f"Could not guard on data-dependent expression ({what} of a tensor computed from the "
        "exported inputs): torch.export captures one program for all inputs, so Python "
        "control flow cannot depend on tensor values. Compute the branch with tensor ops "
        "(torch.where) or pass the value as a non-tensor input.")


# methods and functions whose non-tensor result is metadata (the same for every input of the
# example's shapes), not data
_METADATA = frozenset(("size", "dim", "ndimension", "numel", "nelement", "stride",
                       "is_contiguous", "element_size", "get_device", "is_floating_point",
                       "is_complex", "is_signed", "storage_offset", "__len__", "type",
                       "is_nonzero_shape", "data_ptr", "is_set_to", "has_names",
                       "is_inference", "is_sparse", "is_pinned", "is_shared", "getattr",
                       "broadcast_shapes", "result_type", "can_cast", "promote_types",
                       "is_tensor", "is_storage", "numel", "_has_compatible_shallow_copy_type"))
_SHAPE_READS = frozenset(("size", "numel", "nelement", "stride", "__len__", "shape"))
_INPLACE_DUNDER = frozenset(("__setitem__", "__iadd__", "__isub__", "__imul__",
                             "__itruediv__", "__ifloordiv__", "__imod__", "__ipow__",
                             "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__",
                             "__imatmul__"))


def _has_tensor(v):
    from .._tensor import Tensor
    found = []

    def f(x):
        if isinstance(x, Tensor):
            found.append(x)
        return x
    map_aggregate(v, f)
    return bool(found)


def _unwrap(a):
    return map_aggregate(a, lambda x: x._value if isinstance(x, _ExportProxy) else x)


class _ExportProxy(Proxy):
    """A tracing value that carries the real result computed on the example inputs."""

    def __init__(self, node, tracer, value):
        self.node = node
        self.tracer = tracer
        self._value = value

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, k):
        if k in ("tracer", "node", "_value"):
            raise AttributeError(k)
        if k.startswith("_") and not k.startswith("__"):
            if self.node.op == "get_attr":
                # ndgrad's BatchNorm counts batches on its buffer's array: done during the
                # capture only (num_batches_tracked is not advanced by the exported module)
                return getattr(self._value, k)
            raise AttributeError(f"'Proxy' object has no attribute '{k}'")
        val = getattr(self._value, k)
        if k in _SHAPE_READS:
            self.tracer._shape_read = True
        if callable(val) and getattr(val, "__self__", None) is self._value:
            return _BoundMethod(self, k)
        if _has_tensor(val):
            return self.tracer.create_proxy("call_function", builtins.getattr, (self, k), {})
        return val

    def __len__(self):
        self.tracer._shape_read = True
        return len(self._value)

    def __bool__(self):
        return self.tracer.to_bool(self)

    def __index__(self):
        raise _data_dependent("__index__")

    def __int__(self):
        raise _data_dependent("int()")

    def __float__(self):
        raise _data_dependent("float()")

    def __complex__(self):
        raise _data_dependent("complex()")

    def __array__(self, *args, **kwargs):
        raise _data_dependent("numpy()")


class _BoundMethod:
    def __init__(self, root, name):
        self.root, self.name = root, name

    def __call__(self, *args, **kwargs):
        return self.root.tracer.create_proxy("call_method", self.name, (self.root,) + args,
                                             kwargs)


class _ExportTracer(Tracer):
    def __init__(self, root):
        super().__init__(autowrap_modules=())
        self._state_names = {}
        self._persistent = {}
        self._tensor_by_name = {}
        for name, p in root.named_parameters(remove_duplicate=False):
            self._state_names.setdefault(id(p), ("p", name, p))
        for mod_name, mod in root.named_modules(remove_duplicate=False):
            for bname, b in mod._buffers.items():
                if b is None:
                    continue
                full = f"{mod_name}.{bname}" if mod_name else bname
                self._state_names.setdefault(id(b), ("b", full, b))
                self._tensor_by_name[full] = b
                self._persistent.setdefault(full, bname not in getattr(
                    mod, "_non_persistent_buffers_set", ()))
        self.constants = {}
        self._shape_read = False
        self._get_attr_cache = {}
        self._user_inputs = None
        self._in_fallback = False

    _patch_varargs = False      # the forward gets its *args/**kwargs spread, as called

    def is_leaf_module(self, m, module_qualified_name):
        return False

    def _call_root(self, fn, args, kwargs):
        root = args[0]
        return self.call_module(root, lambda *a, **k: fn(root, *a, **k), args[1:], kwargs)

    def call_module(self, m, forward, args, kwargs):
        if self._in_fallback or not (type(m).__module__ or "").startswith("ndgrad.nn."):
            return forward(*args, **kwargs)
        from ..nn.modules.rnn import RNNBase
        marker = self.graph._root._prev
        try:
            if isinstance(m, RNNBase):     # its forward works on arrays: straight to the call
                raise NotImplementedError
            return forward(*args, **kwargs)
        except _DataDependentError:
            raise
        except Exception:
            # one of ndgrad's own modules whose forward works on arrays (the RNNs): drop what
            # it recorded and record the module as one functional_call of its parameters
            state = {}
            for name, t in list(m.named_parameters()) + list(m.named_buffers()):
                state[name] = self._state_proxy(t)
            if any(v is None for v in state.values()):
                raise
            node = self.graph._root._prev
            while node is not marker:
                prev = node._prev
                self.graph.erase_node(node)
                node = prev
            self._get_attr_cache = {k: v for k, v in self._get_attr_cache.items()
                                    if not v.node._erased}
            state = {name: self._state_proxy(t) for name, t in
                     list(m.named_parameters()) + list(m.named_buffers())}
            from ..func import functional_call
            call_args = (m, state, tuple(args), dict(kwargs))
            self._in_fallback = True       # the real call runs unpatched
            try:
                val = functional_call(*_unwrap(call_args))
            finally:
                self._in_fallback = False
            node = self.create_node("call_function", functional_call,
                                    self.create_arg(call_args), {})
            return _ExportProxy(node, self, val)

    def _state_proxy(self, t):
        entry = self._state_names.get(id(t))
        if entry is None:
            return None
        name = entry[1]
        if name not in self._get_attr_cache:
            node = self.create_node("get_attr", name, (), {})
            _set_meta(node, t)
            self._get_attr_cache[name] = _ExportProxy(node, self, t)
        return self._get_attr_cache[name]

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        from .._tensor import Tensor
        if isinstance(attr_val, Tensor) and not self._in_fallback:
            p = self._state_proxy(attr_val)
            if p is not None:
                return p
        return attr_val

    def create_arg(self, a):
        from .._tensor import Tensor
        from ..nn.modules.module import Module
        if isinstance(a, _ExportProxy):
            return a.node
        if isinstance(a, Module):       # the module of a functional_call: held by reference
            return a
        if isinstance(a, Tensor):
            p = self._state_proxy(a)
            if p is not None:
                return p.node
            if a.requires_grad and a.grad_fn is not None:
                raise RuntimeError(
                    "torch.export: a tensor computed from the inputs reached an operation "
                    "outside the traced calls (its producer did not go through a torch "
                    "function, Tensor method or operator); ndgrad cannot capture it")
            qualname = self.tensor_attrs.get(id(a))
            if qualname is None or qualname in self.constants and \
                    self.constants[qualname] is not a:
                qualname = f"lifted_tensor_{len(self.constants)}"
                self.tensor_attrs[id(a)] = qualname
            self.constants[qualname] = a
            self._keep_alive.append(a)
            cached = self._get_attr_cache.get(qualname)
            if cached is None or cached.node._erased:
                node = self.create_node("get_attr", qualname, (), {})
                _set_meta(node, a)
                cached = self._get_attr_cache[qualname] = _ExportProxy(node, self, a)
            return cached.node
        return super().create_arg(a)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                     proxy_factory_fn=None):
        if kind not in ("call_function", "call_method"):
            return super().create_proxy(kind, target, args, kwargs, name, type_expr,
                                        proxy_factory_fn)
        rargs, rkwargs = _unwrap(args), _unwrap(kwargs)
        fname = target if isinstance(target, str) else getattr(target, "__name__", "")
        if fname in ("item", "tolist", "numpy", "__bool__", "__int__", "__float__",
                     "__index__", "__array__", "__complex__"):
            raise _data_dependent(f".{fname}()")
        if kind == "call_function":
            val = target(*rargs, **rkwargs)
        else:
            val = getattr(rargs[0], target)(*rargs[1:], **rkwargs)
        if not _has_tensor(val):
            if fname in _SHAPE_READS:
                self._shape_read = True
            if isinstance(val, (bool, int, float, complex)) and fname not in _METADATA \
                    and not (kind == "call_function" and target is builtins.getattr):
                raise _data_dependent(f"the value of {fname}()")
            return val
        if kind == "call_method":
            from .._tensor import Tensor
            fn = getattr(Tensor, target, None)
            if callable(fn):
                kind, target = "call_function", fn
        node = self.create_node(kind, target, self.create_arg(args), self.create_arg(kwargs),
                                name, type_expr)
        _set_meta(node, val)
        return _ExportProxy(node, self, val)

    def to_bool(self, obj):
        from .._tensor import Tensor
        if isinstance(obj._value, Tensor):
            raise _data_dependent("bool()")
        return bool(obj._value)

    def iter(self, obj):
        n = len(obj)
        return (obj[i] for i in range(n))

    def create_args_for_root(self, root_fn, is_module, concrete_args=None):
        return self._user_inputs


def _set_meta(node, val):
    """node.meta["tensor_meta"] (ShapeProp's TensorMetadata) for a tensor result, as
    PyTorch's export records its nodes' shapes."""
    from .._tensor import Tensor
    from ..fx.passes.shape_prop import _extract_tensor_metadata
    if isinstance(val, Tensor):
        node.meta["tensor_meta"] = _extract_tensor_metadata(val)


def _is_impure(node):
    if node.op in ("placeholder", "output"):
        return True
    if node.op in ("call_function", "call_method"):
        name = node.target if isinstance(node.target, str) else \
            getattr(node.target, "__name__", "")
        return (name.endswith("_") and not name.endswith("__")) or name in _INPLACE_DUNDER \
            or "out" in node.kwargs
    return False


class _ExportCodeGen(CodeGen):
    """forward(self, <the example call's argument names>) that flattens and checks the inputs
    (PyTorch's unlifted module does the same through its _in_spec and guards)."""

    def __init__(self, arg_names, has_kwargs, has_var=False):
        self.arg_names = arg_names
        self.has_kwargs = has_kwargs
        self.has_var = has_var

    def gen_fn_def(self, free_vars, maybe_return_annotation):
        names = [v for v in free_vars if v != "self"]
        if True:     # any call reaches the input check (PyTorch's errors for a wrong call)
            params, call = "self, *args, **kwargs", "self._flatten_inputs(args, kwargs)"
        else:
            params = ", ".join(["self"] + list(self.arg_names)
                               + (["**kwargs"] if self.has_kwargs else []))
            call = f"self._flatten_inputs(({''.join(a + ', ' for a in self.arg_names)}), " \
                f"{'kwargs' if self.has_kwargs else '{}'})"
        if names:
            lhs = ", ".join(names) + ("," if len(names) == 1 else "")
            return f"def forward({params}):\n    {lhs} = {call}"
        return f"def forward({params}):\n    {call}"


def _leaf_names(sig, bound):
    """A name for each leaf of the bound inputs, in their flat order (x, xs_0, d_key)."""
    from ..utils import _pytree as pytree
    names = []
    for name, value in bound.arguments.items():
        for path, leaf in pytree.tree_leaves_with_path(value):
            names.append(name + "".join(f"_{getattr(k, 'key', getattr(k, 'idx', k))}"
                                        for k in path))
    return names


class ExportedProgram:
    """A captured forward: `.module()` (a callable GraphModule), `.graph_module`/`.graph`
    (parameters, buffers and constants lifted as inputs), `.graph_signature`, `.state_dict`,
    `.constants`, `.example_inputs`."""

    def __init__(self, captured, state_dict, constants, persistent, sig_info, example_inputs,
                 dynamic_dims, guard_shapes, verifiers=None):
        self._captured = captured            # graph with get_attr nodes (the module's form)
        self._state_dict = state_dict
        self._constants = constants
        self._persistent = persistent
        self._sig_info = sig_info            # arg names, kwarg flag, in_spec, input names
        self._example_inputs = example_inputs
        self._dynamic_dims = dynamic_dims
        self._guard_shapes = guard_shapes
        self._build_lifted()

    # --- the lifted graph ----------------------------------------------------------------------
    def _build_lifted(self):
        from ..nn.parameter import Parameter
        from ..utils import _pytree as pytree
        g = Graph()
        val_map, input_specs = {}, []
        gets = {n.target: n for n in self._captured.nodes if n.op == "get_attr"}
        # every parameter and buffer of the module, used or not, then the lifted constants
        # (PyTorch's order)
        params = [k for k, v in self._state_dict.items() if isinstance(v, Parameter)]
        buffers = list(self._persistent)
        consts = [k for k in gets if k not in self._state_dict and k not in self._persistent]
        for prefix, group, kind in (("p_", params, InputKind.PARAMETER),
                                    ("b_", buffers, InputKind.BUFFER),
                                    ("c_", consts, InputKind.CONSTANT_TENSOR)):
            for target in group:
                ph = g.placeholder(prefix + target.replace(".", "_"))
                if target in gets:
                    for n in self._captured.nodes:
                        if n.op == "get_attr" and n.target == target:
                            val_map[n] = ph
                    ph.meta = dict(gets[target].meta)
                else:
                    _set_meta(ph, self._state_dict.get(target, self._constants.get(target)))
                persistent = self._persistent.get(target) if kind == InputKind.BUFFER \
                    else None
                input_specs.append(InputSpec(kind, TensorArgument(ph.name), target,
                                             persistent))
        user = iter([n for n in self._captured.nodes if n.op == "placeholder"])
        info = self._sig_info
        constant_inputs = info.get("constant_inputs", {})
        for i in range(len(info.get("leaf_names", ())) or len(info["tensor_index"])):
            if i in constant_inputs:            # a non-tensor input: a placeholder, unused
                name = info["leaf_names"][i]
                ph = g.placeholder(name)
                ph.name = name
                input_specs.append(InputSpec(InputKind.USER_INPUT,
                                             ConstantArgument(name, constant_inputs[i]), None))
                continue
            n = next(user)
            ph = g.placeholder(n.target)
            ph.name = n.target          # PyTorch's export keeps the argument's name (`input`)
            ph.meta = dict(n.meta)
            val_map[n] = ph
            input_specs.append(InputSpec(InputKind.USER_INPUT, TensorArgument(ph.name), None))
        out = None
        for n in self._captured.nodes:
            if n.op in ("placeholder", "get_attr"):
                continue
            if n.op == "output":
                out = map_arg(n.args[0], lambda x: val_map[x])
                continue
            val_map[n] = g.node_copy(n, lambda x: val_map[x])
        flat, self._out_spec = pytree.tree_flatten(out)
        g.output(tuple(flat))
        output_specs = [OutputSpec(OutputKind.USER_OUTPUT,
                                   TensorArgument(v.name) if isinstance(v, Node)
                                   else ConstantArgument("", v), None) for v in flat]
        self._graph_module = GraphModule({}, g, "GraphModule")
        self._graph_signature = ExportGraphSignature(input_specs, output_specs)

    @property
    def graph_module(self):
        return self._graph_module

    @property
    def graph(self):
        return self._graph_module.graph

    @property
    def graph_signature(self):
        return self._graph_signature

    @property
    def state_dict(self):
        return self._state_dict

    @property
    def constants(self):
        return self._constants

    @property
    def tensor_constants(self):
        return self._constants

    @property
    def example_inputs(self):
        return self._example_inputs

    @property
    def range_constraints(self):
        return {}

    @property
    def module_call_graph(self):
        return [ModuleCallEntry("", ModuleCallSignature(in_spec=self._sig_info["in_spec"],
                                                        out_spec=self._out_spec))]

    @property
    def call_spec(self):
        return (self._sig_info["in_spec"], self._out_spec)

    @property
    def verifiers(self):
        return []

    @property
    def dialect(self):
        return "TRAINING"

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Unable to call ExportedProgram directly. You should use "
                           "`exported_program.module()` instead.")

    def __str__(self):
        graph_module = self.graph_module.print_readable(print_output=False).replace(
            "\n", "\n    ")
        sig = str(self.graph_signature).replace("\n", "\n    ")
        return (f"ExportedProgram:\n    {graph_module}\nGraph signature: {sig}\n"
                f"Range constraints: {self.range_constraints}\n")

    def run_decompositions(self, decomp_table=None, decompose_custom_triton_ops=False):
        """An equivalent ExportedProgram: ndgrad's graphs hold torch-level calls and there is
        no lower op set to decompose them into."""
        import copy
        return ExportedProgram(copy.deepcopy(self._captured), self._state_dict,
                               self._constants, self._persistent, self._sig_info,
                               self._example_inputs, self._dynamic_dims, self._guard_shapes)

    def validate(self):
        self._captured.lint()

    def buffers(self):
        for _, b in self.named_buffers():
            yield b

    def named_buffers(self):
        for k, v in self._state_dict.items():
            if k in self._persistent:
                yield k, v
        for k, v in self._constants.items():
            if k in self._persistent:
                yield k, v

    def parameters(self):
        for _, p in self.named_parameters():
            yield p

    def named_parameters(self):
        from ..nn.parameter import Parameter
        for k, v in self._state_dict.items():
            if isinstance(v, Parameter):
                yield k, v

    # --- the callable module -------------------------------------------------------------------
    def module(self, *, check_guards=True):
        """A GraphModule with the exported forward's signature; parameters and buffers are the
        program's own tensors (shared, as PyTorch's)."""
        import copy
        g = copy.deepcopy(self._captured)
        info = self._sig_info
        g.set_codegen(_ExportCodeGen(info["arg_names"], info["has_kwargs"],
                                     info.get("has_var", False)))
        root = {}
        for n in g.nodes:
            if n.op == "get_attr":
                root[n.target] = self._state_dict[n.target] if n.target in self._state_dict \
                    else self._constants[n.target]
        gm = GraphModule(root, g, "GraphModule")
        sig = info["signature"]
        in_spec, tensor_paths = info["in_spec"], info["tensor_index"]
        guard_shapes, dyn = self._guard_shapes, self._dynamic_dims
        input_names = info["input_names"]
        leaf_names = info.get("leaf_names", [])
        constant_inputs = info.get("constant_inputs", {})
        from ..utils import _pytree as pytree

        def _flatten_inputs(self_, args, kwargs):
            try:
                values = list(sig.bind(*args, **kwargs).arguments.values())
            except TypeError:
                values = list(args) + list(kwargs.values())
            flat, spec = pytree.tree_flatten(values)
            if spec != in_spec:
                raise ValueError("Trying to flatten user inputs with exported input tree spec: "
                                 f"\n{in_spec}\nbut actually got inputs with tree spec of: "
                                 f"\n{spec}.\nPlease check that the inputs have the same "
                                 "number and type of args and kwargs as the ones you used "
                                 "when tracing.")
            tensors = [flat[i] for i in tensor_paths]
            for i, v in constant_inputs.items():     # non-tensor inputs are specialized
                if not (type(flat[i]) is type(v) and flat[i] == v):
                    raise AssertionError(f"Guard failed: {leaf_names[i]} == {v}")
            if check_guards:
                for k, (t, shape) in enumerate(zip(tensors, guard_shapes)):
                    if t.dim() != len(shape):
                        raise AssertionError(f"Guard failed: {input_names[k]}.dim() == "
                                             f"{len(shape)}")
                    for d, size in enumerate(shape):
                        lim = dyn.get(k, {}).get(d)
                        if lim is None:
                            if t.shape[d] != size:
                                raise AssertionError(f"Guard failed: {input_names[k]}.size()"
                                                     f"[{d}] == {size}")
                        elif not lim[0] <= t.shape[d] <= lim[1]:
                            raise AssertionError(f"Guard failed: {lim[0]} <= "
                                                 f"{input_names[k]}.size()[{d}] <= {lim[1]}")
            return tensors
        type(gm)._flatten_inputs = _flatten_inputs
        return gm


def _capture(mod, sig, bound, kwargs, flat, in_spec, tensor_index, input_names):
    """Run mod.forward once on tracing values over the flat example inputs: (graph, tracer)."""
    import ndgrad
    from ..utils import _pytree as pytree
    tracer = _ExportTracer(mod)
    tracer.graph = Graph()

    def build_inputs():
        # placeholders in the flat order; the forward gets the example structure with proxies
        new_flat = list(flat)
        for k, i in enumerate(tensor_index):
            node = tracer.create_node("placeholder", input_names[k], (), {})
            _set_meta(node, flat[i])
            new_flat[i] = _ExportProxy(node, tracer, flat[i])
        values = pytree.tree_unflatten(new_flat, in_spec)
        call_args, call_kwargs = [mod], {}
        for (name, _), v in zip(bound.arguments.items(), values):
            kind = sig.parameters[name].kind
            if kind == inspect.Parameter.VAR_POSITIONAL:
                call_args.extend(v)
            elif kind == inspect.Parameter.VAR_KEYWORD:
                call_kwargs.update(v)
            elif kind == inspect.Parameter.KEYWORD_ONLY or name in kwargs:
                call_kwargs[name] = v
            else:
                call_args.append(v)
        return call_args[1:], call_kwargs

    tracer.create_args_for_root = lambda root_fn, is_module, concrete_args=None: \
        build_inputs()
    # the capture computes on the real tensors: leave the module's buffers (BatchNorm's running
    # statistics), the inputs and the random stream as they were, as PyTorch's export does
    import ndgrad
    saved = [(t, t.detach().clone()) for t in
              [b for _, b in mod.named_buffers()] + [flat[i] for i in tensor_index]]
    rng = ndgrad.get_rng_state()
    try:
        with ndgrad.no_grad():
            versions = [t._version for t, _ in saved]
        graph = tracer.trace(mod)
    finally:
        ndgrad.set_rng_state(rng)
        with ndgrad.no_grad():
            for (t, copy_), v in zip(saved, versions):
                if t._version != v:
                    t.copy_(copy_)
    graph.eliminate_dead_code(is_impure_node=_is_impure)
    graph.lint()

    return graph, tracer


def _graph_key(graph):
    def enc(a):
        return map_aggregate(a, lambda x: ("$node", x.name) if isinstance(x, Node) else
                             ("$t", id(x)) if isinstance(x, ndgrad_tensor()) else x)
    return [(n.op, n.name, n.target if isinstance(n.target, str) else id(n.target),
             repr(enc(n.args)), repr(enc(n.kwargs))) for n in graph.nodes]


def ndgrad_tensor():
    from .._tensor import Tensor
    return Tensor


def _generic_in_dynamic_dims(graph, tracer, mod, sig, bound, kwargs, flat, in_spec, tensor_index,
                             input_names, dyn):
    """Whether a second capture, with each dim declared dynamic one larger (or smaller, at its
    max), records the same program: then the graph holds no constant taken from those
    sizes."""
    import ndgrad
    flat2 = list(flat)
    for k, dims_ in dyn.items():
        i = tensor_index[k]
        t = flat2[i]
        for d, (lo, hi) in dims_.items():
            n = t.shape[d]
            new = n + 1 if n + 1 <= hi else n - 1
            if new < lo or new < 0:
                return False
            if new > n:
                extra = t.narrow(d, 0, 1) if n > 0 else ndgrad.zeros(
                    *[1 if j == d else s for j, s in enumerate(t.shape)], dtype=t.dtype)
                t = ndgrad.cat([t, extra], d)
            else:
                t = t.narrow(d, 0, new)
        flat2[i] = t.detach().clone().requires_grad_(flat[i].requires_grad)
    try:
        graph2, tracer2 = _capture(mod, sig, bound, kwargs, flat2, in_spec, tensor_index,
                                   input_names)
    except Exception:
        return False
    if _graph_key(graph) != _graph_key(graph2) or \
            list(tracer.constants) != list(tracer2.constants):
        return False
    return all(a.shape == b.shape and a.dtype == b.dtype and ndgrad.equal(a, b)
               for a, b in zip(tracer.constants.values(), tracer2.constants.values()))


def export(mod, args, kwargs=None, *, dynamic_shapes=None, strict=False,
           preserve_module_call_signature=(), prefer_deferred_runtime_asserts_over_guards=False):
    """Capture mod.forward(*args, **kwargs) as an ExportedProgram (see the module docstring for
    what is captured and how it differs from PyTorch's: torch-level targets, not ATen ops)."""
    from ..nn.modules.module import Module
    from .._tensor import Tensor
    from .._dynamo.exc import UserError
    from ..utils import _pytree as pytree
    if not isinstance(mod, Module):
        raise ValueError(f"Expected `mod` to be an instance of `torch.nn.Module`, got "
                         f"{type(mod)}.")
    if not isinstance(args, tuple):
        raise UserError(f"Expecting `args` to be a tuple of example positional inputs, got "
                        f"{type(args)}")
    if kwargs is not None and not isinstance(kwargs, dict):
        raise UserError(f"Expecting `kwargs` to be a dict of example keyword inputs, got "
                        f"{type(kwargs)}")
    kwargs = dict(kwargs or {})
    sig = inspect.signature(mod.forward)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise UserError(f"Exporting {type(mod).__name__}.forward with the example inputs: {e}") \
            from e
    dyn = _check_dynamic_shapes(sig, args, kwargs, dynamic_shapes)

    flat, in_spec = pytree.tree_flatten(list(bound.arguments.values()))
    tensor_index = [i for i, v in enumerate(flat) if isinstance(v, Tensor)]
    leaf_names = _leaf_names(sig, bound)
    input_names = [leaf_names[i] for i in tensor_index]
    graph, tracer = _capture(mod, sig, bound, kwargs, flat, in_spec, tensor_index, input_names)
    if dyn and not _generic_in_dynamic_dims(graph, tracer, mod, sig, bound, kwargs, flat, in_spec,
                                            tensor_index, input_names, dyn):
        import warnings
        warnings.warn("torch.export: the captured program depends on the sizes of the dims "
                      "declared dynamic (the forward computes with tensor shapes in Python, "
                      "which ndgrad's capture keeps as constants): those dims are checked at "
                      "their example sizes")
        dyn = {}

    # parameters, then persistent buffers (PyTorch's order)
    state_dict = dict(mod.named_parameters(remove_duplicate=False))
    state_dict.update((k, tracer._tensor_by_name[k]) for k, v in tracer._persistent.items()
                      if v)
    non_persistent = {k: v for k, v in tracer._persistent.items() if not v}
    used = {n.target for n in graph.nodes if n.op == "get_attr"}
    constants = {k: v for k, v in tracer.constants.items() if k in used}
    for name in non_persistent:    # non-persistent buffers live with the constants (PyTorch's)
        constants[name] = tracer._tensor_by_name[name]
    persistent = {k: v for k, v in tracer._persistent.items()}
    guard_shapes = [tuple(flat[i].shape) for i in tensor_index]
    positional = [n for n in bound.arguments if n not in kwargs and sig.parameters[n].kind in
                  (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    has_var = any(sig.parameters[n].kind == inspect.Parameter.VAR_POSITIONAL
                  for n in bound.arguments)
    sig_info = {"arg_names": positional, "has_kwargs": bool(kwargs), "has_var": has_var,
                "in_spec": in_spec, "tensor_index": tensor_index, "input_names": input_names,
                "signature": sig, "leaf_names": leaf_names,
                "constant_inputs": {i: v for i, v in enumerate(flat) if i not in tensor_index}}
    return ExportedProgram(graph, state_dict, constants, persistent, sig_info,
                           (tuple(args), kwargs), dyn, guard_shapes)


def export_for_training(mod, args, kwargs=None, *, dynamic_shapes=None, strict=False,
                        preserve_module_call_signature=()):
    """Deprecated in PyTorch in favour of export; the same capture here."""
    return export(mod, args, kwargs, dynamic_shapes=dynamic_shapes, strict=strict,
                  preserve_module_call_signature=preserve_module_call_signature)


# --- save / load ----------------------------------------------------------------------------
_FORMAT = "ndgrad-export"
_VERSION = 1
_TARGET_NAMESPACES = ("torch.nn.functional.", "torch.linalg.", "torch.special.", "torch.fft.",
                      "torch.Tensor.", "torch.")


def _target_name(fn):
    q = _qualified_name(fn)
    if not _public_is(_resolve_target(q), fn):
        raise RuntimeError(f"torch.export.save: cannot serialize the call target {fn!r}")
    return q


def _resolve_target(q):
    import ndgrad
    from ..nn import functional as F
    if q.startswith("operator."):
        f = getattr(operator, q[len("operator."):], None)
        return f if callable(f) else None
    if q in ("builtins.getattr",):
        return builtins.getattr
    if q.startswith("torch.ops.ndgrad."):
        from ..fx.node import _registry_op_function
        return _registry_op_function(q[len("torch.ops.ndgrad."):])
    for prefix in _TARGET_NAMESPACES:
        if q.startswith(prefix):
            rest = q[len(prefix):]
            if "." in rest or not rest:
                continue
            owner = {"torch.nn.functional.": F, "torch.linalg.": ndgrad.linalg,
                     "torch.special.": ndgrad.special, "torch.fft.": ndgrad.fft,
                     "torch.Tensor.": ndgrad.Tensor, "torch.": ndgrad}[prefix]
            f = getattr(owner, rest, None)
            import types
            if callable(f) and not isinstance(f, (type, types.ModuleType)):
                return f
            return None
    return None


def _enc(a):
    import ndgrad
    if isinstance(a, Node):
        return {"$node": a.name}
    if a is None or isinstance(a, (bool, str)):
        return a
    if isinstance(a, int):
        return a
    if isinstance(a, float):
        return {"$float": repr(a)}
    if isinstance(a, complex):
        return {"$complex": [repr(a.real), repr(a.imag)]}
    if a is Ellipsis:
        return {"$ellipsis": True}
    if isinstance(a, slice):
        return {"$slice": [_enc(a.start), _enc(a.stop), _enc(a.step)]}
    if isinstance(a, tuple) and not hasattr(a, "_fields"):
        return {"$tuple": [_enc(x) for x in a]}
    if isinstance(a, list):
        return [_enc(x) for x in a]
    if isinstance(a, dict) and all(isinstance(k, str) for k in a):
        return {"$dict": {k: _enc(v) for k, v in a.items()}}
    if isinstance(a, ndgrad.dtype):
        return {"$dtype": str(a).split(".")[-1]}
    if isinstance(a, ndgrad.device):
        return {"$device": str(a)}
    if isinstance(a, (ndgrad.memory_format, ndgrad.layout)):
        return {"$torch": str(a).split(".")[-1]}
    raise RuntimeError(f"torch.export.save: cannot serialize an argument of type "
                       f"{type(a).__name__}")


def _dec(a, nodes):
    import ndgrad
    if isinstance(a, list):
        return [_dec(x, nodes) for x in a]
    if not isinstance(a, dict):
        return a
    (k, v), = a.items()
    if k == "$node":
        return nodes[v]
    if k == "$float":
        return float(v)
    if k == "$complex":
        return complex(float(v[0]), float(v[1]))
    if k == "$ellipsis":
        return Ellipsis
    if k == "$slice":
        return slice(*(_dec(x, nodes) for x in v))
    if k == "$tuple":
        return tuple(_dec(x, nodes) for x in v)
    if k == "$dict":
        return {kk: _dec(vv, nodes) for kk, vv in v.items()}
    if k == "$dtype":
        d = getattr(ndgrad, v, None)
        if not isinstance(d, ndgrad.dtype):
            raise RuntimeError(f"torch.export.load: unknown dtype {v!r}")
        return d
    if k == "$device":
        return ndgrad.device(v)
    if k == "$torch":
        d = getattr(ndgrad, v, None)
        if not isinstance(d, (ndgrad.memory_format, ndgrad.layout)):
            raise RuntimeError(f"torch.export.load: unknown constant {v!r}")
        return d
    raise RuntimeError(f"torch.export.load: malformed argument {a!r}")


def save(ep, f, *, extra_files=None, opset_version=None, pickle_protocol=2):
    """Write ep to f (a path or a binary file) in ndgrad's own zip format: the graph as JSON
    and the weights in ndgrad's checkpoint format. Not PyTorch's .pt2 format."""
    import ndgrad
    from ..utils import _pytree as pytree
    if not isinstance(ep, ExportedProgram):
        raise TypeError(f"The 'ep' parameter must be an instance of 'ExportedProgram', got "
                        f"'{type(ep).__name__}' instead.")
    nodes = []
    for n in ep._captured.nodes:
        target = _target_name(n.target) if n.op == "call_function" else n.target
        nodes.append({"name": n.name, "op": n.op, "target": target,
                      "args": _enc(n.args), "kwargs": _enc(n.kwargs)})
    from ..nn.parameter import Parameter
    info = ep._sig_info
    sig = info["signature"]
    program = {
        "format": _FORMAT, "version": _VERSION, "nodes": nodes,
        "parameters": [k for k, v in ep._state_dict.items() if isinstance(v, Parameter)],
        "persistent": ep._persistent,
        "arg_names": info["arg_names"], "has_kwargs": info["has_kwargs"],
        "has_var": info.get("has_var", False),
        "in_spec": pytree.treespec_dumps(info["in_spec"]),
        "tensor_index": info["tensor_index"], "input_names": info["input_names"],
        "leaf_names": info.get("leaf_names", []),
        "constant_inputs": [[i, _enc(v)] for i, v in info.get("constant_inputs", {}).items()],
        "signature": [[p.name, int(p.kind), p.default is not inspect.Parameter.empty]
                      for p in sig.parameters.values()],
        "dynamic_dims": {str(k): {str(d): list(v) for d, v in dd.items()}
                         for k, dd in ep._dynamic_dims.items()},
        "guard_shapes": [list(s) for s in ep._guard_shapes],
    }
    weights = io.BytesIO()
    ndgrad.save({"state_dict": {k: v.detach() for k, v in ep._state_dict.items()},
                 "constants": dict(ep._constants),
                 "example_inputs": ep._example_inputs}, weights)
    own = isinstance(f, (str, bytes)) or hasattr(f, "__fspath__")
    fh = open(f, "wb") if own else f
    try:
        with zipfile.ZipFile(fh, "w") as z:
            z.writestr("ndgrad_export/program.json", json.dumps(program))
            z.writestr("ndgrad_export/weights.pt", weights.getvalue())
            for name, data in (extra_files or {}).items():
                z.writestr(f"ndgrad_export/extra/{name}", data)
    finally:
        if own:
            fh.close()


def load(f, *, extra_files=None, expected_opset_version=None):
    """Read an ExportedProgram that save wrote (no code is unpickled: call targets are
    resolved by name among ndgrad's functions, weights are loaded with weights_only)."""
    import ndgrad
    from ..nn.parameter import Parameter
    from ..utils import _pytree as pytree
    own = isinstance(f, (str, bytes)) or hasattr(f, "__fspath__")
    fh = open(f, "rb") if own else f
    try:
        try:
            z = zipfile.ZipFile(fh)
        except zipfile.BadZipFile as e:
            raise RuntimeError("torch.export.load: not an ndgrad exported program (expected "
                               "the zip file torch.export.save writes)") from e
        with z:
            try:
                program = json.loads(z.read("ndgrad_export/program.json"))
                weights = z.read("ndgrad_export/weights.pt")
            except ValueError as e:
                raise RuntimeError("torch.export.load: malformed program.json") from e
            except KeyError as e:
                raise RuntimeError("torch.export.load: not an ndgrad exported program (no "
                                   "ndgrad_export/program.json; PyTorch's .pt2 files cannot be "
                                   "loaded by ndgrad)") from e
            if extra_files is not None:
                for name in list(extra_files):
                    try:
                        extra_files[name] = z.read(f"ndgrad_export/extra/{name}").decode()
                    except KeyError:
                        pass
    finally:
        if own:
            fh.close()
    try:
        return _program_from_json(program, weights)
    except (KeyError, TypeError, ValueError, AssertionError, IndexError, AttributeError) as e:
        raise RuntimeError(f"torch.export.load: malformed program ({type(e).__name__}: {e})") \
            from e


def _program_from_json(program, weights):
    import ndgrad
    from ..nn.parameter import Parameter
    from ..utils import _pytree as pytree
    if program.get("format") != _FORMAT or program.get("version") != _VERSION:
        raise RuntimeError("torch.export.load: unsupported format or version "
                           f"{program.get('format')!r} {program.get('version')!r}")
    blob = ndgrad.load(io.BytesIO(weights), weights_only=True)
    params = set(program["parameters"])
    state_dict = {k: Parameter(v) if k in params else v for k, v in blob["state_dict"].items()}
    g = Graph()
    nodes = {}
    for nd in program["nodes"]:
        op = nd["op"]
        target = nd["target"]
        if op == "call_function":
            fn = _resolve_target(target)
            if fn is None:
                raise RuntimeError(f"torch.export.load: unknown call target {target!r}")
            target = fn
        elif not isinstance(target, str):
            raise RuntimeError("torch.export.load: malformed node")
        args = _dec(nd["args"], nodes)
        kwargs = _dec(nd["kwargs"], nodes)
        n = g.create_node(op, target, tuple(args), dict(kwargs), name=nd["name"])
        nodes[nd["name"]] = n
    params_list = [inspect.Parameter(name, inspect._ParameterKind(kind),
                                     default=None if has_default else inspect.Parameter.empty)
                   for name, kind, has_default in program["signature"]]
    sig = inspect.Signature(params_list)
    sig_info = {"arg_names": program["arg_names"], "has_kwargs": program["has_kwargs"],
                "has_var": program.get("has_var", False),
                "in_spec": pytree.treespec_loads(program["in_spec"]),
                "tensor_index": program["tensor_index"],
                "input_names": program["input_names"], "signature": sig,
                "leaf_names": program["leaf_names"],
                "constant_inputs": {i: _dec(v, {}) for i, v in program["constant_inputs"]}}
    dyn = {int(k): {int(d): tuple(v) for d, v in dd.items()}
           for k, dd in program["dynamic_dims"].items()}
    return ExportedProgram(g, state_dict, blob["constants"], program["persistent"], sig_info,
                           blob["example_inputs"], dyn,
                           [tuple(s) for s in program["guard_shapes"]])
