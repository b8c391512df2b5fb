"""torch.fx._symbolic_trace: wrap (a pass-through) and is_fx_tracing (False)."""
import sys


def is_fx_tracing():
    return False


def wrap(fn_or_name):
    """PyTorch records fn as a leaf call during symbolic tracing; eager code runs it as is."""
    if not (callable(fn_or_name) or isinstance(fn_or_name, str)):
        raise RuntimeError("Unsupported type for global function! Must be either a callable "
                           "or string name")
    if sys._getframe(1).f_code.co_name != "<module>":   # PyTorch's rule
        raise NotImplementedError("wrap must be called at the top level of a module")
    return fn_or_name


class Tracer:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torch.fx.Tracer: ndgrad has no symbolic tracing (it runs "
                                  "programs eagerly)")


def symbolic_trace(root, concrete_args=None):
    raise NotImplementedError("torch.fx.symbolic_trace: ndgrad has no symbolic tracing (it runs "
                              "programs eagerly)")
