"""MixtureSameFamily: a Categorical over the rightmost batch dimension of a component
distribution; log_prob by logsumexp over the components, moments by total expectation."""
from . import _torch as _t
from .._tensor import Size
from ..nn import functional as F
from . import constraints as C
from .distribution import Distribution
from .discrete import Categorical

__all__ = ["MixtureSameFamily"]


class _MixtureSameFamilyConstraint(C.Constraint):
    """The component support, checked with the component axis added and then reduced."""

    def __init__(self, base_constraint):
        self.base_constraint = base_constraint

    is_discrete = property(lambda self: self.base_constraint.is_discrete)
    event_dim = property(lambda self: self.base_constraint.event_dim)

    def check(self, value):
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        return result.all(-1)

    def __repr__(self):
        return f"{type(self).__name__[1:]}({self.base_constraint!r})"


class MixtureSameFamily(Distribution):
    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of "
                             "ndgrad.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution needs to be an instance of "
                             "ndgrad.distributions.Distribution")
        mdbs, cdbs = mixture_distribution.batch_shape, component_distribution.batch_shape[:-1]
        for a, b in zip(reversed(mdbs), reversed(cdbs)):
            if a != 1 and b != 1 and a != b:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mdbs}) is not "
                                 f"compatible with `component_distribution.batch_shape`({cdbs})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(cdbs, component_distribution.event_shape,
                         validate_args=validate_args)

    mixture_distribution = property(lambda self: self._mixture_distribution)
    component_distribution = property(lambda self: self._component_distribution)

    def expand(self, batch_shape, _instance=None):
        batch_shape = Size(batch_shape)
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        new._component_distribution = self._component_distribution.expand(
            batch_shape + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._batch_shape = batch_shape
        return new

    @C.dependent_property
    def support(self):
        return _MixtureSameFamilyConstraint(self._component_distribution.support)

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x):
        nb, nc = len(self.batch_shape), len(self._mixture_distribution.batch_shape)
        pad = 0 if nc == 1 else nb - nc
        return x.reshape(tuple(x.shape[:-1]) + (1,) * pad + tuple(x.shape[-1:])
                         + (1,) * self._event_ndims)

    @property
    def mean(self):
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        return (probs * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        comp, dim = self._component_distribution, -1 - self._event_ndims
        within = (probs * comp.variance).sum(dim)
        between = (probs * (comp.mean - self._pad(self.mean)).pow(2)).sum(dim)
        return within + between

    def cdf(self, x):
        x = self._pad(x)
        return (self._component_distribution.cdf(x) * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        self._check(x)
        lp = self._component_distribution.log_prob(self._pad(x))
        log_mix = F.log_softmax(self._mixture_distribution.logits, dim=-1)
        return (lp + log_mix).logsumexp(dim=-1)

    def sample(self, sample_shape=Size()):
        with _t.no_grad():
            n = len(sample_shape) + len(self.batch_shape)
            idx = self._mixture_distribution.sample(sample_shape)
            comp = self._component_distribution.sample(sample_shape)
            es = tuple(self.event_shape)
            idx = idx.reshape(tuple(idx.shape) + (1,) * (len(es) + 1))
            idx = idx.expand(tuple(idx.shape[:n]) + (1,) + es)
            return comp.gather(n, idx).squeeze(n)

    def __repr__(self):
        return (f"{type(self).__name__}(\n  {self._mixture_distribution},\n  "
                f"{self._component_distribution})")
