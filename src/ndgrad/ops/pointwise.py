# Elementwise ops. Each entry: the forward on `xp` arrays, then one derivative formula per input,
# written with ndgrad ops (see ops/_registry.py for the language). Formulas return gradients in
# the broadcast output shape; the engine sums them back to each input's shape.
#
#   name = defop("name", forward=lambda xp, self, ...: ..., promote=..., self=<formula>, ...)
#
# `promote="float"`: integer/bool inputs compute in the default float dtype (exp, sin, ...);
# `"binary"`: torch.result_type over tensors and scalars; `"binary_float"`: both. Public wrappers
# that pick an overload (tensor vs scalar argument: ClampBackward0 vs ClampBackward1) or check
# arguments with PyTorch's messages are plain functions next to their defops.
import math

from .. import _dtype as D
from .._backend import numpy as _np, to_numpy
from .._creation import zeros_like as _zeros_like
from . import _argcheck
from ._argcheck import argument_error as _argument_error
from .._tensor import Tensor
from ._registry import defop
from . import _fma, _specfun
from ._scratch import scratch as _scratch
from ._inplace import register_in_storage
from .complex import _cj, _is_complex  # conj on complex tensors, identity on real ones (Note [Complex gradients])

__all__ = [
    "add", "sub", "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide",
    "floor_divide", "remainder", "fmod", "pow", "float_power", "neg", "negative", "positive",
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "square",
    "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh",
    "acosh", "atanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "sigmoid",
    "logit", "relu", "erf", "erfc", "erfinv", "lgamma", "digamma", "polygamma", "floor", "ceil",
    "round", "trunc", "fix", "frac", "clamp", "clip", "clamp_min", "clamp_max", "nan_to_num",
    "abs", "absolute", "sign", "sgn", "maximum", "minimum", "fmax", "fmin", "atan2", "arctan2",
    "hypot", "lerp", "addcmul", "addcdiv", "where", "copysign", "xlogy",
    "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
    "not_equal", "isclose", "allclose", "equal", "logical_and", "logical_or", "logical_xor",
    "logical_not", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
    "bitwise_right_shift",
]

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_2_SQRTPI = 2.0 / math.sqrt(math.pi)
_SQRTPI_2 = math.sqrt(math.pi) / 2.0


def _type_name(d):
    return d._cname


def _not_implemented(kernel, dtype):
    return NotImplementedError(f'"{kernel}" not implemented for \'{_type_name(dtype)}\'')


def _is_int(a):
    d = getattr(a, "dtype", None)
    return d.kind in "iub" if d is not None else isinstance(a, int)


# ---------------------------------------------------------------- arithmetic

def _add_fwd(xp, self, other, alpha=1):
    if alpha == 1:
        return xp.add(self, other)
    _check_alpha(self, other, alpha)
    if other.__class__ is int and getattr(self, "dtype", None) is not None and \
            self.dtype.kind in "iu":   # (int8 tensor + 300 * 2: a Python int, wrapped later)
        return xp.add(self, other * alpha)
    # alpha != 1: one rounding, as PyTorch's kernel (a fused multiply-add: ops/_fma.py)
    return _fma.add_scaled(xp, self, other, alpha)


def _sub_fwd(xp, self, other, alpha=1):
    if alpha == 1:
        return xp.subtract(self, other)
    _check_alpha(self, other, alpha)
    if other.__class__ is int and getattr(self, "dtype", None) is not None and \
            self.dtype.kind in "iu":
        return xp.subtract(self, other * alpha)
    return _fma.add_scaled(xp, self, other, -alpha)


def _check_alpha(self, other, alpha):
    if alpha.__class__ is float and _is_int(self) and _is_int(other):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")


add = defop("add", _add_fwd, promote="binary",
            self=lambda grad: grad,
            other=lambda grad, alpha: grad if alpha == 1 else grad * alpha)
_sub = defop("sub", _sub_fwd, promote="binary",
             self=lambda grad: grad,
             other=lambda grad, alpha: -grad if alpha == 1 else grad * -alpha)
# Note [Fused updates in place]
# `p.add_(g, alpha=-lr)`, `p.sub_(g, alpha=lr)`, `ema.lerp_(p, w)`, `v.addcmul_(g, g, value=c)`
# and `p.addcdiv_(m, d, value=-s)` under no_grad (hand-written optimizers, weight averages): an
# in-place op runs the out-of-place op and copies the result into the tensor; for these
# ops/_fma.py computes the same values into the tensor's storage directly (one BLAS axpy for an
# add_ of a matching operand), without the result array and the copy (a 200 K-element add_ 80
# -> 47 us). Only float32/float64 host tensors, Tensor operands of the same dtype that broadcast
# into self without overlapping it (a shifted overlap would read elements already written), and
# a Python number for alpha, weight or value; any other case returns False before writing and
# takes the general path.

def _fused_operand(self, other):
    """other's array when self.op_(other, ...) may compute into self's storage, else None."""
    data = self._data
    if data.__class__ is not _np.ndarray or data.dtype.char not in "fd" or \
            not isinstance(other, Tensor) or other.dtype is not self.dtype or \
            (other.__class__ is not Tensor and other._tf):   # (a Parameter: yes)
        return None
    o = other._data
    if o.__class__ is not _np.ndarray or o.ndim > data.ndim:
        return None
    shape = data.shape
    if o.shape != shape:
        try:
            if _np.broadcast_shapes(o.shape, shape) != shape:  # host: shapes
                return None
        except ValueError:   # (not broadcastable: the general path raises PyTorch's error)
            return None
    return None if _np.may_share_memory(o, data) else o   # host: an address-range test


def _add_in_storage(self, *args, **kwargs):
    """self.add_(other, alpha=a) (or its positional alpha) into self's storage."""
    return _scaled_in_storage(self, args, kwargs, 1)


def _sub_in_storage(self, *args, **kwargs):
    """self.sub_(other, alpha=a) into self's storage."""
    return _scaled_in_storage(self, args, kwargs, -1) if len(args) == 1 else False


def _scaled_in_storage(self, args, kwargs, sign):
    if len(args) == 2 and not kwargs:
        other, alpha = args
    elif len(args) == 1 and len(kwargs) == 1 and "alpha" in kwargs:
        other, alpha = args[0], kwargs["alpha"]
    else:
        return False
    if alpha.__class__ is not float and alpha.__class__ is not int or alpha == 1 or \
            not self._data.ndim:   # (a 0-d self: two roundings, as add_scaled's)
        return False
    o = _fused_operand(self, other)
    if o is None:
        return False
    data = self._data
    _fma.fma(_fma.scalar(sign * alpha, data), o, data, out=data)
    return True


def _lerp_in_storage(self, *args, **kwargs):
    """self.lerp_(end, weight) for a Python number weight into self's storage."""
    if len(args) != 2 or kwargs:
        return False
    end, weight = args
    if weight.__class__ is not float and weight.__class__ is not int:
        return False
    o = _fused_operand(self, end)
    if o is None or o.shape != self._data.shape:
        return False
    _fma.lerp_(self._data, o, weight)
    return True


def _rsub_fwd(xp, self, other, alpha=1):
    if self.__class__ is not other.__class__ and not hasattr(self, "shape"):
        # torch.rsub(3, t): PyTorch has no Number-input overload (t.__rsub__(3) is rsub(t, 3))
        raise TypeError("rsub(): argument 'input' must be Tensor")
    return _sub_fwd(xp, other, self, alpha)


# rsub(t, number) is RsubBackward1 (the operator t.__rsub__ too: one edge, as PyTorch's; a
# Tensor other goes to RsubBackward0)
_rsub = defop("rsub", _rsub_fwd, promote="binary", node_name="RsubBackward1",
              self=lambda grad, alpha: -grad if alpha == 1 else grad * -alpha)
_rsub_tensor = defop("rsub_tensor", _rsub_fwd, promote="binary", node_name="RsubBackward0",
                     self=lambda grad, alpha: -grad if alpha == 1 else grad * -alpha,
                     other=lambda grad: grad)


_RSUB = ("(Tensor input, Tensor other, *, Number alpha = 1)",
         "(Tensor input, Number other, Number alpha = 1)")


def rsub(input, other, *rest, alpha=1):
    """torch.rsub(input, other, *, alpha=1): other - alpha * input (a Number other takes alpha
    by position too, as PyTorch's second overload)."""
    if rest:
        if len(rest) > 1 or isinstance(other, Tensor) or alpha != 1:
            from ._argcheck import combination_error
            raise combination_error("rsub", _RSUB, (input, other) + rest, {"alpha": alpha}
                                    if alpha != 1 else {})
        alpha = rest[0]
    return (_rsub_tensor if isinstance(other, Tensor) else _rsub)(input, other, alpha)


def _check_bool_sub(input, other):
    if (isinstance(input, Tensor) and input.dtype is D.bool) and (
            (isinstance(other, Tensor) and other.dtype is D.bool) or isinstance(other, bool)):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead.")


def sub(input, other, *, alpha=1):
    """torch.sub(input, other, *, alpha=1)."""
    _check_bool_sub(input, other)
    # alpha by keyword: a __torch_function__ override gets the call as torch.sub takes it
    return _sub(input, other) if alpha == 1 else _sub(input, other, alpha=alpha)


def subtract(input, other, alpha=1):
    """torch.subtract: sub (PyTorch's overload subtract(input, Number other, Number alpha=1)
    takes alpha by position too)."""
    _check_bool_sub(input, other)
    return _sub(input, other, alpha)


def _opmath_number(ufunc):
    """ufunc(self, other) as PyTorch's kernel computes a float16 tensor with a Python float
    (_fma.number_operand: mul and div in float32, the result rounded to float16 once; NumPy
    would round the number to float16 first, which differed for a third of x * 0.1)."""
    def forward(xp, self, other):
        o = _fma.number_operand(ufunc, self, other)
        if o is not other:
            return getattr(xp, ufunc)(self, o).astype(self.dtype)
        return getattr(xp, ufunc)(self, other)
    return forward


mul = defop("mul", _opmath_number("multiply"), promote="binary",
            self=lambda grad, other: grad * _cj(other),
            other=lambda grad, self: grad * _cj(self))
multiply = mul
_div = defop("div", _opmath_number("true_divide"), promote="binary_float",
             self=lambda grad, other: grad / _cj(other),
             other=lambda grad, self, other: -grad * _cj(self) / _cj(other * other))


def _int_zero_division(xp, self, other):
    if _is_int(self) and _is_int(other) and bool((xp.asarray(other) == 0).any()):
        raise RuntimeError("ZeroDivisionError")


def _div_mode_fwd(xp, self, other, rounding_mode):
    _int_zero_division(xp, self, other)
    if rounding_mode == "floor":
        r = xp.floor_divide(self, other)
    else:
        q = xp.true_divide(self, other)
        r = xp.trunc(q).astype(q.dtype if self.dtype.kind in "fc" else self.dtype)
    return r


_div_mode = defop("div_mode", _div_mode_fwd, promote="binary", node_name="DivBackward2",
                  self=None, other=None)


def div(input, other, *, rounding_mode=None):
    """torch.div: true division, or rounded with rounding_mode='trunc'|'floor'."""
    if rounding_mode is None:
        return _div(input, other)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
            f"'{rounding_mode}'")
    return _div_mode(input, other, rounding_mode)


divide = div


def true_divide(input, other):
    """torch.true_divide(input, other): div with no rounding."""
    return _div(input, other)


def _no_derivative(name):
    def f(grad):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return f


floor_divide = defop(
    "floor_divide", lambda xp, self, other: _div_mode_fwd(xp, self, other, "floor"),
    promote="binary", node_name="NotImplemented", self=_no_derivative("floor_divide"),
    other=_no_derivative("floor_divide"))


def _rem_fwd(xp, self, other):
    if _is_int(self) and _is_int(other):
        _int_zero_division(xp, self, other)
        return xp.remainder(self, other)
    # PyTorch: a - b * floor(a / b), with the sign of the divisor
    r = xp.remainder(self, other)
    return r


def _fmod_fwd(xp, self, other):
    if self.dtype.kind in "iub" and _is_int(other):  # (a number `self` fails: PyTorch's too)
        _int_zero_division(xp, self, other)
    return xp.fmod(self, other)


_remainder_t = defop("remainder", _rem_fwd, promote="binary", node_name="RemainderBackward1",
                     self=lambda grad: grad,
                     other=lambda grad, self, other: -grad * floor(self / other))
_remainder_s = defop("remainder_scalar", _rem_fwd, promote="binary",
                     node_name="RemainderBackward0", self=lambda grad: grad)
_fmod_t = defop("fmod", _fmod_fwd, promote="binary", node_name="FmodBackward1",
                self=lambda grad: grad,
                other=lambda grad, self, other: -grad * trunc(self / other))
_fmod_s = defop("fmod_scalar", _fmod_fwd, promote="binary", node_name="FmodBackward0",
                self=lambda grad: grad)


def remainder(input, other):
    """torch.remainder(input, other): Python's modulus (sign of the divisor)."""
    if input.__class__ in _SEQUENCES or not (isinstance(input, Tensor) or
                                             isinstance(other, Tensor)):
        # (a Number first, yes; a list, no: NumPy would take it; two Numbers, no)
        raise _argcheck.invalid_combination("remainder", (input, other), {})
    if not isinstance(input, Tensor):
        from .._creation import tensor
        input = tensor(input, dtype=D.result_type(input, other),
                       device=other.device if isinstance(other, Tensor) else None)
    if isinstance(other, Tensor):
        return _remainder_t(input, other)
    return _remainder_s(input, other)


def fmod(input, other):
    """torch.fmod(input, other): C's fmod (sign of the dividend)."""
    if isinstance(other, Tensor):
        return _fmod_t(input, other)
    return _fmod_s(input, other)


def _pow_self_grad(grad, self, exponent):
    if exponent == 0:  # (zeros, as PyTorch's pow_backward: also where grad is inf or nan)
        return _zeros_like(grad)
    # (the op by name, not `**`: run on the arrays (ops/_raw.py), `**` would be NumPy's power,
    # not pow's forward with PyTorch's written forms)
    return grad * _cj(exponent * _pow_scalar(self, exponent - 1))


# PyTorch's CPU kernel for a tensor to a number power (PowKernel.cpp), float32 and float64:
# x ** 3 is (x * x) * x, x ** -2 is 1 / (x * x), x ** -0.5 is 1 / sqrt(x), each rounded as
# written; x ** 2, ** -1 and ** 0.5 are NumPy's own x * x, 1 / x and sqrt(x) (PyTorch's float32
# sqrt comes from MKL, within 0.75 ulp: ndgrad keeps the correctly rounded one, see
# ops/_fma.sqrt). Other exponents are std::pow in double for float32, rounded once: computed in
# float64 here too (NumPy's float32 power differs from it in the last bit for ~20 % of
# arguments; PyTorch's vectorized pow for ~2 %). float16 and complex: NumPy's power, as
# PyTorch's (its float16 kernel is pow in float).
_POW_AS_WRITTEN = {
    3: lambda xp, x: xp.multiply(x * x, x),
    -2: lambda xp, x: xp.divide(1, x * x),
    -0.5: lambda xp, x: xp.divide(1, xp.sqrt(x)),
}


def pow_in_steps(xp, x, exponent, low):
    """x ** exponent for x the float32 widening of a bfloat16 array, where PyTorch's kernel
    writes the power as products (3, -2): each product rounded to bfloat16, as its BFloat16
    arithmetic; None for the other exponents (computed in float32, rounded once)."""
    if exponent.__class__ not in (int, float) or exponent not in (3, -2):
        return None
    with _fma._quiet():     # (inf * 0, 1 / 0: IEEE's values, no warnings, as PyTorch)
        sq = (x * x).astype(low)
        if exponent == 3:
            return sq * x.astype(low)
        return xp.divide(1, sq.astype(x.dtype)).astype(low)


def _pow_scalar_fwd(xp, self, exponent):
    if _is_int(self) and isinstance(exponent, int) and not isinstance(exponent, bool) \
            and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    dt = self.dtype
    if dt.kind == "f" and dt.itemsize >= 4 and exponent.__class__ in (int, float):
        f = _POW_AS_WRITTEN.get(exponent)
        if f is not None:
            return f(xp, self)
        if dt.itemsize == 4 and exponent not in (2, -1, 0.5, 1, 0):
            return xp.power(self.astype("float64"), exponent).astype(dt)
    return xp.power(self, exponent)


_pow_scalar = defop("pow", _pow_scalar_fwd, promote="binary", self=_pow_self_grad)


def _pow_tt_self(grad, self, exponent):
    # (PyTorch's: 0 where the exponent is 0, also where grad is inf or nan)
    return where(exponent == 0, 0.0, grad * _cj(exponent * self ** (exponent - 1)))


def _pow_tt_exponent(grad, self, exponent, result):
    if self.dtype._category == 3 or exponent.dtype._category == 3:
        from .complex import real as _real
        zero = (self == 0) & (_real(exponent) >= 0)
        return grad * _cj(where(zero, 0.0, result * log(self)))
    return grad * where((self == 0) & (result >= 0), 0.0, result * log(self))


def _pow_fwd(xp, self, exponent):
    if _is_int(self) and _is_int(exponent) and (exponent < 0).any():
        # PyTorch: 1 ** -n = 1, (-1) ** -n = +-1, anything else ** -n = 0
        neg = exponent < 0
        r = xp.power(self, xp.where(neg, -exponent, exponent))
        small = xp.where(self == 1, 1, xp.where(self == -1, xp.where(exponent % 2 == 0, 1, -1), 0))
        return xp.where(neg, small, r).astype(r.dtype, copy=False)
    return xp.power(self, exponent)


_pow_tensor = defop("pow_tensor", _pow_fwd, promote="binary", node_name="PowBackward1",
                    self=_pow_tt_self, exponent=_pow_tt_exponent)
_pow_scalar_base = defop(
    "pow_scalar_base", lambda xp, self, exponent: xp.power(self, exponent), promote="binary",
    node_name="PowBackward2",
    exponent=lambda grad, self, result: grad * _cj(result * _log_scalar(self)))


def _log_scalar(x):
    return math.log(x) if x > 0 else (float("-inf") if x == 0 else float("nan"))


def pow(input, exponent):
    """torch.pow(input, exponent): tensor or Python number on either side."""
    if input.__class__ in _SEQUENCES or exponent.__class__ in _SEQUENCES or not (
            isinstance(input, Tensor) or isinstance(exponent, Tensor)):  # (NumPy would take
        raise _argcheck.invalid_combination("pow", (input, exponent), {})  # them as arrays)
    if isinstance(exponent, Tensor):
        if isinstance(input, Tensor):
            return _pow_tensor(input, exponent)
        return _pow_scalar_base(input, exponent)
    if exponent.__class__ is int and isinstance(input, Tensor) and input.dtype._category == 1:
        from .indexing import _check_store   # (pow(int8 tensor, 300): PyTorch's overflow error)
        _check_store(exponent, input.dtype)
    return _pow_scalar(input, exponent)


_SEQUENCES = (list, tuple)


def float_power(input, exponent):
    """torch.float_power: pow computed in float64 (complex128 when either side is complex)."""
    if not (isinstance(input, Tensor) or isinstance(exponent, Tensor)):
        raise _argcheck.invalid_combination("float_power", (input, exponent), {})
    cplx = any((isinstance(v, Tensor) and v.dtype.is_complex) or isinstance(v, complex)
               for v in (input, exponent))
    target = D.complex128 if cplx else D.float64
    if isinstance(input, Tensor):
        input = input.to(target)
    if isinstance(exponent, Tensor):
        exponent = exponent.to(target)
    return pow(input, exponent)


def _neg_fwd(xp, self):
    if self.dtype.kind == "b":
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead.")
    return xp.negative(self)


neg = defop("neg", _neg_fwd, self=lambda grad: -grad)
negative = neg


def positive(input):
    """torch.positive: the input itself."""
    if input.dtype is D.bool:
        raise RuntimeError(
            "The `+` operator, on a bool tensor is not supported.")
    return input


def _where_fwd(xp, condition, self, other):
    # (a number beside a bfloat16 array, which runs natively (_BF16_NATIVE): in the array's
    # dtype, as PyTorch's wrapped number; NumPy would promote ml_dtypes' arrays to float64)
    if hasattr(self, "dtype") and self.dtype.kind == "V" and other.__class__ in (int, float):
        other = xp.asarray(other, self.dtype)
    elif hasattr(other, "dtype") and other.dtype.kind == "V" and self.__class__ in (int, float):
        self = xp.asarray(self, other.dtype)
    return select(xp, condition, self, other)


where_ = defop("where", _where_fwd, promote="binary",
               self=lambda grad, condition: where(condition, grad, 0.0),
               other=lambda grad, condition: where(condition, 0.0, grad))


_ABSENT = object()  # where's argument not given (None is one that PyTorch refuses)


def where(condition, input=_ABSENT, other=_ABSENT):
    """torch.where(condition, input, other); torch.where(condition) is nonzero(as_tuple=True)."""
    if input is _ABSENT and other is _ABSENT:
        from ..ops import nonzero
        return nonzero(condition, as_tuple=True)
    if input is _ABSENT or other is _ABSENT or not isinstance(condition, Tensor):
        # (no where(condition, x) overload, and a condition only as a Tensor: NumPy's would
        # take either)
        given = tuple(a for a in (condition, input, other) if a is not _ABSENT)
        raise _argcheck.invalid_combination("where", given, {})
    if condition.dtype.name != "bool":
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{_type_name(condition.dtype)}")
    for scalar, t in ((input, other), (other, input)):   # (where(c, int8 tensor, 300): PyTorch's
        if isinstance(t, Tensor) and t.dtype._category < 2:   # overflow error)
            from .indexing import _check_store
            _check_store(scalar, t.dtype)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        # two numbers: PyTorch's dtype of the pair (the default float dtype for a float, not
        # NumPy's float64; int64 for ints, bool for bools)
        from .._creation import tensor
        from .._dtype import get_default_dtype
        kinds = {type(v) for v in (input, other)}
        dt = (D.complex128 if get_default_dtype() is D.float64 else D.complex64) \
            if complex in kinds else get_default_dtype() if float in kinds else \
            D.int64 if int in kinds else D.bool if kinds == {bool} else None
        if dt is not None:
            input, other = (tensor(v, dtype=dt, device=condition.device)
                            for v in (input, other))
    return where_(condition, input, other)


# ---------------------------------------------------------------- unary math

def _unary(name, fwd, formula, promote="float", node_name=None):
    return defop(name, fwd, promote=promote, node_name=node_name, self=formula)


exp = _unary("exp", lambda xp, self: xp.exp(self), lambda grad, result: grad * _cj(result))
exp2 = _unary("exp2", lambda xp, self: xp.exp2(self),
              lambda grad, result: grad * _cj(result) * _LN2)
expm1 = _unary("expm1", lambda xp, self: xp.expm1(self),
               lambda grad, result: grad * _cj(result + 1))
log = _unary("log", lambda xp, self: xp.log(self), lambda grad, self: grad / _cj(self))
log2 = _unary("log2", lambda xp, self: xp.log2(self),
              lambda grad, self: grad / _cj(self * _LN2))
log10 = _unary("log10", lambda xp, self: xp.log10(self),
               lambda grad, self: grad / _cj(self * _LN10))
log1p = _unary("log1p", lambda xp, self: xp.log1p(self),
               lambda grad, self: grad / _cj(self + 1), node_name="Log1PBackward0")
sqrt = _unary("sqrt", lambda xp, self: xp.sqrt(self),
              lambda grad, result: grad / (2 * _cj(result)))
rsqrt = _unary("rsqrt", lambda xp, self: 1 / xp.sqrt(self),
               lambda grad, result: grad * _cj(-0.5 * result * result * result))
reciprocal = _unary("reciprocal", lambda xp, self: 1 / self,
                    lambda grad, result: -grad * _cj(result * result))
sin = _unary("sin", lambda xp, self: xp.sin(self), lambda grad, self: grad * _cj(cos(self)))
cos = _unary("cos", lambda xp, self: xp.cos(self), lambda grad, self: -grad * _cj(sin(self)))
tan = _unary("tan", lambda xp, self: xp.tan(self),
             lambda grad, result: grad * _cj(1 + result * result))
asin = _unary("asin", lambda xp, self: xp.arcsin(self),
              lambda grad, self: grad * _cj(rsqrt(1 - self * self)))
acos = _unary("acos", lambda xp, self: xp.arccos(self),
              lambda grad, self: -grad * _cj(rsqrt(1 - self * self)))
atan = _unary("atan", lambda xp, self: xp.arctan(self),
              lambda grad, self: grad / _cj(1 + self * self))
sinh = _unary("sinh", lambda xp, self: xp.sinh(self),
              lambda grad, self: grad * _cj(cosh(self)))
cosh = _unary("cosh", lambda xp, self: xp.cosh(self),
              lambda grad, self: grad * _cj(sinh(self)))
# self * (alpha * other * other2) in one op instead of three, for double-backward formulas (bench
# W8). Each derivative is the same product with `grad` in the place of its input. PyTorch records
# a mul there, hence the node's name.
_mul3 = defop(
    "mul3", lambda xp, self, other, other2, alpha: self * (alpha * other * other2),
    promote="binary", node_name="MulBackward0",
    self=lambda grad, other, other2, alpha: _mul3(grad, other, other2, alpha),
    other=lambda grad, self, other2, alpha: _mul3(self, grad, other2, alpha),
    other2=lambda grad, self, other, alpha: _mul3(self, other, grad, alpha))


_SMALL = 2048  # elements: below this, fewer ufunc calls beat reusing buffers (bench W1)
_ONES = {}  # dtype -> 0-d one (NumPy takes a 0-d array operand faster than a Python number)


def _one(a):
    one = _ONES.get(a.dtype)
    if one is None:
        one = _ONES[a.dtype] = _np.ones((), a.dtype)  # host: a cached 0-d constant
    return one


_ZEROS = {}  # dtype -> 0-d zero, as _ONES


def _zero(a):
    if a.__class__ is not _np.ndarray:  # (device arrays: the number)
        return 0
    zero = _ZEROS.get(a.dtype)
    if zero is None:
        zero = _ZEROS[a.dtype] = _np.zeros((), a.dtype)  # host: a cached 0-d constant
    return zero


# Note [Bounds as rows]
# NumPy's maximum and minimum (fmax, fmin) against a scalar or 0-d operand take a loop without
# SIMD: 3-4x slower than against a contiguous array of the same length (float32 and float64,
# NumPy 2.x; a ReLU of (32, 64, 32, 32) 1.4 ms against 0.35). A C-contiguous float array of
# _BOUND_MIN elements or more is compared instead row by row of _ROW elements against one
# cached row of the bound (a 1-d array up to _ROW elements against a slice of it in one call:
# GELU's small-array clamp). The
# bound is the first operand there and in the fallback: on equal zeros NumPy returns the
# second, x, as PyTorch's kernels (max(bound, x) in its vector code, std::max(x, bound) in its
# scalar loops) do, so relu(-0.0) is -0.0 as in PyTorch (float16's loops return the first
# operand: x goes first there).
_ROW = 1 << 14
_BOUND_MIN = 1024   # elements (below it the scalar loop costs less than the call's set-up)
_ROWS = {}  # (dtype char, the bound) -> read-only row of the bound
_BIG = {"f": 1 << 24, "d": 1 << 53}  # bounds exact in the dtype, without overflow warnings


def _bound_first(x):
    """Whether NumPy's maximum and minimum return their second operand on equal zeros for x's
    dtype (float32, float64; other arrays than NumPy's too); float16's loops return the
    first."""
    return x.__class__ is not _np.ndarray or x.dtype.char in "fd"


def bound(ufunc, limit, x, out=None):
    """ufunc(limit, x) for ufunc one of xp's maximum, minimum, fmax, fmin and a Python number
    `limit` (a bound of x's dtype), as fast as NumPy's contiguous loops allow (Note [Bounds as
    rows]); into `out` if given (x's shape and dtype, C-contiguous)."""
    big = _BIG.get(x.dtype.char) if x.__class__ is _np.ndarray else None
    if big is None or x.size < _BOUND_MIN or limit.__class__ not in (int, float) or \
            not -big <= limit <= big or not x.flags.c_contiguous:  # (nan, out of range: NumPy's)
        return ufunc(limit, x, out=out) if _bound_first(x) else ufunc(x, limit, out=out)
    key = (x.dtype.char, limit if limit else repr(float(limit)))   # (-0.0 apart from 0.0)
    row = _ROWS.get(key)
    if row is None:
        if len(_ROWS) > 64:     # (bounds that change every call: no unbounded cache)
            _ROWS.clear()
        row = _ROWS[key] = _np.full(_ROW, limit, x.dtype)  # host: a NumPy constant row
        row.flags.writeable = False
    n = x.size
    if n <= _ROW and x.ndim == 1:   # (one short row: generation's arrays)
        return ufunc(row[:n], x, out=out)
    if out is None:
        out = _np.empty(x.shape, x.dtype)  # host: a NumPy array (checked above)
    flat, res = x.reshape(-1), out.reshape(-1)
    m = n - n % _ROW
    if m:
        ufunc(row, flat[:m].reshape(-1, _ROW), out=res[:m].reshape(-1, _ROW))
    if m < n:
        ufunc(row[:n - m], flat[m:], out=res[m:])
    return out


# Note [Selecting on bits]
# NumPy's where runs 1-4 ns an element past ~16 K elements (0.6 below): 10-20x a
# multiply. For large C-contiguous NumPy operands of one 2-, 4- or 8-byte dtype, select() picks
# the bits instead: the mask widened to the dtype's width and negated (all ones where True),
# then y ^ ((x ^ y) & mask), or x & mask where y is zero, or y & ~mask where x is zero: three
# to five SIMD passes, the same bits as where (NaN payloads and signed zeros included).
_SELECT_MIN = 1 << 14  # elements (below it where's own loop is as fast or faster)
_UINT = {2: _np.uint16, 4: _np.uint32, 8: _np.uint64}  # host: a dtype's bits, by itemsize
_FMAX = {2: 65504.0, 4: 3.4028234663852886e38, 8: float("inf")}  # largest finite, by itemsize


def _select_operand(xp, v, dt):
    """v (an array, or a Python number) as a C-contiguous array of dtype dt whose bits can be
    read, or None (another dtype, layout, or a number that dt does not hold as NumPy would)."""
    if v.__class__ is _np.ndarray:
        return v if v.dtype == dt and (v.ndim == 0 or v.flags.c_contiguous) else None
    if v.__class__ is bool or (v.__class__ is int and dt.kind in "iu"):
        try:
            return xp.asarray(v, dt)
        except OverflowError:   # (NumPy's own error, from where)
            return None
    if v.__class__ in (int, float) and dt.kind == "f" and (
            -_FMAX[dt.itemsize] <= v <= _FMAX[dt.itemsize] or v != v or v * 0 != 0):
        return xp.asarray(v, dt)   # (in range, nan or inf: no overflow on the conversion)
    return None


def select(xp, condition, x, y):
    """xp.where(condition, x, y) (Note [Selecting on bits])."""
    c = condition
    if c.__class__ is not _np.ndarray or c.dtype.kind != "b" or not c.flags.c_contiguous or \
            (x.__class__ is not _np.ndarray and y.__class__ is not _np.ndarray):
        return xp.where(c, x, y)
    dt = xp.result_type(x, y)
    u = _UINT.get(dt.itemsize) if dt.kind in "fiu" else None
    a, b = (_select_operand(xp, v, dt) for v in (x, y)) if u is not None else (None, None)
    if a is None or b is None:
        return xp.where(c, x, y)
    try:
        shape = xp.broadcast_shapes(c.shape, a.shape, b.shape)
    except ValueError:
        return xp.where(c, x, y)    # (NumPy's error)
    if math.prod(shape) < _SELECT_MIN:
        return xp.where(c, x, y)
    out = xp.empty(shape, dt)
    ob, ab, bb = out.view(u), a.view(u), b.view(u)
    y_zero = b.ndim == 0 and not bb
    if y_zero or (a.ndim == 0 and not ab):
        # one operand +0 (all bits clear): the other's bits and the mask, built in `out`
        xp.copyto(ob, c)           # (a smaller mask broadcasts here: a causal mask)
        if y_zero:
            xp.negative(ob, out=ob)
            return xp.bitwise_and(ob, ab, out=ob).view(dt)
        xp.subtract(ob, 1, out=ob)
        return xp.bitwise_and(ob, bb, out=ob).view(dt)
    mask = _scratch(xp, shape, u, "select_mask")
    xp.copyto(mask, c)
    xp.negative(mask, out=mask)
    xp.bitwise_xor(ab, bb, out=ob)
    xp.bitwise_and(ob, mask, out=ob)
    return xp.bitwise_xor(ob, bb, out=ob).view(dt)


def _tanh_backward_fwd(xp, grad_output, output):
    if output.size < _SMALL and type(output) is _np.ndarray:
        return grad_output * (_one(output) - output * output)
    d = xp.multiply(output, output, out=xp.empty_like(output))  # 1 - output**2, in one buffer
    xp.subtract(1, d, out=d)
    if d.shape != grad_output.shape:
        return grad_output * d
    return xp.multiply(grad_output, d, out=d)


# Fused backward ops, as PyTorch's tanh_backward/sigmoid_backward: one op instead of three in
# the backward of tanh and sigmoid (bench W1); their own formulas give the double backward.
tanh_backward = defop(
    "tanh_backward", _tanh_backward_fwd,
    promote="binary", node_name="TanhBackwardBackward0",
    grad_output=lambda grad, output: tanh_backward(grad, output),
    output=lambda grad, grad_output, output: _mul3(grad, grad_output, output, -2))
sigmoid_backward = defop(
    "sigmoid_backward", lambda xp, grad_output, output: grad_output * (
        output * ((_one(output) if type(output) is _np.ndarray else 1) - output)),
    promote="binary", node_name="SigmoidBackwardBackward0",
    grad_output=lambda grad, output: sigmoid_backward(grad, output),
    output=lambda grad, grad_output, output: grad * (grad_output * (1 - 2 * output)))
def _tanh_grad(grad, result):
    if _is_complex(result):  # (complex: composite, so its double backward holds too)
        return grad * _cj(1 - result * result)
    return tanh_backward(grad, result)


tanh = _unary("tanh", lambda xp, self: xp.tanh(self), _tanh_grad)
asinh = _unary("asinh", lambda xp, self: xp.arcsinh(self),
               lambda grad, self: grad * _cj(rsqrt(self * self + 1)))
def _acosh_grad(grad, self):
    if _is_complex(self):  # (the principal branch: sqrt(z - 1) sqrt(z + 1))
        return grad * _cj(rsqrt(self - 1) * rsqrt(self + 1))
    return grad * rsqrt(self * self - 1)


acosh = _unary("acosh", lambda xp, self: xp.arccosh(self), _acosh_grad)
atanh = _unary("atanh", lambda xp, self: xp.arctanh(self),
               lambda grad, self: grad / _cj(1 - self * self))
arcsin, arccos, arctan = asin, acos, atan
arcsinh, arccosh, arctanh = asinh, acosh, atanh


def _sigmoid_fwd(xp, self):
    # float and double: 1 / (1 + exp(-x)), as PyTorch computes them. Where exp(-x) overflows to
    # inf the result is 0, as PyTorch's (the op runs in NumPy's quiet error state: no warning).
    # Large arrays: one buffer, every pass in place (at 10^6 elements a fresh array's page
    # faults cost more than a pass, bench W4).
    if self.dtype.kind == "c":
        return 1 / (1 + xp.exp(-self))
    if self.dtype.char in "fd":
        if self.size < _SMALL and type(self) is _np.ndarray:
            one = _one(self)  # (a 0-d array: NumPy takes it faster than a Python number)
            return one / (one + xp.exp(-self))
        e = xp.negative(self)
        xp.exp(e, out=e)
        e += 1
        return xp.divide(1, e, out=e)   # (reciprocal's bits; NumPy's reciprocal loop is 2x slower)
    # half precision: exp(min(x, 0)) / (1 + exp(-|x|)), whose exponents never overflow, so the
    # tiny results that PyTorch (computing half in float) keeps are kept
    e = xp.abs(self, out=xp.empty_like(self))
    xp.negative(e, out=e)
    xp.exp(e, out=e)
    e += 1
    r = xp.minimum(self, 0, out=xp.empty_like(self))
    xp.exp(r, out=r)
    r /= e
    return r


def _sigmoid_grad(grad, result):
    if _is_complex(result):
        return grad * _cj(result * (1 - result))
    return sigmoid_backward(grad, result)


sigmoid = _unary("sigmoid", _sigmoid_fwd, _sigmoid_grad)


def _logit_fwd(xp, self, eps=None):
    if eps is not None:
        self = xp.clip(self, eps, 1 - eps).astype(self.dtype, copy=False)
    return xp.log(self / (1 - self))


def _logit_grad(grad, self, eps):
    # PyTorch's logit_backward: nan outside [0, 1] (where logit is nan), 0 outside [eps, 1 - eps]
    g = grad / (self * (1 - self))
    if eps is None:
        return where((self < 0) | (self > 1), float("nan"), g)
    return where((self < eps) | (self > 1 - eps), 0.0, g)


_logit = defop("logit", _logit_fwd, promote="float", self=_logit_grad)


def logit(input, eps=None):
    """torch.logit(input, eps=None): log(p / (1 - p)), p clamped to [eps, 1 - eps]."""
    return _logit(input, eps)


def _relu_fwd(xp, self):
    k = self.dtype.kind
    if k == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    if k == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    if k == "f" and self.size >= 2 * _ROW:    # (Note [Bounds as rows])
        return bound(xp.maximum, 0, self)
    # (a 0-d zero of self's dtype: NumPy takes it faster; x returned on equal zeros, for
    # PyTorch's relu(-0.0))
    r = xp.maximum(_zero(self), self) if _bound_first(self) else xp.maximum(self, _zero(self))
    return r if r.dtype == self.dtype else r.astype(self.dtype)


# PyTorch's threshold_backward: grad_output where self > threshold, else 0, in one op (relu's
# backward, bench W2). Its gradient in `self` is zero, but (as in PyTorch) the result still
# depends on `self`, so a double backward through relu records ThresholdBackwardBackward0.


def _threshold_backward_fwd(xp, grad_output, self, threshold):
    # PyTorch's select, not a product: 0 (+0) where self <= threshold, whatever the gradient
    # there (inf, nan); the gradient elsewhere, at a NaN `self` too (Note [Selecting on bits])
    cut = self <= (_zero(self) if threshold.__class__ is int and threshold == 0 else threshold)
    return select(xp, cut, _zero(grad_output), grad_output)


threshold_backward = defop(
    "threshold_backward", _threshold_backward_fwd,
    promote="binary", node_name="ThresholdBackwardBackward0",
    grad_output=lambda grad, self, threshold: threshold_backward(grad, self, threshold),
    self=lambda grad: _zeros_like(grad))
relu = defop("relu", _relu_fwd, self=lambda grad, result: threshold_backward(grad, result, 0))


def _abs_fwd(xp, self):
    if self.dtype.kind == "b":
        raise _not_implemented("abs_cpu", D.bool)
    return xp.abs(self)


def _sign_fwd(xp, self):
    if self.dtype.kind == "c":
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex "
                                  "numbers. Please use torch.sgn instead.")
    return _sign_real(xp, self)


def _sign_real(xp, self):
    """PyTorch's sign of a real tensor, (0 < x) - (x < 0): 0 at NaN (NumPy's is NaN)."""
    if self.dtype.kind == "b":
        return self.copy()
    r = xp.sign(self)
    if r.dtype.kind == "f":
        r = xp.where(xp.isnan(r), 0, r).astype(r.dtype, copy=False)
    return r


def _sgn_fwd(xp, self):
    if self.dtype.kind == "c":  # z / |z|, 0 at 0
        a = xp.abs(self)
        return xp.where(a == 0, 0, self / xp.where(a == 0, 1, a)).astype(self.dtype)
    return _sign_real(xp, self)


def _sgn_grad(grad, self, result):
    if self.dtype._category != 3:  # (zeros, as PyTorch's: also where the gradient is inf/nan)
        return _zeros_like(grad)
    from .complex import real as _real
    a = abs(self)  # (grad - Re(grad conj(sgn)) sgn) / |z|, 0 at 0
    return where(a == 0, 0.0, (grad - _real(grad * _cj(result)) * result) / a)


abs = defop("abs", _abs_fwd, self=lambda grad, self: grad * sgn(self))
absolute = abs
sign = defop("sign", _sign_fwd, self=None)
sgn = defop("sgn", _sgn_fwd, self=_sgn_grad)


def _int_kept(ufunc, kernel):
    def fwd(xp, self):
        if self.dtype.kind == "b":
            raise _not_implemented(kernel, D.bool)
        if self.dtype.kind in "iu":
            return self.copy()
        return getattr(xp, ufunc)(self)
    return fwd


floor = defop("floor", _int_kept("floor", "floor_cpu"), self=None)
ceil = defop("ceil", _int_kept("ceil", "ceil_cpu"), self=None)
trunc = defop("trunc", _int_kept("trunc", "trunc_vml_cpu"), self=None)
fix = trunc


def _frac_fwd(xp, self):
    if self.dtype.kind in "iub":
        raise _not_implemented("frac_cpu", D._BY_NP[self.dtype])
    return self - xp.trunc(self)


frac = defop("frac", _frac_fwd, self=lambda grad: grad)


def _round_fwd(xp, self, decimals=0):
    if self.dtype.kind == "b":
        raise _not_implemented("round_cpu", D.bool)
    if self.dtype.kind in "iu":
        if decimals is not None:   # (round(decimals=...) has no integer kernel in PyTorch)
            from .._dtype import from_numpy_dtype
            raise _not_implemented("round_vml_cpu" if decimals == 0 else "round_cpu",
                                   from_numpy_dtype(self.dtype))
        return self.copy()
    return xp.round(self, decimals or 0)


_round0 = defop("round", _round_fwd, self=None)
_round_dec = defop("round_decimals", _round_fwd, node_name="RoundBackward1", self=None)


def round(input, *, decimals=None):
    """torch.round(input, *, decimals=0): half to even, like PyTorch."""
    if decimals is None:
        return _round0(input, None)
    return _round_dec(input, decimals)


# ---------------------------------------------------------------- special functions
# NumPy has no erf/lgamma: erf, erfc and lgamma are ops/_specfun.py's vectorised kernels (rational
# approximations, float64, within a few ulp); digamma and polygamma use the recurrence up to
# x >= 10 (20) and the asymptotic series, accurate to ~1e-15; erfinv polishes Giles'
# approximation by Newton.

def _real_kernel(kernel, name):
    """A float64 kernel of ops/_specfun.py as a forward: PyTorch's error for complex input, the
    result in the input's (floating) dtype."""
    def fwd(xp, self):
        if self.dtype.kind == "c":
            raise _not_implemented(name, D._BY_NP[self.dtype])
        return kernel(xp, self).astype(self.dtype, copy=False)
    return fwd


def _erfinv_fwd(xp, self):
    from .special import _ndtri_lower
    if self.dtype.kind == "c":
        raise _not_implemented("erfinv_vml_cpu", D._BY_NP[self.dtype])
    y = self.astype("float64")
    w = -xp.log((1.0 - y) * (1.0 + y))
    small = w < 5.0
    ws = w - 2.5
    p1 = 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
              -0.00417768164, 0.246640727, 1.50140941):
        p1 = c + p1 * ws
    wl = xp.sqrt(xp.where(small, 5.0, w)) - 3.0
    p2 = -0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
              0.00943887047, 1.00167406, 2.83297682):
        p2 = c + p2 * wl
    x = xp.where(small, p1, p2) * y
    finite = xp.isfinite(x)
    xf = xp.where(finite, x, 0.0)
    for _ in range(2):  # Newton on erf(x) = y
        err = _specfun.erf(xp, xf) - y
        xf = xf - err / (_2_SQRTPI * xp.exp(-xf * xf))
    x = xp.where(finite, xf, x)
    # the tails, |y| >= 1/2: erfinv(y) = -sign(y) ndtri((1 - |y|) / 2) / sqrt(2), 1 - |y| exact
    ay = xp.abs(y)
    tail = (ay >= 0.5) & (ay < 1)
    t = -_ndtri_lower(xp, xp.where(tail, (1.0 - ay) / 2, 0.25)) / math.sqrt(2.0)
    x = xp.where(tail, xp.where(y < 0, -t, t), x)
    x = xp.where(y == 1, xp.inf, xp.where(y == -1, -xp.inf, x))
    return x.astype(self.dtype, copy=False)


def _digamma_np(xp, x):
    x = x.astype("float64")
    out = xp.zeros_like(x)
    neg = x < 0.5
    # reflection: psi(x) = psi(1 - x) - pi / tan(pi x)
    with _np.errstate(divide="ignore", invalid="ignore"):  # host: error state
        refl = xp.where(neg, math.pi / xp.tan(math.pi * x), 0.0)
        z = xp.where(neg, 1.0 - x, x)
        for _ in range(10):
            m = z < 10.0
            if not m.any():
                break
            out = out - xp.where(m, 1.0 / z, 0.0)
            z = xp.where(m, z + 1.0, z)
        z2 = 1.0 / (z * z)
        series = z2 * (1 / 12 - z2 * (1 / 120 - z2 * (1 / 252 - z2 * (
            1 / 240 - z2 * (1 / 132 - z2 * (691 / 32760 - z2 / 12))))))
        out = out + xp.log(z) - 0.5 / z - series - refl
    # poles: psi(+0) = -inf and psi(-0) = inf (PyTorch's: the limits from each side),
    # negative integers nan
    out = xp.where(x == 0, xp.where(xp.signbit(x), xp.inf, -xp.inf), out)
    out = xp.where((x < 0) & (x == xp.floor(x)), xp.nan, out)
    return out


_BERN = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)


def _polygamma_np(xp, n, x):
    """psi^(n)(x) for n >= 1: upward recurrence to x >= 20, then the asymptotic series."""
    if n == 0:
        return _digamma_np(xp, x)
    x = x.astype("float64")
    sgn = -1.0 if n % 2 == 0 else 1.0  # (-1)^(n+1)
    fact_n = math.factorial(n)
    out = xp.zeros_like(x)
    with _np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # host: error state
        z = x.copy()
        lo = float(z[xp.isfinite(z)].min()) if z.size and xp.isfinite(z).any() else 20.0
        steps = max(0, int(math.ceil(20.0 - lo)))
        for _ in range(steps):
            m = z < 20.0
            out = out + xp.where(m, sgn * fact_n / z ** (n + 1), 0.0)
            z = xp.where(m, z + 1.0, z)
        s = math.factorial(n - 1) / z ** n + fact_n / (2 * z ** (n + 1))
        for k, b in enumerate(_BERN, start=1):
            s = s + b * math.factorial(2 * k + n - 1) / math.factorial(2 * k) / z ** (2 * k + n)
        out = out + sgn * s
        pole = (x <= 0) & (x == xp.floor(x))
        out = xp.where(pole, xp.inf if n % 2 else -xp.inf, out)  # (PyTorch's signs)
    return out


erf = _unary("erf", _real_kernel(_specfun.erf, "erf_vml_cpu"),
             lambda grad, self: grad * (_2_SQRTPI * exp(-self * self)))
erfc = _unary("erfc", _real_kernel(_specfun.erfc, "erfc_vml_cpu"),
              lambda grad, self: grad * (-_2_SQRTPI * exp(-self * self)))
erfinv = _unary("erfinv", _erfinv_fwd,
                lambda grad, result: grad * (_SQRTPI_2 * exp(result * result)))
lgamma = _unary("lgamma", _real_kernel(_specfun.lgamma, "lgamma_vml_cpu"),
                lambda grad, self: grad * digamma(self))
digamma = _unary("digamma", lambda xp, self: _digamma_np(xp, self).astype(self.dtype),
                 lambda grad, self: grad * polygamma(1, self))
_polygamma = defop("polygamma",
                   lambda xp, n, self: _polygamma_np(xp, n, self).astype(self.dtype),
                   promote="float", self=lambda grad, n, self: grad * polygamma(n + 1, self))


def polygamma(n, input):
    """torch.polygamma(n, input): the n-th derivative of digamma."""
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if n == 0:
        return digamma(input)
    return _polygamma(n, input)


# ---------------------------------------------------------------- clamp, nan_to_num

def clamped(xp, x, min=None, max=None):
    """min(max(x, min), max) as PyTorch's clamp kernel (Note [Bounds as rows]); the second
    bound applied in place (a second fresh array of a large size costs its page faults)."""
    if min is not None:
        r = bound(xp.maximum, min, x)
        if max is None:
            return r
        fresh = r is not x and max.__class__ in (int, float) and getattr(r, "ndim", 0) and \
            r.dtype.kind == "f" and r.flags.c_contiguous
        return bound(xp.minimum, max, r, out=r if fresh else None)
    return bound(xp.minimum, max, x)


def _clamp_fwd(xp, self, min=None, max=None):
    if self.dtype.kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    return clamped(xp, self, min, max)


def _clamp_scalar_grad(grad, self, min, max):
    mask = None
    if min is not None:
        mask = self >= min
    if max is not None:
        m2 = self <= max
        mask = m2 if mask is None else mask & m2
    return where(mask, grad, 0.0)


def _clamp_min_grad(grad, self, min, max):
    if max is None:
        return where(self < min, grad, 0.0)
    return where((self < min) & (min < max), grad, 0.0)


def _clamp_max_grad(grad, self, min, max):
    if min is None:
        return where(self > max, grad, 0.0)
    return where((self > max) | (max < min), grad, 0.0)


_clamp_s = defop("clamp", _clamp_fwd, promote="binary", node_name="ClampBackward1",
                 self=_clamp_scalar_grad)
_clamp_t = defop("clamp_tensor", _clamp_fwd, promote="binary", node_name="ClampBackward0",
                 self=_clamp_scalar_grad, min=_clamp_min_grad, max=_clamp_max_grad)
_clamp_min_s = defop("clamp_min", lambda xp, self, min: bound(xp.maximum, min, self),
                     promote="binary",
                     self=lambda grad, self, min: where(self >= min, grad, 0.0))
_clamp_min_t = defop("clamp_min_tensor", lambda xp, self, min: xp.maximum(self, min),
                     promote="binary", node_name="ClampMinBackward1",
                     self=lambda grad, self, min: where(self >= min, grad, 0.0),
                     min=lambda grad, self, min: where(self < min, grad, 0.0))
_clamp_max_s = defop("clamp_max", lambda xp, self, max: bound(xp.minimum, max, self),
                     promote="binary",
                     self=lambda grad, self, max: where(self <= max, grad, 0.0))
_clamp_max_t = defop("clamp_max_tensor", lambda xp, self, max: xp.minimum(self, max),
                     promote="binary", node_name="ClampMaxBackward1",
                     self=lambda grad, self, max: where(self <= max, grad, 0.0),
                     max=lambda grad, self, max: where(self > max, grad, 0.0))


def clamp(input, min=None, max=None):
    """torch.clamp(input, min=None, max=None) with scalar or tensor bounds."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        from .._creation import tensor
        if min is not None and not isinstance(min, Tensor):
            min = tensor(min, dtype=input.dtype, device=input.device)
        if max is not None and not isinstance(max, Tensor):
            max = tensor(max, dtype=input.dtype, device=input.device)
        return _clamp_t(input, min, max)
    if input.dtype._category < 2:   # (an integer tensor's bounds: PyTorch's checked conversion)
        from .indexing import _check_store
        _check_store(min, input.dtype)
        _check_store(max, input.dtype)
    return _clamp_s(input, min, max)


clip = clamp


def clamp_min(input, min):
    """torch.clamp_min(input, min)."""
    if not isinstance(input, Tensor):  # (a number: _clamp_min_t's NumPy would take it)
        raise _argument_error("clamp_min", ("input", "min"), input, min)
    return (_clamp_min_t if isinstance(min, Tensor) else _clamp_min_s)(input, min)


def clamp_max(input, max):
    """torch.clamp_max(input, max)."""
    if not isinstance(input, Tensor):  # (a number: _clamp_max_t's NumPy would take it)
        raise _argument_error("clamp_max", ("input", "max"), input, max)
    return (_clamp_max_t if isinstance(max, Tensor) else _clamp_max_s)(input, max)


def _nan_to_num_fwd(xp, self, nan=0.0, posinf=None, neginf=None):
    if self.dtype.kind in "iub":
        return self.copy()
    return xp.nan_to_num(self, nan=nan, posinf=posinf, neginf=neginf)


_nan_to_num = defop("nan_to_num", _nan_to_num_fwd,
                    self=lambda grad, self: where(isfinite(self), grad, 0.0))


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """torch.nan_to_num(input, nan=0.0, posinf=None, neginf=None)."""
    return _nan_to_num(input, 0.0 if nan is None else nan, posinf, neginf)


# ---------------------------------------------------------------- binary math

def _max_grad(grad, self, other):
    # PyTorch's: ties share the gradient equally; 0 where the other is larger; the whole
    # gradient elsewhere, to both sides where either is NaN
    return where(self == other, grad / 2, where(self < other, 0.0, grad))


def _min_grad(grad, self, other):
    return where(self == other, grad / 2, where(self > other, 0.0, grad))


maximum = defop("maximum", lambda xp, self, other: xp.maximum(self, other), promote="binary",
                 tensor_only=True,
                self=_max_grad, other=lambda grad, self, other: _max_grad(grad, other, self))
minimum = defop("minimum", lambda xp, self, other: xp.minimum(self, other), promote="binary",
                 tensor_only=True,
                self=_min_grad, other=lambda grad, self, other: _min_grad(grad, other, self))
fmax = defop("fmax", lambda xp, self, other: xp.fmax(self, other), promote="binary",
              tensor_only=True,
             self=lambda grad, self, other: where((self >= other) | isnan(other), grad, 0.0),
             other=lambda grad, self, other: where((self >= other) | isnan(other), 0.0, grad))
fmin = defop("fmin", lambda xp, self, other: xp.fmin(self, other), promote="binary",
              tensor_only=True,
             self=lambda grad, self, other: where((self <= other) | isnan(other), grad, 0.0),
             other=lambda grad, self, other: where((self <= other) | isnan(other), 0.0, grad))
def _atan2_r2(self, other):
    """atan2's denominator self^2 + other^2, 1 where it is 0 (both are 0 there: the gradient
    is 0 at the origin, as PyTorch's, not 0/0). Ops and operators only: it has an array twin
    (the same code on arrays), so atan2's formulas run on the arrays."""
    r2 = self * self + other * other
    return r2 + (r2 == 0)


_atan2_r2._raw = _atan2_r2  # (operators only: the same code runs on arrays)


atan2 = defop("atan2", lambda xp, self, other: xp.arctan2(self, other),
              promote="binary_float", tensor_only=True,
              self=lambda grad, self, other: grad * other / _atan2_r2(self, other),
              other=lambda grad, self, other: -grad * self / _atan2_r2(self, other))
arctan2 = atan2
def _hypot_fwd(xp, self, other):
    if self.dtype.kind in "iub":  # (after promotion: both integer)
        raise _not_implemented("hypot_cpu", D._BY_NP[self.dtype])
    return xp.hypot(self, other)


hypot = defop("hypot", _hypot_fwd, promote="binary", tensor_only=True,
              self=lambda grad, self, result: grad * self / result,
              other=lambda grad, other, result: grad * other / result)


def _lerp_fwd(xp, self, end, weight):
    # PyTorch's formulation: exact at weight 0 and 1, each branch a fused multiply-add
    if _fma.fusable(self, end, weight):
        return _fma.lerp(self, end, weight)
    diff = end - self
    small = xp.abs(weight) < 0.5
    return xp.where(small, self + weight * diff, end - diff * (1 - weight)).astype(
        xp.result_type(self, end), copy=False)


_lerp_s = defop("lerp", _lerp_fwd, promote="binary", tensor_only=True,
                self=lambda grad, weight: grad * (1 - weight),
                end=lambda grad, weight: grad * weight)
_lerp_t = defop("lerp_tensor", _lerp_fwd, promote="binary", node_name="LerpBackward1",
                tensor_only=True,
                self=lambda grad, weight: grad * (1 - weight),
                end=lambda grad, weight: grad * weight,
                weight=lambda grad, self, end: grad * (end - self))


def lerp(input, end, weight):
    """torch.lerp(input, end, weight): input + weight * (end - input)."""
    if isinstance(weight, Tensor):
        if weight.dtype is not input.dtype:
            from .._tensor import _scalar_type_name
            raise RuntimeError(f"expected dtype {_scalar_type_name(input.dtype)} for `weight` "
                               f"but got dtype {_scalar_type_name(weight.dtype)}")
        return _lerp_t(input, end, weight)
    return _lerp_s(input, end, weight)


register_in_storage(add, _add_in_storage)   # (Note [Fused updates in place])
register_in_storage(sub, _sub_in_storage)
register_in_storage(lerp, _lerp_in_storage)


def _addc_in_storage(kernel):
    """self.addcmul_/addcdiv_(tensor1, tensor2, value=v) into self's storage through `kernel`
    (ops/_fma.py's in-place form, the same operations as the op's forward)."""
    def run(self, *args, **kwargs):
        if len(args) != 2 or (kwargs and (len(kwargs) != 1 or "value" not in kwargs)):
            return False
        value = kwargs.get("value", 1)
        if value.__class__ is not float and value.__class__ is not int or not self._data.ndim:
            return False
        t1, t2 = (_fused_operand(self, t) for t in args)
        if t1 is None or t2 is None:
            return False
        kernel(self._data, t1, t2, value)
        return True
    return run


_addcmul = defop(
    "addcmul", lambda xp, self, tensor1, tensor2, value=1: _fma.addcmul_forward(
        xp, self, tensor1, tensor2, value),
    promote="binary", tensor_only=True,
    self=lambda grad: grad,
    tensor1=lambda grad, tensor2, value: grad * tensor2 * value,
    tensor2=lambda grad, tensor1, value: grad * tensor1 * value)
_addcdiv = defop(
    "addcdiv", lambda xp, self, tensor1, tensor2, value=1: self + value * tensor1 / tensor2,
    promote="binary", tensor_only=True,
    self=lambda grad: grad,
    tensor1=lambda grad, tensor2, value: grad * value / tensor2,
    tensor2=lambda grad, tensor1, tensor2, value: -grad * value * tensor1 / (tensor2 * tensor2))


def addcmul(input, tensor1, tensor2, *, value=1):
    """torch.addcmul(input, tensor1, tensor2, *, value=1)."""
    if input.dtype._category < 2:
        from .indexing import _check_store
        _check_store(value, D.result_type(input, tensor1, tensor2))
    return _addcmul(input, tensor1, tensor2, value=_cast_value(value, input, tensor1, tensor2))


def _cast_value(value, *tensors):
    """`value` takes the tensors' result type (an integer result truncates a float value)."""
    if D.result_type(*tensors)._category < 2 and isinstance(value, float):
        return int(value)
    return value


def addcdiv(input, tensor1, tensor2, *, value=1):
    """torch.addcdiv(input, tensor1, tensor2, *, value=1)."""
    if tensor1.dtype._category < 2 and tensor2.dtype._category < 2:
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))"
            ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")
    return _addcdiv(input, tensor1, tensor2, value=_cast_value(value, input, tensor1, tensor2))


register_in_storage(addcmul, _addc_in_storage(_fma.addcmul_))  # (Note [Fused updates in
register_in_storage(addcdiv, _addc_in_storage(_fma.addcdiv_))  # place])


def _copysign_self(grad, self, result):
    zero = self == 0
    return grad * where(zero, 0.0, result / where(zero, 1.0, self))


_copysign_t = defop("copysign", lambda xp, self, other: xp.copysign(self, other),
                    promote="binary_float", self=_copysign_self,
                    other=lambda grad: grad * 0)
_copysign_s = defop("copysign_scalar", lambda xp, self, other: xp.copysign(self, other),
                    promote="binary_float", node_name="CopysignBackward1", self=_copysign_self)


def copysign(input, other):
    """torch.copysign(input, other): |input| with the sign of other."""
    if not isinstance(input, Tensor):  # (PyTorch has no Number-input overload; NumPy has)
        raise _argument_error("copysign", ("input", "other"), input, other)
    return (_copysign_t if isinstance(other, Tensor) else _copysign_s)(input, other)


def _xlogy_fwd(xp, self, other):
    with _np.errstate(divide="ignore", invalid="ignore"):  # host: error state
        r = xp.multiply(self, xp.log(other))
    return xp.where((self == 0) & ~xp.isnan(other), 0, r).astype(r.dtype, copy=False)


def _xlogy_self(grad, self, other):
    return where((self == 0) & (other <= 0), 0.0, xlogy(grad, other))


_xlogy_t = defop("xlogy", _xlogy_fwd, promote="binary_float", self=_xlogy_self,
                 other=lambda grad, self, other: grad * self / other)
_xlogy_scalar_self = defop("xlogy_scalar_self", _xlogy_fwd, promote="binary_float",
                           node_name="XlogyBackward1",
                           other=lambda grad, self, other: grad * self / other)
_xlogy_scalar_other = defop("xlogy_scalar_other", _xlogy_fwd, promote="binary_float",
                            node_name="XlogyBackward2",
                            self=lambda grad, other: grad * _log_scalar(other))


def xlogy(input, other):
    """torch.xlogy(input, other): input * log(other), 0 where input == 0."""
    if not isinstance(input, Tensor):
        return _xlogy_scalar_self(input, other)
    if not isinstance(other, Tensor):
        return _xlogy_scalar_other(input, other)
    return _xlogy_t(input, other)


# ---------------------------------------------------------------- comparisons (no gradient)

def _cmp(name, ufunc):
    complex_ok = ufunc in ("equal", "not_equal")

    def fwd(xp, self, other):
        if self.__class__ is not other.__class__:  # (a number, None or a list on one side)
            # `self` is no number (PyTorch has no Number-input overload), `other` no None
            # (NumPy would compare with it); bad_args words PyTorch's TypeError
            self.ndim
            if other is None:
                raise TypeError(f"{name}(): None is no operand")
        if not complex_ok and self.dtype.kind == "c":
            raise _not_implemented(name + "_cpu", D._BY_NP[self.dtype])
        return getattr(xp, ufunc)(self, other)
    return defop(name, fwd, promote="binary", differentiable=False)


eq = _cmp("eq", "equal")
ne = _cmp("ne", "not_equal")
lt = _cmp("lt", "less")
le = _cmp("le", "less_equal")
gt = _cmp("gt", "greater")
ge = _cmp("ge", "greater_equal")
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def _isclose_fwd(xp, self, other, rtol, atol, equal_nan):
    if self.dtype.kind == "b":
        return self == other
    return xp.isclose(self, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


_isclose = defop("isclose", _isclose_fwd, differentiable=False)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """torch.isclose: |input - other| <= atol + rtol * |other|, elementwise."""
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{_type_name(input.dtype)} did not match {_type_name(other.dtype)}")
    return _isclose(input, other, rtol, atol, equal_nan)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """torch.allclose: a Python bool."""
    return builtin_bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


builtin_bool = bool


def equal(input, other):
    """torch.equal: True when both have the same size and elements."""
    if input._data.shape != other._data.shape:
        return False
    return builtin_bool((input._data == other._data).all())


def _logical(name, ufunc):
    return defop(name, lambda xp, self, other: getattr(xp, ufunc)(self, other),
                 differentiable=False, tensor_only=True)


logical_and = _logical("logical_and", "logical_and")
logical_or = _logical("logical_or", "logical_or")
logical_xor = _logical("logical_xor", "logical_xor")
logical_not = defop("logical_not", lambda xp, self: xp.logical_not(self), differentiable=False)
isnan = defop("isnan", lambda xp, self: xp.isnan(self), differentiable=False)
isinf = defop("isinf", lambda xp, self: xp.isinf(self), differentiable=False)
isfinite = defop("isfinite", lambda xp, self: xp.isfinite(self), differentiable=False)
isposinf = defop("isposinf", lambda xp, self: xp.isposinf(self) if self.dtype.kind in "fc"
                 else xp.zeros(self.shape, bool), differentiable=False)
isneginf = defop("isneginf", lambda xp, self: xp.isneginf(self) if self.dtype.kind in "fc"
                 else xp.zeros(self.shape, bool), differentiable=False)
isreal = defop("isreal", lambda xp, self: xp.isreal(self), differentiable=False)


def _bitwise(name, ufunc, kernel, unary=False):
    if unary:
        def fwd(xp, self):
            if self.dtype.kind not in "iub":
                raise _not_implemented(kernel, D._BY_NP[self.dtype])
            return getattr(xp, ufunc)(self)
        return defop(name, fwd, differentiable=False)

    def fwd(xp, self, other):
        if not (hasattr(self, "dtype") or hasattr(other, "dtype")):  # (two Numbers)
            raise _argcheck.invalid_combination(name, (self, other), {})
        for a in (self, other):
            dt = getattr(a, "dtype", None)
            if dt is not None and dt.kind not in "iub":
                raise _not_implemented(kernel, D._BY_NP[dt])
        if isinstance(other, float) or isinstance(self, float):
            raise _not_implemented(kernel, D._default[0])
        return getattr(xp, ufunc)(self, other)
    return defop(name, fwd, promote="binary", differentiable=False)


bitwise_and = _bitwise("bitwise_and", "bitwise_and", "bitwise_and_cpu")
bitwise_or = _bitwise("bitwise_or", "bitwise_or", "bitwise_or_cpu")
bitwise_xor = _bitwise("bitwise_xor", "bitwise_xor", "bitwise_xor_cpu")
bitwise_not = _bitwise("bitwise_not", "invert", "bitwise_not_cpu", unary=True)


def _shift(name, ufunc, kernel):
    def fwd(xp, self, other):
        if not (hasattr(self, "dtype") or hasattr(other, "dtype")):  # (two Numbers)
            raise _argcheck.invalid_combination(name, (self, other), {})
        for a in (self, other):
            dt = getattr(a, "dtype", None)
            if dt is not None and dt.kind not in "iub":
                raise _not_implemented(kernel, D._BY_NP[dt])
        if isinstance(other, float):
            raise _not_implemented(kernel, D._default[0])
        if not hasattr(self, "dtype"):  # (a Number first: of the tensor's dtype, as PyTorch)
            if isinstance(self, float):
                raise _not_implemented(kernel, D._default[0])
            self = xp.asarray(self, dtype=other.dtype)
        bits = self.dtype.itemsize * 8
        o = xp.asarray(other)
        big = (o >= bits) | (o < 0)
        r = getattr(xp, ufunc)(self, xp.where(big, 0, o).astype(o.dtype, copy=False))
        if big.any():
            fill = 0 if ufunc == "left_shift" else xp.where(self < 0, -1, 0)
            r = xp.where(big, fill, r).astype(r.dtype, copy=False)
        return r
    return defop(name, fwd, promote="binary", differentiable=False)


bitwise_left_shift = _shift("bitwise_left_shift", "left_shift", "lshift_cpu")
bitwise_right_shift = _shift("bitwise_right_shift", "right_shift", "rshift_cpu")


def _invert(self):
    if self.dtype._category > 1:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return logical_not(self) if self.dtype is D.bool else bitwise_not(self)


# ---------------------------------------------------------------- Tensor methods

def _square(input):
    if not isinstance(input, Tensor):  # (pow takes a number: PyTorch's square does not)
        raise _argument_error("square", ("input",), input)
    return pow(input, 2)


square = _square
square.__name__ = "square"

_INPLACE = (
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide",
    "remainder", "fmod", "pow", "float_power", "neg", "negative", "exp", "exp2", "expm1", "log",
    "log2", "log10", "log1p", "sqrt", "rsqrt", "square", "reciprocal", "sin", "cos", "tan",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "arcsin",
    "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "sigmoid", "logit", "relu", "erf",
    "erfc", "erfinv", "lgamma", "digamma", "polygamma", "floor", "ceil", "round", "trunc", "fix",
    "frac", "clamp", "clip", "clamp_min", "clamp_max", "nan_to_num", "abs", "absolute", "sign",
    "sgn", "atan2", "arctan2", "hypot", "lerp", "addcmul", "addcdiv", "copysign", "xlogy",
    "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
    "not_equal", "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and",
    "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift",
)


def _polygamma_method(self, n):
    return polygamma(n, self)


def _where_method(self, condition, other):
    return where(condition, self, other)


def _rtruediv(self, other):
    """`other / self`; None or a string: NotImplemented (Python's TypeError), as PyTorch."""
    if isinstance(other, (str, bytes, dict, set, type(None))):
        return NotImplemented
    return mul(reciprocal(self), other)


def _build_methods():
    from ._inplace import make_inplace
    g = globals()
    methods = {n: g[n] for n in __all__ if n not in (
        "rsub", "where", "allclose", "equal", "polygamma", "isclose")}
    methods.update(polygamma=_polygamma_method, where=_where_method, isclose=isclose,
                   allclose=allclose, equal=equal, __invert__=_invert,
                   __lshift__=bitwise_left_shift, __rshift__=bitwise_right_shift,
                   __rlshift__=lambda self, other: bitwise_left_shift(other, self),
                   __rrshift__=lambda self, other: bitwise_right_shift(other, self),
                   __mod__=remainder, __rmod__=lambda self, other: remainder(other, self),
                   __pos__=positive,
                   __rtruediv__=_rtruediv)
    for n in _INPLACE:
        methods[n + "_"] = make_inplace(methods[n])
    if "abs_" in methods:
        methods["abs_"] = _abs_inplace(methods["abs_"])
    if "float_power_" in methods:
        methods["float_power_"] = _float_power_inplace(methods["float_power_"])
    methods["__ilshift__"] = methods["bitwise_left_shift_"]
    methods["__irshift__"] = methods["bitwise_right_shift_"]
    methods["__imod__"] = methods["remainder_"]
    return methods


def _abs_inplace(abs_):
    """Tensor.abs_: PyTorch refuses complex tensors (the real result would not fit back)."""
    def f(input, *args, **kwargs):
        if isinstance(input, Tensor) and input.dtype.is_complex:
            raise RuntimeError("In-place abs is not supported for complex tensors.")
        return abs_(input, *args, **kwargs)
    f.__name__ = "abs_"
    return f


def _float_power_inplace(float_power_):
    """Tensor.float_power_: the base must already have the result's dtype (float64 or
    complex128), as PyTorch's."""
    def f(self, exponent):
        cplx = self.dtype.is_complex or isinstance(exponent, complex) or (
            isinstance(exponent, Tensor) and exponent.dtype.is_complex)
        need = D.complex128 if cplx else D.float64
        if self.dtype is not need:
            raise RuntimeError(f"the base given to float_power_ has dtype "
                               f"{_type_name(self.dtype)} but the operation's result requires "
                               f"dtype {_type_name(need)}")
        return float_power_(self, exponent)
    f.__name__ = "float_power_"
    return f


METHODS = _build_methods()
for _n in _INPLACE:
    globals()[_n + "_"] = METHODS[_n + "_"]


# ---------------------------------------------------------------- more ops (PyTorch parity)
# Registered by ops/__init__.py from MORE_FUNCTIONS (torch.<name>) and MORE_METHODS (Tensor).

def _safe_nonzero(x):
    """x with its zeros replaced by ones: a denominator whose masked-out entries stay finite
    (so the gradients of the `where` around it stay finite too)."""
    return where(x == 0, 1.0, x)


def _sinc_grad(grad, self, result):
    pix = self * math.pi
    return grad * where(self == 0, 0.0, (cos(pix) - result) / _safe_nonzero(self))


sinc = _unary("sinc", lambda xp, self: xp.sinc(self), _sinc_grad)
deg2rad = _unary("deg2rad", lambda xp, self: xp.deg2rad(self),
                 lambda grad: grad * (math.pi / 180), node_name="Deg2RadBackward0")
_F32_180_PI = _np.float32(180 / math.pi)  # host: a NumPy scalar constant


def _rad2deg_fwd(xp, self):
    # PyTorch multiplies by 180 / pi rounded to the opmath type; NumPy's float32 rad2deg takes
    # 180 / pi computed in float32, another constant (it differed in ~80 % of the results)
    if self.dtype == _F32_180_PI.dtype:
        return xp.multiply(self, _F32_180_PI)
    return xp.rad2deg(self)


rad2deg = _unary("rad2deg", _rad2deg_fwd,
                 lambda grad: grad * (180 / math.pi), node_name="Rad2DegBackward0")


def _check_kinds(name, arrays, kinds):
    """PyTorch's NotImplementedError for a kernel without this dtype."""
    for a in arrays:
        if a.dtype.kind not in kinds:
            raise _not_implemented(name + "_cpu", D.from_numpy_dtype(a.dtype))


def _float_only(name, xp, *arrays):
    _check_kinds(name, arrays, "fc")


def _logaddexp_fwd(xp, self, other):
    _float_only("logaddexp", xp, self, other)
    if self.dtype.kind == "c" or other.dtype.kind == "c":
        return _logaddexp_complex(xp, *xp.broadcast_arrays(self, other))
    return xp.logaddexp(self, other)


def _logaddexp_complex(xp, x, y):
    """ATen's complex log-add-exp: log1p(exp(min - max)) + max of x and y by real part (on a
    tie y is the min), NaN if either is NaN, min where both real parts are -inf, the plain
    log(exp(x) + exp(y)) where both are +inf."""
    x_lt = x.real < y.real
    lo, hi = xp.where(x_lt, x, y), xp.where(x_lt, y, x)
    with _np.errstate(all="ignore"):  # host: error state
        out = xp.log1p(xp.exp(lo - hi)) + hi
        both_inf = ~xp.isfinite(lo.real) & (lo.real == hi.real)
        out = xp.where(both_inf, xp.where(lo.real < 0, lo, xp.log(xp.exp(lo) + xp.exp(hi))),
                       out)
    nan = xp.isnan(x) | xp.isnan(y)
    return xp.where(nan, complex(_np.nan, _np.nan), out).astype(xp.result_type(x, y))


def _logaddexp2_fwd(xp, self, other):
    _check_kinds("logaddexp2", (self, other), "f")   # (no complex kernel in ATen)
    return xp.logaddexp2(self, other)


# (PyTorch's formulas: at self = inf and a finite other the gradient is grad, where
# exp(self - result) would be exp(inf - inf) = nan)
_logaddexp = defop("logaddexp", _logaddexp_fwd, promote="binary",
                   self=lambda grad, self, other: grad / _cj(1 + exp(other - self)),
                   other=lambda grad, self, other: grad / _cj(1 + exp(self - other)))
_logaddexp2 = defop("logaddexp2", _logaddexp2_fwd, promote="binary",
                    self=lambda grad, self, other: grad / (1 + exp2(other - self)),
                    other=lambda grad, self, other: grad / (1 + exp2(self - other)))


def _tensor_other(name, other):
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")


def logaddexp(input, other):
    """torch.logaddexp(input, other): log(exp(input) + exp(other)), computed stably."""
    _tensor_other("logaddexp", other)
    return _logaddexp(input, other)


def logaddexp2(input, other):
    """torch.logaddexp2(input, other): log2(2**input + 2**other), computed stably."""
    _tensor_other("logaddexp2", other)
    return _logaddexp2(input, other)


signbit = defop("signbit", lambda xp, self: xp.signbit(self), differentiable=False)


def _heaviside_fwd(xp, self, values):
    if self.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    # PyTorch's: values where self is 0, else self > 0 (0 at NaN; NumPy's heaviside gives NaN)
    return xp.where(self == 0, values, self > 0).astype(self.dtype, copy=False)


heaviside = defop("heaviside", _heaviside_fwd, differentiable=False)


def _int_only(name, fn):
    def fwd(xp, self, other):
        _check_kinds(name, (self, other), "iu")
        return getattr(xp, fn)(self, other)
    return fwd


gcd = defop("gcd", _int_only("gcd", "gcd"), promote="binary", differentiable=False)
lcm = defop("lcm", _int_only("lcm", "lcm"), promote="binary", differentiable=False)


def _ldexp_fwd(xp, self, other):
    return self * xp.exp2(other).astype(self.dtype)


ldexp = defop("ldexp", _ldexp_fwd, promote="binary_float", tensor_only=True,
              self=lambda grad, other: grad * exp2(other),
              other=lambda grad, result: grad * result * _LN2)


def _frexp_fwd(xp, self):
    if self.dtype.kind != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    m, e = xp.frexp(self)
    return m, e.astype("int32")


_frexp = defop("frexp", _frexp_fwd, outputs=2, nondiff_outputs=(1,),
               self=lambda grad, result1: grad[0] / exp2(result1))


def frexp(input, *, out=None):
    """torch.frexp(input) -> (mantissa, exponent): input == mantissa * 2 ** exponent."""
    from ..return_types import make
    return make("frexp", ("mantissa", "exponent"))(*_frexp(input))


def _nextafter_fwd(xp, self, other):
    _float_only("nextafter", xp, self, other)
    return xp.nextafter(self, other)


# (derivatives.yaml: the identity for self, zero for other)
nextafter = defop("nextafter", _nextafter_fwd, promote="binary", self=lambda grad: grad,
                  other=None)


def _bessel_i1_np(xp, x):
    """The modified Bessel function I1 (power series; all terms share a sign, so it is accurate
    for every |x| where I1 is finite)."""
    x = xp.asarray(x, dtype="float64")
    half = x / 2
    term = half.copy()
    total = term.copy()
    q = half * half
    k = 0
    while True:
        k += 1
        term = term * q / (k * (k + 1))
        total = total + term
        if not (xp.abs(term) > 1e-17 * xp.abs(total)).any() or k > 500:
            return total


_i1 = defop("special_i1", lambda xp, self: _bessel_i1_np(xp, self).astype(self.dtype),
            promote="float", node_name="SpecialI1Backward0",
            self=lambda grad, self, result: grad * where(
                self == 0, 0.5, i0(self) - result / _safe_nonzero(self)))
i0 = _unary("i0", lambda xp, self: xp.i0(self).astype(self.dtype),
            lambda grad, self: grad * _i1(self), node_name="I0Backward0")


def mvlgamma(input, p):
    """torch.mvlgamma(input, p): the log of the multivariate gamma function of dimension p,
    sum_i lgamma(input - i / 2) + p (p - 1) / 4 log(pi)."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if not input.dtype.is_floating_point:
        input = input.to(D._default[0])
    out = lgamma(input)
    for i in range(1, p):
        out = out + lgamma(input - i / 2)
    return out + p * (p - 1) / 4 * math.log(math.pi)


def _more_inplace():
    from ._inplace import make_inplace
    return {n + "_": make_inplace(f) for n, f in (
        ("sinc", sinc), ("deg2rad", deg2rad), ("rad2deg", rad2deg), ("heaviside", heaviside),
        ("gcd", gcd), ("lcm", lcm), ("ldexp", ldexp), ("nextafter", nextafter), ("i0", i0),
        ("mvlgamma", mvlgamma))}


MORE_FUNCTIONS = {f.__name__: f for f in (
    sinc, deg2rad, rad2deg, logaddexp, logaddexp2, signbit, heaviside, gcd, lcm, ldexp, frexp,
    nextafter, i0, mvlgamma)}
MORE_METHODS = dict(MORE_FUNCTIONS, **_more_inplace())
MORE_FUNCTIONS.update({n: MORE_METHODS[n] for n in (
    "sinc_", "deg2rad_", "rad2deg_", "gcd_", "lcm_", "ldexp_", "i0_")})
