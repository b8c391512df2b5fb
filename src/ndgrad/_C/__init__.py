"""`torch._C`: the attributes of PyTorch's C extension that Python libraries read, each with
its PyTorch meaning where it has one on NumPy.

- tracing/scripting state (`_get_tracing_state` None outside torch.jit.trace, `_is_tracing`),
  `_log_api_usage_once`/`_log_api_usage_metadata` (no-ops: usage logging), functorch state
  (`_are_functorch_transforms_active`: True inside ndgrad.func transforms);
- the classes of the public namespace under their C names (`Generator`, `Size`, `dtype`,
  `device`, `TensorBase`/`_TensorBase`, `Future`, `ScriptModule`, `ScriptFunction`,
  `_LinAlgError`), and the op namespaces `_VariableFunctions` (torch's functions), `_nn`,
  `_linalg`, `_special`, `_fft`, `_return_types`;
- `__torch_function__` plumbing (`DisableTorchFunction`, `DisableTorchFunctionSubclass`,
  `_disabled_torch_function_impl`, `_has_torch_function*`, `_is_torch_function_enabled`);
- grad mode (`_set_grad_enabled`, `is_grad_enabled`), determinism and backend flags, the
  accelerator (`_get_accelerator`: cpu, or cuda with CuPy and a GPU).
Names PyTorch's extension has that mean nothing without it (JIT graph internals, the
dispatcher) are absent: an AttributeError is the honest answer."""
import types as _types

from .. import _dtype as _D
from .._backend import device
from .._tensor import Tensor, Size
from .._creation import Generator
from ..autograd.grad_mode import is_grad_enabled, set_grad_enabled as _sge
from ..futures import Future
from ..jit import ScriptModule, ScriptFunction
from ..jit._trace import _get_tracing_state, is_tracing as _is_tracing
from ..linalg import LinAlgError as _LinAlgError  # noqa: F401
from .. import return_types as _return_types  # noqa: F401

dtype = _D.dtype
TensorBase = _TensorBase = Tensor
_TensorMeta = type(Tensor)
has_cuda = False
has_mps = False
has_lapack = True
has_mkldnn = False
has_openmp = False
_GLIBCXX_USE_CXX11_ABI = True


def _log_api_usage_once(event):
    """PyTorch logs API usage events to its telemetry hook; nothing is logged here."""


def _log_api_usage_metadata(event, metadata_map):
    pass


def _set_grad_enabled(mode):
    _sge(mode)


def _are_functorch_transforms_active():
    """Whether a functorch transform wraps the tensors: ndgrad.func's transforms run on plain
    Tensors, so never."""
    return False


def _get_accelerator(check=False):
    from .. import cuda
    return device("cuda") if cuda.is_available() else device("cpu")


def _get_default_device():
    from ..functional import get_default_device
    return str(get_default_device())


def _get_privateuse1_backend_name():
    return "privateuseone"


def _get_cudnn_enabled():
    from ..backends import cudnn
    return bool(cudnn.enabled)


def _set_cudnn_enabled(flag):
    from ..backends import cudnn
    cudnn.enabled = bool(flag)


def _get_deterministic_algorithms():
    from .. import are_deterministic_algorithms_enabled
    return are_deterministic_algorithms_enabled()


def _set_deterministic_algorithms(mode, *, warn_only=False):
    from .. import use_deterministic_algorithms
    use_deterministic_algorithms(mode, warn_only=warn_only)


def _cuda_getDeviceCount():
    from .. import cuda
    return cuda.device_count()


def _get_cpp_backtrace(frames_to_skip=0, maximum_number_of_frames=64):
    return ""


def _jit_set_profiling_executor(flag):
    return False


def _jit_set_profiling_mode(flag):
    return False


def _jit_override_can_fuse_on_cpu(flag):
    pass


def _jit_override_can_fuse_on_gpu(flag):
    pass


def _jit_set_texpr_fuser_enabled(flag):
    pass


def _jit_can_fuse_on_cpu():
    return False


def _jit_texpr_fuser_enabled():
    return False


def _set_print_stack_traces_on_fatal_signal(flag):
    pass


# ---------------------------------------------------------------- __torch_function__
from .._tensor import _disabled_torch_function_impl  # noqa: E402,F401


def _has_torch_function(args):
    from ..overrides import has_torch_function
    return has_torch_function(args)


def _has_torch_function_unary(arg):
    from ..overrides import has_torch_function_unary
    return has_torch_function_unary(arg)


def _has_torch_function_variadic(*args):
    from ..overrides import has_torch_function_variadic
    return has_torch_function_variadic(*args)


def _is_torch_function_enabled():
    from ..overrides import _is_torch_function_enabled
    return _is_torch_function_enabled()


def __getattr__(name):
    # the context managers live with the protocol (overrides.py), imported on first use
    if name in ("DisableTorchFunction", "DisableTorchFunctionSubclass", "_EnableTorchFunction",
                "_pop_torch_function_stack", "_push_on_torch_function_stack",
                "_len_torch_function_stack", "_get_function_stack_at"):
        from .. import overrides
        return getattr(overrides, name)
    if name == "_VariableFunctions":
        import sys
        return sys.modules[__name__.rpartition(".")[0]]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _ns(name, source):
    mod = _types.ModuleType(f"{__name__}.{name}")
    mod.__dict__.update({k: v for k, v in vars(source).items() if not k.startswith("__")})
    return mod


class _FunctionsNamespace(_types.ModuleType):
    """torch._C._functions: the C++ autograd nodes PyTorch exposes (none are separate here)."""


_functions = _FunctionsNamespace(f"{__name__}._functions")


class _FunctorchNamespace(_types.ModuleType):
    pass


_functorch = _FunctorchNamespace(f"{__name__}._functorch")


def _is_legacy_batchedtensor(tensor):
    return False


_functorch.is_legacy_batchedtensor = _is_legacy_batchedtensor
_functorch.is_batchedtensor = lambda tensor: False
_functorch.is_gradtrackingtensor = lambda tensor: False
_functorch.is_functionaltensor = lambda tensor: False


def _lazy_namespaces():
    from .. import nn, linalg, special, fft
    g = globals()
    g["_nn"] = _ns("_nn", nn.functional)
    from ..nn._aten import UPSAMPLE
    vars(g["_nn"]).update(UPSAMPLE)     # (ATen's upsample_* entry points live only here)
    g["_linalg"] = _ns("_linalg", linalg)
    g["_special"] = _ns("_special", special)
    g["_fft"] = _ns("_fft", fft)


_lazy_namespaces()
