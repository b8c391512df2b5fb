"""The __torch_function__ protocol on Tensor subclasses and other classes, against PyTorch:
results keep the subclass, torch functions reach the override with their public function,
Parameter opts out, DisableTorchFunctionSubclass turns it off, modes see every op."""
import pytest

import ndgrad


def _classes(lib):
    class Sub(lib.Tensor):
        pass

    class Logging(lib.Tensor):
        log = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.log.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs)

    class Opaque:
        """Not a Tensor: takes over matmul and add, as linear_operator's LinearOperator."""
        def __init__(self, v):
            self.v = v

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func is lib.matmul:
                return ("matmul", args[1].v if isinstance(args[1], cls) else args[0].v)
            if func is lib.add:
                return ("add", type(args[0]).__name__)
            return NotImplemented
    return Sub, Logging, Opaque


def _run(lib):
    Sub, Logging, Opaque = _classes(lib)
    out = {}
    x = lib.tensor([1.0, 2.0, 3.0])
    s = x.as_subclass(Sub)
    out["types"] = [type(r).__name__ for r in (s + 1, lib.add(s, s), s.sum(), x + s, s.exp(),
                                                 lib.cat([x, s]), s[0], s.reshape(3, 1))]
    out["split"] = [type(r).__name__ for r in lib.split(s, 2)]
    out["values"] = (s * 2 + 1).tolist()
    out["param"] = type(lib.nn.Parameter(lib.ones(2)) * 2).__name__
    w = lib.tensor([0.5, -1.0], requires_grad=True)
    y = w.as_subclass(Logging)
    loss = (y.exp() * 3).sum()
    out["loss_type"] = type(loss).__name__
    loss.backward()
    out["grad"] = [round(v, 6) for v in w.grad.tolist()]
    Logging.log.clear()
    lib.add(y, 1)
    lib.mul(y, y)
    lib.exp(y)
    out["logged"] = list(Logging.log)
    with lib._C.DisableTorchFunctionSubclass():
        out["disabled"] = type(lib.add(s, 1)).__name__
    out["opaque"] = (lib.matmul(lib.ones(2, 2), Opaque(7)), lib.add(lib.ones(1), Opaque(1)))
    with pytest.raises(TypeError) as e:
        lib.sub(lib.ones(1), Opaque(1))
    out["refused"] = str(e.value).split(":")[0]
    m = lib.Tensor._make_subclass(Sub, lib.ones(2), True)
    out["make_subclass"] = (type(m).__name__, m.requires_grad, m.is_leaf)
    return out


def test_subclass_protocol_matches_pytorch():
    torch = pytest.importorskip("torch")
    got, want = _run(ndgrad), _run(torch)
    assert got == want


def test_mode_sees_ops_and_pops_itself():
    from ndgrad.overrides import TorchFunctionMode, _get_current_function_mode

    class Count(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.names = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            assert _get_current_function_mode() is None   # popped while it runs
            self.names.append(func.__name__)
            return func(*args, **(kwargs or {}))
    x = ndgrad.ones(2)
    with Count() as mode:
        y = ndgrad.mul(x, 3)
        z = ndgrad.exp(y)
    assert mode.names == ["mul", "exp"] and z.tolist() == ndgrad.exp(ndgrad.full((2,), 3.)).tolist()
    assert _get_current_function_mode() is None
    before = len(mode.names)
    ndgrad.mul(x, 2)
    assert len(mode.names) == before


def test_plain_tensors_and_parameters_do_not_dispatch():
    from ndgrad import overrides
    p = ndgrad.nn.Parameter(ndgrad.ones(2))
    assert not overrides.has_torch_function((ndgrad.ones(1), p))
    assert ndgrad.Tensor._tf is False and ndgrad.nn.Parameter._tf is False

    class Sub(ndgrad.Tensor):
        pass
    assert Sub._tf is True

    class Off(ndgrad.Tensor):
        __torch_function__ = ndgrad._C._disabled_torch_function_impl
    assert Off._tf is False
    o = ndgrad.ones(2).as_subclass(Off)
    assert type(o + 1) is ndgrad.Tensor
