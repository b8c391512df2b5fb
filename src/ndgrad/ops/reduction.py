# Reductions. Formulas restore the reduced dimensions (`_unreduce`) and broadcast the gradient
# back over them; see ops/_registry.py for the defop language.
import builtins

from .. import _dtype as D
from .._tensor import Tensor, _wrap_dim
from ._registry import defop
from .shape import expand, reshape

__all__ = ["sum", "mean", "norm"]


def _dims(dim, ndim):
    """None -> None (all dims); int or sequence -> sorted tuple of wrapped dims."""
    if dim is None:
        return None
    if isinstance(dim, (tuple, list)):
        if len(dim) == 0:
            return None
        dims = tuple(sorted({_wrap_dim(d, ndim) for d in dim}))
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


def _sum_fwd(xp, self, dim, keepdim, dtype=None):
    if dtype is not None:
        self = self.astype(dtype.np)
    elif self.dtype.kind in "biu":
        self = self.astype("int64")
    return xp.sum(self, axis=dim, keepdims=keepdim)


_sum_all = defop("sum", lambda xp, self, dtype=None: _sum_fwd(xp, self, None, False, dtype),
                 node_name="SumBackward0",
                 self=lambda grad, self_shape: expand(grad, self_shape))
_sum_dim = defop("sum_dim", _sum_fwd, node_name="SumBackward1",
                 self=lambda grad, self_shape, dim, keepdim: _unreduce(grad, self_shape, dim, keepdim))


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """torch.sum(input, dim=None, keepdim=False, *, dtype=None)."""
    dtype = D.to_dtype(dtype)
    if dim is None:
        return _sum_all(input, dtype)
    return _sum_dim(input, _dims(dim, input._data.ndim), keepdim, dtype)


def _mean_fwd(xp, self, dim, keepdim, dtype=None):
    if dtype is not None:
        self = self.astype(dtype.np)
    return xp.mean(self, axis=dim, keepdims=keepdim)


def _count(shape, dim):
    n = 1
    for i, s in enumerate(shape):
        if dim is None or i in dim:
            n *= s
    return n


_mean_all = defop("mean", lambda xp, self, dtype=None: _mean_fwd(xp, self, None, False, dtype),
                  node_name="MeanBackward0",
                  self=lambda grad, self_shape: expand(grad / _count(self_shape, None), self_shape))
_mean_dim = defop(
    "mean_dim", _mean_fwd, node_name="MeanBackward1",
    self=lambda grad, self_shape, dim, keepdim: _unreduce(grad / _count(self_shape, dim),
                                                          self_shape, dim, keepdim))


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """torch.mean(input, dim=None, keepdim=False, *, dtype=None)."""
    dtype = D.to_dtype(dtype)
    d = dtype or input.dtype
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {_type_name(input.dtype)}")
    if dim is None:
        return _mean_all(input, dtype)
    return _mean_dim(input, _dims(dim, input._data.ndim), keepdim, dtype)


def _type_name(d):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool"}.get(d.name, d.name)


def _norm_fwd(xp, self, p, dim, keepdim):
    a = xp.abs(self)
    if p == 2:
        r = xp.sqrt(xp.sum(a * a, axis=dim, keepdims=keepdim))
    elif p == float("inf"):
        r = xp.max(a, axis=dim, keepdims=keepdim)
    elif p == float("-inf"):
        r = xp.min(a, axis=dim, keepdims=keepdim)
    elif p == 0:
        r = xp.sum(a != 0, axis=dim, keepdims=keepdim).astype(self.dtype)
    elif p == 1:
        r = xp.sum(a, axis=dim, keepdims=keepdim)
    else:
        r = xp.power(xp.sum(xp.power(a, p), axis=dim, keepdims=keepdim), 1.0 / p)
    return r.astype(self.dtype, copy=False) if hasattr(r, "astype") else r


def _norm_grad(grad, self, result, p, dim, keepdim):
    from .pointwise import where, sign, abs as _abs
    shape = self._data.shape
    if not keepdim:
        grad = reshape(grad, _keep_shape(shape, dim))
        result = reshape(result, _keep_shape(shape, dim))
    if p == 0:
        return None
    if p == 1:
        return grad * sign(self)
    if p == 2:
        return grad * where(result == 0, 0.0, self / result)
    if p in (float("inf"), float("-inf")):
        mask = _abs(self) == result
        return grad * sign(self) * mask / mask.sum(dim=dim, keepdim=True)
    return grad * where(result == 0, 0.0,
                        self * _abs(self) ** (p - 2) / result ** (p - 1))


_norm_all = defop("norm", lambda xp, self, p=2: _norm_fwd(xp, self, p, None, False),
                  promote="float", node_name="NormBackward0",
                  self=lambda grad, self, result, p: _norm_grad(grad, self, result, p, None, False))
_norm_dim = defop("norm_dim", _norm_fwd, promote="float", node_name="NormBackward1",
                  self=_norm_grad)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """torch.norm(input, p='fro', dim=None, keepdim=False): vector p-norm (Frobenius = 2)."""
    if p == "fro" or p is None:
        p = 2
    elif p == "nuc":
        raise NotImplementedError("nuclear norm is not supported")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            f"{_type_name(input.dtype)}")
    if dim is None:
        return _norm_all(input, p)
    return _norm_dim(input, p, _dims(dim, input._data.ndim), keepdim)
