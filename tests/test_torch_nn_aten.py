"""torch-level ATen forms of nn operations (src/ndgrad/nn/_aten.py): int-enum losses,
embedding_bag's 4-tuple, (values, indices) pooling, native_* norms with their statistics, grid
sampling and convolution. Values, dtypes, shapes, tuples, gradients and error messages are
compared with PyTorch where it is installed; gradcheck/gradgradcheck need ndgrad only."""
import numpy as np
import pytest

import ndgrad
from ndgrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(0)


def _arr(*shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, shape)


def _both(torch, a, grad=False, dtype=None):
    """The same values as a PyTorch and an ndgrad tensor."""
    t, n = torch.tensor(a), ndgrad.tensor(a)
    if dtype is not None:
        t, n = t.to(getattr(torch, dtype)), n.to(getattr(ndgrad, dtype))
    if grad:
        t.requires_grad_(True)
        n.requires_grad_(True)
    return t, n


def _same(n, t, tol=1e-6):
    assert tuple(n.shape) == tuple(t.shape)
    assert str(n.dtype) == str(t.dtype)
    np.testing.assert_allclose(n.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


def _raises_alike(torch, call):
    """call(lib) raises the same exception type and message in both libraries."""
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(ndgrad)
    assert str(ours.value) == str(theirs.value)


# ---------------------------------------------------------------- losses

LOSSES = {   # name -> (arrays, call(lib, tensors, reduction)); see DIFFERENTIABLE
    "binary_cross_entropy_with_logits": (
        lambda: [_arr(3, 4), _arr(3, 4, low=0), _arr(4, low=0.5), _arr(4, low=0.5)],
        lambda lib, x, r: lib.binary_cross_entropy_with_logits(x[0], x[1], x[2], x[3], r)),
    "cosine_embedding_loss": (
        lambda: [_arr(5, 3), _arr(5, 3), np.array([1.0, -1, 1, -1, 0.5])],
        lambda lib, x, r: lib.cosine_embedding_loss(x[0], x[1], x[2], 0.1, r)),
    "hinge_embedding_loss": (
        lambda: [_arr(3, 4), np.sign(_arr(3, 4)) * (RNG.uniform(size=(3, 4)) > 0.2)],
        lambda lib, x, r: lib.hinge_embedding_loss(x[0], x[1], 0.5, r)),
    "kl_div": (
        lambda: [_arr(3, 4), _arr(3, 4, low=0.0)],
        lambda lib, x, r: lib.kl_div(x[0], x[1], r)),
    "kl_div_log_target": (
        lambda: [_arr(3, 4), _arr(3, 4)],
        lambda lib, x, r: lib.kl_div(x[0], x[1], r, log_target=True)),
    "margin_ranking_loss": (
        lambda: [_arr(6), _arr(6), np.sign(_arr(6))],
        lambda lib, x, r: lib.margin_ranking_loss(x[0], x[1], x[2], 0.2, r)),
    "poisson_nll_loss": (
        lambda: [_arr(3, 4), _arr(3, 4, low=0, high=4)],
        lambda lib, x, r: lib.poisson_nll_loss(x[0], x[1], True, False, 1e-8, r)),
    "poisson_nll_loss_full": (
        lambda: [_arr(3, 4, low=0.1, high=3), _arr(3, 4, low=0, high=4)],
        lambda lib, x, r: lib.poisson_nll_loss(x[0], x[1], False, True, 1e-8, r)),
    "triplet_margin_loss": (
        lambda: [_arr(4, 3), _arr(4, 3), _arr(4, 3)],
        lambda lib, x, r: lib.triplet_margin_loss(x[0], x[1], x[2], 1.0, 2.0, 1e-6, False, r)),
    "triplet_margin_loss_swap_p1": (
        lambda: [_arr(4, 3), _arr(4, 3), _arr(4, 3)],
        lambda lib, x, r: lib.triplet_margin_loss(x[0], x[1], x[2], 0.5, 1.0, 1e-6, True, r)),
}


# how many leading inputs of each loss are differentiable (the others: weights, labels)
DIFFERENTIABLE = dict(binary_cross_entropy_with_logits=2, cosine_embedding_loss=2,
                      hinge_embedding_loss=1, kl_div=2, kl_div_log_target=2,
                      margin_ranking_loss=2, poisson_nll_loss=2, poisson_nll_loss_full=2,
                      triplet_margin_loss=3, triplet_margin_loss_swap_p1=3)


@pytest.mark.parametrize("reduction", [0, 1, 2, 5, -1])
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_matches_pytorch(name, reduction):
    torch = pytest.importorskip("torch")
    make, call = LOSSES[name]
    arrays = make()
    pairs = [_both(torch, a, grad=i < DIFFERENTIABLE[name]) for i, a in enumerate(arrays)]
    theirs = call(torch, [p[0] for p in pairs], reduction)
    ours = call(ndgrad, [p[1] for p in pairs], reduction)
    _same(ours, theirs)
    theirs.sum().backward()
    ours.sum().backward()
    for t, n in pairs:
        if t.grad is not None:
            _same(n.grad, t.grad)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_gradcheck(name):
    make, call = LOSSES[name]
    arrays = make()
    n = DIFFERENTIABLE[name]
    ins = [ndgrad.tensor(a, requires_grad=i < n) for i, a in enumerate(arrays)]
    fn = lambda *t: call(ndgrad, list(t), 1)  # noqa: E731
    assert gradcheck(fn, ins)
    assert gradgradcheck(fn, ins)


def test_loss_reduction_must_be_an_int():
    torch = pytest.importorskip("torch")
    for bad in (1.0, "mean", True):
        _raises_alike(torch, lambda lib: lib.kl_div(lib.ones(2), lib.ones(2), bad))
        _raises_alike(torch, lambda lib: lib.margin_ranking_loss(
            lib.ones(2), lib.ones(2), lib.ones(2), 0.0, bad))
    _raises_alike(torch, lambda lib: lib.kl_div(lib.ones(2), lib.ones(2), 1, False))


def test_loss_empty_batch():
    torch = pytest.importorskip("torch")
    for r in (0, 1, 2):
        t = [torch.zeros(0, 3, dtype=torch.float64, requires_grad=True) for _ in range(2)]
        n = [ndgrad.zeros(0, 3, dtype=ndgrad.float64, requires_grad=True) for _ in range(2)]
        _same(ndgrad.kl_div(n[0], n[1], r), torch.kl_div(t[0], t[1], r))
        _same(ndgrad.binary_cross_entropy_with_logits(n[0], n[1], reduction=r),
              torch.binary_cross_entropy_with_logits(t[0], t[1], reduction=r))


def _ctc_inputs(lib):
    rng = np.random.default_rng(1)
    lp = lib.tensor(rng.normal(size=(6, 2, 4))).log_softmax(2).detach().requires_grad_(True)
    targets = lib.tensor([[1, 2, 2], [3, 1, 0]])
    return lp, targets


@pytest.mark.parametrize("reduction", [0, 1, 2, 3])
@pytest.mark.parametrize("tensor_lengths", [False, True])
def test_ctc_loss_matches_pytorch(reduction, tensor_lengths):
    torch = pytest.importorskip("torch")
    res = []
    for lib in (torch, ndgrad):
        lp, tg = _ctc_inputs(lib)
        il, tl = [6, 5], [3, 2]
        if tensor_lengths:
            il, tl = lib.tensor(il), lib.tensor(tl)
        loss = lib.ctc_loss(lp, tg, il, tl, 0, reduction, False)
        loss.sum().backward()
        res.append((loss, lp.grad))
    _same(res[1][0], res[0][0])
    _same(res[1][1], res[0][1])


def test_ctc_loss_errors_and_gradcheck():
    torch = pytest.importorskip("torch")
    _raises_alike(torch, lambda lib: lib.ctc_loss(*_ctc_inputs(lib), (6, 5), lib.tensor([3, 2])))
    _raises_alike(torch, lambda lib: lib.ctc_loss(None))
    _raises_alike(torch, lambda lib: lib.ctc_loss(*_ctc_inputs(lib), [6, 5], [3, 2], 0, 1.5))


def test_ctc_loss_gradcheck():
    # (PyTorch's gradient with respect to log_probs assumes they come from log_softmax, as
    # ndgrad's does: the check runs through it)
    lp, tg = _ctc_inputs(ndgrad)
    fn = lambda x: ndgrad.ctc_loss(x.log_softmax(2), tg, [6, 5], [3, 2], 0, 1, False)  # noqa: E731
    assert gradcheck(fn, (lp,))
    assert gradgradcheck(fn, (lp,))


# ---------------------------------------------------------------- embedding_bag

BAGS = [  # (mode, offsets, per_sample_weights, include_last_offset, padding_idx, dtype)
    (0, [0, 4], False, False, None, "float32"),
    (0, [0, 4], False, False, None, "float64"),
    (1, [0, 4], False, False, None, "float32"),
    (2, [0, 4], False, False, None, "float32"),
    (0, [0, 4, 4, 8], False, False, None, "float32"),
    (1, [0, 4, 4, 8], False, False, 4, "float64"),
    (2, [0, 4, 4, 8], False, False, 4, "float64"),
    (0, [0, 3, 8], False, True, None, "float32"),
    (1, [0, 3, 5], False, True, None, "float64"),
    (2, [0, 3, 5, 8], False, True, None, "float32"),
    (1, [0, 3, 8], False, True, None, "float32"),
    (2, [0, 3, 8], False, True, 2, "float32"),
    (0, [0, 4], True, False, None, "float32"),
    (0, [0, 4], True, False, 4, "float64"),
    (0, [0, 4], False, False, -1, "float32"),
    (1, [0, 2, 8], False, False, None, "float64"),
]


@pytest.mark.parametrize("mode,offsets,psw,last,pad,dtype", BAGS)
def test_embedding_bag_matches_pytorch(mode, offsets, psw, last, pad, dtype):
    torch = pytest.importorskip("torch")
    w = _arr(10, 3)
    w[4, 1] = w[2, 1]   # a tie in a max bag: the first index wins
    psw_a = _arr(8)
    res = []
    for lib in (torch, ndgrad):
        wt = lib.tensor(w).to(getattr(lib, dtype)).requires_grad_(True)
        p = lib.tensor(psw_a).to(getattr(lib, dtype)) if psw else None
        out = lib.embedding_bag(wt, lib.tensor([1, 2, 4, 5, 4, 3, 2, 9]), lib.tensor(offsets),
                                False, mode, False, p, last, pad)
        out[0].sum().backward()
        res.append((out, wt.grad))
    (t_out, t_grad), (n_out, n_grad) = res
    assert isinstance(n_out, tuple) and len(n_out) == 4
    for n, t in zip(n_out, t_out):
        _same(n, t)
    _same(n_grad, t_grad)


@pytest.mark.parametrize("index_dtype,offset_dtype", [("int32", "int32"), ("int32", "int64"),
                                                      ("int64", "int32")])
def test_embedding_bag_index_dtypes(index_dtype, offset_dtype):
    """ATen promotes indices and offsets to one type, which the outputs but the first keep."""
    torch = pytest.importorskip("torch")
    w = _arr(5, 2)
    for mode in (0, 1, 2):
        res = [lib.embedding_bag(lib.tensor(w),
                                 lib.tensor([0, 4, 1, 1]).to(getattr(lib, index_dtype)),
                                 lib.tensor([0, 1]).to(getattr(lib, offset_dtype)), False, mode)
               for lib in (torch, ndgrad)]
        for n, t in zip(res[1], res[0]):
            _same(n, t)
    _raises_alike(torch, lambda lib: lib.embedding_bag(lib.ones(3, 2), lib.tensor([0, 1]),
                                                       lib.tensor([0.0])))


def test_embedding_bag_errors():
    torch = pytest.importorskip("torch")
    w, i, o = (lambda lib: lib.ones(10, 3)), (lambda lib: lib.tensor([1, 2, 3])), \
        (lambda lib: lib.tensor([0, 2]))
    _raises_alike(torch, lambda lib: lib.embedding_bag(w(lib), i(lib), o(lib), False, 3))
    _raises_alike(torch, lambda lib: lib.embedding_bag(w(lib), i(lib), o(lib), False, 0, False,
                                                        None, False, 12))
    _raises_alike(torch, lambda lib: lib.embedding_bag(w(lib), i(lib), o(lib), False, 1, False,
                                                        lib.ones(3), False))
    _raises_alike(torch, lambda lib: lib.embedding_bag(w(lib), i(lib), lib.tensor([0, 5])))
    _raises_alike(torch, lambda lib: lib.embedding_bag(None))
    _raises_alike(torch, lambda lib: lib.embedding_bag(w(lib), i(lib), None))
    _raises_alike(torch, lambda lib: lib.embedding_bag(w(lib), i(lib), o(lib), False, 1.0))
    _raises_alike(torch, lambda lib: lib.embedding_bag(w(lib), i(lib).float(), o(lib)))
    _raises_alike(torch, lambda lib: lib.embedding_bag(w(lib)))


def test_embedding_bag_gradcheck():
    w = ndgrad.tensor(_arr(6, 2), requires_grad=True)
    psw = ndgrad.tensor(_arr(5), requires_grad=True)
    idx, off = ndgrad.tensor([0, 2, 5, 1, 2]), ndgrad.tensor([0, 2, 2])
    for mode in (0, 1, 2):
        fn = lambda w: ndgrad.embedding_bag(w, idx, off, False, mode)[0]  # noqa: E731
        assert gradcheck(fn, (w,)) and gradgradcheck(fn, (w,))
    fn = lambda w, p: ndgrad.embedding_bag(w, idx, off, False, 0, False, p)[0]  # noqa: E731
    assert gradcheck(fn, (w, psw)) and gradgradcheck(fn, (w, psw))


# ---------------------------------------------------------------- pooling

def test_pooling_with_indices_matches_pytorch():
    torch = pytest.importorskip("torch")
    a = _arr(2, 3, 9)
    for call in (lambda lib, x: lib.max_pool1d_with_indices(x, 3),
                 lambda lib, x: lib.max_pool1d_with_indices(x, [2], [3], [1], [2], True),
                 lambda lib, x: lib.max_pool1d_with_indices(x[0], 2),
                 lambda lib, x: lib.adaptive_max_pool1d(x, 4),
                 lambda lib, x: lib.adaptive_max_pool1d(x[0], [5])):
        t, n = _both(torch, a, grad=True)
        tr, nr = call(torch, t), call(ndgrad, n)
        assert isinstance(nr, tuple) and len(nr) == 2
        _same(nr[0], tr[0])
        _same(nr[1], tr[1])
        tr[0].sum().backward()
        nr[0].sum().backward()
        _same(n.grad, t.grad)
    _raises_alike(torch, lambda lib: lib.adaptive_max_pool1d(lib.ones(1, 2, 3, 4), 2))


def test_pooling_gradcheck():
    x = ndgrad.tensor(_arr(2, 2, 7), requires_grad=True)
    for fn in (lambda x: ndgrad.max_pool1d_with_indices(x, 2, 1)[0],
               lambda x: ndgrad.adaptive_max_pool1d(x, 3)[0]):
        assert gradcheck(fn, (x,)) and gradgradcheck(fn, (x,))


# ---------------------------------------------------------------- normalization

@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_native_batch_norm_matches_pytorch(training, affine):
    torch = pytest.importorskip("torch")
    x, w, b = _arr(4, 3, 5), _arr(3), _arr(3)
    res = []
    for lib in (torch, ndgrad):
        xt = lib.tensor(x, requires_grad=True)
        wt, bt = (lib.tensor(w, requires_grad=True), lib.tensor(b, requires_grad=True)) \
            if affine else (None, None)
        rm, rv = lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)
        out = lib.native_batch_norm(xt, wt, bt, rm, rv, training, 0.1, 1e-5)
        out[0].pow(2).sum().backward()
        res.append((out, rm, rv, xt.grad, wt.grad if affine else None))
    t, n = res
    assert len(n[0]) == 3
    for a, b_ in zip(n[0], t[0]):
        _same(a, b_)
    for a, b_ in zip(n[1:], t[1:]):
        if b_ is not None:
            _same(a, b_)


def test_native_batch_norm_one_value_per_channel_and_half_input():
    """ATen's kernel takes one value per channel (nn.functional's refuses it); a half input
    with float parameters saves float statistics."""
    torch = pytest.importorskip("torch")
    for x, dt, pdt in ((_arr(1, 3), "float64", "float64"), (_arr(2, 3), "float16", "float32")):
        res = []
        for lib in (torch, ndgrad):
            p = getattr(lib, pdt)
            rm, rv = lib.zeros(3, dtype=p), lib.ones(3, dtype=p)
            out = lib.native_batch_norm(lib.tensor(x).to(getattr(lib, dt)), lib.ones(3, dtype=p),
                                        None, rm, rv, True, 0.1, 1e-5)
            res.append(out + (rm, rv))
        for n, t in zip(res[1], res[0]):
            _same(n, t, tol=1e-3)


def test_native_layer_and_group_norm_match_pytorch():
    torch = pytest.importorskip("torch")
    x, w, b = _arr(4, 6, 5), _arr(6, 5), _arr(6, 5)
    for shape in ([5], [6, 5]):
        res = []
        for lib in (torch, ndgrad):
            xt = lib.tensor(x, requires_grad=True)
            k = len(shape)
            wt = lib.tensor(w[(0,) * (2 - k)], requires_grad=True)
            bt = lib.tensor(b[(0,) * (2 - k)])
            out = lib.native_layer_norm(xt, shape, wt, bt, 1e-5)
            out[0].pow(2).sum().backward()
            res.append((out, xt.grad, wt.grad))
        for a, b_ in zip(res[1][0] + res[1][1:], res[0][0] + res[0][1:]):
            _same(a, b_)
    gw, gb = _arr(6), _arr(6)
    for group in (1, 2, 3):
        res = []
        for lib in (torch, ndgrad):
            xt = lib.tensor(x, requires_grad=True)
            wt = lib.tensor(gw, requires_grad=True)
            out = lib.native_group_norm(xt, wt, lib.tensor(gb), 4, 6, 5, group, 1e-5)
            out[0].pow(2).sum().backward()
            res.append((out, xt.grad, wt.grad))
        for a, b_ in zip(res[1][0] + res[1][1:], res[0][0] + res[0][1:]):
            _same(a, b_)
    _raises_alike(torch, lambda lib: lib.native_group_norm(lib.ones(4, 3, 5), None, None,
                                                           4, 3, 5, 2, 1e-5))
    _raises_alike(torch, lambda lib: lib.native_group_norm(lib.ones(4, 3, 5), None, None,
                                                           4, 3, 6, 3, 1e-5))
    _raises_alike(torch, lambda lib: lib.native_layer_norm(lib.ones(4, 3, 5), [4], None, None,
                                                           1e-5))


def test_native_norms_gradcheck():
    x = ndgrad.tensor(_arr(3, 2, 4), requires_grad=True)
    w = ndgrad.tensor(_arr(2), requires_grad=True)
    b = ndgrad.tensor(_arr(2), requires_grad=True)
    for fn in (lambda x, w, b: ndgrad.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5)[0],
               lambda x, w, b: ndgrad.native_group_norm(x, w, b, 3, 2, 4, 2, 1e-5)[0],
               lambda x, w, b: ndgrad.native_layer_norm(x, [4], None, None, 1e-5)[0] * w[0] + b[1]):
        assert gradcheck(fn, (x, w, b)) and gradgradcheck(fn, (x, w, b))
    # an empty batch: layer and group norm allow it
    e = ndgrad.zeros(0, 2, 4, dtype=ndgrad.float64, requires_grad=True)
    assert gradcheck(lambda e: ndgrad.native_layer_norm(e, [4], None, None, 1e-5)[0], (e,))
    out = ndgrad.native_group_norm(e, None, None, 0, 2, 4, 2, 1e-5)
    assert [tuple(o.shape) for o in out] == [(0, 2, 4), (0, 2), (0, 2)]


def test_native_dropout():
    torch = pytest.importorskip("torch")
    x = ndgrad.tensor(_arr(50, 40), requires_grad=True)
    out, mask = ndgrad.native_dropout(x, 0.3, True)
    assert mask.dtype is ndgrad.bool and mask.shape == x.shape
    kept = mask.numpy()
    assert 0.6 < kept.mean() < 0.8
    np.testing.assert_allclose(out.detach().numpy(), np.where(kept, x.detach().numpy() / 0.7, 0))
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), kept / 0.7)
    out, mask = ndgrad.native_dropout(x, 0.3, False)   # not training: a copy, all kept
    assert mask.numpy().all() and (out == x).all() and out is not x
    out, mask = ndgrad.native_dropout(x, 1.0, None)   # None trains
    assert not mask.numpy().any() and (out == 0).all()
    _raises_alike(torch, lambda lib: lib.native_dropout(lib.ones(3), 1.5, True))
    t = torch.ones(3)
    assert [str(r.dtype) for r in torch.native_dropout(t, 0.5, False)] == \
        [str(r.dtype) for r in ndgrad.native_dropout(ndgrad.ones(3), 0.5, False)]


def test_native_dropout_gradcheck():
    x = ndgrad.tensor(_arr(3, 4), requires_grad=True)
    ndgrad.manual_seed(0)
    mask = ndgrad.native_dropout(x, 0.4, True)[1]

    def fn(x):   # the same draw each call
        ndgrad.manual_seed(0)
        out, m = ndgrad.native_dropout(x, 0.4, True)
        assert (m == mask).all()
        return out
    assert gradcheck(fn, (x,)) and gradgradcheck(fn, (x,))


def test_native_norm_is_sparse_only():
    torch = pytest.importorskip("torch")
    with pytest.raises(NotImplementedError) as theirs:
        torch.native_norm(torch.ones(3))
    with pytest.raises(NotImplementedError) as ours:
        ndgrad.native_norm(ndgrad.ones(3))
    assert str(theirs.value).startswith(str(ours.value))
    d = _arr(3, 4) * (RNG.uniform(size=(3, 4)) > 0.5)
    for p in (2, 1, 3.0):
        _same(ndgrad.native_norm(ndgrad.tensor(d).to_sparse(), p),
              torch.native_norm(torch.tensor(d).to_sparse(), p))


# ---------------------------------------------------------------- grid sampling

@pytest.mark.parametrize("interp", [0, 1, 2])
@pytest.mark.parametrize("padding", [0, 1, 2])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sampler_2d_matches_pytorch(interp, padding, align):
    torch = pytest.importorskip("torch")
    x, g = _arr(2, 3, 4, 5), _arr(2, 3, 2, 2, low=-1.3, high=1.3)
    _grid_sampler_matches(torch, x, g, ("grid_sampler", "grid_sampler_2d"), interp, padding,
                          align, grid_grad=interp != 1)


def _grid_sampler_matches(torch, x, g, names, interp, padding, align, grid_grad):
    """Each of `names` on x and grid g against PyTorch's: values, and the gradients of the
    squared sum in x (and in g where grid_grad)."""
    for name in names:
        (tx, nx), (tg, ng) = _both(torch, x, True), _both(torch, g, True)
        tr = getattr(torch, name)(tx, tg, interp, padding, align)
        nr = getattr(ndgrad, name)(nx, ng, interp, padding, align)
        _same(nr, tr)
        tr.pow(2).sum().backward()
        nr.pow(2).sum().backward()
        _same(nx.grad, tx.grad)
        if grid_grad:
            _same(ng.grad, tg.grad)


def test_grid_sampler_errors_and_gradcheck():
    torch = pytest.importorskip("torch")
    _raises_alike(torch, lambda lib: lib.grid_sampler_2d(lib.ones(3, 4, 5), lib.ones(2, 3, 3, 2),
                                                         0, 0, False))
    _raises_alike(torch, lambda lib: lib.grid_sampler_3d(lib.ones(2, 3, 4, 5),
                                                         lib.ones(2, 3, 3, 2), 0, 0, False))
    _raises_alike(torch, lambda lib: lib.grid_sampler_3d(lib.ones(1, 1, 2, 2, 2),
                                                         lib.ones(1, 2, 2, 2, 3), 2, 0, False))
    x = ndgrad.tensor(_arr(1, 2, 3, 4), requires_grad=True)
    g = ndgrad.tensor(_arr(1, 2, 2, 2, low=-0.9, high=0.9), requires_grad=True)
    fn = lambda x, g: ndgrad.grid_sampler(x, g, 0, 0, False)  # noqa: E731
    assert gradcheck(fn, (x, g)) and gradgradcheck(fn, (x, g))


@pytest.mark.parametrize("align", [False, True])
def test_affine_grid_generator_matches_pytorch(align):
    torch = pytest.importorskip("torch")
    for theta, size in ((_arr(2, 2, 3), [2, 3, 4, 5]), (_arr(1, 3, 4), [1, 2, 3, 4, 2])):
        (tt, nt) = _both(torch, theta, True)
        tr = torch.affine_grid_generator(tt, size, align)
        nr = ndgrad.affine_grid_generator(nt, size, align)
        _same(nr, tr)
        tr.pow(2).sum().backward()
        nr.pow(2).sum().backward()
        _same(nt.grad, tt.grad)
    _raises_alike(torch, lambda lib: lib.affine_grid_generator(lib.ones(2, 2, 3), [2, 3, 4],
                                                               False))
    th = ndgrad.tensor(_arr(2, 2, 3), requires_grad=True)
    fn = lambda th: ndgrad.affine_grid_generator(th, [2, 1, 3, 2], align)  # noqa: E731
    assert gradcheck(fn, (th,)) and gradgradcheck(fn, (th,))


# ---------------------------------------------------------------- convolution

CONVS = [  # (input shape, weight shape, stride, padding, dilation, transposed, out_pad, groups)
    ((2, 4, 7), (6, 2, 3), [2], [1], [1], False, [0], 2),
    ((2, 3, 6, 5), (4, 3, 2, 2), [1, 1], [0, 0], [1, 1], False, [0, 0], 1),
    ((2, 3, 6, 5), (4, 3, 2, 3), [2], [1], [2], False, [0], 1),
    ((1, 2, 4, 4, 3), (2, 2, 2, 2, 2), [1, 1, 1], [1, 0, 1], [1, 1, 1], False, [0, 0, 0], 1),
    ((2, 4, 5), (4, 3, 3), [2], [1], [1], True, [1], 1),
    ((2, 3, 4, 5), (3, 4, 2, 2), [2, 2], [1, 1], [1, 1], True, [1, 1], 1),
    ((1, 2, 3, 3, 2), (2, 1, 2, 2, 2), [1, 1, 1], [0, 0, 0], [1, 1, 1], True, [0, 0, 0], 2),
]


@pytest.mark.parametrize("case", CONVS)
def test_convolution_matches_pytorch(case):
    torch = pytest.importorskip("torch")
    xs, ws, s, p, d, tr, op, g = case
    (tx, nx), (tw, nw) = _both(torch, _arr(*xs), True), _both(torch, _arr(*ws), True)
    out_ch = ws[1] * g if tr else ws[0]
    tb, nb = _both(torch, _arr(out_ch), True)
    t = torch.convolution(tx, tw, tb, s, p, d, tr, op, g)
    n = ndgrad.convolution(nx, nw, nb, s, p, d, tr, op, g)
    _same(n, t)
    t.pow(2).sum().backward()
    n.pow(2).sum().backward()
    for a, b in ((nx, tx), (nw, tw), (nb, tb)):
        _same(a.grad, b.grad)


def test_convolution_errors_and_gradcheck():
    torch = pytest.importorskip("torch")
    x, w = (lambda lib: lib.ones(2, 3, 4, 5)), (lambda lib: lib.ones(4, 3, 2, 2))
    _raises_alike(torch, lambda lib: lib.convolution(x(lib)[0], w(lib), None, [1, 1], [0, 0],
                                                     [1, 1], False, [0, 0], 1))
    _raises_alike(torch, lambda lib: lib.convolution(x(lib), w(lib), None, [1, 1, 1], [0, 0],
                                                     [1, 1], False, [0, 0], 1))
    _raises_alike(torch, lambda lib: lib.convolution(x(lib), w(lib), None, 1, 0, 1, False, 0, 1))
    _raises_alike(torch, lambda lib: lib.convolution(x(lib), w(lib), None, [1], [0], [1], 0, [0],
                                                     1))
    _raises_alike(torch, lambda lib: lib.convolution(x(lib), w(lib), None, [1], [0], [1], False,
                                                     [0], 1.0))
    xi = ndgrad.tensor(_arr(1, 2, 4), requires_grad=True)
    wi = ndgrad.tensor(_arr(2, 2, 2), requires_grad=True)
    for tr in (False, True):
        fn = lambda x, w: ndgrad.convolution(x, w, None, [1], [0], [1], tr, [0], 1)  # noqa: E731
        assert gradcheck(fn, (xi, wi)) and gradgradcheck(fn, (xi, wi))
    # an empty batch
    e = ndgrad.zeros(0, 2, 4, dtype=ndgrad.float64, requires_grad=True)
    out = ndgrad.convolution(e, wi, None, [1], [0], [1], False, [0], 1)
    assert tuple(out.shape) == (0, 2, 3)


# ---------------------------------------------------------------- the namespace

def test_names_are_public_and_refuse_junk_as_pytorch():
    torch = pytest.importorskip("torch")
    from ndgrad.nn import _aten as _torch_nn_aten
    for name in _torch_nn_aten.__all__:
        assert callable(getattr(ndgrad, name))
        for junk in (None, "x"):
            _raises_alike(torch, lambda lib: getattr(lib, name)(junk))


def test_native_batch_norm_out():
    torch = pytest.importorskip("torch")
    x = _arr(4, 3, 5)
    res = []
    for lib in (torch, ndgrad):
        outs = tuple(lib.empty(0, dtype=lib.float64) for _ in range(3))
        rm, rv = lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)
        r = lib.native_batch_norm(lib.tensor(x), None, None, rm, rv, True, 0.1, 1e-5, out=outs)
        assert all(a is b for a, b in zip(r, outs))
        res.append((outs, rm, rv))
    for a, b in zip(res[1][0] + res[1][1:], res[0][0] + res[0][1:]):
        _same(a, b)

    def call(lib, out, x=None):
        x = lib.ones(4, 3, 5) if x is None else x
        return lib.native_batch_norm(x, None, None, None, None, True, 0.1, 1e-5, out=out)
    _raises_alike(torch, lambda lib: call(lib, lib.empty(0)))
    _raises_alike(torch, lambda lib: lib.native_batch_norm(lib.ones(4, 3, 5), None, None,
                                                           lib.zeros(3), None, True, 0.1, 1e-5))
    _raises_alike(torch, lambda lib: call(lib, (lib.empty(0), lib.empty(0))))
    _raises_alike(torch, lambda lib: call(lib, (lib.empty(0, dtype=lib.float64),) +
                                          (lib.empty(0),) * 2))
    _raises_alike(torch, lambda lib: call(lib, (lib.empty(0),) * 3,
                                          lib.ones(4, 3, 5, requires_grad=True)))


@pytest.mark.parametrize("interp", [0, 1])
@pytest.mark.parametrize("padding", [0, 1, 2])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sampler_3d_matches_pytorch(interp, padding, align):
    torch = pytest.importorskip("torch")
    x, g = _arr(2, 3, 4, 5, 3), _arr(2, 2, 3, 2, 3, low=-1.3, high=1.3)
    # (nearest: PyTorch's grid gradient is zeros; ndgrad's is None)
    _grid_sampler_matches(torch, x, g, ("grid_sampler", "grid_sampler_3d"), interp, padding,
                          align, grid_grad=interp == 0)


def test_grid_sampler_3d_gradcheck():
    x = ndgrad.tensor(_arr(1, 2, 2, 3, 2), requires_grad=True)
    g = ndgrad.tensor(_arr(1, 1, 2, 2, 3, low=-0.9, high=0.9), requires_grad=True)
    fn = lambda x, g: ndgrad.grid_sampler_3d(x, g, 0, 1, True)  # noqa: E731
    assert gradcheck(fn, (x, g)) and gradgradcheck(fn, (x, g))
    e = ndgrad.zeros(0, 2, 2, 3, 2, dtype=ndgrad.float64, requires_grad=True)
    out = ndgrad.grid_sampler_3d(e, g[:0].detach(), 0, 0, False)
    assert tuple(out.shape) == (0, 2, 1, 2, 2)


def test_aten_broadcasting_and_edge_values():
    """Where the ATen forms differ from nn.functional's: broadcasting, a negative target."""
    torch = pytest.importorskip("torch")
    x, t = _arr(2, 3), _arr(3, low=0)
    # (the first: an input that the target broadcasts; PyTorch's own backward refuses it)
    for grad, call in (
            (False, lambda lib, x, t: lib.binary_cross_entropy_with_logits(x[0], x, t, None, 0)),
            (True, lambda lib, x, t: lib.binary_cross_entropy_with_logits(
                x, x.detach().sigmoid(), t, t + 0.5, 0)),
            (True, lambda lib, x, t: lib.kl_div(x, x[0], 0)),          # negative target: nan
            (True, lambda lib, x, t: lib.kl_div(x[0], x, 2, log_target=True))):
        (tx, nx), (tt, nt) = _both(torch, x, True), _both(torch, t)
        tr, nr = call(torch, tx, tt), call(ndgrad, nx, nt)
        _same(nr, tr)
        if grad:
            tr.nansum().backward()
            nr.nansum().backward()
            _same(nx.grad, tx.grad)
    for call in (lambda lib: lib.binary_cross_entropy_with_logits(lib.ones(2, 3), lib.ones(3)),
                 lambda lib: lib.binary_cross_entropy_with_logits(lib.ones(2, 3), lib.ones(2, 2)),
                 lambda lib: lib.triplet_margin_loss(lib.ones(2, 3), lib.ones(2, 3), lib.ones(3)),
                 lambda lib: lib.max_pool1d_with_indices(lib.ones(1, 1, 4), 2, 0),
                 lambda lib: lib.embedding_bag(lib.ones(3, 2), lib.tensor([0, 3]),
                                               lib.tensor([0, 1]), False, 1),
                 lambda lib: lib.embedding_bag(lib.ones(3, 2), lib.tensor([0, -1]),
                                               lib.tensor([0, 1])),
                 lambda lib: lib.embedding_bag(lib.ones(3, 2), lib.tensor([0, 1, 2]),
                                               lib.tensor([0, 2, 1])),
                 lambda lib: lib.grid_sampler(lib.ones(1, 1, 2, 2), lib.zeros(1, 1, 1, 2), 1.0,
                                              0, False),
                 lambda lib: lib.grid_sampler_2d(lib.ones(1, 1, 2, 2), lib.zeros(1, 1, 1, 2), 0,
                                                 None, False),
                 lambda lib: lib.grid_sampler(lib.ones(1, 1, 2, 2), lib.zeros(1, 1, 1, 2), 0, 0,
                                              0),
                 lambda lib: lib.affine_grid_generator(lib.ones(2, 2, 3), [2, 3, 4, 5], None),
                 lambda lib: lib.cosine_embedding_loss(lib.ones(2, 3), lib.ones(2, 3),
                                                       lib.ones(())),
                 lambda lib: lib.cosine_embedding_loss(lib.ones(3), lib.ones(3), lib.ones(1)),
                 lambda lib: lib.cosine_embedding_loss(lib.ones(2, 3), lib.ones(2, 3),
                                                       lib.ones(2, 1)),
                 lambda lib: lib.kl_div(lib.ones(2, dtype=lib.long), lib.ones(2)),
                 lambda lib: lib.kl_div(lib.ones(2), lib.ones(2, dtype=lib.long)),
                 lambda lib: lib.binary_cross_entropy_with_logits(lib.ones(2, dtype=lib.long),
                                                                  lib.ones(2)),
                 lambda lib: lib.native_layer_norm(lib.ones(2, 3), 3, None, None, 1e-5),
                 lambda lib: lib.native_layer_norm(lib.ones(2, 3), [3], lib.ones(2), None, 1e-5),
                 lambda lib: lib.native_layer_norm(lib.ones(2, 3), [3], None, lib.ones(2), 1e-5),
                 lambda lib: lib.native_dropout(lib.ones(2, dtype=lib.long), 0.5, True),
                 lambda lib: lib.native_dropout(lib.ones(2), 0.5, 1),
                 lambda lib: lib.adaptive_max_pool1d(lib.ones(2, 3, 4), [2, 2])):
        _raises_alike(torch, call)
    with pytest.raises(RuntimeError, match="interpolation_mode must be 0"):
        ndgrad.grid_sampler(ndgrad.ones(1, 1, 2, 2), ndgrad.zeros(1, 1, 1, 2), -1, 0, False)


def test_softmax_backward_data_as_pytorchs():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    g, x = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))
    for dim in (0, 1, -1):
        for dt in ("float64", "float32"):
            outs = []
            for lib in (torch, ndgrad):
                o = lib.softmax(lib.tensor(x, dtype=getattr(lib, dt)), dim)
                r = lib._softmax_backward_data(lib.tensor(g, dtype=getattr(lib, dt)), o, dim,
                                               getattr(lib, dt))
                outs.append((str(r.dtype), r.numpy()))
            assert outs[0][0] == outs[1][0]
            np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-6, atol=1e-6)
    # it is softmax's vector-Jacobian product
    xs = ndgrad.tensor(x, requires_grad=True)
    o = ndgrad.softmax(xs, 1)
    (grad,) = ndgrad.autograd.grad(o, xs, ndgrad.tensor(g))
    np.testing.assert_allclose(ndgrad._softmax_backward_data(ndgrad.tensor(g), o.detach(), 1,
                                                             ndgrad.float64).numpy(),
                               grad.numpy(), rtol=1e-12)
