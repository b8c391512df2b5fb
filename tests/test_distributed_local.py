"""The parts of ndgrad.distributed that need no second process: lazy import, errors before
init_process_group, the engine's final callbacks, futures, DistributedSampler's partitions (vs
PyTorch's), the launcher's command line."""
import os
import subprocess
import sys

import pytest

import ndgrad
import ndgrad.distributed as dist
from ndgrad.utils.data import DistributedSampler
from ndgrad.distributed import run as launcher


def test_import_ndgrad_does_not_import_mpi4py():
    code = ("import sys, ndgrad, ndgrad.nn.parallel, ndgrad.distributed, ndgrad.utils.data;"
            "print('mpi4py' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=os.path.dirname(
                             os.path.dirname(ndgrad.__file__))))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_is_available_matches_mpi4py():
    try:
        from mpi4py import MPI  # noqa: F401
        has = True
    except ImportError:
        has = False
    assert dist.is_available() is has


@pytest.mark.parametrize("call", [
    lambda: dist.all_reduce(ndgrad.ones(2)), lambda: dist.broadcast(ndgrad.ones(2), 0),
    lambda: dist.barrier(), lambda: dist.get_rank(), lambda: dist.get_world_size(),
    lambda: dist.new_group([0]), lambda: dist.all_gather_object([None], 1),
    lambda: dist.send(ndgrad.ones(1), 1), lambda: dist.destroy_process_group(),
    lambda: ndgrad.nn.parallel.DistributedDataParallel(ndgrad.nn.Linear(2, 2))])
def test_collectives_before_init_raise_pytorchs_error(call):
    assert not dist.is_initialized()
    with pytest.raises(ValueError, match="^Default process group has not been initialized, "
                                         "please make sure to call init_process_group.$"):
        call()


def test_pytorch_error_matches():
    torch = pytest.importorskip("torch")
    import torch.distributed as tdist
    if not tdist.is_available():
        pytest.skip("torch.distributed unavailable")
    with pytest.raises(ValueError) as ref:
        tdist.all_reduce(torch.ones(2))
    with pytest.raises(ValueError) as got:
        dist.all_reduce(ndgrad.ones(2))
    assert str(got.value) == str(ref.value)
    assert repr(dist.ReduceOp.SUM) == repr(tdist.ReduceOp.SUM)
    assert [repr(getattr(dist.ReduceOp, k)) for k in ("AVG", "PRODUCT", "MIN", "MAX", "BAND",
                                                      "BOR", "BXOR")] == \
        [repr(getattr(tdist.ReduceOp, k)) for k in ("AVG", "PRODUCT", "MIN", "MAX", "BAND",
                                                    "BOR", "BXOR")]


def test_backend_names():
    assert dist.Backend("GLOO") == "gloo" and dist.Backend.MPI == "mpi"
    with pytest.raises(RuntimeError, match="NCCL"):
        dist.distributed_c10d._backend_name("nccl")
    assert dist.distributed_c10d._backend_name("cpu:gloo,cuda:nccl") == "gloo"
    with pytest.raises(ValueError, match="Invalid backend"):
        dist.distributed_c10d._backend_name("tcp")


# ------------------------------------------------------------------- engine final callbacks

def test_queue_callback_runs_after_the_backward_pass():
    x = ndgrad.ones(3, requires_grad=True)
    y = ndgrad.ones(3, requires_grad=True)
    log = []
    engine = ndgrad.autograd.Variable._execution_engine

    def hook(p):
        log.append(("acc", p is x))
        if p is x:
            engine.queue_callback(lambda: (log.append("end"),
                                           engine.queue_callback(lambda: log.append("again"))))
    x.register_post_accumulate_grad_hook(hook)
    y.register_post_accumulate_grad_hook(hook)
    (x * 2 + y * 3).sum().backward()
    assert sorted(log[:2]) == [("acc", False), ("acc", True)]
    assert log[2:] == ["end", "again"]
    log.clear()
    (x * 2).sum().backward()      # callbacks are per backward pass
    assert log == [("acc", True), "end", "again"]
    with pytest.raises(RuntimeError, match="Final callbacks can only be installed during "
                                           "backward pass."):
        engine.queue_callback(lambda: None)


def test_queue_callback_in_a_nested_backward_runs_there():
    x = ndgrad.ones(2, requires_grad=True)
    log = []
    engine = ndgrad.autograd.Variable._execution_engine

    class F(ndgrad.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, g):
            engine.queue_callback(lambda: log.append("outer"))
            z = ndgrad.ones(1, requires_grad=True)
            with ndgrad.enable_grad():
                z2 = z * 2
                z2.register_hook(lambda gg: engine.queue_callback(lambda: log.append("inner")))
                z2.sum().backward()
            log.append("inner done")
            return g
    F.apply(x).sum().backward()
    assert log == ["inner", "inner done", "outer"]


# ------------------------------------------------------------------------------- futures

def test_future_then_and_errors():
    from ndgrad.futures import Future, collect_all, wait_all
    f = Future()
    g = f.then(lambda fut: fut.value() + 1)
    assert not g.done()
    f.set_result(1)
    assert g.done() and g.wait() == 2 and g.value() == 2
    with pytest.raises(RuntimeError, match="only be marked completed once"):
        f.set_result(3)
    h = Future()
    bad = h.then(lambda fut: fut.value() / 0)
    h.set_result(1)
    with pytest.raises(ZeroDivisionError):
        bad.wait()
    a, b = Future(), Future()
    both = collect_all([a, b])
    assert not both.done()
    a.set_result(1)
    b.set_result(2)
    assert both.done() and [x.value() for x in both.wait()] == [1, 2]
    assert wait_all([a, b]) == [1, 2]


# ------------------------------------------------------------------------ DistributedSampler

CASES = [(n, rep, drop) for n in (0, 1, 5, 10, 11, 17) for rep in (1, 2, 3, 4, 7)
         for drop in (False, True)]


@pytest.mark.parametrize("n,replicas,drop_last", CASES)
def test_sampler_partitions_equal_pytorchs(n, replicas, drop_last):
    torch = pytest.importorskip("torch")
    from torch.utils.data.distributed import DistributedSampler as TorchSampler
    data = list(range(n))
    for rank in range(replicas):
        ref = TorchSampler(data, replicas, rank, shuffle=False, drop_last=drop_last)
        got = DistributedSampler(data, replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(got) == list(ref) and len(got) == len(ref)
        assert (got.num_samples, got.total_size) == (ref.num_samples, ref.total_size)


@pytest.mark.parametrize("n,replicas,drop_last", [(10, 3, False), (11, 4, True), (3, 7, False)])
def test_sampler_shuffled_partition(n, replicas, drop_last):
    """With shuffle, each epoch's permutation (seed + epoch) is shared by all ranks and split
    the way PyTorch splits its own."""
    data = list(range(n))
    parts = {}
    for epoch in (0, 1):
        ss = [DistributedSampler(data, replicas, r, shuffle=True, seed=5, drop_last=drop_last)
              for r in range(replicas)]
        for s in ss:
            s.set_epoch(epoch)
        parts[epoch] = [list(s) for s in ss]
        g = ndgrad.Generator()
        g.manual_seed(5 + epoch)
        perm = ndgrad.randperm(n, generator=g).tolist()
        ref = DistributedSampler(perm, replicas, 0, shuffle=False, drop_last=drop_last)
        for r, part in enumerate(parts[epoch]):
            ref.rank = r
            assert part == [perm[i] for i in ref]
        assert [list(s) for s in ss] == parts[epoch]   # deterministic
    assert parts[0] != parts[1]


def test_sampler_errors():
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval "
                                         r"\[0, 2\]"):
        DistributedSampler(range(4), 3, 3)
    assert ndgrad.utils.data.distributed.DistributedSampler is DistributedSampler


# ---------------------------------------------------------------------------------- launcher

def test_launcher_accepts_torchruns_flags():
    a = launcher.parse_args(["--standalone", "--nnodes=1", "--nproc-per-node=3",
                             "--rdzv_backend=c10d", "--rdzv-endpoint=localhost:0",
                             "--max_restarts=0", "train.py", "--lr", "0.1", "-m"])
    assert a.nproc_per_node == 3 and a.training_script == "train.py"
    assert a.training_script_args == ["--lr", "0.1", "-m"]
    cmd = launcher.build_command(a, "mpiexec")
    assert cmd[:3] == ["mpiexec", "-n", "3"]
    assert cmd[3:7] == [sys.executable, "-u", "-m", "ndgrad.distributed._worker"]
    # `import torch` is ndgrad in the ranks unless --no-alias
    assert cmd[7:] == ["--as-torch", "train.py", "--lr", "0.1", "-m"]
    b = launcher.parse_args(["--nproc_per_node", "2", "-m", "--as-torch", "pkg.train"])
    assert launcher.build_command(b, "mpiexec")[-3:] == ["--as-torch", "-m", "pkg.train"]
    c = launcher.parse_args(["--nproc_per_node", "2", "--no-alias", "-m", "pkg.train"])
    assert launcher.build_command(c, "mpiexec")[-3:] == ["ndgrad.distributed._worker", "-m",
                                                         "pkg.train"]


def test_launcher_refuses_contradicting_alias_flags(capsys):
    with pytest.raises(SystemExit):
        launcher.parse_args(["--as-torch", "--no-alias", "t.py"])
    assert "--as-torch and --no-alias contradict each other" in capsys.readouterr().err


def test_launcher_several_nodes_use_mpiexec_hosts(capsys):
    a = launcher.parse_args(["--nnodes=2", "--nproc_per_node=4", "--hosts=n1,n2", "t.py"])
    cmd = launcher.build_command(a, sys.executable)  # not Open MPI: hydra's options
    assert cmd[:7] == [sys.executable, "-hosts", "n1,n2", "-ppn", "4", "-n", "8"]
    with pytest.raises(SystemExit):
        launcher.parse_args(["--nnodes=2", "t.py"])
    assert "--hosts=host1,host2" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        launcher.parse_args(["--nnodes=1:4", "t.py"])
