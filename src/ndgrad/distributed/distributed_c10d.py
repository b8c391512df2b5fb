"""torch.distributed's process groups and collectives, on MPI (mpi4py).

Every process group is an MPI communicator of its own (a duplicate of COMM_WORLD for the default
group, a split of it for `new_group`), so user collectives never match internal traffic. Tensors
go to MPI as their own NumPy buffers, without a copy when they are C-contiguous (buffer-protocol
calls, MPI.IN_PLACE for the reductions). A copy is made only for non-contiguous tensors (the result
is copied back into the tensor passed), for float16 reductions (reduced in float32: MPI has no
portable half type) and for the list arguments of all_gather/gather/scatter/reduce_scatter (MPI
needs one contiguous buffer).

Agreement check. Before a collective each rank contributes six integers (which collective,
whether its arguments were valid, dtype, element count, reduce op, root) to one small Allgather;
when they differ, every rank raises a RuntimeError naming what each rank passed, instead of a
hang or silent garbage. It costs one small-message latency per call (a few microseconds on one
machine) and is skipped for DistributedDataParallel's own bucket reductions, whose shapes are
checked once at construction. NDGRAD_DISTRIBUTED_CHECKS=0 turns it off. Point-to-point messages
(send/recv) are not checked beyond their size: a receive of the wrong size raises.

mpi4py is imported on first use, never by `import ndgrad`.
"""
import enum
import os
import sys
import time

import numpy as np

from .. import _dtype as D

__all__ = [
    "Backend", "GroupMember", "ProcessGroup", "ReduceOp", "Work", "group", "all_gather",
    "all_gather_into_tensor", "all_gather_object", "all_reduce", "all_to_all", "all_to_all_single",
    "barrier", "broadcast", "broadcast_object_list", "destroy_process_group", "gather",
    "gather_object", "get_backend", "get_global_rank", "get_group_rank",
    "get_process_group_ranks", "get_rank", "get_world_size", "init_process_group", "irecv",
    "is_available", "is_gloo_available", "is_initialized", "is_mpi_available",
    "is_nccl_available", "is_torchelastic_launched", "isend", "new_group", "recv", "reduce",
    "reduce_scatter", "reduce_scatter_tensor", "scatter", "scatter_object_list", "send",
    "P2POp", "batch_isend_irecv", "send_object_list", "recv_object_list", "monitored_barrier",
    "get_node_local_rank", "is_backend_available", "DistError", "DistBackendError",
    "DistNetworkError", "DistStoreError", "QueueEmptyError",
]

ERR_NOT_INIT = ("Default process group has not been initialized, please make sure to call "
                "init_process_group.")

_MPI = None


def _mpi():
    """mpi4py's MPI module, imported (and MPI initialised) on first use."""
    global _MPI
    if _MPI is None:
        try:
            from mpi4py import MPI
        except ImportError as e:
            raise RuntimeError(
                "ndgrad.distributed runs on MPI through mpi4py, which is not installed: "
                "pip install 'ndgrad[distributed]' (mpi4py and the mpich wheel)") from e
        _MPI = MPI
    return _MPI


def is_available():
    """True when mpi4py (and an MPI library under it) can be imported."""
    try:
        _mpi()
    except Exception:
        return False
    return True


def is_mpi_available():
    return is_available()


def is_gloo_available():
    """"gloo" runs on the same MPI transport here."""
    return is_available()


def is_nccl_available():
    return False


def is_torchelastic_launched():
    return False


# ----------------------------------------------------------------------------------- ReduceOp

class RedOpType(enum.IntEnum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8

    def __repr__(self):
        return f"<RedOpType.{self.name}: {self.value}>"

    def __str__(self):
        return f"RedOpType.{self.name}"


class ReduceOp:
    """The reduction of all_reduce/reduce/reduce_scatter: ReduceOp.SUM, ... (torch's names)."""
    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM

    def __init__(self, op=RedOpType.SUM):
        self.op = RedOpType(op)


def _redop(op):
    if isinstance(op, ReduceOp):
        op = op.op
    try:
        op = RedOpType(op)
    except ValueError:
        raise ValueError(f"unknown reduce op {op!r}") from None
    if op is RedOpType.PREMUL_SUM:
        raise RuntimeError("ReduceOp.PREMUL_SUM is not supported by ndgrad.distributed's MPI "
                           "backend")
    return op


# ------------------------------------------------------------------------------------ Backend

class Backend(str):
    """A backend name: "mpi", or "gloo", which ndgrad runs on the same MPI transport."""
    UNDEFINED = "undefined"
    GLOO = "gloo"
    MPI = "mpi"
    NCCL = "nccl"
    UCC = "ucc"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: "
                             f"{type(name)}")
        return super().__new__(cls, name.lower())


def _backend_name(backend):
    if backend is None:
        return "gloo"
    name = str(backend).lower()
    # "cpu:gloo,cuda:nccl": the CPU entry is what runs here
    if ":" in name:
        parts = dict(p.split(":", 1) for p in name.split(",") if ":" in p)
        name = parts.get("cpu", next(iter(parts.values())))
    if name in ("gloo", "mpi"):
        return name
    if name == "nccl":
        raise RuntimeError("Distributed package doesn't have NCCL built in")
    raise ValueError(f"Invalid backend: '{backend}' (ndgrad.distributed offers 'mpi', and "
                     f"'gloo', which runs on the same MPI transport)")


# ------------------------------------------------------------------------------------- groups

class ProcessGroup:
    """A set of ranks with an MPI communicator of its own."""

    def __init__(self, comm, ranks, backend):
        self._comm = comm
        self._ranks = list(ranks)          # global ranks, in group-rank order
        self._backend = backend
        self._index = {g: i for i, g in enumerate(self._ranks)}

    def rank(self):
        return self._comm.Get_rank()

    def size(self):
        return self._comm.Get_size()

    def name(self):
        return self._backend

    def __repr__(self):
        return f"<ndgrad.distributed.ProcessGroup {self._backend} ranks={self._ranks}>"


class _World:
    def __init__(self):
        self.pg = None          # the default group
        self.groups = []        # every group this process created (to free them)
        self.excepthook = None


_world = _World()


class _NonMember:
    def __repr__(self):
        return "<ndgrad.distributed.GroupMember.NON_GROUP_MEMBER>"


class _GroupMemberMeta(type):
    @property
    def WORLD(cls):
        return _world.pg


class GroupMember(metaclass=_GroupMemberMeta):
    """GroupMember.WORLD: the default group; NON_GROUP_MEMBER: what new_group returns on ranks
    that are not in the group."""
    NON_GROUP_MEMBER = _NonMember()


class _GroupMeta(type):
    @property
    def WORLD(cls):
        return _world.pg


class group(metaclass=_GroupMeta):
    """group.WORLD: the default process group."""


def is_initialized():
    return _world.pg is not None


def _default():
    if _world.pg is None:
        raise ValueError(ERR_NOT_INIT)
    return _world.pg


def _group(g):
    """The ProcessGroup `g` names (None: the default one), or None on a non-member."""
    pg = _default()
    if g is None:
        return pg
    if g is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(g, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, got {type(g).__name__}")
    if g._comm is None:
        raise ValueError("the process group has been destroyed")
    return g


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Join the default process group. Ranks and the world size come from MPI (start the
    processes with `python -m ndgrad.distributed.run` or `mpiexec`); `init_method`, `store` and
    `timeout` are accepted for PyTorch scripts and not needed. Sets RANK, WORLD_SIZE,
    LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT for scripts that read them."""
    if _world.pg is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = _backend_name(backend)
    MPI = _mpi()
    world = MPI.COMM_WORLD
    r, n = world.Get_rank(), world.Get_size()
    if world_size is not None and world_size != -1 and world_size != n:
        raise ValueError(
            f"init_process_group: world_size={world_size} contradicts MPI, which started {n} "
            f"process{'es' if n != 1 else ''}: ndgrad.distributed takes the world size from MPI "
            f"(launch with `python -m ndgrad.distributed.run --nproc_per_node={world_size}` or "
            f"`mpiexec -n {world_size}`)")
    if rank is not None and rank != -1 and rank != r:
        raise ValueError(
            f"init_process_group: rank={rank} contradicts MPI, which gave this process rank {r}: "
            f"ndgrad.distributed takes ranks from MPI")
    comm = world.Dup()
    local = world.Split_type(MPI.COMM_TYPE_SHARED, key=r)
    local_rank, local_size = local.Get_rank(), local.Get_size()
    local.Free()
    master = comm.bcast(MPI.Get_processor_name() if r == 0 else None, root=0)
    os.environ["RANK"] = str(r)
    os.environ["WORLD_SIZE"] = str(n)
    os.environ["LOCAL_RANK"] = str(local_rank)
    os.environ["LOCAL_WORLD_SIZE"] = str(local_size)
    os.environ.setdefault("MASTER_ADDR", "localhost" if local_size == n else master)
    os.environ.setdefault("MASTER_PORT", "29500")
    _world.pg = ProcessGroup(comm, range(n), name)
    _world.groups = [_world.pg]
    if n > 1 and _world.excepthook is None:
        _install_abort_on_error()


def _install_abort_on_error():
    """An uncaught exception on one rank aborts the whole MPI job (as `python -m mpi4py` does):
    the other ranks would otherwise wait forever in their next collective."""
    previous = sys.excepthook

    def hook(exc_type, exc, tb):
        if _world.pg is None or issubclass(exc_type, (KeyboardInterrupt, SystemExit)):
            return previous(exc_type, exc, tb)
        try:
            if previous is sys.__excepthook__:   # one write, forwarded whole before the abort
                import traceback
                sys.stderr.write("".join(traceback.format_exception(exc_type, exc, tb)))
            else:
                previous(exc_type, exc, tb)
            sys.stderr.flush()
            sys.stdout.flush()
            time.sleep(0.2)   # let mpiexec forward this rank's last output
        finally:
            _MPI.COMM_WORLD.Abort(1)

    _world.excepthook = hook
    sys.excepthook = hook


def destroy_process_group(group=None):
    """Free `group`'s communicator; without an argument, every group and the default one."""
    if _world.pg is None:
        raise ValueError(ERR_NOT_INIT)
    if group is None or group is _world.pg:
        for g in _world.groups:
            if g._comm is not None:
                g._comm.Free()
                g._comm = None
        _world.groups = []
        _world.pg = None
        return
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    if group._comm is not None:
        group._comm.Free()
        group._comm = None
    if group in _world.groups:
        _world.groups.remove(group)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None):
    """A group of `ranks` (global ranks; all of them by default). Every rank of the default group
    must call it; ranks outside the group get GroupMember.NON_GROUP_MEMBER."""
    pg = _default()
    n = pg.size()
    if ranks is None:
        ranks = list(range(n))
    ranks = sorted(int(x) for x in ranks)
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"new_group: ranks {ranks} contain duplicates")
    for x in ranks:
        if x < 0 or x >= n:
            raise ValueError("The new group's rank should be within the world_size set by "
                             "init_process_group")
    MPI = _mpi()
    me = pg.rank()
    color = 0 if me in ranks else MPI.UNDEFINED
    comm = pg._comm.Split(color, ranks.index(me) if me in ranks else 0)
    if comm == MPI.COMM_NULL:
        return GroupMember.NON_GROUP_MEMBER
    g = ProcessGroup(comm, ranks, _backend_name(backend) if backend else pg._backend)
    _world.groups.append(g)
    return g


def get_rank(group=None):
    """This process's rank in `group` (-1 when it is not a member)."""
    pg = _default()
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return _group(group).rank() if group is not None else pg.rank()


def get_world_size(group=None):
    """The number of ranks in `group` (-1 when this process is not a member)."""
    _default()
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return _group(group).size()


def get_backend(group=None):
    _default()
    if group is GroupMember.NON_GROUP_MEMBER:
        raise ValueError("Invalid process group specified")
    return Backend(_group(group)._backend)


def get_process_group_ranks(group):
    pg = _group(group)
    return list(pg._ranks)


def get_group_rank(group, global_rank):
    pg = _group(group)
    if global_rank not in pg._index:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg._index[global_rank]


def get_global_rank(group, group_rank):
    pg = _group(group)
    if not 0 <= group_rank < len(pg._ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
    return pg._ranks[group_rank]


def _root(pg, rank, group_rank, what):
    """A root given as a global rank (src=/dst=) or a group rank (group_src=/group_dst=), as the
    group rank MPI needs."""
    if group_rank is not None:
        if rank is not None and pg._ranks[group_rank] != rank:
            raise ValueError(f"Can only specify one of {what} or group_{what}")
        if not 0 <= group_rank < pg.size():
            raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
        return group_rank
    if rank is None:
        rank = 0
    if rank not in pg._index:
        raise ValueError(f"Global rank {rank} is not part of group {pg}")
    return pg._index[rank]


# ------------------------------------------------------------------------------------- Work

class Work:
    """The handle of an async_op=True call: wait() blocks until the MPI request completes and the
    tensors passed hold the result; is_completed() tests it without blocking."""

    def __init__(self, requests, finish=None, result=()):
        self._requests = requests
        self._finish = finish
        self._result = list(result)
        self._done = False
        self._future = None

    def _complete(self):
        self._done = True
        self._requests = None
        if self._finish is not None:
            f, self._finish = self._finish, None
            f()
        if self._future is not None and self._future._pending():
            self._future.set_result(self._result)

    def wait(self, timeout=None):
        if not self._done:
            _wait_all(self._requests)
            self._complete()
        return True

    def is_completed(self):
        if not self._done and _mpi().Request.Testall(self._requests):
            self._complete()
        return self._done

    def is_success(self):
        return self.is_completed()

    def exception(self):
        return None

    def result(self):
        return list(self._result)

    def get_future(self):
        from ..futures import Future
        if self._future is None:
            fut = Future()
            self._future = fut
            if self._done:
                fut.set_result(self._result)
            else:
                fut._force = self.wait
                fut._poll = self.is_completed
        return self._future

    def synchronize(self):
        self.wait()


def _wait_all(requests, spin=2e-4):
    """Request.Waitall, but after `spin` seconds of busy testing give the CPU away between
    tests: ranks that outnumber the cores (or share them with other work) would otherwise burn
    the time slice of the very rank they wait for."""
    MPI = _MPI
    if MPI.Request.Testall(requests):
        return
    end = time.perf_counter() + spin
    while time.perf_counter() < end:
        if MPI.Request.Testall(requests):
            return
    while not MPI.Request.Testall(requests):
        os.sched_yield()


def _done(async_op, result=()):
    """What a collective returns once it has finished: None, or a completed Work."""
    if not async_op:
        return None
    w = Work([], None, result)
    w._done = True
    return w


def _run(async_op, start, blocking, finish=None, result=()):
    """Start (async) or run (blocking) an MPI operation, then `finish` (copy back, divide)."""
    if async_op:
        req = start()
        return Work(req if isinstance(req, list) else [req], finish, result)
    blocking()
    if finish is not None:
        finish()
    return None


# ----------------------------------------------------------------------------- buffers, types

_CODES = {d: i for i, d in enumerate(D.ALL)}
_TYPE_STRING = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
                "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _tensor(t, name, what="tensor"):
    from .._tensor import Tensor
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}(): argument '{what}' must be Tensor, not {type(t).__name__}")
    a = t._data
    if not isinstance(a, np.ndarray):
        raise RuntimeError(f"{name}: ndgrad.distributed handles CPU (NumPy) tensors only")
    return a


def _bytes(a):
    """A contiguous uint8 view of array `a` (None when `a` is not C-contiguous)."""
    if not a.flags.c_contiguous:
        return None
    return a.reshape(-1).view(np.uint8)


class _Move:
    """`a`'s bytes as one contiguous buffer: a view when `a` is C-contiguous, else a copy that
    `back()` writes into `a` (for outputs)."""
    __slots__ = ("a", "buf", "copied")

    def __init__(self, a, fill=True):
        self.a = a
        b = _bytes(a)
        self.copied = b is None
        if b is None:
            b = (np.ascontiguousarray(a) if fill else np.empty(a.shape, a.dtype)
                 ).reshape(-1).view(np.uint8)
        self.buf = b

    def back(self):
        if self.copied:
            self.a[...] = self.buf.view(self.a.dtype).reshape(self.a.shape)


_TYPES = {}   # NumPy dtype -> predefined MPI datatype (filled on first use)
_RED = {}     # RedOpType -> MPI.Op


def _mpi_type(np_dtype):
    """The predefined MPI datatype of a NumPy dtype (MPI's reductions are defined on these)."""
    t = _TYPES.get(np_dtype)
    if t is None:
        MPI = _MPI
        t = _TYPES[np_dtype] = {
            "float32": MPI.FLOAT, "float64": MPI.DOUBLE, "int8": MPI.INT8_T,
            "int16": MPI.INT16_T, "int32": MPI.INT32_T, "int64": MPI.INT64_T,
            "uint8": MPI.UINT8_T, "complex64": MPI.C_FLOAT_COMPLEX,
            "complex128": MPI.C_DOUBLE_COMPLEX}[np_dtype.name]
    return t


def _mpi_op(op):
    if not _RED:
        MPI = _MPI
        _RED.update({RedOpType.SUM: MPI.SUM, RedOpType.AVG: MPI.SUM,
                     RedOpType.PRODUCT: MPI.PROD, RedOpType.MIN: MPI.MIN,
                     RedOpType.MAX: MPI.MAX, RedOpType.BAND: MPI.BAND,
                     RedOpType.BOR: MPI.BOR, RedOpType.BXOR: MPI.BXOR})
    return _RED[op]


def _check_reduce_dtype(name, dtype, op):
    """PyTorch's errors for reductions a dtype does not have."""
    if dtype.is_complex and op not in (RedOpType.SUM, RedOpType.AVG):
        raise ValueError(f"{name} does not support {op} on complex tensors")
    if op in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR) and (
            dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")
    if op is RedOpType.AVG and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_TYPE_STRING[dtype.name]}")


class _Reduce:
    """The buffer MPI reduces for array `a`, with its MPI datatype and op; `back()` finishes:
    AVG's division, and the copy into `a` when a staging buffer was needed (non-contiguous,
    float16 reduced as float32, bool as uint8)."""
    __slots__ = ("a", "buf", "mtype", "mop", "copied", "avg")

    def __init__(self, a, dtype, op, fill=True):
        self.a = a
        self.avg = op is RedOpType.AVG
        mop = _mpi_op(op)
        if dtype is D.float16:
            buf, self.copied = a.astype(np.float32).reshape(-1), True
        elif dtype is D.bool:
            # bools reduce as 0/1 bytes: SUM is logical or, PRODUCT logical and
            mop = {RedOpType.SUM: _MPI.LOR, RedOpType.PRODUCT: _MPI.LAND}.get(op, mop)
            b = _bytes(a)
            buf, self.copied = (b, False) if b is not None else (
                a.astype(np.uint8).reshape(-1), True)
        else:
            buf, self.copied = (a.reshape(-1), False) if a.flags.c_contiguous else (
                (np.ascontiguousarray(a) if fill else np.empty(a.shape, a.dtype)).reshape(-1),
                True)
        self.buf, self.mop = buf, mop
        self.mtype = _mpi_type(buf.dtype)

    def spec(self, buf=None):
        b = self.buf if buf is None else buf
        return [b, b.size, self.mtype]

    def back(self, size):
        if self.avg:
            np.divide(self.buf, size, out=self.buf, casting="unsafe")
        if self.copied:
            self.a[...] = self.buf.reshape(self.a.shape).astype(self.a.dtype, copy=False)


# ------------------------------------------------------------------------- agreement check

_CHECKS = os.environ.get("NDGRAD_DISTRIBUTED_CHECKS", "1") != "0"
_OPS = ["all_reduce", "reduce", "broadcast", "all_gather", "all_gather_into_tensor", "gather",
        "scatter", "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "all_to_all_single",
        "barrier"]
_OP_CODE = {n: i for i, n in enumerate(_OPS)}


def _agree(pg, name, err, dtype=None, numel=0, op=0, root=0, check=True):
    """Raise on every rank when the ranks' calls differ or one rank's arguments were invalid:
    one Allgather of six integers. `err` is this rank's own argument error (or None)."""
    if not (check and _CHECKS):
        if err is not None:
            raise err
        return
    mine = np.array([_OP_CODE[name], err is not None, _CODES.get(dtype, -1), numel, int(op),
                     root], dtype=np.int64)
    n = pg.size()
    if n == 1:
        if err is not None:
            raise err
        return
    every = np.empty((n, 6), dtype=np.int64)
    pg._comm.Allgather(mine, every)
    if err is not None:
        raise err
    if every.tobytes() == mine.tobytes() * n:
        return
    bad = [r for r in range(n) if every[r, 1]]
    if bad:
        raise RuntimeError(
            f"ndgrad.distributed.{name}: rank{'s' if len(bad) > 1 else ''} "
            f"{', '.join(map(str, (pg._ranks[r] for r in bad)))} raised an error for this call "
            f"(see its output), so no data was exchanged")

    def describe(row):
        what = _OPS[row[0]] if 0 <= row[0] < len(_OPS) else "?"
        dt = D.ALL[row[2]] if 0 <= row[2] < len(D.ALL) else None
        s = f"{what} of {dt} with {row[3]} element{'s' if row[3] != 1 else ''}"
        if what in ("all_reduce", "reduce", "reduce_scatter", "reduce_scatter_tensor"):
            s += f", {RedOpType(row[4])}"
        if what in ("reduce", "broadcast", "gather", "scatter"):
            s += f", root {pg._ranks[row[5]] if 0 <= row[5] < n else row[5]}"
        return s
    parts = "; ".join(f"rank {pg._ranks[r]}: {describe(every[r])}" for r in range(n))
    raise RuntimeError(f"ndgrad.distributed.{name}: the ranks' calls do not match ({parts}). "
                       f"Every rank must pass tensors of the same dtype and size (and the same "
                       f"op and root)")


def _sig(tensor, a):
    """(dtype, element count) for the agreement check; (None, 0) for an invalid argument."""
    return (tensor.dtype, a.size) if a is not None else (None, 0)


def _validate(fn):
    """Run fn() (argument checks); its exception, to raise on every rank after _agree."""
    try:
        fn()
    except Exception as e:
        return e
    return None


# -------------------------------------------------------------------------------- collectives

def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False, _check=True):
    """Reduce `tensor` over the group, in place on every rank."""
    pg = _group(group)
    if pg is None:
        return None
    got = {}

    def check():
        got["a"] = _tensor(tensor, "all_reduce")
        got["op"] = _redop(op)
        _check_reduce_dtype("all_reduce", tensor.dtype, got["op"])
    err = _validate(check)
    a, op = got.get("a"), got.get("op", 0)
    _agree(pg, "all_reduce", err, *_sig(tensor, a), op, 0, _check)
    r = _Reduce(a, tensor.dtype, op)
    MPI, comm, n = _MPI, pg._comm, pg.size()
    return _run(async_op,
                lambda: comm.Iallreduce(MPI.IN_PLACE, r.spec(), r.mop),
                lambda: comm.Allreduce(MPI.IN_PLACE, r.spec(), r.mop),
                lambda: r.back(n), [tensor])


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce `tensor` over the group into rank `dst`'s tensor (the others' are unchanged)."""
    pg = _group(group)
    if pg is None:
        return None
    got = {}

    def check():
        got["a"] = _tensor(tensor, "reduce")
        got["op"] = _redop(op)
        got["root"] = _root(pg, dst, group_dst, "dst")
        _check_reduce_dtype("reduce", tensor.dtype, got["op"])
    err = _validate(check)
    a, op, root = got.get("a"), got.get("op", 0), got.get("root", 0)
    _agree(pg, "reduce", err, *_sig(tensor, a), op, root)
    MPI, comm, n = _MPI, pg._comm, pg.size()
    if comm.Get_rank() == root:
        r = _Reduce(a, tensor.dtype, op)
        return _run(async_op,
                    lambda: comm.Ireduce(MPI.IN_PLACE, r.spec(), r.mop, root),
                    lambda: comm.Reduce(MPI.IN_PLACE, r.spec(), r.mop, root),
                    lambda: r.back(n), [tensor])
    r = _Reduce(a, tensor.dtype, op)
    return _run(async_op,
                lambda: comm.Ireduce(r.spec(), None, r.mop, root),
                lambda: comm.Reduce(r.spec(), None, r.mop, root), None, [tensor])


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None, _check=True):
    """Copy rank `src`'s tensor into every rank's tensor, in place."""
    pg = _group(group)
    if pg is None:
        return None
    got = {}

    def check():
        got["a"] = _tensor(tensor, "broadcast")
        got["root"] = _root(pg, src, group_src, "src")
    err = _validate(check)
    a, root = got.get("a"), got.get("root", 0)
    _agree(pg, "broadcast", err, *_sig(tensor, a), 0, root, _check)
    m = _Move(a)
    comm = pg._comm
    return _run(async_op, lambda: comm.Ibcast([m.buf, _MPI.BYTE], root),
                lambda: comm.Bcast([m.buf, _MPI.BYTE], root), m.back, [tensor])


def _same_as(name, t, ref, a_ref, what):
    a = _tensor(t, name, what)
    if t.dtype is not ref.dtype:
        raise TypeError(f"{name}: every tensor in {what} must have the input's dtype "
                        f"{ref.dtype}, got {t.dtype}")
    if a.size != a_ref.size:
        raise ValueError(f"{name}: every tensor in {what} must have the input's "
                         f"{a_ref.size} elements, got {a.size}")
    return a


def _list_check(name, lst, n, what):
    if not isinstance(lst, (list, tuple)):
        raise TypeError(f"{name}: {what} must be a list of tensors, got {type(lst).__name__}")
    if len(lst) != n:
        raise ValueError(f"{name}: {what} must hold one tensor per rank of the group ({n}), "
                         f"got {len(lst)}")


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[r] = rank r's `tensor`, on every rank."""
    pg = _group(group)
    if pg is None:
        return None
    a = _tensor(tensor, "all_gather")
    n = pg.size()

    def check():
        _list_check("all_gather", tensor_list, n, "tensor_list")
        for t in tensor_list:
            _same_as("all_gather", t, tensor, a, "tensor_list")
    _agree(pg, "all_gather", _validate(check), tensor.dtype, a.size)
    send = _Move(a).buf
    recv = np.empty((n, send.size), np.uint8)
    comm = pg._comm

    def finish():
        for t, row in zip(tensor_list, recv):
            t._data[...] = row.view(t._data.dtype).reshape(t._data.shape)
    return _run(async_op, lambda: comm.Iallgather([send, _MPI.BYTE], [recv, _MPI.BYTE]),
                lambda: comm.Allgather([send, _MPI.BYTE], [recv, _MPI.BYTE]), finish,
                list(tensor_list))


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Every rank's input, concatenated (rank order) into `output_tensor`."""
    pg = _group(group)
    if pg is None:
        return None
    a = _tensor(input_tensor, "all_gather_into_tensor", "input_tensor")
    n = pg.size()

    def check():
        o = _tensor(output_tensor, "all_gather_into_tensor", "output_tensor")
        if output_tensor.dtype is not input_tensor.dtype:
            raise TypeError("output tensor must have the same type as input tensor")
        if o.size != n * a.size:
            raise ValueError("output tensor size must be equal to world_size times input "
                             "tensor size")
    _agree(pg, "all_gather_into_tensor", _validate(check), input_tensor.dtype, a.size)
    send = _Move(a).buf
    out = _Move(output_tensor._data, fill=False)
    comm = pg._comm
    return _run(async_op, lambda: comm.Iallgather([send, _MPI.BYTE], [out.buf, _MPI.BYTE]),
                lambda: comm.Allgather([send, _MPI.BYTE], [out.buf, _MPI.BYTE]), out.back,
                [output_tensor])


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """gather_list[r] = rank r's `tensor`, on rank `dst` (gather_list only there)."""
    pg = _group(group)
    if pg is None:
        return None
    a = _tensor(tensor, "gather")
    root = _root(pg, dst, group_dst, "dst")
    n, comm = pg.size(), pg._comm
    me = comm.Get_rank()

    def check():
        if me == root:
            _list_check("gather", gather_list, n, "gather_list")
            for t in gather_list:
                _same_as("gather", t, tensor, a, "gather_list")
        elif gather_list:
            raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination "
                             "ranks.")
    _agree(pg, "gather", _validate(check), tensor.dtype, a.size, 0, root)
    send = _Move(a).buf
    if me != root:
        return _run(async_op, lambda: comm.Igather([send, _MPI.BYTE], None, root),
                    lambda: comm.Gather([send, _MPI.BYTE], None, root), None, [])
    recv = np.empty((n, send.size), np.uint8)

    def finish():
        for t, row in zip(gather_list, recv):
            t._data[...] = row.view(t._data.dtype).reshape(t._data.shape)
    return _run(async_op, lambda: comm.Igather([send, _MPI.BYTE], [recv, _MPI.BYTE], root),
                lambda: comm.Gather([send, _MPI.BYTE], [recv, _MPI.BYTE], root), finish,
                list(gather_list))


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Rank r's `tensor` = rank `src`'s scatter_list[r]."""
    pg = _group(group)
    if pg is None:
        return None
    a = _tensor(tensor, "scatter")
    root = _root(pg, src, group_src, "src")
    n, comm = pg.size(), pg._comm
    me = comm.Get_rank()

    def check():
        if me == root:
            _list_check("scatter", scatter_list, n, "scatter_list")
            for t in scatter_list:
                _same_as("scatter", t, tensor, a, "scatter_list")
        elif scatter_list:
            raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source "
                             "ranks.")
    _agree(pg, "scatter", _validate(check), tensor.dtype, a.size, 0, root)
    out = _Move(a, fill=False)
    send = None
    if me == root:
        send = np.empty((n, out.buf.size), np.uint8)
        for row, t in zip(send, scatter_list):
            row.view(a.dtype).reshape(a.shape)[...] = t._data.reshape(a.shape)
        send = [send, _MPI.BYTE]
    return _run(async_op, lambda: comm.Iscatter(send, [out.buf, _MPI.BYTE], root),
                lambda: comm.Scatter(send, [out.buf, _MPI.BYTE], root), out.back, [tensor])


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Rank r's `output` = the reduction over ranks of their input_list[r]."""
    pg = _group(group)
    if pg is None:
        return None
    a = _tensor(output, "reduce_scatter", "output")
    op = _redop(op)
    n = pg.size()

    def check():
        _check_reduce_dtype("reduce_scatter", output.dtype, op)
        _list_check("reduce_scatter", input_list, n, "input_list")
        for t in input_list:
            _same_as("reduce_scatter", t, output, a, "input_list")
    _agree(pg, "reduce_scatter", _validate(check), output.dtype, a.size, op)
    stacked = np.empty((n,) + a.shape, a.dtype)
    for i, t in enumerate(input_list):
        stacked[i] = t._data.reshape(a.shape)
    return _reduce_scatter_arrays(pg, stacked, a, output, op, async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Rank r's `output` = the reduction over ranks of the r-th chunk of their `input`."""
    pg = _group(group)
    if pg is None:
        return None
    a = _tensor(output, "reduce_scatter_tensor", "output")
    op = _redop(op)
    n = pg.size()

    def check():
        i = _tensor(input, "reduce_scatter_tensor", "input")
        _check_reduce_dtype("reduce_scatter_tensor", output.dtype, op)
        if input.dtype is not output.dtype:
            raise TypeError("input tensor must be the same type as the output tensor.")
        if i.size != n * a.size:
            raise ValueError("input tensor must be the same size as output size times world "
                             "size")
    _agree(pg, "reduce_scatter_tensor", _validate(check), output.dtype, a.size, op)
    return _reduce_scatter_arrays(pg, input._data, a, output, op, async_op)


def _reduce_scatter_arrays(pg, src, a, output, op, async_op):
    comm, n = pg._comm, pg.size()
    send = _Reduce(src, output.dtype, op)
    r = _Reduce(a, output.dtype, op, fill=False)
    send_spec = [send.buf, r.buf.size, send.mtype]  # (mpi4py counts one block of the send)
    return _run(async_op,
                lambda: comm.Ireduce_scatter_block(send_spec, r.spec(), r.mop),
                lambda: comm.Reduce_scatter_block(send_spec, r.spec(), r.mop),
                lambda: r.back(n), [output])


def _exchange_counts(pg, name, err, dtype, send_counts, recv_counts, check=True):
    """all_to_all's agreement: the usual check, then each rank learns what the others will send
    it (one Alltoall of counts) and every rank raises if any rank expects another size."""
    _agree(pg, name, err, dtype, 0, 0, 0, check)
    if not _CHECKS or pg.size() == 1:
        return
    comm = pg._comm
    incoming = np.empty(pg.size(), np.int64)
    comm.Alltoall(np.asarray(send_counts, np.int64), incoming)
    bad = np.array([int(not np.array_equal(incoming, np.asarray(recv_counts, np.int64)))],
                   np.int64)
    comm.Allreduce(_MPI.IN_PLACE, bad, _MPI.MAX)
    if bad[0]:
        raise RuntimeError(
            f"ndgrad.distributed.{name}: the sizes the ranks send do not match the sizes the "
            f"receiving ranks expect (rank {pg._ranks[comm.Get_rank()]} expects "
            f"{list(map(int, recv_counts))} elements from ranks {pg._ranks} and will get "
            f"{incoming.tolist()})")


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Rank r's output_tensor_list[s] = rank s's input_tensor_list[r]."""
    pg = _group(group)
    if pg is None:
        return None
    n, comm = pg.size(), pg._comm
    dtype = [None]

    def check():
        _list_check("all_to_all", output_tensor_list, n, "output_tensor_list")
        _list_check("all_to_all", input_tensor_list, n, "input_tensor_list")
        for t in list(output_tensor_list) + list(input_tensor_list):
            _tensor(t, "all_to_all")
        dt = {t.dtype for t in list(output_tensor_list) + list(input_tensor_list)}
        if len(dt) != 1:
            raise TypeError("all_to_all: every input and output tensor must have the same "
                            "dtype")
        dtype[0] = dt.pop()
    err = _validate(check)
    ok = err is None
    send_counts = [t._data.size for t in input_tensor_list] if ok else [0] * n
    recv_counts = [t._data.size for t in output_tensor_list] if ok else [0] * n
    _exchange_counts(pg, "all_to_all", err, dtype[0], send_counts, recv_counts)
    item = dtype[0].itemsize
    send = np.concatenate([t._data.reshape(-1).view(np.uint8) if t._data.flags.c_contiguous
                           else np.ascontiguousarray(t._data).reshape(-1).view(np.uint8)
                           for t in input_tensor_list]) if n else np.empty(0, np.uint8)
    recv = np.empty(sum(recv_counts) * item, np.uint8)
    sc = [c * item for c in send_counts]
    rc = [c * item for c in recv_counts]
    sspec = [send, (sc, _offsets(sc)), _MPI.BYTE]
    rspec = [recv, (rc, _offsets(rc)), _MPI.BYTE]

    def finish():
        off = 0
        for t, c in zip(output_tensor_list, rc):
            t._data[...] = recv[off:off + c].view(t._data.dtype).reshape(t._data.shape)
            off += c
    return _run(async_op, lambda: comm.Ialltoallv(sspec, rspec),
                lambda: comm.Alltoallv(sspec, rspec), finish, list(output_tensor_list))


def _offsets(counts):
    out, s = [], 0
    for c in counts:
        out.append(s)
        s += c
    return out


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """Split `input` along dim 0 (equally, or by input_split_sizes), send piece s to rank s, and
    concatenate what arrives into `output` (split by output_split_sizes)."""
    pg = _group(group)
    if pg is None:
        return None
    n, comm = pg.size(), pg._comm
    counts = [None, None]

    def split(t, sizes, what):
        a = _tensor(t, "all_to_all_single", what)
        rows = a.shape[0] if a.ndim else 1
        row = a.size // rows if rows else 0
        if sizes is None or len(sizes) == 0:
            if rows % n:
                raise ValueError(f"all_to_all_single: {what}'s first dimension ({rows}) must be "
                                 f"divisible by the group size ({n}) without split sizes")
            return [rows // n * row] * n
        sizes = [int(s) for s in sizes]
        if len(sizes) != n:
            raise ValueError(f"all_to_all_single: {what} split sizes must have one entry per "
                             f"rank ({n}), got {len(sizes)}")
        if sum(sizes) != rows:
            raise ValueError(f"Split sizes doesn't match total dim 0 size")
        return [s * row for s in sizes]

    def check():
        counts[0] = split(input, input_split_sizes, "input")
        counts[1] = split(output, output_split_sizes, "output")
        if input.dtype is not output.dtype:
            raise TypeError("all_to_all_single: input and output must have the same dtype")
    err = _validate(check)
    sc, rc = counts if err is None else ([0] * n, [0] * n)
    dtype = getattr(output, "dtype", None)
    _exchange_counts(pg, "all_to_all_single", err, dtype, sc, rc)
    item = dtype.itemsize
    send = _Move(input._data).buf
    out = _Move(output._data, fill=False)
    sc, rc = [c * item for c in sc], [c * item for c in rc]
    sspec = [send, (sc, _offsets(sc)), _MPI.BYTE]
    rspec = [out.buf, (rc, _offsets(rc)), _MPI.BYTE]
    return _run(async_op, lambda: comm.Ialltoallv(sspec, rspec),
                lambda: comm.Alltoallv(sspec, rspec), out.back, [output])


def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every rank of the group has reached the barrier."""
    pg = _group(group)
    if pg is None:
        return None
    _agree(pg, "barrier", None)
    comm = pg._comm
    return _run(async_op, comm.Ibarrier, comm.Barrier)


# -------------------------------------------------------------------------- point to point

def _peer(pg, rank, group_rank, what):
    if group_rank is not None:
        return group_rank
    if rank not in pg._index:
        raise ValueError(f"Global rank {rank} is not part of group {pg}")
    return pg._index[rank]


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send `tensor` to rank `dst` (blocks until the buffer may be reused)."""
    w = _isend(tensor, dst, group, tag, group_dst, "send")
    if w is not None:
        w.wait()


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Start sending `tensor` to rank `dst`; a Work to wait on."""
    return _isend(tensor, dst, group, tag, group_dst, "isend")


def _isend(tensor, dst, group, tag, group_dst, name):
    pg = _group(group)
    if pg is None:
        return None
    a = _tensor(tensor, name)
    peer = _peer(pg, dst, group_dst, "dst")
    if peer == pg.rank():
        raise ValueError("Invalid destination rank: should not be the same as rank of the "
                         "current process.")
    buf = _Move(a).buf
    req = pg._comm.Isend([buf, _MPI.BYTE], peer, tag)
    return Work([req], None, [tensor])


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into `tensor` from rank `src` (any rank when None); returns the sender's rank."""
    w = _irecv(tensor, src, group, tag, group_src, "recv")
    if w is None:
        return -1
    w.wait()
    return w._source


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Start receiving into `tensor`; a Work to wait on."""
    return _irecv(tensor, src, group, tag, group_src, "irecv")


def _irecv(tensor, src, group, tag, group_src, name):
    pg = _group(group)
    if pg is None:
        return None
    a = _tensor(tensor, name)
    MPI = _MPI
    if src is None and group_src is None:
        peer = MPI.ANY_SOURCE
    else:
        peer = _peer(pg, src, group_src, "src")
        if peer == pg.rank():
            raise ValueError("Invalid source rank: should not be the same as rank of the "
                             "current process.")
    out = _Move(a, fill=False)
    status = MPI.Status()
    req = pg._comm.Irecv([out.buf, MPI.BYTE], peer, tag)
    w = Work([req], None, [tensor])

    def finish():
        w._source = pg._ranks[status.Get_source()]
        got = status.Get_count(MPI.BYTE)
        if got != out.buf.size:
            raise RuntimeError(f"{name}: expected {out.buf.size} bytes ({a.size} elements of "
                               f"{tensor.dtype}) but the message from rank {w._source} has "
                               f"{got}")
        out.back()

    def wait(timeout=None):
        if not w._done:
            try:
                req.Wait(status)
            except MPI.Exception as e:
                raise RuntimeError(f"{name}: {e.Get_error_string()} (the message is larger "
                                   f"than the tensor: {a.size} elements of {tensor.dtype})"
                                   ) from None
            w._requests = None
            w._done = True
            finish()
        return True

    def is_completed():
        if not w._done:
            done = req.Test(status)
            if done:
                w._requests = None
                w._done = True
                finish()
        return w._done
    w.wait, w.is_completed = wait, is_completed
    return w


# ------------------------------------------------------------------------ object collectives

def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """object_list[:] = rank src's object_list (any picklable objects)."""
    pg = _group(group)
    if pg is None:
        return
    root = _root(pg, src, group_src, "src")
    objs = pg._comm.bcast(list(object_list) if pg.rank() == root else None, root=root)
    if len(objs) != len(object_list):
        raise RuntimeError(f"broadcast_object_list: rank {pg._ranks[root]} sent "
                           f"{len(objs)} objects, this rank's list holds {len(object_list)}")
    object_list[:] = objs


def all_gather_object(object_list, obj, group=None):
    """object_list[r] = rank r's obj, on every rank."""
    pg = _group(group)
    if pg is None:
        return
    objs = pg._comm.allgather(obj)
    if len(object_list) != len(objs):
        raise ValueError(f"all_gather_object: object_list must hold one entry per rank of the "
                         f"group ({len(objs)}), got {len(object_list)}")
    object_list[:] = objs


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """object_gather_list[r] = rank r's obj, on rank dst."""
    pg = _group(group)
    if pg is None:
        return
    root = _root(pg, dst, group_dst, "dst")
    objs = pg._comm.gather(obj, root=root)
    if pg.rank() == root:
        if object_gather_list is None or len(object_gather_list) != len(objs):
            raise ValueError(f"gather_object: object_gather_list must hold one entry per rank "
                             f"of the group ({len(objs)}) on the destination rank")
        object_gather_list[:] = objs


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None,
                        group=None, group_src=None):
    """scatter_object_output_list[0] = rank src's scatter_object_input_list[rank]."""
    pg = _group(group)
    if pg is None:
        return
    root = _root(pg, src, group_src, "src")
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at "
                         "least 1.")
    objs = None
    if pg.rank() == root:
        objs = list(scatter_object_input_list)
        if len(objs) != pg.size():
            err = ValueError(f"scatter_object_list: scatter_object_input_list must hold one "
                             f"entry per rank ({pg.size()}), got {len(objs)}")
            pg._comm.scatter([_ScatterError(str(err))] * pg.size(), root=root)
            raise err
    got = pg._comm.scatter(objs, root=root)
    if isinstance(got, _ScatterError):
        raise ValueError(f"{got.msg} on rank {pg._ranks[root]}")
    scatter_object_output_list[0] = got


class _ScatterError:
    """What the other ranks receive when the source rank's scatter_object_list was invalid."""

    def __init__(self, msg):
        self.msg = msg


# ----------------------------------------------------------------- batched p2p, small helpers

class P2POp:
    """One point-to-point operation for batch_isend_irecv: op is isend or irecv."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type "
                             "``torch.distributed.isend`` or ``torch.distributed.irecv``.")
        self.op, self.tensor, self.peer, self.group, self.tag = op, tensor, peer, group, tag
        self.group_peer = group_peer

    def __repr__(self):
        return (f"P2POp(op={self.op.__name__}, peer={self.peer}, tag={self.tag}, "
                f"tensor={tuple(self.tensor.shape)})")


def batch_isend_irecv(p2p_op_list):
    """Start every operation of the list (all non-blocking); their Work handles."""
    if not isinstance(p2p_op_list, list) or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    works = []
    for p in p2p_op_list:
        if p.op is isend:
            works.append(isend(p.tensor, p.peer, p.group, p.tag, p.group_peer))
        else:
            works.append(irecv(p.tensor, p.peer, p.group, p.tag, p.group_peer))
    return works


def send_object_list(object_list, dst=None, group=None, device=None, group_dst=None):
    """Send the (picklable) objects of object_list to rank dst."""
    pg = _group(group)
    if pg is None:
        return
    peer = _peer(pg, dst, group_dst, "dst")
    if peer == pg.rank():
        raise ValueError("Invalid destination rank: should not be the same as rank of the "
                         "current process.")
    pg._comm.send(list(object_list), dest=peer, tag=_OBJ_TAG)


def recv_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Fill object_list in place with the objects rank src sent; returns the sender's rank."""
    pg = _group(group)
    if pg is None:
        return -1
    MPI = _MPI
    peer = MPI.ANY_SOURCE if src is None and group_src is None else \
        _peer(pg, src, group_src, "src")
    status = MPI.Status()
    objs = pg._comm.recv(source=peer, tag=_OBJ_TAG, status=status)
    sender = pg._ranks[status.Get_source()]
    if len(objs) != len(object_list):
        raise RuntimeError(f"recv_object_list: rank {sender} sent {len(objs)} objects, the "
                           f"list here holds {len(object_list)}")
    object_list[:] = objs
    return sender


_OBJ_TAG = 2 ** 20 + 7  # object messages never match tensor messages (user tags are small)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that raises a RuntimeError after `timeout` (a timedelta or seconds) instead of
    waiting forever for a rank that does not arrive."""
    pg = _group(group)
    if pg is None:
        return
    limit = None if timeout is None else getattr(timeout, "total_seconds", lambda: timeout)()
    req = pg._comm.Ibarrier()
    end = None if limit is None else time.perf_counter() + limit
    while not req.Test():
        if end is not None and time.perf_counter() > end:
            raise RuntimeError(f"Rank {pg._ranks[pg.rank()]}: monitored_barrier timed out "
                               f"after {limit} s: not every rank of the group reached it")
        os.sched_yield()


def get_node_local_rank(fallback_rank=None):
    """LOCAL_RANK from the environment (the launcher and init_process_group set it)."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank "
                       "to allow `get_node_local_rank` to work, assuming you are not running "
                       "in a multi-device context and want the code to run locally instead.")


def is_backend_available(backend):
    return str(backend).lower() in ("gloo", "mpi") and is_available()


class DistError(RuntimeError):
    """Raised when an error occurs in the distributed library."""


class DistBackendError(DistError):
    """Raised when a backend error occurs in distributed."""


class DistNetworkError(DistError):
    """Raised when a network error occurs in distributed."""


class DistStoreError(DistError):
    """Raised when an error occurs in the distributed store."""


class QueueEmptyError(DistStoreError):
    """Raised when a store queue is empty."""
