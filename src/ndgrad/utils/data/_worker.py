"""DataLoader worker processes (torch.utils.data._utils.worker).

Each worker is a process started by `_MultiProcessingDataLoaderIter` with its own index queue;
all send results to one result queue. A worker seeds Python's `random`, ndgrad's generator
(`base_seed + worker_id`, as PyTorch) and NumPy's legacy global generator (from a SeedSequence of
base_seed and worker_id, as PyTorch), sets the WorkerInfo that `get_worker_info()` returns, runs
`worker_init_fn(worker_id)`, then loops:

    (idx, index) -> fetch and collate -> (idx, batch)     on its index queue / the result queue
    _ResumeIteration -> reset an IterableDataset's iterator (persistent workers, next epoch)
    None -> exit

An exception while fetching is sent back as an ExceptionWrapper, which the main process
re-raises with the worker's traceback ("Caught ValueError in DataLoader worker process 0.").
An IterableDataset that is exhausted sends `_IterableDatasetStopIteration` once. A worker exits
on None, on KeyboardInterrupt (the main process raises its own), or when its parent dies.
"""
import os
import queue
import random
import sys
import traceback

import numpy as np

__all__ = ["WorkerInfo", "get_worker_info", "ExceptionWrapper"]

MP_STATUS_CHECK_INTERVAL = 5.0     # seconds the main process waits for a worker to exit
WORKER_POLL_INTERVAL = 1.0         # seconds between a worker's checks for shutdown, dead parent

_worker_info = None


class WorkerInfo:
    """What `get_worker_info()` returns inside a worker: id, num_workers, seed, dataset."""

    id: int
    num_workers: int
    seed: int

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            object.__setattr__(self, k, v)
        object.__setattr__(self, "_keys", tuple(kwargs))

    def __setattr__(self, key, val):
        raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self._keys)
        return f"{self.__class__.__name__}({items})"


def get_worker_info():
    """In a DataLoader worker process: its WorkerInfo (id, num_workers, seed, dataset, the
    worker's own copy of the dataset). In the main process: None.

        info = get_worker_info()
        lo, hi = (0, n) if info is None else split(n, info.id, info.num_workers)
    """
    return _worker_info


class KeyErrorMessage(str):
    """A str whose repr is itself, so a re-raised KeyError shows its traceback readably."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception's type and formatted traceback, sent between processes."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        try:
            raise exception
        finally:
            del exception   # no frame <-> traceback cycle: the iterator is freed by refcount


class _IterableDatasetStopIteration:
    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    """Sent to persistent workers at the start of each epoch after the first."""

    def __init__(self, seed=None):
        self.seed = seed


def _generate_state(base_seed, worker_id):
    """The 4 x uint32 seed NumPy's global generator gets in a worker (a SeedSequence of
    worker_id and the two halves of base_seed), so NumPy and `random` states never collide."""
    mask = 0xFFFFFFFF
    entropy = [worker_id, base_seed & mask, base_seed >> 32, 0]
    return np.random.SeedSequence(entropy).generate_state(4).tolist()


class _Fetcher:
    """dataset + indices -> a batch, in the worker, exactly as the main-process iterator."""

    def __init__(self, kind, dataset, auto_collation, collate_fn, drop_last):
        self.kind, self.dataset = kind, dataset
        self.auto, self.collate, self.drop_last = auto_collation, collate_fn, drop_last
        self.reset()

    def reset(self):
        self.it = iter(self.dataset) if self.kind == "iterable" else None
        self.ended = False

    def fetch(self, index):
        if self.kind == "iterable":
            if self.ended:
                raise StopIteration
            if not self.auto:
                return self.collate(next(self.it))
            batch = []
            for _ in index:
                try:
                    batch.append(next(self.it))
                except StopIteration:
                    self.ended = True
                    break
            if not batch or (self.ended and self.drop_last and len(batch) < len(index)):
                raise StopIteration
            return self.collate(batch)
        from .dataloader import _fetch_map
        return _fetch_map(self.dataset, index, self.auto, self.collate)


def _seed_worker(seed, base_seed, worker_id):
    random.seed(seed)
    import ndgrad
    ndgrad.manual_seed(seed)
    np.random.seed(_generate_state(base_seed, worker_id))


def _worker_loop(kind, dataset, index_queue, data_queue, done_event, auto_collation,
                 collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers,
                 persistent_workers, parent_pid):
    global _worker_info
    try:
        from ...ops import _parallel
        _parallel.set_threads(1)   # (as PyTorch's workers: torch.set_num_threads(1))
        seed = base_seed + worker_id
        _seed_worker(seed, base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _Fetcher(kind, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        iteration_end = False
        while os.getppid() == parent_pid:            # exit if the main process died
            try:
                r = index_queue.get(timeout=WORKER_POLL_INTERVAL)
            except queue.Empty:
                if done_event.is_set():
                    break
                continue
            except (EOFError, OSError):      # the main process is gone
                break
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                if fetcher is not None:
                    try:
                        fetcher.reset()
                    except Exception:
                        init_exception = ExceptionWrapper(
                            where=f"in DataLoader worker process {worker_id}")
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and kind == "iterable":
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass                          # the main process raises KeyboardInterrupt itself
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
