"""adaptive_avg_pool2d as PyTorch's CPU kernel computes it (aten/src/ATen/native/cpu/
AdaptiveAvgPoolKernel.cpp): output (i, j) averages the window of rows floor(i H / oh) to
ceil((i + 1) H / oh) and the columns likewise, as a running sum over the window in row-major
order in the compute type (float32 for float16/bfloat16), divided by the window's height and
then by its width. The same values bit for bit; the gradient spreads each output's gradient
evenly over its window (the exact adjoint, through two averaging matrices)."""
import numpy as np

from .._backend import xp_of
from ._registry import defop
from . import _cascade

__all__ = ["adaptive_avg_pool2d"]


def _windows(size, out):
    """Each output index's window [start, end) along one dim (ATen's start_index, end_index)."""
    i = np.arange(out)  # host: window table
    return (i * size) // out, -(-((i + 1) * size) // out)


def _matrix(size, out):
    """(out, size): 1 / k over each output's window of k."""
    start, end = _windows(size, out)
    m = np.zeros((out, size))  # host: window table
    for i, (a, b) in enumerate(zip(start.tolist(), end.tolist())):
        m[i, a:b] = 1.0 / (b - a)
    return m


def _forward(xp, self, output_size):
    input = self
    dt = input.dtype
    ft = np.float64 if dt == np.float64 else np.float32
    x = input.astype(ft, copy=False)
    if x.ndim == 3:
        x = x[None]
    n, c, h, w = x.shape
    oh, ow = output_size
    out = xp.empty((n, c, oh, ow), ft)
    if out.size == 0:
        return out.reshape(input.shape[:-2] + (oh, ow)).astype(dt, copy=False)
    h0, h1 = _windows(h, oh)
    w0, w1 = _windows(w, ow)
    for kh in np.unique(h1 - h0).tolist():  # host: window table
        rows = np.flatnonzero(h1 - h0 == kh)  # host: window table
        ih = h0[rows][:, None] + np.arange(kh)  # host: window table
        for kw in np.unique(w1 - w0).tolist():  # host: window table
            cols = np.flatnonzero(w1 - w0 == kw)  # host: window table
            iw = w0[cols][:, None] + np.arange(kw)  # host: window table
            win = x[:, :, xp.asarray(ih.reshape(-1))][..., xp.asarray(iw.reshape(-1))]
            win = win.reshape(n, c, rows.size, kh, cols.size, kw)
            terms = xp.ascontiguousarray(win.transpose(3, 5, 0, 1, 2, 4)).reshape(
                kh * kw, n, c, rows.size, cols.size)
            if type(terms) is np.ndarray:    # (row-major order within the window, one by one)
                total = _cascade.sequential(terms, 0)
            else:
                total = terms.sum(axis=0)
            out[:, :, xp.asarray(rows)[:, None], xp.asarray(cols)[None, :]] = \
                total / ft(kh) / ft(kw)
    return out.reshape(input.shape[:-2] + (oh, ow)).astype(dt, copy=False)


def _grad(grad, self_shape, output_size):
    from .linalg import matmul
    from .._tensor import _make
    xp = xp_of(grad._data)
    dt = grad._data.dtype
    h, w = self_shape[-2:]
    mh = _make(xp.asarray(_matrix(h, output_size[0]).astype(dt)))
    mw = _make(xp.asarray(_matrix(w, output_size[1]).astype(dt)))
    return matmul(mh.t(), matmul(grad, mw))


adaptive_avg_pool2d = defop("adaptive_avg_pool2d", _forward,
                            node_name="AdaptiveAvgPool2DBackward0",
                            self=lambda grad, self_shape, output_size: _grad(
                                grad, self_shape, tuple(output_size)))
