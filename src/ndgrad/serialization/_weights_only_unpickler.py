"""The restricted unpickler behind `ndgrad.load(weights_only=True)` (torch/_weights_only_unpickler).

A checkpoint's pickle may name only the globals PyTorch's weights_only unpickler admits (spelled
as PyTorch spells them, `torch._utils._rebuild_tensor_v2`, `torch.FloatStorage`, `torch.float32`,
`collections.OrderedDict`, ...; each resolves to ndgrad's counterpart) plus what the user
allow-lists with `add_safe_globals` / `safe_globals`. Modules `sys`, `os`, `posix` and `nt` are
refused even when allow-listed. The messages are PyTorch's.

Besides the globals, the opcodes that act on objects are restricted as in PyTorch: REDUCE and
NEWOBJ only on admitted callables, BUILD only on OrderedDict and allow-listed classes, APPEND only
on lists, SETITEM only on dicts, INST/OBJ/EXT never.

Bounded work per input byte. Every opcode does work proportional to the bytes that produced its
operands, so a small file cannot make `load` loop or allocate without bound:
- an admitted callable runs only on arguments of the shapes PyTorch writes: `bytearray` and `set`
  take a sequence (never a count: `bytearray(10**12)` is refused), `_codecs.encode` only the
  text codecs, `torch.Tensor` no sizes;
- dict keys and set members must be cheap and collision-free to hash: str, bytes, bool, None,
  int with |i| < 2**60, or a tuple of at most 32 of these (so neither a tuple DAG whose hash is
  exponential in its size nor a flood of colliding ints can be built);
- tensor views are bounds-checked against their storage, storages against their data record.
Errors of this kind raise `WeightsOnlyError` (an UnpicklingError); anything else that goes wrong
while unpickling means the bytes are not a valid pickle, and `load` reports a corrupted file.
"""
import _compat_pickle
import codecs
from collections import Counter, OrderedDict
import pickle

__all__ = ["WeightsOnlyError", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals", "Unpickler"]

_BLOCKED_MODULES = ("sys", "os", "posix", "nt")


class WeightsOnlyError(pickle.UnpicklingError):
    """A global or operation the weights_only unpickler refuses (the file may be well formed)."""


# ---------------------------------------------------------------- user allow-list

_marked_safe = set()


def add_safe_globals(safe_globals):
    """Mark globals (classes or functions, or `(obj, "module.qualname")` pairs) as safe for
    weights_only loads, as torch.serialization.add_safe_globals.

        ndgrad.serialization.add_safe_globals([MyConfig])
    """
    global _marked_safe
    _marked_safe = _marked_safe.union(set(safe_globals))


def get_safe_globals():
    """The globals added with add_safe_globals, as a list."""
    return list(_marked_safe)


def clear_safe_globals():
    """Forget every global added with add_safe_globals."""
    global _marked_safe
    _marked_safe = set()


def _remove_safe_globals(globals_to_remove):
    global _marked_safe
    _marked_safe = _marked_safe - set(globals_to_remove)


class safe_globals:
    """Context manager: `with safe_globals([MyConfig]): ndgrad.load(path)`."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, type, value, tb):
        _remove_safe_globals(self.safe_globals)


def _user_allowed_globals():
    rc = {}
    for f in _marked_safe:
        if isinstance(f, tuple):
            if len(f) != 2:
                raise ValueError("Expected tuple of length 2 (global, str of callable full path), "
                                 f"but got tuple of length: {len(f)}")
            if type(f[1]) is not str:
                raise TypeError("Expected second item in tuple to be str of callable full path, "
                                f"but got: {type(f[1])}")
            f, name = f
            rc[name] = f
        else:
            rc[f"{f.__module__}.{f.__qualname__}"] = f
    return rc


# ---------------------------------------------------------------- PyTorch's admitted globals

class TorchGlobal:
    """A PyTorch global that has no ndgrad object of its own (a storage or legacy tensor class,
    a dtype or quantization scheme ndgrad lacks): it unpickles as this marker, and `save`
    pickles a marker as the GLOBAL opcode `module name`."""
    __slots__ = ("module", "name", "dtype")

    def __init__(self, module, name, dtype=None):
        self.module, self.name, self.dtype = module, name, dtype

    def __repr__(self):
        return f"{self.module}.{self.name}"

    def __reduce__(self):           # never pickled by value
        raise pickle.PicklingError(f"cannot pickle the marker {self!r}")


# storage class -> the dtype name of its elements (torch.storage._dtype_to_storage_type_map)
STORAGE_DTYPES = {
    "DoubleStorage": "float64", "FloatStorage": "float32", "HalfStorage": "float16",
    "LongStorage": "int64", "IntStorage": "int32", "ShortStorage": "int16", "CharStorage": "int8",
    "ByteStorage": "uint8", "BoolStorage": "bool", "BFloat16Storage": "bfloat16",
    "ComplexDoubleStorage": "complex128", "ComplexFloatStorage": "complex64",
    "QInt8Storage": "qint8", "QInt32Storage": "qint32", "QUInt8Storage": "quint8",
    "QUInt4x2Storage": "quint4x2", "QUInt2x4Storage": "quint2x4"}
_TENSOR_CLASSES = ("BFloat16Tensor", "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor",
                   "FloatTensor", "HalfTensor", "IntTensor", "LongTensor", "ShortTensor")
_DTYPE_NAMES = (
    "bfloat16 bits16 bits1x8 bits2x4 bits4x2 bits8 bool complex128 complex32 complex64 float16 "
    "float32 float4_e2m1fn_x2 float64 float8_e4m3fn float8_e4m3fnuz float8_e5m2 float8_e5m2fnuz "
    "float8_e8m0fnu int1 int16 int2 int3 int32 int4 int5 int6 int64 int7 int8 qint32 qint8 "
    "quint2x4 quint4x2 quint8 uint1 uint16 uint2 uint3 uint32 uint4 uint5 uint6 uint64 uint7 "
    "uint8").split()
_QSCHEMES = ("per_tensor_affine", "per_tensor_symmetric", "per_channel_affine",
             "per_channel_symmetric", "per_channel_affine_float_qparams")
REBUILD_FUNCTIONS = (
    "_rebuild_parameter", "_rebuild_parameter_with_state", "_rebuild_qtensor", "_rebuild_tensor",
    "_rebuild_tensor_v2", "_rebuild_tensor_v3", "_rebuild_sparse_tensor",
    "_rebuild_meta_tensor_no_storage", "_rebuild_nested_tensor", "_rebuild_wrapper_subclass",
    "_rebuild_device_tensor_from_numpy", "_rebuild_device_tensor_from_cpu_tensor")

_allowed = None


def allowed_globals():
    """{"module.name": object} for every global PyTorch's weights_only unpickler admits."""
    global _allowed
    if _allowed is not None:
        return _allowed
    from .. import _dtype as D
    from .._tensor import Tensor, Size
    from .._backend import device
    from ..nn import Parameter
    from . import _rebuild as R
    rc = {
        "collections.OrderedDict": OrderedDict, "collections.Counter": Counter,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.serialization._get_layout": R._get_layout,
        "torch.Size": Size, "torch.Tensor": Tensor, "torch.device": device,
        "_codecs.encode": codecs.encode, "builtins.bytearray": bytearray,
        "builtins.set": set, "builtins.complex": complex,
    }
    for name in _DTYPE_NAMES:
        dt = getattr(D, name, None)
        rc[f"torch.{name}"] = dt if isinstance(dt, D.dtype) else TorchGlobal("torch", name)
    for prefix in ("torch", "torch.cuda"):
        for name in _TENSOR_CLASSES:
            rc[f"{prefix}.{name}"] = TorchGlobal(prefix, name)
        for name, dt in STORAGE_DTYPES.items():
            if prefix == "torch" or not name.startswith("Q"):
                rc[f"{prefix}.{name}"] = TorchGlobal(prefix, name, dt)
    for prefix in ("torch.sparse", "torch.cuda.sparse"):
        for name in _TENSOR_CLASSES:
            if name != "BoolTensor":
                rc[f"{prefix}.{name}"] = TorchGlobal(prefix, name)
    rc["torch.storage.UntypedStorage"] = TorchGlobal("torch.storage", "UntypedStorage", "uint8")
    rc["torch.storage.TypedStorage"] = TorchGlobal("torch.storage", "TypedStorage")
    for name in _QSCHEMES:
        rc[f"torch.{name}"] = TorchGlobal("torch", name)
    for name in REBUILD_FUNCTIONS:
        rc[f"torch._utils.{name}"] = getattr(R, name)
    rc["torch._tensor._rebuild_from_type_v2"] = R._rebuild_from_type_v2
    # jagged nested tensors (PyTorch admits them once torch.nested is imported)
    rc["torch.nested._internal.nested_tensor._rebuild_njt"] = R._rebuild_njt
    rc["torch.nested._internal.nested_tensor.NestedTensor"] = R._njt_class()
    rc["torch._dynamo.decorators._DimRange"] = R._DimRange
    _allowed = rc
    return rc


def map_name(module, name):
    """Python 2 names to Python 3 ones, as pickle (and PyTorch's unpickler) do."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def resolve_global(module, name):
    """The object a weights_only load gives GLOBAL `module name`, or WeightsOnlyError with
    PyTorch's message."""
    module, name = map_name(module, name)
    full_path = f"{module}.{name}"
    if module in _BLOCKED_MODULES:
        raise WeightsOnlyError(f"Trying to load unsupported GLOBAL {full_path} whose module "
                               f"{module} is blocked.")
    allowed = allowed_globals()
    if full_path in allowed:
        return allowed[full_path]
    user = _user_allowed_globals()
    if full_path in user:
        return user[full_path]
    if full_path.startswith("builtins"):
        rest = full_path[len("builtins"):]
        full_path = rest[1:] if rest.startswith(".") else "builtins" + rest
    raise WeightsOnlyError(
        f"Unsupported global: GLOBAL {full_path} was not an allowed global by default. Please use "
        f"`torch.serialization.add_safe_globals([{full_path}])` or the "
        f"`torch.serialization.safe_globals([{full_path}])` context manager to allowlist this "
        "global if you trust this class/function.")


# ---------------------------------------------------------------- bounded calls

_MAX_KEY_TUPLE = 32
_INT_KEY_LIMIT = 1 << 60
_TEXT_CODECS = ("latin1", "latin-1", "latin_1", "iso-8859-1", "iso8859-1", "utf-8", "utf8",
                "ascii")


def _scalar_key(k):
    t = type(k)
    return (t is str or t is bytes or t is bool or k is None
            or (t is int and -_INT_KEY_LIMIT < k < _INT_KEY_LIMIT))


def check_key(k):
    """Refuse a dict key / set member whose hashing could cost more than its bytes."""
    if _scalar_key(k) or (type(k) is tuple and len(k) <= _MAX_KEY_TUPLE
                          and all(_scalar_key(x) for x in k)):
        return k
    from ._rebuild import _DimRange
    if type(k) is _DimRange:   # (three ints at most: a nested tensor's dynamic dims)
        return k
    raise WeightsOnlyError(
        f"Unsupported dict key or set member of type {type(k).__name__}: weights_only loads "
        "accept str, bytes, bool, None, int (|i| < 2**60) and tuples of at most "
        f"{_MAX_KEY_TUPLE} of these")


def _seq(arg, what):
    if type(arg) not in (list, tuple, set, bytes, bytearray, str):
        raise WeightsOnlyError(f"Unsupported argument to {what}: {type(arg).__name__}")
    return arg


def _call_set(*args):
    if not args:
        return set()
    if len(args) != 1:
        raise WeightsOnlyError("Unsupported call of builtins.set")
    return {check_key(x) for x in _seq(args[0], "builtins.set")}


def _call_bytearray(*args):
    if not args:
        return bytearray()
    if len(args) == 1 and type(args[0]) in (bytes, bytearray):
        return bytearray(args[0])
    if len(args) == 1 and type(args[0]) is list and all(type(x) is int for x in args[0]):
        return bytearray(args[0])
    if len(args) == 2 and type(args[0]) is str and args[1] in _TEXT_CODECS:
        return bytearray(args[0], args[1])
    raise WeightsOnlyError("Unsupported call of builtins.bytearray (it takes a sequence of "
                           "bytes, not a size, in a weights_only load)")


def _call_encode(obj, encoding="utf-8", errors="strict"):
    if type(obj) is not str or encoding not in _TEXT_CODECS or errors not in ("strict",
                                                                              "surrogatepass"):
        raise WeightsOnlyError("Unsupported call of _codecs.encode: only text codecs on a str")
    return codecs.encode(obj, encoding, errors)


def _call_complex(*args):
    if len(args) > 2 or not all(type(a) in (int, float) for a in args):
        raise WeightsOnlyError("Unsupported call of builtins.complex")
    return complex(*args)


def _pairs_or_mapping(args, what):
    if len(args) > 1:
        raise WeightsOnlyError(f"Unsupported call of {what}")
    if not args:
        return ()
    arg = args[0]
    if type(arg) in (dict, OrderedDict):
        return list(arg.items())
    if type(arg) in (list, tuple):
        out = []
        for p in arg:
            if type(p) not in (list, tuple) or len(p) != 2:
                raise WeightsOnlyError(f"Unsupported call of {what}")
            out.append((check_key(p[0]), p[1]))
        return out
    raise WeightsOnlyError(f"Unsupported call of {what}")


def _call_ordered_dict(*args):
    return OrderedDict(_pairs_or_mapping(args, "collections.OrderedDict"))


def _call_counter(*args):
    if len(args) == 1 and type(args[0]) in (list, tuple, str):
        return Counter(check_key(x) for x in args[0])
    return Counter(dict(_pairs_or_mapping(args, "collections.Counter")))


def _call_size(*args):
    from .._tensor import Size
    if not args:
        return Size(())
    if len(args) != 1 or type(args[0]) not in (list, tuple) or not all(
            type(s) is int for s in args[0]):
        raise WeightsOnlyError("Unsupported call of torch.Size")
    return Size(args[0])


def _call_device(*args):
    from .._backend import device
    if not (1 <= len(args) <= 2 and type(args[0]) is str and len(args[0]) < 64
            and (len(args) == 1 or args[1] is None or type(args[1]) is int)):
        raise WeightsOnlyError("Unsupported call of torch.device")
    return device(*args)


def _call_parameter(data=None, requires_grad=True):
    from .._tensor import Tensor
    from ..nn import Parameter
    if not (data is None or isinstance(data, Tensor)) or type(requires_grad) is not bool:
        raise WeightsOnlyError("Unsupported call of torch.nn.parameter.Parameter")
    return Parameter(data, requires_grad)


def _call_tensor(*args):
    from .._tensor import Tensor
    if args:
        raise WeightsOnlyError("Unsupported call of torch.Tensor: it takes no sizes in a "
                               "weights_only load")
    return Tensor(0)


def _safe_calls():
    allowed = allowed_globals()
    calls = {id(allowed["builtins.set"]): _call_set,
             id(allowed["builtins.bytearray"]): _call_bytearray,
             id(allowed["_codecs.encode"]): _call_encode,
             id(allowed["builtins.complex"]): _call_complex,
             id(allowed["collections.OrderedDict"]): _call_ordered_dict,
             id(allowed["collections.Counter"]): _call_counter,
             id(allowed["torch.Size"]): _call_size,
             id(allowed["torch.device"]): _call_device,
             id(allowed["torch.nn.parameter.Parameter"]): _call_parameter,
             id(allowed["torch.Tensor"]): _call_tensor}
    for name in REBUILD_FUNCTIONS:
        f = allowed[f"torch._utils.{name}"]
        calls[id(f)] = f
    f = allowed["torch._tensor._rebuild_from_type_v2"]
    calls[id(f)] = f
    calls[id(allowed["torch.serialization._get_layout"])] = _call_get_layout
    return calls


def _call_get_layout(*args):
    if len(args) != 1 or type(args[0]) is not str:
        raise WeightsOnlyError("Unsupported arguments to torch.serialization._get_layout")
    from ._rebuild import _get_layout
    return _get_layout(args[0])


# ---------------------------------------------------------------- the unpickler

_Base = pickle._Unpickler     # the pure-Python unpickler: its opcodes can be replaced one by one


class Unpickler(_Base):
    """Unpickler(file, persistent_load): pickle's pure-Python unpickler with every opcode that
    builds or mutates objects restricted as PyTorch's weights_only unpickler does."""

    dispatch = dict(_Base.dispatch)

    def __init__(self, file, persistent_load):
        super().__init__(file, encoding="bytes")
        readline = self._file_readline

        def checked_readline():          # a text opcode's line cut short: a truncated pickle
            line = readline()
            if not line.endswith(b"\n"):
                raise pickle.UnpicklingError("pickle data was truncated")
            return line
        self._file_readline = checked_readline
        self._persistent_load = persistent_load
        self._calls = _safe_calls()
        self._user = _user_allowed_globals()
        self._user_values = {id(v) for v in self._user.values()}

    def find_class(self, module, name):
        return resolve_global(module, name)

    def persistent_load(self, pid):
        if type(pid) is not tuple and type(pid) is not int:
            raise WeightsOnlyError(f"persistent_load id must be tuple or int, but got {type(pid)}")
        return self._persistent_load(pid)

    # REDUCE / NEWOBJ: only admitted callables, on bounded arguments
    def _call(self, func, args):
        if type(args) is not tuple:
            raise pickle.UnpicklingError("REDUCE argument is not a tuple")
        safe = self._calls.get(id(func))
        if safe is not None:
            return safe(*args)
        if id(func) in self._user_values:
            return func(*args)
        if isinstance(func, TorchGlobal):
            raise WeightsOnlyError(f"Trying to call reduce for unrecognized function {func}")
        msg = f"Trying to call reduce for unrecognized function {func}"
        if hasattr(func, "__self__"):
            msg += f" which belongs to {func.__self__}"
        raise WeightsOnlyError(msg)

    def load_reduce(self):
        args = self.stack.pop()
        self.stack[-1] = self._call(self.stack[-1], args)
    dispatch[pickle.REDUCE[0]] = load_reduce

    def _new(self, cls, args):
        from ..nn import Parameter
        if cls is Parameter:
            return _call_parameter(*args)
        allowed = allowed_globals()
        if cls in (OrderedDict, Counter, set) or id(cls) in self._user_values:
            if cls is OrderedDict or cls is Counter or cls is set:
                if args:
                    raise WeightsOnlyError(f"Unsupported call of {cls.__name__}.__new__")
            return cls.__new__(cls, *args)
        if cls is allowed["torch.Tensor"]:
            return _call_tensor(*args)
        if cls is allowed["torch._dynamo.decorators._DimRange"] and not args:
            return cls.__new__(cls)
        raise WeightsOnlyError("Can only create new object for nn.Parameter or classes "
                               f"allowlisted via `add_safe_globals` but got {cls}")

    def load_newobj(self):
        args = self.stack.pop()
        cls = self.stack.pop()
        self.append(self._new(cls, args))
    dispatch[pickle.NEWOBJ[0]] = load_newobj

    def load_newobj_ex(self):
        kwargs = self.stack.pop()
        args = self.stack.pop()
        cls = self.stack.pop()
        if kwargs:
            raise WeightsOnlyError("Unsupported operand NEWOBJ_EX with keyword arguments")
        self.append(self._new(cls, args))
    dispatch[pickle.NEWOBJ_EX[0]] = load_newobj_ex

    def load_build(self):
        state = self.stack[-1]
        inst = self.stack[-2]
        if type(inst) is OrderedDict:
            if type(state) is not dict or not all(type(k) is str for k in state):
                raise WeightsOnlyError("Unsupported state for collections.OrderedDict")
            self.stack.pop()
            inst.__dict__.update(state)
            return
        if id(type(inst)) in self._user_values:
            _Base.load_build(self)
            return
        from .._tensor import Tensor
        if isinstance(inst, Tensor) and not state:
            self.stack.pop()
            return
        if type(inst) is allowed_globals()["torch._dynamo.decorators._DimRange"]:
            inst.__setstate__(self.stack.pop())
            return
        raise WeightsOnlyError("Can only build Tensor, Parameter, OrderedDict or types allowlisted "
                               f"via `add_safe_globals`, but got {type(inst)}")
    dispatch[pickle.BUILD[0]] = load_build

    # containers: lists, dicts and sets only, with cheap keys
    def load_append(self):
        value = self.stack.pop()
        if type(self.stack[-1]) is not list:
            raise WeightsOnlyError(f"Can only append to lists, but got {type(self.stack[-1])}")
        self.stack[-1].append(value)
    dispatch[pickle.APPEND[0]] = load_append

    def load_appends(self):
        items = self.pop_mark()
        if type(self.stack[-1]) is not list:
            raise WeightsOnlyError(f"Can only extend lists, but got {type(self.stack[-1])}")
        self.stack[-1].extend(items)
    dispatch[pickle.APPENDS[0]] = load_appends

    def _check_set_item_target(self, opcode):
        if type(self.stack[-1]) not in (dict, OrderedDict, Counter):
            raise WeightsOnlyError(f"Can only {opcode} for dict, collections.OrderedDict, "
                                   f"collections.Counter, but got {type(self.stack[-1])}")

    def load_setitem(self):
        value = self.stack.pop()
        key = self.stack.pop()
        self._check_set_item_target("SETITEM")
        self.stack[-1][check_key(key)] = value
    dispatch[pickle.SETITEM[0]] = load_setitem

    def load_setitems(self):
        items = self.pop_mark()
        self._check_set_item_target("SETITEMS")
        if len(items) % 2:
            raise pickle.UnpicklingError("odd number of items for SETITEMS")
        d = self.stack[-1]
        for i in range(0, len(items), 2):
            d[check_key(items[i])] = items[i + 1]
    dispatch[pickle.SETITEMS[0]] = load_setitems

    def load_additems(self):
        items = self.pop_mark()
        if type(self.stack[-1]) is not set:
            raise WeightsOnlyError(f"Can only add items to sets, but got {type(self.stack[-1])}")
        self.stack[-1].update(check_key(x) for x in items)
    dispatch[pickle.ADDITEMS[0]] = load_additems

    def load_frozenset(self):
        items = self.pop_mark()
        self.append(frozenset(check_key(x) for x in items))
    dispatch[pickle.FROZENSET[0]] = load_frozenset


def _refuser(key):
    def op(self):
        raise WeightsOnlyError(f"Unsupported operand {key}")
    return op


def _invalid(key):
    def op(self):
        raise pickle.UnpicklingError(f"invalid load key, {bytes([key])!r}.")
    return op


for _op in (pickle.INST, pickle.OBJ, pickle.EXT1, pickle.EXT2, pickle.EXT4):
    Unpickler.dispatch[_op[0]] = _refuser(_op[0])
for _k in range(256):           # a byte that is no opcode: a corrupt pickle, not a refused one
    Unpickler.dispatch.setdefault(_k, _invalid(_k))
