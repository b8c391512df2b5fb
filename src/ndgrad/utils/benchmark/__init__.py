"""`torch.utils.benchmark`: Timer (timeit, blocked_autorange, adaptive_autorange), Measurement
(statistics and PyTorch's repr), Compare (the table of many measurements), the Fuzzer family,
and Callgrind's result containers.

    >>> t = torch.utils.benchmark.Timer("x @ x", globals={"x": torch.randn(64, 64)})
    >>> t.blocked_autorange(min_run_time=0.1).median   # seconds per run
"""
from .utils.common import *  # noqa: F401,F403
from .utils.timer import *  # noqa: F401,F403
from .utils.compare import *  # noqa: F401,F403
from .utils.fuzzer import *  # noqa: F401,F403
from .utils.valgrind_wrapper.timer_interface import *  # noqa: F401,F403
from .utils.sparse_fuzzer import *  # noqa: F401,F403
from numbers import Number  # noqa: F401  (PyTorch's namespace has it, from sparse_fuzzer)
