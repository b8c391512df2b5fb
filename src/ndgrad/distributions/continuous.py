"""Continuous univariate families of location/scale type: Normal, Uniform, Exponential,
Laplace, Cauchy, Gumbel, HalfNormal, LogNormal, StudentT, and their KL pairs. Every formula is
written in ndgrad ops, so log_prob, entropy, cdf and rsample differentiate to any order."""
import math

from . import _torch as _t
from .._tensor import Size
from . import constraints as C
from .distribution import Distribution, broadcast_all
from .kl import register_kl

__all__ = ["Normal", "Uniform", "Exponential", "Laplace", "Cauchy", "Gumbel", "HalfNormal",
           "LogNormal", "StudentT"]

_EULER = 0.57721566490153286061


def _eps(t):
    return _t.finfo(t.dtype).eps


def _uniform(d, shape, like, low=0.0, high=1.0):
    return _t.rand(d._extended_shape(shape), dtype=like.dtype) * (high - low) + low


class _LocScale(Distribution):
    """A family with a real loc and a positive scale, broadcast together."""
    arg_constraints = {"loc": C.real, "scale": C.positive}
    support = C.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def _z(self, value):
        self._check(value)
        return (value - self.loc) / self.scale

    def rsample(self, sample_shape=Size()):
        return self.loc + self.scale * self._noise(sample_shape)


class Normal(_LocScale):
    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)
    stddev = property(lambda self: self.scale)
    variance = property(lambda self: self.scale.pow(2))

    def _noise(self, shape):
        return _t.randn(self._extended_shape(shape), dtype=self.loc.dtype)

    def log_prob(self, value):
        return -self._z(value) ** 2 / 2 - self.scale.log() - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        return 0.5 * (1 + (self._z(value) / math.sqrt(2)).erf())

    def icdf(self, value):
        return self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()


class Laplace(_LocScale):
    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)
    stddev = property(lambda self: math.sqrt(2) * self.scale)
    variance = property(lambda self: 2 * self.scale.pow(2))

    def rsample(self, sample_shape=Size()):
        # PyTorch's draws and arithmetic: u = uniform_(eps - 1, 1), loc - scale*sign(u)*log1p(-|u|)
        u = self.loc.new_empty(self._extended_shape(sample_shape)).uniform_(_eps(self.loc) - 1, 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        return -self._z(value).abs() - (2 * self.scale).log()

    def cdf(self, value):
        z = self._z(value)
        return 0.5 - 0.5 * z.sign() * (-z.abs()).expm1()

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()


class Cauchy(_LocScale):
    mode = property(lambda self: self.loc)

    @property
    def mean(self):
        return _t.full(self._extended_shape(), float("nan"), dtype=self.loc.dtype)

    @property
    def variance(self):
        return _t.full(self._extended_shape(), float("inf"), dtype=self.loc.dtype)

    def rsample(self, sample_shape=Size()):
        # PyTorch's: loc + cauchy_() * scale
        eps = self.loc.new_empty(self._extended_shape(sample_shape)).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        return -math.log(math.pi) - self.scale.log() - self._z(value).pow(2).log1p()

    def cdf(self, value):
        return self._z(value).atan() / math.pi + 0.5

    def icdf(self, value):
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class Gumbel(_LocScale):
    mean = property(lambda self: self.loc + self.scale * _EULER)
    mode = property(lambda self: self.loc)
    stddev = property(lambda self: (math.pi / math.sqrt(6)) * self.scale)
    variance = property(lambda self: self.stddev.pow(2))

    def rsample(self, sample_shape=Size()):
        # PyTorch's transformed Uniform(tiny, 1 - eps): u = tiny + rand * (1 - eps - tiny),
        # then log, * -1, log, and loc + (-scale) * x
        fi = _t.finfo(self.loc.dtype)
        low = _t.full_like(self.loc, fi.tiny)
        high = _t.full_like(self.loc, 1 - fi.eps)
        u = low + _uniform(self, sample_shape, self.loc) * (high - low)
        return self.loc + (-self.scale) * (0 + (-_t.ones_like(self.scale)) * u.log()).log()

    def log_prob(self, value):
        y = -self._z(value)
        return (y - y.exp()) - self.scale.log()

    def cdf(self, value):
        return (-(-self._z(value)).exp()).exp()

    def icdf(self, value):
        return self.loc - self.scale * (-value.log()).log()

    def entropy(self):
        return self.scale.log() + (1 + _EULER)


class Uniform(Distribution):
    has_rsample = True

    @property
    def arg_constraints(self):
        return {"low": C.less_than(self.high), "high": C.greater_than(self.low)}

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        super().__init__(self.low.shape, validate_args=validate_args)

    @C.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return C.interval(self.low, self.high)

    mean = property(lambda self: (self.high + self.low) / 2)
    mode = property(lambda self: self.high * float("nan"))
    stddev = property(lambda self: (self.high - self.low) / 12 ** 0.5)
    variance = property(lambda self: (self.high - self.low).pow(2) / 12)

    def rsample(self, sample_shape=Size()):
        return self.low + _uniform(self, sample_shape, self.low) * (self.high - self.low)

    def log_prob(self, value):
        self._check(value)
        inside = ((self.low <= value) & (self.high > value)).to(self.low.dtype)
        return inside.log() - (self.high - self.low).log()

    def cdf(self, value):
        self._check(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()


class Exponential(Distribution):
    arg_constraints = {"rate": C.positive}
    support = C.nonnegative
    has_rsample = True

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    mean = property(lambda self: self.rate.reciprocal())
    mode = property(lambda self: _t.zeros_like(self.rate))
    stddev = property(lambda self: self.rate.reciprocal())
    variance = property(lambda self: self.rate.pow(-2))

    def rsample(self, sample_shape=Size()):
        # PyTorch's: exponential_() draws divided by the rate
        return self.rate.new_empty(self._extended_shape(sample_shape)).exponential_() / self.rate

    def log_prob(self, value):
        self._check(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        self._check(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value):
        return -(-value).log1p() / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()


class _Folded:
    """|X| for X symmetric about 0 (`base_dist`): HalfNormal, HalfCauchy."""

    def log_prob(self, value):
        self._check(value)
        lp = self.base_dist.log_prob(value) + math.log(2)
        return _t.where(value >= 0, lp, -math.inf)

    def cdf(self, value):
        self._check(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class StudentT(Distribution):

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    arg_constraints = {"df": C.positive, "loc": C.real, "scale": C.positive}
    support = C.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        from .gamma import Chi2
        self._chi2 = Chi2(self.df, validate_args=validate_args)
        super().__init__(self.df.shape, validate_args=validate_args)

    mode = property(lambda self: self.loc)

    @property
    def mean(self):
        return _t.where(self.df > 1, self.loc, float("nan"))

    @property
    def variance(self):
        v = self.scale.pow(2) * self.df / (self.df - 2)
        v = _t.where(self.df > 2, v, float("inf"))
        return _t.where(self.df > 1, v, float("nan"))

    def rsample(self, sample_shape=Size()):
        x = _t.randn(self._extended_shape(sample_shape), dtype=self.df.dtype)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * (z / self.df).rsqrt()

    def log_prob(self, value):
        self._check(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + (0.5 * self.df).lgamma() - (0.5 * (self.df + 1)).lgamma())
        return -0.5 * (self.df + 1) * (y.pow(2) / self.df).log1p() - z

    def entropy(self):
        h = 0.5 * (self.df + 1)
        lbeta = (0.5 * self.df).lgamma() + math.lgamma(0.5) - h.lgamma()
        return (self.scale.log() + h * (h.digamma() - (0.5 * self.df).digamma())
                + 0.5 * self.df.log() + lbeta)


def _normal_kl(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


register_kl(Normal, Normal)(_normal_kl)


@register_kl(Uniform, Uniform)
def _kl_uniform(p, q):
    r = ((q.high - q.low) / (p.high - p.low)).log()
    return r.masked_fill((q.low > p.low) | (q.high < p.high), float("inf"))


@register_kl(Exponential, Exponential)
def _kl_exponential(p, q):
    ratio = q.rate / p.rate
    return ratio - 1 - ratio.log()


@register_kl(Laplace, Laplace)
def _kl_laplace(p, q):
    ratio, d = p.scale / q.scale, (p.loc - q.loc).abs()
    return -ratio.log() + d / q.scale + ratio * (-d / p.scale).exp() - 1


@register_kl(Cauchy, Cauchy)
def _kl_cauchy(p, q):
    num = (p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)
    return (num / (4 * p.scale * q.scale)).log()


@register_kl(Gumbel, Gumbel)
def _kl_gumbel(p, q):
    r, a, b = p.scale / q.scale, q.loc / q.scale, p.loc / q.scale
    return -r.log() - a + b + r * _EULER + (a + (1 + r).lgamma() - b).exp() - (1 + _EULER)


# HalfNormal and LogNormal are TransformedDistributions, as PyTorch's (transformed.py imports
# Normal from here: these come last)
from .transformed import TransformedDistribution  # noqa: E402
from .transforms import AbsTransform, ExpTransform  # noqa: E402


class HalfNormal(_Folded, TransformedDistribution):
    """|Normal(0, scale)|: a TransformedDistribution (AbsTransform) as in PyTorch."""
    arg_constraints = {"scale": C.positive}
    support = C.nonnegative

    def __init__(self, scale, validate_args=None):
        super().__init__(Normal(0, scale, validate_args=False), AbsTransform(),
                         validate_args=validate_args)

    has_rsample = True
    scale = property(lambda self: self.base_dist.scale)

    mean = property(lambda self: self.scale * math.sqrt(2 / math.pi))
    mode = property(lambda self: _t.zeros_like(self.scale))
    variance = property(lambda self: self.scale.pow(2) * (1 - 2 / math.pi))

    def rsample(self, sample_shape=Size()):
        return self.base_dist.rsample(sample_shape).abs()


class LogNormal(TransformedDistribution):
    """exp(Normal(loc, scale)): a TransformedDistribution (ExpTransform) as in PyTorch, so
    subclasses may call TransformedDistribution.__init__ (pyro's LogNormal does)."""
    arg_constraints = {"loc": C.real, "scale": C.positive}
    support = C.positive

    def __init__(self, loc, scale, validate_args=None):
        super().__init__(Normal(loc, scale, validate_args=validate_args), ExpTransform(),
                         validate_args=validate_args)

    has_rsample = True
    scale = property(lambda self: self.base_dist.scale)

    loc = property(lambda self: self.base_dist.loc)
    mean = property(lambda self: (self.loc + self.scale.pow(2) / 2).exp())
    mode = property(lambda self: (self.loc - self.scale.square()).exp())
    variance = property(lambda self: self.scale.pow(2).expm1() * (2 * self.loc
                                                                  + self.scale.pow(2)).exp())

    def rsample(self, sample_shape=Size()):
        return self.base_dist.rsample(sample_shape).exp()

    def log_prob(self, value):
        self._check(value)
        y = value.log()
        return self.base_dist.log_prob(y) - y

    def cdf(self, value):
        self._check(value)
        return self.base_dist.cdf(value.log())

    def icdf(self, value):
        return self.base_dist.icdf(value).exp()

    def entropy(self):
        return self.base_dist.entropy() + self.loc


register_kl(LogNormal, LogNormal)(lambda p, q: _normal_kl(p.base_dist, q.base_dist))
register_kl(HalfNormal, HalfNormal)(lambda p, q: _normal_kl(p.base_dist, q.base_dist))
