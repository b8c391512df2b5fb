"""autograd.explain(t): why `t.grad` is None, or why `t.requires_grad` is False, in plain words.

It reads only what ndgrad records anyway (it never guesses):
- each graph node's creation site (`Node._site`, see graph.py "error sites");
- on a tensor made from grad-requiring inputs under no_grad/inference_mode: where (`_nograd_at`);
- on a tensor made by detach() of a grad-requiring one: where (`_detached_at`);
- on a leaf: the last backward() that accumulated into it (`_reached_by`), and where its .grad
  was last reset to None (`_grad_reset`, e.g. by `optimizer.zero_grad(set_to_none=True)`);
- the latest backward() call: where, and from which grad_fn(s) (`graph.last_backward`).
"""
from . import graph

__all__ = ["explain", "Explanation", "set_error_sites", "error_sites_enabled"]


def set_error_sites(enabled):
    """Record where each graph node, in-place change and backward() happens (on by default), so
    autograd errors and explain() can name the user's lines. Off saves a little time per op."""
    graph.sites.enabled = bool(enabled)


def error_sites_enabled():
    return graph.sites.enabled


class Explanation:
    """The account returned by explain(): `str()`/`print()` it; `.reasons` lists the causes."""

    def __init__(self, subject, reasons):
        self.subject = subject
        self.reasons = reasons

    def __str__(self):
        return "\n".join([self.subject] + [f"  - {r}" for r in self.reasons])

    __repr__ = __str__


def _where(site):
    return graph.format_site(site)


def _describe(t):
    fn = t.grad_fn
    kind = "leaf tensor" if fn is None else f"non-leaf tensor (grad_fn={fn.name()})"
    return f"{kind} of shape {list(t.shape)} and dtype {t.dtype}"


def explain(t):
    """Why `t.grad` is None (or why t does not require grad), from the recorded state."""
    from .._tensor import Tensor
    if not isinstance(t, Tensor):
        raise TypeError(f"explain() expects a Tensor, got {type(t).__name__}")
    reasons = []
    if not t._requires_grad:
        subject = f"{_describe(t)}: requires_grad is False, so it never gets a .grad"
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            reasons.append(f"its dtype {t.dtype} is an integer or bool type: only floating point "
                           "and complex tensors can require gradients")
        if t._nograd_at is not None:
            site, inference = t._nograd_at
            mode = "torch.inference_mode()" if inference else "torch.no_grad()"
            reasons.append(f"it was computed under {mode} at {_where(site)} from inputs that "
                           "required grad: operations there are not recorded")
        if t._detached_at is not None:
            reasons.append(f"it was produced by detach() at {_where(t._detached_at)}: it shares "
                           "the data but is cut from the graph")
        if not reasons:
            reasons.append("it is a leaf that was created with requires_grad=False or computed "
                           "only from tensors that did not require grad; use requires_grad=True "
                           "or .requires_grad_() on the leaf you want gradients for")
        return Explanation(subject, reasons)

    last = graph.last_backward[0]
    if t.grad_fn is not None:
        created = _where(t.grad_fn._site)
        if not t._retains_grad:
            subject = f"{_describe(t)}, created at {created}: .grad is None"
            reasons.append("it is not a leaf and retain_grad() was not called on it: backward() "
                           "fills .grad only for leaves; call .retain_grad() before backward()")
            return Explanation(subject, reasons)
        if t._grad is not None:
            return Explanation(f"{_describe(t)}: .grad is set (retain_grad)", [])
        subject = f"{_describe(t)}, created at {created}, with retain_grad(): .grad is None"
        reasons.append(_no_backward_reason(last) if last is None else
                       f"no backward() through it has run since retain_grad(); the latest "
                       f"backward() was at {_where(last.site)} (from {_roots(last)})")
        return Explanation(subject, reasons)

    if t._grad is not None:
        by = t._reached_by
        src = "" if by is None else f" by the backward() at {_where(by.site)}"
        return Explanation(f"{_describe(t)}: .grad is set{src}", [])
    subject = f"{_describe(t)} that requires grad: .grad is None"
    if t._grad_reset is not None:
        reasons.append(f"its .grad was reset to None at {_where(t._grad_reset)} (`.grad = None`, "
                       "as optimizer.zero_grad(set_to_none=True) and Module.zero_grad() do)")
    if last is None:
        if not reasons:
            reasons.append(_no_backward_reason(last))
    elif t._reached_by is not last and last.restricted:
        reasons.append(f"the latest backward() at {_where(last.site)} was given `inputs=` "
                       "that did not include this tensor")
    elif t._reached_by is not last:
        reasons.append(f"it is not reachable from the tensor that was backpropagated by the "
                       f"latest backward() at {_where(last.site)} (from {_roots(last)}): no "
                       "recorded operation leads from that output back to this tensor")
    if not reasons:
        reasons.append("the latest backward() reached it, but a hook replaced its gradient with "
                       "None")
    return Explanation(subject, reasons)


def _roots(call):
    return ", ".join(call.roots) or "?"


def _no_backward_reason(last):
    return "no backward() has run yet"
