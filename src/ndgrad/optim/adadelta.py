"""Adadelta (torch.optim.Adadelta, and the functional torch.optim.adadelta.adadelta)."""
from .optimizer import (Optimizer, _use_grad_for_differentiable, _to_scalar, _check_capturable,
                        _step_tensor, _zeros_like, closure_loss, check_lr, check_nonnegative,
                        pick_kernel, set_defaults, tensor_steps, foreach_steps_, foreach_grads,
                        grouped)
from ._kernels import F, operands, bump_versions, real_scalar
from .._tensor import Tensor
from ..autograd import grad_mode

__all__ = ["Adadelta", "adadelta"]


class Adadelta(Optimizer):
    """Adadelta(params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
    capturable=False, maximize=False, differentiable=False)."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_nonnegative(epsilon=eps, weight_decay=weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        set_defaults(self, state, foreach=None, maximize=False, differentiable=False,
                     capturable=False)
        for group in self.param_groups:
            tensor_steps(self, group)

    def _init_group(self, group, params_with_grad, grads, square_avgs, acc_deltas,
                    state_steps):
        has_complex = False
        for p in group["params"]:
            if p.grad is None:
                continue
            has_complex |= p.is_complex()
            params_with_grad.append(p)
            if p.grad.is_sparse:
                raise RuntimeError("Adadelta does not support sparse gradients")
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _step_tensor(0.0, group["capturable"], p.device)
                state["square_avg"] = _zeros_like(p)
                state["acc_delta"] = _zeros_like(p)
            square_avgs.append(state["square_avg"])
            acc_deltas.append(state["acc_delta"])
            state_steps.append(state["step"])
        return has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform one update; `closure` re-evaluates the model and returns the loss."""
        loss = closure_loss(closure)
        for group in self.param_groups:
            params, grads, square_avgs, acc_deltas, state_steps = [], [], [], [], []
            has_complex = self._init_group(group, params, grads, square_avgs, acc_deltas,
                                           state_steps)
            adadelta(params, grads, square_avgs, acc_deltas, state_steps, lr=group["lr"],
                     rho=group["rho"], eps=group["eps"], weight_decay=group["weight_decay"],
                     foreach=group["foreach"], maximize=group["maximize"],
                     differentiable=group["differentiable"], capturable=group["capturable"],
                     has_complex=has_complex)
        return loss


def adadelta(params, grads, square_avgs, acc_deltas, state_steps, capturable=False,
             foreach=None, differentiable=False, has_complex=False, *, lr, rho, eps,
             weight_decay, maximize):
    """Functional Adadelta over lists of parameters, gradients and state tensors."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    func = pick_kernel(params, differentiable, foreach, None, _single_tensor_adadelta,
                       _multi_tensor_adadelta)
    func(params, grads, square_avgs, acc_deltas, state_steps, lr=lr, rho=rho, eps=eps,
         weight_decay=weight_decay, maximize=maximize, differentiable=differentiable,
         capturable=capturable, has_complex=has_complex)


def _single_tensor_adadelta(params, grads, square_avgs, acc_deltas, state_steps, *, lr, rho,
                            eps, weight_decay, maximize, differentiable, capturable,
                            has_complex):
    if capturable:
        _check_capturable(params, state_steps, supports_xla=False)
    tensors = grad_mode._state.enabled
    lr = _to_scalar(lr)
    if not tensors:
        lr = real_scalar(lr)
    for p, g, sq_t, acc_t, step_t in zip(params, grads, square_avgs, acc_deltas, state_steps):
        param, grad, square_avg, acc_delta, step = operands(tensors, p, g, sq_t, acc_t, step_t)
        step += 1
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        if F.is_complex(param):
            square_avg, acc_delta, grad = (F.view_as_real(x) for x in
                                           (square_avg, acc_delta, grad))
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_()
        if differentiable:
            delta = delta.clone()
        delta.div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        if F.is_complex(param):
            delta = F.view_as_complex(delta)
        param.add_(delta, alpha=-lr)
        bump_versions(tensors, p, sq_t, acc_t, step_t)


def _multi_tensor_adadelta(params, grads, square_avgs, acc_deltas, state_steps, *, lr, rho,
                           eps, weight_decay, maximize, differentiable, capturable,
                           has_complex):
    from .. import (_foreach_mul_, _foreach_addcmul_, _foreach_add, _foreach_sqrt_,
                    _foreach_div_, _foreach_add_)
    if differentiable:
        raise AssertionError("_foreach ops don't support autograd")
    if capturable:
        _check_capturable(params, state_steps, supports_xla=False)
    if len(params) == 0:
        return
    lr = _to_scalar(lr)
    for g_params, g_grads, g_square_avgs, g_acc_deltas, g_steps in grouped(
            [params, grads, square_avgs, acc_deltas, state_steps], has_complex, [1, 2, 3]):
        foreach_steps_(g_steps)
        g_grads = foreach_grads(g_grads, g_params, maximize, weight_decay)
        _foreach_mul_(g_square_avgs, rho)
        _foreach_addcmul_(g_square_avgs, g_grads, g_grads, value=1 - rho)
        std = _foreach_add(g_square_avgs, eps)
        _foreach_sqrt_(std)
        deltas = _foreach_add(g_acc_deltas, eps)
        _foreach_sqrt_(deltas)
        _foreach_div_(deltas, std)
        _foreach_mul_(deltas, g_grads)
        _foreach_mul_(g_acc_deltas, rho)
        _foreach_addcmul_(g_acc_deltas, deltas, deltas, value=1 - rho)
        if capturable and isinstance(lr, Tensor):
            from .. import _foreach_mul
            _foreach_add_(g_params, _foreach_mul(deltas, -lr))
        else:
            _foreach_add_(g_params, deltas, alpha=-lr)
