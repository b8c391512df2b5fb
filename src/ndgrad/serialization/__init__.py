"""ndgrad.save / ndgrad.load: PyTorch's checkpoint format, loaded without running code.

`save` writes what `torch.save` writes, so PyTorch opens ndgrad's checkpoints and ndgrad opens
PyTorch's (see docs/checkpoints.md). The default is a zip archive of stored (uncompressed)
records, each record's data aligned to 64 bytes:

    <name>/data.pkl                the object, pickled (protocol 2) with each storage replaced
                                   by a persistent id
                                   ("storage", torch.FloatStorage, key, "cpu", numel)
    <name>/.format_version  "1"    <name>/.storage_alignment  "64"    <name>/byteorder  "little"
    <name>/data/<key>              one storage's raw bytes
    <name>/version  "3"            <name>/.data/serialization_id

Tensors pickle as `torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad,
OrderedDict())`, Parameters as `torch._utils._rebuild_parameter(tensor, requires_grad,
OrderedDict())`, dtypes as the global `torch.float32`, Size and device by their constructors.
`_use_new_zipfile_serialization=False` writes PyTorch's legacy stream instead (a magic number,
protocol version, system info, the object pickle, its storage keys, then each storage as an
int64 count and raw bytes). `load` reads both, and the zip archives of ndgrad before this
format ("ndgrad-1": `.npy` records and tagged persistent ids).

Note [Shared memory]: tensors that view one ndgrad array (x, x[1], x.t(), x.detach()) are saved
as views of one storage and come back sharing memory, as in PyTorch; a tensor saved twice comes
back as one tensor. A view that no other saved tensor shares is stored compactly.

Note [Safety]: weights_only=True (the default) unpickles with `_weights_only_unpickler`, which
admits exactly the globals PyTorch's weights_only unpickler admits, bounds the work per input
byte, and checks every storage and view against the bytes the file holds; refusals raise
pickle.UnpicklingError("Weights only load failed..."). A file that is not a well formed
checkpoint (empty, truncated, bit-flipped: zip CRCs are checked) raises an error that says the
checkpoint is corrupted or truncated, never the advice to load it unsafely.

Note [Atomic save]: saving to a path writes a temporary file in the same directory and renames
it over the target, so a failed save leaves the previous checkpoint intact.

    ndgrad.save(model.state_dict(), "model.pt")
    model.load_state_dict(ndgrad.load("model.pt"))
"""
from collections import OrderedDict
import contextlib
import io
import os
import pickle
import secrets
import struct
import sys
import zipfile
import zlib
from typing import Callable as _Callable, Optional as _Optional, Union as _Union

# the type of torch.load's map_location (PyTorch's alias, which libraries annotate with)
MAP_LOCATION = _Optional[_Union[_Callable, "device", str, dict]]
FILE_LIKE = _Union[str, os.PathLike, "io.IOBase"]

import numpy as np

from .._tensor import Tensor, Size, _make
from .._backend import to_numpy, device as _device
from .. import _dtype as D
from . import _weights_only_unpickler as W
from . import _rebuild as R
from ..sparse._coo import SparseTensor as _SparseTensor, _Layout
from ..sparse._compressed import SparseCompressedTensor as _SparseCompressedTensor
from ._weights_only_unpickler import (add_safe_globals, get_safe_globals, clear_safe_globals,
                                      safe_globals, TorchGlobal)

# torch._weights_only_unpickler is PyTorch's own module name (programs import it for its
# allow-list): it stays importable at the top level without a file there
sys.modules.setdefault(__name__.rpartition(".")[0] + "._weights_only_unpickler", W)

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals"]

DEFAULT_PROTOCOL = 2
MAGIC_NUMBER = 0x1950a86a20f9469cfc6c
PROTOCOL_VERSION = 1001
STORAGE_ALIGNMENT = 64
_ZIP_MAGIC = b"PK\x03\x04"
_NDGRAD_V1 = b"ndgrad-1"

UNSAFE_MESSAGE = (
    "Re-running `ndgrad.load` with `weights_only` set to `False` will likely succeed, but it can "
    "result in arbitrary code execution. Do it only if you got the file from a trusted source.")
DOCS_MESSAGE = (
    "\n\nCheck the documentation of ndgrad.load (docs/checkpoints.md) to learn more about types "
    "accepted by default with weights_only.")
ERR_CENTRAL_DIRECTORY = (
    "PytorchStreamReader failed reading zip archive: failed finding central directory. This is "
    "an internal miniz error. If you are seeing this error, there is a high likelihood that your "
    "checkpoint file is corrupted. This can happen if the checkpoint was not saved properly, was "
    "transferred incorrectly, or the file was modified after saving.")
ERR_MMAP_PATH = "f must be a file path in order to use the mmap argument"


class _Corrupt(Exception):
    """Internal: the bytes are not a well formed checkpoint."""


def _corrupt_message(what):
    return (f"{what}: the checkpoint is corrupted or truncated. This can happen if the "
            "checkpoint was not saved properly, was transferred incorrectly, or the file was "
            "modified after saving.")


# ---------------------------------------------------------------- save

_REBUILD_V2 = TorchGlobal("torch._utils", "_rebuild_tensor_v2")
_REBUILD_V3 = TorchGlobal("torch._utils", "_rebuild_tensor_v3")
_UNTYPED = TorchGlobal("torch.storage", "UntypedStorage")
_REBUILD_PARAMETER = TorchGlobal("torch._utils", "_rebuild_parameter")
_SIZE = TorchGlobal("torch", "Size")
_REBUILD_SPARSE = TorchGlobal("torch._utils", "_rebuild_sparse_tensor")
_GET_LAYOUT = TorchGlobal("torch.serialization", "_get_layout")
_DEVICE = TorchGlobal("torch", "device")
_REBUILD_FROM_TYPE = TorchGlobal("torch._tensor", "_rebuild_from_type_v2")
_REBUILD_NJT = TorchGlobal("torch.nested._internal.nested_tensor", "_rebuild_njt")
_NJT = TorchGlobal("torch.nested._internal.nested_tensor", "NestedTensor")


def _marker_call(*args, **kwargs):
    raise TypeError("a PyTorch global marker cannot be called")


TorchGlobal.__call__ = _marker_call   # save_reduce wants a callable; the marker is never called


def _root(arr):
    """The ndarray that owns `arr`'s memory (the end of its .base chain)."""
    while isinstance(arr.base, np.ndarray):
        arr = arr.base
    return arr


def _contiguous_strides(shape):
    """PyTorch's strides (in elements) of a contiguous tensor of this shape."""
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


class _SaveStorage:
    __slots__ = ("key", "array", "dtype", "location")

    def __init__(self, key, array, dtype, location):
        self.key, self.array, self.dtype, self.location = key, array, dtype, location


class _TensorRef:
    """A plain-tensor view of a Parameter's data: pickles as _rebuild_tensor_v2."""
    __slots__ = ("t",)

    def __init__(self, t):
        self.t = t


class _Collector(pickle.Pickler):
    """Pre-pass: every tensor the object holds (to find tensors that share memory)."""

    class _Sink:
        def write(self, data):
            return len(data)

    def __init__(self, protocol):
        super().__init__(self._Sink(), protocol)
        self.tensors = {}

    def persistent_id(self, obj):
        if isinstance(obj, Tensor):
            self.tensors[id(obj)] = obj
            return ("t", id(obj))
        if isinstance(obj, (D.dtype, _device, Size)):
            return ("m", id(obj))
        return None


def _shared_roots(obj):
    """ids of contiguous owner arrays that two or more saved tensors view."""
    collector = _Collector(4)
    collector.dump(obj)
    owners = {}
    for t in collector.tensors.values():
        if type(t._data) is np.ndarray:
            root = _root(t._data)
            owners.setdefault(id(root), (root, set()))[1].add(id(t))
    return {rid for rid, (root, users) in owners.items()
            if len(users) > 1 and (root.flags.c_contiguous or root.flags.f_contiguous)}


class _TorchPickler(pickle._Pickler):
    """The pure-Python pickler, writing PyTorch's globals for tensors, dtypes, Size and device
    without importing torch (`TorchGlobal` markers become GLOBAL opcodes)."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, protocol, shared_roots):
        super().__init__(file, protocol)
        self.storages = {}             # key -> _SaveStorage, in order
        self._by_root = {}             # id(shared root) -> _SaveStorage
        self._shared = shared_roots
        self._keep = []                # objects whose ids are memoized stay alive

    def _write_global(self, obj, module, name):
        self.write(pickle.GLOBAL + module.encode("utf-8") + b"\n" + name.encode("utf-8") + b"\n")
        self.memoize(obj)

    def save_marker(self, obj):
        self._write_global(obj, obj.module, obj.name)
    dispatch[TorchGlobal] = save_marker

    def save_dtype(self, obj):
        self._write_global(obj, "torch", obj.name)
    dispatch[D.dtype] = save_dtype

    def _new_storage(self, array, dtype, location):
        st = _SaveStorage(str(len(self.storages)), array, dtype, location)
        self.storages[st.key] = st
        return st

    def _storage_of(self, t):
        """(storage, offset, size, stride) in elements, as PyTorch pickles a tensor."""
        arr = t._data
        location = "cpu" if t.device.type == "cpu" else str(t.device)
        if type(arr) is np.ndarray:
            root = _root(arr)
            typed = root
            if root.dtype != arr.dtype and root.ndim == 1 and root.flags.c_contiguous and \
                    root.nbytes % arr.itemsize == 0:  # (bytes, as PyTorch's untyped storages load)
                typed = root.view(arr.dtype)
            if id(root) in self._shared and typed.dtype == arr.dtype:
                item = arr.itemsize
                offset = (arr.__array_interface__["data"][0]
                          - root.__array_interface__["data"][0])
                st = self._by_root.get(id(root))
                if offset % item == 0 and all(s >= 0 and s % item == 0 for s in arr.strides) \
                        and (st is None or st.dtype is t.dtype):
                    if st is None:
                        st = self._by_root[id(root)] = self._new_storage(
                            typed.reshape(-1, order="A"), t.dtype, location)
                        self._keep.append(root)
                    return (st, offset // item, tuple(arr.shape),
                            tuple(s // item for s in arr.strides))
        flat = np.ascontiguousarray(to_numpy(arr)).reshape(-1)
        st = self._new_storage(flat, t.dtype, location)
        return st, 0, tuple(arr.shape), _contiguous_strides(arr.shape)

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            if isinstance(obj, (_SparseTensor, _SparseCompressedTensor)):
                return self._sparse_reduce(obj)
            if obj.is_nested:
                return self._nested_reduce(obj)
            if type(obj).__name__ == "Parameter":
                ref = _TensorRef(obj)
                self._keep.append(ref)
                return (_REBUILD_PARAMETER, (ref, bool(obj.requires_grad), OrderedDict()))
            return self._tensor_reduce(obj)
        if type(obj) is _TensorRef:
            return self._tensor_reduce(obj.t, requires_grad=False)
        if type(obj) is Size:
            return (_SIZE, (tuple(int(s) for s in obj),))
        if type(obj) is _Layout:
            return (_GET_LAYOUT, (repr(obj),))
        if type(obj) is _device:
            return (_DEVICE, (obj.type,) if obj.index is None else (obj.type, obj.index))
        return NotImplemented

    def _nested_reduce(self, t):
        """As PyTorch's NestedTensor.__reduce_ex__: _rebuild_from_type_v2(_rebuild_njt,
        NestedTensor, (constructor kwargs,), state) (the jagged layout only, as PyTorch's)."""
        if t.layout.name != "jagged":
            raise pickle.PicklingError("cannot save a nested tensor of the strided layout")
        kwargs = t._constructor_kwargs()
        self._keep.append(kwargs)
        state = {"_ragged_idx": t._ragged_idx, "_values": t._values, "_offsets": t._offsets,
                 "_lengths": t._lengths, "_metadata_cache": {}}
        self._keep.append(state)
        return (_REBUILD_FROM_TYPE, (_REBUILD_NJT, _NJT, (kwargs,), state))

    def _sparse_reduce(self, t):
        """As PyTorch's Tensor.__reduce_ex__: _rebuild_sparse_tensor(layout, data)."""
        from .._tensor import _make
        if isinstance(t, _SparseTensor):
            data = (_make(t._idx), t._vals.detach(), Size(t._size), t.is_coalesced())
        else:
            data = (_make(t._cidx), _make(t._pidx), t._vals.detach(), Size(t._size))
        self._keep.append(data)
        return (_REBUILD_SPARSE, (t.layout, data))

    def _tensor_reduce(self, t, requires_grad=None):
        if t.dtype not in _STORAGE_NAMES and t.dtype._special not in (D._FLOAT8, D._UINT):
            raise pickle.PicklingError(f"cannot save a tensor of dtype {t.dtype}")
        storage, offset, size, stride = self._storage_of(t)
        rg = bool(t.requires_grad) if requires_grad is None else requires_grad
        if t.dtype not in _STORAGE_NAMES:
            # PyTorch's dtypes after the legacy storage classes (float8, uint16/32/64): an
            # UntypedStorage of bytes, the dtype given to _rebuild_tensor_v3
            return (_REBUILD_V3, (storage, offset, size, stride, rg, OrderedDict(), t.dtype))
        return (_REBUILD_V2, (storage, offset, size, stride, rg, OrderedDict()))

    def persistent_id(self, obj):
        if type(obj) is _SaveStorage:
            if obj.dtype not in _STORAGE_TYPES:  # (numel counts bytes)
                return ("storage", _UNTYPED, obj.key, obj.location, int(obj.array.nbytes))
            return ("storage", _STORAGE_TYPES[obj.dtype], obj.key, obj.location,
                    int(obj.array.size))
        return None


_STORAGE_NAMES = {getattr(D, name): storage for storage, name in W.STORAGE_DTYPES.items()
                  if isinstance(getattr(D, name, None), D.dtype)}
_STORAGE_TYPES = {dt: TorchGlobal("torch", storage) for dt, storage in _STORAGE_NAMES.items()}


def _pickle(obj, protocol):
    buf = io.BytesIO()
    pickler = _TorchPickler(buf, protocol, _shared_roots(obj))
    pickler.dump(obj)
    return buf.getvalue(), pickler


def _record_info(name, offset, size):
    """A stored ZipInfo whose local header pads the data to STORAGE_ALIGNMENT (PyTorch's "FB"
    extra field), given the record's header offset."""
    zinfo = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    zinfo.compress_type = zipfile.ZIP_STORED
    zinfo.create_system = 0
    zip64 = size * 1.05 > zipfile.ZIP64_LIMIT            # as zipfile decides
    start = offset + 30 + len(name.encode("utf-8")) + 4 + (20 if zip64 else 0)
    pad = -start % STORAGE_ALIGNMENT
    zinfo.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    return zinfo


def _as_bytes(arr):
    arr = np.ascontiguousarray(arr).reshape(-1)
    return memoryview(arr.view(np.uint8)) if arr.size else b""


def _write_zip(fh, prefix, data_pkl, storages, byteorder=True):
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as zf:
        def record(name, data):
            name = f"{prefix}/{name}"
            size = len(data)
            zf.writestr(_record_info(name, zf.fp.tell(), size), data)
        record("data.pkl", data_pkl)
        record(".format_version", b"1")
        record(".storage_alignment", str(STORAGE_ALIGNMENT).encode())
        if byteorder:
            record("byteorder", sys.byteorder.encode())
        for key, st in storages.items():
            record(f"data/{key}", _as_bytes(st.array))
        record("version", b"3\n")
        record(".data/serialization_id", str(secrets.randbits(128)).zfill(40).encode())


class _LegacyPickler(_TorchPickler):
    """Legacy storage ids carry a sixth field, the view metadata (None)."""

    def persistent_id(self, obj):
        pid = super().persistent_id(obj)
        return None if pid is None else pid + (None,)


def _write_legacy(fh, obj, protocol):
    buf = io.BytesIO()
    pickler = _LegacyPickler(buf, protocol, _shared_roots(obj))
    pickler.dump(obj)
    head = io.BytesIO()
    for x in (MAGIC_NUMBER, PROTOCOL_VERSION,
              {"protocol_version": PROTOCOL_VERSION, "little_endian": sys.byteorder == "little",
               "type_sizes": {"short": 2, "int": 4, "long": 4}}):
        pickle.dump(x, head, protocol=protocol)
    keys = sorted(pickler.storages, key=int)
    pickle.dump(keys, buf, protocol=protocol)
    fh.write(head.getvalue())
    fh.write(buf.getvalue())
    for key in keys:
        arr = pickler.storages[key].array
        fh.write(struct.pack("<q" if sys.byteorder == "little" else ">q", int(arr.size)))
        fh.write(_as_bytes(arr))


def _archive_name(f):
    if isinstance(f, (str, os.PathLike)):
        stem = os.path.splitext(os.path.basename(os.fspath(f)))[0]
        if stem and "/" not in stem:
            return stem
    return "archive"


@contextlib.contextmanager
def _atomic_open(path):
    """A new file next to `path`, renamed over it on success, removed on failure. Created with
    mode 0o666 (the umask applies, as for open()); an existing target's mode is kept."""
    path = os.path.realpath(os.fspath(path))
    directory, base = os.path.split(path)
    tmp = os.path.join(directory, f".{base}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        except FileNotFoundError:
            pass
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False):
    """Save `obj` (tensors, state dicts, optimizer states, nested containers) to a path or a
    file object, in PyTorch's format (torch.load opens it). Saving to a path is atomic.

        ndgrad.save({"model": model.state_dict(), "epoch": 3}, "ckpt.pt")
    """
    protocol = int(pickle_protocol)
    if not 2 <= protocol <= pickle.HIGHEST_PROTOCOL:
        raise ValueError(f"pickle_protocol must be between 2 and {pickle.HIGHEST_PROTOCOL}, got "
                         f"{pickle_protocol}")
    if _use_new_zipfile_serialization:
        data_pkl, pickler = _pickle(obj, protocol)

        def write(fh):
            _write_zip(fh, _archive_name(f), data_pkl, pickler.storages,
                       byteorder=not _disable_byteorder_record)
    else:
        def write(fh):
            _write_legacy(fh, obj, protocol)
    if isinstance(f, (str, os.PathLike)):
        with _atomic_open(f) as fh:
            write(fh)
        return
    if not hasattr(f, "write"):
        raise AttributeError(f"expected 'f' to be string, path, or a file-like object with a "
                             f"'write' attribute, got {type(f).__name__}")
    if _use_new_zipfile_serialization:
        seekable = getattr(f, "seekable", lambda: False)()
        if seekable:
            write(f)
        else:                           # zipfile needs to seek: build it in memory
            buf = io.BytesIO()
            write(buf)
            f.write(buf.getvalue())
    else:
        write(f)
    flush = getattr(f, "flush", None)
    if callable(flush):     # (PyTorch's writers flush a file object when done: skorch's
        flush()             # HfHubStorage uploads on flush)


# ---------------------------------------------------------------- load

def _wo_message(message):
    """PyTorch's wording around a weights_only refusal."""
    if "was not an allowed global by default" in message:
        return ("Weights only load failed. This file can still be loaded, to do so you have two "
                "options, \033[1mdo those steps only if you trust the source of the "
                f"checkpoint\033[0m. \n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with "
                "`weights_only=True` please check the recommended steps in the following error "
                "message.\n\tWeightsUnpickler error: " + message + DOCS_MESSAGE)
    updated = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
    if "is blocked" not in message:
        updated += ("Please file an issue with the following so that we can make "
                    "`weights_only=True` compatible with your use case: WeightsUnpickler "
                    "error: ")
    return updated + "\n\n" + message + DOCS_MESSAGE


class _FullUnpickler(pickle.Unpickler):
    """weights_only=False: the C unpickler, any global; PyTorch's names resolve to ndgrad's."""

    def __init__(self, file, persistent_load):
        super().__init__(file)
        self._pl = persistent_load

    def find_class(self, module, name):
        module, name = W.map_name(module, name)
        found = W.allowed_globals().get(f"{module}.{name}")
        if found is not None:
            return found
        return super().find_class(module, name)

    def persistent_load(self, pid):
        return self._pl(pid)


def _unpickle(payload, weights_only, persistent_load, what="data.pkl"):
    """Unpickle `payload` (bytes or a file positioned at a pickle)."""
    file = io.BytesIO(payload) if isinstance(payload, (bytes, bytearray)) else payload
    if not weights_only:
        try:
            return _FullUnpickler(file, persistent_load).load()
        except (EOFError, pickle.UnpicklingError, struct.error) as e:
            raise pickle.UnpicklingError(_corrupt_message(f"Failed to unpickle {what} "
                                                          f"({type(e).__name__}: {e})")) from None
    try:
        return W.Unpickler(file, persistent_load).load()
    except W.WeightsOnlyError as e:
        raise pickle.UnpicklingError(_wo_message(str(e))) from None
    except (RuntimeError, _Corrupt):
        raise
    except (EOFError, pickle.UnpicklingError, KeyError, IndexError, ValueError, TypeError,
            AttributeError, struct.error, UnicodeDecodeError, RecursionError, MemoryError,
            OverflowError) as e:
        detail = str(e) or "ran out of input"
        raise pickle.UnpicklingError(_corrupt_message(
            f"Failed to unpickle {what} ({type(e).__name__}: {detail})")) from None


class _Relocator:
    """map_location, applied to each loaded tensor with its saved location."""

    def __init__(self, map_location):
        self.loc = map_location

    def __call__(self, t, location):
        loc = self.loc
        if loc is None:
            if location.startswith("cuda"):
                from .._backend import cuda_available
                if not cuda_available():
                    raise RuntimeError(
                        "Attempting to deserialize object on a CUDA device but "
                        "torch.cuda.is_available() is False. If you are running on a CPU-only "
                        "machine, please use torch.load with map_location=torch.device('cpu') "
                        "to map your storages to the CPU.")
                return t.to(location)
            return t
        if callable(loc) and not isinstance(loc, (str, _device)):
            out = loc(t, location)
            return out if isinstance(out, Tensor) else t
        if isinstance(loc, dict):
            loc = loc.get(location, location)
        dev = loc if isinstance(loc, _device) else _device(loc)
        if dev.type != t.device.type or dev.type != "cpu":
            return t.to(dev)
        return t


class _ZipReader:
    """Records of a zip checkpoint, with PyTorch's errors; stored records can be memory-mapped."""

    def __init__(self, fh, path, mmap):
        try:
            self.zf = zipfile.ZipFile(fh)
            infos = self.zf.infolist()
        except (zipfile.BadZipFile, EOFError, ValueError, struct.error, OSError,
                NotImplementedError, OverflowError):
            raise RuntimeError(ERR_CENTRAL_DIRECTORY) from None
        self.fh, self.path, self.mmap = fh, path, mmap
        self.infos = {i.filename: i for i in infos}
        first = infos[0].filename if infos else ""
        self.prefix = first.split("/", 1)[0] + "/" if "/" in first else ""
        if self.prefix + "data.pkl" not in self.infos:
            alt = next((n for n in self.infos if n.endswith("/data.pkl")), None)
            if alt is None:
                raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not "
                                   "found")
            self.prefix = alt[:-len("data.pkl")]
        self.size = self._file_size()

    def _file_size(self):
        pos = self.fh.tell()
        end = self.fh.seek(0, 2)
        self.fh.seek(pos)
        return end

    def has(self, name):
        return self.prefix + name in self.infos

    def _info(self, name):
        info = self.infos.get(self.prefix + name)
        if info is None:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED) or (
                info.flag_bits & 0x1):
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: unsupported "
                               "compression or encryption")
        return info

    def _data_offset(self, info, name):
        fh = self.fh
        fh.seek(info.header_offset)          # zipfile makes it absolute
        head = fh.read(30)
        if len(head) != 30 or head[:4] != _ZIP_MAGIC:
            raise RuntimeError(_corrupt_message(f"PytorchStreamReader failed reading file {name}: "
                                                "bad local header"))
        nlen, elen = struct.unpack("<HH", head[26:30])
        off = fh.tell() + nlen + elen
        if off + info.compress_size > self.size:
            raise RuntimeError(_corrupt_message(f"PytorchStreamReader failed reading file {name}"))
        return off

    def read(self, name, limit=None):
        """The record's bytes (a bytearray), at most `limit` long, CRC checked."""
        info = self._info(name)
        size = info.file_size
        if limit is not None and size > limit:
            raise _Corrupt(f"record {name} holds {size} bytes, more than the {limit} expected")
        if info.compress_type == zipfile.ZIP_STORED:
            if info.compress_size != size:
                raise _Corrupt(f"record {name} has inconsistent sizes")
            off = self._data_offset(info, name)
            buf = bytearray(size)
            self.fh.seek(off)
            if self.fh.readinto(buf) != size:
                raise _Corrupt(f"record {name} is truncated")
        else:
            # deflate expands at most ~1032:1, so a larger claim is a lie (a zip bomb)
            if size > 1032 * info.compress_size + 1024:
                raise _Corrupt(f"record {name} claims {size} bytes from {info.compress_size}")
            try:
                with self.zf.open(info) as fr:
                    buf = bytearray(fr.read(size + 1))
            except (zipfile.BadZipFile, zlib.error, EOFError) as e:
                raise _Corrupt(f"record {name}: {e}") from None
            if len(buf) != size:
                raise _Corrupt(f"record {name} is truncated")
            return buf
        if zlib.crc32(buf) != info.CRC:
            raise _Corrupt(f"record {name} fails its CRC-32 check")
        return buf

    def array(self, name, np_dtype, count):
        """A flat array of `count` elements from a record, memory-mapped when asked."""
        nbytes = count * np.dtype(np_dtype).itemsize
        info = self._info(name)
        if info.file_size != nbytes:
            raise _Corrupt(f"record {name} holds {info.file_size} bytes, but its storage claims "
                           f"{count} elements ({nbytes} bytes)")
        if self.mmap and info.compress_type == zipfile.ZIP_STORED and count:
            off = self._data_offset(info, name)
            return np.memmap(self.path, dtype=np_dtype, mode="c", offset=off, shape=(count,))
        return np.frombuffer(self.read(name, limit=nbytes), dtype=np_dtype)


def _torch_storage_loader(reader, relocate, swap):
    """persistent_load for PyTorch's ("storage", type, key, location, numel[, view]) ids."""
    cache = {}

    def load_storage(pid):
        if not (type(pid) is tuple and len(pid) in (5, 6) and
                (pid[0] == "storage" or pid[0] == b"storage")):
            if type(pid) is tuple and pid:
                raise W.WeightsOnlyError("Only persistent_load of storage is allowed, but got "
                                         f"{type(pid[0])}")
            raise W.WeightsOnlyError("unsupported persistent id encountered")
        storage_type, key, location, numel = pid[1:5]
        if isinstance(key, bytes):
            key = key.decode("ascii")
        if isinstance(location, bytes):
            location = location.decode("ascii")
        if not (isinstance(storage_type, TorchGlobal) and storage_type.dtype is not None
                and type(key) is str and type(location) is str and type(numel) is int
                and numel >= 0 and len(key) < 64 and key.isascii() and "/" not in key):
            raise W.WeightsOnlyError(f"Unsupported storage id {pid!r}")
        if len(pid) == 6 and pid[5] is not None:
            raise W.WeightsOnlyError("storage views (legacy view metadata) are not supported")
        dtype_name = storage_type.dtype
        hit = cache.get(key)
        if hit is not None:
            if hit.dtype != dtype_name or hit.array.size != numel:
                raise W.WeightsOnlyError(f"storage {key} is used with two dtypes or sizes")
            return hit
        np_dtype = R.ndgrad_dtype(dtype_name).np
        arr = reader(key, np_dtype, numel)
        st = cache[key] = R.LoadedStorage(arr, dtype_name, location, relocate, swap)
        return st
    return load_storage


# ---- ndgrad's earlier zip format ("ndgrad-1")

def _v1_read_npy(reader, key):
    name = f"data/{key}.npy"
    if not reader.has(name):
        raise _Corrupt(f"checkpoint has no array {key}")
    buf = reader.read(name)
    bio = io.BytesIO(buf)
    try:
        version = np.lib.format.read_magic(bio)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(bio)
        else:
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(bio)
    except ValueError as e:
        raise _Corrupt(f"array {key}: {e}") from None
    if dtype.hasobject or dtype.kind == "V":
        raise W.WeightsOnlyError(f"array {key} holds Python objects")
    count = 1
    for n in shape:
        count *= n
    start = bio.tell()
    if len(buf) - start != count * dtype.itemsize:
        raise _Corrupt(f"array {key} holds {len(buf) - start} bytes for {count} elements")
    flat = np.frombuffer(buf, dtype=dtype, count=count, offset=start)
    return flat.reshape(shape, order="F" if fortran else "C")


def _v1_checked_view(root, view):
    if not (isinstance(view, tuple) and len(view) == 3):
        raise W.WeightsOnlyError(f"Unsupported tensor view: {view!r}")
    offset, shape, strides = view
    ints = lambda xs: isinstance(xs, tuple) and all(type(x) is int for x in xs)  # noqa: E731
    item = root.itemsize
    if (type(offset) is not int or not ints(shape) or not ints(strides)
            or len(shape) != len(strides) or any(n < 0 for n in shape) or offset < 0
            or offset % item or any(x % item for x in strides)):
        raise W.WeightsOnlyError(f"Unsupported tensor view: {view!r}")
    if all(n > 0 for n in shape):
        lo = offset + sum(min(0, (n - 1) * x) for n, x in zip(shape, strides))
        hi = offset + sum(max(0, (n - 1) * x) for n, x in zip(shape, strides)) + item
        if lo < 0 or hi > root.nbytes:
            raise W.WeightsOnlyError(f"Tensor view {view!r} is out of bounds of its storage")
    elif offset > root.nbytes:
        raise W.WeightsOnlyError(f"Tensor view {view!r} is out of bounds of its storage")
    flat = root.reshape(-1, order="A")
    return D.as_strided(np, flat[offset // item:] if offset < root.nbytes else flat[:0],
                        shape, strides)


def _v1_loader(reader, relocate):
    """persistent_load for ndgrad-1 ids: ("tensor", key, kind, requires_grad, dtype, view, n),
    ("ndarray", key), ("dtype", name), ("device", str), ("size", tuple)."""
    cache, arrays = {}, {}

    def load(pid):
        if not (type(pid) is tuple and pid and isinstance(pid[0], str)):
            raise W.WeightsOnlyError(f"Unsupported persistent id: {pid!r}")
        tag = pid[0]
        if tag in ("tensor", "ndarray"):
            if pid in cache:
                return cache[pid]
            key = pid[1] if len(pid) > 1 else None
            if not isinstance(key, str) or not key.isdigit() or len(key) > 20:
                raise W.WeightsOnlyError(f"Unsupported persistent id: {pid!r}")
            if key not in arrays:
                arr = _v1_read_npy(reader, key)
                arrays[key] = arr if arr.flags.writeable else arr.copy()
            arr = arrays[key]
            if tag == "ndarray":
                out = arr
            else:
                if len(pid) != 7:
                    raise W.WeightsOnlyError(f"Unsupported persistent id: {pid!r}")
                _, _, kind, requires_grad, dtype_name, view, _ = pid
                if kind not in ("tensor", "parameter") or not isinstance(requires_grad, bool):
                    raise W.WeightsOnlyError(f"Unsupported persistent id: {pid!r}")
                dt = getattr(D, dtype_name, None) if isinstance(dtype_name, str) else None
                if not isinstance(dt, D.dtype) or arr.dtype != dt.np:
                    raise W.WeightsOnlyError(f"Unsupported tensor dtype: {dtype_name!r}")
                if view is not None:
                    arr = _v1_checked_view(arr, view)
                out = relocate(_make(arr), "cpu")
                if kind == "parameter":
                    from ..nn import Parameter
                    out = Parameter(out, requires_grad=requires_grad)
                elif requires_grad:
                    out.requires_grad_(True)
            cache[pid] = out
            return out
        if tag == "dtype" and len(pid) == 2 and isinstance(getattr(D, str(pid[1]), None),
                                                           D.dtype):
            return getattr(D, pid[1])
        if tag == "device" and len(pid) == 2 and isinstance(pid[1], str) and len(pid[1]) < 64:
            return _device(pid[1])
        if tag == "size" and len(pid) == 2 and isinstance(pid[1], tuple) and all(
                type(s) is int for s in pid[1]):
            return Size(pid[1])
        raise W.WeightsOnlyError(f"Unsupported persistent id: {pid!r}")
    return load


# ---- the legacy (non-zip) stream

def _load_legacy(fh, weights_only, relocate, total):
    """PyTorch's stream before the zip format: the storages follow the pickles, each an int64
    element count and raw bytes."""
    try:
        magic = _unpickle(fh, weights_only, _no_persistent, "the file")
    except pickle.UnpicklingError as e:
        if "Weights only load failed" in str(e):
            raise
        raise pickle.UnpicklingError(_corrupt_message(
            "The file is neither a zip checkpoint nor a legacy PyTorch stream")) from None
    if magic != MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    version = _unpickle(fh, weights_only, _no_persistent, "the file")
    if version != PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {version}")
    sys_info = _unpickle(fh, weights_only, _no_persistent, "the file")
    little = sys_info.get("little_endian", True) if isinstance(sys_info, dict) else True
    swap = bool(little) != (sys.byteorder == "little")
    pending = {}                                   # key -> (np dtype, numel, [storages])

    def reader(key, np_dtype, numel):
        if numel * np.dtype(np_dtype).itemsize > total:
            raise _Corrupt(f"storage {key} claims {numel} elements, more than the file holds")
        arr = np.empty(numel, dtype=np_dtype)
        pending[key] = arr
        return arr
    R._deferred.stack.append([])
    try:
        result = _unpickle(fh, weights_only, _torch_storage_loader(reader, relocate, False),
                           "the object")
    finally:
        sparse = R._deferred.stack.pop()
    keys = _unpickle(fh, weights_only, _no_persistent, "the storage keys")
    if type(keys) is not list or set(keys) != set(pending):
        raise _Corrupt("the storage keys do not match the storages")
    for key in keys:
        arr = pending[key]
        head = fh.read(8)
        if len(head) != 8:
            raise _Corrupt(f"storage {key} is truncated")
        (count,) = struct.unpack("<q" if little else ">q", head)
        if count != arr.size:
            raise _Corrupt(f"storage {key} holds {count} elements, its tensors expect {arr.size}")
        raw = arr.view(np.uint8)
        if fh.readinto(raw) != raw.size:
            raise _Corrupt(f"storage {key} is truncated")
    if swap:
        for arr in pending.values():
            arr.byteswap(inplace=True)
        # the tensors were built before the bytes arrived: LoadedStorage.swap stayed False
    for t in sparse:
        R.validate_sparse(t)
    return result


def _no_persistent(pid):
    raise W.WeightsOnlyError("unsupported persistent id encountered")


def _load_zip(reader, weights_only, relocate):
    if reader.has("version") and bytes(reader.read("version", limit=64)).strip() == _NDGRAD_V1:
        payload = reader.read("data.pkl")
        return _unpickle(bytes(payload), weights_only, _v1_loader(reader, relocate))
    swap = False
    if reader.has("byteorder"):
        order = bytes(reader.read("byteorder", limit=16)).decode("ascii", "replace")
        if order not in ("little", "big"):
            raise _Corrupt(f"unknown byte order {order!r}")
        swap = order != sys.byteorder

    def array(key, np_dtype, numel):
        return reader.array(f"data/{key}", np_dtype, numel)
    payload = reader.read("data.pkl")
    return _unpickle(bytes(payload), weights_only, _torch_storage_loader(array, relocate, swap))


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Load a checkpoint written by ndgrad.save or torch.save (zip or legacy format).
    weights_only=True (the default) admits only PyTorch's safe globals, so loading cannot run
    code; mmap=True maps the tensors' bytes from the file instead of reading them.

        state = ndgrad.load("model.pt", map_location="cpu")
    """
    if weights_only is None:
        weights_only = True
    relocate = _Relocator(map_location)
    is_path = isinstance(f, (str, os.PathLike))
    if mmap and not is_path:
        raise ValueError(ERR_MMAP_PATH)
    with contextlib.ExitStack() as stack:
        if is_path:
            fh = stack.enter_context(open(f, "rb"))
        else:
            fh = f
            if not (hasattr(fh, "seek") and getattr(fh, "seekable", lambda: True)()):
                fh = io.BytesIO(fh.read())
        start = fh.tell()
        magic = fh.read(4)
        fh.seek(start)
        try:
            if magic == _ZIP_MAGIC:
                if start:                  # zipfile reads offsets from the file's start
                    fh = io.BytesIO(fh.read())
                reader = _ZipReader(fh, os.fspath(f) if is_path else None, bool(mmap))
                return _load_zip(reader, weights_only, relocate)
            if mmap:
                raise RuntimeError(
                    f"mmap can only be used with files saved with `torch.save({f}, "
                    "_use_new_zipfile_serialization=True), please torch.save your checkpoint "
                    "with this option in order to use mmap.")
            if not magic:
                raise EOFError(_corrupt_message("Ran out of input: the checkpoint file is empty"))
            total = fh.seek(0, 2) - start
            fh.seek(start)
            return _load_legacy(fh, weights_only, relocate, total)
        except _Corrupt as e:
            raise RuntimeError(_corrupt_message(f"PytorchStreamReader: {e}")) from None
