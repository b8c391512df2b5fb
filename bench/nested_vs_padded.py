"""A transformer block on a batch of sequences of different lengths: jagged nested tensors
(`torch.nested`, layout=torch.jagged) against the same block on the padded batch with a
key-padding mask, in ndgrad, and PyTorch's nested tensors when installed.

    python bench/nested_vs_padded.py [--batch 32] [--dim 64] [--rounds 5]

Forward and backward of: linear, gelu, layer_norm, 4-head self-attention, linear; the loss is
the sum of the outputs over the real tokens. Results are checked equal (to float64 rounding)
before timing; times are the minimum over rounds, in milliseconds.
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


def block_nested(L, x, w1, w2, heads):
    F = L.nn.functional
    d = w1.shape[0]
    h = F.layer_norm(F.gelu(F.linear(x, w1)), (d,))
    q = h.view(h.shape[0], -1, heads, d // heads).transpose(1, 2)
    a = F.scaled_dot_product_attention(q, q, q).transpose(1, 2).flatten(-2)
    return F.linear(a, w2).values().sum()


def block_padded(L, x, keep, w1, w2, heads):
    F = L.nn.functional
    b, s, d = x.shape
    h = F.layer_norm(F.gelu(F.linear(x, w1)), (d,))
    q = h.view(b, s, heads, d // heads).transpose(1, 2)
    a = F.scaled_dot_product_attention(q, q, q, attn_mask=keep[:, None, None, :])
    a = a.transpose(1, 2).flatten(-2)
    return (F.linear(a, w2) * keep[..., None]).sum()


def run(L, lengths, d, heads, nested):
    rng = np.random.default_rng(0)
    seqs = [rng.standard_normal((n, d)) for n in lengths]
    w1 = L.tensor(rng.standard_normal((d, d)) / d ** 0.5, requires_grad=True)
    w2 = L.tensor(rng.standard_normal((d, d)) / d ** 0.5, requires_grad=True)
    if nested:
        x = L.nested.nested_tensor([L.tensor(s) for s in seqs], layout=L.jagged,
                                   requires_grad=True)
        loss = block_nested(L, x, w1, w2, heads)
    else:
        smax = max(lengths)
        pad = np.zeros((len(seqs), smax, d))
        keep = np.zeros((len(seqs), smax), dtype=bool)
        for i, s in enumerate(seqs):
            pad[i, :len(s)] = s
            keep[i, :len(s)] = True
        x = L.tensor(pad, requires_grad=True)
        loss = block_padded(L, x, L.tensor(keep), w1, w2, heads)
    loss.backward()
    return float(loss.item()), w1.grad.numpy().copy()


def timed(f, rounds):
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    lengths = [int(n) for n in rng.integers(4, 129, args.batch)]   # skewed: mean ~ max / 2
    heads = 4
    ref = run(ndgrad, lengths, args.dim, heads, False)
    for lib in (ndgrad, torch):
        if lib is None:
            continue
        got = run(lib, lengths, args.dim, heads, True)
        assert abs(got[0] - ref[0]) <= 1e-8 * max(1.0, abs(ref[0])), (lib.__name__, got[0])
        np.testing.assert_allclose(got[1], ref[1], rtol=1e-8, atol=1e-10)
    print(f"batch {args.batch}, dim {args.dim}, lengths {min(lengths)}..{max(lengths)} "
          f"({sum(lengths)} tokens, {len(lengths) * max(lengths)} padded), forward + backward:")
    rows = [("ndgrad padded + mask", lambda: run(ndgrad, lengths, args.dim, heads, False)),
            ("ndgrad jagged", lambda: run(ndgrad, lengths, args.dim, heads, True))]
    if torch is not None:
        torch.set_num_threads(1)
        rows.append(("torch padded + mask (1 thr)", lambda: run(torch, lengths, args.dim,
                                                                heads, False)))
        rows.append(("torch jagged (1 thread)", lambda: run(torch, lengths, args.dim, heads,
                                                            True)))
    for name, f in rows:
        print(f"  {name:26s} {timed(f, args.rounds):9.1f} ms")


if __name__ == "__main__":
    main()
