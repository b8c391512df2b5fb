"""adaptive_avg_pool2d and 3d as PyTorch's CPU kernels compute them (aten/src/ATen/native/cpu/
AdaptiveAvgPoolKernel.cpp): output (i, j) averages the window of rows floor(i H / oh) to
ceil((i + 1) H / oh) and the columns likewise, as a running sum over the window in row-major
order in the compute type (float32 for float16/bfloat16), divided by the window's height and
then by its width. The same values bit for bit; the gradient spreads each output's gradient
evenly over its window (the exact adjoint, through two averaging matrices)."""
import itertools

import numpy as np

from .._backend import keeping_format
from ._registry import defop
from . import _cascade
from .upsample import through_matrices

__all__ = ["adaptive_avg_pool2d", "adaptive_avg_pool3d"]


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
    """The pooled array: outputs grouped by their windows' sizes (at most a few per dim), each
    group's windows gathered with the window's elements first, then summed one by one."""
    dt = self.dtype
    ft = np.float64 if dt == np.float64 else np.float32
    nd = len(output_size)
    x = self.astype(ft, copy=False)
    if x.ndim == nd + 1:
        x = x[None]
    lead = x.shape[:2]
    out = xp.empty(lead + tuple(output_size), ft)
    if out.size == 0:
        return out.reshape(self.shape[:-nd] + tuple(output_size)).astype(dt, copy=False)
    groups = []                                  # per dim: [(window size, outputs, indices)]
    for size, o in zip(x.shape[2:], output_size):
        lo, hi = _windows(size, o)
        groups.append([(k, np.flatnonzero(hi - lo == k),  # host: window table
                        lo[hi - lo == k][:, None] + np.arange(k))  # host: window table
                       for k in np.unique(hi - lo).tolist()])  # host: window table
    for combo in itertools.product(*groups):
        win = x
        for d, (k, _, idx) in enumerate(combo):   # (gather dim by dim: (.., outs, k, ..))
            win = xp.take(win, xp.asarray(idx.reshape(-1)), axis=2 + 2 * d)
            win = win.reshape(win.shape[:2 + 2 * d] + (idx.shape[0], k) +
                              win.shape[3 + 2 * d:])
        # window axes first in row-major order, then the batch, channel and output axes
        order = [3 + 2 * d for d in range(nd)] + [0, 1] + [2 + 2 * d for d in range(nd)]
        ks = [k for k, _, _ in combo]
        terms = xp.ascontiguousarray(win.transpose(order)).reshape(
            (-1,) + lead + tuple(len(rows) for _, rows, _ in combo))
        total = _cascade.sequential(terms, 0) if type(terms) is np.ndarray else \
            terms.sum(axis=0)
        for k in ks:                             # (divided by each window size in turn)
            total = total / ft(k)
        at = tuple(xp.asarray(rows).reshape((-1,) + (1,) * (nd - 1 - d))
                   for d, (_, rows, _) in enumerate(combo))
        out[(slice(None), slice(None)) + at] = total
    return out.reshape(self.shape[:-nd] + tuple(output_size)).astype(dt, copy=False)


def _grad(grad, self_shape, output_size):
    """Each output's gradient spread evenly over its window: one averaging matrix per dim."""
    nd = len(output_size)
    return through_matrices(grad, [_matrix(size, o) for size, o in
                                            zip(self_shape[-nd:], output_size)])


def _op(name, node, keeps):
    """keeps: the result takes the input's channels-last format (ATen's 2-d kernel does; its
    3-d kernel writes a contiguous result)."""
    return defop(name, keeping_format(_forward) if keeps else _forward, node_name=node,
                 self=lambda grad, self_shape, output_size: _grad(grad, self_shape,
                                                                  tuple(output_size)))


adaptive_avg_pool2d = _op("adaptive_avg_pool2d", "AdaptiveAvgPool2DBackward0", True)
adaptive_avg_pool3d = _op("adaptive_avg_pool3d", "AdaptiveAvgPool3DBackward0", False)
