"""SparseAdam (torch.optim.SparseAdam): Adam for sparse gradients (Embedding(sparse=True)),
updating only the rows a gradient touches, in PyTorch's operation order; dense gradients get
PyTorch's error."""
import math

from .._tensor import _make
from .optimizer import Optimizer, closure_loss
from ._kernels import real_scalar, sqrt
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """SparseAdam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = dict(lr=lr, betas=betas, eps=eps, maximize=maximize)
        super().__init__(params, defaults)
        sparse_params = [[i, j] for i, group in enumerate(self.param_groups)
                         for j, p in enumerate(group["params"]) if p.is_sparse]
        complex_params = [[i, j] for i, group in enumerate(self.param_groups)
                          for j, p in enumerate(group["params"]) if p.is_complex()]
        if sparse_params:
            raise ValueError(f"Sparse params at indices {sparse_params}: SparseAdam requires dense "
                             "parameter tensors")
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not "
                             "support complex parameters")

    @no_grad()
    def step(self, closure=None):
        """Perform one update; `closure` re-evaluates the model and returns the loss."""
        loss = closure_loss(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is not None and not p._grad.is_sparse:
                    raise RuntimeError("SparseAdam does not support dense gradients, please "
                                       "consider Adam instead")
        for group in self.param_groups:
            lr, eps, maximize = real_scalar(group["lr"]), group["eps"], group["maximize"]
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = _make(p._data * 0)
                    state["exp_avg_sq"] = _make(p._data * 0)
                state["step"] += 1
                g = p._grad.coalesce()          # the update is non-linear: unique indices
                v = g._vals._data
                if v.size == 0:
                    continue
                v = -v if maximize else v
                key = tuple(g._idx)
                m, s = state["exp_avg"]._data, state["exp_avg_sq"]._data
                old_m, old_s = m[key], s[key]
                upd_m = (v - old_m) * (1 - beta1)          # old <- old + (1 - b) * (new - old)
                m[key] += upd_m
                upd_s = (v * v - old_s) * (1 - beta2)
                s[key] += upd_s
                numer = upd_m + old_m
                denom = sqrt(upd_s + old_s)
                denom += eps
                step = state["step"]
                step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
                p._data[key] += -step_size * (numer / denom)
                p._bump_version()
                state["exp_avg"]._vc[0] += 1
                state["exp_avg_sq"]._vc[0] += 1
        return loss
