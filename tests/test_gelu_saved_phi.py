"""Note [GELU's saved Phi] (ops/activation.py): GELU's backward takes Phi from its forward
instead of computing it again, with the same bits as the computed one, in every dtype, shape and
thread count; and computes it where the holder does not belong to its input."""
import numpy as np
import pytest

import ndgrad
from ndgrad.autograd import gradcheck, gradgradcheck
from ndgrad.ops import activation as A

R = np.random.default_rng(7)
SHAPES = [(16, 64, 512), (3, 5), (), (0, 4), (70000,)]


@pytest.fixture
def calls(monkeypatch):
    """The calls of exp(x k(x^2)) (GELU's Phi), counted."""
    counted = []
    q = A._gelu_q
    monkeypatch.setattr(A, "_gelu_q", lambda *a, **k: counted.append(1) or q(*a, **k))
    return counted


def _run(xa, ga, dtype, saved, threads):
    prev = ndgrad.get_num_threads()
    ndgrad.set_num_threads(threads)
    try:
        x = ndgrad.tensor(xa).to(dtype).requires_grad_()
        y = ndgrad.nn.functional.gelu(x) if saved else A._gelu(x, "none")  # (no holder)
        y.backward(ndgrad.tensor(ga).to(dtype))
        return y.detach().float().numpy(), x.grad.float().numpy()
    finally:
        ndgrad.set_num_threads(prev)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("threads", [1, 2])
def test_saved_phi_gives_the_computed_bits(dtype, shape, threads):
    xa = R.standard_normal(shape) * 3
    xa.reshape(-1)[:4] = [-30.0, 8.0, 0.0, -2.5][:xa.size]   # (the tail, large x, zero)
    ga = R.standard_normal(shape)
    dt = getattr(ndgrad, dtype)
    for a, b in zip(_run(xa, ga, dt, True, threads), _run(xa, ga, dt, False, threads)):
        np.testing.assert_array_equal(a, b)


def test_backward_takes_phi_from_the_forward(calls):
    x = ndgrad.randn(4, 64, 512, requires_grad=True)
    y = ndgrad.nn.functional.gelu(x)
    forward = len(calls)
    assert forward >= 1
    y.sum().backward()
    assert len(calls) == forward          # none in the backward
    # without a gradient to compute, no holder: the forward keeps nothing
    with ndgrad.no_grad():
        z = ndgrad.nn.functional.gelu(x)
    assert z.grad_fn is None
    # the ATen op (no holder) and the tanh form compute Phi themselves
    calls.clear()
    ndgrad.ops.aten.gelu_backward(ndgrad.ones(4, 64, 512), x.detach())
    assert calls
    w = ndgrad.randn(8, requires_grad=True)
    ndgrad.nn.functional.gelu(w, approximate="tanh").sum().backward()


def test_large_inputs_keep_pytorchs_footprint(monkeypatch, calls):
    # (above the cap no holder: the node keeps the input alone, and the backward computes Phi)
    monkeypatch.setattr(A, "_GELU_PHI_MAX", 1000)
    x = ndgrad.randn(4, 64, 512, requires_grad=True)
    y = ndgrad.nn.functional.gelu(x)
    assert y.grad_fn._saved_phi is None
    forward = len(calls)
    y.sum().backward()
    assert len(calls) > forward
    w = ndgrad.randn(10, 100, requires_grad=True)     # (at the cap: a holder)
    assert ndgrad.nn.functional.gelu(w).grad_fn._saved_phi is not None


def test_holder_belongs_to_its_input():
    phi = A._GeluPhi()
    x = np.linspace(-3, 3, 7, dtype=np.float32)
    A._gelu_fwd(np, x, "none", phi)
    assert phi.of(x) is phi.cdf and phi.of(x.copy()) is None
    np.testing.assert_array_equal(
        A._gelu_backward_fwd(np, np.ones_like(x), x, "none", phi),
        A._gelu_backward_fwd(np, np.ones_like(x), x, "none"))
    # a broadcast gradient: Phi computed for the broadcast shape
    g = np.ones((2, 7), np.float32)
    np.testing.assert_array_equal(A._gelu_backward_fwd(np, g, x, "none", phi),
                                  A._gelu_backward_fwd(np, g, x, "none"))


def test_gradients_of_every_order():
    for shape in [(3, 4), (), (0, 2)]:
        x = ndgrad.tensor(R.standard_normal(shape) * 2, requires_grad=True)
        assert gradcheck(ndgrad.nn.functional.gelu, (x,))
        assert gradgradcheck(ndgrad.nn.functional.gelu, (x,))
