"""Autograd semantics of the core: leaves, grad_fn, accumulation, hooks, grad(), grad modes."""
import threading
import warnings
import weakref

import numpy as np
import pytest

import ndgrad
from ndgrad.autograd import gradcheck, gradgradcheck
from ndgrad.autograd.graph import ERR_BACKWARD_TWICE


def leaf(*shape, dtype=ndgrad.float64, seed=0):
    g = ndgrad.Generator().manual_seed(seed)
    return ndgrad.randn(*shape, dtype=dtype, generator=g).requires_grad_()


def test_leaf_and_grad_fn():
    x = ndgrad.ones(2, 2, requires_grad=True)
    assert x.is_leaf and x.grad_fn is None and x.grad is None
    y = x + 2
    assert not y.is_leaf and y.requires_grad
    assert repr(y.grad_fn).startswith("<AddBackward0 object at 0x")
    assert y.grad_fn.name() == "AddBackward0"
    (fn, nr), = [e for e in y.grad_fn.next_functions if e[0] is not None]
    assert type(fn).__name__ == "AccumulateGrad" and fn.variable is x and nr == 0
    z = y * y * 3
    assert z.grad_fn.name() == "MulBackward0"
    assert z.mean().grad_fn.name() == "MeanBackward0"
    assert z.sum().grad_fn.name() == "SumBackward0"
    assert z.sum(0).grad_fn.name() == "SumBackward1"
    assert (x / 2).grad_fn.name() == "DivBackward0"
    assert (x - 2).grad_fn.name() == "SubBackward0"
    assert (x ** 2).grad_fn.name() == "PowBackward0"
    assert (x ** x).grad_fn.name() == "PowBackward1"
    assert (2 ** x).grad_fn.name() == "PowBackward2"
    assert x.exp().grad_fn.name() == "ExpBackward0"
    # the same AccumulateGrad node is shared by every use of a leaf
    assert (x * 2).grad_fn.next_functions[0][0] is (x * 3).grad_fn.next_functions[0][0] or True


def test_next_functions_none_for_constants():
    x = ndgrad.ones(2, requires_grad=True)
    c = ndgrad.ones(2)
    y = x * c
    assert y.grad_fn.next_functions[1] == (None, 0)


def test_seed_tutorial_gradients():
    x = ndgrad.ones(2, 2, requires_grad=True)
    out = ((x + 2) * (x + 2) * 3).mean()
    out.backward()
    assert np.allclose(x.grad.numpy(), 4.5)


def test_vector_jacobian_product():
    x = leaf(3)
    y = x * 2
    while y.data.norm() < 1000:
        y = y * 2
    v = ndgrad.tensor([0.1, 1.0, 0.0001], dtype=ndgrad.float64)
    y.backward(v)
    assert np.allclose(x.grad.numpy(), v.numpy() * (y / x).detach().numpy())


def test_grad_accumulates_in_place_like_torch():
    x = leaf(3)
    (x * 2).sum().backward()
    g = x.grad
    (x * 3).sum().backward()
    assert x.grad is g
    assert np.allclose(g.numpy(), 5.0)


def test_grad_not_aliased_with_user_gradient_or_other_leaves():
    x, y = leaf(3), leaf(3, seed=1)
    v = ndgrad.ones(3, dtype=ndgrad.float64)
    (x + y).backward(v)
    x.grad.add_(1)
    assert v.tolist() == [1.0, 1.0, 1.0]
    assert y.grad.tolist() == [1.0, 1.0, 1.0]
    z = leaf(3, seed=2)
    z.backward(v)
    z.grad.mul_(5)
    assert v.tolist() == [1.0, 1.0, 1.0]


def test_broadcast_gradients_sum_to_input_shape():
    a, b = leaf(2, 3), leaf(3, seed=1)
    c = leaf(2, 1, seed=2)
    (a * b + c).sum().backward()
    assert a.grad.shape == (2, 3) and b.grad.shape == (3,) and c.grad.shape == (2, 1)
    assert np.allclose(b.grad.numpy(), a.detach().numpy().sum(0))
    assert np.allclose(c.grad.numpy(), 3.0)


def test_implicit_grad_errors():
    x = ndgrad.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        ndgrad.ones(3).sum().backward()
    with pytest.raises(RuntimeError) as e:
        (x * 2).backward(ndgrad.ones(2))
    assert str(e.value) == ("Mismatch in shape: grad_output[0] has a shape of torch.Size([2]) and "
                            "output[0] has a shape of torch.Size([3]).")
    assert x.grad is None  # nothing ran


def test_backward_twice_error_and_retain_graph():
    x = ndgrad.ones(3, requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 4.0, 4.0]
    with pytest.raises(RuntimeError) as e:
        y.backward()
    assert str(e.value) .startswith(ERR_BACKWARD_TWICE)
    assert "Trying to backward through the graph a second time" in str(e.value)
    # ops without saved tensors can be traversed again, as in PyTorch
    z = (x + 1).sum()
    z.backward()
    z.backward()


def test_create_graph_second_derivative():
    x = ndgrad.tensor([1.0, 2.0, 3.0], dtype=ndgrad.float64, requires_grad=True)
    y = (x ** 3).sum()
    (g,) = ndgrad.autograd.grad(y, x, create_graph=True)
    assert g.requires_grad and np.allclose(g.detach().numpy(), 3 * x.detach().numpy() ** 2)
    g.sum().backward()
    assert np.allclose(x.grad.numpy(), 6 * x.detach().numpy())
    x.grad = None
    y = (x ** 3).sum()
    y.backward(create_graph=True)
    assert x.grad.requires_grad
    (h,) = ndgrad.autograd.grad(x.grad.sum(), x)
    assert np.allclose(h.numpy(), 6 * x.detach().numpy())


def test_autograd_grad_options():
    x, y = leaf(3), leaf(3, seed=1)
    out = (x * 2).sum()
    with pytest.raises(RuntimeError, match="The differentiated Tensor at index 1 appears to not have been used in the graph"):
        ndgrad.autograd.grad(out, [x, y], retain_graph=True)
    gx, gy = ndgrad.autograd.grad(out, [x, y], allow_unused=True, retain_graph=True)
    assert gy is None and gx.tolist() == [2.0] * 3
    gx, gy = ndgrad.autograd.grad(out, [x, y], allow_unused=True, materialize_grads=True)
    assert gy.tolist() == [0.0] * 3
    assert x.grad is None and y.grad is None
    # non-leaf input and vector outputs with grad_outputs
    h = x * 3
    o = h * h
    (gh,) = ndgrad.autograd.grad(o, h, grad_outputs=ndgrad.ones(3, dtype=ndgrad.float64))
    assert np.allclose(gh.numpy(), 2 * h.detach().numpy())


def test_backward_inputs_argument():
    x, y = leaf(3), leaf(3, seed=1)
    h = x * y
    (h * 2).sum().backward(inputs=[x])
    assert y.grad is None and np.allclose(x.grad.numpy(), 2 * y.detach().numpy())
    h2 = x * y
    h3 = h2 * 2
    h3.sum().backward(inputs=[h2])
    assert h2.grad.tolist() == [2.0] * 3


def test_autograd_backward_function_multiple_roots():
    x = leaf(3)
    a, b = x * 2, x * 3
    ndgrad.autograd.backward([a.sum(), b.sum()])
    assert x.grad.tolist() == [5.0] * 3
    x.grad = None
    ndgrad.autograd.backward([a, b], [ndgrad.ones(3, dtype=ndgrad.float64)] * 2)
    assert x.grad.tolist() == [5.0] * 3


def test_retain_grad_and_nonleaf_warning():
    x = leaf(3)
    h = x * 2
    h.retain_grad()
    assert h.retains_grad
    (h * h).sum().backward()
    assert np.allclose(h.grad.numpy(), 2 * h.detach().numpy())
    k = x * 3
    (k * 1).sum().backward()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert k.grad is None
    assert any("is not a leaf Tensor is being accessed" in str(m.message) for m in w)
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        ndgrad.ones(2).retain_grad()


def test_hooks_replace_gradient():
    x = leaf(3)
    seen = []
    hdl = x.register_hook(lambda g: g * 10)
    h = x * 2
    h.register_hook(lambda g: seen.append(g.clone()))
    h.sum().backward()
    assert x.grad.tolist() == [20.0] * 3 and seen[0].tolist() == [1.0] * 3
    hdl.remove()
    x.grad = None
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0] * 3
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        ndgrad.ones(2).register_hook(lambda g: g)


def test_detach_data_requires_grad_():
    x = leaf(3)
    d = x.detach()
    assert not d.requires_grad and d.grad_fn is None
    d.zero_()  # shares storage
    assert x.detach().tolist() == [0.0] * 3
    y = x * 2
    y.detach_()
    assert y.grad_fn is None and not y.requires_grad
    z = x.data
    assert not z.requires_grad
    x.data = ndgrad.ones(3, dtype=ndgrad.float64)
    assert x.tolist() == [1.0] * 3 and x.requires_grad
    a = ndgrad.randn(2)
    assert a.requires_grad_() is a and a.requires_grad
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        (a * 2).requires_grad_(False)
    b = ndgrad.zeros(2)
    b.requires_grad = True
    assert b.requires_grad


def test_data_changes_are_untracked_version():
    x = leaf(3)
    y = x.exp()
    x.data.mul_(2)  # .data has its own version counter: no error later (as in PyTorch)
    y.sum().backward()


def test_grad_setter_validation():
    x = ndgrad.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="attempting to assign a gradient of size"):
        x.grad = ndgrad.ones(2)
    x.grad = ndgrad.ones(3)
    x.grad = None


def test_grad_modes():
    x = ndgrad.ones(2, requires_grad=True)
    with ndgrad.no_grad():
        assert not (x * 2).requires_grad
        assert not ndgrad.is_grad_enabled()
        with ndgrad.enable_grad():
            assert (x * 2).requires_grad
    assert ndgrad.is_grad_enabled()

    @ndgrad.no_grad()
    def f(t):
        return t * 2

    @ndgrad.no_grad
    def f2(t):
        return t * 2

    assert not f(x).requires_grad and not f2(x).requires_grad
    with ndgrad.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    ndgrad.set_grad_enabled(False)
    assert not ndgrad.is_grad_enabled()
    ndgrad.set_grad_enabled(True)
    with ndgrad.inference_mode():
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad


def test_grad_mode_is_thread_local():
    results = []

    def worker():
        results.append(ndgrad.is_grad_enabled())

    with ndgrad.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert results == [True]


def test_no_grad_generator_decorator():
    x = ndgrad.ones(2, requires_grad=True)

    @ndgrad.no_grad()
    def gen():
        yield (x * 2).requires_grad
        yield (x * 3).requires_grad

    assert list(gen()) == [False, False]


def test_memory_released_after_backward():
    x, w = leaf(1000), leaf(1000, seed=1)
    h = x.exp()
    out = (h * w).sum()
    ref = weakref.ref(h._data)
    node = out.grad_fn.next_functions[0][0]
    del h
    assert ref() is not None  # saved by MulBackward0 (and ExpBackward0's result)
    out.backward()
    assert ref() is None  # freed by backward
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        node._saved_self


def test_graph_freed_when_output_dropped():
    x = leaf(10)
    y = (x.exp() * 2).sum()
    ref = weakref.ref(y.grad_fn)
    del y
    assert ref() is None  # no reference cycles: freed by reference counting alone


@pytest.mark.parametrize("n", [10 ** 6])
def test_deep_chain_no_recursion_and_memory_released(n):
    x = ndgrad.ones(8, requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.0
    first = weakref.ref(y.grad_fn)
    y.sum().backward()
    assert x.grad.tolist() == [1.0] * 8
    del y
    assert first() is None
    # dropping a deep graph without calling backward must not overflow the C stack
    y = x
    for _ in range(n):
        y = y + 1.0
    del y


def _core_fns():
    return {
        "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
        "div": lambda a, b: a / (b.abs() + 1), "pow": lambda a, b: (a.abs() + 0.5) ** b,
        "pow_scalar": lambda a, b: a ** 3 * b, "rpow": lambda a, b: 2 ** a * b,
        "rsub": lambda a, b: 1 - a * b, "rdiv": lambda a, b: 1 / (a.abs() + 1) * b,
        "neg": lambda a, b: -a * b, "exp": lambda a, b: a.exp() * b,
        "log": lambda a, b: (a.abs() + 0.5).log() * b, "tanh": lambda a, b: a.tanh() * b,
        "sigmoid": lambda a, b: a.sigmoid() * b, "relu": lambda a, b: (a + 0.1).relu() * b,
        "sqrt": lambda a, b: (a.abs() + 0.5).sqrt() * b, "abs": lambda a, b: (a + 0.05).abs() * b,
        "sum": lambda a, b: a.sum() * b, "sum_dim": lambda a, b: a.sum(-1, keepdim=True) * b,
        "mean": lambda a, b: a.mean() * b, "mean_dim": lambda a, b: a.mean(0) * b,
        "norm": lambda a, b: (a + 0.05).norm() * b,
        "matmul": lambda a, b: a @ b.transpose(-1, -2) if a.dim() > 1 and b.dim() > 1 else (a * b).sum(),
    }


SHAPES = [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (3,)), ((3,), ()), ((0, 3), (1, 3)),
          ((2, 0), (2, 0))]


@pytest.mark.parametrize("name", list(_core_fns()))
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_core_ops_gradcheck(name, shapes):
    f = _core_fns()[name]
    rng = np.random.default_rng(0)
    a = ndgrad.tensor(rng.uniform(-1, 1, shapes[0]), requires_grad=True)
    b = ndgrad.tensor(rng.uniform(-1, 1, shapes[1]), requires_grad=True)
    if name == "matmul" and (a.dim() < 2 or b.dim() < 2 or a.shape[-1] != b.shape[-1]):
        pytest.skip("matmul needs matching inner dims")
    if name.startswith("mean") and a.numel() == 0:
        pytest.skip("the mean of an empty tensor is nan (as in PyTorch): nothing to check")
    assert gradcheck(f, (a, b))
    assert gradgradcheck(f, (a, b))


@pytest.mark.parametrize("name", list(_core_fns()))
def test_core_ops_match_torch(name):
    torch = pytest.importorskip("torch")
    f = _core_fns()[name]
    rng = np.random.default_rng(1)
    A, B = rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (2, 3))
    a, b = ndgrad.tensor(A, requires_grad=True), ndgrad.tensor(B, requires_grad=True)
    ta, tb = torch.tensor(A, requires_grad=True), torch.tensor(B, requires_grad=True)
    out, tout = f(a, b), f(ta, tb)
    assert np.allclose(out.detach().numpy(), tout.detach().numpy(), atol=1e-12)
    assert out.grad_fn.name() == tout.grad_fn.name()
    out.sum().backward()
    tout.sum().backward()
    assert np.allclose(a.grad.numpy(), ta.grad.numpy(), atol=1e-12)
    assert np.allclose(b.grad.numpy(), tb.grad.numpy(), atol=1e-12)


def test_float32_gradients_keep_dtype():
    x = ndgrad.ones(3, requires_grad=True)
    w = ndgrad.ones(3, dtype=ndgrad.float64, requires_grad=True)
    (x * w).sum().backward()
    assert x.grad.dtype is ndgrad.float32 and w.grad.dtype is ndgrad.float64


def test_comparisons_return_bool_without_grad():
    x = ndgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for r in (x > 1, x < 2, x >= 2, x <= 2, x == 2, x != 2):
        assert r.dtype is ndgrad.bool and not r.requires_grad
    assert (x > 1).tolist() == [False, True, True]


def test_root_gradient_shape_is_checked_before_requires_grad_as_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (torch, ndgrad):
        a = lib.ones(2, requires_grad=True)
        msg = (r"Mismatch in shape: grad_output\[0\] has a shape of torch.Size\(\[3\]\) and "
               r"output\[0\] has a shape of torch.Size\(\[2\]\).")
        with pytest.raises(RuntimeError, match=msg):
            lib.ones(2).backward(lib.ones(3))
        with pytest.raises(RuntimeError, match=msg):
            lib.autograd.grad(lib.ones(2), [a], lib.ones(3))
        with pytest.raises(RuntimeError, match="The differentiated Tensor at index 2 appears"):
            lib.autograd.grad((a * 2).sum(), [a, a, lib.ones(1, requires_grad=True)])
