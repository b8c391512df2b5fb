"""RMSprop, Adagrad and Adadelta (torch.optim.RMSprop / Adagrad / Adadelta)."""
from .optimizer import (Optimizer, _zeros_like, _step_tensor, _closure_loss, _bump_versions,
                        _grad_array, _advance_step)
from .adam import _lerp_
from .._backend import xp_of

__all__ = ["RMSprop", "Adagrad", "Adadelta"]


class RMSprop(Optimizer):
    """RMSprop(params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
    centered=False, *, maximize=False)."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
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
            lr, alpha, eps, wd = group["lr"], group["alpha"], group["eps"], group["weight_decay"]
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
                grad = _grad_array(p, maximize, wd)
                _advance_step(state)
                sq = state["square_avg"]._data
                sq *= alpha
                sq += ((1 - alpha) * grad) * grad      # addcmul_ order
                if centered:
                    ga = state["grad_avg"]._data
                    _lerp_(ga, grad, 1 - alpha)
                    avg = xp.sqrt(sq - ga * ga)
                else:
                    avg = xp.sqrt(sq)
                avg += eps
                if momentum > 0:
                    buf = state["momentum_buffer"]._data
                    buf *= momentum
                    buf += grad / avg
                    p._data -= lr * buf
                else:
                    p._data += (-lr * grad) / avg     # addcdiv_ order
                _bump_versions(p, state)
        return loss


class Adagrad(Optimizer):
    """Adagrad(params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
    eps=1e-10, *, maximize=False)."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
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
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _step_tensor()
                state["sum"] = _zeros_like(p, group["initial_accumulator_value"])

    def step(self, closure=None):
        """Perform one update; `closure` re-evaluates the model and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
            wd, maximize = group["weight_decay"], group["maximize"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                xp = xp_of(p._data)
                step = _advance_step(state)
                grad = _grad_array(p, maximize, wd)
                clr = lr / (1 + (step - 1) * lr_decay)
                s = state["sum"]._data
                s += grad * grad
                std = xp.sqrt(s)
                std += eps
                p._data += (-clr * grad) / std     # addcdiv_ order
                _bump_versions(p, state)
        return loss


class Adadelta(Optimizer):
    """Adadelta(params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, *, maximize=False)."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
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
            lr, rho, eps = group["lr"], group["rho"], group["eps"]
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
                _advance_step(state)
                grad = _grad_array(p, maximize, wd)
                sq, acc = state["square_avg"]._data, state["acc_delta"]._data
                sq *= rho
                sq += ((1 - rho) * grad) * grad
                std = xp.sqrt(sq + eps)
                delta = xp.sqrt(acc + eps)
                delta /= std
                delta *= grad
                acc *= rho
                acc += ((1 - rho) * delta) * delta
                p._data -= lr * delta
                _bump_versions(p, state)
        return loss
