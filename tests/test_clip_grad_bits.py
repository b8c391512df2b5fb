"""Gradient clipping with PyTorch's arithmetic, and the 2-norm's blocked sum of squares.

clip_grads_with_norm_ scales by `clamp(max_norm / (total_norm + 1e-6), max=1.0)` computed as
PyTorch computes it in the norm's dtype (a number over a tensor is the tensor's reciprocal times
the number), and clip_grad_norm_ is get_total_norm followed by it, as in PyTorch (a NaN norm
makes every gradient NaN; a coefficient of one leaves the values and bumps the versions)."""
import math

import numpy as np
import pytest

import ndgrad
from ndgrad.ops.reduction import sum_squares

torch = pytest.importorskip("torch")


def _params(T, arrays):
    ps = [T.nn.Parameter(T.tensor(a)) for a in arrays]
    for p, a in zip(ps, arrays):
        p.grad = T.tensor(a.copy())
    return ps


def _arrays(rng, dtype=np.float32):
    shapes = [tuple(int(k) for k in rng.integers(1, 40, int(rng.integers(1, 3))))
              for _ in range(3)]
    scale = 10 ** rng.uniform(-3, 1)
    return [(rng.standard_normal(s) * scale).astype(dtype) for s in shapes]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_clip_grads_with_norm_matches_pytorch_bits(dtype):
    # the same total norm given to both: the coefficient and the scaled gradients bit for bit
    # (a once-rounded quotient differed from PyTorch's in about a quarter of these)
    rng = np.random.default_rng(0)
    for _ in range(300):
        arrays = _arrays(rng, dtype)
        max_norm = float(rng.uniform(0.01, 3))
        total = np.sqrt(sum((a.astype(np.float64) ** 2).sum() for a in arrays)).astype(dtype)
        grads = []
        for T in (ndgrad, torch):
            ps = _params(T, arrays)
            T.nn.utils.clip_grads_with_norm_(ps, max_norm, T.tensor(total))
            grads.append([p.grad.numpy() for p in ps])
        for a, b in zip(*grads):
            np.testing.assert_array_equal(a, b)


def test_clip_grad_norm_is_total_norm_then_clip():
    rng = np.random.default_rng(1)
    for _ in range(50):
        arrays = _arrays(rng)
        ps, ref = _params(ndgrad, arrays), _params(ndgrad, arrays)
        total = ndgrad.nn.utils.clip_grad_norm_(ps, 0.5)
        ndgrad.nn.utils.clip_grads_with_norm_(ref, 0.5, ndgrad.nn.utils.get_total_norm(
            [p.grad for p in ref]))
        for p, q in zip(ps, ref):
            np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
        tp = _params(torch, arrays)
        expect = torch.nn.utils.clip_grad_norm_(tp, 0.5)
        assert total.dtype == ndgrad.float32
        assert abs(total.item() - expect.item()) <= 1e-5 * expect.item()
        for p, q in zip(ps, tp):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=0)


def test_clip_grad_norm_nan_and_no_clip():
    a = [np.array([1.0, np.nan], np.float32), np.array([2.0, 3.0], np.float32)]
    for T in (ndgrad, torch):     # a NaN norm: every gradient scaled by NaN, in both
        ps = _params(T, a)
        assert math.isnan(T.nn.utils.clip_grad_norm_(ps, 1.0).item())
        assert all(np.isnan(p.grad.numpy()).all() for p in ps)
    ps = _params(ndgrad, [np.array([-0.0, 0.25], np.float32)])
    v = ps[0].grad._version
    ndgrad.nn.utils.clip_grad_norm_(ps, 10.0)     # coefficient 1: values kept, version bumped
    assert ps[0].grad._version == v + 1
    assert np.signbit(ps[0].grad.numpy()[0]) and ps[0].grad.numpy()[1] == 0.25


@pytest.mark.parametrize("n", [0, 1, 1023, 1024, 1025, 5000, 2_000_003])
def test_sum_squares_accuracy(n):
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    exact = float(np.sum(x.astype(np.float64) ** 2))
    got = sum_squares(np, x)
    assert abs(got - exact) <= 1e-7 * exact
    # the float32 norm: the exact one rounded (PyTorch's kernel is further off: 3e-5 at 2 M)
    norm = ndgrad.linalg.vector_norm(ndgrad.tensor(x)).item()
    assert abs(norm - math.sqrt(exact)) <= 2 ** -23 * math.sqrt(exact) * 2


def test_norm_fast_path_edges():
    vn = ndgrad.linalg.vector_norm
    f32 = ndgrad.float32
    cases = [[3e19, 1.0], [1e-30, 2e-30], [3.0, 4.0], [float("nan"), 1.0],
             [float("inf")], [-float("inf"), 1.0], [0.0, -0.0]]
    for c in cases:   # the overflow and underflow of float32 squares as PyTorch's accumulator
        a = vn(ndgrad.tensor(c, dtype=f32)).numpy()
        b = torch.linalg.vector_norm(torch.tensor(c, dtype=torch.float32)).numpy()
        np.testing.assert_array_equal(a, b)
    x = np.random.default_rng(3).standard_normal((4, 300)).astype(np.float32)
    t = ndgrad.tensor(x, requires_grad=True)
    r = vn(t, dim=(0, 1), keepdim=True)
    assert r.shape == (1, 1) and r.dtype == f32
    np.testing.assert_allclose(r.item(), np.sqrt((x.astype(np.float64) ** 2).sum()), rtol=1e-7)
    r.sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), x / r.item(), rtol=1e-6)
    assert ndgrad.tensor(-5.0).norm().item() == 5.0
    assert ndgrad.tensor(x[0, :7].astype(np.float16)).norm().dtype == ndgrad.float16
