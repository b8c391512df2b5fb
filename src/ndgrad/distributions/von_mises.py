"""VonMises(loc, concentration): the circular density exp(k cos(x - loc)) / (2 pi I0(k)), loc and
values read as angles modulo 2 pi. Mean and mode are loc; the variance is the circular one,
1 - I1(k) / I0(k). No cdf, icdf, entropy or rsample (as PyTorch). Draws come from Best and
Fisher's wrapped-Cauchy rejection sampler, run in float64."""
import math

from . import _torch as _t
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from . import constraints as C
from .distribution import Distribution, broadcast_all

__all__ = ["VonMises"]

# Note [Bessel polynomials for VonMises]
# log I0 and log I1 come from the polynomial fits of Abramowitz and Stegun 9.8.1-9.8.4
# (relative error below about 2e-7), the ones PyTorch's VonMises evaluates, so log_prob and the
# variance (and their gradients) agree with PyTorch's to rounding rather than to 2e-7.
# For k < 3.75, with t = (k / 3.75)^2:  I0 = P0(t),  I1 = k P1(t);
# for k >= 3.75, with s = 3.75 / k:  I_n = exp(k) / sqrt(k) * Q_n(s).
_P = ((1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813),
      (0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411))
_Q = ((0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706, 0.02635537,
       -0.01647633, 0.00392377),
      (0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967, -0.02895312,
       0.01787654, -0.00420059))
_SPLIT = 3.75


def _horner(x, coefficients):
    """sum_i coefficients[i] x^i."""
    acc = coefficients[-1]
    for a in coefficients[-2::-1]:
        acc = acc * x + a
    return acc


def _log_bessel_i(n, k):
    """log I_n(k) for n in (0, 1) and k > 0, per Note [Bessel polynomials for VonMises]. Each
    branch sees its own side of the split only, so the other cannot overflow or poison the
    gradient."""
    near = _t.where(k < _SPLIT, k, _SPLIT)
    far = _t.where(k < _SPLIT, _SPLIT, k)
    small = _horner((near / _SPLIT).pow(2), _P[n])
    if n == 1:
        small = near * small
    large = far - 0.5 * far.log() + _horner(_SPLIT / far, _Q[n]).log()
    return _t.where(k < _SPLIT, small.log(), large)


class VonMises(Distribution):
    arg_constraints = {"loc": C.real, "concentration": C.positive}
    support = C.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, Size(), validate_args=validate_args)

    def log_prob(self, value):
        self._check(value)
        k = self.concentration
        return k * (value - self.loc).cos() - math.log(2 * math.pi) - _log_bessel_i(0, k)

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)

    @property
    def variance(self):
        k = self.concentration
        return 1 - (_log_bessel_i(1, k) - _log_bessel_i(0, k)).exp()

    def sample(self, sample_shape=Size()):
        """Best and Fisher (1979): propose from a wrapped Cauchy matched to k and accept by
        their squeeze and exact tests, redrawing (as PyTorch: every entry) until none is left.
        In float64 throughout, as PyTorch (in float32 tiny concentrations never accept)."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            k = self.concentration.detach().to(_t.float64).expand(shape)
            a = 1 + (1 + 4 * k.pow(2)).sqrt()
            b = (a - (2 * a).sqrt()) / (2 * k)
            r = _t.where(k < 1e-5, k + k.reciprocal(), (1 + b.pow(2)) / (2 * b))
            angle = _t.zeros(shape, dtype=_t.float64)
            pending = _t.ones(shape, dtype=_t.bool)
            while bool(pending.any()):
                u1, u2, u3 = _t.rand((3,) + tuple(shape), dtype=_t.float64).unbind()
                z = (math.pi * u1).cos()
                f = (1 + r * z) / (r + z)
                c = k * (r - f)
                ok = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
                # as PyTorch: every accepted proposal is taken, also where one was already
                # (the last accepted one stays), so the same draws give the same angles
                angle = _t.where(ok, (u3 - 0.5).sign() * f.acos(), angle)
                pending = pending & ~ok
            loc = self.loc.detach().to(_t.float64)
            x = (angle + math.pi + loc) % (2 * math.pi) - math.pi
            return x.to(self.loc.dtype)
