"""Where the microseconds go for `y = y * 2` (forward and backward) on a small tensor.

    python bench/profile_mul.py [--ops 2000] [--top 12]

Prints (1) the time per op, forward and backward, the minimum over many short interleaved
repetitions (robust to a busy machine), (2) how many objects the cyclic garbage collector tracks
per graph node (what makes deep graphs slow, bench W3), and (3) cProfile's own-time table for each
half, as microseconds per op. cProfile inflates small functions; use its shares, not its totals.
The cyclic garbage collector is off while profiling (see bench/NOTES.md for its cost).
"""
import argparse
import cProfile
import gc
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", type=int, default=2000)
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--package", default="ndgrad", help="import name (to compare two builds)")
    args = ap.parse_args(argv)
    T = __import__(args.package)
    n = args.ops

    def forward(k):
        x = T.ones(8, requires_grad=True)
        y = x
        for _ in range(k):
            y = y * 2
        return y.sum()

    # (1) timing: min over short repetitions
    fwd = bwd = float("inf")
    for _ in range(200):
        t0 = time.perf_counter()
        s = forward(100)
        t1 = time.perf_counter()
        s.backward()
        t2 = time.perf_counter()
        fwd, bwd = min(fwd, t1 - t0), min(bwd, t2 - t1)
    print(f"{args.package}: forward {fwd / 100 * 1e6:.2f} us/op, backward {bwd / 100 * 1e6:.2f} "
          f"us/op (min over 200 chains of 100 ops on shape (8,))")

    # (2) objects tracked by the cyclic collector that each node keeps alive
    s = None
    forward(n)
    gc.collect()
    before = len(gc.get_objects())
    s = forward(n)
    gc.collect()
    print(f"gc-tracked objects kept alive per node: {(len(gc.get_objects()) - before) / n:.2f}")
    del s

    # (3) profiles (garbage collection off: its pauses land on whatever function runs)
    gc.collect()
    gc.disable()
    for half in ("forward", "backward"):
        prof = cProfile.Profile()
        if half == "forward":
            prof.enable()
            s = forward(n)
            prof.disable()
        else:
            s = forward(n)
            prof.enable()
            s.backward()
            prof.disable()
        st = pstats.Stats(prof)
        rows = sorted(st.stats.items(), key=lambda kv: -kv[1][2])[:args.top]
        total = sum(v[2] for v in st.stats.values())
        print(f"\n{half}: cProfile own time, us per op (total {total / n * 1e6:.2f})")
        for (file, line, name), (cc, nc, tt, ct, callers) in rows:
            where = f"{os.path.basename(file)}:{line}({name})" if file != "~" else name
            print(f"  {tt / n * 1e6:7.2f}  {nc / n:5.1f} calls/op  {where}")
    gc.enable()


if __name__ == "__main__":
    main()
