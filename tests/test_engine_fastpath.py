"""Invariants the fast path relies on: gradients handed to .grad without a copy never alias a
user's tensor or another leaf; accumulation is in place like PyTorch's; deep graphs neither
recurse in backward nor overflow the C stack when dropped."""
import sys

import numpy as np
import pytest

import ndgrad
from ndgrad.autograd import graph


def _shares(a, b):
    return np.shares_memory(a._data, b._data)


def test_root_grad_passed_through_is_not_aliased():
    x = ndgrad.ones(3, requires_grad=True)
    y = x + 1                    # AddBackward0 hands `grad` itself to x
    g = ndgrad.tensor([1.0, 2.0, 3.0])
    y.backward(g)
    assert x.grad is not g and not _shares(x.grad, g)
    g.mul_(10)                   # the user's tensor changes, x.grad does not
    assert x.grad.tolist() == [1.0, 2.0, 3.0]
    y2 = x + 1
    y2.backward(ndgrad.ones(3))  # in-place accumulation into x.grad must not touch g
    assert g.tolist() == [10.0, 20.0, 30.0]
    assert x.grad.tolist() == [2.0, 3.0, 4.0]


def test_two_leaves_fed_the_same_gradient_do_not_share_it():
    a = ndgrad.ones(4, requires_grad=True)
    b = ndgrad.ones(4, requires_grad=True)
    (a + b).sum().backward()
    assert not _shares(a.grad, b.grad)
    a.grad.add_(1)
    assert b.grad.tolist() == [1.0] * 4


def test_fresh_gradient_becomes_grad_without_copy_but_hook_copies_stay_apart():
    x = ndgrad.ones(3, requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g))
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0, 3.0]
    assert seen[0] is not x.grad and not _shares(seen[0], x.grad)


@pytest.mark.filterwarnings("ignore:Anomaly Detection")
def test_the_engine_steals_an_unreferenced_fresh_gradient():
    # the refcount proof works: a formula's fresh output becomes .grad as is (no copy)
    x = ndgrad.ones(3, requires_grad=True)
    acc = x._get_accumulator()
    calls = []
    orig = x._accumulate_grad

    def spy(g, create_graph, owned=False, *rest):
        calls.append(owned)
        return orig(g, create_graph, owned, *rest)

    x._accumulate_grad = spy
    with ndgrad.autograd.detect_anomaly():  # (anomaly mode: AccumulateGrad's apply())
        (x * 3).sum().backward()
    assert calls == [True]
    del acc


def test_the_engine_steals_an_unreferenced_fresh_array_gradient(monkeypatch):
    # the engine's array path for leaves: the same proof, in the engine's frame
    from ndgrad.autograd import engine
    calls = []
    orig = engine._accumulate_array

    def spy(var, g, own):
        calls.append((own, g.shape))
        return orig(var, g, own)

    monkeypatch.setattr(engine, "_accumulate_array", spy)
    w = ndgrad.ones(3, 2, requires_grad=True)
    b = ndgrad.zeros(2, requires_grad=True)
    x = ndgrad.ones(4, 3)
    (x @ w + b).sum().backward()
    assert sorted(calls) == [(True, (2,)), (True, (3, 2))]
    assert w.grad.tolist() == [[4.0, 4.0]] * 3 and b.grad.tolist() == [4.0, 4.0]
    calls.clear()
    g_w = w.grad
    (x @ w + b).sum().backward()  # into the existing .grad, in place, one version more
    assert w.grad is g_w and w.grad.tolist() == [[8.0, 8.0]] * 3 and w.grad._version == 1
    assert b.grad.tolist() == [8.0, 8.0] and len(calls) == 2


def test_a_linear_layers_weight_gradient_is_stolen_as_a_view(monkeypatch):
    # nn.Linear's weight enters addmm as weight.t(): its gradient is formed transposed and
    # transposed back, a view of the whole of a fresh array nothing else holds: it becomes
    # .grad without a copy (PyTorch's AccumulateGrad steals it too), and then accumulates in place
    from ndgrad.autograd import engine
    calls = []
    orig = engine._accumulate_array

    def spy(var, g, own):
        calls.append((own, g.base is not None))
        return orig(var, g, own)

    monkeypatch.setattr(engine, "_accumulate_array", spy)
    lin = ndgrad.nn.Linear(5, 3)
    x = ndgrad.ones(4, 5)
    lin(x).sum().backward()
    assert (True, True) in calls and all(own for own, _ in calls)
    assert lin.weight.grad.tolist() == [[4.0] * 5] * 3 and lin.weight.grad._version == 0
    g = lin.weight.grad
    lin(x).sum().backward()
    assert lin.weight.grad is g and g.tolist() == [[8.0] * 5] * 3 and g._version == 1


def test_a_view_whose_base_is_held_elsewhere_is_copied():
    from ndgrad.autograd import engine
    # (results taken outside the asserts: pytest's rewriting holds their operands)
    base = np.arange(6.0).reshape(2, 3)
    held = engine._sole_view(base.T)              # `base` holds the memory too
    part = engine._sole_view(np.arange(12.0).reshape(4, 3)[:2])   # part of its base
    sole = engine._sole_view(np.arange(6.0).reshape(2, 3).T)      # nothing else holds it
    assert (held, part, sole) == (False, False, True)


def test_array_gradients_of_leaves_follow_pytorch():
    torch = pytest.importorskip("torch")
    out = []
    for lib in (ndgrad, torch):
        w = lib.ones(3, 2, requires_grad=True)
        b = lib.zeros(2, requires_grad=True)
        a = lib.ones(2, requires_grad=True)
        x = lib.ones(4, 3)
        res = []
        for _ in range(2):
            y = (x @ w + b).relu() * (a + a)
            y.sum().backward()
            res.append([t.grad.tolist() for t in (w, b, a)])
            res.append([t.grad._version for t in (w, b)])
        a.grad.add_(1)  # a's gradient went down two edges: .grad owns its copy
        res.append(b.grad.tolist())
        out.append(res)
    assert out[0] == out[1]


def test_accumulation_is_in_place_like_pytorch():
    x = ndgrad.ones(2, requires_grad=True)
    (x * 2).sum().backward()
    g = x.grad
    before = g.tolist()
    (x * 3).sum().backward()
    assert g is x.grad
    assert before == [2.0, 2.0] and g.tolist() == [5.0, 5.0]


def test_accumulation_matches_torch_semantics():
    torch = pytest.importorskip("torch")
    for lib in (ndgrad, torch):
        x = lib.ones(2, requires_grad=True)
        (x * 2).sum().backward()
        g = x.grad
        (x * 3).sum().backward()
        assert g is x.grad and g.tolist() == [5.0, 5.0]


def test_buffer_sums_do_not_mutate_incoming_gradients():
    x = ndgrad.ones(3, requires_grad=True)
    g = ndgrad.tensor([1.0, 2.0, 3.0])
    y = x + x + x + x
    y.backward(g)
    assert g.tolist() == [1.0, 2.0, 3.0]
    assert x.grad.tolist() == [4.0, 8.0, 12.0]


def test_retained_grad_is_not_aliased_with_the_leaf_grad():
    x = ndgrad.ones(3, requires_grad=True)
    y = x * 1
    y.retain_grad()
    z = y + 0
    z.sum().backward()
    assert not _shares(y.grad, x.grad)
    y.grad.add_(5)
    assert x.grad.tolist() == [1.0, 1.0, 1.0]


def test_create_graph_accumulates_out_of_place_and_double_backward_is_right():
    x = ndgrad.tensor([1.0, 2.0], dtype=ndgrad.float64, requires_grad=True)
    y = (x ** 3).sum()
    (g,) = ndgrad.autograd.grad(y, x, create_graph=True)
    g.sum().backward()
    assert x.grad.tolist() == [6.0, 12.0]


def test_broadcast_and_dtype_reduction_on_the_edge():
    a = ndgrad.ones(3, 1, requires_grad=True)
    b = ndgrad.ones(1, 4, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.shape == (3, 1) and a.grad.tolist() == [[4.0]] * 3
    assert b.grad.shape == (1, 4) and b.grad.tolist() == [[3.0] * 4]


def test_deep_chain_backward_without_recursion():
    n = 20000
    x = ndgrad.ones(8, requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.0
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)  # the engine must not recurse
    try:
        y.sum().backward()
    finally:
        sys.setrecursionlimit(limit)
    assert x.grad.tolist() == [1.0] * 8


def test_dropping_a_deep_graph_without_backward_does_not_overflow():
    x = ndgrad.ones(2, requires_grad=True)
    y = x
    for _ in range(100000):
        y = y + 1.0
    del y  # CPython's trashcan deallocates the chain of slot objects iteratively


def test_saved_tensors_are_released_after_backward():
    x = ndgrad.ones(3, requires_grad=True)
    y = x.exp()
    node = y.grad_fn
    y.sum().backward()
    assert node._saved is graph.RELEASED


def test_no_graph_is_built_when_nothing_requires_grad():
    x = ndgrad.ones(3)
    y = (x * 2).exp()
    assert y.grad_fn is None and not y.requires_grad
    with ndgrad.no_grad():
        z = ndgrad.ones(3, requires_grad=True) * 2
    assert z.grad_fn is None


def test_promotion_fast_path_keeps_pytorch_dtypes():
    torch = pytest.importorskip("torch")
    cases = [(lambda L: L.ones(2, dtype=L.int64) * 2.5),
             (lambda L: L.ones(2, dtype=L.int64) * 2),
             (lambda L: L.ones(2, dtype=L.float64) * 2),
             (lambda L: L.ones(2, dtype=L.int32) / 2),
             (lambda L: L.ones(2, dtype=L.bool) + True),
             (lambda L: L.ones(2) * L.ones(2, dtype=L.float64)),
             (lambda L: L.ones(2, dtype=L.float16) + 1.5)]
    for f in cases:
        assert str(f(ndgrad).dtype) == str(f(torch).dtype)


def test_w1_chain_matches_torch():
    torch = pytest.importorskip("torch")
    out = []
    for L in (ndgrad, torch):
        x = L.tensor([[0.3, -0.2], [0.5, 0.1]], dtype=L.float64, requires_grad=True)
        y = x
        for _ in range(20):
            y = L.log(L.exp(L.sigmoid(L.tanh(y * 0.9 + 0.1))))
        y.sum().backward()
        out.append(np.array(x.grad.tolist()))
    np.testing.assert_allclose(out[0], out[1], rtol=1e-10)


# A sum of two large gradients goes in place into the first one when reference counts prove that
# only the engine's buffer holds it (PyTorch's InputBuffer does the same by use count): never
# into a gradient that a hook, retain_grad, autograd.grad or another buffer also holds.
N_LARGE = 4096


def _fresh_sums(monkeypatch, n):
    """How many out-of-place additions of n-element arrays the backward of a graph makes whose
    one sum adds two fresh, unshared gradients (add's array forward, counted)."""
    from ndgrad.ops._registry import _OPS
    op = _OPS["add"]
    real, sizes = op.fwd_plain, []

    def counting(xp, self, other, alpha=1):
        sizes.append(getattr(self, "size", 1))
        return real(xp, self, other, alpha)
    x = ndgrad.full((n,), 0.5, requires_grad=True)
    a = x.tanh()
    loss = ((a * 2 + a * 3) * 1.5).sum()
    monkeypatch.setattr(op, "fwd_plain", counting)
    monkeypatch.setattr(op, "forward", counting)
    loss.backward()
    monkeypatch.undo()
    np.testing.assert_allclose(x.grad.numpy(), 7.5 * (1 - np.tanh(0.5) ** 2), rtol=1e-6)
    return sizes.count(n)


@pytest.mark.parametrize("n", [3, N_LARGE])
def test_large_sums_go_in_place_into_an_unshared_gradient(monkeypatch, n):
    from ndgrad.autograd import engine
    assert _fresh_sums(monkeypatch, n) == (n < N_LARGE)
    monkeypatch.setattr(engine, "_IN_PLACE_MIN", 1 << 62)  # (the counter sees every sum)
    assert _fresh_sums(monkeypatch, n) == 1


# In each graph below the gradient that reaches the shared input first is one that something else
# still holds (the engine runs the last edge of a node first): an in-place sum would change it.

def test_large_sums_leave_a_gradient_held_by_another_buffer_alone():
    for lib in _libs():
        x = lib.ones(N_LARGE, dtype=lib.float64, requires_grad=True)
        a = x * 3
        u = a * 2
        b = a + a.sin()  # (u + b and b hand the incoming gradient on to `a` unchanged, while
        ((u + b) * 1.5).sum().backward()  # u's node, still to run, holds it too)
        np.testing.assert_allclose(x.grad.numpy(), 4.5 * (3 + np.cos(3.0)), rtol=1e-14)


def test_large_sums_leave_a_hooked_gradient_alone():
    for lib in _libs():
        x = lib.ones(N_LARGE, requires_grad=True)
        y = x * 1
        p = y + 0.0
        kept = []
        p.register_hook(lambda g: kept.append(g))
        ((y * 2 + p) * 1.5).sum().backward()
        assert kept[0].numpy().tolist() == [1.5] * N_LARGE
        assert x.grad.numpy().tolist() == [4.5] * N_LARGE


def test_large_sums_leave_a_retained_gradient_alone():
    for lib in _libs():
        x = lib.ones(N_LARGE, requires_grad=True)
        y = x * 1
        p = y + 0.0
        p.retain_grad()
        ((y * 2 + p) * 1.5).sum().backward()
        assert p.grad.numpy().tolist() == [1.5] * N_LARGE
        assert x.grad.numpy().tolist() == [4.5] * N_LARGE


def test_large_sums_leave_captured_gradients_alone():
    for lib in _libs():
        x = lib.ones(N_LARGE, requires_grad=True)
        y = x * 1
        p = y + 0.0
        gp, gx = lib.autograd.grad(((y * 2 + p) * 1.5).sum(), [p, x])
        assert gp.numpy().tolist() == [1.5] * N_LARGE
        assert gx.numpy().tolist() == [4.5] * N_LARGE


def _libs():
    try:
        import torch
    except ImportError:
        return [ndgrad]
    return [ndgrad, torch]


@pytest.mark.parametrize("inputs", ["leaf", "middle", "both", "leaf_of_two"])
def test_grad_runs_exactly_the_nodes_on_a_path_to_its_inputs(inputs):
    # autograd.grad runs only what leads to its inputs: when every path ends at one (all the
    # graph's leaves are inputs) the engine skips the post-order walk, otherwise it prunes
    torch = pytest.importorskip("torch")
    out = {}
    for L in (ndgrad, torch):
        calls = []

        class Counted(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                calls.append(1)
                return g * 2

        x = L.tensor([0.3, -0.2], requires_grad=True)
        w = L.tensor([1.5, 0.5], requires_grad=True)
        y = L.tanh(Counted.apply(x) * 0.9)
        loss = (L.exp(y) * (w if inputs == "leaf_of_two" else 1.0)).sum()
        want = {"leaf": (x,), "middle": (y,), "both": (y, x), "leaf_of_two": (x,)}[inputs]
        got = L.autograd.grad(loss, want)
        out[L.__name__] = ([np.array(g.tolist()) for g in got], len(calls), x.grad, w.grad)
    (a, na, xa, wa), (b, nb, xb, wb) = out["ndgrad"], out["torch"]
    assert na == nb == (0 if inputs == "middle" else 1)
    assert xa is None and wa is None and xb is None and wb is None
    for p, q in zip(a, b):
        np.testing.assert_allclose(p, q, rtol=1e-6)


def test_leaves_reached_twice_get_the_sum_like_pytorch():
    # a leaf's gradient from two edges of one node (x * x), from two nodes (x * w + x @ m), or
    # from one edge: the engine's leaf path must never drop a buffered gradient
    torch = pytest.importorskip("torch")
    a = np.array([[0.5, -1.0], [2.0, 0.25]])
    out = []
    for L in (ndgrad, torch):
        x = L.tensor(a, requires_grad=True)
        w = L.tensor(a * 2, requires_grad=True)
        m = L.tensor(a.T.copy())
        ((x * x).sum() + (x * w + x @ m).sum()).backward()
        out.append((x.grad.numpy().copy(), w.grad.numpy().copy()))
    for p, q in zip(*out):
        np.testing.assert_allclose(p, q, rtol=1e-12)


def test_nodes_made_ready_by_one_node_run_in_pytorchs_order():
    # a node of several edges makes two interior nodes ready (the last one runs next, carried
    # without the stack) and a leaf (whose AccumulateGrad runs first): hooks see PyTorch's order
    torch = pytest.importorskip("torch")
    logs, grads = [], []
    for L in (ndgrad, torch):
        log = []
        x = L.tensor([0.5, -1.5], requires_grad=True)
        w = L.tensor([2.0, 3.0], requires_grad=True)
        a = x * 2
        b = x.exp()
        a.register_hook(lambda g: log.append("a"))
        b.register_hook(lambda g: log.append("b"))
        w.register_post_accumulate_grad_hook(lambda p: log.append("w"))
        c = a * b      # two interior inputs, each with this one consumer
        d = a.sin() * b.cos()  # (another pair, made in the opposite order)
        (c * w).sum().backward(retain_graph=True)
        d.sum().backward()
        logs.append(log)
        grads.append((x.grad.tolist(), w.grad.tolist()))
    assert logs[0] == logs[1]
    np.testing.assert_allclose(np.array(grads[0][0]), np.array(grads[1][0]), rtol=1e-6)
    assert grads[0][1] == pytest.approx(grads[1][1])
