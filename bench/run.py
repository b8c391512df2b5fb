"""ndgrad benchmarks, side by side with PyTorch and a hand-written NumPy floor.

    python bench/run.py [--quick] [--only W1,W3] [--out bench/results.md]

Every workload is written once against the torch API (run with `ndgrad` and with `torch`) and
once as plain NumPy forward + hand-written backward (no autograd: the floor any NumPy-based
engine can at best reach). All libraries run in this one process, interleaved round by round
(A B C A B C ...), so machine noise hits them alike. Each library starts from the same inputs and
runs the same number of steps, so the last result of each is checked against the NumPy one: a
fast wrong answer does not count. W7 (memory) runs each library in a fresh subprocess.

Each timed step follows a pause in which the threads of the library before it go idle, then
untimed steps of the same library (see SETTLE).

Libraries: `ndgrad`; `torch` (CPU, default threads) and `torch-1t` (torch.set_num_threads(1)),
when PyTorch is installed; `numpy` (the floor). Ratios: of the minima over rounds / of the
medians.
"""
import argparse
import gc
import math
import os
import platform
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

import ndgrad  # noqa: E402
import numpy as np  # noqa: E402

try:
    import torch
except ImportError:  # PyTorch is only an oracle here
    torch = None

TORCH_THREADS = torch.get_num_threads() if torch is not None else 0
F32 = np.float32


class NotAvailable(Exception):
    """The library lacks something the workload needs."""


def _np(t):
    if isinstance(t, (np.ndarray, np.generic, float)):
        return np.asarray(t)
    if torch is not None and isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return t.detach().numpy()


def _lib(name):
    return ndgrad if name == "ndgrad" else torch


def _threads(name):
    if name.startswith("torch"):
        torch.set_num_threads(1 if name == "torch-1t" else TORCH_THREADS)


def _rng(seed=0):
    return np.random.default_rng(seed)


def _sgd(T, params, lr):
    with T.no_grad():
        for p in params:
            p -= lr * p.grad
            p.grad = None


def _cross_entropy(T, logits, target):
    F = T.nn.functional
    if hasattr(F, "cross_entropy"):
        return F.cross_entropy(logits, target)
    if hasattr(T, "log_softmax"):
        logp = T.log_softmax(logits, 1)
        return -(logp[T.arange(logits.shape[0]), target]).mean()
    raise NotAvailable("cross_entropy")


def _np_softmax_ce(logits, y):
    """Mean cross-entropy and its gradient with respect to the logits."""
    m = logits.max(1, keepdims=True)
    e = np.exp(logits - m)
    s = e.sum(1, keepdims=True)
    n = logits.shape[0]
    loss = (np.log(s)[:, 0] + m[:, 0] - logits[np.arange(n), y]).mean()
    g = e / s
    g[np.arange(n), y] -= 1
    return loss, g / n


# ---------------------------------------------------------------- W1 per-op overhead

W1_OPS = 1000


def w1(lib, quick):
    n_ops = W1_OPS
    x0 = np.array([[0.3, -0.2], [0.5, 0.1]], dtype=F32)
    kinds = [i % 6 for i in range(n_ops)]  # add, mul, tanh, sigmoid, exp, log
    if lib == "numpy":
        def step():
            vals = [x0]
            y = x0
            for k in kinds:
                if k == 0:
                    y = y + F32(0.1)
                elif k == 1:
                    y = y * F32(0.9)
                elif k == 2:
                    y = np.tanh(y)
                elif k == 3:
                    y = 1 / (1 + np.exp(-y))
                elif k == 4:
                    y = np.exp(y)
                else:
                    y = np.log(y)
                vals.append(y)
            g = np.ones_like(y)
            for i in range(n_ops - 1, -1, -1):
                k, out, inp = kinds[i], vals[i + 1], vals[i]
                if k == 1:
                    g = g * F32(0.9)
                elif k == 2:
                    g = g * (1 - out * out)
                elif k == 3:
                    g = g * out * (1 - out)
                elif k == 4:
                    g = g * out
                elif k == 5:
                    g = g / inp
            return g
        return step, n_ops
    T = _lib(lib)

    def step():
        x = T.tensor(x0, requires_grad=True)
        y = x
        for k in kinds:
            if k == 0:
                y = y + 0.1
            elif k == 1:
                y = y * 0.9
            elif k == 2:
                y = T.tanh(y)
            elif k == 3:
                y = T.sigmoid(y)
            elif k == 4:
                y = T.exp(y)
            else:
                y = T.log(y)
        y.sum().backward()
        return x.grad
    return step, n_ops


def w1_nograd(lib, quick):
    """W1's forward chain under no_grad (no graph): the per-op cost of the op itself."""
    n_ops = W1_OPS
    x0 = np.array([[0.3, -0.2], [0.5, 0.1]], dtype=F32)
    kinds = [i % 6 for i in range(n_ops)]
    if lib == "numpy":
        def step():
            y = x0
            for k in kinds:
                if k == 0:
                    y = y + F32(0.1)
                elif k == 1:
                    y = y * F32(0.9)
                elif k == 2:
                    y = np.tanh(y)
                elif k == 3:
                    y = 1 / (1 + np.exp(-y))
                elif k == 4:
                    y = np.exp(y)
                else:
                    y = np.log(y)
            return y
        return step, n_ops
    T = _lib(lib)

    def step():
        x = T.tensor(x0, requires_grad=True)
        y = x
        with T.no_grad():
            for k in kinds:
                if k == 0:
                    y = y + 0.1
                elif k == 1:
                    y = y * 0.9
                elif k == 2:
                    y = T.tanh(y)
                elif k == 3:
                    y = T.sigmoid(y)
                elif k == 4:
                    y = T.exp(y)
                else:
                    y = T.log(y)
        return y
    return step, n_ops


# ---------------------------------------------------------------- W2 MLP training step

def _mlp_init():
    r = _rng(1)
    sizes = [(784, 256), (256, 128), (128, 10)]
    ws = []
    for i, o in sizes:
        ws.append((r.standard_normal((i, o)) / np.sqrt(i)).astype(F32))
        ws.append(np.zeros(o, dtype=F32))
    x = r.standard_normal((64, 784)).astype(F32)
    y = r.integers(0, 10, 64)
    return ws, x, y


def w2(lib, quick):
    ws0, x0, y0 = _mlp_init()
    lr = 0.01
    if lib == "numpy":
        ws = [w.copy() for w in ws0]

        def step():
            W1, b1, W2, b2, W3, b3 = ws
            a1 = x0 @ W1 + b1
            h1 = np.maximum(a1, 0)
            a2 = h1 @ W2 + b2
            h2 = np.maximum(a2, 0)
            logits = h2 @ W3 + b3
            loss, g = _np_softmax_ce(logits, y0)
            gW3, gb3 = h2.T @ g, g.sum(0)
            g = (g @ W3.T) * (a2 > 0)
            gW2, gb2 = h1.T @ g, g.sum(0)
            g = (g @ W2.T) * (a1 > 0)
            gW1, gb1 = x0.T @ g, g.sum(0)
            for w, gw in zip(ws, (gW1, gb1, gW2, gb2, gW3, gb3)):
                w -= F32(lr) * gw
            return np.float32(loss)
        return step, 1
    T = _lib(lib)
    ws = [T.tensor(w.copy(), requires_grad=True) for w in ws0]
    x = T.tensor(x0)
    y = T.tensor(y0)

    def step():
        W1, b1, W2, b2, W3, b3 = ws
        h = T.relu(x @ W1 + b1)
        h = T.relu(h @ W2 + b2)
        loss = _cross_entropy(T, h @ W3 + b3, y)
        loss.backward()
        _sgd(T, ws, lr)
        return loss
    return step, 1


# ---------------------------------------------------------------- W3 deep-graph scaling

def w3(n):
    def make(lib, quick):
        x0 = np.linspace(-1, 1, 8).astype(F32)
        if lib == "numpy":
            def step():
                vals = [x0]
                y = x0
                for _ in range(n):
                    y = y * F32(1.0)
                    vals.append(y)
                g = np.ones_like(y)
                for _ in range(n):
                    g = g * F32(1.0)
                return g
            return step, n
        T = _lib(lib)

        def step():
            x = T.tensor(x0, requires_grad=True)
            y = x
            for _ in range(n):
                y = y * 1.0
            y.sum().backward()
            return x.grad
        return step, n
    return make


# ---------------------------------------------------------------- W4 large elementwise

def _w4_inputs():
    r = _rng(4)
    a = r.uniform(-1, 1, 10 ** 6).astype(F32)
    b = r.uniform(0.5, 1.5, 10 ** 6).astype(F32)
    return a, b


def w4(lib, quick):
    a0, b0 = _w4_inputs()
    if lib == "numpy":
        def sig(v):
            return 1 / (1 + np.exp(-v))

        def step():
            a, b = a0, b0
            t1 = a * b
            t2 = t1 + a
            t3 = np.tanh(t2)
            t4 = t3 * b
            t5 = sig(t4)
            t6 = t5 - a
            t7 = t6 * t6
            t8 = -t7
            t9 = np.exp(t8)
            t10 = t9 + F32(1)
            t11 = np.log(t10)
            t12 = t11 * F32(0.5)
            t13 = t12 * t3
            t14 = t13 + t5
            t15 = np.tanh(t14)
            t16 = t15 * a
            t17 = sig(t16)
            t18 = t17 * t17
            # backward (t19 = t18 + b; loss = t19.sum())
            gb = np.ones_like(b)
            g = 2 * t17
            g *= t17 * (1 - t17)          # g16
            ga = g * t15
            g *= a                        # g15
            g *= 1 - t15 * t15            # g14 (= g13 = part of g5)
            g5 = g.copy()
            g3 = g * t12
            g *= t3                       # g12
            g *= F32(0.5)                 # g11
            g /= t10                      # g10 = g9
            g *= t9                       # g8
            g *= -2 * t6                  # g6 (g7 = -g8)
            g5 += g
            ga -= g
            g5 *= t5 * (1 - t5)           # g4
            g3 += g5 * b
            gb += g5 * t3
            g3 *= 1 - t3 * t3             # g2 = g1
            ga += g3
            ga += g3 * b
            gb += g3 * a
            return ga, gb
        return step, 1
    T = _lib(lib)

    def step():
        a = T.tensor(a0, requires_grad=True)
        b = T.tensor(b0, requires_grad=True)
        t1 = a * b
        t2 = t1 + a
        t3 = T.tanh(t2)
        t4 = t3 * b
        t5 = T.sigmoid(t4)
        t6 = t5 - a
        t7 = t6 * t6
        t8 = -t7
        t9 = T.exp(t8)
        t10 = t9 + 1.0
        t11 = T.log(t10)
        t12 = t11 * 0.5
        t13 = t12 * t3
        t14 = t13 + t5
        t15 = T.tanh(t14)
        t16 = t15 * a
        t17 = T.sigmoid(t16)
        t18 = t17 * t17
        t19 = t18 + b
        t19.sum().backward()
        return a.grad, b.grad
    return step, 1


# ---------------------------------------------------------------- W5 matmul-heavy

def _w5_inputs():
    r = _rng(5)
    x = r.standard_normal((512, 512)).astype(F32) / 8
    ws = [(r.standard_normal((512, 512)) / np.sqrt(512)).astype(F32) for _ in range(4)]
    return x, ws


def w5(lib, quick):
    # The weights are made once, as in a training loop, and every library computes the loss
    # (the floor too: 11 GEMMs each). Until 2026-12-04 the step made its four leaf tensors
    # afresh (four 1 MB copies, which the floor did not make) and the floor skipped the loss's
    # matmul; figures from before are not comparable (bench/NOTES.md).
    x0, ws0 = _w5_inputs()
    if lib == "numpy":
        def step():
            W1, W2, W3, W4 = ws0
            h1 = np.tanh(x0 @ W1)
            h2 = np.tanh(h1 @ W2)
            h3 = np.tanh(h2 @ W3)
            loss = (h3 @ W4).sum()
            g = np.ones((512, 512), F32)
            gW4 = h3.T @ g
            g = (g @ W4.T) * (1 - h3 * h3)
            gW3 = h2.T @ g
            g = (g @ W3.T) * (1 - h2 * h2)
            gW2 = h1.T @ g
            g = (g @ W2.T) * (1 - h1 * h1)
            gW1 = x0.T @ g
            return loss, gW1, gW4
        return step, 1
    T = _lib(lib)
    x = T.tensor(x0)
    ws = [T.tensor(w, requires_grad=True) for w in ws0]

    def step():
        W1, W2, W3, W4 = ws
        for w in ws:
            w.grad = None
        h = T.tanh(x @ W1)
        h = T.tanh(h @ W2)
        h = T.tanh(h @ W3)
        loss = (h @ W4).sum()
        loss.backward()
        return loss, W1.grad, W4.grad
    return step, 1


# ---------------------------------------------------------------- W6 small CNN step

def _w6_init():
    r = _rng(6)
    x = r.standard_normal((32, 1, 28, 28)).astype(F32)
    y = r.integers(0, 10, 32)
    wc = (r.standard_normal((8, 1, 3, 3)) / 3).astype(F32)
    bc = np.zeros(8, F32)
    wl = (r.standard_normal((10, 8 * 14 * 14)) / np.sqrt(8 * 14 * 14)).astype(F32)
    bl = np.zeros(10, F32)
    return x, y, [wc, bc, wl, bl]


def w6(lib, quick):
    x0, y0, ps0 = _w6_init()
    lr = 0.01
    if lib == "numpy":
        # Layout CNHW, so that the convolution and its weight gradient are one GEMM each over
        # the im2col columns (built per step by 9 slice copies, as an engine must).
        ps = [p.copy() for p in ps0]
        N = x0.shape[0]
        xpad = np.zeros((N, 30, 30), F32)                  # scratch; the border stays zero
        cols = np.empty((9, N, 28, 28), F32)

        def step():
            wc, bc, wl, bl = ps
            xpad[:, 1:29, 1:29] = x0[:, 0]
            for i in range(3):
                for j in range(3):
                    cols[3 * i + j] = xpad[:, i:i + 28, j:j + 28]
            c2 = cols.reshape(9, -1)
            conv = wc.reshape(8, 9) @ c2                                   # (8, N*28*28)
            conv += bc[:, None]
            h = np.maximum(conv, 0, out=conv).reshape(8, N, 28, 28)
            taps = [h[:, :, i::2, j::2] for i in (0, 1) for j in (0, 1)]
            pooled = np.maximum(np.maximum(taps[0], taps[1]), np.maximum(taps[2], taps[3]))
            flat = pooled.transpose(1, 0, 2, 3).reshape(N, -1)             # NCHW order
            logits = flat @ wl.T + bl
            loss, g = _np_softmax_ce(logits, y0)
            gwl, gbl = g.T @ flat, g.sum(0)
            # the max's gradient (ties are at 0, where the ReLU mask kills it anyway)
            gp = (g @ wl).reshape(N, 8, 14, 14).transpose(1, 0, 2, 3) * (pooled > 0)
            gh = np.empty_like(h)
            for t, (i, j) in enumerate(((0, 0), (0, 1), (1, 0), (1, 1))):
                gh[:, :, i::2, j::2] = np.where(taps[t] == pooled, gp, F32(0))
            gh = gh.reshape(8, -1)
            gwc = (gh @ c2.T).reshape(8, 1, 3, 3)
            gbc = gh.sum(1)
            for p, gp_ in zip(ps, (gwc, gbc, gwl, gbl)):
                p -= F32(lr) * gp_
            return np.float32(loss)
        return step, 1
    T = _lib(lib)
    F = T.nn.functional
    if not all(hasattr(F, n) for n in ("conv2d", "max_pool2d")):
        raise NotAvailable("conv2d/max_pool2d")
    ps = [T.tensor(p.copy(), requires_grad=True) for p in ps0]
    x = T.tensor(x0)
    y = T.tensor(y0)

    def step():
        wc, bc, wl, bl = ps
        h = F.max_pool2d(T.relu(F.conv2d(x, wc, bc, padding=1)), 2)
        loss = _cross_entropy(T, h.reshape(32, -1) @ wl.T + bl, y)
        loss.backward()
        _sgd(T, ps, lr)
        return loss
    return step, 1


# ---------------------------------------------------------------- W8 Hessian-vector product

def _w8_inputs():
    r = _rng(8)
    W1 = (r.standard_normal((100, 100)) / 10).astype(F32)
    W2 = (r.standard_normal((100, 100)) / 10).astype(F32)
    w3 = r.standard_normal(100).astype(F32)
    x = r.standard_normal(100).astype(F32)
    v = r.standard_normal(100).astype(F32)
    return W1, W2, w3, x, v


def w8(lib, quick):
    W1, W2, w3, x0, v0 = _w8_inputs()
    if lib == "numpy":
        def step():
            h1 = np.tanh(W1 @ x0)
            h2 = np.tanh(W2 @ h1)
            ga2 = w3 * (1 - h2 * h2)
            gh1 = W2.T @ ga2
            # R-op (directional derivative along v) of the backward pass
            rh1 = (1 - h1 * h1) * (W1 @ v0)
            rh2 = (1 - h2 * h2) * (W2 @ rh1)
            rga2 = w3 * (-2 * h2 * rh2)
            rga1 = (W2.T @ rga2) * (1 - h1 * h1) + gh1 * (-2 * h1 * rh1)
            return W1.T @ rga1
        return step, 1
    T = _lib(lib)
    tW1, tW2, tw3, tv = T.tensor(W1), T.tensor(W2), T.tensor(w3), T.tensor(v0)

    def step():
        x = T.tensor(x0, requires_grad=True)
        f = tw3 @ T.tanh(tW2 @ T.tanh(tW1 @ x))
        g, = T.autograd.grad(f, x, create_graph=True)
        hv, = T.autograd.grad(g @ tv, x)
        return hv
    return step, 1


# ---------------------------------------------------------------- W7 memory (subprocess)

def r1(lib, quick):
    """torch.randn(10**7): PyTorch's generator and normal fill (ndgrad draws PyTorch's numbers);
    the floor is NumPy's own standard_normal of the same size (its fastest generator). The
    result checked is whether the sample's mean and standard deviation are those of N(0, 1)."""
    n = 10 ** 6 if quick else 10 ** 7
    if lib == "numpy":
        g = np.random.default_rng(0)

        def step():
            return _moments(g.standard_normal(n))
        return step, 1
    T = _lib(lib)
    T.manual_seed(0)

    def step():
        return _moments(T.randn(n).numpy())
    return step, 1


def _moments(x):
    return np.array([abs(float(x.mean())) < 2e-3, abs(float(x.std()) - 1) < 2e-3], dtype=float)


def deep_delete(n):
    """Build an n-node ndgrad chain and drop it without backward: seconds to free it (a C-stack
    overflow would crash here; CPython's trashcan frees chains of slot objects iteratively)."""
    x = ndgrad.ones(8, requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.0
    t0 = time.perf_counter()
    del y
    return time.perf_counter() - t0


def w7_child(lib, steps):
    """Run W2 steps in this fresh process and print the peak-RSS growth after warm-up (MiB)."""
    step, _ = w2(lib, False)
    _threads(lib)
    for _ in range(20):
        step()
    gc.collect()
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(steps):
        step()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{(peak - base) / 1024:.2f}")


def w7(libs, steps):
    out = {}
    for lib in libs:
        if lib == "numpy" or lib == "torch-1t":
            pass
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--w7-child", lib,
                            str(steps)], capture_output=True, text=True)
        try:
            out[lib] = float(r.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            out[lib] = None
            print(f"W7 {lib} failed: {r.stderr[-500:]}", file=sys.stderr)
    return out


# ---------------------------------------------------------------- harness

def _check(results, rtol, atol):
    ref_lib = "numpy" if "numpy" in results else "torch"  # (workloads without a floor)
    ref = results.get(ref_lib)
    verdict = {}
    for lib, r in results.items():
        if lib == ref_lib or ref is None:
            continue
        a = r if isinstance(r, tuple) else (r,)
        b = ref if isinstance(ref, tuple) else (ref,)
        ok = len(a) == len(b) and all(
            np.allclose(_np(x), _np(y), rtol=rtol, atol=atol) for x, y in zip(a, b))
        verdict[lib] = ok
    return verdict


# Before a library's timed step, the worker threads of the library that ran before get SETTLE
# seconds, idle, to stop: NumPy's OpenBLAS workers spin for about 0.1 s after a multi-threaded
# GEMM (2^28 cycles, OpenBLAS's default THREAD_TIMEOUT) and PyTorch's OpenMP workers for a
# while after its kernels. Still spinning, they take the second core from the next library's
# steps: without the pause PyTorch's GPT step took 34 ms in some rounds and 46 in others, where
# it takes 37-40 ms run alone, and PyTorch's workers slowed the NumPy floor of W2 that ran right
# after it by up to 3x (bench/NOTES.md). Then untimed steps of the same library, about
# WARM_TIME seconds of the fastest library's steps (the same number for every library: their
# results are compared after the same number of steps), wake its threads (a virtual CPU idle
# for the pause wakes slowly: one untimed step of a millisecond left W6's medians 1.5-4x its
# minima) and bring its code and data into the caches, as in a program that runs one library.
# Where even the fastest library's step takes WARM_MAX or more (W3 at 10^5 and 10^6 ops) no
# step is repeated: its caches warm up within it.
SETTLE = 0.15
WARM_TIME = 0.05
WARM_MAX = 0.1


def bench(name, make, libs, rounds, quick, rtol=2e-3, atol=1e-4):
    steps, per, first = {}, {}, {}
    for lib in libs:
        try:
            _threads(lib)
            made = make(lib, quick)  # (step, per[, the first result: checked instead of the last])
            steps[lib], per[lib] = made[:2]
            if len(made) > 2:
                first[lib] = made[2]
        except (NotAvailable, NotImplementedError) as e:
            print(f"{name}: {lib} n/a ({e})", file=sys.stderr)
    times = {lib: [] for lib in steps}
    last = {}
    warm = 1   # untimed steps before each timed one (see SETTLE)
    for r in range(rounds):
        for lib, step in steps.items():
            _threads(lib)
            if len(steps) > 1:
                time.sleep(SETTLE)   # (see SETTLE)
            for _ in range(warm):
                step()
            t0 = time.perf_counter()
            last[lib] = step()
            times[lib].append((time.perf_counter() - t0) / per[lib])
        if r == 0:   # (from the first round's steps: WARM_TIME of the fastest library's)
            fastest = min(t[0] * per[lib] for lib, t in times.items())
            warm = 0 if fastest >= WARM_MAX else min(200, math.ceil(WARM_TIME / fastest))
    gc.collect()
    return times, _check(first or last, rtol, atol)


WORKLOADS = [
    # name, description, unit, scale, maker, rounds (full, quick)
    ("W1", "per-op overhead: (2,2) chain of 1000 ops, fwd+bwd", "us/op", 1e6, w1, (25, 5)),
    ("W1-ng", "W1's chain forward under no_grad", "us/op", 1e6, w1_nograd, (25, 5)),
    ("W2", "MLP 784-256-128-10 train step, batch 64", "ms/step", 1e3, w2, (100, 10)),
    ("W3-1e3", "chain of 10^3 muls on (8,), fwd+bwd", "us/op", 1e6, w3(10 ** 3), (15, 5)),
    ("W3-1e4", "chain of 10^4 muls on (8,), fwd+bwd", "us/op", 1e6, w3(10 ** 4), (5, 2)),
    ("W3-1e5", "chain of 10^5 muls on (8,), fwd+bwd", "us/op", 1e6, w3(10 ** 5), (2, 1)),
    ("W3-1e6", "chain of 10^6 muls on (8,), fwd+bwd", "us/op", 1e6, w3(10 ** 6), (1, 0)),
    ("W4", "20 elementwise ops on 10^6 float32, fwd+bwd", "ms", 1e3, w4, (10, 3)),
    ("W5", "4 matmuls 512x512 + tanh, fwd+bwd", "ms", 1e3, w5, (10, 3)),
    ("W6", "CNN step: conv 1->8 3x3, relu, maxpool, linear, CE, SGD", "ms/step", 1e3, w6, (10, 3)),
    ("W8", "Hessian-vector product, 2-layer tanh MLP on R^100", "ms", 1e3, w8, (100, 10)),
    ("R1", "torch.randn(10**7) (numpy: standard_normal(10**7))", "ms", 1e3, r1, (7, 3)),
]
WORKLOADS += __import__("workloads_cnn_rnn").WORKLOADS  # W9 CNN, W10 LSTM (issue 34)
WORKLOADS += __import__("workloads_transformer").WORKLOADS  # GPT step, generation (issue 34)
WORKLOADS += __import__("workloads_optim").workloads(_lib)  # W2-user, MLP with Adam (issue 34)


def _fmt(v):
    if v is None:
        return "n/a"
    return f"{v:.3g}" if v < 100 else f"{v:.0f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds, W3 up to 10^5")
    ap.add_argument("--only", default="", help="comma-separated workload names (prefix match)")
    ap.add_argument("--out", default=os.path.join(HERE, "results.md"))
    ap.add_argument("--rounds", type=int, default=0, help="override the rounds of each workload")
    ap.add_argument("--w7-child", nargs=2, metavar=("LIB", "STEPS"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.w7_child:
        w7_child(args.w7_child[0], int(args.w7_child[1]))
        return
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))  # torch's own graph teardown
    libs = ["ndgrad"] + (["torch", "torch-1t"] if torch is not None else []) + ["numpy"]
    only = [s for s in args.only.split(",") if s]
    rows = []
    for name, desc, unit, scale, make, (full, quick) in WORKLOADS:
        if only and not any(name.startswith(o) for o in only):
            continue
        rounds = args.rounds or (quick if args.quick else full)
        if rounds == 0:
            continue
        times, ok = bench(name, make, libs, rounds, args.quick)
        stat = {lib: (min(t) * scale, sorted(t)[len(t) // 2] * scale) for lib, t in times.items()}
        rows.append((name, desc, unit, stat, ok))
        line = "  ".join(f"{lib} {_fmt(s[0])}" for lib, s in stat.items())
        print(f"{name:7s} {unit:8s} {line}  check={ok}", flush=True)
    deleted = None
    if not args.quick and (not only or any("W3".startswith(o) for o in only)):
        deleted = deep_delete(10 ** 6)
        print(f"W3: dropped a 10^6-node graph without backward in {deleted:.2f} s", flush=True)
    mem = None
    if not only or any("W7".startswith(o) for o in only):
        mem = w7([lib for lib in libs if lib != "torch-1t"], 100 if args.quick else 200)
        print("W7 peak RSS growth (MiB):", mem, flush=True)
    _write(args, libs, rows, mem, deleted)


def _blas_config():
    """OpenBLAS's kernels as it runs and the environment settings it read (this machine's
    environment may set OPENBLAS_CORETYPE: that, not the CPU, then picks the GEMM kernels)."""
    env = ", ".join(f"{k}={os.environ[k]}" for k in sorted(os.environ) if k.startswith("OPENBLAS"))
    return f"({ndgrad.__config__._blas()}; {env or 'no OPENBLAS_* settings'})"


def _write(args, libs, rows, mem, deleted=None):
    cmd = "python bench/run.py" + (" --quick" if args.quick else "") + \
          (f" --only {args.only}" if args.only else "") + \
          (f" --rounds {args.rounds}" if args.rounds else "")
    L = ["# ndgrad benchmark results", "",
         f"Command: `{cmd}`  ", f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}  ",
         f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, {platform.platform()}  ",
         f"Python {platform.python_version()}, NumPy {np.__version__}, ndgrad "
         f"{getattr(ndgrad, '__version__', '?')}"
         + (f", PyTorch {torch.__version__} (CPU, default {TORCH_THREADS} threads)"
            if torch is not None else ", PyTorch not installed") + "  ",
         f"ndgrad's kernels on {ndgrad.get_num_threads()} threads; NumPy's OpenBLAS "
         f"{_blas_config()}", "",
         "Times are min / median over interleaved rounds, each timed step after a pause in "
         "which the other libraries' threads go idle and untimed steps of the same library "
         "(SETTLE in run.py); ratios are of the minima / of the "
         "medians. "
         "`ok` = the result matches the hand-written NumPy reference.", ""]
    hdr = ["workload", "unit"] + [lib for lib in libs] + \
          (["ndgrad/torch", "ndgrad/torch-1t"] if torch is not None else []) + ["ndgrad/numpy", "check"]
    L.append("| " + " | ".join(hdr) + " |")
    L.append("|" + "---|" * len(hdr))
    for name, desc, unit, stat, ok in rows:
        cells = [f"{name} {desc}", unit]
        for lib in libs:
            s = stat.get(lib)
            cells.append("n/a" if s is None else f"{_fmt(s[0])} / {_fmt(s[1])}")
        nd = stat.get("ndgrad")
        for ref in (["torch", "torch-1t"] if torch is not None else []) + ["numpy"]:
            r = stat.get(ref)
            cells.append("n/a" if nd is None or r is None else
                         f"{nd[0] / r[0]:.2f} / {nd[1] / r[1]:.2f}")
        cells.append(", ".join(f"{lib} {'ok' if v else 'MISMATCH'}" for lib, v in ok.items())
                     or "n/a")
        L.append("| " + " | ".join(cells) + " |")
    if deleted is not None:
        L += ["", f"W3: an ndgrad graph of 10^6 nodes dropped without backward was freed in "
              f"{deleted:.2f} s (no recursion, no C-stack overflow)."]
    if mem is not None:
        L += ["", "W7: peak RSS growth over the W2 steps after 20 warm-up steps, each library in a "
              "fresh process (MiB): " + ", ".join(f"{k} {_fmt(v)}" for k, v in mem.items())]
    with open(args.out, "w") as f:
        f.write("\n".join(L) + "\n")
    print("wrote", os.path.relpath(args.out))


if __name__ == "__main__":
    main()
