"""Note [BLAS workers' spin] (ndgrad/ops/_blas.py): NumPy's OpenBLAS workers sleep a few tenths
of a millisecond after their last call instead of spinning for ~0.1 s, so that ndgrad's own
threads find the cores free; the user's own timeout stands."""
import os
import subprocess
import sys

import numpy as np
import pytest

from ndgrad.ops import _blas

# NumPy first (its OpenBLAS and its workers start before ndgrad is imported), then ndgrad; a
# threaded GEMM, then the process's CPU time over 50 ms of sleep: a spinning worker burns it.
_SPIN = """
import os, sys, threading, time
import numpy as np
if "--thread" in sys.argv:   # (another Python thread alive when ndgrad is imported)
    threading.Thread(target=time.sleep, args=(1,), daemon=True).start()
import ndgrad
from ndgrad.ops import _blas
a = np.arange(256 * 256, dtype=np.float32).reshape(256, 256) % 7
exact = a.astype(np.float64) @ a.astype(np.float64)
burnt = []
for _ in range(3):
    ok = (a @ a == exact).all()
    c0 = time.process_time()
    time.sleep(0.05)
    burnt.append(time.process_time() - c0)
timeout = _blas.openblas_function("openblas_thread_timeout")()
print(_blas.WORKER_TIMEOUT, timeout, ok, min(burnt), "OPENBLAS_THREAD_TIMEOUT" in os.environ)
"""


def _run(*args, **env):
    e = {k: v for k, v in os.environ.items() if not k.endswith("THREAD_TIMEOUT")}
    e.update(env)
    out = subprocess.run([sys.executable, "-c", _SPIN, *args], env=e, capture_output=True,
                         text=True, check=True).stdout.split()
    return (None if out[0] == "None" else int(out[0])), int(out[1]), out[2] == "True", \
        float(out[3]), out[4] == "True"


def _threads():
    f = _blas.openblas_function("scipy_openblas_get_num_threads64_",
                                "openblas_get_num_threads64_", "openblas_get_num_threads")
    return f() if f is not None else 1


needs_openblas = pytest.mark.skipif(
    not sys.platform.startswith("linux") or any(
        _blas.openblas_function(n) is None for n in ("openblas_read_env", "blas_thread_init",
                                                     "blas_thread_shutdown_",
                                                     "openblas_thread_timeout")),
    reason="NumPy's bundled OpenBLAS on Linux only")


@needs_openblas
def test_workers_sleep_soon_after_a_call():
    set_, timeout, ok, burnt, leaked = _run()
    assert (set_, timeout) == (_blas._TIMEOUT, _blas._TIMEOUT)
    assert ok                 # the restarted workers compute
    assert not leaked         # the environment as it was (child processes inherit nothing)
    if (os.cpu_count() or 1) >= 2 and _threads() >= 2:
        assert burnt < 0.015, burnt     # spinning, a worker burns ~0.05 s of the 0.05 s


@needs_openblas
def test_the_users_timeout_stands():
    set_, timeout, ok, burnt, leaked = _run(OPENBLAS_THREAD_TIMEOUT="30")
    assert (set_, timeout, ok) == (None, 30, True)
    if (os.cpu_count() or 1) >= 2 and _threads() >= 2:
        assert burnt > 0.03, burnt      # (the check above can fail: this one spins)


@needs_openblas
def test_left_alone_while_other_threads_run():
    set_, timeout, ok, _, _ = _run("--thread")
    assert (set_, ok) == (None, True) and timeout != _blas._TIMEOUT


@needs_openblas
@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX fork")
def test_a_forked_child_restarts_the_workers():
    a = np.ones((300, 300), np.float32)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:    # (OpenBLAS stops its workers before a fork and starts them on first use)
        try:
            os.write(w, b"1" if (a @ a == 300).all() else b"0")
        finally:
            os._exit(0)
    os.close(w)
    got = os.read(r, 1)
    os.waitpid(pid, 0)
    assert got == b"1" and (a @ a == 300).all()
