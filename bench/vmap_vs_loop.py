"""func.vmap's batched run against its per-sample loop (the fallback), and against PyTorch's
vmap when installed.

    python bench/vmap_vs_loop.py [--batch 64] [--rounds 7]

Each workload is run three ways on the same inputs: `ndgrad.func.vmap` (batch rules), the
per-sample loop that vmap falls back to (forced here by reading a value outside an op, which
is exactly the fallback's trigger), and `torch.func.vmap`. Results are checked equal before
timing. Times are the minimum over rounds, in milliseconds.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "src"))
import ndgrad  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


def workloads(L, B):
    rng = np.random.default_rng(0)
    x = L.tensor(rng.standard_normal((B, 64)))
    w = L.tensor(rng.standard_normal((64, 32)))
    imgs = L.tensor(rng.standard_normal((B, 1, 3, 16, 16)))
    k = L.tensor(rng.standard_normal((8, 3, 3, 3)))
    seq = L.tensor(rng.standard_normal((B, 10, 16)))
    F = L.nn.functional
    return {
        "elementwise (tanh(x) * x + 1)": ((lambda a: (a.tanh() * a + 1).exp()), (x,), 0),
        "reduction (softmax, logsumexp)": ((lambda a: a.softmax(-1).logsumexp(0)), (x,), 0),
        "matmul (x @ W, relu, sum)": ((lambda a, b: (a @ b).relu().sum(-1)), (x, w), (0, None)),
        "attention (q k^T softmax v)": (
            (lambda s: (s @ s.transpose(0, 1) / 4).softmax(-1) @ s), (seq,), 0),
        "conv2d + max_pool2d": ((lambda im, kk: F.max_pool2d(F.conv2d(im, kk, padding=1), 2)),
                                (imgs, k), (0, None)),
    }


def _looped(f):
    def g(*a):
        a[0].tolist()  # a value read outside an op: vmap takes its per-sample loop
        return f(*a)
    return g


def bench(fn, args, rounds):
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=7)
    opts = ap.parse_args()
    ours = workloads(ndgrad, opts.batch)
    theirs = workloads(torch, opts.batch) if torch is not None else {}
    print(f"batch {opts.batch}, min of {opts.rounds} rounds, ms")
    print(f"| workload | vmap (batched) | per-sample loop | loop / vmap | torch.func.vmap |")
    print("|---|---|---|---|---|")
    for name, (f, args, dims) in ours.items():
        batched = ndgrad.func.vmap(f, in_dims=dims)
        loop = ndgrad.func.vmap(_looped(f), in_dims=dims)
        np.testing.assert_allclose(batched(*args).numpy(), loop(*args).numpy(), rtol=1e-10)
        tb = bench(batched, args, opts.rounds)
        tl = bench(loop, args, opts.rounds)
        tt = ""
        if name in theirs:
            tf, targs, tdims = theirs[name]
            tv = torch.func.vmap(tf, in_dims=tdims)
            np.testing.assert_allclose(batched(*args).numpy(), tv(*targs).numpy(), rtol=1e-8)
            tt = f"{bench(tv, targs, opts.rounds):.2f}"
        print(f"| {name} | {tb:.2f} | {tl:.2f} | {tl / tb:.1f}x | {tt} |")


if __name__ == "__main__":
    main()
