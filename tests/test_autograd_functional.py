"""autograd.functional (vjp, jvp, jacobian, hessian, hvp, vhp) against PyTorch and finite
differences: values, output structure (tensor / tuple / tuple of tuples) and strict errors."""
import numpy as np
import pytest

import ndgrad
from ndgrad.autograd import functional as F


def _np(x):
    return x.detach().numpy()


def _same_structure(a, b, rtol=1e-10):
    """a: ndgrad result, b: torch result; same nesting of tuples, same values."""
    if isinstance(b, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), (type(a), a)
        for x, y in zip(a, b):
            _same_structure(x, y, rtol)
        return
    assert isinstance(a, ndgrad.Tensor), type(a)
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(_np(a), b.detach().numpy(), rtol=rtol, atol=1e-12)


def _inputs(lib, seed, shapes):
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(0.5, 1.5, size=s) for s in shapes]
    ts = tuple(lib.tensor(a) for a in arrays)
    return ts


# functions written once, run with either library
def f_single(L, x):
    return L.exp(x) * x.sum()


def f_multi_in(L, x, y):
    return (x @ y).tanh()


def f_multi_out(L, x, y):
    return x * y.sum(), (x ** 2).sum()


def f_scalar(L, x, y):
    return (L.sin(x) * y).sum() + (x * x * y).sum() if hasattr(L, "sin") else \
        (L.exp(x) * y).sum() + (x * x * y).sum()


CASES = [
    ("single", f_single, [(3,)], False),
    ("multi_in", f_multi_in, [(2, 3), (3, 2)], True),
    ("multi_out", f_multi_out, [(2,), (3,)], True),
]


def _call(torch, name, fn, shapes, tup, **kw):
    res = []
    for lib in (ndgrad, torch):
        ins = _inputs(lib, 0, shapes)
        arg = ins if tup else ins[0]
        res.append(getattr(lib.autograd.functional, name)(lambda *a: fn(lib, *a), arg, **kw))
    return res


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_jacobian_matches_torch(case, strategy):
    torch = pytest.importorskip("torch")
    _, fn, shapes, tup = case
    ours, theirs = _call(torch, "jacobian", fn, shapes, tup, strategy=strategy,
                         vectorize=strategy == "forward-mode")
    _same_structure(ours, theirs)


def test_jacobian_against_finite_differences():
    rng = np.random.default_rng(3)
    x0 = rng.standard_normal(4)

    def f(x):
        return ndgrad.tanh(x * x.sum()) * 2.0

    J = F.jacobian(f, ndgrad.tensor(x0))
    eps = 1e-6
    num = np.zeros((4, 4))
    for j in range(4):
        e = np.zeros(4)
        e[j] = eps
        num[:, j] = (_np(f(ndgrad.tensor(x0 + e))) - _np(f(ndgrad.tensor(x0 - e)))) / (2 * eps)
    np.testing.assert_allclose(_np(J), num, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_vjp_jvp_match_torch(case):
    torch = pytest.importorskip("torch")
    _, fn, shapes, tup = case
    rng = np.random.default_rng(1)
    # v for vjp has the outputs' shapes; for jvp the inputs' shapes
    outs = fn(ndgrad, *_inputs(ndgrad, 0, shapes))
    out_shapes = [o.shape for o in (outs if isinstance(outs, tuple) else (outs,))]
    vo = [rng.standard_normal(s) for s in out_shapes]
    vi = [rng.standard_normal(s) for s in shapes]
    for name, vs, vtup in (("vjp", vo, isinstance(outs, tuple)), ("jvp", vi, tup)):
        res = []
        for lib in (ndgrad, torch):
            ins = _inputs(lib, 0, shapes)
            v = tuple(lib.tensor(a) for a in vs)
            res.append(getattr(lib.autograd.functional, name)(
                lambda *a: fn(lib, *a), ins if tup else ins[0], v if vtup else v[0]))
        _same_structure(*res)


@pytest.mark.parametrize("name", ["hessian", "hvp", "vhp"])
@pytest.mark.parametrize("tup", [False, True])
def test_second_order_match_torch(name, tup):
    torch = pytest.importorskip("torch")
    shapes = [(3,), (3,)] if tup else [(3,)]
    rng = np.random.default_rng(2)
    vs = [rng.standard_normal(s) for s in shapes]

    def fn(L, x, y=None):
        y = x if y is None else y
        return (L.exp(x) * y).sum() + (x * x * y * y).sum()

    res = []
    for lib in (ndgrad, torch):
        ins = _inputs(lib, 0, shapes)
        f = getattr(lib.autograd.functional, name)
        arg = ins if tup else ins[0]
        if name == "hessian":
            res.append(f(lambda *a: fn(lib, *a), arg))
        else:
            v = tuple(lib.tensor(a) for a in vs)
            res.append(f(lambda *a: fn(lib, *a), arg, v if tup else v[0]))
    _same_structure(*res)


def test_hessian_forward_mode_outer():
    x = ndgrad.tensor([0.3, -0.2, 0.9], dtype=ndgrad.float64)

    def f(x):
        return (x ** 3).sum() + (x[0] * x[1])
    h1 = F.hessian(f, x)
    h2 = F.hessian(f, x, vectorize=True, outer_jacobian_strategy="forward-mode")
    np.testing.assert_allclose(_np(h1), _np(h2), rtol=1e-12)
    np.testing.assert_allclose(_np(h1), [[1.8, 1, 0], [1, -1.2, 0], [0, 0, 5.4]], rtol=1e-12)


def test_create_graph_gives_differentiable_results():
    x = ndgrad.tensor([1.0, 2.0], requires_grad=True)
    _, g = F.vjp(lambda x: (x ** 3).sum(), x, create_graph=True)
    assert g.requires_grad
    (gg,) = ndgrad.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), [6.0, 12.0])
    _, g = F.vjp(lambda x: (x ** 3).sum(), x)
    assert not g.requires_grad


def test_independent_input_zero_or_strict_error():
    torch = pytest.importorskip("torch")
    for lib in (ndgrad, torch):
        x, y = lib.ones(2), lib.ones(2)
        J = lib.autograd.functional.jacobian(lambda a, b: a * 2, (x, y))
        assert J[1].abs().sum().item() == 0
    msgs = []
    for lib in (ndgrad, torch):
        x, y = lib.ones(2), lib.ones(2)
        calls = [
            lambda: lib.autograd.functional.jacobian(lambda a, b: a * 2, (x, y), strict=True),
            lambda: lib.autograd.functional.vjp(lambda a, b: a * 2, (x, y), lib.ones(2),
                                                strict=True),
            lambda: lib.autograd.functional.vjp(lambda a: a.detach(), x, lib.ones(2),
                                                strict=True),
            lambda: lib.autograd.functional.hessian(lambda a: (a * 2).sum(), x, strict=True),
            lambda: lib.autograd.functional.vjp(lambda a: a * 2, x),
            lambda: lib.autograd.functional.jvp(lambda a: a * 2, x, lib.ones(3)),
            lambda: lib.autograd.functional.jvp(lambda a, b: a * 2, (x, y), (lib.ones(2),)),
            lambda: lib.autograd.functional.hvp(lambda a: a * 2, x, lib.ones(2)),
            lambda: lib.autograd.functional.vjp(lambda a: a * 2, 3.0),
            lambda: lib.autograd.functional.jacobian(lambda a: a, x, strategy="forward-mode"),
            lambda: lib.autograd.functional.jacobian(lambda a: a, x, strategy="sideways"),
        ]
        row = []
        for c in calls:
            with pytest.raises((RuntimeError, TypeError, NotImplementedError,
                                AssertionError)) as e:
                c()
            row.append((type(e.value), str(e.value)))
        msgs.append(row)
    for ours, theirs in zip(*msgs):
        assert ours == theirs


def test_output_structure_without_torch():
    x, y = ndgrad.ones(2), ndgrad.ones(3)
    J = F.jacobian(lambda a, b: (a * 2, b.sum()), (x, y))
    assert isinstance(J, tuple) and len(J) == 2 and all(len(r) == 2 for r in J)
    assert [tuple(j.shape) for j in J[0]] == [(2, 2), (2, 3)]
    assert [tuple(j.shape) for j in J[1]] == [(2,), (3,)]
    J = F.jacobian(lambda a: a.sum(), x)
    assert isinstance(J, ndgrad.Tensor) and tuple(J.shape) == (2,)
