"""Kernels that form 1 / y through divide, not NumPy's reciprocal (whose loop takes twice as
long): the same bits, special values included."""
import numpy as np
import pytest

import ndgrad
from ndgrad.ops import activation as A, pointwise

F = ndgrad.nn.functional
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-300, 88.0, -88.0, 104.0,
           -104.0, 710.0, -710.0, 3e38, -3e38]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_sigmoid_is_the_reciprocal_of_one_plus_exp(dtype):
    n = 2 * pointwise._SMALL   # (the in-place passes of large arrays)
    x = np.random.default_rng(0).standard_normal(n).astype(dtype) * 20
    x[:len(SPECIAL)] = np.array(SPECIAL, dtype)
    with np.errstate(all="ignore"):
        want = np.reciprocal(1 + np.exp(-x))
    got = ndgrad.sigmoid(ndgrad.tensor(x)).numpy()
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("n", [64, 1 << 16])   # (GELU's small-array and large-array passes)
def test_gelu_saved_phi_is_the_reciprocal(n):
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32) * 3
    want = np.reciprocal(A._gelu_q(np, x) + np.float32(1))
    cdf = np.empty_like(x)      # (what a GELU's holder receives: Note [GELU's saved Phi])
    A._gelu_f32(np, x, cdf)
    assert cdf.tobytes() == want.tobytes()
    g = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    assert A._gelu_grad_f32(np, g, x).tobytes() == A._gelu_grad_f32(np, g, x, cdf).tobytes()
