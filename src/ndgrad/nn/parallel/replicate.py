"""replicate as PyTorch's without CUDA: no devices gives no replicas; a device to copy the
module onto raises PyTorch's error."""
from ...cuda import ERR_NOT_COMPILED
from .scatter_gather import _device_index

__all__ = ["replicate"]


def replicate(network, devices, detach=False):
    """Copies of `network`, one per GPU in `devices`."""
    if not devices:
        return []
    for d in devices:
        _device_index(d, "Expected a non cpu device, but got: {}")
    raise AssertionError(ERR_NOT_COMPILED)
