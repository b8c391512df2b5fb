"""torch.sparse: products, sums and softmax of COO tensors, all O(nnz), with gradients for the
values and the dense operands (Note [Sparse autograd through the values] in ndgrad/sparse/_coo.py).

    torch.sparse.mm(adj, h)          # adj sparse (n x n), h dense (n x d): O(nnz * d)
"""
from .. import _dtype as D
from .._backend import xp_of
from .._tensor import Tensor, _make
from ._coo import SparseTensor, _sparse, _linear_index
from ._compressed import (SparseCompressedTensor, sparse_csr, spmm_values, pattern_of, named,
                          _compressed as _make_compressed)

import sys as _sys
from . import _coo, _compressed

# Plain pickles of sparse tensors and layouts made before these modules moved here name them
# ndgrad._sparse and ndgrad._sparse_compressed: both names still resolve (no files behind them)
_sys.modules.setdefault(__name__.rpartition(".")[0] + "._sparse", _coo)
_sys.modules.setdefault(__name__.rpartition(".")[0] + "._sparse_compressed", _compressed)

__all__ = ["mm", "addmm", "sum", "softmax", "log_softmax", "spmm", "sampled_addmm",
           "check_sparse_tensor_invariants"]


def _check_2d(name, s, d):
    if isinstance(s, SparseCompressedTensor):
        if not isinstance(d, Tensor) or isinstance(d, (SparseTensor, SparseCompressedTensor)):
            raise RuntimeError(f"{name}: sparse @ sparse products are not supported; use "
                               f"mat2.to_dense()")
        if d.dim() != 2 or s.shape[1] != d.shape[0]:
            dd = "x".join(map(str, d.shape)) if d.dim() == 2 else None
            if dd is None:
                raise RuntimeError(f"{name}: expected mat2 to be a 2-D tensor, got "
                                   f"{d.dim()}-D")
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({s.shape[0]}x"
                               f"{s.shape[1]} and {dd})")
        if s.dtype is not d.dtype:
            raise RuntimeError(f"expected scalar type {_name(s.dtype)} but found "
                               f"{_name(d.dtype)}")
        return
    if not isinstance(s, SparseTensor):
        raise RuntimeError(f"{name}: expected mat1 to be a sparse COO tensor")
    if s.sparse_dim() != 2 or s.dense_dim() != 0:
        raise RuntimeError(f"{name}: expected first two dims to be sparse (indices has size 2 "
                           f"at first dim), but got {s.sparse_dim()} sparse dims")
    if isinstance(d, SparseTensor):
        raise RuntimeError(f"{name}: sparse @ sparse products are not supported; use "
                           f"mat2.to_dense()")
    if d.dim() != 2:
        raise RuntimeError(f"{name}: expected mat2 to be a 2-D tensor, got {d.dim()}-D")
    if s.shape[1] != d.shape[0]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {s.shape[1]}, got "
                           f"{d.shape[0]}")
    if s.dtype is not d.dtype:
        raise RuntimeError(f"expected scalar type {_name(s.dtype)} but found {_name(d.dtype)}")


def _name(dt):
    from ..ops._inplace import _type_name
    return _type_name(dt)


def _product(s, d, node_name="SparseAddmmBackward0"):
    """sum_j s[i, j] * d[j], a segment sum over each row's entries: O(nnz * d)
    (Note [Sparse products as segment sums] in ndgrad/sparse/_compressed.py)."""
    return spmm_values(s._vals, d, pattern_of(s), node_name)


def mm(mat1, mat2, reduce=None):
    """torch.sparse.mm(sparse, dense) -> dense."""
    if reduce is None and (not isinstance(mat1, _SPARSE) or isinstance(mat2, _SPARSE)):
        return _mm(mat1, mat2, "TransposeBackward0")   # dense @ sparse, sparse @ sparse
    if reduce is not None:
        return _mm_reduce(mat1, mat2, reduce)
    _check_2d("mm", mat1, mat2)
    return _product(mat1, mat2)


_SPARSE = (SparseTensor, SparseCompressedTensor)


def _mm_reduce(s, d, reduce):
    """torch.sparse.mm(csr, dense, reduce): each row's products reduced by sum, mean, amax or
    amin (rows without entries give 0), differentiable in the values and the dense operand."""
    if not isinstance(s, SparseCompressedTensor):
        raise NotImplementedError(
            "Could not run 'aten::_sparse_mm_reduce_impl' with arguments from the 'SparseCPU' "
            "backend. This could be because the operator doesn't exist for this backend, or was "
            "omitted during the selective/custom build process (if using custom build).")
    op = {"sum": "sum", "mean": "mean", "amax": "amax", "max": "amax", "amin": "amin",
          "min": "amin"}.get(reduce)
    if op is None:
        raise RuntimeError(f"sparse_mm_reduce: reduce type of {reduce} has not been enabled.")
    _check_2d("mm", s, d)
    from .._creation import zeros
    rows, cols = s._coo_arrays()
    r = _make(rows)
    prod = d.index_select(0, _make(cols)) * s._vals.unsqueeze(1)
    out = zeros(s.shape[0], d.shape[1], dtype=d.dtype, device=d.device)
    if op in ("sum", "mean"):
        out = out.index_add(0, r, prod)
        if op == "mean":
            xp = xp_of(rows)
            counts = xp.bincount(rows, minlength=s.shape[0]).clip(1, None).astype(
                d._data.dtype)
            out = out / _make(counts).unsqueeze(1)
    else:
        out = out.scatter_reduce(0, r.unsqueeze(1).expand(-1, d.shape[1]), prod, op,
                                 include_self=False)
    return named(out, "SparseMmReduceImplBackward0")


def _mm(mat1, mat2, name="MmBackward0"):
    """torch.mm / torch.matmul / @ with a sparse operand (grad_fn MmBackward0 / MvBackward0)."""
    if isinstance(mat1, _SPARSE) and isinstance(mat2, _SPARSE):
        return _sparse_sparse(mat1, mat2)
    if not isinstance(mat1, _SPARSE):              # dense @ sparse = (sparse^T @ dense^T)^T
        if isinstance(mat2, SparseTensor) and mat1.dim() == 2 and mat2.dim() == 2 and \
                mat1.shape[1] != mat2.shape[0]:
            raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size "
                               f"{mat2.shape[0]}, got {mat1.shape[1]}")
        if mat1.dim() != 2 or mat2.dim() != 2 or mat1.shape[1] != mat2.shape[0]:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                               f"({'x'.join(map(str, mat1.shape))} and "
                               f"{'x'.join(map(str, mat2.shape))})")
        if mat1.dtype is not mat2.dtype:
            a, b = (mat2, mat1) if isinstance(mat2, SparseTensor) else (mat1, mat2)
            raise RuntimeError(f"expected scalar type {_name(a.dtype)} but found "
                               f"{_name(b.dtype)}")
        return named(spmm_values(mat2._vals, mat1.t(), pattern_of(mat2).T).t(), name)
    if isinstance(mat2, Tensor) and mat2.dim() == 1:
        if mat2.shape[0] != mat1.shape[1]:
            if isinstance(mat1, SparseTensor):
                raise RuntimeError("mv: expected self.size(-1) == vec.size(-1)")
            raise RuntimeError(f"size mismatch, got input ({mat1.shape[0]}), mat "
                               f"({mat1.shape[0]}x{mat1.shape[1]}), vec ({mat2.shape[0]})")
        _check_2d("mv", mat1, mat2.unsqueeze(1))
        return named(_product(mat1, mat2.unsqueeze(1), "MmBackward0").squeeze(1),
                     "MvBackward0")
    _check_2d("mm", mat1, mat2)
    return _product(mat1, mat2, "MmBackward0")


def _bmm(mat1, mat2):
    """torch.bmm(sparse, dense): a batch of COO matrices (three sparse dims) times a dense
    batch, a dense result; each entry (b, i, k) adds v * mat2[b, k, :] to row (b, i),
    differentiable in the values and in mat2 (grad_fn BmmBackward0)."""
    if not isinstance(mat1, SparseTensor):
        if isinstance(mat2, _SPARSE):
            raise RuntimeError("bmm_sparse: Tensor 'mat2' must be dense")
        from ..ops.linalg import bmm
        return bmm(mat1, mat2)
    if isinstance(mat2, _SPARSE):
        raise RuntimeError("bmm_sparse: Tensor 'mat2' must be dense")
    if mat1.dim() != 3 or mat2.dim() != 3:
        raise RuntimeError(f"bmm_sparse: Expected self to be 3D, but got {mat1.dim()}D"
                           if mat1.dim() != 3 else
                           f"bmm_sparse: Expected mat2 to be 3D, but got {mat2.dim()}D")
    B, n, m = mat1.shape
    if mat2.shape[0] != B:
        raise RuntimeError("bmm_sparse: 'self.size(0)' and 'mat2.size(0)' must match")
    if mat2.shape[1] != m:
        raise RuntimeError("bmm_sparse: 'self.size(2)' and 'mat2.size(1)' must match")
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(f"expected scalar type {_name(mat1.dtype)} but found "
                           f"{_name(mat2.dtype)}")
    if mat1.sparse_dim() != 3:
        raise RuntimeError("bmm_sparse: only sparse matrices with three sparse dimensions "
                           "are supported")
    from .._creation import zeros
    p = mat2.shape[2]
    idx = mat1._idx
    rows = _make((idx[0] * n + idx[1]).astype("int64"))
    cols = _make((idx[0] * m + idx[2]).astype("int64"))
    prod = mat2.reshape(B * m, p).index_select(0, cols) * mat1._vals.unsqueeze(1)
    out = zeros(B * n, p, dtype=mat2.dtype, device=mat2.device).index_add(0, rows, prod)
    return named(out.reshape(B, n, p), "BmmBackward0")


def _sparse_sparse(a, b):
    """sparse @ sparse -> sparse (the layout of a): each entry (i, k) of a meets the entries
    (k, j) of b, the products summed by coalescing; differentiable in both values."""
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                           f"({'x'.join(map(str, a.shape))} and {'x'.join(map(str, b.shape))})")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected scalar type {_name(a.dtype)} but found {_name(b.dtype)}")
    layout = a.layout
    ca = a.to_sparse_coo() if isinstance(a, SparseCompressedTensor) else a.coalesce()
    cb = b.to_sparse_coo() if isinstance(b, SparseCompressedTensor) else b.coalesce()
    xp = xp_of(ca._idx)
    br = cb._idx[0]                                    # sorted (coalesced)
    lo = xp.searchsorted(br, ca._idx[1], side="left")
    counts = xp.searchsorted(br, ca._idx[1], side="right") - lo
    ea = xp.repeat(xp.arange(counts.size, dtype="int64"), counts)
    start = xp.cumsum(counts) - counts
    eb = xp.repeat(lo, counts) + (xp.arange(ea.size, dtype="int64") - xp.repeat(start, counts))
    vals = ca._vals.index_select(0, _make(ea)) * cb._vals.index_select(0, _make(eb))
    idx = xp.stack([ca._idx[0][ea], cb._idx[1][eb]]).astype("int64")
    out = _sparse(idx, vals, (a.shape[0], b.shape[1]), False).coalesce()
    if out._vals.requires_grad:
        out._vals = named(out._vals, "MmBackward0")
    return out if layout.name == "sparse_coo" else out.to_sparse_csr()


spmm = mm


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """torch.sparse.addmm: beta * mat + alpha * (mat1 @ mat2), mat1 sparse."""
    _check_2d("addmm", mat1, mat2)
    p = _product(mat1, mat2, "MmBackward0")
    if alpha != 1:
        p = p * alpha
    if isinstance(mat, (SparseTensor, SparseCompressedTensor)):
        mat = mat.to_dense()
    return named(p + (mat if beta == 1 else mat * beta), "AddmmBackward0")


def sampled_addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0, out=None):
    """torch.sparse.sampled_addmm: beta * input + alpha * (mat1 @ mat2) at input's pattern
    (input CSR), computing only the nnz entries' dot products: O(nnz * k)."""
    if isinstance(input, SparseCompressedTensor) and input.layout is not sparse_csr:
        raise RuntimeError("sampled_addmm: Expected result to have sparse csr layout, but got "
                           "SparseCsc")
    if not isinstance(input, SparseCompressedTensor):
        backend = "SparseCPU" if isinstance(input, SparseTensor) else "CPU"
        raise NotImplementedError(
            f"Could not run 'aten::sparse_sampled_addmm' with arguments from the '{backend}' "
            f"backend. This could be because the operator doesn't exist for this backend, or "
            f"was omitted during the selective/custom build process (if using custom build).")
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(f"sampled_addmm: Expected mat1 and mat2 to have the same dtype, but "
                           f"got {_name(mat1.dtype)} and {_name(mat2.dtype)}")
    if mat1.dim() != 2 or mat2.dim() != 2 or mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"sampled_addmm: mat1 and mat2 shapes cannot be multiplied "
                           f"({'x'.join(map(str, mat1.shape))} and "
                           f"{'x'.join(map(str, mat2.shape))})")
    if input.shape[0] != mat1.shape[0]:
        raise RuntimeError("sampled_addmm: self.shape[-2] must match mat1.shape[-2]")
    if input.shape[1] != mat2.shape[1]:
        raise RuntimeError("sampled_addmm: self.shape[-1] must match mat2.shape[-1]")
    if out is not None:
        raise RuntimeError("sampled_addmm: out= is not supported by ndgrad")
    rows, cols = input._coo_arrays()
    prod = (mat1.index_select(0, _make(rows)) * mat2.t().index_select(0, _make(cols))).sum(1)
    vals = prod if alpha == 1 else prod * alpha
    if beta != 0:
        vals = vals + (input._vals if beta == 1 else input._vals * beta)
    return _make_compressed(input._cidx, input._pidx, named(vals, "SparseSampledAddmmBackward0"),
                       input._size, sparse_csr)


def sum(input, dim=None, dtype=None):
    """torch.sparse.sum: over every dim (a dense 0-d tensor) or over `dim` (sparse unless only
    dense dims remain)."""
    if isinstance(input, SparseCompressedTensor):
        return input.sum(dtype=dtype) if dim is None else input.sum(dim, keepdim=True)
    if not isinstance(input, SparseTensor):
        return input.sum() if dim is None else input.sum(dim)
    v = input._vals if dtype is None else input._vals.to(dtype)
    if dim is None:
        return v.sum()
    dims = sorted({d % input.dim() for d in ((dim,) if isinstance(dim, int) else dim)})
    sd = input.sparse_dim()
    dense = [d - sd + 1 for d in dims if d >= sd]
    if dense:
        v = v.sum(dense)
    sparse = [d for d in dims if d < sd]
    keep = [d for d in range(sd) if d not in sparse]
    size = tuple(s for i, s in enumerate(input.shape) if i not in dims)
    if not sparse:
        return _sparse(input._idx, v, size, input.is_coalesced())
    xp = xp_of(input._idx)
    if not keep:   # every sparse dim summed: the dense values' sum
        return v.sum(0)
    idx = input._idx[keep]
    key = _linear_index(idx, [input.shape[d] for d in keep], xp)
    uniq, first, inverse = xp.unique(key, return_index=True, return_inverse=True)
    from .._creation import zeros
    out = zeros((len(uniq),) + tuple(v.shape[1:]), dtype=v.dtype, device=v.device)
    out = out.index_add(0, _make(inverse.reshape(-1).astype("int64")), v)
    return _sparse(idx[:, first], out, size, True)


def _softmax(input, dim, log, dtype=None):
    if not isinstance(input, SparseTensor):
        raise RuntimeError("softmax: expected a sparse tensor")
    s = input.coalesce()
    v = s._vals if dtype is None else s._vals.to(dtype)
    sd = s.sparse_dim()
    d = dim % s.dim()
    if d >= sd:   # a dense dim: an ordinary softmax of the values
        out = v.log_softmax(d - sd + 1) if log else v.softmax(d - sd + 1)
        return _sparse(s._idx, out, s.shape, True)
    xp = xp_of(s._idx)
    others = [k for k in range(sd) if k != d]
    key = _linear_index(s._idx[others], [s.shape[k] for k in others], xp) if others else \
        xp.zeros(s._idx.shape[1], dtype="int64")
    _, inverse = xp.unique(key, return_inverse=True)
    inv = _make(inverse.reshape(-1).astype("int64"))
    n = int(inverse.max()) + 1 if inverse.size else 0
    from .._creation import zeros, full
    shape = (n,) + tuple(v.shape[1:])
    expand = inv.view(-1, *([1] * (v.dim() - 1))).expand(*v.shape)
    # the unspecified entries are -inf: each slice's max and sum run over its specified ones
    mx = full(shape, float("-inf"), dtype=v.dtype, device=v.device).scatter_reduce(0, expand, v.detach(),
                                                                  "amax")
    shifted = v - mx.index_select(0, inv)
    e = shifted.exp()
    total = zeros(shape, dtype=v.dtype, device=v.device).index_add(0, inv, e)
    out = shifted - total.log().index_select(0, inv) if log else e / total.index_select(0, inv)
    return _sparse(s._idx, out, s.shape, True)


def softmax(input, dim, *, dtype=None):
    """torch.sparse.softmax: over the specified entries of each slice (others count as -inf)."""
    return _softmax(input, dim, False, dtype)


def log_softmax(input, dim, *, dtype=None):
    """torch.sparse.log_softmax (unspecified entries count as -inf)."""
    return _softmax(input, dim, True, dtype)


class check_sparse_tensor_invariants:
    """Context manager / decorator: invariant checks on sparse_coo_tensor (ndgrad always checks
    indices against the size; the switch is kept for PyTorch programs)."""
    _enabled = True

    def __init__(self, enable=True):
        self._enable = enable

    @staticmethod
    def is_enabled():
        return check_sparse_tensor_invariants._enabled

    @staticmethod
    def enable():
        check_sparse_tensor_invariants._enabled = True

    @staticmethod
    def disable():
        check_sparse_tensor_invariants._enabled = False

    def __enter__(self):
        self.prev = check_sparse_tensor_invariants._enabled
        check_sparse_tensor_invariants._enabled = self._enable

    def __exit__(self, *exc):
        check_sparse_tensor_invariants._enabled = self.prev

    def __call__(self, fn):
        def wrapper(*a, **k):
            with self:
                return fn(*a, **k)
        return wrapper


def _legacy_sparse(name, dtype_name):
    """torch.sparse.FloatTensor & co.: PyTorch's legacy constructors of COO tensors,
    (indices, values[, size]) or (*sizes) for an empty one; isinstance of them is true for the
    sparse COO tensors of their dtype."""
    def new(cls, *args, **kwargs):
        from .. import sparse_coo_tensor
        dt = getattr(D, dtype_name)
        import warnings
        if args and isinstance(args[0], Tensor):
            sized = len(args) > 2 or "size" in kwargs
            warnings.warn(
                f"torch.sparse.SparseTensor(indices, values, {'shape, ' if sized else ''}*, "
                f"device=) is deprecated.  Please use torch.sparse_coo_tensor(indices, values, "
                f"{'shape, ' if sized else ''}dtype=, device=).", UserWarning, stacklevel=2)
            indices, values = args[0], args[1]   # (the values keep their dtype, as PyTorch's)
            size = args[2] if len(args) > 2 else kwargs.get("size")
            if size is None:
                return sparse_coo_tensor(indices, values)
            return sparse_coo_tensor(indices, values, tuple(size))
        warnings.warn("torch.sparse.SparseTensor(shape, *, device=) is deprecated.  Please "
                      "use torch.sparse_coo_tensor(shape, dtype=, device=).", UserWarning,
                      stacklevel=2)
        sizes = tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) \
            else tuple(args)
        import numpy
        indices = numpy.zeros((len(sizes), 0), "int64")   # host: an empty COO tensor's parts
        values = numpy.zeros((0,), dt.np)   # host: (no elements)
        return sparse_coo_tensor(_make(indices), _make(values), sizes, dtype=dt)

    class _Meta(type):
        def __instancecheck__(cls, obj):
            return isinstance(obj, Tensor) and obj.is_sparse and obj.dtype is getattr(
                D, dtype_name)
    return _Meta(name, (), {"__new__": new, "__module__": "torch.sparse"})


FloatTensor = _legacy_sparse("FloatTensor", "float32")
DoubleTensor = _legacy_sparse("DoubleTensor", "float64")
HalfTensor = _legacy_sparse("HalfTensor", "float16")
LongTensor = _legacy_sparse("LongTensor", "int64")
IntTensor = _legacy_sparse("IntTensor", "int32")
ByteTensor = _legacy_sparse("ByteTensor", "uint8")
BoolTensor = _legacy_sparse("BoolTensor", "bool")
