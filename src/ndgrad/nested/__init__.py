"""`torch.nested`: tensors of tensors of different lengths (PyTorch 2.13's torch.nested).

The jagged layout (`layout=torch.jagged`, nested/_internal/nested_tensor.py) keeps the
components packed in one values buffer with offsets; the strided layout (PyTorch's default
for nested_tensor, nested/_strided.py) keeps each component's own shape.

    nt = torch.nested.nested_tensor([torch.randn(2, 4), torch.randn(3, 4)],
                                    layout=torch.jagged)
    nt.shape                 # torch.Size([2, j1, 4])
    (nt.sin() @ w).to_padded_tensor(0.0)
"""
from .. import _creation
from .._tensor import Tensor
from ._internal.nested_tensor import (jagged_from_list, nested_view_from_values_offsets,
                                      _make_njt)
from ._internal import ops as _ops  # noqa: F401 (gives NestedTensor its methods)

__all__ = ["to_padded_tensor", "as_nested_tensor", "nested_tensor",
           "nested_tensor_from_jagged", "narrow", "masked_select"]


def _jagged():
    from .. import jagged
    return jagged


def _strided_layout():
    from .. import strided
    return strided


def _layout_error(layout):
    return RuntimeError(f"Specified layout is unsupported for nested tensors: {layout}")


def as_nested_tensor(ts, dtype=None, device=None, layout=None):
    """A nested tensor from a tensor or a list of tensors, keeping autograd to them."""
    is_list = isinstance(ts, (list, tuple)) and all(isinstance(t, Tensor) for t in ts)
    if not isinstance(ts, Tensor) and not is_list:
        raise TypeError("as_nested_tensor(): Expected first argument to be a tensor or a list "
                        "/ tuple of tensors ")
    if is_list and not isinstance(ts, list):
        ts = list(ts)
    if isinstance(ts, Tensor) and ts.dim() < 2:
        raise RuntimeError("as_nested_tensor(): Expected tensor argument to have dim() > 1")
    if isinstance(ts, Tensor) and ts.is_nested:
        if layout == ts.layout:
            return ts.to(device=device, dtype=dtype)
        raise RuntimeError(
            "as_nested_tensor(): Converting between nested tensor layouts is not supported")
    if layout is None:
        layout = _strided_layout()
    if layout is _strided_layout():
        from ._strided import strided_from_list
        return strided_from_list(list(ts.unbind()) if isinstance(ts, Tensor) else ts,
                                 dtype, device, keep_graph=True)
    if layout is _jagged():
        if isinstance(ts, Tensor):
            if device is None:
                device = ts.device
            values = ts.contiguous().flatten(0, 1).to(device=device, dtype=dtype)
            b, s = ts.shape[0], ts.shape[1]
            offsets = _creation.arange(0, b * s + 1, s, dtype=_int64(), device=device)
            return nested_view_from_values_offsets(values, offsets)
        return jagged_from_list(ts, None, device=device, dtype=dtype)[0]
    raise _layout_error(layout)


def _int64():
    from .. import int64
    return int64


def nested_tensor(tensor_list, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """A nested tensor with no autograd history (a leaf) from a list of tensors or data."""
    from .. import no_grad, as_tensor
    if layout is None:
        layout = _strided_layout()
    if layout is _strided_layout():
        from ._strided import strided_from_list
        return strided_from_list(tensor_list, dtype, device, requires_grad=requires_grad)
    if layout is _jagged():
        tensors = [t if isinstance(t, Tensor) else as_tensor(t) for t in tensor_list]
        with no_grad():
            nt, _ = jagged_from_list([t.detach() for t in tensors], None, device=device,
                                     dtype=dtype)
        if nt._values._base is not None or any(nt._values is t for t in tensors):
            nt = _make_njt(nt._values.clone(), nt._offsets, None, nt._ragged_idx)
        nt.requires_grad_(requires_grad)
        return nt
    raise _layout_error(layout)


def nested_tensor_from_jagged(values, offsets=None, lengths=None, jagged_dim=None,
                              min_seqlen=None, max_seqlen=None):
    """A jagged nested tensor viewing `values` split by offsets (and lengths: holes)."""
    if offsets is None:
        if lengths is None:
            raise RuntimeError("nested_tensor_from_jagged(): At least one of offsets or "
                               "lengths is required.")
        from ..nn import functional as F
        offsets = F.pad(lengths.cumsum(0), (1, 0))
        lengths = None
    if jagged_dim is None:
        jagged_dim = 1
    elif jagged_dim < 1:
        raise ValueError(f"Expected jagged_dim >=1, but got {jagged_dim}.")
    return nested_view_from_values_offsets(values, offsets, jagged_dim, lengths=lengths)


def narrow(tensor, dim, start, length, layout=None):
    """A nested tensor showing tensor[i, start[i]:start[i] + length[i]] for each i."""
    if layout is None:
        layout = _strided_layout()
    if not isinstance(start, (int, Tensor)):
        raise RuntimeError("start must be an integer or a tensor")
    if not isinstance(length, (int, Tensor)):
        raise RuntimeError("length must be an integer or a tensor")
    if layout is _strided_layout():
        if isinstance(start, Tensor) or isinstance(length, Tensor):
            raise RuntimeError("start and length must be integers for the strided layout NT "
                               "impl")
        return as_nested_tensor(list(tensor.narrow(dim, start, length).unbind()),
                                layout=_strided_layout())
    if layout is _jagged():
        if dim != 1:
            raise RuntimeError("jagged layout only supports dim=1")
        if isinstance(start, int):
            start = _creation.tensor([start], dtype=_int64(), device=tensor.device)
        if isinstance(length, int):
            length = _creation.tensor([length], dtype=_int64(), device=tensor.device)
        b, s = tensor.shape[0], tensor.shape[1]
        start = start.expand(b) if start.numel() == 1 else start
        length = length.expand(b) if length.numel() == 1 else length
        values = tensor.flatten(0, 1) if tensor.is_contiguous() else tensor.reshape(
            b * s, *tensor.shape[2:])
        offsets = _creation.arange(0, b * s + 1, s, dtype=_int64(), device=tensor.device)
        offsets = offsets.clone()
        offsets[:-1] = offsets[:-1] + start
        return nested_view_from_values_offsets(values, offsets, 1, lengths=length.clone())
    raise RuntimeError(f"Specified layout is unsupported for nested narrow: {layout}")


def to_padded_tensor(input, padding, output_size=None, out=None):
    """The nested tensor as a dense tensor, padded with `padding`."""
    r = input.to_padded_tensor(padding, output_size)
    if out is not None:
        out.resize_(r.shape).copy_(r)
        return out
    return r


def masked_select(tensor, mask):
    """The jagged nested tensor of tensor's elements where mask is True, one component per
    row of the last dim."""
    strided = _strided_layout()
    if tensor.layout is not strided:
        raise RuntimeError(f"torch.nested.masked_select requires a strided tensor, given "
                           f"{tensor.layout}")
    if mask.layout is not strided:
        raise RuntimeError(f"torch.nested.masked_select requires a strided mask, given: "
                           f"{mask.layout}")
    from ..nn import functional as F
    values = tensor.masked_select(mask)
    lengths = mask.expand(tensor.shape).sum(dim=tensor.ndim - 1).view(-1)
    return nested_view_from_values_offsets(values, F.pad(lengths.cumsum(dim=0), (1, 0)))
