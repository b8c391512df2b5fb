"""The in-place tensor arithmetic of PyTorch's optimizers, on raw arrays, rounded as PyTorch's CPU
kernels round, so float32 and float64 trajectories follow PyTorch's bit for bit.

PyTorch's vectorized CPU kernels evaluate these with a fused multiply-add (one rounding):

    add_(other, alpha)          self + alpha * other            fma(alpha, other, self)
    addcmul_(t1, t2, value)     self + (value * t1) * t2        fma(value * t1, t2, self)
    addcdiv_(t1, t2, value)     self + (value * t1) / t2        two roundings, no fma
    lerp_(end, w), |w| < 0.5    self + w * (end - self)         fma(w, end - self, self)
    lerp_(end, w), |w| >= 0.5   end - (end - self) * (1 - w)    fma(self - end, 1 - w, end)

Python scalars are rounded to the array's dtype first, as PyTorch converts them to `scalar_t`.
Complex parameters are updated as pairs of reals (`as_real`), as PyTorch's `view_as_real` does.

Note [fused multiply-add without fma]
NumPy has no fma. Forming a * b + c in a wider type costs three slow conversion passes (about
ten times a float32 add: float32 -> float64 casts run at a fifth of an add's speed) and float64
has no wider type. `fma` instead certifies the result in the arrays' own dtype:

1. Two products that bracket the exact a * b: for a Python-scalar `a`, `a`'s two neighbouring
   floats times `b`; for two arrays, t = fl(a * b) scaled by (1 - u) and (1 + 2u), u = 2^-p.
   Rounding is monotone, so lo <= a * b <= hi (in magnitude order) for every product in the
   normal range.
2. A = fl(c + lo) and B = fl(c + hi). Rounding is monotone again, so the correctly rounded
   fl(c + a * b) lies between A and B: where A == B it *is* A.
3. The few elements where A != B (a rounding boundary between the two sums: about 2 % for an
   SGD update) and, when present, those where a product may have left the normal range (the
   result below 2^(emin + p + 3) in magnitude with a nonzero product, or infinite), are computed
   exactly on their own: float32 through float64 (the product is exact there) rounded to odd
   then to nearest; float64 through Dekker's exact product and Boldo and Melquiond's
   rounding-to-odd sum (Emulation of FMA and correctly-rounded sums: proved algorithms using
   rounding to odd, IEEE Trans. Computers 57(4), 2008). The one approximation: float64 sums
   whose addend and product are both nonzero and below 2^-960 (Dekker's error term underflows
   there) take the plain sum, which differs from a fused one only at ties of the product.

That is six array passes plus two reductions, about five times a plain float32 `p -= lr * g`
and a third of the float64 route (docs/performance.md has the figures), with PyTorch's bits.
"""
import numpy as np

from .._backend import is_array, xp_of

__all__ = ["add_", "add", "addcmul_", "addcmul", "addcdiv_", "addcdiv", "lerp_", "lerp",
           "as_real", "fma", "sqrt", "scalar"]

_CONSTS = {}


def _consts(dt):
    """Per float dtype: the bracket factors (1 - u, 1 + 2u), the magnitude below which a result
    may come from a product that left the normal range, and the largest finite value."""
    k = _CONSTS.get(dt)
    if k is None:
        fi = np.finfo(dt)
        u = 2.0 ** -(fi.nmant + 1)
        k = (dt.type(1 - u), dt.type(1 + 2 * u), dt.type(float(fi.tiny) * 2.0 ** (fi.nmant + 4)),
             dt.type(fi.max))
        _CONSTS[dt] = k
    return k


def scalar(value, arr):
    """A Python scalar as PyTorch passes it to a kernel of arr's dtype: rounded to a float
    dtype (to float32, the kernels' opmath, for float16); integers and complex values as they
    are."""
    dt = arr.dtype
    if dt.kind != "f":
        return value
    return dt.type(value) if dt.itemsize >= 4 else np.float32(value)


def fma(a, b, c, out=None):
    """a * b + c rounded once, as a fused multiply-add, into `out` (a new array if None).

    `c` is an array; `a` and `b` are arrays or scalars (a scalar already of the arrays' dtype
    or a Python number, rounded to it). See Note [fused multiply-add without fma]."""
    if not is_array(a):
        if not is_array(b):
            return _plain(a, b, c, out)
    elif not is_array(b):
        a, b = b, a
    dt = c.dtype if is_array(c) else b.dtype
    if dt.kind != "f":
        return _plain(a, b, c, out)
    if dt.itemsize < 4:     # float16: PyTorch's opmath is float32, rounded once more at the end
        xp = xp_of(b)
        r = fma(a if not is_array(a) else a.astype(np.float32), b.astype(np.float32),
                c.astype(np.float32) if is_array(c) else c)
        if out is None:
            return r.astype(dt)
        out[...] = r
        return out
    xp = xp_of(b)
    if b.ndim == 0 and getattr(c, "ndim", 0) == 0 and getattr(a, "ndim", 0) == 0:
        # 0-d: ufuncs would return scalars; one element in a 1-d array instead
        r = fma(a.reshape(1) if is_array(a) else a, b.reshape(1),
                c.reshape(1) if is_array(c) else c).reshape(())
        if out is None:
            return r
        out[...] = r
        return out
    c_lo, c_hi, tiny, big = _consts(dt)
    if is_array(a):
        lo = xp.multiply(a, b)
        hi = xp.multiply(lo, c_hi)
        xp.multiply(lo, c_lo, out=lo)
    else:
        a = dt.type(a)
        if a == 0 or not np.isfinite(a):  # host: a scalar (0, inf, nan: a * b exact or not finite)
            return _plain(a, b, c, out)
        lo = xp.multiply(b, np.nextafter(a, dt.type(0)))                  # host: a scalar
        hi = xp.multiply(b, np.nextafter(a, dt.type(np.inf) * np.sign(a)))  # host: a scalar
    if lo.shape == xp.broadcast_shapes(lo.shape, getattr(c, "shape", ())):
        xp.add(c, lo, out=lo)
        xp.add(c, hi, out=hi)
    else:
        lo, hi = xp.add(c, lo), xp.add(c, hi)
    flag = xp.not_equal(lo, hi)
    bad = bool(flag.any())
    mag = xp.abs(hi, out=hi)
    if not (mag.min() >= tiny and mag.max() <= big):
        # a product that may have left the normal range (its bracket is no bound there), or
        # an infinite sum (a product that overflowed). A zero product is exact.
        edge = (mag < tiny) | (mag > big)
        nonzero = xp.not_equal(b, 0)
        if is_array(a):
            nonzero &= xp.not_equal(a, 0)
        edge &= nonzero
        flag |= edge
        bad = bool(flag.any())
    if not bad:
        if out is None:
            return lo
        out[...] = lo
        return out
    shape = lo.shape
    if flag.ndim:
        where = xp.nonzero(flag)
    else:
        where = ()
    sub = [_take(x, shape, where) for x in (a, b, c)]
    exact = _exact(*sub, dt, xp)
    if out is None:
        out = lo
    else:
        out[...] = lo
    out[where] = exact
    return out


def _take(x, shape, where):
    if not is_array(x):
        return x
    xp = xp_of(x)
    if x.shape != shape:
        x = xp.broadcast_to(x, shape)
    return xp.asarray(x[where])


def _plain(a, b, c, out):
    if out is None:
        return a * b + c
    xp = xp_of(out)
    return xp.add(a * b, c, out=out)


def _exact(a, b, c, dt, xp):
    """fl(a * b + c) exactly rounded, elementwise over a few elements."""
    with np.errstate(all="ignore"):  # host: error state (inf and nan elements)
        if dt.itemsize == 4:
            f = np.float64
            a = f(a) if not is_array(a) else a.astype(f)
            p = a * b.astype(f)           # exact: 24 + 24 bits
            c = c.astype(f) if is_array(c) else f(c)
            s, e = _two_sum(c, p)
            return _round_odd(s, e, xp).astype(dt)
        a = xp.broadcast_to(xp.asarray(a, dtype=dt), b.shape)
        c = xp.broadcast_to(xp.asarray(c, dtype=dt), b.shape)
        # scale huge operands by powers of two (exact) so that Dekker's split cannot overflow
        s = xp.where((xp.abs(a) > 2.0 ** 900) | (xp.abs(b) > 2.0 ** 900), 2.0 ** -64, 1.0)
        a2, b2, c2 = a * s, b * s, c * (s * s)
        ph, pl = _two_prod(a2, b2)
        th, tl = _two_sum(c2, ph)
        v, w = _two_sum(tl, pl)
        r = th + _round_odd(v, w, xp)
        r = xp.where(xp.isfinite(c2), r, c2 + ph) / (s * s)
        zero_product = xp.equal(a, 0) | xp.equal(b, 0)
        # c == 0: the rounded product itself (its sign too, when it underflows to zero);
        # infinite or nan operands: IEEE's a * b + c
        plain = ~(xp.isfinite(a) & xp.isfinite(b)) | (xp.equal(c, 0) & zero_product)
        # both below 2^-960: Dekker's error term underflows; the plain sum (exact there but
        # for ties of the product on the subnormal grid) is the one approximation left
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
    return fma(t1 if value == 1 else scalar(value, self) * t1, t2, self, out=self)


def addcmul(self, t1, t2, value=1.0):
    return fma(t1 if value == 1 else scalar(value, self) * t1, t2, self)


def addcdiv_(self, t1, t2, value=1.0):
    """self.addcdiv_(t1, t2, value=value): (value * t1) / t2, then the add."""
    q = (t1 if value == 1 else scalar(value, self) * t1) / t2
    self += q
    return self


def addcdiv(self, t1, t2, value=1.0):
    return self + (t1 if value == 1 else scalar(value, self) * t1) / t2


def lerp_(self, end, weight):
    """self.lerp_(end, weight) for a scalar or array weight: PyTorch's two-sided formula (exact
    at both ends)."""
    if is_array(weight) and weight.ndim:
        return _lerp_array(self, end, weight, out=self)
    w = scalar(weight, self)
    if abs(weight) < 0.5:
        return fma(w, end - self, self, out=self)
    return fma(self - end, scalar(1, self) - w, end, out=self)


def lerp(self, end, weight):
    """self.lerp(end, weight) as a new array."""
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


def sqrt(arr, out=None):
    """Square root (the one kernel PyTorch's CPU build takes from MKL: see the tests' note)."""
    return xp_of(arr).sqrt(arr, out=out)


def as_real(arr):
    """A complex array as a real array with a trailing dimension of 2 (a view), others as they
    are: PyTorch's optimizers treat a complex parameter as two independent reals. The trailing
    unit axis lets the view work on any strides (a gradient may be a transposed array)."""
    if arr.dtype.kind == "c":
        return arr[..., None].view(arr.real.dtype)
    return arr
