"""RAdam (torch.optim.RAdam, and the functional torch.optim.radam.radam): Adam with the
variance rectification term, optional decoupled weight decay."""
from .optimizer import (Optimizer, _use_grad_for_differentiable, _get_value, _to_scalar,
                        _check_capturable, _step_tensor, _zeros_like, closure_loss, check_lr,
                        check_betas, check_nonnegative, pick_kernel, set_defaults,
                        tensor_steps, foreach_steps_, foreach_grads, grouped)
from ._kernels import F, operands, bump_versions, real_scalar
from .._tensor import Tensor
from ..autograd import grad_mode

__all__ = ["RAdam", "radam"]


class RAdam(Optimizer):
    """RAdam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
    differentiable=False)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        check_lr(lr)
        check_nonnegative(epsilon=eps)
        check_betas(betas)
        check_nonnegative(weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        set_defaults(self, state, foreach=None, maximize=False, differentiable=False,
                     decoupled_weight_decay=False, capturable=False)
        for group in self.param_groups:
            tensor_steps(self, group)

    def _init_group(self, group, params_with_grad, grads, exp_avgs, exp_avg_sqs, state_steps):
        has_complex = False
        for p in group["params"]:
            if p.grad is None:
                continue
            has_complex |= p.is_complex()
            params_with_grad.append(p)
            if p.grad.is_sparse:
                raise RuntimeError("RAdam does not support sparse gradients")
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _step_tensor(0.0, group["capturable"], p.device)
                state["exp_avg"] = _zeros_like(p)
                state["exp_avg_sq"] = _zeros_like(p)
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
            state_steps.append(state["step"])
        return has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform one update; `closure` re-evaluates the model and returns the loss."""
        loss = closure_loss(closure)
        for group in self.param_groups:
            params, grads, exp_avgs, exp_avg_sqs, state_steps = [], [], [], [], []
            beta1, beta2 = group["betas"]
            has_complex = self._init_group(group, params, grads, exp_avgs, exp_avg_sqs,
                                           state_steps)
            radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, beta1=beta1, beta2=beta2,
                  lr=group["lr"], weight_decay=group["weight_decay"], eps=group["eps"],
                  maximize=group["maximize"], foreach=group["foreach"],
                  capturable=group["capturable"], differentiable=group["differentiable"],
                  decoupled_weight_decay=group["decoupled_weight_decay"],
                  has_complex=has_complex)
        return loss


def radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, decoupled_weight_decay=False,
          foreach=None, differentiable=False, capturable=False, has_complex=False,
          maximize=False, *, beta1, beta2, lr, weight_decay, eps):
    """Functional RAdam over lists of parameters, gradients and state tensors."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    func = pick_kernel(params, differentiable, foreach, None, _single_tensor_radam,
                       _multi_tensor_radam)
    func(params, grads, exp_avgs, exp_avg_sqs, state_steps, beta1=beta1, beta2=beta2, lr=lr,
         weight_decay=weight_decay, eps=eps, maximize=maximize,
         decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable,
         capturable=capturable, has_complex=has_complex)


def _single_tensor_radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, *, beta1, beta2,
                         lr, weight_decay, eps, decoupled_weight_decay, differentiable,
                         maximize, capturable, has_complex):
    tensors = grad_mode._state.enabled
    lr = _to_scalar(lr)
    if not tensors:
        lr = real_scalar(lr)
    if capturable:
        _check_capturable(params, state_steps)
    for p, g, m_t, v_t, s_t in zip(params, grads, exp_avgs, exp_avg_sqs, state_steps):
        param, grad, exp_avg, exp_avg_sq, step_t = operands(tensors, p, g, m_t, v_t, s_t)
        grad = grad if not maximize else -grad
        if F.is_complex(param):
            param, grad, exp_avg, exp_avg_sq = (F.view_as_real(x) for x in
                                                (param, grad, exp_avg, exp_avg_sq))
        step_t += 1
        step = step_t if capturable else _get_value(step_t)
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        bias_corrected_exp_avg = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2

        def rect():
            return ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5

        def adaptive_lr():
            sq = exp_avg_sq.sqrt()
            sq = sq.add(eps) if differentiable else sq.add_(eps)
            return (bias_correction2 ** 0.5) / sq
        if capturable:
            update = F.where(rho_t > 5.0, rect() * adaptive_lr(), 1.0)
            param.add_(bias_corrected_exp_avg * lr * update, alpha=-1.0)
        elif rho_t > 5.0:
            param.add_(bias_corrected_exp_avg * lr * adaptive_lr() * rect(), alpha=-1.0)
        else:
            param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
        bump_versions(tensors, p, m_t, v_t, s_t)


def _multi_tensor_radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, *, beta1, beta2,
                        lr, weight_decay, eps, decoupled_weight_decay, differentiable,
                        maximize, capturable, has_complex):
    from .. import (_foreach_mul_, _foreach_lerp_, _foreach_addcmul_, _foreach_sqrt,
                    _foreach_add_, _foreach_div_, _foreach_reciprocal_)
    if len(params) == 0:
        return
    if differentiable:
        raise AssertionError("_foreach ops don't support autograd")
    if capturable:
        _check_capturable(params, state_steps, supports_xla=False)
    lr = _to_scalar(lr)
    for g_params, g_grads, g_exp_avgs, g_exp_avg_sqs, g_steps in grouped(
            [params, grads, exp_avgs, exp_avg_sqs, state_steps], has_complex, [1, 2, 3]):
        foreach_steps_(g_steps)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t_list = [rho_inf - 2 * _get_value(s) * (beta2 ** _get_value(s))
                      / (1 - beta2 ** _get_value(s)) for s in g_steps]
        if weight_decay != 0 and decoupled_weight_decay:
            g_grads = foreach_grads(g_grads, g_params, maximize, 0)
            _foreach_mul_(g_params, 1 - lr * weight_decay)
        else:
            g_grads = foreach_grads(g_grads, g_params, maximize, weight_decay)
        _foreach_lerp_(g_exp_avgs, g_grads, 1 - beta1)
        _foreach_mul_(g_exp_avg_sqs, beta2)
        _foreach_addcmul_(g_exp_avg_sqs, g_grads, g_grads, 1 - beta2)
        del g_grads
        if capturable:
            raise AssertionError("capturable RAdam needs an accelerator")
        rect = [((rho_t - 4) * (rho_t - 2) * rho_inf
                 / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5 if rho_t > 5 else 0
                for rho_t in rho_t_list]
        unrectified = [0 if r > 0 else 1.0 for r in rect]
        bias_correction1 = [1 - beta1 ** _get_value(s) for s in g_steps]
        unrect_step_size = [(lr * r / bc) * -1 for r, bc in zip(unrectified, bias_correction1)]
        bias_correction2 = [((1 - beta2 ** _get_value(s)) ** 0.5) * (lr * r / bc) * -1
                            for s, r, bc in zip(g_steps, rect, bias_correction1)]
        buffer = _foreach_sqrt(g_exp_avg_sqs)
        _foreach_add_(buffer, eps)
        _foreach_div_(buffer, bias_correction2)
        _foreach_reciprocal_(buffer)
        _foreach_add_(buffer, unrect_step_size)
        _foreach_addcmul_(g_params, g_exp_avgs, buffer)
