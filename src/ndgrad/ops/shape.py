# Shape ops: broadcasting (sum_to / expand), reshape and views, indexing, dtype casts.
#
# See ops/_registry.py for the defop language. Extra convention used here: a formula parameter
# named `<input>_shape` (e.g. `self_shape`) receives that input's shape, saved instead of the
# tensor itself. View ops (`view=True`) share storage and version counter with their input.
import builtins

from .. import _dtype as D
from .._tensor import Tensor, _make, _wrap_dim, Size
from ._registry import defop

__all__ = ["sum_to", "expand", "reshape", "view", "transpose", "permute", "squeeze", "unsqueeze",
           "getitem", "index_put", "to_dtype", "clone", "contiguous", "flatten", "t"]


def _shape_arg(size):
    """Accept f(2, 3), f((2, 3)), f([2, 3]) or f(torch.Size([2, 3]))."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    return tuple(int(s) for s in size)


def broadcast_shapes(*shapes):
    """torch.broadcast_shapes with PyTorch's error message."""
    ndim = builtins.max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, d in enumerate(s):
            j = ndim - len(s) + i
            if out[j] == 1:
                out[j] = d
            elif d != 1 and d != out[j]:
                raise RuntimeError(
                    f"The size of tensor a ({out[j]}) must match the size of tensor b ({d}) at "
                    f"non-singleton dimension {i}")
    return Size(out)


def _sum_to_fwd(xp, self, shape):
    shape = tuple(shape)
    lead = self.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and self.shape[i + lead] != 1)
    r = self.sum(axis=axes, keepdims=True) if axes else self
    return r.reshape(shape)


sum_to = defop("sum_to", _sum_to_fwd, self=lambda grad, self_shape: expand(grad, self_shape))


def sum_to_size(self, *size):
    """Tensor.sum_to_size(*size): sum broadcast dimensions so the result has `size`."""
    size = _shape_arg(size)
    if not _expandable(size, self._data.shape):
        raise RuntimeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size "
                           f"{{{', '.join(map(str, self.shape))}}}.")
    return sum_to(self, size) if self._data.shape != size else self


def _expandable(small, big):
    if len(small) > len(big):
        return False
    for s, b in zip(reversed(small), reversed(big)):
        if s != b and s != 1:
            return False
    return True


def _expand_fwd(xp, self, size):
    return xp.broadcast_to(self, size)


_expand = defop("expand", _expand_fwd, view=True,
                self=lambda grad, self_shape: sum_to(grad, self_shape))


def expand(self, *sizes):
    """Tensor.expand(*sizes): a broadcast view; -1 keeps a dimension."""
    sizes = _shape_arg(sizes)
    shape = self._data.shape
    if len(sizes) < len(shape):
        raise RuntimeError(
            f"expand(torch.FloatTensor{{[{', '.join(map(str, shape))}]}}, size=[{', '.join(map(str, sizes))}]): "
            "the number of sizes provided (%d) must be greater or equal to the number of "
            "dimensions in the tensor (%d)" % (len(sizes), len(shape)))
    lead = len(sizes) - len(shape)
    out = list(sizes)
    for i, s in enumerate(shape):
        want = sizes[i + lead]
        if want == -1:
            out[i + lead] = s
        elif s != 1 and s != want:
            raise RuntimeError(
                f"The expanded size of the tensor ({want}) must match the existing size ({s}) at "
                f"non-singleton dimension {i + lead}.  Target sizes: [{', '.join(map(str, sizes))}]."
                f"  Tensor sizes: [{', '.join(map(str, shape))}]")
    out = tuple(out)
    if out == shape:
        return _expand(self, out)
    return _expand(self, out)


def expand_as(self, other):
    return expand(self, other.shape)


def broadcast_to(input, size):
    return expand(input, size)


def _infer_size(size, numel):
    size = list(size)
    neg = [i for i, s in enumerate(size) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in size:
        if s != -1:
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '[{', '.join(map(str, size))}]' is invalid for input of size {numel}")
        size[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '[{', '.join(map(str, size))}]' is invalid for input of size {numel}")
    return tuple(size)


_reshape_copy = defop("reshape", lambda xp, self, shape: xp.reshape(self, shape),
                      node_name="ViewBackward0" if False else "ReshapeAliasBackward0",
                      self=lambda grad, self_shape: reshape(grad, self_shape))


def _view_fwd(xp, self, shape):
    v = self.view()
    v.shape = shape  # raises when a view is impossible
    return v


_view = defop("view", _view_fwd, view=True,
              self=lambda grad, self_shape: reshape(grad, self_shape))


def reshape(self, *shape):
    """A view when the strides allow it, else a copy (torch.reshape)."""
    shape = _infer_size(_shape_arg(shape), self._data.size)
    if shape == self._data.shape:
        return _view(self, shape)
    try:
        return _view(self, shape)
    except AttributeError:
        return _reshape_copy(self, shape)


def view(self, *shape):
    """Tensor.view(*shape): always a view; PyTorch's error when the strides do not allow one."""
    if len(shape) == 1 and isinstance(shape[0], D.dtype):
        return _view_dtype(self, shape[0])
    shape = _infer_size(_shape_arg(shape), self._data.size)
    try:
        return _view(self, shape)
    except AttributeError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.") from None


def _view_dtype(self, dtype):
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


_transpose = defop("transpose", lambda xp, self, dim0, dim1: xp.swapaxes(self, dim0, dim1),
                   view=True, self=lambda grad, dim0, dim1: transpose(grad, dim0, dim1))


def transpose(input, dim0, dim1):
    nd = input._data.ndim
    return _transpose(input, _wrap_dim(dim0, nd), _wrap_dim(dim1, nd))


def t(input):
    nd = input._data.ndim
    if nd > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {nd}D")
    return input if nd < 2 else _transpose(input, 0, 1)


def _inverse_perm(dims):
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return tuple(inv)


_permute = defop("permute", lambda xp, self, dims: xp.transpose(self, dims), view=True,
                 self=lambda grad, dims: _permute(grad, _inverse_perm(dims)))


def permute(input, *dims):
    dims = _shape_arg(dims)
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


_squeeze = defop("squeeze", lambda xp, self, dims: xp.squeeze(self, axis=dims) if dims else self.view(),
                 view=True, self=lambda grad, self_shape: reshape(grad, self_shape))


def squeeze(input, dim=None):
    shape = input._data.shape
    nd = len(shape)
    if dim is None:
        dims = tuple(i for i, s in enumerate(shape) if s == 1)
    else:
        ds = dim if isinstance(dim, (tuple, list)) else (dim,)
        dims = tuple(sorted({_wrap_dim(d, nd) for d in ds}))
        dims = tuple(d for d in dims if nd and shape[d] == 1)
    return _squeeze(input, dims)


_unsqueeze = defop("unsqueeze", lambda xp, self, dim: xp.expand_dims(self, dim), view=True,
                   self=lambda grad, dim: squeeze(grad, dim))


def unsqueeze(input, dim):
    return _unsqueeze(input, _wrap_dim(dim, input._data.ndim + 1))


# ------------------------------------------------------------------ dtype casts and copies

def _to_fwd(xp, self, dtype):
    return self.astype(dtype.np)


to_dtype = defop("to_dtype", _to_fwd, node_name="ToCopyBackward0",
                 self=lambda grad, self: grad.to(self.dtype) if grad.dtype is not self.dtype else grad)
clone = defop("clone", lambda xp, self, memory_format=None: xp.array(self, copy=True),
              self=lambda grad: grad)
_contiguous = defop("contiguous", lambda xp, self: xp.ascontiguousarray(self),
                    node_name="CloneBackward0", self=lambda grad: grad)


def contiguous(self, memory_format=None):
    return self if self._data.flags.c_contiguous else _contiguous(self)


# ------------------------------------------------------------------ indexing

def _has_advanced(key):
    if not isinstance(key, tuple):
        key = (key,)
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, (int, slice)) and not isinstance(k, bool):
            continue
        return True
    return False


def _normalize_key(key):
    """Tensors inside an index become arrays; lists become arrays; bool scalars stay."""
    def conv(k):
        if isinstance(k, Tensor):
            if k.dtype.is_floating_point:
                raise IndexError(
                    "tensors used as indices must be long, int, byte or bool tensors")
            return k._data
        if isinstance(k, list):
            import numpy
            a = numpy.asarray([x.item() if isinstance(x, Tensor) else x for x in k])
            if a.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            return a
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
    return msg


def _index_backward_fwd(xp, grad, shape, key):
    z = xp.zeros(shape, dtype=grad.dtype)
    if _has_advanced(key):
        xp.add.at(z, key, grad)
    else:
        z[key] = grad
    return z


_index_backward = defop("index_backward", _index_backward_fwd,
                        grad=lambda grad, key: _index(grad, key))
_index_view = defop("index_view", _index_fwd, view=True, node_name="SliceBackward0",
                    self=lambda grad, self_shape, key: _index_backward(grad, self_shape, key))
_index = defop("index", _index_fwd, node_name="IndexBackward0",
               self=lambda grad, self_shape, key: _index_backward(grad, self_shape, key))


def getitem(self, key):
    key = _normalize_key(key)
    if _has_advanced(key):
        return _index(self, key)
    return _index_view(self, key)


def _index_put_fwd(xp, self, key, values, accumulate=False):
    out = self.copy()
    if accumulate:
        xp.add.at(out, key, values)
    else:
        out[key] = values
    return out


def _values_grad(grad, key, values_shape):
    g = _index(grad, key) if _has_advanced(key) else _index_view(grad, key)
    return g if g._data.shape == values_shape else sum_to(g, values_shape)


index_put_ = None  # set in ops/__init__ (in-place wrapper)
index_put = defop("index_put", _index_put_fwd, promote=None,
                  self=lambda grad, key, accumulate: grad if accumulate else index_put(grad, key, 0.0),
                  values=lambda grad, key, values_shape: _values_grad(grad, key, values_shape))
