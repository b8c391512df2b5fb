"""ndgrad.distributed benchmarks on MPI: all-reduce bandwidth and DDP's overlap.

    python -m ndgrad.distributed.run --nproc_per_node=2 bench/distributed.py [--quick]

1. All-reduce (SUM, float32, in place) of 1 KB - 64 MB with `ndgrad.distributed.all_reduce`
   against raw mpi4py `Allreduce(MPI.IN_PLACE, array)` on the same buffers, interleaved round by
   call by call (each after a barrier); the minimum over calls of the slowest rank, bandwidth =
   message bytes / time. ndgrad's figure
   includes its agreement check (one 48-byte Allgather per call).
2. One training step (forward, backward, SGD) of an MLP with ~8 MB of float32 gradients: without
   DDP, with DDP (default buckets: all-reduces start during backward), with DDP and
   gradient_as_bucket_view=True (.grad lives in the bucket buffers, zero_grad(set_to_none=False):
   no copies), and the same gradients' all-reduces alone. The share of communication hidden behind backward is
   (t_local + t_comm - t_ddp) / t_comm (1 = all of it, 0 = none).
Rank 0 prints a Markdown table.
"""
import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

import ndgrad as torch  # noqa: E402
import ndgrad.distributed as dist  # noqa: E402
from ndgrad import nn  # noqa: E402
from ndgrad.nn.parallel import DistributedDataParallel as DDP  # noqa: E402


def once(fn, comm):
    """One call of fn, started together on every rank (a barrier first); seconds."""
    comm.Barrier()
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def best_of(fns, reps, comm):
    """Interleave the calls (A B A B ...) and keep each one's minimum, then the slowest rank's
    minimum: a collective takes as long as its slowest rank. The minimum is what the operation
    costs when the shared machine leaves the ranks alone."""
    from mpi4py import MPI
    best = {k: float("inf") for k in fns}
    for _ in range(reps):
        for k, fn in fns.items():
            best[k] = min(best[k], once(fn, comm))
    return {k: comm.allreduce(v, op=MPI.MAX) for k, v in best.items()}


def bench_allreduce(reps, sizes, comm, rank):
    from mpi4py import MPI
    raw_comm = comm.Dup()
    rows = []
    for nbytes in sizes:
        n = nbytes // 4
        t = torch.zeros(n, dtype=torch.float32)
        a = t.numpy()          # the same buffer: memory placement alone moves big-message times
        k = max(5, min(300, int(4e9 // nbytes) // 10))
        best = best_of({"ndgrad": lambda: dist.all_reduce(t),
                        "mpi4py": lambda: raw_comm.Allreduce(MPI.IN_PLACE, a)},
                       max(reps, k), comm)
        rows.append((nbytes, best["ndgrad"], best["mpi4py"]))
    raw_comm.Free()
    return rows


def human(nbytes):
    for unit in ("B", "KB", "MB"):
        if nbytes < 1024 or unit == "MB":
            return f"{nbytes:g} {unit}"
        nbytes /= 1024


def make_mlp(width, depth):
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.Tanh()]
    return nn.Sequential(*layers, nn.Linear(width, 10))


def bench_ddp(rounds, steps, comm, rank, width, depth, batch):
    torch.manual_seed(0)
    x = torch.randn(batch, width)
    y = torch.randint(0, 10, (batch,))
    loss_fn = nn.CrossEntropyLoss()

    local = make_mlp(width, depth)
    opt_l = torch.optim.SGD(local.parameters(), lr=1e-3)
    wrapped = make_mlp(width, depth)
    ddp = DDP(wrapped)
    opt_d = torch.optim.SGD(wrapped.parameters(), lr=1e-3)
    viewed = make_mlp(width, depth)
    ddp_view = DDP(viewed, gradient_as_bucket_view=True)
    opt_v = torch.optim.SGD(viewed.parameters(), lr=1e-3)
    flat = torch.zeros(sum(p.numel() for p in wrapped.parameters()))
    buckets = [b.sizes for b in ddp._buckets]

    def step(model, opt, set_to_none=True):
        opt.zero_grad(set_to_none=set_to_none)
        loss_fn(model(x), y).backward()
        opt.step()

    def comm_only():     # the same bucket all-reduces, nothing to hide them behind
        off = 0
        works = []
        for sizes in buckets:
            n = sum(sizes)
            piece = flat[off:off + n]
            piece.div_(2)
            works.append(dist.all_reduce(piece, async_op=True, _check=False))
            off += n
        for w in works:
            w.wait()

    for _ in range(2):       # warm up
        step(local, opt_l)
        step(ddp, opt_d)
        step(ddp_view, opt_v, set_to_none=False)
    best = best_of({"local": lambda: step(local, opt_l), "ddp": lambda: step(ddp, opt_d),
                    "view": lambda: step(ddp_view, opt_v, set_to_none=False),
                    "comm": comm_only}, steps, comm)
    nbytes = flat.numel() * 4
    return best, nbytes, len(buckets)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    dist.init_process_group("mpi")
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    rank, world = dist.get_rank(), dist.get_world_size()
    sizes = [1024 * 4 ** k for k in range(9)]          # 1 KB ... 64 MB
    rows = bench_allreduce(5 if args.quick else 20, sizes, comm, rank)
    width, depth, batch = (512, 4, 64) if args.quick else (1024, 2, 128)
    ddp, nbytes, nb = bench_ddp(0, 10 if args.quick else 30, comm, rank, width, depth, batch)
    if rank:
        return
    print(f"## ndgrad.distributed on {world} ranks (MPI: "
          f"{MPI.Get_library_version().splitlines()[0].strip()}, mpi4py "
          f"{__import__('mpi4py').__version__}, {os.cpu_count()} CPUs)\n")
    print("| message | ndgrad all_reduce | mpi4py Allreduce | ndgrad GB/s | mpi4py GB/s | "
          "ndgrad / mpi4py bandwidth |")
    print("|---|---|---|---|---|---|")
    for nbytes_, tn, tm in rows:
        print(f"| {human(nbytes_)} | {tn * 1e6:.1f} us | {tm * 1e6:.1f} us | "
              f"{nbytes_ / tn / 1e9:.3f} | {nbytes_ / tm / 1e9:.3f} | {tm / tn:.2f} |")
    hidden = (ddp["local"] + ddp["comm"] - ddp["ddp"]) / ddp["comm"]
    print(f"\nDDP step, MLP {width}x{depth} hidden layers, batch {batch}, "
          f"{nbytes / 2 ** 20:.1f} MB of gradients in {nb} buckets:\n")
    hidden_v = (ddp["local"] + ddp["comm"] - ddp["view"]) / ddp["comm"]
    print("| step without DDP | step with DDP | DDP, gradient_as_bucket_view | "
          "the all-reduces alone | communication hidden (DDP, bucket view) |")
    print("|---|---|---|---|---|")
    print(f"| {ddp['local'] * 1e3:.2f} ms | {ddp['ddp'] * 1e3:.2f} ms | "
          f"{ddp['view'] * 1e3:.2f} ms | {ddp['comm'] * 1e3:.2f} ms | "
          f"{100 * max(0.0, min(1.0, hidden)):.0f} %, {100 * max(0.0, min(1.0, hidden_v)):.0f} % |")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
