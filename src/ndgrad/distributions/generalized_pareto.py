"""GeneralizedPareto(loc, scale, concentration): survival function (1 + c z)^(-1/c) in
z = (x - loc) / scale, and exp(-z) at c = 0 (a concentration within 1e-8 of zero counts as zero,
as torch.isclose judges it). Support [loc, loc - scale / c] for c < 0, else [loc, inf).
Reparameterised through its icdf. Unlike PyTorch's, log_prob and cdf also work in float64
(PyTorch compares the concentration with a float32 zero there and raises)."""
import math

from . import _torch as _t
from .._tensor import Size
from . import constraints as C
from .distribution import Distribution, broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    arg_constraints = {"loc": C.real, "scale": C.positive, "concentration": C.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    @C.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        c = self.concentration
        return C.interval(self.loc, _t.where(c < 0, self.loc - self.scale / c, math.inf))

    def _split(self):
        """(is c zero, c with 1 in its zero entries): each formula divides by the latter and
        picks its c = 0 limit where the former holds."""
        c = self.concentration
        zero = c.abs() <= 1e-8
        return zero, _t.where(zero, 1.0, c)

    def log_prob(self, value):
        self._check(value)
        z = (value - self.loc) / self.scale
        zero, c = self._split()
        power = 1 + c.reciprocal()
        # power 0 (c = -1, the uniform case) contributes nothing, even where log1p is -inf
        tail = _t.where(power == 0, 0.0, power * (c * z).log1p())
        return -self.scale.log() - _t.where(zero, z, tail)

    def log_survival_function(self, value):
        self._check(value)
        z = (value - self.loc) / self.scale
        zero, c = self._split()
        return _t.where(zero, -z, -(c * z).log1p() / c)

    def log_cdf(self, value):
        return (-self.log_survival_function(value).expm1()).log()

    def cdf(self, value):
        return -self.log_survival_function(value).expm1()

    def icdf(self, value):
        zero, c = self._split()
        log_u = (-value).log1p()
        away = self.loc + self.scale / c * (-c * log_u).expm1()
        return _t.where(zero, self.loc - self.scale * log_u, away)

    def rsample(self, sample_shape=Size()):
        u = _t.rand(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.icdf(u)

    @property
    def mean(self):
        c = self.concentration
        finite = c < 1
        c = _t.where(finite, c, 0.5)
        return _t.where(finite, self.loc + self.scale / (1 - c), math.nan)

    @property
    def variance(self):
        c = self.concentration
        finite = c < 0.5
        c = _t.where(finite, c, 0.25)
        return _t.where(finite, self.scale.pow(2) / ((1 - c).pow(2) * (1 - 2 * c)), math.nan)

    mode = property(lambda self: self.loc)

    def entropy(self):
        return (self.scale.log() + self.concentration + 1).expand(self._batch_shape)
