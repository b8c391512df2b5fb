"""Adafactor (torch.optim.Adafactor, and the functional torch.optim._adafactor.adafactor):
factored second moments (a row and a column factor per matrix), relative step sizes and update
clipping."""
from .optimizer import (Optimizer, _to_scalar, _get_scalar_dtype,
                        closure_loss, check_lr, pick_kernel, foreach_steps_)
from ._kernels import F, operands, bump_versions, real_scalar
from .._tensor import Tensor, _make
from .._backend import xp_of
from .. import _dtype as D
from ..autograd import grad_mode

__all__ = ["Adafactor", "adafactor"]


class Adafactor(Optimizer):
    """Adafactor(params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0,
    *, foreach=None, maximize=False)."""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        check_lr(lr, "Learning rate should be >= 0 but is: {}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)

    def _init_group(self, group, params_with_grad, grads, row_vars, col_vars, variances,
                    state_steps):
        from .. import tensor
        for p in group["params"]:
            if p.grad is None:
                continue
            if p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
            if p.grad.is_sparse:
                raise RuntimeError("Adafactor does not support sparse gradients")
            params_with_grad.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = tensor(0.0, dtype=_get_scalar_dtype())
                g = p.grad._data
                xp = xp_of(g)
                if g.ndim > 1:
                    row_shape, col_shape = list(g.shape), list(g.shape)
                    row_shape[-1] = 1
                    col_shape[-2] = 1
                    state["row_var"] = _make(xp.zeros(row_shape, dtype=g.dtype))
                    state["col_var"] = _make(xp.zeros(col_shape, dtype=g.dtype))
                else:
                    state["variance"] = _make(xp.zeros_like(g))
            row_vars.append(state.get("row_var", None))
            col_vars.append(state.get("col_var", None))
            variances.append(state.get("variance", None))
            state_steps.append(state["step"])
        return False

    @grad_mode.no_grad()
    def step(self, closure=None):
        """Perform one update; `closure` re-evaluates the model and returns the loss."""
        self._accelerator_graph_capture_health_check()
        loss = closure_loss(closure)
        for group in self.param_groups:
            params, grads, row_vars, col_vars, variances, state_steps = [], [], [], [], [], []
            eps1, eps2 = group["eps"]
            has_complex = self._init_group(group, params, grads, row_vars, col_vars,
                                           variances, state_steps)
            adafactor(params, grads, row_vars, col_vars, variances, state_steps, d=group["d"],
                      lr=group["lr"], beta2_decay=group["beta2_decay"],
                      weight_decay=group["weight_decay"], eps1=eps1, eps2=eps2,
                      foreach=group["foreach"], maximize=group["maximize"],
                      grad_scale=getattr(self, "grad_scale", None),
                      found_inf=getattr(self, "found_inf", None), has_complex=has_complex)
        return loss


def adafactor(params, grads, row_vars, col_vars, variances, state_steps, foreach=None,
              grad_scale=None, found_inf=None, has_complex=False, *, d, lr, beta2_decay,
              weight_decay, eps1, eps2, maximize):
    """Functional Adafactor over lists of parameters, gradients and state tensors."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    func = pick_kernel(params, False, foreach, None, _single_tensor_adafactor,
                       _multi_tensor_adafactor)
    func(params, grads, row_vars, col_vars, variances, state_steps, d=d, lr=lr,
         beta2_decay=beta2_decay, weight_decay=weight_decay, eps1=eps1, eps2=eps2,
         maximize=maximize, grad_scale=grad_scale, found_inf=found_inf,
         has_complex=has_complex)


def _eps1(dtype):
    return float(D.finfo(dtype).eps)


def _single_tensor_adafactor(params, grads, row_vars, col_vars, variances, state_steps,
                             grad_scale, found_inf, *, d, lr, beta2_decay, weight_decay, eps1,
                             eps2, maximize, has_complex):
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Grad scaling should occur outside of optimizer.step()")
    tensors = grad_mode._state.enabled
    lr = _to_scalar(lr)
    if not tensors:
        lr = real_scalar(lr)
    for p, g, rv_t, cv_t, var_t, s_t in zip(params, grads, row_vars, col_vars, variances,
                                             state_steps):
        param, grad, row_var, col_var, variance, step_t = operands(tensors, p, g, rv_t, cv_t,
                                                                   var_t, s_t)
        grad = grad if not maximize else -grad
        if eps1 is None:
            eps1 = _eps1(p.dtype)
        step_t += 1
        step_float = step_t.item()
        one_minus_beta2_t = step_float ** beta2_decay
        rho_t = min(lr, 1 / (step_float ** 0.5))
        alpha = max(eps2, param.norm(2).item() / (param.numel() ** 0.5)) * rho_t
        if weight_decay != 0:
            param.mul_(1 - lr * weight_decay)
        if grad.dim() > 1:
            if row_var is None or col_var is None:
                raise AssertionError("row_var and col_var should be defined when grad is "
                                     "multidimensional")
            row_mean = F.norm(grad, dim=-1, keepdim=True).square_().div_(grad.size(-1))
            row_var.lerp_(row_mean, one_minus_beta2_t)
            col_mean = F.norm(grad, dim=-2, keepdim=True).square_().div_(grad.size(-2))
            col_var.lerp_(col_mean, one_minus_beta2_t)
            var_estimate = row_var @ col_var
            var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            if variance is None:
                raise AssertionError("variance should be defined when grad is a vector")
            variance.lerp_(grad * grad, one_minus_beta2_t)
            var_estimate = variance.clone()
        update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
        update.mul_(grad)
        denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
        param.add_(update, alpha=-alpha / denom)
        bump_versions(tensors, p, rv_t, cv_t, var_t, s_t)


def _multi_tensor_adafactor(params, grads, row_vars, col_vars, variances, state_steps,
                            grad_scale, found_inf, *, d, lr, beta2_decay, weight_decay, eps1,
                            eps2, maximize, has_complex):
    from .. import (_foreach_neg, _foreach_mul_, _foreach_div_, _foreach_lerp_, _foreach_mul,
                    _foreach_clamp_min_, _foreach_rsqrt_, _foreach_add_, norm)
    if len(params) == 0:
        return
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Grad scaling should occur outside of optimizer.step()")
    lr = _to_scalar(lr)
    groups = {}
    for i, p in enumerate(params):   # by device, dtype and whether the gradient is a matrix
        key = (p.device, p.dtype, grads[i].dim() > 1)
        groups.setdefault(key, []).append(i)
    for (_, dtype, is_multidim), idx in groups.items():
        g_params = [params[i] for i in idx]
        g_grads = [grads[i] for i in idx]
        g_steps = [state_steps[i] for i in idx]
        if eps1 is None:
            eps1 = _eps1(dtype)
        if maximize:
            g_grads = list(_foreach_neg(g_grads))
        foreach_steps_(g_steps)
        one_minus_beta2_ts = [s.item() ** beta2_decay for s in g_steps]
        rho_ts = [min(lr, 1 / (s.item() ** 0.5)) for s in g_steps]
        alphas = [max(eps2, p.norm(2).item() / (p.numel() ** 0.5)) * r
                  for p, r in zip(g_params, rho_ts)]
        if weight_decay != 0:
            _foreach_mul_(g_params, 1 - lr * weight_decay)
        if is_multidim:
            g_row = [row_vars[i] for i in idx]
            g_col = [col_vars[i] for i in idx]
            row_means = [norm(grad, dim=-1, keepdim=True) for grad in g_grads]
            _foreach_mul_(row_means, row_means)
            _foreach_div_(row_means, [grad.size(-1) for grad in g_grads])
            _foreach_lerp_(g_row, row_means, one_minus_beta2_ts)
            col_means = [norm(grad, dim=-2, keepdim=True) for grad in g_grads]
            _foreach_mul_(col_means, col_means)
            _foreach_div_(col_means, [grad.size(-2) for grad in g_grads])
            _foreach_lerp_(g_col, col_means, one_minus_beta2_ts)
            var_estimates = [r @ c for r, c in zip(g_row, g_col)]
            row_var_means = [r.mean(dim=-2, keepdim=True) for r in g_row]
            _foreach_clamp_min_(row_var_means, eps1)
            _foreach_div_(var_estimates, row_var_means)
        else:
            g_var = [variances[i] for i in idx]
            grads_squared = _foreach_mul(g_grads, g_grads)
            _foreach_lerp_(g_var, grads_squared, one_minus_beta2_ts)
            var_estimates = [v.clone() for v in g_var]
        _foreach_clamp_min_(var_estimates, eps1 * eps1)
        _foreach_rsqrt_(var_estimates)
        _foreach_mul_(var_estimates, g_grads)
        updates = var_estimates
        alphas = [-a / (max(1.0, u.norm(2).item() / ((u.numel() ** 0.5) * d)))
                  for a, u in zip(alphas, updates)]
        _foreach_mul_(updates, alphas)
        _foreach_add_(g_params, updates)
