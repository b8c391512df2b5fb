"""autograd.explain(t): every cause of a missing gradient, named with this file's lines."""
import sys

import pytest

import ndgrad
from ndgrad.autograd import explain


def _line():
    return sys._getframe(1).f_lineno


def _at(line):
    return f'File "{__file__}", line {line}'


def test_created_under_no_grad():
    x = ndgrad.ones(3, requires_grad=True)
    with ndgrad.no_grad():
        L = _line(); y = x * 2  # noqa: E702
    text = str(explain(y))
    assert "requires_grad is False" in text and "torch.no_grad()" in text and _at(L) in text


def test_created_under_inference_mode():
    x = ndgrad.ones(3, requires_grad=True)
    with ndgrad.inference_mode():
        L = _line(); y = x.exp()  # noqa: E702
    text = str(explain(y))
    assert "torch.inference_mode()" in text and _at(L) in text


def test_produced_by_detach():
    x = ndgrad.ones(3, requires_grad=True)
    L = _line(); y = (x * 2).detach()  # noqa: E702
    text = str(explain(y))
    assert "detach()" in text and _at(L) in text


def test_integer_and_bool_dtypes():
    for t in (ndgrad.arange(3), ndgrad.ones(2, dtype=ndgrad.bool)):
        text = str(explain(t))
        assert "integer or bool" in text and str(t.dtype) in text


def test_plain_leaf_without_requires_grad():
    text = str(explain(ndgrad.ones(2)))
    assert "requires_grad=False" in text
    assert "no_grad" not in text and "detach" not in text


def test_non_leaf_without_retain_grad():
    x = ndgrad.ones(3, requires_grad=True)
    L = _line(); y = x * 2  # noqa: E702
    y.sum().backward()
    e = explain(y)
    text = str(e)
    assert "not a leaf" in text and "retain_grad()" in text and _at(L) in text
    assert "MulBackward0" in text
    assert len(e.reasons) == 1


def test_non_leaf_with_retain_grad_is_set():
    x = ndgrad.ones(3, requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.sum().backward()
    assert explain(y).reasons == [] and ".grad is set" in str(explain(y))


def test_not_reachable_from_the_backpropagated_tensor():
    a = ndgrad.ones(2, requires_grad=True)
    b = ndgrad.ones(2, requires_grad=True)
    L = _line(); (a * 2).sum().backward()  # noqa: E702
    text = str(explain(b))
    assert "not reachable" in text and _at(L) in text and "SumBackward0" in text
    text_a = str(explain(a))
    assert ".grad is set" in text_a and _at(L) in text_a


def test_backward_with_inputs_that_exclude_it():
    a = ndgrad.ones(2, requires_grad=True)
    b = ndgrad.ones(2, requires_grad=True)
    L = _line(); (a * b).sum().backward(inputs=[a])  # noqa: E702
    text = str(explain(b))
    assert "inputs=" in text and _at(L) in text


def test_grad_reset_by_zero_grad_set_to_none():
    w = ndgrad.ones(2, requires_grad=True)
    (w * 3).sum().backward()
    optim = pytest.importorskip("ndgrad.optim")
    if not hasattr(optim, "SGD"):
        pytest.skip("optim.SGD not available")
    opt = optim.SGD([w], lr=0.1)
    L = _line(); opt.zero_grad(set_to_none=True)  # noqa: E702
    text = str(explain(w))
    assert "reset to None" in text and _at(L) in text
    assert "not reachable" not in text


def test_grad_reset_by_assignment():
    w = ndgrad.ones(2, requires_grad=True)
    (w * 3).sum().backward()
    L = _line(); w.grad = None  # noqa: E702
    assert _at(L) in str(explain(w))


def test_no_backward_yet():
    from ndgrad.autograd import graph
    saved = graph.last_backward[0]
    graph.last_backward[0] = None
    try:
        text = str(explain(ndgrad.ones(2, requires_grad=True)))
        assert "no backward() has run yet" in text
    finally:
        graph.last_backward[0] = saved


def test_explanation_prints_and_repr():
    e = explain(ndgrad.arange(2))
    assert repr(e) == str(e) and str(e).startswith("leaf tensor of shape [2]")
    with pytest.raises(TypeError):
        explain([1, 2])


def test_grad_reset_by_module_zero_grad():
    nn = pytest.importorskip("ndgrad.nn")
    if not hasattr(nn, "Linear"):
        pytest.skip("nn.Linear not available")
    lin = nn.Linear(2, 1)
    lin(ndgrad.ones(1, 2)).sum().backward()
    L = _line(); lin.zero_grad()  # noqa: E702
    text = str(explain(lin.weight))
    assert "reset to None" in text and _at(L) in text
