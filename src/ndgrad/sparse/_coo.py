"""Sparse COO tensors: `indices` (sparse_dim x nnz, int64) and `values` (nnz x dense dims).

    s = torch.sparse_coo_tensor(indices, values, size)
    torch.sparse.mm(s, dense)          # O(nnz * d), never O(n^2)

Note [Sparse autograd through the values]: a sparse tensor is a view of its `values` tensor
placed at `indices`. Every sparse op is written with ndgrad's dense, differentiable ops on the
values (index_select, index_add, index_put, mul, ...), so gradients, higher orders included,
flow to the values and to any dense operand without a node type or engine path of their own.
A sparse leaf that requires grad keeps its values as the autograd leaf; its `.grad` is the
values' gradient placed at the same indices: a sparse tensor with the leaf's pattern, as
PyTorch's.
"""
import warnings

from .. import _dtype as D
from .._backend import xp_of, move, ufunc_at
from .._tensor import Tensor, Size, _make

__all__ = ["SparseTensor", "sparse_coo_tensor", "sparse_coo", "strided", "jagged", "to_sparse"]


class _Named:
    """A torch constant that prints and pickles as its name (torch.strided, torch.channels_last):
    each subclass's objects are module globals of that name."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"

    def __reduce__(self):
        return self.name


class _Layout(_Named):
    """torch.layout: the class of torch.strided, torch.sparse_coo, torch.sparse_csr, ..."""
    __slots__ = ()


sparse_coo = _Layout("sparse_coo")
strided = _Layout("strided")
jagged = _Layout("jagged")   # torch.nested's jagged layout (ndgrad/nested)


def _unsupported(name):
    def f(self, *args, **kwargs):
        raise NotImplementedError(
            f"Could not run 'aten::{name}' with arguments from the 'SparseCPU' backend. This "
            f"could be because the operator doesn't exist for this backend, or was omitted "
            f"during the selective/custom build process (if using custom build).")
    f.__name__ = name
    return f


class _ValuesAutograd:
    """What COO and compressed sparse tensors share: autograd, dtype and copies go through
    their values (`_vals`); `_with_values(vals, copy)` rebuilds the same structure around new
    values (copying the index arrays when asked)."""
    __slots__ = ()

    @property
    def requires_grad(self):
        return self._vals.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        self._vals.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self):
        return self._vals.grad_fn

    @grad_fn.setter
    def grad_fn(self, value):
        pass   # (Tensor's constructor path sets it; the values carry the history)

    @property
    def is_leaf(self):
        return self._leaf

    def detach(self):
        return self._with_values(self._vals.detach())

    def clone(self):
        return self._with_values(self._vals.clone(), copy=True)

    def to(self, *args, **kwargs):
        v = self._vals.to(*args, **kwargs)
        if v is self._vals:
            return self
        if v.device != self._vals.device:   # the structure (index arrays) moves with them
            return self._with_values(v, device=v.device)
        return self._with_values(v)

    @property
    def device(self):
        return self._vals.device

    # zero-preserving elementwise functions: on the values (`_valuewise`: each layout's own)
    def abs(self):
        return self._valuewise(lambda v: v.abs())

    def sqrt(self):
        return self._valuewise(lambda v: v.sqrt())

    def relu(self):
        return self._valuewise(lambda v: v.relu())

    def tanh(self):
        return self._valuewise(lambda v: v.tanh())

    def sin(self):
        return self._valuewise(lambda v: v.sin())

    def double(self):
        return self.to(D.float64)

    def float(self):
        return self.to(D.float32)

    @property
    def dtype(self):
        return self._vals.dtype

    @dtype.setter
    def dtype(self, value):
        pass


class SparseTensor(_ValuesAutograd, Tensor):
    """A COO sparse tensor (layout torch.sparse_coo): Note [Sparse autograd through the values]."""
    from .._tensor import _disabled_torch_function_impl as __torch_function__  # noqa: E501 (no dispatch)

    def __init__(self, *a, **k):  # (made by sparse_coo_tensor / _sparse, never directly)
        raise TypeError("use torch.sparse_coo_tensor")

    # ---------------------------------------------------------------- structure
    @property
    def layout(self):
        return sparse_coo

    @property
    def is_sparse(self):
        return True

    @property
    def shape(self):
        return Size(self._size)

    def size(self, dim=None):
        return Size(self._size) if dim is None else self._size[dim]

    def dim(self):
        return len(self._size)

    ndim = property(dim)

    def numel(self):
        n = 1
        for s in self._size:
            n *= s
        return n

    def sparse_dim(self):
        return self._idx.shape[0]

    def dense_dim(self):
        return len(self._size) - self._idx.shape[0]

    def _nnz(self):
        return self._idx.shape[1]

    def is_coalesced(self):
        return self._coalesced

    def indices(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return _make(self._idx)

    def values(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._vals

    def _indices(self):
        return _make(self._idx)

    def _values(self):
        return self._vals

    # ---------------------------------------------------------------- autograd (the values')
    def _with_values(self, vals, copy=False, device=None):
        idx = self._idx.copy() if copy else self._idx
        if device is not None:
            idx = move(idx, device)
        return _sparse(idx, vals, self._size, self._coalesced)

    @property
    def grad(self):
        """The values' gradient at this tensor's pattern, coalesced (duplicates of an index
        all get that entry's gradient: it is taken once, as PyTorch's)."""
        g = self._vals.grad if self._leaf else None
        if g is None:
            return None
        if self._coalesced:
            return _sparse(self._idx, g, self._size, True)
        xp = xp_of(self._idx)
        key = _linear_index(self._idx, self._size[:self.sparse_dim()], xp)
        _, first = xp.unique(key, return_index=True)
        return _sparse(self._idx[:, first], g.index_select(0, _make(first.astype("int64"))),
                       self._size, True)

    @grad.setter
    def grad(self, value):
        self._vals.grad = None if value is None else value.coalesce()._vals

    # ---------------------------------------------------------------- conversions
    def coalesce(self):
        """Duplicates summed, indices sorted (row-major), as PyTorch's coalesce."""
        if self._coalesced:
            return self
        xp = xp_of(self._idx)
        nnz = self._idx.shape[1]
        if nnz == 0:
            return _sparse(self._idx, self._vals, self._size, True)
        key = _linear_index(self._idx, self._size[:self.sparse_dim()], xp)
        uniq, inverse = xp.unique(key, return_inverse=True)
        inverse = inverse.reshape(-1)
        vals = self._vals
        if len(uniq) != nnz or not bool((xp.diff(key) > 0).all()):
            from .._creation import zeros
            out = zeros((len(uniq),) + tuple(vals.shape[1:]), dtype=vals.dtype, device=vals.device)
            vals = out.index_add(0, _make(inverse.astype("int64")), vals)
        first = xp.zeros(len(uniq), dtype="int64")
        first[inverse[::-1]] = xp.arange(nnz - 1, -1, -1)
        return _sparse(self._idx[:, first], vals, self._size, True)

    def to_dense(self, dtype=None, *, masked_grad=None):
        """The dense tensor (differentiable w.r.t. the values)."""
        from .._creation import zeros
        out = zeros(self._size, dtype=self._vals.dtype if dtype is None else dtype,
                    device=self._vals.device)
        if self._idx.shape[1] == 0:
            return out + self._vals.sum() * 0 if self._vals.requires_grad else out
        from ._compressed import named
        key = tuple(_make(r) for r in self._idx)
        return named(out.index_put(key, self._vals.to(out.dtype), accumulate=True),
                     "ToDenseBackward0")

    def to_sparse(self, *args, **kwargs):
        return self

    to_sparse_coo = to_sparse

    # ---------------------------------------------------------------- ops PyTorch has for COO
    def t(self):
        if self.dim() != 2 or self.sparse_dim() != 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, "
                               f"but got {self.sparse_dim()} sparse and {self.dense_dim()} "
                               f"dense dimensions")
        return self.transpose(0, 1)

    def transpose(self, dim0, dim1):
        nd = self.dim()
        d0, d1 = dim0 % nd, dim1 % nd
        sd = self.sparse_dim()
        if (d0 < sd) != (d1 < sd):
            raise RuntimeError("transpose: cannot transpose a sparse dim with a dense dim")
        size = list(self._size)
        size[d0], size[d1] = size[d1], size[d0]
        if d0 < sd:
            idx = self._idx.copy()
            idx[[d0, d1]] = idx[[d1, d0]]
            return _sparse(idx, self._vals, tuple(size), False)
        return _sparse(self._idx, self._vals.transpose(d0 - sd + 1, d1 - sd + 1), tuple(size),
                       self._coalesced)

    @property
    def mT(self):
        if self.dim() < 2:
            raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                               f"Got {self.dim()}-D tensor.")
        return self.transpose(-2, -1)

    def bmm(self, mat2):
        from . import _bmm
        return _bmm(self, mat2)

    def _valuewise(self, fn, linear=False):
        s = self if linear else self.coalesce()   # (f(a) + f(b) is not f(a + b))
        return _sparse(s._idx, fn(s._vals), s._size, s._coalesced)

    def __neg__(self):
        return self._valuewise(lambda v: -v, True)

    neg = __neg__

    def pow(self, exponent):
        if not isinstance(exponent, (int, float)) or exponent <= 0:
            raise RuntimeError(f"pow: exponent must be a positive number for sparse tensors, "
                               f"got {exponent}")
        return self._valuewise(lambda v: v.pow(exponent))

    __pow__ = pow

    def __mul__(self, other):
        if isinstance(other, (int, float, bool)):
            return self._valuewise(lambda v: v * other, True)
        if isinstance(other, SparseTensor):
            return _sparse_mul(self, other)
        if isinstance(other, Tensor) and other.dim() == 0:
            return self._valuewise(lambda v: v * other)
        raise _unsupported_combo("mul", "sparse", "dense")

    __rmul__ = __mul__
    mul = __mul__

    def __truediv__(self, other):
        if isinstance(other, (int, float)) or (isinstance(other, Tensor) and
                                                not isinstance(other, SparseTensor) and
                                                other.dim() == 0):
            return self._valuewise(lambda v: v / other, True)
        raise _unsupported_combo("div", "sparse", "dense")

    div = __truediv__

    def __add__(self, other):
        if isinstance(other, SparseTensor):
            return _sparse_add(self, other)
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")

    add = __add__

    def __sub__(self, other):
        if isinstance(other, SparseTensor):
            return _sparse_add(self, -other)
        raise RuntimeError("sub(sparse, dense) is not supported. Use sub(dense, sparse) instead.")

    def __radd__(self, other):
        if isinstance(other, Tensor):   # dense + sparse -> dense
            return other + self.to_dense()
        return NotImplemented

    def mm(self, mat2):
        from . import _mm
        return _mm(self, mat2)

    matmul = __matmul__ = mm

    def __rmatmul__(self, other):      # dense @ sparse (tried first: a subclass of Tensor)
        from . import _mm
        return _mm(other, self)

    def sum(self, dim=None, keepdim=False, dtype=None):
        from . import sum as _ssum
        if keepdim:
            raise RuntimeError("sum: keepdim is not supported for sparse tensors")
        return _ssum(self, dim, dtype=dtype)

    def index_select(self, dim, index):
        d = dim % self.dim()
        if d >= self.sparse_dim():
            return _sparse(self._idx, self._vals.index_select(d - self.sparse_dim() + 1, index),
                           self._size[:d] + (len(index),) + self._size[d + 1:], self._coalesced)
        xp = xp_of(self._idx)
        sel = index._data.astype("int64").reshape(-1)
        # each entry meets every position of the index that names its coordinate: sort the
        # index once, find each entry's run of equal positions (O((nnz + k) log k))
        order = xp.argsort(sel, kind="stable")
        ssel = sel[order]
        coord = self._idx[d]
        lo = xp.searchsorted(ssel, coord, side="left")
        hi = xp.searchsorted(ssel, coord, side="right")
        counts = hi - lo
        nz = xp.repeat(xp.arange(coord.size, dtype="int64"), counts)
        run_start = xp.cumsum(counts) - counts
        within = xp.arange(nz.size, dtype="int64") - xp.repeat(run_start, counts)
        pos = order[xp.repeat(lo, counts) + within]
        idx = self._idx[:, nz].copy()
        idx[d] = pos
        vals = self._vals.index_select(0, _make(nz.astype("int64")))
        size = self._size[:d] + (len(sel),) + self._size[d + 1:]
        return _sparse(idx, vals, size, False)

    def sparse_mask(self, mask):
        raise RuntimeError("sparse_mask: expected self to be a strided tensor")

    def __repr__(self):
        return _sparse_repr(self)

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (_rebuild_sparse, (self._idx, self._vals.detach(), self._size, self._coalesced))

    def numpy(self, *a, **k):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() "
                        "first.")

    def item(self):
        raise RuntimeError("Cannot get item on a sparse tensor")

    def __bool__(self):
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")

    def __len__(self):
        return self._size[0]


for _name in ("exp", "log", "sigmoid", "view", "reshape", "__getitem__", "__setitem__",
              "contiguous", "flatten", "unsqueeze", "squeeze", "permute", "expand", "cos",
              "softmax", "log_softmax", "mean", "max", "min", "argmax", "tolist", "stride",
              "data_ptr", "storage_offset", "is_contiguous"):
    setattr(SparseTensor, _name, _unsupported(_name.strip("_")))


def _unsupported_combo(op, a, b):
    return RuntimeError(f"{op}({a}, {b}) is not supported for sparse tensors")


def _rebuild_sparse(idx, vals, size, coalesced):
    return _sparse(idx, vals, size, coalesced)


class _LayoutData:
    """What generic code reads of a sparse tensor's `_data` (COO and compressed layouts): its
    shape and dtype."""
    __slots__ = ("t",)
    base = None

    def __init__(self, t):
        self.t = t

    @property
    def shape(self):
        return self.t._size

    @property
    def dtype(self):
        return self.t._vals._data.dtype

    @property
    def ndim(self):
        return len(self.t._size)


class _SparseData(_LayoutData):
    """A COO gradient's `_data` (Embedding(sparse=True)): `+=` is the engine's in-place sum of
    two of them."""
    __slots__ = ()

    def __iadd__(self, other):
        merged = _sparse_cat(self.t, other.t)
        self.t._idx, self.t._vals, self.t._coalesced = merged._idx, merged._vals, False
        return self


def _sparse_cat(a, b):
    """a + b as PyTorch sums sparse gradients: the entries of both, uncoalesced."""
    xp = xp_of(a._idx)
    from ..ops.shape import cat
    return _sparse(xp.concatenate([a._idx, b._idx], axis=1), cat([a._vals, b._vals]), a._size,
                   False)


def _sparse(idx, vals, size, coalesced):
    t = object.__new__(SparseTensor)
    t._idx = idx
    t._vals = vals
    t._size = tuple(int(s) for s in size)
    t._coalesced = bool(coalesced)
    t._leaf = not vals.requires_grad
    t._data = _SparseData(t)
    t._requires_grad = False
    t._vc = [0]
    return t


def _linear_index(idx, sizes, xp):
    key = xp.zeros(idx.shape[1], dtype="int64")
    for row, n in zip(idx, sizes):
        key = key * n + row
    return key


def _sparse_add(a, b):
    if a._size != b._size:
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has "
                           f"size {list(a._size)} while other has size {list(b._size)} (FYI: "
                           f"dense-sparse addition does not currently support broadcasting)")
    xp = xp_of(a._idx)
    from ..ops.shape import cat
    vals = cat([a._vals, b._vals.to(D.promote_types(a.dtype, b.dtype))
                if b.dtype is not a.dtype else b._vals])
    return _sparse(xp.concatenate([a._idx, b._idx], axis=1), vals, a._size, False).coalesce()


def _sparse_mul(a, b):
    if a._size != b._size:
        raise RuntimeError("mul: expected 'self' and 'other' to have same size")
    a, b = a.coalesce(), b.coalesce()
    xp = xp_of(a._idx)
    sizes = a._size[:a.sparse_dim()]
    ka, kb = _linear_index(a._idx, sizes, xp), _linear_index(b._idx, sizes, xp)
    common, ia, ib = xp.intersect1d(ka, kb, return_indices=True)
    va = a._vals.index_select(0, _make(ia.astype("int64")))
    vb = b._vals.index_select(0, _make(ib.astype("int64")))
    return _sparse(a._idx[:, ia], va * vb, a._size, True)


def add_into(dense, s, alpha=1.0):
    """dense (an array) += alpha * s, touching only s's rows (duplicates add up)."""
    xp = xp_of(dense)
    vals = s._vals._data if alpha == 1 else s._vals._data * alpha
    key = tuple(s._idx)
    if xp is not None and hasattr(xp, "add") and hasattr(xp.add, "at"):
        ufunc_at(xp, xp.add, dense, key, vals.astype(dense.dtype, copy=False))
    else:
        dense[key] += vals
    return dense


# ---------------------------------------------------------------- construction

def _check_indices(idx, size, sparse_dim):
    for d in range(sparse_dim):
        row = idx[d]
        if row.size == 0:
            continue
        mn, mx = int(row.min()), int(row.max())
        if mn < 0:
            raise RuntimeError(f"found negative index {mn} for dim {d}")
        if mx >= size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                               f"{size[d]} but found index {mx}")


_NO_ARG = object()


def sparse_coo_tensor(indices=_NO_ARG, values=_NO_ARG, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None,
                      is_coalesced=None):
    """torch.sparse_coo_tensor: a COO tensor with `values` at `indices` (sparse_dim x nnz);
    sparse_coo_tensor(size) (or size=): an empty one of that size."""
    from .._creation import tensor as _tensor, zeros
    if values is _NO_ARG:       # (PyTorch's overload sparse_coo_tensor(size, *, dtype, ...))
        if indices is not _NO_ARG and size is None:
            indices, size = _NO_ARG, indices
        if indices is not _NO_ARG or size is None:
            from ..ops._argcheck import invalid_combination
            raise invalid_combination("sparse_coo_tensor", [] if indices is _NO_ARG
                                      else [indices], {})
        from .._creation import _size
        size = _size((size,), "sparse_coo_tensor")
        return sparse_coo_tensor(zeros((len(size), 0), dtype=D.int64, device=device),
                                 zeros((0,), dtype=dtype or D.get_default_dtype(), device=device),
                                 size, requires_grad=requires_grad, is_coalesced=True)
    idx_t = indices if isinstance(indices, Tensor) else _tensor(indices)
    vals = values if isinstance(values, Tensor) else _tensor(values)
    if device is not None:
        vals = vals.to(device)
    idx_t = idx_t.to(vals.device)   # the structure lives with the values
    if idx_t.dtype is not D.int64:
        if idx_t.dtype.is_floating_point or idx_t.dtype.is_complex:
            raise RuntimeError(f"indices must be an int64 tensor")
        idx_t = idx_t.long()
    if idx_t.dim() == 1:   # (PyTorch reads a vector as sparse_dim x 1)
        idx_t = idx_t.view(-1, 1)
    if idx_t.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: "
                           f"[{', '.join(map(str, idx_t.shape))}]")
    idx = idx_t._data
    if vals.dim() == 0:
        raise RuntimeError("values must be at least 1-dimensional")
    sparse_dim = idx.shape[0]
    if size is not None and len(size) != sparse_dim + vals.dim() - 1:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = "
                           f"{len(size)}, sparse_dim = {sparse_dim}, dense_dim = {vals.dim() - 1}")
    if idx.shape[1] != vals.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{idx.shape[1]}, nnz from values: {vals.shape[0]}")
    if size is None:
        mx = [int(r.max()) + 1 if r.size else 0 for r in idx]
        size = tuple(mx) + tuple(vals.shape[1:])
    size = tuple(int(s) for s in size)
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: "
                           f"[{', '.join(map(str, size))}]")
    if len(size) != sparse_dim + vals.dim() - 1:
        raise RuntimeError(f"number of dimensions must be sparse_dim ({sparse_dim}) + dense_dim "
                           f"({vals.dim() - 1}), but got {len(size)}")
    if tuple(vals.shape[1:]) != size[sparse_dim:]:
        raise RuntimeError(f"values has incorrect size, expected "
                           f"[{', '.join(map(str, (vals.shape[0],) + size[sparse_dim:]))}], got "
                           f"[{', '.join(map(str, vals.shape))}]")
    if check_invariants is None or check_invariants:
        _check_indices(idx, size, sparse_dim)
    if dtype is not None:
        vals = vals.to(dtype)
    coalesced = bool(is_coalesced) if is_coalesced is not None else idx.shape[1] <= 1
    if requires_grad:   # a new leaf over the same values (the caller's tensor is untouched)
        vals = vals.detach().requires_grad_(True)
    elif vals.requires_grad:
        from ._compressed import named
        vals = named(vals, "SparseCooTensorWithDimsAndTensorsBackward0")
    s = _sparse(idx, vals, size, coalesced)
    s._leaf = requires_grad or not vals.requires_grad
    return s


def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """Tensor.to_sparse(): the nonzero entries of a dense tensor (differentiable)."""
    if layout is not None and layout is not sparse_coo:
        raise RuntimeError(f"to_sparse: layout {layout} is not supported yet")
    nd = self.dim()
    sd = nd if sparse_dim is None else int(sparse_dim)
    if dense_dim is not None:
        sd = nd - int(dense_dim)
    if not 0 < sd <= nd:
        raise RuntimeError(f"sparse_dim must be in [1, {nd}], got {sd}" if nd else
                           "to_sparse: 0-d tensors are not supported")
    xp = xp_of(self._data)
    a = self._data
    nz = a != 0 if sd == nd else (a != 0).reshape(a.shape[:sd] + (-1,)).any(axis=-1)
    idx = xp.stack(xp.nonzero(nz)).astype("int64").reshape(sd, -1)
    key = tuple(_make(r) for r in idx)
    vals = self[key] if idx.shape[1] else self.reshape((0,) + tuple(self.shape[sd:]))
    from ._compressed import named
    return _sparse(idx, named(vals, "ToSparseBackward1"), tuple(self.shape), True)


# ---------------------------------------------------------------- printing

def _indent(text, n):
    lines = text.split("\n")
    return "\n".join([lines[0]] + [" " * n + ln for ln in lines[1:]])


def _sparse_repr(s):
    """As PyTorch's _tensor_str for a COO tensor (the first suffix always on a new line)."""
    from .._tensor_str import _tensor_str, _to_numpy, _grad_fn_name
    from ._compressed import _default_shown, _suffixes
    indent = len("tensor(")
    ip, vp = "indices=tensor(", "values=tensor("
    istr = _tensor_str(_to_numpy(s._idx), indent + len(ip))
    if s._idx.size == 0:
        istr += f", size={tuple(s._idx.shape)}"
    vals = s._vals
    vstr = _tensor_str(_to_numpy(vals._data), indent + len(vp))
    if vals._data.size == 0:
        vstr += f", size={tuple(vals._data.shape)}"
    body = ip + istr + "),\n" + " " * indent + vp + vstr + ")"
    suffixes = [f"size={tuple(s._size)}", f"nnz={s._nnz()}"]
    if not _default_shown(vals.dtype):
        suffixes.append(f"dtype={vals.dtype!r}")
    suffixes.append("layout=torch.sparse_coo")
    if vals.requires_grad:
        suffixes.append(f"grad_fn=<{_grad_fn_name(vals.grad_fn)}>" if vals.grad_fn is not None
                        else "requires_grad=True")
    return _suffixes("tensor(" + body, suffixes, indent, True)


Tensor.layout = strided
