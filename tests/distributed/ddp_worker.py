"""Run under mpiexec: DistributedDataParallel training equals one-process training on the
concatenated batch (float64), with no_sync accumulation, unused parameters, buffers and a comm
hook. Prints "ddp ok" on every rank."""
import contextlib

import numpy as np

import ndgrad as torch
import ndgrad.distributed as dist
import ndgrad.nn as nn
from ndgrad.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
B = 4
rng = np.random.default_rng(0)
X = torch.from_numpy(rng.standard_normal((6, world * B, 5)))
Y = torch.from_numpy(rng.standard_normal((6, world * B, 2)))


class Net(nn.Module):
    def __init__(self, unused=False):
        super().__init__()
        self.a = nn.Linear(5, 16)
        self.bn = nn.BatchNorm1d(16)
        self.b = nn.Linear(16, 8)
        self.c = nn.Linear(8, 2)
        self.extra = nn.Linear(5, 2)     # used on odd steps only when `unused`
        self.unused = unused
        self.step = 0

    def forward(self, x):
        h = self.c(torch.tanh(self.b(torch.tanh(self.bn(self.a(x))))))
        if not self.unused or self.step % 2:
            h = h + self.extra(x)
        return h


def make(unused, seed):
    torch.manual_seed(seed)
    return Net(unused).double()


def train(model, opt, step_batches, ddp=None, set_to_none=True):
    """Each optimizer step sees `accumulate` micro-batches."""
    for k, (xs, ys) in enumerate(step_batches):
        opt.zero_grad(set_to_none=set_to_none)
        for m, (x, y) in enumerate(zip(xs, ys)):
            net = ddp if ddp is not None else model
            model.step = k
            last = m == len(xs) - 1
            ctx = ddp.no_sync() if ddp is not None and not last else contextlib.nullcontext()
            with ctx:
                loss = ((net(x) - y) ** 2).mean() / len(xs)
                loss.backward()
        opt.step()


def batches(accumulate, local):
    out = []
    for k in range(0, 6, accumulate):
        xs, ys = [], []
        for m in range(accumulate):
            x, y = X[k + m], Y[k + m]
            if local:
                x, y = x[rank * B:(rank + 1) * B], y[rank * B:(rank + 1) * B]
            xs.append(x)
            ys.append(y)
        out.append((xs, ys))
    return out


def check(unused, accumulate, bucket_cap_mb, hook=False, as_view=False, set_to_none=True):
    ref = make(unused, 1)
    opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    model = make(unused, 100 + rank)   # different init per rank: DDP broadcasts rank 0's
    if rank == 0:
        model.load_state_dict(ref.state_dict())
    ddp = DDP(model, bucket_cap_mb=bucket_cap_mb, find_unused_parameters=unused,
              gradient_as_bucket_view=as_view)
    early = []
    if hook:
        from ndgrad.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook

        def recording_hook(state, bucket):
            # a bucket's all-reduce starts while backward still has gradients to compute
            early.append(len(ddp._ready) < len(ddp._params))
            assert state == "state" and len(bucket.parameters()) == len(bucket.gradients())
            return allreduce_hook(None, bucket)
        ddp.register_comm_hook("state", recording_hook)
        assert len(ddp._buckets) > 1
    assert all(k.startswith("module.") for k in ddp.state_dict())
    assert ddp.module is model
    dopt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    ref.bn.eval()   # batch statistics would differ per rank's batch: use the running ones
    model.bn.eval()
    train(ref, opt, batches(accumulate, False), set_to_none=set_to_none)
    train(model, dopt, batches(accumulate, True), ddp=ddp, set_to_none=set_to_none)
    if as_view:      # .grad lives in the bucket buffers
        flats = [b.flat for b in ddp._buckets]
        assert all(any(np.shares_memory(p.grad.numpy(), f) for f in flats)
                   for p in model.parameters() if p.grad is not None and
                   not (unused and (p is model.extra.weight or p is model.extra.bias)))
    if hook:
        assert any(early), early
    for (name, p), q in zip(ref.named_parameters(), model.parameters()):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-12,
                                   atol=1e-12, err_msg=name)
    # every rank holds the same parameters
    for p in model.parameters():
        every = [torch.zeros_like(p) for _ in range(world)]
        dist.all_gather(every, p.detach())
        for e in every:
            assert torch.equal(e, p.detach())


check(unused=False, accumulate=1, bucket_cap_mb=25)
check(unused=False, accumulate=2, bucket_cap_mb=0.0001, hook=True)  # tiny buckets, no_sync
check(unused=True, accumulate=1, bucket_cap_mb=0.0005)
check(unused=True, accumulate=3, bucket_cap_mb=0.0002, hook=True)
check(unused=False, accumulate=2, bucket_cap_mb=0.0001, as_view=True, set_to_none=False)
check(unused=False, accumulate=1, bucket_cap_mb=25, as_view=True)
check(unused=True, accumulate=2, bucket_cap_mb=0.0003, as_view=True, set_to_none=False)

# buffers are broadcast from rank 0 at construction and before each forward
m = make(False, 7 + rank)
m.bn.running_mean.fill_(float(rank))
ddp = DDP(m)
assert float(m.bn.running_mean.sum()) == 0.0
ddp(torch.ones(3, 5, dtype=torch.float64))

# an unused parameter without find_unused_parameters: PyTorch's error at the next forward
m = make(True, 3)
ddp = DDP(m)
m.step = 0
ddp(X[0][:B]).sum().backward()
try:
    ddp(X[0][:B])
except RuntimeError as e:
    assert "Expected to have finished reduction in the prior iteration" in str(e), e
else:
    raise AssertionError("no error for an unused parameter")

# DDP over a subgroup: ranks 0 and world-1 train together, the others are not involved
sub = dist.new_group([0, world - 1])
if rank in (0, world - 1):
    m = make(False, 60 + rank)
    ddp = DDP(m, process_group=sub)
    ((ddp(X[0][rank * B:(rank + 1) * B]) - 1) ** 2).mean().backward()
    for p in m.parameters():
        pair = [torch.zeros_like(p.grad), torch.zeros_like(p.grad)]
        dist.all_gather(pair, p.grad, group=sub)
        assert torch.equal(pair[0], pair[1])

# DistributedSampler takes num_replicas and rank from the default group
from ndgrad.utils.data import DistributedSampler
s = DistributedSampler(range(11), shuffle=False)
assert (s.num_replicas, s.rank) == (world, rank)
assert list(s) == list(DistributedSampler(range(11), world, rank, shuffle=False))
print(f"ddp ok {rank}", flush=True)
dist.destroy_process_group()
