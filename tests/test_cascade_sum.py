"""float32/float64 (and complex64/complex128) sum and mean as PyTorch's CPU kernel computes
them, bit for bit: its cascade (ops/_cascade.py, Note [cascade sum]) over rows, columns, middle
dims and whole tensors, on one or more threads."""
import numpy as np
import pytest

import ndgrad
from ndgrad.ops import _cascade, _parallel


def _torch():
    torch = pytest.importorskip("torch")
    if torch.backends.cpu.get_cpu_capability() not in ("AVX2", "AVX512"):
        pytest.skip("PyTorch's sum kernel with 256-bit vectors (its AVX2 build)")
    return torch


LENGTHS = [1, 2, 3, 5, 7, 8, 9, 15, 16, 31, 32, 33, 63, 64, 100, 127, 128, 129, 255, 256,
           511, 512, 513, 1000, 1023, 1024, 4095, 4096, 4097, 5000, 65535, 65536, 70000,
           262144, 300001, 1048577]

SHAPES = [((4, 49), (1,)), ((8, 64, 7, 7), (2, 3)), ((3, 1000), (1,)), ((2, 5, 3), (2,)),
          ((7, 33), (1,)), ((1000, 3), (0,)), ((100, 7), (0,)), ((50, 64), (0,)),
          ((50, 70), (0,)), ((513, 45), (0,)), ((5000, 40), (0,)), ((20, 8, 9), (0, 1)),
          ((64, 10), (0,)), ((128, 512), (0,)), ((3, 300000), (1,)), ((300000, 2), (0,)),
          ((100000, 33), (0,)), ((5, 6, 7), (1,)), ((4, 300, 40), (1,)), ((6, 17, 5, 3), (1, 2)),
          ((2, 3, 4), (0, 1, 2)), ((9, 1, 12), (0, 1))]


def _data(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 10.0 ** rng.uniform(-2, 2, shape)
    if dtype.startswith("complex"):
        x = x + 1j * rng.standard_normal(shape) * 10.0 ** rng.uniform(-2, 2, shape)
    return x.astype(dtype)


@pytest.fixture
def threads():
    torch = _torch()
    before = (_parallel.threads(), torch.get_num_threads())
    yield lambda n: (_parallel.set_threads(n), torch.set_num_threads(n))
    _parallel.set_threads(before[0])
    torch.set_num_threads(before[1])


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("nthreads", [1, 2, 3])
def test_whole_tensor_sums(dtype, nthreads, threads):
    torch = _torch()
    if dtype == "complex128" and nthreads > 2:
        # not followed: PyTorch's complex128 whole-tensor sums on 3 and more threads differ
        # from one piece a thread for some lengths (70000, 1048577); 1 and 2 threads match
        pytest.skip("complex128 on 3+ threads: PyTorch's split not followed")
    threads(nthreads)
    for i, n in enumerate(LENGTHS):
        x = _data((n,), dtype, i)
        want = torch.from_numpy(x).sum().numpy()
        got = ndgrad.from_numpy(x).sum().numpy()
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got == want, n


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("shape, dim", SHAPES)
def test_sums_and_means_over_dims(shape, dim, dtype, threads):
    torch = _torch()
    threads(2)
    x = _data(shape, dtype, len(shape))
    assert _cascade.sum(x, dim) is not None      # (each of these follows PyTorch's loop)
    for op in ("sum", "mean"):
        for keepdim in (False, True):
            want = getattr(torch.from_numpy(x), op)(dim, keepdim=keepdim).numpy()
            got = getattr(ndgrad.from_numpy(x), op)(dim, keepdim=keepdim).numpy()
            assert got.shape == want.shape
            assert (got == want).all(), (op, keepdim, int((got != want).sum()))


def test_layouts_not_followed_fall_back_to_numpy():
    x = _data((4, 5, 6), "complex64", 0)
    assert _cascade.sum(x, (0, 2)) is None                 # complex, reduced dims apart
    assert _cascade.sum(np.asfortranarray(x), (0,)) is None
    got = ndgrad.from_numpy(x).sum((0, 2)).numpy()
    np.testing.assert_allclose(got, x.sum((0, 2)), rtol=1e-5)


APART = [((4, 6, 13, 11), (0, 2)), ((4, 6, 13, 11), (0, 3)), ((4, 6, 13, 11), (1, 3)),
         ((4, 6, 13, 11), (0, 2, 3)), ((4, 6, 13, 11), (0, 1, 3)), ((32, 64, 16, 16), (0, 2, 3)),
         ((2, 3, 4, 5, 6), (0, 2, 4)), ((2, 3, 4, 5, 6), (1, 3)), ((8, 1, 33, 7), (0, 2)),
         ((3, 40, 2, 300), (0, 2)), ((3, 40, 2, 300), (1, 3)), ((9, 2, 1000), (0, 2)),
         ((64, 32, 100), (0, 2)), ((5, 7, 3), (0, 2))]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("nthreads", [1, 2])
def test_reduced_dims_apart(dtype, nthreads, threads):
    # TensorIterator puts the reduced dims first: the rows of the innermost reduced run, summed
    # (vectorized when contiguous, the plain row_sum when strided), added into the output in
    # the C order of the other reduced dims (ops/_cascade._apart). NumPy's pairwise order
    # differed for 477 of 680 such sums and means tried
    torch = _torch()
    threads(nthreads)
    for i, (shape, dim) in enumerate(APART):
        x = _data(shape, dtype, i)
        assert _cascade.sum(x, dim) is not None
        for op in ("sum", "mean"):
            want = getattr(torch.from_numpy(x), op)(dim).numpy()
            got = getattr(ndgrad.from_numpy(x), op)(dim).numpy()
            assert got.shape == want.shape
            assert got.tobytes() == want.tobytes(), (shape, dim, op)


def test_signed_zeros_and_specials():
    torch = _torch()
    for vals in ([-0.0] * 20, [-0.0, 0.0], [np.inf, 1.0, -np.inf] * 5, [np.nan] + [1.0] * 40,
                 [3e38, 3e38, -3e38] * 4):
        x = np.array(vals, np.float32)
        want = torch.from_numpy(x).sum().numpy()
        got = ndgrad.from_numpy(x).sum().numpy()
        assert (np.isnan(got) and np.isnan(want)) or (
            got == want and np.signbit(got) == np.signbit(want)), vals


POOLS = [((8, 64, 7, 7), (1, 1)), ((2, 16, 13, 17), (5, 7)), ((2, 16, 32, 32), (8, 8)),
         ((2, 3, 224, 224), (7, 7)), ((3, 9, 7), (2, 3)), ((1, 2, 4, 6), (8, 9)),
         ((2, 3, 10, 10), (10, 3)), ((0, 3, 5, 5), (2, 2))]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("shape, size", POOLS)
def test_adaptive_avg_pool_windows_in_pytorchs_order(shape, size, dtype):
    # each window a running sum in row-major order, divided by its height, then its width
    torch = _torch()
    x = _data(shape, "float32", 7)
    tx = torch.from_numpy(x).to(getattr(torch, dtype))
    nx = ndgrad.from_numpy(x).to(getattr(ndgrad, dtype))
    want = torch.nn.functional.adaptive_avg_pool2d(tx, size).float().numpy()
    got = ndgrad.nn.functional.adaptive_avg_pool2d(nx, size)
    assert got.dtype == nx.dtype
    assert (got.float().numpy() == want).all()
    if len(shape) == 4 and shape[0]:
        want = torch.nn.functional.interpolate(tx, size=size, mode="area").float().numpy()
        got = ndgrad.nn.functional.interpolate(nx, size=size, mode="area").float().numpy()
        assert (got == want).all()
    y = _data(shape[1:], "float32", 8)
    want = torch.nn.functional.adaptive_avg_pool1d(torch.from_numpy(y), size[1]).numpy()
    assert (ndgrad.nn.functional.adaptive_avg_pool1d(ndgrad.from_numpy(y), size[1]).numpy()
            == want).all()


@pytest.mark.parametrize("shape, size", [((1, 2, 9, 9), (4, 5)), ((3, 9, 7), (2, 3)),
                                         ((1, 1, 4, 6), (8, 9))])
def test_adaptive_avg_pool_gradients(shape, size):
    from ndgrad.autograd import gradcheck, gradgradcheck
    x = ndgrad.tensor(_data(shape, "float64", 9), requires_grad=True)

    def f(t):
        return ndgrad.nn.functional.adaptive_avg_pool2d(t, size)
    assert type(f(x).grad_fn).__name__ == "AdaptiveAvgPool2DBackward0"
    assert gradcheck(f, (x,)) and gradgradcheck(f, (x,))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nansum_is_the_sum_with_nans_as_zeros(dtype):
    torch = _torch()
    rng = np.random.default_rng(11)
    for shape, dim in [((8, 300), 1), ((300, 40), 0), ((1000,), None), ((5, 70, 9), 1),
                       ((40000,), None)]:
        x = _data(shape, dtype, 12)
        x[rng.random(shape) < 0.1] = np.nan
        kw = {} if dim is None else dict(dim=dim)
        want = torch.from_numpy(x).nansum(**kw).numpy()
        assert (ndgrad.from_numpy(x).nansum(**kw).numpy() == want).all(), (shape, dim)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, size", [((2, 3, 5, 6, 7), (2, 3, 4)), ((3, 9, 7, 5), (2, 3, 5)),
                                         ((1, 2, 8, 8, 8), (4, 4, 4)),
                                         ((1, 2, 3, 4, 5), (6, 7, 8))])
def test_adaptive_avg_pool3d_windows_in_pytorchs_order(shape, size, dtype):
    torch = _torch()
    x = _data(shape, dtype, 13)
    want = torch.nn.functional.adaptive_avg_pool3d(torch.from_numpy(x), size).numpy()
    got = ndgrad.nn.functional.adaptive_avg_pool3d(ndgrad.from_numpy(x), size).numpy()
    assert (got == want).all()
    xx = ndgrad.tensor(_data(shape, "float64", 14), requires_grad=True)
    if xx.numel() < 200:
        from ndgrad.autograd import gradcheck, gradgradcheck

        def f(t):
            return ndgrad.nn.functional.adaptive_avg_pool3d(t, size)
        assert type(f(xx).grad_fn).__name__ == "AdaptiveAvgPool3DBackward0"
        assert gradcheck(f, (xx,)) and gradgradcheck(f, (xx,))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_whole_row_shortcut_is_the_cascade(dtype):
    """_rows (row sums in a few NumPy calls; _whole_row: one row) gives the general cascade's
    bits: every length to 700, longer ones up to two levels, and signed zeros and non-finite
    values."""
    r = np.random.default_rng(5)
    lengths = list(range(1, 700)) + list(range(700, 40000, 397)) + [8191, 8192, 8193, 32768]
    cases = [(r.standard_normal(n) * 10 ** r.uniform(-3, 3, n)).astype(dtype) for n in lengths]
    cases += [np.array(v, dtype) for v in ([-0.0] * 5, [-0.0] * 37, [-0.0] * 600,
                                           [np.inf, 1, -np.inf], [np.nan] + [1.0] * 100)]
    checked = 0
    with np.errstate(all="ignore"):
        for a in cases:
            fast = _cascade._whole_row(a)
            if fast is None:
                continue
            w = _cascade.lanes(dtype)
            slow = _cascade._inner_levels(a[None])[0] if a.size >= w else \
                _cascade._row_sum(a[None], 1)[0]
            assert np.array_equal(fast, slow, equal_nan=True) and \
                np.signbit(fast) == np.signbit(slow), a.size
            checked += 1
    assert checked == len(cases)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(64, 10), (32, 128), (3, 7), (5, 1), (7, 513), (2, 40000),
                                   (300, 33), (0, 5)])
def test_rows_shortcut_is_the_cascade(dtype, shape):
    a = (np.random.default_rng(6).standard_normal(shape) * 100).astype(dtype)
    if a.size:
        a[0, :] = -0.0
    fast = _cascade._rows(a)
    if shape[0]:
        assert fast is not None
        slow = _cascade._inner_levels(a)
        assert np.array_equal(fast, slow) and (np.signbit(fast) == np.signbit(slow)).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_outer_shortcut_is_the_cascade(dtype):
    """_outer_fast (column sums in few NumPy calls) gives the general levels' bits, over row
    counts either side of the cascade's chunks and column counts either side of its vectors
    and blocks, signed zeros included."""
    r = np.random.default_rng(7)
    checked = 0
    for B in (1, 3):
        for m in (1, 2, 3, 5, 15, 16, 17, 63, 64, 65, 255, 256, 257, 1000, 2000):
            for cols in (1, 2, 3, 5, 7, 8, 9, 31, 32, 33, 40, 100):
                a = (r.standard_normal((B, m, cols)) * 100).astype(dtype)
                if m > 2:
                    a[:, :, 0] = -0.0
                fast = _cascade._outer_fast(a)
                slow = _cascade._outer_levels(a)
                assert fast is not None
                assert np.array_equal(fast, slow) and (np.signbit(fast) == np.signbit(slow)).all()
                checked += 1
    assert checked == 2 * 15 * 12


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_long_rows_leading_is_the_cascade(dtype):
    """Rows of 256 and more elements stay leading (no transposed copy): the general cascade's
    bits."""
    r = np.random.default_rng(8)
    for shape in [(2, 256), (5, 257), (3, 1000), (7, 4096), (2, 20000)]:
        a = (r.standard_normal(shape) * 100).astype(dtype)
        a[0] = -0.0
        fast = _cascade._vector_rows(a, 1)
        assert fast is not None
        slow = _cascade._inner_levels(a)
        assert np.array_equal(fast, slow) and (np.signbit(fast) == np.signbit(slow)).all()
