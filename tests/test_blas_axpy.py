"""The fused axpy route of the scalar multiply-adds (ops/_blas.py, Note [fused axpy]): where it
is on, it gives the exact emulation's results bit for bit; its check refuses any axpy that
rounds some element twice."""
import ctypes

import numpy as np
import pytest

from ndgrad.ops import _blas, _fma


def _route(dt):
    f = _blas.axpy(np.dtype(dt))
    if f is None:
        pytest.skip("this NumPy's BLAS has no axpy shown to round once")
    return f


def _emulated(a, x, y, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(_blas, "_ROUTES", {"f": None, "d": None})
        return _fma.fma(a, x, y)


def _candidates(dt):
    """Both routes of this machine's library (axpby whole, axpy in pieces), where it has them."""
    blas = {"float32": "s", "float64": "d"}[dt]
    whole = _blas._raw_axpby(blas)
    f, scal = _blas._raw(blas)
    return {"whole": whole and _blas._whole(whole),
            "pieces": f and _blas._route(f, scal, np.dtype(dt))}


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_route_matches_the_emulation(dt, monkeypatch):
    _matches_the_emulation(_route(dt), dt, monkeypatch)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("kind", ["whole", "pieces"])
def test_each_route_that_passes_the_check_matches_the_emulation(kind, dt, monkeypatch):
    f = _candidates(dt)[kind]
    if f is None:
        pytest.skip(f"no {kind} route in this NumPy's BLAS")
    with np.errstate(all="ignore"):
        if not _blas._fused_everywhere(f, np.dtype(dt)):
            pytest.skip(f"the {kind} route rounds twice here (the check refuses it)")
    _matches_the_emulation(f, dt, monkeypatch)


def test_the_whole_call_is_preferred_and_refused_when_it_rounds_twice(monkeypatch):
    def unfused_axpby(n, a, x, incx, b, y, incy):   # a plain a * x + y, two roundings
        xs = np.ctypeslib.as_array((ctypes.c_float * n).from_address(x))
        ys = np.ctypeslib.as_array((ctypes.c_float * n).from_address(y))
        ys += np.float32(a) * xs
    monkeypatch.setattr(_blas, "_ROUTES", {})
    f = _blas.axpy(np.dtype("float32"))
    if f is None or _candidates("float32")["whole"] is None:
        pytest.skip("this NumPy's BLAS has no axpby")
    with np.errstate(all="ignore"):
        passes = _blas._fused_everywhere(_candidates("float32")["whole"], np.dtype("float32"))
    assert (f.__qualname__.startswith("_whole")) == passes
    monkeypatch.setattr(_blas, "_ROUTES", {})
    monkeypatch.setattr(_blas, "_raw_axpby", lambda char: unfused_axpby)
    f = _blas.axpy(np.dtype("float32"))
    assert f is None or f.__qualname__.startswith("_route")


def _matches_the_emulation(f, dt, monkeypatch):
    rng = np.random.default_rng(3)
    lengths = list(range(0, 140)) + [_blas._PIECE, _blas._PIECE + 1, 3 * _blas._PIECE - 5, 40009]
    for n in lengths:
        for skip in (0, 1):
            x = rng.standard_normal(n + skip).astype(dt)[skip:]
            y = (rng.standard_normal(n + skip) * 10.0 ** rng.uniform(-3, 3, n + skip)).astype(dt)
            y = y[skip:]
            for a in (-0.0123, 3.1e-5, 7.0):
                a = np.dtype(dt).type(a)
                want = _emulated(a, x, y, monkeypatch)
                got = y.copy()
                f(a, x, got)
                assert (got == want).all(), (n, skip, a)
                # and through fma itself: a new array, in place, into another array
                assert (_fma.fma(a, x, y) == want).all()
                out = np.empty_like(y)
                assert _fma.fma(a, x, y, out=out) is out and (out == want).all()


def test_fma_keeps_aliasing_and_layouts_right():
    _route("float32")
    x = np.arange(1, 11, dtype=np.float32) * np.float32(1.1)
    y = x.copy()
    _fma.add_(y, y, 2.5)                         # x.add_(x, alpha=2.5): operands overlap
    assert (y == _fma.fma(np.float32(2.5), x, x.copy())).all()
    t = np.arange(12, dtype=np.float32).reshape(3, 4)
    r = _fma.fma(np.float32(0.5), t.T, t.T.copy())   # a transposed (Fortran-ordered) operand
    assert (r == t.T * 1.5).all()


def test_check_refuses_twice_rounded_elements():
    def unfused(a, x, y):
        y += a * x

    def vector_loop_only(a, x, y):   # OpenBLAS's Haswell kernel, called whole: a plain C tail
        n = x.size - x.size % 32
        y[:n] = _fma.fma(a, x[:n], y[:n])
        y[n:] += a * x[n:]

    def threaded(a, x, y):           # ... and split between threads, each piece with its tail
        h = (x.size + 1) // 2
        for lo, hi in ((0, h), (h, x.size)):
            vector_loop_only(a, x[lo:hi], y[lo:hi])

    def fused(a, x, y):
        y[...] = _fma.fma(a, x, y)
    for dt in (np.dtype("float32"), np.dtype("float64")):
        assert not _blas._fused_everywhere(unfused, dt)
        assert not _blas._fused_everywhere(vector_loop_only, dt)
        assert not _blas._fused_everywhere(threaded, dt)
    with np.errstate(all="ignore"):
        assert _blas._fused_everywhere(fused, np.dtype("float32"))


def test_no_library_no_route(monkeypatch):
    monkeypatch.setattr(_blas, "_ROUTES", {})
    monkeypatch.setattr(_blas, "openblas_function", lambda *names: None)
    assert _blas.axpy(np.dtype("float32")) is None
    x = np.ones(100, np.float32)
    assert (_fma.fma(np.float32(2), x, x.copy()) == 3).all()     # the emulation
