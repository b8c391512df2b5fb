"""DataLoader (torch.utils.data.DataLoader): batches from a dataset through a sampler.

num_workers=0 loads in the main process. num_workers=N starts N worker processes
(multiprocessing; the platform's default start method, 'fork' on Linux as in PyTorch, or
`multiprocessing_context`): the main process draws indices from the sampler and sends each batch's
indices to the workers in turn; workers fetch and collate (see _worker.py). As in PyTorch:
results come back in sampler order (in_order=False: as they arrive), at most prefetch_factor
batches per worker are in flight, persistent_workers keeps the workers across epochs, timeout
bounds each wait, a worker's exception is re-raised in the main process with its traceback, and
workers are shut down when the iterator is exhausted or deleted, at exit and on
KeyboardInterrupt (they are daemonic and also exit when the main process dies).
"""
import itertools
import multiprocessing as python_multiprocessing
import os
import queue
import warnings

import numpy as np

from .dataset import IterableDataset, TensorDataset, Subset
from .sampler import SequentialSampler, RandomSampler, BatchSampler
from ._collate import default_collate, default_convert
from ..._tensor import _make

from . import _worker
from ._worker import get_worker_info

__all__ = ["DataLoader", "get_worker_info"]

WARN_PIN_MEMORY = ("'pin_memory' argument is set as true but no accelerator is found, then "
                   "device pinned memory won't be used.")


from ...autograd._prof_state import HUB as _PROF_HUB  # noqa: E402
_SINGLE_NEXT = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"

class _InfiniteConstantSampler:
    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """DataLoader(dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
    num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, ..., generator=None).

        loader = DataLoader(TensorDataset(X, y), batch_size=32, shuffle=True)
        for xb, yb in loader: ...
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        elif num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        self.pin_memory_device = pin_memory_device
        self.multiprocessing_context = multiprocessing_context
        self._iterator = None

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = "iterable"
            if isinstance(shuffle, bool) and shuffle or shuffle not in (None, False):
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = "map"

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")

        if sampler is None:
            if self._dataset_kind == "iterable":
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        if self._dataset_kind == "iterable":
            length = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    length = length // self.batch_size
                else:
                    length = -(-length // self.batch_size)
            return length
        return len(self._index_sampler)

    def __iter__(self):
        if self.pin_memory:
            from ..._backend import cuda_available
            if not cuda_available():
                warnings.warn(WARN_PIN_MEMORY, stacklevel=2)
        if self.num_workers > 0:
            if self.persistent_workers:
                if self._iterator is None:
                    self._iterator = _MultiProcessingDataLoaderIter(self)
                else:
                    self._iterator._reset(self)
                return self._iterator
            return _MultiProcessingDataLoaderIter(self)
        # PyTorch's single-process iterator draws its (unused) workers' base seed when it is
        # made, before the sampler's first draw: so does this one, to keep the streams alike
        from ... import _creation
        from ..._dtype import int64
        _creation.empty((), dtype=int64).random_(generator=self.generator)
        if self._dataset_kind == "iterable":
            return self._iter_iterable()
        return self._iter_map()

    def _iter_map(self):
        dataset, collate, auto = self.dataset, self.collate_fn, self._auto_collation
        for index in self._index_sampler:
            hub = _PROF_HUB[0]
            if hub is None:
                yield _fetch_map(dataset, index, auto, collate)
                continue
            r = hub.begin(_SINGLE_NEXT, user=True)  # (PyTorch's range around a batch)
            try:
                batch = _fetch_map(dataset, index, auto, collate)
            finally:
                hub.end(r)
            yield batch

    def _iter_iterable(self):
        it = iter(self.dataset)
        collate = self.collate_fn
        if not self._auto_collation:
            for item in it:
                yield collate(item)
            return
        size = self.batch_size
        while True:
            batch = []
            for item in it:
                batch.append(item)
                if len(batch) == size:
                    break
            if len(batch) == size or (batch and not self.drop_last):
                yield collate(batch)
            if len(batch) < size:
                return

    @property
    def multiprocessing_context(self):
        return self._mp_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context):
        if multiprocessing_context is not None:
            if self.num_workers > 0:
                if isinstance(multiprocessing_context, str):
                    valid = python_multiprocessing.get_all_start_methods()
                    if multiprocessing_context not in valid:
                        raise ValueError(
                            "multiprocessing_context option should specify a valid start method "
                            f"in {valid!r}, but got "
                            f"multiprocessing_context={multiprocessing_context!r}")
                    multiprocessing_context = python_multiprocessing.get_context(
                        multiprocessing_context)
                if not isinstance(multiprocessing_context,
                                  python_multiprocessing.context.BaseContext):
                    raise TypeError(
                        "multiprocessing_context option should be a valid context object or a "
                        "string specifying the start method, but got "
                        f"multiprocessing_context={multiprocessing_context}")
            else:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading "
                    f"(num_workers > 0), but got num_workers={self.num_workers}")
        self._mp_context = multiprocessing_context


def _tensor_source(dataset, collate_fn):
    """(tensors, index maps) when a batch can be cut with one fancy index per tensor:
    a TensorDataset, possibly inside Subsets, collated by default_collate. The batch is
    identical to collating the samples one by one, without a Python loop per sample."""
    if collate_fn is not default_collate:
        return None
    ds, maps = dataset, []
    while type(ds) is Subset:
        maps.append(ds.indices)
        ds = ds.dataset
    if type(ds) is not TensorDataset or any(t.requires_grad for t in ds.tensors):
        return None
    return ds.tensors, maps


def _on(idx, array):
    """Host indices moved to the module of `array` (once per batch, for device tensors)."""
    from ..._backend import xp_of
    return idx if type(array) is np.ndarray else xp_of(array).asarray(idx)


def _fetch_map(dataset, index, auto_collation, collate):
    """One batch (auto_collation: `index` is a list of indices) or one sample of a map-style
    dataset, collated: the same in the main process and in a worker."""
    if not auto_collation:
        return collate(dataset[index])
    fast = _tensor_source(dataset, collate)
    if fast is not None:
        tensors, maps = fast
        for m in maps:
            index = [m[i] for i in index]
        idx = np.asarray([int(i) for i in index], dtype=np.int64)  # host: sampler indices
        return [_make(t._data[_on(idx, t._data)]) for t in tensors]
    getitems = getattr(dataset, "__getitems__", None)
    if getitems is not None:
        return collate(getitems(index))
    return collate([dataset[i] for i in index])


class _MultiProcessingDataLoaderIter:
    """The iterator of a DataLoader with num_workers > 0 (PyTorch's ordering and shutdown)."""

    def __init__(self, loader):
        from ... import _creation
        from ..._dtype import int64
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._in_order = loader.in_order
        self._persistent_workers = loader.persistent_workers
        self._base_seed = int(_creation.empty((), dtype=int64).random_(
            generator=loader.generator).item())
        self._shutdown = True            # until the workers exist
        self._workers = []
        ctx = loader.multiprocessing_context or python_multiprocessing
        self._worker_result_queue = ctx.Queue()
        self._workers_done_event = ctx.Event()
        self._index_queues = []
        try:
            for i in range(self._num_workers):
                index_queue = ctx.Queue()
                index_queue.cancel_join_thread()
                w = ctx.Process(
                    target=_worker._worker_loop,
                    args=(self._dataset_kind, self._dataset, index_queue,
                          self._worker_result_queue, self._workers_done_event,
                          self._auto_collation, self._collate_fn, self._drop_last,
                          self._base_seed, loader.worker_init_fn, i, self._num_workers,
                          self._persistent_workers, os.getpid()))
                w.daemon = True
                w.start()
                self._index_queues.append(index_queue)
                self._workers.append(w)
                self._shutdown = False
        except BaseException:
            self._shutdown_workers()
            raise
        self._shutdown = False
        self._data_queue = self._worker_result_queue
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._send_idx = 0             # the next task's number
        self._rcvd_idx = 0             # the next task to return (in order)
        self._task_info = {}           # task -> (worker,) while out; (worker, data) when back early
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for q in self._index_queues:
                q.put(_worker._ResumeIteration())
            pending = self._num_workers
            while pending > 0:
                idx, _ = self._get_data()
                if isinstance(idx, _worker._ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._index_sampler)

    def _try_put_index(self):
        max_tasks = self._prefetch_factor * self._num_workers
        if self._tasks_outstanding >= max_tasks:
            return
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        active = sum(self._workers_status)
        for _ in range(self._num_workers):
            w = next(self._worker_queue_idx_cycle)
            if self._workers_status[w] and (
                    self._in_order or self._workers_num_tasks[w] < max_tasks // max(active, 1)):
                break
        else:
            return                                 # no active worker can take it
        self._index_queues[w].put((self._send_idx, index))
        self._task_info[self._send_idx] = (w,)
        self._workers_num_tasks[w] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _try_get_data(self, timeout=1.0):
        try:
            return True, self._data_queue.get(timeout=timeout)
        except Exception as e:
            failed = [w for i, w in enumerate(self._workers)
                      if self._workers_status[i] and not w.is_alive()]
            for w in failed:
                self._mark_worker_as_unavailable(self._workers.index(w))
            if failed:
                pids = ", ".join(str(w.pid) for w in failed)
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from e
            if isinstance(e, queue.Empty):
                return False, None
            raise

    def _get_data(self):
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if not ok:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return data
        while True:
            ok, data = self._try_get_data()
            if ok:
                return data

    def _next_data(self):
        while True:
            while self._rcvd_idx < self._send_idx:     # skip tasks of exhausted workers
                info = self._task_info.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                worker, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _worker._IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._workers_num_tasks[data.worker_id] -= 1
                self._try_put_index()
                continue
            worker = self._task_info[idx][0]
            if idx != self._rcvd_idx:
                if not self._in_order:
                    del self._task_info[idx]
                    return self._process_data(data, worker)
                self._task_info[idx] += (data,)
            else:
                del self._task_info[idx]
                self._rcvd_idx += 1
                return self._process_data(data, worker)

    def _process_data(self, data, worker):
        self._workers_num_tasks[worker] -= 1
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return data

    def __next__(self):
        if self._shutdown:
            raise StopIteration
        hub = _PROF_HUB[0]
        if hub is not None:  # (PyTorch's range around a batch)
            r = hub.begin("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
                          user=True)
            try:
                data = self._next_data()
            finally:
                hub.end(r)
        else:
            data = self._next_data()
        self._num_yielded += 1
        return data

    def _mark_worker_as_unavailable(self, worker_id, shutdown=False):
        q = self._index_queues[worker_id]
        q.put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self):
        if self._shutdown:
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for i in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[i]:
                    self._mark_worker_as_unavailable(i, shutdown=True)
            for w in self._workers:
                w.join(timeout=_worker.MP_STATUS_CHECK_INTERVAL)
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
            self._worker_result_queue.cancel_join_thread()
            self._worker_result_queue.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=_worker.MP_STATUS_CHECK_INTERVAL)

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:            # at interpreter exit, modules may already be gone
            pass
