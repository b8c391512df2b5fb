"""Tensor creation (tensor, zeros, arange, randn, ...) and random number generators.

Randomness comes from `Generator` objects that are PyTorch's CPU generator (mt19937 and ATen's
transforms, in random/_mt19937.py): after the same manual_seed, the same calls give PyTorch's numbers.
"""
import builtins
import math
import threading

from . import _dtype as D
from .random import _mt19937 as _R
from ._backend import numpy as np, device as _device, CPU, to_numpy, is_array, xp_of
from ._tensor import Tensor, _make, UntypedStorage, TypedStorage
from ._backend import empty_in_order, empty_strided

__all__ = ["tensor", "as_tensor", "from_numpy", "asarray", "zeros", "ones", "full", "empty",
           "arange", "range", "linspace", "logspace", "eye", "zeros_like", "ones_like",
           "full_like", "empty_like", "rand", "randn", "randint", "randperm", "normal",
           "rand_like", "randn_like", "randint_like", "manual_seed", "seed", "initial_seed",
           "Generator", "default_generator", "get_rng_state", "set_rng_state", "bernoulli",
           "multinomial"]


_default = threading.local()   # torch.set_default_device (thread-local, as PyTorch's)


def default_device():
    """The device factories use when given none (None: the CPU)."""
    return getattr(_default, "device", None)


def set_default_device(device):
    if device is not None:
        device = _device(device)   # (a device this build lacks fails at first use, as PyTorch)
        if device.type == "cpu":
            device = None
    _default.device = device


def _xp(device):
    if device is None:
        device = getattr(_default, "device", None)
        if device is None:
            return np
    return _device(device).xp if not isinstance(device, _device) else device.xp


def _target_xp(device):
    """The array module of an explicit or default device; None when neither is set (the data's
    own device then)."""
    if device is None and getattr(_default, "device", None) is None:
        return None
    return _xp(device)


def _moved(arr, xp):
    """`arr` as an array of module `xp` (one explicit transfer when it lives elsewhere)."""
    if xp is None or xp_of(arr) is xp:
        return arr
    if xp is np:
        return to_numpy(arr)  # host: device -> host transfer
    return xp.asarray(to_numpy(arr))  # host: between two device modules, through the host


def _size(size, name="empty"):
    if len(size) == 1 and not isinstance(size[0], (tuple, list, int, np.integer, Tensor)):
        raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size[0]).__name__}")
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = s.item()
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(
                f"{name}(): argument 'size' failed to unpack the object at pos {len(out) + 1} "
                f"with error \"type must be tuple of ints,but got {type(s).__name__}\"")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"[{', '.join(str(int(x)) for x in size)}]")
        out.append(int(s))
    return tuple(out)


def _finish(arr, requires_grad):
    t = _make(arr)
    if requires_grad:
        if t.dtype._category < 2:  # the factories' wording, not requires_grad_()'s
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad_(True)
    return t


def _infer_dtype(arr):
    kind = arr.dtype.kind
    if kind == "f":
        return D.get_default_dtype()
    if kind == "c":
        return D.get_default_dtype().to_complex()
    if kind in "iu":
        return D.int64
    if kind == "b":
        return D.bool
    raise TypeError(f"Could not infer dtype of {arr.dtype}")


def _infer_seq_dtype(data):
    """torch's dtype for nested sequences holding NumPy scalars or arrays: theirs, promoted with
    the Python numbers' (float -> default dtype); None when there are none."""
    if not isinstance(data, (list, tuple)):
        return None
    found, kinds, stack = False, set(), [data]
    while stack:  # one C-level pass over each list's element types
        x = stack.pop()
        types = set(map(type, x))
        for ty in types:
            if ty is list or ty is tuple:
                stack.extend(v for v in x if type(v) is ty)
            elif issubclass(ty, (np.ndarray, np.generic)):
                found = True
                kinds.update(D.from_numpy_dtype(v.dtype) for v in x if type(v) is ty)
            else:
                kinds.add(ty)
    if not found:
        return None
    py = {bool: D.bool, int: D.int64, float: D.get_default_dtype(),
          complex: D.get_default_dtype().to_complex()}
    out = None
    for k in kinds:
        k = py.get(k, k)
        if isinstance(k, D.dtype):
            out = k if out is None else D.promote_types(out, k)
    return out


def _contains_tensor(data):
    if isinstance(data, Tensor):
        return True
    if not isinstance(data, (list, tuple)):
        return False
    stack = [data]
    while stack:  # one C-level pass over each sequence's element types
        x = stack.pop()
        for ty in set(map(type, x)):
            if issubclass(ty, Tensor):
                return True
            if issubclass(ty, (list, tuple)):
                stack.extend(v for v in x if type(v) is ty)
    return False


def _to_array(data, dtype, xp, copy):
    """Array of `data` (a Tensor, an array, a scalar, or nested sequences) with torch's dtype,
    on module `xp` (None: a Tensor's or array's own, the host for Python data)."""
    if isinstance(data, Tensor):
        arr = _moved(data._data, xp)
        d = dtype or data.dtype
    elif isinstance(data, np.ndarray) or is_array(data):
        arr = _moved(data, xp)
        d = dtype or D.from_numpy_dtype(arr.dtype)
    else:
        if isinstance(data, str):
            raise TypeError("new(): invalid data type 'str'")
        if _contains_tensor(data):
            data = _tensors_to_lists(data)
        try:
            arr = np.asarray(data)  # host: Python data are read on the host, moved once below
        except ValueError:
            _ragged_error(data)
            raise
        if arr.dtype.kind in "fuO" and _may_hold_big_ints(arr):
            arr = _big_int_array(data, arr, dtype)  # PyTorch's overflow errors (issue 15)
        if arr.dtype == object:   # (PyTorch names the first leaf it cannot read)
            bad = next((x for x in _leaves(data) if not isinstance(
                x, (int, float, complex, bool, np.generic))), data)
            raise RuntimeError(f"Could not infer dtype of {type(bad).__name__}")
        if arr.dtype.kind in "US":
            raise ValueError(f"too many dimensions '{type(next(_leaves(data))).__name__}'")
        if isinstance(data, np.generic):
            d = dtype or D.from_numpy_dtype(arr.dtype)
        else:
            d = dtype or _infer_seq_dtype(data) or _infer_dtype(arr)
        if dtype is not None and dtype._category < 2 and dtype is not D.bool and \
                arr.dtype != dtype.np and arr.size:
            _check_int_range(arr, dtype)
        arr = (xp or np).asarray(arr)
    if arr.dtype != d.np:
        arr = arr.astype(d.np) if not d._special else D.cast(arr, d)
    elif copy:
        arr = arr.copy()
    return arr


# ---------------------------------------------------------------- Python ints out of range
# PyTorch reads every Python int of `tensor(data)` as a C long long (ValueError "Overflow when
# unpacking long long" beyond int64) unless the target dtype is floating, complex or bool, and
# checks that each value fits an explicitly requested integer dtype. NumPy instead turns such
# ints into uint64, float64 or object arrays: these are the only cases that need a closer look.

_I64_MIN, _I64_MAX = -2 ** 63, 2 ** 63 - 1


def _may_hold_big_ints(arr):
    if arr.dtype == object:
        return True
    if not arr.size:
        return False
    if arr.dtype.kind == "u":
        return arr.dtype == np.uint64 and int(arr.max()) > _I64_MAX
    if arr.dtype.kind != "f":
        return False
    with np.errstate(all="ignore"):  # host: Python data, not yet moved
        return bool((np.abs(arr) >= 2.0 ** 63).any())  # host: (nan compares False; inf checked)


def _leaves(data):
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        else:
            yield x


def _big_int_array(data, arr, dtype):
    has_float = has_big = False
    for v in _leaves(data):
        if isinstance(v, (float, complex, np.floating, np.complexfloating)):
            has_float = True
        elif isinstance(v, int) and not isinstance(v, bool) and not _I64_MIN <= v <= _I64_MAX:
            has_big = True
    if not has_big:
        return arr
    target = dtype if dtype is not None else (None if has_float else D.int64)
    if target is not None and target._category < 2 and target is not D.bool:
        raise ValueError("Overflow when unpacking long long")
    if target is D.bool:
        return np.asarray(data, dtype=object).astype(bool)  # host: Python ints
    kind = complex if any(isinstance(v, (complex, np.complexfloating)) for v in _leaves(data)) \
        or (target is not None and target.is_complex) else float
    objs = np.asarray(data, dtype=object)  # host: Python ints beyond int64
    return objs.astype(kind)  # (float(int) per object: the same OverflowError beyond float's range)


def _check_int_range(arr, dtype):
    """PyTorch's check that the values given for an integer dtype fit it (unsigned types take
    negative values down to -max, which wrap, as PyTorch's checked conversion allows)."""
    info = np.iinfo(dtype.np)
    with np.errstate(all="ignore"):  # host: error state (the Python data, not yet moved)
        if arr.dtype.kind in "fc":
            a = arr.real if arr.dtype.kind == "c" else arr
            lo, hi = float(a.min()), float(a.max())
            if not (np.isfinite(a).all()):  # host: the Python data, not yet moved
                lo = hi = math.inf
        else:
            lo, hi = int(arr.min()), int(arr.max())
    low = (0 if arr.dtype.kind in "fc" else -info.max) if info.min == 0 else info.min
    if lo < low or hi > info.max or (arr.dtype.kind == "f" and hi >= 2.0 ** 63):
        raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow")


_C_NAMES = {"int64": "int64_t", "int32": "int", "int16": "int16_t", "int8": "int8_t",
            "uint8": "uint8_t", "float32": "float", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "uint16": "uint16_t", "uint32": "uint32_t",
            "uint64": "uint64_t"}
_C_NAMES.update((d.name, "c10::" + d._cname) for d in D.FLOAT8)


def check_fill_value(value, dtype):
    """PyTorch's checks on a Python scalar written into an integer tensor (full, fill_)."""
    if dtype is D.bool or isinstance(value, bool) or dtype.is_complex or dtype is D.float64:
        return
    if dtype.is_floating_point:  # a finite value beyond the type's range (inf and nan pass)
        if isinstance(value, (int, float)) and math.isfinite(value) and \
                abs(value) > D.finfo(dtype).max:
            raise RuntimeError(f"value cannot be converted to type {_C_NAMES.get(dtype.name)} "
                               f"without overflow")
        return
    if isinstance(value, int):
        if value >= 2 ** 64:
            raise OverflowError("int too big to convert")
        if value < _I64_MIN:
            raise OverflowError("can't convert negative int to unsigned")
        v = value
    elif isinstance(value, float):
        v = value
    else:
        return
    info = np.iinfo(dtype.np)
    # (an unsigned type takes a negative int down to -max, which wraps, but no negative float)
    low = (0 if isinstance(v, float) else -info.max) if info.min == 0 else info.min
    if not (low <= v <= info.max) or v != v or (isinstance(v, float) and v >= 2.0 ** 63):
        raise RuntimeError(f"value cannot be converted to type {_C_NAMES.get(dtype.name, dtype.name)}"
                           f" without overflow")


def _ragged_error(data):
    """Raise torch's error for nested sequences that do not form a box: the expected sizes are
    those along the first elements, as torch's compute_sizes reads them."""
    seq = (list, tuple, np.ndarray)
    sizes, x = [], data
    while isinstance(x, seq):
        sizes.append(len(x))
        if not len(x):
            break
        x = x[0]
    stack = [(data, 0)]
    while stack:
        x, d = stack.pop()
        if d == len(sizes):
            if isinstance(x, seq):
                raise TypeError(f"'{type(x).__name__}' object cannot be interpreted as an integer")
            continue
        if not isinstance(x, seq):
            raise TypeError("not a sequence")
        if len(x) != sizes[d]:
            raise ValueError(f"expected sequence of length {sizes[d]} at dim {d} (got {len(x)})")
        stack.extend((v, d + 1) for v in reversed(list(x)))


def _tensors_to_lists(x):
    if isinstance(x, Tensor):
        if x._data.ndim == 0:
            return x.item()
        return x.tolist()
    if isinstance(x, (list, tuple)):
        return [_tensors_to_lists(v) for v in x]
    return x


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """torch.tensor(data): a new tensor (always a copy) with dtype inferred as PyTorch does."""
    return _finish(_to_array(data, D.to_dtype(dtype), _target_xp(device), True), requires_grad)


def as_tensor(data, dtype=None, device=None):
    """torch.as_tensor: shares memory with a Tensor or ndarray of matching dtype."""
    dtype = D.to_dtype(dtype)
    if isinstance(data, Tensor) and (dtype is None or dtype is data.dtype):
        target = device if device is not None else default_device()
        return data if target is None or _device(target) == data.device else data.to(target)
    arr = _to_array(data, dtype, _target_xp(device), False)
    t = _make(arr)
    return t


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """torch.asarray: obj as a tensor, sharing its memory when it can (copy=None) or always
    copied (copy=True)."""
    if isinstance(obj, UntypedStorage):   # (its bytes, sharing memory: safetensors' loads)
        obj = obj._byte_tensor() if not isinstance(obj, TypedStorage) else obj._t
    t = as_tensor(obj, dtype=dtype, device=device)
    if copy and (t is obj or (isinstance(obj, np.ndarray) and t._data is obj)):
        t = t.detach().clone()
    if requires_grad and not t.requires_grad:
        t = (t.detach() if t is obj else t).requires_grad_(True)
    return t


def from_numpy(ndarray):
    """torch.from_numpy: a tensor sharing memory with the array."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    D.from_numpy_dtype(ndarray.dtype)
    return _make(ndarray)


def _filled(size, value, dtype, device, requires_grad, fname="full"):
    size = _size(size, fname)
    dtype = D.to_dtype(dtype) or D.get_default_dtype()
    if value != 0 and value != 1:
        check_fill_value(value, dtype)
    xp = _xp(device)
    if value == 0:
        arr = xp.zeros(size, dtype=dtype.np)
    elif value == 1:
        arr = xp.ones(size, dtype=dtype.np)
    elif dtype._special:  # (through float32, as PyTorch's fill)
        arr = D.cast(xp.full(size, value), dtype)
    else:
        arr = xp.full(size, value, dtype=dtype.np)
    return _finish(arr, requires_grad)


def _sizes(sizes, size, name):
    """The sizes of f(*sizes), or of PyTorch's overload f(size) given by keyword."""
    if size is None:
        return sizes
    if sizes:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    return (size,)


def zeros(*sizes, size=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    sizes = _sizes(sizes, size, "zeros")
    dims = sizes[0] if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes
    if any(isinstance(s, int) and s < 0 for s in dims):
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    return _filled(sizes, 0, dtype, device, requires_grad, "zeros")


def ones(*sizes, size=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    return _filled(_sizes(sizes, size, "ones"), 1, dtype, device, requires_grad, "ones")


def empty(*sizes, size=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, memory_format=None, pin_memory=False):
    sizes = _sizes(sizes, size, "empty")
    if memory_format is None:
        return _filled(sizes, 0, dtype, device, requires_grad, "empty")
    from ._tensor import _format_name
    from ._backend import CHANNELS_LAST
    name = _format_name(memory_format)
    if name == "preserve_format":
        raise RuntimeError("unsupported memory format Preserve")
    t = _filled(sizes, 0, dtype, device, False, "empty")
    if name in CHANNELS_LAST:     # (made in memory order, then seen as (N, C, ...))
        nd, perm = CHANNELS_LAST[name]
        if t._data.ndim != nd:
            raise RuntimeError(f"required rank {nd} tensor to use {name} format")
        inverse = sorted(builtins.range(nd), key=perm.__getitem__)
        xp = _xp(device)
        t = _make(xp.zeros(tuple(t._data.shape[d] for d in perm), t._data.dtype).transpose(
            inverse) if t._data.size else empty_in_order(xp, t._data.shape, t._data.dtype, perm))
    return _finish(t._data, requires_grad)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    if not isinstance(fill_value, (int, float, complex, Tensor, np.number, np.bool_)):
        raise TypeError(f"full(): argument 'fill_value' (position 2) must be Number, not "
                        f"{type(fill_value).__name__}")
    if dtype is None:
        if isinstance(fill_value, bool):
            dtype = D.bool
        elif isinstance(fill_value, int):
            dtype = D.int64
        elif isinstance(fill_value, complex):
            dtype = D.get_default_dtype().to_complex()
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _filled((size,) if isinstance(size, int) else (tuple(size),), fill_value, dtype,
                   device, requires_grad)


def _like(input, dtype, device):
    return (D.to_dtype(dtype) or input.dtype), (device or input.device)


def _memory_order(input, memory_format):
    """The axis order of the memory of a *_like result, outermost first, or None for a
    C-contiguous one: channels_last(_3d)'s, or for preserve_format (the default) input's own
    where it is non-overlapping and dense (a transposed matrix) and else the format PyTorch
    suggests for it (channels-last strides with gaps keep a channels-last order)."""
    from ._tensor import _format_name
    from ._backend import dense_order, suggest_format, CHANNELS_LAST
    name = _format_name(memory_format) if memory_format is not None else "preserve_format"
    a = input._data
    if name == "preserve_format":
        if a.ndim < 2 or a.size <= 1 or a.flags.c_contiguous:
            return None
        order = dense_order(a)
        if order is not None:
            return order
        name = suggest_format(a)
    spec = CHANNELS_LAST.get(name)
    if spec is None:
        return None
    if a.ndim != spec[0]:
        raise RuntimeError(f"required rank {spec[0]} tensor to use {name} format")
    return list(spec[1])


def _in_memory_order(input, memory_format, make, requires_grad=False, fill=None, dtype=None,
                     device=None):
    """make(shape) (a new C-contiguous tensor) laid out as input's memory when *_like keeps it:
    made in memory order and transposed. fill: the random *_like functions are PyTorch's
    empty_like(...).normal_() & co., so where the layout is kept the draws go through the
    in-place fill of the (non-contiguous) result, in memory order, as PyTorch's do."""
    if input.is_nested:   # a nested tensor: new values of its structure (PyTorch's)
        return input._with_values(make(tuple(input._values.shape)))
    a = input._data
    if a.size == 0 and a.ndim >= 2 and (memory_format is None or memory_format.name ==
                                        "preserve_format"):   # (no elements: strides kept)
        t = make(a.shape)
        return _finish(empty_strided(xp_of(t._data), a.shape, t._data.dtype, tuple(
            st // a.itemsize * t._data.itemsize for st in a.strides)), requires_grad)
    order = _memory_order(input, memory_format)
    if order is None:
        return make(input._data.shape)
    shape = tuple(input._data.shape[d] for d in order)
    t = make(shape) if fill is None else empty(shape, dtype=dtype, device=device)
    inverse = sorted(builtins.range(len(order)), key=order.__getitem__)
    out = _make(t._data.transpose(inverse) if t._data.size else
                empty_in_order(xp_of(t._data), input._data.shape, t._data.dtype, order))
    if fill is not None:
        fill(out)
    return _finish(out._data, requires_grad)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
               memory_format=None):
    d, dev = _like(input, dtype, device)
    return _in_memory_order(input, memory_format, lambda shape: _filled(
        shape, 0, d, dev, requires_grad), requires_grad)


# zeros_like(grad) in a derivative formula (a zero gradient: pow(x, 0)'s, relu's second
# derivative) on the arrays of the raw execution (ops/_raw.py); keywords take the recorded run
zeros_like._raw = lambda a: xp_of(a).zeros(a.shape, a.dtype)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
              memory_format=None):
    d, dev = _like(input, dtype, device)
    return _in_memory_order(input, memory_format, lambda shape: _filled(
        shape, 1, d, dev, requires_grad), requires_grad)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
               memory_format=None):
    d, dev = _like(input, dtype, device)
    return _in_memory_order(input, memory_format, lambda shape: _filled(
        shape, 0, d, dev, requires_grad), requires_grad)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None, pin_memory=False):
    d, dev = _like(input, dtype, device)
    return _in_memory_order(input, memory_format, lambda shape: _filled(
        shape, fill_value, d, dev, requires_grad), requires_grad)


_RANDINT = tuple(
    s + ", *, {}Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
    "torch.device device = None, bool pin_memory = False, bool requires_grad = False)".format(g)
    for s in ("(int high, tuple of ints size", "(int low, int high, tuple of ints size")
    for g in ("torch.Generator generator, ", ""))
_ARANGE = tuple(
    s + ", *, {}torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
    "bool pin_memory = False, bool requires_grad = False)".format(o) for s, o in (
        ("(Number end", "Tensor out = None, "), ("(Number start, Number end", ""),
        ("(Number start, Number end, Number step = 1", "Tensor out = None, ")))


class _NoStart:
    def __repr__(self):
        return "0"


_NO_START = _NoStart()   # arange(end=5): PyTorch's arange(end) overload by keyword


def _scalar_value(v):
    return v.item() if isinstance(v, Tensor) else v


def _trunc_int(v):
    """A Number as ATen's Scalar.to<int64_t>() reads it: truncated toward zero."""
    return int(v) if not isinstance(v, complex) else int(v.real)


def arange(start=_NO_START, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False):
    """torch.arange: int64 for integer arguments, the default float dtype otherwise.

    As ATen's kernel: the checks and the length read the arguments as doubles, but an int64
    result truncates start, end and step first and counts in integers (arange(3.1,
    dtype=torch.int64) has 3 elements); integer results step in int64 from the truncated start
    by the truncated step, float results in double."""
    if end is None:
        if start is _NO_START:
            from .ops._argcheck import combination_error
            raise combination_error("arange", _ARANGE, (), {})
        start, end = 0, start
    elif start is _NO_START:
        start = 0
    vals = [_scalar_value(v) for v in (start, end, step)]
    start, end, step = vals
    for v in (start, end):
        if isinstance(v, float) and not math.isfinite(v):
            raise RuntimeError(f"unsupported range: {start:g} -> {end:g}")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {_cnum(start)} -> {_cnum(end)}")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        dtype = D.int64 if all(isinstance(v, int) for v in vals) else D.get_default_dtype()
    dtype = D.to_dtype(dtype)
    xp = _xp(device)
    if dtype.is_floating_point or dtype.is_complex:
        n = max(0, math.ceil((end - start) / step))
        if dtype.np.kind == "f" and dtype.np.itemsize >= 4:
            return _finish(_arange_float(xp, n, float(start), float(step), dtype), requires_grad)
        # start + step * i in double, fused as the kernel's scalar loop
        arr = _stored(_fma(xp.arange(n, dtype=np.float64), float(step), float(start)), dtype)
        return _finish(arr, requires_grad)
    xs, xe, xst = _trunc_int(start), _trunc_int(end), _trunc_int(step)
    if dtype is D.int64:
        if xst == 0:
            raise ValueError("step must be nonzero")
        sgn = (xst > 0) - (xst < 0)
        q = xe - xs + xst - sgn
        n = max(0, abs(q) // abs(xst) * (1 if (q >= 0) == (xst > 0) else -1))  # C's q / xst
    else:
        n = max(0, math.ceil((end - start) / step))
    arr = (xs + xp.arange(n, dtype=np.int64) * xst).astype(dtype.np)
    return _finish(arr, requires_grad)


def _arange_float(xp, n, start, step, dtype):
    """A float32 or float64 arange as ATen's arange_kernel computes it on the CPU, bit for bit:
    at::parallel_for's chunks over PyTorch's intra-op threads (one chunk under 32768 elements);
    in each, pairs of 256-bit vectors whose first element is start + step * i rounded to the
    dtype and whose lanes add k * step to it in double, then the chunk's tail one element at a
    time as start + step * i; each of these sums a fused multiply-add in double, rounded to the
    dtype (against PyTorch 2.13 on an AVX-512 machine, whose kernel runs 256-bit vectors here)."""
    from .ops._parallel import threads
    i = xp.arange(n, dtype=np.float64)
    if n == 0:
        return i.astype(dtype.np)
    lanes = 32 // dtype.np.itemsize
    chunk = -(-n // min(threads(), -(-n // 32768)))
    first = (i // chunk) * chunk
    off = i - first
    size = xp.minimum(chunk, n - first)
    k = off % lanes
    base = _stored(_fma(first + off - k, step, start), dtype).astype(np.float64)
    vector = off < size - size % (2 * lanes)
    return _stored(xp.where(vector, _fma(k, step, base), _fma(i, step, start)), dtype)


def _cnum(v):
    """A double as C++'s stream prints it (0, 0.5, inf, nan, 1e+20)."""
    return f"{v:g}"


def range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    """Deprecated torch.range: includes `end`."""
    if end is None:
        start, end = 0, start
    dtype = D.to_dtype(dtype) or D.get_default_dtype()
    n = int(math.floor((end - start) / step)) + 1
    arr = (start + _xp(device).arange(n, dtype=np.float64) * step).astype(dtype.np)
    return _finish(arr, requires_grad)


def _space_sigs(name):
    base = ", float base = 10.0" if name == "logspace" else ""
    return tuple(f"({a} start, {b} end, int steps{base}, *, Tensor out = None, torch.dtype dtype "
                 "= None, torch.layout layout = None, torch.device device = None, bool "
                 "pin_memory = False, bool requires_grad = False)"
                 for a, b in (("Tensor", "Tensor"), ("Number", "Tensor"), ("Tensor", "Number"),
                              ("Number", "Number")))


def _space_args(name, start, end, steps, dtype, extra=()):
    """linspace's and logspace's argument checks (PyTorch's messages) -> (start, end, steps,
    dtype): Numbers, an int and the result dtype."""
    from .ops._argcheck import combination_error
    if isinstance(steps, Tensor) and not steps.dtype.is_floating_point and \
            steps.dtype is not D.bool and steps.ndim == 0:
        steps = steps.item()
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
        raise combination_error(name, _space_sigs(name), (start, end, steps) + extra, {})
    bad = [f"{what} with {t.ndim} dimension(s)" for what, t in (("start", start), ("end", end))
           if isinstance(t, Tensor) and t.ndim != 0]
    if bad:
        raise RuntimeError(f"{name} only supports 0-dimensional start and end tensors, but got "
                           f"{' and '.join(bad)}.")
    steps = int(steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    start, end = _scalar_value(start), _scalar_value(end)
    if dtype is None:
        dtype = D.get_default_dtype().to_complex() if any(
            isinstance(v, complex) for v in (start, end)) else D.get_default_dtype()
    return start, end, steps, D.to_dtype(dtype)


def _space_scalar(v, dtype):
    """A Number as ATen's checked Scalar.to<dtype>() reads it: PyTorch's overflow error, else
    the value in the dtype (integers truncated toward zero and wrapped, floats rounded)."""
    check_fill_value(v, dtype)
    if dtype is D.complex64:
        big = float(np.finfo(np.float32).max)
        if any(math.isfinite(p) and abs(p) > big for p in (v.real, v.imag)):
            raise RuntimeError("value cannot be converted to type c10::complex<float> without "
                               "overflow")
    if dtype.is_complex:
        return complex(dtype.np.type(v))
    if dtype.is_floating_point:
        return float(dtype.np.type(v))
    with np.errstate(all="ignore"):  # host: one Python number (the wrap of -3 into uint8)
        return int(np.array(_trunc_int(v)).astype(dtype.np))  # host: one Python number


def _space(xp, start, end, steps, dtype):
    """ATen's linspace kernel on the points 0 .. steps-1 (steps >= 2): the first half steps up
    from start, the second half down from end. Floating results in the output dtype's precision
    (start, end and step rounded to it; the multiply-add unrounded, as the fused one), integer
    results from the truncated start and end with a double step (truncated when stored)."""
    s, e = _space_scalar(start, dtype), _space_scalar(end, dtype)
    i = xp.arange(steps, dtype=np.float64)
    half = i < steps // 2
    if dtype.is_complex:    # each part as a real one of the part's dtype
        part = dtype.to_real()
        c = part.np.type        # (a complex divided by the integer steps - 1: each part)
        re = _space_line(xp, i, half, s.real, e.real,
                         ((c(e.real) - c(s.real)) / c(steps - 1)).item(), part)
        im = _space_line(xp, i, half, s.imag, e.imag,
                         ((c(e.imag) - c(s.imag)) / c(steps - 1)).item(), part)
        return re + 1j * im
    if dtype.is_floating_point:
        c = dtype.np.type       # (the difference and the quotient rounded to the dtype)
        step = ((c(e) - c(s)) / c(steps - 1)).item()
    else:
        step = float(e - s) / (steps - 1)
    return _space_line(xp, i, half, s, e, step, dtype)


def _space_line(xp, i, half, s, e, step, dtype):
    """start + step * i up to the half, end - step * (steps - 1 - i) after it, each multiply-add
    fused as the compiled kernel's (in double for a float32 result, which it rounds once);
    for an integer result (a double step) 1.9999999999999998, not 2.0, then truncates to 1."""
    if dtype is not D.float64 and dtype.is_floating_point:
        return xp.where(half, s + i * step, e - (i[-1] - i) * step)
    return xp.where(half, _fma(i, step, float(s)), _fma(i[-1] - i, -step, float(e)))


def _fma(a, b, c):
    """a * b + c rounded once (the fused multiply-add), for double arrays a and Numbers b, c:
    Dekker's exact product (p + err == a * b), then the two sums in order of size."""
    xp = xp_of(a)
    p = a * b
    split = 134217729.0                       # 2**27 + 1: Veltkamp's splitter
    ta = a * split
    ah = ta - (ta - a)
    al = a - ah
    tb = b * split
    bh = tb - (tb - b)
    bl = b - bh
    err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c                                 # TwoSum(p, c): s + t == p + c exactly
    bb = s - p
    t = (p - (s - bb)) + (c - bb)
    return xp.where(xp.isfinite(p), s + (t + err), s)


def _stored(arr, dtype):
    """Doubles stored into the dtype as C++ converts them (integers toward zero)."""
    with np.errstate(all="ignore"):  # host: error state (out of range: inf, or undefined in C++)
        if dtype.is_floating_point or dtype.is_complex:
            return arr.astype(dtype.np)
        return xp_of(arr).trunc(arr).astype(dtype.np)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    start, end, steps, dtype = _space_args("linspace", start, end, steps, dtype)
    if dtype is D.bool:
        raise NotImplementedError('"linspace_cpu" not implemented for \'Bool\'')
    xp = _xp(device)
    if steps == 1:     # ATen fills start (converted to the dtype)
        arr = xp.full((1,), _space_scalar(start, dtype), dtype=dtype.np)
    elif steps == 0:
        arr = xp.empty((0,), dtype=dtype.np)
    else:
        arr = _stored(_space(xp, start, end, steps, dtype), dtype)
    return _finish(arr, requires_grad)


class _Ten(float):
    """logspace's default base: 10.0, but not one the caller gave (its errors list those)."""


_BASE10 = _Ten(10.0)


def logspace(start, end, steps, base=_BASE10, *, out=None, dtype=None, layout=None,
             device=None, requires_grad=False, pin_memory=False):
    """base ** linspace(start, end, steps), as ATen's kernels: real results take the exponents
    in double from start and end in the dtype (integers truncated) and the power in double,
    then store it into the dtype (an integer one truncates); complex results compute in the
    dtype's precision throughout; one step is base ** start filled in."""
    start, end, steps, dtype = _space_args("logspace", start, end, steps, dtype,
                                           () if base is _BASE10 else (base,))
    if dtype is D.bool:
        raise NotImplementedError('"logspace_cpu" not implemented for \'Bool\'')
    xp = _xp(device)
    if steps == 0:
        return _finish(xp.empty((0,), dtype=dtype.np), requires_grad)
    if steps == 1:
        with np.errstate(all="ignore"):  # host: one Python number
            v = complex(base) ** complex(start) if dtype.is_complex else float(
                np.power(float(base), float(getattr(start, "real", start))))  # host: a number
        return _finish(xp.full((1,), _space_scalar(v, dtype), dtype=dtype.np), requires_grad)
    if dtype.is_complex:   # std::pow(complex) in the dtype: exp(y log(base))
        s, e = _space_scalar(start, dtype), _space_scalar(end, dtype)
        c = dtype.np.type
        step = c((c(e) - c(s)) / c(steps - 1))
        i = xp.arange(steps).astype(dtype.np)
        expo = xp.where(xp.arange(steps) < steps // 2, c(s) + step * i,
                        c(e) - step * (c(steps - 1) - i))
        with np.errstate(all="ignore"):  # host: error state
            arr = xp.exp(expo * xp.log(c(base))) if base != 0 else xp.power(c(base), expo)
        return _finish(arr.astype(dtype.np), requires_grad)
    s, e = _space_scalar(start, dtype), _space_scalar(end, dtype)
    diff = float(dtype.np.type(e - s)) if dtype.is_floating_point else float(e - s)
    step = diff / (steps - 1)
    i = xp.arange(steps, dtype=np.float64)
    expo = xp.where(i < steps // 2, s + step * i, e - step * (steps - 1 - i))
    with np.errstate(all="ignore"):  # host: error state
        arr = xp.power(float(base), expo)
    return _finish(_stored(arr, dtype), requires_grad)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
        pin_memory=False):
    for name, v in (("n", n), ("m", m)):
        if v is not None and v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    dtype = D.to_dtype(dtype) or D.get_default_dtype()
    return _finish(_xp(device).eye(n, n if m is None else m, dtype=dtype.np), requires_grad)


# ---------------------------------------------------------------- random numbers

class Generator:
    """torch.Generator: an independent random stream, PyTorch's CPU generator (ATen's
    CPUGeneratorImpl: mt19937 and its cached Box-Muller values, see random/_mt19937.py), so the same seed
    gives PyTorch's numbers. Draws for tensors on another device are made here and moved.

    Its state (get_state / set_state, torch.get_rng_state) is PyTorch's uint8 tensor of 5056
    bytes: a state saved by either library restores in the other."""

    def __init__(self, device="cpu"):
        self.device = _device(device)
        self._engine = _R.MT19937Engine(_R.DEFAULT_SEED)

    def manual_seed(self, seed):
        if isinstance(seed, Tensor):
            seed = seed.item()
        if not isinstance(seed, (int, np.integer)):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = int(seed)
        if not -(1 << 63) <= seed < (1 << 64):
            raise ValueError("Overflow when unpacking long long")
        self._engine.manual_seed(seed % (1 << 64))
        return self

    def seed(self):
        """Seed with a nondeterministic 64-bit number and return it."""
        import secrets
        s = secrets.randbits(64)
        self._engine.manual_seed(s)
        return s

    def initial_seed(self):
        return self._engine.seed

    def get_state(self):
        return _make(self._engine.get_state_bytes())

    def set_state(self, new_state):
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state.dtype is not D.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = to_numpy(new_state._data).reshape(-1).tobytes()  # host: the generator's bytes
        if len(raw) != _R.STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_R.STATE_BYTES} but "
                               f"found the input RNG state size to be {len(raw)}")
        self._engine.set_state_bytes(raw)
        return self

    def get_offset(self):
        raise RuntimeError("CPU Generator does not use offset")

    def set_offset(self, offset):
        raise RuntimeError("CPU Generator does not use offset")

    def clone_state(self):
        g = Generator(self.device)
        g._engine.copy_from(self._engine)
        return g

    def __reduce__(self):
        return (Generator, (self.device,), (self.initial_seed(), None, self.get_state()))

    def __setstate__(self, state):
        self.set_state(state[2])


default_generator = Generator()
default_generator.seed()   # as PyTorch's: seeded nondeterministically at start-up


def _rng(generator):
    """The engine that draws for `generator` (or the default generator). Every draw looks this
    up at call time (vmap's randomness guard replaces it)."""
    return (generator or default_generator)._engine


def manual_seed(seed):
    """Seed the default generator; returns it (as torch.manual_seed does)."""
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


def _float_dtype(dtype, fname):
    dtype = D.to_dtype(dtype) or D.get_default_dtype()
    if not (dtype.is_floating_point or dtype.is_complex):   # (PyTorch's dispatch error)
        raise NotImplementedError(f"\"{fname}\" not implemented for '{_type_name(dtype)}'")
    return dtype


def _type_name(d):
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool"}.get(d.name, d.name)


def _place(arr, device):
    """A host array (random draws are made on the host generator) moved to `device`."""
    if device is None:
        device = getattr(_default, "device", None)
        if device is None:
            return arr
    device = _device(device)
    return arr if device.type == "cpu" else device.xp.asarray(arr)


def _real_np(dtype):
    """The NumPy dtype PyTorch draws in for `dtype` (a complex tensor is drawn through its
    real view: real and imaginary parts interleaved)."""
    return {"complex64": np.float32, "complex128": np.float64}.get(dtype.name, dtype.np)


def _as_dtype(flat, shape, dtype):
    """Draws made in a fresh (C-order) tensor's order, as an array of `shape` and `dtype`."""
    if dtype.is_complex:
        return np.ascontiguousarray(  # host: a host draw
            flat, dtype=_real_np(dtype)).view(dtype.np).reshape(shape)
    return flat.astype(dtype.np, copy=False).reshape(shape)


def _numel(shape, dtype=None):
    n = 1
    for k in shape:
        n *= k
    return 2 * n if dtype is not None and dtype.is_complex else n


def rand(*sizes, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    """Uniform samples on [0, 1) (complex: real and imaginary parts each uniform)."""
    size = _sizes(sizes, size, "rand")
    dtype = _float_dtype(dtype, "check_uniform_bounds")
    shape = _size(size, "rand")
    flat = _R.uniform(_rng(generator), _numel(shape, dtype), _real_np(dtype))
    return _finish(_place(_as_dtype(flat, shape, dtype), device), requires_grad)


def randn(*sizes, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    """Standard normal samples (complex: real and imaginary parts each of variance 1/2)."""
    size = _sizes(sizes, size, "randn")
    dtype = _float_dtype(dtype, "normal_kernel_cpu")
    shape = _size(size, "randn")
    std = 1.0 / math.sqrt(2) if dtype.is_complex else 1.0  # (ATen: std / std::sqrt(2))
    flat = _R.normal(_rng(generator), _numel(shape, dtype), _real_np(dtype), 0.0, std)
    return _finish(_place(_as_dtype(flat, shape, dtype), device), requires_grad)


def randint(low=0, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None,
            device=None, requires_grad=False, pin_memory=False):
    """randint(high, size) or randint(low, high, size): integers in [low, high)."""
    if size is None:
        low, high, size = 0, low, high
    elif high is None:  # randint(10, size=(2,)): PyTorch's randint(high, size)
        low, high = 0, low
    if size is None:   # (no overload without a size)
        from .ops._argcheck import combination_error
        given = (high,) if low == 0 else (low, high)
        raise combination_error("randint", _RANDINT, given, {})
    if high is None:
        raise TypeError("randint() missing required argument 'high'")
    dtype = D.to_dtype(dtype) or D.int64
    shape = _size((size,))
    flat = _random_from_to(_rng(generator), _numel(shape), dtype, int(low), int(high))
    return _finish(_place(flat.reshape(shape), device), requires_grad)


def _random_from_to(eng, n, dtype, low, high):
    """Tensor.random_(low, high) on n elements of `dtype` (PyTorch's checks and draws)."""
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    if dtype.is_floating_point:
        low, high = _R.update_from(low, dtype.np), _R.update_to(high, dtype.np)
        if low >= high:
            raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than 'to' "
                               f"casted to dtype, but got from={low} >= to={high}")
    _R.check_from_to(low, high - 1, dtype)
    return _R.random_from_to(eng, n, dtype.np, high - low, low)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    dtype = D.to_dtype(dtype) or D.int64
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        if not (isinstance(n, Tensor) and n.numel() == 1 and not n.dtype.is_floating_point):
            raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not "
                            f"{type(n).__name__}")
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    arr = _R.randperm(_rng(generator), n).astype(dtype.np)
    return _finish(_place(arr, device), requires_grad)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None,
           device=None, requires_grad=False, pin_memory=False):
    """normal(mean, std[, size]): tensor or float mean/std, broadcast together. As PyTorch: a
    standard (or std-scaled) normal fill of the result, then `* std` and `+ mean` for tensors."""
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    if st:
        if std.dtype.is_complex:
            raise RuntimeError("normal expects standard deviation to be non-complex")
        s = to_numpy(std._data)  # host: the check
        if s.size and not (s >= 0).all():
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")  # (C++ prints -1)
    if not mt and not st:
        dtype = D.to_dtype(dtype) or D.get_default_dtype()
        shape = _size((size,)) if size is not None else ()
        flat = _R.normal(_rng(generator), _numel(shape), dtype.np, float(mean), float(std))
        return _finish(_place(flat.astype(dtype.np).reshape(shape), device), requires_grad)
    from .ops.shape import broadcast_shapes
    t = mean if mt else std
    shape = tuple(broadcast_shapes(mean.shape if mt else (), std.shape if st else ()))
    dtype = D.to_dtype(dtype) or t.dtype
    eng = _rng(generator)
    if mt and not st:
        z = _R.normal(eng, _numel(shape), dtype.np, 0.0, float(std)).reshape(shape)
        res = z + to_numpy(mean._data)  # host: of a host draw
    else:
        z = _R.normal(eng, _numel(shape), dtype.np).reshape(shape)
        m = to_numpy(mean._data) if mt else mean  # host: of a host draw
        res = z * to_numpy(std._data) + m  # host: of a host draw
    arr = np.asarray(res, dtype=dtype.np)  # host: of a host draw
    out = _place(arr, device if device is not None else t.device)
    given = [a for a in (mean, std) if isinstance(a, Tensor)]
    if any(a.requires_grad for a in given) and not requires_grad:
        # PyTorch records the draw with zero gradients: NormalBackward1 (tensor mean),
        # NormalBackward2 (tensor std), NormalBackward3 (both)
        k = (1 if mt else 0) + (2 if st else 0)
        return _draw_op("normal", f"NormalBackward{k}")(*given, out)
    return _finish(out, requires_grad)


def rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
              memory_format=None, generator=None):
    return _in_memory_order(input, memory_format, lambda shape: rand(
        shape, dtype=dtype or input.dtype, requires_grad=requires_grad, generator=generator,
        device=device or input.device), requires_grad,
        lambda t: t.uniform_(generator=generator), dtype or input.dtype, device or input.device)


def randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
               memory_format=None, generator=None):
    return _in_memory_order(input, memory_format, lambda shape: randn(
        shape, dtype=dtype or input.dtype, requires_grad=requires_grad, generator=generator,
        device=device or input.device), requires_grad,
        lambda t: t.normal_(generator=generator), dtype or input.dtype, device or input.device)


def randint_like(input, low=0, high=None, *, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None, generator=None, pin_memory=False):
    if high is None:
        low, high = 0, low
    return _in_memory_order(input, memory_format, lambda shape: randint(
        low, high, shape, dtype=dtype or input.dtype, generator=generator,
        device=device or input.device), fill=lambda t: t.random_(low, high, generator=generator),
        dtype=dtype or input.dtype, device=device or input.device)


def bernoulli(input, p=None, *, generator=None, out=None):
    """Draw 0/1 with probabilities `input` (float32 probabilities against float uniforms,
    float64 against double ones), or with the number p (double uniforms), as PyTorch."""
    eng = _rng(generator)
    if p is None:
        probs = to_numpy(input._data)  # host: compared with a host draw
        if probs.size and not ((probs >= 0) & (probs <= 1)).all():
            raise RuntimeError(
                "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
                "message be improved?  If so, please report an enhancement request to PyTorch.)")
        draws = _R.bernoulli_tensor(eng, probs).reshape(probs.shape)
    else:
        draws = _R.bernoulli_scalar(eng, input.numel(), float(p)).reshape(input._data.shape)
    out = _place(draws.astype(input.dtype.np), input.device)
    if p is None and input.requires_grad:   # (BernoulliBackward0: a zero gradient)
        return _draw_op("bernoulli", "BernoulliBackward0")(input, out)
    return _make(out)


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """PyTorch's multinomial: without replacement (or one sample), the exponential race
    (probabilities / Exp(1) draws, top-k); with replacement, a binary search of each row's
    cumulative sums for one double uniform per sample."""
    probs = to_numpy(input._data)  # host: drawn on the host
    out = _R.multinomial(_rng(generator), probs, int(num_samples), bool(replacement))
    return _make(_place(out, input.device))


def poisson(input, generator=None):
    """torch.poisson(input, generator=None): one Poisson draw per element with rate `input`
    (same dtype). Its gradient is zero, as PyTorch's."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"poisson_cpu" not implemented for '
                                  f"'{_type_name(input.dtype)}'")
    rate = np.asarray(to_numpy(input._data), dtype=np.float64)  # host: drawn on the host
    if rate.size and (rate < 0).any():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    draws = _R.poisson(_rng(generator), rate.reshape(-1)).reshape(rate.shape)
    out = _place(draws.astype(input.dtype.np), input.device)
    if input.requires_grad:
        return _poisson_op()(input, out)
    return _make(out)


_POISSON = []


def _poisson_op():
    """The recorded op behind a poisson draw of a rate that requires grad (PoissonBackward0,
    zero gradient)."""
    if not _POISSON:
        from .ops._registry import defop
        _POISSON.append(defop("poisson", forward=lambda xp, self, draws: draws, self=None))
    return _POISSON[0]


_DRAW_OPS = {}


def _draw_op(name, node_name):
    """The recorded op behind a draw from tensors that require grad (zero gradients, as
    PyTorch's): draw_op(*tensors, draws) returns the draws."""
    op = _DRAW_OPS.get(node_name)
    if op is None:
        from .ops._registry import defop
        if name == "normal" and node_name == "NormalBackward3":
            op = defop("normal_tt", forward=lambda xp, mean, std, draws: draws,
                       node_name=node_name, mean=None, std=None)
        else:
            op = defop(f"{name}_{node_name}", forward=lambda xp, self, draws: draws,
                       node_name=node_name, self=None)
        _DRAW_OPS[node_name] = op
    return op


def binomial(count, prob, generator=None):
    """torch.binomial(count, prob, generator=None): Binomial(count, prob) draws, count and prob
    broadcast together, in prob's dtype (PyTorch's BTRS / inversion samplers)."""
    from .ops._inplace import _type_name as torch_name
    from .ops.shape import broadcast_shapes
    if not count.dtype.is_floating_point:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{torch_name(count.dtype)}")
    if prob.dtype != count.dtype:
        raise RuntimeError(f"Found dtype {torch_name(prob.dtype)} but expected "
                           f"{torch_name(count.dtype)}")
    broadcast_shapes(count.shape, prob.shape)  # PyTorch's size-mismatch error
    n = np.asarray(to_numpy(count._data))  # host: drawn on the host
    p = np.asarray(to_numpy(prob._data))  # host: drawn on the host
    n, p = np.broadcast_arrays(n, p)  # host: drawn on the host
    draws = _R.binomial(_rng(generator), n.reshape(-1), p.reshape(-1), prob.dtype.np)
    return _make(_place(draws.reshape(n.shape).astype(prob.dtype.np), prob.device))


__all__ += ["poisson", "binomial"]
