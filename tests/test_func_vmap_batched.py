"""func.vmap's batched run (batch rules per op family, the per-sample loop only as a fallback),
in_dims/out_dims/chunk_size/randomness as PyTorch; stack_module_state, linearize and
functional_call's tied weights. Values vs torch.func in float64 (skipped without torch); that
the batch rules (not the fallback) ran is checked through the dispatcher's counters."""
import numpy as np
import pytest

import ndgrad
from ndgrad.func import _vmap
from ndgrad.func import vmap, linearize


def _torch():
    return pytest.importorskip("torch")


def _x(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


X = _x((5, 3, 4))
V = _x((5, 4), 1)
W = _x((4, 6), 2)
IMG = _x((3, 2, 3, 6, 6), 3)
K = _x((4, 3, 3, 3), 4)
SEQ = _x((4, 5, 6), 5)

CASES = {
    "pointwise": (lambda L, x: (x * 2 + 1).exp().sin() - x.abs().sqrt(), [X], 0),
    "broadcast_unmapped": (lambda L, x, v: x * v + v.tanh(), [X, V[0]], (0, None)),
    "broadcast_ranks": (lambda L, x, s: x + s, [X, V[:, 0]], 0),
    "where_clamp": (lambda L, x: L.where(x > 0, x, x * 0.1).clamp(-0.5, 0.5), [X], 0),
    "sum_dim": (lambda L, x: x.sum(1, keepdim=True) + x.mean(0, keepdim=True), [X], 0),
    "full_sum_mean": (lambda L, x: x.sum() + x.mean(), [X], 0),
    "amax_logsumexp_var": (lambda L, x: x.amax(-1) + x.logsumexp(0).sum() + x.var(0)[0],
                           [X], 0),
    "max_dim": (lambda L, x: x.max(1).values + x.min(0)[0].sum(), [X], 0),
    "softmax_logsoftmax": (lambda L, x: x.softmax(-1) * x.log_softmax(0), [X], 0),
    "cumsum_norm": (lambda L, x: x.cumsum(1) / L.linalg.vector_norm(x, dim=1, keepdim=True),
                    [X], 0),
    "matmul_unmapped": (lambda L, x, w: x @ w, [X, W], (0, None)),
    "matmul_vec": (lambda L, x, v: x @ v, [X, V], 0),
    "vec_mat": (lambda L, v, w: v @ w, [V, W], (0, None)),
    "mat_mapped_vec": (lambda L, w, v: w.t() @ v, [W, V], (None, 0)),
    "dot_mv_mm": (lambda L, x, v: L.mv(x, v) + L.dot(v, v) + L.mm(x, x.t()).sum(0), [X, V], 0),
    "bmm_both": (lambda L, s: L.bmm(s.unsqueeze(0), s.t().unsqueeze(0)), [SEQ], 0),
    "linear": (lambda L, x, w: L.nn.functional.linear(x, w.t(), w[0]), [X, W], (0, None)),
    "views": (lambda L, x: x.transpose(0, 1).reshape(-1)[2:7].view(5, 1).expand(5, 3), [X], 0),
    "permute_unsqueeze_squeeze": (lambda L, x: x.unsqueeze(1).permute(2, 1, 0).squeeze(1),
                                  [X], 0),
    "indexing": (lambda L, x: x[1] + x[:, 2].sum() + x[..., 1:3].sum(-1)[0], [X], 0),
    "advanced_index": (lambda L, x: x[L.tensor([0, 2, 2])], [X], 0),
    "cat_stack": (lambda L, x: L.cat([x, x * 2], 0).sum(0) + L.stack([x[0], x[1]], -1).sum(-1),
                  [X], 0),
    "cat_unmapped": (lambda L, x, v: L.cat([x[0], v], 0), [X, V[0]], (0, None)),
    "conv_pool": (lambda L, im, k: L.nn.functional.max_pool2d(
        L.nn.functional.conv2d(im, k, padding=1).relu(), 2), [IMG, K], (0, None)),
    "attention": (lambda L, s: (s @ s.transpose(0, 1) / 2).softmax(-1) @ s, [SEQ], 0),
    "in_dim_1": (lambda L, x: x.sum(0), [X], 1),
    "in_dim_negative": (lambda L, x: x * 2, [X], -1),
}

# the ones whose every op has a batch rule (no op-level fallback, no loop)
FULLY_BATCHED = set(CASES) - {"advanced_index"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_vmap_matches_torch_and_batches(name):
    torch = _torch()
    f, arrays, dims = CASES[name]
    _vmap._stats.update(rule=0, fallback=0)
    ours = vmap(lambda *a: f(ndgrad, *a), in_dims=dims)(*[ndgrad.tensor(a) for a in arrays])
    stats = dict(_vmap._stats)
    theirs = torch.func.vmap(lambda *a: f(torch, *a), in_dims=dims)(
        *[torch.tensor(a) for a in arrays])
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)
    assert stats["rule"] > 0
    if name in FULLY_BATCHED:
        assert stats["fallback"] == 0, stats


def test_fallbacks_are_correct():
    torch = _torch()
    x = ndgrad.tensor(X)

    def data_dependent(a):   # a Python branch on values: the per-sample loop
        return a * 2 if float(a.sum()) > 0 else a - 1

    ours = vmap(data_dependent)(x)
    want = torch.stack([data_dependent(torch.tensor(s)) for s in X])
    np.testing.assert_allclose(ours.numpy(), want.numpy())
    # an op without a batch rule runs per sample inside the batched run
    _vmap._stats.update(rule=0, fallback=0)
    y = vmap(lambda a: ndgrad.linalg.det(a[:, :3] @ a[:, :3].t() + ndgrad.eye(3,
                                                                            dtype=a.dtype)))(x)
    assert _vmap._stats["fallback"] >= 1
    t = torch.func.vmap(lambda a: torch.linalg.det(a[:, :3] @ a[:, :3].t() + torch.eye(
        3, dtype=a.dtype)))(torch.tensor(X))
    np.testing.assert_allclose(y.numpy(), t.numpy(), rtol=1e-12)


def test_out_dims_chunk_size_and_structures():
    torch = _torch()
    for L in (ndgrad, torch):
        x = L.tensor(X)
        a, b = L.func.vmap(lambda t: (t.sum(0), {"m": t * 2}), out_dims=(1, 0),
                           chunk_size=2)(x)
        if L is ndgrad:
            ours = (a.numpy(), b["m"].numpy())
        else:
            np.testing.assert_allclose(ours[0], a.numpy())
            np.testing.assert_allclose(ours[1], b["m"].numpy())
        r = L.func.vmap(lambda t, c: (t * c, c), in_dims=(0, None), out_dims=(0, None))(x, 3.0)
        assert r[1] == 3.0 or float(r[1]) == 3.0
    with pytest.raises(ValueError, match="can not return a BatchedTensor when out_dim is None"):
        vmap(lambda t: t * 2, out_dims=None)(ndgrad.tensor(X))
    with pytest.raises(ValueError, match="chunk_size should be None or greater than 0"):
        vmap(lambda t: t, chunk_size=0)(ndgrad.tensor(X))
    # an output that does not depend on the mapped input is broadcast over the batch
    out = vmap(lambda t: ndgrad.ones(2, dtype=t.dtype))(ndgrad.tensor(X))
    assert tuple(out.shape) == (5, 2)


def test_randomness_modes():
    x = ndgrad.ones(4, 3, dtype=ndgrad.float64)
    with pytest.raises(RuntimeError, match="vmap: called random operation while in randomness "
                                           "error mode"):
        vmap(lambda t: ndgrad.nn.functional.dropout(t, 0.5))(x)
    ndgrad.manual_seed(0)
    same = vmap(lambda t: ndgrad.nn.functional.dropout(t, 0.5), randomness="same")(x).numpy()
    assert (same == same[:1]).all()
    ndgrad.manual_seed(0)
    diff = vmap(lambda t: t + ndgrad.rand(3, dtype=t.dtype), randomness="different")(x).numpy()
    assert not (diff == diff[:1]).all()
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        vmap(lambda t: t, randomness="sometimes")


def test_gradients_through_batched_vmap_and_nesting():
    torch = _torch()
    res = []
    for L in (ndgrad, torch):
        x = L.tensor(X, requires_grad=True)
        w = L.tensor(W, requires_grad=True)
        y = L.func.vmap(lambda a: (a @ w).tanh().sum(0))(x)
        y.pow(2).sum().backward()
        per_sample = L.func.vmap(L.func.grad(lambda wt, a: (a @ wt).tanh().sum()),
                                 in_dims=(None, 0))(L.tensor(W), L.tensor(X))
        nested = L.func.vmap(L.func.vmap(lambda a: a.sin().sum()))(L.tensor(X))
        jac = L.func.jacrev(L.func.vmap(lambda a: a.sin() * a))(L.tensor(V[:, 0]))
        res.append([t.detach().numpy() for t in (x.grad, w.grad, per_sample, nested, jac)])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_ensemble_with_stack_module_state():
    torch = _torch()
    out = []
    for L in (ndgrad, torch):
        L.manual_seed(0)
        models = [L.nn.Linear(3, 2).double() for _ in range(4)]
        for i, m in enumerate(models):   # the same values in both libraries
            with L.no_grad():
                m.weight.copy_(L.tensor(_x((2, 3), 10 + i)))
                m.bias.copy_(L.tensor(_x(2, 20 + i)))
        params, buffers = L.func.stack_module_state(models)
        assert sorted(params) == ["bias", "weight"] and params["weight"].is_leaf
        assert params["weight"].requires_grad and tuple(params["weight"].shape) == (4, 2, 3)
        base = models[0]
        x = L.tensor(_x((5, 3), 30))
        y = L.func.vmap(lambda p, b, xx: L.func.functional_call(base, (p, b), (xx,)),
                        in_dims=(0, 0, None))(params, buffers, x)
        y.sum().backward()
        out.append((y.detach().numpy(), params["weight"].grad.numpy()))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-12)
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-12)
    for call in [lambda L: L.func.stack_module_state([]),
                 lambda L: L.func.stack_module_state([L.nn.Linear(1, 1), L.nn.ReLU()]),
                 lambda L: L.func.stack_module_state([L.nn.Linear(1, 1), L.nn.Linear(1, 1)
                                                      .eval()]),
                 lambda L: L.func.stack_module_state([L.nn.Linear(1, 1),
                                                      L.nn.Linear(1, 1).requires_grad_(False)])]:
        with pytest.raises(RuntimeError) as want:
            call(torch)
        with pytest.raises(RuntimeError) as got:
            call(ndgrad)
        assert str(got.value) == str(want.value)


def test_linearize():
    torch = _torch()
    res = []
    for L in (ndgrad, torch):
        x = L.tensor([1.0, 2.0, 0.5], dtype=L.float64)
        out, jvp_fn = L.func.linearize(lambda a: a.sin() * a, x)
        t1 = jvp_fn(L.tensor([1.0, 0.5, -1.0], dtype=L.float64))
        t2 = jvp_fn(L.tensor([0.0, 1.0, 0.0], dtype=L.float64))
        res.append([v.detach().numpy() for v in (out, t1, t2)])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-14)
    _, jvp_fn = linearize(lambda a: a * 2, ndgrad.ones(2, dtype=ndgrad.float64))
    with pytest.raises(RuntimeError, match=r"tangent:0 with shape torch.Size\(\[3\]\) in "
                                           r"flattened pytree doesn't match the shape "
                                           r"torch.Size\(\[2\]\) of the corresponding primal."):
        jvp_fn(ndgrad.ones(3, dtype=ndgrad.float64))
    with pytest.raises(RuntimeError, match="tangent:0 with dtype torch.float32"):
        jvp_fn(ndgrad.ones(2))
    with pytest.raises(RuntimeError, match="Expected the tangents"):
        jvp_fn(ndgrad.ones(2, dtype=ndgrad.float64), ndgrad.ones(2, dtype=ndgrad.float64))


def test_functional_call_tied_weights():
    torch = _torch()
    outs = []
    for L in (ndgrad, torch):
        class Tied(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = L.nn.Linear(2, 2, bias=False)
                self.b = L.nn.Linear(2, 2, bias=False)
                self.b.weight = self.a.weight

            def forward(self, x):
                return self.b(self.a(x))

        m = Tied()
        new = L.tensor([[1.0, 2.0], [0.5, -1.0]])
        x = L.ones(1, 2)
        tied = L.func.functional_call(m, {"a.weight": new}, (x,))
        same = L.func.functional_call(m, {"a.weight": new, "b.weight": new}, (x,))
        untied = L.func.functional_call(m, {"a.weight": new}, (x,), tie_weights=False)
        with pytest.raises(ValueError) as e:
            L.func.functional_call(m, {"a.weight": new, "b.weight": new * 2}, (x,))
        outs.append((tied.detach().numpy(), same.detach().numpy(),
                     (untied - (x @ new.t()) @ m.b.weight.t()).detach().numpy(),
                     str(e.value)))
    for a, b in zip(*outs):
        if isinstance(a, str):
            assert a == b
        else:
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("pattern,lengths", [
    ("a b c d -> d (a b) c", {}), ("a (h w) c d -> a h w c d", {"h": 3}),
    ("... c -> c ...", {}), ("a b c d -> a 1 b (c d)", {}), ("a b ... -> (a b) ...", {}),
    ("b c (h p) (w q) -> b (h w) (p q c)", {"p": 2, "q": 5}),
    ("a ... (h w) -> h ... w a", {"w": 5}), ("a b c d -> a b c e", {}), ("a b -> b a", {}),
    ("a (h w) c d -> a h w c d", {"h": 2})])
def test_rearrange_as_torch(pattern, lengths):
    torch = _torch()
    from torch.func import rearrange as trearrange
    x = np.arange(120.0).reshape(2, 3, 4, 5)
    try:
        want = trearrange(torch.tensor(x), pattern, **lengths)
    except Exception as e:
        with pytest.raises(Exception) as got:
            ndgrad.func.rearrange(ndgrad.tensor(x), pattern, **lengths)
        assert type(got.value).__name__ == type(e).__name__
        return
    t = ndgrad.tensor(x, requires_grad=True)
    got = ndgrad.func.rearrange(t, pattern, **lengths)
    np.testing.assert_array_equal(got.detach().numpy(), want.numpy())
    (got * ndgrad.tensor(np.arange(got.numel(), dtype=float).reshape(tuple(got.shape)))
     ).sum().backward()   # a permutation: the gradient is the inverse rearrangement
    assert sorted(t.grad.numpy().reshape(-1).tolist()) == list(range(120))


def test_functionalize_debug_unwrap_replace_batch_norm():
    torch = _torch()
    for L in (ndgrad, torch):
        m = L.nn.Sequential(L.nn.Linear(2, 2), L.nn.BatchNorm1d(2))
        assert L.func.replace_all_batch_norm_modules_(m) is m
        assert list(m.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]
        assert m[1].running_mean is None and not m[1].track_running_stats
        x = L.ones(3)
        y = L.func.functionalize(lambda t: t.add_(1)[:2])(x)
        assert x.tolist() == [2.0, 2.0, 2.0] and y.tolist() == [2.0, 2.0]
        z = L.func.functionalize(lambda t: t[:2], remove="mutations_and_views")(x)
        z.mul_(10)
        assert x.tolist() == [2.0, 2.0, 2.0]
        assert L.func.debug_unwrap(x) is x
    with pytest.raises(RuntimeError) as want:
        torch.func.functionalize(lambda t: t, remove="x")
    with pytest.raises(RuntimeError) as got:
        ndgrad.func.functionalize(lambda t: t, remove="x")
    assert str(got.value) == str(want.value)
    # under vmap, debug_unwrap shows the batch
    seen = []
    vmap(lambda t: seen.append(tuple(ndgrad.func.debug_unwrap(t).shape)) or t * 1)(
        ndgrad.ones(4, 3))
    assert seen == [(4, 3)]


def test_functional_constants_as_torch():
    torch = _torch()
    F, TF = ndgrad.nn.functional, torch.nn.functional
    assert F.GRID_SAMPLE_INTERPOLATION_MODES == TF.GRID_SAMPLE_INTERPOLATION_MODES
    assert F.GRID_SAMPLE_PADDING_MODES == TF.GRID_SAMPLE_PADDING_MODES
    for name in ("reproducibility_notes", "sparse_support_notes", "tf32_notes"):
        assert sorted(getattr(F, name)) == sorted(getattr(TF, name))
