"""Where the GPT step's and GPT generation's time goes (bench/workloads_transformer.py).

    OPENBLAS_NUM_THREADS=1 python bench/profile_gpt.py [--rounds 10] [--top 25] [--gen]

CPU time of this process (time.process_time), one thread for both libraries (PyTorch by
torch.set_num_threads(1), NumPy's OpenBLAS by the environment variable above): on a machine
shared with other work, CPU time is what the library itself spent, where wall-clock timings of
multi-threaded BLAS and OpenMP swing by 10-100x. Prints, as minima and medians over rounds
interleaved between the libraries:
(1) the train step's phases: forward, backward, clip_grad_norm_, AdamW's step, for ndgrad,
    PyTorch and the hand-written NumPy floor (bench/_gpt_floor.py);
(2) (or with --gen, the whole 32-token generation);
(3) ndgrad's functions by their own time under cProfile (CPU clock), the array kernels
    (addmm, matmul, GELU, attention, layer norm) among Python's per-op work. The profiler
    inflates Python-heavy code about 1.5-4x: read the shares, not the sums.
"""
import argparse
import cProfile
import os
import pstats
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))
sys.path.insert(0, HERE)

import ndgrad  # noqa: E402
import workloads_transformer as W  # noqa: E402

cpu = time.process_time


def _libs():
    import torch
    torch.set_num_threads(1)
    return (("ndgrad", ndgrad), ("torch", torch))


def _floor_phases():
    """The NumPy floor's step (bench/_gpt_floor.py) in the same four phases."""
    t = W._gpt_floor.Trainer(W._floor_weights(), W.N_HEAD)
    batches = W._batches()

    def run(r):
        x, y = batches[r % len(batches)]
        t0 = cpu()
        _, dlogits, saved = t.forward(x, y)
        t1 = cpu()
        grads = t.backward(dlogits, saved)
        t2 = cpu()
        t.clip(grads)
        t3 = cpu()
        t.adamw(grads)
        return t1 - t0, t2 - t1, t3 - t2, cpu() - t3
    return run


def _lib_phases(T):
    model = W._build(T, True)
    opt = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95))
    batches = [(T.tensor(x), T.tensor(y)) for x, y in W._batches()]

    def run(r):
        x, y = batches[r % len(batches)]
        t0 = cpu()
        _, loss = model(x, y)
        t1 = cpu()
        loss.backward()
        t2 = cpu()
        T.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        t3 = cpu()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return t1 - t0, t2 - t1, t3 - t2, cpu() - t3
    return run


def phases(rounds):
    runs = {name: _lib_phases(T) for name, T in _libs()}
    runs["numpy"] = _floor_phases()
    res = {n: {"forward": [], "backward": [], "clip": [], "AdamW": []} for n in runs}
    for r in range(rounds + 1):
        for name, run in runs.items():
            times = run(r)
            if r:  # (the first round warms up)
                for k, v in zip(res[name], times):
                    res[name][k].append(v)
    print("GPT train step, CPU ms, one thread: min (median); numpy: the hand-written floor")
    total = {n: 0.0 for n in res}
    for k in res["ndgrad"]:
        cells = []
        for n in res:
            a = sorted(res[n][k])
            total[n] += a[0]
            cells.append(f"{n} {a[0] * 1e3:7.2f} ({a[len(a) // 2] * 1e3:7.2f})")
        lo = {n: min(res[n][k]) for n in res}
        print(f"  {k:9s} " + "   ".join(cells) +
              f"   ndgrad/torch {lo['ndgrad'] / lo['torch']:.2f}, ndgrad/numpy "
              f"{lo['ndgrad'] / lo['numpy']:.2f}")
    print("  step      " + "   ".join(f"{n} {v * 1e3:7.2f}" for n, v in total.items()) +
          f"   ndgrad/torch {total['ndgrad'] / total['torch']:.2f}, ndgrad/numpy "
          f"{total['ndgrad'] / total['numpy']:.2f} (sums of the phases' minima)")


def generation(rounds):
    steps = {name: W.gpt_generate(name, False)[0] for name, _ in _libs()}
    res = {n: [] for n in steps}
    for r in range(rounds + 1):
        for name, step in steps.items():
            t0 = cpu()
            step()
            if r:
                res[name].append(cpu() - t0)
    a, b = sorted(res["ndgrad"]), sorted(res["torch"])
    print(f"GPT generation (32 tokens), CPU ms, one thread: ndgrad {a[0] * 1e3:.1f} "
          f"({a[len(a) // 2] * 1e3:.1f})  torch {b[0] * 1e3:.1f} ({b[len(b) // 2] * 1e3:.1f})  "
          f"ratio {a[0] / b[0]:.2f} ({a[len(a) // 2] / b[len(b) // 2]:.2f})")


def profile(gen, top, n=3):
    if gen:
        step = W.gpt_generate("ndgrad", False)[0]
    else:
        step = W.gpt_step(True)("ndgrad", False)[0]
    for _ in range(2):
        step()
    pr = cProfile.Profile(cpu)
    pr.enable()
    for _ in range(n):
        step()
    pr.disable()
    rows = [(tt / n, nc // n, f"{fn.split(os.sep)[-1]}:{name}")
            for (fn, _, name), (_, nc, tt, _, _) in pstats.Stats(pr).stats.items()]
    rows.sort(reverse=True)
    print(f"ndgrad's functions by own CPU time under cProfile, per {'generation' if gen else 'step'}"
          f" (total {sum(r[0] for r in rows) * 1e3:.1f} ms profiled):")
    for tt, nc, key in rows[:top]:
        print(f"  {tt * 1e3:7.2f} ms {nc:6d} calls  {key}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--gen", action="store_true", help="generation instead of the train step")
    args = ap.parse_args(argv)
    if os.environ.get("OPENBLAS_NUM_THREADS") != "1":
        print("(OPENBLAS_NUM_THREADS is not 1: NumPy's GEMMs count both threads' CPU time)")
    if args.gen:
        generation(args.rounds)
    else:
        phases(args.rounds)
    profile(args.gen, args.top)


if __name__ == "__main__":
    main()
