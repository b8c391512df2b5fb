"""Timer: timeit.Timer with PyTorch's conventions (a thread count per measurement, replicates
in blocks sized so that the timer's own overhead is negligible, accelerators synchronized)."""
import enum
import textwrap
import timeit

import numpy as np

from . import common
from .valgrind_wrapper import timer_interface as valgrind_timer_interface

__all__ = ["Timer", "timer", "Language"]


def timer():
    """timeit.default_timer, after synchronizing the accelerator when there is one."""
    torch = common._torch()
    if torch.accelerator.is_available():
        torch.accelerator.synchronize()
    return timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class Timer:
    """Measure the execution time of a statement (a string, run with `globals`, `torch`
    defined), as torch.utils.benchmark.Timer: `timeit(number)`, `blocked_autorange()`,
    `adaptive_autorange()`, each a Measurement labelled by `label`, `sub_label`, `description`,
    `env`, run with `num_threads` threads."""
    _timer_cls = timeit.Timer

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer, globals=None,
                 label=None, sub_label=None, description=None, env=None, num_threads=1,
                 language=Language.PYTHON):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        self._globals = dict(globals or {})
        if language in (Language.PYTHON, "py", "python"):
            self._globals.setdefault("torch", common._torch())
            self._language = Language.PYTHON
            if global_setup:
                raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely "
                                 "this code can simply be moved to `setup`.")
        elif language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError(
                "Timer(language='cpp') compiles the statement against libtorch's C++ API; "
                "ndgrad is Python and NumPy only, so there is no C++ API to time")
        else:
            raise ValueError(f"Invalid language `{language}`.")
        stmt = textwrap.dedent(stmt)
        stmt = (stmt[1:] if stmt and stmt[0] == "\n" else stmt).rstrip()
        setup = textwrap.dedent(setup)
        setup = (setup[1:] if setup and setup[0] == "\n" else setup).rstrip()
        self._timer = self._timer_cls(
            stmt=stmt, setup=setup, timer=timer,
            globals=valgrind_timer_interface.CopyIfCallgrind.unwrap_all(self._globals))
        self._task_spec = common.TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup,
                                          label=label, sub_label=sub_label,
                                          description=description, env=env,
                                          num_threads=num_threads)

    def _timeit(self, number):
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number=1000000):
        """One measurement of `number` runs (after a warm-up of number // 100)."""
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))
            return common.Measurement(number_per_run=number,
                                      raw_times=[self._timeit(number=number)],
                                      task_spec=self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _threaded_measurement_loop(self, number, time_hook, stop_hook, min_run_time,
                                   max_run_time=None, callback=None):
        total_time, can_stop, times = 0.0, False, []
        with common.set_torch_threads(self._task_spec.num_threads):
            while total_time < min_run_time or not can_stop:
                spent = time_hook()
                times.append(spent)
                total_time += spent
                if callback:
                    callback(number, spent)
                can_stop = stop_hook(times)
                if max_run_time and total_time > max_run_time:
                    break
        return times

    def _estimate_block_size(self, min_run_time):
        """Runs per block: the timer's overhead under 1e-4 of a block and a block at least
        min_run_time / 1000 (also a warm-up)."""
        with common.set_torch_threads(self._task_spec.num_threads):
            overhead = float(np.median(np.asarray([self._timeit(0) for _ in range(5)],
                                                  dtype=np.float32)))
            number = 1
            while True:
                taken = self._timeit(number)
                if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                    break
                if taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of runs until `min_run_time` seconds have been measured."""
        number = self._estimate_block_size(min_run_time)
        times = self._threaded_measurement_loop(number, lambda: self._timeit(number),
                                                lambda times: True, min_run_time=min_run_time,
                                                callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0,
                           callback=None):
        """Blocks of runs until the IQR / median falls under `threshold` (after at least four
        blocks and min_run_time seconds), or max_run_time seconds have gone."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop_hook(times):
            if len(times) > 3:
                return common.Measurement(number_per_run=number, raw_times=times,
                                          task_spec=self._task_spec).meets_confidence(
                                              threshold=threshold)
            return False
        times = self._threaded_measurement_loop(number, lambda: self._timeit(number),
                                                stop_hook, min_run_time, max_run_time,
                                                callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)

    def collect_callgrind(self, number=100, *, repeats=None, collect_baseline=True,
                          retain_out_file=False):
        """Instruction counts under Callgrind: PyTorch toggles Callgrind's instrumentation
        from C++ around the statement; ndgrad has no such bindings, so this raises the
        OSError PyTorch raises where Valgrind is unsupported."""
        if not isinstance(self._task_spec.stmt, str):
            raise ValueError("`collect_callgrind` currently only supports string `stmt`")
        if repeats is not None and repeats < 1:
            raise ValueError("If specified, `repeats` must be >= 1")
        self._timeit(1)
        return valgrind_timer_interface.wrapper_singleton().collect_callgrind(
            task_spec=self._task_spec, globals=self._globals, number=number,
            repeats=repeats or 1, collect_baseline=collect_baseline, is_python=True,
            retain_out_file=retain_out_file)
