"""torch.hann_window, hamming_window, blackman_window, bartlett_window, kaiser_window: values,
dtypes and argument errors, against PyTorch where it is installed and known values where not."""
import math

import numpy as np
import pytest

import ndgrad

NAMES = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]


def test_known_symmetric_windows():
    assert ndgrad.hann_window(5, False).tolist() == [0.0, 0.5, 1.0, 0.5, 0.0]
    assert ndgrad.bartlett_window(5, False).tolist() == [0.0, 0.5, 1.0, 0.5, 0.0]
    np.testing.assert_allclose(ndgrad.hamming_window(5, False, dtype=ndgrad.float64).numpy(),
                               [0.08, 0.54, 1.0, 0.54, 0.08], atol=1e-15)
    np.testing.assert_allclose(ndgrad.blackman_window(3, False, dtype=ndgrad.float64).numpy(),
                               [0.0, 1.0, 0.0], atol=1e-15)
    k = ndgrad.kaiser_window(4, False, 3.0, dtype=ndgrad.float64).numpy()
    ref = np.i0(3.0 * np.sqrt(1 - ((np.arange(4) - 1.5) / 1.5) ** 2)) / np.i0(3.0)
    np.testing.assert_allclose(k, ref, rtol=1e-14)


@pytest.mark.parametrize("name", NAMES)
def test_periodic_is_the_longer_symmetric_window_cut(name):
    f = getattr(ndgrad, name)
    for n in (2, 5, 8):
        np.testing.assert_array_equal(f(n).numpy(), f(n + 1, False).numpy()[:n])
    assert f(0).shape == (0,) and f(1).tolist() == [1.0] and f(1, False).tolist() == [1.0]
    assert f(4).dtype is ndgrad.get_default_dtype()
    w = f(4, requires_grad=True)
    assert w.requires_grad and w.is_leaf


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_windows_match_torch(name, dtype):
    torch = pytest.importorskip("torch")
    tol = {"float32": 1e-6, "float64": 1e-12, "float16": 2e-3}[dtype]
    extra = {"hamming_window": [(), (0.5,), (0.5, 0.5), (0.6, 0.3)],
             "kaiser_window": [(), (0.0,), (5.0,), (2,)]}.get(name, [()])
    for n in (0, 1, 2, 3, 5, 8, 31):
        for periodic in (True, False):
            for more in extra:
                a = getattr(ndgrad, name)(n, periodic, *more, dtype=getattr(ndgrad, dtype))
                b = getattr(torch, name)(n, periodic, *more, dtype=getattr(torch, dtype))
                assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
                np.testing.assert_allclose(a.numpy().astype(float), b.numpy().astype(float),
                                           rtol=tol, atol=tol)


def _errors(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 (the type and message are what is compared)
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("call", [
    lambda L: L.hann_window(-1),
    lambda L: L.kaiser_window(-3, False),
    lambda L: L.hann_window(4, dtype=L.int64),
    lambda L: L.hann_window(-1, dtype=L.int64),   # (the dtype is checked first)
    lambda L: L.bartlett_window(4, dtype=L.int32),
    lambda L: L.blackman_window(4, dtype=L.uint8),
    lambda L: L.hamming_window(4, dtype=L.bool),
    lambda L: L.hann_window(4, dtype=L.complex64),
    lambda L: L.hann_window(4.0),
    lambda L: L.hann_window(True),
    lambda L: L.hann_window(4, 1),
    lambda L: L.hann_window(4, periodic=1),
    lambda L: L.hamming_window(4, alpha=0.5),
    lambda L: L.kaiser_window(4, True, "a"),
    lambda L: L.blackman_window(4, False, 1.0),
    lambda L: L.hann_window(4, dtype=L.int64, requires_grad=True),
])
def test_window_errors_match_torch(call):
    torch = pytest.importorskip("torch")
    ours, theirs = _errors(lambda: call(ndgrad)), _errors(lambda: call(torch))
    assert theirs is not None and ours == theirs


def test_window_arguments_pytorch_accepts():
    torch = pytest.importorskip("torch")
    for call in (lambda L: L.hann_window(np.int64(5)), lambda L: L.hann_window(L.tensor(5)),
                 lambda L: L.hann_window(5, periodic=False),
                 lambda L: L.hamming_window(5, False, 1), lambda L: L.kaiser_window(5, True, 2),
                 lambda L: L.hamming_window(5, True, beta=0.3, alpha=0.6),
                 lambda L: L.hann_window(window_length=3)):
        a, b = call(ndgrad), call(torch)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)


def test_windows_are_differentiable_factories_not_graph_nodes():
    w = ndgrad.hann_window(8, requires_grad=True)
    (w * 2).sum().backward()
    assert w.grad.tolist() == [2.0] * 8
    assert math.isclose(float(ndgrad.hann_window(8).sum()), 4.0, rel_tol=1e-6)
