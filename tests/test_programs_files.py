"""More ordinary PyTorch programs, one file each in tests/programs/, run unchanged under torch and
under ndgrad by the harness of tests/test_programs.py: their final numbers (the dict `result`)
and, unless the file says `# stdout: differs (reason)`, everything they print must agree
(`# tolerance: rtol=.. atol=..` loosens the comparison of numbers for float32 programs)."""
import glob
import os
import re
import sys

import pytest

import ndgrad
from test_programs import _compare, _run, _to_py

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")
FILES = sorted(glob.glob(os.path.join(HERE, "*.py")))


def test_there_are_programs():
    assert len(FILES) >= 15


@pytest.mark.parametrize("path", FILES, ids=[os.path.basename(f)[:-3] for f in FILES])
def test_program_file_runs_unchanged(path):
    torch = pytest.importorskip("torch")
    src = open(path, encoding="utf-8").read()
    ref, ref_out = _run(src, torch)
    got, got_out = _run(src, ndgrad)
    assert sys.modules.get("torch") is torch
    if "# stdout: differs" not in src:
        assert got_out == ref_out
    tol = re.search(r"# tolerance: rtol=(\S+) atol=(\S+)", src)
    rtol, atol = (float(tol.group(1)), float(tol.group(2))) if tol else (1e-5, 1e-6)
    _compare(_to_py(ref), _to_py(got), rtol, atol)
