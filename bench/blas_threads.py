"""Who runs on the second core: ndgrad's pieces against OpenBLAS's waiting threads.

    python bench/blas_threads.py [--steps 15] [--mode all|base|nt1|own]

NumPy's OpenBLAS runs a GEMM on its own worker threads, which then wait for the next GEMM by
spinning (up to 2^28 cycles by default, ~0.1 s) before they sleep. In a training step there
is always a GEMM less than 0.1 s ago, so ndgrad's kernel pieces (ops/_parallel.py, Note
[Parallel pieces]) share the second core with a spinning OpenBLAS thread. This script runs
the GPT step and the W10 LSTM step (bench/workloads_*.py) in a fresh process per mode:

  base  as shipped: ndgrad's pieces on torch.get_num_threads() threads, OpenBLAS's own threads;
  nt1   ndgrad's kernels whole (set_num_threads(1)), OpenBLAS's own threads;
  own   OpenBLAS on one thread (its openblas_set_num_threads, before the first GEMM), and the
        2-d GEMMs of ndgrad's ops (numpy.matmul, wrapped for this process only) cut into row
        pieces on ndgrad's pool: one set of threads does all the parallel work.

and prints each step's wall-clock minimum and median, and the CPU time each thread of the
process spent (from /proc: the main thread, OpenBLAS's workers, ndgrad's pool), per step.
"own" is an experiment, not a mode of ndgrad: it changes NumPy's BLAS for the whole process,
and only numpy.matmul's GEMMs are split (docs/performance.md, "OpenBLAS's waiting threads").
"""
import argparse
import ctypes
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))
sys.path.insert(0, HERE)

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _openblas():
    """NumPy's bundled OpenBLAS's set_num_threads (torch.__config__ finds the library), or
    None."""
    from ndgrad.__config__ import _openblas_function
    f = _openblas_function("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
                           "openblas_set_num_threads64_", "openblas_set_num_threads")
    if f is not None:
        f.argtypes = [ctypes.c_int]
    return f


def _own_gemms():
    """OpenBLAS on one thread; numpy.matmul's large 2-d products in row pieces on ndgrad's
    pool (each piece one single-threaded GEMM into its rows of the result)."""
    import numpy as np
    from ndgrad.ops import _parallel as par
    set_threads = _openblas()
    if set_threads is None:
        raise SystemExit("no OpenBLAS of NumPy's found: the 'own' mode needs one")
    set_threads(1)
    matmul = np.matmul

    def split(a, b, out=None, **kw):
        if out is not None or kw or getattr(a, "ndim", 0) != 2 or getattr(b, "ndim", 0) != 2 \
                or a.shape[0] < 32 or a.shape[0] * a.shape[1] * b.shape[1] < 1 << 22:
            return matmul(a, b, out=out, **kw) if out is not None else matmul(a, b, **kw)
        o = np.empty((a.shape[0], b.shape[1]), np.result_type(a, b))

        def piece(lo, hi):
            matmul(a[lo:hi], b, out=o[lo:hi])
        par.run(piece, a.shape[0], 16, align=16)
        return o
    np.matmul = split


def _ticks():
    """CPU clock ticks of each thread of this process (Linux's /proc; {} elsewhere)."""
    out = {}
    if not os.path.isdir("/proc/self/task"):
        return out
    for t in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{t}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        out[int(t)] = int(fields[11]) + int(fields[12])   # utime + stime
    return out


def _child(mode, steps):
    import ndgrad
    if mode == "own":
        _own_gemms()
    if mode == "nt1":
        ndgrad.set_num_threads(1)
    import workloads_cnn_rnn
    import workloads_transformer
    makers = {"GPT": lambda: workloads_transformer.gpt_step(True)("ndgrad", False)[0],
              "W10": lambda: workloads_cnn_rnn.w10("ndgrad", False)[0]}
    for name, make in makers.items():
        step = make()
        for _ in range(3):
            step()
        t0 = _ticks()
        times = []
        for _ in range(steps):
            t = time.perf_counter()
            step()
            times.append(time.perf_counter() - t)
        t1 = _ticks()
        main = threading.get_native_id()
        cpu = {tid: (t1[tid] - t0.get(tid, 0)) / _TICK / steps * 1e3 for tid in t1}
        times.sort()
        print(f"{mode:4s} {name:3s} wall ms min {times[0] * 1e3:6.1f} median "
              f"{times[len(times) // 2] * 1e3:6.1f} | CPU ms a step: main "
              f"{cpu.get(main, 0):5.1f}, other threads "
              + ", ".join(f"{v:5.1f}" for tid, v in sorted(cpu.items()) if tid != main),
              flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=15)
    ap.add_argument("--mode", default="all", choices=["all", "base", "nt1", "own"])
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return _child(args.mode, args.steps)
    for mode in (["base", "nt1", "own"] if args.mode == "all" else [args.mode]):
        subprocess.run([sys.executable, os.path.abspath(__file__), "--child", "--mode", mode,
                        "--steps", str(args.steps)], check=True)


if __name__ == "__main__":
    main()
