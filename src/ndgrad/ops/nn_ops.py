"""Fused neural-network kernels: forward on xp, derivatives in ndgrad ops (see _registry.py).

Convolution is three bilinear ops that are each other's derivatives, so every order of
derivative stays in this closed family (Note [Convolution family]):

    y  = conv(x, w)                 dx = conv_transpose(gy, w)      dw = conv_weight(x, gy)
    x' = conv_transpose(g, w)       dg = conv(gx', w)               dw = conv_weight(gx', g)
    w' = conv_weight(x, g)          dx = conv_transpose(g, gw')     dg = conv(x, gw')

All three run on im2col columns laid out (C, *kernel, N, *out), built with one slice copy per
kernel tap (no 6-d transpose, no strided-view argmax), so that one BLAS matmul per group covers
the whole batch; col2im is the same tap loop adding slices. The batch is chunked so the im2col
buffer stays bounded. The kernels take any number of spatial dims (1-d callers add a unit
height; 3-d ones pass (D, H, W)). Padding is one (before, after) pair per spatial dim.

Also here: linear (one matmul, AddmmBackward0), nll_loss over a constant coefficient array
(one-hot * class weight / normaliser, built by nn.functional), take/index_add (gather and
scatter-add along a dim, each the other's derivative; used by embedding, pad and interpolate),
max pooling with indices (a running maximum over the kernel taps), whose backward is a
scatter-add whose derivative is the matching gather, and training-mode batch norm (one node;
its backward recomputes the batch statistics with ndgrad ops so that it is itself
differentiable).
"""
import itertools
import math
import threading

from .._backend import numpy as _np
from .._creation import zeros_like as _zeros_like
from ._registry import defop

__all__ = ["conv2d", "conv_transpose2d", "conv2d_weight", "linear", "nll_loss", "nll_loss_index",
           "max_pool2d", "max_pool3d",
           "take", "index_add", "batch_norm"]

_IM2COL_BUDGET = 1 << 24  # elements of one im2col chunk (128 MiB of float64)
_SCRATCH_MAX = 1 << 24    # bytes of scratch kept between calls, per thread (_scratch)
_SCRATCH = threading.local()


# ---------------------------------------------------------------- convolution family

def _padded(xp, x, padding, value=0):
    """x inside a border of `value` (one (before, after) pair per spatial dim); x itself
    without one."""
    if not any(a or b for a, b in padding):
        return x
    N, C = x.shape[:2]
    sizes = tuple(n + a + b for n, (a, b) in zip(x.shape[2:], padding))
    out = xp.full((N, C) + sizes, value, dtype=x.dtype)
    out[(slice(None), slice(None)) + tuple(slice(a, a + n)
                                           for n, (a, _) in zip(x.shape[2:], padding))] = x
    return out


def _out_hw(x, kernel, stride, dilation):
    """The output size of a window op over the (padded) x."""
    return tuple((n - d * (k - 1) - 1) // s + 1
                 for n, k, s, d in zip(x.shape[2:], kernel, stride, dilation))


def _taps(kernel, stride, dilation, out_hw):
    """Each kernel tap (its index tuple) with the slices of the padded input it reads, one per
    spatial dim, prefixed by the two full slices of batch and channel."""
    whole = (slice(None), slice(None))
    return [(tap, whole + tuple(slice(i * d, i * d + (o - 1) * s + 1, s)
                                for i, s, d, o in zip(tap, stride, dilation, out_hw)))
            for tap in itertools.product(*map(range, kernel))]


def _chunks(n, per_sample):
    step = max(1, _IM2COL_BUDGET // max(per_sample, 1))
    return [slice(i, min(i + step, n)) for i in range(0, n, step)]


def _scratch(xp, shape, dtype):
    """A reusable (per thread) array for a kernel's temporary (im2col columns, scatter
    indices): fresh memory costs a page fault per 4 KiB on first touch, often more than the
    copy that fills it. There is one buffer, so a kernel holds at most one scratch array, never
    returns it and calls no other kernel meanwhile. Buffers over _SCRATCH_MAX bytes are not
    kept."""
    nbytes = math.prod(shape) * xp.dtype(dtype).itemsize
    buf = getattr(_SCRATCH, "buf", None)
    if buf is None or buf.nbytes < nbytes or type(buf) is not xp.ndarray:
        buf = xp.empty(max(nbytes, 1), dtype=xp.uint8)
        if nbytes <= _SCRATCH_MAX:
            _SCRATCH.buf = buf
    return buf[:nbytes].view(dtype).reshape(shape)


def _im2col(xp, x, kernel, stride, dilation, out_hw):
    """The windows of the padded x as a contiguous (C, *kernel, N, *out) array: one slice
    copy per kernel tap. With the batch inside, one matmul per group covers the whole batch."""
    N, C = x.shape[:2]
    cols = _scratch(xp, (C,) + tuple(kernel) + (N,) + tuple(out_hw), x.dtype)
    for tap, sl in _taps(kernel, stride, dilation, out_hw):
        cols[(slice(None),) + tap] = x[sl].swapaxes(0, 1)
    return cols


def _conv_fwd(xp, input, weight, bias, stride, padding, dilation, groups, out_hw=None):
    """y[g] = w[g] @ cols[g]: one matmul per group and chunk, then back to (N, O, *out)."""
    O, Cg = weight.shape[:2]
    kernel = weight.shape[2:]
    x = _padded(xp, input, padding)
    N = x.shape[0]
    out_hw = tuple(out_hw or _out_hw(x, kernel, stride, dilation))
    P = math.prod(out_hw)
    K = Cg * math.prod(kernel)
    wm = weight.reshape(groups, O // groups, K)
    out = xp.empty((N, O) + out_hw, dtype=xp.result_type(input, weight))
    for sl in _chunks(N, groups * K * P):
        n = sl.stop - sl.start
        cols = _im2col(xp, x[sl], kernel, stride, dilation, out_hw)
        y = xp.matmul(wm, cols.reshape(groups, K, n * P))       # (G, Og, n*P)
        out[sl] = y.reshape((O, n) + out_hw).swapaxes(0, 1)
    if bias is not None:
        out += bias.reshape((O,) + (1,) * len(out_hw))
    return out


def _conv_tr_fwd(xp, input, weight, stride, padding, dilation, groups, out_hw):
    """The adjoint of conv in its input: cols[g] = w[g].T @ x[g], then each kernel tap adds
    its slice of cols into the (padded) output (col2im)."""
    Cin, Cg = weight.shape[:2]
    kernel = weight.shape[2:]
    N = input.shape[0]
    in_hw = input.shape[2:]
    full_hw = tuple(max((i - 1) * s + d * (k - 1) + 1, p + o) for i, s, d, k, (p, _), o in zip(
        in_hw, stride, dilation, kernel, padding, out_hw))
    P = math.prod(in_hw)
    Ig, K = Cin // groups, Cg * math.prod(kernel)
    wt = weight.reshape(groups, Ig, K).transpose(0, 2, 1)          # (G, K, Ig)
    full = xp.empty((N, groups * Cg) + full_hw, dtype=xp.result_type(input, weight))
    full.fill(0)
    taps = _taps(kernel, stride, dilation, in_hw)
    for sl in _chunks(N, groups * K * P):
        n = sl.stop - sl.start
        rows = input[sl].swapaxes(0, 1).reshape(groups, Ig, n * P)
        cols = xp.matmul(wt, rows).reshape((groups * Cg,) + tuple(kernel) + (n,) + tuple(in_hw))
        tgt = full[sl]
        for tap, s in taps:
            tgt[s] += cols[(slice(None),) + tap].swapaxes(0, 1)
    return full[(slice(None), slice(None)) + tuple(slice(p, p + o)
                                                   for (p, _), o in zip(padding, out_hw))]


def _conv_w_fwd(xp, input, grad_output, weight_shape, stride, padding, dilation, groups):
    """dw[g] = gy[g] @ cols[g].T, contracting batch and positions in one matmul per chunk."""
    O, Cg = weight_shape[:2]
    kernel = tuple(weight_shape[2:])
    x = _padded(xp, input, padding)
    N, C = x.shape[:2]
    out_hw = tuple(grad_output.shape[2:])
    P = math.prod(out_hw)
    K, Og = Cg * math.prod(kernel), O // groups
    out = xp.zeros((groups, Og, K), dtype=xp.result_type(input, grad_output))
    for sl in _chunks(N, C * math.prod(kernel) * P):
        n = sl.stop - sl.start
        cols = _im2col(xp, x[sl], kernel, stride, dilation, out_hw)
        g = grad_output[sl].swapaxes(0, 1).reshape(groups, Og, n * P)
        out += xp.matmul(g, cols.reshape(groups, K, n * P).transpose(0, 2, 1))
    return out.reshape(weight_shape)


def _sum_but_channels(grad):
    return grad.sum((0,) + tuple(range(2, grad.ndim)))


conv2d = defop(
    "convolution", _conv_fwd, promote="binary", node_name="ConvolutionBackward0",
    input=lambda grad, weight, input_shape, stride, padding, dilation, groups: conv_transpose2d(
        grad, weight, stride, padding, dilation, groups, tuple(input_shape[2:])),
    weight=lambda grad, input, weight_shape, stride, padding, dilation, groups: conv2d_weight(
        input, grad, tuple(weight_shape), stride, padding, dilation, groups),
    bias=_sum_but_channels)

conv_transpose2d = defop(
    "convolution_transpose", _conv_tr_fwd, promote="binary", node_name="ConvolutionBackward0",
    input=lambda grad, input_shape, weight, stride, padding, dilation, groups: conv2d(
        grad, weight, None, stride, padding, dilation, groups, tuple(input_shape[2:])),
    weight=lambda grad, input, weight_shape, stride, padding, dilation, groups: conv2d_weight(
        grad, input, tuple(weight_shape), stride, padding, dilation, groups))

conv2d_weight = defop(
    "convolution_weight", _conv_w_fwd, promote="binary", node_name="ConvolutionBackward0",
    input=lambda grad, input_shape, grad_output, stride, padding, dilation, groups:
        conv_transpose2d(grad_output, grad, stride, padding, dilation, groups,
                         tuple(input_shape[2:])),
    grad_output=lambda grad, input, grad_output_shape, stride, padding, dilation, groups: conv2d(
        input, grad, None, stride, padding, dilation, groups, tuple(grad_output_shape[2:])))


# ---------------------------------------------------------------- linear

def _linear_fwd(xp, input, weight, bias=None):
    out = xp.matmul(input, weight.T)
    if bias is not None:
        out = out + bias
    return out


def _linear_input(grad, weight):
    return grad.matmul(weight)


def _linear_weight(grad, input):
    if input.ndim == 1:
        return grad.unsqueeze(-1) * input
    g = grad.reshape(-1, grad.shape[-1])
    return g.t().matmul(input.reshape(-1, input.shape[-1]))


def _linear_bias(grad):
    return grad if grad.ndim <= 1 else grad.reshape(-1, grad.shape[-1]).sum(0)


linear = defop("linear", _linear_fwd, promote="binary", node_name="AddmmBackward0",
               input=_linear_input, weight=_linear_weight, bias=_linear_bias)


# ---------------------------------------------------------------- losses

def _nll_fwd(xp, self, coef, reduce):
    r = -(self * coef)
    return r.sum() if reduce else r.sum(axis=1)


def _nll_grad(grad, coef, reduce):
    if not reduce:
        grad = grad.unsqueeze(1)
    return -(grad * coef)


# coef is a constant (N, C, ...) array: one-hot(target) * weight[target] / normaliser
nll_loss = defop("nll_loss", _nll_fwd, promote="float", node_name="NllLossBackward0",
                 self=_nll_grad)


# The common case of nll_loss (a batch of class indices, no weights, none ignored): PyTorch's
# kernels, a gather forward and a scatter backward, O(N) work and memory beside the input and its
# gradient (no (N, C) one-hot). n: the mean's divisor (N), 1 for the sum, 0 for reduction='none'.
_ROWS = {}  # n -> a read-only host arange(n): the rows of each batch size seen


def _nll_rows(xp, n_rows):
    if xp is not _np:  # (a device's arrays live on one of its devices: made each time)
        return xp.arange(n_rows)
    r = _ROWS.get(n_rows)
    if r is None:
        if len(_ROWS) > 64:
            _ROWS.clear()
        r = _ROWS[n_rows] = xp.arange(n_rows)
        r.flags.writeable = False
    return r


def _nll_index_fwd(xp, self, target, n):
    picked = self[_nll_rows(xp, self.shape[0]), target]
    if not n:
        return -picked
    total = -xp.add.reduce(picked)
    return total / self.dtype.type(n) if n != 1 else total


def _nll_index_backward_fwd(xp, grad, self, target, n):
    out = xp.zeros(self.shape, grad.dtype)
    g = -grad if n < 2 else -grad / grad.dtype.type(n)
    out[_nll_rows(xp, self.shape[0]), target] = g
    return out


# As PyTorch's nll_loss_backward, the result depends on `self` with a zero derivative, so a
# double backward records NllLossBackwardBackward0 (its graph is PyTorch's).
nll_loss_backward = defop(
    "nll_loss_backward", _nll_index_backward_fwd, node_name="NllLossBackwardBackward0",
    inputs=("grad", "self"), grad=lambda grad, target, n: nll_loss_index(grad, target, n),
    self=lambda grad: _zeros_like(grad))
nll_loss_index = defop(
    "nll_loss_index", _nll_index_fwd, node_name="NllLossBackward0", inputs=("self",),
    self=lambda grad, self, target, n: nll_loss_backward(grad, self, target, n))


# ---------------------------------------------------------------- gather / scatter along a dim

def _take_fwd(xp, self, index, dim):
    return xp.take(self, index, axis=dim)


def _index_add_fwd(xp, grad, index, dim, size):
    shape = list(grad.shape)
    k = index.ndim
    out_shape = shape[:dim] + [size] + shape[dim + k:]
    g = grad.reshape(shape[:dim] + [index.size] + shape[dim + k:])  # (no -1: may be empty)
    out = xp.zeros(out_shape, dtype=grad.dtype)
    g = xp.moveaxis(g, dim, 0)
    o = xp.moveaxis(out, dim, 0)
    xp.add.at(o, index.reshape(-1), g)
    return out


take = defop("take_along", _take_fwd, node_name="IndexSelectBackward0",
             self=lambda grad, index, dim, self_shape: index_add(
                 grad, index, dim, self_shape[dim]))

index_add = defop("index_add_rows", _index_add_fwd, node_name="IndexAddBackward0",
                  grad=lambda grad, index, dim: take(grad, index, dim))


def _max_pool_fwd(xp, self, kernel, stride, padding, dilation, out_hw):
    """Returns (values, flat indices into each input plane), PyTorch's choice of index: the
    first maximum of a window, or its last NaN; the padding is never chosen."""
    sizes = self.shape[2:]
    nd = len(sizes)
    plane = [math.prod(sizes[i + 1:]) for i in range(nd)]      # row-major strides of a plane
    ktap = [math.prod(kernel[i + 1:]) for i in range(nd)]      # ... and of the kernel taps
    floating = self.dtype.kind == "f"
    x = _padded(xp, self, padding, -xp.inf if floating else xp.iinfo(self.dtype).min)
    taps = _taps(kernel, stride, dilation, out_hw)
    first = xp.zeros(tuple(out_hw), dtype=xp.int64)
    index = xp.zeros(tuple(out_hw), dtype=xp.int64)
    for i in range(nd):
        along = [1] * nd
        along[i] = out_hw[i]
        start = xp.arange(out_hw[i]) * stride[i] - padding[i][0]     # window corners
        # a window starts at its first tap inside the input, which any later maximum replaces
        first = first + (-(xp.minimum(start, 0) // dilation[i]) * ktap[i]).reshape(along)
        index = index + (start * plane[i]).reshape(along)
    vals, tap = _running_max(xp, x, taps, first, nan=False)
    if floating and xp.isnan(vals).any():
        vals, tap = _running_max(xp, x, taps, first, nan=True)
    offsets = [sum(t * d * p for t, d, p in zip(tp, dilation, plane)) for tp, _ in taps]
    index = xp.asarray(offsets, dtype=xp.int64)[tap] + index
    return vals, index


def _running_max(xp, x, taps, first, nan):
    """The maximum over the taps and the (last) tap that set it; tap numbers only grow, so
    the tap is a running maximum too. With `nan`, a NaN beats anything."""
    best = x[taps[0][1]].copy()
    itype = xp.int8 if len(taps) < 128 else xp.int64
    tap = xp.empty(best.shape, dtype=itype)
    tap[...] = first
    for t, (_, sl) in enumerate(taps[1:], 1):
        v = x[sl]
        won = v > best
        if nan:
            won |= v != v
        xp.maximum(tap, won * itype(t), out=tap)
        xp.maximum(best, v, out=best)
    return best, tap


def _pool_scatter_fwd(xp, grad, indices, hw):
    N, C = grad.shape[:2]
    L = math.prod(hw)
    out = xp.empty((N, C) + tuple(hw), dtype=grad.dtype)
    out.fill(0)  # (not xp.zeros: calloc hands out fresh pages, see _scratch)
    flat = _scratch(xp, (N * C, math.prod(indices.shape[2:])), indices.dtype)
    xp.add(indices.reshape(flat.shape), xp.arange(0, N * C * L, L).reshape(-1, 1), out=flat)
    xp.add.at(out.reshape(-1), flat.reshape(-1), grad.reshape(-1))   # windows may overlap
    return out


def _pool_gather_fwd(xp, self, indices):
    N, C = self.shape[:2]
    flat = self.reshape(N, C, math.prod(self.shape[2:]))
    return xp.take_along_axis(flat, indices.reshape(N, C, math.prod(indices.shape[2:])),
                              axis=-1).reshape(indices.shape)


pool_scatter = defop("max_pool_scatter", _pool_scatter_fwd,
                     node_name="MaxPool2DWithIndicesBackwardBackward0",
                     grad=lambda grad, indices: pool_gather(grad, indices))
pool_gather = defop("max_pool_gather", _pool_gather_fwd, node_name="GatherBackward0",
                    self=lambda grad, indices, self_shape: pool_scatter(
                        grad, indices, tuple(self_shape[2:])))


def _max_pool_grad(grad, result1, self_shape):
    # only the indices are saved, so the pooled values may be modified in place (ReLU(inplace))
    return pool_scatter(grad[0], result1, tuple(self_shape[2:]))


max_pool2d = defop("max_pool2d_with_indices", _max_pool_fwd, outputs=2, nondiff_outputs=(1,),
                   node_name="MaxPool2DWithIndicesBackward0", self=_max_pool_grad)
max_pool3d = defop("max_pool3d_with_indices", _max_pool_fwd, outputs=2, nondiff_outputs=(1,),
                   node_name="MaxPool3DWithIndicesBackward0", self=_max_pool_grad)


# ---------------------------------------------------------------- batch norm (training)

def _bn_dims(ndim):
    return (0,) + tuple(range(2, ndim))


def _bn_fwd(xp, input, weight, bias, eps):
    """Normalise over every dim but 1; also returns the batch mean and biased variance."""
    dims = _bn_dims(input.ndim)
    shape = (1, -1) + (1,) * (input.ndim - 2)
    mean = input.mean(axis=dims, keepdims=True)
    xc = input - mean
    var = (xc * xc).mean(axis=dims, keepdims=True)
    out = xc / xp.sqrt(var + eps)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out.astype(input.dtype, copy=False), mean.reshape(-1), var.reshape(-1)


def _bn_backward(grad, input, weight, eps):
    # recomputes the statistics with ndgrad ops, so double backward works
    g = grad[0]
    dims = _bn_dims(input.ndim)
    m = input.numel() // input.shape[1]
    mean = input.mean(dims, keepdim=True)
    xc = input - mean
    invstd = 1 / ((xc * xc).mean(dims, keepdim=True) + eps).sqrt()
    xhat = xc * invstd
    gsum = g.sum(dims, keepdim=True)
    gxhat = (g * xhat).sum(dims, keepdim=True)
    scale = invstd if weight is None else invstd * weight.reshape(
        (1, -1) + (1,) * (input.ndim - 2))
    gx = scale * (g - gsum / m - xhat * gxhat / m)
    return gx, gxhat.reshape(-1), gsum.reshape(-1)


batch_norm = defop("native_batch_norm", _bn_fwd, promote="binary", outputs=3,
                   nondiff_outputs=(1, 2), node_name="NativeBatchNormBackward0",
                   backward=_bn_backward, inputs=("input", "weight", "bias"))


# ---------------------------------------------------------------- pointwise losses
# One node each (MseLossBackward0, ...), as in PyTorch. `reduction` is 0 none, 1 mean, 2 sum;
# each formula scales the elementwise derivative by the output gradient (spread back over the
# elements for mean/sum), written with ndgrad ops so that double backward works.

def _spread(grad, like, reduction):
    if reduction == 1:
        return grad / like.numel()
    return grad


def _reduce_arr(loss, reduction):
    if reduction == 1:
        return loss.mean()
    if reduction == 2:
        return loss.sum()
    return loss


def _mse_fwd(xp, self, target, reduction):
    d = self - target
    return _reduce_arr(d * d, reduction)


def _mse_grad(grad, self, target, reduction):
    d = self - target
    return _spread(grad, d, reduction) * 2 * d


mse_loss = defop("mse_loss", _mse_fwd, promote="binary",
                 self=_mse_grad,
                 target=lambda grad, self, target, reduction: -_mse_grad(grad, self, target,
                                                                         reduction))


def _smooth_l1_fwd(xp, self, target, reduction, beta):
    d = xp.abs(self - target)
    return _reduce_arr(xp.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction)


def _smooth_l1_grad(grad, self, target, reduction, beta):
    # PyTorch's: -1 below -beta, 1 above beta, d / beta between (a NaN d gives nan); beta 0 is
    # the L1 loss's sign
    from .pointwise import where, sign
    d = self - target
    if beta == 0:
        return _spread(grad, d, reduction) * sign(d)
    return _spread(grad, d, reduction) * where(d < -beta, -1.0, where(d > beta, 1.0, d / beta))


smooth_l1_loss = defop(
    "smooth_l1_loss", _smooth_l1_fwd, promote="binary", self=_smooth_l1_grad,
    target=lambda grad, self, target, reduction, beta: -_smooth_l1_grad(grad, self, target,
                                                                       reduction, beta))


def _huber_fwd(xp, self, target, reduction, delta):
    d = xp.abs(self - target)
    return _reduce_arr(xp.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction)


def _huber_grad(grad, self, target, reduction, delta):
    # PyTorch's: -delta below -delta, delta above it, d between (a NaN d gives nan)
    from .pointwise import where
    d = self - target
    return _spread(grad, d, reduction) * where(d < -delta, -delta, where(d > delta, delta, d))


huber_loss = defop(
    "huber_loss", _huber_fwd, promote="binary", self=_huber_grad,
    target=lambda grad, self, target, reduction, delta: -_huber_grad(grad, self, target,
                                                                    reduction, delta))


def _soft_margin_fwd(xp, self, target, reduction):
    z = -target * self
    return _reduce_arr(xp.logaddexp(0, z), reduction)


def _soft_margin_grad_self(grad, self, target, reduction):
    s = (-target * self).sigmoid()
    return _spread(grad, s, reduction) * (-target) * s


def _soft_margin_grad_target(grad, self, target, reduction):
    s = (-target * self).sigmoid()
    return _spread(grad, s, reduction) * (-self) * s


soft_margin_loss = defop("soft_margin_loss", _soft_margin_fwd, promote="binary",
                         self=_soft_margin_grad_self, target=_soft_margin_grad_target)


def _bce_fwd(xp, self, target, weight, reduction):
    lx = xp.maximum(xp.log(self), -100)   # (log(0): quiet, as every op of this module)
    l1x = xp.maximum(xp.log1p(-self), -100)
    loss = -(target * lx + (1 - target) * l1x)
    if weight is not None:
        loss = loss * weight
    return _reduce_arr(loss, reduction)


def _bce_grad_self(grad, self, target, weight, reduction):
    from ..ops import clamp
    g = (self - target) / clamp((1 - self) * self, min=1e-12)
    if weight is not None:
        g = g * weight
    return _spread(grad, g, reduction) * g


def _bce_grad_target(grad, self, target, weight, reduction):
    from ..ops import clamp
    g = clamp((1 - self).log(), min=-100) - clamp(self.log(), min=-100)
    if weight is not None:
        g = g * weight
    return _spread(grad, g, reduction) * g


binary_cross_entropy = defop("binary_cross_entropy", _bce_fwd, promote="binary",
                             self=_bce_grad_self, target=_bce_grad_target)


def _softplus_neg(x):
    """log(1 + exp(-x)), stable: log1p(exp(-|x|)) + max(-x, 0)."""
    from .pointwise import relu
    return (1 + (-x.abs()).exp()).log() + relu(-x)


def _bcel_fwd(xp, self, target, weight, pos_weight, reduction):
    sp = xp.log1p(xp.exp(-xp.abs(self))) + xp.maximum(-self, 0)
    if pos_weight is not None:
        loss = (1 - target) * self + (1 + (pos_weight - 1) * target) * sp
    else:
        loss = (1 - target) * self + sp
    if weight is not None:
        loss = loss * weight
    return _reduce_arr(loss, reduction)


def _bcel_grad(grad, self, target, weight, pos_weight, reduction):
    s = self.sigmoid()
    if pos_weight is not None:
        lw = 1 + (pos_weight - 1) * target
        gx = (1 - target) - lw * (1 - s)
        gt = -self + (pos_weight - 1) * _softplus_neg(self)
        gp = target * _softplus_neg(self)
    else:
        gx, gt, gp = s - target, -self, None
    sp = _softplus_neg(self)
    raw = (1 - target) * self + (sp if pos_weight is None else
                                  (1 + (pos_weight - 1) * target) * sp)
    if weight is not None:
        gx, gt = gx * weight, gt * weight
        gp = gp * weight if gp is not None else None
    g = _spread(grad, gx, reduction)
    return g * gx, g * gt, (g * raw if weight is not None else None), \
        (g * gp if gp is not None else None)


binary_cross_entropy_with_logits = defop(
    "binary_cross_entropy_with_logits", _bcel_fwd, promote="binary", backward=_bcel_grad,
    inputs=("self", "target", "weight", "pos_weight"))
