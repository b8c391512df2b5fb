"""Private and symbolic-shape names of the torch namespace that libraries call: the `_check*`
family (PyTorch's checks that compile to asserts), `_assert`/`_assert_async`, the SymInt
family (shapes are always concrete ints here, so `sym_int(x)` is `int(x)`, `SymInt` is the
type nobody's value is), `_shape_as_tensor`, `get_autocast_dtype`."""
import builtins as _b
import math as _math

__all__ = ["_check", "_check_index", "_check_value", "_check_type", "_check_not_implemented",
           "_check_is_size", "_check_with", "_assert", "_assert_async", "SymInt", "SymFloat",
           "SymBool", "sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_ite",
           "sym_sum", "sym_sqrt", "_shape_as_tensor", "get_autocast_dtype",
           "is_autocast_available", "_sym_sqrt", "_softmax_backward_data"]


def _check_with(error_type, cond, message=None):
    if not isinstance(cond, (_b.bool,)) and type(cond).__name__ != "SymBool":
        from .._tensor import Tensor
        if isinstance(cond, Tensor):
            cond = _b.bool(cond)
        elif not isinstance(cond, _b.bool):
            raise TypeError(f"cond must be a bool, but got {type(cond)}")
    if cond:
        return
    if message is None:
        message_evaluated = ("Expected cond to be True, but got False. (Could this error "
                             "message be improved? If so, please report an enhancement request "
                             "to PyTorch.)")
    else:
        if not callable(message):
            raise TypeError("message must be a callable")
        message_evaluated = str(message())
    raise error_type(message_evaluated)


def _check(cond, message=None):
    """Raise RuntimeError(message()) unless cond (PyTorch's torch._check)."""
    _check_with(RuntimeError, cond, message)


def _check_index(cond, message=None):
    _check_with(IndexError, cond, message)


def _check_value(cond, message=None):
    _check_with(ValueError, cond, message)


def _check_type(cond, message=None):
    _check_with(TypeError, cond, message)


def _check_not_implemented(cond, message=None):
    _check_with(NotImplementedError, cond, message)


def _check_is_size(i, message=None, *, max=None):
    _check(i >= 0, message)
    if max is not None:
        _check(i <= max, message)


def _assert(condition, message):
    """torch._assert: `assert condition, message` that tracing keeps."""
    if type(condition) is not _b.bool and hasattr(condition, "item"):
        condition = _b.bool(condition)
    assert condition, message


def _assert_async(tensor, assert_msg=None):
    """Raise when a one-element tensor is zero (PyTorch checks it on the device, later)."""
    if tensor.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    if not _b.bool(tensor.item()):
        raise RuntimeError(assert_msg or "Expected Tensor with single nonzero value, but got "
                           "zero")


class SymInt:
    """A symbolic int (compilers trace shapes with them); shapes are plain ints here."""

    def __init__(self, node=None):
        self.node = node


class SymFloat:
    def __init__(self, node=None):
        self.node = node


class SymBool:
    def __init__(self, node=None):
        self.node = node


def sym_int(a):
    if isinstance(a, float):
        return _math.trunc(a)
    return _b.int(a)


def sym_float(a):
    return _b.float(a)


def sym_max(a, b):
    return _b.max(a, b)


def sym_min(a, b):
    return _b.min(a, b)


def sym_not(a):
    return not a


def sym_ite(b, t, f):
    return t if b else f


def sym_sum(args):
    return _b.sum(args)


def sym_sqrt(a):
    return _math.sqrt(a)


_sym_sqrt = sym_sqrt


def _shape_as_tensor(input):
    """The shape of input as a 1-d int64 tensor."""
    from .._creation import tensor
    from .._dtype import int64
    return tensor(list(input.shape), dtype=int64)


def get_autocast_dtype(device_type):
    """The dtype autocast would use on this device type (PyTorch's defaults: float16 on cuda,
    bfloat16 on cpu; ndgrad's autocast changes no dtype, see torch.amp)."""
    from .. import _dtype as D
    if device_type == "cuda":
        return D.float16
    return getattr(D, "bfloat16", D.float16)


def is_autocast_available(device_type):
    return device_type in ("cpu", "cuda")


def _softmax_backward_data(grad_output, output, dim, input_dtype):
    """torch._softmax_backward_data(grad_output, output, dim, input_dtype): softmax's backward,
    output * (grad_output - sum(grad_output * output, dim)), in grad_output's dtype (libraries
    that write their own softmax Function call it, e.g. DeBERTa's XSoftmax); differentiable."""
    g = (grad_output * output).sum(dim, keepdim=True)
    return (output * (grad_output - g)).to(grad_output.dtype)
