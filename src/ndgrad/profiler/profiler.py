"""`torch.profiler.profile` and its schedule: the profiler of torch.autograd.profiler (which
measures every op exactly) driven step by step, as PyTorch's Kineto-based one.

    with torch.profiler.profile(
            schedule=torch.profiler.schedule(wait=1, warmup=1, active=2),
            on_trace_ready=torch.profiler.tensorboard_trace_handler("./log")) as prof:
        for batch in loader:
            train_step(batch)
            prof.step()
"""
import enum
import json
import os
import socket
import time
import warnings
from functools import partial

from ..autograd import profiler as prof
from ..autograd.profiler_util import DeviceType  # noqa: F401

__all__ = ["supported_activities", "ProfilerAction", "schedule", "tensorboard_trace_handler",
           "profile", "ExecutionTraceObserver", "ProfilerActivity", "_KinetoProfile"]

PROFILER_STEP_NAME = "ProfilerStep"


class ProfilerActivity(enum.IntEnum):
    """torch._C._profiler.ProfilerActivity: the groups of activities a profiler records (CPU
    ops here; the devices' kernels have no timeline in ndgrad)."""
    CPU = 0
    XPU = 1
    CUDA = 2
    HPU = 3
    MTIA = 4
    PrivateUse1 = 5

    def __repr__(self):
        return f"<ProfilerActivity.{self.name}: {self.value}>"

    def __str__(self):
        return f"ProfilerActivity.{self.name}"


class _ExperimentalConfig:
    """Kineto's experimental options: accepted and kept (none changes what ndgrad records)."""

    def __init__(self, profiler_metrics=(), profiler_measure_per_kernel=False, verbose=False,
                 performance_events=(), enable_cuda_sync_events=False,
                 adjust_profiler_step=False, disable_external_correlation=False,
                 profile_all_threads=False, capture_overload_names=False, record_python_gc_info=False,
                 expose_kineto_event_metadata=False, custom_profiler_config="",
                 adjust_timestamps=False, trace_only=False):
        self.profiler_metrics = list(profiler_metrics)
        self.verbose = verbose
        self.trace_only = trace_only
        self.custom_profiler_config = custom_profiler_config
        self.capture_overload_names = capture_overload_names
        self.profile_all_threads = profile_all_threads


def supported_activities():
    """The activities this build can record: CPU, and CUDA where a GPU is available (its ops
    are recorded on the CPU timeline; kernels have no times of their own here)."""
    from .. import cuda
    acts = {ProfilerActivity.CPU}
    if cuda.is_available():
        acts.add(ProfilerActivity.CUDA)
    return acts


def kineto_available():
    """True: the profiler's results and traces are Kineto's (PyTorch's default build)."""
    return True


def _parse_activities(activities):
    acts, filters = set(), {}
    for item in activities:
        if isinstance(item, dict):
            for k, v in item.items():
                if k in acts:
                    raise ValueError(f"Duplicate activity group: {k}")
                acts.add(k)
                filters[k] = set(v)
        else:
            if item in acts:
                raise ValueError(f"Duplicate activity group: {item}")
            acts.add(item)
    return acts, filters


class _KinetoProfile:
    """The profiler without a schedule: start(), stop(), and the results of the last run."""

    def __init__(self, *, activities=None, record_shapes=False, profile_memory=False,
                 with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False,
                 custom_trace_id_callback=None, post_processing_timeout_s=None):
        if activities is not None:
            self.activities, self.activity_filters = _parse_activities(activities)
        else:
            self.activities, self.activity_filters = supported_activities(), {}
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.experimental_config = experimental_config
        self.execution_trace_observer = execution_trace_observer
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        self.post_processing_timeout_s = post_processing_timeout_s
        self.profiler = None
        self.has_cudagraphs = False
        self.mem_tl = None
        self.use_device = "cuda" if ProfilerActivity.CUDA in self.activities else None
        self.preset_metadata = {}
        self._trace_metadata = {}

    def start(self):
        self.prepare_trace()
        self.start_trace()

    def stop(self):
        self.stop_trace()

    def prepare_trace(self):
        if self.profiler is not None and not self.acc_events:
            prof_warn_once("Warning: Profiler clears events at the end of each cycle. Only "
                           "events from the current cycle will be reported. To keep events "
                           "across cycles, set acc_events=True.")
        if self.profiler is None or not self.acc_events:
            self.profiler = prof.profile(
                use_cpu=ProfilerActivity.CPU in self.activities, use_device=self.use_device,
                record_shapes=self.record_shapes, with_flops=self.with_flops,
                profile_memory=self.profile_memory, with_stack=self.with_stack,
                with_modules=self.with_modules, use_kineto=True,
                experimental_config=self.experimental_config, acc_events=self.acc_events,
                custom_trace_id_callback=self.custom_trace_id_callback,
                post_processing_timeout_s=self.post_processing_timeout_s)
        self.profiler._prepare_trace()
        self._trace_metadata = {}

    def start_trace(self):
        if self.execution_trace_observer:
            self.execution_trace_observer.start()
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before starting trace")
        self.profiler._start_trace()
        for flag in ("profile_memory", "with_stack", "record_shapes", "with_modules",
                     "with_flops"):
            if getattr(self, flag):
                self.add_metadata_json(flag, "1")
        for k, v in self.preset_metadata.items():
            self.add_metadata_json(k, v)

    def stop_trace(self):
        if self.execution_trace_observer:
            self.execution_trace_observer.stop()
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before stopping trace")
        self.profiler.__exit__(None, None, None)

    def export_chrome_trace(self, path, use_python_export=False):
        """Write the last cycle's trace as a Chrome trace JSON file (gzipped for ".gz")."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before exporting chrome trace")
        return self.profiler.export_chrome_trace(path, self._trace_metadata)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before exporting stacks")
        return self.profiler.export_stacks(path, metric)

    def toggle_collection_dynamic(self, enable, activities):
        """Stop (False) or resume (True) recording CPU ops in the middle of a run."""
        if self.profiler is None:
            return
        self.profiler.toggle_collection_dynamic(enable, activities)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """The events averaged by name (and input shapes, stack, overload): an EventList of
        FunctionEventAvg with `.table()`."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before getting key averages")
        return self.profiler.key_averages(group_by_input_shape, group_by_stack_n,
                                          group_by_overload_name)

    def events(self):
        """The unaggregated events of the last cycle (an EventList of FunctionEvent)."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before accessing events")
        return self.profiler.function_events

    def add_metadata(self, key, value):
        """A string entry in the trace's metadata."""
        self._trace_metadata[key] = json.dumps(value)

    def add_metadata_json(self, key, value):
        """A JSON entry (given as its text) in the trace's metadata."""
        self._trace_metadata[key] = value

    def preset_metadata_json(self, key, value):
        """A JSON entry for the traces of every later cycle."""
        self.preset_metadata[key] = value

    def _get_distributed_info(self):
        from .. import distributed as dist
        if not dist.is_available() or not dist.is_initialized():
            return None
        return {"backend": dist.get_backend(), "rank": dist.get_rank(),
                "world_size": dist.get_world_size()}

    def export_memory_timeline(self, path, device=None):
        raise NotImplementedError(
            "export_memory_timeline: ndgrad's profiler records the bytes each op allocates "
            "(profile_memory=True, key_averages()'s CPU Mem columns), not an allocator timeline")


_warned = set()


def prof_warn_once(msg):
    if msg not in _warned:
        _warned.add(msg)
        warnings.warn(msg, stacklevel=3)


class ProfilerAction(enum.Enum):
    """What the profiler does at a step (a schedule's answer)."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """The schedule that skips `skip_first` steps, then cycles through `wait` idle steps,
    `warmup` steps and `active` recorded steps (the last one RECORD_AND_SAVE: on_trace_ready
    runs), `repeat` times (0: for ever)."""
    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 else \
            ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup="
            f"{warmup} (need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
            f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)
    return schedule_fn


def _default_schedule_fn(_):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False,
                              use_python_export=False):
    """An on_trace_ready handler that writes each cycle's trace into `dir_name` as
    "<worker>.<ns>.pt.trace.json[.gz]" (TensorBoard's profiler plugin reads that folder)."""
    def handler_fn(p):
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json"
        if use_gzip:
            file_name += ".gz"
        p.export_chrome_trace(os.path.join(dir_name, file_name),
                              use_python_export=use_python_export)
    return handler_fn


class profile(_KinetoProfile):
    """`torch.profiler.profile`: records the ops run inside it (see torch.autograd.profiler),
    step by step with a `schedule`, calling `on_trace_ready` at the end of each cycle.

        >>> with torch.profiler.profile(record_shapes=True) as prof:
        ...     model(x).sum().backward()
        >>> print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, use_cuda=None, custom_trace_id_callback=None,
                 post_processing_timeout_s=None):
        if activities is not None:
            acts = set()
            for item in activities:
                if isinstance(item, ProfilerActivity):
                    acts.add(item)
                elif isinstance(item, dict):
                    acts.update(item.keys())
        else:
            acts = supported_activities()
        if use_cuda is not None:
            warnings.warn("`use_cuda` is deprecated, use `activities` argument instead",
                          FutureWarning, stacklevel=2)
            if use_cuda:
                acts.add(ProfilerActivity.CUDA)
            elif ProfilerActivity.CUDA in acts:
                acts.remove(ProfilerActivity.CUDA)
        if len(acts) == 0:
            raise AssertionError("No valid profiler activities found")
        super().__init__(activities=activities if activities is not None else acts,
                         record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack, with_flops=with_flops, with_modules=with_modules,
                         experimental_config=experimental_config,
                         execution_trace_observer=execution_trace_observer,
                         acc_events=acc_events,
                         custom_trace_id_callback=custom_trace_id_callback,
                         post_processing_timeout_s=post_processing_timeout_s)
        self.activities = acts
        if schedule:
            self.schedule = schedule
            self.record_steps = True
        else:
            self.schedule = _default_schedule_fn
            self.record_steps = False
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.step_rec_fn = None
        action = self.schedule(self.step_num)
        if action == ProfilerAction.DEVICE_STOPPED:
            raise ValueError("ProfilerAction.DEVICE_STOPPED is set internally by the profiler "
                             "and must not be returned by a user-provided schedule")
        self.current_action = action
        A = ProfilerAction
        start = [self.prepare_trace, self.start_trace]
        self.action_map = {
            (A.NONE, A.NONE): [], (A.NONE, A.WARMUP): [self.prepare_trace],
            (A.NONE, A.RECORD): start, (A.NONE, A.RECORD_AND_SAVE): start,
            (A.WARMUP, A.NONE): [partial(warnings.warn, "Incorrect schedule: WARMUP followed "
                                         "by NONE"), self.start_trace, self.stop_trace],
            (A.WARMUP, A.WARMUP): [], (A.WARMUP, A.RECORD): [self.start_trace],
            (A.WARMUP, A.RECORD_AND_SAVE): [self.start_trace],
            (A.RECORD, A.NONE): [partial(warnings.warn, "Incorrect schedule: RECORD followed "
                                         "by NONE"), self.stop_trace],
            (A.RECORD, A.WARMUP): [partial(warnings.warn, "Incorrect schedule: RECORD "
                                           "followed by WARMUP"), self.stop_trace],
            (A.RECORD, A.RECORD): [], (A.RECORD, A.RECORD_AND_SAVE): [],
            (A.RECORD_AND_SAVE, A.NONE): [self.stop_trace, self._trace_ready],
            (A.RECORD_AND_SAVE, A.WARMUP): [self.stop_trace, self._trace_ready,
                                            self.prepare_trace],
            (A.RECORD_AND_SAVE, A.RECORD): [self.stop_trace, self._trace_ready] + start,
            (A.RECORD_AND_SAVE, A.RECORD_AND_SAVE): [self.stop_trace, self._trace_ready]
            + start,
            (A.WARMUP, None): [self.start_trace, self.stop_trace],
            (A.RECORD, None): [self.stop_trace, self._trace_ready],
            (A.RECORD_AND_SAVE, None): [self.stop_trace, self._trace_ready],
        }
        prof.KinetoStepTracker.init_step_count(PROFILER_STEP_NAME)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()
        prof.KinetoStepTracker.erase_step_count(PROFILER_STEP_NAME)
        if self.execution_trace_observer:
            self.execution_trace_observer.cleanup()

    def start(self):
        self._transit_action(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self.step_rec_fn = prof.record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def stop(self):
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        self._transit_action(self.current_action, None)

    def step(self):
        """Signal that the next step begins: the schedule's action for it is taken (recording
        starts or stops, on_trace_ready runs at the end of a cycle)."""
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        prev = self.current_action
        action = self.schedule(self.step_num + 1)
        if action == ProfilerAction.DEVICE_STOPPED:
            raise ValueError("ProfilerAction.DEVICE_STOPPED is set internally by the profiler "
                             "and must not be returned by a user-provided schedule")
        self.step_num += 1
        self.current_action = action
        self._transit_action(prev, self.current_action)
        if self.record_steps:
            self.step_rec_fn = prof.record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def set_custom_trace_id_callback(self, callback):
        self.custom_trace_id_callback = callback

    def get_trace_id(self):
        if self.profiler is None:
            return None
        return self.profiler.trace_id

    def _trace_ready(self):
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _transit_action(self, prev_action, current_action):
        for action in self.action_map.get((prev_action, current_action)) or ():
            action()

    def _stats(self):
        return None if self.profiler is None else self.profiler._stats


class ExecutionTraceObserver:
    """PyTorch's execution trace (a graph of the ops run, with their inputs and outputs) as a
    JSON file: `register_callback(path)`, then pass it to profile(...) or start()/stop() it.
    Its nodes are the ops ndgrad records (names, input shapes and types, parent links)."""

    def __init__(self):
        self._registered = False
        self._execution_trace_running = False
        self.extra_resources_collection = False
        self.resources_dir = ""
        self.output_file_path = ""
        self._session = None

    def __del__(self):
        self.unregister_callback()

    @staticmethod
    def build_execution_trace_obs_from_env():
        if os.environ.get("ENABLE_PYTORCH_EXECUTION_TRACE", "0") == "1":
            import tempfile
            fp = tempfile.NamedTemporaryFile("w+t", suffix=".et.json", delete=False)
            fp.close()
            et = ExecutionTraceObserver()
            et.register_callback(fp.name)
            return et
        return None

    def set_extra_resource_collection(self, val):
        self.extra_resources_collection = val

    def register_callback(self, output_file_path):
        """Set the file the trace goes to (returns self)."""
        if not self._registered:
            self.output_file_path = output_file_path
            self._registered = True
        return self

    def get_resources_dir(self, can_create=False):
        return None

    def unregister_callback(self):
        if self._execution_trace_running:
            self.stop()
        self._registered = False

    def is_registered(self):
        return self._registered

    def is_running(self):
        return self._execution_trace_running

    def start(self):
        if self._registered and not self._execution_trace_running:
            self._session = prof.profile(record_shapes=True)
            self._session.__enter__()
            self._execution_trace_running = True

    def stop(self):
        if self._execution_trace_running:
            self._session.__exit__(None, None, None)
            self._execution_trace_running = False
            self._write()

    def cleanup(self):
        pass

    def get_output_file_path(self):
        if not self._registered:
            raise RuntimeError("A callback to the ET profiler needs to be registered first "
                               "before getting the output file path")
        return self.output_file_path

    def _write(self):
        events = self._session.function_events
        nodes = [{"id": 1, "name": "[pytorch|profiler|execution_trace|process]", "ctrl_deps": 1,
                  "inputs": {"values": [], "shapes": [], "types": []},
                  "outputs": {"values": [], "shapes": [], "types": []}, "attrs": []}]
        for e in events:
            parent = e.cpu_parent.id + 1 if e.cpu_parent is not None else 1
            nodes.append({"id": e.id + 1, "name": e.name, "ctrl_deps": parent,
                          "inputs": {"values": [], "shapes": e.input_shapes or [],
                                     "types": e.input_dtypes or []},
                          "outputs": {"values": [], "shapes": [], "types": []},
                          "attrs": [{"name": "rf_id", "type": "uint64", "value": e.id},
                                    {"name": "fw_parent", "type": "uint64", "value": 0},
                                    {"name": "seq_id", "type": "int64", "value": e.sequence_nr},
                                    {"name": "scope", "type": "uint64", "value": e.scope},
                                    {"name": "tid", "type": "uint64", "value": e.thread}]})
        doc = {"schema": "1.1.1-chakra.0.0.4", "pid": os.getpid(), "time": time.strftime(
            "%Y-%m-%d %H:%M:%S"), "start_ts": 0, "finish_ts": 0, "nodes": nodes}
        with open(self.output_file_path, "w") as f:
            json.dump(doc, f)
