"""No NumPy RuntimeWarning escapes ndgrad's ops (issue 15): PyTorch computes log(0) = -inf,
0/0 = nan, exp(1000) = inf and the like silently. Every sample of the op table runs forward
and backward with warnings recorded, on its own inputs and on inputs full of zeros, negative
numbers, huge values, infinities and NaNs; none may warn. ndgrad installs no global filter."""
import glob
import importlib
import os
import sys
import warnings

import numpy as np
import pytest

import ndgrad

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import op_db  # noqa: E402

for _path in sorted(glob.glob(os.path.join(HERE, "op_db_*.py"))):
    importlib.import_module(os.path.basename(_path)[:-3])

SPECIAL = np.array([0.0, -1.0, 1e300, np.nan, np.inf, -np.inf, -0.0, 1e-310, 700.0, -3.5])


def _special(a, shift):
    if a.dtype.kind != "f" or not a.size:
        return a
    vals = np.roll(SPECIAL, shift)
    return np.resize(vals, a.shape).astype(a.dtype)


def _first_samples():
    out = []
    for case in op_db.OPS:
        for k, (arrays, kw, sid) in enumerate(case.samples()):
            if k < 2:
                out.append(pytest.param(case, arrays, kw, id=sid))
    return out


SAMPLES = _first_samples()


def _run(case, arrays, kw):
    ts = []
    for i, a in enumerate(arrays):
        t = ndgrad.tensor(a)
        if case.grad and i not in case.int_inputs and t.dtype.is_floating_point:
            t.requires_grad_()
        ts.append(t)
    try:
        out = case.call(ndgrad, ts, kw)
        outs = [o for o in (out if isinstance(out, (tuple, list)) else [out])
                if isinstance(o, ndgrad.Tensor) and o.requires_grad]
        if outs:
            ndgrad.autograd.backward(outs, [ndgrad.ones_like(o) for o in outs])
    except (RuntimeError, ValueError, IndexError, TypeError, ArithmeticError,
            NotImplementedError) as e:
        if isinstance(e, Warning):
            raise
        return  # an op may refuse such inputs (e.g. a singular matrix); it must not warn


def _warns(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [f"{w.category.__name__}: {w.message} ({os.path.basename(w.filename)}:{w.lineno})"
            for w in caught if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("case,arrays,kw", SAMPLES)
def test_op_table_raises_no_runtime_warning(case, arrays, kw):
    assert _warns(lambda: _run(case, arrays, kw)) == []
    for shift in (0, 3, 7):
        special = [a if i in case.int_inputs else _special(a, shift)
                   for i, a in enumerate(arrays)]
        assert _warns(lambda: _run(case, special, kw)) == [], shift


def test_warnings_become_errors_and_ops_still_work():
    x = ndgrad.tensor([0.0, -1.0, 1e30, np.inf, np.nan], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = (x.log() + x.sqrt() + (x * 1e30).exp() + x / 0.0 + x.reciprocal()).sum()
        y.backward()
        r = ndgrad.tensor([np.nan, np.inf]).to(ndgrad.int64)
        m = ndgrad.zeros(0).mean()
    assert np.isnan(m.item()) and r.dtype is ndgrad.int64
    assert np.isnan(y.item())


def test_inplace_arithmetic_is_quiet():
    """`x /= 0` and friends (the unrecorded in-place fast path, operators and methods) give
    inf/nan silently, as the out-of-place ops and PyTorch do."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with ndgrad.no_grad():
            for x in (ndgrad.tensor([1.0, 0.0, -1.0]), ndgrad.tensor([1.0, 0.0], dtype=ndgrad.float64)):
                x /= 0
                x *= 1e308
                x.div_(0.0)
                x -= ndgrad.tensor(np.inf, dtype=x.dtype)
        y = ndgrad.tensor([3.0e38])
        y *= 10
        y += ndgrad.tensor([-np.inf])
    assert np.isnan(y.item()) and np.isnan(x[0].item())  # (inf - inf)


def test_no_global_warning_filter():
    import ndgrad as _  # noqa: F401 (imported: its filters would be installed)
    for action, _msg, category, module, _line in warnings.filters:
        pattern = getattr(module, "pattern", module)
        if pattern is not None and "ndgrad" in pattern:
            pytest.fail(f"global filter {action} {category} {pattern}")


def test_user_numpy_warnings_untouched():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.log(np.zeros(1))
    assert any(issubclass(w.category, RuntimeWarning) for w in caught)


# NumPy's quiet error state is entered through a Context of ndgrad's own (_backend.QUIET_RUN):
# one caller at a time may be in it, the others set the state themselves.

def _quiet_ops(t):
    y = t.log() + t.sqrt() + (t * 1e30).exp() + t / 0.0 + t.reciprocal() + t.tanh()
    return y.sum()


def test_quiet_context_inside_user_errstate_raise():
    x = ndgrad.tensor([0.0, -1.0, 1e30, np.inf], requires_grad=True)
    with np.errstate(all="raise"):
        _quiet_ops(x).backward()
        with pytest.raises(FloatingPointError):  # the user's own NumPy code: as the user set it
            np.log(np.zeros(1))
    assert np.geterr()["divide"] == "warn"


def test_quiet_context_nested_falls_back():
    from ndgrad import _backend
    if _backend.QUIET_RUN is None:
        pytest.skip("NumPy without the error-state context variable")
    x = ndgrad.tensor([0.0, -1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        _backend.QUIET_RUN(_backend.QUIET_RUN, np.log, np.zeros(1))
    assert _backend.entered(info.value)
    # an op called while the context is held (as by another thread) sets the state itself
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = _backend.QUIET_RUN(lambda: _quiet_ops(x))
        y.backward()
        assert np.isnan(y.item())
        z = _backend.QUIET_RUN(lambda: ndgrad.log(ndgrad.tensor([0.0])))
    assert z.item() == -np.inf
    with pytest.raises(RuntimeError, match="must match"):  # other RuntimeErrors pass through
        _backend.QUIET_RUN(lambda: ndgrad.tensor([1.0, 2.0]) + ndgrad.tensor([1.0, 2.0, 3.0]))


def test_quiet_context_under_threads():
    import threading
    errors, results = [], []
    start = threading.Barrier(4)

    def work():
        try:
            start.wait()
            for _ in range(300):
                x = ndgrad.tensor([0.0, -1.0, 3.0], requires_grad=True)
                _quiet_ops(x).backward()
                results.append(float(x.grad[2]))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(repr(e))

    with warnings.catch_warnings(record=True) as caught:  # (one recorder for every thread)
        warnings.simplefilter("always")
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []
    assert [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)] == []
    x = ndgrad.tensor([3.0], requires_grad=True)
    _quiet_ops(x).backward()
    assert len(results) == 1200 and set(results) == {x.grad.item()}
