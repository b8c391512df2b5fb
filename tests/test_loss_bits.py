"""Loss reductions bit for bit against PyTorch. nll_loss's sum and mean (the loss of
F.cross_entropy): its CPU kernel adds the batch's losses in an eight-level cascade
(ops/nn_ops._nll_total); NumPy's pairwise sum differed in the last bit for about half of the
batches tried. The pointwise losses (mse, smooth L1, Huber, soft margin, ...) reduce as
torch.mean/sum do (ops/_cascade.py). (cross_entropy's
per-element log-probabilities come from NumPy's exp, which differs from PyTorch's in the last
bit: the comparison feeds both libraries the same log-probabilities.)"""
import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")


# a sum of more than 32768 elements splits by thread count, in both libraries
pytestmark = pytest.mark.usefixtures("two_threads_both")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_nll_loss_reductions_like_pytorch(dtype, reduction):
    r = np.random.default_rng(1)
    for B in list(range(1, 70)) + [255, 256, 257, 1000, 4095, 4096, 4097, 70000]:
        lp = (r.standard_normal((B, 7)) * 3 - 2).astype(dtype)
        y = r.integers(0, 7, B)
        if B == 5:
            lp[:] = -0.0      # (an all-zero sum: PyTorch's +0)
        ours = ndgrad.nn.functional.nll_loss(ndgrad.tensor(lp), ndgrad.tensor(y),
                                             reduction=reduction).numpy()
        theirs = torch.nn.functional.nll_loss(torch.tensor(lp), torch.tensor(y),
                                              reduction=reduction).numpy()
        assert ours.tobytes() == theirs.tobytes(), B


@pytest.mark.parametrize("name,kw", [("mse_loss", {}), ("smooth_l1_loss", {"beta": 0.5}),
                                     ("huber_loss", {"delta": 0.7}), ("l1_loss", {})])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_pointwise_loss_reductions_like_pytorch(name, kw, reduction):
    r = np.random.default_rng(2)
    for shape in [(3,), (64, 10), (128, 33), (4, 3, 17, 9), (70000,)]:
        x, y = (r.standard_normal(shape).astype(np.float32) for _ in range(2))
        ours = getattr(ndgrad.nn.functional, name)(ndgrad.tensor(x), ndgrad.tensor(y),
                                                   reduction=reduction, **kw).numpy()
        theirs = getattr(torch.nn.functional, name)(torch.tensor(x), torch.tensor(y),
                                                    reduction=reduction, **kw).numpy()
        assert ours.tobytes() == theirs.tobytes(), shape


# ---- nll_loss with class weights, ignored targets and spatial dims: PyTorch's kernels
# (nll_loss_out_frame, nll_loss2d_forward_out_frame and their backward). The sums run in the
# same cascade, but an ignored position skips the levels' emptying too; the weighted terms are
# -x * w rounded once; the mean divides by the weights' total added in the same cascade (or the
# count kept); the gradient is w * -(grad / total). Before, these went through a dense one-hot
# product summed by NumPy: 529 of 800 losses and gradients below differed, and a (2048, 32000)
# cross_entropy with padding labels took 4.4 s and a 1 GB temporary.

def _nll_case(r, dt, nd):
    B = int(r.choice([1, 2, 5, 17, 33, 64, 300, 1000, 5000]))
    C = int(r.integers(1, 12))
    sp = [int(r.integers(1, 6)) for _ in range(nd - 1)] if nd > 1 else []
    x = (r.standard_normal([B, C] + sp) * 3 - 2).astype(dt)
    t = r.integers(0, C, [B] + sp)
    ignore = int(r.choice([-100, 0, C - 1]))
    t[r.random(t.shape) < r.choice([0, 0.1, 0.5, 1.0])] = ignore
    return x, t, ignore


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_weights_ignore_spatial_like_pytorch(dtype, reduction, weighted):
    r = np.random.default_rng(3)
    for trial in range(40):
        x, t, ignore = _nll_case(r, dtype, trial % 4)
        w = np.abs(r.standard_normal(x.shape[1])).astype(dtype) if weighted else None
        g = r.standard_normal(t.shape).astype(dtype)
        out = []
        for T in (ndgrad, torch):
            xt = T.tensor(x, requires_grad=True)
            loss = T.nn.functional.nll_loss(xt, T.tensor(t), None if w is None else T.tensor(w),
                                            ignore_index=ignore, reduction=reduction)
            (loss * T.tensor(g)).sum().backward() if reduction == "none" else loss.backward()
            out.append((loss.detach().numpy(), xt.grad.numpy()))
        (l0, g0), (l1, g1) = out
        assert l0.shape == l1.shape and l0.tobytes() == l1.tobytes(), trial
        assert g0.tobytes() == g1.tobytes(), trial


def test_nll_cascade_with_skips_is_the_cascade_without():
    from ndgrad.ops.nn_ops import _nll_total, _nll_total_at
    r = np.random.default_rng(4)
    for n in [1, 2, 15, 16, 17, 255, 256, 257, 4097, 70000]:
        q = r.standard_normal(n).astype(np.float32)
        assert _nll_total_at(q, np.arange(n)).tobytes() == _nll_total(q).tobytes(), n


def test_nll_empty_and_all_ignored_nans_like_pytorch():
    for shape_x, shape_t, fill in [((0, 4), (0,), 0), ((3, 4), (3,), -100),
                                   ((2, 4, 3), (2, 3), -100)]:
        x = np.zeros(shape_x, np.float32)
        t = np.full(shape_t, fill)
        for reduction in ("mean", "sum"):
            a, b = (T.nn.functional.nll_loss(T.tensor(x), T.tensor(t), reduction=reduction)
                    .numpy() for T in (ndgrad, torch))
            assert a.tobytes() == b.tobytes(), (shape_x, reduction)   # the NaN's sign too


@pytest.mark.parametrize("label_smoothing", [0.0, 0.1, 0.37])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_weights_ignore_smoothing_like_pytorch(label_smoothing, reduction):
    # PyTorch's composition (cross_entropy_loss_label_smoothing) on the same log-probabilities:
    # the smoothing term masked to 0 where ignored, its mean over the kept weights' torch.sum
    # (or the kept count); the log-probabilities themselves differ in the last bit (exp)
    r = np.random.default_rng(5)
    F = torch.nn.functional
    for trial in range(24):
        C = int(r.integers(2, 12))
        sp = [int(r.integers(1, 5))] if trial % 2 else []
        x = (r.standard_normal([int(r.choice([1, 17, 300]))] + [C] + sp) * 3).astype(np.float32)
        t = r.integers(0, C, [x.shape[0]] + sp)
        t[r.random(t.shape) < r.choice([0, 0.2, 0.9])] = -100
        w = np.abs(r.standard_normal(C)).astype(np.float32) if trial % 3 else None
        ours = ndgrad.nn.functional.cross_entropy(
            ndgrad.tensor(x), ndgrad.tensor(t), None if w is None else ndgrad.tensor(w),
            reduction=reduction, label_smoothing=label_smoothing).numpy()
        logp = torch.tensor(ndgrad.nn.functional.log_softmax(ndgrad.tensor(x), 1).numpy())
        tt, tw = torch.tensor(t), None if w is None else torch.tensor(w)
        want = F.nll_loss(logp, tt, tw, reduction=reduction)
        if label_smoothing:
            shape = [1] * logp.dim()
            shape[1] = C
            smooth = -(logp * tw.view(shape)).sum(1) if tw is not None else -logp.sum(1)
            mask = tt == -100
            smooth = smooth.masked_fill(mask, 0.0)
            if reduction == "mean":
                smooth = smooth.sum() / (tw.gather(0, tt.masked_select(~mask)).sum()
                                         if tw is not None else (~mask).sum())
            elif reduction == "sum":
                smooth = smooth.sum()
            want = (1 - label_smoothing) * want + smooth * (label_smoothing / C)
        assert ours.tobytes() == want.numpy().tobytes(), trial


def test_cross_entropy_with_padding_labels_has_no_one_hot():
    import tracemalloc
    N, C = 512, 4000
    x = ndgrad.randn(N, C, requires_grad=True)
    t = ndgrad.randint(0, C, (N,))
    t[::7] = -100
    tracemalloc.start()
    ndgrad.nn.functional.cross_entropy(x, t).backward()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # the log-probabilities, their gradient and the input's: about three (N, C) float32 arrays
    assert peak < 4 * N * C * 4, peak


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
def test_cross_entropy_weighted_ignored_spatial_gradchecks(reduction, label_smoothing):
    ndgrad.manual_seed(0)
    x = ndgrad.randn(4, 3, 5, dtype=ndgrad.float64, requires_grad=True)
    t = ndgrad.randint(0, 3, (4, 5))
    t[0, :2] = -100
    w = ndgrad.rand(3, dtype=ndgrad.float64) + 0.1

    def f(x):
        return ndgrad.nn.functional.cross_entropy(x, t, weight=w, reduction=reduction,
                                                  label_smoothing=label_smoothing)
    assert ndgrad.autograd.gradcheck(f, (x,))
    assert ndgrad.autograd.gradgradcheck(f, (x,))


# ---- embedding_bag's sums: PyTorch's kernels add a bag's rows one after the other from zero
# (a per-sample weight fused into the running sum); NumPy-order sums over a padded
# (bags, longest bag, dim) array differed for 151 of 289 bags tried, and one long bag among
# many padded every bag to its length

def _bag_case(r, trial):
    V, D = int(r.integers(2, 60)), int(r.integers(1, 20))
    W = (r.standard_normal((V, D)) * 10 ** r.uniform(-2, 2, (V, D))).astype(np.float32)
    mode = ["sum", "mean", "max"][trial % 3]
    pad = int(r.integers(0, V)) if trial % 4 == 0 else None
    if trial % 5 == 0:
        inp, off = r.integers(0, V, (int(r.integers(1, 6)), int(r.integers(1, 9)))), None
    else:
        n = int(r.integers(0, 80))
        inp = r.integers(0, V, n)
        off = np.sort(r.integers(0, n + 1, int(r.integers(1, 10))))
        off[0] = 0
    psw = r.standard_normal(inp.shape).astype(np.float32) if mode == "sum" and trial % 2 \
        else None
    return W, mode, pad, inp, off, psw


def test_embedding_bag_like_pytorch():
    r = np.random.default_rng(6)
    for trial in range(150):
        W, mode, pad, inp, off, psw = _bag_case(r, trial)
        out = []
        for T in (ndgrad, torch):
            w = T.tensor(W, requires_grad=True)
            o = T.nn.functional.embedding_bag(
                T.tensor(inp), w, None if off is None else T.tensor(off), mode=mode,
                padding_idx=pad, per_sample_weights=None if psw is None else T.tensor(psw))
            o.sum().backward()
            out.append((o.detach().numpy(), w.grad.numpy()))
        (o0, g0), (o1, g1) = out
        assert o0.shape == o1.shape and o0.tobytes() == o1.tobytes(), trial
        np.testing.assert_allclose(g0, g1, rtol=1e-5, atol=1e-6)


def test_embedding_bag_one_long_bag_and_gradchecks():
    w = ndgrad.randn(50, 4, dtype=ndgrad.float64, requires_grad=True)
    idx = ndgrad.randint(0, 50, (200_000,))
    off = ndgrad.tensor(list(range(0, 999)) + [999])     # 999 short bags, then a long one
    out = ndgrad.nn.functional.embedding_bag(idx, w, off, mode="mean")
    assert out.shape == (1000, 4)
    idx, off = ndgrad.randint(0, 50, (12,)), ndgrad.tensor([0, 3, 3, 7])
    psw = ndgrad.rand(12, dtype=ndgrad.float64, requires_grad=True)
    for mode, weights, pad in [("sum", None, None), ("mean", None, 5), ("max", None, None),
                               ("sum", psw, 5)]:
        def f(w, *ws):
            return ndgrad.nn.functional.embedding_bag(idx, w, off, mode=mode, padding_idx=pad,
                                                      per_sample_weights=ws[0] if ws else None)
        args = (w, weights) if weights is not None else (w,)
        assert ndgrad.autograd.gradcheck(f, args)
        assert ndgrad.autograd.gradgradcheck(f, args)
    empty = ndgrad.nn.functional.embedding_bag(ndgrad.tensor([], dtype=ndgrad.long), w,
                                               ndgrad.tensor([0, 0]))
    empty.sum().backward()          # (empty bags: zeros in the graph, a zero gradient)
    assert (empty == 0).all() and w.grad is not None
