"""Views: storage sharing exactly where PyTorch shares, and in-place changes through views
(PyTorch's rebasing of a view's history) giving PyTorch's gradients or PyTorch's errors."""
import numpy as np
import pytest

import ndgrad

# ------------------------------------------------------------------ which ops return views

VIEW_OPS = {
    "view": lambda x: x.view(4, 3),
    "reshape_contig": lambda x: x.reshape(2, 6),
    "flatten": lambda x: x.flatten(),
    "unflatten": lambda x: x.unflatten(1, (2, 2)),
    "slice": lambda x: x[1:, ::2],
    "select": lambda x: x[1],
    "select_method": lambda x: x.select(1, 2),
    "none_ellipsis": lambda x: x[None, ..., 0],
    "transpose": lambda x: x.transpose(0, 1),
    "t": lambda x: x.t(),
    "T": lambda x: x.T,
    "mT": lambda x: x.mT,
    "permute": lambda x: x.permute(1, 0),
    "movedim": lambda x: x.movedim(0, 1),
    "expand": lambda x: x[:1].expand(5, 4),
    "squeeze": lambda x: x[None].squeeze(0),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "diagonal": lambda x: x.diagonal(),
    "diagonal_offset": lambda x: x.diagonal(1),
    "narrow": lambda x: x.narrow(1, 1, 2),
    "unfold": lambda x: x.unfold(1, 2, 1),
    "split": lambda x: x.split(2)[1],
    "chunk": lambda x: x.chunk(2, 1)[0],
    "unbind": lambda x: x.unbind(1)[2],
    "tensor_split": lambda x: x.tensor_split(2)[1],
    "detach": lambda x: x.detach(),
}
COPY_OPS = {
    "reshape_noncontig": lambda x: x.t().reshape(12),
    "contiguous_noncontig": lambda x: x.t().contiguous(),
    "flip": lambda x: x.flip(0),
    "roll": lambda x: x.roll(1),
    "repeat": lambda x: x.repeat(2, 1),
    "advanced_index": lambda x: x[[0, 2]],
    "mask_index": lambda x: x[x > 5],
    "cat": lambda x: ndgrad.cat([x, x]) if isinstance(x, ndgrad.Tensor) else None,
    "clone": lambda x: x.clone(),
    "to_dtype": lambda x: x.float(),
}


def _base():
    return ndgrad.arange(12.0, dtype=ndgrad.float64).reshape(3, 4).clone()


@pytest.mark.parametrize("name", sorted(VIEW_OPS))
def test_view_ops_share_storage(name):
    x = _base()
    v = VIEW_OPS[name](x)
    assert v._base is x or name == "detach"
    before = v.clone()
    x.add_(100.0)  # an in-place change of the base shows through the view ...
    np.testing.assert_array_equal(v.numpy(), before.numpy() + 100.0)
    assert v._version == x._version


@pytest.mark.parametrize("name", sorted(VIEW_OPS))
def test_view_ops_match_torch_is_view(name):
    torch = pytest.importorskip("torch")
    if name == "detach":
        return
    t = torch.arange(12.0, dtype=torch.float64).reshape(3, 4)
    assert VIEW_OPS[name](t)._base is not None


@pytest.mark.parametrize("name", sorted(COPY_OPS))
def test_copy_ops_do_not_share(name):
    x = _base()
    c = COPY_OPS[name](x)
    assert c._base is None
    before = c.clone()
    x.add_(100.0)
    np.testing.assert_array_equal(c.numpy(), before.numpy())


@pytest.mark.parametrize("name", sorted(COPY_OPS))
def test_copy_ops_match_torch(name):
    torch = pytest.importorskip("torch")
    t = torch.arange(12.0, dtype=torch.float64).reshape(3, 4)
    f = COPY_OPS[name]
    r = torch.cat([t, t]) if name == "cat" else f(t)
    assert r._base is None


def test_write_through_view_reaches_base():
    x = _base()
    x[1:, 2].fill_(-1.0)
    x.t()[0].mul_(0.0)
    assert x.numpy()[1, 2] == -1.0 and x.numpy()[2, 2] == -1.0
    assert (x.numpy()[:, 0] == 0).all()
    x.diagonal().zero_()
    assert (np.diag(x.numpy()) == 0).all()


def test_data_ptr_and_storage_offset():
    x = _base()
    assert x[0].data_ptr() == x.data_ptr()
    assert x[1].data_ptr() == x.data_ptr() + 4 * 8
    assert x[1].storage_offset() == 4
    assert x.t().untyped_storage().data_ptr() == x.untyped_storage().data_ptr()


def test_view_errors():
    x = _base()
    with pytest.raises(RuntimeError, match="view size is not compatible with input tensor's size "
                       r"and stride \(at least one dimension spans across two contiguous "
                       r"subspaces\). Use .reshape\(...\) instead."):
        x.t().view(12)
    with pytest.raises(RuntimeError, match=r"shape '\[5, -1\]' is invalid for input of size 12"):
        x.view(5, -1)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        x.view(-1, -1)


def test_grad_fn_names_match_torch():
    torch = pytest.importorskip("torch")
    cases = {
        "slice": lambda L, x: x[:, 1:], "select": lambda L, x: x[0], "select2": lambda L, x: x[0, :],
        "unsqueeze": lambda L, x: x[None], "alias": lambda L, x: x[...],
        "index": lambda L, x: x[[0, 1]], "view": lambda L, x: x.view(12),
        "reshape_copy": lambda L, x: x.t().reshape(12), "t": lambda L, x: x.t(),
        "T": lambda L, x: x.T, "mT": lambda L, x: x.mT, "permute": lambda L, x: x.permute(1, 0),
        "expand": lambda L, x: x[:1].expand(2, 4), "squeeze": lambda L, x: x[None].squeeze(),
        "squeeze_dim": lambda L, x: x[None].squeeze(0),
        "squeeze_dims": lambda L, x: x[None].squeeze((0,)),
        "narrow": lambda L, x: x.narrow(0, 1, 1), "diagonal": lambda L, x: x.diagonal(),
        "unfold": lambda L, x: x.unfold(0, 2, 1), "split": lambda L, x: x.split(2)[0],
        "split_sizes": lambda L, x: x.split([1, 2])[0], "chunk": lambda L, x: x.chunk(2)[1],
        "unbind": lambda L, x: x.unbind()[0], "tensor_split": lambda L, x: x.tensor_split(2)[0],
        "cat": lambda L, x: L.cat([x, x]), "stack": lambda L, x: L.stack([x, x]),
        "flip": lambda L, x: x.flip(0), "roll": lambda L, x: x.roll(1, 0),
        "rot90": lambda L, x: x.rot90(), "repeat": lambda L, x: x.repeat(2, 1),
        "movedim": lambda L, x: x.movedim(0, 1), "clone": lambda L, x: x.clone(),
        "contiguous": lambda L, x: x.t().contiguous(), "to": lambda L, x: x.float(),
        "diag_embed": lambda L, x: x.diag_embed(), "meshgrid": lambda L, x: L.meshgrid(
            x[0], x[1], indexing="ij")[0],
    }
    for name, f in cases.items():
        a = ndgrad.ones(3, 4, requires_grad=True)
        b = torch.ones(3, 4, requires_grad=True)
        assert type(f(ndgrad, a).grad_fn).__name__ == type(f(torch, b).grad_fn).__name__, name


# ------------------------------------------------------------------ in-place through views

def _prog(f):
    PROGRAMS[f.__name__] = f
    return f


PROGRAMS = {}


@_prog
def base_view_mul(L, w):
    x = w.clone()
    v = x[0]
    v.mul_(2)
    return x * x


@_prog
def view_of_view_transposed(L, w):
    x = w.clone()
    u = x[:, 1:].t()
    u.mul_(2)
    return x


@_prog
def older_view_after_base_change(L, w):
    x = w.clone()
    v = x[1]
    x.mul_(3)
    return v * v


@_prog
def sibling_view_change(L, w):
    x = w.clone()
    a, b = x[0], x[1]
    a.add_(b)
    return b * a + x.sum()


@_prog
def diagonal_exp(L, w):
    x = w.clone()
    v = x.view(12)
    x.diagonal().exp_()
    return v * v


@_prog
def setitem_on_view(L, w):
    x = w.clone()
    v = x.unsqueeze(0).transpose(1, 2)
    v[0, 1] = w[0, :3] * 2
    return x.exp()


@_prog
def nested_views_and_base(L, w):
    x = w.clone()
    v = x[0:2]
    vv = v[:, 1]
    vv.exp_()
    v.mul_(2)
    return vv * 3 + x.sum()


@_prog
def narrow_and_unfold(L, w):
    x = w.clone()
    n = x.narrow(1, 1, 2)
    u = x.unfold(1, 2, 2)
    u.mul_(3)
    return n + x[:, 1:3]


@_prog
def nograd_base_grad_value(L, w):
    x = w.detach().clone()
    v = x[1]
    v.copy_(w[0] * 2)
    return x * v


@_prog
def reshape_view_setitem(L, w):
    x = w.clone()
    y = x.reshape(4, 3)
    y[1:, 0] = 0.0
    return x.sum() + (x * y.t().reshape(3, 4)).sum()


@_prog
def T_and_mT(L, w):
    x = w.clone()
    x.T[0].mul_(5)
    return x.mT.sum(1) * x[0]


@_prog
def tensor_split_views(L, w):
    x = w.clone()
    a, b = x.tensor_split(2, 1)
    a.mul_(b.detach())
    b.add_(a)
    return x


@_prog
def saved_output_then_view_change(L, w):
    x = w.clone()
    v = x[0:2]
    vv = v[:, 1]
    vv.exp_()        # exp saves its output ...
    v.mul_(2)        # ... which this changes: PyTorch raises at backward
    return vv * 3


@_prog
def split_output_inplace(L, w):
    x = w.clone()
    a, b = x.split(2)
    return a.mul_(2)


@_prog
def unbind_stale_after_base_change(L, w):
    x = w.clone()
    a = x.unbind(1)[0]
    x.mul_(2)
    return a


@_prog
def chunk_output_inplace(L, w):
    x = w.clone()
    return x.chunk(3, 1)[1].add_(1)


@_prog
def view_of_leaf(L, w):
    v = w[0]
    v.mul_(2)
    return v


@_prog
def view_created_in_no_grad(L, w):
    x = w.clone()
    with L.no_grad():
        v = x[0]
    v.mul_(2)
    return x


@_prog
def expanded_write(L, w):
    x = w.clone()
    x[:1].expand(3, 4).mul_(2)
    return x


@_prog
def flatten_setitem_then_old_views(L, w):
    x = w.clone()
    v = x.flatten()
    v[2:5] = 1.0
    z = x.t()[1]
    x[2, 1] = w[0, 0] * 3
    return z * x[0, :3]


@_prog
def strided_view_mul(L, w):
    x = w.clone()
    v = x[::2, 1::2]
    v.mul_(w[:2, :2])
    return x * v.sum()


@_prog
def view_chain_add_then_base_use(L, w):
    x = w.clone()
    p = x.permute(1, 0)
    q = p[1:3]
    q.add_(w[1:3, :3] * w[:2, :3])
    r = x.view(2, 6)
    r[:, 0].sub_(1)
    return p.sum(0) * q.sum() + r.sum()


@_prog
def version_error_through_view(L, w):
    x = w.clone()
    y = x * 2
    z = y.sin()     # saves y
    y[0].zero_()
    return z


@_prog
def setitem_repeated_adv(L, w):
    x = w.clone()
    x[[1, 1]] += 1
    x[0, [0, 0, 2]] = w[1, :3]
    return x * x


def _run(lib, name):
    w = lib.tensor(np.arange(12.0).reshape(3, 4) / 7 + 0.5, dtype=lib.float64,
                   requires_grad=True)
    out = PROGRAMS[name](lib, w)
    out.backward(lib.ones_like(out) * lib.arange(1.0, out.numel() + 1,
                                                 dtype=lib.float64).reshape(out.shape))
    return out.detach().numpy().copy(), w.grad.numpy().copy()


def _outcome(lib, name):
    try:
        return _run(lib, name)
    except RuntimeError as e:
        return RuntimeError, str(e).split("\n")[0].split(" Hint:")[0].split(" [torch")[0]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_inplace_through_views_vs_torch(name):
    torch = pytest.importorskip("torch")
    expected = _outcome(torch, name)
    got = _outcome(ndgrad, name)
    if expected[0] is RuntimeError:
        assert got[0] is RuntimeError, f"ndgrad returned a gradient where torch raised {expected}"
        assert got[1].split(":")[0] == expected[1].split(":")[0]
        return
    assert got[0] is not RuntimeError, got
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-12, atol=1e-12)


EXPECTED_ERRORS = {
    "split_output_inplace": "Output 0 of Split is a view and is being modified inplace.",
    "unbind_stale_after_base_change": "Output 0 of Unbind is a view and its base or another view "
                                      "of its base has been modified inplace.",
    "chunk_output_inplace": "Output 1 of Split is a view and is being modified inplace.",
    "view_of_leaf": "a view of a leaf Variable that requires grad is being used in an in-place "
                    "operation.",
    "view_created_in_no_grad": "A view was created in no_grad mode and is being modified inplace "
                               "with grad mode enabled.",
    "expanded_write": "unsupported operation: more than one element of the written-to tensor "
                      "refers to a single memory location.",
    "saved_output_then_view_change": "one of the variables needed for gradient computation has "
                                     "been modified by an inplace operation",
    "version_error_through_view": "one of the variables needed for gradient computation has been "
                                  "modified by an inplace operation",
}


@pytest.mark.parametrize("name", sorted(EXPECTED_ERRORS))
def test_inplace_view_errors(name):
    # also checked without torch installed
    kind, msg = _outcome(ndgrad, name)
    assert kind is RuntimeError and msg.startswith(EXPECTED_ERRORS[name])


def test_error_leaves_tensor_unchanged():
    w = ndgrad.ones(3, 4, requires_grad=True)
    before = w.detach().clone()
    with pytest.raises(RuntimeError):
        w[0].mul_(2)
    x = ndgrad.zeros(4)
    with pytest.raises(RuntimeError):
        x[:1].expand(3).add_(1.0)
    np.testing.assert_array_equal(w.detach().numpy(), before.numpy())
    np.testing.assert_array_equal(x.numpy(), np.zeros(4))


def test_regenerated_view_history_double_backward():
    w = ndgrad.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=ndgrad.float64, requires_grad=True)

    def f(w):
        x = w.clone()
        v = x[1]
        x[0].mul_(w[1])   # sibling change: v's history is regenerated
        return (v * x[0]).sum()
    ndgrad.autograd.gradcheck(f, (w,))
    ndgrad.autograd.gradgradcheck(f, (w,))


def test_view_requires_grad_after_base_gets_history():
    y = ndgrad.ones(3, requires_grad=True)
    x = ndgrad.zeros(3)
    v = x[:2]
    assert not v.requires_grad
    x.copy_(y * 2)
    assert v.requires_grad and v.grad_fn is not None
    v.sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [2.0, 2.0, 0.0])


def test_tensors_with_live_views_deepcopy_and_pickle():
    import copy
    import pickle
    w = ndgrad.randn(3, 3, requires_grad=True)
    v = w.t()  # registered as a live view of w
    w2 = copy.deepcopy(w)
    assert w2.requires_grad and w2._base is None and w2.data_ptr() != w.data_ptr()
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(w)).detach().numpy(),
                                  w.detach().numpy())
    x = ndgrad.arange(6.0).reshape(2, 3)[1]
    x2 = copy.deepcopy(x)
    assert x2._base is None and x2.tolist() == [3.0, 4.0, 5.0]
    del v


def test_copies_have_pytorchs_layout():
    """clone/lerp/addcmul/*_like of expanded, transposed and strided inputs: PyTorch keeps a
    non-overlapping and dense layout (preserve_format) and makes the others contiguous (NumPy's
    copies put a zero-stride axis innermost: kornia's unsharp_mask of an expanded batch was not
    contiguous)."""
    torch = pytest.importorskip("torch")

    def layouts(L):
        e = L.ones(3, 5, 5).expand(3, -1, -1, -1)
        t = L.ones(4, 5).t()
        g = L.ones(4, 6)[:, ::2]
        c = L.ones(3, 3, 5, 5)
        out = [e.clone(), t.clone(), g.clone(), t.clone(memory_format=L.contiguous_format),
               L.lerp(c, e, 2.0), L.lerp(e, c, 0.5), L.addcmul(e, e, c), L.zeros_like(t),
               L.empty_like(e), t * 2, e + 1]
        return [(tuple(x.stride()), x.is_contiguous()) for x in out]
    assert layouts(ndgrad) == layouts(torch)
