"""Ops whose derivative is zero (floor, sign, ...) keep their edges and deliver zeros, and the
version counter of `.grad` moves as PyTorch's does; both compared with PyTorch."""
import pytest

import ndgrad

torch = pytest.importorskip("torch")

ZERO_GRAD_OPS = {
    "floor": lambda m, x: m.floor(x),
    "ceil": lambda m, x: m.ceil(x),
    "trunc": lambda m, x: m.trunc(x),
    "round": lambda m, x: m.round(x),
    "round_decimals": lambda m, x: m.round(x, decimals=1),
    "sign": lambda m, x: m.sign(x),
    "sgn": lambda m, x: m.sgn(x),
    "div_floor": lambda m, x: m.div(x, 2.0, rounding_mode="floor"),
    "div_trunc": lambda m, x: m.div(x, 2.0, rounding_mode="trunc"),
}


def _pair(data, **kw):
    return ndgrad.tensor(data, requires_grad=True, **kw), torch.tensor(data, requires_grad=True, **kw)


def _edges(node):
    return [(None if n is None else type(n).__name__, nr) for n, nr in node.next_functions]


@pytest.mark.parametrize("name", sorted(ZERO_GRAD_OPS))
def test_zero_grad_op_keeps_edge_and_gives_zeros(name):
    f = ZERO_GRAD_OPS[name]
    data = [[1.5, -2.25, 0.0], [3.75, -0.5, 2.0]]
    a, b = _pair(data)
    ya, yb = f(ndgrad, a), f(torch, b)
    assert ya.requires_grad == yb.requires_grad
    assert type(ya.grad_fn).__name__ == type(yb.grad_fn).__name__
    assert _edges(ya.grad_fn) == _edges(yb.grad_fn)
    # autograd.grad: zeros, not "appears to not have been used in the graph"
    (ga,), (gb,) = ndgrad.autograd.grad(ya.sum(), a), torch.autograd.grad(yb.sum(), b)
    # (+ 0: PyTorch's sgn returns an unallocated "zero tensor", which tolist() refuses)
    assert ga.tolist() == (gb + 0).tolist() and str(ga.dtype) == str(gb.dtype)
    # backward(): .grad becomes zeros
    f(ndgrad, a).sum().backward()
    f(torch, b).sum().backward()
    assert a.grad is not None and a.grad.tolist() == (b.grad + 0).tolist()


def test_zero_grad_mixed_with_real_gradient():
    a, b = _pair([0.5, 2.5, -1.5])
    for m, x in ((ndgrad, a), (torch, b)):
        (x * x.floor() + x.sign() * 3).sum().backward()
    assert a.grad.tolist() == b.grad.tolist()  # d/dx: floor(x) only


def test_zero_grad_create_graph_does_not_require_grad():
    a, b = _pair([1.5, -2.5])
    (ga,) = ndgrad.autograd.grad(a.floor().sum(), a, create_graph=True)
    (gb,) = torch.autograd.grad(b.floor().sum(), b, create_graph=True)
    assert ga.tolist() == gb.tolist()
    assert ga.requires_grad == gb.requires_grad and ga.grad_fn is None and gb.grad_fn is None


def test_zero_grad_dtype_and_broadcast():
    a = ndgrad.tensor([1.5], dtype=ndgrad.float64, requires_grad=True)
    b = torch.tensor([1.5], dtype=torch.float64, requires_grad=True)
    oa, ob = ndgrad.tensor([2.0, 3.0]), torch.tensor([2.0, 3.0])
    (ga,) = ndgrad.autograd.grad(ndgrad.div(a.float(), oa, rounding_mode="floor").sum(), a)
    (gb,) = torch.autograd.grad(torch.div(b.float(), ob, rounding_mode="floor").sum(), b)
    assert ga.tolist() == gb.tolist() and ga.shape == gb.shape and ga.dtype == ndgrad.float64


def test_zero_grad_through_where_branches():
    a, b = _pair([1.5, 2.5, -0.5])
    za = ndgrad.where(a > 2, a.round(), a.sign())
    zb = torch.where(b > 2, b.round(), b.sign())
    assert _edges(za.grad_fn) == _edges(zb.grad_fn)
    assert ndgrad.autograd.grad(za.sum(), a)[0].tolist() == \
        torch.autograd.grad(zb.sum(), b)[0].tolist()


# ---------------------------------------------------------------- .grad's version counter
VERSION_CASES = {
    "fresh": lambda x: x * 2,               # taken as it is
    "copied": lambda x: x,                  # sum's expanded gradient is copied
    "fan_in": lambda x: x * x,              # two distinct gradients summed
    "fan_in_3": lambda x: x * x * x,
    "aliased": lambda x: x + x,             # one gradient twice: summed out of place
    "aliased_3": lambda x: (x + x) + x,
    "view": lambda x: x.view(1, 3) @ x.new_ones(3, 2),  # a view of a fresh gradient
}


@pytest.mark.parametrize("name", sorted(VERSION_CASES))
def test_grad_version_after_accumulations(name):
    f = VERSION_CASES[name]
    a, b = _pair([1.0, 2.0, 3.0])
    va, vb = [], []
    for _ in range(3):
        f(a).sum().backward()
        f(b).sum().backward()
        va.append(a.grad._version)
        vb.append(b.grad._version)
    assert va == vb
    assert a.grad.tolist() == b.grad.tolist()


def test_grad_version_user_gradient_and_inputs():
    a, b = _pair([1.0, 2.0])
    ga, gb = ndgrad.ones(2), torch.ones(2)
    a.backward(ga)
    b.backward(gb)
    assert (a.grad is ga) == (b.grad is gb) and a.grad._version == b.grad._version
    for _ in range(2):
        a.sum().backward(inputs=[a])
        b.sum().backward(inputs=[b])
        assert a.grad._version == b.grad._version


def test_in_place_accumulation_is_a_version_bump_seen_by_saved_tensors():
    # .grad used in a graph, then accumulated into by a second backward: the saved .grad is
    # stale, as in PyTorch
    for m in (ndgrad, torch):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        (w * 3).sum().backward()
        u = m.tensor([1.0, 1.0], requires_grad=True)
        y = (u * w.grad).sum()  # saves w.grad
        (w * 3).sum().backward()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()


def test_retain_grad_accumulates_out_of_place():
    res = []
    for m in (ndgrad, torch):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        y = w * 2
        y.retain_grad()
        (y * y).sum().backward(retain_graph=True)
        first = y.grad
        (y * y).sum().backward()
        res.append((first.tolist(), y.grad.tolist(), first is y.grad, first._version,
                    y.grad._version))
    assert res[0] == res[1]
