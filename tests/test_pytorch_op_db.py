"""PyTorch's own OpInfo database (torch.testing._internal.common_methods_invocations.op_db, 702
OpInfos) as the oracle for ndgrad's ops, one test per OpInfo.

Each OpInfo runs through tests/pytorch_op_db.py: every CPU dtype it supports among float64,
float32, int64, bool and complex128; its samples through the function, method and in-place
variants (keyword forms included), compared with PyTorch's results; its error_inputs (PyTorch's
exception type and message); float64 gradients of every differentiable output for one random
cotangent, compared with PyTorch's; ndgrad's own gradcheck on the smallest sample. Samples that
draw random numbers compare shapes and dtypes only.

A disagreement fails the test unless tests/pytorch_op_db_known.py records it with its reason
(PyTorch is wrong, NumPy cannot represent the input, the result is unspecified, or the name is
still missing); a recorded disagreement that no longer happens fails too, so the table stays
true.

Time: by default each (OpInfo, dtype) runs at most CAP of its samples (spread evenly over the
list) of at most MAX_NUMEL elements each, except OpInfos with recorded disagreements, which run
all their samples; NDGRAD_OP_DB=full runs every sample of every OpInfo. Needs torch and
expecttest (torch's test utilities import it); skips otherwise.
"""
import os
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import pytorch_op_db as P  # noqa: E402
from pytorch_op_db_known import KNOWN, MISSING  # noqa: E402

FULL = os.environ.get("NDGRAD_OP_DB") == "full"
CAP = None if FULL else 24
MAX_NUMEL = None if FULL else 100_000

_KEYS = {P.op_key(op) for op in P.op_db}
_RECORDED = {key.rsplit(".", 1)[0] for key, _ in KNOWN} | set(MISSING)


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    """PyTorch on one thread while the database runs (small samples: its thread pool only
    spins against the other processes sharing the machine's cores)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _known_for(key):
    """The table's entries for one OpInfo (keys "<op>.<variant>")."""
    return {k: v for k, v in KNOWN.items() if k[0].rsplit(".", 1)[0] == key}


def test_table_names_real_opinfos():
    """Every entry of the table names an OpInfo of this PyTorch's op_db and a known kind."""
    bad = [k for k in KNOWN if k[0].rsplit(".", 1)[0] not in _KEYS or k[1] not in P.KINDS
           or k[0].rsplit(".", 1)[1] not in ("function", "method", "inplace", "grad",
                                             "errors")]
    bad += [k for k in MISSING if k not in _KEYS]
    assert not bad, bad


@pytest.mark.parametrize("op", [pytest.param(op, id=P.op_key(op)) for op in P.op_db])
def test_op_db(op):
    key = P.op_key(op)
    recorded = _known_for(key)
    capped = not FULL and key not in _RECORDED
    r = P.run_opinfo(op, max_samples=CAP if capped else None,
                     grad_samples=CAP if capped else None,
                     max_numel=MAX_NUMEL)
    found = {(f.key, f.kind): f for f in r.findings}
    new = [f for k, f in found.items() if k not in recorded
           and not (f.kind == "missing" and key in MISSING)]
    # (a missing name is allowed to appear: the work that adds it may land first, and then its
    # other disagreements, if any, show up as new ones)
    stale = [k for k in recorded if k not in found and k[1] != "missing"]
    lines = [f"{f.kind} ({P.KINDS[f.kind]}): {f.key}: {f.detail}" for f in new]
    lines += [f"recorded but no longer found (remove it from the table): {k}" for k in stale]
    assert not lines, "\n".join(lines)
