"""`torch.autograd.profiler`: per-op CPU times, counts and input shapes, measured exactly.

A Python engine sees every op it runs, so the profiler needs no sampling and no C++ callbacks:
while one is active, each op of the registry (`aten::<name>`), each Python-level torch function
and Tensor method, each in-place op (`aten::add_`), each node of a backward pass
(`autograd::engine::evaluate_function: MulBackward0` around `MulBackward0`) and each
`record_function` range is timed with `time.perf_counter_ns` on entry and exit, on every thread,
and nested in the ranges open on its thread (Note [Profiler hooks] in _prof_state.py says where;
nothing is paid while no profiler is active). A Python function whose only child is the op of
the same name counts once (as PyTorch's table shows one row for a function and its kernel).

What differs from PyTorch, by nature: ndgrad's ops are not ATen's, so the tree below a function
is ndgrad's own (F.linear is one `aten::linear`, with no `aten::t`/`aten::addmm` inside; a
backward formula that runs as array code has no op ranges inside its node); input shapes list
the arguments as they were passed (PyTorch lists every argument of the op's schema);
`profile_memory` counts the bytes of the new tensors an op returns (allocations; PyTorch's
allocator also reports frees); there are no device kernels (CUDA times are 0).
"""
import contextlib
import functools
import gzip
import json
import os
import socket
import sys
import threading
import time
import uuid
import warnings
from collections import defaultdict

from . import _prof_state
from .profiler_util import (EventList, FunctionEvent, FunctionEventAvg, DeviceType,  # noqa: F401
                            MemRecordsAcc, Interval, Kernel, StringTable, _rewrite_name,
                            _format_time)

__all__ = ["profile", "record_function", "emit_itt", "emit_nvtx", "load_nvprof",
           "EnforceUnique", "parse_nvprof_trace", "KinetoStepTracker", "EventList",
           "FunctionEvent", "MemRecordsAcc"]

_HUB = _prof_state.HUB
_perf_ns = time.perf_counter_ns
_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_NO_RESULT = object()

# ndgrad's internal op names -> ATen's (the rest are ATen's already: aten::<name>)
_ATEN = {
    "sum_dim": "sum", "mean_dim": "mean", "max_dim": "max", "min_dim": "min",
    "prod_dim": "prod", "median_dim": "median", "nanmedian_dim": "nanmedian",
    "div_mode": "div", "select_view": "select", "slice_view": "slice",
    "unsqueeze_view": "unsqueeze", "squeeze_dim": "squeeze", "squeeze_dims": "squeeze",
    "clamp_tensor": "clamp", "clamp_min_tensor": "clamp_min", "clamp_max_tensor": "clamp_max",
    "masked_fill_tensor": "masked_fill", "index_fill_tensor": "index_fill",
    "lerp_tensor": "lerp", "pow_tensor": "pow", "pow_scalar_base": "pow",
    "fmod_scalar": "fmod", "remainder_scalar": "remainder", "copysign_scalar": "copysign",
    "xlogy_scalar_other": "xlogy", "xlogy_scalar_self": "xlogy", "rsub_tensor": "rsub",
    "to_dtype": "_to_copy", "to_device": "_to_copy", "copy": "copy_", "mul3": "mul",
    "mv_t": "mv", "vm": "mv", "sort_stable": "sort", "round_decimals": "round",
    "scatter_value": "scatter", "index_add_rows": "index_add", "sum_to": "sum_to_size",
    "alias_view": "alias", "embedding_sparse": "embedding", "take_along": "take_along_dim",
    "convolution_transpose": "convolution", "nll_loss_index": "nll_loss",
    "threshold_": "threshold", "celu_": "celu", "elu_": "elu", "leaky_relu_": "leaky_relu",
    "rrelu_with_noise_": "rrelu_with_noise",
    # Python-level functions PyTorch names otherwise
    "cross_entropy": "cross_entropy_loss",
}
_NAMES = {}  # op name -> "aten::..." (cached)


def _aten_name(name):
    n = _NAMES.get(name)
    if n is None:
        n = _NAMES[name] = "aten::" + _ATEN.get(name, name.lstrip("_") if name.startswith(
            "__") else name)
    return n


# C++ type names of PyTorch's trace ("Input type")
_CTYPES = {"float32": "float", "float64": "double", "float16": "c10::Half",
           "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int", "int16": "short int",
           "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
           "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


class _Range:
    """One open or closed range: what the profiler keeps per op (times in ns)."""
    __slots__ = ("serial", "name", "start", "end", "tid", "parent", "shapes", "scope", "seq",
                 "user", "stack", "flops", "mem", "dtypes", "strides", "concrete", "fwd_tid")

    def __init__(self, serial, name, start, tid, parent):
        self.serial, self.name, self.start, self.tid, self.parent = serial, name, start, tid, \
            parent
        self.end = None
        self.shapes = self.stack = self.dtypes = self.strides = self.concrete = None
        self.scope = 0
        self.seq = -1
        self.fwd_tid = None
        self.user = False
        self.flops = 0
        self.mem = 0


class _ThreadState(threading.local):
    def __init__(self):
        self.stack = []          # the ranges open on this thread
        self.reentry = None      # the op being recorded: its second entry into _apply runs it
        self.rename = None       # the name for the next op (an in-place op's aten::add_)


def _shape_of(a, Tensor):
    if isinstance(a, Tensor):
        return list(a.shape)
    return []


class _Hub:
    """What the active profilers share: one clock, the per-thread stacks, and the list of
    profilers each closed range goes to."""

    def __init__(self):
        self.sessions = []
        self.tls = _ThreadState()
        self.lock = threading.Lock()
        self.serial = 0
        self.threads = {}  # threading.get_ident() -> (small id, native id)
        from .._tensor import Tensor
        self.Tensor = Tensor
        self.record_shapes = self.with_stack = self.profile_memory = self.with_flops = False

    def configure(self):
        s = self.sessions
        self.record_shapes = any(x.record_shapes for x in s)
        self.with_stack = any(x.with_stack for x in s)
        self.profile_memory = any(x.profile_memory for x in s)
        self.with_flops = any(x.with_flops for x in s)

    def _tid(self):
        ident = threading.get_ident()
        t = self.threads.get(ident)
        if t is None:
            with self.lock:
                t = self.threads.get(ident)
                if t is None:
                    t = self.threads[ident] = (len(self.threads) + 1, threading.get_native_id())
        return t[0]

    # ------------------------------------------------------------ ranges
    def begin(self, name, args=None, kwargs=None, user=False, scope=0):
        st = self.tls.stack
        with self.lock:
            self.serial += 1
            serial = self.serial
        r = _Range(serial, name, 0, self._tid(), st[-1] if st else None)
        r.user = user
        r.scope = scope
        if args is not None and self.record_shapes:
            self._inputs(r, args, kwargs)
        if self.with_stack:
            r.stack = _python_stack()
        if self.with_flops and args is not None:
            r.flops = _flops(name, args)
        for s in self.sessions:
            s.ranges.append(r)
        st.append(r)
        r.start = _perf_ns()
        return r

    def end(self, r, result=_NO_RESULT):
        r.end = _perf_ns()
        st = self.tls.stack
        while st:  # (ranges left open by an exception inside close with their parent)
            top = st.pop()
            if top is r:
                break
            if top.end is None:
                top.end = r.end
        if self.profile_memory and result is not _NO_RESULT:
            r.mem = _new_bytes(result, self.Tensor)

    def _inputs(self, r, args, kwargs):
        Tensor = self.Tensor
        shapes, dtypes, strides, concrete = [], [], [], []
        for a in (args if not kwargs else list(args) + list(kwargs.values())):
            if isinstance(a, Tensor):
                shapes.append(list(a.shape))
                dtypes.append(_CTYPES.get(str(a.dtype)[6:], str(a.dtype)[6:]))
                strides.append(list(a.stride()) if a.layout is None or
                               str(a.layout) == "torch.strided" else [])
                concrete.append("")
            else:
                shapes.append([])
                strides.append([])
                if isinstance(a, (list, tuple)) and any(isinstance(x, Tensor) for x in a):
                    dtypes.append("TensorList")
                    concrete.append("")
                elif isinstance(a, (bool, int, float, complex)):
                    dtypes.append("Scalar")
                    concrete.append(str(a))
                elif a is None:
                    dtypes.append("")
                    concrete.append("")
                else:
                    dtypes.append(type(a).__name__)
                    concrete.append(str(a) if isinstance(a, (str, list, tuple)) else "")
        r.shapes, r.dtypes, r.strides, r.concrete = shapes, dtypes, strides, concrete

    # ------------------------------------------------------------ the dispatch hooks
    def op(self, op, args, kwargs):
        """An op of the registry (ops/_registry._apply's hook). Its second entry, from here,
        returns NO_RAW: the op runs."""
        tls = self.tls
        if tls.reentry is op:
            tls.reentry = None
            return _NO_RAW[0]
        name = tls.rename
        if name is not None:
            tls.rename = None
        else:
            name = _aten_name(op.name)
        r = self.begin(name, args, kwargs)
        tls.reentry = op
        result = _NO_RESULT
        try:
            result = _APPLY[0](op, args, kwargs)
            return result
        finally:
            tls.reentry = None
            self.end(r, result)

    def call(self, name, fn, args, kwargs):
        """A Python-level function or Tensor method (the wrappers of _argcheck)."""
        r = self.begin(_aten_name(name), args, kwargs)
        result = _NO_RESULT
        try:
            result = fn(*args, **kwargs)
            return result
        finally:
            self.end(r, result)

    def inplace(self, run, self_, fn, args, kwargs):
        """An in-place op (ops/_inplace.inplace): aten::<name>_ around its out-of-place op,
        which is recorded under the in-place name when it is one op of the registry."""
        base = getattr(fn, "__name__", "op")
        name = _aten_name(base.rstrip("_") + "_")
        r = self.begin(name, (self_,) + tuple(args), kwargs)
        if getattr(fn, "_op", None) is not None:
            self.tls.rename = name
        try:
            return run(self_, fn, *args, **kwargs)
        finally:
            self.tls.rename = None
            self.end(r)

    def node(self, apply, node, grads):
        """A backward node, as PyTorch's engine records it."""
        name = node.name()
        outer = self.begin("autograd::engine::evaluate_function: " + name, scope=1)
        inner = self.begin(name, grads if self.record_shapes else None, None, scope=1)
        seq = getattr(node, "_sequence_nr", None)
        if seq is not None:
            outer.seq = inner.seq = seq
        result = _NO_RESULT
        try:
            result = apply(node, grads)
            return result
        finally:
            self.end(inner, result)
            self.end(outer, result)


_NO_RAW = [None]   # graph.NO_RAW, set at the first start
_APPLY = [None]    # ops._registry._apply
_IOPS = ("__iadd__", "__isub__", "__imul__", "__itruediv__", "__ipow__", "__iand__", "__ior__",
         "__ixor__")
_saved_iops = {}


def _python_stack():
    """The Python frames of the user's code and of ndgrad's modules (not the profiler's own
    dispatch frames), innermost first, as PyTorch's "file(line): function"."""
    out = []
    f = sys._getframe(2)
    while f is not None:
        code = f.f_code
        fn = code.co_filename
        if not (fn.startswith(_PKG_DIR) and (os.path.basename(fn).startswith("<") or fn.endswith((
                "_registry.py", "_argcheck.py", "profiler.py", "_out.py", "_inplace.py",
                "engine.py", "__init__.py")))):
            out.append(f"{fn}({f.f_lineno}): {code.co_name}")
        f = f.f_back
    return out


def _new_bytes(result, Tensor):
    """The bytes of the new storage among an op's results (views add nothing)."""
    total = 0
    for t in (result if isinstance(result, (tuple, list)) else (result,)):
        if isinstance(t, Tensor):
            d = t._data
            if getattr(d, "base", None) is None:
                total += int(getattr(d, "nbytes", 0))
    return total


def _prod(xs):
    p = 1
    for x in xs:
        p *= int(x)
    return p


def _flops(name, args):
    """PyTorch's FLOP formulas (matrix products and convolutions: 2 per multiply-add;
    elementwise add and mul: one per output element)."""
    from .._tensor import Tensor
    sh = [tuple(a.shape) if isinstance(a, Tensor) else None for a in args]
    try:
        if name in ("aten::mm", "aten::matmul") and sh[0] and sh[1]:
            a, b = sh[0], sh[1]
            if len(a) == 1:
                a = (1,) + a
            if len(b) == 1:
                b = b + (1,)
            batch = _prod(a[:-2]) if len(a) > 2 else 1
            batch = max(batch, _prod(b[:-2]) if len(b) > 2 else 1)
            return 2 * batch * a[-2] * a[-1] * b[-1]
        if name in ("aten::addmm", "aten::baddbmm") and sh[1] and sh[2]:
            a, b = sh[1], sh[2]
            return 2 * _prod(a[:-1]) * a[-1] * b[-1]
        if name == "aten::bmm" and sh[0] and sh[1]:
            return 2 * _prod(sh[0]) * sh[1][-1]
        if name == "aten::linear" and sh[0] and sh[1]:
            return 2 * _prod(sh[0]) * sh[1][0]
        if name in ("aten::conv1d", "aten::conv2d", "aten::conv3d", "aten::convolution") \
                and sh[0] and sh[1]:
            x, w = sh[0], sh[1]
            return None if len(w) < 3 else _conv_flops(x, w, args)
        if name in ("aten::add", "aten::mul", "aten::add_", "aten::mul_"):
            shapes = [s for s in sh if s is not None]
            if shapes:
                import numpy as np
                return _prod(np.broadcast_shapes(*shapes))  # host: shapes, not arrays
    except Exception:
        return 0
    return 0


def _conv_flops(x, w, args):
    """2 * output elements * (input channels per group * kernel size)."""
    n_sp = len(w) - 2
    stride = args[3] if len(args) > 3 else 1
    padding = args[4] if len(args) > 4 else 0
    dilation = args[5] if len(args) > 5 else 1

    def per(v, i):
        return v[i] if isinstance(v, (tuple, list)) else v
    if isinstance(padding, str):
        out = x[-n_sp:] if padding == "same" else tuple(
            (x[-n_sp + i] - per(dilation, i) * (w[2 + i] - 1) - 1) // per(stride, i) + 1
            for i in range(n_sp))
    else:
        out = tuple((x[-n_sp + i] + 2 * per(padding, i) - per(dilation, i) * (w[2 + i] - 1) - 1)
                    // per(stride, i) + 1 for i in range(n_sp))
    batch = x[0] if len(x) == n_sp + 2 else 1
    return 2 * batch * w[0] * _prod(out) * w[1] * _prod(w[2:])


def _start(session):
    """Make `session` active (the first one turns the hooks on)."""
    hub = _HUB[0]
    if hub is None:
        from ..ops import _registry
        from .graph import NO_RAW
        _NO_RAW[0], _APPLY[0] = NO_RAW, _registry._apply
        hub = _Hub()
        _HUB[0] = hub
        _registry._PROFILER = hub
        _registry._TF_MODES += 1
        _swap_inplace_operators(hub)
    hub.sessions.append(session)
    hub.configure()
    session.t0 = _perf_ns()
    session.wall0 = time.time_ns()
    session.first_serial = hub.serial + 1
    return hub


def _stop(session):
    hub = _HUB[0]
    if hub is None or session not in hub.sessions:
        return
    session.t1 = _perf_ns()
    hub.sessions.remove(session)
    hub.configure()
    session.threads = dict(hub.threads)
    if not hub.sessions:
        from ..ops import _registry
        _registry._TF_MODES -= 1
        _registry._PROFILER = None
        _HUB[0] = None
        _restore_inplace_operators()


def _swap_inplace_operators(hub):
    """`x += y` and its siblings through ops/_inplace.inplace while profiling (their fast path
    skips it); put back at the end."""
    from .._tensor import Tensor
    from ..ops._inplace import inplace
    from .. import ops
    fns = {"__iadd__": ops.add, "__isub__": ops.sub, "__imul__": ops.mul,
           "__itruediv__": ops.div, "__ipow__": ops.pow, "__iand__": ops.bitwise_and,
           "__ior__": ops.bitwise_or, "__ixor__": ops.bitwise_xor}
    names = {"__iadd__": "add", "__isub__": "sub", "__imul__": "mul", "__itruediv__": "div",
             "__ipow__": "pow", "__iand__": "bitwise_and", "__ior__": "bitwise_or",
             "__ixor__": "bitwise_xor"}
    for attr in _IOPS:
        orig = Tensor.__dict__.get(attr)
        if orig is None:
            continue
        _saved_iops[attr] = orig

        def make(orig, fn, name):
            def op(self, other):
                h = _HUB[0]
                if h is None:
                    return orig(self, other)
                r = h.begin(_aten_name(name + "_"), (self, other))
                if getattr(fn, "_op", None) is not None:
                    h.tls.rename = r.name
                try:
                    return orig(self, other)
                finally:
                    h.tls.rename = None
                    h.end(r)
            op.__name__ = op.__qualname__ = attr
            return op
        setattr(Tensor, attr, make(orig, fns[attr], names[attr]))


def _restore_inplace_operators():
    from .._tensor import Tensor
    for attr, orig in _saved_iops.items():
        setattr(Tensor, attr, orig)
    _saved_iops.clear()


def _events(session, use_device=None):
    """The FunctionEvents of a stopped session, with their tree (exact: from the stacks)."""
    ranges = session.ranges
    t0, t1 = session.t0, getattr(session, "t1", None) or _perf_ns()
    first = session.first_serial
    ids = {}
    made = {}
    out = EventList([], use_device=use_device, profile_memory=session.profile_memory,
                    with_flops=session.with_flops)
    for i, r in enumerate(ranges, 1):
        end = r.end if r.end is not None else t1
        ids[r.serial] = i
        e = FunctionEvent(
            id=i, name=_rewrite_name(r.name, with_wildcard=True), thread=r.tid,
            start_us=(r.start - t0) / 1000.0, end_us=(end - t0) / 1000.0, overload_name="",
            fwd_thread=r.fwd_tid if r.fwd_tid is not None else (r.tid if r.scope == 1 else None),
            input_shapes=r.shapes if r.shapes is not None else [], stack=r.stack or [],
            scope=r.scope, use_device=use_device,
            cpu_memory_usage=r.mem if session.profile_memory else 0, sequence_nr=r.seq,
            flops=r.flops if session.with_flops else 0, trace_name=r.name,
            is_user_annotation=r.user, input_dtypes=r.dtypes)
        made[r.serial] = (e, r)
        out.append(e)
    for e, r in made.values():
        p = r.parent  # (one opened before this profiler started is not part of it)
        if p is not None and p.serial >= first and p.serial in made:
            parent = made[p.serial][0]
            e.set_cpu_parent(parent)
            parent.append_cpu_child(e)
    out._linked = True
    out._build_tree()
    return out


def _kineto_json(session, events, path, metadata=None):
    """A Chrome trace in the layout of PyTorch's (Kineto's) file: metadata, complete events
    ("ph": "X", microseconds) with their inputs in "args", thread and process names."""
    pid = os.getpid()
    base_us = session.wall0 / 1000.0
    threads = getattr(session, "threads", {})
    native = {small: nat for small, nat in threads.values()}
    trace = []
    for tid in sorted(native):
        trace.append({"ph": "M", "name": "thread_name", "ts": base_us, "pid": pid,
                      "tid": native[tid], "args": {"name": f"thread {native[tid]} (python)"}})
        trace.append({"ph": "M", "name": "thread_sort_index", "ts": base_us, "pid": pid,
                      "tid": native[tid], "args": {"sort_index": native[tid]}})
    trace[:0] = [{"ph": "M", "name": "process_name", "ts": base_us, "pid": pid, "tid": 0,
                  "args": {"name": "python"}},
                 {"ph": "M", "name": "process_labels", "ts": base_us, "pid": pid, "tid": 0,
                  "args": {"labels": "CPU"}},
                 {"ph": "M", "name": "process_sort_index", "ts": base_us, "pid": pid, "tid": 0,
                  "args": {"sort_index": pid}}]
    ranges = {i: r for i, r in enumerate(session.ranges, 1)}
    for idx, e in enumerate(sorted(events, key=lambda e: e.id)):
        r = ranges.get(e.id)
        args = {"External id": e.id}
        if e.sequence_nr >= 0:
            args["Sequence number"] = e.sequence_nr
            args["Fwd thread id"] = 0
        args["Record function id"] = 0
        if r is not None and r.shapes is not None:
            args["Concrete Inputs"] = r.concrete
            args["Input type"] = r.dtypes
            args["Input Strides"] = r.strides
            args["Input Dims"] = r.shapes
        if e.flops:
            args["flops"] = e.flops
        args["Ev Idx"] = idx
        trace.append({"ph": "X", "cat": "user_annotation" if e.is_user_annotation else
                      "cpu_op", "name": e.trace_name, "pid": pid,
                      "tid": native.get(e.thread, e.thread),
                      "ts": base_us + e.time_range.start, "dur": e.time_range.elapsed_us(),
                      "args": args})
    end_us = base_us + (session.t1 - session.t0) / 1000.0
    trace.append({"ph": "i", "s": "g", "name": "Iteration Start: PyTorch Profiler",
                  "pid": "Traces", "tid": "Trace PyTorch Profiler", "ts": base_us})
    trace.append({"ph": "i", "s": "g", "name": "Record Window End", "pid": "", "tid": "",
                  "ts": end_us})
    doc = {"schemaVersion": 1, "deviceProperties": [], "trace_id": session.trace_id}
    for k, v in (metadata or {}).items():
        try:
            doc[k] = json.loads(v)
        except (TypeError, ValueError):
            doc[k] = v
    if session.record_shapes:
        doc["record_shapes"] = 1
    doc.update({"host_name": socket.gethostname(), "displayTimeUnit": "ms",
                "baseTimeNanoseconds": session.wall0 - session.wall0 % 1000000000,
                "traceEvents": trace, "traceName": path})
    text = json.dumps(doc, indent=2)
    if path.endswith(".gz"):
        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        with open(path, "w") as f:
            f.write(text)


class _ProfilerStats:
    """Timings of the profiler's own steps (PyTorch's _stats)."""

    def __init__(self):
        self.profiling_window_duration_sec = 0
        self.number_of_events = 0
        self.profiler_prepare_call_duration_us = 0
        self.profiler_enable_call_duration_us = 0
        self.profiler_disable_call_duration_us = 0
        self.parse_kineto_call_duration_us = 0
        self.function_events_build_tree_call_duration_us = 0


class profile:
    """`torch.autograd.profiler.profile`: a context manager that records the ops run inside
    it; `key_averages()`, `table()`, `export_chrome_trace()`, `function_events` afterwards.

        >>> with torch.autograd.profiler.profile(record_shapes=True) as prof:
        ...     y = torch.randn(4, 4).mm(torch.randn(4, 4))
        >>> print(prof.key_averages().table(sort_by="self_cpu_time_total"))
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None, post_processing_timeout_s=None,
                 activity_filters=None):
        self.enabled = enabled
        if not enabled:
            return
        self.use_cuda = use_cuda
        if use_cuda:
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use "
                          "``use_device = 'cuda'`` instead.", FutureWarning, stacklevel=2)
            use_device = "cuda"
        self.use_device = use_device
        self.function_events_ = None
        self._function_events = None
        self._old_function_events = None
        self._needs_processing = False
        self.entered = False
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.record_shapes |= self.with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.use_cpu = use_cpu
        self.acc_events = acc_events
        self.experimental_config = experimental_config
        self.custom_trace_id_callback = custom_trace_id_callback
        if post_processing_timeout_s is not None and post_processing_timeout_s < 0:
            raise ValueError("post_processing_timeout_s must be non-negative")
        self.post_processing_timeout_s = post_processing_timeout_s
        self.kineto_results = None
        self.profiling_start_time_ns = 0
        self.profiling_end_time_ns = 0
        self._stats = _ProfilerStats()
        self.trace_id = ""
        if not use_cpu and not use_device:
            raise AssertionError("No activities specified for the profiler")
        if use_device == "cuda":
            from .. import cuda
            if not cuda.is_available():
                warnings.warn("CUDA is not available, disabling CUDA profiling", stacklevel=2)
                self.use_device = None

    def default_trace_id(self):
        return uuid.uuid4().hex.upper()

    def create_trace_id(self):
        if self.custom_trace_id_callback:
            return self.custom_trace_id_callback()
        return self.default_trace_id()

    def __enter__(self):
        if not self.enabled:
            return
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self._prepare_trace()
        self._start_trace()
        return self

    def _prepare_trace(self):
        self.entered = True
        self.trace_id = self.create_trace_id()

    def _start_trace(self):
        self.entered = True
        self.ranges = []
        self.t1 = None
        _start(self)
        self.profiling_start_time_ns = self.t0

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return
        if self._function_events and self.acc_events:
            self._old_function_events = self._function_events
        self._function_events = None
        self._needs_processing = True
        _stop(self)
        self.profiling_end_time_ns = self.t1
        self.kineto_results = self  # (the recorded ranges, read by export_chrome_trace)
        self._stats.profiling_window_duration_sec = (self.t1 - self.t0) / 1e9
        if self.acc_events:
            self._ensure_function_events()
        return False

    def __repr__(self):
        if self._needs_processing:
            self._ensure_function_events()
        if self._function_events is None:
            return "<unfinished torch.autograd.profile>"
        return repr(self._function_events)

    def __str__(self):
        if self._needs_processing:
            self._ensure_function_events()
        if self._function_events is None:
            return "<unfinished torch.autograd.profile>"
        return str(self._function_events)

    def _ensure_function_events(self):
        if self._function_events is not None:
            return
        if not self._needs_processing:  # (running, or never run: no results yet, as PyTorch)
            self._function_events = EventList([], use_device=self.use_device,
                                              profile_memory=self.profile_memory,
                                              with_flops=self.with_flops)
            self._function_events._build_tree()
            return
        self._needs_processing = False
        self._function_events = _events(self, self.use_device)
        self._stats.number_of_events = len(self._function_events)
        if self._old_function_events and self.acc_events:
            self._function_events.extend(self._old_function_events)
            self._old_function_events = None

    @property
    def function_events(self):
        if self._function_events is None or self._needs_processing:
            self._ensure_function_events()
        return self._function_events

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        self._ensure_function_events()
        return self._function_events.table(
            sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width, header=header,
            top_level_events_only=top_level_events_only)

    table.__doc__ = EventList.table.__doc__

    def export_chrome_trace(self, path, metadata=None, use_python_export=False):
        """Write the trace as a Chrome trace JSON file (gzip-compressed for a ".gz" path):
        open it in chrome://tracing or https://ui.perfetto.dev."""
        self._ensure_function_events()
        _kineto_json(self, self._function_events, path, metadata)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        self._ensure_function_events()
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        return self._function_events.export_stacks(path, metric)

    def toggle_collection_dynamic(self, enabled, activities):
        """Pause (False) or resume (True) the recording of CPU ops."""
        from ..profiler import ProfilerActivity
        if ProfilerActivity.CPU not in set(activities):
            return
        if enabled and self not in (_HUB[0].sessions if _HUB[0] else []):
            _start_again(self)
        elif not enabled:
            _pause(self)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        self._ensure_function_events()
        return self._function_events.key_averages(group_by_input_shape, group_by_stack_n,
                                                  group_by_overload_name)

    key_averages.__doc__ = EventList.key_averages.__doc__

    def total_average(self):
        self._ensure_function_events()
        return self._function_events.total_average()

    @property
    def self_cpu_time_total(self):
        """The sum of the self CPU times of all events (us)."""
        self._ensure_function_events()
        return self._function_events.self_cpu_time_total


def _pause(session):
    hub = _HUB[0]
    if hub is not None and session in hub.sessions:
        t0, wall0, first = session.t0, session.wall0, session.first_serial
        _stop(session)
        session.t0, session.wall0, session.first_serial = t0, wall0, first


def _start_again(session):
    t0, wall0, first = session.t0, session.wall0, session.first_serial
    _start(session)
    session.t0, session.wall0, session.first_serial = t0, wall0, first
    session.t1 = None


class record_function(contextlib.ContextDecorator):
    """A labelled range in the profiler's results (a context manager or a decorator); nothing
    is recorded while no profiler is active.

        >>> with torch.autograd.profiler.record_function("forward"):
        ...     y = model(x)
    """

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self.run_callbacks_on_exit = True
        self.record = None

    def __enter__(self):
        hub = _HUB[0]
        self.record = (hub, hub.begin(self.name, user=True)) if hub is not None else None
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if not self.run_callbacks_on_exit:
            return
        rec, self.record = self.record, None
        if rec is not None:
            rec[0].end(rec[1])

    def _call_end_callbacks_on_future(self, fut):
        """End the range when `fut` completes (asynchronous work); once only."""
        if not self.run_callbacks_on_exit:
            raise RuntimeError("_call_end_callbacks_on_future can only be called once.")
        self.run_callbacks_on_exit = False
        rec = self.record

        def done(f):
            if rec is not None:
                rec[1].end = _perf_ns()
            return f.value()
        return fut.then(done)


class emit_nvtx:
    """NVTX ranges for NVIDIA's profilers: none here (no CUDA runtime to annotate); the block
    runs as it is. Not reentrant, as PyTorch's."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes

    def __enter__(self):
        if not self.enabled:
            return
        if self.entered:
            raise RuntimeError("NVTX annotation context manager is not reentrant")
        self.entered = True
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return
        self.entered = False
        return False


class emit_itt(emit_nvtx):
    """ITT ranges for Intel VTune: none here; the block runs as it is."""

    def __enter__(self):
        if not self.enabled:
            return
        if self.entered:
            raise RuntimeError("ITT annotation context manager is not reentrant")
        self.entered = True
        return self


def load_nvprof(path):
    """Events of an nvprof trace (an SQLite file NVIDIA's nvprof wrote)."""
    return EventList(parse_nvprof_trace(path))


class EnforceUnique:
    """Raises if a key is seen more than once."""

    def __init__(self):
        self.seen = set()

    def see(self, *key):
        if key in self.seen:
            raise RuntimeError("duplicate key: " + str(key))
        self.seen.add(key)


def parse_nvprof_trace(path):
    """The CPU ranges and CUDA kernels of an nvprof SQLite trace, as FunctionEvents."""
    import sqlite3
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    strings = {r["id"]: r["value"] for r in conn.execute("SELECT _id_ as id, value FROM StringTable")}
    events, unique, by_id = [], EnforceUnique(), {}
    q = ("SELECT start.id AS marker_id, start.name, start.timestamp AS start_time, "
         "end.timestamp AS end_time FROM CUPTI_ACTIVITY_KIND_MARKER AS start INNER JOIN "
         "CUPTI_ACTIVITY_KIND_MARKER AS end ON start.id = end.id WHERE start.name != 0 AND "
         "end.name = 0")
    for row in conn.execute(q):
        unique.see(row["marker_id"])
        e = FunctionEvent(id=row["marker_id"], node_id=0, name=strings[row["name"]],
                          start_us=row["start_time"], end_us=row["end_time"], thread=0)
        events.append(e)
        by_id[e.id] = e
    events.sort(key=lambda e: e.time_range.start)
    return events


class KinetoStepTracker:
    """The global step count: the largest of the counts of the requesters that step (the
    profiler's step(), optimizers)."""
    _current_step = 0
    _step_dict = defaultdict(int)

    @classmethod
    def init_step_count(cls, requester):
        cls._step_dict[requester] = cls._current_step

    @classmethod
    def erase_step_count(cls, requester):
        return cls._step_dict.pop(requester, None) is not None

    @classmethod
    def increment_step(cls, requester):
        if requester not in cls._step_dict:
            cls.init_step_count(requester)
        cls._step_dict[requester] += 1
        new_step = max(cls._step_dict.values())
        if new_step > cls._current_step:
            delta = new_step - cls._current_step
            if delta > 1:
                warnings.warn("Profiler step count has increased more than 1 - current_step = "
                              f"{cls._current_step} step dict =  {cls._step_dict}", stacklevel=2)
            cls._current_step = new_step
        return cls._current_step

    @classmethod
    def current_step(cls):
        return cls._current_step


def _is_profiler_enabled():
    return _HUB[0] is not None


def _profiled(name):
    """A decorator: the function's calls are a range named `name` while profiling (for the
    library's own Python-level entry points: Optimizer.step, the DataLoader)."""
    def wrap(fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            hub = _HUB[0]
            if hub is None:
                return fn(*args, **kwargs)
            r = hub.begin(name(args) if callable(name) else name, user=True)
            try:
                return fn(*args, **kwargs)
            finally:
                hub.end(r)
        return inner
    return wrap
