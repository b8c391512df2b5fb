"""The float32 fused multiply-add (addcmul, lerp, optimizers' updates) rounds once, as PyTorch's,
also where the product broadcasts over c's dims and c is in another memory order: the rare
elements whose float64 sum sits on a float32 tie are fixed at their own positions (they were
looked up in the smaller product's flat order: an IndexError in gpytorch's MINRES, or wrong
values)."""
import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")
f32 = np.float32


def _operands(order):
    rng = np.random.default_rng(0)
    c = rng.uniform(-0.5, 0.5, (60, 9)).astype(f32)   # (no float32 ties but those below)
    a = rng.standard_normal(9).astype(f32)
    b = rng.standard_normal(9).astype(f32)
    # (1 + 2^-23) + (1 + 2^-23) * 2^-24 (1 - 2^-23) lies just below a float32 tie that float64
    # rounds onto: a single rounding gives 1 + 2^-23, a double one 1 + 2^-22
    for i, j in ((1, 3), (40, 8), (3, 3)):
        c[i, j], a[j], b[j] = f32(1 + 2 ** -23), f32(1 + 2 ** -23), f32(2 ** -24 * (1 - 2 ** -23))
    return (np.asfortranarray(c) if order == "F" else c), a, b


@pytest.mark.parametrize("order", ["C", "F"])
def test_addcmul_with_a_broadcast_product_rounds_once(order):
    c, a, b = _operands(order)
    want = torch.addcmul(torch.tensor(c), torch.tensor(a), torch.tensor(b)).numpy()
    assert want[1, 3] == f32(1 + 2 ** -23)
    got = ndgrad.addcmul(ndgrad.tensor(c), ndgrad.tensor(a), ndgrad.tensor(b)).numpy()
    np.testing.assert_array_equal(got, want)
    x = ndgrad.tensor(c)
    x.addcmul_(ndgrad.tensor(a), ndgrad.tensor(b), value=1)
    np.testing.assert_array_equal(x.numpy(), want)
