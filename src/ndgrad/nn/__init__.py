"""ndgrad.nn: modules, layers, losses, functional, init and utils with torch.nn's API."""
from .parameter import Parameter, Buffer, UninitializedParameter
from .modules import *  # noqa: F401,F403
from .modules import Module
from .modules.module import _IncompatibleKeys
from . import functional, init, utils
from . import parallel  # noqa: F401  (DistributedDataParallel; mpi4py loads on first use)
