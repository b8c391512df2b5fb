"""torch.accelerator with no accelerator present (ndgrad computes on NumPy): is_available() is
False, current_accelerator() None, device_count() 0, and everything that needs a device raises
PyTorch's "Cannot access accelerator device when none is available.".

    device = acc if (acc := torch.accelerator.current_accelerator()) else torch.device("cpu")
"""
import warnings

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "current_stream",
           "device_count", "device_index", "empty_cache", "get_memory_info", "is_available",
           "max_memory_allocated", "max_memory_reserved", "memory_allocated", "memory_reserved",
           "memory_stats", "reset_accumulated_memory_stats", "reset_peak_memory_stats",
           "set_device_idx", "set_device_index", "set_stream", "synchronize"]

ERR_NONE = "Cannot access accelerator device when none is available."


def _none(*args, **kwargs):
    raise RuntimeError(ERR_NONE)


def device_count():
    return 0


def is_available():
    return False


def current_accelerator(check_available=False):
    return None


current_device_index = synchronize = current_stream = empty_cache = _none
memory_stats = memory_allocated = max_memory_allocated = memory_reserved = _none
max_memory_reserved = reset_accumulated_memory_stats = reset_peak_memory_stats = _none
get_memory_info = empty_host_cache = get_device_capability = _none


def set_device_index(device):
    raise RuntimeError(ERR_NONE)


def current_device_idx():
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_idx(device):
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    return set_device_index(device)


def set_stream(stream):
    raise TypeError("_accelerator_setStream(): incompatible function arguments. The following "
                    "argument types are supported:\n    1. (arg0: torch.Stream) -> None\n\n"
                    f"Invoked with: {stream}")


class device_index:
    """`with torch.accelerator.device_index(i):`: None is a no-op; an index raises."""

    def __init__(self, device):
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            raise RuntimeError(ERR_NONE)

    def __exit__(self, *exc):
        return False
