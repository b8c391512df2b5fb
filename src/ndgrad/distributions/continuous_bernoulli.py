"""ContinuousBernoulli (Loaiza-Ganem and Cunningham, 2019): density C(p) p^x (1 - p)^(1 - x) on
[0, 1], given probs p or logits (which are not a probability and log-odds here, despite the
names). The closed forms of log C, the moments, the cdf and the icdf cancel catastrophically as
p nears 1/2, so for p in (lims[0], lims[1]] (as PyTorch): log C and the moments come from their
Taylor polynomials in (p - 1/2), the cdf and icdf are the uniform's, and the closed forms, which
are still evaluated there, see p = lims[0] instead, so no nan reaches the gradient. Reparameterised
through the icdf. Everything is written in ndgrad ops, so it differentiates to any order."""
import math

from . import _torch as _t
from .._tensor import Size
from ..nn import functional as F
from . import constraints as C
from .distribution import ExponentialFamily, broadcast_all, lazy_property
from .discrete import probs_to_logits, logits_to_probs, _one_of
from .utils import clamp_probs

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    arg_constraints = {"probs": C.unit_interval, "logits": C.real}
    support = C.unit_interval
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            (p,) = broadcast_all(probs)
            # checked here, before the clamp below would make any value pass (PyTorch checks
            # whenever validate_args is given, True or False)
            if validate_args is not None and not C.unit_interval.check(p).all():
                raise ValueError("The parameter probs has invalid values")
            self.probs, self._given = clamp_probs(p), "probs"
        else:
            (self.logits,), self._given = broadcast_all(logits), "logits"
        self._lims = lims
        super().__init__(self._param.shape, validate_args=validate_args)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    _param = property(lambda self: self.__dict__[self._given])
    param_shape = property(lambda self: self._param.size())

    # ------------------------------------------------------------ the unstable region

    def _stable(self):
        """True where probs lies outside (lims[0], lims[1]]."""
        lo, hi = self._lims
        return (self.probs <= lo) | (self.probs > hi)

    def _safe_probs(self):
        """probs, with lims[0] standing in inside the unstable region."""
        return _t.where(self._stable(), self.probs, float(self._lims[0]))

    def _log_norm(self):
        """log C(p). With m = min(p, 1 - p), |1 - 2p| = 1 - 2m and |logit p| =
        log(1 - m) - log(m), so no branch takes a log of a negative number."""
        p = self._safe_probs()
        m = _t.where(p < 0.5, p, 1 - p)
        exact = ((-m).log1p() - m.log()).log() - (-2 * m).log1p()
        d2 = (self.probs - 0.5).pow(2)
        series = math.log(2.0) + d2 * (4.0 / 3.0 + d2 * (104.0 / 45.0))
        return _t.where(self._stable(), exact, series)

    # ------------------------------------------------------------ moments

    @property
    def mean(self):
        p = self._safe_probs()
        exact = p / (2 * p - 1) + ((-p).log1p() - p.log()).reciprocal()
        d = self.probs - 0.5
        series = 0.5 + d * (1.0 / 3.0 + d.pow(2) * (16.0 / 45.0))
        return _t.where(self._stable(), exact, series)

    @property
    def variance(self):
        p = self._safe_probs()
        exact = p * (p - 1) / (1 - 2 * p).pow(2) + 1 / ((-p).log1p() - p.log()).pow(2)
        d2 = (self.probs - 0.5).pow(2)
        series = 1.0 / 12.0 - d2 * (1.0 / 15.0 - d2 * (128.0 / 945.0))
        return _t.where(self._stable(), exact, series)

    # ------------------------------------------------------------ densities and sampling

    def log_prob(self, value):
        self._check(value)
        logits, value = broadcast_all(self.logits, value)
        bce = F.binary_cross_entropy_with_logits(logits, value, reduction="none")
        return self._log_norm() - bce

    def cdf(self, value):
        self._check(value)
        p = self._safe_probs()
        inside = (p.pow(value) * (1 - p).pow(1 - value) + p - 1) / (2 * p - 1)
        inside = _t.where(self._stable(), inside, value)
        return _t.where(value <= 0, 0.0, _t.where(value >= 1, 1.0, inside))

    def icdf(self, value):
        p = self._safe_probs()
        log_q = (-p).log1p()
        x = ((value * (2 * p - 1) - p).log1p() - log_q) / (p.log() - log_q)
        return _t.where(self._stable(), x, value)

    def rsample(self, sample_shape=Size()):
        u = _t.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype)
        return self.icdf(u)

    def entropy(self):
        log_q, log_p = (-self.probs).log1p(), self.probs.log()
        return self.mean * (log_q - log_p) - self._log_norm() - log_q

    # ------------------------------------------------------------ exponential family

    _natural_params = property(lambda self: (self.logits,))

    def _log_normalizer(self, x):
        """log C as a function of the natural parameter (the logit) x: log(expm1(x) / x), by
        its Taylor polynomial for x inside (lims[0] - 1/2, lims[1] - 1/2] (as PyTorch)."""
        lo, hi = self._lims[0] - 0.5, self._lims[1] - 0.5
        stable = (x <= lo) | (x > hi)
        xs = _t.where(stable, x, float(lo))
        exact = xs.expm1().abs().log() - xs.abs().log()
        series = x / 2 + x.pow(2) / 24 - x.pow(4) / 2880
        return _t.where(stable, exact, series)
