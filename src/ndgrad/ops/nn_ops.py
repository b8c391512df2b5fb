"""Fused neural-network kernels: forward on xp, derivatives in ndgrad ops (see _registry.py).

Convolution is three bilinear ops that are each other's derivatives, so every order of
derivative stays in this closed family (Note [Convolution family]):

    y  = conv(x, w)                 dx = conv_transpose(gy, w)      dw = conv_weight(x, gy)
    x' = conv_transpose(g, w)       dg = conv(gx', w)               dw = conv_weight(gx', g)
    w' = conv_weight(x, g)          dx = conv_transpose(g, gw')     dg = conv(x, gw')

All three run on im2col windows (strided views from `sliding_window_view`) and one BLAS
tensordot per group; the batch is chunked so the im2col buffer stays bounded. Spatial ops are
2-d; 1-d callers add a unit height. Padding is given as ((top, bottom), (left, right)).
"""
from .._tensor import Tensor, _make
from ..autograd.function import Function
from ._registry import defop

__all__ = ["conv2d", "conv_transpose2d", "conv2d_weight", "linear", "log_softmax", "softmax",
           "nll_loss", "max_pool2d", "take", "index_add", "cat", "stack", "logsumexp", "amax"]

_IM2COL_BUDGET = 1 << 25  # elements of one im2col chunk (256 MiB of float64)


# ---------------------------------------------------------------- convolution family

def _windows(xp, x, kernel, stride, padding, dilation, out_hw=None):
    """(N, C, Ho, Wo, kh, kw) strided view of the zero-padded input."""
    (pt, pb), (pl, pr) = padding
    if pt or pb or pl or pr:
        x = xp.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    kh, kw = kernel
    dh, dw = dilation
    sh, sw = stride
    eh, ew = dh * (kh - 1) + 1, dw * (kw - 1) + 1
    win = xp.lib.stride_tricks.sliding_window_view(x, (eh, ew), axis=(2, 3))
    win = win[:, :, ::sh, ::sw, ::dh, ::dw]
    if out_hw is not None:
        win = win[:, :, :out_hw[0], :out_hw[1]]
    return win


def _chunks(n, per_sample):
    step = max(1, _IM2COL_BUDGET // max(per_sample, 1))
    return [slice(i, min(i + step, n)) for i in range(0, n, step)]


def _conv_fwd(xp, input, weight, bias, stride, padding, dilation, groups, out_hw=None):
    O, Cg, kh, kw = weight.shape
    N = input.shape[0]
    win = _windows(xp, input, (kh, kw), stride, padding, dilation, out_hw)
    Ho, Wo = win.shape[2], win.shape[3]
    dtype = xp.result_type(input, weight)
    out = xp.empty((N, O, Ho, Wo), dtype=dtype)
    Og = O // groups
    for sl in _chunks(N, input.shape[1] * Ho * Wo * kh * kw):
        for g in range(groups):
            w = win[sl, g * Cg:(g + 1) * Cg]
            r = xp.tensordot(w, weight[g * Og:(g + 1) * Og], axes=([1, 4, 5], [1, 2, 3]))
            out[sl, g * Og:(g + 1) * Og] = r.transpose(0, 3, 1, 2)
    if bias is not None:
        out += bias.reshape(1, -1, 1, 1)
    return out


def _conv_tr_fwd(xp, input, weight, stride, padding, dilation, groups, out_hw):
    """The adjoint of conv in its input: scatter each kernel tap's contribution (col2im)."""
    Cin, Cg, kh, kw = weight.shape
    N, _, Hi, Wi = input.shape
    sh, sw = stride
    dh, dw = dilation
    (pt, _), (pl, _) = padding
    H, W = out_hw
    fh = max((Hi - 1) * sh + dh * (kh - 1) + 1, pt + H)
    fw = max((Wi - 1) * sw + dw * (kw - 1) + 1, pl + W)
    dtype = xp.result_type(input, weight)
    full = xp.zeros((N, Cg * groups, fh, fw), dtype=dtype)
    Ig = Cin // groups
    for g in range(groups):
        # (N, Hi, Wi, Cg, kh, kw)
        cols = xp.tensordot(input[:, g * Ig:(g + 1) * Ig], weight[g * Ig:(g + 1) * Ig],
                            axes=([1], [0]))
        cols = cols.transpose(0, 3, 4, 5, 1, 2)
        tgt = full[:, g * Cg:(g + 1) * Cg]
        for i in range(kh):
            for j in range(kw):
                tgt[:, :, i * dh:i * dh + (Hi - 1) * sh + 1:sh,
                    j * dw:j * dw + (Wi - 1) * sw + 1:sw] += cols[:, :, i, j]
    return full[:, :, pt:pt + H, pl:pl + W]


def _conv_w_fwd(xp, input, grad_output, weight_shape, stride, padding, dilation, groups):
    O, Cg, kh, kw = weight_shape
    win = _windows(xp, input, (kh, kw), stride, padding, dilation, grad_output.shape[2:])
    Og = O // groups
    dtype = xp.result_type(input, grad_output)
    out = xp.zeros(weight_shape, dtype=dtype)
    for sl in _chunks(input.shape[0], input.shape[1] * grad_output.shape[2]
                      * grad_output.shape[3] * kh * kw):
        for g in range(groups):
            out[g * Og:(g + 1) * Og] += xp.tensordot(
                grad_output[sl, g * Og:(g + 1) * Og], win[sl, g * Cg:(g + 1) * Cg],
                axes=([0, 2, 3], [0, 2, 3]))
    return out


conv2d = defop(
    "convolution", _conv_fwd, promote="binary", node_name="ConvolutionBackward0",
    input=lambda grad, weight, input_shape, stride, padding, dilation, groups: conv_transpose2d(
        grad, weight, stride, padding, dilation, groups, tuple(input_shape[2:])),
    weight=lambda grad, input, weight_shape, stride, padding, dilation, groups: conv2d_weight(
        input, grad, tuple(weight_shape), stride, padding, dilation, groups),
    bias=lambda grad: grad.sum((0, 2, 3)))

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


# ---------------------------------------------------------------- softmax family

def _lse(xp, a, dim):
    m = xp.max(a, axis=dim, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)
    return m + xp.log(xp.sum(xp.exp(a - m), axis=dim, keepdims=True))


def _log_softmax_fwd(xp, self, dim):
    return self - _lse(xp, self, dim)


def _softmax_fwd(xp, self, dim):
    e = xp.exp(self - xp.max(self, axis=dim, keepdims=True))
    return e / xp.sum(e, axis=dim, keepdims=True)


log_softmax = defop(
    "_log_softmax", _log_softmax_fwd, promote="float", node_name="LogSoftmaxBackward0",
    self=lambda grad, result, dim: grad - result.exp() * grad.sum(dim, keepdim=True))

softmax = defop(
    "_softmax", _softmax_fwd, promote="float", node_name="SoftmaxBackward0",
    self=lambda grad, result, dim: result * (grad - (grad * result).sum(dim, keepdim=True)))


def _logsumexp_fwd(xp, self, dim, keepdim=False):
    r = _lse(xp, self, dim)
    return r if keepdim else xp.squeeze(r, axis=dim)


def _logsumexp_grad(grad, self, result, dim, keepdim):
    if not keepdim:
        grad, result = grad.unsqueeze(dim), result.unsqueeze(dim)
    return grad * (self - result).exp()


logsumexp = defop("logsumexp", _logsumexp_fwd, promote="float", self=_logsumexp_grad)


def _amax_fwd(xp, self, dim, keepdim=False):
    return xp.max(self, axis=dim, keepdims=keepdim)


def _amax_grad(grad, self, result, dim, keepdim):
    if not keepdim:
        grad, result = grad.unsqueeze(dim), result.unsqueeze(dim)
    mask = (self == result).to(grad.dtype)
    return grad * mask / mask.sum(dim, keepdim=True)


amax = defop("amax", _amax_fwd, self=_amax_grad)


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


# ---------------------------------------------------------------- gather / scatter along a dim

def _take_fwd(xp, self, index, dim):
    return xp.take(self, index, axis=dim)


def _index_add_fwd(xp, grad, index, dim, size):
    shape = list(grad.shape)
    k = index.ndim
    out_shape = shape[:dim] + [size] + shape[dim + k:]
    g = grad.reshape(shape[:dim] + [-1] + shape[dim + k:])
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
    """Returns (values, flat indices into each input plane)."""
    N, C, H, W = self.shape
    neg = xp.asarray(-xp.inf, dtype=self.dtype) if self.dtype.kind == "f" else \
        xp.iinfo(self.dtype).min
    (pt, pb), (pl, pr) = padding
    x = xp.pad(self, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=neg)
    win = _windows(xp, x, kernel, stride, ((0, 0), (0, 0)), dilation, out_hw)
    Ho, Wo = win.shape[2], win.shape[3]
    kh, kw = kernel
    flat = win.reshape(N, C, Ho, Wo, kh * kw)
    arg = xp.argmax(flat, axis=-1)
    vals = xp.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
    ki, kj = arg // kw, arg % kw
    rows = xp.arange(Ho).reshape(-1, 1) * stride[0] + ki * dilation[0] - pt
    cols = xp.arange(Wo).reshape(1, -1) * stride[1] + kj * dilation[1] - pl
    return vals, (rows * W + cols).astype(xp.int64)


def _pool_scatter_fwd(xp, grad, indices, hw):
    N, C = grad.shape[:2]
    L = hw[0] * hw[1]
    off = (xp.arange(N * C).reshape(N, C, 1) * L)
    flat = (indices.reshape(N, C, -1) + off).reshape(-1)
    out = xp.bincount(flat, weights=grad.reshape(-1), minlength=N * C * L)
    return out.astype(grad.dtype, copy=False).reshape(N, C, hw[0], hw[1])


def _pool_gather_fwd(xp, self, indices):
    N, C = self.shape[:2]
    flat = self.reshape(N, C, -1)
    return xp.take_along_axis(flat, indices.reshape(N, C, -1), axis=-1).reshape(indices.shape)


pool_scatter = defop("max_pool_scatter", _pool_scatter_fwd, node_name="MaxPool2DWithIndicesBackwardBackward0",
                     grad=lambda grad, indices: pool_gather(grad, indices))
pool_gather = defop("max_pool_gather", _pool_gather_fwd, node_name="GatherBackward0",
                    self=lambda grad, indices, self_shape: pool_scatter(
                        grad, indices, tuple(self_shape[2:])))


def _max_pool_grad(grad, result, self_shape):
    return pool_scatter(grad[0], result[1], tuple(self_shape[2:]))


max_pool2d = defop("max_pool2d_with_indices", _max_pool_fwd, outputs=2, nondiff_outputs=(1,),
                   node_name="MaxPool2DWithIndicesBackward0", self=_max_pool_grad)


# ---------------------------------------------------------------- cat / stack

class Cat(Function):
    @staticmethod
    def forward(ctx, dim, *tensors):
        import numpy
        ctx.dim = dim
        ctx.sizes = [t.shape[dim] for t in tensors]
        arrays = [t._data for t in tensors]
        xp = numpy if type(arrays[0]) is numpy.ndarray else __import__("cupy")
        from .. import _dtype as D
        target = D.result_type(*tensors) if len(tensors) > 1 else tensors[0].dtype
        return _make(xp.concatenate([a.astype(target.np, copy=False) for a in arrays], axis=dim))

    @staticmethod
    def backward(ctx, grad):
        out, start = [None], 0
        pre = (slice(None),) * ctx.dim
        for s in ctx.sizes:
            out.append(grad[pre + (slice(start, start + s),)])
            start += s
        return tuple(out)


Cat._backward_cls.__name__ = Cat._backward_cls.__qualname__ = "CatBackward0"


def cat(tensors, dim=0):
    from .._tensor import _wrap_dim
    tensors = list(tensors)
    dim = _wrap_dim(dim, tensors[0].ndim)
    return Cat.apply(dim, *tensors)


def stack(tensors, dim=0):
    from .._tensor import _wrap_dim
    tensors = list(tensors)
    dim = _wrap_dim(dim, tensors[0].ndim + 1)
    return cat([t.unsqueeze(dim) for t in tensors], dim)
