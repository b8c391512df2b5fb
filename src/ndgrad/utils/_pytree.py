"""`torch.utils._pytree`: nested containers ("pytrees") flattened to a list of leaves and a
TreeSpec that rebuilds them, with PyTorch's semantics.

Nodes are tuple, list, dict, namedtuple (every namedtuple class, reported as the type
`collections.namedtuple`, the class as the context), OrderedDict, defaultdict, deque, the
`torch.return_types` structseqs, and any type registered with `register_pytree_node`; everything
else (None included) is a leaf. Dicts flatten in insertion order (PyTorch's Python pytree; its
C++ one sorts keys). `TreeSpec` compares, hashes and prints as PyTorch's
(`TreeSpec(tuple, None, [*, *])`); `treespec_dumps` writes PyTorch's JSON protocol 1.

    leaves, spec = tree_flatten({"a": [1, 2], "b": (3,)})   # [1, 2, 3]
    tree_unflatten([x * 10 for x in leaves], spec)          # {'a': [10, 20], 'b': (30,)}
"""
import dataclasses
import functools
import importlib
import json
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple
from enum import Enum
from typing import Any, Callable, NamedTuple

__all__ = [
    "PyTree", "Context", "FlattenFn", "UnflattenFn", "DumpableContext", "ToDumpableContextFn",
    "FromDumpableContextFn", "PyTreeSpec", "TreeSpec", "LeafSpec", "keystr", "key_get",
    "register_pytree_node", "tree_is_leaf", "tree_flatten", "tree_flatten_with_path",
    "tree_unflatten", "tree_iter", "tree_leaves", "tree_leaves_with_path", "tree_structure",
    "tree_map", "tree_map_with_path", "tree_map_", "tree_map_only", "tree_map_only_",
    "tree_all", "tree_any", "tree_all_only", "tree_any_only", "treespec_dumps",
    "treespec_loads", "treespec_pprint", "is_namedtuple", "is_namedtuple_class",
    "is_namedtuple_instance", "is_structseq", "is_structseq_class", "is_structseq_instance",
]

PyTree = Any
Context = Any
FlattenFn = Callable
UnflattenFn = Callable
DumpableContext = Any
ToDumpableContextFn = Callable
FromDumpableContextFn = Callable
FlattenWithKeysFn = Callable

NO_SERIALIZED_TYPE_NAME_FOUND = "NO_SERIALIZED_TYPE_NAME_FOUND"
DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL = 1


class NodeDef(NamedTuple):
    type: Any
    flatten_fn: Callable
    unflatten_fn: Callable
    flatten_with_keys_fn: Any


class _SerializeNodeDef(NamedTuple):
    typ: Any
    serialized_type_name: str
    to_dumpable_context: Any
    from_dumpable_context: Any


SUPPORTED_NODES = {}
SUPPORTED_SERIALIZED_TYPES = {}
SERIALIZED_TYPE_TO_PYTHON_TYPE = {}
CONSTANT_NODES = set()


# ---------------------------------------------------------------------------- key paths
@dataclasses.dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    key: Any

    def __str__(self):
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self):
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


KeyEntry = Any
KeyPath = tuple


def keystr(kp):
    """The key path as a string: `keystr((MappingKey('a'), SequenceKey(0)))` is "['a'][0]"."""
    return "".join(str(k) for k in kp)


def key_get(obj, kp):
    """The subtree of `obj` at the key path `kp`."""
    for k in kp:
        obj = k.get(obj)
    return obj


# ---------------------------------------------------------------------------- registration
def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                         to_dumpable_context=None, from_dumpable_context=None,
                         flatten_with_keys_fn=None):
    """Register `cls` as a node: `flatten_fn(x) -> (children, context)` and
    `unflatten_fn(children, context) -> x`. Registering a type twice raises ValueError."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    _private_register_pytree_node(
        cls, flatten_fn, unflatten_fn, serialized_type_name=serialized_type_name,
        to_dumpable_context=to_dumpable_context, from_dumpable_context=from_dumpable_context,
        flatten_with_keys_fn=flatten_with_keys_fn)


def _register_pytree_node(cls, flatten_fn, unflatten_fn, to_str_fn=None,
                          maybe_from_str_fn=None, *, serialized_type_name=None,
                          to_dumpable_context=None, from_dumpable_context=None,
                          flatten_with_keys_fn=None):
    """The deprecated spelling of register_pytree_node (transformers and others call it)."""
    warnings.warn("torch.utils._pytree._register_pytree_node is deprecated. "
                  "Please use torch.utils._pytree.register_pytree_node instead.",
                  FutureWarning, stacklevel=2)
    if to_str_fn is not None or maybe_from_str_fn is not None:
        warnings.warn("`to_str_fn` and `maybe_from_str_fn` is deprecated. "
                      "Please use `to_dumpable_context` and `from_dumpable_context` instead.",
                      FutureWarning, stacklevel=2)
    _private_register_pytree_node(
        cls, flatten_fn, unflatten_fn, serialized_type_name=serialized_type_name,
        to_dumpable_context=to_dumpable_context, from_dumpable_context=from_dumpable_context,
        flatten_with_keys_fn=flatten_with_keys_fn)


def _private_register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                                  to_dumpable_context=None, from_dumpable_context=None,
                                  flatten_with_keys_fn=None):
    if cls in SUPPORTED_NODES:
        warnings.warn(f"{cls} is already registered as pytree node. "
                      "Overwriting the previous registration.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
    if (to_dumpable_context is None) ^ (from_dumpable_context is None):
        raise ValueError(f"Both to_dumpable_context and from_dumpable_context for {cls} must "
                         "be None or registered.")
    if serialized_type_name is None:
        serialized_type_name = NO_SERIALIZED_TYPE_NAME_FOUND
    SUPPORTED_SERIALIZED_TYPES[cls] = _SerializeNodeDef(
        cls, serialized_type_name, to_dumpable_context, from_dumpable_context)
    SERIALIZED_TYPE_TO_PYTHON_TYPE[serialized_type_name] = cls


def _deregister_pytree_node(cls):
    SUPPORTED_NODES.pop(cls, None)
    node_def = SUPPORTED_SERIALIZED_TYPES.pop(cls, None)
    if node_def is not None:
        SERIALIZED_TYPE_TO_PYTHON_TYPE.pop(node_def.serialized_type_name, None)
    CONSTANT_NODES.discard(cls)


def register_dataclass(cls, *, field_names=None, drop_field_names=None,
                       serialized_type_name=None):
    """Register a dataclass (or any class with the named fields) as a node whose children
    are its fields (`field_names`; default: the dataclass's init fields)."""
    drop = set(drop_field_names or ())
    if field_names is None:
        if not dataclasses.is_dataclass(cls):
            raise ValueError(f"field_names must be specified with a list of all fields used to "
                             f"initialize {cls}, as it is not a dataclass.")
        field_names = [f.name for f in dataclasses.fields(cls) if f.init and f.name not in drop]
    field_names = list(field_names)

    def flatten(obj):
        return [getattr(obj, n) for n in field_names], field_names

    def unflatten(values, context):
        return cls(**dict(zip(context, values)))

    def flatten_with_keys(obj):
        return [(GetAttrKey(n), getattr(obj, n)) for n in field_names], field_names

    _private_register_pytree_node(cls, flatten, unflatten,
                                  serialized_type_name=serialized_type_name,
                                  flatten_with_keys_fn=flatten_with_keys)


class ConstantNode:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return isinstance(other, ConstantNode) and self.value == other.value

    def __hash__(self):
        return hash(self.value)

    def __repr__(self):
        return f"ConstantNode(value={self.value!r})"


def register_constant(cls):
    """Register `cls` as a node with no children whose instance is its context (it must be
    hashable and comparable)."""
    if cls.__eq__ is object.__eq__ or cls.__hash__ is None:
        raise TypeError("register_constant(cls) expects `cls` to have a non-default `__eq__` "
                        "implementation and a `__hash__` implementation.")
    _private_register_pytree_node(cls, lambda x: ([], ConstantNode(x)),
                                  lambda _, context: context.value,
                                  flatten_with_keys_fn=lambda x: ([], ConstantNode(x)))
    CONSTANT_NODES.add(cls)


def is_constant_class(cls):
    return cls in CONSTANT_NODES


# ---------------------------------------------------------------------------- namedtuples
def is_namedtuple(obj):
    """Whether `obj` is a namedtuple class or instance."""
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_class(cls):
    return (isinstance(cls, type) and issubclass(cls, tuple)
            and isinstance(getattr(cls, "_fields", None), tuple)
            and all(type(f) is str for f in cls._fields)
            and callable(getattr(cls, "_make", None))
            and callable(getattr(cls, "_asdict", None)))


def is_namedtuple_instance(obj):
    return is_namedtuple_class(type(obj))


def is_structseq(obj):
    return is_structseq_class(obj if isinstance(obj, type) else type(obj))


def is_structseq_class(cls):
    # a PyStructSequence (os.stat_result, time.struct_time, torch.return_types.*)
    return (isinstance(cls, type) and cls.__bases__ == (tuple,)
            and isinstance(getattr(cls, "n_sequence_fields", None), int)
            and isinstance(getattr(cls, "n_fields", None), int)
            and isinstance(getattr(cls, "n_unnamed_fields", None), int))


def is_structseq_instance(obj):
    return is_structseq_class(type(obj))


_namedtuple_names = {}


def _register_namedtuple(cls, *, serialized_type_name):
    """Give a namedtuple class a name for treespec_dumps."""
    _namedtuple_names[cls] = serialized_type_name
    _namedtuple_classes[serialized_type_name] = cls


_namedtuple_classes = {}


# ---------------------------------------------------------------------------- builtin nodes
def _seq_keys(d):
    return [(SequenceKey(i), v) for i, v in enumerate(d)]


def _namedtuple_serialize(context):
    if context not in _namedtuple_names:
        raise NotImplementedError(
            f"Can't serialize TreeSpec of namedtuple class {context} because we didn't "
            "register a serializated_type_name. Please register using `_register_namedtuple`.")
    return _namedtuple_names[context]


def _namedtuple_deserialize(dumpable_context):
    if dumpable_context not in _namedtuple_classes:
        raise NotImplementedError(
            f"Can't deserialize TreeSpec of namedtuple class {dumpable_context} because we "
            "couldn't find a serializated name.")
    return _namedtuple_classes[dumpable_context]


def _defaultdict_serialize(context):
    factory, keys = context
    return {"default_factory_module": factory.__module__,
            "default_factory_name": factory.__qualname__, "dict_context": keys}


def _defaultdict_deserialize(dumpable_context):
    obj = dumpable_context
    module = importlib.import_module(obj["default_factory_module"])
    return [getattr(module, obj["default_factory_name"]), obj["dict_context"]]


def _tuple_flatten(d):
    return list(d), None


def _tuple_flatten_with_keys(d):
    return _seq_keys(d), None


def _tuple_unflatten(values, context):
    return tuple(values)


def _list_flatten(d):
    return d, None


def _list_flatten_with_keys(d):
    return _seq_keys(d), None


def _list_unflatten(values, context):
    return list(values)


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


def _dict_flatten_with_keys(d):
    return [(MappingKey(k), v) for k, v in d.items()], list(d.keys())


def _dict_unflatten(values, context):
    return dict(zip(context, values))


def _namedtuple_flatten(d):
    return list(d), type(d)


def _namedtuple_flatten_with_keys(d):
    return [(GetAttrKey(f), v) for f, v in zip(d._fields, d)], type(d)


def _namedtuple_unflatten(values, context):
    return context(*values)


def _ordereddict_flatten(d):
    return list(d.values()), list(d.keys())


def _ordereddict_flatten_with_keys(d):
    return [(MappingKey(k), v) for k, v in d.items()], list(d.keys())


def _ordereddict_unflatten(values, context):
    return OrderedDict((key, value) for key, value in zip(context, values))


def _defaultdict_flatten(d):
    return list(d.values()), [d.default_factory, list(d.keys())]


def _defaultdict_flatten_with_keys(d):
    return [(MappingKey(k), v) for k, v in d.items()], [d.default_factory, list(d.keys())]


def _defaultdict_unflatten(values, context):
    default_factory, keys = context
    return defaultdict(default_factory, dict(zip(keys, values)))


def _deque_flatten(d):
    return list(d), d.maxlen


def _deque_flatten_with_keys(d):
    return _seq_keys(d), d.maxlen


def _deque_unflatten(values, context):
    return deque(values, maxlen=context)


# the builtin nodes (their helpers keep PyTorch's private names: libraries register their own
# types with them, as transformers does with _dict_flatten_with_keys)
_private_register_pytree_node(tuple, _tuple_flatten, _tuple_unflatten,
                              serialized_type_name="builtins.tuple",
                              flatten_with_keys_fn=_tuple_flatten_with_keys)
_private_register_pytree_node(list, _list_flatten, _list_unflatten,
                              serialized_type_name="builtins.list",
                              flatten_with_keys_fn=_list_flatten_with_keys)
_private_register_pytree_node(dict, _dict_flatten, _dict_unflatten,
                              serialized_type_name="builtins.dict",
                              flatten_with_keys_fn=_dict_flatten_with_keys)
_private_register_pytree_node(namedtuple, _namedtuple_flatten, _namedtuple_unflatten,
                              serialized_type_name="collections.namedtuple",
                              to_dumpable_context=_namedtuple_serialize,
                              from_dumpable_context=_namedtuple_deserialize,
                              flatten_with_keys_fn=_namedtuple_flatten_with_keys)
_private_register_pytree_node(OrderedDict, _ordereddict_flatten, _ordereddict_unflatten,
                              serialized_type_name="collections.OrderedDict",
                              flatten_with_keys_fn=_ordereddict_flatten_with_keys)
_private_register_pytree_node(defaultdict, _defaultdict_flatten, _defaultdict_unflatten,
                              serialized_type_name="collections.defaultdict",
                              to_dumpable_context=_defaultdict_serialize,
                              from_dumpable_context=_defaultdict_deserialize,
                              flatten_with_keys_fn=_defaultdict_flatten_with_keys)
_private_register_pytree_node(deque, _deque_flatten, _deque_unflatten,
                              serialized_type_name="collections.deque",
                              flatten_with_keys_fn=_deque_flatten_with_keys)

STANDARD_DICT_TYPES = frozenset({dict, OrderedDict, defaultdict})
BUILTIN_TYPES = frozenset({tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque})


def _get_node_type(tree):
    node_type = type(tree)
    if node_type not in _STRUCTSEQ_TYPES and is_namedtuple_class(node_type):
        return namedtuple      # every namedtuple class is a node, reported as namedtuple
    return node_type


def tree_is_leaf(tree, is_leaf=None):
    """Whether `tree` is a leaf (not a registered node, or `is_leaf(tree)`)."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _get_node_type(tree) not in SUPPORTED_NODES


def _is_leaf(tree, is_leaf=None):
    return tree_is_leaf(tree, is_leaf=is_leaf)


# ---------------------------------------------------------------------------- TreeSpec
class TreeSpec:
    """The structure of a pytree: its root node's type and context, and one TreeSpec per
    child. A leaf's spec has type None."""

    __slots__ = ("type", "_context", "_children", "num_nodes", "num_leaves", "num_children")

    def __init__(self, type, context, children_specs):
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "_context", context)
        object.__setattr__(self, "_children", children_specs)
        if type is None:
            if context is not None:
                raise AssertionError("leaf node should not have a context")
            if len(children_specs) != 0:
                raise AssertionError("leaf node should not have children")
            nodes, leaves = 1, 1
        else:
            nodes = 1 + sum(c.num_nodes for c in children_specs)
            leaves = sum(c.num_leaves for c in children_specs)
        object.__setattr__(self, "num_nodes", nodes)
        object.__setattr__(self, "num_leaves", leaves)
        object.__setattr__(self, "num_children", len(children_specs))

    def __setattr__(self, name, value):
        raise dataclasses.FrozenInstanceError(f"cannot assign to field '{name}'")

    def __repr__(self, indent=0):
        prefix = f"TreeSpec({self.type.__name__}, {self._context}, ["
        children = ""
        if self.num_children > 0:
            indent += 2
            children += self._children[0].__repr__(indent)
            children += "," if self.num_children > 1 else ""
            children += ",".join("\n" + " " * indent + child.__repr__(indent)
                                 for child in self._children[1:])
        return prefix + children + "])"

    def __eq__(self, other):
        if self is other:
            return True
        if isinstance(other, TreeSpec):
            return (str(self.type) == str(other.type) and self._context == other._context
                    and self._children == other._children)
        return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        t = self.type
        if t is defaultdict:
            context = (self._context[0], tuple(self._context[1]))
        elif t in (dict, OrderedDict):
            context = tuple(self._context)
        elif t is None or t in BUILTIN_TYPES:
            context = self._context
        elif isinstance(self._context, ConstantNode):
            context = self._context.value
        else:
            context = None          # a user type's context may not be hashable
        return hash((t, context, tuple(self._children)))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        if self.is_leaf():
            return (_leaf_spec, ())
        return (TreeSpec, (self.type, self._context, self._children))

    @property
    def context(self):
        return self._context

    @property
    def children_specs(self):
        return self._children

    def is_leaf(self):
        return self.num_nodes == 1 and self.num_leaves == 1

    def children(self):
        return self._children.copy()

    def child(self, index):
        return self._children[index]

    def flatten_up_to(self, tree):
        """The subtrees of `tree` where this spec has leaves (tree must have this spec's
        structure down to them)."""
        subtrees = []
        stack = [(self, tree)]
        while stack:
            spec, node = stack.pop()
            if spec.is_leaf():
                subtrees.append(node)
                continue
            node_type = _get_node_type(node)
            if spec.type not in BUILTIN_TYPES:
                if node_type != spec.type:
                    raise ValueError(f"Type mismatch; expected {spec.type!r}, but got "
                                     f"{node_type!r}.")
                children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
                if len(children) != spec.num_children:
                    raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but "
                                     f"got {len(children)}.")
                if context != spec._context:
                    raise ValueError(f"Node context mismatch for custom node type "
                                     f"{spec.type!r}.")
            else:
                both_dict = spec.type in STANDARD_DICT_TYPES and node_type in STANDARD_DICT_TYPES
                if not both_dict and node_type != spec.type:
                    raise ValueError(f"Node type mismatch; expected {spec.type!r}, but got "
                                     f"{node_type!r}.")
                if len(node) != spec.num_children:
                    raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but "
                                     f"got {len(node)}.")
                if both_dict:
                    expected = spec._context if spec.type is not defaultdict else \
                        spec._context[1]
                    got_set, expected_set = set(node), set(expected)
                    if got_set != expected_set:
                        message = ""
                        missing = expected_set.difference(got_set)
                        extra = got_set.difference(expected_set)
                        if missing:
                            message += f"; missing key(s): {missing}"
                        if extra:
                            message += f"; extra key(s): {extra}"
                        raise ValueError(f"Node keys mismatch{message}.")
                    children = [node[key] for key in expected]
                else:
                    children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
                    if node_type is not deque and context != spec._context:
                        raise ValueError(
                            f"Node context mismatch for node type {spec.type!r}; expected "
                            f"{spec._context!r}, but got {context!r}.")
            stack.extend(reversed(list(zip(spec._children, children))))
        return subtrees

    def unflatten(self, leaves):
        """Rebuild the pytree of this structure from `leaves`."""
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(
                f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec "
                f"refers to a pytree that holds {self.num_leaves} items ({self}).")
        return self._unflatten(leaves, 0)

    def _unflatten(self, leaves, start):
        if self.is_leaf():
            return leaves[start]
        children = []
        for child in self._children:
            children.append(child._unflatten(leaves, start))
            start += child.num_leaves
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self._context)


PyTreeSpec = TreeSpec


class LeafSpec(TreeSpec):
    """The spec of a leaf (prints as `*`)."""
    __slots__ = ()

    def __init__(self):
        TreeSpec.__init__(self, None, None, [])

    def __repr__(self, indent=0):
        return "*"


_LEAF_SPEC = LeafSpec()


def _leaf_spec():
    return _LEAF_SPEC


def treespec_leaf():
    return _LEAF_SPEC


def treespec_tuple(iterable=(), /):
    children = list(iterable)
    return TreeSpec(tuple, None, children)


def treespec_dict(mapping=(), /, **kwargs):
    d = dict(mapping, **kwargs)
    return TreeSpec(dict, list(d.keys()), list(d.values()))


# ---------------------------------------------------------------------------- flatten
def tree_flatten(tree, is_leaf=None):
    """(leaves, treespec) of `tree`; `tree_unflatten(leaves, treespec)` rebuilds it."""
    leaves = []
    return leaves, _flatten(tree, leaves, is_leaf)


def _flatten(node, leaves, is_leaf):
    if tree_is_leaf(node, is_leaf=is_leaf):
        leaves.append(node)
        return _LEAF_SPEC
    node_type = _get_node_type(node)
    children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
    return TreeSpec(node_type, context, [_flatten(c, leaves, is_leaf) for c in children])


def tree_unflatten(leaves, treespec):
    """The pytree of structure `treespec` holding `leaves`."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance "
                        f"of TreeSpec but got item of type {type(treespec)}.")
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    """The leaves of `tree`, lazily, left to right."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if tree_is_leaf(node, is_leaf=is_leaf):
            yield node
            continue
        children, _ = SUPPORTED_NODES[_get_node_type(node)].flatten_fn(node)
        stack.extend(reversed(list(children)))


def tree_leaves(tree, is_leaf=None):
    return list(tree_iter(tree, is_leaf=is_leaf))


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf=is_leaf)[1]


def tree_map(func, tree, *rests, is_leaf=None):
    """A pytree of `tree`'s structure holding func(leaf, *corresponding leaves of rests)."""
    leaves, treespec = tree_flatten(tree, is_leaf=is_leaf)
    flat_args = [leaves] + [treespec.flatten_up_to(r) for r in rests]
    return treespec.unflatten(map(func, *flat_args))


def tree_map_(func, tree, *rests, is_leaf=None):
    """Call func on each leaf (with the rests' leaves) for its side effects; returns `tree`."""
    leaves, treespec = tree_flatten(tree, is_leaf=is_leaf)
    flat_args = [leaves] + [treespec.flatten_up_to(r) for r in rests]
    deque(map(func, *flat_args), maxlen=0)
    return tree


def map_only(type_or_types_or_pred, /):
    """Decorator: apply the function to leaves of the given type(s) (or for which the
    predicate holds), pass the others through."""
    if isinstance(type_or_types_or_pred, (type, tuple)) or (
            type(type_or_types_or_pred).__name__ in ("UnionType", "_UnionGenericAlias")):
        types = type_or_types_or_pred

        def pred(x):
            return isinstance(x, types)
    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")

    def wrapper(func):
        @functools.wraps(func)
        def wrapped(x):
            if pred(x):
                return func(x)
            return x
        return wrapped
    return wrapper


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None):
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func, tree, is_leaf=None):
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    return all(map(pred, tree_iter(tree, is_leaf=is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    return any(map(pred, tree_iter(tree, is_leaf=is_leaf)))


def tree_all_only(type_or_types, /, pred, tree, is_leaf=None):
    return all(pred(x) for x in tree_iter(tree, is_leaf=is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, /, pred, tree, is_leaf=None):
    return any(pred(x) for x in tree_iter(tree, is_leaf=is_leaf) if isinstance(x, type_or_types))


# ---------------------------------------------------------------------------- key paths
def _flatten_with_keys_children(node):
    node_type = _get_node_type(node)
    node_def = SUPPORTED_NODES[node_type]
    if node_def.flatten_with_keys_fn is None:
        raise ValueError(
            f"Did not find a flatten_with_keys_fn for type: {node_type}. Please pass a "
            "flatten_with_keys_fn argument to register_pytree_node.")
    return node_def.flatten_with_keys_fn(node)[0]


def tree_flatten_with_path(tree, is_leaf=None):
    """([(key path, leaf), ...], treespec)."""
    out = []

    def walk(node, path):
        if tree_is_leaf(node, is_leaf=is_leaf):
            out.append((path, node))
            return
        for key, child in _flatten_with_keys_children(node):
            walk(child, (*path, key))
    walk(tree, ())
    return out, tree_structure(tree, is_leaf=is_leaf)


def tree_leaves_with_path(tree, is_leaf=None):
    return tree_flatten_with_path(tree, is_leaf=is_leaf)[0]


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    """func(key path, leaf, *rests' leaves) at each leaf."""
    keypath_leaves, treespec = tree_flatten_with_path(tree, is_leaf)
    keypaths, leaves = zip(*keypath_leaves) if keypath_leaves else ((), ())
    all_leaves = [list(leaves)] + [treespec.flatten_up_to(r) for r in rests]
    return treespec.unflatten(func(*xs) for xs in zip(keypaths, *all_leaves))


# ---------------------------------------------------------------------------- prefix trees
def _broadcast_to_and_flatten(tree, treespec, is_leaf=None):
    """Flatten `tree`, a prefix of the structure `treespec`, repeating each of its leaves
    over the subtree it covers; None when it is no prefix."""
    full_tree = tree_unflatten([0] * treespec.num_leaves, treespec)
    result = []

    def add_leaves(x, subtree):
        result.extend([x] * tree_structure(subtree, is_leaf=is_leaf).num_leaves)
    try:
        tree_map_(add_leaves, tree, full_tree, is_leaf=is_leaf)
    except ValueError:
        return None
    return result


# ---------------------------------------------------------------------------- serialization
class EnumEncoder(json.JSONEncoder):
    def default(self, obj):
        if isinstance(obj, Enum):
            return {"__enum__": True, "fqn": f"{obj.__class__.__module__}:"
                    f"{obj.__class__.__qualname__}", "name": obj.name}
        return super().default(obj)


def enum_object_hook(obj):
    if "__enum__" in obj:
        modname, _, classname = obj["fqn"].partition(":")
        enum_cls = importlib.import_module(modname)
        for attr in classname.split("."):
            enum_cls = getattr(enum_cls, attr)
        return enum_cls[obj["name"]]
    return obj


def _treespec_to_json(spec):
    if spec.is_leaf():
        return {"type": None, "context": None, "children_spec": []}
    if spec.type not in SUPPORTED_SERIALIZED_TYPES:
        raise NotImplementedError(f"Serializing {spec.type} in pytree is not registered.")
    node_def = SUPPORTED_SERIALIZED_TYPES[spec.type]
    if node_def.serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(
            f"No registered serialization name for {spec.type} found. Please update your "
            "_register_pytree_node call with a `serialized_type_name` kwarg.")
    if node_def.to_dumpable_context is None:
        try:
            context = json.dumps(spec._context, cls=EnumEncoder)
        except TypeError as e:
            raise TypeError("Unable to serialize context. Please make the context json "
                            "dump-able, or register a custom serializer using "
                            "_register_pytree_node.") from e
    else:
        context = node_def.to_dumpable_context(spec._context)
    return {"type": node_def.serialized_type_name, "context": context,
            "children_spec": [_treespec_to_json(c) for c in spec._children]}


def _json_to_treespec(schema):
    if schema["type"] is None and schema["context"] is None and not schema["children_spec"]:
        return _LEAF_SPEC
    if schema["type"] not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(f"Deserializing {schema['type']} in pytree is not registered.")
    typ = SERIALIZED_TYPE_TO_PYTHON_TYPE[schema["type"]]
    node_def = SUPPORTED_SERIALIZED_TYPES[typ]
    if node_def.from_dumpable_context is None:
        context = json.loads(schema["context"], object_hook=enum_object_hook)
    else:
        context = node_def.from_dumpable_context(schema["context"])
    return TreeSpec(typ, context, [_json_to_treespec(c) for c in schema["children_spec"]])


def treespec_dumps(treespec, protocol=None):
    """The spec as PyTorch's JSON text (protocol 1)."""
    if protocol is None:
        protocol = DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL
    if protocol != 1:
        raise ValueError(f"Unknown protocol {protocol}. Available protocols: [1]")
    return json.dumps((protocol, _treespec_to_json(treespec)), cls=EnumEncoder)


def treespec_loads(serialized):
    protocol, schema = json.loads(serialized)
    if protocol != 1:
        raise ValueError(f"Unknown protocol {protocol}. Available protocols: [1]")
    return _json_to_treespec(schema)


class _Asterisk(str):
    __slots__ = ()

    def __new__(cls):
        return super().__new__(cls, "*")

    def __repr__(self):
        return "*"


_asterisk = _Asterisk()


def treespec_pprint(treespec):
    """The structure drawn with `*` for each leaf: "(*, [*, *])"."""
    return repr(tree_unflatten([_asterisk] * treespec.num_leaves, treespec))


_STRUCTSEQ_TYPES = set()


def _register_structseq(cls):
    """`torch.return_types.<name>` (PyTorch's structseqs, ndgrad's named tuples): a node of
    its own type with no context, as torch.return_types registers them."""
    if cls in SUPPORTED_NODES:
        return
    _STRUCTSEQ_TYPES.add(cls)
    _private_register_pytree_node(
        cls, lambda d: (list(d), None), lambda values, context, cls=cls: cls(*values),
        flatten_with_keys_fn=lambda d: (_seq_keys(d), None))


def _register_return_types():
    from .. import return_types
    for cls in list(return_types._CACHE.values()):
        _register_structseq(cls)


_register_return_types()
