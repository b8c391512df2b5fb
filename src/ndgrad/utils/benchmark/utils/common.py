"""TaskSpec, Measurement and the formatting helpers of torch.utils.benchmark.

The statistics are PyTorch's: quantiles by linear interpolation over the per-run times, the
significant figures from the interquartile points' spread (z = 1.645), and the units chosen
from the float32 logarithm of the median, as PyTorch's tensors compute them."""
import collections
import contextlib
import dataclasses
import math
import os
import tempfile
import textwrap
import time
import uuid

import numpy as np

__all__ = ["TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig",
           "ordered_unique", "set_torch_threads"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # 25 ns
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


def _log10_f32(x):
    """log10 of float32(x), rounded to float32 (PyTorch's float32 log10 is correctly rounded
    where NumPy's float32 loop may be an ulp off: log10(float32(1e-6)) is -6.0)."""
    x = float(np.float32(x))
    if x <= 0 or not math.isfinite(x):
        return float("-inf") if x == 0 else float("nan") if x < 0 else x
    return float(np.float32(math.log10(x)))


def _torch():
    import sys
    return sys.modules[__name__.split(".")[0]]


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """What a Timer measures (everything but its globals)."""
    stmt: str
    setup: str
    global_setup: str = ""
    label: str = None
    sub_label: str = None
    description: str = None
    env: str = None
    num_threads: int = 1

    @property
    def title(self):
        """A label for the measurement: the label (or statement) and the sub-label."""
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return (f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n"
                f"{textwrap.indent(self.stmt, '  ')}")

    def setup_str(self):
        if self.setup == "pass" or not self.setup:
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self):
        """The task's part of a Measurement's repr."""
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join([f"{i}\n" if "\n" in i else i for i in sections if i])


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """The times of one or more runs of a statement: `number_per_run` executions per entry
    of `raw_times` (seconds); the task's fields (`label`, `num_threads`, ...) read through."""
    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict = None

    def __post_init__(self):
        self._sorted_times = ()
        self._warnings = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name):
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    @property
    def times(self):
        """Seconds per execution, one per measurement."""
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self):
        self._lazy_init()
        return self._median

    @property
    def mean(self):
        self._lazy_init()
        return self._mean

    @property
    def iqr(self):
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self):
        """The digits the interquartile points' 90% confidence interval supports (1 to 4)."""
        self._lazy_init()
        n = len(self._sorted_times)
        points = self._sorted_times[n // 4:int(np.ceil(np.float32(3 * n / 4)))]
        std = float(np.std(np.asarray(points, dtype=np.float32)))
        sqrt_n = float(np.sqrt(np.float32(len(points))))
        ci = max(1.645 * std / sqrt_n, _MIN_CONFIDENCE_INTERVAL)
        rel = _log10_f32(self._median / ci)
        return min(max(int(np.floor(np.float32(rel))), 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self):
        self._lazy_init()
        return bool(self._warnings)

    def _lazy_init(self):
        if self.raw_times and not self._sorted_times:
            self._sorted_times = tuple(sorted(self.times))
            s = np.asarray(self._sorted_times, dtype=np.float64)
            self._median = float(np.quantile(s, 0.5))
            self._mean = float(np.mean(s))
            self._p25 = float(np.quantile(s, 0.25))
            self._p75 = float(np.quantile(s, 0.75))

            def add_warning(msg):
                rel_iqr = self.iqr / self.median * 100
                self._warnings += (f"  WARNING: Interquartile range is {rel_iqr:.1f}% of the "
                                   f"median measurement.\n           {msg}",)
            if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
                add_warning("This suggests significant environmental influence.")
            elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
                add_warning("This could indicate system fluctuation.")

    def meets_confidence(self, threshold=_IQR_WARN_THRESHOLD):
        return self.iqr / self.median < threshold

    @property
    def title(self):
        return self.task_spec.title

    @property
    def env(self):
        # (PyTorch's property reads a misspelt attribute, falls back to __getattr__ and so
        # answers the task's env, None when unset; kept, Compare's rows depend on it)
        return self.task_spec.env

    @property
    def as_row_name(self):
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self):
        self._lazy_init()
        skip = "MEASUREMENT_REPR_SKIP_LINE"
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        iqr_filter = "" if n >= 4 else skip
        nl = "\n"
        text = f"""
{object.__repr__(self)}
{self.task_spec.summarize()}
  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}
  {iqr_filter}IQR:    {self.iqr / scale:.2f} {unit} ({self._p25 / scale:.2f} to {self._p75 / scale:.2f})
  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs {'per measurement,' if n > 1 else ','} {self.num_threads} thread{'s' if self.num_threads > 1 else ''}
{nl.join(self._warnings)}""".strip()
        return "\n".join(line for line in text.splitlines() if skip not in line)

    @staticmethod
    def merge(measurements):
        """Replicates of one task as one Measurement (number_per_run 1; no metadata)."""
        grouped = collections.defaultdict(list)
        for m in measurements:
            grouped[m.task_spec].append(m)
        out = []
        for spec, group in grouped.items():
            times = []
            for m in group:
                times.extend(m.times)
            out.append(Measurement(number_per_run=1, raw_times=times, task_spec=spec,
                                   metadata=None))
        return out


def select_unit(t):
    """("ns" | "us" | "ms" | "s", its scale) for showing a time `t` in seconds."""
    lg = _log10_f32(t)
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(lg // 3) if math.isfinite(lg) else 0, "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u):
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x, n):
    """`x` rounded to `n` significant figures (3.14159, 2 -> 3.1), in float32 as PyTorch's."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    magnitude = int(math.ceil(_log10_f32(abs(x))))
    scale = 10 ** (magnitude - n)
    return float(np.round(np.float32(x / scale)) * np.float32(scale))


def ordered_unique(elements):
    return list(collections.OrderedDict(dict.fromkeys(elements)).keys())


@contextlib.contextmanager
def set_torch_threads(n):
    """torch.set_num_threads(n) within the block."""
    torch = _torch()
    prior = torch.get_num_threads()
    try:
        torch.set_num_threads(n)
        yield
    finally:
        torch.set_num_threads(prior)


def _make_temp_dir(prefix=None, gc_dev_shm=False):
    root = tempfile.gettempdir()
    path = os.path.join(root, f"{prefix or tempfile.gettempprefix()}__{int(time.time())}__"
                              f"{uuid.uuid4()}")
    os.makedirs(path, exist_ok=False)
    return path
