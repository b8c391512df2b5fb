"""The cost of error sites (issue 7) on the W1 chain: sites on vs off, interleaved.

    python bench/sites_overhead.py [--rounds 1500] [--cpu]

Short chains (120 ops of W1's mix on a (2,2) float32 tensor, forward + backward), alternating
`set_error_sites(True)` and `(False)` round by round; prints the minimum and the 10th percentile
per op and the relative overhead. --cpu uses process time (steadier on a busy machine).
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))

import ndgrad  # noqa: E402
from ndgrad.autograd import set_error_sites  # noqa: E402

K = 20  # cycles of 6 ops


def chain():
    x = ndgrad.ones(2, 2, requires_grad=True)
    y = x
    for _ in range(K):
        y = ndgrad.log(ndgrad.exp(ndgrad.sigmoid(ndgrad.tanh(y * 0.9 + 0.1))))
    y.sum().backward()


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=1500)
    ap.add_argument("--cpu", action="store_true")
    args = ap.parse_args(argv)
    clock = time.process_time if args.cpu else time.perf_counter
    res = {True: [], False: []}
    try:
        for _ in range(args.rounds):
            for on in (True, False):
                set_error_sites(on)
                t = clock()
                chain()
                res[on].append(clock() - t)
    finally:
        set_error_sites(True)
    n = 6 * K
    stats = {}
    for on in (True, False):
        v = sorted(res[on])
        stats[on] = (v[0], v[len(v) // 10])
        print(f"sites {'on ' if on else 'off'}: min {v[0] / n * 1e6:.2f} us/op, "
              f"p10 {v[len(v) // 10] / n * 1e6:.2f} us/op")
    print(f"overhead: {100 * (stats[True][0] / stats[False][0] - 1):.1f} % (min), "
          f"{100 * (stats[True][1] / stats[False][1] - 1):.1f} % (p10)")


if __name__ == "__main__":
    main()
