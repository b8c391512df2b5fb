"""torch.storage: UntypedStorage (a tensor's bytes), TypedStorage (its elements, deprecated in
PyTorch as here) and the legacy per-dtype classes (torch.FloatStorage, ...), which make typed
storages of their dtype and answer isinstance for any typed storage of it, as PyTorch's."""
from ._tensor import UntypedStorage, TypedStorage
from . import _dtype as D

__all__ = ["TypedStorage", "UntypedStorage"]


class _LegacyStorageMeta(type):
    def __instancecheck__(cls, obj):
        if type(obj) is TypedStorage or isinstance(obj, TypedStorage):
            return obj.dtype == cls._legacy_dtype
        return type.__instancecheck__(cls, obj)


def _legacy(name, dtype):
    return _LegacyStorageMeta(name, (TypedStorage,), {
        "_legacy_dtype": dtype, "dtype": dtype, "__module__": "torch",
        "__doc__": f"torch.{name}: typed storages of {dtype}."})


LEGACY = {dt: _legacy(name, dt) for name, dt in (
    ("FloatStorage", D.float32), ("DoubleStorage", D.float64), ("HalfStorage", D.float16),
    ("BFloat16Storage", D.bfloat16), ("LongStorage", D.int64), ("IntStorage", D.int32),
    ("ShortStorage", D.int16), ("CharStorage", D.int8), ("ByteStorage", D.uint8),
    ("BoolStorage", D.bool), ("ComplexFloatStorage", D.complex64),
    ("ComplexDoubleStorage", D.complex128))}
globals().update({cls.__name__: cls for cls in LEGACY.values()})


def storage_type(self):
    """Tensor.storage_type(): the legacy storage class of its dtype (torch.FloatStorage, ...)."""
    return LEGACY[self.dtype]


def _load_from_bytes(b):
    """A storage pickled by PyTorch (its bytes: torch.save's legacy stream of one storage)."""
    import io
    from .serialization import load
    from .serialization._rebuild import LoadedStorage
    from ._backend import numpy as np
    r = load(io.BytesIO(b), weights_only=False)
    if isinstance(r, LoadedStorage):
        from ._creation import tensor
        arr = r.array.byteswap() if r.swap else r.array
        from .serialization._rebuild import ndgrad_dtype
        arr = np.ascontiguousarray(arr)  # host: the unpickled storage's bytes
        t = tensor(arr).view(ndgrad_dtype(r.dtype)) \
            if r.dtype != arr.dtype.name and arr.dtype == np.uint8 else tensor(arr)
        return (TypedStorage if r.dtype != "uint8" or arr.dtype != np.uint8 else UntypedStorage)(
            r.relocate(t, r.location))
    return r
