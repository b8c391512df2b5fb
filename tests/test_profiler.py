"""torch.profiler / torch.autograd.profiler: exact per-op counts, shapes and nesting, PyTorch's
table layout, schedules, Chrome traces, and nothing left behind when no profiler runs."""
import gzip
import json
import threading
import warnings

import pytest

import ndgrad
from ndgrad.autograd import profiler_util as pu
from ndgrad.ops import _registry
from ndgrad.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule


def _run_mlp(T, steps=3):
    T.manual_seed(0)
    m = T.nn.Sequential(T.nn.Linear(4, 8), T.nn.ReLU(), T.nn.Linear(8, 2))
    opt = T.optim.SGD(m.parameters(), lr=0.1)
    x, y = T.randn(5, 4), T.tensor([0, 1, 0, 1, 1])
    for _ in range(steps):
        opt.zero_grad()
        loss = T.nn.functional.cross_entropy(m(x), y)
        loss.backward()
        opt.step()
    return loss


def _counts(ka):
    return {e.key: e.count for e in ka}


def test_counts_shapes_and_ranges_match_pytorch():
    torch = pytest.importorskip("torch")
    results = {}
    for T in (ndgrad, torch):
        with T.profiler.profile(record_shapes=True) as p:
            _run_mlp(T)
        results[T] = p
    mine, theirs = (_counts(results[T].key_averages()) for T in (ndgrad, torch))
    # the ops, the ranges of optimizers and of backward nodes PyTorch shows, called as often
    for key in ("aten::linear", "aten::relu", "aten::cross_entropy_loss",
                "Optimizer.step#SGD.step", "Optimizer.zero_grad#SGD.zero_grad",
                "autograd::engine::evaluate_function: AddmmBackward0", "AddmmBackward0",
                "ReluBackward0", "torch::autograd::AccumulateGrad",
                "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"):
        assert mine[key] == theirs[key], key
    # input shapes, grouped as PyTorch groups them
    by_shape = {(e.key, str(e.input_shapes)): e.count
                for e in results[ndgrad].key_averages(group_by_input_shape=True)}
    assert by_shape[("aten::linear", "[[5, 4], [8, 4], [8]]")] == 3
    assert by_shape[("aten::linear", "[[5, 8], [2, 8], [2]]")] == 3
    assert by_shape[("aten::relu", "[[5, 8]]")] == 3


def test_times_are_nested_and_self_times_add_up():
    with profile() as p:
        with record_function("outer"):
            x = ndgrad.randn(30, 30)
            with record_function("inner"):
                y = (x @ x).relu()
            y.sum()
    ev = p.events()
    by_name = {e.name: e for e in ev}
    outer, inner, mm = by_name["outer"], by_name["inner"], by_name["aten::matmul"]
    assert inner.cpu_parent is outer and mm.cpu_parent is inner
    assert by_name["aten::relu"].cpu_parent is inner
    assert by_name["aten::sum"].cpu_parent is outer and by_name["aten::randn"].cpu_parent is outer
    for e in ev:   # a child's range lies inside its parent's
        if e.cpu_parent is not None:
            assert e.cpu_parent.time_range.start <= e.time_range.start
            assert e.time_range.end <= e.cpu_parent.time_range.end
    assert outer.is_user_annotation and not mm.is_user_annotation
    assert outer.self_cpu_time_total == pytest.approx(
        outer.cpu_time_total - sum(c.cpu_time_total for c in outer.cpu_children))
    # the self times of every event add up to the top-level ranges' total times
    assert ev.self_cpu_time_total == pytest.approx(
        sum(e.cpu_time_total for e in ev if e.cpu_parent is None))
    assert p.key_averages().self_cpu_time_total == pytest.approx(ev.self_cpu_time_total)


def test_inplace_ops_and_operators_are_recorded_under_their_names():
    x = ndgrad.ones(3)
    with ndgrad.autograd.profiler.profile() as p:
        x.add_(1)
        x += 1
        with ndgrad.no_grad():
            x *= 2
        ndgrad.add(x, 1)
    c = _counts(p.key_averages())
    assert c["aten::add_"] == 2 and c["aten::mul_"] == 1 and c["aten::add"] == 1
    assert x.tolist() == [6.0, 6.0, 6.0]


def _fixed_events(E):
    """The same hand-made events in either library."""
    evs = [E.FunctionEvent(id=1, name="aten::mm", thread=1, start_us=0, end_us=1500,
                           input_shapes=[[30, 30], [30, 30]], stack=[]),
           E.FunctionEvent(id=2, name="aten::addmm_really_long_name_" + "x" * 40, thread=1,
                           start_us=10, end_us=250.5, input_shapes=[[2], [4, 3], [3, 2]], stack=[]),
           E.FunctionEvent(id=3, name="aten::relu", thread=1, start_us=2000, end_us=2000.75,
                           input_shapes=[[4]], stack=[])]
    return E.EventList(evs)


@pytest.mark.parametrize("kwargs", [{}, {"sort_by": "self_cpu_time_total"},
                                    {"sort_by": "cpu_time_total", "row_limit": 2},
                                    {"time_unit": "ms", "header": "H"},
                                    {"top_level_events_only": True}])
@pytest.mark.parametrize("group", [False, True])
def test_table_layout_is_pytorchs(kwargs, group):
    torch = pytest.importorskip("torch")
    from torch.autograd import profiler_util as tpu
    tables = []
    for E in (pu, tpu):
        evs = _fixed_events(E)
        evs._build_tree()
        tables.append(evs.key_averages(group_by_input_shapes=group).table(**kwargs))
        tables.append(evs.table(**kwargs))
        tables.append(repr(evs.total_average()))
    assert tables[:3] == tables[3:]


def test_schedule_and_step_match_pytorch():
    torch = pytest.importorskip("torch")
    warnings.simplefilter("ignore")
    sched = dict(wait=1, warmup=1, active=2, repeat=2, skip_first=1)
    assert [schedule(**sched)(i) .name for i in range(14)] == \
        [torch.profiler.schedule(**sched)(i).name for i in range(14)]
    seen = {}
    for T in (ndgrad, torch):
        seen[T] = []
        x = T.ones(3)
        with T.profiler.profile(schedule=T.profiler.schedule(**sched),
                                on_trace_ready=lambda p, T=T: seen[T].append(
                                    (p.step_num, sorted({e.name for e in p.events()
                                                         if not e.name.startswith("aten::")
                                                         or e.name == "aten::mul"})))) as p:
            for i in range(12):
                with T.profiler.record_function(f"it{i}"):
                    x * i
                p.step()
    assert seen[ndgrad] == seen[torch] and len(seen[ndgrad]) == 2
    with pytest.raises(AssertionError, match="Invalid profiler schedule arguments"):
        schedule(wait=0, warmup=0, active=0)
    assert ProfilerAction.RECORD_AND_SAVE.value == 3
    assert ProfilerActivity.CPU in ndgrad.profiler.supported_activities()


def test_chrome_trace_is_valid_json(tmp_path):
    with profile(record_shapes=True) as p:
        with record_function("block"):
            a = ndgrad.randn(3, 4, requires_grad=True)
            (a * 2).sum().backward()
    for name in ("t.json", "t.json.gz"):
        path = str(tmp_path / name)
        p.export_chrome_trace(path)
        opener = gzip.open if name.endswith(".gz") else open
        with opener(path, "rt") as f:
            doc = json.load(f)
        xs = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
        names = {e["name"] for e in xs}
        assert {"block", "aten::mul", "aten::sum", "MulBackward0"} <= names
        block = next(e for e in xs if e["name"] == "block")
        assert block["cat"] == "user_annotation"
        mul = next(e for e in xs if e["name"] == "aten::mul")
        assert mul["args"]["Input Dims"] == [[3, 4], []]
        assert block["ts"] <= mul["ts"] and mul["ts"] + mul["dur"] <= block["ts"] + block["dur"]
    handler_dir = tmp_path / "tb"
    with profile(schedule=schedule(wait=0, warmup=1, active=1, repeat=1),
                 on_trace_ready=ndgrad.profiler.tensorboard_trace_handler(
                     str(handler_dir), worker_name="w")) as p:
        for _ in range(3):
            ndgrad.ones(2) + 1
            p.step()
    files = list(handler_dir.iterdir())
    assert len(files) == 1 and files[0].name.startswith("w.") and \
        files[0].name.endswith(".pt.trace.json")
    json.loads(files[0].read_text())


def test_nothing_is_left_behind_and_errors_unwind():
    iadd = ndgrad.Tensor.__dict__["__iadd__"]
    with pytest.raises(RuntimeError):
        with profile() as p:
            with record_function("r"):
                ndgrad.ones(2, 3) @ ndgrad.ones(2, 3)   # raises inside the op's range
    assert _registry._TF_MODES == 0 and _registry._PROFILER is None
    assert ndgrad.Tensor.__dict__["__iadd__"] is iadd
    from ndgrad.autograd import _prof_state
    assert _prof_state.HUB[0] is None
    names = [e.name for e in p.events()]
    assert names == ["r", "aten::ones", "aten::ones", "aten::matmul", "aten::mm"]
    ev = {e.name: e for e in p.events()}
    assert ev["aten::matmul"].cpu_parent is ev["r"]
    assert ev["aten::mm"].cpu_parent is ev["aten::matmul"]
    # a second, later profiler starts clean
    with profile() as q:
        ndgrad.zeros(1)
    assert [e.name for e in q.events()] == ["aten::zeros"]


def test_threads_and_legacy_api():
    def work():
        ndgrad.ones(4).exp()
    with ndgrad.autograd.profiler.profile(with_stack=True) as p:
        t = threading.Thread(target=work)
        t.start()
        t.join()
        ndgrad.ones(4).exp()
    exps = [e for e in p.function_events if e.name == "aten::exp"]
    assert len({e.thread for e in exps}) == 2
    assert any(__file__ in s for s in exps[0].stack)
    assert p.total_average().count == len(p.function_events)
    assert p.self_cpu_time_total == pytest.approx(p.function_events.self_cpu_time_total)
    assert "aten::exp" in p.table()
    with ndgrad.autograd.profiler.profile() as q:
        assert len(q.key_averages()) == 0   # no results while running, as PyTorch
    with pytest.raises(RuntimeError, match="not reentrant"):
        q.__enter__()
        q.__enter__()
    q.__exit__(None, None, None)
    with ndgrad.autograd.profiler.emit_nvtx():
        pass


def test_flops_and_memory():
    torch = pytest.importorskip("torch")
    flops = {}
    for T in (ndgrad, torch):
        a, b = T.ones(8, 16), T.ones(16, 4)
        with T.profiler.profile(with_flops=True, profile_memory=True) as p:
            T.mm(a, b)
            T.addmm(T.ones(4), a, b)
            T.add(a, a)
        flops[T] = {e.key: e.flops for e in p.key_averages() if e.key in (
            "aten::mm", "aten::addmm", "aten::add")}
    assert flops[ndgrad] == flops[torch]
    with profile(profile_memory=True) as p:
        ndgrad.ones(1000, dtype=ndgrad.float64)
    assert {e.name: e.cpu_memory_usage for e in p.events()}["aten::ones"] == 8000
