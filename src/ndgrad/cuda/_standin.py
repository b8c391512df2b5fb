"""A strict stand-in for a GPU array module, so every CI machine can prove "the same code on CuPy".

`ndarray` here wraps a NumPy array but behaves as CuPy's does where that matters for portability:

- implicit conversion to NumPy raises (``__array__``, NumPy ufuncs and NumPy functions refuse it),
  so op code that calls NumPy directly fails instead of silently copying to the host;
- functions of the module refuse host (NumPy) arrays, except the explicit transfers
  (``asarray``/``array``/...), as CuPy's kernels do;
- reductions and full-integer indexing give 0-d arrays, not NumPy scalars;
- ``get()``, ``item()``, ``tolist()`` and ``float()``/``int()``/``bool()`` are the explicit ways
  back to the host; ``__index__`` is absent (CuPy has none).

The module mirrors the part of NumPy's namespace that CuPy 14 provides: NumPy's public names
minus those CuPy lacks (`_NOT_IN_CUPY`, read from CuPy's own namespace). It is enabled as the
"cuda" device by ``NDGRAD_STANDIN_CUDA=1`` or ``ndgrad._backend.use_standin()``; it is a test
device, not a product feature.
"""
import types

import numpy as _numpy

from .._backend import CUPY_SCATTER_DTYPES

_host = _numpy.ndarray
_generic = _numpy.generic

# NumPy's public names that CuPy 14.2 does not have (dir(numpy) - dir(cupy)).
_NOT_IN_CUPY = frozenset("""
False_ ScalarType True_ asmatrix block bmat busday_count busday_offset busdaycalendar bytes_
char character clongdouble complex256 core ctypeslib datetime64 datetime_as_string datetime_data
dtypes einsum_path emath errstate f2py flexible float128 frompyfunc fromregex geomspace
get_include getbufsize geterr geterrcall histogram_bin_edges info insert is_busday isnat
little_endian longdouble ma matrix matvec memmap nanpercentile nanquantile ndenumerate nditer
nested_iters object_ polyder polydiv polyint rec recarray record sctypeDict setbufsize seterr
seterrcall show_runtime spacing str_ strings test timedelta64 typecodes unstack vecdot vecmat void
vectorize piecewise apply_along_axis apply_over_axes
""".split())
_LINALG = ("LinAlgError cholesky cond cross det eig eigh eigvals eigvalsh inv lstsq matmul "
           "matrix_power matrix_rank matrix_transpose norm pinv qr slogdet solve svd tensorinv "
           "tensorsolve").split()
_FFT = ("fft fft2 fftfreq fftn fftshift hfft ifft ifft2 ifftn ifftshift ihfft irfft irfft2 irfftn "
        "rfft rfft2 rfftfreq rfftn").split()
# explicit host -> device transfers
_TRANSFERS = frozenset("array asarray asanyarray ascontiguousarray asfortranarray".split())

ERR_IMPLICIT = ("Implicit conversion to a NumPy array is not allowed. Please use `.get()` to "
                "construct a NumPy array explicitly.")


def _unsupported(x):
    return TypeError(f"Unsupported type {type(x)}")


def _un(x):
    """Unwrap one argument: device arrays to their NumPy payload; host arrays refused."""
    t = type(x)
    if t is ndarray:
        return x._a
    if t is _host:
        raise _unsupported(x)
    if t is list or t is tuple:
        return t(_un(v) for v in x)
    return x


def _un_transfer(x):
    t = type(x)
    if t is ndarray:
        return x._a
    if t is _host:
        return x.copy()     # a transfer copies (CuPy's asarray of a host array never aliases it)
    if t is list or t is tuple:
        return t(_un_transfer(v) for v in x)
    return x


def _wrap(r):
    t = type(r)
    if t is _host:
        return ndarray(r)
    if isinstance(r, _generic):
        return ndarray(_numpy.asarray(r))
    if t is tuple or t is list:
        return t(_wrap(v) for v in r)
    if isinstance(r, tuple):   # named results (linalg.qr's QRResult, ...)
        return t(*(_wrap(v) for v in r))
    return r


def _function(name, f, unwrap=_un):
    def fn(*args, **kw):
        out = kw.get("out") if kw else None
        if out is not None:
            kw = dict(kw)
            kw["out"] = _un(out)
            f(*[unwrap(a) for a in args], **{k: (v if k == "out" else unwrap(v))
                                              for k, v in kw.items()})
            return out
        return _wrap(f(*[unwrap(a) for a in args],
                       **({k: unwrap(v) for k, v in kw.items()} if kw else {})))
    fn.__name__ = fn.__qualname__ = name
    return fn


class ufunc:
    """A NumPy ufunc restricted to device arrays, with CuPy's methods."""
    __slots__ = ("_u", "__name__")

    def __init__(self, u):
        self._u = u
        self.__name__ = u.__name__

    def __call__(self, *args, **kw):
        out = kw.get("out") if kw else None
        if out is not None:
            kw = dict(kw)
            kw["out"] = _un(out)
            self._u(*[_un(a) for a in args], **{k: (v if k == "out" else _un(v))
                                                for k, v in kw.items()})
            return out
        if kw:
            return _wrap(self._u(*[_un(a) for a in args], **{k: _un(v) for k, v in kw.items()}))
        return _wrap(self._u(*[_un(a) for a in args]))

    def _method(name):
        def m(self, *args, **kw):
            return _wrap(getattr(self._u, name)(*[_un(a) for a in args],
                                                **{k: _un(v) for k, v in kw.items()}))
        m.__name__ = name
        return m

    outer = _method("outer")
    _reduce, _accumulate = _method("reduce"), _method("accumulate")
    _reduceat, _at = _method("reduceat"), _method("at")
    del _method

    # CuPy's ufunc methods (cupy/_core/_kernel.pyx) exist for few ufuncs: reduce and accumulate
    # for add and multiply, reduceat for add, `at` for those with a scatter kernel, in the
    # dtypes it has; the others raise NotImplementedError, and so do they here.
    def _only(self, method, names):
        if self.__name__ not in names:
            raise NotImplementedError(f"`cupy_{self.__name__}.{method}` is not supported yet")

    def reduce(self, *args, **kw):
        self._only("reduce", ("add", "multiply"))
        return self._reduce(*args, **kw)

    def accumulate(self, *args, **kw):
        self._only("accumulate", ("add", "multiply"))
        return self._accumulate(*args, **kw)

    def reduceat(self, *args, **kw):
        self._only("reduceat", ("add",))
        return self._reduceat(*args, **kw)

    def at(self, a, indices, b=None):
        kinds = CUPY_SCATTER_DTYPES.get(self.__name__)
        if kinds is None:
            raise NotImplementedError(f"`cupy_{self.__name__}.at` is not supported yet")
        mask = type(indices) is ndarray and indices.dtype == bool   # (no dtype check there)
        if not mask and a.dtype.name not in kinds:
            raise TypeError(f"cupy.{self.__name__}.at only supports {', '.join(kinds)} as data "
                            "type")
        return self._at(a, indices, b)

    nin = property(lambda self: self._u.nin)
    nout = property(lambda self: self._u.nout)
    nargs = property(lambda self: self._u.nargs)
    name = property(lambda self: self._u.__name__)
    types = property(lambda self: self._u.types)

    def __repr__(self):
        return f"<ufunc '{self.__name__}'>"


def _binop(name):
    def op(self, other):
        o = type(other)
        if o is ndarray:
            other = other._a
        elif o is _host:
            raise _unsupported(other)
        return _wrap(getattr(self._a, name)(other))
    op.__name__ = name
    return op


def _meth(name):
    def m(self, *args, **kw):
        return _wrap(getattr(self._a, name)(*[_un(a) for a in args],
                                            **{k: _un(v) for k, v in kw.items()}))
    m.__name__ = name
    return m


class ndarray:
    """A device array of the stand-in module (see the module docstring)."""
    __slots__ = ("_a", "__weakref__")
    __array_ufunc__ = None          # NumPy ufuncs refuse us, and defer binary operators to us
    __array_priority__ = 1000

    def __init__(self, a):
        self._a = a
        if a.base is None:   # (an array owning its memory: counted as allocated, see _Pool)
            pool.used += a.nbytes
            if pool.used > pool.peak:
                pool.peak = pool.used

    def __del__(self):
        a = self._a
        if a.base is None and pool is not None:   # (None at interpreter exit)
            pool.used -= a.nbytes

    def __array__(self, dtype=None, copy=None):
        raise TypeError(ERR_IMPLICIT)

    # explicit transfers
    def get(self, stream=None, order="C", out=None):
        return self._a.copy()

    def item(self, *args):
        return self._a.item(*args)

    def tolist(self):
        return self._a.tolist()

    def __bool__(self):
        return bool(self._a)

    def __float__(self):
        return float(self._a)

    def __int__(self):
        return int(self._a)

    def __complex__(self):
        return complex(self._a)

    # metadata
    @property
    def shape(self):
        return self._a.shape

    @shape.setter
    def shape(self, value):   # (CuPy's too: in place, when a view is possible)
        self._a.shape = value

    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: _Flags(self._a.flags))
    T = property(lambda self: ndarray(self._a.T))
    mT = property(lambda self: ndarray(self._a.mT))
    base = property(lambda self: None if self._a.base is None else ndarray(self._a.base))

    @property
    def real(self):
        return ndarray(self._a.real)

    @real.setter
    def real(self, v):
        self._a.real = _un(v)

    @property
    def imag(self):
        return ndarray(self._a.imag)

    @imag.setter
    def imag(self, v):
        self._a.imag = _un(v)

    @property
    def data(self):
        return _Pointer(self._a)

    @property
    def device(self):
        return _Device()

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (_wrap(v) for v in self._a)

    def __getitem__(self, key):
        return _wrap(self._a[_un(key)])

    def __setitem__(self, key, value):
        self._a[_un(key)] = _un(value)

    def __repr__(self):
        return repr(self._a).replace("array(", "standin.array(", 1)

    __str__ = lambda self: str(self._a)

    def __copy__(self):
        return ndarray(self._a.copy())

    def __deepcopy__(self, memo):
        return ndarray(self._a.copy())

    def __reduce__(self):
        raise TypeError(ERR_IMPLICIT)

    def __dlpack__(self, stream=None, **kw):
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return (2, 0)

    for _n in ("add sub mul truediv floordiv mod pow matmul and or xor lshift rshift divmod"
               .split()):
        locals()[f"__{_n}__"] = _binop(f"__{_n}__")
        locals()[f"__r{_n}__"] = _binop(f"__r{_n}__")
    for _n in "lt le gt ge eq ne".split():
        locals()[f"__{_n}__"] = _binop(f"__{_n}__")
    for _n in "neg pos abs invert".split():
        locals()[f"__{_n}__"] = _meth(f"__{_n}__")
    for _n in ("all any argmax argmin argpartition argsort astype byteswap choose clip compress "
               "conj conjugate copy cumprod cumsum diagonal dot fill flatten max mean min nonzero "
               "partition prod ptp put ravel repeat reshape round searchsorted sort squeeze std "
               "sum swapaxes take tobytes trace transpose var view").split():
        locals()[_n] = _meth(_n)
    del _n

    __hash__ = None


def _inplace(name):
    def op(self, other):
        getattr(self._a, name)(_un(other))
        return self
    op.__name__ = name
    return op


for _n in "add sub mul truediv floordiv mod pow matmul and or xor lshift rshift".split():
    setattr(ndarray, f"__i{_n}__", _inplace(f"__i{_n}__"))
del _n


class _Flags:
    """CuPy's ndarray.flags: the contiguity and ownership, nothing else (no `writeable`)."""
    __slots__ = ("c_contiguous", "f_contiguous", "owndata")

    def __init__(self, f):
        self.c_contiguous, self.f_contiguous, self.owndata = \
            f.c_contiguous, f.f_contiguous, f.owndata

    def __getitem__(self, name):
        key = {"C_CONTIGUOUS": "c_contiguous", "F_CONTIGUOUS": "f_contiguous",
               "OWNDATA": "owndata"}.get(name)
        if key is None:
            raise KeyError(f"{name} is not defined for cupy.ndarray.flags")
        return getattr(self, key)


class _Pool:
    """The stand-in's memory pool, in CuPy's MemoryPool terms: the bytes of the live device
    arrays that own their memory (`used`), the most there were (`peak`, which torch.cuda's
    max_memory_allocated reads), nothing cached (total_bytes() is used_bytes())."""

    def __init__(self):
        self.used = self.peak = 0

    def used_bytes(self):
        return self.used

    def total_bytes(self):
        return self.used

    def free_bytes(self):
        return 0

    def free_all_blocks(self, stream=None):
        pass


pool = _Pool()


class _Pointer:
    __slots__ = ("ptr",)

    def __init__(self, a):
        self.ptr = a.__array_interface__["data"][0]


class _Device:
    id = 0

    def __repr__(self):
        return "<CUDA Device 0>"


def _build():
    mod = types.ModuleType("ndgrad_standin", "The strict stand-in GPU array module (tests).")
    for name in dir(_numpy):
        if name.startswith("_") or name in _NOT_IN_CUPY:
            continue
        v = getattr(_numpy, name)
        if isinstance(v, types.ModuleType):
            continue
        if isinstance(v, _numpy.ufunc):
            v = ufunc(v)
        elif name == "ndarray":
            v = ndarray
        elif isinstance(v, type) or not callable(v):
            pass          # dtypes, scalar types, finfo/iinfo classes, constants
        elif name in _TRANSFERS:
            v = _function(name, v, _un_transfer)
        else:
            v = _function(name, v)
        setattr(mod, name, v)
    mod.asnumpy = lambda a, stream=None, order="C", out=None: a.get() if type(a) is ndarray \
        else _numpy.asarray(a)
    mod.get_array_module = lambda *args: mod

    def sub(name, src, names, wrapped=True):
        m = types.ModuleType(f"ndgrad_standin.{name}")
        for n in names:
            v = getattr(src, n, None)
            if v is None:        # (NumPy 1.x lacks some of CuPy's names: linalg.cross, ...)
                continue
            setattr(m, n, _function(n, v) if wrapped and callable(v) and not isinstance(v, type)
                    else v)
        setattr(mod, name, m)
        return m

    linalg = sub("linalg", _numpy.linalg, _LINALG)
    numpy_solve = linalg.solve

    def solve(a, b):
        """CuPy's linalg.solve: b of one dim, or of a's batch dims exactly (no broadcasting)."""
        if b.ndim == 0:
            raise ValueError("b must have at least one dimension")
        if b.ndim > 1 and a.shape[:-1] != b.shape[:-1]:
            raise ValueError("a must have (..., M, M) shape and b must have (..., M, K) for "
                             "multidimensional b")
        return numpy_solve(a, b)
    linalg.solve = solve
    sub("fft", _numpy.fft, _FFT)
    lib = types.ModuleType("ndgrad_standin.lib")
    lib.stride_tricks = types.ModuleType("ndgrad_standin.lib.stride_tricks")
    for n in ("as_strided", "sliding_window_view"):
        setattr(lib.stride_tricks, n, _function(n, getattr(_numpy.lib.stride_tricks, n)))
    mod.lib = lib
    mod.random = None   # ndgrad draws on the host generator and transfers explicitly
    mod.ndarray = ndarray
    mod.get_default_memory_pool = lambda: pool
    return mod


xp = _build()
