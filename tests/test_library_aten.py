"""torch.ops.aten (ATen's operators by name, running ndgrad's functions) and the rest of
torch.library (register_autocast, get_kernel, triton_op, wrap_triton), against PyTorch."""
import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")


def _both(fn):
    return fn(torch), fn(ndgrad)


@pytest.mark.parametrize("expr", [
    "str(T.ops.aten.add)", "str(T.ops.aten.add.Tensor)", "repr(T.ops.aten.add)",
    "repr(T.ops.aten.add.Tensor)", "T.ops.aten.add.Tensor.name()", "T.ops.aten.mm.default.name()",
    "T.ops.aten.add.Tensor.__name__", "T.ops.aten.add.__name__",
    "T.ops.aten.add.Tensor is T.ops.aten.add.Tensor", "str(T.ops.aten.add.Tensor.overloadpacket)",
])
def test_aten_names(expr):
    theirs, ours = _both(lambda T: eval(expr))
    assert ours == theirs


@pytest.mark.parametrize("call", [
    lambda T: T.ops.aten.add.Tensor(T.ones(2, 3), T.arange(3.0)),
    lambda T: T.ops.aten.mm.default(T.ones(2, 3), T.ones(3, 4)),
    lambda T: T.ops.aten.native_layer_norm.default(T.arange(6.0).reshape(2, 3), [3], None, None,
                                                   1e-5)[0],
    lambda T: T.ops.aten.linalg_det.default(T.eye(3) * 2),
    lambda T: T.ops.aten.add_.Tensor(T.ones(2), T.ones(2)),
    lambda T: T.ops.aten.relu(T.arange(-2.0, 2.0)),
])
def test_aten_calls(call):
    theirs, ours = _both(call)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())


def test_aten_unknown_operator():
    for T in (torch, ndgrad):
        with pytest.raises(AttributeError, match="'_OpNamespace' 'aten' object has no attribute "
                                                 "'no_such_op'"):
            T.ops.aten.no_such_op


def test_get_kernel():
    for T in (torch, ndgrad):
        k = T.library.get_kernel("aten::add.Tensor", "CPU")
        keys = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU) if T is torch else None
        assert k.call_boxed(keys, T.ones(2), T.ones(2)).tolist() == [2.0, 2.0]
        with pytest.raises(RuntimeError, match="operator aten::nope.x does not exist"):
            T.library.get_kernel("aten::nope.x", "CPU")


def test_register_autocast_and_triton_op():
    got = []
    for T in (torch, ndgrad):
        ns = "ndgradtest" + ("t" if T is torch else "n")

        @T.library.custom_op(f"{ns}::twice", mutates_args=())
        def twice(x: T.Tensor) -> T.Tensor:
            return x * 2
        T.library.register_autocast(f"{ns}::twice", "cpu", T.float16)
        with T.autocast("cpu", dtype=T.bfloat16):
            inside = twice(T.ones(2))
        outside = twice(T.ones(2))

        @T.library.triton_op(f"{ns}::thrice", mutates_args=())
        def thrice(x: T.Tensor) -> T.Tensor:
            return x * 3
        got.append((str(inside.dtype), str(outside.dtype), thrice(T.ones(1)).tolist(),
                    getattr(T.ops, ns).thrice(T.ones(1)).tolist()))
        with pytest.raises((RuntimeError, ModuleNotFoundError)):
            T.library.wrap_triton(lambda x: x)
    assert got[1] == got[0]


def test_sac_ignored_ops_are_aten_overloads():
    from ndgrad.utils import checkpoint
    theirs = {str(o) for o in torch.utils.checkpoint.SAC_IGNORED_OPS}
    ours = {str(o) for o in checkpoint.SAC_IGNORED_OPS}
    # (PyTorch's also names prim.device and two layout queries ndgrad has no operator for)
    assert ours <= theirs and len(theirs - ours) <= 3
    assert ndgrad.ops.aten.detach.default in checkpoint.SAC_IGNORED_OPS


class _Source:
    def __init__(self, builtin, module):
        self.b, self.m = builtin, module

    def is_unspecialized_builtin_nn_module(self):
        return self.b

    def is_unspecialized_nn_module(self):
        return self.m


class _Guard:
    def __init__(self, guard_type, is_global, value, builtin=False, module=False):
        self.guard_type, self.is_global, self.value = guard_type, is_global, value
        self.orig_guard = type("G", (), {"source": _Source(builtin, module)})()


@pytest.mark.parametrize("name", ["keep_portable_guards_unsafe",
                                  "skip_guard_on_inbuilt_nn_modules_unsafe",
                                  "skip_guard_on_all_nn_modules_unsafe", "keep_tensor_guards_unsafe",
                                  "skip_guard_on_globals_unsafe", "skip_all_guards_unsafe"])
def test_compiler_guard_filters(name):
    def entries(T):
        return [_Guard("TENSOR_MATCH", False, T.ones(1)),
                _Guard("TENSOR_MATCH", True, T.nn.Parameter(T.ones(1)), builtin=True),
                _Guard("GLOBAL_STATE", True, None, module=True),
                _Guard("SHAPE_ENV", False, None, builtin=True, module=True),
                _Guard("ID_MATCH", False, None)]
    theirs = getattr(torch.compiler, name)(entries(torch))
    assert getattr(ndgrad.compiler, name)(entries(ndgrad)) == theirs
    if name == "keep_tensor_guards_unsafe":
        assert ndgrad.compiler.keep_tensor_guards_unsafe(entries(ndgrad), True) == \
            torch.compiler.keep_tensor_guards_unsafe(entries(torch), True)


_BACKWARDS = [
    ("sigmoid_backward", lambda A, G, X: A.sigmoid_backward(G, X.sigmoid())),
    ("tanh_backward", lambda A, G, X: A.tanh_backward(G, X.tanh())),
    ("gelu_backward", lambda A, G, X: A.gelu_backward(G, X)),
    ("gelu_backward_tanh", lambda A, G, X: A.gelu_backward(G, X, approximate="tanh")),
    ("hardtanh_backward", lambda A, G, X: A.hardtanh_backward(G, X, -0.5, 0.5)),
    ("leaky_relu_backward", lambda A, G, X: A.leaky_relu_backward(G, X, 0.1, False)),
    ("softshrink_backward", lambda A, G, X: A.softshrink_backward(G, X, 0.3)),
    ("hardshrink_backward", lambda A, G, X: A.hardshrink_backward(G, X, 0.3)),
    ("threshold_backward", lambda A, G, X: A.threshold_backward(G, X, 0.1)),
    ("diagonal_backward", lambda A, G, X: A.diagonal_backward(G[0, :4], [4, 5], 0, 0, 1)),
]


@pytest.mark.parametrize("name,call", _BACKWARDS, ids=[n for n, _ in _BACKWARDS])
def test_aten_activation_backwards_match_torch(name, call):
    """torch.ops.aten's backward kernels of the activations (as decompositions and custom
    Functions call them), with ATen's signatures; not torch-level names."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    g = rng.standard_normal((4, 5)).astype(np.float32)
    theirs = call(torch.ops.aten, torch.from_numpy(g), torch.from_numpy(x)).numpy()
    ours = call(ndgrad.ops.aten, ndgrad.from_numpy(g), ndgrad.from_numpy(x)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7)
    assert not hasattr(ndgrad, name.replace("_tanh", ""))
