"""torch.amp boilerplate: GradScaler (real on CPU, self-disabling for CUDA without CUDA),
autocast, torch.compile and float32 matmul precision, compared with PyTorch."""
import warnings

import numpy as np
import pytest

import ndgrad


def _scaler_run(torch, steps=6):
    rng = np.random.default_rng(0)
    X = torch.tensor(rng.standard_normal((6, 8, 3)), dtype=torch.float32)
    model = torch.nn.Linear(3, 1)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[0.5, -0.25, 1.0]]))
        model.bias.zero_()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = torch.amp.GradScaler("cpu", init_scale=16.0, growth_interval=2)
    log = []
    for i in range(steps):
        loss = (model(X[i]) ** 2).mean()
        if i in (2, 3):
            loss = loss * float("inf")          # overflowing steps are skipped, scale backs off
        opt.zero_grad()
        scaled = scaler.scale(loss)
        log.append(float(scaled.detach()) if i not in (2, 3) else -1.0)
        scaled.backward()
        if i % 2:
            scaler.unscale_(opt)                # explicit unscale, e.g. before clipping
        scaler.step(opt)
        scaler.update()
        log.append((scaler.get_scale(), scaler.state_dict()["_growth_tracker"]))
    return log, model.weight.detach().numpy().copy(), scaler.state_dict()


def test_grad_scaler_matches_pytorch():
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = _scaler_run(torch)
        got = _scaler_run(ndgrad)
    flat = lambda log: [x for e in log for x in (e if isinstance(e, tuple) else (e,))]  # noqa
    assert flat(got[0]) == pytest.approx(flat(ref[0]), rel=1e-5)
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-6)
    assert got[2] == ref[2]


def test_grad_scaler_skips_inf_steps_and_backs_off():
    log, w, state = _scaler_run(ndgrad)
    scales = [e[0] for e in log if isinstance(e, tuple)]
    assert scales == [16.0, 32.0, 16.0, 8.0, 8.0, 16.0]
    assert state["scale"] == 16.0


def test_grad_scaler_errors_match_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (torch, ndgrad):
        w = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        s = lib.amp.GradScaler("cpu")
        s.scale((w * w).sum()).backward()
        s.unscale_(opt)
        with pytest.raises(RuntimeError, match=r"^unscale_\(\) has already been called on this "
                                               r"optimizer since the last update\(\)\.$"):
            s.unscale_(opt)
        s.step(opt)
        with pytest.raises(RuntimeError, match=r"^step\(\) has already been called since the "
                                               r"last update\(\)\.$"):
            s.step(opt)
        s.update()
        with pytest.raises(AssertionError, match="No inf checks were recorded prior to update."):
            s.update()
        with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable of Tensors"):
            s.scale(3.0)


def test_cuda_scaler_and_autocast_disable_themselves_without_cuda():
    with pytest.warns(UserWarning, match="GradScaler is enabled, but CUDA is not available"):
        s = ndgrad.amp.GradScaler()
    assert not s.is_enabled() and s.get_scale() == 1.0 and s.state_dict() == {}
    w = ndgrad.ones(2, requires_grad=True)
    opt = ndgrad.optim.SGD([w], lr=0.5)
    loss = (w * w).sum()
    assert s.scale(loss) is loss
    loss.backward()
    s.step(opt)
    s.update()
    assert w.tolist() == [0.0, 0.0]
    with pytest.warns(UserWarning, match="CUDA is not available or torch_xla is imported. "
                                         "Disabling autocast."):
        ctx = ndgrad.autocast(device_type="cuda", dtype=ndgrad.float16)
    with ctx:
        y = ndgrad.ones(2, 2) @ ndgrad.ones(2, 2)
    assert y.dtype == ndgrad.float32 and not ndgrad.is_autocast_enabled()
    with pytest.warns(FutureWarning, match=r"torch.cuda.amp.GradScaler\(args...\)` is deprecated"):
        with pytest.warns(UserWarning):
            ndgrad.cuda.amp.GradScaler()


def test_cpu_autocast_is_mixed_precision_in_bfloat16():
    # (op by op against PyTorch: tests/test_autocast.py)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with ndgrad.autocast("cpu"):
            y = ndgrad.ones(2, 2) @ ndgrad.ones(2, 2)
            assert ndgrad.is_autocast_enabled("cpu")
            with ndgrad.autocast("cpu", enabled=False):
                z = ndgrad.ones(2, 2) @ ndgrad.ones(2, 2)
    assert y.dtype == ndgrad.bfloat16 and z.dtype == ndgrad.float32
    assert not ndgrad.is_autocast_enabled("cpu")


def test_compile_returns_the_model_and_matmul_precision_is_accepted():
    m = ndgrad.nn.Linear(2, 2)
    assert ndgrad.compile(m) is m
    assert ndgrad.compile(mode="reduce-overhead")(len) is len
    with pytest.raises(AssertionError, match="A callable function is expected"):
        ndgrad.compile(3)
    assert ndgrad.get_float32_matmul_precision() == "highest"
    ndgrad.set_float32_matmul_precision("high")
    assert ndgrad.get_float32_matmul_precision() == "high"
    with pytest.warns(UserWarning, match="foo is not one of 'highest', 'high', or 'medium'"):
        ndgrad.set_float32_matmul_precision("foo")
    ndgrad.set_float32_matmul_precision("highest")


def test_ndgrad_op_warnings_are_silent_but_user_numpy_warnings_are_not():
    # a fresh interpreter: pytest's own warning capture would hide the import-time filter
    import os
    import subprocess
    import sys
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    code = ("import numpy as np, ndgrad\n"
            "assert ndgrad.log(ndgrad.zeros(1)).item() == float('-inf')\n"
            "x = ndgrad.zeros(2, requires_grad=True)\n"
            "(x.sqrt() * 0).sum().backward()\n"
            "w = ndgrad.ones(2, 2, requires_grad=True)\n"
            "((ndgrad.ones(2, 2) @ w) * float('inf')).sum().backward()\n"
            "np.log(np.zeros(1))\n")
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert "RuntimeWarning" in r.stderr and "divide by zero encountered in log" in r.stderr
    assert "ndgrad" not in r.stderr and r.stderr.count("RuntimeWarning") == 1, r.stderr
