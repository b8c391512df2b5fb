"""torch.jit.script and ScriptModule on ndgrad (see jit/__init__.py): pass-throughs."""
import warnings

from .. import nn

__all__ = ["ScriptModule", "RecursiveScriptModule", "ScriptFunction", "script",
           "script_method", "Attribute", "interface", "CompilationUnit"]


class ScriptWarning(Warning):
    pass


class ScriptModule(nn.Module):
    """torch.jit.ScriptModule: an nn.Module (subclass it; its methods run as Python)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def save(self, f, **kwargs):
        from . import save
        save(self, f, **kwargs)

    def save_to_buffer(self, *args, **kwargs):
        import io
        buf = io.BytesIO()
        self.save(buf)
        return buf.getvalue()

    @property
    def code(self):
        raise RuntimeError("ndgrad runs modules as Python: there is no TorchScript code")

    @property
    def graph(self):
        raise RuntimeError("ndgrad runs modules as Python: there is no TorchScript graph")


class RecursiveScriptModule(ScriptModule):
    pass


class ScriptFunction:
    """torch.jit.ScriptFunction (the type; script(fn) returns fn itself here)."""


class _ScriptProfile:
    def enable(self):
        pass

    def disable(self):
        pass

    def dump_string(self):
        return ""


def _deprecated(name, instead="`torch.compile` or `torch.export`"):
    # PyTorch 2.13 warns on each call (DeprecationWarning, shown for __main__'s calls only)
    import sys
    if sys.version_info >= (3, 14):
        warnings.warn(f"`{name}` is not supported in Python 3.14+ and may break. "
                      f"Please switch to {instead}.", DeprecationWarning)
    else:
        warnings.warn(f"`{name}` is deprecated. Please switch to {instead}.",
                      DeprecationWarning)


def script_method(fn):
    _deprecated("torch.jit.script_method")
    return fn


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """`torch.jit.script`: returns obj itself (function, module or class); ndgrad runs it as
    Python, with the same results as eager PyTorch."""
    _deprecated("torch.jit.script")
    if optimize is not None:
        warnings.warn("`optimize` is deprecated and has no effect. Use `with "
                      "torch.jit.optimized_execution()` instead", FutureWarning, stacklevel=2)
    if isinstance(obj, RecursiveScriptModule) or hasattr(obj, "__script_if_tracing_wrapper"):
        return obj
    return obj


class Attribute:
    """torch.jit.Attribute(value, type): the value (TorchScript's type hint is dropped)."""

    def __new__(cls, value, type=None):
        return value


def interface(obj):
    """Mark a class as a TorchScript interface: the class, unchanged."""
    warnings.warn("`torch.jit.interface` is deprecated. Please use `torch.compile` instead.",
                  DeprecationWarning)
    if not isinstance(obj, type):
        raise RuntimeError("interface must be applied to a class")
    return obj


class CompilationUnit:
    """TorchScript compilation unit: ndgrad compiles no TorchScript source."""

    def __init__(self, lang=None, _frames_up=0):
        if lang is not None:
            raise RuntimeError("torch.jit.CompilationUnit: ndgrad cannot compile TorchScript "
                               "source; define the functions in Python")
