"""`torch.utils.dlpack`: zero-copy exchange of tensors with any DLPack library (NumPy >= 1.22,
CuPy, JAX, PyTorch itself): `from_dlpack(obj_or_capsule)`, `to_dlpack(tensor)`, and the
protocol's `Tensor.__dlpack__` / `__dlpack_device__`.

The memory is shared both ways: a tensor made from another library's array reads and writes
that array's memory, and the other way round. Host arrays of NumPy's dtypes go through NumPy's
own DLPack support; bfloat16 and the float8 types (ml_dtypes' NumPy types, which NumPy's DLPack
code does not know) go through a small ctypes implementation of the DLPack 0.8 structs
(`DLManagedTensor` in a "dltensor" capsule) with their DLPack type codes, so a bfloat16 tensor
travels to and from PyTorch as bfloat16, still without a copy. CUDA arrays go through CuPy.
"""
import ctypes
import enum

import numpy as np

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]


class DLDeviceType(enum.IntEnum):
    """DLPack's device types (PyTorch's enum)."""
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


# ---------------------------------------------------------------- the DLPack 0.8 structs
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                             ("deleter", _DELETER)]

_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _CAPSULE_DESTRUCTOR]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_NAME, _USED = b"dltensor", b"used_dltensor"   # (module constants: capsules keep pointers)

# DLPack type codes
_INT, _UINT, _FLOAT, _BFLOAT, _COMPLEX, _BOOL = 0, 1, 2, 4, 5, 6
_FLOAT8 = {10: "float8_e4m3fn", 11: "float8_e4m3fnuz", 12: "float8_e5m2", 13: "float8_e5m2fnuz"}


def _special_types():
    import ml_dtypes
    table = {(_BFLOAT, 16): np.dtype(ml_dtypes.bfloat16)}
    for code, name in _FLOAT8.items():
        table[(code, 8)] = np.dtype(getattr(ml_dtypes, name))
    return table


def _np_dtype(code, bits, lanes):
    if lanes != 1:
        raise BufferError(f"DLPack: vector types (lanes={lanes}) are not supported")
    kind = {_INT: "i", _UINT: "u", _FLOAT: "f", _COMPLEX: "c"}.get(code)
    if kind is not None:
        return np.dtype(f"{kind}{bits // 8}")
    if code == _BOOL and bits == 8:
        return np.dtype(bool)
    dt = _special_types().get((code, bits))
    if dt is None:
        raise BufferError(f"Unsupported dtype in DLTensor (code {code}, {bits} bits).")
    return dt


def _native(dt):
    """A dtype of NumPy's own (not ml_dtypes')."""
    return dt.type.__module__ == "numpy"


def _dl_dtype(dt):
    if dt == np.bool_:
        return _BOOL, 8
    if dt.kind in "iufc" and _native(dt):
        return {"i": _INT, "u": _UINT, "f": _FLOAT, "c": _COMPLEX}[dt.kind], dt.itemsize * 8
    for (code, bits), special in _special_types().items():
        if dt == special:
            return code, bits
    raise BufferError(f"DLPack: dtype {dt} has no DLPack type")


# ---------------------------------------------------------------- export (our capsules)
_EXPORTED = {}  # manager_ctx id -> (the array, the struct, shape and strides buffers)
_next_id = [1]


@_DELETER
def _delete(managed):
    _EXPORTED.pop(managed.contents.manager_ctx, None)


@_CAPSULE_DESTRUCTOR
def _destroy_capsule(capsule):
    # an unconsumed capsule frees its tensor; a consumer renamed it and calls the deleter
    if _api.PyCapsule_IsValid(capsule, _NAME):
        managed = ctypes.cast(_api.PyCapsule_GetPointer(capsule, _NAME),
                              ctypes.POINTER(_DLManagedTensor))
        _delete(managed)


def _capsule_of(arr):
    """A "dltensor" capsule of a host array (any dtype, read-only arrays too), sharing its
    memory; the array lives until the consumer's deleter call (or the unused capsule dies)."""
    code, bits = _dl_dtype(arr.dtype)
    nd = arr.ndim
    shape = (ctypes.c_int64 * max(nd, 1))(*arr.shape)
    strides = (ctypes.c_int64 * max(nd, 1))(*[s // arr.itemsize for s in arr.strides])
    if any(s % arr.itemsize for s in arr.strides):
        raise BufferError("DLPack: strides that are not a multiple of the element size")
    key = _next_id[0]
    _next_id[0] += 1
    m = _DLManagedTensor()
    m.dl_tensor.data = arr.ctypes.data if arr.size else None
    m.dl_tensor.device = _DLDevice(int(DLDeviceType.kDLCPU), 0)
    m.dl_tensor.ndim = nd
    m.dl_tensor.dtype = _DLDataType(code, bits, 1)
    m.dl_tensor.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    m.dl_tensor.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
    m.dl_tensor.byte_offset = 0
    m.manager_ctx = key
    m.deleter = _delete
    _EXPORTED[key] = (arr, m, shape, strides)
    return _api.PyCapsule_New(ctypes.addressof(m), _NAME, _destroy_capsule)


# ---------------------------------------------------------------- import (any capsule)
class _Imported:
    """Owns a consumed DLManagedTensor: NumPy's view of its memory (`__array_interface__`)
    keeps this object alive, and its end calls the producer's deleter."""

    def __init__(self, managed, dtype, shape, strides, data):
        self._managed = managed
        itemsize = dtype.itemsize  # (ml_dtypes' types travel as unsigned ints, then a view)
        code = dtype.str if _native(dtype) else np.dtype(f"u{itemsize}").str
        self.__array_interface__ = {
            "data": (data, False), "shape": shape, "typestr": code, "version": 3,
            "strides": None if strides is None else tuple(s * itemsize for s in strides)}

    def __del__(self):
        m = self._managed
        if m is not None and m.contents.deleter:
            m.contents.deleter(m)
        self._managed = None


def _array_from_capsule(capsule):
    """The host array of a consumed "dltensor" capsule, sharing its memory."""
    if not _api.PyCapsule_IsValid(id(capsule), _NAME):
        raise RuntimeError("from_dlpack received an invalid capsule. Note that DLTensor "
                           "capsules can be consumed only once, so you might have already "
                           "constructed a tensor from it once.")
    managed = ctypes.cast(_api.PyCapsule_GetPointer(id(capsule), _NAME),
                          ctypes.POINTER(_DLManagedTensor))
    t = managed.contents.dl_tensor
    if t.device.device_type not in (DLDeviceType.kDLCPU, DLDeviceType.kDLCUDAHost):
        raise BufferError("DLPack: only host (CPU) capsules can be read without their "
                          "library; pass the array itself (its __dlpack__) instead")
    dtype = _np_dtype(t.dtype.code, t.dtype.bits, t.dtype.lanes)
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else None
    data = (t.data or 0) + t.byte_offset
    _api.PyCapsule_SetName(id(capsule), _USED)  # consumed: its deleter is ours to call now
    holder = _Imported(managed, dtype, shape, strides, data)
    arr = np.asarray(holder) if data or not shape or 0 in shape else None  # host: CPU memory
    if arr is None:
        raise BufferError("DLPack: a null data pointer for a non-empty tensor")
    if arr.dtype != dtype:  # (the special types travel as raw bytes: their view)
        arr = arr.view(dtype)
    return arr


def _wrap(arr):
    from .._tensor import _make
    from .. import _dtype as D
    D.from_numpy_dtype(arr.dtype)  # (PyTorch's error for a dtype it has no tensor of)
    return _make(arr)


def from_dlpack(ext_tensor):
    """A tensor sharing the memory of `ext_tensor`: an object with `__dlpack__` (a NumPy,
    CuPy or JAX array, a PyTorch tensor) or a DLPack capsule (consumed: once only)."""
    from .._tensor import Tensor
    if isinstance(ext_tensor, Tensor):
        return ext_tensor.detach() if ext_tensor.requires_grad else ext_tensor
    if hasattr(ext_tensor, "__dlpack__"):
        device = ext_tensor.__dlpack_device__()
        dev_type = int(device[0])
        if dev_type in (DLDeviceType.kDLCUDA, DLDeviceType.kDLCUDAManaged,
                        DLDeviceType.kDLROCM):
            from .._backend import cuda_xp
            xp = cuda_xp()
            if not xp:
                raise BufferError(f"DLPack: a CUDA array ({device}) needs CuPy")
            return _wrap(xp.from_dlpack(ext_tensor))
        if dev_type not in (DLDeviceType.kDLCPU, DLDeviceType.kDLCUDAHost):
            raise BufferError(f"DLPack: unsupported device {device}")
        try:
            arr = np.from_dlpack(ext_tensor)  # host: a CPU capsule
        except (RuntimeError, BufferError, TypeError) as e:
            # NumPy knows no bfloat16/float8 (and older NumPy no bool): our reader does
            if "dtype" not in str(e).lower() and "unsupported" not in str(e).lower():
                raise
            arr = _array_from_capsule(ext_tensor.__dlpack__())
        return _wrap(arr)
    if type(ext_tensor).__name__ == "PyCapsule":
        return _wrap(_array_from_capsule(ext_tensor))
    # (PyTorch takes anything else for a capsule, and finds it invalid)
    raise RuntimeError("from_dlpack received an invalid capsule. Note that DLTensor capsules can "
                       "be consumed only once, so you might have already constructed a tensor "
                       "from it once.")


def to_dlpack(tensor):
    """A DLPack capsule of `tensor` (sharing its memory): the legacy export."""
    return tensor.__dlpack__()


def _export(t, stream=None, max_version=None, dl_device=None, copy=None):
    """Tensor.__dlpack__."""
    if t.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    data = t._data
    if copy:
        data = data.copy()
    if type(data) is np.ndarray:
        if dl_device is not None and int(dl_device[0]) != DLDeviceType.kDLCPU:
            raise BufferError(f"DLPack: cannot export a CPU tensor to device {dl_device}")
        if _native(data.dtype) and data.flags.writeable:
            kw = {} if max_version is None else {"max_version": max_version}
            try:
                return data.__dlpack__(**kw)
            except BufferError:
                pass
        return _capsule_of(data)   # (bfloat16/float8, read-only views: our capsule)
    given = dict(stream=stream, max_version=max_version, dl_device=dl_device)
    return data.__dlpack__(**{k: v for k, v in given.items() if v is not None})


def _device(t):
    """Tensor.__dlpack_device__."""
    dev = t.device
    if dev.type == "cuda":
        return DLDeviceType.kDLCUDA, dev.index or 0
    return DLDeviceType.kDLCPU, 0
