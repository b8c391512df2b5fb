"""Op table: strided views, the *_scatter family, put, renorm, index_reduce, dist
(src/ndgrad/ops/tensor_api.py). Run by tests/test_op_db.py (forward, gradcheck/gradgradcheck,
gradients vs PyTorch); resizing, storage and removed methods: tests/test_tensor_api.py."""
import numpy as np

from op_db import OpCase, register


register(
    OpCase("as_strided", [((3, 4),), ((6,),)], fn=lambda L, x: L.as_strided(x, (2, 2), (1, 2), 1),
           noncontig=False),
    OpCase("as_strided_overlap", [((6,),)], fn=lambda L, x: x.as_strided((3, 3), (1, 1)),
           noncontig=False),
    OpCase("as_strided_empty", [((0, 3),), ((),)], fn=lambda L, x: L.as_strided(x, (0,), (1,))),
    OpCase("diagonal_scatter", [((3, 4), (3,)), ((3, 3, 2), (2, 3))],
           fn=lambda L, x, s: L.diagonal_scatter(x, s)),
    OpCase("diagonal_scatter_offset", [((3, 4), (3,)), ((4, 3), (2,))],
           fn=lambda L, x, s: L.diagonal_scatter(x, s, -(x.shape[0] - s.shape[0]) if
                                                 x.shape[0] > x.shape[1] else 1)),
    OpCase("diagonal_scatter_dims", [((2, 3, 3), (3, 2))],
           fn=lambda L, x, s: L.diagonal_scatter(x, s, 0, 0, 2)),
    OpCase("select_scatter", [((3, 4), (4,)), ((2, 3, 4), (2, 4)), ((0, 3), (0,))],
           fn=lambda L, x, s: L.select_scatter(x, s, 1 if x.ndim == 3 else 0, -1)
           if x.shape[0] else L.select_scatter(x, s, 1, 0)),
    OpCase("slice_scatter", [((3, 4), (3, 2)), ((2, 5), (2, 3)), ((0, 4), (0, 2))],
           fn=lambda L, x, s: L.slice_scatter(x, s, 1, 0, None, 2)),
    OpCase("slice_scatter_dim0", [((4, 3), (2, 3))], fn=lambda L, x, s: x.slice_scatter(s, 0, 1, 3)),
    # PyTorch 2.13's own gradcheck fails for as_strided_scatter's input gradient (it returns
    # the gradient at the overwritten positions): gradchecked here, forward vs PyTorch in
    # tests/test_tensor_api.py
    OpCase("as_strided_scatter", [((3, 4), (2, 2)), ((6,), (2, 2))],
           fn=lambda L, x, s: L.as_strided_scatter(x, s, (2, 2), (1, 2), 1), skip_torch=True),
    OpCase("dist", [((3, 4), (3, 4)), ((3, 1), (4,)), ((), ()), ((0, 3), (1, 3))],
           domain=[(-2, 2), (3, 5)]),
    OpCase("dist_p", [((3, 4), (3, 4)), ((2,), (2,))], fn=lambda L, x, y: L.dist(x, y, 3),
           domain=[(-2, 2), (3, 5)]),
    OpCase("dist_inf", [((3, 4), (3, 4))], fn=lambda L, x, y: L.dist(x, y, float("inf")),
           domain=[(-2, 2), (3, 5)]),
    OpCase("renorm", [((3, 4),), ((2, 3, 2),)], fn=lambda L, x: L.renorm(x, 2, 0, 1.5),
           domain=(0.5, 2.0)),
    OpCase("renorm_p1", [((3, 4),)], fn=lambda L, x: x.renorm(1, 1, 2.0), domain=(0.5, 2.0)),
    OpCase("put", [((3, 4), (3,))],
           fn=lambda L, x, s: L.put(x, L.tensor([0, 5, -1]), s)),
    OpCase("put_accumulate", [((3, 4), (3,))],
           fn=lambda L, x, s: x.put(L.tensor([0, 5, 0]), s, accumulate=True)),
    OpCase("index_reduce_prod", [((3, 4), (2, 4))], domain=(0.5, 2.0),
           fn=lambda L, x, s: x.index_reduce(0, L.tensor([0, 2]), s, "prod")),
    OpCase("index_reduce_mean", [((3, 4), (2, 4))],
           fn=lambda L, x, s: x.index_reduce(0, L.tensor([0, 0]), s, "mean")),
    OpCase("index_reduce_amax", [((3, 4), (3, 3))],
           fn=lambda L, x, s: x.index_reduce(1, L.tensor([1, 3, 0]), s, "amax",
                                             include_self=False)),
)
