"""Causes found running torch-based libraries' own test suites under ndgrad
(bench/ecosystem.py), each checked against PyTorch."""
import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shapes", [((256, 1), (256, 1), (3,)), ((5, 1), (1, 4), (5, 4)),
                                    ((4,), (4,), (3, 4)), ((2, 1, 3), (2, 1, 3), (4, 1))])
def test_lerp_with_a_weight_broadcasting_both_ends(shapes, dtype):
    """zuko's Gauss-Legendre nodes: lerp(a[..., None], b[..., None], nodes), the weight wider
    than both ends (the float32 fused multiply-add path multiplied in place)."""
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    arrays[2] = rng.uniform(-0.5, 1.5, shapes[2]).astype(dtype)
    ours = ndgrad.lerp(*(ndgrad.tensor(a, requires_grad=True) for a in arrays))
    theirs = torch.lerp(*(torch.tensor(a, requires_grad=True) for a in arrays))
    assert ours.shape == theirs.shape
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    t = ndgrad.tensor(arrays[0])
    ours = ndgrad.addcmul(t, ndgrad.tensor(arrays[1]), ndgrad.tensor(arrays[2]), value=0.5)
    theirs = torch.addcmul(torch.tensor(arrays[0]), torch.tensor(arrays[1]),
                           torch.tensor(arrays[2]), value=0.5)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_iterating_and_unbinding_an_empty_dimension():
    """zuko: `for child in adjacency[:, node].nonzero()` with no nonzero entry."""
    for lib in (torch, ndgrad):
        assert list(lib.zeros(0, 1)) == []
        assert lib.unbind(lib.zeros(0, 3)) == ()
        assert lib.zeros(2, 0).unbind(1) == ()
        x = lib.zeros(0, 2, requires_grad=True)
        assert list(x) == [] and x.unbind(0) == ()


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_with_batched_grad_outputs(create_graph):
    """zuko's CNF: the exact Jacobian through grad(dx, x, I, is_grads_batched=True)."""
    rng = np.random.default_rng(1)
    xv, wv = rng.standard_normal((4, 3)), rng.standard_normal((3, 3))
    eye = np.broadcast_to(np.eye(3)[:, None, :], (3, 4, 3)).copy()
    res = []
    for lib in (torch, ndgrad):
        x = lib.tensor(xv, requires_grad=True)
        w = lib.tensor(wv, requires_grad=True)
        y = lib.tanh(x @ w)
        jac, = lib.autograd.grad(y, x, lib.tensor(eye), create_graph=create_graph,
                                 retain_graph=True, is_grads_batched=True)
        assert jac.requires_grad == create_graph
        extra = (lib.autograd.grad(lib.einsum("i...i", jac).sum(), w, retain_graph=True)[0]
                 if create_graph else jac)
        both = lib.autograd.grad((y * 2, y.sum()), (x, w),
                                 (lib.tensor(eye), lib.ones(3)), is_grads_batched=True)
        res.append([jac.detach().numpy(), extra.detach().numpy()] + [g.numpy() for g in both])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    # PyTorch's message slices the batch dimension twice (it reports grad_output[0][0]'s
    # trailing shape, torch.Size([]) here); ndgrad names the shape that fails to match
    for lib, shown in ((torch, r"\(\[\]\)"), (ndgrad, r"\(\[3\]\)")):
        x = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match=r"If `is_grads_batched=True`, we interpret the "
                           r"first dimension.*grad_output\[0\] has a shape of torch.Size" + shown
                           + r" and output\[0\] has a shape of torch.Size\(\[2\]\)"):
            lib.autograd.grad(x * 2, x, lib.ones(2, 3), is_grads_batched=True)


def test_grad_after_create_graph_is_a_fresh_tensor_zero_grad_can_detach():
    """torch-optimizer's tests: backward(create_graph=True) then zero_grad(set_to_none=False),
    which detach_()es .grad: the first .grad must be a fresh tensor recording a copy (PyTorch's
    clone_obey_contract), not the engine's gradient (a view for a transposed weight)."""
    got = []
    for lib in (torch, ndgrad):
        lib.manual_seed(0)
        m = lib.nn.Linear(3, 2)
        x = lib.tensor(np.arange(15.0).reshape(5, 3) / 10, dtype=lib.float32)
        opt = lib.optim.SGD(m.parameters(), lr=0.1)
        rows = []
        for _ in range(3):
            opt.zero_grad(set_to_none=False)
            lib.sigmoid(m(x)).sum().backward(create_graph=True)
            rows.append([(type(p.grad.grad_fn).__name__, p.grad._is_view(), p.grad.requires_grad,
                          p.grad.detach().numpy().copy()) for p in m.parameters()])
            opt.step()
        got.append(rows)
    for ours, theirs in zip(got[1], got[0]):
        for a, b in zip(ours, theirs):
            assert a[:3] == b[:3]
            np.testing.assert_allclose(a[3], b[3], rtol=1e-6)


NUMPY_NAME_CALLS = [
    "torch.sum(x, axis=0)", "torch.sum(x=x, axis=1, keepdims=True)", "torch.sum(a=x)",
    "torch.stack([x, x], axis=1)", "torch.cat([x, x], axis=1)", "torch.cumsum(x, axis=1)",
    "torch.logsumexp(x, axis=0)", "torch.prod(x, axis=1)", "torch.add(x1=x, x2=x)",
    "torch.softmax(x, axis=1)", "torch.std(x, axis=0)", "x.mean(axis=1)", "x.sum(axis=-1, keepdims=True)",
    "x.argmax(axis=1)", "x.unsqueeze(axis=0)", "x.max(axis=1).values", "x.std(axis=0)",
    "x[None].squeeze(axis=0)", "(x > 1).any(axis=0)", "x.sort(axis=0).values",
    "x.index_select(axis=1, index=torch.tensor([0]))", "x.gather(axis=1, index=torch.tensor([[0], [1]]))",
    "x.narrow(axis=1, start=0, length=1)", "x.topk(1, axis=1).values", "x.prod(axis=1)",
    "x.all(axis=1)", "x.nansum(axis=1)", "x.amax(axis=1)", "x.median(axis=1).values",
    "x.count_nonzero(axis=1)", "x.diff(axis=1)", "x.repeat_interleave(2, axis=0)",
    "x.select(axis=0, index=1)", "x.log_softmax(axis=1)", "x.add(x2=x)",
]
NUMPY_NAME_ERRORS = ["torch.sum(x, dim=0, axis=0)", "torch.nn.functional.softmax(x, axis=1)",
                     "torch.norm(x, axis=0)", "x.unsqueeze()", "x.gather(axis=1)"]


@pytest.mark.parametrize("call", NUMPY_NAME_CALLS)
def test_numpy_names_of_native_functions(call):
    """PyTorch's argument parser takes axis=/keepdims=/x=/a=/x1=/x2= for dim/keepdim/input/
    other in every native function and Tensor method (gpytorch's stack(axis=), pyro's
    cumsum(axis=), torchmetrics' sum(axis=), skorch's argmax(axis=))."""
    res = []
    for lib in (torch, ndgrad):
        x = lib.arange(6.0).reshape(2, 3)
        res.append(eval(call, {"torch": lib, "x": x}))
    np.testing.assert_allclose(res[1].numpy(), res[0].numpy(), rtol=1e-6)


@pytest.mark.parametrize("call", NUMPY_NAME_ERRORS)
def test_numpy_names_where_pytorch_refuses_them(call):
    for lib in (torch, ndgrad):
        x = lib.arange(6.0).reshape(2, 3)
        with pytest.raises(TypeError):
            eval(call, {"torch": lib, "x": x})


def test_lognormal_and_halfnormal_are_transformed_distributions():
    """pyro's LogNormal calls TransformedDistribution.__init__(base, ExpTransform()) through
    super(torch.distributions.LogNormal, self): PyTorch's class hierarchy, and the same values."""
    res = []
    for lib in (torch, ndgrad):
        D = lib.distributions

        class PyroLogNormal(D.LogNormal):
            def __init__(self, loc, scale, validate_args=None):
                super(D.LogNormal, self).__init__(D.Normal(loc, scale), D.transforms.ExpTransform(),
                                                  validate_args=validate_args)
        loc, scale = lib.tensor([0.3, -1.0], dtype=lib.float64), lib.tensor([0.7, 2.0], dtype=lib.float64)
        x = lib.tensor([[0.5, 2.0], [1.5, 0.1]], dtype=lib.float64)
        row = []
        for d in (D.LogNormal(loc, scale), D.HalfNormal(scale), PyroLogNormal(loc, scale)):
            assert isinstance(d, D.TransformedDistribution)
            row += [d.log_prob(x), d.cdf(x), d.entropy(), d.mean, d.variance,
                    d.icdf(lib.tensor([0.3, 0.6], dtype=lib.float64)),
                    lib.tensor([len(d.transforms)])]
            if type(d) is not PyroLogNormal:   # (PyTorch: a subclass with its own __init__
                row.append(lib.tensor(tuple(d.expand((4, 2)).batch_shape)))   # expands itself)
        res.append(row)
    for a, b in zip(*res):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-12)


def _transforms(lib):
    T, D = lib.distributions.transforms, lib.distributions
    return [T.ExpTransform().inv, T.IndependentTransform(T.ExpTransform(), 1),
            T.ReshapeTransform((2, 3), (6,)), T.PowerTransform(lib.tensor(2.0)),
            T.CatTransform([T.ExpTransform(), T.AbsTransform()], 0, [1, 1]),
            T.StackTransform([T.ExpTransform(), T.AbsTransform()], 0),
            T.CumulativeDistributionTransform(D.Normal(0., 1.)),
            T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1., 2.)]),
            T.AffineTransform(0., 2.), T.SigmoidTransform().inv, T.StickBreakingTransform(),
            T.CorrCholeskyTransform(), T.SoftmaxTransform(), T.LowerCholeskyTransform()]


def test_transforms_with_cache_as_pytorchs():
    """pyro's SVI wraps guides' transforms with .with_cache(): PyTorch defines it on the
    inverse, independent, reshape, power, cat, stack and CDF transforms too."""
    got = []
    for lib in (torch, ndgrad):
        row = []
        for t in _transforms(lib):
            try:
                c = t.with_cache(1)
                row.append((type(c).__name__, c._cache_size, c.with_cache(1) is c,
                            type(c.with_cache(0)).__name__))
            except NotImplementedError:
                row.append("NotImplementedError")
        got.append(row)
    assert got[1] == got[0]
    x = ndgrad.tensor([0.5, 2.0])
    t = ndgrad.distributions.transforms.ExpTransform().inv.with_cache(1)
    y = t(x)
    assert t.inv(y) is x   # (the cache)


def test_pinv_rcond_overload_storage_and_cdata():
    """captum: linalg.pinv(A, rcond=...); linear_operator: `if indices.storage():`; pyro and
    gpytorch: `p._cdata` compared between a parameter and what the param store returns."""
    import warnings
    a = np.array([[1.0, 2, 3], [4, 5, 6], [7, 8, 9.5]])
    for args, kw in (((0.1,), {}), ((), {"rcond": 0.1}), ((0.1, True), {})):
        ours = ndgrad.linalg.pinv(ndgrad.tensor(a), *args, **kw)
        theirs = torch.linalg.pinv(torch.tensor(a), *args, **kw)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-14)
    for lib in (torch, ndgrad):
        with pytest.raises(TypeError, match=r"linalg_pinv\(\) received an invalid combination "
                           r"of arguments - got \(Tensor, rtol=float, rcond=float\)"):
            lib.linalg.pinv(lib.tensor(a), rcond=0.1, rtol=0.1)
    got = []
    for lib in (torch, ndgrad):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            x = lib.arange(6.0)[2:]
            s = x.storage()
            got.append((len(s), s.size(), str(s.dtype), s.tolist(), bool(lib.zeros(0).storage()),
                        s[1], s.element_size(), s.nbytes(), type(s).__name__))
            assert all("TypedStorage is deprecated" in str(m.message) for m in w)
        p = lib.nn.Parameter(lib.ones(2))
        assert p._cdata == p._cdata and p._cdata != p.data._cdata
        assert isinstance(p._cdata, int)
    assert got[0] == got[1]


@pytest.mark.parametrize("other", [..., None, "a", object(), slice(1), (1, 0), [1, 0]])
def test_comparing_a_tensor_with_a_non_number_is_false(other):
    """gpytorch: `if ... in idx` with a tensor in the index tuple compares the tensor with
    Ellipsis: PyTorch answers False (NotImplemented, then identity), not an array."""
    for lib in (torch, ndgrad):
        t = lib.tensor([1, 0])
        assert (t == other) is False and (t != other) is True
        assert (other in (0, slice(None), t)) is (other in (0, slice(None)))


def test_legacy_sparse_constructors():
    """linear_operator's tests build torch.sparse.FloatTensor(indices, values, size)."""
    import warnings
    got = []
    for lib in (torch, ndgrad):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            i = lib.tensor([[0, 1, 1], [2, 0, 2]])
            v = lib.tensor([3.0, 4.0, 5.0])
            s = lib.sparse.FloatTensor(i, v, lib.Size([2, 3]))
            d = lib.sparse.DoubleTensor(i, v)
            e = lib.sparse.FloatTensor(2, 3)
        got.append((s.to_dense().tolist(), str(s.dtype), s.is_sparse,
                    isinstance(s, lib.sparse.FloatTensor), isinstance(s, lib.sparse.DoubleTensor),
                    isinstance(lib.ones(2), lib.sparse.FloatTensor), str(d.dtype),
                    d.to_dense().tolist(), tuple(e.shape), e.is_sparse,
                    [str(m.message).split(" is deprecated")[0] for m in w]))
    assert got[0] == got[1]


def test_transform_modules_initialize_their_module_side():
    """pyro's TransformModule(Transform, nn.Module) and ComposeTransformModule(ComposeTransform,
    nn.ModuleList): Transform.__init__ calls super().__init__(), as PyTorch's."""
    got = []
    for lib in (torch, ndgrad):
        T = lib.distributions.transforms

        class TM(T.Transform, lib.nn.Module):
            def __init__(self, *a, **k):
                super().__init__(*a, **k)
                self.lin = lib.nn.Linear(2, 2)

            def __hash__(self):
                return super(lib.nn.Module, self).__hash__()

        class CTM(T.ComposeTransform, lib.nn.ModuleList):
            def __init__(self, parts, cache_size=0):
                super().__init__(parts, cache_size=cache_size)
                for p in parts:
                    if isinstance(p, lib.nn.Module):
                        self.append(p)

            def __hash__(self):
                return super(lib.nn.Module, self).__hash__()
        c = CTM([TM(), T.ExpTransform(), TM(cache_size=1)])
        got.append((len(c), len(list(c.parameters())), len(c.parts), c._cache_size,
                    c.parts[2]._cache_size))
    assert got[0] == got[1]


def test_collect_all_completes_with_its_last_future():
    """captum's Shapley sampling chains collect_all(...).then(cb) and reads .value() of the
    listed futures inside cb: collect_all completes as soon as they all have."""
    got = []
    for lib in (torch, ndgrad):
        F = lib.futures.Future
        a, b = F(), F()
        both = lib.futures.collect_all([a, b])
        chained = both.then(lambda f: [x.value() for x in f.value()])
        seen = [both.done(), chained.done()]
        a.set_result(1)
        seen.append(both.done())
        b.set_result(2)
        seen += [both.done(), chained.done(), chained.value()]
        seen.append(lib.futures.collect_all([]).done())
        got.append(seen)
    assert got[0] == got[1] == [False, False, False, True, True, [1, 2], True]


def test_indexing_with_an_empty_list():
    """kornia: `weights[mix_indices] = 0` with no mix augmentation (an empty list): PyTorch
    takes an empty sequence as an empty long index."""
    got = []
    for lib in (torch, ndgrad):
        w = lib.ones(4)
        w[[]] = 0
        m = lib.ones(2, 3)
        got.append((w.tolist(), tuple(w[[]].shape), tuple(m[[]].shape),
                    tuple(m[[], :].shape), tuple(m[:, []].shape), tuple(m[([],)].shape)))
    assert got[0] == got[1]


KEYS_INT_AND_TENSOR = ["0, :, :, i", "0, :, i", ":, 0, :, i", "0, i", "i, :, 0", "0, i, :, i",
                       ":, i, 0", "..., 0, i", "None, 0, :, i", "0, ..., i"]


@pytest.mark.parametrize("key", KEYS_INT_AND_TENSOR)
def test_integers_apply_before_tensor_indices(key):
    """PyTorch selects a key's integers first, then indexes with its tensors (NumPy counts the
    integers as advanced indices, which moves the broadcast dims): gpytorch's
    MultitaskMultivariateNormal[0, :, :, tensor] expected [4, 6, 6]. Values, shapes, writes and
    gradients as PyTorch's."""
    got = []
    for lib in (torch, ndgrad):
        x = lib.arange(120.0, dtype=lib.float64).reshape(2, 3, 4, 5).requires_grad_()
        i = lib.tensor([1, 0])
        env = {"x": x, "i": i}
        y = eval(f"x[{key}]", env)
        (y * lib.arange(float(y.numel()), dtype=lib.float64).reshape(y.shape)).sum().backward()
        z = x.detach().clone()
        exec(f"z[{key}] = -1", {"z": z, "i": i})
        got.append((tuple(y.shape), y.detach().numpy().copy(), x.grad.numpy().copy(), z.numpy()))
    assert got[0][0] == got[1][0]
    for a, b in zip(got[0][1:], got[1][1:]):
        np.testing.assert_array_equal(b, a)


def test_matmul_operator_autocasts_as_matmul():
    """kornia's augmentations compose affine matrices with `@` under torch.autocast("cpu"): the
    operator is aten::matmul, cast to bfloat16 with the function."""
    got = []
    for lib in (torch, ndgrad):
        a = lib.ones(2, 2)
        b = lib.ones(2, 2, dtype=lib.bfloat16)
        with lib.autocast("cpu"):
            got.append([str((a @ a).dtype), str((a @ b).dtype), str((b @ a).dtype),
                        str(a.__rmatmul__(b).dtype)])
        got[-1].append(str((a @ b.float()).dtype))
    assert got[0] == got[1]
