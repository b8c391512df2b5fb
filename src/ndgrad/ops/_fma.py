"""PyTorch's fused multiply-adds on arrays: add(alpha), sub(alpha), addcmul and lerp rounded once,
as PyTorch's vectorized CPU (and CUDA) kernels round them, for float32 and float64.

    add(self, other, alpha)         self + alpha * other            fma(alpha, other, self)
    addcmul(self, t1, t2, value)    self + (value * t1) * t2        fma(value * t1, t2, self)
    addcdiv(self, t1, t2, value)    self + (value * t1) / t2        two roundings, no fma
    lerp(self, end, w), |w| < 0.5   self + w * (end - self)         fma(w, end - self, self)
    lerp(self, end, w), |w| >= 0.5  end - (end - self) * (1 - w)    fma(self - end, 1 - w, end)

Python scalars are rounded to the array's dtype first, as PyTorch converts them to `scalar_t`
(float32, PyTorch's opmath, for float16 arrays)."""

import math

import numpy as np

from .._backend import is_array, xp_of, ERR_VAR, ERR_IGNORE
from . import _blas, _parallel as _par
from ._scratch import scratch as _slot, MIN as _SLOT_MIN

__all__ = ["fma", "scalar", "sqrt", "add_", "add", "addcmul_", "addcmul", "addcdiv_", "addcdiv",
           "lerp_", "lerp"]

_CONSTS = {}


def _consts(dt):
    """Per float dtype: the bracket factors (1 - u, 1 + 2u), the magnitude below which a result
    may come from a product that left the normal range, and the largest finite value."""
    k = _CONSTS.get(dt.type)
    if k is None:
        fi = np.finfo(dt)
        u = 2.0 ** -(fi.nmant + 1)
        k = (dt.type(1 - u), dt.type(1 + 2 * u), dt.type(float(fi.tiny) * 2.0 ** (fi.nmant + 4)),
             dt.type(fi.max))
        _CONSTS[dt.type] = k
    return k


def _shape(xp, a, b, c):
    """The broadcast shape of the operands; not broadcastable: NumPy's ufunc ValueError (which
    the op registry rewords as PyTorch's RuntimeError), not broadcast_shapes' other wording."""
    shapes = (b.shape, c.shape) + ((a.shape,) if is_array(a) else ())
    try:
        return xp.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError("operands could not be broadcast together with shapes "
                         + " ".join(str(s) for s in shapes)) from None

def scalar(value, arr):
    """A Python scalar as PyTorch passes it to a kernel of arr's dtype: rounded to a float
    dtype (to float32, the kernels' opmath, for float16); integers and complex values as they
    are."""
    dt = arr.dtype
    if getattr(value, "ndim", None) == 0 and not isinstance(value, np.generic):
        value = value.item()    # a 0-d array (of any device) passed as a scalar, as .item()
    if dt.kind != "f":
        return value
    return dt.type(value) if dt.itemsize >= 4 else np.float32(value)


# ufuncs whose float16 kernels in PyTorch keep a Python number in float32, their opmath (mul,
# div); add and sub round it to float16 first, as NumPy does with a weak scalar
_OPMATH_NUMBER = frozenset(("multiply", "true_divide"))


def number_operand(ufunc, arr, value):
    """`value` as PyTorch's `ufunc` kernel takes it with a float16 array: a Python float stays in
    float32 for mul and div (the caller rounds the float32 result to float16 once); anything
    else as it is."""
    if value.__class__ is float and arr.dtype.itemsize == 2 and arr.dtype.kind == "f" and \
            ufunc in _OPMATH_NUMBER:
        return np.float32(value)
    return value


# Note [fused multiply-add without fma]
# NumPy has no fma.
#
# float32: the product of two float32 values is exact in float64, so fl64(c + a * b) is the sum
# rounded once, and rounding that to float32 is the fused result unless it lands exactly on a
# float32 tie (then the float64 sum is rounded to odd first: `_round_odd`) or below float32's
# normal range (where the ties sit elsewhere). `_exact32` does that in this thread's float64 work
# arrays: a fresh multi-megabyte temporary costs more in page faults than the arithmetic on it.
# About 7 array passes, 7-8 x a plain `p -= lr * g` (docs/performance.md has the figures).
#
# float64 has no wider type. `_certified` proves the result in float64 itself:
# 1. Two products that bracket the exact a * b: for a scalar `a`, `a`'s two neighbouring floats
#    times `b`; for two arrays, t = fl(a * b) scaled by (1 - u) and (1 + 2u), u = 2^-p. Rounding
#    is monotone, so lo <= a * b <= hi (in magnitude order) for every product in the normal
#    range.
# 2. A = fl(c + lo) and B = fl(c + hi). Rounding is monotone again, so the correctly rounded
#    fl(c + a * b) lies between A and B: where A == B it *is* A.
# 3. The few elements where A != B (a rounding boundary between the two sums: ~0.3 % for an SGD
#    update) and, when present, those where a product may have left the normal range (the
#    result below 2^(emin + p + 3) in magnitude with a nonzero product, or infinite), are
#    computed exactly on their own (`_exact64`): Dekker's exact product and Boldo and
#    Melquiond's rounding-to-odd sum (Emulation of FMA and correctly-rounded sums: proved
#    algorithms using rounding to odd, IEEE Trans. Computers 57(4), 2008). The one
#    approximation: sums whose addend and product are both nonzero and below 2^-960 (Dekker's
#    error term underflows there) take the plain sum, which differs from a fused one only at
#    ties of the product.
# (The certificate works for float32 too, with float64 for the flagged elements; measured, it
# costs as much as the float64 route whole for sparse flags and more for dense ones: an
# exponential average's update has a quarter of its elements at a boundary.)

_MID = (1 << 28, (1 << 29) - 1)    # float64 bits of a float32 tie: bit 28 set, bits 0-27 clear
_TIE_LOW = -(1 << 63)              # those 29 bits shifted to the top of an int64
_ABS_BITS = (1 << 63) - 1
_TINY_BITS = int(np.float64(2.0 ** -125).view(np.int64))


class _quiet:
    """NumPy's error state 'ignore' for the block (inf and nan operands warn nowhere in PyTorch):
    NumPy's own context variable where it has one (a fraction of np.errstate's cost)."""
    __slots__ = ("token", "ctx")

    def __enter__(self):
        if ERR_VAR is not None:
            self.token = ERR_VAR.set(ERR_IGNORE)
        else:
            self.ctx = np.errstate(all="ignore")  # host: error state
            self.ctx.__enter__()

    def __exit__(self, *exc):
        if ERR_VAR is not None:
            ERR_VAR.reset(self.token)
        else:
            self.ctx.__exit__(*exc)


def fma(a, b, c, out=None):
    """a * b + c rounded once, as a fused multiply-add, into `out` (a new array if None).

    `c` is an array; `a` and `b` are arrays or scalars (a scalar already of the arrays' dtype
    or a Python number, rounded to it). See Note [fused multiply-add without fma]."""
    if not is_array(a):
        if not is_array(b):     # two scalars (a 0-d tensor's value times alpha): one rounding
            ref = c if out is None else out
            b = xp_of(ref).asarray(b, dtype=ref.dtype)
    elif not is_array(b) or a.size > b.size:
        a, b = b, a     # (the product commutes; the emulation copies b whole and scales it
                        # by a: a per-channel factor times a batch 5x faster that way round)
    dt = c.dtype
    if dt.kind != "f":
        return _plain(a, b, c, out)
    if dt.itemsize < 4:     # float16: PyTorch's opmath is float32, rounded once more at the end
        f4 = np.float32
        r = fma(a.astype(f4) if is_array(a) else a, b.astype(f4), c.astype(f4))
        return _store(r.astype(dt), out)
    xp = xp_of(c)
    with _quiet():
        if not is_array(a):
            a = dt.type(a)
            if a == 0 or not math.isfinite(a):  # (0, inf, nan: a * b is exact)
                return _plain(a, b, c, out)
        if b.size == 0 or c.size == 0 or (is_array(a) and a.size == 0):
            return _plain(a, b, c, out)
        if c.ndim == 0 and b.ndim == 0 and (not is_array(a) or a.ndim == 0):
            # 0-d: ufuncs would return scalars; one element in a 1-d array instead
            r = fma(a.reshape(1) if is_array(a) else a, b.reshape(1), c.reshape(1))
            return _store(r.reshape(()), out)
        if not is_array(a) and b.shape == c.shape:
            r = _fused_axpy(a, b, c, out)
            if r is not None:
                return r
        if dt.itemsize == 4:
            return _exact32(a, b, c, xp, out)
        return _certified(a, b, c, out, dt, xp)


def _fused_axpy(a, b, c, out):
    """a * b + c for a scalar `a` through BLAS's axpy where it is shown to round once (Note
    [fused axpy] in ops/_blas.py): one pass instead of the emulation's seven, for contiguous
    host arrays of one dtype (an SGD step, Adam's average); None where it does not apply."""
    if type(b) is not np.ndarray or type(c) is not np.ndarray or b.dtype != c.dtype or \
            not (b.flags.c_contiguous and c.flags.c_contiguous):
        return None
    axpy = _blas.axpy(c.dtype)
    if axpy is None:
        return None
    if out is None:
        out = c.copy()
    elif out is c:
        if np.may_share_memory(c, b):  # host: an address-range test (x.add_(x, alpha=2))
            return None
    elif (type(out) is not np.ndarray or out.dtype != c.dtype or out.shape != c.shape or
          not out.flags.c_contiguous or np.may_share_memory(out, b)):  # host: as above
        return None
    else:
        out[...] = c
    axpy(a, b.reshape(-1), out.reshape(-1))
    return out


def _store(r, out):
    if out is None:
        return r
    out[...] = r
    return out


def _certified(a, b, c, out, dt, xp):
    """fma through the bracket certificate (Note [fused multiply-add without fma])."""
    shape = _shape(xp, a, b, c)
    c_lo, c_hi, tiny, big = _consts(dt)
    lo = _scratch("lo", shape, dt, xp) if out is not None else xp.empty(shape, dt)
    hi = _scratch("hi", shape, dt, xp)
    if is_array(a):
        xp.multiply(a, b, out=lo)
        xp.multiply(lo, c_hi, out=hi)
        xp.multiply(lo, c_lo, out=lo)
    else:
        xp.multiply(b, np.nextafter(a, dt.type(0)), out=lo)                   # host: a scalar
        xp.multiply(b, np.nextafter(a, dt.type(np.inf) * np.sign(a)), out=hi)  # host: a scalar
    xp.add(c, lo, out=lo)
    xp.add(c, hi, out=hi)
    flag = xp.not_equal(lo, hi, out=_scratch("flag", shape, bool, xp))
    bad = bool(flag.any())
    mag = xp.abs(hi, out=hi)
    if not (mag.min() >= tiny and mag.max() <= big):
        # a product that may have left the normal range (its bracket is no bound there), or
        # an infinite sum (a product that overflowed). A zero product is exact.
        edge = (mag < tiny) | (mag > big)
        edge &= xp.not_equal(b, 0)
        if is_array(a):
            edge &= xp.not_equal(a, 0)
        flag |= edge
        bad = bool(flag.any())
    if not bad:
        return _store(lo, out)
    where = xp.nonzero(flag)
    sub = [_take(x, shape, where) for x in (a, b, c)]
    exact = _exact32(*sub, xp) if dt.itemsize == 4 else _exact64(*sub, xp)
    if out is None:
        out = lo
    else:
        out[...] = lo
    out[where] = exact
    return out


_WORK_MIN = _SLOT_MIN // 8   # elements: float64 work arrays below it are fresh (no page faults)
_CHUNK = 1 << 18        # float64 work arrays of at most 2 MiB each
_GRAIN = 1 << 17        # elements a thread's piece, at least (Note [Parallel pieces])


def _scratch(name, shape, dtype, xp):
    """This thread's reusable work array `name` (Note [Scratch slots] in ops/_scratch.py:
    fresh below the allocator's mmap threshold, where a fresh array costs no page faults)."""
    return _slot(xp, shape, dtype, "fma_" + name)


def _take(x, shape, where):
    if not is_array(x):
        return x
    if x.shape != shape:
        x = xp_of(x).broadcast_to(x, shape)
    return x[where]


def _plain(a, b, c, out):
    if out is None:
        return a * b + c
    xp = xp_of(out)
    return xp.add(a * b, c, out=out)


def _exact32(a, b, c, xp, out=None):
    """fl32(a * b + c) exactly rounded: the float64 product is exact, the float64 sum rounds once;
    rounding that to float32 is right unless it sits on a float32 tie (then the sum is rounded to
    odd first) or below float32's normal range (where the ties sit elsewhere). Into `out` (a new
    array if None); large operands through this thread's float64 work arrays, in pieces of at
    most _CHUNK elements (the work arrays stay small whatever the parameter's size)."""
    n = b.size
    split = _par.worth(xp, n, _GRAIN)
    if (n > _CHUNK or split) and c.shape == b.shape and (not is_array(a) or a.shape == b.shape) \
            and all(x.flags.c_contiguous for x in (b, c) + ((a,) if is_array(a) else ())) and (
            out is None or (out.shape == b.shape and out.flags.c_contiguous)):
        if out is None:
            out = xp.empty(b.shape, np.float32)
        flat = [x.reshape(-1) if is_array(x) else x for x in (a, b, c, out)]

        def piece(lo, hi):   # (Note [Parallel pieces]: each thread in its own work arrays)
            for i in range(lo, hi, _CHUNK):
                j = min(i + _CHUNK, hi)
                fa, fb, fc, fo = (x[i:j] if is_array(x) else x for x in flat)
                _exact32(fa, fb, fc, xp, fo)
        if split:
            _par.run(piece, n, _GRAIN)
        else:
            piece(0, n)
        return out
    f8 = np.float64
    shape = b.shape
    if c.shape != shape or (is_array(a) and a.shape != shape):
        shape = _shape(xp, a, b, c)
    if b.size >= _WORK_MIN:   # (five passes and two reductions in two work arrays)
        s, w = _scratch("s64", shape, f8, xp), _scratch("w64", shape, f8, xp)
        s[...] = b
        if is_array(a):     # (float32 into the work array, then a float64 pass: NumPy's mixed
            w[...] = a      # float32-float64 loops cast in buffered pieces, 1.5 x slower)
            s *= w
        else:
            s *= f8(a)      # the product, exact
        w[...] = c
        xp.add(w, s, out=s)   # the sum, rounded once (c's NaN first, as fma)
        bits, low = s.view(xp.int64), w.view(xp.int64)
        # |s|'s bits, below 2^-125's for a result under float32's normal range or a zero; where
        # there are some, the same less one as unsigned (a zero wraps to the largest): a zero
        # is exact (zeros are common: a weight whose gradient is always 0 keeps Adam's average 0)
        tiny = bool(xp.bitwise_and(bits, _ABS_BITS, out=low).min() < _TINY_BITS) and \
            bool(xp.subtract(low, 1, out=low).view(xp.uint64).min() < _TINY_BITS - 1)
        # bits 0-28 shifted to the top: a float32 tie is exactly the least int64
        tie = bool(xp.left_shift(bits, 35, out=low).min() == _TIE_LOW)
        if tie or tiny:
            where = _tie_or_tiny(s, xp) if tiny else xp.equal(low, _TIE_LOW)
            s = _fix_ties(s, c, None, where, shape, xp, a, b)
    else:    # (small temporaries come from NumPy's own cache)
        p = xp.multiply(b, a if is_array(a) else f8(a), dtype=f8)   # (exact; broadcasts)
        s = xp.add(c, p, dtype=f8)   # (c exact in float64; a ufunc's layout, not astype's)
        where = _tie_or_tiny(s, xp)
        if bool(where.any()):
            s = _fix_ties(s, c, p, where, shape, xp)
    if out is None:
        return s.astype(np.float32)
    out[...] = s
    return out


def _tie_or_tiny(s, xp):
    """Where the float64 sum s sits on a float32 tie or below float32's normal range (not 0)."""
    mag = xp.abs(s)
    return xp.equal(s.view(xp.int64) & _MID[1], _MID[0]) | ((mag < 2.0 ** -125) & (mag > 0))


def _fix_ties(s, c, p, where, shape, xp, a=None, b=None):
    """s = fl64(c + p) rounded to odd where `where` holds (Note [fused multiply-add without
    fma]): a few elements as a rule (a float32 tie, or a result below float32's normal range,
    about one element in 10^5), so those alone are gathered, fixed and written back; the whole
    array where they are many. p None: the product of a and b, computed where needed."""
    idx = xp.flatnonzero(where)
    if p is None and idx.size * 16 > s.size:
        p = xp.multiply(b, a if is_array(a) else np.float64(a), dtype=np.float64)
    if idx.size * 16 > s.size:
        bb = s - c
        return _round_odd(s, (c - (s - bb)) + (p - bb), xp)
    at = xp.unravel_index(idx, shape)        # (p may be smaller than s, broadcasting over
    ss = s[at]                                # c's dims; s may be in another memory order)
    if p is None:
        ps = _take(b, shape, at).astype(np.float64)
        ps *= _take(a, shape, at) if is_array(a) else np.float64(a)
    else:
        ps = xp.broadcast_to(p, shape)[at]
    cs = xp.broadcast_to(c, shape)[at].astype(np.float64)
    bb = ss - cs
    s[at] = _round_odd(ss, (cs - (ss - bb)) + (ps - bb), xp)
    return s


def _exact64(a, b, c, xp):
    """fl64(a * b + c) exactly rounded, elementwise over a few elements (Note [fused
    multiply-add without fma])."""
    dt = c.dtype
    a = xp.broadcast_to(xp.asarray(a, dtype=dt), b.shape)
    # scale huge operands by powers of two (exact) so that Dekker's split cannot overflow
    s = xp.where((xp.abs(a) > 2.0 ** 900) | (xp.abs(b) > 2.0 ** 900), 2.0 ** -64, 1.0)
    a2, b2, c2 = a * s, b * s, c * (s * s)
    ph, pl = _two_prod(a2, b2)
    th, tl = _two_sum(c2, ph)
    v, w = _two_sum(tl, pl)
    r = th + _round_odd(v, w, xp)
    r = xp.where(xp.isfinite(c2), r, c2 + ph) / (s * s)
    zero_product = xp.equal(a, 0) | xp.equal(b, 0)
    # c == 0: the rounded product itself (its sign too, when it underflows to zero); infinite or
    # nan operands: IEEE's a * b + c; both below 2^-960: the plain sum (Dekker's error term
    # underflows there; the one approximation, at ties of the product only)
    plain = ~(xp.isfinite(a) & xp.isfinite(b)) | (xp.equal(c, 0) & zero_product)
    plain |= (xp.abs(c) < 2.0 ** -960) & (xp.abs(ph) < 2.0 ** -960) & xp.not_equal(c, 0)
    r = xp.where(xp.equal(c, 0) & ~zero_product, a * b, r)
    return xp.where(plain, a * b + c, r)


def _two_sum(x, y):
    """s, e with s = fl(x + y) and s + e = x + y exactly (Knuth)."""
    s = x + y
    bb = s - x
    return s, (x - (s - bb)) + (y - bb)


def _two_prod(a, b):
    """p, e with p = fl(a * b) and p + e = a * b exactly (Dekker, Veltkamp's splitting)."""
    p = a * b
    split = 2.0 ** 27 + 1

    def halves(x):
        y = x * split
        hi = y - (y - x)
        return hi, x - hi
    ah, al = halves(a)
    bh, bl = halves(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _round_odd(s, e, xp):
    """s rounded to odd: where s + e is not s and s's last bit is even, the neighbour of s on
    e's side (whose last bit is odd). Rounding that to a format two or more bits narrower is
    the correct rounding of s + e."""
    bits = s.view(xp.int64)
    even = xp.equal(bits & 1, 0) & xp.not_equal(e, 0) & xp.isfinite(s)
    if not bool(even.any()):
        return s
    up = xp.equal(e > 0, s > 0)         # toward e: away from zero when they agree in sign
    bits = bits + xp.where(even, xp.where(up, 1, -1), 0)
    return bits.view(s.dtype)


def sqrt(x, out=None):
    """Square root, correctly rounded: the one seam of PyTorch's rounding ndgrad does not follow
    (PyTorch's CPU build takes sqrt from MKL's vector math, within 0.75 ulp; see
    optim/_kernels.sqrt). Tests put PyTorch's own sqrt here to compare the rest bit for bit."""
    return xp_of(x).sqrt(x, out=out)


def add_(self, other, alpha=1.0):
    """self.add_(other, alpha=alpha)."""
    if alpha == 1:
        self += other
        return self
    return fma(scalar(alpha, self), other, self, out=self)


def add(self, other, alpha=1.0):
    """self.add(other, alpha=alpha) as a new array."""
    if alpha == 1:
        return self + other
    return fma(scalar(alpha, self), other, self)


def addcmul_(self, t1, t2, value=1.0):
    """self.addcmul_(t1, t2, value=value)."""
    return fma(t1 if value == 1 else _work("vt", t1, scalar(value, self), "multiply"), t2, self,
               out=self)


def addcmul(self, t1, t2, value=1.0):
    return fma(t1 if value == 1 else scalar(value, self) * t1, t2, self)


def addcdiv_(self, t1, t2, value=1.0):
    """self.addcdiv_(t1, t2, value=value): (value * t1) / t2, then the add."""
    q = _work("vt", t1, scalar(value, self), "multiply") if value != 1 else t1
    q = _work("q", q, t2, "true_divide")
    self += q
    return self


def addcdiv(self, t1, t2, value=1.0):
    return self + (t1 if value == 1 else scalar(value, self) * t1) / t2


def _widened(self, end, weight):
    """float16 operands in float32, PyTorch's opmath for them: the difference end - self is not
    rounded to float16 either (it was: a fifth of float16 lerps differed from PyTorch's)."""
    f4 = np.float32
    return (self.astype(f4), end.astype(f4) if is_array(end) else end,
            weight.astype(f4) if is_array(weight) and weight.dtype.itemsize < 4 else weight)


def lerp_(self, end, weight):
    """self.lerp_(end, weight) for a scalar or array weight: PyTorch's two-sided formula (exact
    at both ends)."""
    if self.dtype.itemsize < 4:
        self[...] = lerp(*_widened(self, end, weight))
        return self
    if is_array(weight) and weight.ndim:
        return _lerp_array(self, end, weight, out=self)
    w = scalar(weight, self)
    if abs(weight) < 0.5:
        return fma(w, _work("diff", end, self, "subtract"), self, out=self)
    return fma(_work("diff", self, end, "subtract"), scalar(1, self) - w, end, out=self)


def _work(name, x, y, ufunc):
    """x (ufunc) y into this thread's work array `name` when x is an array of the result's
    shape and dtype (an in-place update's temporary: no fresh memory per call)."""
    xp = xp_of(x) if is_array(x) else xp_of(y)
    f = getattr(xp, ufunc)
    if is_array(x) and (not is_array(y) or y.shape == x.shape) and \
            x.nbytes >= _SLOT_MIN:
        dt = xp.result_type(x, y)
        if dt == x.dtype:
            return f(x, y, out=_scratch(name, x.shape, dt, xp))
    return f(x, y)


def lerp(self, end, weight):
    """self.lerp(end, weight) as a new array."""
    if self.dtype.itemsize < 4:
        return lerp(*_widened(self, end, weight)).astype(self.dtype)
    if is_array(weight) and weight.ndim:
        return _lerp_array(self, end, weight)
    w = scalar(weight, self)
    if abs(weight) < 0.5:
        return fma(w, end - self, self)
    return fma(self - end, scalar(1, self) - w, end)


def _lerp_array(self, end, weight, out=None):
    xp = xp_of(self)
    small = xp.abs(weight) < 0.5
    near = fma(weight, end - self, self)
    far = fma(self - end, 1 - weight, end)
    r = xp.where(small, near, far)
    if out is None:
        return r
    out[...] = r
    return out



# ---------------------------------------------------------------- the Tensor ops' forwards

def fusable(*operands):
    """Whether PyTorch fuses these operands' multiply-add: real float arrays of one dtype
    (float32 or float64; float16 goes through float32) and Python or NumPy scalars."""
    dt = None
    for x in operands:
        if is_array(x):
            if x.dtype.kind != "f" or (dt is not None and x.dtype != dt):
                return False
            dt = x.dtype
        elif not isinstance(x, (int, float)) and not (hasattr(x, "dtype") and
                                                      x.dtype.kind in "fiub"):
            return False
    return dt is not None


def add_scaled(xp, self, other, alpha):
    """self + alpha * other, PyTorch's add/sub kernel with alpha != 1: one rounding for float
    arrays (alpha in the arrays' dtype), the plain expression otherwise."""
    if fusable(self, other):
        if is_array(self) and self.ndim:
            return fma(scalar(alpha, self), other, self)
        if is_array(other) and other.ndim and (not is_array(self) or not self.ndim):
            # rsub(t, number): the number (or its 0-d array) minus alpha * t
            return fma(scalar(alpha, other), other, xp.asarray(self, dtype=other.dtype))
    return xp.add(self, xp.multiply(other, alpha))


def addcmul_forward(xp, self, tensor1, tensor2, value):
    """self + value * tensor1 * tensor2 with PyTorch's rounding: (value * tensor1) rounded, then
    a fused multiply-add with tensor2."""
    if is_array(self) and self.ndim and fusable(self, tensor1, tensor2):
        return addcmul(self, tensor1, tensor2, value)
    return self + value * tensor1 * tensor2


# Note [Scalar tails of half kernels]
# PyTorch's vectorized CPU loop (cpu_kernel_vec) takes 32 float16/bfloat16 elements at a time
# (add's and rsqrt's AVX2 builds, on AVX-512 CPUs too; pow's AVX-512 build: 64; measured) and
# leaves the rest of each thread's piece to its scalar code. Where the two differ on the half types, ndgrad
# recomputes those elements as the scalar code does: add and sub with alpha (the vector code
# converts to float32 and fuses, self + alpha * other rounded once with alpha rounded to the
# half dtype; the scalar code is c10::Half arithmetic, which rounds alpha * other before the
# sum) and rsqrt (the scalar code rounds the root before dividing). Tensors under 32 elements
# (a bias, a small norm's weight) are all tail.


def _tail_positions(xp, n, block=32):
    """The flat positions PyTorch's scalar loop takes in a contiguous kernel over n elements:
    the last (piece mod block) of each thread's piece; None if there are none."""
    from ._cascade import thread_piece
    piece = thread_piece(n) or n
    ends = list(range(piece, n, piece)) + [n]
    starts = [0] + ends[:-1]
    idx = [(e - (e - s) % block, e) for s, e in zip(starts, ends) if (e - s) % block]
    if not idx:
        return None
    return xp.concatenate([xp.arange(a, b) for a, b in idx])


def _avx512():
    from ..backends import get_cpu_capability
    return get_cpu_capability() == "AVX512"


def _dense(*arrays):
    """Same-shaped C-contiguous host arrays (the scalar tails are PyTorch's CPU loops')."""
    return all(type(a) is np.ndarray and a.shape == arrays[0].shape and a.flags.c_contiguous
               for a in arrays)


def scalar_tails(name, out, arrays, kw, low):
    """out, the float32 result of op `name` on the float32 widenings `arrays` of arrays of the
    half dtype `low`, with the elements PyTorch's scalar loop computes (Note [Scalar tails of
    half kernels]) recomputed as it does: add/sub/rsub with alpha != 1, rsqrt (and x ** -0.5)."""
    f4 = np.float32
    if name == "rsqrt" or (name == "pow" and len(arrays) == 2 and not kw and
                           arrays[1].__class__ in (int, float) and arrays[1] == -0.5):
        x = arrays[0]
        if not _dense(out, x):
            return out
        xp = xp_of(out)     # (pow's kernel has an AVX-512 build: two vectors of 32)
        at = _tail_positions(xp, out.size, 64 if name == "pow" and _avx512() else 32)
        if at is not None:      # 1 / sqrt(x), the root rounded to the half dtype first
            r = out.reshape(-1)
            with _quiet():
                root = xp.sqrt(x.reshape(-1)[at]).astype(low).astype(f4)
                r[at] = (f4(1) / root).astype(low).astype(f4)
        return out
    alpha = arrays[2] if len(arrays) == 3 else kw.get("alpha", 1)
    if name == "pow" or alpha == 1 or len(arrays) < 2:
        return out
    s, o = (arrays[1], arrays[0]) if name == "rsub_tensor" else (arrays[0], arrays[1])
    if not _dense(out, s, o):   # (other loops than the contiguous one: left as computed)
        return out
    at = _tail_positions(xp_of(out), out.size)
    if at is not None:      # self + sign * (alpha * other rounded to the half dtype)
        prod = (f4(alpha) * o.reshape(-1)[at]).astype(low).astype(f4)
        sv, r = s.reshape(-1)[at], out.reshape(-1)
        r[at] = ((sv + prod) if name == "add" else (sv - prod)).astype(low).astype(f4)
    return out
