"""`torch.autograd.profiler_util`: the profiler's results (FunctionEvent, FunctionEventAvg,
EventList) and their table, in PyTorch's layout.

An event is one range the profiler measured: an op (`aten::mm`), a backward node
(`MmBackward0`, inside `autograd::engine::evaluate_function: MmBackward0`) or a user range
(`record_function`). Times are microseconds (floats, nanosecond resolution); the parent/child
tree comes from the profiler's own stack of open ranges (exact), and `cpu_children` and
`self_cpu_time_total` follow from it as in PyTorch.
"""
import bisect
import enum
import itertools
import json
import math
from collections import defaultdict, namedtuple

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "Interval", "Kernel",
           "MemRecordsAcc", "StringTable", "FormattedTimesMixin"]


class DeviceType(enum.IntEnum):
    """torch._C._autograd.DeviceType (the members PyTorch lists, in its order)."""
    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    MTIA = 19
    PrivateUse1 = 20

    def __repr__(self):
        return f"<DeviceType.{self.name}: {self.value}>"

    def __str__(self):
        return f"DeviceType.{self.name}"


Kernel = namedtuple("Kernel", ["name", "device", "duration"])


class Interval:
    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start


def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_time_us):
    if total_time_us == 0:
        if time_us != 0:
            raise AssertionError(f"Expected time_us == 0 but got {time_us}")
        return "NaN"
    return f"{time_us * 100.0 / total_time_us:.2f}%"


def _format_memory(nbytes):
    for unit, size in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("KB", 1024)):
        if abs(nbytes) >= size:
            return f"{nbytes * 1.0 / size:.2f} {unit}"
    return str(nbytes) + " B"


def _time_property(name):
    return property(lambda self: _format_time(getattr(self, name)))


class FormattedTimesMixin:
    """`*_str` renderings of the times; the average per call (`cpu_time`)."""
    cpu_time_str = _time_property("cpu_time")
    device_time_str = _time_property("device_time")
    cpu_time_total_str = _time_property("cpu_time_total")
    device_time_total_str = _time_property("device_time_total")
    self_cpu_time_total_str = _time_property("self_cpu_time_total")
    self_device_time_total_str = _time_property("self_device_time_total")

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self):
        return 0.0 if self.count == 0 else self.device_time_total / self.count

    @property
    def cuda_time(self):
        return self.device_time


class FunctionEvent(FormattedTimesMixin):
    """One measured range: its name, thread, start and end (us), input shapes, children."""

    def __init__(self, id, name, thread, start_us, end_us, overload_name=None, fwd_thread=None,
                 input_shapes=None, stack=None, scope=0, use_device=None, cpu_memory_usage=0,
                 device_memory_usage=0, is_async=False, is_remote=False, sequence_nr=-1,
                 node_id=-1, device_type=DeviceType.CPU, device_index=0, device_resource_id=None,
                 is_legacy=False, flops=None, trace_name=None, concrete_inputs=None,
                 kwinputs=None, is_user_annotation=False, **extra):
        self.id = id
        self.node_id = node_id
        self.name = name
        self.overload_name = overload_name
        self.trace_name = trace_name
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = fwd_thread
        self.kernels = []
        self.count = 1
        self.cpu_children = []
        self.cpu_parent = None
        self.input_shapes = input_shapes
        self.concrete_inputs = concrete_inputs
        self.kwinputs = kwinputs
        self.stack = stack
        self.scope = scope
        self.use_device = use_device
        self.cpu_memory_usage = cpu_memory_usage
        self.device_memory_usage = device_memory_usage
        self.is_async = is_async
        self.is_remote = is_remote
        self.sequence_nr = sequence_nr
        self.device_type = device_type
        self.device_index = device_index
        self.device_resource_id = thread if device_resource_id is None else device_resource_id
        self.is_legacy = is_legacy
        self.flops = flops
        self.is_user_annotation = is_user_annotation
        self.is_python_function = extra.get("is_python_function", False)
        self.input_dtypes = extra.get("input_dtypes")
        self.structured_input_shapes = extra.get("structured_input_shapes")
        self.structured_input_strides = extra.get("structured_input_strides")
        self.self_cpu_percent = -1
        self.total_cpu_percent = -1
        self.total_device_percent = -1

    def append_kernel(self, name, device, duration):
        self.kernels.append(Kernel(name, device, duration))

    def append_cpu_child(self, child):
        """Add a direct child (one whose range lies inside this one's, on its thread)."""
        if not isinstance(child, FunctionEvent):
            raise AssertionError("Expected child to be a FunctionEvent")
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent):
        if not isinstance(parent, FunctionEvent):
            raise AssertionError("Expected parent to be a FunctionEvent")
        self.cpu_parent = parent

    @property
    def self_cpu_memory_usage(self):
        if self.is_async or self.device_type != DeviceType.CPU:
            return 0
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def self_device_memory_usage(self):
        if self.is_async or self.device_type != DeviceType.CPU:
            return 0
        return self.device_memory_usage - sum(c.device_memory_usage for c in self.cpu_children)

    self_cuda_memory_usage = self_device_memory_usage

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us() if self.device_type == DeviceType.CPU else 0

    @property
    def self_cpu_time_total(self):
        if self.is_async or self.device_type != DeviceType.CPU:
            return 0
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def device_time_total(self):
        if self.is_async or not self.use_device:
            return 0
        return sum(k.duration for k in self.kernels) + sum(
            c.device_time_total for c in self.cpu_children)

    @property
    def self_device_time_total(self):
        if self.is_async or not self.use_device:
            return 0
        return self.device_time_total - sum(c.device_time_total for c in self.cpu_children)

    cuda_time_total = device_time_total
    self_cuda_time_total = self_device_time_total

    @property
    def key(self):
        return self.name

    def __repr__(self):
        dev = self.use_device
        return (
            f"<FunctionEvent id={self.id} name={self.name} overload_name={self.overload_name} "
            f"device_type={self.device_type} node_id={self.node_id} "
            f"cpu_time={self.cpu_time_str} start_us={self.time_range.start} "
            f"end_us={self.time_range.end} "
            f"cpu_children={str([c.id for c in self.cpu_children])} "
            f"{dev}_time={self.device_time_str} name={self.name} thread={self.thread} "
            f"input_shapes={str(self.input_shapes)} cpu_memory_usage={self.cpu_memory_usage} "
            f"{dev}_memory_usage={self.device_memory_usage} is_async={self.is_async} "
            f"is_remote={self.is_remote} seq_nr={self.sequence_nr} is_legacy={self.is_legacy}>")


class FunctionEventAvg(FormattedTimesMixin):
    """The sums over the events of one key (key_averages), with the count of calls."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.use_device = None
        self.cpu_time_total = 0
        self.device_time_total = 0
        self.self_cpu_time_total = 0
        self.self_device_time_total = 0
        self.input_shapes = None
        self.overload_name = None
        self.stack = None
        self.scope = None
        self.cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.self_device_memory_usage = 0
        self.cpu_children = None
        self.cpu_parent = None
        self.device_type = DeviceType.CPU
        self.is_legacy = False
        self.flops = 0
        self.is_user_annotation = False

    def add(self, other):
        if not isinstance(other, (FunctionEvent, FunctionEventAvg)):
            raise AssertionError("Expected other to be a FunctionEvent or FunctionEventAvg")
        if self.key is None:  # the first one: its descriptive fields
            self.key = other.key
            for f in ("node_id", "is_async", "is_remote", "cpu_parent", "cpu_children",
                      "overload_name", "input_shapes", "stack", "scope", "device_type",
                      "is_legacy", "use_device", "is_user_annotation"):
                setattr(self, f, getattr(other, f))
        if other.key != self.key:
            raise AssertionError(f"Expected keys to match, but got {other.key} vs {self.key}")
        self.cpu_time_total += other.cpu_time_total
        self.device_time_total += other.device_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.self_device_time_total += other.self_device_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.device_memory_usage += other.device_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.self_device_memory_usage += other.self_device_memory_usage
        self.count += other.count
        if self.flops is None:
            self.flops = other.flops
        elif other.flops is not None:
            self.flops += other.flops
        return self

    def __iadd__(self, other):
        return self.add(other)

    def __repr__(self):
        dev = self.use_device or "cuda"
        return (
            f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
            f"cpu_time={self.cpu_time_str}  self_{dev}_time={self.self_device_time_total_str} "
            f"{dev}_time={self.device_time_str} input_shapes={str(self.input_shapes)} "
            f"cpu_memory_usage={self.cpu_memory_usage} "
            f"{dev}_memory_usage={self.device_memory_usage}>")


class StringTable(defaultdict):
    """Names as they are (PyTorch demangles C++ names here; ndgrad's are Python's)."""

    def __missing__(self, key):
        self[key] = key
        return key


class MemRecordsAcc:
    """The memory records of a time window (start, end in ns), by their start times."""

    def __init__(self, mem_records):
        self._mem_records = mem_records
        self._start_nses = [r[0].start_ns() for r in mem_records]
        self._indices = sorted(range(len(mem_records)), key=lambda i: self._start_nses[i])
        self._start_nses.sort()

    def in_interval(self, start_us, end_us):
        lo = bisect.bisect_left(self._start_nses, start_us * 1000)
        hi = bisect.bisect_right(self._start_nses, end_us * 1000)
        for i in range(lo, hi):
            yield self._mem_records[self._indices[i]]


def _rewrite_name(name, with_wildcard=False):
    if with_wildcard and name.startswith("ProfilerStep#"):
        return "ProfilerStep*"
    return name


class EventList(list):
    """A list of FunctionEvents (or FunctionEventAvgs) with the profiler's summaries."""

    def __init__(self, *args, **kwargs):
        use_device = kwargs.pop("use_device", None)
        profile_memory = kwargs.pop("profile_memory", False)
        with_flops = kwargs.pop("with_flops", False)
        super().__init__(*args, **kwargs)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._tree_built = False
        self._with_flops = with_flops

    def _build_tree(self):
        self._populate_cpu_children()
        self._remove_dup_nodes()
        self._tree_built = True

    def __str__(self):
        return self.table()

    def _populate_cpu_children(self):
        """Parents and children by time ranges, per thread (for events made by hand; the
        profiler's own come with their tree, `_linked`)."""
        if getattr(self, "_linked", False):
            return
        events = sorted((e for e in self if not e.is_async and e.device_type == DeviceType.CPU),
                        key=lambda e: (e.thread, e.node_id))
        for _, group in itertools.groupby(events, key=lambda e: (e.thread, e.node_id)):
            open_ = []
            for e in sorted(group, key=lambda e: (e.time_range.start, -e.time_range.end)):
                while open_:
                    p = open_[-1]
                    if e.time_range.start >= p.time_range.end or \
                            e.time_range.end > p.time_range.end:
                        open_.pop()
                    else:
                        p.append_cpu_child(e)
                        e.set_cpu_parent(p)
                        break
                open_.append(e)

    def _remove_dup_nodes(self):
        """A range whose only child has its name (a Python-level function around the op of the
        same name) counts once, as PyTorch's table shows a function and its kernel."""
        while True:
            drop = set()
            for i, e in enumerate(self):
                p = e.cpu_parent
                if p is not None and p.name == e.name and len(p.cpu_children) == 1:
                    p.cpu_children = e.cpu_children
                    if e.input_shapes:  # (the op's own arguments: ATen's, not the Python
                        p.input_shapes = e.input_shapes  # function's such as inplace=)
                    p.kernels = e.kernels
                    for c in e.cpu_children:
                        c.cpu_parent = p
                    drop.add(i)
            if not drop:
                return
            keep = [e for i, e in enumerate(self) if i not in drop]
            self.clear()
            self.extend(keep)

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        """The events as PyTorch's profiler table (sort_by: an attribute, e.g.
        "cpu_time_total", "self_cpu_time_total", "count"; row_limit: -1 for all)."""
        return _build_table(self, sort_by=sort_by, row_limit=row_limit,
                            max_src_column_width=max_src_column_width,
                            max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width, header=header,
                            profile_memory=self._profile_memory, with_flops=self._with_flops,
                            top_level_events_only=top_level_events_only, time_unit=time_unit)

    def export_chrome_trace(self, path):
        """The events as a Chrome trace (a JSON list of complete events, "ph": "X")."""
        out = []
        for e in self:
            if e.trace_name is None:
                continue
            out.append({"name": e.trace_name, "ph": "X", "ts": e.time_range.start,
                        "dur": e.time_range.elapsed_us(), "tid": e.thread,
                        "pid": "CPU functions", "args": {}})
        with open(path, "w") as f:
            json.dump(out, f)

    def supported_export_stacks_metrics(self):
        return ["self_cpu_time_total", "self_cuda_time_total", "self_xpu_time_total",
                "self_privateuse1_time_total"]

    def export_stacks(self, path, metric):
        """One line per event with a stack: "outer;...;inner value" (flame graph input)."""
        if metric not in self.supported_export_stacks_metrics():
            raise ValueError("metric should be one of: "
                             + str(self.supported_export_stacks_metrics()))
        table = str.maketrans(" ;\t\n", "____")
        attr = metric.replace("cuda", "device").replace("xpu", "device").replace(
            "privateuse1", "device")
        with open(path, "w") as f:
            for e in self:
                if e.stack:
                    value = getattr(e, attr)
                    if int(value) > 0:
                        f.write(";".join(s.translate(table) for s in reversed(e.stack))
                                + " " + str(int(value)) + "\n")

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """One FunctionEventAvg per name (and input shapes, stack prefix, overload)."""
        if not self._tree_built:
            raise AssertionError("Expected tree to be built before calling key_averages")
        stats = defaultdict(FunctionEventAvg)
        for e in self:
            key = [str(e.key), str(e.node_id), str(e.device_type), str(e.is_legacy),
                   str(e.is_user_annotation)]
            if group_by_overload_name:
                key.append(e.overload_name)
            if group_by_input_shapes:
                key.append(str(e.input_shapes))
            if group_by_stack_n > 0:
                key += e.stack[:group_by_stack_n]
            stats[tuple(key)].add(e)
        avg = EventList(stats.values(), use_device=self._use_device,
                        profile_memory=self._profile_memory, with_flops=self._with_flops)
        for e in avg:
            e.stack = e.stack[:group_by_stack_n]
            if not group_by_input_shapes:
                e.input_shapes = ""
            if not group_by_overload_name:
                e.overload_name = ""
        return avg

    def total_average(self):
        """The sums over every event, as one FunctionEventAvg keyed "Total"."""
        total = FunctionEventAvg()
        for e in self:
            total += e
            total.key = None
        total.key = "Total"
        return total


def _build_table(events, sort_by=None, header=None, row_limit=100, max_src_column_width=75,
                 max_name_column_width=55, max_shapes_column_width=80, with_flops=False,
                 profile_memory=False, top_level_events_only=False, time_unit=None):
    """PyTorch's profiler table: the same columns, widths, units and footer."""
    if len(events) == 0:
        return ""
    has_device_time = any(e.self_device_time_total > 0 for e in events)
    has_device_mem = any(e.self_device_memory_usage > 0 for e in events)
    use_device = events[0].use_device
    if not use_device and has_device_time:
        raise RuntimeError("use_device is None, but there is device performance data.")
    has_input_shapes = any(e.input_shapes is not None and len(e.input_shapes) > 0
                           for e in events)
    has_overload_names = any(e.overload_name is not None and len(e.overload_name) > 0
                             for e in events)
    if sort_by is not None:
        attr = sort_by.replace("cuda", "device").replace("xpu", "device").replace(
            "privateuse1", "device")
        events = EventList(sorted(events, key=lambda e: getattr(e, attr), reverse=True),
                           use_device=use_device, profile_memory=profile_memory,
                           with_flops=with_flops)
    name_width = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    shapes_width = max(len(str(e.input_shapes)) for e in events) + 4
    if max_shapes_column_width is not None:
        shapes_width = min(shapes_width, max_shapes_column_width)
    WIDTH = 12
    stacks = [e.stack for e in events if e.stack is not None and len(e.stack) > 0]
    has_stack = len(stacks) > 0
    src_width = None
    if has_stack:
        src_width = max(max(len(s) for s in st) for st in stacks) + 4
        if max_src_column_width is not None:
            src_width = min(src_width, max_src_column_width)

    headers = ["Name"] + (["Overload Name"] if has_overload_names else []) + [
        "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    device_name = use_device.upper() if use_device is not None else "None"
    if has_device_time:
        headers += [f"Self {device_name}", f"Self {device_name} %", f"{device_name} total",
                    f"{device_name} time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
        if use_device and has_device_mem:
            headers += [f"{device_name} Mem", f"Self {device_name} Mem"]
    headers.append("# of Calls")
    node_id = any(e.node_id != -1 for e in events)
    if node_id:
        headers.append("Node ID")

    fmt, sep, length = [""], [""], [-2]

    def column(width, align=">"):
        fmt[0] += "{: " + align + str(width) + "}  "
        sep[0] += "-" * width + "  "
        length[0] += width + 2

    column(name_width)
    if has_overload_names:
        column(name_width)
    for _ in headers[1 + has_overload_names:]:
        column(WIDTH)
    if has_input_shapes:
        headers.append("Input Shapes")
        column(shapes_width)
    if has_stack:
        headers.append("Source Location")
        column(src_width, "<")
    if with_flops:
        raw = [e.flops for e in events if e.flops > 0]
        if raw:
            names = ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"]
            level = max(0, min(math.log10(min(raw)) / 3, float(len(names) - 1)))
            flops_scale = pow(10, math.floor(level) * -3.0)
            headers.append(f"Total {names[int(level)]}")
            column(WIDTH)
        else:
            with_flops = False
    row_format, header_sep, line_length = fmt[0], sep[0], length[0]

    out = []

    def append(s):
        out.append(s)
        out.append("\n")

    total_self_cpu = sum(e.self_cpu_time_total for e in events)
    total_self_device = sum(e.self_device_time_total for e in events
                            if e.device_type != DeviceType.CPU and not e.is_user_annotation)

    def unit(t, default):
        if time_unit == "s":
            return f"{t / 1e6:.3f}s"
        if time_unit == "ms":
            return f"{t / 1e3:.3f}ms"
        if time_unit == "us":
            return f"{t:.3f}us"
        return default

    def trim(path):
        if len(path) > src_width:
            path = path[len(path) - src_width:]
            if len(path) > 3:
                path = "..." + path[3:]
        return path

    if header is not None:
        append("=" * line_length)
        append(header)
    if top_level_events_only:
        append("=" * line_length)
        append("This report only display top-level ops statistics")
    append(header_sep)
    append(row_format.format(*headers))
    append(header_sep)
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        e.self_cpu_percent = _format_time_share(e.self_cpu_time_total, total_self_cpu)
        e.total_cpu_percent = _format_time_share(e.cpu_time_total, total_self_cpu) \
            if not e.is_async else 0
        row = [name]
        if has_overload_names:
            ov = e.overload_name
            if max_name_column_width is not None and len(ov) >= max_name_column_width - 3:
                ov = ov[:max_name_column_width - 3] + "..."
            row.append(ov)
        row += [e.self_cpu_percent, unit(e.self_cpu_time_total, e.self_cpu_time_total_str),
                e.total_cpu_percent, unit(e.cpu_time_total, e.cpu_time_total_str),
                unit(e.cpu_time, e.cpu_time_str)]
        if has_device_time:
            e.total_device_percent = _format_time_share(e.self_device_time_total,
                                                        total_self_device)
            row += [unit(e.self_device_time_total, e.self_device_time_total_str),
                    e.total_device_percent,
                    unit(e.device_time_total, e.device_time_total_str),
                    unit(e.device_time, e.device_time_str)]
        if profile_memory:
            row += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
            if use_device and has_device_mem:
                row += [_format_memory(e.device_memory_usage),
                        _format_memory(e.self_device_memory_usage)]
        row.append(e.count)
        if node_id:
            row.append(e.node_id)
        if has_input_shapes:
            row.append(str(e.input_shapes)[:shapes_width])
        if with_flops:
            row.append("--" if e.flops <= 0 else f"{e.flops * flops_scale:8.3f}")
        if has_stack:
            row.append(trim(e.stack[0]) if len(e.stack) > 0 else "")
        append(row_format.format(*row))
        if has_stack:
            blank = [""] * (len(headers) - 1)
            for entry in e.stack[1:]:
                append(row_format.format(*(blank + [trim(entry)])))
            append(row_format.format(*(blank + [""])))
    append(header_sep)
    append(f"Self CPU time total: {unit(total_self_cpu, _format_time(total_self_cpu))}")
    if has_device_time:
        append(f"Self {device_name} time total: "
               f"{unit(total_self_device, _format_time(total_self_device))}")
    return "".join(out)
