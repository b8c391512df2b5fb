"""Muon (torch.optim.Muon): momentum SGD whose 2-d update is orthogonalized by a quintic
Newton-Schulz iteration, run in bfloat16 as PyTorch runs it.

NumPy has no bfloat16: the iteration keeps float32 arrays holding bfloat16 values, rounding
every intermediate result to bfloat16 (round to nearest even) where PyTorch's bfloat16 kernels
round theirs, with float32 accumulation inside matmul and norm as theirs.
"""
import math

import numpy as np

from .optimizer import Optimizer, closure_loss, check_lr
from ._kernels import real_scalar, bump_versions
from ..ops import _fma as K
from ..autograd.grad_mode import no_grad
from .._backend import xp_of
from .._tensor import _make

__all__ = ["Muon"]

DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5
EPS = 1e-7


def _bf16(x, xp):
    """Round a float32 array of module `xp` to the nearest bfloat16 value, ties to even."""
    x = x.astype(np.float32, copy=False)
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    out = rounded.astype(np.uint32).view(np.float32)
    return xp.where(xp.isnan(x), x, out)


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    xp = xp_of(grad)
    a, b, c = (np.float32(v) for v in ns_coefficients)
    x = _bf16(grad.astype(np.float32), xp)
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.T
    norm = _bf16(xp.sqrt(xp.sum(xp.square(x, dtype=np.float32), dtype=np.float32)), xp)
    x = _bf16(x / _bf16(xp.maximum(norm, np.float32(eps)), xp), xp)
    for _ in range(ns_steps):
        gram = _bf16(x @ x.T, xp)
        gram_update = _bf16(b * gram + c * (gram @ gram), xp)
        x = _bf16(a * x + gram_update @ x, xp)
    if tall:
        x = x.T
    return x


def _adjust_lr(lr, adjust_lr_fn, param_shape):
    A, B = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, A / B))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(A, B))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """Muon(params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
    ns_coefficients=(3.4445, -4.775, 2.0315), eps=1e-7, ns_steps=5, adjust_lr_fn=None), for
    2-d parameters only."""

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS,
                 ns_steps=DEFAULT_NS_STEPS, adjust_lr_fn=None):
        check_lr(lr, "Learning rate should be >= 0 but is: {}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                        adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    @no_grad()
    def step(self, closure=None):
        """Perform one update; `closure` re-evaluates the model and returns the loss."""
        loss = closure_loss(closure)
        for group in self.param_groups:
            lr, wd, momentum = real_scalar(group["lr"]), group["weight_decay"], group["momentum"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                if p.dtype.is_complex:
                    raise RuntimeError("Muon does not support complex parameters")
                xp = xp_of(p._data)
                state = self.state[p]
                grad = p._grad._data
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = _make(xp.zeros_like(grad))
                if grad.ndim != 2:
                    raise ValueError("Param gradient must be a 2D matrix")
                buf = state["momentum_buffer"]._data
                K.lerp_(buf, grad, 1 - momentum)
                update = K.lerp(grad, buf, momentum) if group["nesterov"] else buf
                update = _zeropower_via_newtonschulz(update, group["ns_coefficients"],
                                                     group["ns_steps"], group["eps"])
                adjusted_lr = _adjust_lr(lr, group["adjust_lr_fn"], p.shape)
                param = p._data
                param *= 1 - lr * wd
                K.add_(param, update.astype(param.dtype, copy=False), alpha=-adjusted_lr)
                bump_versions(False, p, state["momentum_buffer"])
        return loss
