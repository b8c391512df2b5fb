"""Tensor basics: dtypes and promotion, metadata, conversions, creation, random numbers."""
import numpy as np
import pytest

import ndgrad


@pytest.fixture(autouse=True)
def _restore_default_dtype():
    yield
    ndgrad.set_default_dtype(ndgrad.float32)


def test_dtype_names_and_aliases():
    assert ndgrad.float is ndgrad.float32 and ndgrad.double is ndgrad.float64
    assert ndgrad.long is ndgrad.int64 and ndgrad.int is ndgrad.int32
    assert ndgrad.half is ndgrad.float16
    assert repr(ndgrad.float64) == "torch.float64"
    assert ndgrad.float32.is_floating_point and not ndgrad.int64.is_floating_point
    assert ndgrad.float32.itemsize == 4


def test_default_dtype():
    assert ndgrad.get_default_dtype() is ndgrad.float32
    assert ndgrad.tensor([1.0]).dtype is ndgrad.float32
    assert ndgrad.tensor([1]).dtype is ndgrad.int64
    assert ndgrad.tensor([True]).dtype is ndgrad.bool
    assert ndgrad.tensor(np.zeros(2)).dtype is ndgrad.float64  # arrays keep their dtype
    ndgrad.set_default_dtype(ndgrad.float64)
    assert ndgrad.tensor([1.0]).dtype is ndgrad.float64
    assert ndgrad.ones(2).dtype is ndgrad.float64
    with pytest.raises(TypeError, match="only floating-point types are supported as the default type"):
        ndgrad.set_default_dtype(ndgrad.int64)


PROMOTION_CASES = [
    # (left, right) -> expected: tensors of given dtype/shape, or Python scalars
    (("float32", (2,)), 2, "float32"),
    (("float32", (2,)), 2.5, "float32"),
    (("int64", (2,)), 2.5, "float32"),
    (("int32", (2,)), 2, "int32"),
    (("bool", (2,)), 1, "int64"),
    (("bool", (2,)), True, "bool"),
    (("float16", (2,)), ("int64", (2,)), "float16"),
    (("uint8", (2,)), ("int8", (2,)), "int16"),
    (("int32", (2,)), ("float64", ()), "float64"),
    (("float32", (2,)), ("float64", ()), "float32"),
    (("float32", (2,)), ("float64", (2,)), "float64"),
    (("int32", (2,)), ("int64", ()), "int32"),
]


def _mk(lib, spec):
    if not isinstance(spec, tuple):
        return spec
    name, shape = spec
    return lib.ones(shape, dtype=getattr(lib, name))


@pytest.mark.parametrize("a,b,expected", PROMOTION_CASES)
def test_promotion_rules(a, b, expected):
    r = _mk(ndgrad, a) + _mk(ndgrad, b)
    assert r.dtype is getattr(ndgrad, expected)
    r = _mk(ndgrad, b) * _mk(ndgrad, a)
    assert r.dtype is getattr(ndgrad, expected)


@pytest.mark.parametrize("a,b,expected", PROMOTION_CASES)
def test_promotion_matches_torch(a, b, expected):
    torch = pytest.importorskip("torch")
    assert (_mk(torch, a) + _mk(torch, b)).dtype == getattr(torch, expected)


def test_int_division_gives_default_float():
    x = ndgrad.tensor([1, 2, 3])
    assert (x / 2).dtype is ndgrad.float32
    assert (x // 2).dtype is ndgrad.int64
    assert ndgrad.promote_types(ndgrad.int64, ndgrad.float16) is ndgrad.float16


def test_metadata():
    x = ndgrad.zeros(2, 3, 4)
    assert x.shape == (2, 3, 4) and repr(x.shape) == "torch.Size([2, 3, 4])"
    assert x.size() == (2, 3, 4) and x.size(1) == 3 and x.size(-1) == 4
    assert x.dim() == 3 and x.ndim == 3 and x.numel() == 24
    assert str(x.device) == "cpu" and x.device == ndgrad.device("cpu")
    assert x.stride() == (12, 4, 1) and x.is_contiguous()
    assert len(x) == 2
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-3, 2\], but got 3\)"):
        x.size(3)
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(ndgrad.tensor(1.0))


def test_item_tolist_and_scalars():
    x = ndgrad.tensor([[1.5, 2.0], [3.0, 4.0]])
    assert x.tolist() == [[1.5, 2.0], [3.0, 4.0]]
    assert ndgrad.tensor(3.5).item() == 3.5 and isinstance(ndgrad.tensor(3).item(), int)
    assert float(ndgrad.tensor([2.5])) == 2.5 and int(ndgrad.tensor(7)) == 7
    with pytest.raises(RuntimeError, match="a Tensor with 4 elements cannot be converted to Scalar"):
        x.item()
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        bool(x)


def test_numpy_shares_memory_and_requires_grad_error():
    a = np.arange(4.0)
    t = ndgrad.from_numpy(a)
    a[0] = 10
    assert t[0].item() == 10
    t.numpy()[1] = 20
    assert a[1] == 20
    assert np.asarray(t) is not None and np.asarray(t)[1] == 20
    w = ndgrad.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad. Use tensor.detach\(\).numpy\(\) instead."):
        w.numpy()
    assert w.detach().numpy().tolist() == [1.0, 1.0]


def test_tensor_copies_as_tensor_shares():
    a = np.ones(3)
    t = ndgrad.tensor(a)
    a[0] = 5
    assert t[0].item() == 1
    s = ndgrad.as_tensor(a)
    a[1] = 7
    assert s[1].item() == 7
    x = ndgrad.ones(2)
    assert ndgrad.as_tensor(x) is x


def test_creation_functions():
    assert ndgrad.zeros(2, 3).tolist() == [[0.0] * 3] * 2
    assert ndgrad.ones((2,)).dtype is ndgrad.float32
    assert ndgrad.full((2,), 7).dtype is ndgrad.int64
    assert ndgrad.full((2,), 7.0).tolist() == [7.0, 7.0]
    assert ndgrad.empty(3).shape == (3,)
    assert ndgrad.arange(5).tolist() == [0, 1, 2, 3, 4] and ndgrad.arange(5).dtype is ndgrad.int64
    assert ndgrad.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert ndgrad.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert ndgrad.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    x = ndgrad.ones(2, 3, dtype=ndgrad.float64)
    for f in (ndgrad.zeros_like, ndgrad.ones_like, ndgrad.empty_like, ndgrad.rand_like, ndgrad.randn_like):
        y = f(x)
        assert y.shape == x.shape and y.dtype is ndgrad.float64
    assert ndgrad.full_like(x, 3).tolist() == [[3.0] * 3] * 2
    assert ndgrad.zeros(2, requires_grad=True).requires_grad


def test_creation_matches_torch():
    torch = pytest.importorskip("torch")
    for f, args, kw in [("arange", (1, 10, 3), {}), ("arange", (0.5, 2.0, 0.5), {}),
                        ("linspace", (-1, 1, 7), {}), ("eye", (3, 2), {}),
                        ("full", ((2, 2), 1.5), {}), ("zeros", (2, 3), {"dtype": "int32"})]:
        kw_n = {k: getattr(ndgrad, v) for k, v in kw.items()}
        kw_t = {k: getattr(torch, v) for k, v in kw.items()}
        a = getattr(ndgrad, f)(*args, **kw_n)
        b = getattr(torch, f)(*args, **kw_t)
        assert repr(a) == repr(b)


def test_random_reproducible():
    ndgrad.manual_seed(0)
    a = ndgrad.randn(5)
    b = ndgrad.rand(3)
    c = ndgrad.randint(0, 10, (4,))
    ndgrad.manual_seed(0)
    assert ndgrad.randn(5).tolist() == a.tolist()
    assert ndgrad.rand(3).tolist() == b.tolist()
    assert ndgrad.randint(0, 10, (4,)).tolist() == c.tolist()
    assert c.dtype is ndgrad.int64 and all(0 <= v < 10 for v in c.tolist())
    g1 = ndgrad.Generator().manual_seed(42)
    g2 = ndgrad.Generator().manual_seed(42)
    assert ndgrad.randn(3, generator=g1).tolist() == ndgrad.randn(3, generator=g2).tolist()
    n = ndgrad.normal(2.0, 0.5, size=(1000,)).numpy()
    assert abs(n.mean() - 2.0) < 0.1 and abs(n.std() - 0.5) < 0.1
    u = ndgrad.rand(1000).numpy()
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.05


def test_generator_state_roundtrip():
    g = ndgrad.Generator().manual_seed(3)
    s = g.get_state()
    a = ndgrad.rand(4, generator=g).tolist()
    g.set_state(s)
    assert ndgrad.rand(4, generator=g).tolist() == a
    st = ndgrad.get_rng_state()
    x = ndgrad.randn(2).tolist()
    ndgrad.set_rng_state(st)
    assert ndgrad.randn(2).tolist() == x


def test_requires_grad_on_integer_errors():
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        ndgrad.ones(2, dtype=ndgrad.long).requires_grad_()
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can "
                                           "require gradients"):  # the factories' wording
        ndgrad.tensor([1, 2], requires_grad=True)


def test_broadcast_shape_error_matches_torch():
    with pytest.raises(RuntimeError) as e:
        ndgrad.ones(2, 3) + ndgrad.ones(2, 4)
    assert str(e.value) == ("The size of tensor a (3) must match the size of tensor b (4) at "
                            "non-singleton dimension 1")
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as e2:
        torch.ones(2, 3) + torch.ones(2, 4)
    assert str(e.value) == str(e2.value)


def test_seed_tutorial_reprs_match_torch():
    torch = pytest.importorskip("torch")
    x_n = ndgrad.ones(2, 2, requires_grad=True)
    x_t = torch.ones(2, 2, requires_grad=True)
    for f in (lambda x: x + 2, lambda x: (x + 2) * (x + 2) * 3, lambda x: ((x + 2) ** 2 * 3).mean(),
              lambda x: (x * x).sum(), lambda x: x / 3, lambda x: x - 1, lambda x: x.exp(),
              lambda x: x.double(), lambda x: x.long(), lambda x: x > 0):
        assert repr(f(x_n)) == repr(f(x_t))
    assert repr(ndgrad.tensor(27.0, requires_grad=True).mean()) == repr(torch.tensor(27.0, requires_grad=True).mean())


def test_finfo_iinfo_are_python_numbers_with_pytorch_repr():
    torch = pytest.importorskip("torch")
    for d in ("float16", "float32", "float64"):
        f, g = ndgrad.finfo(getattr(ndgrad, d)), torch.finfo(getattr(torch, d))
        assert repr(f) == repr(g)
        for k in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
            assert getattr(f, k) == getattr(g, k) and type(getattr(f, k)) is type(getattr(g, k))
    assert repr(ndgrad.finfo()) == repr(torch.finfo())
    for d in ("uint8", "int8", "int16", "int32", "int64"):
        i, j = ndgrad.iinfo(getattr(ndgrad, d)), torch.iinfo(getattr(torch, d))
        assert repr(i) == repr(j) and (i.bits, i.min, i.max, i.dtype) == (j.bits, j.min, j.max, j.dtype)
        assert type(i.max) is int


def test_math_constants_as_pytorch():
    torch = pytest.importorskip("torch")
    for name in ("inf", "pi", "e", "newaxis"):
        assert getattr(ndgrad, name) == getattr(torch, name)
    assert ndgrad.nan != ndgrad.nan and type(ndgrad.pi) is float
