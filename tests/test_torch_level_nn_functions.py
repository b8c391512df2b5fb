"""torch-level names of nn.functional operations (ATen's functions): conv3d, conv_transpose3d,
pixel_unshuffle, prelu, hardshrink, max_pool3d, constant_pad_nd, against PyTorch (values and
input gradients), and against nn.functional where PyTorch is absent."""
import inspect

import numpy as np
import pytest

import ndgrad

R = np.random.default_rng(0)
A = {  # name -> arrays
    "x5": R.standard_normal((2, 2, 4, 5, 5)), "w5": R.standard_normal((3, 2, 2, 2, 2)),
    "b3": R.standard_normal(3), "wt5": R.standard_normal((2, 3, 2, 2, 2)),
    "x4": R.standard_normal((1, 2, 4, 6)), "w1": np.array([0.25, -0.5]),
    "x2": R.standard_normal((3, 4)),
}
CASES = [  # (torch-level call, its arrays)
    (lambda L, x, w, b: L.conv3d(x, w, b, 1, 1), ("x5", "w5", "b3")),
    (lambda L, x, w, b: L.conv3d(x, w, b, (1, 2, 1), 0, 1, 1), ("x5", "w5", "b3")),
    (lambda L, x, w: L.conv_transpose3d(x, w, None, 2, 1, 1), ("x5", "wt5")),
    (lambda L, x: L.pixel_unshuffle(x, 2), ("x4",)),
    (lambda L, x, w: L.prelu(x, w), ("x4", "w1")),
    (lambda L, x: L.hardshrink(x, 0.4), ("x2",)),
    (lambda L, x: L.hardshrink(x), ("x2",)),
    (lambda L, x: L.max_pool3d(x, 2), ("x5",)),
    (lambda L, x: L.max_pool3d(x, (2, 2, 3), (1, 2, 2), 1, 1, True), ("x5",)),
    (lambda L, x: L.constant_pad_nd(x, (1, 2, -1, 0), 0.5), ("x2",)),
    (lambda L, x: L.constant_pad_nd(x, [2, 0]), ("x2",)),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_torch_level_functions_match_torch(case):
    torch = pytest.importorskip("torch")
    fn, names = CASES[case]
    out = []
    for L in (ndgrad, torch):
        ts = [L.tensor(A[n], requires_grad=True) for n in names]
        y = fn(L, *ts)
        (y * L.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)))).sum().backward()
        out.append([y.detach().numpy()] + [t.grad.numpy() for t in ts])
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_torch_level_functions_are_nn_functional_ones():
    F = ndgrad.nn.functional
    x = ndgrad.tensor(A["x5"])
    np.testing.assert_array_equal(ndgrad.max_pool3d(x, 2).numpy(), F.max_pool3d(x, 2).numpy())
    x2 = ndgrad.tensor(A["x2"])
    assert ndgrad.constant_pad_nd(x2, (1, 1)).shape == (3, 6)
    assert ndgrad.constant_pad_nd(x2, (-1, 0, 0, -2)).tolist() == x2[:1, 1:].tolist()
    for name in ("conv3d", "conv_transpose3d", "pixel_unshuffle", "prelu", "hardshrink"):
        assert inspect.unwrap(getattr(ndgrad, name)) is inspect.unwrap(getattr(F, name))


@pytest.mark.parametrize("pad", [[2], [1, 2, 3], [1] * 6])
def test_constant_pad_nd_errors_match_torch(pad):
    torch = pytest.importorskip("torch")
    out = []
    for L in (ndgrad, torch):
        with pytest.raises(RuntimeError) as e:
            L.constant_pad_nd(L.zeros(3, 4), pad)
        out.append(str(e.value))
    assert out[0] == out[1]
