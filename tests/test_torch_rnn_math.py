"""torch-level RNN operations (lstm, gru, rnn_tanh, rnn_relu and their cells) and numerical
functions (gradient, lu_solve, lu_unpack, histogramdd, nuclear_norm, frobenius_norm,
norm_except_dim): values, dtypes, shapes, gradients and errors against PyTorch, plus gradcheck."""
import warnings

import numpy as np
import pytest

import ndgrad
from ndgrad.autograd import gradcheck, gradgradcheck


def _nd(t, grad=None):
    """ndgrad copy of a torch tensor (same values, dtype; requires_grad as given or as t)."""
    out = ndgrad.tensor(t.detach().numpy())
    return out.requires_grad_(t.requires_grad if grad is None else grad)


def _same(a, b, rtol=1e-6, atol=1e-8):
    """torch tensor a and ndgrad tensor b: same shape, dtype, values."""
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype) == str(b.dtype)
    np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=rtol, atol=atol)


def _raises_alike(torch, call):
    """call(lib) raises in both libraries: same type, same message."""
    with pytest.raises(Exception) as expected, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        call(torch)
    with pytest.raises(type(expected.value)) as got, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        call(ndgrad)
    assert str(got.value) == str(expected.value)


# ---------------------------------------------------------------- RNN

_MODULES = [("lstm", "LSTM", {}), ("lstm", "LSTM", {"proj_size": 2}), ("gru", "GRU", {}),
            ("rnn_tanh", "RNN", {}), ("rnn_relu", "RNN", {"nonlinearity": "relu"})]


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("fn,cls,kw", _MODULES)
def test_rnn_layers_match_torch(fn, cls, kw, bias, bidirectional, packed):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    module = getattr(torch.nn, cls)(3, 4, 2, bias=bias, bidirectional=bidirectional,
                                    dtype=torch.float64, **kw)
    params = [w.detach().clone().requires_grad_() for w in module._flat_weights]
    D, H, B = 2 if bidirectional else 1, kw.get("proj_size", 4), 3
    x = torch.randn(5, B, 3, dtype=torch.float64, requires_grad=True)
    h = torch.randn(2 * D, B, H, dtype=torch.float64, requires_grad=True)
    c = torch.randn(2 * D, B, 4, dtype=torch.float64, requires_grad=True)
    leaves = params + [x, h] + ([c] if fn == "lstm" else [])
    nd_leaves = [_nd(t) for t in leaves]

    def run(lib, ls):
        p, x, h = ls[:len(params)], ls[len(params)], ls[len(params) + 1]
        hx = (h, ls[-1]) if fn == "lstm" else h
        if packed:
            seq = lib.nn.utils.rnn.pack_padded_sequence(x, [5, 3, 2])
            return getattr(lib, fn)(seq.data, seq.batch_sizes, hx, p, bias, 2, 0.0, False,
                                    bidirectional)
        return getattr(lib, fn)(x.transpose(0, 1), hx, p, bias, 2, 0.0, False, bidirectional,
                                True)

    want, got = run(torch, leaves), run(ndgrad, nd_leaves)
    assert len(got) == len(want) == (3 if fn == "lstm" else 2)
    for a, b in zip(want, got):
        _same(a, b)
    # a weighted sum, so that every output element gets its own gradient
    sum((o * torch.arange(o.numel(), dtype=o.dtype).reshape(o.shape)).sum()
        for o in want).backward()
    sum((o * ndgrad.arange(o.numel(), dtype=o.dtype).reshape(o.shape)).sum()
        for o in got).backward()
    for a, b in zip(leaves, nd_leaves):
        _same(a.grad, b.grad)


def _flat(module):
    """nn.RNNBase's parameters in _flat_weights order (ndgrad's modules keep only the names)."""
    return [getattr(module, n) for n in module._flat_weights_names]


def test_rnn_matches_ndgrad_module():
    """The functions and nn.LSTM compute alike (they share the step code)."""
    ndgrad.manual_seed(0)
    m = ndgrad.nn.LSTM(3, 4, 2, bidirectional=True)
    x = ndgrad.randn(6, 2, 3)
    h = ndgrad.randn(4, 2, 4), ndgrad.randn(4, 2, 4)
    out, (h_n, c_n) = m(x, h)
    got = ndgrad.lstm(x, h, _flat(m), True, 2, 0.0, False, True, False)
    for a, b in zip((out, h_n, c_n), got):
        assert ndgrad.equal(a, b)
    # dropout between layers only when training
    w = _flat(ndgrad.nn.GRU(3, 4, 2, bidirectional=True))
    plain = ndgrad.gru(x, h[0], w, True, 2, 0.9, False, True, False)[0]
    assert ndgrad.equal(plain, ndgrad.gru(x, h[0], w, True, 2, 0.0, True, True, False)[0])
    drop = ndgrad.gru(x, h[0], w, True, 2, 0.9, True, True, False)[0]
    assert drop.shape == (6, 2, 8) and not ndgrad.allclose(drop, plain)


@pytest.mark.parametrize("fn,cls", [("lstm_cell", "LSTMCell"), ("gru_cell", "GRUCell"),
                                    ("rnn_tanh_cell", "RNNCell"), ("rnn_relu_cell", "RNNCell")])
@pytest.mark.parametrize("bias", [True, False])
def test_cells_match_torch(fn, cls, bias):
    torch = pytest.importorskip("torch")
    torch.manual_seed(1)
    cell = getattr(torch.nn, cls)(3, 4, bias=bias, dtype=torch.float64)
    w = [p.detach().clone().requires_grad_() for p in cell.parameters()]
    x = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    h = torch.randn(2, 4, dtype=torch.float64, requires_grad=True)
    c = torch.randn(2, 4, dtype=torch.float64, requires_grad=True)
    leaves = [x, h, c] + w
    nd_leaves = [_nd(t) for t in leaves]

    def run(lib, ls):
        x, h, c, w = ls[0], ls[1], ls[2], ls[3:]
        out = getattr(lib, fn)(x, (h, c) if fn == "lstm_cell" else h, *w)
        return out if fn == "lstm_cell" else (out, c * 0)
    want, got = run(torch, leaves), run(ndgrad, nd_leaves)
    for a, b in zip(want, got):
        _same(a, b)
    (want[0].sum() + (want[1] * 2).sum()).backward()
    (got[0].sum() + (got[1] * 2).sum()).backward()
    for a, b in zip(leaves, nd_leaves):
        _same(a.grad, b.grad)


def test_rnn_empty_batch_matches_torch():
    torch = pytest.importorskip("torch")
    w = [p.detach() for p in torch.nn.LSTM(3, 4, bidirectional=True).parameters()]
    x, h = torch.randn(5, 0, 3), torch.zeros(2, 0, 4)
    want = torch.lstm(x, (h, h), w, True, 1, 0.0, False, True, False)
    got = ndgrad.lstm(_nd(x), (_nd(h), _nd(h)), _c(ndgrad, w), True, 1, 0.0, False, True, False)
    for a, b in zip(want, got):
        _same(a, b)
    want = torch.lstm_cell(x[0], (h[0], h[0]), *w[:4])
    for a, b in zip(want, ndgrad.lstm_cell(_nd(x[0]), (_nd(h[0]), _nd(h[0])), *_c(ndgrad, w[:4]))):
        _same(a, b)


def test_rnn_gradcheck():
    ndgrad.manual_seed(0)
    x = ndgrad.randn(3, 2, 2, dtype=ndgrad.float64, requires_grad=True)
    h = ndgrad.randn(2, 2, 3, dtype=ndgrad.float64, requires_grad=True)
    c = ndgrad.randn(2, 2, 3, dtype=ndgrad.float64, requires_grad=True)
    p = [w.detach().double().requires_grad_()
         for w in _flat(ndgrad.nn.LSTM(2, 3, bidirectional=True))]
    fn = lambda x, h, c, *p: ndgrad.lstm(x, (h, c), p, True, 1, 0.0, False, True, False)
    assert gradcheck(fn, (x, h, c, *p))
    g = [w.detach().double().requires_grad_() for w in ndgrad.nn.GRUCell(2, 3).parameters()]
    cell = lambda x, h, *w: ndgrad.gru_cell(x, h, *w)
    assert gradcheck(cell, (x[0], h[0], *g))
    assert gradgradcheck(cell, (x[0], h[0], *g))


def test_rnn_errors_match_torch():
    torch = pytest.importorskip("torch")
    x, h = torch.randn(2, 3), torch.randn(2, 4)
    w = [p.detach() for p in torch.nn.LSTMCell(3, 4).parameters()]
    g = [p.detach() for p in torch.nn.GRUCell(3, 4).parameters()]
    cases = [
        lambda L: L.lstm_cell(_c(L, x), (_c(L, h),), *_c(L, w)),
        lambda L: L.lstm_cell(_c(L, x[:, :2]), (_c(L, h), _c(L, h)), *_c(L, w)),
        lambda L: L.lstm_cell(_c(L, x), (_c(L, h[:1]), _c(L, h)), *_c(L, w)),
        lambda L: L.lstm_cell(_c(L, x), (_c(L, h[:, :3]), _c(L, h)), *_c(L, w)),
        lambda L: L.lstm_cell(_c(L, x), (_c(L, h), _c(L, h[:, :3])), *_c(L, w)),
        lambda L: L.gru_cell(_c(L, x), _c(L, h[:1]), *_c(L, g)),
        lambda L: L.rnn_tanh_cell(_c(L, x), _c(L, h[:, :2]), *_c(L, g)),
        lambda L: L.gru_cell(_c(L, x), _c(L, h), *_c(L, w)),
        lambda L: L.gru_cell(_c(L, x[:, :2]), _c(L, h), *_c(L, g)),
        lambda L: L.gru_cell(_c(L, x), _c(L, h[:, :3]), *_c(L, g)),
        lambda L: L.gru_cell(_c(L, x[0]), _c(L, h[0]), *_c(L, g)),
        lambda L: L.lstm(_c(L, x[None]), (_c(L, h[None]),), _c(L, w), True, 1, 0.0, False,
                         False, False),
        lambda L: L.lstm(_c(L, x[None]), (_c(L, h[None]), _c(L, h[None])), _c(L, w[:3]), True,
                         1, 0.0, False, False, False),
        lambda L: L.gru(_c(L, x[None]), _c(L, h[None]), _c(L, g), True, 1, 0.0, False, True,
                        False),
        lambda L: L.gru(_c(L, x[None]), _c(L, h[None]), _c(L, g), True, 2, 0.0, False, False,
                        False),
        lambda L: L.gru(_c(L, x[None]), _c(L, h[None].expand(2, 2, 4)), _c(L, g + g), True, 2,
                        0.0, False, True, False),
        lambda L: L.gru(_c(L, x[None]), _c(L, h[None]), _c(L, g + g), True, 1, 0.0, False,
                        False, False),
        lambda L: L.lstm(_c(L, x[None]), (_c(L, h[None]), _c(L, h[None])), _c(L, w), True, 2,
                         0.0, False, False, False),
        lambda L: L.lstm(_c(L, x[None]), (_c(L, h[None]), _c(L, h[None])), _c(L, w + w), True,
                         2, 0.0, False, False, False),  # one layer of states for two
        lambda L: L.lstm(_c(L, x), (_c(L, h), _c(L, h)), _c(L, w), True, 1, 0.0, False, False,
                         False),  # 2-d states
        lambda L: L.lstm(_c(L, x[None][:0]), (_c(L, h[None]), _c(L, h[None])), _c(L, w), True,
                         1, 0.0, False, False, False),
    ]
    for call in cases:
        _raises_alike(torch, call)


def _c(lib, t):
    """t (a torch tensor or a list of them) in lib."""
    if isinstance(t, (list, tuple)):
        return [_c(lib, u) for u in t]
    return t if lib.__name__ == "torch" or not hasattr(t, "detach") else _nd(t, False)


# ---------------------------------------------------------------- gradient

_GRADIENT_CASES = [
    ((3, 4), {}), ((3, 4), {"spacing": 2.0}), ((3, 4), {"spacing": [2.0, 0.5]}),
    ((3, 4), {"dim": 1}), ((3, 4), {"dim": -1, "spacing": 3}), ((3, 4), {"dim": [1, 0]}),
    ((3, 4), {"dim": (0,), "spacing": [0.5]}), ((4, 3), {"edge_order": 2}),
    ((5,), {"edge_order": 2, "spacing": 0.25}), ((2, 3), {"spacing": 1}),
    ((4, 0), {"dim": 0}), ((), {}),
]


@pytest.mark.parametrize("shape,kw", _GRADIENT_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gradient_matches_torch(shape, kw, dtype):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    x = torch.randn(shape, dtype=getattr(torch, dtype))
    want, got = torch.gradient(x, **kw), ndgrad.gradient(_nd(x), **kw)
    assert isinstance(got, tuple) and len(got) == len(want)
    for a, b in zip(want, got):
        _same(a, b, rtol=1e-5)


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_coordinates_and_integers_match_torch(edge_order):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    x = torch.randn(4, 5, dtype=torch.float64)
    coords = [torch.tensor([0.0, 0.5, 2.0, 2.25], dtype=torch.float64),
              torch.tensor([1, 2, 4, 7, 11])]  # integer coordinates promote
    kw = {"spacing": coords, "edge_order": edge_order}
    for a, b in zip(torch.gradient(x, **kw), ndgrad.gradient(_nd(x), spacing=_c(ndgrad, coords),
                                                             edge_order=edge_order)):
        _same(a, b)
    a = torch.gradient(x, spacing=coords[1:], dim=1, edge_order=edge_order)
    b = ndgrad.gradient(_nd(x), spacing=_c(ndgrad, coords[1:]), dim=1, edge_order=edge_order)
    _same(a[0], b[0])
    n = torch.arange(6) ** 2  # integer input: float results
    for kw in ({}, {"spacing": 2}, {"spacing": [torch.arange(6)]}):
        nd_kw = {k: _c(ndgrad, v) for k, v in kw.items()}
        _same(torch.gradient(n, edge_order=edge_order, **kw)[0],
              ndgrad.gradient(_nd(n), edge_order=edge_order, **nd_kw)[0])


def test_gradient_gradcheck():
    x = ndgrad.randn(4, 3, dtype=ndgrad.float64, requires_grad=True)
    t = ndgrad.tensor([0.0, 1.0, 1.5, 3.0], dtype=ndgrad.float64, requires_grad=True)
    for kw in ({}, {"edge_order": 2, "spacing": 0.5}):
        assert gradcheck(lambda x: ndgrad.gradient(x, **kw), (x,))
        assert gradgradcheck(lambda x: ndgrad.gradient(x, **kw), (x,))
    # through the coordinates as well
    fn = lambda x, t: ndgrad.gradient(x, spacing=[t], dim=0, edge_order=2)
    assert gradcheck(fn, (x, t))
    assert gradgradcheck(fn, (x, t))
    e = ndgrad.randn(3, 0, dtype=ndgrad.float64, requires_grad=True)
    assert gradcheck(lambda e: ndgrad.gradient(e, dim=0), (e,))


def test_gradient_errors_match_torch():
    torch = pytest.importorskip("torch")
    x = torch.randn(3, 4)
    cases = [
        {"spacing": [2.0]}, {"spacing": [1, 2, 3]}, {"dim": 1, "spacing": [2.0, 3.0]},
        {"spacing": (torch.arange(3.0),)}, {"edge_order": 3}, {"dim": 2}, {"dim": (0, 0)},
        {"dim": [0, -3]}, {"spacing": [torch.tensor(2.0), torch.tensor(3.0)]},
        {"spacing": (torch.arange(3.0).reshape(3, 1), torch.arange(4.0))},
    ]
    for kw in cases:
        _raises_alike(torch, lambda L: L.gradient(_c(L, x), **{k: _c(L, v) if k == "spacing"
                                                              else v for k, v in kw.items()}))
    for shape, kw in (((2, 4), {"edge_order": 2}), ((1, 4), {}), ((0, 3), {})):
        _raises_alike(torch, lambda L: L.gradient(_c(L, torch.randn(shape)), **kw))
    _raises_alike(torch, lambda L: L.gradient(_c(L, torch.arange(4, dtype=torch.uint8))))


# ---------------------------------------------------------------- lu_unpack, lu_solve

@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (3, 5), (5, 3), (2, 0, 0)])
def test_lu_unpack_matches_torch(shape):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    A = torch.randn(shape, dtype=torch.float64)
    LU, piv = torch.linalg.lu_factor(A)
    for flags in ((True, True), (True, False), (False, True), (False, False)):
        want = torch.lu_unpack(LU, piv, *flags)
        got = ndgrad.lu_unpack(_nd(LU), _nd(piv), *flags)
        assert type(got).__name__ == "lu_unpack" and got._fields == ("P", "L", "U")
        for a, b in zip(want, got):
            _same(a, b)
    P, L, U = ndgrad.lu_unpack(*ndgrad.linalg.lu_factor(_nd(A)))
    np.testing.assert_allclose((P @ L @ U).numpy(), A.numpy(), atol=1e-12)
    # integer LU data unpacks too (as in PyTorch)
    want = torch.lu_unpack(LU.round().int(), piv)
    for a, b in zip(want, ndgrad.lu_unpack(_nd(LU.round().int()), _nd(piv))):
        _same(a, b)


def test_lu_unpack_solve_gradcheck():
    A = ndgrad.randn(3, 3, dtype=ndgrad.float64) + 3 * ndgrad.eye(3, dtype=ndgrad.float64)
    LU, piv = ndgrad.linalg.lu_factor(A)
    LU.requires_grad_()
    fn = lambda LU: ndgrad.lu_unpack(LU, piv)[1:]
    assert gradcheck(fn, (LU,))
    assert gradgradcheck(fn, (LU,))
    b = ndgrad.randn(2, 3, 2, dtype=ndgrad.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solve = lambda b, LU: ndgrad.lu_solve(b, LU, piv)
        assert gradcheck(solve, (b, LU))
        assert gradgradcheck(solve, (b, LU))
        e = ndgrad.zeros(3, 0, dtype=ndgrad.float64, requires_grad=True)
        assert gradcheck(solve, (e, LU))


def test_lu_solve_matches_torch():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    A = torch.randn(2, 3, 3, dtype=torch.float64)
    b = torch.randn(2, 3, 2, dtype=torch.float64)
    LU, piv = torch.linalg.lu_factor(A)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for bb in (b, b[0]):  # b's batch broadcasts against LU's
            _same(torch.lu_solve(bb, LU, piv), ndgrad.lu_solve(_nd(bb), _nd(LU), _nd(piv)))
    cases = [(b[..., 0], LU, piv), (b.float(), LU, piv), (b, LU, piv.long()),
             (torch.randn(2, 4, 2, dtype=torch.float64), LU, piv), (b, LU[..., :2], piv),
             (b, LU, piv[0]), (b, LU.int(), piv), (b, LU[0, 0], piv)]
    for args in cases:
        _raises_alike(torch, lambda L: L.lu_solve(*_c(L, args)))


def test_lu_unpack_errors_match_torch():
    torch = pytest.importorskip("torch")
    LU, piv = torch.linalg.lu_factor(torch.randn(2, 3, 3))
    for args in ((LU, piv.long()), (LU[0, 0], piv[0]), (LU, piv.float()),
                 (LU, piv * 0), (LU, piv + 3)):
        _raises_alike(torch, lambda L: L.lu_unpack(*_c(L, args)))


# ---------------------------------------------------------------- histogramdd

_HIST_CASES = [
    (3, {}), ([3, 4], {}), ([3, 4], {"range": [0.0, 1.0, 0.0, 2.0]}), (2, {"density": True}),
    ([2, 5], {"weight": "w", "density": True}), (3, {"weight": "w"}),
    ("edges", {}), ("edges", {"density": True, "weight": "w"}),
]


@pytest.mark.parametrize("bins,kw", _HIST_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histogramdd_matches_torch(bins, kw, dtype):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    dt = getattr(torch, dtype)
    x = torch.rand(4, 5, 2, dtype=dt) * 1.2 - 0.1
    x[0, 0] = torch.tensor([0.5, 1.0])  # on an inner edge and on the last edge
    w = torch.rand(4, 5, dtype=dt)
    kw_t = {k: (w if v == "w" else v) for k, v in kw.items()}
    kw_n = {k: (_nd(w) if v == "w" else v) for k, v in kw.items()}
    if bins == "edges":
        bins = [torch.tensor([0.0, 0.25, 0.5, 1.0], dtype=dt), torch.tensor([0.0, 1.0], dtype=dt)]
    want = torch.histogramdd(x, bins, **kw_t)
    got = ndgrad.histogramdd(_nd(x), _c(ndgrad, bins) if isinstance(bins, list) and
                             not isinstance(bins[0], int) else bins, **kw_n)
    assert type(got).__name__ == "histogramdd" and got._fields == ("hist", "bin_edges")
    _same(want.hist, got.hist, rtol=1e-5)
    assert isinstance(got.bin_edges, tuple) and len(got.bin_edges) == len(want.bin_edges)
    for a, b in zip(want.bin_edges, got.bin_edges):
        _same(a, b)


def test_histogramdd_degenerate_inputs_match_torch():
    torch = pytest.importorskip("torch")
    for x, bins in ((torch.ones(4, 2), 3), (torch.rand(0, 3), 2), (torch.rand(5, 1), [4]),
                    (torch.rand(6, 2), [torch.tensor([0.5, 0.6]), torch.tensor([0.0, 1.0])])):
        want = torch.histogramdd(x, bins)
        got = ndgrad.histogramdd(_nd(x), _c(ndgrad, bins) if isinstance(bins, list) and
                                 isinstance(bins[0], torch.Tensor) else bins)
        _same(want.hist, got.hist)
        for a, b in zip(want.bin_edges, got.bin_edges):
            _same(a, b)


def test_histogramdd_errors_match_torch():
    torch = pytest.importorskip("torch")
    x = torch.rand(10, 2)
    cases = [(x, [3, 4], {"range": [0.0, 1.0]}), (x, [3, 4, 5], {}),
             (x, 3, {"weight": torch.rand(9)}), (x[0], 3, {}), (x.int(), 3, {}), (x, 0, {}),
             (x, [3, -1], {}), (x, 3, {"range": [1.0, 0.0, 0.0, 1.0]}),
             (x, 3, {"weight": torch.rand(10).double()}),
             (x, 3, {"range": [0.0, float("inf"), 0.0, 1.0]}),
             (x, [torch.tensor([0.5]), torch.tensor([0.0, 1.0])], {})]
    for inp, bins, kw in cases:
        _raises_alike(torch, lambda L: L.histogramdd(_c(L, inp), _c(L, bins),
                                                     **{k: _c(L, v) if k == "weight" else v
                                                        for k, v in kw.items()}))


# ---------------------------------------------------------------- deprecated norms

def test_norms_match_torch():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    x = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)
    calls = [("nuclear_norm", (), {}), ("nuclear_norm", (True,), {}),
             ("nuclear_norm", ((0, 2),), {}), ("nuclear_norm", ((0, 2), True), {}),
             ("nuclear_norm", (), {"dim": [1, 2], "keepdim": True}),
             ("frobenius_norm", ((0, 2),), {}), ("frobenius_norm", ((0, 2), True), {}),
             ("frobenius_norm", (1,), {}), ("frobenius_norm", ((),), {}),
             ("norm_except_dim", (), {}), ("norm_except_dim", (2, 1), {}),
             ("norm_except_dim", (3, 2), {}), ("norm_except_dim", (2, -1), {}),
             ("norm_except_dim", (1, -2), {}), ("norm_except_dim", (), {"pow": 1, "dim": 0})]
    for name, args, kw in calls:
        xn = _nd(x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = getattr(torch, name)(x, *args, **kw)
            got = getattr(ndgrad, name)(xn, *args, **kw)
        _same(want, got)
        x.grad = None
        want.sum().backward()
        got.sum().backward()
        _same(x.grad, xn.grad)
    c = torch.randn(3, 3, dtype=torch.complex128)
    _same(torch.frobenius_norm(c, (0, 1)), ndgrad.frobenius_norm(_nd(c), (0, 1)))


def test_norms_warn_and_gradcheck():
    x = ndgrad.randn(3, 4, dtype=ndgrad.float64, requires_grad=True)
    for fn in (lambda x: ndgrad.nuclear_norm(x), lambda x: ndgrad.frobenius_norm(x, (0, 1)),
               lambda x: ndgrad.norm_except_dim(x, 2, 1), lambda x: ndgrad.norm_except_dim(x, 3)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert gradcheck(fn, (x,))
            assert gradgradcheck(fn, (x,))
    s = ndgrad.tensor(2.0, dtype=ndgrad.float64, requires_grad=True)
    assert gradcheck(lambda s: ndgrad.norm_except_dim(s, 2, -1), (s,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e = ndgrad.zeros(0, 3, dtype=ndgrad.float64, requires_grad=True)
        assert gradcheck(lambda e: ndgrad.frobenius_norm(e, (0,)), (e,))


def test_norm_errors_match_torch():
    torch = pytest.importorskip("torch")
    x = torch.randn(2, 3, 4)
    cases = [lambda L: L.nuclear_norm(_c(L, x), (0,)), lambda L: L.nuclear_norm(_c(L, x), (0, 0)),
             lambda L: L.nuclear_norm(_c(L, x[0].int())),
             lambda L: L.nuclear_norm(_c(L, x[0, 0])),
             lambda L: L.frobenius_norm(_c(L, x), (0, 1, 2)),
             lambda L: L.frobenius_norm(_c(L, x), (0, 0)),
             lambda L: L.frobenius_norm(_c(L, x.int()), (0, 1)),
             lambda L: L.norm_except_dim(_c(L, x), 2, 3),
             lambda L: L.norm_except_dim(_c(L, x), 2, -4),
             lambda L: L.norm_except_dim(_c(L, x.int()), 2, 0),
             lambda L: L.norm_except_dim(_c(L, torch.randn(())), 2, 0),
             lambda L: L.norm_except_dim(_c(L, x), 2.5, 0)]
    for call in cases:
        _raises_alike(torch, call)
