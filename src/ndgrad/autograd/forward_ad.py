"""Forward-mode AD (torch.autograd.forward_ad): dual tensors carry a tangent per dual level.

    import ndgrad.autograd.forward_ad as fwAD
    with fwAD.dual_level():
        x = fwAD.make_dual(primal, tangent)
        y = f(x)
        jvp = fwAD.unpack_dual(y).tangent

Note [Tangent storage]
A tangent lives in the tensor's `__dict__` as `_fw_grads = {level_id: tangent}`, out of Tensor's
slots; a plain tensor pays nothing. Level ids are never reused, so a stale tangent from a level
that has exited is never read; exit also drops the tangents it handed out.

Note [How tangents propagate]
`ops._registry.apply` checks one list (`_state.levels`) and, when a level is active, calls
`_propagate` on every op. An op's output tangent comes from, in order:
1. its JVP rule: `jvp="linear"` (the op is linear in its one differentiable input, so the
   tangent is the op applied to the input's tangent), or `jvp={"self": f, ...}` with one
   formula per input, `f(tangent, <names as in backward formulas>)`, summed over the inputs that
   have a tangent;
2. otherwise the double-VJP construction from the backward formulas, which every op has:
   a backward formula is linear in `grad`, so with `u` a zero "grad" that requires grad,
   J v = d/du <vjp(u), v>. This is exact (not finite differences), and so no op lacks forward
   mode.
Rules are ndgrad ops, so tangents are themselves differentiable (reverse-over-forward) and carry
outer levels' tangents (nested levels). While a level's tangents are computed that level is
suspended, so the computation does not recurse into itself.
"""
import itertools
import weakref
from collections import namedtuple

__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]


class _State:
    __slots__ = ("levels", "suspended", "tracked")

    def __init__(self):
        self.levels = []       # ids of the active levels, innermost last; read by apply
        self.suspended = ()    # level ids whose tangents are being computed right now
        self.tracked = {}      # level id -> {id: weakref} of tensors holding a tangent at it


_state = _State()
_ids = itertools.count()

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = "Namedtuple returned by unpack_dual: (primal, tangent)."


def enter_dual_level():
    """Enter a new dual level and return its index (0 for the outermost)."""
    lid = next(_ids)
    _state.levels.append(lid)
    _state.tracked[lid] = {}  # id -> weakref (tensors compare elementwise: no WeakSet)
    return len(_state.levels) - 1


def exit_dual_level(*, level=None):
    """Exit the innermost dual level; its tangents are dropped."""
    if not _state.levels:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. This "
            "is not supported.")
    if level is not None and level != len(_state.levels) - 1:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. This "
            "is not supported.")
    lid = _state.levels.pop()
    for ref in _state.tracked.pop(lid, {}).values():
        t = ref()
        fw = t.__dict__.get("_fw_grads") if t is not None else None
        if fw:
            fw.pop(lid, None)


class dual_level:
    """Context manager for one dual level: `with dual_level(): ...`."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()


def _level_id(level):
    levels = _state.levels
    if level is None:
        return levels[-1] if levels else None
    if not 0 <= level < len(levels):
        return None
    return levels[level]


def _get_tangent(t, lid):
    fw = t.__dict__.get("_fw_grads")
    return fw.get(lid) if fw else None


def _set_tangent(t, lid, tangent):
    fw = t.__dict__.get("_fw_grads")
    if fw is None:
        fw = t.__dict__["_fw_grads"] = {}
    fw[lid] = tangent
    s = _state.tracked.get(lid)
    if s is not None:
        s[id(t)] = weakref.ref(t)


def make_dual(tensor, tangent, *, level=None):
    """A view of `tensor` whose tangent (forward gradient) at `level` is `tangent`."""
    from .._tensor import Tensor
    lid = _level_id(level)
    if lid is None:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first.")
    if not isinstance(tangent, Tensor) or not isinstance(tensor, Tensor):
        raise TypeError("make_dual(): argument 'tangent' must be Tensor")
    if not (tensor.dtype.is_floating_point or tensor.dtype.is_complex):
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not (tangent.dtype.is_floating_point or tangent.dtype.is_complex):
        raise ValueError(
            f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if tangent._data.shape != tensor._data.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            "original Tensor, this is not supported. Tensor is of size "
            f"[{', '.join(map(str, tensor.shape))}] while the given forward gradient is of size "
            f"[{', '.join(map(str, tangent.shape))}].")
    if tangent.dtype is not tensor.dtype:
        tangent = tangent.to(tensor.dtype)
    dual = _view_of(tensor, lid)
    _set_tangent(dual, lid, tangent)
    return dual


def _view_of(tensor, lid):
    """A differentiable view of `tensor` without its tangent at level `lid`."""
    suspended = _state.suspended
    _state.suspended = suspended + (lid,)
    try:
        v = tensor.view_as(tensor)
    finally:
        _state.suspended = suspended
    fw = v.__dict__.get("_fw_grads")
    if fw:
        fw.pop(lid, None)
    return v


def unpack_dual(tensor, *, level=None):
    """(primal, tangent) of a dual tensor at `level`; tangent is None if it has none."""
    lid = _level_id(level)
    if lid is None:
        return UnpackedDualTensor(tensor, None)
    tangent = _get_tangent(tensor, lid)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_view_of(tensor, lid), tangent)


# ---------------------------------------------------------------- in-place ops

class _Tracked:
    """The out-of-place function of an in-place op, remembering its result."""
    __slots__ = ("fn", "result")

    def __init__(self, fn):
        self.fn = fn
        self.result = None

    def __call__(self, *args, **kwargs):
        self.result = self.fn(*args, **kwargs)
        return self.result


def _inplace(self, fn, args, kwargs):
    """`self.op_(...)` under forward AD: self takes the tangents of the out-of-place result
    (called by ops._inplace.inplace). A view's base keeps its own tangent."""
    from ..ops._inplace import inplace
    tracked = _Tracked(fn)
    inplace(self, tracked, *args, **kwargs)
    r = tracked.result
    new = r.__dict__.get("_fw_grads") if r is not None else None
    for lid in list(_state.levels):
        t = new.get(lid) if new else None
        if t is not None:
            _set_tangent(self, lid, t)
        else:
            old = self.__dict__.get("_fw_grads")
            if old:
                old.pop(lid, None)
    return self


# ---------------------------------------------------------------- custom Functions

ERR_NO_JVP = ("You must implement the jvp function for custom autograd.Function to use it with "
              "forward mode AD.")


def _function(cls, ctx, args, outputs):
    """Tangents of a custom Function's outputs (called by Function.apply): its `jvp(ctx,
    *input_tangents)` when it defines one. Without one, outputs its forward computed with
    ndgrad ops already carry their tangents; an output without one (a forward on raw arrays)
    raises PyTorch's error."""
    from .._tensor import Tensor
    from .._creation import zeros_like
    from .function import Function
    for lid in list(_state.levels):
        if lid in _state.suspended:
            continue
        tangents = [_get_tangent(a, lid) if isinstance(a, Tensor) else None for a in args]
        if all(t is None for t in tangents):
            continue
        diff = [o for o in outputs if isinstance(o, Tensor)
                and (o.dtype.is_floating_point or o.dtype.is_complex)]
        if cls.jvp is Function.jvp:
            if any(_get_tangent(o, lid) is None for o in diff):
                raise NotImplementedError(ERR_NO_JVP)
            continue
        tangents = [zeros_like(a) if t is None and isinstance(a, Tensor) else t
                    for a, t in zip(args, tangents)]
        _state.suspended = _state.suspended + (lid,)
        try:
            out_t = cls.jvp(ctx, *tangents)
        finally:
            _state.suspended = tuple(s for s in _state.suspended if s != lid)
        out_t = out_t if isinstance(out_t, tuple) else (out_t,)
        for o, t in zip(outputs, out_t):
            if isinstance(o, Tensor) and isinstance(t, Tensor):
                _set_tangent(o, lid, t)


# ---------------------------------------------------------------- propagation (called by apply)

def _propagate(op, args, kwargs, results):
    """Give `results` of `op` their tangents at every active, unsuspended level."""
    from .._tensor import Tensor
    if not op.differentiable:
        return
    for lid in list(_state.levels):
        if lid in _state.suspended:
            continue
        tangents = {}
        for name, pos in zip(op.inputs, op.input_pos):
            if pos >= 0 and pos < len(args):
                a = args[pos]
            else:
                a = kwargs.get(name) if kwargs else None
            if isinstance(a, Tensor):
                fw = a.__dict__.get("_fw_grads")
                if fw:
                    t = fw.get(lid)
                    if t is not None:
                        tangents[name] = t
        if not tangents:
            continue
        _state.suspended = _state.suspended + (lid,)
        try:
            outs = _output_tangents(op, args, kwargs, results, tangents)
        finally:
            _state.suspended = tuple(s for s in _state.suspended if s != lid)
        for i, (r, t) in enumerate(zip(results, outs)):
            if t is None or i in op.nondiff_outputs:
                continue
            if not (r.dtype.is_floating_point or r.dtype.is_complex):
                continue
            if t._data.shape != r._data.shape:
                t = t.expand(r.shape)
            if t.dtype is not r.dtype:
                t = t.to(r.dtype)
            _set_tangent(r, lid, t)


def _env(op, args, kwargs, results):
    env = dict(zip(op.params, args))
    if kwargs:
        env.update(kwargs)
    for n, v in op.defaults.items():
        env.setdefault(n, v)
    for n in list(env):
        v = env[n]
        env[n + "_shape"] = v._data.shape if hasattr(v, "_data") else ()
    env["result"] = results[0] if op.nout == 1 else tuple(results)
    if op.nout > 1:  # result1, ...: one output alone (_registry.py)
        env.update(("result%d" % i, r) for i, r in enumerate(results))
    return env


_PARAMS = {}  # rule function -> its parameter names


def _call(f, env, extra):
    params = _PARAMS.get(f)
    if params is None:
        from ..ops._registry import _fn_params
        params = _PARAMS[f] = _fn_params(f)
    return f(*[extra[p] if p in extra else env[p] for p in params])


# JVP rules for core ops that declare none themselves (op.jvp wins). "formula": the op is
# elementwise, so its Jacobian is diagonal (symmetric) and each backward formula applied to the
# input's tangent is that input's contribution to the output tangent.
_ELEMENTWISE = ("add", "sub", "rsub", "rsub_tensor", "mul", "div", "pow", "pow_tensor", "pow_scalar_base", "neg",
                "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "abs", "where", "clamp")
_LINEAR = ("sum", "sum_dim", "mean", "mean_dim", "sum_to", "expand", "reshape", "view",
           "transpose", "permute", "squeeze", "unsqueeze", "clone", "contiguous", "index",
           "index_view", "to_dtype")
_RULES = dict.fromkeys(_ELEMENTWISE, "formula")
_RULES.update(dict.fromkeys(_LINEAR, "linear"))


def _bilinear(name):
    def self_rule(tangent, other):
        from ..ops._registry import _OPS
        return _OPS[name].fn(tangent, other)

    def other_rule(tangent, self):
        from ..ops._registry import _OPS
        return _OPS[name].fn(self, tangent)
    return {"self": self_rule, "other": other_rule}


for _n in ("mm", "mv", "dot", "bmm", "matmul"):
    _RULES[_n] = _bilinear(_n)


def _output_tangents(op, args, kwargs, results, tangents):
    rule = op.jvp or _RULES.get(op.name)
    if rule == "formula" and op.nout == 1 and op.joint is None:
        env = _env(op, args, kwargs, results)
        total = None
        for name, t in tangents.items():
            k = op.inputs.index(name)
            f = op.formulas[k]
            if f is None:
                continue
            env["grad"] = t
            c = f(*[env[p] for p in op.formula_params[k]])
            total = c if total is None else total + c
        return (total,)
    if rule == "linear":
        name = next(iter(tangents))
        pos = op.input_pos[op.inputs.index(name)]
        a, kw = list(args), dict(kwargs or {})
        if 0 <= pos < len(a):
            a[pos] = tangents[name]
        else:
            kw[name] = tangents[name]
        out = op.fn(*a, **kw)
        return out if isinstance(out, tuple) else (out,)
    env = _env(op, args, kwargs, results)
    if isinstance(rule, dict) and all(n in rule for n in tangents):
        total = None
        for name, t in tangents.items():
            c = _call(rule[name], env, {"tangent": t})
            if c is not None:
                total = c if total is None else total + c
        return (total,)
    return _double_vjp(op, args, env, results, tangents)


def _double_vjp(op, args, env, results, tangents):
    """J v = d/du <vjp(u), v>: the backward formulas are linear in `grad` (Note [How tangents
    propagate])."""
    from .._tensor import Tensor, _make
    from . import grad_mode, grad as autograd_grad
    diff = [i for i, r in enumerate(results) if i not in op.nondiff_outputs
            and (r.dtype.is_floating_point or r.dtype.is_complex)]
    from .._backend import xp_of
    us = {i: _make(xp_of(results[i]._data).zeros_like(results[i]._data), True) for i in diff}
    create = grad_mode._state.enabled and (
        any(isinstance(a, Tensor) and a._requires_grad for a in args) or
        any(t._requires_grad for t in tangents.values()))
    prev = grad_mode._state.enabled
    grad_mode._state.enabled = True
    try:
        if op.nout == 1:
            env["grad"] = us[0]
        else:
            env["grad"] = tuple(us[i] if i in us else _make(r._data * 0)
                                for i, r in enumerate(results))
        total = None
        if op.joint is not None:
            # joint formulas skip inputs that do not require grad: hand them aliases that do
            for name in tangents:
                v = env[name]
                if not v._requires_grad:
                    a = _make(v._data, True)
                    a._vc = v._vc
                    if v.__dict__.get("_fw_grads"):
                        a.__dict__["_fw_grads"] = dict(v._fw_grads)
                    env[name] = a
            gs = op.joint(*[env[p] for p in op.joint_params])
            pairs = [(gs[op.inputs.index(n)], t) for n, t in tangents.items()]
        else:
            pairs = []
            for name, t in tangents.items():
                k = op.inputs.index(name)
                f = op.formulas[k]
                if f is not None:
                    pairs.append((f(*[env[p] for p in op.formula_params[k]]), t))
        for g, t in pairs:
            if g is None:
                continue
            c = (g * t).sum()
            total = c if total is None else total + c
        if total is None or not total._requires_grad:
            return [None] * len(results)
        grad_mode._state.enabled = create
        ulist = [us[i] for i in diff]
        outs = autograd_grad(total, ulist, create_graph=create, allow_unused=True)
    finally:
        grad_mode._state.enabled = prev
    res = [None] * len(results)
    for i, g in zip(diff, outs):
        res[i] = g
    return res
