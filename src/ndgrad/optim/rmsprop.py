"""RMSprop (torch.optim.RMSprop, and the functional torch.optim.rmsprop.rmsprop), centered or not,
with momentum, weight decay and maximize."""
from .optimizer import (Optimizer, _use_grad_for_differentiable, _to_scalar, _check_capturable,
                        _step_tensor, _zeros_like, closure_loss, check_lr, check_nonnegative,
                        pick_kernel, set_defaults, tensor_steps, foreach_steps_, foreach_grads,
                        grouped)
from ._kernels import F, operands, bump_versions, real_scalar
from .._tensor import Tensor
from ..autograd import grad_mode

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    """RMSprop(params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
    centered=False, capturable=False, foreach=None, maximize=False, differentiable=False)."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        check_lr(lr)
        check_nonnegative(epsilon=eps, momentum=momentum, weight_decay=weight_decay,
                          alpha=alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        set_defaults(self, state, momentum=0, centered=False, foreach=None, maximize=False,
                     differentiable=False, capturable=False)
        for group in self.param_groups:
            tensor_steps(self, group)

    def _init_group(self, group, params_with_grad, grads, square_avgs, momentum_buffer_list,
                    grad_avgs, state_steps):
        has_complex = False
        for p in group["params"]:
            if p.grad is None:
                continue
            has_complex |= p.is_complex()
            params_with_grad.append(p)
            if p.grad.is_sparse:
                raise RuntimeError("RMSprop does not support sparse gradients")
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _step_tensor(0.0, group["capturable"], p.device)
                state["square_avg"] = _zeros_like(p)
                if group["momentum"] > 0:
                    state["momentum_buffer"] = _zeros_like(p)
                if group["centered"]:
                    state["grad_avg"] = _zeros_like(p)
            square_avgs.append(state["square_avg"])
            state_steps.append(state["step"])
            if group["momentum"] > 0:
                momentum_buffer_list.append(state["momentum_buffer"])
            if group["centered"]:
                grad_avgs.append(state["grad_avg"])
        return has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform one update; `closure` re-evaluates the model and returns the loss."""
        loss = closure_loss(closure)
        for group in self.param_groups:
            params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps = \
                [], [], [], [], [], []
            has_complex = self._init_group(group, params, grads, square_avgs,
                                           momentum_buffer_list, grad_avgs, state_steps)
            rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps,
                    lr=group["lr"], alpha=group["alpha"], eps=group["eps"],
                    weight_decay=group["weight_decay"], momentum=group["momentum"],
                    centered=group["centered"], foreach=group["foreach"],
                    maximize=group["maximize"], differentiable=group["differentiable"],
                    capturable=group["capturable"], has_complex=has_complex)
        return loss


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps,
            foreach=None, maximize=False, differentiable=False, capturable=False,
            has_complex=False, *, lr, alpha, eps, weight_decay, momentum, centered):
    """Functional RMSprop over lists of parameters, gradients and state tensors."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    func = pick_kernel(params, differentiable, foreach, None, _single_tensor_rmsprop,
                       _multi_tensor_rmsprop)
    func(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps, lr=lr,
         alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum, centered=centered,
         maximize=maximize, capturable=capturable, differentiable=differentiable,
         has_complex=has_complex)


def _single_tensor_rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list,
                           state_steps, *, lr, alpha, eps, weight_decay, momentum, centered,
                           maximize, differentiable, capturable, has_complex):
    tensors = grad_mode._state.enabled
    lr = _to_scalar(lr)
    if not tensors:
        lr = real_scalar(lr)
    if capturable:
        _check_capturable(params, state_steps)
    for i, p in enumerate(params):
        ga_t = grad_avgs[i] if centered else None
        buf_t = momentum_buffer_list[i] if momentum > 0 else None
        param, grad, square_avg, step, grad_avg, buf = operands(
            tensors, p, grads[i], square_avgs[i], state_steps[i], ga_t, buf_t)
        grad = grad if not maximize else -grad
        step += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        is_complex_param = F.is_complex(param)
        if is_complex_param:
            param, grad, square_avg = (F.view_as_real(x) for x in (param, grad, square_avg))
        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if centered:
            if is_complex_param:
                grad_avg = F.view_as_real(grad_avg)
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add(eps) if differentiable else avg.add_(eps)
        if momentum > 0:
            if is_complex_param:
                buf = F.view_as_real(buf)
            buf.mul_(momentum).addcdiv_(grad, avg)
            param.add_(buf, alpha=-lr)
        else:
            param.addcdiv_(grad, avg, value=-lr)
        bump_versions(tensors, p, square_avgs[i], state_steps[i], ga_t, buf_t)


def _multi_tensor_rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list,
                          state_steps, *, lr, alpha, eps, weight_decay, momentum, centered,
                          maximize, differentiable, capturable, has_complex):
    from .. import (_foreach_mul_, _foreach_addcmul_, _foreach_lerp_, _foreach_addcmul,
                    _foreach_sqrt_, _foreach_sqrt, _foreach_add_, _foreach_addcdiv_,
                    _foreach_mul, _foreach_div_)
    if len(params) == 0:
        return
    if differentiable:
        raise AssertionError("_foreach ops don't support autograd")
    if capturable:
        _check_capturable(params, state_steps)
    lr = _to_scalar(lr)
    real = [1, 2] + ([3] if centered else []) + ([4] if momentum > 0 else [])
    for (g_params, g_grads, g_square_avgs, g_grad_avgs, g_bufs, g_steps) in grouped(
            [params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps],
            has_complex, real):
        foreach_steps_(g_steps)
        g_grads = foreach_grads(g_grads, g_params, maximize, weight_decay)
        _foreach_mul_(g_square_avgs, alpha)
        _foreach_addcmul_(g_square_avgs, g_grads, g_grads, value=1 - alpha)
        if centered:
            _foreach_lerp_(g_grad_avgs, g_grads, 1 - alpha)
            avg = _foreach_addcmul(g_square_avgs, g_grad_avgs, g_grad_avgs, value=-1)
            _foreach_sqrt_(avg)
            _foreach_add_(avg, eps)
        else:
            avg = _foreach_sqrt(g_square_avgs)
            _foreach_add_(avg, eps)
        if momentum > 0:
            _foreach_mul_(g_bufs, momentum)
            _foreach_addcdiv_(g_bufs, g_grads, avg)
            if capturable and isinstance(lr, Tensor):
                _foreach_add_(g_params, _foreach_mul(g_bufs, -lr))
            else:
                _foreach_add_(g_params, g_bufs, alpha=-lr)
        elif capturable and isinstance(lr, Tensor):
            _foreach_div_(avg, -lr)
            _foreach_addcdiv_(g_params, g_grads, avg)
        else:
            _foreach_addcdiv_(g_params, g_grads, avg, value=-lr)

