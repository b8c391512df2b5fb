"""skip_init: build a module without running its parameter initialisation."""
import inspect

from ..modules.module import Module
from ...autograd.grad_mode import no_grad

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """module_cls(*args, **kwargs) whose parameters and buffers are left uninitialized (their
    values are whatever fresh memory holds), as PyTorch's meta-device trick; the class must
    take a `device` argument."""
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    from .. import init as _init
    names = ("uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_",
             "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
             "kaiming_normal_", "orthogonal_", "sparse_")
    saved = {n: getattr(_init, n) for n in names}
    try:   # every nn.init call inside the constructors leaves its tensor as it is
        for n in names:
            setattr(_init, n, lambda tensor, *a, **k: tensor)
        module = module_cls(*args, **kwargs)
    finally:
        for n, f in saved.items():
            setattr(_init, n, f)
    from ..._backend import xp_of
    with no_grad():
        for t in list(module.parameters()) + list(module.buffers()):
            t._data = xp_of(t._data).empty_like(t._data)
    return module
