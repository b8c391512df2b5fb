# Shape ops: broadcasting (sum_to / expand), reshape and views, indexing, dtype casts.
#
# See ops/_registry.py for the defop language. Extra convention used here: a formula parameter
# named `<input>_shape` (e.g. `self_shape`) receives that input's shape, saved instead of the
# tensor itself. View ops (`view=True`) share storage and version counter with their input.
import builtins
import math
from sys import getrefcount as _getrefcount

from .. import _dtype as D
from .._backend import numpy as _np
from .._backend import ndarray as _ndarray, xp_of, ufunc_at, writeable, _MODULES as _DEVICE_MODULES, dense_order
from .._backend import format_contiguous, suggest_format, in_format, empty_strided
from .._tensor import Tensor, _make, _wrap_dim, Size, _format_name
from ..autograd import grad_mode
from ..autograd.graph import _type_string
from ._registry import defop
from . import _raw

__all__ = ["sum_to", "expand", "reshape", "view", "transpose", "permute", "squeeze", "unsqueeze",
           "getitem", "index_put", "to_dtype", "clone", "contiguous", "flatten", "t"]


def _shape_arg(size):
    """Accept f(2, 3), f((2, 3)), f([2, 3]) or f(torch.Size([2, 3]))."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    return tuple(int(s) for s in size)


def _sizes(sizes, keyword, name, word):
    """The sizes of f(*sizes), or of PyTorch's overload that takes them as one sequence by
    keyword (`t.view(size=(2, 3))`, `t.permute(dims=...)`, `word` its name)."""
    if keyword is None:
        return _shape_arg(sizes)
    if sizes:
        raise TypeError(f"{name}() got multiple values for argument '{word}'")
    return _shape_arg((keyword,))


def broadcast_shapes(*shapes):
    """torch.broadcast_shapes with PyTorch's error message."""
    out = []
    for s in shapes:  # PyTorch's infer_size, folded left; dims scanned from the right
        a, b = out, ([s] if isinstance(s, int) else list(s))   # (an int is a 1-d shape)
        ndim = builtins.max(len(a), len(b))
        res = [1] * ndim
        for i in range(ndim - 1, -1, -1):
            off = ndim - 1 - i
            da = a[len(a) - 1 - off] if off < len(a) else 1
            db = b[len(b) - 1 - off] if off < len(b) else 1
            if da != db and da != 1 and db != 1:
                raise RuntimeError(
                    f"The size of tensor a ({da}) must match the size of tensor b ({db}) at "
                    f"non-singleton dimension {i}")
            res[i] = db if da == 1 else da
        out = res
    return Size(out)


def _sum_to_fwd(xp, self, shape):
    shape = tuple(shape)
    if shape and self.ndim == len(shape) + 1 and self.shape[1:] == shape and \
            self.dtype.kind in "fc":
        return xp.add.reduce(self, axis=0)  # (a bias's gradient: the batch dimension summed)
    lead = self.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and self.shape[i + lead] != 1)
    if not axes:
        return self.reshape(shape)
    # (floats: the ufunc's reduction, without the array method's Python layer; bench W2)
    r = xp.add.reduce(self, axis=axes, keepdims=True) if self.dtype.kind in "fc" else \
        self.sum(axis=axes, keepdims=True)
    try:  # the fresh result takes the shape itself: no view, so AccumulateGrad may keep it
        r.shape = shape
        return r
    except (AttributeError, ValueError):  # (an array type without settable shapes)
        return r.reshape(shape)


sum_to = defop("sum_to", _sum_to_fwd, self=lambda grad, self_shape: expand(grad, self_shape))


def sum_to_size(self, *sizes, size=None):
    """Tensor.sum_to_size(*size): sum broadcast dimensions so the result has `size`."""
    size = _shape_arg(sizes) if size is None else _sizes(sizes, size, "sum_to_size", "size")
    if not _expandable(size, self._data.shape):
        raise RuntimeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size "
                           f"{{{', '.join(map(str, self.shape))}}}.")
    if not size:        # (ATen's sum_to: a full sum, so a bool tensor gives int64)
        return self.sum()
    return sum_to(self, size) if self._data.shape != size else self


def _expandable(small, big):
    if len(small) > len(big):
        return False
    for s, b in zip(reversed(small), reversed(big)):
        if s != b and s != 1:
            return False
    return True


def _expand_fwd(xp, self, size):
    out = xp.broadcast_to(self, size)
    # NumPy marks every broadcast read-only; PyTorch's expand is writable where it repeats no
    # element (sizes kept, or size-1 dimensions added), so those are plain views
    if out.size == self.size:
        return self.reshape(out.shape)
    return out


_expand = defop("expand", _expand_fwd, view=True,
                self=lambda grad, self_shape: sum_to(grad, self_shape))


def expand(self, *sizes, size=None, implicit=False):
    """Tensor.expand(*sizes): a broadcast view; -1 keeps a dimension (`implicit`: ATen's flag
    for expansions it inserts itself; no effect on the result)."""
    sizes = _shape_arg(sizes) if size is None else _sizes(sizes, size, "expand", "size")
    shape = self._data.shape
    if len(sizes) < len(shape):
        raise RuntimeError(
            f"expand({_type_string(self)}{{[{', '.join(map(str, shape))}]}}, size=[{', '.join(map(str, sizes))}]): "
            "the number of sizes provided (%d) must be greater or equal to the number of "
            "dimensions in the tensor (%d)" % (len(sizes), len(shape)))
    lead = len(sizes) - len(shape)
    out = list(sizes)
    for i, s in reversed(list(enumerate(shape))):  # PyTorch reports the last mismatch
        want = sizes[i + lead]
        if want == -1:
            out[i + lead] = s
        elif s != 1 and s != want:
            raise RuntimeError(
                f"The expanded size of the tensor ({want}) must match the existing size ({s}) at "
                f"non-singleton dimension {i + lead}.  Target sizes: [{', '.join(map(str, sizes))}]."
                f"  Tensor sizes: [{', '.join(map(str, shape))}]")
    for i in range(lead - 1 if shape else -1, -1, -1):  # (the last one; a 0-d tensor's pass)
        if sizes[i] == -1:
            raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                               f"non-existing dimension {i}")
    out = tuple(out)
    if any(n < 0 for n in out):  # (ATen's size computation is what fails on these)
        raise RuntimeError("numel: integer multiplication overflow")
    return _expand(self, out)


def expand_as(self, other):
    return expand(self, other.shape)


def broadcast_to(input, size):
    return expand(input, size)


def _infer_size(size, numel):
    size = list(size)
    for i, s in enumerate(size):
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape "
                               f"[{', '.join(map(str, size))}]")
    neg = [i for i, s in enumerate(size) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in size:
        if s != -1:
            known *= s
    if neg:
        if known == 0 and numel == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape "
                               f"[{', '.join(map(str, size))}] because the unspecified dimension "
                               f"size -1 can be any value and is ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '[{', '.join(map(str, size))}]' is invalid for input of size {numel}")
        size[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '[{', '.join(map(str, size))}]' is invalid for input of size {numel}")
    return tuple(size)


_reshape_copy = defop("reshape", lambda xp, self, shape: xp.reshape(self, shape),
                      node_name="UnsafeViewBackward0",
                      self=lambda grad, self_shape: reshape(grad, self_shape))


def _view_fwd(xp, self, shape):
    v = self.view()
    v.shape = shape  # raises when a view is impossible
    return v


_view = defop("view", _view_fwd, view=True,
              self=lambda grad, self_shape: reshape(grad, self_shape))


def reshape(input, *sizes, shape=None):
    """A view when the strides allow it, else a copy (torch.reshape)."""
    self = input
    shape = _infer_size(_shape_arg(sizes) if shape is None else
                        _sizes(sizes, shape, "reshape", "shape"), self._data.size)
    if shape == self._data.shape:
        return _view(self, shape)
    try:
        return _view(self, shape)
    except AttributeError:
        return _reshape_copy(self, shape)


def _plain_shape(sizes, numel):
    """_infer_size(_shape_arg(sizes), numel) for the common case, sizes of Python ints (or one
    tuple of them) whose product is numel, at most one -1 among them; else None (the general
    path then says what is wrong)."""
    if len(sizes) == 1 and isinstance(sizes[0], tuple):
        sizes = sizes[0]
    known, neg = 1, -1
    for i, s in enumerate(sizes):
        if s.__class__ is not int:
            return None
        if s < 0:
            if s != -1 or neg >= 0:
                return None
            neg = i
        else:
            known *= s
    if neg < 0:
        return tuple(sizes) if known == numel else None
    if known == 0 or numel % known:
        return None
    return tuple(sizes[:neg]) + (numel // known,) + tuple(sizes[neg + 1:])


def view(self, *sizes, size=None, dtype=None):
    """Tensor.view(*shape): always a view; PyTorch's error when the strides do not allow one."""
    if sizes and size is None and dtype is None:
        shape = _plain_shape(sizes, self._data.size)
        if shape is not None:
            try:
                return _view(self, shape)
            except AttributeError:
                pass  # (the general path words the error)
    if dtype is not None and not sizes and size is None:
        sizes = (dtype,)
    if len(sizes) == 1 and isinstance(sizes[0], D.dtype):
        return _view_dtype(self, sizes[0])
    shape = _infer_size(_shape_arg(sizes) if size is None else
                        _sizes(sizes, size, "view", "size"), self._data.size)
    try:
        return _view(self, shape)
    except AttributeError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.") from None


def _view_dtype(self, dtype):
    old, new = self._data.dtype.itemsize, dtype.np.itemsize
    if old != new:   # (ATen's view(dtype) checks, in its order)
        from ._inplace import _type_name
        what = f"to view {_type_name(self.dtype)} as {_type_name(dtype)} (different element sizes)"
        if self._data.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if new > old and self._data.shape[-1] % (new // old):
            raise RuntimeError(f"self.size(-1) must be divisible by {new // old} {what}, but got "
                               f"{self._data.shape[-1]}")
        if self.stride(-1) != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {self.stride(-1)}")
    return _make(self._data.view(dtype.np))


def view_as(self, other):
    return view(self, other.shape)


def reshape_as(self, other):
    return reshape(self, other.shape)


def flatten(input, start_dim=0, end_dim=-1):
    nd = input._data.ndim
    if nd == 0:
        return reshape(input, (1,))
    s = _wrap_dim(start_dim, nd)
    e = _wrap_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = input._data.shape
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return reshape(input, shape[:s] + (n,) + shape[e + 1:])


_transpose = defop("transpose", lambda xp, self, dim0, dim1: self.swapaxes(dim0, dim1)
                   if self.ndim else self.view(),  # 0-d: dims 0/-1 are no axes for xp
                   view=True, self=lambda grad, dim0, dim1: transpose(grad, dim0, dim1))


def transpose(input, dim0, dim1):
    nd = input._data.ndim
    return _transpose(input, _wrap_dim(dim0, nd), _wrap_dim(dim1, nd))


# reshape and transpose in derivative formulas (view's, transpose's: the views of a transformer
# block's heads) on arrays when no graph of the backward is wanted (ops/_raw.py): the same
# NumPy views and copies the ops' forwards make. Host arrays only (others: the recorded formula).

def _reshape_raw(input, *sizes, shape=None):
    _raw.host_arrays(input)
    shape = _infer_size(_shape_arg(sizes) if shape is None else
                        _sizes(sizes, shape, "reshape", "shape"), input.size)
    v = input.view()
    try:
        v.shape = shape     # (a view where the strides allow it: _view's forward)
        return v
    except AttributeError:
        return input.reshape(shape)     # (else a copy: _reshape_copy's forward)


def _transpose_raw(input, dim0, dim1):
    _raw.host_arrays(input)
    nd = input.ndim
    return input.swapaxes(_wrap_dim(dim0, nd), _wrap_dim(dim1, nd)) if nd else input.view()


transpose._raw = _transpose_raw
reshape._raw = _reshape_raw


_t = defop("t", lambda xp, self: xp.swapaxes(self, 0, 1) if self.ndim == 2 else self.view(),
           view=True, self=lambda grad: _t(grad))


def t(input):
    nd = input._data.ndim
    if nd > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {nd}D")
    return _t(input)


def _inverse_perm(dims):
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return tuple(inv)


_permute = defop("permute", lambda xp, self, dims: xp.transpose(self, dims), view=True,
                 self=lambda grad, dims: _permute(grad, _inverse_perm(dims)))


def permute(input, *order, dims=None):
    dims = _shape_arg(order) if dims is None else _sizes(order, dims, "permute", "dims")
    nd = input._data.ndim
    if len(dims) != nd:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {nd} is not equal "
            f"to len(dims) = {len(dims)}")
    dims = tuple(_wrap_dim(d, nd) for d in dims)
    if len(set(dims)) != nd:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _permute(input, dims)


def _squeeze_fwd(xp, self, dims):
    return xp.squeeze(self, axis=dims) if dims else self.view()


def _squeeze_grad(grad, self_shape):
    return reshape(grad, self_shape)


# one forward, three grad_fn names, as PyTorch: squeeze(), squeeze(dim), squeeze(dims)
_squeeze = defop("squeeze", _squeeze_fwd, view=True, node_name="SqueezeBackward0", self=_squeeze_grad)
_squeeze_dim = defop("squeeze_dim", _squeeze_fwd, view=True, node_name="SqueezeBackward1",
                     self=_squeeze_grad)
_squeeze_dims = defop("squeeze_dims", _squeeze_fwd, view=True, node_name="SqueezeBackward2",
                      self=_squeeze_grad)


def squeeze(input, dim=None):
    shape = input._data.shape
    nd = len(shape)
    if dim is None:
        return _squeeze(input, tuple(i for i, s in enumerate(shape) if s == 1))
    multi = isinstance(dim, (tuple, list))
    ds = dim if multi else (dim,)
    dims = tuple(sorted({_wrap_dim(d, nd) for d in ds}))
    dims = tuple(d for d in dims if nd and shape[d] == 1)
    return (_squeeze_dims if multi else _squeeze_dim)(input, dims)


_unsqueeze = defop("unsqueeze", lambda xp, self, dim: xp.expand_dims(self, dim), view=True,
                   self=lambda grad, dim: squeeze(grad, dim))


def unsqueeze(input, dim):
    return _unsqueeze(input, _wrap_dim(dim, input._data.ndim + 1))


# ------------------------------------------------------------------ dtype casts and copies

def _to_fwd(xp, self, dtype):
    if self.dtype.kind == "c" and dtype.np.kind != "c":  # PyTorch's warning, not NumPy's
        import warnings
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning,
                      stacklevel=4)
        return D.cast(self.real, dtype) if dtype._special else self.real.astype(dtype.np)
    return D.cast(self, dtype) if dtype._special else self.astype(dtype.np)


def _to_grad(grad, self):
    if grad.dtype is self.dtype:
        return grad
    from .complex import cast_grad  # (a real -> complex cast: the gradient's real part)
    return cast_grad(grad, self.dtype)


to_dtype = defop("to_dtype", _to_fwd, node_name="ToCopyBackward0", quiet=True, self=_to_grad)
def _clone_fwd(xp, self, memory_format=None):
    """A copy; preserve_format (the default) keeps a non-overlapping and dense layout (a
    transposed matrix stays transposed) and gives the others (expanded, strided with gaps) the
    layout PyTorch suggests for them (contiguous, or channels-last), as PyTorch's;
    contiguous_format and channels_last(_3d) lay the copy out so."""
    name = getattr(memory_format, "name", "preserve_format")
    if name == "preserve_format":
        if self.size == 0:     # (no elements: the strides kept)
            return empty_strided(xp, self.shape, self.dtype, self.strides)
        if self.flags.c_contiguous:
            return self.copy()
        if dense_order(self) is not None:
            return xp.array(self, copy=True, order="K")
        name = suggest_format(self)
    return in_format(xp, self, name)


clone = defop("clone", _clone_fwd, self=lambda grad: grad)
_contiguous = defop("contiguous", lambda xp, self: xp.ascontiguousarray(self),
                    node_name="CloneBackward0", self=lambda grad: grad)


def contiguous(self, memory_format=None):
    """Tensor.contiguous(memory_format=torch.contiguous_format): self where it is laid out so,
    else a copy that is (CloneBackward0)."""
    if memory_format is None:
        return self if self._data.flags.c_contiguous else _contiguous(self)
    name = _format_name(memory_format)
    if format_contiguous(self._data, name):
        return self
    if name == "preserve_format":
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return clone(self, memory_format=memory_format)


# ------------------------------------------------------------------ indexing

def _has_advanced(key):
    if not isinstance(key, tuple):
        key = (key,)
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, (int, slice)) and not isinstance(k, bool):
            continue
        return True
    return False


def _is_int_index(k):
    return isinstance(k, int) and not isinstance(k, bool)


def _is_basic_index(k):
    return k is None or k is Ellipsis or isinstance(k, slice) or _is_int_index(k)


def _split_ints(key):
    """PyTorch applies a key's integers first (selects), then its tensors to what is left;
    NumPy counts integers among the advanced indices, which moves the broadcast dimensions
    (x[0, :, :, t] is [3, 4, 2] in PyTorch, [2, 3, 4] in NumPy). For a key with both:
    (the basic key with the tensors as full slices, the rest: the tensors over what the basic
    key left), else None."""
    if not isinstance(key, tuple) or not any(_is_int_index(k) for k in key) or \
            all(_is_basic_index(k) for k in key):
        return None
    basic = tuple(k if _is_basic_index(k) else slice(None) for k in key)
    rest = tuple(k if k is Ellipsis or not _is_basic_index(k) else slice(None)
                 for k in key if not _is_int_index(k))
    return basic, rest


_INDEX_DTYPES = ("int64", "int32", "uint8", "bool")
ERR_INDEX_DTYPE = "tensors used as indices must be long, int, byte or bool tensors"


def _int_list(k):
    """Whether the list k holds Python ints only, each within int64 (torch.tensor's int64)."""
    if not k:
        return False
    for i in k:
        if i.__class__ is not int or not -0x8000000000000000 <= i <= 0x7FFFFFFFFFFFFFFF:
            return False
    return True


def _normalize_key(key, self=None):
    """Tensors inside an index become arrays (byte tensors: bool masks); lists become arrays.
    Indexing `self` on a device, host indices (CPU tensors, NumPy arrays, lists) move to its
    device, as PyTorch allows; device indices of a CPU `self` are PyTorch's error."""
    on = None if self is None else _DEVICE_MODULES.get(type(self._data))

    def place(d):
        if on is not None:
            return on.asarray(d) if type(d) is _ndarray else d
        if self is not None and type(d) in _DEVICE_MODULES and type(self._data) is _ndarray:
            raise RuntimeError("indices should be either on cpu or on the same device as the "
                               "indexed tensor (cpu)")
        return d

    def conv(k):
        if isinstance(k, Tensor):
            name = k.dtype.name
            if name not in _INDEX_DTYPES:
                raise IndexError(ERR_INDEX_DTYPE)
            d = k._data
            return place(d.astype(bool) if name == "uint8" else d)
        if k.__class__ is list and _int_list(k):  # (x[:, [-1]]: int64, as torch.tensor(k))
            return place(_np.array(k, dtype=_np.int64))  # host: a list index, placed as others
        if isinstance(k, (list, tuple)):
            from .._creation import tensor
            try:
                t_ = tensor(k) if self is None else tensor(k, device="cpu")
            except (TypeError, ValueError, RuntimeError):
                raise IndexError(ERR_INDEX_DTYPE) from None
            if t_._data.size == 0 and t_.dtype.is_floating_point:   # (x[[]]: an empty long
                return place(t_._data.astype("int64"))             # index, as PyTorch's)
            if t_.dtype.name not in _INDEX_DTYPES:
                raise IndexError(ERR_INDEX_DTYPE)
            return place(t_._data)
        if type(k) is _ndarray and on is not None:
            return on.asarray(k)
        if isinstance(k, float):
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                             "Variables are valid indices (got float)")
        return k
    if isinstance(key, tuple):
        return tuple(conv(k) for k in key)
    return conv(key)


def _index_fwd(xp, self, key):
    try:
        return self[key]
    except IndexError as e:
        raise IndexError(_index_error(self, key, e)) from None


def _index_error(arr, key, exc):
    msg = str(exc)
    import re
    m = re.search(r"index (-?\d+) is out of bounds for axis (\d+) with size (\d+)", msg)
    if m:
        return f"index {m.group(1)} is out of bounds for dimension {m.group(2)} with size {m.group(3)}"
    if "too many indices" in msg:
        return f"too many indices for tensor of dimension {arr.ndim}"
    m = re.search(r"boolean index did not match indexed array along (?:axis|dimension) (\d+)", msg)
    if m:
        ks = key if isinstance(key, tuple) else (key,)
        mask = next((k for k in ks if getattr(k, "dtype", None) is not None and
                     k.dtype.kind == "b"), None)
        if mask is not None:
            i = int(m.group(1))
            return (f"The shape of the mask [{', '.join(map(str, mask.shape))}] at index {i} does "
                    f"not match the shape of the indexed tensor [{', '.join(map(str, arr.shape))}]"
                    f" at index {i}")
    return msg


def _index_backward_fwd(xp, grad, shape, key):
    z = xp.zeros(shape, dtype=grad.dtype)
    if _has_advanced(key):
        ufunc_at(xp, xp.add, z, key, grad)
    else:
        z[key] = grad
    return z


_index_backward = defop("index_backward", _index_backward_fwd,
                        grad=lambda grad, key: _index(grad, key))
_index = defop("index", _index_fwd, node_name="IndexBackward0",
               self=lambda grad, self_shape, key: _index_backward(grad, self_shape, key))


def _basic_node(key):
    """The grad_fn PyTorch reports for basic indexing: its last non-trivial step."""
    if not isinstance(key, tuple):
        if key is None:
            return "Unsqueeze"
        if key is Ellipsis:
            return "Alias"
        return "Slice" if isinstance(key, slice) else "Select"
    for k in reversed(key):
        if k is None:
            return "Unsqueeze"
        if k is Ellipsis or k == slice(None):
            continue
        return "Slice" if isinstance(k, slice) else "Select"
    return "Alias"


_BASIC_ITEMS = frozenset((int, slice, type(None), type(...)))  # (exact classes: no bool)


def _basic_tuple(key):
    """Whether key is a tuple of ints, slices, None and Ellipsis only (_normalize_key would give
    it back as it is, and it has no advanced index)."""
    if key.__class__ is not tuple:
        return False
    for k in key:
        if k.__class__ not in _BASIC_ITEMS:
            return False
    return True


def getitem(self, key):
    if not _basic_tuple(key):  # (generation's x[:, -1, :]: nothing to convert, no advanced index)
        key = _normalize_key(key, self)
        if _has_advanced(key):
            split = _split_ints(key)
            if split is not None:   # (integers first, as PyTorch)
                return getitem(getitem(self, split[0]), split[1])
            return _index(self, key)
    nd = self._data.ndim
    ks = key if isinstance(key, tuple) else (key,)
    dim = 0
    for k in ks:  # PyTorch's messages for integer indices
        if k is None:
            continue
        if k is Ellipsis:
            dim = nd - builtins.sum(1 for x in ks if x is not None and x is not Ellipsis)
            continue
        if dim >= nd:
            raise IndexError(f"too many indices for tensor of dimension {nd}")
        if isinstance(k, int):
            n = self._data.shape[dim]
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for dimension {dim} with size {n}")
        dim += 1
    node = _basic_node(key)
    if not any(k is Ellipsis for k in ks):
        key = ks + (Ellipsis,)  # NumPy returns a scalar copy, not a 0-d view, for x[i] of 1-d x
    return _basic_views[node](self, key)


def _array_key(key):
    """An index key with its tensors as arrays (torch.index_put's indices come as tensors; a
    one-element tensor would otherwise index as an integer through __index__)."""
    ks = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, Tensor) for k in ks):
        return tuple(_normalize_key(ks))
    return key


def _index_put_fwd(xp, self, key, values, accumulate=False):
    key = _array_key(key)
    out = self.copy()
    try:
        if accumulate:
            ufunc_at(xp, xp.add, out, key, values)
        else:
            out[key] = values
    except ValueError:
        target = self[key].shape
        vs = getattr(values, "shape", ())
        if not _has_advanced(key):
            lead = len(target) - len(vs)
            for i, v in reversed(list(enumerate(vs))):
                if lead < 0 or (v != 1 and v != target[i + lead]):
                    raise RuntimeError(
                        f"The expanded size of the tensor ({target[i + lead] if lead >= 0 else 1})"
                        f" must match the existing size ({v}) at non-singleton dimension "
                        f"{i + builtins.max(lead, 0)}.  Target sizes: [{', '.join(map(str, target))}]."
                        f"  Tensor sizes: [{', '.join(map(str, vs))}]") from None
        raise RuntimeError(
            f"shape mismatch: value tensor of shape [{', '.join(map(str, vs))}] cannot be "
            f"broadcast to indexing result of shape [{', '.join(map(str, target))}]") from None
    except IndexError as e:
        raise IndexError(_index_error(self, key, e)) from None
    return out


def _check_setitem_value(region, value):
    """PyTorch's error when `value` does not broadcast to the indexed region (leading size-1
    dims of value are allowed)."""
    if not isinstance(value, Tensor):
        return value
    vs, target = value._data.shape, region._data.shape
    while len(vs) > len(target) and vs[0] == 1:
        vs = vs[1:]
    if vs != target:
        expand(_make(value._data.reshape(vs)), target)  # raises PyTorch's expand error
    return value if vs == value._data.shape else reshape(value, vs)


def _check_index_put_dtype(self, key, values):
    """PyTorch refuses to cast values into an advanced-index assignment."""
    if isinstance(values, Tensor) and values.dtype is not self.dtype and _has_advanced(key):
        from ._inplace import _type_name
        raise RuntimeError(
            f"Index put requires the source and destination dtypes match, got "
            f"{_type_name(self.dtype)} for the destination and {_type_name(values.dtype)} for the "
            "source.")


def _slice_fwd_op(t_, key):
    return _basic_views["Slice"](t_, key)


def _values_grad(grad, key, values_shape):
    key = _array_key(key)
    g = _index(grad, key) if _has_advanced(key) else _slice_fwd_op(grad, key)
    return g if g._data.shape == values_shape else sum_to(g, values_shape)


index_put_ = None  # set in ops/__init__ (in-place wrapper)
index_put = defop("index_put", _index_put_fwd, promote=None,
                  self=lambda grad, key, accumulate: grad if accumulate else index_put(grad, key, 0.0),
                  values=lambda grad, key, values_shape: _values_grad(grad, key, values_shape))


# ------------------------------------------------------------------ more views

def _wrap_dims(dims, nd):
    return tuple(_wrap_dim(d, nd) for d in dims)


def unflatten(input, dim, sizes):
    shape = input._data.shape
    given, dim = dim, _wrap_dim(dim, len(shape))
    sizes = tuple(int(x) for x in sizes)
    if len(sizes) == 0:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if not shape:  # PyTorch's wording: its dim check fails inside unflatten
        raise RuntimeError(f"unflatten got an unexpected error:\nDimension specified as {given} "
                           f"but tensor has no dimensions")
    n = shape[dim]
    if -1 not in sizes:
        p = 1
        for x in sizes:
            p *= x
        if p != n:
            raise RuntimeError(
                f"unflatten: Provided sizes [{', '.join(map(str, sizes))}] don't multiply up to the"
                f" size of dim {dim} ({n}) in the input tensor")
    return view(input, shape[:dim] + _infer_size(sizes, n) + shape[dim + 1:])


def movedim(input, source, destination):
    nd = input._data.ndim
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
            f"contain the same number of dims as destination ({list(dst)} dims)")
    given_src, given_dst = src, dst     # (PyTorch's messages print the dims as given)
    src, dst = _wrap_dims(src, nd), _wrap_dims(dst, nd)
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(given_src)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(given_dst)})")
    if nd == 0:
        return _permute(input, ())
    order = [None] * nd
    for s_, d_ in zip(src, dst):
        order[d_] = s_
    rest = iter(d for d in range(nd) if d not in src)
    order = tuple(o if o is not None else next(rest) for o in order)
    return _permute(input, order)


moveaxis = movedim


def _slice_fwd(xp, self, key):
    out = self[key]
    if not isinstance(out, xp.ndarray):  # integers only: NumPy copies out a scalar, torch views
        out = self[(key if isinstance(key, tuple) else (key,)) + (Ellipsis,)]
    return out


def _slice_backward_fwd(xp, grad, shape, key):
    z = xp.zeros(shape, dtype=grad.dtype)
    z[key] = grad
    return z


_slice_backward = defop("slice_backward", _slice_backward_fwd,
                        grad=lambda grad, key: _basic_views["Slice"](grad, key))


def _basic_view_op(name):
    return defop(name.lower() + "_view", _slice_fwd, view=True, node_name=name + "Backward0",
                 self=lambda grad, self_shape, key: _slice_backward(grad, self_shape, key))


# basic indexing is one view op; its grad_fn is named after the last step PyTorch would take
_basic_views = {n: _basic_view_op(n) for n in ("Slice", "Select", "Unsqueeze", "Alias")}


def narrow(input, dim, start, length):
    shape = input._data.shape
    if len(shape) == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, len(shape))
    n = shape[dim]
    if isinstance(start, Tensor):
        if start.ndim or start.dtype._category != 1:
            raise RuntimeError("start must be an 0-dim integral Tensor.")
        start = start.item()
    if not -n <= start <= n:
        raise IndexError(
            f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    if start < 0:
        start += n
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    key = (slice(None),) * dim + (slice(start, start + length),)
    return _basic_views["Slice"](input, key)


def select(input, dim, index):
    shape = input._data.shape
    if len(shape) == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, len(shape))
    n = shape[dim]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"[{', '.join(map(str, shape))}] at dimension {dim}")
    key = (slice(None),) * dim + (index + n if index < 0 else index,)
    return _basic_views["Select"](input, key)


def _unfold_fwd(xp, self, dimension, size, step):
    if self.ndim == 0:
        return self.reshape(1)[:size]
    n = self.shape[dimension]
    nwin = (n - size) // step + 1
    shape = self.shape[:dimension] + (nwin,) + self.shape[dimension + 1:] + (size,)
    st = self.strides
    strides = st[:dimension] + (st[dimension] * step,) + st[dimension + 1:] + (st[dimension],)
    return D.as_strided(xp, self, shape, strides, writeable=step >= size)


def _unfold_backward_fwd(xp, grad, shape, dimension, size, step):
    z = xp.zeros(shape, dtype=grad.dtype)
    if len(shape) == 0:
        return (z + grad.sum()).astype(grad.dtype)
    g = xp.moveaxis(grad, dimension, -2)  # (..., nwin, size)
    zz = xp.moveaxis(z, dimension, -1)    # (..., n)
    for w in range(g.shape[-2]):
        zz[..., w * step:w * step + size] += g[..., w, :]
    return z


_unfold_backward = defop("unfold_backward", _unfold_backward_fwd,
                         grad=lambda grad, dimension, size, step: _unfold(grad, dimension, size, step))
_unfold = defop("unfold", _unfold_fwd, view=True,
                self=lambda grad, self_shape, dimension, size, step: _unfold_backward(
                    grad, self_shape, dimension, size, step))


def unfold(self, dimension, size, step):
    """Tensor.unfold(dimension, size, step): a view of all windows of `size` along dimension."""
    shape = self._data.shape
    dimension = _wrap_dim(dimension, len(shape))
    n = shape[dimension] if shape else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {dimension} is {n} but size is "
                           f"{size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return _unfold(self, dimension, size, step)


def _diag_view_fwd(xp, self, offset, dim1, dim2):
    """A writable strided view of the diagonal (NumPy's diagonal() is read-only)."""
    d, k = (dim2, offset) if offset >= 0 else (dim1, -offset)
    a = self[(slice(None),) * d + (slice(k, None),)]
    n = builtins.max(builtins.min(a.shape[dim1], a.shape[dim2]), 0)
    keep = [i for i in range(a.ndim) if i not in (dim1, dim2)]
    st = a.strides
    shape = tuple(a.shape[i] for i in keep) + (n,)
    strides = tuple(st[i] for i in keep) + (st[dim1] + st[dim2],)
    return D.as_strided(xp, a, shape, strides, writeable=writeable(a))


def _diag_backward_fwd(xp, grad, shape, offset, dim1, dim2):
    z = xp.zeros(shape, dtype=grad.dtype)
    _diag_view_fwd(xp, z, offset, dim1, dim2)[...] = grad
    return z


_diagonal_backward = defop("diagonal_backward", _diag_backward_fwd,
                           grad=lambda grad, offset, dim1, dim2: _diagonal(grad, offset, dim1, dim2))
_diagonal = defop("diagonal", _diag_view_fwd, view=True,
                  self=lambda grad, self_shape, offset, dim1, dim2: _diagonal_backward(
                      grad, self_shape, offset, dim1, dim2))


def diagonal(input, offset=0, dim1=0, dim2=1):
    nd = input._data.ndim
    d1, d2 = _wrap_dim(dim1, nd), _wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return _diagonal(input, offset, d1, d2)


def _diag_embed_fwd(xp, self, offset, dim1, dim2):
    n = self.shape[-1] + abs(offset)
    nd = self.ndim + 1
    shape = list(self.shape[:-1])
    for d in sorted((dim1, dim2)):
        shape.insert(d, n)
    z = xp.zeros(shape, dtype=self.dtype)
    _diag_view_fwd(xp, z, offset, dim1, dim2)[...] = self
    return z


_diag_embed = defop("diag_embed", _diag_embed_fwd,
                    self=lambda grad, offset, dim1, dim2: _diagonal(grad, offset, dim1, dim2))


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    nd = input._data.ndim + 1
    d1, d2 = _wrap_dim(dim1, nd), _wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return _diag_embed(input, offset, d1, d2)


# ------------------------------------------------------------------ copies: repeat, flip, roll

def _repeat_fwd(xp, self, repeats):
    lead = len(repeats) - self.ndim
    return xp.tile(self.reshape((1,) * lead + self.shape), repeats)


def _repeat_grad(grad, self_shape, repeats):
    lead = len(repeats) - len(self_shape)
    shape = (1,) * lead + tuple(self_shape)
    inter = []
    for r, s_ in zip(repeats, shape):
        inter += [r, s_]
    g = reshape(grad, tuple(inter))
    from .reduction import sum as _sum
    g = _sum(g, tuple(range(0, len(inter), 2)))
    return reshape(g, self_shape)


_repeat = defop("repeat", _repeat_fwd, self=_repeat_grad)


def repeat(self, *sizes, repeats=None):
    sizes = _shape_arg(sizes) if repeats is None else _sizes(sizes, repeats, "repeat", "repeats")
    if len(sizes) < self._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    return _repeat(self, sizes)


def tile(input, dims):
    dims = tuple(dims)
    nd = input._data.ndim
    if builtins.min(dims, default=0) < 0:   # (PyTorch's error names the repeated shape)
        shape = (1,) * (len(dims) - nd) + input._data.shape[builtins.max(nd - len(dims), 0):]
        out = [s * d for s, d in zip(shape, (1,) * (nd - len(dims)) + dims)]
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{next(n for n in out if n < 0)}: [{', '.join(map(str, out))}]")
    if len(dims) < nd:
        dims = (1,) * (nd - len(dims)) + dims
    return _repeat(input, dims)


class _Absent:
    def __repr__(self):
        return "<required>"


_ABSENT = _Absent()


def repeat_interleave(input=_ABSENT, repeats=None, dim=None, *, output_size=None):
    if input is _ABSENT:   # (PyTorch's repeat_interleave(repeats) overload by keyword)
        if repeats is None:
            raise TypeError("repeat_interleave() missing 1 required positional argument: "
                            "'input'")
        input, repeats = repeats, None
    if repeats is None:  # torch.repeat_interleave(repeats)
        from .._creation import arange
        r = input
        return _index_select_fwd_op(arange(r._data.shape[0], device=r.device), 0,
                                    _np_repeat_index(r))
    if dim is None:
        input = reshape(input, (-1,))
        dim = 0
    nd = input._data.ndim
    dim = _wrap_dim(dim, nd)
    n = input._data.shape[dim] if nd else 1
    if isinstance(repeats, Tensor) and repeats._data.ndim > 0:
        if repeats._data.shape[0] not in (1, n):
            raise RuntimeError("repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {repeats._data.shape[0]} and "
                               f"input.size({dim}) = {n}")
        if repeats._data.shape[0] == 1:
            repeats = int(repeats._data[0])
        else:
            idx = _np_repeat_index(repeats)
            from . import indexing
            return indexing.index_select(input, dim, _make(idx))
    if isinstance(repeats, Tensor):
        repeats = int(repeats.item())
    if repeats < 0:
        raise RuntimeError("repeats can not be negative")
    shape = input._data.shape
    x = unsqueeze(input, dim + 1)
    x = contiguous(expand(x, shape[:dim + 1] + (repeats,) + shape[dim + 1:]))
    return view(x, shape[:dim] + (n * repeats,) + shape[dim + 1:])


def _np_repeat_index(repeats):
    from .._backend import xp_of
    r = repeats._data
    if (r < 0).any():
        raise RuntimeError("repeats can not be negative")
    xp = xp_of(r)
    return xp.repeat(xp.arange(r.shape[0]), r)


def _index_select_fwd_op(src, dim, idx):
    return _make(src._data[idx])


_flip = defop("flip", lambda xp, self, dims: xp.flip(self, dims).copy() if dims else self.copy(),
              self=lambda grad, dims: _flip(grad, dims))


def flip(input, *dims, **kwargs):
    dims = _shape_arg(dims) if dims else _shape_arg((kwargs["dims"],))
    nd = input._data.ndim
    dims = _wrap_dims(dims, nd)
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
    return _flip(input, dims if nd else ())  # a 0-d tensor's dim 0 is no axis for xp


def fliplr(input):
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return _flip(input, (1,))


def flipud(input):
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return _flip(input, (0,))


def _roll_fwd(xp, self, shifts, dims):
    if dims is None:
        return xp.roll(self.reshape(-1), shifts).reshape(self.shape)
    return xp.roll(self, shifts, dims)


def _neg_shifts(shifts):
    return tuple(-s for s in shifts) if isinstance(shifts, tuple) else -shifts


_roll = defop("roll", _roll_fwd,
              self=lambda grad, shifts, dims: _roll(grad, _neg_shifts(shifts), dims))


def roll(input, shifts, dims=None):
    if isinstance(shifts, (list, tuple)) and not shifts:
        raise RuntimeError("`shifts` required")
    if shifts.__class__ is float:  # (int() would truncate it; PyTorch's parser refuses it)
        raise TypeError("roll(): argument 'shifts' (position 2) must be tuple of ints, not float")
    for i, s in enumerate(shifts if isinstance(shifts, (list, tuple)) else ()):
        if s.__class__ is float:
            raise TypeError(f"roll(): argument 'shifts' failed to unpack the object at pos "
                            f"{i + 1} with error \"type must be tuple of ints,but got float\"")
    if isinstance(shifts, (list, tuple)):
        shifts = tuple(int(x) for x in shifts)
    else:
        shifts = int(shifts)
    if dims is None or (isinstance(dims, (list, tuple)) and not dims):  # (dims=(): none)
        if isinstance(shifts, tuple) and len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return _roll(input, shifts[0] if isinstance(shifts, tuple) else shifts, None)
    nd = input._data.ndim
    if nd == 0:  # PyTorch's roll does not take dims of a 0-d tensor
        d0 = dims[0] if isinstance(dims, (list, tuple)) else dims
        raise IndexError(f"Dimension specified as {d0} but tensor has no dimensions")
    dims = _wrap_dims(dims, nd) if isinstance(dims, (list, tuple)) else (_wrap_dim(dims, nd),)
    shifts = shifts if isinstance(shifts, tuple) else (shifts,)
    if len(shifts) != len(dims):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    return _roll(input, shifts, dims)


_rot90 = defop("rot90", lambda xp, self, k, dims: xp.rot90(self, k, dims).copy(),
               self=lambda grad, k, dims: _rot90(grad, -k, dims))


def rot90(input, k=1, dims=(0, 1)):
    dims = tuple(dims)
    nd = input._data.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if nd < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {nd}")
    d0, d1 = _wrap_dims(dims, nd)
    if d0 == d1:
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    return _rot90(input, k % 4, (d0, d1))


# ------------------------------------------------------------------ joining and splitting

_CAT_OPS = {}
_STACK_OPS = {}


def _variadic(n, name, fwd, formula_for, cache):
    """A defop over n tensor inputs t0..t{n-1} (defop inputs are named, so one op per arity)."""
    op = cache.get(n)
    if op is None:
        import inspect
        P = inspect.Parameter
        params = [P("xp", P.POSITIONAL_OR_KEYWORD)]
        params += [P(f"t{i}", P.POSITIONAL_OR_KEYWORD) for i in range(n)]
        params += [P("dim", P.POSITIONAL_OR_KEYWORD), P("sizes", P.POSITIONAL_OR_KEYWORD)]

        def forward(xp, *args, **kw):
            if kw:
                return fwd(xp, args[:n], kw["dim"], kw["sizes"])
            return fwd(xp, args[:n], args[n], args[n + 1])
        forward.__signature__ = inspect.Signature(params)
        op = cache[n] = defop(name, forward, promote="binary",
                              **{f"t{i}": formula_for(i) for i in range(n)})
    return op


def _cat_formula(i):
    def f(grad, dim, sizes):
        span = sizes[i]  # (start, stop) of input i along dim (precomputed: linear in n)
        if span is None:  # a legacy 1-d empty input, skipped by the forward
            return grad.new_zeros((0,))
        key = (slice(None),) * dim + (slice(*span),)
        return _basic_views["Slice"](grad, key)
    return f


def _stack_formula(i):
    def f(grad, dim, sizes):
        return _basic_views["Select"](grad, (slice(None),) * dim + (i,))
    return f


def _cat_fwd(xp, arrays, dim, sizes):
    return xp.concatenate([a for a, s_ in zip(arrays, sizes) if s_ is not None], axis=dim)


def _stack_fwd(xp, arrays, dim, sizes):
    return xp.stack(arrays, axis=dim)


def _tensor_list(tensors, fname):
    if isinstance(tensors, Tensor):
        raise TypeError(f"{fname}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        "not Tensor")
    return list(tensors)


def cat(tensors, dim=0, *, out=None):
    """torch.cat: tensors joined along an existing dim (CatBackward0)."""
    tensors = _tensor_list(tensors, "cat")
    if not tensors:   # (a ValueError in PyTorch's Python binding)
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    # legacy: 1-d empty tensors are skipped
    full = [t for t in tensors if not (t._data.ndim == 1 and t._data.shape[0] == 0)]
    skip = bool(full) and len(full) != len(tensors)  # all legacy-empty: nothing to skip
    if not full:
        full = tensors[:1]
    ref = full[0]
    nd = ref._data.ndim
    if nd == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    dim = _wrap_dim(dim, nd)
    for i, t_ in enumerate(tensors):
        if t_._data.ndim == 1 and t_._data.shape[0] == 0 and skip:
            continue
        if t_._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
        if t_._data.ndim != nd:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {nd} and {t_._data.ndim}")
        for d in range(nd):
            if d != dim and t_._data.shape[d] != ref._data.shape[d]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. Expected size "
                    f"{ref._data.shape[d]} but got size {t_._data.shape[d]} for tensor number "
                    f"{i} in the list.")
    spans, start = [], 0
    for t_ in tensors:
        if skip and t_._data.ndim == 1 and t_._data.shape[0] == 0:
            spans.append(None)
        else:
            stop = start + t_._data.shape[dim]
            spans.append((start, stop))
            start = stop
    sizes = tuple(spans)
    # dim and sizes as keywords: a positional int would count as a scalar operand in the dtype
    # promotion (bool tensors would concatenate to int64)
    return _variadic(len(tensors), "cat", _cat_fwd, _cat_formula, _CAT_OPS)(
        *tensors, dim=dim, sizes=sizes)


concat = concatenate = cat


def stack(tensors, dim=0, *, out=None):
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    ref = tensors[0]._data.shape
    for i, t_ in enumerate(tensors):
        if t_._data.shape != ref:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got [{', '.join(map(str, ref))}]"
                f" at entry 0 and [{', '.join(map(str, t_._data.shape))}] at entry {i}")
    dim = _wrap_dim(dim, len(ref) + 1)
    return _variadic(len(tensors), "stack", _stack_fwd, _stack_formula, _STACK_OPS)(
        *tensors, dim=dim, sizes=())


def atleast_1d(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(atleast_1d(t_) for t_ in tensors[0])
    if len(tensors) > 1:
        return tuple(atleast_1d(t_) for t_ in tensors)
    x = tensors[0]
    return reshape(x, (1,)) if x._data.ndim == 0 else x


def atleast_2d(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(atleast_2d(t_) for t_ in tensors[0])
    if len(tensors) > 1:
        return tuple(atleast_2d(t_) for t_ in tensors)
    x = tensors[0]
    nd = x._data.ndim
    if nd == 0:
        return reshape(x, (1, 1))
    return unsqueeze(x, 0) if nd == 1 else x


def atleast_3d(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(atleast_3d(t_) for t_ in tensors[0])
    if len(tensors) > 1:
        return tuple(atleast_3d(t_) for t_ in tensors)
    x = tensors[0]
    nd = x._data.ndim
    if nd == 0:
        return reshape(x, (1, 1, 1))
    if nd == 1:
        return unsqueeze(unsqueeze(x, 0), -1)
    return unsqueeze(x, -1) if nd == 2 else x


def _nonempty(name, tensors):
    if isinstance(tensors, (list, tuple)) and not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return list(tensors)


def hstack(tensors):
    ts = atleast_1d(_nonempty("hstack", tensors))
    return cat(ts, 0 if ts[0]._data.ndim == 1 else 1)


def vstack(tensors):
    return cat(atleast_2d(_nonempty("vstack", tensors)), 0)


row_stack = vstack


def dstack(tensors):
    return cat(atleast_3d(_nonempty("dstack", tensors)), 2)


def column_stack(tensors):
    ts = [reshape(t_, (-1, 1)) if t_._data.ndim <= 1 else t_
          for t_ in _nonempty("column_stack", tensors)]
    return cat(ts, 1)


_SPLIT_OPS = {}


def _split_op(n, name, kind):
    key = (n, name)
    op = _SPLIT_OPS.get(key)
    if op is None:
        if kind == "split":
            def fwd(xp, self, dim, sizes):
                out, start = [], 0
                for s_ in sizes:
                    out.append(self[(slice(None),) * dim + (slice(start, start + s_),)])
                    start += s_
                return tuple(out) if n > 1 else out[0]   # (one output: the array itself)

            def bwd(grad, dim, sizes):      # one output: `grad` is that output's gradient
                if n > 1:
                    whole = _whole(grad, dim)
                    if whole is not None:
                        return (whole,)
                return (cat(list(grad) if n > 1 else [grad], dim),)
        else:
            def fwd(xp, self, dim, sizes):
                out = tuple(self[(slice(None),) * dim + (i,)] for i in range(self.shape[dim]))
                return out if n > 1 else out[0]

            def bwd(grad, dim, sizes):
                return (stack(list(grad) if n > 1 else [grad], dim),)
        op = _SPLIT_OPS[key] = defop(name, fwd, view=True, outputs=n, node_name=name + "Backward0",
                                     backward=bwd, inputs=("self",))
    return op


def _whole(grads, dim):
    """The gradients of a split's outputs joined along `dim` without a copy, where they are
    views that tile one C-contiguous array in order (attention's backward makes them so: Note
    [Attention's gradients in one array] in ops/nn_ops.py): a Tensor over that array, or None
    (then cat). Only where no graph of the backward is recorded."""
    if grad_mode._state.enabled:
        return None
    arrays = [g._data if isinstance(g, Tensor) else None for g in grads]
    base = getattr(arrays[0], "base", None)
    # (held by the pieces alone: this name, getrefcount's argument and one view each; an array
    # someone else holds, such as gradients a caller passed in as slices of its own, is copied)
    if base is None or base.__class__ is not _ndarray or not base.flags.c_contiguous or \
            _getrefcount(base) != len(arrays) + 2:
        return None
    shape = list(arrays[0].shape)
    shape[dim] = 0
    for a in arrays:
        if a.__class__ is not _ndarray or a.base is not base or a.dtype != base.dtype or \
                a.ndim != len(shape):
            return None
        shape[dim] += a.shape[dim]
    if base.size != math.prod(shape):
        return None
    whole = base.reshape(shape)   # (C-contiguous: a view)
    start = 0
    for a in arrays:   # each piece exactly its slice of the whole: same memory, same strides
        part = whole[(slice(None),) * dim + (slice(start, start + a.shape[dim]),)]
        if part.shape != a.shape or part.strides != a.strides or \
                part.__array_interface__["data"][0] != a.__array_interface__["data"][0]:
            return None
        start += a.shape[dim]
    return _make(whole)


def _mark_multi(results, self, name, steps):
    """Each output of a multi-output view op re-derives itself from the base with its own step."""
    prefix = self._view_fn or ()
    for i, (r, step) in enumerate(zip(results, steps)):
        r._view_fn = prefix + (step,)
        r._multi_view = (name, i)
    return results


def _split_sizes(self, dim, sizes, name):
    res = _split_op(len(sizes), name, "split")(self, dim, sizes)
    if not isinstance(res, tuple):      # a one-piece split: the op returned a single tensor
        res = (res,)
    steps, start = [], 0
    for s_ in sizes:
        steps.append((narrow, (dim, start, s_), {}))
        start += s_
    return _mark_multi(res, self, name, steps)


def split(tensor, split_size_or_sections, dim=0):
    """torch.split: chunks of split_size, or of the given sizes (views of the input)."""
    shape = tensor._data.shape
    if not shape:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    dim = _wrap_dim(dim, len(shape))
    n = shape[dim] if shape else 0
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = tuple(int(x) for x in split_size_or_sections)
        if builtins.sum(sizes) != n or builtins.any(x < 0 for x in sizes):
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
                f"at dimension {dim}), but got split_sizes=[{', '.join(map(str, sizes))}]")
        return _split_sizes(tensor, dim, sizes, "SplitWithSizes")
    size = int(split_size_or_sections)
    if size < 0 or (size == 0 and n != 0):
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {n}" if size == 0 else
                           f"split expects split_size be non-negative, but got split_size={size}")
    if n == 0:
        sizes = (0,)
    else:
        sizes = (size,) * (n // size) + ((n % size,) if n % size else ())
    return _split_sizes(tensor, dim, sizes, "Split")


def split_method(self, split_size, dim=0):
    """Tensor.split(split_size, dim=0): torch.split under the method's parameter name."""
    return split(self, split_size, dim)


def _overloaded(name, given, **by_keyword):
    """The argument given by position (`given`), or by the keyword of one of PyTorch's overloads
    (tensor_split's sections= / indices= / tensor_indices_or_sections=)."""
    for k, v in by_keyword.items():
        if v is not None:
            if given is not None:
                raise TypeError(f"{name}() got multiple values for argument '{k}'")
            given = v
    if given is None:
        raise TypeError(f"{name}() missing 1 required positional argument: "
                        f"'{next(iter(by_keyword))}'")
    return given


def chunk(input, chunks, dim=0):
    if chunks.__class__ is float:  # (an int in PyTorch's parser)
        raise TypeError("chunk(): argument 'chunks' (position 2) must be int, not float")
    if input._data.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: %d" % chunks)
    shape = input._data.shape
    dim = _wrap_dim(dim, len(shape))
    n = shape[dim]
    size = -(-n // chunks) if n else 0
    if n == 0:
        return split(input, 0, dim) if chunks == 1 else _split_sizes(
            input, dim, (0,) * chunks, "Split")
    return split(input, size, dim)


def tensor_split(input, indices_or_sections=None, dim=0, *, sections=None, indices=None,
                 tensor_indices_or_sections=None):
    """torch.tensor_split: separate slices (each a SliceBackward0 view)."""
    indices_or_sections = _overloaded(
        "tensor_split", indices_or_sections, sections=sections, indices=indices,
        tensor_indices_or_sections=tensor_indices_or_sections)
    shape = input._data.shape
    if not shape:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    dim = _wrap_dim(dim, len(shape))
    n = shape[dim]
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        ios = ios.tolist()
    if isinstance(ios, int):
        if ios <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {ios}")
        q, r = divmod(n, ios)
        bounds, start = [], 0
        for i in range(ios):
            size = q + (1 if i < r else 0)
            bounds.append((start, start + size))
            start += size
    else:
        idx = [0] + [builtins.min(builtins.max(int(i) if i >= 0 else int(i) + n, 0), n)
                     for i in ios] + [n]
        bounds = [(idx[i], builtins.max(idx[i], idx[i + 1])) for i in range(len(idx) - 1)]
    return tuple(_basic_views["Slice"](input, (slice(None),) * dim + (slice(a, b),))
                 for a, b in bounds)


def unbind(input, dim=0):
    shape = input._data.shape
    dim = _wrap_dim(dim, len(shape))
    if not shape:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    n = shape[dim]
    if n == 0:      # (iterating an empty tensor: no pieces, as PyTorch)
        return ()
    res = _split_op(n, "Unbind", "unbind")(input, dim, ())
    if not isinstance(res, tuple):      # one piece: the op returned a single tensor
        res = (res,)
    return _mark_multi(res, input, "Unbind", [(select, (dim, i), {}) for i in range(n)])


def meshgrid(*tensors, indexing=None):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        import warnings
        warnings.warn(
            "torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
            "argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(
            f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for t_ in tensors:
        if t_._data.ndim > 1:
            raise RuntimeError(
                f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t_}")
    ts = [reshape(t_, (-1,)) for t_ in tensors]
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t_._data.shape[0] for t_ in ts)
    k = len(ts)
    out = []
    for i, t_ in enumerate(ts):
        v = view(t_, tuple(-1 if j == i else 1 for j in range(k)))
        out.append(expand(v, shape))
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


def index_put_method(input, indices, values, accumulate=False):
    """torch.index_put / Tensor.index_put(indices, values, accumulate=False): the out-of-place
    index_put_."""
    key = tuple(_normalize_key(tuple(indices), input))
    _check_index_put_dtype(input, key, values)
    return index_put(input, key, values, accumulate)


# ---------------------------------------------------------------- more ops (PyTorch parity)
# Registered by ops/__init__.py from MORE_FUNCTIONS (torch.<name>) and MORE_METHODS (Tensor).

def ravel(input):
    """torch.ravel(input): the flattened input (a view when possible)."""
    return reshape(input, (-1,))


def _split_dir(name, input, indices_or_sections, dim, min_dim):
    if not isinstance(indices_or_sections, (int, list, tuple)) or isinstance(
            indices_or_sections, bool):
        from ._argcheck import combination_error
        bad = f"(Tensor, !{type(indices_or_sections).__name__}!)"
        raise combination_error(name, ("(Tensor input, int sections)",
                                       "(Tensor input, tuple of ints indices)"),
                                (input, indices_or_sections), {},
                                [f"some of the arguments have invalid types: {bad}"] * 2)
    nd = input._data.ndim
    if nd < min_dim:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} dimension, "
                           f"but got a tensor with {nd} dimensions!")
    if isinstance(indices_or_sections, int):
        size = input._data.shape[dim]
        if indices_or_sections == 0 or size % indices_or_sections:
            raise RuntimeError(
                f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                f"dimension {size} is not divisible by the split_size {indices_or_sections}!")
    return tensor_split(input, indices_or_sections, dim)


def hsplit(input, indices_or_sections=None, *, sections=None, indices=None):
    """torch.hsplit: tensor_split along dim 1 (dim 0 of a 1-d input); an int must divide it."""
    ios = _overloaded("hsplit", indices_or_sections, sections=sections, indices=indices)
    return _split_dir("hsplit", input, ios, 0 if input._data.ndim == 1 else 1, 1)


def vsplit(input, indices_or_sections=None, *, sections=None, indices=None):
    """torch.vsplit: tensor_split along dim 0 of an at least 2-d input."""
    ios = _overloaded("vsplit", indices_or_sections, sections=sections, indices=indices)
    return _split_dir("vsplit", input, ios, 0, 2)


def dsplit(input, indices_or_sections=None, *, sections=None, indices=None):
    """torch.dsplit: tensor_split along dim 2 of an at least 3-d input."""
    ios = _overloaded("dsplit", indices_or_sections, sections=sections, indices=indices)
    return _split_dir("dsplit", input, ios, 2, 3)


def split_with_sizes(input, split_sizes, dim=0):
    """torch.split_with_sizes(input, split_sizes, dim=0)."""
    return split(input, list(split_sizes), dim)


def unsafe_split(input, split_size, dim=0):
    """torch.unsafe_split(input, split_size, dim=0): split (ndgrad's views are safe)."""
    return split(input, split_size, dim)


unsafe_chunk = chunk


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    return split_with_sizes(input, split_sizes, dim)


def diagflat(input, offset=0):
    """torch.diagflat(input, offset=0): a 2-d matrix with the flattened input on a diagonal."""
    from .linalg import diag
    return diag(reshape(input, (-1,)), offset)


def narrow_copy(input, dim, start, length):
    """torch.narrow_copy: narrow(), copied into fresh memory (ATen's own checks and messages:
    a dim past the last, then start + length against the size)."""
    nd = input._data.ndim
    if isinstance(dim, int) and dim >= nd and nd:
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, "
                           "but got false.  (Could this error message be improved?  If so, "
                           "please report an enhancement request to PyTorch.)")
    if isinstance(length, int) and length < 0 and nd:
        d = _wrap_dim(dim, nd)
        st = start.item() if isinstance(start, Tensor) else start
        raise RuntimeError(f"start ({st}) + length ({length}) exceeds dimension size "
                           f"({input._data.shape[d]}).")
    return clone(narrow(input, dim, start, length))


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """torch.unique_consecutive: drops each run of equal consecutive elements (or slices along
    dim) down to one; optionally the index of each input element's run and the run lengths."""
    from .._backend import xp_of
    a = input._data
    xp = xp_of(a)
    if dim is None:
        flat = a.reshape(-1)
        n = flat.shape[0]
        starts = xp.ones(n, dtype=bool)
        if n:
            starts[1:] = flat[1:] != flat[:-1]
        values = flat[starts]
        inverse_shape = a.shape
    else:
        d = _wrap_dim(dim, a.ndim)
        moved = xp.moveaxis(a, d, 0)
        n = moved.shape[0]
        starts = xp.ones(n, dtype=bool)
        if n:
            rows = moved.reshape(n, -1)
            starts[1:] = (rows[1:] != rows[:-1]).any(axis=1)
        values = xp.moveaxis(moved[starts], 0, d)
        inverse_shape = (n,)
    out = [_make(xp.ascontiguousarray(values))]
    if return_inverse:
        out.append(_make((xp.cumsum(starts) - 1).astype("int64").reshape(inverse_shape)))
    if return_counts:
        first = xp.flatnonzero(starts)
        out.append(_make(xp.diff(xp.append(first, n)).astype("int64")))
    return out[0] if len(out) == 1 else tuple(out)


def is_same_size(input, other):
    """torch.is_same_size(input, other): whether the shapes are equal."""
    return input._data.shape == other._data.shape


def is_signed(input):
    """torch.is_signed(input): whether the dtype is signed (not bool or uint8)."""
    return input.dtype.name not in ("bool", "uint8", "uint16", "uint32", "uint64")


def _diff_method(self, n=1, dim=-1, prepend=None, append=None):
    from ..functional import diff
    return diff(self, n, dim, prepend, append)


def _is_nonzero(self):
    from .._tensor import Tensor as _T
    return _T.__bool__(self)


MORE_FUNCTIONS = {f.__name__: f for f in (
    ravel, hsplit, vsplit, dsplit, split_with_sizes, diagflat, narrow_copy, unique_consecutive,
    is_same_size, is_signed)}
MORE_FUNCTIONS.update(unsafe_split=unsafe_split, unsafe_chunk=unsafe_chunk,
                      unsafe_split_with_sizes=unsafe_split_with_sizes)
MORE_METHODS = dict(MORE_FUNCTIONS, diff=_diff_method, is_nonzero=_is_nonzero)
