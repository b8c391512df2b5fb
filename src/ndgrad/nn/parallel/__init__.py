"""torch.nn.parallel: DistributedDataParallel (on ndgrad.distributed)."""
from .distributed import DistributedDataParallel  # noqa: F401

__all__ = ["DistributedDataParallel"]
