"""`torch.fx`, the part libraries touch while running eagerly: `wrap` (marks a function as a
leaf for symbolic tracing: here it returns the function unchanged), `Proxy` for isinstance
checks, `_symbolic_trace.is_fx_tracing()` (always False) and
`experimental.proxy_tensor.get_proxy_mode()` (None). Symbolic tracing itself, which records a
program as a graph of torch ops for compilers, is not available: `symbolic_trace` and Tracer
raise NotImplementedError."""
from . import _symbolic_trace, experimental  # noqa: F401
from ._symbolic_trace import wrap, symbolic_trace, Tracer, is_fx_tracing  # noqa: F401


class Proxy:
    """Symbolic values during tracing; none exist here (no tracing)."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torch.fx.Proxy: ndgrad has no symbolic tracing")


class GraphModule:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torch.fx.GraphModule: ndgrad has no symbolic tracing")
