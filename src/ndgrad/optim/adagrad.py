"""Adagrad (torch.optim.Adagrad, and the functional torch.optim.adagrad.adagrad), for dense and
sparse gradients."""
from .optimizer import (Optimizer, _use_grad_for_differentiable, _device_dtype_check_for_fused,
                        _get_value, _to_scalar, _step_tensor, _zeros_like, closure_loss,
                        check_lr, check_nonnegative, check_fused, pick_kernel, set_defaults,
                        tensor_steps, foreach_steps_, foreach_grads)
from ._kernels import F, operands, bump_versions, real_scalar
from .._tensor import Tensor
from ..autograd import grad_mode

__all__ = ["Adagrad", "adagrad"]


class Adagrad(Optimizer):
    """Adagrad(params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
    eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None)."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_lr(lr)
        check_nonnegative(lr_decay=lr_decay, weight_decay=weight_decay,
                          initial_accumulator_value=initial_accumulator_value, epsilon=eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
            self._need_device_dtype_check_for_fused = True
            self._step_supports_amp_scaling = True
        for group in self.param_groups:
            for p in group["params"]:
                self._new_state(p, group)

    def _new_state(self, p, group):
        state = self.state[p]
        state["step"] = _step_tensor(0.0, bool(group["fused"]), p.device, group["fused"])
        v = self.defaults["initial_accumulator_value"]
        state["sum"] = _zeros_like(p, complex(v, v) if p.is_complex() else v)

    def __setstate__(self, state):
        set_defaults(self, state, foreach=None, maximize=False, differentiable=False)
        fused = None
        for group in self.param_groups:
            fused = group.setdefault("fused", None)
            tensor_steps(self, group, fused)

    def share_memory(self):
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["sum"].share_memory_()

    def _init_group(self, group, params_with_grad, grads, state_sums, state_steps):
        has_sparse_grad = has_complex = False
        for p in group["params"]:
            if p.grad is None:
                continue
            if group["fused"] and getattr(self, "_need_device_dtype_check_for_fused", True):
                _device_dtype_check_for_fused(p)
                self._need_device_dtype_check_for_fused = False
            has_sparse_grad |= p.grad.is_sparse
            has_complex |= p.is_complex()
            params_with_grad.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                if group["fused"]:
                    _device_dtype_check_for_fused(p)
                self._new_state(p, group)
            state_sums.append(state["sum"])
            state_steps.append(state["step"])
        return has_sparse_grad, has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform one update; `closure` re-evaluates the model and returns the loss."""
        loss = closure_loss(closure)
        for group in self.param_groups:
            params, grads, state_sums, state_steps = [], [], [], []
            has_sparse_grad, has_complex = self._init_group(group, params, grads, state_sums,
                                                            state_steps)
            adagrad(params, grads, state_sums, state_steps, lr=group["lr"],
                    weight_decay=group["weight_decay"], lr_decay=group["lr_decay"],
                    eps=group["eps"], has_sparse_grad=has_sparse_grad,
                    foreach=group["foreach"], maximize=group["maximize"],
                    differentiable=group["differentiable"], has_complex=has_complex,
                    fused=group["fused"], grad_scale=getattr(self, "grad_scale", None),
                    found_inf=getattr(self, "found_inf", None))
        return loss


def adagrad(params, grads, state_sums, state_steps, fused=None, grad_scale=None,
            found_inf=None, has_sparse_grad=False, foreach=None, differentiable=False,
            has_complex=False, *, lr, weight_decay, lr_decay, eps, maximize):
    """Functional Adagrad over lists of parameters, gradients and state tensors."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    func = pick_kernel(params, differentiable, foreach, fused, _single_tensor_adagrad,
                       _multi_tensor_adagrad)
    func(params, grads, state_sums, state_steps, lr=lr, weight_decay=weight_decay,
         lr_decay=lr_decay, eps=eps, has_sparse_grad=has_sparse_grad, maximize=maximize,
         differentiable=differentiable, has_complex=has_complex, grad_scale=grad_scale,
         found_inf=found_inf)


def _single_tensor_adagrad(params, grads, state_sums, state_steps, grad_scale, found_inf, *,
                           lr, weight_decay, lr_decay, eps, has_sparse_grad, maximize,
                           differentiable, has_complex):
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Expected grad_scale and found_inf to be None")
    tensors = grad_mode._state.enabled
    lr = _to_scalar(lr)
    if not tensors:
        lr = real_scalar(lr)
    for p, g, s_t, step_t_ in zip(params, grads, state_sums, state_steps):
        if g.is_sparse:
            _sparse_step(p, g, s_t, step_t_, lr, weight_decay, lr_decay, eps, maximize)
            continue
        param, grad, state_sum, step_t = operands(tensors, p, g, s_t, step_t_)
        step_t += 1
        step = _get_value(step_t)
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        clr = lr / (1 + (step - 1) * lr_decay)
        if F.is_complex(param):
            grad, state_sum, param = (F.view_as_real(x) for x in (grad, state_sum, param))
        state_sum.addcmul_(grad, grad, value=1)
        std = state_sum.sqrt() + eps if differentiable else state_sum.sqrt().add_(eps)
        param.addcdiv_(grad, std, value=-clr)
        bump_versions(tensors, p, s_t, step_t_)


def _sparse_step(p, grad, state_sum, step_t, lr, weight_decay, lr_decay, eps, maximize):
    """A sparse gradient updates the touched rows: sum += g^2 there, then p -= clr * g /
    (sqrt(sum) + eps) there (PyTorch's sparse_mask arithmetic, one unique index each)."""
    if weight_decay != 0:
        raise RuntimeError("weight_decay option is not compatible with sparse gradients")
    from .._backend import xp_of
    step_t._data[()] += 1
    step = float(step_t._data)
    clr = lr / (1 + (step - 1) * lr_decay)
    g = grad.coalesce()      # the update is non-linear: unique indices
    key, v = tuple(g._idx), g._vals._data
    v = -v if maximize else v
    s = state_sum._data
    s[key] += v * v
    std = xp_of(s).sqrt(s[key])
    std += eps
    p._data[key] -= clr * (v / std)
    bump_versions(False, p, state_sum, step_t)


def _multi_tensor_adagrad(params, grads, state_sums, state_steps, grad_scale, found_inf, *,
                          lr, weight_decay, lr_decay, eps, has_sparse_grad, maximize,
                          differentiable, has_complex):
    from .. import _foreach_addcmul_, _foreach_sqrt, _foreach_add_, _foreach_mul_, \
        _foreach_mul, _foreach_addcdiv_
    if differentiable:
        raise AssertionError("_foreach ops don't support autograd")
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Expected grad_scale and found_inf to be None")
    if len(params) == 0:
        return
    lr = _to_scalar(lr)
    groups = Optimizer._group_tensors_by_device_and_dtype([params, grads, state_sums,
                                                           state_steps])
    for lists, _ in groups.values():
        g_params, g_grads, g_sums, g_steps = (list(x) for x in lists)
        if has_sparse_grad and any(g.is_sparse for g in g_grads):
            _single_tensor_adagrad(g_params, g_grads, g_sums, g_steps, grad_scale, found_inf,
                                   lr=lr, weight_decay=weight_decay, lr_decay=lr_decay,
                                   eps=eps, has_sparse_grad=True, maximize=maximize,
                                   differentiable=differentiable, has_complex=has_complex)
            continue
        if has_complex:
            from .optimizer import _view_as_real
            _view_as_real(g_params, g_grads, g_sums)
        foreach_steps_(g_steps)
        g_grads = foreach_grads(g_grads, g_params, maximize, weight_decay)
        minus_clr = [-lr / (1 + (_get_value(s) - 1) * lr_decay) for s in g_steps]
        _foreach_addcmul_(g_sums, g_grads, g_grads, value=1)
        std = _foreach_sqrt(g_sums)
        _foreach_add_(std, eps)
        if weight_decay != 0 or maximize:
            _foreach_mul_(g_grads, minus_clr)
            numerator = g_grads
        else:
            numerator = _foreach_mul(g_grads, minus_clr)
        _foreach_addcdiv_(g_params, numerator, std)



