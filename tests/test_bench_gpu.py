"""bench/gpu.py, the GPU check, runs in its CI-sized form on the strict stand-in device (the op
table's sample, the four workloads, the CPU-vs-device numerics), and exits cleanly where there
is no GPU."""
import importlib.util
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.standin

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _gpu(*args):
    env = dict(os.environ)
    env.pop("NDGRAD_STANDIN_CUDA", None)
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gpu.py"), *args],
                       capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout


def test_gpu_check_runs_on_the_standin_ci_sized():
    out = _gpu("--standin", "--quick")
    assert "device: the strict stand-in" in out
    table = next(ln for ln in out.splitlines() if ln.startswith("op table:"))
    assert " passed" in table and "failed" not in table and "error" not in table
    for name in ("GPT step ", "GPT step (autocast fp16 + GradScaler)", "CNN step ",
                 "generation "):
        line = next(ln for ln in out.splitlines() if ln.startswith(name))
        assert "skipped" not in line and "ms" in line
        if "autocast" not in name:   # (the stand-in computes as the CPU: the same numbers)
            assert line.endswith("rel 0.0e+00"), line


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="CuPy is installed")
def test_gpu_check_without_a_gpu_exits_cleanly():
    out = _gpu()
    assert "CuPy is not installed" in out and "nothing to check" in out
