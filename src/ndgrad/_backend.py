"""The array namespace: NumPy always, CuPy on request. This is the only module that imports cupy.

The "cuda" device is CuPy's when CuPy and a GPU are there; on machines without one, tests (and
``NDGRAD_STANDIN_CUDA=1``) put the strict stand-in module of ndgrad.cuda._standin behind it instead,
so the device code paths run, and any host fallback fails, on every CI machine.

Op code never names `numpy`: it receives `xp` (the module of its inputs' arrays) and calls `xp.*`,
so one forward serves CPU and GPU arrays alike (Chainer's `get_array_module`, read once per op
from the first tensor argument instead of scanning every argument).
"""
import os
import re

import numpy

__all__ = ["numpy", "xp_of", "device", "cuda_available", "to_numpy", "use_standin"]

ndarray = numpy.ndarray
_cupy = None
_MODULES = {}      # device array type -> its module (cupy.ndarray: cupy, stand-in: its module)
_standin = None    # the stand-in module while it is the "cuda" device


def _errstate_var():
    """NumPy's error-state context variable and its all-"ignore" value (numpy >= 2): setting it
    enters np.errstate(all="ignore") for a fraction of its cost (quiet ops, the backward pass).
    (None, None) on NumPy versions without it."""
    try:
        from numpy._core import _ufunc_config
        var = _ufunc_config._extobj_contextvar
        with numpy.errstate(all="ignore"):
            ignore = var.get()
        return var, ignore
    except (ImportError, AttributeError):
        return None, None


ERR_VAR, ERR_IGNORE = _errstate_var()


def _quiet_run():
    """`run(f, *args)`: f(*args) in a context of its own where NumPy's error state is all
    "ignore" (a fresh Context holding only that variable). Entering it costs ~20 ns; setting and
    resetting the variable around a call ~270 ns (a new context mapping each time, and NumPy's
    cached lookup of it missed). A Context is entered by one caller at a time: a nested or
    concurrent entry raises RuntimeError("cannot enter context: ..."), see `entered`. None on
    NumPy versions without the variable."""
    if ERR_VAR is None:
        return None
    import contextvars
    ctx = contextvars.Context()
    ctx.run(ERR_VAR.set, ERR_IGNORE)
    return ctx.run


QUIET_RUN = _quiet_run()


def entered(exc):
    """Whether RuntimeError `exc` is QUIET_RUN's "context already entered" (another thread, or a
    nested call, holds it): then the caller sets the error state itself."""
    return str(exc).startswith("cannot enter context")


def use_standin(enable=True):
    """Put the strict stand-in array module behind device "cuda" (tests; see ndgrad.cuda._standin).
    Returns the previous setting."""
    global _standin
    before = _standin is not None
    if enable:
        from .cuda import _standin as s
        _standin = s.xp
        _MODULES[s.ndarray] = s.xp
    else:
        _standin = None
    return before


def _load_cupy():
    global _cupy
    if _cupy is None:
        try:
            import cupy  # noqa: F401  (optional dependency)
            _cupy = cupy
            _MODULES[cupy.ndarray] = cupy
        except Exception:  # not installed, or no driver
            _cupy = False
    return _cupy


def xp_of(array):
    """The array module (numpy, cupy or the stand-in) that owns `array`."""
    t = type(array)
    if t is ndarray:
        return numpy
    m = _MODULES.get(t)
    if m is not None:
        return m
    if hasattr(array, "__cuda_array_interface__"):
        return _load_cupy() or numpy
    return numpy


def is_array(x):
    """True for a NumPy or device array."""
    t = type(x)
    return t is ndarray or t in _MODULES or hasattr(x, "__cuda_array_interface__")


def move(array, target):
    """`array` on device `target` (a device): the same array when it is there already."""
    if device_of(array) == target:
        return array
    return to_numpy(array) if target.type == "cpu" else target.xp.asarray(array)


def cuda_xp():
    """The module behind device "cuda": the stand-in when enabled, else CuPy (or None)."""
    return _standin if _standin is not None else (_load_cupy() or None)


def cuda_available():
    if _standin is not None:
        return True
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
    if type(array) in _MODULES or hasattr(array, "__cuda_array_interface__"):
        return array.get()
    return numpy.asarray(array)


_DEVICE_STRING = re.compile(r"([a-zA-Z_]+)(?::([1-9][0-9]*|0))?")
_DEVICE_TYPES = ("cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, "
                 "lazy, vulkan, mps, meta, hpu, mtia, privateuseone")
# device types PyTorch names: torch.device("meta") is a value libraries compare with; no array
# lives on these here (their xp raises)
_OTHER_DEVICE_TYPES = frozenset("ipu xpu mkldnn opengl opencl ideep hip ve fpga maia xla lazy "
                                "vulkan mps meta hpu mtia privateuseone".split())


class device:
    """torch.device('cpu') / torch.device('cuda', 0)."""
    __slots__ = ("type", "index")

    def __init__(self, type="cpu", index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif type != "cpu" and type != "cuda":   # (PyTorch's device-string grammar)
            m = _DEVICE_STRING.fullmatch(type) if isinstance(type, str) else None
            if m is None:
                raise RuntimeError(f"Invalid device string: '{type}'")
            type, idx = m.groups()
            if idx is not None:
                index = int(idx)
            if type not in ("cpu", "cuda") and type not in _OTHER_DEVICE_TYPES:
                raise RuntimeError(f"Expected one of {_DEVICE_TYPES} device type at start of "
                                   f"device string: {type}")
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type = type
        self.index = index

    @property
    def xp(self):
        if self.type == "cpu":
            return numpy
        if self.type != "cuda":
            raise RuntimeError(f"ndgrad has no {self.type} device: tensors live on cpu (NumPy) "
                               "or cuda (CuPy)")
        cp = cuda_xp()
        if cp is None:
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


def data_ptr(a):
    """The address of `a`'s first element: NumPy's array interface, a device array's pointer."""
    return a.__array_interface__["data"][0] if isinstance(a, ndarray) else a.data.ptr


def writeable(a):
    """Whether `a` may be written: NumPy's flag (read-only views, broadcasts); device arrays
    always (CuPy's flags are the contiguity and ownership alone)."""
    return a.flags.writeable if isinstance(a, ndarray) else True


def dense_order(a):
    """The axes of array `a` from outermost to innermost in memory if `a` is non-overlapping and
    dense (a permutation of a contiguous array: a transposed matrix), else None (zero strides,
    gaps). PyTorch's preserve_format keeps such a layout in clones and *_like results and makes
    the others contiguous. Sizes of one do not count."""
    item = a.itemsize
    strides = [st // item if st % item == 0 else -1 for st in a.strides]
    order = sorted(range(a.ndim), key=lambda d: (-strides[d], d))
    expected = 1
    for d in reversed(order):
        if a.shape[d] != 1:
            if strides[d] != expected:
                return None
            expected *= a.shape[d]
    return order


def device_of(array):
    t = type(array)
    if t is ndarray:
        return CPU
    return CUDA0 if t in _MODULES or hasattr(array, "__cuda_array_interface__") else CPU


# ------------------------------------------------ the ufunc methods CuPy has for few ufuncs
# CuPy's ufuncs reduce and accumulate with add and multiply only, `at` only where it has a
# scatter kernel, in these dtypes (cupy/_core/_kernel.pyx, _routines_indexing.pyx). Op code
# calls the three functions below: NumPy's methods on NumPy, else these kernels where they
# exist and vectorised scans (log2(n) whole-array passes) where they do not.
CUPY_SCATTER_DTYPES = {
    "add": ("int32", "int64", "float16", "float32", "float64", "uint32", "uint64"),
    "subtract": ("int32", "uint32"),
    "maximum": ("int32", "int64", "float32", "float64", "uint32", "uint64"),
    "minimum": ("int32", "int64", "float32", "float64", "uint32", "uint64"),
    "bitwise_and": ("int32", "int64", "uint32", "uint64"),
    "bitwise_or": ("int32", "int64", "uint32", "uint64"),
    "bitwise_xor": ("int32", "int64", "uint32", "uint64"),
}


def ufunc_reduce(xp, ufunc, a, axis, keepdims=False):
    """ufunc.reduce(a, axis=axis, keepdims=keepdims) for one axis."""
    name = ufunc.__name__
    if xp is numpy or name in ("add", "multiply"):
        return ufunc.reduce(a, axis=axis, keepdims=keepdims)
    if name in ("maximum", "minimum"):
        return (a.max if name == "maximum" else a.min)(axis=axis, keepdims=keepdims)
    r = xp.moveaxis(a, axis, -1)
    if r.shape[-1] == 0:
        if name not in ("bitwise_xor", "bitwise_or", "logical_or", "logical_xor"):
            raise ValueError(f"zero-size array to reduction operation {name} which has no "
                             "identity")
        r = xp.zeros(r.shape[:-1] + (1,), dtype=a.dtype)
    while r.shape[-1] > 1:             # pairwise halving
        n, h = r.shape[-1], r.shape[-1] // 2
        half = ufunc(r[..., :h], r[..., h:2 * h])
        r = xp.concatenate([half, r[..., 2 * h:]], axis=-1) if n % 2 else half
    r = r[..., 0]
    return xp.expand_dims(r, axis) if keepdims else r


def ufunc_accumulate(xp, ufunc, a, axis):
    """ufunc.accumulate(a, axis=axis): on CuPy, other than add and multiply, an inclusive
    Hillis-Steele scan (the ufunc applied in another grouping: the last bit may differ)."""
    if xp is numpy or ufunc.__name__ in ("add", "multiply"):
        return ufunc.accumulate(a, axis=axis)
    r = xp.moveaxis(a, axis, -1).copy()
    k = 1
    while k < r.shape[-1]:
        r[..., k:] = ufunc(r[..., :-k], r[..., k:])
        k *= 2
    return xp.moveaxis(r, -1, axis)


def ufunc_at(xp, ufunc, a, indices, values):
    """ufunc.at(a, indices, values), in place. Where CuPy has no kernel for the ufunc or the
    dtype: the targets' flat positions sorted, a segmented inclusive scan of the values in
    each run of one position (log2(n) passes), and each run's total applied once."""
    if xp is numpy or a.dtype.name in CUPY_SCATTER_DTYPES.get(ufunc.__name__, ()):
        ufunc.at(a, indices, values)
        return
    pos = xp.arange(a.size).reshape(a.shape)[indices]
    v = xp.broadcast_to(xp.asarray(values, dtype=a.dtype), pos.shape).reshape(-1)
    pos = pos.reshape(-1)
    if pos.size == 0:
        return
    order = xp.argsort(pos, kind="stable")
    pos, v = pos[order], v[order]
    new = xp.ones(pos.shape, dtype=bool)              # the first of each run
    new[1:] = pos[1:] != pos[:-1]
    k = 1
    while k < pos.size:
        v[k:], new[k:] = xp.where(new[k:], v[k:], ufunc(v[:-k], v[k:])), new[k:] | new[:-k]
        k *= 2
    last = xp.ones(pos.shape, dtype=bool)             # the last of each run: its total
    last[:-1] = pos[1:] != pos[:-1]
    flat = a.reshape(-1)                              # (a view where a is contiguous)
    flat[pos[last]] = ufunc(flat[pos[last]], v[last])
    if not a.flags.c_contiguous:
        a[...] = flat.reshape(a.shape)


if os.environ.get("NDGRAD_STANDIN_CUDA", "") not in ("", "0"):
    use_standin()
