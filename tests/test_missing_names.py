"""The public names issue 31 found missing, against PyTorch: torch.signal.windows (every window,
both symmetries and dtypes, each parameter), torch.masked's reductions and normalizations
(values and gradients, fully masked-out slices included), geqrf / orgqr / ormqr, as_strided_copy,
Tensor.__rdiv__, Tensor.chalf (a clear error: NumPy has no complex32) and torch.onnx (importable;
export raises OnnxExporterError).
"""
import warnings

import numpy as np
import pytest

import ndgrad
from ndgrad.autograd import gradcheck

torch = pytest.importorskip("torch")


def _close(ours, theirs, **kw):
    assert tuple(ours.shape) == tuple(theirs.shape) and str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), equal_nan=True,
                               **kw)


# ---------------------------------------------------------------- signal.windows

WINDOWS = [("bartlett", {}), ("blackman", {}), ("cosine", {}), ("hamming", {}), ("hann", {}),
           ("nuttall", {}), ("kaiser", {}), ("kaiser", {"beta": 3.5}), ("gaussian", {}),
           ("gaussian", {"std": 0.7}), ("exponential", {}), ("exponential", {"tau": 2.5}),
           ("general_hamming", {"alpha": 0.6}), ("general_cosine", {"a": [0.5, 0.3, 0.2]})]


@pytest.mark.parametrize("name,kw", WINDOWS, ids=[f"{n}-{k}" for n, k in WINDOWS])
def test_signal_windows(name, kw):
    for M in (0, 1, 2, 5, 8):
        for sym in (True, False):
            for dt in ("float32", "float64"):
                ours = getattr(ndgrad.signal.windows, name)(M, sym=sym, dtype=getattr(ndgrad, dt),
                                                            **kw)
                theirs = getattr(torch.signal.windows, name)(M, sym=sym,
                                                             dtype=getattr(torch, dt), **kw)
                _close(ours, theirs, rtol=1e-6, atol=1e-7)


def test_signal_window_errors_and_graph():
    W, TW = ndgrad.signal.windows, torch.signal.windows
    for f in (lambda w: w.hann(-1), lambda w: w.gaussian(3, std=0), lambda w: w.exponential(3, center=1.0),
              lambda w: w.kaiser(3, beta=-1), lambda w: w.general_cosine(3, a=[])):
        with pytest.raises(Exception) as theirs:
            f(TW)
        with pytest.raises(Exception) as ours:
            f(W)
        assert (type(ours.value), str(ours.value)) == (type(theirs.value), str(theirs.value))
    with pytest.raises(ValueError, match="expects float32 or float64 dtypes"):
        W.hann(3, dtype=ndgrad.int64)
    assert W.exponential(5, sym=False, center=1.0).tolist() == pytest.approx(
        TW.exponential(5, sym=False, center=1.0).tolist())
    w = W.hann(5, requires_grad=True)
    assert w.requires_grad and w.grad_fn is not None


# ---------------------------------------------------------------- masked

REDUCTIONS = ["sum", "prod", "amax", "amin", "mean", "logsumexp", "norm", "var", "std"]
ALONG = ["cumsum", "cumprod", "softmax", "log_softmax", "softmin", "argmax", "argmin", "median"]


def _masked_case(name, args, kw, mask_shape=(3, 4)):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4))
    m = rng.random(mask_shape) > 0.4
    m[(1,) if len(mask_shape) == 2 else ()] = False   # (a fully masked-out row)
    res = []
    for L in (torch, ndgrad):
        t = L.tensor(x, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = getattr(L.masked, name)(t, *args, mask=L.tensor(m), **kw)
        g = None
        if r.requires_grad:
            r.nan_to_num(0.0, 0.0, 0.0).sum().backward()
            g = t.grad
        res.append((r, g))
    (tr, tg), (nr, ng) = res
    _close(nr, tr, rtol=1e-12, atol=1e-12)
    if tg is not None:
        _close(ng, tg, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("kw", [{}, {"dim": 1}, {"dim": 0, "keepdim": True}])
def test_masked_reductions(name, kw):
    _masked_case(name, (), kw)
    _masked_case(name, (), kw, mask_shape=(4,))   # (a mask that broadcasts)


@pytest.mark.parametrize("name", ALONG)
@pytest.mark.parametrize("dim", [0, 1])
def test_masked_along_a_dim(name, dim):
    _masked_case(name, (dim,), {})


def test_masked_more():
    _masked_case("normalize", (2.0, 1), {})
    _masked_case("var", (), {"dim": 1, "correction": 0})
    _masked_case("std", (), {"dim": 1, "unbiased": False})
    _masked_case("norm", (float("-inf"),), {"dim": 1})
    x = np.random.default_rng(1).standard_normal((2, 3))
    m = np.array([[True, False, True], [False, False, True]])
    ours = ndgrad.masked.logaddexp(ndgrad.tensor(x), ndgrad.tensor(x[::-1].copy()),
                                   input_mask=ndgrad.tensor(m), other_mask=ndgrad.tensor(m))
    theirs = torch.masked.logaddexp(torch.tensor(x), torch.tensor(x[::-1].copy()),
                                    input_mask=torch.tensor(m), other_mask=torch.tensor(m))
    _close(ours, theirs, rtol=1e-12)
    # integer inputs: sums in int64, amax's identity the dtype's minimum
    xi = np.arange(12).reshape(3, 4)
    mi = xi % 3 == 0
    for name in ("sum", "prod", "amax", "amin"):
        ours = getattr(ndgrad.masked, name)(ndgrad.tensor(xi), 1, mask=ndgrad.tensor(mi))
        theirs = getattr(torch.masked, name)(torch.tensor(xi), 1, mask=torch.tensor(mi))
        _close(ours, theirs)
    with pytest.raises(ValueError, match="Could not infer output dtype"):
        ndgrad.masked.mean(ndgrad.tensor(xi), mask=ndgrad.tensor(mi))


def test_masked_gradcheck():
    x = ndgrad.randn(3, 4, dtype=ndgrad.float64, requires_grad=True)
    m = ndgrad.tensor([[True, False, True, True], [True, True, False, True],
                       [False, True, True, True]])
    for f in (lambda t: ndgrad.masked.sum(t, 1, mask=m), lambda t: ndgrad.masked.softmax(t, 1,
                                                                                           mask=m),
              lambda t: ndgrad.masked.var(t, 0, mask=m), lambda t: ndgrad.masked.norm(t, 2.0, 1,
                                                                                       mask=m)):
        assert gradcheck(f, (x,))


# ---------------------------------------------------------------- linalg and Tensor names

def test_geqrf_orgqr_ormqr():
    a = np.random.default_rng(0).random((2, 4, 3))
    ours, theirs = ndgrad.geqrf(ndgrad.tensor(a)), torch.geqrf(torch.tensor(a))
    assert type(ours).__name__ == type(theirs).__name__ == "geqrf"
    for o, t in zip(ours, theirs):
        _close(o, t, rtol=1e-12, atol=1e-12)
    _close(ndgrad.orgqr(*ours), torch.orgqr(*theirs), rtol=1e-12, atol=1e-12)
    _close(ours.a.orgqr(ours.tau), theirs.a.orgqr(theirs.tau), rtol=1e-12, atol=1e-12)
    for left, transpose in ((True, False), (True, True), (False, False), (False, True)):
        c = np.random.default_rng(1).random((2, 4, 2) if left else (2, 2, 4))
        _close(ndgrad.ormqr(*ours, ndgrad.tensor(c), left, transpose),
               torch.ormqr(*theirs, torch.tensor(c), left, transpose), rtol=1e-12, atol=1e-12)
    A, tau = (t.detach().requires_grad_() for t in ours)
    C = ndgrad.tensor(np.random.default_rng(2).random((2, 4, 2)), requires_grad=True)
    assert gradcheck(lambda A, tau, C: ndgrad.ormqr(A, tau, C, True, True), (A, tau, C))
    x = ndgrad.tensor(a, requires_grad=True)
    with pytest.raises(RuntimeError, match="the derivative for 'geqrf' is not implemented"):
        ndgrad.geqrf(x)[0].sum().backward()
    with pytest.raises(RuntimeError, match="Expected input and other to have the same dtype"):
        ndgrad.ormqr(*ours, ndgrad.ones(2, 4, 2))


def test_as_strided_copy_rdiv_chalf():
    x, tx = ndgrad.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3)
    c = ndgrad.as_strided_copy(x, (2, 2), (1, 2), 1)
    _close(c, torch.as_strided_copy(tx, (2, 2), (1, 2), 1))
    assert c._base is None   # (a copy, not a view)
    _close(x.__rdiv__(2), tx.__rdiv__(2))
    with pytest.raises(TypeError, match="NumPy has no complex32 type"):
        x.chalf()


def test_onnx_imports_and_export_says_what_is_missing():
    import ndgrad.onnx as onnx
    assert onnx.is_in_onnx_export() is False
    assert issubclass(onnx.OnnxExporterError, RuntimeError)
    with pytest.raises(onnx.OnnxExporterError, match="needs a tracer"):
        onnx.export(ndgrad.nn.Linear(2, 2), (ndgrad.ones(1, 2),), "model.onnx")
