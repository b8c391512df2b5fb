"""Op table: indexing, gather/scatter, masks, sorting (issue 3, part B). Run by tests/test_op_db.py.

Index tensors are built inside `fn` (lib.tensor([...])) so both libraries see the same indices;
scatter/index_copy samples avoid duplicate target indices (PyTorch leaves their order undefined).
"""
from op_db import OpCase as _OpCase, register


def OpCase(*args, **kwargs):
    """The table's OpCase, comparing grad_fn names with PyTorch unless told otherwise."""
    kwargs.setdefault("check_node_name", True)
    return _OpCase(*args, **kwargs)


def _I(L, v):
    return L.tensor(v)


def _mask(x):
    return x > 0


def _none(L, *shape):
    """An empty (int64) index tensor of the given shape."""
    return L.zeros(shape, dtype=L.long)


register(
    # ------------------------------------------------ __getitem__
    OpCase("getitem_int", [((4, 3),)], fn=lambda L, x: x[1]),
    OpCase("getitem_neg", [((4, 3),)], fn=lambda L, x: x[-1, -2]),
    OpCase("getitem_slice", [((5, 4),), ((0, 4),)], fn=lambda L, x: x[1:4:2, ::3]),
    OpCase("getitem_none_ellipsis", [((2, 3, 4),)], fn=lambda L, x: x[None, ..., 1, None]),
    OpCase("getitem_ellipsis", [((2, 3, 4),)], fn=lambda L, x: x[..., 1:]),
    OpCase("getitem_list", [((4, 3),)], fn=lambda L, x: x[[0, 2, 2]]),
    OpCase("getitem_tensor", [((4, 3),)], fn=lambda L, x: x[_I(L, [[3, 0], [1, 1]])]),
    OpCase("getitem_int32_tensor", [((4, 3),)], fn=lambda L, x: x[_I(L, [3, 0]).int()]),
    OpCase("getitem_mask", [((4, 3),), ((),), ((0, 3),)], fn=lambda L, x: x[_mask(x)]),
    OpCase("getitem_row_mask", [((4, 3),)], fn=lambda L, x: x[_I(L, [True, False, True, True])]),
    OpCase("getitem_mixed", [((4, 3, 5),)], fn=lambda L, x: x[_I(L, [0, 2]), :, _I(L, [1, 4])]),
    OpCase("getitem_mixed_adjacent", [((4, 3, 5),)], fn=lambda L, x: x[:, _I(L, [0, 2, 1]), 1:3]),
    OpCase("getitem_separated", [((4, 3, 5),)], fn=lambda L, x: x[_I(L, [0, 2]), 1, _I(L, [1, 4])]),
    OpCase("getitem_broadcast", [((4, 5),)], fn=lambda L, x: x[_I(L, [[0], [3]]), _I(L, [1, 2, 4])]),
    OpCase("getitem_0d", [((),)], fn=lambda L, x: x[None]),
    OpCase("getitem_empty", [((4, 3),)], fn=lambda L, x: x[2:2]),
    # ------------------------------------------------ index_select / gather / take
    OpCase("index_select", [((4, 3),)], kwargs=[dict(dim=0), dict(dim=1), dict(dim=-1)],
           fn=lambda L, x, dim: L.index_select(x, dim, _I(L, [2, 0, 2]))),
    OpCase("index_select_0d", [((),)], fn=lambda L, x: L.index_select(x, 0, _I(L, [0]))),
    OpCase("index_select_empty", [((0, 3),), ((4, 3),)],
           fn=lambda L, x: L.index_select(x, 0, _none(L, 0))),
    OpCase("gather", [((3, 4),)], kwargs=[dict(dim=0), dict(dim=1)],
           fn=lambda L, x, dim: L.gather(x, dim, _I(L, [[0, 2, 1], [2, 2, 0]]))),
    OpCase("gather_0d", [((),)], fn=lambda L, x: L.gather(x, 0, _I(L, 0))),
    OpCase("gather_empty", [((0, 4),), ((3, 4),)], fn=lambda L, x: L.gather(x, 0, _none(L, 0, 4))),
    OpCase("take", [((3, 4),)], fn=lambda L, x: L.take(x, _I(L, [[0, 11], [5, 5]]))),
    OpCase("take_0d", [((),)], fn=lambda L, x: L.take(x, _I(L, [0, 0]))),
    OpCase("take_empty", [((0, 3),), ((3, 4),)], fn=lambda L, x: L.take(x, _none(L, 0))),
    OpCase("take_along_dim", [((3, 4),)], kwargs=[dict(dim=1), dict(dim=0)],
           fn=lambda L, x, dim: L.take_along_dim(x, _I(L, [[0, 2], [1, 1], [2, 0]]) if dim == 1
                                                 else _I(L, [[0, 2, 1, 1]]), dim)),
    # PyTorch's flat take_along_dim .view()s its input: it raises on non-contiguous inputs
    OpCase("take_along_dim_flat", [((3, 4),)], noncontig=False,
           fn=lambda L, x: L.take_along_dim(x, _I(L, [3, 11, 0]))),
    OpCase("take_along_dim_sort", [((3, 4),)],
           fn=lambda L, x: L.take_along_dim(x, L.argsort(x, dim=1), dim=1)),
    OpCase("take_along_dim_0d", [((),)], fn=lambda L, x: L.take_along_dim(x, _I(L, 0))),
    OpCase("take_along_dim_empty", [((0, 4),), ((3, 4),)],
           fn=lambda L, x: L.take_along_dim(x, _none(L, x.shape[0], 0), dim=1)),
    # ------------------------------------------------ scatter family
    OpCase("scatter", [((3, 4), (2, 3))],
           fn=lambda L, x, s: L.scatter(x, 0, _I(L, [[0, 2, 1], [2, 0, 0]]), s)),
    OpCase("scatter_dim1", [((3, 4), (3, 2))],
           fn=lambda L, x, s: x.scatter(1, _I(L, [[0, 3], [1, 2], [3, 0]]), s)),
    OpCase("scatter_value", [((3, 4),)],
           fn=lambda L, x: x.scatter(1, _I(L, [[0, 3], [1, 2], [3, 0]]), 2.5)),
    OpCase("scatter_0d", [((), ())], fn=lambda L, x, s: x.scatter(0, _I(L, 0), s)),
    OpCase("scatter_empty", [((3, 4), (0, 3)), ((0, 4), (0, 4))],
           fn=lambda L, x, s: x.scatter(0, _none(L, *s.shape), s)),
    # PyTorch has no derivative for scatter(reduce=...) (ndgrad has one): forward only
    OpCase("scatter_reduce_add", [((3, 4), (2, 3))], grad=False,
           fn=lambda L, x, s: x.scatter(0, _I(L, [[0, 2, 1], [0, 2, 0]]), s, reduce="add")),
    OpCase("scatter_add", [((3, 4), (2, 3))],
           fn=lambda L, x, s: L.scatter_add(x, 0, _I(L, [[0, 2, 0], [0, 2, 0]]), s)),
    OpCase("scatter_add_0d", [((), ())], fn=lambda L, x, s: x.scatter_add(0, _I(L, 0), s)),
    OpCase("scatter_add_empty", [((3, 4), (0, 3)), ((0, 4), (0, 4))],
           fn=lambda L, x, s: x.scatter_add(0, _none(L, *s.shape), s)),
    # src larger than index: PyTorch's backward rejects it (ndgrad zero-pads): forward only
    OpCase("scatter_add_big_src", [((3, 4), (3, 4))], grad=False,
           fn=lambda L, x, s: x.scatter_add(1, _I(L, [[0, 0], [3, 1], [2, 2]]), s)),
    OpCase("scatter_reduce", [((3, 4), (2, 3))], domain=(0.5, 2.0),
           kwargs=[dict(reduce=r, include_self=i) for r in ("sum", "prod", "mean", "amax", "amin")
                   for i in (True, False)],
           fn=lambda L, x, s, **k: L.scatter_reduce(x, 0, _I(L, [[0, 2, 0], [0, 2, 1]]), s, **k)),
    OpCase("scatter_reduce_0d", [((), ())], domain=(0.5, 2.0),
           kwargs=[dict(reduce=r, include_self=i) for r in ("sum", "prod", "mean", "amax")
                   for i in (True, False)],
           fn=lambda L, x, s, **k: L.scatter_reduce(x, 0, _I(L, 0), s, **k)),
    OpCase("scatter_reduce_empty", [((3, 4), (0, 3))], domain=(0.5, 2.0),
           kwargs=[dict(reduce="prod"), dict(reduce="amin", include_self=False)],
           fn=lambda L, x, s, **k: L.scatter_reduce(x, 0, _none(L, *s.shape), s, **k)),
    OpCase("index_add", [((4, 3), (2, 3))], kwargs=[dict(), dict(alpha=2.0)],
           fn=lambda L, x, s, **k: L.index_add(x, 0, _I(L, [3, 3]), s, **k)),
    OpCase("index_add_dim1", [((4, 3), (4, 2))],
           fn=lambda L, x, s: x.index_add(1, _I(L, [2, 0]), s)),
    OpCase("index_add_0d", [((), ())], fn=lambda L, x, s: x.index_add(0, _I(L, [0]), s)),
    OpCase("index_add_empty", [((4, 3), (0, 3)), ((0, 3), (0, 3))],
           fn=lambda L, x, s: x.index_add(0, _none(L, 0), s)),
    OpCase("index_copy", [((4, 3), (2, 3))],
           fn=lambda L, x, s: L.index_copy(x, 0, _I(L, [3, 1]), s)),
    OpCase("index_copy_0d", [((), ())], fn=lambda L, x, s: x.index_copy(0, _I(L, [0]), s)),
    OpCase("index_copy_empty", [((4, 3), (0, 3)), ((0, 3), (0, 3))],
           fn=lambda L, x, s: x.index_copy(0, _none(L, 0), s)),
    OpCase("index_fill", [((4, 3),)], kwargs=[dict(dim=0), dict(dim=1)],
           fn=lambda L, x, dim: x.index_fill(dim, _I(L, [0, 2]), -1.5)),
    OpCase("index_fill_tensor", [((4, 3), ())],
           fn=lambda L, x, v: x.index_fill(1, _I(L, [1]), v)),
    OpCase("index_fill_empty", [((0, 3),), ((4, 3),)],
           fn=lambda L, x: x.index_fill(0, _none(L, 0), -1.5)),
    OpCase("masked_fill", [((3, 4),), ((),), ((0, 3),)],
           fn=lambda L, x: L.masked_fill(x, _mask(x), 0.5)),
    OpCase("masked_fill_broadcast", [((3, 4), (4,))],
           fn=lambda L, x, m: x.masked_fill(_mask(m), -2.0)),
    OpCase("masked_fill_tensor", [((3, 4), ())],
           fn=lambda L, x, v: x.masked_fill(_mask(x), v)),
    OpCase("masked_select", [((3, 4),), ((),), ((0, 3),)],
           fn=lambda L, x: L.masked_select(x, _mask(x))),
    OpCase("masked_select_broadcast", [((3, 4), (4,))],
           fn=lambda L, x, m: x.masked_select(_mask(m))),
    OpCase("masked_scatter", [((3, 4), (15,)), ((), (2,)), ((0, 3), (2,))],
           fn=lambda L, x, s: x.masked_scatter(_mask(x), s)),
    OpCase("masked_scatter_2d_src", [((3, 4), (4, 4))],
           fn=lambda L, x, s: L.masked_scatter(x, _mask(x), s)),
    # ------------------------------------------------ sorting, selection
    OpCase("sort", [((3, 4),), ((5,),), ((),), ((0, 3),)],
           kwargs=[dict(), dict(dim=0), dict(descending=True),
                   dict(stable=True, descending=True)],
           fn=lambda L, x, **k: L.sort(x, **k).values),
    OpCase("sort_indices", [((3, 4),)], grad=False, kwargs=[dict(), dict(descending=True)],
           fn=lambda L, x, **k: x.sort(**k)[1]),
    OpCase("sort_stable_ties", [((6,),)], grad=False, int_inputs=(0,),
           kwargs=[dict(), dict(descending=True)],
           fn=lambda L, x, **k: L.sort(x, stable=True, **k).indices),
    OpCase("argsort", [((3, 4),)], grad=False, kwargs=[dict(), dict(dim=0, descending=True)],
           fn=lambda L, x, **k: L.argsort(x, **k)),
    OpCase("topk", [((3, 5),)], kwargs=[dict(k=2), dict(k=3, largest=False), dict(k=1, dim=0)],
           fn=lambda L, x, **k: L.topk(x, **k).values),
    OpCase("topk_0d", [((),)],
           kwargs=[dict(k=1), dict(k=0)], fn=lambda L, x, **k: L.topk(x, **k).values),
    OpCase("topk_empty", [((0, 5),)], kwargs=[dict(k=2), dict(k=0, dim=0)],
           fn=lambda L, x, **k: L.topk(x, **k).values),
    OpCase("topk_indices", [((3, 5),)], grad=False, kwargs=[dict(k=2), dict(k=2, largest=False)],
           fn=lambda L, x, **k: x.topk(**k)[1]),
    OpCase("kthvalue", [((3, 5),)], kwargs=[dict(k=2), dict(k=1, dim=0), dict(k=3, keepdim=True)],
           fn=lambda L, x, **k: L.kthvalue(x, **k).values),
    OpCase("kthvalue_0d", [((),)], kwargs=[dict(k=1), dict(k=1, dim=0, keepdim=True)],
           fn=lambda L, x, **k: L.kthvalue(x, **k).values),
    OpCase("kthvalue_empty", [((0, 5),)], kwargs=[dict(k=2), dict(k=1, keepdim=True)],
           fn=lambda L, x, **k: L.kthvalue(x, **k).values),
    OpCase("kthvalue_indices", [((3, 5),)], grad=False, fn=lambda L, x: x.kthvalue(4)[1]),
    OpCase("nonzero", [((3, 4),), ((),), ((0, 2),)], grad=False, int_inputs=(0,),
           fn=lambda L, x: L.nonzero(x)),
    OpCase("nonzero_tuple", [((3, 4),)], grad=False, int_inputs=(0,),
           fn=lambda L, x: L.stack(L.nonzero(x, as_tuple=True))),
    OpCase("argwhere", [((2, 3, 2),)], grad=False, int_inputs=(0,), fn=lambda L, x: L.argwhere(x)),
    OpCase("unique", [((10,),), ((3, 4),)], grad=False, int_inputs=(0,),
           kwargs=[dict(), dict(return_inverse=True), dict(return_counts=True),
                   dict(return_inverse=True, return_counts=True)],
           fn=lambda L, x, **k: L.unique(x, **k)),
    OpCase("unique_dim", [((5, 2),)], grad=False, int_inputs=(0,), int_range=(0, 2),
           fn=lambda L, x: L.unique(x, dim=0, return_inverse=True, return_counts=True)),
    OpCase("searchsorted", [((5,), (3, 4))], grad=False, kwargs=[dict(), dict(right=True)],
           fn=lambda L, s, v, **k: L.searchsorted(L.sort(s).values, v, **k)),
    OpCase("searchsorted_batched", [((2, 5), (2, 3))], grad=False,
           fn=lambda L, s, v: L.searchsorted(L.sort(s).values, v)),
    OpCase("bucketize", [((3, 4), (5,))], grad=False, kwargs=[dict(), dict(right=True)],
           fn=lambda L, v, b, **k: L.bucketize(v, L.sort(b).values, **k)),
)
