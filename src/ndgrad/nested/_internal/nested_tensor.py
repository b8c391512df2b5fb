"""NestedTensor: PyTorch's jagged layout (torch.nested._internal.nested_tensor).

A jagged nested tensor of shape (B, *, D_1, ..., D_N) keeps one dense `_values` buffer in which
the ragged dimension of all B components is packed: values has shape (sum_i S_i, D_1, ...)
(the ragged dimension at `_ragged_idx - 1` of values), and `_offsets` (B + 1 int64 entries)
says where component i starts; `_lengths`, when given, makes a tensor with holes. Outer dim d
(d >= 1) is values' dim d - 1; dim 0 (the batch) has no counterpart in values.

Autograd: a nested tensor is its values to the engine (Note [Nested tensors and autograd]):
ops on it are ops on its values, recorded as usual, and its requires_grad, grad_fn, .grad and
backward() are its values' (the gradient shown as a nested tensor of the same structure), so
gradients reach whatever the values came from (a leaf made by nested_tensor(requires_grad=True),
or the components of as_nested_tensor).

`_data` holds a zero-stride array of the nominal padded shape (the ragged dim at its longest
component): the dims ops normalize against it are the nested tensor's own, and no op reads it
(every op on a nested tensor goes through NestedTensor.__torch_function__ or its methods).
"""
from ..._backend import numpy as _np
from ..._tensor import Tensor, Size
from ...ops._registry import defop
from .nested_int import get_tensor_symint

__all__ = ["NestedTensor", "jagged_from_list", "nested_view_from_values_offsets",
           "nested_from_padded", "buffer_from_jagged"]

_new = object.__new__

# the values seen from outside and a nested tensor made over given values: aliases of the
# buffer, with PyTorch's node names (NestedGetValuesBackward0, NestedViewFromJaggedBackward0)
_nested_get_values = defop("_nested_get_values", lambda xp, self: self[...], view=True,
                           self=lambda grad: grad, jvp="linear")
_nested_view_from_jagged = defop("_nested_view_from_jagged", lambda xp, self: self[...],
                                 view=True, self=lambda grad: grad, jvp="linear")


def _nominal(values, offsets, lengths, ragged_idx, smax=None):
    """The zero-stride stand-in array of the nested tensor's padded shape (smax: its longest
    component, when known)."""
    if smax is None:
        lens = _lengths_np(offsets, lengths)
        smax = int(lens.max()) if lens.size else 0
    shape = (int(offsets.shape[0]) - 1, *values.shape[:ragged_idx - 1], smax,
             *values.shape[ragged_idx:])
    base = values._data
    xp = _np if type(base) is _np.ndarray else __import__("ndgrad")._backend.xp_of(base)
    return xp.broadcast_to(xp.zeros((), dtype=base.dtype), shape)


def _lengths_np(offsets, lengths):
    if lengths is not None:
        host = lengths.detach().cpu().numpy() if hasattr(lengths, "detach") else lengths
        return _np.asarray(host, dtype=_np.int64)  # host: offsets
    o = _np.asarray(offsets.detach().cpu().numpy(), dtype=_np.int64)  # host: offsets
    return _np.diff(o)  # host: offsets


class NestedTensor(Tensor):
    """torch.nested._internal.nested_tensor.NestedTensor (layout torch.jagged)."""
    is_nested = True

    def __new__(cls, values, offsets, *, lengths=None, _ragged_idx=1, _metadata_cache=None):
        return _make_njt(values, offsets, lengths, _ragged_idx, _metadata_cache, cls)

    def __init__(self, *args, **kwargs):
        pass

    # ---------------------------------------------------------------- metadata
    @property
    def layout(self):
        from ... import jagged
        return jagged

    @property
    def shape(self):
        return self._size

    def size(self, dim=None):
        if dim is None:
            return self._size
        from ..._tensor import _wrap_dim
        return self._size[_wrap_dim(dim, len(self._size))]

    def dim(self):
        return len(self._size)

    ndimension = dim

    @property
    def ndim(self):
        return len(self._size)

    def __len__(self):
        return self._size[0]

    def numel(self):
        if self._lengths is None:
            return self._values.numel()
        fixed = 1
        for s in (*self._size[1:self._ragged_idx], *self._size[self._ragged_idx + 1:]):
            fixed *= s
        return int(self._lengths.sum().item()) * fixed

    nelement = numel

    def stride(self, dim=None):
        vs = self._values.stride()
        r = self._ragged_idx
        st = (self._size[r] * vs[r - 1], *vs)
        if dim is None:
            return st
        from ..._tensor import _wrap_dim
        return st[_wrap_dim(dim, len(st))]

    def is_contiguous(self, memory_format=None):
        return self._lengths is None and self._values.is_contiguous()

    def _is_contiguous_or_false(self):
        return self.is_contiguous()

    @property
    def is_sparse(self):
        return False

    def values(self):
        """The packed buffer (a view of it: NestedGetValuesBackward0 in PyTorch's graph)."""
        return _nested_get_values(self._values)

    def offsets(self):
        return self._offsets

    def lengths(self):
        return self._lengths

    @property
    def _max_seqlen(self):
        return int(_lengths_np(self._offsets, self._lengths).max())

    @property
    def _min_seqlen(self):
        return int(_lengths_np(self._offsets, self._lengths).min())

    _maybe_max_seqlen = _max_seqlen
    _maybe_min_seqlen = _min_seqlen

    def __repr__(self, *, tensor_contents=None):
        grad = f", requires_grad={self.requires_grad}" if self.requires_grad else ""
        if self.grad_fn is not None:
            grad = f", grad_fn={self.grad_fn}"
        size = "(" + ", ".join(str(s) for s in self._size) + ")"
        return (f"NestedTensor(size={size}, offsets={self._offsets}{grad}, "
                f"contiguous={self.is_contiguous()})")

    __str__ = __repr__

    def __hash__(self):
        return id(self)

    def __bool__(self):
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")

    # ---------------------------------------------------------------- autograd (its values')
    # Note [Nested tensors and autograd]: see the module docstring.
    @property
    def requires_grad(self):
        return self._values.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self._values.requires_grad = value

    @property
    def _requires_grad(self):
        return self._values._requires_grad

    @_requires_grad.setter
    def _requires_grad(self, value):
        pass   # (Tensor's slot: the values hold it)

    @property
    def grad_fn(self):
        return self._values.grad_fn

    @grad_fn.setter
    def grad_fn(self, value):
        pass   # (Tensor's slot: the values hold it)

    @property
    def is_leaf(self):
        return self._values.is_leaf

    @property
    def _output_nr(self):
        return self._values._output_nr

    def _get_accumulator(self):
        return self._values._get_accumulator()

    @property
    def grad(self):
        g = self._values.grad
        return None if g is None else _like(self, g)

    @grad.setter
    def grad(self, value):
        self._values.grad = None if value is None else value._values

    def requires_grad_(self, requires_grad=True):
        self._values.requires_grad_(requires_grad)
        return self

    def retain_grad(self):
        self._values.retain_grad()

    @property
    def retains_grad(self):
        return self._values.retains_grad

    def register_hook(self, hook):
        def on_values(g):
            r = hook(_like(self, g))
            return None if r is None else r._values
        return self._values.register_hook(on_values)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        from ... import autograd
        autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self):
        return _like(self, self._values.detach())

    def _with_values(self, values):
        return _like(self, values)

    def detach_(self):
        self._values.detach_()
        return self

    # ---------------------------------------------------------------- no dense view
    def numpy(self, *, force=False):
        raise RuntimeError(".numpy() is not supported for tensor subclasses.")

    def tolist(self):
        raise RuntimeError(".tolist() is not supported for tensor subclasses, got NestedTensor")

    def item(self):
        raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")

    def __float__(self):
        raise ValueError("only one element tensors can be converted to Python scalars")

    __int__ = __float__

    def __reduce_ex__(self, proto):
        return (_rebuild_njt, (self._constructor_kwargs(),))

    def _constructor_kwargs(self):
        """What PyTorch's checkpoints keep of a nested tensor (its _rebuild_njt's argument)."""
        return {"values": self._values, "offsets": self._offsets, "lengths": self._lengths,
                "_ragged_idx": self._ragged_idx, "_metadata_cache": {},
                "requires_grad": self.requires_grad}

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        from . import ops
        return ops.jagged_torch_function(func, args, kwargs or {})


def _rebuild_njt(constructor_kwargs):
    """A nested tensor from PyTorch's constructor arguments (pickles and checkpoints)."""
    kw = constructor_kwargs
    values = kw["values"]
    if kw.get("requires_grad") and not values.requires_grad:
        values = values.detach().requires_grad_()
    return _make_njt(values, kw["offsets"], kw.get("lengths"), kw.get("_ragged_idx", 1))


def _make_njt(values, offsets, lengths=None, ragged_idx=1, metadata=None, cls=NestedTensor,
              smax=None):
    """A NestedTensor over values (no copy, no graph node: it is its values to autograd)."""
    t = _new(cls)
    _set = object.__setattr__
    _set(t, "_data", _nominal(values, offsets, lengths, ragged_idx, smax))
    _set(t, "dtype", values.dtype)
    _set(t, "_vc", values._vc)
    d = t.__dict__
    d["_values"] = values
    d["_offsets"] = offsets
    d["_lengths"] = lengths
    d["_ragged_idx"] = ragged_idx
    d["_metadata_cache"] = metadata or {}
    j = get_tensor_symint(lengths if lengths is not None else offsets)
    d["_size"] = Size((int(offsets.shape[0]) - 1, *values.shape[:ragged_idx - 1], j,
                       *values.shape[ragged_idx:]))
    return t


def _like(nt, values, ragged_idx=None):
    """A nested tensor of nt's structure around new values."""
    return _make_njt(values, nt._offsets, nt._lengths,
                     nt._ragged_idx if ragged_idx is None else ragged_idx,
                     smax=nt._data.shape[nt._ragged_idx])


def nested_view_from_values_offsets(values, offsets, ragged_idx=1, min_seqlen=None,
                                    max_seqlen=None, lengths=None):
    """A nested tensor viewing values (PyTorch's _nested_view_from_jagged node)."""
    return _make_njt(_nested_view_from_jagged(values), offsets, lengths, ragged_idx)


def jagged_from_list(tensors, offsets=None, dtype=None, device=None):
    """A NestedTensor from a list of tensors (copied: its values are their cat, so autograd
    reaches them), and its offsets."""
    from ... import _creation, cat
    if len(tensors) == 0:
        raise RuntimeError("Cannot construct a nested tensor from an empty tensor list")
    if len({t.dtype for t in tensors}) != 1:
        raise RuntimeError("When constructing a nested tensor, all tensors in list must have "
                           "the same dtype")
    if len({str(t.device) for t in tensors}) != 1:
        raise RuntimeError("When constructing a nested tensor, all tensors in list must be on "
                           "the same device")
    if len({t.dim() for t in tensors}) != 1:
        raise RuntimeError("When constructing a nested tensor, all tensors in list must have "
                           "the same dim")
    component_dim = tensors[0].dim()
    if component_dim == 0:
        raise RuntimeError("Cannot construct a nested tensor from a list of zero-dim tensors")
    sizes = [tuple(t.shape) for t in tensors]
    ragged_idx = None
    for d in range(component_dim):
        if any(s[d] != sizes[0][d] for s in sizes):
            if ragged_idx is None:
                ragged_idx = d + 1
            else:
                raise RuntimeError(
                    "Cannot represent given tensor list as a nested tensor with the jagged "
                    "layout. Note that the jagged layout only allows for a single ragged "
                    "dimension. For example: (B, *, D_0, D_1, ..., D_N), with ragged * dim.")
    if ragged_idx is None:
        ragged_idx = 1
    values = cat(list(tensors), dim=ragged_idx - 1)
    to_kwargs = {}
    if device is not None:
        to_kwargs["device"] = device
    if dtype is not None:
        to_kwargs["dtype"] = dtype
    if to_kwargs:
        values = values.to(**to_kwargs)
    if offsets is None:
        lens = _np.array([s[ragged_idx - 1] for s in sizes], dtype=_np.int64)  # host: offsets
        offsets = _creation.tensor(_cumsum0(lens), device=values.device)
    return nested_view_from_values_offsets(values, offsets, ragged_idx), offsets


def _rows(nt):
    """(batch index, position in its component, packed row) of each element of the ragged dim,
    as int64 arrays (holes skipped)."""
    o = _np.asarray(nt._offsets.detach().cpu().numpy(), dtype=_np.int64)  # host: offsets
    lens = _lengths_np(nt._offsets, nt._lengths)
    b = _np.repeat(_np.arange(lens.size), lens)  # host: offsets
    starts = _np.concatenate(([0], _np.cumsum(lens)[:-1])) if lens.size else lens  # host: offsets
    pos = _np.arange(int(lens.sum())) - _np.repeat(starts, lens)  # host: offsets
    return b, pos, o[:-1][b] + pos


def buffer_from_jagged(nt):
    """The values of nt's components (holes dropped) with the ragged dim first."""
    v = nt._values.movedim(nt._ragged_idx - 1, 0)
    if nt._lengths is None:
        return v
    from ... import _creation
    return v[_creation.tensor(_rows(nt)[2], device=v.device)]


def to_padded(nt, padding, output_size=None):
    """nt as a dense tensor, padded with `padding` (differentiable in nt's values)."""
    from ... import _creation
    if nt._lengths is not None:
        raise RuntimeError("to_padded_tensor(): not supported for nested tensors with holes")
    r = nt._ragged_idx
    b, pos, _ = _rows(nt)
    smax = int(pos.max()) + 1 if pos.size else 0
    v = buffer_from_jagged(nt)                               # (sum S, *rest)
    shape = [nt._size[0], smax, *v.shape[1:]]               # (B, Smax, *rest) ragged at 1
    if output_size is not None:   # (as PyTorch's jagged layout: truncates a shorter size)
        out_size = [int(s) for s in output_size]
        if len(out_size) != len(nt._size):
            raise RuntimeError("Value in output_size is less than NestedTensor padded size. "
                               "Truncation is not supported.")
        shape = [nt._size[0], out_size[r], *v.shape[1:]]
        keep = pos < shape[1]
        b, pos = b[keep], pos[keep]
        if not keep.all():
            kept = _np.nonzero(keep)[0]  # host: offsets
            v = v[_creation.tensor(kept, device=v.device)]
        shape[2:] = v.shape[1:]   # (PyTorch's jagged layout pads the ragged dim only)
    out = _creation.full(shape, padding, dtype=nt.dtype, device=nt.device)
    dev = v.device
    out = out.index_put((_creation.tensor(b, device=dev), _creation.tensor(pos, device=dev)), v)
    return out.movedim(1, r) if r != 1 else out


def nested_from_padded(padded, nt, ragged_idx=None):
    """The jagged tensor of nt's structure holding the valid part of a padded dense tensor."""
    from ... import _creation
    r = nt._ragged_idx if ragged_idx is None else ragged_idx
    b, pos, _ = _rows(nt)
    p = padded.movedim(r, 1) if r != 1 else padded
    v = p[_creation.tensor(b, device=p.device), _creation.tensor(pos, device=p.device)]
    v = v.movedim(0, r - 1) if r != 1 else v
    return _make_njt(v, nt._offsets if nt._lengths is None else _dense_offsets(nt), None, r)


def _dense_offsets(nt):
    from ... import _creation
    lens = _lengths_np(nt._offsets, nt._lengths)
    return _creation.tensor(_cumsum0(lens), device=nt.device)


def _cumsum0(lens):
    """Offsets of components of these lengths (0 first)."""
    return _np.concatenate(([0], _np.cumsum(lens))).astype(_np.int64)  # host: offsets
