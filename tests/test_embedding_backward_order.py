"""An embedding's backward sums each index's gradient rows one after the other from zero, as
PyTorch's CPU kernel does, whatever the repeats: a few (one fancy-indexed add a layer of
occurrences), many (a character-level model's 16 K tokens over 65 symbols: blocks of layers,
each summed down a padded axis, ops/nn_ops._scatter_add_blocks), and blocks mixed with single
layers where an index set is too wide for a block."""
import numpy as np
import pytest

import ndgrad
from ndgrad.ops import nn_ops

_SKEW = np.array([0.15] + [0.85 / 64] * 64)   # one symbol (a space) far above the others


def _sequential(size, idx, src):
    out = np.zeros((size,) + src.shape[1:], src.dtype)
    for i, j in enumerate(idx):
        out[j] += src[i]
    return out


def _same_bits(a, b):
    u = np.uint64 if a.dtype == np.float64 else np.uint32
    return bool(((a.view(u) == b.view(u)) | (np.isnan(a) & np.isnan(b))).all())


def _rows(r, n, rest, dtype):
    src = r.standard_normal((n,) + rest) * 10.0 ** r.integers(-20, 20, (n,) + (1,) * len(rest))
    src = src.astype(dtype)
    src[::97] = -0.0
    src[5] = np.inf
    src[(11,) + (0,) * len(rest)] = np.nan
    return src


@pytest.mark.parametrize("budget", [None, 64, 500, 4096])
@pytest.mark.parametrize("case", ["skewed", "uniform", "one-hot-in-a-large-table", "3-d rows",
                                  "float64", "rows of one element", "few repeats"])
def test_sums_in_order(case, budget, monkeypatch):
    if budget is not None:
        monkeypatch.setattr(nn_ops, "_SCATTER_BLOCK", budget)
    r = np.random.default_rng(len(case))
    size, rest, dtype = 65, (24,), np.float32
    idx = r.choice(65, 3000, p=_SKEW)
    if case == "uniform":
        size, idx = 10, r.integers(0, 10, 2000)
    elif case == "one-hot-in-a-large-table":
        size, idx = 3000, np.concatenate([r.integers(0, 3000, 2000), np.full(400, 7)])
        r.shuffle(idx)
    elif case == "3-d rows":
        rest = (3, 4)
    elif case == "float64":
        dtype = np.float64
    elif case == "rows of one element":
        rest = (1,)
    elif case == "few repeats":
        size, idx = 500, r.integers(0, 500, 2000)
    src = _rows(r, idx.size, rest, dtype)
    out = np.zeros((size,) + rest, dtype)
    nn_ops._scatter_add_rows(np, out, idx, src)
    assert _same_bits(out, _sequential(size, idx, src))


def test_embedding_weight_gradient_like_pytorch():
    torch = pytest.importorskip("torch")
    r = np.random.default_rng(3)
    for n, dim in ((4000, 48), (300, 16)):
        idx = r.choice(65, n, p=_SKEW)
        g = r.standard_normal((n, dim)).astype(np.float32)
        grads = []
        for T in (ndgrad, torch):
            w = T.tensor(np.zeros((65, dim), np.float32), requires_grad=True)
            T.nn.functional.embedding(T.tensor(idx), w).backward(T.tensor(g))
            grads.append(w.grad.numpy())
        assert _same_bits(*grads)
