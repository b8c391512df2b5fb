"""torch.distributed.constants: the default timeout of process groups."""
from datetime import timedelta

__all__ = ["default_pg_timeout", "default_pg_nccl_timeout"]

default_pg_timeout = timedelta(minutes=30)
# PyTorch's is None where it was built without NCCL, as ndgrad always is
default_pg_nccl_timeout = None
