"""torch.nn.parallel: DistributedDataParallel (on ndgrad.distributed) and DataParallel (a CPU
pass-through, as PyTorch's without GPUs)."""
from .distributed import DistributedDataParallel  # noqa: F401
from .data_parallel import DataParallel, data_parallel  # noqa: F401
from .scatter_gather import scatter, gather  # noqa: F401
from .replicate import replicate  # noqa: F401
from .parallel_apply import parallel_apply  # noqa: F401

__all__ = ["replicate", "scatter", "parallel_apply", "gather", "data_parallel", "DataParallel",
           "DistributedDataParallel"]
