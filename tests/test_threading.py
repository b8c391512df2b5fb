"""Threads (issue 15): autograd state is per thread where PyTorch's is, and backward() from
several threads into shared leaves accumulates every contribution exactly."""
import threading

import numpy as np
import pytest

import ndgrad


def _in_thread(fn):
    out, err = [], []

    def target():
        try:
            out.append(fn())
        except BaseException as e:  # noqa: BLE001 (re-raised in the caller)
            err.append(e)
    t = threading.Thread(target=target)
    t.start()
    t.join()
    if err:
        raise err[0]
    return out[0]


def _run_threads(n, fn):
    barrier = threading.Barrier(n)
    errors = []

    def target(k):
        try:
            barrier.wait()
            fn(k)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
    threads = [threading.Thread(target=target, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def test_stress_8_threads_x_50_backward_into_shared_parameters():
    n_threads, n_passes, n = 8, 50, 100000
    w = ndgrad.zeros(n, dtype=ndgrad.float64, requires_grad=True)
    b = ndgrad.zeros((), dtype=ndgrad.float64, requires_grad=True)
    xs = [ndgrad.full((n,), float(k + 1), dtype=ndgrad.float64) for k in range(n_threads)]

    def work(k):
        for i in range(n_passes):
            loss = (w * xs[k]).sum() + b * float(i)
            loss.backward()

    _run_threads(n_threads, work)
    # every pass of thread k adds k + 1 to each element of w.grad and i to b.grad: integers,
    # so the float64 sums are exact in any order
    expected_w = n_passes * sum(k + 1 for k in range(n_threads))
    assert np.array_equal(w.grad.numpy(), np.full(n, float(expected_w)))
    assert b.grad.item() == n_threads * sum(range(n_passes))


def test_concurrent_backward_through_a_model():
    ndgrad.manual_seed(0)
    model = ndgrad.nn.Linear(64, 64).double()
    x = ndgrad.ones(4, 64, dtype=ndgrad.float64)

    def work(k):
        for _ in range(50):
            model(x).sum().backward()

    _run_threads(8, work)
    # d/dW of sum(x W^T + b) with x all ones: 4 per element and pass; d/db: 4
    assert np.array_equal(model.weight.grad.numpy(), np.full((64, 64), 4.0 * 400))
    assert np.array_equal(model.bias.grad.numpy(), np.full(64, 4.0 * 400))


def test_concurrent_backward_of_one_graph_with_retain_grad():
    x = ndgrad.ones(100, dtype=ndgrad.float64, requires_grad=True)
    y = x * 3
    y.retain_grad()

    def work(k):
        for _ in range(20):
            (y * y).sum().backward(retain_graph=True)

    _run_threads(4, work)
    assert np.array_equal(y.grad.numpy(), np.full(100, 6.0 * 80))
    assert np.array_equal(x.grad.numpy(), np.full(100, 18.0 * 80))


def test_grad_mode_is_per_thread():
    with ndgrad.no_grad():
        assert _in_thread(ndgrad.is_grad_enabled) is True
        x = ndgrad.ones(2, requires_grad=True)
        assert _in_thread(lambda: (x * 2).requires_grad) is True
        assert (x * 2).requires_grad is False
    with ndgrad.inference_mode():
        assert _in_thread(ndgrad.is_inference_mode_enabled) is False
    ndgrad.set_grad_enabled(False)
    try:
        assert _in_thread(ndgrad.is_grad_enabled) is True
    finally:
        ndgrad.set_grad_enabled(True)

    def thread_turns_grad_off():
        ndgrad.set_grad_enabled(False)
        return ndgrad.is_grad_enabled()
    assert _in_thread(thread_turns_grad_off) is False
    assert ndgrad.is_grad_enabled() is True


def test_saved_tensors_hooks_are_per_thread():
    packed = []

    def pack(t):
        packed.append(threading.get_ident())
        return t

    def build():
        x = ndgrad.ones(3, requires_grad=True)
        y = x.exp()
        y.sum().backward()
        return x.grad.tolist()

    with ndgrad.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        assert np.allclose(_in_thread(build), np.e)
        assert packed == []                      # the other thread's graph saw no hooks
        build()
        assert packed and set(packed) == {threading.get_ident()}

    def inside_other_thread():
        with ndgrad.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            ndgrad.ones(2, requires_grad=True).exp()
        return len(packed)
    n = len(packed)
    assert _in_thread(inside_other_thread) == n + 1
    ndgrad.ones(2, requires_grad=True).exp()
    assert len(packed) == n + 1


def test_disable_saved_tensors_hooks_is_per_thread():
    def enter():
        with ndgrad.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            return "ok"
    with ndgrad.autograd.graph.disable_saved_tensors_hooks("disabled here"):
        assert _in_thread(enter) == "ok"
        with pytest.raises(RuntimeError, match="disabled here"):
            enter()


def _shared_state_probe(lib):
    """What a new thread sees of the state the main thread set (PyTorch: grad mode, inference
    mode and saved-tensor hooks are per thread; anomaly mode and forward-AD levels are global)."""
    seen = {}
    with lib.no_grad():
        seen["grad"] = _in_thread(lib.is_grad_enabled)
    with lib.inference_mode():
        seen["inference"] = _in_thread(lib.is_inference_mode_enabled)
    lib.autograd.set_detect_anomaly(True)
    try:
        seen["anomaly"] = _in_thread(lib.is_anomaly_enabled)
    finally:
        lib.autograd.set_detect_anomaly(False)
    fwad = lib.autograd.forward_ad
    with fwad.dual_level():
        def dual():
            d = fwad.make_dual(lib.ones(2), lib.full((2,), 3.0))
            return fwad.unpack_dual(d * 2).tangent.tolist()
        seen["forward_ad"] = _in_thread(dual)

    def no_level():
        try:
            fwad.make_dual(lib.ones(2), lib.ones(2))
        except RuntimeError as e:
            return str(e)
    seen["forward_ad_none"] = _in_thread(no_level)
    return seen


def test_thread_state_without_torch():
    seen = _shared_state_probe(ndgrad)
    assert seen["grad"] is True and seen["inference"] is False
    assert seen["anomaly"] is True and seen["forward_ad"] == [6.0, 6.0]
    assert seen["forward_ad_none"].startswith("Trying to create a dual Tensor")


def test_thread_state_matches_torch():
    torch = pytest.importorskip("torch")
    assert _shared_state_probe(ndgrad) == _shared_state_probe(torch)
