"""The weight tables of the resampling ops (ops/upsample.py): per spatial dim, every output
index's taps (input indices) and weights, computed as PyTorch's CPU kernels compute them (Note
[upsample rounding] in ops/upsample.py). Small host arrays built from the shapes; the kernels
move them to the input's device."""
import math

import numpy as np

from . import _fma

_CUBIC_A = -0.75       # Keys' cubic (OpenCV's), antialias=False
_CUBIC_A_AA = -0.5     # PIL's, antialias=True


def fuses():
    """Whether PyTorch's kernels on this CPU fuse multiply-adds (its AVX2 and AVX-512 builds)."""
    from ..backends import get_cpu_capability
    return get_cpu_capability() in ("AVX2", "AVX512")


def madd(a, b, c, fused):
    """a * b + c as PyTorch's compiled kernel rounds it (Note [upsample rounding])."""
    if fused:
        return _fma.fma(a, b, c)
    return a * b + c


def opmath(dtype):
    return np.float64 if dtype == np.float64 else np.float32


def _scale(n_in, n_out, align_corners, scale, ft):
    """area_pixel_compute_scale in the compute type."""
    if align_corners:
        return ft(n_in - 1) / ft(n_out - 1) if n_out > 1 else ft(0)
    if scale is not None and scale > 0:
        return ft(1.0 / scale)
    return ft(n_in) / ft(n_out)


def _source(scale, n_out, align_corners, cubic, ft, fused):
    """area_pixel_compute_source_index for every output index."""
    i = np.arange(n_out, dtype=ft)
    if align_corners:
        return scale * i
    src = madd(scale, i + ft(0.5), np.full(n_out, ft(-0.5)), fused)
    return src if cubic else np.where(src < 0, ft(0), src)


def _guard(src, n_in, ft):
    """guard_index_and_lambda: the tap index and the fraction past it. The index is floorf's,
    of the source index rounded to float32 also in double (a source index a hair below an
    integer takes that integer, with lambda 0)."""
    idx = np.minimum(np.floor(src.astype(np.float32)).astype(np.int64), n_in - 1)
    lam = np.minimum(np.maximum(src - idx.astype(ft), ft(0)), ft(1))
    return idx, lam


def _linear_table(n_in, n_out, align_corners, scale, dtype, fused):
    """[(indices, weights)] of the two taps of every output index (weights in `dtype`)."""
    ft = opmath(dtype)
    if n_in == n_out:
        i = np.arange(n_out)
        return [(i, np.ones(n_out, dtype)), (i, np.zeros(n_out, dtype))]
    s = _scale(n_in, n_out, align_corners, scale, ft)
    idx, lam = _guard(_source(s, n_out, align_corners, False, ft, fused), n_in, ft)
    lam1 = lam.astype(dtype)
    lam0 = (np.asarray(1, dtype) - lam1).astype(dtype)
    return [(idx, lam0), (idx + (idx < n_in - 1), lam1)]


def _cubic_weight_near(x, a, fused, whole=False):
    """|x| <= 1: ((a + 2) x - (a + 3)) x x + 1. PyTorch's table of weights fuses the first
    multiply-add only; its antialias filter (a function of its own) fuses both (measured)."""
    ft = x.dtype.type
    u = madd(ft(a + 2), x, np.full(x.shape, ft(-(a + 3))), fused)
    if whole:
        return madd(u * x, x, np.ones_like(x), fused)
    return (u * x) * x + ft(1)


def _cubic_weight_far(x, a, fused, whole=False):
    """1 < |x| < 2: ((a x - 5a) x + 8a) x - 4a, the last multiply-add fused in the antialias
    filter only."""
    ft = x.dtype.type
    u = madd(ft(a), x, np.full(x.shape, ft(-5 * a)), fused)
    u = madd(u, x, np.full(x.shape, ft(8 * a)), fused)
    if whole:
        return madd(u, x, np.full(x.shape, ft(-4 * a)), fused)
    return u * x - ft(4 * a)


def _cubic_table(n_in, n_out, align_corners, scale, dtype, fused):
    """[(indices, weights)] of the four taps (borders clamped), Keys' weights with A = -0.75."""
    ft = opmath(dtype)
    s = _scale(n_in, n_out, align_corners, scale, ft)
    idx, t = _guard(_source(s, n_out, align_corners, True, ft, fused), n_in, ft)
    one = ft(1)
    w = (_cubic_weight_far(t + one, _CUBIC_A, fused), _cubic_weight_near(t, _CUBIC_A, fused),
         _cubic_weight_near(one - t, _CUBIC_A, fused),
         _cubic_weight_far((one - t) + one, _CUBIC_A, fused))
    return [(np.clip(idx + j - 1, 0, n_in - 1), w[j].astype(dtype)) for j in range(4)]


def _aa_filter(x, cubic, fused):
    """PIL's filters: the triangle 1 - |x|, or Keys' cubic with A = -0.5, zero outside."""
    x = np.abs(x)
    ft = x.dtype.type
    if not cubic:
        return np.where(x < 1, (1.0 - x.astype(np.float64)).astype(ft), ft(0))
    near = _cubic_weight_near(x, _CUBIC_A_AA, fused, whole=True)
    far = _cubic_weight_far(x, _CUBIC_A_AA, fused, whole=True)
    return np.where(x < 1, near, np.where(x < 2, far, ft(0)))


def _aa_table(n_in, n_out, align_corners, scale, dtype, cubic, fused):
    """[(indices, weights, live)] of the antialiased taps (_compute_indices_min_size_weights_aa),
    padded to the widest support; live: the outputs whose run of taps reaches this one."""
    ft = np.float64 if dtype == np.float64 else np.float32
    interp = 4 if cubic else 2
    s = _scale(n_in, n_out, align_corners, scale, ft)
    support = ft((interp * 0.5) * float(s)) if s >= 1 else ft(interp * 0.5)
    width = int(math.ceil(support)) * 2 + 1
    i = np.arange(n_out)
    center = (np.float64(s) * (i + 0.5)).astype(ft)
    invscale = ft(1.0 / float(s)) if s >= 1 else ft(1)
    xmin = np.maximum(np.trunc((center - support).astype(np.float64) + 0.5), 0).astype(np.int64)
    xsize = np.minimum(np.trunc((center + support).astype(np.float64) + 0.5).astype(np.int64),
                       n_in) - xmin
    xsize = np.clip(xsize, 0, width)
    j = np.arange(width)
    taps = (j[None, :] + xmin[:, None]).astype(ft) - center[:, None]
    arg = ((taps.astype(np.float64) + 0.5) * np.float64(invscale)).astype(ft)
    w = _aa_filter(arg, cubic, fused)
    live = j[None, :] < xsize[:, None]
    w = np.where(live, w, ft(0))
    total = np.zeros(n_out, ft)
    for k in range(width):               # (a sum over at most a few columns, in order)
        total = (total + w[:, k]).astype(ft)
    w = np.where(total[:, None] != 0, w / np.where(total == 0, ft(1), total)[:, None], w)
    idx = np.where(live, np.minimum(xmin[:, None] + j[None, :], n_in - 1), xmin[:, None])
    return [(idx[:, k], w[:, k].astype(dtype), live[:, k]) for k in range(width)]


def tables(kind, in_sizes, out_sizes, align_corners, scales, dtype, fused):
    tabs = []
    for n_in, n_out, s in zip(in_sizes, out_sizes, scales):
        if kind == "linear":
            tabs.append(_linear_table(n_in, n_out, align_corners, s, dtype, fused))
        elif kind == "cubic":
            tabs.append(_cubic_table(n_in, n_out, align_corners, s, dtype, fused))
        else:
            tabs.append(_aa_table(n_in, n_out, align_corners, s, dtype, kind == "aa_cubic",
                                  fused))
    return tabs


def matrix(taps, n_in, dtype):
    """The (n_out, n_in) matrix of one dim's taps (repeated indices add up)."""
    n_out = taps[0][0].size
    m = np.zeros((n_out, n_in), np.float64)
    rows = np.arange(n_out)
    for idx, w, *_ in taps:
        np.add.at(m, (rows, idx), w.astype(np.float64))
    return m.astype(dtype)


def _classes(lam):
    """Output indices grouped by their weights: (weights, indices) per distinct weight row."""
    keys, inverse = np.unique(lam, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    return [(keys[k], np.flatnonzero(inverse == k)) for k in range(len(keys))]


def pixel_groups(th, tw, ft, limit=64):
    """The channels-last kernel's output pixels in groups that share their four weights
    w_ab = lambda_h a * lambda_w b (the compute type's products): [(rows, cols, (w00, w01,
    w10, w11))], each weight one value for the rows x cols block; or, past `limit` groups
    (a scale without a short period), one block of all pixels with a weight per pixel."""
    (_, lh0), (_, lh1) = th
    (_, lw0), (_, lw1) = tw
    lh = np.stack([lh0, lh1], axis=1).astype(ft)
    lw = np.stack([lw0, lw1], axis=1).astype(ft)
    hk, wk = _classes(lh), _classes(lw)
    if len(hk) * len(wk) > limit:
        return [(np.arange(len(lh)), np.arange(len(lw)), tuple(
            (lh[:, i][:, None] * lw[:, j][None, :]).astype(ft).reshape(-1)
            for i in (0, 1) for j in (0, 1)))]
    return [(rows, cols, tuple(np.full(1, ft(a[i]) * ft(b[j]), ft) for i in (0, 1)
                               for j in (0, 1)))
            for a, rows in hk for b, cols in wk]


def nearest_table(n_in, n_out, scale, exact, dtype, channels_last):
    """The input index of every output index for nearest and nearest-exact (PyTorch's two
    kernels compute it differently: the channels-last kernel's `nearest_idx` in float32, with
    shortcuts for equal and doubled sizes; the generic kernel's table in the compute type, the
    index through `floorf` in both)."""
    i = np.arange(n_out)
    if channels_last:
        f4 = np.float32
        s = f4(1.0 / scale) if scale is not None and scale > 0 else f4(n_in) / f4(n_out)
        if exact:
            src = ((i + 0.5) * np.float64(s)).astype(f4)
        elif n_out == n_in:
            return i
        elif n_out == 2 * n_in:
            return i >> 1
        else:
            src = i.astype(f4) * s
    else:
        ft = opmath(dtype)
        s = _scale(n_in, n_out, False, scale, ft)
        if exact:
            src = _source(s, n_out, False, False, ft, fuses()) + ft(0.5)
        else:
            src = s * i.astype(ft)
    return np.minimum(np.floor(src.astype(np.float32)).astype(np.int64), n_in - 1)
