"""torch.cuda. With CuPy and a GPU (or the tests' stand-in device) there is one device, cuda:0,
and the device queries answer for it. Without one, torch.cuda is as a CPU-only PyTorch build has
it ("not compiled with CUDA"): every function behaves as it does in PyTorch's CPU wheel. Queries that need no device
answer (is_available() False, device_count() 0, memory counters 0, seeding queued and dropped);
those that need one raise PyTorch's errors ("Torch not compiled with CUDA enabled", ...).

    if torch.cuda.is_available(): ...        # False
    torch.cuda.manual_seed_all(0)            # a no-op, as in PyTorch without CUDA
"""
import collections
import contextlib
import warnings

from .._backend import cuda_available, device as _device
from . import amp  # noqa: F401

ERR_NOT_COMPILED = "Torch not compiled with CUDA enabled"
ERR_NVML = "nvidia-ml-py does not seem to be installed or it can't be imported."

__all__ = [
    "BFloat16Tensor", "BoolTensor", "ByteTensor", "CharTensor", "CudaError",
    "DeferredCudaCallError", "DoubleTensor", "Event", "ExternalStream", "FloatTensor",
    "HalfTensor", "IntTensor", "LongTensor", "ShortTensor", "Stream", "StreamContext", "amp",
    "caching_allocator_alloc", "caching_allocator_delete", "can_device_access_peer",
    "clock_rate", "current_blas_handle", "current_device", "current_solver_handle",
    "current_stream", "default_generators", "default_stream", "device", "device_count",
    "device_memory_used", "device_of", "empty_cache", "get_arch_list", "get_device_capability",
    "get_device_name", "get_device_properties", "get_gencode_flags",
    "get_per_process_memory_fraction", "get_rng_state", "get_rng_state_all",
    "get_sync_debug_mode", "has_half", "has_magma", "host_memory_stats", "init", "initial_seed",
    "ipc_collect", "is_available", "is_bf16_supported", "is_current_stream_capturing",
    "is_initialized", "is_tf32_supported", "list_gpu_processes", "manual_seed",
    "manual_seed_all", "max_memory_allocated", "max_memory_cached", "max_memory_reserved",
    "mem_get_info", "memory_allocated", "memory_cached", "memory_reserved", "memory_stats",
    "memory_stats_as_nested_dict", "memory_summary", "memory_usage", "power_draw",
    "reset_max_memory_allocated", "reset_max_memory_cached", "reset_peak_memory_stats",
    "reset_accumulated_memory_stats",
    "seed", "seed_all", "set_device", "set_per_process_memory_fraction", "set_rng_state",
    "set_rng_state_all", "set_stream", "set_sync_debug_mode", "stream", "synchronize",
    "temperature", "utilization"]

has_half = True
has_magma = False
default_generators = ()


class CudaError(RuntimeError):
    def __init__(self, code):
        super().__init__(f"CUDA error {code}")


class DeferredCudaCallError(Exception):
    pass


def _not_compiled(*args, **kwargs):
    raise AssertionError(ERR_NOT_COMPILED)


def _nvml(*args, **kwargs):
    raise ModuleNotFoundError(ERR_NVML)


# ---------------------------------------------------------------- device queries

def is_available():
    """False: ndgrad computes on NumPy."""
    return cuda_available()


def device_count():
    return 1 if cuda_available() else 0


def is_initialized():
    return False


def _device_index(device, optional=False):
    """torch.cuda._get_device_index: an int, a 'cuda[:n]' string or a cuda torch.device."""
    if isinstance(device, str):
        device = _device(device)
    if isinstance(device, _device):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        return -1 if device.index is None else device.index
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    if device is None and optional:
        return -1
    raise ValueError("Expected a torch.device with a specified index or an integer, but got:"
                     f"{device}")


ipc_collect = _not_compiled
current_blas_handle = current_solver_handle = _not_compiled
get_sync_debug_mode = set_sync_debug_mode = cudart = _not_compiled
caching_allocator_alloc = caching_allocator_delete = can_device_access_peer = _not_compiled
set_per_process_memory_fraction = get_per_process_memory_fraction = _not_compiled
get_stream_from_external = initial_seed = memory_snapshot = _not_compiled
utilization = temperature = power_draw = clock_rate = memory_usage = _nvml
device_memory_used = _nvml


def set_device(device):
    """A negative index is ignored (as PyTorch); without a device, any CUDA device raises."""
    i = _device_index(device)
    if i >= 0:
        _present("set_device")
        _check_index(i)


# ---------------------------------------------------------------- with a device
# When "cuda" is there (CuPy with a GPU, or the tests' stand-in device), the queries answer for
# device 0, the only one ndgrad drives; without one they raise PyTorch's CPU-build errors.

def _present(_name=None):
    if not cuda_available():
        raise AssertionError(ERR_NOT_COMPILED)


def _check_index(i):
    if i >= device_count():
        raise RuntimeError("CUDA error: invalid device ordinal")


def _cupy():
    from .._backend import _load_cupy, _standin
    return None if _standin is not None else (_load_cupy() or None)


_Properties = collections.namedtuple(
    "_CudaDeviceProperties", "name major minor total_memory multi_processor_count")


def init():
    _present()


def current_device():
    _present()
    return 0


def synchronize(device=None):
    """Waits for the device's work (CuPy's stream); the stand-in device is synchronous."""
    _present()
    cp = _cupy()
    if cp is not None:
        cp.cuda.Device(0).synchronize()


def get_device_properties(device=None):
    _present()
    i = 0 if device is None else max(_device_index(device, optional=True), 0)
    _check_index(i)
    cp = _cupy()
    if cp is None:   # the stand-in device: host memory, no compute capability
        return _Properties("ndgrad stand-in device", 0, 0, 0, 0)
    p = cp.cuda.runtime.getDeviceProperties(i)
    name = p["name"].decode() if isinstance(p["name"], bytes) else p["name"]
    return _Properties(name, p["major"], p["minor"], p["totalGlobalMem"],
                       p["multiProcessorCount"])


def get_device_name(device=None):
    return get_device_properties(device).name


def get_device_capability(device=None):
    p = get_device_properties(device)
    return (p.major, p.minor)


def mem_get_info(device=None):
    """(free, total) bytes of the device (CuPy's runtime); the stand-in reports the host's."""
    _present()
    cp = _cupy()
    if cp is None:
        import os
        try:
            total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
            free = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            return (0, 0)
        return (int(free), int(total))
    return tuple(int(v) for v in cp.cuda.runtime.memGetInfo())


def is_bf16_supported(including_emulation=True):
    return False


def is_tf32_supported():
    return False


def get_arch_list():
    return []


def get_gencode_flags():
    return ""


def list_gpu_processes(device=None):
    return "pynvml module not found, please install nvidia-ml-py"


class device:
    """`with torch.cuda.device(i):`: a negative index is a no-op; a CUDA device raises."""

    def __init__(self, device):
        self.idx = _device_index(device)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0 and not cuda_available():
            raise RuntimeError("PyTorch was compiled without CUDA support")
        if self.idx > 0:
            _check_index(self.idx)

    def __exit__(self, *exc):
        return False


class device_of(device):
    """`with torch.cuda.device_of(tensor):`: a CPU tensor selects no device."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


# ---------------------------------------------------------------- streams and events
# With CuPy, torch.cuda.Stream/Event wrap CuPy's (cupy.cuda.Stream/Event: queued work, waits,
# timing on the device). On the stand-in device, which computes synchronously on the host, a
# stream is always idle and an event's time is the host clock's when it was recorded.

def _stream_xp():
    cp = _cupy()
    return cp.cuda if cp is not None else None


class Stream:
    """torch.cuda.Stream(device=None, priority=0): CuPy's stream (non-blocking), or the stand-in's."""

    def __new__(cls, device=None, priority=0, **kwargs):
        if not cuda_available():
            raise RuntimeError("torch.cuda.Stream requires CUDA support")
        obj = object.__new__(cls)
        obj.priority = priority
        obj.device = _device("cuda", 0)
        cc = _stream_xp()
        obj._cp = kwargs.get("_cp") or (cc.Stream(non_blocking=True) if cc is not None else None)
        return obj

    @property
    def cuda_stream(self):
        return int(self._cp.ptr) if self._cp is not None else id(self)

    def query(self):
        return True if self._cp is None else bool(self._cp.done)

    def synchronize(self):
        if self._cp is not None:
            self._cp.synchronize()

    def wait_event(self, event):
        if self._cp is not None:
            self._cp.wait_event(event._cp)

    def wait_stream(self, stream):
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        if event is None:
            event = Event()
        event.record(self)
        return event

    def __enter__(self):   # (`with stream:` makes it the current stream, as `torch.cuda.stream`)
        self._ctx = StreamContext(self)
        return self._ctx.__enter__()

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)

    def __eq__(self, other):
        return isinstance(other, Stream) and self.cuda_stream == other.cuda_stream

    def __hash__(self):
        return hash((self.cuda_stream, "cuda:0"))

    def __repr__(self):
        return f"<torch.cuda.Stream device=cuda:0 cuda_stream={hex(self.cuda_stream)}>"


class ExternalStream(Stream):
    def __new__(cls, stream_ptr, device=None, **kwargs):
        cc = _stream_xp()
        ext = cc.ExternalStream(stream_ptr) if cc is not None else None
        return Stream.__new__(cls, device, _cp=ext)


_CURRENT = [None]   # the stand-in's current stream (CuPy keeps its own)
_DEFAULT = [None]


def default_stream(device=None):
    _present()
    if _DEFAULT[0] is None:
        cc = _stream_xp()
        _DEFAULT[0] = Stream(_cp=cc.Stream.null if cc is not None else None)
        _DEFAULT[0]._null = True
    return _DEFAULT[0]


def current_stream(device=None):
    _present()
    cc = _stream_xp()
    if cc is not None:
        cur = cc.get_current_stream()
        return default_stream() if cur == cc.Stream.null else Stream(_cp=cur)
    return _CURRENT[0] or default_stream()


class Event:
    """torch.cuda.Event(enable_timing=False, blocking=False, interprocess=False)."""

    def __new__(cls, enable_timing=False, blocking=False, interprocess=False, external=False):
        if not cuda_available():
            raise RuntimeError("Tried to instantiate dummy base class Event")
        obj = object.__new__(cls)
        obj.enable_timing, obj.blocking, obj.interprocess = enable_timing, blocking, interprocess
        cc = _stream_xp()
        obj._cp = cc.Event(block=blocking, disable_timing=not enable_timing,
                           interprocess=interprocess) if cc is not None else None
        obj._time = None   # (the stand-in: host time at record())
        return obj

    def record(self, stream=None):
        stream = current_stream() if stream is None else stream
        if self._cp is not None:
            self._cp.record(stream._cp)
        else:
            import time
            self._time = time.perf_counter()

    def wait(self, stream=None):
        (current_stream() if stream is None else stream).wait_event(self)

    def query(self):
        return True if self._cp is None else bool(self._cp.done)

    def synchronize(self):
        if self._cp is not None:
            self._cp.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds between this event's record() and end_event's (both timing events)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._cp is not None:
            return float(_cupy().cuda.get_elapsed_time(self._cp, end_event._cp))
        if self._time is None or end_event._time is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end_event._time - self._time) * 1000.0

    def __repr__(self):
        return f"<torch.cuda.Event {id(self):#x}>"


class StreamContext:
    """`with torch.cuda.stream(s):`: s is the current stream inside; None is a no-op."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is None:
            return None
        _present()
        self._prev = _CURRENT[0]
        _CURRENT[0] = self.stream
        if self.stream._cp is not None:
            self.stream._cp.__enter__()
        return self.stream

    def __exit__(self, *exc):
        if self.stream is None:
            return False
        if self.stream._cp is not None:
            self.stream._cp.__exit__(*exc)
        _CURRENT[0] = self._prev
        return False


def stream(stream):
    return StreamContext(stream)


def set_stream(stream):
    if stream is None:
        return
    _present()
    _CURRENT[0] = stream
    if stream._cp is not None:
        stream._cp.use()


def is_current_stream_capturing():
    if not cuda_available():
        raise RuntimeError("Tried to instantiate dummy base class _cuda_isCurrentStreamCapturing")
    return False


# ---------------------------------------------------------------- random numbers
# PyTorch queues seeding calls until CUDA initializes, which never happens without CUDA.

def manual_seed(seed):
    int(seed)


manual_seed_all = manual_seed


def seed():
    pass


seed_all = seed


def get_rng_state(device="cuda"):
    raise AssertionError(ERR_NOT_COMPILED)


def get_rng_state_all():
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state(new_state, device="cuda"):
    pass


def set_rng_state_all(new_states):
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


# ---------------------------------------------------------------- memory
# Backed by CuPy's default memory pool (allocated: its used bytes; reserved: its total bytes,
# cached blocks included), or the stand-in's. CuPy keeps no peak: a memory hook (entered the
# first time a device is asked for) follows each allocation for the peaks and counts. Without
# a device: PyTorch's CPU-build answers (zeros; reset_* raise).

class _Counters:
    def __init__(self):
        self.peak_allocated = self.peak_reserved = 0
        self.allocated_total = self.freed_total = self.n_alloc = self.n_free = 0
        self.hook = None


_mem = _Counters()


def _pool():
    from .. import _backend
    if _backend._standin is not None:
        return _backend._standin.get_default_memory_pool()
    cp = _cupy()
    if cp is None:
        return None
    if _mem.hook is None:
        _mem.hook = _peak_hook(cp)
    return cp.get_default_memory_pool()


def _peak_hook(cp):
    """A CuPy memory hook following the pool's allocations (for the peaks and counts)."""
    try:
        from cupy.cuda import memory_hook
    except ImportError:
        return False

    class Peak(memory_hook.MemoryHook):
        name = "ndgrad_peaks"

        def malloc_postprocess(self, **kw):
            _mem.n_alloc += 1
            _mem.allocated_total += kw.get("mem_size", 0)
            _sample()

        def free_postprocess(self, **kw):
            _mem.n_free += 1
            _mem.freed_total += kw.get("mem_size", 0)

    h = Peak()
    h.__enter__()   # (for this thread, for the life of the process)
    return h


def _sample():
    p = _pool()
    if p is None:
        return 0, 0
    used, total = int(p.used_bytes()), int(p.total_bytes())
    peak_used = getattr(p, "peak", 0)   # (the stand-in counts its own)
    _mem.peak_allocated = max(_mem.peak_allocated, used, peak_used)
    _mem.peak_reserved = max(_mem.peak_reserved, total, peak_used)
    return used, total


def memory_stats(device=None):
    """PyTorch's allocator statistics (the keys real code reads), from the memory pool."""
    if not cuda_available():
        return collections.OrderedDict()
    used, total = _sample()
    s = collections.OrderedDict()
    for kind, cur, peak in (("allocated_bytes", used, _mem.peak_allocated),
                            ("reserved_bytes", total, _mem.peak_reserved),
                            ("active_bytes", used, _mem.peak_allocated)):
        s[f"{kind}.all.current"] = cur
        s[f"{kind}.all.peak"] = peak
    s["allocated_bytes.all.allocated"] = _mem.allocated_total
    s["allocated_bytes.all.freed"] = _mem.freed_total
    s["allocation.all.allocated"] = _mem.n_alloc
    s["allocation.all.freed"] = _mem.n_free
    s["num_alloc_retries"] = s["num_ooms"] = 0
    return s


def memory_stats_as_nested_dict(device=None):
    out = {}
    for k, v in memory_stats(device).items():
        d = out
        parts = k.split(".")
        for p in parts[:-1]:
            d = d.setdefault(p, {})
        d[parts[-1]] = v
    return out


def host_memory_stats():
    return collections.OrderedDict()


def memory_allocated(device=None):
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device=None):
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device=None):
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device=None):
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def memory_cached(device=None):
    warnings.warn("`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`",
                  FutureWarning, stacklevel=2)
    return memory_reserved(device)


def max_memory_cached(device=None):
    warnings.warn("`torch.cuda.max_memory_cached` has been renamed to "
                  "`torch.cuda.max_memory_reserved`", FutureWarning, stacklevel=2)
    return max_memory_reserved(device)


def empty_cache():
    """Frees the pool's cached blocks (CuPy's free_all_blocks)."""
    p = _pool() if cuda_available() else None
    if p is not None:
        p.free_all_blocks()


def reset_peak_memory_stats(device=None):
    _present()
    p = _pool()
    used, total = int(p.used_bytes()), int(p.total_bytes())
    if hasattr(p, "peak"):
        p.peak = used
    _mem.peak_allocated, _mem.peak_reserved = used, total


def reset_accumulated_memory_stats(device=None):
    _present()
    _mem.allocated_total = _mem.freed_total = _mem.n_alloc = _mem.n_free = 0


def reset_max_memory_allocated(device=None):
    warnings.warn("torch.cuda.reset_max_memory_allocated now calls "
                  "torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                  FutureWarning, stacklevel=2)
    return reset_peak_memory_stats(device)


def reset_max_memory_cached(device=None):
    warnings.warn("torch.cuda.reset_max_memory_cached now calls "
                  "torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                  FutureWarning, stacklevel=2)
    return reset_peak_memory_stats(device)


def memory_summary(device=None, abbreviated=False):
    """A short table of the statistics (PyTorch's CPU build fails reading its empty ones)."""
    if not cuda_available():
        raise KeyError("allocated_bytes.all.current")
    s = memory_stats(device)
    rows = [("Allocated memory", "allocated_bytes"), ("Active memory", "active_bytes"),
            ("GPU reserved memory", "reserved_bytes")]
    lines = ["|" + "=" * 75 + "|",
             "|                  PyTorch CUDA memory summary, device ID 0                 |",
             "|" + "-" * 75 + "|", "|        Metric         | Cur Usage  | Peak Usage |"]
    for title, key in rows:
        lines.append(f"| {title:<21} | {s[key + '.all.current']:>10} | "
                     f"{s[key + '.all.peak']:>10} |")
    lines.append("|" + "=" * 75 + "|")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- legacy tensor types

class _LegacyMeta(type):
    def __instancecheck__(cls, obj):
        from .._tensor import Tensor
        return isinstance(obj, Tensor) and obj.is_cuda and obj.dtype is cls.dtype

    def __repr__(cls):
        return f"<class 'torch.cuda.{cls.__name__}'>"


def _legacy(name, dtype_name):
    from .. import _dtype as D

    def __new__(cls, *args, **kwargs):
        raise TypeError(f"type torch.cuda.{name} not available. Torch not compiled with CUDA "
                        "enabled.")
    return _LegacyMeta(name, (), {"__new__": __new__, "dtype": getattr(D, dtype_name),
                                  "is_cuda": True, "__module__": __name__})


FloatTensor = _legacy("FloatTensor", "float32")
DoubleTensor = _legacy("DoubleTensor", "float64")
HalfTensor = _legacy("HalfTensor", "float16")
ByteTensor = _legacy("ByteTensor", "uint8")
CharTensor = _legacy("CharTensor", "int8")
ShortTensor = _legacy("ShortTensor", "int16")
IntTensor = _legacy("IntTensor", "int32")
LongTensor = _legacy("LongTensor", "int64")
BoolTensor = _legacy("BoolTensor", "bool")
BFloat16Tensor = _legacy("BFloat16Tensor", "bfloat16")


# ---------------------------------------------------------------- legacy storages, graphs, pools

class _StorageMeta(type):
    def __instancecheck__(cls, obj):
        return False          # no CUDA storage can exist without CUDA

    def __repr__(cls):
        return f"<class 'torch.cuda.{cls.__name__}'>"


def _storage(name):
    def __new__(cls, *args, **kwargs):
        raise AssertionError(ERR_NOT_COMPILED)
    return _StorageMeta(name, (), {"__new__": __new__, "__module__": __name__})


FloatStorage, DoubleStorage, HalfStorage = (_storage(n) for n in
                                            ("FloatStorage", "DoubleStorage", "HalfStorage"))
ByteStorage, CharStorage, ShortStorage = (_storage(n) for n in
                                          ("ByteStorage", "CharStorage", "ShortStorage"))
IntStorage, LongStorage, BoolStorage = (_storage(n) for n in
                                        ("IntStorage", "LongStorage", "BoolStorage"))
BFloat16Storage, ComplexFloatStorage, ComplexDoubleStorage = (
    _storage(n) for n in ("BFloat16Storage", "ComplexFloatStorage", "ComplexDoubleStorage"))


class cudaStatus:
    SUCCESS = 0
    ERROR_NOT_READY = 34


def _dummy(name):
    def __new__(cls, *args, **kwargs):
        raise RuntimeError(f"Tried to instantiate dummy base class {name}")
    return __new__


class CUDAGraph:
    __new__ = _dummy("CUDAGraph")


class MemPool:
    __new__ = _dummy("MemPool")


class graph:
    """`with torch.cuda.graph(g):` captures on a side stream, which needs CUDA."""

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global",
                 enable_annotations=False, check_input_liveness=False):
        Stream()


def graph_pool_handle():
    raise RuntimeError("Tried to instantiate dummy base class _graph_pool_handle")


def make_graphed_callables(callables, sample_args, num_warmup_iters=3, allow_unused_input=False,
                           pool=None):
    CUDAGraph()


@contextlib.contextmanager
def use_mem_pool(pool, device=None):
    raise AssertionError(ERR_NOT_COMPILED)
    yield


def caching_allocator_enable(value=True):
    if is_initialized():
        raise AssertionError(ERR_NOT_COMPILED)


def caching_allocator_disabled():
    raise AssertionError(ERR_NOT_COMPILED)


def host_memory_stats_as_nested_dict():
    return {}


reset_accumulated_memory_stats = reset_accumulated_host_memory_stats = _not_compiled
reset_peak_host_memory_stats = get_allocator_backend = change_current_allocator = _not_compiled
check_error = _not_compiled

__all__ += [
    "BFloat16Storage", "BoolStorage", "ByteStorage", "CUDAGraph", "CharStorage",
    "ComplexDoubleStorage", "ComplexFloatStorage", "DoubleStorage", "FloatStorage",
    "HalfStorage", "IntStorage", "LongStorage", "MemPool", "ShortStorage",
    "caching_allocator_disabled", "caching_allocator_enable", "change_current_allocator",
    "check_error", "cudaStatus", "cudart", "get_allocator_backend", "get_stream_from_external",
    "graph", "graph_pool_handle", "host_memory_stats_as_nested_dict", "make_graphed_callables",
    "memory_snapshot", "reset_accumulated_host_memory_stats", "reset_accumulated_memory_stats",
    "reset_peak_host_memory_stats", "use_mem_pool"]
