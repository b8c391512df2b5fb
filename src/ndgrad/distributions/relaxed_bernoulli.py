"""LogitRelaxedBernoulli (the logistic with location logits and scale 1 / temperature) and
RelaxedBernoulli (its sigmoid): reparameterised relaxations of Bernoulli."""
from . import _torch as _t
from .._tensor import Size
from . import constraints as C
from .discrete import _Binary
from .transformed import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import clamp_probs

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(_Binary):
    support = C.real
    has_rsample = False   # as PyTorch's flag, though rsample is reparameterised

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        self._set(probs, logits)
        super().__init__(self._param.shape, validate_args=validate_args)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(_t.rand(shape, dtype=probs.dtype))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        self._check(value)
        logits, value = _t.broadcast_tensors(self.logits, value)
        diff = logits - value * self.temperature
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    arg_constraints = {"probs": C.unit_interval, "logits": C.real}
    support = C.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    temperature = property(lambda self: self.base_dist.temperature)
    logits = property(lambda self: self.base_dist.logits)
    probs = property(lambda self: self.base_dist.probs)
