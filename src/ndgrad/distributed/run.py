"""A torchrun-style launcher on MPI:

    python -m ndgrad.distributed.run --nproc_per_node=4 train.py --lr 0.1
    python -m ndgrad.distributed.run --nproc_per_node=4 -m mypackage.train
    python -m ndgrad.distributed.run --nnodes=2 --nproc_per_node=4 --hosts=node1,node2 train.py

starts the ranks with `mpiexec` (the one next to this Python first, then the one on PATH), each
through ndgrad.distributed._worker, which sets RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
MASTER_ADDR and MASTER_PORT before the script runs and aborts the whole MPI job when the script
raises on any rank. The launcher's exit code is the first non-zero exit code of a rank (0 when
all succeed). torchrun's rendezvous flags (--standalone, --rdzv_*, --master_*, --max_restarts, ...)
are accepted; MPI does the rendezvous.

The script runs on ndgrad: `import torch` in it (and every `torch.*` module) is ndgrad, as under
`python -m ndgrad.run`, so a PyTorch training script runs on ndgrad unchanged (starting ndgrad's
launcher is the request for that; `import ndgrad` alone never shadows a real torch).
`--no-alias` leaves `import torch` to whatever torch is installed (MPI then only starts the
processes). `--as-torch` is accepted for the earlier spelling of the default.
"""
import argparse
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile

__all__ = ["find_mpiexec", "main", "parse_args"]


def find_mpiexec():
    """mpiexec next to the running Python (the mpich wheel puts it there), else on PATH."""
    here = os.path.dirname(os.path.abspath(sys.executable))
    for name in ("mpiexec", "mpirun"):
        p = os.path.join(here, name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    for name in ("mpiexec", "mpirun"):
        p = shutil.which(name)
        if p:
            return p
    return None


def _nproc(value):
    if value in ("auto", "cpu"):
        return os.cpu_count() or 1
    if value == "gpu":
        raise argparse.ArgumentTypeError("ndgrad.distributed runs on CPUs: --nproc_per_node=gpu "
                                         "is not available")
    n = int(value)
    if n < 1:
        raise argparse.ArgumentTypeError("--nproc_per_node must be at least 1")
    return n


def _nnodes(value):
    lo, _, hi = str(value).partition(":")
    lo = int(lo)
    if hi and int(hi) != lo:
        raise argparse.ArgumentTypeError("elastic --nnodes=MIN:MAX is not supported: MPI starts "
                                         "a fixed number of nodes")
    return lo


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m ndgrad.distributed.run",
        description="Start a data-parallel PyTorch-style script on several processes "
                    "through mpiexec, on ndgrad (`import torch` is ndgrad unless --no-alias).")
    add = p.add_argument
    add("--nproc_per_node", "--nproc-per-node", type=_nproc, default=1,
        help="processes per node (default 1; 'auto'/'cpu': one per CPU core)")
    add("--nnodes", type=_nnodes, default=1, help="number of nodes (machines)")
    add("--hosts", default=None,
        help="comma-separated host names for a run on several machines (passed to mpiexec)")
    add("--hostfile", default=None, help="an MPI host file (passed to mpiexec)")
    add("--mpiexec", default=None, help="the mpiexec to use (default: found automatically)")
    add("--mpiexec_args", "--mpiexec-args", default="",
        help="extra arguments for mpiexec, e.g. \"-bind-to core\"")
    add("--as-torch", "--as_torch", action="store_true",
        help="bind `import torch` in the script to ndgrad (the default)")
    add("--no-alias", "--no_alias", action="store_true",
        help="do not bind `import torch` to ndgrad: the script imports the installed torch")
    add("-m", "--module", action="store_true",
        help="run the script as a module (python -m)")
    add("--no_python", "--no-python", action="store_true",
        help="run the script as an executable instead of with Python")
    # torchrun's flags: accepted, MPI makes them unnecessary
    for flag in ("--node_rank", "--node-rank", "--master_addr", "--master-addr",
                 "--master_port", "--master-port", "--rdzv_backend", "--rdzv-backend",
                 "--rdzv_endpoint", "--rdzv-endpoint", "--rdzv_id", "--rdzv-id", "--rdzv_conf",
                 "--rdzv-conf", "--max_restarts", "--max-restarts", "--monitor_interval",
                 "--monitor-interval", "--start_method", "--start-method", "--role",
                 "--log_dir", "--log-dir", "--redirects", "--tee", "--local_addr",
                 "--local-addr", "--logs_specs", "--logs-specs", "--local-ranks-filter",
                 "--local_ranks_filter"):
        add(flag, default=None, help=argparse.SUPPRESS)
    add("--standalone", action="store_true", help=argparse.SUPPRESS)
    add("training_script", help="the script (or, with -m, the module) to run")
    add("training_script_args", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    if args.as_torch and args.no_alias:
        p.error("--as-torch and --no-alias contradict each other")
    args.as_torch = not args.no_alias
    if args.nnodes > 1 and not (args.hosts or args.hostfile):
        p.error(f"--nnodes={args.nnodes} needs the machines: --hosts=host1,host2,... or "
                f"--hostfile=FILE (MPI starts the processes there over ssh)")
    return args


def build_command(args, mpiexec):
    n = args.nproc_per_node * args.nnodes
    cmd = [mpiexec]
    if args.hosts:
        cmd += ["-hosts", args.hosts]
    if args.hostfile:
        cmd += ["-f" if _is_hydra(mpiexec) else "--hostfile", args.hostfile]
    if args.nnodes > 1:
        cmd += ["-ppn" if _is_hydra(mpiexec) else "--npernode", str(args.nproc_per_node)]
    cmd += args.mpiexec_args.split()
    cmd += ["-n", str(n)]
    if args.no_python:
        cmd += [args.training_script]
    else:
        cmd += [sys.executable, "-u", "-m", "ndgrad.distributed._worker"]
        if args.as_torch:
            cmd.append("--as-torch")
        if args.module:
            cmd.append("-m")
        cmd.append(args.training_script)
    return cmd + list(args.training_script_args)


def _is_hydra(mpiexec):
    """MPICH's (hydra) mpiexec, rather than Open MPI's."""
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return True
    return "Open MPI" not in out.stdout + out.stderr


def main(argv=None):
    args = parse_args(argv)
    mpiexec = args.mpiexec or find_mpiexec()
    if mpiexec is None:
        print("ndgrad.distributed.run: no mpiexec found next to this Python or on PATH; "
              "install one with `pip install 'ndgrad[distributed]'` (the mpich wheel)",
              file=sys.stderr)
        return 1
    cmd = build_command(args, mpiexec)
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")  # as torchrun: N processes share the cores
    with tempfile.TemporaryDirectory(prefix="ndgrad-run-") as status_dir:
        env["NDGRAD_RUN_STATUS_DIR"] = status_dir
        env["PYTHONPATH"] = os.pathsep.join(
            [p for p in [_package_root(), env.get("PYTHONPATH")] if p])
        proc = subprocess.Popen(cmd, env=env)
        try:
            rc = proc.wait()
        except KeyboardInterrupt:
            proc.send_signal(signal.SIGINT)
            try:
                rc = proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                rc = proc.wait()
            return 130
        first = _first_failure(status_dir)
    if first is not None:
        return first
    if rc < 0:   # mpiexec killed by a signal
        return 128 - rc
    return rc


def _package_root():
    """The directory holding the ndgrad package this launcher belongs to, so the ranks import
    the same ndgrad."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _first_failure(status_dir):
    """The exit code of the rank that failed first (the workers record theirs), or None."""
    found = []
    for path in glob.glob(os.path.join(status_dir, "rank*")):
        try:
            with open(path) as f:
                t, code = f.read().split()
            found.append((int(t), int(code)))
        except (OSError, ValueError):
            continue
    found = [x for x in found if x[1] != 0]
    return min(found)[1] if found else None


if __name__ == "__main__":
    sys.exit(main())
