"""nll_loss's sum and mean (the loss of F.cross_entropy) bit for bit against PyTorch: its CPU
kernel adds the batch's losses in an eight-level cascade (ops/nn_ops._nll_total); NumPy's
pairwise sum differed in the last bit for about half of the batches tried. (cross_entropy's
per-element log-probabilities come from NumPy's exp, which differs from PyTorch's in the last
bit: the comparison feeds both libraries the same log-probabilities.)"""
import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_nll_loss_reductions_like_pytorch(dtype, reduction):
    r = np.random.default_rng(1)
    for B in list(range(1, 70)) + [255, 256, 257, 1000, 4095, 4096, 4097, 70000]:
        lp = (r.standard_normal((B, 7)) * 3 - 2).astype(dtype)
        y = r.integers(0, 7, B)
        if B == 5:
            lp[:] = -0.0      # (an all-zero sum: PyTorch's +0)
        ours = ndgrad.nn.functional.nll_loss(ndgrad.tensor(lp), ndgrad.tensor(y),
                                             reduction=reduction).numpy()
        theirs = torch.nn.functional.nll_loss(torch.tensor(lp), torch.tensor(y),
                                              reduction=reduction).numpy()
        assert ours.tobytes() == theirs.tobytes(), B
