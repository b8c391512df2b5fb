"""Note [Attention's kept probabilities] (ops/nn_ops.py): the fused attention's backward takes
P^T from its forward instead of computing it again, with the bits of the computed one, over
masks, grouped heads, dtypes, layouts and thread counts; it computes them again where the
holder does not belong to its inputs, above the size cap, and for the ATen op called alone."""
import numpy as np
import pytest

import ndgrad
from ndgrad.autograd import gradcheck, gradgradcheck
from ndgrad.ops import nn_ops as K

F = ndgrad.nn.functional
R = np.random.default_rng(11)


@pytest.fixture
def scores(monkeypatch):
    """The calls that compute attention scores (forward or backward), counted."""
    counted = []
    f = K._sdpa_scores
    monkeypatch.setattr(K, "_sdpa_scores", lambda *a, **k: counted.append(1) or f(*a, **k))
    return counted


def _inputs(b, hq, hk, L, S, d, dtype, heads_inside):
    if heads_inside:   # (nanoGPT's layout: heads split from one projection by view, transpose)
        qkv = ndgrad.tensor(R.standard_normal((b, L, 3 * hq * d))).to(dtype)
        q, k, v = qkv.split(hq * d, dim=2)
        return [t.reshape(b, L, hq, d).transpose(1, 2).detach().requires_grad_()
                for t in (q, k, v)]
    return [ndgrad.tensor(R.standard_normal(s)).to(dtype).requires_grad_()
            for s in ((b, hq, L, d), (b, hk, S, d), (b, hk, S, d))]


CASES = [  # b, hq, hk, L, S, d, causal, mask, heads_inside
    (16, 4, 4, 64, 64, 32, True, None, True),      # GPT's (split over heads on two threads)
    (1, 8, 8, 128, 128, 16, True, None, False),    # one batch: pieces of the flattened heads
    (2, 3, 3, 5, 7, 4, False, "2d", False),
    (2, 3, 3, 6, 6, 4, True, "4d", False),
    (2, 4, 2, 5, 9, 8, False, None, False),        # grouped heads (enable_gqa)
    (3, 2, 2, 1, 1, 8, True, None, False),
]


def _grads(case, dtype, keep, threads, monkeypatch):
    b, hq, hk, L, S, d, causal, mask, inside = case
    if not keep:
        monkeypatch.setattr(K, "_KEEP_MAX", -1)
    prev = ndgrad.get_num_threads()
    ndgrad.set_num_threads(threads)
    try:
        q, k, v = _inputs(b, hq, hk, L, S, d, dtype, inside)
        m = None
        if mask == "2d":
            m = ndgrad.tensor(R.standard_normal((L, S))).to(dtype)
        elif mask == "4d":
            m = ndgrad.tensor(R.random((b, 1, L, S)) < 0.8)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=causal,
                                           enable_gqa=hq != hk)
        assert y.grad_fn.name() == "ScaledDotProductFlashAttentionForCpuBackward0"
        assert (y.grad_fn._saved_probs is not None) == keep
        y.backward(ndgrad.tensor(R.standard_normal(y.shape)).to(dtype))
        return [t.grad.float().numpy() for t in (q, k, v)]
    finally:
        ndgrad.set_num_threads(prev)
        monkeypatch.undo()


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_kept_probabilities_give_the_computed_bits(case, dtype, threads, monkeypatch):
    dt = getattr(ndgrad, dtype)
    state = R.bit_generator.state
    kept = _grads(case, dt, True, threads, monkeypatch)
    R.bit_generator.state = state   # (the same inputs again)
    computed = _grads(case, dt, False, threads, monkeypatch)
    for a, c in zip(kept, computed):
        np.testing.assert_array_equal(a, c)


def test_backward_takes_the_probabilities_from_the_forward(scores):
    q, k, v = _inputs(16, 4, 4, 64, 64, 32, ndgrad.float32, True)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    forward = len(scores)
    assert forward >= 1
    y.sum().backward()
    assert len(scores) == forward         # none in the backward
    with ndgrad.no_grad():                # (nothing to differentiate: no holder)
        assert F.scaled_dot_product_attention(q, k, v, is_causal=True).grad_fn is None
    # the ATen backward called alone computes them
    out, lse = ndgrad.ops.aten._scaled_dot_product_flash_attention_for_cpu(
        q.detach(), k.detach(), v.detach(), 0.0, True) if hasattr(
        ndgrad.ops.aten, "_scaled_dot_product_flash_attention_for_cpu") else K.sdpa_flash(
        q.detach(), k.detach(), v.detach(), 0.0, True, None, 32 ** -0.5)
    scores.clear()
    K.sdpa_flash_backward(ndgrad.ones_like(out), q.detach(), k.detach(), v.detach(), out, lse,
                          0.0, True, None, 32 ** -0.5)
    assert scores


def test_large_inputs_keep_pytorchs_footprint(monkeypatch, scores):
    # (above the cap no holder: the node keeps logsumexp alone, as PyTorch's)
    monkeypatch.setattr(K, "_KEEP_MAX", 1000)
    q, k, v = _inputs(2, 2, 2, 32, 32, 8, ndgrad.float32, False)
    y = F.scaled_dot_product_attention(q, k, v)
    assert y.grad_fn._saved_probs is None
    forward = len(scores)
    y.sum().backward()
    assert len(scores) > forward
    q, k, v = _inputs(1, 1, 1, 25, 40, 8, ndgrad.float32, False)   # (at the cap: a holder)
    assert F.scaled_dot_product_attention(q, k, v).grad_fn._saved_probs is not None


def test_holder_belongs_to_its_inputs():
    q, k, v = _inputs(2, 2, 2, 6, 6, 4, ndgrad.float64, False)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    probs = y.grad_fn._saved_probs
    assert probs.of(q._data, k._data) is probs.pt
    assert probs.of(q._data.copy(), k._data) is None and probs.of(q._data, v._data) is None


def test_retained_graph_and_double_backward():
    q, k, v = _inputs(2, 2, 2, 5, 5, 4, ndgrad.float64, False)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    g = ndgrad.tensor(R.standard_normal(y.shape))
    first = ndgrad.autograd.grad(y, (q, k, v), g, retain_graph=True)
    again = ndgrad.autograd.grad(y, (q, k, v), g)   # (the kept P^T was only read)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a.numpy(), b.numpy())

    def f(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert gradcheck(f, (q, k, v))
    assert gradgradcheck(f, (q, k, v))


def test_gradients_are_pytorchs():
    torch = pytest.importorskip("torch")
    q, k, v = _inputs(16, 4, 4, 64, 64, 32, ndgrad.float32, True)
    g = R.standard_normal((16, 4, 64, 32)).astype(np.float32)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    y.backward(ndgrad.tensor(g))
    tq, tk, tv = (torch.tensor(t.detach().numpy()).requires_grad_() for t in (q, k, v))
    torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=True).backward(
        torch.tensor(g))
    for a, b in ((q, tq), (k, tk), (v, tv)):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_kept_probabilities_are_freed_with_the_saved_tensors():
    import gc
    import weakref
    q, k, v = _inputs(2, 2, 2, 8, 8, 4, ndgrad.float32, False)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    kept = weakref.ref(y.grad_fn._saved_probs.pt)
    y.sum().backward(retain_graph=True)
    assert kept() is not None
    y.sum().backward()          # (y, and so its node, still alive: the saved values are not)
    gc.collect()
    assert kept() is None
