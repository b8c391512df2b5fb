"""ndgrad: define-by-run automatic differentiation on NumPy, with PyTorch's API.

    import ndgrad as torch
    x = torch.ones(2, 2, requires_grad=True)
    out = ((x + 2) * (x + 2) * 3).mean()
    out.backward()
    x.grad  # tensor([[4.5000, 4.5000], [4.5000, 4.5000]])
"""
from ._dtype import (dtype, bool, uint8, int8, int16, int32, int64, float16, float32, float64,
                     complex64, complex128, half, float, double, short, int, long, cfloat, cdouble,
                     uint16, uint32, uint64, bfloat16, float8_e4m3fn, float8_e5m2,
                     float8_e4m3fnuz, float8_e5m2fnuz, complex32, chalf,
                     get_default_dtype, set_default_dtype, promote_types, finfo, iinfo)
from ._dtype import result_type as _result_type
from ._backend import device
from ._tensor import Tensor, Size
from ._tensor_str import set_printoptions, get_printoptions, printoptions
from . import random  # (first: its engine random/_mt19937 is the one _creation's Generator runs on)
from ._creation import *  # noqa: F401,F403
from ._creation import Generator, default_generator
from .signal._windows import *  # noqa: F401,F403
from .ops._spectral import stft, istft  # noqa: F401
from .autograd.grad_mode import (no_grad, enable_grad, set_grad_enabled, is_grad_enabled,
                                 inference_mode, is_inference_mode_enabled)
from . import autograd
from .autograd.anomaly_mode import is_anomaly_enabled, is_anomaly_check_nan_enabled
from .ops import *  # noqa: F401,F403
from .ops import (cat, concat, concatenate, stack, split, chunk, unbind, einsum,  # noqa: F401
                  tensordot, det, diag, inverse, cross)
import importlib as _importlib  # noqa: E402
import warnings as _warnings  # noqa: E402
import math as _math  # noqa: E402

inf, nan, pi, e, newaxis = _math.inf, _math.nan, _math.pi, _math.e, None   # torch's constants

linalg = _importlib.import_module(".linalg", __name__)  # `from .ops import *` bound ops.linalg
from .ops import (add, sub, subtract, mul, multiply, div, divide, true_divide, pow, neg, negative,
                  exp, log, sqrt, tanh, sigmoid, relu, abs, absolute, sign, where, clamp, clip,
                  eq, ne, lt, le, gt, ge, logical_not, sum, mean, norm, matmul, mm, bmm, mv, dot,
                  reshape, flatten, transpose, swapaxes, swapdims, t, permute, squeeze,
                  unsqueeze, clone, broadcast_to, broadcast_shapes, unbind, relu_, sigmoid_,
                  tanh_, exp_, clamp_, clip_)

from . import nn  # noqa: E402
from . import func  # noqa: E402
from . import optim, utils  # noqa: E402
from .serialization import save, load  # noqa: E402
from .serialization import _weights_only_unpickler  # noqa: E402,F401  (PyTorch's module name)
from . import backends  # noqa: E402
from .functional import *  # noqa: E402,F401,F403
from . import distributions  # noqa: E402
from . import fft  # noqa: E402  (torch.fft; shadows no torch-level name)
special = _importlib.import_module(".special", __name__)  # (`from .ops import *` bound ops.special)
from ._alias import alias_torch  # noqa: E402,F401
from . import distributed, futures  # noqa: E402  (mpi4py is imported on first use only)
from . import testing  # noqa: E402
from . import signal  # noqa: E402  (torch.signal.windows)
from . import masked  # noqa: E402  (torch.masked)
from . import onnx  # noqa: E402  (torch.onnx: importable; export raises)

from . import version, torch_version  # noqa: E402
__version__ = version.ndgrad_version   # aliased as torch: version.__version__ (see _alias.py)

FloatTensor = DoubleTensor = LongTensor = None  # set below
from .sparse._coo import sparse_coo_tensor, sparse_coo, strided, jagged, SparseTensor as _SparseTensor  # noqa: E402
from .sparse._compressed import (sparse_csr, sparse_csc, sparse_bsr, sparse_bsc,  # noqa: E402
                                 sparse_csr_tensor,
                                 sparse_csc_tensor, sparse_compressed_tensor,
                                 SparseCompressedTensor as _SparseCompressedTensor)
from . import sparse  # noqa: E402
contiguous_format = preserve_format = channels_last = None


_ABSENT = object()


def result_type(tensor=_ABSENT, other=_ABSENT, *, scalar=_ABSENT, scalar1=_ABSENT,
                scalar2=_ABSENT):
    """torch.result_type(tensor, other); by keyword also PyTorch's overloads (scalar, tensor)
    and (scalar1, scalar2)."""
    if scalar is not _ABSENT and other is _ABSENT:
        operands = (scalar, tensor)
    elif scalar1 is not _ABSENT and tensor is other is _ABSENT:
        operands = (scalar1, scalar2)
    else:
        operands = (tensor, other)
    if operands[0] is _ABSENT or operands[1] is _ABSENT:
        from .ops import _argcheck
        named = dict(scalar=scalar, scalar1=scalar1, scalar2=scalar2)
        raise _argcheck.invalid_combination(
            "result_type", [a for a in (tensor, other) if a is not _ABSENT],
            {k: v for k, v in named.items() if v is not _ABSENT})
    return _result_type(*operands)


_deterministic = [False, False]    # (enabled, warn_only)


def use_deterministic_algorithms(mode, *, warn_only=False):
    """NumPy kernels are deterministic already; the flags are only remembered."""
    if not isinstance(mode, type(True)):
        raise TypeError("_set_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    _deterministic[:] = [mode, type(True)(warn_only)]


def are_deterministic_algorithms_enabled():
    return _deterministic[0]


def is_deterministic_algorithms_warn_only_enabled():
    return _deterministic[1]


def set_deterministic_debug_mode(debug_mode):
    """0 / "default": off; 1 / "warn": warn on nondeterministic ops; 2 / "error": raise."""
    if not isinstance(debug_mode, (type(1), str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        modes = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in modes:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = modes[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError("invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    return (1 if _deterministic[1] else 2) if _deterministic[0] else 0


def set_anomaly_enabled(enabled, check_nan=True):
    """torch.set_anomaly_enabled: autograd's anomaly mode on or off (as detect_anomaly)."""
    from .autograd import anomaly_mode
    anomaly_mode.set_detect_anomaly(enabled, check_nan)



def init_num_threads(*args, **kwargs):
    """Nothing to initialise: NumPy's BLAS owns its threads."""
    if args or kwargs:
        raise TypeError("init_num_threads(): incompatible function arguments. The following "
                        "argument types are supported:\n    1. () -> None\n\nInvoked with: "
                        + ", ".join([repr(a) for a in args]
                                    + [f"kwargs: {k}={v!r}" for k, v in kwargs.items()]))


def is_distributed(input):
    return False


def is_vulkan_available():
    return False


def sym_fresh_size(expr):
    return tensor(expr).item()


def cond(pred, true_fn, false_fn, operands=()):
    """torch.cond(pred, true_fn, false_fn, operands): eagerly, the branch `pred` selects (a bool
    or a one-element tensor), called on the operands (a tuple or list of tensors)."""
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"Expect operands to be a tuple of possibly nested dict/list/tuple "
                           f"that only consists of tensor leaves, but got {operands}.")
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError("Expected pred to be bool or single-element tensor, but got "
                               f"{pred}.")
        pred = pred.item()
    elif not isinstance(pred, (type(True), type(1))):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    return (true_fn if pred else false_fn)(*operands)


class FatalError(Exception):
    pass


class OutOfMemoryError(RuntimeError):
    """Memory could not be allocated on a device (torch.cuda.OutOfMemoryError too)."""


class AggregationType(__import__("enum").Enum):
    """torch.AggregationType (SUM, AVG; the statistics aggregations of PyTorch's profiler)."""
    SUM = 0
    AVG = 1

    def __int__(self):
        return self.value

    __index__ = __int__


SUM, AVG = AggregationType.SUM, AggregationType.AVG


class AcceleratorError(RuntimeError):
    """An error of the accelerator's runtime (PyTorch's torch.AcceleratorError)."""


has_lapack, has_spectral, has_mkl, has_openmp = True, True, False, False


def set_num_threads(n):
    """The threads large array kernels are split over (ops/_parallel.py, Note [Parallel
    pieces]); NumPy's BLAS keeps its own count (OPENBLAS_NUM_THREADS)."""
    from .ops import _parallel
    _parallel.set_threads(n)


# (its own errors, PyTorch's RuntimeErrors, not the argument parser's TypeError: unwrapped)
set_num_threads._torch_errors, set_num_threads._binding_first = True, False


def get_num_threads():
    from .ops import _parallel
    return _parallel.threads()


def is_tensor(obj):
    return isinstance(obj, Tensor)


def is_floating_point(input):
    return input.dtype.is_floating_point


def is_complex(input):
    return input.dtype.is_complex


def numel(input):
    return input.numel()


def is_nonzero(input):
    return Tensor.__bool__(input)


def can_cast(from_, to):
    from .ops._inplace import _can_cast
    return _can_cast(from_, to)


def _legacy_type(dt):
    class _Legacy(Tensor):
        pass

    def new(cls, *args, **kwargs):
        from ._creation import tensor, empty
        if len(args) == 1 and not isinstance(args[0], (type(1), type(True), Size)):
            return tensor(args[0], dtype=dt)   # (a torch.Size is a shape, as PyTorch's)
        return empty(*(args or (0,)), dtype=dt)

    name = {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int",
            "uint8": "Byte", "float16": "Half", "bfloat16": "BFloat16", "int8": "Char",
            "int16": "Short"}.get(dt.name, dt.name.capitalize())
    return type(name + "Tensor", (), {"__new__": new, "dtype": dt})


FloatTensor = _legacy_type(float32)
DoubleTensor = _legacy_type(float64)
LongTensor = _legacy_type(int64)
IntTensor = _legacy_type(int32)
BoolTensor = _legacy_type(bool)
ByteTensor = _legacy_type(uint8)
HalfTensor = _legacy_type(float16)
BFloat16Tensor = _legacy_type(bfloat16)
CharTensor = _legacy_type(int8)
ShortTensor = _legacy_type(int16)


from . import cuda, accelerator, random  # noqa: E402
cuda.OutOfMemoryError = OutOfMemoryError
from . import storage  # noqa: E402
from .storage import (TypedStorage, UntypedStorage, FloatStorage, DoubleStorage,  # noqa: E402
                      HalfStorage, BFloat16Storage, LongStorage, IntStorage, ShortStorage,
                      CharStorage, ByteStorage, BoolStorage, ComplexFloatStorage,
                      ComplexDoubleStorage)
Tensor.storage_type = storage.storage_type
from .random import (manual_seed, seed, initial_seed, get_rng_state,  # noqa: E402,F811
                     set_rng_state)

from . import amp  # noqa: E402
from .amp import (autocast, is_autocast_enabled, set_autocast_enabled,  # noqa: E402,F401
                  get_autocast_dtype, set_autocast_dtype, is_autocast_cache_enabled,
                  set_autocast_cache_enabled, clear_autocast_cache,
                  autocast_increment_nesting, autocast_decrement_nesting,
                  is_autocast_available, get_autocast_cpu_dtype, get_autocast_gpu_dtype,
                  is_autocast_cpu_enabled, set_autocast_cpu_enabled, set_autocast_cpu_dtype,
                  set_autocast_gpu_dtype)

_matmul_precision = "highest"


def get_float32_matmul_precision():
    return _matmul_precision


def set_float32_matmul_precision(precision):
    """Accepted for compatibility: NumPy's float32 matmul is always full precision."""
    global _matmul_precision
    if precision not in ("highest", "high", "medium"):
        _warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.")
        return
    _matmul_precision = precision


def compile(model=None, *, fullgraph=False, dynamic=None, backend=None, mode=None, options=None,
            name=None, disable=False, **kwargs):
    """`torch.compile`: ndgrad has no compiler, so the model (or function) is returned as it
    is; the results are the same, only not faster."""
    if model is None:
        return lambda fn: fn
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    return model


# `from .ops import *` also bound the op machinery and the op family modules; PyTorch's namespace
# has none of them (and `torch.shape` does not exist), so they are not part of ndgrad's either.
for _name in ("D", "LINALG_METHODS", "METHODS", "PROPERTIES", "SHAPE_METHODS", "activation",
              "defop", "getitem", "indexing", "inplace", "install", "make_inplace", "pointwise",
              "reduction", "sampling", "shape", "sum_to", "to_dtype", "with_grad_off"):
    globals().pop(_name, None)
del _name

from .nn.functional import conv_tbc, channel_shuffle, native_channel_shuffle, pdist  # noqa: E402,F401
from .ops.copies import *  # noqa: E402,F401,F403
from .nn._aten import *  # noqa: E402,F401,F403
from .ops.rnn_math import *  # noqa: E402,F401,F403
from .ops.foreach import *  # noqa: E402,F401,F403  (torch._foreach_*)

# sparse first operands: torch.mm / matmul / spmm / addmm dispatch to torch.sparse (sparse/_coo.py)
_SPARSE_CLASSES = (_SparseTensor, _SparseCompressedTensor)


def _sparse_dispatch(dense_fn, sparse_fn, pos=0):
    import functools

    @functools.wraps(dense_fn)
    def f(*args, **kwargs):
        if len(args) > pos and (args[pos].__class__ in _SPARSE_CLASSES or (
                pos == 0 and len(args) > 1 and args[1].__class__ in _SPARSE_CLASSES)):
            return sparse_fn(*args, **kwargs)
        return dense_fn(*args, **kwargs)
    return f


mm = _sparse_dispatch(mm, sparse._mm)
matmul = _sparse_dispatch(matmul, sparse._mm)
mv = _sparse_dispatch(mv, sparse._mm)
bmm = _sparse_dispatch(bmm, sparse._bmm)


_MM = ("(Tensor input, Tensor mat2, *, Tensor out = None)",
       "(Tensor input, Tensor mat2, torch.dtype out_dtype, *, Tensor out = None)")


def dsmm(*args, **kwargs):
    """torch.dsmm(sparse, dense): the dense product (PyTorch's older name for sparse.mm; a
    dense input multiplies as mm). Bad arguments get mm's parser error, as in PyTorch."""
    given = dict(zip(("input", "mat2"), args), **kwargs)
    if len(args) > 2 or set(given) != {"input", "mat2"} or len(given) != len(args) + len(
            kwargs) or [a for a in given.values() if not isinstance(a, Tensor)]:
        raise _argcheck.combination_error("mm", _MM, args, kwargs)
    input, mat2 = given["input"], given["mat2"]
    return sparse.mm(input, mat2) if input.is_sparse else mm(input, mat2)


def spmm(*args, **kwargs):
    """torch.spmm(input, mat2): mm of a sparse (or dense) input (mm's argument errors)."""
    return mm(*args, **kwargs)


addmm = _sparse_dispatch(addmm, sparse.addmm, 1)

# PyTorch's parameter names where one implementation serves two namespaces that name them
# differently (torch.det(input) is linalg.det(A); swapaxes(axis0, axis1) is transpose(dim0,
# dim1): ops/__init__.py), so that every keyword form PyTorch's signatures allow works
# (tests/test_keyword_forms.py); the wrappers below (out=, argument errors) go around these
from .ops import _argcheck  # noqa: E402
for _name, _fn, _names in (
        ("det", det, {"A": "input"}), ("inverse", inverse, {"A": "input"}),
        ("slogdet", slogdet, {"A": "input"}), ("matrix_exp", matrix_exp, {"A": "input"}),
        ("matrix_power", matrix_power, {"A": "input"})):
    globals()[_name] = _argcheck.renamed(_fn, _name, **_names)
del _name, _fn, _names
index_put = ops.shape.index_put_method   # (torch.index_put(input, indices, values, ...))

# out=: PyTorch's output-argument protocol around every function that has it (see ops/_out.py)
from .ops import _out  # noqa: E402
_out.install(globals())
_out.install(linalg.__dict__, _out.LINALG_RULES)
_out.install(special.__dict__, _out.SPECIAL_RULES)
# PyTorch's argument errors (None/str for a tensor, unknown keywords) for the Python functions
from .ops import _argcheck  # noqa: E402
_argcheck.wrap_namespace(  # (torch.functional's are Python functions: binding errors first)
    globals(), [n for n in list(globals()) if not n.startswith("_")
                # torch.manual_seed is torch.random.manual_seed: one object in both places
                and getattr(globals()[n], "__module__", None) != "ndgrad.random"],
    frozenset("cdist split norm unique unique_consecutive einsum tensordot stft lu "
              "block_diag cartesian_prod broadcast_tensors meshgrid chain_matmul".split()
              ).__contains__, {"norm": "layout", "svd_lowrank": "shape", "pca_lowrank": "shape"})
# ... and for the Tensor methods of the functions whose tensor arguments it checks (positions
# without self)
_argcheck.wrap_methods(Tensor, sorted(set(_argcheck.TENSOR_ONLY) | set(_argcheck.OVERLOADS) | set(
    # (and of those that take ints: a float's error counts positions without self too)
    "cumsum cumprod softmax log_softmax tril triu argmax argmin flatten transpose topk chunk "
    "unbind select diagonal unsqueeze sort argsort logsumexp kthvalue cummax cummin diff "
    "tensor_split repeat_interleave narrow movedim".split())))
# ... and PyTorch's NumPy names (axis=, keepdims=) for the native methods defined in Python
_argcheck.numpy_names_methods(Tensor, (
    "all amax amin aminmax any count_nonzero cumprod_ cumsum_ logcumsumexp max mean median min "
    "mode nanmean nanmedian nanquantile nansum narrow_copy prod quantile renorm renorm_ "
    "scatter_reduce select_scatter slice_scatter split_with_sizes squeeze std sum unflatten "
    "unsafe_chunk unsafe_split unsafe_split_with_sizes var index_reduce index_reduce_").split())

# ---------------------------------------------------------------- internals libraries read
from . import _C, jit, overrides, compiler  # noqa: E402,F401
from .futures import Future  # noqa: E402,F401
from .ops.torch_private import *  # noqa: E402,F401,F403
from .ops.torch_private import (_check, _check_index, _check_value, _check_type,  # noqa: E402,F401
                             _check_not_implemented, _check_is_size, _check_with, _assert,
                             _assert_async, _shape_as_tensor, _sym_sqrt)
from .distributions.gamma import _standard_gamma  # noqa: E402,F401

def from_dlpack(ext_tensor, *, device=None, copy=None):
    """torch.from_dlpack: a tensor sharing the memory of a DLPack array (NumPy, CuPy, JAX,
    PyTorch) or capsule; copy=True copies, device= moves (see ndgrad.utils.dlpack)."""
    from .utils.dlpack import from_dlpack as _from_dlpack
    t = _from_dlpack(ext_tensor)
    target = globals()["device"](device) if device is not None else None
    if target is not None and target != t.device:
        if copy is False:
            raise BufferError(f"from_dlpack: copy=False cannot move the tensor to {target}")
        return t.to(target)
    return t.clone() if copy else t


# torch.<name> and Tensor.<name> are named <name> (aliases too: torch.arccos, Tensor.float)
from .ops._registry import named_as_pytorch as _named  # noqa: E402
_named(globals(), [n for n in list(globals()) if not n.startswith("_")])
_tensor_methods = {n: f for n, f in vars(Tensor).items() if not n.startswith("_")}
_named(_tensor_methods, list(_tensor_methods))
for _n, _f in _tensor_methods.items():
    if vars(Tensor)[_n] is not _f:
        setattr(Tensor, _n, _f)
del _named, _tensor_methods, _n, _f


# submodules PyTorch imports lazily (`torch._dynamo`), or that are heavier than most programs need
_LAZY_SUBMODULES = frozenset(("_dynamo", "_inductor", "hub", "profiler", "library", "export",
                              "nested", "multiprocessing", "_jit_internal", "xpu",
                              "mps", "types", "_utils", "_logging", "_subclasses", "fx",
                              "onnx", "__config__"))


def __getattr__(name):
    if name == "torch":   # PyTorch's torch/__init__ imports torch: torch.torch is torch
        return _importlib.import_module(__name__)
    if name == "JITException":          # (torch.jit.Error; jit loads on first use)
        from .jit import Error
        return Error
    if name in _LAZY_SUBMODULES:
        try:
            return _importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
