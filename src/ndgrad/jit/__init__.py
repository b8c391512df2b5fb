"""`torch.jit` on ndgrad: documented pass-throughs, as `torch.compile` is.

TorchScript compiles Python to a graph that runs without Python; ndgrad is Python, so there is
nothing to compile and nothing faster to run. What a program sees:
- `script(obj)` returns `obj` itself (function, module or class), after recording nothing;
  `trace(fn, example_inputs)` runs fn once on the inputs with `is_tracing()` True, then returns
  fn (see _trace.py). Results are exactly the eager ones.
- `ignore`, `unused`, `export`, `_overload*`, `interface`, `Final`, `annotate`, `Attribute`,
  `isinstance` (typing-aware) behave as in eager PyTorch; `is_scripting()` is False.
- `fork(fn, *args)` runs fn at once and returns a completed `torch.jit.Future`; `wait(fut)`
  returns its value.
- `save(m, f)` / `load(f)` pickle the Python object with torch.save/torch.load (a full pickle:
  `load` runs code from the file, so open only files you trust). They do not read or write
  TorchScript archives (those hold TorchScript code, which ndgrad cannot run); loading one
  raises a RuntimeError saying so.
- `ScriptModule` is an `nn.Module` subclass (subclass it and use `script_method` as in PyTorch);
  `script(module)` does not change the module's class.
"""
import contextlib
import warnings

from .._jit_internal import (FunctionModifiers, Final, _overload, _overload_method, export,  # noqa: F401
                             ignore, unused, is_scripting, _isinstance, _drop,
                             _copy_to_script_wrapper, BroadcastingList1, BroadcastingList2,
                             BroadcastingList3)
from ..futures import Future
from ._trace import trace, trace_module, is_tracing, TracerWarning, TracingCheckError  # noqa: F401
from . import annotations  # noqa: F401
from ._script import (ScriptModule, RecursiveScriptModule, ScriptFunction,  # noqa: F401
                      ScriptWarning, script, script_method, Attribute, interface,
                      CompilationUnit, _ScriptProfile)

__all__ = ["Attribute", "CompilationUnit", "Error", "Future", "ScriptFunction", "ScriptModule",
           "annotate", "enable_onednn_fusion", "export", "export_opnames", "fork", "freeze",
           "interface", "ignore", "isinstance", "load", "onednn_fusion_enabled",
           "optimize_for_inference", "save", "script", "script_if_tracing",
           "set_fusion_strategy", "strict_fusion", "trace", "trace_module", "unused", "wait"]

_enabled = True                 # torch.jit._state._enabled (PYTORCH_JIT)


class Error(Exception):
    """torch.jit.Error (torch._C.JITException): an Exception, not a RuntimeError, as PyTorch's."""


def annotate(the_type, the_value):
    """The value, unchanged: the type is TorchScript's hint for it."""
    return the_value


def isinstance(obj, target_type):  # noqa: A001 (PyTorch's name)
    """isinstance that understands container types: `torch.jit.isinstance(x, List[int])`."""
    return _isinstance(obj, target_type)


def script_if_tracing(fn):
    """Compile fn when it is first called during tracing: here fn itself."""
    return fn


def fork(func, *args, **kwargs):
    """Run func(*args, **kwargs) now; a completed Future holds its result (or its exception)."""
    fut = Future()
    try:
        fut.set_result(func(*args, **kwargs))
    except Exception as e:  # the Future carries it to wait(), as PyTorch's
        fut.set_exception(e)
    return fut


def wait(future):
    """The result of a Future from fork (raises what the task raised)."""
    return future.wait()


def _unwrap_optional(x):
    if x is None:
        raise AssertionError("Unwrapping null optional")
    return x


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """The module, unchanged (no TorchScript graph to freeze)."""
    if not hasattr(mod, "training"):
        raise RuntimeError("Freezing expects a ScriptModule as input. Please use "
                           "torch.jit.script or torch.jit.trace to script your 'nn.Module'.")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. "
                           "Please call .eval() on your module before freezing.")
    return mod


def optimize_for_inference(mod, other_methods=None):
    """The module in eval mode, otherwise unchanged."""
    if getattr(mod, "training", False):
        mod.eval()
    return mod


def run_frozen_optimizations(mod, optimize_numerics=True, preserved_methods=None):
    return None


def export_opnames(m):
    """TorchScript operator names of a scripted module: none here."""
    return []


_onednn = [False]


def enable_onednn_fusion(enabled):
    _onednn[0] = bool(enabled)


def onednn_fusion_enabled():
    return _onednn[0]


_fusion_strategy = [("STATIC", 2), ("DYNAMIC", 10)]


def set_fusion_strategy(strategy):
    """Accepted and remembered; returns the previous strategy, as PyTorch's."""
    global _fusion_strategy
    previous, _fusion_strategy = _fusion_strategy, list(strategy)
    return previous


class strict_fusion:
    """Context manager asserting TorchScript fusion: nothing to assert here."""

    def __init__(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, type, value, tb):
        pass


@contextlib.contextmanager
def fuser(name):
    yield


def _hide_source_ranges():
    return contextlib.nullcontext()


def save(m, f, _extra_files=None):
    """Pickle the module (or function) with torch.save: ndgrad's stand-in for a TorchScript
    archive (load it with torch.jit.load here; PyTorch's jit.load cannot read it)."""
    from ..serialization import save as _save
    from ._script import _deprecated
    _deprecated("torch.jit.save", "`torch.export`")
    _save({"__ndgrad_jit__": m, "extra_files": dict(_extra_files or {})}, f)


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """Load what torch.jit.save wrote here (a full pickle: only files you trust)."""
    import io
    import os
    import zipfile
    from ..serialization import load as _load
    from ._script import _deprecated
    _deprecated("torch.jit.load", "`torch.export`")
    if isinstance(f, (str, os.PathLike)):
        if not os.path.exists(f):
            raise ValueError(f"The provided filename {f} does not exist")
        if os.path.isdir(f):
            raise ValueError(f"The provided filename {f} is a directory")
    probe = f
    if isinstance(f, (str, os.PathLike)):
        probe = open(f, "rb")
    try:
        pos = probe.tell() if hasattr(probe, "tell") else None
        try:
            names = zipfile.ZipFile(probe).namelist()
        except zipfile.BadZipFile:
            names = []
        if pos is not None:
            probe.seek(pos)
        if any(n.split("/", 1)[-1].startswith("code/") for n in names):
            raise RuntimeError(
                "torch.jit.load: this is a TorchScript archive; ndgrad runs Python, not "
                "TorchScript, so it cannot load it. Save the model's state_dict with "
                "torch.save in PyTorch and load it into the Python module instead.")
        obj = _load(probe if not isinstance(f, (str, os.PathLike)) else f,
                    map_location=map_location, weights_only=False)
    finally:
        if probe is not f:
            probe.close()
    if isinstance(obj, dict) and "__ndgrad_jit__" in obj:
        if _extra_files is not None:
            for k in list(_extra_files):
                _extra_files[k] = obj["extra_files"].get(k, _extra_files[k])
        return obj["__ndgrad_jit__"]
    return obj
