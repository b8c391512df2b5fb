"""The rest of torch.nn.functional: 3-d adaptive/LP/fractional pooling and unpooling, 3-d and
feature alpha dropout, channel shuffle, conv_tbc, pdist, the deprecated upsample_* wrappers and
the torch-function helpers. Composed of ndgrad ops (the 3-d convolution and max pooling kernels
are the N-d ones of ops/nn_ops.py), so everything is differentiable to any order. Imported into
nn.functional, whose helpers it uses.
"""
import math
import warnings

import numpy as _np

from ..ops._argcheck import check_tensor as _check_tensor
from .._backend import xp_of
from .._tensor import _make
from ..ops._registry import defop
from . import functional as _F
from .functional import (_pair, _const, _index, _check_p, _assign,
                         _adaptive_max, _unpool_size, _max_unpool, avg_pool3d, max_pool3d, relu,
                         matmul)

__all__ = ["adaptive_avg_pool3d", "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices",
           "lp_pool3d", "max_pool3d_with_indices", "max_unpool3d", "fractional_max_pool2d",
           "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
           "fractional_max_pool3d_with_indices", "dropout3d", "feature_alpha_dropout",
           "alpha_dropout", "channel_shuffle", "native_channel_shuffle", "conv_tbc", "pdist",
           "upsample_nearest", "upsample_bilinear", "has_torch_function",
           "has_torch_function_unary", "has_torch_function_variadic", "handle_torch_function",
           "boolean_dispatch", "assert_int_or_pair", "linear_cross_entropy", "grouped_mm",
           "GRID_SAMPLE_INTERPOLATION_MODES", "GRID_SAMPLE_PADDING_MODES",
           "reproducibility_notes", "sparse_support_notes", "tf32_notes"]

# grid_sample's mode and padding_mode names and their kernel codes, as PyTorch's
GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}

# the notes PyTorch's docstrings are formatted with (same keys)
reproducibility_notes = {
    "forward_reproducibility_note": "The forward computation is deterministic in ndgrad "
                                    "(NumPy on the CPU).",
    "backward_reproducibility_note": "The backward computation is deterministic in ndgrad "
                                     "(NumPy on the CPU).",
    "cudnn_reproducibility_note": "ndgrad has no cuDNN: results do not depend on "
                                  "torch.backends.cudnn settings.",
}
sparse_support_notes = {
    "sparse_beta_warning": "Sparse layouts are not supported by ndgrad.",
}
tf32_notes = {
    "tf32_note": "ndgrad computes float32 in float32: no TensorFloat32 rounding.",
}


def _sizes(output_size, input, nd):
    """output_size as nd ints, None entries taking the input's size."""
    outs = _pair(output_size, nd)
    if len(outs) != nd:
        raise RuntimeError(f"adaptive_max_pool{nd}d(): internal error: output_size.size() "
                           f"must be {nd}")
    return tuple(input.shape[-nd + i] if o is None else int(o) for i, o in enumerate(outs))


# ---------------------------------------------------------------- 3-d pooling

def adaptive_avg_pool3d(input, output_size):
    """Adaptive average pooling over (D, H, W), each window summed as PyTorch's kernel."""
    given = (output_size,) * 3 if isinstance(output_size, int) else tuple(output_size)
    if given == (1, 1, 1):   # ATen's shortcut, before its checks (as in 2-d)
        return input.mean((-1, -2, -3), keepdim=True)
    from .functional import _list_with_default, _adaptive_avg_check
    output_size = _list_with_default(output_size, input)
    _adaptive_avg_check("adaptive_avg_pool3d", _pair(output_size, 3))
    if input.ndim not in (4, 5):
        raise RuntimeError(f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got "
                           f"{list(input.shape)}")
    outs = _sizes(output_size, input, 3)
    from ..ops.adaptive_pool import adaptive_avg_pool3d as pool   # (PyTorch's window sums)
    return pool(input, tuple(outs))


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    from .functional import _list_with_default
    output_size = _list_with_default(output_size, input)
    if input.ndim not in (4, 5):
        raise RuntimeError(
            f"adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: {list(input.shape)}")
    from .functional import _no_negative_output
    outs = _sizes(output_size, input, 3)
    _no_negative_output(input, outs)
    return _adaptive_max(input, tuple(input.shape[-3:]), outs)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    out = adaptive_max_pool3d_with_indices(input, output_size)
    return out if return_indices else out[0]


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x**p) ** (1/p); p = +-inf is a max (min) of |x|."""
    kd, kh, kw = _pair(kernel_size, 3)
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return max_pool3d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -max_pool3d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * relu(out.abs())).mul(kd * kh * kw).pow(1.0 / norm_type)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Puts each value back at its max_pool3d index (flat in its D*H*W volume); zero
    elsewhere."""
    size = _unpool_size(input, kernel_size, stride, padding, output_size, 3)
    return _max_unpool(input, indices, tuple(size))


# ---------------------------------------------------------------- fractional max pooling

def _intervals(sample, n_in, n_out, pool, dtype):
    """PyTorch's pseudo-random window starts along one dim, computed in the input's dtype:
    int((i + u) * alpha) - int(u * alpha), the last one n_in - pool."""
    xp = xp_of(sample)
    seq = xp.zeros(sample.shape + (n_out,), dtype=_np.int64)
    if n_out > 1:
        alpha = dtype.type(n_in - pool) / dtype.type(n_out - 1)
        u = sample.astype(dtype)
        i = xp.arange(n_out - 1, dtype=dtype)
        seq[..., :-1] = ((i + u[..., None]) * alpha).astype(_np.int64) - \
            (u * alpha).astype(_np.int64)[..., None]
    if n_out > 0:
        seq[..., -1] = n_in - pool
    return seq


def _fractional(name, nd, input, kernel_size, output_size, output_ratio, samples):
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if nd == 2 and len(output_ratio) > nd:   # (PyTorch's 2-d form takes len() of it)
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple "
                             "of Ints.")
        ratio = _pair(output_ratio, nd)
        output_size = [int(input.shape[-nd + i] * ratio[i]) for i in range(nd)]
    if samples is None:
        from .._creation import rand
        n_batch = 1 if input.ndim == nd + 1 else input.shape[0]
        samples = rand(n_batch, input.shape[-nd - 1], nd, dtype=input.dtype)
    pool = _pair(kernel_size, nd)
    outs = _pair(output_size, nd)
    if len(pool) != nd:
        raise RuntimeError(f"{name}: kernel_size must either be a single Int or tuple of Ints")
    if len(outs) != nd:
        raise RuntimeError(f"{name}: output_size must either be a single Int or tuple of Ints")
    if input.ndim not in (nd + 1, nd + 2) or 0 in input.shape[1:]:
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    unb = input.ndim == nd + 1
    x = input.unsqueeze(0) if unb else input
    N, C = x.shape[:2]
    sizes = tuple(x.shape[2:])
    from ..autograd.grad_mode import is_grad_enabled
    if samples.requires_grad and is_grad_enabled():
        raise RuntimeError(f"The function '{name}' is not differentiable with respect to "
                           "argument 'random_samples'. This input cannot have requires_grad "
                           "True.")
    if samples.dtype is not input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random samples to have 3 dimensions, got "
                           f"{samples.ndim}")
    if samples.shape[0] < N:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != C:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got "
                           f"{samples.shape[2]}.")
    words = ("height", "width") if nd == 2 else ("time", "height", "width")
    where = "fractional_max_pool2d()" if nd == 2 else "fractional_max_pool3d_out()"
    for w, o, k, n in zip(words, outs, pool, sizes):
        if o + k - 1 > n or (nd == 3 and o + k - 1 == n):   # 3-d: strictly inside
            raise RuntimeError(f"{where}: pool {w} {k} too large relative to input {w} {n}")
    u = samples._data[:N]
    # the samples' order per plane: 2-d (width, height), 3-d (time, height, width)
    order = (1, 0) if nd == 2 else (0, 1, 2)
    xp = xp_of(u)
    plane_strides = [math.prod(sizes[i + 1:]) for i in range(nd)]
    flat = xp.zeros((N, C) + (1,) * (2 * nd), dtype=_np.int64)
    for i in range(nd):
        starts = _intervals(u[..., order[i]], sizes[i], outs[i], pool[i], input.dtype.np)
        pos = starts[..., :, None] + xp.arange(pool[i])                # (N, C, o, k)
        shape = [N, C] + [1] * (2 * nd)
        shape[2 + i], shape[2 + nd + i] = outs[i], pool[i]
        flat = flat + (pos * plane_strides[i]).reshape(shape)
    P, Kn = math.prod(outs), math.prod(pool)
    flat = flat.reshape(N, C, P, Kn)
    xv = x._data.reshape(N, C, math.prod(x._data.shape[2:]))     # (no -1: N may be 0)
    win = xp.take_along_axis(xv, flat.reshape(N, C, P * Kn), -1).reshape(N, C, P, Kn)
    nan = win != win
    # the first maximum of each window, or its last NaN
    arg = xp.where(nan.any(-1), Kn - 1 - xp.argmax(nan[..., ::-1], -1),
                   xp.argmax(xp.where(nan, -_np.inf, win), -1) if Kn else 0)
    idx = xp.take_along_axis(flat, arg[..., None], -1)[..., 0]          # (N, C, P)
    vals = x.reshape(N, C, math.prod(x.shape[2:])).gather(2, _make(idx)).reshape(N, C, *outs)
    idx = _make(idx.reshape((N, C) + tuple(outs)))
    if unb:
        vals, idx = vals.squeeze(0), idx.squeeze(0)
    return vals, idx


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """Max over pseudo-randomly placed kh x kw windows (Graham, Fractional Max-Pooling)."""
    return _fractional("fractional_max_pool2d", 2, input, kernel_size, output_size,
                       output_ratio, _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    out = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio,
                                             True, _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """Max over pseudo-randomly placed kt x kh x kw windows."""
    return _fractional("fractional_max_pool3d", 3, input, kernel_size, output_size,
                       output_ratio, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    out = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio,
                                             True, _random_samples)
    return out if return_indices else out[0]


# ---------------------------------------------------------------- dropout

def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of a (N, C, D, H, W) or (C, D, H, W) input."""
    _check_p(p)
    if input.ndim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that dropout3d "
            "exists to provide channel-wise dropout on inputs with 3 spatial dimensions, "
            "a channel dimension, and an optional batch dimension (i.e. 4D or 5D inputs).",
            stacklevel=2)
    if input.ndim == 5:
        return _F._channel_dropout(input, p, training, inplace)
    return _F._unbatched_dropout(input, p, training, inplace)


_ALPHA = 1.7580993408473766  # -SELU's negative saturation value, scale * alpha


def _alpha_dropout(input, p, training, inplace, feature):
    """PyTorch's alpha dropout: dropped entries go to SELU's saturation value, then an affine
    map a * x + b keeps the mean and variance of a unit normal."""
    _check_p(p)
    if not training or p == 0 or input.numel() == 0:
        _check_tensor("feature_alpha_dropout" if feature else "alpha_dropout", input)
        return input
    if p == 1:
        out = input * _const(input, 0.0)
        return _assign(input, out) if inplace else out
    from .._creation import _rng
    from ..random import _mt19937 as _R
    if feature:
        if input.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        like = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    else:
        like = input._data
    # PyTorch's noise: bernoulli_(1 - p) of empty_like(input) (or of the feature noise)
    keep = _R.dropout_mask(_rng(None), like, p).astype(input.dtype.np)  # a host draw, moved
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    b = (keep - 1) * (_ALPHA * a) + _ALPHA * a * p
    out = input * _const(input, keep * a) + _const(input, b)
    return _assign(input, out) if inplace else out


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout for SELU networks: keeps the input's mean and variance."""
    return _alpha_dropout(input, p, training, inplace, False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels."""
    return _alpha_dropout(input, p, training, inplace, True)


# ---------------------------------------------------------------- shape and misc

def channel_shuffle(input, groups):
    """(N, g * k, *) -> (N, k * g, *): interleaves the channels of the g groups."""
    if input.ndim < 3:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    C = input.shape[1]
    if C % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {C} channels "
                           f"and {groups} groups.")
    N, rest = input.shape[0], tuple(input.shape[2:])
    return input.reshape(N, groups, C // groups, *rest).transpose(1, 2).reshape(N, C, *rest)


native_channel_shuffle = channel_shuffle


def conv_tbc(input, weight, bias, pad=0):
    """1-d convolution over a (time, batch, channel) input with a (width, in, out) weight."""
    if input.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    x = input.permute(1, 2, 0)                          # (B, C, T)
    w = weight.permute(2, 1, 0)                         # (O, C, K)
    return _F.conv1d(x, w, bias, 1, pad).permute(2, 0, 1)


def pdist(input, p=2):
    """The p-norm distance between each pair of rows i < j, as one vector (row-major)."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    i, j = _np.triu_indices(n, 1)  # host: the pairs, from the shape
    diff = input[_index(input, i)] - input[_index(input, j)]
    from ..linalg import vector_norm
    if p == float("inf"):  # every tied maximum gets the whole gradient, as PyTorch's
        a = diff.abs()
        m = a.amax(1, keepdim=True).detach()
        return m.squeeze(1) + ((a - m) * (a == m).to(a.dtype)).sum(1)
    out = vector_norm(diff, p, dim=1)
    if p == 0:  # a count: its gradient is zero, as PyTorch's
        out = out + (diff * 0).sum(1)
    return out


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: interpolate(..., mode='nearest')."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return _F.interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: interpolate(..., mode='bilinear', align_corners=True)."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return _F.interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def _lrn_windows(C, size):
    """The channel windows of the legacy CrossMapLRN2d kernel as 0/1 (C, C) matrices: the
    forward's running sum (which keeps channel 0 once added) and the backward's window."""
    pre = int((size - 1) / 2 + 1)
    fwd = _np.zeros((C, C))  # host: window tables from the shape
    for c in range(C):
        fwd[c, :min(C, c + pre)] = 1
        if c > pre:
            fwd[c, 1:c - pre + 1] = 0
    inv = int(size - (size - 1) / 2)
    j = _np.arange(C)  # host: window table
    bwd = ((j[None, :] >= j[:, None] - inv) & (j[None, :] <= j[:, None] + size - 1 - inv))
    return fwd, bwd.astype(_np.float64)


def _lrn_scale(xp, x, size, alpha, k):
    fwd, _ = _lrn_windows(x.shape[1], size)
    w = xp.asarray(fwd, dtype=x.dtype)
    return xp.einsum("cj,njhw->nchw", w, x * x) * (alpha / size) + k


def _lrn_fwd(xp, input, size, alpha, beta, k):
    return input * _lrn_scale(xp, input, size, alpha, k) ** -beta


def _lrn_grad(grad, input, size, alpha, beta, k):
    """PyTorch's hand-written backward (not the forward's exact derivative), in ndgrad ops."""
    fwd, bwd = _lrn_windows(input.shape[1], size)

    def over_channels(m, t):
        return matmul(t.movedim(1, -1), _const(input, m.T)).movedim(-1, 1)

    scale = over_channels(fwd, input * input) * (alpha / size) + k
    power = scale.pow(-beta)
    ratio = grad * (input * power) / scale
    return power * grad - (2 * alpha * beta / size) * input * over_channels(bwd, ratio)


_cross_map_lrn2d = defop("cross_map_lrn2d", _lrn_fwd, node_name="CrossMapLRN2dBackward",
                         input=_lrn_grad)


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0, options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...) (see
    nn/modules/linear_cross_entropy.py)."""
    from .modules.linear_cross_entropy import linear_cross_entropy as lce
    return lce(input, linear_weight, target, linear_bias=linear_bias, weight=weight,
               reduction=reduction, ignore_index=ignore_index, label_smoothing=label_smoothing,
               options=options)


def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    """Per-group matrix products (mixture-of-experts layers), as PyTorch's CPU kernel: 2-d x 3-d
    slices mat_a's rows by `offs` (group g uses mat_b[g]), 3-d x 2-d slices mat_b's columns,
    2-d x 2-d slices the contraction dim (one (M, N) result per group), 3-d x 3-d is a batched
    matmul. Rows or columns beyond offs[-1] are zero. Composed of slices and matmuls, so it is
    differentiable."""
    from .. import _dtype as D
    from ..ops import cat, stack
    if (mat_a.ndim == 2 or mat_b.ndim == 2) != (offs is not None):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if both "
                           "matrices are 3d")
    for name, m in (("mat_a", mat_a), ("mat_b", mat_b)):
        if m.dtype not in (D.float32, getattr(D, "bfloat16", D.float32), D.float16):
            from ..ops.linalg import _sname
            raise RuntimeError(f"Expected {name} to be Float32, BFloat16 or Float16 matrix, got "
                               f"{_sname(m.dtype)}")
    if offs is not None and offs.dtype is not D.int32:
        raise RuntimeError("Offsets have to be int32")
    if out_dtype is not None and out_dtype is not mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    if mat_a.shape[-1] != mat_b.shape[-2]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")
    if offs is None:
        return mat_a @ mat_b
    ends = [int(v) for v in offs._data.reshape(-1)]
    starts = [0] + ends[:-1]
    if mat_a.ndim == 2 and mat_b.ndim == 3:
        parts = [mat_a[s:e] @ mat_b[g] for g, (s, e) in enumerate(zip(starts, ends))]
        rest = mat_a.shape[0] - ends[-1]
        if rest > 0:
            parts.append(mat_a.new_zeros((rest, mat_b.shape[-1])))
        return cat(parts, 0)
    if mat_a.ndim == 3 and mat_b.ndim == 2:
        parts = [mat_a[g] @ mat_b[:, s:e] for g, (s, e) in enumerate(zip(starts, ends))]
        rest = mat_b.shape[1] - ends[-1]
        if rest > 0:
            parts.append(mat_a.new_zeros((mat_a.shape[1], rest)))
        return cat(parts, 1)
    return stack([mat_a[:, s:e] @ mat_b[s:e] for s, e in zip(starts, ends)], 0)


# ---------------------------------------------------------------- torch-function helpers
# ndgrad has no __torch_function__ overrides, so no argument ever carries one.

def has_torch_function(relevant_args):
    return False


def has_torch_function_unary(input):
    return False


def has_torch_function_variadic(*args):
    return False


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Calls public_api (only reached when an argument overrides __torch_function__, which
    ndgrad's tensors never do)."""
    return public_api(*args, **kwargs)


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name, func_name):
    """A function calling if_true or if_false on the value of one boolean argument."""
    def fn(*args, **kwargs):
        dispatch_flag = default
        if arg_name in kwargs:
            dispatch_flag = kwargs[arg_name]
        elif arg_index < len(args):
            dispatch_flag = args[arg_index]
        return if_true(*args, **kwargs) if dispatch_flag else if_false(*args, **kwargs)

    if if_true.__doc__ is None and if_false.__doc__ is not None:
        fn.__doc__ = if_false.__doc__
    else:
        fn.__doc__ = if_true.__doc__
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    return fn


def assert_int_or_pair(arg, arg_name, message):
    assert isinstance(arg, int) or len(arg) == 2, message.format(arg_name)
