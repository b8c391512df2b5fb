"""A few rows against a transposed matrix (Note [Few rows against a transposed matrix] in
ops/linalg.py): where the transposed product is taken, and that it changes no bit."""
import numpy as np
import pytest

import ndgrad
from ndgrad.ops import linalg

# (rows, out features, in features): generation's linear layers and the box's edges
INSIDE = [(8, 384, 128), (12, 128, 128), (24, 512, 128), (39, 128, 512), (40, 1024, 768),
          (8, 256, 128), (17, 200, 300)]
OUTSIDE = [(7, 384, 128), (41, 384, 128), (1, 65, 128), (8, 128, 128), (24, 2048, 128),
           (24, 384, 64), (1024, 384, 128)]


class _Spy:
    """An array module that records whether the product was formed transposed."""

    def __init__(self):
        self.calls = []

    def matmul(self, a, b):
        self.calls.append((a.shape, b.shape))
        return np.matmul(a, b)

    def ascontiguousarray(self, a):
        return np.ascontiguousarray(a)


def _operands(m, n, k, seed=0):
    r = np.random.default_rng(seed)
    return (r.standard_normal((m, k)).astype(np.float32),
            r.standard_normal((n, k)).astype(np.float32))


@pytest.mark.parametrize("m,n,k", INSIDE + OUTSIDE)
def test_the_box(monkeypatch, m, n, k):
    monkeypatch.setattr(linalg, "_FEW_ROWS", True)
    x, w = _operands(m, n, k)
    spy = _Spy()
    out = linalg.few_rows_mm(spy, x, w.T)
    transposed = spy.calls == [((n, k), (k, m))]
    assert transposed == ((m, n, k) in INSIDE)
    assert out.shape == (m, n) and out.flags.c_contiguous
    # a float64 product, or operands in other layouts, never take it
    spy = _Spy()
    linalg.few_rows_mm(spy, x.astype(np.float64), w.T.astype(np.float64))
    linalg.few_rows_mm(spy, x, np.ascontiguousarray(w.T))
    linalg.few_rows_mm(spy, np.asfortranarray(x), w.T)
    assert spy.calls == [((m, k), (k, n))] * 3


@pytest.mark.parametrize("m,n,k", INSIDE)
def test_same_bits_where_taken(m, n, k):
    # where this machine's kernels take the route, it must give NumPy's own product bit for bit
    x, w = _operands(m, n, k, seed=m + n + k)
    np.testing.assert_array_equal(linalg.few_rows_mm(np, x, w.T), x @ w.T)


@pytest.mark.parametrize("m", [8, 24, 39])
def test_linear_without_and_with_grad_agree(m):
    # no_grad runs the linear op's forward, a graph runs t + addmm: both through the route
    torch_like = ndgrad.nn.Linear(128, 384)
    x = ndgrad.tensor(np.random.default_rng(m).standard_normal((1, m, 128)).astype(np.float32))
    with ndgrad.no_grad():
        a = torch_like(x)
    b = torch_like(x)
    assert b.grad_fn is not None
    np.testing.assert_array_equal(a.numpy(), b.detach().numpy())
