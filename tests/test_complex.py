"""Complex autograd: values and gradients against PyTorch on the same complex128 inputs, complex
gradcheck/gradgradcheck (slow and fast mode), PyTorch's conventions (z.grad = dL/dx + i dL/dy,
a real input keeps the real part of a complex gradient), is_conj, reprs and error messages.
PyTorch comparisons skip cleanly when torch is not installed."""
import numpy as np
import pytest

import ndgrad
from ndgrad.autograd import gradcheck, gradgradcheck


def _torch():
    return pytest.importorskip("torch")


def _c(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


# name -> (function of the library L and the inputs, input makers: "c" complex, "r" real,
# "p" positive real, "a" a well-conditioned complex matrix, with a shape)
CASES = {
    "add": (lambda L, a, b: a + b, [("c", (2, 3)), ("c", (3,))]),
    "sub_scalar": (lambda L, a: (1 - 2j) - a * (0.5 + 1j), [("c", (3,))]),
    "mul": (lambda L, a, b: a * b, [("c", (2, 3)), ("c", (2, 1))]),
    "mul_real": (lambda L, a, b: a * b, [("c", (2, 3)), ("r", (3,))]),
    "div": (lambda L, a, b: a / b, [("c", (2, 3)), ("c", (3,))]),
    "div_real": (lambda L, a, b: b / a, [("c", (3,)), ("r", (3,))]),
    "pow_scalar": (lambda L, a: a ** 2.5, [("c", (3,))]),
    "pow_int": (lambda L, a: a ** 3, [("c", (3,))]),
    "pow_tensor": (lambda L, a, b: a ** b, [("c", (3,)), ("c", (3,))]),
    "neg": (lambda L, a: -a, [("c", (3,))]),
    "reciprocal": (lambda L, a: a.reciprocal(), [("c", (3,))]),
    "square": (lambda L, a: L.square(a), [("c", (3,))]),
    "exp": (lambda L, a: a.exp(), [("c", (3,))]),
    "log": (lambda L, a: a.log(), [("c", (3,))]),
    "log2": (lambda L, a: L.log2(a), [("c", (3,))]),
    "log10": (lambda L, a: L.log10(a), [("c", (3,))]),
    "log1p": (lambda L, a: L.log1p(a), [("c", (3,))]),
    "expm1": (lambda L, a: L.expm1(a), [("c", (3,))]),
    "sqrt": (lambda L, a: a.sqrt(), [("c", (3,))]),
    "rsqrt": (lambda L, a: a.rsqrt(), [("c", (3,))]),
    "sin": (lambda L, a: a.sin(), [("c", (3,))]),
    "cos": (lambda L, a: a.cos(), [("c", (3,))]),
    "tan": (lambda L, a: a.tan(), [("c", (3,))]),
    "sinh": (lambda L, a: a.sinh(), [("c", (3,))]),
    "cosh": (lambda L, a: a.cosh(), [("c", (3,))]),
    "tanh": (lambda L, a: a.tanh(), [("c", (3,))]),
    "asin": (lambda L, a: a.asin(), [("c", (3,))]),
    "acos": (lambda L, a: a.acos(), [("c", (3,))]),
    "atan": (lambda L, a: a.atan(), [("c", (3,))]),
    "asinh": (lambda L, a: a.asinh(), [("c", (3,))]),
    "acosh": (lambda L, a: a.acosh(), [("c", (3,))]),
    "atanh": (lambda L, a: a.atanh(), [("c", (3,))]),
    "sigmoid": (lambda L, a: a.sigmoid(), [("c", (3,))]),
    "abs": (lambda L, a: a.abs(), [("c", (2, 3))]),
    "sgn": (lambda L, a: a.sgn(), [("c", (3,))]),
    "angle": (lambda L, a: a.angle(), [("c", (3,))]),
    "angle_real": (lambda L, a: a.angle(), [("r", (3,))]),
    "real": (lambda L, a: a.real * 1, [("c", (3,))]),
    "imag": (lambda L, a: a.imag * 1, [("c", (3,))]),
    "conj": (lambda L, a: a.conj() * 1, [("c", (3,))]),
    "conj_physical": (lambda L, a: L.conj_physical(a), [("c", (3,))]),
    "resolve_conj": (lambda L, a: a.conj().resolve_conj(), [("c", (3,))]),
    "view_as_real": (lambda L, a: L.view_as_real(a) * 1, [("c", (2, 3))]),
    "view_as_complex": (lambda L, a: L.view_as_complex(a.reshape(3, 2)) * 1, [("r", (6,))]),
    "polar": (lambda L, a, b: L.polar(a, b), [("p", (3,)), ("r", (3,))]),
    "complex": (lambda L, a, b: L.complex(a, b), [("r", (2, 3)), ("r", (3,))]),
    "sum": (lambda L, a: a.sum(), [("c", (2, 3))]),
    "sum_dim": (lambda L, a: a.sum(1), [("c", (2, 3))]),
    "mean": (lambda L, a: a.mean(0), [("c", (2, 3))]),
    "prod": (lambda L, a: a.prod(), [("c", (4,))]),
    "prod_dim": (lambda L, a: a.prod(1), [("c", (2, 3))]),
    "matmul": (lambda L, a, b: a @ b, [("c", (2, 3)), ("c", (3, 4))]),
    "matmul_batched": (lambda L, a, b: a @ b, [("c", (2, 2, 3)), ("c", (3, 2))]),
    "mv": (lambda L, a, b: L.mv(a, b), [("c", (2, 3)), ("c", (3,))]),
    "dot": (lambda L, a, b: L.dot(a, b), [("c", (3,)), ("c", (3,))]),
    "vdot": (lambda L, a, b: L.vdot(a, b), [("c", (3,)), ("c", (3,))]),
    "vm": (lambda L, a, b: a @ b, [("c", (3,)), ("c", (3, 2))]),
    "bmm": (lambda L, a, b: L.bmm(a, b), [("c", (2, 2, 3)), ("c", (2, 3, 2))]),
    "addmm": (lambda L, c, a, b: L.addmm(c, a, b, alpha=0.5, beta=2), [("c", (2, 2)), ("c", (2, 3)), ("c", (3, 2))]),
    "addmv": (lambda L, c, a, b: L.addmv(c, a, b), [("c", (2,)), ("c", (2, 3)), ("c", (3,))]),
    "inv": (lambda L, a: L.linalg.inv(a), [("a", (3, 3))]),
    "det": (lambda L, a: L.linalg.det(a), [("a", (3, 3))]),
    "solve": (lambda L, a, b: L.linalg.solve(a, b), [("a", (3, 3)), ("c", (3, 2))]),
    "solve_vec": (lambda L, a, b: L.linalg.solve(a, b), [("a", (3, 3)), ("c", (3,))]),
    "solve_right": (lambda L, a, b: L.linalg.solve(a, b, left=False), [("a", (3, 3)), ("c", (2, 3))]),
    "cast_r2c": (lambda L, a: a.to(L.complex128) * (1 + 2j), [("r", (3,))]),
    "where": (lambda L, a, b: L.where(a.real > 0, a, b), [("c", (3,)), ("c", (3,))]),
    "cumsum": (lambda L, a: a.cumsum(0), [("c", (3,))]),
    "expand_reshape": (lambda L, a: a.expand(2, 3).reshape(6).flip(0)[1:4], [("c", (3,))]),
    "empty": (lambda L, a: a.exp() * a, [("c", (0, 2))]),
    "zero_dim": (lambda L, a: a.log() * a, [("c", ())]),
}


def _make(kind, shape, rng):
    if kind == "c":
        return _c(rng, *shape)
    if kind == "r":
        return rng.standard_normal(shape)
    if kind == "p":
        return rng.uniform(0.5, 2.0, shape)
    return _c(rng, *shape) + 3 * np.eye(shape[-1])  # "a": well conditioned


def _arrays(name):
    rng = np.random.default_rng(abs(hash(name)) % 2 ** 32)
    return [_make(k, s, rng) for k, s in CASES[name][1]]


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck_complex(name):
    f, _ = CASES[name]
    args = [ndgrad.tensor(a, requires_grad=True) for a in _arrays(name)]
    fn = lambda *a: f(ndgrad, *a)  # noqa: E731
    assert gradcheck(fn, args)
    assert gradcheck(fn, args, fast_mode=True)
    assert gradgradcheck(fn, args)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_grads_match_torch(name):
    torch = _torch()
    f, _ = CASES[name]
    arrays = _arrays(name)
    rng = np.random.default_rng(1)
    results = []
    for L in (ndgrad, torch):
        args = [L.tensor(a, requires_grad=True) for a in arrays]
        out = f(L, *args)
        if out.is_complex():
            loss = (out * L.tensor(_c(rng, *out.shape) if out.dim() else complex(_c(rng)[()]))).abs().sum()
        else:
            loss = (out * L.tensor(rng.standard_normal(out.shape))).sum()
        rng = np.random.default_rng(1)
        loss.backward()
        results.append((out.detach().resolve_conj().numpy(), str(out.dtype),
                        [a.grad.resolve_conj().numpy() for a in args]))
    (o1, d1, g1), (o2, d2, g2) = results
    assert d1 == d2
    np.testing.assert_allclose(o1, o2, rtol=1e-10, atol=1e-12)
    for a, b in zip(g1, g2):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_convention_real_loss_gradient():
    # L = |z|^2 = x^2 + y^2: z.grad = dL/dx + i dL/dy = 2z
    z = ndgrad.tensor([1 + 2j, -3 + 0.5j], requires_grad=True)
    (z.abs() ** 2).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), 2 * np.array([1 + 2j, -3 + 0.5j]), rtol=1e-6)
    # a real leaf mixed into a complex computation gets the real part of its gradient
    x = ndgrad.tensor([1.0, 2.0], dtype=ndgrad.float64, requires_grad=True)
    (x * (1 + 2j)).imag.sum().backward()
    assert x.grad.dtype is ndgrad.float64
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_gradcheck_catches_a_missing_conj():
    class BadMul(ndgrad.autograd.Function):  # the gradient without PyTorch's conj
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b, g * a

    a = ndgrad.tensor([1 + 2j, 0.5 - 1j], dtype=ndgrad.complex128, requires_grad=True)
    b = ndgrad.tensor([2 - 1j, 1 + 1j], dtype=ndgrad.complex128, requires_grad=True)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        gradcheck(BadMul.apply, (a, b))
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        gradcheck(BadMul.apply, (a, b), fast_mode=True)
    assert gradcheck(lambda a, b: a * b, (a, b))


def test_conj_semantics():
    x = ndgrad.tensor([1.0, 2.0])
    assert x.conj() is x and x.conj_physical() is x and x.real is x and x.resolve_conj() is x
    z = ndgrad.tensor([1 + 2j, 3 - 1j])
    c = z.conj()
    assert c.is_conj() and not z.is_conj() and not c.conj().is_conj()
    r = c.resolve_conj()
    assert not r.is_conj() and ndgrad.equal(r, c)
    assert not z.conj_physical().is_conj() and not ndgrad.is_conj(z)
    assert z.is_complex() and ndgrad.is_complex(z) and not x.is_complex()


def test_complex_matches_torch_reprs_and_promotion():
    torch = _torch()
    cases = [
        lambda L: L.tensor([1 + 2j, 0j], dtype=L.complex128, requires_grad=True).conj(),
        lambda L: L.tensor([[1 + 2j, 3.5 - 1e-5j], [1e10j, 0]]),
        lambda L: L.tensor([1.0, 2.0]) * 1j,
        lambda L: L.ones(2, dtype=L.float64) * L.tensor(1j),
        lambda L: L.ones(2) * L.tensor(1j, dtype=L.complex128),
        lambda L: L.ones(2, dtype=L.int32) * L.tensor(1j, dtype=L.complex128),
        lambda L: L.tensor([1 + 2j]).real,
        lambda L: L.tensor([1 + 2j], requires_grad=True).imag,
        lambda L: L.view_as_real(L.tensor([1 + 2j, 3j])),
        lambda L: L.polar(L.tensor([2.0]), L.tensor([0.5])),
        lambda L: L.tensor([1 + 2j], dtype=L.complex64).abs(),
        lambda L: L.tensor([1 + 1j], dtype=L.complex64).angle(),
    ]
    for f in cases:
        assert repr(f(ndgrad)) == repr(f(torch))
    for a, b in [("float32", "complex64"), ("float64", "complex64"), ("int64", "complex128")]:
        assert str(ndgrad.promote_types(getattr(ndgrad, a), getattr(ndgrad, b))) == \
            str(torch.promote_types(getattr(torch, a), getattr(torch, b)))


def _err(f, L):
    try:
        f(L)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("case", [
    lambda L: L.tensor([1 + 1j]).clamp(0, 1),
    lambda L: L.relu(L.tensor([1 + 1j])),
    lambda L: L.tensor([1 + 1j]).sign(),
    lambda L: L.tensor([1 + 1j]) < L.tensor([1j]),
    lambda L: L.tensor([1.0]).imag,
    lambda L: L.view_as_complex(L.ones(2, 2, dtype=L.float64).t()),
    lambda L: L.view_as_complex(L.ones(2, 3)),
    lambda L: L.view_as_complex(L.ones(2, 2, dtype=L.int64)),
    lambda L: L.view_as_real(L.ones(2)),
    lambda L: L.polar(L.ones(2, dtype=L.float64), L.ones(2)),
    lambda L: L.complex(L.ones(2, dtype=L.float64), L.ones(2)),
    lambda L: L.complex(L.ones(2, dtype=L.int64), L.ones(2, dtype=L.int64)),
    lambda L: (L.tensor([1 + 1j], requires_grad=True) * 2).sum().backward(),
    lambda L: L.view_as_real(L.tensor([1 + 1j]).conj()),
], ids=["clamp", "relu", "sign", "lt", "imag_real", "vac_stride", "vac_size", "vac_int",
        "var_real", "polar_dtypes", "complex_dtypes", "complex_int", "implicit_grad",
        "var_conj"])
def test_errors_match_torch(case):
    torch = _torch()
    want = _err(case, torch)
    assert want is not None
    assert _err(case, ndgrad) == want


def test_cast_complex_to_real_warns_as_torch():
    z = ndgrad.tensor([1 + 2j], requires_grad=True)
    with pytest.warns(UserWarning, match="Casting complex values to real discards the imaginary"):
        r = z.to(ndgrad.float32)
    assert r.dtype is ndgrad.float32 and r.item() == 1.0
    r.sum().backward()  # ToCopyBackward0: the real gradient becomes complex
    assert z.grad.dtype is ndgrad.complex64 and z.grad.item() == 1


def test_complex_random_has_both_parts():
    ndgrad.manual_seed(0)
    z = ndgrad.randn(2000, dtype=ndgrad.complex128)
    assert abs(z.real.var().item() - 0.5) < 0.1 and abs(z.imag.var().item() - 0.5) < 0.1
    u = ndgrad.rand(2000, dtype=ndgrad.complex64)
    assert 0 <= u.imag.min().item() and u.imag.max().item() < 1 and u.imag.mean().item() > 0.4


def test_mH_H_and_adjoint_conjugate_complex_tensors():
    # (they had only transposed: a silently wrong conjugate transpose)
    z0 = np.array([[[1 + 2j, 3 - 1j], [1j, 2]], [[0.5j, -1], [2 - 2j, 1j]]])
    z = ndgrad.tensor(z0)
    want = np.conj(np.swapaxes(z0, -1, -2))
    np.testing.assert_array_equal(z.mH.numpy(), want)
    np.testing.assert_array_equal(z.adjoint().numpy(), want)
    np.testing.assert_array_equal(ndgrad.adjoint(z).numpy(), want)
    np.testing.assert_array_equal(z[0].H.numpy(), want[0])
    np.testing.assert_array_equal(z.mT.numpy(), np.swapaxes(z0, -1, -2))   # mT does not
    assert z.mH.is_conj() and not ndgrad.ones(2, 2).mH.is_conj()
    x = ndgrad.tensor(z0, requires_grad=True)
    assert ndgrad.autograd.gradcheck(lambda t: t.mH, (x,))
    assert ndgrad.autograd.gradgradcheck(lambda t: t.mH * t.mH, (x,))
