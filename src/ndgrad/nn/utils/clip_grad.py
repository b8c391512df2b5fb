"""clip_grad_norm_ and clip_grad_value_."""
import math

import numpy as _np

from ..._backend import is_array, to_numpy, xp_of
from ..._tensor import Tensor, _make
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
    elif norm_type == 2.0 and xp is _np and all(a.dtype.char in "fd" for a in arrays):
        # the squares summed in float64 by einsum, without a float64 copy of every gradient
        # (4.6 M float32 gradients: 10 -> 2 ms)
        total = math.sqrt(sum(float(xp.einsum("i,i->", a.reshape(-1), a.reshape(-1),
                                                dtype=_np.float64)) for a in arrays))
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
    grads = [p.grad for p in _grads(parameters)]
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    if not grads:
        return total
    coef = float(max_norm) / (float(total) + 1e-6)
    if coef < 1:
        with no_grad():
            for g in grads:
                xp_of(g._data).multiply(g._data, coef, out=g._data, casting="unsafe")
                g._bump_version()
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
    coef = xp.minimum(one(float(max_norm)) / (tn + one(1e-6)), one(1.0))  # in the norm's dtype
    with no_grad():
        for g in grads:
            xp.multiply(g._data, coef, out=g._data, casting="unsafe")
            g._bump_version()
