"""Adamax (torch.optim.Adamax): Adam with the infinity norm."""
from .optimizer import (Optimizer, _zeros_like, _step_tensor, _closure_loss, _bump_versions,
                        _grad_array, _advance_step, _check_capturable, _to_scalar, _check_adam_args)
from . import _kernels as K
from .._backend import xp_of

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
    maximize=False, differentiable=False, capturable=False)."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check_adam_args(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Perform one update; `closure` re-evaluates the model and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, wd = _to_scalar(group["lr"]), group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["exp_avg"] = _zeros_like(p)
                    state["exp_inf"] = _zeros_like(p)
                xp = xp_of(p._data)
                if group["capturable"]:
                    _check_capturable(p)
                step = _advance_step(state)
                grad = K.as_real(_grad_array(p, group["maximize"], wd))
                m, u = K.as_real(state["exp_avg"]._data), K.as_real(state["exp_inf"]._data)
                K.lerp_(m, grad, 1 - beta1)
                u *= beta2
                g = xp.abs(grad)
                g += eps
                xp.maximum(u, g, out=u)
                clr = lr / (1 - beta1 ** step)
                K.addcdiv_(K.as_real(p._data), m, u, value=-clr)
                _bump_versions(p, state)
        return loss
