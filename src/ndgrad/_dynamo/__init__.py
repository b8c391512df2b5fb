"""`torch._dynamo` on ndgrad: there is no bytecode compiler, so the decorators return their
function unchanged, `is_compiling()` is False, `optimize(...)` returns an identity decorator,
`mark_dynamic`/`mark_static*` record nothing, and `config` holds PyTorch's settings (readable,
settable, patchable) without effect. Results are those of eager execution."""
import functools

from .. import _config_module
from . import exc  # noqa: F401

__all__ = ["allow_in_graph", "assume_constant_result", "config", "disable", "disallow_in_graph",
           "dont_skip_tracing", "export", "explain", "forbid_in_graph", "graph_break",
           "is_compiling", "list_backends", "lookup_backend", "mark_dynamic",
           "maybe_mark_dynamic", "mark_static", "mark_static_address", "nonstrict_trace",
           "optimize", "optimize_assert", "OptimizedModule", "register_backend", "reset", "run",
           "set_stance", "skip_frame", "substitute_in_graph", "is_dynamo_disable_recursive"]

config = _config_module.install(__name__ + ".config", {
    "verbose": False, "suppress_errors": False, "cache_size_limit": 8,
    "accumulated_cache_size_limit": 256, "recompile_limit": 8, "accumulated_recompile_limit": 256,
    "capture_scalar_outputs": False, "capture_dynamic_output_shape_ops": False,
    "assume_static_by_default": True, "automatic_dynamic_shapes": True,
    "specialize_int": False, "specialize_float": False, "dynamic_shapes": True,
    "optimize_ddp": True, "log_level": 30, "inline_inbuilt_nn_modules": True,
    "allow_unspec_int_on_nn_module": False, "error_on_recompile": False,
    "force_parameter_static_shapes": True, "guard_nn_modules": False,
    "skip_nnmodule_hook_guards": True, "cache_size_limit_hit_warning": True,
    "raise_on_ctx_manager_usage": True, "replay_record_enabled": False,
    "rewrite_assert_with_torch_assert": True, "trace_numpy": True,
    "use_lazy_graph_module": True, "compiled_autograd": False,
    "enable_cpp_guard_manager": True, "prefer_deferred_runtime_asserts_over_guards": False,
    "do_not_emit_runtime_asserts": False, "capture_autograd_function": True,
    "capture_func_transforms": True, "skip_fsdp_hooks": True,
    "allow_rnn": False, "optimize_user_defined_triton_kernels": True,
})
from . import config as _config_alias  # noqa: E402,F401  (`import torch._dynamo.config`)


def _identity_decorator(fn=None, **kwargs):
    if fn is None:
        return lambda f: f
    return fn


def disable(fn=None, recursive=True, *, reason=None, wrapping=True):
    """Run fn without compiling it: fn itself (nothing compiles here)."""
    if fn is None:
        return lambda f: f
    return fn


def is_compiling():
    """False: nothing runs under a compiler here."""
    return False


def is_dynamo_disable_recursive(fn):
    return None


def allow_in_graph(fn):
    return fn


def disallow_in_graph(fn):
    return fn


def forbid_in_graph(fn):
    return fn


def assume_constant_result(fn):
    return fn


def substitute_in_graph(original_fn, *, can_constant_fold_through=False, skip_signature_check=False,
                        is_embedded_type=None):
    return lambda polyfill: polyfill


def nonstrict_trace(traceable_fn):
    return traceable_fn


def dont_skip_tracing(fn=None):
    return _identity_decorator(fn)


def graph_break(msg=""):
    """A graph break where a compiler would make one: nothing to break."""


def skip_frame(msg=""):
    pass


def mark_dynamic(t, index, *, min=None, max=None, specialize_on=None):
    """Mark a dimension as dynamic for the compiler: shapes are always dynamic here."""


def maybe_mark_dynamic(t, index):
    pass


def mark_static(t, index=None):
    pass


def mark_static_address(t, guard=True):
    pass


def reset():
    """Clear compiled code caches: there are none."""


def reset_code_caches():
    pass


def set_stance(stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
    """Accepted; returns a context manager and decorator that changes nothing."""
    import contextlib
    return contextlib.nullcontext()


_backends = {"eager": None, "aot_eager": None, "inductor": None, "cudagraphs": None}


def list_backends(exclude_tags=("debug", "experimental")):
    return sorted(k for k in _backends if k != "eager" or not exclude_tags)


def lookup_backend(compiler_fn):
    if isinstance(compiler_fn, str):
        if compiler_fn not in _backends:
            from .exc import InvalidBackend
            raise InvalidBackend(name=compiler_fn)
        return _backends[compiler_fn]
    return compiler_fn


def register_backend(compiler_fn=None, name=None, tags=()):
    if compiler_fn is None:
        return lambda fn: register_backend(fn, name=name, tags=tags)
    _backends[name or compiler_fn.__name__] = compiler_fn
    return compiler_fn


def optimize(*args, **kwargs):
    """`torch._dynamo.optimize(backend)`: a decorator that returns the function unchanged."""
    return _identity_decorator


optimize_assert = optimize


def run(fn=None):
    return _identity_decorator(fn)


class OptimizedModule:
    """The type torch.compile wraps modules in under PyTorch (torch.compile returns the module
    itself here, so no object is ever one; isinstance checks answer False)."""

    def __init__(self, mod, dynamo_ctx=None):
        self._orig_mod = mod


def explain(f, *extra_args, **extra_kwargs):
    raise NotImplementedError("torch._dynamo.explain: ndgrad has no graph compiler to explain")


def export(f, *extra_args, **extra_kwargs):
    raise NotImplementedError("torch._dynamo.export: ndgrad has no graph compiler; see "
                              "torch.export")
