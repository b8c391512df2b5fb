"""torch.special: accuracy against SciPy (1e-12 relative in float64; an absolute floor of
1e-15 for the functions that oscillate, whose zeros no implementation resolves relatively),
values, edges, dtypes and differentiability against PyTorch, and PyTorch's errors. The
differentiable functions' gradients: tests/op_db_special.py."""
import numpy as np
import pytest

import ndgrad

S = ndgrad.special
RNG = np.random.default_rng(0)


def T(a):
    return ndgrad.from_numpy(np.asarray(a, dtype=np.float64))


def close(got, ref, rtol=1e-12, atol=1e-300):  # (the floor: SciPy flushes some subnormals)
    got = np.asarray(got.numpy() if hasattr(got, "numpy") else got)
    ref = np.asarray(ref, dtype=np.float64)
    assert got.shape == ref.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    fin = np.isfinite(ref)
    np.testing.assert_array_equal(got[~fin & ~np.isnan(ref)], ref[~fin & ~np.isnan(ref)])
    np.testing.assert_allclose(got[fin], ref[fin], rtol=rtol, atol=atol)


X_WIDE = np.concatenate([np.linspace(-30, 30, 1201), RNG.uniform(-5, 5, 300),
                         [0.0, 1e-300, -1e-10, 1e-10]])
X_BESSEL = np.concatenate([np.linspace(-60, 60, 2401), RNG.uniform(-3, 3, 200),
                           [0.0, 1e-10, 1e-30, 25.0, -25.0]])
X_K = np.concatenate([np.logspace(-12, 2.5, 1500), [0.0, -1.0, np.inf]])
P_UNIT = np.concatenate([np.logspace(-300, -1, 300), RNG.uniform(0, 1, 500),
                         1 - np.logspace(-16, -1, 60), [0.0, 1.0, -0.1, 1.1]])
Y_UNIT = np.concatenate([RNG.uniform(-1, 1, 500), 1 - np.logspace(-16, -1, 60),
                         -1 + np.logspace(-16, -1, 60), [0.0, 1.0, -1.0, 1.5]])

# (ndgrad name, scipy name, inputs, absolute floor)
UNARY = [
    ("erf", "erf", X_WIDE, 0), ("erfc", "erfc", X_WIDE, 0), ("erfcx", "erfcx", X_WIDE, 0),
    ("erfinv", "erfinv", Y_UNIT, 0), ("ndtr", "ndtr", X_WIDE, 0),
    ("log_ndtr", "log_ndtr", np.linspace(-40, 10, 1501), 0), ("ndtri", "ndtri", P_UNIT, 0),
    ("entr", "entr", np.concatenate([RNG.uniform(0, 10, 200), [0.0, -1.0, 1e-300]]), 0),
    ("i0", "i0", X_BESSEL, 0), ("i0e", "i0e", X_BESSEL, 0), ("i1", "i1", X_BESSEL, 0),
    ("i1e", "i1e", X_BESSEL, 0), ("modified_bessel_i0", "i0", X_BESSEL, 0),
    ("modified_bessel_i1", "i1", X_BESSEL, 0), ("modified_bessel_k0", "k0", X_K, 0),
    ("modified_bessel_k1", "k1", X_K, 0), ("scaled_modified_bessel_k0", "k0e", X_K, 0),
    ("scaled_modified_bessel_k1", "k1e", X_K, 0),
    ("bessel_j0", "j0", X_BESSEL, 1e-15), ("bessel_j1", "j1", X_BESSEL, 1e-15),
    ("bessel_y0", "y0", X_BESSEL, 1e-15), ("bessel_y1", "y1", X_BESSEL, 1e-14),
    ("airy_ai", None, np.linspace(-30, 30, 1501), 1e-14),
    ("spherical_bessel_j0", None, X_BESSEL, 1e-15),
    ("gammaln", "gammaln", np.concatenate([RNG.uniform(0.01, 50, 300), [1.0, 2.0]]), 1e-15),
    ("digamma", "digamma", RNG.uniform(0.01, 50, 300), 1e-15),
    ("expit", "expit", X_WIDE, 0), ("logit", "logit", RNG.uniform(0, 1, 300), 1e-15),
    ("exp2", "exp2", X_WIDE, 0), ("expm1", "expm1", X_WIDE, 0),
    ("log1p", "log1p", RNG.uniform(-0.99, 10, 300), 0),
]


@pytest.mark.parametrize("name,ref,x,atol", UNARY, ids=[u[0] for u in UNARY])
def test_unary_vs_scipy(name, ref, x, atol):
    sc = pytest.importorskip("scipy.special")
    if name == "airy_ai":
        expect = sc.airy(x)[0]
    elif name == "spherical_bessel_j0":
        expect = sc.spherical_jn(0, x)
    else:
        expect = getattr(sc, ref)(x)
    close(getattr(S, name)(T(x)), expect, atol=max(atol, 1e-300))


def test_binary_vs_scipy():
    sc = pytest.importorskip("scipy.special")
    a, x = RNG.uniform(0.05, 30, 2000), RNG.uniform(0, 50, 2000)
    a = np.concatenate([a, [0.0, 0.0, 1.0, 1.0, -1.0, np.inf, 2.0]])
    x = np.concatenate([x, [1.0, 0.0, 0.0, np.inf, 1.0, 1.0, -1.0]])
    close(S.gammainc(T(a), T(x)), sc.gammainc(a, x))
    close(S.gammaincc(T(a), T(x)), sc.gammaincc(a, x))
    s, q = RNG.uniform(1.01, 20, 1000), RNG.uniform(0.01, 20, 1000)
    close(S.zeta(T(s), T(q)), sc.zeta(s, q))
    s, q = np.array([2.0, 3.0, 2.0, 4.0, 1.0, 0.5, 2.0]), np.array([-1.5, -2.5, -1, 0, 1, 1, 1e9])
    close(S.zeta(T(s), T(q)), sc.zeta(s, q))
    xe = RNG.uniform(-1, 10, 300)
    close(S.xlog1py(T(xe), T(xe + 0.5)), sc.xlog1py(xe, xe + 0.5))
    close(S.xlogy(T(xe), T(xe + 1.5)), sc.xlogy(xe, xe + 1.5))
    close(S.polygamma(3, T(xe + 1.2)), sc.polygamma(3, xe + 1.2))
    close(S.multigammaln(T(xe + 3), 3), sc.multigammaln(xe + 3, 3))


POLY = [("chebyshev_polynomial_t", "eval_chebyt", 1), ("chebyshev_polynomial_u", "eval_chebyu", 1),
        ("legendre_polynomial_p", "eval_legendre", 1), ("hermite_polynomial_h", "eval_hermite", 3),
        ("hermite_polynomial_he", "eval_hermitenorm", 3),
        ("laguerre_polynomial_l", "eval_laguerre", 3)]


@pytest.mark.parametrize("name,ref,scale", POLY, ids=[p[0] for p in POLY])
def test_polynomials_vs_scipy(name, ref, scale):
    sc = pytest.importorskip("scipy.special")
    x, n = RNG.uniform(-scale, scale, 500), RNG.integers(0, 12, 500)
    expect = getattr(sc, ref)(n, x)
    close(getattr(S, name)(T(x), T(n)), expect, atol=1e-13 * np.abs(expect).max())


SPECIAL_NAMES = sorted(S.__all__)
EDGES = np.array([-np.inf, -30.0, -2.5, -1.0, -0.5, 0.0, 1e-8, 0.3, 1.0, 2.0, 7.5, 30.0,
                  np.inf, np.nan])


def _call(L, name, x, y):
    f = getattr(L.special, name)
    if name in ("polygamma",):
        return f(2, x)
    if name == "multigammaln":
        return f(x + 3, 2)
    if name in ("softmax", "log_softmax", "logsumexp"):
        return f(x, 0)
    if "polynomial" in name:
        return f(x, y)
    if name in ("xlogy", "xlog1py", "zeta", "gammainc", "gammaincc"):
        return f(x, y)
    return f(x)


@pytest.mark.parametrize("name", SPECIAL_NAMES)
def test_vs_torch(name):
    """Values (edges included), dtype and whether the output requires grad, as PyTorch."""
    torch = pytest.importorskip("torch")
    x = EDGES if name not in ("ndtri", "erfinv", "logit") else np.clip(EDGES, -1.5, 1.5)
    if name in ("polygamma", "i1"):  # (PyTorch's values at +-inf are nan or 0 at random)
        x = np.where(np.isinf(x), 1.0, x)
    y = np.array([3.0, 0.5, 2.0, 1.0, 4.0, 0.0, 6.0, 1.0, 2.5, 10.0, 1.5, 3.0, 2.0, 1.0])
    if "polynomial" in name:
        x = np.clip(x, -3, 3)
    got = _call(ndgrad, name, T(x).requires_grad_(), T(y))
    exp = _call(torch, name, torch.from_numpy(x.copy()).requires_grad_(), torch.from_numpy(y))
    assert got.dtype.__repr__() == repr(exp.dtype)
    assert got.requires_grad == exp.requires_grad
    e = exp.detach().numpy()
    atol = 1e-12 * np.nanmax(np.abs(e[np.isfinite(e)]), initial=1.0)
    # PyTorch's J, Y and Ai are single-precision-grade (ndgrad's agree with SciPy to 1e-15)
    rtol = 1e-5 if name.startswith(("bessel", "airy")) else 1e-11
    close(got.detach(), e, rtol=rtol, atol=atol if rtol < 1e-6 else 1e-6)
    # float32 and integer inputs: PyTorch's result dtype
    for dt in ("float32", "int64"):
        if dt == "int64" and name in ("gammainc", "gammaincc", "softmax", "log_softmax",
                                      "round"):  # (PyTorch: not implemented for 'Long')
            continue
        xi = np.array([1, 2, 3]).astype(dt)
        g = _call(ndgrad, name, ndgrad.from_numpy(xi), ndgrad.from_numpy(xi))
        t = _call(torch, name, torch.from_numpy(xi), torch.from_numpy(xi))
        assert repr(g.dtype) == repr(t.dtype), (dt, g.dtype, t.dtype)
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-5)


def test_polynomial_edges_vs_torch():
    torch = pytest.importorskip("torch")
    x = np.array([-1.0, 1.0, 0.3, -0.7, 0.0, 2.0, -1.0, 1.0, 0.5, 0.9])
    n = np.array([3, 4, -1, 70, 5, 2.7, 80, 81, 0, 100])
    for name in [s for s in SPECIAL_NAMES if "polynomial" in s]:
        g = getattr(S, name)(T(x), T(n)).numpy()
        t = getattr(torch.special, name)(torch.from_numpy(x), torch.from_numpy(n)).numpy()
        np.testing.assert_allclose(g, t, rtol=1e-9, atol=1e-9 * np.abs(t).max(), err_msg=name)
        # scalar n and scalar x
        g = getattr(S, name)(T(x), 3)
        t = getattr(torch.special, name)(torch.from_numpy(x), 3)
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-12, atol=1e-12)
        g = getattr(S, name)(0.25, ndgrad.tensor([0, 1, 2, 5]))
        t = getattr(torch.special, name)(0.25, torch.tensor([0, 1, 2, 5]))
        assert repr(g.dtype) == repr(t.dtype)
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-6)


@pytest.mark.parametrize("name,what", [("gammainc", "igamma: input"),
                                       ("gammaincc", "igammac: input"), ("zeta", "zeta")])
def test_underived_inputs_raise(name, what):
    a = ndgrad.tensor([2.0, 3.0], dtype=ndgrad.float64, requires_grad=True)
    out = getattr(S, name)(a, ndgrad.tensor([1.5, 2.5], dtype=ndgrad.float64))
    assert out.requires_grad
    with pytest.raises(NotImplementedError,
                       match=f"^the derivative for '{what}' is not implemented."):
        out.sum().backward()


def test_non_differentiable_outputs_do_not_require_grad():
    x = ndgrad.tensor([0.5, 1.5], requires_grad=True)
    for name in ("bessel_j0", "bessel_y1", "modified_bessel_k0", "scaled_modified_bessel_k1",
                 "airy_ai", "spherical_bessel_j0", "modified_bessel_i0"):
        out = getattr(S, name)(x)
        assert not out.requires_grad and out.grad_fn is None
    assert not S.chebyshev_polynomial_t(x, 3).requires_grad


def test_errors_as_torch():
    with pytest.raises(NotImplementedError, match='"igamma_cpu" not implemented for \'Long\''):
        S.gammainc(ndgrad.tensor([2]), ndgrad.tensor([1]))
    with pytest.raises(TypeError, match=r"special_gammainc\(\): argument 'other' \(position 2\) "
                                        "must be Tensor, not int"):
        S.gammainc(ndgrad.tensor([2.0]), 1)
    with pytest.raises(RuntimeError, match="The size of tensor a"):
        S.zeta(ndgrad.ones(3, 1), ndgrad.ones(2, 4))
    with pytest.raises(RuntimeError, match="The size of tensor a"):
        S.chebyshev_polynomial_t(ndgrad.ones(3), ndgrad.ones(2))


def test_top_level_aliases_and_methods():
    torch = pytest.importorskip("torch")
    a = np.array([0.5, 2.0, 4.0])
    x = np.array([0.7, 1.0, 5.0])
    for name in ("igamma", "igammac"):
        g = getattr(ndgrad, name)(T(a), T(x))
        t = getattr(torch, name)(torch.from_numpy(a), torch.from_numpy(x))
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-12)
        np.testing.assert_allclose(getattr(T(a), name)(T(x)).numpy(), t.numpy(), rtol=1e-12)
        y = T(a)
        getattr(y, name + "_")(T(x))
        np.testing.assert_allclose(y.numpy(), t.numpy(), rtol=1e-12)
    # aliases compute the same; each is its own function with PyTorch's name (special_psi)
    v = T([0.3, 2.0])
    for alias, of in (("psi", ndgrad.special.digamma), ("gammaln", ndgrad.lgamma),
                      ("expit", ndgrad.sigmoid)):
        f = getattr(ndgrad.special, alias)
        assert f.__name__ == getattr(torch.special, alias).__name__ == f"special_{alias}"
        assert ndgrad.equal(f(v), of(v))
    np.testing.assert_allclose(S.round(T([1.25, 2.5]), decimals=1).numpy(), [1.2, 2.5])
    np.testing.assert_allclose(S.round(T([1.5, 2.5])).numpy(), [2.0, 2.0])


def test_gradients_vs_torch_at_edges():
    torch = pytest.importorskip("torch")
    x = np.array([-8.0, -1.0, 0.0, 1e-3, 2.0, 30.0])
    for name in ("erfcx", "log_ndtr", "i0e", "i1e", "ndtr"):
        g = T(x).requires_grad_()
        getattr(S, name)(g).sum().backward()
        t = torch.from_numpy(x.copy()).requires_grad_()
        getattr(torch.special, name)(t).sum().backward()
        np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-300)
    p = np.array([1e-20, 0.01, 0.5, 0.99])
    g = T(p).requires_grad_()
    S.ndtri(g).sum().backward()
    t = torch.from_numpy(p.copy()).requires_grad_()
    torch.special.ndtri(t).sum().backward()
    np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-10)


def test_namespace_complete():
    torch = pytest.importorskip("torch")
    public = {n for n in dir(torch.special) if not n.startswith("_")}
    public -= {"Tensor", "torch", "common_args", "multi_dim_common"}
    assert public <= set(dir(ndgrad.special))
