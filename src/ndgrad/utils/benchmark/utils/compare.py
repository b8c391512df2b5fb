"""Compare: many Measurements as one table per label (rows: sub-label or statement, grouped by
thread count; columns: description), in PyTorch's layout."""
import collections
import enum
import itertools as it
import operator

import numpy as np

from . import common

__all__ = ["Colorize", "Compare"]

BEST = "\033[92m"
GOOD = "\033[34m"
BAD = "\033[2m\033[91m"
VERY_BAD = "\033[31m"
BOLD = "\033[1m"
TERMINATE = "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _leading_digits(x):
    return int(np.ceil(common._log10_f32(x)))


class _Column:
    def __init__(self, grouped_results, time_scale, time_unit, trim_significant_figures,
                 highlight_warnings):
        self._grouped_results = grouped_results
        self._flat_results = list(it.chain.from_iterable(grouped_results))
        self._time_scale = time_scale
        self._time_unit = time_unit
        self._trim_significant_figures = trim_significant_figures
        self._highlight_warnings = highlight_warnings and any(
            r.has_warnings for r in self._flat_results if r)
        leading = [_leading_digits(r.median / time_scale) if r else None
                   for r in self._flat_results]
        unit_digits = max(d for d in leading if d is not None)
        decimal_digits = min(max(m.significant_figures - d, 0)
                             for d, m in zip(leading, self._flat_results)
                             if m is not None and d is not None) \
            if trim_significant_figures else 1
        length = unit_digits + decimal_digits + (1 if decimal_digits else 0)
        self._template = \
            f"{{:>{length}.{decimal_digits}f}}{{:>{7 if self._highlight_warnings else 0}}}"

    def get_results_for(self, group):
        return self._grouped_results[group]

    def num_to_str(self, value, estimated_sigfigs, spread):
        if value is None:
            return " " * len(self.num_to_str(1, estimated_sigfigs, None))
        if self._trim_significant_figures:
            value = common.trim_sigfig(value, estimated_sigfigs)
        return self._template.format(
            value, f" (! {spread * 100:.0f}%)" if self._highlight_warnings and
            spread is not None else "")


def optional_min(seq):
    seq = list(seq)
    return None if not seq else min(seq)


class _Row:
    def __init__(self, results, row_group, render_env, env_str_len, row_name_str_len,
                 time_scale, colorize, num_threads=None):
        self._results = results
        self._row_group = row_group
        self._render_env = render_env
        self._env_str_len = env_str_len
        self._row_name_str_len = row_name_str_len
        self._time_scale = time_scale
        self._colorize = colorize
        self._columns = ()
        self._num_threads = num_threads

    def register_columns(self, columns):
        self._columns = columns

    def as_column_strings(self):
        concrete = [r for r in self._results if r is not None]
        env = f"({concrete[0].env})" if self._render_env else ""
        env = env.ljust(self._env_str_len + 4)
        out = ["  " + env + concrete[0].as_row_name]
        for m, col in zip(self._results, self._columns or ()):
            if m is None:
                out.append(col.num_to_str(None, 1, None))
            else:
                out.append(col.num_to_str(m.median / self._time_scale, m.significant_figures,
                                          m.iqr / m.median if m.has_warnings else None))
        return out

    @staticmethod
    def color_segment(segment, value, best_value):
        if value <= best_value * 1.01 or value <= best_value + 100e-9:
            return BEST + BOLD + segment + TERMINATE * 2
        if value <= best_value * 1.1:
            return GOOD + BOLD + segment + TERMINATE * 2
        if value >= best_value * 5:
            return VERY_BAD + BOLD + segment + TERMINATE * 2
        if value >= best_value * 2:
            return BAD + segment + TERMINATE * 2
        return segment

    def row_separator(self, overall_width):
        return [f"{self._num_threads} threads: ".ljust(overall_width, "-")] \
            if self._num_threads is not None else []

    def finalize_column_strings(self, column_strings, col_widths):
        best = [-1 for _ in column_strings]
        if self._colorize == Colorize.ROWWISE:
            row_min = min(r.median for r in self._results if r is not None)
            best = [row_min for _ in column_strings]
        elif self._colorize == Colorize.COLUMNWISE:
            best = [optional_min(r.median for r in c.get_results_for(self._row_group)
                                 if r is not None) for c in (self._columns or ())]
        out = [column_strings[0].ljust(col_widths[0])]
        for s, width, result, b in zip(column_strings[1:], col_widths[1:], self._results, best):
            s = s.center(width)
            if self._colorize != Colorize.NONE and result is not None and b is not None:
                s = self.color_segment(s, result.median, b)
            out.append(s)
        return out


class Table:
    def __init__(self, results, colorize, trim_significant_figures, highlight_warnings):
        if len({r.label for r in results}) != 1:
            raise AssertionError("All results must share the same label")
        self.results = results
        self._colorize = colorize
        self._trim_significant_figures = trim_significant_figures
        self._highlight_warnings = highlight_warnings
        self.label = results[0].label
        self.time_unit, self.time_scale = common.select_unit(min(r.median for r in results))
        self.row_keys = common.ordered_unique([self.row_fn(i) for i in results])
        self.row_keys.sort(key=operator.itemgetter(slice(2)))  # (statements keep their order)
        self.column_keys = common.ordered_unique([self.col_fn(i) for i in results])
        self.rows, self.columns = self.populate_rows_and_columns()

    @staticmethod
    def row_fn(m):
        return m.num_threads, m.env, m.as_row_name

    @staticmethod
    def col_fn(m):
        return m.description

    def populate_rows_and_columns(self):
        rows, columns = [], []
        ordered = [[None for _ in self.column_keys] for _ in self.row_keys]
        row_pos = {k: i for i, k in enumerate(self.row_keys)}
        col_pos = {k: i for i, k in enumerate(self.column_keys)}
        for r in self.results:
            ordered[row_pos[self.row_fn(r)]][col_pos[self.col_fn(r)]] = r
        envs = {r.env for r in self.results}
        render_env = len(envs) > 1
        env_len = max(len(i) for i in envs) if render_env else 0
        name_len = max(len(r.as_row_name) for r in self.results)
        prior_threads, prior_env, group = -1, "", -1
        by_group = []
        for (threads, env, _), row in zip(self.row_keys, ordered):
            transition = threads != prior_threads
            if transition:
                prior_threads, prior_env = threads, ""
                group += 1
                by_group.append([])
            rows.append(_Row(results=row, row_group=group,
                             render_env=render_env and env != prior_env, env_str_len=env_len,
                             row_name_str_len=name_len, time_scale=self.time_scale,
                             colorize=self._colorize,
                             num_threads=threads if transition else None))
            by_group[-1].append(row)
            prior_env = env
        for i in range(len(self.column_keys)):
            columns.append(_Column(grouped_results=[tuple(row[i] for row in g) for g in by_group],
                                   time_scale=self.time_scale, time_unit=self.time_unit,
                                   trim_significant_figures=self._trim_significant_figures,
                                   highlight_warnings=self._highlight_warnings))
        rows, columns = tuple(rows), tuple(columns)
        for r in rows:
            r.register_columns(columns)
        return rows, columns

    def render(self):
        string_rows = [[""] + self.column_keys]
        string_rows.extend(r.as_column_strings() for r in self.rows)
        n = max(len(i) for i in string_rows)
        for sr in string_rows:
            sr.extend(["" for _ in range(n - len(sr))])
        widths = [max(len(j) for j in i) for i in zip(*string_rows)]
        lines = ["  |  ".join(i.center(w) for i, w in zip(string_rows[0], widths))]
        overall = len(lines[0])
        for sr, row in zip(string_rows[1:], self.rows):
            lines.extend(row.row_separator(overall))
            lines.append("  |  ".join(row.finalize_column_strings(sr, widths)))
        nl = "\n"
        warn = self._highlight_warnings and any(r.has_warnings for r in self.results)
        return f"""
[{(' ' + (self.label or '') + ' ').center(overall - 2, '-')}]
{nl.join(lines)}

Times are in {common.unit_to_english(self.time_unit)}s ({self.time_unit}).
{'(! XX%) Measurement has high variance, where XX is the IQR / median * 100.' + nl if warn else ""}"""[1:]


class Compare:
    """A formatted table of many Measurements (`print()` or `str()`): one per label, a row per
    sub-label (or statement) and thread count, a column per description."""

    def __init__(self, results):
        self._results = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self):
        return "\n".join(self._render())

    def extend_results(self, results):
        """Add Measurements to the table."""
        for r in results:
            if not isinstance(r, common.Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self):
        """Show only the digits each measurement supports."""
        self._trim_significant_figures = True

    def colorize(self, rowwise=False):
        """Colour each value by how it compares with the best of its column (or row)."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self):
        """Mark measurements with a large spread "(! XX%)"."""
        self._highlight_warnings = True

    def print(self):
        print(str(self))

    def _render(self):
        results = common.Measurement.merge(self._results)
        grouped = collections.defaultdict(list)
        for r in results:
            grouped[r.label].append(r)
        return [Table(g, self._colorize, self._trim_significant_figures,
                      self._highlight_warnings).render() for g in grouped.values()]
