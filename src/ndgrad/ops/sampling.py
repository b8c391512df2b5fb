"""Tensor methods that fill a tensor in place from a distribution (bernoulli_, random_,
exponential_, geometric_, log_normal_, cauchy_), and the small CPU-only Tensor methods
(apply_, pin_memory, share_memory_, new, ...).

The draws come from ndgrad's Generator (`generator=` or the default one, see _creation.py), so
they are reproducible under `manual_seed` but are not PyTorch's numbers. Registered by
ops/__init__.py from MORE_METHODS.
"""
import math

from .._backend import numpy as np, to_numpy
from .._tensor import Tensor


def _rng(generator):
    from .._creation import _rng as rng
    return rng(generator)


def _write(self, values):
    from . import _write_values
    _write_values(self, np.asarray(values))  # host: a host draw (moved to self's device once)
    return self


def _require_float(self, what):
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"{what} is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {_torch_name(self.dtype)}")


def _torch_name(dtype):
    from ._inplace import _type_name
    return _type_name(dtype)


def _num(x):
    """A number as PyTorch prints it in these messages (1, not 1.0)."""
    return int(x) if float(x).is_integer() else x


def bernoulli_(self, p=0.5, *, generator=None):
    """Tensor.bernoulli_(p=0.5, *, generator=None): 1 with probability p (a number, or a tensor
    broadcast to self), else 0."""
    if isinstance(p, Tensor):
        probs = to_numpy(p._data)  # host: compared with a host draw, moved back once
        if probs.size and ((probs < 0) | (probs > 1)).any():
            raise RuntimeError(
                "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
                "message be improved?  If so, please report an enhancement request to PyTorch.)")
        probs = np.broadcast_to(probs, self._data.shape)  # host: compared with a host draw
    else:
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(p)}")
        probs = p
    return _write(self, _rng(generator).random(self._data.shape) < probs)


def bernoulli(self, p=None, *, generator=None):
    """Tensor.bernoulli(*, generator=None): draws with self's probabilities;
    Tensor.bernoulli(p): a tensor like self, 1 with probability p."""
    from .._creation import bernoulli as _bernoulli, empty_like
    if p is None:
        probs = to_numpy(self._data)  # host: compared with a host draw, moved back once
        if probs.size and ((probs < 0) | (probs > 1)).any():
            raise RuntimeError(
                "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
                "message be improved?  If so, please report an enhancement request to PyTorch.)")
        return _bernoulli(self, generator=generator)
    return bernoulli_(empty_like(self), p, generator=generator)


def _random_bound(dtype):
    """One past the largest integer random_() draws for dtype (PyTorch: every integer of an
    integer dtype's range, 2**mantissa for floats)."""
    if dtype.is_floating_point:
        return 2 ** {"float16": 11, "bfloat16": 8, "float32": 24}.get(dtype.name, 53) + 1
    if dtype.name == "bool":
        return 2
    return int(np.iinfo(dtype.np).max) + 1


def random_(self, from_=0, to=None, *, generator=None, **kwargs):
    """Tensor.random_(from=0, to=None, *, generator=None): integers drawn uniformly from
    [from, to - 1] (random_(to): [0, to - 1]; random_(): the dtype's whole non-negative range)."""
    if "from" in kwargs:
        from_ = kwargs.pop("from")
    if kwargs:
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if to is None and from_ != 0:
        from_, to = 0, from_
    if to is None:
        low, high = 0, _random_bound(self.dtype)
    else:
        low, high = int(from_), int(to)
        if low >= high:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                               f"from={low} >= to={high}")
        if not self.dtype.is_floating_point and self.dtype.name != "bool":
            info = np.iinfo(self.dtype.np)
            if high - 1 > info.max or low < info.min:
                raise RuntimeError(
                    f"{'to - 1' if high - 1 > info.max else 'from'} is out of bounds for "
                    f"{_C_NAME.get(self.dtype.name, self.dtype.name)}")
    values = _rng(generator).integers(low, high, size=self._data.shape, dtype=np.int64)
    return _write(self, values)


_C_NAME = {"uint8": "unsigned char", "int8": "signed char", "int16": "short", "int32": "int",
           "int64": "long", "bool": "bool"}


def exponential_(self, lambd=1.0, *, generator=None):
    """Tensor.exponential_(lambd=1, *, generator=None): rate-lambd exponential draws."""
    _require_float(self, "Exponential distribution")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_num(lambd)}")
    return _write(self, _rng(generator).exponential(1.0 / lambd, self._data.shape))


def geometric_(self, p, *, generator=None):
    """Tensor.geometric_(p, *, generator=None): the number of Bernoulli(p) trials up to the
    first success (1, 2, ...)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_num(p)}")
    return _write(self, _rng(generator).geometric(p, self._data.shape))


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Tensor.log_normal_(mean=1, std=2, *, generator=None): exp of normal(mean, std) draws."""
    _require_float(self, "log_normal")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_num(std)}")
    return _write(self, _rng(generator).lognormal(mean, std, self._data.shape))


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Tensor.cauchy_(median=0, sigma=1, *, generator=None): Cauchy draws."""
    _require_float(self, "Cauchy distribution")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_num(sigma)}")
    u = _rng(generator).random(self._data.shape)
    return _write(self, median + sigma * np.tan(math.pi * (u - 0.5)))  # host: of a host draw


def multinomial(self, num_samples, replacement=False, *, generator=None):
    from .._creation import multinomial as _multinomial
    return _multinomial(self, num_samples, replacement, generator=generator)


# ---------------------------------------------------------------- small CPU-only methods

def apply_(self, callable):
    """Tensor.apply_(callable): replaces each element x by callable(x), in place (CPU only)."""
    if self._requires_grad:
        raise RuntimeError("Can't call apply_() on Variable that requires grad. Use "
                           "var.detach().apply_() instead.")
    if type(self._data) is not np.ndarray:
        raise TypeError("apply_ is only implemented on CPU tensors")
    data = self._data     # (a CPU array: the loop is the host's by definition)
    out = np.array([callable(v) for v in data.reshape(-1).tolist()],  # host: CPU only
                   dtype=data.dtype)
    return _write(self, out.reshape(data.shape))


def pin_memory(self, device=None):
    """Tensor.pin_memory(): pinned host memory exists only with an accelerator; PyTorch without
    one raises, as here. With CUDA the tensor is returned as it is."""
    from .._backend import cuda_available
    if not cuda_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    return self


def is_pinned(self, device=None):
    return False


def share_memory_(self):
    """Tensor.share_memory_(): a no-op here (NumPy memory is not moved to shared memory)."""
    return self


def is_shared(self):
    return False


def new(self, *args, dtype=None, device=None, size=None, other=None):
    """Tensor.new(...): the deprecated constructor; sizes give an uninitialised tensor, data
    gives a tensor of it, both of self's dtype (size=, other=: PyTorch's overloads by
    keyword)."""
    from .._creation import tensor, empty
    from .._tensor import Size
    for given in (size, other):
        if given is not None:
            if args:
                raise TypeError("new(): received an invalid combination of arguments")
            args = (Size(given),) if given is size else (given,)
    dt = self.dtype if dtype is None else dtype
    dev = self.device if device is None else device
    if not args:
        return empty(0, dtype=dt, device=dev)
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0].to(dt)
    if len(args) == 1 and not isinstance(args[0], (int, Size)):
        return tensor(args[0], dtype=dt, device=dev)
    return empty(*args, dtype=dt, device=dev)


MORE_METHODS = {f.__name__: f for f in (
    bernoulli_, bernoulli, random_, exponential_, geometric_, log_normal_, cauchy_, multinomial,
    apply_, pin_memory, is_pinned, share_memory_, is_shared, new)}
