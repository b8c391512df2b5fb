"""In-place ops, version counters and the errors PyTorch raises for them."""
import numpy as np
import pytest

import ndgrad


def test_inplace_ops_values_and_versions():
    x = ndgrad.tensor([1.0, 2.0, 3.0])
    v0 = x._version
    x.add_(1)
    x.sub_(0.5)
    x.mul_(2)
    x.div_(3)
    assert np.allclose(x.numpy(), (np.array([1.0, 2.0, 3.0]) + 0.5) * 2 / 3)
    assert x._version == v0 + 4
    x.clamp_(0.9, 2.0)
    assert x.tolist() == pytest.approx([1.0, 5 / 3, 2.0])
    x.zero_()
    assert x.tolist() == [0.0] * 3
    x.fill_(7)
    assert x.tolist() == [7.0] * 3
    x.copy_(ndgrad.tensor([1, 2, 3]))
    assert x.tolist() == [1.0, 2.0, 3.0] and x.dtype is ndgrad.float32
    x[0] = 5
    assert x.tolist() == [5.0, 2.0, 3.0]
    x += 1
    assert x.tolist() == [6.0, 3.0, 4.0]
    y = x
    y *= 2
    assert y is x and x.tolist() == [12.0, 6.0, 8.0]


def test_inplace_add_alpha_and_broadcasting():
    x = ndgrad.zeros(2, 3)
    x.add_(ndgrad.ones(3), alpha=2)
    assert x.tolist() == [[2.0] * 3] * 2
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        ndgrad.zeros(3).add_(ndgrad.ones(2, 3))


def test_inplace_cast_error():
    x = ndgrad.ones(2, dtype=ndgrad.long)
    with pytest.raises(RuntimeError) as e:
        x.add_(1.5)
    assert str(e.value) == "result type Float can't be cast to the desired output type Long"
    assert x.tolist() == [1, 1]  # unchanged


def test_inplace_on_leaf_requiring_grad_errors():
    x = ndgrad.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError) as e:
        x.add_(1)
    assert str(e.value) == "a leaf Variable that requires grad is being used in an in-place operation."
    assert x.tolist() == [1.0] * 3 and x._version == 0
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x[0] = 2.0
    with ndgrad.no_grad():
        x.mul_(2)  # allowed: how optimizers update parameters
    assert x.tolist() == [2.0] * 3 and x.is_leaf and x.requires_grad


def test_modified_saved_tensor_error_matches_torch():
    x = ndgrad.ones(3, requires_grad=True)
    y = x.exp()
    y.add_(1)  # ExpBackward0 saved its output
    with pytest.raises(RuntimeError) as e:
        y.sum().backward()
    msg = str(e.value)
    assert msg.startswith(
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [torch.FloatTensor [3]], which is output 0 of Exp, is at version 1; "
        "expected version 0 instead.")
    torch = pytest.importorskip("torch")
    tx = torch.ones(3, requires_grad=True)
    ty = tx.exp()
    ty.add_(1)
    with pytest.raises(RuntimeError) as te:
        ty.sum().backward()
    assert msg.split(" Hint:")[0] == str(te.value).split(" Hint:")[0]


def test_modified_saved_input_error():
    a = ndgrad.ones(2, 2, requires_grad=True)
    w = ndgrad.ones(2, 2, requires_grad=True)
    h = a * 2
    out = h * w  # saves h for w's gradient
    h.mul_(3)
    with pytest.raises(RuntimeError, match=r"\[torch.FloatTensor \[2, 2\]\], which is output 0 of Mul, is at version 1; expected version 0 instead"):
        out.sum().backward()


def test_inplace_rebases_history():
    x = ndgrad.tensor([1.0, 2.0, 3.0], dtype=ndgrad.float64, requires_grad=True)
    y = x * 2
    y.add_(1)
    assert y.grad_fn.name() == "AddBackward0"
    assert y.grad_fn.next_functions[0][0].name() == "MulBackward0"
    y.mul_(y)  # mul_ with itself: the old value is saved for backward
    y.exp_() if hasattr(y, "exp_") else None
    y.sum().backward()
    xv = np.array([1.0, 2.0, 3.0])
    z = 2 * xv + 1
    expected = np.exp(z * z) * 2 * z * 2
    assert np.allclose(x.grad.numpy(), expected)


def test_inplace_matches_torch_gradients():
    torch = pytest.importorskip("torch")

    def prog(lib, x, w):
        h = x * 1
        h.mul_(w)
        h.add_(w, alpha=0.5)
        h.sub_(1).div_(w.abs() + 1)
        h.clamp_(-0.8, 0.8)
        h[0] = h[1] * 2
        h += x
        return (h * h).sum()

    rng = np.random.default_rng(0)
    X, W = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    x, w = ndgrad.tensor(X, requires_grad=True), ndgrad.tensor(W, requires_grad=True)
    tx, tw = torch.tensor(X, requires_grad=True), torch.tensor(W, requires_grad=True)
    out, tout = prog(ndgrad, x, w), prog(torch, tx, tw)
    out.backward()
    tout.backward()
    assert np.allclose(out.item(), tout.item())
    assert np.allclose(x.grad.numpy(), tx.grad.numpy())
    assert np.allclose(w.grad.numpy(), tw.grad.numpy())


def test_setitem_gradients():
    x = ndgrad.zeros(4, dtype=ndgrad.float64, requires_grad=True)
    v = ndgrad.tensor([1.0, 2.0], dtype=ndgrad.float64, requires_grad=True)
    h = x.clone()
    h[1:3] = v * 3
    (h * ndgrad.arange(4, dtype=ndgrad.float64)).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0, 3.0]
    assert v.grad.tolist() == [3.0, 6.0]


def test_inplace_through_view_updates_base_and_gradient():
    x = ndgrad.ones(2, 3, dtype=ndgrad.float64, requires_grad=True)
    h = x * 1
    row = h[0]
    row.mul_(5)
    assert h.tolist()[0] == [5.0] * 3  # the base sees the write
    h.sum().backward()
    assert x.grad.tolist() == [[5.0] * 3, [1.0] * 3]


def test_view_of_leaf_inplace_error():
    x = ndgrad.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an in-place operation."):
        x[0:2].add_(1)


def test_detach_shares_version_counter():
    x = ndgrad.ones(3, requires_grad=True)
    y = x.exp()
    y.detach().zero_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
