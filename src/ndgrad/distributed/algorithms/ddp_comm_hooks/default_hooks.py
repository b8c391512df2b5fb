"""The default DDP communication hook: average a bucket's gradients with one all-reduce."""
from ... import distributed_c10d as c10d

__all__ = ["allreduce_hook"]


def allreduce_hook(process_group, bucket):
    """Divide the bucket by the group size, all-reduce it asynchronously; a Future of the
    averaged bucket tensor (what DistributedDataParallel does without a hook)."""
    pg = process_group if process_group is not None else c10d.group.WORLD
    tensor = bucket.buffer()
    tensor.div_(pg.size())
    work = c10d.all_reduce(tensor, group=pg, async_op=True, _check=False)
    return work.get_future().then(lambda fut: fut.value()[0])
