"""Adam (torch.optim.Adam, and the functional torch.optim.adam.adam), with amsgrad, L2 or
decoupled weight decay, maximize, and hyperparameters given as Tensors."""
from .optimizer import (Optimizer, _use_grad_for_differentiable, _device_dtype_check_for_fused,
                        _get_value, _to_scalar, _view_as_real, _check_capturable, _step_tensor,
                        _zeros_like, closure_loss, check_lr, check_betas, check_nonnegative,
                        check_fused, pick_kernel, set_defaults, tensor_steps)
from .optimizer import dense_params
from ._kernels import (F, Arr, operands, bump_versions, real_scalar, small_groups, Concat,
                       flat_parts)
from .._tensor import Tensor
from .._backend import xp_of
from ..ops import _parallel as _par
from ..autograd import grad_mode

__all__ = ["Adam", "adam"]


def check_tensor_betas(betas, capturable, foreach):
    """Betas as Tensors: both or neither, one element each, not for the non-capturable
    foreach kernel (PyTorch's checks and messages)."""
    if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
            or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
        raise ValueError("betas must be either both floats or both Tensors")
    for i in (0, 1):
        if isinstance(betas[i], Tensor):
            if not capturable and foreach:
                raise ValueError(f"betas[{i}] as a Tensor is not supported for "
                                 "capturable=False and foreach=True")
            if betas[i].numel() != 1:
                raise ValueError(f"Tensor betas[{i}] must be 1-element")
    return tuple(_to_scalar(b) for b in betas)


class Adam(Optimizer):
    """Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
    foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
    decoupled_weight_decay=False)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError("lr as a Tensor is not supported for capturable=False and "
                             "foreach=True")
        check_lr(lr)
        check_nonnegative(epsilon=eps)
        check_betas(betas)
        check_nonnegative(weight_decay=weight_decay)
        betas = check_tensor_betas(betas, capturable, foreach)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        check_fused(self, fused, foreach, differentiable)

    def __setstate__(self, state):
        set_defaults(self, state, amsgrad=False, maximize=False, foreach=None, capturable=False,
                     differentiable=False, decoupled_weight_decay=False)
        for group in self.param_groups:
            group.setdefault("fused", None)
            tensor_steps(self, group, group["fused"])

    def _init_group(self, group, params_with_grad, grads, exp_avgs, exp_avg_sqs,
                    max_exp_avg_sqs, state_steps):
        for p in dense_params(group, params_with_grad, grads,
                              "Adam does not support sparse gradients, please consider "
                              "SparseAdam instead"):
            state = self.state[p]
            if len(state) == 0:
                if group["fused"]:
                    _device_dtype_check_for_fused(p)
                state["step"] = _step_tensor(0.0, group["capturable"] or group["fused"],
                                             p.device, group["fused"])
                state["exp_avg"] = _zeros_like(p)
                state["exp_avg_sq"] = _zeros_like(p)
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = _zeros_like(p)
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
            if group["amsgrad"]:
                max_exp_avg_sqs.append(state["max_exp_avg_sq"])
            if group["differentiable"] and state["step"].requires_grad:
                raise RuntimeError("`requires_grad` is not supported for `step` in "
                                   "differentiable mode")
            if group["foreach"] and isinstance(group["lr"], Tensor) and not group["capturable"]:
                raise RuntimeError("lr as a Tensor is not supported for capturable=False and "
                                   "foreach=True")
            state_steps.append(state["step"])
        return any(p.is_complex() for p in params_with_grad)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform one update; `closure` re-evaluates the model and returns the loss."""
        self._accelerator_graph_capture_health_check()
        loss = closure_loss(closure)
        for group in self.param_groups:
            params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps = \
                [], [], [], [], [], []
            beta1, beta2 = group["betas"]
            has_complex = self._init_group(group, params, grads, exp_avgs, exp_avg_sqs,
                                           max_exp_avg_sqs, state_steps)
            adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
                 amsgrad=group["amsgrad"], has_complex=has_complex, beta1=beta1, beta2=beta2,
                 lr=group["lr"], weight_decay=group["weight_decay"], eps=group["eps"],
                 maximize=group["maximize"], foreach=group["foreach"],
                 capturable=group["capturable"], differentiable=group["differentiable"],
                 fused=group["fused"], grad_scale=getattr(self, "grad_scale", None),
                 found_inf=getattr(self, "found_inf", None),
                 decoupled_weight_decay=group["decoupled_weight_decay"])
        return loss


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, foreach=None,
         capturable=False, differentiable=False, fused=None, grad_scale=None, found_inf=None,
         has_complex=False, decoupled_weight_decay=False, *, amsgrad, beta1, beta2, lr,
         weight_decay, eps, maximize):
    """Functional Adam over lists of parameters, gradients and state tensors."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    func = pick_kernel(params, differentiable, foreach, fused, _single_tensor_adam,
                       _multi_tensor_adam, lr=lr, capturable=capturable)
    func(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, grad_scale,
         found_inf, amsgrad=amsgrad, has_complex=has_complex, beta1=beta1, beta2=beta2, lr=lr,
         weight_decay=weight_decay, eps=eps, maximize=maximize, capturable=capturable,
         differentiable=differentiable, decoupled_weight_decay=decoupled_weight_decay)


def _single_tensor_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
                        grad_scale, found_inf, *, amsgrad, has_complex, beta1, beta2, lr,
                        weight_decay, eps, maximize, capturable, differentiable,
                        decoupled_weight_decay):
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Expected grad_scale and found_inf to be None")
    tensors = grad_mode._state.enabled   # differentiable: Tensor ops, recorded
    lr, beta1, beta2 = _to_scalar(lr), _to_scalar(beta1), _to_scalar(beta2)
    if not tensors:     # hyperparameter tensors as NumPy scalars of their dtype
        lr, beta1, beta2 = real_scalar(lr), real_scalar(beta1), real_scalar(beta2)
    if capturable:
        _check_capturable(params, state_steps)

    def update(i, flat=None):   # (one parameter's update: parameters apart on several
        p = params[i]           # threads; or `flat`'s operands, small parameters as one)
        vmax_t = max_exp_avg_sqs[i] if amsgrad else None
        param, grad, exp_avg, exp_avg_sq, step_t, vmax = flat or operands(
            tensors, p, grads[i], exp_avgs[i], exp_avg_sqs[i], state_steps[i], vmax_t)
        grad = grad if not maximize else -grad
        step_t += 1
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            elif differentiable and isinstance(weight_decay, Tensor) \
                    and weight_decay.requires_grad:
                grad = grad.addcmul_(param.clone(), weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        if F.is_complex(param):
            grad, exp_avg, exp_avg_sq, param = (F.view_as_real(x) for x in
                                                (grad, exp_avg, exp_avg_sq, param))
            if amsgrad:
                vmax = F.view_as_real(vmax)
        b1 = beta1.to(dtype=param.dtype) if isinstance(beta1, Tensor) else beta1
        exp_avg.lerp_(grad, 1 - b1)
        if differentiable and isinstance(beta2, Tensor) and beta2.requires_grad:
            exp_avg_sq.lerp_(F.square(grad), 1 - beta2)
        else:
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        if capturable or differentiable:
            step = step_t
            bias_correction1 = 1 - beta1 ** (step.clone() if isinstance(beta1, Tensor)
                                             and beta1.requires_grad else step)
            bias_correction2 = 1 - beta2 ** (step.clone() if isinstance(beta2, Tensor)
                                             and beta2.requires_grad else step)
            step_size = lr / bias_correction1
            step_size_neg = step_size.neg()
            bias_correction2_sqrt = bias_correction2.sqrt()
            if amsgrad:
                vmax_prev = vmax.clone() if differentiable else vmax
                vmax.copy_(F.maximum(vmax_prev, exp_avg_sq))
                denom = (vmax.sqrt() / (bias_correction2_sqrt * step_size_neg)).add_(
                    eps / step_size_neg)
            else:
                denom = (exp_avg_sq.sqrt() / (bias_correction2_sqrt * step_size_neg)).add_(
                    eps / step_size_neg)
            param.addcdiv_(exp_avg.clone() if differentiable else exp_avg, denom)
        else:
            step = _get_value(step_t)
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            step_size = lr / bias_correction1
            bias_correction2_sqrt = bias_correction2 ** 0.5
            if amsgrad:
                F.maximum(vmax, exp_avg_sq, out=vmax)
                denom = (vmax.sqrt() / bias_correction2_sqrt).add_(eps)
            else:
                denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
            param.addcdiv_(exp_avg, denom, value=-step_size)
    if tensors or not params:
        for i in range(len(params)):
            update(i)
        rest = ()
    elif capturable or has_complex:
        rest = range(len(params))
    else:   # (Note [Small parameters as one array] in optim/_kernels.py)
        vmaxes = max_exp_avg_sqs if amsgrad else None
        groups, rest = small_groups(params, state_steps, grads, exp_avgs, exp_avg_sqs, vmaxes)
        for idx in groups:
            c = Concat(idx, params, grads, exp_avgs, exp_avg_sqs, vmaxes)
            step = state_steps[idx[0]]._data.copy()
            update(idx[0], c.arrs[:4] + [Arr(step), c.arrs[4]])
            c.put_back(0, 2, 3, 4)   # (all but the gradients)
            for i in idx:
                state_steps[i]._data[...] = step
    if rest:   # (Note [Parallel pieces]: the parameters' array updates are independent)
        rest = list(rest)
        vmaxes = max_exp_avg_sqs if amsgrad else None
        cut = [not has_complex and flat_parts(i, params, grads, exp_avgs, exp_avg_sqs, vmaxes)
               for i in rest]
        parted = set()

        def part(j, lo, hi):   # (a parameter whole, or a flat part of one with its own copy of
            i = rest[j]        # the step: a cut parameter's own step stays until all are done)
            if not cut[j] or (lo == 0 and hi == params[i]._data.size):
                return update(i)
            parted.add(i)
            arrs = [None if lst is None else Arr(lst[i]._data.reshape(-1)[lo:hi])
                    for lst in (params, grads, exp_avgs, exp_avg_sqs, vmaxes)]
            update(i, arrs[:4] + [Arr(state_steps[i]._data.copy()), arrs[4]])
        _par.spread(xp_of(params[0]._data), part, [params[i]._data.size for i in rest], cut)
        for i in parted:   # (a parameter updated in parts counts its step once)
            state_steps[i]._data += 1
    for i, p in enumerate(params):
        bump_versions(tensors, p, exp_avgs[i], exp_avg_sqs[i], state_steps[i],
                      max_exp_avg_sqs[i] if amsgrad else None)


def _multi_tensor_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
                       grad_scale, found_inf, *, amsgrad, has_complex, beta1, beta2, lr,
                       weight_decay, eps, maximize, capturable, differentiable,
                       decoupled_weight_decay):
    from .. import (_foreach_neg, _foreach_add_, _foreach_add, _foreach_mul_, _foreach_mul,
                    _foreach_lerp_, _foreach_addcmul_, _foreach_pow, _foreach_sub_,
                    _foreach_div_, _foreach_reciprocal_, _foreach_sqrt_, _foreach_sqrt,
                    _foreach_maximum_, _foreach_addcdiv_, tensor)
    if len(params) == 0:
        return
    if isinstance(lr, Tensor):
        if not capturable:
            raise RuntimeError("lr as a Tensor is not supported for capturable=False and "
                               "foreach=True")
        if lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
    for name, b in (("beta1", beta1), ("beta2", beta2)):
        if isinstance(b, Tensor):
            if not capturable:
                raise ValueError(f"{name} as a Tensor is not supported for capturable=False "
                                 "and foreach=True")
            if b.numel() != 1:
                raise ValueError(f"Tensor {name} must be 1-element")
    if capturable:
        _check_capturable(params, state_steps, supports_xla=False)
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Expected grad_scale and found_inf to be None")
    if differentiable:
        raise AssertionError("_foreach ops don't support autograd")
    lr, beta1, beta2 = _to_scalar(lr), _to_scalar(beta1), _to_scalar(beta2)
    grouped = Optimizer._group_tensors_by_device_and_dtype(
        [params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps])
    for (device_params, device_grads, device_exp_avgs, device_exp_avg_sqs, device_vmax,
         device_steps), _ in grouped.values():
        device_params, device_grads = list(device_params), list(device_grads)
        device_exp_avgs, device_exp_avg_sqs = list(device_exp_avgs), list(device_exp_avg_sqs)
        device_vmax = list(device_vmax)
        if has_complex:
            if amsgrad:
                _view_as_real(device_params, device_grads, device_exp_avgs,
                              device_exp_avg_sqs, device_vmax)
            else:
                _view_as_real(device_params, device_grads, device_exp_avgs,
                              device_exp_avg_sqs)
        if maximize:
            device_grads = _foreach_neg(device_grads)
        if device_steps[0].device.type == "cpu":
            _foreach_add_(device_steps, tensor(1.0), alpha=1.0)
        else:
            _foreach_add_(device_steps, 1)
        if weight_decay != 0:
            if decoupled_weight_decay:
                _foreach_mul_(device_params, 1 - lr * weight_decay)
            elif maximize:
                _foreach_add_(device_grads, device_params, alpha=weight_decay)
            else:
                device_grads = _foreach_add(device_grads, device_params, alpha=weight_decay)
        _foreach_lerp_(device_exp_avgs, device_grads, 1 - beta1)
        _foreach_mul_(device_exp_avg_sqs, beta2)
        if isinstance(beta2, Tensor):
            scaled, value = _foreach_mul(device_grads, 1 - beta2), 1.0
        else:
            scaled, value = device_grads, 1 - beta2
        _foreach_addcmul_(device_exp_avg_sqs, scaled, device_grads, value)
        del device_grads, scaled
        if capturable:
            bc1 = _foreach_pow(beta1, device_steps)
            bc2 = _foreach_pow(beta2, device_steps)
            _foreach_sub_(bc1, 1)
            _foreach_sub_(bc2, 1)
            from .. import _foreach_neg_
            _foreach_neg_(bc2)
            _foreach_div_(bc1, lr)
            _foreach_reciprocal_(bc1)
            _foreach_sqrt_(bc2)
            step_size, bc2_sqrt = bc1, bc2
            if amsgrad:
                _foreach_maximum_(device_vmax, device_exp_avg_sqs)
                sq = _foreach_sqrt(device_vmax)
            else:
                sq = _foreach_sqrt(device_exp_avg_sqs)
            _foreach_div_(sq, bc2_sqrt)
            _foreach_add_(sq, eps)
            _foreach_div_(sq, step_size)
            _foreach_addcdiv_(device_params, device_exp_avgs, sq)
        else:
            bc1 = [1 - beta1 ** _get_value(s) for s in device_steps]
            bc2 = [1 - beta2 ** _get_value(s) for s in device_steps]
            step_size = [(lr / bc) * -1 for bc in bc1]
            bc2_sqrt = [bc ** 0.5 for bc in bc2]
            if amsgrad:
                _foreach_maximum_(device_vmax, device_exp_avg_sqs)
                sq = _foreach_sqrt(device_vmax)
            else:
                sq = _foreach_sqrt(device_exp_avg_sqs)
            _foreach_div_(sq, bc2_sqrt)
            _foreach_add_(sq, eps)
            _foreach_addcdiv_(device_params, device_exp_avgs, sq, step_size)
