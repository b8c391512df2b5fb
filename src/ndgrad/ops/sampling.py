"""Tensor methods that fill a tensor in place from a distribution (uniform_, normal_,
bernoulli_, random_, exponential_, geometric_, log_normal_, cauchy_), and the small CPU-only
Tensor methods (apply_, pin_memory, share_memory_, new, ...).

The draws come from the generator given (or the default one): PyTorch's CPU generator and
transforms (random/_mt19937.py), made in the order PyTorch's TensorIterator visits the tensor (memory
order), so the same seed fills the same tensor with PyTorch's numbers. Registered by
ops/__init__.py from MORE_METHODS.
"""
from ..random import _mt19937 as _R
from .._backend import numpy as np, to_numpy
from .._tensor import Tensor


def _engine(generator):
    from .. import _creation
    return _creation._rng(generator)


def _write(self, values):
    from . import _write_values
    _write_values(self, np.asarray(values))  # host: a host draw (moved to self's device once)
    return self


def _order(arr):
    return _R.iteration_order(arr)


def _in_order(self, flat, real_pairs=False):
    """Draws made in self's iteration order, as a host array of self's (logical) shape; with
    real_pairs, `flat` holds a complex tensor's (real, imaginary) pairs."""
    if real_pairs:
        flat = np.ascontiguousarray(flat).view(self.dtype.np)  # host: a host draw
    return _R.in_order(self._data, flat)


def _real_np(dtype):
    return {"complex64": np.float32, "complex128": np.float64}.get(dtype.name, dtype.np)


def _torch_name(dtype):
    from ._inplace import _type_name
    return _type_name(dtype)


_TYPEMETA = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
             "uint8": "unsigned char", "bool": "bool"}


def _num(x):
    """A double as C++'s ostream prints it (PyTorch's messages): 1, 0.5, 3e+38."""
    return f"{float(x):g}"


def _not_implemented(kernel, dtype):
    raise NotImplementedError(f'"{kernel}" not implemented for \'{_torch_name(dtype)}\'')


def uniform_(self, from_=0.0, to=1.0, *, generator=None, **kwargs):
    """Tensor.uniform_(from=0, to=1, *, generator=None): uniform draws on [from, to)."""
    if "from" in kwargs:
        from_ = kwargs.pop("from")
    if kwargs:
        raise TypeError(f"uniform_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    dt = self.dtype
    if not (dt.is_floating_point or dt.is_complex):
        _not_implemented("check_uniform_bounds", dt)
    self._check_inplace()
    real = _real_np(dt)
    info = _R._finfo(real)
    lo, hi = float(info.min), float(info.max)
    cname = _R._C_NAME.get(np.dtype(real).name, str(real))
    for v, what in ((from_, "from"), (to, "to")):
        if not lo <= v <= hi:
            raise RuntimeError(f"{what} is out of bounds for {cname}")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={_num(from_)} > to={_num(to)}")
    if to - from_ > hi:
        raise RuntimeError(
            f"uniform_ expects to-from <= std::numeric_limits<{_torch_name(dt)}>::max(), but "
            f"found to={_num(to)} and from={_num(from_)} which result in to-from to exceed the "
            f"limit")
    n = self.numel() * (2 if dt.is_complex else 1)
    if n == 0:
        return self
    flat = _R.uniform(_engine(generator), n, real, float(from_), float(to))
    return _write(self, _in_order(self, flat, dt.is_complex))


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Tensor.normal_(mean=0, std=1, *, generator=None): PyTorch's normal fill (the vectorised
    Box-Muller for 16 or more contiguous elements, else the scalar path)."""
    dt = self.dtype
    if not (dt.is_floating_point or dt.is_complex):
        _not_implemented("normal_kernel_cpu", dt)
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")
    self._check_inplace()
    n = self.numel() * (2 if dt.is_complex else 1)
    if n == 0:
        return self
    if dt.is_complex:
        std = std / 2.0 ** 0.5  # (ATen: std / std::sqrt(2))
    flat = _R.normal(_engine(generator), n, _real_np(dt), float(mean), float(std),
                     contiguous=self._data.flags.c_contiguous)
    return _write(self, _in_order(self, flat, dt.is_complex))


def bernoulli_(self, p=0.5, *, generator=None):
    """Tensor.bernoulli_(p=0.5, *, generator=None): 1 with probability p (a number: double
    uniforms; a tensor broadcast to self: float uniforms, double ones for float64 p), else 0."""
    if isinstance(p, Tensor):
        probs = to_numpy(p._data)  # host: compared with a host draw, moved back once
        if probs.size and not ((probs >= 0) & (probs <= 1)).all():
            raise RuntimeError(
                "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
                "message be improved?  If so, please report an enhancement request to PyTorch.)")
        self._check_inplace()
        probs = np.broadcast_to(probs, self._data.shape)  # host: compared with a host draw
        perm = _order(self._data)
        if perm is not None:
            probs = probs.transpose(perm)
        flat = _R.bernoulli_tensor(_engine(generator), probs)
    else:
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(p)}")
        self._check_inplace()
        flat = _R.bernoulli_scalar(_engine(generator), self.numel(), float(p))
    return _write(self, _in_order(self, flat.astype(self.dtype.np)))


def bernoulli(self, p=None, *, generator=None):
    """Tensor.bernoulli(*, generator=None): draws with self's probabilities;
    Tensor.bernoulli(p): a tensor like self, 1 with probability p."""
    from .._creation import bernoulli as _bernoulli, empty_like
    if p is None:
        probs = to_numpy(self._data)  # host: checked before the draw
        if probs.size and not ((probs >= 0) & (probs <= 1)).all():
            raise RuntimeError(
                "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
                "message be improved?  If so, please report an enhancement request to PyTorch.)")
        return _bernoulli(self, generator=generator)
    return bernoulli_(empty_like(self), p, generator=generator)


_UNSET = object()


def random_(self, from_=_UNSET, to=_UNSET, *, generator=None, **kwargs):
    """Tensor.random_(from=0, to=None, *, generator=None): integers drawn uniformly from
    [from, to - 1] (random_(to): [0, to - 1]; random_(): the dtype's whole non-negative range;
    random_(from, None): [from, the dtype's largest])."""
    if "from" in kwargs:
        from_ = kwargs.pop("from")
    if kwargs:
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    eng = _engine(generator)
    dt = self.dtype
    n = self.numel()
    if from_ is _UNSET and to is _UNSET:
        self._check_inplace()
        if n:
            _write(self, _in_order(self, _R.random_default(eng, n, dt.np)))
        return self
    if to is _UNSET:                      # random_(to)
        from_, to = 0, from_
    from_ = 0 if from_ is _UNSET else int(from_)
    if to is None:                        # [from, the largest value of the dtype]
        if from_ == -(1 << 63):
            self._check_inplace()
            if n:
                _write(self, _in_order(self, _R.random_full_64(eng, n, dt.np)))
            return self
        if dt.is_floating_point:
            to_inc = 1 << _R._digits(dt.np)
            from_ = _R.update_from(from_, dt.np)
            if from_ >= to_inc:
                raise RuntimeError(
                    f"random_ expects 'from' casted to dtype to be less than or equal to "
                    f"'to_inc' casted to dtype, but got from={from_} > to_inc={to_inc}")
        else:
            to_inc = 1 if dt.name == "bool" else int(np.iinfo(dt.np).max)
        _R.check_from_to(from_, to_inc, dt)
        self._check_inplace()
        if n:
            _write(self, _in_order(self, _R.random_from_to(eng, n, dt.np, to_inc - from_ + 1,
                                                           from_)))
        return self
    from .._creation import _random_from_to
    flat = _random_from_to(eng, 0, dt, from_, int(to))   # the checks, before any draw
    self._check_inplace()
    if n:
        flat = _random_from_to(eng, n, dt, from_, int(to))
        _write(self, _in_order(self, flat))
    return self


def _float_only(self, what, typemeta=False):
    if not self.dtype.is_floating_point:
        name = _TYPEMETA.get(self.dtype.name, self.dtype.name) if typemeta else \
            _torch_name(self.dtype)
        raise RuntimeError(f"{what} is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {name}")


def exponential_(self, lambd=1.0, *, generator=None):
    """Tensor.exponential_(lambd=1, *, generator=None): rate-lambd exponential draws."""
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_num(lambd)}")
    _float_only(self, "Exponential distribution")
    self._check_inplace()
    if self.numel():
        flat = _R.exponential(_engine(generator), self.numel(), float(lambd))
        _write(self, _in_order(self, flat.astype(self.dtype.np)))
    return self


def geometric_(self, p, *, generator=None):
    """Tensor.geometric_(p, *, generator=None): the number of Bernoulli(p) trials up to the
    first success (1, 2, ...)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_num(p)}")
    self._check_inplace()
    if self.numel():
        flat = _R.geometric(_engine(generator), self.numel(), float(p))
        with np.errstate(invalid="ignore"):  # host: the cast of a host draw
            _write(self, _in_order(self, flat.astype(self.dtype.np)))
    return self


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Tensor.log_normal_(mean=1, std=2, *, generator=None): exp of normal(mean, std) draws
    (the scalar Box-Muller path, with its cached second value)."""
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_num(std)}")
    if not self.dtype.is_floating_point:
        _not_implemented("log_normal_cpu", self.dtype)
    self._check_inplace()
    if self.numel():
        flat = _R.log_normal(_engine(generator), self.numel(), float(mean), float(std))
        _write(self, _in_order(self, flat.astype(self.dtype.np)))
    return self


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Tensor.cauchy_(median=0, sigma=1, *, generator=None): Cauchy draws."""
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_num(sigma)}")
    _float_only(self, "Cauchy distribution", typemeta=True)
    self._check_inplace()
    if self.numel():
        flat = _R.cauchy(_engine(generator), self.numel(), float(median), float(sigma))
        _write(self, _in_order(self, flat.astype(self.dtype.np)))
    return self


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
    uniform_, normal_, bernoulli_, bernoulli, random_, exponential_, geometric_, log_normal_, cauchy_, multinomial,
    apply_, pin_memory, is_pinned, share_memory_, is_shared, new)}
