"""The op table's coverage standard, enforced: every differentiable op of the table has a sample
with a 0-d input and a sample with an empty input, in cases that run gradcheck (tests/test_op_db.py
then runs forward and gradients vs PyTorch and a float64 gradcheck on them), unless PyTorch
itself rejects such inputs for the op: then the op is in EXEMPT, with the reason and a call that
PyTorch (and ndgrad, the same way) must reject.

What is an op: cases are grouped by name. A case "<op>_<variant>" (sum_0d, clamp_tensor_min,
index_select_empty, ...) belongs to the op named by the shortest prefix of its name that is itself
a case; OWN_OPS stops that walk for ops whose names extend another op's name (log_softmax is no
variant of log), FAMILIES groups the cases of one function that has no plain case (einsum_mm,
einsum_trace, ...), and ALIASES maps names that are the same ndgrad function to that function.
A sample counts as 0-d (empty) when one of its input arrays, index inputs included, is 0-d (has
no elements).

Where PyTorch accepts the input but its value is NaN whatever the input (corrcoef of a 0-d
tensor), no gradcheck can pass: the op is in NAN_SAMPLE, naming the case that compares it with
PyTorch instead.

Scope: the tables in TABLES (all op tables).
"""
import collections
import glob
import importlib
import os
import sys
import warnings

import pytest

import ndgrad

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import op_db  # noqa: E402

for _path in sorted(glob.glob(os.path.join(HERE, "op_db_*.py"))):
    importlib.import_module(os.path.basename(_path)[:-3])

TABLES = ("op_db", "op_db_pointwise", "op_db_shape", "op_db_indexing", "op_db_linalg",
          "op_db_more", "op_db_special")

OWN_OPS = {"log_softmax", "take_along_dim", "repeat_interleave", "scatter_add", "scatter_reduce",
           "diag_embed", "var_mean", "std_mean"}
FAMILIES = ("getitem", "einsum")
ALIASES = {"swapaxes": "transpose", "swapdims": "transpose", "moveaxis": "movedim",
           "concat": "cat", "concatenate": "cat", "broadcast_to": "expand"}


def _z(L):
    return L.ones((), dtype=L.float64)


def _m(L):
    return L.eye(2, dtype=L.float64)


def _quiet(fn):
    """fn with the deprecation warnings of PyTorch's older spellings silenced."""
    def call(L):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return fn(L)
    return call


# op -> {kind: (reason, call that PyTorch rejects)}
_NEEDS_1D = "needs >= 1-d input"
_NEEDS_2D = "needs >= 2-d (matrix) input"
EXEMPT = {
    "unflatten": {"0-d": (_NEEDS_1D, lambda L: _z(L).unflatten(0, (1,)))},
    "flipud": {"0-d": (_NEEDS_1D, lambda L: L.flipud(_z(L)))},
    "fliplr": {"0-d": (_NEEDS_2D, lambda L: L.fliplr(_z(L)))},
    "rot90": {"0-d": (_NEEDS_2D, lambda L: L.rot90(_z(L)))},
    "narrow": {"0-d": (_NEEDS_1D, lambda L: _z(L).narrow(0, 0, 1))},
    "select": {"0-d": (_NEEDS_1D, lambda L: _z(L).select(0, 0))},
    "diagonal": {"0-d": (_NEEDS_2D, lambda L: L.diagonal(_z(L)))},
    "diag": {"0-d": ("needs a 1-d or 2-d input", lambda L: L.diag(_z(L)))},
    "diag_embed": {"0-d": (_NEEDS_1D, lambda L: L.diag_embed(_z(L)))},
    "cat": {"0-d": ("0-d tensors cannot be concatenated", lambda L: L.cat([_z(L), _z(L)]))},
    "split": {"0-d": (_NEEDS_1D, lambda L: L.split(_z(L), 1))},
    "tensor_split": {"0-d": (_NEEDS_1D, lambda L: L.tensor_split(_z(L), 1))},
    "chunk": {"0-d": (_NEEDS_1D, lambda L: _z(L).chunk(1))},
    "unbind": {"0-d": (_NEEDS_1D, lambda L: L.unbind(_z(L)))},
    "matmul": {"0-d": (_NEEDS_1D, lambda L: L.matmul(_z(L), _z(L)))},
    "mm": {"0-d": (_NEEDS_2D, lambda L: L.mm(_z(L), _z(L)))},
    "bmm": {"0-d": ("needs 3-d input", lambda L: L.bmm(_z(L), _z(L)))},
    "mv": {"0-d": ("needs a matrix and a vector", lambda L: L.mv(_z(L), _z(L)))},
    "dot": {"0-d": ("needs 1-d input", lambda L: L.dot(_z(L), _z(L)))},
    "vdot": {"0-d": ("needs 1-d input", lambda L: L.vdot(_z(L), _z(L)))},
    "outer": {"0-d": ("needs 1-d input", lambda L: L.outer(_z(L), _z(L)))},
    "ger": {"0-d": ("needs 1-d input", lambda L: L.ger(_z(L), _z(L)))},
    "trace": {"0-d": (_NEEDS_2D, lambda L: L.trace(_z(L)))},
    "tril": {"0-d": (_NEEDS_2D, lambda L: L.tril(_z(L)))},
    "triu": {"0-d": (_NEEDS_2D, lambda L: L.triu(_z(L)))},
    "cross": {"0-d": ("needs a dim of size 3", lambda L: L.cross(_z(L), _z(L)))},
    "linalg_cross": {"0-d": ("needs a dim of size 3", lambda L: L.linalg.cross(_z(L), _z(L)))},
    "linalg_inv": {"0-d": (_NEEDS_2D, lambda L: L.linalg.inv(_z(L)))},
    "inverse": {"0-d": (_NEEDS_2D, lambda L: L.inverse(_z(L)))},
    "linalg_det": {"0-d": (_NEEDS_2D, lambda L: L.linalg.det(_z(L)))},
    "det": {"0-d": (_NEEDS_2D, lambda L: L.det(_z(L)))},
    "slogdet": {"0-d": (_NEEDS_2D, lambda L: L.linalg.slogdet(_z(L)))},
    "logdet": {"0-d": (_NEEDS_2D, lambda L: L.logdet(_z(L)))},
    "linalg_solve": {"0-d": (_NEEDS_2D, lambda L: L.linalg.solve(_z(L), _z(L)))},
    "linalg_cholesky": {"0-d": (_NEEDS_2D, lambda L: L.linalg.cholesky(_z(L)))},
    "linalg_qr": {"0-d": (_NEEDS_2D, lambda L: L.linalg.qr(_z(L)))},
    "linalg_svd": {"0-d": (_NEEDS_2D, lambda L: L.linalg.svd(_z(L)))},
    "linalg_svdvals": {"0-d": (_NEEDS_2D, lambda L: L.linalg.svdvals(_z(L)))},
    "linalg_eigh": {"0-d": (_NEEDS_2D, lambda L: L.linalg.eigh(_z(L)))},
    "linalg_eigvalsh": {"0-d": (_NEEDS_2D, lambda L: L.linalg.eigvalsh(_z(L)))},
    "linalg_matrix_norm": {"0-d": (_NEEDS_2D, lambda L: L.linalg.matrix_norm(_z(L)))},
    # op_db_more
    "nanquantile": {"empty": ("needs a non-empty input",
                              lambda L: L.nanquantile(L.ones(0, 3, dtype=L.float64), 0.5, dim=1))},
    "hsplit": {"0-d": (_NEEDS_1D, lambda L: L.hsplit(_z(L), 1))},
    "vsplit": {"0-d": (_NEEDS_2D, lambda L: L.vsplit(_z(L), 1))},
    "dsplit": {"0-d": ("needs >= 3-d input", lambda L: L.dsplit(_z(L), [1]))},
    "unsafe_split": {"0-d": (_NEEDS_1D, lambda L: L.unsafe_split(_z(L), 1))},
    "unsafe_chunk": {"0-d": (_NEEDS_1D, lambda L: _z(L).unsafe_chunk(1))},
    "diff_method": {"0-d": (_NEEDS_1D, lambda L: _z(L).diff())},
    "vander": {"0-d": ("needs 1-d input", lambda L: L.vander(_z(L)))},
    "trapezoid": {"0-d": (_NEEDS_1D, lambda L: L.trapezoid(_z(L)))},
    "trapz": {"0-d": (_NEEDS_1D, lambda L: L.trapz(_z(L), _z(L)))},
    "cumulative_trapezoid": {"0-d": (_NEEDS_1D, lambda L: L.cumulative_trapezoid(_z(L)))},
    "matrix_power": {"0-d": (_NEEDS_2D, lambda L: L.matrix_power(_z(L), 2))},
    "linalg_matrix_power": {"0-d": (_NEEDS_2D, lambda L: L.linalg.matrix_power(_z(L), 2))},
    "matrix_exp": {"0-d": (_NEEDS_2D, lambda L: L.matrix_exp(_z(L)))},
    "linalg_matrix_exp": {"0-d": (_NEEDS_2D, lambda L: L.linalg.matrix_exp(_z(L)))},
    "linalg_pinv": {"0-d": (_NEEDS_2D, lambda L: L.linalg.pinv(_z(L)))},
    "pinverse": {"0-d": (_NEEDS_2D, lambda L: _z(L).pinverse())},
    "linalg_lstsq": {"0-d": (_NEEDS_2D, lambda L: L.linalg.lstsq(_z(L), _z(L)))},
    "linalg_cond": {"0-d": (_NEEDS_2D, lambda L: L.linalg.cond(_z(L)))},
    "linalg_multi_dot": {"0-d": ("needs 1-d or 2-d inputs",
                                 lambda L: L.linalg.multi_dot([_z(L), _z(L)]))},
    "linalg_lu": {"0-d": (_NEEDS_2D, lambda L: L.linalg.lu(_z(L)))},
    "triangular_solve": {"0-d": (_NEEDS_2D, _quiet(lambda L: L.triangular_solve(_z(L), _m(L))))},
    "cholesky_solve": {"0-d": (_NEEDS_2D, lambda L: L.cholesky_solve(_z(L), _m(L)))},
    "cholesky_inverse": {"0-d": (_NEEDS_2D, lambda L: L.cholesky_inverse(_z(L)))},
    "cholesky_deprecated": {"0-d": (_NEEDS_2D, _quiet(lambda L: L.cholesky(_z(L))))},
}

# ops whose 0-d / empty sample exists but cannot be gradchecked (it is compared with PyTorch in
# the named case): op -> {kind: (reason, case, call whose value PyTorch makes NaN)}
NAN_SAMPLE = {
    "corrcoef": {"0-d": ("cov of one observation has no degree of freedom: the value is NaN",
                         "corrcoef_0d", lambda L: L.corrcoef(_z(L)))},
}


def op_of(name, names):
    """The op a case named `name` exercises, given the names of all cases."""
    for fam in FAMILIES:
        if name.startswith(fam + "_"):
            return fam
    own = max((len(q) for q in OWN_OPS if name == q or name.startswith(q + "_")), default=0)
    parts = name.split("_")
    op = name
    for k in range(1, len(parts) + 1):
        p = "_".join(parts[:k])
        if len(p) >= own and p in names:
            op = p
            break
    return ALIASES.get(op, op)


def coverage(cases):
    """{op: {"0-d": bool, "empty": bool}} over the differentiable, gradchecked cases."""
    names = {c.name for c in cases}
    cov = collections.defaultdict(lambda: {"0-d": False, "empty": False})
    for c in cases:
        if not (c.grad and c.gradcheck):
            continue
        entry = cov[op_of(c.name, names)]
        for arrays, _, _ in c.samples():
            entry["0-d"] |= any(a.ndim == 0 for a in arrays)
            entry["empty"] |= any(a.size == 0 for a in arrays)
    return dict(cov)


CASES = [c for c in op_db.OPS if c.table in TABLES]
COVERAGE = coverage(CASES)


def test_every_differentiable_op_has_0d_and_empty_samples():
    # (only cases that run gradcheck count: one that compares gradients with PyTorch alone, at
    # NaN inputs say, does not meet the standard)
    missing = [f"{op}: no {kind} sample" for op, cov in sorted(COVERAGE.items())
               for kind in ("0-d", "empty") if not cov[kind] and kind not in EXEMPT.get(op, {})
               and kind not in NAN_SAMPLE.get(op, {})]
    assert not missing, (
        "add a 0-d / empty sample to the op's OpCase (or an <op>_0d / <op>_empty case), or, "
        "where PyTorch rejects such inputs, an EXEMPT entry:\n" + "\n".join(missing))


def test_exemptions_are_current():
    # an exemption names a differentiable op of the table that lacks that kind of sample, and
    # says why: once the op gets the sample, the entry must go
    stale = [f"{op} ({kind})" for table in (EXEMPT, NAN_SAMPLE) for op, kinds in table.items()
             for kind in kinds if op not in COVERAGE or COVERAGE[op][kind]]
    assert not stale, "stale EXEMPT entries: " + ", ".join(stale)
    for op, kinds in EXEMPT.items():
        for kind, (reason, probe) in kinds.items():
            assert kind in ("0-d", "empty") and reason and callable(probe), op


EXEMPTIONS = [pytest.param(op, kind, probe, id=f"{op}-{kind}")
              for op, kinds in sorted(EXEMPT.items()) for kind, (_, probe) in kinds.items()]


@pytest.mark.parametrize("op,kind", [(op, kind) for op, kinds in sorted(NAN_SAMPLE.items())
                                     for kind in kinds])
def test_nan_samples_are_nan_in_torch_and_compared(op, kind):
    torch = pytest.importorskip("torch")
    _, case, probe = NAN_SAMPLE[op][kind]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert torch.isnan(probe(torch)).all() and ndgrad.isnan(probe(ndgrad)).all()
    (c,) = [c for c in op_db.OPS if c.name == case]
    assert c.grad and op_of(case, {c.name for c in CASES}) == op
    assert any(a.size == 0 if kind == "empty" else a.ndim == 0 for arrays, _, _ in c.samples()
               for a in arrays)


@pytest.mark.parametrize("op,kind,probe", EXEMPTIONS)
def test_exempt_input_is_rejected_by_torch_and_ndgrad(op, kind, probe):
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception) as e:
        probe(torch)
    with pytest.raises(e.type) as ours:
        probe(ndgrad)
    want = str(e.value).split("\nException raised from")[0]  # less PyTorch's C++ trace
    assert str(ours.value) == want


def test_grouping():
    names = {"sum", "sum_0d", "log", "log_softmax", "log_softmax_0d", "take", "take_along_dim",
             "take_along_dim_0d", "einsum_mm", "swapaxes", "linalg_svd", "linalg_svdvals"}
    assert op_of("sum_0d", names) == "sum"
    assert op_of("log_softmax_0d", names) == "log_softmax"
    assert op_of("log_softmax", names) == "log_softmax"
    assert op_of("take_along_dim_0d", names) == "take_along_dim"
    assert op_of("einsum_mm", names) == "einsum"
    assert op_of("swapaxes", names) == "transpose"
    assert op_of("linalg_svdvals", names) == "linalg_svdvals"
    assert op_of("unregistered_thing", names) == "unregistered_thing"


def test_coverage_sees_missing_samples():
    cases = [op_db.OpCase("foo", [((3,),), ((),)]), op_db.OpCase("foo_empty", [((0, 2),)]),
             op_db.OpCase("bar", [((3,),)]), op_db.OpCase("bar_0d", [((),)], grad=False),
             op_db.OpCase("baz", [((2,), ())], int_inputs=(1,)),
             op_db.OpCase("baz_empty", [((0,),)], gradcheck=False)]
    assert coverage(cases) == {"foo": {"0-d": True, "empty": True},
                               "bar": {"0-d": False, "empty": False},
                               "baz": {"0-d": True, "empty": False}}


def test_cases_know_their_table():
    assert {c.table for c in op_db.OPS} >= set(TABLES[1:])
    assert len(CASES) > 400


# found by the 0-d samples: calls PyTorch rejects on 0-d input though the op takes 0-d input
REJECTED_0D = {
    "roll_dims": lambda L: L.roll(_z(L), 1, -1),
    "roll_dims_tuple": lambda L: L.roll(_z(L), (1,), (0,)),
    "index_select_two": lambda L: L.index_select(_z(L), 0, L.tensor([0, 0])),
    "index_select_none": lambda L: L.index_select(_z(L), 0, L.zeros(0, dtype=L.long)),
    "unflatten_sizes": lambda L: _z(L).unflatten(0, ()),
    "cross_default_dim": lambda L: L.cross(L.ones(2, 2), L.ones(2, 2)),
    "linalg_cond_fro": lambda L: L.linalg.cond(_z(L), "fro"),
    "linalg_cond_1d": lambda L: L.linalg.cond(L.ones(3), 1),
    "linalg_lstsq_other": lambda L: L.linalg.lstsq(_m(L), _z(L)),
    "trapezoid_x": lambda L: L.trapezoid(_z(L), _z(L)),
    "trapezoid_x_dim": lambda L: L.trapezoid(_z(L), _z(L), dim=3),
    "trapezoid_dim": lambda L: L.trapezoid(_z(L), dim=3),
    "cumulative_trapezoid_x": lambda L: L.cumulative_trapezoid(_z(L), _z(L)),
    "triangular_solve_A": _quiet(lambda L: L.triangular_solve(_m(L), _z(L))),
    "cholesky_solve_u": lambda L: L.cholesky_solve(_m(L), _z(L)),
    "cholesky_solve_1d": lambda L: L.cholesky_solve(L.ones(2, dtype=L.float64), _m(L)),
    "linalg_pinv_int": lambda L: L.linalg.pinv(L.ones(2, 3, dtype=L.long)[0]),
}


@pytest.mark.parametrize("name", sorted(REJECTED_0D))
def test_0d_rejections_match_torch(name):
    test_exempt_input_is_rejected_by_torch_and_ndgrad(name, "0-d", REJECTED_0D[name])


def test_matrix_properties_match_torch():
    # found by the 0-d samples: PyTorch returns a 0-d tensor itself from mT/mH/H, makes T a
    # permute view for every ndim, and rejects mT/mH/H on 1-d (H also on 3-d) with these messages
    torch = pytest.importorskip("torch")
    for shape in [(), (3,), (2, 3), (2, 3, 4)]:
        for prop in ("T", "mT", "mH", "H"):
            t = torch.ones(shape, requires_grad=True)
            n = ndgrad.ones(shape, requires_grad=True)
            try:
                want = getattr(t, prop)
            except RuntimeError as e:
                with pytest.raises(RuntimeError) as ours:
                    getattr(n, prop)
                assert str(ours.value) == str(e), (shape, prop)
                continue
            got = getattr(n, prop)
            assert tuple(got.shape) == tuple(want.shape), (shape, prop)
            assert (got is n) == (want is t), (shape, prop)
            assert type(got.grad_fn).__name__ == type(want.grad_fn).__name__, (shape, prop)
