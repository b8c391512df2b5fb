"""Batched execution for func.vmap: the function runs once on the whole batch.

Each mapped input becomes a `_Batched` tensor: it holds the physical tensor (batch dim first)
and shows the logical, per-sample metadata (shape, ndim, dtype). While a vmap runs, every op
(every defop call, see ops/_registry.py) that receives a batched tensor goes through
`dispatch`: a batch rule turns it into the same op on the physical tensors (elementwise ops
align the logical ranks behind the batch dim; reductions, softmax, scans, views and shape ops
shift their dims by one; the matmul family broadcasts over the batch; convolution and max
pooling fold the batch into N), and any other op runs sample by sample and is stacked (the
op-level fallback, always correct). Ops compute on physical tensors, so autograd records the
batched graph as usual.

Code that reads a batched tensor's values outside an op (its `_data`: .item(), .tolist(),
in-place writes, printing, data-dependent Python branches) raises `NeedsLoop`, and vmap then
runs the function sample by sample instead: batching is an optimisation, never a change of
results.
"""
from .._tensor import Tensor
from ..ops import _registry

__all__ = ["NeedsLoop", "run_batched"]


class NeedsLoop(Exception):
    """The function touched a batched tensor's values outside an op: run it per sample."""


def _refuse(*args, **kwargs):
    raise NeedsLoop()


class _LogicalMeta:
    """What a batched tensor shows as its `_data`: the per-sample shape, ndim, size and dtype;
    any use of values raises NeedsLoop."""
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = shape
        self.dtype = dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def itemsize(self):
        return self.dtype.itemsize

    def __getattr__(self, name):
        raise NeedsLoop()

    __array__ = __array_function__ = __array_ufunc__ = _refuse
    __getitem__ = __setitem__ = __iter__ = __len__ = __bool__ = _refuse
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _refuse
    __truediv__ = __rtruediv__ = __pow__ = __rpow__ = __neg__ = __abs__ = _refuse
    __and__ = __or__ = __xor__ = __invert__ = __float__ = __int__ = __index__ = _refuse
    __hash__ = None


class _Batched(Tensor):
    """A mapped input (or intermediate) seen per sample; `_value` is the physical tensor."""
    from .._tensor import _disabled_torch_function_impl as __torch_function__  # noqa: E501 (no dispatch)

    @property
    def _data(self):
        v = self.__dict__["_value"]
        return _LogicalMeta(v._data.shape[1:], v._data.dtype)

    @property
    def device(self):
        return self.__dict__["_value"].device

    def __repr__(self):
        raise NeedsLoop()


def _wrap(value):
    t = object.__new__(_Batched)
    t.__dict__["_value"] = value
    t.dtype = value.dtype
    t._requires_grad = value._requires_grad or value.grad_fn is not None
    t.grad_fn = None
    t._vc = value._vc
    return t


def _is_b(a):
    return type(a) is _Batched


def _phys(a):
    return a.__dict__["_value"]


def _lrank(a):
    return a.__dict__["_value"]._data.ndim - 1 if _is_b(a) else a._data.ndim


def _fn(name):
    return _registry._OPS[name].fn


# ---------------------------------------------------------------- batch rules

def _elementwise(op, args, kwargs, B):
    tensors = [a for a in args if isinstance(a, Tensor)]
    R = max(_lrank(a) for a in tensors)
    new = []
    for a in args:
        if _is_b(a):
            v = _phys(a)
            r = v._data.ndim - 1
            if r < R:
                v = v.reshape((B,) + (1,) * (R - r) + tuple(v._data.shape[1:]))
            a = v
        new.append(a)
    if any(_is_b(v) for v in kwargs.values()):
        return NotImplemented
    return op.fn(*new, **kwargs)


def _shift(d, r):
    """A logical dim (of a tensor of logical rank r) as a physical one."""
    return d % r + 1


def _shift_dims(dim, r):
    if dim is None:
        return tuple(range(1, r + 1))
    if isinstance(dim, (tuple, list)):
        return tuple(_shift(d, r) for d in dim)
    return _shift(dim, r)


def _self_only(args, kwargs):
    """The op's first argument is the only batched one, and nothing batched elsewhere."""
    return _is_b(args[0]) and not any(_is_b(a) for a in args[1:]) and \
        not any(_is_b(v) for v in kwargs.values())


def _self_rank(args, kwargs):
    """The logical rank of the first argument where it is the only batched one, else 0 (a
    rule over dims has nothing to do for a 0-d value either)."""
    return _lrank(args[0]) if _self_only(args, kwargs) else 0


def _dim_rule(pos, none_means_all=True):
    """Ops whose argument `pos` is a dim (int, tuple or None: every dim) of their first
    input; 0-d inputs take the per-sample fallback."""
    def rule(op, args, kwargs, B):
        if not _self_only(args, kwargs) or len(args) <= pos:
            return NotImplemented
        r = _lrank(args[0])
        dim = args[pos]
        if r == 0 or (dim is None and not none_means_all):
            return NotImplemented
        args = list(args)
        args[0] = _phys(args[0])
        args[pos] = _shift_dims(dim, r)
        return op.fn(*args, **kwargs)
    return rule


def _full_reduction(name):
    """sum(self, dtype) / mean(self, dtype): the dim form over every logical dim."""
    def rule(op, args, kwargs, B):
        r = _self_rank(args, kwargs)
        if r == 0:
            return NotImplemented
        dtype = args[1] if len(args) > 1 else kwargs.get("dtype")
        return _fn(name)(_phys(args[0]), tuple(range(1, r + 1)), False, dtype)
    return rule


def _reshape(op, args, kwargs, B):
    if not _self_only(args, kwargs):
        return NotImplemented
    return op.fn(_phys(args[0]), (B,) + tuple(args[1]), **kwargs)


def _transpose(op, args, kwargs, B):
    r = _self_rank(args, kwargs)
    if r == 0:
        return NotImplemented
    return op.fn(_phys(args[0]), _shift(args[1], r), _shift(args[2], r))


def _permute(op, args, kwargs, B):
    r = _self_rank(args, kwargs)
    if r == 0:
        return NotImplemented
    return op.fn(_phys(args[0]), (0,) + tuple(_shift(d, r) for d in args[1]))


def _unsqueeze(op, args, kwargs, B):
    if not _self_only(args, kwargs):
        return NotImplemented
    r = _lrank(args[0]) + 1
    return op.fn(_phys(args[0]), _shift(args[1], r))


def _squeeze_dims(op, args, kwargs, B):
    if not _self_only(args, kwargs) or args[1] is None or _lrank(args[0]) == 0:
        return NotImplemented
    return op.fn(_phys(args[0]), _shift_dims(args[1], _lrank(args[0])))


def _expand(op, args, kwargs, B):
    if not _self_only(args, kwargs):
        return NotImplemented
    v = _phys(args[0])
    size = tuple(args[1])
    r = v._data.ndim - 1
    if len(size) > r:
        v = v.reshape((B,) + (1,) * (len(size) - r) + tuple(v._data.shape[1:]))
    return op.fn(v, (B,) + size)


def _t(op, args, kwargs, B):
    if not _self_only(args, kwargs) or _lrank(args[0]) != 2:
        return NotImplemented
    return _phys(args[0]).transpose(1, 2)


def _basic_view(op, args, kwargs, B):
    if not _self_only(args, kwargs):
        return NotImplemented
    key = args[1] if isinstance(args[1], tuple) else (args[1],)
    return op.fn(_phys(args[0]), (slice(None),) + key)


def _advanced_index(op, args, kwargs, B):
    if not _self_only(args, kwargs):
        return NotImplemented
    key = args[1] if isinstance(args[1], tuple) else (args[1],)
    arrays = [k for k in key if hasattr(k, "dtype") and hasattr(k, "shape")]
    if len(arrays) != 1 or arrays[0].dtype.kind == "b" or any(k is None or k is Ellipsis
                                                               for k in key):
        return NotImplemented
    return op.fn(_phys(args[0]), (slice(None),) + key)


def _two_dims(i, j):
    def rule(op, args, kwargs, B):
        r = _self_rank(args, kwargs)
        if r == 0:
            return NotImplemented
        args = list(args)
        args[0] = _phys(args[0])
        args[i], args[j] = _shift(args[i], r), _shift(args[j], r)
        return op.fn(*args, **kwargs)
    return rule


def _matmul(op, args, kwargs, B):
    """The matmul family (matmul, mm, bmm, mv, dot): vectors become matrices, the batched
    operands' logical batch dims are padded to one rank, and one broadcasting matmul runs."""
    a, b = args[0], args[1]
    if kwargs or len(args) != 2 or not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        return NotImplemented
    la, lb = _lrank(a), _lrank(b)
    if la == 0 or lb == 0:
        return NotImplemented
    A = _phys(a) if _is_b(a) else a
    Bm = _phys(b) if _is_b(b) else b
    sq_a, sq_b = la == 1, lb == 1
    if sq_a:
        A = A.unsqueeze(-2)
        la = 2
    if sq_b:
        Bm = Bm.unsqueeze(-1)
        lb = 2
    R = max(la, lb)

    def pad(x, is_b, r):
        if is_b and r < R:
            s = tuple(x._data.shape)
            return x.reshape((s[0],) + (1,) * (R - r) + s[1:])
        return x
    A, Bm = pad(A, _is_b(a), la), pad(Bm, _is_b(b), lb)
    out = _fn("matmul")(A, Bm)
    if sq_b:
        out = out.squeeze(-1)
    if sq_a:
        out = out.squeeze(-1 if sq_b else -2)
    return out


def _mv_t(op, args, kwargs, B):
    """mv_t(self, vec) = self.t() @ vec (a backward formula's form of mv)."""
    m, v = args[0], args[1]
    if kwargs or _lrank(m) != 2 or _lrank(v) != 1:
        return NotImplemented
    mt = _wrap(_phys(m).transpose(1, 2)) if _is_b(m) else m.t()
    return _matmul(_registry._OPS["matmul"], (mt, v), {}, B)


def _linear(op, args, kwargs, B):
    """linear: one op when only the input is mapped; with a mapped weight or bias (model
    ensembles), the matmul rule on the transposed weight, then the elementwise add."""
    inp, w = args[0], args[1]
    bias = args[2] if len(args) > 2 else kwargs.get("bias")
    if not _is_b(inp) and not _is_b(w) and not _is_b(bias):
        return NotImplemented
    if _is_b(inp) and not _is_b(w) and not _is_b(bias) and _lrank(inp) > 0:
        return op.fn(_phys(inp), w, bias)
    if _lrank(w) != 2:
        return NotImplemented
    wt = _wrap(_phys(w).transpose(-1, -2)) if _is_b(w) else w.t()
    out = _matmul(_registry._OPS["matmul"], (inp, wt), {}, B)
    if bias is not None:
        out = _elementwise(_registry._OPS["add"], (_wrap(out), bias), {}, B)
    return out


def _fold_batch(op, args, kwargs, B):
    """Convolution and max pooling: the mapped batch joins N, (B, N, ...) -> (B * N, ...)."""
    if not _self_only(args, kwargs):
        return NotImplemented
    v = _phys(args[0])
    s = tuple(v._data.shape)
    out = op.fn(v.reshape((B * s[1],) + s[2:]), *args[1:], **kwargs)

    def unfold(o):
        return o.reshape((B, s[1]) + tuple(o._data.shape[1:]))
    return tuple(unfold(o) for o in out) if isinstance(out, tuple) else unfold(out)


def _embedding(op, args, kwargs, B):
    weight, indices = args[0], args[1]
    if _is_b(weight) or not _is_b(indices) or kwargs:
        return NotImplemented
    return op.fn(weight, _phys(indices), *args[2:])


def _variadic_join(op, args, kwargs, B):
    """cat / stack: unmapped operands are expanded over the batch; the dim shifts by one."""
    if set(kwargs) == {"dim", "sizes"}:   # how cat and stack call their ops
        tensors, dim, sizes = list(args), kwargs["dim"], kwargs["sizes"]
    elif kwargs:
        return NotImplemented
    else:
        *tensors, dim, sizes = args
    ref = next(t for t in tensors if _is_b(t))
    r = _lrank(ref) + (1 if op.name == "stack" else 0)
    phys = []
    for t in tensors:
        if _is_b(t):
            phys.append(_phys(t))
        else:
            phys.append(t.unsqueeze(0).expand((B,) + tuple(t._data.shape)))
    return op.fn(*phys, dim=_shift(dim, r), sizes=sizes)


_ELEMENTWISE = set("""
abs acos acosh add addcdiv addcmul asin asinh atan atan2 atanh bitwise_and bitwise_not
bitwise_or bitwise_xor ceil celu clamp clamp_max clamp_min clamp_tensor clamp_max_tensor
clamp_min_tensor copysign copysign_scalar cos cosh deg2rad digamma div div_mode elu eq erf erfc
erfinv exp exp2 expm1 floor floor_divide fmax fmin fmod fmod_scalar frac ge gelu gt hardshrink
hardsigmoid hardswish hardtanh heaviside hypot i0 isfinite isinf isnan isneginf isposinf le
leaky_relu lerp lerp_tensor lgamma log log10 log1p log2 log_sigmoid logaddexp logaddexp2
logical_and logical_not logical_or logical_xor logit lt maximum minimum mish mul mul3 ne neg
nextafter nan_to_num pow pow_scalar_base pow_tensor rad2deg reciprocal relu remainder
remainder_scalar round round_decimals rsqrt rsub rsub_tensor sgn sigmoid sign signbit silu sin sinc sinh
softplus softshrink sqrt sub tan tanh threshold trunc where xlogy xlogy_scalar_other
xlogy_scalar_self sigmoid_backward tanh_backward threshold_backward leaky_relu_backward
hardtanh_backward hardshrink_backward softshrink_backward isclose special_i1 clone contiguous
to_dtype
""".split())

_RULES = {name: _elementwise for name in _ELEMENTWISE}
_RULES.update({
    "sum": _full_reduction("sum_dim"), "mean": _full_reduction("mean_dim"),
    "sum_dim": _dim_rule(1), "mean_dim": _dim_rule(1), "nansum": _dim_rule(1),
    "prod_dim": _dim_rule(1, False), "amax": _dim_rule(1), "amin": _dim_rule(1),
    "all": _dim_rule(1, False), "any": _dim_rule(1, False), "argmax": _dim_rule(1, False),
    "argmin": _dim_rule(1, False), "logsumexp": _dim_rule(1), "max_dim": _dim_rule(1, False),
    "min_dim": _dim_rule(1, False), "var": _dim_rule(1), "std": _dim_rule(1),
    "var_mean": _dim_rule(1), "std_mean": _dim_rule(1), "linalg_vector_norm": _dim_rule(2),
    "softmax": _dim_rule(1, False), "log_softmax": _dim_rule(1, False),
    "cumsum": _dim_rule(1, False), "cumprod": _dim_rule(1, False),
    "logcumsumexp": _dim_rule(1, False), "flip": _dim_rule(1, False),
    "softmax_backward": None, "log_softmax_backward": None,
    "reshape": _reshape, "view": _reshape, "transpose": _transpose, "permute": _permute,
    "unsqueeze": _unsqueeze, "squeeze_dim": _squeeze_dims, "squeeze_dims": _squeeze_dims,
    "expand": _expand, "slice_view": _basic_view, "select_view": _basic_view,
    "unsqueeze_view": _basic_view, "alias_view": _basic_view, "index": _advanced_index,
    "diagonal": _two_dims(2, 3), "t": _t, "matmul": _matmul, "mm": _matmul, "bmm": _matmul,
    "mv": _matmul, "dot": _matmul, "vm": _matmul, "mv_t": _mv_t, "linear": _linear, "convolution": _fold_batch,
    "convolution_transpose": _fold_batch, "max_pool2d_with_indices": _fold_batch,
    "max_pool3d_with_indices": _fold_batch, "embedding": _embedding,
    "cat": _variadic_join, "stack": _variadic_join,
})
_RULES = {k: v for k, v in _RULES.items() if v is not None}


def _batched_in(args, kwargs):
    for a in args:
        if type(a) is _Batched:
            return True
        if isinstance(a, (list, tuple)) and any(type(x) is _Batched for x in a):
            return True
    return any(type(v) is _Batched for v in kwargs.values())


def _slice(a, b):
    if type(a) is _Batched:
        return _phys(a)[b]
    if isinstance(a, (list, tuple)) and any(type(x) is _Batched for x in a):
        return type(a)(_slice(x, b) for x in a)
    return a


_stats = {"rule": 0, "fallback": 0}


def dispatch(op, args, kwargs, B):
    if not _batched_in(args, kwargs):
        return _registry.apply(op, args, kwargs)
    rule = _RULES.get(op.name)
    if rule is not None:
        try:
            out = rule(op, args, kwargs, B)
        except NeedsLoop:
            raise
        except Exception:   # e.g. mismatched shapes: the loop raises PyTorch's error on the
            raise NeedsLoop() from None   # per-sample shapes
        if out is not NotImplemented:
            _stats["rule"] += 1
            return tuple(_wrap(o) for o in out) if isinstance(out, tuple) else _wrap(out)
    # the op-level fallback: the op once per sample, stacked
    _stats["fallback"] += 1
    from ..ops.shape import stack
    per = [op.fn(*[_slice(a, b) for a in args], **{k: _slice(v, b) for k, v in kwargs.items()})
           for b in range(B)]
    if isinstance(per[0], tuple):
        return tuple(_wrap(stack([p[k] for p in per])) for k in range(len(per[0])))
    return _wrap(stack(per))


def run_batched(func, args, dims, spec, B, unflatten, kwargs):
    """func on the batch at once: mapped leaves become _Batched (batch dim moved first).
    Returns the output leaves as (physical tensor with the batch first, or an unmapped
    value) pairs; raises NeedsLoop when the function needs the per-sample loop."""
    leaves = []
    for leaf, d in zip(args, dims):
        if d is None:
            leaves.append(leaf)
        else:
            v = leaf.movedim(d, 0) if d % leaf.dim() else leaf
            leaves.append(_wrap(v))
    prev = _registry._VMAP[0]
    _registry._VMAP[0] = lambda op, a, k: dispatch(op, a, k, B)
    try:
        out = func(*unflatten(leaves, spec), **kwargs)
    finally:
        _registry._VMAP[0] = prev
    return out
