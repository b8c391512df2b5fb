"""torch._foreach_*: PyTorch's multi-tensor ("foreach") operations, all 91 of PyTorch 2.13.

Each applies one op to every tensor of a list, with the matching element of the other lists (or
one number, a list of numbers, or a 0-d tensor), as PyTorch's CPU kernels do:
`_foreach_add_(xs, ys, alpha=a)` is `for x, y in zip(xs, ys): x.add_(y, alpha=a)`, and
`_foreach_add(xs, ys)` returns the tuple of the results. The in-place forms return their list.

When no gradient is recorded and the tensors of a position agree in device, real float dtype and
shape, the ops optimizers use (arithmetic, addcmul/addcdiv, lerp, sqrt, neg, ...) run on the
arrays, rounded as the Tensor ops and PyTorch's kernels round (ops/_fma.py), one version bump per
tensor; everything else goes through the Tensor op itself, with its autograd, type promotion and
errors.
"""
import builtins
import numbers

from .._tensor import Tensor, _make
from .._backend import xp_of
from ..autograd import grad_mode
from ._argcheck import combination_error
from . import _fma

__all__ = []   # filled below: every _foreach_* name

_TL, _N, _NL, _T = "tuple of Tensors", "Number", "tuple of Scalars", "Tensor"


def _is_number(x):
    return isinstance(x, numbers.Number) and not isinstance(x, Tensor)


def _matches(kind, x, loose=False):
    if kind == _TL:
        return isinstance(x, (list, tuple)) and all(isinstance(t, Tensor) for t in x)
    if kind == _N:   # (PyTorch's Scalar also takes a 0-d tensor that needs no gradient, where
        # no overload takes a Tensor there: the second pass)
        return _is_number(x) or (loose and isinstance(x, Tensor) and x.dim() == 0
                                 and not x.requires_grad)
    if kind == _NL:
        return isinstance(x, (list, tuple)) and all(_is_number(v) for v in x)
    if kind == _T:
        return isinstance(x, Tensor)
    return True   # any other type: bool, memory format, dtype


def _parse(name, sigs, args, kwargs):
    """The first of `sigs` (each: (key, [(kind, param, default or REQUIRED), ...], keyword-only
    names)) that takes the call; PyTorch's TypeError when none does."""
    for i, a in enumerate(args):
        if isinstance(a, (list, tuple)) and a and isinstance(a[0], Tensor):
            for j, t in enumerate(a):
                if not isinstance(t, Tensor):
                    raise TypeError(f"expected Tensor as element {j} in argument {i}, but got "
                                    f"{type(t).__name__}")
    for key, params, kwonly, loose in [s + (False,) for s in sigs] + [s + (True,) for s in sigs]:
        positional = [p for p in params if p[1] not in kwonly]
        if len(args) > len(positional):
            continue
        values, ok = {}, True
        for (kind, p, default), a in zip(positional, args):
            if not _matches(kind, a, loose):
                ok = False
                break
            values[p] = a
        if not ok:
            continue
        for k, v in kwargs.items():
            spec = next((s for s in params if s[1] == k), None)
            if spec is None or k in values or not _matches(spec[0], v, loose):
                ok = False
                break
            values[k] = v
        if not ok:
            continue
        for kind, p, default in params:
            if p not in values:
                if default is _REQUIRED:
                    ok = False
                    break
                values[p] = default
        if ok:
            return key, values
    raise combination_error(name, [_sig_text(params, kwonly) for _, params, kwonly in sigs],
                            args, kwargs)


_REQUIRED = object()


def _sig_text(params, kwonly):
    parts, star = [], False
    for kind, p, default in params:
        if p in kwonly and not star:
            parts.append("*")
            star = True
        text = f"{kind} {p}"
        if default is not _REQUIRED:
            text += f" = {default!r}" if not isinstance(default, (int, float)) else f" = {default}"
        parts.append(text)
    return "(" + ", ".join(parts) + ")"


def _need_grad(*lists):
    if not grad_mode._state.enabled:
        return False
    for ts in lists:
        if isinstance(ts, Tensor):
            if ts._requires_grad:
                return True
        elif isinstance(ts, (list, tuple)):
            for t in ts:
                if isinstance(t, Tensor) and t._requires_grad:
                    return True
    return False


def _check_lists(self, *others):
    if len(self) == 0:
        raise RuntimeError("Tensor list must have at least one tensor.")
    for o in others:
        if len(o) != len(self):
            raise RuntimeError(f"Tensor lists must have the same number of tensors, got "
                               f"{len(self)} and {len(o)}")


def _check_scalars(self, scalars):
    if len(scalars) != len(self):
        raise RuntimeError("Tensor list must have same number of elements as scalar list.")


def _check_scalar_tensor(t):
    if t.dim() != 0:
        raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {t.dim()} dimensions "
                           f"and {t.numel()} elements.")


def _packed_scalars(self, scalars):
    """A 1-d Tensor of scalars (addcmul/addcdiv's Tensor overload) as a list of numbers."""
    if scalars.dim() != 1:
        raise RuntimeError(f"Expected packed scalar Tensor to be of dimension 1. Got "
                           f"{scalars.dim()} instead.")
    if scalars.numel() != len(self):
        raise RuntimeError(f"Expected length of scalars to match input of length {len(self)} "
                           f"but got {scalars.numel()} instead.")
    return scalars.tolist()


def _fast(t, *others):
    """Whether position `t` (with its tensor operands) may run on the arrays: a real float
    tensor, its tensor operands of its dtype, shape and device, or 0-d real ones (numbers of its
    dtype then, as PyTorch casts a wrapped scalar to the dimensioned operand's dtype)."""
    d = t._data
    if d.dtype.kind != "f" or d.dtype.itemsize < 4:
        return False
    for o in others:
        if isinstance(o, Tensor):
            od = o._data
            if type(od) is not type(d):
                return False
            if od.ndim == 0 and d.ndim != 0:
                if od.dtype.kind not in "fiub":
                    return False
            elif od.dtype != d.dtype or od.shape != d.shape:
                return False
    return True


def _scalar_of(t, other):
    """A 0-d tensor operand as a NumPy scalar of t's dtype (PyTorch casts the wrapped scalar to
    the dimensioned operand's dtype)."""
    return t._data.dtype.type(other._data.item())


def _result(arr, like):
    if type(arr) is not type(like):     # (a NumPy ufunc gives a scalar for 0-d operands)
        arr = xp_of(like).asarray(arr)
    return _make(arr)


def _bump(t):
    t._bump_version()


def _run(name, self, per, inplace, fast_fn, slow_fn, tensors_for_grad):
    """Apply op `name` at every position: `per(i)` gives the operands after self's tensor;
    `fast_fn(x_array, *ops, out)` on arrays where allowed, `slow_fn(t, *ops)` (a Tensor op)
    elsewhere."""
    grad = _need_grad(self, *tensors_for_grad)
    results = []
    with _fma._quiet():
        for i, t in enumerate(self):
            ops = per(i)
            if not grad and fast_fn is not None and _fast(t, *ops):
                arrs = tuple(_scalar_of(t, o) if isinstance(o, Tensor) and o.dim() == 0
                             and t.dim() != 0 else (o._data if isinstance(o, Tensor) else o)
                             for o in ops)
                if inplace:
                    fast_fn(t._data, *arrs, t._data)
                    _bump(t)
                else:
                    results.append(_result(fast_fn(t._data, *arrs, None), t._data))
                continue
            r = slow_fn(t, *ops)
            if not inplace:
                results.append(r)
    return self if inplace else tuple(results)


# ---------------------------------------------------------------- array kernels (fast path)

def _k_add(x, o, alpha, out):
    if alpha == 1:
        return xp_of(x).add(x, o, out=out)
    return _fma.fma(_fma.scalar(alpha, x), o, x, out=out)


def _k_sub(x, o, alpha, out):
    return _k_add(x, o, -alpha, out)


def _k_mul(x, o, out):
    return xp_of(x).multiply(x, o, out=out)


def _k_div(x, o, out):
    return xp_of(x).true_divide(x, o, out=out)


def _k_addcmul(x, t1, t2, value, out):
    if out is None:
        return _fma.addcmul(x, t1, t2, value)
    return _fma.addcmul_(x, t1, t2, value)


def _k_addcdiv(x, t1, t2, value, out):
    if out is None:
        return _fma.addcdiv(x, t1, t2, value)
    return _fma.addcdiv_(x, t1, t2, value)


def _k_lerp(x, end, weight, out):
    if out is None:
        return _fma.lerp(x, end, weight)
    return _fma.lerp_(x, end, weight)


def _k_maximum(x, o, out):
    return xp_of(x).maximum(x, o, out=out)


def _k_minimum(x, o, out):
    return xp_of(x).minimum(x, o, out=out)


_UNARY_FAST = {
    "sqrt": lambda x, out: _fma.sqrt(x, out=out),
    "neg": lambda x, out: xp_of(x).negative(x, out=out),
    "abs": lambda x, out: xp_of(x).abs(x, out=out),
    "reciprocal": lambda x, out: xp_of(x).reciprocal(x, out=out),
}


def _torch():
    import ndgrad
    return ndgrad


def _method(t, name):
    return getattr(t, name)


# ---------------------------------------------------------------- the operations

def _binary(op, sigs, fast, scalar_ok=True, tensor_ok=True, alpha=False):
    """_foreach_<op> and _foreach_<op>_ over the Scalar, ScalarList, Tensor and List
    overloads."""
    def make(inplace):
        name = f"_foreach_{op}" + ("_" if inplace else "")

        def fn(*args, **kwargs):
            key, v = _parse(name, sigs, args, kwargs)
            self = v["self"]
            _check_lists(self)
            a = v.get("alpha", 1)
            if isinstance(a, Tensor):
                a = a.item()
            kw = {"alpha": a} if alpha and a != 1 else {}
            if key == "Scalar":
                s = v["scalar"]
                per = (lambda i: (s,))
                others = ()
            elif key == "ScalarList":
                s = v["scalars"]
                _check_scalars(self, s)
                per = (lambda i: (s[i],))
                others = ()
            elif key == "Tensor":
                o = v["other"]
                _check_scalar_tensor(o)
                per = (lambda i: (o,))
                others = (o,)
            else:
                o = v["other"]
                _check_lists(self, o)
                per = (lambda i: (o[i],))
                others = (o,)
            if alpha:
                f = (lambda x, o_, out: fast(x, o_, a, out)) if fast else None
            else:
                f = fast
            if inplace:
                slow = (lambda t, o_: _method(t, op + "_")(o_, **kw))
            else:
                slow = (lambda t, o_: _method(t, op)(o_, **kw))
            return _run(name, self, per, inplace, f, slow, others)
        fn.__name__ = fn.__qualname__ = name
        fn.__doc__ = f"torch.{name}: {op} for each tensor of the list (PyTorch's overloads)."
        return fn
    return make(False), make(True)


def _sigs_binary(alpha, tensor=True, list_name="other"):
    al = [(_N, "alpha", 1)] if alpha else []
    kw = ("alpha",) if alpha else ()
    sigs = [("Scalar", [(_TL, "self", _REQUIRED), (_N, "scalar", _REQUIRED)], ()),
            ("ScalarList", [(_TL, "self", _REQUIRED), (_NL, "scalars", _REQUIRED)], ())]
    if tensor:
        sigs.append(("Tensor", [(_TL, "self", _REQUIRED), (_T, "other", _REQUIRED)] + al, kw))
    sigs.append(("List", [(_TL, "self", _REQUIRED), (_TL, list_name, _REQUIRED)] + al, kw))
    return sigs


_foreach_add, _foreach_add_ = _binary("add", _sigs_binary(True), _k_add, alpha=True)
_foreach_sub, _foreach_sub_ = _binary("sub", _sigs_binary(True, tensor=False), _k_sub, alpha=True)
_foreach_mul, _foreach_mul_ = _binary("mul", _sigs_binary(False), _k_mul)
_foreach_div, _foreach_div_ = _binary("div", _sigs_binary(False), _k_div)
_foreach_clamp_min, _foreach_clamp_min_ = _binary(
    "clamp_min", _sigs_binary(False, tensor=False), _k_maximum)
_foreach_clamp_max, _foreach_clamp_max_ = _binary(
    "clamp_max", _sigs_binary(False, tensor=False), _k_minimum)


def _minmax(op, fast, clamp):
    """maximum/minimum: elementwise with a list, PyTorch's clamp_min/clamp_max with numbers."""
    sigs = _sigs_binary(False, tensor=False)

    def make(inplace):
        name = f"_foreach_{op}" + ("_" if inplace else "")

        def fn(*args, **kwargs):
            key, v = _parse(name, sigs, args, kwargs)
            self = v["self"]
            _check_lists(self)
            if key == "List":
                o = v["other"]
                _check_lists(self, o)
                per, others = (lambda i: (o[i],)), (o,)
                T = _torch()
                if inplace:
                    def slow(t, o_):
                        return t.copy_(getattr(T, op)(t, o_))
                else:
                    def slow(t, o_):
                        return getattr(T, op)(t, o_)
            else:
                s = v["scalar"] if key == "Scalar" else v["scalars"]
                if key == "ScalarList":
                    _check_scalars(self, s)
                per = (lambda i: (s,)) if key == "Scalar" else (lambda i: (s[i],))
                others = ()
                if inplace:
                    def slow(t, o_):
                        return _method(t, clamp + "_")(o_)
                else:
                    def slow(t, o_):
                        return _method(t, clamp)(o_)
            return _run(name, self, per, inplace, fast, slow, others)
        fn.__name__ = fn.__qualname__ = name
        fn.__doc__ = f"torch.{name}: {op} for each tensor of the list."
        return fn
    return make(False), make(True)


_foreach_maximum, _foreach_maximum_ = _minmax("maximum", _k_maximum, "clamp_min")
_foreach_minimum, _foreach_minimum_ = _minmax("minimum", _k_minimum, "clamp_max")


def _pointwise(op, fast):
    """addcmul/addcdiv: self + value * t1 (op) t2, value one number, one per tensor, or a 1-d
    Tensor of them."""
    base = [(_TL, "self", _REQUIRED), (_TL, "tensor1", _REQUIRED), (_TL, "tensor2", _REQUIRED)]
    sigs = [("Scalar", base + [(_N, "value", 1)], ()),
            ("ScalarList", base + [(_NL, "scalars", _REQUIRED)], ()),
            ("Tensor", base + [(_T, "scalars", _REQUIRED)], ())]

    def make(inplace):
        name = f"_foreach_{op}" + ("_" if inplace else "")

        def fn(*args, **kwargs):
            key, v = _parse(name, sigs, args, kwargs)
            self, t1, t2 = v["self"], v["tensor1"], v["tensor2"]
            _check_lists(self, t1, t2)
            if key == "Scalar":
                values = [v["value"]] * len(self)
            elif key == "ScalarList":
                values = v["scalars"]
                _check_scalars(self, values)
            else:
                values = _packed_scalars(self, v["scalars"])
            per = (lambda i: (t1[i], t2[i], values[i]))
            if inplace:
                def slow(t, a, b, val):
                    return _method(t, op + "_")(a, b, value=val)
            else:
                def slow(t, a, b, val):
                    return _method(t, op)(a, b, value=val)
            return _run(name, self, per, inplace, fast, slow, (t1, t2))
        fn.__name__ = fn.__qualname__ = name
        fn.__doc__ = f"torch.{name}: {op} for each tensor of the lists."
        return fn
    return make(False), make(True)


_foreach_addcmul, _foreach_addcmul_ = _pointwise("addcmul", _k_addcmul)
_foreach_addcdiv, _foreach_addcdiv_ = _pointwise("addcdiv", _k_addcdiv)


def _make_lerp():
    base = [(_TL, "self", _REQUIRED), (_TL, "tensors1", _REQUIRED)]
    sigs = [("List", base + [(_TL, "weights", _REQUIRED)], ()),
            ("Scalar", base + [(_N, "weight", _REQUIRED)], ()),
            ("ScalarList", base + [(_NL, "weight", _REQUIRED)], ())]

    def make(inplace):
        name = "_foreach_lerp" + ("_" if inplace else "")

        def fn(*args, **kwargs):
            key, v = _parse(name, sigs, args, kwargs)
            self, end = v["self"], v["tensors1"]
            _check_lists(self, end)
            if key == "List":
                w = v["weights"]
                _check_lists(self, w)
                per, others = (lambda i: (end[i], w[i])), (end, w)
            elif key == "Scalar":
                w = v["weight"]
                per, others = (lambda i: (end[i], w)), (end,)
            else:
                w = v["weight"]
                _check_scalars(self, w)
                per, others = (lambda i: (end[i], w[i])), (end,)
            if inplace:
                def slow(t, e, wt):
                    return t.lerp_(e, wt)
            else:
                def slow(t, e, wt):
                    return t.lerp(e, wt)
            return _run(name, self, per, inplace, _k_lerp, slow, others)
        fn.__name__ = fn.__qualname__ = name
        fn.__doc__ = f"torch.{name}: lerp for each tensor of the lists."
        return fn
    return make(False), make(True)


_foreach_lerp, _foreach_lerp_ = _make_lerp()


def _make_pow():
    sigs_out = [("List", [(_TL, "self", _REQUIRED), (_TL, "exponent", _REQUIRED)], ()),
                ("Scalar", [(_TL, "self", _REQUIRED), (_N, "exponent", _REQUIRED)], ()),
                ("ScalarList", [(_TL, "self", _REQUIRED), (_NL, "exponent", _REQUIRED)], ()),
                ("ScalarAndTensor", [(_N, "self", _REQUIRED), (_TL, "exponent", _REQUIRED)],
                 ())]

    def make(inplace):
        name = "_foreach_pow" + ("_" if inplace else "")
        sigs = sigs_out[:3] if inplace else sigs_out

        def fn(*args, **kwargs):
            key, v = _parse(name, sigs, args, kwargs)
            if key == "ScalarAndTensor":
                base, e = v["self"], v["exponent"]
                _check_lists(e)
                T = _torch()
                return tuple(T.pow(base, t) for t in e)
            self, e = v["self"], v["exponent"]
            _check_lists(self)
            if key == "List":
                _check_lists(self, e)
                per, others = (lambda i: (e[i],)), (e,)
            elif key == "Scalar":
                per, others = (lambda i: (e,)), ()
            else:
                _check_scalars(self, e)
                per, others = (lambda i: (e[i],)), ()
            if inplace:
                def slow(t, x):
                    return t.pow_(x)
            else:
                def slow(t, x):
                    return t.pow(x)
            return _run(name, self, per, inplace, None, slow, others)
        fn.__name__ = fn.__qualname__ = name
        fn.__doc__ = f"torch.{name}: pow for each tensor of the list."
        return fn
    return make(False), make(True)


_foreach_pow, _foreach_pow_ = _make_pow()

_UNARY = ("abs acos asin atan ceil cos cosh erf erfc exp expm1 floor frac lgamma log log10 log1p "
          "log2 neg reciprocal round rsqrt sigmoid sign sin sinh sqrt tan tanh trunc").split()


def _unary(op):
    sigs = [("", [(_TL, "self", _REQUIRED)], ())]
    fast = _UNARY_FAST.get(op)

    def make(inplace):
        name = f"_foreach_{op}" + ("_" if inplace else "")

        def fn(*args, **kwargs):
            _, v = _parse(name, sigs, args, kwargs)
            self = v["self"]
            _check_lists(self)
            if inplace:
                def slow(t):
                    return _method(t, op + "_")()
            else:
                def slow(t):
                    return _method(t, op)()
            return _run(name, self, lambda i: (), inplace, fast, slow, ())
        fn.__name__ = fn.__qualname__ = name
        fn.__doc__ = f"torch.{name}: {op} of each tensor of the list."
        return fn
    return make(False), make(True)


for _op in _UNARY:
    globals()[f"_foreach_{_op}"], globals()[f"_foreach_{_op}_"] = _unary(_op)


def _foreach_zero_(*args, **kwargs):
    """torch._foreach_zero_(self): zero every tensor of the list."""
    _, v = _parse("_foreach_zero_", [("", [(_TL, "self", _REQUIRED)], ())], args, kwargs)
    self = v["self"]
    _check_lists(self)

    def fast(x, out):
        out[...] = 0
    return _run("_foreach_zero_", self, lambda i: (), True, fast, lambda t: t.zero_(), ())


def _foreach_copy_(*args, **kwargs):
    """torch._foreach_copy_(self, src, non_blocking=False): copy each src into its self."""
    sigs = [("", [(_TL, "self", _REQUIRED), (_TL, "src", _REQUIRED),
                  ("bool", "non_blocking", False)], ())]
    _, v = _parse("_foreach_copy_", sigs, args, kwargs)
    self, src = v["self"], v["src"]
    _check_lists(self, src)

    def fast(x, s, out):
        out[...] = s
    return _run("_foreach_copy_", self, lambda i: (src[i],), True, fast,
                lambda t, s: t.copy_(s, non_blocking=v["non_blocking"]), (src,))


def _foreach_clone(*args, **kwargs):
    """torch._foreach_clone(self, *, memory_format=None): a copy of each tensor."""
    sigs = [("", [(_TL, "self", _REQUIRED), ("MemoryFormat?", "memory_format", None)],
             ("memory_format",))]
    _, v = _parse("_foreach_clone", sigs, args, kwargs)
    self = v["self"]
    _check_lists(self)
    mf = v["memory_format"]
    return tuple(t.clone() if mf is None else t.clone(memory_format=mf) for t in self)


def _foreach_norm(*args, **kwargs):
    """torch._foreach_norm(self, ord=2, dtype=None): each tensor's vector norm (0-d)."""
    sigs = [("", [(_TL, "self", _REQUIRED), (_N, "ord", 2), ("ScalarType?", "dtype", None)],
             ())]
    _, v = _parse("_foreach_norm", sigs, args, kwargs)
    self = v["self"]
    _check_lists(self)
    vn = _torch().linalg.vector_norm
    return tuple(vn(t, v["ord"], dtype=v["dtype"]) for t in self)


def _foreach_powsum(*args, **kwargs):
    """torch._foreach_powsum(self, ord=2, dtype=None): each tensor's sum of |x| ** ord (0-d)."""
    sigs = [("", [(_TL, "self", _REQUIRED), (_N, "ord", 2), ("ScalarType?", "dtype", None)],
             ())]
    _, v = _parse("_foreach_powsum", sigs, args, kwargs)
    self = v["self"]
    _check_lists(self)
    T = _torch()
    out = []
    for t in self:
        x = t if v["dtype"] is None else t.to(v["dtype"])
        out.append(T.sum(T.pow(T.abs(x), v["ord"])))
    return tuple(out)


def _foreach_max(*args, **kwargs):
    """torch._foreach_max(self): each tensor's largest element (0-d)."""
    _, v = _parse("_foreach_max", [("", [(_TL, "self", _REQUIRED)], ())], args, kwargs)
    self = v["self"]
    _check_lists(self)
    for t in self:
        if t.numel() == 0:
            raise RuntimeError("_foreach_max cannot compute the maximum of an empty tensor; "
                               "max over zero elements is undefined.")
    return tuple(t.max() for t in self)


def _foreach_mm(*args, **kwargs):
    """torch._foreach_mm(self, mat2): the matrix product of each pair."""
    sigs = [("", [(_TL, "self", _REQUIRED), (_TL, "mat2", _REQUIRED)], ())]
    _, v = _parse("_foreach_mm", sigs, args, kwargs)
    self, m = v["self"], v["mat2"]
    _check_lists(self, m)
    return tuple(a.mm(b) for a, b in zip(self, m))


__all__ = builtins.sorted(n for n in globals() if n.startswith("_foreach_"))
