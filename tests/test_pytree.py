"""torch.utils._pytree against PyTorch's: the same leaves, TreeSpec reprs, equality, hashes,
JSON, key paths and errors for every builtin node type and registered classes."""
import collections
import dataclasses
import pickle
import copy

import pytest

import ndgrad
from ndgrad.utils import _pytree as nd_pytree

Point = collections.namedtuple("Point", ["x", "y"])


def _trees():
    dd = collections.defaultdict(list)
    dd["k"] = 3
    dd["a"] = (4, 5)
    return [
        1, None, "s", (), [], {}, (1, 2), [1, [2, (3, None)]], {"b": 1, "a": [2, 3]},
        collections.OrderedDict([("z", 1), ("y", (2,))]), dd, collections.deque([1, [2]], maxlen=5),
        Point(1, [2, 3]), {"p": Point((1,), {"q": 2}), "l": [[], {}, ()]},
        [(1, 2), {"x": collections.deque([3])}],
    ]


def test_flatten_unflatten_and_specs_match_pytorch():
    torch = pytest.importorskip("torch")
    from torch.utils import _pytree as ref
    for tree in _trees():
        leaves, spec = nd_pytree.tree_flatten(tree)
        rleaves, rspec = ref.tree_flatten(tree)
        assert leaves == rleaves
        assert repr(spec) == repr(rspec), tree
        assert (spec.num_nodes, spec.num_leaves, spec.num_children) == (
            rspec.num_nodes, rspec.num_leaves, rspec.num_children)
        assert nd_pytree.tree_unflatten(leaves, spec) == tree
        assert type(nd_pytree.tree_unflatten(leaves, spec)) is type(tree)
        assert nd_pytree.treespec_pprint(spec) == ref.treespec_pprint(rspec)
        assert nd_pytree.tree_leaves(tree) == ref.tree_leaves(tree)
        assert list(nd_pytree.tree_iter(tree)) == list(ref.tree_iter(tree))
        assert nd_pytree.tree_structure(tree) == spec
        assert hash(spec) == hash(nd_pytree.tree_structure(copy.copy(tree)))
        kp, _ = nd_pytree.tree_flatten_with_path(tree)
        rkp, _ = ref.tree_flatten_with_path(tree)
        assert [nd_pytree.keystr(p) for p, _ in kp] == [ref.keystr(p) for p, _ in rkp]
        assert [v for _, v in kp] == [v for _, v in rkp]
        for p, v in kp:
            assert nd_pytree.key_get(tree, p) is v or nd_pytree.key_get(tree, p) == v
        if not any(isinstance(x, Point) for x in [tree] + nd_pytree.tree_leaves(
                tree, is_leaf=lambda t: isinstance(t, Point))):
            assert nd_pytree.treespec_dumps(spec) == ref.treespec_dumps(rspec)
            assert nd_pytree.treespec_loads(nd_pytree.treespec_dumps(spec)) == spec
        assert pickle.loads(pickle.dumps(spec)) == spec


def test_tree_map_family_matches_pytorch():
    torch = pytest.importorskip("torch")
    from torch.utils import _pytree as ref
    tree = {"a": [1, 2.5, "x"], "b": (3, None), "c": Point(4, 5.5)}
    f = lambda v: v * 2 if isinstance(v, (int, float)) else v  # noqa: E731
    assert nd_pytree.tree_map(f, tree) == ref.tree_map(f, tree)
    assert nd_pytree.tree_map(lambda a, b: (a, b), tree, tree) == ref.tree_map(
        lambda a, b: (a, b), tree, tree)
    assert nd_pytree.tree_map_only(int, lambda v: -v, tree) == ref.tree_map_only(
        int, lambda v: -v, tree)
    assert nd_pytree.tree_map_only((int, float), lambda v: 0, tree) == ref.tree_map_only(
        (int, float), lambda v: 0, tree)
    seen, rseen = [], []
    assert nd_pytree.tree_map_(seen.append, tree) is tree
    ref.tree_map_(rseen.append, tree)
    assert seen == rseen
    assert nd_pytree.tree_all(lambda v: v is not None, tree) == ref.tree_all(
        lambda v: v is not None, tree)
    assert nd_pytree.tree_any(lambda v: v == "x", tree) == ref.tree_any(lambda v: v == "x", tree)
    assert nd_pytree.tree_any_only(str, lambda v: v == "x", tree)
    assert nd_pytree.tree_all_only(int, lambda v: v > 0, tree)
    assert nd_pytree.tree_map_with_path(lambda p, v: nd_pytree.keystr(p), tree) == \
        ref.tree_map_with_path(lambda p, v: ref.keystr(p), tree)
    is_leaf = lambda t: isinstance(t, tuple)  # noqa: E731
    assert nd_pytree.tree_leaves(tree, is_leaf=is_leaf) == ref.tree_leaves(tree, is_leaf=is_leaf)
    spec = nd_pytree.tree_structure([1, (2, 3)])
    rspec = ref.tree_structure([1, (2, 3)])
    assert nd_pytree._broadcast_to_and_flatten([0, 1], spec) == \
        ref._broadcast_to_and_flatten([0, 1], rspec) == [0, 1, 1]
    assert nd_pytree._broadcast_to_and_flatten((0, 1), spec) is None


def test_mismatches_raise_pytorchs_errors():
    torch = pytest.importorskip("torch")
    from torch.utils import _pytree as ref
    cases = [([1, 2], [1, 2, 3]), ([1, 2], (1, 2)), ({"a": 1}, {"b": 1}),
             ({"a": 1, "b": 2}, {"a": 1}), (Point(1, 2), (1, 2))]
    for a, b in cases:
        with pytest.raises(ValueError) as e:
            nd_pytree.tree_map(lambda x, y: x, a, b)
        with pytest.raises(ValueError) as r:
            ref.tree_map(lambda x, y: x, a, b)
        assert str(e.value) == str(r.value)
    spec = nd_pytree.tree_structure((1, 2))
    with pytest.raises(ValueError, match="`leaves` has length 1 but the spec refers to a "
                       "pytree that holds 2 items"):
        spec.unflatten([1])
    with pytest.raises(TypeError, match="Expected `treespec` to be instance of TreeSpec"):
        nd_pytree.tree_unflatten([1], [1])
    # a dict spec accepts an OrderedDict of the same keys, as PyTorch's
    assert nd_pytree.tree_map(lambda x, y: x + y, {"a": 1},
                              collections.OrderedDict(a=2)) == {"a": 3}


def test_register_pytree_node_and_dataclass():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    nd_pytree.register_pytree_node(
        Pair, lambda p: ([p.a, p.b], "ctx"), lambda v, c: Pair(*v),
        serialized_type_name="tests.Pair",
        flatten_with_keys_fn=lambda p: ([(nd_pytree.GetAttrKey("a"), p.a),
                                         (nd_pytree.GetAttrKey("b"), p.b)], "ctx"))
    try:
        leaves, spec = nd_pytree.tree_flatten([Pair(1, (2, 3))])
        assert leaves == [1, 2, 3]
        assert repr(spec) == "TreeSpec(list, None, [TreeSpec(Pair, ctx, [*,\n    " \
                             "TreeSpec(tuple, None, [*,\n      *])])])"
        back = nd_pytree.tree_unflatten([4, 5, 6], spec)
        assert (back[0].a, back[0].b) == (4, (5, 6))
        paths = [nd_pytree.keystr(p) for p, _ in nd_pytree.tree_flatten_with_path(
            [Pair(1, 2)])[0]]
        assert paths == ["[0].a", "[0].b"]
        assert nd_pytree.treespec_loads(nd_pytree.treespec_dumps(spec)) == spec
        with pytest.raises(ValueError, match="already registered"):
            nd_pytree.register_pytree_node(Pair, lambda p: ([], None), lambda v, c: None)
    finally:
        nd_pytree._deregister_pytree_node(Pair)
    assert nd_pytree.tree_leaves(Pair(1, 2))[0].__class__ is Pair

    @dataclasses.dataclass
    class Cfg:
        lr: float
        sizes: list

    nd_pytree.register_dataclass(Cfg)
    try:
        assert nd_pytree.tree_map(lambda v: v * 2, Cfg(0.5, [1, 2])) == Cfg(1.0, [2, 4])
    finally:
        nd_pytree._deregister_pytree_node(Cfg)


def test_return_types_flatten_as_pytorchs_structseqs():
    torch = pytest.importorskip("torch")
    from torch.utils import _pytree as ref
    x = ndgrad.tensor([[1.0, 3.0], [2.0, 0.0]])
    leaves, spec = nd_pytree.tree_flatten(ndgrad.max(x, 1))
    rleaves, rspec = ref.tree_flatten(torch.max(torch.tensor(x.tolist()), 1))
    assert repr(spec) == repr(rspec) == "TreeSpec(max, None, [*,\n  *])"
    assert [t.tolist() for t in leaves] == [t.tolist() for t in rleaves]
    back = nd_pytree.tree_unflatten(leaves, spec)
    assert type(back) is type(ndgrad.max(x, 1)) and back.indices.tolist() == [1, 0]
    # tensors are leaves
    assert nd_pytree.tree_leaves({"w": x}) == [x]
