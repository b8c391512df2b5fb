"""torch.nn.functional: stateless layers, activations and losses.

Fused kernels (convolution, linear, pooling with indices, log_softmax, nll_loss) live in
ops/nn_ops.py; everything else here is composed of ndgrad ops, so it is differentiable to any
order. Argument checks and error texts follow PyTorch.
"""
import math
import warnings

import numpy as _np

from .._backend import xp_of as _xp_of, to_numpy as _to_numpy, ufunc_at as _ufunc_at
from .._backend import keeping_format
from .._tensor import Tensor as _Tensor, _make, _wrap_dim
from .. import _dtype as D
from ..autograd.grad_mode import no_grad, _state as _grad_state
from .._creation import zeros_like as _zeros_like
from ..ops import nn_ops as K
from ..ops.linalg import addmm_ as _addmm, matmul as _matmul
from ..ops.shape import broadcast_shapes as _broadcast_shapes
from .attention import _enabled as _sdp_enabled, SDPBackend as _SDPBackend
from ..ops._registry import defop
from ..ops import (where, clamp, exp, log, tanh as _tanh, sigmoid as _sigmoid, relu as _relu,
                   matmul, sqrt, abs as _abs)

_REDUCTIONS = ("none", "mean", "sum")


# ---------------------------------------------------------------- helpers

def _pair(x, n=2):
    if isinstance(x, (list, tuple)):
        if len(x) == 1:
            return tuple(x) * n
        return tuple(x)
    return (x,) * n


def _xp(t):
    """The array module of tensor `t`'s data."""
    return _xp_of(t._data)


def _const(like, array):
    """A constant tensor with `like`'s dtype on `like`'s device (`array`: a number, a host
    array of metadata built from shapes, or an array of `like`'s device)."""
    return _make(_xp_of(like._data).asarray(array, dtype=like.dtype.np))


def _index(like, array):
    """An int64 index tensor on `like`'s device (from a host or device array)."""
    return _make(_xp_of(like._data).asarray(array, dtype=_np.int64))


_RED = {"none": 0, "mean": 1, "sum": 2}


def _red_code(reduction):
    try:
        return _RED[reduction]
    except KeyError:
        raise ValueError(f"{reduction} is not a valid value for reduction") from None


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_reduction(size_average, reduce, reduction):
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


# ---------------------------------------------------------------- activations
# The fused activation ops live in ops/activation.py (shared with the torch namespace).
from ..ops.activation import _log_softmax  # noqa: E402
from ..ops import activation as _A  # noqa: E402
from ..ops.activation import (softmax, log_softmax, softmin, softplus, gelu, silu, elu, selu,  # noqa: E402,F401
                              celu, leaky_relu, hardtanh, relu6, hardsigmoid, hardswish, mish,
                              softsign, tanhshrink, logsigmoid, threshold, one_hot)


def relu(input, inplace=False):
    return input.relu_() if inplace else _relu(input)


def sigmoid(input):
    return _sigmoid(input)


def tanh(input):
    return _tanh(input)


def glu(input, dim=-1):
    n = input.shape[dim]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {_wrap_dim(dim, input.ndim)}"
                           f" is size {n}")
    dim = _wrap_dim(dim, input.ndim)
    pre = (slice(None),) * dim
    return input[pre + (slice(0, n // 2),)] * _sigmoid(input[pre + (slice(n // 2, n),)])


def _assign(input, out):
    input.copy_(out)
    return input


# ---------------------------------------------------------------- linear layers

def linear(input, weight, bias=None):
    """y = input @ weight.T + bias."""
    if bias is not None and (input.dtype is not weight.dtype or bias.dtype is not weight.dtype):
        _linear_dtype_check(input, weight, bias)  # with a bias, before the shapes
    ws, xs = weight._data.shape, input._data.shape  # (tuples: Size's Python indexing is slower)
    if len(ws) == 2 and len(xs) >= 1 and xs[-1] != ws[1]:
        rows = input.numel() // xs[-1] if len(xs) > 1 else 1
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{xs[-1]} and "
            f"{ws[1]}x{ws[0]})")
    if input.dtype is not weight.dtype:
        _linear_dtype_check(input, weight, bias)
    if len(ws) != 2 or not xs or (input.__class__ is not _Tensor and _batched(input)) or \
            _batched(weight) or (bias is not None and _batched(bias)):
        return K.linear(input, weight, bias)   # (vmap's batched tensors: the fused op's rule)
    if not _grad_state.enabled or not (input._requires_grad or weight._requires_grad or (
            bias is not None and bias._requires_grad)):
        return K.linear(input, weight, bias)   # (no graph: one op instead of t, view, addmm)
    # PyTorch's graph: addmm(bias, input, weight.t()) (AddmmBackward0 whose edges are bias,
    # input, TBackward0), through 2-d views for other ranks; matmul without a bias.
    wt = weight.t()
    if bias is None:
        return _matmul(input, wt)
    if input.ndim == 2:
        return _addmm(bias, input, wt)
    if input.ndim >= 3 and not input._data.flags.c_contiguous:
        return _matmul(input, wt) + bias
    out = _addmm(bias, input.view(-1, input.shape[-1]), wt)
    return out.view(*input.shape[:-1], weight.shape[0])


def _batched(t):
    """Whether t is one of vmap's batched tensors (func/_vmap.py: its `_value` is kept in the
    instance dict, which a plain Tensor gets only when something is stored there)."""
    return t.__class__ is not _Tensor and "_value" in t.__dict__


def _linear_dtype_check(input, weight, bias):
    """PyTorch's linear is addmm(bias, input, weight.t()) when there is a bias (for a 3-d and up
    input only when it is contiguous), else matmul(input, weight.t()): their dtype errors."""
    from ..ops import linalg as L
    if bias is not None and (input.ndim <= 2 or input._data.flags.c_contiguous):
        L._check_addmm_dtypes(bias, input, weight.t())
    elif input.dtype is not weight.dtype:
        raise L._matmul_dtype_error(input, weight.t())


def _tname(d):
    return d._cname


def bilinear(input1, input2, weight, bias=None):
    # y_k = x1 W_k x2 + b_k
    named = [("input1", input1), ("input2", input2), ("weight", weight)] + \
        ([("bias", bias)] if bias is not None else [])
    if any(t.dtype is not input1.dtype for _, t in named):
        from ..ops.linalg import _cname
        raise RuntimeError("All tensors must have the same dtype, got " +
                           ", ".join(f"{n}: {_cname(t.dtype)}" for n, t in named))
    t = matmul(input1.unsqueeze(-2).unsqueeze(-3), weight)       # (..., O, 1, in2)
    out = (t.squeeze(-2) * input2.unsqueeze(-2)).sum(-1)
    return out if bias is None else out + bias


# ---------------------------------------------------------------- convolution

def _conv_prep(name, input, weight, nd):
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got "
            f"input of size: {list(input.shape)}")
    return input.ndim == nd + 1


def _conv_padding(padding, weight_hw, dilation, stride, nd):
    if isinstance(padding, str):
        if padding == "valid":
            return tuple((0, 0) for _ in range(nd))
        if padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            pads = []
            for k, d in zip(weight_hw, dilation):
                total = d * (k - 1)
                pads.append((total // 2, total - total // 2))
            return tuple(pads)
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    return tuple((p, p) for p in _pair(padding, nd))


def _conv_weight_dims(nd, input, weight, stride, padding):
    """ATen's checks of the weight's rank against the convolution's (and the input's)."""
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if weight.ndim == nd + 2:
        return
    if isinstance(padding, str):
        batched = input if input.ndim != nd + 1 else input.unsqueeze(0)
        raise RuntimeError(
            f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight"
            f"{list(weight.shape)}, but got {batched.ndim}-dimensional input of size "
            f"{list(batched.shape)} instead")
    raise RuntimeError(
        f"expected stride to be a single integer value or a list of {weight.ndim - 2} values to "
        f"match the convolution dimensions, but got stride={list(_pair(stride, nd))}")


def _conv(name, nd, input, weight, bias, stride, padding, dilation, groups):
    _conv_weight_dims(nd, input, weight, stride, padding)
    unbatched = _conv_prep(name, input, weight, nd)
    if unbatched:
        input = input.unsqueeze(0)
    stride, dilation = _pair(stride, nd), _pair(dilation, nd)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if not isinstance(padding, str) and any(p < 0 for p in _pair(padding, nd)):
        raise RuntimeError("negative padding is not supported")
    _check_conv_args(stride, dilation)
    if bias is not None and bias.dtype is not input.dtype:  # before the shapes
        raise _conv_dtype_error(input, weight, bias, "slow_conv2d_cpu")
    if weight.shape[0] < groups:   # (no output channels: ATen's check_shape_forward)
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {list(weight.shape)} instead")
    if weight.shape[0] % groups:
        raise RuntimeError("Given groups=%d, expected weight to be divisible by %d at "
                           "dimension 0, but got weight of size [[%s]] instead"
                           % (groups, groups, ", ".join(map(str, weight.shape))))
    C = input.shape[1]
    if weight.shape[1] * groups != C:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
            f"input{list(input.shape)} to have {weight.shape[1] * groups} channels, but got "
            f"{C} channels instead")
    pads = _conv_padding(padding, weight.shape[2:], dilation, stride, nd)
    sizes = [n + a + b for n, (a, b) in zip(input.shape[2:], pads)]
    effs = [d * (k - 1) + 1 for k, d in zip(weight.shape[2:], dilation)]
    if any(s < e for s, e in zip(sizes, effs)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, sizes))}). "
            f"Kernel size: ({' x '.join(map(str, effs))}). "
            "Kernel size can't be greater than actual input size")
    if nd == 1:
        input, weight = input.unsqueeze(2), weight.unsqueeze(2)
        stride, dilation, pads = (1,) + stride, (1,) + dilation, ((0, 0),) + pads
    if input.dtype is not weight.dtype or (nd == 3 and input.dtype is D.bool):
        raise _conv_dtype_error(input, weight, None,
                                "compute_columns3d" if nd == 3 else "slow_conv2d_cpu")
    out = K.conv2d(input, weight, bias, stride, pads, dilation, groups)
    if nd == 1:
        out = out.squeeze(2)
    return out.squeeze(0) if unbatched else out


def _check_conv_args(stride, dilation):
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")


def _conv_dtype_error(input, weight, bias, kernel):
    """PyTorch's CPU convolutions refuse mixed dtypes (a transposed one ignores its bias's)."""
    from ..ops.linalg import _cname, _sname
    if bias is not None and bias.dtype is not input.dtype:
        return RuntimeError(f"Input type ({_cname(input.dtype)}) and bias type "
                            f"({_cname(bias.dtype)}) should be the same")
    i, w = _sname(input.dtype), _sname(weight.dtype)
    if input.dtype.is_complex:
        legacy = not (weight.dtype.is_complex or weight.dtype is D.bool)
        return RuntimeError(f"Input type (CPU{i}Type) and weight type "
                            f"({f'torch.{w}Tensor' if legacy else f'CPU{w}Type'}) should be the same")
    if input.dtype is D.bool or (kernel.startswith("slow_conv_transpose")
                                 and not input.dtype.is_floating_point
                                 and input.dtype is not D.int64):
        return NotImplementedError(f'"{kernel}" not implemented for \'{i}\'')
    return RuntimeError(f"expected scalar type {i} but found {w}")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Applies a 2-D convolution over an input of shape (N, C, H, W) or (C, H, W)."""
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Applies a 1-D convolution over an input of shape (N, C, L) or (C, L)."""
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Applies a 3-D convolution over an input of shape (N, C, D, H, W) or (C, D, H, W)."""
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose(name, nd, input, weight, bias, stride, padding, output_padding, groups,
                    dilation):
    """The transposed convolution (the gradient of the convolution with respect to its input)
    over nd spatial dims; 1-d runs as 2-d with a unit height."""
    unbatched = _conv_prep(name, input, weight, nd)
    if unbatched:
        input = input.unsqueeze(0)
    stride, padding, dilation = _pair(stride, nd), _pair(padding, nd), _pair(dilation, nd)
    _check_conv_args(stride, dilation)
    output_padding = _pair(output_padding, nd)
    if input.shape[1] != weight.shape[0]:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected "
            f"input{list(input.shape)} to have {weight.shape[0]} channels, but got "
            f"{input.shape[1]} channels instead")
    hw = tuple((i - 1) * s - 2 * p + d * (k - 1) + op + 1 for i, s, p, d, k, op in zip(
        input.shape[2:], stride, padding, dilation, weight.shape[2:], output_padding))
    if min(hw) <= 0:
        raise RuntimeError(
            f"Given input size per channel: ({' x '.join(map(str, input.shape[2:]))}). "
            f"Calculated output size per channel: ({' x '.join(map(str, hw))}). "
            "Output size is too small")
    if input.dtype is not weight.dtype or not (input.dtype.is_floating_point
                                               or input.dtype.is_complex
                                               or input.dtype is D.int64):
        raise _conv_dtype_error(input, weight, None, "slow_conv_transpose3d_out_cpu" if nd == 3
                                else "slow_conv_transpose2d_out_cpu")
    pads = tuple((p, p) for p in padding)
    if nd == 1:
        input, weight = input.unsqueeze(2), weight.unsqueeze(2)
        stride, dilation, pads, hw = (1,) + stride, (1,) + dilation, ((0, 0),) + pads, (1,) + hw
    out = K.conv_transpose2d(input, weight, stride, pads, dilation, groups, hw)
    if nd == 1:
        out = out.squeeze(2)
    if bias is not None:
        out = out + bias.reshape((1, -1) + (1,) * nd)
    return out.squeeze(0) if unbatched else out


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The transposed 2-D convolution (the gradient of conv2d with respect to its input)."""
    return _conv_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The transposed 1-D convolution (the gradient of conv1d with respect to its input)."""
    return _conv_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The transposed 3-D convolution (the gradient of conv3d with respect to its input)."""
    return _conv_transpose("conv_transpose3d", 3, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


# ---------------------------------------------------------------- pooling

def _pool_out(size, k, s, p, d, ceil_mode):
    eff = d * (k - 1) + 1
    num = size + 2 * p - eff
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _pool_args(name, input, kernel_size, stride, padding, dilation, nd):
    k = _pair(kernel_size, nd)
    s = _pair(stride, nd) if stride is not None and stride != [] and stride != () else k
    p, d = _pair(padding, nd), _pair(dilation, nd)
    if any(ss == 0 for ss in s):
        raise RuntimeError("stride should not be zero")
    for pp, kk, dd in zip(p, k, d):
        if pp < 0:      # (ATen's pooling_output_shape, before the input's shape is checked)
            raise RuntimeError(f"pad must be non-negative, but got pad: {pp}")
        if pp > (dd * (kk - 1) + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={pp}, "
                f"kernel_size={kk} and dilation={dd}")
    return k, s, p, d


def _check_pool_out(x, out_hw):
    """PyTorch's error for a window larger than the (padded) input."""
    if any(o < 1 for o in out_hw):
        c = x.shape[1]
        raise RuntimeError(
            f"Given input size: ({'x'.join(map(str, (c,) + tuple(x.shape[2:])))}). "
            f"Calculated output size: ({'x'.join(map(str, (c,) + tuple(out_hw)))}). "
            "Output size is too small")


def _check_pool_input(input, nd, name):
    """Whether `input` is unbatched; as in PyTorch, only the batch may be empty."""
    shape = list(input.shape)
    ok_ndim = input.ndim in (nd + 1, nd + 2)
    if ok_ndim and 0 not in shape[input.ndim - nd - 1:]:
        return input.ndim == nd + 1
    if name == "avg_pool1d":
        if not ok_ndim:
            raise RuntimeError(
                f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for "
                "argument #1 'self' (while checking arguments for avg_pool1d)")
        nd, shape = 2, shape[:-1] + [1] + shape[-1:]   # PyTorch's 2-d kernel reports it
    elif nd == 2 and not ok_ndim:
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    elif nd == 3:
        if not ok_ndim:
            raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
        where = ("max_pool3d_with_indices_out_cpu_template()" if name == "max_pool3d"
                 else name + "()")
        raise RuntimeError(
            f"{where}: Expected input's non-batch dimensions to have positive length, but input "
            f"has a shape of {shape} and non-batch dimension 0 has length zero!")
    prefix = "max_pool1d: " if name == "max_pool1d" else ""
    raise RuntimeError(
        f"{prefix}Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with optional 0 dim batch "
        f"size for input, but got:{shape}")


def _max_pool(name, nd, input, kernel_size, stride, padding, dilation, ceil_mode,
              return_indices):
    """Max pooling over nd (2 or 3) spatial dims; with return_indices also the flat index of
    each max in its plane (volume)."""
    k, s, p, d = _pool_args(name, input, kernel_size, stride, padding, dilation, nd)
    unb = _check_pool_input(input, nd, name)
    x = input.unsqueeze(0) if unb else input
    out_hw = tuple(_pool_out(n, kk, ss, pp, dd, ceil_mode)
                   for n, kk, ss, pp, dd in zip(x.shape[2:], k, s, p, d))
    _check_pool_out(x, out_hw)
    pads = tuple((pp, max(pp, (o - 1) * ss + dd * (kk - 1) + 1 - n - pp))
                 for n, o, kk, ss, pp, dd in zip(x.shape[2:], out_hw, k, s, p, d))
    vals, idx = (K.max_pool3d if nd == 3 else K.max_pool2d)(x, k, s, pads, d, out_hw)
    if unb:
        vals, idx = vals.squeeze(0), idx.squeeze(0)
    return (vals, idx) if return_indices else vals


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2-D max pooling; with return_indices also the flat index of each max in its plane."""
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """3-D max pooling; with return_indices also the flat index of each max in its volume."""
    return _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    if not return_indices:     # (ATen's max_pool1d and its own messages)
        kk, ss = _pair(kernel_size, 1)[0], _pair(stride, 1)[0] if stride not in (None, [], ()) \
            else _pair(kernel_size, 1)[0]
        pp, dd = _pair(padding, 1)[0], _pair(dilation, 1)[0]
        if kk <= 0:
            raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got "
                               f"{kk}")
        if ss <= 0:
            raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {ss}")
        if pp < 0:
            raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {pp}")
        if pp > kk // 2:
            raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, "
                               f"but got padding={pp} and kernel_size={kk}")
        if dd <= 0:
            raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {dd}")
    k, s, p, d = _pool_args("max_pool1d", input, kernel_size, stride, padding, dilation, 1)
    unb = _check_pool_input(input, 1, "max_pool1d")
    x = input.unsqueeze(0) if unb else input
    o = _pool_out(x.shape[-1], k[0], s[0], p[0], d[0], ceil_mode)
    if o < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {o}")
    vals, idx = max_pool2d(x.unsqueeze(2), (1,) + k, (1,) + s, (0,) + p, (1,) + d, ceil_mode,
                           True)
    vals, idx = vals.squeeze(2), idx.squeeze(2)
    if unb:
        vals, idx = vals.squeeze(0), idx.squeeze(0)
    return (vals, idx) if return_indices else vals


def _avg_divisor(size, o, k, s, p, count_include_pad):
    """Per-output divisor along one axis (PyTorch's pooling window clipping rules)."""
    starts = _np.arange(o) * s - p  # host: window bounds from the shape
    ends = _np.minimum(starts + k, size + p)  # host: window bounds
    pool = ends - starts
    starts_c = _np.maximum(starts, 0)  # host: window bounds
    ends_c = _np.minimum(ends, size)  # host: window bounds
    return pool, ends_c - starts_c


def _avg_pool(name, nd, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override, _sums=False):
    """Average pooling (a depthwise convolution with a ones kernel, then a divisor map);
    integer inputs as ATen's: the sum divided in integers, truncated toward zero."""
    _pool_args(name, input, kernel_size, stride, padding, 1, nd)   # (its errors come first)
    unb = _check_pool_input(input, nd, name)
    if input.dtype is D.bool:
        raise NotImplementedError(f'"{name}" not implemented for \'Bool\'')
    if input.dtype._category == 1:
        y = _avg_pool(name, nd, input.to(D.float64), kernel_size, stride, padding, ceil_mode,
                      count_include_pad, divisor_override, _sums=True)
        total, div = y
        xp = _xp(total)
        total = xp.rint(total._data).astype("int64")
        div = xp.asarray(div, dtype="int64")
        q = xp.abs(total) // xp.abs(div) * xp.sign(total) * xp.sign(div)   # (C's truncation)
        return _make(q.astype(input.dtype.np))
    x = input.unsqueeze(0) if unb else input
    k, s, p, _ = _pool_args(name, x, kernel_size, stride, padding, 1, nd)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    N, C = x.shape[:2]
    sizes = tuple(x.shape[2:])
    out_hw = tuple(_pool_out(n, kk, ss, pp, 1, ceil_mode)
                   for n, kk, ss, pp in zip(sizes, k, s, p))
    _check_pool_out(x, out_hw)
    pads = tuple((pp, max(pp, (o - 1) * ss + kk - n - pp))
                 for n, o, kk, ss, pp in zip(sizes, out_hw, k, s, p))
    ones = _make(_xp(x).ones((1, 1) + k, dtype=x.dtype.np))
    half = x.dtype in (D.float16, D.bfloat16)   # (PyTorch's opmath: sums and quotient in
    xs = x.float() if half else x                  # float32, rounded to the half type once)
    y = K.window_sums(xs.reshape(N * C, 1, *sizes), ones.float() if half else ones, s, pads,
                      out_hw)
    y = y.reshape(N, C, *out_hw)
    if divisor_override:
        div = float(divisor_override)
    else:
        div = _np.ones(())  # host: the divisor map, from the shape (moved once by _const)
        for n, o, kk, ss, pp in zip(sizes, out_hw, k, s, p):
            pool, clipped = _avg_divisor(n, o, kk, ss, pp, count_include_pad)
            div = _np.multiply.outer(div, pool if count_include_pad else clipped)  # host: map
    if _sums:           # (the sums and the divisor map, for integer inputs)
        return (y.squeeze(0) if unb else y), (_np.asarray(div)[None] if unb else div)  # host: map
    y = y / _const(y, div)
    if half:
        y = y.to(x.dtype)
    if nd == 2:      # (PyTorch's avg_pool3d writes a contiguous result whatever its input)
        y = _in_format_of(x, y)
    return y.squeeze(0) if unb else y


def _in_format_of(input, out):
    """out laid out in the channels-last format input suggests, as PyTorch's kernels write the
    ops composed here (average pooling, group norm)."""
    from .._backend import suggest_format
    from ..ops.copies import memory_format
    name = suggest_format(input._data)
    return out if name == "contiguous_format" else out.contiguous(
        memory_format=memory_format._by_name(name))


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """2-D average pooling (a depthwise convolution with a ones kernel, then a divisor map)."""
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """3-D average pooling (a depthwise 3-d convolution with a ones kernel, then a divisor)."""
    return _avg_pool("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    k, s, p, _ = _pool_args("avg_pool1d", input, kernel_size, stride, padding, 1, 1)
    unb = _check_pool_input(input, 1, "avg_pool1d")
    x = input.unsqueeze(0) if unb else input
    y = avg_pool2d(x.unsqueeze(2), (1,) + k, (1,) + s, (0,) + p, ceil_mode,
                   count_include_pad).squeeze(2)
    return y.squeeze(0) if unb else y


def _list_with_default(output_size, input):
    """nn.functional's: None entries from the input's trailing sizes (and its error for an
    input of too few dims)."""
    if isinstance(output_size, int):
        return output_size
    out = list(output_size)
    if input.ndim <= len(out):
        raise ValueError(f"Input dimension should be at least {len(out) + 1}")
    dims = tuple(input.shape[input.ndim - len(out):])
    return tuple(d if v is None else v for v, d in zip(out, dims))


def _one_int(name, output_size):
    """ATen's 1-d adaptive pools: output_size holds exactly one int."""
    if isinstance(output_size, (list, tuple)) and len(output_size) != 1:
        raise RuntimeError(f"{name}() argument 'output_size' should contain one int (got "
                           f"{len(output_size)})")


def _no_negative_output(input, outs):
    if any(o < 0 for o in outs):
        shape = list(input.shape[:input.ndim - len(outs)]) + list(outs)
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(o for o in outs)}: {shape}")


def _adaptive_avg_check(name, outs, sep=", "):
    """ATen's adaptive_avg_pool2d/3d checks of output_size (its own spacing: "{-1, 0,2}")."""
    nd = int(name[-2])
    if len(outs) != nd:
        raise RuntimeError(f"{name}: output_size must be {nd}")
    if any(o is not None and o < 0 for o in outs):
        shown = ", ".join(map(str, outs[:2])) + "".join(f",{o}" for o in outs[2:])
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{shown}}}")


def adaptive_avg_pool2d(input, output_size):
    if _pair(output_size) == (1, 1):   # ATen's shortcut: the mean over H and W (of any input,
        return input.mean((-1, -2), keepdim=True)   # as PyTorch's: no check of its dims)
    output_size = _list_with_default(output_size, input)
    _adaptive_avg_check("adaptive_avg_pool2d", _pair(output_size))
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{list(input.shape)}")
    H, W = input.shape[-2:]
    oh, ow = _pair(output_size)
    oh = H if oh is None else oh
    ow = W if ow is None else ow
    from ..ops.adaptive_pool import adaptive_avg_pool2d as pool   # (PyTorch's window sums)
    return pool(input, (oh, ow))


def adaptive_avg_pool1d(input, output_size):
    _one_int("adaptive_avg_pool1d", output_size)
    _adaptive_avg_check("adaptive_avg_pool2d", (1,) + _pair(output_size, 1))  # (ATen's 2-d)
    o = _pair(output_size, 1)[0]
    # (ATen's: the 2-d pool of one row)
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, o)).squeeze(-2)


def _adaptive_max2d_checked(input, output_size):
    """adaptive_max_pool2d's output_size (None entries from the input) after ATen's checks."""
    output_size = _list_with_default(output_size, input)
    if input.ndim not in (3, 4):
        raise RuntimeError(
            f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: {list(input.shape)}")
    if len(_pair(output_size)) != 2:
        raise RuntimeError("adaptive_max_pool2d(): internal error: output_size.size() must be 2")
    _no_negative_output(input, _pair(output_size))
    return output_size


def adaptive_max_pool2d(input, output_size, return_indices=False):
    output_size = _adaptive_max2d_checked(input, output_size)
    H, W = input.shape[-2:]
    oh, ow = _pair(output_size)
    oh, ow = oh or H, ow or W
    if H % oh or W % ow:  # overlapping or uneven windows
        out = tuple(_in_format_of(input, t) for t in
                    adaptive_max_pool2d_with_indices(input, output_size))
        return out if return_indices else out[0]
    return max_pool2d(input, (H // oh, W // ow), return_indices=return_indices)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    k = _pair(kernel_size)
    out = avg_pool2d(input.pow(norm_type), k, stride, 0, ceil_mode)
    return (out.sign() * relu(out.abs())).mul(k[0] * k[1]).pow(1.0 / norm_type)


# ---------------------------------------------------------------- normalization

def _batch_norm_dtypes(input, *params):
    """PyTorch's CPU dtype rules for batch norm: parameters share the input's dtype, or (mixed
    mode, decided by the first defined parameter) are all float32 with a half input. Returns
    whether the call is mixed."""
    params = [p for p in params if p is not None]
    if not params:
        return False
    if params[0].dtype is not input.dtype:
        if any(p.dtype is not D.float32 for p in params):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        if input.dtype is not D.float16:
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        return True
    for p in params:
        if p.dtype is not input.dtype:
            raise RuntimeError(f"expected scalar type {_tname(input.dtype)} but found "
                               f"{_tname(p.dtype)}")
    return False


def _batch_norm_half(input, weight, bias, eps):
    """Training batch norm of a half input as ATen's kernel: float32 statistics, the mean and
    the inverse deviation saved in the half dtype, then per channel alpha = invstd * weight,
    beta = fma(-mean, alpha, bias) and fma(x, alpha, beta) in float32, rounded once. Returns
    the output and the float32 mean and (biased) variance."""
    shape = [1] * input.ndim
    shape[1] = input.shape[1]
    dims = tuple(d for d in range(input.ndim) if d != 1)
    x = input.float()
    mean = x.mean(dims, keepdim=True)
    diff = x - mean
    var = (diff * diff).mean(dims, keepdim=True)
    stats = mean._data.reshape(-1), var._data.reshape(-1)   # (float32: the running statistics')
    mean, alpha = (t.to(input.dtype).float() for t in (mean, 1 / sqrt(var + eps)))
    if weight is not None:
        alpha = alpha * weight.float().reshape(shape)
    beta = (-mean * alpha) if bias is None else bias.float().reshape(shape).addcmul(-mean, alpha)
    return beta.addcmul(x, alpha).to(input.dtype), stats


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalise over all dims but the channel dim (1); update running stats when training."""
    mixed = _batch_norm_dtypes(input, weight, bias, running_mean, running_var)
    if mixed:     # half input, float parameters: computed in float, returned as half
        return batch_norm(input.float(), running_mean, running_var, weight, bias, training,
                          momentum, eps).to(input.dtype)
    if training:
        n = math.prod(input.shape[:1] + input.shape[2:])
        if n == 1:   # (PyTorch's _verify_batch_size: an empty batch passes)
            raise ValueError("Expected more than 1 value per channel when training, got input "
                             f"size {input.shape}")
    if input.numel() == 0:
        # ATen's empty-input path: the running statistics untouched, the input scaled by the
        # first weight and shifted by the first bias (a graph to them, of zero gradients)
        out = input.clone()
        if weight is not None:
            out = out * weight.reshape(-1)[0]
        if bias is not None:
            out = out + bias.reshape(-1)[0]
        return out
    C = input.shape[1] if input.ndim > 1 else 1
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != C:   # (ATen's check_dims_match_num_input_features)
            raise RuntimeError(f"{name} should contain {C} elements not {t.numel()}")
    if training:
        if input.dtype in (D.float16, D.bfloat16):
            out, (mean, var) = _batch_norm_half(input, weight, bias, eps)
        else:
            out, mean, var = K.batch_norm(input, weight, bias, eps)
            mean, var = mean._data, var._data
        if running_mean is not None:
            m = momentum    # (the half types' in float32, rounded once into the buffers)
            for buf, stat in ((running_mean, mean), (running_var, var * n / (n - 1))):
                cur = buf._data
                buf._data[...] = (1 - m) * cur.astype(stat.dtype, copy=False) + m * stat
                buf._bump_version()
        return out
    if running_mean is None:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    shape = [1] * input.ndim
    shape[1] = input.shape[1]
    if input.dtype in (D.float16, D.bfloat16):
        # ATen's kernel for the half types, per channel in float32: alpha = weight / sqrt(var +
        # eps), beta = fma(-mean, alpha, bias), then fma(x, alpha, beta) rounded once (one
        # ndgrad op a step differed in 38 % of the elements, by up to two ulps)
        def f(t):
            return t.float().reshape(shape)
        alpha = 1 / sqrt(f(running_var) + eps)
        if weight is not None:
            alpha = alpha * f(weight)
        beta = (-f(running_mean) * alpha) if bias is None else f(bias).addcmul(
            -f(running_mean), alpha)
        return beta.addcmul(input.float(), alpha).to(input.dtype)
    out = (input - running_mean.reshape(shape)) / sqrt(running_var.reshape(shape) + eps)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    N, C = input.shape[:2]
    input = input.contiguous()    # (ATen's instance_norm: the batch norm of a contiguous view)
    if not use_input_stats:   # normalise with the running statistics, as batch norm in eval
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    if math.prod(input.shape[2:]) == 1:   # (PyTorch's _verify_spatial_size)
        raise ValueError("Expected more than 1 spatial element when training, got input size "
                         f"{_size_str(input.shape)}")
    # each (sample, channel) is its own batch-norm channel; the running statistics get the
    # mean over the batch of the per-instance updates, as PyTorch's
    stats = [None if s is None else s.detach().repeat(N) for s in (running_mean, running_var)]
    out = batch_norm(input.reshape(1, N * C, *input.shape[2:]), stats[0], stats[1], None, None,
                     True, momentum, eps).reshape(input.shape)
    for buf, s in zip((running_mean, running_var), stats):
        if buf is not None:
            buf._data[...] = s._data.reshape(N, C).mean(0)
            buf._bump_version()
    shape = [1, C] + [1] * (input.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def _check_normalized_shape(normalized_shape, weight, bias):
    """ATen's _check_layer_norm_inputs (rms_norm's too), before the input's shape."""
    if not normalized_shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    for pname, p in (("weight", weight), ("bias", bias)):
        if p is not None and tuple(p.shape) != tuple(normalized_shape):
            raise RuntimeError(
                f"Expected {pname} to be of same shape as normalized_shape, but got {pname} of "
                f"shape {list(p.shape)} and normalized_shape = {list(normalized_shape)}")


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    # (the usual case, weight and bias of the normalized shape, passes both checks on them)
    usual = normalized_shape and (weight is None or weight._data.shape == normalized_shape) \
        and (bias is None or bias._data.shape == normalized_shape)
    if not usual:
        _check_normalized_shape(normalized_shape, weight, bias)
    k = len(normalized_shape)
    shape = input._data.shape  # (a tuple: Size's Python indexing is slower)
    if shape[len(shape) - k:] != normalized_shape or k > len(shape):
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(map(str, normalized_shape))}], but got input of size"
            f"{list(input.shape)}")
    for name, p in () if usual else (("weight", weight), ("bias", bias)):
        if p is not None and p._data.shape != normalized_shape:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got {name} of "
                f"shape {list(p.shape)} and normalized_shape = {list(normalized_shape)}")
    if input.dtype is D.bfloat16:  # PyTorch's kernel: float32 throughout, rounded once
        f = [None if t is None else t.float() for t in (weight, bias)]
        return layer_norm(input.float(), normalized_shape, *f, eps).to(D.bfloat16)
    return K.native_layer_norm(input, normalized_shape, weight, bias, eps)[0]


def rms_norm(input, normalized_shape, weight=None, eps=None):
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    _check_normalized_shape(tuple(normalized_shape), weight, None)
    k = len(normalized_shape)
    if k > input.ndim or tuple(input.shape[input.ndim - k:]) != tuple(normalized_shape):
        raise RuntimeError(     # (sic: ATen's rms_norm prints "[*2, 2]")
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*{', '.join(map(str, normalized_shape))}], but got input of size"
            f"{list(input.shape)}")
    dims = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    # ATen's composite: the half types upcast to float32 (eps's default is float32's epsilon,
    # not the half type's), x * rsqrt(mean(x^2) + eps) * weight there, rounded back once
    half = input.dtype in (D.float16, D.bfloat16)
    x = input.float() if half else input
    if eps is None:
        eps = D.finfo(x.dtype).eps
    out = x * ((x * x).mean(dims, keepdim=True) + eps).rsqrt()
    if weight is not None:
        out = out * weight
    return out.to(input.dtype) if half else out


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    N, C = input.shape[:2]
    if C % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got input "
            f"of shape {input.shape} and num_groups={num_groups}")
    if input.dtype in (D.float16, D.bfloat16):
        # (ATen's kernel computes the half types in float32 and rounds the output once; one
        # ndgrad op at a time would round each step)
        return group_norm(input.float(), num_groups, None if weight is None else weight.float(),
                          None if bias is None else bias.float(), eps).to(input.dtype)
    x = input.reshape(N, num_groups, C // num_groups * math.prod(input.shape[2:]))  # (N may be 0)
    mean = x.mean(2, keepdim=True)
    diff = x - mean
    var = (diff * diff).mean(2, keepdim=True)
    out = (diff / sqrt(var + eps)).reshape(input.shape)
    shape = [1, C] + [1] * (input.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return _in_format_of(input, out)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    n = input.norm(p, dim, keepdim=True)
    return input / clamp(n, min=eps).expand_as(input)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """ATen's: the inputs broadcast against each other first, each is divided by its norm
    along dim, clamped to eps without autograd (the gradient passes the clamp), and the
    products summed along dim."""
    from ..functional import broadcast_tensors
    common = D.result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           f"{_dtype_cname(common)}")
    x1 = x1.to(common) if x1.dtype._category < 2 else x1
    x2 = x2.to(common) if x2.dtype._category < 2 else x2
    x1, x2 = broadcast_tensors(x1, x2)
    n1 = x1.norm(2, dim, keepdim=True).clone()
    n2 = x2.norm(2, dim, keepdim=True).clone()
    with no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def _dtype_cname(dtype):
    """A dtype as ATen's messages print it (Float, Long, ComplexDouble, ...)."""
    from ..ops._inplace import _type_name
    return _type_name(dtype)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    if not (isinstance(x1, _Tensor) and isinstance(x2, _Tensor)):  # (`-` would take them)
        from ..ops._argcheck import argument_error
        raise argument_error("pairwise_distance", ("x1", "x2"), x1, x2)
    return (x1 - x2 + eps).norm(p, -1, keepdim=keepdim)


# ---------------------------------------------------------------- dropout

def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p (default generator), scale the rest by 1/(1-p)."""
    _check_p(p)
    if not training or p == 0:
        return input
    if getattr(input, "is_nested", False):   # (a nested tensor: dropout of its values)
        from ..nested._internal.ops import dropout as nested_dropout
        return nested_dropout(input, p, inplace)
    from .._creation import _rng
    from ..random import _mt19937 as _R
    if p == 1:
        mask = 0.0
    else:  # PyTorch's noise: bernoulli_(1 - p) of empty_like(input), then / (1 - p)
        keep = _R.dropout_mask(_rng(None), input._data, p)  # a host draw, moved once
        mask = keep.astype(input.dtype.np) / (1 - p)
    out = input * _const(input, mask)
    return _assign(input, out) if inplace else out


def _channel_dropout(input, p, training, inplace):
    """ATen's feature_dropout: whole channels (dim 1 of an (N, C, *) input) dropped together
    (one draw per (n, c): elementwise for a 2-d input)."""
    _check_p(p)
    if not training or p == 0 or input.numel() == 0:
        return input
    from .._creation import _rng
    from ..random import _mt19937 as _R
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    if p == 1:
        mask = _xp(input).zeros(shape, dtype=input.dtype.np)
    elif input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    else:  # a host draw, moved to the input's device once
        mask = _R.dropout_mask(_rng(None), shape, p).astype(input.dtype.np) / (1 - p)
    out = input * _const(input, mask)
    return _assign(input, out) if inplace else out


def _unbatched_dropout(input, p, training, inplace):
    """feature_dropout of input with a batch dimension put in front (and taken out again)."""
    x = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    r = _channel_dropout(x, p, training, inplace)
    return r.squeeze_(0) if inplace else r.squeeze(0)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of an (N, C, L) or (C, L) input."""
    _check_p(p)
    nd = input.ndim
    if nd not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {nd}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs).")
    if nd == 2:
        return _unbatched_dropout(input, p, training, inplace)
    return _channel_dropout(input, p, training, inplace)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of an (N, C, H, W) input. As PyTorch's: another number of
    dimensions warns, and a 3-d input is taken as (N, C, L) (feature dropout of dim 1 of
    whatever comes: elementwise for a 2-d input)."""
    _check_p(p)
    nd = input.ndim
    if nd not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {nd}-D input to dropout2d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, "
            "and an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if nd == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _channel_dropout(input, p, training, inplace)


# ---------------------------------------------------------------- sparse

def _embedding_fwd(xp, weight, indices, padding_idx, scale_grad_by_freq):
    return xp.take(weight, indices, axis=0)


def _embedding_grad(grad, weight_shape, indices, padding_idx, scale_grad_by_freq):
    if padding_idx is not None:
        keep = _make((indices._data != padding_idx).astype(grad.dtype.np))
        grad = grad * keep.unsqueeze(-1)
    if scale_grad_by_freq:  # each row's gradient over the number of its lookups
        counts = _xp_of(indices._data).bincount(indices._data.reshape(-1),
                                               minlength=weight_shape[0])
        grad = grad / _const(grad, counts[indices._data][..., None])
    return K.index_add(grad, indices._data, 0, weight_shape[0])


_embedding = defop("embedding", _embedding_fwd, node_name="EmbeddingBackward0",
                   weight=_embedding_grad)


def _embedding_sparse_grad(grad, weight_shape, indices, padding_idx, scale_grad_by_freq):
    """sparse=True: the weight's gradient as a COO tensor, one entry per lookup (uncoalesced,
    padding_idx lookups left out), as PyTorch's embedding_sparse_backward."""
    from ..sparse._coo import sparse_coo_tensor
    idx = indices._data.reshape(-1)
    xp = _xp_of(idx)
    g = grad.reshape(-1, weight_shape[1])
    if scale_grad_by_freq:
        counts = xp.bincount(idx, minlength=weight_shape[0])
        g = g / _const(g, counts[idx][:, None])
    if padding_idx is not None:
        keep = xp.nonzero(idx != padding_idx)[0]
        idx = idx[keep]
        g = g.index_select(0, _make(keep.astype(_np.int64)))
    return sparse_coo_tensor(_make(idx.reshape(1, -1).astype(_np.int64)), g, weight_shape,
                             check_invariants=False)


_embedding_sparse = defop("embedding_sparse", _embedding_fwd, node_name="EmbeddingBackward0",
                          weight=_embedding_sparse_grad)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of `weight` picked by the integer tensor `input` (padding_idx rows get no gradient)."""
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if input.dtype not in (D.int64, D.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got torch.{_tname(input.dtype)}Tensor instead (while "
            "checking arguments for embedding)")
    n = weight.shape[0]
    if padding_idx is not None and padding_idx < 0:
        padding_idx += n
    idx = input._data
    xp = _xp_of(idx)
    lo, hi = (int(idx.min()), int(idx.max())) if idx.size else (0, 0)  # host: bounds check
    if lo < -n or hi >= n:
        raise IndexError("index out of range in self")
    idx = xp.where(idx < 0, idx + n, idx) if lo < 0 else idx
    if max_norm is not None:
        with no_grad():
            rows = xp.unique(idx)
            w = weight._data[rows]
            norms = xp.linalg.norm(w, ord=norm_type, axis=1, keepdims=True)
            scale = xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
            weight._data[rows] = w * scale
    op = _embedding_sparse if sparse else _embedding
    return op(weight, _make(idx), padding_idx, scale_grad_by_freq)


# ---------------------------------------------------------------- padding and resampling

def _constant_pad_fwd(xp, self, pads, value):
    return xp.pad(self, pads, constant_values=value)


def _constant_pad_grad(grad, pads):
    return grad[tuple(slice(a, grad.shape[i] - b) for i, (a, b) in enumerate(pads))]


_constant_pad = defop("constant_pad_nd", keeping_format(_constant_pad_fwd),
                      node_name="ConstantPadNdBackward0", self=_constant_pad_grad)


def _pad_index(n, a, b, mode):
    # host: the source index of each padded position, from the shape
    i = _np.arange(-a, n + b)  # host: index table
    if mode == "replicate":
        return _np.clip(i, 0, n - 1)  # host: index table
    if mode == "circular":
        # ATen's: negative pads crop first, positive ones then wrap around what is left
        lo = max(-a, 0)
        m = n - lo - max(-b, 0)
        return _np.arange(-max(a, 0), m + max(b, 0)) % max(m, 1) + lo  # host: index table
    # reflect
    period = 2 * (n - 1)
    i = _np.abs(i) % period if period else _np.zeros_like(i)  # host: index table
    return _np.where(i >= n, period - i, i)  # host: index table


def pad(input, pad, mode="constant", value=None):
    """Pad the last len(pad)//2 dims: pad = (left_last, right_last, left_prev, right_prev, ...)."""
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    k = len(pad) // 2
    if k > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           "dimension but got padding length "
                           f"{len(pad)} and input of dimension {input.ndim}")
    pairs = [(0, 0)] * input.ndim
    for j in range(k):
        pairs[input.ndim - 1 - j] = (int(pad[2 * j]), int(pad[2 * j + 1]))
    if mode == "constant":
        for n, (a, b) in zip(input.shape, pairs):   # (ATen crops negative pads with narrow)
            if (a < 0 and n + a < 0) or (b < 0 and n + min(a, 0) + b < 0):
                raise RuntimeError("narrow(): length must be non-negative.")
        if any(a < 0 or b < 0 for a, b in pairs):
            input = input[tuple(slice(max(-a, 0), input.shape[i] - max(-b, 0))
                                for i, (a, b) in enumerate(pairs))]
            pairs = [(max(a, 0), max(b, 0)) for a, b in pairs]
        return _constant_pad(input, tuple(pairs), 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if not (1 <= k <= 3 and input.ndim in (k + 1, k + 2)):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode != "circular" and input.ndim in (k + 1, k + 2) and \
            0 in tuple(input.shape)[input.ndim - k - 1:]:  # (only the batch may be empty)
        raise RuntimeError(
            f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and "
            f"other non-zero dimensions for input, but got: {list(input.shape)}")
    out = input
    for d in range(input.ndim - k, input.ndim):
        a, b = pairs[d]
        n = input.shape[d]
        if mode == "circular" and (a > n or b > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if mode == "circular" and n + a + b < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
        if mode == "reflect" and (a >= n or b >= n):
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({a}, {b}) at dimension {d} of input "
                f"{list(input.shape)}")
        if a or b:
            out = K.take(out, _xp(out).asarray(_pad_index(n, a, b, mode)), d)
    # (ATen's reflection and replication pads keep a channels-last format, its circular pad
    # writes a contiguous result)
    return out if mode == "circular" else _in_format_of(input, out)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial dims: nearest, area, and the linear and cubic modes (with antialias)
    rounded as PyTorch's CPU kernels (ops/upsample.py)."""
    nd = input.ndim - 2
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if mode in ("nearest", "nearest-exact", "area") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    in_sizes = input.shape[2:]
    if size is not None:
        out_sizes = _pair(size, nd)
        scales = (None,) * nd
    else:
        sf = _pair(scale_factor, nd)
        out_sizes = tuple(int(math.floor(n * f)) for n, f in zip(in_sizes, sf))
        scales = (None,) * nd if recompute_scale_factor else sf
    if mode != "area" and 1 <= nd <= 3 and min(tuple(in_sizes) + tuple(out_sizes)) <= 0:
        names = ("D", "H", "W")[3 - nd:]

        def sizes(v):
            return ", ".join(f"{k}: {n}" for k, n in zip(names, v))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({sizes(in_sizes)}){' and' if nd == 1 else ''} output "
                           f"({sizes(out_sizes)})")
    out = input
    if mode in ("nearest", "nearest-exact"):
        from ..ops.upsample import _channels_last_input
        from ..ops._upsample_tables import nearest_table
        # (PyTorch's channels-last kernel for 2-d outputs of out_h + out_w <= 128: its indices
        # in float32; the generic kernel's in the compute type)
        last = nd == 2 and ((_channels_last_input(input._data) and input.shape[1] > 3) or
                            sum(out_sizes) <= 128)
        if 1 <= nd <= 3:
            from ..ops.upsample import NEAREST
            return NEAREST[(mode == "nearest-exact", nd)](input, tuple(out_sizes),
                                                          tuple(scales), last)
        for i in range(nd):
            idx = nearest_table(in_sizes[i], out_sizes[i], scales[i], mode == "nearest-exact",
                                input.dtype.np, last)
            out = K.take(out, _xp(out).asarray(idx), 2 + i)
        return out
    if mode == "area":
        if nd == 3:
            from ._functional_extra import adaptive_avg_pool3d as pool
        else:
            pool = adaptive_avg_pool2d if nd == 2 else adaptive_avg_pool1d
        return pool(input, out_sizes)
    if mode in ("linear", "bilinear", "trilinear", "bicubic"):
        from ..ops import upsample as U
        want = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2}[mode]
        if nd != want:
            raise NotImplementedError(
                f"Got {input.ndim}D input, but {mode} mode needs {want + 2}D input")
        op = {"linear": U.upsample_linear1d, "bilinear": U.upsample_bilinear2d,
              "trilinear": U.upsample_trilinear3d, "bicubic": U.upsample_bicubic2d}[mode]
        if antialias:
            op = U.upsample_bilinear2d_aa if mode == "bilinear" else U.upsample_bicubic2d_aa
        return op(input, out_sizes, bool(align_corners), scales)
    if mode == "lanczos":
        raise NotImplementedError("interpolate: mode 'lanczos' is not implemented in ndgrad")
    raise NotImplementedError(   # (PyTorch's words for a mode it does not know)
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for the "
        "modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
        f"nearest-exact (got {mode})")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    return interpolate(input, size, scale_factor, mode, align_corners)


def pixel_shuffle(input, upscale_factor):
    r = upscale_factor
    *b, C, H, W = input.shape
    x = input.reshape(*b, C // (r * r), r, r, H, W)
    n = len(b)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*b, C // (r * r), H * r, W * r)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding local blocks (N, C*kh*kw, L) of (N, C, H, W) (im2col): a gather from the padded
    planes, the adjoint of fold (see fold below)."""
    return _unfold(input, kernel_size, dilation, padding, stride)


# ---------------------------------------------------------------- losses

def _check_same_size(input, target, name):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.", stacklevel=3)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_same_size(input, target, "mse_loss")
    if weight is None:
        return K.mse_loss(input, target, _red_code(reduction))
    d = input - target
    return _reduce(d * d * weight, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_same_size(input, target, "l1_loss")
    loss = _abs(input - target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _check_same_size(input, target, "smooth_l1_loss")
    if beta == 0:
        return _reduce(_abs(input - target), reduction)
    return K.smooth_l1_loss(input, target, _red_code(reduction), beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    _check_same_size(input, target, "huber_loss")
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is None:
        return K.huber_loss(input, target, _red_code(reduction), delta)
    d = _abs(input - target)
    loss = where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    return _reduce(loss * weight, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return K.soft_margin_loss(input, target, _red_code(reduction))


def _class_shapes(input, target):
    """Validate (input, target) of a class-index loss; returns (input, target, unbatched)."""
    if input.ndim == 1:
        if target.ndim != 0:
            raise RuntimeError(
                f"0D or 1D target tensor expected, multi-target not supported")
        return input.unsqueeze(0), target.reshape(1), True
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    xs, ts = input._data.shape, target._data.shape
    if ts[:1] == xs[:1] and ts[1:] == xs[2:]:  # (the valid case, on plain tuples)
        return input, target, False
    if target.shape[:1] != input.shape[:1]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
            f"({target.shape[0] if target.ndim else 1}).")
    if tuple(target.shape[1:]) != tuple(input.shape[2:]):
        if input.ndim == 2:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        raise RuntimeError(
            f"Expected target size {list(input.shape[:1]) + list(input.shape[2:])}, got "
            f"{list(target.shape)}".replace("[", "[").replace("]", "]"))
    return input, target, False


_UNSIGNED = {1: "u1", 8: "u8"}  # (the targets' itemsize -> the unsigned view of _nll_index)


def _nll_index(x, t, C, reduction, ignore_index):
    """The common case of nll_loss (a batch of class indices `t` for the (N, C) floats `x`, no
    weights): when every target is a class and none is ignored, PyTorch's gather/scatter
    kernels (ops/nn_ops.py); else None (the general path checks, with PyTorch's messages)."""
    tt = t._data
    # every target in [0, C): one reduction over the targets read as unsigned (a negative one
    # reads as a huge number)
    if tt.view(_UNSIGNED[tt.itemsize]).max() >= C or (
            0 <= ignore_index < C and (tt == ignore_index).any()):
        return None
    return K.nll_loss_index(x, t, tt.shape[0] if reduction == "mean" else
                            1 if reduction == "sum" else None)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log likelihood of class indices `target` under log-probabilities `input`."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if target.dtype not in (D.int64, D.uint8):
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {_tname(target.dtype)}")
    x, t, unb = _class_shapes(input, target)
    C = x.shape[1]
    tt = t._data
    if weight is None and tt.ndim == 1 and tt.shape[0] and x.dtype.is_floating_point:
        loss = _nll_index(x, t, C, reduction, ignore_index)
        if loss is not None:
            return loss.squeeze(0) if unb and reduction == "none" else loss
    if weight is not None and tuple(weight.shape) != (C,):
        raise RuntimeError(
            f"weight tensor should be defined either for all {C} classes or no classes but got "
            f"weight tensor of shape: {list(weight.shape)}")
    if not x.dtype.is_floating_point:   # (PyTorch's kernels take float types alone)
        kernel = "nll_loss_out_frame" if x.ndim == 2 else "nll_loss2d_forward_out_frame"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_tname(x.dtype)}\'')
    valid = tt != ignore_index
    bad = valid & ((tt < 0) | (tt >= C))
    if bad.any():
        raise IndexError(f"Target {int(tt[bad].reshape(-1)[0])} is out of bounds.")
    # PyTorch's kernels over the positions (ops/nn_ops.py): weights, ignored targets and
    # (N, C, d1, ...) inputs, the sums in its order, no (N, C) one-hot
    xp = _xp_of(tt)
    kept = None if bool(valid.all()) else valid
    safe = tt if kept is None else xp.where(kept, tt, 0)
    w = None if weight is None else weight._data.astype(x.dtype.np, copy=False)
    if reduction == "mean":
        if w is None:
            n = int(tt.size if kept is None else xp.count_nonzero(kept))  # (0: 0 / 0)
        else:
            n = K.nll_weight_total(xp, w[safe], kept)
    else:
        n = 1 if reduction == "sum" else None
    loss = K.nll_loss_index(x, _index(x, safe), n, w, kept)
    return loss.squeeze(0) if unb and reduction == "none" else loss


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """log_softmax over dim 1 then nll_loss; target holds class indices or probabilities."""
    logp = None
    if weight is None and label_smoothing == 0.0 and size_average is None and reduce is None \
            and (reduction == "mean" or reduction == "sum"):
        # the common case (a batch of logits, a class index each: bench W2), as valid as the
        # general path below would find it
        x, tt = input._data, target._data
        if x.ndim == 2 and tt.ndim == 1 and tt.shape[0] == x.shape[0] and tt.shape[0] and \
                target.dtype is D.int64 and input.dtype.is_floating_point:
            logp = _log_softmax(input, 1)
            loss = _nll_index(logp, target, x.shape[1], reduction, ignore_index)
            if loss is not None:
                return loss
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(
            f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 0 if input.ndim == 1 else 1
    if logp is None:
        logp = log_softmax(input, class_dim)
    C = input.shape[class_dim]
    if target.dtype.is_floating_point:
        if tuple(target.shape) != tuple(input.shape):
            # torch takes the class-index path: nll_loss_nd's shape checks, then the dtype's
            if input.ndim > 1 and target.ndim and input.shape[0] != target.shape[0]:
                raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                                 f"batch_size ({target.shape[0]}).")
            if input.ndim <= 2 and target.ndim > 1:
                raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
            want = [input.shape[0]] + list(input.shape[2:])
            if input.ndim > 2 and list(target.shape) != want:
                raise RuntimeError(f"Expected target size {want}, got {list(target.shape)}")
            raise RuntimeError(
                f"expected target dtype to be Long or Byte, but got {_tname(target.dtype)}")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / C
        prod = logp * target
        if weight is not None:
            shape = [1] * input.ndim
            shape[class_dim] = C
            prod = prod * weight.reshape(shape)
        loss = -prod.sum(class_dim)
        if reduction == "mean":
            return loss.sum() / (input.numel() // C) if input.numel() else loss.sum() / 0.0
        return _reduce(loss, reduction)
    nll = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    if label_smoothing <= 0:
        return nll
    shape = [1] * input.ndim
    shape[class_dim] = C
    smooth = -(logp * weight.reshape(shape)).sum(class_dim) if weight is not None else \
        -logp.sum(class_dim)
    keep = target._data != ignore_index
    smooth = where(_make(keep), smooth, 0.0)   # (masked_fill_: 0 where ignored, even from inf)
    if reduction == "mean":
        # PyTorch divides by tensors: the kept targets' weights summed (torch.sum's order), or
        # their count
        if weight is not None:
            denom = _make(weight._data[target._data[keep]]).sum()
        else:
            denom = _make(_xp_of(keep).count_nonzero(keep))
        ret = smooth.sum() / denom
    elif reduction == "sum":
        ret = smooth.sum()
    else:
        ret = smooth
    return (1 - label_smoothing) * nll + ret * (label_smoothing / C)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}) is deprecated. Please ensure they have the same size.")
    if target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {_tname(target.dtype)} but expected "
                           f"{_tname(input.dtype)}")
    a = input._data
    if a.size and ((a < 0).any() or (a > 1).any()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    return K.binary_cross_entropy(input, target, weight, _red_code(reduction))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    return K.binary_cross_entropy_with_logits(input, target, weight, pos_weight,
                                              _red_code(reduction))


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """PyTorch's: torch.kl_div (ATen's formulas: a negative target's term is nan), then
    'batchmean' divides the sum by the batch size; 'mean' warns that it will."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.", stacklevel=2)
    if reduction == "batchmean":
        loss = _aten().kl_div(input, target, 2, log_target=log_target)
        return loss / input.shape[0] if input.ndim else loss
    return _aten().kl_div(input, target, _red_code(reduction), log_target=log_target)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _aten().poisson_nll_loss(input, target, log_input, full, eps, _red_code(reduction))


def _aten():
    """ndgrad's torch-level ATen losses (imported on first use: that module imports this one)."""
    from . import _aten
    return _aten


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """The Gaussian negative log likelihood, as torch.nn.functional's: a var of input's shape
    less its last dim (one variance per row: shape (N,) for an (N, D) input) gains that dim; a
    var that differs from input in one dim only (the heteroscedastic case) broadcasts. var is
    clamped to eps without autograd (its gradient passes the clamp unchanged)."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * input.new_ones(input.shape)
    elif (var < 0).any():
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim and sum(
                y for x, y in zip(input.shape, var.shape) if x != y) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _aten().margin_ranking_loss(input1, input2, target, margin, _red_code(reduction))


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _aten().hinge_embedding_loss(input, target, margin, _red_code(reduction))


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _aten().cosine_embedding_loss(input1, input2, target, margin, _red_code(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _aten().triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                       _red_code(reduction))


# ---------------------------------------------------------------- attention

def _sdpa_checks(query, key, value, attn_mask, is_causal, enable_gqa):
    if not (query.dtype is key.dtype is value.dtype):
        raise RuntimeError(
            f"Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_aten_name(query.dtype)} key.dtype: {_aten_name(key.dtype)} and value.dtype: "
            f"{_aten_name(value.dtype)} instead.")
    if attn_mask is not None and attn_mask.dtype is not D.bool and \
            attn_mask.dtype is not query.dtype:
        raise RuntimeError(
            f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            f"attn_mask.dtype: {_aten_name(attn_mask.dtype)} and  query.dtype: "
            f"{_aten_name(query.dtype)} instead.")
    if enable_gqa and query.ndim >= 3 and key.ndim >= 3 and value.ndim >= 3:
        hq, hk, hv = query._data.shape[-3], key._data.shape[-3], value._data.shape[-3]
        if hk == 0 or hv == 0 or hq % hk or hq % hv:
            raise RuntimeError("Number of heads in key and value must divide the number of "
                               "heads in ")


def _aten_name(dt):
    return {"float32": "float", "float64": "double", "float16": "c10::Half",
            "int64": "long int", "int32": "int", "bool": "bool"}.get(dt.name, dt.name)


def _flash_cpu(query, key, value, attn_mask, dropout_p, enable_gqa):
    """Whether PyTorch's CPU dispatch takes the fused flash kernel (sdp_utils_cpp's
    use_flash_attention_cpp), its checks in its order: the backend enabled, no dropout, 4-d
    inputs, one batch size and number of heads (or whole groups of query heads, with
    enable_gqa), the mask's shape (2-d, or 4-d over batch and heads, its last two dims the
    lengths or 1; reading its size(-2) raises PyTorch's IndexError for fewer dims), one head
    size, nonzero lengths, and unit strides along the head dim. Otherwise the math path."""
    qs, ks, vs = query._data.shape, key._data.shape, value._data.shape  # (tuples: no Size)
    if not _sdp_enabled[_SDPBackend.FLASH_ATTENTION] or dropout_p != 0.0 or \
            not len(qs) == len(ks) == len(vs) == 4:
        return False
    if not (qs[0] == ks[0] == vs[0] and ks[1] == vs[1] and
            (ks[1] == qs[1] or enable_gqa and ks[1] and qs[1] % ks[1] == 0)):
        return False
    if attn_mask is not None:
        if attn_mask._requires_grad:
            return False
        ms = attn_mask._data.shape
        if len(ms) < 2:
            raise IndexError("Dimension specified as -2 but tensor has no dimensions"
                             if not ms else "Dimension out of range (expected to be in range "
                             "of [-1, 0], but got -2)")
        if ms[-2] not in (qs[2], 1) or ms[-1] not in (ks[2], 1) or len(ms) not in (2, 4) or (
                len(ms) == 4 and not (ms[0] in (1, qs[0]) and ms[1] in (1, qs[1]))):
            return False
    if not qs[3] == ks[3] == vs[3] or not qs[2] or not ks[2]:
        return False
    return all(t._data.strides[-1] == t._data.itemsize for t in (query, key, value))


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(Q K^T * scale + mask) V. As PyTorch on CPU: where its dispatch takes the fused
    kernel (_flash_cpu: 4-d query, key and value of one head size without dropout, ...), that
    kernel (ops/nn_ops.py: sdpa_fused, one node with its own backward); the rest (dropout, 3-d
    inputs, a value head size of its own, a mask that requires grad or of another shape, empty
    sequences) the composite math path. A row with no allowed key gives zeros."""
    if getattr(query, "is_nested", False):   # jagged nested tensors: attention per sequence
        from ..nested._internal.sdpa import jagged_scaled_dot_product_attention
        return jagged_scaled_dot_product_attention(query, key, value, attn_mask, dropout_p,
                                                   is_causal, scale, enable_gqa)
    _sdpa_checks(query, key, value, attn_mask, is_causal, enable_gqa)
    scale = 1.0 / math.sqrt(query._data.shape[-1]) if scale is None else scale
    if attn_mask is not None and attn_mask.dtype is D.bool:
        attn_mask = _make(_xp(attn_mask).where(attn_mask._data, 0.0, -_np.inf).astype(
            query.dtype.np))  # (PyTorch's conversion: True takes part)
    if _flash_cpu(query, key, value, attn_mask, dropout_p, enable_gqa):
        # (a mask and is_causal together: both apply, as PyTorch's fused kernel does)
        return K.sdpa_fused(query, key, value, bool(is_causal), attn_mask, scale)
    if not _sdp_enabled[_SDPBackend.MATH]:
        raise RuntimeError("No available kernel.  Aborting execution.")
    if is_causal and attn_mask is not None:  # (PyTorch's math path)
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    if enable_gqa and query.ndim >= 3 and key.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        key = key.repeat_interleave(query.shape[-3] // key.shape[-3], -3)
        value = value.repeat_interleave(query.shape[-3] // value.shape[-3], -3)
    L, S = query.shape[-2], key.shape[-2]
    scores = matmul(query, key.transpose(-2, -1)) * scale
    if is_causal:
        xp = _xp(scores)
        scores = scores + _const(scores, xp.triu(xp.full((L, S), -_np.inf,
                                                         dtype=scores._data.dtype), 1))
    if attn_mask is not None:   # (PyTorch's math path adds it in place)
        shape = tuple(_broadcast_shapes(scores._data.shape, attn_mask._data.shape))
        if shape != scores._data.shape:
            raise RuntimeError(f"output with shape {list(scores._data.shape)} doesn't match "
                               f"the broadcast shape {list(shape)}")
        scores = scores + attn_mask
    dead = (scores == -_np.inf).all(-1, keepdim=True)  # (PyTorch's _safe_softmax: zeros there)
    if dead._data.any():
        attn = where(dead, 0.0, softmax(where(dead, 0.0, scores), -1))
    else:
        attn = softmax(scores, -1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return matmul(attn, value)


def _cat(tensors, dim=0):
    from ..ops.shape import cat
    return cat(tensors, dim)


def _additive_mask(mask, dtype, name):
    """PyTorch's canonical attention mask: booleans (True = not allowed) become 0/-inf, float
    masks are added as they are."""
    if mask is None:
        return None
    if mask.dtype is D.bool:
        return _make(_xp(mask).where(mask._data, -_np.inf, 0.0).astype(dtype.np))
    if not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight,
                                 in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p,
                                 out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """torch.nn.functional.multi_head_attention_forward: inputs (L, N, E) or unbatched (L, E)."""
    unbatched = query.ndim == 2
    if unbatched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    L, N, E = query.shape
    S = key.shape[0]
    if E != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {E}")
    hd = E // num_heads
    if hd * num_heads != E:
        raise AssertionError(f"embed_dim {E} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {tuple(key.shape[:2])} do not "
                                 f"match value's {tuple(value.shape[:2])}")
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
            "method `generate_square_subsequent_mask` to create this mask.")
    key_padding_mask = _additive_mask(key_padding_mask, query.dtype, "key_padding_mask")
    attn_mask = _additive_mask(attn_mask, query.dtype, "attn_mask")
    if key_padding_mask is not None:
        is_causal = False   # PyTorch: the causal hint then gives way to the explicit masks
    if use_separate_proj_weight:
        wq, wk, wv = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        wq, wk, wv = in_proj_weight[:E], in_proj_weight[E:2 * E], in_proj_weight[2 * E:]
    bq = bk = bv = None
    if in_proj_bias is not None:
        bq, bk, bv = in_proj_bias[:E], in_proj_bias[E:2 * E], in_proj_bias[2 * E:]
    q, k, v = linear(query, wq, bq), linear(key, wk, bk), linear(value, wv, bv)
    if attn_mask is not None and attn_mask.ndim == 2:
        if tuple(attn_mask.shape) != (L, S):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should "
                               f"be {(L, S)}.")
        attn_mask = attn_mask.unsqueeze(0)
    elif attn_mask is not None and tuple(attn_mask.shape) != (N * num_heads, L, S):
        raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                           f"{(N * num_heads, L, S)}.")
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key." if static_k is not None
                                 else "bias cannot be added to static value.")
        k = _cat([k, bias_k.repeat(1, N, 1)])
        v = _cat([v, bias_v.repeat(1, N, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    q = q.reshape(L, N * num_heads, hd).transpose(0, 1)
    k = k.reshape(k.shape[0], N * num_heads, hd).transpose(0, 1) if static_k is None else static_k
    v = v.reshape(v.shape[0], N * num_heads, hd).transpose(0, 1) if static_v is None else static_v
    if add_zero_attn:
        k = _cat([k, k.new_zeros((N * num_heads, 1, hd))], dim=1)
        v = _cat([v, v.new_zeros((N * num_heads, 1, hd))], dim=1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    S = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (N, S):
            raise AssertionError(f"expecting key_padding_mask shape of {(N, S)}, but got "
                                 f"{key_padding_mask.shape}")
        kpm = key_padding_mask.reshape(N, 1, 1, S).expand(N, num_heads, 1, S)
        kpm = kpm.reshape(N * num_heads, 1, S)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    if is_causal and not need_weights:   # the hint replaces the mask, as in PyTorch's SDPA path
        xp = _xp(q)
        attn_mask = _make(xp.where(xp.triu(xp.ones((L, S), dtype=bool), 1), -_np.inf, 0.0)
                          .astype(q.dtype.np))
    scores = (q * (1.0 / math.sqrt(hd))).matmul(k.transpose(1, 2))
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = softmax(scores, -1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    out = weights.matmul(v).transpose(0, 1).reshape(L * N, E)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(L, N, E)
    if unbatched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.reshape(N, num_heads, L, S)
    if average_attn_weights:
        weights = weights.mean(1)
    if unbatched:
        weights = weights.squeeze(0)
    return out, weights


# ---------------------------------------------------------------- more functional (PyTorch parity)
# Mostly composed of ndgrad's differentiable ops (gather, index_add, scatter, where, max(dim),
# logsumexp, ...), so gradients and double backward come from the ops themselves. A few are defop
# entries where PyTorch has a kernel of that name (prelu, hardshrink, softshrink, rrelu, im2col,
# col2im, pixel_unshuffle), so grad_fn names match; their formulas are ndgrad ops too.

def relu_(input):
    return input.relu_()


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, True)


def elu_(input, alpha=1.0):
    return elu(input, alpha, True)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, True)


def selu_(input):
    return selu(input, True)


def celu_(input, alpha=1.0):
    return celu(input, alpha, True)


_threshold = threshold   # (PyTorch's F.threshold is its function _threshold; OpInfo calls that)


def threshold_(input, threshold, value):
    from ..ops.activation import threshold as _threshold_op
    return _threshold_op(input, threshold, value, True)


def prelu(input, weight):
    """max(0, x) + weight * min(0, x), weight per channel (dim 1) or a single slope."""
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    n = weight.numel()
    if n != 1:
        channels = input.shape[1] if input.ndim >= 2 else 1
        if input.ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        if n != channels:
            raise RuntimeError(
                f"Mismatch of parameter numbers and input channel size. Found parameter numbers "
                f"= {n} and channel size = {channels}.")
        if input.ndim >= 2:
            weight = weight.reshape([-1] + [1] * (input.ndim - 2))
    elif weight.ndim:
        weight = weight.reshape(())
    return _prelu(input, weight)


# The backwards of prelu, hardshrink/softshrink and rrelu are ops that depend on `self` with a
# zero derivative there (PyTorch's ..._backward ops), so second derivatives in the input are
# zero tensors, as PyTorch's.
_prelu_input_backward = defop(
    "prelu_kernel_backward",
    lambda xp, grad_output, self, weight: _A._select(xp, self > 0, grad_output,
                                                      grad_output * weight),
    promote="binary", node_name="PreluKernelBackwardBackward0",
    grad_output=lambda grad, self, weight: _prelu_input_backward(grad, self, weight),
    self=lambda grad: _zeros_like(grad),
    weight=lambda grad, self, grad_output: where(self > 0, 0.0, grad * grad_output))

_prelu = defop(
    "prelu_kernel",
    lambda xp, self, weight: _A._select(xp, self > 0, self, self * weight).astype(
        self.dtype, copy=False),
    self=lambda grad, self, weight: _prelu_input_backward(grad, self, weight),
    weight=lambda grad, self: where(self > 0, 0.0, grad * self))


def _shrink_cut(xp, self, lambd):
    return (self >= -lambd) & (self <= lambd)


_hardshrink_backward = _A._cut_backward("hardshrink_backward", "HardshrinkBackwardBackward0",
                                        _shrink_cut)
_softshrink_backward = _A._cut_backward("softshrink_backward", "SoftshrinkBackwardBackward0",
                                        _shrink_cut)
_rrelu_backward = defop(
    "rrelu_with_noise_backward",
    lambda xp, grad_output, self, noise: grad_output * noise, promote="binary",
    node_name="RreluWithNoiseBackwardBackward0",
    grad_output=lambda grad, self, noise: _rrelu_backward(grad, self, noise),
    self=lambda grad: _zeros_like(grad), noise=None)


_hardshrink = defop(
    "hardshrink",
    lambda xp, self, lambd: _A._select(xp, _shrink_cut(xp, self, lambd), 0, self).astype(
        self.dtype, copy=False),  # (PyTorch's test: NaN stays NaN)
    self=lambda grad, self, lambd: _hardshrink_backward(grad, self, lambd))


def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0."""
    return _hardshrink(input, lambd)


_softshrink = defop(
    "softshrink",
    lambda xp, self, lambd: _A._select(xp, _shrink_cut(xp, self, lambd), 0, _A._select(
        xp, self > lambd, self - lambd, self + lambd)).astype(self.dtype, copy=False),  # (NaN)
    self=lambda grad, self, lambd: _softshrink_backward(grad, self, lambd))


def softshrink(input, lambd=0.5):
    """x - lambd where x > lambd, x + lambd where x < -lambd, else 0."""
    if lambd < 0:
        top = float(_np.finfo(input.dtype.np).max) if input.is_floating_point() else 0.0
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype "
                           f"{_tname(input.dtype)}, but found {lambd:g}")
    return _softshrink(input, lambd)


_rrelu = defop("rrelu_with_noise",
               lambda xp, self, noise: (self * noise).astype(self.dtype, copy=False),
               self=lambda grad, self, noise: _rrelu_backward(grad, self, noise), noise=None)
_rrelu_result = defop("rrelu_with_noise_",
                      lambda xp, self, noise: (self * noise).astype(self.dtype, copy=False),
                      node_name="RreluWithNoiseBackward1",
                      self=lambda grad, self, noise: _rrelu_backward(grad, self, noise),
                      noise=None)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: in training each element <= 0 gets a slope drawn uniformly from
    [lower, upper] (default generator); in eval every slope is (lower + upper) / 2."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if training:   # PyTorch's draws: one uniform per element <= 0, in order
        from .._creation import _rng
        from ..random import _mt19937 as _R
        from .._backend import to_numpy
        noise = _make(_xp(input).asarray(_R.rrelu_noise(
            _rng(None), to_numpy(input._data), lower, upper)))  # host: the draw, moved once
    else:
        slopes = (lower + upper) / 2
        noise = _make(_xp(input).where(input._data > 0, 1.0, slopes).astype(input.dtype.np))
    if inplace:
        from ..ops._inplace import inplace as _inplace_apply
        return _inplace_apply(input, _rrelu_result, noise)
    return _rrelu(input, noise)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, True)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """Samples from the Gumbel-softmax distribution; with hard=True a one-hot sample whose
    gradient is the soft sample's (straight-through)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.")
    from ..ops._argcheck import check_tensor
    from .._creation import empty_like
    from ..autograd.grad_mode import no_grad
    check_tensor("empty_like", logits)
    with no_grad():   # as PyTorch: -log of Exp(1) draws made in a tensor like the logits
        gumbels = -(empty_like(logits, memory_format=None).exponential_().log())
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = logits.new_zeros(logits.shape).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


# ---- sliding blocks: im2col (unfold) and col2im (fold), each the derivative of the other

def _block_count(size, k, d, p, s):
    return tuple((n + 2 * pp - dd * (kk - 1) - 1) // ss + 1
                 for n, kk, dd, pp, ss in zip(size, k, d, p, s))


def _im2col_fwd(xp, self, size, k, d, p, s, blocks):
    *lead, H, W = self.shape
    x = xp.pad(self, [(0, 0)] * len(lead) + [(p[0], p[0]), (p[1], p[1])])
    (bh, bw), (sh, sw) = blocks, s
    out = xp.empty(tuple(lead) + (k[0], k[1], bh, bw), dtype=self.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            r, c = i * d[0], j * d[1]
            out[..., i, j, :, :] = x[..., r:r + sh * (bh - 1) + 1:sh, c:c + sw * (bw - 1) + 1:sw]
    return out.reshape(*lead[:-1], lead[-1] * k[0] * k[1], bh * bw)


def _col2im_fwd(xp, self, size, k, d, p, s, blocks):
    *lead, CK, L = self.shape
    (bh, bw), (sh, sw) = blocks, s
    C = CK // (k[0] * k[1])
    cols = self.reshape(*lead, C, k[0], k[1], bh, bw)
    out = xp.zeros(tuple(lead) + (C, size[0] + 2 * p[0], size[1] + 2 * p[1]), dtype=self.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            r, c = i * d[0], j * d[1]
            out[..., r:r + sh * (bh - 1) + 1:sh, c:c + sw * (bw - 1) + 1:sw] += cols[..., i, j, :, :]
    return out[..., p[0]:p[0] + size[0], p[1]:p[1] + size[1]]


_im2col = defop("im2col", _im2col_fwd, jvp="linear", node_name="Im2ColBackward0",
                self=lambda grad, size, k, d, p, s, blocks: _col2im(grad, size, k, d, p, s,
                                                                    blocks))
_col2im = defop("col2im", _col2im_fwd, jvp="linear", node_name="Col2ImBackward0",
                self=lambda grad, size, k, d, p, s, blocks: _im2col(grad, size, k, d, p, s,
                                                                    blocks))


def _unfold(input, kernel_size, dilation, padding, stride):
    k, d, p, s = _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    if input.ndim not in (3, 4):
        if input.ndim < 3:
            n = max(input.ndim, 1)
            raise IndexError(f"Dimension out of range (expected to be in range of [-{n}, {n - 1}], "
                             f"but got {input.ndim})")
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
            f"dimensions for input, but got: {list(input.shape)}")
    size = tuple(input.shape[-2:])
    blocks = _block_count(size, k, d, p, s)
    if blocks[0] < 1 or blocks[1] < 1:
        raise RuntimeError(
            f"Given input with spatial size ({size[0]}, {size[1]}), kernel_size=({k[0]}, {k[1]}), "
            f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), calculated shape of the array "
            f"of sliding blocks as ({blocks[0]}, {blocks[1]}), but its components must be at "
            "least one.")
    return _im2col(input, size, k, d, p, s, blocks)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sums sliding local blocks (N, C*kh*kw, L) back into an (N, C, H, W) tensor (col2im)."""
    out_hw, k = _pair(output_size), _pair(kernel_size)
    d, p, s = _pair(dilation), _pair(padding), _pair(stride)
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported "
            f"(got {input.ndim}D)")
    CK, L = input.shape[-2:]
    K = k[0] * k[1]
    if CK % K:
        raise RuntimeError(
            f"Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={CK} and kernel_size=({k[0]}, {k[1]}).")
    blocks = _block_count(out_hw, k, d, p, s)
    if blocks[0] * blocks[1] != L:
        raise RuntimeError(
            f"Given output_size=({out_hw[0]}, {out_hw[1]}), kernel_size=({k[0]}, {k[1]}), "
            f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), "
            f"expected size of input's dimension 2 to match the calculated number of sliding "
            f"blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
            f"input.size(2)={L}.")
    return _col2im(input, tuple(out_hw), k, d, p, s, blocks)


def pixel_unshuffle(input, downscale_factor):
    """Inverse of pixel_shuffle: (*, C, H*r, W*r) -> (*, C*r*r, H, W)."""
    r = downscale_factor
    if input.ndim < 3:
        raise RuntimeError(
            f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
            f"{input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *b, C, H, W = input.shape
    if H % r:
        raise RuntimeError(
            f"pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)"
            f"={H} is not divisible by {r}")
    if W % r:
        raise RuntimeError(
            f"pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)"
            f"={W} is not divisible by {r}")
    return _pixel_unshuffle(input, r)


def _pixel_unshuffle_fwd(xp, self, downscale_factor):
    r = downscale_factor
    *b, C, H, W = self.shape
    n = len(b)
    x = self.reshape(*b, C, H // r, r, W // r, r).transpose(*range(n), n, n + 2, n + 4, n + 1,
                                                            n + 3)
    return x.reshape(*b, C * r * r, H // r, W // r)


_pixel_unshuffle = defop(
    "pixel_unshuffle", _pixel_unshuffle_fwd, jvp="linear",
    self=lambda grad, downscale_factor: pixel_shuffle(grad, downscale_factor))


# ---- spatial transformer

def _grid_check(input, grid):
    """grid_sampler's batch and coordinate checks (2-d and 3-d: a coordinate per spatial
    dimension of the input), with PyTorch's messages."""
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(
            f"grid_sampler(): expected grid and input to have same batch size, but got input "
            f"with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {input.ndim - 2} in last dimension, but "
            f"got grid with sizes {list(grid.shape)}")


def _grid_align_corners(align_corners):
    """affine_grid's and grid_sample's default, with PyTorch's warning."""
    if align_corners is None:
        from ..autograd.graph import warn_at_user
        warn_at_user(
            "Default grid_sample and affine_grid behavior has changed to align_corners=False "
            "since 1.3.0. Please specify align_corners=True if the old behavior is desired. See "
            "the documentation of grid_sample for details.")
        return False
    return align_corners


def affine_grid(theta, size, align_corners=None):
    """Sampling grid (N, H, W, 2) of the 2-D affine maps theta (N, 2, 3)."""
    align_corners = _grid_align_corners(align_corners)
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    given, size = size, tuple(size)
    if len(size) == 4:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(
                f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                f"{given}. Got {_size_str(theta.shape)}.")
        spatial = size[2:]
    elif len(size) == 5:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(
                f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                f"{given}. Got {_size_str(theta.shape)}.")
        spatial = size[2:]
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {given}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {given}")

    from .._creation import linspace
    np_dtype = theta._data.dtype
    xp = _xp(theta)

    def lin(n):
        # as PyTorch, in theta's dtype and order of operations: sampling points that fall on
        # pixel centres land on the same side of them, so grid_sample's one-sided gradient agrees
        if n <= 1:
            return xp.zeros(n, np_dtype)
        v = linspace(-1.0, 1.0, n, dtype=theta.dtype, device=theta.device)._data
        return v if align_corners else v * np_dtype.type(n - 1) / np_dtype.type(n)

    nd = len(spatial)
    base = xp.ones(spatial + (nd + 1,), np_dtype)
    for i, n in enumerate(reversed(spatial)):  # x runs over the last dim, then y, then z
        shape = [1] * nd
        shape[nd - 1 - i] = n
        base[..., i] = lin(n).reshape(shape)
    points = math.prod(spatial)
    grid = matmul(_make(base.reshape(1, points, nd + 1)), theta.transpose(1, 2))
    return grid.reshape(size[0], *spatial, nd)


def _size_str(shape):
    return "torch.Size([" + ", ".join(str(int(n)) for n in shape) + "])"


def _grid_unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low, twice_high):
    if twice_low == twice_high:
        return coord * 0
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    coord = _abs(coord - low)
    flips = (coord / span).floor().detach()
    extra = coord - flips * span
    even = (flips.remainder(2) == 0)
    return where(even, extra + low, span - extra + low)


def _grid_source(coord, size, padding_mode, align_corners):
    coord = _grid_unnormalize(coord, size, align_corners)
    if padding_mode == "border":
        coord = clamp(coord, 0, size - 1)
    elif padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        coord = clamp(coord, 0, size - 1)
    return coord


def _cubic_weights(t, A=-0.75):
    """The four cubic-convolution weights of taps -1, 0, 1, 2 at fraction t (PyTorch's)."""
    def near(v):  # |v| <= 1
        return ((A + 2) * v - (A + 3)) * v * v + 1

    def far(v):  # 1 < |v| < 2
        return ((A * v - 5 * A) * v + 8 * A) * v - 4 * A

    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _tap_coord(c, size, padding_mode, align_corners):
    """Integer tap positions (an array) under the padding mode; zeros: as they are."""
    xp = _xp_of(c)
    if padding_mode == "border":
        c = xp.clip(c, 0, size - 1)
    elif padding_mode == "reflection":
        low, high = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        if low == high:
            c = xp.zeros_like(c)
        else:
            span = (high - low) / 2
            d = xp.abs(c - low / 2)
            flips = xp.floor(d / span)
            extra = d - flips * span
            c = xp.where(flips % 2 == 0, extra + low / 2, span - extra + low / 2)
        c = xp.clip(c, 0, size - 1)
    return c.astype(_np.int64)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Samples input (N, C, H, W) at the normalized grid locations (N, Ho, Wo, 2), or (N, C, D,
    H, W) at (N, Do, Ho, Wo, 3)."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(
            f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
            f"'reflection', but got: '{padding_mode}'")
    align_corners = _grid_align_corners(align_corners)
    if input.ndim != 4 or grid.ndim != 4:  # (5-D, and the dimension errors: ATen's 3-d kernel)
        return _aten().grid_sampler_3d(
            input, grid, ("bilinear", "nearest", "bicubic").index(mode),
            ("zeros", "border", "reflection").index(padding_mode), align_corners)
    _grid_check(input, grid)
    N, C, H, W = input.shape
    _, Ho, Wo, _ = grid.shape
    if mode == "bicubic":  # (padding applies to each tap, not to the sampling point)
        x = _grid_unnormalize(grid[..., 0], W, align_corners).reshape(N, 1, Ho * Wo)
        y = _grid_unnormalize(grid[..., 1], H, align_corners).reshape(N, 1, Ho * Wo)
    else:
        x = _grid_source(grid[..., 0], W, padding_mode, align_corners).reshape(N, 1, Ho * Wo)
        y = _grid_source(grid[..., 1], H, padding_mode, align_corners).reshape(N, 1, Ho * Wo)
    flat = input.reshape(N, C, H * W)
    xp = _xp(x)

    def tap(ix, iy):  # values at integer positions (arrays), 0 outside the image
        valid = (ix >= 0) & (ix <= W - 1) & (iy >= 0) & (iy <= H - 1)
        pos = xp.where(valid, iy * W + ix, 0).astype(_np.int64)
        vals = flat.gather(2, _make(xp.broadcast_to(pos, (N, C, Ho * Wo)).copy()))
        return vals * _const(input, valid)

    if mode == "nearest":
        ix = xp.round(x._data).astype(_np.int64)
        iy = xp.round(y._data).astype(_np.int64)
        out = tap(ix, iy)
    elif mode == "bicubic":
        x0, y0 = xp.floor(x._data), xp.floor(y._data)
        wx = _cubic_weights(x - _const(input, x0))
        wy = _cubic_weights(y - _const(input, y0))
        out = 0
        for i in range(4):
            iy = _tap_coord(y0 + (i - 1), H, padding_mode, align_corners)
            row = 0
            for j in range(4):
                ix = _tap_coord(x0 + (j - 1), W, padding_mode, align_corners)
                row = row + tap(ix, iy) * wx[j]
            out = out + row * wy[i]
    else:
        x0 = xp.floor(x._data)
        y0 = xp.floor(y._data)
        wx1 = x - _const(input, x0)
        wy1 = y - _const(input, y0)
        wx0, wy0 = 1 - wx1, 1 - wy1
        x0, y0 = x0.astype(_np.int64), y0.astype(_np.int64)
        out = (tap(x0, y0) * (wx0 * wy0) + tap(x0 + 1, y0) * (wx1 * wy0)
               + tap(x0, y0 + 1) * (wx0 * wy1) + tap(x0 + 1, y0 + 1) * (wx1 * wy1))
    return out.reshape(N, C, Ho, Wo)


# ---- embedding bags

def _type_repr(obj):
    from .._tensor import Tensor
    return "<class 'torch.Tensor'>" if isinstance(obj, Tensor) else str(type(obj))


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """Sums, means or maxes the embeddings of each bag (rows of a 2-D input, or the segments of
    a 1-D input that start at `offsets`); padding_idx entries are left out of their bag."""
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)}) is not "
            f"None, then it must have the same shape as the input ({tuple(input.shape)})")
    if weight.ndim != 2:
        raise ValueError(
            f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{_type_repr(offsets)}")
        B, Lb = input.shape
        starts = _np.arange(B, dtype=_np.int64) * Lb  # host: the bags' layout
        ends = starts + Lb
        flat_in = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        off = _to_numpy(offsets._data).astype(_np.int64)  # host: the bags' bounds set the layout
        if off.size and off[0] != 0:
            raise RuntimeError(
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                f"from position 0. However, got {int(off[0])}\n[ torch.{_tname(offsets.dtype)}"
                "Tensor{} ]")
        if off.size and off[-1] > input.shape[0]:
            raise RuntimeError(
                f"offsets[-1] can not be greater than input's length ({input.shape[0]}), but got "
                f"offsets[-1] of {int(off[-1])}")
        if include_last_offset:
            # the last bag runs to the end of input, as in PyTorch's CPU kernels for max,
            # padding_idx and the backward (its sum and mean without padding_idx stop at the
            # last offset yet divide the mean by the count to the end: entries past the last
            # offset are an edge its kernels do not agree on)
            ends = _np.append(off[1:-1], input.shape[0])  # host: layout
            starts, ends = off[:-1], ends[:max(len(off) - 1, 0)]
        else:
            starts, ends = off, _np.append(off[1:], input.shape[0])  # host: layout
        flat_in = input
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if scale_grad_by_freq:
        if mode == "max":
            raise ValueError("max mode does not support scaling the gradient by the frequency")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub.")
    from ..ops.shape import cat
    from ..ops.reduction import running_sum
    B = len(starts)
    ids = flat_in._data
    xp = _xp_of(ids)
    D_ = weight.shape[1]

    def zeros(n):    # (empty bags: 0, in the graph of weight with a zero gradient)
        return where(_make(xp.zeros((1, 1), bool)), weight[:1], 0.0).expand(n, D_)
    if ids.size == 0 or B == 0:
        return zeros(B)
    # each bag's kept positions in order (padding_idx entries left out), bags grouped by their
    # kept count: a group of n bags of length L is an (n, L) block of positions, so no array
    # is padded to the longest bag
    lengths = _np.maximum(ends - starts, 0)  # host: the bags' layout
    first = _np.repeat(starts - _np.cumsum(lengths) + lengths, lengths)  # host: layout
    at = _np.arange(int(lengths.sum()), dtype=_np.int64) + first  # host: positions, bag order
    bag = _np.repeat(_np.arange(B), lengths)  # host: layout
    if padding_idx is not None:
        if padding_idx < 0:
            padding_idx += weight.shape[0]
        keep = _to_numpy(ids)[at] != padding_idx  # host: which entries count (layout)
        at, bag = at[keep], bag[keep]
    count = _np.bincount(bag, minlength=B)  # host: layout
    begin = _np.cumsum(count) - count  # host: layout
    rows = embedding(flat_in, weight, None, max_norm, norm_type, scale_grad_by_freq)
    weights = per_sample_weights
    half = rows.dtype in (D.float16, D.bfloat16)   # (PyTorch's kernels add half rows in float32)
    if half:
        rows = rows.float()
        weights = None if weights is None else weights.float()
    parts, order = [], []
    for bags, block in K.runs_by_length(begin, count):
        L = block.shape[1]
        pos = _make(xp.asarray(at[block]))  # host: layout
        seg = rows[pos]                                          # (n, L, D)
        if mode == "max":
            part = seg.max(1)[0]
        elif weights is None:   # (PyTorch's kernels add a bag's rows in order, from zero)
            part = running_sum(seg, 1)
        else:                   # (each row times its weight, fused into the running sum)
            w = weights[pos]
            part = seg[:, 0] * w[:, 0].unsqueeze(-1) + 0.0
            for j in range(1, L):
                part = part.addcmul(w[:, j].unsqueeze(-1), seg[:, j])
        parts.append(part)
        order.append(bags)
    empty = _np.flatnonzero(count == 0)  # host: layout
    if empty.size:
        parts.append(zeros(int(empty.size)))
        order.append(empty)
    out = cat(parts, 0) if len(parts) > 1 else parts[0]
    if half:
        out = out.to(weight.dtype)
    where_ = _np.empty(B, _np.int64)  # host: layout
    where_[_np.concatenate(order)] = _np.arange(B)  # host: layout
    out = out[_make(xp.asarray(where_))]
    if mode == "mean":
        out = out / _const(weight, xp.asarray(_np.maximum(count, 1)[:, None]))  # host: layout
    return out


# ---- losses

def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """sum over (target j, non-target i) of max(0, 1 - (x[j] - x[i])) / C; a target row lists
    class indices up to its first -1."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _red_code(reduction)
    if not ((input.ndim == 2 and input.shape[1]) or (input.ndim == 1 and input.shape[0])
            or input.ndim == 0):
        raise RuntimeError(
            f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            f"{list(input.shape)}")
    if input.ndim > 2 or tuple(input.shape) != tuple(target.shape):
        if input.ndim <= 1 and target.ndim <= 1 and input.numel() == target.numel():
            pass
        else:
            raise RuntimeError(
                f"inconsistent target size: {list(target.shape)} for input of size: "
                f"{list(input.shape)}")
    unb = input.ndim < 2
    x = input.reshape(1, -1) if unb else input
    t = target._data.reshape(x.shape)
    N, C = x.shape
    if C and ((t < -1) | (t >= C)).any():
        raise RuntimeError("argument #2 'target' is out of range")
    xp = _xp_of(t)
    listed = xp.cumprod(t >= 0, axis=1).astype(bool)  # the labels before the first -1
    cnt = xp.zeros((N, C))
    _ufunc_at(xp, xp.add, cnt, (xp.nonzero(listed)[0], t[listed]), 1)
    is_t = cnt > 0
    # pair (j, i): weight cnt[n, j] * (i not a target)
    pairs = cnt[:, :, None] * (~is_t)[:, None, :]
    hinge = _relu(1 - x.unsqueeze(2) + x.unsqueeze(1))  # [n, j, i]
    loss = (hinge * _const(x, pairs)).sum((1, 2)) / C
    if unb:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _red_code(reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    C = input.shape[class_dim]
    loss = loss.sum(dim=class_dim) / C
    return _reduce(loss, reduction)


def is_grad_enabled():
    from ..autograd.grad_mode import is_grad_enabled as enabled
    return enabled()


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """sum over i != y of max(0, margin - x[y] + x[i])**p (times weight[y]) / C."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _red_code(reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    if weight is not None and weight.requires_grad and is_grad_enabled():
        raise RuntimeError("The function 'multi_margin_loss' is not differentiable with respect "
                           "to argument 'weight'. This input cannot have requires_grad True.")
    unb = input.ndim < 2
    if not ((input.ndim == 2 and input.shape[1]) or (input.ndim == 1 and input.shape[0])
            or input.ndim == 0):
        raise RuntimeError(
            f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            f"{list(input.shape)}")
    x = input.reshape(1, -1) if unb else input
    N, C = x.shape
    t = target._data.reshape(-1).astype(_np.int64)
    if t.shape[0] != N or target.ndim > 1:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{N}], but got "
            f"{list(target.shape)}. Input has shape {list(input.shape)}.")
    if weight is not None and weight.numel() != C:
        raise RuntimeError(f"inconsistent weight size, expected {C} but got "
                           f"{list(weight.shape)}")
    if target.dtype is not D.int64:
        from ..ops._inplace import _type_name
        raise RuntimeError(f"expected scalar type Long but found {_type_name(target.dtype)}")
    if ((t < 0) | (t >= C)).any():
        raise RuntimeError("target out of range")
    tt = _make(t.reshape(N, 1))
    xy = x.gather(1, tt)
    h = _relu(margin - xy + x)
    if p == 2:
        h = h * h
    if weight is not None:
        h = h * weight[tt]
    xp = _xp_of(t)
    off = xp.ones((N, C))
    off[xp.arange(N), t] = 0
    loss = (h * _const(x, off)).sum(1) / C
    if unb:
        loss = loss.reshape(()) if target.ndim == 0 else loss
    return _reduce(loss, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    _red_code(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim == n_dim):
        raise RuntimeError(
            f"The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D "
            f"inputs")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_swap = dist(positive, negative)
        from ..ops import minimum
        d_neg = minimum(d_neg, d_swap)
    loss = clamp(d_pos - d_neg + margin, min=0.0)
    return _reduce(loss, reduction)


# ---- pooling extras

def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def _unpool_size(input, kernel_size, stride, padding, output_size, nd):
    k = _pair(kernel_size, nd)
    s = _pair(stride, nd) if stride is not None else k
    p = _pair(padding, nd)
    default = [(input.shape[-nd + i] - 1) * s[i] + k[i] - 2 * p[i] for i in range(nd)]
    if output_size is None:
        return default
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    if len(output_size) != nd:
        raise ValueError(
            f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has "
            f"a length of '{len(output_size)}'")
    for i in range(nd):
        lo, hi = default[i] - s[i], default[i] + s[i]
        if not lo < output_size[i] < hi:
            raise ValueError(
                f'invalid output_size "{output_size}" (dim {i} must be between {lo} and {hi})')
    for i in range(nd):
        if output_size[i] < 0:
            raise ValueError(
                "max_unpooling: output_size must contain non-negative spatial dimensions, but "
                f"got output_size[{i}]={output_size[i]}")
    return tuple(output_size)


def _max_unpool(input, indices, size):
    lead = tuple(input.shape[:-len(size)])
    plane = math.prod(size)
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(
            f"Expected shape of indices to be same as that of the input tensor "
            f"({_size_str(input.shape)}) but got indices tensor with shape: "
            f"{_size_str(indices.shape)}")
    x = input.reshape(*lead, -1)
    idx = indices.reshape(*lead, -1)
    bad = idx._data[(idx._data < 0) | (idx._data >= plane)]
    if bad.size:
        raise RuntimeError(
            f"Found an invalid max index: {int(bad[0])} (output volumes are of size "
            f"{'x'.join(str(n) for n in size)})")
    out = input.new_zeros(lead + (plane,)).scatter(x.ndim - 1, idx, x)
    return out.reshape(*lead, *size)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Puts each value back at its max_pool1d index; everything else is zero."""
    size = _unpool_size(input, kernel_size, stride, padding, output_size, 1)
    return _max_unpool(input, indices, tuple(size))


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Puts each value back at its max_pool2d index (flat in its H*W plane); zero elsewhere."""
    size = _unpool_size(input, kernel_size, stride, padding, output_size, 2)
    return _max_unpool(input, indices, tuple(size))


def _adaptive_windows(size, out):
    """(out, width) positions of each adaptive window, padded with its own first position, and
    the mask of real entries (host tables, from the shape)."""
    starts = (_np.arange(out) * size) // out  # host: shape table
    ends = -(-((_np.arange(out) + 1) * size) // out)  # host: shape table
    width = int((ends - starts).max()) if out else 1
    pos = starts[:, None] + _np.arange(width)[None, :]  # host: shape table
    valid = pos < ends[:, None]
    return _np.where(valid, pos, starts[:, None]), valid  # host: shape table


def _adaptive_max(input, sizes, outs):
    """Adaptive max over the trailing len(sizes) dims; returns values and flat indices."""
    nd = len(sizes)
    lead = tuple(input.shape[:-nd])
    # flat position of every (output cell, window entry): outer sums over the dims
    flatpos = _np.zeros((), dtype=_np.int64)  # host: shape table
    for i in range(nd):
        pos, _ = _adaptive_windows(sizes[i], outs[i])
        stride = math.prod(sizes[i + 1:])
        shape = [1] * (2 * nd)
        shape[i], shape[nd + i] = pos.shape
        flatpos = flatpos + (pos * stride).reshape(shape)
    flatpos = flatpos.reshape(math.prod(outs), -1)
    P, Wd = flatpos.shape
    x = input.reshape(*lead, -1)
    xp = _xp(x)
    flatpos = xp.asarray(flatpos)
    gidx = xp.broadcast_to(flatpos.reshape(-1), lead + (P * Wd,)).copy()
    win = x.gather(x.ndim - 1, _make(gidx)).reshape(*lead, P, Wd)
    vals, arg = win.max(-1)
    idx = xp.take_along_axis(xp.broadcast_to(flatpos, lead + (P, Wd)),
                             arg._data[..., None], -1)[..., 0]
    return vals.reshape(*lead, *outs), _make(idx.reshape(lead + tuple(outs)).astype(_np.int64))


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument "
            "#1 'self' (while checking arguments for adaptive_max_pool1d)")
    _one_int("adaptive_max_pool1d", output_size)
    o = _pair(output_size, 1)[0]
    if o < 0:       # (ATen's 2-d kernel reports it, on the input with a unit dim added)
        _no_negative_output(input.unsqueeze(-2), (1, o))
    return _adaptive_max(input, (input.shape[-1],), (o,))


def adaptive_max_pool1d(input, output_size, return_indices=False):
    out = adaptive_max_pool1d_with_indices(input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    output_size = _adaptive_max2d_checked(input, output_size)
    H, W = input.shape[-2:]
    oh, ow = _pair(output_size)
    oh = H if oh is None else oh
    ow = W if ow is None else ow
    return _adaptive_max(input, (H, W), (oh, ow))


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x**p) ** (1/p)."""
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    k = _pair(kernel_size, 1)[0]
    return (out.sign() * relu(out.abs())).mul(k).pow(1.0 / norm_type)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """input / (k + alpha * mean of x**2 over `size` neighbouring channels) ** beta."""
    dim = input.ndim
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality{' ' * 26}input (got {dim} "
                         "dimensions)")
    if input.numel() == 0:
        return input
    N, C = input.shape[:2]
    sq = (input * input).reshape(N, C, -1)
    front, back = size // 2, (size - 1) // 2
    parts = [sq.new_zeros((N, front, sq.shape[2]))] if front else []
    parts.append(sq)
    if back:
        parts.append(sq.new_zeros((N, back, sq.shape[2])))
    from ..ops import cat
    padded = cat(parts, 1) if len(parts) > 1 else sq
    div = padded[:, 0:C]
    for i in range(1, size):
        div = div + padded[:, i:i + C]
    # (integer inputs: the mean of the squares divides in integers, as PyTorch's avg_pool)
    div = (div // size if input.dtype._category == 1 else div / size).reshape(input.shape)
    return input / div.mul(alpha).add(k).pow(beta)


def _lengths(x):
    if hasattr(x, "_data"):
        return [int(v) for v in _to_numpy(x._data).reshape(-1)]  # host: the lengths set the loop
    return [int(v) for v in (x if isinstance(x, (list, tuple)) else [x])]


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """Connectionist Temporal Classification loss: -log of the total probability of all the
    alignments of each target, by the forward (alpha) recursion in log space, written with
    ndgrad ops so that autograd gives the gradient (and the gradient's gradient)."""
    _red_code(reduction)
    unb = log_probs.ndim == 2
    lp = log_probs.unsqueeze(1) if unb else log_probs  # (T, N, C)
    T, N, C = lp.shape
    in_len, tgt_len = _lengths(input_lengths), _lengths(target_lengths)
    if len(in_len) != N:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tgt_len) != N:
        raise RuntimeError("target_lengths must be of size batch_size")
    tg = _to_numpy(targets._data).astype(_np.int64)  # host: the targets set the layout
    if tg.ndim == 2:
        rows = [tg[n, :tgt_len[n]] for n in range(N)]
    else:
        tg = tg.reshape(-1)
        starts = _np.concatenate([[0], _np.cumsum(tgt_len)[:-1]])  # host: target layout
        starts = starts.astype(_np.int64)
        rows = [tg[s:s + n] for s, n in zip(starts, tgt_len)]
    for n in range(N):
        if in_len[n] > T:
            raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got "
                               f"value {in_len[n]} (while checking arguments for ctc_loss_allocate_outputs)")
    S = max([len(r) for r in rows] + [0])
    Lx = 2 * S + 1
    ext = _np.full((N, Lx), blank, dtype=_np.int64)  # host: blank, l1, blank, l2, ..., blank
    skip = _np.zeros((N, Lx), dtype=bool)  # host: may come from s - 2
    for n, r in enumerate(rows):
        ext[n, 1:2 * len(r):2] = r
        skip[n, 3:2 * len(r):2] = r[1:] != r[:-1]
    NEG = -1e30  # a finite "log 0", so all-impossible states give no NaN gradients
    emit = lp.gather(2, _index(lp, _np.broadcast_to(ext, (T, N, Lx))))  # host: (T, N, Lx)
    neg = _const(lp, _np.full((N, 1), NEG))  # host: target layout
    neg2 = _const(lp, _np.full((N, 2), NEG))  # host: target layout
    skip_mask = _const(lp, _np.where(skip, 0.0, NEG))  # host: target layout
    init = _np.full((N, Lx), NEG)  # host: target layout
    init[:, :2] = 0.0
    alpha = emit[0] + _const(lp, init)
    alphas = [alpha]
    from ..ops import cat, stack, logsumexp
    for t in range(1, T):
        prev1 = cat([neg, alpha[:, :-1]], 1)
        prev2 = cat([neg2, alpha[:, :-2]], 1) + skip_mask if Lx > 2 else None
        terms = [alpha, prev1] + ([prev2] if prev2 is not None else [])
        alpha = logsumexp(stack(terms, 0), 0) + emit[t]
        alphas.append(alpha)
    every = stack(alphas, 0)  # (T, N, Lx)
    t_idx = _np.maximum(_np.asarray(in_len) - 1, 0)  # host: target layout
    last = _np.array([2 * len(r) for r in rows])  # host: target layout
    end = _np.stack([last, _np.maximum(last - 1, 0)], 1)  # host: final blank, final label
    final = every[_index(lp, t_idx[:, None]), _index(lp, _np.arange(N)[:, None]),  # host: rows
                  _index(lp, end)]  # (N, 2)
    if (last == 0).any():  # an empty target has only the all-blank path
        final = final + _const(lp, _np.where(last[:, None] == 0, [0.0, NEG], 0.0))  # host: ends
    loss = -logsumexp(final, 1)
    impossible = _make(loss._data > 1e29)
    # PyTorch's CTC gradient w.r.t. log_probs adds exp(log_probs) over each sequence's frames
    # (it folds in log_softmax's backward: the two agree on the logits' gradient). A term of
    # value 0 with that gradient makes log_probs.grad identical to PyTorch's.
    frames = _np.arange(T)[:, None] < _np.asarray(in_len)[None, :]  # host: target layout
    frames = _const(lp, frames[..., None])
    probs = exp(lp)
    loss = loss + ((probs - probs.detach()) * frames).sum((0, 2))
    if zero_infinity:
        loss = where(impossible, 0.0, loss)
    else:
        loss = where(impossible, float("inf"), loss)
    if unb:
        loss = loss.squeeze(0)
    if reduction == "mean":
        per = _np.maximum(_np.asarray(tgt_len), 1).reshape(loss.shape)  # host: target lengths
        return (loss / _const(lp, per)).mean()
    return _reduce(loss, reduction)


# 3-d/fractional pooling extras, alpha dropouts, channel_shuffle, conv_tbc, pdist, ...
from ._functional_extra import *  # noqa: E402,F401,F403

__all__ = [n for n in dir() if not n.startswith("_") and n not in (
    "math", "warnings", "Tensor", "Size", "D", "K", "defop", "no_grad", "where", "clamp", "exp",
    "log", "matmul", "sqrt")]

from ..ops._argcheck import wrap_namespace as _wrap_namespace  # noqa: E402
# PyTorch's argument errors; its Python functions report a missing argument first, its C++ ones
# (these) a wrong one, left to right
_C_FUNCTIONS = frozenset(
    "adaptive_avg_pool1d avg_pool1d avg_pool2d avg_pool3d bilinear celu_ channel_shuffle conv1d "
    "conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d conv_transpose3d cosine_similarity "
    "elu_ gelu hardshrink hardtanh_ leaky_relu_ linear logsigmoid native_channel_shuffle one_hot "
    "pairwise_distance pdist pixel_shuffle pixel_unshuffle prelu relu_ rrelu_ "
    "scaled_dot_product_attention selu_ softplus softshrink threshold_".split())
# PyTorch's Python functions that read an attribute of their input first: an AttributeError
_FIRST_ATTR = dict.fromkeys(
    "softmax log_softmax softmin glu interpolate upsample upsample_bilinear upsample_nearest "
    "dropout1d dropout2d dropout3d".split(), "dim")
_FIRST_ATTR.update(instance_norm="size", normalize="norm", sigmoid="sigmoid", tanh="tanh",
                   tanhshrink="tanh", softsign="abs")
_wrap_namespace(globals(), __all__, lambda name: name not in _C_FUNCTIONS, _FIRST_ATTR)
