"""A two-layer GCN training step on a random graph, ndgrad side by side with PyTorch's sparse
implementation in one process.

    python bench/gcn.py [--nodes 100000] [--edges 1000000] [--dim 64] [--steps 5]

Both libraries build the same graph (a random COO adjacency with symmetric normalization, self
loops included) from one NumPy seed, the same features and weights, and run the same steps:
H = relu(A @ (X W1)), out = A @ (H W2), cross-entropy, backward, SGD. Reported: seconds per
step (the minimum over interleaved rounds), the ratio ndgrad / PyTorch, the peak of Python-heap
allocations during one step (tracemalloc: NumPy's buffers are counted, PyTorch's C++ ones are
not, so that column is for ndgrad) and the process's peak resident size. The final losses of
the two libraries are checked against each other.
"""
import argparse
import os
import resource
import sys
import time
import tracemalloc

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

import ndgrad  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


def graph(n, e, d, classes, seed=0):
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, e)
    dst = rng.integers(0, n, e)
    src = np.concatenate([src, np.arange(n)])
    dst = np.concatenate([dst, np.arange(n)])
    key = np.unique(src * n + dst)                    # coalesced: sorted, no duplicates
    rows, cols = key // n, key % n
    deg = np.bincount(rows, minlength=n).astype(np.float32)
    vals = (deg[rows] ** -0.5) * (deg[cols] ** -0.5)
    x = rng.standard_normal((n, d)).astype(np.float32)
    y = rng.integers(0, classes, n)
    w1 = (rng.standard_normal((d, d)) / np.sqrt(d)).astype(np.float32)
    w2 = (rng.standard_normal((d, classes)) / np.sqrt(d)).astype(np.float32)
    return np.stack([rows, cols]), vals.astype(np.float32), x, y, w1, w2


class Model:
    def __init__(self, L, data, n):
        idx, vals, x, y, w1, w2 = data
        self.L = L
        self.adj = L.sparse_coo_tensor(L.from_numpy(idx), L.from_numpy(vals), (n, n)).coalesce()
        self.x, self.y = L.from_numpy(x), L.from_numpy(y)
        self.w1 = L.from_numpy(w1.copy()).requires_grad_()
        self.w2 = L.from_numpy(w2.copy()).requires_grad_()

    def step(self, lr=0.1):
        L = self.L
        h = L.sparse.mm(self.adj, self.x @ self.w1).relu()
        out = L.sparse.mm(self.adj, h @ self.w2)
        loss = L.nn.functional.cross_entropy(out, self.y)
        loss.backward()
        with L.no_grad():
            for w in (self.w1, self.w2):
                w -= lr * w.grad
                w.grad = None
        return loss.item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--nodes", type=int, default=100_000)
    p.add_argument("--edges", type=int, default=1_000_000)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--classes", type=int, default=8)
    p.add_argument("--steps", type=int, default=5)
    a = p.parse_args()
    data = graph(a.nodes, a.edges, a.dim, a.classes)
    libs = {"ndgrad": Model(ndgrad, data, a.nodes)}
    if torch is not None:
        libs["torch"] = Model(torch, data, a.nodes)
    times = {k: [] for k in libs}
    losses = {k: [] for k in libs}
    for _ in range(a.steps):                 # interleaved rounds
        for k, m in libs.items():
            t0 = time.perf_counter()
            losses[k].append(m.step())
            times[k].append(time.perf_counter() - t0)
    tracemalloc.start()
    libs["ndgrad"].step()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    nnz = libs["ndgrad"].adj._nnz()
    print(f"GCN step: {a.nodes} nodes, {nnz} nonzeros (with self loops), d={a.dim}, "
          f"{a.classes} classes, float32, {a.steps} steps")
    if torch is not None:
        print(f"torch threads: {torch.get_num_threads()}")
    for k in libs:
        print(f"{k:>7}: {min(times[k]) * 1e3:9.1f} ms/step (median "
              f"{sorted(times[k])[len(times[k]) // 2] * 1e3:.1f})  losses "
              f"{losses[k][0]:.5f} -> {losses[k][-1]:.5f}")
    if torch is not None:
        print(f"ratio ndgrad / torch: {min(times['ndgrad']) / min(times['torch']):.2f}")
        np.testing.assert_allclose(losses["ndgrad"], losses["torch"], rtol=1e-4)
    print(f"ndgrad step, peak traced (Python/NumPy) allocations: {peak / 2**20:.1f} MiB")
    print(f"process peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} "
          f"MiB")


if __name__ == "__main__":
    main()
