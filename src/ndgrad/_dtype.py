"""dtypes with PyTorch's names, the default dtype, and PyTorch's type-promotion rules.

A `dtype` wraps a NumPy dtype. Promotion follows torch.result_type: operands fall into three
priority classes (dimensioned tensors > zero-dim tensors > Python scalars); the highest class
that holds the highest *category* (bool < integer < floating < complex) decides, and a lower
class only matters when it brings a higher category (then a Python float gives the default
dtype, a zero-dim tensor gives its own dtype).
"""
import builtins

import numpy as np

__all__ = ["dtype", "get_default_dtype", "set_default_dtype", "promote_types", "result_type"]

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:
    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_complex", "is_signed",
                 "_category", "__weakref__")

    def __init__(self, name, np_dtype, category):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self._category = category
        self.is_floating_point = category == _FLOAT
        self.is_complex = category == _COMPLEX
        self.is_signed = self.np.kind in "fic"

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))

    def to_real(self):
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self):
        return {float32: complex64, float64: complex128, float16: complex64}.get(self, self)


bool = dtype("bool", np.bool_, _BOOL)
uint8 = dtype("uint8", np.uint8, _INT)
int8 = dtype("int8", np.int8, _INT)
int16 = dtype("int16", np.int16, _INT)
int32 = dtype("int32", np.int32, _INT)
int64 = dtype("int64", np.int64, _INT)
float16 = dtype("float16", np.float16, _FLOAT)
float32 = dtype("float32", np.float32, _FLOAT)
float64 = dtype("float64", np.float64, _FLOAT)
complex64 = dtype("complex64", np.complex64, _COMPLEX)
complex128 = dtype("complex128", np.complex128, _COMPLEX)
# PyTorch's aliases
half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
cfloat, cdouble = complex64, complex128

ALL = (bool, uint8, int8, int16, int32, int64, float16, float32, float64, complex64, complex128)
_BY_NP = {d.np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}
_BY_NAME.update(half=half, float=float32, double=float64, short=int16, int=int32, long=int64,
                cfloat=complex64, cdouble=complex128)


def _dtype_by_name(name):
    return _BY_NAME[name]


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
            "int8, uint8, and bool.") from None


def to_dtype(d):
    """Accept an ndgrad dtype, a NumPy dtype, or the Python types float/int/bool."""
    if d is None or d.__class__ is dtype:
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
            if t.__class__ is not dtype:
                raise TypeError(f"promote_types(): argument 'type{i + 1}' (position {i + 1}) "
                                f"must be torch.dtype, not {_builtins.type(t).__name__}")
    if r is None:
        if a is b:
            r = a
        elif a._category != b._category and min(a._category, b._category) < _FLOAT:
            r = a if a._category > b._category else b
        elif {a, b} == {uint8, int8}:
            r = int16
        else:
            r = _BY_NP[np.promote_types(a.np, b.np)]
        _PROMOTE[key] = r
    return r


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
        if t.__class__ is not dtype:
            raise TypeError(f"finfo(): argument 'type' (position 1) must be torch.dtype, not "
                            f"{_builtins.type(t).__name__}")
        if not (t.is_floating_point or t.is_complex):
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo "
                            "to handle 'torch.finfo'")
        f = np.finfo(t.np)
        self.bits = _builtins.int(f.bits)       # (this module's `int`/`float` are dtypes)
        self.eps, self.max, self.min = _builtins.float(f.eps), _builtins.float(f.max), \
            _builtins.float(f.min)
        self.tiny = self.smallest_normal = _builtins.float(f.smallest_normal)
        self.resolution = 10.0 ** -_builtins.int(f.precision)
        self.dtype = str(f.dtype)

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """torch.iinfo: machine limits of an integer dtype, as Python ints."""

    def __init__(self, type):
        if type.__class__ is not dtype:
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
