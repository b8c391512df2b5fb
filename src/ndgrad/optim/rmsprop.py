"""RMSprop, Adagrad and Adadelta (torch.optim.RMSprop / Adagrad / Adadelta)."""
from .optimizer import (Optimizer, _zeros_like, _step_tensor, _closure_loss, _bump_versions,
                        _grad_array, _advance_step, _check_capturable, _to_scalar, _check_lr,
                        _check_fused)
from . import _kernels as K
from .._backend import xp_of

__all__ = ["RMSprop", "Adagrad", "Adadelta"]


class RMSprop(Optimizer):
    """RMSprop(params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
    centered=False, *, maximize=False)."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        _check_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Perform one update; `closure` re-evaluates the model and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, alpha, eps, wd = (_to_scalar(group["lr"]), group["alpha"], group["eps"],
                                  group["weight_decay"])
            momentum, centered, maximize = group["momentum"], group["centered"], group["maximize"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["square_avg"] = _zeros_like(p)
                    if momentum > 0:
                        state["momentum_buffer"] = _zeros_like(p)
                    if centered:
                        state["grad_avg"] = _zeros_like(p)
                xp = xp_of(p._data)
                if group["capturable"]:
                    _check_capturable(p)
                _advance_step(state)
                grad = K.as_real(_grad_array(p, maximize, wd))
                param = K.as_real(p._data)
                sq = K.as_real(state["square_avg"]._data)
                sq *= alpha
                K.addcmul_(sq, grad, grad, value=1 - alpha)
                if centered:
                    ga = K.as_real(state["grad_avg"]._data)
                    K.lerp_(ga, grad, 1 - alpha)
                    avg = xp.sqrt(K.addcmul(sq, ga, ga, value=-1))
                else:
                    avg = xp.sqrt(sq)
                avg += eps
                if momentum > 0:
                    buf = K.as_real(state["momentum_buffer"]._data)
                    buf *= momentum
                    K.addcdiv_(buf, grad, avg)
                    K.add_(param, buf, alpha=-lr)
                else:
                    K.addcdiv_(param, grad, avg, value=-lr)
                _bump_versions(p, state)
        return loss


class Adagrad(Optimizer):
    """Adagrad(params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
    eps=1e-10, *, maximize=False)."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        _check_fused(self, fused, foreach, differentiable)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _step_tensor()
                state["sum"] = _zeros_like(p, group["initial_accumulator_value"])

    def step(self, closure=None):
        """Perform one update; `closure` re-evaluates the model and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, lr_decay, eps = _to_scalar(group["lr"]), group["lr_decay"], group["eps"]
            wd, maximize = group["weight_decay"], group["maximize"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                xp = xp_of(p._data)
                if p._grad.is_sparse:
                    if wd != 0:
                        raise RuntimeError("weight_decay option is not compatible with sparse "
                                           "gradients")
                    step = _advance_step(state)
                    clr = lr / (1 + (step - 1) * lr_decay)
                    g = p._grad.coalesce()      # the update is non-linear: unique indices
                    key, v = tuple(g._idx), g._vals._data
                    v = -v if maximize else v
                    s = state["sum"]._data
                    s[key] += v * v
                    p._data[key] -= clr * (v / (xp.sqrt(s[key]) + eps))
                    _bump_versions(p, state)
                    continue
                step = _advance_step(state)
                grad = K.as_real(_grad_array(p, maximize, wd))
                clr = lr / (1 + (step - 1) * lr_decay)
                s = K.as_real(state["sum"]._data)
                K.addcmul_(s, grad, grad, value=1)
                std = xp.sqrt(s)
                std += eps
                K.addcdiv_(K.as_real(p._data), grad, std, value=-clr)
                _bump_versions(p, state)
        return loss


class Adadelta(Optimizer):
    """Adadelta(params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, *, maximize=False)."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Perform one update; `closure` re-evaluates the model and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, rho, eps = _to_scalar(group["lr"]), group["rho"], group["eps"]
            wd, maximize = group["weight_decay"], group["maximize"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["square_avg"] = _zeros_like(p)
                    state["acc_delta"] = _zeros_like(p)
                xp = xp_of(p._data)
                if group["capturable"]:
                    _check_capturable(p, xla=False)
                _advance_step(state)
                grad = K.as_real(_grad_array(p, maximize, wd))
                sq, acc = K.as_real(state["square_avg"]._data), K.as_real(state["acc_delta"]._data)
                sq *= rho
                K.addcmul_(sq, grad, grad, value=1 - rho)
                std = xp.sqrt(sq + eps)
                delta = xp.sqrt(acc + eps)
                delta /= std
                delta *= grad
                acc *= rho
                K.addcmul_(acc, delta, delta, value=1 - rho)
                K.add_(K.as_real(p._data), delta, alpha=-lr)
                _bump_versions(p, state)
        return loss
