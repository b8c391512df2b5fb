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
    # PyTorch 2.13's others
    "AllToAllOptions", "AllreduceCoalescedOptions", "AllreduceOptions", "BackendConfig",
    "BarrierOptions", "BroadcastOptions", "BuiltinCommHookType", "DebugLevel", "GatherOptions",
    "GradBucket", "GroupName", "Logger", "ProcessGroupGloo", "RankType", "ReduceOptions",
    "ReduceScatterOptions", "Reducer", "ScatterOptions", "all_gather_coalesced",
    "all_gather_single", "all_reduce_coalesced", "default_pg_timeout", "get_backend_config",
    "get_debug_level", "get_default_backend_for_device", "get_pg_count", "is_ucc_available",
    "is_xccl_available", "log", "new_subgroups", "new_subgroups_by_enumeration", "record_comm",
    "reduce_op", "reduce_scatter_single", "set_debug_level", "set_debug_level_from_env",
    "shrink_group", "split_group", "supports_complex", "timedelta",
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
        self.group_count = 0    # PyTorch's: groups named by a counter (get_pg_count)


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
    _world.pg._name, _world.pg._desc = group_name or "0", "default_pg"
    _world.groups = [_world.pg]
    _world.group_count = 1
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
        _world.group_count = 0
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
    if use_local_synchronization:       # PyTorch: a hash of the ranks
        import hashlib
        unique = "_".join(["_".join(map(str, ranks)), str(len(_world.groups))])
        gname = hashlib.sha1(bytes(unique, "utf-8")).hexdigest()
    else:                               # PyTorch names these groups by its counter
        gname = str(_world.group_count)
        _world.group_count += 1
    if comm == MPI.COMM_NULL:
        return GroupMember.NON_GROUP_MEMBER
    g = ProcessGroup(comm, ranks, _backend_name(backend) if backend else pg._backend)
    g._name = gname
    if group_desc is not None:
        g._desc = group_desc
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


def all_gather_single(output_tensor, input_tensor, group=None, async_op=False):
    """Every rank's input, concatenated (rank order) into `output_tensor` (its shape: the
    concatenation or the stack of the inputs)."""
    return _all_gather_single(output_tensor, input_tensor, group, async_op, "all_gather_single")


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Deprecated in PyTorch 2.13 (FutureWarning): all_gather_single."""
    _deprecated_call("`torch.distributed.all_gather_into_tensor` is deprecated. Please use "
                     "`torch.distributed.all_gather_single` instead.")
    return _all_gather_single(output_tensor, input_tensor, group, async_op,
                              "all_gather_into_tensor")


def _all_gather_single(output_tensor, input_tensor, group, async_op, name):
    pg = _group(group)
    if pg is None:
        return None
    a = _tensor(input_tensor, name, "input_tensor")
    n = pg.size()

    def check():
        o = _tensor(output_tensor, name, "output_tensor")
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


def reduce_scatter_single(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Rank r's `output` = the reduction over ranks of the r-th chunk of their `input` (the
    concatenation or the stack of the outputs)."""
    return _reduce_scatter_single(output, input, op, group, async_op, "reduce_scatter_single")


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Deprecated in PyTorch 2.13 (FutureWarning): reduce_scatter_single."""
    _deprecated_call("`torch.distributed.reduce_scatter_tensor` is deprecated. Please use "
                     "`torch.distributed.reduce_scatter_single` instead.")
    return _reduce_scatter_single(output, input, op, group, async_op, "reduce_scatter_tensor")


def _reduce_scatter_single(output, input, op, group, async_op, name):
    pg = _group(group)
    if pg is None:
        return None
    a = _tensor(output, name, "output")
    op = _redop(op)
    n = pg.size()

    def check():
        i = _tensor(input, name, "input")
        _check_reduce_dtype(name, output.dtype, op)
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


# ------------------------------------------------------------- options, debug level, helpers
# PyTorch 2.13's remaining public names of torch.distributed (distributed_c10d.py, constants.py,
# the C++ bindings it re-exports), on the process groups above.

import datetime as _datetime  # noqa: E402
import logging as _logging  # noqa: E402
import warnings as _warnings  # noqa: E402
from datetime import timedelta  # noqa: E402,F401  (torch.distributed.timedelta is datetime's)
from typing import NewType as _NewType  # noqa: E402

from .constants import default_pg_timeout  # noqa: E402,F401

log = _logging.getLogger("torch.distributed")   # PyTorch's logger and its name

GroupName = _NewType("GroupName", str)
GroupName.__module__ = __name__


RankType = int               # (PyTorch's is int | SymInt: ranks are plain ints here)

_UNSET_TIMEOUT = _datetime.timedelta(milliseconds=-1)   # c10d's kUnsetTimeout


class _Options:
    """A collective's options struct (PyTorch's C++ *Options bound to Python): plain attributes
    with PyTorch's defaults; the process group's methods read them."""
    _fields = ()

    def __init__(self):
        self.timeout = _UNSET_TIMEOUT
        self.asyncOp = True
        for name, default in self._fields:
            setattr(self, name, default() if callable(default) else default)


class AllreduceOptions(_Options):
    _fields = (("reduceOp", ReduceOp),)


class AllreduceCoalescedOptions(AllreduceOptions):
    pass


class ReduceOptions(_Options):
    _fields = (("reduceOp", ReduceOp), ("rootRank", 0), ("rootTensor", 0))


class BroadcastOptions(_Options):
    _fields = (("rootRank", 0), ("rootTensor", 0))


class AllgatherOptions(_Options):
    pass


class GatherOptions(_Options):
    _fields = (("rootRank", 0),)


class ScatterOptions(_Options):
    _fields = (("rootRank", 0),)


class ReduceScatterOptions(_Options):
    _fields = (("reduceOp", ReduceOp),)


class AllToAllOptions(_Options):
    pass


class BarrierOptions(_Options):
    _fields = (("device_ids", list), ("device", None))


class DebugLevel(enum.Enum):
    """TORCH_DISTRIBUTED_DEBUG's levels: OFF, INFO, DETAIL (a pybind enum in PyTorch: int()
    gives the value, it does not compare equal to an int)."""
    OFF = 0
    INFO = 1
    DETAIL = 2

    def __int__(self):
        return self.value

    __index__ = __int__


_DEBUG = {"level": None}


def set_debug_level(level):
    if not isinstance(level, DebugLevel):
        raise TypeError("set_debug_level(): incompatible function arguments. The following "
                        "argument types are supported:\n    1. (arg0: torch._C._distributed_c10d"
                        f".DebugLevel) -> None\n\nInvoked with: {level!r}")
    _DEBUG["level"] = level


def set_debug_level_from_env():
    """TORCH_DISTRIBUTED_DEBUG (OFF, INFO or DETAIL, any case; unset: OFF)."""
    value = os.environ.get("TORCH_DISTRIBUTED_DEBUG")
    if value is None:
        _DEBUG["level"] = DebugLevel.OFF
        return
    try:
        _DEBUG["level"] = DebugLevel[value.upper()]
    except KeyError:
        raise ValueError("The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or "
                         "DETAIL.") from None


def get_debug_level():
    if _DEBUG["level"] is None:       # read once, on first use, as c10d does
        set_debug_level_from_env()
    return _DEBUG["level"]


class BuiltinCommHookType(enum.Enum):
    """DistributedDataParallel.register_builtin_comm_hook's hooks."""
    ALLREDUCE = 1
    FP16_COMPRESS = 2

    def __int__(self):
        return self.value

    __index__ = __int__


def is_ucc_available():
    return False


def is_xccl_available():
    return False


def supports_complex(reduceOp):
    """True when `reduceOp` is defined on complex tensors (SUM and AVG)."""
    deny = (ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT, ReduceOp.BAND, ReduceOp.BOR,
            ReduceOp.BXOR)
    op = reduceOp.op if isinstance(reduceOp, ReduceOp) else reduceOp
    return op not in deny


class _reduce_op:
    """Deprecated enum-like class: use ReduceOp (every attribute read warns, as PyTorch's)."""

    def __init__(self):
        for k, v in RedOpType.__members__.items():
            setattr(self, k, v)
        self.__members__ = RedOpType.__members__

    def __getattribute__(self, key):
        _warnings.warn("`torch.distributed.reduce_op` is deprecated, please use "
                       "`torch.distributed.ReduceOp` instead", FutureWarning, stacklevel=2)
        return object.__getattribute__(self, key)


reduce_op = _reduce_op()

Backend.XCCL = "xccl"
Backend.FAKE = "fake"
Backend.backend_list = ["undefined", "gloo", "nccl", "xccl", "ucc", "mpi", "fake"]
Backend.default_device_backend_map = {"cpu": "gloo", "cuda": "nccl", "xpu": "xccl",
                                      "mps": "gloo"}
Backend.backend_capability = {"gloo": ["cpu", "cuda"], "nccl": ["cuda"], "xccl": ["xpu"],
                              "ucc": ["cpu", "cuda"], "mpi": ["cpu", "cuda"],
                              "fake": ["cpu", "cuda", "hpu", "xpu"]}


class BackendConfig:
    """The device -> backend map of a process group ("cpu:gloo,cuda:gloo" for "gloo")."""

    def __init__(self, backend):
        self.device_backend_map = {}
        backend = str(backend)
        if backend == Backend.UNDEFINED:
            self.device_backend_map["cpu"] = Backend("gloo")   # no accelerator: the CPU's
        elif backend.lower() in Backend.backend_list:
            value = Backend(backend)
            self.device_backend_map = dict.fromkeys(
                Backend.backend_capability[backend.lower()], value)
        elif ":" in backend:
            message = (f"The custom backend string argument is invalid: {backend}.\n"
                       "                Custom backend string is an experimental feature where "
                       "the backend string must be in the format:\n                "
                       "\"<device_type1>:<backend1>,<device_type2>:<backend2>...\". e.g. "
                       "'cpu:gloo,cuda:nccl'")
            for pair in backend.lower().split(","):
                parts = pair.split(":")
                if len(parts) != 2:
                    raise ValueError(f"Invalid device:backend pairing: {pair}. {message}")
                device, name = parts
                if device in self.device_backend_map:
                    raise ValueError(f"Duplicate device type {device} in backend string: "
                                     f"{name}. {message}")
                self.device_backend_map[device] = Backend(name)
        else:
            _warnings.warn(f"Device capability of {backend} unknown, assuming `cpu` and "
                           "`cuda`. You can specify it in `device:backend` format in "
                           "`init_process_group` call.", stacklevel=2)
            value = Backend(backend)
            self.device_backend_map = {"cpu": value, "cuda": value, "xpu": value}

    def __repr__(self):
        return ",".join(f"{d}:{b}" for d, b in self.device_backend_map.items())

    def get_device_backend_map(self):
        return self.device_backend_map


def get_backend_config(group=None):
    """The group's backend configuration as a string: "cpu:gloo,cuda:gloo" for gloo."""
    pg = _default() if group is None else group
    if pg is GroupMember.NON_GROUP_MEMBER:
        raise ValueError("Invalid process group specified")
    pg = _group(pg)
    return str(getattr(pg, "_config", None) or BackendConfig(pg._backend))


def get_default_backend_for_device(device):
    from .. import device as _device_type
    device_str = device.type if isinstance(device, _device_type) else _device_type(device).type
    backend = Backend.default_device_backend_map.get(device_str)
    if backend is None:
        raise ValueError(f"Default backend not registered for device : {device}")
    return backend


def get_pg_count():
    """The number of process groups created since the default one (PyTorch's group_count: the
    default group and each new_group count; destroying the default group resets it)."""
    return _world.group_count


_COMM_NAME = {"name": None}


@__import__("contextlib").contextmanager
def record_comm(name):
    """Context manager naming the collectives issued inside it (their profiling title)."""
    prev = _COMM_NAME["name"]
    _COMM_NAME["name"] = name
    try:
        yield
    finally:
        _COMM_NAME["name"] = prev


# ------------------------------------------------------------------ collectives' other forms

def _deprecated_call(message):
    _warnings.warn(message, FutureWarning, stacklevel=3)


def _check_tensor_list(param, param_name):
    from .._tensor import Tensor
    if not isinstance(param, list):
        raise TypeError(f"Invalid function argument. Expected parameter `{param_name}` of type "
                        f"List[torch.Tensor]\n             but got {type(param)} instead.")
    if not all(isinstance(p, Tensor) for p in param):
        raise TypeError(f"Invalid function argument. Expected parameter `{param_name}` of type "
                        f"List[torch.Tensor]\n             but got {type(param)} with elements "
                        f"of type {[type(p) for p in param]}.")


def _ensure_same_dtype(tensors):
    if tensors:
        dtype = tensors[0].dtype
        for t in tensors[1:]:
            if t.dtype is not dtype:
                raise ValueError("Invalid usage of tensors with different dtypesFound "
                                 f"{dtype} and  {t.dtype}")


def _flat_views(tensors):
    from .. import cat
    return cat([t.reshape(-1) for t in tensors]) if tensors else None


def all_reduce_coalesced(tensors, op=ReduceOp.SUM, group=None, async_op=False):
    """Deprecated (PyTorch's FutureWarning): all_reduce of every tensor of `tensors` in one
    message (one dtype)."""
    _deprecated_call("`torch.distributed.all_reduce_coalesced` will be deprecated. If you must "
                     "use it, please revisit our documentation later at "
                     "https://pytorch.org/docs/main/distributed.html#collective-functions")
    from .._tensor import Tensor
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    _check_tensor_list(tensors, "tensor")
    _ensure_same_dtype(tensors)
    pg = _group(group)
    if pg is None or not tensors:
        return None
    if any(t.is_complex() for t in tensors) and not supports_complex(op):
        raise ValueError(f"all_reduce does not support {op} on complex tensors")
    flat = _flat_views(tensors)

    def finish():
        off = 0
        for t in tensors:
            n = t.numel()
            t._data[...] = flat._data[off:off + n].reshape(t._data.shape)
            off += n
    work = all_reduce(flat, op=op, group=group, async_op=True)
    return _then(work, finish, tensors, async_op)


def _then(work, finish, result, async_op):
    """`work` followed by `finish()`: waited here unless async_op, else (as PyTorch's coalesced
    collectives) a Future completing with `result`."""
    if work is None:
        return None
    if not async_op:
        work.wait()
        finish()
        return None
    if work._done:
        finish()
        return _done(True, result).get_future()
    return Work(work._requests, finish=lambda: (work._complete(), finish()),
                result=result).get_future()


def all_gather_coalesced(output_tensor_lists, input_tensor_list, group=None, async_op=False):
    """Deprecated (PyTorch's FutureWarning): output_tensor_lists[r][i] = rank r's
    input_tensor_list[i], in one message."""
    _deprecated_call("`torch.distributed.all_gather_coalesced` will be deprecated. If you must "
                     "use it, please revisit our documentation later at "
                     "https://pytorch.org/docs/main/distributed.html#collective-functions")
    pg = _group(group)
    if pg is None:
        return None
    _check_tensor_list(input_tensor_list, "input_tensor_list")
    _ensure_same_dtype(input_tensor_list)
    if not isinstance(output_tensor_lists, list):
        raise TypeError("Invalid function argument: output_tensor_lists should be a list")
    for out in output_tensor_lists:
        _check_tensor_list(out, "output_tensor_lists")
        _ensure_same_dtype(out)
    n = pg.size()
    if len(output_tensor_lists) != n:
        raise RuntimeError(f"all_gather_coalesced: output_tensor_lists must have one list per "
                           f"rank of the group ({n}), got {len(output_tensor_lists)}")
    flat = _flat_views(input_tensor_list)
    if flat is None:
        return None
    from .. import empty
    gathered = empty((n * flat.numel(),), dtype=flat.dtype)

    def finish():
        rows = gathered._data.reshape(n, -1)
        for r, outs in enumerate(output_tensor_lists):
            off = 0
            for t in outs:
                k = t.numel()
                t._data[...] = rows[r, off:off + k].reshape(t._data.shape)
                off += k
    work = _all_gather_single(gathered, flat, group, True, "all_gather_coalesced")
    return _then(work, finish, [t for o in output_tensor_lists for t in o], async_op)


# ------------------------------------------------------------------------------- subgroups

def new_subgroups(group_size=None, group=None, timeout=None, backend=None, pg_options=None,
                  group_desc=None):
    """Split `group` (the world by default) into consecutive subgroups of `group_size` ranks:
    (this rank's subgroup, every subgroup). Every rank of the world must call it."""
    if group_size is None:
        raise ValueError("Default group size only takes effect when CUDA is available.If your "
                         "subgroup using a backend that does not depend on CUDA,please pass in "
                         "'group_size' correctly.")
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    world_size = get_world_size(group=group)
    if world_size < group_size:
        raise ValueError(f"The arg 'group_size' ({group_size}) must not exceed the world size "
                         f"({world_size})")
    if world_size % group_size != 0:
        raise ValueError(f"The world size ({world_size}) must be divisible by "
                         f"'group_size={group_size}'")
    ranks = get_process_group_ranks(group if group is not None else _default())
    return new_subgroups_by_enumeration(
        [ranks[i:i + group_size] for i in range(0, len(ranks), group_size)], timeout=timeout,
        backend=backend, pg_options=pg_options, group_desc=group_desc)


def new_subgroups_by_enumeration(ranks_per_subgroup_list, timeout=None, backend=None,
                                 pg_options=None, group_desc=None):
    """One new_group per list of global ranks (they may not overlap): (this rank's subgroup or
    None, every subgroup). Every rank of the world must call it."""
    if ranks_per_subgroup_list is None or len(ranks_per_subgroup_list) == 0:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    subgroups, cur, seen = [], None, {}
    me = get_rank()
    for ranks in ranks_per_subgroup_list:
        sub = new_group(ranks=ranks, timeout=timeout, backend=backend, pg_options=pg_options,
                        group_desc=group_desc)
        subgroups.append(sub)
        for r in ranks:
            if r in seen:
                raise ValueError(f"Rank {r} has appeared in both subgroup {seen[r]} and {ranks}")
            seen[r] = ranks
            if r == me:
                cur = sub
                log.info("Rank %s is assigned to subgroup %s", r, ranks)
    return cur, subgroups


def split_group(parent_pg=None, split_ranks=None, timeout=None, pg_options=None,
                group_desc=None, backend=None):
    """Split `parent_pg` (the default group) into the groups of `split_ranks` (lists of the
    parent's group ranks) with one communicator split; returns this rank's group, or None where
    the rank is in none of them. Every rank of the parent must call it. (PyTorch splits only
    NCCL/XCCL groups and raises on CPU; MPI communicators split, so ndgrad's do.)"""
    if split_ranks is None or len(split_ranks) == 0:
        raise ValueError("split_ranks cannot be None or empty")
    default = _default()
    parent = default if parent_pg is None else _group(parent_pg)
    if parent is None:
        raise ValueError(f"Group {parent_pg} is not registered")
    n_world = default.size()
    my_rank = parent.rank()
    mine = None
    for ranks in split_ranks:
        if len(ranks) == 0:
            raise ValueError("the split group cannot be empty")
        if len(ranks) > n_world:
            raise ValueError("the split group's size should be less or equal to the world_size "
                             "set by init_process_group")
        if len(ranks) != len(set(ranks)):
            raise ValueError("the split group cannot have duplicate ranks")
        ranks = sorted(ranks)
        if mine is None and my_rank in ranks:
            mine = ranks
    MPI = _mpi()
    color = MPI.UNDEFINED if mine is None else split_ranks.index(
        next(r for r in split_ranks if sorted(r) == mine))
    comm = parent._comm.Split(color, mine.index(my_rank) if mine is not None else 0)
    if comm == MPI.COMM_NULL:
        return None
    name = _backend_name(backend) if backend else parent._backend
    g = ProcessGroup(comm, [parent._ranks[r] for r in mine], name)
    _world.groups.append(g)
    return g


SHRINK_DEFAULT = 0x00
SHRINK_ABORT = 0x01


def shrink_group(ranks_to_exclude, group=None, shrink_flags=SHRINK_DEFAULT, pg_options=None):
    """The group without `ranks_to_exclude` (its group ranks), created by the remaining ranks
    alone (MPI_Comm_create_group: the excluded ones, failed or gone, take no part). The old group
    is destroyed; shrinking the default group replaces it (ranks renumbered) and destroys every
    other group, as PyTorch does."""
    if not isinstance(ranks_to_exclude, list):
        raise TypeError(f"ranks_to_exclude must be a list, but got "
                        f"{type(ranks_to_exclude).__name__}. Example: [1, 3, 5] to exclude ranks "
                        f"1, 3, and 5.")
    if not ranks_to_exclude:
        raise ValueError("ranks_to_exclude cannot be empty. To shrink a group, you must specify "
                         "at least one rank to exclude. Example: [failed_rank_id]")
    if not isinstance(shrink_flags, int) or shrink_flags not in (SHRINK_DEFAULT, SHRINK_ABORT):
        raise ValueError(f"Invalid shrink_flags value: {shrink_flags}. Must be one of: "
                         f"SHRINK_DEFAULT ({SHRINK_DEFAULT}) or SHRINK_ABORT ({SHRINK_ABORT}). "
                         f"Use SHRINK_ABORT to abort ongoing operations before shrinking.")
    pg = _default() if group is None else _group(group)
    size = pg.size()
    if size <= 1:
        raise ValueError(f"Cannot shrink a process group with size {size}. Group must have at "
                         f"least 2 ranks to support shrinking.")
    me = pg.rank()
    excluded = set()
    for i, r in enumerate(ranks_to_exclude):
        if not isinstance(r, int):
            raise TypeError(f"All elements in ranks_to_exclude must be integers. Element at "
                            f"index {i} is {type(r).__name__}: {r}")
        if not 0 <= r < size:
            raise ValueError(f"Rank {r} at index {i} is out of bounds for group size {size}. "
                             f"Valid ranks are in range [0, {size - 1}].")
        if r in excluded:
            raise ValueError(f"Duplicate rank {r} found in ranks_to_exclude at index {i}. Each "
                             f"rank can only be excluded once.")
        excluded.add(r)
    if len(excluded) >= size:
        raise ValueError(f"Cannot exclude all {size} ranks from process group. At least one rank "
                         f"must remain. Excluding {len(excluded)} ranks.")
    if me in excluded:
        raise RuntimeError(f"Current rank {me} is in the exclusion list and should not call "
                           f"shrink_group(). Only non-excluded ranks should participate in the "
                           f"shrinking operation. Excluded ranks should terminate their "
                           f"processes instead.")
    keep = [r for r in range(size) if r not in excluded]
    mgroup = pg._comm.Get_group().Incl(keep)
    comm = pg._comm.Create_group(mgroup, 7)
    mgroup.Free()
    is_default = pg is _world.pg
    if is_default:
        for g in list(_world.groups):
            if g is not pg and g._comm is not None:
                g._comm.Free()
                g._comm = None
        _world.groups = [pg]
        new = ProcessGroup(comm, range(len(keep)), pg._backend)
    else:
        new = ProcessGroup(comm, [pg._ranks[r] for r in keep], pg._backend)
    pg._comm.Free()
    pg._comm = None
    if is_default:
        _world.pg = new
        _world.groups = [new]
    else:
        if pg in _world.groups:
            _world.groups.remove(pg)
        _world.groups.append(new)
    return new


# ------------------------------------------------------------------------------- breakpoint

_breakpoint_cache = {}


def _make_distributed_pdb():
    """A Pdb that reads /dev/stdin (a launched rank's stdin is not the terminal's)."""
    import pdb

    class _DistributedPdb(pdb.Pdb):
        def interaction(self, *args, **kwargs):
            _stdin = sys.stdin
            try:
                with open("/dev/stdin") as sys.stdin:
                    pdb.Pdb.interaction(self, *args, **kwargs)
            finally:
                sys.stdin = _stdin

    return _DistributedPdb()


def breakpoint(rank=0, skip=0, timeout_s=3600):
    """A pdb breakpoint on rank `rank` only; the other ranks wait in a barrier until it goes on.
    `skip`: skip the first `skip` calls from the same place."""
    if skip > 0:
        import traceback
        key = hash(str(traceback.format_exc()))
        counter = _breakpoint_cache.get(key, 0) + 1
        _breakpoint_cache[key] = counter
        if counter <= skip:
            log.warning("Skip the breakpoint, counter=%d", counter)
            return
    if get_rank() == rank:
        pdb = _make_distributed_pdb()
        pdb.message("\n!!! ATTENTION !!!\n\n"
                    f"Type 'up' to get to the frame that called dist.breakpoint(rank={rank})\n")
        pdb.set_trace()
    barrier()


# ------------------------------------------------- the process group's own collective methods
# PyTorch's ProcessGroup (and its backends, ProcessGroupGloo) offers the collectives as methods
# taking a list of tensors (one here: one device per rank) and an options struct, returning a
# Work; the functions above are written on them in PyTorch, here the other way round.

def _one(tensors, what):
    from .._tensor import Tensor
    if isinstance(tensors, Tensor):
        return tensors
    if isinstance(tensors, (list, tuple)) and len(tensors) == 1:
        return tensors[0]
    raise ValueError(f"ProcessGroup.{what}: ndgrad's process groups take one tensor per rank "
                     f"(one CPU device), got {len(tensors)}")


def _pg_allreduce(self, tensors, opts=None):
    opts = AllreduceOptions() if opts is None else opts
    if not isinstance(opts, AllreduceOptions):        # allreduce(tensors, op)
        opts, op = AllreduceOptions(), opts
        opts.reduceOp = op
    return all_reduce(_one(tensors, "allreduce"), opts.reduceOp, self, True)


def _pg_allreduce_coalesced(self, tensors, opts=None):
    opts = AllreduceCoalescedOptions() if opts is None else opts
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore", FutureWarning)
        fut = all_reduce_coalesced(list(tensors), opts.reduceOp, self, True)
    w = Work([], None, list(tensors))
    w._done = True
    fut.wait()
    return w


def _pg_broadcast(self, tensors, opts=None):
    opts = BroadcastOptions() if opts is None else opts
    return broadcast(_one(tensors, "broadcast"), group=self, async_op=True,
                     group_src=opts.rootRank)


def _pg_reduce(self, tensors, opts=None):
    opts = ReduceOptions() if opts is None else opts
    return reduce(_one(tensors, "reduce"), op=opts.reduceOp, group=self, async_op=True,
                  group_dst=opts.rootRank)


def _pg_allgather(self, output_tensors, input_tensors, opts=None):
    outs = output_tensors[0] if output_tensors and isinstance(output_tensors[0], list) \
        else output_tensors
    return all_gather(list(outs), _one(input_tensors, "allgather"), self, True)


def _pg_barrier(self, opts=None):
    return barrier(self, async_op=True)


def _pg_send(self, tensors, dstRank, tag=0):
    return isend(_one(tensors, "send"), group=self, group_dst=dstRank, tag=tag)


def _pg_recv(self, tensors, srcRank, tag=0):
    return irecv(_one(tensors, "recv"), group=self, group_src=srcRank, tag=tag)


for _name, _fn in [("allreduce", _pg_allreduce), ("allreduce_coalesced", _pg_allreduce_coalesced),
                   ("broadcast", _pg_broadcast), ("reduce", _pg_reduce),
                   ("allgather", _pg_allgather), ("barrier", _pg_barrier), ("send", _pg_send),
                   ("recv", _pg_recv)]:
    _fn.__name__ = _fn.__qualname__ = _name
    setattr(ProcessGroup, _name, _fn)
ProcessGroup.group_name = property(lambda self: getattr(self, "_name", ""))
ProcessGroup.group_desc = property(lambda self: getattr(self, "_desc", "undefined"))
ProcessGroup.bound_device_id = None


class ProcessGroupGloo(ProcessGroup):
    """PyTorch's Gloo backend, here on the same MPI transport: ProcessGroupGloo(store, rank,
    size, timeout) must be built by every rank of the MPI world (rank and size are MPI's; the
    store is not needed: MPI has connected the ranks)."""

    class Options:
        def __init__(self, timeout=default_pg_timeout):
            self._timeout = timeout
            self._devices = []
            self._threads = 2
            self.global_ranks_in_group = []
            self.group_name = ""

    _Options = Options

    class Device:
        def __init__(self, hostname="", interface=""):
            self.hostname, self.interface = hostname, interface

        def __repr__(self):
            return f"<ProcessGroupGloo.Device {self.hostname or self.interface or 'default'}>"

    @staticmethod
    def create_device(hostname="", interface="", lazy_init=None):
        return ProcessGroupGloo.Device(hostname, interface)

    @staticmethod
    def create_default_device(lazy_init=None):
        import socket
        return ProcessGroupGloo.Device(socket.gethostname())

    def __init__(self, store, rank, size, timeout=default_pg_timeout):
        MPI = _mpi()
        world = MPI.COMM_WORLD
        if size != world.Get_size() or rank != world.Get_rank():
            raise ValueError(
                f"ProcessGroupGloo(rank={rank}, size={size}): ndgrad's gloo runs on MPI, whose "
                f"world has {world.Get_size()} process(es) and gives this one rank "
                f"{world.Get_rank()}: start the ranks with `python -m ndgrad.distributed.run` "
                f"or mpiexec and pass MPI's rank and size")
        super().__init__(world.Dup(), range(size), "gloo")
        self._store = store
        self.options = ProcessGroupGloo.Options(timeout)

    def _get_backend_name(self):
        return "gloo"

    @property
    def supports_splitting(self):
        return True


# ----------------------------------------------------- DistributedDataParallel's C++ helpers

class Reducer:
    """PyTorch's gradient reducer of DistributedDataParallel (C++ there): the gradients of
    `params`, grouped into the buckets `bucket_indices` (lists of indices into params, in the
    order backward produces them), are averaged over `process_group` during backward, each
    bucket's all-reduce starting as soon as its gradients have all been accumulated. Call
    prepare_for_backward(outputs) after each forward whose backward is to be synchronised
    (outputs: for find_unused_parameters). It runs on the machinery of ndgrad's
    DistributedDataParallel (one wrapper over the parameters, not synchronised at
    construction)."""

    def __init__(self, params, bucket_indices, per_bucket_size_limits=(), process_group=None,
                 expect_sparse_gradients=(), bucket_bytes_cap=25 * 1024 * 1024,
                 find_unused_parameters=False, gradient_as_bucket_view=False,
                 param_to_name_mapping=None, first_bucket_bytes_cap=1024 * 1024,
                 skip_all_reduce_unused_params=False, use_python_reducer=False):
        from ..nn import Module
        from ..nn.parallel.distributed import DistributedDataParallel, _Bucket
        params = list(params)
        holder = Module()
        for i, p in enumerate(params):
            holder.register_parameter(f"p{i}", p)
        ddp = DistributedDataParallel(
            holder, init_sync=False, process_group=process_group,
            bucket_cap_mb=bucket_bytes_cap / (1024 * 1024),
            find_unused_parameters=find_unused_parameters,
            gradient_as_bucket_view=gradient_as_bucket_view)
        indices = [list(b) for b in bucket_indices]
        flat = sorted(i for b in indices for i in b)
        if flat != list(range(len(params))):
            raise RuntimeError("Reducer: bucket_indices must hold every parameter index once, "
                               f"got {indices} for {len(params)} parameters")
        ddp._buckets = [_Bucket(k, [params[i] for i in b]) for k, b in enumerate(indices)]
        if gradient_as_bucket_view:
            for b in ddp._buckets:
                b.make_views()
        ddp._bucket_of = {id(p): b for b in ddp._buckets for p in b.params}
        self._ddp = ddp
        self._logger = None

    def prepare_for_forward(self):
        if self._ddp._reduction_unfinished is not None:
            msg, self._ddp._reduction_unfinished = self._ddp._reduction_unfinished, None
            raise RuntimeError(msg)

    def prepare_for_backward(self, outputs=()):
        """Arm the next backward: its gradients are averaged over the group."""
        self.prepare_for_forward()
        self._ddp._armed = True
        self._ddp._prepare_for_backward(list(outputs) if isinstance(outputs, (list, tuple))
                                        else outputs)

    def _register_comm_hook(self, state, hook):
        self._ddp.register_comm_hook(state, hook)

    def _register_builtin_comm_hook(self, comm_hook_type):
        self._ddp._register_builtin_comm_hook(comm_hook_type)

    def set_logger(self, logger):
        self._logger = logger

    def _set_static_graph(self):
        self._ddp.static_graph = True

    def _rebuild_buckets(self):
        return False

    def _remove_autograd_hooks(self):
        for h in self._ddp._hook_handles:
            h.remove()
        self._ddp._hook_handles = []

    def _get_zeros_like_grad_buckets(self):
        from .. import zeros
        return [GradBucket(b.index, zeros(sum(b.sizes), dtype=b.params[0].dtype), b.params,
                           b.index == len(self._ddp._buckets) - 1) for b in self._ddp._buckets]


class GradBucket:
    """What a communication hook receives: one bucket's flattened gradients."""

    def __init__(self, index, buffer, params, is_last):
        self._index, self._buffer, self._params, self._last = index, buffer, params, is_last

    def index(self):
        return self._index

    def buffer(self):
        return self._buffer

    def set_buffer(self, buffer):
        self._buffer = buffer

    def parameters(self):
        return list(self._params)

    def gradients(self):
        out, off = [], 0
        for p in self._params:
            n = p.numel()
            out.append(self._buffer[off:off + n].view(p.shape))
            off += n
        return out

    def is_last(self):
        return self._last


class Logger:
    """DistributedDataParallel's logging data (PyTorch's C++ Logger): what the model sets at
    construction and at run time, read back by _get_ddp_logging_data."""

    def __init__(self, reducer=None):
        self._reducer = reducer
        self._data = {}

    def set_construction_data_and_log(self, module_name="", device_ids=(), output_device=-1,
                                      broadcast_buffers=True, has_sync_bn=False,
                                      static_graph=False):
        self._data.update(module_name=module_name, device_ids=str(list(device_ids)),
                          output_device=output_device, broadcast_buffers=int(broadcast_buffers),
                          has_sync_bn=int(has_sync_bn), static_graph=int(static_graph))

    def set_runtime_stats_and_log(self):
        self._data["iteration"] = self._data.get("iteration", 0) + 1

    def set_error_and_log(self, error):
        self._data["has_error"] = 1
        self._data["error"] = str(error)

    def _get_ddp_logging_data(self):
        return dict(self._data)

    def _set_comm_hook_name(self, name):
        self._data["comm_hook"] = name

    def _set_static_graph(self):
        self._data["static_graph"] = 1

    def _set_uneven_input_join(self):
        self._data["join_uneven_inputs"] = 1


def _pg_gather(self, output_tensors, input_tensors, opts=None):
    opts = GatherOptions() if opts is None else opts
    outs = output_tensors[0] if output_tensors and isinstance(output_tensors[0], list) \
        else output_tensors
    mine = self.rank() == opts.rootRank
    return gather(_one(input_tensors, "gather"), list(outs) if mine else None, group=self,
                  async_op=True, group_dst=opts.rootRank)


def _pg_scatter(self, output_tensors, input_tensors, opts=None):
    opts = ScatterOptions() if opts is None else opts
    ins = input_tensors[0] if input_tensors and isinstance(input_tensors[0], list) \
        else input_tensors
    mine = self.rank() == opts.rootRank
    return scatter(_one(output_tensors, "scatter"), list(ins) if mine else None, group=self,
                   async_op=True, group_src=opts.rootRank)


def _pg_reduce_scatter(self, output_tensors, input_tensors, opts=None):
    opts = ReduceScatterOptions() if opts is None else opts
    ins = input_tensors[0] if input_tensors and isinstance(input_tensors[0], list) \
        else input_tensors
    return reduce_scatter(_one(output_tensors, "reduce_scatter"), list(ins), opts.reduceOp,
                          self, True)


def _pg_allgather_base(self, output, input, opts=None):
    return _all_gather_single(output, input, self, True, "_allgather_base")


def _pg_reduce_scatter_base(self, output, input, opts=None):
    opts = ReduceScatterOptions() if opts is None else opts
    return _reduce_scatter_single(output, input, opts.reduceOp, self, True,
                                  "_reduce_scatter_base")


def _pg_alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
    return all_to_all_single(output, input, list(output_split_sizes) or None,
                             list(input_split_sizes) or None, group=self, async_op=True)


for _name, _fn in [("gather", _pg_gather), ("scatter", _pg_scatter),
                   ("reduce_scatter", _pg_reduce_scatter),
                   ("_allgather_base", _pg_allgather_base),
                   ("_reduce_scatter_base", _pg_reduce_scatter_base),
                   ("alltoall_base", _pg_alltoall_base)]:
    _fn.__name__ = _fn.__qualname__ = _name
    setattr(ProcessGroup, _name, _fn)


# ------------------------------------------- private helpers that libraries import from c10d

def _get_default_group():
    """The default process group (PyTorch's error before init_process_group)."""
    return _default()


def _rank_not_in_group(group):
    """True when this process is not a member of `group` (None: the default group)."""
    if group is None:
        return False
    return group is GroupMember.NON_GROUP_MEMBER


def _warn_not_in_group(op_name):
    global_rank = -1 if GroupMember.WORLD is None else GroupMember.WORLD.rank()
    _warnings.warn(f"Running {op_name} on global rank {global_rank} which does not belong to "
                   f"the given group.", stacklevel=2)


def _get_group_size(group):
    """The size of `group` (the default group's for None or WORLD)."""
    if group is GroupMember.WORLD or group is None:
        return _default().size()
    return group.size()


def _get_process_group_name(pg):
    return getattr(pg, "_name", "None")


def _check_single_tensor(param, param_name):
    from .._tensor import Tensor
    if not isinstance(param, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{param_name}` of type "
                        f"torch.Tensor\n             but got {type(param)} instead.")
