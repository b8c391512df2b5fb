"""Inference tensors as PyTorch's: made under inference_mode, readable anywhere, but not saved
for backward, changed in place or made to require grad outside it (Note [Inference tensors])."""
import pytest

import ndgrad
from ndgrad._tensor import (ERR_INFERENCE_SAVED, ERR_INFERENCE_INPLACE,
                            ERR_INFERENCE_REQUIRES_GRAD)


def _script(torch):
    out = []

    def tr(f):
        try:
            out.append(repr(f()))
        except Exception as e:   # the type and message are compared with PyTorch's
            out.append(f"{type(e).__name__}: {e}")

    w = torch.ones(3, requires_grad=True)
    with torch.inference_mode():
        x = torch.ones(3)
        y = x * 2
        v = x[:2]
        tr(lambda: x.add_(1).tolist())                       # in place inside: fine
        with torch.inference_mode(False):                     # grad mode back on, normal tensors
            z = torch.ones(3)
            tr(lambda: (torch.is_grad_enabled(), z.is_inference(), (w * 2).requires_grad))
    tr(lambda: (x.is_inference(), y.is_inference(), v.is_inference(), w.is_inference(),
                x[1:].is_inference(), x.detach().is_inference(), x.clone().is_inference(),
                (x * 3).is_inference()))
    tr(lambda: (x + w).requires_grad)                          # not saved: allowed
    tr(lambda: x * w)                                          # saved for w's gradient
    tr(lambda: x.add_(1))
    tr(lambda: x.__setitem__(0, 5.0))
    tr(lambda: x.requires_grad_())
    tr(lambda: x.tolist())                                     # unchanged by the refusals
    with torch.inference_mode():
        m = torch.ones(2, 3)
    tr(lambda: m @ torch.ones(3, 2, requires_grad=True))

    @torch.inference_mode()
    def f(a):
        return a * 2
    tr(lambda: f(torch.ones(2)).is_inference())
    return out


def test_inference_tensors_match_pytorch():
    torch = pytest.importorskip("torch")
    got, ref = _script(ndgrad), _script(torch)
    # PyTorch 2.13 raises its in-place error after writing ([5., 3., 3.]); ndgrad raises it
    # before anything changes (item 8 below)
    assert ref[8] == "[5.0, 3.0, 3.0]"
    assert got[:8] + got[9:] == ref[:8] + ref[9:]


def test_inference_tensor_errors():
    out = _script(ndgrad)
    assert out[1] == "(True, False, True)"
    assert out[2] == "(True, True, True, False, True, True, False, False)"
    assert out[4] == "RuntimeError: " + ERR_INFERENCE_SAVED
    assert out[5] == out[6] == "RuntimeError: " + ERR_INFERENCE_INPLACE
    assert out[7] == "RuntimeError: " + ERR_INFERENCE_REQUIRES_GRAD
    assert out[8] == "[2.0, 2.0, 2.0]"


def test_no_grad_tensors_are_not_inference_tensors():
    with ndgrad.no_grad():
        x = ndgrad.ones(2)
    assert not x.is_inference()
    w = ndgrad.ones(2, requires_grad=True)
    (x * w).sum().backward()
    assert w.grad.tolist() == [1.0, 1.0]
