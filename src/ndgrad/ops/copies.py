"""torch-level *_copy functions, in-place forms and small utilities of PyTorch's torch namespace.

Everything here is composed of ndgrad's existing ops and Tensor methods: a `*_copy` function is
its view op followed by `clone()` (so gradients are the view op's, and the result has storage of
its own), an in-place form is nn.functional's `inplace=True` path or the Tensor method.
"""
import functools
import platform
import warnings

from .. import _dtype as D
from . import _out
from ._argcheck import check_tensor, combination_error as _invalid_combination, \
    tensor_sequence_error
from .._backend import xp_of, to_numpy
from ..sparse._coo import _Layout, _Named, SparseTensor, _unsupported
from .._tensor import Tensor

def _F():
    """nn.functional, at call time: the in-place activations and dropouts here are its
    torch-level names, and ops sit below nn (docs/architecture.md)."""
    from ..nn import functional
    return functional


__all__ = [
    # the *_copy family
    "as_strided_copy", "alias_copy", "detach_copy", "diagonal_copy", "expand_copy", "permute_copy", "select_copy",
    "slice_copy", "split_copy", "split_with_sizes_copy", "squeeze_copy", "t_copy",
    "transpose_copy", "unbind_copy", "unfold_copy", "unsqueeze_copy", "view_copy",
    "view_as_real_copy", "view_as_complex_copy", "values_copy", "indices_copy",
    "crow_indices_copy", "col_indices_copy", "ccol_indices_copy", "row_indices_copy",
    # in-place forms and friends
    "addmv_", "alpha_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_",
    "feature_dropout", "feature_dropout_", "dropout_", "celu_", "selu_", "rrelu", "rrelu_",
    "threshold_", "conj_physical_", "detach_", "as_strided_", "resize_as_", "embedding_renorm_",
    "fill", "adjoint",
    # utilities
    "get_device", "is_inference", "is_storage", "typename", "layout", "memory_format",
    "contiguous_format", "preserve_format", "channels_last", "channels_last_3d",
    "set_warn_always", "is_warn_always_enabled", "get_num_interop_threads",
    "set_num_interop_threads", "set_flush_denormal", "set_default_tensor_type",
    "empty_strided", "empty_permuted", "frombuffer", "nonzero_static",
]

# PyTorch's *_copy functions check out= as its view ops' out variants do: the dtypes must match
_SAME = ("same", _out._EXACT, RuntimeError)
_NUMBER = (int, float, complex, bool)


def _with_out(fn):
    """fn with PyTorch's out= protocol (ops/_out.py's, under fn's own name)."""
    return _out._with_out(fn, fn.__name__, _SAME)


# ---------------------------------------------------------------- the *_copy family

@_with_out
def as_strided_copy(input, size, stride, storage_offset=None):
    check_tensor("as_strided_copy", input)
    return input.as_strided(size, stride, storage_offset).clone()


@_with_out
def alias_copy(input):
    check_tensor("alias_copy", input)
    return input.clone()


@_with_out
def detach_copy(input):
    check_tensor("detach_copy", input)
    return input.detach().clone()


@_with_out
def diagonal_copy(input, offset=0, dim1=0, dim2=1):
    return input.diagonal(offset, dim1, dim2).clone()


@_with_out
def expand_copy(input, size, *, implicit=False):
    return input.expand(size).clone()


@_with_out
def permute_copy(input, dims):
    return input.permute(dims).clone()


@_with_out
def select_copy(input, dim, index):
    return input.select(dim, index).clone()


@_with_out
def slice_copy(input, dim=0, start=None, end=None, step=1):
    """input[..., start:end:step] along dim (Python's clamping of start and end, as ATen's)."""
    check_tensor("slice_copy", input)
    if input.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    from .._tensor import _wrap_dim
    dim = _wrap_dim(dim, input.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return input[(slice(None),) * dim + (slice(start, end, step),)].clone()


_SQUEEZE_COPY = ("(Tensor input, *, Tensor out = None)",
                 "(Tensor input, int dim, *, Tensor out = None)",
                 "(Tensor input, tuple of ints dim, *, Tensor out = None)")
_ALL = object()   # (squeeze_copy without dim; PyTorch refuses dim=None)


@_with_out
def squeeze_copy(input, dim=_ALL):
    if dim is None:
        raise _invalid_combination("squeeze_copy", _SQUEEZE_COPY, (input, dim), {})
    return (input.squeeze() if dim is _ALL else input.squeeze(dim)).clone()


@_with_out
def t_copy(input):
    return input.t().clone()


@_with_out
def transpose_copy(input, dim0, dim1):
    return input.transpose(dim0, dim1).clone()


@_with_out
def unfold_copy(input, dimension, size, step):
    return input.unfold(dimension, size, step).clone()


@_with_out
def unsqueeze_copy(input, dim):
    return input.unsqueeze(dim).clone()


_VIEW_COPY = ("(Tensor input, torch.dtype dtype, *, Tensor out = None)",
              "(Tensor input, tuple of ints size, *, Tensor out = None)")


@_with_out
def view_copy(*args, **kwargs):
    """view_copy(input, size) or view_copy(input, dtype), as Tensor.view; being a copy, it
    takes any layout (PyTorch copies a non-contiguous input first), as reshape does."""
    input = size = None   # (PyTorch's parser: an input and a size or dtype, or none fits)
    for names in (("input", "size"), ("input", "dtype")):
        try:
            input, size = _bind(names, args, kwargs)
            break
        except TypeError:
            pass
    if not isinstance(input, Tensor) or not isinstance(size, (D.dtype, tuple, list)):
        raise _invalid_combination("view_copy", _VIEW_COPY, args, kwargs)
    if isinstance(size, D.dtype):
        return input.view(size).clone()
    return input.reshape(size).clone()


@_with_out
def view_as_real_copy(input):
    from .complex import view_as_real
    return view_as_real(input).clone()


@_with_out
def view_as_complex_copy(input):
    from .complex import view_as_complex
    return view_as_complex(input).clone()


def _bind(names, args, kwargs):
    """The values of parameters `names` (all required) from a call's args and kwargs."""
    if len(args) > len(names) or set(kwargs) - set(names[len(args):]) or \
            len(args) + len(kwargs) != len(names):
        raise TypeError
    return tuple(args) + tuple(kwargs[n] for n in names[len(args):])


def _copies_out(pieces, out, name, kernel, resize):
    """The list-returning copies write into the list `out` and return None, as PyTorch: split's
    pieces are copied into out as it is (copy_ broadcasts), unbind's resize it."""
    err = tensor_sequence_error(name, "'out'", 3, out)
    if err is not None:
        raise err
    if len(out) != len(pieces):
        raise RuntimeError(f"{kernel} expected an out= argument of size {len(pieces)}, got size "
                           f"{len(out)}")
    from ..autograd.grad_mode import no_grad
    with no_grad():
        for o, p in zip(out, pieces):
            if resize:
                _out._write(o, p)
            else:
                o.copy_(p)
    return None


def split_copy(input, split_size, dim=0, *, out=None):
    pieces = tuple(p.clone() for p in input.split(split_size, dim))
    if out is None:
        return pieces
    return _copies_out(pieces, out, "split_copy", "split_copy_Tensor_out()", False)


def split_with_sizes_copy(input, split_sizes, dim=0, *, out=None):
    pieces = tuple(p.clone() for p in input.split_with_sizes(split_sizes, dim))
    if out is None:
        return pieces
    return _copies_out(pieces, out, "split_with_sizes_copy", "split_with_sizes_copy_out", False)


def unbind_copy(input, dim=0, *, out=None):
    pieces = tuple(p.clone() for p in input.unbind(dim))
    if out is None:
        return pieces
    return _copies_out(pieces, out, "unbind_copy", "unbind_copy_int_out", True)


def _sparse_copy(name):
    """values_copy & co.: the copy of what the Tensor method returns. PyTorch has these kernels
    for the compressed layouts only: a COO tensor gets its 'could not run' error."""
    method = name[:-len("_copy")]
    refuse = _unsupported(name)

    def f(input):
        check_tensor(name, input)
        if isinstance(input, SparseTensor):
            refuse(input)
        return getattr(input, method)().clone()
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"torch.{name}(input): a copy of input.{method}()."
    return _with_out(f)


values_copy = _sparse_copy("values_copy")
indices_copy = _sparse_copy("indices_copy")
crow_indices_copy = _sparse_copy("crow_indices_copy")
col_indices_copy = _sparse_copy("col_indices_copy")
ccol_indices_copy = _sparse_copy("ccol_indices_copy")
row_indices_copy = _sparse_copy("row_indices_copy")


# ---------------------------------------------------------------- in-place forms

def _check_p(p):
    # ATen's dropout raises RuntimeError (nn.functional's Python check says ValueError), and
    # prints p as C++ does (2, not 2.0)
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p:g}")


_ADDMV_ = "(Tensor input, Tensor mat, Tensor vec, *, Number beta = 1, Number alpha = 1)"


def addmv_(*args, beta=1, alpha=1, **kwargs):
    try:
        input, mat, vec = _bind(("input", "mat", "vec"), args, kwargs)
    except TypeError:   # (PyTorch's parser: too few or unknown arguments fit no signature)
        given = dict(kwargs, **({"beta": beta} if beta != 1 else {}),
                     **({"alpha": alpha} if alpha != 1 else {}))
        raise _invalid_combination("addmv_", (_ADDMV_,), args, given) from None
    for pos, (name, t) in enumerate((("input", input), ("mat", mat), ("vec", vec)), 1):
        check_tensor("addmv_", t, name, pos)
    for name, n in (("beta", beta), ("alpha", alpha)):
        if not isinstance(n, _NUMBER):
            raise TypeError(f"addmv_(): argument '{name}' must be Number, not "
                            f"{type(n).__name__}")
    return input.addmv_(mat, vec, beta=beta, alpha=alpha)


def dropout_(input, p, train):
    _check_p(p)
    return _F().dropout(input, p, train, inplace=True)


def alpha_dropout_(input, p, train):
    _check_p(p)
    return _F().alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input, p, train):
    _check_p(p)
    return _F().feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p, train):
    _check_p(p)
    return _F().feature_alpha_dropout(input, p, train, inplace=True)


def _feature_dropout(input, p, train, inplace):
    """Whole channels (dim 1 of an (N, C, *) input) dropped together."""
    check_tensor("feature_dropout_" if inplace else "feature_dropout", input)
    _check_p(p)
    if p == 0 or not train or input.numel() == 0:
        return input
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    from ..nn.functional import _channel_dropout
    return _channel_dropout(input, p, train, inplace)


def feature_dropout(input, p, train):
    return _feature_dropout(input, p, train, False)


def feature_dropout_(input, p, train):
    return _feature_dropout(input, p, train, True)


def _floating_only(kernel, input):
    """PyTorch's error for an activation kernel that has no integer or complex version."""
    if not input.dtype.is_floating_point:
        from ._inplace import _type_name
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_type_name(input.dtype)}\'')


def celu_(input, alpha=1.0):
    check_tensor("celu_", input)
    _floating_only("elu_cpu", input)
    return _F().celu_(input, alpha)


def selu_(input):
    check_tensor("selu_", input)
    _floating_only("elu_cpu", input)
    return _F().selu_(input)


def threshold_(input, threshold, value):
    return _F().threshold_(input, threshold, value)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return _rrelu(input, lower, upper, training, generator, False)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return _rrelu(input, lower, upper, training, generator, True)


def _rrelu(input, lower, upper, training, generator, inplace):
    check_tensor("rrelu_" if inplace else "rrelu", input)
    _floating_only("leaky_relu_cpu", input)
    if generator is None or not training:
        return _F().rrelu(input, lower, upper, training, inplace)
    # nn.functional's rrelu draws from the default generator; the same draw from `generator`
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    from .._creation import _rng
    from .._tensor import _make
    from ..random import _mt19937 as _R
    xp = xp_of(input._data)
    host = to_numpy(input._data)  # host: the draw is made on the host, moved once
    noise = _make(xp.asarray(_R.rrelu_noise(_rng(generator), host, lower, upper)))
    if inplace:
        from ._inplace import inplace as _inplace_apply
        return _inplace_apply(input, _F()._rrelu_result, noise)
    return _F()._rrelu(input, noise)


def conj_physical_(input):
    check_tensor("conj_physical_", input)
    return input.conj_physical_()


def detach_(input):
    check_tensor("detach_", input)
    return input.detach_()


def as_strided_(input, size, stride, storage_offset=None):
    check_tensor("as_strided_", input)
    return input.as_strided_(size, stride, storage_offset)


def resize_as_(input, the_template, *, memory_format=None):
    check_tensor("resize_as_", input)
    check_tensor("resize_as_", the_template, "the_template", 2)
    return input.resize_as_(the_template)


def embedding_renorm_(input, indices, max_norm, norm_type):
    """Rescale, in place and outside autograd, each row of `input` picked by `indices` whose
    norm_type-norm exceeds max_norm, by max_norm / (norm + 1e-7) (ATen's loop, row by row, so
    the rounding is PyTorch's)."""
    check_tensor("embedding_renorm_", input)
    check_tensor("embedding_renorm_", indices, "indices", 2)
    if input.ndim != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {input.ndim}-dimensional "
                           f"tensor for argument #1 'self' (while checking arguments for "
                           f"embedding_renorm_)")
    if indices.dtype not in (D.int64, D.int32):
        raise RuntimeError(
            "Expected tensor for argument #2 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {indices.type()} instead (while checking arguments for "
            "embedding_renorm_)")
    from ..autograd.grad_mode import no_grad
    rows = sorted(set(indices.reshape(-1).tolist()))
    with no_grad():
        for row in [input.select(0, i) for i in rows]:  # (all bounds checked before any change)
            norm = row.norm(norm_type).item()
            if norm > max_norm:
                row.mul_(max_norm / (norm + 1e-7))
    return input


def fill(*args, **kwargs):
    """torch.fill(input, value): a new tensor of input's shape and dtype, filled with value
    (fill_'s checks; gradients: zero for input, the sum for a tensor value)."""
    try:
        input, value = _bind(("input", "value"), args, kwargs)
    except TypeError:
        input = value = None
    if isinstance(input, Tensor) and isinstance(value, (Tensor,) + _NUMBER):
        return input.clone().fill_(value)
    raise _fill_error(args, kwargs)


def _fill_error(args, kwargs):
    """PyTorch's 'invalid combination' TypeError for fill, with its marks on the arguments
    each overload refused when the count fits."""
    from ._argcheck import _typename
    sigs = ("(Tensor input, Tensor value)", "(Tensor input, Number value)")
    notes = None
    if len(args) + len(kwargs) == 2 and args:
        wrong = set(kwargs) - {"value"}
        if wrong:
            notes = ["some of the keywords were incorrect: " + ", ".join(sorted(wrong))] * 2
        else:
            got = [_typename(a) for a in args] + [f"{k}={_typename(v)}" for k, v in kwargs.items()]
            first_ok = isinstance(args[0], Tensor)
            value = args[1] if len(args) == 2 else kwargs["value"]
            fits = (isinstance(value, Tensor), first_ok and isinstance(value, _NUMBER))
            first = got[0] if first_ok else f"!{got[0]}!"
            notes = [f"some of the arguments have invalid types: ({first}, "
                     f"{got[1] if ok else '!' + got[1] + '!'})" for ok in fits]
    return _invalid_combination("fill", sigs, args, kwargs, notes)


def adjoint(input):
    check_tensor("adjoint", input)
    if input.ndim < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {input.ndim}-D tensor.")
    return input.transpose(-2, -1).conj()


# ---------------------------------------------------------------- small utilities

def get_device(input):
    check_tensor("get_device", input)
    return input.get_device()


def is_inference(input):
    check_tensor("is_inference", input)
    return input.is_inference()


def is_storage(obj):
    """True for a storage object: what Tensor.untyped_storage() returns."""
    from .._tensor import UntypedStorage as _Storage
    return isinstance(obj, _Storage)


def typename(obj):
    """PyTorch's name of obj's type: 'torch.FloatTensor' for a tensor, else module.qualname."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:   # an instance: its class's name
        module, qualname = type(obj).__module__ or "", type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


# torch.layout: the class of torch.strided, torch.sparse_coo, torch.sparse_csr, ...
layout = _Layout


class memory_format(_Named):
    """torch.memory_format: torch.contiguous_format, preserve_format, channels_last(_3d). A
    tensor's format is its array's strides (_backend's memory formats): channels_last is the
    (N, H, W, C) memory order of an (N, C, H, W) tensor."""
    __slots__ = ()

    @staticmethod
    def _by_name(name):
        return _FORMATS[name]


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
_FORMATS = {f.name: f for f in (contiguous_format, preserve_format, channels_last,
                                channels_last_3d)}

_settings = {"warn_always": False, "interop_threads": None}


def set_warn_always(b):
    """PyTorch's warn-only-once warnings say so every time while this flag is on."""
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _settings["warn_always"] = b


def is_warn_always_enabled():
    return _settings["warn_always"]


def _int_arg(name, value):
    if not isinstance(value, int) or isinstance(value, bool):
        raise RuntimeError(f"{name} expects an int, but got {type(value).__name__}")
    return value


def get_num_interop_threads():
    """PyTorch's inter-op pool size (its default: the number of cores); ndgrad has no such pool
    and only remembers the value set."""
    import os
    n = _settings["interop_threads"]
    return n if n is not None else (os.cpu_count() or 1)


def set_num_interop_threads(num):
    if _int_arg("set_num_interop_threads", num) <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    _settings["interop_threads"] = num


def set_flush_denormal(mode):
    """PyTorch returns True where the CPU can flush denormals (x86 with SSE3, ARM64); NumPy gives
    no control over it, so the flag is only reported."""
    if not isinstance(mode, bool):
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    return platform.machine().lower() in ("x86_64", "amd64", "i686", "aarch64", "arm64")


_FLOAT_TYPES = {"FloatTensor": D.float32, "DoubleTensor": D.float64, "HalfTensor": D.float16,
                "BFloat16Tensor": getattr(D, "bfloat16", None)}


def set_default_tensor_type(t):
    """Deprecated in PyTorch: sets the default dtype from a legacy tensor type (or its name)."""
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
                  UserWarning, stacklevel=2)
    if isinstance(t, str):
        if t.startswith("torch.cuda."):
            raise TypeError(f"type {t} not available. Torch not compiled with CUDA enabled.")
        import sys
        first, *rest = t.split(".")   # (PyTorch's _import_dotted_name; `torch` is ndgrad here)
        t = sys.modules[__name__.split(".")[0]] if first == "torch" else __import__(first)
        for part in rest:
            t = getattr(t, part)
    name = getattr(t, "__name__", None) if isinstance(t, type) else None
    if name is None or not hasattr(t, "dtype") or not isinstance(t.dtype, D.dtype):
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    if _FLOAT_TYPES.get(name) is None:
        raise TypeError("only floating-point types are supported as the default type")
    D.set_default_dtype(_FLOAT_TYPES[name])


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """An uninitialised tensor with the given strides: a view of a flat buffer just large enough
    (as PyTorch allocates it)."""
    from .._creation import _size, empty
    from ..autograd.grad_mode import no_grad
    size, stride = _size((size,), "empty_strided"), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of "
                           f"strides ({len(stride)})")
    need = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
    with no_grad():
        t = empty(need, dtype=dtype, device=device).as_strided(size, stride)
    return t.requires_grad_() if requires_grad else t


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """An uninitialised tensor of `size` whose dims lie in memory in the order physical_layout
    (outermost first): allocated in that order, then permuted back."""
    from .._creation import _size, empty
    size, order = _size((size,), "empty_permuted"), tuple(physical_layout)
    n = len(size)
    if n != len(order):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {n} is not equal to "
                           f"len(physical_layout) = {len(order)}")
    seen = set()
    for i, d in enumerate(order):
        if not 0 <= d < n:
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and {n - 1}, "
                               f"but got {d} at index {i}).  NB: negative dims not currently "
                               f"supported; file an issue if you want it.")
        if d in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(d)
    physical = empty([size[d] for d in order], dtype=dtype, device=device)
    inverse = sorted(range(n), key=order.__getitem__)
    t = physical.permute(inverse)
    return t.requires_grad_() if requires_grad else t


_warned_readonly = [False]
_REQUIRED = object()   # (a required keyword-only argument: its absence is PyTorch's TypeError)


def _required(name, arg, value):
    if value is _REQUIRED:
        raise TypeError(f'{name}() missing 1 required positional arguments: "{arg}"')


def frombuffer(buffer, *, dtype=_REQUIRED, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor over the memory of a Python buffer object (no copy: writes show through)."""
    _required("frombuffer", "dtype", dtype)
    from .._backend import numpy as host
    from .._creation import _finish
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    length, size = view.nbytes, dtype.itemsize
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({size})")
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    if requires_grad and dtype._category < 2:  # (before the warning, which needs a tensor)
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    if view.readonly and (_settings["warn_always"] or not _warned_readonly[0]):
        _warned_readonly[0] = True  # (PyTorch's TORCH_WARN_ONCE)
        warnings.warn("The given buffer is not writable, and PyTorch does not support "
                      "non-writable tensors. This means you can write to the underlying "
                      "(supposedly non-writable) buffer using the tensor. You may want to copy "
                      "the buffer to protect its data or make it writable before converting it "
                      "to a tensor. This type of warning will be suppressed for the rest of this "
                      "program.", UserWarning, stacklevel=2)
    arr = host.frombuffer(buffer, dtype=dtype.np, count=count, offset=offset)  # host: shares it
    return _finish(arr, requires_grad)


@functools.partial(_out._with_out, name="nonzero_static", rule=(
    "same", "nonzero_static: Expected out tensor to have scalar type Long but got scalar type{O}",
    RuntimeError))
def nonzero_static(input, *, size=_REQUIRED, fill_value=-1):
    """nonzero()'s (n, ndim) indices cut or padded with fill_value to exactly `size` rows."""
    check_tensor("nonzero_static", input)
    _required("nonzero_static", "size", size)
    if not isinstance(size, int) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    from .._creation import full
    found = input.nonzero()[:size]
    pad = full((size - found.shape[0], input.ndim), fill_value, dtype=D.int64,
               device=input.device)
    from . import cat
    return cat([found, pad])
