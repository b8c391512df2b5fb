"""One rank of `python -m ndgrad.distributed.run`: set torchrun's environment variables from
MPI's, run the script (or module), and when it fails tear the whole job down (MPI_Abort) so no
other rank waits forever in a collective."""
import os
import runpy
import sys
import time
import traceback


def _env_from_mpi():
    """RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE from the variables mpiexec sets (MPICH's
    hydra, Open MPI); mpi4py itself only when neither is there."""
    e = os.environ
    for rank, size, lrank, lsize in (("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID",
                                      "MPI_LOCALNRANKS"),
                                     ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                                      "OMPI_COMM_WORLD_LOCAL_RANK",
                                      "OMPI_COMM_WORLD_LOCAL_SIZE")):
        if rank in e and size in e:
            vals = (e[rank], e[size], e.get(lrank, e[rank]), e.get(lsize, e[size]))
            break
    else:
        from mpi4py import MPI
        w = MPI.COMM_WORLD
        local = w.Split_type(MPI.COMM_TYPE_SHARED)
        vals = (w.Get_rank(), w.Get_size(), local.Get_rank(), local.Get_size())
        local.Free()
    for k, v in zip(("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"), vals):
        e[k] = str(v)
    e.setdefault("GROUP_RANK", "0")
    e.setdefault("MASTER_ADDR", "localhost")
    e.setdefault("MASTER_PORT", "29500")


def _record(code):
    d = os.environ.get("NDGRAD_RUN_STATUS_DIR")
    if d and code:
        try:
            with open(os.path.join(d, f"rank{os.environ.get('RANK', '0')}"), "w") as f:
                f.write(f"{time.time_ns()} {code}")
        except OSError:
            pass


def _abort(code):
    """End every rank of the job now."""
    sys.stdout.flush()
    sys.stderr.flush()
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        time.sleep(0.2)  # let mpiexec forward this rank's last output before the abort
        from mpi4py import MPI
        MPI.COMM_WORLD.Abort(code)
    os._exit(code)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    as_torch = module = False
    while argv and argv[0] in ("--as-torch", "-m"):
        flag = argv.pop(0)
        as_torch |= flag == "--as-torch"
        module |= flag == "-m"
    if not argv:
        print("usage: python -m ndgrad.distributed._worker [--as-torch] [-m] script [args]",
              file=sys.stderr)
        return 2
    _env_from_mpi()
    if as_torch:
        from .._alias import alias_torch  # (the same alias as python -m ndgrad.run)
        alias_torch()
    target, sys.argv = argv[0], argv
    try:
        if module:
            sys.path.insert(0, os.getcwd())
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
            runpy.run_path(target, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if e.code is not None and not isinstance(e.code, int):
            print(e.code, file=sys.stderr)
        if code:
            _record(code)
            _abort(code)
        return 0
    except BaseException:
        # one write: the whole traceback reaches mpiexec's output forwarding before the abort
        sys.stderr.write("".join(traceback.format_exc()))
        _record(1)
        _abort(1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
