"""torch._foreach_*: all 91 names of PyTorch 2.13, every overload (Scalar, ScalarList, 0-d Tensor,
List, alpha), in-place and out-of-place forms, against PyTorch: values (the arithmetic ones bit
for bit), return conventions (a tuple of new tensors; the in-place forms return their list),
autograd, and PyTorch's errors."""
import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")

SHAPES = [(3, 4), (5,), ()]
EXACT = {"add", "sub", "mul", "div", "addcmul", "addcdiv", "lerp", "maximum", "minimum",
         "clamp_min", "clamp_max", "neg", "abs", "reciprocal", "sign", "zero", "copy",
         "clone", "max", "ceil", "floor", "round", "trunc", "frac"}


def _data(seed, dtype, low=0.2, high=0.9):
    rng = np.random.default_rng(seed)
    return [rng.uniform(low, high, s).astype(dtype) for s in SHAPES]


def _lists(arrays):
    return ([ndgrad.tensor(a.copy()) for a in arrays], [torch.tensor(a.copy()) for a in arrays])


def _check(name, ours, ref, exact=True):
    op = name.strip("_").replace("foreach_", "")
    assert type(ours) is type(ref) and len(ours) == len(ref), (name, type(ours), type(ref))
    for x, y in zip(ours, ref):
        assert isinstance(x, ndgrad.Tensor)
        a, b = x.numpy(), y.numpy()
        assert a.dtype == b.dtype and a.shape == b.shape, (name, a.dtype, b.dtype)
        if op in EXACT and exact:
            assert np.array_equal(a, b, equal_nan=True), (name, np.abs(a - b).max())
        else:
            np.testing.assert_allclose(a, b, rtol=2e-6 if a.dtype == np.float32 else 1e-13,
                                       atol=1e-7, err_msg=name)


def test_every_foreach_name_exists():
    names = [n for n in dir(torch) if n.startswith("_foreach_")]
    assert len(names) == 91
    missing = [n for n in names if not callable(getattr(ndgrad, n, None))]
    assert not missing, missing


UNARY = ("abs acos asin atan ceil cos cosh erf erfc exp expm1 floor frac lgamma log log10 log1p "
         "log2 neg reciprocal round rsqrt sigmoid sign sin sinh sqrt tan tanh trunc").split()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", UNARY)
def test_unary(op, dtype):
    arrays = _data(1, dtype)
    ours, ref = _lists(arrays)
    _check(op, getattr(ndgrad, f"_foreach_{op}")(ours), getattr(torch, f"_foreach_{op}")(ref))
    r1 = getattr(ndgrad, f"_foreach_{op}_")(ours)
    r2 = getattr(torch, f"_foreach_{op}_")(ref)
    assert r1 is ours and r2 is ref
    _check(op, tuple(ours), tuple(ref))


BINARY = [("add", True, True), ("sub", True, False), ("mul", False, True), ("div", False, True),
          ("clamp_min", False, False), ("clamp_max", False, False), ("maximum", False, False),
          ("minimum", False, False), ("pow", False, False)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op,alpha,tensor", BINARY, ids=[b[0] for b in BINARY])
def test_binary_overloads(op, alpha, tensor, dtype):
    arrays, others = _data(2, dtype), _data(3, dtype)
    scalars = [0.3, -1.25, 2.0]
    calls = [(lambda L, xs, ys: (xs, 0.37), False), (lambda L, xs, ys: (xs, scalars), False),
             (lambda L, xs, ys: (xs, ys), alpha)]
    if tensor:
        calls.append((lambda L, xs, ys: (xs, L.tensor(0.37, dtype=getattr(L, dtype))), alpha))
    for make, with_alpha in calls:
        for kw in ([{}, {"alpha": 0.7}] if with_alpha else [{}]):
            for inplace in (False, True):
                name = f"_foreach_{op}" + ("_" if inplace else "")
                ours, ref = _lists(arrays)
                o2, r2 = _lists(others)
                a1, a2 = make(ndgrad, ours, o2), make(torch, ref, r2)
                res1 = getattr(ndgrad, name)(*a1, **kw)
                res2 = getattr(torch, name)(*a2, **kw)
                if inplace:
                    assert res1 is ours and res2 is ref
                    res1, res2 = tuple(ours), tuple(ref)
                # (a 0-d tensor other times alpha: PyTorch's kernel hoists the loop-invariant
                # product out of its scalar tail loop, rounding it there, while its vector body
                # fuses it; ndgrad fuses everywhere)
                _check(name, res1, res2, exact=not (kw and isinstance(a2[1], torch.Tensor)))
    if op == "pow":   # the Scalar-and-Tensor form: a number to each power
        ours, ref = _lists(arrays)
        _check("pow", ndgrad._foreach_pow(2.0, ours), torch._foreach_pow(2.0, ref))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
def test_pointwise_overloads(op, dtype):
    arrays, t1, t2 = _data(4, dtype), _data(5, dtype), _data(6, dtype)
    for how in ("default", "value", "scalars", "tensor"):
        for inplace in (False, True):
            name = f"_foreach_{op}" + ("_" if inplace else "")
            args = []
            for L in (ndgrad, torch):
                xs, a = [L.tensor(x.copy()) for x in arrays], [L.tensor(x) for x in t1]
                b = [L.tensor(x) for x in t2]
                extra = {"default": (), "value": (0.37,), "scalars": ([0.5, -2.0, 1.5],),
                         "tensor": (L.tensor([0.5, -2.0, 1.5]),)}[how]
                args.append((xs, (xs, a, b) + extra))
            (xs1, a1), (xs2, a2) = args
            res1, res2 = getattr(ndgrad, name)(*a1), getattr(torch, name)(*a2)
            if inplace:
                assert res1 is xs1
                res1, res2 = tuple(xs1), tuple(xs2)
            _check(name, res1, res2)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lerp_overloads(dtype):
    arrays, ends, weights = _data(7, dtype), _data(8, dtype), _data(9, dtype, 0.0, 1.0)
    for how in ("list", "scalar", "scalars"):
        for inplace in (False, True):
            name = "_foreach_lerp" + ("_" if inplace else "")
            args = []
            for L in (ndgrad, torch):
                xs, e = [L.tensor(x.copy()) for x in arrays], [L.tensor(x) for x in ends]
                w = {"list": [L.tensor(x) for x in weights], "scalar": 0.3,
                     "scalars": [0.1, 0.6, 0.95]}[how]
                args.append((xs, (xs, e, w)))
            (xs1, a1), (xs2, a2) = args
            res1, res2 = getattr(ndgrad, name)(*a1), getattr(torch, name)(*a2)
            if inplace:
                res1, res2 = tuple(xs1), tuple(xs2)
            _check(name, res1, res2)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_reductions_and_copies(dtype):
    arrays = _data(10, dtype, -1.0, 1.0)
    ours, ref = _lists(arrays)
    for ord_ in (2, 1, float("inf"), 3):
        _check("norm", ndgrad._foreach_norm(ours, ord_), torch._foreach_norm(ref, ord_))
        _check("powsum", ndgrad._foreach_powsum(ours, ord_), torch._foreach_powsum(ref, ord_))
    _check("norm", ndgrad._foreach_norm(ours, 2, dtype=ndgrad.float64),
           torch._foreach_norm(ref, 2, dtype=torch.float64))
    _check("max", ndgrad._foreach_max(ours), torch._foreach_max(ref))
    _check("clone", ndgrad._foreach_clone(ours), torch._foreach_clone(ref))
    m1, m2 = _lists([np.ones((4, 2), dtype=dtype), np.ones((5, 3), dtype=dtype)])
    a1, a2 = _lists([np.arange(12, dtype=dtype).reshape(3, 4), np.ones((2, 5), dtype=dtype)])
    _check("mm", ndgrad._foreach_mm(a1, m1), torch._foreach_mm(a2, m2))
    src1, src2 = _lists(_data(11, dtype))
    assert ndgrad._foreach_copy_(ours, src1) is ours
    torch._foreach_copy_(ref, src2)
    _check("copy", tuple(ours), tuple(ref))
    v = ours[0]._version
    ndgrad._foreach_zero_(ours)
    torch._foreach_zero_(ref)
    _check("zero", tuple(ours), tuple(ref))
    assert ours[0]._version > v


def test_in_place_keeps_objects_and_versions_and_respects_autograd():
    xs = [ndgrad.ones(3, requires_grad=True), ndgrad.ones(2, requires_grad=True)]
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        ndgrad._foreach_add_(xs, 1)
    with ndgrad.no_grad():
        v = xs[0]._version
        arrays = [x._data for x in xs]
        ndgrad._foreach_mul_(xs, 2.0)
    assert xs[0]._version == v + 1 and all(x._data is a for x, a in zip(xs, arrays))
    # out of place with autograd: each result has its gradient function
    ys = ndgrad._foreach_mul(xs, [3.0, 4.0])
    sum(y.sum() for y in ys).backward()
    np.testing.assert_array_equal(xs[0].grad.numpy(), [3, 3, 3])
    np.testing.assert_array_equal(xs[1].grad.numpy(), [4, 4])
    zs = ndgrad._foreach_exp(xs)
    assert all(z.grad_fn is not None for z in zs)


def test_errors_match_torch():
    def both(f, first_line=False):
        errs = []
        for L in (torch, ndgrad):
            with pytest.raises(Exception) as e:
                f(L)
            errs.append(e.value)
        assert type(errs[1]) is type(errs[0]), (errs[0], errs[1])
        if first_line:   # (PyTorch's "didn't match because" notes under some signatures)
            assert str(errs[1]).splitlines()[0] == str(errs[0]).splitlines()[0]
        else:
            assert str(errs[1]) == str(errs[0]), (str(errs[0]), str(errs[1]))
    two = lambda L: [L.ones(2), L.ones(3)]    # noqa: E731
    both(lambda L: L._foreach_add([], 1))
    both(lambda L: L._foreach_add(two(L), [L.ones(2)]))
    both(lambda L: L._foreach_add(two(L), [1.0]))
    both(lambda L: L._foreach_add(two(L), L.ones(1)))
    both(lambda L: L._foreach_add([L.ones(2), 3], 1))
    both(lambda L: L._foreach_addcmul_([L.ones(2)], [L.ones(2)], [L.ones(2)], [1.0, 2.0]))
    both(lambda L: L._foreach_addcmul_([L.ones(2)], [L.ones(2)], [L.ones(2)], L.ones(2)))
    both(lambda L: L._foreach_addcmul_([L.ones(2)], [L.ones(2)], [L.ones(2)],
                                       L.tensor(1.0)))
    both(lambda L: L._foreach_mul_([L.ones(2, dtype=L.long)], 1.5))
    both(lambda L: L._foreach_max([L.ones(0)]))
    both(lambda L: L._foreach_add(two(L), 1, 2))
    both(lambda L: L._foreach_add(L.ones(2), 1), first_line=True)
    both(lambda L: L._foreach_sub_([L.ones(2, dtype=L.bool)], [L.ones(2, dtype=L.bool)]))
    both(lambda L: L._foreach_add(two(L), [L.ones(3), L.ones(2)]))
