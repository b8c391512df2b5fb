"""torch.nn.parallel: DistributedDataParallel (on ndgrad.distributed) and DataParallel (a CPU
pass-through, as PyTorch's without GPUs)."""
from .distributed import DistributedDataParallel  # noqa: F401
from .data_parallel import DataParallel, data_parallel  # noqa: F401

__all__ = ["DistributedDataParallel", "DataParallel", "data_parallel"]
