"""ndgrad's tensor repr must be byte-identical to PyTorch's.

Each case builds a NumPy array, wraps it in a minimal fake tensor (the attributes that
``tensor_repr`` reads) and compares with ``repr(torch.from_numpy(arr))``.
"""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from hypothesis import given, settings, strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

from ndgrad import _dtype  # noqa: E402
from ndgrad._tensor_str import (  # noqa: E402
    get_printoptions, printoptions, set_printoptions, tensor_repr)


class _Device:
    def __init__(self, type, index=None):
        self.type, self.index = type, index

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


class _Node:
    def __init__(self, name):
        self._name = name

    def name(self):
        return self._name


class FakeTensor:
    def __init__(self, arr, requires_grad=False, grad_fn=None, device="cpu", index=None):
        self._data = np.asarray(arr)
        self.dtype = _dtype.from_numpy_dtype(self._data.dtype)
        self.requires_grad = requires_grad or grad_fn is not None
        self.grad_fn = _Node(grad_fn) if grad_fn else None
        self.is_leaf = grad_fn is None
        self.device = _Device(device, index)


def torch_repr(arr, requires_grad=False, grad_fn=False):
    t = torch.from_numpy(np.array(arr, order="C"))  # (ascontiguousarray makes 0-d 1-d)
    if requires_grad or grad_fn:
        t.requires_grad_()
    if grad_fn:
        t = t.clone()  # exact copy with a grad_fn (t * 1 would turn inf+0j into inf+nanj)
    return repr(t)


def check(arr, requires_grad=False):
    arr = np.asarray(arr)
    expected = torch_repr(arr)
    got = tensor_repr(FakeTensor(arr))
    assert got == expected, f"\n--- ndgrad ---\n{got}\n--- torch ---\n{expected}"
    if requires_grad and arr.dtype.kind in "fc":
        assert tensor_repr(FakeTensor(arr, requires_grad=True)) == torch_repr(arr, True)
        assert (tensor_repr(FakeTensor(arr, grad_fn="CloneBackward0"))
                == torch_repr(arr, grad_fn=True))


@pytest.fixture(autouse=True)
def _restore_state():
    torch.set_printoptions(profile="default")
    set_printoptions(profile="default")
    yield
    torch.set_printoptions(profile="default")
    set_printoptions(profile="default")
    torch.set_default_dtype(torch.float32)
    _dtype.set_default_dtype(_dtype.float32)


def both_printoptions(**kw):
    torch.set_printoptions(**kw)
    set_printoptions(**kw)


ALL_DTYPES = [np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
              np.uint8, np.bool_, np.complex64, np.complex128]

BASE_VALUES = [
    [0.0], [1.0], [-1.0], [1.5, -2.25, 3.0], [0.1, 0.2, 0.3], [1, 2, 3], [0, 0, 0],
    [100, -100, 7], [1e-5, 1.0], [1e5, 1.0], [123456.789], [1e9, 2e9], [1e-9, 1.0],
    [-0.0, 0.0], [-0.0], [3.14159, -2.71828, 1e3], [0.0001, 0.001], [12345.5, -0.5],
    [255, 128, 0, 1], [9.99996, 1.0], [99999.5, 2.0], [1e300, 1e-300], [5e-324, 1.0],
    [1e-100, 1.0], [1e100], [-1e-100, 2.0],
]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("values", BASE_VALUES, ids=range(len(BASE_VALUES)))
def test_dtypes_1d(dtype, values):
    with np.errstate(all="ignore"):
        if np.dtype(dtype).kind in "iub":
            arr = np.array([v for v in values if abs(v) < 100 or dtype == np.int64],
                           dtype=np.float64)
            arr = arr.astype(dtype) if arr.size else np.array([1], dtype)
        else:
            arr = np.array(values, dtype=dtype)
    check(arr, requires_grad=True)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
def test_dtypes_0d_2d_3d(dtype):
    rng = np.random.default_rng(0)
    base = rng.normal(size=(2, 3, 4)) * 10
    if np.dtype(dtype).kind == "c":
        base = base + 1j * rng.normal(size=base.shape)
    arr = base.astype(dtype) if np.dtype(dtype).kind != "b" else base > 0
    for a in (arr, arr[0], arr[0, 0], arr[0, 0, 0], np.asarray(arr[1, 2, 3])):
        check(a, requires_grad=True)


def test_zero_dim():
    for v in [27.0, -0.0, 0.0, 1.5, 1e-7, 1e10, float("nan"), float("inf"), -float("inf")]:
        for dt in (np.float16, np.float32, np.float64):
            with np.errstate(over="ignore"):
                arr = np.array(v, dt)
            check(arr, requires_grad=True)
    for v in [0, -5, 123456789]:
        check(np.array(v, np.int64))
        check(np.array(v, np.int32))
    check(np.array(True))
    check(np.array(1 + 2j, np.complex64), requires_grad=True)
    check(np.array(-0.5 - 3e-6j, np.complex128), requires_grad=True)
    expected = "tensor(27., grad_fn=<MeanBackward0>)"
    assert tensor_repr(FakeTensor(np.array(27.0, np.float32), grad_fn="MeanBackward0")) == expected


def test_4d_and_5d():
    check(np.arange(2 * 3 * 2 * 4, dtype=np.float32).reshape(2, 3, 2, 4) / 3)
    check(np.arange(2 * 2 * 2 * 2 * 3, dtype=np.int64).reshape(2, 2, 2, 2, 3))
    check(np.ones((1, 1, 1, 1), np.float64), requires_grad=True)


@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (2, 0, 4), (0, 0), (1, 0)])
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
def test_empty(shape, dtype):
    check(np.zeros(shape, dtype), requires_grad=True)


def test_special_values():
    nan, inf = float("nan"), float("inf")
    cases = [[nan], [inf], [-inf], [nan, inf, -inf], [nan, 1.0], [inf, 1.5], [-inf, 1e-8],
             [nan, 0.0], [0.0, -0.0, nan], [1.0, 2.0, nan, -inf], [1e10, nan], [-0.0, 1.0],
             [-0.0, 1.5], [-0.0, 1e-7], [nan, -1.0, 1e5]]
    for vals in cases:
        for dt in (np.float16, np.float32, np.float64):
            with np.errstate(all="ignore"):
                check(np.array(vals, dt), requires_grad=True)
    check(np.array([complex(nan, 1), complex(1, -inf), complex(-0.0, -0.0)]))
    check(np.array([[1 + 2j, 3 - 4j], [-5.5 + 0j, 0 - 1e-5j]], np.complex64))


def test_mixed_and_negative():
    check(np.array([1.0, 2.5, -3.0, 1000.0]))
    check(np.array([[-1.0, 2.0], [3.0, -400.0]], np.float32))
    check(np.array([-1, 2, -300, 40000], np.int32))
    check(np.array([-128, 127], np.int8))
    check(np.array([[True, False], [False, True]]))
    check(np.array([-(2 ** 63), 2 ** 63 - 1], np.int64))


def test_wrapping():
    check(np.linspace(-5, 5, 97, dtype=np.float32), requires_grad=True)
    check(np.arange(200, dtype=np.int64))
    check(np.arange(200, dtype=np.int64).reshape(2, 100))
    check(np.arange(300, dtype=np.float64).reshape(3, 100) * 1.5, requires_grad=True)
    check(np.arange(60, dtype=np.float64).reshape(2, 30) + 0.5j * np.arange(60).reshape(2, 30))
    check(np.logspace(-10, 10, 40), requires_grad=True)
    # a suffix that does not fit on the last line goes on its own line
    check(np.arange(18, dtype=np.float32) + 0.25, requires_grad=True)
    check(np.arange(19, dtype=np.int16))
    for n in range(1, 25):
        check(np.arange(n, dtype=np.float32) * 1.125 - 3, requires_grad=True)


def test_summarization():
    check(np.arange(1001, dtype=np.int64))
    check(np.arange(1000, dtype=np.int64))
    check(np.arange(2000, dtype=np.float32) / 7, requires_grad=True)
    check(np.arange(10000, dtype=np.float64).reshape(100, 100), requires_grad=True)
    check(np.arange(12000, dtype=np.float32).reshape(10, 20, 60), requires_grad=True)
    check(np.arange(2 * 3 * 20 * 20, dtype=np.int32).reshape(2, 3, 20, 20))
    check(np.arange(5000).reshape(2, 2500) % 7 == 0)
    # the summary's formatter only sees the edges: the huge middle value must not matter
    arr = np.ones(3000)
    arr[1500] = 1e20
    check(arr)
    check(np.arange(2000, dtype=np.complex64) * (1 - 2j))


@pytest.mark.parametrize("opts", [
    dict(precision=2), dict(precision=0), dict(precision=8), dict(sci_mode=True),
    dict(sci_mode=False), dict(precision=3, sci_mode=True), dict(linewidth=40),
    dict(linewidth=10), dict(linewidth=200), dict(threshold=5), dict(threshold=0),
    dict(threshold=10, edgeitems=1), dict(threshold=10, edgeitems=0), dict(edgeitems=5),
    dict(profile="short"), dict(profile="full"), dict(profile="short", precision=6),
    dict(profile="full", threshold=20),
])
def test_printoptions(opts):
    both_printoptions(**opts)
    assert get_printoptions() == dict(
        precision=torch._tensor_str.PRINT_OPTS.precision,
        threshold=torch._tensor_str.PRINT_OPTS.threshold,
        edgeitems=torch._tensor_str.PRINT_OPTS.edgeitems,
        linewidth=torch._tensor_str.PRINT_OPTS.linewidth,
        sci_mode=torch._tensor_str.PRINT_OPTS.sci_mode)
    rng = np.random.default_rng(1)
    cases = [
        np.array(3.14159265), np.array([1.0, 2.0, 3.0]), np.array([0.1, 123.456, -7.0]),
        np.array([1e-8, 1.0, 1e8]), rng.normal(size=30), rng.normal(size=(4, 7)) * 100,
        rng.normal(size=(3, 4, 5)).astype(np.float32), np.arange(50),
        np.arange(24).reshape(2, 3, 4), np.arange(2000, dtype=np.float32),
        np.arange(3000).reshape(30, 100) / 3, rng.normal(size=20) + 1j * rng.normal(size=20),
        np.array([True, False] * 8), np.zeros((0, 2)), np.zeros(0, np.int64),
        np.array([float("nan"), 2.0, -0.0]),
    ]
    for arr in cases:
        check(arr, requires_grad=True)


def test_sci_mode_reset_and_context_manager():
    both_printoptions(sci_mode=True)
    both_printoptions(precision=3)  # every call resets sci_mode, as in PyTorch
    assert get_printoptions()["sci_mode"] is None
    check(np.array([1.5, 2.25]))
    with printoptions(precision=1, sci_mode=True), torch._tensor_str.printoptions(
            precision=1, sci_mode=True):
        check(np.array([1.5, 2.25]))
        assert get_printoptions()["precision"] == 1
    assert get_printoptions() == dict(precision=3, threshold=1000, edgeitems=3, linewidth=80,
                                      sci_mode=None)
    check(np.array([1.5, 2.25]))
    both_printoptions(profile="nonexistent")  # ignored, like torch
    assert get_printoptions()["precision"] == 3


def test_default_dtype_float64():
    torch.set_default_dtype(torch.float64)
    _dtype.set_default_dtype(_dtype.float64)
    for arr in [np.array([1.0, 2.5]), np.array([1.0, 2.5], np.float32), np.array(2.0),
                np.array([1.0, 2.0], np.float16), np.array([1 + 1j], np.complex64),
                np.array([1 + 1j], np.complex128), np.zeros((0,)), np.zeros((0,), np.float32),
                np.zeros((2, 0)), np.zeros(0, np.complex128), np.arange(3)]:
        check(arr, requires_grad=True)


def test_device_suffix():
    cuda = FakeTensor(np.array([1.0, 2.0], np.float32), device="cuda", index=0)
    assert tensor_repr(cuda) == "tensor([1., 2.], device='cuda:0')"
    cuda.requires_grad = True
    assert tensor_repr(cuda) == "tensor([1., 2.], device='cuda:0', requires_grad=True)"
    cuda64 = FakeTensor(np.zeros((0, 2), np.float64), device="cuda", index=1)
    assert tensor_repr(cuda64) == "tensor([], device='cuda:1', size=(0, 2), dtype=torch.float64)"


def test_non_numpy_storage():
    class FakeCupyArray:  # .get() copies to the host, like cupy.ndarray
        def __init__(self, arr):
            self.arr = arr

        def get(self):
            return self.arr

    t = FakeTensor(np.array([1.0, 2.0]))
    t._data = FakeCupyArray(np.array([1.0, 2.0]))
    assert tensor_repr(t) == "tensor([1., 2.], dtype=torch.float64)"


# --- property-based comparison with torch -------------------------------------------------

_special = st.sampled_from([0.0, -0.0, math.nan, math.inf, -math.inf, 1.0, -1.0])
_magnitude = st.builds(lambda m, e, s: s * m * 10.0 ** e,
                       st.floats(1, 10, allow_nan=False), st.integers(-12, 12),
                       st.sampled_from([1, -1]))
_integral = st.integers(-10 ** 6, 10 ** 6).map(float)
_value = st.one_of(_special, _magnitude, _integral,
                   st.floats(allow_nan=True, allow_infinity=True))


@st.composite
def float_arrays(draw, max_side=6):
    dtype = draw(st.sampled_from([np.float16, np.float32, np.float64]))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=max_side))
    n = int(np.prod(shape))
    pool = draw(st.lists(_value, min_size=1, max_size=6))  # few values: realistic mixes
    picks = draw(st.lists(st.integers(0, len(pool) - 1), min_size=n, max_size=n))
    with np.errstate(all="ignore"):
        return np.array([pool[i] for i in picks], dtype=np.float64).astype(dtype).reshape(shape)


@settings(max_examples=200, derandomize=True, deadline=None)
@given(float_arrays())
def test_hypothesis_float(arr):
    check(arr, requires_grad=True)


@settings(max_examples=100, derandomize=True, deadline=None)
@given(float_arrays(max_side=12), st.sampled_from([np.complex64, np.complex128, None]),
       st.integers(0, 6), st.sampled_from([None, True, False]), st.integers(5, 120),
       st.integers(0, 4), st.integers(0, 3))
def test_hypothesis_options(arr, complex_dtype, precision, sci_mode, linewidth, threshold_exp,
                            edgeitems):
    if complex_dtype is not None:
        with np.errstate(all="ignore"):
            arr = (arr.astype(np.float64) * (1 - 0.5j)).astype(complex_dtype)
    both_printoptions(precision=precision, sci_mode=sci_mode, linewidth=linewidth,
                      threshold=4 ** threshold_exp, edgeitems=edgeitems)
    check(arr, requires_grad=True)


@settings(max_examples=100, derandomize=True, deadline=None)
@given(hnp.arrays(st.sampled_from([np.int8, np.int16, np.int32, np.int64, np.uint8, np.bool_]),
                  hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=12)),
       st.integers(20, 100), st.integers(1, 3))
def test_hypothesis_int(arr, linewidth, edgeitems):
    both_printoptions(linewidth=linewidth, threshold=50, edgeitems=edgeitems)
    check(arr)
