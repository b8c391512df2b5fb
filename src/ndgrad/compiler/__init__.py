"""`torch.compiler` on ndgrad: `torch.compile` returns its model unchanged (there is no
compiler), so `is_compiling()`, `is_dynamo_compiling()` and `is_exporting()` are False, and
`disable`, `allow_in_graph`, `assume_constant_result`, `substitute_in_graph` return what they
decorate. See torch._dynamo for the config."""
import contextlib

from .. import _dynamo
from .. import _config_module

__all__ = ["compile", "config", "assume_constant_result", "reset", "allow_in_graph",
           "substitute_in_graph", "list_backends", "disable", "set_default_backend",
           "get_default_backend", "set_stance", "set_enable_guard_collectives",
           "cudagraph_mark_step_begin", "load_compiled_function", "wrap_numpy", "is_compiling",
           "is_dynamo_compiling", "is_exporting", "save_cache_artifacts", "load_cache_artifacts",
           "nested_compile_region", "keep_portable_guards_unsafe",
           "skip_guard_on_inbuilt_nn_modules_unsafe", "skip_guard_on_all_nn_modules_unsafe",
           "keep_tensor_guards_unsafe", "skip_guard_on_globals_unsafe", "skip_all_guards_unsafe"]

config = _config_module.install(__name__ + ".config", {
    "job_id": None, "cache_key_tag": "", "dynamic_sources": "", "unbacked_sources": "",
    "force_disable_caches": False})
from . import config as _config_alias  # noqa: E402,F401


def compile(*args, **kwargs):
    from .. import compile as _compile
    return _compile(*args, **kwargs)


def is_compiling():
    """False: ndgrad never runs code under a compiler."""
    return False


def is_dynamo_compiling():
    return False


def is_exporting():
    return False


disable = _dynamo.disable
allow_in_graph = _dynamo.allow_in_graph
assume_constant_result = _dynamo.assume_constant_result
substitute_in_graph = _dynamo.substitute_in_graph
reset = _dynamo.reset
set_stance = _dynamo.set_stance


def list_backends(exclude_tags=("debug", "experimental")):
    return _dynamo.list_backends(exclude_tags)


_default_backend = ["inductor"]


def set_default_backend(backend):
    _default_backend[0] = backend


def get_default_backend():
    return _default_backend[0]


def set_enable_guard_collectives(enabled):
    return False


def cudagraph_mark_step_begin():
    """Marks a CUDA-graph step boundary: there are no CUDA graphs here."""


def wrap_numpy(fn):
    """Let fn, written on NumPy arrays, take and return Tensors."""
    import functools
    from .._tensor import Tensor

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        from .. import from_numpy, as_tensor
        conv = [a.numpy() if isinstance(a, Tensor) else a for a in args]
        kw = {k: v.numpy() if isinstance(v, Tensor) else v for k, v in kwargs.items()}
        out = fn(*conv, **kw)
        import numpy as np
        if isinstance(out, np.ndarray):
            return from_numpy(out)
        if isinstance(out, (tuple, list)):
            return type(out)(from_numpy(o) if isinstance(o, np.ndarray) else o for o in out)
        return out
    return wrapped


def save_cache_artifacts():
    return None


def load_cache_artifacts(serialized_artifacts):
    return None


def load_compiled_function(file, *, f_globals=None, external_data=None):
    raise RuntimeError("torch.compiler.load_compiled_function: ndgrad compiles nothing and "
                       "cannot load compiled artifacts")


def nested_compile_region(fn=None, **kwargs):
    if fn is None:
        return lambda f: f
    return fn


@contextlib.contextmanager
def _skip_guards():
    yield


keep_portable_guards_unsafe = skip_guard_on_inbuilt_nn_modules_unsafe = \
    skip_guard_on_all_nn_modules_unsafe = keep_tensor_guards_unsafe = \
    skip_guard_on_globals_unsafe = skip_all_guards_unsafe = lambda *a, **k: None


# Guard filters for torch.compile(options={"guard_filter_fn": ...}): each maps a list of guard
# entries to a list of keep flags, as PyTorch's. ndgrad's compile makes no guards (it runs the
# model as written), so they only ever meet entries a program builds itself.
def keep_portable_guards_unsafe(guard_entries):
    """Keep the global-state, shape-environment and non-global tensor guards."""
    return [g.guard_type in ("GLOBAL_STATE", "SHAPE_ENV")
            or (g.guard_type == "TENSOR_MATCH" and not g.is_global) for g in guard_entries]


def skip_guard_on_inbuilt_nn_modules_unsafe(guard_entries):
    """Skip the guards on built-in modules' attributes (torch.nn.Linear's, ...)."""
    return [not e.orig_guard.source.is_unspecialized_builtin_nn_module() for e in guard_entries]


def skip_guard_on_all_nn_modules_unsafe(guard_entries):
    """Skip the guards on every module's attributes."""
    return [not e.orig_guard.source.is_unspecialized_nn_module() for e in guard_entries]


def keep_tensor_guards_unsafe(guard_entries, keep_parameters=False):
    """Keep the tensor guards alone (on parameters too with keep_parameters)."""
    from ..nn.parameter import Parameter
    return [e.guard_type == "TENSOR_MATCH" and (keep_parameters or
                                                 not isinstance(e.value, Parameter))
            for e in guard_entries]


def skip_guard_on_globals_unsafe(guard_entries):
    """Skip the guards on globals."""
    return [not e.is_global for e in guard_entries]


def skip_all_guards_unsafe(guard_entries):
    """Skip every guard."""
    return [False for _ in guard_entries]
