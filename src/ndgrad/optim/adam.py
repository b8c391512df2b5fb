"""Adam and AdamW (torch.optim.Adam / AdamW), with amsgrad, weight decay and maximize."""
from .optimizer import (Optimizer, _zeros_like, _step_tensor, _closure_loss, _bump_versions,
                        _grad_array, _advance_step)
from .._backend import xp_of

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
    maximize=False, decoupled_weight_decay=False)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Perform one update; `closure` re-evaluates the model and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
            amsgrad, maximize = group["amsgrad"], group["maximize"]
            decoupled = group.get("decoupled_weight_decay", False)
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["exp_avg"] = _zeros_like(p)
                    state["exp_avg_sq"] = _zeros_like(p)
                    if amsgrad:
                        state["max_exp_avg_sq"] = _zeros_like(p)
                xp = xp_of(p._data)
                param = p._data
                grad = _grad_array(p, maximize, 0 if decoupled else wd)
                step = _advance_step(state)
                if decoupled and wd != 0:
                    param *= 1 - lr * wd
                m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
                _lerp_(m, grad, 1 - beta1)
                v *= beta2
                v += ((1 - beta2) * grad) * grad          # addcmul_: (value * t1) * t2
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                step_size = lr / bias_correction1
                bias_correction2_sqrt = bias_correction2 ** 0.5
                if amsgrad:
                    vmax = state["max_exp_avg_sq"]._data
                    xp.maximum(vmax, v, out=vmax)
                    denom = xp.sqrt(vmax) / bias_correction2_sqrt
                else:
                    denom = xp.sqrt(v) / bias_correction2_sqrt
                denom += eps
                param += (-step_size * m) / denom          # addcdiv_: (value * t1) / t2
                _bump_versions(p, state)
        return loss


class AdamW(Adam):
    """AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False):
    Adam with decoupled weight decay."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)


def _lerp_(self, end, weight):
    """In-place torch.lerp with PyTorch's two-sided formula (exact at both ends)."""
    if abs(weight) < 0.5:
        self += weight * (end - self)
    else:
        self[...] = end - (end - self) * (1 - weight)
