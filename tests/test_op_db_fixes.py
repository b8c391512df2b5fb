"""Focused tests against PyTorch for the disagreements PyTorch's OpInfo database found
(tests/test_pytorch_op_db.py runs the database itself): each one named, with the inputs that
showed it and its neighbours."""
import itertools

import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")


def _run(lib, fn, *args, **kwargs):
    """fn(lib) or the exception it raised (type name and message)."""
    try:
        return fn(lib, *args, **kwargs)
    except Exception as e:     # noqa: BLE001 - the exception is the result compared
        return (type(e).__name__, str(e))


def _same(ours, theirs, exact=True, rtol=1e-7, atol=0.0):
    if isinstance(theirs, tuple):
        assert ours == theirs
        return
    assert not isinstance(ours, tuple), ours
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    a, b = ours.detach().numpy(), theirs.detach().numpy()
    if exact:
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


# ------------------------------------------------------------------ linspace, logspace, arange

_ENDS = (0, 1, -3, 2.5, -2.7, 3.9, 0.1, 10, -0.5, 100.3)
_DTYPES = (None, "float32", "float64", "int64", "int32", "int16", "uint8", "complex64",
           "complex128")


def _dt(lib, name):
    return {} if name is None else {"dtype": getattr(lib, name)}


@pytest.mark.parametrize("dtype", _DTYPES)
def test_linspace_as_pytorch(dtype):
    """One step is start (was end); integer results truncate start and end first and step in
    double with the kernel's fused multiply-add; PyTorch's overflow errors."""
    for s, e, n in itertools.product(_ENDS, _ENDS[:6], (0, 1, 2, 3, 5, 10, 50)):
        _same(_run(ndgrad, lambda L: L.linspace(s, e, n, **_dt(L, dtype))),
              _run(torch, lambda L: L.linspace(s, e, n, **_dt(L, dtype))))


@pytest.mark.parametrize("dtype", _DTYPES)
def test_logspace_as_pytorch(dtype):
    """logspace(0, 1.2, 2, dtype=int64) is [1, 10] (was [1, 15]): the exponents come from the
    truncated ends. Float results agree to the last bit but for NumPy's pow (1 ulp)."""
    exact = dtype not in (None, "float32", "float64")
    for s, e, n, base in itertools.product(_ENDS, _ENDS[:6], (1, 2, 3, 10), (10.0, 2.0, 0.5)):
        _same(_run(ndgrad, lambda L: L.logspace(s, e, n, base, **_dt(L, dtype))),
              _run(torch, lambda L: L.logspace(s, e, n, base, **_dt(L, dtype))),
              exact=exact, rtol=1e-15 if dtype == "float64" else 1e-7)


@pytest.mark.parametrize("dtype", (None, "float32", "float64", "int64", "int32", "int16",
                                   "uint8"))
def test_arange_as_pytorch(dtype):
    """arange(3.1, dtype=int64) has 3 elements (was 4): an int64 result truncates its
    arguments and counts in integers; other integer results count in double and step by the
    truncated step; PyTorch's errors (a step truncated to 0 is a ValueError)."""
    exact = dtype not in (None, "float32", "float64")
    for s, e, st in itertools.product(_ENDS[:8], _ENDS, (1, 2, -1, 0.5, -0.7, 1.5, 0.3, 0)):
        _same(_run(ndgrad, lambda L: L.arange(s, e, st, **_dt(L, dtype))),
              _run(torch, lambda L: L.arange(s, e, st, **_dt(L, dtype))),
              exact=exact, rtol=1e-6 if dtype in (None, "float32") else 1e-15,
              atol=1e-6 if dtype in (None, "float32") else 1e-15)


@pytest.mark.parametrize("call", [
    lambda L: L.linspace(-0.5, 0.5, 1),
    lambda L: L.logspace(0, 1.2, 2, dtype=L.int64),
    lambda L: L.arange(3.1, dtype=L.int64),
    lambda L: L.arange(0.0, -8.000001, -4.0, dtype=L.int64),
    lambda L: L.linspace(L.tensor(-2.0), L.tensor(-3.0), 1),
    lambda L: L.linspace(0, 3, 1.0),
    lambda L: L.logspace(0, 3, 1.0),
    lambda L: L.linspace(L.ones(2), L.ones(2), 1),
    lambda L: L.logspace(L.ones(2), 1, 3),
    lambda L: L.linspace(0, 1, -1),
    lambda L: L.logspace(0, 1, -1),
    lambda L: L.linspace(0, 1, 3, dtype=L.bool),
    lambda L: L.arange(0, float("inf")),
    lambda L: L.arange(0, 64, 0.5, dtype=L.int64),
    lambda L: L.arange(0, 10, 0),
    lambda L: L.linspace(10, -2.7, 10, dtype=L.int64),
])
def test_space_named_cases(call):
    _same(_run(ndgrad, call), _run(torch, call))


# ------------------------------------------------------------------ values and gradients

def _grads(fn, arrays, seed=0, rtol=1e-7, atol=1e-9, grad_of=None):
    """fn(L, *tensors) in both libraries: the values and the gradients of every float input
    (those in grad_of, when given) for one random cotangent agree."""
    results = []
    for L in (ndgrad, torch):
        ts = [L.tensor(a, requires_grad=a.dtype.kind in "fc" and (grad_of is None or i in grad_of))
              for i, a in enumerate(arrays)]
        out = fn(L, *ts)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        rng = np.random.default_rng(seed)
        cots = [L.tensor(rng.standard_normal(tuple(o.shape)).astype(o.detach().resolve_conj().numpy().dtype))
                for o in outs]
        need = [t for t in ts if t.requires_grad]
        live = [(o, c) for o, c in zip(outs, cots) if o.requires_grad]
        gs = L.autograd.grad([o for o, _ in live], need, [c for _, c in live],
                             allow_unused=True) if need and live else [None] * len(need)
        results.append(([o.detach().resolve_conj().numpy() for o in outs],
                        [None if g is None else g.resolve_conj().numpy() for g in gs],
                        [(str(o.dtype), o.requires_grad) for o in outs]))
    (o1, g1, d1), (o2, g2, d2) = results
    assert d1 == d2
    for a, b in zip(o1, o2):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    assert len(g1) == len(g2)
    for a, b in zip(g1, g2):
        a = np.zeros_like(b) if a is None and b is not None else a
        b = np.zeros_like(a) if b is None and a is not None else b
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


_R = np.random.default_rng(31)


def test_gaussian_nll_loss_var_per_row():
    """A var of shape (N,) for an (N, D) input is one variance per row (was per column); var is
    clamped to eps without autograd (its gradient passes the clamp, as PyTorch's)."""
    F = "nn.functional.gaussian_nll_loss"
    for red in ("none", "mean", "sum"):
        _grads(lambda L, i, t, v: L.nn.functional.gaussian_nll_loss(i, t, v, reduction=red),
               [_R.standard_normal((3, 2)), _R.standard_normal((3, 2)), np.array([1., 4., 1e-9])])
        _grads(lambda L, i, t, v: L.nn.functional.gaussian_nll_loss(i, t, v, reduction=red,
                                                                    full=True),
               [_R.standard_normal((3, 2)), _R.standard_normal((3, 2)),
                _R.uniform(0.5, 2, (3, 1))])
    _same(_run(ndgrad, lambda L: L.nn.functional.gaussian_nll_loss(
        L.zeros(2, 2), L.zeros(2, 2), L.tensor([1., 4.]), reduction="none")),
        _run(torch, lambda L: L.nn.functional.gaussian_nll_loss(
            L.zeros(2, 2), L.zeros(2, 2), L.tensor([1., 4.]), reduction="none")), exact=False)
    for bad in (lambda L: L.nn.functional.gaussian_nll_loss(L.zeros(2, 3), L.zeros(2, 3),
                                                            L.ones(2, 2)),
                lambda L: L.nn.functional.gaussian_nll_loss(L.zeros(2), L.zeros(2),
                                                            -L.ones(2)),
                lambda L: L.nn.functional.gaussian_nll_loss(L.zeros(2), L.zeros(2), L.ones(2),
                                                            reduction="abc")):
        assert _run(ndgrad, bad) == _run(torch, bad), F


def test_cosine_similarity_broadcasts_first():
    """Two inputs broadcasting along dim: each is normalised after the broadcast (values above
    1 before)."""
    _grads(lambda L, a, b: L.nn.functional.cosine_similarity(a, b, dim=-2),
           [_R.standard_normal((1, 2, 3)), _R.standard_normal((2, 1, 3))])
    _grads(lambda L, a, b: L.nn.functional.cosine_similarity(a, b, dim=0),
           [_R.standard_normal((1, 4)), _R.standard_normal((3, 4))])
    _grads(lambda L, a, b: L.nn.functional.cosine_similarity(a, b, dim=1, eps=10.0),
           [_R.standard_normal((3, 4)), _R.standard_normal((3, 4))])


def test_pad_circular_negative():
    """Negative circular pads crop first; positive ones wrap around what is left."""
    x = _R.standard_normal((1, 3, 4, 4))
    for pads in ((-1, 1, -2, 1), (2, -1, 0, 0), (-2, -1, 1, 3), (0, 0, -2, 2), (2, -2, 0, 0)):
        _grads(lambda L, a: L.nn.functional.pad(a, pads, mode="circular"), [x])
    # A pad wider than what the crop leaves: PyTorch copies from rows it has not written yet
    # (uninitialized memory); ndgrad keeps wrapping around the cropped rows.
    y = ndgrad.nn.functional.pad(ndgrad.tensor(x), (0, 0, -3, 2), mode="circular").numpy()
    np.testing.assert_array_equal(y, x[:, :, [3, 3, 3], :])
    _grads(lambda L, a: L.nn.functional.pad(a, (1, 2), mode="reflect"), [np.zeros((0, 3, 3))])
    for bad in ((5, 0, 0, 0), (-3, -2, 0, 0), (1, 1)):
        call = lambda L, p=bad: L.nn.functional.pad(L.ones(1, 3, 4, 4), p, mode="circular")  # noqa: E731
        assert _run(ndgrad, call) == _run(torch, call)


def test_pinv_hermitian_and_complex():
    """hermitian=True reads the lower triangle (was ignored); complex inputs take conjugate
    transposes (V diag(1/s) U^H), gradients too."""
    a = _R.standard_normal((4, 4))
    _grads(lambda L, m: L.linalg.pinv(m, hermitian=True), [a + a.T])
    _grads(lambda L, m: L.linalg.pinv(m, hermitian=True), [a])      # upper triangle unread
    c = _R.standard_normal((3, 5)) + 1j * _R.standard_normal((3, 5))
    _grads(lambda L, m: L.linalg.pinv(m), [c])
    _grads(lambda L, m: L.linalg.pinv(m), [c.T.copy()])
    _grads(lambda L, m: L.linalg.pinv(m, rtol=0.3), [_R.standard_normal((2, 3, 4))])


def test_diff_n0_and_checks():
    """n=0 returns a copy of the input (prepend and append ignored, as PyTorch's)."""
    x, p = _R.standard_normal((5, 5)), _R.standard_normal((1, 5))
    _grads(lambda L, a, b: L.diff(a, n=0, dim=0, prepend=b), [x, p])
    _grads(lambda L, a, b: L.diff(a, n=2, dim=0, append=b), [x, p])
    for bad in (lambda L: L.diff(L.ones(1, 3), -1), lambda L: L.diff(L.ones(2, 3), prepend=L.ones(3)),
                lambda L: L.diff(L.ones(2, 3), 1, 1, L.ones(3, 3))):
        assert _run(ndgrad, bad) == _run(torch, bad)


def test_index_fill_repeated_index_gradient():
    """A repeated index fills one position: the value's gradient counts it once (was twice)."""
    _grads(lambda L, x, v: x.index_fill(1, L.tensor([0, 2, 0, 2, 2]), v),
           [_R.standard_normal((3, 4)), np.array(2.0)])


def test_logcumsumexp_large_inputs():
    """The gradient at inputs past ~700 is finite (was nan): PyTorch's backward in log space;
    forward mode and complex inputs (ATen's branch of the complex logarithm) too."""
    x = np.array([1000., 1001, 999, -5, 2000, 1998])
    _grads(lambda L, a: L.logcumsumexp(a, 0), [x])
    _grads(lambda L, a: L.logcumsumexp(a, 1), [_R.uniform(-800, 800, (3, 7))])
    z = _R.uniform(-9, 9, (4, 6)) + 1j * _R.uniform(-9, 9, (4, 6))
    for d in (0, 1):
        _grads(lambda L, a: L.logcumsumexp(a, d), [z])
    _grads(lambda L, a: L.logsumexp(a, 1), [z])
    _grads(lambda L, a, b: L.logaddexp(a, b), [z, z[::-1].copy()])
    import ndgrad.autograd.forward_ad as nfw
    import torch.autograd.forward_ad as tfw
    t = _R.standard_normal((3, 7))
    x = _R.uniform(-3, 3, (3, 7))
    outs = []
    for L, fw in ((ndgrad, nfw), (torch, tfw)):
        with fw.dual_level():
            y = L.logcumsumexp(fw.make_dual(L.tensor(x), L.tensor(t)), 1)
            outs.append(fw.unpack_dual(y).tangent.numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin", "sum"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_zeros_and_0d(reduce, include_self):
    """prod: zeros in self and lone zeros in src get the product of the others (was 0 / nan);
    0-d operands (index_reduce's too) get their gradients (the backward raised or gave none)."""
    s = np.array([2., 0, 3, 0, 1.5])
    src = np.array([3., 0, 5, 0, 0, 7, 2, -1])
    idx = [0, 0, 1, 2, 3, 3, 4, 4]
    if not include_self and reduce in ("amax", "amin"):
        s[3] = 9.0      # (see test_scatter_reduce_excluded_self_tie)
    _grads(lambda L, a, b: a.scatter_reduce(0, L.tensor(idx), b, reduce,
                                            include_self=include_self), [s, src])
    _grads(lambda L, a, b: a.scatter_reduce(0, L.tensor(0), b, reduce, include_self=include_self),
           [np.array(2.0), np.array(3.0)])
    if reduce != "sum":
        _grads(lambda L, a, b: a.index_reduce(0, L.tensor([0, 2, 0]), b, reduce,
                                              include_self=include_self),
               [np.array([[2., 0], [1, 3], [0, 4]]) + (9 if s[3] == 9 else 0),
                np.array([[0., 5], [2, 0], [3, 0]])])


def test_rsub_other_gradient_and_nodes():
    """rsub(a, b) gives b its gradient (it was lost); RsubBackward0 for a tensor other,
    RsubBackward1 for a number, as PyTorch's."""
    _grads(lambda L, a, b: L.rsub(a, b, alpha=2), [_R.standard_normal(3), _R.standard_normal(3)])
    for L in (ndgrad, torch):
        a = L.ones(2, requires_grad=True)
        assert L.rsub(a, L.ones(2)).grad_fn.name() == "RsubBackward0"
        assert L.rsub(a, 2).grad_fn.name() == (3 - a).grad_fn.name() == "RsubBackward1"


def test_nextafter_gradient():
    """nextafter's gradient is PyTorch's: the identity for input, zero for other (it had none)."""
    _grads(lambda L, a, b: L.nextafter(a, b), [_R.standard_normal(4), _R.standard_normal(4)])


@pytest.mark.parametrize("mode", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_tensor_q_gradient(mode):
    """A tensor q gets its gradient through the interpolation weights (it was lost); 0-d
    inputs with dim=0; NaN slices; nanquantile."""
    x = _R.standard_normal((3, 5))
    q = np.array([0.1, 0.5, 0.77, 1.0])
    for fn in ("quantile", "nanquantile"):
        _grads(lambda L, a, b: getattr(L, fn)(a, b, dim=1, interpolation=mode), [x, q])
        _grads(lambda L, a, b: getattr(L, fn)(a, b, interpolation=mode, keepdim=True), [x, q])
        _grads(lambda L, a, b: getattr(L, fn)(a, b[1], dim=0, interpolation=mode), [x, q])
        _grads(lambda L, a: getattr(L, fn)(a, 0.3, dim=0, keepdim=True, interpolation=mode),
               [np.array(2.5)])
        xn = x.copy()
        xn[0, 1] = np.nan
        xn[2] = np.nan
        _grads(lambda L, a, b: getattr(L, fn)(a, b, dim=1, interpolation=mode), [xn, q],
               grad_of=(1,))


def test_scatter_reduce_excluded_self_tie():
    """Where PyTorch is wrong: with include_self=False, amin/amax still count a self element
    equal to the result among the ties, so the one src element that is the minimum gets half
    its gradient (and the excluded self's half is dropped). ndgrad gives it the whole."""
    for L in (ndgrad, torch):
        a = L.tensor([0., 5.], requires_grad=True)
        b = L.tensor([0., 7.], requires_grad=True)
        r = a.scatter_reduce(0, L.tensor([0, 0]), b, "amin", include_self=False)
        r.backward(L.tensor([1., 1.]))
        got = b.grad.tolist()
        assert got == ([1.0, 0.0] if L is ndgrad else [0.5, 0.0])
        assert a.grad.tolist() == [0.0, 1.0]


# ------------------------------------------------------------------ out=, complex linalg, misc

@pytest.mark.parametrize("call", [
    lambda L, o: L.bernoulli(L.full((4,), 0.5), out=o),
    lambda L, o: L.multinomial(L.ones(4), 2, out=o),
    lambda L, o: L.chain_matmul(L.eye(2), L.eye(2), out=o),
])
def test_out_is_written(call):
    """out= was ignored by these (the result came back, out untouched)."""
    for L in (ndgrad, torch):
        o = L.zeros(2, dtype=L.int64) if "multinomial" in str(call.__code__.co_names) else \
            L.zeros(2, 2) if "chain_matmul" in call.__code__.co_names else L.zeros(4)
        with __import__("warnings").catch_warnings():
            __import__("warnings").simplefilter("ignore")
            assert call(L, o) is o


def _on(a, fn):
    return fn(a)


@pytest.mark.parametrize("call", [
    lambda L: L.gather(L.arange(6.), 0, L.tensor([2, 1, 0]), out=L.rand(1).expand(3)),
    lambda L: _on(L.arange(6.), lambda a: L.index_select(a, 0, L.tensor([2, 1]), out=a[:2])),
    lambda L: _on(L.arange(6.), lambda a: L.add(a[:5], 1, out=a[1:])),
    lambda L: _on(L.arange(3), lambda a: L.take(a.clone(), a[1:], out=a[:-1])),
    lambda L: L.det(L.eye(2), out=L.zeros(())),
])
def test_out_overlap_errors(call):
    _same(_run(ndgrad, call), _run(torch, call))


def test_out_full_overlap_allowed():
    for L in (ndgrad, torch):
        a = L.arange(4.)
        assert L.add(a, 1, out=a) is a and a.tolist() == [1., 2., 3., 4.]


def test_complex_lu_family():
    """Complex LU (zgetrf's |re| + |im| pivots), lu_solve with adjoint, cholesky(upper) and
    pinv: complex inputs raised or gave transposes where PyTorch takes conjugate ones."""
    a = _R.standard_normal((4, 4)) + 1j * _R.standard_normal((4, 4))
    b = _R.standard_normal((4, 2)) + 1j * _R.standard_normal((4, 2))
    for fn in (lambda L, x: L.linalg.lu_factor(x)[0], lambda L, x: L.linalg.lu(x)[1],
               lambda L, x: L.linalg.lu(x)[2]):
        _grads(fn, [a])
    for adjoint in (False, True):
        for left in (True, False):
            bb = b if left else b.T.copy()
            _grads(lambda L, x, y: L.linalg.lu_solve(*L.linalg.lu_factor(x), y, left=left,
                                                     adjoint=adjoint), [a, bb], grad_of=(1,))
    h = a @ a.conj().T + 4 * np.eye(4)
    _grads(lambda L, x: L.linalg.cholesky(x, upper=True), [h])
    _grads(lambda L, x, y: L.cholesky_solve(y, L.linalg.cholesky(x)), [h, b])


def test_embedding_bag_scale_grad_by_freq_offsets():
    """Where PyTorch is wrong: a 1-d input with offsets and scale_grad_by_freq=True: PyTorch's
    CPU kernel divides some rows' gradients by another row's count (index 2, which appears
    once, gets 1/3); ndgrad divides each by its own frequency (it raised
    NotImplementedError). The forward values agree."""
    w = _R.standard_normal((6, 3))
    grads = {}
    for L in (ndgrad, torch):
        W = L.tensor(w, requires_grad=True)
        o = L.nn.functional.embedding_bag(L.tensor([1, 2, 1, 4, 1, 5]), W, L.tensor([0, 2]),
                                          mode="sum", scale_grad_by_freq=True)
        o.sum().backward()
        grads[L.__name__] = W.grad[:, 0].tolist()
    assert grads["ndgrad"] == [0.0, 1.0, 1.0, 0.0, 1.0, 1.0]
    assert grads["torch"] == pytest.approx([0.0, 1.0, 1 / 3, 0.0, 1 / 3, 1.0])


@pytest.mark.parametrize("call", [
    lambda L: L.nn.functional.avg_pool1d(L.tensor([[[-1, -1, 0, 5, 5, 5, 7, 8, 9]]]), 3),
    lambda L: L.nn.functional.avg_pool2d(L.arange(-8, 8).reshape(1, 1, 4, 4), 2,
                                         divisor_override=-3),
    lambda L: L.addmv(L.tensor([1, 2]), L.tensor([[1, 2], [3, 4]]), L.tensor([1, 1]),
                      beta=1.7, alpha=2.6),
    lambda L: L.addr(L.tensor([[True, False], [False, False]]), L.tensor([True, False]),
                     L.tensor([True, False])),
    lambda L: L.prod(L.tensor([[True, True], [True, False]]), 1, dtype=L.bool),
    lambda L: L.trace(L.ones(2, 2, dtype=L.complex128)),
    lambda L: L.float_power(L.tensor(2 + 1j), L.tensor(0.5)),
    lambda L: L.tensor(True).sum_to_size(()),
    lambda L: L.take_along_dim(L.arange(25.).reshape(5, 5), L.tensor([[-6], [5], [-5], [7], [0]]),
                               1),
    lambda L: L.tensordot(L.ones(1, 1, 1), L.ones(2, 1, 2), dims=([0, 1], [2, 0])),
    lambda L: L.linalg.matrix_rank(L.eye(3, dtype=L.float64).expand(2, 3, 3),
                                   atol=L.tensor([0.5, 2.0], dtype=L.float64)),
    lambda L: L.nn.functional.batch_norm(L.zeros(0, 3, 4), L.zeros(3), L.ones(3),
                                         training=True),
])
def test_values_as_pytorch(call):
    _same(_run(ndgrad, call), _run(torch, call), exact=False)
