"""Nested tensors of the strided layout (PyTorch's default for nested_tensor): B components of
one number of dims whose sizes may all differ (PyTorch's NestedTensorImpl).

The components live flattened one after the other in one 1-D `_buffer` (PyTorch's storage,
`values()`), with their shapes in `_sizes`. Elementwise ops of nested tensors of the same
shapes (and with Python scalars) run on the buffer at once; ops whose result depends on each
component's shape (softmax, matmul/bmm, transpose, to_padded_tensor, unbind) run per
component (a loop over the B components, never over elements). Autograd: as the jagged
layout's (Note [Nested tensors and autograd]), the nested tensor is its buffer to the engine.
"""
from .._backend import numpy as _np
from .._tensor import Tensor, _wrap_dim

__all__ = ["StridedNestedTensor", "strided_from_list"]

_new = object.__new__


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


class StridedNestedTensor(Tensor):
    """A nested tensor of layout torch.strided (PyTorch shows its class as torch.Tensor)."""
    is_nested = True

    # ---------------------------------------------------------------- metadata
    @property
    def layout(self):
        from .. import strided
        return strided

    def dim(self):
        return len(self._sizes[0]) + 1 if self._sizes else 1

    ndimension = dim

    @property
    def ndim(self):
        return self.dim()

    def _irregular(self, d):
        return any(s[d - 1] != self._sizes[0][d - 1] for s in self._sizes)

    def size(self, dim=None):
        if dim is None:
            raise RuntimeError("Internal error: NestedTensorImpl doesn't support sizes. Please "
                               "file an issue.")
        from .._tensor import _wrap_dim
        d = _wrap_dim(dim, self.dim())
        if d == 0:
            return len(self._sizes)
        if self._irregular(d):
            raise RuntimeError(f"Given dimension {d} is irregular and does not have a size.")
        return self._sizes[0][d - 1]

    @property
    def shape(self):
        return self.size()

    def stride(self, dim=None):
        raise RuntimeError("Internal error: NestedTensorImpl doesn't support strides. Please "
                           "file an issue.")

    def __len__(self):
        return len(self._sizes)

    def numel(self):
        return sum(_numel(s) for s in self._sizes)

    nelement = numel

    def is_contiguous(self, memory_format=None):
        return True

    def _nested_tensor_size(self):
        from .. import _creation
        return _creation.tensor([list(s) for s in self._sizes], dtype=_int64())

    def values(self):
        return self._buffer.view(self._buffer.shape)

    def unbind(self, dim=0):
        if dim != 0:
            raise RuntimeError("unbind(): only supported for NestedTensor on dim=0")
        from .. import split
        parts = split(self._buffer, [_numel(s) for s in self._sizes])
        return tuple(p.view(s) for p, s in zip(parts, self._sizes))

    def __getitem__(self, index):
        if isinstance(index, int):
            return self.unbind()[index]
        raise NotImplementedError("aten.index.Tensor")

    def to_padded_tensor(self, padding, output_size=None):
        from .. import stack
        from ..nn import functional as F
        comps = self.unbind()
        if not comps:
            raise RuntimeError("to_padded_tensor: at least one constituent tensor should have "
                               "non-zero numel")
        top = [max(s[d] for s in self._sizes) for d in range(len(self._sizes[0]))]
        if output_size is not None:
            out = [int(x) for x in output_size]
            if len(out) != self.dim() or out[0] != len(comps) or any(
                    o < t for o, t in zip(out[1:], top)):
                raise RuntimeError("Value in output_size is less than NestedTensor padded size. "
                                   "Truncation is not supported.")
            top = out[1:]
        padded = []
        for c in comps:
            pad = []
            for d in range(c.dim() - 1, -1, -1):
                pad += [0, top[d] - c.shape[d]]
            padded.append(F.pad(c, pad, value=padding) if any(pad) else c)
        return stack(padded)

    def __repr__(self, *, tensor_contents=None):
        rg = self.requires_grad
        parts = []
        for c in self.unbind():
            c = c.detach()
            if rg:
                c.requires_grad_(True)
            parts.append("  " + repr(c).replace("\n", "\n  "))
        suffix = ""
        if self.grad_fn is not None:
            suffix = f", grad_fn=<{type(self.grad_fn).__name__}>"
        elif rg:
            suffix = ", requires_grad=True"
        return "nested_tensor([\n" + ",\n".join(parts) + "\n]" + suffix + ")"

    __str__ = __repr__

    def __hash__(self):
        return id(self)

    def __bool__(self):
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")

    def numpy(self, *, force=False):
        raise RuntimeError("Internal error: NestedTensorImpl doesn't support sizes. Please file "
                           "an issue.")

    # ---------------------------------------------------------------- autograd (its buffer's)
    @property
    def requires_grad(self):
        return self._buffer.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self._buffer.requires_grad = value

    @property
    def _requires_grad(self):
        return self._buffer._requires_grad

    @_requires_grad.setter
    def _requires_grad(self, value):
        pass

    @property
    def grad_fn(self):
        return self._buffer.grad_fn

    @grad_fn.setter
    def grad_fn(self, value):
        pass

    @property
    def is_leaf(self):
        return self._buffer.is_leaf

    @property
    def _output_nr(self):
        return self._buffer._output_nr

    def _get_accumulator(self):
        return self._buffer._get_accumulator()

    @property
    def grad(self):
        g = self._buffer.grad
        return None if g is None else self._with_values(g)

    @grad.setter
    def grad(self, value):
        self._buffer.grad = None if value is None else value._buffer

    def requires_grad_(self, requires_grad=True):
        self._buffer.requires_grad_(requires_grad)
        return self

    def retain_grad(self):
        self._buffer.retain_grad()

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        from .. import autograd
        autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self):
        return self._with_values(self._buffer.detach())

    def clone(self, memory_format=None):
        return self._with_values(self._buffer.clone())

    def contiguous(self, memory_format=None):
        return self

    def to(self, *args, **kwargs):
        return self._with_values(self._buffer.to(*args, **kwargs))

    def float(self, memory_format=None):
        return self.to(_dt("float32"))

    def double(self, memory_format=None):
        return self.to(_dt("float64"))

    def _with_values(self, buffer):
        return _make(buffer, self._sizes)

    def _with_components(self, comps):
        from .. import cat
        comps = list(comps)
        return _make(cat([c.reshape(-1) for c in comps]), [tuple(c.shape) for c in comps])

    def transpose(self, dim0, dim1):
        d0, d1 = (_wrap_dim(d, self.dim()) for d in (dim0, dim1))
        if d0 == 0 or d1 == 0:
            raise RuntimeError("Nested tensor dimension 0 cannot be transposed")
        return self._with_components(c.transpose(d0 - 1, d1 - 1) for c in self.unbind())

    def view(self, *shape):
        return self.reshape(*shape)

    def reshape(self, *shape):
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) \
            else shape
        if len(shape) < 1 or shape[0] != len(self._sizes):
            raise RuntimeError("reshape: For now nested reshape cannot change or infer the "
                               "implicit batch dimension")
        return self._with_components(c.reshape(shape[1:]) for c in self.unbind())

    def unsqueeze(self, dim):
        d = _wrap_dim(dim, self.dim() + 1)
        if d == 0:
            raise RuntimeError("unsqueeze(): For nested tensors, unsqueezing dimension 0 is not "
                               "supported at the moment if you need this feature, please open "
                               "an issue on github describing your use case.")
        return _make(self._buffer, [s[:d - 1] + (1,) + s[d - 1:] for s in self._sizes])

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return _torch_function(func, args, kwargs or {})


def _dt(name):
    from .. import _dtype as D
    return getattr(D, name)


def _int64():
    return _dt("int64")


def _make(buffer, sizes):
    t = _new(StridedNestedTensor)
    sizes = [tuple(int(x) for x in s) for s in sizes]
    nd = len(sizes[0]) if sizes else 0
    top = tuple(max(s[d] for s in sizes) for d in range(nd))
    base = buffer._data
    xp = _np if type(base) is _np.ndarray else __import__("ndgrad")._backend.xp_of(base)
    object.__setattr__(t, "_data", xp.broadcast_to(xp.zeros((), dtype=base.dtype),
                                                   (len(sizes),) + top))
    object.__setattr__(t, "dtype", buffer.dtype)
    object.__setattr__(t, "_vc", buffer._vc)
    t.__dict__["_buffer"] = buffer
    t.__dict__["_sizes"] = sizes
    return t


def strided_from_list(tensor_list, dtype=None, device=None, requires_grad=False,
                      keep_graph=False):
    """A strided nested tensor of copies of the tensors (or data) in tensor_list; keep_graph:
    as_nested_tensor's, whose buffer stays in the components' graph."""
    from .. import as_tensor, cat, no_grad, empty
    tensors = [t if isinstance(t, Tensor) else as_tensor(t) for t in tensor_list]
    if tensors and len({t.dim() for t in tensors}) != 1:
        raise RuntimeError("All Tensors given to nested_tensor must have the same dimension. "
                           f"Found dimension {tensors[-1].dim()} for Tensor at index "
                           f"{len(tensors) - 1} and dimension {tensors[0].dim()} for Tensor "
                           "at index 0.")
    if not tensors:
        buffer = empty(0, dtype=dtype)
        return _make(buffer, [])
    flat = [t.reshape(-1) for t in tensors]
    if keep_graph:
        buffer = cat(flat)
    else:
        with no_grad():
            buffer = cat([f.detach() for f in flat]).clone()
    kw = {}
    if dtype is not None:
        kw["dtype"] = dtype
    if device is not None:
        kw["device"] = device
    if kw:
        buffer = buffer.to(**kw)
    nt = _make(buffer, [tuple(t.shape) for t in tensors])
    if requires_grad:
        nt.requires_grad_(True)
    return nt


# ---------------------------------------------------------------------------- ops
def _same_sizes(a, b):
    return a._sizes == b._sizes


def _torch_function(func, args, kwargs):
    name = getattr(func, "__name__", str(func))
    from ._internal.ops import POINTWISE
    nts = [a for a in args if isinstance(a, StridedNestedTensor)]
    nt = nts[0]
    if name in ("softmax", "log_softmax"):
        x, dim = args[0], args[1]
        d = _wrap_dim(dim, x.dim())
        if d == 0:
            raise RuntimeError(f"Cannot apply {name} across nested dimension 0")
        return x._with_components(func(c, d - 1, *args[2:], **kwargs) for c in x.unbind())
    if name in ("matmul", "bmm"):
        a, b = args[0], args[1]
        if not (isinstance(a, StridedNestedTensor) and isinstance(b, StridedNestedTensor)):
            if name == "bmm":
                raise RuntimeError("Expected both to be nested, but got a nested self and "
                                   "non-nested other")
            raise RuntimeError("Expected both to be nested, but got a nested self and "
                               "non-nested other")
        if len(a._sizes) != len(b._sizes):
            raise RuntimeError(
                f"Expected size for the 1st dimension of batch2 tensor to be: {len(a._sizes)} "
                f"but got: {len(b._sizes)}." if name == "bmm" else
                f"matmul: Expected size for the 1st dimension of 2nd input tensor to be: "
                f"{len(a._sizes)} but got: {len(b._sizes)}.")
        from .. import matmul
        if name == "bmm" and (a.dim() != 3 or b.dim() != 3):
            raise RuntimeError("batch1 must be a 3D tensor" if a.dim() != 3 else
                               "batch2 must be a 3D tensor")
        return a._with_components(matmul(x, y) for x, y in zip(a.unbind(), b.unbind()))
    if name == "linear":
        x, w, b = (list(args) + [None])[:3]
        d = w.shape[-1]
        for s in x._sizes:
            if s[-1] != d:
                raise RuntimeError(
                    "Shape mismatch for NestedTensor Linear: Expected input's (a nested tensor) "
                    f"'last_dim' to equal 'weight.size(1), but got: last_dim = {s[-1]}, and "
                    f"weight.size(1) = {d}")
        from ..nn import functional as F
        out = F.linear(x._buffer.view(-1, d), w, b).reshape(-1)
        return _make(out, [s[:-1] + (w.shape[0],) for s in x._sizes])
    if name in ("native_layer_norm", "layer_norm"):
        x, ns, w, b, eps = (list(args) + [None, None, 1e-5])[:5]
        if w is None or b is None:
            raise ValueError("NestedTensor layer_norm requires weight and bias")
        from ..nn import functional as F
        ns = (ns,) if isinstance(ns, int) else tuple(ns)
        n = _numel(ns)
        if any(tuple(s[len(s) - len(ns):]) != ns for s in x._sizes):
            raise RuntimeError(f"layer_norm: the nested tensor's last dims are not {list(ns)}")
        out = x._with_values(F.layer_norm(x._buffer.view(-1, *ns), ns, w, b, eps).reshape(-1))
        return (out, None, None) if name == "native_layer_norm" else out
    if name == "transpose":
        return args[0].transpose(args[1], args[2])
    if name in ("Unbind", "unbind"):
        return args[0].unbind(args[1] if len(args) > 1 else 0)
    if name in ("sum_dim", "mean_dim", "amax", "amin"):
        x, dims, keepdim = args[0], args[1], args[2] if len(args) > 2 else False
        if not keepdim:
            raise RuntimeError("NestedTensor always requires keepdim=True for now.")
        dims = (dims,) if isinstance(dims, int) else tuple(dims)
        for d in dims:
            if _wrap_dim(d, x.dim()) != x.dim() - 1:
                raise RuntimeError("NestedTensor can only be reduced across the last dimension "
                                   f"for now got dimension {_wrap_dim(d, x.dim())} instead.")
        inner = tuple(_wrap_dim(d, x.dim()) - 1 for d in dims)
        return x._with_components(func(c, inner, True, *args[3:], **kwargs)
                                  for c in x.unbind())
    base = name[:-1] if name.endswith("_") and not name.endswith("__") else name
    if name in POINTWISE or base in POINTWISE:
        new = []
        for a in args:
            if isinstance(a, StridedNestedTensor):
                if not _same_sizes(nt, a):
                    raise RuntimeError(f"{name} does not support broadcasting when given a "
                                       "NestedTensor")
                new.append(a._buffer)
            elif isinstance(a, Tensor) and a.dim() > 0:
                raise RuntimeError("Expected both self and other to be nested, but got a "
                                   "nested self and non-nested other")
            else:
                new.append(a)
        out = func(*new, **kwargs)
        return nt._with_values(out) if isinstance(out, Tensor) else out
    raise NotImplementedError(
        f"Could not run 'aten::{name}' with arguments from the 'NestedTensorCPU' backend. "
        "This could be because the operator doesn't exist for this backend, or was omitted "
        "during the selective/custom build process (if using custom build).")
