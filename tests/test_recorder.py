"""The node builders of simple ops (ops/_registry.py `_recorder`: straight-line code made once
per op and mask of inputs that require grad) build exactly the node that the general `_record`
builds: the same edges, metadata, saved values (and their versions) and creation site."""
import traceback

import numpy as np
import pytest

import ndgrad
from ndgrad.autograd.graph import SavedTensor
from ndgrad.ops import _registry as R

UNARY = ["tanh", "exp", "log", "sigmoid", "sin", "sqrt", "abs", "neg", "relu", "reciprocal",
         "erf", "expm1", "log1p", "rsqrt", "atan", "sinh"]
BINARY = ["mul", "add", "sub", "div", "pow", "atan2", "hypot", "maximum", "minimum", "fmod",
          "copysign", "xlogy", "remainder"]


def _saved_view(saved):
    """A node's saved values, comparable across two nodes built on the same arguments."""
    if saved is None:
        return None
    out = {}
    for k, v in saved.items():
        if type(v) is SavedTensor:
            out[k] = ("saved", id(v.tensor), None if v.data is None else id(v.data),
                      id(v.vc), v.version, v.output_nr, v._hooks_packed, v.fw,
                      getattr(v, "requires_grad", None) if v.tensor is None else None)
        else:
            out[k] = ("value", v)
    return out


def _general_node(op, args, result):
    """The node the general path builds for `args` and the forward's `result`."""
    r = R._make(result._data)
    r._vc = result._vc  # (the saved result's version counter is compared by identity)
    R._record(op, args, None, (r,), depth=2)
    return r.grad_fn


def _compare(args, out):
    node = out.grad_fn
    op = node._op
    assert op.simple  # (the ops this file covers take the simple ops' node builders)
    ref = _general_node(op, args, out)
    assert (node._c0, node._n0, node._crest) == (ref._c0, ref._n0, ref._crest)
    assert node._meta == ref._meta
    assert _saved_view(node._saved) == _saved_view(ref._saved)
    for slot in ("_pre_hooks", "_hooks", "_tensor_hooks", "_retain", "_metadata"):
        assert getattr(node, slot) is None
    # the creation site: this file, the line that called the op
    assert node._site[0].co_filename == __file__


def _inputs(name):
    rng = np.random.default_rng(0)
    return [ndgrad.tensor(rng.uniform(0.5, 2.0, (3, 2))) for _ in range(2)]


@pytest.mark.parametrize("name", UNARY)
def test_unary_recorder_builds_the_general_node(name):
    x, _ = _inputs(name)
    x.add_(0.0)
    x.requires_grad_()
    fn = getattr(ndgrad, name)
    out = fn(x)
    _compare((x,), out)
    y = x * 1.0  # an interior input: its grad_fn is the edge
    out = fn(y)
    _compare((y,), out)
    assert out.grad_fn._c0 is y.grad_fn


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("mask", [1, 2, 3])
@pytest.mark.parametrize("leaf", [True, False])
def test_binary_recorder_builds_the_general_node(name, mask, leaf):
    a, b = _inputs(name)
    a.add_(0.0)  # (versions other than 0 are saved as they are)
    b.mul_(1.0)
    b.mul_(1.0)
    if mask & 1:
        a.requires_grad_()
    if mask & 2:
        b.requires_grad_()
        if not leaf:
            b = b * 1.0  # input 1 from an interior node
    fn = getattr(ndgrad, name)
    out = fn(a, b)
    _compare((a, b), out)
    out.sum().backward()
    if mask & 1:
        assert a.grad is not None and a.grad.shape == a.shape


@pytest.mark.parametrize("case", ["nll", "threshold1", "threshold2", "threshold3"])
def test_general_path_ops_take_the_recorder(case, monkeypatch):
    # three arguments, or tensors of two dtypes: apply's general path, whose _finish builds a
    # simple op's node with its recorder (not _record): the same node, created at this line
    from ndgrad.ops import nn_ops, pointwise
    x, y = _inputs(case)
    t = ndgrad.tensor([0, 1, 1])
    if case == "nll":
        x.requires_grad_()
        fn, args = nn_ops.nll_loss_index, (x, t, 3)
    else:
        mask = int(case[-1])
        if mask & 1:
            x.requires_grad_()
        if mask & 2:
            y.requires_grad_()
        fn, args = pointwise.threshold_backward, (x, y, 1.0)
    general = []
    monkeypatch.setattr(R, "_record", lambda *a, **k: general.append(a))
    out = fn(*args)
    monkeypatch.undo()
    assert not general
    _compare(args, out)
    out.sum().backward()


@pytest.mark.parametrize("other", [0.9, 2, 3.5])
def test_tensor_and_scalar_recorder(other):
    x = ndgrad.tensor([[0.5, 1.5]], requires_grad=True)
    for name in ("mul", "add", "sub", "div", "pow"):
        fn = getattr(ndgrad, name)
        out = fn(x, other)
        _compare((x, other), out)


def test_saved_versions_are_checked_and_the_inference_error_raised():
    x = ndgrad.tensor([0.5, 1.5], requires_grad=True)
    y = x * 1.0
    z = ndgrad.tanh(y)
    z.add_(1)  # the saved result changes: backward must refuse
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    with ndgrad.inference_mode():
        w = ndgrad.ones(2)
    with pytest.raises(RuntimeError) as e:
        ndgrad.mul(x, w)  # saving an inference tensor for backward
    assert str(e.value) == R._ERR_INFERENCE_SAVED
    # a traceback through the builder shows its generated lines
    text = "".join(traceback.format_exception(e.value))
    assert "raise RuntimeError(_ERR_INFERENCE_SAVED)" in text


def test_saved_tensor_hooks_take_the_general_save():
    x = ndgrad.tensor([0.5, 1.5], requires_grad=True)
    packed = []

    def pack(t):
        packed.append(t)
        return t.detach().clone()

    with ndgrad.autograd.graph.saved_tensors_hooks(pack, lambda t: t * 2):
        y = ndgrad.tanh(x * 1.0)
    assert len(packed) == 1  # tanh saved its result through the hook
    assert type(y.grad_fn._saved["result"]) is SavedTensor
    assert y.grad_fn._saved["result"]._hooks_packed is not None
    y.sum().backward()
    ref = 1 - (2 * np.tanh(np.array([0.5, 1.5]))) ** 2
    np.testing.assert_allclose(x.grad.numpy(), ref, rtol=1e-5)


@pytest.mark.parametrize("name,key", [("tanh", "result"), ("exp", "result"), ("log", "self")])
def test_a_node_that_saves_one_tensor_keeps_it_as_its_saved_mapping(name, key):
    x = ndgrad.tensor([0.5, 1.5], dtype=ndgrad.float64, requires_grad=True)
    y = getattr(ndgrad, name)(x)
    saved = y.grad_fn._saved
    assert type(saved) is SavedTensor and saved.name == key  # (no dict: one object less)
    # ... which answers as the mapping {key: itself}
    assert list(saved.items()) == [(key, saved)] and list(saved.values()) == [saved]
    assert list(saved.keys()) == [key] and list(saved) == [key] and bool(saved)  # (no __len__)
    assert saved.get(key) is saved and saved.get("other") is None and saved[key] is saved
    assert key in saved and "other" not in saved
    with pytest.raises(KeyError):
        saved["other"]
    ref = {"tanh": np.tanh, "exp": np.exp, "log": lambda a: a}[name](np.array([0.5, 1.5]))
    np.testing.assert_array_equal(getattr(y.grad_fn, "_saved_" + key).detach().numpy(), ref)
    # a mul by a number keeps the number in a dict
    assert y.grad_fn._saved is saved and type((x * 2.0).grad_fn._saved) is dict
    # an in-place change of a saved input gives the node a snapshot under the same name
    z = x.clone()
    w = z.log()
    z.mul_(2) if name == "log" else None
    if name == "log":
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            w.sum().backward()
    y.sum().backward()
    g = {"tanh": 1 - np.tanh([0.5, 1.5]) ** 2, "exp": np.exp([0.5, 1.5]),
         "log": 1 / np.array([0.5, 1.5])}[name]
    np.testing.assert_allclose(x.grad.numpy(), g, rtol=1e-15)
    with pytest.raises(RuntimeError, match="a second time"):
        y.sum().backward()


def test_viz_lists_a_single_saved_tensor():
    from ndgrad import viz
    x = ndgrad.ones(2, 3, requires_grad=True)
    names = [n for n, _ in viz._saved_items(ndgrad.tanh(x).grad_fn)]
    assert names == ["result"]


@pytest.mark.parametrize("name", ["log", "tanh", "exp"])
def test_in_place_ops_whose_node_saves_one_tensor(name):
    torch = pytest.importorskip("torch")
    out = []
    for L in (ndgrad, torch):
        x = L.tensor([0.5, 1.5], dtype=L.float64, requires_grad=True)
        z = x * 1.0
        getattr(z, name + "_")()  # log_ saves its input (a snapshot), tanh_/exp_ the result
        (z * z).sum().backward()
        out.append(x.grad.numpy())
    np.testing.assert_allclose(out[0], out[1], rtol=1e-13)
