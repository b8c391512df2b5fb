"""Unrecorded in-place arithmetic (`p -= lr * p.grad` under no_grad) computes straight into the
tensor's storage; every case must still give PyTorch's values, versions and errors."""
import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")


def _cases(L):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4,)).astype(np.float32)
    out = []
    with L.no_grad():
        x = L.tensor(a, requires_grad=True)
        x -= 0.5 * L.tensor(a)                      # a parameter update
        x += L.tensor(b)                            # broadcast
        x *= 2
        x /= 3
        out += [x, x._version]
        y = L.tensor(a)
        y -= y.flip(0)                              # overlapping memory
        out += [y]
        base = L.tensor(a)
        v = base[:, 1]
        v += 1                                      # through a view: the base changes
        t = base.t()
        t *= L.tensor(np.arange(3, dtype=np.float32))   # non-contiguous
        out += [base, base._version, v._version]
        z = L.tensor(a.astype(np.float64))
        z -= L.tensor(a)                            # other dtype: general path, same result
        z += 1
        out += [z]
        s = L.tensor(np.float32(2.0))
        s *= L.tensor(np.float32(3.0))
        out += [s]
        i = L.tensor([4, 5])
        i += 2                                      # integers: the general path
        i -= L.tensor([1, 1])
        i *= True
        out += [i, i._version]
        h = L.tensor(a.astype(np.float16))
        h -= 0.25                                   # a Python float into half: half
        h /= 3
        out += [h, h._version]
        q = L.tensor(a)
        q -= L.tensor(a[0], dtype=L.float64)        # a wider other: stays float32
        out += [q]
    return out


def test_values_and_versions_match_pytorch():
    for r, g in zip(_cases(torch), _cases(ndgrad)):
        if isinstance(r, int):
            assert r == g
        else:
            assert str(r.dtype) == str(g.dtype) and tuple(r.shape) == tuple(g.shape)
            np.testing.assert_allclose(g.detach().numpy(), r.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("op", [
    lambda L: L.ones(3).__isub__(L.ones(2, 3)),
    lambda L: L.ones(3, dtype=L.int64).__iadd__(1.5),
    lambda L: L.ones(3, dtype=L.int64).__itruediv__(2),
    lambda L: L.ones(3).expand(2, 3).__imul__(2),
    lambda L: L.ones(3).expand(2, 3).__isub__(L.ones(3)),
    lambda L: L.ones(3).__iadd__(L.ones(3, dtype=L.complex64)),
])
def test_errors_match_pytorch_and_leave_the_tensor_unchanged(op):
    errs = []
    for L in (torch, ndgrad):
        with L.no_grad():
            with pytest.raises(RuntimeError) as info:
                op(L)
        errs.append(str(info.value).split("\n")[0])
    assert errs[0] == errs[1]
    x = ndgrad.ones(3)
    with pytest.raises(RuntimeError):
        x -= ndgrad.ones(2, 3)
    assert x.tolist() == [1.0] * 3 and x._version == 0


def test_recorded_inplace_is_not_taken_by_the_fast_path():
    w = ndgrad.ones(3, requires_grad=True)
    y = w * 1
    y -= 2 * w                                      # recorded: SubBackward0 on top of y
    assert type(y.grad_fn).__name__ == "SubBackward0"
    y.sum().backward()
    assert w.grad.tolist() == [-1.0] * 3


def test_inplace_operators_under_inference_mode_and_on_parameters():
    p = ndgrad.nn.Parameter(ndgrad.ones(3))
    with ndgrad.no_grad():
        p -= 0.5 * ndgrad.ones(3)
    assert p.tolist() == [0.5] * 3 and p._version == 1 and p.requires_grad
    with ndgrad.inference_mode():
        t = ndgrad.ones(2)
        t += 1
    assert t.tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside"):
        with ndgrad.no_grad():
            t += 1
    assert t.tolist() == [2.0, 2.0]
