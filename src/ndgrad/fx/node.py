"""torch.fx.node: a Node is one instruction of a Graph (PyTorch's semantics).

`op` is one of placeholder (a function input, `target` its name), get_attr (a parameter,
buffer or submodule attribute, `target` its dotted path), call_function (`target` a callable),
call_method (`target` a method name, `args[0]` the object), call_module (`target` a submodule's
dotted path) and output (`args[0]` the returned value). `args`/`kwargs` hold Nodes anywhere
inside tuples, lists, dicts and slices; `users` maps each Node that reads this one to None, and
`all_input_nodes` lists the Nodes read, both kept up to date when args change.
"""
import builtins
import operator

__all__ = ["Node", "map_arg", "map_aggregate", "has_side_effect"]

_side_effectful_functions = set()


def has_side_effect(fn):
    """Marks fn so that dead code elimination keeps its calls (PyTorch's decorator)."""
    _side_effectful_functions.add(fn)
    return fn


def map_aggregate(a, fn):
    """Apply fn to every leaf of a (tuples, namedtuples, lists, dicts and slices recursed)."""
    if isinstance(a, tuple):
        t = tuple(map_aggregate(elem, fn) for elem in a)
        return t if not hasattr(a, "_fields") else type(a)(*t)
    if isinstance(a, list):
        return [map_aggregate(elem, fn) for elem in a]
    if isinstance(a, dict):
        return type(a)((k, map_aggregate(v, fn)) for k, v in a.items()) \
            if type(a) is not dict else {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),
                     map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a, fn):
    """Apply fn to every Node inside a (other leaves are kept)."""
    assert callable(fn), "torch.fx.map_arg(a, fn): fn must be a callable"
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _qualified_name(func):
    """The dotted name the generated code and the printed graph use for a callable."""
    if getattr(builtins, getattr(func, "__name__", ""), None) is func:
        return f"builtins.{func.__name__}"
    if getattr(operator, getattr(func, "__name__", ""), None) is func:
        return f"operator.{func.__name__}"
    name = getattr(func, "__name__", None)
    if name is None:
        return repr(func)
    import ndgrad
    from ndgrad.nn import functional as F
    owners = (("torch", ndgrad), ("torch.nn.functional", F), ("torch.Tensor", ndgrad.Tensor))
    for prefix, owner in owners:          # the object itself first, then a wrapper of it
        if getattr(owner, name, None) is func:
            return f"{prefix}.{name}"
    for prefix, owner in owners:
        if _public_is(getattr(owner, name, None), func):
            return f"{prefix}.{name}"
    if _registry_public(func) is not None:
        return f"torch.ops.ndgrad.{name}"
    module = getattr(func, "__module__", None) or "__main__"
    if module.startswith("ndgrad."):
        module = "torch." + module[len("ndgrad."):]
    return f"{module}.{getattr(func, '__qualname__', name)}"


def _registry_public(func):
    """The op whose __torch_function__ entry func is, when func is the stand-in ndgrad's op
    registry makes for an op with no torch-level function of its name (it runs the op)."""
    if getattr(func, "__module__", None) != "ndgrad.ops._registry":
        return None
    from ..ops import _registry
    op = _registry._OPS.get(getattr(func, "__name__", None))
    if op is not None and _registry._PUBLIC.get(op) is func:
        return op
    return None


def _registry_op_function(name):
    """The function _registry_public maps back to (for loading a saved graph)."""
    from ..ops import _registry
    op = _registry._OPS.get(name)
    return None if op is None else _registry._public(op)


def _public_is(public, func):
    """Whether public is func or a wrapper of it (functools.wraps chains: ndgrad's argument
    checking and out= layers wrap the functions __torch_function__ receives)."""
    seen = 0
    while public is not None and seen < 8:
        if public is func:
            return True
        public = getattr(public, "__wrapped__", None)
        seen += 1
    return False


def _format_arg(arg, max_list_len=float("inf")):
    if hasattr(arg, "_custom_fx_repr_fn"):
        return arg._custom_fx_repr_fn()
    if isinstance(arg, list):
        items = ", ".join(_format_arg(a) for idx, a in enumerate(arg) if idx < max_list_len)
        maybe_len = "" if len(arg) < max_list_len + 1 else f", ...[total_len={len(arg)}]"
        return f"[{items}{maybe_len}]"
    if isinstance(arg, tuple):
        items = ", ".join(_format_arg(a) for idx, a in enumerate(arg) if idx < max_list_len)
        maybe_len = "" if len(arg) < max_list_len + 1 else f", ...[total_len={len(arg)}]"
        maybe_comma = "," if len(arg) == 1 else ""
        return f"({items}{maybe_comma}{maybe_len})"
    if isinstance(arg, dict):
        items_str = ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items())
        return f"{{{items_str}}}"
    if isinstance(arg, Node):
        return "%" + str(arg)
    return str(arg)


class Node:
    """One instruction of a Graph; made by Graph.create_node (or its helpers)."""

    def __init__(self, graph, name, op, target, args, kwargs, return_type=None):
        if op not in ("placeholder", "call_method", "call_module", "call_function",
                      "get_attr", "output", "root"):
            raise ValueError(f"Unsupported node op {op!r}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has "
                             f"type {type(target).__name__} but a Callable is expected")
        if op in ("placeholder", "call_method", "call_module", "get_attr") \
                and not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has "
                             f"type {type(target).__name__} but a str is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes = {}
        self.users = {}
        self.type = return_type
        self._prev = self._next = self
        self._erased = False
        self.meta = {}
        self._args = ()
        self._kwargs = {}
        self.__update_args_kwargs(args, kwargs)

    # --- linked list -----------------------------------------------------------------------
    @property
    def next(self):
        return self._next

    @property
    def prev(self):
        return self._prev

    def prepend(self, x):
        """Insert x before this node in the graph's list."""
        assert self.graph == x.graph, "Attempting to move a Node into a different Graph"
        if self is x:
            return
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x):
        """Insert x after this node."""
        self._next.prepend(x)

    def _remove_from_list(self):
        p, n = self._prev, self._next
        p._next, n._prev = n, p
        self._prev = self._next = self

    # --- args ------------------------------------------------------------------------------
    @property
    def args(self):
        return self._args

    @args.setter
    def args(self, a):
        self.__update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self):
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k):
        self.__update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self):
        return list(self._input_nodes)

    def update_arg(self, idx, arg):
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def insert_arg(self, idx, arg):
        args = list(self.args)
        args.insert(idx, arg)
        self.args = tuple(args)

    def update_kwarg(self, key, arg):
        self.kwargs = {**self.kwargs, key: arg}

    def __update_args_kwargs(self, new_args, new_kwargs):
        for old_use in self._input_nodes:
            old_use.users.pop(self, None)
        self._input_nodes = {}

        def collect(n):
            if n.graph is not self.graph:
                raise RuntimeError(f"Argument '{n}' of Node '{self}' was used before it has "
                                   "been defined! Please check that Nodes in the graph are "
                                   "topologically ordered")
            self._input_nodes.setdefault(n)
            return n
        self._args = map_arg(tuple(new_args), collect)
        self._kwargs = map_arg(dict(new_kwargs), collect)
        for new_use in self._input_nodes:
            new_use.users.setdefault(self)

    @property
    def stack_trace(self):
        return self.meta.get("stack_trace", None)

    @stack_trace.setter
    def stack_trace(self, trace):
        self.meta["stack_trace"] = trace

    def __repr__(self):
        return self.name

    def _pretty_print_target(self, target):
        if isinstance(target, str):
            return target
        return _qualified_name(target)

    def format_node(self, placeholder_names=None, maybe_return_typename=None):
        """The line print(graph) shows for this node (PyTorch's format)."""
        if self.op == "placeholder":
            assert isinstance(self.target, str)
            arg_str = self.target
            arg_str += f": {self.type}" if self.type else ""
            if placeholder_names is not None:
                placeholder_names.append(arg_str)
                return None
            maybe_typename = f"{self.type} " if self.type else ""
            default_val = "(default=" + str(self.args[0]) + ")" if self.args else ""
            return (f"%{self.name} : {maybe_typename}[num_users={len(self.users)}] = "
                    f"{self.op}[target={self.target}]{default_val}")
        if self.op == "get_attr":
            maybe_typename = f"{self.type} " if self.type is not None else ""
            return (f"%{self.name} : {maybe_typename}[num_users={len(self.users)}] = "
                    f"{self.op}[target={self._pretty_print_target(self.target)}]")
        if self.op == "output":
            if self.type and maybe_return_typename is not None:
                maybe_return_typename[0] = f" -> {self.type}"
            return f"return {self.args[0]}"
        maybe_typename = f"{self.type} " if self.type is not None else ""
        return (f"%{self.name} : {maybe_typename}[num_users={len(self.users)}] = "
                f"{self.op}[target={self._pretty_print_target(self.target)}]("
                f"args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})")

    # --- rewriting -------------------------------------------------------------------------
    def replace_all_uses_with(self, replace_with, delete_user_cb=lambda user: True, *,
                              propagate_meta=False):
        """Make every user of this node read replace_with instead; returns the users changed."""
        if propagate_meta:
            assert len(replace_with.meta) == 0, (
                "Called node.replace_all_uses_with(replace_with, propagate_meta=True), but "
                "replace_with already has .meta keys")
            for k, v in self.meta.items():
                replace_with.meta[k] = v
        to_process = list(self.users)
        skipped, result = [], []
        for use_node in to_process:
            if not delete_user_cb(use_node):
                skipped.append(use_node)
                continue
            use_node.args = map_arg(use_node.args,
                                    lambda n: replace_with if n is self else n)
            use_node.kwargs = map_arg(use_node.kwargs,
                                      lambda n: replace_with if n is self else n)
            result.append(use_node)
        if self.graph.owning_module is not None:
            pass
        assert len(self.users) == len(skipped)
        return result

    def replace_input_with(self, old_input, new_input):
        m = lambda n: new_input if n is old_input else n  # noqa: E731
        self.args = map_arg(self.args, m)
        self.kwargs = map_arg(self.kwargs, m)

    def is_impure(self, impure_random=True):
        """Whether dead code elimination must keep this node."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            if self.target in _side_effectful_functions:
                return True
            name = getattr(self.target, "__name__", "")
            return name.endswith("_") and not name.endswith("__")   # in-place ops
        if self.op == "call_method":
            return self.target.endswith("_") and not self.target.endswith("__")
        if self.op == "call_module":
            mod = self.graph.owning_module
            if mod is not None:
                target_mod = mod.get_submodule(self.target)
                return getattr(target_mod, "_is_impure", False)
        return False

    def normalized_arguments(self, *args, **kwargs):
        return None
