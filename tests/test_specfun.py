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
