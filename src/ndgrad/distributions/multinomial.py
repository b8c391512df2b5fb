"""Multinomial: total_count draws from a Categorical, counted per category (its own module, as
in PyTorch, whose name shows in messages)."""
from . import _torch as _t
from .._tensor import Size
from ..nn import functional as F
from . import constraints as C
from .distribution import broadcast_all
from .discrete import Binomial, _OnCategorical

__all__ = ["Multinomial"]


class Multinomial(_OnCategorical):
    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        super().__init__(probs, logits, validate_args)

    @C.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return C.multinomial(self.total_count)

    mean = property(lambda self: self.probs * self.total_count)
    variance = property(lambda self: self.total_count * self.probs * (1 - self.probs))

    def sample(self, sample_shape=Size()):
        idx = self._categorical.sample((self.total_count,) + tuple(sample_shape))
        return F.one_hot(idx, self.event_shape[-1]).sum(0).to(self.probs.dtype)

    def log_prob(self, value):
        self._check(value)
        logits, value = broadcast_all(self.logits, value)
        logits = logits.masked_fill((value == 0) & (logits == float("-inf")), 0)
        return ((value.sum(-1) + 1).lgamma() - (value + 1).lgamma().sum(-1)
                + (logits * value).sum(-1))

    def entropy(self):
        n = _t.tensor(self.total_count)   # an integer: its lgamma is in the default dtype
        term1 = n * self._categorical.entropy() - (n + 1).lgamma()
        b = Binomial(n, self.probs, validate_args=False)
        support = b.enumerate_support()
        term2 = (b.log_prob(support).exp() * (support + 1).lgamma()).sum([0, -1])
        return term1 + term2
