"""One formula, two executions (ops/_raw.py): with create_graph off, derivative formulas run on
plain arrays; with create_graph on (or forced), through Tensors and ops. Both give the same
gradients; the op-table tests (tests/test_op_db.py) check every op under both."""
import os
import subprocess
import sys

import numpy as np
import pytest

import ndgrad
from ndgrad.ops import _raw, _registry


def _count_applies(monkeypatch):
    """How many ops run through the Tensor-level apply (the recorded execution's calls)."""
    calls = []
    real = _registry.apply

    def counting(op, args, kwargs):
        calls.append(op.name)
        return real(op, args, kwargs)
    monkeypatch.setattr(_registry, "apply", counting)
    return calls


def _chain(x):
    return ndgrad.sigmoid(ndgrad.log(ndgrad.exp(ndgrad.tanh(x * 0.9 + 0.1)) + 2)) / 3


@pytest.mark.parametrize("raw", [True, False])
def test_formulas_run_on_arrays_unless_forced(monkeypatch, raw):
    x = ndgrad.tensor([[0.3, -0.2], [0.5, 0.1]], requires_grad=True)
    y = _chain(x)
    g = ndgrad.ones_like(y)
    prev = _raw.set_raw_backward(raw)
    try:
        calls = _count_applies(monkeypatch)
        y.backward(g)
    finally:
        _raw.set_raw_backward(prev)
    formula_ops = [c for c in calls if c not in ("sum_to", "to_dtype")]
    if raw:
        assert formula_ops == []
    else:
        assert {"mul", "div", "tanh_backward", "sigmoid_backward"} <= set(formula_ops)


def test_both_executions_agree():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4))
    grads = []
    for raw in (True, False):
        prev = _raw.set_raw_backward(raw)
        try:
            x = ndgrad.tensor(a, requires_grad=True)
            _chain(x).sum().backward()
            grads.append(x.grad.numpy())
        finally:
            _raw.set_raw_backward(prev)
    np.testing.assert_array_equal(grads[0], grads[1])


def test_create_graph_uses_the_recorded_execution():
    x = ndgrad.tensor([0.3, -0.4], dtype=ndgrad.float64, requires_grad=True)
    g, = ndgrad.autograd.grad(ndgrad.tanh(x).sum(), x, create_graph=True)
    assert g.grad_fn is not None and type(g.grad_fn).__name__ == "TanhBackwardBackward0"
    gg, = ndgrad.autograd.grad(g.sum(), x)
    t = np.tanh(x.detach().numpy())
    np.testing.assert_allclose(gg.numpy(), -2 * t * (1 - t * t))


def test_mixed_dtypes_fall_back_to_recorded_and_match_torch():
    torch = pytest.importorskip("torch")
    xs = {}
    for L in (ndgrad, torch):
        a = L.tensor([1.5, -2.0], dtype=L.float32, requires_grad=True)
        b = L.tensor(3.0, dtype=L.float64, requires_grad=True)  # 0-d: a's dtype wins
        (a * b / (b + 1)).sum().backward()
        xs[L.__name__] = (a.grad, b.grad)
    for ours, theirs in zip(xs["ndgrad"], xs["torch"]):
        assert str(ours.dtype) == str(theirs.dtype)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_which_formulas_qualify():
    from ndgrad.ops import pointwise, reduction
    assert _registry._compile_raw(pointwise.mul._op)
    assert _registry._compile_raw(pointwise.tanh._op)
    assert _raw.raw_formula(lambda grad, self: grad.sum(0)) is None      # a Tensor method
    assert _raw.raw_formula(lambda grad, self: len(self) * grad) is None  # a builtin
    assert _raw.raw_formula(lambda grad, self: [grad][0]) is None         # indexing
    f = _raw.raw_formula(lambda grad, other: pointwise.cos(grad) * other)
    assert f is None  # attribute of a module: not resolved
    del reduction


def test_an_error_in_a_formula_reads_as_in_the_recorded_execution():
    # a saved tensor modified in place: the version error comes out either way
    msgs = []
    for raw in (True, False):
        prev = _raw.set_raw_backward(raw)
        try:
            x = ndgrad.tensor([1.0, 2.0], requires_grad=True)
            y = x * 1
            z = y.exp()
            with ndgrad.no_grad():
                z.mul_(2)
            with pytest.raises(RuntimeError) as e:
                z.sum().backward()
            msgs.append(str(e.value).splitlines()[0])
        finally:
            _raw.set_raw_backward(prev)
    assert msgs[0] == msgs[1] and "modified by an inplace operation" in msgs[0]


def test_environment_switch():
    code = ("import ndgrad.ops._raw as r; print(r.raw_backward_enabled())")
    for value, expect in (("1", "False"), ("0", "True"), ("", "True")):
        env = dict(os.environ, NDGRAD_RECORDED_BACKWARD=value)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env=env).stdout.strip()
        assert out == expect
