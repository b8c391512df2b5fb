"""Linear algebra: PyTorch's errors and grad_fn names, decompositions' gradients (first and
second order) against PyTorch on well-conditioned inputs, and the torch.linalg namespace."""
import numpy as np
import pytest

import ndgrad
from ndgrad.autograd import gradcheck, gradgradcheck


def _t(lib, shape, seed=0, shift=0.0):
    a = np.random.default_rng(seed).uniform(-1, 1, size=shape)
    if shift and len(shape) >= 2:
        a = a + shift * np.eye(shape[-1])
    return lib.tensor(a, requires_grad=True)


ERRORS = [
    (lambda L: L.mm(L.ones(2, 3), L.ones(4, 5)), RuntimeError,
     "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
    (lambda L: L.ones(2, 3) @ L.ones(4, 5), RuntimeError,
     "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
    (lambda L: L.matmul(L.ones(2, 2, 3), L.ones(4, 5)), RuntimeError,
     "mat1 and mat2 shapes cannot be multiplied (4x3 and 4x5)"),
    (lambda L: L.ones(3) @ L.ones(4), RuntimeError,
     "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of "
     "elements, but got 3 and 4 elements respectively"),
    (lambda L: L.ones(2, 3) @ L.ones(4), RuntimeError,
     "size mismatch, got input (2), mat (2x3), vec (4)"),
    (lambda L: L.ones(2, 3, 4) @ L.ones(5), RuntimeError,
     "size mismatch, got input (6), mat (6x4), vec (5)"),
    (lambda L: L.ones(3) @ L.ones(4, 2), RuntimeError,
     "mat1 and mat2 shapes cannot be multiplied (1x3 and 4x2)"),
    (lambda L: L.ones(2, 1, 2, 3) @ L.ones(3, 4, 5), RuntimeError,
     "Expected size for first two dimensions of batch2 tensor to be: [6, 3] but got: [6, 4]."),
    (lambda L: L.matmul(L.tensor(1.0), L.ones(2)), RuntimeError,
     "both arguments to matmul need to be at least 1D, but they are 0D and 1D"),
    (lambda L: L.bmm(L.ones(2, 2, 3), L.ones(2, 4, 5)), RuntimeError,
     "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4]."),
    (lambda L: L.bmm(L.ones(2, 3), L.ones(2, 3, 4)), RuntimeError, "batch1 must be a 3D tensor"),
    (lambda L: L.mm(L.ones(3), L.ones(3, 3)), RuntimeError, "self must be a matrix"),
    (lambda L: L.dot(L.ones(3), L.ones(3, 1)), RuntimeError,
     "1D tensors expected, but got 1D and 2D tensors"),
    (lambda L: L.mv(L.ones(2, 3), L.ones(4)), RuntimeError,
     "size mismatch, got input (2), mat (2x3), vec (4)"),
    (lambda L: L.addmm(L.ones(3, 3), L.ones(2, 3), L.ones(3, 4)), RuntimeError,
     "The expanded size of the tensor (4) must match the existing size (3) at non-singleton "
     "dimension 1.  Target sizes: [2, 4].  Tensor sizes: [3, 3]"),
    (lambda L: L.linalg.inv(L.zeros(3, 3)), "LinAlgError",
     "linalg.inv: The diagonal element 1 is zero, the inversion could not be completed because "
     "the input matrix is singular."),
    (lambda L: L.linalg.inv(L.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 5.0]])),
     "LinAlgError", "linalg.inv: The diagonal element 3 is zero, the inversion could not be "
     "completed because the input matrix is singular."),
    (lambda L: L.linalg.inv(L.ones(2, 3)), RuntimeError,
     "linalg.inv: A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda L: L.linalg.inv(L.ones(3, 3, dtype=L.int64)), RuntimeError,
     "linalg.inv: Expected a floating point or complex tensor as input. Got Long"),
    (lambda L: L.linalg.cholesky(-L.eye(3)), "LinAlgError",
     "linalg.cholesky: The factorization could not be completed because the input is not "
     "positive-definite (the leading minor of order 1 is not positive-definite)."),
    (lambda L: L.linalg.solve(L.eye(3), L.ones(4, 2)), RuntimeError,
     "linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 4x2)"),
    (lambda L: L.linalg.solve(L.zeros(3, 3), L.ones(3)), "LinAlgError",
     "torch.linalg.solve: The solver failed because the input matrix is singular."),
    (lambda L: L.linalg.det(L.ones(3)), RuntimeError,
     "linalg.det: The input tensor A must have at least 2 dimensions."),
    (lambda L: L.einsum("ij,jk->ik", L.ones(2, 3)), RuntimeError,
     "einsum(): fewer operands were provided than specified in the equation"),
    (lambda L: L.einsum("ij->ij", L.ones(2, 3, 4)), RuntimeError,
     "einsum(): the number of subscripts in the equation (2) does not match the number of "
     "dimensions (3) for operand 0 and no ellipsis was given"),
    (lambda L: L.trace(L.ones(3)), RuntimeError, "trace: expected a matrix, but got tensor with dim 1"),
    (lambda L: L.linalg.cross(L.ones(2), L.ones(2)), RuntimeError,
     "linalg.cross: inputs dimension -1 must have length 3. Got 2 and 2"),
    (lambda L: L.tensordot(L.ones(2, 3), L.ones(4, 5), dims=1), RuntimeError,
     "contracted dimensions need to match, but first has size 3 in dim -1 and second has size 4 "
     "in dim 0"),
]


def _check_error(lib, i):
    f, exc, msg = ERRORS[i]
    if exc == "LinAlgError":
        exc = lib.linalg.LinAlgError
    with pytest.raises(exc) as info:
        f(lib)
    assert str(info.value).split("\n")[0] == msg
    assert isinstance(info.value, RuntimeError)


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    _check_error(ndgrad, i)


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_match_torch(i):
    torch = pytest.importorskip("torch")
    _check_error(torch, i)


MATMUL_NODES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                ((2, 2, 3), (2, 3, 4)), ((2, 2, 3), (3, 4)), ((3,), (2, 3, 4)), ((2, 3, 4), (4,))]


def test_matmul_grad_fn_names_match_torch():
    torch = pytest.importorskip("torch")
    for sa, sb in MATMUL_NODES:
        a, b = ndgrad.ones(*sa, requires_grad=True), ndgrad.ones(*sb)
        ta, tb = torch.ones(*sa, requires_grad=True), torch.ones(*sb)
        assert type((a @ b).grad_fn).__name__ == type((ta @ tb).grad_fn).__name__, (sa, sb)
    names = {
        "bmm": lambda L, x: L.bmm(x, x), "mm": lambda L, x: L.mm(x[0], x[1]),
        "addmm": lambda L, x: L.addmm(x[0], x[0], x[1]), "baddbmm": lambda L, x: L.baddbmm(x, x, x),
        "trace": lambda L, x: x[0].trace(), "tril": lambda L, x: x.tril(),
        "inv": lambda L, x: L.linalg.inv(x), "det": lambda L, x: L.det(x),
        "cholesky": lambda L, x: L.linalg.cholesky(x), "qr": lambda L, x: L.linalg.qr(x).R,
        "svd": lambda L, x: L.linalg.svd(x).S, "svdvals": lambda L, x: L.linalg.svdvals(x),
        "eigh": lambda L, x: L.linalg.eigh(x).eigenvalues, "solve": lambda L, x: L.linalg.solve(x, x),
        "outer": lambda L, x: L.outer(x[0, 0], x[0, 1]), "diag": lambda L, x: L.diag(x[0]),
    }
    for name, f in names.items():
        x = ndgrad.eye(3).expand(2, 3, 3).clone().requires_grad_()
        tx = torch.eye(3).expand(2, 3, 3).clone().requires_grad_()
        assert type(f(ndgrad, x).grad_fn).__name__ == type(f(torch, tx).grad_fn).__name__, name


def test_named_tuples():
    a = _t(ndgrad, (3, 3), shift=3.0)
    sd = ndgrad.linalg.slogdet(a)
    assert type(sd).__name__ == "linalg_slogdet" and sd.sign.item() == 1.0
    q, r = ndgrad.linalg.qr(a)
    np.testing.assert_allclose((q @ r).detach().numpy(), a.detach().numpy(), atol=1e-12)
    u, s, vh = ndgrad.linalg.svd(a)
    np.testing.assert_allclose((u * s @ vh).detach().numpy(), a.detach().numpy(), atol=1e-12)
    w, v = ndgrad.linalg.eigh(a + a.mT)
    assert ndgrad.linalg.eigh(a + a.mT).eigenvalues is not None and w.shape == (3,)


# ------------------------------------------------------------------ decompositions vs torch

def _sym(L, a):
    return a + a.mT


def _spd(L, a):
    return a @ a.mT + L.eye(a.shape[-1], dtype=a.dtype)


DECOMP = {
    # each returns a sign-invariant scalar-weighted function of the factors
    "inv": lambda L, a: L.linalg.inv(a),
    "det": lambda L, a: L.linalg.det(a),
    "slogdet": lambda L, a: L.linalg.slogdet(a).logabsdet,
    "solve": lambda L, a: L.linalg.solve(a, a[..., :2] * 2),
    "cholesky": lambda L, a: L.linalg.cholesky(_spd(L, a)),
    "qr_Q_R": lambda L, a: L.linalg.qr(a).Q @ L.linalg.qr(a).R.exp(),
    "svd_UUt": lambda L, a: (lambda u: u @ u.mT * 1.5)(L.linalg.svd(a, full_matrices=False).U[..., :2]),
    "svd_S": lambda L, a: L.linalg.svd(a, full_matrices=False).S,
    "svd_VhV": lambda L, a: (lambda v: v.mT @ v)(L.linalg.svd(a, full_matrices=False).Vh[..., :1, :]),
    "svdvals": lambda L, a: L.linalg.svdvals(a),
    "eigh_vals": lambda L, a: L.linalg.eigh(_sym(L, a)).eigenvalues,
    "eigh_proj": lambda L, a: (lambda v: v @ v.mT)(L.linalg.eigh(_sym(L, a)).eigenvectors[..., 1:]),
    "eigvalsh": lambda L, a: L.linalg.eigvalsh(_sym(L, a)),
}


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
@pytest.mark.parametrize("name", sorted(DECOMP))
def test_decomposition_gradients_vs_torch(name, shape):
    torch = pytest.importorskip("torch")
    outs = []
    for lib in (ndgrad, torch):
        a = _t(lib, shape, seed=len(name), shift=2.0)
        y = DECOMP[name](lib, a)
        g = lib.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape)))
        (ga,) = lib.autograd.grad(y, a, g, create_graph=True)
        (gga,) = lib.autograd.grad((ga * ga).sum(), a)   # second order, through the backward
        outs.append([t.detach().numpy() for t in (y, ga, gga)])
    for mine, theirs in zip(*outs):
        np.testing.assert_allclose(mine, theirs, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", ["svd_UUt", "eigh_proj", "qr_Q_R", "cholesky"])
def test_decomposition_gradgradcheck(name):
    a = _t(ndgrad, (3, 3), seed=3, shift=2.0)
    f = lambda a: DECOMP[name](ndgrad, a)  # noqa: E731
    assert gradcheck(f, (a,))
    assert gradgradcheck(f, (a,))


def test_svd_full_matrices_backward_narrows():
    """full_matrices=True on a non-square input: PyTorch 2.13 differentiates through the first
    min(m, n) columns (derivatives.yaml narrows U and Vh; the others do not depend on A); it
    used to raise."""
    torch = pytest.importorskip("torch")
    for shape in ((4, 2), (2, 5), (3, 3)):
        grads = []
        for lib in (ndgrad, torch):
            a = _t(lib, shape)
            u, s, vh = lib.linalg.svd(a)
            (u.abs().sum() + vh.abs().sum() + s.sum()).backward()
            grads.append(a.grad.numpy())
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)


def test_linalg_namespace():
    import ndgrad.linalg as la
    for name in ("inv", "det", "slogdet", "solve", "cholesky", "qr", "svd", "svdvals", "eigh",
                 "eigvalsh", "matrix_norm", "cross", "LinAlgError"):
        assert hasattr(la, name) and getattr(ndgrad.linalg, name) is getattr(la, name)
    a = ndgrad.tensor([[2.0, 0.0], [0.0, 4.0]])
    assert ndgrad.linalg.det(a).item() == 8.0 and ndgrad.det(a).item() == 8.0
    assert ndgrad.linalg.inv(a).tolist() == [[0.5, 0.0], [0.0, 0.25]]
    assert ndgrad.inverse(a).tolist() == [[0.5, 0.0], [0.0, 0.25]]


def test_einsum_repeated_subscripts_take_diagonals():
    torch = pytest.importorskip("torch")
    for eq, shapes in [("ii->", [(3, 3)]), ("ii->i", [(3, 3)]), ("iij,j->i", [(3, 3, 2), (2,)]),
                       ("bii->b", [(2, 3, 3)])]:
        res = []
        for lib in (ndgrad, torch):
            ops = [_t(lib, s_, seed=k) for k, s_ in enumerate(shapes)]
            y = lib.einsum(eq, *ops)
            grads = lib.autograd.grad(y.sum(), ops)
            res.append([y.detach().numpy()] + [g.numpy() for g in grads])
        for a, b in zip(*res):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    a = _t(ndgrad, (3, 3))
    assert gradgradcheck(lambda a: ndgrad.einsum("ii,ij->j", a, a), (a,))


@pytest.mark.parametrize("a,b", [((2, 3, 4), (5, 4, 2)), ((7, 2, 3, 4), (5, 4, 2)),
                                 ((2, 3, 4), (2, 5, 4, 2)), ((2, 2, 3), (3, 4, 5)),
                                 ((2, 3), (4,)), ((3,), (4,)), ((), (3,))])
def test_matmul_shape_errors_match_torch(a, b):
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as ours:
        ndgrad.matmul(ndgrad.ones(a), ndgrad.ones(b))
    with pytest.raises(RuntimeError) as theirs:
        torch.matmul(torch.ones(a), torch.ones(b))
    assert str(ours.value) == str(theirs.value)


# PyTorch refuses mixed dtypes in the matmul family (each kernel with its own message); only a
# product without a contraction (outer, an einsum without summed letters) promotes.
_DT_PAIRS = [("float32", "float64"), ("float64", "float32"), ("int64", "float32"),
             ("float32", "int64"), ("float16", "float32"), ("int32", "int64"),
             ("uint8", "int8"), ("bool", "float32"), ("float32", "bool"),
             ("complex64", "float32"), ("float32", "complex128"), ("int16", "float64")]


def _o(L, shape, dt):
    return L.ones(shape, dtype=getattr(L, dt))


def _nc3(L, dt):  # a non-contiguous 3-d tensor: matmul and linear do not fold it into rows
    return _o(L, (3, 2, 5), dt).transpose(0, 2)


_MIXED_DTYPE_OPS = {
    "matmul_2d": lambda L, a, b: L.matmul(_o(L, (2, 3), a), _o(L, (3, 4), b)),
    "matmul_op_2d": lambda L, a, b: _o(L, (2, 3), a) @ _o(L, (3, 4), b),
    "mm": lambda L, a, b: L.mm(_o(L, (2, 3), a), _o(L, (3, 4), b)),
    "Tensor.mm": lambda L, a, b: _o(L, (2, 3), a).mm(_o(L, (3, 4), b)),
    "matmul_1d": lambda L, a, b: _o(L, (3,), a) @ _o(L, (3,), b),
    "dot": lambda L, a, b: L.dot(_o(L, (3,), a), _o(L, (3,), b)),
    "vdot": lambda L, a, b: L.vdot(_o(L, (3,), a), _o(L, (3,), b)),
    "mv": lambda L, a, b: L.mv(_o(L, (2, 3), a), _o(L, (3,), b)),
    "matmul_2d_1d": lambda L, a, b: _o(L, (2, 3), a) @ _o(L, (3,), b),
    "matmul_1d_2d": lambda L, a, b: _o(L, (3,), a) @ _o(L, (3, 4), b),
    "matmul_3d_2d": lambda L, a, b: _o(L, (2, 2, 3), a) @ _o(L, (3, 4), b),
    "matmul_3d_1d": lambda L, a, b: _o(L, (2, 2, 3), a) @ _o(L, (3,), b),
    "matmul_nc3d_2d": lambda L, a, b: _nc3(L, a) @ _o(L, (3, 4), b),
    "matmul_2d_3d": lambda L, a, b: _o(L, (2, 3), a) @ _o(L, (2, 3, 4), b),
    "matmul_3d_3d": lambda L, a, b: _o(L, (2, 2, 3), a) @ _o(L, (2, 3, 4), b),
    "bmm": lambda L, a, b: L.bmm(_o(L, (2, 2, 3), a), _o(L, (2, 3, 4), b)),
    "baddbmm_input": lambda L, a, b: L.baddbmm(_o(L, (2, 2, 4), a), _o(L, (2, 2, 3), b),
                                               _o(L, (2, 3, 4), b)),
    "baddbmm_batch": lambda L, a, b: L.baddbmm(_o(L, (2, 2, 4), a), _o(L, (2, 2, 3), a),
                                               _o(L, (2, 3, 4), b)),
    "addbmm": lambda L, a, b: L.addbmm(_o(L, (2, 4), a), _o(L, (2, 2, 3), b),
                                       _o(L, (2, 3, 4), a)),
    "addmm_self": lambda L, a, b: L.addmm(_o(L, (2, 4), a), _o(L, (2, 3), b), _o(L, (3, 4), b)),
    "addmm_mat1": lambda L, a, b: L.addmm(_o(L, (2, 4), a), _o(L, (2, 3), b), _o(L, (3, 4), a)),
    "addmv": lambda L, a, b: L.addmv(_o(L, (2,), a), _o(L, (2, 3), a), _o(L, (3,), b)),
    "einsum": lambda L, a, b: L.einsum("ij,jk->ik", _o(L, (2, 3), a), _o(L, (3, 4), b)),
    "einsum_3": lambda L, a, b: L.einsum("ij,jk,kl->il", _o(L, (2, 3), a), _o(L, (3, 4), a),
                                         _o(L, (4, 2), b)),
    "einsum_mul": lambda L, a, b: L.einsum("ij,ij->ij", _o(L, (2, 3), a), _o(L, (2, 3), b)),
    "tensordot": lambda L, a, b: L.tensordot(_o(L, (2, 3), a), _o(L, (3, 4), b), dims=1),
    "outer": lambda L, a, b: L.outer(_o(L, (3,), a), _o(L, (2,), b)),
    "linear": lambda L, a, b: L.nn.functional.linear(_o(L, (2, 3), a), _o(L, (4, 3), b)),
    "linear_3d": lambda L, a, b: L.nn.functional.linear(_o(L, (5, 2, 3), a), _o(L, (4, 3), b)),
    "linear_bias": lambda L, a, b: L.nn.functional.linear(_o(L, (2, 3), a), _o(L, (4, 3), a),
                                                          _o(L, (4,), b)),
    "linear_bias_w": lambda L, a, b: L.nn.functional.linear(_o(L, (2, 3), a), _o(L, (4, 3), b),
                                                            _o(L, (4,), b)),
    "linear_nc3d_bias": lambda L, a, b: L.nn.functional.linear(_nc3(L, a), _o(L, (4, 3), b),
                                                               _o(L, (4,), b)),
    "conv1d": lambda L, a, b: L.nn.functional.conv1d(_o(L, (1, 2, 5), a), _o(L, (3, 2, 2), b)),
    "conv2d": lambda L, a, b: L.nn.functional.conv2d(_o(L, (1, 2, 5, 5), a),
                                                     _o(L, (3, 2, 2, 2), b)),
    "conv2d_bias": lambda L, a, b: L.nn.functional.conv2d(
        _o(L, (1, 2, 5, 5), a), _o(L, (3, 2, 2, 2), a), _o(L, (3,), b)),
    "conv_transpose2d": lambda L, a, b: L.nn.functional.conv_transpose2d(
        _o(L, (1, 2, 5, 5), a), _o(L, (2, 3, 2, 2), b)),
    # the shape errors come first, except for dot, addmm and a bias
    "mm_shape": lambda L, a, b: L.mm(_o(L, (2, 3), a), _o(L, (4, 4), b)),
    "mv_shape": lambda L, a, b: L.mv(_o(L, (2, 3), a), _o(L, (4,), b)),
    "dot_shape": lambda L, a, b: L.dot(_o(L, (3,), a), _o(L, (4,), b)),
    "addmm_shape": lambda L, a, b: L.addmm(_o(L, (2, 4), a), _o(L, (2, 3), b), _o(L, (4, 4), b)),
    "linear_shape": lambda L, a, b: L.nn.functional.linear(_o(L, (2, 3), a), _o(L, (4, 4), b)),
    "linear_bias_shape": lambda L, a, b: L.nn.functional.linear(
        _o(L, (2, 3), a), _o(L, (4, 4), a), _o(L, (4,), b)),
}


def _outcome(fn, L, a, b):
    try:
        return "ok", str(fn(L, a, b).dtype).split(".")[-1]
    except Exception as e:  # noqa: BLE001 - the exception is the result compared
        return type(e).__name__, str(e).split("\n")[0]


@pytest.mark.filterwarnings("ignore:Casting complex values")  # torch's baddbmm, one pair
@pytest.mark.parametrize("name", list(_MIXED_DTYPE_OPS))
def test_mixed_dtype_errors_match_torch(name):
    torch = pytest.importorskip("torch")
    fn = _MIXED_DTYPE_OPS[name]
    for a, b in _DT_PAIRS:
        assert _outcome(fn, ndgrad, a, b) == _outcome(fn, torch, a, b), (name, a, b)


def test_mixed_dtype_inplace_refused_before_writing():
    torch = pytest.importorskip("torch")
    calls = [lambda L, x: x.addmm_(_o(L, (2, 3), "float64"), _o(L, (3, 4), "float64")),
             lambda L, x: x.addmm_(_o(L, (2, 3), "float32"), _o(L, (3, 4), "float64"))]
    for call in calls:
        res = []
        for L in (ndgrad, torch):
            x = L.full((2, 4), 7.0)
            v = x._version
            with pytest.raises(RuntimeError) as e:
                call(L, x)
            assert x._version == v and bool((x == 7).all())
            res.append(str(e.value).split("\n")[0])
        assert res[0] == res[1]


@pytest.mark.parametrize("dts", [d for d in __import__("itertools").product(
    ("float32", "float64"), repeat=3) if len(set(d)) > 1])
@pytest.mark.parametrize("shapes", [((2, 3), (3, 4), (4, 2)), ((2, 3), (3, 40), (40, 2)),
                                    ((6, 3), (3, 2), (2, 5))])
def test_einsum_mixed_dtype_pairs_as_atens(shapes, dts):
    """Which pair ATen contracts first (opt_einsum's path where it is installed, else left to
    right) and which operand bmm sees on the left decide PyTorch's message."""
    torch = pytest.importorskip("torch")
    outcomes = []
    for L in (ndgrad, torch):
        ops = [L.ones(s, dtype=getattr(L, d)) for s, d in zip(shapes, dts)]
        try:
            outcomes.append(str(L.einsum("ij,jk,kl->il", *ops).dtype))
        except RuntimeError as e:
            outcomes.append(str(e))
    assert outcomes[0] == outcomes[1]


def test_batched_matrix_times_matrix_is_one_gemm_over_the_rows():
    """(..., M, K) @ (K, N) folds the batch dims into the rows, one GEMM as PyTorch's matmul
    folds them (NumPy would run one GEMM a matrix: 2.6x slower for nanoGPT's head): the result
    is the 2-d product's, bit for bit, with the batch shape, and so is the matrix's gradient
    (one GEMM over all the rows, not one a matrix and their sum); a layout that does not fold
    (transposed) and empty operands give NumPy's values."""
    r = np.random.default_rng(5)
    a = (r.standard_normal((16, 64, 128)) * 3).astype(np.float32)   # (NumPy's matrix-by-matrix
    b = (r.standard_normal((128, 65)) * 3).astype(np.float32)       # GEMMs differ in ~1 % bits)
    x, w = ndgrad.tensor(a, requires_grad=True), ndgrad.tensor(b, requires_grad=True)
    y = x @ w
    np.testing.assert_array_equal(y.detach().numpy(), (a.reshape(-1, 128) @ b).reshape(16, 64, 65))
    g = r.standard_normal(y.shape).astype(np.float32)
    y.backward(ndgrad.tensor(g))    # the matrix's gradient: one GEMM over all rows, not a sum
    np.testing.assert_array_equal(w.grad.numpy(), a.reshape(-1, 128).T @ g.reshape(-1, 65))
    t = a.transpose(1, 0, 2)
    np.testing.assert_allclose((ndgrad.tensor(t) @ ndgrad.tensor(b)).numpy(), np.matmul(t, b),
                               rtol=1e-5, atol=1e-4)
    for sa, sb in (((2, 0, 3), (3, 4)), ((2, 3, 0), (0, 4))):
        z = ndgrad.zeros(sa) @ ndgrad.zeros(sb)
        assert z.shape == sa[:-1] + sb[-1:] and not z.numpy().any()
    x = ndgrad.tensor(r.standard_normal((2, 3, 4)), requires_grad=True)
    w = ndgrad.tensor(r.standard_normal((4, 5)), requires_grad=True)
    assert ndgrad.autograd.gradcheck(lambda p, q: p @ q, (x, w))
    assert ndgrad.autograd.gradgradcheck(lambda p, q: p @ q, (x, w))
