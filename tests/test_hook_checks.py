"""Hooks and custom Functions may not change a gradient's shape or dtype (issue 15): PyTorch's
exception and message, raised before anything reaches `.grad`."""
import functools

import pytest

import ndgrad


def _leaf_hook(lib, ret, grad=None):
    x = lib.ones(3, requires_grad=True)
    if grad is not None:
        x.grad = lib.full((3,), grad)
    x.register_hook(lambda g: ret(lib, g))
    x.sum().backward()
    return x.grad


def _tensor_hook(lib, ret):
    x = lib.ones(3, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: ret(lib, g))
    y.sum().backward()
    return x.grad


def myhook(lib, g):
    return lib.ones(4)


def _named_hook(lib):
    x = lib.ones(3, requires_grad=True)
    y = x * 2
    y.register_hook(functools.partial(myhook, lib))   # no __name__: '<unknown>'
    y.sum().backward()


def _prehook(lib, ret):
    x = lib.ones(3, requires_grad=True)
    y = x * 2
    y.grad_fn.register_prehook(lambda go: ret(lib, go))
    y.sum().backward()
    return x.grad


def _posthook(lib, ret):
    x = lib.ones(3, requires_grad=True)
    y = x * lib.ones(3)
    y.grad_fn.register_hook(lambda gi, go: ret(lib, gi))
    y.sum().backward()
    return x.grad


def _post_acc(lib, ret):
    x = lib.ones(3, requires_grad=True)
    x.register_post_accumulate_grad_hook(lambda p: ret(lib, p))
    x.sum().backward()
    return x.grad


def _retain(lib):
    x = lib.ones(3, requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: lib.ones(5))
    y.sum().backward()


def _function(lib, ret, second=None):
    class F(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return ret(lib, g)
    x = lib.ones(3, requires_grad=True)
    F.apply(x, lib.ones(3, requires_grad=True) if second is None else second).sum().backward()
    return x.grad


CASES = {
    "leaf_size": lambda lib: _leaf_hook(lib, lambda lib, g: lib.ones(4)),
    "leaf_size_2d": lambda lib: _leaf_hook(lib, lambda lib, g: lib.ones(3, 1)),
    "leaf_dtype": lambda lib: _leaf_hook(lib, lambda lib, g: g.double()),
    "leaf_int": lambda lib: _leaf_hook(lib, lambda lib, g: 3),
    "tensor_size": lambda lib: _tensor_hook(lib, lambda lib, g: lib.ones(())),
    "tensor_dtype_long": lambda lib: _tensor_hook(lib, lambda lib, g: g.long()),
    "tensor_dtype_half": lambda lib: _tensor_hook(lib, lambda lib, g: g.half()),
    "tensor_dtype_bool": lambda lib: _tensor_hook(lib, lambda lib, g: g > 0),
    "tensor_dtype_complex": lambda lib: _tensor_hook(lib, lambda lib, g: g.to(lib.complex64)),
    "named_hook": _named_hook,
    "prehook_size": lambda lib: _prehook(lib, lambda lib, go: (lib.ones(4),)),
    "prehook_dtype": lambda lib: _prehook(lib, lambda lib, go: (go[0].double(),)),
    "prehook_list": lambda lib: _prehook(lib, lambda lib, go: [go[0]]),
    "prehook_tensor": lambda lib: _prehook(lib, lambda lib, go: go[0]),
    "prehook_int": lambda lib: _prehook(lib, lambda lib, go: (5,)),
    "posthook_size": lambda lib: _posthook(lib, lambda lib, gi: (lib.ones(4), gi[1])),
    "posthook_dtype": lambda lib: _posthook(lib, lambda lib, gi: (gi[0].double(), gi[1])),
    "posthook_replaces_none": lambda lib: _posthook(lib, lambda lib, gi: (gi[0], lib.ones(3))),
    "posthook_count": lambda lib: _posthook(lib, lambda lib, gi: (gi[0],)),
    "post_accumulate": lambda lib: _post_acc(lib, lambda lib, p: lib.ones(4)),
    "retain_grad": _retain,
    "function_shape": lambda lib: _function(lib, lambda lib, g: (lib.ones(5), g)),
    "function_shape_index1": lambda lib: _function(lib, lambda lib, g: (g, lib.ones(7))),
    "function_shape_0d": lambda lib: _function(lib, lambda lib, g: (lib.ones(()), g)),
    "function_shape_col": lambda lib: _function(lib, lambda lib, g: (lib.ones(3, 1), g)),
    "function_complex_for_real": lambda lib: _function(
        lib, lambda lib, g: (g.to(lib.complex64), g)),
    "function_int": lambda lib: _function(lib, lambda lib, g: (5, g)),
    "function_count": lambda lib: _function(lib, lambda lib, g: g),
}


def _outcome(lib, case):
    try:
        r = CASES[case](lib)
    except Exception as e:  # noqa: BLE001 (compared with PyTorch's)
        return type(e).__name__, str(e).split("\n")[0]
    return "ok", None if r is None else r.tolist()


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_torch(case):
    torch = pytest.importorskip("torch")
    assert _outcome(ndgrad, case) == _outcome(torch, case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_raises(case):
    kind, msg = _outcome(ndgrad, case)
    assert kind in ("RuntimeError", "TypeError"), (kind, msg)


def test_messages_without_torch():
    assert _outcome(ndgrad, "leaf_size") == (
        "RuntimeError", "hook '<lambda>' has changed the size of value")
    assert _outcome(ndgrad, "leaf_dtype") == (
        "RuntimeError", "hook '<lambda>' has changed the type of value (was torch.FloatTensor "
                        "got torch.DoubleTensor)")
    assert _outcome(ndgrad, "tensor_dtype_bool")[1].endswith("got CPUBoolType)")
    assert _outcome(ndgrad, "named_hook")[1] == "hook '<unknown>' has changed the size of value"
    assert _outcome(ndgrad, "function_shape") == (
        "RuntimeError", "Function FBackward returned an invalid gradient at index 0 - got [5] "
                        "but expected shape compatible with [3]")
    assert _outcome(ndgrad, "function_int") == (
        "RuntimeError", "expected Variable or None (got int)")


def test_grad_unchanged_when_hook_is_refused():
    with pytest.raises(RuntimeError, match="changed the size"):
        _leaf_hook(ndgrad, lambda lib, g: lib.ones(4), grad=7.0)
    x = ndgrad.ones(3, requires_grad=True)
    x.grad = ndgrad.full((3,), 7.0)
    x.register_hook(lambda g: ndgrad.ones(3, dtype=ndgrad.float64))
    with pytest.raises(RuntimeError, match="changed the type"):
        x.sum().backward()
    assert x.grad.tolist() == [7.0, 7.0, 7.0] and x.grad.dtype is ndgrad.float32


def test_allowed_replacements():
    # same shape and dtype (any strides), broadcastable Function gradients, other real dtypes
    assert _leaf_hook(ndgrad, lambda lib, g: lib.ones(3, 2)[:, 0] * 5).tolist() == [5.0] * 3
    assert _function(ndgrad, lambda lib, g: (lib.ones(1, 3), g)).tolist() == [1.0] * 3
    r = _function(ndgrad, lambda lib, g: (g.double(), g))
    assert r.dtype is ndgrad.float32 and r.tolist() == [1.0] * 3
    r = _function(ndgrad, lambda lib, g: (g.long(), g))
    assert r.dtype is ndgrad.float32
    assert _post_acc(ndgrad, lambda lib, p: None).tolist() == [1.0] * 3


def test_complex_leaf_accepts_real_function_gradient():
    class F(ndgrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return ndgrad.ones(2)  # a real gradient for a complex input: cast, as PyTorch

    x = ndgrad.ones(2, dtype=ndgrad.complex64, requires_grad=True)
    F.apply(x).backward(ndgrad.ones(2, dtype=ndgrad.complex64))
    assert x.grad.dtype is ndgrad.complex64
