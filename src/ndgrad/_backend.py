"""The array namespace: NumPy always, CuPy on request. This is the only module that imports cupy.

Op code never names `numpy`: it receives `xp` (the module of its inputs' arrays) and calls `xp.*`,
so one forward serves CPU and GPU arrays alike (Chainer's `get_array_module`, read once per op
from the first tensor argument instead of scanning every argument).
"""
import numpy

__all__ = ["numpy", "xp_of", "device", "cuda_available", "to_numpy"]

ndarray = numpy.ndarray
_cupy = None


def _load_cupy():
    global _cupy
    if _cupy is None:
        try:
            import cupy  # noqa: F401  (optional dependency)
            _cupy = cupy
        except Exception:  # not installed, or no driver
            _cupy = False
    return _cupy


def xp_of(array):
    """The array module (numpy or cupy) that owns `array`."""
    if type(array) is ndarray or not hasattr(array, "__cuda_array_interface__"):
        return numpy
    return _load_cupy() or numpy


def cuda_available():
    cp = _load_cupy()
    if not cp:
        return False
    try:
        return cp.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def to_numpy(array):
    """A NumPy view (CPU arrays) or copy (GPU arrays) of `array`."""
    if type(array) is ndarray:
        return array
    if hasattr(array, "__cuda_array_interface__"):
        return array.get()
    return numpy.asarray(array)


class device:
    """torch.device('cpu') / torch.device('cuda', 0)."""
    __slots__ = ("type", "index")

    def __init__(self, type="cpu", index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif ":" in type:
            type, idx = type.split(":")
            index = int(idx)
        if type not in ("cpu", "cuda"):
            raise RuntimeError(f"Expected one of cpu, cuda device type at start of device string: {type}")
        self.type = type
        self.index = index

    @property
    def xp(self):
        if self.type == "cpu":
            return numpy
        cp = _load_cupy()
        if not cp:
            raise AssertionError("Torch not compiled with CUDA enabled")
        return cp

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index or 0) == (other.type, other.index or 0)

    def __hash__(self):
        return hash((self.type, self.index))

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


CPU = device("cpu")
CUDA0 = device("cuda", 0)


def device_of(array):
    return CPU if type(array) is ndarray else (CUDA0 if hasattr(array, "__cuda_array_interface__") else CPU)
