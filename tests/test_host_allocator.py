"""Note [Host allocator] (ndgrad/_backend.py): glibc's malloc thresholds, so that a training
step's megabyte-sized arrays reuse the heap's pages instead of faulting in new ones each step."""
import os
import subprocess
import sys

import pytest

# Twenty 2 MiB arrays made and dropped five times (a step's activations, 40 MiB, more than glibc's
# trim threshold after its own dynamic raise): minor page faults of the last four rounds.
_CHURN = """
import resource, sys
import numpy as np
import ndgrad._backend as b
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
def churn():
    xs = [np.ones(1 << 19, np.float32) for _ in range(20)]
    del xs
churn()
f0 = faults()
for _ in range(4):
    churn()
print(b.HOST_ALLOCATOR, faults() - f0)
"""


def _glibc():
    try:
        return bool(os.confstr("CS_GNU_LIBC_VERSION"))
    except (AttributeError, ValueError, OSError):
        return False


def _run(**env):
    e = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    e.pop("GLIBC_TUNABLES", None)
    e.update(env)
    out = subprocess.run([sys.executable, "-c", _CHURN], env=e, capture_output=True, text=True,
                         check=True).stdout.split()
    return out[0] == "True", int(out[1])


@pytest.mark.skipif(not _glibc(), reason="glibc's malloc only")
def test_arrays_reuse_the_heap_pages():
    pages = 4 * 20 * (2 << 20) // 4096   # the churn's pages, were each one faulted in afresh
    on, faults = _run()
    assert on
    assert faults < pages // 20, faults
    # the environment's own glibc settings stand (here: glibc's fixed start values)
    on, faults = _run(MALLOC_MMAP_THRESHOLD_="131072")
    assert not on
    assert faults > pages // 2, faults


@pytest.mark.skipif(not _glibc(), reason="glibc's malloc only")
def test_glibc_tunables_stand():
    on, _ = _run(GLIBC_TUNABLES="glibc.malloc.trim_threshold=131072")
    assert not on
