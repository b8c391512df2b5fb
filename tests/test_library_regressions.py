"""Causes found running torch-based libraries' own test suites under ndgrad
(bench/ecosystem.py), each checked against PyTorch."""
import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shapes", [((256, 1), (256, 1), (3,)), ((5, 1), (1, 4), (5, 4)),
                                    ((4,), (4,), (3, 4)), ((2, 1, 3), (2, 1, 3), (4, 1))])
def test_lerp_with_a_weight_broadcasting_both_ends(shapes, dtype):
    """zuko's Gauss-Legendre nodes: lerp(a[..., None], b[..., None], nodes), the weight wider
    than both ends (the float32 fused multiply-add path multiplied in place)."""
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    arrays[2] = rng.uniform(-0.5, 1.5, shapes[2]).astype(dtype)
    ours = ndgrad.lerp(*(ndgrad.tensor(a, requires_grad=True) for a in arrays))
    theirs = torch.lerp(*(torch.tensor(a, requires_grad=True) for a in arrays))
    assert ours.shape == theirs.shape
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    t = ndgrad.tensor(arrays[0])
    ours = ndgrad.addcmul(t, ndgrad.tensor(arrays[1]), ndgrad.tensor(arrays[2]), value=0.5)
    theirs = torch.addcmul(torch.tensor(arrays[0]), torch.tensor(arrays[1]),
                           torch.tensor(arrays[2]), value=0.5)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_iterating_and_unbinding_an_empty_dimension():
    """zuko: `for child in adjacency[:, node].nonzero()` with no nonzero entry."""
    for lib in (torch, ndgrad):
        assert list(lib.zeros(0, 1)) == []
        assert lib.unbind(lib.zeros(0, 3)) == ()
        assert lib.zeros(2, 0).unbind(1) == ()
        x = lib.zeros(0, 2, requires_grad=True)
        assert list(x) == [] and x.unbind(0) == ()
