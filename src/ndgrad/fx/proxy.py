"""torch.fx.proxy: Proxy, the stand-in value symbolic tracing runs a program on.

Every operation on a Proxy records a Node instead of computing: operators become
call_function nodes on `operator.*`, attribute reads `getattr` nodes, method calls call_method
nodes, and torch functions reach `Proxy.__torch_function__` through ndgrad's
`__torch_function__` protocol (call_method for Tensor methods, call_function otherwise).
Using a Proxy's value (`bool`, iteration, `len`) raises PyTorch's TraceError/RuntimeError: the
value depends on the data, which tracing does not have.
"""
import dis
import inspect
import operator
import os
import sys

from .graph import Graph, _target_to_str
from .node import Node, map_aggregate

__all__ = ["TracerBase", "GraphAppendingTracer", "TraceError", "Proxy", "Attribute",
           "ParameterProxy"]


class TraceError(ValueError):
    pass


_base_types = (str, int, float, bool, complex, type(None), type(Ellipsis), bytes)


_FX_DIR = os.path.dirname(os.path.abspath(__file__))
_PKG_DIR = os.path.dirname(_FX_DIR)
_MODULES_DIR = os.path.join(_PKG_DIR, "nn", "modules")
_OVERRIDES = os.path.join(_PKG_DIR, "overrides.py")


def _called_inside_ndgrad():
    """Whether the operation being recorded was applied to a Proxy by ndgrad's own function
    code (a check it makes before dispatching through __torch_function__), not by the traced
    program, nn modules' forward or the dispatch itself. Such nodes are dropped when unused."""
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename.startswith(_FX_DIR):
        f = f.f_back
    if f is None:
        return False
    fn = f.f_code.co_filename
    return fn.startswith(_PKG_DIR) and not fn.startswith(_MODULES_DIR) and fn != _OVERRIDES \
        and not fn.startswith(os.path.join(_PKG_DIR, "export"))


class TracerBase:
    graph: Graph
    record_stack_traces = False
    trace_asserts = False
    proxy_buffer_attributes = False
    traced_func_name = "forward"
    scope = None
    module_stack = None
    node_name_to_scope = None

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node):
        return Proxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                     proxy_factory_fn=None):
        """Record a node for target(args, kwargs) and return its Proxy."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        assert isinstance(args_, tuple)
        assert isinstance(kwargs_, dict)
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        if kind != "placeholder" and _called_inside_ndgrad():
            node.meta["_ndgrad_probe"] = True
        if proxy_factory_fn is None:
            return self.proxy(node)
        return proxy_factory_fn(node)

    def create_arg(self, a):
        """Lower an argument into what a Node may hold (Proxies become their Nodes)."""
        if isinstance(a, Proxy):
            return a.node
        if hasattr(a, "__fx_create_arg__"):
            return a.__fx_create_arg__(self)
        if isinstance(a, tuple):
            if hasattr(a, "_fields"):
                return type(a)(*[self.create_arg(elem) for elem in a])
            return tuple(self.create_arg(elem) for elem in a)
        if isinstance(a, list):
            return [self.create_arg(elem) for elem in a]
        if isinstance(a, dict):
            r = {}
            for k, v in a.items():
                k = self.create_arg(k)
                if isinstance(k, Node):
                    raise RuntimeError("Keys for dictionaries used as an argument cannot "
                                       "contain a Node. Got key: {k}")
                r[k] = self.create_arg(v)
            return r
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, _base_types) or isinstance(a, Node):
            return a
        import enum
        import ndgrad
        if isinstance(a, (enum.Enum, ndgrad.dtype, ndgrad.device, ndgrad.layout,
                          ndgrad.memory_format)):
            return a
        if callable(a):
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj):
        raise TraceError("symbolically traced variables cannot be used as inputs to control "
                         "flow")

    def iter(self, obj):
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the "
                         "Proxy is used in a loop or as a *args or **kwargs function argument. "
                         "See the torch.fx docs on pytorch.org for a more detailed explanation "
                         "of what types of control flow can be traced, and check out the Proxy "
                         "docstring for help troubleshooting Proxy iteration errors")

    def keys(self, obj):
        return Attribute(obj, "keys")()


class GraphAppendingTracer(TracerBase):
    def __init__(self, graph):
        super().__init__()
        self.graph = graph
        self.scope = None
        self.module_stack = {}
        self.node_name_to_scope = {}


_private = []


def _tensor_private_names():
    if not _private:
        from .._tensor import Tensor
        names = set()
        for klass in Tensor.__mro__:
            names.update(n for n in vars(klass) if n.startswith("_"))
            names.update(getattr(klass, "__slots__", ()))
        _private.append(frozenset(names))
    return _private[0]


class Proxy:
    """A symbolic value: operations on it are recorded in its tracer's graph."""

    def __init__(self, node, tracer=None):
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, k):
        if k in ("tracer", "node"):        # not yet set (during unpickling): no recursion
            raise AttributeError(k)
        if k.startswith("_") and not k.startswith("__") and k in _tensor_private_names():
            # ndgrad's functions read their tensors' private fields (`_data`) before a
            # non-Tensor argument makes them dispatch through __torch_function__: failing
            # here sends them to that dispatch without recording dead nodes
            raise AttributeError(f"'Proxy' object has no attribute '{k}'")
        return Attribute(self, k)

    def __getstate__(self):
        return self.__dict__

    def __setstate__(self, d):
        self.__dict__ = d

    def __deepcopy__(self, memo):
        import copy
        new_dict = {}
        for k, v in self.__dict__.items():
            new_dict[k] = v if k in ("tracer", "node") else copy.deepcopy(v, memo)
        new_obj = object.__new__(type(self))
        new_obj.__dict__ = new_dict
        return new_obj

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        frame = inspect.currentframe()
        calling_frame = frame.f_back
        inst_list = list(dis.get_instructions(calling_frame.f_code))
        if sys.version_info >= (3, 11):
            from bisect import bisect_left
            inst_idx = bisect_left(inst_list, calling_frame.f_lasti, key=lambda x: x.offset)
        else:
            inst_idx = calling_frame.f_lasti // 2
        inst = inst_list[inst_idx] if inst_idx < len(inst_list) else None
        if inst is not None and inst.opname == "UNPACK_SEQUENCE":
            return (self[i] for i in range(inst.argval))
        return self.tracer.iter(self)

    def __abs__(self):
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    def __bool__(self):
        return self.tracer.to_bool(self)

    def keys(self):
        return self.tracer.keys(self)

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you "
                           "want this call to be recorded, please call torch.fx.wrap('len') at "
                           "module scope")

    @classmethod
    def __torch_function__(cls, orig_method, types, args=None, kwargs=None):
        args = args if args else ()
        kwargs = kwargs if kwargs else {}
        tracers = {}

        def find_tracer(a):
            if isinstance(a, cls):
                tracers[a.tracer] = None
            return a
        map_aggregate(args, find_tracer)
        map_aggregate(kwargs, find_tracer)
        if len(tracers) > 1:
            raise RuntimeError(f"Found multiple different tracers {list(tracers.keys())} while "
                               f"trying to trace operations {orig_method}")
        tracer = next(iter(tracers.keys()))
        from ..overrides import is_tensor_method_or_property
        if is_tensor_method_or_property(orig_method):
            return tracer.create_proxy("call_method", orig_method.__name__, args, kwargs)
        return tracer.create_proxy("call_function", orig_method, args, kwargs,
                                   name=_target_to_str(orig_method.__name__))


class Attribute(Proxy):
    """`proxy.attr`: a getattr node when used as a value, a call_method when called."""

    def __init__(self, root, attr):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr,
                                                  (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


class ParameterProxy(Proxy):
    """A Proxy for a parameter read as `self.weight`: shape, size(), dim() and ndim answer
    from the real parameter, since parameters' shapes do not change."""

    def __init__(self, tracer, node, name, param):
        super().__init__(node, tracer)
        self.param = param
        self.name = name

    def __repr__(self):
        return f"ParameterProxy({self.name})"

    @property
    def shape(self):
        return self.param.shape

    def size(self, dim=None):
        return self.param.size() if dim is None else self.param.size(dim)

    def dim(self):
        return self.param.dim()

    @property
    def ndim(self):
        return self.param.ndim

    def numel(self):
        return self.param.numel()

    def nelement(self):
        return self.param.nelement()


_reflectable = ["add", "sub", "mul", "floordiv", "truediv", "mod", "pow", "lshift",
                "rshift", "and_", "or_", "xor", "matmul"]
_magic = _reflectable + ["getitem", "eq", "ne", "lt", "gt", "le", "ge", "pos", "neg",
                         "invert"]


def _install_magic(method):
    def impl(*args, **kwargs):
        tracer = args[0].tracer
        target = getattr(operator, method)
        return tracer.create_proxy("call_function", target, args, kwargs)
    impl.__name__ = method
    as_magic = f'__{method.strip("_")}__'
    setattr(Proxy, as_magic, impl)


def _install_reflected(orig_method_name):
    method_name = f'__r{orig_method_name.strip("_")}__'

    def impl(self, rhs):
        target = getattr(operator, orig_method_name)
        return self.tracer.create_proxy("call_function", target, (rhs, self), {})
    impl.__name__ = method_name
    impl.__qualname__ = method_name
    setattr(Proxy, method_name, impl)


for _m in _magic:
    _install_magic(_m)
for _m in _reflectable:
    _install_reflected(_m)
Proxy.__hash__ = object.__hash__       # __eq__ above records a node; identity hashing stays
