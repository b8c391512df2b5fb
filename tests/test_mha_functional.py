"""F.multi_head_attention_forward and nn.MultiheadAttention's options (add_bias_kv,
add_zero_attn, separate projections, static k/v, masks, is_causal) against PyTorch, float64."""
import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")

E, H, L, S, N = 6, 2, 3, 4, 2


def _pair(shape, seed):
    a = np.random.default_rng(seed).standard_normal(shape)
    return ndgrad.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def _close(a, b, tol=1e-10):
    if b is None:
        assert a is None
        return
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def _copy_module(ours, ref):
    sd = {k: ndgrad.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()}
    ours.load_state_dict(sd)


@pytest.mark.parametrize("kw", [
    {}, {"add_bias_kv": True}, {"add_zero_attn": True},
    {"add_bias_kv": True, "add_zero_attn": True}, {"kdim": 5, "vdim": 3}, {"bias": False},
    {"batch_first": True}])
@pytest.mark.parametrize("masks", ["none", "bool_attn", "float_attn", "kpm", "both"])
def test_module_matches_torch(kw, masks):
    torch.manual_seed(0)
    ref = torch.nn.MultiheadAttention(E, H, dtype=torch.float64, **kw)
    ours = ndgrad.nn.MultiheadAttention(E, H, dtype=ndgrad.float64, **kw)
    _copy_module(ours, ref)
    assert sorted(dict(ours.named_parameters())) == sorted(dict(ref.named_parameters()))
    kd, vd = kw.get("kdim", E), kw.get("vdim", E)
    shp = (lambda n, d: (N, n, d)) if kw.get("batch_first") else (lambda n, d: (n, N, d))
    q, tq = _pair(shp(L, E), 1)
    k, tk = _pair(shp(S, kd), 2)
    v, tv = _pair(shp(S, vd), 3)
    args, targs = {}, {}
    if masks in ("bool_attn", "both"):
        m = np.triu(np.ones((L, S), dtype=bool), 1)
        args["attn_mask"], targs["attn_mask"] = ndgrad.tensor(m), torch.tensor(m)
    if masks == "float_attn":
        m = np.random.default_rng(4).standard_normal((N * H, L, S))
        args["attn_mask"], targs["attn_mask"] = ndgrad.tensor(m), torch.tensor(m)
    if masks in ("kpm", "both"):
        m = np.zeros((N, S), dtype=bool)
        m[0, -1] = True
        args["key_padding_mask"], targs["key_padding_mask"] = ndgrad.tensor(m), torch.tensor(m)
    for avg in (True, False):
        out, w = ours(q, k, v, average_attn_weights=avg, **args)
        tout, tw = ref(tq, tk, tv, average_attn_weights=avg, **targs)
        _close(out, tout)
        _close(w, tw)
    (out.sum() + (w * w).sum()).backward()
    (tout.sum() + (tw * tw).sum()).backward()
    for x, tx in ((q, tq), (k, tk), (v, tv)):
        _close(x.grad, tx.grad)
    for (name, p), (_, tp) in zip(sorted(ours.named_parameters()), sorted(ref.named_parameters())):
        _close(p.grad, tp.grad)


def test_unbatched_and_need_weights_false_and_causal():
    torch.manual_seed(1)
    ref = torch.nn.MultiheadAttention(E, H, dtype=torch.float64)
    ours = ndgrad.nn.MultiheadAttention(E, H, dtype=ndgrad.float64)
    _copy_module(ours, ref)
    q, tq = _pair((L, E), 5)
    out, w = ours(q, q, q)
    tout, tw = ref(tq, tq, tq)
    _close(out, tout)
    _close(w, tw)
    m = np.triu(np.ones((L, L), dtype=bool), 1)
    out, w = ours(q, q, q, attn_mask=ndgrad.tensor(m), is_causal=True, need_weights=False)
    tout, tw = ref(tq, tq, tq, attn_mask=torch.tensor(m), is_causal=True, need_weights=False)
    assert w is None and tw is None
    _close(out, tout)
    with pytest.raises(RuntimeError) as te:
        ref(tq, tq, tq, is_causal=True)
    with pytest.raises(RuntimeError) as e:
        ours(q, q, q, is_causal=True)
    assert str(e.value) == str(te.value)


def test_functional_static_kv_and_errors():
    torch.manual_seed(2)
    w_in, tw_in = _pair((3 * E, E), 6)
    w_out, tw_out = _pair((E, E), 7)
    b_in, tb_in = _pair((3 * E,), 8)
    q, tq = _pair((L, N, E), 9)
    sk, tsk = _pair((N * H, S, E // H), 10)
    sv, tsv = _pair((N * H, S, E // H), 11)
    common = dict(training=False, static_k=sk, static_v=sv)
    tcommon = dict(training=False, static_k=tsk, static_v=tsv)
    out, w = ndgrad.nn.functional.multi_head_attention_forward(
        q, q, q, E, H, w_in, b_in, None, None, False, 0.0, w_out, None, **common)
    tout, tw = torch.nn.functional.multi_head_attention_forward(
        tq, tq, tq, E, H, tw_in, tb_in, None, None, False, 0.0, tw_out, None, **tcommon)
    _close(out, tout)
    _close(w, tw)
    out.sum().backward()
    tout.sum().backward()
    for x, tx in ((q, tq), (sk, tsk), (sv, tsv), (w_in, tw_in), (w_out, tw_out)):
        _close(x.grad, tx.grad)
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 5, but got 6"):
        ndgrad.nn.functional.multi_head_attention_forward(
            q, q, q, 5, H, w_in, b_in, None, None, False, 0.0, w_out, None)
    bad = ndgrad.zeros(2, 2, dtype=ndgrad.bool)
    with pytest.raises(RuntimeError, match=r"The shape of the 2D attn_mask is torch.Size\(\[2, 2\]\)"):
        ndgrad.nn.functional.multi_head_attention_forward(
            q, q, q, E, H, w_in, b_in, None, None, False, 0.0, w_out, None, attn_mask=bad)


def test_double_backward_through_attention():
    ours = ndgrad.nn.MultiheadAttention(4, 2, dtype=ndgrad.float64, add_bias_kv=True,
                                        add_zero_attn=True)
    q = ndgrad.randn(2, 1, 4, dtype=ndgrad.float64, requires_grad=True)
    assert ndgrad.autograd.gradcheck(lambda x: ours(x, x, x)[0], (q,))
    assert ndgrad.autograd.gradgradcheck(lambda x: ours(x, x, x)[0], (q,))


@pytest.mark.parametrize("mode", ["sum", "mean"])
@pytest.mark.parametrize("pad", [None, 2])
def test_embedding_bag_scale_grad_by_freq_2d(mode, pad):
    W = np.random.default_rng(0).standard_normal((6, 3))
    idx = np.array([[1, 2, 2, 4], [4, 4, 0, 2]])
    res = []
    for lib in (torch, ndgrad):
        w = lib.tensor(W, requires_grad=True)
        o = lib.nn.functional.embedding_bag(lib.tensor(idx), w, mode=mode, padding_idx=pad,
                                            scale_grad_by_freq=True)
        (o * lib.arange(o.numel(), dtype=lib.float64).reshape(o.shape)).sum().backward()
        res.append((o, w.grad))
    _close(res[1][0], res[0][0])
    _close(res[1][1], res[0][1])
