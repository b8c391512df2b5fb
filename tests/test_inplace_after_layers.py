"""In-place ops on the outputs of layers and ops, e.g. ReLU(inplace=True) after MaxPool2d.

PyTorch lets you modify an output in place unless its node saved that output for backward:
max pooling, max(dim), sort, topk, ... save only their indices, so their values may be changed
(the indices may not); relu, sigmoid, tanh, softmax, ... save their output, so they error."""
import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")

_X = np.random.RandomState(0).randn(2, 3, 6, 6)


def _layers(T):
    F = T.nn.functional
    return {
        "max_pool2d": lambda x: F.max_pool2d(x, 2),
        "max_pool2d_overlap_pad": lambda x: F.max_pool2d(x, 3, 1, 1),
        "max_pool2d_indices": lambda x: F.max_pool2d(x, 2, return_indices=True)[0],
        "max_pool1d": lambda x: F.max_pool1d(x.flatten(2), 3),
        "MaxPool2d": lambda x: T.nn.MaxPool2d(2)(x),
        "adaptive_max_pool2d": lambda x: F.adaptive_max_pool2d(x, 3),
        "adaptive_max_pool2d_uneven": lambda x: F.adaptive_max_pool2d(x, 4),
        "adaptive_max_pool1d": lambda x: F.adaptive_max_pool1d(x.flatten(2), 5),
        "avg_pool2d": lambda x: F.avg_pool2d(x, 2),
        "conv2d": lambda x: F.conv2d(x, T.ones(2, 3, 3, 3, dtype=T.float64)),
        "linear": lambda x: F.linear(x, T.ones(4, 6, dtype=T.float64)),
        "batch_norm": lambda x: F.batch_norm(x, None, None, training=True),
        "dropout": lambda x: F.dropout(x, 0.0),
        "max_dim": lambda x: x.max(-1)[0],
        "sort": lambda x: x.sort(-1)[0],
        "topk": lambda x: x.topk(2)[0],
        "kthvalue": lambda x: x.kthvalue(2)[0],
        "cummax": lambda x: x.cummax(-1)[0],
        "median_dim": lambda x: x.median(-1)[0],
        "mode": lambda x: x.mode(-1)[0],
        "frexp": lambda x: T.frexp(x)[0],
        # these save their output: modifying it in place is an error in PyTorch too
        "relu": lambda x: T.relu(x),
        "sigmoid": lambda x: T.sigmoid(x),
        "tanh": lambda x: x.tanh(),
        "softmax": lambda x: T.softmax(x, -1),
    }


def _run(T, name, op_):
    x = T.tensor(_X, requires_grad=True)
    y = _layers(T)[name](x * 1)
    getattr(y, op_)()
    try:
        (y * y).sum().backward()
    except RuntimeError as e:
        return "error", str(e).split(":")[0]
    return "ok", x.grad.numpy()


@pytest.mark.parametrize("op_", ["relu_", "sigmoid_"])
@pytest.mark.parametrize("name", sorted(_layers(torch)))
def test_inplace_on_layer_output_matches_torch(name, op_):
    want, got = _run(torch, name, op_), _run(ndgrad, name, op_)
    assert got[0] == want[0]
    if want[0] == "ok":
        np.testing.assert_allclose(got[1], want[1], rtol=1e-12, atol=1e-12)
    else:
        assert got[1] == want[1]


def test_inplace_after_max_pool_double_backward():
    def run(T):
        x = T.tensor(_X, requires_grad=True)
        v = T.nn.functional.max_pool2d(x * 1, 3, 2, 1)
        v.relu_()
        g, = T.autograd.grad(v.pow(2).sum(), x, create_graph=True)
        gg, = T.autograd.grad(g.pow(3).sum(), x)
        return g.detach().numpy(), gg.numpy()
    for a, b in zip(run(torch), run(ndgrad)):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


def test_max_pool_saves_only_indices():
    for T in (torch, ndgrad):
        x = T.tensor(_X, requires_grad=True)
        v, i = T.nn.functional.max_pool2d(x * 1, 2, return_indices=True)
        assert type(v.grad_fn).__name__ == "MaxPool2DWithIndicesBackward0"
        assert v.grad_fn._saved_result1.dtype == T.int64
        assert bool((v.grad_fn._saved_result1 == i).all())
        i.add_(0)  # the saved indices themselves must stay unmodified
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            v.sum().backward()


def test_multi_output_ops_leave_unused_grads_none():
    # batch norm's mean/var and max pool's indices get no gradient; backward still works
    def run(T):
        x = T.tensor(_X, requires_grad=True)
        w = T.tensor(np.arange(1.0, 4.0), requires_grad=True)
        y = T.nn.functional.batch_norm(x, None, None, w, None, training=True)
        z = T.nn.functional.max_pool2d(y, 2)
        gx, gw = T.autograd.grad((z * z).sum(), (x, w), create_graph=True)
        ggx, = T.autograd.grad((gx * gw.reshape(1, 3, 1, 1)).sum(), x)
        return gx.detach().numpy(), gw.detach().numpy(), ggx.numpy()
    for a, b in zip(run(torch), run(ndgrad)):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-9)
