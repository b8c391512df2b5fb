"""TransformedDistribution: a base distribution pushed through a chain of transforms (log_prob
by the change of variables), and LogisticNormal built on it."""
from .._tensor import Size
from . import constraints as C
from .distribution import Distribution
from .independent import Independent
from .continuous import Normal
from .transforms import ComposeTransform, Transform, StickBreakingTransform, _sum_rightmost

__all__ = ["TransformedDistribution", "LogisticNormal"]


class TransformedDistribution(Distribution):
    arg_constraints = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        base_shape = base_distribution.batch_shape + base_distribution.event_shape
        base_event_dim = len(base_distribution.event_shape)
        chain = ComposeTransform(self.transforms)
        if len(base_shape) < chain.domain.event_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least "
                             f"{chain.domain.event_dim}, but got {base_shape}.")
        forward_shape = chain.forward_shape(base_shape)
        expanded = chain.inverse_shape(forward_shape)
        if tuple(base_shape) != tuple(expanded):
            base_distribution = base_distribution.expand(
                Size(expanded[:len(expanded) - base_event_dim]))
        extra = chain.domain.event_dim - base_event_dim
        if extra > 0:
            base_distribution = Independent(base_distribution, extra)
        self.base_dist = base_distribution
        event_dim = chain.codomain.event_dim + max(base_event_dim - chain.domain.event_dim, 0)
        cut = len(forward_shape) - event_dim
        super().__init__(Size(forward_shape[:cut]), Size(forward_shape[cut:]),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        shape = Size(batch_shape) + self.event_shape
        for t in reversed(self.transforms):
            shape = t.inverse_shape(shape)
        n = len(shape) - len(self.base_dist.event_shape)
        new.base_dist = self.base_dist.expand(Size(shape[:n]))
        for k in self.arg_constraints:
            v = self.__dict__.get(k)
            if isinstance(v, _t.Tensor):
                new.__dict__[k] = v.expand(Size(batch_shape))
        new._batch_shape = Size(batch_shape)
        return new

    has_rsample = property(lambda self: self.base_dist.has_rsample)

    @C.dependent_property(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        s = self.transforms[-1].codomain
        extra = len(self.event_shape) - s.event_dim
        return C.independent(s, extra) if extra > 0 else s

    def sample(self, sample_shape=Size()):
        x = self.base_dist.sample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def rsample(self, sample_shape=Size()):
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value):
        self._check(value)
        event_dim, lp, y = len(self.event_shape), 0.0, value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            lp = lp - _sum_rightmost(t.log_abs_det_jacobian(x, y),
                                     event_dim - t.domain.event_dim)
            y = x
        return lp + _sum_rightmost(self.base_dist.log_prob(y),
                                   event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        for t in reversed(self.transforms):
            value = t.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for t in self.transforms:
            value = t(value)
        return value


class LogisticNormal(TransformedDistribution):
    arg_constraints = {"loc": C.real, "scale": C.positive}
    support = C.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    loc = property(lambda self: self.base_dist.base_dist.loc)
    scale = property(lambda self: self.base_dist.base_dist.scale)


# ---------------------------------------------------------------- families built by transforms

import math  # noqa: E402

from . import _torch as _t  # noqa: E402
from .distribution import broadcast_all  # noqa: E402
from .continuous import Exponential, Cauchy, _EULER, _Folded  # noqa: E402
from .gamma import Gamma  # noqa: E402
from .kl import register_kl  # noqa: E402
from .transforms import ExpTransform, AffineTransform, PowerTransform, AbsTransform  # noqa


class Pareto(TransformedDistribution):
    """scale * exp(Exponential(alpha))."""
    arg_constraints = {"alpha": C.positive, "scale": C.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        super().__init__(Exponential(self.alpha, validate_args=validate_args),
                         [ExpTransform(), AffineTransform(loc=0, scale=self.scale)],
                         validate_args=validate_args)

    @C.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return C.greater_than_eq(self.scale)

    @property
    def mean(self):
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    mode = property(lambda self: self.scale)

    @property
    def variance(self):
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class Weibull(TransformedDistribution):
    """scale * Exponential(1) ** (1 / concentration)."""
    arg_constraints = {"scale": C.positive, "concentration": C.positive}
    support = C.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        super().__init__(Exponential(_t.ones_like(self.scale), validate_args=validate_args),
                         [PowerTransform(exponent=self.concentration_reciprocal),
                          AffineTransform(loc=0, scale=self.scale)],
                         validate_args=validate_args)

    mean = property(lambda self: self.scale * (1 + self.concentration_reciprocal).lgamma().exp())
    mode = property(lambda self: self.scale * ((self.concentration - 1) / self.concentration)
                    .pow(self.concentration_reciprocal))

    @property
    def variance(self):
        r = self.concentration_reciprocal
        return self.scale.pow(2) * ((1 + 2 * r).lgamma().exp() - (2 * (1 + r).lgamma()).exp())

    def entropy(self):
        return (_EULER * (1 - self.concentration_reciprocal)
                + (self.scale * self.concentration_reciprocal).log() + 1)


class HalfCauchy(_Folded, TransformedDistribution):
    """|Cauchy(0, scale)|."""
    arg_constraints = {"scale": C.positive}
    support = C.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(),
                         validate_args=validate_args)

    scale = property(lambda self: self.base_dist.scale)
    mean = property(lambda self: _t.full(self._extended_shape(), math.inf,
                                         dtype=self.scale.dtype))
    mode = property(lambda self: _t.zeros_like(self.scale))
    variance = property(lambda self: self.base_dist.variance)


class InverseGamma(TransformedDistribution):
    """1 / Gamma(concentration, rate)."""
    arg_constraints = {"concentration": C.positive, "rate": C.positive}
    support = C.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        super().__init__(Gamma(concentration, rate, validate_args=validate_args),
                         PowerTransform(-_t.ones_like(_t.as_tensor(rate)
                                                      if isinstance(rate, _t.Tensor)
                                                      else _t.tensor(float(rate)))),
                         validate_args=validate_args)

    concentration = property(lambda self: self.base_dist.concentration)
    rate = property(lambda self: self.base_dist.rate)

    @property
    def mean(self):
        return _t.where(self.concentration > 1, self.rate / (self.concentration - 1), math.inf)

    mode = property(lambda self: self.rate / (self.concentration + 1))

    @property
    def variance(self):
        c = self.concentration
        return _t.where(c > 2, self.rate.pow(2) / ((c - 1).pow(2) * (c - 2)), math.inf)

    def entropy(self):
        c = self.concentration
        return c + self.rate.log() + c.lgamma() - (1 + c) * c.digamma()


@register_kl(Pareto, Pareto)
def _kl_pareto(p, q):
    scale_ratio, alpha_ratio = p.scale / q.scale, q.alpha / p.alpha
    t1 = q.alpha * scale_ratio.log()
    t2 = -alpha_ratio.log()
    result = t1 + t2 + alpha_ratio - 1
    return result.masked_fill(p.support.lower_bound < q.support.lower_bound, math.inf)


__all__ += ["Pareto", "Weibull", "HalfCauchy", "InverseGamma"]

