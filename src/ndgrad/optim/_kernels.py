"""The in-place tensor arithmetic of PyTorch's optimizers, on raw arrays, rounded as PyTorch's CPU
kernels round, so float32 trajectories follow PyTorch's and not only float64 ones.

PyTorch's vectorized CPU kernels evaluate these with a fused multiply-add (one rounding):

    add_(other, alpha)          self + alpha * other            fma(other, alpha, self)
    addcmul_(t1, t2, value)     self + (value * t1) * t2        fma(value * t1, t2, self)
    addcdiv_(t1, t2, value)     self + (value * t1) / t2        two roundings, no fma
    lerp_(end, w), |w| < 0.5    self + w * (end - self)         fma(w, end - self, self)
    lerp_(end, w), |w| >= 0.5   end - (end - self) * (1 - w)    fma(self - end, 1 - w, end)

NumPy has no fma; for float32 (and narrower) arrays the product and sum are formed in float64,
where the product of two float32 values is exact, and rounded once to the array's dtype. Python
scalars are rounded to the array's dtype first, as PyTorch converts them to `scalar_t`. float64
arrays use plain arithmetic (one rounding more than PyTorch's fma, far below any tolerance).
Complex parameters are updated as pairs of reals (`as_real`), as PyTorch's `view_as_real` does.
"""
import numpy as np

from .._backend import is_array, xp_of

__all__ = ["add_", "add", "addcmul_", "addcmul", "addcdiv_", "lerp_", "lerp", "as_real", "fma"]


def _narrow(arr):
    return arr.dtype.kind == "f" and arr.dtype.itemsize < 8


def _scalar(value, arr):
    """A Python scalar as PyTorch passes it to a kernel of arr's dtype."""
    return arr.dtype.type(value) if arr.dtype.kind == "f" else value


def fma(a, b, c, out=None):
    """a * b + c with one rounding (emulated for float32) into `out` (a new array if None)."""
    ref = c if is_array(c) else (a if is_array(a) else b)
    dt = ref.dtype
    xp = xp_of(ref)
    if _narrow(ref):
        r = xp.multiply(a, b, dtype=np.float64)
        r += xp.asarray(c, dtype=np.float64)
        if out is None:
            return r.astype(dt)
        out[...] = r
        return out
    if out is None:
        return a * b + c
    return xp.add(a * b, c, out=out)


def add_(self, other, alpha=1.0):
    """self.add_(other, alpha=alpha)."""
    if alpha == 1:
        self += other
        return self
    return fma(other, _scalar(alpha, self), self, out=self)


def add(self, other, alpha=1.0):
    """self.add(other, alpha=alpha) as a new array."""
    if alpha == 1:
        return self + other
    return fma(other, _scalar(alpha, self), self)


def addcmul_(self, t1, t2, value=1.0):
    """self.addcmul_(t1, t2, value=value)."""
    v = _scalar(value, self)
    return fma(t1 if value == 1 else v * t1, t2, self, out=self)


def addcmul(self, t1, t2, value=1.0):
    v = _scalar(value, self)
    return fma(t1 if value == 1 else v * t1, t2, self)


def addcdiv_(self, t1, t2, value=1.0):
    """self.addcdiv_(t1, t2, value=value): (value * t1) / t2, then the add."""
    v = _scalar(value, self)
    q = (t1 if value == 1 else v * t1) / t2
    self += q
    return self


def lerp_(self, end, weight):
    """self.lerp_(end, weight) for a Python-scalar weight."""
    w = _scalar(weight, self)
    if abs(weight) < 0.5:
        return fma(w, end - self, self, out=self)
    one_minus = _scalar(1, self) - w
    diff = self - end
    return fma(diff, one_minus, end, out=self)


def lerp(self, end, weight):
    return lerp_(self.copy(), end, weight)


def as_real(arr):
    """A complex array as a real array with a trailing dimension of 2 (a view), others as they
    are: PyTorch's optimizers treat a complex parameter as two independent reals. The trailing
    unit axis lets the view work on any strides (a gradient may be a transposed array)."""
    if arr.dtype.kind == "c":
        return arr[..., None].view(arr.real.dtype)
    return arr
