"""RAdam (torch.optim.RAdam): Adam with the variance rectification term, optional decoupled
weight decay."""
from .optimizer import (Optimizer, _zeros_like, _step_tensor, _closure_loss, _bump_versions,
                        _grad_array, _advance_step, _check_capturable, _to_scalar, _check_adam_args)
from . import _kernels as K
from .._backend import xp_of

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
    differentiable=False)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check_adam_args(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("decoupled_weight_decay", False)

    def step(self, closure=None):
        """Perform one update; `closure` re-evaluates the model and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, wd = _to_scalar(group["lr"]), group["eps"], group["weight_decay"]
            decoupled = group["decoupled_weight_decay"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["exp_avg"] = _zeros_like(p)
                    state["exp_avg_sq"] = _zeros_like(p)
                xp = xp_of(p._data)
                if group["capturable"]:
                    _check_capturable(p)
                step = _advance_step(state)
                if decoupled and wd != 0:
                    p._data *= 1 - lr * wd
                grad = K.as_real(_grad_array(p, group["maximize"], 0 if decoupled else wd))
                m, v = K.as_real(state["exp_avg"]._data), K.as_real(state["exp_avg_sq"]._data)
                K.lerp_(m, grad, 1 - beta1)
                v *= beta2
                K.addcmul_(v, grad, grad, value=1 - beta2)
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                update = m / bias_correction1
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
                update *= lr
                if rho_t > 5.0:
                    s = xp.sqrt(v)
                    s += eps
                    adaptive = 1 / s              # `float / Tensor` is reciprocal() * float
                    adaptive *= bias_correction2 ** 0.5
                    update *= adaptive
                    update *= ((rho_t - 4) * (rho_t - 2) * rho_inf
                               / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                param = K.as_real(p._data)
                param -= update
                _bump_versions(p, state)
        return loss
