"""Op table: the PyTorch-parity ops added last (pointwise, scans and reductions, shape, linear
algebra). Run by tests/test_op_db.py (forward, gradcheck/gradgradcheck, gradients vs PyTorch)
and tests/test_forward_ad.py. Named tuples, errors and random initialisers: tests/test_ops_more.py.
"""
import warnings

import numpy as np

from op_db import OpCase, register
from op_db_linalg import _wellcond  # well-conditioned (square +3I) samples

INT = ("float64", "float32", "int64")
FLOAT = ("float64", "float32")

U = [((3, 4),), ((),), ((0, 3),), ((2, 1, 3),)]          # unary: matrix, 0-d, empty, 3-d
B = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((), (2, 3)), ((2, 3, 4), (4,)), ((0, 3), (1,))]
SCAN = [((3, 4),), ((5,),), ((),), ((0, 3),)]


def P(name, shapes, **kw):
    """A case whose grad_fn names are also compared with PyTorch's."""
    kw.setdefault("check_node_name", True)
    return OpCase(name, shapes, **kw)


def _small_ints(lo, hi):
    """make_inputs: integer-valued floats in [lo, hi) (ties for mode, cummax, ...)."""
    def make(rng, shapes):
        return [rng.integers(lo, hi, size=s).astype(np.float64) for s in shapes]
    return make


def _with_nans(rng, shapes):
    out = []
    for s in shapes:
        a = rng.uniform(-2, 2, size=s)
        flat = a.reshape(-1)
        flat[::3] = np.nan
        out.append(a)
    return out


def _lower(L, a):
    """A well-conditioned lower-triangular factor made from a (the gradient reaches a)."""
    return a.tril() + 2 * L.eye(a.shape[-1], dtype=a.dtype)


def _spd(L, a):
    return a @ a.mT + L.eye(a.shape[-1], dtype=a.dtype)


def _cholesky_deprecated(L, a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "torch.cholesky is deprecated ..."
        return _spd(L, a).cholesky(**k)


def _quiet_cov(L, x, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "cov(): degrees of freedom is <= 0"
        return L.cov(x, **k)


def _quiet_corrcoef(L, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "cov(): degrees of freedom is <= 0"
        return L.corrcoef(x)


def _triangular_solve(L, b, a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "torch.triangular_solve is deprecated"
        return tuple(L.triangular_solve(b, a, **k))


register(
    # ------------------------------------------------ pointwise
    P("sinc", U, dtypes=INT),
    # (at 0 the second derivative is PyTorch's: the masked formula, not -pi^2/3)
    OpCase("sinc_at_zero", [((4,),)], make_inputs=lambda rng, s: [np.array([0.0, 1.0, -0.5, 2.5])],
           fn=lambda L, x: L.sinc(x), gradgrad=False),
    P("deg2rad", U, dtypes=INT),
    P("rad2deg", U, dtypes=INT),
    P("logaddexp", B, dtypes=FLOAT),
    P("logaddexp2", B, dtypes=FLOAT),
    OpCase("logaddexp_method", [((3, 4), (4,))], fn=lambda L, a, b: a.logaddexp(b)),
    OpCase("signbit", U, grad=False, dtypes=INT,
           make_inputs=lambda rng, s: [np.where(rng.random(x) < 0.3, -0.0, rng.uniform(-2, 2, x))
                                       for x in s]),
    OpCase("heaviside", [((3, 4), (3, 4)), ((3, 4), ()), ((2, 3), (3,))], grad=False, dtypes=INT,
           make_inputs=lambda rng, s: [np.round(rng.uniform(-2, 2, size=x)) for x in s]),
    OpCase("gcd", [((3, 4), (3, 4)), ((3, 1), (4,)), ((), ())], grad=False, int_inputs=(0, 1),
           int_range=(-12, 13)),
    OpCase("lcm", [((3, 4), (3, 4)), ((3, 1), (4,))], grad=False, int_inputs=(0, 1),
           int_range=(-12, 13)),
    P("ldexp", [((3, 4), (3, 4)), ((3, 4), (4,)), ((2,), ()), ((0, 3), (0, 3))], int_inputs=(1,),
      int_range=(0, 4),
      dtypes=FLOAT),
    OpCase("ldexp_float_exponent", [((3, 4), (3, 4))], fn=lambda L, a, b: L.ldexp(a, b),
           domain=[(-2, 2), (-2, 2)]),
    P("frexp", U, dtypes=FLOAT, fn=lambda L, x: L.frexp(x)),
    OpCase("frexp_method_mantissa", [((3, 4),)], fn=lambda L, x: x.frexp().mantissa),
    OpCase("nextafter", [((3, 4), (3, 4)), ((3, 1), ())], grad=False, dtypes=FLOAT),
    P("i0", U, dtypes=INT, domain=(-4, 4)),
    OpCase("i0_large", [((5,),)], fn=lambda L, x: L.i0(x), domain=(-30, 30), rtol=1e-9),
    OpCase("mvlgamma", [((3, 4),), ((),), ((0, 2),)], domain=(1.6, 5.0), args=(3,),
           fn=lambda L, x, p: L.mvlgamma(x, p)),
    OpCase("mvlgamma_method", [((3, 4),)], domain=(0.6, 5.0), args=(1,),
           fn=lambda L, x, p: x.mvlgamma(p)),
    # ------------------------------------------------ scans and reductions
    P("logcumsumexp", SCAN, kwargs=[dict(dim=0), dict(dim=-1)], dtypes=FLOAT),
    # wide range: finite differences are too coarse here, so gradients vs PyTorch only
    OpCase("logcumsumexp_wide", [((6,),)], domain=(-40, 40), args=(0,), gradcheck=False,
           fn=lambda L, x, d: L.logcumsumexp(x, d)),
    P("cummax", SCAN, kwargs=[dict(dim=0), dict(dim=-1)], dtypes=INT,
      fn=lambda L, x, **k: L.cummax(x, **k)),
    P("cummin", SCAN, kwargs=[dict(dim=0), dict(dim=-1)], dtypes=INT,
      fn=lambda L, x, **k: L.cummin(x, **k)),
    # ties (which index wins) are not differentiable points: gradients vs PyTorch only
    OpCase("cummax_ties", [((3, 5),)], kwargs=[dict(dim=0), dict(dim=1)], dtypes=INT,
           make_inputs=_small_ints(0, 3), gradcheck=False, fn=lambda L, x, **k: L.cummax(x, **k)),
    OpCase("cummin_ties", [((3, 5),)], kwargs=[dict(dim=0), dict(dim=1)], dtypes=INT,
           make_inputs=_small_ints(0, 3), gradcheck=False, fn=lambda L, x, **k: L.cummin(x, **k)),
    OpCase("cummax_nan", [((3, 4),)], grad=False, make_inputs=_with_nans,
           fn=lambda L, x: L.cummax(x, 1)),
    OpCase("aminmax", [((3, 4),), ((),), ((2, 3, 2),)], dtypes=INT,
           kwargs=[dict(), dict(dim=0), dict(dim=-1, keepdim=True)],
           fn=lambda L, x, **k: L.aminmax(x, **k)),
    OpCase("aminmax_empty", [((2, 0),)], kwargs=[dict(dim=0)],
           fn=lambda L, x, **k: L.aminmax(x, **k)),
    P("nanmedian", [((3, 4),), ((5,),), ((),)],
      kwargs=[dict(), dict(dim=0), dict(dim=-1, keepdim=True)],
      dtypes=INT, fn=lambda L, x, **k: L.nanmedian(x, **k)),
    OpCase("nanmedian_empty", [((0, 3),)], fn=lambda L, x: L.nanmedian(x, -1)),
    OpCase("nanmedian_empty_all", [((0,),)], fn=lambda L, x: L.nanmedian(x)),
    OpCase("nanmedian_nan", [((3, 4),), ((4, 1),)], make_inputs=_with_nans, gradcheck=False,
           kwargs=[dict(), dict(dim=1)], fn=lambda L, x, **k: L.nanmedian(x, **k)),
    OpCase("nanquantile", [((3, 5),), ((6,),), ((),)],
           kwargs=[dict(q=0.3), dict(q=0.5, dim=0), dict(q=0.75, dim=-1, keepdim=True),
                   dict(q=0.4, dim=0, interpolation="midpoint")],
           fn=lambda L, x, **k: L.nanquantile(x, **k)),
    OpCase("nanquantile_nan", [((3, 5),)], make_inputs=_with_nans, gradcheck=False,
           kwargs=[dict(q=0.3), dict(q=0.6, dim=1), dict(q=0.5, dim=0, interpolation="nearest"),
                   dict(q=0.5, dim=1, interpolation="lower"),
                   dict(q=0.5, dim=1, interpolation="higher")],
           fn=lambda L, x, **k: L.nanquantile(x, **k)),
    P("mode", [((3, 5),), ((6,),), ((),)], kwargs=[dict(), dict(dim=0), dict(keepdim=True)],
      dtypes=INT, make_inputs=_small_ints(0, 3), gradcheck=False,
      fn=lambda L, x, **k: L.mode(x, **k)),
    OpCase("mode_distinct", [((3, 5),), ((),)], kwargs=[dict(), dict(dim=0)],
           fn=lambda L, x, **k: L.mode(x, **k)),
    OpCase("mode_empty", [((0, 3),)], fn=lambda L, x: L.mode(x, 1)),
    OpCase("msort", [((4, 3),), ((5,),), ((0, 2),), ((),)], dtypes=INT),
    # ------------------------------------------------ shape
    OpCase("ravel", U, dtypes=INT),
    OpCase("hsplit", [((3, 4),), ((6,),), ((2, 4, 3),), ((0, 2),)], args=(2,),
           fn=lambda L, x, n: L.hsplit(x, n)),
    OpCase("hsplit_indices", [((3, 4),)], args=([1, 3],), fn=lambda L, x, n: x.hsplit(n)),
    OpCase("vsplit", [((4, 3),), ((2, 4, 3),), ((2, 0),)], args=(2,),
           fn=lambda L, x, n: L.vsplit(x, n)),
    OpCase("dsplit", [((2, 3, 4),), ((0, 1, 2),)], args=([1],), fn=lambda L, x, n: L.dsplit(x, n)),
    OpCase("split_with_sizes", [((5, 3),)], kwargs=[dict(split_sizes=[2, 3]),
                                                     dict(split_sizes=[1, 2], dim=1)],
           fn=lambda L, x, **k: x.split_with_sizes(**k)),
    OpCase("split_with_sizes_empty", [((0, 3),)], kwargs=[dict(split_sizes=[1, 2], dim=1)],
           fn=lambda L, x, **k: x.split_with_sizes(**k)),
    OpCase("unsafe_split", [((5, 3),)], args=(2,), fn=lambda L, x, n: L.unsafe_split(x, n)),
    OpCase("unsafe_split_empty", [((0, 3),)], fn=lambda L, x: L.unsafe_split(x, 2, 1)),
    OpCase("unsafe_chunk", [((5, 3),), ((0, 3),)], args=(2,),
           fn=lambda L, x, n: x.unsafe_chunk(n, 1)),
    OpCase("diagflat", [((3,),), ((2, 2),), ((),), ((0,),)], kwargs=[dict(), dict(offset=1),
                                                           dict(offset=-2)], dtypes=INT),
    OpCase("narrow_copy", [((4, 5),), ((0, 5),)], args=(1, 1, 3), dtypes=INT),
    OpCase("diff_method", [((3, 5),), ((4,),), ((0, 3),)], kwargs=[dict(), dict(n=2, dim=0)],
           fn=lambda L, x, **k: x.diff(**k)),
    OpCase("unique_consecutive", [((8,),), ((3, 4),), ((),)], grad=False, dtypes=INT,
           make_inputs=_small_ints(0, 2),
           kwargs=[dict(), dict(return_inverse=True, return_counts=True),
                   dict(return_counts=True, dim=0)],
           fn=lambda L, x, **k: L.unique_consecutive(x, **k)),
    # ------------------------------------------------ linear algebra
    OpCase("inner", [((3,), (3,)), ((2, 3), (4, 3)), ((), (2, 3)), ((2, 2, 3), (3,)),
                     ((0, 3), (2, 3))]),
    P("addr", [((2, 3), (2,), (3,)), ((3,), (2,), (3,)), ((), (2,), (3,)), ((0, 3), (0,), (3,))],
      kwargs=[dict(), dict(beta=0.5, alpha=2.0), dict(beta=0)]),
    OpCase("matrix_power", [((3, 3),), ((2, 3, 3),), ((0, 2, 2),)], make_inputs=_wellcond,
           kwargs=[dict(n=0), dict(n=1), dict(n=3), dict(n=-2)],
           fn=lambda L, a, **k: L.matrix_power(a, **k)),
    OpCase("linalg_matrix_power", [((3, 3),), ((0, 2, 2),), ((0, 0),)], make_inputs=_wellcond, args=(5,),
           fn=lambda L, a, n: L.linalg.matrix_power(a, n)),
    P("matrix_exp", [((3, 3),), ((2, 2, 2),), ((1, 1),), ((0, 2, 2),), ((0, 0),)],
      domain=(-1.5, 1.5)),
    OpCase("linalg_matrix_exp", [((4, 4),), ((0, 0),), ((0, 3, 3),)], domain=(-3, 3), rtol=1e-7,
           fn=lambda L, a: L.linalg.matrix_exp(a)),
    P("linalg_pinv", [((3, 3),), ((2, 4),), ((4, 2),), ((2, 3, 2),), ((0, 3, 2),), ((2, 0),)],
      make_inputs=_wellcond,
      fn=lambda L, a: L.linalg.pinv(a)),
    OpCase("pinverse", [((3, 2),), ((0, 3),), ((2, 3, 0),)], fn=lambda L, a: a.pinverse()),
    OpCase("linalg_lstsq", [((4, 2), (4, 3)), ((3, 3), (3, 1)), ((2, 4, 3), (2, 4, 2)),
                            ((0, 3, 3), (0, 3, 1))],
           make_inputs=_wellcond, fn=lambda L, a, b: L.linalg.lstsq(a, b).solution),
    OpCase("linalg_lstsq_gelsd", [((4, 2), (4, 3)), ((4, 2), (4,))], make_inputs=_wellcond,
           fn=lambda L, a, b: L.linalg.lstsq(a, b, driver="gelsd")[:2]),
    OpCase("linalg_matrix_rank", [((3, 3),), ((2, 3, 4),)], grad=False,
           fn=lambda L, a: (L.linalg.matrix_rank(a),
                            L.linalg.matrix_rank(a[..., :1] * a[..., :1, :]),
                            L.linalg.matrix_rank(a, atol=0.5, rtol=0.1))),
    OpCase("linalg_cond", [((3, 3),), ((2, 3),), ((0, 3, 3),)], make_inputs=_wellcond,
           fn=lambda L, a: L.linalg.cond(a)),
    # PyTorch's own backward of cond(A, "fro") and of vander fails (an in-place op in its
    # formula): forward vs PyTorch, gradients by gradcheck alone
    OpCase("linalg_cond_fro", [((3, 3),)], make_inputs=_wellcond, grad=False,
           fn=lambda L, a: L.linalg.cond(a, "fro")),
    OpCase("linalg_cond_fro_grad", [((3, 3),)], make_inputs=_wellcond, skip_torch=True,
           fn=lambda L, a: L.linalg.cond(a, "fro")),
    OpCase("linalg_multi_dot", [((3,), (3, 4), (4, 2)), ((2, 3), (3, 4), (4,)), ((2, 3), (3,)),
                                ((0, 3), (3, 2))],
           fn=lambda L, *ts: L.linalg.multi_dot(list(ts))),
    P("linalg_solve_triangular", [((3, 3), (3, 2)), ((2, 3, 3), (3, 1)),
                                 ((0, 3, 3), (0, 3, 2))], make_inputs=_wellcond,
      kwargs=[dict(upper=True), dict(upper=False, unitriangular=True)],
      fn=lambda L, a, b, **k: L.linalg.solve_triangular(a, b, **k)),
    OpCase("linalg_solve_triangular_right", [((3, 3), (2, 3))], make_inputs=_wellcond,
           kwargs=[dict(upper=True, left=False), dict(upper=False, left=False)],
           fn=lambda L, a, b, **k: L.linalg.solve_triangular(a, b, **k)),
    OpCase("triangular_solve", [((3, 2), (3, 3)), ((0, 3, 2), (0, 3, 3))], make_inputs=_wellcond,
           kwargs=[dict(), dict(upper=False, transpose=True)],
           fn=_triangular_solve),
    OpCase("cholesky_solve", [((3, 2), (3, 3)), ((0, 2), (0, 0))], domain=(-0.5, 0.5),
           kwargs=[dict(), dict(upper=True)],
           fn=lambda L, b, a, **k: L.cholesky_solve(
               b, _lower(L, a).mT if k.get("upper") else _lower(L, a), **k)),
    OpCase("cholesky_inverse", [((3, 3),), ((0, 0),), ((0, 2, 2),)], domain=(-0.5, 0.5),
           fn=lambda L, a: L.cholesky_inverse(_lower(L, a))),
    OpCase("cholesky_deprecated", [((3, 3),), ((0, 0),)], kwargs=[dict(), dict(upper=True)],
           fn=_cholesky_deprecated),
    OpCase("trapezoid", [((3, 5),), ((4,),), ((2, 0),)], kwargs=[dict(), dict(dx=0.5, dim=0)],
           dtypes=INT),
    OpCase("trapezoid_x", [((3, 5), (5,)), ((3, 5), (3, 5))],
           fn=lambda L, y, x: L.trapezoid(y, x)),
    OpCase("trapz", [((3, 5), (5,)), ((2, 0), (0,))],
           fn=lambda L, y, x: (L.trapz(y, x), L.trapz(y, dx=2.0))),
    OpCase("cumulative_trapezoid", [((3, 5),), ((4,),), ((2, 0),)],
           kwargs=[dict(), dict(dx=2.0, dim=0)]),
    OpCase("cumulative_trapezoid_x", [((3, 5), (5,))],
           fn=lambda L, y, x: L.cumulative_trapezoid(y, x)),
    OpCase("vander", [((4,),), ((0,),)], kwargs=[dict(), dict(N=3, increasing=True), dict(N=0)],
           dtypes=INT, grad=False),
    OpCase("vander_grad", [((4,),), ((0,),)], kwargs=[dict(), dict(N=3, increasing=True)],
           skip_torch=True, fn=lambda L, x, **k: L.vander(x, **k)),
    OpCase("vander_zeros", [((4,),)], make_inputs=lambda rng, s: [np.array([0.0, 1.5, -1.0, 0.0])],
           skip_torch=True, fn=lambda L, x: L.vander(x, N=4)),
    OpCase("linalg_vander", [((4,),), ((2, 3),), ((0, 3),)], kwargs=[dict(), dict(N=5)],
           fn=lambda L, x, **k: L.linalg.vander(x, **k)),
    # (PyTorch reads a 0-d x as one point; N defaults to 1 there, which it rejects)
    OpCase("linalg_vander_0d", [((),)], kwargs=[dict(N=2), dict(N=5)],
           fn=lambda L, x, **k: L.linalg.vander(x, **k)),
    OpCase("linalg_lu", [((3, 3),), ((2, 4, 4),), ((2, 4),), ((4, 2),), ((0, 0),)], grad=False,
           fn=lambda L, a: L.linalg.lu(a)),
    # (P is not differentiable: the runner pairs grad_outputs with differentiable outputs)
    P("linalg_lu_LU", [((3, 3),), ((2, 4, 4),), ((2, 4),), ((4, 2),), ((0, 3, 3),)],
      fn=lambda L, a: L.linalg.lu(a)[1:]),
    OpCase("linalg_lu_factor", [((3, 3),), ((2, 4),), ((4, 2),)], make_inputs=_wellcond,
           fn=lambda L, a: L.linalg.lu_factor(a)),
    OpCase("linalg_lu_solve", [((3, 3), (3, 2)), ((2, 3, 3), (2, 3, 1))], make_inputs=_wellcond,
           kwargs=[dict(), dict(adjoint=True)],
           fn=lambda L, a, b, **k: L.linalg.lu_solve(*L.linalg.lu_factor(a), b, **k)),
    OpCase("linalg_lu_solve_right", [((3, 3), (2, 3))], make_inputs=_wellcond,
           kwargs=[dict(left=False), dict(left=False, adjoint=True)],
           fn=lambda L, a, b, **k: L.linalg.lu_solve(*L.linalg.lu_factor(a), b, **k)),
    OpCase("cov", [((3, 5),), ((6,),), ((1, 4),), ((2, 0),)], kwargs=[dict(), dict(correction=0)],
           fn=_quiet_cov),
    OpCase("cov_0d", [((),)], kwargs=[dict(correction=0)], fn=lambda L, x, **k: L.cov(x, **k)),
    OpCase("cov_weights", [((3, 5), (5,))], int_inputs=(), domain=[(-2, 2), (0.2, 2)],
           kwargs=[dict(correction=0), dict(correction=1)],
           fn=lambda L, x, w, **k: L.cov(x, aweights=w, fweights=L.tensor([1, 2, 1, 3, 1]), **k)),
    OpCase("corrcoef", [((3, 5),), ((2, 6),), ((0, 3),)]),
    # (0-d: cov has no degree of freedom, so the value and gradient are NaN: vs PyTorch only)
    OpCase("corrcoef_0d", [((),)], gradcheck=False, fn=_quiet_corrcoef),
)
