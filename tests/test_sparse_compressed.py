"""Sparse compressed tensors (CSR / CSC, ndgrad/sparse/_compressed.py): structure, printing,
conversions, products and sampled_addmm, values and gradients against PyTorch, and PyTorch's
errors for what the layouts do not support."""
import warnings

import numpy as np
import pytest

import ndgrad
from ndgrad.autograd import gradcheck, gradgradcheck

CROW, COL, VALS = [0, 2, 2, 3, 5], [0, 3, 1, 0, 2], [1.0, 2.0, 3.0, -4.0, 0.5]   # 4 x 4
DENSE = np.array([[0.0, 1.5, 0.0, 2.0], [3.0, 0.0, 0.0, 0.0], [0.0, 0.0, -1.0, 4.0]])


@pytest.fixture
def torch():
    t = pytest.importorskip("torch")
    warnings.filterwarnings("ignore", message="Sparse (CSR|invariant)")
    return t


def _csr(L, dtype="float64", **kw):
    return L.sparse_csr_tensor(L.tensor(CROW), L.tensor(COL),
                               L.tensor(VALS, dtype=getattr(L, dtype)), (4, 4), **kw)


def _csc(L, **kw):
    return L.sparse_csc_tensor(L.tensor(CROW), L.tensor(COL), L.tensor(VALS, dtype=L.float64),
                               (4, 4), **kw)


def _np(t):
    return t.detach().numpy()


def _same_sparse(a, b):
    assert a.layout.__repr__() == repr(b.layout) and tuple(a.shape) == tuple(b.shape)
    if repr(b.layout) == "torch.sparse_coo":
        a, b = a.coalesce(), b.coalesce()
        np.testing.assert_array_equal(_np(a.indices()), _np(b.indices()))
    elif repr(b.layout) == "torch.sparse_csr":
        np.testing.assert_array_equal(_np(a.crow_indices()), _np(b.crow_indices()))
        np.testing.assert_array_equal(_np(a.col_indices()), _np(b.col_indices()))
    else:
        np.testing.assert_array_equal(_np(a.ccol_indices()), _np(b.ccol_indices()))
        np.testing.assert_array_equal(_np(a.row_indices()), _np(b.row_indices()))
    np.testing.assert_allclose(_np(a.values()), _np(b.values()), rtol=1e-12, atol=1e-12)


def test_structure_and_repr_match_pytorch(torch):
    for make in (_csr, _csc):
        for kw in ({}, {"requires_grad": True}):
            s, t = make(ndgrad, **kw), make(torch, **kw)
            assert repr(s) == repr(t)
            assert (s.layout is (ndgrad.sparse_csr if make is _csr else ndgrad.sparse_csc))
            assert (s.is_sparse, s.is_sparse_csr, s._nnz(), s.sparse_dim(), s.dense_dim(),
                    tuple(s.shape), s.dim(), s.requires_grad) == \
                (t.is_sparse, t.is_sparse_csr, t._nnz(), t.sparse_dim(), t.dense_dim(),
                 tuple(t.shape), t.dim(), t.requires_grad)
    assert repr(_csr(ndgrad, "float32")) == repr(_csr(torch, "float32"))
    assert repr(ndgrad.sparse_csr) == "torch.sparse_csr" and not ndgrad.ones(2).is_sparse_csr
    e = [L.sparse_csr_tensor(L.tensor([0, 0, 0]), L.tensor([], dtype=L.int64), L.tensor([]),
                             (2, 3)) for L in (ndgrad, torch)]
    assert repr(e[0]) == repr(e[1])
    ints = [L.sparse_csr_tensor(L.tensor([0, 1]), L.tensor([0]), L.tensor([7])) for L in
            (ndgrad, torch)]
    assert repr(ints[0]) == repr(ints[1])       # size inferred, int64 values


def test_conversions_match_pytorch(torch):
    for L_dense in (DENSE, DENSE.T.copy()):
        n, t = ndgrad.tensor(L_dense), torch.tensor(L_dense)
        _same_sparse(n.to_sparse_csr(), t.to_sparse_csr())
        _same_sparse(n.to_sparse_csc(), t.to_sparse_csc())
        _same_sparse(n.to_sparse(layout=ndgrad.sparse_csc), t.to_sparse(layout=torch.sparse_csc))
        _same_sparse(n.to_sparse().to_sparse_csr(), t.to_sparse().to_sparse_csr())
        _same_sparse(n.to_sparse().to_sparse_csc(), t.to_sparse().to_sparse_csc())
    for make in (_csr, _csc):
        s, t = make(ndgrad), make(torch)
        np.testing.assert_array_equal(_np(s.to_dense()), _np(t.to_dense()))
        for conv in ("to_sparse_coo", "to_sparse_csr", "to_sparse_csc", "to_sparse"):
            _same_sparse(getattr(s, conv)(), getattr(t, conv)())
        _same_sparse(s.t(), t.t())
        _same_sparse(s.transpose(0, 1), t.transpose(0, 1))
        np.testing.assert_array_equal(_np(s.t().to_dense()), _np(t.to_dense()).T)


def test_conversion_gradients_flow_to_the_values(torch):
    for make in (_csr, _csc):
        grads = []
        for L in (ndgrad, torch):
            s = make(L, requires_grad=True)
            if make is _csc and L is torch:   # (PyTorch cannot: backward raises)
                s = _csr(L, requires_grad=True)
            w = L.arange(16, dtype=L.float64).reshape(4, 4)
            (s.to_sparse_coo().to_dense() * w).sum().backward()
            grads.append(s.grad)
        if make is _csr:
            _same_sparse(*grads)
            assert grads[0].layout is ndgrad.sparse_csr
        else:   # PyTorch's CSC backward raises; ndgrad's is w at the CSC pattern
            mask = _np(_csc(torch).to_dense()) != 0
            np.testing.assert_array_equal(_np(grads[0].to_dense()), np.arange(16.0).reshape(4, 4)
                                          * mask)
            assert grads[0].layout is ndgrad.sparse_csc


@pytest.mark.parametrize("make", [_csr, _csc])
@pytest.mark.parametrize("how", ["sparse.mm", "matmul", "@", "addmm", "sparse.addmm"])
def test_products_values_and_gradients(torch, make, how):
    d = np.arange(8.0).reshape(4, 2) / 3 - 1
    c = np.ones((4, 2)) * 0.5
    out, dgrad, sgrad = [], [], []
    for L in (ndgrad, torch):
        s = make(L, requires_grad=make is _csr)   # (PyTorch: no CSC values gradient)
        x = L.tensor(d, requires_grad=True)
        y = {"sparse.mm": lambda: L.sparse.mm(s, x), "matmul": lambda: L.matmul(s, x),
             "@": lambda: s @ x, "addmm": lambda: L.addmm(L.tensor(c), s, x, beta=0.5,
                                                          alpha=2.0),
             "sparse.addmm": lambda: L.sparse.addmm(L.tensor(c), s, x)}[how]()
        (y * L.arange(8, dtype=L.float64).reshape(4, 2)).sum().backward()
        out.append(_np(y))
        dgrad.append(_np(x.grad))
        sgrad.append(s.grad)
    np.testing.assert_allclose(out[0], out[1], rtol=1e-12)
    np.testing.assert_allclose(dgrad[0], dgrad[1], rtol=1e-12)
    if make is _csc:
        assert sgrad == [None, None]
    elif sgrad[1].layout == make(torch).layout:     # PyTorch's torch.mm gives a dense grad
        _same_sparse(sgrad[0], sgrad[1])
    else:
        np.testing.assert_allclose(_np(sgrad[0].to_dense()),
                                   _np(sgrad[1]) * (_np(make(torch).to_dense()) != 0))


@pytest.mark.parametrize("make", [_csr, _csc])
def test_product_gradcheck_first_and_second_order(make):
    proto = make(ndgrad)

    def f(v, d):
        return ndgrad.sparse_compressed_tensor(ndgrad.tensor(proto._cidx),
                                               ndgrad.tensor(proto._pidx), v, (4, 4),
                                               layout=proto.layout) @ d
    v = ndgrad.tensor(VALS, dtype=ndgrad.float64, requires_grad=True)
    d = ndgrad.tensor(np.linspace(-1, 1, 12).reshape(4, 3), requires_grad=True)
    assert gradcheck(f, (v, d)) and gradgradcheck(f, (v, d))


def test_uncoalesced_coo_product_and_segment_chunks():
    """Rows in any order, duplicates, rows of many entries split over chunks."""
    import ndgrad.sparse._compressed as C
    rng = np.random.default_rng(0)
    rows = rng.integers(0, 50, 3000)
    cols = rng.integers(0, 40, 3000)
    rows[:400] = 7                                   # one long row
    vals = rng.standard_normal(3000)
    dense = rng.standard_normal((40, 5))
    ref = np.zeros((50, 5))
    np.add.at(ref, rows, vals[:, None] * dense[cols])
    old = C._CHUNK
    try:
        for chunk in (old, 64):
            C._CHUNK = chunk
            s = ndgrad.sparse_coo_tensor(ndgrad.tensor(np.stack([rows, cols])),
                                         ndgrad.tensor(vals), (50, 40))
            x = ndgrad.tensor(dense, requires_grad=True)
            y = ndgrad.sparse.mm(s, x)
            np.testing.assert_allclose(_np(y), ref, rtol=1e-10, atol=1e-12)
            y.backward(ndgrad.ones(50, 5, dtype=ndgrad.float64))
            gref = np.zeros((40, 5))
            np.add.at(gref, cols, vals[:, None] * np.ones((3000, 5)))
            np.testing.assert_allclose(_np(x.grad), gref, rtol=1e-10, atol=1e-12)
    finally:
        C._CHUNK = old


def test_sampled_addmm_values_gradients_and_gradcheck(torch):
    a = np.arange(8.0).reshape(4, 2) / 4
    b = np.arange(8.0).reshape(2, 4) / 5 - 0.5
    res = []
    for L in (ndgrad, torch):
        s = _csr(L, requires_grad=True)
        x, y = L.tensor(a, requires_grad=True), L.tensor(b, requires_grad=True)
        r = L.sparse.sampled_addmm(s, x, y, beta=0.5, alpha=2.0)
        (r.values() * L.arange(5, dtype=L.float64)).sum().backward()
        res.append((r, s.grad, _np(x.grad), _np(y.grad)))
        assert r.layout is L.sparse_csr
    assert repr(res[0][0]).split("grad_fn")[0] == repr(res[1][0]).split("grad_fn")[0]
    _same_sparse(res[0][0], res[1][0])
    _same_sparse(res[0][1], res[1][1])
    np.testing.assert_allclose(res[0][2], res[1][2], rtol=1e-12)
    np.testing.assert_allclose(res[0][3], res[1][3], rtol=1e-12)

    def f(x, y):
        return ndgrad.sparse.sampled_addmm(_csr(ndgrad), x, y).values()
    x = ndgrad.tensor(a, requires_grad=True)
    y = ndgrad.tensor(b, requires_grad=True)
    assert gradcheck(f, (x, y)) and gradgradcheck(f, (x, y))


def test_valuewise_ops_match_pytorch(torch):
    w = np.arange(16.0).reshape(4, 4) - 5
    ops = [lambda L, s: -s, lambda L, s: s.abs(), lambda L, s: s.abs().sqrt(),
           lambda L, s: s.relu(), lambda L, s: s * 2.5, lambda L, s: 2 * s,
           lambda L, s: s / 4, lambda L, s: s + s, lambda L, s: s * L.tensor(w),
           lambda L, s: s.tanh(), lambda L, s: s.sin(), lambda L, s: s - s * 0.5]
    for op in ops:
        for make in (_csr, _csc):
            try:
                ref = op(torch, make(torch))
            except (RuntimeError, NotImplementedError):
                with pytest.raises((RuntimeError, NotImplementedError)):
                    op(ndgrad, make(ndgrad))
                continue
            _same_sparse(op(ndgrad, make(ndgrad)), ref)
    for L_make in (_csr, _csc):
        got = [(L_make(L) + L.ones(4, 4, dtype=L.float64)) for L in (ndgrad, torch)]
        np.testing.assert_array_equal(_np(got[0]), _np(got[1]))
        s = [L_make(L).sum() for L in (ndgrad, torch)]
        assert s[0].item() == s[1].item()


def test_errors_match_pytorch(torch):
    def T(L, x):
        return L.tensor(x)
    csr = {"check_invariants": True}
    cases = [
        lambda L: L.sparse_csr_tensor(T(L, [0, 2, 3]), T(L, [0, 2, 1]), T(L, [1., 2, 3]),
                                      (3, 3), **csr),
        lambda L: L.sparse_csr_tensor(T(L, [0, 2, 2, 3]), T(L, [0, 5, 1]), T(L, [1., 2, 3]),
                                      (3, 3), **csr),
        lambda L: L.sparse_csr_tensor(T(L, [0, 2, 2, 3]), T(L, [0, 2]), T(L, [1., 2, 3]),
                                      (3, 3), **csr),
        lambda L: L.sparse_csr_tensor(T(L, [0, 2, 1, 3]), T(L, [0, 2, 1]), T(L, [1., 2, 3]),
                                      (3, 3), **csr),
        lambda L: L.sparse_csr_tensor(T(L, [1, 2, 2, 3]), T(L, [0, 2, 1]), T(L, [1., 2, 3]),
                                      (3, 3), **csr),
        lambda L: L.sparse_csr_tensor(T(L, [0, 2, 2, 4]), T(L, [0, 2, 1]), T(L, [1., 2, 3]),
                                      (3, 3), **csr),
        lambda L: L.sparse_csr_tensor(T(L, [0, 2, 2, 3]), T(L, [2, 0, 1]), T(L, [1., 2, 3]),
                                      (3, 3), **csr),
        lambda L: L.sparse_csr_tensor(T(L, [0, 2, 2, 3]), T(L, [0, 2, 1]).int(),
                                      T(L, [1., 2, 3]), (3, 3), **csr),
        lambda L: L.sparse_csr_tensor(T(L, [0, 2, 2, 3]), T(L, [0, 2, 1]), T(L, [1., 2, 3]),
                                      (3,), **csr),
        lambda L: L.sparse_csc_tensor(T(L, [0, 2, 2, 3]), T(L, [0, 2, 5]), T(L, [1., 2, 3]),
                                      (3, 3), **csr),
        lambda L: L.sparse_compressed_tensor(T(L, [0, 1]), T(L, [0]), T(L, [1.]), (1, 1)),
        lambda L: L.sparse_compressed_tensor(T(L, [0, 1]), T(L, [0]), T(L, [1.]), (1, 1),
                                             layout=L.strided),
        lambda L: _csr(L).indices(),
        lambda L: _csr(L).ccol_indices(),
        lambda L: _csc(L).crow_indices(),
        lambda L: _csr(L).is_coalesced(),
        lambda L: _csr(L).numpy(),
        lambda L: _csr(L).view(16),
        lambda L: _csr(L).exp(),
        lambda L: _csr(L).sum(0),
        lambda L: L.ones(3).crow_indices(),
        lambda L: L.mm(_csr(L), L.ones(3, 2, dtype=L.float64)),
        lambda L: L.mm(_csr(L), L.ones(4, 2)),
        lambda L: _csr(L) @ L.ones(3, 2, dtype=L.float64),
        lambda L: L.sparse.sampled_addmm(_csr(L).to_sparse_coo(), L.ones(4, 2), L.ones(2, 4)),
        lambda L: L.sparse.sampled_addmm(_csr(L), L.ones(4, 2, dtype=L.float64),
                                         L.ones(4, 2, dtype=L.float64)),
        lambda L: L.sparse.sampled_addmm(_csr(L), L.ones(4, 2),
                                         L.ones(2, 4, dtype=L.float64)),
        lambda L: L.sparse.sampled_addmm(_csr(L), L.ones(4, 2, dtype=L.float64),
                                         L.ones(2, 3, dtype=L.float64)),
        lambda L: L.sparse.sampled_addmm(L.ones(4, 4), L.ones(4, 2), L.ones(2, 4)),
        lambda L: L.sparse.sampled_addmm(_csc(L), L.ones(4, 2, dtype=L.float64),
                                         L.ones(2, 4, dtype=L.float64)),
    ]
    for i, case in enumerate(cases):
        with pytest.raises(Exception) as ref:
            case(torch)
        with pytest.raises(Exception) as got:
            case(ndgrad)
        assert type(got.value) is type(ref.value), (i, got.value, ref.value)
        first = str(got.value).split("\n")[0]
        assert str(ref.value).startswith(first[:120]), (i, got.value, ref.value)


def test_grad_fn_names_match_pytorch(torch):
    def run(L):
        T = L.tensor
        c = L.sparse_csr_tensor(T([0, 2, 2, 3]), T([0, 2, 1]), T([1., 2, 3]), (3, 3),
                                requires_grad=True)
        coo = L.sparse_coo_tensor(T([[0, 1], [1, 2]]), T([1., 2]), (3, 3), requires_grad=True)
        d = L.ones(3, 2, requires_grad=True)
        made = [L.sparse.mm(c, d), c @ d, L.mm(c, d), L.sparse.mm(coo, d), coo @ d,
                c.to_dense(), coo.to_dense(), c.to_sparse_coo(), c.to_sparse_csc(),
                coo.to_sparse_csr(), -c, c * 2, c.t(), c.transpose(0, 1),
                L.ones(2, 2, requires_grad=True).to_sparse_csr(),
                L.ones(2, 2, requires_grad=True).to_sparse(),
                L.addmm(L.ones(3, 2), c, d),
                L.sparse.sampled_addmm(c, L.ones(3, 2), L.ones(2, 3))]
        return [type(t.grad_fn).__name__ for t in made]
    assert run(ndgrad) == run(torch)


UNARY = ["sin", "tan", "asin", "atan", "sinh", "tanh", "asinh", "atanh", "sqrt", "abs", "neg",
         "sign", "floor", "ceil", "round", "trunc", "frac", "expm1", "log1p", "relu", "erf",
         "deg2rad", "rad2deg", "sgn", "signbit", "isnan", "isinf", "nan_to_num", "square",
         "exp", "log", "cos", "sigmoid", "erfinv", "angle", "conj", "positive", "isneginf",
         "isposinf", "logical_not", "half", "bool", "int", "long", "zero_", "relu_", "abs_",
         "neg_", "sin_", "mul_"]


@pytest.mark.parametrize("layout", ["coo", "coo_coalesced", "csr"])
def test_unary_ops_and_their_errors_match_pytorch(torch, layout):
    def make(L):
        s = L.sparse_coo_tensor(L.tensor([[0, 1, 1, 0], [2, 0, 2, 2]]),
                                L.tensor([0.5, -0.25, 0.75, 0.125], dtype=L.float64), (2, 3))
        return s if layout == "coo" else s.coalesce() if layout == "coo_coalesced" else \
            s.coalesce().to_sparse_csr()
    for name in UNARY:
        out = []
        for L in (torch, ndgrad):
            s = make(L)
            try:
                r = getattr(s, name)(2) if name == "mul_" else getattr(s, name)()
                out.append((r.layout == s.layout, r.dtype.__repr__(), r.to_dense().numpy()))
            except Exception as e:          # noqa: BLE001 (compared with PyTorch's below)
                out.append((type(e), str(e).split("\n")[0][:100]))
        ref, got = out
        if isinstance(ref[0], type):
            assert got[0] is ref[0] and ref[1].startswith(got[1][:60]), (name, got, ref)
        else:
            assert got[:2] == ref[:2], (name, got, ref)
            np.testing.assert_allclose(got[2].astype(float), ref[2].astype(float), rtol=1e-12,
                                       equal_nan=True, err_msg=name)


def test_strided_only_methods_raise_as_pytorch(torch):
    calls = {"view": (9,), "reshape": (9,), "flatten": (), "unsqueeze": (0,), "squeeze": (),
             "permute": (1, 0), "expand": (3, 3), "stride": (), "data_ptr": (),
             "storage_offset": (), "cos": (), "log": (), "sigmoid": (), "softmax": (0,),
             "log_softmax": (0,), "mean": (), "argmax": (), "exp": (), "tolist": (),
             "contiguous": (), "pow": (2,), "item": (), "is_contiguous": (),
             "index_select": (0, None), "__len__": (), "__bool__": ()}
    for make in (lambda L: _csr(L), lambda L: _csr(L).to_sparse_csc()):
        for name, args in calls.items():
            res = []
            for L in (torch, ndgrad):
                a = tuple(L.tensor([0, 2]) if x is None else x for x in args)
                try:
                    r = getattr(make(L), name)(*a)
                    res.append(("ok", r))
                except Exception as e:     # noqa: BLE001 (compared with PyTorch's below)
                    res.append((type(e).__name__, str(e).split("\n")[0][:110]))
            assert res[0] == res[1], (name, res)


def test_select_a_row_and_sparse_reprs_match_pytorch(torch):
    for L_make in (_csr, _csc):
        for i in (0, 1, -1):
            got, ref = L_make(ndgrad, requires_grad=L_make is _csr)[i], \
                L_make(torch, requires_grad=L_make is _csr)[i]
            assert repr(got) == repr(ref)
    for n in (1, 3, 8):
        for kw in ({}, {"requires_grad": True}):
            r = [repr(L.sparse_coo_tensor(L.arange(n).reshape(1, n),
                                          (L.arange(n) * 1111111).double(), (n * 10 ** 6,),
                                          **kw)) for L in (ndgrad, torch)]
            assert r[0] == r[1]
    v = [L.ones(3, requires_grad=True) for L in (ndgrad, torch)]
    made = [(L.sparse_csr_tensor(L.tensor([0, 2, 2, 3]), L.tensor([0, 2, 1]), x, (3, 3)),
             L.sparse_coo_tensor(L.tensor([[0, 1, 2]]), x, (3,))) for L, x in
            zip((ndgrad, torch), v)]
    for (c, s), x in zip(made, v):
        (c.to_dense().sum() + s.to_dense().sum()).backward()
        assert not c.is_leaf and not s.is_leaf and x.grad.tolist() == [2.0, 2.0, 2.0]
    assert [repr(t) for t in made[0]] == [repr(t) for t in made[1]]


def test_coo_index_select_repeated_and_empty_indices_match_pytorch(torch):
    def make(L, **kw):
        return L.sparse_coo_tensor(L.tensor([[0, 1, 1, 3, 0, 2], [2, 0, 2, 1, 2, 1]]),
                                   L.tensor([3., 4, 5, -1, .5, 7], dtype=L.float64), (4, 3),
                                   **kw)
    for d, ix in [(0, [1, 1, 0, 3]), (1, [2, 2, 0]), (0, []), (1, [1]), (-1, [0, 2, 1])]:
        got, ref = [make(L).index_select(d, L.tensor(ix, dtype=L.int64)).coalesce()
                    for L in (ndgrad, torch)]
        _same_sparse(got, ref)
        # (PyTorch has no backward here; ndgrad's equals the dense computation's)
        grads = []
        for sparse_path in (True, False):
            s = make(ndgrad, requires_grad=True)
            i = ndgrad.tensor(ix, dtype=ndgrad.int64)
            r = s.index_select(d, i).to_dense() if sparse_path else \
                s.to_dense().index_select(d, i)
            (r * ndgrad.arange(r.numel(), dtype=ndgrad.float64).reshape(r.shape)).sum() \
                .backward()
            grads.append(s.grad.to_dense().numpy())
        np.testing.assert_array_equal(*grads)


@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_dense_at_sparse_sparse_at_sparse_and_vectors_match_pytorch(torch, layout):
    def make(L, grad=True):
        s = L.sparse_coo_tensor(L.tensor([[0, 1, 1, 3], [2, 0, 3, 1]]),
                                L.tensor([1., -2, 3, 0.5], dtype=L.float64), (4, 4))
        s = s.coalesce() if layout == "coo" else s.coalesce().to_sparse_csr()
        return s.requires_grad_(grad)
    d = np.arange(8.0).reshape(2, 4) / 3
    cases = [lambda L, s, x: x @ s, lambda L, s, x: L.mm(x, s), lambda L, s, x: L.matmul(x, s),
             lambda L, s, x: L.sparse.mm(x, s), lambda L, s, x: s @ x[0],
             lambda L, s, x: L.mv(s, x[1]), lambda L, s, x: (s @ s).to_dense(),
             lambda L, s, x: L.sparse.mm(s, s).to_dense()]
    for i, case in enumerate(cases):
        res = []
        for L in (ndgrad, torch):     # (PyTorch: no CSR values gradient of dense @ CSR)
            s, x = make(L, layout == "coo" or 4 <= i < 6), L.tensor(d, requires_grad=True)
            y = case(L, s, x)
            if y.requires_grad:
                (y * (L.arange(y.numel(), dtype=L.float64).reshape(y.shape) + 1)).sum() \
                    .backward()
            res.append((_np(y), None if x.grad is None else _np(x.grad), s.grad,
                        type(y.grad_fn).__name__))
        (y0, gx0, gs0, n0), (y1, gx1, gs1, n1) = res
        np.testing.assert_allclose(y0, y1, rtol=1e-12, err_msg=str(i))
        assert (gx0 is None) == (gx1 is None)
        if gx1 is not None:
            np.testing.assert_allclose(gx0, gx1, rtol=1e-12, err_msg=str(i))
        if gs1 is not None and gs1.layout == gs0.layout:
            _same_sparse(gs0, gs1)
        elif gs1 is not None:        # PyTorch's dense (or other layout) gradient
            np.testing.assert_allclose(_np(gs0.to_dense()), _np(gs1.to_dense()) *
                                       (_np(make(torch).to_dense()) != 0), err_msg=str(i))
        if i < 6:
            assert n0 == n1, (i, n0, n1)
    for L_case in (lambda L: L.ones(2, 3, dtype=L.float64) @ make(L),
                   lambda L: L.ones(2, 4) @ make(L),
                   lambda L: make(L) @ L.ones(3, dtype=L.float64),
                   lambda L: make(L) @ L.sparse_coo_tensor(L.tensor([[0], [0]]),
                                                           L.tensor([1.], dtype=L.float64),
                                                           (3, 3))):
        with pytest.raises(RuntimeError) as ref:
            L_case(torch)
        with pytest.raises(RuntimeError) as got:
            L_case(ndgrad)
        assert str(ref.value).startswith(str(got.value)[:60]), (got.value, ref.value)


def test_sparse_sparse_product_gradcheck():
    ia = ndgrad.tensor([[0, 1, 1, 3], [2, 0, 3, 1]])
    ib = ndgrad.tensor([[0, 2, 3, 3], [1, 0, 0, 2]])

    def f(va, vb):
        a = ndgrad.sparse_coo_tensor(ia, va, (4, 4))
        b = ndgrad.sparse_coo_tensor(ib, vb, (4, 3))
        return ndgrad.sparse.mm(a, b).to_dense()
    va = ndgrad.tensor([1., -2, 3, 0.5], dtype=ndgrad.float64, requires_grad=True)
    vb = ndgrad.tensor([0.5, 1.5, -1, 2], dtype=ndgrad.float64, requires_grad=True)
    assert gradcheck(f, (va, vb)) and gradgradcheck(f, (va, vb))


def test_block_sparse_layouts_are_named_but_refused():
    assert repr(ndgrad.sparse_bsr) == "torch.sparse_bsr" and repr(ndgrad.sparse_bsc) == \
        "torch.sparse_bsc"
    for f in (lambda: ndgrad.ones(2, 2).to_sparse(layout=ndgrad.sparse_bsr, blocksize=(1, 1)),
              lambda: _csr(ndgrad).to_sparse(layout=ndgrad.sparse_bsc, blocksize=(1, 1)),
              lambda: ndgrad.sparse_compressed_tensor(ndgrad.tensor([0, 1]), ndgrad.tensor([0]),
                                                      ndgrad.ones(1, 1, 1), (1, 1),
                                                      layout=ndgrad.sparse_bsr)):
        with pytest.raises(NotImplementedError, match="no block-sparse tensors"):
            f()


@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin", "max", "prod"])
def test_sparse_mm_reduce_matches_pytorch(torch, reduce):
    res = []
    for L in (ndgrad, torch):
        c = L.sparse_csr_tensor(L.tensor([0, 2, 2, 3]), L.tensor([0, 2, 1]),
                                L.tensor([1., -2, 3], dtype=L.float64), (3, 3),
                                requires_grad=True)
        d = L.arange(6., dtype=L.float64).reshape(3, 2).requires_grad_()
        try:
            y = L.sparse.mm(c, d, reduce)
        except RuntimeError as e:
            res.append(str(e))
            continue
        (y * L.arange(6., dtype=L.float64).reshape(3, 2)).sum().backward()
        res.append((y.tolist(), type(y.grad_fn).__name__, c.grad.values().tolist(),
                    d.grad.tolist()))
    assert res[0] == res[1]
    if reduce == "sum":
        with pytest.raises(NotImplementedError, match="SparseCPU"):
            ndgrad.sparse.mm(_csr(ndgrad).to_sparse_coo(), ndgrad.ones(4, 2, dtype=ndgrad.float64),
                             "sum")
