"""DataLoader (torch.utils.data.DataLoader): batches from a dataset through a sampler.

Workers run in-process: num_workers > 0 is accepted and behaves like num_workers=0 (same
batches, same order), which keeps ndgrad dependency- and fork-free.
"""
import numpy as np

from .dataset import IterableDataset, TensorDataset, Subset
from .sampler import SequentialSampler, RandomSampler, BatchSampler
from ._collate import default_collate, default_convert
from ..._tensor import _make

__all__ = ["DataLoader", "get_worker_info"]


def get_worker_info():
    """Always None: ndgrad loads data in the main process."""
    return None


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
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.persistent_workers = persistent_workers

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
        if self._dataset_kind == "iterable":
            return self._iter_iterable()
        return self._iter_map()

    def _tensor_source(self):
        """(tensors, index maps) when a batch can be cut with one fancy index per tensor:
        a TensorDataset, possibly inside Subsets, collated by default_collate. The batch is
        identical to collating the samples one by one, without a Python loop per sample."""
        if self.collate_fn is not default_collate:
            return None
        ds, maps = self.dataset, []
        while type(ds) is Subset:
            maps.append(ds.indices)
            ds = ds.dataset
        if type(ds) is not TensorDataset or any(t.requires_grad for t in ds.tensors):
            return None
        return ds.tensors, maps

    def _iter_map(self):
        dataset, collate = self.dataset, self.collate_fn
        fast = self._tensor_source() if self._auto_collation else None
        getitems = getattr(dataset, "__getitems__", None)
        if self._auto_collation:
            for indices in self.batch_sampler:
                if fast is not None:
                    tensors, maps = fast
                    for m in maps:
                        indices = [m[i] for i in indices]
                    idx = np.asarray([int(i) for i in indices], dtype=np.int64)
                    yield [_make(t._data[idx]) for t in tensors]
                elif getitems is not None:
                    yield collate(getitems(indices))
                else:
                    yield collate([dataset[i] for i in indices])
        else:
            for i in self.sampler:
                yield collate(dataset[i])

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
        return None
