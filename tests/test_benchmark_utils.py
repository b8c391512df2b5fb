"""torch.utils.benchmark: Measurement statistics and repr, Compare's table, the Fuzzer's draws
(parameters, shapes and layouts; values come from ndgrad's own generator) and Timer's
protocols, against PyTorch's."""
import re

import numpy as np
import pytest

import ndgrad
from ndgrad.utils import benchmark as B


def _libs():
    torch = pytest.importorskip("torch")
    import torch.utils.benchmark as TB
    return torch, TB


def _strip_address(s):
    return re.sub(r"<[\w.]+\.(\w+) object at 0x[0-9a-f]+>", r"<\1>", s)


def _measurements(M, TS):
    rng = np.random.default_rng(0)
    specs = [TS("x + y", "pass", label="add", sub_label="float", description="n=4"),
             TS("x + y", "x = 1\ny = 2", label="add", sub_label="int", description="n=4",
                num_threads=4),
             TS("x + y", "pass", label="add", sub_label="float", description="n=64"),
             TS("x @ y\nz = 1", "pass", description="multi"),
             TS("torch.mm(a, b)", "pass", label="mm", env="A"),
             TS("torch.mm(a, b)", "pass", label="mm", env="B")]
    out = []
    for i, spec in enumerate(specs):
        for n in (1, 3, 7, 40):
            base = 10.0 ** (-7 + i % 4)
            times = list(base * (1 + rng.gamma(2.0, 0.02 * (1 + i), size=n)))
            out.append(M(number_per_run=10 * (i + 1), raw_times=times, task_spec=spec))
    return out


def test_measurement_statistics_and_repr_are_pytorchs():
    torch, TB = _libs()
    mine = _measurements(B.Measurement, B.TaskSpec)
    theirs = _measurements(TB.Measurement, TB.TaskSpec)
    for a, b in zip(mine, theirs):
        assert _strip_address(repr(a)) == _strip_address(repr(b))
        for attr in ("median", "mean", "iqr", "significant_figures", "has_warnings", "times",
                     "title", "as_row_name", "env", "num_threads", "label"):
            x, y = getattr(a, attr), getattr(b, attr)
            assert (x == pytest.approx(y, rel=1e-12)) if isinstance(y, float) else x == y, attr
        assert a.meets_confidence(0.05) == b.meets_confidence(0.05)
        assert a.task_spec.summarize() == b.task_spec.summarize()
    merged = B.Measurement.merge(mine)
    assert [m.times for m in merged] == [m.times for m in TB.Measurement.merge(theirs)]


@pytest.mark.parametrize("options", [(), ("trim",), ("colorize",), ("rowwise",),
                                     ("highlight",), ("trim", "highlight", "colorize")])
def test_compare_table_is_pytorchs(options):
    torch, TB = _libs()
    tables = []
    for lib, M, TS in ((B, B.Measurement, B.TaskSpec), (TB, TB.Measurement, TB.TaskSpec)):
        ms = [m for m in _measurements(M, TS) if m.label == "add" or m.label is None]
        c = lib.Compare(ms[:6])
        c.extend_results(ms[6:])
        if "trim" in options:
            c.trim_significant_figures()
        if "colorize" in options:
            c.colorize()
        if "rowwise" in options:
            c.colorize(rowwise=True)
        if "highlight" in options:
            c.highlight_warnings()
        tables.append(str(c))
    assert tables[0] == tables[1]
    with pytest.raises(ValueError, match="Expected an instance of `Measurement`"):
        B.Compare([1])


def test_units_and_figures_are_pytorchs():
    torch, TB = _libs()
    for t in (3e-10, 1e-9, 999e-9, 1e-6, 5.5e-5, 1e-3, 0.25, 2.0, 1234.0):
        assert B.select_unit(t) == TB.select_unit(t)
    for x in (3.14159, 0.000123456, 98765.4321, 1.0, 0.05):
        for n in (1, 2, 3, 4):
            assert B.trim_sigfig(x, n) == TB.trim_sigfig(x, n)
    assert [B.unit_to_english(u) for u in ("ns", "us", "ms", "s")] == \
        [TB.unit_to_english(u) for u in ("ns", "us", "ms", "s")]
    assert B.ordered_unique([3, 1, 3, 2, 1]) == [3, 1, 2]
    before = ndgrad.get_num_threads()
    with B.set_torch_threads(1):
        pass
    assert ndgrad.get_num_threads() == before


def test_fuzzer_draws_pytorchs_parameters_and_tensors():
    torch, TB = _libs()

    def fuzz(lib):
        f = lib.Fuzzer(
            parameters=[lib.FuzzedParameter("n", 1, 64, distribution="loguniform"),
                        lib.FuzzedParameter("m", 2, 9, distribution="uniform"),
                        lib.FuzzedParameter("k", distribution={2: 0.25, 3: 0.75}),
                        lib.FuzzedParameter("s", 1, 3, distribution="uniform")],
            tensors=[lib.FuzzedTensor("x", size=("n", "m"), steps=("s", 1),
                                      probability_contiguous=0.4, max_elements=2048),
                     lib.FuzzedTensor("y", size=("m", "k"), dim_parameter="k")],
            constraints=[lambda p: p["n"] != 3], seed=7)
        return list(f.take(6)), f.rejection_rate

    # (PyTorch 2.13 refuses every normalized dict distribution, an inverted check:
    # its side runs with that check bypassed)
    orig = TB.FuzzedParameter._check_distribution
    TB.FuzzedParameter._check_distribution = lambda self, d: d
    try:
        theirs, t_rate = fuzz(TB)
    finally:
        TB.FuzzedParameter._check_distribution = orig
    mine, m_rate = fuzz(B)
    assert m_rate == t_rate
    again, _ = fuzz(B)   # (ndgrad's generator is its own: the same tensors from the same seed)
    for (a, _, _), (b, _, _) in zip(mine, again):
        np.testing.assert_array_equal(a["x"].numpy(), b["x"].numpy())
    for (mt, mp, mparams), (tt, tp, tparams) in zip(mine, theirs):
        assert mparams == tparams
        for name in ("x", "y"):
            assert mt[name].shape == tuple(tt[name].shape)
            assert mt[name].stride() == tt[name].stride()
            assert mp[name]["is_contiguous"] == tp[name]["is_contiguous"]
            assert mp[name]["numel"] == tp[name]["numel"]
    with pytest.raises(AssertionError, match="not normalized"):
        B.FuzzedParameter("k", distribution={1: 0.5, 2: 0.2})
    with pytest.raises(ValueError, match="cycle"):
        B.Fuzzer._resolve_aliases({"a": B.ParameterAlias("b"), "b": B.ParameterAlias("a")})
    assert repr(B.ParameterAlias("x")) == repr(TB.ParameterAlias("x"))


def test_sparse_fuzzer():
    f = B.Fuzzer(parameters=[B.FuzzedParameter("n", 4, 8, distribution="uniform"),
                             B.FuzzedParameter("density", distribution={0.25: 0.5, 0.5: 0.5}),
                             B.FuzzedParameter("coalesced", distribution={True: 0.5, False: 0.5})],
                 tensors=[B.FuzzedSparseTensor("x", size=("n", "n"), density="density",
                                               coalesced="coalesced")], seed=0)
    for tensors, props, params in f.take(3):
        x = tensors["x"]
        assert x.is_sparse and tuple(x.shape) == (params["n"], params["n"])
        assert props["x"]["is_coalesced"] == x.is_coalesced()


def test_timer():
    calls = []
    t = B.Timer("y = x * 2", setup="x = torch.ones(3)", label="mul", sub_label="ones",
                description="3", num_threads=1)
    m = t.timeit(50)
    assert m.number_per_run == 50 and len(m.raw_times) == 1 and m.label == "mul"
    m = t.blocked_autorange(callback=lambda n, s: calls.append((n, s)), min_run_time=0.02)
    assert sum(m.raw_times) >= 0.02 and len(calls) == len(m.raw_times)
    assert all(n == m.number_per_run for n, _ in calls)
    m = t.adaptive_autorange(threshold=0.5, max_run_time=0.5)
    assert len(m.raw_times) >= 4 or sum(m.raw_times) > 0.5
    assert "Median" in repr(m) or "measurement" in repr(m)
    g = B.Timer("f(3)", globals={"f": lambda n: n + 1}).timeit(10)
    assert g.task_spec.stmt == "f(3)"
    with pytest.raises(ValueError, match="only a `str` stmt"):
        B.Timer(lambda: 1)
    with pytest.raises(ValueError, match="global_setup is C\\+\\+ only"):
        B.Timer("pass", global_setup="x")
    with pytest.raises(ValueError, match="Invalid language"):
        B.Timer("pass", language="go")
    with pytest.raises(NotImplementedError, match="blocked_autorange"):
        t.repeat()
    with pytest.raises(OSError, match="Valgrind is not supported"):
        t.collect_callgrind(10)
    assert B.Language.PYTHON.value == 0 and B.timer() > 0


def test_function_counts():
    fc = B.FunctionCounts((B.FunctionCount(30, "a.c:f"), B.FunctionCount(10, "b.c:g")),
                          inclusive=False, _linewidth=80)
    other = B.FunctionCounts((B.FunctionCount(5, "a.c:f"),), inclusive=False, _linewidth=80)
    d = fc - other
    assert list(d) == [B.FunctionCount(25, "a.c:f"), B.FunctionCount(10, "b.c:g")]
    assert d.sum() == 35 and len(d[:1]) == 1 and (fc * 2).sum() == 80
    assert fc.transform(lambda s: s.split(":")[0][0]).sum() == 40
    assert "Total: 40" in repr(fc)
    torch, TB = _libs()
    long = tuple(B.FunctionCount(i * 7 - 40, f"lib{i}.c:" + "f" * (i * 9)) for i in range(25))
    for inclusive in (False, True):
        a = B.FunctionCounts(long, inclusive=inclusive, _linewidth=80)
        b = TB.FunctionCounts(tuple(TB.FunctionCount(*x) for x in long), inclusive=inclusive,
                              _linewidth=80)
        assert _strip_address(repr(a)) == _strip_address(repr(b))
        assert _strip_address(repr(a[3:7])) == _strip_address(repr(b[3:7]))
    with pytest.raises(AssertionError, match="Cannot merge inclusive and exclusive"):
        fc + B.FunctionCounts((), inclusive=True)
    with pytest.raises(ValueError, match="Unsupported type"):
        B.CopyIfCallgrind(object())
    assert B.CopyIfCallgrind(3).value == 3
