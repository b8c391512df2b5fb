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


# ---------------------------------------------------------------- scaled_dot_product_attention

def _fully_masked_row_mask():
    m = R.random((5, 6)) > 0.4
    m[2] = False  # a query with no allowed key: zeros, as PyTorch's
    return m


SDPA_CASES = [
    # query, key, value shapes, keywords (mask: an array), PyTorch's node
    ((2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4), dict(is_causal=True)),
    ((2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4), dict()),
    ((2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4), dict(mask=R.standard_normal((5, 6)))),
    ((2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4), dict(mask=R.standard_normal((2, 1, 5, 6)))),
    ((2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4), dict(mask=_fully_masked_row_mask())),
    ((2, 4, 5, 4), (2, 2, 6, 4), (2, 2, 6, 4), dict(enable_gqa=True, is_causal=True)),
    ((2, 3, 7, 4), (2, 3, 3, 4), (2, 3, 3, 4), dict(is_causal=True, scale=0.3)),
    ((1, 1, 1, 8), (1, 1, 9, 8), (1, 1, 9, 8), dict(is_causal=True)),
    ((2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4), dict(is_causal=True,
                                                    mask=R.standard_normal((5, 6)))),
    # a mask shared by the batch, one row for all queries (the keys-major scores add it
    # transposed)
    ((2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4), dict(mask=R.standard_normal((3, 1, 6)))),
    ((2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4), dict(mask=np.arange(6)[None] != 2)),
    # the composite math path: 3-d, a value head size of its own
    ((3, 5, 4), (3, 6, 4), (3, 6, 4), dict(is_causal=True)),
    ((2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 7), dict(mask=_fully_masked_row_mask())),
]


def _sdpa_call(lib, q, k, v, kw):
    kw = dict(kw)
    m = kw.pop("mask", None)
    if m is not None:
        kw["attn_mask"] = lib.tensor(m)
    return lib.nn.functional.scaled_dot_product_attention(q, k, v, **kw)


@pytest.mark.parametrize("qs,ks,vs,kw", SDPA_CASES)
def test_sdpa_vs_torch(qs, ks, vs, kw):
    arrays = [R.standard_normal(s) for s in (qs, ks, vs)]
    ours = [ndgrad.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    y = _sdpa_call(ndgrad, *ours, kw)
    yt = _sdpa_call(torch, *theirs, kw)
    _close(y, yt)
    assert type(y.grad_fn).__name__ == yt.grad_fn.name()
    g = R.standard_normal(y.shape)
    ga = ndgrad.autograd.grad(y, ours, ndgrad.tensor(g))
    gt = torch.autograd.grad(yt, theirs, torch.tensor(g))
    for a, b in zip(ga, gt):
        _close(a, b)


@pytest.mark.parametrize("qs,ks,vs,kw", SDPA_CASES[:9])
def test_sdpa_gradcheck_every_order(qs, ks, vs, kw):
    """The fused kernel's backward is an op with its own derivative (PyTorch's has none:
    'derivative for aten::_scaled_dot_product_flash_attention_for_cpu_backward is not
    implemented'), so double backward works."""
    ins = [ndgrad.tensor(R.standard_normal(s), requires_grad=True) for s in (qs, ks, vs)]
    assert gradcheck(lambda q, k, v: _sdpa_call(ndgrad, q, k, v, kw), ins)
    assert gradgradcheck(lambda q, k, v: _sdpa_call(ndgrad, q, k, v, kw), ins)


def test_sdpa_float32_and_masks():
    q, k, v = (R.standard_normal((16, 4, 64, 32)).astype(np.float32) for _ in range(3))
    for kw in (dict(is_causal=True), dict(mask=R.random((64, 64)) > 0.3)):
        y = _sdpa_call(ndgrad, *(ndgrad.tensor(a) for a in (q, k, v)), kw)
        yt = _sdpa_call(torch, *(torch.tensor(a) for a in (q, k, v)), kw)
        assert y.dtype == ndgrad.float32
        _close(y, yt, rtol=1e-4, atol=1e-5)
    # no keys at all: zeros, as PyTorch's
    z = ndgrad.nn.functional.scaled_dot_product_attention(
        ndgrad.ones(1, 2, 3, 4), ndgrad.ones(1, 2, 0, 4), ndgrad.ones(1, 2, 0, 4))
    assert z.shape == (1, 2, 3, 4) and not z.numpy().any()


def _routing_cases(lib):
    q, k = lib.ones(2, 3, 5, 4), lib.ones(2, 3, 6, 4)

    def t(*shape):
        return lib.ones(*shape).transpose(-1, -2)
    return {
        "plain": (q, k, k, {}),
        "dropout": (q, k, k, dict(dropout_p=0.5)),
        "3-d": (q[0], k[0], k[0], {}),
        "batch sizes": (q, k[:1], k[:1], {}),
        "gqa": (lib.ones(2, 4, 5, 4), k[:, :2], k[:, :2], dict(enable_gqa=True)),
        "value head size": (q, k, lib.ones(2, 3, 6, 7), {}),
        "head-dim stride": (t(2, 3, 4, 5), k, k, {}),
        "head-dim stride, size 1": (t(2, 3, 1, 5), t(2, 3, 1, 6), t(2, 3, 1, 6), {}),
        "empty keys": (q, k[:, :, :0], k[:, :, :0], {}),
        "2-d mask": (q, k, k, dict(attn_mask=lib.zeros(5, 6))),
        "2-d mask of ones dims": (q, k, k, dict(attn_mask=lib.zeros(1, 1))),
        "4-d mask": (q, k, k, dict(attn_mask=lib.zeros(2, 1, 5, 6))),
        "4-d mask, column": (q, k, k, dict(attn_mask=lib.zeros(1, 3, 5, 1))),
        "transposed mask": (q, k, k, dict(attn_mask=lib.zeros(6, 5).t())),
        "3-d mask": (q, k, k, dict(attn_mask=lib.zeros(3, 1, 6))),
        "bool 3-d mask": (q, k, k, dict(attn_mask=lib.ones(1, 5, 6, dtype=lib.bool))),
        "1-d mask": (q, k, k, dict(attn_mask=lib.zeros(6))),
        "0-d mask": (q, k, k, dict(attn_mask=lib.tensor(0.0))),
        "1-d mask, dropout": (q, k, k, dict(attn_mask=lib.zeros(6), dropout_p=0.5)),
        "1-d mask, 3-d": (q[0], k[0], k[0], dict(attn_mask=lib.zeros(6))),
        "4-d mask, other heads": (q, k, k, dict(attn_mask=lib.zeros(2, 2, 5, 6))),
        "5-d mask": (q, k, k, dict(attn_mask=lib.zeros(1, 1, 1, 5, 6))),
    }


@pytest.mark.parametrize("case", list(_routing_cases(ndgrad)))
def test_sdpa_takes_pytorchs_kernel(case):
    """PyTorch's CPU dispatch (sdp_utils_cpp: use_flash_attention_cpp) picks the fused kernel or
    the math path by its checks in order: the graph's node (or the error: a mask of fewer than
    two dims raises where the check reads its size(-2), after the dropout, rank and head checks;
    the math path adds the mask in place) is PyTorch's."""
    out = []
    for lib in (ndgrad, torch):
        q, k, v, kw = _routing_cases(lib)[case]
        q, k, v = (x.detach().requires_grad_() for x in (q, k, v))
        try:
            y = lib.nn.functional.scaled_dot_product_attention(q, k, v, **kw)
        except Exception as e:   # noqa: BLE001 (compared below)
            out.append((type(e), str(e)))
            continue
        name = type(y.grad_fn).__name__ if lib is ndgrad else y.grad_fn.name()
        out.append((name, tuple(y.shape)))
    if case.startswith("empty"):   # (PyTorch's math path ends in an add there: same values)
        assert out[0][1] == out[1][1]
        return
    assert out[0] == out[1]


def test_sdpa_backend_flags_as_pytorch():
    """torch.backends' flags (sdpa_kernel): without flash the math path; without the math path
    and a case only it takes, PyTorch's error."""
    from ndgrad.nn.attention import sdpa_kernel, SDPBackend
    q = ndgrad.ones(2, 3, 5, 4, requires_grad=True)
    F = ndgrad.nn.functional
    with sdpa_kernel([SDPBackend.MATH]):
        assert type(F.scaled_dot_product_attention(q, q, q).grad_fn).__name__ == \
            "UnsafeViewBackward0"
        # (and no IndexError for a 1-d mask: the flash checks are not reached)
        F.scaled_dot_product_attention(q, q, q, attn_mask=ndgrad.zeros(5))
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        with pytest.raises(RuntimeError, match="No available kernel.  Aborting execution."):
            F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    assert type(F.scaled_dot_product_attention(q, q, q).grad_fn).__name__ == \
        "ScaledDotProductFlashAttentionForCpuBackward0"


def test_sdpa_mask_requiring_grad_takes_the_math_path():
    a = [R.standard_normal((2, 3, 5, 4)) for _ in range(3)]
    m = R.standard_normal((5, 5))
    ours = [ndgrad.tensor(x, requires_grad=True) for x in a + [m]]
    theirs = [torch.tensor(x, requires_grad=True) for x in a + [m]]
    y = ndgrad.nn.functional.scaled_dot_product_attention(*ours[:3], attn_mask=ours[3])
    yt = torch.nn.functional.scaled_dot_product_attention(*theirs[:3], attn_mask=theirs[3])
    _close(y, yt)
    _close(ndgrad.autograd.grad(y.sum(), ours[3])[0], torch.autograd.grad(yt.sum(), theirs[3])[0])


def test_sdpa_errors_as_pytorch():
    for lib in (ndgrad, torch):
        F = lib.nn.functional
        q = lib.ones(2, 4, 5, 8)
        with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when "
                                               "is_causal=True"):  # (the math path: 3-d)
            F.scaled_dot_product_attention(q[0], q[0], q[0], attn_mask=lib.ones(5, 5),
                                           is_causal=True)
        with pytest.raises(RuntimeError, match=r"Expected query, key, and value to have the same "
                                               r"dtype, but got query.dtype: float key.dtype: "
                                               r"double and value.dtype: float instead."):
            F.scaled_dot_product_attention(q, q.double(), q)
        with pytest.raises(RuntimeError, match=r"Expected attn_mask dtype to be bool or float or "
                                               r"to match query dtype, but got attn_mask.dtype: "
                                               r"double and  query.dtype: float instead."):
            F.scaled_dot_product_attention(q, q, q, attn_mask=lib.ones(5, 5).double())
        k3 = lib.ones(2, 3, 6, 8)
        with pytest.raises(RuntimeError, match="Number of heads in key and value must divide "
                                               "the number of heads in"):
            F.scaled_dot_product_attention(q, k3, k3, enable_gqa=True)
