"""Forward-mode AD: tangents (JVPs) against reverse-mode Jacobians, op by op.

Every op of the op table (tests/op_db.py and tests/op_db_*.py) is checked, and a list of core ops
(those with cheap JVP rules) is run twice: with the rules and with the general double-VJP
fallback forced.
"""
import glob
import importlib
import os

import numpy as np
import pytest

import ndgrad
import ndgrad.autograd.forward_ad as fwAD
from ndgrad.autograd import forward_ad as _fwd_mod


def _table():
    import sys
    here = os.path.dirname(__file__)
    sys.path.insert(0, here)
    try:
        cases = []
        try:
            op_db = importlib.import_module("op_db")
            for path in sorted(glob.glob(os.path.join(here, "op_db_*.py"))):
                importlib.import_module(os.path.basename(path)[:-3])
            cases = [c for c in op_db.OPS if c.grad]
        except Exception:  # the table is optional: the core list below always runs
            cases = []
        return cases
    finally:
        sys.path.remove(here)


def _c(name, fn, shapes, domain=(-2.0, 2.0)):
    return (name, fn, shapes, domain)


CORE = [
    _c("add", lambda L, a, b: L.add(a, b, alpha=2), [(2, 3), (3,)]),
    _c("sub", lambda L, a, b: a - b, [(2, 3), (2, 1)]),
    _c("mul", lambda L, a, b: a * b, [(2, 3), (3,)]),
    _c("div", lambda L, a, b: a / b, [(3,), (3,)], (0.5, 2.0)),
    _c("pow", lambda L, a: a ** 3, [(4,)]),
    _c("pow_tensor", lambda L, a, b: L.pow(a, b), [(3,), (3,)], (0.5, 2.0)),
    _c("rpow", lambda L, a: 2.0 ** a, [(3,)]),
    _c("neg", lambda L, a: -a, [(3,)]),
    _c("exp", lambda L, a: L.exp(a), [(2, 2)]),
    _c("log", lambda L, a: L.log(a), [(3,)], (0.5, 2.0)),
    _c("sqrt", lambda L, a: L.sqrt(a), [(3,)], (0.5, 2.0)),
    _c("tanh", lambda L, a: L.tanh(a), [(3,)]),
    _c("sigmoid", lambda L, a: L.sigmoid(a), [(3,)]),
    _c("relu", lambda L, a: L.relu(a), [(5,)]),
    _c("abs", lambda L, a: L.abs(a), [(5,)]),
    _c("clamp", lambda L, a: L.clamp(a, -0.5, 0.5), [(5,)]),
    _c("where", lambda L, a, b: L.where(a > 0, a, b), [(4,), (4,)]),
    _c("sum", lambda L, a: a.sum(), [(2, 3)]),
    _c("sum_dim", lambda L, a: a.sum(1, keepdim=True), [(2, 3)]),
    _c("mean", lambda L, a: a.mean(0), [(2, 3)]),
    _c("norm", lambda L, a: a.norm(), [(2, 3)]),
    _c("matmul", lambda L, a, b: a @ b, [(2, 3), (3, 4)]),
    _c("mv", lambda L, a, b: L.mv(a, b), [(2, 3), (3,)]),
    _c("dot", lambda L, a, b: L.dot(a, b), [(3,), (3,)]),
    _c("bmm", lambda L, a, b: L.bmm(a, b), [(2, 2, 3), (2, 3, 2)]),
    _c("reshape", lambda L, a: a.reshape(3, 2), [(2, 3)]),
    _c("view", lambda L, a: a.view(6), [(2, 3)]),
    _c("transpose", lambda L, a: a.transpose(0, 1), [(2, 3)]),
    _c("permute", lambda L, a: a.permute(2, 0, 1), [(2, 3, 2)]),
    _c("squeeze", lambda L, a: a.squeeze(1), [(2, 1, 3)]),
    _c("unsqueeze", lambda L, a: a.unsqueeze(0), [(2, 3)]),
    _c("expand", lambda L, a: a.expand(2, 3), [(1, 3)]),
    _c("index", lambda L, a: a[[0, 2]], [(3, 2)]),
    _c("slice", lambda L, a: a[1:, ::2], [(3, 4)]),
    _c("clone", lambda L, a: a.clone(), [(3,)]),
    _c("chain", lambda L, a, b: (L.tanh(a @ b) * a.sum()).exp().mean(1), [(2, 3), (3, 2)]),
]


def _rev_jacobian(fn, xs):
    """Reverse mode: one autograd.grad per output element."""
    xs = [x.detach().requires_grad_() for x in xs]
    y = fn(*xs)
    rows = []
    for k in range(y.numel()):
        g = np.zeros(y.numel())
        g[k] = 1
        gs = ndgrad.autograd.grad(y, xs, ndgrad.tensor(g.reshape(y.shape)), retain_graph=True,
                                  allow_unused=True, materialize_grads=True)
        rows.append(np.concatenate([gi.numpy().reshape(-1) for gi in gs]))
    n_in = sum(x.numel() for x in xs)
    return np.array(rows).reshape(y.numel(), n_in)


def _fwd_jacobian(fn, xs):
    """Forward mode: one dual evaluation per input element."""
    cols = []
    for i, x in enumerate(xs):
        for j in range(x.numel()):
            with fwAD.dual_level():
                duals = []
                for k, xk in enumerate(xs):
                    t = np.zeros(xk.numel())
                    if k == i:
                        t[j] = 1
                    duals.append(fwAD.make_dual(xk, ndgrad.tensor(t.reshape(xk.shape))))
                y = fn(*duals)
                tangent = fwAD.unpack_dual(y).tangent
                cols.append(np.zeros(y.numel()) if tangent is None
                            else tangent.numpy().reshape(-1).copy())
    if not cols:
        return np.zeros((fn(*xs).numel(), 0))
    return np.array(cols).T


def _check(fn, xs):
    rev = _rev_jacobian(fn, xs)
    fwd = _fwd_jacobian(fn, xs)
    np.testing.assert_allclose(fwd, rev, rtol=1e-7, atol=1e-9)


@pytest.fixture(params=["rules", "double_vjp"])
def mode(request, monkeypatch):
    if request.param == "double_vjp":
        monkeypatch.setattr(_fwd_mod, "_RULES", {})
    return request.param


@pytest.mark.parametrize("case", CORE, ids=[c[0] for c in CORE])
def test_core_ops_forward_vs_reverse(case, mode):
    name, fn, shapes, (lo, hi) = case
    rng = np.random.default_rng(0)
    xs = [ndgrad.tensor(rng.uniform(lo, hi, size=s)) for s in shapes]
    _check(lambda *a: fn(ndgrad, *a), xs)


TABLE = _table()


@pytest.mark.parametrize("case", TABLE, ids=[c.name for c in TABLE])
def test_op_table_forward_vs_reverse(case):
    # (most table ops have no JVP rule and use the double-VJP fallback; the ops with rules are
    # checked in both modes by test_core_ops_forward_vs_reverse)
    if not case.gradgrad:
        pytest.skip("backward not twice differentiable: the double-VJP fallback needs it")
    checked = 0
    for arrays, kw, sid in case.samples():
        if any(a.size > 30 for a in arrays):
            continue
        diff = [i for i in range(len(arrays)) if i not in case.int_inputs]
        ts = [ndgrad.tensor(a) for a in arrays]

        def fn(*d, _kw=kw, _ts=ts, _diff=diff):
            full = list(_ts)
            for i, v in zip(_diff, d):
                full[i] = v
            out = case.call(ndgrad, full, _kw)
            return out[0] if isinstance(out, (tuple, list)) else out
        xs = [ts[i] for i in diff]
        try:
            rev = _rev_jacobian(fn, xs)
        except Exception:  # reverse mode itself failing is tests/test_op_db.py's business
            continue
        if not np.isfinite(fn(*xs).detach().numpy()).all() or not np.isfinite(rev).all():
            continue  # no derivative to compare at a nan/inf
        np.testing.assert_allclose(_fwd_jacobian(fn, xs), rev, rtol=1e-7, atol=1e-9,
                                   err_msg=sid)
        checked += 1
    if not checked:
        pytest.skip("no sample with a finite reverse-mode Jacobian")


def test_unpack_dual_and_levels():
    x = ndgrad.tensor([1.0, 2.0], requires_grad=True)
    with fwAD.dual_level() as lvl:
        assert lvl == 0
        d = fwAD.make_dual(x, ndgrad.ones(2))
        assert repr(d.grad_fn).startswith("<ViewBackward0")
        p, t = fwAD.unpack_dual(d)
        assert isinstance(fwAD.unpack_dual(d), fwAD.UnpackedDualTensor)
        assert t.tolist() == [1.0, 2.0 / 2.0]
        assert fwAD.unpack_dual(p).tangent is None
        assert fwAD.unpack_dual(x).tangent is None
        assert fwAD.unpack_dual(x).primal is x
    assert fwAD.unpack_dual(d).tangent is None  # the level is gone
    with fwAD.dual_level() as lvl:
        assert lvl == 0
        assert fwAD.unpack_dual(d).tangent is None  # a new level does not see old tangents


def test_make_dual_errors_match_torch():
    torch = pytest.importorskip("torch")
    import torch.autograd.forward_ad as tfw
    for lib, fw in ((torch, tfw), (ndgrad, fwAD)):
        with pytest.raises(RuntimeError) as e1:
            fw.make_dual(lib.ones(3), lib.ones(3))
        with fw.dual_level():
            with pytest.raises(RuntimeError) as e2:
                fw.make_dual(lib.ones(3), lib.ones(2))
        if lib is torch:
            want = (str(e1.value), str(e2.value))
        else:
            assert (str(e1.value), str(e2.value)) == want


def test_nested_levels_second_derivative():
    # d^2/dx^2 of x^3 at x=2 via two nested levels: 6 * x = 12
    x = ndgrad.tensor(2.0, dtype=ndgrad.float64)
    with fwAD.dual_level():
        x1 = fwAD.make_dual(x, ndgrad.tensor(1.0, dtype=ndgrad.float64))
        with fwAD.dual_level():
            x2 = fwAD.make_dual(x1, ndgrad.tensor(1.0, dtype=ndgrad.float64))
            y = x2 ** 3
            t_inner = fwAD.unpack_dual(y).tangent          # 3 x^2, with an outer tangent
        assert t_inner.item() == pytest.approx(12.0)
        assert fwAD.unpack_dual(t_inner, level=0).tangent.item() == pytest.approx(12.0)


def test_forward_over_reverse_hvp():
    rng = np.random.default_rng(1)
    a = ndgrad.tensor(rng.standard_normal((3, 3)))
    x0 = ndgrad.tensor(rng.standard_normal(3))
    v = ndgrad.tensor(rng.standard_normal(3))

    def f(x):
        return (ndgrad.tanh(a @ x) ** 2).sum() + (x * x * x).sum()

    x = x0.detach().requires_grad_()
    with fwAD.dual_level():
        xd = fwAD.make_dual(x, v)
        (g,) = ndgrad.autograd.grad(f(xd), xd, create_graph=True)
        hv = fwAD.unpack_dual(g).tangent
    # reverse-over-reverse reference
    x = x0.detach().requires_grad_()
    (g,) = ndgrad.autograd.grad(f(x), x, create_graph=True)
    (ref,) = ndgrad.autograd.grad(g, x, v)
    np.testing.assert_allclose(hv.detach().numpy(), ref.numpy(), rtol=1e-10)


def test_reverse_over_forward():
    # grad of a JVP: the tangent is differentiable with respect to the primal
    x = ndgrad.tensor([0.3, -0.7], dtype=ndgrad.float64, requires_grad=True)
    with fwAD.dual_level():
        y = ndgrad.exp(fwAD.make_dual(x, ndgrad.ones(2, dtype=ndgrad.float64))).sum()
        t = fwAD.unpack_dual(y).tangent       # sum(exp(x))
    (g,) = ndgrad.autograd.grad(t, x)
    np.testing.assert_allclose(g.numpy(), np.exp(x.detach().numpy()), rtol=1e-12)


def test_no_level_no_tangent_state():
    x = ndgrad.ones(2)
    y = x * 2
    assert "_fw_grads" not in y.__dict__


def test_inplace_ops_carry_the_tangent():
    torch = pytest.importorskip("torch")
    import torch.autograd.forward_ad as tfw
    res = []
    for lib, fw in ((ndgrad, fwAD), (torch, tfw)):
        x = lib.tensor([0.5, 1.0, 2.0], dtype=lib.float64)
        with fw.dual_level():
            d = fw.make_dual(x, lib.tensor([1.0, -1.0, 0.5], dtype=lib.float64))
            y = d * 1
            y.mul_(3)
            y.exp_()
            y.add_(d)
            a = fw.unpack_dual(y).tangent.tolist()
            y.zero_()
            b = fw.unpack_dual(y).tangent
            b = None if b is None else b.tolist()
        res.append((a, b))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-12)
    assert res[0][1] == [0.0, 0.0, 0.0] and res[1][1] in (None, [0.0, 0.0, 0.0])


def test_forward_over_reverse_without_create_graph():
    # autograd.grad keeps the gradient's tangent (as PyTorch does), and gradients summed in the
    # engine's buffers (x used several times) add their tangents too
    x = ndgrad.tensor([1.0, 2.0], dtype=ndgrad.float64, requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, ndgrad.ones(2, dtype=ndgrad.float64))
        y = (d ** 3).sum() + (d * d * d).sum()
        (g,) = ndgrad.autograd.grad(y, d)
        primal, tangent = fwAD.unpack_dual(g)
    assert primal.tolist() == [6.0, 24.0]          # 6 x^2
    assert tangent.tolist() == [12.0, 24.0]        # 12 x


class _SquareWithJvp(ndgrad.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return 100 * x * t          # deliberately not 2 x t: the user's rule must be the one used


class _RawForward(ndgrad.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return ndgrad.tensor(x.detach().numpy() ** 2)

    @staticmethod
    def backward(ctx, g):
        return g


def test_custom_function_jvp():
    torch = pytest.importorskip("torch")
    x = ndgrad.tensor([1.0, 2.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(x, ndgrad.ones(2))
        assert fwAD.unpack_dual(_SquareWithJvp.apply(d)).tangent.tolist() == [100.0, 200.0]
        with pytest.raises(NotImplementedError) as e:
            _RawForward.apply(d)
    # PyTorch's message for a Function without jvp
    class TRaw(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g
    import torch.autograd.forward_ad as tfw
    with tfw.dual_level():
        with pytest.raises(NotImplementedError) as te:
            TRaw.apply(tfw.make_dual(torch.ones(2), torch.ones(2)))
    assert str(e.value) == str(te.value)
