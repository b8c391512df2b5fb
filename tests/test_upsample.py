"""nn.functional.interpolate's linear, bilinear, trilinear and bicubic modes, with and without
antialias (ops/upsample.py, Note [upsample rounding]): PyTorch's values bit for bit, its node
names and errors; the gradients against PyTorch's and checked in float64 to the second order."""
import numpy as np
import pytest

import ndgrad
from ndgrad.autograd import gradcheck, gradgradcheck

F = ndgrad.nn.functional


def _torch():
    torch = pytest.importorskip("torch")
    if torch.backends.cpu.get_cpu_capability() != ndgrad.backends.cpu.get_cpu_capability():
        pytest.skip("PyTorch's kernels round by the CPU capability ndgrad reads from NumPy")
    return torch


# PyTorch picks its bilinear kernel by its thread count (one thread and 3 channels: the
# channels-last kernel), ndgrad by its own: both on two threads here (float16 through the
# channels-last kernel is within rounding: a few exact float16 ties of 10^4 round the other way)
pytestmark = pytest.mark.usefixtures("two_threads_both")


def _cases():
    out = []
    for mode, shapes in [("linear", [(2, 3, 10), (1, 4, 37)]),
                         ("bilinear", [(2, 3, 7, 9), (1, 12, 6, 7), (1, 20, 8, 8),
                                       (1, 3, 40, 40), (2, 17, 30, 50)]),
                         ("trilinear", [(1, 2, 4, 5, 6)]),
                         ("bicubic", [(2, 3, 7, 9), (1, 2, 30, 40)])]:
        for shape in shapes:
            sp = shape[2:]
            for kw in (dict(size=tuple(int(s * 2.3) + 1 for s in sp)),
                       dict(size=tuple(max(1, s // 3) for s in sp)),
                       dict(scale_factor=2.5), dict(scale_factor=0.7), dict(scale_factor=2.0),
                       dict(scale_factor=0.7, recompute_scale_factor=True)):
                for ac in (False, True):
                    out.append((mode, shape, dict(kw, align_corners=ac)))
                if mode in ("bilinear", "bicubic"):
                    out.append((mode, shape, dict(kw, antialias=True)))
    return out


CASES = _cases()


def _ids(case):
    mode, shape, kw = case
    return f"{mode}-{'x'.join(map(str, shape))}-" + "-".join(f"{k}={v}" for k, v in kw.items())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_values_are_pytorchs_bit_for_bit(case, dtype):
    torch = _torch()
    mode, shape, kw = case
    x = np.random.default_rng(len(CASES)).standard_normal(shape).astype(dtype)
    want = torch.nn.functional.interpolate(torch.from_numpy(x), mode=mode, **kw).numpy()
    got = F.interpolate(ndgrad.from_numpy(x), mode=mode, **kw).numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    assert (got == want).all(), f"{int((got != want).sum())} of {want.size} differ"


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("mode, shape, size", [
    ("linear", (2, 3, 10), (23,)), ("bilinear", (1, 3, 40, 40), (70, 80)),
    ("bicubic", (2, 3, 7, 9), (17, 22)), ("trilinear", (1, 2, 4, 5, 6), (9, 7, 13))])
def test_half_types_are_pytorchs(mode, shape, size, dtype):
    # (the kernels keep their weights in the input's dtype and compute in float32)
    torch = _torch()
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    want = torch.nn.functional.interpolate(torch.from_numpy(x).to(getattr(torch, dtype)),
                                           size=size, mode=mode).float().numpy()
    got = F.interpolate(ndgrad.from_numpy(x).to(getattr(ndgrad, dtype)), size=size,
                        mode=mode)
    assert got.dtype == getattr(ndgrad, dtype)
    assert (got.float().numpy() == want).all()


def test_one_thread_three_channels_takes_pytorchs_other_kernel():
    # PyTorch runs bilinear on 3 channels with one thread through its channels-last kernel
    torch = _torch()
    x = np.random.default_rng(4).standard_normal((2, 3, 40, 40)).astype(np.float32)
    t0, n0 = torch.get_num_threads(), ndgrad.get_num_threads()
    try:
        for n in (1, 2):
            torch.set_num_threads(n)
            ndgrad.set_num_threads(n)
            want = torch.nn.functional.interpolate(torch.from_numpy(x), size=(70, 80),
                                                   mode="bilinear").numpy()
            got = F.interpolate(ndgrad.from_numpy(x), size=(70, 80), mode="bilinear").numpy()
            assert (got == want).all(), n
    finally:
        torch.set_num_threads(t0)
        ndgrad.set_num_threads(n0)


GRAD_CASES = [
    ("linear", (2, 2, 5), dict(size=9)),
    ("linear", (1, 2, 7), dict(scale_factor=0.6, align_corners=True)),
    ("bilinear", (1, 2, 4, 5), dict(size=(7, 3))),
    ("bilinear", (1, 2, 4, 5), dict(size=(7, 8), align_corners=True)),
    ("bilinear", (1, 2, 9, 8), dict(size=(4, 3), antialias=True)),
    ("bicubic", (1, 2, 4, 5), dict(scale_factor=1.7)),
    ("bicubic", (1, 1, 9, 8), dict(size=(4, 5), antialias=True)),
    ("trilinear", (1, 1, 3, 4, 3), dict(size=(5, 3, 4))),
    ("nearest", (1, 2, 5), dict(size=9)),
    ("nearest", (1, 2, 4, 5), dict(size=(7, 3))),
    ("nearest-exact", (1, 2, 4, 5), dict(scale_factor=1.7)),
    ("nearest", (1, 1, 3, 4, 3), dict(size=(5, 3, 4))),
    ("nearest-exact", (1, 1, 3, 4, 3), dict(size=(2, 7, 5))),
]


@pytest.mark.parametrize("mode, shape, kw", GRAD_CASES)
def test_gradients_first_and_second_order(mode, shape, kw):
    x = ndgrad.tensor(np.random.default_rng(5).standard_normal(shape), requires_grad=True)

    def f(t):
        return F.interpolate(t, mode=mode, **kw)
    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))


@pytest.mark.parametrize("mode, shape, kw", GRAD_CASES)
def test_gradients_and_nodes_match_pytorch(mode, shape, kw):
    torch = _torch()
    rng = np.random.default_rng(6)
    x = rng.standard_normal(shape)
    tx = torch.from_numpy(x).requires_grad_()
    nx = ndgrad.from_numpy(x).requires_grad_()
    to = torch.nn.functional.interpolate(tx, mode=mode, **kw)
    no = F.interpolate(nx, mode=mode, **kw)
    assert type(no.grad_fn).__name__ == type(to.grad_fn).__name__
    g = rng.standard_normal(to.shape)
    to.backward(torch.from_numpy(g))
    no.backward(ndgrad.from_numpy(g))
    np.testing.assert_allclose(nx.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-13)


def test_empty_batch():
    x = ndgrad.zeros(0, 3, 4, 5, requires_grad=True)
    y = F.interpolate(x, size=(7, 2), mode="bilinear")
    assert y.shape == (0, 3, 7, 2)
    y.sum().backward()
    assert x.grad.shape == x.shape


def test_errors_are_pytorchs():
    torch = _torch()
    cases = [
        lambda L: L.nn.functional.interpolate(L.ones(1, 2, 5), size=4, mode="bilinear"),
        lambda L: L.nn.functional.interpolate(L.ones(1, 2, 5, 5), size=4, mode="trilinear"),
        lambda L: L.nn.functional.interpolate(L.ones(1, 2, 5), size=4, mode="linear",
                                              antialias=True),
        lambda L: L.nn.functional.interpolate(L.ones(1, 2, 5, 5), size=4, mode="nearest",
                                              antialias=True),
        lambda L: L.nn.functional.interpolate(L.ones(1, 2, 5, 5).half(), size=4,
                                              mode="bilinear", antialias=True),
    ]
    for make in cases:
        with pytest.raises(Exception) as want:
            make(torch)
        with pytest.raises(want.type) as got:
            make(ndgrad)
        assert str(got.value) == str(want.value)


def test_aten_entry_points_both_overloads():
    torch = _torch()
    x = np.random.default_rng(7).standard_normal((1, 2, 5, 6)).astype(np.float32)
    calls = [
        ("upsample_bilinear2d", (None, False, [2.0, 1.5]), {}),
        ("upsample_bilinear2d", ([7, 8], True), {}),
        ("upsample_bilinear2d", ([7, 8], False, 1.3, 1.4), {}),
        ("upsample_bicubic2d", ([9, 4], False), dict(scales_h=1.9)),
        ("_upsample_bilinear2d_aa", ([3, 3], False), {}),
        ("_upsample_bicubic2d_aa", (None, False), dict(scale_factors=[0.5, 0.7])),
    ]
    for name, args, kw in calls:
        want = getattr(torch._C._nn, name)(torch.from_numpy(x), *args, **kw).numpy()
        for ns in (ndgrad._C._nn, ndgrad.ops.aten):
            got = getattr(ns, name)(ndgrad.from_numpy(x), *args, **kw).numpy()
            assert (got == want).all(), (name, args, kw)
    y = np.random.default_rng(8).standard_normal((1, 2, 6)).astype(np.float32)
    want = torch._C._nn.upsample_linear1d(torch.from_numpy(y), [11], False).numpy()
    assert (ndgrad._C._nn.upsample_linear1d(ndgrad.from_numpy(y), [11], False).numpy()
            == want).all()
    assert not hasattr(ndgrad, "upsample_bilinear2d")    # (no torch-level name, as PyTorch)


ROUTE_CASES = [("bilinear", (1, 20, 8, 8), dict(size=(19, 19))),       # channels-last kernel
               ("bilinear", (1, 12, 6, 7), dict(scale_factor=1.7)),     # ... pixel by pixel
               ("bilinear", (2, 3, 40, 30), dict(size=(70, 80))),       # generic
               ("bicubic", (1, 2, 9, 8), dict(scale_factor=2.0)),
               ("bilinear", (1, 2, 30, 40), dict(scale_factor=0.3, antialias=True)),
               ("trilinear", (1, 2, 4, 5, 6), dict(size=(9, 7, 13)))]


@pytest.mark.parametrize("mode, shape, kw", ROUTE_CASES)
def test_without_blas_the_same_bits(mode, shape, kw, monkeypatch):
    # the fused steps through the exact float64 emulation instead of BLAS's axpy
    from ndgrad.ops import _blas
    x = ndgrad.from_numpy(np.random.default_rng(9).standard_normal(shape).astype(np.float32))
    want = F.interpolate(x, mode=mode, **kw).numpy()
    monkeypatch.setattr(_blas, "_ROUTES", {"f": None, "d": None})
    assert (F.interpolate(x, mode=mode, **kw).numpy() == want).all()


@pytest.mark.parametrize("mode, shape, kw", ROUTE_CASES)
def test_cpu_without_fma_rounds_each_step(mode, shape, kw, monkeypatch):
    # PyTorch's DEFAULT build (no FMA): every product and sum rounded (the source indices
    # too, which moves a weight by an ulp where an index lands next to an integer)
    from ndgrad.ops import upsample as U, _upsample_tables as T
    x = ndgrad.from_numpy(np.random.default_rng(10).standard_normal(shape).astype(np.float32))
    fused = F.interpolate(x, mode=mode, **kw).numpy()
    monkeypatch.setattr(T, "fuses", lambda: False)
    monkeypatch.setattr(U, "fuses", lambda: False)
    plain = F.interpolate(x, mode=mode, **kw).numpy()
    np.testing.assert_allclose(plain, fused, rtol=1e-4, atol=1e-5)
    assert (plain != fused).any()


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nearest_picks_pytorchs_pixels(mode, dtype):
    # the source index in float32 (or the compute type) through floorf, as PyTorch's kernels:
    # computed in double, about 1 in 60 1-d cases tried picked another pixel (2 -> 82, 26 -> 22)
    torch = _torch()
    F_ = torch.nn.functional
    for n_in in range(1, 40, 3):
        for n_out in range(1, 90, 3):
            x = np.arange(n_in, dtype=dtype).reshape(1, 1, n_in)
            want = F_.interpolate(torch.from_numpy(x), size=n_out, mode=mode).numpy()
            got = F.interpolate(ndgrad.from_numpy(x), size=n_out, mode=mode).numpy()
            assert (got == want).all(), (n_in, n_out)
    rng = np.random.default_rng(12)
    for shape, kw in [((1, 2, 2, 3), dict(size=(82, 5))), ((1, 2, 13, 5), dict(size=(65, 64))),
                      ((1, 5, 40, 50), dict(size=(100, 90))), ((1, 2, 7, 9), dict(scale_factor=1.7)),
                      ((1, 2, 4, 100), dict(scale_factor=0.3)), ((1, 2, 3, 4, 5), dict(size=(2, 8, 82)))]:
        x = rng.standard_normal(shape).astype(dtype)
        want = F_.interpolate(torch.from_numpy(x), mode=mode, **kw).numpy()
        got = F.interpolate(ndgrad.from_numpy(x), mode=mode, **kw).numpy()
        assert (got == want).all(), (shape, kw)


def test_empty_sizes_are_refused_as_pytorch():
    torch = _torch()
    for shape, kw in [((1, 2, 3), dict(size=0, mode="linear")),
                      ((1, 2, 3, 4), dict(size=(0, 2), mode="bilinear")),
                      ((1, 2, 3, 4, 5), dict(size=(2, 0, 3), mode="nearest")),
                      ((1, 2, 0, 4), dict(size=(2, 3), mode="nearest")),
                      ((1, 2, 3, 100), dict(scale_factor=0.3, mode="bicubic")),
                      ((1, 2, 3, 4), dict(size=(0, 2), mode="bilinear", antialias=True))]:
        with pytest.raises(RuntimeError) as want:
            torch.nn.functional.interpolate(torch.ones(shape), **kw)
        with pytest.raises(RuntimeError) as got:
            F.interpolate(ndgrad.ones(shape), **kw)
        assert str(got.value) == str(want.value)
