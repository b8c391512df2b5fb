"""The digits demo trained data-parallel: DistributedDataParallel over MPI ranks.

    python -m ndgrad.distributed.run --nproc_per_node=2 -m ndgrad.examples.digits_ddp
    mpiexec -n 2 python -m ndgrad.examples.digits_ddp --epochs 10

Same model, data split, optimizer and schedule as `python -m ndgrad.examples.digits`; each rank
trains on its DistributedSampler share of every epoch with a per-rank batch of
batch_size / world_size, so one optimizer step sees the same global batch size as the
one-process demo and the test accuracy is the same (>= 97 % for the CNN). Rank 0 prints, evaluates
and saves the checkpoint (the unwrapped model's state_dict). Needs mpi4py and an MPI
(pip install "ndgrad[distributed,examples]").
"""
import argparse
import os
import sys

import ndgrad as torch
import ndgrad.distributed as dist
from ndgrad import nn
from ndgrad.nn.parallel import DistributedDataParallel as DDP
from ndgrad.utils.data import DataLoader, DistributedSampler

from .digits import _one_blas_thread, _require, build_model, evaluate, load_data


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m ndgrad.examples.digits_ddp",
                                description=__doc__.split("\n")[0])
    p.add_argument("--model", choices=["cnn", "mlp"], default="cnn")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=32, help="global batch (all ranks)")
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="digits_ddp_out", help="folder for the checkpoint")
    args = p.parse_args(argv)
    if args.epochs < 1 or args.batch_size < 1 or not args.lr > 0:
        p.error("--epochs and --batch-size must be at least 1 and --lr positive")
    return args


def main(argv=None):
    args = parse_args(argv)
    _require()
    if not dist.is_available():
        raise SystemExit("digits_ddp needs mpi4py: pip install \"ndgrad[distributed]\"")
    dist.init_process_group("gloo")
    try:
        with _one_blas_thread():
            return _run(args)
    finally:
        dist.destroy_process_group()


def _run(args):
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.batch_size % world:
        raise SystemExit(f"--batch-size {args.batch_size} must be divisible by the number of "
                         f"ranks ({world})")
    torch.manual_seed(args.seed)
    train_set, test_set = load_data(args.seed)
    sampler = DistributedSampler(train_set, shuffle=True, seed=args.seed)
    train_loader = DataLoader(train_set, batch_size=args.batch_size // world, sampler=sampler)
    test_loader = DataLoader(test_set, batch_size=256)
    model = DDP(build_model(args.model))
    torch.manual_seed(args.seed + 1000 * rank)  # each rank its own dropout masks
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    loss_fn = nn.CrossEntropyLoss()
    if rank == 0:
        n_params = sum(p.numel() for p in model.parameters())
        print(f"digits_ddp: {world} ranks, {len(train_set)} train / {len(test_set)} test "
              f"images, {args.model} with {n_params} parameters, global batch "
              f"{args.batch_size}, seed {args.seed}", flush=True)
    history = {"loss": [], "acc": []}
    for epoch in range(1, args.epochs + 1):
        sampler.set_epoch(epoch)
        stats = torch.zeros(2, dtype=torch.float64)   # summed loss, samples: over all ranks
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            stats += torch.tensor([loss.item() * len(y), len(y)], dtype=torch.float64)
        scheduler.step()
        dist.all_reduce(stats)
        acc = evaluate(model.module, test_loader)
        history["loss"].append(stats[0].item() / stats[1].item())
        history["acc"].append(acc)
        if rank == 0:
            print(f"epoch {epoch:3d}  loss {history['loss'][-1]:.4f}  "
                  f"test accuracy {100 * acc:.2f}%", flush=True)
    if rank == 0:
        os.makedirs(args.out, exist_ok=True)
        ckpt = os.path.join(args.out, f"digits_ddp_{args.model}.pt")
        torch.save({"model": model.module.state_dict(), "history": history,
                    "args": vars(args), "world_size": world}, ckpt)
        print(f"saved {ckpt}", flush=True)
    return {"history": history, "world_size": world}


if __name__ == "__main__":
    main(sys.argv[1:])
