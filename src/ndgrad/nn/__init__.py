"""ndgrad.nn: modules, layers, losses, functional, init and utils with torch.nn's API."""
from .parameter import Parameter, Buffer, UninitializedParameter, UninitializedBuffer
from .modules import *  # noqa: F401,F403
from .modules import Module
from .modules.module import _IncompatibleKeys
from . import functional, init, utils
import importlib as _importlib
# (`from .modules import *` bound nn.modules.utils here, and `from . import utils` keeps a bound
# name: torch.nn.utils is this package's utils)
utils = _importlib.import_module(__name__ + ".utils")
from . import parallel, attention  # (DistributedDataParallel: mpi4py loads on first use)
from .parallel import DataParallel


def factory_kwargs(kwargs):
    """The `device`/`dtype`/`memory_format` keywords of a module's constructor, merged with its
    `factory_kwargs` dict, as one dict (PyTorch's helper for module authors)."""
    if kwargs is None:
        return {}
    simple = {"device", "dtype", "memory_format"}
    expected = simple | {"factory_kwargs"}
    if not kwargs.keys() <= expected:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected}")
    r = dict(kwargs.get("factory_kwargs", {}))
    for k in simple:
        if k in kwargs:
            if k in r:
                raise TypeError(f"{k} specified twice, in **kwargs and in factory_kwargs")
            r[k] = kwargs[k]
    return r
