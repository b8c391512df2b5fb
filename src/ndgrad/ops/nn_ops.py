"""Fused neural-network kernels: forward on xp, derivatives in ndgrad ops (see _registry.py).

Convolution is three bilinear ops that are each other's derivatives, so every order of
derivative stays in this closed family (Note [Convolution family]):

    y  = conv(x, w)                 dx = conv_transpose(gy, w)      dw = conv_weight(x, gy)
    x' = conv_transpose(g, w)       dg = conv(gx', w)               dw = conv_weight(gx', g)
    w' = conv_weight(x, g)          dx = conv_transpose(g, gw')     dg = conv(x, gw')

All three run on im2col columns laid out (C, *kernel, N, *out), built with one slice copy per
kernel tap (no 6-d transpose, no strided-view argmax), so that one BLAS matmul per group covers
the whole batch; with stride 1 in 2-d each tap's copy is one run per plane (Note [Flat
windows]), and the input gradient is the convolution with the flipped kernel; with a larger
stride col2im is the same tap loop adding slices; 1x1 convolutions without padding are plain
GEMMs. The batch is chunked so the im2col buffer fits the kept scratch. The kernels take any number of spatial dims (1-d callers
add a unit height; 3-d ones pass (D, H, W)). Padding is one (before, after) pair per spatial
dim.

Also here: linear (one matmul, AddmmBackward0), nll_loss over class indices (PyTorch's gather
and scatter kernels, its sums' order), take/index_add (gather and
scatter-add along a dim, each the other's derivative; used by embedding, pad and interpolate),
max pooling with indices (a running maximum over the kernel taps), whose backward is a
scatter-add whose derivative is the matching gather, and training-mode batch norm (one node;
its backward recomputes the batch statistics with ndgrad ops so that it is itself
differentiable), and the LSTM layer (one node for a whole sequence, Note [Fused LSTM layer]).
"""
import functools
import itertools
import math
import threading

from .._backend import numpy as _np, ufunc_accumulate, ufunc_at, keeping_format
from .._creation import zeros_like as _zeros_like
from ..autograd import grad_mode
from ._registry import defop, _scalar_array
from ._scratch import scratch as _scratch_slot, MIN as _SCRATCH_MIN
from . import _parallel as _par, _cascade
from .pointwise import select
from .linalg import few_rows_mm
from .reduction import _unreduce, _f16_acc, _sum_fwd
from .._dtype import np_half as _half

__all__ = ["conv2d", "conv_transpose2d", "conv2d_weight", "linear", "nll_loss_index",
           "max_pool2d", "max_pool3d",
           "take", "index_add", "batch_norm", "lstm_layer", "native_layer_norm",
           "native_layer_norm_backward"]

_SCRATCH_MAX = 1 << 24    # bytes of scratch kept between calls, per thread (_scratch)
_SCRATCH = threading.local()


# ---------------------------------------------------------------- convolution family

def _padded(xp, x, padding, value=0):
    """x inside a border of `value` (one (before, after) pair per spatial dim; a negative pad
    crops); x itself without one."""
    if any(a < 0 or b < 0 for a, b in padding):
        x = x[(slice(None), slice(None)) + tuple(
            slice(max(0, -a), n - max(0, -b)) for n, (a, b) in zip(x.shape[2:], padding))]
        padding = tuple((max(a, 0), max(b, 0)) for a, b in padding)
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


def _chunks(n, per_sample, itemsize):
    """Slices of the batch whose im2col columns (per_sample elements a sample) fit the kept
    scratch (_SCRATCH_MAX bytes): reused memory, no page faults (see _scratch)."""
    step = max(1, _SCRATCH_MAX // itemsize // max(per_sample, 1))
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


def _pointwise_input(x, kernel, stride, padding, out_hw):
    """For a 1x1 convolution without padding: the input positions it reads (x itself with
    stride 1, a strided view else), else None."""
    if any(k != 1 for k in kernel) or any(a or b for a, b in padding):
        return None
    sizes = x.shape[2:]
    out = tuple(out_hw) if out_hw is not None else \
        tuple((n - 1) // s + 1 for n, s in zip(sizes, stride))
    if out == sizes:
        return x
    return x[(slice(None), slice(None)) + tuple(
        slice(0, (o - 1) * s + 1, s) for o, s in zip(out, stride))]


def _flat_ok(stride, kernel):
    """Whether the windows come as whole runs of the flattened planes (Note [Flat windows])."""
    return len(kernel) == 2 and all(s == 1 for s in stride)


def _flat_padded(xp, x, padding, extra):
    """x (N, C, H, W) inside its padding (a negative pad crops), each plane flattened and
    followed by `extra` zeros: -> ((N, C, Hp * Wp + extra), (Hp, Wp))."""
    N, C = x.shape[:2]
    x = x[(slice(None), slice(None)) + tuple(
        slice(max(0, -a), n - max(0, -b)) for n, (a, b) in zip(x.shape[2:], padding))]
    sizes = tuple(n + max(a, 0) + max(b, 0) for n, (a, b) in zip(x.shape[2:], padding))
    P = math.prod(sizes)
    if sizes == x.shape[2:] and not extra and x.flags.c_contiguous:
        return x.reshape(N, C, P), sizes
    buf = xp.zeros((N, C, P + extra), dtype=x.dtype)
    buf[:, :, :P].reshape((N, C) + sizes)[(slice(None), slice(None)) + tuple(
        slice(max(a, 0), max(a, 0) + n) for n, (a, _) in zip(x.shape[2:], padding))] = x
    return buf, sizes


def _flat_im2col(xp, buf, sizes, kernel, dilation, L):
    """The windows of the flat padded planes buf (n, C, ...) as a contiguous (C, *kernel, n, L)
    array: one copy of a whole run per kernel tap."""
    n, C = buf.shape[:2]
    cols = _scratch(xp, (C,) + tuple(kernel) + (n, L), buf.dtype)
    taps = [(tap, tap[0] * dilation[0] * sizes[1] + tap[1] * dilation[1])
            for tap in itertools.product(*map(range, kernel))]

    def channels(lo, hi):   # (Note [Parallel pieces]: channels apart on several threads)
        for tap, start in taps:
            cols[(slice(lo, hi),) + tap] = buf[:, lo:hi, start:start + L].swapaxes(0, 1)
    if _par.worth(xp, cols.size, _par.GRAIN * 4):
        _par.run(channels, C, max(1, _par.GRAIN * 4 // (cols.size // C)), align=1)
    else:
        channels(0, C)
    return cols


# Note [Flat windows]
# With stride 1, the window tap (i, j) of a padded plane (Hp, Wp), flattened, is one run: the
# output (oh, ow) reads element (oh + i d) Wp + (ow + j d) = oh Wp + ow + (i d Wp + j d). So
# im2col computes the outputs over the full padded width (Ho x Wp, of which the last Wp - Wo
# columns of each row are dropped) and each tap is a copy of Ho Wp contiguous elements per
# plane, instead of Ho runs of Wo (NumPy pays ~10 ns a run: the copies of a 32x32 image's 3x3
# windows took 4 ms for 32 samples of 32 channels, 1 ms as runs). The planes carry
# d (kw - 1) zeros after them so that the last taps' runs stay inside. The weight gradient
# takes the output gradient with zeros in the dropped columns; the input gradient (stride 1) is
# the convolution of the output gradient with the flipped, transposed kernel.


def _conv_fwd(xp, input, weight, bias, stride, padding, dilation, groups, out_hw=None):
    """y[g] = w[g] @ cols[g]: one matmul per group and chunk, then back to (N, O, *out)."""
    O, Cg = weight.shape[:2]
    kernel = weight.shape[2:]
    K = Cg * math.prod(kernel)
    wm = weight.reshape(groups, O // groups, K)
    dt = xp.result_type(input, weight)
    pointwise = _pointwise_input(input, kernel, stride, padding, out_hw)
    if pointwise is not None:  # a 1x1 convolution: one GEMM per sample, no im2col
        N, P = input.shape[0], math.prod(pointwise.shape[2:])
        y = xp.matmul(wm, pointwise.reshape(N, groups, Cg, P))
        out = y.reshape((N, O) + pointwise.shape[2:])
        if bias is not None:
            out += bias.reshape((O,) + (1,) * len(kernel))
        return out.astype(dt, copy=False)
    if _flat_ok(stride, kernel):  # Note [Flat windows]
        buf, sizes = _flat_padded(xp, input, padding, dilation[1] * (kernel[1] - 1))
        N = buf.shape[0]
        out_hw = tuple(out_hw or (n - d * (k - 1) for n, k, d in zip(sizes, kernel, dilation)))
        L = out_hw[0] * sizes[1]
        out = xp.empty((N, O) + out_hw, dtype=dt)
        for sl in _chunks(N, groups * K * L, buf.itemsize):
            n = sl.stop - sl.start
            cols = _flat_im2col(xp, buf[sl], sizes, kernel, dilation, L)
            y = xp.matmul(wm, cols.reshape(groups, K, n * L))
            y = y.reshape(O, n, out_hw[0], sizes[1])[..., :out_hw[1]].swapaxes(0, 1)
            if bias is None:
                out[sl] = y
            else:
                xp.add(y, bias.reshape(O, 1, 1), out=out[sl])
        return out
    x = _padded(xp, input, padding)
    N = x.shape[0]
    out_hw = tuple(out_hw or _out_hw(x, kernel, stride, dilation))
    P = math.prod(out_hw)
    out = xp.empty((N, O) + out_hw, dtype=dt)
    for sl in _chunks(N, groups * K * P, x.itemsize):
        n = sl.stop - sl.start
        cols = _im2col(xp, x[sl], kernel, stride, dilation, out_hw)
        y = xp.matmul(wm, cols.reshape(groups, K, n * P))       # (G, Og, n*P)
        out[sl] = y.reshape((O, n) + out_hw).swapaxes(0, 1)
    if bias is not None:
        out += bias.reshape((O,) + (1,) * len(out_hw))
    return out


def _conv_tr_fwd(xp, input, weight, stride, padding, dilation, groups, out_hw):
    """The adjoint of conv in its input. With stride 1: the convolution of the input with the
    flipped, transposed kernel; else cols[g] = w[g].T @ x[g], then each kernel tap adds its
    slice of cols into the (padded) output (col2im)."""
    Cin, Cg = weight.shape[:2]
    kernel = weight.shape[2:]
    if all(s == 1 for s in stride):
        nd = len(kernel)
        w = weight.reshape((groups, Cin // groups, Cg) + tuple(kernel)).swapaxes(1, 2)
        w = w[(Ellipsis,) + (slice(None, None, -1),) * nd].reshape(
            (groups * Cg, Cin // groups) + tuple(kernel))
        pads = tuple((d * (k - 1) - p, o - i + p) for d, k, (p, _), o, i in zip(
            dilation, kernel, padding, out_hw, input.shape[2:]))
        return _conv_fwd(xp, input, w, None, stride, pads, dilation, groups, tuple(out_hw))
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
    for sl in _chunks(N, groups * K * P, full.itemsize):
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
    K, Og = Cg * math.prod(kernel), O // groups
    out_hw = tuple(grad_output.shape[2:])
    dt = xp.result_type(input, grad_output)
    pointwise = _pointwise_input(input, kernel, stride, padding, out_hw)
    if pointwise is not None:  # a 1x1 convolution: sum over samples of gy[n] @ x[n].T
        N, P = input.shape[0], math.prod(out_hw)
        g = grad_output.reshape(N, groups, Og, P)
        out = xp.matmul(g, pointwise.reshape(N, groups, Cg, P).swapaxes(-1, -2)).sum(0)
        return out.astype(dt, copy=False).reshape(weight_shape)
    out = xp.zeros((groups, Og, K), dtype=dt)
    if _flat_ok(stride, kernel):  # Note [Flat windows]
        buf, sizes = _flat_padded(xp, input, padding, dilation[1] * (kernel[1] - 1))
        N, C = buf.shape[:2]
        L = out_hw[0] * sizes[1]
        for sl in _chunks(N, C * math.prod(kernel) * L, buf.itemsize):
            n = sl.stop - sl.start
            cols = _flat_im2col(xp, buf[sl], sizes, kernel, dilation, L)
            g = xp.zeros((O, n, out_hw[0], sizes[1]), dtype=dt)
            g[..., :out_hw[1]] = grad_output[sl].swapaxes(0, 1)
            out += xp.matmul(g.reshape(groups, Og, n * L),
                             cols.reshape(groups, K, n * L).transpose(0, 2, 1))
        return out.reshape(weight_shape)
    x = _padded(xp, input, padding)
    N, C = x.shape[:2]
    P = math.prod(out_hw)
    for sl in _chunks(N, C * math.prod(kernel) * P, x.itemsize):
        n = sl.stop - sl.start
        cols = _im2col(xp, x[sl], kernel, stride, dilation, out_hw)
        g = grad_output[sl].swapaxes(0, 1).reshape(groups, Og, n * P)
        out += xp.matmul(g, cols.reshape(groups, K, n * P).transpose(0, 2, 1))
    return out.reshape(weight_shape)


# A convolution's bias gradient: the output gradient summed over every dim but the channels'.
# PyTorch's CPU convolution takes it from its backend (oneDNN's backward, its own order: not
# torch.sum's cascade, not NumPy's pairwise sum), so no order here gives PyTorch's bits and the
# fastest accurate one serves: each (sample, channel) plane a row of one matrix-vector product,
# then the samples' rows added (W6's (32, 8, 28, 28): 15 against 186 us through the cascade).
def _channel_sums_fwd(xp, self):
    N, C = self.shape[:2]
    P = math.prod(self.shape[2:])
    if self.dtype.char not in "fd" or not self.flags.c_contiguous or P < 2 or not self.size:
        dims = (0,) + tuple(range(2, self.ndim))   # (float16 accumulated in float32, ...)
        return _sum_dim_fwd(xp, self, dims, False)
    rows = xp.matmul(self.reshape(N * C, P), xp.ones(P, self.dtype))
    return xp.add.reduce(rows.reshape(N, C), axis=0)


_sum_dim_fwd = _f16_acc(_sum_fwd)
_channel_sums = defop("channel_sums", _channel_sums_fwd, node_name="SumBackward1",
                      self=lambda grad, self_shape: _unreduce(
                          grad, self_shape, (0,) + tuple(range(2, len(self_shape))), False))


conv2d = defop(
    "convolution", keeping_format(_conv_fwd, 2), promote="binary", node_name="ConvolutionBackward0",
    input=lambda grad, weight, input_shape, stride, padding, dilation, groups: conv_transpose2d(
        grad, weight, stride, padding, dilation, groups, tuple(input_shape[2:])),
    weight=lambda grad, input, weight_shape, stride, padding, dilation, groups: conv2d_weight(
        input, grad, tuple(weight_shape), stride, padding, dilation, groups),
    bias=lambda grad: _channel_sums(grad))

def _window_sums_fwd(xp, input, weight, stride, padding, out_hw):
    """Average pooling's window sums of the (M, 1, *sizes) input, in PyTorch's order: its
    kernels (cpu_avg_pool and the channels-last and 3-d ones) add a window's elements one
    after the other from zero, the last dim fastest; here each tap is one whole-array add over
    every window. Padding adds zeros, which change no such sum (it never holds -0). `weight`
    (ones of the window's shape) is there for the backward, the convolution's."""
    x = xp.pad(input, ((0, 0), (0, 0)) + tuple(padding))
    acc = None
    for tap in itertools.product(*(range(k) for k in weight.shape[2:])):
        at = (slice(None), slice(None)) + tuple(
            slice(t, t + s * (o - 1) + 1, s) for t, s, o in zip(tap, stride, out_hw))
        acc = x[at] + input.dtype.type(0) if acc is None else xp.add(acc, x[at], out=acc)
    return acc


# (the window sums of avg_pool: their backward spreads the gradient as the ones convolution's)
window_sums = defop(
    "avg_pool_window_sums", _window_sums_fwd, promote="binary", node_name="AvgPoolBackward0",
    inputs=("input",),
    input=lambda grad, weight, input_shape, stride, padding, out_hw: conv_transpose2d(
        grad, weight, stride, padding, (1,) * len(stride), 1, tuple(input_shape[2:])))


conv_transpose2d = defop(
    "convolution_transpose", keeping_format(_conv_tr_fwd, 2), promote="binary",
    node_name="ConvolutionBackward0",
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
    if input.ndim > 2 and input.flags.c_contiguous:  # (one GEMM over the rows, as addmm)
        out = few_rows_mm(xp, input.reshape(-1, input.shape[-1]), weight.T)
        out = out.reshape(input.shape[:-1] + out.shape[-1:])
    else:
        out = few_rows_mm(xp, input, weight.T)
    if bias is not None:
        if out.ndim and out.dtype == bias.dtype and bias.shape == out.shape[-1:]:
            out += bias
        else:
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

# nll_loss over class indices: PyTorch's kernels (nll_loss_out_frame, nll_loss2d_forward_out_frame
# and their backward), a gather forward and a scatter backward: O(positions) work and memory beside
# the input and its gradient, no (N, C) one-hot. A position is a target element: the batch's
# rows, times the spatial dims of (N, C, d1, ...) inputs. Arguments past `target`:
#   n       the reduction: None for 'none', 1 for the sum, the mean's divisor otherwise (the
#           number of positions kept, or their weights' total as PyTorch adds them)
#   weight  the classes' weights (C,), or None
#   valid   where a target is not ignore_index (target's shape, bool), or None: all are kept;
#           an ignored position's target holds any class (0)
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


_CASCADE_LEVELS = 8     # PyTorch's cascade_sum_num_levels (its level_power is 4 below 2^40)


def _nll_total(q):
    """PyTorch's sum of the losses q (nll_loss_out_frame, no weights, none ignored): element 0
    runs through all eight levels of its cascade into the last; then elements go one by one
    into level 0, which empties into level 1 every 16 elements, level 1 into level 2 every 16 of
    those, and so on; the levels are added up in order at the end. Every running sum here is
    an add.accumulate (in order by definition); each level's +0 start changes nothing but an
    all-zero sum's sign, which the final + 0 gives."""
    acc = _np.add.accumulate    # host: called for NumPy arrays only (_nll_reduce)
    levels = []
    cur = q[1:]
    for _ in range(_CASCADE_LEVELS - 1):      # (levels 0..6; what leaves 6 goes into 7)
        full = cur.shape[0] // 16
        if cur.shape[0] > full * 16:
            levels.append(acc(cur[full * 16:])[-1])
        if not full:
            cur = cur[:0]
            break
        cur = acc(cur[:full * 16].reshape(full, 16), 1)[:, -1]
    levels.append(acc(_np.concatenate([q[:1], cur]))[-1])  # host: as above
    return acc(_np.array(levels, q.dtype))[-1] + q.dtype.type(0)  # host: as above


def _nll_total_at(q, pos):
    """The same cascade where some positions are ignored: q holds the kept positions' terms in
    order, pos their positions. PyTorch's loop skips an ignored position whole, the levels'
    emptying included, so a level empties at a kept position b alone, into as many levels as
    b has trailing zero hex digits (all of them for b = 0). Level by level: each run of items
    up to one that empties the level is added in order (runs of one length at a time, one
    accumulate each) and goes on as an item of the next level; what follows the last such item
    stays."""
    acc = _np.add.accumulate    # host: as _nll_total
    low = pos & -pos            # (the lowest set bit; 0 for b = 0)
    depth = _np.full(pos.shape, _CASCADE_LEVELS - 1, _np.int64)  # host: as above
    nz = low > 0
    depth[nz] = _np.minimum(_np.log2(low[nz]).astype(_np.int64) // 4,  # host: as above
                            _CASCADE_LEVELS - 1)
    zero = q.dtype.type(0)
    levels = []
    for _ in range(_CASCADE_LEVELS - 1):
        ends = _np.flatnonzero(depth)           # host: as above
        rest = q[ends[-1] + 1:] if ends.size else q
        levels.append(acc(rest)[-1] if rest.size else zero)
        if not ends.size:
            q = q[:0]
            break
        starts = _np.concatenate(([0], ends[:-1] + 1))  # host: as above
        sums = _np.empty(ends.size, q.dtype)  # host: as above
        for at, pos in runs_by_length(starts, ends - starts + 1):
            sums[at] = acc(q[pos], 1)[:, -1]
        q, depth = sums, depth[ends] - 1
    levels.append(acc(q)[-1] if q.size else zero)
    return acc(_np.array(levels, zero.dtype))[-1] + zero  # host: as above


def runs_by_length(starts, lengths):
    """Runs of consecutive positions (host arrays: each run's start and length), grouped by
    length: for each length present, (the runs of that length, their (runs, length) block of
    positions). Each group is then one whole-array step, with no run padded to the longest."""
    for n in _np.unique(lengths[lengths > 0]):  # host: a loop over the distinct lengths
        at = _np.flatnonzero(lengths == n)      # host: layout
        yield at, starts[at, None] + _np.arange(n)  # host: layout


def nll_weight_total(xp, w, valid):
    """PyTorch's total weight for nll_loss's mean: the kept positions' weights (w: their classes'
    weights, target-shaped) added in the loss's cascade, in the weights' dtype."""
    if xp is not _np or w.dtype.itemsize < 4:
        return w[valid].sum() if valid is not None else w.sum()
    if valid is None:
        return _nll_total(w.reshape(-1))
    flat = valid.reshape(-1)
    return _nll_total_at(w.reshape(-1)[flat], _np.flatnonzero(flat))  # host: as above


def _nll_pick(xp, self, target):
    """self's entries at the targets' classes: (N,) for (N, C), target-shaped for (N, C, ...)."""
    if self.ndim == 2:
        return self[_nll_rows(xp, self.shape[0]), target]
    return xp.take_along_axis(self, target[:, None], axis=1)[:, 0]


def _nll_index_fwd(xp, self, target, n, weight=None, valid=None):
    picked = _nll_pick(xp, self, target)
    q = -picked
    if weight is not None:     # (-x * w, one rounding: the product's)
        q = xp.multiply(q, weight[target], out=q)
    if n is None:
        if valid is not None:
            q[~valid] = 0      # (ignored: 0, whatever the input holds there)
        return q
    if not q.size:             # (no target at all: PyTorch fills the mean with NaN)
        return xp.asarray(_np.nan if n != 1 else 0, self.dtype)
    if xp is _np and self.dtype.kind == "f" and self.dtype.itemsize >= 4:
        if valid is None:      # (PyTorch's order: the loss's last bits)
            total = _nll_total(q.reshape(-1))
        else:
            flat = valid.reshape(-1)
            total = _nll_total_at(q.reshape(-1)[flat], _np.flatnonzero(flat))  # host: as above
    else:
        total = xp.add.reduce(q[valid] if valid is not None else q.reshape(-1))
    return total / self.dtype.type(n) if n != 1 else total


def _nll_index_backward_fwd(xp, grad, self, target, n, weight=None, valid=None):
    out = xp.zeros(self.shape, grad.dtype)
    dt = grad.dtype.type
    if n is None:              # -w * grad at each position (PyTorch: value * grad_output)
        g = -grad if weight is None else xp.multiply(-weight[target], grad)
    else:                      # w * -(grad / total) (the sum: -grad)
        g = -(grad / dt(n)) if n != 1 else -grad
        if weight is not None:
            g = xp.multiply(weight[target], g)
        elif self.ndim == 2 or valid is not None:
            g = xp.broadcast_to(g, target.shape)
    if valid is not None:
        g = xp.where(valid, g, dt(0))
    if self.ndim == 2:
        out[_nll_rows(xp, self.shape[0]), target] = g
    else:   # (N, C, d...): position p = n D + j holds class t at (n C + t) D + j
        C, D = self.shape[1], math.prod(self.shape[2:])
        p = xp.arange(target.size)
        out.reshape(-1)[(p // D * C + target.reshape(-1)) * D + p % D] = \
            xp.broadcast_to(g, target.shape).reshape(-1)
    return out


# As PyTorch's nll_loss_backward, the result depends on `self` with a zero derivative, so a
# double backward records NllLossBackwardBackward0 (its graph is PyTorch's).
nll_loss_backward = defop(
    "nll_loss_backward", _nll_index_backward_fwd, node_name="NllLossBackwardBackward0",
    inputs=("grad", "self"),
    grad=lambda grad, target, n, weight=None, valid=None: nll_loss_index(grad, target, n,
                                                                         weight, valid),
    self=lambda grad: _zeros_like(grad))
nll_loss_index = defop(
    "nll_loss_index", _nll_index_fwd, node_name="NllLossBackward0", inputs=("self",),
    self=lambda grad, self, target, n, weight=None, valid=None: nll_loss_backward(
        grad, self, target, n, weight, valid))


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
    idx = index.reshape(-1)
    if idx.size:
        _scatter_add_rows(xp, o, idx, g)
    return out


_SCATTER_LAYERS = 64  # most repeats of one index taken layer by layer (then in blocks)
_SCATTER_BLOCK = 1 << 19  # elements of a block's padded array, at most (of 2^17-2^21 the
#                           fastest for 16 K rows of 384 over 65 indices: 6.7 ms)


def _scatter_add_rows(xp, out, idx, src):
    """out[idx[i]] += src[i] for every i in order, as PyTorch's sequential CPU loop rounds (an
    embedding's backward; `out` holds zeros). NumPy's add.at takes ~0.8 us a row; here the rows
    are added in layers: the first occurrence of every index, then the second, ... (no index
    twice in a layer, so each layer is one fancy-indexed add), as many layers as the most
    repeated index has occurrences; beyond _SCATTER_LAYERS of them, in blocks of layers
    (_scatter_add_blocks)."""
    order = xp.argsort(idx, kind="stable")
    si = idx.take(order)
    first = xp.empty(si.size, bool)
    first[0] = True
    xp.not_equal(si[1:], si[:-1], out=first[1:])
    pos = xp.arange(si.size)
    rank = pos - ufunc_accumulate(xp, xp.maximum, xp.where(first, pos, 0), 0)  # occurrence number
    layers = int(rank.max()) + 1
    if layers > _SCATTER_LAYERS:
        if math.prod(src.shape[1:]) < 2:   # (rows of one element: no ordered reduction)
            ufunc_at(xp, xp.add, out, idx, src)
        else:
            _scatter_add_blocks(xp, out, si, order, first, rank, src, layers)
        return
    by_layer = xp.argsort(rank, kind="stable")
    bounds = xp.cumsum(xp.bincount(rank, minlength=layers)).tolist()  # host: layer sizes
    rows, targets = order.take(by_layer), si.take(by_layer)
    lo = 0
    for hi in bounds:  # (one iteration per repeat, not per element)
        out[targets[lo:hi]] += src.take(rows[lo:hi], axis=0)
        lo = hi


def _scatter_add_blocks(xp, out, si, order, first, rank, src, layers):
    """_scatter_add_rows for indices repeated many times (a character-level model's embedding:
    16 K tokens over 65 symbols, ~2500 of them spaces), in blocks of layers: each index still
    active gets a padded row of its running total (out) and then its occurrences of the block in
    order, zeros after them; NumPy sums a middle axis one term after the other, so the sum down
    that axis is PyTorch's sequential sum (a trailing zero changes no such sum: from +0 it
    never reaches -0). A block is as many layers as keep its padded array under
    _SCATTER_BLOCK elements; where even two do not fit, one layer, as _scatter_add_rows adds
    them."""
    starts = xp.flatnonzero(first)
    counts = xp.diff(xp.append(starts, si.size))
    seg = xp.cumsum(first) - 1                           # each sorted row's index, numbered
    by_count = xp.argsort(-counts, kind="stable")        # (the active ones: a prefix)
    slot = xp.empty_like(by_count)
    slot[by_count] = xp.arange(by_count.size)
    keys = si.take(starts).take(by_count)
    active = xp.bincount(counts, minlength=layers + 1)[::-1].cumsum()[::-1].tolist()  # host:
    by_rank = xp.argsort(rank, kind="stable")            # active[k]: indices with > k - 1 rows
    rank_sorted = rank.take(by_rank)
    rows = order.take(by_rank)                           # src's rows, layer after layer
    width = math.prod(src.shape[1:])
    k = 0
    while k < layers:
        act = active[k + 1]                              # the indices with a row in layer k
        block = min(layers - k, _SCATTER_BLOCK // (act * width) - 1)
        lo, hi = (int(v) for v in xp.searchsorted(rank_sorted, [k, k + max(block, 1)]))
        if block < 2:
            out[si.take(by_rank[lo:hi])] += src.take(rows[lo:hi], axis=0)
            k += 1
            continue
        tgt = keys[:act]
        pad = xp.zeros((act, block + 1) + src.shape[1:], src.dtype)
        pad[:, 0] = out[tgt]
        at = by_rank[lo:hi]
        pad[slot.take(seg.take(at)), rank_sorted[lo:hi] - (k - 1)] = src.take(rows[lo:hi], axis=0)
        out[tgt] = xp.add.reduce(pad, axis=1)
        k += block


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
    ufunc_at(xp, xp.add, out.reshape(-1), flat.reshape(-1), grad.reshape(-1))   # windows may overlap
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


max_pool2d = defop("max_pool2d_with_indices", keeping_format(_max_pool_fwd), outputs=2,
                   nondiff_outputs=(1,),
                   node_name="MaxPool2DWithIndicesBackward0", self=_max_pool_grad)
max_pool3d = defop("max_pool3d_with_indices", keeping_format(_max_pool_fwd), outputs=2,
                   nondiff_outputs=(1,),
                   node_name="MaxPool3DWithIndicesBackward0", self=_max_pool_grad)


# ---------------------------------------------------------------- batch norm (training)

def _bn_dims(ndim):
    return (0,) + tuple(range(2, ndim))


def _bn_fwd(xp, input, weight, bias, eps):
    """Normalise over every dim but 1; also returns the batch mean and biased variance. Four
    passes: the sums, x - mean, the squares' sums (einsum: no temporary), then the scale and
    shift in place."""
    N, C = input.shape[:2]
    x = input.reshape(N, C, -1)
    m = N * x.shape[2]
    mean = x.sum(2).sum(0) / m
    xc = x - mean[:, None]
    var = xp.einsum("nci,nci->c", xc, xc) / m
    scale = 1 / xp.sqrt(var + eps)
    if weight is not None:
        scale = scale * weight
    xc *= scale[:, None]
    if bias is not None:
        xc += bias[:, None]
    return xc.reshape(input.shape).astype(input.dtype, copy=False), mean, var


def _bn_backward_fwd(xp, grad_out, input, weight, mean, var, eps):
    """native_batch_norm_backward (training): the gradients of input, weight and bias. With
    xc = x - mean and s = 1 / sqrt(var + eps): dx = w s (g - sum(g) / m) - w s^3 xc
    sum(g xc) / m, as a g + xc b + c with per-channel a, b, c."""
    N, C = input.shape[:2]
    x, g = input.reshape(N, C, -1), grad_out.reshape(N, C, -1)
    m = N * x.shape[2]
    s = 1 / xp.sqrt(var + eps)
    gsum = g.sum(2).sum(0)
    xc = x - mean[:, None]
    dot = xp.einsum("nci,nci->c", xc, g)
    ws = s if weight is None else s * weight
    xc *= (-ws * s * s * dot / m)[:, None]
    xc += (-ws * gsum / m)[:, None]
    gx = g * ws[:, None]
    gx += xc
    return gx.reshape(input.shape).astype(input.dtype, copy=False), dot * s, gsum


batch_norm_backward = defop("native_batch_norm_backward", _bn_backward_fwd, outputs=3,
                            differentiable=False)


def _bn_backward(grad, input, weight, eps, result1, result2):
    from ..autograd.grad_mode import is_grad_enabled
    g = grad[0]
    if not is_grad_enabled():  # (no graph of the backward wanted: the fused kernel)
        return batch_norm_backward(g, input, weight, result1, result2, eps)
    # recomputes the statistics with ndgrad ops, so double backward works
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


batch_norm = defop("native_batch_norm", keeping_format(_bn_fwd), promote="binary", outputs=3,
                   nondiff_outputs=(1, 2), node_name="NativeBatchNormBackward0",
                   backward=_bn_backward, inputs=("input", "weight", "bias"))


# ---------------------------------------------------------------- layer norm
# PyTorch's graph: native_layer_norm (NativeLayerNormBackward0; outputs, mean and rstd, the
# statistics keeping the normalized dims as size 1) whose backward is the op
# native_layer_norm_backward (NativeLayerNormBackwardBackward0), each one kernel of a few
# passes over the (rows, N) view. With xh = (x - mean) rstd and P(v) = rstd (v - m(v) -
# xh m(v xh)) (m: the mean over a row; P is symmetric), the backward of g = grad_out * weight
# is P(g) for the input, sums of grad_out * xh and grad_out over the rows for weight and bias.
# Its own derivative, for double backward, is written below with ndgrad ops on statistics
# recomputed from the input, so every order follows.

def _ln_rows(x, normalized_shape):
    n = math.prod(normalized_shape)
    return x.reshape(-1, n) if n else x.reshape(0, 0), n


def _row_dot(xp, a, b):
    """sum(a * b, axis=1) of two (rows, n) arrays, as a batch of dot products (NumPy reduces a
    short contiguous last axis row by row, ~3x slower)."""
    return xp.matmul(a[:, None, :], b[:, :, None]).reshape(-1)


_MEAN_VECTORS = {}  # (n, NumPy dtype) -> read-only NumPy vector of 1 / n (layer norm's row means)


def _mean_vector(xp, n, dtype):
    """A vector of n values 1 / n: NumPy's cached (a fresh one costs as much as the product
    with a short row: generation's (1, T, 128) layer norms)."""
    if xp is not _np or n > 1 << 16:
        return xp.full(n, 1.0 / n, dtype)
    key = (n, dtype)
    v = _MEAN_VECTORS.get(key)
    if v is None:
        v = _MEAN_VECTORS[key] = xp.full(n, 1.0 / n, dtype)
        v.flags.writeable = False
    return v


def _number(xp, v, dtype):
    """The Python number v as NumPy's ufuncs take it fastest: a cached 0-d array of dtype, the
    value NumPy would convert v to (~0.25 us less a call: generation's small arrays). Anything
    else (a NumPy float64 scalar, which NumPy would not round to dtype first) stays as it is."""
    return _scalar_array(v, dtype) if xp is _np and v.__class__ in _PY_NUMBERS else v


_PY_NUMBERS = frozenset((int, float))


def _ln_fwd(xp, input, normalized_shape, weight, bias, eps):
    k = len(normalized_shape)
    stat_shape = input.shape[:input.ndim - k] + (1,) * k
    dt = input.dtype
    x, n = _ln_rows(input.astype("float32") if _half(dt) else input, normalized_shape)
    if x.size == 0:
        nan = xp.full(stat_shape, xp.nan if n == 0 else 0.0, dtype=dt)
        return xp.empty(input.shape, dt), nan, nan.copy()
    mean = x @ _mean_vector(xp, n, x.dtype)  # (row sums as a matrix-vector product)
    out = x - mean[:, None]
    rstd = _row_dot(xp, out, out)
    rstd /= _number(xp, n, rstd.dtype)
    rstd += _number(xp, eps, rstd.dtype)
    xp.sqrt(rstd, out=rstd)
    xp.divide(_number(xp, 1.0, rstd.dtype), rstd, out=rstd)
    out *= rstd[:, None]
    if weight is not None:
        out *= weight.reshape(-1)
    if bias is not None:
        out += bias.reshape(-1)
    return (out.astype(dt, copy=False).reshape(input.shape),
            mean.astype(dt, copy=False).reshape(stat_shape),
            rstd.astype(dt, copy=False).reshape(stat_shape))


def _ln_bwd_fwd(xp, grad_out, input, normalized_shape, mean, rstd, weight, bias, eps):
    dt = input.dtype
    opm = "float32" if _half(dt) else dt
    x, n = _ln_rows(input.astype(opm, copy=False), normalized_shape)
    go, _ = _ln_rows(xp.broadcast_to(grad_out, input.shape).astype(opm, copy=False),
                     normalized_shape)
    r = rstd.reshape(-1, 1).astype(opm, copy=False)
    xh = xp.subtract(x, mean.reshape(-1, 1).astype(opm, copy=False),
                     out=_scratch_slot(xp, x.shape, x.dtype, "ln_xh"))  # (Note [Scratch slots])
    xh *= r
    gw = gb = xp.zeros(0, dt)
    ones = xp.ones(x.shape[0], opm)  # (column sums as vector-matrix products)
    g = _scratch_slot(xp, x.shape, x.dtype, "ln_g")
    w = c = None
    if weight is not None:
        w = weight.reshape(-1).astype(opm, copy=False)
        gw = (ones @ xp.multiply(go, xh, out=g)).astype(dt, copy=False).reshape(weight.shape)
        c = g @ w   # (the rows' sums of g xh below, from grad_out xh at hand: one GEMV)
    if bias is not None:
        gb = (ones @ go).astype(dt, copy=False).reshape(bias.shape)
    if w is not None:
        xp.multiply(go, w, out=g)
    else:
        g[...] = go
    if n:
        if c is None:
            c = _row_dot(xp, g, xh)
        c /= n
        gi = xh * c[:, None]
        gi += (g @ _mean_vector(xp, n, opm))[:, None]
        xp.subtract(g, gi, out=gi)  # g - m(g) - xh m(g xh)
        gi *= r
    else:
        gi = g
    return gi.astype(dt, copy=False).reshape(input.shape), gw, gb


def _ln_double(grad, grad_out, input, normalized_shape, weight, bias, eps):
    """native_layer_norm_backward's derivative: with A, Bw, Bb the gradients of its outputs,
    grad_out gets w P(A) + Bw xh + Bb, weight sum(grad_out P(A)), and the input
    P(Bw grad_out) - rstd (m(A P(g)) xh + m(g xh) P(A) + m(A xh) P(g))."""
    A, Bw, Bb = grad
    dims = tuple(range(input.dim() - len(normalized_shape), input.dim()))
    rows = tuple(range(input.dim() - len(normalized_shape)))
    mean = input.mean(dims, keepdim=True)
    xc = input - mean
    r = ((xc * xc).mean(dims, keepdim=True) + eps).rsqrt()
    xh = xc * r

    def P(v):
        return r * (v - v.mean(dims, keepdim=True) - xh * (v * xh).mean(dims, keepdim=True))

    g = grad_out if weight is None else grad_out * weight
    pa, pg = P(A), P(g)
    g_out = pa if weight is None else pa * weight
    g_x = -r * ((A * pg).mean(dims, keepdim=True) * xh + (g * xh).mean(dims, keepdim=True) * pa
                + (A * xh).mean(dims, keepdim=True) * pg)
    g_w = None
    if weight is not None:
        g_out = g_out + Bw * xh
        g_x = g_x + P(Bw * grad_out)
        g_w = (grad_out * pa).sum(rows) if rows else grad_out * pa
    if bias is not None:
        g_out = g_out + Bb
    return g_out, g_x, None, None, g_w, None


native_layer_norm_backward = defop(
    "native_layer_norm_backward", _ln_bwd_fwd, promote="binary", outputs=3,
    node_name="NativeLayerNormBackwardBackward0", backward=_ln_double,
    inputs=("grad_out", "input", "mean", "rstd", "weight", "bias"))


def _ln_grads(grad, input, normalized_shape, weight, bias, eps, result1, result2):
    gi, gw, gb = native_layer_norm_backward(grad[0], input, normalized_shape, result1, result2,
                                            weight, bias, eps)
    return gi, None if weight is None else gw, None if bias is None else gb


native_layer_norm = defop(
    "native_layer_norm", _ln_fwd, promote="binary", outputs=3, nondiff_outputs=(1, 2),
    node_name="NativeLayerNormBackward0", backward=_ln_grads,
    inputs=("input", "weight", "bias"))


# ---------------------------------------------------------------- scaled dot-product attention
# PyTorch's fused CPU kernel: _scaled_dot_product_flash_attention_for_cpu(q, k, v, dropout_p,
# is_causal, attn_mask, scale) -> (out, logsumexp), ScaledDotProductFlashAttentionForCpuBackward0,
# whose backward recomputes the probabilities from logsumexp. Here that backward is itself an
# op with a derivative (PyTorch's raises "derivative for
# aten::_scaled_dot_product_flash_attention_for_cpu_backward is not implemented"), written with
# ndgrad ops below, so every order works. Per (batch, head), with c the scale and M the additive
# mask: S = c Q K^T + M, P = softmax(S) (a row with no allowed key gives zeros, as PyTorch's),
# O = P V; backward dV = P^T dO, dS = P (dO V^T - rowsum(dO O)), dQ = c dS K, dK = c dS^T Q.
# Grouped-query attention (fewer key/value heads) repeats the key/value heads for the products
# and sums their gradients over each group.
#
# Note [Attention's forward, keys-major]
# The forward lays its scores out transposed, S^T = c K Q^T + M^T (keys by queries): each
# query's maximum and total are then reductions over the second-last axis, which NumPy runs as
# element-wise passes over whole rows, where over the last axis it reduces every short row on
# its own (GPT's (16, 4, 64, 64) scores, one thread: the maximum 141 against 261 us, the total
# 87 against 130); O = (S^T)^T V is the same GEMM with a transposed operand. The same values
# (each score the same dot product; the totals summed in another order, so O and logsumexp
# move by an ulp or so). The backward works in the same layout (Note [Attention's kept
# probabilities]).
_CAUSAL = {}  # (L, S, dtype, xp, keys_major) -> the additive causal mask (0 on and below the
              # diagonal, -inf above), or its transpose


def _causal_mask(xp, L, S, dtype, keys_major=False):
    """The (L, S) additive causal mask, or its transpose (S, L) laid out contiguously."""
    key = (L, S, dtype, xp, keys_major)  # (a dtype object or a name: either is a key of its own)
    m = _CAUSAL.get(key)
    if m is None:
        m = xp.tril(xp.full((S, L), -xp.inf, dtype=dtype), -1) if keys_major else \
            xp.triu(xp.full((L, S), -xp.inf, dtype=dtype), 1)
        if L * S <= 1 << 16:
            _CAUSAL[key] = m
    return m


def _kv_groups(q, k):
    return q.shape[-3] // k.shape[-3] if k.shape[-3] else 1


def _repeat_heads(xp, t, groups):
    return t if groups == 1 else xp.repeat(t, groups, axis=-3)


def _sum_groups(t, groups):
    if groups == 1:
        return t
    return t.reshape(t.shape[:-3] + (t.shape[-3] // groups, groups) + t.shape[-2:]).sum(axis=-3)


def _sdpa_scores(xp, q, k, is_causal, attn_mask, scale, slot, keys_major=False):
    """S = c Q K^T + M (with the causal mask), laid out (..., queries, keys); keys_major: its
    transpose, laid out (..., keys, queries) (Note [Attention's forward, keys-major])."""
    lead = q.shape[:-2]
    if lead != k.shape[:-2]:
        lead = _np.broadcast_shapes(lead, k.shape[:-2])  # host: shapes
    L, S = q.shape[-2], k.shape[-2]
    shape = lead + ((S, L) if keys_major else (L, S))
    # (small scores: a fresh array, without the slot's bookkeeping: Note [Scratch slots])
    out = _scratch_slot(xp, shape, q.dtype, slot) if \
        math.prod(shape) * q.itemsize >= _SCRATCH_MIN else None
    a, b = (k, q) if keys_major else (q, k)
    s = xp.matmul(a, xp.swapaxes(b, -1, -2), out=out)
    s *= _number(xp, scale, s.dtype)
    if is_causal:
        s += _causal_mask(xp, L, S, s.dtype, keys_major)
    if attn_mask is not None:
        s += xp.swapaxes(attn_mask, -1, -2) if keys_major else attn_mask
    return s


def _sdpa_opmath(dt):
    return "float32" if _half(dt) else dt


def _over_heads(kernel):
    """kernel(xp, *arrays, dropout_p, is_causal, attn_mask, scale) run on pieces of the heads
    (Note [Parallel pieces]), as PyTorch's CPU kernels split attention over them, where every
    array has the same leading (batch, head) dims (logsumexp: one trailing dim, the others
    two) and there is no mask, and each head's GEMMs are small enough for BLAS to run them on
    one thread; elsewhere (masks, grouped heads, small inputs or large heads, other array
    modules) the kernel runs whole. Its outputs are arrays over the same leading dims. The
    keyword `keep` (Note [Attention's kept probabilities]), a C-contiguous array over the same
    leading dims, goes to each piece as its part."""
    nargs = kernel.__code__.co_varnames.index("dropout_p") - 1   # (the arrays after xp)

    def run(xp, *args, **kw):   # (kw: `outs`, arrays the pieces write into; `keep`)
        a = args[0]   # (a quick no first: the work below 2 pieces, counting the query's rows)
        if a.ndim < 3 or (a.size // max(a.shape[-1], 1)) * a.shape[-2] * 8 < 2 * _par.GRAIN:
            return kernel(xp, *args, **kw)
        arrays, rest = args[:nargs], args[nargs:]
        lead = arrays[0].shape[:-2]
        k = len(lead)
        if rest[2] is not None or k == 0 or any(
                a.shape[:k] != lead or a.ndim - k not in (1, 2) for a in arrays):
            return kernel(xp, *args, **kw)
        mats = [a.shape[-2:] for a in arrays if a.ndim - k == 2]  # (not logsumexp's rows)
        L = max(m[0] for m in mats)
        work = math.prod(lead) * L * L * 8  # (element-passes)
        if not _par.worth(xp, work) or L * L * max(m[1] for m in mats) >= _par.BLAS_ONE_THREAD:
            return kernel(xp, *args, **kw)
        n, flat = lead[0], lead[0] < 2   # (pieces of the first dim are views: no copies)
        keep = kw.get("keep")
        if flat:
            n = math.prod(lead)
            arrays = [a.reshape((n,) + a.shape[k:]) for a in arrays]
            if keep is not None:   # (C-contiguous: a view)
                keep = keep.reshape((n,) + keep.shape[k:])
        outs = kw.get("outs")
        if outs is not None and not flat:   # (each piece writes its part of the outputs)
            _par.run(lambda lo, hi: kernel(xp, *[a[lo:hi] for a in arrays], *rest,
                                           outs=[o[lo:hi] for o in outs],
                                           keep=None if keep is None else keep[lo:hi]), n,
                     grain=max(1, n * _par.GRAIN // work), align=1)
            return outs
        parts = _par.run(lambda lo, hi: kernel(xp, *[a[lo:hi] for a in arrays], *rest,
                                               keep=None if keep is None else keep[lo:hi]), n,
                         grain=max(1, n * _par.GRAIN // work), align=1)
        res = [xp.concatenate(o) for o in zip(*parts)]
        res = tuple(o.reshape(lead + o.shape[1:]) if flat else o for o in res)
        if outs is None:
            return res
        for o, r in zip(outs, res):
            o[...] = r
        return outs
    return functools.wraps(kernel)(run)   # (defop reads the kernel's parameter names)


@_over_heads
def _sdpa_fwd(xp, query, key, value, dropout_p, is_causal, attn_mask, scale, *, keep=None):
    """(O, logsumexp); `keep`: an array that receives the probabilities keys-major, P^T (Note
    [Attention's kept probabilities])."""
    dt = query.dtype
    opm = _sdpa_opmath(dt)
    if opm is dt:
        q, k, v = query, key, value
    else:
        q, k, v = (a.astype(opm, copy=False) for a in (query, key, value))
    groups = _kv_groups(q, k)
    if groups != 1:
        k, v = _repeat_heads(xp, k, groups), _repeat_heads(xp, v, groups)
    mask = None if attn_mask is None else attn_mask.astype(opm, copy=False)
    # (Note [Attention's forward, keys-major]; Note [Scratch slots])
    s = _sdpa_scores(xp, q, k, is_causal, mask, scale, "sdpa_s", keys_major=True)
    if s.shape[-2] == 0:  # (no keys: zeros, as PyTorch's)
        return (xp.zeros(q.shape[:-1] + v.shape[-1:], dt),
                xp.full(q.shape[:-1], xp.inf, opm))
    if keep is not None:
        keep[...] = s
    m = s.max(axis=-2, keepdims=True)   # (each query's largest score, over the keys)
    dead = m == -xp.inf   # (queries with no allowed key; a query's largest term adds exp(0) = 1
    if not dead.any():    # to its total, so only these can total 0)
        dead = None
    else:
        m[dead] = 0.0     # (exp gives zeros there)
    s -= m
    xp.exp(s, out=s)
    total = xp.add.reduce(s, axis=-2, keepdims=True)
    out = xp.matmul(xp.swapaxes(s, -1, -2), v)
    lse = xp.log(total)
    lse += m
    if dead is not None:
        total[dead] = 1.0
        lse[dead] = xp.inf  # (so the backward's exp(S - lse) is 0 there too)
    if keep is not None:   # (the backward's passes on the same scores: its bits)
        keep -= lse
        xp.exp(keep, out=keep)
    total = xp.swapaxes(total, -1, -2)   # (a column: one total a query)
    if _heads_inside(query):  # (PyTorch's output follows such a query's layout)
        out = xp.divide(out, total, out=_empty_heads_last(xp, out.shape, out.dtype))
    else:
        out /= total
    return out.astype(dt, copy=False), lse[..., 0, :]


def _heads_inside(q):
    """Whether the 4-d query is laid out as (batch, length, heads, dim), the heads of one
    projection split by view and transpose (nanoGPT's): PyTorch's CPU kernel writes its output
    in that layout too, whose transpose(1, 2).contiguous() is then no copy."""
    if q.ndim != 4 or q.shape[1] < 2 or q.shape[2] < 2:
        return False
    st = q.strides
    return st[0] >= st[2] > st[1] > st[3] > 0


@_over_heads
def _sdpa_bwd_heads(xp, grad_out, query, key, value, out, logsumexp, dropout_p, is_causal,
                    attn_mask, scale, *, outs=None, keep=None):
    """dQ, dK, dV, laid out as PyTorch's (_heads_last); or the products straight into `outs`
    (three arrays of the inputs' shapes and dtype), which the caller gives only where q and k
    have as many heads and the dtype is its own opmath (_sdpa_bwd_fwd). Keys-major as the
    forward (Note [Attention's kept probabilities]): P^T from `keep`, or computed again."""
    dt = query.dtype
    opm = _sdpa_opmath(dt)
    do, q, k, v, o = (a.astype(opm, copy=False) for a in (grad_out, query, key, value, out))
    groups = _kv_groups(q, k)
    kr, vr = _repeat_heads(xp, k, groups), _repeat_heads(xp, v, groups)
    if keep is None:
        mask = None if attn_mask is None else attn_mask.astype(opm, copy=False)
        pt = _sdpa_scores(xp, q, kr, is_causal, mask, scale, "sdpa_s", keys_major=True)
        pt -= logsumexp[..., None, :]
        xp.exp(pt, out=pt)
    else:
        pt = keep
    into = (None, None, None) if outs is None else outs
    dv = xp.matmul(pt, do, out=into[2])
    dst = xp.matmul(vr, xp.swapaxes(do, -1, -2),
                    out=_scratch_slot(xp, pt.shape, pt.dtype, "sdpa_ds"))
    dst -= xp.matmul(do[..., None, :], o[..., :, None])[..., 0, 0][..., None, :]  # rowsum(dO O)
    dst *= pt
    ds = xp.swapaxes(dst, -1, -2)
    if into[0] is not None:   # (BLAS writes the strided outputs: the same bits as a copy)
        dq = xp.matmul(ds, kr, out=into[0])
        dq *= scale
        dk = xp.matmul(xp.swapaxes(ds, -1, -2), q, out=into[1])
        dk *= scale
        return outs
    dq = _heads_last(xp, xp.matmul(ds, kr), scale)
    dk = xp.matmul(xp.swapaxes(ds, -1, -2), q)
    if groups == 1:
        dk, dv = _heads_last(xp, dk, scale), _heads_last(xp, dv)
    else:
        dk *= scale
        dk, dv = (_heads_last(xp, _sum_groups(a, groups)) for a in (dk, dv))
    return dq.astype(dt, copy=False), dk.astype(dt, copy=False), dv.astype(dt, copy=False)


def _sdpa_bwd_fwd(xp, grad_out, query, key, value, out, logsumexp, dropout_p, is_causal,
                  attn_mask, scale, probs=None):
    """The attention backward (_sdpa_bwd_heads over the heads) into its gradients, laid out as
    PyTorch's (_heads_last) and, for a query, key and value split from one projection, as
    views of one array in that projection's layout (Note [Attention's gradients in one
    array]). probs: the forward's _KeptProbs, or None."""
    args = (xp, grad_out, query, key, value, out, logsumexp, dropout_p, is_causal, attn_mask,
            scale)
    keep = None if probs is None else probs.of(query, key)
    if _kv_groups(query, key) != 1 or _sdpa_opmath(query.dtype) != query.dtype:
        return tuple(_heads_last(xp, a) for a in _sdpa_bwd_heads(*args, keep=keep))
    return tuple(_sdpa_bwd_heads(*args, outs=_sdpa_grad_arrays(xp, query, key, value),
                                 keep=keep))


# Note [Attention's kept probabilities]
# PyTorch's fused attention keeps only logsumexp and computes the probabilities again in its
# backward (flash attention: no (L, S) array a head survives the forward), and so does ndgrad's
# for large inputs. A GPT step's backward spent ~0.55 ms a layer (one thread) on that: the
# scores' GEMM again (~0.4 ms: 64 small GEMMs a layer, each mostly call overhead), its scale,
# mask, subtraction and exp. Where the inputs require grad and the probabilities have at most
# _KEEP_MAX elements (4 MiB of float32 a call; GPT's (16, 4, 64, 64) is 1 MiB), `sdpa_fused`
# hands the forward a `_KeptProbs` holder, a non-Tensor argument the node keeps (as gelu's
# Note [GELU's saved Phi]), and the forward leaves P^T there: its scores copied before the
# softmax's passes, minus logsumexp, exp'd, ~0.1 ms a layer. Those are the backward's own
# passes on the same scores (the same GEMM on the same arrays, the same mask and logsumexp),
# so the backward's results are the same bits with the holder or without it. The backward
# works keys-major (P^T's layout): dV = P^T dO, dS^T = P^T (V dO^T - rowsum(dO O)), dQ = c dS K,
# dK = c dS^T Q.
_KEEP_MAX = 1 << 20   # elements


class _KeptProbs:
    """P^T of an attention forward (`pt`, its opmath dtype) and the query and key arrays it
    belongs to."""
    __slots__ = ("q", "k", "pt")

    def __init__(self):
        self.q = self.k = self.pt = None

    def of(self, q, k):
        """P^T for the arrays q and k, if this holder has it."""
        return self.pt if self.q is q and self.k is k else None


def _sdpa_fused_fwd(xp, query, key, value, dropout_p, is_causal, attn_mask, scale, probs=None):
    keep = None
    if probs is not None and query.shape[-2] and key.shape[-2]:
        shape = query.shape[:-2] + (key.shape[-2], query.shape[-2])
        keep = xp.empty(shape, _sdpa_opmath(query.dtype))
        probs.q, probs.k, probs.pt = query, key, keep
    return _sdpa_fwd(xp, query, key, value, dropout_p, is_causal, attn_mask, scale, keep=keep)


# Note [Attention's gradients in one array]
# nanoGPT's attention takes q, k and v from one projection, c_attn(x).split(C, dim=2), each
# viewed as (B, T, heads, dim) and transposed to (B, heads, T, dim): three views of one (B, T, 3C)
# array, side by side. Their gradients meet again in the split's backward, which joins them
# with cat along the split's dim (PyTorch's SplitBackward0 copies them there: 141 us a layer in
# a GPT step). The attention's backward writes its three gradients, each in PyTorch's layout
# (heads last), as views of one (B, T, 3, heads, dim) array in that case: the transposes' and
# views' backwards keep them views, and the split's backward (ops/shape.py, `_whole`) finds
# that they tile that array in order and hands it on as the joined gradient, no copy, when
# nothing but those views holds the array (reference counts: gradients a caller passed in as
# slices of its own array are copied, as cat would). Nothing writes into a gradient the engine
# does not own (reference counts prove ownership, and a view's base is held by every view), so
# sharing the memory with gradients a hook kept is safe.

def _sdpa_grad_arrays(xp, query, key, value):
    """Empty arrays for dQ, dK, dV (the inputs' shapes, the query's dtype, heads last): views of
    one array where the three inputs are adjacent views of one (Note [Attention's gradients in
    one array])."""
    dt = query.dtype
    if query.ndim != 4:
        return [xp.empty(a.shape, dt) for a in (query, key, value)]
    if xp is _np and query.shape == key.shape == value.shape and \
            query.dtype == key.dtype == value.dtype and _heads_inside(query):
        b, h, n, d = query.shape
        st, step = query.strides, h * d * query.itemsize
        if key.strides == value.strides == st and st[3] == query.itemsize and \
                st[1] == d * query.itemsize and st[2] == 3 * step and st[0] == n * st[2]:
            at = query.__array_interface__["data"][0]
            if key.__array_interface__["data"][0] == at + step and \
                    value.__array_interface__["data"][0] == at + 2 * step:
                whole = xp.empty((b, n, 3, h, d), dt)
                return [whole[:, :, i].swapaxes(1, 2) for i in range(3)]
    return [_empty_heads_last(xp, a.shape, dt) for a in (query, key, value)]


def _empty_heads_last(xp, shape, dtype):
    """An empty (batch, heads, length, dim) array laid out as (batch, length, heads, dim)."""
    b, h, n, d = shape
    return xp.empty((b, n, h, d), dtype).swapaxes(1, 2)


def _heads_last(xp, a, scale=None):
    """a (times scale), a 4-d (batch, heads, length, dim) gradient, laid out as (batch, length,
    heads, dim): PyTorch's CPU attention backward allocates its three gradients so whatever
    the inputs' layout (nanoGPT's heads, split from one projection by view and transpose, then
    get gradients whose transpose back is contiguous: the view backward copies nothing). The
    scale's pass writes the new layout; a gradient laid out so already is returned as it is."""
    if a.ndim != 4 or a.swapaxes(1, 2).flags.c_contiguous:
        if scale is not None:
            a *= scale
        return a
    out = _empty_heads_last(xp, a.shape, a.dtype)
    if scale is None:
        out[...] = a
    else:
        xp.multiply(a, scale, out=out)
    return out


def _sdpa_double(grad, grad_out, query, key, value, is_causal, attn_mask, scale):
    """The derivative of the attention backward (dQ, dK, dV) given the gradients Aq, Ak, Av of
    its outputs, with G = c (Aq K^T + Q Ak^T), r = rowsum(G P), H = P (G - r), dP = dO V^T,
    D = rowsum(P dP), dS = P (dP - D), Gp = G (dP - D) - r dP + dO Av^T and
    dL/dS = P (Gp - rowsum(P Gp)): dO gets H V + P Av, V gets H^T dO, Q gets c (dS Ak + dL/dS K),
    K gets c (dS^T Aq + dL/dS^T Q). The probabilities are recomputed with ndgrad ops, so this
    is differentiable again."""
    from .activation import softmax
    from .pointwise import where
    from .._tensor import _make
    from .._backend import xp_of
    aq, ak, av = grad
    groups = _kv_groups(query, key)
    K, V = key, value
    if groups > 1:
        K, V = key.repeat_interleave(groups, -3), value.repeat_interleave(groups, -3)
        ak, av = ak.repeat_interleave(groups, -3), av.repeat_interleave(groups, -3)
    S = (query @ K.transpose(-2, -1)) * scale
    if is_causal:
        S = S + _make(_causal_mask(xp_of(S._data), S.shape[-2], S.shape[-1], S._data.dtype))
    if attn_mask is not None:
        S = S + attn_mask
    dead = (S == -_np.inf).all(-1, keepdim=True)
    P = where(dead, 0.0, softmax(where(dead, 0.0, S), -1))
    dP = grad_out @ V.transpose(-2, -1)
    dPD = dP - (P * dP).sum(-1, keepdim=True)
    dS = P * dPD
    G = (aq @ K.transpose(-2, -1) + query @ ak.transpose(-2, -1)) * scale
    r = (G * P).sum(-1, keepdim=True)
    H = P * (G - r)
    Gp = G * dPD - r * dP + grad_out @ av.transpose(-2, -1)
    dLdS = P * (Gp - (P * Gp).sum(-1, keepdim=True))
    g_out = H @ V + P @ av
    g_q = (dS @ ak + dLdS @ K) * scale
    g_k = (dS.transpose(-2, -1) @ aq + dLdS.transpose(-2, -1) @ query) * scale
    g_v = H.transpose(-2, -1) @ grad_out
    if groups > 1:
        shape = key.shape[:-3] + (key.shape[-3], groups) + key.shape[-2:]
        g_k, g_v = g_k.reshape(shape).sum(-3), g_v.reshape(shape).sum(-3)
    return g_out, g_q, g_k, g_v, None, None, None


sdpa_flash_backward = defop(
    "_scaled_dot_product_flash_attention_for_cpu_backward", _sdpa_bwd_fwd, promote=None,
    outputs=3, node_name="ScaledDotProductFlashAttentionForCpuBackwardBackward0",
    backward=_sdpa_double,
    inputs=("grad_out", "query", "key", "value", "out", "logsumexp", "attn_mask"))


def _sdpa_grads(grad, query, key, value, result, dropout_p, is_causal, attn_mask, scale, probs):
    return sdpa_flash_backward(grad[0], query, key, value, result[0], result[1], dropout_p,
                               is_causal, attn_mask, scale, probs)


sdpa_flash = defop(
    "_scaled_dot_product_flash_attention_for_cpu", _sdpa_fused_fwd, promote=None, outputs=2,
    nondiff_outputs=(1,), node_name="ScaledDotProductFlashAttentionForCpuBackward0",
    backward=_sdpa_grads, inputs=("query", "key", "value"))


def sdpa_fused(query, key, value, is_causal, attn_mask, scale):
    """The fused attention's output (sdpa_flash), its probabilities kept for the backward where
    that pays (Note [Attention's kept probabilities])."""
    if grad_mode._state.enabled and (query._requires_grad or key._requires_grad or
                                     value._requires_grad):
        qs, ks = query._data.shape, key._data.shape
        if math.prod(qs[:-1]) * ks[-2] <= _KEEP_MAX:
            return sdpa_flash(query, key, value, 0.0, is_causal, attn_mask, scale,
                              _KeptProbs())[0]
    return sdpa_flash(query, key, value, 0.0, is_causal, attn_mask, scale)[0]


# ---------------------------------------------------------------- LSTM layer
# Note [Fused LSTM layer]
# PyTorch runs a float32 nn.LSTM on the CPU through oneDNN: one mkldnn_rnn_layer per layer and
# direction, a single MkldnnRnnLayerBackward0 node for the whole sequence, whose backward is one
# kernel, or, when a graph of the backward is wanted, mkldnn_rnn_layer_differentiable_backward:
# the gates recomputed and the backward through time written with differentiable ops. The same
# here. The forward projects every step's input in one GEMM, then runs the recurrence with one
# GEMM per step (h @ w_hh.T, all four gates) and keeps the activations in the workspace (result
# 3, bytes as PyTorch's). The backward through time (_lstm_bptt) is one text run on arrays by
# the kernel (from the workspace) and on Tensors by the differentiable backward (from the
# recomputed gates); after the loop the weight gradients are one GEMM each over all steps.

class _ArrayOps:
    """The ops the LSTM text (_lstm_run, _lstm_bptt) needs, on the arrays of one module xp."""

    def __init__(self, xp):
        self.xp = xp
        self.tanh = xp.tanh

    def sigmoid(self, x):    # PyTorch's formula, 1 / (1 + exp(-x)), in one temporary
        xp = self.xp
        y = xp.negative(x)
        xp.exp(y, out=y)
        y += 1
        return xp.divide(1, y, out=y)

    def cat(self, xs, dim):
        return self.xp.concatenate(xs, dim)

    def transposed(self, w):
        return self.xp.ascontiguousarray(w.T)

    def stack(self, xs, dim):
        return self.xp.stack(xs, dim)


class _TensorOps:
    """... and on Tensors, recorded (the differentiable backward)."""

    def __init__(self):
        from .pointwise import sigmoid, tanh
        from .shape import cat, stack
        self.sigmoid, self.tanh, self.cat, self.stack = sigmoid, tanh, cat, stack

    @staticmethod
    def transposed(w):
        return w.t().contiguous()


def _lstm_order(S, reverse):
    return range(S - 1, -1, -1) if reverse else range(S)


def _lstm_run(ops, gi, hx, cx, w_hh, reverse):
    """The recurrence over gi (S, N, 4H), every step's input projection with both biases:
    -> (per step (i, f, g, o, c_prev, c, tanh(c), h_prev), h_n, c_n). The sigmoid runs over
    the whole pre-activation row (g's quarter unused): fewer, larger calls per step."""
    S, H = gi.shape[0], hx.shape[-1]
    w_t = ops.transposed(w_hh)  # (a GEMM with a contiguous right operand: 58 us a step of
    #                             (20, 200) x (200, 800) against 86 through the transposed view)
    steps = [None] * S
    h, c = hx, cx
    for t in _lstm_order(S, reverse):
        a = gi[t] + h @ w_t
        s = ops.sigmoid(a)
        i, f, o = s[:, :H], s[:, H:2 * H], s[:, 3 * H:]
        g = ops.tanh(a[:, 2 * H:3 * H])
        c_new = f * c + i * g
        tc = ops.tanh(c_new)
        steps[t] = (i, f, g, o, c, c_new, tc, h)
        h, c = o * tc, c_new
    return steps, h, c


def _lstm_bptt(ops, gates, c_prev, tc, grad_output, grad_hy, grad_cy, w_hh, reverse):
    """The backward through time from every step's gates (S, N, 4H: i, f, g, o), c_{t-1} and
    tanh(c_t) (S, N, H): -> (the gates' pre-activation gradients (S, N, 4H), the gradients of
    h_0 and c_0). The factors that do not depend on the recurrence are computed for all steps
    at once; each step is then a few calls."""
    S, N, H = tc.shape
    i, f, g, o = (gates[:, :, k * H:(k + 1) * H] for k in range(4))
    k_c = o * (1 - tc * tc)                                    # dc += dh * k_c
    k_a = ops.cat([g * i * (1 - i), c_prev * f * (1 - f), i * (1 - g * g)], 2)   # times dc
    k_o = tc * o * (1 - o)                                     # times dh
    dh, dc = grad_hy, grad_cy
    das = [None] * S
    for t in _lstm_order(S, not reverse):
        dh = grad_output[t] + dh
        dc = dc + dh * k_c[t]
        da = ops.cat([(dc[:, None] * k_a[t].reshape(N, 3, H)).reshape(N, 3 * H),
                      dh * k_o[t]], 1)
        das[t] = da
        dh = da @ w_hh
        dc = dc * f[t]
    return ops.stack(das, 0), dh, dc


def _lstm_layer_fwd(xp, input, weight0, weight1, weight2, weight3, hx_, cx_, reverse,
                    batch_sizes, mode, hidden_size, num_layers, has_biases, bidirectional,
                    batch_first, train):
    """mkldnn_rnn_layer for LSTM: -> (output (S, N, H), h_n, c_n, workspace)."""
    S, N, I = input.shape
    H = hidden_size
    gi = xp.matmul(input.reshape(S * N, I), weight0.T).reshape(S, N, 4 * H)
    gi += weight2 + weight3
    steps, h, c = _lstm_run(_ArrayOps(xp), gi, hx_, cx_, weight1, reverse)
    # per step: i, f, g, o (4H), c (H), tanh(c) (H), h (H)
    ws = xp.empty((S, N, 7 * H), dtype=gi.dtype)
    for t, (i, f, g, o, _, c_t, tc, _) in enumerate(steps):
        row = ws[t]
        row[:, :H], row[:, H:2 * H], row[:, 2 * H:3 * H], row[:, 3 * H:4 * H] = i, f, g, o
        row[:, 4 * H:5 * H], row[:, 5 * H:6 * H] = c_t, tc
        xp.multiply(o, tc, out=row[:, 6 * H:])
    return ws[:, :, 6 * H:].copy(), h, c, ws.reshape(-1).view(xp.uint8)


def _lstm_saved(xp, ws, hx, cx, reverse):
    """From the workspace: every step's gates, c_{t-1}, tanh(c_t) and h_{t-1}."""
    S, N, H7 = ws.shape
    H = H7 // 7
    c, h = ws[:, :, 4 * H:5 * H], ws[:, :, 6 * H:]
    if reverse:     # (the previous step is the next one in time)
        c_prev = xp.concatenate([c[1:], cx[None]], 0)
        h_prev = xp.concatenate([h[1:], hx[None]], 0)
    else:
        c_prev = xp.concatenate([cx[None], c[:-1]], 0)
        h_prev = xp.concatenate([hx[None], h[:-1]], 0)
    return ws[:, :, :4 * H], c_prev, ws[:, :, 5 * H:6 * H], h_prev


def _lstm_layer_backward_fwd(xp, input, weight0, weight1, hx_, cx_, workspace, grad_output,
                             grad_hy, grad_cy, reverse):
    """mkldnn_rnn_layer_backward: -> the gradients of (input, weight0, weight1, weight2,
    weight3, hx_, cx_)."""
    S, N, I = input.shape
    H = hx_.shape[-1]
    ws = workspace.view(input.dtype).reshape(S, N, 7 * H)
    gates, c_prev, tc, h_prev = _lstm_saved(xp, ws, hx_, cx_, reverse)
    da, dh, dc = _lstm_bptt(_ArrayOps(xp), gates, c_prev, tc, grad_output, grad_hy, grad_cy,
                            weight1, reverse)
    da2 = da.reshape(S * N, 4 * H)
    dw0 = da2.T @ input.reshape(S * N, I)
    dw1 = da2.T @ h_prev.reshape(S * N, H)
    db = da2.sum(0)
    return (da2 @ weight0).reshape(S, N, I), dw0, dw1, db, db.copy(), dh, dc


lstm_layer_backward = defop("mkldnn_rnn_layer_backward", _lstm_layer_backward_fwd, outputs=7,
                            differentiable=False)


def _lstm_layer_backward(grad, input, weight0, weight1, weight2, weight3, hx_, cx_, result,
                         reverse):
    from ..autograd.grad_mode import is_grad_enabled
    if not is_grad_enabled():
        return lstm_layer_backward(input, weight0, weight1, hx_, cx_, result[3], grad[0],
                                   grad[1], grad[2], reverse)
    # mkldnn_rnn_layer_differentiable_backward: the gates recomputed with ndgrad ops
    ops = _TensorOps()
    S, N, I = input.shape
    H = hx_.shape[-1]
    gi = input @ weight0.T + (weight2 + weight3)
    steps, _, _ = _lstm_run(ops, gi, hx_, cx_, weight1, reverse)
    gates = ops.stack([ops.cat(s[:4], 1) for s in steps], 0)
    c_prev, tc = (ops.stack([s[k] for s in steps], 0) for k in (4, 6))
    da, dh, dc = _lstm_bptt(ops, gates, c_prev, tc, grad[0], grad[1], grad[2], weight1,
                            reverse)
    da2 = da.reshape(S * N, 4 * H)
    h_prev = ops.stack([s[7] for s in steps], 0).reshape(S * N, H)
    db = da2.sum(0)
    return (da @ weight0, da2.T @ input.reshape(S * N, I), da2.T @ h_prev, db, db, dh, dc)


lstm_layer = defop(
    "mkldnn_rnn_layer", _lstm_layer_fwd, promote="binary", outputs=4, nondiff_outputs=(3,),
    node_name="MkldnnRnnLayerBackward0", backward=_lstm_layer_backward,
    inputs=("input", "weight0", "weight1", "weight2", "weight3", "hx_", "cx_"))


# ---------------------------------------------------------------- pointwise losses
# One node each (MseLossBackward0, ...), as in PyTorch. `reduction` is 0 none, 1 mean, 2 sum;
# each formula scales the elementwise derivative by the output gradient (spread back over the
# elements for mean/sum), written with ndgrad ops so that double backward works.

def _spread(grad, like, reduction):
    if reduction == 1:
        return grad / like.numel()
    return grad


def _reduce_arr(loss, reduction):
    """apply_loss_reduction: the elementwise losses' mean or sum as torch.mean/sum compute them
    (PyTorch's cascade for float32/float64 on the host: ops/_cascade.py)."""
    if reduction == 0:
        return loss
    if _half(loss.dtype):   # (a half loss computed in its own steps: added in float32)
        return _reduce_arr(loss.astype("float32"), reduction).astype(loss.dtype)
    total = _cascade.sum(loss, None) if loss.__class__ is _np.ndarray and loss.size else None
    if total is None:
        return loss.mean() if reduction == 1 else loss.sum()
    return total / loss.dtype.type(loss.size) if reduction == 1 else total


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
    return _reduce_arr(select(xp, d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction)


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
    h = 0.5
    if _half(self.dtype):   # (bfloat16, unwidened: _registry._BF16_STEPS) PyTorch's kernel is
        # bfloat16 arithmetic, delta and 0.5 in bfloat16, every step rounded
        delta, h = (xp.asarray(v, self.dtype) for v in (delta, h))
    d = xp.abs(self - target)
    return _reduce_arr(select(xp, d < delta, h * d * d, delta * (d - h * delta)), reduction)


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
    # PyTorch composes the loss of ops (log_sigmoid, rsub, mul_, sub_, mean), each rounding to
    # the dtype: for the half types, which arrive here unwidened (_registry._F16_NATIVE,
    # _BF16_STEPS), the softplus is computed in float32 and rounded once, as its log_sigmoid
    # kernel, and every other step rounds
    half = _half(self.dtype)
    x = self.astype("float32") if half else self
    sp = xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(-x, 0)
    sp = sp.astype(self.dtype) if half else sp
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
