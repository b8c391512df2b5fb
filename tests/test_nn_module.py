"""Module API: registration, iteration, state dicts, repr, hooks, modes, casting; init; utils."""
import math
from collections import OrderedDict

import numpy as np
import pytest

import ndgrad
import ndgrad.nn as nn
from ndgrad.nn import init


class Net(nn.Module):
    def __init__(self, lib=nn):
        super().__init__()
        self.features = lib.Sequential(lib.Conv2d(1, 4, 3, padding=1), lib.BatchNorm2d(4),
                                       lib.ReLU(), lib.MaxPool2d(2))
        self.head = lib.Sequential(OrderedDict(flat=lib.Flatten(),
                                               fc=lib.Linear(4 * 2 * 2, 3)))

    def forward(self, x):
        return self.head(self.features(x))


def test_registration_and_iteration():
    m = Net()
    names = [n for n, _ in m.named_parameters()]
    assert names == ["features.0.weight", "features.0.bias", "features.1.weight",
                     "features.1.bias", "head.fc.weight", "head.fc.bias"]
    assert [n for n, _ in m.named_buffers()] == ["features.1.running_mean",
                                                 "features.1.running_var",
                                                 "features.1.num_batches_tracked"]
    assert [n for n, _ in m.named_modules()] == [
        "", "features", "features.0", "features.1", "features.2", "features.3", "head",
        "head.flat", "head.fc"]
    assert [n for n, _ in m.named_children()] == ["features", "head"]
    assert len(list(m.parameters(recurse=False))) == 0
    assert isinstance(m.head.fc.weight, nn.Parameter)
    # shared parameters are reported once
    lin = nn.Linear(2, 2)
    s = nn.Sequential(lin, lin)
    assert len(list(s.parameters())) == 2


def test_setattr_getattr_semantics():
    m = nn.Module()
    m.w = nn.Parameter(ndgrad.ones(2))
    m.register_buffer("b", ndgrad.zeros(2))
    m.register_buffer("tmp", ndgrad.zeros(1), persistent=False)
    m.sub = nn.Linear(2, 2)
    assert list(m._parameters) == ["w"] and "b" in m._buffers and "sub" in m._modules
    assert list(m.state_dict()) == ["w", "b", "sub.weight", "sub.bias"]
    with pytest.raises(TypeError, match="cannot assign 'torch.FloatTensor' as parameter 'w'"):
        m.w = ndgrad.ones(2)
    m.w = None
    assert m.w is None and list(m.state_dict())[0] == "b"
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'nope'"):
        m.nope
    with pytest.raises(KeyError, match="attribute 'sub' already exists"):
        m.register_buffer("sub", ndgrad.zeros(1))
    del m.sub
    assert "sub" not in m._modules


def test_state_dict_round_trip_and_strict_errors():
    a, b = Net(), Net()
    a.features[1].running_mean.add_(1.5)
    res = b.load_state_dict(a.state_dict())
    assert repr(res) == "<All keys matched successfully>"
    for (k, v), (k2, v2) in zip(a.state_dict().items(), b.state_dict().items()):
        assert k == k2 and np.array_equal(v.numpy(), v2.numpy())
    sd = a.state_dict()
    assert not sd["features.0.weight"].requires_grad
    sd["extra"] = ndgrad.zeros(1)
    del sd["head.fc.bias"]
    with pytest.raises(RuntimeError) as e:
        b.load_state_dict(sd)
    assert str(e.value) == (
        'Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: '
        '"head.fc.bias". \n\tUnexpected key(s) in state_dict: "extra". ')
    r = b.load_state_dict(sd, strict=False)
    assert r.missing_keys == ["head.fc.bias"] and r.unexpected_keys == ["extra"]
    sd = a.state_dict()
    sd["head.fc.weight"] = ndgrad.zeros(2, 2)
    with pytest.raises(RuntimeError, match=r"size mismatch for head.fc.weight: copying a param "
                       r"with shape torch.Size\(\[2, 2\]\) from checkpoint, the shape in "
                       r"current model is torch.Size\(\[3, 16\]\)."):
        b.load_state_dict(sd)


def test_state_dict_errors_match_torch():
    torch = pytest.importorskip("torch")

    def msg(lib, m):
        sd = m.state_dict()
        sd["zzz"] = lib.zeros(1)
        del sd["features.0.bias"]
        with pytest.raises(RuntimeError) as e:
            m.load_state_dict(sd)
        return str(e.value)
    ours = msg(ndgrad, Net())
    theirs = msg(torch, _torch_net(torch))
    assert ours == theirs


def _torch_net(torch):
    class Net(torch.nn.Module):  # same structure, torch classes
        def __init__(self):
            super().__init__()
            lib = torch.nn
            self.features = lib.Sequential(lib.Conv2d(1, 4, 3, padding=1), lib.BatchNorm2d(4),
                                           lib.ReLU(), lib.MaxPool2d(2))
            self.head = lib.Sequential(OrderedDict(flat=lib.Flatten(),
                                                   fc=lib.Linear(4 * 2 * 2, 3)))
    return Net()


def test_repr_matches_torch():
    torch = pytest.importorskip("torch")
    assert repr(Net()) == repr(_torch_net(torch))

    def models(lib):
        return [
            lib.Sequential(lib.Linear(3, 4), lib.Sequential(lib.Tanh(), lib.Dropout(0.1)),
                           lib.LeakyReLU(0.2, inplace=True), lib.Linear(4, 1, bias=False)),
            lib.ModuleList([lib.Linear(2, 2) for _ in range(3)] + [lib.ReLU()]),
            lib.ModuleDict({"a": lib.Conv2d(3, 8, (3, 5), stride=2, padding=(1, 2), groups=1,
                                            bias=False, dilation=2),
                            "b": lib.ConvTranspose2d(4, 2, 3, 2, 1, output_padding=1)}),
            lib.Sequential(lib.Conv1d(2, 3, 3, padding="same"), lib.AvgPool1d(2),
                           lib.AdaptiveAvgPool2d((2, 3)), lib.AvgPool2d(3, 1, 1),
                           lib.MaxPool1d(2), lib.BatchNorm1d(3, momentum=None),
                           lib.GroupNorm(2, 4), lib.LayerNorm([2, 3], eps=1e-6),
                           lib.Embedding(10, 3, padding_idx=0), lib.GELU("tanh"),
                           lib.Softmax(dim=1), lib.LogSoftmax(1), lib.ELU(), lib.SiLU(),
                           lib.Softplus(), lib.Sigmoid(), lib.Identity(), lib.Unflatten(1, (2, 2)),
                           lib.Bilinear(2, 3, 4), lib.Conv2d(1, 1, 3, padding_mode="reflect",
                                                             padding=1)),
            lib.Sequential(lib.CrossEntropyLoss(), lib.MSELoss(), lib.BCEWithLogitsLoss(),
                           lib.RNN(2, 3), lib.GRU(2, 3, batch_first=True, bidirectional=True),
                           lib.MultiheadAttention(4, 2), lib.LSTMCell(2, 3)),
            lib.Sequential(lib.ZeroPad2d(1), lib.ConstantPad1d(2, 3.5),
                           lib.ReflectionPad2d((1, 0, 2, 1)), lib.ReplicationPad1d(2),
                           lib.Upsample(scale_factor=2),
                           lib.Upsample(size=(3, 4), mode="bilinear", align_corners=True),
                           lib.PixelShuffle(2), lib.Softmax2d(), lib.PReLU(),
                           lib.InstanceNorm2d(3), lib.Hardtanh(-2.0, 2.0), lib.ReLU6(),
                           lib.Threshold(0.1, 20.0), lib.ReLU(inplace=True)),
            lib.Sequential(),
        ]
    for a, b in zip(models(nn), models(torch.nn)):
        assert repr(a) == repr(b)
    reprs = []
    for lib in (ndgrad, torch):
        m = lib.nn.Module()
        m.pl = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2, 3)),
                                     lib.nn.Parameter(lib.zeros(4, dtype=lib.float64))])
        m.pd = lib.nn.ParameterDict({"a": lib.nn.Parameter(lib.ones(2))})
        m.pe = lib.nn.ParameterList()
        reprs.append(repr(m))
    assert reprs[0] == reprs[1]
    assert repr(nn.Parameter(ndgrad.tensor([1.0, 2.0]))) == \
        repr(torch.nn.Parameter(torch.tensor([1.0, 2.0])))


def test_sequential_indexing_and_containers():
    s = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert isinstance(s[-1], nn.Linear) and len(s) == 3
    t = s[1:]
    assert isinstance(t, nn.Sequential) and list(t._modules) == ["1", "2"]
    s.append(nn.Sigmoid())
    del s[0]
    assert list(s._modules) == ["0", "1", "2"] and isinstance(s[0], nn.ReLU)
    with pytest.raises(IndexError, match="index 5 is out of range"):
        s[5]
    ml = nn.ModuleList([nn.Linear(1, 1)])
    ml.append(nn.Tanh())
    ml += [nn.ReLU()]
    assert len(ml) == 3 and isinstance(ml[-1], nn.ReLU)
    md = nn.ModuleDict({"x": nn.ReLU()})
    md["y"] = nn.Tanh()
    assert list(md.keys()) == ["x", "y"] and "y" in md
    pl = nn.ParameterList([nn.Parameter(ndgrad.ones(2)), ndgrad.zeros(3)])
    assert len(list(pl.parameters())) == 2 and isinstance(pl[1], nn.Parameter)
    pd = nn.ParameterDict({"a": nn.Parameter(ndgrad.ones(1))})
    assert [n for n, _ in pd.named_parameters()] == ["a"]


def test_hooks_train_eval_apply_zero_grad_to():
    m = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))
    seen = []
    h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
    h2 = m.register_forward_hook(lambda mod, args, out: seen.append(out.shape) or out + 1)
    x = ndgrad.ones(3, 2)
    m.eval()
    assert not m.training and not m[1].training
    y = m(x)
    ref = m[0](x * 2) + 1
    assert np.allclose(y.detach().numpy(), ref.detach().numpy()) and seen == [(3, 2)]
    h1.remove()
    h2.remove()
    assert np.allclose(m(x).detach().numpy(), m[0](x).detach().numpy())
    m.train()
    assert m[1].training
    m(x).sum().backward()
    assert m[0].weight.grad is not None
    m.zero_grad(set_to_none=False)
    assert np.all(m[0].weight.grad.numpy() == 0)
    m.zero_grad()
    assert m[0].weight.grad is None
    visited = []
    m.apply(lambda mod: visited.append(type(mod).__name__))
    assert visited == ["Linear", "Dropout", "Sequential"]
    w = m[0].weight
    assert m.double() is m and m[0].weight.dtype is ndgrad.float64 and m[0].weight is w
    m.to(ndgrad.float32)
    assert m[0].bias.dtype is ndgrad.float32
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    bn = nn.BatchNorm1d(2).double()
    assert bn.num_batches_tracked.dtype is ndgrad.int64
    assert bn.running_mean.dtype is ndgrad.float64


def test_missing_forward_and_get_submodule():
    class M(nn.Module):
        pass
    with pytest.raises(NotImplementedError, match=r'Module \[M\] is missing the required '
                       r'"forward" function'):
        M()(1)
    n = Net()
    assert n.get_submodule("head.fc") is n.head.fc
    assert n.get_parameter("head.fc.bias") is n.head.fc.bias


def test_deepcopy_module():
    import copy
    n = Net()
    c = copy.deepcopy(n)
    assert c.head.fc.weight is not n.head.fc.weight
    assert np.array_equal(c.head.fc.weight.detach().numpy(), n.head.fc.weight.detach().numpy())
    assert isinstance(c.head.fc.weight, nn.Parameter)


# ---------------------------------------------------------------- init

def test_default_init_bounds():
    ndgrad.manual_seed(0)
    lin = nn.Linear(50, 40)
    b = 1 / math.sqrt(50)
    w = lin.weight.detach().numpy()
    assert np.abs(w).max() <= b and np.abs(w).max() > 0.9 * b
    assert abs(w.std() - b / math.sqrt(3)) < 0.05 * b
    conv = nn.Conv2d(3, 8, 5)
    bc = 1 / math.sqrt(3 * 25)
    assert np.abs(conv.weight.detach().numpy()).max() <= bc
    assert np.abs(conv.bias.detach().numpy()).max() <= bc
    e = nn.Embedding(1000, 20)
    assert abs(e.weight.detach().numpy().std() - 1) < 0.05


def test_init_functions_statistics():
    ndgrad.manual_seed(1)
    t = ndgrad.empty(200, 300)
    init.xavier_uniform_(t, gain=init.calculate_gain("tanh"))
    a = 5 / 3 * math.sqrt(6 / 500)
    assert np.abs(t.numpy()).max() <= a and abs(t.numpy().std() - a / math.sqrt(3)) < 0.02 * a
    init.xavier_normal_(t)
    assert abs(t.numpy().std() - math.sqrt(2 / 500)) < 0.02 * math.sqrt(2 / 500)
    init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu")
    assert abs(t.numpy().std() - math.sqrt(2 / 200)) < 0.02 * math.sqrt(2 / 200)
    init.kaiming_uniform_(t, nonlinearity="relu")
    assert np.abs(t.numpy()).max() <= math.sqrt(6 / 300)
    init.trunc_normal_(t, mean=1.0, std=2.0, a=-1.0, b=2.0)
    v = t.numpy()
    assert v.min() >= -1 and v.max() <= 2 and v.min() < -0.99 and v.max() > 1.99
    init.orthogonal_(t)
    q = t.numpy()
    assert np.allclose(q @ q.T, np.eye(200), atol=1e-5)
    init.constant_(t, 0.3)
    assert np.all(t.numpy() == np.float32(0.3))
    init.eye_(t)
    assert np.array_equal(t.numpy(), np.eye(200, 300))
    w = ndgrad.empty(4, 2, 3, 3)
    init.dirac_(w)
    assert w.numpy()[1, 1, 1, 1] == 1 and w.numpy().sum() == 2
    assert init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2 / 1.04)
    assert init.calculate_gain("relu") == math.sqrt(2)
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        init.calculate_gain("foo")
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed"):
        init.xavier_uniform_(ndgrad.empty(3))


def test_init_deterministic_under_seed():
    ndgrad.manual_seed(7)
    a = nn.Linear(3, 3).weight.detach().numpy()
    ndgrad.manual_seed(7)
    b = nn.Linear(3, 3).weight.detach().numpy()
    assert np.array_equal(a, b)


# ---------------------------------------------------------------- utils

def test_clip_grad_norm_and_value_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    gs = [rng.standard_normal((3, 4)) * 3, rng.standard_normal(5)]
    for norm_type in (2.0, 1.0, math.inf):
        ps = [nn.Parameter(ndgrad.zeros(*g.shape, dtype=ndgrad.float64)) for g in gs]
        ts = [torch.nn.Parameter(torch.zeros(*g.shape, dtype=torch.float64)) for g in gs]
        for p, t, g in zip(ps, ts, gs):
            p.grad = ndgrad.tensor(g)
            t.grad = torch.tensor(g)
        n1 = nn.utils.clip_grad_norm_(ps, 1.5, norm_type)
        n2 = torch.nn.utils.clip_grad_norm_(ts, 1.5, norm_type)
        assert abs(float(n1) - float(n2)) < 1e-10
        for p, t in zip(ps, ts):
            np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), atol=1e-12)
    p = nn.Parameter(ndgrad.zeros(3, dtype=ndgrad.float64))
    p.grad = ndgrad.tensor([float("nan"), 1.0, 2.0], dtype=ndgrad.float64)
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from "
                       "`parameters` is non-finite"):
        nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    p.grad = ndgrad.tensor([-3.0, 0.5, 2.0], dtype=ndgrad.float64)
    g = p.grad
    nn.utils.clip_grad_value_([p], 1.0)
    assert p.grad is g and np.array_equal(g.numpy(), [-1.0, 0.5, 1.0])


def test_parameters_to_vector_round_trip():
    m = nn.Linear(3, 2)
    v = nn.utils.parameters_to_vector(m.parameters())
    assert v.shape == (8,) and v.requires_grad
    nn.utils.vector_to_parameters(ndgrad.arange(8.0), m.parameters())
    assert np.array_equal(m.weight.detach().numpy(), np.arange(6.0).reshape(2, 3))
    assert np.array_equal(m.bias.detach().numpy(), [6.0, 7.0])
    v.sum().backward()
    assert np.all(m.weight.grad.numpy() == 1)


def test_full_backward_hooks_match_torch():
    torch = pytest.importorskip("torch")
    records = {}
    x = np.random.default_rng(0).standard_normal((3, 4))
    for name, lib in (("ours", ndgrad), ("torch", torch)):
        lib.manual_seed(0)
        m = lib.nn.Linear(4, 2).double()
        with lib.no_grad():
            m.weight.copy_(lib.tensor(np.arange(8.0).reshape(2, 4) / 10))
        seen = []
        m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 2,))
        h = m.register_full_backward_hook(
            lambda mod, gi, go: seen.append((gi[0].detach().numpy().copy(),
                                             go[0].detach().numpy().copy())) or (gi[0] * 3,))
        xin = lib.tensor(x, requires_grad=True)
        m(xin).sum().backward()
        records[name] = (seen, xin.grad.numpy().copy(), m.weight.grad.numpy().copy())
        h.remove()
    (so, xo, wo), (st, xt, wt) = records["ours"], records["torch"]
    assert len(so) == len(st) == 1
    for a, b in zip(so[0], st[0]):
        np.testing.assert_allclose(a, b)
    np.testing.assert_allclose(xo, xt)
    np.testing.assert_allclose(wo, wt)


def test_pad_sequence_matches_torch():
    torch = pytest.importorskip("torch")
    seqs = [np.arange(6.0).reshape(3, 2), np.ones((1, 2)), np.zeros((2, 2))]
    for bf in (False, True):
        o = nn.utils.rnn.pad_sequence([ndgrad.tensor(s) for s in seqs], batch_first=bf,
                                      padding_value=-1.0)
        t = torch.nn.utils.rnn.pad_sequence([torch.tensor(s) for s in seqs], batch_first=bf,
                                            padding_value=-1.0)
        np.testing.assert_array_equal(o.numpy(), t.numpy())
