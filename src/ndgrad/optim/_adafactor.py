"""Adafactor (torch.optim.Adafactor): factored second moments (a row and a column factor per
matrix), relative step sizes and update clipping."""
import math

from .optimizer import (Optimizer, _zeros_like, _step_tensor, _closure_loss, _bump_versions,
                        _advance_step, _to_scalar, _check_lr)
from . import _kernels as K
from .._backend import xp_of
from .._tensor import _make

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """Adafactor(params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0,
    *, foreach=None, maximize=False)."""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        _check_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Perform one update; `closure` re-evaluates the model and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, beta2_decay, d = _to_scalar(group["lr"]), group["beta2_decay"], group["d"]
            eps1, eps2 = group["eps"]
            wd = group["weight_decay"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                if p.dtype.is_complex:
                    raise RuntimeError("Adafactor does not support complex parameters")
                xp = xp_of(p._data)
                state = self.state[p]
                g = p._grad._data
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    if g.ndim > 1:
                        row_shape, col_shape = list(g.shape), list(g.shape)
                        row_shape[-1] = 1
                        col_shape[-2] = 1
                        state["row_var"] = _make(xp.zeros(row_shape, dtype=g.dtype))
                        state["col_var"] = _make(xp.zeros(col_shape, dtype=g.dtype))
                    else:
                        state["variance"] = _zeros_like(p._grad)
                grad = -g if group["maximize"] else g
                e1 = float(xp.finfo(p._data.dtype).eps) if eps1 is None else eps1
                step = _advance_step(state)
                one_minus_beta2_t = step ** beta2_decay
                rho_t = min(lr, 1 / (step ** 0.5))
                param = p._data
                pnorm = float(xp.sqrt(xp.sum(xp.square(param, dtype=xp.float64))))
                alpha = max(eps2, pnorm / (param.size ** 0.5)) * rho_t
                if wd != 0:
                    param *= 1 - lr * wd
                if grad.ndim > 1:
                    row_var, col_var = state["row_var"]._data, state["col_var"]._data
                    row_mean = xp.square(xp.sqrt(xp.sum(xp.square(grad), axis=-1,
                                                        keepdims=True)))
                    row_mean /= grad.shape[-1]
                    K.lerp_(row_var, row_mean, one_minus_beta2_t)
                    col_mean = xp.square(xp.sqrt(xp.sum(xp.square(grad), axis=-2,
                                                        keepdims=True)))
                    col_mean /= grad.shape[-2]
                    K.lerp_(col_var, col_mean, one_minus_beta2_t)
                    var_estimate = xp.matmul(row_var, col_var)
                    row_avg = xp.mean(row_var, axis=-2, keepdims=True)
                    var_estimate /= xp.maximum(row_avg, row_avg.dtype.type(e1))
                else:
                    variance = state["variance"]._data
                    K.lerp_(variance, grad * grad, one_minus_beta2_t)
                    var_estimate = variance.copy()
                xp.maximum(var_estimate, var_estimate.dtype.type(e1 * e1), out=var_estimate)
                update = 1 / xp.sqrt(var_estimate)
                update *= grad
                unorm = float(xp.sqrt(xp.sum(xp.square(update, dtype=xp.float64))))
                denom = max(1.0, unorm / ((update.size ** 0.5) * d))
                K.add_(param, update, alpha=-alpha / denom)
                _bump_versions(p, state)
        return loss
