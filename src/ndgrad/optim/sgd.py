"""SGD with momentum, dampening, Nesterov, weight decay and maximize (torch.optim.SGD, and the
functional torch.optim.sgd.sgd)."""
from .optimizer import (Optimizer, _use_grad_for_differentiable, _device_dtype_check_for_fused,
                        _to_scalar, closure_loss, check_fused, pick_kernel)
from ._kernels import operands, bump_versions, state_tensor
from .._tensor import Tensor
from ..autograd import grad_mode

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    """SGD(params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
    maximize=False, foreach=None, differentiable=False, fused=None)."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False, foreach=None, differentiable=False, fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
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
        if fused:
            self._need_device_dtype_check_for_fused = True
        check_fused(self, fused, foreach, differentiable)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for key, value in (("nesterov", False), ("maximize", False), ("foreach", None),
                               ("differentiable", False), ("fused", False)):
                group.setdefault(key, value)

    def _init_group(self, group, params, grads, momentum_buffer_list):
        has_sparse_grad = False
        for p in group["params"]:
            if p.grad is None:
                continue
            if group["fused"] and getattr(self, "_need_device_dtype_check_for_fused", True):
                _device_dtype_check_for_fused(p)
                self._need_device_dtype_check_for_fused = False
            params.append(p)
            grads.append(p.grad)
            has_sparse_grad |= p.grad.is_sparse
            if group["momentum"] != 0:
                momentum_buffer_list.append(self.state[p].get("momentum_buffer"))
        return has_sparse_grad

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform one update; `closure` re-evaluates the model and returns the loss."""
        loss = closure_loss(closure)
        for group in self.param_groups:
            params, grads, momentum_buffer_list = [], [], []
            has_sparse_grad = self._init_group(group, params, grads, momentum_buffer_list)
            sgd(params, grads, momentum_buffer_list, weight_decay=group["weight_decay"],
                momentum=group["momentum"], lr=group["lr"], dampening=group["dampening"],
                nesterov=group["nesterov"], maximize=group["maximize"],
                has_sparse_grad=has_sparse_grad, foreach=group["foreach"],
                fused=group["fused"], grad_scale=getattr(self, "grad_scale", None),
                found_inf=getattr(self, "found_inf", None))
            if group["momentum"] != 0:
                for p, buf in zip(params, momentum_buffer_list):
                    self.state[p]["momentum_buffer"] = buf
        return loss


def sgd(params, d_p_list, momentum_buffer_list, has_sparse_grad=False, foreach=None, fused=None,
        grad_scale=None, found_inf=None, *, weight_decay, momentum, lr, dampening, nesterov,
        maximize):
    """Functional SGD over lists of parameters, gradients and momentum buffers (None where a
    buffer does not exist yet; the new buffers are put in the list)."""
    func = pick_kernel(params, False, foreach, fused, _single_tensor_sgd, _multi_tensor_sgd)
    func(params, d_p_list, momentum_buffer_list, grad_scale, found_inf,
         weight_decay=weight_decay, momentum=momentum, lr=lr, dampening=dampening,
         nesterov=nesterov, has_sparse_grad=has_sparse_grad, maximize=maximize)


def _single_tensor_sgd(params, grads, momentum_buffer_list, grad_scale, found_inf, *,
                       weight_decay, momentum, lr, dampening, nesterov, maximize,
                       has_sparse_grad):
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Expected grad_scale and found_inf to be None")
    lr = _to_scalar(lr)
    tensors = grad_mode._state.enabled   # differentiable: Tensor ops, recorded
    for i, p in enumerate(params):
        if grads[i].is_sparse and not tensors:
            _sparse_step(p, grads[i], momentum_buffer_list, i, weight_decay, momentum, lr,
                         dampening, nesterov, maximize)
            continue
        buf_t = momentum_buffer_list[i] if momentum != 0 else None
        param, grad, buf = operands(tensors, p, grads[i], buf_t)
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            if isinstance(weight_decay, Tensor) and weight_decay.requires_grad:
                grad = grad.addcmul_(param.clone(), weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        if momentum != 0:
            if buf is None:
                buf = grad.detach().clone()
                momentum_buffer_list[i] = state_tensor(buf)
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            grad = grad.add(buf, alpha=momentum) if nesterov else buf
        if isinstance(lr, Tensor) and lr.requires_grad:
            param.addcmul_(grad, lr, value=-1)
        else:
            param.add_(grad, alpha=-lr)
        bump_versions(tensors, p, buf_t)


def _sparse_step(p, grad, momentum_buffer_list, i, weight_decay, momentum, lr, dampening,
                 nesterov, maximize):
    """A sparse gradient without momentum or weight decay updates the touched rows only; with
    them, the dense equivalent (as PyTorch's sparse arithmetic gives)."""
    from ..sparse._coo import add_into
    lr = lr.item() if isinstance(lr, Tensor) else lr
    if momentum == 0 and weight_decay == 0:
        add_into(p._data, grad, lr if maximize else -lr)
        p._bump_version()
        return
    dense = add_into(p._data * 0, grad)
    g = -dense if maximize else dense
    if weight_decay != 0:
        g = g + weight_decay * p._data
    if momentum != 0:
        buf = momentum_buffer_list[i]
        if buf is None:
            buf = momentum_buffer_list[i] = _wrap(g.copy())
        else:
            buf._data *= momentum
            buf._data += (1 - dampening) * g
        g = g + momentum * buf._data if nesterov else buf._data
    p._data -= lr * g
    p._bump_version()


def _wrap(arr):
    from .._tensor import _make
    return _make(arr)


def _multi_tensor_sgd(params, grads, momentum_buffer_list, grad_scale, found_inf, *,
                      weight_decay, momentum, lr, dampening, nesterov, maximize,
                      has_sparse_grad):
    from .. import _foreach_neg, _foreach_add_, _foreach_add, _foreach_mul_
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Expected grad_scale and found_inf to be None")
    if len(params) == 0:
        return
    lr = _to_scalar(lr)
    grouped = Optimizer._group_tensors_by_device_and_dtype(
        [params, grads, momentum_buffer_list], with_indices=True)
    for (device_params, device_grads, device_bufs), indices in grouped.values():
        device_has_sparse_grad = has_sparse_grad and any(g.is_sparse for g in device_grads)
        if maximize:
            device_grads = _foreach_neg(device_grads)
        if weight_decay != 0:
            if maximize:
                _foreach_add_(device_grads, device_params, alpha=weight_decay)
            else:
                device_grads = _foreach_add(device_grads, device_params, alpha=weight_decay)
        if momentum != 0:
            if all(b is not None for b in device_bufs):
                bufs = list(device_bufs)
                _foreach_mul_(bufs, momentum)
                _foreach_add_(bufs, device_grads, alpha=1 - dampening)
            else:
                bufs = []
                for j, b in enumerate(device_bufs):
                    if b is None:
                        b = device_bufs[j] = momentum_buffer_list[indices[j]] = \
                            device_grads[j].detach().clone()
                    else:
                        b.mul_(momentum).add_(device_grads[j], alpha=1 - dampening)
                    bufs.append(b)
            if nesterov:
                _foreach_add_(device_grads, bufs, alpha=momentum)
            else:
                device_grads = bufs
        if not device_has_sparse_grad:
            _foreach_add_(device_params, device_grads, alpha=-lr)
        else:
            for j in range(len(device_params)):
                device_params[j].add_(device_grads[j], alpha=-lr)
