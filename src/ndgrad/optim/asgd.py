"""ASGD (torch.optim.ASGD): averaged stochastic gradient descent."""
from .optimizer import (Optimizer, _zeros_like, _step_tensor, _closure_loss, _bump_versions,
                        _grad_array, _advance_step, _check_capturable, _to_scalar, _check_lr)
from . import _kernels as K

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """ASGD(params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
    maximize=False, differentiable=False, capturable=False). The averaged parameters are in
    `optimizer.state[p]["ax"]`."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Perform one update; `closure` re-evaluates the model and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, lambd, alpha, t0 = (_to_scalar(group["lr"]), group["lambd"], group["alpha"],
                                    group["t0"])
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["eta"] = _step_tensor(lr)
                    state["mu"] = _step_tensor(1.0)
                    state["ax"] = _zeros_like(p)
                grad = K.as_real(_grad_array(p, group["maximize"], group["weight_decay"]))
                param, ax = K.as_real(p._data), K.as_real(state["ax"]._data)
                if group["capturable"]:
                    _check_capturable(p, "params, mus, etas, and state_steps")
                step = _advance_step(state)
                eta, mu = state["eta"]._data, state["mu"]._data   # 0-d, the scalar dtype
                eta_value = float(eta)
                param *= 1 - lambd * eta_value
                K.add_(param, grad, alpha=-eta_value)
                if float(mu) != 1:
                    d = param - ax
                    d *= mu.item()
                    ax += d
                else:
                    ax[...] = param
                eta[()] = lr / ((1 + lambd * lr * step) ** alpha)
                mu[()] = 1 / max(1, step - t0)
                _bump_versions(p, state)
        return loss
