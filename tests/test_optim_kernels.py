"""The optimizers' array kernels round as PyTorch's CPU kernels: bit for bit against PyTorch on
random, near-tie, subnormal, zero, infinite and overflowing operands (optim/_kernels.py, Note
[fused multiply-add without fma])."""
import numpy as np
import pytest

from ndgrad.ops import _blas, _fma as K


@pytest.fixture(autouse=True, params=["blas", "emulated"])
def fma_route(request, monkeypatch):
    """Each test on both routes of a scalar fused multiply-add: BLAS's axpy where this machine's
    passes its check (Note [fused axpy]), and the exact emulation (ops/_fma.py)."""
    if request.param == "emulated":
        monkeypatch.setattr(_blas, "_ROUTES", {"f": None, "d": None})
    elif _blas.axpy(np.dtype("float32")) is None:
        pytest.skip("this NumPy's BLAS has no axpy shown to round once")
    return request.param


def _torch():
    torch = pytest.importorskip("torch")
    if torch.backends.cpu.get_cpu_capability() not in ("AVX2", "AVX512"):
        pytest.skip("PyTorch's kernels use fused multiply-adds on AVX2/AVX512 CPUs only")
    return torch


def _same(x, y):
    """Bitwise equality up to NaN payloads; the sign of zero counts."""
    x, y = np.asarray(x), np.asarray(y)
    nan = np.isnan(x) & np.isnan(y)
    return nan | ((x == y) & (np.signbit(x) == np.signbit(y)))


def _cases(dt, seed):
    rng = np.random.default_rng(seed)
    fi = np.finfo(dt)
    n = 20000
    out = []
    for _ in range(3):   # every ratio of addend to product, both signs
        c = rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 3, n)
        b = rng.standard_normal(n) * 10.0 ** rng.uniform(-8, 2, n)
        out.append((rng.standard_normal(n), b, c))
    # products within a few units of half an ulp of the addend: the ties the brackets catch
    c = rng.standard_normal(n).astype(dt)
    k = rng.integers(-3, 4, n)
    a = np.spacing(c) / 2 * 2.0 ** rng.integers(-3, 4, n)
    b = 2.0 ** -rng.integers(-3, 4, n).astype(float) * (1 + k * 2.0 ** -(fi.nmant + 1))
    out.append((a, b, c))
    # zeros of either sign, products and addends near and below the normal range (float32
    # only: float64 below 2^-960 is the kernel's one documented approximation)
    m = 3000
    root = float(fi.tiny) ** 0.5
    a = rng.standard_normal(m) * root * 2.0 ** rng.integers(-10, 10, m)
    b = rng.standard_normal(m) * root * 2.0 ** rng.integers(-10, 10, m)
    b[:300] = 0
    a[300:450] = 0
    c = rng.standard_normal(m) * float(fi.tiny) * 2.0 ** rng.integers(-20, 30, m)
    c[:500] = 0
    c[500:1000] = -0.0
    if dt == np.float64:
        c[1000:] = 0
    out.append((a, b, c))
    out.append(tuple(np.tile(x, 6) for x in (a, b, c)))   # (the same through the work arrays)
    if dt == np.float32:
        # float64 sums that round onto a tie of float32's subnormal grid: (2k + 1) 2^-150 from
        # a product 2^-150 (1 - 2^-46) just below it; rounded twice, ties-to-even goes up
        k = rng.integers(1, 1 << 12, n) * 2 + 1
        sign = rng.choice([-1.0, 1.0], n)
        out.append((np.full(n, 2.0 ** -75 * (1 + 2.0 ** -23)) * sign,
                    np.full(n, 2.0 ** -75 * (1 - 2.0 ** -23)), k * 2.0 ** -149 * sign))
    # overflowing products whose sum is finite, infinities, nans
    big = float(fi.max)
    out.append((np.array([2, 2, 1.5, np.inf, 1, 1, 1, np.nan, 1e30, 3]),
                np.array([big, -big, big, 1, np.inf, 2, 3, 1, 1e30, big * 0.5]),
                np.array([-big, big, -big, 1, np.inf, -np.inf, np.nan, 1, 0, -big * 0.9])))
    return [tuple(np.asarray(x, dtype=dt) for x in case) for case in out]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", [0, 1])
def test_fma_rounds_once_as_torchs_kernels(dtype, seed):
    torch = _torch()
    dt = np.dtype(dtype)
    with np.errstate(all="ignore"):
        for a, b, c in _cases(dt, seed):
            ref = torch.from_numpy(c.copy()).addcmul(torch.from_numpy(a), torch.from_numpy(b))
            ref = ref.numpy()
            got = K.fma(a, b, c)
            assert got.dtype == dt
            inplace = c.copy()
            assert K.fma(a, b, inplace, out=inplace) is inplace
            for r in (got, inplace):
                bad = ~_same(r, ref)
                assert not bad.any(), (a[bad][:4], b[bad][:4], c[bad][:4], r[bad][:4],
                                       ref[bad][:4])
            for alpha in (-0.01, 0.37, -1e-3, 3.1e-5, 1e-30, -7.0, 0.0):
                ref = torch.from_numpy(c.copy()).add(torch.from_numpy(b), alpha=alpha).numpy()
                got = c.copy()
                K.add_(got, b, alpha)
                assert _same(got, ref).all(), alpha


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_optimizer_ops_match_torch_bitwise(dtype):
    torch = _torch()
    rng = np.random.default_rng(5)
    n = 50000
    t = lambda x: torch.from_numpy(x.copy())    # noqa: E731
    a, b, c = (rng.standard_normal(n).astype(dtype) for _ in range(3))
    b *= 1e-3
    w = rng.random(n).astype(dtype) * 1.2 - 0.1
    pos = np.abs(b) + 1
    checks = [
        (K.add(c, b, 0.0123), t(c).add(t(b), alpha=0.0123)),
        (K.addcmul(c, a, b, 0.37), t(c).addcmul(t(a), t(b), value=0.37)),
        (K.addcmul(c, a, b), t(c).addcmul(t(a), t(b))),
        (K.addcdiv(c, a, pos, 0.37), t(c).addcdiv(t(a), t(pos), value=0.37)),
        (K.lerp(c, a, 0.1), t(c).lerp(t(a), 0.1)),
        (K.lerp(c, a, 0.7), t(c).lerp(t(a), 0.7)),
        (K.lerp(c, a, w), t(c).lerp(t(a), t(w))),
    ]
    for i, (ours, ref) in enumerate(checks):
        assert ours.dtype == np.dtype(dtype)
        assert _same(ours, ref.numpy()).all(), i
    for fn, ref in [(K.add_, t(c).add_(t(b), alpha=-0.5)), (K.addcmul_, None), (K.lerp_, None)]:
        if ref is None:
            continue
        x = c.copy()
        fn(x, b, -0.5)
        assert _same(x, ref.numpy()).all()
    x = c.copy()
    K.addcmul_(x, a, b, 0.25)
    assert _same(x, t(c).addcmul_(t(a), t(b), value=0.25).numpy()).all()
    x = c.copy()
    K.lerp_(x, a, 0.9)
    assert _same(x, t(c).lerp_(t(a), 0.9).numpy()).all()


def test_fma_keeps_broadcasting_and_zero_dim_shapes():
    a = np.float32(0.3)
    b = np.arange(6, dtype=np.float32).reshape(2, 3)
    c = np.ones(3, dtype=np.float32)
    assert K.fma(a, b, c).shape == (2, 3)
    z = np.array(2.0, dtype=np.float32)
    assert K.fma(np.float32(0.5), z, z).shape == ()
    assert float(K.fma(np.float32(0.5), z, z)) == 3.0
    i = np.arange(4)
    assert (K.fma(3, i, i) == 4 * i).all() and K.fma(3, i, i).dtype == i.dtype


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_tensor_ops_fuse_as_torchs(dtype):
    # add/sub with alpha, addcmul and lerp (and their in-place forms, rsub with a number) round
    # once, as PyTorch's kernels: the same bits, not only close values
    torch = _torch()
    import ndgrad
    rng = np.random.default_rng(7)
    a, b, c = (rng.standard_normal(20000).astype(dtype) for _ in range(3))
    b *= 1e-3
    w = np.abs(b) * 500
    cases = [
        lambda L, A, B, C: C.add(B, alpha=0.0123),
        lambda L, A, B, C: C.sub(B, alpha=0.0123),
        lambda L, A, B, C: C.clone().add_(B, alpha=-0.5),
        lambda L, A, B, C: C.addcmul(A, B, value=0.37),
        lambda L, A, B, C: C.clone().addcmul_(A, B, value=2.5),
        lambda L, A, B, C: C.lerp(A, 0.1),
        lambda L, A, B, C: C.clone().lerp_(A, 0.7),
        lambda L, A, B, C: C.lerp(A, L.tensor(w)),
        lambda L, A, B, C: L.rsub(C, 3.0, alpha=0.7),
        lambda L, A, B, C: L.add(C, 3.1, alpha=0.7),
    ]
    for i, f in enumerate(cases):
        ours, ref = (f(L, L.tensor(a), L.tensor(b), L.tensor(c)).numpy() for L in (ndgrad, torch))
        assert ours.dtype == ref.dtype and _same(ours, ref).all(), i


@pytest.mark.parametrize("seed", [0, 1])
def test_fma_float32_work_arrays_in_place(seed):
    """The float32 route through the work arrays (arrays of 2^16 elements and more): every
    case of _cases tiled past that size, in place (the result overwrites the addend the tie
    fix-up reads) and into another array, and cases of zeros and results below float32's
    normal range."""
    torch = _torch()
    with np.errstate(all="ignore"):
        cases = _cases(np.dtype("float32"), seed)
        tiny = np.float32(2.0 ** -130)
        cases.append((np.full(8, tiny), np.full(8, np.float32(0.5)),
                      np.array([0, 0, -tiny, tiny, 0, -0.0, 2 ** -149, 0], np.float32)))
        cases.append((np.zeros(8, np.float32), np.ones(8, np.float32),
                      np.zeros(8, np.float32)))
        for a, b, c in cases:
            reps = -(-70000 // a.size)
            a, b, c = (np.tile(x, reps) for x in (a, b, c))
            ref = torch.from_numpy(c.copy()).addcmul(torch.from_numpy(a),
                                                     torch.from_numpy(b)).numpy()
            inplace = c.copy()
            assert K.fma(a, b, inplace, out=inplace) is inplace
            other = np.empty_like(c)
            K.fma(a, b, c, out=other)
            for r in (inplace, other):
                bad = ~_same(r, ref)
                assert not bad.any(), (a[bad][:4], b[bad][:4], c[bad][:4], r[bad][:4])


@pytest.mark.parametrize("share", [0.5, 1e-4, 0.0])
def test_fma_float32_ties_few_and_many(share):
    """Where the float64 sum rounds onto a float32 tie, as most elements (the whole work array
    is rounded to odd) and as a few (only those elements are gathered and fixed), in arrays
    large enough for the chunked work arrays, with c broadcast too, beside zero sums: the
    results are PyTorch's fused ones. The ties: (2^8 + 2^-15) * -(2^8 - 2^-15) + (2^40 + 2^17) is
    2^40 + 2^16 + 2^-30 exactly, which float64 rounds to 2^40 + 2^16, halfway between two
    floats (rounding that to even gives 2^40; the exact sum rounds to 2^40 + 2^17)."""
    torch = _torch()
    rng = np.random.default_rng(7)
    n = 300_000
    tie = rng.random(n) < share
    sign = rng.choice([1.0, -1.0], n)
    scale = 2.0 ** rng.integers(-60, 60, n)
    a = np.where(tie, sign * (2.0 ** 8 + 2.0 ** -15) * scale, rng.standard_normal(n)
                 ).astype(np.float32)
    b = np.where(tie, -(2.0 ** 8 - 2.0 ** -15), rng.standard_normal(n)).astype(np.float32)
    c = np.where(tie, sign * (2.0 ** 40 + 2.0 ** 17) * scale, rng.standard_normal(n)
                 ).astype(np.float32)
    assert share == 0 or tie.sum() > 10
    zero = ~tie & (rng.random(n) < 0.01)    # exact zeros beside the ties (a zero is no tiny)
    a[zero], c[zero] = 0, 0
    for aa, bb, cc in ((a, b, c), (a.reshape(3, -1), b.reshape(3, -1), c[: n // 3][None])):
        ref = torch.from_numpy(np.ascontiguousarray(cc)).addcmul(
            torch.from_numpy(aa), torch.from_numpy(bb)).numpy()
        got = K.fma(aa, bb, cc)
        assert got.shape == ref.shape and (got.view(np.int32) == ref.view(np.int32)).all()


@pytest.mark.parametrize("kw", [
    {}, {"amsgrad": True}, {"weight_decay": 0.1, "maximize": True},
    {"weight_decay": 0.1, "decoupled_weight_decay": True}], ids=["plain", "amsgrad",
                                                                  "decay-maximize", "decoupled"])
def test_small_parameters_as_one_array(monkeypatch, kw):
    """Note [Small parameters as one array] (optim/_kernels.py): small parameters of one dtype
    and step count updated as one concatenation give the bits of the one-by-one updates, for
    every shape (0-d, empty, matrices), both float dtypes, a parameter that joins later (another
    step count: its own group) and one without a gradient on some steps."""
    import ndgrad
    from ndgrad.optim import _kernels
    r = np.random.default_rng(5)
    shapes = [(), (0,), (7,), (3, 4), (128,), (5, 1, 2), (300,), (9,)]
    dts = [np.float32] * 5 + [np.float64] * 3
    p0 = [r.standard_normal(s).astype(d) for s, d in zip(shapes, dts)]
    gs = [[(r.standard_normal(s) * 10.0 ** r.integers(-8, 1)).astype(d)
           for s, d in zip(shapes, dts)] for _ in range(4)]
    calls = []
    real = _kernels.Concat

    def run(small):
        monkeypatch.setattr(_kernels, "SMALL", small)
        ps = [ndgrad.tensor(p, requires_grad=True) for p in p0]
        opt = ndgrad.optim.Adam(ps[:-2], lr=1e-2, **kw)
        for k, g in enumerate(gs):
            if k == 1:
                opt.add_param_group({"params": ps[-2:]})
            for j, (p, gj) in enumerate(zip(ps, g)):
                p.grad = None if (j == 3 and k == 2) else ndgrad.tensor(gj)
            opt.step()
        state = [t for p in ps for t in opt.state[p].values()]
        return [t.detach().numpy().tobytes() for t in ps + state]
    import sys
    monkeypatch.setattr(sys.modules["ndgrad.optim.adam"], "Concat",
                        lambda *a: calls.append(a[0]) or real(*a))
    small = _kernels.SMALL
    one_by_one = run(0)
    assert not calls
    assert run(small) == one_by_one
    assert max(len(idx) for idx in calls) >= 4    # (the groups did form)


def test_one_stack_walk_a_step_and_each_parameter_names_the_steps_line(monkeypatch):
    # _kernels.STEP_SITE: the user's line of step() is found once, not once a parameter, and
    # every parameter's version remembers that line (autograd's error about saved tensors
    # modified in place names it)
    import sys
    import ndgrad
    from ndgrad.autograd import graph
    ws = [ndgrad.nn.Parameter(ndgrad.ones(3)) for _ in range(4)]
    losses = [(w * w).sum() for w in ws]
    for opt in (ndgrad.optim.SGD(ws, lr=0.1), ndgrad.optim.Adam(ws, lr=0.1)):
        for w in ws:
            w.grad = ndgrad.ones(3)
        walks = []
        real = graph.user_site
        monkeypatch.setattr(graph, "user_site", lambda *a: walks.append(1) or real(*a))
        line = sys._getframe().f_lineno + 1
        opt.step()
        monkeypatch.setattr(graph, "user_site", real)
        assert len(walks) == 1
        for w in ws:
            version, site = w._vc[-1]
            assert version == w._version and graph.site_line(site) == line
    with pytest.raises(RuntimeError, match=f"modified by an in-place operation at .*line {line}"):
        losses[2].backward()
