"""`torch.multiprocessing`: Python's multiprocessing, with PyTorch's extra names. Tensors go
between processes by pickling (their NumPy arrays are copied; PyTorch moves CPU tensors through
shared memory instead), so the sharing strategy is remembered but changes nothing; `spawn` and
`start_processes` start processes running fn(i, *args) as PyTorch's, re-raising a child's
exception in the parent."""
import multiprocessing
import sys
from multiprocessing import *  # noqa: F401,F403

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies",
           "spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
           "ProcessExitedException", "SpawnContext"]
__all__ += multiprocessing.__all__

_sharing_strategy = ["file_descriptor" if sys.platform != "darwin" else "file_system"]


def set_sharing_strategy(new_strategy):
    if new_strategy not in get_all_sharing_strategies():
        raise AssertionError(f"unknown sharing strategy {new_strategy!r}")
    _sharing_strategy[0] = new_strategy


def get_sharing_strategy():
    return _sharing_strategy[0]


def get_all_sharing_strategies():
    return {"file_descriptor", "file_system"} if sys.platform != "darwin" else {"file_system"}


class ProcessException(Exception):
    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A child process raised; its traceback is the message."""


class ProcessExitedException(ProcessException):
    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                            self.signal_name)


def _wrap(fn, i, args, error_queue):
    import traceback
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        error_queue.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    def __init__(self, processes, error_queues):
        self.error_queues = error_queues
        self.processes = processes

    def pids(self):
        return [int(p.pid) for p in self.processes]

    def join(self, timeout=None):
        for p in self.processes:
            p.join(timeout)
        for i, (p, q) in enumerate(zip(self.processes, self.error_queues)):
            if p.exitcode not in (0, None):
                for other in self.processes:
                    if other.is_alive():
                        other.terminate()
                if not q.empty():
                    msg = "\n\n-- Process %d terminated with the following error:\n" % i
                    raise ProcessRaisedException(msg + q.get(), i, p.pid)
                raise ProcessExitedException(
                    "process %d terminated with exit code %d" % (i, p.exitcode), i, p.pid,
                    p.exitcode)
        return all(p.exitcode is not None for p in self.processes)


SpawnContext = ProcessContext


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    ctx = multiprocessing.get_context(start_method)
    error_queues, processes = [], []
    for i in range(nprocs):
        q = ctx.SimpleQueue()
        p = ctx.Process(target=_wrap, args=(fn, i, args, q), daemon=daemon)
        p.start()
        error_queues.append(q)
        processes.append(p)
    context = ProcessContext(processes, error_queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start nprocs processes running fn(i, *args) (PyTorch's torch.multiprocessing.spawn)."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
