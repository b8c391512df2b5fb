"""Functions carry PyTorch's __name__s: torch.linalg.det is "linalg_det", torch.special.erf
"special_erf", torch.fft.fft "fft_fft", aliases their own (torch.arccos "arccos", Tensor.float
"float"). Libraries' parametrized test ids are made of them (pyro's
`test_singular_matrix_catch[linalg_cholesky-JIT=False]`), and so are reprs and logs."""
import pytest

import ndgrad

torch = pytest.importorskip("torch")

KNOWN = {("", "sym_sqrt")}     # (PyTorch's is "_sym_sqrt": an implementation detail)


def _mismatches(theirs, ours, prefix):
    out = []
    for name in dir(theirs):
        if name.startswith("_") or (prefix, name) in KNOWN:
            continue
        f, g = getattr(theirs, name), getattr(ours, name, None)
        if g is None or isinstance(f, type) or not callable(f) or not hasattr(f, "__name__"):
            continue
        if getattr(g, "__name__", None) != f.__name__:
            out.append((name, f.__name__, getattr(g, "__name__", None)))
    return out


@pytest.mark.parametrize("ns", ["", "linalg", "special", "fft"])
def test_namespace_function_names(ns):
    theirs = getattr(torch, ns) if ns else torch
    ours = getattr(ndgrad, ns) if ns else ndgrad
    assert _mismatches(theirs, ours, ns) == []


def test_tensor_method_names():
    assert _mismatches(torch.Tensor, ndgrad.Tensor, "Tensor") == []


def test_aliases_are_their_own_functions_and_behave_alike():
    assert ndgrad.arccos is not ndgrad.acos and ndgrad.special.erf is not ndgrad.erf
    x = ndgrad.tensor([0.25, 0.5], requires_grad=True)
    assert ndgrad.equal(ndgrad.arccos(x), ndgrad.acos(x))
    assert ndgrad.equal(ndgrad.special.erf(x), ndgrad.erf(x))
    ndgrad.linalg.det(ndgrad.eye(2, requires_grad=True)).backward()
    assert ndgrad.special.erf.__doc__ == ndgrad.erf.__doc__
