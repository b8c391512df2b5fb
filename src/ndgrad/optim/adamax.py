"""Adamax (torch.optim.Adamax, and the functional torch.optim.adamax.adamax): Adam with the
infinity norm."""
from .optimizer import (Optimizer, _use_grad_for_differentiable, _get_value, _to_scalar,
                        _check_capturable, _step_tensor, _zeros_like, closure_loss, check_lr,
                        check_betas, check_nonnegative, pick_kernel, set_defaults,
                        tensor_steps, foreach_steps_, foreach_grads, grouped)
from ._kernels import F, operands, bump_versions, real_scalar
from .._tensor import Tensor
from ..autograd import grad_mode

__all__ = ["Adamax", "adamax"]


class Adamax(Optimizer):
    """Adamax(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
    maximize=False, differentiable=False, capturable=False)."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        check_lr(lr)
        check_nonnegative(epsilon=eps)
        check_betas(betas)
        check_nonnegative(weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        set_defaults(self, state, foreach=None, maximize=False, differentiable=False,
                     capturable=False)
        for group in self.param_groups:
            tensor_steps(self, group)

    def _init_group(self, group, params_with_grad, grads, exp_avgs, exp_infs, state_steps):
        has_complex = False
        for p in group["params"]:
            if p.grad is None:
                continue
            has_complex |= p.is_complex()
            params_with_grad.append(p)
            if p.grad.is_sparse:
                raise RuntimeError("Adamax does not support sparse gradients")
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _step_tensor(0.0, group["capturable"], p.device)
                state["exp_avg"] = _zeros_like(p)
                state["exp_inf"] = _zeros_like(p)
            exp_avgs.append(state["exp_avg"])
            exp_infs.append(state["exp_inf"])
            state_steps.append(state["step"])
        return has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform one update; `closure` re-evaluates the model and returns the loss."""
        loss = closure_loss(closure)
        for group in self.param_groups:
            params, grads, exp_avgs, exp_infs, state_steps = [], [], [], [], []
            beta1, beta2 = group["betas"]
            has_complex = self._init_group(group, params, grads, exp_avgs, exp_infs,
                                           state_steps)
            adamax(params, grads, exp_avgs, exp_infs, state_steps, eps=group["eps"],
                   beta1=beta1, beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"],
                   foreach=group["foreach"], maximize=group["maximize"],
                   differentiable=group["differentiable"], capturable=group["capturable"],
                   has_complex=has_complex)
        return loss


def adamax(params, grads, exp_avgs, exp_infs, state_steps, foreach=None, maximize=False,
           differentiable=False, capturable=False, has_complex=False, *, eps, beta1, beta2, lr,
           weight_decay):
    """Functional Adamax over lists of parameters, gradients and state tensors."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    func = pick_kernel(params, differentiable, foreach, None, _single_tensor_adamax,
                       _multi_tensor_adamax)
    func(params, grads, exp_avgs, exp_infs, state_steps, eps=eps, beta1=beta1, beta2=beta2,
         lr=lr, weight_decay=weight_decay, maximize=maximize, differentiable=differentiable,
         capturable=capturable, has_complex=has_complex)


def _single_tensor_adamax(params, grads, exp_avgs, exp_infs, state_steps, *, eps, beta1,
                          beta2, lr, weight_decay, maximize, differentiable, capturable,
                          has_complex):
    tensors = grad_mode._state.enabled
    lr = _to_scalar(lr)
    if not tensors:
        lr = real_scalar(lr)
    if capturable:
        _check_capturable(params, state_steps)
    for p, g, m_t, u_t, s_t in zip(params, grads, exp_avgs, exp_infs, state_steps):
        param, grad, exp_avg, exp_inf, step_t = operands(tensors, p, g, m_t, u_t, s_t)
        grad = grad if not maximize else -grad
        step_t += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        if F.is_complex(param):
            param, grad, exp_avg, exp_inf = (F.view_as_real(x) for x in
                                             (param, grad, exp_avg, exp_inf))
        exp_avg.lerp_(grad, 1 - beta1)
        if not differentiable:
            F.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
        else:
            from .. import cat, amax
            norm_buf = cat([exp_inf.mul_(beta2).unsqueeze(0),
                            grad.abs().add_(eps).unsqueeze_(0)], 0)
            exp_inf.copy_(amax(norm_buf, 0, keepdim=False))
        if capturable:
            neg_bias_correction = beta1 ** step_t - 1
            neg_bias_correction.div_(lr)
            param.addcdiv_(exp_avg, exp_inf * neg_bias_correction)
        else:
            clr = lr / (1 - beta1 ** _get_value(step_t))
            param.addcdiv_(exp_avg, exp_inf, value=-clr)
        bump_versions(tensors, p, m_t, u_t, s_t)


def _multi_tensor_adamax(params, grads, exp_avgs, exp_infs, state_steps, *, eps, beta1, beta2,
                         lr, weight_decay, maximize, differentiable, capturable, has_complex):
    from .. import (_foreach_lerp_, _foreach_mul_, _foreach_abs, _foreach_abs_, _foreach_add_,
                    _foreach_maximum_, _foreach_pow, _foreach_sub_, _foreach_div_,
                    _foreach_mul, _foreach_addcdiv_)
    if differentiable:
        raise AssertionError("_foreach ops don't support autograd")
    if len(params) == 0:
        return
    if capturable:
        _check_capturable(params, state_steps, supports_xla=False)
    lr = _to_scalar(lr)
    for g_params, g_grads, g_exp_avgs, g_exp_infs, g_steps in grouped(
            [params, grads, exp_avgs, exp_infs, state_steps], has_complex, [1, 2, 3]):
        foreach_steps_(g_steps)
        g_grads = foreach_grads(g_grads, g_params, maximize, weight_decay)
        _foreach_lerp_(g_exp_avgs, g_grads, 1 - beta1)
        _foreach_mul_(g_exp_infs, beta2)
        if not maximize and weight_decay == 0:
            g_grads = _foreach_abs(g_grads)
        else:
            _foreach_abs_(g_grads)
        _foreach_add_(g_grads, eps)
        _foreach_maximum_(g_exp_infs, g_grads)
        if capturable:
            bc = _foreach_pow(beta1, g_steps)
            _foreach_sub_(bc, 1)
            _foreach_div_(bc, lr)
            _foreach_addcdiv_(g_params, g_exp_avgs, _foreach_mul(g_exp_infs, bc))
        else:
            bc = [1 - beta1 ** _get_value(s) for s in g_steps]
            step_size = [(_get_value(lr) / b) * -1 for b in bc]
            _foreach_addcdiv_(g_params, g_exp_avgs, g_exp_infs, step_size)
