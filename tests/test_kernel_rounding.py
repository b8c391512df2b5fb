"""Ops whose result PyTorch's CPU kernel rounds in a particular way, rounded that way here too, bit
for bit (the values that seeded programs see):

- a tensor to a number power (ops/pointwise.py, _POW_AS_WRITTEN): x ** 3 is (x * x) * x, x ** -2
  is 1 / (x * x), x ** -0.5 is 1 / sqrt(x), and a float32 tensor to any other power is pow in
  double, rounded once. These used to be NumPy's float32 power, which differs from PyTorch in the
  last bit for 20-35 % of arguments: enough for an optimizer's trajectory to leave PyTorch's
  (torch-optimizer's Adafactor on Beale's function);
- cumsum and cumprod (ops/reduction.py, _CUM_ACC): accumulated in double for float32 (complex
  double for complex64, float for float16), each output rounded once; NumPy's scan in float32
  differed from PyTorch's in ~90 % of a cumsum's outputs;
- a float arange (_creation._arange_float): ATen's kernel by chunks over the intra-op threads,
  pairs of 256-bit vectors and a scalar tail, each value a fused multiply-add in double; NumPy's
  arange differed for ~20 % of the values of arange(0, 100, 0.1);
- rad2deg: the float32 product with 180 / pi rounded to float32 (NumPy's float32 rad2deg takes
  180 / pi computed in float32, and differed in ~80 % of the results);
- float16 mul and div by a Python float, and float16 lerp: computed in float32 (PyTorch's opmath)
  with the number and the difference unrounded, then rounded to float16 once (NumPy rounded the
  number, and lerp's difference, to float16 first: a third of x * 0.1 differed);
- cross (ops/linalg._cross_fwd): each component a1 b2 - a2 b1 with the first product fused,
  fma(a1, b2, -(a2 b1)), as ATen's kernel compiles it (NumPy's two roundings differed in a
  quarter of the components);
- prod over the last dims or a whole tensor (ops/reduction._prod_rows): PyTorch's vectorized
  inner reduction, blocks of four 256-bit vectors multiplied lane by lane, then (v0 v1)(v2 v3),
  the lanes and the tail in order (NumPy's product differed for 84 % of rows of 33);
- average pooling's window sums (ops/nn_ops._window_sums_fwd): a window's elements added one
  after the other from zero, the last dim fastest (a ones convolution's GEMM order differed for
  windows of 4 and more along a dim: 5 % of a 7x7 pool's outputs).
"""
import warnings

import numpy as np
import pytest

import ndgrad

ARGS = np.concatenate([np.random.default_rng(0).uniform(-20, 20, 3000),
                       np.random.default_rng(1).uniform(0, 3, 3000),
                       [0.0, -0.0, 1e-30, -1e-30, 1e30, np.inf, -np.inf, np.nan, 1.0, -1.0]])


def _same(a, b):
    """The same values bit for bit (zeros' signs too); any nan for a nan."""
    nan = np.isnan(a) & np.isnan(b)
    return a.dtype == b.dtype and a.shape == b.shape and bool(
        np.all((a == b) | nan) and np.all((np.signbit(a) == np.signbit(b)) | nan))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_written_forms(dtype):
    x = ARGS.astype(dtype)
    t = ndgrad.tensor(x)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        assert _same((t ** 3).numpy(), (x * x) * x)
        assert _same((t ** 3.0).numpy(), (x * x) * x)
        assert _same(t.pow(-2).numpy(), 1 / (x * x))
        assert _same(ndgrad.pow(t, -0.5).numpy(), 1 / np.sqrt(x))
        assert _same((t ** 2).numpy(), x * x)
        assert _same((t ** -1).numpy(), 1 / x)
        assert _same((t ** 0.5).numpy(), np.sqrt(x))
        wide = np.power(x.astype(np.float64), 1.5).astype(dtype)
        assert _same((t ** 1.5).numpy(), wide)   # (float32: in double, rounded once)
        u = t.clone()
        u.pow_(3)
        assert _same(u.numpy(), (x * x) * x)


def test_the_gradient_uses_the_same_forms():
    # d/dx x ** 3 = 3 x ** 2 (x * x); d/dx x ** -1 = -1 x ** -2 (1 / (x * x)), as PyTorch's
    # pow_backward: grad * (exponent * x ** (exponent - 1))
    x = np.random.default_rng(2).uniform(0.1, 5, 1000).astype(np.float32)
    t = ndgrad.tensor(x, requires_grad=True)
    g, = ndgrad.autograd.grad((t ** 3).sum(), t)
    assert _same(g.numpy(), np.float32(1) * (np.float32(3) * (x * x)))
    g, = ndgrad.autograd.grad((t ** -1).sum(), t)
    assert _same(g.numpy(), np.float32(1) * (np.float32(-1) * (1 / (x * x))))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("exponent", [2, 3, 3.0, -2, -1, -0.5, 0, 1])
def test_bits_as_pytorch(dtype, exponent):
    torch = pytest.importorskip("torch")
    x = ARGS.astype(dtype)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        mine = (ndgrad.tensor(x) ** exponent).numpy()
        theirs = (torch.tensor(x) ** exponent).numpy()
    assert _same(mine, theirs)


def test_other_exponents_near_pytorch():
    # PyTorch's vectorized float32 pow (SLEEF, 1 ulp) differs from pow in double for ~2 % of
    # arguments; NumPy's float32 power differed from PyTorch for ~20 %
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).uniform(0, 20, 20000).astype(np.float32)
    for e in (1.5, 4, -3, 2.5):
        differ = np.mean((ndgrad.tensor(x) ** e).numpy() != (torch.tensor(x) ** e).numpy())
        assert differ < 0.05, (e, differ)


@pytest.mark.parametrize("dtype,wide", [("float32", "float64"), ("complex64", "complex128"),
                                        ("float16", "float32"), ("float64", "float64")])
def test_scans_accumulate_wide(dtype, wide):
    r = np.random.default_rng(4)
    x = r.standard_normal((30, 200)) * 10
    if dtype.startswith("complex"):
        x = x + 1j * r.standard_normal((30, 200))
    x = x.astype(dtype)
    p = (x[:, :40] * 0.05).astype(dtype)
    for dim in (0, 1):
        assert _same_c(ndgrad.tensor(x).cumsum(dim).numpy(),
                       np.cumsum(x, axis=dim, dtype=wide).astype(dtype))
        assert _same_c(ndgrad.tensor(p).cumprod(dim).numpy(),
                       np.cumprod(p, axis=dim, dtype=wide).astype(dtype))
    # an explicit dtype: the input cast to it, then the same wide scan
    assert _same_c(ndgrad.tensor(x.real.astype("float64")).cumsum(1, dtype=ndgrad.float32).numpy(),
                   np.cumsum(x.real.astype("float32"), axis=1, dtype="float64").astype("float32"))


def _same_c(a, b):
    return a.dtype == b.dtype and np.array_equal(a, b)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "complex64", "int32", "bool"])
def test_scans_bits_as_pytorch(dtype):
    torch = pytest.importorskip("torch")
    r = np.random.default_rng(5)
    x = r.standard_normal((30, 100)) * 10
    if dtype == "complex64":
        x = x + 1j * r.standard_normal((30, 100))
    x = x.astype(dtype) if dtype != "bool" else x > 0
    for dim in (0, 1):
        assert _same_c(ndgrad.tensor(x).cumsum(dim).numpy(), torch.tensor(x).cumsum(dim).numpy())
        if dtype != "bool":
            p = x[:, :20] * (0.05 if dtype[0] in "fc" else 1)
            p = p.astype(x.dtype)
            assert _same_c(ndgrad.tensor(p).cumprod(dim).numpy(),
                           torch.tensor(p).cumprod(dim).numpy())


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_arange_bits_as_pytorch(threads, dtype):
    torch = pytest.importorskip("torch")
    before = (torch.get_num_threads(), ndgrad.get_num_threads())
    torch.set_num_threads(threads)
    ndgrad.set_num_threads(threads)
    try:
        r = np.random.default_rng(threads)
        for n in (0, 1, 7, 15, 16, 17, 33, 1000, 32768, 70001):
            start = float(r.uniform(-50, 50))
            step = float(r.choice([1, -1]) * 10 ** r.uniform(-3, 0.5))
            end = start + step * n
            mine = ndgrad.arange(start, end, step, dtype=getattr(ndgrad, dtype)).numpy()
            theirs = torch.arange(start, end, step, dtype=getattr(torch, dtype)).numpy()
            assert _same_c(mine, theirs), (n, start, step)
        assert _same_c(ndgrad.arange(0, 100, 0.1).numpy(), torch.arange(0, 100, 0.1).numpy())
    finally:
        torch.set_num_threads(before[0])
        ndgrad.set_num_threads(before[1])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_rad2deg(dtype):
    x = (np.random.default_rng(6).standard_normal(5000) * 100).astype(dtype)
    mine = ndgrad.tensor(x).rad2deg().numpy()
    if dtype == "float32":
        assert _same_c(mine, x * np.float32(180 / np.pi))
    torch = pytest.importorskip("torch")
    assert _same_c(mine, torch.tensor(x).rad2deg().numpy())


def test_float16_opmath():
    r = np.random.default_rng(7)
    x, y = ((r.standard_normal(5000) * 3).astype(np.float16) for _ in range(2))
    f4 = np.float32
    X, Y = x.astype(f4), y.astype(f4)
    t, u = ndgrad.tensor(x), ndgrad.tensor(y)
    assert _same_c((t * 0.1).numpy(), (X * f4(0.1)).astype(np.float16))
    assert _same_c((0.1 * t).numpy(), (X * f4(0.1)).astype(np.float16))
    assert _same_c((t / 0.3).numpy(), (X / f4(0.3)).astype(np.float16))
    for inplace in (lambda v: v.mul_(0.1), lambda v: v.__imul__(0.1)):
        v = t.clone()
        inplace(v)
        assert _same_c(v.numpy(), (X * f4(0.1)).astype(np.float16))
    v = t.clone()
    v /= 0.3
    assert _same_c(v.numpy(), (X / f4(0.3)).astype(np.float16))
    assert _same_c((t + 0.1).numpy(), x + np.float16(0.1))   # (add rounds the number: PyTorch's)
    # lerp: the float32 lerp of the widened operands, rounded once
    want = ndgrad.lerp(ndgrad.tensor(X), ndgrad.tensor(Y), 0.3).numpy().astype(np.float16)
    assert _same_c(ndgrad.lerp(t, u, 0.3).numpy(), want)
    assert _same_c(t.clone().lerp_(u, 0.3).numpy(), want)


@pytest.mark.parametrize("weight", [0.3, 0.7, "tensor"])
def test_float16_bits_as_pytorch(weight):
    torch = pytest.importorskip("torch")
    r = np.random.default_rng(8)
    x, y, w = ((r.standard_normal(5000) * 3).astype(np.float16) for _ in range(3))
    T, U, N, V = torch.tensor(x), torch.tensor(y), ndgrad.tensor(x), ndgrad.tensor(y)
    tw, nw = (torch.tensor(w), ndgrad.tensor(w)) if weight == "tensor" else (weight, weight)
    assert _same_c(ndgrad.lerp(N, V, nw).numpy(), torch.lerp(T, U, tw).numpy())
    assert _same_c(N.clone().lerp_(V, nw).numpy(), T.clone().lerp_(U, tw).numpy())
    assert _same_c((N * 0.1).numpy(), (T * 0.1).numpy())
    assert _same_c((N / 0.3).numpy(), (T / 0.3).numpy())
    assert _same_c(N.clone().mul_(0.1).numpy(), T.clone().mul_(0.1).numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cross_bits_as_pytorch(dtype):
    torch = pytest.importorskip("torch")
    r = np.random.default_rng(9)
    for shape, dim in [((20000, 3), 1), ((3, 50, 7), 0), ((2, 3, 5), 1), ((3,), 0)]:
        a, b = (r.standard_normal(shape).astype(dtype) for _ in range(2))
        want = torch.linalg.cross(torch.tensor(a), torch.tensor(b), dim=dim).numpy()
        for f in (ndgrad.linalg.cross, ndgrad.cross):
            got = f(ndgrad.tensor(a), ndgrad.tensor(b), dim=dim).numpy()
            assert got.tobytes() == want.tobytes(), (shape, f.__name__)


def test_avg_pool_bits_as_pytorch():
    torch = pytest.importorskip("torch")
    r = np.random.default_rng(10)
    for trial in range(90):
        nd = trial % 3 + 1
        sizes = tuple(int(v) for v in r.integers(3, 12, nd))
        x = (r.standard_normal((2, 3) + sizes) * 10 ** r.uniform(-2, 2, (2, 3) + sizes)
             ).astype([np.float32, np.float64][trial % 2])
        k = tuple(int(r.integers(1, min(sizes) + 1)) for _ in range(nd))
        s = tuple(int(r.integers(1, 4)) for _ in range(nd))
        p = tuple(int(r.integers(0, kk // 2 + 1)) for kk in k)
        ceil, cip = bool(r.integers(0, 2)), bool(r.integers(0, 2))
        name = f"avg_pool{nd}d"
        a, b = (getattr(L.nn.functional, name)(L.tensor(x), k, s, p, ceil, cip).numpy()
                for L in (ndgrad, torch))
        assert a.shape == b.shape and a.tobytes() == b.tobytes(), (name, k, s, p, ceil, cip)
    # float16 and bfloat16: summed and divided in float32, rounded once (PyTorch's opmath)
    h = (r.standard_normal((2, 3, 12, 12)) * 100).astype(np.float32)
    for k in (3, 7):
        for name in ("float16", "bfloat16"):
            a, b = (L.nn.functional.avg_pool2d(L.tensor(h).to(getattr(L, name)), k, 1).float()
                    .numpy() for L in (ndgrad, torch))
            assert a.tobytes() == b.tobytes(), (name, k)
    x = r.standard_normal((2, 4, 9, 9)).astype(np.float32)
    a = ndgrad.nn.functional.avg_pool2d(
        ndgrad.tensor(x).contiguous(memory_format=ndgrad.channels_last), 7, 1)
    b = torch.nn.functional.avg_pool2d(
        torch.tensor(x).contiguous(memory_format=torch.channels_last), 7, 1)
    assert a.numpy().tobytes() == b.numpy().tobytes() and a.stride() == b.stride()


@pytest.mark.parametrize("nthreads", [1, 2, 3])
def test_prod_bits_as_pytorch(nthreads):
    torch = pytest.importorskip("torch")
    before = (ndgrad.get_num_threads(), torch.get_num_threads())
    ndgrad.set_num_threads(nthreads)
    torch.set_num_threads(nthreads)
    try:
        r = np.random.default_rng(11)
        for n in [1, 7, 8, 31, 32, 33, 64, 65, 129, 1000]:
            for R in (1, 5, 64):
                for dt in (np.float32, np.float64):
                    x = (1 + 0.01 * r.standard_normal((R, n))).astype(dt)
                    for f in (lambda t: t.prod(1), lambda t: t.prod(),
                              lambda t: t.prod(-1, keepdim=True), lambda t: t.prod(0)):
                        a, b = f(ndgrad.tensor(x)).numpy(), f(torch.tensor(x)).numpy()
                        assert a.shape == b.shape and a.tobytes() == b.tobytes(), (n, R, dt)
        for n in (40000, 1000001):      # (whole tensors past 32768: a piece a thread)
            x = (1 + 1e-6 * r.standard_normal(n)).astype(np.float32)
            assert ndgrad.tensor(x).prod().numpy().tobytes() == \
                torch.tensor(x).prod().numpy().tobytes(), n
    finally:
        ndgrad.set_num_threads(before[0])
        torch.set_num_threads(before[1])
