"""nn.functional: gradcheck/gradgradcheck (float64), values against PyTorch, error messages."""
import numpy as np
import pytest

import ndgrad
import ndgrad.nn.functional as F
from ndgrad.autograd import gradcheck, gradgradcheck


def _t(*shape, seed=0, grad=True, scale=1.0):
    a = np.random.default_rng(seed).standard_normal(shape) * scale
    return ndgrad.tensor(a, dtype=ndgrad.float64, requires_grad=grad)


def _check(f, *inputs, second=True):
    assert gradcheck(f, inputs)
    if second:
        assert gradgradcheck(f, inputs)


# ---------------------------------------------------------------- gradients

def test_conv2d_grads():
    x, w, b = _t(1, 4, 4, 4), _t(4, 2, 3, 2, seed=1), _t(4, seed=2)
    _check(lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2),
                                    groups=2), x, w, b)


def test_conv2d_same_and_conv1d_grads():
    x, w = _t(1, 2, 4, 5), _t(3, 2, 2, 3, seed=1)
    _check(lambda x, w: F.conv2d(x, w, padding="same"), x, w)
    x1, w1 = _t(1, 2, 7), _t(4, 1, 3, seed=1)
    _check(lambda x, w: F.conv1d(x, w, stride=2, padding=1, groups=2), x1, w1)


def test_conv_transpose2d_grads():
    x, w, b = _t(1, 4, 3, 3), _t(4, 1, 3, 2, seed=1), _t(2, seed=2)
    _check(lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1,
                                              groups=2, dilation=(1, 2)), x, w, b)


def test_pool_grads():
    x = _t(2, 2, 5, 6)
    _check(lambda x: F.max_pool2d(x, 3, 2, padding=1, ceil_mode=True), x)
    _check(lambda x: F.max_pool2d(x, 2, 1, dilation=2), x)
    _check(lambda x: F.avg_pool2d(x, 3, 2, padding=1, ceil_mode=True,
                                  count_include_pad=False), x)
    _check(lambda x: F.adaptive_avg_pool2d(x, (3, 4)), x)
    _check(lambda x: F.max_pool1d(x, 2), _t(2, 3, 5))
    _check(lambda x: F.avg_pool1d(x, 2), _t(2, 3, 5))


def test_norm_grads():
    x = _t(3, 4, 2, 2)
    w, b = _t(4, seed=1), _t(4, seed=2)
    _check(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), x, w, b)
    _check(lambda x, w, b: F.group_norm(x, 2, w, b), x, w, b)
    _check(lambda x: F.layer_norm(x, (2, 2)), x)
    _check(lambda x: F.normalize(x, dim=1), _t(3, 4))


def test_loss_grads():
    x, y = _t(4, 3), _t(4, 3, seed=1)
    t = ndgrad.tensor([0, 2, 1, 2])
    w = ndgrad.tensor([0.5, 1.0, 2.0], dtype=ndgrad.float64)
    _check(lambda x: F.cross_entropy(x, t, weight=w, label_smoothing=0.1), x)
    _check(lambda x, y: F.cross_entropy(x, y.softmax(1)), x, y)
    _check(lambda x: F.nll_loss(F.log_softmax(x, 1), t, ignore_index=1), x)
    for reduction in ("mean", "sum", "none"):  # the gather/scatter path (no weight, none ignored)
        _check(lambda x: F.cross_entropy(x, t, reduction=reduction), x)
        _check(lambda x: F.nll_loss(x, t, reduction=reduction, ignore_index=3), x)
        _check(lambda x: F.cross_entropy(x[0], t[1], reduction=reduction), x)  # unbatched
    _check(lambda x, y: F.mse_loss(x, y) + F.l1_loss(x, y, reduction="sum"), x, y)
    _check(lambda x, y: F.soft_margin_loss(x, y, reduction="none"), x, y)
    pw, w2 = _t(3, seed=3, scale=0.3) + 1.5, _t(4, 3, seed=4)
    _check(lambda x, y, pw, w2: F.binary_cross_entropy_with_logits(
        x, y.sigmoid(), weight=w2, pos_weight=pw, reduction="sum"), x, y, pw, w2)
    _check(lambda x, y: F.smooth_l1_loss(x, y, beta=0.5) + F.huber_loss(x, y, delta=0.7), x, y)
    _check(lambda x, y: F.binary_cross_entropy_with_logits(
        x, y.sigmoid(), pos_weight=w), x, y)
    _check(lambda x, y: F.binary_cross_entropy(x.sigmoid(), y.sigmoid()), x, y)
    _check(lambda x, y: F.kl_div(F.log_softmax(x, 1), y.softmax(1), reduction="batchmean"),
           x, y)


def test_misc_grads():
    x = _t(1, 2, 3, 4)
    for mode in ("reflect", "replicate", "circular"):
        _check(lambda x: F.pad(x, (1, 2, 2, 1), mode=mode), x)
    _check(lambda x: F.pad(x, (1, -1, 0, 2), value=3.0), x)
    _check(lambda x: F.interpolate(x, size=(5, 7), mode="bilinear"), x)
    _check(lambda x: F.interpolate(x, scale_factor=2, mode="nearest"), x)
    e = _t(5, 3)
    idx = ndgrad.tensor([[0, 4], [4, 2]])
    _check(lambda e: F.embedding(idx, e), e)  # padding_idx deliberately breaks the Jacobian
    q, k, v = _t(2, 3, 4), _t(2, 5, 4, seed=1), _t(2, 5, 4, seed=2)
    _check(lambda q, k, v: F.scaled_dot_product_attention(q, k, v), q, k, v)
    _check(lambda x: F.gelu(x) + F.silu(x) + F.elu(x) + F.softplus(x), _t(5))


# ---------------------------------------------------------------- values against torch

@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def _both(torch, *arrays):
    return ([ndgrad.tensor(a) for a in arrays], [torch.tensor(a) for a in arrays])


@pytest.mark.parametrize("kw", [
    dict(size=(5, 7), mode="bilinear"), dict(size=(5, 7), mode="bilinear", align_corners=True),
    dict(scale_factor=1.5, mode="bilinear"), dict(size=(2, 3), mode="bilinear"),
    dict(size=(5, 7), mode="nearest"), dict(scale_factor=2, mode="nearest"),
    dict(size=(2, 3), mode="area"), dict(size=(7, 3), mode="nearest-exact"),
    dict(scale_factor=(2.5, 0.5), mode="nearest"), dict(size=(7, 3), mode="bicubic"),
    dict(scale_factor=1.7, mode="bicubic", align_corners=True),
])
def test_interpolate_matches_torch(torch, kw):
    a = np.random.default_rng(0).standard_normal((2, 3, 4, 5))
    (o,), (t,) = _both(torch, a)
    np.testing.assert_allclose(F.interpolate(o, **kw).numpy(),
                               torch.nn.functional.interpolate(t, **kw).numpy(), atol=1e-12)


def test_interpolate_linear_1d_matches_torch(torch):
    a = np.random.default_rng(0).standard_normal((2, 3, 6))
    (o,), (t,) = _both(torch, a)
    for kw in (dict(size=9, mode="linear"), dict(size=4, mode="linear", align_corners=True)):
        np.testing.assert_allclose(F.interpolate(o, **kw).numpy(),
                                   torch.nn.functional.interpolate(t, **kw).numpy(), atol=1e-12)


def test_interpolate_area_1d_3d_matches_torch(torch):
    rng = np.random.default_rng(0)
    for shape, size in (((2, 3, 7), 3), ((1, 2, 5, 4, 3), (2, 3, 2))):
        (o,), (t,) = _both(torch, rng.standard_normal(shape))
        np.testing.assert_allclose(
            F.interpolate(o, size=size, mode="area").numpy(),
            torch.nn.functional.interpolate(t, size=size, mode="area").numpy(), atol=1e-12)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_matches_torch(torch, mode):
    a = np.random.default_rng(0).standard_normal((2, 3, 4, 5))
    (o,), (t,) = _both(torch, a)
    p = (1, 2, 3, 0)
    np.testing.assert_array_equal(F.pad(o, p, mode=mode).numpy(),
                                  torch.nn.functional.pad(t, p, mode=mode).numpy())


def test_max_pool_indices_match_torch(torch):
    a = np.random.default_rng(0).standard_normal((2, 3, 7, 6))
    (o,), (t,) = _both(torch, a)
    vo, io = F.max_pool2d(o, 3, 2, 1, return_indices=True, ceil_mode=True)
    vt, it = torch.nn.functional.max_pool2d(t, 3, 2, 1, return_indices=True, ceil_mode=True)
    np.testing.assert_array_equal(vo.numpy(), vt.numpy())
    np.testing.assert_array_equal(io.numpy(), it.numpy())
    assert io.dtype is ndgrad.int64


def test_max_pool_index_rules_match_torch(torch):
    """PyTorch's choice of index: the first maximum, the last NaN, never the padding."""
    nan, inf = float("nan"), float("inf")
    cases = [
        (np.array([[nan, 1.0, 3.0, 4.0], [nan, 2.0, 5.0, 6.0]]), dict(kernel_size=2)),
        (np.array([[1.0, nan, 2.0], [nan, 7.0, nan], [0.0, 0.0, 0.0]]),
         dict(kernel_size=2, stride=1)),
        (np.array([[2.0, 2.0, 1.0], [2.0, 0.0, 2.0], [1.0, 2.0, 2.0]]),
         dict(kernel_size=2, stride=1)),                                  # ties: the first
        (np.full((3, 3), -inf), dict(kernel_size=2, padding=1)),          # all -inf
        (np.full((1, 3), -inf), dict(kernel_size=3, padding=1, dilation=2, ceil_mode=True)),
        (np.full((3, 5), -inf), dict(kernel_size=(3, 2), stride=2, padding=1, ceil_mode=True)),
    ]
    for a, kw in cases:
        (o,), (t,) = _both(torch, a[None, None])
        vo, io = F.max_pool2d(o, return_indices=True, **kw)
        vt, it = torch.nn.functional.max_pool2d(t, return_indices=True, **kw)
        np.testing.assert_array_equal(vo.numpy(), vt.numpy())
        np.testing.assert_array_equal(io.numpy(), it.numpy(), err_msg=str(kw))


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "float32"])
def test_max_pool_dtypes_match_torch(torch, dtype):
    a = np.random.default_rng(0).integers(0, 50, (2, 3, 7, 6)).astype(dtype)
    (o,), (t,) = _both(torch, a)
    for kw in (dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)):
        vo, io = F.max_pool2d(o, return_indices=True, **kw)
        vt, it = torch.nn.functional.max_pool2d(t, return_indices=True, **kw)
        assert vo.dtype is getattr(ndgrad, dtype)
        np.testing.assert_array_equal(vo.numpy(), vt.numpy())
        np.testing.assert_array_equal(io.numpy(), it.numpy())


@pytest.mark.parametrize("kw", [
    dict(kernel_size=2), dict(kernel_size=3, stride=1), dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=(2, 3), stride=(1, 2), dilation=(2, 1), ceil_mode=True),
])
def test_max_pool_grads_float32_match_torch(torch, kw):
    """Overlapping windows accumulate; float32 stays float32 through the scatter."""
    a = np.random.default_rng(0).standard_normal((2, 3, 9, 8)).astype(np.float32)
    o = ndgrad.tensor(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    vo, vt = F.max_pool2d(o, **kw), torch.nn.functional.max_pool2d(t, **kw)
    gy = np.random.default_rng(1).standard_normal(tuple(vt.shape)).astype(np.float32)
    (vo * ndgrad.tensor(gy)).sum().backward()
    (vt * torch.tensor(gy)).sum().backward()
    assert o.grad.dtype is ndgrad.float32
    np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-6, atol=1e-6)


def test_conv_float32_cnn_step_matches_torch(torch):
    """The W6 benchmark's step (conv, relu, pool, linear, cross-entropy) in float32."""
    rng = np.random.default_rng(6)
    arrays = [rng.standard_normal(s).astype(np.float32) / 3
              for s in ((4, 2, 10, 10), (3, 2, 3, 3), (3,), (5, 75))]
    y = np.array([0, 4, 2, 1])
    results = []
    for lib in (ndgrad, torch):
        x, w, b, wl = [lib.tensor(a, requires_grad=True) for a in arrays]
        tf = lib.nn.functional
        h = tf.max_pool2d(lib.relu(tf.conv2d(x, w, b, padding=1)), 2)
        loss = tf.cross_entropy(h.reshape(4, -1) @ wl.T, lib.tensor(y))
        loss.backward()
        results.append([loss.detach().numpy()] + [p.grad.numpy() for p in (x, w, b, wl)])
    for ro, rt in zip(*results):
        assert ro.dtype == np.float32
        np.testing.assert_allclose(ro, rt, rtol=1e-5, atol=1e-6)


def test_misc_values_match_torch(torch):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    (o, p), (t, u) = _both(torch, a, b)
    tf = torch.nn.functional
    np.testing.assert_allclose(F.cosine_similarity(o, p).numpy(),
                               tf.cosine_similarity(t, u).numpy(), atol=1e-12)
    np.testing.assert_allclose(F.normalize(o, p=1, dim=0).numpy(),
                               tf.normalize(t, p=1, dim=0).numpy(), atol=1e-12)
    np.testing.assert_array_equal(F.one_hot(ndgrad.tensor([0, 3, 1])).numpy(),
                                  tf.one_hot(torch.tensor([0, 3, 1])).numpy())
    np.testing.assert_allclose(F.softmax(o, 0).numpy(), tf.softmax(t, 0).numpy(), atol=1e-12)
    mask = rng.random((4, 4)) > 0.3
    np.fill_diagonal(mask, True)
    q = rng.standard_normal((2, 4, 3))
    (qo, mo), (qt, mt) = _both(torch, q, mask)
    np.testing.assert_allclose(
        F.scaled_dot_product_attention(qo, qo, qo, attn_mask=mo).numpy(),
        tf.scaled_dot_product_attention(qt, qt, qt, attn_mask=mt).numpy(), atol=1e-12)
    np.testing.assert_allclose(
        F.scaled_dot_product_attention(qo, qo, qo, is_causal=True).numpy(),
        tf.scaled_dot_product_attention(qt, qt, qt, is_causal=True).numpy(), atol=1e-12)


def test_conv_large_batch_is_chunked(monkeypatch):
    """The im2col buffer is bounded: a tiny budget must give the same result."""
    from ndgrad.ops import nn_ops
    x, w = _t(7, 3, 6, 6, grad=False), _t(4, 3, 3, 3, seed=1, grad=False)
    ref = F.conv2d(x, w).numpy()
    chunks = []
    real = nn_ops._chunks
    # (the flat windows of a sample: 27 taps x 4 rows x 6 columns, float64)
    monkeypatch.setattr(nn_ops, "_SCRATCH_MAX", 27 * 24 * 8 * 2)
    monkeypatch.setattr(nn_ops, "_chunks", lambda n, per, size: chunks.append(
        real(n, per, size)) or chunks[-1])
    np.testing.assert_allclose(F.conv2d(x, w).numpy(), ref, atol=1e-12)
    assert [len(c) for c in chunks] == [4]


def test_conv_scratch_is_per_thread():
    """The kernels' reusable scratch (im2col columns) must not be shared between threads."""
    import threading
    cases = [(_t(n, 8, 24 + n, 24, seed=n, grad=False), _t(16, 8, 3, 3, seed=9, grad=False))
             for n in range(1, 5)]
    refs = [F.conv2d(x, w, padding=1).numpy() for x, w in cases]
    bad = []

    def work(k):
        x, w = cases[k]
        for _ in range(30):
            if not np.array_equal(F.conv2d(x, w, padding=1).numpy(), refs[k]):
                bad.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(cases))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad


@pytest.mark.parametrize("stride", [(2, 1), (1, 1)])
def test_conv_chunked_grads_match_unchunked(monkeypatch, stride):
    """All three kernels of the convolution family give the same result in batch chunks (with
    stride 1 the flat windows of Note [Flat windows])."""
    from ndgrad.ops import nn_ops
    x, w = _t(5, 4, 6, 5), _t(6, 2, 3, 2, seed=1)

    def run():
        for p in (x, w):
            p.grad = None
        y = F.conv2d(x, w, None, stride, 1, (1, 2), 2)
        gx, gw = ndgrad.autograd.grad((y * y).sum(), (x, w), create_graph=True)
        (gx.sum() + (gw * gw).sum()).backward()
        return [a.detach().numpy() for a in (y, gx, gw, x.grad, w.grad)]

    ref = run()
    calls = []
    real = nn_ops._chunks
    monkeypatch.setattr(nn_ops, "_SCRATCH_MAX", 2 * 2 * 6 * 5 * 8)
    monkeypatch.setattr(nn_ops, "_chunks", lambda n, per, size: calls.append(
        len(real(n, per, size))) or real(n, per, size))
    for a, b in zip(run(), ref):
        np.testing.assert_allclose(a, b, atol=1e-12)
    assert max(calls) > 1


# ---------------------------------------------------------------- errors

def _err(torch, f_ours, f_torch):
    with pytest.raises(Exception) as et:
        f_torch(torch)
    with pytest.raises(type(et.value)) as eo:
        f_ours()
    assert str(eo.value) == str(et.value)


def test_error_messages_match_torch(torch):
    tf = torch.nn.functional
    x2 = np.zeros((28, 28))
    _err(torch, lambda: ndgrad.nn.Conv2d(1, 6, 5)(ndgrad.tensor(x2, dtype=ndgrad.float32)),
         lambda t: t.nn.Conv2d(1, 6, 5)(t.tensor(x2, dtype=t.float32)))
    _err(torch, lambda: ndgrad.nn.Conv2d(1, 6, 5)(ndgrad.zeros(1, 3, 8, 8)),
         lambda t: t.nn.Conv2d(1, 6, 5)(t.zeros(1, 3, 8, 8)))
    _err(torch, lambda: ndgrad.nn.Linear(4, 5)(ndgrad.zeros(2, 3)),
         lambda t: t.nn.Linear(4, 5)(t.zeros(2, 3)))
    _err(torch, lambda: F.cross_entropy(ndgrad.zeros(2, 3), ndgrad.tensor([0, 10])),
         lambda t: tf.cross_entropy(t.zeros(2, 3), t.tensor([0, 10])))
    _err(torch, lambda: F.cross_entropy(ndgrad.zeros(2, 3), ndgrad.tensor([0, 1, 1])),
         lambda t: tf.cross_entropy(t.zeros(2, 3), t.tensor([0, 1, 1])))
    _err(torch, lambda: F.dropout(ndgrad.zeros(2), 1.5), lambda t: tf.dropout(t.zeros(2), 1.5))
    _err(torch, lambda: ndgrad.nn.BatchNorm1d(3)(ndgrad.zeros(1, 3)),
         lambda t: t.nn.BatchNorm1d(3)(t.zeros(1, 3)))
    _err(torch, lambda: F.max_pool2d(ndgrad.zeros(1, 1, 4, 4), 2, padding=2),
         lambda t: tf.max_pool2d(t.zeros(1, 1, 4, 4), 2, padding=2))
    _err(torch, lambda: F.conv2d(ndgrad.zeros(1, 1, 4, 4), ndgrad.zeros(1, 1, 3, 3), stride=2,
                                 padding="same"),
         lambda t: tf.conv2d(t.zeros(1, 1, 4, 4), t.zeros(1, 1, 3, 3), stride=2,
                             padding="same"))
    _err(torch, lambda: F.conv2d(ndgrad.zeros(1, 1, 2, 2), ndgrad.zeros(1, 1, 3, 3)),
         lambda t: tf.conv2d(t.zeros(1, 1, 2, 2), t.zeros(1, 1, 3, 3)))
    _err(torch, lambda: F.max_pool2d(ndgrad.zeros(5), 2), lambda t: tf.max_pool2d(t.zeros(5), 2))
    _err(torch, lambda: F.layer_norm(ndgrad.zeros(2, 3), (4,)),
         lambda t: tf.layer_norm(t.zeros(2, 3), (4,)))
    _err(torch, lambda: F.embedding(ndgrad.tensor([5]), ndgrad.zeros(3, 2)),
         lambda t: tf.embedding(t.tensor([5]), t.zeros(3, 2)))
    _err(torch, lambda: F.pad(ndgrad.zeros(2, 3), (1,)), lambda t: tf.pad(t.zeros(2, 3), (1,)))


@pytest.mark.parametrize("name, shape", [
    ("max_pool2d", (2, 0, 4, 4)), ("max_pool2d", (0, 4, 4)), ("max_pool2d", (2, 3, 0, 4)),
    ("max_pool2d", (5,)), ("max_pool2d", (2, 3, 4, 5, 6)), ("avg_pool2d", (2, 0, 4, 4)),
    ("avg_pool2d", (0, 4, 4)), ("max_pool1d", (2, 0, 5)), ("max_pool1d", (0, 5)),
    ("max_pool1d", (5,)), ("avg_pool1d", (2, 0, 5)), ("avg_pool1d", (5,)),
])
def test_pool_empty_or_bad_input_errors_match_torch(torch, name, shape):
    _err(torch, lambda: getattr(F, name)(ndgrad.zeros(shape), 1),
         lambda t: getattr(t.nn.functional, name)(t.zeros(shape), 1))


@pytest.mark.parametrize("name", ["max_pool2d", "avg_pool2d", "max_pool1d", "avg_pool1d"])
def test_pool_and_conv_empty_batch(torch, name):
    """Only the batch may be empty; it flows through forward and backward."""
    shape = (0, 2, 5) if name.endswith("1d") else (0, 2, 4, 5)
    x = ndgrad.zeros(shape, requires_grad=True)
    y = getattr(F, name)(x, 2)
    assert tuple(y.shape) == tuple(getattr(torch.nn.functional, name)(torch.zeros(shape), 2).shape)
    y.sum().backward()
    assert tuple(x.grad.shape) == shape
    w = ndgrad.ones((3, 2) + (3,) * (len(shape) - 2), requires_grad=True)
    conv = F.conv1d if name.endswith("1d") else F.conv2d
    c = conv(x, w, padding=1)
    assert tuple(c.shape) == (0, 3) + shape[2:]
    c.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.zeros(w.shape))


def test_more_error_messages_match_torch(torch):
    tf = torch.nn.functional
    _err(torch, lambda: ndgrad.nn.Linear(4, 5)(ndgrad.zeros(3)),
         lambda t: t.nn.Linear(4, 5)(t.zeros(3)))
    _err(torch, lambda: ndgrad.nn.Linear(4, 5)(ndgrad.zeros(2, 5, 3)),
         lambda t: t.nn.Linear(4, 5)(t.zeros(2, 5, 3)))
    _err(torch, lambda: ndgrad.nn.Linear(4, 5)(ndgrad.zeros(2, 4, dtype=ndgrad.float64)),
         lambda t: t.nn.Linear(4, 5)(t.zeros(2, 4, dtype=t.float64)))
    _err(torch, lambda: ndgrad.nn.LSTM(3, 4)(ndgrad.zeros(2, 3, 3, 3)),
         lambda t: t.nn.LSTM(3, 4)(t.zeros(2, 3, 3, 3)))
    _err(torch, lambda: ndgrad.nn.GRU(3, 4)(ndgrad.zeros(2, 3, 5)),
         lambda t: t.nn.GRU(3, 4)(t.zeros(2, 3, 5)))
    _err(torch, lambda: ndgrad.nn.BatchNorm2d(3)(ndgrad.zeros(2, 3)),
         lambda t: t.nn.BatchNorm2d(3)(t.zeros(2, 3)))
    _err(torch, lambda: F.nll_loss(ndgrad.zeros(2, 3), ndgrad.tensor([0.0, 1.0])),
         lambda t: tf.nll_loss(t.zeros(2, 3), t.tensor([0.0, 1.0])))
    _err(torch, lambda: F.binary_cross_entropy(ndgrad.tensor([1.5]), ndgrad.tensor([1.0])),
         lambda t: tf.binary_cross_entropy(t.tensor([1.5]), t.tensor([1.0])))
    _err(torch, lambda: F.conv2d(ndgrad.zeros(1, 4, 5, 5), ndgrad.zeros(6, 2, 3, 3), groups=4),
         lambda t: tf.conv2d(t.zeros(1, 4, 5, 5), t.zeros(6, 2, 3, 3), groups=4))
    _err(torch, lambda: ndgrad.nn.Module().register_parameter("x", ndgrad.ones(1)),
         lambda t: t.nn.Module().register_parameter("x", t.ones(1)))


def test_unfold_embedding_max_norm_match_torch(torch):
    a = np.random.default_rng(0).standard_normal((2, 3, 5, 4))
    (o,), (t,) = _both(torch, a)
    np.testing.assert_allclose(F.unfold(o, (2, 3), padding=1, stride=2).numpy(),
                               torch.nn.functional.unfold(t, (2, 3), padding=1,
                                                          stride=2).numpy(), atol=1e-12)
    w = np.random.default_rng(1).standard_normal((6, 3)) * 2
    (wo,), (wt,) = _both(torch, w)
    idx = np.array([0, 2, 2, 5])
    eo = F.embedding(ndgrad.tensor(idx), wo, max_norm=1.0)
    et = torch.nn.functional.embedding(torch.tensor(idx), wt, max_norm=1.0)
    np.testing.assert_allclose(eo.numpy(), et.numpy(), atol=1e-12)
    np.testing.assert_allclose(wo.numpy(), wt.numpy(), atol=1e-12)  # renormed in place


_LOSS_CASES = {  # (these gave silently wrong results: full= and swap= ignored, ATen's formulas)
    "hinge": lambda L, F, x, y: F.hinge_embedding_loss(x, L.tensor([[1., -1., 1., -1., 1.]] * 4)),
    "hinge_other_targets": lambda L, F, x, y: F.hinge_embedding_loss(x, L.full((4, 5), 0.5)),
    "cosine_embedding": lambda L, F, x, y: F.cosine_embedding_loss(x, y, L.tensor([1., -1., 1., -1.])),
    "cosine_embedding_other_targets": lambda L, F, x, y: F.cosine_embedding_loss(
        x, y, L.tensor([1., -1., 1., 0.5])),
    "kl_div_negative_target": lambda L, F, x, y: F.kl_div(
        x, L.tensor([[-1., 0.5, 0.2, 0.1, 0.3]] * 4), reduction="sum"),
    "kl_div_batchmean": lambda L, F, x, y: F.kl_div(x, y.exp(), reduction="batchmean"),
    "poisson_full": lambda L, F, x, y: F.poisson_nll_loss(x.exp(), y.exp() * 3, log_input=False,
                                                         full=True),
    "poisson_full_log": lambda L, F, x, y: F.poisson_nll_loss(x, y.exp() * 3, full=True,
                                                             reduction="none"),
    "triplet_swap": lambda L, F, x, y: F.triplet_margin_loss(x, y, x * 0.5 + y, swap=True),
    "margin_ranking": lambda L, F, x, y: F.margin_ranking_loss(x, y, L.ones(4, 5), 0.3,
                                                               reduction="sum"),
    "group_norm_empty_batch": lambda L, F, x, y: F.group_norm(x[:0].reshape(0, 4, 5), 2),
}


@pytest.mark.parametrize("name", sorted(_LOSS_CASES))
def test_losses_match_pytorch(name):
    torch = pytest.importorskip("torch")
    r = np.random.default_rng(0)
    a, b = r.standard_normal((4, 5)), r.standard_normal((4, 5))
    out = []
    for L in (torch, ndgrad):
        x, y = L.tensor(a, requires_grad=True), L.tensor(b)
        loss = _LOSS_CASES[name](L, L.nn.functional, x, y)
        loss.sum().backward()
        out.append((loss.detach().numpy(), x.grad.numpy()))
    for t, n in zip(*out):
        np.testing.assert_allclose(n, t, rtol=1e-10, atol=1e-12)


def test_poisson_full_and_triplet_swap_gradients():
    x = ndgrad.tensor(np.linspace(0.2, 2.0, 6), requires_grad=True)
    t = ndgrad.tensor([0.0, 1.0, 2.0, 3.5, 5.0, 0.5])
    for f in (lambda x: F.poisson_nll_loss(x, t, log_input=False, full=True),
              lambda x: F.triplet_margin_loss(x.reshape(2, 3), x.reshape(2, 3) * 0.5,
                                              x.reshape(2, 3).flip(1), swap=True)):
        assert gradcheck(f, (x,)) and gradgradcheck(f, (x,))


# ---------------------------------------------------------------- random configurations

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies


@hypothesis.settings(max_examples=30, deadline=None)
@hypothesis.given(n=st.integers(1, 2), g=st.integers(1, 2), cg=st.integers(1, 2),
                  og=st.integers(1, 2), h=st.integers(1, 7), w=st.integers(1, 7),
                  kh=st.integers(1, 3), kw=st.integers(1, 3), s=st.tuples(st.integers(1, 3),
                                                                           st.integers(1, 3)),
                  p=st.tuples(st.integers(0, 2), st.integers(0, 2)),
                  d=st.tuples(st.integers(1, 2), st.integers(1, 2)), bias=st.booleans())
def test_conv2d_random_configs_match_torch(torch, n, g, cg, og, h, w, kh, kw, s, p, d, bias):
    hypothesis.assume(h + 2 * p[0] >= d[0] * (kh - 1) + 1 and w + 2 * p[1] >= d[1] * (kw - 1) + 1)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, g * cg, h, w))
    wt = rng.standard_normal((g * og, cg, kh, kw))
    b = rng.standard_normal(g * og) if bias else None
    xo, wo = ndgrad.tensor(x, requires_grad=True), ndgrad.tensor(wt, requires_grad=True)
    xt, wtt = torch.tensor(x, requires_grad=True), torch.tensor(wt, requires_grad=True)
    bo = ndgrad.tensor(b, requires_grad=True) if bias else None
    bt = torch.tensor(b, requires_grad=True) if bias else None
    yo = F.conv2d(xo, wo, bo, s, p, d, g)
    yt = torch.nn.functional.conv2d(xt, wtt, bt, s, p, d, g)
    np.testing.assert_allclose(yo.detach().numpy(), yt.detach().numpy(), atol=1e-10)
    gy = rng.standard_normal(tuple(yt.shape))
    (yo * ndgrad.tensor(gy)).sum().backward()
    (yt * torch.tensor(gy)).sum().backward()
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(wo.grad.numpy(), wtt.grad.numpy(), atol=1e-10)
    # the transposed convolution of the same configuration
    op = (min(s[0], d[0]) - 1, min(s[1], d[1]) - 1)
    size = [(i - 1) * ss - 2 * pp + dd * (kk - 1) + oo + 1 for i, ss, pp, dd, kk, oo in zip(
        yt.shape[2:], s, p, d, (kh, kw), op)]
    if min(size) <= 0:
        _err(torch, lambda: F.conv_transpose2d(yo, wo, None, s, p, op, g, d),
             lambda t: t.nn.functional.conv_transpose2d(yt, wtt, None, s, p, op, g, d))
        return
    to = F.conv_transpose2d(yo.detach(), wo.detach(), None, s, p, op, g, d)
    tt = torch.nn.functional.conv_transpose2d(yt.detach(), wtt.detach(), None, s, p, op, g, d)
    np.testing.assert_allclose(to.numpy(), tt.numpy(), atol=1e-10)


@hypothesis.settings(max_examples=30, deadline=None)
@hypothesis.given(h=st.integers(1, 8), w=st.integers(1, 8), k=st.integers(1, 3),
                  s=st.integers(1, 3), p=st.integers(0, 1), d=st.integers(1, 2),
                  ceil=st.booleans(), incl=st.booleans())
def test_pool_random_configs_match_torch(torch, h, w, k, s, p, d, ceil, incl):
    hypothesis.assume(2 * p <= k and h + 2 * p >= d * (k - 1) + 1
                      and w + 2 * p >= d * (k - 1) + 1)
    x = np.random.default_rng(1).standard_normal((2, 2, h, w))
    (o,), (t,) = _both(torch, x)
    tf = torch.nn.functional
    vo, io = F.max_pool2d(o, k, s, p, d, ceil, return_indices=True)
    vt, it = tf.max_pool2d(t, k, s, p, d, ceil, return_indices=True)
    np.testing.assert_array_equal(vo.numpy(), vt.numpy())
    np.testing.assert_array_equal(io.numpy(), it.numpy())  # also a window wholly in padding
    if h + 2 * p >= k and w + 2 * p >= k:
        np.testing.assert_allclose(F.avg_pool2d(o, k, s, p, ceil, incl).numpy(),
                                   tf.avg_pool2d(t, k, s, p, ceil, incl).numpy(), atol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("labels,ignore_index", [
    ([0, 1, 2, 1, 3], -100),      # every target counts (nll_loss's one-hot fast path)
    ([0, 1, 2, 1, -100], -100),   # one ignored with the default index: out of the mean
    ([0, 1, 2, 1, 2], 2),         # an in-range index to ignore
    ([-100, -100], -100),         # all ignored: nan mean, as PyTorch
])
def test_class_index_losses_with_ignored_targets_match_torch(labels, ignore_index, reduction):
    torch = pytest.importorskip("torch")
    r = np.random.default_rng(3)
    x0 = r.standard_normal((len(labels), 4))
    out = []
    for L in (ndgrad, torch):
        x = L.tensor(x0, requires_grad=True)
        t = L.tensor(labels)
        ce = L.nn.functional.cross_entropy(x, t, ignore_index=ignore_index, reduction=reduction)
        nll = L.nn.functional.nll_loss(L.log_softmax(x, 1), t, ignore_index=ignore_index,
                                       reduction=reduction)
        (ce.sum() + nll.sum() * 0.5).backward()
        out.append([ce.detach().numpy(), nll.detach().numpy(), x.grad.numpy()])
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15, equal_nan=True)


@pytest.mark.parametrize("fn", ["log_softmax", "softmax"])
def test_softmax_rows_with_infinities_and_nan_match_torch(fn):
    torch = pytest.importorskip("torch")
    inf, nan = float("inf"), float("nan")
    rows = [[inf, 1.0, 0.0], [-inf, -inf, -inf], [nan, 1.0, 2.0], [-inf, 0.0, 3.0],
            [inf, inf, 0.0], [1.0, 2.0, 3.0]]
    for dim in (0, 1):
        a = getattr(F, fn)(ndgrad.tensor(rows), dim).numpy()
        b = getattr(torch, fn)(torch.tensor(rows), dim).numpy()
        np.testing.assert_allclose(a, b, rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("labels, ignore", [([0, 2, 1], -100), ([0, -100, 1], -100),
                                            ([0, 2, 2], 2)])
def test_cross_entropy_graph_matches_torch_on_every_path(labels, ignore, monkeypatch):
    # the common case (class indices in range) and the general one (an ignored target) build
    # PyTorch's graph, log_softmax computed once
    torch = pytest.importorskip("torch")
    import ndgrad.nn.functional as nF
    calls = []
    for name in ("_log_softmax", "log_softmax"):
        f = getattr(nF, name)
        monkeypatch.setattr(nF, name, lambda *a, _f=f, **k: calls.append(1) or _f(*a, **k))

    def nodes(loss):
        names, stack, seen = [], [loss.grad_fn], set()
        while stack:
            n = stack.pop()
            if n is None or id(n) in seen:
                continue
            seen.add(id(n))
            names.append(type(n).__name__)
            stack.extend(f for f, _ in n.next_functions)
        return sorted(names)

    x0 = np.random.default_rng(0).standard_normal((3, 3))
    out = []
    for L in (ndgrad, torch):
        x = L.tensor(x0, requires_grad=True)
        loss = L.nn.functional.cross_entropy(x, L.tensor(labels), ignore_index=ignore)
        loss.backward()
        out.append((nodes(loss), loss.item(), x.grad.numpy()))
    assert out[0][0] == out[1][0] and len(calls) == 1
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-12)
    np.testing.assert_allclose(out[0][2], out[1][2], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("shape, pad, mode", [
    ((1, 1, 0), (2, 2), "reflect"), ((0, 1, 3), (1, 1), "reflect"),
    ((1, 0, 3), (1, 1), "reflect"), ((1, 1, 0), (1, 1), "replicate"), ((1, 0), (1, 1), "reflect"),
    ((1, 1, 0, 3), (1, 1, 1, 1), "reflect"), ((0, 3), (1, 1), "reflect"),
    ((2, 0, 4), (1, 1), "replicate"), ((0, 2, 4), (1, 2), "replicate"),
])
def test_reflect_and_replicate_pad_of_empty_inputs_match_torch(shape, pad, mode):
    torch = pytest.importorskip("torch")
    out = []
    for L in (ndgrad, torch):
        try:
            out.append(tuple(L.nn.functional.pad(L.zeros(*shape), pad, mode).shape))
        except RuntimeError as e:
            out.append(str(e))
    assert out[0] == out[1]



def test_grid_sample_5d_matches_pytorch_and_warns_at_the_callers_line():
    torch = pytest.importorskip("torch")
    import warnings
    r = np.random.default_rng(0)
    a, gr = r.standard_normal((2, 3, 4, 5, 6)), r.uniform(-1.2, 1.2, (2, 3, 2, 4, 3))
    for mode in ("bilinear", "nearest"):
        for pad in ("zeros", "border", "reflection"):
            out = []
            for L in (torch, ndgrad):
                x = L.tensor(a, requires_grad=True)
                y = L.nn.functional.grid_sample(x, L.tensor(gr), mode, pad, True)
                y.sum().backward()
                out.append((y.detach().numpy(), x.grad.numpy()))
            for t, n in zip(*out):
                np.testing.assert_allclose(n, t, rtol=1e-10, atol=1e-12)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        F.grid_sample(ndgrad.ones(1, 1, 2, 2), ndgrad.zeros(1, 1, 1, 2))
    assert w[0].filename == __file__
