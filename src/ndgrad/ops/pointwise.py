# Elementwise ops. Each entry: the forward on `xp` arrays, then one derivative formula per input,
# written with ndgrad ops (see ops/_registry.py for the language). Formulas return gradients in
# the broadcast output shape; the engine sums them back to each input's shape.
from .._tensor import Tensor
from ._registry import defop

__all__ = ["add", "sub", "mul", "div", "pow", "neg", "exp", "log", "tanh", "sigmoid", "relu",
           "sqrt", "abs", "sign", "eq", "ne", "lt", "le", "gt", "ge"]


# ---------------------------------------------------------------- arithmetic

def _add_fwd(xp, self, other, alpha=1):
    return xp.add(self, other) if alpha == 1 else xp.add(self, xp.multiply(other, alpha))


def _sub_fwd(xp, self, other, alpha=1):
    return xp.subtract(self, other) if alpha == 1 else xp.subtract(self, xp.multiply(other, alpha))


add = defop("add", _add_fwd, promote="binary",
            self=lambda grad: grad,
            other=lambda grad, alpha: grad if alpha == 1 else grad * alpha)
sub = defop("sub", _sub_fwd, promote="binary",
            self=lambda grad: grad,
            other=lambda grad, alpha: -grad if alpha == 1 else grad * -alpha)
rsub = defop("rsub", lambda xp, self, other, alpha=1: _sub_fwd(xp, other, self, alpha),
             promote="binary", node_name="RsubBackward1",
             self=lambda grad, alpha: -grad if alpha == 1 else grad * -alpha)
mul = defop("mul", lambda xp, self, other: xp.multiply(self, other), promote="binary",
            self=lambda grad, other: grad * other,
            other=lambda grad, self: grad * self)
_div = defop("div", lambda xp, self, other: xp.true_divide(self, other), promote="binary_float",
             self=lambda grad, other: grad / other,
             other=lambda grad, self, other: -grad * self / (other * other))


def _div_mode_fwd(xp, self, other, rounding_mode):
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
        raise ValueError(
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
            f"'{rounding_mode}'")
    return _div_mode(input, other, rounding_mode)


true_divide = divide = div


def _pow_self_grad(grad, self, exponent):
    if exponent == 0:
        return grad * 0
    return grad * (exponent * self ** (exponent - 1))


_pow_scalar = defop("pow", lambda xp, self, exponent: xp.power(self, exponent), promote="binary",
                    self=_pow_self_grad)


def _pow_tt_self(grad, self, exponent):
    return grad * where(exponent == 0, 0.0, exponent * self ** (exponent - 1))


def _pow_tt_exponent(grad, self, result):
    return grad * where((self == 0) & (result >= 0), 0.0, result * log(self))


def _pow_fwd(xp, self, exponent):
    if self.dtype.kind in "iub" and exponent.dtype.kind in "iub" and (exponent < 0).any():
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return xp.power(self, exponent)


_pow_tensor = defop("pow_tensor", _pow_fwd, promote="binary", node_name="PowBackward1",
                    self=_pow_tt_self, exponent=_pow_tt_exponent)
_pow_scalar_base = defop(
    "pow_scalar_base", lambda xp, self, exponent: xp.power(self, exponent), promote="binary",
    node_name="PowBackward2",
    exponent=lambda grad, self, result: grad * result * _log_scalar(self))


def _log_scalar(x):
    import math
    return math.log(x) if x > 0 else (float("-inf") if x == 0 else float("nan"))


def pow(input, exponent):
    """torch.pow(input, exponent): tensor or Python number on either side."""
    if isinstance(exponent, Tensor):
        if isinstance(input, Tensor):
            return _pow_tensor(input, exponent)
        return _pow_scalar_base(input, exponent)
    if isinstance(input, Tensor) and input.dtype._category == 1 and isinstance(exponent, int) \
            and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return _pow_scalar(input, exponent)


neg = defop("neg", lambda xp, self: xp.negative(self), self=lambda grad: -grad)


def _where_fwd(xp, condition, self, other):
    return xp.where(condition, self, other)


where_ = defop("where", _where_fwd, promote="binary",
               self=lambda grad, condition: where(condition, grad, 0.0),
               other=lambda grad, condition: where(condition, 0.0, grad))


def where(condition, input=None, other=None):
    """torch.where(condition, input, other); torch.where(condition) is nonzero(as_tuple=True)."""
    if input is None and other is None:
        from ..ops import nonzero
        return nonzero(condition, as_tuple=True)
    if isinstance(condition, Tensor) and condition.dtype.name != "bool":
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{condition.dtype.name.capitalize()}")
    return where_(condition, input, other)


# ---------------------------------------------------------------- unary math

exp = defop("exp", lambda xp, self: xp.exp(self), promote="float",
            self=lambda grad, result: grad * result)
log = defop("log", lambda xp, self: xp.log(self), promote="float",
            self=lambda grad, self: grad / self)
sqrt = defop("sqrt", lambda xp, self: xp.sqrt(self), promote="float",
             self=lambda grad, result: grad / (2 * result))
tanh = defop("tanh", lambda xp, self: xp.tanh(self), promote="float",
             self=lambda grad, result: grad * (1 - result * result))


def _sigmoid_fwd(xp, self):
    # stable for large |x|: exp of a non-positive number only
    e = xp.exp(-xp.abs(self))
    return xp.where(self >= 0, 1 / (1 + e), e / (1 + e)).astype(self.dtype, copy=False)


sigmoid = defop("sigmoid", _sigmoid_fwd, promote="float",
                self=lambda grad, result: grad * (result * (1 - result)))


def _relu_fwd(xp, self):
    return xp.maximum(self, 0).astype(self.dtype, copy=False)


relu = defop("relu", _relu_fwd, self=lambda grad, result: grad * (result > 0))
abs = defop("abs", lambda xp, self: xp.abs(self), self=lambda grad, self: grad * sign(self))
sign = defop("sign", lambda xp, self: xp.sign(self), self=None)


# ---------------------------------------------------------------- comparisons (no gradient)

def _cmp(name, ufunc):
    return defop(name, lambda xp, self, other: getattr(xp, ufunc)(self, other),
                 differentiable=False)


eq = _cmp("eq", "equal")
ne = _cmp("ne", "not_equal")
lt = _cmp("lt", "less")
le = _cmp("le", "less_equal")
gt = _cmp("gt", "greater")
ge = _cmp("ge", "greater_equal")
logical_not = defop("logical_not", lambda xp, self: xp.logical_not(self), differentiable=False)
bitwise_and = defop("bitwise_and", lambda xp, self, other: xp.bitwise_and(self, other),
                    promote="binary", differentiable=False)
bitwise_or = defop("bitwise_or", lambda xp, self, other: xp.bitwise_or(self, other),
                   promote="binary", differentiable=False)
bitwise_xor = defop("bitwise_xor", lambda xp, self, other: xp.bitwise_xor(self, other),
                    promote="binary", differentiable=False)
bitwise_not = defop("bitwise_not", lambda xp, self: xp.invert(self), differentiable=False)
