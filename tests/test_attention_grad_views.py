"""Attention's gradients for q, k, v split from one projection (nanoGPT's attention) come back
as views of one array, and the split's backward hands that array on instead of a copy (Note
[Attention's gradients in one array] in ops/nn_ops.py): the same bits as the copy, and no
gradient anyone holds changes afterwards."""
import numpy as np
import pytest

import ndgrad
from ndgrad.ops import shape as S

F = ndgrad.nn.functional


def _attention(x, w, heads, hook=None):
    B, T, C = x.shape
    qkv = x @ w.T
    q, k, v = qkv.split(C, dim=2)
    if hook is not None:
        for t in (q, k, v):
            t.register_hook(hook)
    q, k, v = (t.view(B, T, heads, C // heads).transpose(1, 2) for t in (q, k, v))
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return qkv, y.transpose(1, 2).contiguous().view(B, T, C)


def _grads(shape, heads, seed=0, dtype=np.float32):
    B, T, C = shape
    r = np.random.default_rng(seed)
    x = ndgrad.tensor(r.standard_normal(shape).astype(dtype), requires_grad=True)
    w = ndgrad.tensor((r.standard_normal((3 * C, C)) * 0.2).astype(dtype), requires_grad=True)
    seen = []
    qkv, y = _attention(x, w, heads)
    qkv.register_hook(lambda g: seen.append(g))
    (y * y).sum().backward()
    return x.grad.numpy(), w.grad.numpy(), seen[0]


@pytest.mark.parametrize("shape,heads", [((16, 64, 128), 4), ((2, 8, 16), 2), ((1, 5, 12), 3)])
def test_split_backward_hands_on_attentions_array(shape, heads, monkeypatch):
    gx, gw, joined = _grads(shape, heads)
    assert joined._data.base is not None   # (a view of attention's array: no copy)
    monkeypatch.setattr(S, "_whole", lambda grads, dim: None)   # (the split's cat)
    cx, cw, copied = _grads(shape, heads)
    assert copied._data.base is None
    assert gx.tobytes() == cx.tobytes() and gw.tobytes() == cw.tobytes()
    assert joined.numpy().tobytes() == copied.numpy().tobytes()


def test_split_backward_matches_torch():
    torch = pytest.importorskip("torch")
    r = np.random.default_rng(3)
    xs, ws = r.standard_normal((2, 6, 8)), r.standard_normal((24, 8)) * 0.3
    got = []
    for lib in (ndgrad, torch):
        x, w = (lib.tensor(a, requires_grad=True) for a in (xs, ws))
        B, T, C = x.shape
        q, k, v = (x @ w.T).split(C, dim=2)
        q, k, v = (t.view(B, T, 2, C // 2).transpose(1, 2) for t in (q, k, v))
        y = lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        (y.sin()).sum().backward()
        got.append((x.grad.numpy(), w.grad.numpy()))
    for a, b in zip(*got):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_held_gradients_stay_as_they_were():
    # hooks keep q's, k's and v's gradients (views of one array); the projection's output also
    # feeds a second use, so its gradient is a sum: nothing may write into the held views
    r = np.random.default_rng(1)
    x = ndgrad.tensor(r.standard_normal((2, 8, 16)).astype(np.float32), requires_grad=True)
    w = ndgrad.tensor(r.standard_normal((48, 16)).astype(np.float32), requires_grad=True)
    held, copies = [], []

    def hook(g):
        held.append(g)
        copies.append(g.numpy().copy())
    qkv, y = _attention(x, w, 2, hook)
    ((y * y).sum() + (qkv * 3).sum()).backward()
    assert len(held) == 3
    for g, c in zip(held, copies):
        assert g.numpy().tobytes() == c.tobytes()


def test_double_backward_through_the_split():
    r = np.random.default_rng(2)
    x = ndgrad.tensor(r.standard_normal((1, 4, 6)), requires_grad=True)
    w = ndgrad.tensor(r.standard_normal((18, 6)) * 0.3, requires_grad=True)
    assert ndgrad.autograd.gradcheck(lambda x, w: _attention(x, w, 2)[1], (x, w))
    assert ndgrad.autograd.gradgradcheck(lambda x, w: _attention(x, w, 2)[1], (x, w))


def test_gradients_passed_in_as_slices_of_one_array_are_copied():
    # backward() given q's, k's and v's gradients as slices of the caller's own array: the
    # split's backward must not hand the caller's memory on (PyTorch's cat makes a new tensor)
    r = np.random.default_rng(4)
    base = ndgrad.tensor(r.standard_normal((2, 3, 12)).astype(np.float32), requires_grad=True)
    qkv = base * 1
    parts = qkv.split(4, dim=2)
    g = ndgrad.tensor(r.standard_normal((2, 3, 12)).astype(np.float32))
    seen = []
    qkv.register_hook(lambda t: seen.append(t))
    ndgrad.autograd.backward(list(parts), [g[:, :, 0:4], g[:, :, 4:8], g[:, :, 8:12]])
    assert not np.shares_memory(seen[0].numpy(), g.numpy())
    np.testing.assert_array_equal(base.grad.numpy(), g.numpy())
