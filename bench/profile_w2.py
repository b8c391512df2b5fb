"""Where W2's time goes beyond the NumPy floor: bench W2's graph (MLP, ReLU, cross-entropy, SGD).

    python bench/profile_w2.py [--steps 5000]

Prints, as minima over many steps (robust to a busy machine):
(1) the step's phases (forward, backward, SGD) for W2's graph at W2's sizes and with every
    layer 8 wide ("tiny": the arrays cost next to nothing, so what is left is Python), beside the
    NumPy floor of bench/run.py split the same way;
(2) the tiny backward split by the engine's parts (each part timed by a wrapper, which adds
    ~0.3 µs a call: read the shares);
(3) the tiny step with error sites off (what recording where each node was made costs);
(4) the tiny step right after a 256x256 GEMM (what a GEMM's eviction of the interpreter's
    working set from the caches costs: W2 runs eight GEMMs a step).
"""
import argparse
import functools
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))
sys.path.insert(0, HERE)

import ndgrad as T  # noqa: E402
import run as R  # noqa: E402
from ndgrad.autograd import engine as E, graph as G  # noqa: E402
from ndgrad.ops import _registry as RG  # noqa: E402

F32 = np.float32
pc = time.perf_counter


def _net(tiny):
    if tiny:
        r = np.random.default_rng(0)
        ws0 = [r.standard_normal(s).astype(F32) for s in [(8, 8), (8,), (8, 8), (8,), (8, 4), (4,)]]
        x0, y0 = r.standard_normal((4, 8)).astype(F32), r.integers(0, 4, 4)
    else:
        ws0, x0, y0 = R._mlp_init()
    return ws0, x0, y0


def ndgrad_phases(tiny, steps, before=None):
    ws0, x0, y0 = _net(tiny)
    ws = [T.tensor(w.copy(), requires_grad=True) for w in ws0]
    x, y = T.tensor(x0), T.tensor(y0)

    def fwd():
        W1, b1, W2, b2, W3, b3 = ws
        h = T.relu(T.relu(x @ W1 + b1) @ W2 + b2)
        return T.nn.functional.cross_entropy(h @ W3 + b3, y)
    out = [[], [], [], []]
    for i in range(steps + steps // 10):
        if before is not None:
            before()
        t0 = pc()
        loss = fwd()
        t1 = pc()
        loss.backward()
        t2 = pc()
        R._sgd(T, ws, 0.01)
        t3 = pc()
        if i >= steps // 10:
            for o, t in zip(out, (t1 - t0, t2 - t1, t3 - t2, t3 - t0)):
                o.append(t)
    return [min(o) * 1e6 for o in out]


def numpy_phases(tiny, steps):
    ws0, x0, y0 = _net(tiny)
    ws = [w.copy() for w in ws0]
    out = [[], [], [], []]
    for i in range(steps + steps // 10):
        W1, b1, W2, b2, W3, b3 = ws
        t0 = pc()
        a1 = x0 @ W1 + b1
        h1 = np.maximum(a1, 0)
        a2 = h1 @ W2 + b2
        h2 = np.maximum(a2, 0)
        loss, g = R._np_softmax_ce(h2 @ W3 + b3, y0)
        t1 = pc()
        gW3, gb3 = h2.T @ g, g.sum(0)
        g = (g @ W3.T) * (a2 > 0)
        gW2, gb2 = h1.T @ g, g.sum(0)
        g = (g @ W2.T) * (a1 > 0)
        gW1, gb1 = x0.T @ g, g.sum(0)
        t2 = pc()
        for w, gw in zip(ws, (gW1, gb1, gW2, gb2, gW3, gb3)):
            w -= F32(0.01) * gw
        t3 = pc()
        if i >= steps // 10:
            for o, t in zip(out, (t1 - t0, t2 - t1, t3 - t2, t3 - t0)):
                o.append(t)
    return [min(o) * 1e6 for o in out]


def _timed(f, acc, label):
    @functools.wraps(f)
    def timed(*a, **k):
        t0 = pc()
        try:
            return f(*a, **k)
        finally:
            acc[label] = acc.get(label, 0.0) + pc() - t0
    return timed


def backward_split(steps):
    """The tiny backward's time by part (median per step; wrappers add ~0.3 µs a call)."""
    acc = {}
    saved = []

    def wrap(owner, name, label):
        f = getattr(owner, name)
        saved.append((owner, name, f))
        setattr(owner, name, _timed(f, acc, label))
    wrap(RG.OpNode, "_array_apply", "one-edge nodes' formulas (OpNode._array_apply)")
    ndgrad_phases(True, 2)  # (the ops' plain backwards exist now: the engine calls them itself)
    for op in set(RG._OPS.values()):
        cls = op.node_cls
        for k in ("_bw1", "_bw2"):
            if cls is not None and k in vars(cls) and vars(cls)[k] is not None:
                f = vars(cls)[k].__func__
                saved.append((cls, k, vars(cls)[k]))
                setattr(cls, k, staticmethod(_timed(f, acc, "one-edge nodes' formulas, "
                                                            "called by the engine")))
    wrap(RG.OpNode, "_arrays_apply", "two-edge nodes' formulas (OpNode._arrays_apply)")
    wrap(E, "_to_input", "bias sums (engine._to_input)")
    wrap(E, "_accumulate_array", "leaves into .grad (engine._accumulate_array)")
    wrap(E, "_dependencies", "dependency count (engine._dependencies)")
    try:
        total = ndgrad_phases(True, steps)[1]
    finally:
        for owner, name, f in saved:
            setattr(owner, name, f)
    n = steps + steps // 10
    return total, {k: v / n * 1e6 for k, v in acc.items()}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=5000)
    args = ap.parse_args(argv)
    n = args.steps
    print("(1) phases, min over steps, µs: forward / backward / SGD / step")
    for tiny in (True, False):
        k = n if tiny else max(n // 10, 200)
        a, b = ndgrad_phases(tiny, k), numpy_phases(tiny, k)
        name = "tiny" if tiny else "W2"
        print(f"  {name:5s} ndgrad " + " / ".join(f"{v:.1f}" for v in a))
        print(f"  {name:5s} floor  " + " / ".join(f"{v:.1f}" for v in b))
    total, parts = backward_split(n)
    print(f"(2) tiny backward, instrumented: {total:.1f} µs; by part:")
    for k, v in sorted(parts.items(), key=lambda kv: -kv[1]):
        print(f"  {v:6.1f}  {k}")
    print(f"  {total - sum(parts.values()):6.1f}  the engine loop, backward()'s set-up, root grad")
    on = ndgrad_phases(True, n)[3]
    G.sites.enabled = False
    try:
        off = ndgrad_phases(True, n)[3]
    finally:
        G.sites.enabled = True
    print(f"(3) tiny step with error sites on / off: {on:.1f} / {off:.1f} µs")
    A = np.ones((256, 256), F32)
    after = ndgrad_phases(True, n, before=lambda: A @ A)[3]
    print(f"(4) tiny step alone / right after a 256x256 GEMM: {on:.1f} / {after:.1f} µs")


if __name__ == "__main__":
    main()
