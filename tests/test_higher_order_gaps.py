"""Second-order gradients that PyTorch returns as zero tensors: through the piecewise-linear
activations (their backwards depend on the input with a zero derivative), also behind
unsqueeze/sub and in place; and cumprod's higher derivatives at inputs with zeros."""
import numpy as np
import pytest

import ndgrad
from ndgrad.autograd import gradcheck, gradgradcheck


def _torch():
    return pytest.importorskip("torch")


PIECEWISE = {
    "hardtanh": lambda L, x: L.nn.functional.hardtanh(x),
    "hardtanh_range": lambda L, x: L.nn.functional.hardtanh(x, -0.5, 1.0),
    "relu6": lambda L, x: L.nn.functional.relu6(x * 4),
    "leaky_relu": lambda L, x: L.nn.functional.leaky_relu(x, 0.1),
    "leaky_relu_inplace": lambda L, x: L.nn.functional.leaky_relu(x * 1, 0.2, inplace=True),
    "hardtanh_inplace": lambda L, x: L.nn.functional.hardtanh(x * 1, inplace=True),
    "hardtanh_unsqueeze": lambda L, x: L.nn.functional.hardtanh(x.unsqueeze(1)),
    "hardtanh_sub": lambda L, x: L.nn.functional.hardtanh(x - 0.2),
    "leaky_relu_unsqueeze_sub": lambda L, x: L.nn.functional.leaky_relu(x.unsqueeze(0) - 0.1),
    "threshold": lambda L, x: L.nn.functional.threshold(x, 0.1, 0.0),
    "threshold_inplace": lambda L, x: L.nn.functional.threshold(x * 1, 0.1, 2.0, inplace=True),
    "hardshrink": lambda L, x: L.nn.functional.hardshrink(x),
    "softshrink": lambda L, x: L.nn.functional.softshrink(x),
    "prelu": lambda L, x: L.nn.functional.prelu(x, L.tensor([0.2], dtype=x.dtype)),
    "rrelu_eval": lambda L, x: L.nn.functional.rrelu(x),
    "relu": lambda L, x: L.relu(x),
    "clamp": lambda L, x: L.clamp(x, -0.5, 0.5),
    "clamp_unsqueeze_sub": lambda L, x: L.clamp(x.unsqueeze(0) - 0.1, min=-0.5),
}


@pytest.mark.parametrize("name", sorted(PIECEWISE))
def test_second_order_zero_tensors_as_torch(name):
    """grad(grad(f(x), x, v, create_graph), (x, v)): PyTorch's zeros stay zeros (not None)."""
    torch = _torch()
    got = []
    for L in (ndgrad, torch):
        x = L.tensor([-1.5, 0.3, 2.0, -0.2], dtype=L.float64, requires_grad=True)
        y = PIECEWISE[name](L, x)
        v = L.tensor(np.linspace(0.5, 2.0, y.numel()).reshape(tuple(y.shape)),
                     requires_grad=True)
        g, = L.autograd.grad(y, x, v, create_graph=True)
        gg = L.autograd.grad((g * g).sum(), (x, v), allow_unused=True)
        got.append([None if t is None else t.detach().numpy() for t in gg])
    for ours, theirs in zip(*got):
        assert (ours is None) == (theirs is None)
        if theirs is not None:
            np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=0)


def test_piecewise_backward_is_gradgradcheckable():
    x = ndgrad.tensor([-1.5, 0.3, 2.0, -0.2], dtype=ndgrad.float64, requires_grad=True)
    for name, f in PIECEWISE.items():
        assert gradgradcheck(lambda t: f(ndgrad, t), (x,)), name


@pytest.mark.parametrize("vals,dim", [([0.0, 2.0, 3.0], 0), ([1.0, 0.0, 3.0, 0.0], 0),
                                      ([[1.0, 0.0], [0.0, 2.0]], 0),
                                      ([[0.0, 0.0, 1.0], [2.0, 0.0, 0.5]], 1),
                                      ([[0.0, 0.0, 1.0], [2.0, 0.0, 0.5]], 0)])
def test_cumprod_higher_derivatives_at_zeros(vals, dim):
    torch = _torch()
    got = []
    for L in (ndgrad, torch):
        x = L.tensor(vals, dtype=L.float64, requires_grad=True)
        y = L.cumprod(x, dim)
        v = L.arange(1, y.numel() + 1, dtype=L.float64).reshape(tuple(y.shape))
        g, = L.autograd.grad(y, x, v, create_graph=True)
        gg, = L.autograd.grad((g * g).sum(), x, create_graph=True)
        ggg, = L.autograd.grad((gg * gg).sum(), x)
        got.append([t.detach().numpy() for t in (g, gg, ggg)])
    for ours, theirs in zip(*got):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    x = ndgrad.tensor(vals, dtype=ndgrad.float64, requires_grad=True)
    assert gradcheck(lambda t: ndgrad.cumprod(t, dim), (x,))
    assert gradgradcheck(lambda t: ndgrad.cumprod(t, dim), (x,))
