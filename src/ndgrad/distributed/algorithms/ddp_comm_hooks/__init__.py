"""torch.distributed.algorithms.ddp_comm_hooks: hooks for DistributedDataParallel's gradient
reduction (register_comm_hook)."""
from . import default_hooks  # noqa: F401
