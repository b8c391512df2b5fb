"""The generic op-table runner: every sample of every OpCase in tests/op_db.py and every
tests/op_db_*.py table (globbed, so new family tables are picked up automatically) gets

- forward vs PyTorch (values, dtype, shape; each dtype the case lists),
- input gradients vs PyTorch for one random grad_output (and the grad_fn name, where asked),
- the same forward/gradient comparison on non-contiguous (transposed) inputs,
- float64 gradcheck (every sample) and gradgradcheck (each case's first shape, all keyword
  variants) for differentiable cases.

PyTorch comparisons skip cleanly when torch is not installed.
"""
import glob
import importlib
import os
import sys

import numpy as np
import pytest

import ndgrad
from ndgrad.autograd import gradcheck, gradgradcheck

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import op_db  # noqa: E402

for _path in sorted(glob.glob(os.path.join(HERE, "op_db_*.py"))):
    importlib.import_module(os.path.basename(_path)[:-3])

SAMPLES = []
for _case in op_db.OPS:
    for _arrays, _kw, _sid in _case.samples():
        SAMPLES.append(pytest.param(_case, _arrays, _kw, id=_sid))

GRADCHECK_SAMPLES = [p for p in SAMPLES if p.values[0].grad and p.values[0].gradcheck]
TORCH_SAMPLES = [p for p in SAMPLES if not p.values[0].skip_torch]


def _noncontig_ok(case, arrays):
    return case.noncontig and any(
        a.ndim >= 2 and a.shape[-1] > 1 and a.shape[-2] > 1 and a.size  # empty: contiguous
        for i, a in enumerate(arrays) if i not in case.int_inputs)


def _torch():
    return pytest.importorskip("torch")


def _to_dtype_array(a, dtype):
    if dtype in ("int64", "int32"):
        return np.round(a * 2).astype(dtype)
    if dtype == "bool":
        return a > 0
    return a.astype(dtype)


def _inputs(lib, case, arrays, dtype="float64", requires_grad=False, noncontig=False):
    """(leaves, used): the tensors the user holds, and what the op receives."""
    leaves, used = [], []
    for i, a in enumerate(arrays):
        if i in case.int_inputs or a.dtype.kind in "iub":
            t = lib.tensor(a)
            leaves.append(t)
            used.append(t)
            continue
        a = _to_dtype_array(a, dtype)
        nc = noncontig and a.ndim >= 2
        t = lib.tensor(np.ascontiguousarray(a.swapaxes(-1, -2)) if nc else a)
        if requires_grad and t.dtype.is_floating_point:
            t.requires_grad_()
        leaves.append(t)
        used.append(t.transpose(-1, -2) if nc else t)
    return leaves, used


def _tensors(out):
    if isinstance(out, (tuple, list)):
        r = []
        for o in out:
            r.extend(_tensors(o))
        return r
    return [out]


def _compare(ours, theirs, case, dtype, what="output"):
    torch = _torch()
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)), f"{what}: expected a tuple, got {type(ours)}"
        assert len(ours) == len(theirs)
        if type(theirs).__module__ == "torch.return_types":
            assert repr(ours).split("(")[0] == repr(theirs).split("(")[0]
            for field in ("values", "indices"):
                if hasattr(theirs, field):
                    _compare(getattr(ours, field), getattr(theirs, field), case, dtype,
                             f"{what}.{field}")
        for k, (o, t) in enumerate(zip(ours, theirs)):
            _compare(o, t, case, dtype, f"{what}[{k}]")
        return
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, ndgrad.Tensor), f"{what}: expected a Tensor, got {type(ours)}"
        assert str(ours.dtype) == str(theirs.dtype), f"{what}: dtype {ours.dtype} vs {theirs.dtype}"
        assert tuple(ours.shape) == tuple(theirs.shape), \
            f"{what}: shape {tuple(ours.shape)} vs {tuple(theirs.shape)}"
        o = ours.detach().numpy()
        t = theirs.detach().numpy()
        if t.dtype.kind in "fc":
            lo = dtype in ("float32",) or t.dtype == np.float32
            rtol = max(case.rtol, 1e-4) if lo else case.rtol
            atol = max(case.atol, 1e-5) if lo else case.atol
            np.testing.assert_allclose(o, t, rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=what)
        else:
            np.testing.assert_array_equal(o, t, err_msg=what)
        return
    assert ours == theirs, f"{what}: {ours!r} vs {theirs!r}"


# ---------------------------------------------------------------- vs PyTorch
# One test per sample (forward in every dtype, then gradients, then non-contiguous inputs):
# the failure message says which part; fewer, fatter tests keep the suite fast.

@pytest.mark.parametrize("case,arrays,kw", TORCH_SAMPLES)
def test_vs_torch(case, arrays, kw):
    _check_forward(case, arrays, kw)
    if case.grad:
        _check_grads(case, arrays, kw)
    if _noncontig_ok(case, arrays):
        _check_noncontiguous(case, arrays, kw)


def _check_forward(case, arrays, kw):
    torch = _torch()
    for dtype in case.dtypes:
        try:
            theirs = case.call(torch, _inputs(torch, case, arrays, dtype)[1], kw)
        except Exception as e:  # PyTorch rejects this dtype: so must we, the same way
            with pytest.raises(type(e)):
                case.call(ndgrad, _inputs(ndgrad, case, arrays, dtype)[1], kw)
            continue
        ours = case.call(ndgrad, _inputs(ndgrad, case, arrays, dtype)[1], kw)
        _compare(ours, theirs, case, dtype, f"{case.name}[{dtype}]")


def _check_noncontiguous(case, arrays, kw):
    torch = _torch()
    tleaves, ti = _inputs(torch, case, arrays, "float64", case.grad, noncontig=True)
    nleaves, ni = _inputs(ndgrad, case, arrays, "float64", case.grad, noncontig=True)
    assert any(not t.is_contiguous() for t in ni if t.dim() >= 2)
    try:
        theirs = case.call(torch, ti, kw)
    except Exception as e:  # e.g. view() of a transposed tensor: we must refuse it too
        with pytest.raises(type(e)):
            case.call(ndgrad, ni, kw)
        return
    ours = case.call(ndgrad, ni, kw)
    _compare(ours, theirs, case, "float64")
    if case.grad:
        _compare_grads(case, tleaves, nleaves, theirs, ours)


# ---------------------------------------------------------------- gradients

def _grad_outputs(outs, seed=1):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(tuple(o.shape)) for o in outs]


def _backward(lib, outs, gs, leaves):
    outs = [o for o in outs if o.dtype.is_floating_point and o.requires_grad]
    if not outs:
        return [None] * len(leaves)
    loss = sum((o * lib.tensor(g, dtype=o.dtype)).sum() for o, g in zip(outs, gs))
    diff = [t for t in leaves if t.requires_grad]
    grads = iter(lib.autograd.grad(loss, diff, allow_unused=True))
    return [next(grads) if t.requires_grad else None for t in leaves]


def _compare_grads(case, tleaves, nleaves, theirs, ours):
    tout = [o for o in _tensors(theirs) if o.dtype.is_floating_point]
    nout = [o for o in _tensors(ours) if o.dtype.is_floating_point]
    assert len(tout) == len(nout)
    gs = _grad_outputs(tout)
    if case.check_node_name:
        for o, t in zip(nout, tout):
            if t.grad_fn is not None:
                assert type(o.grad_fn).__name__ == type(t.grad_fn).__name__
    tg = _backward(_torch(), tout, [g for g in gs], tleaves)
    ng = _backward(ndgrad, nout, gs, nleaves)
    for i, (a, b) in enumerate(zip(ng, tg)):
        if a is None and b is None:
            continue
        shape = tuple(nleaves[i].shape)
        a = np.zeros(shape) if a is None else a.detach().numpy()
        b = np.zeros(shape) if b is None else _torch_numpy(b)
        assert a.shape == b.shape, f"grad of input {i}: shape {a.shape} vs {b.shape}"
        np.testing.assert_allclose(a, b, rtol=case.rtol, atol=case.atol, equal_nan=True,
                                   err_msg=f"gradient of input {i}")


def _torch_numpy(t):
    torch = _torch()
    t = t.detach()
    if t._is_zerotensor():  # PyTorch's symbolic zero gradient (sgn, ...)
        t = torch.zeros(t.shape, dtype=t.dtype)
    return t.numpy()


def _check_grads(case, arrays, kw):
    torch = _torch()
    tleaves, ti = _inputs(torch, case, arrays, "float64", True)
    nleaves, ni = _inputs(ndgrad, case, arrays, "float64", True)
    _compare_grads(case, tleaves, nleaves, case.call(torch, ti, kw), case.call(ndgrad, ni, kw))


@pytest.mark.parametrize("case,arrays,kw", GRADCHECK_SAMPLES)
def test_gradcheck(case, arrays, kw):
    leaves, _ = _inputs(ndgrad, case, arrays, "float64", True)
    if not any(t.requires_grad for t in leaves):
        pytest.skip("no differentiable input")

    def fn(*xs):
        return case.call(ndgrad, list(xs), kw)
    assert gradcheck(fn, tuple(leaves), eps=1e-6, atol=1e-5, rtol=1e-3)
    # second order on the first shape of each case (every keyword variant): the other shapes
    # (broadcast, 0-d, empty) exercise the same formulas
    if case.gradgrad and _shape_index(case, arrays) == 0:
        assert gradgradcheck(fn, tuple(leaves), eps=1e-6, atol=1e-5, rtol=1e-3)


def _shape_index(case, arrays):
    shapes = [tuple(a.shape) for a in arrays]
    for i, s in enumerate(case.shapes):
        if [tuple(x) for x in s] == shapes:
            return i
    return 0


def test_table_is_not_empty():
    names = {c.name for c in op_db.OPS}
    assert len(SAMPLES) > 100 and "exp" in names


# ---------------------------------------------------------------- both executions of a formula
# With create_graph off, derivative formulas run on plain arrays where they qualify
# (ops/_raw.py); the tests above see that execution. These repeat the gradient checks with
# every formula forced through the recorded one (Tensors and ops, as under create_graph).

GRAD_SAMPLES = [p for p in SAMPLES if p.values[0].grad]


@pytest.fixture
def recorded_backward():
    from ndgrad.ops import _raw
    prev = _raw.set_raw_backward(False)
    yield
    _raw.set_raw_backward(prev)


@pytest.mark.parametrize("case,arrays,kw", GRAD_SAMPLES)
def test_gradients_recorded_execution(case, arrays, kw, recorded_backward):
    checked = False
    if not case.skip_torch:
        try:
            import torch  # noqa: F401
        except ImportError:
            pass
        else:
            _check_grads(case, arrays, kw)
            checked = True
    if case.gradcheck:
        leaves, _ = _inputs(ndgrad, case, arrays, "float64", True)
        if any(t.requires_grad for t in leaves):
            def fn(*xs):
                return case.call(ndgrad, list(xs), kw)
            assert gradcheck(fn, tuple(leaves), eps=1e-6, atol=1e-5, rtol=1e-3)
            if case.gradgrad and _shape_index(case, arrays) == 0:
                assert gradgradcheck(fn, tuple(leaves), eps=1e-6, atol=1e-5, rtol=1e-3)
            checked = True
    if not checked:
        pytest.skip("nothing to check without torch")
