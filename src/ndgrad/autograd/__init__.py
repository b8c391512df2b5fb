"""torch.autograd: backward(), grad(), grad mode, custom Functions."""
from .grad_mode import (no_grad, enable_grad, set_grad_enabled, is_grad_enabled, inference_mode,
                        is_inference_mode_enabled)
from .graph import Node, AccumulateGrad
from . import graph
import numpy as _np

from .engine import run_backward as _run_backward


from .._backend import ERR_VAR as _ERR_VAR, ERR_IGNORE as _ERR_IGNORE  # noqa: E402


def run_backward(*args):
    """The engine, with NumPy's floating-point warnings off: PyTorch computes inf and nan in a
    backward pass silently (0 * inf in a masked gradient, a reduction over nan, ...)."""
    if _ERR_VAR is None:
        with _np.errstate(all="ignore"):  # host: error state
            return _run_backward(*args)
    token = _ERR_VAR.set(_ERR_IGNORE)
    try:
        return _run_backward(*args)
    finally:
        _ERR_VAR.reset(token)


__all__ = ["backward", "grad", "Function", "no_grad", "enable_grad", "set_grad_enabled",
           "is_grad_enabled", "inference_mode", "Variable", "once_differentiable"]

ERR_NO_GRAD_FN = "element {} of tensors does not require grad and does not have a grad_fn"
ERR_IMPLICIT = "grad can be implicitly created only for scalar outputs"


_TENSOR = None  # (Tensor, _make, xp_of), imported on first use: _tensor imports this package


def _tensor_names():
    global _TENSOR
    from .._tensor import Tensor, _make
    from .._backend import xp_of
    _TENSOR = (Tensor, _make, xp_of)
    return _TENSOR


def _as_tuple(x):
    Tensor = (_TENSOR or _tensor_names())[0]
    if x is None:
        return ()
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _root_grads(outputs, grad_outputs, is_grads_batched=False):
    """Check `grad_outputs` against `outputs` (torch's _make_grads) and fill in implicit ones."""
    Tensor, _make, xp_of = _TENSOR or _tensor_names()
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            if out._requires_grad:
                if out._data.size != 1:
                    raise RuntimeError(ERR_IMPLICIT)
                if not out.dtype.is_floating_point:  # (complex outputs too, as PyTorch)
                    raise RuntimeError(
                        f"grad can be implicitly created only for real scalar outputs but got "
                        f"{out.dtype}")
                a = out._data  # (empty and fill: NumPy's ones and ones_like are Python)
                o = xp_of(a).empty(a.shape, a.dtype)
                o.fill(1)
                g = _make(o)
            grads.append(g)
            continue
        if not isinstance(g, Tensor):
            from .._creation import tensor
            g = tensor(g, dtype=out.dtype, device=out.device)
        if g._data.shape != out._data.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] has "
                f"a shape of {out.shape}.")
        if out.dtype.is_complex != g.dtype.is_complex:
            raise RuntimeError(
                f"For complex Tensors, both grad_output and output are required to have the same "
                f"dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {g.dtype} and "
                f"output[{i}] has a dtype of {out.dtype}.")
        if g.dtype is not out.dtype:
            g = g.to(out.dtype)
        grads.append(g)
    return grads


def _edge(t):
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    return (t._get_accumulator(), 0)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None,
             inputs=None):
    """Accumulate gradients of `tensors` (weighted by `grad_tensors`) into the leaves' .grad."""
    tensors = _as_tuple(tensors)
    if grad_tensors is None:
        grad_tensors = grad_variables
    grad_tensors = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(tensors)
    if len(grad_tensors) != len(tensors):
        raise RuntimeError(
            f"got {len(grad_tensors)} tensors and {len(tensors)} gradients")
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if len(inputs) == 0:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    grads = _root_grads(tensors, grad_tensors)   # shape errors first, as PyTorch
    for i, t in enumerate(tensors):
        if not t._requires_grad:
            raise RuntimeError(ERR_NO_GRAD_FN.format(i))
    if retain_graph is None:
        retain_graph = create_graph
    roots = [_edge(t) for t in tensors]
    site = graph.user_site()
    graph.last_backward[0] = graph.BackwardCall(  # for explain(): where, from what
        site, (roots[0][0].__class__,) if len(roots) == 1 else tuple(
            e[0].__class__ for e in roots), inputs is not None)
    if inputs is None:
        run_backward(roots, grads, retain_graph, create_graph, None, None, site)
        return
    # accumulate only into `inputs`: leaves through their AccumulateGrad, non-leaves by capture
    targets, capture = set(), {}
    for i, t in enumerate(inputs):
        if not t._requires_grad:
            raise RuntimeError(ERR_NO_GRAD_FN.format(i))
        e = _edge(t)
        targets.add(e[0])
        if t.grad_fn is not None:
            capture[e] = i
    captured = run_backward(roots, grads, retain_graph, create_graph, targets, capture, site)
    for i, g in captured.items():
        with graph.grad_lock:  # (concurrent backward() into one non-leaf's .grad)
            inputs[i]._accumulate_grad(g, create_graph)


def _backward_implicit(t):
    """`t.backward()` for a `t` with a grad_fn (no gradient, inputs, retain_graph or
    create_graph given): backward()'s work for that case alone, the same checks, results and
    errors (the general path says what is wrong with a non-scalar or a non-float `t`)."""
    a = t._data
    if a.size != 1 or t.dtype._category != 2 or a.__class__ is not _np.ndarray:
        return backward(t)  # (and device arrays: the engine passes on host arrays only)
    g = _np.empty(a.shape, a.dtype)  # host: the engine's array paths take host arrays
    g.fill(1)  # (the implicit root gradient: an array is as good as a Tensor to the engine)
    fn = t.grad_fn
    site = graph.user_site()
    graph.last_backward[0] = graph.BackwardCall(site, (fn.__class__,), False)
    run_backward([(fn, t._output_nr)], [g], False, False, None, None, site)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Return d(outputs)/d(inputs) (VJPs with grad_outputs) without touching any .grad."""
    Tensor, _make, xp_of = _TENSOR or _tensor_names()
    single = isinstance(inputs, Tensor)
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    if not allow_unused and materialize_grads:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
            "allow_unused=False.")
    grad_outputs = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(
            f"grad requires one grad_output per output: got {len(grad_outputs)} and {len(outputs)}")
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                             allow_unused, materialize_grads)
    grads = _root_grads(outputs, grad_outputs)   # shape errors first, as PyTorch
    for i, t in enumerate(outputs):
        if not t._requires_grad:
            raise RuntimeError(ERR_NO_GRAD_FN.format(i))
    for t in inputs:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if retain_graph is None:
        retain_graph = create_graph
    roots = [_edge(t) for t in outputs]
    capture = {}
    edges = [_edge(t) for t in inputs]
    for i, e in enumerate(edges):
        if e not in capture:  # (an input given twice gets the first one's gradient)
            capture[e] = i
    targets = {e[0] for e in capture}
    captured = run_backward(roots, grads, retain_graph, create_graph, targets, capture,
                            graph.user_site())
    result = []
    for i, t in enumerate(inputs):
        g = captured.get(capture[edges[i]])
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior.")
            if materialize_grads:
                g = _make(xp_of(t._data).zeros_like(t._data))
        elif not create_graph:
            fw = g.__dict__.get("_fw_grads")
            g = g.detach()
            if fw:  # forward-over-reverse: the gradient keeps its tangents, as in PyTorch
                g.__dict__["_fw_grads"] = fw
        if t.is_nested and g is not None and not g.is_nested:
            g = t._with_values(g)   # (a jagged nested tensor's gradient: its values')
        result.append(g)
    return tuple(result)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    """grad(..., is_grads_batched=True): the first dimension of each grad_output indexes a
    batch of vector-Jacobian products. PyTorch vmaps its engine; here each row is one pass of
    the engine over the retained graph (as autograd.functional.jacobian's default), and the
    rows' gradients are stacked."""
    Tensor = (_TENSOR or _tensor_names())[0]
    from .._tensor import Size
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if isinstance(g, Tensor) and (g.dim() == 0 or g.shape[1:] != out.shape):
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each "
                "grad_output as the batch dimension. The sizes of the remaining dimensions are "
                "expected to match the shape of corresponding output, but a mismatch was "
                f"detected: grad_output[{i}] has a shape of {Size(g.shape[1:])} and "
                f"output[{i}] has a shape of {out.shape}. If you only want some tensors in "
                "`grad_output` to be considered batched, consider using vmap.")
    sizes = [g.shape[0] for g in grad_outputs if isinstance(g, Tensor)]
    if any(size != sizes[0] for size in sizes):
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got "
            f"sizes {sizes} for the mapped dimension")
    n = sizes[0] if sizes else 1
    if retain_graph is None:
        retain_graph = create_graph
    rows = []
    for b in range(n):
        rows.append(grad(outputs, inputs, [g[b] if isinstance(g, Tensor) else g
                                           for g in grad_outputs],
                         retain_graph=retain_graph if b == n - 1 else True,
                         create_graph=create_graph, allow_unused=allow_unused,
                         materialize_grads=materialize_grads))
    from ..ops import stack
    return tuple(None if any(r[i] is None for r in rows) else stack([r[i] for r in rows])
                 for i in range(len(inputs)))


from .function import Function, once_differentiable, FunctionCtx  # noqa: E402
from .gradcheck import gradcheck, gradgradcheck, GradcheckError  # noqa: E402
from .explain import explain, set_error_sites  # noqa: E402
from . import forward_ad  # noqa: E402
from . import profiler, profiler_util  # noqa: E402,F401
from .profiler import record_function as _record_function  # noqa: E402,F401


def __getattr__(name):
    # autograd.functional needs the Tensor class, which imports this package: load it on use
    if name == "functional":
        import importlib
        return importlib.import_module(".functional", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


from .anomaly_mode import detect_anomaly, set_detect_anomaly, is_anomaly_enabled  # noqa: E402
from .anomaly_mode import is_anomaly_check_nan_enabled  # noqa: E402


def Variable(data, requires_grad=False, volatile=False):
    """Deprecated torch.autograd.Variable: returns a Tensor."""
    t = data.detach()
    if requires_grad:
        t.requires_grad_(True)
    return t


class _ExecutionEngine:
    """Variable._execution_engine: queue_callback(fn) runs fn when the current backward ends."""

    @staticmethod
    def queue_callback(callback):
        from .engine import queue_callback
        queue_callback(callback)


Variable._execution_engine = _ExecutionEngine()


def variable(*args, **kwargs):
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) instead")


from .grad_mode import set_multithreading_enabled, enforce_grad_layout_policy  # noqa: E402

__all__ = ["Variable", "Function", "backward", "grad_mode", "detect_anomaly", "enable_grad",
           "grad", "gradcheck", "gradgradcheck", "inference_mode", "no_grad",
           "set_detect_anomaly", "set_grad_enabled", "set_multithreading_enabled",
           "enforce_grad_layout_policy", "variable"]
