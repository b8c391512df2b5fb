"""torch.distributions, the common core: Normal, Categorical, Bernoulli, Uniform and
kl_divergence. Parameters are validated only by shape (torch's constraint checks are left out);
log_prob, entropy and rsample are ndgrad ops, so they are differentiable. Samples come from
ndgrad's generator, so they differ from PyTorch's for the same seed."""
import math

from . import _creation as C
from ._dtype import finfo
from ._tensor import Tensor, Size
from .autograd.grad_mode import no_grad
from .nn import functional as F
from .functional import broadcast_tensors

__all__ = ["Distribution", "Normal", "Categorical", "Bernoulli", "Uniform", "kl_divergence"]


def _broadcast_all(*values):
    like = next((v for v in values if isinstance(v, Tensor)), None)
    dtype = like.dtype if like is not None else None
    ts = [v if isinstance(v, Tensor) else C.tensor(float(v), dtype=dtype) for v in values]
    return broadcast_tensors(*ts)


def _lazy(name, compute):
    def get(self):
        if name not in self.__dict__:
            self.__dict__[name] = compute(self)
        return self.__dict__[name]
    return property(get)


class Distribution:
    has_rsample = False
    arg_constraints = {}

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def _extended_shape(self, sample_shape=Size()):
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def sample(self, sample_shape=Size()):
        with no_grad():
            return self.rsample(sample_shape)

    @property
    def stddev(self):
        return self.variance.sqrt()

    def perplexity(self):
        return self.entropy().exp()

    def __repr__(self):
        params = [(k, self.__dict__[k]) for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{k}: {v.item() if v.numel() == 1 else v.size()}" for k, v in params)
        return f"{type(self).__name__}({args})"


class Normal(Distribution):
    arg_constraints = {"loc": None, "scale": None}
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast_all(loc, scale)
        super().__init__(self.loc.shape)

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)
    stddev = property(lambda self: self.scale)
    variance = property(lambda self: self.scale.pow(2))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = C.randn(shape, dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        var = self.scale ** 2
        log_scale = self.scale.log()
        return (-((value - self.loc) ** 2) / (2 * var) - log_scale
                - math.log(math.sqrt(2 * math.pi)))

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    def cdf(self, value):
        return 0.5 * (1 + ((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)).erf())

    def icdf(self, value):
        return self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)


class Categorical(Distribution):
    arg_constraints = {"probs": None, "logits": None}

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        param = self.probs if probs is not None else self.logits
        self._num_events = param.shape[-1]
        super().__init__(param.shape[:-1])

    logits = _lazy("logits", lambda self: self.probs.clamp(
        min=finfo(self.probs.dtype).eps, max=1 - finfo(self.probs.dtype).eps).log())
    probs = _lazy("probs", lambda self: F.softmax(self.logits, dim=-1))
    param_shape = property(lambda self: (self.probs if "probs" in self.__dict__
                                         else self.logits).shape)
    mean = property(lambda self: C.full(self._extended_shape(), float("nan"),
                                        dtype=self.probs.dtype))
    mode = property(lambda self: self.probs.argmax(dim=-1))

    @logits.setter
    def logits(self, v):
        self.__dict__["logits"] = v

    @probs.setter
    def probs(self, v):
        self.__dict__["probs"] = v

    @property
    def variance(self):
        return self.mean

    def sample(self, sample_shape=Size()):
        shape = Size(sample_shape)
        n = 1
        for s in shape:
            n *= s
        with no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            samples_2d = C.multinomial(probs_2d, n, True).T
            return samples_2d.reshape(self._extended_shape(shape))

    def log_prob(self, value):
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        min_real = finfo(self.logits.dtype).min
        logits = self.logits.clamp(min=min_real)
        return -(logits * self.probs).sum(-1)


class Bernoulli(Distribution):
    arg_constraints = {"probs": None, "logits": None}

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = _broadcast_all(probs)
        else:
            (self.logits,) = _broadcast_all(logits)
        super().__init__((self.probs if probs is not None else self.logits).shape)

    logits = _lazy("logits", lambda self: self.probs.clamp(
        min=finfo(self.probs.dtype).eps, max=1 - finfo(self.probs.dtype).eps).logit())
    probs = _lazy("probs", lambda self: self.logits.sigmoid())
    mean = property(lambda self: self.probs)
    variance = property(lambda self: self.probs * (1 - self.probs))

    @logits.setter
    def logits(self, v):
        self.__dict__["logits"] = v

    @probs.setter
    def probs(self, v):
        self.__dict__["probs"] = v

    def sample(self, sample_shape=Size()):
        with no_grad():
            return C.bernoulli(self.probs.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        logits, value = broadcast_tensors(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")


class Uniform(Distribution):
    arg_constraints = {"low": None, "high": None}
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = _broadcast_all(low, high)
        super().__init__(self.low.shape)

    mean = property(lambda self: (self.high + self.low) / 2)
    variance = property(lambda self: (self.high - self.low).pow(2) / 12)

    def rsample(self, sample_shape=Size()):
        u = C.rand(self._extended_shape(sample_shape), dtype=self.low.dtype)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        lb = (self.low <= value).to(self.low.dtype)
        ub = (self.high > value).to(self.low.dtype)
        return (lb * ub).log() - (self.high - self.low).log()

    def entropy(self):
        return (self.high - self.low).log()


def kl_divergence(p, q):
    """KL(p || q) for two distributions of the same family (Normal, Categorical, Bernoulli)."""
    if isinstance(p, Normal) and isinstance(q, Normal):
        var_ratio = (p.scale / q.scale).pow(2)
        t1 = ((p.loc - q.loc) / q.scale).pow(2)
        return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())
    if isinstance(p, Categorical) and isinstance(q, Categorical):
        t = p.probs * (p.logits - q.logits)
        t = t.masked_fill((q.probs == 0).expand_as(t), float("inf"))
        t = t.masked_fill((p.probs == 0).expand_as(t), 0.0)
        return t.sum(-1)
    if isinstance(p, Bernoulli) and isinstance(q, Bernoulli):
        t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
        t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
        return t1 + t2
    raise NotImplementedError
