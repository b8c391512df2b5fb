"""torch.utils._foreach_utils: grouping tensor lists by device and dtype for the foreach kernels."""
from .._tensor import Tensor

__all__ = []


def _get_foreach_kernels_supported_devices():
    """The device types whose foreach kernels PyTorch prefers over the for-loop."""
    return ["cuda", "xpu", "mtia", "privateuseone"]


def _get_fused_kernels_supported_devices():
    """The device types with fused optimizer kernels in PyTorch."""
    return ["mps", "cuda", "xpu", "hpu", "cpu", "mtia", "privateuseone"]


def _group_tensors_by_device_and_dtype(tensorlistlist, with_indices=False):
    """{(device, dtype): ([one list per input list], indices)} grouping positions by the device
    and dtype of the first list's tensor, in order of first appearance (None entries of the
    other lists stay None)."""
    groups = {}
    for i, t in enumerate(tensorlistlist[0]):
        key = (t.device, t.dtype)
        if key not in groups:
            groups[key] = ([[] for _ in tensorlistlist], [])
        lists, idx = groups[key]
        for lst, src in zip(lists, tensorlistlist):
            lst.append(src[i] if src is not None and i < len(src) else None)
        idx.append(i)
    return groups


def _device_has_foreach_support(device):
    return device.type in _get_foreach_kernels_supported_devices() + ["cpu"]


def _has_foreach_support(tensors, device):
    return _device_has_foreach_support(device) and all(
        t is None or isinstance(t, Tensor) for t in tensors)
