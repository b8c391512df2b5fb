"""Sparse compressed tensors (layouts torch.sparse_csr / torch.sparse_csc) and the sparse @ dense
product that every sparse layout shares.

    c = torch.sparse_csr_tensor(crow_indices, col_indices, values, size)
    c @ dense                          # O(nnz * d): a segment sum over each row's entries

A CSR tensor of shape (m, n) stores `crow_indices` (m + 1: where each row's entries start),
`col_indices` and `values` (nnz each); a CSC tensor stores `ccol_indices` (n + 1) and
`row_indices`. As for COO (Note [Sparse autograd through the values] in sparse/_coo.py), the values
tensor carries the autograd history: every op is written with dense differentiable ops on the
values, and a leaf's `.grad` is the values' gradient at the leaf's pattern.

Note [Sparse products as segment sums]: `_spmm(values, dense, pattern)` computes
out[r] = sum over the entries e of row r of values[e] * dense[col[e]] by gathering the rows of
`dense`, scaling them, and summing each row's consecutive run with `add.reduceat` (entries
sorted by row once per pattern and cached), in chunks so the gathered block stays small. Its
derivative for `dense` is the same op over the transposed pattern, for `values` a gather and a
row-wise dot product, both differentiable, so higher orders work.
"""
from .. import _dtype as D
from .._backend import xp_of, move
from .._tensor import Tensor, Size, _make
from ._coo import _Layout, _LayoutData, _sparse, SparseTensor, _unsupported, _ValuesAutograd

__all__ = ["sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "sparse_csr_tensor", "sparse_csc_tensor",
           "sparse_compressed_tensor", "SparseCompressedTensor"]

sparse_csr = _Layout("sparse_csr")
sparse_csc = _Layout("sparse_csc")
sparse_bsr = _Layout("sparse_bsr")      # (named, so programs can compare layouts; ndgrad has
sparse_bsc = _Layout("sparse_bsc")      # no block-sparse tensors: _no_blocks)


def _no_blocks(layout):
    return NotImplementedError(f"ndgrad has no block-sparse tensors (layout {layout!r})")
_NAMES = {sparse_csr: "SparseCsr", sparse_csc: "SparseCsc"}

_CHUNK = 1 << 14          # entries gathered at a time by _spmm (a block that stays in cache)


# ---------------------------------------------------------------- the product (all layouts)

class _Pattern:
    """Rows and columns of a sparse (m x n) matrix's entries, sorted by row, with the runs that
    add.reduceat sums; `.T` (cached) is the transposed pattern, for the dense operand's
    gradient."""
    __slots__ = ("rows", "cols", "order", "m", "n", "starts", "targets", "_t", "_buckets")

    def __init__(self, rows, cols, m, n, xp):
        self.m, self.n, self._t, self._buckets = m, n, None, None
        if rows.size and bool((rows[1:] < rows[:-1]).any()):
            self.order = xp.argsort(rows, kind="stable")
            rows, cols = rows[self.order], cols[self.order]
        else:
            self.order = None
        self.rows, self.cols = rows, cols
        if rows.size:
            new = xp.empty(rows.size, dtype=bool)
            new[0] = True
            xp.not_equal(rows[1:], rows[:-1], out=new[1:])
            self.starts = xp.flatnonzero(new)
            self.targets = rows[self.starts]
        else:
            self.starts = self.targets = rows

    @property
    def T(self):
        if self._t is None:
            xp = xp_of(self.rows)
            t = _Pattern(self.cols, self.rows, self.n, self.m, xp)
            # entries of t, in t's order, as positions in the caller's values order
            own = xp.arange(self.rows.size) if self.order is None else self.order
            t.order = own if t.order is None else own[t.order]
            t._t = self
            self._t = t
        return self._t

    def buckets(self):
        """[(k, rows with k entries, (rows, k) columns of their entries, (rows, k) positions
        of their values in the caller's order)]: the rows grouped by their number of entries,
        so each group sums a dense (rows, k, d) block along k."""
        if self._buckets is None:
            xp = xp_of(self.rows)
            nnz = self.rows.size
            counts = xp.diff(xp.concatenate([self.starts, xp.asarray([nnz])]))
            by = xp.argsort(counts, kind="stable")
            sc = counts[by]
            edges = xp.flatnonzero(xp.diff(sc)) + 1
            out = []
            for lo, hi in zip([0] + edges.tolist(), edges.tolist() + [sc.size]):
                if lo == hi:
                    continue
                segs = by[lo:hi]
                k = int(sc[lo])
                pos = self.starts[segs][:, None] + xp.arange(k)
                out.append((k, self.targets[segs], self.cols[pos],
                            pos if self.order is None else self.order[pos]))
            self._buckets = out
        return self._buckets


def _spmm_fwd(xp, values, dense, pattern):
    out = xp.zeros((pattern.m,) + dense.shape[1:], dtype=dense.dtype)
    tail = (1,) * (dense.ndim - 1)
    values = values.astype(dense.dtype, copy=False)
    for k, targets, cols, vpos in pattern.buckets():
        step = max(1, _CHUNK // k)
        for r in range(0, targets.size, step):   # rows of k entries: (rows, k, d) blocks
            c = cols[r:r + step]
            block = xp.take(dense, c, axis=0)
            block *= xp.take(values, vpos[r:r + step]).reshape(c.shape + tail)
            out[targets[r:r + step]] = block.sum(axis=1)
    return out


def _spmm_values_grad(grad, dense, pattern):
    """d out / d values: each entry's row of grad dotted with its row of dense."""
    rows, cols = pattern.rows, pattern.cols
    g = grad.index_select(0, _make(rows)) * dense.index_select(0, _make(cols))
    g = g.sum(tuple(range(1, g.dim()))) if g.dim() > 1 else g
    if pattern.order is None:
        return g
    from .._creation import zeros
    return zeros(g.shape[0], dtype=g.dtype, device=g.device).index_put((_make(pattern.order),), g)


def _make_spmm():
    from ..ops._registry import defop
    return defop(
        "_sparse_mm", _spmm_fwd, promote=None, node_name="MmBackward0",
        values=lambda grad, dense, pattern: _spmm_values_grad(grad, dense, pattern),
        dense=lambda grad, values, pattern: _spmm_op(values, grad, pattern.T))


_spmm_op = None
_ALIASES = {}


def named(t, node_name):
    """`t` behind an identity node named as PyTorch names the op that made it (a sparse op
    whose values come from dense ops on the values: repr(grad_fn) as PyTorch's)."""
    if not t.requires_grad:
        return t
    op = _ALIASES.get(node_name)
    if op is None:
        from ..ops._registry import defop
        op = _ALIASES[node_name] = defop(
            "_alias_" + node_name, lambda xp, self: self.view(), promote=None, view=True,
            node_name=node_name, self=lambda grad: grad, jvp="linear")
    return op(t)


def spmm_values(values, dense, pattern, node_name="MmBackward0"):
    """values (nnz, in the caller's order) at `pattern`, times dense: Note [Sparse products as
    segment sums]."""
    global _spmm_op
    if _spmm_op is None:
        _spmm_op = _make_spmm()
    out = _spmm_op(values, dense, pattern)
    return out if node_name == "MmBackward0" else named(out, node_name)


def pattern_of(s):
    """The (cached) _Pattern of a 2-D sparse tensor of any layout, in its values' order."""
    cache = s.__dict__.get("_pattern")
    key = s._idx if isinstance(s, SparseTensor) else s._pidx
    if cache is not None and cache[0] is key:
        return cache[1]
    xp = xp_of(key)
    m, n = s._size
    if isinstance(s, SparseTensor):
        p = _Pattern(s._idx[0], s._idx[1], m, n, xp)
    else:
        c = _expand(s._cidx, xp)
        p = _Pattern(c, s._pidx, m, n, xp) if s._layout is sparse_csr else \
            _Pattern(s._pidx, c, m, n, xp)
    s.__dict__["_pattern"] = (key, p)
    return p


def _expand(compressed, xp):
    """The compressed index of each entry (crow_indices -> each entry's row)."""
    counts = xp.diff(compressed)
    return xp.repeat(xp.arange(counts.size, dtype="int64"), counts)


# ---------------------------------------------------------------- the tensor

def _err_layout(what, expected, got):
    return RuntimeError(f"{what} expected {expected} tensor layout but got {_NAMES[got]}")


class SparseCompressedTensor(_ValuesAutograd, Tensor):
    """A CSR or CSC tensor (2-D, scalar values): Note [Sparse autograd through the values]."""
    from .._tensor import _disabled_torch_function_impl as __torch_function__  # noqa: E501 (no dispatch)

    def __init__(self, *a, **k):
        raise TypeError("use torch.sparse_csr_tensor or torch.sparse_csc_tensor")

    @property
    def layout(self):
        return self._layout

    @property
    def is_sparse(self):
        return False

    @property
    def is_sparse_csr(self):
        return self._layout is sparse_csr

    @property
    def shape(self):
        return Size(self._size)

    def size(self, dim=None):
        return Size(self._size) if dim is None else self._size[dim]

    def dim(self):
        return len(self._size)

    ndim = property(dim)

    def numel(self):
        return self._size[0] * self._size[1]

    def sparse_dim(self):
        return 2

    def dense_dim(self):
        return 0

    def _nnz(self):
        return int(self._pidx.shape[0])

    def crow_indices(self):
        if self._layout is not sparse_csr:
            raise _err_layout("crow_indices", "sparse row compressed", self._layout)
        return _make(self._cidx)

    def col_indices(self):
        if self._layout is not sparse_csr:
            raise _err_layout("col_indices", "sparse row compressed", self._layout)
        return _make(self._pidx)

    def ccol_indices(self):
        if self._layout is not sparse_csc:
            raise _err_layout("ccol_indices", "sparse column compressed", self._layout)
        return _make(self._cidx)

    def row_indices(self):
        if self._layout is not sparse_csc:
            raise _err_layout("row_indices", "sparse column compressed", self._layout)
        return _make(self._pidx)

    def values(self):
        return self._vals

    def indices(self):
        raise _err_layout("indices", "sparse coordinate", self._layout)

    _indices = indices

    def is_coalesced(self):
        raise _err_layout("is_coalesced", "sparse coordinate", self._layout)

    def coalesce(self):
        raise _err_layout("coalesce", "sparse coordinate", self._layout)

    # ---------------------------------------------------------------- autograd (the values')
    def _with_values(self, vals, copy=False, device=None):
        cidx, pidx = (self._cidx.copy(), self._pidx.copy()) if copy else (self._cidx, self._pidx)
        if device is not None:
            cidx, pidx = move(cidx, device), move(pidx, device)
        return _compressed(cidx, pidx, vals, self._size, self._layout)

    @property
    def grad(self):
        g = self._vals.grad if self._leaf else None
        return None if g is None else _compressed(self._cidx, self._pidx, g, self._size,
                                                  self._layout)

    @grad.setter
    def grad(self, value):
        self._vals.grad = None if value is None else value.values()

    # ---------------------------------------------------------------- conversions
    def _coo_arrays(self):
        """(rows, cols) of each entry, in the values' order."""
        xp = xp_of(self._cidx)
        c = _expand(self._cidx, xp)
        return (c, self._pidx) if self._layout is sparse_csr else (self._pidx, c)

    def to_dense(self, dtype=None, *, masked_grad=None):
        from .._creation import zeros
        out = zeros(self._size, dtype=self._vals.dtype if dtype is None else dtype,
                    device=self._vals.device)
        if self._pidx.shape[0] == 0:
            return out + self._vals.sum() * 0 if self._vals.requires_grad else out
        rows, cols = self._coo_arrays()
        return named(out.index_put((_make(rows), _make(cols)), self._vals.to(out.dtype),
                                   accumulate=True), "ToDenseBackward0")

    def to_sparse_coo(self):
        xp = xp_of(self._cidx)
        rows, cols = self._coo_arrays()
        idx = xp.stack([rows, cols]).astype("int64")
        vals = named(self._vals, "ToSparseBackward1")
        if self._layout is sparse_csr:    # already row-major
            return _sparse(idx, vals, self._size, True)
        return _sparse(idx, vals, self._size, False).coalesce()

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout is None or layout.name == "sparse_coo":
            return self.to_sparse_coo()
        if layout is sparse_csr:
            return self.to_sparse_csr()
        if layout is sparse_csc:
            return self.to_sparse_csc()
        if layout in (sparse_bsr, sparse_bsc):
            raise _no_blocks(layout)
        raise RuntimeError(f"to_sparse: conversion from {_NAMES[self._layout]} to "
                           f"{layout.name} is not supported")

    def _convert(self, layout):
        if layout is self._layout:
            return self
        rows, cols = self._coo_arrays()       # csr <-> csc: re-sort by the other index
        t = _from_pairs(cols, rows, self._vals, self._size, layout) \
            if layout is sparse_csc else _from_pairs(rows, cols, self._vals, self._size, layout)
        t._vals = named(t._vals, _TO_NAMES[layout])
        return t

    def to_sparse_csr(self, dense_dim=None):
        return self._convert(sparse_csr)

    def to_sparse_csc(self, dense_dim=None):
        return self._convert(sparse_csc)

    # ---------------------------------------------------------------- ops PyTorch has for CSR
    def t(self):
        return self._t("TBackward0")

    def _t(self, name):
        other = sparse_csc if self._layout is sparse_csr else sparse_csr
        return _compressed(self._cidx, self._pidx, named(self._vals, name), self._size[::-1],
                           other)

    def transpose(self, dim0, dim1):
        if {dim0 % 2, dim1 % 2} == {0, 1}:
            return self._t("TransposeBackward0")
        return self

    def _valuewise(self, fn):
        return _compressed(self._cidx, self._pidx, fn(self._vals), self._size, self._layout)

    def __neg__(self):
        return self._valuewise(lambda v: -v)

    neg = __neg__

    def __mul__(self, other):
        if isinstance(other, (int, float, bool)) or (
                isinstance(other, Tensor) and type(other) is not SparseCompressedTensor and
                not isinstance(other, SparseTensor) and other.dim() == 0):
            return self._valuewise(lambda v: v * other)
        if isinstance(other, Tensor) and not isinstance(other, (SparseTensor,
                                                                 SparseCompressedTensor)):
            if tuple(other.shape) != self._size:
                raise RuntimeError(f"mul: expected 'self' and 'other' to have same size")
            if self._layout is sparse_csc:
                raise RuntimeError("Expected result Tensor to be of format CSR")
            rows, cols = self._coo_arrays()
            return self._valuewise(lambda v: v * other[_make(rows), _make(cols)])
        if isinstance(other, SparseCompressedTensor):
            return (self.to_sparse_coo() * other.to_sparse_coo())._convert_to(self._layout)
        return NotImplemented

    __rmul__ = __mul__
    mul = __mul__

    def __truediv__(self, other):       # (PyTorch has no division of compressed tensors)
        raise RuntimeError(f"unsupported tensor layout: {_NAMES[self._layout]}")

    div = __truediv__

    def __add__(self, other):
        if isinstance(other, SparseCompressedTensor):
            if other is self:      # (PyTorch adds a tensor to itself in any layout)
                return self._valuewise(lambda v: v + v)
            if sparse_csc in (self._layout, other._layout):
                raise _err_layout("crow_indices", "sparse row compressed", sparse_csc)
            if other._size != self._size:
                raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but "
                                   f"self has size {list(self._size)} while other has size "
                                   f"{list(other._size)} (FYI: dense-sparse addition does not "
                                   f"currently support broadcasting)")
            return (self.to_sparse_coo() + other.to_sparse_coo())._convert_to(self._layout)
        if isinstance(other, Tensor) and not isinstance(other, SparseTensor):
            return self.to_dense() + other
        return NotImplemented

    add = __add__

    def __radd__(self, other):
        if isinstance(other, Tensor) and not isinstance(other, SparseTensor):
            return other + self.to_dense()
        return NotImplemented

    def __sub__(self, other):
        if isinstance(other, (SparseTensor, SparseCompressedTensor)):
            raise RuntimeError(f"unsupported tensor layout: {_NAMES[self._layout]}")
        return self + (-other)

    def sum(self, dim=None, keepdim=False, dtype=None):
        if dim is not None and not keepdim:
            raise RuntimeError("reduction operations on CSR tensors with keepdim=False is "
                               "unsupported")
        v = self._vals if dtype is None else self._vals.to(dtype)
        if dim is None:
            return v.sum()
        return self.to_dense(v.dtype).sum(dim, keepdim=True)

    def mm(self, mat2):
        from . import _mm
        return _mm(self, mat2)

    matmul = __matmul__ = mm

    def __rmatmul__(self, other):      # dense @ sparse (tried first: a subclass of Tensor)
        from . import _mm
        return _mm(other, self)

    def __repr__(self):
        return _compressed_repr(self)

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (_rebuild_compressed, (self._layout.name, self._cidx, self._pidx,
                                      self._vals.detach(), self._size))

    def numpy(self, *a, **k):
        raise TypeError(f"can't convert {_NAMES[self._layout]} layout tensor to numpy. Use "
                        f"Tensor.to_dense() first.")

    def item(self):
        raise RuntimeError(f"unsupported tensor layout: {_NAMES[self._layout]}")

    def __bool__(self):
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")

    def __len__(self):
        return self._size[0]


def _csr_unsupported(name):
    def f(self, *args, **kwargs):
        raise NotImplementedError(
            f"Could not run 'aten::{name}' with arguments from the "
            f"'SparseCsrCPU' backend. This could be because the operator doesn't "
            f"exist for this backend, or was omitted during the selective/custom build process "
            f"(if using custom build).")
    f.__name__ = name
    return f


for _name in ("view", "reshape", "__setitem__", "flatten", "unsqueeze", "squeeze", "permute",
              "expand", "stride", "data_ptr", "storage_offset", "index_select", "cos", "log",
              "sigmoid", "softmax", "log_softmax", "mean", "max", "min", "argmax"):
    setattr(SparseCompressedTensor, _name, _csr_unsupported(_name.strip("_")))


def _layout_error(name):
    def f(self, *args, **kwargs):
        raise RuntimeError(f"unsupported tensor layout: {_NAMES[self._layout]}")
    f.__name__ = name
    return f


for _name in ("exp", "tolist", "contiguous", "__getitem__", "pow", "__pow__"):
    setattr(SparseCompressedTensor, _name, _layout_error(_name))


def _convert_to(self, layout):
    """COO (2-D) -> CSR / CSC."""
    return _coo_to_compressed(self, layout)


SparseTensor._convert_to = _convert_to


def _compressed(cidx, pidx, vals, size, layout):
    t = object.__new__(SparseCompressedTensor)
    t._cidx, t._pidx, t._vals = cidx, pidx, vals
    t._size = tuple(int(s) for s in size)
    t._layout = layout
    t._leaf = not vals.requires_grad
    t._data = _LayoutData(t)
    t._requires_grad = False
    t._vc = [0]
    return t


def _from_pairs(comp, plain, vals, size, layout):
    """Entries (compressed index, plain index, value) in any order -> a compressed tensor whose
    entries are sorted by (compressed, plain)."""
    xp = xp_of(comp)
    ncomp = size[0] if layout is sparse_csr else size[1]
    nplain = size[1] if layout is sparse_csr else size[0]
    key = comp.astype("int64") * max(nplain, 1) + plain
    order = xp.argsort(key, kind="stable")
    counts = xp.bincount(comp, minlength=ncomp) if comp.size else xp.zeros(ncomp, "int64")
    cidx = xp.concatenate([xp.zeros(1, "int64"), xp.cumsum(counts)]).astype("int64")
    sorted_ = bool((order == xp.arange(order.size)).all())
    v = vals if sorted_ else vals.index_select(0, _make(order.astype("int64")))
    return _compressed(cidx, plain[order].astype("int64"), v, size, layout)


_TO_NAMES = {sparse_csr: "ToSparseCsrBackward0", sparse_csc: "ToSparseCscBackward0"}


def _coo_to_compressed(s, layout):
    if s.dim() != 2 or s.sparse_dim() != 2:
        raise RuntimeError(f"to_sparse_{'csr' if layout is sparse_csr else 'csc'}: only 2-D "
                           f"sparse tensors with 2 sparse dims can be converted, got "
                           f"{s.sparse_dim()} sparse and {s.dense_dim()} dense dims")
    s = s.coalesce()
    rows, cols = s._idx[0], s._idx[1]
    t = _from_pairs(rows, cols, s._vals, s._size, layout) if layout is sparse_csr else \
        _from_pairs(cols, rows, s._vals, s._size, layout)
    t._vals = named(t._vals, _TO_NAMES[layout])
    t._leaf = False if t._vals.requires_grad else t._leaf
    return t


def dense_to_compressed(self, layout):
    """Tensor.to_sparse_csr / to_sparse_csc of a strided tensor (2-D)."""
    if self.dim() != 2:
        if self.dim() < 2:
            raise RuntimeError(f"to_sparse_{'csr' if layout is sparse_csr else 'csc'}: "
                               f"expected a tensor with at least 2 dimensions, got "
                               f"{self.dim()}")
        raise NotImplementedError("ndgrad's compressed sparse tensors are 2-D (no batch or "
                                  "dense dimensions)")
    from ._coo import to_sparse
    return _coo_to_compressed(to_sparse(self), layout)


# ---------------------------------------------------------------- construction

def _check_compressed(cidx, pidx, nnz, size, layout, xp):
    c, p = ("crow", "col") if layout is sparse_csr else ("ccol", "row")
    ncomp, nplain = (size[0], size[1]) if layout is sparse_csr else (size[1], size[0])
    cname = "rows" if layout is sparse_csr else "columns"
    if cidx.shape[-1] != ncomp + 1:
        raise RuntimeError(f"{c}_indices.shape[-1] must be equal to the number of {cname} + 1 "
                           f"(={ncomp + 1}), but got {cidx.shape[-1]}")
    if pidx.shape[-1] != nnz:
        raise RuntimeError(f"{p}_indices.shape[-1] must be equal to nnz (={nnz}) as defined by "
                           f"values.shape[0], but got {pidx.shape[-1]}")
    if int(cidx[0]) != 0:
        raise RuntimeError(f"`{c}_indices[..., 0] == 0` is not satisfied.")
    if int(cidx[-1]) != nnz:
        raise RuntimeError(f"`{c}_indices[..., -1] == nnz` is not satisfied.")
    d = xp.diff(cidx)
    if d.size and (int(d.min()) < 0 or int(d.max()) > nplain):
        raise RuntimeError(f"`0 <= {c}_indices[..., 1:] - {c}_indices[..., :-1] <= "
                           f"n{'cols' if layout is sparse_csr else 'rows'}` is not satisfied.")
    if nnz and (int(pidx.min()) < 0 or int(pidx.max()) >= nplain):
        raise RuntimeError(f"`0 <= {p}_indices < n{'cols' if layout is sparse_csr else 'rows'}`"
                           f" is not satisfied.")
    if nnz > 1:
        same = _expand(cidx, xp)
        bad = (same[1:] == same[:-1]) & (pidx[1:] <= pidx[:-1])
        if bool(bad.any()):
            raise RuntimeError(f"`{p}_indices[..., {c}_indices[..., i - 1]:{c}_indices[..., i]] "
                               f"for all i = 1, ..., n{cname} are sorted and distinct along "
                               f"the last dimension values` is not satisfied.")


def _idx_type_name(dt):
    from ..ops._inplace import _type_name
    return _type_name(dt)


def sparse_compressed_tensor(compressed_indices, plain_indices, values, size=None, *,
                             dtype=None, layout=None, device=None, pin_memory=False,
                             requires_grad=False, check_invariants=None):
    """torch.sparse_compressed_tensor: a CSR or CSC tensor (layout=torch.sparse_csr / csc)."""
    if layout in (sparse_bsr, sparse_bsc):
        raise _no_blocks(layout)
    if layout not in (sparse_csr, sparse_csc):
        got = "none" if layout is None else {"strided": "Strided", "sparse_coo": "Sparse"}.get(
            layout.name, layout.name)
        raise RuntimeError(f"sparse_compressed_tensor expected sparse compressed tensor layout "
                           f"but got {got}")
    from .._creation import tensor as _tensor
    ci = compressed_indices if isinstance(compressed_indices, Tensor) else \
        _tensor(compressed_indices)
    pi = plain_indices if isinstance(plain_indices, Tensor) else _tensor(plain_indices)
    vals = values if isinstance(values, Tensor) else _tensor(values)
    if device is not None:
        vals = vals.to(device)
    ci, pi = ci.to(vals.device), pi.to(vals.device)   # the structure lives with the values
    c, p = ("crow", "col") if layout is sparse_csr else ("ccol", "row")
    if ci.dtype is not pi.dtype:
        raise RuntimeError(f"{c}_indices and {p}_indices must have the same dtype, bot got "
                           f"{_idx_type_name(ci.dtype)} and {_idx_type_name(pi.dtype)}, "
                           f"respectively")
    if ci.dtype not in (D.int32, D.int64):
        raise RuntimeError(f"{c}_indices and {p}_indices must be an int32 or int64 type, but "
                           f"got: {_idx_type_name(ci.dtype)}")
    if ci.dim() != 1 or pi.dim() != 1 or vals.dim() != 1:
        raise NotImplementedError("ndgrad's compressed sparse tensors are 2-D (no batch or "
                                  "dense dimensions): expected 1-D indices and values")
    xp = xp_of(ci._data)
    cidx, pidx = ci._data.astype("int64", copy=False), pi._data.astype("int64", copy=False)
    nnz = vals.shape[0]
    if size is None:
        ncomp = cidx.shape[0] - 1
        nplain = int(pidx.max()) + 1 if pidx.size else 0
        size = (ncomp, nplain) if layout is sparse_csr else (nplain, ncomp)
    size = tuple(int(s) for s in size)
    if len(size) != 2:
        raise RuntimeError(f"tensor dimensionality must be sum of batch, base, and dense "
                           f"dimensionalities (=0 + 2 + 0) but got {len(size)}")
    if check_invariants is not False:
        _check_compressed(cidx, pidx, nnz, size, layout, xp)
    elif cidx.shape[-1] != (size[0] if layout is sparse_csr else size[1]) + 1 or \
            pidx.shape[-1] != nnz:
        _check_compressed(cidx, pidx, nnz, size, layout, xp)   # (shapes only: raises)
    if dtype is not None:
        vals = vals.to(dtype)
    if requires_grad:
        vals = vals.detach().requires_grad_(True)
    elif vals.requires_grad:
        vals = named(vals, "SparseCompressedTensorBackward0")
    t = _compressed(cidx, pidx, vals, size, layout)
    t._leaf = requires_grad or not vals.requires_grad
    return t


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None):
    """torch.sparse_csr_tensor(crow_indices, col_indices, values, size)."""
    return sparse_compressed_tensor(crow_indices, col_indices, values, size, dtype=dtype,
                                    layout=sparse_csr, device=device,
                                    requires_grad=requires_grad)


def sparse_csc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None):
    """torch.sparse_csc_tensor(ccol_indices, row_indices, values, size)."""
    return sparse_compressed_tensor(ccol_indices, row_indices, values, size, dtype=dtype,
                                    layout=sparse_csc, device=device,
                                    requires_grad=requires_grad)


def _rebuild_compressed(layout, cidx, pidx, vals, size):
    return _compressed(cidx, pidx, vals, size, sparse_csr if layout == "sparse_csr" else
                       sparse_csc)


# ---------------------------------------------------------------- printing

def _default_shown(dtype):
    """Dtypes a sparse repr leaves out, as PyTorch's _tensor_str."""
    default = D.get_default_dtype()
    complex_ = D.complex128 if default is D.float64 else D.complex64
    return dtype in (default, complex_, D.int64, D.bool)


def _compressed_repr(t):
    from .._tensor_str import _tensor_str, _to_numpy, _grad_fn_name
    indent = len("tensor(")
    if t._layout is sparse_csr:
        cp, pp = "crow_indices=tensor(", "col_indices=tensor("
    else:
        cp, pp = "ccol_indices=tensor(", "row_indices=tensor("
    vals = t._vals
    cstr = _tensor_str(_to_numpy(t._cidx), indent + len(cp))
    pstr = _tensor_str(_to_numpy(t._pidx), indent + len(pp))
    if t._pidx.size == 0:
        pstr += f", size={tuple(t._pidx.shape)}"
    vp = "values=tensor("
    vstr = _tensor_str(_to_numpy(vals._data), indent + len(vp))
    if vals._data.size == 0:
        vstr += f", size={tuple(vals._data.shape)}"
    body = (cp + cstr + "),\n" + " " * indent + pp + pstr + "),\n" + " " * indent + vp + vstr
            + ")")
    suffixes = [f"size={tuple(t._size)}", f"nnz={t._nnz()}"]
    if not _default_shown(vals.dtype):
        suffixes.append(f"dtype={vals.dtype!r}")
    suffixes.append(f"layout={t._layout!r}")
    if vals.requires_grad:
        suffixes.append(f"grad_fn=<{_grad_fn_name(vals.grad_fn)}>" if vals.grad_fn is not None
                        else "requires_grad=True")
    return _suffixes("tensor(" + body, suffixes, indent, False)


def _suffixes(tensor_str, suffixes, indent, force_newline):
    """PyTorch's _add_suffixes (force_newline: a COO tensor's first suffix)."""
    from .._tensor_str import _add_suffixes
    if not force_newline or not suffixes:
        return _add_suffixes(tensor_str, suffixes, indent)
    first = ",\n" + " " * indent + suffixes[0]
    # (_add_suffixes counts a line without a newline as 2 longer: PyTorch's count)
    rest = _add_suffixes(" " * (indent - 2) + suffixes[0], suffixes[1:], indent)
    return tensor_str + first + rest[indent - 2 + len(suffixes[0]):]


def _coo_to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    if layout in (sparse_bsr, sparse_bsc):
        raise _no_blocks(layout)
    if layout is sparse_csr or layout is sparse_csc:
        return _coo_to_compressed(self, layout)
    return self


SparseTensor.to_sparse_csr = lambda self, dense_dim=None: _coo_to_compressed(self, sparse_csr)
SparseTensor.to_sparse_csc = lambda self, dense_dim=None: _coo_to_compressed(self, sparse_csc)
SparseTensor.to_sparse = _coo_to_sparse
SparseTensor.is_sparse_csr = property(lambda self: False)


# ---------------------------------------------------------------- the values-wise ops of both

# Unary ops that map 0 to 0, which PyTorch runs on the specified values of a sparse tensor.
_UNARY = ("sin", "tan", "asin", "atan", "sinh", "tanh", "asinh", "atanh", "sqrt", "abs", "neg",
          "sign", "floor", "ceil", "round", "trunc", "frac", "expm1", "log1p", "relu", "erf",
          "deg2rad", "rad2deg", "sgn", "signbit", "isnan", "isinf", "erfinv", "conj",
          "positive", "isneginf", "isposinf")
_LINEAR = {"neg", "conj", "positive", "deg2rad", "rad2deg"}   # f(a) + f(b) == f(a + b)
_INPLACE = tuple(n for n in _UNARY if n not in ("signbit", "isnan", "isinf", "conj",
                                                "positive", "isneginf", "isposinf"))


def _coo_unary(name):
    def f(self, *args, **kwargs):
        return self._valuewise(lambda v: getattr(v, name)(*args, **kwargs), name in _LINEAR)
    f.__name__ = name
    return f


def _compressed_unary(name):
    def f(self, *args, **kwargs):
        return self._valuewise(lambda v: getattr(v, name)(*args, **kwargs))
    f.__name__ = name
    return f


def _inplace(name):
    def f(self, *args):
        if isinstance(self, SparseTensor) and not self._coalesced and name not in ("neg_",
                                                                                    "mul_"):
            raise RuntimeError(f"{name} requires coalesced input")
        getattr(self._vals, name)(*args)
        return self
    f.__name__ = name
    return f


def _zero_(self):
    """PyTorch's sparse zero_: no specified entries left."""
    xp = xp_of(self._vals._data)
    from .._creation import zeros
    empty = zeros((0,) + tuple(self._vals.shape[1:]), dtype=self._vals.dtype,
                  device=self._vals.device)
    if isinstance(self, SparseTensor):
        self._idx = xp.zeros((self._idx.shape[0], 0), dtype="int64")
        self._coalesced = True
    else:
        self._cidx = xp.zeros_like(self._cidx)
        self._pidx = self._pidx[:0]
    self._vals = empty
    self.__dict__.pop("_pattern", None)
    return self


def _to_dtype(dt):
    def f(self, memory_format=None):
        return self.to(getattr(D, dt))
    f.__name__ = dt
    return f


for _cls, _make_unary, _extra in ((SparseTensor, _coo_unary, ("nan_to_num", "square")),
                                  (SparseCompressedTensor, _compressed_unary, ("angle",))):
    for _n in _UNARY + _extra:
        setattr(_cls, _n, _make_unary(_n))
    for _n in _INPLACE + ("mul_",):
        setattr(_cls, _n + "_" if _n != "mul_" else _n, _inplace(_n + "_" if _n != "mul_"
                                                                 else _n))
    _cls.zero_ = _zero_
    _cls.__neg__ = _cls.neg
    for _alias, _dt in (("half", "float16"), ("bool", "bool"), ("int", "int32"),
                        ("long", "int64"), ("float", "float32"), ("double", "float64")):
        setattr(_cls, _alias, _to_dtype(_dt))
SparseTensor.angle = _unsupported("angle")
SparseCompressedTensor.square = _layout_error("square")
SparseCompressedTensor.nan_to_num = _csr_unsupported("nan_to_num.out")
SparseTensor.logical_not = _unsupported("logical_not.out")
for _n in ("log", "cos", "sigmoid", "bitwise_not"):
    setattr(SparseCompressedTensor, _n, _layout_error(_n))


def _csr_logical_not(self):
    raise RuntimeError("torch.empty: Only batched sparse compressed (non-block) tensors are "
                       "supported, but got size [0]")


SparseCompressedTensor.logical_not = _csr_logical_not


def _layout_word(self):
    return "CSR" if self._layout is sparse_csr else "CSC"


def _no(what):
    def f(self, *args, **kwargs):
        raise RuntimeError(f"Sparse {_layout_word(self)} tensors do not have {what}")
    return f


def _raise(exc, msg):
    def f(self, *args, **kwargs):
        raise exc(msg(self) if callable(msg) else msg)
    return f


_NO_STORAGE = "Cannot access data pointer of Tensor that doesn't have storage"
for _n, _f in {
        "reshape": _no("is_contiguous"), "flatten": _no("is_contiguous"),
        "contiguous": _no("is_contiguous"), "is_contiguous": _no("is_contiguous"),
        "unsqueeze": _no("strides"), "squeeze": _no("strides"), "stride": _no("strides"),
        "permute": _csr_unsupported("as_strided"),
        "expand": _raise(RuntimeError, lambda s: f"expand is unsupported for "
                                                 f"{_NAMES[s._layout]} tensors"),
        "data_ptr": _raise(RuntimeError, _NO_STORAGE), "tolist": _raise(RuntimeError, _NO_STORAGE),
        "softmax": _csr_unsupported("_softmax.out"),
        "log_softmax": _csr_unsupported("_log_softmax.out"),
        "mean": _csr_unsupported("mean.out"), "argmax": _csr_unsupported("argmax.out"),
        "item": _raise(RuntimeError, lambda s: f"a Tensor with {s.numel()} elements cannot be "
                                               f"converted to Scalar"),
        "storage_offset": lambda self: 0}.items():
    setattr(SparseCompressedTensor, _n, _f)


def _compressed_getitem(self, index):
    """s[i]: row i as a 1-D COO tensor (PyTorch's select on a compressed tensor)."""
    if type(index) is not int and not (isinstance(index, Tensor) and index.dim() == 0 and
                                       not index.dtype.is_floating_point):
        raise RuntimeError(f"unsupported tensor layout: {_NAMES[self._layout]}")
    n = self._size[0]
    i = int(index)
    if not -n <= i < n:
        raise IndexError(f"select(): index {i} out of range for tensor of size "
                         f"[{', '.join(map(str, self._size))}] at dimension 0")
    i %= n
    xp = xp_of(self._cidx)
    rows, cols = self._coo_arrays()
    pos = xp.flatnonzero(rows == i).astype("int64")
    vals = named(self._vals.index_select(0, _make(pos)), "SelectBackward0")
    return _sparse(cols[pos][None, :].astype("int64"), vals, (self._size[1],),
                   self._layout is sparse_csr)


SparseCompressedTensor.__getitem__ = _compressed_getitem
