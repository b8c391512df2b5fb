"""Loss reductions bit for bit against PyTorch. nll_loss's sum and mean (the loss of
F.cross_entropy): its CPU kernel adds the batch's losses in an eight-level cascade
(ops/nn_ops._nll_total); NumPy's pairwise sum differed in the last bit for about half of the
batches tried. The pointwise losses (mse, smooth L1, Huber, soft margin, ...) reduce as
torch.mean/sum do (ops/_cascade.py). (cross_entropy's
per-element log-probabilities come from NumPy's exp, which differs from PyTorch's in the last
bit: the comparison feeds both libraries the same log-probabilities.)"""
import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")


# a sum of more than 32768 elements splits by thread count, in both libraries
pytestmark = pytest.mark.usefixtures("two_threads_both")


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


@pytest.mark.parametrize("name,kw", [("mse_loss", {}), ("smooth_l1_loss", {"beta": 0.5}),
                                     ("huber_loss", {"delta": 0.7}), ("l1_loss", {})])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_pointwise_loss_reductions_like_pytorch(name, kw, reduction):
    r = np.random.default_rng(2)
    for shape in [(3,), (64, 10), (128, 33), (4, 3, 17, 9), (70000,)]:
        x, y = (r.standard_normal(shape).astype(np.float32) for _ in range(2))
        ours = getattr(ndgrad.nn.functional, name)(ndgrad.tensor(x), ndgrad.tensor(y),
                                                   reduction=reduction, **kw).numpy()
        theirs = getattr(torch.nn.functional, name)(torch.tensor(x), torch.tensor(y),
                                                    reduction=reduction, **kw).numpy()
        assert ours.tobytes() == theirs.tobytes(), shape
