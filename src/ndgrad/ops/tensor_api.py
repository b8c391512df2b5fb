"""The rest of PyTorch's everyday Tensor API: strided views, the *_scatter family, put, renorm,
index_reduce, dist, resizing and storage, device flags, and the methods PyTorch has removed
(which raise PyTorch's own errors). FUNCTIONS go to the torch namespace, METHODS onto Tensor.

Formulas are ndgrad ops (see _registry.py), so every gradient here has higher orders too.
"""
import warnings

from .. import _dtype as D
from ._argcheck import argument_error as _argument_error
from .._backend import xp_of, data_ptr
from .._tensor import Tensor, _make, _wrap_dim
from ._registry import defop
from . import indexing, shape
from .reduction import vector_norm

__all__ = ["as_strided", "diagonal_scatter", "select_scatter", "slice_scatter",
           "as_strided_scatter", "dist", "renorm", "index_reduce"]


# ---------------------------------------------------------------- strided views

def _storage(t):
    """The memory block behind `t` as a flat array, and t's offset into it (in elements)."""
    root = t._base._data if t._base is not None else t._data
    if not (root.flags.c_contiguous or root.flags.f_contiguous):
        root = root.copy()   # (a detached array: only its own memory is reachable)
    flat = root.reshape(-1, order="A")
    return flat, t.storage_offset() if t._base is not None else 0


def _positions(xp, size, stride, offset):
    """Storage index of every element of a (size, stride, offset) view, as an int64 array."""
    pos = xp.full(tuple(size), offset, dtype="int64")
    for d, (n, s) in enumerate(zip(size, stride)):
        shape_d = [1] * len(size)
        shape_d[d] = n
        pos = pos + (xp.arange(n, dtype="int64") * s).reshape(shape_d)
    return pos


def _check_strided(size, stride, offset, numel, itemsize):
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got "
                           f"strides: [{', '.join(map(str, stride))}]")
    need = 0 if any(n == 0 for n in size) else \
        offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if need > numel:
        raise RuntimeError(
            f"setStorage: sizes [{', '.join(map(str, size))}], strides "
            f"[{', '.join(map(str, stride))}], storage offset {offset}, and itemsize {itemsize} "
            f"requiring a storage size of {need * itemsize} are out of bounds for storage of "
            f"size {numel * itemsize}")


def _as_strided_fwd(xp, self, size, stride, offset, flat):
    st = D.as_strided(xp, flat[offset:], size, tuple(s * flat.itemsize for s in stride))
    return st


def _as_strided_grad(grad, self, size, stride, offset, in_pos, numel):
    from .._creation import zeros
    xp = xp_of(grad._data)
    out_pos = _make(_positions(xp, size, stride, offset).reshape(-1))
    g = zeros(numel, dtype=grad.dtype, device=grad.device).index_add(0, out_pos, grad.reshape(-1))
    return g.take(_make(in_pos))


_as_strided = defop(
    "as_strided",
    lambda xp, self, size, stride, offset, flat, in_pos, numel:
        _as_strided_fwd(xp, self, size, stride, offset, flat),
    view=True, self=_as_strided_grad)


def as_strided(input, size, stride, storage_offset=None):
    """torch.as_strided: a view of input's storage with the given sizes and strides."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    flat, own = _storage(input)
    offset = own if storage_offset is None else int(storage_offset)
    _check_strided(size, stride, offset, flat.size, flat.itemsize)
    xp = xp_of(input._data)
    in_pos = _positions(xp, input.shape, input.stride(), own)
    return _as_strided(input, size, stride, offset, flat, in_pos, flat.size)


def _as_strided_(self, size, stride, storage_offset=None):
    r = as_strided(self, size, stride, storage_offset)
    self._check_inplace()
    self._data = r._data
    if r.grad_fn is not None:
        self.grad_fn = r.grad_fn
    return self


# ---------------------------------------------------------------- the *_scatter family
# out = input with one view of it replaced by src: d/dinput = grad with that view zeroed (the
# same op, scattering zeros), d/dsrc = that view of grad. Each op has an array setter for the
# forward and a Tensor view for the formulas.

def _set_diag(a, args, src):
    offset, dim1, dim2 = args
    xp = xp_of(a)
    v = xp.moveaxis(a, (dim1, dim2), (-2, -1))
    n = src.shape[-1]
    i = xp.arange(n)
    v[..., i + max(-offset, 0), i + max(offset, 0)] = src


def _set_select(a, args, src):
    dim, index = args
    key = [slice(None)] * a.ndim
    key[dim] = index
    a[tuple(key)] = src


def _set_slice(a, args, src):
    dim, start, end, step = args
    key = [slice(None)] * a.ndim
    key[dim] = slice(start, end, step)
    a[tuple(key)] = src


def _t_diag(t, args):
    offset, dim1, dim2 = args
    return t.diagonal(offset, dim1, dim2)


def _t_select(t, args):
    dim, index = args
    return t.select(dim, index)


def _t_slice(t, args):
    dim, start, end, step = args
    key = [slice(None)] * t.ndim
    key[dim] = slice(start, end, step)
    return t[tuple(key)]


def _make_scatter(name, aset, tview):
    def fwd(xp, self, src, args):
        out = self.copy()
        aset(out, args, src)
        return out

    op = defop(name, fwd, promote="binary",
               self=lambda grad, src, args: op(grad, _zeros_of(tview(grad, args)), args),
               src=lambda grad, args: tview(grad, args))
    return op


def _zeros_of(t):
    from .._creation import zeros_like
    return zeros_like(t)


_diagonal_scatter = _make_scatter("diagonal_scatter", _set_diag, _t_diag)
_select_scatter = _make_scatter("select_scatter", _set_select, _t_select)
_slice_scatter = _make_scatter("slice_scatter", _set_slice, _t_slice)


def _check_src(src, view):
    if tuple(src.shape) != tuple(view.shape):
        raise RuntimeError(
            f"expected src to have a size equal to the slice of self. src size = "
            f"[{', '.join(map(str, src.shape))}], slice size = "
            f"[{', '.join(map(str, view.shape))}]")


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """torch.diagonal_scatter: input with its diagonal (offset, dim1, dim2) replaced by src."""
    nd = input.ndim
    d1, d2 = _wrap_dim(dim1, nd), _wrap_dim(dim2, nd)
    _check_src(src, input.diagonal(offset, d1, d2))
    return _diagonal_scatter(input, src, (int(offset), d1, d2))


def select_scatter(input, src, dim, index):
    """torch.select_scatter: input with input.select(dim, index) replaced by src."""
    d = _wrap_dim(dim, input.ndim)
    view = input.select(d, index)
    _check_src(src, view)
    n = input.shape[d]
    return _select_scatter(input, src, (d, int(index) + n if index < 0 else int(index)))


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """torch.slice_scatter: input with input[..., start:end:step, ...] (along dim) replaced."""
    d = _wrap_dim(dim, input.ndim)
    if step is None:
        step = 1
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    _check_src(src, _t_slice(input, (d, start, end, step)))
    return _slice_scatter(input, src, (d, start, end, step))


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """torch.as_strided_scatter: input with its as_strided view replaced by src (input is
    treated as a fresh contiguous tensor, as PyTorch does)."""
    base = input.contiguous() if not input.is_contiguous() else input
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    offset = 0 if storage_offset is None else int(storage_offset)
    _check_strided(size, stride, offset, base.numel(), base._data.itemsize)
    if tuple(src.shape) != size:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"[{', '.join(map(str, src.shape))}], slice size = "
                           f"[{', '.join(map(str, size))}]")
    xp = xp_of(base._data)
    pos = _make(_positions(xp, size, stride, offset).reshape(-1))
    flat = base.reshape(-1)
    keep = _make(xp.ones(flat.shape, dtype=bool))
    keep = keep.index_fill(0, pos, False)
    out = (flat * keep).index_add(0, pos, src.reshape(-1).to(flat.dtype))
    return out.view(input.shape)


# ---------------------------------------------------------------- put, index_reduce, renorm, dist

def _put(self, index, source, accumulate=False):
    if index.dtype is not D.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got "
                           f"{_scalar(index.dtype)}")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {_scalar(self.dtype)} and source.dtype = "
                           f"{_scalar(source.dtype)}")
    if index.numel() != source.numel():
        raise RuntimeError(f"put_(): Expected source and index to have the same number of "
                           f"elements, but got source.numel() = {source.numel()}, "
                           f"index.numel() = {index.numel()}")
    n = self.numel()
    bad = ((index >= n) | (index < -n)).any().item() if index.numel() else False
    if bad:
        raise IndexError(f"out of range: tried to access index "
                         f"{index.reshape(-1)[((index >= n) | (index < -n)).reshape(-1)][0].item()}"
                         f" on a tensor of {n} elements.")
    idx = index.reshape(-1) % max(n, 1)
    return self.reshape(-1).index_put((idx,), source.reshape(-1), accumulate).view(self.shape)


def _scalar(dt):
    from ._inplace import _type_name
    return _type_name(dt)


def put(input, index, source, accumulate=False):
    """torch.put: a copy of input with input.flatten()[index] = source (or += with accumulate)."""
    return _put(input, index, source, accumulate)


def _put_(self, index, source, accumulate=False):
    from ._inplace import inplace
    r = _put(self, index, source, accumulate)
    return self.copy_(r) if self.grad_fn is None and not self.requires_grad else \
        inplace(self, lambda s: r)


_INDEX_REDUCE = ("prod", "mean", "amax", "amin")


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """torch.index_reduce: rows of source reduced into input's rows `index` along dim."""
    if reduce not in _INDEX_REDUCE:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    d = _wrap_dim(dim, max(input.ndim, 1))
    if index.ndim > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    if index.dtype is not D.int64 and index.dtype is not D.int32:
        raise RuntimeError("index_reduce_(): Expected a long tensor for index, but got "
                           f"{_scalar(index.dtype)}")
    if source.ndim and index.numel() != source.shape[d]:
        raise RuntimeError("index_reduce_(): Number of indices (" + str(index.numel()) +
                           ") should be equal to source.size(dim) (" + str(source.shape[d]) + ")")
    if source.dtype is not input.dtype:
        raise RuntimeError("index_reduce_(): self and source must have the same scalar type")
    view = [1] * source.ndim
    if source.ndim:
        view[d] = index.numel()
    idx = index.to(D.int64).view(*view).expand(*source.shape) if source.ndim else index
    return input.scatter_reduce(d, idx, source, reduce, include_self=include_self)


def _index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    from ._inplace import inplace
    r = index_reduce(self, dim, index, source, reduce, include_self=include_self)
    return inplace(self, lambda s: r)


def renorm(input, p, dim, maxnorm):
    """torch.renorm: each slice along dim whose p-norm exceeds maxnorm is scaled to maxnorm."""
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} "
                           f"dimensions")
    if not p > 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    d = _wrap_dim(dim, input.ndim)
    others = tuple(i for i in range(input.ndim) if i != d)
    norm = vector_norm(input, p, others, True)
    from .pointwise import where
    factor = where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return input * factor


def _renorm_(self, p, dim, maxnorm):
    from ._inplace import inplace
    return inplace(self, lambda s: renorm(s, p, dim, maxnorm))


def dist(input, other, p=2):
    """torch.dist: the p-norm of input - other."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):  # (`-` would take them)
        raise _argument_error("dist", ("input", "other"), input, other)
    return vector_norm(input - other, p)


# ---------------------------------------------------------------- resizing and storage

def _resize_(self, *sizes, size=None, memory_format=None):
    if size is not None:  # (PyTorch's resize_(size) by keyword)
        if sizes:
            raise TypeError("resize_() got multiple values for argument 'size'")
        sizes = (size,)
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    sizes = tuple(int(s) for s in sizes)
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: "
                           f"[{', '.join(map(str, sizes))}]")
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    xp = xp_of(self._data)
    n = 1
    for s in sizes:
        n *= s
    old = self._data.reshape(-1)
    if n <= old.size and self._data.flags.c_contiguous:
        new = old[:n].reshape(sizes)          # shrinking keeps the storage, as PyTorch
    else:
        new = xp.zeros(n, dtype=self._data.dtype)
        k = min(n, old.size)
        new[:k] = old[:k]
        new = new.reshape(sizes)
    self._data = new
    return self


def _resize_as_(self, the_template, *, memory_format=None):
    return _resize_(self, tuple(the_template.shape))


def _resize(self, *sizes):
    warnings.warn("non-inplace resize is deprecated")
    return _resize_(self.detach().clone(), *sizes)


def _resize_as(self, tensor):
    warnings.warn("non-inplace resize_as is deprecated")
    return _resize_as_(self.detach().clone(), tensor)


def _set_(self, source=None, storage_offset=0, size=None, stride=None):
    if self.requires_grad and self.grad_fn is None:
        from ..autograd.grad_mode import is_grad_enabled
        if is_grad_enabled():
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
    if source is None:
        self._data = xp_of(self._data).empty((0,), dtype=self._data.dtype)
        return self
    if isinstance(source, Tensor):
        if source.dtype is not self.dtype:
            raise RuntimeError(f"Could not set tensor of type {_scalar(source.dtype)} to a "
                               f"tensor of type {_scalar(self.dtype)}")
        data = source._data
        if size is not None:
            data = as_strided(source, size, stride if stride is not None else
                              _contig_strides(size), storage_offset)._data
        self._data = data
        return self
    raise TypeError(f"set_() received an invalid combination of arguments - got "
                    f"({type(source).__name__})")


def _contig_strides(size):
    st, acc = [], 1
    for s in reversed(tuple(size)):
        st.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(st))


def _is_set_to(self, tensor):
    a, b = self._data, tensor._data
    return (type(a) is type(b) and data_ptr(a) == data_ptr(b)
            and a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype)


def _new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None,
                       requires_grad=False, pin_memory=False):
    from .._creation import empty
    size, stride = tuple(size), tuple(stride)
    need = 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    buf = empty(need, dtype=dtype or self.dtype, device=self.device if device is None else device)
    out = as_strided(buf, size, stride)
    return out.detach().requires_grad_(requires_grad)


def _nonzero_static(self, *, size, fill_value=-1):
    nz = self.nonzero()
    n = nz.shape[0]
    if n >= size:
        return nz[:size]
    from .._creation import full
    pad = full((size - n, self.ndim), fill_value, dtype=D.int64, device=self.device)
    return shape.cat([nz, pad])


def _dim_order(self, *, ambiguity_check=False):
    st = self.stride()
    return tuple(sorted(range(self.ndim), key=lambda i: -st[i]))


def _map_(self, tensor, callable):
    a = self._data
    b = xp_of(a).broadcast_to(tensor._data, a.shape)
    flat, fb = a.reshape(-1), b.reshape(-1)
    for i in range(flat.size):
        flat[i] = callable(flat[i].item(), fb[i].item())
    return self


def _map2_(self, x, y, callable):
    a = self._data
    xp = xp_of(a)
    bx, by = xp.broadcast_to(x._data, a.shape).reshape(-1), \
        xp.broadcast_to(y._data, a.shape).reshape(-1)
    flat = a.reshape(-1)
    for i in range(flat.size):
        flat[i] = callable(flat[i].item(), bx[i].item(), by[i].item())
    return self


def _as_subclass(self, cls):
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"as_subclass(): argument 'cls' must be a subclass of Tensor")
    r = self.view_as(self)   # (an alias: same data, still in the graph)
    r.__class__ = cls
    return r


def _module_load(self, other, assign=False):
    if not isinstance(other, Tensor):
        raise TypeError(f"Expected type of other to be Tensor but got {type(other)}")
    return other


# ---------------------------------------------------------------- removed and device-only methods

def _removed(msg):
    def f(self, *args, **kwargs):
        raise RuntimeError(msg)
    return f


_REMOVED_SOLVE = (
    "This function was deprecated since version 1.9 and is now removed. `torch.solve` is "
    "deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its arguments "
    "reversed and does not return the LU factorization.\n\nTo get the LU factorization see "
    "`torch.lu`, which can be used with `torch.lu_solve` or `torch.lu_unpack`.\nX = "
    "torch.solve(B, A).solution should be replaced with:\nX = torch.linalg.solve(A, B)")
_REMOVED_LSTSQ = (
    "This function was deprecated since version 1.9 and is now removed. `torch.lstsq` is "
    "deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has reversed arguments "
    "and does not return the QR decomposition in the returned tuple (although it returns other "
    "information about the problem).\n\nTo get the QR decomposition consider using "
    "`torch.linalg.qr`.\n\nThe returned solution in `torch.lstsq` stored the residuals of the "
    "solution in the last m - n columns of the returned value whenever m > n. In "
    "torch.linalg.lstsq, the residuals are in the field 'residuals' of the returned named "
    "tuple.\n\nThe unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]"
    "\nshould be replaced with:\nX = torch.linalg.lstsq(A, B).solution")
_REMOVED_SYMEIG = (
    "This function was deprecated since version 1.9 and is now removed. The default behavior "
    "has changed from using the upper triangular portion of the matrix by default to using the "
    "lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) should be replaced with:\n"
    "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = torch.symeig(A, "
    "eigenvectors=True) should be replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper "
    "else 'L')")
_REMOVED_EIG = (
    "This function was deprecated since version 1.9 and is now removed. `torch.linalg.eig` "
    "returns complex tensors of dtype `cfloat` or `cdouble` rather than real tensors mimicking "
    "complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\nL_complex = "
    "torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) should be replaced "
    "with:\nL_complex, V_complex = torch.linalg.eig(A)")
_REMOVED_REINFORCE = (
    "reinforce() was removed.\nUse torch.distributions instead.\nSee "
    "https://pytorch.org/docs/main/distributions.html\n\nInstead of:\n\nprobs = "
    "policy_network(state)\naction = probs.multinomial()\nnext_state, reward = "
    "env.step(action)\naction.reinforce(reward)\naction.backward()\n\nUse:\n\nprobs = "
    "policy_network(state)\n# NOTE: categorical is equivalent to what used to be called "
    "multinomial\nm = torch.distributions.Categorical(probs)\naction = m.sample()\nnext_state, "
    "reward = env.step(action)\nloss = -m.log_prob(action) * reward\nloss.backward()\n")


def _lu(self, pivot=True, get_infos=False):
    from . import linalg as L
    warnings.warn("torch.lu is deprecated in favor of torch.linalg.lu_factor / "
                  "torch.linalg.lu_factor_ex and will be removed in a future PyTorch release.")
    LU, piv = L.lu_factor(self, pivot=pivot)
    if get_infos:
        from .._creation import zeros
        return LU, piv, zeros(self.shape[:-2], dtype=D.int32, device=self.device)
    return LU, piv


def _lu_solve(self, LU_data, LU_pivots):
    from . import linalg as L
    warnings.warn("torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be "
                  "removed in a future PyTorch release.\nNote that torch.linalg.lu_solve has its "
                  "arguments reversed.")
    return L.lu_solve(LU_data, LU_pivots, self)


def _not_linked(dev):
    def f(self, *args, **kwargs):
        raise RuntimeError(f"PyTorch is not linked with support for {dev} devices")
    return f


def _not_compiled(dev):
    def f(self, *args, **kwargs):
        raise AssertionError(f"Torch not compiled with {dev} enabled")
    return f


def _volatile(self):
    warnings.warn("volatile was removed (Variable.volatile is always False)")
    return False


_FALSE = property(lambda self: False)

def _sparse_mask(self, mask):
    """Tensor.sparse_mask(mask): self's values at mask's (coalesced) indices, as a COO tensor."""
    from ..sparse._coo import SparseTensor, _sparse
    if not isinstance(mask, SparseTensor):
        raise RuntimeError("sparse_mask(): expected mask to be a sparse COO tensor")
    if tuple(mask.shape) != tuple(self.shape):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(self.shape)} but mask has size {list(mask.shape)}")
    m = mask.coalesce()
    key = tuple(_make(r) for r in m._idx)
    return _sparse(m._idx, self[key], tuple(self.shape), True)


def _to_sparse(self, *args, **kwargs):
    from ..sparse._coo import to_sparse
    layout = kwargs.get("layout")
    if layout is not None and layout.name in ("sparse_csr", "sparse_csc"):
        from ..sparse._compressed import dense_to_compressed
        return dense_to_compressed(self, layout)
    if layout is not None and layout.name in ("sparse_bsr", "sparse_bsc"):
        from ..sparse._compressed import _no_blocks
        raise _no_blocks(layout)
    return to_sparse(self, *args, **kwargs)


def _to_compressed(name):
    def f(self, dense_dim=None):
        from ..sparse import _compressed as C
        return C.dense_to_compressed(self, getattr(C, name))
    f.__name__ = "to_" + name
    return f


def _layout_error(name, wanted):
    def f(self, *args, **kwargs):
        raise RuntimeError(f"{name} expected {wanted} tensor layout but got Strided")
    f.__name__ = name
    return f


def _no_cpu_kernel(name):
    def f(self, *args, **kwargs):
        raise NotImplementedError(
            f"Could not run 'aten::{name}' with arguments from the 'CPU' backend. This could be "
            f"because the operator doesn't exist for this backend, or was omitted during the "
            f"selective/custom build process (if using custom build).")
    f.__name__ = name
    return f


def _conj_physical_(self):
    if not self.dtype.is_complex:
        return self
    from ._inplace import inplace
    return inplace(self, lambda s: s.conj_physical())


# the sparse API on a dense (strided) tensor: what PyTorch answers there
_STRIDED_SPARSE = {
    "coalesce": _layout_error("coalesce", "sparse coordinate"),
    "is_coalesced": _layout_error("is_coalesced", "sparse coordinate"),
    "indices": _layout_error("indices", "sparse coordinate"),
    "values": _layout_error("values", "sparse"),
    "crow_indices": _layout_error("crow_indices", "sparse row compressed"),
    "col_indices": _layout_error("col_indices", "sparse row compressed"),
    "ccol_indices": _layout_error("ccol_indices", "sparse column compressed"),
    "row_indices": _layout_error("row_indices", "sparse column compressed"),
    "_indices": _no_cpu_kernel("_indices"), "_values": _no_cpu_kernel("_values"),
    "_nnz": _no_cpu_kernel("_nnz"),
    "sparse_dim": lambda self: 0, "dense_dim": lambda self: self.ndim,
}

FUNCTIONS = {"as_strided": as_strided, "diagonal_scatter": diagonal_scatter,
             "select_scatter": select_scatter, "slice_scatter": slice_scatter,
             "as_strided_scatter": as_strided_scatter, "dist": dist, "renorm": renorm,
             "index_reduce": index_reduce, "put": put}

def _chalf(self, memory_format=None):
    """Tensor.chalf(): complex32, which NumPy cannot hold (_dtype's clear TypeError)."""
    return self.to(D.complex32)


METHODS = {
    "as_strided": as_strided, "as_strided_": _as_strided_,
    "diagonal_scatter": diagonal_scatter, "select_scatter": select_scatter,
    "slice_scatter": slice_scatter, "as_strided_scatter": as_strided_scatter,
    "dist": dist, "renorm": renorm, "renorm_": _renorm_, "put": put, "put_": _put_,
    "index_reduce": index_reduce, "index_reduce_": _index_reduce_,
    "resize_": _resize_, "resize_as_": _resize_as_, "resize": _resize, "resize_as": _resize_as,
    "set_": _set_, "is_set_to": _is_set_to, "new_empty_strided": _new_empty_strided,
    "nonzero_static": _nonzero_static, "dim_order": _dim_order, "map_": _map_,
    "map2_": _map2_, "as_subclass": _as_subclass, "module_load": _module_load,
    "const_data_ptr": lambda self: self.data_ptr(),
    "is_neg": lambda self: False, "resolve_neg": lambda self: self,
    "is_distributed": lambda self: False,
    "solve": _removed(_REMOVED_SOLVE), "lstsq": _removed(_REMOVED_LSTSQ),
    "symeig": _removed(_REMOVED_SYMEIG), "eig": _removed(_REMOVED_EIG),
    "reinforce": _removed(_REMOVED_REINFORCE), "lu": _lu, "lu_solve": _lu_solve,
    "ipu": _not_linked("ipu"), "xpu": _not_compiled("XPU"),
    "hardshrink": lambda self, lambd=0.5: _F().hardshrink(self, lambd),
    "to_sparse": _to_sparse, "to_sparse_coo": _to_sparse, "sparse_mask": _sparse_mask,
    "to_sparse_csr": _to_compressed("sparse_csr"), "to_sparse_csc": _to_compressed("sparse_csc"),
    "is_sparse_csr": property(lambda self: False),
    **_STRIDED_SPARSE,
    "adjoint": lambda self: self.mH, "conj_physical_": _conj_physical_,
    "cfloat": lambda self, memory_format=None: self.to(D.complex64),
    "cdouble": lambda self, memory_format=None: self.to(D.complex128),
    "chalf": _chalf,
    "to_dense": lambda self, dtype=None, *, masked_grad=None:
        self if dtype is None else self.to(dtype),
    "prelu": lambda self, weight: _F().prelu(self, weight),
}

# ---------------------------------------------------------------- deprecated overloads
# PyTorch 2.13 still takes the old argument orders optimizer libraries use: x.add_(alpha, other),
# x.sub_(alpha, other), x.addcmul_(value, tensor1, tensor2), x.addcdiv_(value, ...), and the
# torch-level add/sub/addcmul/addcdiv(input, number, ...): the number moves to its keyword.
# Its argument parser warns once per process, at the first such call (TORCH_WARN_ONCE).

_DEPRECATED_WARNED = [False]
_PARSER_SITE = " (Triggered internally at /__w/pytorch/pytorch/torch/csrc/utils/python_arg_parser.cpp:1841.)"


def _deprecated(fn, name, keyword, tensors, method):
    """`fn` taking, after self, (number, *tensors) as (*tensors, keyword=number) too."""
    import functools
    import numbers
    params = ", ".join(f"Tensor {t}" for t in tensors)
    out = "" if method else ", *, Tensor out = None"
    head = "" if method else "Tensor input, "
    old = f"{name}({head}Number {keyword}, {params}{out})"
    new = f"{name}({head}{params}, *, Number {keyword} = 1{', Tensor out = None' if not method else ''})"

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        # args: (self, number, *tensors) in the old order (self by keyword is the new one's);
        # argument checking's frame passes the keyword's default on: 1 is "not given"
        if len(args) == len(tensors) + 2 and isinstance(args[1], numbers.Number) \
                and not isinstance(args[1], bool) and kwargs.get(keyword, 1) == 1 \
                and all(isinstance(a, Tensor) for a in args[2:]):
            if not _DEPRECATED_WARNED[0]:
                _DEPRECATED_WARNED[0] = True
                from ..autograd.graph import warn_at_user
                warn_at_user(f"This overload of {name} is deprecated:\n\t{old}\nConsider using "
                             f"one of the following signatures instead:\n\t{new}" + _PARSER_SITE)
            kwargs[keyword] = args[1]
            args = args[:1] + args[2:]
        return fn(*args, **kwargs)
    # (the signature argument checking binds against: fn's, taking one positional more)
    import inspect
    ps = list(inspect.signature(fn).parameters.values())
    at = next((i for i, p in enumerate(ps) if p.kind in (p.KEYWORD_ONLY, p.VAR_KEYWORD)), len(ps))
    if not any(p.kind == p.VAR_POSITIONAL for p in ps):
        ps.insert(at, inspect.Parameter("_deprecated", inspect.Parameter.VAR_POSITIONAL))
    wrapper.__signature__ = inspect.Signature(ps)
    return wrapper


for _name, _kw, _ts in (("add", "alpha", ("other",)), ("sub", "alpha", ("other",)),
                        ("addcmul", "value", ("tensor1", "tensor2")),
                        ("addcdiv", "value", ("tensor1", "tensor2"))):
    for _suffix in ("", "_"):
        METHODS[_name + _suffix] = _deprecated(getattr(Tensor, _name + _suffix),
                                               _name + _suffix, _kw, _ts, True)
    from . import pointwise as _pointwise
    FUNCTIONS[_name] = _deprecated(getattr(_pointwise, _name), _name, _kw, _ts, False)

PROPERTIES = {"name": lambda self: None, "volatile": _volatile, "is_sparse_csr": lambda self: False,
              "grad_dtype": lambda self: self.dtype}
for _flag in ("is_mps", "is_xpu", "is_xla", "is_ipu", "is_maia", "is_mtia", "is_mkldnn",
              "is_vulkan"):
    PROPERTIES[_flag] = lambda self: False


def _F():
    from ..nn import functional
    return functional
