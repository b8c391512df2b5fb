"""torch.distributed's other public names (options structs, DebugLevel, BackendConfig, the
coalesced/single collectives, subgroups, rendezvous, DeviceMesh), against PyTorch's on a world of
one process; tests/distributed/names_worker.py checks DeviceMesh and the subgroups on 4 ranks
(test_distributed.py)."""
import datetime
import os
import warnings

import numpy as np
import pytest

import ndgrad
import ndgrad.distributed as dist

pytest.importorskip("mpi4py")
torch = pytest.importorskip("torch")
import torch.distributed as tdist  # noqa: E402

if not tdist.is_available():
    pytest.skip("torch.distributed unavailable", allow_module_level=True)

MISSING_BEFORE = """AllToAllOptions AllreduceCoalescedOptions AllreduceOptions BackendConfig
BarrierOptions BroadcastOptions BuiltinCommHookType DebugLevel DeviceMesh GatherOptions GradBucket
GroupName Logger ProcessGroupGloo RankType ReduceOptions ReduceScatterOptions Reducer
ScatterOptions all_gather_coalesced all_gather_single all_reduce_coalesced breakpoint
default_pg_timeout get_backend_config get_debug_level get_default_backend_for_device get_pg_count
init_device_mesh is_ucc_available is_xccl_available log new_subgroups
new_subgroups_by_enumeration record_comm reduce_op reduce_scatter_single
register_rendezvous_handler rendezvous set_debug_level set_debug_level_from_env shrink_group
split_group supports_complex timedelta Store HashStore TCPStore FileStore PrefixStore""".split()


def test_all_of_pytorchs_names_are_listed():
    ours = set(dist.__all__)
    for name in MISSING_BEFORE:
        assert name in ours and hasattr(dist, name), name
    assert hasattr(tdist, "all_gather_single")     # what PyTorch 2.13 has at this level
    for name in dist.__all__:
        assert hasattr(dist, name), name


@pytest.fixture
def worlds(tmp_path):
    """A world of one process in ndgrad (MPI) and in PyTorch (gloo on a FileStore)."""
    tdist.init_process_group("gloo", init_method=f"file://{tmp_path}/pg", rank=0, world_size=1)
    dist.init_process_group("gloo")
    yield
    dist.destroy_process_group()
    tdist.destroy_process_group()


OPTIONS = ["AllToAllOptions", "AllreduceCoalescedOptions", "AllreduceOptions", "BarrierOptions",
           "BroadcastOptions", "GatherOptions", "ReduceOptions", "ReduceScatterOptions",
           "ScatterOptions"]


@pytest.mark.parametrize("name", OPTIONS)
def test_options_structs_have_pytorchs_fields_and_defaults(name):
    ref, got = getattr(tdist, name)(), getattr(dist, name)()
    fields = [k for k in dir(ref) if not k.startswith("_")]
    assert sorted(k for k in vars(got)) == sorted(fields)
    for k in fields:
        r, g = getattr(ref, k), getattr(got, k)
        if k == "reduceOp":
            assert isinstance(g, dist.ReduceOp) and g.op == dist.ReduceOp.SUM
        else:
            assert g == r, k
    got.asyncOp = False                      # plain read-write attributes
    assert got.asyncOp is False


def test_debug_level_reads_the_environment(monkeypatch):
    assert [repr(m) for m in dist.DebugLevel] == [repr(m) for m in tdist.DebugLevel.__members__
                                                  .values()]
    assert str(dist.DebugLevel.INFO) == str(tdist.DebugLevel.INFO)
    assert int(dist.DebugLevel.DETAIL) == int(tdist.DebugLevel.DETAIL) == 2
    try:
        for value in ["INFO", "detail", "Off"]:
            monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", value)
            tdist.set_debug_level_from_env()
            dist.set_debug_level_from_env()
            assert str(dist.get_debug_level()) == str(tdist.get_debug_level())
        for value in ["bogus", ""]:
            monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", value)
            with pytest.raises(ValueError) as ref:
                tdist.set_debug_level_from_env()
            with pytest.raises(ValueError) as got:
                dist.set_debug_level_from_env()
            assert str(got.value) == str(ref.value)
        dist.set_debug_level(dist.DebugLevel.DETAIL)
        assert dist.get_debug_level() is dist.DebugLevel.DETAIL
        with pytest.raises(TypeError):
            tdist.set_debug_level(1)
        with pytest.raises(TypeError):
            dist.set_debug_level(1)
    finally:
        monkeypatch.delenv("TORCH_DISTRIBUTED_DEBUG", raising=False)
        tdist.set_debug_level_from_env()
        dist.set_debug_level_from_env()
    assert dist.get_debug_level() is dist.DebugLevel.OFF


def test_plain_names_match_pytorch():
    assert dist.default_pg_timeout == tdist.default_pg_timeout
    assert dist.timedelta is datetime.timedelta is tdist.timedelta
    assert dist.log.name == tdist.log.name
    assert dist.is_ucc_available() is tdist.is_ucc_available() is False
    assert dist.is_xccl_available() is tdist.is_xccl_available() is False
    for op in ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]:
        assert dist.supports_complex(getattr(dist.ReduceOp, op)) == \
            tdist.supports_complex(getattr(tdist.ReduceOp, op)), op
    for dev in ["cpu", "cuda", "xpu", "mps", ndgrad.device("cpu")]:
        tdev = torch.device("cpu") if isinstance(dev, ndgrad.device) else dev
        assert dist.get_default_backend_for_device(dev) == \
            tdist.get_default_backend_for_device(tdev)
    with pytest.raises(ValueError) as ref:
        tdist.get_default_backend_for_device("meta")
    with pytest.raises(ValueError) as got:
        dist.get_default_backend_for_device("meta")
    assert str(got.value) == str(ref.value)
    assert dist.GroupName("x") == tdist.GroupName("x") == "x"
    assert dist.GroupName.__supertype__ is str
    assert [(m.name, int(m)) for m in dist.BuiltinCommHookType] == \
        [(k, int(v)) for k, v in tdist.BuiltinCommHookType.__members__.items()]
    assert str(dist.BuiltinCommHookType.FP16_COMPRESS) == \
        str(tdist.BuiltinCommHookType.FP16_COMPRESS)
    assert 3 in dist.RankType.__args__ if hasattr(dist.RankType, "__args__") else \
        dist.RankType is int


@pytest.mark.parametrize("backend", ["gloo", "mpi", "nccl", "GLOO", "cpu:gloo,cuda:nccl",
                                     "undefined"])
def test_backend_config_matches_pytorch(backend):
    ref = tdist.BackendConfig(tdist.Backend(backend))
    got = dist.BackendConfig(dist.Backend(backend))
    assert repr(got) == repr(ref) and str(got) == str(ref)
    assert got.get_device_backend_map() == ref.get_device_backend_map()


def test_reduce_op_is_deprecated_as_pytorchs():
    with pytest.warns(FutureWarning) as ref:
        r = tdist.reduce_op.MAX
    with pytest.warns(FutureWarning) as got:
        g = dist.reduce_op.MAX
    assert str(got[0].message) == str(ref[0].message)
    assert got[0].filename == __file__
    assert repr(g) == repr(r)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert list(dist.reduce_op.__members__) == list(tdist.reduce_op.__members__)


def test_group_count_backend_config_and_subgroups(worlds):
    assert dist.get_pg_count() == tdist.get_pg_count() == 1
    assert dist.get_backend_config() == tdist.get_backend_config()
    g, tg = dist.new_group([0]), tdist.new_group([0])
    assert dist.get_backend_config(g) == tdist.get_backend_config(tg)
    cur, subs = dist.new_subgroups(1)
    tcur, tsubs = tdist.new_subgroups(1)
    assert len(subs) == len(tsubs) == 1 and cur is subs[0]
    assert dist.get_process_group_ranks(cur) == tdist.get_process_group_ranks(tcur) == [0]
    cur, subs = dist.new_subgroups_by_enumeration([[0]])
    assert dist.get_world_size(cur) == 1
    tdist.new_subgroups_by_enumeration([[0]])
    assert dist.get_pg_count() == tdist.get_pg_count() == 4
    for call in [lambda d: d.new_subgroups_by_enumeration([[0], [0]]),
                 lambda d: d.new_subgroups(2), lambda d: d.new_subgroups(0),
                 lambda d: d.new_subgroups_by_enumeration([]),
                 lambda d: d.shrink_group([0]), lambda d: d.shrink_group(0)]:
        with pytest.raises(Exception) as ref:
            call(tdist)
        with pytest.raises(Exception) as got:
            call(dist)
        assert type(got.value) is type(ref.value) and str(got.value) == str(ref.value)
    assert dist.get_pg_count() == tdist.get_pg_count()
    # PyTorch cannot split gloo groups (no accelerator); MPI communicators split
    with pytest.raises(RuntimeError):
        tdist.split_group(split_ranks=[[0]])
    assert dist.get_process_group_ranks(dist.split_group(split_ranks=[[0]])) == [0]
    with pytest.raises(ValueError, match="split_ranks cannot be None or empty"):
        dist.split_group(split_ranks=[])
    dist.destroy_process_group()
    tdist.destroy_process_group()
    assert dist.get_pg_count() == tdist.get_pg_count() == 0
    dist.init_process_group("gloo")                         # for the fixture's teardown
    tdist.init_process_group("gloo", store=tdist.HashStore(), rank=0, world_size=1)


def _warned(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [(x.category, str(x.message)) for x in w]


def test_single_and_coalesced_collectives(worlds):
    for lib, d in [(torch, tdist), (ndgrad, dist)]:
        pass
    outs = []
    for lib, d in [(torch, tdist), (ndgrad, dist)]:
        x = lib.arange(6.0).reshape(2, 3)
        cat, stack = lib.zeros(2, 3), lib.zeros(1, 2, 3)
        assert _warned(lambda: d.all_gather_single(cat, x)) == []
        if d is dist:    # the stack form, as PyTorch documents it (its gloo takes only the cat)
            d.all_gather_single(stack, x)
        else:
            stack = x.reshape(1, 2, 3)
        red = lib.zeros(2, 3)
        d.reduce_scatter_single(red, x * 2)
        ts = [lib.ones(2), lib.arange(3.0)]
        w1 = _warned(lambda: d.all_reduce_coalesced(ts, op=d.ReduceOp.SUM))
        outl = [[lib.zeros(2), lib.zeros(3)]]
        w2 = _warned(lambda: d.all_gather_coalesced(outl, [lib.ones(2) * 5, lib.arange(3.0)]))
        w3 = _warned(lambda: d.all_gather_into_tensor(lib.zeros(2, 3), x))
        w4 = _warned(lambda: d.reduce_scatter_tensor(lib.zeros(2, 3), x))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fut = d.all_reduce_coalesced([lib.ones(2)], async_op=True)
        outs.append(([np.asarray(t.numpy()) for t in [cat, stack, red] + ts + outl[0]],
                     w1 + w2 + w3 + w4, type(fut).__name__, [t.tolist() for t in fut.wait()]))
    (ref, rw, rf, rv), (got, gw, gf, gv) = outs
    for r, g in zip(ref, got):
        np.testing.assert_array_equal(g, r)
    assert [(c.__name__, m) for c, m in gw] == [(c.__name__, m) for c, m in rw]
    assert len(gw) == 4 and gf == rf == "Future" and gv == rv
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = ndgrad.ones(2)
        dist.all_reduce_coalesced(one)              # a single tensor is taken as [tensor]
        assert one.tolist() == [1.0, 1.0]
    for call in [lambda lib, d: d.all_reduce_coalesced([lib.ones(2), lib.ones(2).long()]),
                 lambda lib, d: d.all_gather_coalesced([[lib.ones(2)]], lib.ones(2)),
                 lambda lib, d: d.all_gather_coalesced(lib.ones(2), [lib.ones(2)])]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as r:
                call(torch, tdist)
            with pytest.raises(Exception) as g:
                call(ndgrad, dist)
        assert type(g.value) is type(r.value)
        assert str(g.value).replace("ndgrad._tensor.Tensor", "torch.Tensor") == str(r.value)


def test_process_group_methods_take_options(worlds):
    pg = dist.group.WORLD
    t = ndgrad.ones(3)
    opts = dist.AllreduceOptions()
    opts.reduceOp = dist.ReduceOp.MAX
    assert pg.allreduce([t], opts).wait() and t.tolist() == [1.0, 1.0, 1.0]
    b = dist.BroadcastOptions()
    pg.broadcast([t], b).wait()
    pg.barrier().wait()
    outs = [ndgrad.zeros(3)]
    pg.allgather([outs], [t]).wait()
    assert outs[0].tolist() == [1.0] * 3


def test_gloo_group_logger_and_reducer(worlds):
    pg = dist.ProcessGroupGloo(dist.HashStore(), 0, 1, datetime.timedelta(seconds=5))
    t = ndgrad.arange(3.0)
    pg.allreduce([t]).wait()
    assert t.tolist() == [0.0, 1.0, 2.0] and pg.size() == 1 and pg.rank() == 0
    assert isinstance(dist.ProcessGroupGloo.create_device(hostname="localhost"),
                      dist.ProcessGroupGloo.Device)
    with pytest.raises(ValueError, match="ndgrad's gloo runs on MPI"):
        dist.ProcessGroupGloo(dist.HashStore(), 1, 2)
    net = ndgrad.nn.Linear(2, 1)
    red = dist.Reducer(list(net.parameters()), [[1, 0]], [1 << 20], dist.group.WORLD)
    with pytest.raises(RuntimeError, match="every parameter index once"):
        dist.Reducer(list(net.parameters()), [[0]], [1], dist.group.WORLD)
    buckets = red._get_zeros_like_grad_buckets()
    assert len(buckets) == 1 and buckets[0].is_last() and buckets[0].buffer().shape == (3,)
    seen = []

    def hook(state, bucket):
        seen.append((state, bucket.index(), [tuple(g.shape) for g in bucket.gradients()]))
        from ndgrad.futures import Future
        fut = Future()
        fut.set_result(bucket.buffer() * 0 + 7)
        return fut
    red._register_comm_hook("st", hook)
    out = net(ndgrad.ones(1, 2))
    red.prepare_for_backward([out])
    out.sum().backward()
    assert seen == [("st", 0, [(1,), (1, 2)])]                 # bucket 0: bias, then weight
    assert net.weight.grad.tolist() == [[7.0, 7.0]] and net.bias.grad.tolist() == [7.0]
    log = dist.Logger(None)
    log.set_construction_data_and_log("Net", [], -1, True)
    log._set_comm_hook_name("allreduce")
    assert log._get_ddp_logging_data()["module_name"] == "Net"
    from ndgrad.nn.parallel.distributed import GradBucket
    assert GradBucket is dist.GradBucket


def test_record_comm_and_breakpoint_skip(worlds, caplog):
    with dist.record_comm("step"):
        dist.all_reduce(ndgrad.ones(1))
    with tdist.record_comm("step"):
        tdist.all_reduce(torch.ones(1))
    dist.breakpoint(rank=1)                    # not this rank: only the barrier
    dist.breakpoint(skip=1)                    # skipped (first call from here), logged
    assert "Skip the breakpoint, counter=1" in caplog.text


def test_breakpoint_stops_rank_0_in_pdb(worlds, monkeypatch):
    from ndgrad.distributed import distributed_c10d as c10d
    seen = []

    class FakePdb:
        def message(self, text):
            seen.append(text)

        def set_trace(self):
            seen.append("set_trace")
    monkeypatch.setattr(c10d, "_make_distributed_pdb", FakePdb)
    dist.breakpoint()
    assert seen == ["\n!!! ATTENTION !!!\n\nType 'up' to get to the frame that called "
                    "dist.breakpoint(rank=0)\n", "set_trace"]
    import pdb
    monkeypatch.undo()
    assert isinstance(c10d._make_distributed_pdb(), pdb.Pdb)


def test_rendezvous_handlers(tmp_path, monkeypatch):
    for d in (tdist, dist):
        with pytest.raises(RuntimeError) as e:
            d.rendezvous("foo://x")
        assert str(e.value) == "No rendezvous handler for foo://"
        with pytest.raises(RuntimeError, match="already registered"):
            d.register_rendezvous_handler("env", lambda url: None)
        with pytest.raises(RuntimeError, match="must be an integer"):
            d.rendezvous("env://", rank="0")
    store, rank, size = next(dist.rendezvous(f"file://{tmp_path}/f", rank=0, world_size=1))
    assert isinstance(store, dist.FileStore) and (rank, size) == (0, 1)
    store.set("k", "v")
    assert store.get("k") == b"v"
    store, rank, size = next(dist.rendezvous("tcp://127.0.0.1:0", rank=0, world_size=1))
    assert isinstance(store, dist.TCPStore) and (rank, size) == (0, 1)
    store.add("n", 2)
    assert store.add("n", 0) == 2
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", "0")
    store, rank, size = next(dist.rendezvous("env://"))
    assert isinstance(store, dist.TCPStore) and (rank, size) == (0, 1)
    monkeypatch.delenv("MASTER_ADDR")
    for d in (tdist, dist):
        with pytest.raises(ValueError) as e:
            next(d.rendezvous("env://"))
        assert str(e.value) == ("Error initializing torch.distributed using env:// rendezvous: "
                                "environment variable MASTER_ADDR expected, but not set")
        with pytest.raises(ValueError, match="port number missing"):
            next(d.rendezvous("tcp://localhost", rank=0, world_size=1))
        with pytest.raises(AssertionError, match="node-specific"):
            next(d.rendezvous("file:///x?rank=0", rank=0, world_size=1))

    def handler(url, **kwargs):
        yield (dist.HashStore(), 0, 1)
    dist.register_rendezvous_handler("ndgradtest", handler)
    assert next(dist.rendezvous("ndgradtest://h", rank=0, world_size=1))[1:] == (0, 1)


def test_device_mesh_on_one_rank(worlds):
    from torch.distributed.device_mesh import init_device_mesh
    for shape, names in [((1,), ("dp",)), ((1, 1), ("dp", "tp")), ((1,), None)]:
        ref = init_device_mesh("cpu", shape, mesh_dim_names=names)
        got = dist.init_device_mesh("cpu", shape, mesh_dim_names=names)
        assert repr(got) == repr(ref)
        assert got.shape == ref.shape and got.ndim == ref.ndim and got.size() == ref.size()
        assert got.mesh.tolist() == ref.mesh.tolist() and got.mesh.dtype == ndgrad.int32
        assert got.get_coordinate() == ref.get_coordinate()
        assert got.mesh_dim_names == ref.mesh_dim_names and got.device_type == "cpu"
        assert got.get_rank() == ref.get_rank() == 0
        for dim in range(len(shape)):
            assert got.get_local_rank(dim) == ref.get_local_rank(dim) == 0
            assert dist.get_process_group_ranks(got.get_group(dim)) == [0]
        if names:
            assert repr(got[names[-1]]) == repr(ref[names[-1]])
            assert got[names] is got
            assert got.get_group(names[0]) is got.get_group(0)
    ref = init_device_mesh("cpu", (1, 1), mesh_dim_names=("dp", "tp"))
    got = dist.init_device_mesh("cpu", (1, 1), mesh_dim_names=("dp", "tp"))
    unnamed = (init_device_mesh("cpu", (1,)), dist.init_device_mesh("cpu", (1,)))
    for call in [lambda m: m.get_group(), lambda m: m.get_local_rank(), lambda m: m["xx"],
                 lambda m: m.get_group("xx"), lambda m: m[("tp", "xx")],
                 lambda m: unnamed[isinstance(m, dist.DeviceMesh)]["dp"]]:
        with pytest.raises(Exception) as r:
            call(ref)
        with pytest.raises(Exception) as g:
            call(got)
        assert type(g.value) is type(r.value) and g.value.args == r.value.args
    for call in [lambda f: f("cpu", (2,)), lambda f: f("cpu", (1,), mesh_dim_names=("a", "b")),
                 lambda f: f("cpu", (1, 1), mesh_dim_names=("a", "a")),
                 lambda f: f("cpu:0", (1,))]:
        with pytest.raises(RuntimeError) as r:
            call(init_device_mesh)
        with pytest.raises(RuntimeError) as g:
            call(dist.init_device_mesh)
        assert g.value.args == r.value.args
    m = dist.DeviceMesh("cpu", [0], mesh_dim_names=("dp",))
    assert m == dist.init_device_mesh("cpu", (1,), mesh_dim_names=("dp",))
    assert hash(m) == hash(dist.DeviceMesh("cpu", ndgrad.tensor([0]), mesh_dim_names=("dp",)))
    with m as cur:
        from ndgrad.distributed.device_mesh import _mesh_resources
        assert _mesh_resources.get_current_mesh() is cur
    f = dist.DeviceMesh.from_group(dist.group.WORLD, "cpu")
    assert f.get_group() is dist.group.WORLD and f.shape == (1,)


def test_torch_namespace_has_the_modules():
    import importlib
    for mod in ["device_mesh", "rendezvous", "constants"]:
        ours = importlib.import_module(f"ndgrad.distributed.{mod}")
        ref = importlib.import_module(f"torch.distributed.{mod}")
        for name in ref.__all__:
            assert hasattr(ours, name), (mod, name)
    from ndgrad.distributed.constants import default_pg_timeout, default_pg_nccl_timeout
    from torch.distributed import constants as tc
    assert default_pg_timeout == tc.default_pg_timeout
    assert default_pg_nccl_timeout == tc.default_pg_nccl_timeout


def test_builtin_comm_hooks_on_one_rank(worlds):
    """DistributedDataParallel._register_builtin_comm_hook(BuiltinCommHookType.X): on one rank
    the averaged gradient is the gradient (FP16_COMPRESS: rounded through float16, as
    PyTorch's fp16_compress_hook)."""
    from ndgrad.nn.parallel import DistributedDataParallel as DDP
    ndgrad.manual_seed(0)
    for kind in dist.BuiltinCommHookType:
        net = ndgrad.nn.Linear(3, 2)
        ref = ndgrad.nn.Linear(3, 2)
        ref.load_state_dict(net.state_dict())
        model = DDP(net)
        model._register_builtin_comm_hook(kind)
        with pytest.raises(RuntimeError, match="can only be called once"):
            model._register_builtin_comm_hook(kind)
        x = ndgrad.randn(4, 3)
        model(x).pow(2).sum().backward()
        ref(x).pow(2).sum().backward()
        for p, q in zip(net.parameters(), ref.parameters()):
            want = q.grad.numpy()
            if kind is dist.BuiltinCommHookType.FP16_COMPRESS:
                want = want.astype(np.float16).astype(want.dtype)
            np.testing.assert_array_equal(p.grad.numpy(), want)


def test_group_names_and_descriptions(worlds):
    assert dist.group.WORLD.group_name == tdist.group.WORLD.group_name == "0"
    assert dist.group.WORLD.group_desc == tdist.group.WORLD.group_desc
    g, tg = dist.new_group([0]), tdist.new_group([0])
    assert g.group_name == tg.group_name and g.group_desc == tg.group_desc
    g, tg = (dist.new_group([0], use_local_synchronization=True),
             tdist.new_group([0], use_local_synchronization=True))
    assert g.group_name == tg.group_name
    assert dist.get_pg_count() == tdist.get_pg_count()


def test_process_group_methods_and_private_helpers(worlds):
    from ndgrad.distributed import distributed_c10d as c10d
    from torch.distributed import distributed_c10d as tc10d
    pg = c10d._get_default_group()
    assert pg is dist.group.WORLD and tc10d._get_default_group() is tdist.group.WORLD
    assert c10d._rank_not_in_group(pg) is tc10d._rank_not_in_group(tdist.group.WORLD) is False
    assert c10d._rank_not_in_group(None) is tc10d._rank_not_in_group(None) is False
    assert c10d._get_group_size(None) == tc10d._get_group_size(None) == 1
    assert c10d._get_process_group_name(pg) == tc10d._get_process_group_name(tdist.group.WORLD)
    with pytest.raises(TypeError) as r:
        tc10d._check_single_tensor([1], "x")
    with pytest.raises(TypeError) as g:
        c10d._check_single_tensor([1], "x")
    assert str(g.value) == str(r.value)
    with pytest.warns(UserWarning, match="Running op on global rank 0 which does not belong"):
        c10d._warn_not_in_group("op")
    x = ndgrad.arange(4.0)
    outs = [ndgrad.zeros(4)]
    o = dist.GatherOptions()
    pg.gather([outs], [x], o).wait()
    assert outs[0].tolist() == x.tolist()
    got = ndgrad.zeros(4)
    pg.scatter([got], [[x * 2]], dist.ScatterOptions()).wait()
    assert got.tolist() == (x * 2).tolist()
    got = ndgrad.zeros(4)
    pg.reduce_scatter([got], [[x * 3]], dist.ReduceScatterOptions()).wait()
    assert got.tolist() == (x * 3).tolist()
    got = ndgrad.zeros(4)
    pg._allgather_base(got, x + 1).wait()
    assert got.tolist() == (x + 1).tolist()
    pg._reduce_scatter_base(got, x + 2).wait()
    assert got.tolist() == (x + 2).tolist()
    pg.alltoall_base(got, x + 5, [], [], dist.AllToAllOptions()).wait()
    assert got.tolist() == (x + 5).tolist()
