"""An ordinary PyTorch data-parallel training script: it runs under
`torchrun --nproc_per_node=2` with PyTorch and, unchanged, under
`python -m ndgrad.distributed.run --nproc_per_node=2 --as-torch` with ndgrad; both print the same
lines. Weights and data come from NumPy seeds (the two libraries' random generators differ)."""
import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.set_default_dtype(torch.float64)

rng = np.random.default_rng(0)
X = torch.from_numpy(rng.standard_normal((100, 4)))
w_true = torch.from_numpy(rng.standard_normal((4, 1)))
y = torch.tanh(X @ w_true) + 0.05 * torch.from_numpy(rng.standard_normal((100, 1)))
dataset = TensorDataset(X, y)
sampler = DistributedSampler(dataset, shuffle=False, drop_last=False)
loader = DataLoader(dataset, batch_size=10, sampler=sampler)

model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
init = np.random.default_rng(100 + rank)   # each rank starts elsewhere: DDP broadcasts rank 0's
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(0.5 * init.standard_normal(tuple(p.shape))))
ddp = DDP(model, bucket_cap_mb=0.0002)
opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)

for epoch in range(4):
    sampler.set_epoch(epoch)
    stats = torch.zeros(2)
    for i, (xb, yb) in enumerate(loader):
        if i % 2 == 0:
            with ddp.no_sync():      # accumulate two micro-batches per step
                loss = F.mse_loss(ddp(xb), yb) / 2
                loss.backward()
        else:
            loss = F.mse_loss(ddp(xb), yb) / 2
            loss.backward()
            opt.step()
            opt.zero_grad()
        stats += torch.stack([2 * loss.detach() * len(xb), torch.tensor(float(len(xb)))])
    dist.all_reduce(stats, op=dist.ReduceOp.SUM)
    if rank == 0:
        print(f"epoch {epoch}: loss {(stats[0] / stats[1]).item():.12f} over "
              f"{int(stats[1].item())} samples")

checksum = torch.stack([p.detach().sum() for p in ddp.module.parameters()]).sum()
everyone = [torch.zeros(()) for _ in range(world)]
dist.all_gather(everyone, checksum)
if rank == 0:
    print("parameters equal on every rank:", all(torch.equal(c, everyone[0]) for c in everyone))
    print(f"parameter checksum {checksum.item():.12f}")
    print(sorted(ddp.state_dict())[:2])
dist.destroy_process_group()
