"""The Distribution base class: batch and event shapes, argument and sample validation with
PyTorch's messages, expand, sample through rsample, and the repr."""
import warnings

from . import _torch as _t
from .._tensor import Tensor, Size
from ..autograd.grad_mode import no_grad
from . import constraints

__all__ = ["Distribution", "broadcast_all", "lazy_property"]


class lazy_property:
    """Computed on first access and stored on the instance (a plain attribute thereafter)."""

    def __init__(self, fn):
        self.fn, self.__doc__, self.__name__ = fn, fn.__doc__, fn.__name__

    def __get__(self, obj, cls=None):
        if obj is None:
            return self
        with _t.enable_grad():
            value = self.fn(obj)
        obj.__dict__[self.__name__] = value
        return value


def broadcast_all(*values):
    """Broadcast tensors and numbers together; numbers take the first tensor's dtype (or the
    default dtype)."""
    if not all(isinstance(v, (Tensor, int, float)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    like = next((v for v in values if isinstance(v, Tensor)), None)
    dtype = like.dtype if like is not None else _t.get_default_dtype()
    ts = [v if isinstance(v, Tensor) else _t.tensor(float(v), dtype=dtype) for v in values]
    return _t.broadcast_tensors(*ts)


_PKG = __name__.split(".")[0]


class Distribution:
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__
    arg_constraints = {}
    support = None

    @staticmethod
    def set_default_validate_args(value):
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape, self._event_shape = Size(batch_shape), Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            for param, constraint in self.arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param, None),
                                                             lazy_property):
                    continue
                value = getattr(self, param)
                if not constraint.check(value).all():
                    raise ValueError(
                        f"Expected parameter {param} (Tensor of shape {tuple(value.shape)}) of "
                        f"distribution {self!r} to satisfy the constraint {constraint!r}, but "
                        f"found invalid values:\n{value}")

    batch_shape = property(lambda self: self._batch_shape)
    event_shape = property(lambda self: self._event_shape)

    def _get_checked_instance(self, cls, _instance=None):
        """The instance `expand` fills (PyTorch's helper for subclasses' expand methods)."""
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def expand(self, batch_shape, _instance=None):
        """A copy with the parameters expanded to batch_shape (views, no copies)."""
        batch_shape = Size(batch_shape)
        # the class whose expand this is (ndgrad's family): a subclass that changes __init__
        # must write its own expand, as in PyTorch
        own = next(c for c in type(self).__mro__ if c.__module__.split(".")[0] == _PKG)
        new = self._get_checked_instance(own, _instance)
        new.__dict__.update(self.__dict__)
        nb = len(self._batch_shape)
        for k, v in self.__dict__.items():
            if isinstance(v, Tensor) and k in self._expand_names():
                new.__dict__[k] = v.expand(batch_shape + v.shape[nb:])
        new._batch_shape = batch_shape
        return new

    def _expand_names(self):
        return set(self.arg_constraints) | set(getattr(self, "_also_expand", ()))

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()):
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        raise NotImplementedError

    def sample_n(self, n):
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", FutureWarning)
        return self.sample(Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=Size()):
        return Size(tuple(sample_shape)) + self._batch_shape + self._event_shape

    def _validate_sample(self, value):
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        start = value.dim() - len(self._event_shape)
        if value.shape[start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        actual, expected = value.size(), self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual} vs {expected}.")
        support = self.support
        if not support.check(value).all():
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({support!r}) of the "
                f"distribution {self!r}, but found invalid values:\n{value}")

    def _check(self, value):
        if self._validate_args:
            self._validate_sample(value)

    def __repr__(self):
        args = ", ".join(f"{p}: {v if v.numel() == 1 else v.size()}"
                         for p in self.arg_constraints if isinstance(v := self.__dict__.get(p),
                                                                     Tensor))
        return f"{type(self).__name__}({args})"


class ExponentialFamily(Distribution):
    """A family with density h(x) exp(<t(x), theta> - F(theta)): subclasses give the natural
    parameters theta, the log normalizer F and the mean carrier measure E[log h(x)]; entropy
    then follows from F's gradient (and so does the Bregman-divergence KL in kl.py)."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        grads = _t.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for np_, g in zip(nparams, grads):
            result = result - np_ * g
        return result
