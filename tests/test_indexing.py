"""Indexing: __getitem__/__setitem__ against PyTorch, repeated-index accumulation, in-place index
ops, named-tuple results and PyTorch's errors (raised before anything is modified)."""
import numpy as np
import pytest

import ndgrad
from ndgrad.autograd import gradcheck, gradgradcheck


def _x(lib, shape=(3, 4)):
    n = int(np.prod(shape))
    return lib.tensor((np.arange(n, dtype=np.float64).reshape(shape) - 5) / 3)


# ------------------------------------------------------------------ __setitem__

SETITEMS = {
    "row_scalar": lambda L, x: x.__setitem__(0, 2.5),
    "col_tensor": lambda L, x: x.__setitem__((slice(None), 1), L.tensor([1.0, 2.0, 3.0],
                                                                        dtype=L.float64)),
    "broadcast_row": lambda L, x: x.__setitem__(slice(1, None), L.tensor([1.0, 2.0, 3.0, 4.0],
                                                                          dtype=L.float64)),
    "list_index": lambda L, x: x.__setitem__([0, 2], 5.0),
    "mask": lambda L, x: x.__setitem__(x > 0, -1.0),
    "ellipsis_0d": lambda L, x: x.__setitem__((Ellipsis, 0), L.tensor(7.0, dtype=L.float64)),
    "mixed_adv": lambda L, x: x.__setitem__((L.tensor([0, 2]), slice(1, 3)), 9.0),
    "none": lambda L, x: x.__setitem__((None, 1), 3.0),
    "neg": lambda L, x: x.__setitem__((-1, -2), 4.0),
    "int_into_float": lambda L, x: x.__setitem__(1, 3),
}


@pytest.mark.parametrize("name", sorted(SETITEMS))
def test_setitem_values_vs_torch(name):
    torch = pytest.importorskip("torch")
    a, b = _x(ndgrad), _x(torch)
    SETITEMS[name](ndgrad, a)
    SETITEMS[name](torch, b)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_setitem_float_into_int_truncates():
    x = ndgrad.zeros(3, 4, dtype=ndgrad.int64)
    x[0] = 2.7
    assert x.tolist()[0] == [2, 2, 2, 2]


def _grads(lib, prog):
    w = lib.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)
    v = lib.tensor([0.5, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
    out = prog(lib, w, v)
    out.backward(lib.arange(1.0, out.numel() + 1, dtype=lib.float64).reshape(out.shape))
    return out.detach().numpy(), w.grad.numpy(), None if v.grad is None else v.grad.numpy()


def _p_set_values(L, w, v):
    x = w.clone()
    x[:, 0] = v * v
    return x * 2


def _p_repeated_getitem(L, w, v):
    return w[[0, 0, 2, 0]] * 1.0


def _p_repeated_setitem(L, w, v):
    x = w.clone()
    x[[1, 1]] += 1
    return x * x


def _p_mask_setitem(L, w, v):
    x = w.clone()
    x[w > 0] = v.sum()
    return x


def _p_adv_set_broadcast(L, w, v):
    x = w.clone()
    x[L.tensor([2, 0]), 1:] = v
    return x.exp()


def _p_index_put_accumulate(L, w, v):
    x = w.clone()
    x.index_put_((L.tensor([0, 0, 2]),), v.unsqueeze(1) * w[1], accumulate=True)
    return x


@pytest.mark.parametrize("prog", [_p_set_values, _p_repeated_getitem, _p_repeated_setitem,
                                  _p_mask_setitem, _p_adv_set_broadcast, _p_index_put_accumulate])
def test_setitem_gradients_vs_torch(prog):
    torch = pytest.importorskip("torch")
    for a, b in zip(_grads(ndgrad, prog), _grads(torch, prog)):
        if b is None:
            assert a is None
        else:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_repeated_indices_accumulate():
    w = ndgrad.ones(3, requires_grad=True)
    w[[0, 0, 0, 2]].sum().backward()
    assert w.grad.tolist() == [3.0, 0.0, 1.0]
    w.grad = None
    w.index_select(0, ndgrad.tensor([1, 1])).sum().backward()
    assert w.grad.tolist() == [0.0, 2.0, 0.0]
    w.grad = None
    w.gather(0, ndgrad.tensor([2, 2, 2])).sum().backward()
    assert w.grad.tolist() == [0.0, 0.0, 3.0]


def test_setitem_gradcheck():
    def f(w, v):
        x = w * 1.0
        x[1:, ::2] = v
        x[[0, 0], [1, 3]] = v[0, 1]
        return x
    w = ndgrad.randn(3, 4, dtype=ndgrad.float64, requires_grad=True)
    v = ndgrad.randn(2, 2, dtype=ndgrad.float64, requires_grad=True)
    assert gradcheck(f, (w, v))
    assert gradgradcheck(f, (w, v))


# ------------------------------------------------------------------ in-place index ops

INPLACE = {
    "scatter_": lambda L, x: x.scatter_(1, L.tensor([[0], [2], [3]]), L.ones(3, 1, dtype=L.float64)),
    "scatter_value_": lambda L, x: x.scatter_(0, L.tensor([[2, 0, 1, 0]]), 4.0),
    "scatter_add_": lambda L, x: x.scatter_add_(0, L.tensor([[1, 1, 1, 1]]), x[:1].clone()),
    "scatter_reduce_": lambda L, x: x.scatter_reduce_(1, L.tensor([[0, 0], [1, 1], [2, 3]]),
                                                      x[:, :2].clone(), "amax",
                                                      include_self=False),
    "index_add_": lambda L, x: x.index_add_(0, L.tensor([0, 0]), x[1:].clone(), alpha=2),
    "index_copy_": lambda L, x: x.index_copy_(1, L.tensor([3, 0]), x[:, :2].clone()),
    "index_fill_": lambda L, x: x.index_fill_(1, L.tensor([1]), -7.0),
    "masked_fill_": lambda L, x: x.masked_fill_(x < 0, 0.0),
    "masked_scatter_": lambda L, x: x.masked_scatter_(x > 0, -x.clone()),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_index_ops_vs_torch(name):
    torch = pytest.importorskip("torch")
    a, b = _x(ndgrad), _x(torch)
    ra, rb = INPLACE[name](ndgrad, a), INPLACE[name](torch, b)
    assert ra is a and rb is b
    np.testing.assert_allclose(a.numpy(), b.numpy())


def test_inplace_index_op_records_graph():
    w = ndgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x = w * 1.0
    x.index_fill_(0, ndgrad.tensor([1]), 0.0)
    assert type(x.grad_fn).__name__ == "IndexFillBackward0"
    (x * x).sum().backward()
    assert w.grad.tolist() == [2.0, 0.0, 6.0]


# ------------------------------------------------------------------ results and reprs

def test_sort_topk_kthvalue_named_tuples():
    x = ndgrad.tensor([3.0, 1.0, 2.0])
    r = x.sort()
    assert r.values.tolist() == [1.0, 2.0, 3.0] and r.indices.tolist() == [1, 2, 0]
    assert repr(r) == ("torch.return_types.sort(\nvalues=tensor([1., 2., 3.]),\n"
                       "indices=tensor([1, 2, 0]))")
    v, i = ndgrad.topk(x, 2)
    assert v.tolist() == [3.0, 2.0] and i.tolist() == [0, 2]
    assert type(ndgrad.kthvalue(x, 2)).__name__ == "kthvalue"


def test_sort_stable_descending_keeps_order_of_ties():
    x = ndgrad.tensor([1, 3, 1, 3, 2, 1])
    assert x.sort(stable=True).indices.tolist() == [0, 2, 5, 4, 1, 3]
    assert x.sort(descending=True, stable=True).indices.tolist() == [1, 3, 4, 0, 2, 5]


def test_nonzero_and_unique():
    x = ndgrad.tensor([[0, 1], [2, 0]])
    assert ndgrad.nonzero(x).tolist() == [[0, 1], [1, 0]]
    rows, cols = x.nonzero(as_tuple=True)
    assert rows.tolist() == [0, 1] and cols.tolist() == [1, 0]
    u, inv, cnt = ndgrad.unique(ndgrad.tensor([3, 1, 3, 2]), return_inverse=True,
                                return_counts=True)
    assert (u.tolist(), inv.tolist(), cnt.tolist()) == ([1, 2, 3], [2, 0, 2, 1], [1, 1, 2])


def test_integer_index_results_have_no_grad():
    w = ndgrad.randn(4, requires_grad=True)
    assert not w.argsort().requires_grad
    assert not w.sort().indices.requires_grad and w.sort().values.requires_grad
    assert not ndgrad.nonzero(w > 0).requires_grad


# ------------------------------------------------------------------ errors

ERRORS = [
    (lambda L, x: x[5], IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda L, x: x[1, 7], IndexError, "index 7 is out of bounds for dimension 1 with size 4"),
    (lambda L, x: x[L.tensor([5])], IndexError,
     "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda L, x: x[[0, 5]], IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda L, x: x[L.tensor([1.0])], IndexError,
     "tensors used as indices must be long, int, byte or bool tensors"),
    (lambda L, x: x[L.tensor([1], dtype=L.int16)], IndexError,
     "tensors used as indices must be long, int, byte or bool tensors"),
    (lambda L, x: x[1.5], IndexError,
     "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
     "indices (got float)"),
    (lambda L, x: x[0, 0, 0], IndexError, "too many indices for tensor of dimension 2"),
    (lambda L, x: x[L.tensor([True, False])], IndexError,
     "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [3, 4] "
     "at index 0"),
    (lambda L, x: x.__setitem__(0, L.ones(5)), RuntimeError,
     "The expanded size of the tensor (4) must match the existing size (5) at non-singleton "
     "dimension 0.  Target sizes: [4].  Tensor sizes: [5]"),
    (lambda L, x: x.__setitem__([0, 1], L.ones(3, 4, dtype=L.float64)), RuntimeError,
     "shape mismatch: value tensor of shape [3, 4] cannot be broadcast to indexing result of "
     "shape [2, 4]"),
    (lambda L, x: x.index_select(0, L.tensor([5])), IndexError, "index out of range in self"),
    (lambda L, x: x.index_select(0, L.tensor([1.0])), RuntimeError,
     "index_select(): Expected dtype int32 or int64 for index"),
    (lambda L, x: x.gather(0, L.tensor([[5]])), RuntimeError,
     "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda L, x: x.gather(0, L.tensor([1])), RuntimeError,
     "Index tensor must have the same number of dimensions as input tensor"),
    (lambda L, x: x.scatter(0, L.tensor([[5]]), 1.0), RuntimeError,
     "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda L, x: x.masked_fill(L.ones(3, 4), 1.0), RuntimeError,
     "masked_fill_ only supports boolean masks, but got mask with dtype float"),
    (lambda L, x: x.masked_scatter(x > -10, L.zeros(2, dtype=L.float64)), RuntimeError,
     "Number of elements of source < number of ones in mask"),
    (lambda L, x: x.take(L.tensor([12])), IndexError,
     "out of range: tried to access index 12 on a tensor of 12 elements."),
    (lambda L, x: x.topk(5), RuntimeError, "selected index k out of range"),
    (lambda L, x: x.kthvalue(5), RuntimeError,
     "kthvalue(): selected number k out of range for dimension 1"),
    (lambda L, x: x.scatter_reduce(0, L.tensor([[0]]), x, "foo"), RuntimeError,
     "reduce argument must be either sum, prod, mean, amax or amin, got foo"),
    (lambda L, x: x.__setitem__([0], L.ones(4)), RuntimeError,
     "Index put requires the source and destination dtypes match, got Double for the destination "
     "and Float for the source."),
    (lambda L, x: x.masked_scatter(x > 0, L.ones(12)), RuntimeError,
     "masked_scatter: expected self and source to have same dtypes but gotDouble and Float"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    f, exc, msg = ERRORS[i]
    x = _x(ndgrad)
    before = x.clone()
    with pytest.raises(exc) as info:
        f(ndgrad, x)
    assert str(info.value) == msg
    np.testing.assert_array_equal(x.numpy(), before.numpy())  # nothing half-modified


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_match_torch(i):
    torch = pytest.importorskip("torch")
    f, exc, msg = ERRORS[i]
    with pytest.raises(exc) as info:
        f(torch, _x(torch))
    assert str(info.value).split("\n")[0] == msg
