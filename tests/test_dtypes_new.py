"""bfloat16, uint16/32/64, the float8 types and complex32 against PyTorch 2.13 (CPU): promotion,
limits, conversions, bfloat16 arithmetic bit for bit, printing, checkpoints both ways,
autograd, and the ops PyTorch refuses on the restricted dtypes (Note [Special dtypes])."""
import io

import numpy as np
import pytest

import ndgrad
import ndgrad.nn.functional as NF

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytest.importorskip("ml_dtypes")

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
         "float16", "bfloat16", "float32", "float64", "complex32", "complex64", "complex128",
         "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"]
FLOAT8 = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"]
UINTS = ["uint16", "uint32", "uint64"]


def _outcome(f):
    try:
        return f()
    except Exception as e:  # (type and message compared)
        return (type(e).__name__, str(e))


def test_promote_types_table():
    for a in NAMES:
        for b in NAMES:
            want = _outcome(lambda: torch.promote_types(getattr(torch, a), getattr(torch, b)))
            got = _outcome(lambda: ndgrad.promote_types(getattr(ndgrad, a), getattr(ndgrad, b)))
            want = want if isinstance(want, tuple) else str(want)
            got = got if isinstance(got, tuple) else str(got)
            assert got == want, (a, b)


@pytest.mark.parametrize("name", ["bfloat16", "uint16", "uint64"] + FLOAT8)
def test_result_type_with_scalars(name):
    for other in (3, 1.5, True, 2j):
        for zero_dim in (False, True):
            a = ([1, 2] if "uint" in name else [1.0, 2.0])
            t = torch.tensor(a).to(getattr(torch, name))
            n = ndgrad.tensor(a).to(getattr(ndgrad, name))
            if zero_dim:
                t, n = t[0], n[0]
            want = _outcome(lambda: str(torch.result_type(t, other)))
            assert _outcome(lambda: str(ndgrad.result_type(n, other))) == want, (other, zero_dim)


def test_dtype_attributes_and_limits():
    for name in NAMES:
        t, n = getattr(torch, name), getattr(ndgrad, name)
        assert (repr(n), n.is_floating_point, n.is_complex, n.is_signed, n.itemsize) == \
            (repr(t), t.is_floating_point, t.is_complex, t.is_signed, t.itemsize), name
        if t.is_floating_point or t.is_complex:
            assert repr(ndgrad.finfo(n)) == repr(torch.finfo(t)), name
            assert ndgrad.finfo(n).bits == torch.finfo(t).bits
        elif name != "bool":
            assert repr(ndgrad.iinfo(n)) == repr(torch.iinfo(t)), name
    assert ndgrad.chalf is ndgrad.complex32 and ndgrad.complex32.to_real() is ndgrad.float16
    assert ndgrad.bfloat16.to_complex() is ndgrad.complex64


def test_complex32_has_no_tensors():
    # NumPy and ml_dtypes have no complex32: the dtype exists (libraries name it), tensors not
    with pytest.raises(TypeError, match="no complex32"):
        ndgrad.zeros(2, dtype=ndgrad.complex32)
    with pytest.raises(TypeError, match="no complex32"):
        ndgrad.ones(2).to(ndgrad.chalf)


HARD = [1 + 2 ** -8 + 2 ** -30, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 3.0e5 + 1, 1e30, -1e30, 500.0,
        464.0, 470.0, 1e-10, 1e-40, -0.0, float("inf"), float("-inf"), float("nan"), 1 / 3]


@pytest.mark.parametrize("name", ["bfloat16"] + FLOAT8)
def test_conversions_bit_for_bit(name):
    t, n = getattr(torch, name), getattr(ndgrad, name)

    def bits(x):  # (NaNs compared as NaNs: their payloads differ between PyTorch's kernels)
        if isinstance(x, torch.Tensor):
            nan = x.float().isnan().numpy()
            b = x.view(torch.uint8 if x.itemsize == 1 else torch.int16).numpy()
        else:
            nan = np.isnan(x._data.astype(np.float32))
            b = x._data.view(np.uint8 if x.itemsize == 1 else np.int16)
        return np.where(nan, -1, b.astype(np.int64))
    for src in (torch.float64, torch.float32, torch.float16):
        x = torch.tensor(HARD, dtype=torch.float64).to(src)
        y = ndgrad.tensor(HARD, dtype=ndgrad.float64).to(getattr(ndgrad, str(src)[6:]))
        assert (bits(y.to(n)) == bits(x.to(t))).all(), src
    assert (bits(ndgrad.tensor(HARD, dtype=n)) == bits(torch.tensor(HARD, dtype=t))).all()
    ints = [0, 1, -7, 255, 1000, 2 ** 24 + 1]
    assert (bits(ndgrad.tensor(ints).to(n)) == bits(torch.tensor(ints).to(t))).all()
    back = torch.tensor(HARD).to(t)
    assert ndgrad.tensor(HARD).to(n).float().tolist() == pytest.approx(
        back.float().tolist(), nan_ok=True)
    assert ndgrad.full((2,), 3.3, dtype=n).tolist() == torch.full((2,), 3.3, dtype=t).tolist()
    got = _outcome(lambda: ndgrad.full((2,), 1e39, dtype=n))
    assert got == _outcome(lambda: torch.full((2,), 1e39, dtype=t))


def test_printing():
    vals = [1.5, 2.25, 3.0e5, 1 / 3, -7.0, 1e-3]
    for name in ["bfloat16"] + FLOAT8:
        t = torch.tensor(vals).to(getattr(torch, name))
        n = ndgrad.tensor(vals).to(getattr(ndgrad, name))
        for i in (slice(None), slice(0, 2), 0, slice(0, 0)):
            assert repr(n[i]) == repr(t[i]), (name, i)
        assert n[1].item() == t[1].item() and type(n[1].item()) is float
        assert n.tolist() == pytest.approx(t.tolist(), nan_ok=True)
    for name in UINTS:
        t = torch.tensor([[1, 2], [65535, 7]], dtype=getattr(torch, name))
        assert repr(ndgrad.tensor([[1, 2], [65535, 7]], dtype=getattr(ndgrad, name))) == repr(t)
    x = ndgrad.ones(2, dtype=ndgrad.bfloat16, requires_grad=True)
    assert repr(x * 2) == "tensor([2., 2.], dtype=torch.bfloat16, grad_fn=<MulBackward0>)"
    with pytest.raises(TypeError, match="Got unsupported ScalarType BFloat16"):
        ndgrad.ones(2, dtype=ndgrad.bfloat16).numpy()


@pytest.mark.parametrize("name", ["bfloat16"] + FLOAT8 + UINTS)
def test_checkpoints_both_ways(name):
    t_dt, n_dt = getattr(torch, name), getattr(ndgrad, name)
    if name in UINTS:
        t = torch.tensor([[1, 2, 3], [65535, 7, 9]], dtype=t_dt)
    else:
        t = (torch.arange(-6, 6, dtype=torch.float32).reshape(2, 6) * 1.37).to(t_dt)
    buf = io.BytesIO()
    torch.save({"w": t, "row": t[1], "col": t[:, 1]}, buf)
    buf.seek(0)
    r = ndgrad.load(buf, weights_only=True)
    assert r["w"].dtype is n_dt and r["w"].float().tolist() == t.float().tolist()
    r["w"][1, 1] = 0                       # views of one storage stay one storage
    assert r["row"][1].item() == 0 and r["col"][1].item() == 0
    buf = io.BytesIO()
    ndgrad.save(r, buf)
    buf.seek(0)
    b = torch.load(buf, weights_only=True)
    t[1, 1] = 0
    assert b["w"].dtype is t_dt and torch.equal(b["w"].view(torch.uint8), t.view(torch.uint8))
    assert b["row"].untyped_storage().data_ptr() == b["w"].untyped_storage().data_ptr()


# ---------------------------------------------------------------- bfloat16 arithmetic
rng = np.random.default_rng(0)


def _pair(*shape):
    a = rng.standard_normal(shape).astype(np.float32)
    return ndgrad.tensor(a).to(ndgrad.bfloat16), torch.tensor(a).to(torch.bfloat16)


X, TX = _pair(64, 128)
Y, TY = _pair(64, 128)
W, TW = _pair(128, 32)
B, TB = _pair(32)
K, TK = _pair(8, 4, 3, 3)
CASES = {
    "add": lambda m, F, x, y, w, b, k: x + y, "sub": lambda m, F, x, y, w, b, k: x - y,
    "mul": lambda m, F, x, y, w, b, k: x * y, "div": lambda m, F, x, y, w, b, k: x / y,
    "add_scalar": lambda m, F, x, y, w, b, k: x + 0.1,
    "sub_scalar": lambda m, F, x, y, w, b, k: 0.1 - x,
    "add_alpha": lambda m, F, x, y, w, b, k: m.add(x, y, alpha=0.1),
    "mul_scalar": lambda m, F, x, y, w, b, k: x * 3.3,
    "div_scalar": lambda m, F, x, y, w, b, k: x / 3.3,
    "pow_scalar": lambda m, F, x, y, w, b, k: x.abs() ** 1.3,
    "exp": lambda m, F, x, y, w, b, k: x.exp(), "log": lambda m, F, x, y, w, b, k: x.abs().log(),
    "tanh": lambda m, F, x, y, w, b, k: x.tanh(),
    "sigmoid": lambda m, F, x, y, w, b, k: x.sigmoid(),
    "rsqrt": lambda m, F, x, y, w, b, k: x.abs().rsqrt(),
    "relu": lambda m, F, x, y, w, b, k: x.relu(), "gelu": lambda m, F, x, y, w, b, k: F.gelu(x),
    "silu": lambda m, F, x, y, w, b, k: F.silu(x),
    "softplus": lambda m, F, x, y, w, b, k: F.softplus(x),
    "clamp": lambda m, F, x, y, w, b, k: x.clamp(-0.5, 0.5),
    "where": lambda m, F, x, y, w, b, k: m.where(x > 0, x, y),
    "sum": lambda m, F, x, y, w, b, k: x.sum(), "sum1": lambda m, F, x, y, w, b, k: x.sum(1),
    "sum0": lambda m, F, x, y, w, b, k: x.sum(0), "mean": lambda m, F, x, y, w, b, k: x.mean(1),
    "amax": lambda m, F, x, y, w, b, k: x.amax(1), "var": lambda m, F, x, y, w, b, k: x.var(1),
    "std": lambda m, F, x, y, w, b, k: x.std(), "norm": lambda m, F, x, y, w, b, k: x.norm(),
    "cumsum": lambda m, F, x, y, w, b, k: x.cumsum(1),
    "sort": lambda m, F, x, y, w, b, k: x.sort(1)[0],
    "mm": lambda m, F, x, y, w, b, k: x @ w, "addmm": lambda m, F, x, y, w, b, k: m.addmm(b, x, w),
    "linear": lambda m, F, x, y, w, b, k: F.linear(x, w.t(), b),
    "bmm": lambda m, F, x, y, w, b, k: m.bmm(x.reshape(4, 16, 128), y.reshape(4, 128, 16)),
    "einsum": lambda m, F, x, y, w, b, k: m.einsum("ij,jk->ik", x, w),
    "conv2d": lambda m, F, x, y, w, b, k: F.conv2d(x.reshape(2, 4, 32, 32), k, padding=1),
    "softmax": lambda m, F, x, y, w, b, k: F.softmax(x, -1),
    "layer_norm": lambda m, F, x, y, w, b, k: F.layer_norm(x, (128,)),
    "mse_loss": lambda m, F, x, y, w, b, k: F.mse_loss(x, y),
    "cross_entropy": lambda m, F, x, y, w, b, k: F.cross_entropy(x, m.arange(64) % 128),
    # PyTorch rounds intermediate results here (logsumexp is composite, prod multiplies in
    # bfloat16, log_softmax's kernel): ndgrad computes in float32 and rounds once, within an
    # ulp (test_bf16_documented_differences)
}
DIFFERENT = {
    "prod": lambda m, F, x, y, w, b, k: (1.01 + x[:, :8] * 0.01).prod(1),
    "logsumexp": lambda m, F, x, y, w, b, k: x.logsumexp(1),
    "log_softmax": lambda m, F, x, y, w, b, k: F.log_softmax(x, -1),
}


def _bits(t):
    if isinstance(t, torch.Tensor):
        return t.view(torch.int16).numpy().view(np.uint16)
    return t._data.view(np.uint16)


@pytest.mark.parametrize("name", sorted(CASES))
def test_bf16_ops_bit_for_bit(name):
    f = CASES[name]
    got = f(ndgrad, NF, X, Y, W, B, K)
    want = f(torch, TF, TX, TY, TW, TB, TK)
    assert got.dtype is ndgrad.bfloat16 and want.dtype is torch.bfloat16
    assert got.shape == want.shape
    assert (_bits(got) == _bits(want)).all(), f"{(_bits(got) != _bits(want)).sum()} differ"


@pytest.mark.parametrize("name", sorted(DIFFERENT))
def test_bf16_documented_differences(name):
    f = DIFFERENT[name]
    got = f(ndgrad, NF, X, Y, W, B, K).double().numpy()
    want = f(torch, TF, TX, TY, TW, TB, TK).double().numpy()
    exact = f(torch, TF, TX.double(), TY.double(), TW.double(), TB.double(),
              TK.double()).numpy()
    ulp = 2.0 ** (np.floor(np.log2(np.abs(exact))) - 7)   # (bfloat16's spacing there)
    ulps = 4 if name == "prod" else 1     # (PyTorch's prod rounds after every product)
    assert (np.abs(got - want) <= ulps * ulp * 1.01).all()   # within an ulp of PyTorch's
    # ... and ndgrad's single rounding is no further from the exact value than PyTorch's
    assert np.abs(got - exact).mean() <= np.abs(want - exact).mean() * 1.01


def test_bf16_keeps_dtypes_and_views():
    x = ndgrad.arange(6.0).to(ndgrad.bfloat16)
    v = x[1:4]
    v[0] = 7.5
    assert x[1].item() == 7.5 and v._base is x
    assert (x + ndgrad.ones(6)).dtype is ndgrad.float32       # bf16 + f32 dim: float32
    assert (x + ndgrad.tensor(1.5)).dtype is ndgrad.bfloat16  # 0-dim f32: bfloat16
    assert (x + 1).dtype is ndgrad.bfloat16 and (x > 1).dtype is ndgrad.bool
    assert x.sum(dtype=ndgrad.float32).dtype is ndgrad.float32
    assert x.argmax().dtype is ndgrad.int64 and x.float().dtype is ndgrad.float32
    assert ndgrad.ones(2, dtype=ndgrad.bfloat16).is_floating_point()
    assert ndgrad.ones(3).bfloat16().dtype is ndgrad.bfloat16
    y = ndgrad.zeros(2, dtype=ndgrad.bfloat16)
    y.add_(1.3)
    assert y.dtype is ndgrad.bfloat16 and y.tolist() == torch.zeros(2).bfloat16().add_(1.3).tolist()


def test_bf16_autograd_matches_pytorch():
    a = rng.standard_normal((16, 8)).astype(np.float32)
    w1 = rng.standard_normal((8, 32)).astype(np.float32) * 0.3
    w2 = rng.standard_normal((32, 4)).astype(np.float32) * 0.3
    results = []
    for m, F in ((ndgrad, NF), (torch, TF)):
        x = m.tensor(a).to(m.bfloat16)
        p1 = m.tensor(w1).to(m.bfloat16).requires_grad_()
        p2 = m.tensor(w2).to(m.bfloat16).requires_grad_()
        h = F.gelu(x @ p1)
        loss = F.cross_entropy(h @ p2, m.arange(16) % 4)
        loss.backward()
        assert p1.grad.dtype is m.bfloat16
        results.append([loss.float().item(), p1.grad.float().reshape(-1).tolist(),
                        p2.grad.float().reshape(-1).tolist()])
    (ln, g1n, g2n), (lt, g1t, g2t) = results
    assert ln == pytest.approx(lt, rel=2 ** -6)   # (cross_entropy's log_softmax: an ulp)
    assert g2n == pytest.approx(g2t, rel=2 ** -7, abs=1e-3)
    assert g1n == pytest.approx(g1t, rel=2 ** -6, abs=1e-3)


# ---------------------------------------------------------------- restricted dtypes
RESTRICTED_OPS = {
    "a+a": lambda m, a: a + a, "a-a": lambda m, a: a - a, "a*a": lambda m, a: a * a,
    "a==a": lambda m, a: a == a, "a<a": lambda m, a: a < a, "-a": lambda m, a: -a,
    "sum": lambda m, a: a.sum(), "max": lambda m, a: a.max(), "abs": lambda m, a: a.abs(),
    "float": lambda m, a: a.float(), "cat": lambda m, a: m.cat([a, a]),
    "slice": lambda m, a: a[1:], "clone": lambda m, a: a.clone(),
    "reshape": lambda m, a: a.reshape(3, 1), "flip": lambda m, a: a.flip(0),
    "where": lambda m, a: m.where(a == a, a, a), "zeros_like": lambda m, a: m.zeros_like(a),
    "index": lambda m, a: a[m.tensor([0, 1])], "stack": lambda m, a: m.stack([a, a]),
    "maximum": lambda m, a: m.maximum(a, a), "argmax": lambda m, a: a.argmax(),
    "masked_fill": lambda m, a: a.masked_fill(a == a, 1), "fill_": lambda m, a: a.fill_(2),
    "mean": lambda m, a: a.mean(), "pow": lambda m, a: a.pow(2),
    "exp": lambda m, a: a.exp(), "sqrt": lambda m, a: a.sqrt(), "prod": lambda m, a: a.prod(),
    "cumsum": lambda m, a: a.cumsum(0), "sort": lambda m, a: a.sort()[0],
    "unique": lambda m, a: a.unique(), "div": lambda m, a: a / a,
    "mul_scalar": lambda m, a: a * 2, "eq_scalar": lambda m, a: a == 2,
    "mm": lambda m, a: a.reshape(3, 1) @ a.reshape(1, 3), "roll": lambda m, a: a.roll(1),
    "floor": lambda m, a: a.floor(), "sign": lambda m, a: a.sign(),
    "bitwise_and": lambda m, a: a & a, "clamp": lambda m, a: a.clamp(0, 1),
}


@pytest.mark.parametrize("name", UINTS + FLOAT8)
@pytest.mark.parametrize("op", sorted(RESTRICTED_OPS))
def test_restricted_dtype_ops_as_pytorch(name, op):
    f = RESTRICTED_OPS[op]
    vals = [1.0, 2.0, 3.5] if "float8" in name else [1, 2, 3]
    want = _outcome(lambda: f(torch, torch.tensor(vals).to(getattr(torch, name))))
    got = _outcome(lambda: f(ndgrad, ndgrad.tensor(vals).to(getattr(ndgrad, name))))
    if isinstance(want, tuple):
        assert got == want
    else:
        assert not isinstance(got, tuple), got
        assert str(got.dtype) == str(want.dtype)
        assert got.double().reshape(-1).tolist() == pytest.approx(
            want.double().reshape(-1).tolist(), rel=1e-6)


def test_bfloat16_and_float8_stay_on_the_host(standin):
    # CuPy has no bfloat16/float8 arrays: moving one to "cuda" says so (PyTorch would move it)
    for d in (ndgrad.bfloat16, ndgrad.float8_e4m3fn):
        with pytest.raises(TypeError, match="CuPy has no"):
            ndgrad.ones(2, dtype=d).to("cuda")
    assert ndgrad.ones(2).half().to("cuda").dtype is ndgrad.float16
