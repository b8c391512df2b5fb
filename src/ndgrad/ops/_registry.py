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
- `quiet`: the forward runs with NumPy's floating-point warnings off (PyTorch computes
  log(0) = -inf, 0/0 = nan, exp(1000) = inf silently). None (the default) turns it on for the
  op families that compute (pointwise, reduction, linalg, activation, nn_ops, sampling,
  indexing): ops that only move data (views, reshapes) pay nothing.
- `jvp` (optional; forward-mode AD, see autograd/forward_ad.py): "linear" when the op is linear in
  its one differentiable input (views, reshapes, sums: the tangent is the op applied to the
  input's tangent), "formula" for elementwise ops (the backward formulas applied to the
  tangents), or a dict input name -> `f(tangent, <formula names>)` giving that input's
  contribution to the output tangent. Without it, forward mode derives the JVP from the
  backward formulas (double-VJP), so every op has forward mode either way.
"""
import dis
import inspect
import linecache as _linecache
import os as _os
from operator import itemgetter as _itemgetter
from weakref import WeakSet as _WeakSet

from .. import _dtype as D
from .._backend import numpy as _np, xp_of, _MODULES as _DEVICE_ARRAYS, \
    ERR_VAR as _ERR_VAR, ERR_IGNORE as _ERR_IGNORE, QUIET_RUN as _QRUN, entered as _entered
from .._tensor import Tensor, _make, _BY_NP, ERR_INFERENCE_SAVED as _ERR_INFERENCE_SAVED
from ..autograd import grad_mode
from ..autograd.graph import (Node, SavedTensor, RELEASED,
                              backward_twice_error, user_site, sites as _sites,
                              _inside, _getframe, NO_EDGE as _NO_EDGE, NO_RAW)
from ..autograd.anomaly_mode import _state as _anomaly
from ..autograd import graph as _graph
from ..autograd import forward_ad as _forward_ad
from . import _raw

__all__ = ["defop", "OpDef", "OpNode"]

_state = grad_mode._state
_raw_state = _raw.state
_fw_state = _forward_ad._state
_fw_propagate = _forward_ad._propagate
_OPS = {}  # name -> OpDef, every registered op
_VMAP = [None]  # the batched-vmap dispatcher while one runs (see func/_vmap.py), else None
_ndarray = _np.ndarray
_asarray = _np.asarray  # host: the CPU fast paths make NumPy scalars 0-d arrays
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
        # no graph of the backward needed: the same formulas on the arrays (ops/_raw.py)
        if not create_graph and _raw_state.enabled and not _fw_state.levels and \
                not _anomaly.enabled:
            if op.nout == 1:  # (the engine's array path, with Tensors out)
                out = self._arrays_apply(grads[0], False, True)
                if out is not NO_RAW:
                    return out
            else:
                raw = op.raw
                if raw is None:
                    raw = _compile_raw(op)
                if raw:
                    try:
                        # zeros for the differentiable outputs that got no gradient
                        gs = tuple(g._data if g is not None else
                                   (None if m is None else _zeros_meta(m)._data)
                                   for g, m in zip(grads, self._out_meta))
                        dt = None
                        for a in gs:
                            if a is not None:
                                if dt is None:
                                    dt = a.dtype
                                elif a.dtype != dt:
                                    raise _raw.RawFallback
                        if dt is None or dt.kind not in "fc":
                            raise _raw.RawFallback
                        env = {"grad": gs}
                        if saved:
                            _raw_saved(self, saved, env, dt)
                        if op.joint is not None:
                            return [_wrap_raw(r, None, None)
                                    for r in raw[0](*op.joint_getter(env))]
                        out = [None] * len(op.formulas)
                        for i, (child, _) in enumerate(((self._c0, 0),) + self._crest):
                            if child is not None:
                                f = raw[i]
                                out[i] = _wrap_raw(f(*op.formula_getters[i](env)), None, None) \
                                    if f is not None else self._zeros_for(i, grads)
                        return out
                    except Exception:  # RawFallback, or an error: the recorded run says it
                        pass
        return self._recorded(op, saved, grads)

    def _recorded(self, op, saved, grads):
        """The recorded execution: the formulas on Tensors, through ops."""
        # the formulas' arguments by name (plain loops and map: no comprehension frames)
        if op.nout == 1:
            env = {"grad": grads[0]}
        else:  # (zeros for the differentiable outputs that got no gradient; None for the others)
            env = {"grad": tuple(
                g if g is not None or m is None else _zeros_meta(m)
                for g, m in zip(grads, self._out_meta))}
        if saved.__class__ is SavedTensor:  # (one saved tensor: kept as _saved itself)
            env[saved.name] = saved.unpack(self)
        elif saved:
            for k, v in saved.items():
                env[k] = v.unpack(self) if type(v) in _SAVED else v
        # Between the formulas' ops and the user's backward()/grad() line every frame is
        # ndgrad's own (formulas call no user code; saved-tensor hooks ran above): the ops they
        # record take the engine's backward_site, which is what user_site's walk would find
        st = _state
        outer = st.in_formula
        st.in_formula = st.in_backward
        try:
            if op.joint is not None:
                return op.joint(*op.joint_getter(env))
            out = [None] * len(op.formulas)
            for i, (child, _) in enumerate(((self._c0, 0),) + self._crest):  # (graph.py,
                if child is not None:                          # Note [Edges in slots])
                    f = op.formulas[i]
                    if f is not None:
                        out[i] = f(*op.formula_getters[i](env))
                    else:  # a None formula: the input keeps its edge and gets zeros (PyTorch)
                        out[i] = self._zeros_for(i, grads)
            return out
        finally:
            st.in_formula = outer

    def _array_apply(self, g0, release, i=0):
        """The engine's array path (autograd/engine.py): the gradient of input `i` (the node's
        one edge: input 0, or input 1 when input 0 has none) for the one output's gradient `g0`
        (a Tensor, or an array the engine passes on unwrapped) from formula i's raw twin, as an
        array (`g0` itself when the formula returns it; a Tensor or None when the raw result is
        not a plain array or the recorded run was needed), or NO_RAW when this node must run
        apply() (no raw twin, several outputs, device arrays, ...).
        `release`: then free the saved tensors (release_saved) once the formula has run."""
        op = self._op
        saved = self._saved
        if saved is RELEASED:
            raise backward_twice_error(self)
        f = op.raw1 if not i else op.raw2
        if f is None:
            _direct_formulas(op)
            f = op.raw1 if not i else op.raw2
        if not f or not _raw_state.enabled or _fw_state.levels:
            return NO_RAW
        if g0.__class__ is _ndarray:
            a0 = g0
        elif g0 is None:
            return NO_RAW
        else:
            a0 = g0._data
        if a0.__class__ is not _ndarray:
            return NO_RAW
        dt = a0.dtype
        if dt.kind not in "fc":
            return NO_RAW
        try:
            # formula i's plain backward (it frees the saved tensors it read when `release`)
            r = (op.bw2 if i else op.bw1)(self, saved, a0, dt, release)
            if r is NO_RAW:  # (the general rules: _raw_saved)
                env = {"grad": a0}
                held = _raw_saved(self, saved, env, dt) if saved else False
                r = f(*op.formula_getters[i](env))
                if held and release:
                    self._saved = RELEASED
        except Exception:  # RawFallback, or an error: the recorded run says it as before
            r = self._recorded(op, saved, [_make(a0) if g0 is a0 else g0])[i]
            if release:
                self.release_saved()
            return r
        if r.__class__ is not _ndarray:
            return self._raw_result(r, a0, saved, i, release, g0)
        return g0 if r is a0 else r

    def _raw_result(self, r, a0, saved, i, release, g0=None):
        """Formula i's raw result `r` that is not a plain array (a NumPy scalar, None, a device
        array) as _array_apply returns it; where it is none of those, the recorded run's
        (`saved`: the node's saved values as the formula read them; `g0`: the gradient, a0
        unless a Tensor came)."""
        g0 = a0 if g0 is None else g0
        try:
            return _wrap_raw(r, a0, g0)
        except Exception:
            r = self._recorded(self._op, saved, [_make(a0) if g0 is a0 else g0])[i]
            if release:
                self.release_saved()
            return r

    def _arrays_apply(self, g0, release, tensors=False):
        """The engine's array path for a node with several edges: the gradient of each input
        (a list, input order) for the one output's gradient `g0` (a Tensor, or an array the
        engine passes on unwrapped), from the formulas' raw twins: arrays (`g0` itself where a
        formula returns it), Tensors or None; or NO_RAW when this node must run apply().
        tensors: Tensors only (apply's raw execution; device arrays welcome)."""
        op = self._op
        saved = self._saved
        if saved is RELEASED:
            raise backward_twice_error(self)
        raw = op.raw
        if raw is None or op.raw1 is None:
            _direct_formulas(op)
            raw = op.raw
        if not raw or op.nout != 1 or not _raw_state.enabled or _fw_state.levels or g0 is None:
            return NO_RAW
        a0 = g0 if g0.__class__ is _ndarray else g0._data
        if a0.__class__ is not _ndarray and not (tensors and type(a0) in _DEVICE_ARRAYS):
            return NO_RAW
        dt = a0.dtype
        if dt.kind not in "fc":
            return NO_RAW
        try:
            crest = self._crest
            if len(crest) == 1 and op.bw1 and op.bw2:
                # two inputs: each formula's plain backward, as in _array_apply (mm, a
                # broadcasting add, a mul of two tensors; bench W2). Each frees the saved
                # tensors it read when `release`; `saved` stays in hand for the other
                out = [None, None]
                held = False
                env = None  # (built once, when a formula needs it: each saved value unpacked once)
                for i, child in ((0, self._c0), (1, crest[0][0])):
                    if child is not None:
                        r = (op.bw2 if i else op.bw1)(self, saved, a0, dt, release) \
                            if env is None else NO_RAW
                        if r is NO_RAW:
                            if env is None:
                                env = {"grad": a0}
                                held = _raw_saved(self, saved, env, dt) if saved else False
                            r = raw[i](*op.formula_getters[i](env))
                        out[i] = r
            elif op.joint is not None:
                env = {"grad": a0}
                held = _raw_saved(self, saved, env, dt) if saved else False
                out = list(raw[0](*op.joint_getter(env)))
            else:
                env = {"grad": a0}
                held = _raw_saved(self, saved, env, dt) if saved else False
                out = [None] * len(op.formulas)
                getters = op.formula_getters
                for i, (child, _) in enumerate(((self._c0, 0),) + crest):
                    if child is not None:
                        f = raw[i]
                        out[i] = f(*getters[i](env)) if f is not None else \
                            self._zeros_for(i, (_make(a0),))
            for i, r in enumerate(out):
                if r.__class__ is _ndarray and not tensors:
                    if r is a0:
                        out[i] = g0
                elif r is not None:
                    out[i] = _wrap_raw(r, a0, g0)
        except Exception:  # RawFallback, or an error: the recorded run says it as before
            out = self._recorded(op, saved, [_make(a0) if g0 is a0 else g0])
            if release:
                self.release_saved()
            return out
        if held and release:
            self._saved = RELEASED
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
        if saved.__class__ is SavedTensor:  # (one saved tensor: kept as _saved itself)
            self._saved = RELEASED
        elif saved and saved is not RELEASED:
            for v in saved.values():
                if type(v) in _SAVED:
                    self._saved = RELEASED
                    return


def _direct_formulas(op):
    """op.raw1/op.raw2: the raw twins of formulas 0 and 1 for OpNode._array_apply (False where
    there is none, or the op has several outputs or a joint formula), and op.bw1/op.bw2 their
    plain backwards (`_plain_backward`)."""
    raw = op.raw if op.raw is not None else _compile_raw(op)
    ok = bool(raw) and op.nout == 1 and op.joint is None
    twins, bws = [], []
    for i in (0, 1):
        f = raw[i] if ok and i < len(raw) and raw[i] is not None else False
        twins.append(f)
        bws.append(_plain_backward(op, i, f) if f else False)
    op.bw1, op.bw2 = bws
    cls = op.node_cls  # (the engine calls them itself: autograd/engine.py)
    if cls is not None:
        cls._bw1, cls._bw2 = (staticmethod(b) if b else None for b in bws)
    op.raw2 = twins[1]
    op.raw1 = twins[0]  # (set last: the engine's test that the others are ready)


_MISSING = object()
_PASSED = frozenset((int, bool, type(None), tuple, str))  # (what a one-call formula takes as is)


def _plain_backward(op, i, twin):
    """Formula i of `op` as the engine's array path runs it most of the time, generated once:
    `bw(node, saved, a0, dt, release)` reads each saved value the formula takes straight from
    `saved` (the node's SavedTensor, or its dict) by the rules of _raw_saved, runs the formula
    on them (no env dict, no getter), frees the saved tensors when `release` and it read one,
    and returns the result; or NO_RAW (nothing freed) where _raw_saved's general path must
    decide (a changed or hooked saved tensor, a dtype that would not promote, a saved tuple or
    Tensor). A formula made of op calls, array helpers and operators (_raw.formula_shape: relu's
    `threshold_backward(grad, result, 0)`, mm's `_mm(grad, _mH(other))`, mul's `grad * other`)
    is written out here as the raw twin would run it: each op's forward called with its array
    caller's checks inline (_raw._op_caller), operators on the arrays; one frame per formula
    instead of three to six (bench W2). Any other formula calls its raw twin."""
    params = op.formula_params[i]
    shape = _raw.formula_shape(op.formulas[i])
    consts = {"_twin": twin, "_ST": SavedTensor, "_MISSING": _MISSING, "_NO_RAW": NO_RAW,
              "_RELEASED": RELEASED, "_SavedTuple": _SavedTuple, "_Tensor": Tensor,
              "_scalar_array": _scalar_array, "_PASSED": _PASSED, "_ndarray": _ndarray,
              "_asarray": _asarray, "_np": _np, "_var": _ERR_VAR, "_ignore": _ERR_IGNORE}
    local = {"grad": "a0"}
    body = []   # the formula's lines, after the fetches
    temps = []  # the names of its intermediate results
    quiet = []

    def emit(node):
        """The expression (a name or an operator expression) for a call-tree node."""
        kind = node[0]
        if kind == "p":
            return local[node[1]]
        if kind == "c":
            name = f"_c{len(consts)}"
            consts[name] = node[1]
            return name
        if kind == "op":
            args = [emit(a) for a in node[2]]
            return f"(-{args[0]})" if node[1] == "neg" else f"({args[0]} {node[1]} {args[1]})"
        args = [emit(a) for a in node[2]]
        t = f"t{len(temps)}"
        temps.append(t)
        fn = f"_f{len(consts)}"
        if kind == "helper":
            consts[fn] = node[1]
            body.append(f"    {t} = {fn}({', '.join(args)})")
            return t
        called = node[1]
        consts[fn] = called.fwd_plain
        if called.quiet:
            quiet.append(True)
        for a, e in zip(node[2], args):   # the op caller's checks: host arrays (of dt where
            if a[0] == "c":               # the op promotes); numbers and the like as they are
                continue
            if a[0] == "p" and e == "a0":
                continue
            if a[0] == "p":
                test = f"{e}.__class__ is _ndarray and {e}.dtype is not dt" \
                    if called.promote is not None else None
            else:
                test = f"{e}.__class__ is not _ndarray" + \
                    (f" or {e}.dtype is not dt" if called.promote is not None else "")
            if test:
                body.extend([f"    if {test}:", "        return _NO_RAW"])
        body.extend([f"    {t} = {fn}(_np, {', '.join(args)})",
                 f"    if {t}.__class__ is not _ndarray:",
                 f"        {t} = _asarray({t})"])
        return t

    src = ["def bw(node, saved, a0, dt, release):", "    held = False"]
    inline = shape is not None and shape[0] != "param"
    if inline:  # (the host forwards: apply's raw execution may bring device arrays)
        src += ["    if a0.__class__ is not _ndarray:", "        return _NO_RAW"]
    src += _plain_fetches(op, params, local, inline)
    if shape is not None and shape[0] == "param":
        src.append(f"    r = {local[shape[1]]}")
    elif inline and shape[0] == "if":  # (`if <test>: return <then>`, then `return <else>`)
        lines = []
        for k, part in enumerate(shape[1:]):
            r = emit(part)
            pad = "    " if k else ""  # (the branches' lines one level in)
            lines += [pad + line for line in body]
            lines += [f"    if {r}:"] if k == 0 else [f"        r = {r}"]
            if k == 1:
                lines.append("    else:")
            body.clear()
        if quiet:
            src += ["    if _var.get() is not _ignore:", "        return _NO_RAW"]
        src += lines
    elif inline:
        r = emit(shape)
        if quiet:  # (the engine's pass is quiet already: else the callers' way)
            src += ["    if _var.get() is not _ignore:", "        return _NO_RAW"]
        src += body + [f"    r = {r}"]
    else:
        src.append(f"    r = _twin({', '.join(local[p] for p in params)})")
    src += ["    if held and release:", "        node._saved = _RELEASED", "    return r"]
    return _generated(src, dict(consts), f"<plain backward {op.name} {i}>")["bw"]


def _plain_fetches(op, params, local, inline):
    """_plain_backward's fetches: each saved value its formula takes (local[p] = its name in
    the generated code) by _raw_saved's rules, or NO_RAW where they must decide."""
    src = []
    fetched = [p for p in params if p != "grad"]
    if fetched:
        src.append("    one = saved.__class__ is _ST")
    for k, p in enumerate(fetched):
        x = local[p] = f"x{k}"
        src += [f"    v = (saved if saved.name == {p!r} else _MISSING) if one else "
                f"saved.get({p!r}, _MISSING)",
                "    c = v.__class__",
                "    if c is _ST:",
                "        if v.vc[0] != v.version or v._hooks_packed is not None:",
                "            return _NO_RAW",
                "        t = v.tensor",
                f"        {x} = v.data if t is None else t._data",
                f"        d = {x}.dtype",
                "        if d is not dt and d != dt and d.kind in 'fc':",
                "            return _NO_RAW",
                "        held = True"]
        if inline:
            src += [f"        if {x}.__class__ is not _ndarray:", "            return _NO_RAW"]
        src += ["    elif c is float:",
                f"        {x} = {'_scalar_array(v, dt)' if op.name in _SCALAR_OPERAND else 'v'}"]
        if inline:
            src += ["    elif c in _PASSED:", f"        {x} = v", "    else:", "        return _NO_RAW"]
        else:
            src += ["    elif v is _MISSING or c is _SavedTuple or isinstance(v, _Tensor):",
                    "        return _NO_RAW",
                    "    else:", f"        {x} = v"]
    return src


def _raw_saved(node, saved, env, dt):
    """env[name] = each saved value as the raw execution takes it (arrays for tensors), or
    RawFallback where the dtypes would not promote as PyTorch's (gradient dtype `dt`). True
    when a tensor is among them (release_saved would free them)."""
    held = False
    for k, v in saved.items():
        tv = v.__class__
        if tv is SavedTensor:
            if v.vc[0] != v.version or v._hooks_packed is not None:
                # (raises the version error, runs the hooks)
                a = v.unpack(node)._data
            else:
                t = v.tensor
                a = v.data if t is None else t._data
            d = a.dtype
            if d is not dt and d != dt and d.kind in "fc":
                raise _raw.RawFallback
            env[k] = a
            held = True
        elif tv is _SavedTuple:
            a = tuple(s.unpack(node)._data for s in v)
            for x in a:
                if x.dtype != dt and x.dtype.kind in "fc":
                    raise _raw.RawFallback
            env[k] = a
            held = True
        elif isinstance(v, Tensor):
            raise _raw.RawFallback
        elif tv is float and node._op.name in _SCALAR_OPERAND:
            env[k] = _scalar_array(v, dt)  # (see apply)
        else:
            env[k] = v
    return held


def _wrap_raw(r, a0, g0):
    """A raw formula's array result as the engine's Tensor (the incoming one if unchanged)."""
    if type(r) is _ndarray:
        return g0 if r is a0 else _make(r)
    if r is None:
        return None
    if isinstance(r, _np.generic):
        return _make(_asarray(r))
    if type(r) in _DEVICE_ARRAYS:
        return g0 if r is a0 else _make(r)
    raise _raw.RawFallback


def _compile_raw(op):
    """op.raw: the raw twin of each formula (None for a None formula), or False when any
    formula has no raw twin (then the op keeps the recorded execution)."""
    if op.joint is not None:
        f = _raw.raw_formula(op.joint)
        op.raw = (f,) if f is not None else False
        return op.raw
    raws = []
    for f in op.formulas:
        if f is None:
            raws.append(None)
            continue
        g = _raw.raw_formula(f)
        if g is None:
            op.raw = False
            return False
        raws.append(g)
    op.raw = tuple(raws) if any(r is not None for r in raws) else False
    return op.raw


def _zeros_meta(meta):
    shape, dtype, xp = meta
    return _make(xp.zeros(shape, dtype=dtype.np))


class OpDef:
    __slots__ = ("name", "forward", "params", "defaults", "inputs", "formulas", "formula_params",
                 "joint", "joint_params", "promote", "view", "nout", "nondiff_outputs",
                 "differentiable", "node_cls", "_saved_cache", "input_pos", "fn", "jvp",
                 "raw", "raw1", "bw1", "raw2", "bw2", "formula_getters", "joint_getter", "varkw",
                 "fwd_plain", "quiet", "simple", "ufunc1", "ufunc2", "recorders", "tensor_only",
                 "tensor_params", "call", "shape_args")


def _fn_params(f):
    return tuple(inspect.signature(f).parameters)


def _formula_params(f, _by_code={}):
    """_fn_params, once per code object: ops over n inputs (cat, stack) have n formulas that
    are closures of one function (issue 15: linear in n)."""
    code = getattr(f, "__code__", None)
    if code is None or hasattr(f, "__signature__") or getattr(f, "__defaults__", None) or \
            getattr(f, "__wrapped__", None) is not None:
        return _fn_params(f)
    p = _by_code.get(code)
    if p is None:
        p = _by_code[code] = _fn_params(f)
    return p


def _getter(names, _made={}):
    """env -> the tuple of env[name] for names (a C-level itemgetter: `f(*map(...))` costs
    several times more per formula call); one per distinct names tuple (cat of n: O(n))."""
    g = _made.get(names)
    if g is not None:
        return g
    if len(names) > 1:
        g = _itemgetter(*names)
    elif names:
        name = names[0]
        g = lambda env: (env[name],)  # noqa: E731
    else:
        g = lambda env: ()  # noqa: E731
    _made[names] = g
    return g


def _direct_ufunc(forward):
    """NumPy's ufunc `u` when `forward` is `lambda xp, a[, b]: xp.u(a[, b])` (its parameters in
    order, no defaults), else None. Read from the bytecode once, at registration."""
    code = getattr(forward, "__code__", None)
    if code is None or getattr(forward, "__defaults__", None) or code.co_flags & 0x0C or \
            code.co_kwonlyargcount or not 2 <= code.co_argcount <= 3:
        return None
    params = code.co_varnames[:code.co_argcount]
    ins = [(i.opname, i.argval) for i in dis.get_instructions(code)
           if i.opname not in ("RESUME", "CACHE", "PRECALL", "PUSH_NULL", "NOP")]
    n = len(params) - 1
    if len(ins) != n + 4 or ins[0] != ("LOAD_FAST", params[0]) or \
            ins[1][0] not in ("LOAD_METHOD", "LOAD_ATTR") or \
            ins[2:2 + n] != [("LOAD_FAST", p) for p in params[1:]] or \
            ins[2 + n] != ("CALL", n) or ins[3 + n][0] != "RETURN_VALUE":
        return None
    u = getattr(_np, ins[1][1], None)
    return u if isinstance(u, _np.ufunc) and u.nin == n and u.nout == 1 else None


def defop(name, forward, *, promote=None, view=False, outputs=1, nondiff_outputs=(),
          differentiable=True, backward=None, inputs=None, node_name=None, jvp=None,
          quiet=None, tensor_only=False, **formulas):
    """Register an op and return its public function `name(*args, **kwargs) -> Tensor`.
    tensor_only: its inputs take Tensors and nothing else (PyTorch has no Scalar overload:
    maximum(t, 2) is a TypeError; NumPy's ufunc would take the number)."""
    op = OpDef()
    op.name = name
    if quiet is None:
        quiet = getattr(forward, "__module__", None) in _QUIET_MODULES
    op.forward = _quiet_forward(forward) if quiet else forward
    # apply's fast path enters NumPy's quiet error state itself (one frame less per op)
    op.quiet = bool(quiet) and _ERR_VAR is not None
    op.fwd_plain = forward if op.quiet else op.forward
    # a forward that is exactly `xp.<ufunc>(self)` / `xp.<ufunc>(self, other)`: apply's fast
    # path (NumPy arrays) calls NumPy's ufunc itself, without the forward's frame
    uf = _direct_ufunc(forward)
    op.ufunc1 = uf if uf is not None and uf.nin == 1 else None
    op.ufunc2 = uf if uf is not None and uf.nin == 2 else None
    _set_params(op, forward, backward, inputs, formulas, tensor_only)
    op.formula_getters = tuple(_getter(p) for p in op.formula_params)
    op.joint_getter = _getter(op.joint_params) if op.joint is not None else None
    op.promote = promote
    op.view = view
    op.nout = outputs
    op.nondiff_outputs = frozenset(nondiff_outputs)
    op.differentiable = differentiable and bool(op.inputs)
    op._saved_cache = {}
    op.recorders = {}  # mask -> the node builder for simple ops (_recorder)
    op.jvp = jvp
    op.raw = None  # the formulas' raw twins, compiled at the first backward (ops/_raw.py)
    op.raw1 = None  # formula 0's twin for OpNode._array_apply (False: none), set with them
    op.bw1 = None  # formula 0's plain backward (_plain_backward), set with them
    op.raw2 = op.bw2 = None  # the same for formula 1 (a node whose one edge is input 1)
    # _recorder builds its nodes: one output, inputs `self` or `self, other` (positions 0, 1)
    op.simple = len(op.input_pos) if outputs == 1 and not nondiff_outputs and \
        op.input_pos in ((0,), (0, 1)) else 0
    _OPS[name] = op
    if node_name is None:
        node_name = "".join(w[:1].upper() + w[1:] for w in name.strip("_").split("_")) + "Backward0"
    op.node_cls = type(node_name, (OpNode,), {"__slots__": (), "_op": op, "_nout": outputs})
    return _op_functions(op, name, promote)


def _set_params(op, forward, backward, inputs, formulas, tensor_only):
    """defop's reading of the forward's signature (op.params, defaults, varkw) and of the
    derivative formulas: a joint `backward` for `inputs`, or one formula per input by name;
    the inputs' positions and the parameters that take Tensors only."""
    name = op.name
    sig = inspect.signature(forward)
    params = list(sig.parameters.values())[1:]  # drop xp
    op.params = tuple(p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    op.defaults = {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}
    op.varkw = any(p.kind is p.VAR_KEYWORD for p in params)
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
        op.formula_params = tuple(_formula_params(f) if f is not None else ()
                                  for f in op.formulas)
    _pos = {n: i for i, n in enumerate(op.params)}  # (issue 15: linear in the inputs)
    op.input_pos = tuple(_pos.get(n, -1) for n in op.inputs)
    # the positions of the parameters that take nothing but a Tensor: the inputs, or for an op
    # without gradients its parameters without defaults
    op.tensor_only = frozenset(_pos[n] for n in (
        op.inputs or [p for p in op.params if p not in op.defaults]) if n in _pos) \
        if tensor_only else frozenset()
    # ... and of those that take a Tensor or a number, never a sequence: the inputs, and the
    # operands of the scalar forms (add_scalar's other, clamp's min and max)
    op.tensor_params = frozenset(i for i, n in enumerate(op.params)
                                 if n in op.inputs or n in _OPERANDS)
    # the positions where apply's fast path takes a tuple of ints (view's shape, split's sizes)
    # as the general path would, as it is: the second and third, unless a Tensor parameter's
    op.shape_args = frozenset(i for i in (1, 2) if i < len(op.params) and
                              i not in op.tensor_params and i not in op.tensor_only)


def _op_functions(op, name, promote):
    """The op's public function `fn` (op.fn: vmap's batched run while one is active, else
    apply, with PyTorch's argument errors worked out after a failed call) and `call`, the same
    without the vmap slot (op.call, for amp's hook), as defop returns them."""
    _op_names = tuple(op.params) + tuple(k for k in op.defaults if k not in op.params)

    def fn(*args, **kwargs):
        if _VMAP[0] is not None:   # inside func.vmap's batched run (func/_vmap.py)
            return _VMAP[0](op, args, kwargs)
        try:
            return apply(op, args, kwargs)
        except Exception as e:  # PyTorch's argument errors, worked out only now (_argcheck)
            if promote is not None and isinstance(e, TypeError):
                moved = _cpu_scalars_moved(args, kwargs)   # a CPU scalar with device tensors
                if moved is not None:
                    return fn(*moved[0], **moved[1])
            renamed = _numpy_names_moved(_op_names, kwargs)   # (PyTorch's NumPy names)
            if renamed is not None:
                return fn(*args, **renamed)
            err = _bad_args(op, args, kwargs, e)
            if err is not None:
                raise err from None
            raise

    def call(*args, **kwargs):  # fn without the hook slot (for the hook's own use: amp.py)
        try:
            return apply(op, args, kwargs)
        except Exception as e:
            if promote is not None and isinstance(e, TypeError):
                moved = _cpu_scalars_moved(args, kwargs)
                if moved is not None:
                    return call(*moved[0], **moved[1])
            renamed = _numpy_names_moved(_op_names, kwargs)   # (PyTorch's NumPy names)
            if renamed is not None:
                return call(*args, **renamed)
            err = _bad_args(op, args, kwargs, e)
            if err is not None:
                raise err from None
            raise

    fn.__name__ = fn.__qualname__ = call.__name__ = call.__qualname__ = name
    fn._op = op
    op.fn = fn
    op.call = call
    return fn


# what a binary operator answers NotImplemented for, so that Python says what PyTorch's does
# (`t + [1, 2]` is a TypeError, `t == [1, 2]` False): no Tensor, no Number
_NOT_OPERANDS = (str, bytes, dict, set, type(None), list, tuple, type(...), slice)
_NOT_NUMBERS = (type(...), slice, object)   # (exact classes NumPy would take as object arrays)
_NO_KW = {}  # (never written: apply copies keywords before changing them)


_UNSET = object()


_OPERATOR_CODES = {}  # operator method code -> (Tensor method, its operands) or None (dunder's)


def dunder(fn, none=_UNSET, name=None):
    """`fn` (a defop function) as a binary operator method: an operand PyTorch refuses (None, a
    string) gives NotImplemented, so Python raises its own "unsupported operand type(s)";
    none: the result for a None operand (`t == None` is False); name: the Tensor method an
    operand's __torch_function__ gets (default: the op's)."""
    op = fn._op
    name = name or op.name

    def method(self, other):
        if _VMAP[0] is not None:  # (`name` is read from this frame by _tf_dispatch)
            return _VMAP[0](op, (self, other), {}) if name else None
        try:
            return apply(op, (self, other), _NO_KW)
        except Exception as e:
            if isinstance(other, _NOT_OPERANDS):
                return NotImplemented
            if isinstance(e, TypeError):
                moved = _cpu_scalars_moved((self, other), _NO_KW)
                if moved is not None:
                    return method(*moved[0])
            err = _bad_args(op, (self, other), {}, e)
            if err is not None:
                raise err from None
            raise

    _OPERATOR_CODES[method.__code__] = None   # (its name: the frame's `name`)
    if none is not _UNSET:
        def compare(self, other):
            if other is None:
                return none
            if _VMAP[0] is not None:
                return _VMAP[0](op, (self, other), {})
            try:
                return apply(op, (self, other), _NO_KW)
            except Exception:
                if isinstance(other, _NOT_OPERANDS) or other.__class__ is object:
                    # (then Python compares identities:
                    return NotImplemented   # `t == [1, 2]` is False, as PyTorch's)
                raise
        method = compare
    method.__name__ = method.__qualname__ = fn.__name__
    method._op = op
    return method


def _cpu_scalars_moved(args, kwargs):
    from ._argcheck import cpu_scalars_moved
    return cpu_scalars_moved(args, kwargs)


def _numpy_names_moved(params, kwargs):
    from ._argcheck import numpy_names_moved
    return numpy_names_moved(params, kwargs)


def _bad_args(op, args, kwargs, exc):
    """PyTorch's error for a failed call of `op`, or None (ndgrad.ops._argcheck)."""
    from ._argcheck import bad_args
    params = op.params
    tensors = set(op.inputs) | {params[0]} if params else set(op.inputs)
    return bad_args(op.name.strip("_"), params, args, kwargs, exc, op.defaults, tensors,
                    op.varkw)


# ---------------------------------------------------------------- NumPy warnings (issue 15)
# Set at registration (`quiet`): a quiet op's forward runs under NumPy's "ignore" error state,
# entered through NumPy's own context variable when it has one (numpy >= 2: a fraction of
# np.errstate's cost), else with np.errstate. No process-wide warning filter.

_PKG = __name__.split(".")[0]  # "ndgrad" (read, not spelt: a vendored copy stays quiet)
_QUIET_MODULES = frozenset([f"{_PKG}.ops.{m}" for m in (
    "pointwise", "reduction", "linalg", "activation", "nn_ops", "sampling", "indexing",
    "tensor_api", "complex", "special", "upsample", "adaptive_pool")] + [f"{_PKG}.{m}" for m in (
        "nn.functional", "nn._functional_extra", "fft")])


def _quiet_forward(forward):
    import functools
    var, ignore, run = _ERR_VAR, _ERR_IGNORE, _QRUN
    if var is not None:
        @functools.wraps(forward)
        def quiet(*args, **kwargs):
            if var.get() is ignore:  # (already quiet: a backward pass, a nested op)
                return forward(*args, **kwargs)
            try:
                return run(forward, *args, **kwargs)
            except RuntimeError as e:
                if not _entered(e):
                    raise
            token = var.set(ignore)  # (another thread is in the quiet context)
            try:
                return forward(*args, **kwargs)
            finally:
                var.reset(token)
    else:
        @functools.wraps(forward)
        def quiet(*args, **kwargs):
            with _np.errstate(all="ignore"):  # host: error state
                return forward(*args, **kwargs)
    return quiet


def _promote(op, args, arrays, kwargs):
    """Cast tensor arrays to the op's result dtype, as torch.result_type decides."""
    mode = op.promote
    if mode == "float":
        for i, a in enumerate(args):
            if isinstance(a, Tensor) and a.dtype._category < 2:
                arrays[i] = arrays[i].astype(_DEFAULT[0].np)
        return
    skip = args[0] if op.name == "where" else None  # (where's condition takes no part)
    tensors = [a for a in args if isinstance(a, Tensor) and a is not skip]
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
        if isinstance(a, Tensor) and a.dtype is not target and a is not skip:
            arrays[i] = arrays[i].astype(tnp)
    if kwargs:
        for k, v in kwargs.items():
            if isinstance(v, Tensor) and v.dtype is not target:
                kwargs[k] = kwargs[k].astype(tnp)
    return target


_SCALAR_CATEGORY = {bool: 0, int: 1, float: 2, complex: 3}  # as in _dtype (bool < int < ...)


# Note [apply's fast path]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# The common case first (one or two positional arguments, NumPy tensors of one dtype, a Python
# scalar of no higher category, maybe a third argument that is a plain number or None, no
# forward-mode levels; an op that does not promote takes tensors of any dtypes): only that work
# is done, in one frame (a helper's call per op would cost bench W1 about 1 % per call). Anything
# else (a Tensor subclass that takes over torch functions among it: the general path dispatches),
# and any failure, takes the general path `_apply`, with the same result.

def apply(op, args, kwargs):
    """Run `op` on `args`; record a graph node when grad mode is on and an input requires grad
    (Note [apply's fast path])."""
    n = len(args)
    if 0 < n < 4 and not kwargs and not _fw_state.levels and not _TF_MODES:
        a = args[0]
        if isinstance(a, Tensor) and (a.__class__ is Tensor or not a._tf):  # (else: dispatch)
            d = a._data
            dtype = a.dtype
            if type(d) is _ndarray and not dtype._special and dtype is not _F16:
                cat = dtype._category
                promote = op.promote
                if promote is None or promote == "binary" or cat >= 2:
                    if n == 1:
                        e = _ONE_ARG
                        requires = a._requires_grad  # (also the mask of inputs that do)
                    else:
                        b = args[1]
                        req3 = 0
                        if n == 3:  # (a number, or _fast_third's array or value, mask bit)
                            c = args[2]
                            if c.__class__ not in _NUMBERS or promote is not None:
                                c, req3 = _fast_third(op, c, dtype, cat)
                                if c is _ONE_ARG:
                                    return _apply(op, args, kwargs)
                        if isinstance(b, Tensor):
                            e = b._data
                            if b.dtype is not dtype and (promote is not None or b.dtype._special
                                                         or b.dtype is _F16) or \
                                    type(e) is not _ndarray or \
                                    (b.__class__ is not Tensor and b._tf):
                                return _apply(op, args, kwargs)
                            requires = a._requires_grad + 2 * b._requires_grad + req3  # (a mask)
                        else:
                            cb = b.__class__  # (tensor_only ops refuse it on the general path)
                            if not op.tensor_only and ((cb is float and cat >= 2) or (
                                    cb is int and cat >= 1) or cb is bool or b is None):
                                if cat >= 2 and cb is not bool and b is not None and \
                                        op.name in _SCALAR_OPERAND and dtype is not _F16:
                                    e = _SCALAR_ARRAYS.get((b, d.dtype))  # (cached, else made)
                                    if e is None:
                                        e = _scalar_array(b, d.dtype)
                                else:
                                    e = b
                                requires = a._requires_grad + req3
                            elif _fast_plain(op, b, 1):  # (a shape, an index key, a string)
                                e = b
                                requires = a._requires_grad + req3
                            else:
                                return _apply(op, args, kwargs)
                    fwd = op.fwd_plain
                    try:  # (a quiet op runs in NumPy's quiet context: no wrapper frame)
                        if e is _ONE_ARG:
                            uf = op.ufunc1
                            if op.quiet:
                                out = _QRUN(fwd, _np, d) if uf is None else _QRUN(uf, d)
                            else:
                                out = fwd(_np, d) if uf is None else uf(d)
                        elif n == 3:  # (never the ufunc: a third argument would be its out)
                            out = _QRUN(fwd, _np, d, e, c) if op.quiet else fwd(_np, d, e, c)
                        else:
                            uf = op.ufunc2
                            if op.quiet:
                                out = _QRUN(fwd, _np, d, e) if uf is None else _QRUN(uf, d, e)
                            else:
                                out = fwd(_np, d, e) if uf is None else uf(d, e)
                    except (ValueError, RuntimeError, OverflowError) as exc:
                        return _fast_failed(op, args, kwargs, exc, d, e)
                    if out is None:
                        return _apply(op, args, kwargs)
                    if op.nout == 1:
                        if type(out) is not _ndarray:
                            out = _asarray(out)
                        result = _new(Tensor)  # _make, inlined
                        result._data = out
                        result.dtype = _BY_NP.get(out.dtype) or D.from_numpy_dtype(out.dtype)
                        result._requires_grad, result.grad_fn, result._vc = False, None, [0]
                        st = _state
                        if st.inference:
                            result._inference = True
                        if op.view:
                            _mark_view(result, a, op, args, kwargs)
                        if requires and op.differentiable:
                            if st.enabled:
                                if result.dtype._category >= 2:
                                    if simple := op.simple:
                                        mask = requires & _SIMPLE_BITS[simple]
                                        rec = op.recorders.get(mask)
                                        if rec is None:
                                            rec = _recorder(op, mask)
                                        rec(args, result)
                                    else:
                                        _record(op, args, None, (result,))
                            elif not st.in_backward:  # (for autograd.explain)
                                _nograd_mark(result, st)
                        return result
                    return _finish(op, args, kwargs, out, _np, requires, 4)
    elif n > 3 and not kwargs and not _fw_state.levels and not _TF_MODES:
        return _apply_many(op, args, kwargs)
    return _apply(op, args, kwargs)


def _fast_third(op, c, dtype, cat):
    """apply's fast path, a third argument: (its array, 4 if it requires grad) for a Tensor of
    the first's dtype (any dtype where the op does not promote) on NumPy, not to a simple op
    (linear's bias); (c, 0) for a number of no higher category than the first Tensor's, None,
    or what _fast_plain takes (split's sizes); else (_ONE_ARG, 0): the general path."""
    cc = c.__class__
    if isinstance(c, Tensor) and (cc is Tensor or not c._tf) and not op.simple:
        if (c.dtype is not dtype and (op.promote is not None or c.dtype._special or
                                             c.dtype is _F16)) or \
                type(c._data) is not _ndarray:
            return _ONE_ARG, 0
        return c._data, 4 * c._requires_grad  # (a mask bit no recorder reads)
    if cc in _NUMBERS:
        if op.promote is not None and ((cc is float and cat < 2) or (cc is int and cat < 1)):
            return _ONE_ARG, 0
        return c, 0
    return (c, 0) if _fast_plain(op, c, 2) else (_ONE_ARG, 0)


def _fast_plain(op, v, pos):
    """Whether apply's fast path passes `v`, the argument at `pos` (1 or 2), as it is, where the
    general path would too: a tuple of ints, slices, None and Ellipsis (view's shape, split's
    sizes, a basic index key) or a string (gelu's approximate), not for a Tensor parameter."""
    c = v.__class__
    if (c is not tuple and c is not str) or pos not in op.shape_args:
        return False
    if c is tuple:
        for i in v:
            if i.__class__ not in _KEY_ITEMS:
                return False
    return True


def _nograd_mark(result, st):
    """apply's fast path: where `result` was made under no_grad from inputs that require grad,
    for autograd.explain (user_site(2) with its usual case, the op's caller, inlined)."""
    site = None
    if _sites.enabled:
        f = _getframe(3)  # (above fn, or out='s wrapper; then up while inside ndgrad:
        inside = _inside  # a module's forward, F.linear's checks)
        while f is not None:
            code = f.f_code
            flag = inside.get(code.co_filename)
            if flag is False:
                site = (code, f.f_lasti)
                break
            if flag is None:  # (a file not seen yet: user_site records it)
                site = user_site(3)
                break
            f = f.f_back
    result._nograd_at = (site, st.inference)


def _apply_many(op, args, kwargs):
    """apply's fast path for four or more positional arguments (layer norm, attention,
    embedding): Tensors on NumPy of one dtype (any dtypes for an op that does not promote) and
    none that takes over torch functions, Python numbers of no higher category, None, strings,
    and tuples of ints where a non-Tensor parameter takes them; anything else, and any failure,
    takes the general path `_apply`, with the same result."""
    arrays = list(args)
    promote = op.promote
    dtype = None
    requires = False
    scalar_cat = -1
    i = 0
    for a in args:
        c = a.__class__
        if c is Tensor or (isinstance(a, Tensor) and not a._tf):
            d = a._data
            if type(d) is not _ndarray or a.dtype._special or a.dtype is _F16:
                return _apply(op, args, kwargs)
            if dtype is None:
                dtype = a.dtype
            elif a.dtype is not dtype and promote is not None:
                return _apply(op, args, kwargs)
            arrays[i] = d
            if a._requires_grad:
                requires = True
        elif i in op.tensor_only:
            return _apply(op, args, kwargs)  # (refused there)
        elif c is float or c is int or c is bool:
            k = _SCALAR_CATEGORY[c]
            if k > scalar_cat:
                scalar_cat = k
        elif c is tuple:
            if i in op.tensor_params:
                return _apply(op, args, kwargs)
            for x in a:
                if x.__class__ is not int:
                    return _apply(op, args, kwargs)
        elif a is not None and c is not str:
            return _apply(op, args, kwargs)
        i += 1
    if dtype is None or (promote is not None and not (
            scalar_cat <= dtype._category and (promote == "binary" or dtype._category >= 2))):
        return _apply(op, args, kwargs)
    try:
        out = _QRUN(op.fwd_plain, _np, *arrays) if op.quiet else op.forward(_np, *arrays)
    except (ValueError, RuntimeError, OverflowError) as exc:
        if isinstance(exc, ValueError):
            _raise_broadcast_error(exc, arrays, {})
            raise
        if isinstance(exc, OverflowError) or (op.quiet and _entered(exc)):
            return _apply(op, args, kwargs)
        raise
    return _finish(op, args, kwargs, out, _np, requires, 5)


def _fast_failed(op, args, kwargs, exc, d, e):
    """apply's fast path, its forward raised `exc`: PyTorch's broadcast error for a ValueError
    of two operands; the general path where a quiet op's NumPy state was entered or a Python
    int is beyond the dtype (OverflowError: wrapped there); else `exc` itself."""
    if isinstance(exc, OverflowError):
        return _apply(op, args, kwargs)
    if isinstance(exc, ValueError):
        if e is not _ONE_ARG:
            _raise_broadcast_error(exc, (d, e), {})
        raise exc
    if not (op.quiet and _entered(exc)):
        raise exc
    return _apply(op, args, kwargs)  # (op.forward sets the state itself)

_SIMPLE_BITS = (0, 1, 3)  # op.simple -> the mask bits of its differentiable inputs
_KEY_ITEMS = frozenset((int, slice, type(None), type(...)))  # (no Tensor, no sequence among them)
_OPERANDS = frozenset(("self", "other", "min", "max"))
_NUMBERS = _raw.NUMBERS  # third arguments of apply's fast path (and of the raw op callers')
_ONE_ARG = object()  # apply's marker: the op was called with one argument


# Ops whose forward is one ufunc of (tensor, number): NumPy takes a 0-d array of the tensor's
# dtype faster than a Python number (which it converts to exactly that), bench W1/W3.
_SCALAR_OPERAND = frozenset({"add", "sub", "mul", "div", "rsub"})
_F16 = D.float16  # (its number stays a number: mul's and div's float32 opmath, pointwise.py)
_SCALAR_ARRAYS = {}  # (number, numpy dtype) -> read-only 0-d array


def _scalar_array(b, npdtype):
    """`b` as a 0-d array of `npdtype` (cached), or `b` itself where the cache cannot tell
    values apart (0.0 vs -0.0) or the cast could overflow."""
    if not (-1e4 <= b <= 1e4) or b == 0:
        return b
    key = (b, npdtype)
    a = _SCALAR_ARRAYS.get(key)
    if a is None:
        if len(_SCALAR_ARRAYS) > 1024:
            _SCALAR_ARRAYS.clear()
        a = _SCALAR_ARRAYS[key] = _np.array(b, npdtype)  # host: CPU fast path constant
        a.flags.writeable = False
    return a


def _finish(op, args, kwargs, out, xp, requires, depth):
    """apply's second half: wrap the forward's output(s), mark views, record the node (depth:
    the frames from _record up to the op's caller)."""
    record = requires and op.differentiable and _state.enabled
    if op.nout == 1:
        if type(out) is not _ndarray and type(out) not in _DEVICE_ARRAYS:
            out = xp.asarray(out)  # (a NumPy scalar)
        result = _make(out)
        if op.view:
            _mark_view(result, args[0], op, args, kwargs)
        if record and result.dtype._category >= 2:  # integer/bool outputs never require grad
            mask = 0  # a simple op's recorder (nll_loss_index, threshold_backward, ...)
            if op.simple and not kwargs:
                a = args[0]
                mask = 1 if isinstance(a, Tensor) and a._requires_grad else 0
                if op.simple == 2 and len(args) > 1:
                    b = args[1]
                    if isinstance(b, Tensor) and b._requires_grad:
                        mask |= 2
            if mask:
                _recorder(op, mask)(args, result, depth)
            else:
                _record(op, args, kwargs, (result,), depth)
        elif requires and not _state.enabled and op.differentiable and not _state.in_backward:
            result._nograd_at = (user_site(2), _state.inference)  # for autograd.explain
        if _fw_state.levels:
            _fw_propagate(op, args, kwargs, (result,))
        return result
    results = []  # (a loop, not a generator: one frame less per op)
    for o in out:
        results.append(_make(o if type(o) is _ndarray or type(o) in _DEVICE_ARRAYS
                             else xp.asarray(o)))
    results = tuple(results)
    if op.view:
        for r in results:
            _mark_view(r, args[0], op, args, kwargs)
    if record:
        _record(op, args, kwargs, results, depth)
    if _fw_state.levels:
        _fw_propagate(op, args, kwargs, results)
    return results


def _refused(op, pos, a, keyword=False):
    """The TypeError for `a` as op's parameter at `pos`, a Tensor parameter that PyTorch's
    parser refuses it for (op.tensor_only: all but Tensors; op.tensor_params: sequences, which
    NumPy would read as arrays). The caller's except clause words PyTorch's error (_bad_args)."""
    name = op.params[pos]
    where = "" if keyword else f" (position {pos + 1})"
    return TypeError(f"{op.name}(): argument '{'input' if name == 'self' else name}'{where} "
                     f"must be Tensor, not {type(a).__name__}")


# Note [__torch_function__] (see _tensor.py): the general path hands a call with an argument
# that overrides torch functions (a Tensor subclass, or any object with __torch_function__) or
# under a TorchFunctionMode to overrides.handle_torch_function, with the op's public function.
_TF_MODES = 0        # TorchFunctionModes entered (any thread; overrides.py keeps the count),
                     # plus one while a profiler is active (autograd/profiler.py)
_PROFILER = None     # the active profiler hub (Note [Profiler hooks], autograd/_prof_state.py)
_TF_TYPES = {}       # type -> whether it dispatches (cached)
_PUBLIC = {}         # op -> the public function __torch_function__ receives
_PLAIN_TYPES = frozenset((int, float, bool, complex, str, type(None), slice, type(Ellipsis),
                          _np.ndarray))


def _tf_type(c):
    r = _TF_TYPES.get(c)
    if r is None:
        from .. import overrides
        r = _TF_TYPES[c] = overrides._dispatches(c)
    return r


def _tf_relevant(args, kwargs):
    """The arguments (sequence items included) that override torch functions, or None."""
    found = None
    for group in (args, kwargs.values() if kwargs else ()):
        for a in group:
            c = a.__class__
            if c is Tensor or c in _PLAIN_TYPES:
                continue
            if c is list or c is tuple:
                for x in a:
                    if x.__class__ is not Tensor and x.__class__ not in _PLAIN_TYPES and \
                            _tf_type(x.__class__):
                        found = found or []
                        found.append(x)
                continue
            if _tf_type(c):
                found = found or []
                found.append(a)
    return found


def _public(op):
    """The function a __torch_function__ override gets for op: torch.<name>, else
    Tensor.<name>, else one that runs the op."""
    f = _PUBLIC.get(op)
    if f is None:
        import sys
        torch = sys.modules[Tensor.__module__.split(".")[0]]
        f = getattr(torch, op.name, None)
        if not callable(f):
            f = getattr(Tensor, op.name, None)
        if not callable(f):
            def f(*args, **kwargs):
                return apply(op, args, kwargs)
            f.__name__ = f.__qualname__ = op.name
        _PUBLIC[op] = f
    return f


def named_as_pytorch(ns, names, prefix=""):
    """Give the Python functions ns[name] PyTorch's names, `prefix + name` (torch.linalg.det is
    "linalg_det", torch.special.erf "special_erf", torch.arccos "arccos"): test ids, reprs and
    logs read them. An alias (arccos of acos, special.erf of erf) becomes a function object of
    its own, as PyTorch's aliases are."""
    import types
    for name in names:
        f, want = ns.get(name), prefix + name
        if type(f) is not types.FunctionType or f.__name__ == want:
            continue
        g = types.FunctionType(f.__code__, f.__globals__, want, f.__defaults__, f.__closure__)
        g.__kwdefaults__, g.__doc__, g.__module__ = f.__kwdefaults__, f.__doc__, f.__module__
        g.__dict__.update(f.__dict__)
        g.__qualname__ = want
        ns[name] = g


def _tf_dispatch(op, args, kwargs):
    from .. import overrides
    relevant = _tf_relevant(args, kwargs) or []
    if not overrides.has_torch_function(relevant):
        return NO_RAW
    public = _public(op)
    # called by an operator (`t + x`): PyTorch passes the Tensor method (Tensor.add)
    f = _getframe(1)
    for _ in range(4):
        f = f.f_back
        if f is None:
            break
        if f.f_code in _OPERATOR_CODES:
            known = _OPERATOR_CODES[f.f_code]
            name, n = known if known is not None else (f.f_locals.get("name"), 2)
            method = getattr(Tensor, name, None) if name else None
            if callable(method):
                public, args = method, args[:n]
            break
    return overrides._dispatch_builtin(public, relevant, args, kwargs or {})


def _apply(op, args, kwargs):
    """apply's general path: any arguments, dtype promotion, keywords, forward-mode levels."""
    if _TF_MODES or _tf_relevant(args, kwargs):
        if _PROFILER is not None:  # (Note [Profiler hooks]: the op in its range)
            r = _PROFILER.op(op, args, kwargs)
            if r is not NO_RAW:
                return r
        r = _tf_dispatch(op, args, kwargs)
        if r is not NO_RAW:
            return r
    if not args and kwargs:  # torch.add(input=x, other=y): the first argument by keyword
        args, kwargs = _first_by_keyword(op, kwargs)
    arrays = list(args)
    requires = False
    xp = dtype = None
    same = True      # every tensor argument has `dtype` (then no promotion is needed...)
    scalar_cat = -1  # (...unless a Python scalar argument is of a higher category)
    special = False  # a tensor of a dtype NumPy lacks (Note [Special dtypes])
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            arrays[i] = d = a._data
            if a.dtype._special or a.dtype is _F16:
                special = True
            if xp is None:
                xp = _np if type(d) is _ndarray else xp_of(d)
                dtype = a.dtype
            elif a.dtype is not dtype:
                same = False
            if a._requires_grad:
                requires = True
        else:
            if i in op.tensor_only or (a.__class__ is list or a.__class__ is tuple) and \
                    i in op.tensor_params:
                raise _refused(op, i, a)
            c = _SCALAR_CATEGORY.get(a.__class__, -1)
            if c < 0 and isinstance(a, _np.generic):  # NumPy scalars count as Python numbers
                arrays[i] = a = a.item()
                args = tuple(arrays[j] if j == i else x for j, x in enumerate(args))
                c = _SCALAR_CATEGORY.get(a.__class__, -1)
            elif c < 0 and a.__class__ in _NOT_NUMBERS and i in op.tensor_params:
                raise _refused(op, i, a)   # (`t == ...`: no object arrays; PyTorch refuses it)
            if c > scalar_cat:
                scalar_cat = c
    if kwargs:
        kw = dict(kwargs)
        for k, v in kw.items():
            if not isinstance(v, Tensor) and k in op.params:
                pos = op.params.index(k)
                if pos in op.tensor_only or (v.__class__ is list or v.__class__ is tuple) and \
                        pos in op.tensor_params:
                    raise _refused(op, pos, v, keyword=True)
            if isinstance(v, Tensor):
                kw[k] = v._data
                if v.dtype._special or v.dtype is _F16:
                    special = True
                same = False  # keyword tensors: let _promote decide
                if xp is None:
                    xp = xp_of(v._data)
                if v._requires_grad:
                    requires = True
    else:
        kw = kwargs
    if xp is None:  # no tensor at all: NumPy would take a None or a string
        err = _bad_args(op, args, kwargs, None)
        if err is not None:
            raise err
        xp = _np
    promote = op.promote
    if promote is not None and not (
            same and dtype is not None and scalar_cat <= dtype._category
            and (promote == "binary" or dtype._category >= 2)):
        target = _promote(op, args, arrays, kw)
        if target is not None and (target._special or target is _F16):
            special = True
    try:
        out = op.forward(xp, *arrays, **kw) if not special else \
            _special_forward(op, xp, args, arrays, kw)
    except ValueError as e:
        _raise_broadcast_error(e, arrays, kw)
        raise
    except OverflowError:
        wrapped = _wrapped_ints(arrays)
        if wrapped is None:
            raise
        out = op.forward(xp, *wrapped, **kw)

    return _finish(op, args, kwargs, out, xp, requires, 5)


def _wrapped_ints(arrays):
    """`arrays` with each Python int beyond the integer dtype of the tensors it meets converted
    to that dtype as PyTorch converts a scalar operand (int8 tensor + 300 is + 44: two's
    complement wrap), or None (no such int, or one beyond int64, as PyTorch's parser refuses)."""
    target = next((a.dtype for a in arrays if hasattr(a, "dtype") and
                   getattr(a, "ndim", None) is not None and a.dtype.kind in "iu"), None)
    if target is None:
        return None
    info = _np.iinfo(target)
    out, changed = list(arrays), False
    for i, a in enumerate(arrays):
        if a.__class__ is int and not info.min <= a <= info.max:
            if not -2 ** 63 <= a < 2 ** 64:   # (PyTorch's parser: no int64 holds it)
                raise OverflowError("int too big to convert")
            out[i] = _np.array(a & 0xFFFFFFFFFFFFFFFF, _np.uint64).astype(target)   # host: a scalar
            changed = True
    return out if changed else None


def _first_by_keyword(op, kwargs):
    """(args, kwargs) with the first parameter, given by keyword, as the first argument: PyTorch
    calls it `input` in its functions (`self` in its Number-first overloads, bitwise_and(self=2,
    other=t)), ndgrad's forwards `self` or `input`; views, recording and promotion read it at
    args[0]. Nothing moves when it is not there (the call's own error stands)."""
    if not op.params:
        return (), kwargs
    first = op.params[0]
    for k in (first, "input", "self"):
        if k in kwargs:
            kwargs = dict(kwargs)
            return (kwargs.pop(k),), kwargs
    return (), kwargs


# Note [Special dtypes]
# The dtypes beyond NumPy's own eleven (dtype._special, _dtype.py), and float16, take apply's
# general path, which runs their forwards here:
# - bfloat16 and float16 (and the few ops PyTorch computes on float8): as PyTorch's CPU kernels,
#   every op computes in float32 and rounds its result once (round to nearest even): the half
#   inputs are widened to float32, the forward runs, and its float32 outputs are rounded
#   back. So a sum accumulates in float32, a matmul is float32 BLAS rounded once, and a fused
#   op (softplus, sigmoid, silu) rounds once, as PyTorch's kernels do (NumPy's float16 loops
#   would round each step of a formula). Views and data movement (op.view, _BF16_NATIVE) run on
#   the half arrays themselves, so views stay views; the kernels PyTorch writes as half
#   arithmetic run on them too (_F16_NATIVE, _BF16_STEPS), and the scalar tails of a few
#   kernels are recomputed as its scalar loop does (_TAILS). An explicit dtype argument other
#   than the half dtype keeps its outputs (sum(x, dtype=torch.float32)).
# - uint16/32/64 and the float8 types: PyTorch 2.13 computes few ops on them (views, copies,
#   indexing, cat, mul, eq, ...); the ops it refuses (_REFUSED) raise its
#   NotImplementedError naming its kernel, the rest run on NumPy's / ml_dtypes' arrays.
_BF16_NATIVE = frozenset((
    "clone", "contiguous", "cat", "stack", "index_select", "gather", "take", "getitem",
    "index", "masked_select", "flip", "roll", "repeat", "tile", "tril", "triu", "to_device",
    "to_dtype", "zeros_like", "ones_like", "empty_like", "full_like", "where", "constant_pad_nd",
    "fill", "scatter", "index_put", "narrow_copy", "movedim_copy", "diag", "diag_embed",
    # (compute in float32 themselves, their weight tables in bfloat16 as PyTorch's: upsample.py)
    "upsample_linear1d", "upsample_bilinear2d", "upsample_trilinear3d", "upsample_bicubic2d",
    "_upsample_bilinear2d_aa", "_upsample_bicubic2d_aa"))


# ops whose float16 kernels in PyTorch round each step in float16 (measured against its CPU
# kernels: tests/test_kernel_rounding.py, tests/test_half_opmath.py): NumPy's float16 loops do
_F16_NATIVE = frozenset(("pow", "xlogy", "logit", "smooth_l1_loss", "mse_loss",
                         "binary_cross_entropy_with_logits"))
# (bfloat16's: ml_dtypes' loops round each step)
_BF16_STEPS = frozenset(("xlogy", "logit", "binary_cross_entropy_with_logits", "huber_loss",
                         "mse_loss"))


# ops whose Python float operands PyTorch casts to bfloat16 before its float32 compute (its
# TensorIterator casts the wrapped number to the common dtype; mul, div, lerp, clamp keep it
# in float32): measured bit for bit against PyTorch 2.13's CPU kernels
_BF16_SCALARS = frozenset(("add", "sub", "rsub", "pow", "fmod", "remainder", "add_scalar",
                           "sub_scalar", "pow_scalar", "fmod_scalar", "remainder_scalar",
                           "rsub_tensor"))


# (Note [Scalar tails of half kernels])
_TAILS = frozenset(("add", "sub", "rsub_tensor", "rsqrt", "pow"))


def _dtype_position(op):
    try:
        return op.params.index("dtype")
    except ValueError:
        return -1


def _special_forward(op, xp, args, arrays, kw):
    """op.forward on arrays among which a dtype NumPy lacks (Note [Special dtypes])."""
    dts = [a.dtype for a in arrays if isinstance(a, xp.ndarray)]
    dts += [v.dtype for v in kw.values() if isinstance(v, xp.ndarray)]
    low = None   # the bfloat16/float8 dtype the op computes in float32 for
    for dt in dts:
        d = _BY_NP.get(dt)
        if d is not None and (d._special or d is _F16):
            if d._special >= 2:
                _check_supported(op, d, args)
            if d._special <= 2:
                low = dt
    if low is None or op.view or op.name in _BF16_NATIVE or \
            op.name in (_F16_NATIVE if low.type is _np.float16 else _BF16_STEPS) or any(
            dt.kind == "f" and not _BY_NP[dt]._special and _BY_NP[dt] is not _F16
            for dt in dts):
        return op.forward(xp, *arrays, **kw)
    f32 = _np.dtype(_np.float32)
    down = True
    pos = _dtype_position(op)
    explicit = kw.get("dtype") if "dtype" in kw else (
        args[pos] if 0 <= pos < len(args) else None)
    if explicit is not None:
        if explicit is _BY_NP[low]:
            if "dtype" in kw:
                kw = dict(kw, dtype=D.float32)
            else:
                arrays = list(arrays)
                arrays[pos] = D.float32
        else:
            down = False
    rounded = op.name in _BF16_SCALARS   # (a Python float operand: rounded to `low` first)
    arrays = [a.astype(f32) if isinstance(a, xp.ndarray) and a.dtype == low else
              (float(low.type(a)) if rounded and a.__class__ is float else a) for a in arrays]
    kw = {k: (v.astype(f32) if isinstance(v, xp.ndarray) and v.dtype == low else
              (float(low.type(v)) if rounded and v.__class__ is float else v))
          for k, v in kw.items()}
    if op.name == "pow" and not kw and len(arrays) == 2 and low.type is not _np.float16:
        from .pointwise import pow_in_steps    # (bfloat16's products, rounded one by one)
        out = pow_in_steps(xp, arrays[0], arrays[1], low)
        if out is not None:
            return out
    out = op.forward(xp, *arrays, **kw)
    if not down:
        return out
    if op.name in _TAILS:
        from . import _fma    # (Note [Scalar tails of half kernels])
        out = _fma.scalar_tails(op.name, out, arrays, kw, low)

    def round_(o):
        if isinstance(o, _np.generic):
            o = xp.asarray(o)
        return o.astype(low) if isinstance(o, xp.ndarray) and o.dtype == f32 else o
    return round_(out) if op.nout == 1 else tuple(round_(o) for o in out)


# The ops PyTorch 2.13 refuses on each family, with the CPU kernel its "not implemented for"
# error names (measured op by op: tests/test_dtypes_new.py)
_ORDERING = ("lt", "le", "gt", "ge", "maximum", "minimum", "fmax", "fmin", "clamp",
             "clamp_min", "clamp_max", "remainder", "fmod", "flip", "neg", "sign", "sgn")
_REFUSED_COMMON = dict(
    {n: n + "_cpu" for n in _ORDERING}, add="add_stub", sub="add_stub", rsub="add_stub",
    max="max_all", min="min_all", amax="amax_cpu", amin="amin_cpu", argmax="argmax_cpu",
    argmin="argmin_cpu", pow="pow", masked_fill="masked_fill", clamp="clamp_scalar_cpu",
    floor_divide="div_floor_cpu", div_floor="div_floor_cpu", cummax="cummax_cpu",
    cummin="cummin_cpu", topk="topk_cpu", kthvalue="kthvalue_cpu", median="median_out",
    lerp="lerp_kernel_scalar", logsumexp="logsumexp_cpu")
_REFUSED = {
    D._UINT: dict(_REFUSED_COMMON, abs="abs_cpu", bitwise_not="bitwise_not_cpu",
                  bitwise_left_shift="lshift_cpu", bitwise_right_shift="rshift_cpu",
                  mm="addmm_impl_cpu_", matmul="addmm_impl_cpu_", addmm="addmm_impl_cpu_",
                  bmm="bmm", dot="dot", mv="addmv_impl_cpu", arange="arange_cpu"),
    D._FLOAT8: dict(_REFUSED_COMMON, sum="sum_cpu", mean="sum_cpu", prod="prod_out_cpu",
                    cumsum="cumsum_out_cpu", cumprod="cumprod_out_cpu",
                    sort="sorting_kernel_method_name", argsort="sorting_kernel_method_name",
                    unique="unique", div="div_cpu", true_divide="div_cpu",
                    bitwise_and="bitwise_and_cpu", bitwise_or="bitwise_or_cpu",
                    bitwise_xor="bitwise_xor_cpu", var="std_var_cpu", std="std_var_cpu", norm="norm_cpu",
                    softmax="softmax_lastdim_kernel_impl",
                    log_softmax="log_softmax_lastdim_kernel_impl", relu="clamp_min_scalar_cpu",
                    **{n: n + "_vml_cpu" for n in (
                        "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh", "floor",
                        "ceil", "round", "trunc", "expm1", "log1p", "log2", "log10", "exp2",
                        "sigmoid", "reciprocal", "erf")})}


def _check_supported(op, d, args):
    refuse_special(op.name.strip("_"), d, args)


def refuse_special(name, d, args=()):
    """PyTorch's NotImplementedError where it computes no `name` on dtype `d` (for functions
    outside defop: unique, ...; Note [Special dtypes])."""
    if d._special < 2:
        return
    kernel = _REFUSED[d._special].get(name)
    if kernel is None and d._special == D._FLOAT8 and name == "mul" and any(
            a.__class__ in (int, float, bool) for a in args):  # (its Scalar overload)
        kernel = "mul_cpu_reduced_float"
    if kernel is not None:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{d._cname}\'')


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
    if base._inference:
        result._inference = True  # (Note [Inference tensors])
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
_BITS = bytes.maketrans(b"\x00\x01", b"01")


def _recorder(op, mask):
    """The node builder for a simple op (op.simple: one output, the differentiable inputs at
    positions 0 and maybe 1, positional arguments as apply's fast path has them) whose inputs
    in `mask` require grad: _record's work for exactly that case, as straight-line code made
    once per op and mask (no loops over inputs or the save plan, no tests of what the mask and
    the plan already say). Called as `rec(args, result)` from apply, at _record's depth (from
    _finish with its depth: `rec(args, result, depth)`). The code is written in phases: the
    node and its site (_REC_HEAD), its edges (_rec_edges), its interned metadata (_rec_meta),
    the result's link to it, and the saved values (_rec_saves)."""
    rec = op.recorders.get(mask)
    if rec is not None:
        return rec
    plan = _saved_plan(op, mask)
    consts = {"_cls": op.node_cls, "_op": op, "_plan": plan, "_metas": {}}
    src = _REC_HEAD + _rec_edges(mask) + _rec_meta(op, mask) + [
        "    r._requires_grad = True",
        "    r.grad_fn = node"] + _rec_saves(plan, consts)
    env = dict(globals())
    env.update(consts)
    rec = op.recorders[mask] = _generated(src, env, f"<recorder {op.name} {mask}>")["rec"]
    return rec


def _generated(src, env, label):
    """exec the generated lines `src` in `env` (returned): named as a file of this package
    (tracebacks and error sites see ndgrad's own frame) and kept in linecache, so that a
    traceback through it shows the generated lines."""
    text = "\n".join(src) + "\n"
    where = _os.path.join(_os.path.dirname(__file__), label)
    _linecache.cache[where] = (len(text), None, text.splitlines(True), where)
    exec(compile(text, where, "exec"), env)
    return env


# a recorder's first phase: the node (Node.__init__, inlined: every slot is set by the
# recorder) and the user's line it was made at: usually the frame above apply and the op's
# function (or one more up, through a wrapper such as out='s)
_REC_HEAD = [
    "def rec(args, r, depth=3):",
    "    node = _new(_cls)  # Node.__init__, inlined: every slot is set here",
    "    node._ext = None",
    "    if _anomaly.enabled:",
    "        node._site = None",
    "        _anomaly.record(node)",
    "    elif _sites.enabled:",
    "        f = _getframe(depth)",
    "        code = f.f_code",
    "        flag = _inside.get(code.co_filename)",
    "        if flag is False:",
    "            node._site = (code, f.f_lasti)",
    "        else:",
    "            if flag:",
    "                f = f.f_back",
    "                code = f.f_code if f is not None else None",
    "            if code is not None and _inside.get(code.co_filename) is False:",
    "                node._site = (code, f.f_lasti)",
    "            elif _state.in_formula:  # (see OpNode._recorded)",
    "                node._site = _state.backward_site",
    "            else:",
    "                node._site = user_site(depth)",
    "    else:",
    "        node._site = None"]


def _rec_edges(mask):
    """A recorder's edges: input 0's (node._c0, node._n0) and input 1's (node._crest), each its
    grad_fn, or for a leaf its live AccumulateGrad, else a new one."""
    if mask & 1:
        src = ["    a = args[0]",
               "    fn = a.grad_fn",
               "    if fn is None:  # (a leaf: its live AccumulateGrad, else a new one)",
               "        acc = a._accumulator",
               "        acc = acc() if acc is not None else None",
               "        node._c0 = acc if acc is not None else a._get_accumulator()",
               "        node._n0 = 0",
               "    else:",
               "        node._c0 = fn",
               "        node._n0 = a._output_nr"]
    else:
        src = ["    node._c0 = None", "    node._n0 = 0"]
    if mask & 2:
        src += ["    b = args[1]",
                "    fn = b.grad_fn",
                "    if fn is None:",
                "        acc = b._accumulator",
                "        acc = acc() if acc is not None else None",
                "        node._crest = ((acc if acc is not None else b._get_accumulator(), 0),)",
                "    else:",
                "        node._crest = ((fn, b._output_nr),)"]
    else:
        src.append("    node._crest = ()")
    return src


def _rec_meta(op, mask):
    """A recorder's node._meta, interned (_intern_meta): looked up by the one shape in _metas
    (the last dtype seen with that shape, and its meta), which costs less than hashing the
    whole meta."""
    one = "a" if mask == 1 else "b" if mask == 2 else None
    if one is not None:
        m0 = "(a._data.shape, a.dtype)"
        form = f"({m0},)" if op.simple == 1 else f"({m0}, None)" if mask == 1 else \
            "(None, (b._data.shape, b.dtype))"
        return [f"    shape = {one}._data.shape",
                "    c = _metas.get(shape)",
                f"    if c is not None and c[0] is {one}.dtype:",
                "        node._meta = c[1]",
                "    else:",
                f"        node._meta = _cache_meta(_metas, shape, {one}.dtype, {form})"]
    return ["    shape = a._data.shape",
            "    if shape == b._data.shape and a.dtype is b.dtype:",
            "        c = _metas.get(shape)",
            "        if c is not None and c[0] is a.dtype:",
            "            node._meta = c[1]",
            "        else:",
            "            node._meta = _cache_meta(_metas, shape, a.dtype, "
            "((shape, a.dtype), (shape, a.dtype)))",
            "    else:  # (by the two shapes: the last dtypes seen with them, and their meta)",
            "        bshape = b._data.shape",
            "        c = _metas.get((shape, bshape))",
            "        if c is not None and c[0] is a.dtype and c[1] is b.dtype:",
            "            node._meta = c[2]",
            "        else:",
            "            meta = ((shape, a.dtype), (bshape, b.dtype))",
            "            m = _META.get(meta)",
            "            m = m if m is not None else _intern_meta(meta)",
            "            if len(_metas) > 256:",
            "                _metas.clear()",
            "            _metas[shape, bshape] = (a.dtype, b.dtype, m)",
            "            node._meta = m"]


def _rec_saves(plan, consts):
    """A recorder's saved values (node._saved) by the op's save plan: arguments and the result
    as SavedTensors made inline, or _save's general way where the plan saves anything else or
    saved-tensor hooks or forward-mode levels are active."""
    if not plan:
        return ["    node._saved = None"]
    if not all(k == _ARG or (k == _RESULT and x is None) for _, k, _, x in plan):
        return ["    node._saved = None", "    _save(_op, node, _plan, args, None, (r,))"]
    src = ["    node._saved = None",
           "    if _graph._saved_hooks or _fw_state.levels:",
           "        _save(_op, node, _plan, args, None, (r,))",
           "        return"]
    names = []
    one = len(plan) == 1  # one saved tensor: it is node._saved itself (SavedTensor.items)
    for i, (n, kind, pos, extra) in enumerate(plan):
        v = f"v{i}"
        names.append(f"{n!r}: {v}")
        if kind == _RESULT:  # SavedTensor(r, True), inlined
            src += [f"    {v} = _new(SavedTensor)",
                    f"    {v}.tensor = {v}._hooks_packed = {v}.fw = None",
                    f"    {v}.data = r._data",
                    f"    {v}.requires_grad = True",
                    f"    vc = {v}.vc = r._vc",
                    f"    {v}.version = vc[0]",
                    f"    {v}.output_nr = 0"]
            if one:
                src += [f"    {v}.name = {n!r}", f"    node._saved = {v}"]
            else:
                src.append(f"    {v}.name = None")
            continue
        consts[f"_d{i}"] = extra
        src += [f"    t = args[{pos}] if len(args) > {pos} else _d{i}",
                "    if isinstance(t, Tensor):  # SavedTensor(t), inlined",
                "        if t._inference:",
                "            raise RuntimeError(_ERR_INFERENCE_SAVED)",
                f"        {v} = _new(SavedTensor)",
                f"        {v}.tensor = t",
                f"        {v}.data = {v}._hooks_packed = {v}.fw = None",
                f"        vc = {v}.vc = t._vc",
                f"        {v}.version = vc[0]",
                f"        {v}.output_nr = 0"]
        if one:
            src += [f"        {v}.name = {n!r}",
                    f"        node._saved = {v}",
                    "    else:",
                    f"        node._saved = {{{n!r}: t}}"]
        else:
            src += [f"        {v}.name = None",
                    "    else:",
                    f"        {v} = t"]
    if not one:
        src.append("    node._saved = {" + ", ".join(names) + "}")
    return src


def _cache_meta(metas, shape, dtype, meta):
    """A recorder's _metas[shape] = (dtype, the interned meta), returning the meta."""
    if len(metas) > 256:
        metas.clear()
    m = _META.get(meta)
    m = metas[shape] = (dtype, m if m is not None else _intern_meta(meta))
    return m[1]


def _intern_meta(meta):
    """node._meta, interned: equal (shape, dtype) tuples are shared (one GC object less)."""
    if len(_META) > 4096:
        _META.clear()
    _META[meta] = meta
    return meta


def _record(op, args, kwargs, results, depth=3):
    """Build the grad_fn node for `results` (the slow half of apply, run only under autograd)."""
    node = _new(op.node_cls)  # Node.__init__, inlined: every slot is set here
    node._saved = node._ext = node._site = None
    if _anomaly.enabled:
        _anomaly.record(node)  # (anomaly mode puts its whole stack in _site)
    elif _sites.enabled:
        # the user's line: usually the frame right above apply and the op's function
        f = _getframe(depth)
        if _inside.get(f.f_code.co_filename) is False:
            node._site = (f.f_code, f.f_lasti)
        elif _state.in_formula:  # (what user_site would find: see OpNode._recorded)
            node._site = _state.backward_site
        else:
            node._site = user_site(depth)
    # the edges (graph.py, Note [Edges in slots]): input 0 in _c0/_n0, the others in _crest
    nargs = len(args)
    meta = []
    mask = 0  # bit j: input j requires grad
    wide = bytearray(len(op.input_pos)) if len(op.input_pos) > 64 else None  # (cat of n: O(n))
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
            if wide is None:
                mask |= 1 << j
            else:
                wide[j] = 1
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
    if wide is not None:  # the same bits, built in one linear pass
        mask = int(bytes(wide).translate(_BITS)[::-1], 2)
    meta = tuple(meta)
    m = _META.get(meta)
    node._meta = m if m is not None else _intern_meta(meta)
    if op.nout == 1 and not op.nondiff_outputs:  # (apply checked the dtype)
        r = results[0]
        r._requires_grad = True
        r.grad_fn = node
    else:
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
        _save(op, node, plan, args, kwargs, results)
    if op.nout > 1:
        node._out_meta = tuple(
            None if i in op.nondiff_outputs or r.dtype._category < 2
            else (r._data.shape, r.dtype, xp_of(r._data)) for i, r in enumerate(results))


def _save(op, node, plan, args, kwargs, results):
    """node._saved: the values named by the save plan (see _saved_plan)."""
    nargs = len(args)
    saved = {}
    # SavedTensor.__init__ inlined for the common case (no saved-tensor hooks, no
    # forward-mode levels); otherwise the constructor does it
    plain = not _graph._saved_hooks and not _fw_state.levels
    for n, kind, pos, extra in plan:
        if kind == _ARG:
            v = args[pos] if pos < nargs else (kwargs.get(n, extra) if kwargs else extra)
            if isinstance(v, Tensor):
                if v._inference:
                    raise RuntimeError(_ERR_INFERENCE_SAVED)
                if plain:
                    st = _new(SavedTensor)
                    st.name = None
                    st.tensor = v
                    st.data = st._hooks_packed = st.fw = None
                    vc = st.vc = v._vc
                    st.version = vc[0]
                    st.output_nr = 0
                    saved[n] = st
                else:
                    saved[n] = SavedTensor(v)
            else:
                saved[n] = v
        elif kind == _RESULT:
            if extra is not None:  # resultK: output K alone
                saved[n] = SavedTensor(results[extra], True, extra)
            elif op.nout == 1:
                r = results[0]
                if plain:
                    st = _new(SavedTensor)
                    st.name = None
                    st.tensor = st._hooks_packed = st.fw = None
                    st.data = r._data
                    st.requires_grad = r._requires_grad
                    vc = st.vc = r._vc
                    st.version = vc[0]
                    st.output_nr = 0
                    saved[n] = st
                else:
                    saved[n] = SavedTensor(r, True)
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


def _saved_plan(op, mask):
    """What to save for the formulas of the inputs in `mask`, and where to find each name:
    (name, kind, position in args, default or base name), computed once per op and mask."""
    plan = op._saved_cache.get(mask)
    if plan is None:
        names = set()
        bits = bin(mask)[:1:-1]  # bits[j]: input j (a string: linear in the number of inputs)
        for j, params in enumerate(op.formula_params):
            if bits[j:j + 1] == "1":
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
