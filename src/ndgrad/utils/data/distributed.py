"""DistributedSampler (torch.utils.data.distributed): each rank iterates over its own share of
the dataset.

The indices (a permutation drawn from a generator seeded with seed + epoch when shuffle=True,
else 0..n-1) are padded by repeating them from the start until they split evenly (or cut to a
multiple of num_replicas with drop_last), and rank r takes every num_replicas-th index starting
at r: PyTorch's partition. ndgrad's random generator is not PyTorch's, so with shuffle=True the
permutation itself differs from PyTorch's; the partition of a given permutation is the same.
"""
import math

from .sampler import Sampler
from ..._creation import randperm, Generator

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """The indices of rank `rank` of `num_replicas` (both default to the default process
    group's); call set_epoch(epoch) before each epoch to reshuffle."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None or rank is None:
            from ... import distributed as dist
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            if num_replicas is None:
                num_replicas = dist.get_world_size()
            if rank is None:
                rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = Generator()
            g.manual_seed(self.seed + self.epoch)
            order = randperm(n, generator=g).tolist()
        else:
            order = list(range(n))
        if self.drop_last:
            order = order[:self.total_size]
        else:
            missing = self.total_size - len(order)
            if missing > 0:
                order += (order * math.ceil(missing / len(order)))[:missing]
        return iter(order[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Reshuffle differently for this epoch (all ranks must pass the same epoch)."""
        self.epoch = epoch
