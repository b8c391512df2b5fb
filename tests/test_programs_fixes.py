"""The gaps the program corpus (test_programs.py) revealed, each pinned against PyTorch:
torch.* re-exports with ATen signatures, bincount, det, fill_diagonal_, t_/squeeze_/unsqueeze_,
ragged-list errors, NumPy scalars as Python numbers, Module.float() on grads, torch.backends."""
import warnings

import numpy as np
import pytest

import ndgrad
from ndgrad.autograd import gradcheck, gradgradcheck


def _np(t):
    return t.detach().numpy()


def _pair(torch, arrays):
    return ([torch.from_numpy(a) for a in arrays], [ndgrad.from_numpy(a) for a in arrays])


RNG = np.random.default_rng(0)
X4 = RNG.standard_normal((2, 3, 6, 6))
CASES = {
    "conv2d": (lambda t, x, w: t.conv2d(x, w, None, 1, 1), [X4, RNG.standard_normal((4, 3, 3, 3))]),
    "conv1d": (lambda t, x, w: t.conv1d(x, w, stride=2), [X4[:, :, 0], RNG.standard_normal((2, 3, 2))]),
    "dropout_eval": (lambda t, x: t.dropout(x, 0.3, False), [X4]),
    "batch_norm": (lambda t, x, a, b, rm, rv: t.batch_norm(x, a, b, rm, rv, False, 0.1, 1e-5, False),
                   [X4, RNG.standard_normal(3), RNG.standard_normal(3), RNG.standard_normal(3),
                    RNG.uniform(1, 2, 3)]),
    "batch_norm_train": (lambda t, x, a, b: t.batch_norm(x, a, b, None, None, True, 0.1, 1e-5,
                                                         False),
                         [X4, RNG.standard_normal(3), RNG.standard_normal(3)]),
    "layer_norm": (lambda t, x, a, b: t.layer_norm(x, (6,), a, b), [X4, RNG.standard_normal(6),
                                                                    RNG.standard_normal(6)]),
    "group_norm": (lambda t, x, a, b: t.group_norm(x, 3, a, b), [X4, RNG.standard_normal(3),
                                                                RNG.standard_normal(3)]),
    "embedding": (lambda t, w: t.embedding(w, t.tensor([[1, 2], [0, 4]])),
                  [RNG.standard_normal((5, 3))]),
    "embedding_pad": (lambda t, w: t.embedding(w, t.tensor([1, 0, 1]), 1),
                      [RNG.standard_normal((5, 3))]),
    "max_pool2d": (lambda t, x: t.max_pool2d(x, 2), [X4]),
    "max_pool1d": (lambda t, x: t.max_pool1d(x, 3, 2), [X4[:, :, 0]]),
    "avg_pool1d": (lambda t, x: t.avg_pool1d(x, 2), [X4[:, :, 0]]),
    "broadcast_tensors": (lambda t, a, b: t.broadcast_tensors(a, b),
                          [RNG.standard_normal((3, 1)), RNG.standard_normal(4)]),
    "block_diag": (lambda t, a, b: t.block_diag(a, b), [RNG.standard_normal((2, 3)),
                                                        RNG.standard_normal(2)]),
    "cdist": (lambda t, a, b: t.cdist(a, b), [RNG.standard_normal((4, 3)),
                                              RNG.standard_normal((5, 3))]),
    "cdist_p1_batched": (lambda t, a, b: t.cdist(a, b, p=1), [RNG.standard_normal((2, 4, 3)),
                                                              RNG.standard_normal((2, 5, 3))]),
    "diff": (lambda t, a: t.diff(a), [RNG.standard_normal((3, 5))]),
    "diff_n2_prepend": (lambda t, a, p: t.diff(a, n=2, dim=0, prepend=p),
                        [RNG.standard_normal((3, 5)), RNG.standard_normal((1, 5))]),
    "dist": (lambda t, a, b: t.dist(a, b, 3), [RNG.standard_normal((3, 5)),
                                               RNG.standard_normal(5)]),
    "cosine_similarity": (lambda t, a, b: t.cosine_similarity(a, b, dim=0),
                          [RNG.standard_normal((3, 5)), RNG.standard_normal((3, 5))]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_top_level_function_matches_torch_and_gradchecks(name):
    torch = pytest.importorskip("torch")
    fn, arrays = CASES[name]
    ref_in, got_in = _pair(torch, arrays)
    ref, got = fn(torch, *ref_in), fn(ndgrad, *got_in)
    ref = ref if isinstance(ref, tuple) else (ref,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(ref) == len(got)
    for r, g in zip(ref, got):
        assert tuple(r.shape) == tuple(g.shape) and str(r.dtype) == str(g.dtype)
        np.testing.assert_allclose(_np(g), _np(r), rtol=1e-10, atol=1e-12)
    if name == "embedding_pad":  # the padding row gets no gradient, by definition
        return
    leaves = [t.detach().requires_grad_() for t in got_in]

    def f(*xs):
        out = fn(ndgrad, *xs)
        return out if isinstance(out, tuple) else (out,)
    assert gradcheck(f, leaves)
    if name not in ("max_pool2d", "max_pool1d", "cdist_p1_batched"):
        assert gradgradcheck(f, leaves)


def test_integer_top_level_functions():
    torch = pytest.importorskip("torch")
    for t in (torch, ndgrad):
        t.res = (t.cartesian_prod(t.tensor([1, 2, 3]), t.tensor([4, 5])),
                 t.diff(t.tensor([1, 4, 9, 9])), t.diff(t.tensor([True, False, False])),
                 t.detach(t.ones(2, requires_grad=True)))
    for r, g in zip(torch.res, ndgrad.res):
        assert str(r.dtype) == str(g.dtype) and r.tolist() == g.tolist()
        assert r.requires_grad == g.requires_grad
    del torch.res, ndgrad.res
    with pytest.raises(RuntimeError, match="Expect a 1D vector"):
        ndgrad.cartesian_prod(ndgrad.ones(2, 2))


def test_bincount_like_torch():
    torch = pytest.importorskip("torch")
    for L in (torch, ndgrad):
        a = L.tensor([0, 1, 1, 3])
        L.res = [L.bincount(a), L.bincount(a, minlength=6), a.bincount(weights=L.ones(4) * .5),
                 L.bincount(L.tensor([], dtype=L.int64)),
                 L.bincount(L.tensor([1]), weights=L.ones(1, dtype=L.int32)),
                 L.bincount(L.tensor([2], dtype=L.uint8))]
    for r, g in zip(torch.res, ndgrad.res):
        assert str(r.dtype) == str(g.dtype) and r.tolist() == g.tolist()
    del torch.res, ndgrad.res
    for bad, exc in ((ndgrad.tensor([-1, 2]), RuntimeError), (ndgrad.tensor([[1]]), RuntimeError),
                     (ndgrad.tensor([1.0]), NotImplementedError)):
        tbad = torch.tensor(bad.tolist())
        with pytest.raises(exc) as ours:
            ndgrad.bincount(bad)
        with pytest.raises(exc) as theirs:
            torch.bincount(tbad)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(RuntimeError, match="minlength should be >= 0"):
        ndgrad.bincount(ndgrad.tensor([1]), minlength=-1)
    with pytest.raises(RuntimeError, match="weights should be 1-d"):
        ndgrad.bincount(ndgrad.tensor([1, 2]), weights=ndgrad.ones(3))


def test_det_is_the_product_of_lu_pivots():
    torch = pytest.importorskip("torch")
    q = [[2.0, 1.0], [1.0, 3.0]]
    assert ndgrad.det(ndgrad.tensor(q, dtype=ndgrad.float64)).item() == 5.0  # NumPy: 5.000...01
    assert repr(ndgrad.det(ndgrad.tensor(q))) == repr(torch.det(torch.tensor(q)))
    rng = np.random.default_rng(1)
    for shape in [(3, 3), (4, 5, 5), (2, 3, 1, 1), (0, 0), (3, 0, 0), (2, 2)]:
        a = rng.standard_normal(shape)
        r, g = torch.det(torch.from_numpy(a)).numpy(), ndgrad.det(ndgrad.from_numpy(a)).numpy()
        assert r.shape == g.shape
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12)
    singular = ndgrad.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=ndgrad.float64)
    assert ndgrad.det(singular).item() == 0.0
    x = ndgrad.tensor(rng.standard_normal((2, 3, 3)), requires_grad=True)
    assert gradcheck(ndgrad.det, (x,)) and gradgradcheck(ndgrad.det, (x,))


def test_fill_diagonal_like_torch():
    torch = pytest.importorskip("torch")
    for shape, wrap in (((5, 2), True), ((2, 5), False), ((7, 3), True), ((7, 3), False),
                        ((2, 2, 2), False)):
        r = torch.zeros(shape).fill_diagonal_(2.0, wrap=wrap)
        g = ndgrad.zeros(shape).fill_diagonal_(2.0, wrap=wrap)
        assert g.tolist() == r.tolist()
    for shape, msg in (((3,), "dimensions must larger than 1"),
                       ((2, 3, 2), "all dimensions of input must be of equal length")):
        with pytest.raises(RuntimeError, match=msg):
            ndgrad.zeros(shape).fill_diagonal_(1)
        with pytest.raises(RuntimeError, match=msg):
            torch.zeros(shape).fill_diagonal_(1)
    x = ndgrad.ones(3, 3, requires_grad=True)
    y = x * 2
    y.fill_diagonal_(0)
    y.sum().backward()
    assert x.grad.tolist() == [[0, 2, 2], [2, 0, 2], [2, 2, 0]]
    assert type(y.grad_fn).__name__ == "CopySlices"
    w = ndgrad.tensor(np.random.default_rng(2).standard_normal((3, 4)), requires_grad=True)
    assert gradgradcheck(lambda t: (t * 1).fill_diagonal_(3.0) ** 2, (w,))


def test_reshaping_inplace_methods():
    a = ndgrad.ones(2, 3)
    a.t_()
    assert a.shape == (3, 2) and a._version == 1 and not a.is_contiguous()
    b = ndgrad.ones(2, 3)
    v = b[0]
    b.unsqueeze_(0)
    assert b.shape == (1, 2, 3) and v._base is b
    b.squeeze_()
    v += 1
    assert b.tolist() == [[2, 2, 2], [1, 1, 1]]
    c = ndgrad.ones(2, 3)
    c.transpose_(0, 1).swapaxes_(0, 1)
    assert c.shape == (2, 3)
    leaf = ndgrad.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        leaf.unsqueeze_(0)
    assert leaf.shape == (2,)
    x = ndgrad.ones(2, 3, requires_grad=True)
    y = x * 2
    y.unsqueeze_(1).retain_grad()
    (y * ndgrad.arange(3.0)).sum().backward()
    assert y.grad.shape == (2, 1, 3) and x.grad.tolist() == [[0, 2, 4], [0, 2, 4]]


def test_integer_index_is_a_view_so_augmented_assignment_writes_through():
    c = ndgrad.zeros(2, 2, dtype=ndgrad.long)
    c[1, 0] += 1
    assert c.tolist() == [[0, 0], [1, 0]]
    x = ndgrad.arange(3.0)
    x[1].mul_(5)
    assert x.tolist() == [0, 5, 2] and x._version == 1
    w = ndgrad.ones(3, requires_grad=True)
    h = w * 2
    h[1] *= 3
    h.sum().backward()
    assert w.grad.tolist() == [2, 6, 2]


@pytest.mark.parametrize("data", [[[1, 2], [3]], [[1, 2], [3, [4]]], [[1], [2, 3]],
                                  [[[1, 2]], [[3]]], [1, [2]], [[1, 2], 3]])
def test_ragged_nested_lists_raise_torchs_error(data):
    torch = pytest.importorskip("torch")
    with pytest.raises((TypeError, ValueError)) as theirs:
        torch.tensor(data)
    with pytest.raises(type(theirs.value), match=None) as ours:
        ndgrad.tensor(data)
    assert str(ours.value) == str(theirs.value)


def test_numpy_scalars_infer_and_promote_like_torch():
    torch = pytest.importorskip("torch")
    datas = [np.float32(1.5), [np.float64(0.5)], [[np.float64(0.5)] * 2] * 2, [np.float32(1)],
             [np.int32(3)], [np.float32(1), 2.0], [np.float64(1), np.float32(2)],
             [np.float16(1)], [np.array([1.0, 2.0]), np.array([3.0, 4.0])], [1, np.float32(2)],
             [True, np.int8(3)], [1.0, 2.0], [[1, 2]]]
    for d in datas:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch: "creating a tensor from a list of arrays"
            expected = str(torch.tensor(d).dtype)
        assert str(ndgrad.tensor(d).dtype) == expected, d
    for L in (torch, ndgrad):
        f, i = L.tensor([1.0, 2.0]), L.tensor([1, 2])
        L.res = [f * np.float64(2.0), f + np.int64(1), i * np.float32(1.5), i + np.int64(1),
                 np.float64(2.0) * f, f.pow(np.float64(2.0))]
    for r, g in zip(torch.res, ndgrad.res):
        assert type(g) is ndgrad.Tensor
        assert str(r.dtype) == str(g.dtype) and r.tolist() == g.tolist()
    del torch.res, ndgrad.res


def test_module_dtype_conversion_keeps_the_grad_object():
    lin = ndgrad.nn.Linear(2, 1).double()
    lin(ndgrad.ones(1, 2, dtype=ndgrad.float64)).sum().backward()
    g = lin.weight.grad
    lin.float()
    assert lin.weight.grad is g and g.dtype == ndgrad.float32 and g._data.dtype == np.float32


def test_seeding_boilerplate_and_legacy_types(monkeypatch):
    monkeypatch.setattr(ndgrad.backends.cudnn, "deterministic", True)
    monkeypatch.setattr(ndgrad.backends.cudnn, "benchmark", False)
    assert not ndgrad.backends.cudnn.is_available() and not ndgrad.backends.mps.is_available()
    ndgrad.use_deterministic_algorithms(True)
    assert ndgrad.are_deterministic_algorithms_enabled()
    ndgrad.use_deterministic_algorithms(False)
    ndgrad.set_num_threads(1)
    assert ndgrad.get_num_threads() >= 1
    assert ndgrad.tensor([1.5, 2.0]).type(ndgrad.IntTensor).tolist() == [1, 2]
    assert ndgrad.tensor([1, 2]).type(ndgrad.DoubleTensor).dtype == ndgrad.float64
    assert [c.__name__ for c in (ndgrad.FloatTensor, ndgrad.IntTensor, ndgrad.LongTensor)] == \
        ["FloatTensor", "IntTensor", "LongTensor"]


def test_node_name_of_cpp_nodes_has_torch_namespace():
    torch = pytest.importorskip("torch")
    for L in (torch, ndgrad):
        x = L.ones(2, requires_grad=True)
        y = x * 1
        y[0] = 2
        L.res = [y.grad_fn.name(), (x * 2).grad_fn.name(),
                 (x * 2).grad_fn.next_functions[0][0].name()]
    assert ndgrad.res == torch.res
    del torch.res, ndgrad.res


ERRORS = {
    "ce_float_target": lambda t: t.nn.functional.cross_entropy(t.ones(2, 3), t.tensor([0.0, 1.0])),
    "bce_long_target": lambda t: t.nn.functional.binary_cross_entropy(t.tensor([0.5]),
                                                                      t.tensor([1])),
    "bce_double_target": lambda t: t.nn.functional.binary_cross_entropy(t.tensor([0.5]),
                                                                        t.tensor([1.0],
                                                                                 dtype=t.float64)),
    "gather_float_index": lambda t: t.ones(2, 3).gather(1, t.tensor([[0.0]])),
    "scatter_float_index": lambda t: t.ones(3).scatter(0, t.tensor([0.0]), 1.0),
    "int_factory_requires_grad": lambda t: t.tensor([1, 2], requires_grad=True),
    "int_ones_requires_grad": lambda t: t.ones(2, dtype=t.long, requires_grad=True),
    "int_requires_grad_": lambda t: t.ones(2, dtype=t.long).requires_grad_(),
    "arange_bad_step": lambda t: t.arange(0, 10, -1),
    "zeros_negative": lambda t: t.zeros(2, -1),
    "ones_negative": lambda t: t.ones(2, -1),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_type_and_message_match_torch(name):
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception) as theirs:
        ERRORS[name](torch)
    with pytest.raises(type(theirs.value)) as ours:
        ERRORS[name](ndgrad)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_matches_torch(interpolation):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    for shape in [(7,), (4, 5), (3, 4, 6), (1,)]:
        a = rng.standard_normal(shape)
        a.flat[-1] = np.nan if shape == (4, 5) else a.flat[-1]
        for dim in [None] + list(range(-len(shape), len(shape))):
            for keep in (False, True):
                for q in [0.0, 0.37, 0.5, 1.0, [0.1, 0.5, 0.9]]:
                    def run(L, a=a, q=q, dim=dim, keep=keep):
                        qt = L.tensor(q, dtype=L.float64) if isinstance(q, list) else q
                        return L.quantile(L.from_numpy(a), qt, dim=dim, keepdim=keep,
                                          interpolation=interpolation)
                    r, g = run(torch), run(ndgrad)
                    assert tuple(r.shape) == tuple(g.shape)
                    np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-12, atol=1e-12)
    x32 = rng.standard_normal((5, 6)).astype(np.float32)
    r = torch.from_numpy(x32).quantile(0.3, dim=1, interpolation=interpolation)
    g = ndgrad.from_numpy(x32).quantile(0.3, dim=1, interpolation=interpolation)
    assert g.dtype == ndgrad.float32
    np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-6)
    x = ndgrad.tensor(rng.standard_normal((3, 5)), requires_grad=True)
    qv = ndgrad.tensor([0.3, 0.8], dtype=ndgrad.float64)
    assert gradcheck(lambda t: t.quantile(qv, dim=1, interpolation=interpolation), (x,))


QUANTILE_ERRORS = {
    "int_input": lambda t: t.quantile(t.tensor([1, 2]), 0.5),
    "q_range": lambda t: t.quantile(t.ones(3), 1.5),
    "q_2d": lambda t: t.quantile(t.ones(3), t.tensor([[0.5]])),
    "q_dtype": lambda t: t.quantile(t.ones(3), t.tensor([0.5], dtype=t.float64)),
    "empty": lambda t: t.quantile(t.ones(0), 0.5),
    "mode": lambda t: t.quantile(t.ones(3), 0.5, interpolation="foo"),
}


@pytest.mark.parametrize("name", sorted(QUANTILE_ERRORS))
def test_quantile_errors_match_torch(name):
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as theirs:
        QUANTILE_ERRORS[name](torch)
    with pytest.raises(RuntimeError) as ours:
        QUANTILE_ERRORS[name](ndgrad)
    assert str(ours.value) == str(theirs.value)


def test_broadcast_tensors_returns_inputs_that_already_have_the_shape():
    torch = pytest.importorskip("torch")
    for lib in (torch, ndgrad):
        a = lib.ones(3, requires_grad=True)
        b, c = lib.ones(3), lib.ones(2, 1)
        r = lib.broadcast_tensors(a, b)
        assert r[0] is a and r[1] is b
        r = lib.broadcast_tensors(a, c)
        assert type(r[0].grad_fn).__name__ == "ExpandBackward0" and r[0].shape == (2, 3)
        n = lib.distributions.Normal(a, lib.ones(3))
        assert n.mean is a


def test_one_piece_split_chunk_unbind_match_pytorch():
    # a split into one piece used to return a stacked tensor and recurse in backward
    torch = pytest.importorskip("torch")
    res = []
    for lib in (torch, ndgrad):
        x = lib.tensor(np.arange(8.).reshape(2, 4), requires_grad=True)
        pieces = [x.chunk(1), x.chunk(1, 1), lib.split(x, 5), lib.split(x, [2]), x.unbind(0),
                  x[:1].unbind(0), x.split(4, 1), x.tensor_split(1)]
        tot = sum((p * (i + 1)).sum() for i, ps in enumerate(pieces) for p in ps)
        tot.backward()
        res.append(([tuple(p.shape) for ps in pieces for p in ps],
                    [type(p.grad_fn).__name__ for ps in pieces for p in ps], x.grad.tolist()))
    assert res[0] == res[1]


def test_einsum_gradient_of_complex_operands_matches_pytorch():
    # fno.py: einsum's formula used the other operands unconjugated
    torch = pytest.importorskip("torch")
    a = RNG.standard_normal((2, 3, 4)) + 1j * RNG.standard_normal((2, 3, 4))
    w = RNG.standard_normal((3, 5, 4)) + 1j * RNG.standard_normal((3, 5, 4))
    g = RNG.standard_normal((2, 5, 4))
    res = []
    for lib in (torch, ndgrad):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(w, requires_grad=True)
        out = lib.einsum("bim,iom->bom", x, y)
        (out.real * lib.tensor(g) + out.imag).sum().backward()
        res.append((x.grad.numpy(), y.grad.numpy()))
    np.testing.assert_allclose(res[1][0], res[0][0], atol=1e-12)
    np.testing.assert_allclose(res[1][1], res[0][1], atol=1e-12)
    x = ndgrad.tensor(a, requires_grad=True)
    y = ndgrad.tensor(w, requires_grad=True)
    assert gradcheck(lambda x, y: ndgrad.einsum("bim,iom->bom", x, y), (x, y))
    assert gradgradcheck(lambda x, y: ndgrad.einsum("bim,iom->bom", x, y), (x, y))


def test_adam_steps_a_complex_parameter_whose_gradient_is_not_contiguous():
    # fno.py: a transposed complex gradient could not be viewed as real pairs
    torch = pytest.importorskip("torch")
    w0 = RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))
    res = []
    for lib in (torch, ndgrad):
        p = lib.nn.Parameter(lib.tensor(w0))
        opt = lib.optim.Adam([p], lr=0.1)
        for k in range(2):
            p.grad = (lib.tensor(w0.T) * (k + 1)).t()  # a transposed (strided) gradient
            opt.step()
        res.append(p.detach().numpy())
    np.testing.assert_allclose(res[1], res[0], atol=1e-12)
