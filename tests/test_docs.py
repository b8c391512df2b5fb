"""docs/ stays true: the Python blocks of each page run, in order, as one program.

A page reads top to bottom, so a later block may use what an earlier one defined (as in a
notebook). A listing that is not meant to run (numbered lines of a script, a sketch with
placeholders) says so in its fence: ```python fragment. Command lines (```bash, ```) are not run.
"""
import importlib.util
import os
import re
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
FENCE = re.compile(r"^ *```(\w*)([^\n]*)\n(.*?)^ *```", re.S | re.M)


def _blocks(name):
    text = open(os.path.join(DOCS, name), encoding="utf-8").read()
    return [(lang, info.strip(), textwrap.dedent(body)) for lang, info, body in FENCE.findall(text)]


PAGES = sorted(f for f in os.listdir(DOCS) if f.endswith(".md"))


def test_every_python_block_is_run_or_marked():
    for page in PAGES:
        for lang, info, body in _blocks(page):
            if lang == "python":
                assert info in ("", "fragment"), (page, info)
            if lang == "python" and info == "fragment":
                assert body.strip(), page


@pytest.mark.parametrize("page", [p for p in PAGES
                                  if any(lang == "python" and not info
                                         for lang, info, _ in _blocks(p))])
def test_doc_page_runs(page, tmp_path):
    code = "\n".join(body for lang, info, body in _blocks(page) if lang == "python" and not info)
    if "ndgrad.distributed" in code and importlib.util.find_spec("mpi4py") is None:
        pytest.skip("mpi4py not installed: pip install \".[distributed]\"")
    if not code.lstrip().startswith("import ndgrad"):
        code = "import ndgrad as torch\n" + code
    (tmp_path / "page.py").write_text(code)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.join(ROOT, "src")] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    r = subprocess.run([sys.executable, "page.py"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
