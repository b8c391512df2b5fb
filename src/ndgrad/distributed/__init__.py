"""ndgrad.distributed: torch.distributed on MPI (mpi4py).

    import ndgrad.distributed as dist
    dist.init_process_group("gloo")         # or "mpi": both run on MPI
    dist.all_reduce(t, op=dist.ReduceOp.SUM)

Start the ranks with `python -m ndgrad.distributed.run --nproc_per_node=N script.py` or with
`mpiexec -n N python script.py`. mpi4py is imported on first use, not by `import ndgrad`.
"""
from .distributed_c10d import (  # noqa: F401
    Backend, GroupMember, ProcessGroup, ReduceOp, Work, group, all_gather,
    all_gather_into_tensor, all_gather_object, all_reduce, all_to_all, all_to_all_single,
    barrier, broadcast, broadcast_object_list, destroy_process_group, gather, gather_object,
    get_backend, get_global_rank, get_group_rank, get_process_group_ranks, get_rank,
    get_world_size, init_process_group, irecv, is_available, is_gloo_available, is_initialized,
    is_mpi_available, is_nccl_available, is_torchelastic_launched, isend, new_group, recv,
    reduce, reduce_scatter, reduce_scatter_tensor, scatter, scatter_object_list, send,
    P2POp, batch_isend_irecv, send_object_list, recv_object_list, monitored_barrier,
    get_node_local_rank, is_backend_available, DistError, DistBackendError, DistNetworkError,
    DistStoreError, QueueEmptyError)
from .distributed_c10d import __all__  # noqa: F401
from ._store import Store, HashStore, TCPStore, FileStore, PrefixStore  # noqa: F401,E402
