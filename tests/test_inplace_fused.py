"""Fused updates in place (Note [Fused updates in place] in ops/pointwise.py): unrecorded add_,
sub_ and lerp_ compute into the tensor's storage the values the out-of-place op returns, bit
for bit, and leave every other case to the general path."""
import numpy as np
import pytest

import ndgrad
from ndgrad.ops import _inplace

SHAPES = [((), ()), ((7,), (7,)), ((5, 300), (5, 300)), ((5, 300), (300,)),
          ((3, 1, 4), (1, 4)), ((600, 500), (600, 500))]   # (the last: the emulation's pieces)


def _pair(shape, oshape, dtype, seed):
    r = np.random.default_rng(seed)
    x = (r.standard_normal(shape) * 10.0 ** r.uniform(-3, 3, shape)).astype(dtype)
    return ndgrad.tensor(x), ndgrad.tensor(r.standard_normal(oshape).astype(dtype))


def _no_copy(monkeypatch):
    def refuse(self, result):
        raise AssertionError("the general path (out of place, then a copy) was taken")
    monkeypatch.setattr(_inplace, "_write", refuse)


CALLS = [
    ("add_", lambda x, o: x.add_(o, alpha=-0.0123), lambda x, o: ndgrad.add(x, o, alpha=-0.0123)),
    ("add_ positional", lambda x, o: x.add_(o, 3), lambda x, o: ndgrad.add(x, o, alpha=3)),
    ("sub_", lambda x, o: x.sub_(o, alpha=7.5), lambda x, o: ndgrad.sub(x, o, alpha=7.5)),
    ("lerp_ near", lambda x, o: x.lerp_(o, 0.1), lambda x, o: ndgrad.lerp(x, o, 0.1)),
    ("lerp_ far", lambda x, o: x.lerp_(o, 0.9), lambda x, o: ndgrad.lerp(x, o, 0.9)),
    ("lerp_ parameter", lambda x, o: x.lerp_(ndgrad.nn.Parameter(o), 0.25),   # (an EMA)
     lambda x, o: ndgrad.lerp(x, o, 0.25)),
    ("addcmul_", lambda x, o: x.addcmul_(o, o * 3, value=0.001),   # (Adam's second moment)
     lambda x, o: ndgrad.addcmul(x, o, o * 3, value=0.001)),
    ("addcmul_ value 1", lambda x, o: x.addcmul_(o, o), lambda x, o: ndgrad.addcmul(x, o, o)),
    ("addcdiv_", lambda x, o: x.addcdiv_(o, o.abs() + 1, value=-0.01),   # (Adam's step)
     lambda x, o: ndgrad.addcdiv(x, o, o.abs() + 1, value=-0.01)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,oshape", SHAPES)
@pytest.mark.parametrize("name,inplace,outofplace", CALLS, ids=[c[0] for c in CALLS])
def test_in_storage_gives_the_out_of_place_bits(monkeypatch, dtype, shape, oshape, name,
                                               inplace, outofplace):
    if name.startswith("lerp") and shape != oshape:
        pytest.skip("lerp_ with a broadcast end takes the general path")
    x, o = _pair(shape, oshape, dtype, seed=len(shape) + len(oshape))
    want = outofplace(x, o).numpy()
    data, version = x._data, x._version
    with ndgrad.no_grad(), monkeypatch.context() as m:
        if shape or name.startswith("lerp"):   # (0-d: the general path, as the op's forward)
            _no_copy(m)
        assert inplace(x, o) is x
    assert x._data is data and x._version == version + 1
    np.testing.assert_array_equal(x.numpy(), want)


@pytest.mark.parametrize("case", ["overlap", "float16", "int", "other dtype", "alpha 1",
                                  "number other", "tensor weight", "grad"])
def test_other_cases_take_the_general_path_with_its_values(monkeypatch, case):
    r = np.random.default_rng(5)
    x = ndgrad.tensor(r.standard_normal(64).astype(np.float32))
    o = ndgrad.tensor(r.standard_normal(64).astype(np.float32))
    calls = []
    real = _inplace._write

    def spy(self, result):
        calls.append(1)
        return real(self, result)
    monkeypatch.setattr(_inplace, "_write", spy)
    if case == "overlap":      # a shifted view of the same storage: computed whole, then copied
        base = ndgrad.arange(10.0)
        want = ndgrad.add(base[1:], base[:-1], alpha=2).numpy()
        with ndgrad.no_grad():
            base[1:].add_(base[:-1], alpha=2)
        got = base[1:].numpy()
    else:
        if case == "float16":
            x, o = x.half(), o.half()
        elif case == "int":
            x, o = (x * 10).long(), (o * 10).long()
        elif case == "other dtype":
            o = o.double()
        kw = dict(alpha=1) if case == "alpha 1" else dict(alpha=3)
        if case == "number other":
            o = 2.5
        if case == "tensor weight":
            want = ndgrad.lerp(x, o, ndgrad.tensor(0.25)).numpy()
            with ndgrad.no_grad():
                x.lerp_(o, ndgrad.tensor(0.25))
        elif case == "grad":       # recorded: a node, never the kernel
            y = x.clone().requires_grad_(True) * 1
            want = ndgrad.add(y, o, **kw).detach().numpy()
            y.add_(o, **kw)
            assert type(y.grad_fn).__name__ == "AddBackward0"
            x = y.detach()
        else:   # (in the promoted dtype, then rounded to x's)
            want = ndgrad.add(x, o, **kw).numpy().astype(x.numpy().dtype)
            with ndgrad.no_grad():
                x.add_(o, **kw)
        got = x.numpy()
    np.testing.assert_array_equal(got, want)
    if case not in ("alpha 1", "grad"):   # (alpha 1 is NumPy's own in-place add)
        assert calls, "the general path was not taken"


@pytest.mark.parametrize("call", [
    lambda x, o: x.add_(o, alpha=2), lambda x, o: x.sub_(o, alpha=2),
    lambda x, o: x.addcmul_(o, o, value=2), lambda x, o: x.addcdiv_(o, o, value=2),
    lambda x, o: x.lerp_(o, 0.5)])
def test_operands_that_do_not_broadcast_raise_pytorchs_error_and_leave_self(call):
    x = ndgrad.ones(5, 3)
    with ndgrad.no_grad(), pytest.raises(RuntimeError, match="must match the size"):
        call(x, ndgrad.ones(7))
    assert x.tolist() == [[1.0] * 3] * 5 and x._version == 0
