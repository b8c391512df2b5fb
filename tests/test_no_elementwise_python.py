"""No element-by-element Python in op code (issue 34).

Two checks:
- a lint: no module of the package uses NumPy's (or CuPy's) per-element Python machinery
  (`frompyfunc`, `vectorize`, `nditer`, `apply_along_axis`, `apply_over_axes`, `piecewise`);
- a measurement: every sample of the op tables (tests/op_db*.py) runs once as given and once
  stacked 64 times along a new leading axis, under a profiler that counts Python-level calls
  (functions and C functions called from Python code). An op whose Python work grows with the
  number of elements (a loop over the values, a Python function mapped over them) makes 64
  times as many calls on the stacked input; array code makes the same number.
"""
import ast
import glob
import importlib
import os
import sys

import numpy as np
import pytest

import ndgrad

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(os.path.dirname(HERE), "src", "ndgrad")
BANNED = {"frompyfunc", "vectorize", "nditer", "apply_along_axis", "apply_over_axes",
          "piecewise"}

# Ops whose contract is a Python callable applied to each element (PyTorch's too), and table
# cases that return one tensor per slice of the stacked axis (split, unbind: joined again by
# the case, so the number of outputs grows with the stack)
PER_ELEMENT_BY_CONTRACT = {"apply_", "map_", "map2_", "split", "unsafe_split", "unbind"}


def _package_modules():
    for path in sorted(glob.glob(os.path.join(ROOT, "**", "*.py"), recursive=True)):
        yield os.path.relpath(path, ROOT).replace(os.sep, "/"), path


def test_lint_no_per_element_numpy_machinery():
    found = []
    for rel, path in _package_modules():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for node in ast.walk(tree):
            name = None
            if isinstance(node, ast.Attribute) and node.attr in BANNED:
                name = node.attr
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in (
                    "numpy", "cupy"):
                name = next((a.name for a in node.names if a.name in BANNED), None)
            if name:
                found.append(f"{rel}:{node.lineno}: {name}")
    assert not found, "per-element Python machinery in the package:\n" + "\n".join(found)


def test_lint_catches_a_planted_frompyfunc(tmp_path):
    """The lint's own check: it flags what it is meant to flag."""
    tree = ast.parse("import numpy as np\nu = np.frompyfunc(abs, 1, 1)\n"
                     "from numpy import vectorize\n")
    hits = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in BANNED]
    hits += [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
             and any(a.name in BANNED for a in n.names)]
    assert len(hits) == 2


# ---------------------------------------------------------------- the measurement

if HERE not in sys.path:
    sys.path.insert(0, HERE)
import op_db  # noqa: E402

for _path in sorted(glob.glob(os.path.join(HERE, "op_db_*.py"))):
    importlib.import_module(os.path.basename(_path)[:-3])

STACK = 64


def _cases():
    out = []
    for case in op_db.OPS:
        if case.name in PER_ELEMENT_BY_CONTRACT:
            continue
        for arrays, kw, sid in case.samples():
            if arrays and all(a.size and a.ndim for a in arrays):
                out.append(pytest.param(case, arrays, kw, id=sid))
                break  # (the first sample of each case with no empty or 0-d input)
    return out


def _calls(fn):
    n = [0]

    def prof(frame, event, arg):
        if event == "call" or event == "c_call":
            n[0] += 1
    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return n[0]


def _run(case, arrays, kw):
    ts = [ndgrad.tensor(a) for a in arrays]
    return case.call(ndgrad, ts, kw)


def _stacked(case, arrays):
    """Each input of the largest rank gets a new leading axis of STACK copies (the others
    broadcast against it); integer inputs (indices, counts) are kept as they are."""
    rank = max(a.ndim for i, a in enumerate(arrays) if i not in case.int_inputs) \
        if len(case.int_inputs) < len(arrays) else -1
    return [np.stack([a] * STACK) if i not in case.int_inputs and a.ndim == rank else a
            for i, a in enumerate(arrays)]


@pytest.mark.parametrize("case,arrays,kw", _cases())
def test_python_work_does_not_grow_with_the_elements(case, arrays, kw):
    try:
        out = _run(case, arrays, kw)
        big = _stacked(case, arrays)
        out_big = _run(case, big, kw)
    except Exception:
        pytest.skip("the op does not take the stacked input")
    if isinstance(out, (tuple, list)) and len(out) != len(out_big):
        pytest.skip("one output per slice (split, unbind): the outputs grow with the stack")
    with np.errstate(all="ignore"):
        small_calls = _calls(lambda: _run(case, arrays, kw))
        big_calls = _calls(lambda: _run(case, big, kw))
    n_small = sum(a.size for a in arrays)
    # Python per element would add >= (STACK - 1) * n_small calls; array code adds none, or a
    # few for a loop over a dimension that happens to be the stacked one
    assert big_calls - small_calls < max(8, (STACK - 1) * n_small // 4), (
        f"{case.name}: {small_calls} Python calls on {n_small} elements, {big_calls} on "
        f"{STACK} x as many")
