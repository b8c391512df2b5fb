"""ndgrad.distributed on several processes: worker scripts in tests/distributed/ run under
`python -m ndgrad.distributed.run` (mpiexec) with 2 and 3 ranks and check every collective,
DistributedDataParallel against one-process training, and failure handling. Skipped where mpi4py
or mpiexec is missing. Each launch costs about a second, so each worker batches many checks."""
import os
import subprocess
import sys

import pytest

pytest.importorskip("mpi4py")
from ndgrad.distributed.run import find_mpiexec  # noqa: E402

if find_mpiexec() is None:
    pytest.skip("no mpiexec", allow_module_level=True)

pytestmark = pytest.mark.distributed

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "distributed")
HANG_GUARD = 240   # seconds: a job that is still running then has hung


def _env():
    import ndgrad
    src = os.path.dirname(os.path.dirname(os.path.abspath(ndgrad.__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([src] + [p for p in [env.get("PYTHONPATH")] if p])
    env["OMP_NUM_THREADS"] = "1"
    return env


def launch(n, script, *args, launcher_args=()):
    cmd = [sys.executable, "-m", "ndgrad.distributed.run", f"--nproc_per_node={n}",
           *launcher_args, script, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=HANG_GUARD, env=_env(),
                          cwd=HERE)


def _ok(proc, marker, n):
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for r in range(n):
        assert f"{marker} {r}" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize("n", [2, 3])
def test_collectives(n):
    _ok(launch(n, os.path.join(HERE, "collectives_worker.py")), "collectives ok", n)


@pytest.mark.parametrize("n", [2, 3])
def test_ddp_equals_one_process_training(n):
    _ok(launch(n, os.path.join(HERE, "ddp_worker.py")), "ddp ok", n)


def _crash_script(tmp_path, body):
    p = tmp_path / "crash.py"
    p.write_text("import sys\nimport ndgrad as torch\nimport ndgrad.distributed as dist\n"
                 "dist.init_process_group('gloo')\n" + body)
    return str(p)


def test_a_crashing_rank_ends_the_job(tmp_path):
    """Rank 1 raises while the others wait in a collective: the launcher returns non-zero and
    the job ends (the hang guard is the subprocess timeout)."""
    script = _crash_script(tmp_path, "if dist.get_rank() == 1:\n    raise ValueError('boom')\n"
                                     "dist.barrier()\nprint('unreachable')\n")
    proc = launch(3, script)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "ValueError: boom" in proc.stderr and "unreachable" not in proc.stdout


def test_the_first_failing_exit_code_is_returned(tmp_path):
    script = _crash_script(tmp_path, "if dist.get_rank() == 1:\n    sys.exit(3)\n"
                                     "dist.all_reduce(torch.ones(1))\n")
    assert launch(2, script).returncode == 3


def test_plain_mpiexec_crash_aborts_the_job(tmp_path):
    """Without the launcher: init_process_group's excepthook aborts the MPI job."""
    script = _crash_script(tmp_path, "if dist.get_rank() == 0:\n    raise KeyError('x')\n"
                                     "dist.barrier()\n")
    proc = subprocess.run([find_mpiexec(), "-n", "2", sys.executable, script],
                          capture_output=True, text=True, timeout=HANG_GUARD, env=_env())
    assert proc.returncode != 0 and "KeyError" in proc.stderr


def test_module_mode_and_environment(tmp_path):
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "main.py").write_text(
        "import os, sys\n"
        "line = ' '.join(map(str, ('env', os.environ['RANK'], os.environ['WORLD_SIZE'],"
        " os.environ['LOCAL_RANK'], os.environ['MASTER_ADDR'] != '', sys.argv[1:], __name__)))\n"
        "sys.stdout.write(line + '\\n')\n")   # one write per rank: the ranks share the pipe
    env = _env()
    env["PYTHONPATH"] = str(tmp_path) + os.pathsep + env["PYTHONPATH"]
    proc = subprocess.run([sys.executable, "-m", "ndgrad.distributed.run", "--standalone",
                           "--nnodes=1", "--nproc-per-node=2", "-m", "mypkg.main", "--lr", "1"],
                          capture_output=True, text=True, timeout=HANG_GUARD, env=env,
                          cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    for r in range(2):
        assert f"env {r} 2 {r} True ['--lr', '1'] __main__" in proc.stdout, proc.stdout


def test_pytorch_script_runs_unchanged_and_prints_what_torchrun_prints():
    """The DDP + DistributedSampler + no_sync + all_reduce script of tests/distributed, run by
    ndgrad's launcher; where PyTorch is installed, its torchrun output is the reference."""
    script = os.path.join(HERE, "torch_ddp_script.py")
    proc = launch(2, script)      # the command the user types: no flag, `import torch` is ndgrad
    assert proc.returncode == 0, proc.stderr
    assert "parameters equal on every rank: True" in proc.stdout
    assert proc.stdout.count("epoch") == 4
    pytest.importorskip("torch")
    env = _env()
    env.pop("PYTHONPATH")
    ref = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                          "--nproc_per_node=2", script], capture_output=True, text=True,
                         timeout=HANG_GUARD, env=env, cwd=HERE)
    if ref.returncode != 0:
        pytest.skip(f"PyTorch's gloo/torchrun does not run here: {ref.stderr[-300:]}")
    assert proc.stdout == ref.stdout


def test_digits_ddp_reaches_the_one_process_accuracy(tmp_path, capsys):
    pytest.importorskip("sklearn")
    pytest.importorskip("matplotlib")
    pytest.importorskip("tqdm")
    import re
    from ndgrad.examples import digits
    single = digits.main(["--epochs", "3", "--out", str(tmp_path / "one"), "--no-progress"])
    capsys.readouterr()
    proc = launch(2, "ndgrad.examples.digits_ddp", "--epochs", "3", "--out",
                  str(tmp_path / "ddp"), launcher_args=["-m"])
    assert proc.returncode == 0, proc.stderr
    accs = [float(a) / 100 for a in re.findall(r"test accuracy ([\d.]+)%", proc.stdout)]
    assert len(accs) == 3, proc.stdout
    assert accs[-1] >= single["history"]["acc"][-1] - 0.02, (accs, single["history"]["acc"])
    assert (tmp_path / "ddp" / "digits_ddp_cnn.pt").exists()


def test_device_mesh_subgroups_and_the_single_collectives_on_four_ranks():
    """names_worker.py: a 2x2 DeviceMesh's groups, slices and local ranks, a partial mesh,
    new_subgroups(_by_enumeration), split_group, shrink_group, all_gather_single,
    reduce_scatter_single, the coalesced collectives, a tcp:// rendezvous (rank 0 serves the
    TCPStore) and ProcessGroupGloo across 4 ranks."""
    _ok(launch(4, os.path.join(HERE, "names_worker.py")), "names ok", 4)
