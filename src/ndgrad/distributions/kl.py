"""kl_divergence and register_kl: a registry of (type_p, type_q) -> function, dispatched to the
most specific registered pair of superclasses (a tie between a more specific p and a more
specific q warns, as PyTorch does)."""
import warnings

from . import _torch as _t

__all__ = ["register_kl", "kl_divergence"]

_KL_REGISTRY = {}
_KL_MEMOIZE = {}


def register_kl(type_p, type_q):
    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun
    return decorator


def _dispatch(type_p, type_q):
    matches = [(p, q) for p, q in _KL_REGISTRY
               if issubclass(type_p, p) and issubclass(type_q, q)]
    if not matches:
        return NotImplemented
    depth_p = lambda m: type_p.__mro__.index(m[0])   # noqa: E731
    depth_q = lambda m: type_q.__mro__.index(m[1])   # noqa: E731
    left = min(matches, key=lambda m: (depth_p(m), depth_q(m)))
    right = min(matches, key=lambda m: (depth_q(m), depth_p(m)))
    if _KL_REGISTRY[left] is not _KL_REGISTRY[right]:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({left[0].__name__}, {right[1].__name__})",
                      RuntimeWarning)
    return _KL_REGISTRY[left]


def kl_divergence(p, q):
    key = (type(p), type(q))
    if key not in _KL_MEMOIZE:
        _KL_MEMOIZE[key] = _dispatch(*key)
    fun = _KL_MEMOIZE[key]
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{type(p).__name__} and q type {type(q).__name__}")
    return fun(p, q)


def _infinite_like(t):
    return _t.full_like(t, float("inf"))


def _kl_expfamily_expfamily(p, q):
    """KL(p || q) for two members of one exponential family: the Bregman divergence of the log
    normalizer between the natural parameters."""
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot be computed using Bregman divergences")
    p_nat = [t.detach().requires_grad_() for t in p._natural_params]
    q_nat = q._natural_params
    lg = p._log_normalizer(*p_nat)
    grads = _t.autograd.grad(lg.sum(), p_nat, create_graph=True)
    result = q._log_normalizer(*q_nat) - lg
    n = len(q.event_shape)
    for pn, qn, g in zip(p_nat, q_nat, grads):
        term = (qn - pn) * g
        result = result - (term.reshape(tuple(term.shape[:term.dim() - n]) + (-1,)).sum(-1)
                           if n else term)
    return result
