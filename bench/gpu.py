"""The GPU check: ndgrad on CUDA through CuPy, beside PyTorch's CUDA build when it is installed.

    python bench/gpu.py                 # on a machine with a GPU and CuPy (cupy-cuda12x or -13x)
    python bench/gpu.py --standin --quick   # CI-sized, on the strict stand-in device

1. The device: CuPy's version, its CUDA runtime and the GPU; without CuPy or a GPU it says so
   and exits 0 (nothing to check).
2. The op table on the device: tests/test_standin_device.py with NDGRAD_TEST_REAL_CUDA=1 (every
   op's forward, gradients, gradcheck and gradgradcheck on "cuda" against the CPU), in a
   subprocess with its own time limit; --quick runs a sample of it.
3. The real workloads, each from the same NumPy-made weights and data on every library: a GPT
   training step (embedding, causal self-attention blocks, AdamW), the same step under
   autocast float16 with GradScaler, a CNN training step (conv2d, max_pool2d, SGD), and greedy
   generation with the GPT; ndgrad on "cuda" and on the CPU (the numerics check: the device's
   losses against the CPU's), and PyTorch on "cuda" when it has it. Times are medians of the
   timed steps after warm-up, with the device synchronized; ratios are ndgrad / PyTorch.

Designed to finish within ten minutes on one GPU (--budget, default 540 s: parts that would
start past it are skipped and said so).
"""
import argparse
import importlib.util
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "src"))


def device_report(standin):
    """(ok, lines): whether "cuda" is there, and what it is."""
    if standin:
        from ndgrad import _backend
        _backend.use_standin(True)
        return True, ["device: the strict stand-in (ndgrad.cuda._standin: host NumPy behind \"cuda\"; "
                      "timings are not a GPU's)"]
    try:
        import cupy
    except ImportError:
        return False, ["CuPy is not installed (pip install cupy-cuda12x, or cupy-cuda13x for "
                       "CUDA 13): nothing to check"]
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:   # (no driver, no device)
        return False, [f"CuPy {cupy.__version__} sees no CUDA device ({type(e).__name__}: {e}): "
                       "nothing to check"]
    if n == 0:
        return False, [f"CuPy {cupy.__version__} sees no CUDA device: nothing to check"]
    p = cupy.cuda.runtime.getDeviceProperties(0)
    name = p["name"].decode() if isinstance(p["name"], bytes) else p["name"]
    rt = cupy.cuda.runtime.runtimeGetVersion()
    return True, [f"device: {name} (compute capability {p['major']}.{p['minor']}, "
                  f"{p['totalGlobalMem'] / 2 ** 30:.1f} GiB), {n} device(s)",
                  f"CuPy {cupy.__version__}, CUDA runtime {rt // 1000}.{rt % 1000 // 10}"]


def op_table(standin, quick, timeout, log=None):
    """The op-table device tests in a subprocess: (summary line, seconds); `log`: a file for
    pytest's whole output."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "src") + os.pathsep + env.get("PYTHONPATH", "")
    if not standin:
        env["NDGRAD_TEST_REAL_CUDA"] = "1"
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rf",  # (-q: pyproject's)
           os.path.join(ROOT, "tests", "test_standin_device.py")]
    if quick:
        cmd += ["-k", "matmul or exp"]
    elif importlib.util.find_spec("xdist") is not None and (os.cpu_count() or 1) > 2:
        cmd += ["-n", str(min(8, os.cpu_count())), "--tb=line"]   # (processes share the GPU)
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired as e:
        if log:
            with open(log, "w") as f:
                f.write(e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or ""))
        return f"op table: stopped after {timeout:.0f} s (time limit)", time.perf_counter() - t0
    if log:
        with open(log, "w") as f:
            f.write(p.stdout + p.stderr)
    tail = [ln for ln in p.stdout.strip().splitlines() if ln.strip()]
    summary = tail[-1] if tail else p.stderr.strip().splitlines()[-1:]
    fails = [ln for ln in tail if ln.startswith("FAILED")][:10]
    return "\n".join([f"op table: {summary}"] + ["  " + f for f in fails]), \
        time.perf_counter() - t0


# ---------------------------------------------------------------- workloads (torch API)

def gpt_weights(V, D, L, T):
    rng = np.random.default_rng(0)
    w = {"wte": rng.standard_normal((V, D)) * 0.02, "wpe": rng.standard_normal((T, D)) * 0.02}
    for i in range(L):
        w[f"qkv{i}"] = rng.standard_normal((3 * D, D)) * 0.02
        w[f"proj{i}"] = rng.standard_normal((D, D)) * 0.02
        w[f"fc{i}"] = rng.standard_normal((4 * D, D)) * 0.02
        w[f"out{i}"] = rng.standard_normal((D, 4 * D)) * 0.02
    return {k: v.astype(np.float32) for k, v in w.items()}


def gpt(T, weights, device, L, heads):
    F = T.nn.functional
    ps = {k: T.tensor(v, device=device, requires_grad=True) for k, v in weights.items()}

    def forward(idx):
        B, S = idx.shape
        x = ps["wte"][idx] + ps["wpe"][:S]
        for i in range(L):
            h = F.layer_norm(x, x.shape[-1:])
            q, k, v = F.linear(h, ps[f"qkv{i}"]).chunk(3, dim=-1)
            q, k, v = (t.reshape(B, S, heads, -1).transpose(1, 2) for t in (q, k, v))
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + F.linear(a.transpose(1, 2).reshape(B, S, -1), ps[f"proj{i}"])
            h = F.layer_norm(x, x.shape[-1:])
            x = x + F.linear(F.gelu(F.linear(h, ps[f"fc{i}"])), ps[f"out{i}"])
        return F.linear(F.layer_norm(x, x.shape[-1:]), ps["wte"])
    return ps, forward


def gpt_step(T, device, size, amp=False):
    V, D, L, S, B, heads = size
    ps, forward = gpt(T, gpt_weights(V, D, L, S), device, L, heads)
    rng = np.random.default_rng(1)
    data = T.tensor(rng.integers(0, V, (B, S + 1)), device=device)
    opt = T.optim.AdamW(list(ps.values()), lr=1e-3)
    scaler = T.amp.GradScaler("cuda") if amp else None

    def step():
        opt.zero_grad()
        with T.autocast("cuda", dtype=T.float16, enabled=amp):
            logits = forward(data[:, :-1])
            loss = T.nn.functional.cross_entropy(logits.reshape(-1, V).float(),
                                                 data[:, 1:].reshape(-1))
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        return loss
    return step


def generate(T, device, size):
    V, D, L, S, B, heads = size
    ps, forward = gpt(T, gpt_weights(V, D, L, S), device, L, heads)
    start = T.tensor(np.arange(4)[None] % V, device=device)

    def step():
        with T.no_grad():
            idx = start
            for _ in range(S - 4):
                nxt = forward(idx)[:, -1].argmax(-1, keepdim=True)
                idx = T.cat([idx, nxt], dim=1)
        return idx.sum().float()
    return step


def cnn_step(T, device, size):
    N, C, H = size
    rng = np.random.default_rng(2)
    x = T.tensor(rng.standard_normal((N, 1, H, H)).astype(np.float32), device=device)
    y = T.tensor(rng.integers(0, 10, N), device=device)
    w = [rng.standard_normal(s).astype(np.float32) * 0.1
         for s in ((C, 1, 3, 3), (C,), (10, C * (H // 2) ** 2), (10,))]
    ps = [T.tensor(a, device=device, requires_grad=True) for a in w]
    opt = T.optim.SGD(ps, lr=0.01, momentum=0.9)
    F = T.nn.functional

    def step():
        opt.zero_grad()
        h = F.max_pool2d(F.relu(F.conv2d(x, ps[0], ps[1], padding=1)), 2)
        loss = F.cross_entropy(F.linear(h.reshape(N, -1), ps[2], ps[3]), y)
        loss.backward()
        opt.step()
        return loss
    return step


def run(make, T, device, warm, steps):
    """(median seconds per step, the last result as a float)."""
    step = make(T, device)
    sync = (lambda: T.cuda.synchronize()) if device == "cuda" else (lambda: None)
    for _ in range(warm):
        step()
    sync()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        r = step()
        sync()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), float(r.item())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--standin", action="store_true", help="the stand-in device behind cuda")
    ap.add_argument("--quick", action="store_true", help="CI-sized: small models, few steps")
    ap.add_argument("--budget", type=float, default=540.0, help="seconds before parts are "
                    "skipped (default 540: the whole check within ten minutes)")
    ap.add_argument("--log", help="write the op table's whole pytest output to this file")
    args = ap.parse_args(argv)
    t_start = time.perf_counter()
    ok, lines = device_report(args.standin)
    print("\n".join(lines))
    if not ok:
        return 0
    import ndgrad
    try:
        import torch
        torch_cuda = (not args.standin) and torch.cuda.is_available()
        print(f"PyTorch {torch.__version__}: " + ("CUDA " + str(torch.version.cuda) if torch_cuda
                                                  else "no CUDA here (ndgrad alone)"))
    except ImportError:
        torch, torch_cuda = None, False
        print("PyTorch: not installed (ndgrad alone)")

    def left():
        return args.budget - (time.perf_counter() - t_start)

    summary, secs = op_table(args.standin, args.quick, log=args.log,
                             timeout=max(30.0, min(300.0, left() / 2)))
    print(f"{summary}  [{secs:.0f} s]")

    quick = args.quick
    gpt_size = (64, 32, 2, 16, 4, 2) if quick else (512, 256, 4, 128, 16, 4)
    gen_size = (64, 32, 2, 12, 1, 2) if quick else (512, 256, 4, 64, 1, 4)
    cnn_size = (8, 4, 12) if quick else (128, 32, 28)
    warm, steps = (1, 2) if quick else (3, 10)
    work = [("GPT step", lambda T, d: gpt_step(T, d, gpt_size)),
            ("GPT step (autocast fp16 + GradScaler)", lambda T, d: gpt_step(T, d, gpt_size,
                                                                            amp=True)),
            ("CNN step", lambda T, d: cnn_step(T, d, cnn_size)),
            ("generation", lambda T, d: generate(T, d, gen_size))]
    print(f"\n{'workload':40s} {'ndgrad cuda':>12s} {'ndgrad cpu':>12s} {'torch cuda':>12s} "
          f"{'ratio':>7s}  result after 2 steps: cuda vs cpu")
    for name, make in work:
        if left() < 0:
            print(f"{name:40s} skipped: past the time budget")
            continue
        amp = "autocast" in name
        t_dev, _ = run(make, ndgrad, "cuda", warm, steps)
        # numerics: two steps from the same start on the device and on the CPU (the second
        # result: after one update); on PyTorch's CUDA too where it is there
        _, r_dev = run(make, ndgrad, "cuda", 0, 2)
        t_cpu, r_cpu = run(make, ndgrad, "cpu", 0, 2) if not amp else (None, None)
        t_t = r_t = None
        if torch_cuda:
            t_t, _ = run(make, torch, "cuda", warm, steps)
            _, r_t = run(make, torch, "cuda", 0, 2)
        num = f"{r_dev:.6g}" if r_cpu is None else f"{r_dev:.6g} vs {r_cpu:.6g}, rel " \
            f"{abs(r_dev - r_cpu) / max(abs(r_cpu), 1e-30):.1e}"
        if r_t is not None:
            num += f"; torch cuda {r_t:.6g}"
        ratio = f"{t_dev / t_t:7.2f}" if t_t else "      -"
        tt = f"{t_t * 1e3:10.2f}ms" if t_t else "           -"
        tc = f"{t_cpu * 1e3:10.2f}ms" if t_cpu is not None else "           -"
        print(f"{name:40s} {t_dev * 1e3:10.2f}ms {tc} {tt} {ratio}  {num}")
    print(f"\ntotal {time.perf_counter() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
