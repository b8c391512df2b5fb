"""NAdam (torch.optim.NAdam, and the functional torch.optim.nadam.nadam): Adam with Nesterov
momentum, momentum_decay and optional decoupled weight decay."""
from .optimizer import (Optimizer, _use_grad_for_differentiable, _get_value, _to_scalar,
                        _check_capturable, _step_tensor, _zeros_like, closure_loss, check_lr,
                        check_betas, check_nonnegative, pick_kernel, set_defaults,
                        tensor_steps, foreach_steps_, foreach_grads, grouped)
from ._kernels import F, operands, bump_versions, real_scalar
from .._tensor import Tensor
from ..autograd import grad_mode

__all__ = ["NAdam", "nadam"]


class NAdam(Optimizer):
    """NAdam(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None, maximize=False,
    capturable=False, differentiable=False)."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        check_lr(lr)
        check_nonnegative(epsilon=eps)
        check_betas(betas)
        check_nonnegative(weight_decay=weight_decay, momentum_decay=momentum_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        set_defaults(self, state, maximize=False, foreach=None, capturable=False,
                     differentiable=False, decoupled_weight_decay=False)
        from .. import tensor
        from .optimizer import _get_scalar_dtype
        for group in self.param_groups:
            tensor_steps(self, group)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["mu_product"], Tensor):
                    p_state["mu_product"] = tensor(p_state["mu_product"],
                                                   dtype=_get_scalar_dtype())

    def _init_group(self, group, params_with_grad, grads, exp_avgs, exp_avg_sqs, mu_products,
                    state_steps):
        has_complex = False
        for p in group["params"]:
            if p.grad is None:
                continue
            has_complex |= p.is_complex()
            params_with_grad.append(p)
            if p.grad.is_sparse:
                raise RuntimeError("NAdam does not support sparse gradients")
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _step_tensor(0.0, group["capturable"], p.device)
                state["mu_product"] = _step_tensor(1.0, group["capturable"], p.device)
                state["exp_avg"] = _zeros_like(p)
                state["exp_avg_sq"] = _zeros_like(p)
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
            mu_products.append(state["mu_product"])
            state_steps.append(state["step"])
        return has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform one update; `closure` re-evaluates the model and returns the loss."""
        loss = closure_loss(closure)
        for group in self.param_groups:
            params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps = \
                [], [], [], [], [], []
            beta1, beta2 = group["betas"]
            has_complex = self._init_group(group, params, grads, exp_avgs, exp_avg_sqs,
                                           mu_products, state_steps)
            nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, beta1=beta1,
                  beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"],
                  momentum_decay=group["momentum_decay"], eps=group["eps"],
                  maximize=group["maximize"],
                  decoupled_weight_decay=group["decoupled_weight_decay"],
                  foreach=group["foreach"], capturable=group["capturable"],
                  differentiable=group["differentiable"], has_complex=has_complex)
        return loss


def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps,
          decoupled_weight_decay=False, foreach=None, capturable=False, differentiable=False,
          has_complex=False, maximize=False, *, beta1, beta2, lr, weight_decay, momentum_decay,
          eps):
    """Functional NAdam over lists of parameters, gradients and state tensors."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    if not all(isinstance(t, Tensor) for t in mu_products):
        raise RuntimeError("API has changed, `mu_products` argument must contain a list of "
                           "singleton tensors")
    func = pick_kernel(params, differentiable, foreach, None, _single_tensor_nadam,
                       _multi_tensor_nadam)
    func(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, beta1=beta1,
         beta2=beta2, lr=lr, weight_decay=weight_decay, momentum_decay=momentum_decay,
         maximize=maximize, decoupled_weight_decay=decoupled_weight_decay, eps=eps,
         capturable=capturable, differentiable=differentiable, has_complex=has_complex)


def _single_tensor_nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, *,
                         beta1, beta2, lr, weight_decay, momentum_decay, eps,
                         decoupled_weight_decay, maximize, capturable, differentiable,
                         has_complex):
    tensors = grad_mode._state.enabled
    lr = _to_scalar(lr)
    if not tensors:
        lr = real_scalar(lr)
    if capturable:
        _check_capturable(params, state_steps, what="params, mu_products and state_steps")
    for p, g, m_t, v_t, mu_t, s_t in zip(params, grads, exp_avgs, exp_avg_sqs, mu_products,
                                          state_steps):
        param, grad, exp_avg, exp_avg_sq, mu_product, step_t = operands(
            tensors, p, g, m_t, v_t, mu_t, s_t)
        grad = grad if not maximize else -grad
        if F.is_complex(param):
            param, grad, exp_avg, exp_avg_sq = (F.view_as_real(x) for x in
                                                (param, grad, exp_avg, exp_avg_sq))
        step_t += 1
        step = step_t if capturable else _get_value(step_t)
        bias_correction2 = 1 - beta2 ** step
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product *= mu
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt()
        if differentiable or capturable:
            denom = denom.add(eps)
            mu_product_next = mu_product * mu_next
            grad = grad * (-lr * (1.0 - mu) / (1.0 - mu_product))
            exp_avg = exp_avg * (-lr * mu_next / (1.0 - mu_product_next))
            param.addcdiv_(grad, denom)
            param.addcdiv_(exp_avg, denom)
        else:
            mu_product_next = _get_value(mu_product) * mu_next
            denom.add_(eps)
            param.addcdiv_(grad, denom,
                           value=(-lr * (1.0 - mu) / (1.0 - _get_value(mu_product))))
            param.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))
        bump_versions(tensors, p, m_t, v_t, mu_t, s_t)


def _multi_tensor_nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, *,
                        beta1, beta2, lr, weight_decay, momentum_decay, eps,
                        decoupled_weight_decay, maximize, capturable, differentiable,
                        has_complex):
    from .. import (_foreach_mul_, _foreach_lerp_, _foreach_addcmul_, _foreach_sqrt,
                    _foreach_div_, _foreach_add_, _foreach_addcdiv_)
    if len(params) == 0:
        return
    if differentiable:
        raise AssertionError("_foreach ops don't support autograd")
    if capturable:
        _check_capturable(params, state_steps, supports_xla=False,
                          what="params, mu_products, and state_steps")
    lr = _to_scalar(lr)
    for g_params, g_grads, g_exp_avgs, g_exp_avg_sqs, g_mu_products, g_steps in grouped(
            [params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps], has_complex,
            [1, 2, 3]):
        foreach_steps_(g_steps)
        if weight_decay != 0 and decoupled_weight_decay:
            g_grads = foreach_grads(g_grads, g_params, maximize, 0)
            _foreach_mul_(g_params, 1 - lr * weight_decay)
        else:
            g_grads = foreach_grads(g_grads, g_params, maximize, weight_decay)
        _foreach_lerp_(g_exp_avgs, g_grads, 1 - beta1)
        _foreach_mul_(g_exp_avg_sqs, beta2)
        _foreach_addcmul_(g_exp_avg_sqs, g_grads, g_grads, 1 - beta2)
        exp_avg_sq_sqrt = _foreach_sqrt(g_exp_avg_sqs)
        if capturable:
            raise AssertionError("capturable NAdam needs an accelerator")
        bias_correction_sqrt = [(1 - beta2 ** _get_value(s)) ** 0.5 for s in g_steps]
        mus = [beta1 * (1.0 - 0.5 * (0.96 ** (_get_value(s) * momentum_decay)))
               for s in g_steps]
        mu_nexts = [beta1 * (1.0 - 0.5 * (0.96 ** ((_get_value(s) + 1) * momentum_decay)))
                    for s in g_steps]
        _foreach_mul_(g_mu_products, mus)
        _foreach_div_(exp_avg_sq_sqrt, bias_correction_sqrt)
        _foreach_add_(exp_avg_sq_sqrt, eps)
        step_size_grads = [(_get_value(lr) * (1.0 - mu) / (1.0 - _get_value(mp))) * -1
                           for mp, mu in zip(g_mu_products, mus)]
        step_size_expavg = [(_get_value(lr) * mu_next / (1.0 - _get_value(mp) * mu_next)) * -1
                            for mp, mu_next in zip(g_mu_products, mu_nexts)]
        _foreach_addcdiv_(g_params, g_grads, exp_avg_sq_sqrt, step_size_grads)
        _foreach_addcdiv_(g_params, g_exp_avgs, exp_avg_sq_sqrt, step_size_expavg)
