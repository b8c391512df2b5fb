"""Each layer and loss against PyTorch: same weights, forward values and every gradient."""
import numpy as np
import pytest

import ndgrad
import ndgrad.nn as nn
import ndgrad.nn.functional as F

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")

DTYPES = [(ndgrad.float64, torch.float64, 1e-10), (ndgrad.float32, torch.float32, 1e-4)]


def _copy_params(ours, theirs):
    sd = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    ours.load_state_dict({k: ndgrad.tensor(v.copy()) for k, v in sd.items()})


def _compare(ours, theirs, inputs, nd_dt, t_dt, tol, *, train=True, grad_inputs=True):
    """Run both modules on the same inputs; compare outputs, input and parameter grads."""
    ours.to(nd_dt)
    theirs.to(t_dt)
    _copy_params(ours, theirs)
    ours.train(train)
    theirs.train(train)
    o_in, t_in = [], []
    for a in inputs:
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            o_in.append(ndgrad.tensor(a, dtype=nd_dt, requires_grad=grad_inputs))
            t_in.append(torch.tensor(a, dtype=t_dt, requires_grad=grad_inputs))
        elif isinstance(a, np.ndarray):
            o_in.append(ndgrad.tensor(a))
            t_in.append(torch.tensor(a))
        else:
            o_in.append(a)
            t_in.append(a)
    out_o, out_t = ours(*o_in), theirs(*t_in)
    if isinstance(out_t, tuple):
        out_o, out_t = out_o[0], out_t[0]
    np.testing.assert_allclose(out_o.detach().numpy(), out_t.detach().numpy(), rtol=tol, atol=tol)
    w = np.random.default_rng(1).standard_normal(tuple(out_t.shape))
    (out_o * ndgrad.tensor(w, dtype=nd_dt)).sum().backward()
    (out_t * torch.tensor(w, dtype=t_dt)).sum().backward()
    for a, b in zip(o_in, t_in):
        if isinstance(b, torch.Tensor) and b.requires_grad:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol, atol=tol)
    tp = dict(theirs.named_parameters())
    names = [n for n, _ in ours.named_parameters()]
    assert names == list(tp)
    for n, p in ours.named_parameters():
        if tp[n].grad is None:
            assert p.grad is None or np.allclose(p.grad.numpy(), 0)
        else:
            np.testing.assert_allclose(p.grad.numpy(), tp[n].grad.numpy(), rtol=tol, atol=tol,
                                       err_msg=n)
    for (n, b), (_, tb) in zip(ours.named_buffers(), theirs.named_buffers()):
        np.testing.assert_allclose(b.numpy(), tb.numpy(), rtol=tol, atol=tol, err_msg=n)
    return out_o


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


LAYERS = [
    ("Linear", lambda m: m.Linear(4, 3), [_x(2, 5, 4)]),
    ("LinearNoBias", lambda m: m.Linear(4, 3, bias=False), [_x(4)]),
    ("Bilinear", lambda m: m.Bilinear(3, 4, 2), [_x(5, 3), _x(5, 4, seed=1)]),
    ("Conv2d", lambda m: m.Conv2d(4, 6, 3, stride=2, padding=1, dilation=1, groups=2),
     [_x(2, 4, 7, 6)]),
    ("Conv2dSame", lambda m: m.Conv2d(2, 3, (2, 4), padding="same", dilation=(2, 1)),
     [_x(2, 2, 6, 7)]),
    ("Conv2dValidNoBias", lambda m: m.Conv2d(2, 3, 3, padding="valid", bias=False),
     [_x(2, 5, 5)]),
    ("Conv2dReflect", lambda m: m.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"),
     [_x(1, 2, 5, 5)]),
    ("Conv2dCircular", lambda m: m.Conv2d(2, 3, 3, padding=(1, 2), padding_mode="circular"),
     [_x(1, 2, 5, 6)]),
    ("Conv1d", lambda m: m.Conv1d(3, 4, 3, stride=2, padding=2, dilation=2), [_x(2, 3, 11)]),
    ("ConvTranspose2d", lambda m: m.ConvTranspose2d(4, 6, 3, stride=2, padding=1,
                                                    output_padding=1, groups=2, dilation=1),
     [_x(2, 4, 4, 5)]),
    ("ConvTranspose2dDil", lambda m: m.ConvTranspose2d(2, 3, (2, 3), stride=(1, 2),
                                                       dilation=2),
     [_x(1, 2, 3, 4)]),
    ("MaxPool2d", lambda m: m.MaxPool2d(3, stride=2, padding=1, ceil_mode=True),
     [_x(2, 3, 7, 8)]),
    ("MaxPool2dDil", lambda m: m.MaxPool2d((2, 3), stride=1, dilation=2), [_x(1, 2, 6, 7)]),
    ("MaxPool1d", lambda m: m.MaxPool1d(2), [_x(2, 3, 9)]),
    ("AvgPool2d", lambda m: m.AvgPool2d(3, stride=2, padding=1, ceil_mode=True,
                                        count_include_pad=False), [_x(2, 3, 7, 8)]),
    ("AvgPool2dInclPad", lambda m: m.AvgPool2d(3, stride=2, padding=1, ceil_mode=True),
     [_x(2, 3, 8, 8)]),
    ("AvgPool1d", lambda m: m.AvgPool1d(3, 2, 1), [_x(2, 3, 9)]),
    ("AdaptiveAvgPool2d", lambda m: m.AdaptiveAvgPool2d((3, 2)), [_x(2, 3, 7, 5)]),
    ("AdaptiveAvgPool2dDiv", lambda m: m.AdaptiveAvgPool2d(2), [_x(2, 3, 4, 6)]),
    ("AdaptiveAvgPool1d", lambda m: m.AdaptiveAvgPool1d(4), [_x(2, 3, 7)]),
    ("BatchNorm1d", lambda m: m.BatchNorm1d(3), [_x(4, 3)]),
    ("BatchNorm1d3d", lambda m: m.BatchNorm1d(3, momentum=None), [_x(4, 3, 5)]),
    ("BatchNorm2d", lambda m: m.BatchNorm2d(3, affine=False), [_x(2, 3, 4, 5)]),
    ("LayerNorm", lambda m: m.LayerNorm((4, 5)), [_x(2, 3, 4, 5)]),
    ("GroupNorm", lambda m: m.GroupNorm(2, 4), [_x(2, 4, 3, 3)]),
    ("InstanceNorm2d", lambda m: m.InstanceNorm2d(3, affine=True), [_x(2, 3, 4, 4)]),
    ("Flatten", lambda m: m.Flatten(), [_x(2, 3, 4)]),
    ("Unflatten", lambda m: m.Unflatten(1, (2, 3)), [_x(2, 6)]),
    ("Identity", lambda m: m.Identity(), [_x(3)]),
    ("PReLU", lambda m: m.PReLU(3), [_x(2, 3, 4)]),
    ("ZeroPad2d", lambda m: m.ZeroPad2d((1, 0, 2, 1)), [_x(1, 2, 3, 3)]),
    ("ConstantPad1d", lambda m: m.ConstantPad1d(2, 3.5), [_x(2, 3)]),
    ("ReflectionPad2d", lambda m: m.ReflectionPad2d(1), [_x(1, 2, 3, 3)]),
    ("ReplicationPad1d", lambda m: m.ReplicationPad1d((2, 1)), [_x(2, 2, 3)]),
    ("CircularPad2d", lambda m: m.CircularPad2d((1, 2, 0, 1)), [_x(1, 1, 3, 3)]),
    ("Upsample", lambda m: m.Upsample(scale_factor=2), [_x(1, 2, 3, 3)]),
    ("UpsampleBilinear", lambda m: m.Upsample(size=(4, 5), mode="bilinear",
                                              align_corners=True), [_x(1, 2, 3, 3)]),
    ("PixelShuffle", lambda m: m.PixelShuffle(2), [_x(1, 8, 2, 3)]),
    ("CosineSimilarity", lambda m: m.CosineSimilarity(), [_x(3, 4), _x(3, 4, seed=1)]),
    ("PairwiseDistance", lambda m: m.PairwiseDistance(), [_x(3, 4), _x(3, 4, seed=1)]),
    ("Softmax2d", lambda m: m.Softmax2d(), [_x(2, 3, 2, 2)]),
]
ACTS = [("ReLU", ()), ("ReLU6", ()), ("LeakyReLU", (0.2,)), ("ELU", (0.7,)), ("SELU", ()),
        ("CELU", (0.5,)), ("GELU", ()), ("GELU", ("tanh",)), ("SiLU", ()), ("Mish", ()),
        ("Tanh", ()), ("Sigmoid", ()), ("Softplus", (2.0, 1.0)), ("Softsign", ()),
        ("Tanhshrink", ()), ("Hardtanh", (-0.5, 0.7)), ("Hardsigmoid", ()), ("Hardswish", ()),
        ("LogSigmoid", ()), ("Softmax", (1,)), ("LogSoftmax", (-1,)), ("Softmin", (0,)),
        ("Threshold", (0.1, 20.0)), ("GLU", ())]
for name, args in ACTS:
    LAYERS.append((f"{name}{args}", (lambda n, a: lambda m: getattr(m, n)(*a))(name, args),
                   [_x(3, 4) * 3]))


@pytest.mark.parametrize("dt", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name,make,inputs", LAYERS, ids=[l[0] for l in LAYERS])
def test_layer_matches_torch(name, make, inputs, dt):
    if name.startswith("Hardsigmoid"):  # torch's backward uses a float32 constant 1/6
        dt = dt[:2] + (max(dt[2], 1e-7),)
    _compare(make(nn), make(torch.nn), inputs, *dt)


@pytest.mark.parametrize("momentum", [0.3, None])
@pytest.mark.parametrize("dt", DTYPES, ids=["f64", "f32"])
def test_batchnorm_eval_and_running_stats(dt, momentum):
    ours = nn.BatchNorm2d(3, momentum=momentum)
    theirs = torch.nn.BatchNorm2d(3, momentum=momentum)
    for seed in range(3):
        _compare(ours, theirs, [_x(2, 3, 4, 4, seed=seed)], *dt)
    assert int(ours.num_batches_tracked) == 3
    _compare(ours, theirs, [_x(2, 3, 4, 4, seed=9)], *dt, train=False)


@pytest.mark.parametrize("dt", DTYPES, ids=["f64", "f32"])
def test_batchnorm_without_running_stats_uses_batch_stats_in_eval(dt):
    ours = nn.BatchNorm1d(3, track_running_stats=False)
    theirs = torch.nn.BatchNorm1d(3, track_running_stats=False)
    assert list(ours.state_dict()) == ["weight", "bias"]
    _compare(ours, theirs, [_x(4, 3)], *dt, train=False)


def test_embedding_padding_idx_gets_no_grad():
    ours, theirs = nn.Embedding(6, 3, padding_idx=2), torch.nn.Embedding(6, 3, padding_idx=2)
    idx = np.array([[0, 2, 5], [2, 2, 1]])
    _compare(ours, theirs, [idx], ndgrad.float64, torch.float64, 1e-12)
    assert np.all(ours.weight.grad.numpy()[2] == 0)
    assert np.all(ours.weight.detach().numpy()[2] == 0)


def test_embedding_init_zeroes_padding_row():
    e = nn.Embedding(5, 4, padding_idx=-1)
    assert e.padding_idx == 4 and np.all(e.weight.detach().numpy()[4] == 0)


def test_dropout_deterministic_under_manual_seed_and_scaled():
    x = ndgrad.ones(1000, dtype=ndgrad.float64)
    ndgrad.manual_seed(3)
    a = F.dropout(x, 0.3)
    ndgrad.manual_seed(3)
    b = nn.Dropout(0.3)(x)
    assert np.array_equal(a.numpy(), b.numpy())
    vals = set(np.round(a.numpy(), 12))
    assert vals <= {0.0, round(1 / 0.7, 12)}
    assert 0.2 < (a.numpy() == 0).mean() < 0.4
    d = nn.Dropout(0.3).eval()
    assert d(x) is x


LOSSES = [
    ("MSELoss", {}, "reg"), ("L1Loss", {"reduction": "sum"}, "reg"),
    ("SmoothL1Loss", {"beta": 0.5}, "reg"), ("SmoothL1Loss", {"reduction": "none"}, "reg"),
    ("HuberLoss", {"delta": 0.7}, "reg"), ("HuberLoss", {"reduction": "none"}, "reg"),
    ("CrossEntropyLoss", {}, "cls"), ("CrossEntropyLoss", {"reduction": "none"}, "cls"),
    ("CrossEntropyLoss", {"ignore_index": 1, "label_smoothing": 0.2}, "cls"),
    ("CrossEntropyLoss", {"weight": [0.2, 1.0, 3.0, 0.5], "label_smoothing": 0.1}, "cls"),
    ("CrossEntropyLoss", {"weight": [0.2, 1.0, 3.0, 0.5], "reduction": "sum",
                          "ignore_index": 0}, "cls"),
    ("CrossEntropyLoss", {}, "prob"), ("CrossEntropyLoss", {"label_smoothing": 0.3,
                                                            "weight": [1, 2, 3, 4.]}, "prob"),
    ("CrossEntropyLoss", {"reduction": "none"}, "cls2d"),
    ("CrossEntropyLoss", {"weight": [1, 2, 3, 4.]}, "cls2d"),
    ("NLLLoss", {"weight": [0.2, 1.0, 3.0, 0.5]}, "cls"), ("NLLLoss", {"ignore_index": 3},
                                                           "cls"),
    ("BCELoss", {}, "bin"), ("BCELoss", {"weight": [1., 2., 3.]}, "bin"),
    ("BCEWithLogitsLoss", {}, "logit"),
    ("BCEWithLogitsLoss", {"pos_weight": [1., 2., 3.], "weight": [0.5, 1., 2.]}, "logit"),
    ("KLDivLoss", {"reduction": "batchmean"}, "kl"), ("KLDivLoss", {"reduction": "sum",
                                                                    "log_target": True}, "klt"),
    ("SoftMarginLoss", {}, "sign"), ("SoftMarginLoss", {"reduction": "none"}, "sign"),
    ("BCEWithLogitsLoss", {"pos_weight": [1., 2., 3.], "reduction": "none"}, "logit"),
    ("BCEWithLogitsLoss", {"weight": [0.5, 1., 2.], "reduction": "sum"}, "logit"),
    ("BCELoss", {"reduction": "none"}, "bin"), ("MSELoss", {"reduction": "sum"}, "reg"),
    ("HuberLoss", {"reduction": "sum", "delta": 2.0}, "reg"),
]


def _loss_inputs(kind):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((5, 4))
    if kind == "reg":
        return x, rng.standard_normal((5, 4))
    if kind == "cls":
        return x, np.array([0, 3, 1, 1, 2])
    if kind == "cls2d":
        return rng.standard_normal((2, 4, 3, 2)), rng.integers(0, 4, (2, 3, 2))
    if kind == "prob":
        p = rng.random((5, 4))
        return x, p / p.sum(1, keepdims=True)
    if kind == "bin":
        return 1 / (1 + np.exp(-rng.standard_normal((4, 3)))), rng.random((4, 3))
    if kind == "logit":
        return rng.standard_normal((4, 3)) * 5, rng.random((4, 3))
    if kind == "sign":
        return x, np.sign(rng.standard_normal((5, 4)))
    if kind == "kl":
        p = rng.random((5, 4))
        p[0, 0] = 0
        return np.log(rng.random((5, 4))), p
    return np.log(rng.random((5, 4))), np.log(rng.random((5, 4)))


@pytest.mark.parametrize("dt", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name,kw,kind", LOSSES,
                         ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(LOSSES)])
def test_loss_matches_torch(name, kw, kind, dt):
    nd_dt, t_dt, tol = dt
    x, y = _loss_inputs(kind)
    ok = {k: (ndgrad.tensor(v, dtype=nd_dt) if isinstance(v, list) else v) for k, v in kw.items()}
    tk = {k: (torch.tensor(v, dtype=t_dt) if isinstance(v, list) else v) for k, v in kw.items()}
    xo = ndgrad.tensor(x, dtype=nd_dt, requires_grad=True)
    xt = torch.tensor(x, dtype=t_dt, requires_grad=True)
    if y.dtype.kind == "f":
        ygrad = kind != "sign"  # torch: soft_margin_loss is not differentiable in target
        yo = ndgrad.tensor(y, dtype=nd_dt, requires_grad=ygrad)
        yt = torch.tensor(y, dtype=t_dt, requires_grad=ygrad)
    else:
        yo, yt = ndgrad.tensor(y), torch.tensor(y)
    lo, lt = getattr(nn, name)(**ok)(xo, yo), getattr(torch.nn, name)(**tk)(xt, yt)
    np.testing.assert_allclose(lo.detach().numpy(), lt.detach().numpy(), rtol=tol, atol=tol)
    w = np.random.default_rng(2).standard_normal(tuple(lt.shape))
    (lo * ndgrad.tensor(w, dtype=nd_dt)).sum().backward()
    (lt * torch.tensor(w, dtype=t_dt)).sum().backward()
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=tol, atol=tol)
    if yt.requires_grad:
        ok = np.isfinite(yt.grad.numpy())  # torch: d/dt of t*log(t) at t == 0 is nan
        np.testing.assert_allclose(yo.grad.numpy()[ok], yt.grad.numpy()[ok], rtol=tol, atol=tol)


def test_cross_entropy_unbatched_and_grad_fn():
    x = ndgrad.randn(4, requires_grad=True)
    loss = F.cross_entropy(x, ndgrad.tensor(2))
    assert loss.shape == () and type(loss.grad_fn).__name__ == "NllLossBackward0"
    xt = torch.tensor(x.detach().numpy(), requires_grad=True)
    np.testing.assert_allclose(loss.item(), torch.nn.functional.cross_entropy(
        xt, torch.tensor(2)).item(), rtol=1e-6)


@pytest.mark.parametrize("name,kw", [("MSELoss", {}), ("SmoothL1Loss", {}), ("HuberLoss", {}),
                                     ("BCEWithLogitsLoss", {}), ("SoftMarginLoss", {}),
                                     ("CrossEntropyLoss", {}), ("L1Loss", {}),
                                     ("MSELoss", {"reduction": "none"})])
def test_loss_grad_fn_names_match_torch(name, kw):
    a = np.random.default_rng(0).random((3, 4))
    yo, yt = ndgrad.tensor(a), torch.tensor(a)
    if name == "CrossEntropyLoss":
        yo, yt = ndgrad.tensor([0, 1, 3]), torch.tensor([0, 1, 3])
    lo = getattr(nn, name)(**kw)(ndgrad.tensor(a, requires_grad=True), yo)
    lt = getattr(torch.nn, name)(**kw)(torch.tensor(a, requires_grad=True), yt)
    assert type(lo.grad_fn).__name__ == type(lt.grad_fn).__name__
    if lo.ndim == 0:
        assert repr(lo) == repr(lt)
