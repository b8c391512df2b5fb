"""Rprop (torch.optim.Rprop): resilient backpropagation, per-element step sizes."""
from .optimizer import (Optimizer, _zeros_like, _step_tensor, _closure_loss, _bump_versions,
                        _advance_step, _check_capturable, _to_scalar, _check_lr)
from . import _kernels as K
from .._backend import xp_of
from .._tensor import _make

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Rprop(params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False,
    foreach=None, maximize=False, differentiable=False)."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Perform one update; `closure` re-evaluates the model and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                xp = xp_of(p._data)
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["prev"] = _zeros_like(p)
                    lr = _to_scalar(group["lr"])
                    if p.dtype.is_complex:     # the real and imaginary parts step apart
                        lr = complex(lr, lr)
                    state["step_size"] = _make(xp.full_like(p._grad._data, lr))
                if group["capturable"]:
                    _check_capturable(p)
                _advance_step(state)
                grad = p._grad._data
                if group["maximize"]:
                    grad = -grad
                grad = K.as_real(grad)
                prev = K.as_real(state["prev"]._data)
                step_size = K.as_real(state["step_size"]._data)
                sign = xp.sign(grad * prev)
                pos, neg = sign > 0, sign < 0
                sign[pos] = etaplus
                sign[neg] = etaminus
                sign[sign == 0] = 1
                step_size *= sign
                xp.clip(step_size, step_size_min, step_size_max, out=step_size)
                grad = grad.copy()
                grad[sign == sign.dtype.type(etaminus)] = 0
                param = K.as_real(p._data)
                param -= xp.sign(grad) * step_size
                prev[...] = grad
                _bump_versions(p, state)
        return loss
