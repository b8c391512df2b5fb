"""PyTorch's CPU float sum, step for step (aten/src/ATen/native/cpu/SumKernel.cpp), on NumPy.

Note [cascade sum]
~~~~~~~~~~~~~~~~~~
PyTorch sums float32 and float64 in their own type with a cascade: `multi_row_sum` adds
elements one by one into a level-0 accumulator in chunks of `step` = 2^max(4, ceil(log2 n) / 4)
elements, adds each chunk's sum into level 1, level 1 into level 2 every `step` chunks, level 2
into 3 every `step`^2, and folds the levels into level 0 at the end. `row_sum` runs that on four
interleaved accumulators (element i into accumulator i % 4) and adds them up; a contiguous row
runs it on vectors of 256 bits (8 float32 or 4 float64 lanes: PyTorch registers this kernel
without an AVX-512 build), then adds the scalar tail and the lanes one by one. A reduction over
the leading dims runs `multi_row_sum` down each column for the columns in blocks of 4 vectors,
`row_sum` for the next whole vectors and for the last columns. A whole-tensor sum of more than
32768 elements on several threads is cut into one contiguous piece a thread, each piece summed
so, and the pieces added in order.

NumPy's sum is pairwise and differs from that in the last bits (most outputs of a float32
mean over a 7x7 plane). `sum` here computes PyTorch's order with whole-array steps: a
sequential sum of k terms is k - 1 array additions, vectorized over everything that PyTorch
sums independently (rows, lanes, accumulators, chunks). The reductions it covers: over trailing
dims or leading dims of a C-contiguous array (the two shapes PyTorch's kernel gives contiguous
reductions, and per index of the dims before them), the whole array, and reduced dims apart
(`_apart`: x.sum((0, 2, 3)) of an NCHW batch); complex sums over dims apart return None (the
caller sums with NumPy).
"""
import math

import numpy as np

from . import _parallel

__all__ = ["sum", "sequential", "lanes"]

_GRAIN = 32768       # at::internal::GRAIN_SIZE


def lanes(dtype):
    """The lanes of PyTorch's CPU vectors where a kernel has no AVX-512 build (its AVX2 build
    runs on AVX-512 CPUs too): 256 bits, 8 float32 or 4 float64."""
    return 32 // np.dtype(dtype).itemsize


def _ceil_log2(n):
    return 0 if n <= 1 else int(n - 1).bit_length()


def _seq(x, axis):
    """((0 + t0) + t1) + ... over `axis` of x, in one NumPy reduction: NumPy adds the terms of
    a C-contiguous array's axis one after the other, in order, when at least two elements lie
    after that axis (pairwise summation is for a reduction along the innermost elements only;
    a single trailing element is made two). Starting from 0 only turns an all -0.0 sum into
    +0.0: `+ 0`."""
    inner = 1
    for n in x.shape[axis + 1:]:
        inner *= n
    if x.size == x.shape[axis]:           # one sequence: NumPy's scalars, one at a time
        acc = x.dtype.type(0)
        for t in x.reshape(-1):
            acc = acc + t
        return np.asarray(acc).reshape(x.shape[:axis] + x.shape[axis + 1:])
    if x.shape[axis] == 1:
        return np.take(x, 0, axis=axis) + x.dtype.type(0)
    if inner < 2:
        twice = np.repeat(x[..., None], 2, axis=-1)
        return np.add.reduce(twice, axis=axis)[..., 0] + x.dtype.type(0)
    if inner < 256 and x.shape[axis] <= 64 and x.size >= 4096 * x.shape[axis]:
        # (short inner runs make NumPy's reduction slow: a few whole-array additions instead)
        cut = (slice(None),) * axis
        acc = x[cut + (0,)] + x.dtype.type(0)
        for k in range(1, x.shape[axis]):
            acc += x[cut + (k,)]
        return acc
    if not x.flags.c_contiguous:
        x = np.ascontiguousarray(x)
    return np.add.reduce(x, axis=axis) + x.dtype.type(0)


def _multi_row_sum(y, k=0):
    """multi_row_sum along axis k of y (the axes before k: independent rows): the level
    cascade, for every element of the other axes at once."""
    size = y.shape[k]
    lead, rest = y.shape[:k], y.shape[k + 1:]
    zero = np.zeros(lead + rest, y.dtype)
    power = max(4, _ceil_log2(size) // 4)
    step = 1 << power
    full = size // step
    cut = (slice(None),) * k

    def groups(x, n):     # x's first n * step along k as (n, step)
        return x[cut + (slice(0, n * step),)].reshape(lead + (n, step) + rest)
    acc1 = acc2 = acc3 = zero
    if full:
        c = _seq(groups(y, full), k + 1)                  # each chunk's sum
        g1 = full // step
        if g1:                                            # level 1: groups of `step` chunks
            s1 = _seq(groups(c, g1), k + 1)
            g2 = g1 // step
            if g2:                                        # level 2: groups of `step` of those
                acc3 = _seq(_seq(groups(s1, g2), k + 1), k)
            if g1 % step:
                acc2 = _seq(s1[cut + (slice(g2 * step, None),)], k)
        if full % step:
            acc1 = _seq(c[cut + (slice(g1 * step, None),)], k)
    acc0 = _seq(y[cut + (slice(full * step, None),)], k) if size > full * step else zero
    for acc in (acc1, acc2, acc3):   # (a level never reached adds +0: nothing, as acc0 is
        if acc is not zero:          # never -0.0 here)
            acc0 = acc0 + acc
    return acc0


def _row_sum(x, k=0):
    """row_sum along axis k of x: four interleaved cascades (element i into the (i % 4)-th),
    the leftover elements into the first, then the four added in order."""
    m = x.shape[k]
    ilp = m // 4
    cut = (slice(None),) * k
    y = x[cut + (slice(0, ilp * 4),)].reshape(x.shape[:k] + (ilp, 4) + x.shape[k + 1:])
    parts = _multi_row_sum(y, k)                          # (..., 4, ...)
    return _seq(np.concatenate([parts[cut + (slice(0, 1),)], x[cut + (slice(ilp * 4, None),)],
                                parts[cut + (slice(1, None),)]], axis=k), k)


def _inner(a):
    """Sums of the rows of a C-contiguous (rows, n) array (vectorized_inner_sum): _rows, or for
    rows that reach level 2 of the cascade the general levels (_row_sum). Short rows are summed
    there down the columns of the transpose (long inner loops for NumPy; a long row's
    transpose costs more than it saves)."""
    r = _rows(a)
    return _inner_levels(a) if r is None else r


def _inner_levels(a):
    """_inner through the general cascade (_row_sum, _multi_row_sum): every level."""
    rows, n = a.shape
    w = lanes(a.dtype)
    t, k = (np.ascontiguousarray(a.T), 0) if n * rows > n * 2 and n < 256 else (a, 1)
    cut = (slice(None),) * k
    if n < w:                                         # (scalar_inner_sum)
        return _row_sum(t, k)
    nvec = n // w
    body = t[cut + (slice(0, nvec * w),)]
    shape = (nvec, w, rows) if k == 0 else (rows, nvec, w)
    vec = _row_sum(body.reshape(shape), k)                # (lanes, rows) or (rows, lanes)
    tail = t[cut + (slice(nvec * w, None),)]
    if k == 1:
        return _seq(np.ascontiguousarray(np.concatenate([tail, vec], axis=1).T), 0)
    return _seq(np.concatenate([tail, vec]), 0)           # the tail, then the lanes


def _seq_fast(x, axis):
    """x summed along `axis` in order from its first term (no +0 start: the callers' final + 0
    gives an all-zero sum's sign): NumPy's reduction where at least two elements follow the
    axis, else the last partial sum of add.accumulate."""
    if math.prod(x.shape[axis + 1:]) >= 2 or not x.shape[axis]:
        return np.add.reduce(x, axis)
    return np.take(np.add.accumulate(x, axis), -1, axis)


def _levels(y, k):
    """_multi_row_sum along axis k of y, levels 0 and 1 only (None where level 2 is reached),
    without the +0 starts: sequential reductions over whole arrays."""
    m = y.shape[k]
    lead, rest = y.shape[:k], y.shape[k + 1:]
    cut = (slice(None),) * k
    step = 1 << max(4, _ceil_log2(m) // 4)
    full = m // step
    if not full:
        return _seq_fast(y, k)
    g1 = full // step
    if g1 >= step:
        return None
    c = _seq_fast(y[cut + (slice(0, full * step),)].reshape(lead + (full, step) + rest), k + 1)
    accs = []
    if g1:          # (level 2: groups of `step` chunks; level 1: the chunks after)
        accs.append(_seq_fast(_seq_fast(c[cut + (slice(0, g1 * step),)].reshape(
            lead + (g1, step) + rest), k + 1), k))
    if full % step:
        accs.insert(0, _seq_fast(c[cut + (slice(g1 * step, None),)], k))
    total = _seq_fast(y[cut + (slice(full * step, None),)], k) if m > full * step else None
    for acc in accs:
        total = acc if total is None else total + acc
    return total


def _row_fast(x):
    """_row_sum along axis 1 of the (B, m, C) array x (4 interleaved accumulators), or None."""
    B, m, C = x.shape
    ilp = m // 4
    if not ilp:
        return _seq_fast(x, 1)
    parts = _levels(x[:, :ilp * 4].reshape(B, ilp, 4 * C), 1)
    if parts is None:
        return None
    parts = parts.reshape(B, 4, C)
    if m > ilp * 4:
        parts = np.concatenate([parts[:, :1], x[:, ilp * 4:], parts[:, 1:]], 1)
    return _seq_fast(parts, 1)


def _outer_blocks(a, multi, row):
    """vectorized_outer_sum's column split of the (batch, n, cols) array a: `multi` sums down
    the blocks of 4 vectors, `row` the next whole vectors and the last columns (fewer columns
    than a vector: scalar_outer_sum, in fours); the parts joined, or None where one is None."""
    cols = a.shape[2]
    w = lanes(a.dtype)
    block = 4 * w if cols >= w else 4
    whole = cols - cols % block
    vec = whole + (cols - whole) // w * w if cols >= w else whole
    parts = []
    if whole:
        parts.append(multi(a[:, :, :whole]))
    if vec > whole:
        parts.append(row(a[:, :, whole:vec]))
    if vec < cols:
        parts.append(row(a[:, :, vec:]))
    if any(p is None for p in parts):
        return None
    return np.concatenate(parts, axis=1) if len(parts) > 1 else parts[0]


def _outer_fast(a):
    """_outer in fewer NumPy calls (levels 0 and 1 of the cascade; None beyond)."""
    r = _outer_blocks(a, lambda x: _levels(x, 1), _row_fast)
    return None if r is None else r + a.dtype.type(0)


def _outer(a):
    """Sums down the middle axis of a C-contiguous (batch, n, cols) array, per column: the
    fewer-calls levels, or the general ones."""
    r = _outer_fast(a)
    return _outer_levels(a) if r is None else r


def _outer_levels(a):
    """_outer through the general cascade: every level."""
    return _outer_blocks(a, lambda x: _multi_row_sum(x, 1), lambda x: _row_sum(x, 1))


_SMALL_ORDER = {}     # n < 8: the order in which scalar_inner_sum adds n scalars


def _small_order(n):
    """row_sum's order for n < 8 scalars: the four accumulators' first elements x0..x3 when
    n >= 4 (the leftovers x4.. into the first), i.e. x0, x4, .., x1, x2, x3."""
    order = _SMALL_ORDER.get(n)
    if order is None:
        order = _SMALL_ORDER[n] = np.array(
            [0] + list(range(4, n)) + [1, 2, 3] if n >= 4 else list(range(n)), np.intp)
    return order


def _rows(a):
    """The sums of the rows of the C-contiguous (R, n) float array `a`, each as
    vectorized_inner_sum adds a row (_inner), in a few NumPy calls for all rows at once, or
    None for rows long enough to reach level 2 of the cascade. Short rows are transposed
    (NumPy's reductions over a leading axis then run long inner loops); long rows stay leading
    (a transposed copy of a large array costs more than the short loops)."""
    R, n = a.shape
    if R == 1:
        return _vector_rows(a.T, 0)                     # ((n, 1): no copy)
    if n < 256:
        return _vector_rows(np.ascontiguousarray(a.T), 0)
    return _vector_rows(a, 1)


def _vector_rows(x, k):
    """vectorized_inner_sum of each row of the 2-d x whose row elements run along axis k (x is
    (n, R) for k = 0, (R, n) for k = 1): the 4 interleaved vector accumulators and their
    level-0 and level-1 chunks (_levels), the leftover vectors into the first accumulator, the
    scalar tail and the lanes folded in order. Each level starts from +0 in PyTorch; that
    changes nothing but an all-zero sum's sign, which the final `+ 0` gives."""
    n = x.shape[k]
    R = x.shape[1 - k]
    w = 32 // x.itemsize
    zero = x.dtype.type(0)
    cut = (slice(None),) * k
    if n < w:
        return _fold(x[cut + (_small_order(n),)], k) + zero
    nvec = n // w
    ilp = nvec // 4
    vec = x[cut + (slice(0, nvec * w),)].reshape((nvec, w, R) if k == 0 else (R, nvec, w))
    if ilp:
        y = vec[cut + (slice(0, ilp * 4),)].reshape((ilp, 4, w, R) if k == 0 else
                                                   (R, ilp, 4, w))
        parts = _levels(y, k)
        if parts is None:
            return None
        if nvec > ilp * 4:
            parts = np.concatenate([parts[cut + (slice(0, 1),)], vec[cut + (slice(ilp * 4, None),)],
                                    parts[cut + (slice(1, None),)]], k)
        lane = _seq_fast(parts, k)
    else:
        lane = _seq_fast(vec, k)
    if n > nvec * w:                                  # (the scalar tail, then the lanes)
        lane = np.concatenate([x[cut + (slice(nvec * w, None),)], lane], k)
    return _fold(lane, k) + zero


def _fold(x, k):
    """The running sums along axis k of the 2-d x, in order (_down on the columns)."""
    return _down(x if k == 0 else np.ascontiguousarray(x.T))


def _down(x):
    """The running sums down the columns of the 2-d x, in order: NumPy's reduction over the
    leading axis of more than one column (add.accumulate down many short columns is ~10x
    slower), one column's last partial sum."""
    if x.shape[1] != 1:
        return np.add.reduce(x, 0)
    return np.add.accumulate(x[:, 0])[-1:]


def _whole_row(v):
    """_vector_rows for the one contiguous 1-d row of a whole-tensor sum (the most common call)
    in its fewest NumPy calls: its sum, or None."""
    n = v.size
    w = 32 // v.itemsize
    zero = v.dtype.type(0)
    if n < w:
        return np.add.accumulate(v[_small_order(n)])[-1] + zero
    nvec = n // w
    ilp = nvec // 4
    vec = v[:nvec * w].reshape(nvec, w)
    if ilp:
        y = vec[:ilp * 4].reshape(ilp, 4, w)
        parts = np.add.reduce(y, 0) if ilp < 16 else _levels(y, 0)   # (< 16: no chunk yet)
        if parts is None:
            return None
        lane = np.add.reduce(parts if nvec == ilp * 4 else np.concatenate(
            [parts[:1], vec[ilp * 4:], parts[1:]]), 0)
    else:
        lane = np.add.reduce(vec, 0)
    if n > nvec * w:                                  # (the scalar tail, then the lanes)
        lane = np.concatenate([v[nvec * w:], lane])
    return np.add.accumulate(lane)[-1] + zero


def sum(a, axis):
    """PyTorch's sum of float32/float64 (or complex64/complex128: the same cascade on vectors
    of 4 or 2 complex values, each part added as a real) NumPy array `a` over `axis` (None or
    a tuple of dims), or None where its loop is not one of those followed here (Note [cascade
    sum])."""
    if type(a) is not np.ndarray or a.dtype.kind not in "fc" or a.dtype.itemsize < 4 or \
            not a.flags.c_contiguous or a.size == 0:
        return None
    if axis is None and (a.size <= _GRAIN or _parallel.threads() == 1):
        r = _whole_row(a.reshape(-1))
        if r is not None:
            return np.asarray(r).reshape(())
    elif axis is not None and len(axis) == 1:       # (one dim: the common call, directly)
        shape = a.shape
        d = axis[0] % len(shape)
        n = shape[d]
        lead = 1
        for k in shape[:d]:
            lead *= k
        trail = a.size // (lead * n) if n > 1 else 0
        if n > 1 and (lead > 1 or trail > 1):
            out = shape[:d] + shape[d + 1:]
            if trail == 1:
                return _inner(a.reshape(lead, n)).reshape(out)
            return _outer(a.reshape(lead, n, trail)).reshape(out)
    nd = a.ndim
    dims = tuple(range(nd)) if axis is None else tuple(sorted(d % nd for d in axis))
    shape = tuple(s for d, s in enumerate(a.shape) if d not in dims)
    dims = tuple(d for d in dims if a.shape[d] != 1)      # (unit dims: nothing to add)
    keep = [d for d in range(nd) if d not in dims and a.shape[d] != 1]
    n = 1
    for d in dims:
        n *= a.shape[d]
    if not dims:
        return a.reshape(shape).copy()
    if not keep:                                          # the whole array
        flat = a.reshape(-1)
        piece = thread_piece(n)
        if piece is None:
            return _inner(flat[None])[0].reshape(shape)
        total = a.dtype.type(0)
        for lo in range(0, n, piece):   # (each thread's piece from zero, added in order)
            part = _whole_row(flat[lo:lo + piece])
            total = total + (_inner(flat[None, lo:lo + piece])[0] if part is None else part)
        return np.asarray(total).reshape(shape)
    if list(dims) != list(range(dims[0], dims[-1] + 1)):
        sizes, red = _runs(a.shape, dims)
        if red.count(True) > 1:
            return _apart(a.reshape(sizes), red).reshape(shape) if a.dtype.kind == "f" else \
                None
        d = red.index(True)             # (one run once the unit dims between are dropped)
        lead = math.prod(sizes[:d])
    else:
        lead = 1
        for d in range(dims[0]):
            lead *= a.shape[d]
    trail = a.size // (lead * n)
    if trail == 1:                                        # the trailing dims
        return _inner(a.reshape(lead, n)).reshape(shape)
    return _outer(a.reshape(lead, n, trail)).reshape(shape)   # leading or middle dims


def thread_piece(n):
    """The length of each thread's contiguous piece where ATen reduces a whole tensor of n
    elements in two passes (more than 32768 elements, several threads: one piece a thread,
    the pieces' results then combined in order), or None where one loop takes it all."""
    threads = _parallel.threads()
    if n <= _GRAIN or threads == 1:
        return None
    k = min(threads, -(-n // _GRAIN))
    return -(-n // k)


def _runs(shape, dims):
    """The runs of reduced and of kept dims of `shape` with its unit dims dropped (TensorIterator
    coalesces the dims of a run): (their sizes, whether each is reduced)."""
    sizes, red = [], []
    for d, n in enumerate(shape):
        if n == 1:
            continue
        r = d in dims
        if red and red[-1] == r:
            sizes[-1] *= n
        else:
            sizes.append(n)
            red.append(r)
    return sizes, red


def _apart(x, red):
    """The sum of x over its runs of reduced dims (`red`), two or more runs apart. PyTorch's
    TensorIterator puts a reduction's reduced dims first, innermost first, so its 2-d loop
    takes the innermost reduced run and the next one: it sums the rows of the first
    (contiguous: vectorized_inner_sum; strided: scalar_inner_sum, the plain row_sum) and adds
    each row's sum into the output in turn, over the second run and then the outer loops' other
    reduced runs: the rows' sums in the C order of the other reduced dims, one after the other,
    from zero. Returns the kept dims' elements, flat."""
    sizes = x.shape
    k = max(i for i, r in enumerate(red) if r)           # the innermost reduced run
    if k == len(sizes) - 1:
        rows = _inner(x.reshape(-1, sizes[k])).reshape(sizes[:k])
    else:
        rows = _row_sum(x, k)
    rest = [i for i in range(len(sizes)) if i != k]
    order = [j for j, i in enumerate(rest) if red[i]] + [j for j, i in enumerate(rest)
                                                         if not red[i]]
    n_red = math.prod(sizes[i] for i in rest if red[i])
    return _seq(np.transpose(rows, order).reshape(n_red, -1), 0)


def sequential(x, axis):
    """((0 + t0) + t1) + ... over `axis` of a host array x: a plain running sum in order (the
    window sums of PyTorch's adaptive average pooling)."""
    return _seq(x, axis)

