"""torch-level names of PyTorch's nn ATen operations (losses, embedding_bag, native_* norms, grid sampling).

These are the ATen forms that `torch.X` exposes: reductions and modes are int enums, the norms
return their saved statistics, pooling returns (values, indices). Each is built on
nn.functional's implementation (or ndgrad's ops), so gradients flow to any order.
"""
import functools
import math

from .. import _dtype as D
from .._backend import xp_of
from .._tensor import Tensor, _make
from ..ops._argcheck import combination_error
from ..ops import _out
from ..autograd.grad_mode import no_grad, is_grad_enabled
from . import functional as F
from ..ops import nn_ops as K
from ..ops import where, sqrt, xlogy, minimum, broadcast_shapes, relu as _relu
# ATen's backward kernels of the activations (torch.ops.aten's, not torch's): the ops ndgrad's
# own backward formulas record
from ..ops.pointwise import threshold_backward, sigmoid_backward, tanh_backward  # noqa: F401
from ..ops.activation import gelu_backward as _gelu_backward, \
    hardtanh_backward as _hardtanh_backward, leaky_relu_backward as _leaky_relu_backward
from ..ops.shape import _diagonal_backward as diagonal_backward  # noqa: F401


def gelu_backward(grad_output, self, *, approximate="none"):
    return _gelu_backward(grad_output, self, approximate)


def hardtanh_backward(grad_output, self, min_val, max_val):
    return _hardtanh_backward(grad_output, self, (min_val, max_val))


def leaky_relu_backward(grad_output, self, negative_slope, self_is_result):
    # (self or the result: the same signs for a positive slope, which ATen requires there)
    return _leaky_relu_backward(grad_output, self, negative_slope)


def softshrink_backward(grad_output, self, lambd):
    return F._softshrink_backward(grad_output, self, lambd)


def hardshrink_backward(grad_out, self, lambd):
    return F._hardshrink_backward(grad_out, self, lambd)

__all__ = ["binary_cross_entropy_with_logits", "cosine_embedding_loss", "hinge_embedding_loss",
           "kl_div", "margin_ranking_loss", "poisson_nll_loss", "triplet_margin_loss",
           "ctc_loss", "embedding_bag", "max_pool1d_with_indices", "adaptive_max_pool1d",
           "native_batch_norm", "native_layer_norm", "native_group_norm", "native_dropout",
           "native_norm", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d",
           "affine_grid_generator", "convolution"]


# ---------------------------------------------------------------- argument helpers

def _int_arg(name, param, pos, value):
    """PyTorch's parser takes an int (not a bool, a float or a string) for an `int` argument."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}(): argument '{param}' (position {pos}) must be int, not "
                        f"{type(value).__name__}")
    return value


def _bool_arg(name, param, pos, value):
    if not isinstance(value, bool):
        raise TypeError(f"{name}(): argument '{param}' (position {pos}) must be bool, not "
                        f"{type(value).__name__}")
    return value


def _scalar_name(dtype):
    """The name PyTorch's kernel errors give a dtype (Float, Long, Bool, ...)."""
    return {"bool": "Bool", "int8": "Char", "uint8": "Byte", "int16": "Short",
            "complex64": "ComplexFloat", "complex128": "ComplexDouble"}.get(
                dtype.name, F._tname(dtype))


def _reduction(name, value, pos):
    """nn.functional's reduction string for ATen's enum. ATen's apply_loss_reduction reduces for
    1 (mean) and 2 (sum) only: any other int leaves the loss unreduced, without an error."""
    return {1: "mean", 2: "sum"}.get(_int_arg(name, "reduction", pos, value), "none")


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def _int_list(name, param, pos, value, n):
    """An int[] argument of a convolution, expanded to n values as ATen does (one value for all
    dims), with PyTorch's errors."""
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{name}(): argument '{param}' (position {pos}) must be tuple of ints, "
                        f"not {type(value).__name__}")
    value = list(value)
    if len(value) == 1:
        value = value * n
    if len(value) != n:
        raise RuntimeError(f"expected {param} to be a single integer value or a list of {n} "
                           f"values to match the convolution dimensions, but got "
                           f"{param}={value}")
    return tuple(value)


# ---------------------------------------------------------------- losses

def _broadcast_into(out_shape, other_shape):
    """ATen's in-place ops of these losses: the result keeps the first operand's shape."""
    full = tuple(broadcast_shapes(tuple(out_shape), tuple(other_shape)))
    if full != tuple(out_shape):
        raise RuntimeError(f"output with shape {list(out_shape)} doesn't match the broadcast "
                           f"shape {list(full)}")


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1):
    r = _reduction("binary_cross_entropy_with_logits", reduction, 5)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(
            f'"log_sigmoid_cpu" not implemented for \'{_scalar_name(input.dtype)}\'')
    # ATen's formula and broadcasting ((1 - target) * input - log_weight * logsigmoid(input),
    # its products in place): unlike nn.functional's, a target may broadcast the input
    log_sig = F.logsigmoid(input)
    if pos_weight is not None:
        log_weight = (pos_weight - 1) * target + 1
        _broadcast_into(log_sig.shape, log_weight.shape)
        log_sig = log_sig * log_weight
    _broadcast_into(target.shape, input.shape)
    loss = (1 - target) * input
    _broadcast_into(loss.shape, log_sig.shape)
    loss = loss - log_sig
    if weight is not None:
        _broadcast_into(loss.shape, weight.shape)
        loss = loss * weight
    return _reduce(loss, r)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
    r = _reduction("cosine_embedding_loss", reduction, 5)
    sizes = f"{list(input1.shape)} and {list(input2.shape)}"
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if target.ndim == 1 and not (input1.ndim == input2.ndim == 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with "
                           f"sizes {sizes}.")
    if target.ndim == 0 and not (input1.ndim == input2.ndim == 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with "
                           f"sizes {sizes}.")
    # ATen's formula (not cosine_similarity's clamped norms): eps inside the squared norms
    dim = input1.ndim - 1
    prod = (input1 * input2).sum(dim)
    mag = ((input1 * input1).sum(dim) + 1e-12) * ((input2 * input2).sum(dim) + 1e-12)
    cos = prod / sqrt(mag)
    zero = cos * 0
    loss = where(target == 1, 1 - cos, zero) + where(target == -1, _relu(cos - margin), zero)
    return _reduce(loss, r)


def hinge_embedding_loss(input, target, margin=1.0, reduction=1):
    r = _reduction("hinge_embedding_loss", reduction, 4)
    # ATen's formula: a target that is neither 1 nor -1 takes both terms
    zero = input * 0
    loss = where(target != 1, _relu(margin - input), zero) + where(target != -1, input, zero)
    return _reduce(loss, r)


def kl_div(input, target, reduction=1, *, log_target=False):
    r = _reduction("kl_div", reduction, 3)
    if input.dtype.is_complex or target.dtype.is_complex:
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if not (input.dtype.is_floating_point and target.dtype.is_floating_point):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    # ATen's formulas (nn.functional's takes a negative target's term as 0, ATen's is nan; and
    # its 'mean' warns about 'batchmean', torch.kl_div does not)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = xlogy(target, target) - target * input
    return _reduce(loss, r)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    r = _reduction("margin_ranking_loss", reduction, 5)
    return _reduce(_relu(-target * (input1 - input2) + margin), r)


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    r = _reduction("poisson_nll_loss", reduction, 6)
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:  # Stirling's approximation of log(target!), where target > 1
        big = target > 1
        safe = where(big, target, target * 0 + 1)  # (no log of the others, nor its gradient)
        stirling = safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log()
        loss = loss + where(big, stirling, stirling * 0)
    return _reduce(loss, r)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False,
                        reduction=1):
    r = _reduction("triplet_margin_loss", reduction, 8)
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and "
            f"negative {negative.ndim}D inputs")
    dp = F.pairwise_distance(anchor, positive, p, eps)
    dn = F.pairwise_distance(anchor, negative, p, eps)
    if swap:  # the harder negative: the nearer of anchor and positive to it
        dn = minimum(dn, F.pairwise_distance(positive, negative, p, eps))
    return _reduce(_relu(margin + dp - dn), r)


_CTC_SIGS = (
    "(Tensor log_probs, Tensor targets, tuple of ints input_lengths, tuple of ints "
    "target_lengths, int blank = 0, int reduction = at::Reduction::Mean, bool zero_infinity = "
    "False)",
    "(Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, "
    "int blank = 0, int reduction = at::Reduction::Mean, bool zero_infinity = False)")


def _parsed(name, params, optional=(), overloads=None, plausible=0):
    """PyTorch's parser errors for the Tensor parameters `params` (those in `optional` may be
    None), checked left to right before the call. overloads: the signatures PyTorch lists,
    "an invalid combination of arguments", for a call of fewer than `plausible` arguments
    (no single overload fits it) or for any refused argument if plausible is None. The
    function is then not wrapped again by _argcheck (which would name a different argument)."""
    def wrap(fn):
        @functools.wraps(fn)
        def checked(*args, **kwargs):
            given = len(args) + len(kwargs)
            for i, p in enumerate(params):
                a = args[i] if i < len(args) else kwargs.get(p)
                if isinstance(a, Tensor) or (a is None and p in optional):
                    continue
                if overloads is not None and (plausible is None or given < plausible):
                    raise combination_error(name, overloads, args, kwargs)
                raise TypeError(f"{name}(): argument '{p}' (position {i + 1}) must be Tensor, "
                                f"not {type(a).__name__}")
            return fn(*args, **kwargs)
        checked._torch_errors = True
        checked._binding_first = False
        return checked
    return wrap


@_parsed("ctc_loss", ("log_probs", "targets"), overloads=_CTC_SIGS, plausible=None)
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1,
             zero_infinity=False):
    # PyTorch's two overloads: both lengths lists of ints, or both tensors
    lengths = (input_lengths, target_lengths)
    ints = all(isinstance(a, int) and not isinstance(a, bool) for a in (blank, reduction))
    if not ints or not isinstance(zero_infinity, bool) or not (
            all(isinstance(a, (list, tuple)) for a in lengths)
            or all(isinstance(a, Tensor) for a in lengths)):
        # (PyTorch lists the arguments given: here, up to the last that is not its default)
        given = [blank, reduction, zero_infinity]
        while given and given[-1] is (0, 1, False)[len(given) - 1]:
            given.pop()
        raise combination_error("ctc_loss", _CTC_SIGS,
                                (log_probs, targets) + lengths + tuple(given), {})
    r = _reduction("ctc_loss", reduction, 6)
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, r, zero_infinity)


# ---------------------------------------------------------------- embedding_bag

_BAG_SIGS = (
    "(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq, int mode, bool "
    "sparse, Tensor per_sample_weights, bool include_last_offset, int padding_idx)",
    "(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq = False, int "
    "mode = 0, bool sparse = False, Tensor per_sample_weights = None, bool include_last_offset "
    "= False)")


@_parsed("embedding_bag", ("weight", "indices", "offsets"), overloads=_BAG_SIGS,
         plausible=3)
def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """(output, offset2bag, bag_size, max_indices), as PyTorch's CPU kernel returns them."""
    _int_arg("embedding_bag", "mode", 5, mode)
    # (ATen promotes indices and offsets to one type first: the outputs but the first have it)
    index_dtype = D.promote_types(indices.dtype, offsets.dtype)
    if index_dtype not in (D.int64, D.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got torch.{F._tname(index_dtype)}Tensor instead (while "
            "checking arguments for embedding_bag)")
    if mode not in (0, 1, 2):
        raise RuntimeError("`mode` must be sum, mean, or max.")
    num = weight.shape[0]
    pad = -1   # (ATen's "no padding")
    if padding_idx is not None:
        _int_arg("embedding_bag", "padding_idx", 9, padding_idx)
        if not -num <= padding_idx < num:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} "
                               f"through {num - 1}, but got {padding_idx}")
        pad = padding_idx % num
    if per_sample_weights is not None and mode != 0:
        raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
    ids, off = indices._data, offsets._data.astype(index_dtype.np)
    xp = xp_of(ids)
    n = ids.shape[0]
    if off.shape[0] and int(off[-1]) > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got "
                           f"offsets[-1] of {int(off[-1])}")
    # an index outside the weight, or offsets that go back: the CPU kernel's check
    if (n and bool(((ids < 0) | (ids >= num)).any())) or bool((off[1:] < off[:-1]).any()):
        raise RuntimeError("Expected i < index_size to be true, but got false.  (Could this "
                           "error message be improved?  If so, please report an enhancement "
                           "request to PyTorch.)")
    out = F.embedding_bag(indices, weight, offsets, scale_grad_by_freq=scale_grad_by_freq,
                          mode=("sum", "mean", "max")[mode], sparse=sparse,
                          per_sample_weights=per_sample_weights,
                          include_last_offset=include_last_offset,
                          padding_idx=pad if pad >= 0 else None)
    bags = out.shape[0]
    # each bag's [start, end) in indices (include_last_offset: the last bag runs to the end of
    # the indices, as on PyTorch's CPU)
    starts = off[:bags]
    ends = xp.concatenate([off[1:bags], xp.asarray([n], off.dtype)])[:bags]
    # offset2bag: the bag of each index (ATen: ones added at the offsets, then a cumsum); the
    # CPU kernel's fast path (sum of float32/16 rows, no padding) leaves it empty
    if mode == 0 and weight.dtype in (D.float32, D.float16) and pad < 0:
        offset2bag = xp.zeros(0, off.dtype)
    else:
        offset2bag = xp.searchsorted(off[1:bags], xp.arange(n), side="right").astype(off.dtype)
    if mode == 0:   # (sum: zeros, one per bag for a weight that requires grad, else sized as
        # the offsets, as the CPU kernel leaves them)
        bag_size = xp.zeros(bags if weight.requires_grad else off.shape[0], off.dtype)
    else:           # the bag's indices that are not padding
        counted = xp.concatenate([xp.zeros(1, off.dtype), xp.cumsum(ids != pad)])
        bag_size = (counted[ends] - counted[starts]).astype(off.dtype)
    if mode == 2:
        max_indices = _max_indices(weight._data, ids, starts, ends, pad, off.dtype)
    else:
        max_indices = bag_size.copy()
    return out, _make(offset2bag), _make(bag_size), _make(max_indices)


def _max_indices(w, ids, starts, ends, pad, dtype):
    """Per bag and feature, the index (into weight) of the bag's first maximum (the CPU kernel
    replaces its pick only by a strictly larger value); 0 for a bag of padding only."""
    xp = xp_of(w)
    lengths = ends - starts
    width = max(int(lengths.max()) if lengths.shape[0] else 0, 1)
    pos = starts[:, None] + xp.arange(width)               # (bags, width) positions in ids
    valid = pos < ends[:, None]
    bag_ids = ids[xp.where(valid, pos, 0)] if ids.shape[0] else xp.zeros(pos.shape, ids.dtype)
    valid &= bag_ids != pad
    values = xp.where(valid[..., None], w[bag_ids], -xp.inf)   # (bags, width, features)
    first = xp.argmax(values, axis=1)                       # (the first of equal maxima)
    picked = xp.take_along_axis(bag_ids[..., None], first[:, None, :], 1)[:, 0]
    return xp.where(valid.any(1)[:, None], picked, 0).astype(dtype)


# ---------------------------------------------------------------- pooling

def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    stride = None if isinstance(stride, (list, tuple)) and not stride else stride  # ([]: kernel)
    return F.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d(input, output_size):
    if isinstance(output_size, (list, tuple)) and len(output_size) != 1:
        raise RuntimeError(f"adaptive_max_pool1d() argument 'output_size' should contain one "
                           f"int (got {len(output_size)})")
    return F.adaptive_max_pool1d_with_indices(input, output_size)


# ---------------------------------------------------------------- normalization

@_parsed("native_batch_norm", ("input", "weight", "bias", "running_mean", "running_var"),
         ("weight", "bias", "running_mean", "running_var"))
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
                      *, out=None):
    """(out, save_mean, save_invstd); in evaluation mode the saved statistics are empty. The
    one of these names whose Python form takes out= (a tuple of three tensors)."""
    if out is not None:   # (checked before the running statistics move)
        _check_outs("native_batch_norm", out, 3, (input, weight, bias, running_mean, running_var))
        for o in out:
            if o.dtype is not input.dtype:
                raise RuntimeError(f"expected scalar type {F._tname(input.dtype)} but found "
                                   f"{F._tname(o.dtype)}")
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be "
                         "None")
    if not training:
        result = F.batch_norm(input, running_mean, running_var, weight, bias, False, momentum,
                              eps)
        empty = input.new_empty((0,))
        return _written(out, (result, empty, empty.clone()))
    if F._batch_norm_dtypes(input, weight, bias, running_mean, running_var):
        # half input, float parameters: computed in float, the output returned as half
        result, mean, invstd = native_batch_norm(input.float(), weight, bias, running_mean,
                                                 running_var, True, momentum, eps)
        return _written(out, (result.to(input.dtype), mean, invstd))
    # (the fused kernel: nn.functional's batch_norm refuses one value per channel, ATen's not;
    # its statistics are not differentiable, as PyTorch's)
    result, mean, var = K.batch_norm(input, weight, bias, eps)
    if running_mean is not None:
        n = input.numel() // input.shape[1]
        unbiased = var * (n / (n - 1) if n > 1 else math.nan)
        with no_grad():
            running_mean.mul_(1 - momentum).add_(mean * momentum)
            running_var.mul_(1 - momentum).add_(unbiased * momentum)
    return _written(out, (result, mean, 1 / sqrt(var + eps)))


def _written(out, results):
    """`results`, or out= (a tuple of tensors) written with them."""
    if out is None:
        return results
    return tuple(_out._write(o, r) for o, r in zip(out, results))


def _check_outs(name, out, n, inputs):
    """PyTorch's checks of a tuple out= (before anything is computed or written)."""
    if not isinstance(out, (tuple, list)):
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not "
                        f"{type(out).__name__}")
    if len(out) != n:
        raise TypeError(f"expected tuple of {n} elements but got {len(out)}")
    if not all(isinstance(o, Tensor) for o in out):
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not "
                        f"{type(out).__name__}")
    if is_grad_enabled() and any(t is not None and t.requires_grad for t in (*inputs, *out)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")


@_parsed("native_layer_norm", ("input",))
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(out, mean, rstd); the statistics keep the normalized dims as size 1."""
    if not isinstance(normalized_shape, (list, tuple)):
        raise TypeError(f"native_layer_norm(): argument 'normalized_shape' (position 2) must be "
                        f"tuple of ints, not {type(normalized_shape).__name__}")
    if not normalized_shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    for pname, p in (("weight", weight), ("bias", bias)):
        if p is not None and list(p.shape) != list(normalized_shape):
            raise RuntimeError(
                f"Expected {pname} to be of same shape as normalized_shape, but got {pname} of "
                f"shape {list(p.shape)} and normalized_shape = {list(normalized_shape)}")
    F.layer_norm(input, normalized_shape, weight, bias, eps)  # (its argument checks)
    from ..ops.nn_ops import native_layer_norm as _native
    return _native(input, tuple(normalized_shape), weight, bias, eps)


@_parsed("native_group_norm", ("input", "weight", "bias"), ("weight", "bias"))
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(out, mean, rstd); the statistics are (N, group)."""
    if input.numel() != N * C * HxW:
        raise RuntimeError("Expected X.numel() == N * C * HxW to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    if C % group:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got input "
            f"of shape {list(input.shape)} and num_groups={group}")
    # (on the (N, group, rest) view that ATen's arguments describe: nn.functional's group_norm
    # reads them from the input's shape, and refuses an empty batch)
    x = input.reshape(N, group, C // group * HxW)
    mean = x.mean(2, keepdim=True)
    diff = x - mean
    rstd = 1 / sqrt((diff * diff).mean(2, keepdim=True) + eps)
    out = (diff * rstd).reshape(N, C, HxW)
    if weight is not None:
        out = out * weight.reshape(1, C, 1)
    if bias is not None:
        out = out + bias.reshape(1, C, 1)
    out = out.reshape(input.shape)
    # (the statistics are differentiable outputs too, as PyTorch's native_group_norm's)
    return out, mean.reshape(N, group), rstd.reshape(N, group)


def native_dropout(input, p, train):
    """(out, mask): train None counts as training; otherwise the input (a copy), all kept."""
    if train is not None:
        _bool_arg("native_dropout", "train", 3, train)
    if train is not None and not train:
        return input.clone(), input.new_ones(input.shape, dtype=D.bool)
    keep = 1 - p
    if not 0 <= keep <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={keep}")
    if not input.dtype.is_floating_point:   # (the scaled result is float)
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_scalar_name(input.dtype)}")
    mask = input.new_empty(input.shape, dtype=D.float64).bernoulli_(keep) > 0
    scale = 0.0 if keep == 0 else 1.0 / keep
    return input * mask * scale, mask


def native_norm(input, p=2, dim=None, keepdim=False, dtype=None):
    """PyTorch has this kernel for sparse inputs only: the norm of the stored values."""
    if dim is not None:
        raise NotImplementedError("native_norm: the dim= overload (a sparse result) is not "
                                  "implemented in ndgrad")
    if not getattr(input, "is_sparse", False):
        raise NotImplementedError(
            "Could not run 'aten::native_norm' with arguments from the 'CPU' backend. This "
            "could be because the operator doesn't exist for this backend, or was omitted "
            "during the selective/custom build process (if using custom build).")
    values = input.coalesce().values()
    if dtype is not None:
        values = values.to(dtype)
    return values.norm(2 if p is None else p)


# ---------------------------------------------------------------- grid sampling

_INTERP = ("bilinear", "nearest", "bicubic")
_PADDING = ("zeros", "border", "reflection")


def _grid_modes(name, interpolation_mode, padding_mode, align_corners):
    """The modes' ints, with PyTorch's type errors. (An int outside the enums reads memory that
    PyTorch's kernel never wrote: ndgrad refuses it instead.)"""
    _int_arg(name, "interpolation_mode", 3, interpolation_mode)
    _int_arg(name, "padding_mode", 4, padding_mode)
    _bool_arg(name, "align_corners", 5, align_corners)
    if interpolation_mode not in (0, 1, 2):
        raise RuntimeError(f"{name}(): interpolation_mode must be 0 (bilinear), 1 (nearest) or "
                           f"2 (bicubic), but got {interpolation_mode}")
    if padding_mode not in (0, 1, 2):
        raise RuntimeError(f"{name}(): padding_mode must be 0 (zeros), 1 (border) or 2 "
                           f"(reflection), but got {padding_mode}")


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    _grid_modes("grid_sampler", interpolation_mode, padding_mode, align_corners)
    if input.ndim == 5:
        return grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners)
    return grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    _grid_modes("grid_sampler_2d", interpolation_mode, padding_mode, align_corners)
    if input.ndim != 4 and input.shape[0] != grid.shape[0]:  # (ATen checks the batch first)
        raise RuntimeError(
            f"grid_sampler(): expected grid and input to have same batch size, but got input "
            f"with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if input.ndim != 4 or grid.ndim != 4:
        raise RuntimeError(
            f"grid_sampler(): expected 4D input and grid with same number of dimensions, but "
            f"got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    return F.grid_sample(input, grid, _INTERP[interpolation_mode], _PADDING[padding_mode],
                         align_corners)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    """Samples input (N, C, D, H, W) at the normalized grid points (N, Do, Ho, Wo, 3) (x, y, z
    order), trilinear or nearest, as nn.functional.grid_sample's 2-D path does per axis."""
    _grid_modes("grid_sampler_3d", interpolation_mode, padding_mode, align_corners)
    if input.ndim != 5 or grid.ndim != 5:
        raise RuntimeError(
            f"grid_sampler(): expected 5D input and grid with same number of dimensions, but "
            f"got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if interpolation_mode == 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    F._grid_check(input, grid)
    N, C = input.shape[:2]
    sizes = tuple(input.shape[2:])             # D, H, W
    points = grid.shape[1] * grid.shape[2] * grid.shape[3]
    pad = _PADDING[padding_mode]
    # source coordinates (x over W, y over H, z over D), each (N, 1, points)
    coords = [F._grid_source(grid[..., i], sizes[2 - i], pad, align_corners)
              .reshape(N, 1, points) for i in range(3)]
    flat = input.reshape(N, C, math.prod(sizes))
    xp = xp_of(flat._data)

    def tap(ix, iy, iz):   # values at integer positions (arrays); 0 outside the volume
        valid = ((ix >= 0) & (ix < sizes[2]) & (iy >= 0) & (iy < sizes[1])
                 & (iz >= 0) & (iz < sizes[0]))
        pos = xp.where(valid, (iz * sizes[1] + iy) * sizes[2] + ix, 0).astype(xp.int64)
        index = _make(xp.broadcast_to(pos, (N, C, points)).copy())
        return flat.gather(2, index) * _make(valid.astype(flat._data.dtype))

    if interpolation_mode == 1:   # nearest: round half to even, as ATen's nearbyint
        out = tap(*(xp.round(c._data).astype(xp.int64) for c in coords))
    else:
        low = [xp.floor(c._data) for c in coords]
        frac = [c - _make(f) for c, f in zip(coords, low)]   # the weights of the upper corner
        low = [f.astype(xp.int64) for f in low]
        out = 0
        for corner in range(8):
            bits = [(corner >> i) & 1 for i in range(3)]
            weight = 1
            for b, f in zip(bits, frac):
                weight = weight * (f if b else 1 - f)
            out = out + tap(*(lo + b for lo, b in zip(low, bits))) * weight
    return out.reshape(N, C, *grid.shape[1:4])


def affine_grid_generator(theta, size, align_corners):
    _bool_arg("affine_grid_generator", "align_corners", 3, align_corners)
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    return F.affine_grid(theta, list(size), align_corners)


# ---------------------------------------------------------------- convolution

def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """ATen's convolution: conv1d/2d/3d, or their transposes, by the weight's dims."""
    nd = weight.ndim - 2
    name = "convolution"
    stride = _int_list(name, "stride", 4, stride, nd)
    padding = _int_list(name, "padding", 5, padding, nd)
    dilation = _int_list(name, "dilation", 6, dilation, nd)
    _bool_arg(name, "transposed", 7, transposed)
    output_padding = _int_list(name, "output_padding", 8, output_padding, nd)
    _int_arg(name, "groups", 9, groups)
    if input.ndim != weight.ndim:   # (ATen takes batched input only)
        raise RuntimeError(
            f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
            f"{list(weight.shape)}, but got {input.ndim}-dimensional input of size "
            f"{list(input.shape)} instead")
    if transposed:
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd - 1]
        return fn(input, weight, bias, stride, padding, output_padding, groups, dilation)
    fn = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    return fn(input, weight, bias, stride, padding, dilation, groups)



# ---------------------------------------------------------------- upsampling (torch._C._nn and
# torch.ops.aten only: no torch-level names)

def _upsample_entry(name, op, nd):
    """ATen's upsample_*(input, output_size, align_corners, *scales) and its .vec overload
    (input, output_size, align_corners, scale_factors): ops/upsample.py's op."""
    scale_names = {1: ("scales",), 2: ("scales_h", "scales_w"),
                   3: ("scales_d", "scales_h", "scales_w")}[nd]

    def entry(input, output_size, align_corners, *args, **kwargs):
        vec = "scale_factors" in kwargs or (len(args) == 1 and (
            isinstance(args[0], (list, tuple)) or (args[0] is None and output_size is None)))
        if vec:
            factors = kwargs.pop("scale_factors", args[0] if args else None)
            if (output_size is None) == (factors is None):
                raise RuntimeError("Must specify exactly one of output_size and scale_factors")
            if factors is None:
                scales = (None,) * nd
            else:
                scales = tuple(float(f) for f in factors)
                output_size = [int(n * f) for n, f in zip(input.shape[2:], scales)]
        else:
            scales = list(args) + [None] * (nd - len(args))
            for i, k in enumerate(scale_names):
                if k in kwargs:
                    scales[i] = kwargs.pop(k)
            scales = tuple(scales)
        if kwargs:
            raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kwargs))}'")
        return op(input, tuple(int(n) for n in output_size), bool(align_corners), scales)
    entry.__name__ = entry.__qualname__ = name
    return entry


def _upsample_entries():
    from ..ops import upsample as U
    return {name: _upsample_entry(name, op, nd) for name, op, nd in (
        ("upsample_linear1d", U.upsample_linear1d, 1),
        ("upsample_bilinear2d", U.upsample_bilinear2d, 2),
        ("upsample_trilinear3d", U.upsample_trilinear3d, 3),
        ("upsample_bicubic2d", U.upsample_bicubic2d, 2),
        ("_upsample_bilinear2d_aa", U.upsample_bilinear2d_aa, 2),
        ("_upsample_bicubic2d_aa", U.upsample_bicubic2d_aa, 2))}


UPSAMPLE = _upsample_entries()
globals().update(UPSAMPLE)
