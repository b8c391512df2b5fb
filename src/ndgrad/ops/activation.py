# Activation and probability ops used by nn code, with torch.nn.functional's signatures.
# Each fused op is one defop entry (forward on `xp`, derivative as ndgrad ops, so double
# backward works; see ops/_registry.py); the few that PyTorch itself composes (softsign,
# tanhshrink) are composed here too, so their grad_fn names match.
import functools
import math

from .. import _dtype as D
from .._dtype import np_half as _half
from .._backend import numpy as _np, ufunc_reduce
from .._tensor import _wrap_dim
from ..autograd import grad_mode
from ._inplace import inplace as _inplace_apply
from ._registry import defop
from . import _specfun as _sf
from ._scratch import scratch as _scratch
from . import _parallel as _par
from .pointwise import (exp, tanh, cosh, sigmoid, relu, erf, where, abs as _abs, _type_name,
                        threshold_backward, _zeros_like, bound as _bound, select as _select,
                        clamped as _clamped)
from .reduction import sum as _sum, _f16_acc

__all__ = ["softmax", "log_softmax", "softmin", "softplus", "gelu", "silu", "elu", "selu",
           "celu", "leaky_relu", "hardtanh", "relu6", "hardsigmoid", "hardswish", "mish",
           "softsign", "tanhshrink", "logsigmoid", "one_hot", "relu", "sigmoid", "tanh", "erf",
           "threshold"]

_SQRT1_2 = 1.0 / math.sqrt(2.0)
_SQRT_2_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_LOG2E = 1.0 / math.log(2.0)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _maybe_inplace(input, inplace, fn, *args, inplace_fn=None):
    """fn(input, *args), or in place; `inplace_fn`: the in-place overload (its formula reads the
    result, as PyTorch's ...Backward1 nodes do) when it differs from fn."""
    if inplace:
        return _inplace_apply(input, inplace_fn or fn, *args)
    return fn(input, *args)


# ---------------------------------------------------------------- softmax family

def _contiguous_result(forward):
    """forward whose result is C-contiguous whatever its inputs' layout: ATen's softmax kernels
    write their result (and their backward's) contiguously (a channels-last or transposed input
    included)."""
    def fwd(xp, *args):
        out = forward(xp, *args)
        return out if out.flags.c_contiguous else xp.ascontiguousarray(out)
    return functools.wraps(forward)(fwd)


def _short_rows(a, dim):
    """Whether `a` is a batch of short rows reduced along them (logits, 64 x 10: bench W2). NumPy
    reduces a short contiguous last axis row by row, ~35 ns a row; the columns of the transposed
    copy reduce several times faster (a maximum is the same; a sum adds each row's values in
    order where NumPy's row loop pairs them: the last bit may differ, as PyTorch's order does)."""
    return a.ndim == 2 and a.shape[1] <= 16 and a.shape[0] >= 32 and (dim == 1 or dim == -1) \
        and a.flags.c_contiguous


def _reduce_keep(xp, ufunc, a, dim):
    """ufunc.reduce(a, axis=dim, keepdims=True), short rows as columns (_short_rows)."""
    if _short_rows(a, dim):
        return ufunc_reduce(xp, ufunc, a.T.copy(), 0).reshape(a.shape[0], 1)
    return ufunc_reduce(xp, ufunc, a, dim, True)


_BLOCK_BYTES = 1 << 20     # a block of rows that stays in a core's L2 cache across the passes


def _row_blocks(xp, a, dim, other=None):
    """Rows a block for a softmax (or its backward, with `other` the gradient: the same shape,
    dtype and layout) over the last dim of a large C-contiguous host array, or 0.

    NumPy runs each operation as one pass over the whole array: five passes over the 28 MB of
    a (700, 10000) float32 batch of logits (bench W10's cross-entropy) go through memory five
    times. Run block by block, the same operations on each row give the same bits, and a
    block's passes after the first read it from cache: log_softmax's forward 9.8 -> 5.5 ms."""
    if xp.__name__ != "numpy" or a.ndim < 2 or dim not in (-1, a.ndim - 1) or \
            a.nbytes < 4 * _BLOCK_BYTES or not a.flags.c_contiguous or (other is not None and (
                other.shape != a.shape or other.dtype != a.dtype or
                not other.flags.c_contiguous)):
        return 0
    rows = a.size // a.shape[-1]
    block = max(1, _BLOCK_BYTES // (a.shape[-1] * a.itemsize))
    return block if block < rows else 0


def _by_blocks(xp, kernel, block, out, *ins):
    """kernel(xp, out_rows, *in_rows) over blocks of `block` rows of out and the inputs (all of
    one shape, C-contiguous), viewed as (rows, n); the blocks split over threads where that is
    worth it (Note [Parallel pieces]: each row's passes are its own, the same bits for any
    count)."""
    n = out.shape[-1]
    flat = [x.reshape(-1, n) for x in (out,) + ins]
    rows = flat[0].shape[0]

    def piece(lo, hi):
        for i in range(lo, hi, block):
            j = min(i + block, hi)
            kernel(xp, *(x[i:j] for x in flat))
    if _par.worth(xp, out.size):
        _par.run(piece, rows, grain=max(1, _par.GRAIN // n), align=block)
    else:
        piece(0, rows)
    return out


def _softmax_rows(xp, out, a):
    xp.subtract(a, ufunc_reduce(xp, xp.maximum, a, 1, True), out=out)
    xp.exp(out, out=out)
    xp.divide(out, ufunc_reduce(xp, xp.add, out, 1, True), out=out)


@_contiguous_result
def _softmax_fwd(xp, self, dim):
    if self.size == 0:
        return self.copy()
    block = _row_blocks(xp, self, dim)
    if block:
        return _by_blocks(xp, _softmax_rows, block, xp.empty_like(self), self)
    # (ufunc reductions: NumPy's functions and the arrays' methods add a Python layer)
    e = xp.exp(self - _reduce_keep(xp, xp.maximum, self, dim))
    return e / _reduce_keep(xp, xp.add, e, dim)


def _log_softmax_blocks(xp, a, block):
    def rows(xp, out, a):
        xp.subtract(a, ufunc_reduce(xp, xp.maximum, a, 1, True), out=out)
        work = _scratch(xp, out.shape, out.dtype, "log_softmax_exp")   # (this thread's)
        lse = ufunc_reduce(xp, xp.add, xp.exp(out, out=work), 1, True)
        xp.subtract(out, xp.log(lse, out=lse), out=out)
    return _by_blocks(xp, rows, block, xp.empty_like(a), a)


@_contiguous_result
def _log_softmax_fwd(xp, self, dim):
    if self.size == 0:
        return self.copy()
    block = _row_blocks(xp, self, dim)
    if block:
        return _log_softmax_blocks(xp, self, block)
    # (short rows: computed on the transposed copy, the result copied back to C order)
    rows = _short_rows(self, dim)
    a, axis = (self.T.copy(), 0) if rows else (self, dim)
    # A row whose maximum is +-inf or nan comes out all nan, as PyTorch's (inf - inf). An op's
    # forward runs in NumPy's quiet error state: log(0) is silent
    s = a - ufunc_reduce(xp, xp.maximum, a, axis, True)
    lse = xp.add.reduce(xp.exp(s), axis=axis, keepdims=True)
    if not s.ndim:  # (0-d: NumPy's results are scalars)
        return s - xp.log(lse)
    xp.log(lse, out=lse)  # (the fresh temporaries take the results: two arrays fewer)
    xp.subtract(s, lse, out=s)
    return s.T.copy() if rows else s


# PyTorch's _softmax_backward_data and _log_softmax_backward_data: the backward of softmax and
# log_softmax in one op instead of four (cross_entropy, bench W2), with PyTorch's formulas for
# the double backward.
def _softmax_backward_rows(xp, out, go, y):
    xp.multiply(go, y, out=out)
    s = ufunc_reduce(xp, xp.add, out, 1, True)
    xp.subtract(out, y * s, out=out)


@_contiguous_result
def _softmax_backward_fwd(xp, grad_output, output, dim):
    block = _row_blocks(xp, output, dim, grad_output)
    if block:
        return _by_blocks(xp, _softmax_backward_rows, block, xp.empty_like(output), grad_output,
                          output)
    gy = grad_output * output
    return gy - output * _reduce_keep(xp, xp.add, gy, dim)


def _log_softmax_backward_rows(xp, out, go, y):
    xp.exp(y, out=out)
    out *= ufunc_reduce(xp, xp.add, go, 1, True)
    xp.subtract(go, out, out=out)


@_contiguous_result
def _log_softmax_backward_fwd(xp, grad_output, output, dim):
    block = _row_blocks(xp, output, dim, grad_output)
    if block:
        return _by_blocks(xp, _log_softmax_backward_rows, block, xp.empty_like(output),
                          grad_output, output)
    if not output.ndim:  # (0-d: NumPy's results are scalars)
        return grad_output - xp.exp(output) * _reduce_keep(xp, xp.add, grad_output, dim)
    g = xp.exp(output)  # (one temporary, the passes in place)
    g *= _reduce_keep(xp, xp.add, grad_output, dim)
    return xp.subtract(grad_output, g, out=g)


softmax_backward = defop(
    "softmax_backward", _softmax_backward_fwd, promote="binary",
    node_name="SoftmaxBackwardDataBackward0",
    grad_output=lambda grad, output, dim: softmax_backward(grad, output, dim),
    output=lambda grad, grad_output, output, dim: (
        grad_output * (grad - _sum(grad * output, dim, keepdim=True))
        - grad * _sum(grad_output * output, dim, keepdim=True)))
_softmax = defop("softmax", _f16_acc(_softmax_fwd), node_name="SoftmaxBackward0",
                 self=lambda grad, result, dim: softmax_backward(grad, result, dim))


log_softmax_backward = defop(
    "log_softmax_backward", _log_softmax_backward_fwd, promote="binary",
    node_name="LogSoftmaxBackwardDataBackward0",
    grad_output=lambda grad, output, dim: grad - _sum(grad * exp(output), dim, keepdim=True),
    output=lambda grad, grad_output, output, dim: -_sum(grad_output, dim, keepdim=True) * exp(
        output) * grad)
_log_softmax = defop("log_softmax", _f16_acc(_log_softmax_fwd), node_name="LogSoftmaxBackward0",
                     self=lambda grad, result, dim: log_softmax_backward(grad, result, dim))


def _implicit_dim(ndim):
    import warnings
    warnings.warn("Implicit dimension choice for softmax has been deprecated. Change the call "
                  "to include dim=X as an argument.", UserWarning, stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_prep(kernel, input, dim, dtype):
    if dim is None:
        dim = _implicit_dim(input._data.ndim)
    dim = _wrap_dim(dim, input._data.ndim)
    if dtype is not None:
        input = input.to(D.to_dtype(dtype))
    if not input.dtype.is_floating_point:
        last = dim == input._data.ndim - 1 or input._data.ndim == 0
        raise NotImplementedError(
            f'"{kernel}_{"lastdim_" if last else ""}kernel_impl" not implemented for '
            f"'{_type_name(input.dtype)}'")
    return input, dim


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(input, dim=None, dtype=None): exp(x) / sum(exp(x)) along dim, stably."""
    input, dim = _softmax_prep("softmax", input, dim, dtype)
    return _softmax(input, dim)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log_softmax(input, dim=None, dtype=None): x - logsumexp(x) along dim, stably."""
    input, dim = _softmax_prep("log_softmax", input, dim, dtype)
    return _log_softmax(input, dim)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmin(input, dim=None, dtype=None) = softmax(-input)."""
    return softmax(-input, dim, _stacklevel, dtype)


# ---------------------------------------------------------------- smooth activations

def _softplus_fwd(xp, self, beta, threshold):
    bx = self * beta
    soft = xp.log1p(xp.exp(_bound(xp.minimum, threshold, bx))) / beta  # (quiet: exp may overflow)
    return _select(xp, bx > threshold, self, soft).astype(self.dtype, copy=False)


_softplus = defop("softplus", _softplus_fwd, promote="float",
                  self=lambda grad, self, beta, threshold: where(
                      self * beta > threshold, grad, grad * sigmoid(self * beta)))


def softplus(input, beta=1.0, threshold=20.0):
    """softplus(input, beta=1.0, threshold=20.0) = log(1 + exp(beta * x)) / beta."""
    return _softplus(input, beta, threshold)


# ---------------------------------------------------------------- GELU
# As PyTorch: gelu saves `self`, and its backward is the op gelu_backward(grad, self,
# approximate) (GeluBackwardBackward0 for double backward). The kernels, each a few passes:
# - float32 (float16 computed in float32): Phi(x) = 1 / (1 + exp(x k(x^2))), k a polynomial
#   fitted to -logit(Phi(x)) / x (tools/fit_special.py: GELU_K; x^2 clamped at 30.25, where Phi
#   is 1 in float32), and below x = -2 the float64 tail Phi(x) = exp(-x^2 / 2) r(-x) / 2
#   (GELU_TAIL) for the elements there: x Phi(x) within ~7 ulp everywhere. (PyTorch's float32
#   kernel takes erf from Abramowitz-Stegun 7.1.26, 1.5e-7 absolute: gelu(-5) is 17 % off there,
#   gelu(inf) nan; here -5 Phi(-5) to the ulp, and inf, as PyTorch's float64 gives.)
# - float64: erfc (ops/_specfun.py).
# - approximate='tanh': PyTorch's formula, in place.
# GELU_K: [0, 30.25], degrees 7/0, weighted error 2 (float32's rounding: 1)
_GELU_K = (-1.5957694895121592, -0.0726686209545979, 6.900215134236623e-05,
           0.000108315239627665, -7.303648071843333e-06, 1.838931750805873e-07,
           1.2263117946430696e-09, -1.0124773698703182e-10)
# GELU_TAIL: [2, 15], degrees 4/4, relative error 1.2e-09
_GELU_TAIL_P = (0.9982123800023126, 0.8232942231110174, 0.3023812767582422, 0.05594787756038807,
                4.092587198560201e-08)
_GELU_TAIL_Q = (1.614239902519287, 1.1035009369099826, 0.3788840262219964, 0.07012361554391357)
_GELU_KAPPA = 0.044715
# The kernels raise 2, not e, to the exponent: NumPy's float32 exp2 takes half exp's time and
# is within 1 ulp where exp is within 2.5, so GELU_K's coefficients and the backward's -1/2 come
# times log2(e) (float64 products, rounded to float32 once on use, as GELU_K's own are)
_GELU_K2 = tuple(c * _LOG2E for c in _GELU_K)
_GELU_HALF2 = -0.5 * _LOG2E   # exp(-x^2 / 2) = 2^(x^2 (-log2(e) / 2))


# Small NumPy arrays (generation's (1, T, 512) activations): per call, NumPy's own overhead
# outweighs the arithmetic, so their passes take no scratch slots (fresh arrays come from the
# allocator's pools) and their constants are float32 0-d arrays (a Python float is converted
# to exactly that on every call): the same operations on the same values, bit for bit.
_GELU_SMALL = 1 << 17  # bytes (_scratch.MIN: below it a slot would be a fresh array anyway)
_GELU_K32 = tuple(_np.array(c, _np.float32) for c in _GELU_K2)  # host: NumPy-only constants
_F32_ONE, _F32_TAIL = (_np.array(c, _np.float32) for c in (1.0, -2.0))  # host: NumPy-only


def _gelu_small(x):
    """Whether x (float32) takes the small-array passes: a NumPy array under _GELU_SMALL."""
    return type(x) is _np.ndarray and x.nbytes < _GELU_SMALL


def _gelu_q(xp, x, s=None):
    """exp(x k(x^2)) = (1 - Phi(x)) / Phi(x), float32, as 2^(x k(x^2) log2(e)); s: x^2 if the
    caller has it. Past GELU_K's range (|x| > 5.5) k is no fit but stays below -3.6 (its
    leading coefficient negative, overflowing to -inf): Phi rounds to 1 above 5.5 as it should,
    and to 0 below -5.5 (where the forward takes the tail, and the backward wants 0 to the
    ulp), so x^2 needs no clamp."""
    if _gelu_small(x):
        h = _sf._poly(_GELU_K32, x * x if s is None else s)
        h *= x
        return xp.exp2(h, out=h)
    if s is None:
        s = xp.multiply(x, x, out=_scratch(xp, x.shape, x.dtype, "gelu_s"))
    h = _sf._poly(_GELU_K2, s)
    h *= x
    return xp.exp2(h, out=h)


def _gelu_f32(xp, x, cdf=None):
    """x Phi(x) for a 1-d float32 x. The exponent x k(x^2) rounds to ~|x k| ulp in float32:
    below -2 the elements take the float64 tail (PyTorch's float32 GELU has no more than
    absolute accuracy there). cdf: an array that receives 1 / (1 + q), the backward's Phi (Note
    [GELU's saved Phi])."""
    q = _gelu_q(xp, x)
    if _gelu_small(x):
        q += _F32_ONE
        if cdf is not None:
            xp.divide(_F32_ONE, q, out=cdf)
        y = xp.divide(x, q, out=q)
        tail = x < _F32_TAIL
        if not _np.count_nonzero(tail):  # host: a NumPy array (_gelu_small)
            return y
    else:
        q += 1.0
        if cdf is not None:   # (1 / q: NumPy's reciprocal loop takes twice divide's time)
            xp.divide(1.0, q, out=cdf)
        y = xp.divide(x, q, out=q)
        tail = x < -2.0
    if tail.any():
        i = xp.flatnonzero(tail)
        xt = x.take(i).astype("float64")
        t = -xt
        cdf = _sf._ratio(_GELU_TAIL_P, _GELU_TAIL_Q, t)
        t *= t
        t *= -0.5
        cdf *= xp.exp(t)
        cdf *= 0.5
        cdf *= xt
        y[i] = cdf
    return y


def _gelu_grad_f32(xp, grad, x, cdf=None):
    pdf = x * x
    if cdf is None:
        cdf = _gelu_q(xp, x, pdf)
        cdf += 1.0
        xp.divide(1.0, cdf, out=cdf)
    pdf *= _GELU_HALF2
    xp.exp2(pdf, out=pdf)
    pdf *= x
    pdf *= _INV_SQRT_2PI
    pdf += cdf
    pdf *= grad
    return pdf


def _cdf64(xp, x):
    cdf = _sf.erfc(xp, x * -_SQRT1_2)
    cdf *= 0.5
    return cdf


def _gelu_tanh_inner(xp, x):
    u = x * x
    u *= _GELU_KAPPA
    u += 1.0
    u *= x
    u *= _SQRT_2_PI
    return u


# Note [GELU's saved Phi]
# GELU's backward needs Phi(x), which its forward has just computed (for float32, the
# polynomial and exp that are most of either pass: 0.86 of the backward's 1.58 ms on (16, 64,
# 512)). PyTorch's node saves only the input, and so does ndgrad's (`_saved_self`,
# gelu_backward(grad, self, approximate) as the formula); when the input requires a gradient,
# `gelu` also hands its forward a `_GeluPhi` holder, a non-Tensor argument that the node keeps
# as it keeps `approximate`, and the forward leaves Phi there, with the input array it belongs to.
# gelu_backward takes it from the holder when its `self` is that very array, and computes it
# otherwise (torch.ops.aten.gelu_backward, a broadcast grad, the tanh form): the same values
# either way, bit for bit. One more array per GELU lives until the backward has run, so only
# inputs of up to _GELU_PHI_MAX elements get a holder (8 MiB of float32 Phi: GPT's (16, 64,
# 512) is 2 MiB): a large model's activations keep PyTorch's footprint and compute Phi again.
_GELU_PHI_MAX = 1 << 21
# Elements a thread's piece of GELU, at least: each of a piece's ~20 NumPy calls hands the GIL
# to the other thread, so smaller pieces lose (2^17 float32 elements, two threads against one:
# forward 0.59 against 0.41 ms, backward 0.50 against 0.41; at 2^18 about even, at 2^19 1.5 x
# faster)
_GELU_GRAIN = 1 << 17

class _GeluPhi:
    """Phi of a GELU forward's input (`cdf`, flat, in the opmath dtype) and that input (`x`)."""
    __slots__ = ("x", "cdf")

    def __init__(self):
        self.x = self.cdf = None

    def of(self, x):
        """Phi for the array x, if this holder has it."""
        return self.cdf if self.x is x else None


def _gelu_fwd(xp, self, approximate, phi=None):
    dt, shape = self.dtype, self.shape
    x = self.reshape(-1)  # (1-d: the passes work in place; a 0-d array's would make scalars)
    cdf = None
    if phi is not None and approximate != "tanh":
        cdf = xp.empty(x.size, "float64" if dt == "float64" else "float32")
        phi.x, phi.cdf = self, cdf
    if _par.worth(xp, x.size, _GELU_GRAIN):   # (Note [Parallel pieces])
        def piece(o, xs, *cs):
            o[...] = _gelu_flat(xp, xs, approximate, *cs)
        ins = (x,) if cdf is None else (x, cdf)
        return _par.map_into(xp, piece, xp.empty(x.size, dt), *ins,
                             grain=_GELU_GRAIN).reshape(shape)
    return _gelu_flat(xp, x, approximate, cdf).astype(dt, copy=False).reshape(shape)


def _gelu_flat(xp, x, approximate, cdf=None):
    """GELU of the 1-d x, float32 for float16/bfloat16 inputs; Phi into `cdf` if given."""
    if _half(x.dtype):
        x = x.astype("float32")  # (PyTorch's float opmath)
    if approximate == "tanh":
        y = xp.tanh(_gelu_tanh_inner(xp, x))
        y += 1.0
        y *= x
        y *= 0.5
    elif x.dtype == "float32":
        y = _gelu_f32(xp, x, cdf)
    else:
        y = _cdf64(xp, x)
        if cdf is not None:
            cdf[...] = y
        y *= x
    return y


def _gelu_backward_fwd(xp, grad_output, self, approximate, phi=None):
    dt = _np.result_type(grad_output, self)
    shape = _np.broadcast_shapes(grad_output.shape, self.shape)  # host: shapes
    cdf = None if phi is None else phi.of(self)   # (a tanh forward leaves none)
    x, g = self, grad_output
    if self.shape != shape:
        x, cdf = xp.broadcast_to(x, shape), None
    x, g = x.reshape(-1), xp.broadcast_to(g, shape).reshape(-1)
    if _par.worth(xp, x.size, _GELU_GRAIN):   # (Note [Parallel pieces])
        def piece(o, gs, xs, *cs):
            o[...] = _gelu_grad_flat(xp, gs, xs, approximate, *cs)
        ins = (g, x) if cdf is None else (g, x, cdf)
        return _par.map_into(xp, piece, xp.empty(x.size, dt), *ins,
                             grain=_GELU_GRAIN).reshape(shape)
    return _gelu_grad_flat(xp, g, x, approximate, cdf).astype(dt, copy=False).reshape(shape)


def _gelu_grad_flat(xp, g, x, approximate, cdf=None):
    """grad * GELU'(x) for the 1-d g and x, float32 for float16/bfloat16 inputs; `cdf`: Phi(x)
    from the forward (Note [GELU's saved Phi]) or None."""
    dt = _np.result_type(g, x)
    if _half(dt):
        x, g = x.astype("float32"), g.astype("float32")
    if approximate == "tanh":
        t = xp.tanh(_gelu_tanh_inner(xp, x))
        d = t * t  # 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 kappa x^2)
        xp.subtract(1.0, d, out=d)
        u = x * x
        u *= 3 * _GELU_KAPPA
        u += 1.0
        u *= _SQRT_2_PI * 0.5
        u *= x
        d *= u
        t += 1.0
        t *= 0.5
        d += t
        d *= g
    elif x.dtype == "float32" and g.dtype == "float32":
        d = _gelu_grad_f32(xp, g, x, cdf)
    else:
        x = x.astype("float64", copy=False)
        d = x * x
        d *= -0.5
        xp.exp(d, out=d)
        d *= x
        d *= _INV_SQRT_2PI
        d += _cdf64(xp, x) if cdf is None or cdf.dtype != "float64" else cdf
        d *= g
    return d


def _gelu_second(self, approximate):
    """d/dx of gelu'(x), with ndgrad ops (double backward)."""
    if approximate == "tanh":
        # (1 - t^2) u' + x/2 (t^2)' u' + x/2 (1 - t^2) u'', t = tanh(u), u = sqrt(2/pi) (x +
        # kappa x^3); (t^2)' by sech(u)^2, as PyTorch (1 - t^2 is 0 where t rounds to 1)
        x2 = self * self
        u = _SQRT_2_PI * (self + _GELU_KAPPA * x2 * self)
        t = tanh(u)
        sech = 1 / cosh(u)
        g = 1 - t * t
        du = _SQRT_2_PI * (1 + 3 * _GELU_KAPPA * x2)
        return g * du - self * sech * sech * t * du * du + 3 * _SQRT_2_PI * _GELU_KAPPA * x2 * g
    x2 = self * self
    return _INV_SQRT_2PI * exp(-0.5 * x2) * (2 - x2)


gelu_backward = defop(
    "gelu_backward", _gelu_backward_fwd, promote="binary_float",
    node_name="GeluBackwardBackward0",
    grad_output=lambda grad, self, approximate, phi:
        gelu_backward(grad, self, approximate, phi),
    self=lambda grad, grad_output, self, approximate:
        grad * grad_output * _gelu_second(self, approximate))
_gelu = defop("gelu", _gelu_fwd, promote="float",
              self=lambda grad, self, approximate, phi: gelu_backward(grad, self, approximate,
                                                                      phi))


def gelu(input, approximate="none"):
    """gelu(input, approximate='none'|'tanh')."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    if approximate == "none" and getattr(input, "requires_grad", False) and \
            grad_mode._state.enabled and input.numel() <= _GELU_PHI_MAX:
        return _gelu(input, approximate, _GeluPhi())   # (Note [GELU's saved Phi])
    return _gelu(input, approximate)


def _silu_fwd(xp, self):
    from .pointwise import _sigmoid_fwd
    return self * _sigmoid_fwd(xp, self)


def _silu_grad(grad, self):
    s = sigmoid(self)
    return grad * (s * (1 + self * (1 - s)))


_silu = defop("silu", _silu_fwd, promote="float", self=_silu_grad)


def silu(input, inplace=False):
    """silu(input, inplace=False) = x * sigmoid(x)."""
    return _maybe_inplace(input, inplace, _silu)


def _mish_fwd(xp, self):
    return self * xp.tanh(_softplus_fwd(xp, self, 1.0, 20.0))


def _mish_grad(grad, self):
    t = tanh(softplus(self))
    return grad * (t + self * sigmoid(self) * (1 - t * t))


_mish = defop("mish", _mish_fwd, promote="float", self=_mish_grad)


def mish(input, inplace=False):
    """mish(input, inplace=False) = x * tanh(softplus(x))."""
    return _maybe_inplace(input, inplace, _mish)


def _logsigmoid_fwd(xp, self):
    return _bound(xp.minimum, 0, self) - xp.log1p(xp.exp(-xp.abs(self)))


_logsigmoid = defop("log_sigmoid", _logsigmoid_fwd, promote="float",
                    node_name="LogSigmoidBackward0",
                    self=lambda grad, self: grad * sigmoid(-self))


def logsigmoid(input):
    """logsigmoid(input) = log(sigmoid(x)), stably."""
    return _logsigmoid(input)


# ---------------------------------------------------------------- ELU family

def _elu_fwd(xp, self, alpha, scale, input_scale):
    neg = xp.expm1(_bound(xp.minimum, 0, self) * input_scale) * (alpha * scale)
    return _select(xp, self > 0, self * scale, neg).astype(self.dtype, copy=False)


def _elu_grad(grad, self, alpha, scale, input_scale):
    # (PyTorch's branch test, x <= 0: the positive side's gradient at a NaN x)
    return where(self <= 0, grad * (alpha * scale * input_scale) * exp(self * input_scale),
                 grad * scale)


_elu = defop("elu", _elu_fwd, promote="float", self=_elu_grad)


def _celu_scale(alpha):
    return 1.0 / float(_np.float32(alpha))  # PyTorch's formula: 1.0 / alpha.toFloat()


_celu = defop("celu", _elu_fwd, promote="float",
              self=lambda grad, self, alpha: _elu_grad(grad, self, alpha, 1.0, _celu_scale(alpha)))


def elu(input, alpha=1.0, inplace=False):
    """elu(input, alpha=1.0, inplace=False)."""
    return _maybe_inplace(input, inplace, _elu, alpha, 1.0, 1.0, inplace_fn=_elu_result)


def selu(input, inplace=False):
    """selu(input, inplace=False) = scale * elu(x, alpha) with the self-normalising constants."""
    return _maybe_inplace(input, inplace, _elu, _SELU_ALPHA, _SELU_SCALE, 1.0,
                          inplace_fn=_elu_result)


def celu(input, alpha=1.0, inplace=False):
    """celu(input, alpha=1.0, inplace=False) = max(0, x) + min(0, alpha * (exp(x/alpha) - 1))."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _maybe_inplace(input, inplace, _celu, alpha, 1.0, 1.0 / alpha,
                          inplace_fn=_celu_result)


# ---------------------------------------------------------------- piecewise-linear
# Their backwards are ops of their own, as PyTorch's hardtanh_backward/leaky_relu_backward: the
# gradient in `self` is zero, but the result depends on `self`, so a second derivative in the
# input is a zero tensor (as PyTorch's), not a missing one.

def _masked_backward(name, node, factor):
    """An op grad_output * factor(xp, self, param): linear in grad_output (its own derivative),
    of zero derivative in self."""
    op = defop(name, lambda xp, grad_output, self, param: (
                   grad_output * factor(xp, self, param)).astype(grad_output.dtype, copy=False),
               promote="binary", node_name=node,
               grad_output=lambda grad, self, param: op(grad, self, param),
               self=lambda grad: _zeros_like(grad))
    return op


leaky_relu_backward = _masked_backward(
    "leaky_relu_backward", "LeakyReluBackwardBackward0",
    lambda xp, self, slope: xp.where(self > 0, 1.0, slope))


def _cut_backward(name, node, cut):
    """An op: grad_output, except 0 where cut(xp, self, param) (PyTorch's select: 0 whatever
    the gradient there, and the gradient where `self` is NaN); as _masked_backward otherwise."""
    op = defop(name, lambda xp, grad_output, self, param: _select(xp,
                   cut(xp, self, param), 0, grad_output).astype(grad_output.dtype, copy=False),
               promote="binary", node_name=node,
               grad_output=lambda grad, self, param: op(grad, self, param),
               self=lambda grad: _zeros_like(grad))
    return op


hardtanh_backward = _cut_backward(
    "hardtanh_backward", "HardtanhBackwardBackward0",
    lambda xp, self, bounds: (self <= bounds[0]) | (self >= bounds[1]))

_leaky_relu = defop(
    "leaky_relu",
    lambda xp, self, negative_slope: _select(xp, self > 0, self, self * negative_slope).astype(
        self.dtype, copy=False),
    self=lambda grad, self, negative_slope: leaky_relu_backward(grad, self, negative_slope))


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """leaky_relu(input, negative_slope=0.01, inplace=False)."""
    return _maybe_inplace(input, inplace, _leaky_relu, negative_slope,
                          inplace_fn=_leaky_relu_result)


_hardtanh = defop(
    "hardtanh",
    lambda xp, self, min_val, max_val: _clamped(xp, self, min_val, max_val).astype(
        self.dtype, copy=False),
    self=lambda grad, self, min_val, max_val: hardtanh_backward(grad, self, (min_val, max_val)))


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _maybe_inplace(input, inplace, _hardtanh, min_val, max_val)


def relu6(input, inplace=False):
    """relu6(input, inplace=False) = hardtanh(x, 0, 6)."""
    return hardtanh(input, 0.0, 6.0, inplace)


_hardsigmoid = defop(
    "hardsigmoid",
    lambda xp, self: (_clamped(xp, self + 3, 0, 6) / 6).astype(self.dtype, copy=False),
    promote="float",
    self=lambda grad, self: where((self > -3) & (self < 3), grad / 6, 0.0))


def hardsigmoid(input, inplace=False):
    """hardsigmoid(input, inplace=False) = relu6(x + 3) / 6."""
    return _maybe_inplace(input, inplace, _hardsigmoid)


_hardswish = defop(
    "hardswish",
    lambda xp, self: (self * _clamped(xp, self + 3, 0, 6) / 6).astype(self.dtype, copy=False),
    promote="float",
    self=lambda grad, self: where(self < -3, 0.0, where(self <= 3, grad * (self / 3 + 0.5),
                                                        grad)))


def hardswish(input, inplace=False):
    """hardswish(input, inplace=False) = x * relu6(x + 3) / 6."""
    return _maybe_inplace(input, inplace, _hardswish)


_threshold = defop(
    "threshold",
    lambda xp, self, threshold, value: _select(xp, self <= threshold, value, self).astype(
        self.dtype, copy=False),  # (PyTorch's test: NaN stays NaN)
    self=lambda grad, self, threshold: threshold_backward(grad, self, threshold))


def threshold(input, threshold, value, inplace=False):
    """threshold(input, threshold, value, inplace=False): x if x > threshold else value."""
    return _maybe_inplace(input, inplace, _threshold, threshold, value,
                          inplace_fn=_threshold_result)


# In-place overloads, named like PyTorch's: EluBackward1, CeluBackward1 and LeakyReluBackward1
# read the output (which overwrote the input); ThresholdBackward1 reads the input.

def _elu_result_grad(grad, result, alpha, scale, input_scale):
    if alpha < 0:
        raise RuntimeError(
            "In-place elu backward calculation is triggered with a negative slope which is not "
            "supported. This is caused by calling in-place forward function with a negative "
            "slope, please call out-of-place version instead.")
    return where(result <= 0, grad * input_scale * (result + alpha * scale), grad * scale)


def _leaky_relu_result_grad(grad, result, negative_slope):
    if negative_slope < 0:
        raise RuntimeError(
            "In-place leakyReLu backward calculation is triggered with a negative slope which is "
            "not supported. This is caused by calling in-place forward function with a negative "
            "slope, please call out-of-place version instead. File an issue at "
            "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
            "backward calculation with negative slope")
    return leaky_relu_backward(grad, result, negative_slope)


_elu_result = defop("elu_", _elu_fwd, promote="float", node_name="EluBackward1",
                    self=_elu_result_grad)
_celu_result = defop(
    "celu_", _elu_fwd, promote="float", node_name="CeluBackward1",
    self=lambda grad, result, alpha: _elu_result_grad(grad, result, alpha, 1.0, _celu_scale(alpha)))
_leaky_relu_result = defop(
    "leaky_relu_",
    lambda xp, self, negative_slope: _select(xp, self > 0, self, self * negative_slope).astype(
        self.dtype, copy=False),
    node_name="LeakyReluBackward1", self=_leaky_relu_result_grad)
_threshold_result = defop(
    "threshold_",
    lambda xp, self, threshold, value: _select(xp, self <= threshold, value, self).astype(
        self.dtype, copy=False),  # (PyTorch's test: NaN stays NaN)
    node_name="ThresholdBackward1",  # (PyTorch's saves the input, not the result)
    self=lambda grad, self, threshold: threshold_backward(grad, self, threshold))


def softsign(input):
    """softsign(input) = x / (1 + |x|)."""
    return input / (_abs(input) + 1)


def tanhshrink(input):
    """tanhshrink(input) = x - tanh(x)."""
    return input - tanh(input)


# ---------------------------------------------------------------- one_hot

def _one_hot_fwd(xp, self, num_classes):
    out = xp.zeros(self.shape + (num_classes,), dtype="int64")
    xp.put_along_axis(out, self[..., None], 1, axis=-1)
    return out


_one_hot = defop("one_hot", _one_hot_fwd, differentiable=False)


def one_hot(tensor, num_classes=-1):
    """one_hot(tensor, num_classes=-1): int64 indicator vectors along a new last dim."""
    if tensor.dtype is not D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    data = tensor._data
    if data.size and int(data.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        if data.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(data.max()) + 1
    elif data.size and int(data.max()) >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return _one_hot(tensor, num_classes)


# ---------------------------------------------------------------- Tensor methods

def _softmax_method(self, dim, dtype=None):
    return softmax(self, dim, dtype=dtype)


def _log_softmax_method(self, dim, dtype=None):
    return log_softmax(self, dim, dtype=dtype)


METHODS = {"softmax": _softmax_method, "log_softmax": _log_softmax_method}
