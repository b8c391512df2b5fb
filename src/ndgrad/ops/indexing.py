# Indexing ops: gather/scatter families, index_* ops, masks, sort/topk, nonzero, unique.
#
# See ops/_registry.py for the defop language. Index tensors arrive in forwards as integer arrays;
# every formula is written with ndgrad ops so double backward works: the gradient of a
# gather is a scatter_add into zeros, whose gradient is a gather again (and likewise
# index_select <-> index_add, take <-> take_backward, masked_select <-> masked_scatter).
import builtins
import math

from .. import _dtype as D
from .._backend import ufunc_at
from ._argcheck import NOT_SCALARS as _NOT_SCALARS, argument_error as _argument_error
from .._tensor import Tensor, _make, _wrap_dim
from ._registry import defop
from ._inplace import inplace
from .pointwise import select
from ..return_types import make as _return_type

__all__ = ["index_select", "gather", "scatter", "scatter_add", "scatter_reduce", "index_add",
           "index_copy", "index_fill", "masked_fill", "masked_select", "masked_scatter", "take",
           "take_along_dim", "nonzero", "argwhere", "sort", "argsort", "topk", "kthvalue",
           "unique", "searchsorted", "bucketize", "bincount"]


sort_type = _return_type("sort", ("values", "indices"))
topk_type = _return_type("topk", ("values", "indices"))
kthvalue_type = _return_type("kthvalue", ("values", "indices"))


def _check_index_dtype(index, fname):
    if not isinstance(index, Tensor):
        raise TypeError(f"{fname}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index.dtype.name not in ("int64", "int32"):
        raise RuntimeError(f"{fname}(): Expected dtype int32 or int64 for index")


def _zeros(grad, shape):
    return grad.new_zeros(tuple(shape))


def _along(xp, ndim, dim, index):
    """The fancy-index tuple addressing input[..., index[i,j,..], ...] at every index position."""
    idx = list(xp.indices(index.shape, sparse=True)) if index.ndim else []
    idx[dim] = index
    return tuple(idx)


# ---------------------------------------------------------------- index_select / index_add

def _index_select_fwd(xp, self, dim, index):
    if self.ndim == 0:
        # PyTorch: one index into a scalar gives a scalar (more only arise internally)
        return self.reshape(1)[index.reshape(-1)].reshape(() if index.size == 1 else index.shape)
    return xp.take(self, index.reshape(-1), axis=dim)


_index_select = defop(
    "index_select", _index_select_fwd,
    self=lambda grad, self_shape, dim, index: _index_add(_zeros(grad, self_shape), dim, index,
                                                         grad, 1))


def _bounds(index, n, dim=0):
    d = index._data
    if d.size:
        bad = d[(d >= n) | (d < -n)] if n else d
        if bad.size:
            return int(bad.reshape(-1)[0])
    return None


def index_select(input, dim, index):
    _check_index_dtype(index, "index_select")
    nd = input._data.ndim
    dim = _wrap_dim(dim, nd)
    if index._data.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    n = input._data.shape[dim] if nd else 1
    if nd == 0 and index._data.size != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                           f"{index._data.size} value(s)")
    if _bounds(index, n) is not None:
        raise IndexError("index out of range in self")
    return _index_select(input, dim, index)


def _index_add_fwd(xp, self, dim, index, source, alpha):
    if self.dtype.kind == "b":      # (a bool sum is an or; NumPy's add.at would give int64)
        return _index_add_fwd(xp, self.astype("int64"), dim, index,
                              source.astype("int64") * bool(alpha), 1).astype(bool)
    out = self.copy()
    src = source if alpha == 1 else source * alpha
    if out.ndim == 0:
        out[...] += src.sum()
        return out
    ufunc_at(xp, xp.add, out, (slice(None),) * dim + (index.reshape(-1),), src)
    return out


_index_add = defop(
    "index_add", _index_add_fwd, promote=None,
    self=lambda grad: grad,
    source=lambda grad, dim, index, alpha: _index_select(grad, dim, index) * alpha
    if alpha != 1 else _index_select(grad, dim, index))


def _check_source(input, dim, index, source, fname):
    from ._inplace import _type_name
    _check_index_dtype(index, fname)
    nd = input._data.ndim
    dim = _wrap_dim(dim, nd)
    n = input._data.shape[dim] if nd else 1
    bad = _bounds(index, n)
    if bad is not None:
        if fname == "index_copy":
            raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {dim} "
                             f"with size {n}")
        raise IndexError("index out of range in self")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"{fname}_(): self ({_type_name(input.dtype)}) and source "
                           f"({_type_name(source.dtype)}) must have the same scalar type")
    return dim


def index_add(input, dim, index, source, *, alpha=1):
    dim = _check_source(input, dim, index, source, "index_add")
    _check_add_shapes(input, dim, index, source)
    return _index_add(input, dim, index, source, alpha)


def _check_add_shapes(input, dim, index, source):
    """index_add's shape checks, as ATen's index_add meta function (NumPy would broadcast, or
    raise its own ValueError)."""
    from ._inplace import _type_name
    if index._data.ndim > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: "
                         f"{index._data.ndim} with type: {_type_name(index.dtype)} and size: "
                         f"[{', '.join(map(str, index._data.shape))}]")
    n = index._data.size
    src = source._data.shape
    if source._data.ndim and n != src[dim if dim < len(src) else 0]:
        raise RuntimeError(f"index_add_(): Number of indices ({n}) should be equal to "
                           f"source.size(dim): ({src[dim]}), for dim: {dim}")
    shape = input._data.shape
    if len(shape) != len(src) or any(a != b for i, (a, b) in enumerate(zip(shape, src))
                                     if i != dim):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = [{', '.join(map(str, shape))}] source.shape = "
            f"[{', '.join(map(str, src))}]")


def _index_copy_fwd(xp, self, dim, index, source):
    out = self.copy()
    if out.ndim == 0:
        out[...] = source
        return out
    out[(slice(None),) * dim + (index.reshape(-1),)] = source
    return out


_index_copy = defop(
    "index_copy", _index_copy_fwd,
    self=lambda grad, dim, index: _index_fill(grad, dim, index, 0),
    source=lambda grad, dim, index: _index_select(grad, dim, index))


def index_copy(input, dim, index, source):
    dim = _check_source(input, dim, index, source, "index_copy")
    return _index_copy(input, dim, index, source)


def _index_fill_fwd(xp, self, dim, index, value):
    out = self.copy()
    if out.ndim == 0:
        out[...] = value
        return out
    out[(slice(None),) * dim + (index.reshape(-1),)] = value
    return out


_index_fill = defop("index_fill", _index_fill_fwd,
                    self=lambda grad, dim, index: _index_fill(grad, dim, index, 0))
_index_fill_t = defop("index_fill_tensor", _index_fill_fwd, node_name="IndexFillBackward1",
                      self=lambda grad, dim, index: _index_fill(grad, dim, index, 0),
                      # (each filled position once: a repeated index is not counted twice)
                      value=lambda grad, dim, index: _index_select(
                          grad, dim, index.reshape(-1).unique()).sum())


def index_fill(input, dim, index, value):
    _check_index_dtype(index, "index_fill")
    nd = input._data.ndim
    dim = _wrap_dim(dim, nd)
    n = input._data.shape[dim] if nd else 1
    b = _bounds(index, n)
    if b is not None:
        raise IndexError(f"index {b} is out of bounds for dimension {dim} with size {n}")
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value._data.ndim} dimension(s).")
        return _index_fill_t(input, dim, index, value)
    if value.__class__ in _NOT_SCALARS:  # (NumPy would take a sequence, or None)
        raise _argument_error("index_fill", ("input", "dim", "index", "value"), input, dim,
                              index, value)
    _check_store(value, input.dtype)
    return _index_fill(input, dim, index, value)


# ---------------------------------------------------------------- gather / scatter

def _gather_fwd(xp, self, dim, index):
    if self.ndim == 0:
        return self.reshape(1)[index.reshape(-1)].reshape(index.shape)
    return self[_along(xp, self.ndim, dim, index)]


_gather = defop("gather", _gather_fwd,
                self=lambda grad, self_shape, dim, index: _scatter_add(
                    _zeros(grad, self_shape), dim, index, grad))


def _check_gather(input, dim, index, fname, src=None):
    if not isinstance(index, Tensor) or (index.dtype.name not in ("int64", "int32") and (
            fname != "gather" or index._data.size)):   # (gather takes any empty index)
        raise RuntimeError(f"{fname}(): Expected dtype int32/int64 for index")
    nd = input._data.ndim
    dim = _wrap_dim(dim, nd)
    ind = index._data
    if ind.ndim != nd and not (nd <= 1 and ind.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as "
                           f"{'input' if src is None else 'self'} tensor")
    if isinstance(src, Tensor) and ind.ndim != src._data.ndim and not (
            src._data.ndim <= 1 and ind.ndim <= 1):      # (then src's, as ATen's)
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    for d in range(ind.ndim):
        if d != dim and nd and ind.shape[d] > input._data.shape[d]:
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index "
                f"[{', '.join(map(str, ind.shape))}] to be no larger than self "
                f"[{', '.join(map(str, input._data.shape))}] apart from dimension {dim}")
        if src is not None and src._data.ndim == ind.ndim and ind.shape[d] > src._data.shape[d]:
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index "
                f"[{', '.join(map(str, ind.shape))}] to be no larger than src "
                f"[{', '.join(map(str, src._data.shape))}]")
    n = input._data.shape[dim] if nd else 1
    b = _bounds(index, n)
    if b is not None or (ind.size and (ind < 0).any()):
        b = b if b is not None else int(ind[ind < 0].reshape(-1)[0])
        raise RuntimeError(f"index {b} is out of bounds for dimension {dim} with size {n}")
    return dim


def gather(input, dim, index, *, sparse_grad=False):
    if isinstance(index, Tensor) and index._data.size == 0 and isinstance(dim, int) and (
            index.dtype.name not in ("int64", "int32") or index.ndim != input.ndim):
        # (ATen takes an empty index of any dtype and rank: an empty result of its shape)
        return input.reshape(-1)[:0].reshape(tuple(index.shape))
    dim = _check_gather(input, dim, index, "gather")
    return _gather(input, dim, index)


def _src_region(src, index):
    """src restricted to index's shape (PyTorch reads only that corner of src)."""
    if src.ndim == 0 or src.shape == index.shape:
        return src
    return src[tuple(slice(0, s) for s in index.shape)]


def _scatter_add_fwd(xp, self, dim, index, src):
    if self.dtype.kind == "b":      # (a bool sum is an or; NumPy's add.at would give int64)
        return _scatter_add_fwd(xp, self.astype("int64"), dim, index,
                                src.astype("int64")).astype(bool)
    out = self.copy()
    if out.ndim == 0:
        out[...] += _src_region(src, index).sum()
        return out
    ufunc_at(xp, xp.add, out, _along(xp, out.ndim, dim, index), _src_region(src, index))
    return out


def _pad_to(g, shape):
    """A gradient over index's shape, zero-padded to src's shape."""
    if tuple(g.shape) == tuple(shape):
        return g
    z = g.new_zeros(tuple(shape))
    return _scatter_region(z, g)


_scatter_region = defop(
    "scatter_region", lambda xp, self, src: _put_region(self, src),
    self=None, src=lambda grad, src_shape: grad[tuple(slice(0, s) for s in src_shape)])


def _put_region(z, g):
    out = z.copy()
    out[tuple(slice(0, s) for s in g.shape)] = g
    return out


_scatter_add = defop("scatter_add", _scatter_add_fwd,
                     self=lambda grad: grad,
                     src=lambda grad, dim, index, src_shape: _pad_to(
                         _gather(grad, dim, index), src_shape))


def scatter_add(input, dim, index, src):
    dim = _check_gather(input, dim, index, "scatter_add", src)
    if src.dtype is not input.dtype:
        raise RuntimeError(f"scatter(): Expected self.dtype to be equal to src.dtype")
    return _scatter_add(input, dim, index, src)


def _scatter_fwd(xp, self, dim, index, src):
    out = self.copy()
    v = _src_region(src, index) if hasattr(src, "shape") and src.ndim else src
    if out.ndim == 0:
        if index.size:
            out[...] = v.reshape(-1)[-1] if hasattr(v, "reshape") else v
        return out
    out[_along(xp, out.ndim, dim, index)] = v
    return out


_scatter = defop("scatter", _scatter_fwd,
                 self=lambda grad, dim, index: _scatter(grad, dim, index, 0.0),
                 src=lambda grad, dim, index, src_shape: _pad_to(_gather(grad, dim, index),
                                                                 src_shape))
_scatter_value = defop("scatter_value", _scatter_fwd, node_name="ScatterBackward1",
                       self=lambda grad, dim, index: _scatter(grad, dim, index, 0.0))


def _scatter_reduce_fwd(xp, self, dim, index, src, reduce, include_self):
    out = self.copy()
    src = _src_region(src, index)
    where = _along(xp, out.ndim, dim, index) if out.ndim else ()
    if reduce == "mean":
        cnt = xp.zeros(out.shape, dtype=out.dtype)
        ufunc_at(xp, xp.add, cnt, where, 1)
        if include_self:
            cnt = cnt + 1
        else:
            out[where] = 0
        ufunc_at(xp, xp.add, out, where, src)
        cnt = xp.where(cnt == 0, 1, cnt)
        if out.dtype.kind in "iub":
            return (out // cnt).astype(out.dtype)
        return (out / cnt).astype(out.dtype)
    ufunc, ident = {"sum": (xp.add, 0), "prod": (xp.multiply, 1),
                    "amax": (xp.maximum, None), "amin": (xp.minimum, None)}[reduce]
    if not include_self:
        if ident is None:
            first = xp.zeros(out.shape, dtype=bool)
            first[where] = True
            fill = (src.max() if reduce == "amin" else src.min()) if src.size else 0
            out = xp.where(first, fill, out).astype(self.dtype)
        else:
            out[where] = ident
    ufunc_at(xp, ufunc, out, where, src)
    return out


def _scatter_reduce_grads(grad, self, dim, index, src, reduce, include_self, result):
    """PyTorch's scatter_reduce derivatives (FunctionsManual's scatter_reduce_backward: sum;
    prod with the exclusive products at zeros; mean; amax/amin ties split evenly)."""
    if self.ndim == 0 or src.ndim == 0:   # (0-d operands: as 1-d ones of their sizes)
        gs, gsrc = _scatter_reduce_pair(
            grad.reshape(-1), self.reshape(-1), 0, index.reshape(-1), src.reshape(-1), reduce,
            include_self, result.reshape(-1))
        gs, gsrc = gs.reshape(tuple(self.shape)), gsrc.reshape(tuple(src.shape))
    else:
        gs, gsrc = _scatter_reduce_pair(grad, self, dim, index, src, reduce, include_self,
                                        result)
    return gs if self.requires_grad else None, gsrc if src.requires_grad else None


def _scatter_reduce_pair(grad, self, dim, index, src, reduce, include_self, result):
    sr = src
    full = tuple(src.shape) != tuple(index.shape)
    if full:
        sr = src[tuple(slice(0, s) for s in index.shape)]
    touched = _scatter_value(self.new_zeros(tuple(self.shape)), dim, index, 1.0) > 0
    if reduce == "sum":
        gs = grad if include_self else grad.masked_fill(touched, 0.0)
        gsrc = _gather(grad, dim, index)
    elif reduce == "prod":
        from .pointwise import where
        # self's zeros and src's lone zeros get the product of the others (grad * result /
        # value is 0 / 0 there); two zeros in one product give each a zero gradient
        masked_self = self.masked_fill(self == 0, 1.0)
        gs = grad * _scatter_reduce(masked_self, dim, index, sr, "prod", include_self) \
            / masked_self
        if not include_self:
            gs = gs.masked_fill(touched, 0.0)
        src_zero = sr == 0
        zeros_at = _gather(_scatter_add(self.new_zeros(tuple(self.shape)), dim, index,
                                        src_zero.to(self.dtype)), dim, index)
        lone = src_zero & (zeros_at == 1)
        masked_src_result = _scatter_reduce(self, dim, index, sr.masked_fill(lone, 1.0), "prod",
                                            include_self)
        gsrc = where(lone, _gather(grad * masked_src_result, dim, index),
                     _gather(grad * result, dim, index) / sr.masked_fill(src_zero, 1.0))
    elif reduce == "mean":
        cnt = _scatter_add(self.new_zeros(tuple(self.shape)), dim, index,
                           index.new_ones(tuple(index.shape)).to(self.dtype))
        if include_self:
            cnt = cnt + 1
        cnt = cnt.masked_fill(cnt == 0, 1.0)
        g = grad / cnt
        gs = g if include_self else g.masked_fill(touched, 0.0)
        gsrc = _gather(g, dim, index)
    else:
        sel_self = (self == result).to(grad.dtype)
        if not include_self:
            sel_self = sel_self.masked_fill(touched, 0.0)
        res_at = _gather(result, dim, index)
        sel_src = (sr == res_at).to(grad.dtype)
        n = _scatter_add(sel_self, dim, index, sel_src)
        g = grad / n.masked_fill(n == 0, 1.0)
        gs = g * sel_self
        gsrc = _gather(g, dim, index) * sel_src
    if full:
        gsrc = _pad_to(gsrc, tuple(src.shape))
    return gs, gsrc


_scatter_reduce = defop("scatter_reduce", _scatter_reduce_fwd, backward=_scatter_reduce_grads,
                        inputs=("self", "src"))
_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    if reduce not in _REDUCES:
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    dim = _check_gather(input, dim, index, "scatter_reduce", src)
    return _scatter_reduce(input, dim, index, src, reduce, include_self)


def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    """torch.scatter(input, dim, index, src|value, *, reduce=None|'add'|'multiply')."""
    if src is None:
        src = value
    if not isinstance(src, Tensor) and src is None:
        raise TypeError("scatter() missing required argument 'src' or 'value'")
    dim = _check_gather(input, dim, index, "scatter", src if isinstance(src, Tensor) else None)
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce}")
        if not isinstance(src, Tensor):
            src = input.new_full(tuple(index.shape), src)
        return _scatter_reduce(input, dim, index, src, "sum" if reduce == "add" else "prod", True)
    if isinstance(src, Tensor):
        if src.dtype is not input.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        return _scatter(input, dim, index, src)
    if src.__class__ in _NOT_SCALARS:  # (NumPy would take a sequence)
        raise _argument_error("scatter", ("input", "dim", "index", "src"), input, dim, index, src)
    return _scatter_value(input, dim, index, src)


# ---------------------------------------------------------------- masks

def _check_mask(mask, fname):
    if not isinstance(mask, Tensor) or mask.dtype is not D.bool:
        dt = mask.dtype.name if isinstance(mask, Tensor) else type(mask).__name__
        dt = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
              "uint8": "unsigned char"}.get(dt, dt)
        raise RuntimeError(f"{fname} only supports boolean masks, but got mask with dtype {dt}")


def _masked_fill_fwd(xp, self, mask, value):
    out = select(xp, mask, value, self)
    return out.astype(self.dtype, copy=False)


_masked_fill = defop("masked_fill", _masked_fill_fwd,
                     self=lambda grad, mask: _masked_fill(grad, mask, 0))
_masked_fill_t = defop("masked_fill_tensor", _masked_fill_fwd, node_name="MaskedFillBackward1",
                       self=lambda grad, mask: _masked_fill(grad, mask, 0),
                       value=lambda grad, mask: _masked_fill(grad, ~mask, 0).sum())


def masked_fill(input, mask, value):
    _check_mask(mask, "masked_fill_")
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value._data.ndim} dimension(s).")
        if value.dtype.is_complex and not input.dtype.is_complex:
            from .._creation import _C_NAMES
            raise RuntimeError(f"value cannot be converted to type "
                               f"{_C_NAMES.get(input.dtype.name, input.dtype.name)} without "
                               "overflow")
        return _masked_fill_t(input, mask, value)
    if value.__class__ in _NOT_SCALARS:  # (NumPy would take a sequence, or None)
        raise _argument_error("masked_fill", ("input", "mask", "value"), input, mask, value)
    if isinstance(value, complex) and not input.dtype.is_complex:
        from .._creation import _C_NAMES
        raise RuntimeError(f"value cannot be converted to type "
                           f"{_C_NAMES.get(input.dtype.name, input.dtype.name)} without overflow")
    _check_store(value, input.dtype)
    return _masked_fill(input, mask, value)


def _check_store(value, dtype):
    """PyTorch's checked conversion of a Python number written into a tensor of `dtype`
    (masked_fill(300) of an int8 tensor: "value cannot be converted to type int8_t without
    overflow"; NumPy would wrap it, or raise its own OverflowError)."""
    if value.__class__ in (int, float):
        from .._creation import check_fill_value
        check_fill_value(value, dtype)


def _masked_select_fwd(xp, self, mask):
    a, m = xp.broadcast_arrays(self, mask)
    return a[m]


def _masked_scatter_fwd(xp, self, mask, source):
    a, m = xp.broadcast_arrays(self, mask)
    out = a.copy()
    k = int(m.sum())
    flat = source.reshape(-1)
    if flat.shape[0] < k:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out[m] = flat[:k]
    return out


def _masked_scatter_source_grad(grad, mask, source_shape):
    g = _masked_select(grad, mask)
    n = 1
    for s in source_shape:
        n *= s
    if g.shape[0] < n:
        from .shape import cat
        g = cat([g, g.new_zeros((n - g.shape[0],))])
    return g.reshape(tuple(source_shape))


_masked_select = defop(
    "masked_select", _masked_select_fwd,
    self=lambda grad, self, mask: _masked_scatter(
        _zeros(grad, _bshape(self, mask)), mask, grad))
_masked_scatter = defop("masked_scatter", _masked_scatter_fwd,
                        self=lambda grad, mask: _masked_fill(grad, mask, 0),
                        source=_masked_scatter_source_grad)


def _bshape(a, b):
    from .shape import broadcast_shapes
    return broadcast_shapes(tuple(a.shape), tuple(b.shape))


def masked_select(input, mask):
    _check_mask(mask, "masked_select:")
    _bshape(mask, input)
    return _masked_select(input, mask)


def masked_scatter(input, mask, source):
    _check_mask(mask, "masked_scatter_")
    if source.dtype is not input.dtype:
        from ._inplace import _type_name
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but "
                           f"got{_type_name(input.dtype)} and {_type_name(source.dtype)}")
    return _masked_scatter(input, mask, source)


# ---------------------------------------------------------------- take

def _take_backward_fwd(xp, grad, shape, index):
    n = 1
    for s in shape:
        n *= s
    z = xp.zeros(n, dtype=grad.dtype)
    ufunc_at(xp, xp.add, z, index.reshape(-1) % builtins.max(n, 1), grad.reshape(-1))
    return z.reshape(shape)


_take_backward = defop("take_backward", _take_backward_fwd,
                       grad=lambda grad, index: _take(grad, index))
_take = defop("take", lambda xp, self, index: self.reshape(-1)[index],
              self=lambda grad, self_shape, index: _take_backward(grad, self_shape, index))


def take(input, index):
    if not isinstance(index, Tensor) or index.dtype is not D.int64:
        from ._inplace import _type_name
        raise RuntimeError("take(): Expected a long tensor for index, but got "
                           f"{_type_name(index.dtype) if isinstance(index, Tensor) else type(index).__name__}")
    n = input._data.size
    ind = index._data
    if ind.size:
        bad = ind[(ind >= n) | (ind < -n)]
        if bad.size:
            raise IndexError(f"out of range: tried to access index {int(bad.reshape(-1)[0])} on a "
                             f"tensor of {n} elements.")
    return _take(input, index)


def take_along_dim(input, indices, dim=None):
    from .shape import reshape, expand, broadcast_shapes
    if dim is None:
        return gather(reshape(input, (-1,)), 0, reshape(indices, (-1,)))
    nd = input._data.ndim
    dim = _wrap_dim(dim, nd)
    s_in = list(input._data.shape)
    s_ix = list(indices._data.shape)
    if len(s_ix) != nd:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {nd} dimensions for input, and "
                           f"{len(s_ix)} dimensions for indices")
    s_in[dim] = s_ix[dim] = 1
    b = list(broadcast_shapes(tuple(s_in), tuple(s_ix)))
    bi = b.copy()
    bi[dim] = input._data.shape[dim]
    bx = b.copy()
    bx[dim] = indices._data.shape[dim]
    x = expand(input, tuple(bi)) if tuple(bi) != input._data.shape else input
    ix = expand(indices, tuple(bx)) if tuple(bx) != indices._data.shape else indices
    n = input._data.shape[dim]
    if n and ix._data.size and not ((ix._data >= 0) & (ix._data < n)).all():
        ix = ix.remainder(n)        # (PyTorch 2.13 wraps indices along dim modulo its size)
    return gather(x, dim, ix)


# ---------------------------------------------------------------- nonzero, sort, unique

def _nonzero_fwd(xp, self):
    return xp.argwhere(self).astype("int64")


_nonzero = defop("nonzero", _nonzero_fwd, differentiable=False)


def nonzero(input, *, as_tuple=False):
    r = _nonzero(input)
    if not as_tuple:
        return r
    if input._data.ndim == 0:
        from .._backend import xp_of
        return (_make(xp_of(r._data).zeros(r._data.shape[0], dtype="int64")),)
    return tuple(_make(r._data[:, i].copy()) for i in range(r._data.shape[1]))


def argwhere(input):
    return _nonzero(input)


def _sort_indices(xp, self, dim, descending):
    if not descending:
        return xp.argsort(self, axis=dim, kind="stable")
    n = self.shape[dim]
    rev = xp.flip(self, dim)
    idx = xp.flip(xp.argsort(rev, axis=dim, kind="stable"), dim)
    return (n - 1) - idx


def _sort_fwd(xp, self, dim, descending):
    if self.ndim == 0:
        return self.copy(), xp.zeros((), dtype="int64")
    idx = _sort_indices(xp, self, dim, descending)
    return xp.take_along_axis(self, idx, axis=dim), idx.astype("int64")


def _gather_grad_from_indices(grad, self_shape, dim, result1):
    g = grad[0]
    idx = result1
    if len(self_shape) == 0:
        return g
    return _scatter_add(_zeros(g, self_shape), dim, idx, g)


_sort = defop("sort", _sort_fwd, outputs=2, nondiff_outputs=(1,),
              self=_gather_grad_from_indices)
_sort_stable = defop("sort_stable", _sort_fwd, outputs=2, nondiff_outputs=(1,),
                     node_name="SortBackward1", self=_gather_grad_from_indices)


def sort(input, dim=-1, descending=False, stable=None):
    """torch.sort: always a stable sort; returns (values, indices). Passing `stable` selects
    PyTorch's other overload (grad_fn SortBackward1)."""
    dim = _wrap_dim(dim, input._data.ndim)
    v, i = (_sort if stable is None else _sort_stable)(input, dim, descending)
    return sort_type(v, i)


def argsort(input, dim=-1, descending=False, stable=False):
    return sort(input, dim, descending)[1]


def _topk_fwd(xp, self, k, dim, largest, sorted):
    if self.ndim == 0:
        return self.copy(), xp.zeros((), dtype="int64")
    idx = _sort_indices(xp, self, dim, largest)
    idx = xp.take(idx, xp.arange(k), axis=dim)
    return xp.take_along_axis(self, idx, axis=dim), idx.astype("int64")


_topk = defop("topk", _topk_fwd, outputs=2, nondiff_outputs=(1,),
              self=_gather_grad_from_indices)


def topk(input, k, dim=-1, largest=True, sorted=True):
    nd = input._data.ndim
    dim = _wrap_dim(dim, nd)
    n = input._data.shape[dim] if nd else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    v, i = _topk(input, k, dim, largest, sorted)
    return topk_type(v, i)


def _kth_fwd(xp, self, k, dim, keepdim):
    if self.ndim == 0:
        return self.copy(), xp.zeros((), dtype="int64")
    idx = xp.take(xp.argsort(self, axis=dim, kind="stable"), [k - 1], axis=dim)
    v = xp.take_along_axis(self, idx, axis=dim)
    if not keepdim:
        v, idx = v.squeeze(dim), idx.squeeze(dim)
    return v, idx.astype("int64")


def _kth_grad(grad, self_shape, dim, keepdim, result1):
    g, idx = grad[0], result1
    if len(self_shape) == 0:
        return g
    if not keepdim:
        g, idx = g.unsqueeze(dim), idx.unsqueeze(dim)
    return _scatter_add(_zeros(g, self_shape), dim, idx, g)


_kthvalue = defop("kthvalue", _kth_fwd, outputs=2, nondiff_outputs=(1,), self=_kth_grad)


def kthvalue(input, k, dim=-1, keepdim=False):
    if k.__class__ is float:  # (an int in PyTorch's parser; a float would select silently)
        raise TypeError("kthvalue(): argument 'k' (position 2) must be int, not float")
    nd = input._data.ndim
    dim = _wrap_dim(dim, nd)
    n = input._data.shape[dim] if nd else 1
    if n == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {dim} to have non-zero size.")
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    v, i = _kthvalue(input, k, dim, keepdim)
    return kthvalue_type(v, i)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """torch.unique: sorted unique values (no gradient), optionally inverse indices and counts."""
    from .._backend import xp_of
    from ._registry import refuse_special
    refuse_special("unique", input.dtype)
    a = input._data
    xp = xp_of(a)
    if dim is None:
        vals, inv, cnt = xp.unique(a.reshape(-1), return_inverse=True, return_counts=True)
        inv = inv.reshape(a.shape)
    else:
        dim = _wrap_dim(dim, a.ndim)
        vals, inv, cnt = xp.unique(a, return_inverse=True, return_counts=True, axis=dim)
        inv = inv.reshape(-1)
    out = [_make(vals)]
    if return_inverse:
        out.append(_make(inv.astype("int64")))
    if return_counts:
        out.append(_make(cnt.astype("int64")))
    return out[0] if len(out) == 1 else tuple(out)


def bincount(input, weights=None, minlength=0):
    """torch.bincount: occurrences of each value of a 1-d non-negative integer tensor (no grad)."""
    from .._backend import xp_of
    from .reduction import _type_name
    if input.dtype.is_floating_point or input.dtype.is_complex:
        name = _type_name(input.dtype)
        raise NotImplementedError(f'"bincount_cpu" not implemented for \'{name}\'')
    a = input._data
    xp = xp_of(a)
    if a.ndim != 1 or (a.size and int(a.min()) < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and (weights._data.ndim != 1 or weights._data.shape[0] != a.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    n = builtins.max(int(a.max()) + 1 if a.size else 0, minlength)
    if weights is None or a.size == 0:
        return _make(xp.bincount(a, minlength=n).astype("int64"))
    w = weights._data
    dt = "float32" if w.dtype.name == "float32" else "float64"
    return _make(xp.bincount(a, weights=w.astype("float64"), minlength=n).astype(dt))


def _batched_searchsorted(xp, seq, vals, right):
    """searchsorted of each row of vals in the same row of seq, for all rows at once: each row's
    boundaries and values sorted together (values before equal boundaries for side='left',
    after them for 'right'; NaN last, as NumPy's searchsorted), a value's answer is the number
    of boundaries sorted before it."""
    n, m = seq.shape[1], vals.shape[1]
    allv = xp.concatenate([seq, vals.astype(seq.dtype, copy=False)], axis=1)
    is_val = xp.concatenate([xp.zeros(n, "int8"), xp.ones(m, "int8")])
    tie = xp.broadcast_to(is_val if right else 1 - is_val, allv.shape)
    order = xp.lexsort((tie, allv), axis=-1)
    bound = is_val[order] == 0
    before = xp.cumsum(bound, axis=1) - bound  # boundaries strictly before each position
    out = xp.empty(vals.shape, "int64")
    rows = xp.arange(vals.shape[0])[:, None]
    val_at = ~bound
    out[xp.broadcast_to(rows, order.shape)[val_at], (order[val_at] - n)] = before[val_at]
    return out


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    from .._backend import xp_of
    seq = sorted_sequence._data
    xp = xp_of(seq)
    scalar = not isinstance(input, Tensor)
    if scalar and input.__class__ in _NOT_SCALARS:  # (NumPy would take a sequence)
        raise _argument_error("searchsorted", ("sorted_sequence", "input"), sorted_sequence, input)
    vals = xp.asarray(input) if scalar else input._data
    if side is not None:
        right = side == "right"
    s = "right" if right else "left"
    if sorter is not None:
        seq = xp.take_along_axis(seq, sorter._data, axis=-1)
    if seq.ndim == 1:
        r = xp.searchsorted(seq, vals, side=s)
    else:
        if seq.shape[:-1] != vals.shape[:-1]:
            raise RuntimeError(
                "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                "dimensions of boundaries tensor and input value tensor must match, but we got "
                f"boundaries tensor [{', '.join(map(str, seq.shape))}] and input value tensor "
                f"[{', '.join(map(str, vals.shape))}]")
        rows = math.prod(seq.shape[:-1])          # (no -1: the shapes may be empty)
        r = _batched_searchsorted(xp, seq.reshape(rows, seq.shape[-1]),
                                  vals.reshape(rows, vals.shape[-1]), right).reshape(vals.shape) \
            if rows else xp.zeros(vals.shape, dtype="int64")
    return _make(xp.asarray(r).astype("int32" if out_int32 else "int64"))


def bucketize(input, boundaries, *, out_int32=False, right=False):
    if isinstance(boundaries, Tensor) and boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


# ---------------------------------------------------------------- in-place variants

def _inplace_of(fn):
    def f(self, *args, **kwargs):
        return inplace(self, fn, *args, **kwargs)
    f.__name__ = fn.__name__ + "_"
    return f


METHODS = {
    "index_select": index_select, "gather": gather, "scatter": scatter,
    "scatter_add": scatter_add, "scatter_reduce": scatter_reduce, "index_add": index_add,
    "index_copy": index_copy, "index_fill": index_fill, "masked_fill": masked_fill,
    "masked_select": masked_select, "masked_scatter": masked_scatter, "take": take,
    "take_along_dim": take_along_dim, "nonzero": nonzero, "argwhere": argwhere, "sort": sort,
    "argsort": argsort, "topk": topk, "kthvalue": kthvalue, "unique": unique,
    "bincount": bincount,
}
for _n in ("scatter", "scatter_add", "scatter_reduce", "index_add", "index_copy", "index_fill",
           "masked_fill", "masked_scatter"):
    METHODS[_n + "_"] = _inplace_of(METHODS[_n])
