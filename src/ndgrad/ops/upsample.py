"""Resampling ops behind nn.functional.interpolate's linear, bilinear, trilinear and bicubic
modes, with and without antialias: PyTorch's CPU kernels (aten/src/ATen/native/cpu/
UpSampleKernel.cpp) followed operation for operation, so results are PyTorch's bit for bit.

Note [upsample rounding]
~~~~~~~~~~~~~~~~~~~~~~~~
PyTorch computes an output element as a weighted sum of its taps in the compute type (float32
for float16/bfloat16/float32, double for float64), and its x86 builds (AVX2, AVX-512) compile
every `a * b + c` of that C++ into a fused multiply-add. Which product is fused follows the
compiler's rule: in `p0 + p1` of two products the first one is. So, per kernel (t: the taps'
values, w: their weights):

- tables (each spatial dim): the scale in the compute type ((in - 1) / (out - 1) with
  align_corners, else 1 / scale_factor when given, else in / out); the source index
  fma(scale, i + 0.5, -0.5) (clamped at 0 for the linear modes) or scale * i; index floor(src)
  (at most in - 1) and lambda = clamp(src - index, 0, 1) (weights 1 - lambda, lambda, stored in
  the input's dtype); the cubic weights by Keys' polynomials (A = -0.75) in fused form.
- the generic kernel (linear 1-d, trilinear, bilinear with a large output, bicubic): dim by dim
  from the first, fma(t0, w0, t1 * w1) for two taps, fma(t3, w3, fma(t2, w2, fma(t0, w0,
  t1 * w1))) for four, the taps of the next dim nested inside.
- bilinear with out_h + out_w <= 128 (or a channels-last input with more than 3 channels, or one
  thread and 3 channels) runs the channels-last kernel: weights w_ab = lambda_h * lambda_w, the
  channels in 256-bit vectors (8 float32 or 4 float64 lanes: the kernel's AVX2 build, which
  AVX-512 CPUs run too) summing fma(t00, w00, fma(t01, w01,
  fma(t11, w11, t10 * w10))), the remaining channels fma(t11, w11, fma(t10, w10, fma(t00, w00,
  t01 * w01))).
- antialias (bilinear, bicubic): separable, the last dim first; per output a run of taps with
  PIL's filter weights normalized to sum 1, summed t0 * w0, then fma(tj, wj, sum).

A CPU without FMA (PyTorch's DEFAULT build) rounds every product and sum instead. The gradients
are the adjoint of the same weights (a GEMM per dim): exact derivatives, not PyTorch's
sequential scatter of every product, so their last bits may differ from PyTorch's.
"""
import numpy as np

from .._backend import xp_of, keeping_format
from ._registry import defop
from . import _blas, _cascade
from ._upsample_tables import fuses, madd, opmath, tables, matrix, pixel_groups, \
    nearest_table

__all__ = ["upsample_linear1d", "upsample_bilinear2d", "upsample_trilinear3d",
           "upsample_bicubic2d", "upsample_bilinear2d_aa", "upsample_bicubic2d_aa"]


# ---------------------------------------------------------------- kernels
#
# The kernels lay every array out with the dim being interpolated first (a gather along it
# yields that layout), so that each output index's slice is one contiguous block: a fused step
# with that index's weight is then one BLAS axpy on the block (ops/_blas.py, Note [fused axpy]),
# where the float64 emulation of ops/_fma.py would pay for the many exact ties of these sums.
# The values are the same either way.

def _rows(w, ndim):
    return w.reshape((-1,) + (1,) * (ndim - 1))


def _fma_rows(xp, a, w, c, fused, rows=None):
    """c[k] = fma(a[k], w[k], c[k]) in place for every k (or the k of `rows`) along axis 0; a
    and c contiguous of one shape, w host weights (one per k)."""
    axpy = _blas.axpy(c.dtype) if fused and type(c) is np.ndarray and \
        type(a) is np.ndarray and a.flags.c_contiguous and c.flags.c_contiguous else None
    if axpy is None:
        if rows is None:
            c[...] = madd(a, xp.asarray(_rows(w.astype(c.dtype), a.ndim)), c, fused)
        else:
            r = xp.asarray(rows)
            c[r] = madd(a[r], xp.asarray(_rows(w[rows].astype(c.dtype), a.ndim)), c[r], fused)
        return c
    a2, c2 = a.reshape(a.shape[0], -1), c.reshape(c.shape[0], -1)
    for k in (range(a.shape[0]) if rows is None else rows.tolist()):
        wk = w[k]
        if wk == 0:     # (BLAS skips a zero factor; fma(inf, 0, c) is nan)
            c2[k] += a2[k] * c.dtype.type(0)
        else:
            axpy(wk, a2[k], c2[k])
    return c


def _first(xp, a, axis, idx):
    """a's slices at idx along axis, gathered with that axis first (contiguous: NumPy's
    gather keeps a strided view's order in the other dims)."""
    return xp.ascontiguousarray(xp.moveaxis(a, axis, 0)[xp.asarray(idx)])


def _generic(xp, x, tabs, ft, fused):
    """The generic kernel: dim by dim from the first, each output the taps' sum fma(t0, w0,
    t1 * w1) (then fma(tj, wj, .)), the next dim's taps nested inside each tap. A tap's inner
    sums depend on its own input index only, so where a dim has fewer input indices than taps
    to gather, its inner sums are computed once for every input index and gathered after (the
    same operations on the same values)."""
    nd = len(tabs)

    def level(a, order, d):   # order: the spatial dim at each of a's leading axes
        taps = tabs[d]
        once = d + 1 < nd and a.shape[order.index(d)] < len(taps) * taps[0][0].size
        if once:
            a, order = level(a, order, d + 1)
        ts = []
        for idx, w in taps:
            t = _first(xp, a, order.index(d), idx)
            o = [d] + [k for k in order if k != d]
            if d + 1 < nd and not once:
                t, o = level(t, o, d + 1)
                t = xp.ascontiguousarray(xp.moveaxis(t, o.index(d), 0))
                o = [d] + [k for k in o if k != d]
            ts.append((t, w.astype(ft)))
        (t0, w0), (t1, w1) = ts[0], ts[1]
        out = t1 * xp.asarray(_rows(w1, t1.ndim))
        _fma_rows(xp, t0, w0, out, fused)
        for t, w in ts[2:]:
            _fma_rows(xp, t, w, out, fused)
        return out, o
    # (spatial dims..., N, C), contiguous: the gathers then copy whole blocks of N * C values
    a = xp.ascontiguousarray(xp.moveaxis(x, (0, 1), (nd, nd + 1)))
    out, order = level(a, list(range(nd)), 0)
    return xp.moveaxis(out, list(range(nd)) + [nd, nd + 1],
                       [2 + order[i] for i in range(nd)] + [0, 1])


def _channels_last_2d(xp, x, tabs, ft, fused):
    """upsample_linear_channels_last for 2-d (Note [upsample rounding]): each output pixel's
    four taps with weights w_ab = lambda_h a * lambda_w b, in the vector form for the channels
    the kernel's vectors hold and in the scalar loop's form for the rest; pixels that share
    their four weights are computed as one block."""
    (h0, _), (h1, _) = tabs[0]
    (w0, _), (w1, _) = tabs[1]
    n, c = x.shape[:2]
    nv = c - c % _cascade.lanes(ft) if fused else 0
    a = xp.ascontiguousarray(xp.moveaxis(x, (0, 1), (2, 3)))     # (H, W, N, C)
    out = xp.empty((h0.size, w0.size, n, c), ft)
    for rows, cols, wts in pixel_groups(tabs[0], tabs[1], ft):
        hi, wi = (h0[rows], h1[rows]), (w0[cols], w1[cols])
        taps = [a[xp.asarray(hi[i])][:, xp.asarray(wi[j])].reshape(wts[0].size, -1)
                for i in (0, 1) for j in (0, 1)]     # (one row a group, or one a pixel)
        (t00, w00), (t01, w01), (t10, w10), (t11, w11) = zip(taps, wts)
        forms = []
        if nv:
            forms.append(_chain(xp, (t10, w10), ((t11, w11), (t01, w01), (t00, w00)), fused))
        if nv < c:
            if fused:
                forms.append(_chain(xp, (t01, w01), ((t00, w00), (t10, w10), (t11, w11)),
                                    fused))
            else:
                forms.append(((t00 * xp.asarray(_rows(w00, 2)) + t01 * xp.asarray(
                    _rows(w01, 2))) + t10 * xp.asarray(_rows(w10, 2))) + t11 * xp.asarray(
                        _rows(w11, 2)))
        block = forms[0].reshape(-1, c)
        if len(forms) == 2:
            block[:, nv:] = forms[1].reshape(-1, c)[:, nv:]
        out[xp.asarray(rows)[:, None], xp.asarray(cols)[None, :]] = block.reshape(
            (rows.size, cols.size, n, c))
    return xp.moveaxis(out, (2, 3), (0, 1))


def _chain(xp, first, rest, fused):
    """first's product, then fma(t, w, .) for each (t, w) of rest (rows of weights)."""
    t, w = first
    v = t * xp.asarray(_rows(w, t.ndim))
    for t, w in rest:
        _fma_rows(xp, t, w, v, fused)
    return v


def _separable(xp, x, tabs, ft, fused):
    """The antialias kernel: one dim at a time from the last. Each output sums its run of n
    taps as t0 * w0 + t1 * w1 + ...: the compiler vectorizes that in-order sum in blocks of a
    128-bit vector's lanes (4 float32, 2 float64), whose products round apart, and fuses the
    n - 1 - its blocks' steps left over (measured, Note [upsample rounding])."""
    out = x
    lanes = 16 // np.dtype(ft).itemsize
    for d in reversed(range(len(tabs))):
        taps = tabs[d]
        axis = 2 + d
        if x.shape[axis] == taps[0][0].size:   # (an unchanged dim: no pass, as PyTorch)
            continue
        n = sum(live.astype(np.int64) for _, _, live in taps)
        blocked = (n - 1) // lanes * lanes
        acc = None
        for j, (idx, w, live) in enumerate(taps):
            t = _first(xp, out, axis, idx)
            w = w.astype(ft)
            if acc is None:
                acc = t * xp.asarray(_rows(w, t.ndim))
                continue
            late = live & (j > blocked) & fused
            plain = live & ~late
            if plain.all():
                acc += t * xp.asarray(_rows(w, t.ndim))
            elif plain.any():
                acc = xp.where(xp.asarray(_rows(plain, t.ndim)),
                               acc + t * xp.asarray(_rows(w, t.ndim)), acc)
            if late.any():
                _fma_rows(xp, t, w, acc, fused, rows=late.nonzero()[0])
        out = xp.moveaxis(acc, 0, axis)
    return out


def _channels_last_input(x):
    """input.is_contiguous(memory_format=torch.channels_last) for a 4-d array."""
    return x.ndim == 4 and xp_of(x).moveaxis(x, 1, -1).flags.c_contiguous


def _forward(xp, input, output_size, align_corners, scales, kind):
    dt = input.dtype
    ft = opmath(dt)
    if kind.startswith("aa_") and dt.itemsize < 4:
        name = {"float16": "Half", "bfloat16": "BFloat16"}.get(dt.name, dt.name)
        raise NotImplementedError(f'"compute_index_ranges_weights" not implemented for \'{name}\'')
    fused = fuses()
    if input.size == 0:
        return xp.empty(input.shape[:2] + tuple(output_size), dt)
    x = input.astype(ft, copy=False)
    if kind == "linear" and len(output_size) == 2 and (
            (_channels_last_input(input) and input.shape[1] > 3) or sum(output_size) <= 128 or
            (_threads() == 1 and input.shape[1] == 3)):
        # (this kernel keeps its weights in the compute type; the others store them in the
        # input's dtype)
        tabs = tables(kind, input.shape[2:], output_size, align_corners, scales, ft, fused)
        out = _channels_last_2d(xp, x, tabs, ft, fused)
    else:
        tabs = tables(kind, input.shape[2:], output_size, align_corners, scales, dt, fused)
        run = _separable if kind.startswith("aa_") else _generic
        out = run(xp, x, tabs, ft, fused)
    return xp.ascontiguousarray(out).astype(dt, copy=False)


def _threads():
    from . import _parallel
    return _parallel.threads()


# ---------------------------------------------------------------- the adjoint

def through_matrices(grad, matrices):
    """grad (a Tensor) contracted with one (n_out, n_in) host matrix per trailing dim, in ndgrad
    ops (differentiable to any order): the adjoint of a resampling that weights each dim's
    inputs by its matrix (the gradients of the upsample and adaptive pooling ops)."""
    from .linalg import matmul
    from .._tensor import _make
    xp = xp_of(grad._data)
    dt = grad._data.dtype
    g = grad
    for k, m in enumerate(matrices):
        ax = grad.ndim - len(matrices) + k
        g = matmul(g.transpose(ax, -1), _make(xp.asarray(m.astype(dt)))).transpose(ax, -1)
    return g


def _adjoint(grad, input_shape, output_size, align_corners, scales, kind):
    """The input's gradient: grad through the transpose of every dim's weight matrix."""
    dt = grad.dtype.np
    tabs = tables(kind, tuple(input_shape[2:]), output_size, align_corners, scales, dt,
                   fuses())
    return through_matrices(grad, [matrix(taps, n, dt) for taps, n in
                                            zip(tabs, input_shape[2:])])


def _op(name, node, kind):
    def forward(xp, input, output_size, align_corners, scales):
        return _forward(xp, input, tuple(output_size), bool(align_corners), tuple(scales), kind)

    def grad_input(grad, input_shape, output_size, align_corners, scales):
        return _adjoint(grad, input_shape, tuple(output_size), bool(align_corners),
                        tuple(scales), kind)
    forward.__name__ = f"_{name}_fwd"
    return defop(name, keeping_format(forward), node_name=node, input=grad_input)


upsample_linear1d = _op("upsample_linear1d", "UpsampleLinear1DBackward0", "linear")
upsample_bilinear2d = _op("upsample_bilinear2d", "UpsampleBilinear2DBackward0", "linear")
upsample_trilinear3d = _op("upsample_trilinear3d", "UpsampleTrilinear3DBackward0", "linear")
upsample_bicubic2d = _op("upsample_bicubic2d", "UpsampleBicubic2DBackward0", "cubic")
upsample_bilinear2d_aa = _op("_upsample_bilinear2d_aa", "UpsampleBilinear2DAaBackward0",
                             "aa_linear")
upsample_bicubic2d_aa = _op("_upsample_bicubic2d_aa", "UpsampleBicubic2DAaBackward0", "aa_cubic")


# ---------------------------------------------------------------- nearest, nearest-exact

def _nearest_tables(in_sizes, output_size, scales, exact, dtype, channels_last):
    return [nearest_table(n, o, s, exact, dtype, channels_last)
            for n, o, s in zip(in_sizes, output_size, scales)]


def _nearest_op(name, node, exact):
    """A gather per dim by PyTorch's source indices (ops/_upsample_tables.nearest_table; the
    caller says whether PyTorch would run its channels-last kernel); the gradient adds each
    output's gradient into its source (a 0/1 matrix per dim)."""
    def forward(xp, input, output_size, scales, channels_last):
        out = input
        for d, idx in enumerate(_nearest_tables(input.shape[2:], output_size, scales, exact,
                                                input.dtype, channels_last)):
            out = xp.take(out, xp.asarray(idx), axis=2 + d)
        return out

    def grad_input(grad, input_shape, output_size, scales, channels_last):
        dt = grad.dtype.np
        idx = _nearest_tables(tuple(input_shape[2:]), output_size, scales, exact, dt,
                              channels_last)
        return through_matrices(grad, [
            matrix([(i, np.ones(i.size))], n, dt)  # host: the 0/1 matrices' entries
            for i, n in zip(idx, input_shape[2:])])
    forward.__name__ = f"_{name}_fwd"
    return defop(name, keeping_format(forward), node_name=node, input=grad_input)


NEAREST = {(exact, nd): _nearest_op(
    f"{'_' if exact else ''}upsample_nearest{'_exact' if exact else ''}{nd}d",
    f"UpsampleNearest{'Exact' if exact else ''}{nd}DBackward0", exact)
    for exact in (False, True) for nd in (1, 2, 3)}
