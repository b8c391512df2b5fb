"""LowRankMultivariateNormal, Wishart, LKJCholesky and CorrCholeskyTransform against PyTorch
(float64, broadcasting batch shapes): densities, entropies, moments and covariance properties,
their parameter gradients, float64 gradcheck and gradgradcheck, argument errors, reparameterised
samples given the same noise, sampling moments under a fixed seed, and the KL pairs."""
import math
import warnings

import numpy as np
import pytest

import ndgrad
import ndgrad.distributions as nd
from ndgrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
td = torch.distributions

R = np.random.RandomState(11)


def _spd(n, batch=()):
    a = R.normal(size=batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) / n + np.eye(n)


def _corr_cholesky(n, batch=()):
    c = _spd(n, batch)
    d = np.sqrt(np.einsum("...ii->...i", c))
    return np.linalg.cholesky(c / d[..., :, None] / d[..., None, :])


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def _close(a, b, tol=1e-10):
    a, b = _np(a), _np(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _t(lib, a, grad=False):
    return lib.tensor(np.asarray(a, dtype=np.float64).tolist(), dtype=lib.float64,
                      requires_grad=grad)


def _err(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001
        name = "LinAlgError" if "LinAlgError" in type(e).__name__ else type(e).__name__
        return name, str(e).replace("ndgrad", "torch")
    return None


@pytest.fixture
def no_validation():
    nd.Distribution.set_default_validate_args(False)
    yield
    nd.Distribution.set_default_validate_args(True)


# name: (build(D, **params), params (numpy), a value in the support (numpy))
CASES = {
    "lowrank": (lambda D, m, W, d: D.LowRankMultivariateNormal(m, W, d),
                dict(m=R.normal(size=(2, 4)), W=R.normal(size=(4, 2)),
                     d=R.uniform(0.5, 2, (4,))), R.normal(size=(3, 2, 4))),
    "lowrank_batched_factor": (lambda D, m, W, d: D.LowRankMultivariateNormal(m, W, d),
                               dict(m=R.normal(size=(3,)), W=R.normal(size=(2, 1, 3, 1)),
                                    d=R.uniform(0.5, 2, (5, 3))), R.normal(size=(2, 5, 3))),
    "wishart_cov": (lambda D, df, S: D.Wishart(df, covariance_matrix=S),
                    dict(df=np.array([3.5, 7.0]), S=_spd(3)), _spd(3, (2,))),
    "wishart_prec": (lambda D, df, P: D.Wishart(df, precision_matrix=P),
                     dict(df=np.array(4.2), P=_spd(2, (3,))), _spd(2, (4, 3))),
    "wishart_tril": (lambda D, df, L: D.Wishart(df, scale_tril=L),
                     dict(df=np.array([[5.0], [6.5]]), L=np.linalg.cholesky(_spd(3, (3,)))),
                     _spd(3, (2, 3))),
    "lkj2": (lambda D, c: D.LKJCholesky(2, c), dict(c=np.array([0.5, 1.0, 3.0])),
             _corr_cholesky(2, (3,))),
    "lkj4": (lambda D, c: D.LKJCholesky(4, c), dict(c=np.array([[0.7], [2.5]])),
             _corr_cholesky(4, (3, 2, 1))),
}
LOWRANK = ["lowrank", "lowrank_batched_factor"]
WISHART = ["wishart_cov", "wishart_prec", "wishart_tril"]
LKJ = ["lkj2", "lkj4"]


def _build(lib, name, grad=False):
    build, params, value = CASES[name]
    ps = {k: _t(lib, v, grad) for k, v in params.items()}
    return build(lib.distributions, **ps), ps, _t(lib, value)


def _symmetrised(name, f):
    """For gradcheck: a covariance or precision parameter perturbed through both triangles
    and a Cholesky factor through its lower one, so every perturbation stays admissible."""
    def g(*xs):
        out = []
        for k, x in zip(sorted(CASES[name][1]), xs):
            if k in ("S", "P"):
                x = (x + x.mT) / 2
            elif k == "L":
                x = x.tril()
            out.append(x)
        return f(*out)
    return g


ATTRS = {
    "lowrank": ["mean", "mode", "variance", "stddev", "covariance_matrix", "precision_matrix",
                "scale_tril"],
    "wishart": ["mean", "mode", "variance", "stddev", "covariance_matrix", "precision_matrix",
                "scale_tril"],
    "lkj": [],
}


def _family(name):
    return name.rstrip("0123456789").split("_")[0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_shapes_match_torch(name):
    (n, _, v), (t, _, w) = _build(ndgrad, name), _build(torch, name)
    assert repr(n) == repr(t)
    assert tuple(n.batch_shape) == tuple(t.batch_shape)
    assert tuple(n.event_shape) == tuple(t.event_shape)
    assert n.has_rsample == t.has_rsample
    assert repr(n.support) == repr(t.support)
    _close(n.log_prob(v), t.log_prob(w))
    if _family(name) != "lkj":
        _close(n.entropy(), t.entropy())
    for attr in ATTRS[_family(name)]:
        _close(getattr(n, attr), getattr(t, attr))


@pytest.mark.parametrize("name", sorted(CASES))
def test_parameter_gradients_match_torch(name):
    grads = []
    for lib in (ndgrad, torch):
        d, ps, v = _build(lib, name, grad=True)
        keys = sorted(ps)
        outs = [d.log_prob(v).sum()]
        if _family(name) != "lkj":
            outs += [d.entropy().sum(), d.variance.sum(), (d.covariance_matrix.sin()).sum(),
                     d.precision_matrix.cos().sum(), d.scale_tril.sum()]
        row = []
        for o in outs:
            gs = lib.autograd.grad(o, [ps[k] for k in keys], allow_unused=True,
                                   retain_graph=True)
            row.append([None if g is None else _np(g) for g in gs])
        grads.append(row)
    for a_row, b_row in zip(*grads):
        for k, a, b in zip(sorted(CASES[name][1]), a_row, b_row):
            if b is None:
                assert a is None or not np.any(a)
                continue
            if k == "L":   # torch's cholesky_solve backward also fills the unused upper half
                a, b = np.tril(a), np.tril(b)
            # the Wishart entropy differentiates digamma: PyTorch's CPU trigamma is off by up
            # to ~5e-10 relative
            _close(a, b, 1e-8 if _family(name) == "wishart" else 1e-10)


@pytest.mark.parametrize("name", sorted(CASES))
def test_log_prob_and_entropy_gradcheck(name, no_validation):
    build, params, value = CASES[name]
    keys = sorted(params)
    ps = [_t(ndgrad, params[k], True) for k in keys]
    v = _t(ndgrad, value)

    def f(*xs):
        d = build(nd, **dict(zip(keys, xs)))
        out = [d.log_prob(v)]
        if _family(name) != "lkj":
            out.append(d.entropy())
        return tuple(out)

    f = _symmetrised(name, f)
    assert gradcheck(f, ps)
    assert gradgradcheck(f, ps)


def test_log_prob_gradcheck_in_the_value(no_validation):
    for name in ["lowrank", "wishart_cov", "lkj4"]:
        d, _, v = _build(ndgrad, name)
        v = v.detach().requires_grad_()
        if name == "lkj4":
            f = lambda x: d.log_prob(x.tril())   # noqa: E731
        elif name == "wishart_cov":
            f = lambda x: d.log_prob((x + x.mT) / 2)   # noqa: E731
        else:
            f = d.log_prob
        assert gradcheck(f, [v]) and gradgradcheck(f, [v]), name


@pytest.mark.parametrize("name", sorted(CASES))
def test_expand_matches_torch(name):
    (n, _, v), (t, _, w) = _build(ndgrad, name), _build(torch, name)
    if _family(name) != "lkj":
        for d in (n, t):
            d.covariance_matrix, d.precision_matrix    # cached before expanding
    batch = (2,) + tuple(n.batch_shape)
    en, et = n.expand(batch), t.expand(batch)
    extra = v.dim() - len(n.batch_shape) - len(n.event_shape)
    v, w = v[(0,) * extra], w[(0,) * extra]      # one value, broadcast over the new batch
    assert type(en) is type(n) and repr(en) == repr(et)
    assert tuple(en.batch_shape) == tuple(et.batch_shape)
    _close(en.log_prob(v), et.log_prob(w))
    if _family(name) != "lkj":
        _close(en.entropy(), et.entropy())
        for attr in ATTRS[_family(name)]:
            _close(getattr(en, attr), getattr(et, attr))
    assert tuple(en.sample((3,)).shape) == (3,) + batch + tuple(n.event_shape)


# ---------------------------------------------------------------- errors


def _errors(D, t):
    return [
        lambda: D.LowRankMultivariateNormal(t(0.0), t([[1.0]]), t([1.0])),
        lambda: D.LowRankMultivariateNormal(t([0.0, 0.0]), t([1.0, 1.0]), t([1.0, 1.0])),
        lambda: D.LowRankMultivariateNormal(t([0.0, 0.0]), t([[1.0]] * 3), t([1.0, 1.0])),
        lambda: D.LowRankMultivariateNormal(t([0.0, 0.0]), t([[1.0]] * 2), t([1.0] * 3)),
        lambda: D.LowRankMultivariateNormal(t([[0.0, 0.0]] * 3), t([[[1.0]] * 2] * 2),
                                            t([1.0, 1.0])),
        lambda: D.LowRankMultivariateNormal(t([0.0, 0.0]), t([[1.0]] * 2), t([1.0, -1.0])),
        lambda: D.LowRankMultivariateNormal(t([0.0, 0.0]), t([[1.0]] * 2), t([1.0, 0.0])),
        lambda: D.LowRankMultivariateNormal(t([0.0, math.nan]), t([[1.0]] * 2), t([1.0, 1.0])),
        lambda: D.LowRankMultivariateNormal(t([0.0, 0.0]), t([[1.0]] * 2),
                                            t([1.0, 1.0])).log_prob(t([1.0])),
        lambda: D.Wishart(3.0),
        lambda: D.Wishart(3.0, covariance_matrix=t(np.eye(2)), scale_tril=t(np.eye(2))),
        lambda: D.Wishart(3.0, scale_tril=t([1.0, 2.0])),
        lambda: D.Wishart(1.5, covariance_matrix=t(np.eye(3))),
        lambda: D.Wishart(t([4.0, 2.0]), covariance_matrix=t(np.eye(3))),
        lambda: D.Wishart(4.0, covariance_matrix=t([[1.0, 2.0], [2.0, 1.0]])),
        lambda: D.Wishart(4.0, scale_tril=t([[1.0, 1.0], [0.0, 1.0]])),
        lambda: D.Wishart(4.0, precision_matrix=t([[1.0, 0.5], [0.4, 1.0]])),
        lambda: D.Wishart(4.0, covariance_matrix=t(np.eye(2))).log_prob(t(-np.eye(2))),
        lambda: D.Wishart(4.0, covariance_matrix=t(np.eye(2))).log_prob(t(np.eye(3))),
        lambda: D.LKJCholesky(1),
        lambda: D.LKJCholesky(0, 2.0),
        lambda: D.LKJCholesky(2, t([1.0, -1.0])),
        lambda: D.LKJCholesky(2, -1.0, validate_args=False),
        lambda: D.LKJCholesky(3, 1.0).log_prob(t(2 * np.eye(3))),
        lambda: D.LKJCholesky(3, 1.0).log_prob(t(np.eye(2))),
        lambda: D.LKJCholesky(2, 1.0).log_prob(t([[1.0, 0.0], [0.6, -0.8]])),
    ]


def test_argument_errors_match_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pairs = zip(_errors(nd, lambda a: _t(ndgrad, a)), _errors(td, lambda a: _t(torch, a)))
        for i, (fn, ft) in enumerate(pairs):
            e = _err(ft)
            assert e is not None, i
            assert _err(fn) == e, i
    # a df that does not broadcast with the batch: PyTorch's torch.broadcast_shapes words its
    # message differently from its tensor broadcasting, ndgrad's uses the latter
    for D, lib in ((nd, ndgrad), (td, torch)):
        with pytest.raises(RuntimeError, match="3"):
            D.Wishart(_t(lib, [4.0, 5.0]), covariance_matrix=_t(lib, np.eye(3)[None].repeat(3, 0)))


def test_lkj_negative_concentration_error_comes_from_beta():
    # PyTorch's message shows the Beta parameters of its own (different) onion construction,
    # so only the leading text can agree
    for D, t in ((nd, lambda a: _t(ndgrad, a)), (td, lambda a: _t(torch, a))):
        with pytest.raises(ValueError, match=r"^Expected parameter concentration \(Tensor of "
                           r"shape \(3, 2\)\) of distribution Dirichlet"):
            D.LKJCholesky(3, t(-1.0))


def test_wishart_low_df_warning_matches_torch():
    for D, lib in ((nd, ndgrad), (td, torch)):
        with pytest.warns(UserWarning, match="^Low df values detected. Singular samples are "
                          "highly likely to occur for ndim - 1 < df < ndim.$"):
            D.Wishart(2.5, covariance_matrix=_t(lib, np.eye(3)))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            D.Wishart(3.0, covariance_matrix=_t(lib, np.eye(3)))


def test_wishart_mode_is_nan_where_undefined():
    S = _spd(3)
    for lib in (ndgrad, torch):
        d = lib.distributions.Wishart(_t(lib, [3.5, 4.0, 6.0]), covariance_matrix=_t(lib, S))
        m = _np(d.mode)
        assert np.isnan(m[:2]).all() and np.isfinite(m[2]).all()
        _close(m[2], 2.0 * S)


def test_wishart_number_df_with_batched_scale():
    # PyTorch keeps a number df 0-d (its repr shows "df: 5.0") and then cannot view it to the
    # batch for mean/mode/variance; ndgrad keeps the same df and repr and broadcasts it
    S = _spd(3, (2,))
    n = nd.Wishart(5.0, covariance_matrix=_t(ndgrad, S))
    t = td.Wishart(5.0, covariance_matrix=_t(torch, S))
    assert repr(n) == repr(t) and tuple(n.df.shape) == ()
    _close(n.mean, 5.0 * S)
    _close(n.variance, td.Wishart(_t(torch, [5.0, 5.0]), covariance_matrix=_t(torch, S)).variance)
    _close(n.entropy(), t.entropy())


# ---------------------------------------------------------------- sampling


def test_lowrank_rsample_matches_torch_given_the_noise(monkeypatch):
    ndgrad.manual_seed(0)
    noise = []

    def recording_randn(*shape, **kw):
        out = real_randn(*shape, **kw)
        noise.append(out.numpy())
        return out

    real_randn = ndgrad.randn
    results = []
    for lib in (ndgrad, torch):
        d, ps, _ = _build(lib, "lowrank_batched_factor", grad=True)
        if lib is ndgrad:
            from ndgrad.distributions import _torch as nd_t  # (what the distributions call)
            monkeypatch.setattr(nd_t, "randn", recording_randn)
            s = d.rsample((4,))
            monkeypatch.setattr(nd_t, "randn", real_randn)
        else:
            replay = iter(noise)
            monkeypatch.setattr(td.lowrank_multivariate_normal, "_standard_normal",
                                lambda shape, dtype, device: torch.tensor(next(replay)))
            s = d.rsample((4,))
        keys = sorted(ps)
        gs = lib.autograd.grad((s.sin() * s).sum(), [ps[k] for k in keys])
        results.append([s] + list(gs))
    assert len(noise) == 2
    for a, b in zip(*results):
        _close(a, b)


def test_lowrank_rsample_gradcheck(no_validation):
    build, params, _ = CASES["lowrank_batched_factor"]
    keys = sorted(params)

    def f(*xs):
        ndgrad.manual_seed(3)    # the same noise at every evaluation
        return build(nd, **dict(zip(keys, xs))).rsample((2,))

    ps = [_t(ndgrad, params[k], True) for k in keys]
    assert gradcheck(f, ps) and gradgradcheck(f, ps)


def test_lowrank_sampling_moments():
    ndgrad.manual_seed(0)
    d, _, _ = _build(ndgrad, "lowrank")
    s = _np(d.sample((20000,)))
    assert s.shape == (20000, 2, 4)
    mean, cov = _np(d.mean), _np(d.covariance_matrix)
    sd = np.sqrt(np.einsum("...ii->...i", cov))
    np.testing.assert_array_less(np.abs(s.mean(0) - mean), 5 * sd / np.sqrt(len(s)))
    c = s - s.mean(0)
    emp = np.einsum("nbi,nbj->bij", c, c) / len(s)
    np.testing.assert_allclose(emp, cov, atol=0.08 * np.abs(cov).max())


@pytest.mark.parametrize("name", WISHART)
def test_wishart_sampling_moments(name):
    ndgrad.manual_seed(1)
    d, _, _ = _build(ndgrad, name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")        # no singular samples here, so no warning
        s = d.sample((20000,))
    assert tuple(s.shape) == (20000,) + tuple(d.batch_shape) + tuple(d.event_shape)
    assert bool(d.support.check(s).all()) and not s.requires_grad
    s = _np(s)
    mean, var = _np(d.mean), _np(d.variance)
    np.testing.assert_array_less(np.abs(s.mean(0) - mean), 5 * np.sqrt(var / len(s)))
    np.testing.assert_allclose(s.var(0), var, rtol=0.12)


def test_wishart_rsample_gradient_is_unbiased():
    # E[X] = df L L^T: the mean of the reparameterised samples' gradients estimates its gradient
    ndgrad.manual_seed(2)
    df = _t(ndgrad, 4.5, True)
    L = _t(ndgrad, np.linalg.cholesky(_spd(2)), True)
    x = nd.Wishart(df, scale_tril=L).rsample((20000,))
    g_df, g_L = ndgrad.autograd.grad(x.sum(), [df, L])
    Ln = _np(L)
    ones = np.ones((2, 2))
    exact_L = 2 * 4.5 * ones @ Ln * len(x)              # d/dL sum(df L L^T), per sample
    np.testing.assert_allclose(_np(g_df) / len(x), (Ln @ Ln.T).sum(), rtol=0.05)
    np.testing.assert_allclose(np.tril(_np(g_L)), np.tril(exact_L), rtol=0.05)


def test_wishart_redraws_singular_samples(monkeypatch):
    df = _t(ndgrad, [3.0, 4.0], True)
    d = nd.Wishart(df, covariance_matrix=_t(ndgrad, _spd(3)))
    real = d._bartlett
    calls = []

    def first_singular(shape):
        x = real(shape)
        calls.append(tuple(shape))
        if len(calls) == 1:          # sample 1, batch member 0 comes out singular
            x = x.clone()
            x[1, 0] = 0.0
        return x

    monkeypatch.setattr(d, "_bartlett", first_singular)
    with pytest.warns(UserWarning, match="^Singular sample detected.$"):
        s = d.rsample((3,))
    assert calls == [(3,), (1,)]      # only the singular sample index is drawn again
    assert tuple(s.shape) == (3, 2, 3, 3) and bool(d.support.check(s).all())
    (g,) = ndgrad.autograd.grad(s.sum(), [df])     # the redrawn samples stay reparameterised
    assert np.isfinite(_np(g)).all() and (_np(g) != 0).all()
    calls.clear()
    with pytest.warns(UserWarning, match="Singular sample detected."):
        s = d.rsample((3,), max_try_correction=0)
    assert calls == [(3,)] and not bool(d.support.check(s[1, 0]))


def test_wishart_redraws_until_a_valid_sample(monkeypatch):
    d = nd.Wishart(4.0, covariance_matrix=_t(ndgrad, np.eye(2)))
    real, calls = d._bartlett, []

    def singular_thrice(shape):
        calls.append(tuple(shape))
        x = real(shape)
        return x * 0 if len(calls) <= 3 else x

    monkeypatch.setattr(d, "_bartlett", singular_thrice)
    with pytest.warns(UserWarning):
        s = d.rsample()
    assert calls == [(), (1,), (1,), (1,)] and tuple(s.shape) == (2, 2)
    assert bool(d.support.check(s))


def _lkj_marginal_variance(dim, eta):
    # every off-diagonal correlation of LKJ(dim, eta) is 2 Beta(b, b) - 1, b = eta - 1 + dim / 2
    return 1.0 / (2 * eta + dim - 1)


@pytest.mark.parametrize("dim,eta", [(2, 0.5), (3, 1.0), (5, 2.5)])
def test_lkj_samples_follow_the_lkj_law(dim, eta):
    ndgrad.manual_seed(4)
    d = nd.LKJCholesky(dim, _t(ndgrad, eta))
    s = d.sample((20000,))
    assert tuple(s.shape) == (20000, dim, dim) and str(s.dtype) == "torch.float64"
    assert bool(d.support.check(s).all())
    c = _np(s @ s.mT)
    i, j = np.tril_indices(dim, -1)
    r = c[:, i, j]
    v = _lkj_marginal_variance(dim, eta)
    np.testing.assert_array_less(np.abs(r.mean(0)), 5 * np.sqrt(v / len(r)))
    np.testing.assert_allclose(r.var(0), v, rtol=0.06)
    # the onion construction: L_ii^2 = 1 - Beta(i / 2, eta + (dim - 1 - i) / 2), so
    # E[L_ii^2] = (eta + (dim - 1 - i) / 2) / (eta + (dim - 1) / 2)
    d2 = np.einsum("nii->ni", _np(s)) ** 2
    i = np.arange(dim)
    exact = (eta + (dim - 1 - i) / 2) / (eta + (dim - 1) / 2)
    np.testing.assert_array_less(np.abs(d2.mean(0) - exact), 5 * d2.std(0) / np.sqrt(len(d2))
                                 + 1e-12)


def test_lkj_density_is_normalised():
    # dim 2: L = [[1, 0], [x, sqrt(1 - x^2)]], a density in x on (-1, 1)
    x = np.linspace(-1, 1, 20001)[1:-1]
    L = np.zeros((len(x), 2, 2))
    L[:, 0, 0], L[:, 1, 0], L[:, 1, 1] = 1, x, np.sqrt(1 - x ** 2)
    for eta in (1.0, 1.6, 3.0):
        p = np.exp(_np(nd.LKJCholesky(2, eta).log_prob(ndgrad.from_numpy(L))))
        assert abs(np.trapezoid(p, x) - 1) < 5e-4
    # dim 3: uniform points in (-1, 1) x the unit disc for (L10, (L20, L21))
    g = np.random.RandomState(0)
    n = 100000
    a = g.uniform(-1, 1, n)
    rho, phi = np.sqrt(g.uniform(0, 1, n)), g.uniform(0, 2 * np.pi, n)
    L = np.zeros((n, 3, 3))
    L[:, 0, 0] = 1
    L[:, 1, 0], L[:, 1, 1] = a, np.sqrt(1 - a ** 2)
    L[:, 2, 0], L[:, 2, 1] = rho * np.cos(phi), rho * np.sin(phi)
    L[:, 2, 2] = np.sqrt(1 - rho ** 2)
    p = np.exp(_np(nd.LKJCholesky(3, 1.5).log_prob(ndgrad.from_numpy(L))))
    assert abs(p.mean() * 2 * np.pi - 1) < 0.02


def test_lkj_sample_is_not_differentiable():
    c = _t(ndgrad, 1.5, True)
    d = nd.LKJCholesky(3, c)
    assert not d.has_rsample and not d.sample((2,)).requires_grad
    with pytest.raises(NotImplementedError):
        d.rsample()


# ---------------------------------------------------------------- KL


def _kl_pair(lib, kind, shift, leaves):
    def t(a):
        x = _t(lib, np.asarray(a) * (1 + 0.1 * shift), True)
        leaves.append(x)
        return x
    D = lib.distributions
    g = np.random.RandomState(20 + shift)
    if kind == "lowrank":
        return D.LowRankMultivariateNormal(t(g.normal(size=(2, 3))), t(g.normal(size=(3, 2))),
                                           t(g.uniform(0.5, 2, (3,))))
    if kind == "lowrank_b":
        return D.LowRankMultivariateNormal(t(g.normal(size=(3,))), t(g.normal(size=(2, 3, 1))),
                                           t(g.uniform(0.5, 2, (2, 3))))
    if kind == "mvn":
        return D.MultivariateNormal(t(g.normal(size=(3,))),
                                    scale_tril=t(np.linalg.cholesky(_spd(3, (2,)))))
    if kind == "mvn_cov":
        return D.MultivariateNormal(t(g.normal(size=(2, 3))), covariance_matrix=t(_spd(3)))
    if kind == "wishart":
        return D.Wishart(t(4.0 + shift), covariance_matrix=t(_spd(3)))
    raise AssertionError(kind)


KL = [("lowrank", "lowrank"), ("lowrank", "lowrank_b"), ("lowrank_b", "lowrank"),
      ("mvn", "lowrank"), ("mvn_cov", "lowrank_b"), ("lowrank", "mvn"), ("lowrank_b", "mvn_cov"),
      ("wishart", "wishart")]


@pytest.mark.parametrize("p,q", KL)
def test_kl_matches_torch(p, q):
    out = []
    for lib in (ndgrad, torch):
        leaves = []
        R.seed(5)
        kl = lib.distributions.kl_divergence(_kl_pair(lib, p, 0, leaves),
                                             _kl_pair(lib, q, 1, leaves))
        # (the exponential-family KL, Wishart's, detaches p's natural parameters, in PyTorch
        # as here: p's parameters get no gradient)
        gs = lib.autograd.grad(kl.sum(), leaves, allow_unused=True)
        out.append([kl] + list(gs))
    for a, b in zip(*out):
        if b is None:
            assert a is None
        else:
            _close(a, b, 1e-9)


def test_kl_gradcheck():
    g = np.random.RandomState(3)
    m = _t(ndgrad, g.normal(size=(3,)), True)
    W = _t(ndgrad, g.normal(size=(2, 3, 2)), True)
    d = _t(ndgrad, g.uniform(0.5, 2, (3,)), True)
    L = _t(ndgrad, np.linalg.cholesky(_spd(3)), True)

    def f(m, W, d, L):
        p = nd.LowRankMultivariateNormal(m, W, d)
        q = nd.LowRankMultivariateNormal(m.flip(0), W.flip(-1) * 0.5, d + 0.3)
        n = nd.MultivariateNormal(m * 0.5, scale_tril=L.tril())
        return nd.kl_divergence(p, q), nd.kl_divergence(n, p), nd.kl_divergence(p, n)

    assert gradcheck(f, [m, W, d, L]) and gradgradcheck(f, [m, W, d, L])


def test_kl_event_shape_errors_match_torch():
    def pairs(lib):
        D, t = lib.distributions, lambda a: _t(lib, a)
        a = D.LowRankMultivariateNormal(t([0.0, 0.0]), t([[1.0], [0.5]]), t([1.0, 1.0]))
        b = D.LowRankMultivariateNormal(t([0.0] * 3), t([[1.0]] * 3), t([1.0] * 3))
        c = D.MultivariateNormal(t([0.0] * 3), t(np.eye(3)))
        return [(a, b), (a, c), (c, a)]
    for (pn, qn), (pt, qt) in zip(pairs(ndgrad), pairs(torch)):
        e = _err(lambda: td.kl_divergence(pt, qt))
        assert e is not None and e == _err(lambda: nd.kl_divergence(pn, qn))


# ---------------------------------------------------------------- CorrCholeskyTransform


@pytest.mark.parametrize("shape", [(1,), (2, 3), (3, 1, 6), (10,)])
def test_corr_cholesky_transform_matches_torch(shape):
    x = R.normal(size=shape) * 1.3
    res = []
    for lib in (ndgrad, torch):
        T = lib.distributions.transforms.CorrCholeskyTransform()
        xt = _t(lib, x, True)
        y = T(xt)
        xi = T.inv(y)
        ladj = T.log_abs_det_jacobian(xt, y)
        (g,) = lib.autograd.grad(y.sin().sum() + xi.pow(2).sum() + ladj.sum(), xt)
        res.append([y, xi, ladj, g])
        assert bool(T.codomain.check(y).all())
    for a, b in zip(*res):
        _close(a, b, 1e-9)
    _close(res[0][1], x, 1e-9)         # the round trip


def test_corr_cholesky_transform_properties_match_torch():
    n, t = nd.transforms.CorrCholeskyTransform(), td.transforms.CorrCholeskyTransform()
    assert repr(n) == repr(t) and n == nd.CorrCholeskyTransform() and n != nd.ExpTransform()
    assert repr(n.domain) == repr(t.domain) and repr(n.codomain) == repr(t.codomain)
    assert n.domain.event_dim == 1 and n.codomain.event_dim == 2 and n.bijective
    assert _err(lambda: n.event_dim) == _err(lambda: t.event_dim) is not None
    for shape in [(6,), (2, 6), (1,), (0,), (), (4,), (5,), (2, 3)]:
        assert _err(lambda: n.forward_shape(shape)) == _err(lambda: t.forward_shape(shape))
        if _err(lambda: t.forward_shape(shape)) is None:
            assert n.forward_shape(shape) == t.forward_shape(shape)
        assert _err(lambda: n.inverse_shape(shape)) == _err(lambda: t.inverse_shape(shape))
        if _err(lambda: t.inverse_shape(shape)) is None:
            assert n.inverse_shape(shape) == t.inverse_shape(shape)
    assert n.forward_shape(ndgrad.Size((2, 6))) == ndgrad.Size((2, 4, 4))
    for v in [np.zeros(4), np.zeros((2, 5))]:
        assert _err(lambda: n(_t(ndgrad, v))) == _err(lambda: t(_t(torch, v))) is not None
    c = n.with_cache()
    x = _t(ndgrad, R.normal(size=(3,)))
    assert c.inv(c(x)) is x


def test_corr_cholesky_transform_gradcheck():
    T = nd.transforms.CorrCholeskyTransform()
    x = _t(ndgrad, R.normal(size=(2, 6)), True)
    y = _t(ndgrad, _corr_cholesky(4, (2,)), True)
    assert gradcheck(T, [x]) and gradgradcheck(T, [x])
    assert gradcheck(T.inv, [y]) and gradgradcheck(T.inv, [y])
    f = lambda x: T.log_abs_det_jacobian(x, T(x))   # noqa: E731
    assert gradcheck(f, [x]) and gradgradcheck(f, [x])


def test_corr_cholesky_log_det_is_the_jacobian_of_the_strict_lower_triangle():
    T = nd.transforms.CorrCholeskyTransform()
    x = _t(ndgrad, R.normal(size=(6,)))
    i, j = np.tril_indices(4, -1)
    jac = ndgrad.autograd.functional.jacobian(lambda v: T(v)[i, j], x)
    _, logdet = np.linalg.slogdet(_np(jac))
    _close(T.log_abs_det_jacobian(x, T(x)), logdet, 1e-10)


def test_biject_to_corr_cholesky_matches_torch():
    for reg in ("biject_to", "transform_to"):
        tn = getattr(nd, reg)(nd.constraints.corr_cholesky)
        tt = getattr(td, reg)(td.constraints.corr_cholesky)
        assert type(tn).__name__ == type(tt).__name__ == "CorrCholeskyTransform"
        x = R.normal(size=(2, 3))
        _close(tn(_t(ndgrad, x)), tt(_t(torch, x)))


def test_lkj_through_the_transform_matches_torch():
    # the density of an unconstrained x: log p(T(x)) + log|det J|, as a variational family uses
    x = R.normal(size=(4, 3))
    out = []
    for lib in (ndgrad, torch):
        D = lib.distributions
        T = D.biject_to(D.LKJCholesky(3, 1.7).support)
        xt = _t(lib, x, True)
        y = T(xt)
        lp = D.LKJCholesky(3, _t(lib, 1.7)).log_prob(y) + T.log_abs_det_jacobian(xt, y)
        out.append([lp] + list(lib.autograd.grad(lp.sum(), [xt])))
    for a, b in zip(*out):
        _close(a, b, 1e-10)


def test_transformed_distribution_onto_correlation_factors_matches_torch():
    x = R.normal(size=(4, 2, 3))
    out = []
    for lib in (ndgrad, torch):
        D = lib.distributions
        loc = _t(lib, np.full((2, 3), 0.2), True)
        base = D.Independent(D.Normal(loc, _t(lib, [1.0, 0.5, 2.0])), 1)
        d = D.TransformedDistribution(base, [D.transforms.CorrCholeskyTransform()])
        assert tuple(d.batch_shape) == (2,) and tuple(d.event_shape) == (3, 3)
        assert tuple(d.sample((5,)).shape) == (5, 2, 3, 3)
        lp = d.log_prob(d.transforms[0](_t(lib, x)))
        out.append([lp] + list(lib.autograd.grad(lp.sum(), [loc])))
    for a, b in zip(*out):
        _close(a, b, 1e-10)


def test_public_names():
    for name in ("LowRankMultivariateNormal", "Wishart", "LKJCholesky"):
        assert name in nd.__all__ and getattr(nd, name).__name__ == name
    assert "CorrCholeskyTransform" in nd.transforms.__all__
    assert nd.CorrCholeskyTransform is nd.transforms.CorrCholeskyTransform
    assert nd.lowrank_multivariate_normal.LowRankMultivariateNormal is nd.LowRankMultivariateNormal
    assert nd.wishart.Wishart is nd.Wishart and nd.lkj_cholesky.LKJCholesky is nd.LKJCholesky
