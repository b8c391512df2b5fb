"""clip_grad_norm_ and clip_grad_value_."""
import math

import numpy as _np

from ..._backend import is_array, to_numpy, xp_of
from ..._tensor import Tensor, _make
from ...ops.reduction import sum_squares
from ...autograd.grad_mode import no_grad


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p for p in parameters if p.grad is not None]


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    norm_type = float(norm_type)
    if len(tensors) == 0:
        from ..._creation import tensor
        return tensor(0.0)
    arrays = [t._data for t in tensors]
    xp = xp_of(arrays[0])
    # (float(): the total comes to the host once, for the finiteness check and the clip factor)
    if norm_type == math.inf:
        total = max(float(xp.abs(a).max()) if a.size else 0.0 for a in arrays)
    elif norm_type == -math.inf:
        total = min(float(xp.abs(a).min()) for a in arrays)
    elif norm_type == 2.0 and hasattr(xp, "vecdot") and all(a.dtype.char in "fd"
                                                           for a in arrays):
        # the squares summed by blocked dot products, in double across the blocks (4.6 M
        # float32 gradients: 10 ms with float64 copies, 3.4 by einsum in float64, 0.3 here)
        total = math.sqrt(sum(sum_squares(xp, a) for a in arrays))
    else:
        norms = [xp.sum(xp.abs(a.astype(_np.float64)) ** norm_type) ** (1 / norm_type)
                 for a in arrays]
        total = float(xp.sum(xp.stack(norms) ** norm_type) ** (1 / norm_type))
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
            "by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return _make(xp.asarray(total, dtype=tensors[0].dtype.np))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scale all gradients together so their total norm is at most max_norm; returns the norm."""
    params = _grads(parameters)
    total = get_total_norm([p.grad for p in params], norm_type, error_if_nonfinite)
    clip_grads_with_norm_(params, max_norm, total)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    import warnings
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element into [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    for p in _grads(parameters):
        g = p.grad
        xp_of(g._data).clip(g._data, -clip_value, clip_value, out=g._data)
        g._bump_version()


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients by min(1, max_norm / (total_norm + 1e-6)), total_norm being given
    (e.g. by get_total_norm): the second half of clip_grad_norm_."""
    grads = [p.grad for p in _grads(parameters)]
    if not grads:
        return
    xp = xp_of(grads[0]._data)
    tn = total_norm._data if isinstance(total_norm, Tensor) else total_norm
    if is_array(tn) and xp_of(tn) is not xp:
        tn = to_numpy(tn)  # host: a norm on another device, one explicit transfer
    tn = xp.asarray(tn)
    if tn.dtype.kind != "f":
        tn = tn.astype(_np.float32)
    one = tn.dtype.type
    # PyTorch's `clamp(max_norm / (total_norm + 1e-6), max=1.0)` in the norm's dtype, where a
    # number divided by a tensor is the tensor's reciprocal times the number (Tensor.__rdiv__):
    # a quotient rounded once differs from it in a quarter of the cases
    coef = xp.minimum(xp.reciprocal(tn + one(1e-6)) * one(float(max_norm)), one(1.0))
    scale = bool(coef != 1)     # (x * 1 is x: the pass is skipped, the version still bumped)
    with no_grad():
        for g in grads:
            if scale:
                xp.multiply(g._data, coef, out=g._data, casting="unsafe")
            g._bump_version()
