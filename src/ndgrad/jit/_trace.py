"""torch.jit.trace on ndgrad: runs the function once on the example inputs (as PyTorch's
tracer does, so is_tracing() is True inside and errors surface at trace time) and returns it
unchanged: there is no graph to record, the Python code is what runs afterwards."""
import threading
import warnings

__all__ = ["trace", "trace_module", "is_tracing", "TracerWarning", "TracingCheckError"]

_state = threading.local()


class _TracingState:
    """What torch._C._get_tracing_state() returns while a trace runs (None otherwise)."""

    def __repr__(self):
        return "<tracing state>"


def _get_tracing_state():
    return getattr(_state, "current", None)


def is_tracing():
    """True while torch.jit.trace runs the traced function, as PyTorch's."""
    return _get_tracing_state() is not None


class TracerWarning(Warning):
    @staticmethod
    def ignore_lib_warnings():
        warnings.filterwarnings("ignore", category=TracerWarning, module="torch.(?!jit)")
        warnings.filterwarnings("ignore", "torch::jit::fuser::cuda")


class TracingCheckError(Exception):
    def __init__(self, graph_diff_error, tensor_compare_error, extra_msg=None):
        self.message = "Tracing failed sanity checks!\n"
        if extra_msg is not None:
            self.message += extra_msg + "\n"
        if graph_diff_error is not None:
            self.message += "ERROR: Graphs differed across invocations!\n" + graph_diff_error
        if tensor_compare_error is not None:
            self.message += ("ERROR: Tensor-valued Constant nodes differed in value across "
                             "invocations. This often indicates that the tracer has encountered "
                             "untraceable code.\n" + tensor_compare_error)
        super().__init__(self.message)


def _run_traced(fn, example_inputs, example_kwarg_inputs):
    from ..autograd.grad_mode import no_grad
    previous = _get_tracing_state()
    _state.current = _TracingState()
    try:
        with no_grad():
            if example_kwarg_inputs is not None:
                fn(**example_kwarg_inputs)
            elif example_inputs is not None:
                args = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
                fn(*args)
    finally:
        _state.current = previous


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-05, strict=True, _force_outplace=False,
          _module_class=None, _compilation_unit=None, example_kwarg_inputs=None,
          _store_inputs=True):
    """`torch.jit.trace`: runs `func` once on the example inputs and returns it as it is (a
    module stays the same module; a function the same function)."""
    from .. import nn
    from ._script import _deprecated
    _deprecated("torch.jit.trace")
    if example_inputs is None and example_kwarg_inputs is None:
        raise RuntimeError("example_kwarg_inputs or example_inputs must be provided.")
    if isinstance(func, nn.Module):
        _run_traced(func, example_inputs, example_kwarg_inputs)
        return func
    if not callable(func):
        raise RuntimeError(f"Type '{type(func).__name__}' cannot be traced. Only Tensors and "
                           "(possibly nested) Lists, Dicts, and Tuples of Tensors can be traced")
    _run_traced(func, example_inputs, example_kwarg_inputs)
    return func


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None,
                 check_tolerance=1e-05, strict=True, _force_outplace=False,
                 _module_class=None, _compilation_unit=None, example_inputs_is_kwarg=False,
                 _store_inputs=True):
    """`torch.jit.trace_module`: runs each named method on its inputs; returns the module."""
    from ._script import _deprecated
    _deprecated("torch.jit.trace_method")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    for name, example in inputs.items():
        method = getattr(mod, name)
        if example_inputs_is_kwarg:
            _run_traced(method, None, example)
        else:
            _run_traced(method, example, None)
    return mod
