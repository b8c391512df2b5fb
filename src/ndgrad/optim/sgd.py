"""SGD with momentum, dampening, Nesterov, weight decay and maximize (torch.optim.SGD)."""
from .optimizer import (Optimizer, required, _closure_loss, _grad_array, _to_scalar, _check_lr,
                        _check_fused)
from . import _kernels as K
from .._tensor import _make

__all__ = ["SGD"]


class SGD(Optimizer):
    """SGD(params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
    maximize=False)."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False, foreach=None, differentiable=False, fused=None):
        _check_lr(lr)
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach,
                        differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_fused(self, fused, foreach, differentiable)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def step(self, closure=None):
        """Perform one update; `closure` re-evaluates the model and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, momentum, dampening = _to_scalar(group["lr"]), group["momentum"], group["dampening"]
            wd, nesterov, maximize = group["weight_decay"], group["nesterov"], group["maximize"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                if p._grad.is_sparse and momentum == 0 and wd == 0:  # only the touched rows
                    from .._sparse import add_into
                    add_into(p._data, p._grad, lr if maximize else -lr)
                    p._bump_version()
                    continue
                d_p = K.as_real(_grad_array(p, maximize, wd))
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = _make(_grad_array(p, maximize, wd).copy())
                        state["momentum_buffer"] = buf
                    else:
                        b = K.as_real(buf._data)
                        b *= b.dtype.type(momentum) if b.dtype.kind == "f" else momentum
                        K.add_(b, d_p, alpha=1 - dampening)
                        buf._vc[0] += 1     # a private buffer: no site (see _bump_versions)
                    b = K.as_real(buf._data)
                    d_p = K.add(d_p, b, alpha=momentum) if nesterov else b
                K.add_(K.as_real(p._data), d_p, alpha=-lr)
                p._bump_version()
        return loss
