"""ndgrad.utils.data: batching, drop_last, samplers, shuffling determinism, collate vs torch."""
import collections

import numpy as np
import pytest

import ndgrad
from ndgrad.utils.data import (Dataset, IterableDataset, TensorDataset, DataLoader, Subset,
                               ConcatDataset, random_split, default_collate, default_convert,
                               SequentialSampler, RandomSampler, BatchSampler,
                               SubsetRandomSampler, WeightedRandomSampler)


def _ds(n=10):
    return TensorDataset(ndgrad.arange(2 * n, dtype=ndgrad.float32).reshape(n, 2),
                         ndgrad.arange(n))


class Squares(Dataset):
    def __len__(self):
        return 7

    def __getitem__(self, i):
        return {"x": float(i), "y": i * i, "name": f"s{i}", "v": np.full(2, i, np.int32)}


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


def test_batching_and_drop_last():
    ds = _ds(10)
    batches = list(DataLoader(ds, batch_size=4))
    assert [len(b[1]) for b in batches] == [4, 4, 2] and len(DataLoader(ds, batch_size=4)) == 3
    assert batches[0][0].shape == (4, 2) and batches[0][0].dtype == ndgrad.float32
    assert batches[0][1].dtype == ndgrad.int64
    assert np.array_equal(np.concatenate([b[1].numpy() for b in batches]), np.arange(10))
    dl = DataLoader(ds, batch_size=4, drop_last=True)
    assert len(dl) == 2 and [len(b[1]) for b in dl] == [4, 4]
    single = list(DataLoader(ds, batch_size=None))
    assert len(single) == 10 and single[3][1].shape == () and int(single[3][1]) == 3


def test_shuffle_is_a_permutation_and_deterministic_under_seed():
    ds = _ds(50)

    def order(seed, epochs=2):
        dl = DataLoader(ds, batch_size=8, shuffle=True,
                        generator=ndgrad.Generator().manual_seed(seed))
        return [np.concatenate([b[1].numpy() for b in dl]) for _ in range(epochs)]
    a, b, c = order(1), order(1), order(2)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert sorted(a[0]) == list(range(50)) and not np.array_equal(a[0], np.arange(50))
    assert not np.array_equal(a[0], a[1])           # a new permutation each epoch
    assert not np.array_equal(a[0], c[0])
    # without a generator the default one drives shuffling: manual_seed makes it reproducible
    ndgrad.manual_seed(3)
    x = [i for b in DataLoader(ds, batch_size=50, shuffle=True) for i in b[1].tolist()]
    ndgrad.manual_seed(3)
    y = [i for b in DataLoader(ds, batch_size=50, shuffle=True) for i in b[1].tolist()]
    assert x == y


@pytest.mark.parametrize("nested", [0, 1, 2])
def test_fast_tensor_path_equals_per_sample_collate(nested):
    ds = _ds(9)
    for k in range(nested):          # TensorDataset inside Subsets (as random_split returns)
        ds = Subset(ds, list(range(len(ds) - 1, -1, -1))[: len(ds) - k])
    g = ndgrad.Generator().manual_seed(0)
    fast = list(DataLoader(ds, batch_size=4, shuffle=True, generator=g))
    g = ndgrad.Generator().manual_seed(0)
    slow = list(DataLoader(ds, batch_size=4, shuffle=True, generator=g,
                           collate_fn=lambda b: default_collate(b)))
    for (a1, b1), (a2, b2) in zip(fast, slow):
        assert np.array_equal(a1.numpy(), a2.numpy()) and np.array_equal(b1.numpy(), b2.numpy())
        assert a1.dtype == a2.dtype and b1.dtype == b2.dtype


def _describe(x):
    """Type/dtype/shape structure of a collated batch, comparable across libraries."""
    if hasattr(x, "dtype") and hasattr(x, "shape") and not isinstance(x, np.ndarray):
        return ("T", str(x.dtype).split(".")[-1], tuple(x.shape), x.tolist())
    if isinstance(x, dict):
        return {k: _describe(v) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__,) + tuple(_describe(v) for v in x)
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_describe(v) for v in x])
    return x


P = collections.namedtuple("P", "a b")

BATCHES = [
    [1, 2, 3], [1.5, 2.0], [True, False], ["a", "b"],
    [np.array([1, 2]), np.array([3, 4])], [np.float32(1), np.float32(2)],
    [np.int32(1), np.int32(7)], [np.array(2.5), np.array(3.5)],
    [(1, "a"), (2, "b")], [[1, 2], [3, 4]],
    [P(1, 2.0), P(3, 4.0)],
    [{"x": 1, "y": [1.0, 2.0]}, {"x": 2, "y": [3.0, 4.0]}],
    [collections.OrderedDict(k=np.zeros((2, 2), np.float32)),
     collections.OrderedDict(k=np.ones((2, 2), np.float32))],
]


@pytest.mark.parametrize("i", range(len(BATCHES)))
def test_default_collate_matches_torch(i):
    torch = pytest.importorskip("torch")
    from torch.utils.data import default_collate as ref_collate
    ours = default_collate(BATCHES[i])
    ref = ref_collate(BATCHES[i])
    assert _describe(ours) == _describe(ref)
    assert type(ours).__name__ == type(ref).__name__


def test_collate_tensors_and_errors_match_torch():
    torch = pytest.importorskip("torch")
    from torch.utils.data import default_collate as ref_collate
    ours = default_collate([(ndgrad.ones(2, 3), 1), (ndgrad.zeros(2, 3), 2)])
    ref = ref_collate([(torch.ones(2, 3), 1), (torch.zeros(2, 3), 2)])
    assert _describe(ours) == _describe(ref)
    bad = [
        ([[1, 2], [3]], [[1, 2], [3]]),
        ([object()], [object()]),
        ([ndgrad.ones(2), ndgrad.ones(3)], [torch.ones(2), torch.ones(3)]),
        ([np.array(["a"]), np.array(["b"])], [np.array(["a"]), np.array(["b"])]),
    ]
    for mine, theirs in bad:
        with pytest.raises(Exception) as r:
            ref_collate(theirs)
        with pytest.raises(type(r.value)) as o:
            default_collate(mine)
        if "object" not in str(r.value):
            assert str(o.value) == str(r.value)
        else:
            assert str(o.value).split("found")[0] == str(r.value).split("found")[0]


def test_default_convert_matches_torch():
    torch = pytest.importorskip("torch")
    from torch.utils.data import default_convert as ref_convert
    data = {"a": np.arange(3), "b": (np.float32(2), "s"), "c": [np.ones(2), 5]}
    assert _describe(default_convert(data)) == _describe(ref_convert(data))


def test_dict_dataset_through_loader_matches_torch():
    torch = pytest.importorskip("torch")
    ours = list(DataLoader(Squares(), batch_size=3))
    ref = list(torch.utils.data.DataLoader(Squares(), batch_size=3))
    assert [_describe(b) for b in ours] == [_describe(b) for b in ref]


def test_iterable_dataset():
    dl = DataLoader(Stream(10), batch_size=4)
    assert [b.tolist() for b in dl] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]] and len(dl) == 3
    dl = DataLoader(Stream(10), batch_size=4, drop_last=True)
    assert len(list(dl)) == 2 and len(dl) == 2
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(Stream(3), shuffle=True)


def test_samplers():
    ds = _ds(10)
    assert list(SequentialSampler(ds)) == list(range(10))
    g = ndgrad.Generator().manual_seed(5)
    r = list(RandomSampler(ds, generator=g))
    assert sorted(r) == list(range(10))
    g = ndgrad.Generator().manual_seed(5)
    assert list(RandomSampler(ds, generator=g)) == r
    rep = list(RandomSampler(ds, replacement=True, num_samples=70,
                             generator=ndgrad.Generator().manual_seed(0)))
    assert len(rep) == 70 and set(rep) <= set(range(10)) and len(set(rep)) < 70 or len(rep) == 70
    more = list(RandomSampler(ds, num_samples=25, generator=g))
    assert len(more) == 25 and sorted(more[:10]) == list(range(10))
    assert list(BatchSampler(range(7), 3, False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(BatchSampler(range(7), 3, True)) == [[0, 1, 2], [3, 4, 5]]
    assert len(BatchSampler(range(7), 3, False)) == 3
    s = list(SubsetRandomSampler([2, 4, 6], generator=ndgrad.Generator().manual_seed(1)))
    assert sorted(s) == [2, 4, 6]
    w = list(WeightedRandomSampler([0, 0, 1.0, 0], 5, generator=ndgrad.Generator()))
    assert w == [2] * 5
    dl = DataLoader(ds, sampler=SubsetRandomSampler([1, 3, 5]), batch_size=2)
    assert sorted(i for b in dl for i in b[1].tolist()) == [1, 3, 5]
    dl = DataLoader(ds, batch_sampler=[[0, 9], [4]])
    assert [b[1].tolist() for b in dl] == [[0, 9], [4]]


def test_sampler_and_loader_errors_match_torch():
    torch = pytest.importorskip("torch")
    tds = torch.utils.data.TensorDataset(torch.zeros(4))
    ods = TensorDataset(ndgrad.zeros(4))
    cases = [
        lambda u, d: u.BatchSampler(range(3), 0, False),
        lambda u, d: u.BatchSampler(range(3), 2, 1),
        lambda u, d: u.RandomSampler(d, replacement=1),
        lambda u, d: u.RandomSampler(d, num_samples=0),
        lambda u, d: u.DataLoader(d, shuffle=True, sampler=u.SequentialSampler(d)),
        lambda u, d: u.DataLoader(d, batch_size=2, batch_sampler=[[0]]),
        lambda u, d: u.DataLoader(d, batch_size=None, drop_last=True),
        lambda u, d: u.DataLoader(d, num_workers=-1),
        lambda u, d: u.random_split(d, [3, 3]),
        lambda u, d: u.random_split(d, [1.5, -0.5]),
        lambda u, d: u.TensorDataset(torch.zeros(3), torch.zeros(4)) if u is torch.utils.data
        else u.TensorDataset(ndgrad.zeros(3), ndgrad.zeros(4)),
        lambda u, d: u.ConcatDataset([]),
    ]
    import ndgrad.utils.data as ours_mod
    for i, case in enumerate(cases):
        with pytest.raises(Exception) as r:
            case(torch.utils.data, tds)
        with pytest.raises(type(r.value)) as o:
            case(ours_mod, ods)
        assert str(o.value) == str(r.value), i


def test_random_split_subset_concat():
    ds = _ds(10)
    a, b = random_split(ds, [7, 3], generator=ndgrad.Generator().manual_seed(0))
    assert len(a) == 7 and len(b) == 3 and isinstance(a, Subset)
    assert sorted(a.indices + b.indices) == list(range(10))
    a2, _ = random_split(ds, [7, 3], generator=ndgrad.Generator().manual_seed(0))
    assert a2.indices == a.indices
    parts = random_split(range(10), [0.5, 0.3, 0.2], generator=ndgrad.Generator().manual_seed(1))
    assert [len(p) for p in parts] == [5, 3, 2]
    parts = random_split(range(11), [0.5, 0.5], generator=ndgrad.Generator())
    assert [len(p) for p in parts] == [6, 5]
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        random_split(range(2), [0.9, 0.1])
    x, y = a[0]
    assert int(y) == a.indices[0] and x.shape == (2,)
    c = ConcatDataset([range(3), range(10, 12)])
    assert len(c) == 5 and [c[i] for i in range(5)] == [0, 1, 2, 10, 11] and c[-1] == 11
    assert list(c.cumulative_sizes) == [3, 5]
    both = _ds(2) + _ds(3)
    assert isinstance(both, ConcatDataset) and len(both) == 5
    batches = list(DataLoader(a, batch_size=4))
    assert [len(bb[1]) for bb in batches] == [4, 3]
    assert [v for bb in batches for v in bb[1].tolist()] == a.indices
