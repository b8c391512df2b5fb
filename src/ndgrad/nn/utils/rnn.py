"""Variable-length sequences: padding and PyTorch's PackedSequence.

A PackedSequence stores the valid time steps of a batch of sequences, time-major: for each step t
the rows of the sequences longer than t, longest first. `batch_sizes[t]` counts them. Packing and
unpacking are one gather and one scatter (`index_copy`), so both are differentiable.

As in PyTorch, `batch_sizes` (and the lengths pad_packed_sequence returns) are CPU tensors, the
sorted/unsorted indices live on the data's device. The index tables are computed on the host
from those lengths (small metadata) and moved to the data's device once.
"""
from collections import namedtuple

import numpy as _np

from ..._backend import to_numpy, xp_of

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence", "invert_permutation"]


def _tensor(array):
    """A CPU int64 tensor of host index metadata (batch_sizes, lengths)."""
    from ..._tensor import _make
    return _make(_np.asarray(array, dtype=_np.int64))  # host: index metadata


def _index(array, like):
    """An int64 index tensor of host metadata on the device of tensor `like`."""
    from ..._tensor import _make
    return _make(xp_of(like._data).asarray(_np.asarray(array, dtype=_np.int64)))  # host: indices


def invert_permutation(permutation):
    if permutation is None:
        return None
    p = to_numpy(permutation._data)  # host: index metadata
    inv = _np.empty(p.shape[0], dtype=_np.int64)  # host: index metadata
    inv[p] = _np.arange(p.shape[0])  # host: index metadata
    return _index(inv, permutation)


class PackedSequence(namedtuple("PackedSequence",
                                ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """Holds the data and list of `batch_sizes` of a packed sequence (see module docstring)."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:                       # PackedSequence(data_and_batch_sizes)
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _apply(self, fn):
        return type(self)(fn(self.data), self.batch_sizes, self.sorted_indices,
                          self.unsorted_indices)

    def to(self, *args, **kwargs):
        """The data moved/cast as Tensor.to does; the indices follow the data's device,
        batch_sizes stays on the CPU (as PyTorch's)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = (lambda t: None if t is None else t.to(data.device))  # noqa: E731
        return type(self)(data, self.batch_sizes, move(self.sorted_indices),
                          move(self.unsorted_indices))

    def _to_type(self, kind, args, kwargs):
        """cuda()/cpu() as PyTorch's: `args` may name a device of that kind, else it is added."""
        ex = self.data.new_empty(0).to(*args, **kwargs)
        if ex.device.type != kind:
            # PyTorch adds device=kind as a keyword, which its Tensor.to refuses beside a dtype
            # (packed.cuda(torch.float32) raises there): the device goes first, positionally
            return self.to(kind, *args, **kwargs)
        return self.to(*args, **kwargs)

    def cuda(self, *args, **kwargs):
        return self._to_type("cuda", args, kwargs)

    def cpu(self, *args, **kwargs):
        return self._to_type("cpu", args, kwargs)

    def double(self):
        return self._apply(lambda t: t.double())

    def float(self):
        return self._apply(lambda t: t.float())

    def half(self):
        return self._apply(lambda t: t.half())

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return self.data.is_pinned()


def _lengths_array(lengths):
    from ..._tensor import Tensor
    if isinstance(lengths, Tensor):   # (PyTorch's lengths.cpu(): a host copy)
        return to_numpy(lengths._data).astype(_np.int64).reshape(-1)  # host: lengths.cpu()
    return _np.asarray(lengths, dtype=_np.int64).reshape(-1)  # host: lengths


def _flat_index(lengths_sorted, batch):
    """Positions, in a (T*B) time-major flattening, of the packed rows, and batch_sizes."""
    T = int(lengths_sorted[0]) if len(lengths_sorted) else 0
    batch_sizes = (lengths_sorted[None, :] > _np.arange(T)[:, None]).sum(1)  # host: lengths
    idx = _np.concatenate([t * batch + _np.arange(bs)  # host: index metadata
                           for t, bs in enumerate(batch_sizes)]) \
        if T else _np.zeros(0, dtype=_np.int64)  # host: index metadata
    return idx.astype(_np.int64), batch_sizes.astype(_np.int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a (T, B, *) (or (B, T, *) with batch_first) tensor of padded sequences."""
    lengths = _lengths_array(lengths)
    if enforce_sorted:
        if (lengths[:-1] < lengths[1:]).any():
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability.")
        sorted_indices = None
    else:
        order = (-lengths).argsort(kind="stable")
        lengths = lengths[order]
        sorted_indices = _index(order, input)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    T, B = input.shape[0], input.shape[1]
    if len(lengths) != B:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lengths)} (batch_size={B})")
    if len(lengths) and lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if len(lengths) and lengths[0] > T:
        raise RuntimeError(f"Expected sequence length to be larger than or equal to "
                           f"{lengths[0]} at index 0, but got {T}")
    idx, batch_sizes = _flat_index(lengths, B)
    data = input.reshape((T * B,) + tuple(input.shape[2:]))[_index(idx, input)]
    return PackedSequence(data, _tensor(batch_sizes), sorted_indices, None)


def _sorted_lengths(batch_sizes):
    bs = _lengths_array(batch_sizes)
    B = int(bs[0]) if len(bs) else 0
    return (bs[None, :] > _np.arange(B)[:, None]).sum(1)  # host: lengths, longest first


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The inverse of pack_padded_sequence: (padded tensor, lengths)."""
    from ..._creation import full
    data, batch_sizes = sequence.data, sequence.batch_sizes
    lengths = _sorted_lengths(batch_sizes)
    B = len(lengths)
    T = int(lengths[0]) if B else 0
    if total_length is not None:
        if total_length < T:
            raise ValueError(
                f"Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being {T}")
        T = total_length
    idx, _ = _flat_index(lengths, B)
    out = full((T * B,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype,
               device=data.device)
    out = out.index_copy(0, _index(idx, data), data).reshape((T, B) + tuple(data.shape[1:]))
    lengths_t = _tensor(lengths)
    if sequence.unsorted_indices is not None:
        out = out.index_select(1, sequence.unsorted_indices)
        order = to_numpy(sequence.unsorted_indices._data)  # host: lengths live on the CPU
        lengths_t = _tensor(lengths[order])
    if batch_first:
        out = out.transpose(0, 1)
    return out, lengths_t


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks a list of (L_i, *) tensors into (T, B, *) (or (B, T, *)), padding the ends."""
    from ...ops.shape import stack
    from .. import functional as F
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    max_len = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        extra = max_len - s.shape[0]
        pads = [0, 0] * (s.ndim - 1) + ([0, extra] if padding_side == "right" else [extra, 0])
        padded.append(F.pad(s, pads, value=padding_value) if extra else s)
    return stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences, _lengths_array(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of variable-length (L_i, *) tensors."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
