"""nn.utils vs PyTorch: weight_norm/spectral_norm (hook and parametrization forms),
parametrize (register/remove/cached/is_parametrized/transfer/type_before), orthogonal, fusion,
skip_init, clip_grads_with_norm_, conv weight memory format, prune; nn.init's deprecated
aliases. State_dict keys, values and gradients in float64, and PyTorch's error messages."""
import copy
import warnings

import numpy as np
import pytest

import ndgrad
import ndgrad.nn as nn
from ndgrad.nn.utils import parametrize, parametrizations as P, prune


def _torch():
    torch = pytest.importorskip("torch")
    import torch.nn.utils.prune  # noqa: F401  (not imported by torch.nn.utils itself)
    return torch


def _x(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _pair(make):
    """The same float64 module in ndgrad and torch (torch gets ndgrad's values)."""
    torch = _torch()
    a, b = make(nn).double(), make(torch.nn).double()
    b.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in a.state_dict().items()})
    return a, b


def _sync(a, b):
    """Copy every tensor of a's state_dict into b (random buffers such as u and v)."""
    torch = _torch()
    b.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in a.state_dict().items()})


def _same(a, b, tol=1e-10):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _forward_backward(a, b, x):
    torch = _torch()
    ya, yb = a(ndgrad.tensor(x)), b(torch.tensor(x))
    _same(ya, yb)
    g = _x(tuple(yb.shape), 5)
    (ya * ndgrad.tensor(g)).sum().backward()
    (yb * torch.tensor(g)).sum().backward()
    for (n, p), (m, q) in zip(a.named_parameters(), b.named_parameters()):
        assert n == m
        _same(p.grad, q.grad)


def _same_error(call):
    torch = _torch()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as want:
            call(torch)
        with pytest.raises(type(want.value)) as got:
            call(ndgrad)
    assert str(got.value) == str(want.value)


# ---------------------------------------------------------------- weight norm

@pytest.mark.parametrize("dim", [0, 1, None, -1])
def test_parametrized_weight_norm(dim):
    torch = _torch()
    a, b = _pair(lambda N: N.Conv2d(2, 3, 2))
    P.weight_norm(a, dim=dim)
    torch.nn.utils.parametrizations.weight_norm(b, dim=dim)
    assert type(a).__name__ == type(b).__name__ == "ParametrizedConv2d"
    assert list(a.state_dict()) == list(b.state_dict()) == [
        "bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    assert repr(a) == repr(b)
    for k in a.state_dict():
        _same(a.state_dict()[k], b.state_dict()[k])
    _forward_backward(a, b, _x((2, 2, 4, 4)))


def test_weight_norm_hook_form():
    torch = _torch()
    a, b = _pair(lambda N: N.Linear(3, 4))
    with pytest.warns(FutureWarning, match="`torch.nn.utils.weight_norm` is deprecated"):
        nn.utils.weight_norm(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.nn.utils.weight_norm(b)
    assert list(a.state_dict()) == list(b.state_dict()) == ["bias", "weight_g", "weight_v"]
    _forward_backward(a, b, _x((5, 3)))
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nn.utils.weight_norm(a)
    nn.utils.remove_weight_norm(a)
    torch.nn.utils.remove_weight_norm(b)
    assert list(a.state_dict()) == list(b.state_dict()) == ["bias", "weight"]
    _same(a.weight, b.weight)
    _same_error(lambda L: L.nn.utils.remove_weight_norm(L.nn.Linear(2, 2)))


def test_weight_norm_loads_old_keys():
    old = nn.Linear(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nn.utils.weight_norm(old)
    new = P.weight_norm(nn.Linear(3, 4))
    new.load_state_dict(old.state_dict())
    x = ndgrad.randn(2, 3)
    _same(new(x), old(x))


# ---------------------------------------------------------------- spectral norm

@pytest.mark.parametrize("make", [lambda N: N.Linear(3, 5), lambda N: N.Conv2d(2, 3, 2),
                                  lambda N: N.ConvTranspose2d(2, 3, 2)])
def test_parametrized_spectral_norm(make):
    torch = _torch()
    a, b = _pair(make)
    P.spectral_norm(a)
    torch.nn.utils.parametrizations.spectral_norm(b)
    assert list(a.state_dict()) == list(b.state_dict())
    assert "parametrizations.weight.0._u" in a.state_dict()
    _sync(a, b)
    x = _x((2, 3) if isinstance(a, nn.Linear) else (1, 2, 4, 4))
    for _ in range(3):   # training: one power iteration per access
        _forward_backward(a, b, x)
        for n in ("_u", "_v"):
            _same(getattr(a.parametrizations.weight[0], n),
                  getattr(b.parametrizations.weight[0], n))
        a.zero_grad()
        b.zero_grad()
    a.eval()
    b.eval()
    _forward_backward(a, b, x)
    # sigma converges to the largest singular value
    w = a.parametrizations.weight.original.detach().numpy()
    mat = w.reshape(w.shape[0], -1) if not isinstance(a, nn.ConvTranspose2d) else \
        np.moveaxis(w, 1, 0).reshape(w.shape[1], -1)
    with parametrize.cached():
        for _ in range(50):
            a.train()
            a.weight
    a.eval()
    s = np.linalg.svd(mat, compute_uv=False)[0]
    np.testing.assert_allclose(np.linalg.svd(a.weight.detach().numpy().reshape(mat.shape) if
                                             not isinstance(a, nn.ConvTranspose2d) else
                                             np.moveaxis(a.weight.detach().numpy(), 1, 0)
                                             .reshape(mat.shape), compute_uv=False)[0],
                               1.0, rtol=1e-3)
    assert s > 0


def test_spectral_norm_hook_form():
    torch = _torch()
    a, b = _pair(lambda N: N.Linear(3, 5))
    nn.utils.spectral_norm(a, n_power_iterations=2)
    torch.nn.utils.spectral_norm(b, n_power_iterations=2)
    assert list(a.state_dict()) == list(b.state_dict()) == [
        "bias", "weight_orig", "weight_u", "weight_v"]
    _sync(a, b)
    for _ in range(2):
        _forward_backward(a, b, _x((4, 3)))
        _same(a.weight_u, b.weight_u)
        a.zero_grad()
        b.zero_grad()
    nn.utils.remove_spectral_norm(a)
    torch.nn.utils.remove_spectral_norm(b)
    assert list(a.state_dict()) == list(b.state_dict()) == ["bias", "weight"]
    _same(a.weight, b.weight)
    _same_error(lambda L: L.nn.utils.remove_spectral_norm(L.nn.Linear(2, 2)))
    _same_error(lambda L: L.nn.utils.spectral_norm(L.nn.utils.spectral_norm(L.nn.Linear(2, 2))))
    _same_error(lambda L: L.nn.utils.parametrizations.spectral_norm(L.nn.Linear(2, 2), dim=3))
    _same_error(lambda L: L.nn.utils.parametrizations.spectral_norm(
        L.nn.Linear(2, 2), n_power_iterations=0))
    _same_error(lambda L: L.nn.utils.parametrizations.spectral_norm(L.nn.Linear(2, 2), "nope"))


# ---------------------------------------------------------------- parametrize

class _Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


class _Scale(nn.Module):
    def forward(self, X):
        return 2 * X

    def right_inverse(self, Y):
        return Y / 2


def test_register_parametrization_semantics():
    m = nn.Linear(3, 3).double()
    w0 = m.weight.detach().clone()
    parametrize.register_parametrization(m, "weight", _Symmetric())
    assert parametrize.is_parametrized(m) and parametrize.is_parametrized(m, "weight")
    assert not parametrize.is_parametrized(m, "bias")
    assert type(m).__name__ == "ParametrizedLinear"
    assert parametrize.type_before_parametrizations(m) is nn.Linear
    assert isinstance(m, nn.Linear)
    assert isinstance(m.parametrizations.weight, parametrize.ParametrizationList)
    W = m.weight
    np.testing.assert_array_equal(W.detach().numpy(), W.detach().numpy().T)
    np.testing.assert_array_equal(m.parametrizations.weight.original.detach().numpy(),
                                  w0.numpy())
    assert [n for n, _ in m.named_parameters()] == ["bias", "parametrizations.weight.original"]
    # each access recomputes; within cached() once
    assert m.weight is not m.weight
    with parametrize.cached():
        assert m.weight is m.weight
    # a second parametrization stacks; assignment goes through right_inverse
    parametrize.register_parametrization(m, "weight", _Scale())
    assert len(m.parametrizations.weight) == 2
    with pytest.raises(RuntimeError, match="parametrization _Symmetric does not implement "
                                           "right_inverse."):
        m.weight = ndgrad.eye(3, dtype=ndgrad.float64)
    m2 = parametrize.register_parametrization(nn.Linear(2, 2).double(), "weight", _Scale())
    m2.weight = ndgrad.ones(2, 2, dtype=ndgrad.float64)
    np.testing.assert_array_equal(m2.parametrizations.weight.original.detach().numpy(), 0.5)
    np.testing.assert_array_equal(m2.weight.detach().numpy(), 1.0)
    # gradients flow to the original
    m2.weight.sum().backward()
    np.testing.assert_array_equal(m2.parametrizations.weight.original.grad.numpy(), 2.0)
    # remove: keep the parametrized value, or the original
    parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)
    assert type(m) is nn.Linear and not hasattr(m, "parametrizations")
    np.testing.assert_array_equal(m.weight.detach().numpy(), w0.numpy())
    parametrize.remove_parametrizations(m2, "weight")
    np.testing.assert_array_equal(m2.weight.detach().numpy(), 1.0)
    assert isinstance(m2.weight, nn.Parameter)
    # deepcopy keeps working
    m3 = parametrize.register_parametrization(nn.Linear(2, 2), "weight", _Scale())
    c = copy.deepcopy(m3)
    np.testing.assert_array_equal(c.weight.detach().numpy(), m3.weight.detach().numpy())
    # transfer
    dst = parametrize.transfer_parametrizations_and_params(m3, nn.Linear(2, 2))
    assert parametrize.is_parametrized(dst, "weight")
    np.testing.assert_array_equal(dst.weight.detach().numpy(), m3.weight.detach().numpy())


def test_parametrize_errors_match_torch():
    class Bad:
        pass

    def wrong_shape(L):
        class P(L.nn.Module):
            def forward(self, X):
                return X[0]
        return L.nn.utils.parametrize.register_parametrization(L.nn.Linear(2, 2), "weight", P())

    def wrong_dtype(L):
        class P(L.nn.Module):
            def forward(self, X):
                return X.double()
        return L.nn.utils.parametrize.register_parametrization(L.nn.Linear(2, 2), "weight", P())

    _same_error(wrong_shape)
    _same_error(wrong_dtype)
    _same_error(lambda L: L.nn.utils.parametrize.remove_parametrizations(L.nn.Linear(2, 2),
                                                                         "weight"))
    _same_error(lambda L: L.nn.utils.parametrize.ParametrizationList([], L.ones(2)))
    _same_error(lambda L: L.nn.utils.parametrize.remove_parametrizations(
        L.nn.utils.parametrizations.weight_norm(L.nn.Linear(2, 2)), "weight",
        leave_parametrized=False))


def test_orthogonal_as_torch():
    torch = _torch()
    for mp in ("matrix_exp", "cayley", "householder"):
        a, b = _pair(lambda N: N.Linear(4, 4))
        P.orthogonal(a, orthogonal_map=mp)
        torch.nn.utils.parametrizations.orthogonal(b, orthogonal_map=mp)
        assert list(a.state_dict()) == list(b.state_dict())
        for k in a.state_dict():
            _same(a.state_dict()[k], b.state_dict()[k], 1e-9)
        _forward_backward(a, b, _x((3, 4)))
        W = a.weight.detach().numpy()
        np.testing.assert_allclose(W.T @ W, np.eye(4), atol=1e-12)
    for shape in ((5, 3), (3, 5)):
        a, b = _pair(lambda N: N.Linear(shape[1], shape[0]))
        P.orthogonal(a, use_trivialization=False)
        torch.nn.utils.parametrizations.orthogonal(b, use_trivialization=False)
        _same(a.parametrizations.weight.original, b.parametrizations.weight.original, 1e-9)
        _forward_backward(a, b, _x((2, shape[1])))
    _same_error(lambda L: L.nn.utils.parametrizations.orthogonal(L.nn.Linear(2, 2),
                                                                 orthogonal_map="qr"))
    _same_error(lambda L: L.nn.utils.parametrizations.orthogonal(L.nn.Linear(2, 2), "bias"))


# ---------------------------------------------------------------- fusion and the rest

@pytest.mark.parametrize("transpose", [False, True])
def test_fuse_conv_bn_eval(transpose):
    torch = _torch()
    conv = (lambda N: N.ConvTranspose2d(2, 3, 2)) if transpose else (lambda N: N.Conv2d(2, 3, 2))
    ca, cb = _pair(conv)
    ba, bb = _pair(lambda N: N.BatchNorm2d(3))
    rm, rv = _x(3, 1), np.abs(_x(3, 2)) + 0.5
    for bn, L in ((ba, ndgrad), (bb, torch)):
        bn.running_mean.copy_(L.tensor(rm))
        bn.running_var.copy_(L.tensor(rv))
        bn.weight.data.copy_(L.tensor(_x(3, 3)))
        bn.bias.data.copy_(L.tensor(_x(3, 4)))
    for m in (ca, cb, ba, bb):
        m.eval()
    fa = nn.utils.fuse_conv_bn_eval(ca, ba, transpose)
    fb = torch.nn.utils.fuse_conv_bn_eval(cb, bb, transpose)
    _same(fa.weight, fb.weight)
    _same(fa.bias, fb.bias)
    x = _x((1, 2, 4, 4))
    _same(fa(ndgrad.tensor(x)), ba(ca(ndgrad.tensor(x))))
    assert isinstance(fa.weight, nn.Parameter) and fa is not ca
    ca.train()
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        nn.utils.fuse_conv_bn_eval(ca, ba)


def test_fuse_linear_bn_eval():
    torch = _torch()
    la, lb = _pair(lambda N: N.Linear(3, 4))
    ba, bb = _pair(lambda N: N.BatchNorm1d(4))
    for bn, L in ((ba, ndgrad), (bb, torch)):
        bn.running_mean.copy_(L.tensor(_x(4, 1)))
        bn.running_var.copy_(L.tensor(np.abs(_x(4, 2)) + 0.5))
    for m in (la, lb, ba, bb):
        m.eval()
    fa, fb = nn.utils.fuse_linear_bn_eval(la, ba), torch.nn.utils.fuse_linear_bn_eval(lb, bb)
    _same(fa.weight, fb.weight)
    _same(fa.bias, fb.bias)
    _same_error(lambda L: L.nn.utils.fuse_linear_bn_eval(L.nn.Linear(3, 4).eval(),
                                                          L.nn.BatchNorm1d(3).eval()))
    w, b = nn.utils.fuse_linear_bn_weights(la.weight, None, ba.running_mean, ba.running_var,
                                           1e-5, ba.weight, ba.bias)
    w2, b2 = torch.nn.utils.fuse_linear_bn_weights(lb.weight, None, bb.running_mean,
                                                   bb.running_var, 1e-5, bb.weight, bb.bias)
    _same(w, w2)
    _same(b, b2)


def test_skip_init_clip_grads_memory_format():
    torch = _torch()
    m = nn.utils.skip_init(nn.Linear, 3, 4)
    assert type(m) is nn.Linear and tuple(m.weight.shape) == (4, 3)
    _same_error(lambda L: L.nn.utils.skip_init(int))

    class NoDevice(nn.Module):
        def __init__(self):
            super().__init__()

    with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
        nn.utils.skip_init(NoDevice)
    # clip_grads_with_norm_ with get_total_norm, float32 as PyTorch
    for dtype in ("float32", "float64"):
        g = [_x((3, 4), 1).astype(dtype), _x(5, 2).astype(dtype)]
        pa = [ndgrad.tensor(a, requires_grad=True) for a in g]
        pb = [torch.tensor(a, requires_grad=True) for a in g]
        for p, a in zip(pa, g):
            p.grad = ndgrad.tensor(a * 3)
        for p, a in zip(pb, g):
            p.grad = torch.tensor(a * 3)
        tn = nn.utils.get_total_norm([p.grad for p in pa])
        tt = torch.nn.utils.get_total_norm([p.grad for p in pb])
        nn.utils.clip_grads_with_norm_(pa, 1.5, tn)
        torch.nn.utils.clip_grads_with_norm_(pb, 1.5, tt)
        np.testing.assert_allclose(tn.numpy(), tt.numpy(), rtol=1e-6 if dtype == "float32"
                                   else 1e-15)
        for p, q in zip(pa, pb):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(),
                                       rtol=1e-6 if dtype == "float32" else 1e-15)
    net = nn.Sequential(nn.Conv2d(2, 2, 1), nn.Sequential(nn.Conv3d(1, 1, 1)))
    w = net[0].weight.detach().numpy().copy()
    assert nn.utils.convert_conv2d_weight_memory_format(net, ndgrad.channels_last
                                                        if hasattr(ndgrad, "channels_last")
                                                        else None) is net
    assert nn.utils.convert_conv3d_weight_memory_format(net, None) is net
    np.testing.assert_array_equal(net[0].weight.detach().numpy(), w)


def test_init_deprecated_aliases():
    torch = _torch()
    for name in ("uniform", "normal", "constant", "eye", "dirac", "xavier_uniform",
                 "xavier_normal", "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"):
        args = {"constant": (0.5,), "sparse": (0.5,)}.get(name, ())
        t = ndgrad.empty(4, 3, 3) if name == "dirac" else ndgrad.empty(4, 3)
        with pytest.warns(FutureWarning, match=rf"`nn.init.{name}` is now deprecated in favor "
                                               rf"of `nn.init.{name}_`."):
            out = getattr(nn.init, name)(t, *args)
        assert out is t
        assert getattr(nn.init, name).__name__ == getattr(torch.nn.init, name).__name__
    t = ndgrad.empty(3, 3)
    with pytest.warns(FutureWarning):
        nn.init.eye(t)
    np.testing.assert_array_equal(t.numpy(), np.eye(3))


# ---------------------------------------------------------------- prune

def test_prune_l1_unstructured_as_torch():
    torch = _torch()
    a, b = _pair(lambda N: N.Linear(4, 5))
    prune.l1_unstructured(a, "weight", amount=0.3)
    torch.nn.utils.prune.l1_unstructured(b, "weight", amount=0.3)
    assert list(a.state_dict()) == list(b.state_dict()) == ["bias", "weight_orig", "weight_mask"]
    assert [n for n, _ in a.named_parameters()] == [n for n, _ in b.named_parameters()]
    _same(a.weight_mask, b.weight_mask)
    assert prune.is_pruned(a) and isinstance(a._forward_pre_hooks[
        next(iter(a._forward_pre_hooks))], prune.L1Unstructured)
    _forward_backward(a, b, _x((3, 4)))
    # iterative pruning: a container, acting on what is left
    prune.l1_unstructured(a, "weight", amount=2)
    torch.nn.utils.prune.l1_unstructured(b, "weight", amount=2)
    hook = next(iter(a._forward_pre_hooks.values()))
    assert isinstance(hook, prune.PruningContainer) and len(hook) == 2
    _same(a.weight_mask, b.weight_mask)
    prune.ln_structured(a, "weight", amount=1, n=2, dim=0)
    torch.nn.utils.prune.ln_structured(b, "weight", amount=1, n=2, dim=0)
    _same(a.weight_mask, b.weight_mask)
    prune.remove(a, "weight")
    torch.nn.utils.prune.remove(b, "weight")
    assert list(a.state_dict()) == list(b.state_dict()) == ["bias", "weight"]
    _same(a.weight, b.weight)
    assert not prune.is_pruned(a)


def test_prune_structured_global_custom_identity():
    torch = _torch()
    a, b = _pair(lambda N: N.Conv2d(3, 4, 2))
    prune.ln_structured(a, "weight", amount=0.5, n=1, dim=1)
    torch.nn.utils.prune.ln_structured(b, "weight", amount=0.5, n=1, dim=1)
    _same(a.weight_mask, b.weight_mask)
    prune.identity(a, "bias")
    torch.nn.utils.prune.identity(b, "bias")
    _same(a.bias_mask, b.bias_mask)
    # random methods: the right number pruned, whole channels for structured
    ndgrad.manual_seed(0)
    m = nn.Linear(6, 5)
    prune.random_unstructured(m, "weight", amount=7)
    assert int((m.weight_mask.numpy() == 0).sum()) == 7
    prune.random_structured(m, "weight", amount=2, dim=0)
    rows = m.weight_mask.numpy().sum(1)
    assert int((rows == 0).sum()) >= 2
    # global: the smallest magnitudes over both layers together
    pa = [_pair(lambda N: N.Linear(3, 4)) for _ in range(2)]
    prune.global_unstructured([(x[0], "weight") for x in pa], pruning_method=prune.L1Unstructured,
                              amount=0.4)
    torch.nn.utils.prune.global_unstructured([(x[1], "weight") for x in pa],
                                             pruning_method=torch.nn.utils.prune.L1Unstructured,
                                             amount=0.4)
    for x in pa:
        _same(x[0].weight_mask, x[1].weight_mask)
    mask = (_x((4, 3), 3) > 0).astype(np.float64)
    c = prune.custom_from_mask(nn.Linear(3, 4), "weight", ndgrad.tensor(mask))
    np.testing.assert_array_equal(c.weight_mask.numpy(), mask)
    np.testing.assert_array_equal(c.weight.detach().numpy() == 0, mask == 0)
    for call in [lambda L: L.nn.utils.prune.l1_unstructured(L.nn.Linear(2, 2), "weight", 1.5),
                 lambda L: L.nn.utils.prune.l1_unstructured(L.nn.Linear(2, 2), "weight", -1),
                 lambda L: L.nn.utils.prune.l1_unstructured(L.nn.Linear(2, 2), "weight", 9),
                 lambda L: L.nn.utils.prune.l1_unstructured(L.nn.Linear(2, 2), "weight", "a"),
                 lambda L: L.nn.utils.prune.ln_structured(L.nn.Linear(2, 2), "bias", 1, 2, 0),
                 lambda L: L.nn.utils.prune.ln_structured(L.nn.Linear(2, 2), "weight", 1, 2, 4),
                 lambda L: L.nn.utils.prune.remove(L.nn.Linear(2, 2), "weight")]:
        _same_error(call)
    with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE supported for the '
                                        r"`pruning_method`. Found method <class "
                                        r"'ndgrad.nn.utils.prune.LnStructured'> of type "
                                        "structured"):
        prune.global_unstructured([(nn.Linear(2, 2), "weight")], prune.LnStructured,
                                  amount=1, n=2, dim=0)
    # a failed pruning leaves the module as it was
    m, mt = nn.Linear(2, 2), torch.nn.Linear(2, 2)
    with pytest.raises(ValueError):
        prune.l1_unstructured(m, "weight", 9)
    with pytest.raises(ValueError):
        torch.nn.utils.prune.l1_unstructured(mt, "weight", 9)
    assert [n for n, _ in m.named_parameters()] == [n for n, _ in mt.named_parameters()]
    assert not hasattr(m, "weight_orig") and isinstance(m.weight, nn.Parameter)
