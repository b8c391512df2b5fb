"""A tensor to a number power rounds as PyTorch's CPU kernel does (ops/pointwise.py,
_POW_AS_WRITTEN): x ** 3 is (x * x) * x, x ** -2 is 1 / (x * x), x ** -0.5 is 1 / sqrt(x), and a
float32 tensor to any other power is pow in double, rounded once. These used to be NumPy's float32
power, which differs from PyTorch in the last bit for 20-35 % of arguments: enough for an
optimizer's trajectory to leave PyTorch's (torch-optimizer's Adafactor on Beale's function)."""
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
