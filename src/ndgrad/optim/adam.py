"""Adam and AdamW (torch.optim.Adam / AdamW), with amsgrad, weight decay and maximize."""
from .optimizer import (Optimizer, _zeros_like, _step_tensor, _closure_loss, _bump_versions,
                        _grad_array, _advance_step, _check_capturable, _to_scalar, _check_adam_args,
                        _check_fused)
from . import _kernels as K
from .._backend import xp_of
from .._tensor import Tensor

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
    maximize=False, decoupled_weight_decay=False)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        _check_adam_args(lr, eps, betas, weight_decay)
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        for i in (0, 1):
            if isinstance(betas[i], Tensor):
                if not capturable and foreach:
                    raise ValueError(f"betas[{i}] as a Tensor is not supported for "
                                     "capturable=False and foreach=True")
                if betas[i].numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = tuple(b.reshape(()) if isinstance(b, Tensor) and b.dim() != 0 else b
                      for b in betas)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        _check_fused(self, fused, foreach, differentiable)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for key, value in (("amsgrad", False), ("maximize", False), ("foreach", None),
                               ("capturable", False), ("differentiable", False),
                               ("decoupled_weight_decay", False), ("fused", None)):
                group.setdefault(key, value)

    def step(self, closure=None):
        """Perform one update; `closure` re-evaluates the model and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = (b.item() if isinstance(b, Tensor) else b for b in group["betas"])
            lr, eps, wd = _to_scalar(group["lr"]), group["eps"], group["weight_decay"]
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
                if group["capturable"]:
                    _check_capturable(p)
                step = _advance_step(state)
                if decoupled and wd != 0:
                    p._data *= 1 - lr * wd
                grad = K.as_real(_grad_array(p, maximize, 0 if decoupled else wd))
                param = K.as_real(p._data)
                m, v = K.as_real(state["exp_avg"]._data), K.as_real(state["exp_avg_sq"]._data)
                K.lerp_(m, grad, 1 - beta1)
                v *= beta2
                K.addcmul_(v, grad, grad, value=1 - beta2)
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                step_size = lr / bias_correction1
                bias_correction2_sqrt = bias_correction2 ** 0.5
                if amsgrad:
                    vmax = K.as_real(state["max_exp_avg_sq"]._data)
                    xp.maximum(vmax, v, out=vmax)
                    denom = xp.sqrt(vmax) / bias_correction2_sqrt
                else:
                    denom = xp.sqrt(v) / bias_correction2_sqrt
                denom += eps
                K.addcdiv_(param, m, denom, value=-step_size)
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
    return K.lerp_(self, end, weight)
