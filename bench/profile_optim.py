"""Where an optimizer step's time goes, in CPU time (issue 34 item 7).

    python bench/profile_optim.py [--rounds 15]

1. The SGD update `p.add_(g, alpha=-lr)` on W2's 235 k float32 parameters, four ways: ndgrad's
   fused multiply-add (ops/_fma.py: float64 in work arrays, ties rounded to odd), the float64
   round trip with fresh temporaries it replaced,
   NumPy's `p -= lr * g` (two roundings: not PyTorch's bits), PyTorch's add_.
2. Adam's four array updates on one 400 k-element parameter (lerp_, mul_, addcmul_, addcdiv_
   with its denominator), ndgrad and PyTorch.
3. W2-user and MLP (bench/workloads_optim.py): forward+backward and optimizer.step() apart.

PyTorch and NumPy's BLAS run on one thread and everything is timed with time.process_time (this process's CPU
time), interleaved round by round: on a shared machine wall-clock times measure the neighbours.
Minimum and median over the rounds.
"""
import argparse
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # one thread for NumPy's BLAS too
import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))
sys.path.insert(0, HERE)

import ndgrad  # noqa: E402
from ndgrad.ops import _fma  # noqa: E402
import workloads_optim as W  # noqa: E402

try:
    import torch
    torch.set_num_threads(1)
except ImportError:
    torch = None


def _stats(ts):
    ts = sorted(ts)
    return ts[0] * 1e3, ts[len(ts) // 2] * 1e3


def _interleaved(fns, rounds):
    times = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            f()                          # untimed: warm caches
            t0 = time.process_time()
            f()
            times[k].append(time.process_time() - t0)
    return {k: _stats(v) for k, v in times.items()}


def _float64_round_trip(p, g, alpha):
    """The float32 fused multiply-add of ndgrad before this round: every element through
    float64 and back."""
    r = np.multiply(g, alpha, dtype=np.float64)
    r += p.astype(np.float64)
    p[...] = r


def sgd_update(rounds):
    n = sum(w.size for w in W._mlp_weights([784, 256, 128, 10], 1))
    rng = np.random.default_rng(0)
    p = (rng.standard_normal(n) / 28).astype(np.float32)
    g = (rng.standard_normal(n) * 1e-2).astype(np.float32)
    a = np.float32(-0.01)
    fns = {"ndgrad add_ (fused, exact)": lambda: _fma.add_(p, g, -0.01),
           "float64 round trip (before)": lambda: _float64_round_trip(p, g, a),
           "NumPy p -= lr * g (two roundings)": lambda: p.__iadd__(a * g)}
    if torch is not None:
        tp, tg = torch.from_numpy(p.copy()), torch.from_numpy(g)
        fns["PyTorch add_"] = lambda: tp.add_(tg, alpha=-0.01)
    return f"SGD update, {n} float32 parameters", _interleaved(fns, rounds)


def adam_update(rounds):
    n = 512 * 784
    rng = np.random.default_rng(1)
    g = (rng.standard_normal(n) * 1e-3).astype(np.float32)
    arrays = {"p": (rng.standard_normal(n) / 28).astype(np.float32), "g": g,
              "m": (g * 0.5).astype(np.float32), "v": (g * g * 0.3).astype(np.float32)}

    def steps(lib):
        if lib == "ndgrad":
            from ndgrad.optim._kernels import Arr
            p, g_, m, v = (Arr(arrays[k].copy()) for k in "pgmv")
        else:
            p, g_, m, v = (torch.from_numpy(arrays[k].copy()) for k in "pgmv")

        def step():
            m.lerp_(g_, 0.1)
            v.mul_(0.999).addcmul_(g_, g_, value=0.001)
            d = (v.sqrt() / 0.99).add_(1e-8)
            p.addcdiv_(m, d, value=-1e-3)
        return {f"{lib} lerp_": lambda: m.lerp_(g_, 0.1),
                f"{lib} addcmul_": lambda: v.addcmul_(g_, g_, value=0.001),
                f"{lib} whole update": step}
    fns = steps("ndgrad")
    if torch is not None:
        fns.update(steps("torch"))
    return f"Adam's update of one {n}-element float32 parameter", _interleaved(fns, rounds)


def training_steps(rounds):
    out = []
    for maker, name in ((W.w2_user, "W2-user (SGD)"), (W.mlp_adam, "MLP (Adam)")):
        fns = {}
        for lib in ("ndgrad",) + (("torch",) if torch is not None else ()):
            T = ndgrad if lib == "ndgrad" else torch
            step = maker(lib, False, lambda _: T)[0]
            opt = step.__closure__ and next(
                c.cell_contents for c in step.__closure__ if hasattr(c.cell_contents, "step"))
            model_step = step

            def fwd_bwd(step=model_step, opt=opt):
                opt.zero_grad()
                # the step's own forward and backward, then no update: step() minus opt.step()
                real = opt.step
                opt.step = lambda *a, **k: None
                try:
                    step()
                finally:
                    opt.step = real
            fns[f"{lib} forward+backward"] = fwd_bwd
            fns[f"{lib} optimizer.step()"] = opt.step
            fns[f"{lib} whole step"] = model_step
        out.append((name, _interleaved(fns, rounds)))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args(argv)
    sections = [sgd_update(args.rounds), adam_update(args.rounds)] + \
        training_steps(args.rounds)
    for title, stats in sections:
        print(f"\n{title} (CPU ms, min / median over {args.rounds} rounds)")
        for k, (lo, med) in stats.items():
            print(f"  {k:40s} {lo:8.3f} / {med:8.3f}")


if __name__ == "__main__":
    main()
