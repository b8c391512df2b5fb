"""Node hooks, prehooks, name/metadata, post-accumulate-grad hooks and saved-tensor hooks,
against PyTorch's behaviour."""
import numpy as np
import pytest

import ndgrad


def _run_node_hooks(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    log = []

    def hook(grad_inputs, grad_outputs):
        log.append(("post", [g.tolist() for g in grad_inputs], [g.tolist() for g in
                                                                  grad_outputs]))
        return (grad_inputs[0] * 10, grad_inputs[1])

    def prehook(grad_outputs):
        log.append(("pre", [g.tolist() for g in grad_outputs]))
        return (grad_outputs[0] + 1,)

    h1 = y.grad_fn.register_hook(hook)
    h2 = y.grad_fn.register_prehook(prehook)
    y.sum().backward(retain_graph=True)
    first = x.grad.tolist()
    h1.remove()
    h2.remove()
    x.grad = None
    y.sum().backward()
    return log, first, x.grad.tolist(), y.grad_fn.name()


def test_node_hooks_match_torch():
    torch = pytest.importorskip("torch")
    assert _run_node_hooks(ndgrad) == _run_node_hooks(torch)


def test_node_hooks_without_torch():
    log, first, second, name = _run_node_hooks(ndgrad)
    assert name == "MulBackward0"
    assert log[0] == ("pre", [[1.0, 1.0]])
    assert log[1] == ("post", [[2.0, 4.0], [2.0, 4.0]], [[2.0, 2.0]])
    assert first == [(1 + 1) * 1 * 10 + 2 * 1, (1 + 1) * 2 * 10 + 2 * 2] and second == [2.0, 4.0]


def test_hook_returning_wrong_number_of_values():
    torch = pytest.importorskip("torch")
    msgs = []
    for lib in (ndgrad, torch):
        x = lib.ones(2, requires_grad=True)
        y = x * x

        def hook(grad_inputs, grad_outputs):
            return (grad_inputs[0],)
        y.grad_fn.register_hook(hook)
        with pytest.raises(RuntimeError) as e:
            y.sum().backward()
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_metadata_is_a_persistent_dict():
    x = ndgrad.ones(2, requires_grad=True)
    y = x.exp()
    assert y.grad_fn.metadata == {}
    y.grad_fn.metadata["tag"] = 7
    assert y.grad_fn.metadata["tag"] == 7


def _post_acc(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    h = x.register_post_accumulate_grad_hook(lambda t: seen.append((t is x, t.grad.tolist())))
    (x * 3).sum().backward()
    (x * 3).sum().backward()
    h.remove()
    (x * 3).sum().backward()
    errors = []
    for bad in (lambda: (x * 2).register_post_accumulate_grad_hook(lambda t: None),
                lambda: lib.ones(2).register_post_accumulate_grad_hook(lambda t: None)):
        with pytest.raises(RuntimeError) as e:
            bad()
        errors.append(str(e.value))
    return seen, x.grad.tolist(), errors


def test_post_accumulate_grad_hook_matches_torch():
    torch = pytest.importorskip("torch")
    assert _post_acc(ndgrad) == _post_acc(torch)


def test_post_accumulate_grad_hook_without_torch():
    seen, final, _ = _post_acc(ndgrad)
    assert seen == [(True, [3.0, 3.0]), (True, [6.0, 6.0])]
    assert final == [9.0, 9.0]


def _saved_hooks(lib):
    packed, unpacked = [], []

    def pack(t):
        packed.append(tuple(t.shape))
        return ("box", t)

    def unpack(p):
        unpacked.append(p[0])
        return p[1]

    x = lib.tensor([0.5, 1.5], requires_grad=True)
    y = lib.tensor([2.0, 3.0], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        z = (x * y).exp().sum()
    w = (x * y).sum()  # outside: no hooks
    z.backward()
    w.backward()
    return len(packed), len(unpacked), x.grad.tolist(), y.grad.tolist()


def test_saved_tensors_hooks_match_torch():
    torch = pytest.importorskip("torch")
    ours, theirs = _saved_hooks(ndgrad), _saved_hooks(torch)
    assert ours[:2] == theirs[:2] == (3, 3)  # mul saves x and y, exp its result
    np.testing.assert_allclose(ours[2:], theirs[2:], rtol=1e-6)


def test_saved_tensors_hooks_can_store_elsewhere():
    store = {}

    def pack(t):
        key = len(store)
        store[key] = t.detach().numpy().copy()
        return key

    def unpack(key):
        return ndgrad.tensor(store[key])

    x = ndgrad.tensor([0.5, 1.5], requires_grad=True)
    with ndgrad.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = ndgrad.tanh(x) * x
    y.sum().backward()
    t = np.tanh([0.5, 1.5])
    np.testing.assert_allclose(x.grad.numpy(), (1 - t ** 2) * [0.5, 1.5] + t)
    assert len(store) == 3


def test_save_on_cpu_and_double_backward():
    x = ndgrad.tensor([0.5, 1.5], requires_grad=True)
    with ndgrad.autograd.graph.save_on_cpu():
        y = (x.exp() * x).sum()
    (g,) = ndgrad.autograd.grad(y, x, create_graph=True)
    (gg,) = ndgrad.autograd.grad(g.sum(), x)
    e = np.exp([0.5, 1.5])
    np.testing.assert_allclose(g.detach().numpy(), e * (1 + np.array([0.5, 1.5])))
    np.testing.assert_allclose(gg.numpy(), e * (2 + np.array([0.5, 1.5])))


def test_no_hooks_means_plain_saved_tensors():
    from ndgrad.autograd import graph
    assert graph._saved_hooks == 0 and graph._thread_hooks.saved == []
    x = ndgrad.ones(2, requires_grad=True)
    y = x * x
    assert y.grad_fn._saved_self is x


def test_disable_saved_tensors_hooks():
    from ndgrad.autograd.graph import saved_tensors_hooks, disable_saved_tensors_hooks
    with disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        pass


def test_saved_tensors_hooks_skip_the_version_check_like_torch():
    torch = pytest.importorskip("torch")
    grads = []
    for lib in (ndgrad, torch):
        x = lib.ones(2, requires_grad=True)
        y = x * 1
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            z = y * y
        y.add_(1)  # without hooks this is the "modified by an inplace operation" error
        z.sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1] == [4.0, 4.0]


def test_pack_hook_runs_with_grad_mode_off_and_may_call_numpy():
    # as PyTorch: pack hooks run under no_grad, where numpy() of a tensor requiring grad is allowed
    seen = []

    def pack(t):
        seen.append(ndgrad.is_grad_enabled())
        return t.numpy().copy()

    w = ndgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with ndgrad.autograd.graph.saved_tensors_hooks(pack, ndgrad.from_numpy):
        loss = (w * w).sum()
    assert seen == [False, False] and ndgrad.is_grad_enabled()
    loss.backward()
    assert w.grad.tolist() == [2.0, 4.0, 6.0]


def test_numpy_of_tensor_requiring_grad_allowed_only_under_no_grad():
    w = ndgrad.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        w.numpy()
    with ndgrad.no_grad():
        assert w.numpy().tolist() == [1.0, 1.0]
