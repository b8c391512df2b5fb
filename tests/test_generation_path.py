"""The small-tensor no_grad path generation runs (issue 34): apply's fast paths for a Tensor
third argument, tuple and string arguments and four or more arguments give what the general
path gives (values, dtypes, views, graphs, autograd.explain's sites), the small-array kernels
give the large-array kernels' bits, and attention's output is laid out as PyTorch's."""
import numpy as np
import pytest

import ndgrad
from ndgrad.autograd.explain import explain
from ndgrad.ops import activation as A
from ndgrad.ops import nn_ops as K
from ndgrad.ops import _registry as R

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(34)


def _f32(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def test_gelu_small_arrays_give_the_large_path_bits():
    """A small float32 array takes the passes without scratch slots and with float32 constants:
    each element is what the same element gives inside an array past the small size."""
    x = _f32(4 * A._GELU_SMALL // 4, scale=3.0)
    x[:6] = [np.nan, np.inf, -np.inf, 0.0, -0.0, -30.0]
    assert not A._gelu_small(x)
    big = A._gelu_fwd(np, x, "none")
    g = _f32(x.size)
    big_grad = A._gelu_backward_fwd(np, g, x, "none")
    for lo, hi in ((0, 7), (0, 512), (1000, 13000), (x.size - 5, x.size)):
        part = x[lo:hi].copy()
        assert A._gelu_small(part)
        assert A._gelu_fwd(np, part, "none").tobytes() == big[lo:hi].tobytes()
        assert A._gelu_backward_fwd(np, g[lo:hi].copy(), part, "none").tobytes() == \
            big_grad[lo:hi].tobytes()


def test_layer_norm_rows_apart_give_the_same_bits():
    x = _f32(7, 24, 128)
    w, b = _f32(128), _f32(128)
    whole = K._ln_fwd(np, x, (128,), w, b, 1e-5)
    for i in range(7):
        part = K._ln_fwd(np, x[i:i + 1], (128,), w, b, 1e-5)
        for p, q in zip(part, whole):
            assert p.tobytes() == q[i:i + 1].tobytes()


@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_attention_output_laid_out_as_pytorch(batch, dtype):
    """Heads split from one projection (nanoGPT's view and transpose): PyTorch's output keeps
    the query's (batch, length, heads, dim) layout, so transpose(1, 2).contiguous() is no copy;
    a contiguous query gives a contiguous output."""
    y = RNG.standard_normal((batch, 24, 384))
    outs = []
    for lib in (ndgrad, torch):
        t = lib.tensor(y, dtype=getattr(lib, dtype))
        q, k, v = (s.view(batch, 24, 4, 32).transpose(1, 2) for s in t.split(128, 2))
        o = lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        c = lib.nn.functional.scaled_dot_product_attention(q.contiguous(), k, v)
        outs.append((o, c))
    (o, c), (ot, ct) = outs
    assert o.stride() == ot.stride() and c.stride() == ct.stride()
    assert o.transpose(1, 2).is_contiguous()
    np.testing.assert_allclose(o.numpy(), ot.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c.numpy(), ct.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("batch", [1, 16])
def test_attention_gradients_laid_out_as_pytorch(batch, threads):
    """PyTorch's CPU attention backward hands its three gradients on laid out as (batch,
    length, heads, dim) whatever the inputs' layout: for heads split from one projection their
    transpose back is contiguous (the view backward then copies nothing). The same for the
    kernel whole and split over the heads (16 x 4 heads of 64 x 32), for a contiguous query, a
    mask, grouped heads and float64; leaves' .grad keep their own layout."""
    y = RNG.standard_normal((batch, 64, 384))
    mask = RNG.standard_normal((64, 64))
    seen, grads = [], []
    for lib in (ndgrad, torch):
        before = lib.get_num_threads()
        lib.set_num_threads(threads)
        try:
            t = lib.tensor(y, dtype=lib.float32, requires_grad=True)
            q, k, v = (s.view(batch, 64, 4, 32).transpose(1, 2) for s in t.split(128, 2))
            qc = q.detach().contiguous().requires_grad_()
            k2 = lib.tensor(y[:, :, :64], dtype=lib.float32, requires_grad=True).view(
                batch, 64, 2, 32).transpose(1, 2)
            q64 = q.detach().double().contiguous().requires_grad_()
            strides = {}
            for name, x in (("q", q), ("k", k), ("v", v), ("qc", qc), ("k2", k2), ("q64", q64)):
                x.register_hook(lambda g, name=name: strides.__setitem__(name, g.stride()))
            sdpa = lib.nn.functional.scaled_dot_product_attention
            outs = [sdpa(q, k, v, is_causal=True), sdpa(qc, k, v),
                    sdpa(q, k2, k2, attn_mask=lib.tensor(mask, dtype=lib.float32),
                         enable_gqa=True),
                    sdpa(q64, q64, q64).float()]
            sum((o * o).sum() for o in outs).backward()
        finally:
            lib.set_num_threads(before)
        seen.append(strides)
        grads.append((t.grad.numpy(), t.grad.stride(), qc.grad.stride()))
    assert seen[0] == seen[1]
    assert seen[0]["q"] == seen[0]["qc"] == (64 * 128, 32, 128, 1)
    assert grads[0][1:] == grads[1][1:] == ((64 * 384, 384, 1), (64 * 128, 64 * 32, 32, 1))
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-4, atol=1e-4)


def _general(fn, *args):
    """fn(*args) with apply's fast paths off (every call through the general path)."""
    saved = R.apply

    def general(op, a, kw):
        return R._apply(op, a, kw)
    R.apply = general
    try:
        return fn(*args)
    finally:
        R.apply = saved


CALLS = [
    ("linear, a Parameter bias", lambda x, lin: ndgrad.nn.functional.linear(x, lin.weight, lin.bias)),
    ("view", lambda x, lin: x.view(2, 3, 2, 4)),
    ("view -1", lambda x, lin: x.view(-1, 8)),
    ("transpose", lambda x, lin: x.transpose(0, 2)),
    ("split", lambda x, lin: x.split(3, 2)),
    ("index key", lambda x, lin: x[:, -1, 1:5]),
    ("gelu", lambda x, lin: ndgrad.nn.functional.gelu(x, approximate="tanh")),
    ("layer norm", lambda x, lin: ndgrad.nn.functional.layer_norm(x, (8,), lin.bias, lin.bias)),
    ("embedding", lambda x, lin: ndgrad.nn.functional.embedding(
        ndgrad.tensor([[0, 2], [1, 1]]), lin.weight)),
]


@pytest.mark.parametrize("grad", [True, False])
@pytest.mark.parametrize("name,call", CALLS, ids=[c[0] for c in CALLS])
def test_fast_paths_as_the_general_path(name, call, grad):
    ndgrad.manual_seed(0)
    lin = ndgrad.nn.Linear(8, 8)
    x = ndgrad.tensor(_f32(2, 3, 8), requires_grad=True)
    with ndgrad.set_grad_enabled(grad):
        got, want = call(x, lin), _general(call, x, lin)
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want):
        assert g.dtype is w.dtype and g.shape == w.shape and g.stride() == w.stride()
        assert g.detach().numpy().tobytes() == w.detach().numpy().tobytes()
        assert g.requires_grad == w.requires_grad
        assert type(g.grad_fn).__name__ == type(w.grad_fn).__name__
        assert (g._base is None) == (w._base is None)
        if not grad:  # (the same reasons; the fast path's site is the caller's, the lambda)
            rg, rw = explain(g).reasons, explain(w).reasons
            assert [r.split(" at ")[0] for r in rg] == [r.split(" at ")[0] for r in rw]
            assert all("in <lambda>" in r for r in rg if " at " in r)
    if grad:
        sum(g.sum() for g in got).backward()
        assert x.grad is not None or name == "embedding"


def test_no_grad_outputs_point_at_the_users_line():
    """autograd.explain under no_grad: a module's output, made by ops several ndgrad frames
    below, names the line that called the module."""
    lin, ln = ndgrad.nn.Linear(8, 8), ndgrad.nn.LayerNorm(8)
    x = ndgrad.tensor(_f32(3, 8))
    with ndgrad.no_grad():
        y = lin(x); here = __import__("inspect").currentframe().f_lineno  # noqa: E702
        v = y.view(-1)
    text = str(explain(y))
    assert "torch.no_grad()" in text and f"line {here}" in text
    assert "torch.no_grad()" not in str(explain(v))  # (from y, which requires no grad)
    with ndgrad.no_grad():
        z = ln(x)
    assert z.requires_grad is False
