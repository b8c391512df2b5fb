"""The convolution kernels' fast paths (ops/nn_ops.py): Winograd F(2x2, 3x3) (Note [Winograd
convolution], forced here for small shapes) and the flat windows of stride-1 convolutions
(Note [Flat windows]), against PyTorch in float32 and float64 (values, input, weight and bias
gradients, transposed convolutions), and gradcheck/gradgradcheck in float64 through all three
kernels of the convolution family."""
import numpy as np
import pytest

import ndgrad
from ndgrad.ops import nn_ops

torch = pytest.importorskip("torch")
F = ndgrad.nn.functional

SHAPES = [  # N, C, O, H, W, groups, padding, dilation
    (2, 3, 4, 6, 7, 1, (1, 1), 1),
    (3, 4, 6, 5, 5, 2, (0, 0), 1),
    (2, 6, 3, 8, 9, 3, (2, 1), 1),
    (1, 2, 2, 3, 4, 1, (1, 2), 1),
    (2, 4, 4, 9, 7, 2, (2, 1), 2),
]


@pytest.fixture(params=["winograd", "im2col"])
def path(request, monkeypatch):
    # Winograd for every 3x3 stride-1 convolution, or never
    monkeypatch.setattr(nn_ops, "_WINO_MIN", 0 if request.param == "winograd" else 1 << 60)
    return request.param


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES)
def test_conv2d_matches_pytorch(path, shape, dtype):
    N, C, O, H, W, G, pad, dil = shape
    r = np.random.default_rng(sum(shape[:6]))
    tol = dict(rtol=2e-5, atol=2e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    x, w, b = (r.standard_normal(s).astype(dtype) for s in ((N, C, H, W), (O, C // G, 3, 3), (O,)))
    xt, wt, bt = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    xn, wn, bn = (ndgrad.tensor(a, requires_grad=True) for a in (x, w, b))
    yt = torch.nn.functional.conv2d(xt, wt, bt, padding=pad, dilation=dil, groups=G)
    yn = F.conv2d(xn, wn, bn, padding=pad, dilation=dil, groups=G)
    gy = r.standard_normal(yt.shape).astype(dtype)
    yt.backward(torch.tensor(gy))
    yn.backward(ndgrad.tensor(gy))
    for a, e in ((yn, yt), (xn.grad, xt.grad), (wn.grad, wt.grad), (bn.grad, bt.grad)):
        np.testing.assert_allclose(a.detach().numpy(), e.detach().numpy(), **tol)
    # the transposed convolution (the same kernels the other way round)
    ct = torch.nn.functional.conv_transpose2d(torch.tensor(gy), torch.tensor(w), padding=pad,
                                              dilation=dil, groups=G)
    cn = F.conv_transpose2d(ndgrad.tensor(gy), ndgrad.tensor(w), padding=pad, dilation=dil,
                            groups=G)
    np.testing.assert_allclose(cn.numpy(), ct.numpy(), **tol)


@pytest.mark.parametrize("shape", [SHAPES[0], SHAPES[2], SHAPES[4]])
def test_conv2d_gradcheck_gradgradcheck(path, shape):
    N, C, O, H, W, G, pad, dil = shape
    r = np.random.default_rng(7)
    x, w = (ndgrad.tensor(r.standard_normal(s), requires_grad=True)
            for s in ((1, C, min(H, 5), min(W, 5)), (O, C // G, 3, 3)))

    def f(a, b):
        return F.conv2d(a, b, padding=pad, dilation=dil, groups=G)

    assert ndgrad.autograd.gradcheck(f, (x, w))
    assert ndgrad.autograd.gradgradcheck(f, (x, w))


def test_conv_transpose2d_stride1_cropping_pads_gradgradcheck(path):
    # padding larger than the kernel's reach: the flipped convolution's padding is negative
    r = np.random.default_rng(8)
    x, w = (ndgrad.tensor(r.standard_normal(s), requires_grad=True)
            for s in ((2, 3, 6, 7), (3, 2, 3, 3)))

    def f(a, b):
        return F.conv_transpose2d(a, b, padding=(3, 2))

    ref = torch.nn.functional.conv_transpose2d(torch.tensor(x.detach().numpy()),
                                               torch.tensor(w.detach().numpy()), padding=(3, 2))
    np.testing.assert_allclose(f(x, w).detach().numpy(), ref.numpy(), rtol=1e-10, atol=1e-10)
    assert ndgrad.autograd.gradgradcheck(f, (x, w))


def test_winograd_large_channels_float32_accuracy():
    """At the sizes where Winograd runs by default (64 x 64 channels) float32 results are as
    close to the float64 ones as PyTorch's."""
    r = np.random.default_rng(9)
    x = r.standard_normal((4, 64, 12, 12)).astype(np.float32)
    w = (r.standard_normal((64, 64, 3, 3)) / 24).astype(np.float32)
    assert nn_ops._winograd_ok(x, (3, 3), (1, 1), (1, 1), 64 * 64)
    exact = torch.nn.functional.conv2d(torch.tensor(x, dtype=torch.float64),
                                       torch.tensor(w, dtype=torch.float64), padding=1).numpy()
    theirs = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), padding=1).numpy()
    ours = F.conv2d(ndgrad.tensor(x), ndgrad.tensor(w), padding=1).numpy()
    assert np.abs(ours - exact).max() <= 2 * np.abs(theirs - exact).max() + 1e-7
