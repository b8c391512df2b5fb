"""Accuracy of the vectorised special-function kernels (ops/_specfun.py): erf, erfc, erfcx and
lgamma in float64 against mpmath's exactly rounded values and against PyTorch (glibc's libm),
over the whole real line: tails, subnormals, infinities, NaN, signed zeros, the poles and zeros
of lgamma. Errors are counted in units in the last place of the exact value."""
import math

import numpy as np
import pytest

import ndgrad
from ndgrad.ops import _specfun as K

mp = pytest.importorskip("mpmath")

ULP = 4  # the kernels' bound (glibc's own tables list 4-5 ulp for erfc and lgamma)


def _ulps(got, ref):
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    both = (got == ref) | (np.isnan(got) & np.isnan(ref))
    err = np.abs(got - ref) / np.spacing(np.abs(ref))
    return np.where(both, 0.0, err)


def _mp(f, xs):
    mp.mp.dps = 40
    return np.array([float(f(mp.mpf(float(v)))) for v in xs])


def _sample(seed, n=600):
    r = np.random.default_rng(seed)
    return np.concatenate([
        r.uniform(-6, 6, n), r.uniform(-0.6, 0.6, n), r.uniform(-28, 28, n // 2),
        r.choice([-1, 1], n) * 10.0 ** r.uniform(-320, 0, n),  # down to subnormals
        [0.5, -0.5, 4.0, -4.0, np.nextafter(0.5, 1), np.nextafter(4.0, 0), 26.5, 27.2]])


@pytest.mark.parametrize("name", ["erf", "erfc"])
def test_erf_erfc_vs_mpmath(name):
    xs = _sample(1)
    got = getattr(K, name)(np, xs)
    ref = _mp(getattr(mp, name), xs)
    u = _ulps(got, ref)
    assert u.max() <= ULP, (xs[u.argmax()], got[u.argmax()], ref[u.argmax()])


def test_erfcx_vs_mpmath():
    r = np.random.default_rng(2)
    xs = np.concatenate([np.abs(_sample(2)), r.uniform(0, 1e3, 200), 10.0 ** r.uniform(3, 300, 100)])
    got = K.erfcx(np, xs)
    mp.mp.dps = 40

    def erfcx(v):  # (the asymptotic series where exp(v^2) is beyond mpmath's floats)
        v = mp.mpf(v)
        return mp.erfc(v) * mp.exp(v * v) if v < 1e8 else (1 - 1 / (2 * v * v)) / (v * mp.sqrt(mp.pi))

    ref = np.array([float(erfcx(v)) for v in xs])
    u = _ulps(got, ref)
    assert u.max() <= ULP, (xs[u.argmax()], got[u.argmax()], ref[u.argmax()])


def test_lgamma_positive_vs_mpmath():
    r = np.random.default_rng(3)
    xs = np.concatenate([r.uniform(0, 10, 1000), r.uniform(0.5, 2.5, 600),
                         1 + r.uniform(-1e-6, 1e-6, 100), 2 + r.uniform(-1e-6, 1e-6, 100),
                         10.0 ** r.uniform(-320, 305, 600),
                         [0.75, 1.75, 8.0, np.nextafter(8.0, 0), 1.0, 2.0, 5e-324]])
    got = K.lgamma(np, xs)
    ref = _mp(mp.loggamma, xs)
    u = _ulps(got, ref)
    assert u.max() <= ULP, (xs[u.argmax()], got[u.argmax()], ref[u.argmax()])
    # exact zeros are +0, as PyTorch's
    z = K.lgamma(np, np.array([1.0, 2.0]))
    assert (z == 0).all() and not np.signbit(z).any()


def test_lgamma_negative_vs_mpmath():
    """Reflection: relative to the size of its terms (near lgamma's zeros on the negative axis,
    -2.457..., -2.747..., the relative error grows, as in CPython's math.lgamma)."""
    r = np.random.default_rng(4)
    xs = -np.concatenate([r.uniform(0, 10, 800), 10.0 ** r.uniform(-320, 15, 400)])
    xs = xs[xs != np.round(xs)]
    got = K.lgamma(np, xs)
    mp.mp.dps = 40
    ref = np.array([float(mp.log(abs(mp.gamma(mp.mpf(v))))) for v in xs])
    terms = np.abs(math.log(np.pi) - np.log(np.abs(np.sin(np.pi * (xs - np.round(xs)))))) + \
        np.abs(np.log(-xs)) + np.abs(K.lgamma(np, -xs))
    assert (np.abs(got - ref) <= ULP * np.spacing(terms)).all()
    far = np.abs(ref) > 0.5 * terms  # away from the zeros: relative
    assert _ulps(got[far], ref[far]).max() <= ULP


def test_special_values():
    inf, nan = np.inf, np.nan
    x = np.array([0.0, -0.0, inf, -inf, nan, 5e-324, -5e-324, 30.0, -30.0, 1e300, -1e300])
    e = K.erf(np, x)
    np.testing.assert_array_equal(e, [0.0, -0.0, 1, -1, nan, 5e-324, -5e-324, 1, -1, 1, -1])
    assert np.signbit(e[1]) and not np.signbit(e[0])
    np.testing.assert_array_equal(K.erfc(np, x), [1, 1, 0, 2, nan, 1, 1, 0, 2, 0, 2])
    np.testing.assert_array_equal(K.erfcx(np, np.array([0.0, inf, nan])), [1, 0, nan])
    g = K.lgamma(np, np.array([0.0, -0.0, -1.0, -2.0, -1e20, inf, -inf, nan, 3e305, 1e-310]))
    np.testing.assert_array_equal(g[:8], [inf, inf, inf, inf, inf, inf, inf, nan])
    assert g[8] == inf and g[9] == pytest.approx(-math.log(1e-310), rel=1e-15)
    # 0-d and empty arrays, shapes kept
    assert K.erf(np, np.array(0.5)).shape == ()
    assert K.lgamma(np, np.zeros((0, 3))).shape == (0, 3)
    assert K.erfc(np, np.ones((2, 3, 4))).shape == (2, 3, 4)


torch = pytest.importorskip("torch")


@pytest.mark.parametrize("name", ["erf", "erfc", "lgamma", "special.erfcx"])
def test_vs_torch(name):
    xs = np.concatenate([_sample(5), np.random.default_rng(5).uniform(-10, 30, 1000)])
    if name == "special.erfcx":
        # (PyTorch's erfcx below 0 is 2 exp(x * x) - erfcx(-x) with x * x rounded: ~x^2 ulp off
        # at large -x; ours splits x * x exactly)
        xs = xs[xs > -3]
    xs = xs.astype(np.float32).astype(np.float64)  # (the same inputs in both dtypes)

    def get(lib):
        f = lib
        for part in name.split("."):
            f = getattr(f, part)
        return f

    for dt, tol in (("float64", ULP + 1), ("float32", None)):
        ours = get(ndgrad)(ndgrad.tensor(xs, dtype=getattr(ndgrad, dt))).numpy()
        theirs = get(torch)(torch.tensor(xs, dtype=getattr(torch, dt))).numpy()
        if tol is not None:  # glibc's within 1 ulp; ours within ULP
            u = _ulps(ours, theirs)
            if name == "lgamma":  # (near the negative zeros: absolute, as above)
                u = np.where((xs < 0) & (ours != theirs), np.abs(ours - theirs) / np.spacing(
                    np.abs(K.lgamma(np, -np.abs(xs))) + 40.0), u)
            assert u.max() <= tol, (xs[u.argmax()], ours[u.argmax()], theirs[u.argmax()])
        else:  # float32: the float64 value rounded once; PyTorch's float32 kernels are coarser
            ref = get(ndgrad)(ndgrad.tensor(xs)).numpy().astype(np.float32)
            np.testing.assert_array_equal(ours, ref)
            np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=3e-7)


@pytest.mark.parametrize("name", ["erf", "erfc", "lgamma", "erfinv"])
def test_complex_refused_as_pytorch(name):
    with pytest.raises(NotImplementedError) as ours:
        getattr(ndgrad, name)(ndgrad.tensor([1 + 1j]))
    with pytest.raises(NotImplementedError) as theirs:
        getattr(torch, name)(torch.tensor([1 + 1j]))
    assert str(ours.value) == str(theirs.value)


# ---------------------------------------------------------------- GELU's kernels (activation.py)

def _gelu64(x):
    x = np.asarray(x, np.float64)
    return x * 0.5 * K.erfc(np, -x / math.sqrt(2))


def test_gelu_float32_to_a_few_ulp():
    """float32 GELU: the fitted exp form and the float64 tail below -2, within 7 ulp of the
    float64 value everywhere (PyTorch's float32 kernel is off by ~1e-7 absolute, 17 % at -5).
    6.5 ulp at most on these points through exp2, 7.4 when the kernel raised e (NumPy's
    float32 exp is within 2.5 ulp, exp2 within 1)."""
    x = np.concatenate([np.linspace(-15, 8, 100001), np.linspace(-2.5, 2.5, 10001)]).astype(
        np.float32)
    y = ndgrad.nn.functional.gelu(ndgrad.tensor(x)).numpy()
    ref = _gelu64(x)
    nz = ref != 0
    ulp = np.abs(y[nz] - ref[nz]) / np.spacing(np.abs(ref[nz]).astype(np.float32))
    assert ulp.max() <= 7, x[nz][ulp.argmax()]
    assert (y[~nz] == 0).all()


def test_gelu_float32_far_tails():
    """Past GELU_K's range (|x| > 5.5) its polynomial is no fit but its exponent only grows in
    magnitude: Phi is 1 above (GELU(x) = x) and 0 far below, so the backward's Phi (saved or
    computed again) leaves the gradient the float64 one, ~0, not e^-72 (what a clamp of x^2 at
    30.25 gave at -20)."""
    x = np.concatenate([np.linspace(5.5, 1e4, 1001), np.geomspace(1e4, 3e38, 101)]).astype(
        np.float32)
    assert (ndgrad.nn.functional.gelu(ndgrad.tensor(x)).numpy() == x).all()
    far = ndgrad.tensor(np.linspace(-1e4, -14, 2001).astype(np.float32), requires_grad=True)
    g, = ndgrad.autograd.grad(ndgrad.nn.functional.gelu(far).sum(), far)
    assert np.abs(g.numpy()).max() < 1e-40
    gb = ndgrad.ops.activation.gelu_backward(ndgrad.ones(far.shape), far.detach(), "none")
    assert np.abs(gb.numpy()).max() < 1e-40


def test_gelu_special_values():
    inf, nan = np.inf, np.nan
    for dt in ("float32", "float64", "float16"):
        x = ndgrad.tensor([inf, -inf, nan, 0.0, -0.0, -40.0], dtype=getattr(ndgrad, dt),
                          requires_grad=True)
        for approximate in ("none", "tanh"):
            y = ndgrad.nn.functional.gelu(x, approximate=approximate)
            # PyTorch's float64 values; its float32 'none' kernel gives nan at inf
            np.testing.assert_array_equal(y.detach().numpy(), [inf, nan, nan, 0, -0.0, -0.0])
            assert np.signbit(y.detach().numpy()[4])
            g, = ndgrad.autograd.grad(y.sum(), x)
            np.testing.assert_array_equal(g.numpy(), [nan, nan, nan, 0.5, 0.5, 0.0])


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_vs_torch(approximate):
    r = np.random.default_rng(7)
    xs = np.concatenate([r.standard_normal(3000) * 3, r.uniform(-2.5, 2.5, 1000)])
    g = r.standard_normal(xs.size)
    # (atol: in the tanh form's tails 0.5 (1 + t) and 0.5 x (1 - t^2) u' cancel, and any
    # order of the float64 operations is that far off)
    for dt, rtol, atol in (("float64", 1e-13, 1e-13), ("float32", 2e-6, 1e-6)):
        a = ndgrad.tensor(xs, dtype=getattr(ndgrad, dt), requires_grad=True)
        b = torch.tensor(xs, dtype=getattr(torch, dt), requires_grad=True)
        ya = ndgrad.nn.functional.gelu(a, approximate=approximate)
        yb = torch.nn.functional.gelu(b, approximate=approximate)
        np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=rtol, atol=atol)
        ga, = ndgrad.autograd.grad(ya, a, ndgrad.tensor(g, dtype=ya.dtype), create_graph=True)
        gb, = torch.autograd.grad(yb, b, torch.tensor(g, dtype=yb.dtype), create_graph=True)
        np.testing.assert_allclose(ga.detach().numpy(), gb.detach().numpy(), rtol=rtol,
                                   atol=atol * 4)
        assert type(ya.grad_fn).__name__ == type(yb.grad_fn).__name__ == "GeluBackward0"
        assert type(ga.grad_fn).__name__ == type(gb.grad_fn).__name__ == "GeluBackwardBackward0"
        gga, = ndgrad.autograd.grad(ga.sum(), a)
        ggb, = torch.autograd.grad(gb.sum(), b)
        np.testing.assert_allclose(gga.numpy(), ggb.numpy(), rtol=rtol * 10, atol=atol * 10)
