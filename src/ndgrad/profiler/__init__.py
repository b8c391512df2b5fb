"""`torch.profiler`: per-op CPU times, call counts and input shapes of a program, measured
exactly by ndgrad's op dispatch (see torch.autograd.profiler), with PyTorch's API: `profile`
(schedules, `step()`, `on_trace_ready`), `record_function` ranges, `key_averages().table()`,
`export_chrome_trace()`, `tensorboard_trace_handler`."""
from ..autograd.profiler import record_function, KinetoStepTracker  # noqa: F401
from ..autograd.profiler_util import DeviceType
from .profiler import (_KinetoProfile, ExecutionTraceObserver, profile, ProfilerAction,  # noqa: F401
                       ProfilerActivity, schedule, supported_activities,
                       tensorboard_trace_handler, kineto_available, _ExperimentalConfig)
from . import itt  # noqa: F401
import enum as _enum


class RecordScope(_enum.IntEnum):
    """torch._C._profiler.RecordScope: what kind of range a record is."""
    FUNCTION = 0
    BACKWARD_FUNCTION = 1
    TORCHSCRIPT_FUNCTION = 2
    KERNEL_FUNCTION_DTYPE = 3
    CUSTOM_CLASS = 4
    BUILD_FEATURE = 5
    LITE_INTERPRETER = 6
    USER_SCOPE = 7
    STATIC_RUNTIME_OP = 8
    STATIC_RUNTIME_MODEL = 9


__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler",
           "ProfilerAction", "ProfilerActivity", "kineto_available", "DeviceType",
           "record_function", "ExecutionTraceObserver"]
