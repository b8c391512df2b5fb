"""Discrete families: Bernoulli, Categorical, OneHotCategorical, Geometric, Poisson, Binomial,
Multinomial, and their KL pairs. A family given probs or logits keeps the one it was given and
derives the other on first use."""
from . import _torch as _t
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from ..nn import functional as F
from . import constraints as C
from .distribution import Distribution, broadcast_all, lazy_property
from .kl import register_kl

__all__ = ["Bernoulli", "Categorical", "OneHotCategorical", "Geometric", "Poisson", "Binomial",
           "OneHotCategoricalStraightThrough", "NegativeBinomial"]


def probs_to_logits(probs, is_binary=False):
    fi = _t.finfo(probs.dtype)
    p = probs.clamp(min=fi.eps, max=1 - fi.eps)
    return p.log() - (-p).log1p() if is_binary else p.log()


def logits_to_probs(logits, is_binary=False):
    return logits.sigmoid() if is_binary else F.softmax(logits, dim=-1)


def _one_of(probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class _Binary(Distribution):
    """probs in [0, 1] or real logits, broadcast with the family's other parameters."""
    arg_constraints = {"probs": C.unit_interval, "logits": C.real}
    probs = lazy_property(lambda self: logits_to_probs(self.logits, True))
    logits = lazy_property(lambda self: probs_to_logits(self.probs, True))
    probs.__name__, logits.__name__ = "probs", "logits"

    def _set(self, probs, logits, *others):
        _one_of(probs, logits)
        name = "probs" if probs is not None else "logits"
        *others, p = broadcast_all(*others, probs if probs is not None else logits)
        self.__dict__[name] = p
        return others

    param_shape = property(lambda self: self._param.size())
    _param = property(lambda self: self.__dict__.get("probs", self.__dict__.get("logits")))


class Bernoulli(_Binary):
    support = C.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._set(probs, logits)
        super().__init__(self._param.shape, validate_args=validate_args)

    mean = property(lambda self: self.probs)
    variance = property(lambda self: self.probs * (1 - self.probs))

    @property
    def mode(self):
        m = (self.probs >= 0.5).to(self.probs.dtype)
        return m.masked_fill(self.probs == 0.5, float("nan"))

    def sample(self, sample_shape=Size()):
        with no_grad():
            return _t.bernoulli(self.probs.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        self._check(value)
        logits, value = _t.broadcast_tensors(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        v = _t.arange(2, dtype=self._param.dtype).reshape((-1,) + (1,) * len(self.batch_shape))
        return v.expand((-1,) + tuple(self.batch_shape)) if expand else v


class Geometric(_Binary):
    support = C.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._set(probs, logits)
        check = self._validate_args if validate_args is None else validate_args
        if probs is not None and check and not (self.probs > 0).all():
            raise ValueError(f"Expected parameter probs (Tensor of shape "
                             f"{tuple(self.probs.shape)}) of distribution {self!r} to be "
                             f"positive but found invalid values:\n{self.probs}")
        super().__init__(self._param.shape, validate_args=validate_args)

    mean = property(lambda self: 1 / self.probs - 1)
    mode = property(lambda self: _t.zeros_like(self.probs))
    variance = property(lambda self: (1 / self.probs - 1) / self.probs)

    def sample(self, sample_shape=Size()):
        with no_grad():
            fi = _t.finfo(self.probs.dtype)
            u = _t.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype)
            return (u.clamp(min=fi.tiny).log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        self._check(value)
        value, probs = broadcast_all(value, self.probs)
        probs = _t.where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs,
                                                  reduction="none") / self.probs


class Binomial(_Binary):
    arg_constraints = {"total_count": C.nonnegative_integer, "probs": C.unit_interval,
                       "logits": C.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        (self.total_count,) = self._set(probs, logits, total_count)
        self.total_count = self.total_count.type_as(self._param)
        super().__init__(self._param.shape, validate_args=validate_args)

    @C.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return C.integer_interval(0, self.total_count)

    mean = property(lambda self: self.total_count * self.probs)
    mode = property(lambda self: ((self.total_count + 1) * self.probs).floor().clamp(
        max=self.total_count))
    variance = property(lambda self: self.total_count * self.probs * (1 - self.probs))

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return _t.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        self._check(value)
        n, lg = self.total_count, self.logits
        normalizer = (n * (lg.clamp(min=0) + lg - lg.clamp(max=0)) / 2
                      + n * (-lg.abs()).exp().log1p() - (n + 1).lgamma())
        return value * lg - (value + 1).lgamma() - (n - value + 1).lgamma() - normalizer

    def _homogeneous(self, what):
        n = int(self.total_count.max())
        if not (self.total_count == n).all():
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return n

    def entropy(self):
        self._homogeneous("entropy")
        lp = self.log_prob(self.enumerate_support(False))
        return -(lp.exp() * lp).sum(0)

    def enumerate_support(self, expand=True):
        n = self._homogeneous("enumerate_support")
        v = _t.arange(1 + n, dtype=self._param.dtype).reshape((-1,) + (1,) * len(self.batch_shape))
        return v.expand((-1,) + tuple(self.batch_shape)) if expand else v


class Poisson(Distribution):
    arg_constraints = {"rate": C.nonnegative}
    support = C.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    mean = property(lambda self: self.rate)
    mode = property(lambda self: self.rate.floor())
    variance = property(lambda self: self.rate)

    def sample(self, sample_shape=Size()):
        with no_grad():
            return _t.poisson(self.rate.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        self._check(value)
        rate, value = broadcast_all(self.rate, value)
        return _t.xlogy(value, rate) - rate - (value + 1).lgamma()


class Categorical(Distribution):
    arg_constraints = {"probs": C.simplex, "logits": C.independent(C.real, 1)}
    has_enumerate_support = True
    probs = lazy_property(lambda self: logits_to_probs(self.logits))
    logits = lazy_property(lambda self: probs_to_logits(self.probs))
    probs.__name__, logits.__name__ = "probs", "logits"

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        name, p = ("probs", probs) if probs is not None else ("logits", logits)
        if p.dim() < 1:
            raise ValueError(f"`{name}` parameter must be at least one-dimensional.")
        self.__dict__[name] = (p / p.sum(-1, keepdim=True) if name == "probs"
                               else p - p.logsumexp(dim=-1, keepdim=True))
        self._num_events = p.size(-1)
        super().__init__(p.shape[:-1], validate_args=validate_args)

    _param = property(lambda self: self.__dict__.get("probs", self.__dict__.get("logits")))
    param_shape = property(lambda self: self._param.size())

    @C.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return C.integer_interval(0, self._num_events - 1)

    mean = property(lambda self: _t.full(self._extended_shape(), float("nan"),
                                         dtype=self.probs.dtype))
    mode = property(lambda self: self.probs.argmax(dim=-1))
    variance = property(lambda self: _t.full(self._extended_shape(), float("nan"),
                                             dtype=self.probs.dtype))

    def sample(self, sample_shape=Size()):
        shape = Size(tuple(sample_shape))
        with no_grad():
            p2 = self.probs.reshape(-1, self._num_events)
            s = _t.multinomial(p2, max(shape.numel(), 1), True).T
            return s[:shape.numel()].reshape(self._extended_shape(shape))

    def log_prob(self, value):
        self._check(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = _t.broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        logits = self.logits.clamp(min=_t.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        v = _t.arange(self._num_events, dtype=_t.long).reshape(
            (-1,) + (1,) * len(self.batch_shape))
        return v.expand((-1,) + tuple(self.batch_shape)) if expand else v


class _CategoricalInside:
    """A distribution built around a Categorical (`_categorical`): expanding it expands that."""
    param_shape = property(lambda self: self._categorical.param_shape)

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        new._categorical = self._categorical.expand(batch_shape)
        new._batch_shape = Size(batch_shape)
        return new


class _OnCategorical(_CategoricalInside, Distribution):
    """OneHotCategorical and Multinomial: a Categorical inside, the parameters read from it."""
    arg_constraints = {"probs": C.simplex, "logits": C.real_vector}
    probs = property(lambda self: self._categorical.probs)
    logits = property(lambda self: self._categorical.logits)

    def __init__(self, probs, logits, validate_args):
        self._categorical = Categorical(probs, logits)
        n = self._categorical._num_events
        super().__init__(self._categorical.batch_shape, (n,), validate_args=validate_args)


class OneHotCategorical(_OnCategorical):
    support = C.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        super().__init__(probs, logits, validate_args)

    mean = property(lambda self: self.probs)
    mode = property(lambda self: F.one_hot(self.probs.argmax(-1),
                                           self.event_shape[-1]).to(self.probs.dtype))
    variance = property(lambda self: self.probs * (1 - self.probs))

    def sample(self, sample_shape=Size()):
        idx = self._categorical.sample(sample_shape)
        return F.one_hot(idx, self.event_shape[-1]).to(self.probs.dtype)

    def log_prob(self, value):
        self._check(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n, nb = self.event_shape[0], len(self.batch_shape)
        v = _t.eye(n, dtype=self._categorical._param.dtype).reshape((n,) + (1,) * nb + (n,))
        return v.expand((n,) + tuple(self.batch_shape) + (n,)) if expand else v


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli(p, q):
    # masks index the broadcast terms, so mismatched batch shapes fail as in PyTorch
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1[q.probs == 0] = float("inf")
    t1[p.probs == 0] = 0
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2[q.probs == 1] = float("inf")
    t2[p.probs == 1] = 0
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = t.masked_fill((q.probs == 0).expand_as(t), float("inf"))
    t = t.masked_fill((p.probs == 0).expand_as(t), 0.0)
    return t.sum(-1)


register_kl(OneHotCategorical, OneHotCategorical)(
    lambda p, q: _kl_categorical(p._categorical, q._categorical))


@register_kl(Geometric, Geometric)
def _kl_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(Poisson, Poisson)
def _kl_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Binomial, Binomial)
def _kl_binomial(p, q):
    if (p.total_count < q.total_count).any():
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count "
                                  "is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    return kl.masked_fill(p.total_count > q.total_count, float("inf"))


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


def _infinite(p, q):
    return _t.full(_t.broadcast_shapes(p.batch_shape, q.batch_shape), float("inf"),
                   dtype=p.rate.dtype)


register_kl(Poisson, Bernoulli)(_infinite)
register_kl(Poisson, Binomial)(_infinite)


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """A one-hot sample whose gradient is that of the probabilities (straight-through)."""
    has_rsample = True

    def rsample(self, sample_shape=Size()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())


class NegativeBinomial(_Binary):
    """The number of successes before total_count failures, success probability probs."""
    arg_constraints = {"total_count": C.greater_than_eq(0),
                       "probs": C.half_open_interval(0.0, 1.0),
                       "logits": C.real}
    support = C.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        (self.total_count,) = self._set(probs, logits, total_count)
        self.total_count = self.total_count.type_as(self._param)
        super().__init__(self._param.shape, validate_args=validate_args)

    mean = property(lambda self: self.total_count * self.logits.exp())
    mode = property(lambda self: ((self.total_count - 1) * self.logits.exp()).floor().clamp(
        min=0.0))
    variance = property(lambda self: self.mean / (-self.logits).sigmoid())

    def sample(self, sample_shape=Size()):
        from .gamma import Gamma
        with no_grad():
            rate = Gamma(self.total_count, (-self.logits).exp(),
                         validate_args=False).sample(sample_shape)
            return _t.poisson(rate)

    def log_prob(self, value):
        self._check(value)
        n, lg = self.total_count, self.logits
        unnormalized = n * F.logsigmoid(-lg) + value * F.logsigmoid(lg)
        normalization = -(n + value).lgamma() + (1.0 + value).lgamma() + n.lgamma()
        normalization = normalization.masked_fill(n + value == 0, 0.0)
        return unnormalized - normalization
