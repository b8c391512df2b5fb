"""Higher-order gradients through the short formulas of matmul's 1-d cases (dot, mv) and of
tanh_backward/sigmoid_backward (bench W8), against PyTorch: values, grad_fn names, and the
third order, where the formulas' own formulas run."""
import numpy as np
import pytest

import ndgrad
from ndgrad import func as F
from ndgrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

ACTS = ["tanh", "sigmoid"]


def _inputs(lib, n=5, seed=0):
    r = np.random.default_rng(seed)
    W1, W2 = r.standard_normal((2, n, n)) / 2
    w3, x, v = r.standard_normal((3, n))
    return [lib.tensor(a) for a in (W1, W2, w3, x, v)]


def _mlp(lib, act, W1, W2, w3, x):
    f = getattr(lib, act)
    return w3 @ f(W2 @ f(W1 @ x))


def _np(t):
    return t.detach().numpy()


def _names(lib, t):
    """grad_fn names of the graph of t, breadth first."""
    out, todo, seen = [], [t.grad_fn], set()
    while todo:
        fn = todo.pop(0)
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        out.append(type(fn).__name__)
        todo.extend(f for f, _ in fn.next_functions)
    return sorted(out)


@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("weights_grad", [False, True])
def test_hvp_through_mlp_matches_torch(act, weights_grad):
    res = {}
    for lib in (ndgrad, torch):
        W1, W2, w3, x, v = _inputs(lib)
        for t in (W1, W2, x) if weights_grad else (x,):
            t.requires_grad_(True)
        f = _mlp(lib, act, W1, W2, w3, x)
        g, = lib.autograd.grad(f, x, create_graph=True)
        names = _names(lib, g)
        hv, = lib.autograd.grad(g @ v, x, create_graph=True)
        # third order: d/dx <v, H(x) v>
        t3, = lib.autograd.grad(hv @ v, x)
        res[lib] = (g, hv, t3, type(g.grad_fn).__name__, type(hv.grad_fn).__name__, names)
    (g, hv, t3, n1, n2, names), (tg, thv, tt3, tn1, tn2, tnames) = res[ndgrad], res[torch]
    for a, b in ((g, tg), (hv, thv), (t3, tt3)):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-10, atol=1e-12)
    assert (n1, n2) == (tn1, tn2)
    if not weights_grad:  # (with weight grads torch's graph also holds its TBackward0 views)
        assert names == tnames


@pytest.mark.parametrize("act", ACTS)
def test_gradgradcheck_with_constant_weights(act):
    W1, W2, w3, x, v = _inputs(ndgrad)
    x.requires_grad_(True)

    def grad_f(x):
        return ndgrad.autograd.grad(_mlp(ndgrad, act, W1, W2, w3, x), x, create_graph=True)[0]

    assert gradcheck(grad_f, (x,))
    assert gradgradcheck(grad_f, (x,))


@pytest.mark.parametrize("act", ACTS)
def test_forward_over_reverse_with_weight_tangent(act):
    """A tangent on a weight that does not require grad flows through mv's backward formulas."""
    W1, W2, w3, x, v = _inputs(ndgrad)
    dW = ndgrad.tensor(np.random.default_rng(1).standard_normal(W2.shape))

    def grad_x(W2):
        return F.grad(lambda x: _mlp(ndgrad, act, W1, W2, w3, x))(x)

    _, jv = F.jvp(grad_x, (W2,), (dW,))
    tW1, tW2, tw3, tx, _ = _inputs(torch)

    def tgrad_x(W2):
        return torch.func.grad(lambda x: _mlp(torch, act, tW1, W2, tw3, x))(tx)

    _, tjv = torch.func.jvp(tgrad_x, (tW2,), (torch.tensor(dW.numpy()),))
    np.testing.assert_allclose(_np(jv), _np(tjv), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", ["mv", "vm", "dot"])
def test_matmul_1d_grads_of_each_input_match_torch(case):
    r = np.random.default_rng(2)
    shapes = {"mv": ((3, 4), (4,)), "vm": ((3,), (3, 4)), "dot": ((4,), (4,))}[case]
    arrays = [r.standard_normal(s) for s in shapes]
    for which in ((0,), (1,), (0, 1)):
        res = []
        for lib in (ndgrad, torch):
            a, b = (lib.tensor(x, requires_grad=i in which) for i, x in enumerate(arrays))
            y = (a @ b).sin().sum()
            gs = lib.autograd.grad(y, [(a, b)[i] for i in which], create_graph=True)
            s = sum((g * g).sum() for g in gs)
            ggs = lib.autograd.grad(s, [(a, b)[i] for i in which])
            res.append(([type(g.grad_fn).__name__ for g in gs], gs, ggs))
        (n, gs, ggs), (tn, tgs, tggs) = res
        assert n == tn
        for p, q in zip(gs + ggs, tgs + tggs):
            np.testing.assert_allclose(_np(p), _np(q), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("op", ["relu", "softmax", "log_softmax", "cross_entropy"])
def test_activation_double_backward_matches_torch(op):
    """relu, softmax and log_softmax backward through PyTorch's fused threshold_backward and
    _(log_)softmax_backward_data: same values, grad_fn names and graph edges, to third order."""
    r = np.random.default_rng(3)
    x0, w0 = r.standard_normal((2, 4, 5))
    y0 = r.integers(0, 5, 4)
    res = []
    for lib in (ndgrad, torch):
        x, w = lib.tensor(x0, requires_grad=True), lib.tensor(w0)
        if op == "relu":
            f = (lib.relu(x) * x * w).sum()
        elif op in ("softmax", "log_softmax"):
            f = (getattr(lib, op)(x * w, 1) * w).sum()
        else:
            f = lib.nn.functional.cross_entropy(x * w, lib.tensor(y0))
        g, = lib.autograd.grad(f, x, create_graph=True)
        gg, = lib.autograd.grad((g * g * w).sum(), x, create_graph=True)
        ggg, = lib.autograd.grad((gg * w).sum(), x)
        res.append((g, gg, ggg, _names(lib, g)))
    for a, b in zip(res[0][:3], res[1][:3]):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-10, atol=1e-12)
    assert res[0][3] == res[1][3]
