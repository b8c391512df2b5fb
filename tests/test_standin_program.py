"""A device-agnostic PyTorch training script (tests/programs/device_train.py: `.to(device)`,
DataLoader with pin_memory, Adam, a scheduler, clip_grad_norm_, a checkpoint loaded with
map_location) runs unchanged on the CPU and on the strict stand-in "cuda" device, with the same
printed losses; and, where PyTorch is installed, the same as under PyTorch."""
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.standin

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "programs", "device_train.py")
SRC = os.path.join(os.path.dirname(HERE), "src")


def _run(*cmd, standin=False):
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("NDGRAD_STANDIN_CUDA", None)
    if standin:
        env["NDGRAD_STANDIN_CUDA"] = "1"
    p = subprocess.run([sys.executable, *cmd, SCRIPT], capture_output=True, text=True, env=env,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout, p.stderr


@pytest.fixture(scope="module")
def on_cpu():
    return _run("-m", "ndgrad.run")


def test_runs_on_the_standin_device_as_on_cpu(on_cpu):
    out, err = _run("-m", "ndgrad.run", standin=True)
    assert "device: cuda" in err and "params on device: True" in err
    assert "device: cpu" in on_cpu[1] and "params on device: True" in on_cpu[1]
    assert out == on_cpu[0]
    assert "reloaded equal: True" in out and "epoch 2: loss" in out


def test_cpu_run_matches_pytorch(on_cpu):
    pytest.importorskip("torch")
    out, _ = _run()
    assert out == on_cpu[0]
