"""The array namespace: NumPy always, CuPy on request. This is the only module that imports cupy.

The "cuda" device is CuPy's when CuPy and a GPU are there; on machines without one, tests (and
``NDGRAD_STANDIN_CUDA=1``) put the strict stand-in module of ndgrad.cuda._standin behind it instead,
so the device code paths run, and any host fallback fails, on every CI machine.

Op code never names `numpy`: it receives `xp` (the module of its inputs' arrays) and calls `xp.*`,
so one forward serves CPU and GPU arrays alike (Chainer's `get_array_module`, read once per op
from the first tensor argument instead of scanning every argument).
"""
import functools
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


# Note [Host allocator]
# A training step allocates and frees the same megabyte-sized arrays every step. glibc's malloc
# maps blocks above its mmap threshold (128 KiB at start) afresh, and gives the heap's free top
# back to the system past its trim threshold, so each step's arrays land on new pages: a page
# fault every 4 KiB on first touch, ~4000 a GPT training step (bench/workloads_transformer.py),
# a tenth of its time. glibc raises both thresholds itself whenever a mapped block is freed
# (mmap to the block's size, up to 32 MiB; trim to twice that): ndgrad starts the process where
# that rule ends, mmap 32 MiB and trim 64 MiB, the state any process reaches by itself once it
# has freed one 32 MiB array. Left alone: C libraries other than glibc, and a process whose
# environment sets glibc's own settings (MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_,
# MALLOC_TOP_PAD_, or glibc.malloc in GLIBC_TUNABLES): the user's choice stands.
_MMAP_THRESHOLD, _TRIM_THRESHOLD = 32 << 20, 64 << 20
_GLIBC_ENV = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_")


def _host_allocator():
    """glibc's malloc thresholds as Note [Host allocator] says; True where they were set."""
    if any(k in os.environ for k in _GLIBC_ENV) or \
            "glibc.malloc" in os.environ.get("GLIBC_TUNABLES", ""):
        return False
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return False
        import ctypes
        mallopt = ctypes.CDLL(None).mallopt
    except (AttributeError, ValueError, OSError):   # not glibc, or no confstr name
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3   # (malloc.h)
    return bool(mallopt(m_mmap_threshold, _MMAP_THRESHOLD)) and \
        bool(mallopt(m_trim_threshold, _TRIM_THRESHOLD))


HOST_ALLOCATOR = _host_allocator()


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


# ------------------------------------------------ memory formats: PyTorch's channels-last layouts
# A tensor's memory format is its array's strides (NumPy keeps any layout, and its ufuncs give
# their result the layout of their input): channels_last is the (N, H, W, C) memory order of an
# (N, C, H, W) array, channels_last_3d (N, D, H, W, C) of an (N, C, D, H, W) one.

CHANNELS_LAST = {"channels_last": (4, (0, 2, 3, 1)), "channels_last_3d": (5, (0, 2, 3, 4, 1))}


def format_contiguous(a, name):
    """a.is_contiguous(memory_format=name) as c10 computes it from sizes and strides (dims of
    size 1 are free); preserve_format asks for plain contiguity, as PyTorch's does."""
    spec = CHANNELS_LAST.get(name)
    if spec is None:
        return bool(a.flags.c_contiguous)
    nd, perm = spec
    if a.ndim != nd:
        return False
    expected = a.itemsize
    for d in reversed(perm):
        n = a.shape[d]
        if n != 1:
            if a.strides[d] != expected:
                return False
            expected *= n
    return True


def suggest_format(a):
    """PyTorch's suggest_memory_format(): "channels_last" ("channels_last_3d") where a 4-d (5-d)
    array's strides are ordered as that layout's (c10's is_channels_last_strides_2d/3d, ambiguous
    cases counted as contiguous), else "contiguous_format". The ops that keep their input's
    format (convolution, batch norm, pooling, interpolation) lay their result out by it."""
    nd = a.ndim
    if nd != 4 and nd != 5:
        return "contiguous_format"
    name = "channels_last" if nd == 4 else "channels_last_3d"
    st, shape = a.strides, a.shape
    if st[1] == 0:
        return "contiguous_format"
    low = 0
    for d in reversed(CHANNELS_LAST[name][1]):
        if shape[d] == 0 or st[d] < low or (d == 0 and low == st[1]):
            return "contiguous_format"
        low = st[d] * shape[d] if shape[d] > 1 else st[d]
    return name


def in_format(xp, a, name, copy=True):
    """a's values laid out in memory format `name` (contiguous_format or channels_last(_3d)),
    a new array (or a itself where it already is and copy is False)."""
    if not copy and format_contiguous(a, name):
        return a
    spec = CHANNELS_LAST.get(name)
    if spec is not None and a.ndim != spec[0]:
        raise RuntimeError(f"required rank {spec[0]} tensor to use {name} format")
    perm = spec[1] if spec is not None else tuple(range(a.ndim))
    if a.size == 0:
        return empty_in_order(xp, a.shape, a.dtype, perm)
    inverse = sorted(range(a.ndim), key=perm.__getitem__)
    return xp.array(a.transpose(perm), copy=True, order="C").transpose(inverse)


def empty_in_order(xp, shape, dtype, order):
    """An array of no elements whose strides are those of memory order `order` (outermost dim
    first), as PyTorch's empty tensors have them (NumPy gives new empty arrays zero strides)."""
    strides, n = [0] * len(shape), xp.dtype(dtype).itemsize
    for d in reversed(order):
        strides[d] = n
        n *= max(shape[d], 1)
    return empty_strided(xp, shape, dtype, strides)


def empty_strided(xp, shape, dtype, strides):
    """An array of no elements with these (byte) strides."""
    return xp.lib.stride_tricks.as_strided(xp.empty(1, dtype), tuple(shape), tuple(strides))


def keep_format(xp, out, *inputs):
    """out in the memory format suggested by the first of `inputs` that suggests a channels-last
    one (PyTorch's convolution, batch norm, pooling and upsampling kernels write their result
    so), else out as it is."""
    for a in inputs:
        if a.ndim == out.ndim:
            name = suggest_format(a)
            if name != "contiguous_format":
                return in_format(xp, out, name, copy=False)
    return out


def keeping_format(forward, inputs=1):
    """An op's forward (xp, *args) whose array results of the rank of its first input take the
    channels-last layout that its first `inputs` arrays suggest (keep_format)."""
    def kept(xp, *args, **kwargs):
        out = forward(xp, *args, **kwargs)
        ins = [a for a in args[:inputs] if a is not None]
        if isinstance(out, tuple):
            return tuple(keep_format(xp, o, *ins) if getattr(o, "ndim", -1) == ins[0].ndim else o
                         for o in out)
        return keep_format(xp, out, *ins)
    return functools.wraps(forward)(kept)     # (its signature: defop reads the parameters)


def obeys_layout(grad, variable):
    """AccumulateGrad's layout contract for a gradient that becomes `.grad` as it is: the
    strides of its variable where that is non-overlapping and dense (dims of size 1 aside,
    unless broadcast), else contiguous."""
    if grad.strides == variable.strides:
        return True
    if dense_order(variable) is None:
        return bool(grad.flags.c_contiguous)
    for n, a, b in zip(grad.shape, grad.strides, variable.strides):
        if (a != b) if n != 1 else (a == 0):
            return False
    return True


def in_layout_of(xp, grad, variable):
    """A copy of grad laid out as AccumulateGrad's contract asks for variable's `.grad`
    (clone_obey_contract): variable's strides where it is dense, else contiguous."""
    if dense_order(variable) is None:
        return xp.array(grad, copy=True, order="C")
    out = xp.empty_like(variable, dtype=grad.dtype)     # (order K: a dense layout kept)
    out[...] = grad
    return out


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
