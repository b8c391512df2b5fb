"""Kumaraswamy(a = concentration1, b = concentration0): density a b x^(a-1) (1 - x^a)^(b-1) on
[0, 1], built (as PyTorch's) as the transform (1 - U^(1/b))^(1/a) of U ~ Uniform(0, 1), so
log_prob, cdf, icdf and rsample come from TransformedDistribution. The n-th moment is
b B(1 + n/a, b)."""
import math

from . import _torch as _t
from . import constraints as C
from .continuous import Uniform, _EULER
from .distribution import broadcast_all
from .transformed import TransformedDistribution
from .transforms import AffineTransform, PowerTransform

__all__ = ["Kumaraswamy"]


def _moment(a, b, n):
    """E[X^n] = b B(1 + n / a, b)."""
    s = 1 + n / a
    return b * (s.lgamma() + b.lgamma() - (s + b).lgamma()).exp()


class Kumaraswamy(TransformedDistribution):
    arg_constraints = {"concentration1": C.positive, "concentration0": C.positive}
    support = C.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        a, b = broadcast_all(concentration1, concentration0)
        self.concentration1, self.concentration0 = a, b
        unit = Uniform(_t.zeros_like(b), _t.ones_like(b), validate_args=validate_args)
        steps = [PowerTransform(exponent=b.reciprocal()), AffineTransform(loc=1.0, scale=-1.0),
                 PowerTransform(exponent=a.reciprocal())]
        super().__init__(unit, steps, validate_args=validate_args)

    mean = property(lambda self: _moment(self.concentration1, self.concentration0, 1))

    @property
    def variance(self):
        a, b = self.concentration1, self.concentration0
        return _moment(a, b, 2) - _moment(a, b, 1).pow(2)

    @property
    def mode(self):
        """((a - 1) / (a b - 1))^(1 / a) for a, b >= 1, else nan. PyTorch's formula (log1p of
        -b) is nan for every b >= 1 as well, so its mode is nan everywhere; this one is not."""
        a, b = self.concentration1, self.concentration0
        undefined = (a < 1) | (b < 1)
        # stand-ins where undefined, so no nan reaches the gradient through the unused branch
        a, b = _t.where(undefined, 2.0, a), _t.where(undefined, 2.0, b)
        log_mode = ((a - 1).log() - (a * b - 1).log()) / a
        return _t.where(undefined, math.nan, log_mode.exp())

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        harmonic = (b + 1).digamma() + _EULER        # H_b, the b-th harmonic number
        return (1 - b.reciprocal()) + (1 - a.reciprocal()) * harmonic - a.log() - b.log()
