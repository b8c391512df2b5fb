"""Array kernels over large inputs, split into pieces that run on several threads.

Note [Parallel pieces]
~~~~~~~~~~~~~~~~~~~~~~
NumPy runs every ufunc pass on one core; PyTorch splits its CPU kernels over its intra-op
threads (`torch.set_num_threads`, by default one per core). NumPy releases the GIL inside a
ufunc's loop, so a kernel made of passes over a large array runs on k cores when the array is
cut into k contiguous pieces and each piece's passes run on a thread of their own: only each
pass's Python call (~1 us) holds the GIL. `run(kernel, n)` calls kernel(lo, hi) for pieces of
range(n): the first piece on the calling thread, the others on a pool of k - 1 worker threads,
and returns when all are done (the results in order, for kernels that reduce). Only kernels of
at least `GRAIN` elements a piece are split, so that a piece's passes are long against the
~20-50 us it takes to hand a piece to a worker and wake it. A piece runs in a copy of the
caller's context (NumPy's error state, ndgrad's quiet context); the kernels' scratch buffers
are per thread (ops/_scratch.py). A piece never splits again (a kernel inside it runs whole),
so nothing waits on the pool from inside it. `spread` runs independent items (an optimizer's
parameters) in pieces of about equal size, one a thread, cutting items where they allow it. A forked child starts without a
pool (the parent's threads are not in it) and makes its own on first use. Each piece computes
its elements as the unsplit kernel would, so results are bit for bit the same for any thread
count; a kernel whose pieces would reduce across each other (sums over rows split between
pieces) must not split that way. A piece's kernel calls no BLAS routine that OpenBLAS would run
on several threads: two callers' BLAS threads on the same cores stall each other.
"""
import contextvars
import os
import queue
import threading

__all__ = ["threads", "set_threads", "run", "bounds", "map_into", "worth", "spread", "GRAIN",
           "ITEM_MIN", "BLAS_ONE_THREAD"]

GRAIN = 1 << 16  # elements a piece, at least
ITEM_MIN = 1 << 17  # elements: an item of `spread` below it runs on the calling thread
BLAS_ONE_THREAD = 1 << 18  # m n k of a GEMM below which OpenBLAS runs it on the calling thread
                           # alone (its interface's threshold): what a piece may call


def _default_threads():
    env = os.environ.get("OMP_NUM_THREADS", "")  # (PyTorch's intra-op default honours it)
    if env.strip().isdigit() and int(env) > 0:
        return int(env)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


_THREADS = [_default_threads()]
_POOL = [queue.SimpleQueue(), 0]   # the workers' task queue, the workers started
_LOCK = threading.Lock()
_WORKER = threading.local()   # .inside: this thread is one of the pool's


def threads():
    """The number of threads a kernel is split over (torch.get_num_threads())."""
    return _THREADS[0]


def set_threads(n):
    """torch.set_num_threads(n): kernels split over n threads from now on."""
    if not isinstance(n, int):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _THREADS[0] = n   # (the pool grows to n - 1 workers when next used; it never shrinks:
                      # idle workers wait on its queue, and a call hands out n - 1 pieces)


def bounds(n, k=None, grain=GRAIN, align=64):
    """range(n) cut into at most k pieces of at least `grain` elements (piece borders at
    multiples of `align`), as (lo, hi) pairs; one piece where n is small or k is 1."""
    k = _THREADS[0] if k is None else k
    k = min(k, n // grain) if grain else k
    if k <= 1 or getattr(_WORKER, "inside", False):
        return ((0, n),)
    step = -(-n // k)
    step = -(-step // align) * align
    return tuple((lo, min(lo + step, n)) for lo in range(0, n, step))


def _pool():
    """The task queue of the worker threads, with threads() - 1 of them started."""
    need = _THREADS[0] - 1
    if _POOL[1] < need:
        with _LOCK:
            while _POOL[1] < need:
                threading.Thread(target=_work, args=(_POOL[0],), daemon=True,
                                 name=f"ndgrad-kernel-{_POOL[1]}").start()
                _POOL[1] += 1
    return _POOL[0]


def _work(tasks):
    """A worker: runs the pieces put in the queue."""
    _WORKER.inside = True
    while True:
        ctx, kernel, i, lo, hi, done = tasks.get()
        try:
            result = (i, True, ctx.run(kernel, lo, hi))
        except BaseException as e:  # noqa: B036 (handed to the caller, which raises it)
            result = (i, False, e)
        # (no reference to the piece's kernel, and so to its arrays, once the caller may go on:
        # a worker held a softmax's 8 MB input alive until the next piece came)
        ctx = kernel = None
        done.put(result)
        done = result = None


def _forget_pool():   # (in a forked child: the parent's worker threads do not exist there)
    _POOL[:] = [queue.SimpleQueue(), 0]


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def run(kernel, n, grain=GRAIN, align=64):
    """kernel(lo, hi) for the pieces of range(n) (`bounds`), in parallel; their results in
    order. Where there is one piece, kernel(0, n) on the calling thread."""
    parts = bounds(n, None, grain, align)
    if len(parts) == 1:
        return [kernel(0, n)]
    tasks, done = _pool(), queue.SimpleQueue()
    for i, (lo, hi) in enumerate(parts[1:]):
        tasks.put((contextvars.copy_context(), kernel, i, lo, hi, done))
    _WORKER.inside = True   # (the caller's own piece does not split again either)
    try:
        first = kernel(*parts[0])
    finally:   # (the other pieces end before the caller goes on, whatever happened here)
        _WORKER.inside = False
        got = sorted(done.get() for _ in parts[1:])   # (in piece order: finished in any)
    for i, ok, r in got:
        if not ok:
            raise r
    return [first] + [r for i, ok, r in got]


def worth(xp, n, grain=GRAIN):
    """Whether a kernel over n elements of xp's arrays splits: NumPy arrays (other array
    modules run their kernels whole), at least two pieces of `grain`, more than one thread."""
    return n >= 2 * grain and _THREADS[0] > 1 and xp.__name__ == "numpy" and \
        not getattr(_WORKER, "inside", False)


def map_into(xp, kernel, out, *ins, grain=GRAIN):
    """kernel(out[lo:hi], *(a[lo:hi] for a in ins)) over the pieces of 1-d arrays of one
    length (whole where `worth` says no); returns out."""
    n = out.shape[0]
    if not worth(xp, n, grain):
        kernel(out, *ins)
        return out

    def piece(lo, hi):
        kernel(out[lo:hi], *[a[lo:hi] for a in ins])
    run(piece, n, grain)
    return out


def spread(xp, fn, sizes, cuttable=None, grain=GRAIN):
    """fn(j, lo, hi) for every item j (of len(sizes)), items of these sizes in elements, whole
    (lo, hi = 0, sizes[j]) or in parts: the items of ITEM_MIN elements or more laid end to end
    and cut into one piece a thread of about equal size where that is `worth` it, an item that
    `cuttable[j]` allows cut at the pieces' borders (fn then runs on each part, on different
    threads), the others whole in the piece where they start; the items under ITEM_MIN, and all
    where a split is not worth it, whole and one after the other on the calling thread. (An
    item's own Python, 50-100 us for an optimizer's parameter, holds the GIL: on smaller items
    two threads wait for it more than they gain. GPT's AdamW, 18 matrices of 8-65 K elements:
    7.2 ms a step in groups, 6.0 in turn.)"""
    big = [j for j, n in enumerate(sizes) if n >= ITEM_MIN]
    if len(big) < len(sizes):
        for j, n in enumerate(sizes):
            if n < ITEM_MIN:
                fn(j, 0, n)
    starts, total = [], 0
    for j in big:
        starts.append(total)
        total += sizes[j]
    if not worth(xp, total, grain):
        for j in big:
            fn(j, 0, sizes[j])
        return

    def piece(lo, hi):
        for j, at in zip(big, starts):
            n = sizes[j]
            if cuttable is not None and cuttable[j]:
                a, b = max(lo, at), min(hi, at + n)
                if a < b:
                    fn(j, a - at, b - at)
            elif lo <= at < hi:
                fn(j, 0, n)
    run(piece, total, grain)
