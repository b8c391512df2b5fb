"""ASGD (torch.optim.ASGD, and the functional torch.optim.asgd.asgd): averaged stochastic
gradient descent. The averaged parameters are in `optimizer.state[p]["ax"]`."""
from .optimizer import (Optimizer, _use_grad_for_differentiable, _get_value, _to_scalar,
                        _check_capturable, _get_scalar_dtype, _zeros_like, closure_loss,
                        check_lr, check_nonnegative, pick_kernel, set_defaults, tensor_steps,
                        foreach_steps_, grouped)
from ._kernels import F, operands, bump_versions, real_scalar
from .._tensor import Tensor
from ..autograd import grad_mode

__all__ = ["ASGD", "asgd"]


class ASGD(Optimizer):
    """ASGD(params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
    maximize=False, differentiable=False, capturable=False)."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        check_lr(lr)
        check_nonnegative(weight_decay=weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        set_defaults(self, state, foreach=None, maximize=False, differentiable=False,
                     capturable=False)
        from .. import tensor
        for group in self.param_groups:
            tensor_steps(self, group)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                for key in ("eta", "mu"):
                    if len(p_state) != 0 and not isinstance(p_state[key], Tensor):
                        p_state[key] = tensor(p_state[key], dtype=_get_scalar_dtype())

    def _init_group(self, group, params_with_grad, grads, mus, axs, etas, state_steps):
        from .. import zeros, ones, as_tensor
        has_complex = False
        for p in group["params"]:
            if p.grad is None:
                continue
            has_complex |= p.is_complex()
            params_with_grad.append(p)
            if p.grad.is_sparse:
                raise RuntimeError("ASGD does not support sparse gradients")
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = zeros((), device=p.device, dtype=_get_scalar_dtype())
                state["eta"] = as_tensor(_to_scalar(group["lr"]), device=p.device,
                                         dtype=_get_scalar_dtype()).clone().detach()
                state["mu"] = ones((), device=p.device, dtype=_get_scalar_dtype())
                state["ax"] = _zeros_like(p)
            mus.append(state["mu"])
            axs.append(state["ax"])
            etas.append(state["eta"])
            state_steps.append(state["step"])
        return has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform one update; `closure` re-evaluates the model and returns the loss."""
        self._accelerator_graph_capture_health_check()
        loss = closure_loss(closure)
        for group in self.param_groups:
            params, grads, mus, axs, etas, state_steps = [], [], [], [], [], []
            has_complex = self._init_group(group, params, grads, mus, axs, etas, state_steps)
            asgd(params, grads, axs, mus, etas, state_steps, lambd=group["lambd"],
                 lr=group["lr"], t0=group["t0"], alpha=group["alpha"],
                 weight_decay=group["weight_decay"], foreach=group["foreach"],
                 maximize=group["maximize"], differentiable=group["differentiable"],
                 capturable=group["capturable"], has_complex=has_complex)
        return loss


def asgd(params, grads, axs, mus, etas, state_steps, foreach=None, maximize=False,
         differentiable=False, capturable=False, has_complex=False, *, lambd, lr, t0, alpha,
         weight_decay):
    """Functional ASGD over lists of parameters, gradients and state tensors."""
    func = pick_kernel(params, differentiable, foreach, None, _single_tensor_asgd,
                       _multi_tensor_asgd)
    func(params, grads, axs, mus, etas, state_steps, lambd=lambd, lr=lr, t0=t0, alpha=alpha,
         weight_decay=weight_decay, maximize=maximize, differentiable=differentiable,
         capturable=capturable, has_complex=has_complex)


def _single_tensor_asgd(params, grads, axs, mus, etas, state_steps, *, lambd, lr, t0, alpha,
                        weight_decay, maximize, differentiable, capturable, has_complex):
    from .. import as_tensor
    tensors = grad_mode._state.enabled
    lr = _to_scalar(lr)
    if not tensors:
        lr = real_scalar(lr)
    if capturable:
        _check_capturable(params, state_steps, what="params, mus, etas, and state_steps")
    for p, g, ax_t, mu_t, eta_t, s_t in zip(params, grads, axs, mus, etas, state_steps):
        param, grad, ax, mu, eta, step_t = operands(tensors, p, g, ax_t, mu_t, eta_t, s_t)
        grad = grad if not maximize else -grad
        if F.is_complex(param):
            grad, param, ax = (F.view_as_real(x) for x in (grad, param, ax))
        step_t += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        if capturable:
            param.mul_(1 - lambd * eta)
            param.addcmul_(grad, eta, value=-1)
        else:
            eta_value = _get_value(eta)
            param.mul_(1 - lambd * eta_value)
            param.add_(grad, alpha=-eta_value)
        if capturable or mu.item() != 1:
            ax.add_(param.sub(ax).mul_(mu))
        else:
            ax.copy_(param)
        if capturable:
            from .. import maximum, ones_like
            eta.copy_(lr / ((1 + lambd * lr * step_t) ** alpha))
            mu.copy_(1 / maximum(step_t - t0, ones_like(step_t)))
        else:
            step = _get_value(step_t)
            new_eta = lr / ((1 + lambd * lr * step) ** alpha)
            new_mu = 1 / max(1, step - t0)
            eta.copy_(as_tensor(new_eta) if tensors else new_eta)
            mu.copy_(as_tensor(new_mu) if tensors else new_mu)
        bump_versions(tensors, p, ax_t, mu_t, eta_t, s_t)


def _multi_tensor_asgd(params, grads, axs, mus, etas, state_steps, *, lambd, lr, t0, alpha,
                       weight_decay, maximize, differentiable, capturable, has_complex):
    from .. import (_foreach_neg, _foreach_add_, _foreach_add, _foreach_addcmul_,
                    _foreach_sub, _foreach_copy_, as_tensor)
    if len(params) == 0:
        return
    if differentiable:
        raise AssertionError("_foreach ops don't support autograd")
    if capturable:
        _check_capturable(params, state_steps, supports_xla=False,
                          what="params, mus, etas, and state_steps")
    lr = _to_scalar(lr)
    for g_params, g_grads, g_axs, g_mus, g_etas, g_steps in grouped(
            [params, grads, axs, mus, etas, state_steps], has_complex, [1, 2]):
        if maximize:
            g_grads = _foreach_neg(g_grads)
        foreach_steps_(g_steps)
        if weight_decay != 0:
            if maximize:
                _foreach_add_(g_grads, g_params, alpha=weight_decay)
                intermediate = g_grads
            else:
                intermediate = _foreach_add(g_grads, g_params, alpha=weight_decay)
            _foreach_add_(intermediate, g_params, alpha=lambd)
        else:
            intermediate = _foreach_add(g_grads, g_params, alpha=lambd)
        _foreach_addcmul_(g_params, intermediate, g_etas, value=-1)
        del intermediate
        intermediate = _foreach_sub(g_params, g_axs)
        _foreach_addcmul_(g_axs, intermediate, g_mus)
        del intermediate
        device = g_params[0].device
        new_etas = [as_tensor(lr / ((1 + lambd * lr * s) ** alpha), device=device)
                    for s in g_steps]
        new_mus = [as_tensor(1 / max(1, _get_value(s) - t0), device=device) for s in g_steps]
        _foreach_copy_(g_etas, new_etas)
        _foreach_copy_(g_mus, new_mus)
