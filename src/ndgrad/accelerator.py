"""torch.accelerator: CUDA when it is there (CuPy with a GPU, or the tests' stand-in device behind
"cuda"), answering through torch.cuda; without one, PyTorch's CPU-only answers: is_available()
False, current_accelerator() None, device_count() 0, and everything that needs a device raises
"Cannot access accelerator device when none is available.".

    device = acc if (acc := torch.accelerator.current_accelerator()) else torch.device("cpu")
"""
import warnings

from ._backend import cuda_available, device as _device

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "current_stream",
           "device_count", "device_index", "empty_cache", "empty_host_cache",
           "get_device_capability", "get_memory_info", "is_available",
           "max_memory_allocated", "max_memory_reserved", "memory_allocated", "memory_reserved",
           "memory_stats", "reset_accumulated_memory_stats", "reset_peak_memory_stats",
           "set_device_idx", "set_device_index", "set_stream", "synchronize"]

ERR_NONE = "Cannot access accelerator device when none is available."


def _cuda():
    """torch.cuda when CUDA is the accelerator, else PyTorch's error."""
    if not cuda_available():
        raise RuntimeError(ERR_NONE)
    from . import cuda
    return cuda


def _index(device):
    """A device index for torch.cuda (an int, a 'cuda[:n]' string or device, None: current)."""
    if device is None:
        return None
    if isinstance(device, (str, _device)):
        d = _device(device)
        if d.type != "cuda":
            raise ValueError(f"{d.type} doesn't match the current accelerator cuda.")
        return d.index
    return device


def device_count():
    return 1 if cuda_available() else 0


def is_available():
    return cuda_available()


def current_accelerator(check_available=False):
    """torch.device('cuda') when CUDA is there, else None."""
    return _device("cuda") if cuda_available() else None


def current_device_index():
    return _cuda().current_device()


def set_device_index(device):
    _cuda().set_device(_index(device) if device is not None else 0)


def current_device_idx():
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_idx(device):
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    return set_device_index(device)


def synchronize(device=None):
    _cuda().synchronize(_index(device))


def current_stream(device=None):
    return _cuda().current_stream(_index(device))


def set_stream(stream):
    from .cuda import Stream
    if not isinstance(stream, Stream):
        raise TypeError("_accelerator_setStream(): incompatible function arguments. The "
                        "following argument types are supported:\n    1. (arg0: torch.Stream) "
                        f"-> None\n\nInvoked with: {stream}")
    _cuda().set_stream(stream)


def get_device_capability(device=None):
    """{"major", "minor"} and the dtypes the device computes (PyTorch's dict)."""
    from . import _dtype as D
    major, minor = _cuda().get_device_capability(_index(device))
    return {"major": major, "minor": minor,
            "supported_dtypes": [D.float32, D.float64, D.float16, D.int8, D.int16, D.int32,
                                 D.int64, D.uint8, D.bool, D.complex64, D.complex128]}


def empty_cache():
    _cuda().empty_cache()


def empty_host_cache():
    _cuda()   # (no pinned host memory is cached)


def memory_stats(device_index=None):
    return _cuda().memory_stats(_index(device_index))


def memory_allocated(device_index=None):
    return _cuda().memory_allocated(_index(device_index))


def max_memory_allocated(device_index=None):
    return _cuda().max_memory_allocated(_index(device_index))


def memory_reserved(device_index=None):
    return _cuda().memory_reserved(_index(device_index))


def max_memory_reserved(device_index=None):
    return _cuda().max_memory_reserved(_index(device_index))


def reset_peak_memory_stats(device_index=None):
    _cuda().reset_peak_memory_stats(_index(device_index))


def reset_accumulated_memory_stats(device_index=None):
    _cuda().reset_accumulated_memory_stats(_index(device_index))


def get_memory_info(device_index=None):
    return _cuda().mem_get_info(_index(device_index))


class device_index:
    """`with torch.accelerator.device_index(i):`: None is a no-op; an index needs the device."""

    def __init__(self, device):
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            cuda = _cuda()
            self.prev_idx = cuda.current_device()
            cuda.set_device(self.idx)

    def __exit__(self, *exc):
        if self.idx is not None and self.prev_idx >= 0:
            _cuda().set_device(self.prev_idx)
        return False
