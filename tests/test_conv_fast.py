"""The convolution kernels' fast paths (ops/nn_ops.py): the flat windows of stride-1
convolutions (Note [Flat windows]) and their input gradient as a convolution with the flipped
kernel, 1x1 convolutions as plain GEMMs, and training batch norm's kernels, against PyTorch in
float32 and float64 (values, input, weight and bias gradients, transposed convolutions), and
gradcheck/gradgradcheck in float64 through all three kernels of the convolution family."""
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


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES)
def test_conv2d_matches_pytorch(shape, dtype):
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
def test_conv2d_gradcheck_gradgradcheck(shape):
    N, C, O, H, W, G, pad, dil = shape
    r = np.random.default_rng(7)
    x, w = (ndgrad.tensor(r.standard_normal(s), requires_grad=True)
            for s in ((1, C, min(H, 5), min(W, 5)), (O, C // G, 3, 3)))

    def f(a, b):
        return F.conv2d(a, b, padding=pad, dilation=dil, groups=G)

    assert ndgrad.autograd.gradcheck(f, (x, w))
    assert ndgrad.autograd.gradgradcheck(f, (x, w))


def test_conv_transpose2d_stride1_cropping_pads_gradgradcheck():
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


def test_conv2d_float32_accuracy_at_64_channels():
    """Float32 results (forward and both gradients) are as close to the float64 ones as
    PyTorch's."""
    r = np.random.default_rng(9)
    x = r.standard_normal((4, 64, 12, 12)).astype(np.float32)
    w = (r.standard_normal((64, 64, 3, 3)) / 24).astype(np.float32)
    gy = r.standard_normal((4, 64, 12, 12)).astype(np.float32)

    def run(T, dtype):
        xi, wi = (T.tensor(a, dtype=dtype, requires_grad=True) for a in (x, w))
        y = T.nn.functional.conv2d(xi, wi, padding=1)
        y.backward(T.tensor(gy, dtype=dtype))
        return [a.detach().numpy().astype(np.float64) for a in (y, xi.grad, wi.grad)]

    exact = run(torch, torch.float64)
    for ours, theirs, e in zip(run(ndgrad, ndgrad.float32), run(torch, torch.float32), exact):
        assert np.abs(ours - e).max() <= 2 * np.abs(theirs - e).max() + 1e-6


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,affine", [((4, 3, 5, 6), True), ((6, 4), True),
                                          ((3, 2, 7), False)])
def test_batch_norm_training_kernels_match_pytorch(dtype, shape, affine):
    """Training batch norm: the forward's four passes and the fused backward kernel (taken
    when no graph of the backward is wanted) against PyTorch, running statistics included."""
    r = np.random.default_rng(10)
    tol = dict(rtol=2e-5, atol=2e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)
    x = (r.standard_normal(shape) * 2 + 3).astype(dtype)
    gy = r.standard_normal(shape).astype(dtype)
    w, b = (r.standard_normal(shape[1]).astype(dtype) for _ in (0, 1))
    mods = []
    for T in (ndgrad, torch):
        m = getattr(T.nn, f"BatchNorm{max(len(shape) - 2, 1)}d")(shape[1], affine=affine,
                                                               dtype=getattr(T, dtype))
        if affine:
            with T.no_grad():
                m.weight.copy_(T.tensor(w))
                m.bias.copy_(T.tensor(b))
        xi = T.tensor(x, requires_grad=True)
        y = m(xi)
        y.backward(T.tensor(gy))
        mods.append((m, xi, y))
    (mo, xo, yo), (mt, xt, yt) = mods
    assert type(yo.grad_fn).__name__ == type(yt.grad_fn).__name__
    pairs = [(yo, yt), (xo.grad, xt.grad), (mo.running_mean, mt.running_mean),
             (mo.running_var, mt.running_var)]
    if affine:
        pairs += [(mo.weight.grad, mt.weight.grad), (mo.bias.grad, mt.bias.grad)]
    for a, e in pairs:
        np.testing.assert_allclose(a.detach().numpy(), e.detach().numpy(), **tol)


def test_batch_norm_double_backward_float64():
    r = np.random.default_rng(11)
    x, w, b = (ndgrad.tensor(r.standard_normal(s), requires_grad=True)
               for s in ((3, 2, 2, 3), (2,), (2,)))

    def f(a, c, d):
        return F.batch_norm(a, None, None, c, d, training=True)

    assert ndgrad.autograd.gradcheck(f, (x, w, b))
    assert ndgrad.autograd.gradgradcheck(f, (x, w, b))


@pytest.mark.parametrize("stride,groups,shape", [(1, 1, (3, 4, 5, 6)), (2, 1, (2, 4, 7, 6)),
                                                 (1, 2, (2, 4, 3, 5)), (3, 2, (2, 4, 7, 8)),
                                                 (1, 1, (0, 4, 3, 3))])
def test_pointwise_conv_is_one_gemm_per_sample(stride, groups, shape):
    """1x1 convolutions without padding skip im2col: values, gradients (float64), double
    backward; the 3-d form too."""
    r = np.random.default_rng(12)
    x = r.standard_normal(shape)
    w = r.standard_normal((6, shape[1] // groups, 1, 1))
    b = r.standard_normal(6)
    xt, wt, bt = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    xn, wn, bn = (ndgrad.tensor(a, requires_grad=True) for a in (x, w, b))
    yt = torch.nn.functional.conv2d(xt, wt, bt, stride=stride, groups=groups)
    yn = F.conv2d(xn, wn, bn, stride=stride, groups=groups)
    assert nn_ops._pointwise_input(x, (1, 1), (stride, stride), ((0, 0), (0, 0)), None) \
        is not None
    gy = r.standard_normal(yt.shape)
    yt.backward(torch.tensor(gy))
    yn.backward(ndgrad.tensor(gy))
    for a, e in ((yn, yt), (xn.grad, xt.grad), (wn.grad, wt.grad), (bn.grad, bt.grad)):
        np.testing.assert_allclose(a.detach().numpy(), e.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
    if shape[0]:
        assert ndgrad.autograd.gradgradcheck(
            lambda a, c: F.conv2d(a, c, stride=stride, groups=groups),
            (ndgrad.tensor(x[:1, :, :4, :4], requires_grad=True), wn))
        x3 = r.standard_normal((2, shape[1], 3, 4, 5))
        w3 = r.standard_normal((6, shape[1] // groups, 1, 1, 1))
        np.testing.assert_allclose(
            F.conv3d(ndgrad.tensor(x3), ndgrad.tensor(w3), stride=stride, groups=groups).numpy(),
            torch.nn.functional.conv3d(torch.tensor(x3), torch.tensor(w3), stride=stride,
                                       groups=groups).numpy(), rtol=1e-10, atol=1e-12)
