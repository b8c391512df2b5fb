"""Kernels split over threads (ops/_parallel.py, Note [Parallel pieces]): the same bits for any
thread count, pieces really on other threads, errors and warnings as on one thread, and
torch.set_num_threads / get_num_threads as PyTorch has them."""
import multiprocessing
import threading
import warnings

import numpy as np
import pytest

import ndgrad
from ndgrad.ops import _parallel as P, activation as A

F = ndgrad.nn.functional


@pytest.fixture
def threads():
    before = ndgrad.get_num_threads()
    yield
    ndgrad.set_num_threads(before)


def _bits(ts):
    return [t.detach().numpy().tobytes() for t in ts]


def _under(n, f):
    ndgrad.set_num_threads(n)
    return f()


def test_pieces_run_on_other_threads(threads):
    ndgrad.set_num_threads(3)
    meet = threading.Barrier(3, timeout=60)   # (three pieces at once: three threads)

    def kernel(lo, hi):
        meet.wait()
        return lo, hi, threading.get_ident()
    seen = P.run(kernel, 3 * P.GRAIN)
    assert [s[:2] for s in seen] == [(0, P.GRAIN), (P.GRAIN, 2 * P.GRAIN),
                                     (2 * P.GRAIN, 3 * P.GRAIN)]
    assert len({s[2] for s in seen}) == 3 and seen[0][2] == threading.get_ident()
    ndgrad.set_num_threads(1)
    assert P.run(lambda lo, hi: (lo, hi), 3 * P.GRAIN) == [(0, 3 * P.GRAIN)]


def test_a_worker_does_not_split_again(threads):
    ndgrad.set_num_threads(2)
    inner = P.run(lambda lo, hi: len(P.bounds(4 * P.GRAIN)), 2 * P.GRAIN)
    assert inner == [1, 1] and len(P.bounds(4 * P.GRAIN)) == 2   # (no piece splits again)


def test_errors_reach_the_caller_and_the_pool_goes_on(threads):
    ndgrad.set_num_threads(2)

    def kernel(lo, hi):
        if lo:
            raise ValueError("in a worker's piece")
        return lo

    with pytest.raises(ValueError, match="in a worker's piece"):
        P.run(kernel, 2 * P.GRAIN)
    assert P.run(lambda lo, hi: hi - lo, 2 * P.GRAIN) == [P.GRAIN, P.GRAIN]


def test_an_interrupt_in_the_callers_piece_waits_for_the_others(threads):
    ndgrad.set_num_threads(2)
    ended = []

    def kernel(lo, hi):
        if lo == 0:
            raise KeyboardInterrupt
        threading.Event().wait(0.05)
        ended.append(lo)

    with pytest.raises(KeyboardInterrupt):
        P.run(kernel, 2 * P.GRAIN)
    assert ended == [P.GRAIN]   # (the worker's piece had ended: nothing writes on afterwards)
    assert P.run(lambda lo, hi: hi - lo, 2 * P.GRAIN) == [P.GRAIN, P.GRAIN]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_same_bits_for_any_thread_count(threads, dtype, approximate):
    x = np.random.default_rng(0).standard_normal(3 * A._GELU_GRAIN + 17) * 4  # (3 pieces)

    def run():
        t = ndgrad.tensor(x.astype(dtype), requires_grad=True)
        y = F.gelu(t, approximate=approximate)
        return _bits([y, *ndgrad.autograd.grad((y * y).sum(), t)])
    assert _under(1, run) == _under(2, run) == _under(3, run)


def test_workers_keep_no_arrays_after_a_kernel(threads):
    import weakref
    ndgrad.set_num_threads(2)
    x = np.ones(4 * P.GRAIN)
    out = np.empty_like(x)
    P.map_into(np, lambda o, a: np.multiply(a, 2, out=o), out, x)
    gone = weakref.ref(x)
    del x
    assert gone() is None    # (a worker held its piece's kernel, and so x, until the next)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_blocks_same_bits_for_any_thread_count(threads, dtype):
    # (activation._by_blocks: rows of 4 MiB and more in blocks, the blocks over the threads)
    x = np.random.default_rng(2).standard_normal((333, 4099)) * 5

    def run():
        t = ndgrad.tensor(x.astype(dtype), requires_grad=True)
        out = [F.softmax(t, -1), F.log_softmax(t, -1)]
        g = np.random.default_rng(3).standard_normal(x.shape).astype(dtype)
        grads = ndgrad.autograd.grad(out, t, [ndgrad.tensor(g), ndgrad.tensor(g)])
        return _bits([*out, *grads, F.cross_entropy(t, ndgrad.arange(333) % 4099)])
    assert _under(1, run) == _under(2, run) == _under(3, run)


def test_layer_norm_and_attention_same_bits_for_any_thread_count(threads):
    r = np.random.default_rng(1)
    x, w, b = (r.standard_normal(s).astype(np.float32) for s in ((64, 64, 128), 128, 128))
    proj = r.standard_normal((16, 64, 384)).astype(np.float32)   # (a GPT's (B, T, 3C))
    heads = [r.standard_normal((1, 64, 64, 32)).astype(np.float32) for _ in range(3)]

    def run():
        ts = [ndgrad.tensor(a, requires_grad=True) for a in (x, w, b, proj, *heads)]
        y = F.layer_norm(ts[0], (128,), ts[1], ts[2])
        q, k, v = (t.view(16, 64, 4, 32).transpose(1, 2) for t in ts[3].split(128, 2))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (views: pieces of B)
        a1 = F.scaled_dot_product_attention(*ts[4:], is_causal=True)  # (B = 1: of B H)
        loss = (y * y).sum() + (a * a).sum() + (a1 * a1).sum()
        return _bits([y, a, a1, *ndgrad.autograd.grad(loss, ts)])
    assert _under(1, run) == _under(2, run) == _under(3, run)


def test_attention_backward_splits_over_heads_as_its_forward(threads, monkeypatch):
    # (the backward's logsumexp, one row a head, once counted as a head dim: 64 x 64 x 64 looked
    # like a GEMM OpenBLAS would thread, and GPT's attention backward ran on one thread)
    ndgrad.set_num_threads(2)
    proj = ndgrad.tensor(np.random.default_rng(2).standard_normal((16, 64, 384)).astype(
        np.float32), requires_grad=True)
    q, k, v = (t.view(16, 64, 4, 32).transpose(1, 2) for t in proj.split(128, 2))
    runs, run = [], P.run
    monkeypatch.setattr(P, "run", lambda kernel, n, *a, **kw: runs.append(n) or run(
        kernel, n, *a, **kw))
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert runs == [16]
    y.sum().backward()
    assert runs == [16, 16]


@pytest.mark.parametrize("make", [
    lambda ps: ndgrad.optim.AdamW(ps, lr=1e-2),
    lambda ps: ndgrad.optim.AdamW(ps, lr=1e-2, amsgrad=True),
    lambda ps: ndgrad.optim.Adam(ps, lr=1e-2, weight_decay=0.1, maximize=True),
    lambda ps: ndgrad.optim.SGD(ps, lr=1e-2, momentum=0.9)],   # (its fused multiply-add splits)
    ids=["AdamW", "AdamW-amsgrad", "Adam-decay-maximize", "SGD-momentum"])
def test_optimizer_update_same_bits_for_any_thread_count(threads, make):
    r = np.random.default_rng(2)
    sizes = (9 * P.GRAIN + 3, 7, 0, 2 * P.GRAIN, (3, P.GRAIN // 2))
    p0 = [r.standard_normal(n).astype(np.float32) for n in sizes]
    g0 = [r.standard_normal(n).astype(np.float32) for n in sizes]

    def run():
        ps = [ndgrad.tensor(p, requires_grad=True) for p in p0]
        opt = make(ps)
        for _ in range(3):
            for p, g in zip(ps, g0):
                p.grad = ndgrad.tensor(g)
            opt.step()
        state = [t for p in ps for t in opt.state[p].values()]   # (Adam's steps: counted once)
        return _bits(ps + state) + [str([p._version for p in ps]).encode()]
    assert _under(1, run) == _under(2, run) == _under(3, run)


def test_spread_runs_every_element_once(threads):
    ndgrad.set_num_threads(3)
    big = P.ITEM_MIN
    sizes = [big, 0, 3, 2 * big, 5, 0, big - 1, 3 * big + 7, big + 1]
    cuttable = [True, True, True, True, False, True, True, True, False]
    done, lock = [], threading.Lock()

    def item(j, lo, hi):
        with lock:
            done.append((j, lo, hi, threading.get_ident()))
    P.spread(np, item, sizes, cuttable)
    here = threading.get_ident()
    for j, n in enumerate(sizes):   # every element of every item once, in parts that tile it
        parts = sorted((lo, hi) for k, lo, hi, _ in done if k == j)
        assert parts[0][0] == 0 and parts[-1][1] == n
        assert all(a[1] == b[0] for a, b in zip(parts, parts[1:]))
        if n < big or not cuttable[j]:
            assert parts == [(0, n)]
    # items under ITEM_MIN whole on the calling thread (their Python holds the GIL); the large
    # ones in one piece a thread (three pieces, on the caller and the pool's workers), cut where
    # allowed
    assert all(t == here for j, lo, hi, t in done if sizes[j] < big)
    assert len({t for j, lo, hi, t in done if sizes[j] >= big}) > 1
    assert len([1 for j, *_ in done if j == 3]) > 1    # (cut at a border)
    assert len([1 for j, *_ in done if j == 7]) > 1
    ndgrad.set_num_threads(1)
    done.clear()
    P.spread(np, item, sizes, cuttable)
    assert [(j, lo, hi) for j, lo, hi, _ in done] == [
        (1, 0, 0), (2, 0, 3), (4, 0, 5), (5, 0, 0), (6, 0, big - 1), (0, 0, big),
        (3, 0, 2 * big), (7, 0, 3 * big + 7), (8, 0, big + 1)]


def test_pieces_keep_the_quiet_error_state(threads):
    x = np.random.default_rng(3).standard_normal(4 * P.GRAIN).astype(np.float32) * 1e30
    x[::7], x[1::7], x[2::7] = np.inf, -np.inf, np.nan

    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("error")   # (an overflow warning from a worker would raise)
            return _bits([F.gelu(ndgrad.tensor(x))])
    assert _under(1, run) == _under(2, run)


def _child(q):
    q.put(P.run(lambda lo, hi: hi - lo, 2 * P.GRAIN))


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork")
def test_a_forked_child_makes_its_own_pool(threads):
    ndgrad.set_num_threads(2)
    P.run(lambda lo, hi: None, 2 * P.GRAIN)   # (the parent's pool exists)
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    child = ctx.Process(target=_child, args=(q,))
    child.start()
    try:
        assert q.get(timeout=60) == [P.GRAIN, P.GRAIN]
    finally:
        child.join(60)


def test_set_num_threads_as_pytorch(threads):
    torch = pytest.importorskip("torch")
    for bad in (0, -1, 2.5, "2"):
        with pytest.raises(RuntimeError) as theirs:
            torch.set_num_threads(bad)
        with pytest.raises(RuntimeError) as ours:
            ndgrad.set_num_threads(bad)
        assert str(ours.value) == str(theirs.value)
    ndgrad.set_num_threads(3)
    assert ndgrad.get_num_threads() == 3 and P.threads() == 3


def test_config_reports_the_threads_as_pytorchs_does(threads):
    torch = pytest.importorskip("torch")
    ndgrad.set_num_threads(3)
    for name in ("show", "parallel_info", "_cxx_flags"):
        assert isinstance(getattr(ndgrad.__config__, name)(), str)
        assert isinstance(getattr(torch.__config__, name)(), str)
    assert "get_num_threads() : 3" in ndgrad.__config__.parallel_info()
    assert "at::get_num_threads() : " in torch.__config__.parallel_info()
