"""dtypes with PyTorch's names, the default dtype, and PyTorch's type-promotion rules.

A `dtype` wraps a NumPy dtype. bfloat16 and the float8 types are ml_dtypes' NumPy dtypes (the
extension JAX uses: NumPy's ufuncs on them compute in float32 and round to nearest even once,
as PyTorch's CPU kernels do); uint16/32/64 are NumPy's. complex32 (chalf) exists as a dtype
only: NumPy and ml_dtypes have no complex32, so no tensor of it can be made (Note [Special
dtypes] in ops/_registry.py says how the others compute). Promotion follows torch.result_type: operands fall into three
priority classes (dimensioned tensors > zero-dim tensors > Python scalars); the highest class
that holds the highest *category* (bool < integer < floating < complex) decides, and a lower
class only matters when it brings a higher category (then a Python float gives the default
dtype, a zero-dim tensor gives its own dtype).
"""
import builtins

import numpy as np

__all__ = ["dtype", "get_default_dtype", "set_default_dtype", "promote_types", "result_type"]

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


# `_special` (0 for the eleven dtypes NumPy has): how ops treat the others
# (Note [Special dtypes] in ops/_registry.py)
_PLAIN, _BF16, _FLOAT8, _UINT, _NO_STORAGE = 0, 1, 2, 3, 4


class dtype:
    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_complex", "is_signed",
                 "_category", "_special", "_cname", "__weakref__")

    def __init__(self, name, np_dtype, category, cname, special=_PLAIN, itemsize=None,
                 signed=None):
        self.name = name
        if np_dtype is not None:   # (else `np` is _NoStorage's property: it says why)
            self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize if itemsize is None else itemsize
        self._category = category
        self._special = special
        self._cname = cname   # PyTorch's ScalarType name (in its messages: 'BFloat16')
        self.is_floating_point = category == _FLOAT
        self.is_complex = category == _COMPLEX
        self.is_signed = self.np.kind in "fic" if signed is None else signed

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))

    def to_real(self):
        return _TO_REAL.get(self, self)

    def to_complex(self):
        # (this dtype.to_complex is ndgrad's helper for complex promotion: float16 widens
        # to complex64, as NumPy stores no complex32)
        r = _TO_COMPLEX.get(self)
        if r is None:
            if self._special == _FLOAT8:
                raise RuntimeError(f"Unknown Complex ScalarType for {self._cname}")
            return self
        return r


class _NoStorage(dtype):
    """A dtype without a NumPy type behind it (complex32; bfloat16 and float8 when ml_dtypes is
    missing): reading its `np` raises. (A class of its own, not a __getattr__ on dtype, which
    would slow every attribute read of every dtype.)"""
    __slots__ = ()

    @property
    def np(self):
        if self._special == _NO_STORAGE:
            raise TypeError(ERR_COMPLEX32)
        raise RuntimeError(ERR_NO_ML_DTYPES.format(self.name))


def _new_dtype(name, np_dtype, *args):
    return (dtype if np_dtype is not None else _NoStorage)(name, np_dtype, *args)


bool = dtype("bool", np.bool_, _BOOL, "Bool")
uint8 = dtype("uint8", np.uint8, _INT, "Byte")
int8 = dtype("int8", np.int8, _INT, "Char")
int16 = dtype("int16", np.int16, _INT, "Short")
int32 = dtype("int32", np.int32, _INT, "Int")
int64 = dtype("int64", np.int64, _INT, "Long")
float16 = dtype("float16", np.float16, _FLOAT, "Half")
float32 = dtype("float32", np.float32, _FLOAT, "Float")
float64 = dtype("float64", np.float64, _FLOAT, "Double")
complex64 = dtype("complex64", np.complex64, _COMPLEX, "ComplexFloat")
complex128 = dtype("complex128", np.complex128, _COMPLEX, "ComplexDouble")
# PyTorch 2.13's "barebones" unsigned types: few ops (Note [Special dtypes])
uint16 = dtype("uint16", np.uint16, _INT, "UInt16", _UINT)
uint32 = dtype("uint32", np.uint32, _INT, "UInt32", _UINT)
uint64 = dtype("uint64", np.uint64, _INT, "UInt64", _UINT)
try:
    import ml_dtypes as _ml
except ImportError:  # (a dependency; without it these dtypes exist but hold no tensor)
    _ml = None


def _ml_dtype(name):
    return getattr(_ml, name) if _ml is not None else None


bfloat16 = _new_dtype("bfloat16", _ml_dtype("bfloat16"), _FLOAT, "BFloat16", _BF16, 2, True)
float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz = (
    _new_dtype(n, _ml_dtype(n), _FLOAT, "Float8" + n[6:], _FLOAT8, 1, True)
    for n in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"))
complex32 = _new_dtype("complex32", None, _COMPLEX, "ComplexHalf", _NO_STORAGE, 4, True)
# PyTorch's aliases
half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
cfloat, cdouble, chalf = complex64, complex128, complex32

ALL = (bool, uint8, int8, int16, int32, int64, float16, float32, float64, complex64, complex128,
       uint16, uint32, uint64, bfloat16, float8_e4m3fn, float8_e5m2, float8_e4m3fnuz,
       float8_e5m2fnuz, complex32)
FLOAT8 = (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz)
_BY_NP = {d.np: d for d in ALL if d._special != _NO_STORAGE and (_ml or d._special != 1
                                                                    and d._special != 2)}
_BY_NAME = {d.name: d for d in ALL}
_BY_NAME.update(half=half, float=float32, double=float64, short=int16, int=int32, long=int64,
                cfloat=complex64, cdouble=complex128, chalf=complex32)
_TO_REAL = {complex64: float32, complex128: float64, complex32: float16}
_TO_COMPLEX = {float32: complex64, float64: complex128, float16: complex64,
               bfloat16: complex64}
ERR_NO_ML_DTYPES = ("ndgrad needs the ml_dtypes package for {0} tensors (NumPy has no {0}): "
                    "pip install ml_dtypes")
ERR_COMPLEX32 = ("ndgrad has no complex32 (chalf) tensors: NumPy has no complex32 type, and "
                 "PyTorch itself computes almost nothing in it on the CPU. Use complex64.")


def storage_np(d):
    """The NumPy dtype that holds tensors of `d` (PyTorch-worded errors where there is none)."""
    return d.np


def as_strided(xp, a, shape, strides, writeable=True):
    """xp.lib.stride_tricks.as_strided, for ml_dtypes' arrays too (NumPy's array interface
    does not parse their type strings: the bytes are strided as unsigned ints, then viewed)."""
    st = xp.lib.stride_tricks.as_strided
    d = _BY_NP.get(a.dtype)
    if d is not None and (d._special == _BF16 or d._special == _FLOAT8):
        u = a.view(np.dtype(f"u{a.itemsize}"))
        return st(u, shape, strides, writeable=writeable).view(a.dtype)
    return st(a, shape, strides, writeable=writeable)


def cast(array, d):
    """`array` (of any module) as dtype `d`, a copy: to bfloat16 and the float8 types through
    float32, as PyTorch converts (its c10 types are made from a float: a double rounds twice);
    float8_e4m3fn saturates (PyTorch 2.13's CPU cast: beyond +-448, inf included, is +-448)."""
    t = d.np
    if d._special == _BF16 or d._special == _FLOAT8:
        if array.dtype.kind == "c":
            array = array.real
        if array.dtype != np.float32:
            array = array.astype(np.float32)
        if d is float8_e4m3fn:
            array = array.clip(-448.0, 448.0)
    return array.astype(t)


def _dtype_by_name(name):
    return _BY_NAME[name]


_HALF_NP = {}  # NumPy dtype -> whether it is float16 or bfloat16 (np_half)


def np_half(np_dtype):
    """Whether a NumPy dtype is float16 or bfloat16, the dtypes PyTorch's kernels compute in
    float32. Cached: NumPy builds a dtype's name in Python (~1 us) and parses a string compared
    with a dtype on every comparison ('bfloat16' slowly fails to parse without ml_dtypes)."""
    h = _HALF_NP.get(np_dtype)
    if h is None:
        h = _HALF_NP[np_dtype] = np.dtype(np_dtype).name in ("float16", "bfloat16")
    return h


def from_numpy_dtype(np_dtype):
    """The ndgrad dtype of a NumPy dtype (TypeError for ones PyTorch lacks)."""
    try:
        return _BY_NP[np_dtype]
    except KeyError:
        pass
    try:
        return _BY_NP[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).type.__name__}. The "
            "only supported "
            "types are: float64, float32, float16, complex64, complex128, int64, int32, int16, "
            "int8, uint64, uint32, uint16, uint8, and bool.") from None


def to_dtype(d):
    """Accept an ndgrad dtype, a NumPy dtype, or the Python types float/int/bool."""
    if d is None or d.__class__ is dtype or d.__class__ is _NoStorage:
        return d
    if d is builtins.float:  # (PyTorch's parser: Python's float is double whatever the
        return float64       # default dtype, complex is cdouble)
    if d is builtins.int:
        return int64
    if d is builtins.bool:
        return bool
    if d is builtins.complex:
        return complex128
    if isinstance(d, str):
        return _BY_NAME[d.replace("torch.", "")]
    return from_numpy_dtype(d)


_default = [float32]


def get_default_dtype():
    """torch.get_default_dtype(): the dtype of floating tensors made from Python floats."""
    return _default[0]


def set_default_dtype(d):
    """torch.set_default_dtype(d): only float32/float64 (and float16) are allowed."""
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default[0] = d


_PROMOTE = {}


def promote_types(type1, type2):
    """torch.promote_types: the smallest dtype to which both type1 and type2 can be cast."""
    a, b = type1, type2
    key = (a, b)
    r = _PROMOTE.get(key)
    if r is None:
        for i, t in enumerate(key):
            if not isinstance(t, dtype):
                raise TypeError(f"promote_types(): argument 'type{i + 1}' (position {i + 1}) "
                                f"must be torch.dtype, not {_builtins.type(t).__name__}")
        r = _promote_types(a, b)
        _PROMOTE[key] = r
    return r


def _promote_types(a, b):
    """c10's promoteTypes (c10/core/ScalarType.cpp), for the dtypes beyond NumPy's too."""
    if a is b:
        return a
    if a._special == _FLOAT8 or b._special == _FLOAT8:
        raise RuntimeError("Promotion for Float8 Types is not supported, attempted to promote "
                           f"{a._cname} and {b._cname}")
    if a._special == _UINT or b._special == _UINT:
        # (PyTorch: only a floating type promotes with uint16/32/64; complex32 does not)
        if a.is_floating_point:
            return a
        if b.is_floating_point:
            return b
        raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, "
                           f"attempted to promote {a._cname} and {b._cname}")
    if a._category != b._category and min(a._category, b._category) < _FLOAT:
        return a if a._category > b._category else b
    if a is complex32 or b is complex32:   # (bool/int lost above)
        o = b if a is complex32 else a
        return complex32 if o is float16 else (o if o.is_complex else o.to_complex())
    if a is bfloat16 or b is bfloat16:
        o = b if a is bfloat16 else a
        return float32 if o is float16 else o
    if {a, b} == {uint8, int8}:
        return int16
    return _BY_NP[np.promote_types(a.np, b.np)]


def _scalar_category(x):
    t = type(x)
    if t is builtins.bool or t is np.bool_:
        return _BOOL
    if t is builtins.int or isinstance(x, np.integer):
        return _INT
    if t is builtins.complex or isinstance(x, np.complexfloating):
        return _COMPLEX
    return _FLOAT


def result_type(*operands):
    """torch.result_type over tensors and Python scalars (see the module docstring)."""
    from ._tensor import Tensor

    dim_t = zero_t = None
    scalar_cat = -1
    for x in operands:
        if isinstance(x, Tensor):
            d = x.dtype
            if x._data.ndim:
                dim_t = d if dim_t is None else promote_types(dim_t, d)
            else:
                zero_t = d if zero_t is None else promote_types(zero_t, d)
        elif x is not None:
            c = _scalar_category(x)
            if c > scalar_cat:
                scalar_cat = c
    r = dim_t
    if zero_t is not None:
        if r is None:
            r = zero_t
        elif zero_t._category > r._category:  # (PyTorch's combine_categories)
            r = r.to_complex() if zero_t._category == _COMPLEX and r._category == _FLOAT \
                else zero_t
    if scalar_cat >= 0:
        if r is None:
            return (bool, int64, _default[0], _default[0].to_complex())[scalar_cat]
        if scalar_cat > r._category:
            if scalar_cat == _INT:
                r = int64
            elif scalar_cat == _FLOAT:
                r = _default[0]
            else:
                r = r.to_complex() if r._category == _FLOAT else _default[0].to_complex()
    return r


import builtins as _builtins  # noqa: E402


class finfo:
    """torch.finfo: machine limits of a floating dtype, as Python floats."""

    def __init__(self, type=None):
        t = type or _default[0]
        if not isinstance(t, dtype):
            raise TypeError(f"finfo(): argument 'type' (position 1) must be torch.dtype, not "
                            f"{_builtins.type(t).__name__}")
        if not (t.is_floating_point or t.is_complex):
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo "
                            "to handle 'torch.finfo'")
        d = t.to_real() if t.is_complex else t
        f = np.finfo(d.np) if not d._special else _ml.finfo(storage_np(d))
        self.bits = _builtins.int(f.bits)       # (this module's `int`/`float` are dtypes)
        self.eps, self.max, self.min = _builtins.float(f.eps), _builtins.float(f.max), \
            _builtins.float(f.min)
        self.tiny = self.smallest_normal = _builtins.float(f.smallest_normal)
        self.resolution = 10.0 ** -_builtins.int(f.precision)
        if d._special:  # (c10's digits10: floor(mantissa bits x log10(2)))
            self.resolution = 10.0 ** -_builtins.int(_builtins.int(f.nmant) * 0.30103)
            if d is float8_e5m2fnuz:
                self.eps = 0.125  # (c10's numeric_limits<Float8_e5m2fnuz>::epsilon: 2^-3)
        self.dtype = str(f.dtype)

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """torch.iinfo: machine limits of an integer dtype, as Python ints."""

    def __init__(self, type):
        if not isinstance(type, dtype):
            raise TypeError(f"iinfo(): argument 'type' (position 1) must be torch.dtype, not "
                            f"{_builtins.type(type).__name__}")
        if type is bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if type.is_floating_point or type.is_complex:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                            "handle 'torch.iinfo'")
        i = np.iinfo(type.np)
        self.bits, self.min, self.max = (_builtins.int(v) for v in (i.bits, i.min, i.max))
        self.dtype = str(i.dtype)

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"   # as PyTorch
