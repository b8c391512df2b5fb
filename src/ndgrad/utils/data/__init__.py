"""ndgrad.utils.data: datasets, samplers and the DataLoader (torch.utils.data).

    ds = TensorDataset(X, y)
    for xb, yb in DataLoader(ds, batch_size=64, shuffle=True, generator=g):
        ...
"""
from .dataset import (Dataset, IterableDataset, TensorDataset, Subset, ConcatDataset,
                      ChainDataset, StackDataset, random_split)
from .sampler import (Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler,
                      WeightedRandomSampler, BatchSampler)
from ._collate import default_collate, default_convert
from .dataloader import DataLoader, get_worker_info
from .distributed import DistributedSampler

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset",
           "ChainDataset", "StackDataset", "random_split", "Sampler", "SequentialSampler",
           "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler",
           "default_collate", "default_convert", "DataLoader", "get_worker_info",
           "DistributedSampler"]
