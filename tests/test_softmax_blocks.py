"""softmax/log_softmax and their backward ops over large batches run block by block of rows
(ops/activation.py, _row_blocks): the same operations on each row, so the same bits as the
whole-array passes, non-finite rows included."""
import numpy as np
import pytest

import ndgrad as torch
from ndgrad.ops import activation as A


def _run(a, fn, dim):
    t = torch.tensor(a, requires_grad=True)
    y = fn(t, dim)
    g = torch.tensor(np.random.default_rng(1).standard_normal(a.shape).astype(a.dtype))
    gx, = torch.autograd.grad(y, t, g)
    return y.detach().numpy(), gx.numpy()


@pytest.mark.parametrize("fn", [torch.softmax, torch.log_softmax])
@pytest.mark.parametrize("shape,dim", [((300, 4000), 1), ((2, 150, 4000), -1),
                                       ((4, 600000), 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blocks_give_the_whole_arrays_bits(monkeypatch, fn, shape, dim, dtype):
    a = (np.random.default_rng(0).standard_normal(shape) * 4).astype(dtype)
    rows = a.reshape(-1, shape[-1])
    rows[1, 3], rows[2, 5], rows[0, :] = np.inf, np.nan, -np.inf
    calls = []
    real = A._by_blocks
    monkeypatch.setattr(A, "_by_blocks", lambda *args: calls.append(1) or real(*args))
    blocked = _run(a, fn, dim)
    assert len(calls) == 2                      # the forward and the backward took blocks
    monkeypatch.setattr(A, "_BLOCK_BYTES", 1 << 40)
    whole = _run(a, fn, dim)
    assert len(calls) == 2
    for b, w in zip(blocked, whole):
        np.testing.assert_array_equal(b, w)
    out = blocked[0].reshape(-1, shape[-1])             # (the -inf row and the nan row: nan)
    assert np.isnan(out[0]).all() and np.isnan(out[2]).all() and not np.isnan(out[-1]).any()


def test_small_or_other_dims_stay_whole(monkeypatch):
    monkeypatch.setattr(A, "_by_blocks", lambda *a: pytest.fail("blocked"))
    torch.softmax(torch.randn(64, 10), 1)                # small
    torch.log_softmax(torch.randn(4000, 300), 0)         # not the last dim
    torch.softmax(torch.randn(300, 4000).t(), 1)         # not C-contiguous
