"""ndgrad.distributed: torch.distributed on MPI (mpi4py).

    import ndgrad.distributed as dist
    dist.init_process_group("gloo")         # or "mpi": both run on MPI
    dist.all_reduce(t, op=dist.ReduceOp.SUM)

Start the ranks with `python -m ndgrad.distributed.run --nproc_per_node=N script.py` or with
`mpiexec -n N python script.py`. mpi4py is imported on first use, not by `import ndgrad`.
"""
from .distributed_c10d import *  # noqa: F401,F403
from .distributed_c10d import __all__ as _c10d_all
from .distributed_c10d import (  # noqa: F401
    AllgatherOptions, RedOpType, SHRINK_ABORT, SHRINK_DEFAULT, breakpoint)
from ._store import Store, HashStore, TCPStore, FileStore, PrefixStore  # noqa: F401,E402
from .rendezvous import rendezvous, register_rendezvous_handler  # noqa: F401,E402
from .device_mesh import DeviceMesh, init_device_mesh  # noqa: F401,E402

__all__ = _c10d_all + [
    "Store", "HashStore", "TCPStore", "FileStore", "PrefixStore", "rendezvous",
    "register_rendezvous_handler", "DeviceMesh", "init_device_mesh", "breakpoint"]
