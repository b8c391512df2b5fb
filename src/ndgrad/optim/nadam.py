"""NAdam (torch.optim.NAdam): Adam with Nesterov momentum, momentum_decay and optional decoupled
weight decay."""
from .optimizer import (Optimizer, _zeros_like, _step_tensor, _closure_loss, _bump_versions,
                        _grad_array, _advance_step, _check_capturable, _to_scalar, _check_adam_args)
from . import _kernels as K
from .._backend import xp_of

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None, maximize=False,
    capturable=False, differentiable=False)."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check_adam_args(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
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
            decay, decoupled = group["momentum_decay"], group["decoupled_weight_decay"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["mu_product"] = _step_tensor(1.0)
                    state["exp_avg"] = _zeros_like(p)
                    state["exp_avg_sq"] = _zeros_like(p)
                xp = xp_of(p._data)
                if group["capturable"]:
                    _check_capturable(p, "params, mu_products and state_steps")
                step = _advance_step(state)
                bias_correction2 = 1 - beta2 ** step
                if decoupled and wd != 0:
                    p._data *= 1 - lr * wd
                grad = K.as_real(_grad_array(p, group["maximize"], 0 if decoupled else wd))
                mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * decay)))
                mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * decay)))
                mu_t = state["mu_product"]._data       # a 0-d tensor: rounded to its dtype
                mu_t *= mu
                mu_product = float(mu_t)
                m, v = K.as_real(state["exp_avg"]._data), K.as_real(state["exp_avg_sq"]._data)
                K.lerp_(m, grad, 1 - beta1)
                v *= beta2
                K.addcmul_(v, grad, grad, value=1 - beta2)
                denom = xp.sqrt(v / bias_correction2)
                mu_product_next = mu_product * mu_next
                denom += eps
                param = K.as_real(p._data)
                K.addcdiv_(param, grad, denom, value=(-lr * (1.0 - mu) / (1.0 - mu_product)))
                K.addcdiv_(param, m, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))
                _bump_versions(p, state)
        return loss
