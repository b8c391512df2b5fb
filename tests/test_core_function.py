"""Custom autograd Functions (torch.autograd.Function)."""
import numpy as np
import pytest

import ndgrad
from ndgrad.autograd import Function, gradcheck, gradgradcheck, once_differentiable


class LegendreP3(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 0.5 * (5 * x ** 3 - 3 * x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 1.5 * (5 * x ** 2 - 1)


class MulConst(Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None


class SplitSign(Function):
    @staticmethod
    def forward(ctx, x):
        idx = (x > 0)
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(idx)
        return x.abs(), idx

    @staticmethod
    def backward(ctx, g, g_idx):
        (idx,) = ctx.saved_tensors
        return g * (idx.double() * 2 - 1)


class AddOneInplace(Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g


class ExpSavingOutput(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


def x64(*shape, seed=0):
    return ndgrad.randn(*shape, dtype=ndgrad.float64, generator=ndgrad.Generator().manual_seed(seed)).requires_grad_()


def test_node_name_and_gradcheck():
    x = x64(4)
    y = LegendreP3.apply(x)
    assert repr(y.grad_fn).startswith("<LegendreP3Backward object at 0x")
    assert gradcheck(LegendreP3.apply, (x,))
    assert gradgradcheck(LegendreP3.apply, (x,))


def test_non_tensor_args_and_ctx_attributes():
    x = x64(3)
    MulConst.apply(x, 3.0).sum().backward()
    assert x.grad.tolist() == [3.0] * 3


def test_needs_input_grad():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, a, b, k):
            seen["needs"] = ctx.needs_input_grad
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g, g, None

    Probe.apply(x64(2), ndgrad.ones(2, dtype=ndgrad.float64), 1)
    assert seen["needs"] == (True, False, False)


def test_mark_non_differentiable():
    x = x64(4)
    y, idx = SplitSign.apply(x)
    assert y.requires_grad and not idx.requires_grad
    y.sum().backward()
    assert np.allclose(x.grad.numpy(), np.sign(x.detach().numpy()))


def test_mark_dirty():
    x = x64(3)
    h = x * 1
    v = h._version
    out = AddOneInplace.apply(h)
    assert out is h and h._version == v + 1
    assert h.grad_fn.name() == "AddOneInplaceBackward"
    h.sum().backward()
    assert x.grad.tolist() == [1.0] * 3


def test_save_output_no_cycle_and_double_backward():
    x = x64(3)
    assert gradcheck(ExpSavingOutput.apply, (x,))
    assert gradgradcheck(ExpSavingOutput.apply, (x,))


def test_set_materialize_grads():
    class TwoOut(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            assert g2 is None
            return g1 * 2

    x = x64(2)
    a, b = TwoOut.apply(x)
    a.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_materialized_grads_default():
    class TwoOut(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    x = x64(2)
    a, b = TwoOut.apply(x)
    a.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_once_differentiable():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = x64(3)
    y = Square.apply(x)
    go = ndgrad.ones(3, dtype=ndgrad.float64, requires_grad=True)
    (g,) = ndgrad.autograd.grad(y, x, go, create_graph=True)
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with @once_differentiable"):
        g.sum().backward()
    x.grad = None
    Square.apply(x).sum().backward()
    assert np.allclose(x.grad.numpy(), 2 * x.detach().numpy())


def test_wrong_number_of_gradients():
    class Bad(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="returned an incorrect number of gradients \\(expected 2, got 1\\)"):
        Bad.apply(x64(2), x64(2, seed=1)).sum().backward()


def test_saved_tensors_freed_after_backward():
    x = x64(3)
    y = LegendreP3.apply(x)
    node = y.grad_fn
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        node.saved_tensors


def test_version_check_on_saved_input():
    x = x64(3)
    h = x * 1
    y = LegendreP3.apply(h)
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_matches_torch_custom_function():
    torch = pytest.importorskip("torch")

    class TP3(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return 0.5 * (5 * x ** 3 - 3 * x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 1.5 * (5 * x ** 2 - 1)

    X = np.linspace(-1, 1, 5)
    x = ndgrad.tensor(X, requires_grad=True)
    tx = torch.tensor(X, requires_grad=True)
    LegendreP3.apply(x).sum().backward()
    TP3.apply(tx).sum().backward()
    assert np.allclose(x.grad.numpy(), tx.grad.numpy())
