"""Run under mpiexec (2 or 3 ranks): every collective of ndgrad.distributed against the result
computed here from every rank's inputs. Prints "collectives ok <rank>" on every rank."""
import os
import sys

import numpy as np

import ndgrad as torch
import ndgrad.distributed as dist
from ndgrad.distributed import ReduceOp

assert "mpi4py" not in sys.modules or True
try:
    dist.all_reduce(torch.ones(1))
except ValueError as e:
    assert str(e) == ("Default process group has not been initialized, please make sure to call "
                      "init_process_group."), e
else:
    raise AssertionError("collective before init_process_group did not raise")
assert not dist.is_initialized()
dist.init_process_group("gloo", init_method="env://")
assert dist.is_initialized() and dist.get_backend() == "gloo"
rank, n = dist.get_rank(), dist.get_world_size()
assert os.environ["RANK"] == str(rank) and os.environ["WORLD_SIZE"] == str(n)
assert os.environ["LOCAL_RANK"] == str(rank) and "MASTER_ADDR" in os.environ
try:
    dist.init_process_group("gloo")
except ValueError as e:
    assert "twice" in str(e)


def value(r, shape, dtype, salt=0):
    """Rank r's input: distinct, exactly representable values."""
    size = int(np.prod(shape)) if shape else 1
    base = (np.arange(size) % 5 + 1 + r * 2 + salt) % 7 + 1
    if dtype is torch.bool:
        return torch.from_numpy(((np.arange(size) + r) % 3 == 0).reshape(shape))
    a = base.astype(dtype.np).reshape(shape)
    if dtype.is_complex:
        a = a + 1j * (base[::-1] % 3).astype(dtype.np).reshape(shape)
    return torch.from_numpy(np.array(a, dtype=dtype.np))


def reduce_all(op, arrays, dtype):
    stack = np.stack(arrays)
    if dtype is torch.bool:
        return {ReduceOp.SUM: stack.any(0), ReduceOp.PRODUCT: stack.all(0),
                ReduceOp.MIN: stack.min(0), ReduceOp.MAX: stack.max(0),
                ReduceOp.BAND: np.bitwise_and.reduce(stack, 0),
                ReduceOp.BOR: np.bitwise_or.reduce(stack, 0),
                ReduceOp.BXOR: np.bitwise_xor.reduce(stack, 0)}[op]
    f = {ReduceOp.SUM: lambda s: s.sum(0), ReduceOp.PRODUCT: lambda s: s.prod(0),
         ReduceOp.MIN: lambda s: s.min(0), ReduceOp.MAX: lambda s: s.max(0),
         ReduceOp.AVG: lambda s: s.sum(0) / len(arrays),
         ReduceOp.BAND: lambda s: np.bitwise_and.reduce(s, 0),
         ReduceOp.BOR: lambda s: np.bitwise_or.reduce(s, 0),
         ReduceOp.BXOR: lambda s: np.bitwise_xor.reduce(s, 0)}[op]
    return f(stack).astype(stack.dtype)


def same(t, expected, what):
    got = t.numpy()
    assert got.dtype == np.asarray(expected).dtype, (what, got.dtype, np.asarray(expected).dtype)
    assert got.shape == np.asarray(expected).shape, (what, got.shape)
    np.testing.assert_array_equal(got, expected, err_msg=str(what))


DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
          torch.float16, torch.float32, torch.float64, torch.complex64, torch.complex128]
SHAPES = [(), (0,), (7,), (2, 3)]
OPS = [ReduceOp.SUM, ReduceOp.PRODUCT, ReduceOp.MIN, ReduceOp.MAX, ReduceOp.AVG,
       ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR]


def allowed(op, dtype):
    if dtype.is_complex:
        return op in (ReduceOp.SUM, ReduceOp.AVG)
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR):
        return not dtype.is_floating_point
    if op is ReduceOp.AVG:
        return dtype.is_floating_point
    return True


# ---- all_reduce: every op x dtype x shape, sync and async, and a non-contiguous tensor
for dtype in DTYPES:
    for op in OPS:
        for shape in SHAPES:
            t = value(rank, shape, dtype)
            if not allowed(op, dtype):
                try:
                    dist.all_reduce(t, op=op)
                except (RuntimeError, ValueError):
                    continue
                raise AssertionError(f"all_reduce {op} on {dtype} did not raise")
            expected = reduce_all(op, [value(r, shape, dtype).numpy() for r in range(n)], dtype)
            ptr = t.data_ptr()
            dist.all_reduce(t, op=op)
            same(t, expected, ("all_reduce", dtype, op, shape))
            assert t.data_ptr() == ptr
            t = value(rank, shape, dtype)
            w = dist.all_reduce(t, op=op, async_op=True)
            assert w.wait() is True and w.is_completed()
            same(t, expected, ("all_reduce async", dtype, op, shape))
            assert w.result()[0] is t

t = value(rank, (3, 4), torch.float64).t()
expected = sum(value(r, (3, 4), torch.float64).numpy() for r in range(n)).T
dist.all_reduce(t)
same(t, expected, "non-contiguous all_reduce")

# an async all_reduce completes through is_completed() polling, and through its future
t = value(rank, (1000,), torch.float64)
w = dist.all_reduce(t, async_op=True)
while not w.is_completed():
    pass
same(t, sum(value(r, (1000,), torch.float64).numpy() for r in range(n)), "polled")
t = value(rank, (5,), torch.float32)
fut = dist.all_reduce(t, async_op=True).get_future().then(lambda f: f.value()[0] * 2)
same(fut.wait(), 2 * sum(value(r, (5,), torch.float32).numpy() for r in range(n)), "future")

# ---- reduce, broadcast
for dtype in DTYPES:
    for shape in SHAPES:
        for root in range(n):
            t = value(rank, shape, dtype)
            before = t.numpy().copy()
            op = ReduceOp.MAX if not dtype.is_complex else ReduceOp.SUM
            dist.reduce(t, dst=root, op=op)
            exp = reduce_all(op, [value(r, shape, dtype).numpy() for r in range(n)], dtype)
            same(t, exp if rank == root else before, ("reduce", dtype, shape, root))
            t = value(rank, shape, dtype)
            w = dist.broadcast(t, src=root, async_op=(root == 1))
            if w is not None:
                w.wait()
            same(t, value(root, shape, dtype).numpy(), ("broadcast", dtype, shape, root))

# ---- all_gather, all_gather_into_tensor, gather, scatter
for dtype in DTYPES:
    for shape in SHAPES:
        t = value(rank, shape, dtype)
        out = [torch.zeros(shape, dtype=dtype) for _ in range(n)]
        dist.all_gather(out, t)
        for r in range(n):
            same(out[r], value(r, shape, dtype).numpy(), ("all_gather", dtype, shape))
        big = torch.zeros((n,) + shape, dtype=dtype)
        dist.all_gather_into_tensor(big, t, async_op=True).wait()
        same(big, np.stack([value(r, shape, dtype).numpy() for r in range(n)]),
             ("all_gather_into_tensor", dtype, shape))
        root = n - 1
        lst = [torch.zeros(shape, dtype=dtype) for _ in range(n)] if rank == root else None
        dist.gather(t, lst, dst=root)
        if rank == root:
            for r in range(n):
                same(lst[r], value(r, shape, dtype).numpy(), ("gather", dtype, shape))
        out = torch.zeros(shape, dtype=dtype)
        src = [value(r, shape, dtype, salt=3) for r in range(n)] if rank == 0 else None
        dist.scatter(out, src, src=0)
        same(out, value(rank, shape, dtype, salt=3).numpy(), ("scatter", dtype, shape))

# ---- reduce_scatter, reduce_scatter_tensor
for dtype in (torch.int64, torch.float32, torch.float64, torch.bool, torch.float16):
    for shape in ((), (3,), (2, 2)):
        inputs = [value(rank, shape, dtype, salt=s) for s in range(n)]
        out = torch.zeros(shape, dtype=dtype)
        dist.reduce_scatter(out, inputs, op=ReduceOp.SUM)
        same(out, reduce_all(ReduceOp.SUM, [value(r, shape, dtype, salt=rank).numpy()
                                            for r in range(n)], dtype), ("reduce_scatter", dtype))
        big = torch.from_numpy(np.stack([i.numpy() for i in inputs]))
        out = torch.zeros(shape, dtype=dtype)
        dist.reduce_scatter_tensor(out, big, op=ReduceOp.MAX, async_op=True).wait()
        same(out, reduce_all(ReduceOp.MAX, [value(r, shape, dtype, salt=rank).numpy()
                                            for r in range(n)], dtype), ("rs_tensor", dtype))
out = torch.zeros(2, dtype=torch.float64)
dist.reduce_scatter_tensor(out, torch.ones(2 * n, dtype=torch.float64) * (rank + 1),
                           op=ReduceOp.AVG)
same(out, np.full(2, sum(range(1, n + 1)) / n), "reduce_scatter AVG")

# ---- all_to_all (sizes differ per pair), all_to_all_single
for dtype in (torch.float64, torch.int32, torch.bool):
    inputs = [value(rank, (rank + s + 1,), dtype, salt=s) for s in range(n)]
    outs = [torch.zeros(s + rank + 1, dtype=dtype) for s in range(n)]
    dist.all_to_all(outs, inputs)
    for s in range(n):
        same(outs[s], value(s, (s + rank + 1,), dtype, salt=rank).numpy(), ("all_to_all", dtype))
    x = torch.from_numpy(np.arange(n * 2 * 3).reshape(n * 2, 3) + 100 * rank).to(dtype)
    y = torch.zeros(n * 2, 3, dtype=dtype)
    dist.all_to_all_single(y, x, async_op=True).wait()
    exp = np.concatenate([(np.arange(n * 2 * 3).reshape(n * 2, 3) + 100 * s)[2 * rank:2 * rank + 2]
                          for s in range(n)]).astype(dtype.np)
    same(y, exp, ("all_to_all_single", dtype))
# uneven splits: rank r sends s+1 rows to rank s
in_splits = [s + 1 for s in range(n)]
out_splits = [rank + 1] * n
x = torch.arange(float(sum(in_splits))).reshape(-1, 1) + 10 * rank
y = torch.zeros(sum(out_splits), 1)
dist.all_to_all_single(y, x, out_splits, in_splits)
exp = np.concatenate([(np.arange(float(sum(in_splits))) + 10 * s)[sum(in_splits[:rank]):
                                                                 sum(in_splits[:rank + 1])]
                      for s in range(n)]).reshape(-1, 1).astype(np.float32)
same(y, exp, "all_to_all_single uneven")

# ---- send / recv / isend / irecv: a ring
nxt, prv = (rank + 1) % n, (rank - 1) % n
t = value(rank, (4,), torch.float64)
got = torch.zeros(4, dtype=torch.float64)
if rank % 2 == 0:
    dist.send(t, nxt)
    assert dist.recv(got, prv) == prv
else:
    assert dist.recv(got) == prv
    dist.send(t, nxt)
same(got, value(prv, (4,), torch.float64).numpy(), "send/recv")
got = torch.zeros((2, 2), dtype=torch.int16)
rq = dist.irecv(got, src=prv, tag=5)
sq = dist.isend(value(rank, (2, 2), torch.int16), dst=nxt, tag=5)
sq.wait()
rq.wait()
assert rq.is_completed()
same(got, value(prv, (2, 2), torch.int16).numpy(), "isend/irecv")
try:
    dist.send(t, rank)
except ValueError as e:
    assert "should not be the same as rank" in str(e)
else:
    raise AssertionError("send to self")

# batch_isend_irecv and object point-to-point
got = torch.zeros(3, dtype=torch.int64)
works = dist.batch_isend_irecv([dist.P2POp(dist.irecv, got, prv),
                                dist.P2POp(dist.isend, torch.full((3,), rank), nxt)])
for w in works:
    w.wait()
same(got, np.full(3, prv), "batch_isend_irecv")
box = [None, None]
if rank == 0:
    dist.send_object_list([{"a": 1}, "b"], dst=n - 1)
if rank == n - 1:
    assert dist.recv_object_list(box, src=0) == 0 and box == [{"a": 1}, "b"], box
dist.monitored_barrier(timeout=60)
assert dist.get_node_local_rank() == rank

# ---- barrier, object collectives
dist.barrier()
dist.barrier(async_op=True).wait()
objs = [{"r": rank}, None] if rank == 1 else [None, None]
dist.broadcast_object_list(objs, src=1)
assert objs == [{"r": 1}, None], objs
every = [None] * n
dist.all_gather_object(every, ("hi", rank, torch.tensor([rank])))
assert [e[1] for e in every] == list(range(n)) and all(int(e[2]) == i for i, e in enumerate(every))
g = [None] * n if rank == 0 else None
dist.gather_object(rank * 10, g, dst=0)
if rank == 0:
    assert g == [r * 10 for r in range(n)]
out = [None]
dist.scatter_object_list(out, [f"to{r}" for r in range(n)] if rank == n - 1 else None, src=n - 1)
assert out == [f"to{rank}"]

# ---- groups: a subgroup of ranks {0, n-1}; src/dst are global ranks
members = [0, n - 1]
sub = dist.new_group(members)
if rank in members:
    assert dist.get_rank(sub) == members.index(rank) and dist.get_world_size(sub) == 2
    assert dist.get_process_group_ranks(sub) == members
    t = torch.tensor([float(rank + 1)])
    dist.all_reduce(t, group=sub)
    same(t, np.array([1.0 + n], np.float32), "group all_reduce")
    t = torch.tensor([float(rank)])
    dist.broadcast(t, src=n - 1, group=sub)
    same(t, np.array([n - 1.0], np.float32), "group broadcast")
    every = [None, None]
    dist.all_gather_object(every, rank, group=sub)
    assert every == members
else:
    assert sub is dist.GroupMember.NON_GROUP_MEMBER
    assert dist.get_rank(sub) == -1
    assert dist.all_reduce(torch.ones(1), group=sub) is None
whole = dist.new_group()
t = torch.ones(2)
dist.all_reduce(t, group=whole)
same(t, np.full(2, n, np.float32), "new_group()")
try:
    dist.new_group([0, n])
except ValueError as e:
    assert "within the world_size" in str(e)
else:
    raise AssertionError("new_group out of range")

# ---- mismatches are caught on every rank, no hang
for bad in [lambda: dist.all_reduce(torch.ones(3 + rank)),
            lambda: dist.all_reduce(torch.ones(3, dtype=torch.float64 if rank else torch.float32)),
            lambda: dist.broadcast(torch.ones(2), src=rank),
            lambda: dist.all_reduce(torch.ones(2), op=ReduceOp.SUM if rank else ReduceOp.MAX),
            lambda: (dist.all_reduce if rank else dist.broadcast)(torch.ones(2)),
            lambda: dist.all_gather([torch.ones(2)] * (n if rank else n + 1), torch.ones(2)),
            lambda: dist.all_reduce(torch.ones(2) if rank else [1.0, 2.0]),
            lambda: dist.broadcast(torch.ones(2), src=n + 5 if rank == 0 else 0),
            lambda: dist.all_to_all_single(torch.zeros(n * (2 if rank else 1)),
                                           torch.zeros(n * (2 if rank else 1)))]:
    try:
        bad()
    except (RuntimeError, ValueError, TypeError) as e:
        assert ("ndgrad.distributed" in str(e) or "one tensor per rank" in str(e)
                or "must be Tensor" in str(e) or "not part of group" in str(e)), e
    else:
        raise AssertionError("mismatch not detected")
# the group still works afterwards
t = torch.ones(1)
dist.all_reduce(t)
same(t, np.full(1, n, np.float32), "after mismatches")

# ---- explicit rank/world_size that contradict MPI
dist.destroy_process_group()
assert not dist.is_initialized()
for kw in ({"world_size": n + 1}, {"rank": (rank + 1) % n} if n > 1 else {"rank": 5}):
    try:
        dist.init_process_group("mpi", **kw)
    except ValueError as e:
        assert "contradicts MPI" in str(e), e
    else:
        raise AssertionError(f"init_process_group({kw}) did not raise")
dist.init_process_group("mpi", rank=rank, world_size=n)
assert dist.get_backend() == "mpi"
dist.destroy_process_group()
print(f"collectives ok {rank}", flush=True)
