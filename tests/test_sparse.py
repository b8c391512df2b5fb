"""Sparse COO tensors (ndgrad/sparse/_coo.py, ndgrad/sparse): structure, printing, errors, and
values/gradients of the products, sums and softmax against PyTorch on the same inputs."""
import numpy as np
import pytest

import ndgrad
from ndgrad.autograd import gradcheck, gradgradcheck

IDX = [[0, 1, 1, 3, 0], [2, 0, 2, 1, 2]]          # (0, 2) twice: uncoalesced
VALS = [3.0, 4.0, 5.0, -1.0, 0.5]


def _pair(torch, dtype="float64", **kw):
    i = torch.tensor(IDX)
    v = torch.tensor(VALS, dtype=getattr(torch, dtype))
    return torch.sparse_coo_tensor(i, v, (4, 3), **kw)


def _torch():
    return pytest.importorskip("torch")


def _same(a, b):
    assert a.is_sparse == b.is_sparse, (a, b)
    if b.is_sparse:
        a, b = a.coalesce(), b.coalesce()
        np.testing.assert_array_equal(a.indices().numpy(), b.indices().numpy())
        a, b = a.values(), b.values()
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_structure_and_repr_match_pytorch():
    torch = _torch()
    s, t = _pair(ndgrad), _pair(torch, check_invariants=True)
    assert repr(s) == repr(t)
    assert repr(s.coalesce()) == repr(t.coalesce())
    assert (s.is_sparse, s.is_coalesced(), s.sparse_dim(), s.dense_dim(), s._nnz()) == \
        (t.is_sparse, t.is_coalesced(), t.sparse_dim(), t.dense_dim(), t._nnz())
    assert s.coalesce()._nnz() == 4 and s.coalesce().is_coalesced()
    assert repr(s.layout) == "torch.sparse_coo" and s.layout is ndgrad.sparse_coo
    assert ndgrad.ones(1).layout is ndgrad.strided and repr(ndgrad.strided) == "torch.strided"
    h, th = (L.sparse_coo_tensor(L.tensor([[0, 2]]), L.ones(2, 3), (4, 3)) for L in (ndgrad,
                                                                                     torch))
    assert repr(h) == repr(th) and h.dense_dim() == 1
    f32 = (L.sparse_coo_tensor(L.tensor([[0]]), L.tensor([1.0]), (2,)) for L in (ndgrad, torch))
    assert repr(next(f32)) == repr(next(f32))


def test_to_dense_to_sparse_round_trip_and_gradient():
    torch = _torch()
    _same(_pair(ndgrad).to_dense(), _pair(torch).to_dense())
    a = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -3.0]])
    for L in (ndgrad, torch):
        x = L.tensor(a, requires_grad=True)
        s = x.to_sparse()
        (s.to_dense() * L.tensor(a + 1)).sum().backward()
        assert s.is_coalesced()
        np.testing.assert_array_equal(x.grad.numpy(), (a + 1) * (a != 0))
    _same(ndgrad.tensor(a).to_sparse(), torch.tensor(a).to_sparse())


def test_errors_match_pytorch_before_anything_is_made():
    torch = _torch()
    cases = [
        lambda L: L.sparse_coo_tensor(L.tensor([[0, 1]]), L.ones(3), (3,)),
        lambda L: L.sparse_coo_tensor(L.tensor([0, 1]), L.ones(2), (3,)),
        lambda L: _pair(L) + 1,
        lambda L: L.sparse.mm(_pair(L), L.ones(4, 2, dtype=L.float64)),
        lambda L: _pair(L).indices(),
    ]
    for case in cases:
        with pytest.raises(Exception) as ref:
            case(torch)
        with pytest.raises(Exception) as got:
            case(ndgrad)
        assert type(got.value) is type(ref.value)
        assert str(ref.value).startswith(str(got.value).split("\n")[0][:40]), (got.value,
                                                                               ref.value)


def test_indices_are_always_checked():
    # (PyTorch checks only under check_invariants=True; ndgrad never builds an invalid tensor)
    with pytest.raises(RuntimeError, match="found negative index -1 for dim 0"):
        ndgrad.sparse_coo_tensor(ndgrad.tensor([[0, -1]]), ndgrad.ones(2), (3,))
    with pytest.raises(RuntimeError, match="size is inconsistent with indices: for dim 0, size "
                                           "is 3 but found index 5"):
        ndgrad.sparse_coo_tensor(ndgrad.tensor([[0, 5]]), ndgrad.ones(2), (3,))


def test_ops_on_sparse_not_defined_for_sparse_raise():
    with pytest.raises(NotImplementedError, match="Could not run 'aten::exp' with arguments "
                                                  "from the 'SparseCPU' backend"):
        _pair(ndgrad).exp()
    with pytest.raises(TypeError, match="can't convert Sparse layout tensor to numpy"):
        _pair(ndgrad).numpy()


@pytest.mark.parametrize("op", ["mm", "addmm", "spmm", "matmul"])
def test_products_values_and_gradients(op):
    """torch.sparse.mm/addmm give the sparse operand a sparse gradient (its pattern), as
    PyTorch's; torch.mm/spmm/@ give PyTorch a dense one, ndgrad the same sparse one (a dense
    gradient of a sparse operand costs O(n^2)): their values and dense gradients are compared."""
    torch = _torch()
    d = np.random.default_rng(0).standard_normal((3, 2))
    m = np.random.default_rng(1).standard_normal((4, 2))
    res = []
    for L in (ndgrad, torch):
        s = _pair(L, requires_grad=True)
        x = L.tensor(d, requires_grad=True)
        if op == "addmm":
            out = L.sparse.addmm(L.tensor(m), s, x, beta=0.5, alpha=2.0)
        elif op == "matmul":
            out = s @ x
        else:
            out = getattr(L if op == "spmm" else L.sparse, op)(s, x)
        (out * out).sum().backward()
        res.append((out, x.grad, s.grad if op in ("mm", "addmm") else None))
    for a, b in zip(*res):
        if b is not None:
            _same(a, b)


def test_product_gradcheck_first_and_second_order():
    i = ndgrad.tensor(IDX)

    def f(v, d):
        return ndgrad.sparse.mm(ndgrad.sparse_coo_tensor(i, v, (4, 3)), d)
    v = ndgrad.tensor(VALS, dtype=ndgrad.float64, requires_grad=True)
    d = ndgrad.randn(3, 2, dtype=ndgrad.float64, requires_grad=True)
    assert gradcheck(f, (v, d)) and gradgradcheck(f, (v, d))
    e = ndgrad.sparse_coo_tensor(ndgrad.zeros(2, 0, dtype=ndgrad.int64),
                                 ndgrad.zeros(0, dtype=ndgrad.float64), (4, 3))
    assert ndgrad.sparse.mm(e, d).abs().sum().item() == 0       # empty: zeros


def test_product_cost_is_linear_in_nnz():
    """A 10^5 x 10^5 adjacency with 3 * 10^5 entries: a dense one would take 80 GB."""
    rng = np.random.default_rng(0)
    n, nnz = 100_000, 300_000
    idx = ndgrad.tensor(rng.integers(0, n, size=(2, nnz)))
    adj = ndgrad.sparse_coo_tensor(idx, ndgrad.ones(nnz), (n, n))
    h = ndgrad.ones(n, 4, requires_grad=True)
    out = ndgrad.sparse.mm(adj, h)
    out.sum().backward()
    assert out.sum().item() == 4 * nnz and h.grad.sum().item() == 4 * nnz


def test_sum_softmax_values_and_gradients():
    torch = _torch()
    for fn in [lambda L, s: L.sparse.sum(s), lambda L, s: L.sparse.sum(s, 1),
               lambda L, s: L.sparse.sum(s, 0), lambda L, s: L.sparse.sum(s, (0, 1)),
               lambda L, s: L.sparse.softmax(s, 1), lambda L, s: L.sparse.softmax(s, 0),
               lambda L, s: L.sparse.log_softmax(s, 1)]:
        res = []
        for L in (ndgrad, torch):
            s = _pair(L, requires_grad=True)
            out = fn(L, s)
            dense = out.to_dense() if getattr(out, "is_sparse", False) else out
            (dense * dense).sum().backward()
            res.append((out, s.grad))
        _same(res[0][0], res[1][0])
        _same(res[0][1], res[1][1])


def test_valuewise_ops_transpose_index_select_mask():
    torch = _torch()
    for fn in [lambda L, s: s * 2.5, lambda L, s: -s, lambda L, s: s.abs(),
               lambda L, s: s.pow(2), lambda L, s: s + s, lambda L, s: s.t(),
               lambda L, s: s.transpose(0, 1), lambda L, s: s * s,
               lambda L, s: s.index_select(0, L.tensor([3, 0])),
               lambda L, s: s.index_select(1, L.tensor([2, 2, 0])),
               lambda L, s: L.ones(4, 3, dtype=L.float64) + s,
               lambda L, s: L.arange(12.0, dtype=L.float64).view(4, 3).sparse_mask(s.coalesce()),
               lambda L, s: s.sum(), lambda L, s: s.relu(), lambda L, s: s.sqrt() if False else s / 2]:
        _same(fn(ndgrad, _pair(ndgrad)), fn(torch, _pair(torch)))


def test_sparse_leaf_grad_keeps_pattern():
    s = _pair(ndgrad, requires_grad=True)
    assert s.is_leaf and s.requires_grad and s.grad is None
    ndgrad.sparse.sum(s).backward()
    # the gradient of each stored entry, at the coalesced pattern (the duplicate (0, 2) once)
    assert s.grad.is_sparse and s.grad.is_coalesced() and s.grad._nnz() == 4
    assert s.grad.values().tolist() == [1.0] * 4
    v = ndgrad.tensor(VALS, requires_grad=True)
    s = ndgrad.sparse_coo_tensor(ndgrad.tensor(IDX), v, (4, 3))
    assert not s.is_leaf                              # made from values that require grad
    ndgrad.sparse.sum(s).backward()
    assert v.grad.tolist() == [1.0] * 5


def _emb_run(L, opt_name, steps=4, padding_idx=None, **kw):
    L.manual_seed(0)
    w0 = np.random.default_rng(3).standard_normal((6, 3))
    emb = L.nn.Embedding(6, 3, sparse=True, padding_idx=padding_idx).double()
    with L.no_grad():
        emb.weight.copy_(L.tensor(w0))
    opt = getattr(L.optim, opt_name)(emb.parameters(), **kw)
    idx = L.tensor([[1, 2, 1], [4, 0, 2]])
    grads = []
    for k in range(steps):
        opt.zero_grad()
        out = emb(idx)
        (out * L.tensor(np.arange(18.0).reshape(2, 3, 3) / (k + 1))).pow(2).sum().backward()
        grads.append(emb.weight.grad)
        opt.step()
    return emb.weight.detach().numpy(), grads


@pytest.mark.parametrize("opt,kw", [("SGD", {"lr": 0.01}), ("SGD", {"lr": 0.01, "momentum": 0.9}),
                                    ("Adagrad", {"lr": 0.1}), ("SparseAdam", {"lr": 0.05}),
                                    ("SparseAdam", {"lr": 0.05, "maximize": True})])
def test_embedding_sparse_gradients_and_optimizers_match_pytorch(opt, kw):
    torch = _torch()
    (w, g), (tw, tg) = _emb_run(ndgrad, opt, **kw), _emb_run(torch, opt, **kw)
    np.testing.assert_allclose(w, tw, rtol=1e-12, atol=1e-12)
    assert g[0].is_sparse and tg[0].is_sparse and not g[0].is_coalesced()
    np.testing.assert_array_equal(g[0]._indices().numpy(), tg[0]._indices().numpy())
    _same(g[0], tg[0])


def test_embedding_sparse_padding_idx_and_accumulation():
    torch = _torch()
    res = []
    for L in (ndgrad, torch):
        emb = L.nn.Embedding(5, 2, sparse=True, padding_idx=0).double()
        idx = L.tensor([0, 3, 3, 1])
        emb(idx).sum().backward()
        emb(L.tensor([3])).sum().backward()          # a second backward: summed into .grad
        res.append(emb.weight.grad)
    assert res[0].is_sparse and res[1].is_sparse
    _same(res[0], res[1])                               # (compared coalesced)


def test_sparse_adam_refuses_dense_gradients():
    p = ndgrad.nn.Parameter(ndgrad.ones(3))
    opt = ndgrad.optim.SparseAdam([p])
    p.sum().backward()
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients, please "
                                           "consider Adam instead"):
        opt.step()


def test_plain_pickles_naming_the_old_module_paths_still_load():
    # sparse/_coo.py and sparse/_compressed.py were ndgrad/_sparse.py and
    # ndgrad/_sparse_compressed.py: pickles made then name those paths (protocol 2 spells a
    # global as text, so an old pickle is a new one with the old path written in)
    import pickle
    d = ndgrad.tensor([[0., 2.], [3., 0.]])
    for s, new, old in ((d.to_sparse(), b"ndgrad.sparse._coo\n", b"ndgrad._sparse\n"),
                        (d.to_sparse_csr(), b"ndgrad.sparse._compressed\n",
                         b"ndgrad._sparse_compressed\n"),
                        (ndgrad.sparse_coo, b"ndgrad.sparse._coo\n", b"ndgrad._sparse\n")):
        data = pickle.dumps(s, protocol=2)
        assert new in data
        back = pickle.loads(data.replace(new, old))
        if isinstance(s, ndgrad.Tensor):
            assert back.layout is s.layout and (back.to_dense() == d).all()
        else:
            assert back is s


def test_sparse_bmm_and_mT_as_pytorchs():
    """torch.bmm(sparse COO batch, dense batch) -> dense (BmmBackward0), gradients in the values
    and the dense operand; sparse .mT; PyTorch's errors (linear_operator uses both)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    idx = np.array([[0, 0, 1, 1, 1], [0, 2, 1, 2, 2], [1, 0, 3, 0, 1]])
    vals = rng.standard_normal(5)
    dense = rng.standard_normal((2, 4, 3))
    res = []
    for L in (torch, ndgrad):
        v = L.tensor(vals, requires_grad=True)
        d = L.tensor(dense, requires_grad=True)
        s = L.sparse_coo_tensor(L.tensor(idx), v, (2, 3, 4))
        r = L.bmm(s, d)
        assert type(r.grad_fn).__name__ == "BmmBackward0" and not r.is_sparse
        (r * L.tensor(np.arange(18.0).reshape(2, 3, 3))).sum().backward()
        res.append((r.detach().numpy(), v.grad.numpy(), d.grad.numpy(),
                    s.mT.to_dense().detach().numpy(), s.bmm(d).detach().numpy()))
        errs = []
        for f in (lambda: L.bmm(s, L.ones(2, 5, 3, dtype=L.float64)),
                  lambda: L.bmm(s, L.ones(3, 4, 3, dtype=L.float64)),
                  lambda: L.bmm(s, L.ones(2, 4, 3)),
                  lambda: L.bmm(L.ones(2, 3, 3, dtype=L.float64), s.mT),
                  lambda: L.ones(3).to_sparse().mT):
            with pytest.raises(RuntimeError) as e:
                f()
            errs.append(str(e.value))
        res.append(errs)
    for a, b in zip(res[0], res[2]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert res[1] == res[3]
    v = ndgrad.tensor(vals, requires_grad=True)
    d = ndgrad.tensor(dense, requires_grad=True)
    assert ndgrad.autograd.gradcheck(
        lambda v, d: ndgrad.bmm(ndgrad.sparse_coo_tensor(ndgrad.tensor(idx), v, (2, 3, 4)), d),
        (v, d))
