"""nn / nn.functional parity extras: in-place activations, shrink, RReLU, gumbel_softmax, fold,
pixel_unshuffle, affine_grid/grid_sample, EmbeddingBag, margin losses, pooling extras, LRN.

Each is compared with PyTorch (values, input and parameter gradients in float64 and float32),
gradchecked in float64 (and gradgradchecked where twice differentiable), plus reprs and errors.
"""
import warnings

import numpy as np
import pytest

import ndgrad
import ndgrad.nn as nn
import ndgrad.nn.functional as F
from ndgrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional

DTYPES = [(ndgrad.float64, torch.float64, 1e-10), (ndgrad.float32, torch.float32, 1e-5)]


def _np(shape, seed=0, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


def _pair(a, dtype=None, grad=True):
    """The same array as an ndgrad and a torch tensor (floating arrays get `dtype`)."""
    a = np.asarray(a)
    if a.dtype.kind == "f":
        nd_dt, t_dt = dtype[0], dtype[1]
        return (ndgrad.tensor(a, dtype=nd_dt, requires_grad=grad),
                torch.tensor(a, dtype=t_dt, requires_grad=grad))
    return ndgrad.tensor(a), torch.tensor(a)


def _close(a, b, tol):
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=tol * 10, atol=tol * 10)


def _compare(nd_fn, t_fn, arrays, dtypes=DTYPES, seed=5):
    """Forward values and gradients of every floating input, against PyTorch."""
    for dt in dtypes:
        pairs = [_pair(a, dt) for a in arrays]
        outn = nd_fn(*[p[0] for p in pairs])
        outt = t_fn(*[p[1] for p in pairs])
        if not isinstance(outn, tuple):
            outn, outt = (outn,), (outt,)
        for a, b in zip(outn, outt):
            _close(a, b, dt[2])
            if a.dtype.is_floating_point:
                assert a.dtype == dt[0]
        cot = _np(tuple(outt[0].shape), seed)
        outn[0].backward(ndgrad.tensor(cot, dtype=dt[0]))
        outt[0].backward(torch.tensor(cot, dtype=dt[1]))
        for (n, t) in pairs:
            if t.requires_grad:
                if t.grad is None or n.grad is None:  # (no path, or a zero one, to that input)
                    for g in (t.grad, n.grad):
                        assert g is None or not g.detach().numpy().any()
                else:
                    _close(n.grad, t.grad, dt[2])


def _check(f, *arrays, second=True):
    inputs = [ndgrad.tensor(a, dtype=ndgrad.float64, requires_grad=True) for a in arrays]
    assert gradcheck(f, inputs)
    if second:
        assert gradgradcheck(f, inputs)


def _same_error(nd_call, t_call, exc=None):
    with pytest.raises(Exception) as et:
        t_call()
    with pytest.raises(type(et.value) if exc is None else exc) as en:
        nd_call()
    assert str(en.value) == str(et.value)


# ---------------------------------------------------------------- activations

INPLACE = [("relu_", ()), ("leaky_relu_", (0.2,)), ("elu_", (0.7,)), ("hardtanh_", (-0.5, 0.8)),
           ("selu_", ()), ("celu_", (1.3,)), ("threshold_", (0.1, -2.0))]


@pytest.mark.parametrize("name,args", INPLACE)
def test_inplace_activations(name, args):
    a = _np((3, 4))
    for dt in DTYPES:
        xn, xt = _pair(a, dt)
        yn = getattr(F, name)(xn * 1, *args)
        yt = getattr(TF, name)(xt * 1, *args)
        _close(yn, yt, dt[2])
        assert type(yn.grad_fn).__name__ == type(yt.grad_fn).__name__
        assert yn._version == yt._version
        yn.backward(ndgrad.ones_like(yn))
        yt.backward(torch.ones_like(yt))
        _close(xn.grad, xt.grad, dt[2])


def test_inplace_threshold_replaced_values_and_negative_slopes():
    a = np.array([-1.0, 0.05, 0.5])
    xn, xt = _pair(a, DTYPES[0])
    F.threshold_(xn * 1, 0.1, 2.0).sum().backward()
    TF.threshold_(xt * 1, 0.1, 2.0).sum().backward()
    _close(xn.grad, xt.grad, 1e-12)
    for name, slope in [("leaky_relu_", -0.2), ("elu_", -0.5)]:
        xn, xt = _pair(a, DTYPES[0])
        yn, yt = getattr(F, name)(xn * 1, slope), getattr(TF, name)(xt * 1, slope)
        _close(yn, yt, 1e-12)
        with pytest.raises(RuntimeError) as et:
            yt.sum().backward()
        with pytest.raises(RuntimeError) as en:  # (ndgrad adds where the forward was called)
            yn.sum().backward()
        assert str(en.value).startswith(str(et.value))


def test_inplace_on_leaf_errors():
    _same_error(lambda: F.relu_(ndgrad.ones(2, requires_grad=True)),
                lambda: TF.relu_(torch.ones(2, requires_grad=True)))


def test_prelu():
    x, w = _np((2, 3, 4)), np.array([0.1, -0.3, 0.5])
    _compare(F.prelu, TF.prelu, [x, w])
    _compare(F.prelu, TF.prelu, [x, np.array([0.2])])
    _compare(F.prelu, TF.prelu, [_np((5,)), np.array([0.2])])
    _check(F.prelu, x, w)
    xn, xt = ndgrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    mn, mt = nn.PReLU(3, dtype=ndgrad.float64), torch.nn.PReLU(3, dtype=torch.float64)
    yn, yt = mn(xn), mt(xt)
    assert type(yn.grad_fn).__name__ == type(yt.grad_fn).__name__ == "PreluKernelBackward0"
    _close(yn, yt, 1e-12)
    yn.sum().backward(), yt.sum().backward()
    _close(mn.weight.grad, mt.weight.grad, 1e-12)
    _close(xn.grad, xt.grad, 1e-12)
    _same_error(lambda: F.prelu(ndgrad.ones(2, 4), ndgrad.ones(3)),
                lambda: TF.prelu(torch.ones(2, 4), torch.ones(3)))


@pytest.mark.parametrize("name", ["hardshrink", "softshrink"])
def test_shrink(name):
    x = _np((3, 5))
    _compare(lambda x: getattr(F, name)(x, 0.4), lambda x: getattr(TF, name)(x, 0.4), [x])
    _compare(getattr(F, name), getattr(TF, name), [x])
    _check(lambda x: getattr(F, name)(x, 0.4), x)
    mod_n, mod_t = getattr(nn, name.capitalize())(0.3), getattr(torch.nn, name.capitalize())(0.3)
    assert repr(mod_n) == repr(mod_t)
    assert repr(getattr(nn, name.capitalize())()) == repr(getattr(torch.nn, name.capitalize())())
    yn = mod_n(ndgrad.tensor(x, requires_grad=True))
    assert type(yn.grad_fn).__name__ == type(mod_t(torch.tensor(x, requires_grad=True)).grad_fn).__name__


def test_softshrink_negative_lambda():
    _same_error(lambda: F.softshrink(ndgrad.ones(2), -1.0),
                lambda: TF.softshrink(torch.ones(2), -1.0))


def test_rrelu_eval_exact_and_module():
    x = _np((4, 6))
    _compare(lambda x: F.rrelu(x, 0.1, 0.4), lambda x: TF.rrelu(x, 0.1, 0.4), [x])
    _compare(lambda x: F.rrelu(x * 1, training=False, inplace=True),
             lambda x: TF.rrelu(x * 1, training=False, inplace=True), [x])
    for args in [(), (0.1, 0.3, True)]:
        assert repr(nn.RReLU(*args)) == repr(torch.nn.RReLU(*args))
    for training in [False, True]:
        for inplace in [False, True]:
            xn, xt = ndgrad.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
            yn = F.rrelu(xn * 1, training=training, inplace=inplace)
            yt = TF.rrelu(xt * 1, training=training, inplace=inplace)
            assert type(yn.grad_fn).__name__ == type(yt.grad_fn).__name__
    zn, zt = ndgrad.zeros(3, requires_grad=True), torch.zeros(3, requires_grad=True)
    F.rrelu(zn, 0.1, 0.3).sum().backward()
    TF.rrelu(zt, 0.1, 0.3).sum().backward()
    _close(zn.grad, zt.grad, 1e-7)
    _same_error(lambda: F.rrelu(ndgrad.ones(2), 0.5, 0.1),
                lambda: TF.rrelu(torch.ones(2), 0.5, 0.1))
    _check(lambda x: F.rrelu(x, 0.1, 0.3), x)
    m = nn.RReLU(0.1, 0.3).eval()
    _close(m(ndgrad.tensor(x)), torch.nn.RReLU(0.1, 0.3).eval()(torch.tensor(x)), 1e-12)


def test_rrelu_training_statistics():
    ndgrad.manual_seed(0)
    x = ndgrad.tensor(-np.ones(20000), requires_grad=True)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = -y.detach().numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3
    assert abs(slopes.mean() - 0.2) < 0.005 and abs(slopes.std() - 0.2 / np.sqrt(12)) < 0.005
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), slopes)  # gradient is the drawn slope
    pos = ndgrad.tensor(np.linspace(0.1, 2, 7))
    np.testing.assert_array_equal(F.rrelu(pos, training=True).numpy(), pos.numpy())
    m = nn.RReLU()  # training mode by default: random
    z = m(ndgrad.tensor(-np.ones(1000)))
    assert len(np.unique(z.numpy())) > 100


def test_gumbel_softmax():
    ndgrad.manual_seed(0)
    logits = ndgrad.tensor(np.log([0.1, 0.2, 0.7]), requires_grad=True)
    big = logits.expand(20000, 3)
    soft = F.gumbel_softmax(big, tau=0.5)
    np.testing.assert_allclose(soft.sum(-1).detach().numpy(), 1.0)
    hard = F.gumbel_softmax(big, hard=True)
    h = hard.detach().numpy()
    assert set(np.unique(h)) == {0.0, 1.0} and (h.sum(-1) == 1).all()
    np.testing.assert_allclose(h.mean(0), [0.1, 0.2, 0.7], atol=0.015)  # Gumbel-max sampling
    # straight-through: the gradient of the hard sample is the soft sample's
    ndgrad.manual_seed(3)
    x = ndgrad.tensor(_np((4, 5)), requires_grad=True)
    w = ndgrad.tensor(_np((4, 5), 1))
    (F.gumbel_softmax(x, tau=0.7, hard=True) * w).sum().backward()
    g_hard = x.grad.numpy().copy()
    ndgrad.manual_seed(3)
    x.grad = None
    (F.gumbel_softmax(x, tau=0.7) * w).sum().backward()
    np.testing.assert_allclose(g_hard, x.grad.numpy(), rtol=1e-12)
    assert type(F.gumbel_softmax(x, hard=True).grad_fn).__name__ == "AddBackward0"


# ---------------------------------------------------------------- fold / unfold / pixel

FOLD_CASES = [dict(kernel_size=2), dict(kernel_size=(2, 3), dilation=(2, 1), padding=1,
                                        stride=(1, 2)),
              dict(kernel_size=3, stride=2, padding=(1, 0))]


@pytest.mark.parametrize("kw", FOLD_CASES)
def test_unfold_fold(kw):
    x = _np((2, 3, 6, 7))
    _compare(lambda x: F.unfold(x, **kw), lambda x: TF.unfold(x, **kw), [x])
    cols = TF.unfold(torch.zeros(2, 3, 6, 7), **kw)
    c = _np(tuple(cols.shape), 2)
    _compare(lambda c: F.fold(c, (6, 7), **kw), lambda c: TF.fold(c, (6, 7), **kw), [c])
    _compare(lambda c: F.fold(c, (6, 7), **kw), lambda c: TF.fold(c, (6, 7), **kw), [c[0]])
    _check(lambda c: F.fold(c, (6, 7), **kw), c[:1])
    mn, mt = nn.Fold((6, 7), **kw), torch.nn.Fold((6, 7), **kw)
    assert repr(mn) == repr(mt)
    _close(mn(ndgrad.tensor(c)), mt(torch.tensor(c)), 1e-12)
    un, ut = nn.Unfold(**kw), torch.nn.Unfold(**kw)
    assert repr(un) == repr(ut)
    _close(un(ndgrad.tensor(x)), ut(torch.tensor(x)), 1e-12)


def test_unfold_unbatched_names_and_errors():
    x = _np((3, 6, 7))
    _compare(lambda x: F.unfold(x, 2, padding=1), lambda x: TF.unfold(x, 2, padding=1), [x])
    _check(lambda x: F.unfold(x, (2, 3), dilation=(1, 2), stride=2), x[:2])
    xn, xt = ndgrad.tensor(x[None], requires_grad=True), torch.tensor(x[None], requires_grad=True)
    yn, yt = F.unfold(xn, 2), TF.unfold(xt, 2)
    assert type(yn.grad_fn).__name__ == type(yt.grad_fn).__name__ == "Im2ColBackward0"
    zn, zt = F.fold(yn, (6, 7), 2), TF.fold(yt, (6, 7), 2)
    assert type(zn.grad_fn).__name__ == type(zt.grad_fn).__name__ == "Col2ImBackward0"
    for shape in [(2, 3, 4, 5, 6), (5, 6), (5,)]:
        _same_error(lambda: F.unfold(ndgrad.ones(*shape), 2),
                    lambda: TF.unfold(torch.ones(*shape), 2))
    _same_error(lambda: F.unfold(ndgrad.ones(1, 2, 3, 3), 4),
                lambda: TF.unfold(torch.ones(1, 2, 3, 3), 4))


def test_fold_errors():
    _same_error(lambda: F.fold(ndgrad.ones(1, 5, 9), (4, 4), 2),
                lambda: TF.fold(torch.ones(1, 5, 9), (4, 4), 2))
    _same_error(lambda: F.fold(ndgrad.ones(1, 4, 8), (4, 4), 2),
                lambda: TF.fold(torch.ones(1, 4, 8), (4, 4), 2))


def test_pixel_unshuffle():
    x = _np((2, 3, 4, 6))
    _compare(lambda x: F.pixel_unshuffle(x, 2), lambda x: TF.pixel_unshuffle(x, 2), [x])
    _compare(lambda x: F.pixel_unshuffle(x, 2), lambda x: TF.pixel_unshuffle(x, 2), [x[0]])
    y = F.pixel_unshuffle(ndgrad.tensor(x), 2)
    np.testing.assert_array_equal(F.pixel_shuffle(y, 2).numpy(), x)
    yn = F.pixel_unshuffle(ndgrad.tensor(x, requires_grad=True), 2)
    yt = TF.pixel_unshuffle(torch.tensor(x, requires_grad=True), 2)
    assert type(yn.grad_fn).__name__ == type(yt.grad_fn).__name__
    _check(lambda x: F.pixel_unshuffle(x, 2), x[:1, :2])
    assert repr(nn.PixelUnshuffle(3)) == repr(torch.nn.PixelUnshuffle(3))
    _same_error(lambda: F.pixel_unshuffle(ndgrad.ones(1, 3, 5), 2),
                lambda: TF.pixel_unshuffle(torch.ones(1, 3, 5), 2))


# ---------------------------------------------------------------- spatial transformer

@pytest.mark.parametrize("align", [False, True])
def test_affine_grid(align):
    theta = _np((2, 2, 3))
    _compare(lambda t: F.affine_grid(t, (2, 3, 4, 5), align_corners=align),
             lambda t: TF.affine_grid(t, (2, 3, 4, 5), align_corners=align), [theta])
    _check(lambda t: F.affine_grid(t, (2, 3, 4, 5), align_corners=align), theta)
    _same_error(lambda: F.affine_grid(ndgrad.ones(2, 3, 3), (2, 3, 4, 5), align_corners=align),
                lambda: TF.affine_grid(torch.ones(2, 3, 3), (2, 3, 4, 5), align_corners=align))
    theta3 = _np((2, 3, 4), 1)
    _compare(lambda t: F.affine_grid(t, (2, 1, 3, 4, 5), align_corners=align),
             lambda t: TF.affine_grid(t, (2, 1, 3, 4, 5), align_corners=align), [theta3])
    for th, size in [((2, 2, 3), (2, 1, 3, 4, 5)), ((2, 2, 3), (2, 3, 4)), ((2, 2, 3), (2, 0, 4, 5))]:
        _same_error(lambda: F.affine_grid(ndgrad.ones(*th), size, align_corners=align),
                    lambda: TF.affine_grid(torch.ones(*th), size, align_corners=align))
    _same_error(lambda: F.affine_grid(ndgrad.ones(2, 2, 3), ndgrad.Size([2, 3, 4]),
                                      align_corners=align),
                lambda: TF.affine_grid(torch.ones(2, 2, 3), torch.Size([2, 3, 4]),
                                       align_corners=align))


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample(mode, padding_mode, align):
    x = _np((2, 3, 5, 6))
    grid = _np((2, 4, 3, 2), 1, scale=1.3)  # many points outside [-1, 1]
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align)
    _compare(lambda x, g: F.grid_sample(x, g, **kw), lambda x, g: TF.grid_sample(x, g, **kw),
             [x, grid])
    if mode != "nearest":
        _check(lambda x, g: F.grid_sample(x, g, **kw), x[:1, :2], grid[:1], second=False)


def test_spatial_transformer_default_warns():
    theta = ndgrad.tensor(np.array([[[0.9, 0.1, 0.0], [-0.1, 0.8, 0.1]]]))
    with pytest.warns(UserWarning, match="align_corners=False"):
        grid = F.affine_grid(theta, (1, 1, 3, 3))
    with pytest.warns(UserWarning, match="align_corners=False"):
        F.grid_sample(ndgrad.ones(1, 1, 3, 3), grid)


# ---------------------------------------------------------------- EmbeddingBag

def _bag_cases():
    idx2 = np.array([[1, 2, 4, 5], [4, 3, 2, 9]])
    idx1 = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0])
    off = np.array([0, 2, 2, 5])
    return idx2, idx1, off


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag(mode):
    idx2, idx1, off = _bag_cases()
    w = _np((10, 3))
    _compare(lambda w: F.embedding_bag(ndgrad.tensor(idx2), w, mode=mode),
             lambda w: TF.embedding_bag(torch.tensor(idx2), w, mode=mode), [w])
    _compare(lambda w: F.embedding_bag(ndgrad.tensor(idx1), w, ndgrad.tensor(off), mode=mode),
             lambda w: TF.embedding_bag(torch.tensor(idx1), w, torch.tensor(off), mode=mode),
             [w])
    _compare(lambda w: F.embedding_bag(ndgrad.tensor(idx1), w, ndgrad.tensor(off), mode=mode,
                                       include_last_offset=True, padding_idx=4),
             lambda w: TF.embedding_bag(torch.tensor(idx1), w, torch.tensor(off), mode=mode,
                                        include_last_offset=True, padding_idx=4), [w])
    _check(lambda w: F.embedding_bag(ndgrad.tensor(idx1), w, ndgrad.tensor(off), mode=mode,
                                     padding_idx=2), w)
    big = _np((10, 3), 4, scale=2.0)  # max_norm renormalises the looked-up rows in place
    _compare(lambda w: F.embedding_bag(ndgrad.tensor(idx1), w * 1, ndgrad.tensor(off), mode=mode,
                                       max_norm=1.5, norm_type=1.0),
             lambda w: TF.embedding_bag(torch.tensor(idx1), w * 1, torch.tensor(off), mode=mode,
                                        max_norm=1.5, norm_type=1.0), [big])


def test_embedding_bag_per_sample_weights_and_module():
    idx2, idx1, off = _bag_cases()
    w, psw = _np((10, 3)), _np(idx1.shape, 3)
    _compare(lambda w, p: F.embedding_bag(ndgrad.tensor(idx1), w, ndgrad.tensor(off),
                                          mode="sum", per_sample_weights=p),
             lambda w, p: TF.embedding_bag(torch.tensor(idx1), w, torch.tensor(off),
                                           mode="sum", per_sample_weights=p), [w, psw])
    for kw in [{}, dict(mode="max", padding_idx=2, max_norm=1.0, norm_type=1.0),
               dict(mode="sum", scale_grad_by_freq=True)]:
        mn, mt = nn.EmbeddingBag(10, 3, **kw), torch.nn.EmbeddingBag(10, 3, **kw)
        assert repr(mn) == repr(mt)
        assert list(mn.state_dict()) == list(mt.state_dict())
    mn, mt = nn.EmbeddingBag(10, 3, padding_idx=2), torch.nn.EmbeddingBag(10, 3, padding_idx=2)
    assert not mn.weight.detach().numpy()[2].any()
    with torch.no_grad():
        mt.weight.copy_(torch.tensor(mn.weight.detach().numpy()))
    _close(mn(ndgrad.tensor(idx1), ndgrad.tensor(off)), mt(torch.tensor(idx1), torch.tensor(off)),
           1e-6)
    pre = nn.EmbeddingBag.from_pretrained(ndgrad.tensor(w), mode="sum")
    assert not pre.weight.requires_grad and pre.mode == "sum"


def test_embedding_scale_grad_by_freq():
    idx = np.array([[1, 2, 4, 5], [4, 3, 2, 2]])
    for kw in [dict(scale_grad_by_freq=True), dict(scale_grad_by_freq=True, padding_idx=4)]:
        _compare(lambda w: F.embedding(ndgrad.tensor(idx), w, **kw),
                 lambda w: TF.embedding(torch.tensor(idx), w, **kw), [_np((6, 3))])
    # (no gradcheck: scaling by frequency is by design not the derivative)


def test_embedding_bag_errors():
    idx2, idx1, off = _bag_cases()
    wn, wt = ndgrad.ones(10, 3), torch.ones(10, 3)
    _same_error(lambda: F.embedding_bag(ndgrad.tensor(idx2), wn, ndgrad.tensor(off)),
                lambda: TF.embedding_bag(torch.tensor(idx2), wt, torch.tensor(off)))
    _same_error(lambda: F.embedding_bag(ndgrad.tensor(idx1), wn, ndgrad.tensor(off + 1)),
                lambda: TF.embedding_bag(torch.tensor(idx1), wt, torch.tensor(off + 1)))
    _same_error(lambda: F.embedding_bag(ndgrad.tensor(idx1), wn, ndgrad.tensor(off), mode="mean",
                                        per_sample_weights=ndgrad.ones(9)),
                lambda: TF.embedding_bag(torch.tensor(idx1), wt, torch.tensor(off), mode="mean",
                                         per_sample_weights=torch.ones(9)))
    _same_error(lambda: F.embedding_bag(ndgrad.tensor(idx2), wn, mode="max",
                                        scale_grad_by_freq=True),
                lambda: TF.embedding_bag(torch.tensor(idx2), wt, mode="max",
                                         scale_grad_by_freq=True))
    _same_error(lambda: F.embedding_bag(ndgrad.tensor(idx2[None]), wn),
                lambda: TF.embedding_bag(torch.tensor(idx2[None]), wt))


# ---------------------------------------------------------------- losses

@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_multilabel_margin_loss(reduction):
    x = _np((3, 5))
    t = np.array([[3, 0, -1, 1, 2], [1, 2, 3, 4, 0], [-1, 2, 3, 0, 0]])
    _compare(lambda x: F.multilabel_margin_loss(x, ndgrad.tensor(t), reduction=reduction),
             lambda x: TF.multilabel_margin_loss(x, torch.tensor(t), reduction=reduction), [x])
    _compare(lambda x: F.multilabel_margin_loss(x, ndgrad.tensor(t[0]), reduction=reduction),
             lambda x: TF.multilabel_margin_loss(x, torch.tensor(t[0]), reduction=reduction),
             [x[0]])
    m = nn.MultiLabelMarginLoss(reduction=reduction)
    assert repr(m) == repr(torch.nn.MultiLabelMarginLoss(reduction=reduction))
    _close(m(ndgrad.tensor(x), ndgrad.tensor(t)),
           torch.nn.MultiLabelMarginLoss(reduction=reduction)(torch.tensor(x), torch.tensor(t)),
           1e-12)


def test_loss_and_pooling_errors():
    cases = [
        lambda L, f: f.multilabel_margin_loss(L.ones(2, 3), L.zeros(2, 4, dtype=L.int64)),
        lambda L, f: f.multilabel_margin_loss(L.ones(2, 3), L.tensor([[5, 0, 0], [0, 0, 0]])),
        lambda L, f: f.multi_margin_loss(L.ones(2, 3), L.tensor([0, 0, 1])),
        lambda L, f: f.multi_margin_loss(L.ones(3), L.tensor([0, 1])),
        lambda L, f: f.multi_margin_loss(L.ones(2, 3, 4), L.tensor([0, 0])),
        lambda L, f: f.multilabel_soft_margin_loss(L.ones(2, 3), L.ones(2, 4)),
        lambda L, f: f.triplet_margin_with_distance_loss(L.ones(2, 3), L.ones(3), L.ones(2, 3)),
        lambda L, f: f.ctc_loss(L.ones(5, 2, 3).log_softmax(2), L.ones(2, 2, dtype=L.int64),
                                [6, 5], [2, 2]),
        lambda L, f: f.max_unpool2d(L.ones(1, 1, 2, 2), L.tensor([[[[0, 1], [2, 99]]]]), 2),
        lambda L, f: f.max_unpool2d(L.ones(1, 1, 2, 2), L.tensor([[[[0, 1], [2, -1]]]]), 2),
        lambda L, f: f.adaptive_max_pool1d(L.ones(2, 3, 4, 5), 2),
        lambda L, f: f.adaptive_max_pool2d_with_indices(L.ones(2, 3, 4, 5, 6), 2),
        lambda L, f: f.grid_sample(L.ones(2, 1, 3, 3), L.zeros(1, 2, 2, 2), align_corners=False),
        lambda L, f: f.prelu(L.tensor(1.0), L.ones(3)),
    ]
    for case in cases:
        _same_error(lambda: case(ndgrad, F), lambda: case(torch, TF))


def test_multilabel_soft_margin_loss():
    x, y, w = _np((3, 4)), (np.random.default_rng(1).random((3, 4)) > 0.5) * 1.0, _np((4,), 2)
    for red in ["mean", "sum", "none"]:
        _compare(lambda x, y: F.multilabel_soft_margin_loss(x, y, reduction=red),
                 lambda x, y: TF.multilabel_soft_margin_loss(x, y, reduction=red), [x, y])
        _compare(lambda x, y, w: F.multilabel_soft_margin_loss(x, y, w, reduction=red),
                 lambda x, y, w: TF.multilabel_soft_margin_loss(x, y, w, reduction=red),
                 [x, y, w])
    _check(lambda x, w: F.multilabel_soft_margin_loss(x, ndgrad.tensor(y), w), x, w)
    mn = nn.MultiLabelSoftMarginLoss(weight=ndgrad.tensor(w), reduction="sum")
    mt = torch.nn.MultiLabelSoftMarginLoss(weight=torch.tensor(w), reduction="sum")
    assert repr(mn) == repr(mt) and list(mn.state_dict()) == list(mt.state_dict())
    _close(mn(ndgrad.tensor(x), ndgrad.tensor(y)), mt(torch.tensor(x), torch.tensor(y)), 1e-12)


@pytest.mark.parametrize("p", [1, 2])
def test_multi_margin_loss(p):
    x, t, w = _np((4, 5)), np.array([0, 3, 4, 3]), np.abs(_np((5,), 1))
    for red in ["mean", "sum", "none"]:
        _compare(lambda x: F.multi_margin_loss(x, ndgrad.tensor(t), p, 0.7, ndgrad.tensor(w).to(
                     x.dtype), reduction=red),
                 lambda x: TF.multi_margin_loss(x, torch.tensor(t), p, 0.7, torch.tensor(w).to(
                     x.dtype), reduction=red), [x])
    _same_error(lambda: F.multi_margin_loss(ndgrad.ones(2, 3), ndgrad.tensor([0, 1]),
                                            weight=ndgrad.ones(3, requires_grad=True)),
                lambda: TF.multi_margin_loss(torch.ones(2, 3), torch.tensor([0, 1]),
                                             weight=torch.ones(3, requires_grad=True)))
    _compare(lambda x: F.multi_margin_loss(x, ndgrad.tensor(t[1]), p),
             lambda x: TF.multi_margin_loss(x, torch.tensor(t[1]), p), [x[0]])
    _check(lambda x: F.multi_margin_loss(x, ndgrad.tensor(t), p, 0.7), x, second=False)
    mn, mt = nn.MultiMarginLoss(p=p), torch.nn.MultiMarginLoss(p=p)
    assert repr(mn) == repr(mt)
    _close(mn(ndgrad.tensor(x), ndgrad.tensor(t)), mt(torch.tensor(x), torch.tensor(t)), 1e-12)


def test_multi_margin_loss_errors():
    _same_error(lambda: F.multi_margin_loss(ndgrad.ones(2, 3), ndgrad.tensor([0, 1]), p=3),
                lambda: TF.multi_margin_loss(torch.ones(2, 3), torch.tensor([0, 1]), p=3))
    _same_error(lambda: nn.MultiMarginLoss(p=3), lambda: torch.nn.MultiMarginLoss(p=3))


def test_triplet_margin_with_distance_loss():
    a, p_, n_ = _np((4, 3)), _np((4, 3), 1), _np((4, 3), 2)
    for swap in [False, True]:
        for red in ["mean", "none"]:
            _compare(lambda a, p, n: F.triplet_margin_with_distance_loss(
                         a, p, n, margin=1.5, swap=swap, reduction=red),
                     lambda a, p, n: TF.triplet_margin_with_distance_loss(
                         a, p, n, margin=1.5, swap=swap, reduction=red), [a, p_, n_])

    def cos_n(x, y):
        return 1 - F.cosine_similarity(x, y)

    def cos_t(x, y):
        return 1 - TF.cosine_similarity(x, y)

    _compare(lambda a, p, n: F.triplet_margin_with_distance_loss(a, p, n, distance_function=cos_n),
             lambda a, p, n: TF.triplet_margin_with_distance_loss(a, p, n, distance_function=cos_t),
             [a, p_, n_])
    _check(lambda a, p, n: F.triplet_margin_with_distance_loss(a, p, n, swap=True), a, p_, n_)
    assert repr(nn.TripletMarginWithDistanceLoss()) == repr(torch.nn.TripletMarginWithDistanceLoss())
    mn = nn.TripletMarginWithDistanceLoss(distance_function=cos_n, margin=0.5)
    mt = torch.nn.TripletMarginWithDistanceLoss(distance_function=cos_t, margin=0.5)
    _close(mn(*[ndgrad.tensor(v) for v in (a, p_, n_)]), mt(*[torch.tensor(v) for v in (a, p_, n_)]),
           1e-12)
    _same_error(lambda: nn.TripletMarginWithDistanceLoss(margin=0),
                lambda: torch.nn.TripletMarginWithDistanceLoss(margin=0))


# ---------------------------------------------------------------- pooling extras

def test_max_pool_with_indices_and_unpool():
    x1, x2 = _np((2, 3, 9)), _np((2, 3, 6, 7))
    _compare(lambda x: F.max_pool1d_with_indices(x, 3, 2, 1),
             lambda x: TF.max_pool1d_with_indices(x, 3, 2, 1), [x1])
    _compare(lambda x: F.max_pool2d_with_indices(x, 2, padding=1),
             lambda x: TF.max_pool2d_with_indices(x, 2, padding=1), [x2])
    v, i = F.max_pool1d(ndgrad.tensor(x1), 2, return_indices=True)
    vt, it = TF.max_pool1d(torch.tensor(x1), 2, return_indices=True)
    _compare(lambda v: F.max_unpool1d(v, i, 2), lambda v: TF.max_unpool1d(v, it, 2),
             [vt.numpy()])
    _compare(lambda v: F.max_unpool1d(v, i, 2, output_size=[9]),
             lambda v: TF.max_unpool1d(v, it, 2, output_size=[9]), [vt.numpy()])
    v, i = F.max_pool2d(ndgrad.tensor(x2), 2, return_indices=True)
    vt, it = TF.max_pool2d(torch.tensor(x2), 2, return_indices=True)
    _compare(lambda v: F.max_unpool2d(v, i, 2, output_size=(6, 7)),
             lambda v: TF.max_unpool2d(v, it, 2, output_size=(6, 7)), [vt.numpy()])
    _check(lambda v: F.max_unpool2d(v, i, 2, output_size=(6, 7)), vt.numpy())
    for cls, args in [("MaxUnpool1d", (2,)), ("MaxUnpool2d", (2,)),
                      ("MaxUnpool2d", (3, 1, 1))]:
        assert repr(getattr(nn, cls)(*args)) == repr(getattr(torch.nn, cls)(*args))
    un, ut = nn.MaxUnpool2d(2), torch.nn.MaxUnpool2d(2)
    _close(un(ndgrad.tensor(vt.numpy()), i, (6, 7)), ut(vt, it, (6, 7)), 1e-12)
    _same_error(lambda: F.max_unpool2d(ndgrad.tensor(vt.numpy()), i, 2, output_size=(9, 9)),
                lambda: TF.max_unpool2d(vt, it, 2, output_size=(9, 9)))


@pytest.mark.parametrize("out", [3, 4, 7])
def test_adaptive_max_pool1d(out):
    x = _np((2, 3, 10))
    _compare(lambda x: F.adaptive_max_pool1d_with_indices(x, out),
             lambda x: TF.adaptive_max_pool1d_with_indices(x, out), [x])
    _compare(lambda x: F.adaptive_max_pool1d(x, out), lambda x: TF.adaptive_max_pool1d(x, out),
             [x[0]])
    _check(lambda x: F.adaptive_max_pool1d(x, out), x[:1])
    mn, mt = nn.AdaptiveMaxPool1d(out, True), torch.nn.AdaptiveMaxPool1d(out, True)
    assert repr(mn) == repr(mt)
    _close(mn(ndgrad.tensor(x))[1], mt(torch.tensor(x))[1], 0)


@pytest.mark.parametrize("out", [(3, 4), (2, None), 5])
def test_adaptive_max_pool2d_with_indices(out):
    x = _np((2, 3, 7, 9))
    _compare(lambda x: F.adaptive_max_pool2d_with_indices(x, out),
             lambda x: TF.adaptive_max_pool2d_with_indices(x, out), [x])
    _compare(lambda x: F.adaptive_max_pool2d_with_indices(x, out),
             lambda x: TF.adaptive_max_pool2d_with_indices(x, out), [x[0]])
    _compare(lambda x: F.adaptive_max_pool2d(x, out), lambda x: TF.adaptive_max_pool2d(x, out),
             [x])
    _check(lambda x: F.adaptive_max_pool2d(x, out), x[:1, :1])
    mn = nn.AdaptiveMaxPool2d(out, return_indices=True)
    mt = torch.nn.AdaptiveMaxPool2d(out, return_indices=True)
    _close(mn(ndgrad.tensor(x))[1], mt(torch.tensor(x))[1], 0)


def test_lp_pool1d():
    x = np.abs(_np((2, 3, 9))) + 0.1
    for norm, k, s, ceil in [(2, 3, None, False), (3, 2, 1, False), (1.5, 4, 3, True)]:
        _compare(lambda x: F.lp_pool1d(x, norm, k, s, ceil),
                 lambda x: TF.lp_pool1d(x, norm, k, s, ceil), [x])
        mn, mt = nn.LPPool1d(norm, k, s, ceil), torch.nn.LPPool1d(norm, k, s, ceil)
        assert repr(mn) == repr(mt)
    _check(lambda x: F.lp_pool1d(x, 2, 3), x[:1])


@pytest.mark.parametrize("shape", [(2, 5, 4), (2, 6, 3, 4), (1, 4, 2, 2, 3)])
def test_local_response_norm(shape):
    x = _np(shape)
    for size in [1, 2, 3, 4]:
        _compare(lambda x: F.local_response_norm(x, size, 0.01, 0.6, 1.5),
                 lambda x: TF.local_response_norm(x, size, 0.01, 0.6, 1.5), [x])
        mn, mt = nn.LocalResponseNorm(size), torch.nn.LocalResponseNorm(size)
        assert repr(mn) == repr(mt)
        _close(mn(ndgrad.tensor(x)), mt(torch.tensor(x)), 1e-12)
    _check(lambda x: F.local_response_norm(x, 3, 0.1, 0.75, 1.0), x)
    _same_error(lambda: F.local_response_norm(ndgrad.ones(2, 3), 2),
                lambda: TF.local_response_norm(torch.ones(2, 3), 2))


# ---------------------------------------------------------------- LazyLinear

def test_lazy_linear():
    for bias in [True, False]:
        mn, mt = nn.LazyLinear(3, bias=bias), torch.nn.LazyLinear(3, bias=bias)
        assert repr(mn) == repr(mt)
        assert list(mn.state_dict()) == list(mt.state_dict())
        assert repr(mn.weight) == repr(mt.weight) == "<UninitializedParameter>"
        _same_error(lambda: mn.weight.shape, lambda: mt.weight.shape)
        x = _np((2, 5, 4))
        yn, yt = mn(ndgrad.tensor(x, dtype=ndgrad.float32)), mt(torch.tensor(x, dtype=torch.float32))
        assert repr(mn) == repr(mt) and type(mn) is nn.Linear
        assert tuple(yn.shape) == tuple(yt.shape) and mn.weight.shape == (3, 4)
        assert type(mn.weight) is nn.Parameter and mn.weight.requires_grad
        bound = 1 / np.sqrt(4)  # kaiming_uniform_(a=sqrt(5)) as Linear
        assert np.abs(mn.weight.detach().numpy()).max() <= bound
        with torch.no_grad():  # same weights: same outputs and gradients
            for name, p in mt.named_parameters():
                p.copy_(torch.tensor(getattr(mn, name).detach().numpy()))
        _close(mn(ndgrad.tensor(x, dtype=ndgrad.float32)), mt(torch.tensor(x, dtype=torch.float32)),
               1e-5)
    m = nn.LazyLinear(2, dtype=ndgrad.float64)
    m(ndgrad.ones(1, 3, dtype=ndgrad.float64))
    assert m.weight.dtype == ndgrad.float64
    src = nn.Linear(5, 3)
    mn, mt = nn.LazyLinear(3), torch.nn.LazyLinear(3)
    mn.load_state_dict(src.state_dict())
    mt.load_state_dict({k: torch.tensor(v.numpy()) for k, v in src.state_dict().items()})
    assert repr(mn) == repr(mt) and mn.weight.shape == (3, 5)
    np.testing.assert_array_equal(mn.weight.detach().numpy(), src.weight.detach().numpy())
    mn(ndgrad.ones(1, 5)), mt(torch.ones(1, 5))
    assert repr(mn) == repr(mt)
    assert isinstance(nn.LazyLinear(2).weight, nn.UninitializedParameter)
    assert isinstance(nn.LazyLinear(2), nn.Linear)
    seq = nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(1))
    seq(ndgrad.ones(2, 7)).sum().backward()
    assert [tuple(p.grad.shape) for p in seq.parameters()] == [(4, 7), (4,), (1, 4), (1,)]


# ---------------------------------------------------------------- CTC

def _ctc_case():
    logits = _np((7, 3, 5))
    targets = np.array([[1, 1, 2], [3, 3, 3], [4, 2, 0]])
    return logits, targets, [7, 6, 7], [3, 3, 2]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_ctc_loss(reduction):
    logits, tg, il, tl = _ctc_case()
    for zero_inf in [False, True]:
        kw = dict(reduction=reduction, zero_infinity=zero_inf)
        _compare(lambda x: F.ctc_loss(x.log_softmax(2), ndgrad.tensor(tg), il, tl, **kw),
                 lambda x: TF.ctc_loss(x.log_softmax(2), torch.tensor(tg), il, tl, **kw),
                 [logits])
        # log_probs.grad itself is PyTorch's (which folds in log_softmax's backward)
        lp = torch.tensor(logits).log_softmax(2).detach().numpy()
        _compare(lambda x: F.ctc_loss(x, ndgrad.tensor(tg), ndgrad.tensor(il),
                                      ndgrad.tensor(tl), **kw),
                 lambda x: TF.ctc_loss(x, torch.tensor(tg), torch.tensor(il),
                                       torch.tensor(tl), **kw), [lp])
    flat = np.concatenate([tg[n, :tl[n]] for n in range(3)])
    _compare(lambda x: F.ctc_loss(x.log_softmax(2), ndgrad.tensor(flat), il, tl, blank=0,
                                  reduction=reduction),
             lambda x: TF.ctc_loss(x.log_softmax(2), torch.tensor(flat), il, tl, blank=0,
                                   reduction=reduction), [logits])


def test_ctc_loss_blank_empty_impossible_unbatched_module():
    logits, tg, il, tl = _ctc_case()
    tg4 = np.where(tg == 4, 0, tg)  # blank=4 below
    for tl_ in ([3, 0, 2], [3, 3, 2]):
        _compare(lambda x: F.ctc_loss(x.log_softmax(2), ndgrad.tensor(tg4), il, tl_, blank=4,
                                      reduction="none"),
                 lambda x: TF.ctc_loss(x.log_softmax(2), torch.tensor(tg4), il, tl_, blank=4,
                                       reduction="none"), [logits])
    # [3, 3, 3] needs 5 frames: impossible in 4 -> inf, or 0 (and no gradient) with zero_infinity
    for zi in [False, True]:
        ln = F.ctc_loss(ndgrad.tensor(logits).log_softmax(2), ndgrad.tensor(tg), [7, 4, 7], tl,
                        reduction="none", zero_infinity=zi)
        lt = TF.ctc_loss(torch.tensor(logits).log_softmax(2), torch.tensor(tg), [7, 4, 7], tl,
                         reduction="none", zero_infinity=zi)
        _close(ln, lt, 1e-10)
    _compare(lambda x: F.ctc_loss(x.log_softmax(2), ndgrad.tensor(tg), [7, 4, 7], tl,
                                  zero_infinity=True),
             lambda x: TF.ctc_loss(x.log_softmax(2), torch.tensor(tg), [7, 4, 7], tl,
                                   zero_infinity=True), [logits])
    _compare(lambda x: F.ctc_loss(x.log_softmax(1), ndgrad.tensor(tg[0]), 7, 3),
             lambda x: TF.ctc_loss(x.log_softmax(1), torch.tensor(tg[0]), torch.tensor(7),
                                   torch.tensor(3)), [logits[:, 0]])
    mn, mt = nn.CTCLoss(blank=1, zero_infinity=True), torch.nn.CTCLoss(blank=1, zero_infinity=True)
    assert repr(mn) == repr(mt)
    tg1 = np.where(tg == 1, 0, tg)
    _close(mn(ndgrad.tensor(logits).log_softmax(2), ndgrad.tensor(tg1), il, tl),
           mt(torch.tensor(logits).log_softmax(2), torch.tensor(tg1), il, tl), 1e-10)
    small = _np((4, 2, 3))
    _check(lambda x: F.ctc_loss(x.log_softmax(2), ndgrad.tensor([[1, 2], [1, 1]]), [4, 3],
                                [2, 1]), small)


def test_embedding_bag_parameter_versions_match_torch():
    for kw in [{}, dict(padding_idx=1)]:
        ours, theirs = nn.EmbeddingBag(4, 3, **kw), torch.nn.EmbeddingBag(4, 3, **kw)
        assert ([(k, p._version) for k, p in ours.named_parameters()]
                == [(k, p._version) for k, p in theirs.named_parameters()])
        assert hasattr(ours, "reset_parameters") and hasattr(theirs, "reset_parameters")


def test_affine_grid_identity_lands_where_pytorchs_does():
    # a spatial transformer starts at the identity: every sampling point is a pixel centre,
    # where bilinear sampling has a kink, so the gradient w.r.t. theta depends on which side of
    # the centre the float32 grid falls. The grid must be computed as PyTorch does, bit for bit.
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 1, 28, 28)).astype(np.float32)
    w = rng.standard_normal((3, 1, 28, 28)).astype(np.float32)
    th = np.tile(np.array([[1, 0, 0], [0, 1, 0]], np.float32), (3, 1, 1))
    res = []
    for L in (torch, ndgrad):
        t = L.tensor(th, requires_grad=True)
        grid = L.nn.functional.affine_grid(t, (3, 1, 28, 28), align_corners=False)
        out = L.nn.functional.grid_sample(L.tensor(x), grid, align_corners=False)
        ((out * L.tensor(w)).sum()).backward()
        res.append((grid.detach().numpy().copy(), t.grad.numpy().copy()))
    assert np.array_equal(res[0][0], res[1][0])
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-4, atol=1e-4)
