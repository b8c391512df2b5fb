"""Callgrind's results (FunctionCount, FunctionCounts, CallgrindStats) and CopyIfCallgrind.

Collecting instruction counts needs PyTorch's C++ bindings that switch Callgrind's
instrumentation on and off around the statement; ndgrad has none, so collection raises the
OSError PyTorch raises where Valgrind is unsupported. The containers work as PyTorch's (for
counts collected elsewhere)."""
import collections
import dataclasses
import enum
import itertools as it
import operator
import re
import textwrap
from typing import NamedTuple

from .. import common

__all__ = ["FunctionCount", "FunctionCounts", "CallgrindStats", "CopyIfCallgrind"]


class FunctionCount(NamedTuple):
    count: int
    function: str


@dataclasses.dataclass(repr=False, eq=False, frozen=True)
class FunctionCounts:
    """(count, function) pairs: added, subtracted, indexed, filtered, transformed, denoised."""
    _data: tuple
    inclusive: bool
    truncate_rows: bool = True
    _linewidth: int = None

    def __iter__(self):
        yield from self._data

    def __len__(self):
        return len(self._data)

    def __getitem__(self, item):
        data = self._data[item]
        return FunctionCounts(data, self.inclusive, truncate_rows=False) \
            if isinstance(data, tuple) else data

    def __repr__(self):
        count_len = 0
        for c, _ in self:
            count_len = max(count_len, len(str(c)) + int(c < 0))
        linewidth = self._linewidth or common._torch()._tensor_str.PRINT_OPTS.linewidth
        fn_len = max(linewidth - count_len - 4, 40)
        lines = []
        for c, fn in self:
            if len(fn) > fn_len:
                left = int((fn_len - 5) // 2)
                fn = fn[:left] + " ... " + fn[-(fn_len - left - 5):]
            lines.append(f"  {c:>{count_len}}  {fn}")
        if self.truncate_rows and len(lines) > 18:
            lines = lines[:9] + ["...".rjust(count_len + 2)] + lines[-9:]
        if not self.inclusive:
            lines.extend(["", f"Total: {self.sum()}"])
        return "\n".join([object.__repr__(self)] + lines)

    def __add__(self, other):
        return self._merge(other, lambda c: c)

    def __sub__(self, other):
        return self._merge(other, operator.neg)

    def __mul__(self, other):
        return self._from_dict({fn: int(c * other) for c, fn in self._data}, self.inclusive)

    def transform(self, map_fn):
        """Map the function names (counts of names that become equal add up)."""
        counts = collections.defaultdict(int)
        for c, fn in self._data:
            counts[map_fn(fn)] += c
        return self._from_dict(counts, self.inclusive)

    def filter(self, filter_fn):
        return FunctionCounts(tuple(i for i in self if filter_fn(i.function)), self.inclusive)

    def sum(self):
        return sum(c for c, _ in self)

    def denoise(self):
        """Without CPython's noisy dictionary lookups."""
        return self.filter(lambda fn: "dictobject.c:lookdict_unicode" not in fn)

    def _merge(self, second, merge_fn):
        if self.inclusive != second.inclusive:
            raise AssertionError("Cannot merge inclusive and exclusive counts.")
        counts = collections.defaultdict(int)
        for c, fn in self:
            counts[fn] += c
        for c, fn in second:
            counts[fn] += merge_fn(c)
        return self._from_dict(counts, self.inclusive)

    @staticmethod
    def _from_dict(counts, inclusive):
        flat = (FunctionCount(c, fn) for fn, c in counts.items() if c)
        return FunctionCounts(tuple(sorted(flat, reverse=True)), inclusive)


@dataclasses.dataclass(repr=False, eq=False, frozen=True)
class CallgrindStats:
    """The instruction counts of a statement and of an empty baseline."""
    task_spec: common.TaskSpec
    number_per_run: int
    built_with_debug_symbols: bool
    baseline_inclusive_stats: FunctionCounts
    baseline_exclusive_stats: FunctionCounts
    stmt_inclusive_stats: FunctionCounts
    stmt_exclusive_stats: FunctionCounts
    stmt_callgrind_out: str

    def __repr__(self):
        base = self.baseline_exclusive_stats
        s = "s" if self.task_spec.num_threads > 1 else ""
        out = f"""
{object.__repr__(self)}
{self.task_spec.summarize()}
  {'':>25}All{'':>10}Noisy symbols removed
    Instructions: {self.counts(denoise=False):>12}{'':>15}{self.counts(denoise=True):>12}
    Baseline:     {base.sum():>12}{'':>15}{base.denoise().sum():>12}
{self.number_per_run} runs per measurement, {self.task_spec.num_threads} thread{s}
""".strip()
        if not self.built_with_debug_symbols:
            out += textwrap.dedent("""
            Warning: PyTorch was not built with debug symbols.
                     Source information may be limited. Rebuild with
                     REL_WITH_DEB_INFO=1 for more detailed results.""")
        return out

    def stats(self, inclusive=False):
        return self.stmt_inclusive_stats if inclusive else self.stmt_exclusive_stats

    def counts(self, *, denoise=False):
        stats = self.stmt_exclusive_stats
        return (stats.denoise() if denoise else stats).sum()

    def delta(self, other, inclusive=False):
        return self.stats(inclusive=inclusive) - other.stats(inclusive=inclusive)

    def as_standardized(self):
        """The counts with build paths and library names stripped from function names."""
        def strip(stats):
            for before, after in ((r"^.+build/\.\./", "build/../"),
                                  (r"^.+/" + re.escape("build/aten/"), "build/aten/"),
                                  (r"^.+/" + re.escape("Python/"), "Python/"),
                                  (r"^.+/" + re.escape("Objects/"), "Objects/"),
                                  (r"\s\[.+\]$", "")):
                stats = stats.transform(lambda fn: re.sub(before, after, fn))
            return stats
        return CallgrindStats(
            task_spec=self.task_spec, number_per_run=self.number_per_run,
            built_with_debug_symbols=self.built_with_debug_symbols,
            baseline_inclusive_stats=strip(self.baseline_inclusive_stats),
            baseline_exclusive_stats=strip(self.baseline_exclusive_stats),
            stmt_inclusive_stats=strip(self.stmt_inclusive_stats),
            stmt_exclusive_stats=strip(self.stmt_exclusive_stats), stmt_callgrind_out=None)


class Serialization(enum.Enum):
    PICKLE = 0
    TORCH = 1
    TORCH_JIT = 2


def _allowed_types():
    torch = common._torch()
    return {Serialization.PICKLE: (str, bytes, bool, int, float, complex),
            Serialization.TORCH_JIT: (torch.jit.ScriptFunction, torch.jit.ScriptModule),
            Serialization.TORCH: (torch.nn.Module,)}


class CopyIfCallgrind:
    """A Timer global that collect_callgrind may replace with a deserialized copy."""

    def __init__(self, value, *, setup=None):
        allowed = _allowed_types()
        for method, types in allowed.items():
            if any(isinstance(value, t) for t in types):
                self._value, self._setup, self._serialization = value, setup, method
                break
        else:
            names = "\n".join(getattr(t, "__name__", repr(t))
                              for t in it.chain(allowed.values()))
            raise ValueError(f"Unsupported type: {type(value)}\n`collect_callgrind` restricts "
                             f"globals to the following types:\n{textwrap.indent(names, '  ')}")

    @property
    def value(self):
        return self._value

    @property
    def setup(self):
        return self._setup

    @property
    def serialization(self):
        return self._serialization

    @staticmethod
    def unwrap_all(globals):
        return {k: (v.value if isinstance(v, CopyIfCallgrind) else v) for k, v in globals.items()}


class _ValgrindWrapper:
    """PyTorch's collector needs torch._C's Callgrind toggles: this platform has none."""
    _supported_platform = False

    def _validate(self):
        if not self._supported_platform:
            raise OSError("Valgrind is not supported on this platform.")

    def collect_callgrind(self, task_spec, globals, *, number, repeats, collect_baseline,
                          is_python, retain_out_file):
        self._validate()


_WRAPPER = []


def wrapper_singleton():
    if not _WRAPPER:
        _WRAPPER.append(_ValgrindWrapper())
    return _WRAPPER[0]
