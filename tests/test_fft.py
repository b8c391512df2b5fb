"""torch.fft: values and gradients against PyTorch on the same float64/complex128 inputs (every
transform, each norm, n/s shorter and longer than the signal, even and odd sizes, dim), first and
second order gradcheck (complex too), dtypes, out=, helpers and error messages. PyTorch
comparisons skip cleanly when torch is not installed."""
import numpy as np
import pytest

import ndgrad
from ndgrad.autograd import gradcheck, gradgradcheck


def _torch():
    return pytest.importorskip("torch")


REAL_IN = {"rfft", "rfft2", "rfftn", "ihfft", "ihfft2", "ihfftn"}
ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn", "hfft2", "ihfft2",
       "hfftn", "ihfftn"]

# (shape, kwargs): n shorter/longer than the input, even and odd, another dim
ONE_D_ARGS = [((6,), {}), ((5,), {}), ((2, 5), {"n": 8}), ((2, 6), {"n": 3}), ((2, 5), {"n": 7}),
              ((4, 3), {"dim": 0}), ((3, 4), {"dim": 0, "n": 5}), ((1,), {"n": 2}),
              ((2, 4), {"n": 1})]
N_D_ARGS = [((3, 4), {}), ((2, 3, 5), {}), ((2, 3, 5), {"s": (4, 6)}), ((3, 5), {"s": (2, 3)}),
            ((2, 3, 4), {"dim": (0, 2)}), ((2, 3, 4), {"s": (3, -1), "dim": (2, 0)}),
            ((4, 3), {"dim": (0,)}), ((2, 3, 4), {"s": (5, 5), "dim": (-1, 1)})]
NORMS = [None, "backward", "ortho", "forward"]


def _input(name, shape, rng, complex_input=None):
    if complex_input is None:
        complex_input = name not in REAL_IN
    a = rng.standard_normal(shape)
    if complex_input:
        a = a + 1j * rng.standard_normal(shape)
    return a


def _params():
    out = []
    for name in ONE_D:
        for i, (shape, kw) in enumerate(ONE_D_ARGS):
            for norm in NORMS:
                out.append(pytest.param(name, shape, dict(kw, norm=norm),
                                        id=f"{name}-{i}-{norm}"))
    for name in N_D:
        two = name.endswith("2")
        for i, (shape, kw) in enumerate(N_D_ARGS):
            if two:
                kw = {k: (v[:2] if isinstance(v, tuple) else v) for k, v in kw.items()}
                if "dim" in kw and len(kw["dim"]) != 2:
                    continue
            for norm in (None, "ortho", "forward"):
                out.append(pytest.param(name, shape, dict(kw, norm=norm),
                                        id=f"{name}-{i}-{norm}"))
    return out


PARAMS = _params()


def _run(L, name, a, kw, rng_seed=0):
    x = L.tensor(a, requires_grad=True)
    y = getattr(L.fft, name)(x, **kw)
    rng = np.random.default_rng(rng_seed)
    w = rng.standard_normal(tuple(y.shape))
    if y.is_complex():
        w = w + 1j * rng.standard_normal(tuple(y.shape))
        loss = (y * L.tensor(w)).real.sum() + (y.abs() ** 2).sum()
    else:
        loss = (y * L.tensor(w)).sum() + (y ** 2).sum()
    loss.backward()
    return y.detach().resolve_conj().numpy(), str(y.dtype), x.grad.resolve_conj().numpy(), \
        type(y.grad_fn).__name__


@pytest.mark.parametrize("name,shape,kw", PARAMS)
def test_values_and_grads_match_torch(name, shape, kw):
    torch = _torch()
    a = _input(name, shape, np.random.default_rng(0))
    y1, d1, g1, f1 = _run(ndgrad, name, a, kw)
    y2, d2, g2, f2 = _run(torch, name, a, kw)
    assert d1 == d2 and y1.shape == y2.shape
    np.testing.assert_allclose(y1, y2, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g1, g2, rtol=1e-10, atol=1e-12)
    assert f1 == f2


@pytest.mark.parametrize("name", ["fft", "ifft", "fftn", "irfft", "hfft", "irfftn", "hfftn"])
def test_real_input_to_complex_transforms_match_torch(name):
    torch = _torch()
    a = np.random.default_rng(3).standard_normal((3, 4))
    y1, d1, g1, f1 = _run(ndgrad, name, a, {})
    y2, d2, g2, f2 = _run(torch, name, a, {})
    assert d1 == d2 and f1 == f2
    np.testing.assert_allclose(y1, y2, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g1, g2, rtol=1e-10, atol=1e-12)


GC = [("fft", (5,), {}), ("ifft", (4,), {"norm": "ortho"}), ("fft", (3,), {"n": 5}),
      ("rfft", (5,), {}), ("rfft", (6,), {"n": 4, "norm": "forward"}), ("irfft", (4,), {}),
      ("irfft", (3,), {"n": 5}), ("irfft", (4,), {"n": 4, "norm": "ortho"}), ("hfft", (3,), {}),
      ("hfft", (4,), {"n": 5, "norm": "forward"}), ("ihfft", (5,), {}), ("ihfft", (4,), {"n": 6}),
      ("fft2", (2, 3), {}), ("ifftn", (2, 3), {"s": (3, 2)}), ("rfft2", (3, 4), {}),
      ("irfft2", (3, 3), {}), ("irfftn", (2, 3), {"s": (3, 5)}), ("hfft2", (2, 3), {}),
      ("ihfftn", (3, 4), {"norm": "ortho"}), ("rfftn", (2, 2, 3), {"dim": (0, 2)}),
      ("fft", (2, 0), {"dim": 0}), ("fftn", (), {}), ("fftn", (2, 0), {"dim": (0,)})]


@pytest.mark.parametrize("name,shape,kw", GC, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(GC)])
def test_gradcheck_and_gradgradcheck(name, shape, kw):
    a = _input(name, shape, np.random.default_rng(1))
    x = ndgrad.tensor(a, requires_grad=True)
    f = lambda t: getattr(ndgrad.fft, name)(t, **kw)  # noqa: E731
    assert gradcheck(f, (x,))
    assert gradcheck(f, (x,), fast_mode=True)
    assert gradgradcheck(f, (x,))
    if name not in REAL_IN:  # a real input to a complex-input transform: the real part's grad
        xr = ndgrad.tensor(np.real(a), requires_grad=True)
        assert gradcheck(f, (xr,)) and gradgradcheck(f, (xr,))


def test_dtypes_match_torch():
    torch = _torch()
    for name in ONE_D:
        for dt in ("float32", "float64", "complex64", "complex128", "int64"):
            if name in REAL_IN and dt.startswith("complex"):
                continue
            got = []
            for L in (ndgrad, torch):
                x = L.ones(4, dtype=getattr(L, dt))
                got.append(str(getattr(L.fft, name)(x).dtype))
            assert got[0] == got[1], (name, dt)


@pytest.mark.parametrize("case", [
    lambda L: L.fft.rfft(L.ones(4, dtype=L.complex64)),
    lambda L: L.fft.ihfft(L.ones(4, dtype=L.complex64)),
    lambda L: L.fft.fft(L.ones(4), n=0),
    lambda L: L.fft.fft(L.ones(4, 5), dim=2),
    lambda L: L.fft.fftn(L.ones(4, 5), s=(2, 2, 2)),
    lambda L: L.fft.fftn(L.ones(4, 5), s=(2, 2), dim=(0,)),
    lambda L: L.fft.fftn(L.ones(4, 5), dim=(0, 0)),
    lambda L: L.fft.fft(L.ones(4).half()),
    lambda L: L.fft.fft(L.ones(4), norm="bad"),
    lambda L: L.fft.irfft(L.ones(1)),
    lambda L: L.fft.fft(L.tensor(1.0)),
    lambda L: L.fft.fft(L.ones(0)),
    lambda L: L.fft.rfftn(L.ones(3, 0)),
    lambda L: L.fft.irfftn(L.ones(3, 1, dtype=L.complex64)),
    lambda L: L.fft.fft2(L.ones(3)),
    lambda L: L.fft.fft(L.ones(4, requires_grad=True), out=L.empty(4, dtype=L.complex64)),
], ids=["rfft_complex", "ihfft_complex", "n0", "dim_range", "s_long", "s_dim_len", "dims_unique",
        "half", "norm", "irfft_1", "zero_dim", "empty", "rfftn_empty", "irfftn_0", "fft2_1d",
        "out_autograd"])
def test_errors_match_torch(case):
    torch = _torch()
    got = []
    for L in (torch, ndgrad):
        try:
            case(L)
            got.append(None)
        except Exception as e:  # noqa: BLE001
            got.append((type(e).__name__, str(e)))
    assert got[0] is not None and got[0] == got[1]


def test_helpers_match_torch():
    torch = _torch()
    cases = [
        lambda L: L.fft.fftfreq(5), lambda L: L.fft.fftfreq(4, 0.5, dtype=L.float64),
        lambda L: L.fft.rfftfreq(5), lambda L: L.fft.rfftfreq(4, d=0.1),
        lambda L: L.fft.fftfreq(4, requires_grad=True),
        lambda L: L.fft.fftshift(L.arange(10).reshape(2, 5)),
        lambda L: L.fft.ifftshift(L.arange(10).reshape(2, 5)),
        lambda L: L.fft.fftshift(L.arange(10).reshape(2, 5), dim=1),
        lambda L: L.fft.ifftshift(L.arange(10).reshape(2, 5), dim=(0,)),
        lambda L: L.fft.fft(L.arange(4.0), norm="ortho"),
        lambda L: L.fft.rfft(L.arange(5.0, requires_grad=True)),
        lambda L: L.fft.irfft(L.tensor([1 + 0j, 2 - 1j, 0.5j]), n=5),
    ]
    for f in cases:
        assert repr(f(ndgrad)) == repr(f(torch))
    x = ndgrad.arange(6.0, requires_grad=True)
    ndgrad.fft.fftshift(x).pow(2).sum().backward()
    assert ndgrad.equal(x.grad, 2 * x.detach())


def test_out():
    x = ndgrad.arange(4.0)
    o = ndgrad.empty(0, dtype=ndgrad.complex64)
    r = ndgrad.fft.fft(x, out=o)
    assert r is o and ndgrad.allclose(o, ndgrad.fft.fft(x))
    with pytest.raises(RuntimeError, match="fft expects a complex output tensor, but got Float"):
        ndgrad.fft.fft(x, out=ndgrad.empty(4))
    with pytest.warns(UserWarning, match="resized"):
        ndgrad.fft.fft(x, out=ndgrad.empty(2, dtype=ndgrad.complex64))


def test_roundtrips():
    rng = np.random.default_rng(5)
    for n in (6, 7):
        x = ndgrad.tensor(rng.standard_normal(n))
        for norm in NORMS:
            f = ndgrad.fft
            assert ndgrad.allclose(f.irfft(f.rfft(x, norm=norm), n=n, norm=norm), x)
            assert ndgrad.allclose(f.ifft(f.fft(x, norm=norm), norm=norm).real, x)
            assert ndgrad.allclose(f.hfft(f.ihfft(x, norm=norm), n=n, norm=norm), x)
