"""The fused transformer kernels against PyTorch: layer norm (native_layer_norm and its
backward op) and scaled_dot_product_attention: values, gradients of every order (float64
gradcheck / gradgradcheck), node names, PyTorch's errors."""
import numpy as np
import pytest

import ndgrad
from ndgrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)


def _pair(a, requires_grad=True, dtype="float64"):
    return (ndgrad.tensor(a, dtype=getattr(ndgrad, dtype), requires_grad=requires_grad),
            torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=requires_grad))


def _close(a, b, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol)


# ---------------------------------------------------------------- layer norm

LN_CASES = [((2, 3, 4), (4,), True, True), ((2, 3, 4), (3, 4), True, True),
            ((5, 4), (4,), False, False), ((4,), (4,), True, False), ((3, 5), (5,), False, True),
            ((0, 4), (4,), True, True), ((2, 1, 6), (1, 6), True, True)]


@pytest.mark.parametrize("shape,ns,w,b", LN_CASES)
def test_layer_norm_vs_torch(shape, ns, w, b):
    x, xt = _pair(R.standard_normal(shape))
    wa, ba = R.standard_normal(ns), R.standard_normal(ns)
    W, Wt = _pair(wa) if w else (None, None)
    B, Bt = _pair(ba) if b else (None, None)
    y = ndgrad.nn.functional.layer_norm(x, ns, W, B, eps=1e-5)
    yt = torch.nn.functional.layer_norm(xt, ns, Wt, Bt, eps=1e-5)
    _close(y, yt)
    assert type(y.grad_fn).__name__ == type(yt.grad_fn).__name__ == "NativeLayerNormBackward0"
    if not y.numel():
        return
    g = R.standard_normal(shape)
    ins = [t for t in (x, W, B) if t is not None]
    ins_t = [t for t in (xt, Wt, Bt) if t is not None]
    gs = ndgrad.autograd.grad(y, ins, ndgrad.tensor(g), create_graph=True)
    gts = torch.autograd.grad(yt, ins_t, torch.tensor(g), create_graph=True)
    for a, c in zip(gs, gts):
        _close(a, c)
    assert type(gs[0].grad_fn).__name__ == type(gts[0].grad_fn).__name__ == \
        "NativeLayerNormBackwardBackward0"
    vs = [R.standard_normal(a.shape) for a in gs]
    s = sum((a * ndgrad.tensor(v)).sum() for a, v in zip(gs, vs))
    st = sum((a * torch.tensor(v)).sum() for a, v in zip(gts, vs))
    ggs = ndgrad.autograd.grad(s, ins, allow_unused=True)
    if B is not None and W is None:
        # PyTorch's layer_norm_double_backward raises here ("Expected a proper Tensor but got
        # None ... for argument #1 'other'"); ours is checked by gradgradcheck below
        return
    ggts = torch.autograd.grad(st, ins_t, allow_unused=True)  # (the bias: None)
    for a, c in zip(ggs, ggts):
        assert (a is None) == (c is None)
        if a is not None:
            _close(a, c, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("shape,ns,w,b", [c for c in LN_CASES if c[0][0]])
def test_layer_norm_gradcheck(shape, ns, w, b):
    x = ndgrad.tensor(R.standard_normal(shape), requires_grad=True)
    W = ndgrad.tensor(R.standard_normal(ns), requires_grad=True) if w else None
    B = ndgrad.tensor(R.standard_normal(ns), requires_grad=True) if b else None
    ins = tuple(t for t in (x, W, B) if t is not None)

    def f(*args):
        it = iter(args)
        return ndgrad.nn.functional.layer_norm(next(it), ns, next(it) if w else None,
                                               next(it) if b else None)
    assert gradcheck(f, ins)
    assert gradgradcheck(f, ins)


def test_layer_norm_float32_and_native():
    x = R.standard_normal((16, 64, 128)).astype(np.float32) * 3 + 5
    w, b = R.standard_normal(128).astype(np.float32), R.standard_normal(128).astype(np.float32)
    out, mean, rstd = ndgrad.native_layer_norm(ndgrad.tensor(x), [128], ndgrad.tensor(w),
                                               ndgrad.tensor(b), 1e-5)
    ot, mt, rt = torch.native_layer_norm(torch.tensor(x), [128], torch.tensor(w),
                                         torch.tensor(b), 1e-5)
    for a, c in ((out, ot), (mean, mt), (rstd, rt)):
        assert a.shape == c.shape and a.dtype == ndgrad.float32
        _close(a, c, rtol=2e-5, atol=2e-5)


def test_layer_norm_errors_as_pytorch():
    for lib in (ndgrad, torch):
        x = lib.ones(2, 3, 4)
        with pytest.raises(RuntimeError, match=r"Expected weight to be of same shape as "
                           r"normalized_shape, but got weight of shape \[3\] and "
                           r"normalized_shape = \[4\]"):
            lib.nn.functional.layer_norm(x, (4,), lib.ones(3))
        with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[5\], expected input "
                           r"with shape \[\*, 5\], but got input of size\[2, 3, 4\]"):
            lib.nn.functional.layer_norm(x, (5,))
