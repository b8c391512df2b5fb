"""torch.nn.functional: stateless layers, activations and losses.

Fused kernels (convolution, linear, pooling with indices, log_softmax, nll_loss) live in
ops/nn_ops.py; everything else here is composed of ndgrad ops, so it is differentiable to any
order. Argument checks and error texts follow PyTorch.
"""
import math
import warnings

import numpy as _np

from .._tensor import _make, _wrap_dim
from .. import _dtype as D
from ..autograd.grad_mode import no_grad
from ..ops import nn_ops as K
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


def _const(like, array):
    """A constant tensor with `like`'s dtype."""
    return _make(_np.asarray(array, dtype=like.dtype.np))


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
    if weight.ndim == 2 and input.ndim >= 1 and input.shape[-1] != weight.shape[1]:
        rows = input.numel() // input.shape[-1] if input.ndim > 1 else 1
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} and "
            f"{weight.shape[1]}x{weight.shape[0]})")
    if input.dtype is not weight.dtype:
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got {_tname(input.dtype)} and "
            f"{_tname(weight.dtype)}")
    return K.linear(input, weight, bias)


def _tname(d):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
            "int32": "Int"}.get(d.name, d.name)


def bilinear(input1, input2, weight, bias=None):
    # y_k = x1 W_k x2 + b_k
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


def _conv(name, nd, input, weight, bias, stride, padding, dilation, groups):
    unbatched = _conv_prep(name, input, weight, nd)
    if unbatched:
        input = input.unsqueeze(0)
    stride, dilation = _pair(stride, nd), _pair(dilation, nd)
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
    out = K.conv2d(input, weight, bias, stride, pads, dilation, groups)
    if nd == 1:
        out = out.squeeze(2)
    return out.squeeze(0) if unbatched else out


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Applies a 2-D convolution over an input of shape (N, C, H, W) or (C, H, W)."""
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Applies a 1-D convolution over an input of shape (N, C, L) or (C, L)."""
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The transposed 2-D convolution (the gradient of conv2d with respect to its input)."""
    unbatched = _conv_prep("conv_transpose2d", input, weight, 2)
    if unbatched:
        input = input.unsqueeze(0)
    stride, padding, dilation = _pair(stride), _pair(padding), _pair(dilation)
    output_padding = _pair(output_padding)
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
    pads = tuple((p, p) for p in padding)
    out = K.conv_transpose2d(input, weight, stride, pads, dilation, groups, hw)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    unb = input.ndim == 2
    x = input.unsqueeze(0) if unb else input
    out = conv_transpose2d(x.unsqueeze(2), weight.unsqueeze(2), bias, (1,) + _pair(stride, 1),
                           (0,) + _pair(padding, 1), (0,) + _pair(output_padding, 1), groups,
                           (1,) + _pair(dilation, 1)).squeeze(2)
    return out.squeeze(0) if unb else out


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
    for pp, kk, dd in zip(p, k, d):
        if pp > (dd * (kk - 1) + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={pp}, "
                f"kernel_size={kk} and dilation={dd}")
    return k, s, p, d


def _check_pool_input(input, nd, name):
    if input.ndim not in (nd + 1, nd + 2) or input.numel() == 0:
        if nd == 2:
            raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
        raise RuntimeError(
            f"Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, "
            f"but got:{list(input.shape)}")
    return input.ndim == nd + 1


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2-D max pooling; with return_indices also the flat index of each max in its plane."""
    unb = _check_pool_input(input, 2, "max_pool2d")
    x = input.unsqueeze(0) if unb else input
    k, s, p, d = _pool_args("max_pool2d", x, kernel_size, stride, padding, dilation, 2)
    out_hw = tuple(_pool_out(n, kk, ss, pp, dd, ceil_mode)
                   for n, kk, ss, pp, dd in zip(x.shape[2:], k, s, p, d))
    pads = tuple((pp, max(pp, (o - 1) * ss + dd * (kk - 1) + 1 - n - pp))
                 for n, o, kk, ss, pp, dd in zip(x.shape[2:], out_hw, k, s, p, d))
    vals, idx = K.max_pool2d(x, k, s, pads, d, out_hw)
    if unb:
        vals, idx = vals.squeeze(0), idx.squeeze(0)
    return (vals, idx) if return_indices else vals


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    unb = _check_pool_input(input, 1, "max_pool1d")
    x = input.unsqueeze(0) if unb else input
    k, s, p, d = _pool_args("max_pool1d", x, kernel_size, stride, padding, dilation, 1)
    vals, idx = max_pool2d(x.unsqueeze(2), (1,) + k, (1,) + s, (0,) + p, (1,) + d, ceil_mode,
                           True)
    vals, idx = vals.squeeze(2), idx.squeeze(2)
    if unb:
        vals, idx = vals.squeeze(0), idx.squeeze(0)
    return (vals, idx) if return_indices else vals


def _avg_divisor(size, o, k, s, p, count_include_pad):
    """Per-output divisor along one axis (PyTorch's pooling window clipping rules)."""
    starts = _np.arange(o) * s - p
    ends = _np.minimum(starts + k, size + p)
    pool = ends - starts
    starts_c = _np.maximum(starts, 0)
    ends_c = _np.minimum(ends, size)
    return pool, ends_c - starts_c


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """2-D average pooling (a depthwise convolution with a ones kernel, then a divisor map)."""
    unb = _check_pool_input(input, 2, "avg_pool2d")
    x = input.unsqueeze(0) if unb else input
    k, s, p, _ = _pool_args("avg_pool2d", x, kernel_size, stride, padding, 1, 2)
    N, C, H, W = x.shape
    out_hw = tuple(_pool_out(n, kk, ss, pp, 1, ceil_mode)
                   for n, kk, ss, pp in zip((H, W), k, s, p))
    pads = tuple((pp, max(pp, (o - 1) * ss + kk - n - pp))
                 for n, o, kk, ss, pp in zip((H, W), out_hw, k, s, p))
    ones = _make(_np.ones((1, 1) + k, dtype=x.dtype.np))
    y = K.conv2d(x.reshape(N * C, 1, H, W), ones, None, s, pads, (1, 1), 1, out_hw)
    y = y.reshape(N, C, *out_hw)
    if divisor_override:
        div = _np.full(out_hw, float(divisor_override))
    else:
        (ph, ch), (pw, cw) = (_avg_divisor(n, o, kk, ss, pp, count_include_pad)
                              for n, o, kk, ss, pp in zip((H, W), out_hw, k, s, p))
        div = _np.outer(ph, pw) if count_include_pad else _np.outer(ch, cw)
    y = y / _const(y, div)
    return y.squeeze(0) if unb else y


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    unb = _check_pool_input(input, 1, "avg_pool1d")
    x = input.unsqueeze(0) if unb else input
    k, s, p, _ = _pool_args("avg_pool1d", x, kernel_size, stride, padding, 1, 1)
    y = avg_pool2d(x.unsqueeze(2), (1,) + k, (1,) + s, (0,) + p, ceil_mode,
                   count_include_pad).squeeze(2)
    return y.squeeze(0) if unb else y


def _adaptive_matrix(size, out, dtype):
    m = _np.zeros((out, size), dtype=dtype.np)
    for i in range(out):
        a = (i * size) // out
        b = -(-((i + 1) * size) // out)
        m[i, a:b] = 1.0 / (b - a)
    return m


def adaptive_avg_pool2d(input, output_size):
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{list(input.shape)}")
    H, W = input.shape[-2:]
    oh, ow = _pair(output_size)
    oh = H if oh is None else oh
    ow = W if ow is None else ow
    if oh and H % oh == 0 and ow and W % ow == 0 and input.ndim == 4:
        return avg_pool2d(input, (H // oh, W // ow))
    mh = _const(input, _adaptive_matrix(H, oh, input.dtype))
    mw = _const(input, _adaptive_matrix(W, ow, input.dtype))
    return matmul(matmul(mh, input), mw.t())


def adaptive_avg_pool1d(input, output_size):
    L = input.shape[-1]
    o = _pair(output_size, 1)[0]
    m = _const(input, _adaptive_matrix(L, o, input.dtype))
    return matmul(input, m.t())


def adaptive_max_pool2d(input, output_size, return_indices=False):
    H, W = input.shape[-2:]
    oh, ow = _pair(output_size)
    oh, ow = oh or H, ow or W
    if H % oh or W % ow:
        raise NotImplementedError("adaptive_max_pool2d: only output sizes that divide the input")
    return max_pool2d(input, (H // oh, W // ow), return_indices=return_indices)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    k = _pair(kernel_size)
    out = avg_pool2d(input.pow(norm_type), k, stride, 0, ceil_mode)
    return (out.sign() * relu(out.abs())).mul(k[0] * k[1]).pow(1.0 / norm_type)


# ---------------------------------------------------------------- normalization

def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalise over all dims but the channel dim (1); update running stats when training."""
    if training:
        n = input.numel() // input.shape[1]
        if n <= 1:
            raise ValueError("Expected more than 1 value per channel when training, got input "
                             f"size {input.shape}")
        out, mean, var = K.batch_norm(input, weight, bias, eps)
        if running_mean is not None:
            m = momentum
            for buf, stat in ((running_mean, mean._data), (running_var, var._data * n / (n - 1))):
                buf._data[...] = (1 - m) * buf._data + m * stat
                buf._vc[0] += 1
        return out
    if running_mean is None:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    shape = [1] * input.ndim
    shape[1] = input.shape[1]
    out = (input - running_mean.reshape(shape)) / sqrt(running_var.reshape(shape) + eps)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    N, C = input.shape[:2]
    out = batch_norm(input.reshape(1, N * C, *input.shape[2:]), None, None, None, None, True,
                     momentum, eps).reshape(input.shape)
    shape = [1, C] + [1] * (input.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    k = len(normalized_shape)
    if tuple(input.shape[input.ndim - k:]) != normalized_shape or k > input.ndim:
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(map(str, normalized_shape))}], but got input of size"
            f"{list(input.shape)}")
    dims = tuple(range(input.ndim - k, input.ndim))
    mean = input.mean(dims, keepdim=True)
    diff = input - mean
    var = (diff * diff).mean(dims, keepdim=True)
    out = diff / sqrt(var + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def rms_norm(input, normalized_shape, weight=None, eps=None):
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    dims = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    if eps is None:
        eps = D.finfo(input.dtype).eps
    out = input / sqrt((input * input).mean(dims, keepdim=True) + eps)
    return out if weight is None else out * weight


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    N, C = input.shape[:2]
    if C % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got input "
            f"of shape {input.shape} and num_groups={num_groups}")
    x = input.reshape(N, num_groups, -1)
    mean = x.mean(2, keepdim=True)
    diff = x - mean
    var = (diff * diff).mean(2, keepdim=True)
    out = (diff / sqrt(var + eps)).reshape(input.shape)
    shape = [1, C] + [1] * (input.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def local_response_norm(*args, **kwargs):
    raise NotImplementedError("local_response_norm is not implemented in ndgrad")


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    n = input.norm(p, dim, keepdim=True)
    return input / clamp(n, min=eps).expand_as(input)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    n1 = clamp(x1.norm(2, dim, keepdim=True), min=eps)
    n2 = clamp(x2.norm(2, dim, keepdim=True), min=eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
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
    from .._creation import _rng
    if p == 1:
        mask = _np.zeros(input.shape, dtype=input.dtype.np)
    else:
        keep = _rng(None).random(input.shape) >= p
        mask = keep.astype(input.dtype.np) / (1 - p)
    out = input * _make(mask)
    return _assign(input, out) if inplace else out


def _channel_dropout(input, p, training, inplace, nd):
    _check_p(p)
    if not training or p == 0:
        return input
    from .._creation import _rng
    batched = input.ndim == nd + 2
    shape = input.shape[:2] if batched else input.shape[:1]
    shape = tuple(shape) + (1,) * nd
    if p == 1:
        mask = _np.zeros(shape, dtype=input.dtype.np)
    else:
        mask = (_rng(None).random(shape) >= p).astype(input.dtype.np) / (1 - p)
    out = input * _make(mask)
    return _assign(input, out) if inplace else out


def dropout1d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout(input, p, training, inplace, 1)


def dropout2d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout(input, p, training, inplace, 2)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    if not training or p == 0:
        return input
    raise NotImplementedError("alpha_dropout is not implemented in ndgrad")


# ---------------------------------------------------------------- sparse

def _embedding_fwd(xp, weight, indices, padding_idx):
    return xp.take(weight, indices, axis=0)


def _embedding_grad(grad, weight_shape, indices, padding_idx):
    if padding_idx is not None:
        keep = _make((indices._data != padding_idx).astype(grad.dtype.np))
        grad = grad * keep.unsqueeze(-1)
    return K.index_add(grad, indices._data, 0, weight_shape[0])


_embedding = defop("embedding", _embedding_fwd, node_name="EmbeddingBackward0",
                   weight=_embedding_grad)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of `weight` picked by the integer tensor `input` (padding_idx rows get no gradient)."""
    if input.dtype not in (D.int64, D.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got torch.{_tname(input.dtype)}Tensor instead (while "
            "checking arguments for embedding)")
    n = weight.shape[0]
    if padding_idx is not None and padding_idx < 0:
        padding_idx += n
    idx = input._data
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise IndexError("index out of range in self")
    idx = _np.where(idx < 0, idx + n, idx) if idx.size and idx.min() < 0 else idx
    if max_norm is not None:
        with no_grad():
            rows = _np.unique(idx)
            w = weight._data[rows]
            norms = _np.linalg.norm(w, ord=norm_type, axis=1, keepdims=True)
            scale = _np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
            weight._data[rows] = w * scale
    return _embedding(weight, _make(idx), padding_idx)


# ---------------------------------------------------------------- padding and resampling

def _constant_pad_fwd(xp, self, pads, value):
    return xp.pad(self, pads, constant_values=value)


def _constant_pad_grad(grad, pads):
    return grad[tuple(slice(a, grad.shape[i] - b) for i, (a, b) in enumerate(pads))]


_constant_pad = defop("constant_pad_nd", _constant_pad_fwd, node_name="ConstantPadNdBackward0",
                      self=_constant_pad_grad)


def _pad_index(n, a, b, mode):
    i = _np.arange(-a, n + b)
    if mode == "replicate":
        return _np.clip(i, 0, n - 1)
    if mode == "circular":
        return i % n
    # reflect
    period = 2 * (n - 1)
    i = _np.abs(i) % period if period else _np.zeros_like(i)
    return _np.where(i >= n, period - i, i)


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
        if any(a < 0 or b < 0 for a, b in pairs):
            input = input[tuple(slice(max(-a, 0), input.shape[i] - max(-b, 0))
                                for i, (a, b) in enumerate(pairs))]
            pairs = [(max(a, 0), max(b, 0)) for a, b in pairs]
        return _constant_pad(input, tuple(pairs), 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    out = input
    for d in range(input.ndim - k, input.ndim):
        a, b = pairs[d]
        n = input.shape[d]
        if mode == "reflect" and (a >= n or b >= n):
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({a}, {b}) at dimension {d} of input "
                f"{list(input.shape)}")
        if a or b:
            out = K.take(out, _pad_index(n, a, b, mode), d)
    return out


def _nearest_index(n_in, n_out, scale, exact=False):
    s = (1.0 / scale) if scale else n_in / n_out
    src = (_np.arange(n_out) + 0.5) * s if exact else _np.arange(n_out) * s
    return _np.minimum(_np.floor(src).astype(_np.int64), n_in - 1)


def _linear_matrix(n_in, n_out, align_corners, scale, dtype):
    m = _np.zeros((n_out, n_in), dtype=_np.float64)
    j = _np.arange(n_out)
    if align_corners:
        src = j * ((n_in - 1) / (n_out - 1)) if n_out > 1 else _np.zeros(n_out)
    else:
        s = (1.0 / scale) if scale else n_in / n_out
        src = _np.maximum((j + 0.5) * s - 0.5, 0)
    i0 = _np.minimum(_np.floor(src).astype(_np.int64), n_in - 1)
    i1 = _np.minimum(i0 + 1, n_in - 1)
    lam = src - i0
    _np.add.at(m, (j, i0), 1 - lam)
    _np.add.at(m, (j, i1), lam)
    return m.astype(dtype.np)


def _cubic_matrix(n_in, n_out, align_corners, scale, dtype, A=-0.75):
    """Bicubic (Keys, A = -0.75) resampling along one axis, border indices clamped (torch)."""
    j = _np.arange(n_out)
    if align_corners:
        src = j * ((n_in - 1) / (n_out - 1)) if n_out > 1 else _np.zeros(n_out)
    else:
        s = (1.0 / scale) if scale else n_in / n_out
        src = (j + 0.5) * s - 0.5
    i0 = _np.floor(src).astype(_np.int64)
    t = src - i0

    def near(x):  # |x| <= 1
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
    m = _np.zeros((n_out, n_in))
    for k, w in zip((-1, 0, 1, 2), (far(t + 1), near(t), near(1 - t), far(2 - t))):
        _np.add.at(m, (j, _np.clip(i0 + k, 0, n_in - 1)), w)
    return m.astype(dtype.np)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial dims: nearest, linear, bilinear (separable, so two small matmuls)."""
    nd = input.ndim - 2
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if mode in ("nearest", "nearest-exact", "area") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    in_sizes = input.shape[2:]
    if size is not None:
        out_sizes = _pair(size, nd)
        scales = (None,) * nd
    else:
        sf = _pair(scale_factor, nd)
        out_sizes = tuple(int(math.floor(n * f)) for n, f in zip(in_sizes, sf))
        scales = (None,) * nd if recompute_scale_factor else sf
    out = input
    if mode in ("nearest", "nearest-exact"):
        for i in range(nd):
            idx = _nearest_index(in_sizes[i], out_sizes[i], scales[i], mode == "nearest-exact")
            out = K.take(out, idx, 2 + i)
        return out
    if mode == "area":
        return adaptive_avg_pool2d(input, out_sizes) if nd == 2 else \
            adaptive_avg_pool1d(input, out_sizes)
    if mode in ("linear", "bilinear", "trilinear", "bicubic"):
        ac = bool(align_corners)
        make = _cubic_matrix if mode == "bicubic" else _linear_matrix
        for i in range(nd):
            m = _const(input, make(in_sizes[i], out_sizes[i], ac, scales[i], input.dtype))
            out = matmul(out.transpose(2 + i, -1), m.t()).transpose(2 + i, -1)
        return out
    raise NotImplementedError(f"interpolate: mode {mode!r} is not implemented in ndgrad")


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
    N, C, H, W = input.shape
    k = _pair(kernel_size)
    eye = _np.eye(C * k[0] * k[1]).reshape(C * k[0] * k[1], C, *k)
    out = conv2d(input, _const(input, eye), None, stride, padding, dilation)
    return out.reshape(N, C * k[0] * k[1], -1)


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
    valid = tt != ignore_index
    bad = valid & ((tt < 0) | (tt >= C))
    if bad.any():
        raise IndexError(f"Target {int(tt[bad].reshape(-1)[0])} is out of bounds.")
    if weight is not None and tuple(weight.shape) != (C,):
        raise RuntimeError(
            f"weight tensor should be defined either for all {C} classes or no classes but got "
            f"weight tensor of shape: {list(weight.shape)}")
    safe = _np.where(valid, tt, 0)
    w = (weight._data[safe] if weight is not None else _np.ones(tt.shape)) * valid
    onehot = _np.moveaxis(safe[..., None] == _np.arange(C), -1, 1)
    coef = onehot * _np.expand_dims(w, 1)
    if reduction == "mean":
        with _np.errstate(invalid="ignore", divide="ignore"):  # all ignored: nan, as torch
            coef = coef / w.sum()
    coef = _const(x, coef)
    loss = K.nll_loss(x, coef, reduction != "none")
    if unb and reduction == "none":
        loss = loss.squeeze(0)
    return loss


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """log_softmax over dim 1 then nll_loss; target holds class indices or probabilities."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(
            f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 0 if input.ndim == 1 else 1
    logp = log_softmax(input, class_dim)
    C = input.shape[class_dim]
    if target.dtype.is_floating_point:
        if tuple(target.shape) != tuple(input.shape):
            raise RuntimeError(  # torch takes the class-index path, which checks the dtype
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
    smooth = smooth * _const(smooth, keep)
    if reduction == "mean":
        if weight is not None:
            denom = float(weight._data[target._data[keep]].sum())
        else:
            denom = float(keep.sum())
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
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if log_target:
        loss = exp(target) * (target - input)
    else:
        pos = target > 0
        safe = where(pos, target, _const(target, 1.0))
        loss = where(pos, target * (log(safe) - input), _const(input, 0.0) * input)
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.ndim else loss.sum()
    if reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.", stacklevel=2)
    return _reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = exp(input) - target * input if log_input else input - target * log(input + eps)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    var = clamp(var, min=eps)
    loss = 0.5 * (log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _reduce(_relu(-target * (input1 - input2) + margin), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = where(target == 1, input, _const(input, 0.0) * input) + \
        where(target == -1, _relu(margin - input), _const(input, 0.0) * input)
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    cos = cosine_similarity(input1, input2, 1, 1e-8)
    loss = where(target == 1, 1 - cos, _relu(cos - margin))
    return _reduce(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    dp = pairwise_distance(anchor, positive, p, eps)
    dn = pairwise_distance(anchor, negative, p, eps)
    return _reduce(_relu(dp - dn + margin), reduction)


# ---------------------------------------------------------------- attention

def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    L, S = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = matmul(query, key.transpose(-2, -1)) * scale
    if is_causal:
        mask = _np.tril(_np.ones((L, S), dtype=bool))
        scores = scores + _const(scores, _np.where(mask, 0.0, -_np.inf))
    if attn_mask is not None:
        if attn_mask.dtype is D.bool:
            scores = scores + _const(scores, _np.where(attn_mask._data, 0.0, -_np.inf))
        else:
            scores = scores + attn_mask
    attn = softmax(scores, -1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return matmul(attn, value)


def multi_head_attention_forward(*args, **kwargs):
    raise NotImplementedError("use nn.MultiheadAttention")


__all__ = [n for n in dir() if not n.startswith("_") and n not in (
    "math", "warnings", "Tensor", "Size", "D", "K", "defop", "no_grad", "where", "clamp", "exp",
    "log", "matmul", "sqrt")]
