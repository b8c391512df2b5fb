"""The in-place NumPy kernels behind sigmoid, tanh's backward and relu's backward, against
PyTorch at the edges: extreme and special values, dtypes, 0-d, broadcast and strided inputs."""
import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")

EDGES = [-1000, -100, -88, -20, -1, -0.0, 0.0, 1e-8, 1, 20, 100, 1000, np.inf, -np.inf, np.nan]


@pytest.mark.parametrize("size", [None, 5000])  # (the small-array and the in-place kernel)
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_sigmoid_edges_match_torch(dtype, size):
    x = np.array(EDGES + list(np.linspace(-30, 30, 61)) + [-89, -95, -709, -710, -745],
                 dtype=dtype)
    if size:
        x = np.resize(x, size)
    ours = ndgrad.sigmoid(ndgrad.tensor(x)).numpy()
    theirs = torch.sigmoid(torch.tensor(x)).numpy()
    assert ours.dtype == theirs.dtype
    # (PyTorch flushes float32 denormals to zero; ndgrad keeps them: tiny atol)
    np.testing.assert_allclose(ours, theirs, rtol=2e-3 if dtype == "float16" else 1e-6,
                               atol=1e-37, equal_nan=True)
    if dtype != "float16":  # where exp(-x) overflows PyTorch's sigmoid is exactly 0, as ours
        np.testing.assert_array_equal(ours[theirs == 0], 0)


@pytest.mark.parametrize("make", [
    lambda L: L.tensor(-2.5),                                       # 0-d
    lambda L: L.tensor([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]]).t(),  # strided
    lambda L: L.tensor([0.5, -0.5]).expand(3, 2),                   # 0-stride
    lambda L: L.tensor([3, -1, 0]),                                 # integer: float result
    lambda L: L.tensor([True, False]),
    lambda L: L.tensor([1 + 1j, -2 - 0.5j]),                        # complex
])
def test_sigmoid_layouts_and_dtypes_match_torch(make):
    ours, theirs = ndgrad.sigmoid(make(ndgrad)), torch.sigmoid(make(torch))
    assert str(ours.dtype) == str(theirs.dtype) and tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


@pytest.mark.parametrize("op", ["tanh", "sigmoid", "relu"])
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((), ()), ((3, 1), (3, 4)),
                                    ((4,), (3, 4))])
def test_backward_kernels_with_broadcast_grads_match_torch(op, shapes):
    """The output's gradient may broadcast against the output (through an expand)."""
    r = np.random.default_rng(0)
    g0, x0 = r.standard_normal(shapes[0]), r.standard_normal(shapes[1]) * 3
    res = []
    for lib in (ndgrad, torch):
        x = lib.tensor(x0, requires_grad=True)
        y = getattr(lib, op)(x)
        g = lib.tensor(g0)
        gx, = lib.autograd.grad(y, x, g if shapes[0] == shapes[1] else g.expand(*shapes[1]))
        res.append(gx.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("shapes", [((3, 1), (3, 4)), ((3, 4), (4,)), ((), (2,)), ((2,), ())])
def test_tanh_backward_broadcasts_as_aten(shapes):
    from ndgrad.ops.pointwise import tanh_backward
    r = np.random.default_rng(1)
    g0, y0 = r.standard_normal(shapes[0]), np.tanh(r.standard_normal(shapes[1]))
    ours = tanh_backward(ndgrad.tensor(g0), ndgrad.tensor(y0))
    theirs = torch.ops.aten.tanh_backward(torch.tensor(g0), torch.tensor(y0))
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
