"""out=: every op of the op table that has out= in PyTorch, called with out= under ndgrad and
PyTorch on the same inputs: values, the returned object, dtype rules and their messages,
resizing, and the autograd refusal."""
import warnings

import numpy as np
import pytest

import ndgrad
from ndgrad.ops._out import RULES, NO_OUT

import test_op_db  # noqa: F401  (registers every op table)
from op_db import OPS


class _Inject:
    """A stand-in for the library module that adds out=... to calls of one function."""

    def __init__(self, lib, name, out):
        self._lib, self._name, self._out, self.hit = lib, name, out, False

    def __getattr__(self, n):
        f = getattr(self._lib, n)
        if n != self._name or self._out is None:
            return f

        def g(*a, **k):
            self.hit = True
            return f(*a, **k, out=self._out)
        return g


def _cases():
    seen = {}
    for c in OPS:
        if c.name in RULES and c.name not in seen and RULES[c.name][0] != "factory":
            seen[c.name] = c
    return [seen[n] for n in sorted(seen)]


CASES = _cases()
ALTS = ["float32", "float64", "float16", "int64", "int32", "bool", "complex128"]


def _inputs(lib, arrays):
    return [lib.tensor(a) for a in arrays]


def _call(case, lib, arrays, kw, out):
    p = _Inject(lib, case.name, out)
    r = case.call(p, _inputs(lib, arrays), kw)
    return r, p.hit


def _outcome(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", fn()
        except Exception as e:   # the exception's type and first line are compared
            return type(e).__name__ + ": " + str(e).split("\n")[0], None


def _np(x):
    return x.detach().cpu().numpy() if hasattr(x, "detach") else np.asarray(x._data)


def test_every_op_with_out_in_the_table_is_checked():
    assert len(CASES) >= 150


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_out_matches_pytorch(case):
    torch = pytest.importorskip("torch")
    arrays, kw, _ = next(iter(case.samples()))
    ref, _ = _call(case, torch, arrays, kw, None)
    multi = isinstance(ref, tuple)
    refs = tuple(ref) if multi else (ref,)
    dts = [str(t.dtype).split(".")[1] for t in refs]
    checked = 0
    for alt in [None] + ALTS:
        def outs(lib):
            made = tuple(lib.empty(0, dtype=getattr(lib, alt if (alt and i == 0) else d))
                         for i, d in enumerate(dts))
            return made if multi else made[0]
        t_out, n_out = outs(torch), outs(ndgrad)
        t_res = _outcome(lambda: _call(case, torch, arrays, kw, t_out))
        if t_res[0] == "ok" and not t_res[1][1]:
            return                       # the sample does not call the function itself
        if t_res[0].startswith("TypeError"):   # not an out= overload of PyTorch's Python API
            if "invalid combination" not in t_res[0]:
                n_res = _outcome(lambda: _call(case, ndgrad, arrays, kw, n_out))
                assert n_res[0] == t_res[0]
            return
        if "INTERNAL ASSERT" in t_res[0] or t_res[0].startswith("NotImplementedError"):
            continue                     # PyTorch's own gaps
        n_res = _outcome(lambda: _call(case, ndgrad, arrays, kw, n_out))
        assert n_res[0] == t_res[0], (alt, n_res[0], t_res[0])
        if t_res[0] == "ok":
            (t_r, _), (n_r, _) = t_res[1], n_res[1]
            t_os, n_os = (t_out, n_out) if multi else ((t_out,), (n_out,))
            n_rs = tuple(n_r) if multi else (n_r,)
            for to, no, nr in zip(t_os, n_os, n_rs):
                assert nr is no                          # out itself is returned
                assert tuple(no.shape) == tuple(to.shape) and str(no.dtype) == str(to.dtype)
                np.testing.assert_allclose(_np(no).astype(complex), _np(to).astype(complex),
                                           rtol=1e-3, atol=1e-3, equal_nan=True)
            checked += 1
    assert checked >= 1


def test_resize_warns_when_out_had_elements_and_keeps_views_in_place():
    x = ndgrad.ones(2, 3)
    o = ndgrad.empty(5)
    with pytest.warns(UserWarning, match=r"had shape \[5\], which does not match the required "
                                         r"output shape \[2, 3\]"):
        r = ndgrad.add(x, x, out=o)
    assert r is o and o.shape == (2, 3) and (o == 2).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ndgrad.mul(x, 3, out=ndgrad.empty(0))        # empty: resized silently
    big = ndgrad.zeros(10)
    view = big[:6].view(2, 3)
    v0 = view._version
    ndgrad.add(x, x, out=view)                      # same shape: written in place
    assert big.tolist() == [2.0] * 6 + [0.0] * 4 and view._version > v0
    t = ndgrad.empty(3, 2).t()
    ndgrad.add(x, x, out=t)
    assert not t.is_contiguous() and (t == 2).all()


def test_out_refuses_autograd_before_writing():
    x = ndgrad.ones(3, requires_grad=True)
    o = ndgrad.full((3,), 7.0)
    msg = ("exp(): functions with out=... arguments don't support automatic differentiation, "
           "but one of the arguments requires grad.")
    with pytest.raises(RuntimeError, match=msg.replace("(", r"\(").replace(")", r"\)")
                       .replace(".", r"\.")):
        ndgrad.exp(x, out=o)
    assert o.tolist() == [7.0] * 3 and o._version == 0
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        ndgrad.add(ndgrad.ones(3), 1, out=ndgrad.empty(3, requires_grad=True))
    with ndgrad.no_grad():
        assert ndgrad.exp(x, out=o) is o
    with pytest.raises(RuntimeError, match="can't be cast"):
        ndgrad.add(ndgrad.ones(3), 1.5, out=ndgrad.zeros(3, dtype=ndgrad.long))


def test_factories_make_their_result_in_outs_dtype():
    o = ndgrad.empty(0, dtype=ndgrad.int64)
    assert ndgrad.zeros(3, out=o) is o and o.dtype is ndgrad.int64 and o.tolist() == [0, 0, 0]
    assert ndgrad.arange(4, out=ndgrad.empty(0)).tolist() == [0.0, 1.0, 2.0, 3.0]
    d = ndgrad.empty(2, dtype=ndgrad.float64)
    ndgrad.manual_seed(0)
    assert ndgrad.randn(2, out=d).dtype is ndgrad.float64
    with pytest.raises(RuntimeError, match=r"dtype Float does not match dtype of out parameter "
                                           r"\(Long\)"):
        ndgrad.zeros(2, dtype=ndgrad.float32, out=o)


def test_out_type_errors_and_multi_output_tuples():
    x = ndgrad.ones(2, 3)
    with pytest.raises(TypeError, match="exp\\(\\): argument 'out' must be Tensor, not int"):
        ndgrad.exp(x, out=3)
    with pytest.raises(TypeError, match="must be tuple of Tensors, not Tensor"):
        ndgrad.sort(x, out=ndgrad.empty(0))
    v, i = ndgrad.empty(0), ndgrad.empty(0, dtype=ndgrad.long)
    r = ndgrad.max(x, 1, out=(v, i))
    assert r.values is v and r.indices is i and repr(r).startswith("torch.return_types.max_out(")
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype long int, but got "
                                           "float instead"):
        ndgrad.sort(x, out=(ndgrad.empty(0), ndgrad.empty(0)))


@pytest.mark.parametrize("name", sorted(n for n in NO_OUT if hasattr(ndgrad, n)))
def test_functions_without_out_in_pytorch_refuse_it(name):
    with pytest.raises(TypeError, match=f"{name}\\(\\) got an unexpected keyword argument 'out'"):
        getattr(ndgrad, name)(ndgrad.ones(2, 2), out=ndgrad.empty(0))


def test_linalg_out():
    a = ndgrad.tensor([[2.0, 1.0], [1.0, 3.0]])
    o = ndgrad.empty(0)
    assert ndgrad.linalg.inv(a, out=o) is o
    assert ndgrad.allclose(o @ a, ndgrad.eye(2), atol=1e-6)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got "
                                           "double instead"):
        ndgrad.linalg.inv(a, out=ndgrad.empty(0, dtype=ndgrad.float64))


def test_fft_and_special_out():
    x = ndgrad.randn(8)
    o = ndgrad.empty(0, dtype=ndgrad.complex64)
    assert ndgrad.fft.fft(x, out=o) is o and o.shape == (8,)
    with pytest.raises(RuntimeError, match="fft expects a complex output tensor, but got Float"):
        ndgrad.fft.fft(x, out=ndgrad.empty(0))
    with pytest.raises(RuntimeError, match="irfftn expects a floating point output tensor, but "
                                           "got ComplexFloat"):
        ndgrad.fft.irfft2(ndgrad.fft.rfft2(x.view(2, 4)), out=o)
    view = ndgrad.zeros(16, dtype=ndgrad.complex64)[:8]
    ndgrad.fft.fft(x, out=view)                     # written in place: the view sees it
    assert ndgrad.allclose(view, ndgrad.fft.fft(x))
    assert ndgrad.fft.fftfreq(4, out=ndgrad.empty(0, dtype=ndgrad.float64)).dtype is \
        ndgrad.float64
    s = ndgrad.empty(0)
    assert ndgrad.special.erf(x, out=s) is s and ndgrad.allclose(s, ndgrad.special.erf(x))
