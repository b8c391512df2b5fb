"""grad_fn names and next_functions order as PyTorch's for the layers tutorials walk."""
import pytest

import ndgrad


def _walk(fn, depth=0, out=None):
    out = [] if out is None else out
    out.append("  " * depth + (type(fn).__name__ if fn is not None else "None"))
    if fn is not None:
        for f, _ in fn.next_functions:
            _walk(f, depth + 1, out)
    return out


CASES = {
    "linear_2d": lambda t: t.nn.Linear(3, 2)(t.randn(4, 3, requires_grad=True)),
    "linear_1d": lambda t: t.nn.Linear(3, 2)(t.randn(3, requires_grad=True)),
    "linear_3d": lambda t: t.nn.Linear(3, 2)(t.randn(2, 4, 3, requires_grad=True)),
    "linear_input_no_grad": lambda t: t.nn.Linear(3, 2)(t.randn(2, 4, 3)),
    "linear_no_bias": lambda t: t.nn.Linear(3, 2, bias=False)(t.randn(4, 3)),
    "mlp_mse": lambda t: t.nn.functional.mse_loss(
        t.nn.Sequential(t.nn.Linear(3, 4), t.nn.ReLU(), t.nn.Linear(4, 1))(t.randn(5, 3)),
        t.randn(5, 1)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_graph_shape_matches_pytorch(name):
    torch = pytest.importorskip("torch")
    assert _walk(CASES[name](ndgrad).grad_fn) == _walk(CASES[name](torch).grad_fn)


def test_linear_edges_bias_first():
    lin = ndgrad.nn.Linear(3, 2)
    fn = lin(ndgrad.randn(4, 3)).grad_fn
    assert fn.name() == "AddmmBackward0"
    (b, _), (x, _), (t, _) = fn.next_functions
    assert b.variable is lin.bias and x is None and t.name() == "TBackward0"
    assert t.next_functions[0][0].variable is lin.weight


def test_linear_gradients_unchanged_by_the_graph_shape():
    ndgrad.manual_seed(0)
    lin = ndgrad.nn.Linear(3, 2).double()
    for shape in [(4, 3), (3,), (2, 4, 3), (0, 3)]:
        x = ndgrad.randn(*shape, dtype=ndgrad.float64, requires_grad=True)
        assert ndgrad.autograd.gradcheck(lambda x, w, b: ndgrad.nn.functional.linear(x, w, b),
                                         (x, lin.weight, lin.bias))
        assert ndgrad.autograd.gradgradcheck(lambda x, w, b: ndgrad.nn.functional.linear(x, w, b),
                                             (x, lin.weight, lin.bias))
    xt = ndgrad.randn(4, 2, 3, dtype=ndgrad.float64).transpose(0, 1).requires_grad_()
    assert ndgrad.autograd.gradcheck(lambda x, w, b: ndgrad.nn.functional.linear(x, w, b),
                                     (xt, lin.weight, lin.bias))


def _accumulation_order(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 4),
                              lib.nn.Tanh(), lib.nn.Linear(4, 1))
    order = []
    for name, p in model.named_parameters():
        p.register_post_accumulate_grad_hook(lambda p, name=name: order.append(name))
    model(lib.randn(5, 3)).sum().backward()
    return order


def test_leaves_accumulate_as_soon_as_ready():
    """PyTorch runs AccumulateGrad as soon as a leaf's gradient is complete (what lets DDP start
    a bucket's all-reduce during backward): the last layer's parameters come first."""
    order = _accumulation_order(ndgrad)
    assert set(order[:2]) == {"4.weight", "4.bias"} and set(order[-2:]) == {"0.weight", "0.bias"}
    torch = pytest.importorskip("torch")
    assert order == _accumulation_order(torch)
