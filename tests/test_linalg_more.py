"""The rest of torch.linalg: the *_ex variants' `info`, eig/eigvals (complex results, PyTorch's
linalg_eig_backward and its phase error), householder_product, Bunch-Kaufman LDL (LAPACK's
sytrf layout), tensorinv/tensorsolve, vecdot, diagonal, and matrix_norm / vector_norm corner
cases: values, gradients and errors against PyTorch, float64 gradcheck and gradgradcheck."""
import numpy as np
import pytest

import ndgrad
from ndgrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(0)


def _np(t):
    return t.detach().numpy()


def _both(fn, *arrays, grad=False):
    """fn(lib, *tensors) under PyTorch and ndgrad."""
    torch = pytest.importorskip("torch")
    return [fn(lib, *[lib.tensor(a, requires_grad=grad) for a in arrays])
            for lib in (torch, ndgrad)]


def _outcome(lib, fn):
    try:
        r = fn(lib)
    except Exception as e:  # noqa: BLE001 (the comparison is the test)
        return type(e).__name__.lstrip("_"), str(e)
    rs = r if isinstance(r, tuple) else (r,)
    return "ok", [(tuple(x.shape), str(x.dtype), np.round(_np(x), 9).tolist()) for x in rs]


def _same_outcome(fn):
    torch = pytest.importorskip("torch")
    ref, got = _outcome(torch, fn), _outcome(ndgrad, fn)
    assert got == ref


def _sym(n, batch=(), cplx=False, herm=False, zero_diag=False, seed=0):
    r = np.random.default_rng(seed)
    a = r.standard_normal(batch + (n, n))
    if cplx:
        a = a + 1j * r.standard_normal(batch + (n, n))
    a = a + (np.conj(np.swapaxes(a, -1, -2)) if herm else np.swapaxes(a, -1, -2))
    if zero_diag:
        a = a * (1 - np.eye(n))
    return a


# ---------------------------------------------------------------- _ex: info semantics

SINGULAR = np.array([[1., 2.], [2., 4.]])
INDEF = np.array([[1., 2.], [2., 1.]])


def test_ex_variants_return_info_and_lapack_values():
    # a batch with one bad matrix: info != 0 there, values as LAPACK leaves them (infs here)
    A = np.stack([SINGULAR, SINGULAR + np.eye(2)])
    for fn in (lambda L, a: L.linalg.inv_ex(a), lambda L, a: L.linalg.lu_factor_ex(a),
               lambda L, a: L.linalg.solve_ex(a, L.ones(2, 2, dtype=L.float64)),
               lambda L, a: L.linalg.solve_ex(a, L.ones(2, 3, 2, dtype=L.float64), left=False),
               lambda L, a: L.linalg.cholesky_ex(a + 3 * L.eye(2, dtype=L.float64)),
               lambda L, a: L.linalg.cholesky_ex(a[:1] - L.eye(2, dtype=L.float64), upper=True)):
        ref, got = _both(fn, A)
        assert type(got).__name__ == type(ref).__name__ and len(got) == len(ref)
        for r, g in zip(ref, got):
            assert g.dtype == getattr(ndgrad, str(r.dtype).split(".")[1]) and g.shape == r.shape
            np.testing.assert_allclose(_np(g), _np(r), atol=1e-12)
    ref, got = _both(lambda L, a: L.linalg.cholesky_ex(a), INDEF)
    assert got.info.item() == ref.info.item() == 2
    np.testing.assert_allclose(_np(got.L), _np(ref.L))  # the failed pivot left in place
    B = RNG.standard_normal((3, 6, 6))
    P = B @ np.swapaxes(B, -1, -2)
    P[0, 2, 2] -= 50
    P[2, 4, 4] -= 50   # (the columns after a failure: as LAPACK leaves them)
    for upper in (False, True):
        ref, got = _both(lambda L, a: L.linalg.cholesky_ex(a, upper=upper), P)
        assert _np(got.info).tolist() == _np(ref.info).tolist() == [3, 0, 5]
        np.testing.assert_allclose(_np(got.L), _np(ref.L), atol=1e-12)


@pytest.mark.parametrize("fn", [
    lambda L: L.linalg.inv_ex(L.tensor(np.stack([SINGULAR] * 2)), check_errors=True),
    lambda L: L.linalg.inv_ex(L.tensor(SINGULAR), check_errors=True),
    lambda L: L.linalg.solve_ex(L.tensor(SINGULAR), L.ones(2, dtype=L.float64),
                                check_errors=True),
    lambda L: L.linalg.cholesky_ex(L.tensor(INDEF), check_errors=True),
    lambda L: L.linalg.cholesky_ex(L.tensor(np.stack([np.eye(2), INDEF])), check_errors=True),
    lambda L: L.linalg.lu_factor_ex(L.zeros(2, 3, 3), check_errors=True),
    lambda L: L.linalg.lu_factor_ex(L.tensor(SINGULAR), check_errors=True),
    lambda L: L.linalg.lu_factor_ex(L.eye(2), pivot=False),
    lambda L: L.linalg.lu_factor_ex(L.ones(3)),
    lambda L: L.linalg.inv_ex(L.ones(2, 3)),
    lambda L: L.linalg.cholesky_ex(L.ones(2, 3)),
    lambda L: L.linalg.solve_ex(L.ones(2, 3), L.ones(2)),
    lambda L: L.linalg.inv_ex(L.tensor(SINGULAR)),
    lambda L: L.linalg.lu_factor_ex(L.tensor(SINGULAR)),
    lambda L: L.linalg.inv_ex(L.zeros(0, 3, 3)),
    lambda L: L.linalg.cholesky_ex(L.zeros(0, 2, 2)),
    lambda L: L.linalg.solve_ex(L.zeros(0, 2, 2), L.zeros(0, 2)),
])
def test_ex_errors_and_corner_cases_match_pytorch(fn):
    _same_outcome(fn)


def test_ex_gradients():
    A = RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    B = RNG.standard_normal((2, 3, 2))
    S = A @ np.swapaxes(A, -1, -2)
    ref, got = _both(lambda L, a, b, s: [a, b, s, L.linalg.inv_ex(a).inverse.sum()
                                         + L.linalg.solve_ex(a, b).result.pow(2).sum()
                                         + L.linalg.cholesky_ex(s).L.sum()
                                         + L.linalg.lu_factor_ex(a).LU.pow(2).sum()],
                     A, B, S, grad=True)
    for lib, r in zip((None, None), (ref, got)):
        r[3].backward()
    for r, g in zip(ref[:3], got[:3]):
        np.testing.assert_allclose(_np(g.grad), _np(r.grad), atol=1e-10)
    a, b = ndgrad.tensor(A, requires_grad=True), ndgrad.tensor(B, requires_grad=True)
    for f in (lambda a: ndgrad.linalg.inv_ex(a)[0], lambda a: ndgrad.linalg.lu_factor_ex(a)[0],
              lambda a: ndgrad.linalg.cholesky_ex(a @ a.mT, upper=True)[0]):
        assert gradcheck(f, (a,)) and gradgradcheck(f, (a,))
    f = lambda a, b: ndgrad.linalg.solve_ex(a, b, left=True)[0]  # noqa: E731
    assert gradcheck(f, (a, b)) and gradgradcheck(f, (a, b))
    assert not ndgrad.linalg.inv_ex(a).info.requires_grad


# ---------------------------------------------------------------- eig / eigvals

def _phase(V):
    """Each column's phase at its largest entry (LAPACK makes that entry real)."""
    i = np.argmax(np.abs(V), axis=-2)[..., None, :]
    p = np.take_along_axis(V, i, -2)
    return p / np.abs(p)


@pytest.mark.parametrize("cplx", [False, True])
def test_eig_values_and_gradients_match_pytorch(cplx):
    A = RNG.standard_normal((2, 4, 4)) + (1j * RNG.standard_normal((2, 4, 4)) if cplx else 0)
    G = RNG.standard_normal((2, 4, 4))

    def fn(L, a):
        lam, V = L.linalg.eig(a)
        loss = lam.abs().sum() + (V.abs() * L.tensor(G)).sum() + L.linalg.eigvals(a).real.sum()
        loss.backward()
        return lam, V, a.grad
    ref, got = _both(fn, A, grad=True)
    for r, g in zip(ref, got):
        assert str(g.dtype) == str(r.dtype)
        r, g = _np(r), _np(g)
        if r.shape == A.shape and r.dtype.kind == "c":   # eigenvectors: equal up to a phase
            r, g = r / _phase(r), g / _phase(g)
        np.testing.assert_allclose(g, r, atol=1e-10)
    assert got[0].dtype == ndgrad.complex128
    a = ndgrad.tensor(A, requires_grad=True)
    f = lambda a: tuple(t.abs() for t in ndgrad.linalg.eig(a))  # noqa: E731 (phase-invariant)
    assert gradcheck(f, (a,)) and gradgradcheck(f, (a,))
    g = lambda a: ndgrad.linalg.eigvals(a).abs()  # noqa: E731
    assert gradcheck(g, (a,)) and gradgradcheck(g, (a,))
    assert type(ndgrad.linalg.eigvals(a).grad_fn).__name__ == "LinalgEigBackward0"


def test_eig_phase_dependent_loss_raises_pytorch_error():
    A = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))
    msgs = []
    for lib in (pytest.importorskip("torch"), ndgrad):
        a = lib.tensor(A, requires_grad=True)
        with pytest.raises(RuntimeError) as e:
            lib.linalg.eig(a)[1].sum().abs().backward()
        msgs.append(str(e.value).splitlines()[0])
    assert msgs[0] == msgs[1] == ndgrad.ops.linalg.EIG_PHASE_ERROR


@pytest.mark.parametrize("fn", [
    lambda L: L.linalg.eig(L.ones(2, 3)),
    lambda L: L.linalg.eigvals(L.ones(2, 3)),
    lambda L: L.linalg.eig(L.ones(3, 3, dtype=L.int64)),
    lambda L: L.linalg.eig(L.ones(0, 3, 3)),
    lambda L: L.linalg.eig(L.ones(0, 0)),
    lambda L: L.linalg.eigvals(L.ones(2, 0, 0, dtype=L.float64)),
    lambda L: L.linalg.eig(L.tensor([[1., float("nan")], [0., 1.]])),
    lambda L: L.linalg.eigvals(L.tensor([[1., 2.], [3., 4.]], dtype=L.complex128)),
    lambda L: L.linalg.eigvals(L.tensor([[0., -1.], [1., 0.]])),
])
def test_eig_corner_cases_match_pytorch(fn):
    _same_outcome(fn)


# ---------------------------------------------------------------- householder_product

@pytest.mark.parametrize("shape,k,cplx", [((5, 3), 3, False), ((5, 3), 2, True),
                                          ((2, 4, 4), 2, False), ((4, 2), 1, True)])
def test_householder_product_matches_pytorch(shape, k, cplx):
    def arr(s):
        return RNG.standard_normal(s) + (1j * RNG.standard_normal(s) if cplx else 0)
    A, tau, G = arr(shape), arr(shape[:-2] + (k,)), RNG.standard_normal(shape)

    def fn(L, a, t):
        q = L.linalg.householder_product(a, t)
        (q.real * L.tensor(G)).sum().backward()
        return q, a.grad, t.grad
    ref, got = _both(fn, A, tau, grad=True)
    for r, g in zip(ref, got):
        np.testing.assert_allclose(_np(g), _np(r), atol=1e-10)
    a, t = ndgrad.tensor(A, requires_grad=True), ndgrad.tensor(tau, requires_grad=True)
    assert gradcheck(ndgrad.linalg.householder_product, (a, t))
    assert gradgradcheck(ndgrad.linalg.householder_product, (a, t))


@pytest.mark.parametrize("fn", [
    lambda L: L.linalg.householder_product(L.ones(3, 2), L.ones(3)),
    lambda L: L.linalg.householder_product(L.ones(2, 3), L.ones(1)),
    lambda L: L.linalg.householder_product(L.ones(3), L.ones(1)),
    lambda L: L.linalg.householder_product(L.ones(2, 3, 2), L.ones(3, 1)),
    lambda L: L.linalg.householder_product(L.ones(3, 2), L.ones(1, dtype=L.float64)),
    lambda L: L.linalg.householder_product(L.ones(3, 2, dtype=L.int64),
                                           L.ones(1, dtype=L.int64)),
    lambda L: L.linalg.householder_product(L.ones(3, 0), L.ones(0)),
    lambda L: L.linalg.householder_product(L.ones(3, 2), L.ones(0)),
    lambda L: L.linalg.householder_product(L.ones(0, 3, 2), L.ones(0, 2)),
])
def test_householder_product_errors_and_corners_match_pytorch(fn):
    _same_outcome(fn)


# ---------------------------------------------------------------- LDL

LDL_CASES = [(n, c, h, z, s) for n in (1, 2, 3, 5, 7) for c in (False, True)
             for h in ((False, True) if c else (False,)) for z in (False, True) for s in (0, 1)]


@pytest.mark.parametrize("n,cplx,herm,zero_diag,seed", LDL_CASES)
def test_ldl_factor_layout_and_solve_match_pytorch(n, cplx, herm, zero_diag, seed):
    # zero diagonals force 2x2 pivots and row/column interchanges
    A = _sym(n, (2,), cplx, herm, zero_diag, seed)
    B = RNG.standard_normal((2, n, 3)) + (1j * RNG.standard_normal((2, n, 3)) if cplx else 0)

    def fn(L, a, b):
        LD, piv, info = L.linalg.ldl_factor_ex(a, hermitian=herm)
        return LD, piv, info, L.linalg.ldl_solve(LD, piv, b, hermitian=herm)
    ref, got = _both(fn, A, B)
    singular = bool(_np(ref[2]).any())   # (then the solution is LAPACK's infs and nans)
    assert singular == (n == 1 and zero_diag)
    for r, g in zip(ref, got[:3] if singular else got):
        assert str(g.dtype) == str(r.dtype) and g.shape == r.shape
        np.testing.assert_allclose(_np(g), _np(r), atol=1e-9)
    if not singular:
        np.testing.assert_allclose(A @ _np(got[3]), B, atol=1e-8)   # and it solves
    if not singular:
        LD, piv = ndgrad.linalg.ldl_factor(ndgrad.tensor(A), hermitian=herm)
        np.testing.assert_array_equal(_np(LD), _np(got[0]))


def test_ldl_has_no_derivative_as_in_pytorch():
    torch = pytest.importorskip("torch")
    A = _sym(3, zero_diag=True)
    msgs = []
    for lib in (torch, ndgrad):
        a = lib.tensor(A, requires_grad=True)
        LD, piv = lib.linalg.ldl_factor(a)
        assert type(LD.grad_fn).__name__ == "NotImplemented" and not piv.requires_grad
        with pytest.raises(RuntimeError) as e:
            LD.sum().backward()
        b = lib.ones(3, 1, dtype=lib.float64, requires_grad=True)
        x = lib.linalg.ldl_solve(LD.detach(), piv, b)
        with pytest.raises(RuntimeError) as e2:
            x.sum().backward()
        msgs.append((str(e.value).splitlines()[0], str(e2.value).splitlines()[0]))
    assert msgs[1] == msgs[0] == ("derivative for aten::linalg_ldl_factor_ex is not implemented",
                                  "derivative for aten::linalg_ldl_solve is not implemented")


@pytest.mark.parametrize("fn", [
    lambda L: L.linalg.ldl_factor_ex(L.zeros(3, 3)),
    lambda L: L.linalg.ldl_factor_ex(L.zeros(2, 3, 3), check_errors=True),
    lambda L: L.linalg.ldl_factor(L.zeros(3, 3)),
    lambda L: L.linalg.ldl_factor(L.ones(2, 3)),
    lambda L: L.linalg.ldl_factor(L.ones(3)),
    lambda L: L.linalg.ldl_factor(L.ones(3, 3, dtype=L.int64)),
    lambda L: L.linalg.ldl_factor(L.ones(2, 0, 0)),
    lambda L: L.linalg.ldl_factor(L.tensor([[0., 1, 2], [1, 0, 3], [2, 3, 0]]).triu()),
    lambda L: L.linalg.ldl_solve(L.ones(3, 3), L.ones(3, dtype=L.int32), L.ones(4, 1)),
    lambda L: L.linalg.ldl_solve(L.ones(3, 3), L.ones(3, dtype=L.int32), L.ones(3)),
    lambda L: L.linalg.ldl_solve(L.ones(3, 3), L.ones(2, dtype=L.int32), L.ones(3, 1)),
    lambda L: L.linalg.ldl_solve(L.eye(3), L.tensor([1, 2, 3], dtype=L.int32),
                                 L.ones(3, 1, dtype=L.float64)),
    lambda L: L.linalg.ldl_solve(L.eye(3), L.tensor([1, 2, 3], dtype=L.int32),
                                 L.ones(2, 3, 2)),
])
def test_ldl_errors_and_corners_match_pytorch(fn):
    _same_outcome(fn)


# ---------------------------------------------------------------- tensorinv, tensorsolve, ...

A422, A236, A623, A2323 = (RNG.standard_normal(s) for s in ((4, 2, 2), (2, 3, 6), (6, 2, 3),
                                                             (2, 3, 2, 3)))

@pytest.mark.parametrize("fn", [
    lambda L: L.linalg.tensorinv(L.tensor(A422), ind=1),
    lambda L: L.linalg.tensorinv(L.tensor(A236), ind=2),
    lambda L: L.linalg.tensorinv(L.ones(4, 2, 2), ind=0),
    lambda L: L.linalg.tensorinv(L.ones(4, 2, 3), ind=1),
    lambda L: L.linalg.tensorinv(L.zeros(4, 2, 2), ind=1),
    lambda L: L.linalg.tensorsolve(L.tensor(A623), L.ones(6)),
    lambda L: L.linalg.tensorsolve(L.tensor(A2323),
                                   L.ones(2, 3), dims=(0,)),
    lambda L: L.linalg.tensorsolve(L.ones(6, 2, 3), L.ones(5)),
    lambda L: L.linalg.tensorsolve(L.tensor(A623), L.ones(6, dtype=L.float64)),
    lambda L: L.linalg.solve(L.tensor(A623[:, 0]), L.ones(6, 2)),
    lambda L: L.linalg.tensorsolve(L.ones(2, 3, 6), L.ones(2, 3), dims=(0,)),
    lambda L: L.linalg.vecdot(L.tensor(np.arange(6.).reshape(2, 3) + 1j),
                              L.tensor(np.arange(3.) + 2j)),
    lambda L: L.linalg.vecdot(L.ones(2, 3), L.ones(3, 2), dim=0),
    lambda L: L.linalg.vecdot(L.ones(3), L.ones(3, dtype=L.float64)),
    lambda L: L.linalg.vecdot(L.ones(3), L.ones(4)),
    lambda L: L.linalg.vecdot(L.ones(2, 3), L.ones(4)),
    lambda L: L.linalg.vecdot(L.ones(3, dtype=L.int64), L.ones(3, dtype=L.int64)),
    lambda L: L.linalg.diagonal(L.arange(24.).reshape(2, 3, 4)),
    lambda L: L.linalg.diagonal(L.arange(24.).reshape(2, 3, 4), offset=-1, dim1=0, dim2=2),
    lambda L: L.linalg.diagonal(L.arange(24.).reshape(2, 3, 4), dim1=1, dim2=-2),
])
def test_tensor_functions_match_pytorch(fn):
    _same_outcome(fn)


def test_tensor_functions_gradients():
    a = ndgrad.tensor(RNG.standard_normal((4, 2, 2)) + 2 * np.eye(4).reshape(4, 2, 2),
                      requires_grad=True)
    b = ndgrad.tensor(RNG.standard_normal(4), requires_grad=True)
    x = ndgrad.tensor(RNG.standard_normal((2, 3)) + 1j * RNG.standard_normal((2, 3)),
                      requires_grad=True)
    y = ndgrad.tensor(RNG.standard_normal(3) + 1j * RNG.standard_normal(3), requires_grad=True)
    for f, args in ((lambda a: ndgrad.linalg.tensorinv(a, ind=1), (a,)),
                    (ndgrad.linalg.tensorsolve, (a, b)),
                    (ndgrad.linalg.vecdot, (x, y)),
                    (lambda a: ndgrad.linalg.diagonal(a, offset=1), (a,))):
        assert gradcheck(f, args) and gradgradcheck(f, args)
    assert ndgrad.linalg.diagonal(a)._base is a


# ---------------------------------------------------------------- matrix_norm / vector_norm

X3 = RNG.standard_normal((2, 3, 4))
C3 = X3 + 1j * RNG.standard_normal((2, 3, 4))
ORDS = ["fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf")]


@pytest.mark.parametrize("ord", ORDS + [3, 0, "abc"])
def test_matrix_norm_orders_dims_and_dtypes_match_pytorch(ord):
    _same_outcome(lambda L: L.linalg.matrix_norm(L.tensor(X3), ord, 1))
    for dim in ((-2, -1), (0, 2), (2, 0), (1, 1), (0,)):
        for kd in (False, True):
            for arr in (X3, C3):
                _same_outcome(lambda L: L.linalg.matrix_norm(L.tensor(arr), ord, dim, kd))
    for shape in ((0, 3), (3, 0), (2, 0, 0), (0, 2, 2)):
        _same_outcome(lambda L: L.linalg.matrix_norm(L.zeros(shape, dtype=L.float64), ord))
    _same_outcome(lambda L: L.linalg.matrix_norm(L.tensor(X3, dtype=L.float32), ord,
                                                 dtype=L.float64))
    _same_outcome(lambda L: L.linalg.matrix_norm(L.tensor(C3), ord, dtype=L.float64))
    _same_outcome(lambda L: L.linalg.matrix_norm(L.tensor(X3), ord, dtype=L.complex128))
    _same_outcome(lambda L: L.linalg.matrix_norm(L.tensor(X3), ord, dtype=L.float32))
    _same_outcome(lambda L: L.linalg.matrix_norm(L.ones(2, 2, dtype=L.int64), ord))
    _same_outcome(lambda L: L.linalg.matrix_norm(L.ones(2), ord))


@pytest.mark.parametrize("ord", [2, 1, 0, -1, -2, float("inf"), float("-inf"), 3.5, 0.5])
def test_vector_norm_orders_dims_empty_and_dtypes_match_pytorch(ord):
    for dim in (None, (0, 2), -1, (), (1, 1), (0, -3), 3):
        for kd in (False, True):
            for arr in (X3, C3):
                _same_outcome(lambda L: L.linalg.vector_norm(L.tensor(arr), ord, dim, kd))
    for shape in ((0,), (0, 3), (2, 0)):
        for dim in (None, 0, 1, (0, 1), (1, 0)):
            _same_outcome(lambda L: L.linalg.vector_norm(L.zeros(shape), ord, dim))
    _same_outcome(lambda L: L.linalg.vector_norm(L.tensor(X3, dtype=L.float32), ord,
                                                 dtype=L.float64))
    for dt in ("float64", "complex64", "complex128", "int64"):
        _same_outcome(lambda L: L.linalg.vector_norm(L.tensor(C3), ord, dtype=getattr(L, dt)))
    _same_outcome(lambda L: L.linalg.vector_norm(L.tensor(3.0, dtype=L.float64), ord, 0))


def test_norm_errors_match_pytorch():
    _same_outcome(lambda L: L.linalg.vector_norm(L.ones(3), "fro"))
    _same_outcome(lambda L: L.linalg.vector_norm(L.ones(3, dtype=L.int64)))
    _same_outcome(lambda L: L.linalg.vector_norm(L.ones(3), 2, dtype=L.int64))


@pytest.mark.parametrize("ord", ORDS)
def test_matrix_norm_gradients(ord):
    a = ndgrad.tensor(RNG.standard_normal((2, 3, 4)), requires_grad=True)
    c = ndgrad.tensor(C3, requires_grad=True)
    for x in (a, c):
        f = lambda x: ndgrad.linalg.matrix_norm(x, ord, (0, 2))  # noqa: E731
        assert gradcheck(f, (x,))
        if x is a or ord not in ("nuc", 2, -2):  # (complex svd has first-order gradients only)
            assert gradgradcheck(f, (x,))
    ref, got = _both(lambda L, x: (L.linalg.matrix_norm(x, ord).sum().backward(), x.grad)[1],
                     C3, grad=True)
    np.testing.assert_allclose(_np(got), _np(ref), atol=1e-10)


@pytest.mark.parametrize("ord", [2, 1, 3.5, float("inf")])
def test_vector_norm_of_complex_gradients(ord):
    c = ndgrad.tensor(C3, requires_grad=True)
    f = lambda x: ndgrad.linalg.vector_norm(x, ord, (0, 2))  # noqa: E731
    assert gradcheck(f, (c,)) and gradgradcheck(f, (c,))
    ref, got = _both(lambda L, x: (L.linalg.vector_norm(x, ord, -1).sum().backward(), x.grad)[1],
                     C3, grad=True)
    np.testing.assert_allclose(_np(got), _np(ref), atol=1e-10)


# ---------------------------------------------------------------- out=

def test_out_for_the_new_functions():
    A = _sym(3, zero_diag=True)
    for lib in (pytest.importorskip("torch"), ndgrad):
        LD, piv = lib.empty(0, dtype=lib.float64), lib.empty(0, dtype=lib.int32)
        r = lib.linalg.ldl_factor(lib.tensor(A), out=(LD, piv))
        assert r[0] is LD and r[1] is piv and LD.shape == (3, 3)
        o = lib.empty(0, dtype=lib.float64)
        assert lib.linalg.vecdot(lib.tensor(A), lib.tensor(A), out=o) is o
        with pytest.raises(RuntimeError):
            lib.linalg.vecdot(lib.tensor(A), lib.tensor(A), out=lib.empty(0))
        L, V = lib.empty(0, dtype=lib.complex128), lib.empty(0, dtype=lib.complex128)
        assert lib.linalg.eig(lib.tensor(A), out=(L, V))[1] is V
        inv, info = lib.empty(0, dtype=lib.float64), lib.empty(0, dtype=lib.int32)
        assert lib.linalg.inv_ex(lib.tensor(A), out=(inv, info)).info is info
