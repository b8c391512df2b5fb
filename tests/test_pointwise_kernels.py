"""The in-place NumPy kernels behind sigmoid, tanh's backward and relu's backward, against
PyTorch at the edges: extreme and special values, dtypes, 0-d, broadcast and strided inputs."""
import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")

EDGES = [-1000, -100, -88, -20, -1, -0.0, 0.0, 1e-8, 1, 20, 100, 1000, np.inf, -np.inf, np.nan]


@pytest.mark.parametrize("size", [None, 5000])  # (the small-array and the in-place kernel)
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_sigmoid_edges_match_torch(dtype, size):
    x = np.array(EDGES + list(np.linspace(-30, 30, 61)) + [-89, -95, -709, -710, -745],
                 dtype=dtype)
    if size:
        x = np.resize(x, size)
    ours = ndgrad.sigmoid(ndgrad.tensor(x)).numpy()
    theirs = torch.sigmoid(torch.tensor(x)).numpy()
    assert ours.dtype == theirs.dtype
    # (PyTorch flushes float32 denormals to zero; ndgrad keeps them: tiny atol)
    np.testing.assert_allclose(ours, theirs, rtol=2e-3 if dtype == "float16" else 1e-6,
                               atol=1e-37, equal_nan=True)
    if dtype != "float16":  # where exp(-x) overflows PyTorch's sigmoid is exactly 0, as ours
        np.testing.assert_array_equal(ours[theirs == 0], 0)


@pytest.mark.parametrize("make", [
    lambda L: L.tensor(-2.5),                                       # 0-d
    lambda L: L.tensor([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]]).t(),  # strided
    lambda L: L.tensor([0.5, -0.5]).expand(3, 2),                   # 0-stride
    lambda L: L.tensor([3, -1, 0]),                                 # integer: float result
    lambda L: L.tensor([True, False]),
    lambda L: L.tensor([1 + 1j, -2 - 0.5j]),                        # complex
])
def test_sigmoid_layouts_and_dtypes_match_torch(make):
    ours, theirs = ndgrad.sigmoid(make(ndgrad)), torch.sigmoid(make(torch))
    assert str(ours.dtype) == str(theirs.dtype) and tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


@pytest.mark.parametrize("op", ["tanh", "sigmoid", "relu"])
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((), ()), ((3, 1), (3, 4)),
                                    ((4,), (3, 4))])
def test_backward_kernels_with_broadcast_grads_match_torch(op, shapes):
    """The output's gradient may broadcast against the output (through an expand)."""
    r = np.random.default_rng(0)
    g0, x0 = r.standard_normal(shapes[0]), r.standard_normal(shapes[1]) * 3
    res = []
    for lib in (ndgrad, torch):
        x = lib.tensor(x0, requires_grad=True)
        y = getattr(lib, op)(x)
        g = lib.tensor(g0)
        gx, = lib.autograd.grad(y, x, g if shapes[0] == shapes[1] else g.expand(*shapes[1]))
        res.append(gx.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("shapes", [((3, 1), (3, 4)), ((3, 4), (4,)), ((), (2,)), ((2,), ())])
def test_tanh_backward_broadcasts_as_aten(shapes):
    from ndgrad.ops.pointwise import tanh_backward
    r = np.random.default_rng(1)
    g0, y0 = r.standard_normal(shapes[0]), np.tanh(r.standard_normal(shapes[1]))
    ours = tanh_backward(ndgrad.tensor(g0), ndgrad.tensor(y0))
    theirs = torch.ops.aten.tanh_backward(torch.tensor(g0), torch.tensor(y0))
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


# ---------------------------------------------------------------- softmax family on short rows
# A batch of short rows (N >= 32, C <= 16, C-contiguous, reduced along the rows) is reduced as
# the columns of its transposed copy (ops/activation.py _short_rows); the shapes around the
# boundaries and the layouts that keep NumPy's own reduction, against PyTorch.

SHORT_ROWS = [(64, 10), (32, 16), (31, 16), (32, 17), (100, 1), (40, 3)]


@pytest.mark.parametrize("shape", SHORT_ROWS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [1, -1, 0])
def test_softmax_family_short_rows_match_torch(shape, dtype, fn, dim):
    r = np.random.default_rng(sum(shape))
    x0 = (r.standard_normal(shape) * 4).astype(dtype)
    x0[3, 0] = 60.0  # (a dominant entry: the maximum's shift matters)
    g0 = r.standard_normal(shape).astype(dtype)
    out = []
    for L in (ndgrad, torch):
        x = L.tensor(x0, requires_grad=True)
        y = getattr(L.nn.functional, fn)(x, dim)
        y.backward(L.tensor(g0))
        out.append((y.detach().numpy(), x.grad.numpy(), y.is_contiguous()))
    (y, gx, c), (ty, tgx, tc) = out
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-13)
    assert y.dtype == ty.dtype and gx.dtype == tgx.dtype and c == tc
    np.testing.assert_allclose(y, ty, **tol)
    np.testing.assert_allclose(gx, tgx, **tol)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_family_short_rows_special_values(fn):
    x0 = np.zeros((40, 4), "float32")
    x0[0] = [np.inf, 1, 2, 3]
    x0[1] = [-np.inf, 1, 2, 3]
    x0[2] = [np.nan, 1, 2, 3]
    x0[3] = -np.inf
    ours = getattr(ndgrad.nn.functional, fn)(ndgrad.tensor(x0), 1).numpy()
    theirs = getattr(torch.nn.functional, fn)(torch.tensor(x0), 1).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, equal_nan=True)


def test_softmax_family_short_rows_gradcheck():
    x = ndgrad.randn(32, 3, dtype=ndgrad.float64, requires_grad=True)
    for fn in (ndgrad.nn.functional.softmax, ndgrad.nn.functional.log_softmax):
        assert ndgrad.autograd.gradcheck(lambda t: fn(t, 1), (x,))
        assert ndgrad.autograd.gradgradcheck(lambda t: fn(t, 1), (x,))


def test_cross_entropy_batch_of_logits_matches_torch():
    r = np.random.default_rng(7)
    x0 = r.standard_normal((64, 10)).astype("float32")
    y0 = r.integers(0, 10, 64)
    out = []
    for L in (ndgrad, torch):
        x = L.tensor(x0, requires_grad=True)
        loss = L.nn.functional.cross_entropy(x, L.tensor(y0))
        loss.backward()
        out.append((loss.item(), x.grad.numpy()))
    assert abs(out[0][0] - out[1][0]) < 1e-6
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-5, atol=1e-8)


# ---------------------------------------------------------------- relu's backward, any threshold

@pytest.mark.parametrize("size", [None, 5000])  # (np.where, and the select on the bits)
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("threshold", [0, 0.5, -1])
def test_threshold_backward_matches_torch(dtype, threshold, size):
    # PyTorch's select: 0 (never -0) where x <= threshold, whatever the gradient there (inf,
    # nan); the gradient where x > threshold and where x is nan
    x0 = np.array(EDGES + [0.5, -0.5, 0.25], dtype=dtype)
    g0 = np.linspace(-3, 3, x0.size).astype(dtype)
    g0[:3] = [np.nan, np.inf, -np.inf]
    if size:
        x0, g0 = np.resize(x0, size), np.resize(g0[::-1], size)
    ours = ndgrad.ops.pointwise.threshold_backward(ndgrad.tensor(g0), ndgrad.tensor(x0),
                                                   threshold).numpy()
    theirs = torch.ops.aten.threshold_backward(torch.tensor(g0), torch.tensor(x0),
                                               threshold).numpy()
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)
    for L in (ndgrad, torch):  # relu's and F.threshold's backward through the op
        x = L.tensor(x0, requires_grad=True)
        L.nn.functional.threshold(x, threshold, 7.0).backward(L.tensor(g0))
        out = x.grad.numpy()
        if L is ndgrad:
            ours = out
    np.testing.assert_array_equal(ours, out)


# ---------------------------------------------------------------- NaN and inf at the masks
# PyTorch's backward kernels that cut a gradient select (0 where cut, whatever the gradient
# there; the gradient where x is NaN, the comparison being false), and its sign is 0 at NaN:
# products and NumPy's sign gave nan, -0 or 0 instead.

def _value_and_grad(fn, x0, g0):
    """fn(L, x) and x's gradient for the upstream gradient g0, for ndgrad and for PyTorch."""
    res = []
    for L in (ndgrad, torch):
        x = L.tensor(x0, requires_grad=True)
        y = fn(L, x)
        y.backward(L.tensor(g0))
        # (PyTorch's real sgn gives a ZeroTensor gradient: numpy() wants force=True)
        res.append((y.detach().numpy(), x.grad.numpy(force=True)))
    return res


MASKED = {
    "relu": lambda L, x: L.nn.functional.relu(x),
    "relu6": lambda L, x: L.nn.functional.relu6(x),
    "hardtanh": lambda L, x: L.nn.functional.hardtanh(x, -1.5, 1.0),
    "leaky_relu": lambda L, x: L.nn.functional.leaky_relu(x, 0.1),
    "clamp": lambda L, x: L.clamp(x, -1, 1),
    "clamp_min": lambda L, x: L.clamp(x, min=0),
    "elu": lambda L, x: L.nn.functional.elu(x),
    "selu": lambda L, x: L.nn.functional.selu(x),
    "celu": lambda L, x: L.nn.functional.celu(x, 0.5),
    "elu_": lambda L, x: L.nn.functional.elu(x * 1, inplace=True),
    "hardsigmoid": lambda L, x: L.nn.functional.hardsigmoid(x),
    "hardswish": lambda L, x: L.nn.functional.hardswish(x),
    "hardshrink": lambda L, x: L.nn.functional.hardshrink(x, 1.0),
    "softshrink": lambda L, x: L.nn.functional.softshrink(x, 1.0),
    "threshold": lambda L, x: L.nn.functional.threshold(x, 0.1, 5.0),
    "maximum": lambda L, x: L.maximum(x, x.detach().flip(0)),
    "minimum": lambda L, x: L.minimum(x, x.detach().flip(0)),
    "maximum_other": lambda L, x: L.maximum(x.detach().flip(0) * 0.5, x),
    "abs": lambda L, x: L.abs(x),
    "sign": lambda L, x: L.sign(x),
    "sgn": lambda L, x: L.sgn(x),
    "prelu": lambda L, x: L.nn.functional.prelu(x, L.tensor([0.25], dtype=x.dtype)),
}


@pytest.mark.parametrize("name", sorted(MASKED))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_masks_at_nan_and_inf_match_torch(name, dtype):
    x0 = np.array([-2, -1.5, -0.5, -0.0, 0.0, 0.5, 1.0, 2, np.nan, np.inf, -np.inf, 7, -7],
                  dtype=dtype)
    g0 = np.array([np.nan, np.inf, -1, -2, np.nan, 3, -np.inf, 4, 3, np.nan, 2, -np.inf, 5],
                  dtype=dtype)
    (y, gx), (ty, tgx) = _value_and_grad(MASKED[name], x0, g0)
    for a, b in ((y, ty), (gx, tgx)):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-6, equal_nan=True)
    same = ~np.isnan(tgx)  # (a cut gradient is +0; the forward's -0 is NumPy's business)
    np.testing.assert_array_equal(np.signbit(gx[same]), np.signbit(tgx[same]))


# ---------------------------------------------------------------- other formulas at the edges
# Formulas that differed from PyTorch's at special values (inf - inf in logaddexp's, a finite
# gradient of logit outside [0, 1], 0 * nan for the zero gradients of pow(x, 0) and angle, the
# smooth L1 and Huber losses at a NaN difference)

EDGE_FNS = {
    "logit": lambda L, x: L.logit(x),
    "logit_eps": lambda L, x: L.logit(x, 0.1),
    "logaddexp": lambda L, x: L.logaddexp(x, x.detach().flip(0)),
    "logaddexp_other": lambda L, x: L.logaddexp(x.detach().flip(0) * 0.5, x),
    "logaddexp2": lambda L, x: L.logaddexp2(x, x.detach().flip(0)),
    "angle": lambda L, x: L.angle(x),
    "pow0": lambda L, x: x ** 0,
    "pow_t0": lambda L, x: L.pow(x, L.zeros_like(x)),
    "smooth_l1": lambda L, x: L.nn.functional.smooth_l1_loss(x, x.detach().flip(0),
                                                            reduction="none", beta=0.5),
    "smooth_l1_b0": lambda L, x: L.nn.functional.smooth_l1_loss(x, x.detach().flip(0),
                                                               reduction="none", beta=0.0),
    "huber": lambda L, x: L.nn.functional.huber_loss(x, x.detach().flip(0), reduction="none",
                                                     delta=0.5),
    "cumsum": lambda L, x: L.cumsum(x, 0),
}


@pytest.mark.parametrize("name", sorted(EDGE_FNS))
def test_formulas_at_special_values_match_torch(name):
    x0 = np.array([0.0, 1.0, -1.0, 2.0, np.inf, -np.inf, np.nan, 1e-30, -3.0, 0.25, 0.75, 5.0])
    g0 = np.array([1.0, -2.0, 3.0, np.nan, np.inf, 1.0, 2.0, 3.0, -1.0, 0.5, -0.5, 4.0])
    (y, gx), (ty, tgx) = _value_and_grad(EDGE_FNS[name], x0, g0)
    np.testing.assert_allclose(y, ty, rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(gx, tgx, rtol=1e-12, equal_nan=True)


def test_cumsum_backward_keeps_small_terms():
    # a sum minus a cumulative sum loses the small terms next to a large one; PyTorch's
    # reversed cumulative sum does not
    for L in (ndgrad, torch):
        x = L.tensor([1e16, 1.0, 1.0, 3.0], dtype=L.float64, requires_grad=True)
        L.cumsum(x, 0).backward(L.tensor([1e16, 1.0, 1.0, 1.0], dtype=L.float64))
        assert x.grad.tolist()[1:] == [3.0, 2.0, 1.0]


def test_atan2_gradient_at_the_origin_is_zero():
    for L in (ndgrad, torch):
        y = L.tensor([0.0, 1.0], dtype=L.float64, requires_grad=True)
        x = L.tensor([0.0, 0.0], dtype=L.float64, requires_grad=True)
        L.atan2(y, x).sum().backward()
        assert y.grad.tolist() == [0.0, 0.0] and x.grad.tolist() == [0.0, -1.0]


@pytest.mark.parametrize("A0", [
    [[1.0, 2.0], [2.0, 4.0]],
    [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.5]],
    [[[1.0, 2.0], [2.0, 4.0]], [[3.0, 1.0], [0.0, 2.0]]],   # a batch, one singular
])
def test_det_gradient_at_singular_matrices(A0):
    # the cofactor matrix (det is a polynomial): PyTorch's create_graph path gives it; its
    # first-order path gives zeros at an exactly singular matrix (its own gradcheck fails
    # there), ndgrad's raised LinAlgError from inv()
    A = ndgrad.tensor(A0, dtype=ndgrad.float64, requires_grad=True)
    ndgrad.linalg.det(A).sum().backward()
    At = torch.tensor(A0, dtype=torch.float64, requires_grad=True)
    g, = torch.autograd.grad(torch.linalg.det(At).sum(), At, create_graph=True)
    np.testing.assert_allclose(A.grad.numpy(), g.detach().numpy(), atol=1e-12)
    assert ndgrad.autograd.gradcheck(ndgrad.linalg.det,
                                     (ndgrad.tensor(A0, dtype=ndgrad.float64,
                                                    requires_grad=True),))


@pytest.mark.parametrize("name", ["heaviside", "digamma", "sign", "sgn"])
def test_forward_at_special_values_matches_torch(name):
    # heaviside(NaN, v) is 0 (NumPy's heaviside: NaN); digamma(-0) is +inf, digamma(+0) -inf;
    # sign(NaN) is 0 (NumPy's: NaN)
    x0 = np.array([np.nan, 1.0, -0.0, 0.0, 2.5, -2.5, np.inf, -np.inf, -3.0], "float32")
    fns = {"heaviside": lambda L, x: L.heaviside(x, L.tensor(0.5)),
           "digamma": lambda L, x: L.digamma(x), "sign": lambda L, x: L.sign(x),
           "sgn": lambda L, x: L.sgn(x)}
    ours = fns[name](ndgrad, ndgrad.tensor(x0)).numpy()
    theirs = fns[name](torch, torch.tensor(x0)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, equal_nan=True)


# ---------------------------------------------------------------- bounds (Note [Bounds as rows])

_BOUNDED = {
    "relu": lambda L, x: L.relu(x),
    "relu6": lambda L, x: L.nn.functional.relu6(x),
    "hardtanh": lambda L, x: L.nn.functional.hardtanh(x, -0.5, 0.0),
    "clamp": lambda L, x: L.clamp(x, -1.5, 2),
    "clamp_max_neg_zero": lambda L, x: L.clamp(x, max=-0.0),
    "clamp_min_neg_zero": lambda L, x: L.clamp_min(x, -0.0),
    "clamp_max": lambda L, x: L.clamp_max(x, 0.25),
    "clamp_nan": lambda L, x: L.clamp(x, min=float("nan")),
    "elu": lambda L, x: L.nn.functional.elu(x),
    "hardswish": lambda L, x: L.nn.functional.hardswish(x),
}


@pytest.mark.parametrize("size", [7, 3 * (1 << 14), 2 * (1 << 14) + 5])  # (scalar, rows, tail)
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("name", sorted(_BOUNDED))
def test_bounds_match_torch_bit_for_bit(name, dtype, size):
    """Large arrays are compared with a row of the bound, small ones with a 0-d bound: both
    give PyTorch's bits, signed zeros (relu(-0.0) is -0.0) and NaNs included."""
    x = np.random.default_rng(size).standard_normal(size).astype(np.float32) * 4
    x[:7] = [-0.0, 0.0, np.nan, np.inf, -np.inf, -3.0, 6.0]
    ours = _BOUNDED[name](ndgrad, ndgrad.tensor(x).to(getattr(ndgrad, dtype)))
    theirs = _BOUNDED[name](torch, torch.tensor(x).to(getattr(torch, dtype)))
    a, b = ours.float().numpy(), theirs.float().numpy()
    if name in ("elu", "hardswish"):    # (exp's and the division's last bits: NumPy's, not SLEEF)
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=0, equal_nan=True)
        zero = b == 0
        a, b = a[zero], b[zero]
    num = ~np.isnan(b)      # (a NaN's sign: bfloat16's conversions differ, not the bound)
    assert np.array_equal(np.signbit(a[num]), np.signbit(b[num])), "signed zeros"
    np.testing.assert_array_equal(a, b)


def test_bound_rows_cover_layouts_and_out_of_range_bounds():
    from ndgrad.ops.pointwise import bound
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 1 << 14)).astype(np.float32)
    for arr in (x, x.T, x[:, ::2], x.reshape(-1)[5:]):       # C order, transposed, strided, offset
        for limit in (0, -0.0, 0.3, 1 << 30, 1e300, float("inf")):
            with np.errstate(over="ignore"):
                want = np.maximum(np.float32(limit), arr)
            np.testing.assert_array_equal(bound(np.maximum, limit, arr), want)
    r = bound(np.minimum, 0.5, x)
    assert bound(np.maximum, -0.5, r, out=r) is r and r.max() == 0.5 and r.min() == -0.5


# ---------------------------------------------------------------- where on bits (Note [Selecting on bits])

_SELECTS = {
    "where_x_0": lambda L, c, x, y: L.where(c, x, 0),
    "where_0_x": lambda L, c, x, y: L.where(c, 0, x),
    "where_x_neg0": lambda L, c, x, y: L.where(c, x, -0.0 if x.dtype.is_floating_point else 1),
    "where_x_y": lambda L, c, x, y: L.where(c, x, y),
    "where_num_y": lambda L, c, x, y: L.where(c, 2.5 if x.dtype.is_floating_point else 3, y),
    "masked_fill": lambda L, c, x, y: x.masked_fill(c, -7),
    "masked_fill_causal": lambda L, c, x, y: x.masked_fill(c[..., :1, :], float("-inf")
                                                            if x.dtype.is_floating_point else 9),
    "relu_backward": lambda L, c, x, y: L.ops.aten.threshold_backward(x, y, 0),
}


@pytest.mark.parametrize("shape", [(5, 7), (4, 64, 512)])    # (where's own loop; the bits)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint8"])
@pytest.mark.parametrize("name", sorted(_SELECTS))
def test_where_family_matches_torch_bit_for_bit(name, dtype, shape):
    rng = np.random.default_rng(len(shape))
    x = (rng.standard_normal(shape) * 8).astype(np.float32)
    y = (rng.standard_normal(shape) * 8).astype(np.float32)
    if dtype.startswith("float"):
        x.reshape(-1)[:6] = [-0.0, 0.0, np.nan, np.inf, -np.inf, -3.0]
        y.reshape(-1)[:6] = [0.0, -0.0, -np.inf, np.nan, 1.0, -0.0]
    else:
        x, y = np.abs(x), np.abs(y)
    x, y = x.astype(dtype), y.astype(dtype)
    c = rng.standard_normal(shape) > 0
    ours = _SELECTS[name](ndgrad, ndgrad.from_numpy(c), ndgrad.from_numpy(x), ndgrad.from_numpy(y))
    theirs = _SELECTS[name](torch, torch.from_numpy(c), torch.from_numpy(x), torch.from_numpy(y))
    assert str(ours.dtype) == str(theirs.dtype)
    a, b = ours.numpy(), theirs.numpy()
    assert a.shape == b.shape and a.tobytes() == b.tobytes()     # (every bit: zeros' signs too)


def test_where_keeps_bfloat16_with_a_number():
    """A Python number beside a bfloat16 tensor is taken in bfloat16 (it was float64)."""
    x = torch.randn(3, 4).to(torch.bfloat16)
    c = x > 0
    for make in (lambda L, c, x: L.where(c, x, 0.5), lambda L, c, x: L.where(c, -1, x)):
        theirs = make(torch, c, x)
        ours = make(ndgrad, ndgrad.from_numpy(c.numpy()), ndgrad.tensor(x.float().numpy()).to(
            ndgrad.bfloat16))
        assert str(ours.dtype) == str(theirs.dtype) == "torch.bfloat16"
        np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())
