"""Op table: linear algebra (issue 3, part B). Run by tests/test_op_db.py.

Decompositions get well-conditioned inputs: `_wellcond` adds a multiple of the identity to
square matrices; SPD inputs are built inside `fn` as a a^T + I (so the gradient reaches `a`).
Singular vectors / eigenvectors are sign-normalised inside `fn` (their sign is arbitrary) and
symmetric inputs are symmetrised inside `fn` (eigh/cholesky read one triangle only).
"""
import numpy as np

from op_db import OpCase as _OpCase, register


def OpCase(*args, **kwargs):
    """The table's OpCase, comparing grad_fn names with PyTorch unless told otherwise."""
    kwargs.setdefault("check_node_name", True)
    return _OpCase(*args, **kwargs)


def _wellcond(rng, shapes):
    out = []
    for s in shapes:
        a = rng.uniform(-1.0, 1.0, size=s)
        if len(s) >= 2 and s[-1] == s[-2]:
            a = a + 3.0 * np.eye(s[-1])
        out.append(a)
    return out


def _spd(L, a):
    return a @ a.mT + L.eye(a.shape[-1], dtype=a.dtype)


def _sym(a):
    return a + a.mT


def _svd_fn(L, a, **k):
    U, S, Vh = L.linalg.svd(a, full_matrices=False)
    s = U[..., :1, :].sign()
    return L.cat([(U * s).reshape(-1), S.reshape(-1), (Vh * s.mT).reshape(-1)])


def _eigh_fn(L, a):
    w, V = L.linalg.eigh(_sym(a))
    s = V[..., :1, :].sign()
    return L.cat([w.reshape(-1), (V * s).reshape(-1)])


def _qr_fn(L, a, **k):
    Q, R = L.linalg.qr(a, **k)
    return L.cat([Q.reshape(-1), R.reshape(-1)])


# grad_fn names that differ from PyTorch's (PyTorch composes these from other ops)
_OTHER_NODE_NAMES = {"einsum_batch_ellipsis", "einsum_broadcast", "einsum_implicit", "einsum_list",
                     "einsum_mm", "einsum_outer3", "einsum_reduce_only", "einsum_sum_out",
                     "einsum_transpose", "kron", "linalg_matrix_norm", "logdet", "einsum_trace",
                     "einsum_diag", "einsum_0d"}
_CASES = register(
    # ------------------------------------------------ products
    OpCase("matmul", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                      ((2, 2, 3), (3, 4)), ((3,), (2, 3, 4)), ((2, 1, 2, 3), (4, 3, 2)),
                      ((2, 3, 4), (4,)), ((0, 3), (3, 2))]),
    OpCase("matmul_op", [((2, 3), (3, 4))], fn=lambda L, a, b: a @ b),
    OpCase("mm", [((2, 3), (3, 4)), ((1, 3), (3, 1)), ((0, 3), (3, 2)), ((2, 0), (0, 3))]),
    OpCase("mm_noncontig", [((3, 2), (4, 3))], fn=lambda L, a, b: L.mm(a.t(), b.t())),
    OpCase("bmm", [((2, 2, 3), (2, 3, 4)), ((0, 2, 3), (0, 3, 4)), ((2, 2, 0), (2, 0, 4))]),
    OpCase("mv", [((2, 3), (3,)), ((0, 3), (3,)), ((2, 0), (0,))]),
    OpCase("dot", [((3,), (3,)), ((0,), (0,))]),
    OpCase("vdot", [((3,), (3,)), ((0,), (0,))]),
    OpCase("outer", [((3,), (2,)), ((0,), (2,))]),
    OpCase("ger", [((3,), (2,)), ((3,), (0,))]),
    OpCase("addmm", [((2, 4), (2, 3), (3, 4)), ((4,), (2, 3), (3, 4)), ((), (2, 3), (3, 4)),
                     ((0, 4), (0, 3), (3, 4)), ((2, 4), (2, 0), (0, 4))],
           kwargs=[dict(), dict(beta=0.5, alpha=2.0)]),
    OpCase("addmv", [((2,), (2, 3), (3,)), ((), (2, 3), (3,)), ((0,), (0, 3), (3,))],
           kwargs=[dict(), dict(beta=2.0, alpha=-1.0)]),
    OpCase("addbmm", [((2, 4), (3, 2, 3), (3, 3, 4)), ((), (3, 2, 3), (3, 3, 4)),
                      ((2, 4), (0, 2, 3), (0, 3, 4))], kwargs=[dict(), dict(alpha=0.5)]),
    OpCase("baddbmm", [((3, 2, 4), (3, 2, 3), (3, 3, 4)), ((4,), (3, 2, 3), (3, 3, 4)),
                       ((), (3, 2, 3), (3, 3, 4)), ((0, 2, 4), (0, 2, 3), (0, 3, 4))],
           kwargs=[dict(), dict(beta=0.0), dict(beta=2.0, alpha=3.0)]),
    OpCase("einsum_mm", [((2, 3), (3, 4)), ((0, 3), (3, 4)), ((2, 0), (0, 4))],
           fn=lambda L, a, b: L.einsum("ij,jk->ik", a, b)),
    OpCase("einsum_0d", [((), (2, 3))], fn=lambda L, a, b: L.einsum(",ij->ji", a, b)),
    OpCase("einsum_implicit", [((2, 3), (3, 4))], fn=lambda L, a, b: L.einsum("ij,jk", a, b)),
    OpCase("einsum_batch_ellipsis", [((2, 2, 3), (2, 3, 4))],
           fn=lambda L, a, b: L.einsum("...ij,...jk->...ik", a, b)),
    OpCase("einsum_broadcast", [((1, 2, 3), (4, 3))],
           fn=lambda L, a, b: L.einsum("bij,kj->bik", a, b)),
    OpCase("einsum_sum_out", [((2, 3), (3,))], fn=lambda L, a, b: L.einsum("ij,j->", a, b)),
    OpCase("einsum_outer3", [((2,), (3,), (4,))],
           fn=lambda L, a, b, c: L.einsum("i,j,k->ijk", a, b, c)),
    OpCase("einsum_transpose", [((2, 3, 4),)], fn=lambda L, a: L.einsum("abc->cba", a)),
    OpCase("einsum_reduce_only", [((2, 3),)], fn=lambda L, a: L.einsum("ij->j", a)),
    OpCase("einsum_list", [((2, 3), (3,))], fn=lambda L, a, b: L.einsum("ij,j->i", [a, b])),
    OpCase("einsum_trace", [((3, 3),)], fn=lambda L, a: L.einsum("ii->", a)),
    OpCase("einsum_diag", [((3, 3), (3, 2))], fn=lambda L, a, b: L.einsum("ii,ij->ij", a, b)),
    OpCase("tensordot", [((2, 3, 4), (3, 4, 5)), ((2, 0, 4), (0, 4, 5))],
           kwargs=[dict(dims=2), dict(dims=([1, 2], [0, 1])), dict(dims=0)],
           fn=lambda L, a, b, **k: L.tensordot(a, b, **k)),
    OpCase("tensordot_0d", [((), (2, 3))], fn=lambda L, a, b: L.tensordot(a, b, dims=0)),
    OpCase("tensordot_perm", [((2, 3, 4), (4, 2))],
           fn=lambda L, a, b: L.tensordot(a, b, dims=([0, 2], [1, 0]))),
    # PyTorch's kron .view()s its inputs: it raises on some non-contiguous inputs
    OpCase("kron", [((2, 3), (2, 2)), ((2,), (3,)), ((2, 1, 2), (2, 3)), ((), (2, 3)),
                    ((0, 2), (2, 3))], noncontig=False),
    OpCase("trace", [((3, 3),), ((2, 4),), ((0, 3),)]),
    OpCase("diag", [((3,),), ((3, 4),), ((0,),), ((0, 3),)],
           kwargs=[dict(), dict(diagonal=1), dict(diagonal=-1)]),
    OpCase("tril", [((3, 4),), ((2, 3, 3),), ((0, 3),)],
           kwargs=[dict(), dict(diagonal=1), dict(diagonal=-1)]),
    OpCase("triu", [((3, 4),), ((2, 3, 3),), ((2, 0, 0),)],
           kwargs=[dict(), dict(diagonal=2), dict(diagonal=-1)]),
    OpCase("cross", [((4, 3), (4, 3)), ((3, 2), (3, 2)), ((0, 3), (0, 3))],
           kwargs=[dict(dim=0)] * 0 + [dict()],
           fn=lambda L, a, b: L.cross(a, b, dim=0 if a.shape[0] == 3 else 1)),
    OpCase("linalg_cross", [((4, 3), (1, 3)), ((0, 3), (1, 3))],
           fn=lambda L, a, b: L.linalg.cross(a, b)),
    # ------------------------------------------------ linalg
    OpCase("linalg_inv", [((3, 3),), ((2, 3, 3),), ((0, 0),), ((2, 0, 0),)], make_inputs=_wellcond,
           fn=lambda L, a: L.linalg.inv(a)),
    OpCase("inverse", [((3, 3),), ((0, 3, 3),)],
           make_inputs=_wellcond, fn=lambda L, a: L.inverse(a)),
    OpCase("linalg_det", [((3, 3),), ((2, 2, 2),), ((1, 1),), ((0, 0),), ((0, 3, 3),)],
           make_inputs=_wellcond,
           fn=lambda L, a: L.linalg.det(a)),
    OpCase("det", [((3, 3),), ((2, 0, 0),)], make_inputs=_wellcond, fn=lambda L, a: L.det(a)),
    OpCase("slogdet", [((3, 3),), ((2, 3, 3),), ((0, 0),), ((0, 2, 2),)], make_inputs=_wellcond,
           fn=lambda L, a: L.linalg.slogdet(a).logabsdet),
    OpCase("slogdet_sign", [((3, 3),)], make_inputs=_wellcond, grad=False,
           fn=lambda L, a: L.linalg.slogdet(-a).sign),
    OpCase("logdet", [((3, 3),), ((0, 0),)], fn=lambda L, a: L.logdet(_spd(L, a))),
    OpCase("linalg_solve", [((3, 3), (3, 2)), ((3, 3), (3,)), ((2, 3, 3), (2, 3, 4)),
                            ((2, 3, 3), (2, 3)), ((2, 3, 3), (3, 1)), ((0, 0), (0, 2)),
                            ((3, 3), (3, 0)), ((0, 3, 3), (0, 3, 2))],
           make_inputs=_wellcond, fn=lambda L, a, b: L.linalg.solve(a, b)),
    OpCase("linalg_solve_right", [((3, 3), (2, 3))], make_inputs=_wellcond,
           fn=lambda L, a, b: L.linalg.solve(a, b, left=False)),
    OpCase("linalg_cholesky", [((3, 3),), ((2, 3, 3),), ((0, 0),), ((2, 0, 0),)],
           fn=lambda L, a: L.linalg.cholesky(_spd(L, a))),
    OpCase("linalg_cholesky_upper", [((3, 3),)],
           fn=lambda L, a: L.linalg.cholesky(_spd(L, a), upper=True)),
    OpCase("linalg_qr", [((3, 3),), ((4, 3),), ((2, 4, 2),), ((0, 0),), ((3, 0),)],
           make_inputs=_wellcond,
           fn=_qr_fn),
    OpCase("linalg_qr_wide", [((2, 4),), ((2, 3, 5),), ((1, 3),), ((0, 3),)],
           kwargs=[dict(), dict(mode="complete")], fn=_qr_fn),
    OpCase("linalg_qr_complete", [((4, 2),)], grad=False, fn=lambda L, a: _qr_fn(L, a, mode="complete")),
    OpCase("linalg_svd", [((3, 3),), ((4, 2),), ((2, 4),), ((2, 3, 2),), ((3, 0),), ((2, 0, 0),)],
           fn=_svd_fn),
    OpCase("linalg_svd_full", [((4, 2),)], grad=False,
           fn=lambda L, a: L.linalg.svd(a).S),
    OpCase("linalg_svdvals", [((3, 3),), ((4, 2),), ((2, 2, 3),), ((3, 0),), ((0, 0),)],
           fn=lambda L, a: L.linalg.svdvals(a)),
    OpCase("linalg_eigh", [((3, 3),), ((2, 3, 3),), ((0, 0),), ((2, 0, 0),)], fn=_eigh_fn),
    OpCase("linalg_eigvalsh", [((3, 3),), ((2, 2, 2),), ((0, 0),)],
           fn=lambda L, a: L.linalg.eigvalsh(_sym(a))),
    OpCase("linalg_matrix_norm", [((3, 4),), ((2, 3, 3),), ((0, 3),), ((2, 0, 0),)],
           kwargs=[dict(), dict(ord="nuc"), dict(keepdim=True)],
           fn=lambda L, a, **k: L.linalg.matrix_norm(a, **k)),
)
for _c in _CASES:
    if _c.name in _OTHER_NODE_NAMES:
        _c.check_node_name = False
