"""The ops of jagged nested tensors (PyTorch's torch/nested/_internal/ops.py semantics).

Ops reach NestedTensor.__torch_function__ from ndgrad's op layer (`func` is the op's public
function, its dims already wrapped against the nested tensor's own number of dims) and from
NestedTensor's methods; each handler here runs the op on the values and wraps the result with
the input's structure, or raises PyTorch's error. An op with no handler raises PyTorch's
`NotImplementedError: aten.<op>.default`.
"""
from ..._backend import numpy as _np
from ..._tensor import Tensor, _wrap_dim
from .nested_tensor import NestedTensor, _like, _make_njt, to_padded, nested_from_padded

__all__ = ["jagged_torch_function"]

# elementwise ops: run on the values, with the other operands brought to the values' layout
POINTWISE = frozenset("""
abs absolute neg negative sin cos tan tanh sinh cosh asin acos atan asinh acosh atanh arcsin
arccos arctan exp exp2 expm1 log log1p log2 log10 sqrt rsqrt reciprocal square sigmoid
logit erf erfc erfinv floor ceil round trunc frac sign sgn signbit relu relu6 gelu silu mish
elu selu celu leaky_relu hardtanh hardsigmoid hardswish softplus softsign logsigmoid tanhshrink
hardshrink softshrink threshold nan_to_num isnan isinf isfinite isposinf isneginf
add sub subtract rsub mul multiply div divide true_divide floor_divide remainder fmod pow
float_power maximum minimum fmax fmin atan2 arctan2 hypot copysign xlogy
eq ne lt le gt ge equal_ eq_ logical_and logical_or logical_xor logical_not bitwise_and
bitwise_or bitwise_xor bitwise_not where masked_fill clamp clamp_min clamp_max clip lerp
addcmul addcdiv polar angle real imag conj positive deg2rad rad2deg to_dtype clone
_to_copy contiguous fill zero_like zeros_like ones_like empty_like full_like rand_like
randn_like
""".split())


def _err_nyi(name):
    return NotImplementedError(f"aten.{name}.default")


def _is_njt(a):
    return isinstance(a, NestedTensor)


def raggedness_matches(nt, other):
    return (len(nt._size) == len(other._size) and nt._ragged_idx == other._ragged_idx
            and nt._size[0] == other._size[0] and nt._size[nt._ragged_idx] ==
            other._size[other._ragged_idx])


def _size_str(s):
    return "(" + ", ".join(str(x) for x in s) + ")"


def _squeeze_leading_ones(t):
    while t.dim() > 0 and t.shape[0] == 1:
        t = t.squeeze(0)
    return t


def _dense_as_values(nt, t, name, a_first):
    """A dense operand of an elementwise op with nt, in the layout of nt's values."""
    if t.dim() > nt.dim():
        raise NotImplementedError("NYI: broadcasting NT with T with larger dim")
    sq = _squeeze_leading_ones(t)
    if nt.dim() >= sq.dim() + 2:
        return sq
    shapes = (nt.shape, t.shape) if a_first else (t.shape, nt.shape)
    msg = f"cannot call binary pointwise function {name}.Tensor with inputs of shapes " \
          f"{shapes[0]} and {shapes[1]}"
    if t.dim() == nt.dim():
        if t.shape[0] != nt._size[0]:
            raise RuntimeError(msg)
        r = nt._ragged_idx
        smax = nt._max_seqlen
        size = [s if i != r else smax for i, s in enumerate(t.shape)]
        size[0] = nt._size[0]
        return nested_from_padded(t.expand(size), nt)._values
    raise RuntimeError(msg)


def _pointwise(func, args, kwargs):
    nt = next(a for a in list(args) + list(kwargs.values()) if _is_njt(a))
    name = func.__name__

    def conv(a, pos):
        if _is_njt(a):
            if a is not nt and not raggedness_matches(nt, a):
                x, y = (nt, a) if first_pos <= pos else (a, nt)
                raise RuntimeError(f"cannot call binary pointwise function {name}.Tensor with "
                                   f"inputs of shapes {_size_str(x._size)} and "
                                   f"{_size_str(y._size)}")
            return a._values
        if isinstance(a, Tensor) and a.dim() > 0:
            return _dense_as_values(nt, a, name, pos > first_pos)
        return a

    first_pos = next((i for i, a in enumerate(args) if _is_njt(a)), 0)
    new_args = [conv(a, i) for i, a in enumerate(args)]
    new_kwargs = {k: conv(v, len(args)) for k, v in kwargs.items()}
    out = func(*new_args, **new_kwargs)
    return _like(nt, out) if isinstance(out, Tensor) else out


# ------------------------------------------------------------------------------- dims
def _inner(nt, d):
    """values' dim of the nested tensor's dim d (the batch dim: the ragged one's)."""
    return nt._ragged_idx - 1 if d == 0 else d - 1


def _wrap_jagged_dim(nt, d, op, allow_ragged=False, allow_batch=False):
    d = _wrap_dim(d, nt.dim())
    if d == nt._ragged_idx and not allow_ragged:
        raise RuntimeError(f"{op}(): not supported for NestedTensor on ragged dim")
    if d == 0 and not allow_batch:
        raise RuntimeError(f"{op}(): not supported for NestedTensor on dim=0")
    return d


# ------------------------------------------------------------------------------- reductions
def _reduce(func, name, nt, dims, keepdim, rest, identity, **kw):
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    wrapped = [_wrap_dim(d, nt.dim()) for d in dims]
    r = nt._ragged_idx
    on_batch = 0 in wrapped
    on_ragged = r in wrapped
    on_non_batch = any(d not in (0, r) for d in wrapped)
    inner = tuple(dict.fromkeys(_inner(nt, d) for d in wrapped))
    if on_ragged and nt._lengths is not None:
        raise RuntimeError(f"{name}(): reducing across the ragged dimension is not supported "
                           "for non-contiguous nested tensors with holes")
    if on_ragged:
        if on_batch:
            out = func(nt._values, inner, keepdim, *rest, **kw)
            return out.unsqueeze(0) if keepdim else out
        if on_non_batch:
            raise RuntimeError(f"{name}(): reducing along a ragged and non-batch dimension is "
                               "not supported for nested tensors")
        if name == "mean":
            from ... import _creation
            s = _reduce(_sum_fn(), "sum", nt, (r,), True, rest, 0)
            from .nested_tensor import _lengths_np
            lens = _creation.tensor(_lengths_np(nt._offsets, None), dtype=s.dtype,
                                    device=s.device)
            lens = lens.reshape((-1,) + (1,) * (s.dim() - 1))
            out = s / lens
            return out if keepdim else out.squeeze(r)
        return func(to_padded(nt, identity), (r,), keepdim, *rest, **kw)
    if on_batch:
        raise RuntimeError(f"{name}(): reducing along the batch dimension but not the ragged "
                           "dimension is not supported for nested tensors")
    out = func(nt._values, inner, keepdim, *rest, **kw)
    new_r = r
    if not keepdim:
        new_r -= sum(1 for d in inner if d < r - 1)
    return _like(nt, out, new_r)


def _sum_fn():
    return lambda x, dims, keepdim, dtype=None, **kw: x.sum(dims, keepdim, dtype=dtype)


def _full(func, args, kwargs):
    nt, rest = args[0], args[1:]
    return func(nt._values, *rest, **kwargs)


def _sum_dim(func, nt, dims=None, keepdim=False, *rest, **kw):
    if dims is None or (isinstance(dims, (tuple, list)) and len(dims) == 0):
        out = func(nt._values, dims, keepdim, *rest, **kw)
        return out
    return _reduce(func, func.__name__.split("_")[0], nt, dims, keepdim, rest, 0.0, **kw)


def _amax(func, nt, dims=(), keepdim=False, *rest, **kw):
    if not dims:
        return func(nt._values, dims, keepdim, *rest, **kw)
    name = func.__name__
    ident = float("-inf") if name == "amax" else float("inf")
    return _reduce(func, name, nt, dims, keepdim, rest, ident, **kw)


def _select_reduce(func, nt, dim=None, keepdim=False):
    """max/min over a dim (values, indices) and argmax/argmin: on the values for an inner dim,
    on the padded tensor (padded with the dtype's extreme) for the ragged one."""
    name = func.__name__.split("_")[0]
    if dim is None:
        return func(nt._values, None, keepdim)
    d = _wrap_dim(dim, nt.dim())
    r = nt._ragged_idx
    if d == 0:
        raise RuntimeError(f"{name}(): reducing along the batch dimension but not the ragged "
                           "dimension is not supported for nested tensors")
    if d == r:
        if nt._lengths is not None:
            raise RuntimeError(f"{name}(): reducing across the ragged dimension is not "
                               "supported for non-contiguous nested tensors with holes")
        from ... import finfo, iinfo
        info = finfo(nt.dtype) if nt.dtype.is_floating_point else iinfo(nt.dtype)
        pad = info.min if name in ("max", "argmax") else info.max
        return func(to_padded(nt, pad), r, keepdim)
    out = func(nt._values, d - 1, keepdim)
    new_r = r - 1 if (not keepdim and d < r) else r
    if isinstance(out, tuple):
        return type(out)(tuple(_like(nt, o, new_r) for o in out))
    return _like(nt, out, new_r)


def _softmax(func, nt, dim, *rest, **kw):
    name = "log_softmax" if func.__name__ == "log_softmax" else "softmax"
    if isinstance(dim, (tuple, list)):
        raise RuntimeError(f"{name}(): not supported for dimensions of type 'tuple' for "
                           "NestedTensor")
    d = _wrap_dim(dim, nt.dim())
    r = nt._ragged_idx
    if d == 0:
        raise RuntimeError(f"{name}(): not supported when reducing across the batch dimension "
                           "for NestedTensor")
    if d == r:
        if name == "log_softmax":
            raise RuntimeError("log_softmax(): not supported when reducing along the ragged "
                               "dimension for NestedTensor")
        if r > 1:
            raise RuntimeError(f"{name}(): not supported when reducing along the ragged "
                               "dimension for ragged_idx > 1 for NestedTensor")
        if nt._lengths is not None:
            raise RuntimeError(f"{name}(): not supported where lengths is not None if reducing "
                               "across the ragged dimension for NestedTensor")
        padded = func(to_padded(nt, float("-inf")), r, *rest, **kw)
        return nested_from_padded(padded, nt)
    return _like(nt, func(nt._values, d - 1, *rest, **kw))


# ------------------------------------------------------------------------------- linear algebra
def _linear(func, nt, weight, bias=None):
    if not _is_njt(nt) or _is_njt(weight):
        raise _err_nyi("linear")
    return _like(nt, func(nt._values, weight, bias))


def _matmul(func, a, b):
    if _is_njt(a) and not _is_njt(b):
        if a.dim() >= 3 and a.dim() == b.dim() and a._ragged_idx < a.dim() - 1:
            return nested_from_padded(func(to_padded(a, 0.0), b), a)
        if b.dim() == 2 and a.dim() > b.dim() and a._ragged_idx < a.dim() - 1:
            return _like(a, func(a._values, b))
    elif not _is_njt(a) and _is_njt(b):
        if b.dim() >= 3 and b.dim() == a.dim() and b._ragged_idx >= 2:
            return nested_from_padded(func(a, to_padded(b, 0.0)), b)
        if a.dim() == 2 and b.dim() > a.dim() and b._ragged_idx >= 2:
            return _like(b, func(a, b._values))
    elif _is_njt(a) and _is_njt(b):
        if a.dim() > 3 and b.dim() > 3 and raggedness_matches(a, b):
            return _like(a, func(a._values, b._values))
        if a.dim() == 3 and b.dim() == 3 and a._ragged_idx == 2 and b._ragged_idx == 1 and \
                a._size[2] == b._size[1]:
            from ... import stack
            return stack([func(x, y) for x, y in zip(a.unbind(), b.unbind())])
    sa = _size_str(a._size) if _is_njt(a) else a.shape
    sb = b.shape
    raise RuntimeError(f"matmul(): not supported between inputs of shapes {sa} and {sb}")


def _bmm(func, a, b):
    from ... import matmul
    if a.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    return _matmul(matmul, a, b)


# ------------------------------------------------------------------------------- shape ops
def transpose(nt, dim0, dim1):
    n = nt.dim()
    dim0, dim1 = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
    r = nt._ragged_idx
    if dim0 == r or dim1 == r:
        if dim0 == 0 or dim1 == 0:
            raise ValueError("Transpose is not supported on the batch dimension for jagged NT")
        to = dim1 if dim0 == r else dim0
        return _like(nt, nt._values.transpose(dim0 - 1, dim1 - 1), to)
    _wrap_jagged_dim(nt, dim0, "transpose")
    _wrap_jagged_dim(nt, dim1, "transpose")
    return _like(nt, nt._values.transpose(dim0 - 1, dim1 - 1))


def unbind(nt, dim=0):
    if _wrap_dim(dim, nt.dim()) != 0:
        raise RuntimeError("unbind(): only supported for NestedTensor on dim=0")
    from ... import split
    r = nt._ragged_idx
    from .nested_tensor import _lengths_np
    lens = _lengths_np(nt._offsets, nt._lengths)
    if nt._lengths is None:
        return tuple(split(nt._values, [int(x) for x in lens], r - 1))
    offs = nt._offsets.detach().cpu().numpy()
    return tuple(nt._values.narrow(r - 1, int(o), int(n)) for o, n in zip(offs[:-1], lens))


def _batch_groups(nt, sizes):
    """NJTs of consecutive groups of nt's components (chunk/split along dim 0)."""
    from ... import _creation
    if nt._lengths is not None:
        raise RuntimeError("chunk(): not supported for NestedTensor on dim=0 with holes")
    offs = nt._offsets.detach().cpu().numpy()
    r = nt._ragged_idx
    out, start = [], 0
    for n in sizes:
        o = offs[start:start + n + 1]
        vals = nt._values.narrow(r - 1, int(o[0]), int(o[-1] - o[0]))
        new = _creation.tensor((o - o[0]).astype(_np.int64), device=nt._offsets.device)
        out.append(_make_njt(vals, new, None, r))
        start += n
    return tuple(out)


def split_with_sizes(nt, sizes, dim, op="split"):
    d = _wrap_dim(dim, nt.dim())
    if d == 0 and op == "chunk":
        return _batch_groups(nt, sizes)
    _wrap_jagged_dim(nt, d, op)
    from ... import split
    return tuple(_like(nt, v) for v in split(nt._values, list(sizes), d - 1))


def chunk(nt, chunks, dim=0):
    d = _wrap_dim(dim, nt.dim())
    n = nt._size[0] if d == 0 else nt._size[d]
    if d == nt._ragged_idx:
        raise RuntimeError("chunk(): not supported for NestedTensor on ragged dim")
    each = -(-n // chunks)
    sizes = [each] * (n // each) + ([n % each] if n % each else [])
    return split_with_sizes(nt, sizes, d, "chunk")


def split(nt, split_size, dim=0):
    d = _wrap_jagged_dim(nt, dim, "split")
    if isinstance(split_size, int):
        n = nt._size[d]
        sizes = [split_size] * (n // split_size) + ([n % split_size] if n % split_size else [])
    else:
        sizes = list(split_size)
    return split_with_sizes(nt, sizes, d)


def unsqueeze(nt, dim):
    d = _wrap_dim(dim, nt.dim() + 1)
    if d == 0:
        raise RuntimeError("unsqueeze(): not supported for NestedTensor on dim=0")
    r = nt._ragged_idx
    return _like(nt, nt._values.unsqueeze(d - 1), r + 1 if d <= r else r)


def squeeze(nt, dim):
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    out, r = nt._values, nt._ragged_idx
    for d in sorted((_wrap_jagged_dim(nt, d, "squeeze") for d in dims), reverse=True):
        if nt._size[d] == 1:
            out = out.squeeze(d - 1)
            if d < r:
                r -= 1
    return _like(nt, out, r)


def view(nt, shape):
    shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) \
        else tuple(shape)
    r = nt._ragged_idx
    if len(shape) <= r or (shape[0] != nt._size[0] and shape[0] != -1):
        raise RuntimeError(f"view(): cannot view shape {_size_str(nt._size)} as "
                           f"{_size_str(shape)}")
    inner = [(-1 if i == r else s) for i, s in enumerate(shape)][1:]
    if any(s != t for s, t in zip(inner[:r - 1], nt._values.shape[:r - 1])):
        raise RuntimeError(f"view(): cannot view shape {_size_str(nt._size)} as "
                           f"{_size_str(shape)}")
    return _like(nt, nt._values.reshape(inner))


def permute(nt, *dims):
    dims = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
    n = nt.dim()
    if len(dims) != n:
        raise ValueError(f"permute(): number of dimensions in the tensor input ({n}) does not "
                         f"match the length of the desired ordering of dimensions "
                         f"({len(dims)}).")
    dims = tuple(_wrap_dim(d, n) for d in dims)
    if len(set(dims)) != n:
        raise ValueError("permute(): duplicate dims are not allowed.")
    if dims[0] != 0:
        raise ValueError("Permute is not supported on the batch dimension for jagged NT")
    return _like(nt, nt._values.permute([d - 1 for d in dims[1:]]),
                 dims.index(nt._ragged_idx))


def stack(tensors, dim=0):
    tensors = list(tensors)
    nt = next(t for t in tensors if _is_njt(t))
    d = _wrap_dim(dim, nt.dim() + 1)
    if d == 0:
        raise RuntimeError("stack(): not supported for NestedTensor on dim=0")
    if d == nt._ragged_idx:
        raise RuntimeError("stack(): not supported for NestedTensor on ragged dim")
    return cat([t.unsqueeze(d) for t in tensors], d)


def flatten(nt, start_dim=0, end_dim=-1):
    n = nt.dim()
    s = _wrap_jagged_dim(nt, start_dim, "flatten", allow_ragged=True)
    e = _wrap_jagged_dim(nt, end_dim, "flatten", allow_ragged=True)
    if s == e:
        return nt
    if s <= nt._ragged_idx <= e:
        raise RuntimeError("flatten(): not supported for NestedTensor on ragged dim")
    return _like(nt, nt._values.flatten(s - 1, e - 1))


def cat(tensors, dim=0):
    tensors = list(tensors)
    nt = next(t for t in tensors if _is_njt(t))
    d = _wrap_jagged_dim(nt, dim, "cat")
    vals = []
    for t in tensors:
        if not _is_njt(t):
            t = _like(nt, _dense_as_values(nt, t, "cat", True))
        elif not raggedness_matches(nt, t):
            raise RuntimeError("cat(): expected all nested tensors to have matching ragged "
                               "structures outside of the concatenated dim")
        vals.append(t._values)
    from ... import cat as _cat
    return _like(nt, _cat(vals, d - 1))


def layer_norm(nt, normalized_shape, weight=None, bias=None, eps=1e-5):
    from ...nn import functional as F
    if nt.dim() <= 2:
        raise RuntimeError("layer_norm(): not supported for NestedTensor objects with 2 or "
                           "fewer dimensions")
    ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if nt.dim() - len(ns) == 0:
        raise RuntimeError("layer_norm(): not supported when normalizing over the batch "
                           "dimension for NestedTensor")
    if nt._size[nt._ragged_idx] in ns:
        if nt._lengths is not None:
            raise RuntimeError("layer_norm(): not supported where lengths is not None if "
                               "operating on the ragged dimension for NestedTensor")
        return _ragged_layer_norm(nt, eps)
    return _like(nt, F.layer_norm(nt._values, ns, weight, bias, eps))


def _ragged_layer_norm(nt, eps):
    """Layer norm of each component over its ragged dim and the dims after it (PyTorch's:
    no weight or bias, which could not have the ragged shape, so PyTorch ignores them too)."""
    from ... import _creation
    r = nt._ragged_idx
    padded = to_padded(nt, 0.0)                                   # (B, ..., S, *rest)
    p = padded.movedim(r, 1) if r != 1 else padded
    b, smax = p.shape[0], p.shape[1]
    p = p.reshape(b, smax, -1)                                     # (B, S, R)
    lens = _np.diff(nt._offsets.detach().cpu().numpy())            # host: offsets
    keep = (_np.arange(smax)[None, :] < lens[:, None])[..., None]  # host: offsets
    mask = _creation.tensor(keep, dtype=p.dtype, device=p.device)
    n = _creation.tensor((lens * p.shape[2]).astype(_np.float64), dtype=p.dtype,  # host
                         device=p.device).view(b, 1, 1)
    mean = p.sum((1, 2), keepdim=True) / n
    centered = (p - mean) * mask
    var = centered.square().sum((1, 2), keepdim=True) / n
    out = (centered / (var + eps).sqrt()).reshape(padded.movedim(r, 1).shape if r != 1
                                                  else padded.shape)
    return nested_from_padded(out.movedim(1, r) if r != 1 else out, nt)


def getitem(nt, index):
    if isinstance(index, int):
        return unbind(nt)[index]
    idx = index if isinstance(index, tuple) else (index,)
    r = nt._ragged_idx
    if len(idx) > r and all(isinstance(i, slice) and i == slice(None) for i in idx[:r + 1]) \
            and r == 1:
        return _like(nt, nt._values[(slice(None),) + idx[r + 1:]])
    if idx and isinstance(idx[0], slice) and idx[0] == slice(None) and len(idx) > 1:
        k = idx[1]
        if r != 1 and not any(i is Ellipsis or i is None for i in idx):
            inner = idx[1:]
            return _like(nt, nt._values[inner], r - sum(isinstance(i, int) for i in idx[1:r]))
    raise RuntimeError("slice(): not supported for NestedTensor on dim=0")


# ------------------------------------------------------------------------------- dispatch
def _sdpa():
    from .sdpa import jagged_scaled_dot_product_attention
    return jagged_scaled_dot_product_attention


def _h_transpose(func, nt, d0, d1):
    return transpose(nt, d0, d1)


def _h_unbind(func, nt, dim=0, *rest):
    return unbind(nt, dim)


def _h_split(func, nt, dim, sizes, *rest):
    return split_with_sizes(nt, sizes, dim, "chunk" if _wrap_dim(dim, nt.dim()) == 0 else "split")


def _h_cat(func, *args, dim=0, **kw):
    tensors = args[0] if len(args) and isinstance(args[0], (list, tuple)) else args
    if len(args) == 2 and isinstance(args[0], (list, tuple)):
        dim = args[1]
    return cat(tensors, dim)


def _h_layer_norm(func, nt, ns, w=None, b=None, eps=1e-5, *rest):
    out = layer_norm(nt, ns, w, b, eps)
    if func.__name__ == "native_layer_norm":   # (output, mean, rstd): F.layer_norm takes [0]
        return out, None, None
    return out


def _h_view(func, nt, shape, *rest):
    return view(nt, shape)


def _h_unsqueeze(func, nt, dim):
    return unsqueeze(nt, dim)


def _h_squeeze(func, nt, dims=()):
    return squeeze(nt, dims) if dims else squeeze(nt, tuple(
        d for d in range(1, nt.dim()) if d != nt._ragged_idx and nt._size[d] == 1))


def _h_to_padded(func, nt, padding, output_size=None):
    return to_padded(nt, padding, output_size)


_HANDLERS = {
    "softmax": _softmax, "log_softmax": _softmax, "_softmax": _softmax,
    "sum_dim": _sum_dim, "mean_dim": _sum_dim, "amax": _amax, "amin": _amax,
    "max_dim": _select_reduce, "min_dim": _select_reduce, "argmax": _select_reduce,
    "argmin": _select_reduce,
    "linear": _linear, "matmul": _matmul, "bmm": _bmm, "mm": _matmul,
    "transpose": _h_transpose, "Unbind": _h_unbind, "unbind": _h_unbind, "Split": _h_split,
    "cat": _h_cat, "native_layer_norm": _h_layer_norm, "layer_norm": _h_layer_norm,
    "view": _h_view, "reshape": _h_view, "unsqueeze": _h_unsqueeze, "squeeze_dim": _h_squeeze,
    "to_padded_tensor": _h_to_padded,
    "permute": lambda func, nt, *dims: permute(nt, *dims),
    "scaled_dot_product_attention": lambda func, *a, **k: _sdpa()(*a, **k),
    "dropout": lambda func, nt, p=0.5, training=True, inplace=False: (
        dropout(nt, p, inplace) if training and p != 0 else nt),
    "chunk": lambda func, nt, chunks, dim=0: chunk(nt, chunks, dim),
    "split": lambda func, nt, split_size, dim=0: split(nt, split_size, dim),
    "stack": lambda func, tensors, dim=0: stack(tensors, dim),
}
_FULL = frozenset(("sum", "mean", "max", "min", "prod", "all", "any", "argmax", "argmin",
                   "norm", "_is_all_true", "_is_any_true"))


def jagged_torch_function(func, args, kwargs):
    name = getattr(func, "__name__", str(func))
    h = _HANDLERS.get(name)
    if h is not None:
        return h(func, *args, **kwargs)
    if name in _FULL and args and _is_njt(args[0]) and (len(args) == 1 or args[1] is None):
        return _full(func, args, kwargs)
    base = name[:-1] if name.endswith("_") and not name.endswith("__") else name
    if name in POINTWISE or base in POINTWISE:
        return _pointwise(func, args, kwargs)
    raise _err_nyi(name)


# ------------------------------------------------------------------------------- methods
def _to(nt, *args, **kwargs):
    return _like(nt, nt._values.to(*args, **kwargs))


def _contiguous(nt, memory_format=None):
    if nt.is_contiguous():
        return nt
    from ... import _creation
    from .nested_tensor import _dense_offsets, buffer_from_jagged
    v = buffer_from_jagged(nt).movedim(0, nt._ragged_idx - 1).contiguous()
    offsets = _dense_offsets(nt) if nt._lengths is not None else nt._offsets
    return _make_njt(v, offsets, None, nt._ragged_idx)


def _inplace(name):
    def method(self, *args, **kwargs):
        conv = [a._values if _is_njt(a) else
                (_dense_as_values(self, a, name, True) if isinstance(a, Tensor) and a.dim()
                 else a) for a in args]
        getattr(self._values, name)(*conv, **kwargs)
        return self
    method.__name__ = name
    return method


_METHODS = {
    "transpose": transpose, "unbind": unbind, "chunk": chunk, "split": split,
    "unsqueeze": unsqueeze, "flatten": flatten, "permute": permute,
    "view": lambda self, *shape: view(self, shape),
    "reshape": lambda self, *shape: view(self, shape),
    "__getitem__": getitem,
    "to_padded_tensor": lambda self, padding, output_size=None: to_padded(
        self, padding, output_size),
    "to": _to, "contiguous": _contiguous,
    "float": lambda self, memory_format=None: _to(self, _dtype_named("float32")),
    "double": lambda self, memory_format=None: _to(self, _dtype_named("float64")),
    "half": lambda self, memory_format=None: _to(self, _dtype_named("float16")),
    "type_as": lambda self, other: _to(self, other.dtype),
    "int": lambda self, memory_format=None: _to(self, _dtype_named("int32")),
    "long": lambda self, memory_format=None: _to(self, _dtype_named("int64")),
    "short": lambda self, memory_format=None: _to(self, _dtype_named("int16")),
    "bool": lambda self, memory_format=None: _to(self, _dtype_named("bool")),
    "byte": lambda self, memory_format=None: _to(self, _dtype_named("uint8")),
    "bfloat16": lambda self, memory_format=None: _to(self, _dtype_named("bfloat16")),
    "new_zeros": lambda self, size, **kw: _new_like(self, "new_zeros", size, **kw),
    "new_ones": lambda self, size, **kw: _new_like(self, "new_ones", size, **kw),
    "new_empty": lambda self, size, **kw: _new_like(self, "new_empty", size, **kw),
    "element_size": lambda self: self._values.element_size(),
    "nbytes": property(lambda self: self._values.nbytes),
    "data_ptr": lambda self: self._values.data_ptr(),
    "data": property(lambda self: _like(self, self._values.data)),
    "cpu": lambda self, memory_format=None: _to(self, "cpu"),
    "clone": lambda self, memory_format=None: _like(self, self._values.clone()),
}


def _new_like(nt, name, size, **kwargs):
    """new_zeros/new_ones/new_empty: a dense tensor of nt's dtype; PyTorch's nested ones take
    only the empty shape."""
    size = tuple(size) if isinstance(size, (tuple, list)) else (size,)
    if size != ():
        raise RuntimeError("new_empty() not supported for NJT with shape != ()")
    return getattr(nt._values, name)(size, **kwargs)


def _dtype_named(n):
    from ... import _dtype as D
    return getattr(D, n)


for _n, _f in _METHODS.items():
    setattr(NestedTensor, _n, _f)
for _n in ("add_ sub_ mul_ div_ pow_ neg_ exp_ log_ abs_ sin_ cos_ tanh_ sigmoid_ relu_ "
           "clamp_ clamp_min_ clamp_max_ zero_ fill_ copy_ masked_fill_ uniform_ normal_ "
           "sqrt_ reciprocal_ addcmul_ addcdiv_ lerp_").split():
    setattr(NestedTensor, _n, _inplace(_n))
for _n, _m in (("__iadd__", "add_"), ("__isub__", "sub_"), ("__imul__", "mul_"),
               ("__itruediv__", "div_"), ("__ipow__", "pow_")):
    setattr(NestedTensor, _n, _inplace(_m))


def dropout(nt, p, inplace=False):
    from ...nn import functional as F
    if not _is_njt(nt):   # the strided layout: dropout of its buffer
        return nt._with_values(F.dropout(nt._buffer, p, True, inplace))
    out = F.dropout(nt._values, p, True, inplace)
    return nt if inplace else _like(nt, out)
