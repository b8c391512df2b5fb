"""The 3-d and remaining nn modules: Conv3d/ConvTranspose3d, 3-d pooling/unpooling/norm/
dropout/padding, FractionalMaxPool2d/3d, Lazy* (UninitializedParameter semantics), ChannelShuffle,
CrossMapLRN2d, AdaptiveLogSoftmaxWithLoss, SyncBatchNorm, DataParallel, Container, NLLLoss2d,
RNNCellBase, nn.attention, alpha dropouts.

Values, input and parameter gradients vs PyTorch in float64 (skipped without torch), reprs,
state_dict keys and PyTorch's error messages."""
import warnings

import numpy as np
import pytest

import ndgrad
import ndgrad.nn as nn
import ndgrad.nn.functional as F


def _torch():
    return pytest.importorskip("torch")


def _x(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _copy_params(ours, theirs):
    torch = _torch()
    theirs.load_state_dict({k: torch.tensor(v.detach().numpy())
                            for k, v in ours.state_dict().items()})


def _run_both(ours, theirs, *arrays, train=False):
    """Forward both modules (float64) on the same inputs; compare the output, then the input and
    parameter gradients of a random projection of the output."""
    torch = _torch()
    ours.double()
    theirs.double()
    _copy_params(ours, theirs)
    ours.train(train)
    theirs.train(train)
    a = [ndgrad.tensor(x, requires_grad=x.dtype.kind == "f") for x in arrays]
    t = [torch.tensor(x, requires_grad=x.dtype.kind == "f") for x in arrays]
    yo, yt = ours(*a), theirs(*t)
    if isinstance(yt, tuple):
        for o, r in zip(yo, yt):
            np.testing.assert_allclose(o.detach().numpy(), r.detach().numpy(), atol=1e-12)
        yo, yt = yo[0], yt[0]
    assert repr(ours) == repr(theirs)
    np.testing.assert_allclose(yo.detach().numpy(), yt.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    g = _x(tuple(yt.shape), 99)
    (yo * ndgrad.tensor(g)).sum().backward()
    (yt * torch.tensor(g)).sum().backward()
    for o, r in zip(a, t):
        if r.grad is not None:
            np.testing.assert_allclose(o.grad.numpy(), r.grad.numpy(), rtol=1e-9, atol=1e-11)
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-9, atol=1e-11,
                                   err_msg=n)


X5 = _x((2, 4, 5, 6, 5))

MODULES = [
    ("Conv3d", (4, 6, 3), {}),
    ("Conv3d", (4, 6, (2, 3, 1)), dict(stride=(2, 1, 1), padding=1, dilation=(1, 2, 1),
                                       groups=2, bias=False)),
    ("Conv3d", (4, 2, 3), dict(padding="same", padding_mode="reflect")),
    ("Conv3d", (4, 2, 2), dict(padding=1, padding_mode="circular")),
    ("ConvTranspose3d", (4, 2, (2, 3, 2)), dict(stride=2, padding=1, output_padding=1)),
    ("ConvTranspose3d", (4, 6, 2), dict(groups=2, dilation=2)),
    ("MaxPool3d", (2,), {}),
    ("MaxPool3d", (3, 2, 1), dict(ceil_mode=True, return_indices=True)),
    ("AvgPool3d", (3, 2, 1), {}),
    ("AvgPool3d", (2,), dict(ceil_mode=True, count_include_pad=False, divisor_override=None)),
    ("AdaptiveAvgPool3d", ((2, 3, 4),), {}),
    ("AdaptiveMaxPool3d", ((3, None, 2),), dict(return_indices=True)),
    ("LPPool3d", (2, 2), {}),
    ("InstanceNorm3d", (4,), dict(affine=True)),
    ("BatchNorm3d", (4,), {}),
    ("SyncBatchNorm", (4,), {}),
    ("ConstantPad3d", ((1, 0, 2, 1, 0, 1), 2.5), {}),
    ("ZeroPad3d", (1,), {}),
    ("ReflectionPad3d", ((1, 2, 0, 1, 2, 0),), {}),
    ("ReplicationPad3d", (2,), {}),
    ("CircularPad3d", (1,), {}),
    ("ChannelShuffle", (2,), {}),
    ("Dropout3d", (0.5,), {}),
    ("FeatureAlphaDropout", (0.3,), {}),
]


@pytest.mark.parametrize("name,args,kw", MODULES, ids=[m[0] for m in MODULES])
def test_module_vs_torch(name, args, kw):
    torch = _torch()
    ndgrad.manual_seed(0)
    _run_both(getattr(nn, name)(*args, **kw), getattr(torch.nn, name)(*args, **kw), X5)


@pytest.mark.parametrize("name", ["BatchNorm3d", "InstanceNorm3d", "SyncBatchNorm"])
def test_norm_training_running_stats(name):
    torch = _torch()
    kw = dict(track_running_stats=True) if name == "InstanceNorm3d" else {}
    ours, theirs = getattr(nn, name)(4, **kw), getattr(torch.nn, name)(4, **kw)
    for _ in range(2):
        _run_both(ours, theirs, X5, train=True)
    np.testing.assert_allclose(ours.running_mean.numpy(), theirs.running_mean.numpy(),
                               atol=1e-12)
    np.testing.assert_allclose(ours.running_var.numpy(), theirs.running_var.numpy(),
                               atol=1e-12)
    _run_both(ours, theirs, X5, train=False)


def test_instance_norm_errors_match_torch():
    torch = _torch()
    cases = [lambda L: L.nn.InstanceNorm3d(4)(L.ones(2, 4, 3)),
             lambda L: L.nn.InstanceNorm3d(3, affine=True)(L.ones(2, 4, 2, 2, 2)),
             lambda L: L.nn.InstanceNorm3d(3)(L.ones(2, 3, 1, 1, 1))]
    for case in cases:
        with pytest.raises(Exception) as want:
            case(torch)
        with pytest.raises(type(want.value)) as got:
            case(ndgrad)
        assert str(got.value) == str(want.value)


def test_unpool3d_and_fractional_modules():
    torch = _torch()
    v, i = torch.nn.functional.max_pool3d(torch.tensor(X5), 2, return_indices=True)
    ours = nn.MaxUnpool3d(2)(ndgrad.tensor(v.numpy()), ndgrad.tensor(i.numpy()), (5, 6, 5))
    np.testing.assert_array_equal(ours.numpy(), torch.nn.MaxUnpool3d(2)(v, i, (5, 6, 5)).numpy())
    assert repr(nn.MaxUnpool3d(2)) == repr(torch.nn.MaxUnpool3d(2))
    u = np.random.default_rng(3).random((2, 4, 3))
    for cls, x, kw in [("FractionalMaxPool3d", X5, dict(output_size=(3, 2, 3))),
                       ("FractionalMaxPool2d", X5[:, :, 0], dict(output_ratio=(0.5, 0.6)))]:
        uu = u if cls.endswith("3d") else u[..., :2]
        ours = getattr(nn, cls)(2, return_indices=True, _random_samples=ndgrad.tensor(uu), **kw)
        theirs = getattr(torch.nn, cls)(2, return_indices=True,
                                        _random_samples=torch.tensor(uu), **kw)
        (vo, io), (vt, it) = ours(ndgrad.tensor(x)), theirs(torch.tensor(x))
        np.testing.assert_array_equal(vo.numpy(), vt.numpy())
        np.testing.assert_array_equal(io.numpy(), it.numpy())
        assert list(ours.state_dict()) == list(theirs.state_dict()) == ["_random_samples"]
    # fresh windows each call without samples; the shape is fixed
    m = nn.FractionalMaxPool2d(3, output_ratio=0.5)
    assert tuple(m(ndgrad.randn(1, 2, 9, 8)).shape) == (1, 2, 4, 4)


@pytest.mark.parametrize("call", [
    lambda L: L.nn.FractionalMaxPool2d(2, output_ratio=1.2),
    lambda L: L.nn.FractionalMaxPool2d(2),
    lambda L: L.nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5),
    lambda L: L.nn.functional.fractional_max_pool2d(L.ones(1, 1, 5, 5), 2),
    lambda L: L.nn.functional.fractional_max_pool2d(L.ones(1, 1, 5, 5), 4, output_size=3),
    lambda L: L.nn.functional.fractional_max_pool3d(L.ones(1, 1, 5, 5, 5), (2, 2, 4),
                                                    output_size=3),
    lambda L: L.nn.functional.fractional_max_pool2d(L.ones(1, 1, 5, 5), 2, output_size=3,
                                                    _random_samples=L.ones(1, 2, 2)),
    lambda L: L.nn.functional.fractional_max_pool2d(L.ones(1, 1, 5, 5), 2, output_size=3,
                                                    _random_samples=L.ones(1, 1, 3)),
    lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(1, 1, 5, 5), 2, output_size=3, _random_samples=L.ones(1, 1, 2).double()),
    lambda L: L.nn.functional.max_pool3d(L.ones(2, 3, 3), 2),
    lambda L: L.nn.functional.max_pool3d(L.ones(1, 2, 0, 3, 3), 2),
    lambda L: L.nn.functional.avg_pool3d(L.ones(2, 0, 3, 3), 2),
    lambda L: L.nn.functional.avg_pool3d(L.ones(1, 1, 4, 4, 4), 2, divisor_override=0),
    lambda L: L.nn.functional.adaptive_avg_pool3d(L.ones(2, 3, 3), 2),
    lambda L: L.nn.functional.adaptive_max_pool3d(L.ones(2, 3, 3), 2),
    lambda L: L.nn.functional.max_pool3d(L.ones(1, 1, 4, 4, 4), 3, padding=2),
    lambda L: L.nn.functional.conv3d(L.ones(2, 3, 3), L.ones(1, 1, 1, 1, 1)),
    lambda L: L.nn.functional.conv3d(L.ones(1, 2, 3, 3, 3), L.ones(3, 1, 2, 2, 2)),
    lambda L: L.nn.functional.conv3d(L.ones(1, 2, 3, 3, 3), L.ones(3, 2, 4, 2, 2)),
    lambda L: L.nn.functional.conv3d(L.ones(1, 2, 3, 3, 3).bool(), L.ones(3, 2, 2, 2, 2).bool()),
    lambda L: L.nn.functional.conv3d(L.ones(1, 2, 3, 3, 3), L.ones(3, 2, 2, 2, 2).double()),
    lambda L: L.nn.functional.conv_transpose3d(L.ones(1, 2, 3, 3, 3).int(),
                                               L.ones(2, 2, 2, 2, 2).int()),
    lambda L: L.nn.functional.conv_transpose2d(L.ones(1, 2, 3, 3).int(), L.ones(2, 2, 2, 2).int()),
    lambda L: L.nn.functional.conv_transpose3d(L.ones(1, 3, 3, 3, 3), L.ones(2, 2, 2, 2, 2)),
    lambda L: L.nn.functional.conv_transpose1d(L.ones(2, 3, 3, 3), L.ones(3, 2, 2)),
    lambda L: L.nn.functional.channel_shuffle(L.ones(1, 4, 2), 3),
    lambda L: L.nn.functional.channel_shuffle(L.ones(4, 2), 2),
    lambda L: L.nn.functional.channel_shuffle(L.ones(1, 4, 2), 0),
    lambda L: L.nn.functional.pdist(L.ones(2, 3, 4)),
    lambda L: L.nn.functional.conv_tbc(L.ones(5, 2, 2), L.ones(3, 3, 4), L.ones(4)),
    lambda L: L.nn.functional.feature_alpha_dropout(L.ones(3), 0.5, True),
    lambda L: L.nn.functional.dropout3d(L.ones(2, 2, 2, 2), 1.5),
    lambda L: L.nn.CrossMapLRN2d(3)(L.ones(2, 3, 4)),
])
def test_errors_match_torch(call):
    torch = _torch()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as want:
            call(torch)
        with pytest.raises(type(want.value)) as got:
            call(ndgrad)
    assert str(got.value) == str(want.value)


# ---------------------------------------------------------------- lazy modules

LAZY = [("LazyConv1d", (3, 2), 3), ("LazyConv2d", (3, 2), 4), ("LazyConv3d", (3, 2), 5),
        ("LazyConvTranspose1d", (3, 2), 3), ("LazyConvTranspose2d", (3, 2), 4),
        ("LazyConvTranspose3d", (3, 2), 5), ("LazyBatchNorm1d", (), 3),
        ("LazyBatchNorm2d", (), 4), ("LazyBatchNorm3d", (), 5),
        ("LazyInstanceNorm1d", (), 3), ("LazyInstanceNorm2d", (), 4),
        ("LazyInstanceNorm3d", (), 5)]


@pytest.mark.parametrize("name,args,ndim", LAZY, ids=[m[0] for m in LAZY])
def test_lazy_modules_as_torch(name, args, ndim):
    torch = _torch()
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    assert isinstance(ours.weight, nn.UninitializedParameter)
    assert repr(ours.weight) == repr(theirs.weight) == "<UninitializedParameter>"
    assert ours.has_uninitialized_params()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    if "Norm" in name:
        assert isinstance(ours.running_mean, nn.UninitializedBuffer)
        assert repr(ours.running_mean) == "<UninitializedBuffer>"
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
        ours.weight.shape
    x = _x((2, 4, 5, 6, 5)[:ndim]).astype(np.float32)
    yo, yt = ours(ndgrad.tensor(x)), theirs(torch.tensor(x))
    assert type(ours).__name__ == type(theirs).__name__ == name[4:]
    assert type(ours) is getattr(nn, name[4:])
    assert not ours._forward_pre_hooks
    assert tuple(ours.weight.shape) == tuple(theirs.weight.shape)
    assert type(ours.weight) is nn.Parameter
    assert repr(ours) == repr(theirs)
    assert tuple(yo.shape) == tuple(yt.shape)
    if "Norm" in name:   # deterministic: the statistics of the same batch
        np.testing.assert_allclose(yo.detach().numpy(), yt.detach().numpy(), atol=1e-5)
        np.testing.assert_allclose(ours.running_mean.numpy(), theirs.running_mean.numpy(),
                                   atol=1e-6)
        assert type(ours.running_mean) is ndgrad.Tensor


def test_lazy_conv_load_state_dict_and_errors():
    ref = nn.Conv2d(5, 3, 2)
    lazy = nn.LazyConv2d(3, 2)
    lazy.load_state_dict(ref.state_dict())
    assert tuple(lazy.weight.shape) == (3, 5, 2, 2)
    np.testing.assert_array_equal(lazy.weight.detach().numpy(), ref.weight.detach().numpy())
    x = ndgrad.randn(1, 5, 4, 4)
    np.testing.assert_array_equal(lazy(x).detach().numpy(), ref(x).detach().numpy())
    assert type(lazy) is nn.Conv2d and lazy.in_channels == 0   # as PyTorch's: not re-inferred
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input "
                                           r"to LazyConv2d"):
        nn.LazyConv2d(3, 2)(ndgrad.ones(2, 3))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv2d(4, 2, groups=2)(ndgrad.ones(1, 3, 4, 4))
    # parameters created by the first call are the ones an optimizer built later sees
    m = nn.LazyConv1d(2, 1, bias=False)
    m(ndgrad.ones(1, 3, 4))
    assert [n for n, _ in m.named_parameters()] == ["weight"]


def test_lazy_unbatched_input():
    m = nn.LazyConv3d(2, 1)
    m(ndgrad.ones(3, 2, 2, 2))
    assert m.in_channels == 3


# ---------------------------------------------------------------- the others

def test_cross_map_lrn2d_and_channel_shuffle_repr():
    torch = _torch()
    for size in (2, 3, 5):
        _run_both(nn.CrossMapLRN2d(size, 0.1, 0.6, 2), torch.nn.CrossMapLRN2d(size, 0.1, 0.6, 2),
                  _x((2, 7, 3, 2)))
    assert repr(nn.ChannelShuffle(3)) == repr(torch.nn.ChannelShuffle(3))


def test_adaptive_log_softmax_with_loss():
    torch = _torch()
    ours = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=True)
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=True)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    target = np.array([0, 4, 9, 2, 7, 5])
    _run_both(ours, theirs, _x((6, 8)), target)
    x = _x((6, 8), 1)
    out_o = ours(ndgrad.tensor(x), ndgrad.tensor(target))
    out_t = theirs(torch.tensor(x), torch.tensor(target))
    assert type(out_o).__name__ == "_ASMoutput" and out_o._fields == ("output", "loss")
    np.testing.assert_allclose(out_o.loss.detach().numpy(), out_t.loss.detach().numpy(),
                               rtol=1e-12)
    np.testing.assert_allclose(ours.log_prob(ndgrad.tensor(x)).detach().numpy(),
                               theirs.log_prob(torch.tensor(x)).detach().numpy(), rtol=1e-12)
    np.testing.assert_array_equal(ours.predict(ndgrad.tensor(x)).numpy(),
                                  theirs.predict(torch.tensor(x)).numpy())
    one = ours(ndgrad.tensor(x[0]), ndgrad.tensor(target[0]))
    assert one.output.ndim == 0
    for call in [lambda L, m: m(L.ones(3, 8, dtype=L.float64), L.tensor([0, 1, 10])),
                 lambda L, m: m(L.ones(3, 8, dtype=L.float64), L.tensor([0, 1])),
                 lambda L, m: m(L.ones(3, 8, dtype=L.float64), L.zeros(3, 1).long()),
                 lambda L, m: L.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 3]),
                 lambda L, m: L.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [])]:
        with pytest.raises(Exception) as want:
            call(torch, theirs)
        with pytest.raises(type(want.value)) as got:
            call(ndgrad, ours)
        assert str(got.value) == str(want.value)


def test_data_parallel_is_a_cpu_pass_through():
    torch = _torch()
    inner = nn.Linear(2, 3)
    dp = nn.DataParallel(inner)
    ref = torch.nn.DataParallel(torch.nn.Linear(2, 3))
    assert dp.module is inner and dp.device_ids == ref.device_ids == []
    assert repr(dp) == repr(ref)
    assert list(dp.state_dict()) == list(ref.state_dict()) == ["module.weight", "module.bias"]
    x = ndgrad.randn(4, 2)
    np.testing.assert_array_equal(dp(x).detach().numpy(), inner(x).detach().numpy())
    assert nn.parallel.DataParallel is nn.DataParallel
    with pytest.raises(RuntimeError, match="device type could not be determined"):
        nn.parallel.data_parallel(inner, x)


def test_container_nllloss2d_rnncellbase_factory_kwargs():
    torch = _torch()
    with pytest.warns(FutureWarning, match="`nn.Container` is deprecated"):
        c = nn.Container(a=nn.ReLU(), b=nn.Linear(1, 2))
    with pytest.warns(FutureWarning):
        ct = torch.nn.Container(a=torch.nn.ReLU(), b=torch.nn.Linear(1, 2))
    assert repr(c) == repr(ct)
    assert issubclass(nn.NLLLoss2d, nn.NLLLoss)
    x, t = _x((2, 3, 4, 4)), np.random.default_rng(0).integers(0, 3, (2, 4, 4))
    np.testing.assert_allclose(
        nn.NLLLoss2d()(ndgrad.tensor(x), ndgrad.tensor(t)).numpy(),
        torch.nn.NLLLoss2d()(torch.tensor(x), torch.tensor(t)).numpy(), rtol=1e-12)
    for cell in (nn.RNNCell(3, 4), nn.LSTMCell(3, 4), nn.GRUCell(3, 4)):
        assert isinstance(cell, nn.RNNCellBase)
    base = nn.RNNCellBase(3, 4, bias=False, num_chunks=2)
    ref = torch.nn.RNNCellBase(3, 4, bias=False, num_chunks=2)
    assert repr(base) == repr(ref)
    assert [(n, tuple(p.shape)) for n, p in base.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in ref.named_parameters()]
    assert nn.factory_kwargs({"dtype": 1, "factory_kwargs": {"device": "cpu"}}) == \
        torch.nn.factory_kwargs({"dtype": 1, "factory_kwargs": {"device": "cpu"}})
    for bad in ({"foo": 1}, {"dtype": 1, "factory_kwargs": {"dtype": 2}}):
        with pytest.raises(TypeError) as want:
            torch.nn.factory_kwargs(bad)
        with pytest.raises(TypeError) as got:
            nn.factory_kwargs(bad)
        assert str(got.value) == str(want.value)


def test_sync_batch_norm_convert():
    net = nn.Sequential(nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3), nn.Sequential(nn.BatchNorm1d(3)))
    conv = nn.SyncBatchNorm.convert_sync_batchnorm(net)
    assert type(conv[1]) is nn.SyncBatchNorm and type(conv[2][0]) is nn.SyncBatchNorm
    assert conv[1].weight is net[1].weight and conv[1].running_mean is net[1].running_mean
    with pytest.raises(ValueError, match="expected at least 2D input"):
        nn.SyncBatchNorm(3)(ndgrad.ones(3))


def test_alpha_dropouts_keep_mean_and_variance():
    ndgrad.manual_seed(0)
    x = ndgrad.randn(400, 50, dtype=ndgrad.float64)
    for y in (F.alpha_dropout(x, 0.3, True), F.feature_alpha_dropout(x.unsqueeze(-1), 0.3,
                                                                     True)):
        y = y.numpy()
        assert abs(y.mean()) < 0.05 and abs(y.std() - 1) < 0.05
    y = F.feature_alpha_dropout(x.reshape(400, 50, 1, 1).expand(400, 50, 2, 2), 0.5, True)
    per_channel = y.numpy().reshape(400, 50, 4)
    assert (per_channel == per_channel[..., :1]).all()   # whole channels are dropped
    assert F.alpha_dropout(x, 0.3, False) is x
    np.testing.assert_array_equal(F.alpha_dropout(x, 1.0, True).numpy(), 0 * x.numpy())
    g = ndgrad.ones(3, 4, dtype=ndgrad.float64, requires_grad=True)
    F.alpha_dropout(g, 0.5, True).sum().backward()
    a = 1 / np.sqrt((1.7580993408473766 ** 2 * 0.5 + 1) * 0.5)
    assert set(np.unique(g.grad.numpy())) <= {0.0, a}


def test_dropout3d_zeroes_whole_channels():
    ndgrad.manual_seed(1)
    y = F.dropout3d(ndgrad.ones(4, 6, 2, 2, 2), 0.5).numpy().reshape(4, 6, -1)
    assert (y == y[..., :1]).all() and set(np.unique(y)) <= {0.0, 2.0}
    y = F.dropout3d(ndgrad.ones(6, 2, 2, 2), 0.5).numpy().reshape(6, -1)
    assert (y == y[:, :1]).all()
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout3d"):
        F.dropout3d(ndgrad.ones(2, 3), 0.5)


def test_sdpa_kernel_context():
    torch = _torch()
    from ndgrad.nn.attention import SDPBackend, sdpa_kernel, _cur_sdpa_kernel_backends
    from torch.nn.attention import SDPBackend as TB
    assert [(k, int(v)) for k, v in SDPBackend.__members__.items()] == \
        [(k, int(v)) for k, v in TB.__members__.items()]
    assert repr(SDPBackend.MATH) == repr(TB.MATH) and str(SDPBackend.MATH) == str(TB.MATH)
    before = _cur_sdpa_kernel_backends()
    assert [b.name for b in before] == [b.name for b in
                                        torch.nn.attention._cur_sdpa_kernel_backends()]
    q = ndgrad.randn(1, 2, 3, 4)
    ref = F.scaled_dot_product_attention(q, q, q)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        assert _cur_sdpa_kernel_backends() == [SDPBackend.FLASH_ATTENTION]
        np.testing.assert_array_equal(F.scaled_dot_product_attention(q, q, q).numpy(),
                                      ref.numpy())
    with sdpa_kernel([SDPBackend.MATH, SDPBackend.EFFICIENT_ATTENTION], set_priority=True):
        assert _cur_sdpa_kernel_backends(True) == [SDPBackend.MATH,
                                                   SDPBackend.EFFICIENT_ATTENTION]
    assert _cur_sdpa_kernel_backends() == before
    with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend"):
        with sdpa_kernel("math"):
            pass
    from ndgrad.nn import attention as A
    A.register_flash_attention_impl("FA9", register_fn=lambda: None)
    assert "FA9" in A.list_flash_attention_impls()
    A.activate_flash_attention_impl("FA9")
    assert A.current_flash_attention_impl() is None
    with pytest.raises(ValueError, match="Unknown flash attention impl 'nope'"):
        A.activate_flash_attention_impl("nope")


def test_linear_cross_entropy_as_torch():
    torch = _torch()
    rng = np.random.default_rng(4)
    x, w, b = rng.standard_normal((4, 5)), rng.standard_normal((6, 5)), rng.standard_normal(6)
    wk, bk = rng.standard_normal((6, 2, 5)), rng.standard_normal((6, 2))
    t = rng.integers(0, 6, 4)
    tk = rng.integers(0, 6, (4, 2))
    cases = [
        (lambda L, x, w, b: L.nn.functional.linear_cross_entropy(x, w, L.tensor(t),
                                                                 linear_bias=b), (x, w, b)),
        (lambda L, x, w: L.nn.functional.linear_cross_entropy(
            x, w, L.tensor(t), reduction="none", label_smoothing=0.1, ignore_index=2), (x, w)),
        (lambda L, x, w, b: L.nn.functional.linear_cross_entropy(x, w, L.tensor(tk),
                                                                 linear_bias=b), (x, wk, bk)),
        (lambda L, x, w: L.nn.functional.linear_cross_entropy(x[0], w, L.tensor(t[0])), (x, w)),
    ]
    for f, arrays in cases:
        a = [ndgrad.tensor(v, requires_grad=True) for v in arrays]
        r = [torch.tensor(v, requires_grad=True) for v in arrays]
        yo, yt = f(ndgrad, *a), f(torch, *r)
        np.testing.assert_allclose(yo.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
        yo.sum().backward()
        yt.sum().backward()
        for p, q in zip(a, r):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-10, atol=1e-12)
    ours = nn.LinearCrossEntropyLoss(5, 6, out_features=(2,), bias=True).double()
    theirs = torch.nn.LinearCrossEntropyLoss(5, 6, out_features=(2,), bias=True).double()
    _copy_params(ours, theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    np.testing.assert_allclose(ours(ndgrad.tensor(x), ndgrad.tensor(tk)).detach().numpy(),
                               theirs(torch.tensor(x), torch.tensor(tk)).detach().numpy(),
                               rtol=1e-12)
    opts = nn.LinearCrossEntropyOptions(batch_chunk_size=2)
    y1 = F.linear_cross_entropy(ndgrad.tensor(x), ndgrad.tensor(w), ndgrad.tensor(t),
                                options=opts)
    y2 = F.linear_cross_entropy(ndgrad.tensor(x), ndgrad.tensor(w), ndgrad.tensor(t))
    np.testing.assert_allclose(y1.numpy(), y2.numpy())
    for call in [lambda L: L.nn.LinearCrossEntropyOptions(acc_policy="fast"),
                 lambda L: L.nn.LinearCrossEntropyOptions(chunking_method="rows"),
                 lambda L: L.nn.LinearCrossEntropyOptions(batch_chunk_size=0),
                 lambda L: L.nn.functional.linear_cross_entropy(L.ones(2, 3), L.ones(4, 2),
                                                                L.zeros(2).long()),
                 lambda L: L.nn.functional.linear_cross_entropy(L.ones(3), L.ones(4, 2, 3),
                                                                L.zeros(2).long()),
                 lambda L: L.nn.LinearCrossEntropyLoss(3, 4, label_smoothing=2.0)]:
        with pytest.raises(Exception) as want:
            call(torch)
        with pytest.raises(type(want.value)) as got:
            call(ndgrad)
        assert str(got.value) == str(want.value)


def test_grouped_mm_as_torch():
    torch = _torch()
    rng = np.random.default_rng(6)
    offs = np.array([4, 8], dtype=np.int32)   # (PyTorch needs 16-byte aligned groups)
    cases = [((8, 4), (2, 4, 4), offs), ((2, 4, 4), (2, 4, 4), None), ((4, 8), (8, 4), offs),
             ((2, 4, 4), (4, 8), np.array([4, 8], dtype=np.int32))]
    for sa, sb, off in cases:
        a, b = rng.standard_normal(sa).astype(np.float32), rng.standard_normal(sb).astype(
            np.float32)
        res = []
        for L in (ndgrad, torch):
            ta, tb = L.tensor(a, requires_grad=True), L.tensor(b, requires_grad=True)
            o = L.nn.functional.grouped_mm(ta, tb, offs=None if off is None else L.tensor(off))
            g = np.random.default_rng(7).standard_normal(tuple(o.shape)).astype(np.float32)
            (o * L.tensor(g)).sum().backward()   # (a dense gradient: PyTorch's kernel refuses
            # the stride-0 one of o.sum())
            res.append((o.detach().numpy(), ta.grad.numpy(), tb.grad.numpy()))
        for x, y in zip(*res):
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)
    a, b = torch.randn(8, 4), torch.randn(2, 4, 4)
    o32 = torch.tensor(offs)
    for call in [lambda L, a, b, o: L.nn.functional.grouped_mm(a, b),
                 lambda L, a, b, o: L.nn.functional.grouped_mm(a.double(), b.double(), offs=o),
                 lambda L, a, b, o: L.nn.functional.grouped_mm(a, b, offs=o.long()),
                 lambda L, a, b, o: L.nn.functional.grouped_mm(a, b, offs=o,
                                                               out_dtype=L.float64),
                 lambda L, a, b, o: L.nn.functional.grouped_mm(a, b, offs=o,
                                                               bias=L.ones(2, 4))]:
        with pytest.raises(RuntimeError) as want:
            call(torch, a, b, o32)
        with pytest.raises(RuntimeError) as got:
            call(ndgrad, ndgrad.tensor(a.numpy()), ndgrad.tensor(b.numpy()),
                 ndgrad.tensor(offs))
        assert str(got.value) == str(want.value)
