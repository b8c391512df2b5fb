"""defop: one entry per op, its forward and its derivatives side by side.

The little language (the spirit of PyTorch's derivatives.yaml and HIPS autograd's defvjp):

    mul = defop("mul",
        forward=lambda xp, self, other: xp.multiply(self, other),
        self=lambda grad, other: grad * other,
        other=lambda grad, self: grad * self)

- `forward(xp, *args, **kwargs)` runs on arrays: every Tensor argument arrives as its array,
  every other argument as it was passed. `xp` is the array module (numpy or cupy) of the first
  tensor argument. It returns an array (or a tuple of arrays with `outputs=N`).
- Each keyword named after a forward parameter is that input's derivative formula. A formula's
  parameters are looked up by name: `grad` (the output's gradient; a tuple with `outputs=N`),
  `result` (the output; a tuple with `outputs=N`), `result1` (output 1 alone: the others may
  then be modified in place, as PyTorch allows when it saves only e.g. the indices), or any
  forward parameter (Tensors arrive as Tensors). Formulas are written with ndgrad's own
  differentiable ops, so with `create_graph=True` they record their own graph and every op gets
  higher-order gradients.
  `None` means "the gradient is zero". Only the names that a formula needs are saved, and only
  for the inputs that require grad.
- `backward=f` with `inputs=(...)` is one joint formula returning a tuple, for ops whose inputs
  share work (matmul).
- A formula returns its gradient in the broadcast output shape (or any shape that sums to the
  input's); the engine reduces it with `sum_to` and casts it to the input's dtype.
- `promote`: how tensor dtypes are reconciled before the forward: "binary" (torch.result_type
  over tensors and Python scalars), "float" (integer inputs become the default float dtype),
  "binary_float" (both), or None (the forward sees arrays as they are).
- `view=True`: the output shares storage (and version counter) with the first input.
- `differentiable=False`: outputs never require grad (comparisons, argmax, ...).
- `jvp` (optional; forward-mode AD, see autograd/forward_ad.py): "linear" when the op is linear in
  its one differentiable input (views, reshapes, sums: the tangent is the op applied to the
  input's tangent), "formula" for elementwise ops (the backward formulas applied to the
  tangents), or a dict input name -> `f(tangent, <formula names>)` giving that input's
  contribution to the output tangent. Without it, forward mode derives the JVP from the
  backward formulas (double-VJP), so every op has forward mode either way.
"""
import inspect
from weakref import WeakSet as _WeakSet

from .. import _dtype as D
from .._backend import numpy as _np, xp_of
from .._tensor import Tensor, _make, _BY_NP
from ..autograd import grad_mode
from ..autograd.graph import (Node, SavedTensor, RELEASED,
                              backward_twice_error, user_site, sites as _sites,
                              _inside, _getframe, NO_EDGE as _NO_EDGE)
from ..autograd.anomaly_mode import _state as _anomaly
from ..autograd import forward_ad as _forward_ad

__all__ = ["defop", "OpDef", "OpNode"]

_state = grad_mode._state
_fw_state = _forward_ad._state
_fw_propagate = _forward_ad._propagate
_OPS = {}  # name -> OpDef, every registered op
_VMAP = [None]  # the batched-vmap dispatcher while one runs (see _vmap.py), else None
_ndarray = _np.ndarray
_asarray = _np.asarray
_DEFAULT = D._default
_new = object.__new__  # (OpNodes are built without __init__: see _record)


class OpNode(Node):
    """A grad_fn made by defop. Its class (MulBackward0, ...) carries the op's definition."""
    __slots__ = ("_out_meta",)
    _op = None

    def apply(self, grads, create_graph):
        op = self._op
        saved = self._saved
        if saved is RELEASED:
            raise backward_twice_error(self)
        # the formulas' arguments by name (plain loops and map: no comprehension frames)
        if op.nout == 1:
            env = {"grad": grads[0]}
        else:  # (zeros for the differentiable outputs that got no gradient; None for the others)
            env = {"grad": tuple(
                g if g is not None or m is None else _zeros_meta(m)
                for g, m in zip(grads, self._out_meta))}
        if saved:
            for k, v in saved.items():
                env[k] = v.unpack(self) if type(v) in _SAVED else v
        if op.joint is not None:
            return op.joint(*map(env.__getitem__, op.joint_params))
        out = [None] * len(op.formulas)
        for i, (child, _) in enumerate(((self._c0, 0),) + self._crest):  # (graph.py, Note
            if child is not None:                                         # [Edges in slots])
                f = op.formulas[i]
                if f is not None:
                    out[i] = f(*map(env.__getitem__, op.formula_params[i]))
                else:  # a None formula: the input keeps its edge and gets zeros, as in PyTorch
                    out[i] = self._zeros_for(i, grads)
        return out

    def _zeros_for(self, i, grads):
        """Input i's zero gradient: an array of its shape and dtype (never requires grad)."""
        shape, dtype = self._meta[i]
        g = next((g for g in grads if g is not None), None)
        return _make((_np if g is None else xp_of(g._data)).zeros(shape, dtype=dtype.np))

    def release_saved(self):
        # Only saved *tensors* are freed (and make a second backward an error): like PyTorch,
        # a node that saved nothing but shapes and scalars can run again.
        saved = self._saved
        if saved and saved is not RELEASED:
            for v in saved.values():
                if type(v) in _SAVED:
                    self._saved = RELEASED
                    return


def _zeros_meta(meta):
    shape, dtype, xp = meta
    return _make(xp.zeros(shape, dtype=dtype.np))


class OpDef:
    __slots__ = ("name", "forward", "params", "defaults", "inputs", "formulas", "formula_params",
                 "joint", "joint_params", "promote", "view", "nout", "nondiff_outputs",
                 "differentiable", "node_cls", "_saved_cache", "input_pos", "fn", "jvp")


def _fn_params(f):
    return tuple(inspect.signature(f).parameters)


def defop(name, forward, *, promote=None, view=False, outputs=1, nondiff_outputs=(),
          differentiable=True, backward=None, inputs=None, node_name=None, jvp=None,
          **formulas):
    """Register an op and return its public function `name(*args, **kwargs) -> Tensor`."""
    op = OpDef()
    op.name = name
    op.forward = forward
    sig = inspect.signature(forward)
    params = list(sig.parameters.values())[1:]  # drop xp
    op.params = tuple(p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    op.defaults = {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}
    if backward is not None:
        op.inputs = tuple(inputs)
        op.joint = backward
        op.joint_params = _fn_params(backward)
        op.formulas = (backward,) * len(op.inputs)
        op.formula_params = (op.joint_params,) * len(op.inputs)
    else:
        names = [p.name for p in params]
        unknown = set(formulas) - set(names)
        if unknown:
            raise TypeError(f"defop({name!r}): formulas for unknown inputs {sorted(unknown)}")
        op.inputs = tuple(n for n in names if n in formulas)
        op.joint = op.joint_params = None
        op.formulas = tuple(formulas[n] for n in op.inputs)
        op.formula_params = tuple(_fn_params(f) if f is not None else () for f in op.formulas)
    op.input_pos = tuple(op.params.index(n) if n in op.params else -1 for n in op.inputs)
    op.promote = promote
    op.view = view
    op.nout = outputs
    op.nondiff_outputs = frozenset(nondiff_outputs)
    op.differentiable = differentiable and bool(op.inputs)
    op._saved_cache = {}
    op.jvp = jvp
    _OPS[name] = op
    if node_name is None:
        node_name = "".join(w[:1].upper() + w[1:] for w in name.strip("_").split("_")) + "Backward0"
    op.node_cls = type(node_name, (OpNode,), {"__slots__": (), "_op": op, "_nout": outputs})

    def fn(*args, **kwargs):
        if _VMAP[0] is not None:   # inside func.vmap's batched run (_vmap.py)
            return _VMAP[0](op, args, kwargs)
        return apply(op, args, kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn._op = op
    op.fn = fn
    return fn


def _promote(op, args, arrays, kwargs):
    """Cast tensor arrays to the op's result dtype, as torch.result_type decides."""
    mode = op.promote
    if mode == "float":
        for i, a in enumerate(args):
            if isinstance(a, Tensor) and a.dtype._category < 2:
                arrays[i] = arrays[i].astype(_DEFAULT[0].np)
        return
    tensors = [a for a in args if isinstance(a, Tensor)]
    scalars = [a for a in args if a.__class__ in (int, float, bool, complex)]
    if kwargs:
        tensors += [v for v in kwargs.values() if isinstance(v, Tensor)]
    # fast path: one dtype among tensors, scalars of no higher category
    d0 = tensors[0].dtype if tensors else None
    same = all(t.dtype is d0 for t in tensors)
    if same and d0 is not None:
        cat = d0._category
        if all(D._scalar_category(s) <= cat for s in scalars):
            target = d0
        else:
            target = D.result_type(*tensors, *scalars)
    else:
        target = D.result_type(*tensors, *scalars)
    if mode == "binary_float" and target._category < 2:
        target = _DEFAULT[0]
    tnp = target.np
    for i, a in enumerate(args):
        if isinstance(a, Tensor) and a.dtype is not target:
            arrays[i] = arrays[i].astype(tnp)
    if kwargs:
        for k, v in kwargs.items():
            if isinstance(v, Tensor) and v.dtype is not target:
                kwargs[k] = kwargs[k].astype(tnp)
    return target


_SCALAR_CATEGORY = {bool: 0, int: 1, float: 2, complex: 3}  # as in _dtype (bool < int < ...)


def apply(op, args, kwargs):
    """Run `op` on `args`; record a graph node when grad mode is on and an input requires grad."""
    arrays = list(args)
    requires = False
    xp = dtype = None
    same = True      # every tensor argument has `dtype` (then no promotion is needed...)
    scalar_cat = -1  # (...unless a Python scalar argument is of a higher category)
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            arrays[i] = d = a._data
            if xp is None:
                xp = _np if type(d) is _ndarray else xp_of(d)
                dtype = a.dtype
            elif a.dtype is not dtype:
                same = False
            if a._requires_grad:
                requires = True
        else:
            c = _SCALAR_CATEGORY.get(a.__class__, -1)
            if c < 0 and isinstance(a, _np.generic):  # NumPy scalars count as Python numbers
                arrays[i] = a = a.item()
                args = tuple(arrays[j] if j == i else x for j, x in enumerate(args))
                c = _SCALAR_CATEGORY.get(a.__class__, -1)
            if c > scalar_cat:
                scalar_cat = c
    if kwargs:
        kw = dict(kwargs)
        for k, v in kw.items():
            if isinstance(v, Tensor):
                kw[k] = v._data
                same = False  # keyword tensors: let _promote decide
                if xp is None:
                    xp = xp_of(v._data)
                if v._requires_grad:
                    requires = True
    else:
        kw = kwargs
    if xp is None:
        xp = _np
    promote = op.promote
    if promote is not None and not (
            same and dtype is not None and scalar_cat <= dtype._category
            and (promote == "binary" or dtype._category >= 2)):
        _promote(op, args, arrays, kw)
    try:
        out = op.forward(xp, *arrays, **kw)
    except ValueError as e:
        _raise_broadcast_error(e, arrays, kw)
        raise

    record = requires and op.differentiable and _state.enabled
    if op.nout == 1:
        if type(out) is not _ndarray:
            out = xp.asarray(out)
        result = _make(out)
        if op.view:
            _mark_view(result, args[0], op, args, kwargs)
        if record and result.dtype._category >= 2:  # integer/bool outputs never require grad
            _record(op, args, kwargs, (result,))
        elif requires and not _state.enabled and op.differentiable and not _state.in_backward:
            result._nograd_at = (user_site(2), _state.inference)  # for autograd.explain
        if _fw_state.levels:
            _fw_propagate(op, args, kwargs, (result,))
        return result
    results = tuple(_make(o if type(o) is _ndarray else xp.asarray(o)) for o in out)
    if op.view:
        for r in results:
            _mark_view(r, args[0], op, args, kwargs)
    if record:
        _record(op, args, kwargs, results)
    if _fw_state.levels:
        _fw_propagate(op, args, kwargs, results)
    return results


def _raise_broadcast_error(exc, arrays, kw):
    """NumPy's broadcasting ValueError, reworded as PyTorch's RuntimeError."""
    if "could not be broadcast" not in str(exc):
        return
    from .shape import broadcast_shapes
    shapes = [a.shape for a in arrays if hasattr(a, "shape")]
    shapes += [v.shape for v in kw.values() if hasattr(v, "shape")]
    broadcast_shapes(*shapes)  # raises "The size of tensor a (3) must match ..."


def _mark_view(result, base, op, args, kwargs):
    """The output of a view op shares its input's storage, version counter and root base, and
    remembers how to re-derive itself from that base (for in-place ops through views)."""
    result._vc = base._vc
    root = result._base = base if base._base is None else base._base
    result._view_fn = (base._view_fn or ()) + ((op.fn, args[1:], kwargs),)
    if _state.enabled:
        views = root._views
        if views is None:
            views = root._views = _WeakSet()
        views.add(result)
    else:
        result._view_nograd = True


_META = {}  # interned node._meta tuples: equal ones are shared, not one more GC object per node
_ARG, _SHAPE, _RESULT, _CONST = range(4)


def _record(op, args, kwargs, results):
    """Build the grad_fn node for `results` (the slow half of apply, run only under autograd)."""
    node = _new(op.node_cls)  # Node.__init__, inlined: every slot is set here
    node._saved = node._pre_hooks = node._hooks = node._tensor_hooks = node._retain = None
    node._metadata = node._site = None
    if _anomaly.enabled:
        _anomaly.record(node)  # (anomaly mode puts its whole stack in _site)
    elif _sites.enabled:
        # the user's line: usually the frame right above apply and the op's function
        f = _getframe(3)
        if _inside.get(f.f_code.co_filename) is False:
            node._site = (f.f_code, f.f_lasti)
        else:
            node._site = user_site(3)
    # the edges (graph.py, Note [Edges in slots]): input 0 in _c0/_n0, the others in _crest
    nargs = len(args)
    meta = []
    mask = 0  # bit j: input j requires grad
    rest = []
    for j, pos in enumerate(op.input_pos):
        t = args[pos] if -1 < pos < nargs else (kwargs.get(op.inputs[j]) if kwargs else None)
        if isinstance(t, Tensor) and t._requires_grad:
            fn = t.grad_fn
            if fn is None:
                fn, nr = t._get_accumulator(), 0
            else:
                nr = t._output_nr
            meta.append((t._data.shape, t.dtype))
            mask |= 1 << j
        else:
            fn, nr = None, 0
            meta.append(None)
        if j:
            rest.append((fn, nr) if fn is not None else _NO_EDGE)
        else:
            node._c0, node._n0 = fn, nr
    while rest and rest[-1] is _NO_EDGE:
        rest.pop()
    node._crest = tuple(rest) if rest else ()
    meta = tuple(meta)
    m = _META.get(meta)
    if m is None:
        if len(_META) > 4096:
            _META.clear()
        m = _META[meta] = meta
    node._meta = m
    for i, r in enumerate(results):
        if i in op.nondiff_outputs or r.dtype._category < 2:
            continue
        r._requires_grad = True
        r.grad_fn = node
        if i:  # (0 is the class default: no instance __dict__ for single outputs)
            r._output_nr = i
    plan = op._saved_cache.get(mask)
    if plan is None:
        plan = _saved_plan(op, mask)
    if plan:
        saved = {}
        for n, kind, pos, extra in plan:
            if kind == _ARG:
                v = args[pos] if pos < nargs else (kwargs.get(n, extra) if kwargs else extra)
                saved[n] = SavedTensor(v) if isinstance(v, Tensor) else v
            elif kind == _RESULT:
                if extra is not None:  # resultK: output K alone
                    saved[n] = SavedTensor(results[extra], True, extra)
                elif op.nout == 1:
                    saved[n] = SavedTensor(results[0], True)
                else:
                    saved[n] = _SavedTuple(SavedTensor(r, True, i) for i, r in enumerate(results))
            elif kind == _SHAPE:
                if pos < nargs or (kwargs and extra in kwargs):
                    v = args[pos] if pos < nargs else kwargs[extra]
                    saved[n] = v._data.shape if isinstance(v, Tensor) else ()
                else:
                    saved[n] = None
            else:
                saved[n] = extra
        node._saved = saved
    if op.nout > 1:
        node._out_meta = tuple(
            None if i in op.nondiff_outputs or r.dtype._category < 2
            else (r._data.shape, r.dtype, xp_of(r._data)) for i, r in enumerate(results))


def _saved_plan(op, mask):
    """What to save for the formulas of the inputs in `mask`, and where to find each name:
    (name, kind, position in args, default or base name), computed once per op and mask."""
    plan = op._saved_cache.get(mask)
    if plan is None:
        names = set()
        for j, params in enumerate(op.formula_params):
            if mask >> j & 1:
                names.update(params)
        names.discard("grad")
        fwd = list(inspect.signature(op.forward).parameters)[1:]
        far = 1 << 30  # keyword-only: never positional
        plan = []
        for n in sorted(names):
            if n == "result":
                plan.append((n, _RESULT, 0, None))
            elif n[:6] == "result" and n[6:].isdigit():
                plan.append((n, _RESULT, 0, int(n[6:])))
            elif n in fwd:
                plan.append((n, _ARG, op.params.index(n) if n in op.params else far,
                             op.defaults.get(n)))
            elif n.endswith("_shape") and n[:-6] in fwd:
                base = n[:-6]
                plan.append((n, _SHAPE, op.params.index(base) if base in op.params else far,
                             base))
            else:
                plan.append((n, _CONST, 0, op.defaults.get(n)))
        plan = op._saved_cache[mask] = tuple(plan)
    return plan


class _SavedTuple(tuple):
    """Several saved outputs, unpacked together."""

    def unpack(self, node):
        return tuple(s.unpack(node) for s in self)


_SAVED = (SavedTensor, _SavedTuple)
