"""torch.fx._symbolic_trace: Tracer and symbolic_trace (PyTorch's semantics).

`Tracer.trace(root)` runs `root.forward` (or a function) on Proxies: every torch function,
Tensor method and operator applied to them is recorded in a Graph. Calls of leaf modules
(`is_leaf_module`: ndgrad's own `nn` modules except Sequential) become call_module nodes, other
modules are traced through; parameters read as attributes become get_attr nodes, and tensors
that are neither inputs, parameters nor buffers are stored on the root as `_tensor_constant<N>`.
Functions registered with `wrap` (and `math`'s functions) are recorded as calls when a Proxy
reaches them. Python control flow on traced values raises TraceError.
"""
import builtins
import functools
import inspect
import math
import sys

from ..nn.modules.module import Module
from .graph import Graph
from .graph_module import GraphModule
from .node import map_aggregate
from .proxy import ParameterProxy, Proxy, TracerBase

__all__ = ["Tracer", "symbolic_trace", "wrap", "is_fx_tracing", "PH"]

_is_fx_tracing_flag = False


def is_fx_tracing():
    """True while symbolic tracing runs a program."""
    return _is_fx_tracing_flag


class _PH:
    """A placeholder marker for concrete_args: the value stays an input."""

    def __repr__(self):
        return "PH"


PH = _PH()

# (globals dict id, name) -> globals dict, for functions marked with wrap()
_wrapped_fns_to_patch = {}


def wrap(fn_or_name):
    """Record calls of this global function as call_function nodes while tracing (it must be
    called at a module's top level, as PyTorch requires); returns its argument."""
    if not (callable(fn_or_name) or isinstance(fn_or_name, str)):
        raise RuntimeError("Unsupported type for global function! Must be either a callable "
                           "or string name")
    if callable(fn_or_name):
        assert not isinstance(fn_or_name, str)
        fn_name = fn_or_name.__name__
    else:
        fn_name = fn_or_name
    currentframe = sys._getframe(1)
    if currentframe.f_code.co_name != "<module>":   # PyTorch's rule
        raise NotImplementedError("wrap must be called at the top level of a module")
    f_globals = currentframe.f_globals
    _wrapped_fns_to_patch[(id(f_globals), fn_name)] = f_globals
    return fn_or_name


def _find_proxy(*objects):
    found = []

    def f(x):
        if isinstance(x, Proxy) and not found:
            found.append(x)
        return x
    map_aggregate(objects, f)
    return found[0] if found else None


def _create_wrapped_func(orig_fn):
    @functools.wraps(orig_fn)
    def wrapped(*args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is not None:
            return proxy.tracer.create_proxy("call_function", orig_fn, args, kwargs)
        return orig_fn(*args, **kwargs)
    return wrapped


class _Patcher:
    def __init__(self):
        self.patches = []

    def patch(self, obj, name, new, dict_=False):
        if dict_:
            had, old = name in obj, obj.get(name)
            obj[name] = new
            self.patches.append(lambda: obj.__setitem__(name, old) if had else obj.pop(name))
        else:
            had = name in obj.__dict__
            old = obj.__dict__.get(name)
            setattr(obj, name, new)
            self.patches.append(lambda: setattr(obj, name, old) if had else delattr(obj, name))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        while self.patches:
            self.patches.pop()()


class Tracer(TracerBase):
    """Turns a Module's forward or a function into a Graph by running it on Proxies."""
    _patch_varargs = True

    def __init__(self, autowrap_modules=(math,), autowrap_functions=(),
                 param_shapes_constant=False):
        super().__init__()
        self._autowrap_function_ids = {id(value) for name, value in
                                       (m for mod in autowrap_modules
                                        for m in vars(mod).items())
                                       if not name.startswith("_") and callable(value)}
        self._autowrap_function_ids.update(id(f) for f in autowrap_functions)
        self._autowrap_search = list(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths = None
        self.root_module_name = ""
        self.scope = None
        self.module_stack = {}
        self.node_name_to_scope = {}
        self.tensor_attrs = {}
        self._keep_alive = []

    # --- hooks to override -----------------------------------------------------------------
    def is_leaf_module(self, m, module_qualified_name):
        """ndgrad's own nn modules are leaves (recorded as call_module), except Sequential;
        user modules are traced through."""
        from ..nn import Sequential
        mod = type(m).__module__ or ""
        return (mod.startswith(("ndgrad.nn", "torch.nn", "torch.ao.nn"))
                and not isinstance(m, Sequential))

    def path_of_module(self, mod):
        if self.submodule_paths:
            path = self.submodule_paths.get(mod)
            if path is None:
                raise NameError("module is not installed as a submodule")
            return path
        for n, p in self.root.named_modules():
            if mod is p:
                return n
        raise NameError("module is not installed as a submodule")

    def call_module(self, m, forward, args, kwargs):
        module_qualified_name = self.path_of_module(m)
        if not self.is_leaf_module(m, module_qualified_name):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", module_qualified_name, args, kwargs)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        """The value forward sees for `self.<attr>`: a get_attr Proxy for parameters."""
        from ..nn.parameter import Parameter
        if isinstance(attr_val, Parameter):
            for n, p in self.root.named_parameters():
                if attr_val is p:
                    if n not in parameter_proxy_cache:
                        if self.param_shapes_constant:
                            parameter_proxy_cache[n] = self.create_proxy(
                                "get_attr", n, (), {},
                                proxy_factory_fn=lambda node, n=n, p=p: ParameterProxy(
                                    self, node, n, p))
                        else:
                            parameter_proxy_cache[n] = self.create_proxy("get_attr", n, (), {})
                    return parameter_proxy_cache[n]
        return attr_val

    def create_arg(self, a):
        from .._tensor import Tensor
        from ..nn.parameter import Parameter
        if isinstance(a, Parameter):
            for n, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, Tensor):
            for n_, p_ in self.root.named_buffers():
                if a is p_:
                    return self.create_node("get_attr", n_, (), {})
            qualname = self.tensor_attrs.get(id(a))
            if not qualname:
                i = 0
                while True:
                    qualname = f"_tensor_constant{i}"
                    if not hasattr(self.root, qualname):
                        break
                    i += 1
                self.tensor_attrs[id(a)] = qualname
                self._keep_alive.append(a)
                setattr(self.root, qualname, a)
            return self.create_node("get_attr", qualname, (), {})
        if isinstance(a, Module):
            for n_, p_ in self.root.named_modules():
                if a is p_:
                    return self.create_node("get_attr", n_, (), {})
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            args = tuple(self.create_arg(elem) for elem in a)
            return self.create_node("call_function", a.__class__, args, {})
        return super().create_arg(a)

    # --- tracing -----------------------------------------------------------------------------
    def create_args_for_root(self, root_fn, is_module, concrete_args=None):
        fn_for_analysis = inspect.unwrap(root_fn)
        sig = inspect.signature(fn_for_analysis)
        params = list(sig.parameters.values())
        if is_module:
            params = params[1:]
        names = [p.name for p in params]
        if isinstance(concrete_args, tuple):
            if len(concrete_args) != len(names):
                raise RuntimeError(f"Tracing expected {len(names)} arguments but got "
                                   f"{len(concrete_args)} concrete arguments")
            concrete_args = dict(zip(names, concrete_args))
        concrete_args = concrete_args or {}
        args, kwargs = [], {}
        for p in params:
            if p.name in concrete_args and concrete_args[p.name] is not PH:
                value = concrete_args[p.name]
                self.create_node("placeholder", p.name, (value,), {})   # kept in the signature
                val = value
            elif p.kind == inspect.Parameter.VAR_POSITIONAL:
                # root_fn is patched to take the tuple as one argument (PyTorch's way)
                val = self.create_proxy("placeholder", "*" + p.name, (), {})
            elif p.kind == inspect.Parameter.VAR_KEYWORD:
                val = self.create_proxy("placeholder", "**" + p.name, (), {})
            else:
                default = () if p.default is inspect.Parameter.empty else (p.default,)
                val = self.create_proxy("placeholder", p.name, default, {})
            if p.kind == inspect.Parameter.KEYWORD_ONLY and not self._patched:
                kwargs[p.name] = val
            else:
                args.append(val)
        return args, kwargs

    def trace(self, root, concrete_args=None):
        """Record root (a Module or a function) as a Graph."""
        global _is_fx_tracing_flag
        old_is_fx_tracing_flag = _is_fx_tracing_flag
        _is_fx_tracing_flag = True
        try:
            if isinstance(root, Module):
                self.root = root
                fn = type(root).forward
                self.submodule_paths = {mod: name for name, mod in root.named_modules()}
                is_module = True
            else:
                self.root = Module()
                fn = root
                is_module = False
            tracer_cls = getattr(self, "__class__", None)
            self.graph = Graph(tracer_cls=tracer_cls)
            self.tensor_attrs = {}
            self._keep_alive = []
            from .._tensor import Tensor

            def collect_tensor_attrs(m, prefix_atoms):
                for k, v in m.__dict__.items():
                    if isinstance(v, Tensor):
                        self.tensor_attrs[id(v)] = ".".join(prefix_atoms + [k])
                        self._keep_alive.append(v)
                for k, v in m.named_children():
                    collect_tensor_attrs(v, prefix_atoms + [k])
            collect_tensor_attrs(self.root, [])

            fn_globals = getattr(inspect.unwrap(fn), "__globals__", {})
            orig_fn = fn
            fn, self._patched = _patch_varargs(fn) if self._patch_varargs else (fn, False)
            args, kwargs = self.create_args_for_root(orig_fn, is_module, concrete_args)
            if is_module:
                args = [root] + args
            parameter_proxy_cache = {}
            tracer = self
            orig_getattr = Module.__getattr__
            orig_call = Module.__call__

            @functools.wraps(orig_getattr)
            def module_getattr_wrapper(mod, attr):
                attr_val = orig_getattr(mod, attr)
                return tracer.getattr(attr, attr_val, parameter_proxy_cache)

            @functools.wraps(orig_call)
            def module_call_wrapper(mod, *args, **kwargs):
                def forward(*args, **kwargs):
                    return orig_call(mod, *args, **kwargs)
                return tracer.call_module(mod, forward, args, kwargs)

            with _Patcher() as patcher:
                patcher.patch(Module, "__getattr__", module_getattr_wrapper)
                patcher.patch(Module, "__call__", module_call_wrapper)
                self._patch_wrapped_functions(patcher, fn_globals)
                result = self._call_root(fn, args, kwargs)
                self.create_node("output", "output", (self.create_arg(result),), {},
                                 type_expr=getattr(orig_fn, "__annotations__", {}).get("return"))
            self.submodule_paths = None
            # values ndgrad's functions computed from a Proxy while checking their arguments,
            # before they dispatched: unused, and not part of the program
            for node in reversed(self.graph.nodes):
                if node.meta.pop("_ndgrad_probe", False) and not node.users:
                    self.graph.erase_node(node)
            return self.graph
        finally:
            _is_fx_tracing_flag = old_is_fx_tracing_flag

    def _call_root(self, fn, args, kwargs):
        return fn(*args, **kwargs)

    def _patch_wrapped_functions(self, patcher, fn_globals):
        for (_, name), frame_dict in list(_wrapped_fns_to_patch.items()):
            if name not in frame_dict and hasattr(builtins, name):
                orig_fn = getattr(builtins, name)
            else:
                orig_fn = frame_dict[name]
            patcher.patch(frame_dict, name, _create_wrapped_func(orig_fn), dict_=True)
        if self._autowrap_function_ids:
            for mod in self._autowrap_search:       # math.sqrt(...) as well as sqrt(...)
                for name, value in list(vars(mod).items()):
                    if not name.startswith("_") and callable(value) \
                            and id(value) in self._autowrap_function_ids:
                        patcher.patch(vars(mod), name, _create_wrapped_func(value), dict_=True)
            for name, value in list(fn_globals.items()):
                if not name.startswith("_") and callable(value) \
                        and id(value) in self._autowrap_function_ids:
                    patcher.patch(fn_globals, name, _create_wrapped_func(value), dict_=True)

    def __getstate__(self):
        return dict(self.__dict__)


def _patch_varargs(fn):
    """fn with its *args/**kwargs (and keyword-only) parameters made ordinary positional
    ones, so that tracing passes each as one Proxy (PyTorch's _patch_function)."""
    import types
    co = getattr(fn, "__code__", None)
    if co is None or not co.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        return fn, False
    nargs = (co.co_argcount + co.co_kwonlyargcount + bool(co.co_flags & inspect.CO_VARARGS)
             + bool(co.co_flags & inspect.CO_VARKEYWORDS))
    # the parameter names are laid out positional, keyword-only, *args, **kwargs in co_varnames
    # while a call's positional order is the signature's: reorder via a wrapper
    new_co = co.replace(co_argcount=nargs, co_kwonlyargcount=0, co_posonlyargcount=0,
                        co_flags=co.co_flags & ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS))
    raw = types.FunctionType(new_co, fn.__globals__, fn.__name__, None, fn.__closure__)
    sig_names = list(inspect.signature(fn).parameters)
    var_names = list(co.co_varnames[:nargs])
    order = [sig_names.index(n) for n in var_names]

    def patched(*args):
        return raw(*[args[i] for i in order])
    return patched, True


def symbolic_trace(root, concrete_args=None):
    """Trace root (a Module or a function) into a GraphModule (torch.fx.symbolic_trace)."""
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = root.__class__.__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
