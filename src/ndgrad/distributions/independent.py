"""Independent: reinterprets batch dimensions of a distribution as event dimensions."""
from .._tensor import Size
from . import constraints as C
from .distribution import Distribution
from .kl import register_kl, kl_divergence

__all__ = ["Independent"]


def _sum_rightmost(x, n):
    return x.reshape(tuple(x.shape[:x.dim() - n]) + (-1,)).sum(-1) if n > 0 else x


class Independent(Distribution):
    arg_constraints = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        n, shape = reinterpreted_batch_ndims, base_distribution.batch_shape + \
            base_distribution.event_shape
        if n > len(base_distribution.batch_shape):
            raise ValueError(f"Expected reinterpreted_batch_ndims <= "
                             f"len(base_distribution.batch_shape), actual {n} vs "
                             f"{len(base_distribution.batch_shape)}")
        self.base_dist, self.reinterpreted_batch_ndims = base_distribution, n
        split = len(shape) - len(base_distribution.event_shape) - n
        super().__init__(shape[:split], shape[split:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        ev = self.event_shape[:self.reinterpreted_batch_ndims]
        new.base_dist = self.base_dist.expand(Size(batch_shape) + ev)
        new._batch_shape = Size(batch_shape)
        return new

    has_rsample = property(lambda self: self.base_dist.has_rsample)
    has_enumerate_support = property(lambda self: self.reinterpreted_batch_ndims == 0
                                     and self.base_dist.has_enumerate_support)

    @C.dependent_property
    def support(self):
        s = self.base_dist.support
        return C.independent(s, self.reinterpreted_batch_ndims) \
            if self.reinterpreted_batch_ndims else s

    mean = property(lambda self: self.base_dist.mean)
    mode = property(lambda self: self.base_dist.mode)
    variance = property(lambda self: self.base_dist.variance)

    def sample(self, sample_shape=Size()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=Size()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return _sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return _sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand=True):
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_dist}, {self.reinterpreted_batch_ndims})"


@register_kl(Independent, Independent)
def _kl_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)
