"""torch.distributions.utils: the helpers families share."""
import math

from . import _torch as _t
from .distribution import broadcast_all, lazy_property
from .discrete import probs_to_logits, logits_to_probs

__all__ = ["broadcast_all", "lazy_property", "probs_to_logits", "logits_to_probs",
           "clamp_probs", "tril_matrix_to_vec", "vec_to_tril_matrix"]


def clamp_probs(probs):
    eps = _t.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def tril_matrix_to_vec(mat, diag=0):
    """The entries on and below diagonal `diag`, row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = _t.tril_indices(n, n, offset=diag)
    return mat[..., rows, cols]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of tril_matrix_to_vec: a square matrix, zero above diagonal `diag`."""
    m = vec.shape[-1]
    n = (-(1 + 2 * diag) + math.sqrt((1 + 2 * diag) ** 2 + 8 * m + 4 * abs(diag) * (diag + 1))) / 2
    eps = _t.finfo(_t.float32).eps
    if round(n) - n > eps:
        raise ValueError(f"The size of last dimension is {m} which cannot be expressed as "
                         f"the lower triangular part of a square D x D matrix.")
    n = round(n.item()) if isinstance(n, _t.Tensor) else round(n)
    rows, cols = _t.tril_indices(n, n, offset=diag)
    mat = _t.zeros(tuple(vec.shape[:-1]) + (n, n), dtype=vec.dtype)
    mat[..., rows, cols] = vec
    return mat


def _sum_rightmost(value, dim):
    """Sum out the `dim` rightmost dimensions of `value` (PyTorch's private helper, which
    libraries such as pyro and zuko import)."""
    if dim == 0:
        return value
    required_shape = value.shape[:-dim] + (-1,)
    return value.reshape(required_shape).sum(-1)


def _standard_normal(shape, dtype, device):
    """Standard normal draws of `shape` (PyTorch's private helper)."""
    from .. import empty
    return empty(shape, dtype=dtype, device=device).normal_()
