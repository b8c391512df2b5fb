"""default_collate / default_convert (torch.utils.data._utils.collate): samples -> a batch.

Tensors are stacked, Python ints become an int64 tensor, floats a float64 tensor, NumPy arrays
and scalars tensors of their dtype; strings stay lists; dicts, namedtuples, tuples and lists are
collated field by field (a tuple of fields comes back as a list, as in PyTorch).

Samples that are host data (NumPy arrays, Python numbers) are converted on the host and land on
the default device (torch.set_default_device), as PyTorch's torch.as_tensor/torch.tensor put
them; tensors are stacked on their own device.
"""
import collections.abc
import re

import numpy as np

from ..._tensor import Tensor, _make


def _host(arr):
    """A tensor of a host array built from samples, on the default device."""
    from ..._creation import _place
    return _make(_place(arr, None))

__all__ = ["default_collate", "default_convert"]

_np_str_obj = re.compile(r"[SaUO]")
ERR_TYPE = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
            "found {}")


def _stack(batch):
    ref = batch[0]._data.shape
    for i, t in enumerate(batch):
        if t._data.shape != ref:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got "
                f"[{', '.join(map(str, ref))}] at entry 0 and "
                f"[{', '.join(map(str, t._data.shape))}] at entry {i}")
    if any(t.requires_grad for t in batch):
        from ...ops import stack
        return stack(batch, 0)
    from ..._backend import xp_of
    return _make(xp_of(batch[0]._data).stack([t._data for t in batch]))


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def default_convert(data):
    """Convert NumPy arrays/scalars inside `data` to tensors, leaving the structure as is."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, (np.ndarray, np.generic)) and \
            not isinstance(data, (np.str_, np.bytes_)):  # host: (types of host samples)
        if data.dtype.kind in "SaUO":
            return data
        return _host(np.array(data))  # host: a sample's host array
    if isinstance(data, collections.abc.Mapping):
        try:
            return type(data)({k: default_convert(v) for k, v in data.items()})
        except TypeError:
            return {k: default_convert(v) for k, v in data.items()}
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """Collate a list of samples into a batch, as torch.utils.data.default_collate."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack(batch)
    if isinstance(elem, (np.ndarray, np.generic)) and \
            not isinstance(elem, (np.str_, np.bytes_)):  # host: (types of host samples)
        if elem.dtype.kind in "SaUO":
            raise TypeError(ERR_TYPE.format(elem.dtype))
        if isinstance(elem, np.ndarray) and elem.shape != ():
            return default_collate([_host(np.array(b)) for b in batch])  # host: samples
        return _host(np.array(batch))  # host: NumPy scalars
    if isinstance(elem, bool):
        return _host(np.array(batch, dtype=np.bool_))  # host: Python numbers
    if isinstance(elem, float):
        return _host(np.array(batch, dtype=np.float64))  # host: Python numbers
    if isinstance(elem, int):
        return _host(np.array(batch, dtype=np.int64))  # host: Python numbers
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        out = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(out) if type(elem) is not dict else out
        except TypeError:
            return out
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        n = len(next(it))
        if not all(len(e) == n for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))      # tuples: strings come back as tuples
        if isinstance(elem, tuple):
            return [default_collate(s) for s in transposed]
        try:
            return type(elem)([default_collate(s) for s in transposed])
        except TypeError:
            return [default_collate(s) for s in transposed]
    raise TypeError(ERR_TYPE.format(type(elem)))
