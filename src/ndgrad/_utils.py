"""torch._utils: what programs and pickles reach in PyTorch's module of that name. A plain
`pickle` of a PyTorch tensor (not torch.save) names `torch._utils._rebuild_tensor_v2` and
`torch.storage._load_from_bytes`: under the alias, ndgrad unpickles it (the checkpoint loader's
rebuild functions, serialization/_rebuild.py, which check every argument). Also the helpers
libraries import: flattening tensors into one buffer, device indices, element sizes."""
from .serialization._rebuild import (  # noqa: F401  (the names pickles call)
    _rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter,
    _rebuild_parameter_with_state, _rebuild_from_type_v2, _rebuild_sparse_tensor,
    _rebuild_device_tensor_from_cpu_tensor, _rebuild_device_tensor_from_numpy)
from .utils.data._worker import ExceptionWrapper, KeyErrorMessage  # noqa: F401


def _import_dotted_name(name):
    components = name.split(".")
    obj = __import__(components[0])
    for component in components[1:]:
        obj = getattr(obj, component)
    return obj


def _flatten_dense_tensors(tensors):
    """The tensors flattened into one contiguous 1-d buffer (one dtype)."""
    from ._creation import cat
    return cat([t.reshape(-1) for t in tensors]) if len(tensors) else cat([])


def _unflatten_dense_tensors(flat, tensors):
    """Views of `flat` with the sizes of `tensors` (the inverse of _flatten_dense_tensors)."""
    out, offset = [], 0
    for t in tensors:
        n = t.numel()
        out.append(flat[offset:offset + n].view_as(t))
        offset += n
    return tuple(out)


def _get_device_index(device, optional=False, allow_cpu=False):
    """The index of a device, a device string or an int; -1 for the CPU with allow_cpu; the
    current device where `optional` and none is named."""
    from ._backend import device as _device
    if isinstance(device, str):
        device = _device(device)
    idx = None
    if isinstance(device, _device):
        if not allow_cpu and device.type == "cpu":
            raise ValueError(f"Expected a non cpu device, but got: {device}")
        idx = -1 if device.type == "cpu" else device.index
    if isinstance(device, int):
        idx = device
    if idx is None:
        if not optional:
            raise ValueError("Expected a torch.device with a specified index or an integer, "
                             f"but got:{device}")
        from . import cuda
        idx = cuda.current_device() if cuda.is_available() else -1
    return idx


def _get_available_device_type():
    from . import cuda
    return "cuda" if cuda.is_available() else None


def _get_device_module(device_type):
    import importlib
    return importlib.import_module(f"{__name__.rpartition('.')[0]}.{device_type}")


def _element_size(dtype):
    from . import _dtype as D
    if not isinstance(dtype, D.dtype):
        raise RuntimeError(f"expected torch.dtype, but got {type(dtype)}")
    return dtype.itemsize


def get_tensor_metadata(tensor):
    return {}


def set_tensor_metadata(tensor, metadata):
    pass


def _dummy_type(name):
    def __init__(self, *args, **kwargs):
        raise RuntimeError(f"Tried to instantiate dummy base class {name}")
    return type(name, (object,), {"__init__": __init__})


class _ClassPropertyDescriptor:
    def __init__(self, fget, fset=None):
        self.fget = fget

    def __get__(self, instance, owner=None):
        if owner is None:
            owner = type(instance)
        return self.fget.__get__(instance, owner)()


def classproperty(func):
    if not isinstance(func, (classmethod, staticmethod)):
        func = classmethod(func)
    return _ClassPropertyDescriptor(func)


def is_compiling():
    return False


def cpu_count():
    import os
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
