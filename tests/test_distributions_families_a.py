"""ContinuousBernoulli, GeneralizedPareto, VonMises and Kumaraswamy against torch.distributions:
values on float64 inputs with broadcasting batch shapes (log_prob, cdf, icdf, entropy, moments),
validation errors, sampling moments under a fixed seed, reparameterised gradients given the same
noise, float64 gradcheck and gradgradcheck, and the KL pairs PyTorch registers for them.
PyTorch's GeneralizedPareto raises for float64 ("Double did not match Float"), so it is compared
with PyTorch in float32 and with SciPy in float64."""
import math

import numpy as np
import pytest

import ndgrad
from ndgrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
td, nd = torch.distributions, ndgrad.distributions

R = np.random.RandomState(2026)

# name: (builder(D, **params), params (numpy, broadcasting to a (2, 3) batch), values in the
# support, quantiles). The ContinuousBernoulli probs straddle the Taylor region (0.499, 0.501].
CASES = {
    "cb_probs": (lambda D, p: D.ContinuousBernoulli(probs=p),
                 dict(p=np.array([[0.1, 0.4995, 0.7], [0.499, 0.5, 0.93]])),
                 R.uniform(0.02, 0.98, (2, 3)), R.uniform(0.05, 0.95, (2, 3))),
    "cb_logits": (lambda D, l: D.ContinuousBernoulli(logits=l),
                  dict(l=np.array([-2.0, 0.0003, 1.5])),
                  R.uniform(0.02, 0.98, (2, 3)), R.uniform(0.05, 0.95, (2, 3))),
    "cb_lims": (lambda D, p: D.ContinuousBernoulli(probs=p, lims=(0.3, 0.6)),
                dict(p=np.array([0.2, 0.35, 0.55, 0.8])),
                R.uniform(0.02, 0.98, (4,)), R.uniform(0.05, 0.95, (4,))),
    "von_mises": (lambda D, m, k: D.VonMises(m, k),
                  dict(m=np.array([0.3, -2.0, 3.0]), k=np.array([[0.4], [6.0]])),
                  R.uniform(-4, 4, (2, 3)), None),
    "kumaraswamy": (lambda D, a, b: D.Kumaraswamy(a, b),
                    dict(a=np.array([0.7, 1.0, 2.5]), b=np.array([[0.6], [3.0]])),
                    R.uniform(0.03, 0.97, (2, 3)), R.uniform(0.05, 0.95, (2, 3))),
}
GP = dict(loc=np.array([0.2, -1.0, 0.5]), scale=np.array([[0.8], [2.0]]),
          concentration=np.array([[0.3, 0.0, -0.4], [-1.0, 0.2, 0.05]]))
GP_VALUES = GP["loc"] + np.array([[0.4, 1.3, 0.9], [1.5, 0.2, 2.0]])   # inside each support
QUANTILES = R.uniform(0.05, 0.95, (2, 3))


def _t(L, a, grad=False, dtype=None):
    return L.tensor(np.asarray(a, dtype=np.float64).tolist(), dtype=dtype or L.float64,
                    requires_grad=grad)


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def _close(a, b, tol=1e-12):
    a, b = _np(a), _np(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(b, a, rtol=tol, atol=tol)


def _build(L, name, grad=False):
    build, params, _, _ = CASES[name]
    ps = {k: _t(L, v, grad) for k, v in params.items()}
    return build(L.distributions, **ps), ps


def _outcome(f):
    try:
        return f()
    except NotImplementedError as e:
        return type(e), str(e).replace("ndgrad", "torch")


def _quantities(d, L, values, quantiles):
    v = _t(L, values)
    out = {"log_prob": lambda: d.log_prob(v), "cdf": lambda: d.cdf(v),
           "entropy": lambda: d.entropy(), "mean": lambda: d.mean, "mode": lambda: d.mode,
           "variance": lambda: d.variance, "stddev": lambda: d.stddev,
           "perplexity": lambda: d.perplexity()}
    if quantiles is not None:
        out["icdf"] = lambda: d.icdf(_t(L, quantiles))
    return out


def _kumaraswamy_mode(a, b):
    a, b = np.broadcast_arrays(a, b)
    with np.errstate(all="ignore"):
        return np.where((a < 1) | (b < 1), np.nan, ((a - 1) / (a * b - 1)) ** (1 / a))


# ---------------------------------------------------------------- values


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_torch(name):
    (n, _), (t, _) = _build(ndgrad, name), _build(torch, name)
    _, params, values, quantiles = CASES[name]
    assert repr(n) == repr(t)
    assert tuple(n.batch_shape) == tuple(t.batch_shape)
    assert tuple(n.event_shape) == tuple(t.event_shape) == ()
    assert n.has_rsample == t.has_rsample and n.has_enumerate_support is False
    assert repr(n.support) == repr(t.support)
    assert {k: repr(c) for k, c in n.arg_constraints.items()} == \
        {k: repr(c) for k, c in t.arg_constraints.items()}
    qn, qt = _quantities(n, ndgrad, values, quantiles), _quantities(t, torch, values, quantiles)
    for what in qt:
        a, b = _outcome(qt[what]), _outcome(qn[what])
        if isinstance(a, tuple):                       # not implemented in PyTorch either
            assert b == a, what
            continue
        if name == "kumaraswamy" and what == "mode":
            # PyTorch's mode takes log1p(-concentration0): nan for every parameter
            assert np.isnan(_np(a)).all()
            a = _kumaraswamy_mode(params["a"], params["b"])
        _close(a, b)
    # the same through expand, with the batch grown in front
    en, et = n.expand((4, 1) + tuple(n.batch_shape)), t.expand((4, 1) + tuple(t.batch_shape))
    assert type(en) is type(n) and repr(en) == repr(et)
    assert tuple(en.batch_shape) == tuple(et.batch_shape)
    _close(et.log_prob(_t(torch, values)), en.log_prob(_t(ndgrad, values)))
    _close(et.variance, en.variance)


def test_continuous_bernoulli_details():
    for L in (ndgrad, torch):
        assert L.distributions.ContinuousBernoulli(0.3).batch_shape == ()
    n = nd.ContinuousBernoulli(probs=_t(ndgrad, [0.2, 0.7]))
    t = td.ContinuousBernoulli(probs=_t(torch, [0.2, 0.7]))
    assert tuple(n.param_shape) == tuple(t.param_shape) == (2,)
    _close(t.logits, n.logits)
    assert repr(n) == repr(t)                       # the derived logits stay out of the repr
    e = n.expand((3, 2))
    _close(t.expand((3, 2)).logits, e.logits)
    assert e._lims == n._lims and tuple(e.probs.shape) == (3, 2)
    # probs are clamped to [eps, 1 - eps], so the ends stay finite (as PyTorch's)
    for p in (0.0, 1.0):
        _close(td.ContinuousBernoulli(torch.tensor(p, dtype=torch.float64)).log_prob(
            torch.tensor(0.3, dtype=torch.float64)),
            nd.ContinuousBernoulli(ndgrad.tensor(p, dtype=ndgrad.float64)).log_prob(
                ndgrad.tensor(0.3, dtype=ndgrad.float64)))
    # values at the edges of the support and outside it (cdf clipped to [0, 1])
    v = [0.0, 1.0, -0.5, 1.5]
    cn = nd.ContinuousBernoulli(_t(ndgrad, 0.3), validate_args=False)
    ct = td.ContinuousBernoulli(_t(torch, 0.3), validate_args=False)
    _close(ct.cdf(_t(torch, v)), cn.cdf(_t(ndgrad, v)))
    _close(ct.log_prob(_t(torch, v[:2])), cn.log_prob(_t(ndgrad, v[:2])))
    # a float32 number parameter gives float32 results
    a = nd.ContinuousBernoulli(0.3).log_prob(ndgrad.tensor(0.4))
    b = td.ContinuousBernoulli(0.3).log_prob(torch.tensor(0.4))
    assert str(a.dtype) == str(b.dtype) == "torch.float32"
    _close(b, a, 1e-6)


def test_continuous_bernoulli_exponential_family_members():
    # the natural parameter's log normaliser, through the generic ExponentialFamily entropy
    # and the Bregman KL (including logits inside the normaliser's own Taylor region)
    for logits in ([-1.3, 0.0004, 2.0], [0.5, -0.0008, -3.0]):
        n = nd.ContinuousBernoulli(logits=_t(ndgrad, logits))
        t = td.ContinuousBernoulli(logits=_t(torch, logits))
        _close(t._log_normalizer(t.logits), n._log_normalizer(n.logits))
        _close(td.ExponentialFamily.entropy(t), nd.ExponentialFamily.entropy(n), 1e-10)
    p = [nd.ContinuousBernoulli(logits=_t(ndgrad, [-1.3, 0.7])),
         nd.ContinuousBernoulli(logits=_t(ndgrad, [0.4, 2.0]))]
    q = [td.ContinuousBernoulli(logits=_t(torch, [-1.3, 0.7])),
         td.ContinuousBernoulli(logits=_t(torch, [0.4, 2.0]))]
    _close(td.kl._kl_expfamily_expfamily(*q), nd.kl._kl_expfamily_expfamily(*p), 1e-10)
    _close(td.kl_divergence(*q), nd.kl._kl_expfamily_expfamily(*p), 1e-10)


def _gp(L, dtype, grad=False):
    ps = {k: _t(L, v, grad, dtype) for k, v in GP.items()}
    return L.distributions.GeneralizedPareto(**ps), ps


def test_generalized_pareto_matches_torch_in_float32():
    (n, _), (t, _) = _gp(ndgrad, ndgrad.float32), _gp(torch, torch.float32)
    assert repr(n) == repr(t) and repr(n.support) == repr(t.support)
    assert tuple(n.batch_shape) == tuple(t.batch_shape) == (2, 3) and n.has_rsample
    v32 = lambda L: _t(L, GP_VALUES, dtype=L.float32)  # noqa: E731
    for f in (lambda d, L: d.log_prob(v32(L)), lambda d, L: d.cdf(v32(L)),
              lambda d, L: d.log_cdf(v32(L)), lambda d, L: d.log_survival_function(v32(L)),
              lambda d, L: d.icdf(_t(L, QUANTILES, dtype=L.float32)),
              lambda d, L: d.entropy(), lambda d, L: d.mean, lambda d, L: d.mode,
              lambda d, L: d.variance, lambda d, L: d.stddev, lambda d, L: d.support.upper_bound):
        a, b = f(t, torch), f(n, ndgrad)
        assert str(a.dtype) == str(b.dtype) == "torch.float32"
        _close(a, b, 2e-5)
    for L in (ndgrad, torch):
        d = L.distributions.GeneralizedPareto(0.0, 1.0, 0.3)
        assert d.batch_shape == () and d.entropy().shape == ()
    _close(td.GeneralizedPareto(0.0, 1.0, 0.3).expand((2,)).entropy(),
           nd.GeneralizedPareto(0.0, 1.0, 0.3).expand((2,)).entropy(), 1e-6)


def test_generalized_pareto_edges_match_torch():
    # concentration -1 (uniform) and -0.5 at their upper ends, 0 and within 1e-8 of 0
    # (the exponential limit), at the lower end and far out
    c = [-1.0, -0.5, 0.0, 1e-9, -1e-9, 0.3, 2.0]
    v = [[1.0, 2.0, 0.7, 0.7, 0.7, 0.0, 50.0], [0.0, 0.0, 0.0, 30.0, 1e-3, 1e3, 0.0]]
    u = [[0.0, 0.5, 0.999, 0.3, 0.3, 1e-6, 0.9], [0.9, 0.0, 0.0, 0.999, 0.999, 0.5, 0.999]]
    res = []
    for L in (ndgrad, torch):
        f = lambda x: L.tensor(x, dtype=L.float32)  # noqa: E731
        d = L.distributions.GeneralizedPareto(f(0.0), f(1.0), f(c))
        res.append([d.log_prob(f(v)), d.cdf(f(v)), d.log_survival_function(f(v)),
                    d.icdf(f(u)), d.mean, d.variance])
    for a, b in zip(res[1], res[0]):
        _close(a, b, 2e-5)


def test_generalized_pareto_float64_against_scipy():
    st = pytest.importorskip("scipy.stats")
    n, _ = _gp(ndgrad, ndgrad.float64)
    loc, scale, c = np.broadcast_arrays(GP["loc"], GP["scale"], GP["concentration"])
    ref = st.genpareto(c, loc, scale)
    v = ndgrad.tensor(GP_VALUES)
    _close(ref.logpdf(GP_VALUES), n.log_prob(v), 1e-12)
    _close(ref.cdf(GP_VALUES), n.cdf(v), 1e-12)
    _close(ref.logcdf(GP_VALUES), n.log_cdf(v), 1e-12)
    _close(ref.logsf(GP_VALUES), n.log_survival_function(v), 1e-12)
    _close(ref.ppf(QUANTILES), n.icdf(ndgrad.tensor(QUANTILES)), 1e-12)
    _close(ref.entropy(), n.entropy(), 1e-12)
    with np.errstate(all="ignore"):
        mean, var = ref.stats("mv")
    _close(np.where(c < 1, mean, np.nan), n.mean, 1e-12)
    _close(np.where(c < 0.5, var, np.nan), n.variance, 1e-12)
    upper = np.where(c < 0, loc - scale / np.where(c < 0, c, -1), np.inf)
    _close(upper, n.support.upper_bound, 1e-12)
    assert bool(n.support.check(v).all())
    assert not n.support.check(v + 10).all() and not n.support.check(v - 10).any()


def test_von_mises_variance_and_log_prob_over_the_bessel_split():
    # log I0 and log I1 switch approximations at 3.75; both sides and tiny and huge k agree
    k = np.array([1e-6, 0.01, 1.0, 3.7499, 3.75, 3.7501, 20.0, 700.0, 1e4])
    n = nd.VonMises(_t(ndgrad, np.zeros_like(k)), _t(ndgrad, k))
    t = td.VonMises(_t(torch, np.zeros_like(k)), _t(torch, k))
    _close(t.variance, n.variance)
    _close(t.log_prob(_t(torch, k * 0 + 0.3)), n.log_prob(_t(ndgrad, k * 0 + 0.3)), 1e-11)
    # and the polynomials stay within their 2e-7 of the exact Bessel functions
    exact = np.log(np.i0(k[:7]))
    _close(exact, nd.von_mises._log_bessel_i(0, _t(ndgrad, k[:7])), 1e-6)


# ---------------------------------------------------------------- validation


def _err(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e).replace("ndgrad", "torch")
    return None


def _bad(L):
    D, t = L.distributions, lambda x: _t(L, x)
    f32 = lambda x: L.tensor(x)  # noqa: E731
    return [
        lambda: D.ContinuousBernoulli(probs=t([0.3, 1.3]), validate_args=True),
        lambda: D.ContinuousBernoulli(probs=t([-0.1]), validate_args=False),
        lambda: D.ContinuousBernoulli(probs=t([0.3, float("nan")])),
        lambda: D.ContinuousBernoulli(logits=t([float("nan")])),
        lambda: D.ContinuousBernoulli(),
        lambda: D.ContinuousBernoulli(0.3, 0.2),
        lambda: D.ContinuousBernoulli(t(0.3)).log_prob(t([1.3])),
        lambda: D.ContinuousBernoulli(t(0.3)).cdf(t([-0.2])),
        lambda: D.ContinuousBernoulli(t([0.3, 0.6])).log_prob(t([0.1, 0.2, 0.3])),
        lambda: D.ContinuousBernoulli(t(0.3)).log_prob([0.5]),
        lambda: D.ContinuousBernoulli(t(0.3)).mode,
        lambda: D.GeneralizedPareto(0.0, f32([1.0, -1.0]), 0.3),
        lambda: D.GeneralizedPareto(float("nan"), 1.0, 0.3),
        lambda: D.GeneralizedPareto(0.0, 1.0, f32(-0.5)).log_prob(f32(3.0)),
        lambda: D.GeneralizedPareto(0.0, 1.0, f32(0.3)).log_prob(f32(-1.0)),
        lambda: D.GeneralizedPareto(0.0, 1.0, f32(0.3)).cdf(f32([-1.0])),
        lambda: D.GeneralizedPareto(f32([0.0, 0.0]), 1.0, 0.3).log_prob(f32([1.0, 1.0, 1.0])),
        lambda: D.VonMises(t(0.0), t([1.0, -1.0])),
        lambda: D.VonMises(t(float("nan")), t(1.0)),
        lambda: D.VonMises(t(0.0), t(1.0)).log_prob(t(float("nan"))),
        lambda: D.VonMises(t(0.0), t(1.0)).log_prob([0.5]),
        lambda: D.VonMises(t([0.0, 1.0]), t(1.0)).log_prob(t([1.0, 2.0, 3.0])),
        lambda: D.VonMises(t(0.0), t(1.0)).rsample(),
        lambda: D.VonMises(t(0.0), t(1.0)).cdf(t(0.5)),
        lambda: D.VonMises(t(0.0), t(1.0)).icdf(t(0.5)),
        lambda: D.VonMises(t(0.0), t(1.0)).entropy(),
        lambda: D.Kumaraswamy(t(1.0), t(-1.0)),
        lambda: D.Kumaraswamy(t([-1.0, 2.0]), t(1.0)),
        lambda: D.Kumaraswamy(t(1.0), t(2.0)).log_prob(t([1.5])),
        lambda: D.Kumaraswamy(t(2.0), t(2.0)).cdf(t([1.5])),
        lambda: D.Kumaraswamy(t([1.0, 2.0]), t(2.0)).log_prob(t([0.1, 0.2, 0.3])),
    ]


def test_validation_errors_match_torch():
    for i, (fn, ft) in enumerate(zip(_bad(ndgrad), _bad(torch))):
        e = _err(ft)
        assert e is not None, i
        assert _err(fn) == e, i


def test_validate_args_off():
    for L in (ndgrad, torch):
        D = L.distributions
        D.GeneralizedPareto(0.0, -1.0, 0.3, validate_args=False)
        D.VonMises(0.0, -1.0, validate_args=False)
        D.Kumaraswamy(-1.0, 1.0, validate_args=False)
        D.ContinuousBernoulli(0.3, validate_args=False).log_prob(L.tensor(2.0))
        D.VonMises(0.0, 1.0, validate_args=False).log_prob(L.tensor(float("nan")))


# ---------------------------------------------------------------- sampling


@pytest.mark.parametrize("name", ["cb_probs", "cb_logits", "kumaraswamy"])
def test_sample_moments(name):
    ndgrad.manual_seed(0)
    d, _ = _build(ndgrad, name)
    s = d.sample((20000,))
    assert tuple(s.shape) == (20000,) + tuple(d.batch_shape) and not s.requires_grad
    assert str(s.dtype) == "torch.float64" and bool(d.support.check(s).all())
    ndgrad.manual_seed(0)
    assert (d.sample((20000,)) == s).all()               # manual_seed reproduces the draws
    x, m, v = _np(s), _np(d.mean), _np(d.variance)
    # 5 standard errors for the mean, 8 % for the variance
    np.testing.assert_array_less(np.abs(x.mean(0) - m), 5 * np.sqrt(v / len(x)))
    np.testing.assert_allclose(x.var(0), v, rtol=0.08)


def test_generalized_pareto_sample_moments():
    ps = dict(loc=np.array([0.5, -1.0, 0.0]), scale=np.array([[0.7], [2.0]]),
              concentration=np.array([[0.15, 0.0, -0.4], [-0.9, 0.1, -0.2]]))
    ndgrad.manual_seed(1)
    d = nd.GeneralizedPareto(**{k: _t(ndgrad, v) for k, v in ps.items()})
    s = d.sample((20000,))
    assert tuple(s.shape) == (20000, 2, 3) and bool(d.support.check(s).all())
    x, m, v = _np(s), _np(d.mean), _np(d.variance)
    np.testing.assert_array_less(np.abs(x.mean(0) - m), 5 * np.sqrt(v / len(x)))
    np.testing.assert_allclose(x.var(0), v, rtol=0.1)
    # and its cdf values are uniform (PyTorch's cdf, float32)
    u = td.GeneralizedPareto(**{k: torch.tensor(v, dtype=torch.float32)
                                for k, v in ps.items()}).cdf(torch.tensor(x, dtype=torch.float32))
    for q in (0.25, 0.5, 0.75):
        assert np.all(np.abs((u.numpy() <= q).mean(0) - q) < 5 * math.sqrt(q * (1 - q) / 20000))


def test_von_mises_sampler():
    loc = np.array([0.5, -3.0, 3.1])
    k = np.array([[1e-7], [0.3], [2.0], [40.0]])
    ndgrad.manual_seed(2)
    d = nd.VonMises(_t(ndgrad, loc), _t(ndgrad, k))
    s = d.sample((20000,))
    assert tuple(s.shape) == (20000, 4, 3) and str(s.dtype) == "torch.float64"
    x = _np(s)
    assert ((x >= -math.pi) & (x < math.pi)).all()
    # circular moments: E[cos(x - loc)] = I1(k) / I0(k) = 1 - variance, E[sin(x - loc)] = 0
    c, sn = np.cos(x - loc), np.sin(x - loc)
    r = 1 - _np(d.variance)
    se = np.sqrt(np.maximum(c.var(0), sn.var(0)) / len(x)) + 1e-12
    np.testing.assert_array_less(np.abs(c.mean(0) - r), 5 * se)
    np.testing.assert_array_less(np.abs(sn.mean(0)), 5 * se)
    # the cdf values (SciPy's, wrapped about loc) are uniform
    st = pytest.importorskip("scipy.stats")
    u = st.vonmises(np.broadcast_to(k, (4, 3))).cdf(np.remainder(x - loc + math.pi,
                                                               2 * math.pi) - math.pi)
    for q in (0.25, 0.5, 0.75):
        assert np.all(np.abs((u <= q).mean(0) - q) < 5 * math.sqrt(q * (1 - q) / 20000))
    # float32 parameters: sampled in float64, returned in float32 (as PyTorch)
    f = nd.VonMises(ndgrad.tensor([0.0, 1.0]), ndgrad.tensor([1e-4, 3.0])).sample((5,))
    g = td.VonMises(torch.tensor([0.0, 1.0]), torch.tensor([1e-4, 3.0])).sample((5,))
    assert str(f.dtype) == str(g.dtype) == "torch.float32" and f.shape == g.shape


def _same_noise_samples(L, name, grad=True):
    """(rsample's output given the uniform draw u, u) in each library: CB and GP take icdf(u);
    Kumaraswamy pushes u through its transforms, which is icdf(1 - u)."""
    d, ps = (_gp(L, L.float64, grad) if name == "gp" else _build(L, name, grad))
    shape = (5,) + tuple(d.batch_shape)
    if L is ndgrad:
        ndgrad.manual_seed(7)
        x = d.rsample((5,))
        ndgrad.manual_seed(7)
        u = ndgrad.rand(shape, dtype=ndgrad.float64)
        return x, ps, u
    return d, ps


@pytest.mark.parametrize("name", ["cb_probs", "cb_logits", "kumaraswamy", "gp"])
def test_rsample_gradients_match_torch_given_the_noise(name):
    x, ps, u = _same_noise_samples(ndgrad, name)
    w = R.standard_normal(tuple(x.shape))
    gn = ndgrad.autograd.grad((x * _t(ndgrad, w)).sum(), [ps[k] for k in sorted(ps)])
    u = u.numpy()
    d, tps = _same_noise_samples(torch, name)
    ut = torch.tensor(1 - u if name == "kumaraswamy" else u)
    xt = d.icdf(ut)
    _close(xt, x, 1e-12)
    gt = torch.autograd.grad((xt * torch.tensor(w)).sum(), [tps[k] for k in sorted(tps)])
    for a, b in zip(gt, gn):
        _close(a, b, 1e-10)


# ---------------------------------------------------------------- gradients


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_match_torch(name):
    _, params, values, quantiles = CASES[name]
    w = R.standard_normal((2, 3) if name != "cb_lims" else (4,))
    grads = []
    for L in (ndgrad, torch):
        d, ps = _build(L, name, grad=True)
        out = []
        for what, f in _quantities(d, L, values, quantiles).items():
            if what == "mode":
                continue
            y = _outcome(f)
            if isinstance(y, tuple):
                out.append(None)
                continue
            gs = L.autograd.grad((y * _t(L, w)).sum(), [ps[k] for k in sorted(ps)],
                                 allow_unused=True, retain_graph=True)
            out.append([None if g is None else _np(g) for g in gs])
        grads.append(out)
    for a, b in zip(*grads):
        assert (a is None) == (b is None)
        for x, y in zip(a or [], b or []):
            if y is None:
                assert x is None or not np.any(x)
            else:
                _close(y, x, 1e-9)


def _gradchecks(f, inputs):
    nd.Distribution.set_default_validate_args(False)   # perturbed inputs may leave a support
    try:
        assert gradcheck(f, inputs)
        assert gradgradcheck(f, inputs)
    finally:
        nd.Distribution.set_default_validate_args(True)


GRADCHECK = {
    # the probs stay inside one side of the lims under the finite-difference steps
    "cb_probs": (lambda p: nd.ContinuousBernoulli(probs=p), [[0.15, 0.4995, 0.8]], 0.35),
    "cb_logits": (lambda l: nd.ContinuousBernoulli(logits=l), [[-1.0, 0.0002, 2.0]], 0.35),
    "von_mises": (lambda m, k: nd.VonMises(m, k), [[0.3, -1.0, 2.0], [0.5, 3.0, 6.0]], 0.7),
    "kumaraswamy": (lambda a, b: nd.Kumaraswamy(a, b), [[0.8, 2.0, 3.0], [1.5, 0.7, 2.5]],
                    0.35),
    "gp": (lambda m, s, c: nd.GeneralizedPareto(m, s, c),
           [[0.1, -0.2, 0.0], [0.8, 1.5, 1.2], [0.3, -0.25, 0.2]], 0.6),
}


@pytest.mark.parametrize("name", sorted(GRADCHECK))
def test_gradcheck_and_gradgradcheck(name):
    build, params, v = GRADCHECK[name]
    ts = [_t(ndgrad, p, grad=True) for p in params]
    value = ndgrad.tensor(v, dtype=ndgrad.float64)
    q = ndgrad.tensor(0.4, dtype=ndgrad.float64)

    def f(*xs):
        d = build(*xs)
        out = [d.log_prob(value), d.variance]
        if name != "von_mises":
            out += [d.entropy(), d.cdf(value), d.icdf(q), d.mean]
        if name == "kumaraswamy":
            out.append(d.mode[2:])
        return tuple(out)
    _gradchecks(f, ts)


@pytest.mark.parametrize("name", ["cb_probs", "kumaraswamy", "gp"])
def test_rsample_gradcheck(name):
    build, params, _ = GRADCHECK[name]
    ts = [_t(ndgrad, p, grad=True) for p in params]

    def f(*xs):
        ndgrad.manual_seed(11)                            # the same noise at every call
        return build(*xs).rsample((2,))
    _gradchecks(f, ts)


# ---------------------------------------------------------------- KL divergence


KL_BUILD = {
    "cb": ("ContinuousBernoulli", dict(probs=[0.2, 0.4999, 0.85])),
    "cb2": ("ContinuousBernoulli", dict(logits=[[1.2, -0.3, 0.0002], [-2.0, 0.8, 0.1]])),
    "beta": ("Beta", dict(concentration1=[1.5, 0.7, 3.0], concentration0=[2.0, 1.1, 0.6])),
    "exponential": ("Exponential", dict(rate=[0.5, 1.5, 3.0])),
    "normal": ("Normal", dict(loc=[0.1, 0.7, -0.5], scale=[0.4, 1.2, 2.0])),
    # the first two cover [0, 1], the third does not
    "uniform_wide": ("Uniform", dict(low=[-0.5, -1.0, -0.1], high=[1.5, 1.2, 0.9])),
    "uniform_in": ("Uniform", dict(low=[0.1, 0.3, -0.2], high=[0.6, 0.95, 0.5])),
    "gamma": ("Gamma", dict(concentration=[1.5, 2.0, 0.7], rate=[1.0, 0.5, 2.0])),
    "gumbel": ("Gumbel", dict(loc=[0.1, 0.5, -1.0], scale=[1.0, 0.3, 2.0])),
    "laplace": ("Laplace", dict(loc=[0.1, 0.5, -1.0], scale=[1.0, 0.3, 2.0])),
    "pareto": ("Pareto", dict(scale=[0.5, 1.0, 2.0], alpha=[1.5, 3.0, 2.5])),
}
KL_PAIRS = [("cb", "cb2"), ("cb2", "cb"), ("beta", "cb"), ("cb", "exponential"),
            ("cb", "normal"), ("cb", "uniform_wide"), ("cb", "uniform_in"),
            ("uniform_in", "cb"), ("cb", "pareto"), ("exponential", "cb"), ("gamma", "cb"),
            ("gumbel", "cb"), ("laplace", "cb"), ("normal", "cb"), ("pareto", "cb")]


def _kl_side(L, name, leaves):
    family, params = KL_BUILD[name]
    ps = {k: _t(L, v, grad=True) for k, v in params.items()}
    leaves.extend(ps.values())
    return getattr(L.distributions, family)(**ps)


@pytest.mark.parametrize("p,q", KL_PAIRS, ids=[f"{a}-{b}" for a, b in KL_PAIRS])
def test_kl_matches_torch(p, q):
    out = []
    for L in (ndgrad, torch):
        leaves = []
        kl = L.distributions.kl_divergence(_kl_side(L, p, leaves), _kl_side(L, q, leaves))
        finite = np.isfinite(_np(kl))
        gs = None
        if kl.requires_grad and finite.any():
            gs = L.autograd.grad(kl[L.tensor(finite)].sum(), leaves, allow_unused=True)
        out.append((kl, gs))
    (kn, gn), (kt, gt) = out
    _close(kt, kn, 1e-10)
    assert (gn is None) == (gt is None)
    for a, b in zip(gt or (), gn or ()):
        if b is None:
            assert a is None or not np.any(_np(a))
        else:
            _close(a, b, 1e-9)


def test_kl_edges_and_unregistered_pairs():
    # a Uniform(0, 1) q covers the CB's support, so KL(CB || q) = -H(CB) is finite (PyTorch's
    # non-strict test calls it infinite), and so is KL(Uniform(0, 1) || CB)
    cb = nd.ContinuousBernoulli(_t(ndgrad, [0.3, 0.7]))
    u = nd.Uniform(_t(ndgrad, [0.0, 0.0]), _t(ndgrad, [1.0, 1.0]))
    _close(-cb.entropy(), nd.kl_divergence(cb, u))
    beta11 = td.Beta(_t(torch, [1.0, 1.0]), _t(torch, [1.0, 1.0]))     # Uniform(0, 1)
    _close(td.kl_divergence(beta11, td.ContinuousBernoulli(_t(torch, [0.3, 0.7]))),
           nd.kl_divergence(u, cb))
    assert np.isinf(_np(nd.kl_divergence(nd.Uniform(_t(ndgrad, -0.1), 1.0), cb))).all()
    assert np.isinf(_np(nd.kl_divergence(cb, nd.Uniform(_t(ndgrad, 0.1), 1.0)))).all()
    # a CB against itself: zero; gradcheck of the CB-CB pair
    _close(np.zeros(2), nd.kl_divergence(cb, nd.ContinuousBernoulli(logits=cb.logits)))
    p = _t(ndgrad, [0.2, 0.6], grad=True)
    l = _t(ndgrad, [0.3, -1.0], grad=True)
    _gradchecks(lambda p, l: nd.kl_divergence(nd.ContinuousBernoulli(p),
                                              nd.ContinuousBernoulli(logits=l)), [p, l])
    # Kumaraswamy pairs go through TransformedDistribution's: equal transforms give the base
    # KL (zero), different ones raise, as PyTorch
    for L in (ndgrad, torch):
        D = L.distributions
        k = D.Kumaraswamy(_t(L, [1.5, 2.0]), _t(L, 3.0))
        assert not np.any(_np(D.kl_divergence(k, D.Kumaraswamy(k.concentration1,
                                                                  k.concentration0))))
    pairs = lambda D, t: [(D.Kumaraswamy(t(1.5), t(3.0)), D.Kumaraswamy(t(2.0), t(3.0))),  # noqa
                          (D.VonMises(t(0.0), t(1.0)), D.VonMises(t(1.0), t(2.0))),
                          (D.GeneralizedPareto(t(0.0), t(1.0), t(0.2)),
                           D.GeneralizedPareto(t(0.0), t(2.0), t(0.1))),
                          (D.ContinuousBernoulli(t(0.3)), D.Kumaraswamy(t(1.0), t(2.0))),
                          (D.Normal(t(0.0), t(1.0)), D.VonMises(t(1.0), t(2.0)))]
    for (a, b), (c, d) in zip(pairs(nd, lambda x: _t(ndgrad, x)),
                              pairs(td, lambda x: _t(torch, x))):
        assert _err(lambda: nd.kl_divergence(a, b)) == _err(lambda: td.kl_divergence(c, d))
        assert _err(lambda: nd.kl_divergence(a, b))[0] == "NotImplementedError"


def test_public_names_and_modules():
    for name in ("ContinuousBernoulli", "GeneralizedPareto", "VonMises", "Kumaraswamy"):
        assert name in nd.__all__ and name in td.__all__
        mod = getattr(td, name).__module__.rsplit(".", 1)[1]
        assert getattr(getattr(nd, mod), name) is getattr(nd, name)
        assert issubclass(getattr(nd, name), nd.Distribution)
    assert issubclass(nd.ContinuousBernoulli, nd.ExponentialFamily)
    assert issubclass(nd.Kumaraswamy, nd.TransformedDistribution)
