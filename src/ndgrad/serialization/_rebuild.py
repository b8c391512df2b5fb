"""ndgrad's versions of the functions a PyTorch checkpoint's pickle calls (torch/_utils.py).

A `torch.save` pickle rebuilds each tensor with `torch._utils._rebuild_tensor_v2(storage, offset,
size, stride, requires_grad, backward_hooks, metadata)`, each Parameter with
`_rebuild_parameter(tensor, requires_grad, backward_hooks)`; the storage is a persistent id that
the loader resolves to a `LoadedStorage` (one flat array per `data/<key>` record). These
functions check every argument (a crafted file must not read outside a storage, nor allocate
more than it holds) and build ndgrad tensors that view the storage's memory, so tensors saved as
views of one storage come back sharing memory.
"""
import threading
from collections import OrderedDict

import numpy as np

from .. import _dtype as D

_MAX_NUMEL = 1 << 62


class LoadedStorage:
    """One storage record of a checkpoint: `array` (flat, of the storage's dtype, or uint8 for
    an UntypedStorage), its dtype name, its location tag ("cpu", "cuda:0"), and `relocate`,
    the loader's map_location applied to each tensor built on it."""
    __slots__ = ("array", "dtype", "location", "relocate", "swap")

    def __init__(self, array, dtype, location, relocate, swap=False):
        self.array, self.dtype, self.location, self.relocate = array, dtype, location, relocate
        self.swap = swap        # written on a host of the other byte order


def _err(msg):
    from ._weights_only_unpickler import WeightsOnlyError
    return WeightsOnlyError(msg)


def ndgrad_dtype(name):
    """The ndgrad dtype PyTorch calls torch.<name>, or a RuntimeError naming what is missing."""
    dt = getattr(D, name, None) if isinstance(name, str) else None
    if not isinstance(dt, D.dtype) or dt.name != name:
        raise RuntimeError(f"ndgrad has no dtype torch.{name}: a tensor of this dtype in the "
                           "checkpoint cannot be loaded")
    return dt


def _ints(xs):
    return (isinstance(xs, tuple) or type(xs) is list) and all(type(x) is int for x in xs)


def _loaded(storage):
    """A TypedStorage or UntypedStorage (a plain pickle's, storage._load_from_bytes) as the
    loader's LoadedStorage: its flat memory, dtype and location; others unchanged."""
    from .._tensor import UntypedStorage, TypedStorage
    if not isinstance(storage, UntypedStorage):
        return storage
    from .._backend import to_numpy
    t = storage._t
    arr = to_numpy(t._data)
    arr = arr.reshape(-1) if arr.flags.c_contiguous else arr.ravel()
    if not isinstance(storage, TypedStorage):
        arr = arr.view(np.uint8)
    dtype = t.dtype.name if isinstance(storage, TypedStorage) else "uint8"
    return LoadedStorage(arr, dtype, str(t.device), lambda x, location: x)


def _view(storage, dtype, offset, size, stride):
    """The strided view (elements of `dtype`) of a storage, after bounds checks."""
    storage = _loaded(storage)
    if not isinstance(storage, LoadedStorage):
        raise _err(f"expected a storage, got {type(storage).__name__}")
    arr = storage.array
    if arr.dtype != dtype.np:
        if arr.dtype != np.uint8 or arr.size % dtype.itemsize:
            raise _err(f"storage of {storage.dtype} viewed as {dtype.name}")
        arr = arr.view(dtype.np)
    if storage.swap:
        arr = arr.byteswap()
    if not (type(offset) is int and _ints(size) and _ints(stride)):
        raise _err(f"Unsupported tensor geometry: offset {offset!r}, size {size!r}, "
                   f"stride {stride!r}")
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride) or offset < 0 or any(n < 0 for n in size):
        raise _err(f"Unsupported tensor geometry: offset {offset}, size {size}, stride {stride}")
    numel = 1
    for n in size:
        numel *= n
    if numel > _MAX_NUMEL:
        raise _err(f"Tensor of size {list(size)} is too large")
    if numel:
        lo = offset + sum(min(0, (n - 1) * s) for n, s in zip(size, stride))
        hi = offset + sum(max(0, (n - 1) * s) for n, s in zip(size, stride))
        if lo < 0 or hi >= arr.size:
            raise _err(f"Tensor of size {list(size)}, stride {list(stride)} and offset {offset} "
                       f"is out of bounds of its storage of {arr.size} elements")
        base = arr[offset:]
    else:
        if offset > arr.size:
            raise _err(f"Tensor storage offset {offset} is out of bounds of its storage of "
                       f"{arr.size} elements")
        base = arr[:0]
    if numel and all(s == c for s, c, n in zip(stride, _contiguous(size), size) if n > 1):
        return base[:numel].reshape(size)         # keeps the storage's type (np.memmap) in .base
    item = dtype.itemsize
    return D.as_strided(np, base, size, tuple(s * item for s in stride))


def _contiguous(size):
    strides, acc = [], 1
    for n in reversed(size):
        strides.append(acc)
        acc *= max(n, 1)
    return reversed(strides)


def _tensor_from(storage, dtype, offset, size, stride, requires_grad=False, metadata=None):
    from .._tensor import _make
    storage = _loaded(storage)
    arr = _view(storage, dtype, offset, size, stride)
    if metadata:
        if type(metadata) is not dict or not set(metadata) <= {"conj", "neg"}:
            raise _err(f"Unsupported tensor metadata {metadata!r}")
        if metadata.get("conj"):
            arr = np.conj(arr)
        if metadata.get("neg"):
            arr = np.negative(arr)
    t = _make(arr)
    if type(requires_grad) is not bool:
        raise _err(f"requires_grad must be a bool, got {type(requires_grad).__name__}")
    t = storage.relocate(t, storage.location)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _storage_dtype(storage):
    storage = _loaded(storage)
    if not isinstance(storage, LoadedStorage):
        raise _err(f"expected a storage, got {type(storage).__name__}")
    return ndgrad_dtype(storage.dtype)


def _check_hooks(backward_hooks):
    if backward_hooks is not None and type(backward_hooks) not in (dict, OrderedDict):
        raise _err("backward_hooks must be an OrderedDict")


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _tensor_from(storage, _storage_dtype(storage), storage_offset, size, stride)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    _check_hooks(backward_hooks)
    return _tensor_from(storage, _storage_dtype(storage), storage_offset, size, stride,
                        requires_grad, metadata)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    _check_hooks(backward_hooks)
    if not isinstance(dtype, D.dtype):
        name = getattr(dtype, "name", dtype)
        dtype = ndgrad_dtype(name)
    return _tensor_from(storage, dtype, storage_offset, size, stride, requires_grad, metadata)


def _rebuild_parameter(data, requires_grad, backward_hooks):
    from .._tensor import Tensor
    from ..nn import Parameter
    _check_hooks(backward_hooks)
    if not isinstance(data, Tensor) or type(requires_grad) is not bool:
        raise _err("Unsupported arguments to _rebuild_parameter")
    return Parameter(data.detach(), requires_grad)


# tensor attributes PyTorch's compiler leaves on tensors it saw (`_dynamo_*`: the values of a
# nested tensor carry some), meaningless here: dropped on load
_COMPILER_STATE = frozenset(("_specialize_on", "_has_dynamo_dim_marking"))


class _DimRange:
    """torch._dynamo.decorators._DimRange (a dimension marked dynamic: dim, min, max), which
    PyTorch's checkpoints of nested tensors carry in their values' compiler state."""
    __slots__ = ("dim", "min", "max")

    def __setstate__(self, state):
        if type(state) not in (list, tuple) or len(state) != 3 or not all(
                v is None or type(v) is int for v in state):
            raise _err("Unsupported state for torch._dynamo.decorators._DimRange")
        self.dim, self.min, self.max = state

    def __eq__(self, other):
        return type(other) is _DimRange and (self.dim, self.min, self.max) == (
            other.dim, other.min, other.max)

    def __hash__(self):
        return hash((self.dim, self.min, self.max))


def _set_state(obj, state):
    """Python attributes saved with a tensor (torch._utils._set_obj_state): only names that are
    not attributes of the tensor class, so no method or internal field can be replaced."""
    if state is None or state == {}:
        return obj
    if type(state) is tuple and len(state) == 2:
        dict_state, slots_state = state
    else:
        dict_state, slots_state = state, None
    for part in (dict_state, slots_state):
        if part is None:
            continue
        if type(part) is not dict:
            raise _err("Unsupported tensor state")
        for k, v in part.items():
            if type(k) is str and (k.startswith("_dynamo_") or k in _COMPILER_STATE):
                continue
            if type(k) is not str or k.startswith("_") or hasattr(type(obj), k):
                raise _err(f"Unsupported tensor attribute {k!r} in the checkpoint")
            obj.__dict__[k] = v
    return obj


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _set_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


_TENSOR_BUILDERS = ("_rebuild_tensor", "_rebuild_tensor_v2", "_rebuild_tensor_v3",
                    "_rebuild_parameter", "_rebuild_parameter_with_state",
                    "_rebuild_device_tensor_from_cpu_tensor", "_rebuild_device_tensor_from_numpy")


def _rebuild_njt(constructor_kwargs):
    """torch.nested._internal.nested_tensor._rebuild_njt: a jagged nested tensor from its
    constructor's arguments (values, offsets, lengths, _ragged_idx, requires_grad, ...)."""
    from ..nested._internal.nested_tensor import _rebuild_njt as rebuild
    return rebuild(constructor_kwargs)


def _njt_class():
    from ..nested._internal.nested_tensor import NestedTensor
    return NestedTensor


def _rebuild_from_type_v2(func, new_type, args, state):
    from .._tensor import Tensor
    from ..nn import Parameter
    if func is _rebuild_njt and type(args) is tuple and len(args) == 1 and \
            type(args[0]) is dict and new_type is _njt_class():
        return func(*args)   # (its state repeats the constructor's arguments)
    if not any(func is globals()[n] for n in _TENSOR_BUILDERS) or type(args) is not tuple:
        raise _err(f"Unsupported rebuild function {func!r}")
    ret = func(*args)
    if new_type is not type(ret):
        if not (isinstance(new_type, type) and issubclass(new_type, Tensor)):
            raise _err(f"Unsupported tensor type {new_type!r}")
        if new_type is Parameter:
            ret = Parameter(ret, ret.requires_grad)
        else:
            ret = new_type._make_subclass(new_type, ret, ret.requires_grad)
    return _set_state(ret, state)


def _to_device(t, dtype, device, requires_grad):
    from .._tensor import Tensor
    if not isinstance(t, Tensor):
        raise _err("Unsupported arguments to a device tensor rebuild")
    if isinstance(dtype, D.dtype) and t.dtype != dtype:
        t = t.to(dtype)
    if type(requires_grad) is not bool:
        raise _err("requires_grad must be a bool")
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_device_tensor_from_cpu_tensor(data, dtype, device, requires_grad):
    return _to_device(data, dtype, device, requires_grad)


def _rebuild_device_tensor_from_numpy(data, dtype, device, requires_grad):
    from .._tensor import _make
    if type(data) is not np.ndarray or data.dtype.kind in "OV":
        raise _err("Unsupported arguments to _rebuild_device_tensor_from_numpy")
    return _to_device(_make(data), dtype, device, requires_grad)


def _unsupported(kind):
    def rebuild(*args, **kwargs):
        raise RuntimeError(f"ndgrad has no {kind}: the checkpoint holds one and cannot be "
                           "loaded")
    rebuild.__name__ = rebuild.__qualname__ = f"_rebuild_{kind.replace(' ', '_')}"
    return rebuild


_rebuild_qtensor = _unsupported("quantized tensors")


class _Deferred(threading.local):
    """Per thread, while a legacy stream loads (its bytes come after the tensors): a list of
    the sparse tensors whose invariants are checked once the bytes have arrived."""
    def __init__(self):
        self.stack = []


_deferred = _Deferred()


def validate_sparse(t):
    """The invariant checks of a sparse tensor built before its bytes were read."""
    from ..sparse._coo import SparseTensor, _check_indices
    from ..sparse._compressed import _check_compressed
    from .._backend import xp_of
    if isinstance(t, SparseTensor):
        _check_indices(t._idx, t._size, t.sparse_dim())
        if t._coalesced:
            t._coalesced = False
            c = t.coalesce()
            t._coalesced = c._nnz() == t._nnz() and bool((c._idx == t._idx).all())
    else:
        _check_compressed(t._cidx, t._pidx, t._nnz(), t._size, t._layout, xp_of(t._cidx))


def _rebuild_sparse_tensor(layout, data):
    """torch._utils._rebuild_sparse_tensor: a COO tensor from (indices, values, size[,
    is_coalesced]), a CSR / CSC one from (compressed indices, plain indices, values, size); the
    invariants are always checked (a crafted file cannot index outside the tensor)."""
    from .._tensor import Tensor
    from ..sparse._coo import sparse_coo, sparse_coo_tensor
    from ..sparse._compressed import sparse_csr, sparse_csc, sparse_compressed_tensor
    if type(data) is not tuple or not all(isinstance(x, Tensor) for x in data[:-2]):
        raise _err("Unsupported arguments to _rebuild_sparse_tensor")
    if layout is sparse_coo and len(data) in (3, 4):
        indices, values, size = data[:3]
        coalesced = data[3] if len(data) == 4 else None
        if not (isinstance(values, Tensor) and _ints(tuple(size)) and
                coalesced in (None, True, False)):
            raise _err("Unsupported arguments to _rebuild_sparse_tensor")
        t = sparse_coo_tensor(indices, values, tuple(size), check_invariants=False,
                              is_coalesced=bool(coalesced))
    elif layout in (sparse_csr, sparse_csc) and len(data) == 4:
        cidx, pidx, values, size = data
        if not (isinstance(values, Tensor) and _ints(tuple(size))):
            raise _err("Unsupported arguments to _rebuild_sparse_tensor")
        t = sparse_compressed_tensor(cidx, pidx, values, tuple(size), layout=layout,
                                     check_invariants=False)
    else:
        raise NotImplementedError(f"rebuilding sparse tensor for layout {layout}")
    if _deferred.stack:
        _deferred.stack[-1].append(t)
    else:
        validate_sparse(t)   # (is_coalesced trusted only when sorted and distinct)
    return t
_rebuild_meta_tensor_no_storage = _unsupported("meta tensors")
_rebuild_nested_tensor = _unsupported("nested tensors")
_rebuild_wrapper_subclass = _unsupported("wrapper tensor subclasses")


def _get_layout(name):
    from ..sparse import _coo as _sparse
    from ..sparse import _compressed as _sparse_compressed
    for layout in (_sparse.strided, _sparse.sparse_coo, _sparse_compressed.sparse_csr,
                   _sparse_compressed.sparse_csc):
        if name == repr(layout):
            return layout
    raise RuntimeError(f"ndgrad has no layout {name!r}: only torch.strided, torch.sparse_coo, "
                       "torch.sparse_csr and torch.sparse_csc tensors can be loaded")
