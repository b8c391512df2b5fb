"""The op table on the strict stand-in device (ndgrad.cuda._standin behind device "cuda").

Every sample of the op table runs on CPU tensors and on "cuda" tensors of the stand-in, whose
arrays refuse any implicit trip through NumPy: a host fallback anywhere in an op's forward or
backward fails here. For each sample: the forward in each dtype (same values, dtype and shape,
results on cuda:0), the input gradients (same values, on cuda:0), and on the case's first shape
float64 gradcheck and gradgradcheck on the device. Factories called inside a case (index
tensors, ...) land on the device through torch.set_default_device, as in a GPU program.

With NDGRAD_TEST_REAL_CUDA=1 on a machine with CuPy and a GPU, the same tests run on the real
device instead (with float64 tolerances for its own kernels).
"""
import os

import numpy as np
import pytest

import ndgrad
from ndgrad import _backend
from ndgrad.autograd import gradcheck, gradgradcheck

import test_op_db as T

pytestmark = pytest.mark.standin

ALL = T.SAMPLES
GRAD = [p for p in ALL if p.values[0].grad]
FIRST_SHAPE = [p for p in T.GRADCHECK_SAMPLES
               if T._shape_index(p.values[0], p.values[1]) == 0]


REAL = os.environ.get("NDGRAD_TEST_REAL_CUDA") == "1"
# Relative and absolute tolerances by precision. The stand-in computes with NumPy as the CPU
# does: the same bits, except where an op takes another path on a device (a scan in another
# grouping: a few ulps of float32). A GPU's own kernels (CUDA's expf, reductions in another
# order, float16 via float32) differ from NumPy's by more: PyTorch's test tolerances for
# a device against the CPU.
if REAL:
    TOL = {"float16": 1e-3, "bfloat16": 1.6e-2, "float32": 1.3e-6, "complex64": 1.3e-6}
    ATOL = {"float16": 1e-5, "bfloat16": 1e-5, "float32": 1e-5, "complex64": 1e-5}
else:
    TOL = {"float16": 1e-3, "bfloat16": 1.6e-2, "float32": 1e-6, "complex64": 1e-6}
    ATOL = {}
TOL64 = 1e-9 if REAL else 1e-12


@pytest.fixture
def on_device(request):
    if REAL:
        if not _backend.cuda_available():
            pytest.skip("NDGRAD_TEST_REAL_CUDA=1 but no CUDA device")
        ndgrad.set_default_device("cuda")
        yield "cuda"
        ndgrad.set_default_device(None)
        return
    standin = request.getfixturevalue("standin")   # (conftest.py)
    ndgrad.set_default_device(standin)
    yield "cuda"


def _run(case, arrays, kw, dtype, device, grad=False):
    """(result, leaves) of the case on `device` (None: the CPU), or the exception it raised."""
    ndgrad.set_default_device(device)
    leaves, used = T._inputs(ndgrad, case, arrays, dtype, grad)
    try:
        return case.call(ndgrad, used, kw), leaves
    except Exception as e:  # noqa: BLE001  (compared with the CPU's below)
        return e, leaves


def _same(ours, ref, what):
    if isinstance(ref, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(ref), what
        for k, (o, r) in enumerate(zip(ours, ref)):
            _same(o, r, f"{what}[{k}]")
        return
    if isinstance(ref, ndgrad.Tensor):
        assert isinstance(ours, ndgrad.Tensor), f"{what}: {type(ours)}"
        assert ours.device == ndgrad.device("cuda", 0), f"{what}: on {ours.device}"
        assert ours.dtype == ref.dtype and ours.shape == ref.shape, what
        if ours.layout != ndgrad.strided:
            ours, ref = ours.to_dense(), ref.to_dense()
        o, r = ours.detach().cpu().numpy(), ref.detach().numpy()
        if r.dtype.kind in "fc":
            rtol = TOL.get(r.dtype.name, TOL64)
            np.testing.assert_allclose(o, r, rtol=rtol, atol=ATOL.get(r.dtype.name, rtol),
                                       equal_nan=True, err_msg=what)
        else:
            np.testing.assert_array_equal(o, r, err_msg=what)
        return
    assert ours == ref, f"{what}: {ours!r} vs {ref!r}"


def _outs(out):
    return [o for o in T._tensors(out) if isinstance(o, ndgrad.Tensor)]


@pytest.mark.parametrize("case,arrays,kw", ALL)
def test_forward_and_gradients_on_device(case, arrays, kw, on_device):
    if "random" in case.tags:
        pytest.skip("random op: values differ by construction")
    for dtype in case.dtypes:
        ref, _ = _run(case, arrays, kw, dtype, None)
        ours, _ = _run(case, arrays, kw, dtype, on_device)
        if isinstance(ref, Exception):
            assert isinstance(ours, type(ref)), f"{case.name}[{dtype}]: {ours!r} vs {ref!r}"
            continue
        if isinstance(ours, Exception):
            raise ours
        _same(ours, ref, f"{case.name}[{dtype}]")
    if not case.grad:
        return
    grads = []
    for device in (None, on_device):
        out, leaves = _run(case, arrays, kw, "float64", device, grad=True)
        if isinstance(out, Exception):
            raise out
        outs = [o for o in _outs(out) if o.dtype.is_floating_point and o.requires_grad]
        diff = [t for t in leaves if t.requires_grad]
        if not outs or not diff:
            return
        gs = T._grad_outputs(outs)
        loss = sum((o * ndgrad.tensor(g, dtype=o.dtype)).sum() for o, g in zip(outs, gs))
        grads.append(ndgrad.autograd.grad(loss, diff, allow_unused=True))
    for i, (o, r) in enumerate(zip(grads[1], grads[0])):
        if r is None:
            assert o is None, f"gradient of input {i}"
            continue
        _same(o, r, f"{case.name}: gradient of input {i}")


@pytest.mark.parametrize("case,arrays,kw", FIRST_SHAPE)
def test_gradcheck_on_device(case, arrays, kw, on_device):
    leaves, _ = T._inputs(ndgrad, case, arrays, "float64", True)
    assert all(t.device.type == "cuda" for t in leaves)
    if not any(t.requires_grad for t in leaves):
        pytest.skip("no differentiable input")

    def fn(*xs):
        return case.call(ndgrad, list(xs), kw)
    assert gradcheck(fn, tuple(leaves), eps=1e-6, atol=1e-5, rtol=1e-3)
    if case.gradgrad:
        assert gradgradcheck(fn, tuple(leaves), eps=1e-6, atol=1e-5, rtol=1e-3)
