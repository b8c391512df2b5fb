"""DataLoader(num_workers=N): real worker processes with PyTorch's ordering, seeding, worker
info, persistence, prefetching, timeouts, error propagation and shutdown."""
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import ndgrad
from ndgrad.utils.data import (DataLoader, Dataset, IterableDataset, TensorDataset,
                               get_worker_info)
from ndgrad.utils.data import _worker

pytestmark = pytest.mark.multiprocess

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


class Squares(Dataset):
    def __init__(self, n=10):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        info = get_worker_info()
        return {"x": ndgrad.tensor(float(i * i)), "worker": -1 if info is None else info.id,
                "pid": os.getpid()}


class Seeds(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = get_worker_info()
        return (info.id, info.seed, info.num_workers, type(info.dataset).__name__,
                random.random(), float(ndgrad.rand(1).item()), float(np.random.rand()))


class Shards(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))


class FailAt(Dataset):
    def __init__(self, bad):
        self.bad = bad

    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == self.bad:
            raise ValueError(f"bad item {i}")
        return i


class MissingKey(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return {}["missing"]


class WaitFor(Dataset):
    """Item 0 waits until the main process sets the event (so item 1 arrives first)."""

    def __init__(self, event):
        self.event = event

    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 0 and not self.event.wait(60):
            raise RuntimeError("never released")
        return i


class Slow(Dataset):
    def __init__(self, event):
        self.event = event

    def __len__(self):
        return 2

    def __getitem__(self, i):
        self.event.wait(60)
        return i


class Exit(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 1:
            os._exit(3)
        return i


def _init_fn(worker_id):
    info = get_worker_info()
    info.dataset.n_init = worker_id + 100


class InitSeen(Dataset):
    n_init = None

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return (get_worker_info().id, self.n_init)


def _values(batches):
    return [b["x"].tolist() for b in batches]


def test_results_in_sampler_order_and_round_robin_workers():
    loader = DataLoader(Squares(10), batch_size=3, num_workers=2)
    batches = list(loader)
    assert _values(batches) == [[0., 1., 4.], [9., 16., 25.], [36., 49., 64.], [81.]]
    assert [b["worker"].tolist() for b in batches] == [[0] * 3, [1] * 3, [0] * 3, [1]]
    pids = {p for b in batches for p in b["pid"].tolist()}
    assert len(pids) == 2 and os.getpid() not in pids           # real processes
    single = list(DataLoader(Squares(10), batch_size=3, num_workers=0))
    assert _values(single) == _values(batches)
    assert get_worker_info() is None
    X = ndgrad.arange(10.)
    got = [b[0].tolist() for b in DataLoader(TensorDataset(X), batch_size=4, num_workers=2,
                                             shuffle=True, generator=ndgrad.Generator()
                                             .manual_seed(0))]
    expect = [b[0].tolist() for b in DataLoader(TensorDataset(X), batch_size=4, shuffle=True,
                                                generator=ndgrad.Generator().manual_seed(0))]
    assert got == expect


def test_no_auto_collation_and_batch_size_none():
    out = list(DataLoader(Squares(3), batch_size=None, num_workers=2))
    assert [o["x"].item() for o in out] == [0.0, 1.0, 4.0] and [o["worker"] for o in out] == [
        0, 1, 0]


def test_in_order_false_returns_batches_as_they_arrive():
    import multiprocessing as mp
    event = mp.get_context().Event()
    loader = DataLoader(WaitFor(event), batch_size=1, num_workers=2, in_order=False,
                        timeout=60)
    got = []
    for b in loader:
        got.append(b.item())
        event.set()                       # item 0 is released only after another arrived
    assert got[0] != 0 and sorted(got) == [0, 1, 2, 3]


def test_worker_info_and_seeding_as_pytorch():
    gen = ndgrad.Generator().manual_seed(7)
    loader = DataLoader(Seeds(), batch_size=None, num_workers=2, generator=gen)
    rows = list(loader)
    base = int(ndgrad.empty((), dtype=ndgrad.int64).random_(
        generator=ndgrad.Generator().manual_seed(7)).item())
    first = {}
    for wid, seed, nw, name, r, t, n in rows:
        assert seed == base + wid and nw == 2 and name == "Seeds"
        first.setdefault(wid, (r, t, n))
    for wid, (r, t, n) in first.items():
        seed = base + wid
        assert r == random.Random(seed).random()
        ndgrad.manual_seed(seed)
        assert t == float(ndgrad.rand(1).item())
        assert n == np.random.RandomState(_worker._generate_state(base, wid)).rand()
    assert first[0] != first[1]
    again = list(DataLoader(Seeds(), batch_size=None, num_workers=2,
                            generator=ndgrad.Generator().manual_seed(7)))
    assert again == rows                                     # reproducible given the generator


def test_numpy_worker_seed_matches_pytorchs():
    torch = pytest.importorskip("torch")
    from torch.utils.data._utils.worker import _generate_state
    for base, wid in [(0, 0), (12345678901234, 3), (2 ** 63 - 1, 7)]:
        assert _worker._generate_state(base, wid) == _generate_state(base, wid)
    assert torch is not None


def test_worker_init_fn_runs_in_each_worker():
    rows = list(DataLoader(InitSeen(), batch_size=None, num_workers=2, worker_init_fn=_init_fn))
    assert rows == [[0, 100], [1, 101], [0, 100], [1, 101]]   # default_convert: tuples -> lists


def test_iterable_dataset_sharding_matches_pytorch():
    got = [b.tolist() for b in DataLoader(Shards(7), batch_size=2, num_workers=2)]
    assert got == [[0, 2], [1, 3], [4, 6], [5]]
    got = [b.tolist() for b in DataLoader(Shards(7), batch_size=2, num_workers=2,
                                          drop_last=True)]
    assert got == [[0, 2], [1, 3], [4, 6]]
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader as TDL, IterableDataset as TID
    from torch.utils.data import get_worker_info as tinfo

    class TShards(TID):
        def __iter__(self):
            info = tinfo()
            return iter(range(info.id, 7, info.num_workers))
    assert [b.tolist() for b in TDL(TShards(), batch_size=2, num_workers=2)] == [
        [0, 2], [1, 3], [4, 6], [5]]
    assert torch is not None


def test_persistent_workers_are_reused_across_epochs():
    loader = DataLoader(Squares(6), batch_size=2, num_workers=2, persistent_workers=True)
    e1, e2 = list(loader), list(loader)
    assert _values(e1) == _values(e2)
    pids = lambda bs: {p for b in bs for p in b["pid"].tolist()}  # noqa: E731
    assert pids(e1) == pids(e2)
    it = loader._iterator
    assert all(w.is_alive() for w in it._workers)
    next(iter(loader))                        # an epoch broken off, then a full one
    assert _values(list(loader)) == _values(e1)
    workers = list(it._workers)
    it._shutdown_workers()
    assert not any(w.is_alive() for w in workers)
    fresh = DataLoader(Squares(6), batch_size=2, num_workers=2)
    assert pids(list(fresh)).isdisjoint(pids(list(fresh)))   # new workers each epoch
    shards = DataLoader(Shards(5), batch_size=2, num_workers=2, persistent_workers=True)
    assert [b.tolist() for b in shards] == [b.tolist() for b in shards] == [[0, 2], [1, 3],
                                                                              [4]]


def test_prefetch_factor_bounds_tasks_in_flight():
    loader = DataLoader(Squares(20), batch_size=1, num_workers=2, prefetch_factor=3)
    it = iter(loader)
    assert it._send_idx == 6                 # prefetch_factor * num_workers sent up front
    next(it)
    assert it._send_idx == 7                 # one more for each batch returned
    assert len(list(it)) == 19
    it = iter(DataLoader(Squares(20), batch_size=1, num_workers=2))
    assert it._send_idx == 4                 # the default prefetch_factor is 2
    del it


def test_worker_error_is_reraised_with_its_traceback():
    loader = DataLoader(FailAt(3), batch_size=1, num_workers=2)
    it = iter(loader)
    assert [next(it).item() for _ in range(3)] == [0, 1, 2]
    with pytest.raises(ValueError) as info:
        next(it)
    msg = str(info.value)
    assert msg.startswith("Caught ValueError in DataLoader worker process 1.\n"
                          "Original Traceback (most recent call last):\n")
    assert "in __getitem__" in msg and "ValueError: bad item 3" in msg
    assert [b.item() for b in it] == [4, 5]       # the loader goes on, as PyTorch's
    with pytest.raises(KeyError) as info:
        list(DataLoader(MissingKey(), num_workers=2))
    assert str(info.value).startswith("Caught KeyError in DataLoader worker process 0.")


def test_worker_init_fn_error_is_reraised():
    def bad_init(worker_id):
        raise RuntimeError(f"init failed in {worker_id}")
    with pytest.raises(RuntimeError, match="Caught RuntimeError in DataLoader worker process 0"
                                           r"(.|\n)*init failed in 0"):
        list(DataLoader(Squares(4), num_workers=2, worker_init_fn=bad_init))


def test_timeout_and_dead_worker():
    import multiprocessing as mp
    release = mp.get_context().Event()
    it = iter(DataLoader(Slow(release), num_workers=2, timeout=0.5))
    workers = list(it._workers)
    with pytest.raises(RuntimeError, match=r"^DataLoader timed out after 0.5 seconds$"):
        next(it)
    release.set()
    del it
    assert not any(w.is_alive() for w in workers)
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited "
                                           "unexpectedly"):
        list(DataLoader(Exit(), batch_size=1, num_workers=2))


def test_argument_errors_as_pytorch():
    ds = Squares(4)
    cases = [
        (dict(num_workers=-1), ValueError, "num_workers option should be non-negative; use "
                                           "num_workers=0 to disable multiprocessing."),
        (dict(prefetch_factor=2), ValueError, "prefetch_factor option could only be specified "
                                              "in multiprocessing.let num_workers > 0"),
        (dict(num_workers=2, prefetch_factor=-1), ValueError,
         "prefetch_factor option should be non-negative"),
        (dict(persistent_workers=True), ValueError, "persistent_workers option needs "
                                                    "num_workers > 0"),
        (dict(num_workers=2, timeout=-1), ValueError, "timeout option should be non-negative"),
        (dict(num_workers=2, multiprocessing_context="nope"), ValueError,
         "multiprocessing_context option should specify a valid start method in"),
        (dict(num_workers=2, multiprocessing_context=3), TypeError,
         "multiprocessing_context option should be a valid context object"),
        (dict(multiprocessing_context="spawn"), ValueError,
         "multiprocessing_context can only be used with multi-process loading "
         "(num_workers > 0), but got num_workers=0"),
    ]
    torch = None
    try:
        import torch
    except ImportError:
        pass
    for kwargs, exc, msg in cases:
        with pytest.raises(exc) as info:
            DataLoader(ds, **kwargs)
        assert str(info.value).startswith(msg), (kwargs, str(info.value))
        if torch is not None:
            with pytest.raises(exc) as tinfo:
                torch.utils.data.DataLoader(ds, **kwargs)
            assert str(tinfo.value) == str(info.value)


def test_pin_memory_is_accepted():
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no "
                                         "accelerator is found"):
        out = list(DataLoader(Squares(4), batch_size=2, num_workers=2, pin_memory=True))
    assert _values(out) == [[0., 1.], [4., 9.]]


def test_spawn_context():
    loader = DataLoader(Squares(4), batch_size=2, num_workers=2, multiprocessing_context="spawn")
    assert _values(list(loader)) == [[0., 1.], [4., 9.]]


def test_deleting_the_iterator_stops_the_workers():
    it = iter(DataLoader(Squares(50), batch_size=1, num_workers=2))
    next(it)
    workers = list(it._workers)
    assert all(w.is_alive() for w in workers)
    del it
    assert not any(w.is_alive() for w in workers)
    it = iter(DataLoader(Squares(4), batch_size=2, num_workers=2))
    workers = list(it._workers)
    list(it)                                     # exhausted: shut down at once
    assert not any(w.is_alive() for w in workers)


# ---------------------------------------------------------------- no orphans

SCRIPT = textwrap.dedent("""
    import os, sys, time
    sys.path.insert(0, {src!r})
    import ndgrad
    from ndgrad.utils.data import DataLoader, Dataset

    class D(Dataset):
        def __len__(self):
            return 1000
        def __getitem__(self, i):
            time.sleep(0.01)
            return i

    it = iter(DataLoader(D(), batch_size=1, num_workers=2))
    next(it)
    print(" ".join(str(w.pid) for w in it._workers), flush=True)
    sys.stdin.readline()                     # the test has seen the workers alive
    mode = sys.argv[1]
    if mode == "interrupt":
        raise KeyboardInterrupt
    if mode == "wait":
        for x in it:
            pass
""")


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False
    except OSError:
        return False


def _wait_gone(pids, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    return not any(_alive(p) for p in pids)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("mode", ["exit", "interrupt", "sigint", "sigkill"])
def test_no_orphan_workers(tmp_path, mode):
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT.format(src=SRC))
    proc = subprocess.Popen([sys.executable, str(script),
                             "wait" if mode.startswith("sig") else mode],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    pids = [int(p) for p in proc.stdout.readline().split()]
    assert len(pids) == 2 and all(_alive(p) for p in pids)
    proc.stdin.write("go\n")
    proc.stdin.flush()
    if mode == "sigint":                          # Ctrl-C: the whole process group gets SIGINT
        os.killpg(proc.pid, signal.SIGINT)
    elif mode == "sigkill":                       # the main process dies without cleanup
        proc.kill()
    _, err = proc.communicate(timeout=60)
    if mode in ("interrupt", "sigint"):
        assert "KeyboardInterrupt" in err
        assert err.count("Traceback") == 1, err   # the workers print nothing
    assert _wait_gone(pids), f"orphan workers {pids}"


class Threads(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return ndgrad.get_num_threads()


def test_workers_run_their_kernels_on_one_thread_as_pytorchs():
    torch = pytest.importorskip("torch")

    class TorchThreads(torch.utils.data.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return torch.get_num_threads()
    theirs = [int(t) for t in torch.utils.data.DataLoader(TorchThreads(), num_workers=2)]
    ours = [int(t) for t in DataLoader(Threads(), num_workers=2)]
    assert ours == theirs == [1, 1]
