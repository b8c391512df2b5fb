# Reductions. Formulas restore the reduced dimensions (`_unreduce`) and broadcast the gradient
# back over them; see ops/_registry.py for the defop language.
#
# `dim` reaches a forward already wrapped: None (all dims) or a sorted tuple of dims. Ops that
# select elements (max/min/median with `dim`) return indices and route the gradient through the
# `_gather`/`_scatter` pair, each the other's derivative, so every order of derivative works.
# Full max/min/median/amax/amin split the gradient evenly between ties, as PyTorch does.
import math as _math

from .. import _dtype as D
from .._backend import numpy as _np, xp_of, ufunc_accumulate, ufunc_reduce
from .._tensor import Tensor, _wrap_dim, _make
from ..return_types import make as _return_type
from ._registry import defop
from . import _cascade
from .shape import expand, reshape, _expand

__all__ = ["sum", "nansum", "mean", "nanmean", "prod", "max", "min", "amax", "amin", "argmax",
           "argmin", "var", "std", "var_mean", "std_mean", "norm", "vector_norm", "logsumexp",
           "cumsum", "cumprod", "all", "any", "count_nonzero", "median"]

_INF = float("inf")


def _dims(dim, ndim):
    """None -> None (all dims); int or sequence -> sorted tuple of wrapped dims."""
    if dim is None:
        return None
    if isinstance(dim, (tuple, list)):
        if len(dim) == 0:
            return None
        wrapped = [_wrap_dim(d, ndim) for d in dim]
        seen = set()
        for d in wrapped:
            if d in seen:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
            seen.add(d)
        dims = tuple(sorted(wrapped))
    else:
        dims = (_wrap_dim(dim, ndim),)
    return dims if ndim else ()  # a 0-d tensor accepts dim 0 / -1 and reduces nothing


def _keep_shape(shape, dims):
    if dims is None:
        return (1,) * len(shape)
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def _unreduce(grad, self_shape, dim, keepdim):
    """Broadcast a reduction's gradient back to the input's shape."""
    if not keepdim:
        grad = reshape(grad, _keep_shape(self_shape, dim))
    return expand(grad, self_shape)


def _keep(t, self_shape, dim, keepdim):
    """A reduced tensor with its reduced dims restored as size 1 (no expansion)."""
    return t if keepdim else reshape(t, _keep_shape(self_shape, dim))


def _count(shape, dim):
    n = 1
    for i, s in enumerate(shape):
        if dim is None or i in dim:
            n *= s
    return n


def _type_name(d):
    return d._cname


def _int_to_long(a, dtype):
    if dtype is not None:
        return a.astype(dtype.np)
    if a.dtype.kind in "biu":
        return a.astype("int64")
    return a


# ---------------------------------------------------------------- float16 accumulation

def _f16_acc(forward):
    """`forward` as PyTorch's CPU kernels run it on float16: accumulated in float32 (a sum of
    4096 ones is 4096, not float16's 2048; the norm of [300, 400] is 500, not inf), the result
    rounded to float16 once. An explicit dtype argument (sum(dtype=torch.float32)) keeps the
    result it asks for."""
    import functools

    @functools.wraps(forward)
    def acc(xp, self, *args, **kwargs):
        if self.dtype != _F16:
            return forward(xp, self, *args, **kwargs)
        out = forward(xp, self.astype(_F32), *args, **kwargs)
        for a in (*args, *kwargs.values()):
            if a.__class__ is D.dtype:
                return out
        if isinstance(out, tuple):
            return tuple(_to_f16(o) for o in out)
        return _to_f16(out)
    return acc


_F16, _F32 = _np.dtype("float16"), _np.dtype("float32")


def _to_f16(a):
    return a.astype(_F16) if getattr(a, "dtype", None) == _F32 else a


# ---------------------------------------------------------------- sum, mean, prod

def _cascade_sum(a, dim, keepdim):
    """PyTorch's float sum of a host array (ops/_cascade.py, Note [cascade sum]), or None
    where that module does not follow its loop (NumPy's sum then: the same value within
    rounding)."""
    r = _cascade.sum(a, dim)
    if r is None or not keepdim:
        return r
    return r.reshape(tuple(1 if dim is None or i in dim else n for i, n in enumerate(a.shape)))


def _sum_fwd(xp, self, dim, keepdim, dtype=None):
    a = _int_to_long(self, dtype)
    r = _cascade_sum(a, dim, keepdim) if a.dtype.kind in "fc" else None
    return xp.sum(a, axis=dim, keepdims=keepdim) if r is None else r


_sum_all = defop("sum", _f16_acc(lambda xp, self, dtype=None: _sum_fwd(xp, self, None, False,
                                                                       dtype)),
                 node_name="SumBackward0",
                 self=lambda grad, self_shape: _expand(grad, self_shape))  # (the op: raw-able)
_sum_dim = defop("sum_dim", _f16_acc(_sum_fwd), node_name="SumBackward1",
                 self=lambda grad, self_shape, dim, keepdim: _unreduce(grad, self_shape, dim,
                                                                       keepdim))


def _running_sum_fwd(xp, self, dim):
    if xp is _np and self.dtype.kind == "f" and self.dtype.itemsize >= 4:
        return _cascade.sequential(self, dim)
    if self.dtype.itemsize < 4 and self.dtype.kind not in "iub":   # (float16, bfloat16)
        return _running_sum_fwd(xp, self.astype(_np.float32), dim).astype(self.dtype)
    return xp.sum(self, axis=dim)


# ((0 + x0) + x1) + ... along one dim, in the tensor's dtype: the order of kernels that add
# rows one at a time (embedding_bag's sums of a bag's rows), which torch.sum's cascade is not
running_sum = defop("running_sum", _running_sum_fwd, node_name="SumBackward1",
                    self=lambda grad, self_shape, dim: _unreduce(grad, self_shape, (dim,),
                                                                 False))


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """torch.sum(input, dim=None, keepdim=False, *, dtype=None)."""
    dtype = D.to_dtype(dtype)
    if dim is None:
        return _sum_all(input, dtype)
    return _sum_dim(input, _dims(dim, input._data.ndim), keepdim, dtype)


def _nansum_fwd(xp, self, dim, keepdim, dtype=None):
    a = _int_to_long(self, dtype)
    if a.dtype.kind == "f" and type(a) is _np.ndarray:   # (PyTorch's: NaNs loaded as 0, then
        r = _cascade_sum(xp.where(xp.isnan(a), a.dtype.type(0), a), dim, keepdim)   # its sum)
        if r is not None:
            return r
    return xp.nansum(a, axis=dim, keepdims=keepdim)


def _nansum_grad(grad, self, self_shape, dim, keepdim):
    # a product, as PyTorch's nansum_backward: an inf/nan grad gives nan at NaN inputs
    # (nanmean of an all-NaN slice), which where(...) would hide
    from .pointwise import isnan, logical_not
    return _unreduce(grad, self_shape, dim, keepdim) * logical_not(isnan(self))


_nansum = defop("nansum", _f16_acc(_nansum_fwd), self=_nansum_grad)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """torch.nansum: sum treating NaN as zero."""
    return _nansum(input, _dims(dim, input._data.ndim), keepdim, D.to_dtype(dtype))


def _np_mean(xp, a, axis, keepdims):
    """xp.mean, except that a mean over no elements is nan without NumPy's "Mean of empty
    slice" warning (a warnings.warn, which no errstate silences)."""
    if a.size:
        return xp.mean(a, axis=axis, keepdims=keepdims)
    with _np.errstate(all="ignore"):  # host: error state
        n = _count(a.shape, axis)
        return xp.sum(a, axis=axis, keepdims=keepdims) / (n if n else a.dtype.type(0))


def _mean_fwd(xp, self, dim, keepdim, dtype=None):
    if dtype is not None:
        self = self.astype(dtype.np)
    if self.dtype.kind in "fc":   # (PyTorch's CPU mean: its sum, divided by the count)
        r = _cascade_sum(self, dim, keepdim)
        if r is not None:
            return r / self.dtype.type(_count(self.shape, dim))
    return _np_mean(xp, self, dim, keepdim)


_mean_all = defop("mean", _f16_acc(lambda xp, self, dtype=None: _mean_fwd(xp, self, None, False,
                                                                          dtype)),
                  node_name="MeanBackward0",
                  self=lambda grad, self_shape: expand(grad / _count(self_shape, None),
                                                       self_shape))
_mean_dim = defop(
    "mean_dim", _f16_acc(_mean_fwd), node_name="MeanBackward1",
    self=lambda grad, self_shape, dim, keepdim: _unreduce(grad / _count(self_shape, dim),
                                                          self_shape, dim, keepdim))


def _check_float(name, input, dtype=None):
    d = dtype or input.dtype
    if not (d.is_floating_point or d.is_complex):
        which = "Optional" if dtype is not None else "Input"    # (the dtype argument's fault)
        raise RuntimeError(
            f"{name}(): could not infer output dtype. {which} dtype must be either a floating "
            f"point or complex dtype. Got: {_type_name(d)}")


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """torch.mean(input, dim=None, keepdim=False, *, dtype=None)."""
    dtype = D.to_dtype(dtype)
    _check_float("mean", input, dtype)
    if dim is None:
        return _mean_all(input, dtype)
    return _mean_dim(input, _dims(dim, input._data.ndim), keepdim, dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """torch.nanmean: mean over the non-NaN elements."""
    from .pointwise import isnan, logical_not
    _check_float("nanmean", input, D.to_dtype(dtype))
    count = sum(logical_not(isnan(input)), dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


def _prod_fwd(xp, self, dim, keepdim, dtype=None):
    if dtype is D.bool:     # (a bool product is a logical and; NumPy's would be int64)
        return xp.all(self, axis=dim, keepdims=keepdim)
    a = _int_to_long(self, dtype)
    r = _prod_rows(a, dim) if xp is _np else None
    if r is not None:
        return r.reshape(_reduced_shape(a.shape, dim, keepdim))
    return xp.prod(a, axis=dim, keepdims=keepdim)


def _prod_rows(a, dim, split=True):
    """PyTorch's float32/float64 product over the last dim of a C-contiguous array, or over all
    of it: its vectorized inner reduction (Reduce.h) multiplies blocks of four 256-bit vectors
    lane by lane, block after block, then (v0 v1)(v2 v3), the lanes in order, and the tail
    elements one by one; a whole tensor of more than 32768 elements on several threads, a
    contiguous piece a thread, the pieces' products in order. None elsewhere (a leading-dims
    product is NumPy's row after row already; the rest as NumPy's)."""
    if a.dtype.kind != "f" or a.dtype.itemsize < 4 or not a.flags.c_contiguous or not a.size:
        return None
    sizes, red = _cascade._runs(a.shape, range(a.ndim) if dim is None else dim)
    if True not in red:
        return None
    if False not in red:
        n = a.size
        piece = _cascade.thread_piece(n) if split else None
        if piece is not None:                        # (a piece a thread)
            flat = a.reshape(-1)
            parts = [_prod_rows(flat[lo:lo + piece], None, False)
                     for lo in range(0, n, piece)]
            return _np.multiply.accumulate(_np.concatenate(parts))[-1:]  # host: as below
        x = a.reshape(1, -1)
    elif red == [False, True]:                       # (the trailing dims: rows)
        x = a.reshape(sizes)
    else:
        return None
    w = _cascade.lanes(a.dtype)
    R, n = x.shape
    blocks = n // (4 * w)
    acc = _np.multiply.accumulate  # host: NumPy arrays only (checked above)
    if blocks:
        blk = x[:, :blocks * 4 * w].reshape(R, blocks, 4, w)
        v = _np.multiply.reduce(blk, axis=1)   # host: block after block, lane by lane
        lanes = (v[:, 0] * v[:, 1]) * (v[:, 2] * v[:, 3])
        first = acc(lanes, axis=1)[:, -1:]                          # (the lanes in order)
    else:
        first = _np.ones((R, 1), a.dtype)  # host: as above (the identity it starts from)
    rest = _np.concatenate([first, x[:, blocks * 4 * w:]], 1)  # host: then the tail in order
    return acc(rest, axis=1)[:, -1]


def _prod_others(self, dim):
    """prod_{j != k} x_j along `dim` for every k, without dividing (so zeros are fine): the
    exclusive products from the left times those from the right, built from cumprod, so the
    second derivative is right too."""
    from .shape import cat, flip, narrow
    n = self._data.shape[dim]
    if n == 1:
        return self * 0 + 1
    one = narrow(self, dim, 0, 1) * 0 + 1
    left = cumprod(cat([one, narrow(self, dim, 0, n - 1)], dim), dim)
    right = flip(cumprod(flip(cat([narrow(self, dim, 1, n - 1), one], dim), [dim]), dim), [dim])
    return left * right


def _prod_grad(grad, self, result, self_shape, dim, keepdim):
    """d prod / d x_k = the product of the others: result / x_k when no factor is zero."""
    grad = _keep(grad, self_shape, dim, keepdim)
    from .complex import _cj  # (Note [Complex gradients])
    if not (self._data == 0).any():
        return grad * _cj(_keep(result, self_shape, dim, keepdim) / self)
    if dim is None:
        flat = reshape(self, (-1,))
        return grad * _cj(reshape(_prod_others(flat, 0), self_shape))
    return grad * _cj(_prod_others(self, dim[0])) if dim else grad


_prod_all = defop("prod", _f16_acc(lambda xp, self, dtype=None: _prod_fwd(xp, self, None, False,
                                                                          dtype)),
                  node_name="ProdBackward0",
                  self=lambda grad, self, result, self_shape: _prod_grad(
                      grad, self, result, self_shape, None, False))
_prod_dim = defop("prod_dim", _f16_acc(_prod_fwd), node_name="ProdBackward1", self=_prod_grad)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    """torch.prod(input, dim=None, keepdim=False, *, dtype=None)."""
    if isinstance(dim, (tuple, list)):
        raise TypeError(
            f"prod() received an invalid combination of arguments - got (Tensor, "
            f"{type(dim).__name__}), but expected one of:\n"
            " * (Tensor input, *, torch.dtype dtype = None)\n"
            " * (Tensor input, int dim, bool keepdim = False, *, torch.dtype dtype = None, "
            "Tensor out = None)\n")
    dtype = D.to_dtype(dtype)
    if dim is None:
        return _prod_all(input, dtype)
    return _prod_dim(input, _dims(dim, input._data.ndim), keepdim, dtype)


# ---------------------------------------------------------------- selecting reductions

def _gather_fwd(xp, self, indices, dim, keepdim):
    if self.ndim == 0:
        return self.copy()
    idx = indices if keepdim else xp.expand_dims(indices, dim)
    r = xp.take_along_axis(self, idx, axis=dim)
    return r if keepdim else xp.squeeze(r, axis=dim)


def _scatter_fwd(xp, grad, indices, dim, keepdim, shape):
    if len(shape) == 0:
        return grad.copy()
    out = xp.zeros(shape, dtype=grad.dtype)
    idx = indices if keepdim else xp.expand_dims(indices, dim)
    g = grad if keepdim else xp.expand_dims(grad, dim)
    xp.put_along_axis(out, idx, g, axis=dim)
    return out


_gather = defop("value_selecting_gather", _gather_fwd, node_name="GatherBackward0",
                self=lambda grad, indices, dim, keepdim, self_shape: _scatter(
                    grad, indices, dim, keepdim, self_shape))
_scatter = defop("value_selecting_reduction_backward", _scatter_fwd,
                 node_name="ValueSelectingReductionBackwardBackward0",
                 grad=lambda grad, indices, dim, keepdim: _gather(grad, indices, dim, keepdim))


def _evenly(grad, self, result):
    """Full max/min/median: the gradient is shared equally by every element equal to result."""
    from .pointwise import isnan
    mask = (self == result) | (isnan(self) & isnan(result))
    return grad * mask / sum(mask)


def _selected(name, kernel):
    def fwd(xp, self, dim, keepdim):
        idx = _arg_kernel(xp, self, dim, kernel)
        values = _gather_fwd(xp, self, idx, dim, True)
        if keepdim or self.ndim == 0:
            return values, idx
        return xp.squeeze(values, axis=dim), xp.squeeze(idx, axis=dim)
    return fwd


def _arg_kernel(xp, self, dim, kernel):
    """Indices (keepdim shape) of the selected element along dim."""
    if self.ndim == 0:
        return xp.zeros((), dtype="int64")
    if kernel == "median":
        n = self.shape[dim]
        order = xp.argsort(self, axis=dim, kind="stable")
        idx = xp.take(order, [(n - 1) // 2], axis=dim)
        nan = xp.isnan(self)
        if nan.any():
            has = nan.any(axis=dim, keepdims=True)
            idx = xp.where(has, xp.expand_dims(xp.argmax(nan, axis=dim), dim), idx)
        return idx.astype("int64")
    f = xp.argmax if kernel == "max" else xp.argmin
    return xp.expand_dims(f(self, axis=dim), dim).astype("int64")


def _select_op(name, node_name, kernel):
    return defop(name, _selected(name, kernel), outputs=2, nondiff_outputs=(1,),
                 node_name=node_name,
                 self=lambda grad, result1, self_shape, dim, keepdim: _scatter(
                     grad[0], result1, dim, keepdim, self_shape))


_max_dim = _select_op("max_dim", "MaxBackward0", "max")
_min_dim = _select_op("min_dim", "MinBackward0", "min")
_median_dim = _select_op("median_dim", "MedianBackward1", "median")


def _full_fwd(kernel):
    def fwd(xp, self):
        if kernel == "max":
            return xp.max(self)
        if kernel == "min":
            return xp.min(self)
        flat = self.reshape(-1)
        if flat.size == 0 or xp.isnan(flat).any():
            return xp.asarray(xp.nan, dtype=self.dtype)
        return xp.sort(flat)[(flat.size - 1) // 2]
    return fwd


_max_all = defop("max", _full_fwd("max"), node_name="MaxBackward1", self=_evenly)
_min_all = defop("min", _full_fwd("min"), node_name="MinBackward1", self=_evenly)
_median_all = defop("median", _full_fwd("median"), node_name="MedianBackward0", self=_evenly)


def _selecting(name, full, with_dim, pair=None):
    rtype = _return_type(name)

    def f(input, dim=None, keepdim=False, *, out=None, other=None):
        if other is not None and pair is not None:  # max(input, other=t): the pair overload
            if dim is not None or keepdim:
                raise TypeError(f"{name}() received an invalid combination of arguments")
            dim = other
        if isinstance(dim, Tensor):
            if pair is None:
                raise TypeError(f"{name}(): argument 'dim' must be int, not Tensor")
            return pair(input, dim)
        if dim is None:
            if keepdim:
                raise TypeError(f"{name}() received an invalid combination of arguments - got "
                                "(Tensor, keepdim=bool)")
            if input._data.size == 0 and name != "median":
                raise RuntimeError(
                    f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
                    + (" Specify the reduction dim with the 'dim' argument." if name != "median"
                       else ""))
            return full(input)
        if isinstance(dim, (tuple, list)):
            raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
        nd = input._data.ndim
        d = _wrap_dim(dim, nd)
        if nd and input._data.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        values, indices = with_dim(input, d, keepdim)
        return rtype(values, indices)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"torch.{name}(input) -> Tensor; torch.{name}(input, dim, keepdim=False) -> "
                 f"(values, indices)")
    return f


def _pair_max(input, other):
    from .pointwise import maximum
    return maximum(input, other)


def _pair_min(input, other):
    from .pointwise import minimum
    return minimum(input, other)


max = _selecting("max", _max_all, _max_dim, _pair_max)
min = _selecting("min", _min_all, _min_dim, _pair_min)
median = _selecting("median", _median_all, _median_dim)


def _amax_grad(grad, self, result, self_shape, dim, keepdim):
    from .pointwise import isnan
    grad = _keep(grad, self_shape, dim, keepdim)
    result = _keep(result, self_shape, dim, keepdim)
    mask = (self == result) | (isnan(self) & isnan(result))
    count = sum(mask, dim, keepdim=True) if dim is not None else sum(mask)
    return grad * mask / count


def _amax_fwd(xp, self, dim, keepdim):
    return xp.max(self, axis=dim, keepdims=keepdim)


def _amin_fwd(xp, self, dim, keepdim):
    return xp.min(self, axis=dim, keepdims=keepdim)


_amax = defop("amax", _amax_fwd, self=_amax_grad)
_amin = defop("amin", _amin_fwd, self=_amax_grad)


def _check_nonempty(name, input, dims):
    shape = input._data.shape
    if input._data.size == 0 and dims is None:   # (amax(empty): all dims, PyTorch's words)
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    if input._data.size == 0:
        if not dims and name in ("amax", "amin"):
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument.")
        for d in (range(len(shape)) if dims is None else dims):
            if shape[d] == 0:
                raise IndexError(
                    f"{name}(): Expected reduction dim {d} to have non-zero size.")


def amax(input, dim=(), keepdim=False):
    """torch.amax(input, dim=(), keepdim=False): max over dims (all when empty)."""
    dims = _dims(dim, input._data.ndim)
    _check_nonempty("amax", input, dims)
    return _amax(input, dims, keepdim)


def amin(input, dim=(), keepdim=False):
    """torch.amin(input, dim=(), keepdim=False): min over dims (all when empty)."""
    dims = _dims(dim, input._data.ndim)
    _check_nonempty("amin", input, dims)
    return _amin(input, dims, keepdim)


def _arg_fwd(kernel):
    def fwd(xp, self, dim, keepdim):
        f = xp.argmax if kernel == "argmax" else xp.argmin
        if dim is None:
            r = f(self.reshape(-1))
            return xp.reshape(r, (1,) * self.ndim) if keepdim else xp.asarray(r)
        if self.ndim == 0:
            return xp.zeros((), dtype="int64")
        return f(self, axis=dim, keepdims=keepdim).astype("int64", copy=False)
    return fwd


_argmax = defop("argmax", _arg_fwd("argmax"), differentiable=False)
_argmin = defop("argmin", _arg_fwd("argmin"), differentiable=False)


def _argfn(name, op):
    def f(input, dim=None, keepdim=False):
        if dim is None:
            if input._data.size == 0 and name != "median":
                raise IndexError(
                    f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
            return op(input, None, keepdim)
        d = _wrap_dim(dim, input._data.ndim)
        if input._data.ndim and input._data.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        return op(input, d, keepdim)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"torch.{name}(input, dim=None, keepdim=False)"
    return f


argmax = _argfn("argmax", _argmax)
argmin = _argfn("argmin", _argmin)


# ---------------------------------------------------------------- var, std

# PyTorch's CPU var and std accumulate float32 in double (at::acc_type) and round the result
# once: so does ndgrad (the float32 two-pass variance differed in the last bit for about half
# of the outputs). A complex variance is the real part's plus the imaginary part's, each rounded
# to the real type first (ATen's std_var for complex inputs); its std is their sum's square root.
_F64 = _np.dtype("float64")
_WIDE = {_F32: _F64, _np.dtype("complex64"): _np.dtype("complex128")}


def _var_fwd(xp, self, dim, correction, keepdim):
    if self.dtype.kind == "c":
        re, im = (_var_fwd(xp, p, dim, correction, keepdim) for p in (self.real, self.imag))
        return re + im
    a = self.astype(_F64) if self.dtype == _F32 else self
    with _np.errstate(divide="ignore", invalid="ignore"):  # host: error state
        if _count(a.shape, dim) - correction <= 0:  # no degrees of freedom: NumPy's value,
            d = a - _np_mean(xp, a, dim, True)        # without its warnings.warn
            r = xp.sum(d * d, axis=dim, keepdims=keepdim) / a.dtype.type(0)
        else:
            r = xp.var(a, axis=dim, ddof=correction, keepdims=keepdim)
    return r.astype(self.dtype, copy=False) if a is not self else r


def _std_fwd(xp, self, dim, correction, keepdim):
    with _np.errstate(divide="ignore", invalid="ignore"):  # host: error state
        if self.dtype == _F32:       # (the square root in double too, then one rounding)
            v = _var_fwd(xp, self.astype(_F64), dim, correction, keepdim)
            return xp.sqrt(v).astype(_F32)
        return xp.sqrt(_var_fwd(xp, self, dim, correction, keepdim))


def _centered(self, dim):
    return self - (mean(self, dim, keepdim=True) if dim is not None else mean(self))


def _inv_dof(self_shape, dim, correction):
    """1 / (N - correction); inf with no degrees of freedom left (PyTorch's nan gradient)."""
    dof = _count(self_shape, dim) - correction
    return 1.0 / dof if dof else float("inf")


def _var_grad(grad, self, self_shape, dim, correction, keepdim):
    grad = _keep(grad, self_shape, dim, keepdim)
    return grad * (2.0 * _inv_dof(self_shape, dim, correction)) * _centered(self, dim)


def _std_grad(grad, self, result, self_shape, dim, correction, keepdim):
    from .pointwise import where
    grad = _keep(grad, self_shape, dim, keepdim)
    result = _keep(result, self_shape, dim, keepdim)
    g = where(result == 0, 0.0, grad / where(result == 0, 1.0, result))
    return g * _inv_dof(self_shape, dim, correction) * _centered(self, dim)


_var = defop("var", _f16_acc(_var_fwd), self=_var_grad)
_std = defop("std", _f16_acc(_std_fwd), self=_std_grad)


def _mean64(xp, self, dim, keepdim):
    """var_mean's mean: accumulated with the variance (in double for float32), rounded once."""
    wide = _WIDE.get(self.dtype)
    if wide is not None:
        return _np_mean(xp, self.astype(wide), dim, keepdim).astype(self.dtype)
    return _np_mean(xp, self, dim, keepdim)


def _var_mean_fwd(xp, self, dim, correction, keepdim):
    return _var_fwd(xp, self, dim, correction, keepdim), _mean64(xp, self, dim, keepdim)


def _std_mean_fwd(xp, self, dim, correction, keepdim):
    return _std_fwd(xp, self, dim, correction, keepdim), _mean64(xp, self, dim, keepdim)


def _var_mean_grad(grad, self, self_shape, dim, correction, keepdim):
    gv, gm = grad
    return (_var_grad(gv, self, self_shape, dim, correction, keepdim)
            + _unreduce(gm / _count(self_shape, dim), self_shape, dim, keepdim))


def _std_mean_grad(grad, self, result, self_shape, dim, correction, keepdim):
    gv, gm = grad
    return (_std_grad(gv, self, result[0], self_shape, dim, correction, keepdim)
            + _unreduce(gm / _count(self_shape, dim), self_shape, dim, keepdim))


_var_mean = defop("var_mean", _f16_acc(_var_mean_fwd), outputs=2, self=_var_mean_grad)
_std_mean = defop("std_mean", _f16_acc(_std_mean_fwd), outputs=2, self=_std_mean_grad)


def _var_args(name, input, dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):  # var(input, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        from ._argcheck import combination_error
        raise combination_error(name, (
            "(tuple of ints dim, bool unbiased = True, bool keepdim = False)",
            "(tuple of ints dim = None, *, Number correction = None, bool keepdim = False)",
            "(bool unbiased = True)"), () if dim is None else (dim,),
            {"correction": correction, "unbiased": unbiased})
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError("std and var only support floating point and complex dtypes")
    if correction is None:
        correction = 0 if unbiased is False else 1
    return _dims(dim, input._data.ndim), correction


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """torch.var(input, dim=None, *, correction=1, keepdim=False) (or `unbiased`)."""
    dims, c = _var_args("var", input, dim, unbiased, keepdim, correction)
    return _var(input, dims, c, keepdim)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """torch.std(input, dim=None, *, correction=1, keepdim=False) (or `unbiased`)."""
    dims, c = _var_args("std", input, dim, unbiased, keepdim, correction)
    return _std(input, dims, c, keepdim)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """torch.var_mean: (var, mean) in one pass."""
    dims, c = _var_args("var_mean", input, dim, unbiased, keepdim, correction)
    return _var_mean(input, dims, c, keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """torch.std_mean: (std, mean) in one pass."""
    dims, c = _var_args("std_mean", input, dim, unbiased, keepdim, correction)
    return _std_mean(input, dims, c, keepdim)


# ---------------------------------------------------------------- norms

_SQ_BLOCK = 1024    # elements a dot product of sum_squares (then the blocks' sums in double)


def sum_squares(xp, a):
    """The sum of a real float array's squares as a Python float: dot products of 1024-element
    blocks (BLAS, one pass, no temporary) added in double. More accurate than PyTorch's float32
    kernel (one 16-lane fused accumulator over the whole tensor: a relative error of 3e-5 on
    2 M normal values, against ~1e-9 here) and faster than squaring into a temporary (2 M
    float32: 0.12 ms against 0.5)."""
    flat = a.reshape(-1)
    n = flat.size - flat.size % _SQ_BLOCK
    total = 0.0
    if n:
        rows = flat[:n].reshape(-1, _SQ_BLOCK)
        total = float(xp.vecdot(rows, rows).sum(dtype=xp.float64))
    if n < flat.size:
        tail = flat[n:]
        total += float(xp.dot(tail, tail))
    return total


def _norm_fwd(xp, self, ord, dim, keepdim):
    if ord == 2 and (dim is None or len(dim) == self.ndim) and self.dtype.kind == "f" and \
            self.size and hasattr(xp, "vecdot"):
        # (a sum of squares beyond the dtype's range is inf, as PyTorch's accumulator's)
        ss = sum_squares(xp, self)
        r = xp.sqrt(xp.asarray(_INF if ss > _np.finfo(self.dtype).max else ss, self.dtype))
        return r.reshape((1,) * self.ndim) if keepdim else r
    a = xp.abs(self)
    if ord == 2:
        r = xp.sqrt(xp.sum(a * a, axis=dim, keepdims=keepdim))
    elif ord == _INF:
        r = xp.max(a, axis=dim, keepdims=keepdim) if a.size else xp.zeros(
            _reduced_shape(a.shape, dim, keepdim), a.dtype)
    elif ord == -_INF:
        r = xp.min(a, axis=dim, keepdims=keepdim)
    elif ord == 0:
        r = xp.sum(a != 0, axis=dim, keepdims=keepdim)
    elif ord == 1:
        r = xp.sum(a, axis=dim, keepdims=keepdim)
    else:
        with _np.errstate(divide="ignore"):  # host: error state
            r = xp.power(xp.sum(xp.power(a, ord), axis=dim, keepdims=keepdim), 1.0 / ord)
    return xp.asarray(r).astype(a.dtype, copy=False)  # (real for complex input)


def _reduced_shape(shape, dim, keepdim):
    if keepdim:
        return _keep_shape(shape, dim)
    return tuple(s for i, s in enumerate(shape) if dim is not None and i not in dim)


def _norm_grad(grad, self, result, self_shape, ord, dim, keepdim):
    from .pointwise import where, sgn as sign, abs as _abs  # (sgn: complex too)
    if ord == 0:
        return None
    grad = _keep(grad, self_shape, dim, keepdim)
    result = _keep(result, self_shape, dim, keepdim)
    if ord == 1:
        return grad * sign(self)
    zero = result == 0
    safe = where(zero, 1.0, result)
    if ord == 2:
        return grad * where(zero, 0.0, self / safe)
    if ord in (_INF, -_INF):
        mask = _abs(self) == result
        count = sum(mask, dim, keepdim=True) if dim is not None else sum(mask)
        return sign(self) * (grad / count) * mask
    return grad * where(zero, 0.0, self * _abs(self) ** (ord - 2) / safe ** (ord - 1))


_vector_norm = defop("linalg_vector_norm", _f16_acc(_norm_fwd), promote="float",
                     node_name="LinalgVectorNormBackward0", self=_norm_grad)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None)."""
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            f"{_type_name(x.dtype)}")
    if isinstance(ord, str):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not "
                        "str")
    from .linalg import check_norm_dtype, _ord_str
    check_norm_dtype(dtype, x.dtype, "linalg.vector_norm")
    if dtype is not None:
        x = x.to(D.to_dtype(dtype))
    if x._data.size == 0 and (ord < 0 or ord == _INF):
        # PyTorch: no identity for min or max, checked in the order the dims are given
        given = dim if isinstance(dim, (tuple, list)) else (() if dim is None else (dim,))
        if not given:
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {_ord_str(ord)} norm on an empty tensor "
                "because the operation does not have an identity")
        for d in given:
            if x._data.shape[_wrap_dim(d, x._data.ndim)] == 0:
                raise RuntimeError(
                    f"linalg.vector_norm cannot compute the {_ord_str(ord)} norm on the "
                    f"dimension {d}because this dimension is empty and the operation does not "
                    "have an identity")
    dims = _dims(dim, x._data.ndim)
    return _vector_norm(x, float(ord), dims, keepdim)


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm(input, p='fro', dim=None, keepdim=False, dtype=None): vector p-norms;
    'fro' is the 2-norm over `dim` (all elements by default)."""
    if p == "fro" or p is None:
        p = 2
    elif p == "nuc":
        from .. import linalg as _linalg
        mn = getattr(_linalg, "matrix_norm", None)
        if mn is None:
            raise NotImplementedError("norm(p='nuc') needs linalg.matrix_norm")
        return mn(input, "nuc", dim if dim is not None else (-2, -1), keepdim, dtype=dtype)
    return vector_norm(input, p, dim, keepdim, dtype=dtype)


# ---------------------------------------------------------------- logsumexp, cumulative

def _logsumexp_fwd(xp, self, dim, keepdim):
    if self.size == 0:
        return xp.log(xp.sum(xp.exp(self), axis=dim, keepdims=keepdim))
    # (complex inputs: shifted by the largest real part, as ATen's, so the imaginary part of
    # the result is the principal value's)
    m = xp.max(self.real if self.dtype.kind == "c" else self, axis=dim, keepdims=True)
    m = xp.where(xp.isinf(m), 0, m)
    with _np.errstate(divide="ignore"):  # host: error state
        r = xp.log(xp.sum(xp.exp(self - m), axis=dim, keepdims=True)) + m
    return r if keepdim else xp.reshape(r, _reduced_shape(self.shape, dim, False))


def _logsumexp_grad(grad, self, result, self_shape, dim, keepdim):
    from .pointwise import exp
    from .complex import _cj
    grad = _keep(grad, self_shape, dim, keepdim)
    result = _keep(result, self_shape, dim, keepdim)
    return grad * _cj(exp(self - result))


_logsumexp = defop("logsumexp", _f16_acc(_logsumexp_fwd), promote="float", self=_logsumexp_grad)


def logsumexp(input, dim, keepdim=False):
    """torch.logsumexp(input, dim, keepdim=False): log(sum(exp(input))), computed stably."""
    return _logsumexp(input, _dims(dim, input._data.ndim), keepdim)


def _revcumsum(t, dim):
    """sum_{i >= k} t_i along dim, with differentiable ops: PyTorch's flip, cumsum, flip (a sum
    minus a cumulative sum cancels digits away, and one inf or nan there spread to every k)."""
    from .shape import _flip
    return _flip(cumsum(_flip(t, (dim,)), dim), (dim,))


# PyTorch's CPU cumsum and cumprod accumulate in the dtype's accumulate type (double for float32,
# complex<double> for complex64, float for float16) and round each output once: NumPy's, in the
# array's own dtype, differed from PyTorch's in the last bit for ~90 % of a float32 cumsum's
# outputs. The scans run sequentially in both, so the wide scan rounded is PyTorch's, bit for bit.
_CUM_ACC = {_np.dtype(a): _np.dtype(b) for a, b in (("float16", "float32"),
                                                   ("float32", "float64"),
                                                   ("complex64", "complex128"))}


def _cum(scan, self, dim):
    if not self.ndim:
        return self.copy()
    acc = _CUM_ACC.get(self.dtype)
    if acc is None:
        return scan(self, axis=dim)
    return scan(self, axis=dim, dtype=acc).astype(self.dtype)


def _cumsum_fwd(xp, self, dim, dtype=None):
    return _cum(xp.cumsum, _int_to_long(self, dtype), dim)


_cumsum = defop("cumsum", _cumsum_fwd,
                self=lambda grad, dim: _revcumsum(grad, dim) if grad._data.ndim else grad)


def cumsum(input, dim, *, dtype=None):
    """torch.cumsum(input, dim, *, dtype=None)."""
    return _cumsum(input, _wrap_dim(dim, input._data.ndim), D.to_dtype(dtype))


def _cumprod_fwd(xp, self, dim, dtype=None):
    return _cum(xp.cumprod, _int_to_long(self, dtype), dim)


def _cumprod_zero_grad(grad, self, dim):
    """dL/dx_k = sum_{i >= k} g_i prod_{j <= i, j != k} x_j, for inputs with zeros (where the
    division by x_k of the usual formula fails): for each k, the cumulative product of x with
    x_k replaced by one. Composed of ndgrad ops (cumprod included), so it is differentiable
    again, to any order."""
    from .pointwise import where
    from .shape import movedim, stack
    g = movedim(grad, dim, -1)
    x = movedim(self, dim, -1)
    n = x.shape[-1]
    xp = xp_of(x._data)
    cols = []
    for k in range(n):
        hole = xp.zeros(n, dtype=bool)
        hole[k] = True
        c = _cumprod(where(_make(hole), 1.0, x), x.ndim - 1)
        cols.append((g[..., k:] * c[..., k:]).sum(-1))
    return movedim(stack(cols, -1), -1, dim)


def _cumprod_grad(grad, self, result, dim):
    if not self._data.ndim:
        return grad
    if bool((self._data == 0).any()):
        return _cumprod_zero_grad(grad, self, dim)
    return _revcumsum(grad * result, dim) / self


_cumprod = defop("cumprod", _cumprod_fwd, self=_cumprod_grad)


def cumprod(input, dim, *, dtype=None):
    """torch.cumprod(input, dim, *, dtype=None)."""
    return _cumprod(input, _wrap_dim(dim, input._data.ndim), D.to_dtype(dtype))


# ---------------------------------------------------------------- logical reductions

def _allany_fwd(kernel):
    def fwd(xp, self, dim, keepdim):
        r = getattr(xp, kernel)(self, axis=dim, keepdims=keepdim)
        return r.astype("uint8") if self.dtype == "uint8" else r
    return fwd


_all = defop("all", _allany_fwd("all"), differentiable=False)
_any = defop("any", _allany_fwd("any"), differentiable=False)


def all(input, dim=None, keepdim=False):
    """torch.all(input, dim=None, keepdim=False)."""
    return _all(input, _dims(dim, input._data.ndim), keepdim)


def any(input, dim=None, keepdim=False):
    """torch.any(input, dim=None, keepdim=False)."""
    return _any(input, _dims(dim, input._data.ndim), keepdim)


_count_nonzero = defop(
    "count_nonzero",
    lambda xp, self, dim: xp.asarray(xp.count_nonzero(self, axis=dim)).astype("int64"),
    differentiable=False)


def count_nonzero(input, dim=None):
    """torch.count_nonzero(input, dim=None)."""
    return _count_nonzero(input, _dims(dim, input._data.ndim))


# ---------------------------------------------------------------- Tensor methods

def _cumsum_(self, dim, *, dtype=None):
    from ._inplace import inplace
    return inplace(self, cumsum, dim, dtype=dtype)


def _cumprod_(self, dim, *, dtype=None):
    from ._inplace import inplace
    return inplace(self, cumprod, dim, dtype=dtype)


METHODS = {n: globals()[n] for n in __all__
           if n not in ("vector_norm", "var_mean", "std_mean")}  # torch has no such methods
METHODS.update(cumsum_=_cumsum_, cumprod_=_cumprod_)


# ---------------------------------------------------------------- more ops (PyTorch parity)
# Registered by ops/__init__.py from MORE_FUNCTIONS (torch.<name>) and MORE_METHODS (Tensor).

def _logcumsumexp_fwd(xp, self, dim):
    if self.dtype.kind not in "fc":
        raise NotImplementedError(
            "\"logcumsumexp_out_cpu\" not implemented for "
            f"'{_type_name(D.from_numpy_dtype(self.dtype))}'")
    if self.ndim == 0 or self.size == 0:
        return self.copy()
    if self.dtype.kind == "c":
        return _logcumsumexp_complex(xp, self, dim)
    return ufunc_accumulate(xp, xp.logaddexp, self, dim)


def _logcumsumexp_complex(xp, x, dim):
    """ATen's complex logcumsumexp: r_0 = x_0, r_j = log1p(exp(min - max)) + max of r_{j-1}
    and x_j (by real part). The values are log(cumsum(exp(x))) (shifted by the largest real
    part); the branch of each imaginary part is ATen's: within pi/2 of x_j's where x_j has the
    larger real part (an anchor), else of r_{j-1}'s, so r follows the unwrapped increments of
    the principal values from the last anchor on."""
    x = xp.moveaxis(x, dim, -1)
    m = x.real.max(axis=-1, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)
    with _np.errstate(divide="ignore", invalid="ignore"):  # host: error state
        p = xp.log(xp.cumsum(xp.exp(x - m), axis=-1)) + m      # principal values
    two_pi = 2 * _math.pi

    def wrap(a):                                             # to [-pi, pi)
        return a - two_pi * xp.floor((a + _math.pi) / two_pi)
    n = x.shape[-1]
    anchor = xp.zeros(x.shape, dtype=bool)
    anchor[..., 0] = True
    anchor[..., 1:] = x.real[..., 1:] > p.real[..., :-1]
    at_anchor = x.imag + wrap(p.imag - x.imag)
    at_anchor[..., 0] = x.imag[..., 0]
    step = xp.zeros(x.shape, dtype=p.real.dtype)
    step[..., 1:] = wrap(p.imag[..., 1:] - p.imag[..., :-1])
    walked = xp.cumsum(xp.where(anchor, 0, step), axis=-1)
    last = ufunc_accumulate(xp, xp.maximum, xp.where(anchor, xp.arange(n), 0), -1)
    base = xp.take_along_axis(at_anchor - walked, last, axis=-1)
    imag = xp.where(xp.isfinite(p.imag), base + walked, p.imag)
    r = p.real + 1j * imag
    r[..., 0] = x[..., 0]
    return xp.moveaxis(r.astype(x.dtype), -1, dim)


def _logcumsumexp_grad(grad, self, result, dim):
    # FunctionsManual's logcumsumexp_backward: the positive and the negative parts of grad in
    # log space, each pulled back through a reverse logcumsumexp, so that no intermediate
    # overflows at any input size (exp(x - out) factored in two gave inf * 0 past ~700)
    from .pointwise import exp, log, where
    from .shape import _flip
    if self._data.ndim == 0 or self._data.size == 0:
        return grad

    def reverse(x):
        return _flip(_logcumsumexp(_flip(x, (dim,)), dim), (dim,))
    if grad.dtype.is_complex:
        return exp(reverse(log(grad.conj()) - result) + self).conj()
    lowest = float(_np.finfo(grad.dtype.np).min)  # host: a dtype constant
    log_abs = log(grad.abs())
    pos = where(grad > 0, log_abs, lowest)
    neg = where(grad < 0, log_abs, lowest)
    return exp(reverse(pos - result) + self) - exp(reverse(neg - result) + self)


# (forward mode: FunctionsManual's logcumsumexp_jvp; the backward formula is not linear around
# a zero grad, which the double-VJP fallback needs)
_logcumsumexp = defop("logcumsumexp", _f16_acc(_logcumsumexp_fwd), self=_logcumsumexp_grad,
                      jvp={"self": lambda tangent, self, dim: _logcumsumexp_jvp(
                          tangent, self, dim)})


def _logcumsumexp_jvp(tangent, self, dim):
    """cumsum(t exp(x - m)) / cumsum(exp(x - m)), m the largest x along dim (0 where that sum
    is below 1e-13, as PyTorch's)."""
    from .pointwise import exp
    if self._data.ndim == 0:
        return tangent
    e = exp(self - self.amax(dim, keepdim=True)) if not self.dtype.is_complex else exp(self)
    den = cumsum(e, dim)
    num = cumsum(e * tangent, dim)
    return num.masked_fill(den.abs() < 1e-13, 0.0) / den


def logcumsumexp(input, dim):
    """torch.logcumsumexp(input, dim): log(cumsum(exp(input), dim)), computed stably."""
    return _logcumsumexp(input, _wrap_dim(dim, input._data.ndim))


def _cum_extreme_fwd(take_max):
    def fwd(xp, self, dim):
        if self.ndim == 0:
            return self.copy(), xp.zeros((), dtype="int64")
        x = xp.moveaxis(self, dim, 0)
        values = xp.empty_like(x)
        indices = xp.zeros(x.shape, dtype="int64")
        if x.shape[0]:
            cur, idx = x[0].copy(), xp.zeros(x.shape[1:], dtype="int64")
            values[0], indices[0] = cur, idx
            nan = xp.isnan if x.dtype.kind in "fc" else (lambda a: xp.zeros(a.shape, bool))
            for k in range(1, x.shape[0]):
                v = x[k]
                take = ((v >= cur) if take_max else (v <= cur)) | nan(v)
                cur = xp.where(take, v, cur)
                idx = xp.where(take, k, idx)
                values[k], indices[k] = cur, idx
        return xp.moveaxis(values, 0, dim), xp.moveaxis(indices, 0, dim)
    return fwd


def _cum_extreme_grad(grad, result1, self, dim):
    from .._creation import zeros_like
    if self._data.ndim == 0:
        return grad[0]
    return zeros_like(self).scatter_add(dim, result1, grad[0])


_cummax = defop("cummax", _cum_extreme_fwd(True), outputs=2, nondiff_outputs=(1,),
                self=_cum_extreme_grad)
_cummin = defop("cummin", _cum_extreme_fwd(False), outputs=2, nondiff_outputs=(1,),
                self=_cum_extreme_grad)


def cummax(input, dim):
    """torch.cummax(input, dim) -> (values, indices): the running maximum along dim (NaN
    propagates; ties take the later index)."""
    return _return_type("cummax")(*_cummax(input, _wrap_dim(dim, input._data.ndim)))


def cummin(input, dim):
    """torch.cummin(input, dim) -> (values, indices): the running minimum along dim."""
    return _return_type("cummin")(*_cummin(input, _wrap_dim(dim, input._data.ndim)))


def aminmax(input, *, dim=None, keepdim=False):
    """torch.aminmax(input, *, dim=None, keepdim=False) -> (min, max)."""
    shape = input._data.shape
    if dim is not None and not isinstance(dim, int):
        raise TypeError(f"aminmax(): argument 'dim' must be int, not {type(dim).__name__}")
    if dim is None:
        if input._data.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
        dims = None
    else:
        dims = _dims(dim, input._data.ndim)
        if dims and shape[dims[0]] == 0 and input._data.ndim:
            raise IndexError(f"aminmax: Expected reduction dim {dims[0]} to have non-zero size.")
        if dims and shape[dims[0]] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {dims[0]} to have non-zero size.")
    rtype = _return_type("aminmax", ("min", "max"))
    if dim is None and keepdim:
        return rtype(_amin(input, None, False).reshape((1,) * len(shape)),
                     _amax(input, None, False).reshape((1,) * len(shape)))
    return rtype(_amin(input, dims, keepdim), _amax(input, dims, keepdim))


def _nanmedian_all_fwd(xp, self):
    flat = self.reshape(-1)
    flat = flat[~xp.isnan(flat)] if flat.dtype.kind in "fc" else flat
    if flat.size == 0:
        return xp.asarray(xp.nan, dtype=self.dtype)
    return xp.sort(flat)[(flat.size - 1) // 2]


_nanmedian_all = defop("nanmedian", _nanmedian_all_fwd, node_name="NanmedianBackward0",
                       self=_evenly)


def _nanmedian_dim_fwd(xp, self, dim, keepdim):
    if self.ndim == 0:
        return self.copy(), xp.zeros((), dtype="int64")
    order = xp.argsort(self, axis=dim, kind="stable")  # NaNs sort last
    count = (~xp.isnan(self)).sum(axis=dim, keepdims=True) if self.dtype.kind in "fc" else \
        xp.full(_keep_shape(self.shape, (dim,)), self.shape[dim])
    pos = xp.maximum(count - 1, 0) // 2
    idx = xp.take_along_axis(order, pos, axis=dim).astype("int64")
    values = xp.take_along_axis(self, idx, axis=dim)
    if keepdim:
        return values, idx
    return xp.squeeze(values, axis=dim), xp.squeeze(idx, axis=dim)


_nanmedian_dim = defop("nanmedian_dim", _nanmedian_dim_fwd, outputs=2, nondiff_outputs=(1,),
                       node_name="NanmedianBackward1",
                       self=lambda grad, result1, self_shape, dim, keepdim: _scatter(
                           grad[0], result1, dim, keepdim, self_shape))


def nanmedian(input, dim=None, keepdim=False):
    """torch.nanmedian(input) / nanmedian(input, dim, keepdim=False) -> (values, indices): the
    lower median of the non-NaN elements (NaN when there are none)."""
    if dim is None:
        return _nanmedian_all(input)
    nd = input._data.ndim
    d = _wrap_dim(dim, nd)
    if nd and input._data.shape[d] == 0:
        raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    return _return_type("nanmedian")(*_nanmedian_dim(input, d, keepdim))


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """torch.nanquantile: quantile() of the non-NaN elements of each slice (NaN when there are
    none)."""
    from .. import functional as F
    return F._quantile(input, q, dim, keepdim, interpolation, True)


def _mode_fwd(xp, self, dim, keepdim):
    if self.ndim == 0:
        return self.copy(), xp.zeros((), dtype="int64")
    x = xp.moveaxis(self, dim, -1)
    n = x.shape[-1]
    flat = x.reshape(-1, n)
    # each row sorted; runs of equal values (NaNs as one value, as unique's) and their lengths
    s = xp.sort(flat, axis=-1)
    same = s[:, 1:] == s[:, :-1]
    if s.dtype.kind in "fc":
        same |= xp.isnan(s[:, 1:]) & xp.isnan(s[:, :-1])
    pos = xp.arange(n)
    first = ufunc_accumulate(xp, xp.maximum, xp.where(xp.concatenate(
        [xp.ones((s.shape[0], 1), bool), ~same], axis=1), pos, 0), 1)
    last = n - 1 - ufunc_accumulate(xp, xp.maximum, xp.where(xp.concatenate(
        [xp.ones((s.shape[0], 1), bool), ~same[:, ::-1]], axis=1), pos, 0), 1)[:, ::-1]
    best = xp.argmax(last - first, axis=1)  # the longest run; ties: the smallest value
    values = xp.take_along_axis(s, best[:, None], axis=1)
    hit = flat == values
    if s.dtype.kind in "fc":
        hit |= xp.isnan(flat) & xp.isnan(values)
    indices = n - 1 - xp.argmax(hit[:, ::-1], axis=1)  # its last occurrence
    values = values[:, 0]
    values = values.reshape(x.shape[:-1])
    indices = indices.reshape(x.shape[:-1])
    if keepdim:
        return xp.expand_dims(values, dim), xp.expand_dims(indices, dim)
    return values, indices


_mode = defop("mode", _mode_fwd, outputs=2, nondiff_outputs=(1,),
              self=lambda grad, result1, self_shape, dim, keepdim: _scatter(
                  grad[0], result1, dim, keepdim, self_shape))


def mode(input, dim=-1, keepdim=False):
    """torch.mode(input, dim=-1, keepdim=False) -> (values, indices): the most frequent value
    of each slice (the smallest among ties) and the index of its last occurrence."""
    nd = input._data.ndim
    d = _wrap_dim(dim, nd)
    if nd and input._data.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    return _return_type("mode")(*_mode(input, d, keepdim))


def msort(input):
    """torch.msort(input): input sorted along its first dim."""
    return input.sort(0).values


def _hash_tensor_fwd(xp, self, dim, keepdim, floating):
    bits = self.astype("float64").view("uint64") if floating else self.astype("uint64")
    return xp.asarray(ufunc_reduce(xp, xp.bitwise_xor, bits, dim, keepdim))


_hash_tensor = defop("hash_tensor", _hash_tensor_fwd, differentiable=False)


def hash_tensor(input, dim=(), *, keepdim=False, mode=0):
    """torch.hash_tensor(input, dim=[], *, keepdim=False, mode=0): the xor of the elements' bits
    (floats as float64, integers as uint64), a uint64 tensor."""
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    ndim = input._data.ndim
    dims = _dims(dim, ndim)
    if dims is None:
        if input._data.size == 0:
            raise RuntimeError("hash_tensor: Expected reduction dim to be specified for "
                               "input.numel() == 0. Specify the reduction dim with the 'dim' "
                               "argument.")
        dims = tuple(range(ndim))
    for d in dims:
        if input._data.shape[d] == 0:
            raise IndexError(f"hash_tensor: Expected reduction dim {d} to have non-zero size.")
    return _hash_tensor(input, dims, bool(keepdim), input.dtype.is_floating_point)


MORE_FUNCTIONS = {f.__name__: f for f in (
    logcumsumexp, cummax, cummin, aminmax, nanmedian, nanquantile, mode, msort, hash_tensor)}
MORE_METHODS = dict(MORE_FUNCTIONS)
