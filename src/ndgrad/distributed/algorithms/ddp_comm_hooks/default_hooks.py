"""The default DDP communication hook: average a bucket's gradients with one all-reduce."""
from ... import distributed_c10d as c10d

__all__ = ["allreduce_hook", "fp16_compress_hook"]


def allreduce_hook(process_group, bucket):
    """Divide the bucket by the group size, all-reduce it asynchronously; a Future of the
    averaged bucket tensor (what DistributedDataParallel does without a hook)."""
    pg = process_group if process_group is not None else c10d.group.WORLD
    tensor = bucket.buffer()
    tensor.div_(pg.size())
    work = c10d.all_reduce(tensor, group=pg, async_op=True, _check=False)
    return work.get_future().then(lambda fut: fut.value()[0])


def fp16_compress_hook(process_group, bucket):
    """The bucket cast to float16 and divided by the group size, all-reduced, and cast back into
    the bucket: a Future of the bucket tensor (half the bytes on the wire)."""
    from .... import float16
    pg = process_group if process_group is not None else c10d.group.WORLD
    buffer = bucket.buffer()
    compressed = buffer.to(float16).div_(pg.size())
    work = c10d.all_reduce(compressed, group=pg, async_op=True, _check=False)

    def decompress(fut):
        out = bucket.buffer()
        out.copy_(fut.value()[0])
        return out
    return work.get_future().then(decompress)
