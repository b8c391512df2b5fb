"""Focused tests against PyTorch for the disagreements PyTorch's OpInfo database found
(tests/test_pytorch_op_db.py runs the database itself): each one named, with the inputs that
showed it and its neighbours."""
import itertools

import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")


def _run(lib, fn, *args, **kwargs):
    """fn(lib) or the exception it raised (type name and message)."""
    try:
        return fn(lib, *args, **kwargs)
    except Exception as e:     # noqa: BLE001 - the exception is the result compared
        return (type(e).__name__, str(e))


def _same(ours, theirs, exact=True, rtol=1e-7, atol=0.0):
    if isinstance(theirs, tuple):
        assert ours == theirs
        return
    assert not isinstance(ours, tuple), ours
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    a, b = ours.detach().numpy(), theirs.detach().numpy()
    if exact:
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


# ------------------------------------------------------------------ linspace, logspace, arange

_ENDS = (0, 1, -3, 2.5, -2.7, 3.9, 0.1, 10, -0.5, 100.3)
_DTYPES = (None, "float32", "float64", "int64", "int32", "int16", "uint8", "complex64",
           "complex128")


def _dt(lib, name):
    return {} if name is None else {"dtype": getattr(lib, name)}


@pytest.mark.parametrize("dtype", _DTYPES)
def test_linspace_as_pytorch(dtype):
    """One step is start (was end); integer results truncate start and end first and step in
    double with the kernel's fused multiply-add; PyTorch's overflow errors."""
    for s, e, n in itertools.product(_ENDS, _ENDS[:6], (0, 1, 2, 3, 5, 10, 50)):
        _same(_run(ndgrad, lambda L: L.linspace(s, e, n, **_dt(L, dtype))),
              _run(torch, lambda L: L.linspace(s, e, n, **_dt(L, dtype))))


@pytest.mark.parametrize("dtype", _DTYPES)
def test_logspace_as_pytorch(dtype):
    """logspace(0, 1.2, 2, dtype=int64) is [1, 10] (was [1, 15]): the exponents come from the
    truncated ends. Float results agree to the last bit but for NumPy's pow (1 ulp)."""
    exact = dtype not in (None, "float32", "float64")
    for s, e, n, base in itertools.product(_ENDS, _ENDS[:6], (1, 2, 3, 10), (10.0, 2.0, 0.5)):
        _same(_run(ndgrad, lambda L: L.logspace(s, e, n, base, **_dt(L, dtype))),
              _run(torch, lambda L: L.logspace(s, e, n, base, **_dt(L, dtype))),
              exact=exact, rtol=1e-15 if dtype == "float64" else 1e-7)


@pytest.mark.parametrize("dtype", (None, "float32", "float64", "int64", "int32", "int16",
                                   "uint8"))
def test_arange_as_pytorch(dtype):
    """arange(3.1, dtype=int64) has 3 elements (was 4): an int64 result truncates its
    arguments and counts in integers; other integer results count in double and step by the
    truncated step; PyTorch's errors (a step truncated to 0 is a ValueError)."""
    exact = dtype not in (None, "float32", "float64")
    for s, e, st in itertools.product(_ENDS[:8], _ENDS, (1, 2, -1, 0.5, -0.7, 1.5, 0.3, 0)):
        _same(_run(ndgrad, lambda L: L.arange(s, e, st, **_dt(L, dtype))),
              _run(torch, lambda L: L.arange(s, e, st, **_dt(L, dtype))),
              exact=exact, rtol=1e-6 if dtype in (None, "float32") else 1e-15,
              atol=1e-6 if dtype in (None, "float32") else 1e-15)


@pytest.mark.parametrize("call", [
    lambda L: L.linspace(-0.5, 0.5, 1),
    lambda L: L.logspace(0, 1.2, 2, dtype=L.int64),
    lambda L: L.arange(3.1, dtype=L.int64),
    lambda L: L.arange(0.0, -8.000001, -4.0, dtype=L.int64),
    lambda L: L.linspace(L.tensor(-2.0), L.tensor(-3.0), 1),
    lambda L: L.linspace(0, 3, 1.0),
    lambda L: L.logspace(0, 3, 1.0),
    lambda L: L.linspace(L.ones(2), L.ones(2), 1),
    lambda L: L.logspace(L.ones(2), 1, 3),
    lambda L: L.linspace(0, 1, -1),
    lambda L: L.logspace(0, 1, -1),
    lambda L: L.linspace(0, 1, 3, dtype=L.bool),
    lambda L: L.arange(0, float("inf")),
    lambda L: L.arange(0, 64, 0.5, dtype=L.int64),
    lambda L: L.arange(0, 10, 0),
    lambda L: L.linspace(10, -2.7, 10, dtype=L.int64),
])
def test_space_named_cases(call):
    _same(_run(ndgrad, call), _run(torch, call))
