"""The array arithmetic of the optimizers' single-tensor kernels, rounded as PyTorch's CPU kernels
round (ops/_fma.py: the fused multiply-adds of add_(alpha), addcmul_ and lerp_), so float32 and
float64 trajectories follow PyTorch's bit for bit.

Complex parameters are updated as pairs of reals (`as_real`), as PyTorch's `view_as_real` does.
"""
from .._backend import xp_of
from ..ops._fma import (fma, scalar, add_, add, addcmul_, addcmul, addcdiv_, addcdiv,  # noqa: F401
                        lerp_, lerp)

__all__ = ["add_", "add", "addcmul_", "addcmul", "addcdiv_", "addcdiv", "lerp_", "lerp",
           "as_real", "fma", "sqrt", "scalar"]


def sqrt(arr, out=None):
    """Square root, correctly rounded. PyTorch's CPU build takes its sqrt from MKL's vector math
    (vsSqrt/vdSqrt: within 0.75 ulp, 17 % of float32 results one ulp off the correctly rounded
    one): ndgrad keeps the correctly rounded root; tests put PyTorch's in here to show that every
    other operation of a trajectory is PyTorch's, bit for bit."""
    return xp_of(arr).sqrt(arr, out=out)


def as_real(arr):
    """A complex array as a real array with a trailing dimension of 2 (a view), others as they
    are: PyTorch's optimizers treat a complex parameter as two independent reals. The trailing
    unit axis lets the view work on any strides (a gradient may be a transposed array)."""
    if arr.dtype.kind == "c":
        return arr[..., None].view(arr.real.dtype)
    return arr
