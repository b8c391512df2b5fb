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


def _count_node_applies(monkeypatch):
    """The names of the nodes that run the Tensor-level OpNode.apply (not the array path)."""
    calls = []
    real = _registry.OpNode.apply

    def counting(node, grads, create_graph):
        calls.append(node.name())
        return real(node, grads, create_graph)
    monkeypatch.setattr(_registry.OpNode, "apply", counting)
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


# ------------------------------------------------ gradients handed between nodes as arrays
# (autograd/engine.py): a node with one edge and no observer passes its array on unwrapped;
# every place where a gradient is observable still sees a Tensor with the same values.

def _fan(L, x):
    """Single-edge chains, a fan-out (a buffer sum), a two-edge node fed an array."""
    y = L.tanh(x * 0.9 + 0.1)
    z = L.exp(y) * 0.5 + L.sigmoid(y)    # y's node gets two gradients: summed
    w = L.log(z + 2) * x                 # a mul with two edges, fed by single-edge nodes
    return y, z, (w / 3).sum()


def test_chains_skip_the_tensor_level_apply(monkeypatch):
    calls = _count_node_applies(monkeypatch)
    x = ndgrad.tensor([[0.3, -0.2], [0.5, 0.1]], requires_grad=True)
    _chain(x).sum().backward()
    assert calls == []  # (every node of the chain, the sum's too, runs on the arrays)
    ref = ndgrad.tensor([[0.3, -0.2], [0.5, 0.1]], requires_grad=True)
    prev = _raw.set_raw_backward(False)
    try:
        _chain(ref).sum().backward()
    finally:
        _raw.set_raw_backward(prev)
    np.testing.assert_array_equal(x.grad.numpy(), ref.grad.numpy())
    assert x.grad.dtype is ndgrad.float32


def test_array_handoff_matches_torch_with_fan_out_and_two_edge_nodes():
    torch = pytest.importorskip("torch")
    a = np.array([[0.3, -0.2], [0.5, 0.1]])
    out = []
    for L in (ndgrad, torch):
        x = L.tensor(a, requires_grad=True)
        _fan(L, x)[-1].backward()
        out.append(np.array(x.grad.tolist()))
    np.testing.assert_allclose(out[0], out[1], rtol=1e-12)


def test_observers_see_tensors_with_the_values_of_the_recorded_execution():
    a = np.array([[0.3, -0.2], [0.5, 0.1]])
    seen = {}
    for raw in (True, False):
        got = seen[raw] = []
        prev = _raw.set_raw_backward(raw)
        try:
            x = ndgrad.tensor(a, requires_grad=True)
            y, z, loss = _fan(ndgrad, x)
            y.retain_grad()
            z.register_hook(lambda g: got.append(("hook", g)))
            y.grad_fn.register_prehook(lambda gs: got.append(("pre", gs[0])))
            y.grad_fn.register_hook(lambda gi, go: got.append(("post", gi[0])))
            loss.backward()
            got.append(("retain", y.grad))
            got.append(("leaf", x.grad))
        finally:
            _raw.set_raw_backward(prev)
    assert [k for k, _ in seen[True]] == [k for k, _ in seen[False]] == \
        ["hook", "pre", "post", "retain", "leaf"]
    for (_, g), (_, ref) in zip(seen[True], seen[False]):
        assert isinstance(g, ndgrad.Tensor) and g.dtype is ref.dtype
        np.testing.assert_allclose(g.numpy(), ref.numpy(), rtol=1e-12)


def test_autograd_grad_of_an_intermediate_after_a_chain():
    x = ndgrad.tensor([0.3, -0.2, 0.5], requires_grad=True)
    y = ndgrad.tanh(x * 0.9)
    loss = ndgrad.exp(ndgrad.sigmoid(y) + 1).sum()
    gy, gx = ndgrad.autograd.grad(loss, (y, x))
    assert isinstance(gy, ndgrad.Tensor) and isinstance(gx, ndgrad.Tensor)
    s = 1 / (1 + np.exp(-y.detach().numpy()))
    ref_y = np.exp(s + 1) * s * (1 - s)
    np.testing.assert_allclose(gy.numpy(), ref_y, rtol=1e-6)
    np.testing.assert_allclose(gx.numpy(), ref_y * (1 - np.tanh(0.9 * x.detach().numpy()) ** 2)
                               * 0.9, rtol=1e-6)


def test_a_chains_fresh_array_becomes_grad_without_copy(monkeypatch):
    from ndgrad.autograd import engine
    x = ndgrad.ones(3, requires_grad=True)
    calls = []
    orig = engine._accumulate_array

    def spy(var, g, own):  # (the engine's array path for leaves)
        calls.append(own)
        return orig(var, g, own)

    monkeypatch.setattr(engine, "_accumulate_array", spy)
    ndgrad.exp(ndgrad.tanh(x * 3)).sum().backward()
    assert calls == [True]
    g = ndgrad.tensor([1.0, 2.0, 3.0])
    y = ndgrad.tanh(x) + 1  # AddBackward0 hands the user's gradient on: copied, not aliased
    y.backward(g)
    assert not np.shares_memory(x.grad._data, g._data)


def test_second_backward_through_a_chain_names_the_first():
    x = ndgrad.tensor([0.3, -0.2], requires_grad=True)
    loss = ndgrad.exp(ndgrad.tanh(x)).sum()
    loss.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        loss.backward()


def test_a_node_whose_dtypes_need_the_recorded_run_inside_a_chain():
    torch = pytest.importorskip("torch")
    out = []
    for L in (ndgrad, torch):
        x = L.tensor([0.3, -0.2, 0.5], dtype=L.float64, requires_grad=True)
        c = L.tensor([1.5, 2.0, -1.0], dtype=L.float32)  # float32 saved, float64 gradient
        loss = L.exp(L.tanh(x) * c).sum()
        loss.backward()
        out.append((np.array(x.grad.tolist()), str(x.grad.dtype)))
        with pytest.raises(RuntimeError, match="a second time"):  # its saved tensors are freed
            loss.backward()
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-12)
    assert out[0][1] == out[1][1]


def test_a_saved_tensor_of_another_dtype_on_the_array_path_rounds_as_torch():
    # mul's node has one edge (the array path) and saved a 0-d float64 tensor: NumPy would
    # multiply the float32 gradient in float64 (a 0-d array is not weak there); PyTorch rounds
    # the product in float32. The array path must give PyTorch's bits.
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a0 = rng.standard_normal(200).astype(np.float32)
    out = []
    for L in (ndgrad, torch):
        a = L.tensor(a0, requires_grad=True)
        b = L.tensor(1 / 3, dtype=L.float64)
        c = L.tensor(a0[::-1].copy())  # (the gradient that reaches a * b: exact in float32)
        (a * b * c).sum().backward()
        out.append(a.grad.numpy())
    assert out[0].dtype == out[1].dtype == np.float32
    np.testing.assert_array_equal(out[0], out[1])


# A node whose one edge is input 1's (input 0 needs no gradient: `W @ x` with W fixed, `c - x`,
# `c / x`) runs formula 1 on the arrays too.
_SECOND_INPUT = {
    "sub": lambda L, c, x: c - x,
    "div": lambda L, c, x: c / x,
    "mul": lambda L, c, x: c * x,
    "mul_broadcast": lambda L, c, x: L.outer(c, c) * x,  # (x's gradient summed to its shape)
    "div_0d": lambda L, c, x: c / x.sum(),
    "atan2": lambda L, c, x: L.atan2(c, x),
    "hypot": lambda L, c, x: L.hypot(c, x),
    "mv": lambda L, c, x: L.mv(L.outer(c, c), x),
    "mm": lambda L, c, x: L.mm(L.outer(c, c), x.unsqueeze(1)),
    "matmul": lambda L, c, x: L.outer(c, c) @ x,
    "dot": lambda L, c, x: L.dot(c, x),
}


@pytest.mark.parametrize("name", sorted(_SECOND_INPUT))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_node_whose_one_edge_is_input_1_runs_on_the_arrays(monkeypatch, name, dtype):
    f = _SECOND_INPUT[name]
    rng = np.random.default_rng(1)
    c0, x0, g0 = (rng.uniform(0.5, 1.5, 3).astype(dtype) for _ in range(3))
    applied = []
    real = _registry.OpNode.apply

    def counting(node, grads, create_graph):
        applied.append(node.name())
        return real(node, grads, create_graph)
    grads = {}
    for raw in (True, False):
        prev = _raw.set_raw_backward(raw)
        try:
            monkeypatch.setattr(_registry.OpNode, "apply", counting)
            x = ndgrad.tensor(x0, requires_grad=True)
            z = f(ndgrad, ndgrad.tensor(c0), ndgrad.tanh(x))
            assert z.grad_fn.next_functions[0][0] is None  # (input 0 has no edge)
            loss = (ndgrad.exp(z) * ndgrad.tensor(g0)).sum()
            applied.clear()
            loss.backward()
            monkeypatch.undo()
            if raw:
                assert z.grad_fn.name() not in applied, applied
            grads[raw] = x.grad.numpy()
            with pytest.raises(RuntimeError, match="a second time"):  # its saved tensors freed
                loss.backward()
        finally:
            _raw.set_raw_backward(prev)
    assert grads[True].dtype == np.dtype(dtype)
    np.testing.assert_array_equal(grads[True], grads[False])
    try:
        import torch
    except ImportError:
        return
    x = torch.tensor(x0, requires_grad=True)
    (torch.exp(f(torch, torch.tensor(c0), torch.tanh(x))) * torch.tensor(g0)).sum().backward()
    np.testing.assert_allclose(grads[True], x.grad.numpy(), rtol=2e-6 if dtype == "float32"
                               else 1e-12)


def test_hooks_registered_then_removed_leave_the_chain_on_the_arrays(monkeypatch):
    # a node's hooks, retain_grad and metadata live in one side object (graph.py, Node._ext);
    # once its hooks are removed the node is back on the array path, with the same gradients
    calls = _count_node_applies(monkeypatch)
    x = ndgrad.tensor([[0.3, -0.2], [0.5, 0.1]], requires_grad=True)
    y = ndgrad.tanh(x * 0.9 + 0.1)
    out = ndgrad.exp(y).sum()
    fn = y.grad_fn
    assert fn._ext is None and fn._hooks is None and fn._pre_hooks is None
    handles = [fn.register_hook(lambda gi, go: None), fn.register_prehook(lambda go: None),
               y.register_hook(lambda g: None)]
    fn.metadata["k"] = 1
    assert fn._ext is not None and fn.metadata == {"k": 1}
    for h in handles:
        h.remove()
    out.backward()
    assert calls == []
    ref = ndgrad.tensor([[0.3, -0.2], [0.5, 0.1]], requires_grad=True)
    ndgrad.exp(ndgrad.tanh(ref * 0.9 + 0.1)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), ref.grad.numpy())


def test_a_hook_in_the_middle_of_a_chain_changes_what_flows_on():
    # the gradient handed straight from node to node (no buffer) still passes the hooks
    torch = pytest.importorskip("torch")
    a = np.array([[0.3, -0.2], [0.5, 0.1]])
    out = []
    for L in (ndgrad, torch):
        x = L.tensor(a, requires_grad=True)
        y = L.tanh(x * 0.9)
        z = L.exp(L.sigmoid(y) + 0.5)
        y.register_hook(lambda g: g * 3)
        z.grad_fn.register_prehook(lambda gs: (gs[0] + 1,))
        L.log(z).sum().backward()
        out.append(np.array(x.grad.tolist()))
    np.testing.assert_allclose(out[0], out[1], rtol=1e-12)


def _mlp(L, x, ws):
    W1, b1, W2, b2 = ws
    h = L.tanh(x @ W1 + b1) * L.sigmoid(x @ W1)  # mm, add (broadcast), mul: two edges each
    return ((h @ W2 + b2) ** 2).sum()


def test_nodes_with_several_edges_run_on_the_arrays(monkeypatch):
    # mm, a broadcasting add and a mul of two tensors run their formulas' raw twins from the
    # engine (OpNode._arrays_apply), with the recorded execution's and PyTorch's gradients
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in [(3, 4), (4,), (4, 2), (2,)]]
    x0 = rng.standard_normal((5, 3))
    grads = {}
    for mode in ("raw", "recorded", "torch"):
        L = torch if mode == "torch" else ndgrad
        ws = [L.tensor(a, requires_grad=True) for a in arrays]
        x = L.tensor(x0, requires_grad=True)
        loss = _mlp(L, x, ws)
        if mode == "raw":
            calls = _count_node_applies(monkeypatch)
            loss.backward()
            monkeypatch.undo()
            assert calls == []
        elif mode == "recorded":
            prev = _raw.set_raw_backward(False)
            try:
                loss.backward()
            finally:
                _raw.set_raw_backward(prev)
        else:
            loss.backward()
        grads[mode] = [np.array(t.grad.tolist()) for t in ws + [x]]
    for a, b, c in zip(grads["raw"], grads["recorded"], grads["torch"]):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, c, rtol=1e-12)


def test_one_array_down_two_edges_is_summed_out_of_place():
    # (x + x) * 2: the add gets an array from the mul and hands that one array down both of its
    # edges; x.grad is their sum, made out of place (version 0, as PyTorch's), and the root
    # gradient is left as it was
    torch = pytest.importorskip("torch")
    out = []
    for L in (ndgrad, torch):
        x = L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True)
        g = L.tensor([0.5, 0.25], dtype=L.float64)
        ((x + x) * 2.0).backward(g)
        out.append((x.grad.tolist(), x.grad._version, g.tolist()))
    assert out[0] == out[1] == ([2.0, 1.0], 0, [0.5, 0.25])


def test_an_mlp_step_runs_every_node_on_the_arrays(monkeypatch):
    # bench W2's graph (mm, a broadcasting bias add, relu, cross_entropy): no node takes the
    # Tensor-level apply or falls back to the recorded execution, no leaf AccumulateGrad.apply;
    # the gradients are PyTorch's
    from ndgrad.autograd import graph
    calls = _count_node_applies(monkeypatch)
    recorded = []
    real = _registry.OpNode._recorded
    monkeypatch.setattr(_registry.OpNode, "_recorded",
                        lambda node, *a: recorded.append(node.name()) or real(node, *a))
    acc = []
    real_acc = graph.AccumulateGrad.apply
    monkeypatch.setattr(graph.AccumulateGrad, "apply",
                        lambda node, *a: acc.append(1) or real_acc(node, *a))
    r = np.random.default_rng(0)
    arrays = [r.standard_normal(s) for s in [(6, 5), (5,), (5, 3), (3,), (4, 6)]]
    target = [0, 2, 1, 2]
    try:
        import torch
    except ImportError:  # (the array path is still checked)
        torch = None
    out = []
    for L in (ndgrad, torch) if torch is not None else (ndgrad,):
        W1, b1, W2, b2 = (L.tensor(a, requires_grad=True) for a in arrays[:4])
        x = L.tensor(arrays[4])
        h = L.relu(x @ W1 + b1)
        L.nn.functional.cross_entropy(h @ W2 + b2, L.tensor(target)).backward()
        out.append([t.grad.numpy() for t in (W1, b1, W2, b2)])
        if L is ndgrad:
            assert calls == [] and recorded == [] and acc == []
    for a, b in zip(*out) if torch is not None else ():
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


def test_formula_shapes_that_need_no_frame_of_their_own():
    # ops/_raw.formula_shape: `lambda grad: grad`, and call trees of ops, array helpers and
    # operators on parameters and constants; anything else is None (the raw twin runs)
    from ndgrad.ops import pointwise, activation, linalg
    relu, add, mm = pointwise.relu._op, pointwise.add._op, linalg._mm._op
    kind, op, args = _raw.formula_shape(relu.formulas[0])
    assert (kind, op.name, args) == ("call", "threshold_backward",
                                     (("p", "grad"), ("p", "result"), ("c", 0)))
    assert _raw.formula_shape(add.formulas[0]) == ("param", "grad")
    assert _raw.formula_shape(activation._log_softmax._op.formulas[0])[0] == "call"
    kind, op, (a, (h, fn, hargs)) = _raw.formula_shape(mm.formulas[0])
    assert (kind, op.name, a, h, fn, hargs) == ("call", "mm", ("p", "grad"), "helper",
                                                linalg._mH._raw, (("p", "other"),))
    assert _raw.formula_shape(lambda grad, a: -(grad * a) + (a > 0) @ a ** 2) == (
        "op", "+", (("op", "neg", (("op", "*", (("p", "grad"), ("p", "a"))),)),
                    ("op", "@", (("op", ">", (("p", "a"), ("c", 0))),
                                 ("op", "**", (("p", "a"), ("c", 2)))))))
    assert _raw.formula_shape(lambda grad, other: pointwise.mul(grad, other=other)) is None
    assert _raw.formula_shape(lambda grad, self: len(self)) is None      # not an op
    assert _raw.formula_shape(lambda grad, self: grad if self else -grad) is None  # a branch
    # one `if <helper call>: return ...` then `return ...`: ("if", test, then, else)
    kind, test, then, other = _raw.formula_shape(pointwise.tanh._op.formulas[0])
    assert (kind, test[0], test[2], then[0], other[0], other[1].name) == (
        "if", "helper", (("p", "result"),), "op", "call", "tanh_backward")

    def two_tests(grad, self):
        if pointwise._is_complex(self):
            return grad * 2
        if pointwise._is_complex(grad):
            return grad * 3
        return grad * 4

    def not_a_helper(grad, self):
        if self:
            return grad * 2
        return grad * 3
    assert _raw.formula_shape(two_tests) is None and _raw.formula_shape(not_a_helper) is None
    k = 3
    assert _raw.formula_shape(lambda grad: pointwise.mul(grad, k)) is None   # a closure


def test_plain_backward_runs_the_formula_the_raw_twin_runs(monkeypatch):
    # every sample of the op table, in float64 and float32: the generated plain backwards and
    # the raw twins alone (every formula shape None) give bit-identical gradients and dtypes
    import glob
    import importlib
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import op_db
    for path in sorted(glob.glob(os.path.join(here, "op_db_*.py"))):
        importlib.import_module(os.path.basename(path)[:-3])

    def run():
        out = []
        for case in op_db.OPS:
            if not case.grad:
                continue
            for arrays, kw, _ in case.samples():
                for dtype in ("float64", "float32"):
                    ts = [ndgrad.tensor(a if i in case.int_inputs else a.astype(dtype),
                                        requires_grad=i not in case.int_inputs)
                          for i, a in enumerate(arrays)]
                    try:
                        y = case.call(ndgrad, ts, kw)
                        ys = [t for t in (y if isinstance(y, (tuple, list)) else (y,))
                              if isinstance(t, ndgrad.Tensor) and t.requires_grad]
                        ins = [t for t in ts if t.requires_grad]
                        gs = ndgrad.autograd.grad([(t * t).sum().real for t in ys], ins,
                                                  allow_unused=True) if ys else ()
                        out.append([None if g is None else g.numpy() for g in gs])
                    except Exception as e:  # (the same error either way)
                        out.append(type(e).__name__)
        return out

    def reset():
        for op in _registry._OPS.values():
            op.raw = op.raw1 = op.bw1 = op.raw2 = op.bw2 = None
    reset()
    fast = run()
    reset()
    monkeypatch.setattr(_raw, "formula_shape", lambda f: None)
    try:
        slow = run()
    finally:
        reset()
    assert len(fast) == len(slow) > 500
    for a, b in zip(fast, slow):
        if isinstance(a, str) or isinstance(b, str):
            assert a == b
            continue
        for x, y in zip(a, b):
            assert (x is None) == (y is None)
            if x is not None:
                assert x.dtype == y.dtype and x.shape == y.shape
                np.testing.assert_array_equal(x, y)


def _relu_nll_chain(L, x0, target):
    x = L.tensor(x0, requires_grad=True)
    loss = L.nn.functional.cross_entropy(L.relu(x) * 2, L.tensor(target))
    return x, loss


def test_plain_backward_frees_what_it_read_and_keeps_it_under_retain_graph():
    x0 = np.array([[0.5, -1.0, 2.0], [1.5, 0.2, -0.3]])
    x, loss = _relu_nll_chain(ndgrad, x0, [2, 0])
    loss.backward(retain_graph=True)
    g = x.grad.numpy().copy()
    loss.backward()                                  # saved values still there
    np.testing.assert_allclose(x.grad.numpy(), 2 * g)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()


def test_plain_backward_leaves_changed_and_hooked_saved_tensors_to_the_general_rules():
    x = ndgrad.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = ndgrad.relu(x)
    z = y * 1
    y.add_(1)                                        # relu saved its result: now changed
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward(retain_graph=True)
    seen = []

    def pack(t):
        seen.append("pack")
        return t

    def unpack(t):
        seen.append("unpack")
        return t
    x = ndgrad.tensor([0.5, -1.0, 2.0], requires_grad=True)
    with ndgrad.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = ndgrad.relu(x)
    y.sum().backward()
    assert seen == ["pack", "unpack"] and x.grad.tolist() == [1.0, 0.0, 1.0]


def test_plain_backward_of_a_one_call_formula_matches_torch_across_dtypes():
    torch = pytest.importorskip("torch")
    r = np.random.default_rng(1)
    for dtype in ("float32", "float64", "float16"):
        x0 = r.standard_normal((4, 5)).astype(dtype)
        out = []
        for L in (ndgrad, torch):
            x, loss = _relu_nll_chain(L, x0, [0, 4, 2, 1])
            loss.backward()
            out.append((str(x.grad.dtype), x.grad.detach().numpy()))
        assert out[0][0] == out[1][0]
        np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-3 if dtype == "float16" else 1e-6)


def _block(L, x, w, b, wo, bo):
    """A transformer block's shapes: a linear layer (addmm through 2-d views), the heads split
    by view and transpose, attention, merged back, another linear layer."""
    B, T, C = x.shape
    qkv = L.nn.functional.linear(x, w, b)
    q, k, v = (t.view(B, T, 2, C // 2).transpose(1, 2) for t in qkv.split(C, 2))
    a = L.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    return L.nn.functional.linear(a.transpose(1, 2).reshape(B, T, C), wo, bo)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linear_layers_and_head_views_run_on_the_arrays(monkeypatch, dtype):
    """AddmmBackward0 (a linear layer's), ViewBackward0, TransposeBackward0 and
    UnsafeViewBackward0 run their formulas on the arrays (their helpers have array twins: ops/
    linalg.py, ops/shape.py), with the recorded execution's bits, against PyTorch too."""
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s).astype(dtype)
              for s in ((2, 5, 8), (24, 8), (24,), (8, 8), (8,))]
    seed = rng.standard_normal((2, 5, 8)).astype(dtype)
    grads = {}
    for raw in (True, False):
        prev = _raw.set_raw_backward(raw)
        try:
            ts = [ndgrad.tensor(a, requires_grad=True) for a in arrays]
            y = _block(ndgrad, *ts)
            calls = _count_applies(monkeypatch)
            y.backward(ndgrad.tensor(seed))
            monkeypatch.undo()
        finally:
            _raw.set_raw_backward(prev)
        grads[raw] = [t.grad.numpy() for t in ts]
        names = set(calls) - {"sum_to", "to_dtype"}
        if raw:   # (left recorded: split's backward, a cat; a linear layer without a bias is a
            assert names <= {"cat"}, names   # matmul, whose joint formula stays recorded)
        else:
            assert {"mm", "t", "view", "transpose"} <= names
    for r, g in zip(grads[True], grads[False]):
        assert r.tobytes() == g.tobytes()
    torch = pytest.importorskip("torch")
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    _block(torch, *ts).backward(torch.tensor(seed))
    for t, g in zip(ts, grads[True]):
        np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-4 if dtype == "float32" else 1e-10,
                                   atol=2e-4 if dtype == "float32" else 1e-12)
