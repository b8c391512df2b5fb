"""Rprop (torch.optim.Rprop, and the functional torch.optim.rprop.rprop): resilient
backpropagation, per-element step sizes."""
from .optimizer import (Optimizer, _use_grad_for_differentiable, _to_scalar, _check_capturable,
                        _step_tensor, _zeros_like, closure_loss, check_lr, pick_kernel,
                        set_defaults, tensor_steps, foreach_steps_, grouped)
from ._kernels import F, operands, bump_versions
from .._tensor import Tensor
from .._backend import xp_of
from ..autograd import grad_mode

__all__ = ["Rprop", "rprop"]


class Rprop(Optimizer):
    """Rprop(params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False,
    foreach=None, maximize=False, differentiable=False)."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        set_defaults(self, state, foreach=None, maximize=False, differentiable=False,
                     capturable=False)
        for group in self.param_groups:
            tensor_steps(self, group)

    def _init_group(self, group, params, grads, prevs, step_sizes, state_steps):
        from .._tensor import _make
        has_complex = False
        for p in group["params"]:
            if p.grad is None:
                continue
            has_complex |= p.is_complex()
            params.append(p)
            grad = p.grad
            if grad.is_sparse:
                raise RuntimeError("Rprop does not support sparse gradients")
            grads.append(grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _step_tensor(0.0, group["capturable"], p.device)
                state["prev"] = _zeros_like(p)
                lr = _to_scalar(group["lr"])
                lr = lr.item() if isinstance(lr, Tensor) else lr
                fill = complex(lr, lr) if p.dtype.is_complex else lr
                state["step_size"] = _make(xp_of(grad._data).full_like(grad._data, fill))
            prevs.append(state["prev"])
            step_sizes.append(state["step_size"])
            state_steps.append(state["step"])
        return has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform one update; `closure` re-evaluates the model and returns the loss."""
        self._accelerator_graph_capture_health_check()
        loss = closure_loss(closure)
        for group in self.param_groups:
            params, grads, prevs, step_sizes, state_steps = [], [], [], [], []
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            has_complex = self._init_group(group, params, grads, prevs, step_sizes,
                                           state_steps)
            rprop(params, grads, prevs, step_sizes, state_steps, step_size_min=step_size_min,
                  step_size_max=step_size_max, etaminus=etaminus, etaplus=etaplus,
                  foreach=group["foreach"], maximize=group["maximize"],
                  differentiable=group["differentiable"], capturable=group["capturable"],
                  has_complex=has_complex)
        return loss


def rprop(params, grads, prevs, step_sizes, state_steps, foreach=None, capturable=False,
          maximize=False, differentiable=False, has_complex=False, *, step_size_min,
          step_size_max, etaminus, etaplus):
    """Functional Rprop over lists of parameters, gradients and state tensors."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    func = pick_kernel(params, differentiable, foreach, None, _single_tensor_rprop,
                       _multi_tensor_rprop)
    func(params, grads, prevs, step_sizes, state_steps, step_size_min=step_size_min,
         step_size_max=step_size_max, etaminus=etaminus, etaplus=etaplus,
         capturable=capturable, maximize=maximize, differentiable=differentiable,
         has_complex=has_complex)


def _single_tensor_rprop(params, grads, prevs, step_sizes, state_steps, *, step_size_min,
                         step_size_max, etaminus, etaplus, maximize, capturable,
                         differentiable, has_complex):
    tensors = grad_mode._state.enabled
    if capturable:
        _check_capturable(params, state_steps)
    for p, g, prev_t, ss_t, s_t in zip(params, grads, prevs, step_sizes, state_steps):
        param, grad, prev, step_size, step = operands(tensors, p, g, prev_t, ss_t, s_t)
        grad = grad if not maximize else -grad
        step += 1
        if F.is_complex(param):
            grad, prev, param, step_size = (F.view_as_real(x) for x in
                                            (grad, prev, param, step_size))
        sign = (grad.mul(prev.clone()) if differentiable else grad.mul(prev)).sign()
        if capturable:
            sign.copy_(F.where(sign.gt(0), etaplus, sign))
            sign.copy_(F.where(sign.lt(0), etaminus, sign))
            sign.copy_(F.where(sign.eq(0), 1, sign))
        else:
            sign[sign.gt(0)] = etaplus
            sign[sign.lt(0)] = etaminus
            sign[sign.eq(0)] = 1
        step_size.mul_(sign).clamp_(step_size_min, step_size_max)
        grad = grad.clone()
        if capturable:
            grad.copy_(F.where(sign.eq(etaminus), 0, grad))
        else:
            grad[sign.eq(etaminus)] = 0
        param.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)
        bump_versions(tensors, p, prev_t, ss_t, s_t)


def _multi_tensor_rprop(params, grads, prevs, step_sizes, state_steps, *, step_size_min,
                        step_size_max, etaminus, etaplus, maximize, capturable,
                        differentiable, has_complex):
    from .. import _foreach_mul, _foreach_neg_, _foreach_copy_, _foreach_sign_, \
        _foreach_mul_, _foreach_addcmul_, where
    if len(params) == 0:
        return
    if differentiable:
        raise AssertionError("_foreach ops don't support autograd")
    if capturable:
        _check_capturable(params, state_steps)
    for g_params, g_grads, g_prevs, g_step_sizes, g_steps in grouped(
            [params, grads, prevs, step_sizes, state_steps], has_complex, [1, 2, 3]):
        foreach_steps_(g_steps)
        signs = _foreach_mul(g_grads, g_prevs)
        if maximize:
            _foreach_neg_(signs)
        _foreach_copy_(g_prevs, g_grads)
        if maximize:
            _foreach_neg_(g_prevs)
        g_grads = g_prevs
        _foreach_sign_(signs)
        for sign in signs:
            sign[sign.gt(0)] = etaplus
            sign[sign.lt(0)] = etaminus
            sign[sign.eq(0)] = 1
        _foreach_mul_(g_step_sizes, signs)
        for step_size in g_step_sizes:
            step_size.clamp_(step_size_min, step_size_max)
        g_grads = list(g_grads)
        for i in range(len(g_grads)):
            g_grads[i].copy_(where(signs[i].eq(etaminus), 0, g_grads[i]))
        del signs
        grad_signs = [grad.sign() for grad in g_grads]
        _foreach_addcmul_(g_params, grad_signs, g_step_sizes, value=-1)
