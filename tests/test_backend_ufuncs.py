"""The ufunc methods CuPy has for few ufuncs (`ufunc.reduce/accumulate/at`): ndgrad._backend's
replacements, run on the strict stand-in (which, as CuPy, refuses the methods it lacks), give
NumPy's results: duplicates, every dtype CuPy's scatter kernels refuse, empty, 0-d, strided."""
import numpy as np
import pytest

from ndgrad import _backend
from ndgrad.cuda import _standin

S = _standin.xp
RNG = np.random.default_rng(0)


def _dev(a):
    return S.asarray(a)


def test_the_standin_refuses_what_cupy_lacks():
    a = _dev(np.arange(6.0))
    with pytest.raises(NotImplementedError, match="cupy_maximum.reduce"):
        S.maximum.reduce(a)
    with pytest.raises(NotImplementedError, match="cupy_logaddexp.accumulate"):
        S.logaddexp.accumulate(a)
    with pytest.raises(NotImplementedError, match="cupy_multiply.at"):
        S.multiply.at(a, _dev(np.array([0, 0])), 2.0)
    with pytest.raises(TypeError, match="cupy.add.at only supports"):
        S.add.at(_dev(np.zeros(3, complex)), _dev(np.array([0, 0])), 1.0)
    assert float(S.add.reduce(a)) == 15.0          # (add and multiply are there)


@pytest.mark.parametrize("name", ["maximum", "minimum", "bitwise_xor", "add"])
@pytest.mark.parametrize("shape,axis", [((5, 7), 1), ((5, 7), 0), ((3, 1, 4), 1), ((9,), 0),
                                        ((4, 0), 0)])
def test_ufunc_reduce(name, shape, axis):
    a = RNG.integers(-50, 50, shape).astype("int64" if name == "bitwise_xor" else "float64")
    if name in ("maximum", "minimum") and 0 in shape:
        return
    for keep in (False, True):
        want = getattr(np, name).reduce(a, axis=axis, keepdims=keep)
        got = _backend.ufunc_reduce(S, getattr(S, name), _dev(a), axis, keep)
        np.testing.assert_array_equal(got.get(), want)


def test_ufunc_reduce_of_an_empty_axis_without_identity_raises():
    with pytest.raises(ValueError, match="zero-size"):
        _backend.ufunc_reduce(S, S.maximum, _dev(np.zeros((3, 0))), 1)


@pytest.mark.parametrize("name", ["maximum", "minimum", "logaddexp", "add"])
@pytest.mark.parametrize("shape,axis", [((5, 13), 1), ((6, 3), 0), ((1,), 0), ((2, 0), 1),
                                        ((4, 3, 17), -1)])
def test_ufunc_accumulate(name, shape, axis):
    a = RNG.standard_normal(shape)
    want = getattr(np, name).accumulate(a, axis=axis)
    got = _backend.ufunc_accumulate(S, getattr(S, name), _dev(a), axis).get()
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14)   # (another grouping)
    if name in ("maximum", "minimum"):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name,dtype", [("add", "complex128"), ("add", "int8"),
                                        ("add", "uint8"), ("add", "bool"), ("add", "float64"),
                                        ("multiply", "float64"), ("multiply", "int16"),
                                        ("maximum", "float16"), ("minimum", "int16")])
@pytest.mark.parametrize("strided", [False, True])
def test_ufunc_at(name, dtype, strided):
    base = RNG.integers(1, 4, (6, 10)).astype(dtype)
    if dtype.startswith("complex"):
        base = base + 1j * RNG.integers(1, 4, (6, 10))
    a = base[:, ::2] if strided else base[:, :5]
    rows = RNG.integers(0, 6, 40)                  # many repeats of each row
    cols = RNG.integers(0, 5, 40)
    vals = RNG.integers(1, 3, 40).astype(dtype)
    for key, v in (((rows, cols), vals), ((rows,), vals[:1]), ((slice(None), cols[:7]), vals[:7])):
        want = a.copy()
        getattr(np, name).at(want, key, v)
        got = _dev(a.copy())
        dkey = tuple(_dev(k) if isinstance(k, np.ndarray) else k for k in key)
        _backend.ufunc_at(S, getattr(S, name), got, dkey, _dev(np.asarray(v)))
        np.testing.assert_array_equal(got.get(), want)


def test_ufunc_at_into_a_strided_view_writes_through():
    base = np.zeros((4, 6), dtype=np.int8)
    dbase = _dev(base.copy())
    view = dbase[:, ::2]
    _backend.ufunc_at(S, S.add, view, (_dev(np.array([1, 1, 3])), _dev(np.array([0, 0, 2]))),
                      _dev(np.array([5, 6, 7], dtype=np.int8)))
    np.add.at(base[:, ::2], (np.array([1, 1, 3]), np.array([0, 0, 2])),
              np.array([5, 6, 7], dtype=np.int8))
    np.testing.assert_array_equal(dbase.get(), base)


def test_numpy_arrays_use_numpys_methods():
    a = np.zeros(3)
    _backend.ufunc_at(np, np.multiply, a, np.array([0, 0]), 2.0)
    assert (a == 0).all()
    np.testing.assert_array_equal(_backend.ufunc_accumulate(np, np.maximum, np.array([1, 3, 2]),
                                                            0), [1, 3, 3])
