"""ndgrad.save / ndgrad.load: checkpoints that cannot run code when loaded.

A checkpoint is a zip archive (like PyTorch's):

    archive/version        "ndgrad-1"
    archive/data.pkl       the object's structure, pickled with tensors replaced by references
    archive/data/<k>.npy   one array per storage (NumPy format, no pickled objects)

The pickle never holds a tensor's bytes or class: each Tensor, nn.Parameter, ndarray, dtype,
device and Size becomes a persistent reference ("tensor", key, kind, requires_grad, dtype, view,
index) that `load` resolves itself. With weights_only=True (the default, as in PyTorch >= 2.6)
the pure-Python unpickler resolves no global except an allow-list (OrderedDict, complex,
set/frozenset and anything given to add_safe_globals), applies BUILD only to allowed classes,
reads arrays with allow_pickle=False and bounds-checks every view, so a malicious file raises
pickle.UnpicklingError("Weights only load failed...") before anything executes.

Note [Shared memory]: a tensor saved twice (tied weights) comes back as one tensor; distinct
tensors over the same memory (x, x[1], x.t(), x.detach()) are saved as views of one stored
owner array and come back sharing memory, as in PyTorch. A view that no other saved tensor
shares is stored compactly (not its whole owner). Views do not share version counters after
loading.

    ndgrad.save(model.state_dict(), "model.pt")
    model.load_state_dict(ndgrad.load("model.pt"))
"""
from collections import OrderedDict
import contextlib
import io
import os
import pickle
import zipfile

import numpy as np

from ._tensor import Tensor, Size, _make
from ._backend import to_numpy, device as _device
from . import _dtype as D

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals"]

FORMAT_VERSION = "ndgrad-1"

UNSAFE_MESSAGE = (
    "Re-running `ndgrad.load` with `weights_only` set to `False` will likely succeed, but it can "
    "result in arbitrary code execution. Do it only if you got the file from a trusted source.")

_ALLOWED = {
    ("collections", "OrderedDict"): OrderedDict,
    ("builtins", "complex"): complex,
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("builtins", "slice"): slice,
    ("builtins", "range"): range,
    ("_codecs", "encode"): __import__("codecs").encode,   # bytes in protocol-2 pickles
}
_user_safe = {}


def _qualname(obj):
    return f"{obj.__module__}.{obj.__qualname__}"


def add_safe_globals(safe_globals):
    """Allow these classes/functions in weights_only loads (as torch's add_safe_globals)."""
    for g in safe_globals:
        if isinstance(g, tuple):
            g, name = g
            module, _, qual = name.rpartition(".")
            _user_safe[(module, qual)] = g
        else:
            _user_safe[(g.__module__, g.__qualname__)] = g


def get_safe_globals():
    return list(_user_safe.values())


def clear_safe_globals():
    _user_safe.clear()


@contextlib.contextmanager
def safe_globals(safe_globals):
    """Context manager: add_safe_globals for the duration of the block."""
    before = dict(_user_safe)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _user_safe.clear()
        _user_safe.update(before)


# ---------------------------------------------------------------- save

def _root(arr):
    """The ndarray that owns `arr`'s memory (the end of its .base chain)."""
    while isinstance(arr.base, np.ndarray):
        arr = arr.base
    return arr


def _simple_pid(obj):
    if isinstance(obj, D.dtype):
        return ("dtype", obj.name)
    if isinstance(obj, _device):
        return ("device", str(obj))
    if isinstance(obj, Size):
        return ("size", tuple(int(s) for s in obj))
    return None


class _Sink:
    def write(self, data):
        return len(data)


class _Collector(pickle.Pickler):
    """Pre-pass: find every tensor the object holds (to detect tensors sharing memory)."""

    def __init__(self, protocol):
        super().__init__(_Sink(), protocol)
        self.tensors = {}

    def persistent_id(self, obj):
        if isinstance(obj, Tensor):
            self.tensors[id(obj)] = obj
            return ("t", id(obj))
        if type(obj) is np.ndarray:
            return ("n", id(obj))
        return _simple_pid(obj)


class _Pickler(pickle.Pickler):
    def __init__(self, file, protocol, arrays, shared_roots):
        super().__init__(file, protocol)
        self._arrays = arrays          # key -> ndarray to write
        self._keys = {}                # id(tensor, array or shared root) -> key
        self._keep = []                # keep saved objects alive so ids stay unique
        self._shared = shared_roots    # id(root) of memory that several tensors view
        self._index = {}               # id(tensor) -> its number: one object, one pid

    def _array_key(self, obj, arr):
        key = self._keys.get(id(obj))
        if key is None:
            key = str(len(self._arrays))
            self._keys[id(obj)] = key
            self._arrays[key] = arr
            self._keep.append(obj)
        return key

    def persistent_id(self, obj):
        if isinstance(obj, Tensor):
            kind = "parameter" if type(obj).__name__ == "Parameter" else "tensor"
            arr = obj._data
            view = None
            root = _root(arr) if type(arr) is np.ndarray else None
            if root is not None and id(root) in self._shared and arr.dtype == root.dtype:
                # Note [Shared memory]: store the owner once; each tensor is a view of it
                key = self._array_key(root, root)
                offset = (arr.__array_interface__["data"][0]
                          - root.__array_interface__["data"][0])
                view = (int(offset), tuple(arr.shape), tuple(int(x) for x in arr.strides))
            else:
                key = self._array_key(obj, to_numpy(arr))
            n = self._index.setdefault(id(obj), len(self._index))
            return ("tensor", key, kind, bool(obj.requires_grad), obj.dtype.name, view, n)
        if type(obj) is np.ndarray and obj.dtype.kind not in "OV":
            return ("ndarray", self._array_key(obj, obj))
        return _simple_pid(obj)


def _shared_roots(obj, protocol):
    """ids of contiguous owner arrays that two or more saved tensors view."""
    collector = _Collector(protocol)
    collector.dump(obj)
    owners = {}
    for t in collector.tensors.values():
        if type(t._data) is np.ndarray:
            root = _root(t._data)
            owners.setdefault(id(root), (root, set()))[1].add(id(t))
    return {rid for rid, (root, users) in owners.items()
            if len(users) > 1 and (root.flags.c_contiguous or root.flags.f_contiguous)}


def _open(f, mode):
    if isinstance(f, (str, os.PathLike)):
        return open(f, mode), True
    return f, False


def save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save `obj` (tensors, state dicts, nested containers, numbers, strings) to a path or file.

        ndgrad.save({"model": model.state_dict(), "epoch": 3}, "ckpt.pt")
    """
    arrays = {}
    buf = io.BytesIO()
    protocol = max(int(pickle_protocol), 4)     # 4: bytes and sets without globals
    _Pickler(buf, protocol, arrays, _shared_roots(obj, protocol)).dump(obj)
    fh, close = _open(f, "wb")
    try:
        with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as zf:
            zf.writestr("archive/version", FORMAT_VERSION)
            zf.writestr("archive/data.pkl", buf.getvalue())
            for key, arr in arrays.items():
                with zf.open(f"archive/data/{key}.npy", "w", force_zip64=True) as out:
                    np.lib.format.write_array(out, np.asarray(arr), allow_pickle=False)
    finally:
        if close:
            fh.close()


# ---------------------------------------------------------------- load

def _wo_message(message):
    return (f"Weights only load failed. {UNSAFE_MESSAGE}\n\n\n{message}\n\nCheck the "
            "documentation of ndgrad.load (weights_only) to learn more about the types accepted "
            "by default: tensors, nn.Parameter, ndarrays, dtypes, Python containers and scalars, "
            "OrderedDict; add others with ndgrad.serialization.add_safe_globals.")


class _UnpicklerMixin:
    def __init__(self, file, weights_only, get_array, map_location):
        super().__init__(file)
        self._weights_only = weights_only
        self._get_array = get_array
        self._map_location = map_location
        self._cache = {}
        self._arrays = {}

    def _array(self, key):
        arr = self._arrays.get(key)
        if arr is None:
            arr = self._arrays[key] = self._get_array(key)
        return arr

    def find_class(self, module, name):
        if not self._weights_only:
            return super().find_class(module, name)
        found = _ALLOWED.get((module, name)) or _user_safe.get((module, name))
        if found is None:
            full = f"{module}.{name}"
            raise pickle.UnpicklingError(
                f"Unsupported global: GLOBAL {full} was not an allowed global by default. "
                f"Please use `ndgrad.serialization.add_safe_globals([{full}])` or the "
                f"`ndgrad.serialization.safe_globals([{full}])` context manager to allowlist "
                "this global if you trust this class/function.")
        return found

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and pid and isinstance(pid[0], str)):
            raise pickle.UnpicklingError(f"Unsupported persistent id: {pid!r}")
        tag = pid[0]
        if tag in ("tensor", "ndarray"):
            if pid in self._cache:
                return self._cache[pid]
            key = pid[1]
            if not isinstance(key, str) or not key.isdigit():
                raise pickle.UnpicklingError(f"Unsupported persistent id: {pid!r}")
            arr = self._array(key)
            if tag == "ndarray":
                out = arr
            else:
                if len(pid) != 7:
                    raise pickle.UnpicklingError(f"Unsupported persistent id: {pid!r}")
                _, _, kind, requires_grad, dtype_name, view, _ = pid
                if kind not in ("tensor", "parameter") or not isinstance(requires_grad, bool):
                    raise pickle.UnpicklingError(f"Unsupported persistent id: {pid!r}")
                dt = getattr(D, dtype_name, None) if isinstance(dtype_name, str) else None
                if not isinstance(dt, D.dtype) or arr.dtype != dt.np:
                    raise pickle.UnpicklingError(f"Unsupported tensor dtype: {dtype_name!r}")
                if view is not None:
                    arr = _checked_view(arr, view)
                out = _make(arr)
                out = self._relocate(out)
                if kind == "parameter":
                    from .nn import Parameter
                    out = Parameter(out, requires_grad=requires_grad)
                elif requires_grad:
                    out.requires_grad_(True)
            self._cache[pid] = out
            return out
        if tag == "dtype" and len(pid) == 2 and isinstance(getattr(D, str(pid[1]), None),
                                                           D.dtype):
            return getattr(D, pid[1])
        if tag == "device" and len(pid) == 2 and isinstance(pid[1], str):
            return _device(pid[1])
        if tag == "size" and len(pid) == 2 and isinstance(pid[1], tuple) and all(
                type(s) is int for s in pid[1]):
            return Size(pid[1])
        raise pickle.UnpicklingError(f"Unsupported persistent id: {pid!r}")

    def _relocate(self, t):
        loc = self._map_location
        if loc is None:
            return t
        if callable(loc) and not isinstance(loc, (str, _device)):
            out = loc(t, "cpu")
            return out if isinstance(out, Tensor) else t
        if isinstance(loc, dict):
            loc = loc.get("cpu", "cpu")
        dev = _device(loc) if not isinstance(loc, _device) else loc
        if dev.type != "cpu":
            return t.to(dev)
        return t


def _checked_view(root, view):
    """The view (byte offset, shape, byte strides) of `root`, after checking that it stays
    inside root's memory: a crafted file must not be able to read beyond it."""
    if not (isinstance(view, tuple) and len(view) == 3):
        raise pickle.UnpicklingError(f"Unsupported tensor view: {view!r}")
    offset, shape, strides = view
    ints = lambda xs: isinstance(xs, tuple) and all(type(x) is int for x in xs)  # noqa: E731
    item = root.itemsize
    if (type(offset) is not int or not ints(shape) or not ints(strides)
            or len(shape) != len(strides) or any(n < 0 for n in shape) or offset < 0
            or offset % item or any(x % item for x in strides)):
        raise pickle.UnpicklingError(f"Unsupported tensor view: {view!r}")
    if all(n > 0 for n in shape):
        lo = offset + sum(min(0, (n - 1) * x) for n, x in zip(shape, strides))
        hi = offset + sum(max(0, (n - 1) * x) for n, x in zip(shape, strides)) + item
        if lo < 0 or hi > root.nbytes:
            raise pickle.UnpicklingError(f"Tensor view {view!r} is out of bounds of its storage")
    elif offset > root.nbytes:
        raise pickle.UnpicklingError(f"Tensor view {view!r} is out of bounds of its storage")
    flat = root.reshape(-1, order="A")   # a view: root is contiguous
    return np.lib.stride_tricks.as_strided(flat[offset // item:] if offset < root.nbytes
                                           else flat[:0], shape=shape, strides=strides)


class _Unpickler(_UnpicklerMixin, pickle.Unpickler):
    """weights_only=False: the C unpickler, any global."""


class _SafeUnpickler(_UnpicklerMixin, pickle._Unpickler):
    """weights_only=True: the pure-Python unpickler, so that besides find_class (globals) the
    BUILD opcode (which sets attributes or calls __setstate__) can be restricted too: it is
    allowed only on instances of classes given to add_safe_globals."""

    dispatch = dict(pickle._Unpickler.dispatch)

    def _load_build(self):
        inst = self.stack[-2] if len(self.stack) >= 2 else None
        cls = type(inst)
        if not any(cls is g for g in _user_safe.values()):
            raise pickle.UnpicklingError(
                f"Unsupported operation: BUILD (setting the state of an object) on "
                f"{cls.__module__}.{cls.__qualname__}, which is not an allowed global.")
        pickle._Unpickler.load_build(self)

    dispatch[pickle.BUILD[0]] = _load_build


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None,
         **pickle_load_args):
    """Load an object saved with ndgrad.save. weights_only=True (default) refuses any global
    outside the allow-list, so loading cannot run code.

        state = ndgrad.load("model.pt")
    """
    if weights_only is None:
        weights_only = True
    fh, close = _open(f, "rb")
    try:
        data = fh.read()
    finally:
        if close:
            fh.close()
    bio = io.BytesIO(data)
    if zipfile.is_zipfile(bio):
        zf = zipfile.ZipFile(bio)
        names = set(zf.namelist())
        prefix = next((n[:-len("data.pkl")] for n in names if n.endswith("data.pkl")), None)
        if prefix is None:
            raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found")

        def get_array(key):
            name = f"{prefix}data/{key}.npy"
            if name not in names:
                raise pickle.UnpicklingError(f"checkpoint has no array {key}")
            with zf.open(name) as fa:
                return np.lib.format.read_array(io.BytesIO(fa.read()), allow_pickle=False)
        payload = zf.read(prefix + "data.pkl")
    else:
        def get_array(key):
            raise pickle.UnpicklingError("tensor reference in a file without tensor data")
        payload = data
    cls = _SafeUnpickler if weights_only else _Unpickler
    unpickler = cls(io.BytesIO(payload), weights_only, get_array, map_location)
    if not weights_only:
        return unpickler.load()
    try:
        return unpickler.load()
    except Exception as e:  # any failure under the restricted unpickler
        raise pickle.UnpicklingError(_wo_message(str(e))) from None
