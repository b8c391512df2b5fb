"""KL divergences between different families, each from KL(p || q) = -H(p) - E_p[log q(x)]
with the expectation in closed form; a pair whose p puts mass outside q's support is infinite.
Also TransformedDistribution pairs with the same transforms, and the exponential-family
(Bregman) fallback."""
import math

from . import _torch as _t
from .kl import register_kl, kl_divergence, _kl_expfamily_expfamily
from .distribution import ExponentialFamily
from .continuous import Normal, Uniform, Exponential, Laplace, Gumbel, _EULER
from .gamma import Gamma, Beta
from .transformed import TransformedDistribution, Pareto
from .continuous_bernoulli import ContinuousBernoulli
from .transforms import _sum_rightmost

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)

register_kl(ExponentialFamily, ExponentialFamily)(_kl_expfamily_expfamily)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    extra = len(p.event_shape) - len(p.base_dist.event_shape)
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), extra)


def _inf(p, q):
    shape = _t.broadcast_shapes(p.batch_shape, q.batch_shape)
    like = next(v for v in list(p.__dict__.values()) + list(q.__dict__.values())
                if isinstance(v, _t.Tensor) and v.is_floating_point())
    return _t.full(shape, math.inf, dtype=like.dtype)


_REAL = (Normal, Laplace, Gumbel)
_POSITIVE = (Exponential, Gamma, Pareto)
for _p in _REAL + _POSITIVE:
    register_kl(_p, Uniform)(_inf)
    register_kl(_p, Beta)(_inf)
for _p in _REAL + (Beta, Exponential, Gamma):
    register_kl(_p, Pareto)(_inf)
for _p in _REAL:
    for _q in (Exponential, Gamma):
        register_kl(_p, _q)(_inf)
for _p in _REAL + _POSITIVE:          # all of these put mass outside [0, 1]
    register_kl(_p, ContinuousBernoulli)(_inf)
register_kl(ContinuousBernoulli, Pareto)(_inf)


# E_p[log q] for the q families, from p's first moments (and E[log x] where needed)

def _neg_log_normal(q, mean, var):
    return q.scale.log() + _LOG_SQRT_2PI + (var + (mean - q.loc).pow(2)) / (2 * q.scale.pow(2))


def _neg_log_gamma(q, mean, mean_log):
    c, r = q.concentration, q.rate
    return -c * r.log() + c.lgamma() - (c - 1) * mean_log + r * mean


def _neg_log_exponential(q, mean):
    return -q.rate.log() + q.rate * mean


def _neg_log_gumbel(q, mean, mean_exp_neg):
    """mean_exp_neg: E[exp(-x / q.scale)]."""
    return q.scale.log() + (mean - q.loc) / q.scale + (q.loc / q.scale).exp() * mean_exp_neg


def _beta_mean_log(p):
    return p.concentration1.digamma() - (p.concentration1 + p.concentration0).digamma()


register_kl(Beta, Exponential)(lambda p, q: -p.entropy() + _neg_log_exponential(q, p.mean))
register_kl(Beta, Gamma)(lambda p, q: -p.entropy() + _neg_log_gamma(q, p.mean,
                                                                    _beta_mean_log(p)))
register_kl(Beta, Normal)(lambda p, q: -p.entropy() + _neg_log_normal(q, p.mean, p.variance))


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    r = -p.entropy() + (q.high - q.low).log()
    return _t.where((q.low > 0) | (q.high < 1), math.inf, r)


def _exp_mean_log(p):
    return -_EULER - p.rate.log()


register_kl(Exponential, Gamma)(lambda p, q: -p.entropy() + _neg_log_gamma(q, p.mean,
                                                                           _exp_mean_log(p)))
register_kl(Exponential, Gumbel)(lambda p, q: -p.entropy() + _neg_log_gumbel(
    q, p.mean, p.rate / (p.rate + q.scale.reciprocal())))
register_kl(Exponential, Normal)(lambda p, q: -p.entropy() + _neg_log_normal(q, p.mean,
                                                                             p.variance))
register_kl(Gamma, Exponential)(lambda p, q: -p.entropy() + _neg_log_exponential(q, p.mean))
register_kl(Gamma, Gumbel)(lambda p, q: -p.entropy() + _neg_log_gumbel(
    q, p.mean, (p.rate / (p.rate + q.scale.reciprocal())).pow(p.concentration)))
register_kl(Gamma, Normal)(lambda p, q: -p.entropy() + _neg_log_normal(q, p.mean, p.variance))
register_kl(Gumbel, Normal)(lambda p, q: -p.entropy() + _neg_log_normal(q, p.mean, p.variance))
register_kl(Laplace, Normal)(lambda p, q: -p.entropy() + _neg_log_normal(q, p.mean, p.variance))
register_kl(Normal, Gumbel)(lambda p, q: -p.entropy() + _neg_log_gumbel(
    q, p.loc, (-p.loc / q.scale + p.scale.pow(2) / (2 * q.scale.pow(2))).exp()))


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    d, s = p.loc - q.loc, p.scale
    mean_abs = s * math.sqrt(2 / math.pi) * (-d.pow(2) / (2 * s.pow(2))).exp() \
        + d * (d / (s * math.sqrt(2))).erf()
    return -p.entropy() + (2 * q.scale).log() + mean_abs / q.scale


def _pareto_mean_log(p):
    return p.scale.log() + p.alpha.reciprocal()


register_kl(Pareto, Exponential)(lambda p, q: _t.where(
    p.alpha <= 1, math.inf, -p.entropy() + _neg_log_exponential(q, p.mean)))
register_kl(Pareto, Gamma)(lambda p, q: _t.where(
    p.alpha <= 1, math.inf, -p.entropy() + _neg_log_gamma(q, p.mean, _pareto_mean_log(p))))
register_kl(Pareto, Normal)(lambda p, q: _t.where(
    p.alpha <= 2, math.inf, -p.entropy() + _neg_log_normal(q, p.mean, p.variance)))


def _uniform_mean_log(a, b):
    """E[log x] and E[log(1 - x)] for x ~ Uniform(a, b), 0 <= a < b <= 1 where used."""
    f = lambda x: _t.xlogy(x, x) - x  # noqa: E731   an antiderivative of log x
    return (f(b) - f(a)) / (b - a), (f(1 - a) - f(1 - b)) / (b - a)


def _uniform_h(p):
    return -(p.high - p.low).log()


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    a, b = q.concentration1, q.concentration0
    ml, ml1 = _uniform_mean_log(p.low, p.high)
    lbeta = a.lgamma() + b.lgamma() - (a + b).lgamma()
    r = _uniform_h(p) - (a - 1) * ml - (b - 1) * ml1 + lbeta
    return _t.where((p.low < 0) | (p.high > 1), math.inf, r)


register_kl(Uniform, Exponential)(lambda p, q: _t.where(
    p.low < 0, math.inf, _uniform_h(p) + _neg_log_exponential(q, p.mean)))
register_kl(Uniform, Gamma)(lambda p, q: _t.where(
    p.low < 0, math.inf, _uniform_h(p) + _neg_log_gamma(
        q, p.mean, _uniform_mean_log(p.low, p.high)[0])))
register_kl(Uniform, Normal)(lambda p, q: _uniform_h(p) + _neg_log_normal(q, p.mean,
                                                                          p.variance))


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    s, a, b = q.scale, p.low, p.high
    mean_exp = s * ((-a / s).exp() - (-b / s).exp()) / (b - a)
    return _uniform_h(p) + _neg_log_gumbel(q, p.mean, mean_exp)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    ml = _uniform_mean_log(p.low, p.high)[0]
    r = _uniform_h(p) - q.alpha.log() - q.alpha * q.scale.log() + (q.alpha + 1) * ml
    return _t.where(p.low < q.scale, math.inf, r)


# ContinuousBernoulli: log q(x) = log C(q) + x logit(q) + log(1 - q) is linear in x, so
# E_p[log q] needs only p's mean. (The strict inequalities below say where p leaves q's support;
# PyTorch's CB-Uniform pairs also call the touching case Uniform(0, 1) infinite.)

def _cb_mean_log(q, mean):
    return q._log_norm() + mean * q.logits + (-q.probs).log1p()


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_cb_cb(p, q):
    return _cb_mean_log(p, p.mean) - _cb_mean_log(q, p.mean)


register_kl(Beta, ContinuousBernoulli)(lambda p, q: -p.entropy() - _cb_mean_log(q, p.mean))
register_kl(ContinuousBernoulli, Exponential)(
    lambda p, q: -p.entropy() + _neg_log_exponential(q, p.mean))
register_kl(ContinuousBernoulli, Normal)(
    lambda p, q: -p.entropy() + _neg_log_normal(q, p.mean, p.variance))


@register_kl(ContinuousBernoulli, Uniform)
def _kl_cb_uniform(p, q):
    r = -p.entropy() + (q.high - q.low).log()
    return _t.where((q.low > 0) | (q.high < 1), math.inf, r)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_cb(p, q):
    r = _uniform_h(p) - _cb_mean_log(q, p.mean)
    return _t.where((p.low < 0) | (p.high > 1), math.inf, r)
