"""torch.nested against PyTorch: the same construction from the same data gives the same
structure (shape with its ragged nested int, offsets, ragged dim, repr), and each op the same
values and (float64) gradients to the components, or the same error."""
import re

import numpy as np
import pytest

import ndgrad
import ndgrad.nn.functional as nF

torch = pytest.importorskip("torch")
tF = torch.nn.functional

LIBS = ((torch, tF), (ndgrad, nF))


def _norm(s):
    """Nested ints are numbered in order of first use in the process: compare them as j."""
    return re.sub(r"\bj\d+\b", "j", re.sub(r" at 0x[0-9a-f]+", "", str(s)))


def _arrays(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


def _dense(t):
    return t.detach().numpy() if not isinstance(t, ndgrad.Tensor) else t.detach().numpy()


def _check_same(rt, rn):
    if isinstance(rt, (tuple, list)):
        assert isinstance(rn, (tuple, list)) and len(rt) == len(rn)
        for a, b in zip(rt, rn):
            _check_same(a, b)
        return
    if isinstance(rt, torch.Tensor):
        assert isinstance(rn, ndgrad.Tensor)
        assert rn.is_nested == rt.is_nested
        if rt.is_nested:
            assert _norm(rn.shape) == _norm(rt.shape)
            assert rn._ragged_idx == rt._ragged_idx
            np.testing.assert_array_equal(rn.offsets().numpy(), rt.offsets().numpy())
            np.testing.assert_allclose(rn.values().detach().numpy(),
                                       rt.values().detach().numpy(), rtol=1e-10, atol=1e-12)
            assert rn.is_contiguous() == rt.is_contiguous()
            assert str(rn.dtype) == str(rt.dtype)
        else:
            assert tuple(rn.shape) == tuple(rt.shape)
            np.testing.assert_allclose(rn.detach().numpy(), rt.detach().numpy(), rtol=1e-10,
                                       atol=1e-12)
        return
    assert _norm(rn) == _norm(rt)


def _sum_weighted(out, lib):
    """A scalar of out with fixed weights, to backpropagate something that is not all ones."""
    outs = out if isinstance(out, (tuple, list)) else (out,)
    total = 0
    for k, o in enumerate(outs):
        v = o.values() if o.is_nested else o
        w = np.cos(np.arange(v.numel(), dtype=np.float64) + k).reshape(tuple(v.shape))
        total = total + (v * lib.tensor(w)).sum()
    return total


def run_both(fn, shapes=((2, 4), (3, 4)), grad=True, layout="jagged"):
    """fn(lib, F, nt, comps) under PyTorch and ndgrad: the same results and gradients."""
    arrays = _arrays(shapes)
    results, grads = [], []
    for lib, F in LIBS:
        comps = [lib.tensor(a, requires_grad=True) for a in arrays]
        nt = lib.nested.as_nested_tensor(comps, layout=getattr(lib, layout))
        out = fn(lib, F, nt, comps)
        results.append(out)
        if grad:
            _sum_weighted(out, lib).backward()
            grads.append([c.grad for c in comps])
    _check_same(*results)
    if grad:
        for gt, gn in zip(*grads):
            if gt is None:
                assert gn is None
            else:
                np.testing.assert_allclose(gn.numpy(), gt.numpy(), rtol=1e-10, atol=1e-12)
    return results


def run_ref(fn, ref, shapes=((2, 4), (3, 4))):
    """ndgrad's fn on a nested tensor of the components against PyTorch's ref on each
    component alone (dense): values and gradients. For ops whose PyTorch nested backward is
    missing (aten._nested_sum_backward, _log_softmax_backward_data) or wrong (softmax over
    the ragged dim: PyTorch's backward normalizes over the whole packed dim, so its gradient
    of a sequence's softmax does not sum to zero over that sequence)."""
    arrays = _arrays(shapes)
    comps_n = [ndgrad.tensor(a, requires_grad=True) for a in arrays]
    out = fn(ndgrad, nF, ndgrad.nested.as_nested_tensor(comps_n, layout=ndgrad.jagged), comps_n)
    outs_n = out.unbind() if out.is_nested else list(out)
    comps_t = [torch.tensor(a, requires_grad=True) for a in arrays]
    outs_t = [ref(torch, tF, c) for c in comps_t]
    assert len(outs_n) == len(outs_t)
    losses = []
    for outs, lib in ((outs_n, ndgrad), (outs_t, torch)):
        total = 0
        for i, o in enumerate(outs_t):
            w = np.cos(np.arange(o.numel(), dtype=np.float64) + i).reshape(tuple(o.shape))
            total = total + (outs[i] * lib.tensor(w)).sum()
        losses.append(total)
    for a, b in zip(outs_n, outs_t):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
    for loss in losses:
        loss.backward()
    for a, b in zip(comps_n, comps_t):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)


def nd_gradcheck(fn, shapes=((2, 4), (3, 4))):
    comps = [ndgrad.tensor(a, requires_grad=True) for a in _arrays(shapes)]

    def f(*cs):
        out = fn(ndgrad, nF, ndgrad.nested.as_nested_tensor(list(cs), layout=ndgrad.jagged), cs)
        return out.values() if out.is_nested else out
    assert ndgrad.autograd.gradcheck(f, comps)


def raises_both(fn, shapes=((2, 4), (3, 4)), layout="jagged"):
    arrays = _arrays(shapes)
    errs = []
    for lib, F in LIBS:
        nt = lib.nested.nested_tensor([lib.tensor(a) for a in arrays],
                                      layout=getattr(lib, layout))
        with pytest.raises(Exception) as info:
            fn(lib, F, nt)
        errs.append(info.value)
    assert type(errs[1]) is type(errs[0]), (errs[0], errs[1])
    assert _norm(errs[1]) == _norm(errs[0])


# ------------------------------------------------------------------------------ construction
def test_nested_tensor_jagged_structure():
    a, b = _arrays([(2, 3), (4, 3)])
    nts = [lib.nested.nested_tensor([lib.tensor(a), lib.tensor(b)], layout=lib.jagged,
                                    requires_grad=True) for lib, _ in LIBS]
    t, n = nts
    assert type(n).__name__ == type(t).__name__ == "NestedTensor"
    assert repr(n.layout) == repr(t.layout) == "torch.jagged"
    assert n.is_nested and n.is_leaf and n.requires_grad and n.grad_fn is None
    assert _norm(repr(n)) == _norm(repr(t))
    assert _norm(n.shape) == _norm(t.shape) == "torch.Size([2, j, 3])"
    assert n.dim() == t.dim() == 3 and n.size(0) == 2 and n.size(-1) == 3
    assert str(n.size(1)) == str(n.shape[1]) and n.shape[1] == n.shape[1]
    assert n.shape[1] != 4 and (t.shape[1] != 4)
    assert n.stride()[1:] == t.stride()[1:] and _norm(n.stride()[0]) == _norm(t.stride()[0])
    assert n._ragged_idx == t._ragged_idx == 1 and n.lengths() is None
    np.testing.assert_array_equal(n.offsets().numpy(), t.offsets().numpy())
    np.testing.assert_array_equal(n.values().detach().numpy(), t.values().detach().numpy())
    assert n.numel() == t.numel() and len(n) == len(t) == 2
    assert n.is_contiguous() and str(n.dtype) == str(t.dtype) == "torch.float64"
    assert str(n.device) == "cpu"
    # an op keeps the structure: the same nested int
    assert (n + 1).shape[1] == n.shape[1] and (t + 1).shape[1] == t.shape[1]
    # two nested tensors built apart have distinct ragged sizes
    m = ndgrad.nested.nested_tensor([ndgrad.tensor(a), ndgrad.tensor(b)], layout=ndgrad.jagged)
    assert m.shape[1] != n.shape[1]


def test_nested_int():
    """The ragged size: a torch.SymInt printing as j<n>, PyTorch's comparisons and errors."""
    exprs = ["isinstance(j, lib.SymInt)", "j > 0", "j >= 2", "j >= 3", "j < 5", "j < 2", "j != 3",
             "j == j", "j != j", "2 * j", "j * 3", "int(j)", "hash(j) == hash(j)", "repr(j)",
             "j == nt.sin().shape[1]", "nt.shape == nt.sin().shape", "nt.shape == (2, j, 3)",
             "str(nt.shape[1:])", "j - 1", "j + 1", "j // 2", "max(j, 1)", "repr(j.node)",
             "[d for d in nt.shape]", "j in nt.shape"]
    answers = []
    for lib, _ in LIBS:
        nt = lib.nested.nested_tensor([lib.ones(2, 3), lib.ones(4, 3)], layout=lib.jagged)
        j = nt.shape[1]
        row = []
        for e in exprs:
            try:
                row.append(_norm(eval(e)))
            except Exception as err:
                row.append((type(err).__name__, str(err)))
        answers.append(row)
    assert answers[1] == answers[0]


def test_ragged_inner_dim_and_unbind():
    def f(lib, F, nt, comps):
        return nt.unbind()
    r = run_both(f, shapes=[(3, 2, 4), (3, 5, 4)])
    assert r[1][0].shape == (3, 2, 4)


def test_as_nested_tensor_keeps_autograd():
    r = run_both(lambda lib, F, nt, comps: nt)
    assert r[1].grad_fn is not None and not r[1].is_leaf


def test_graph_node_names():
    names = []
    for lib, F in LIBS:
        a = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
        nt = lib.nested.as_nested_tensor([a, a[:1]], layout=lib.jagged)
        leaf = lib.nested.nested_tensor([a, a[:1]], layout=lib.jagged, requires_grad=True)
        view = lib.nested.nested_tensor_from_jagged(a, lib.tensor([0, 1, 2]))
        names.append([type(x.grad_fn).__name__ for x in (
            nt, nt.values(), leaf.values(), view, nt.sin(), nt * 2)]
            + [leaf.grad_fn, leaf.is_leaf, nt.is_leaf, leaf.values().is_leaf])
    assert names[1] == names[0]


def test_as_nested_tensor_from_dense_and_errors():
    x = np.arange(24.0).reshape(2, 3, 4)
    outs = [lib.nested.as_nested_tensor(lib.tensor(x), layout=lib.jagged) for lib, _ in LIBS]
    _check_same(*outs)
    raises_both(lambda lib, F, nt: lib.nested.as_nested_tensor(lib.ones(3), layout=lib.jagged))
    raises_both(lambda lib, F, nt: lib.nested.as_nested_tensor(3, layout=lib.jagged))
    raises_both(lambda lib, F, nt: lib.nested.as_nested_tensor(nt, layout=lib.strided))
    raises_both(lambda lib, F, nt: lib.nested.nested_tensor([], layout=lib.jagged))
    raises_both(lambda lib, F, nt: lib.nested.nested_tensor(
        [lib.ones(2, 3), lib.ones(3, 4)], layout=lib.jagged))
    raises_both(lambda lib, F, nt: lib.nested.nested_tensor(
        [lib.ones(2, 3), lib.ones(3)], layout=lib.jagged))
    raises_both(lambda lib, F, nt: lib.nested.nested_tensor(
        [lib.ones(2), lib.ones(3, dtype=lib.float64)], layout=lib.jagged))
    raises_both(lambda lib, F, nt: lib.nested.nested_tensor(
        [lib.tensor(1.0), lib.tensor(2.0)], layout=lib.jagged))
    raises_both(lambda lib, F, nt: lib.nested.nested_tensor([lib.ones(2)], layout=lib.sparse_coo))


def test_nested_tensor_from_jagged_narrow_masked_select():
    v = np.arange(18.0).reshape(6, 3)
    outs = []
    for lib, _ in LIBS:
        values = lib.tensor(v, requires_grad=True)
        nt = lib.nested.nested_tensor_from_jagged(values, lib.tensor([0, 2, 3, 6]))
        nt2 = lib.nested.nested_tensor_from_jagged(values, lengths=lib.tensor([2, 1, 3]))
        nt3 = lib.nested.nested_tensor_from_jagged(values, lib.tensor([0, 2, 3, 6]),
                                                   lib.tensor([1, 1, 2]))
        dense = lib.tensor(np.arange(24.0).reshape(2, 4, 3))
        nar = lib.nested.narrow(dense, 1, lib.tensor([0, 1]), lib.tensor([2, 3]),
                                layout=lib.jagged)
        ms = lib.nested.masked_select(lib.tensor(np.arange(6.0).reshape(2, 3)),
                                      lib.tensor([[True, False, True], [False, False, True]]))
        outs.append((nt, nt2, nar.unbind(), ms,
                     nt3.lengths(), nt3.unbind()))
        assert not nt3.is_contiguous() and not nar.is_contiguous()
        nt.to_padded_tensor(0.0).sum().backward()
    _check_same(*outs)
    raises_both(lambda lib, F, nt: lib.nested.nested_tensor_from_jagged(lib.ones(3, 2)))
    raises_both(lambda lib, F, nt: lib.nested.nested_tensor_from_jagged(
        lib.ones(3, 2), lib.tensor([0, 1, 3]), lib.tensor([1, 1])).to_padded_tensor(0.0))
    raises_both(lambda lib, F, nt: lib.nested.nested_tensor_from_jagged(
        lib.ones(3, 2), lib.tensor([0, 3]), jagged_dim=0))
    raises_both(lambda lib, F, nt: lib.nested.narrow(lib.ones(2, 3), 0, 0, 1, layout=lib.jagged))
    raises_both(lambda lib, F, nt: lib.nested.narrow(lib.ones(2, 3), 1, 0.5, 1,
                                                     layout=lib.jagged))


# ------------------------------------------------------------------------------ ops
POINTWISE = [
    lambda lib, F, nt, c: nt.sin() * 2 + 1,
    lambda lib, F, nt, c: lib.exp(nt) - nt / 3,
    lambda lib, F, nt, c: 1 - nt,
    lambda lib, F, nt, c: 2 / (nt.abs() + 1),
    lambda lib, F, nt, c: nt ** 2,
    lambda lib, F, nt, c: nt * nt.cos(),
    lambda lib, F, nt, c: F.relu(nt) + F.gelu(nt) + F.silu(nt) + lib.tanh(nt),
    lambda lib, F, nt, c: nt + lib.tensor(np.arange(4.0)),                 # (D,)
    lambda lib, F, nt, c: nt * lib.tensor(np.arange(8.0).reshape(2, 1, 4)),  # (B, 1, D)
    lambda lib, F, nt, c: lib.where(nt > 0, nt, lib.zeros_like(nt)),
    lambda lib, F, nt, c: nt.masked_fill(nt < 0, 0.5),
    lambda lib, F, nt, c: nt.clamp(-0.5, 0.5) + lib.ones_like(nt),
    lambda lib, F, nt, c: (nt > 0).to(lib.float64) * nt,
]


@pytest.mark.parametrize("i", range(len(POINTWISE)))
def test_pointwise(i):
    run_both(POINTWISE[i])


def test_pointwise_errors():
    raises_both(lambda lib, F, nt: nt + lib.ones(3, 1, 4))
    raises_both(lambda lib, F, nt: nt + lib.ones(1, 2, 1, 4))
    raises_both(lambda lib, F, nt: nt + lib.nested.nested_tensor(
        [lib.ones(2, 4), lib.ones(3, 4)], layout=lib.jagged))
    raises_both(lambda lib, F, nt: lib.cumsum(nt, 2))
    raises_both(lambda lib, F, nt: nt.cumsum(2))


REDUCTIONS = [   # (op, its value on one component alone; None: a reduction over the batch)
    (lambda lib, F, nt, c: nt.sum(), None),
    (lambda lib, F, nt, c: nt.sum(-1), lambda lib, F, c: c.sum(-1)),
    (lambda lib, F, nt, c: nt.sum(-1, keepdim=True), lambda lib, F, c: c.sum(-1, True)),
    (lambda lib, F, nt, c: nt.sum(1), lambda lib, F, c: c.sum(0)),
    (lambda lib, F, nt, c: nt.sum(1, keepdim=True), lambda lib, F, c: c.sum(0, True)),
    (lambda lib, F, nt, c: nt.sum((0, 1)), "gradcheck"),
    (lambda lib, F, nt, c: nt.mean(), None),
    (lambda lib, F, nt, c: nt.mean(1), lambda lib, F, c: c.mean(0)),
    (lambda lib, F, nt, c: nt.mean(1, keepdim=True), lambda lib, F, c: c.mean(0, True)),
    (lambda lib, F, nt, c: nt.mean((0, 1)), "gradcheck"),
    (lambda lib, F, nt, c: lib.sum(nt, 2), lambda lib, F, c: c.sum(1)),
    (lambda lib, F, nt, c: nt.amax(-1), lambda lib, F, c: c.amax(-1)),
    (lambda lib, F, nt, c: nt.max(-1)[0], lambda lib, F, c: c.max(-1)[0]),
    (lambda lib, F, nt, c: nt.min(1).values, lambda lib, F, c: c.min(0).values),
    (lambda lib, F, nt, c: nt.max(-1, keepdim=True).values, lambda lib, F, c: c.max(-1, True)[0]),
]


def test_arg_reductions():
    run_both(lambda lib, F, nt, c: (nt.argmax(-1), nt.argmin(1), nt.argmax(), nt.max(1).indices,
                                    nt.min(-1, keepdim=True).indices), grad=False)
    raises_both(lambda lib, F, nt: nt.max(0))
    raises_both(lambda lib, F, nt: nt.argmin(0))


@pytest.mark.parametrize("i", range(len(REDUCTIONS)))
def test_reductions(i):
    fn, ref = REDUCTIONS[i]
    if ref is None:
        run_both(fn)
    elif ref == "gradcheck":   # (no backward in PyTorch 2.13: ndgrad's own float64 check)
        run_both(fn, grad=False)
        nd_gradcheck(fn)
    else:   # PyTorch 2.13 has no backward for these (aten._nested_sum_backward)
        run_both(fn, grad=False)
        run_ref(fn, ref)


def test_reduction_errors():
    raises_both(lambda lib, F, nt: nt.sum(0))
    raises_both(lambda lib, F, nt: nt.sum((1, 2)))
    raises_both(lambda lib, F, nt: nt.mean(0))


def test_softmax_over_ragged_dim():
    run_both(lambda lib, F, nt, c: nt.softmax(1), grad=False)
    # PyTorch's gradient is wrong here (see run_ref): against the dense softmax per sequence
    run_ref(lambda lib, F, nt, c: nt.softmax(1), lambda lib, F, c: c.softmax(0))
    run_ref(lambda lib, F, nt, c: F.softmax(nt, -1) * nt, lambda lib, F, c: c.softmax(-1) * c)


def test_log_softmax():
    run_both(lambda lib, F, nt, c: lib.log_softmax(nt, -1), grad=False)
    run_ref(lambda lib, F, nt, c: lib.log_softmax(nt, -1), lambda lib, F, c: c.log_softmax(-1))
    raises_both(lambda lib, F, nt: F.log_softmax(nt, dim=1))


def test_transpose_to_padded():
    run_both(lambda lib, F, nt, c: nt.transpose(1, 2).to_padded_tensor(0.0), grad=False)
    run_ref(lambda lib, F, nt, c: nt.transpose(1, 2).to_padded_tensor(0.0)[:, :, :2],
            lambda lib, F, c: c.t()[:, :2])


SHAPES = [
    lambda lib, F, nt, c: F.softmax(nt, -1),
    lambda lib, F, nt, c: nt.transpose(1, 2),
    lambda lib, F, nt, c: nt.transpose(1, 2).transpose(-1, -2).sin(),
    lambda lib, F, nt, c: nt.chunk(2, -1),
    lambda lib, F, nt, c: nt.chunk(2, 0),
    lambda lib, F, nt, c: nt.split(1, -1),
    lambda lib, F, nt, c: nt.unbind(),
    lambda lib, F, nt, c: lib.cat([nt, nt * 2], -1),
    lambda lib, F, nt, c: lib.stack([nt, nt * 2], -1),
    lambda lib, F, nt, c: nt.view(2, -1, 2, 2),
    lambda lib, F, nt, c: nt.reshape(2, -1, 2, 2).transpose(1, 2),
    lambda lib, F, nt, c: nt.unsqueeze(-1),
    lambda lib, F, nt, c: nt.unsqueeze(-1).squeeze(-1),
    lambda lib, F, nt, c: nt.unsqueeze(2).transpose(1, 2),
    lambda lib, F, nt, c: nt.clone(),
    lambda lib, F, nt, c: nt.detach(),
    lambda lib, F, nt, c: nt.contiguous(),
    lambda lib, F, nt, c: nt.to(lib.float32).to(lib.float64),
    lambda lib, F, nt, c: nt.to_padded_tensor(-1.0),
    lambda lib, F, nt, c: lib.nested.to_padded_tensor(nt, 0.5, (2, 4, 5)),
    lambda lib, F, nt, c: nt[1],
    lambda lib, F, nt, c: nt.permute(0, 2, 1),
]


def test_to_padded_output_size():
    # the ragged dim only is padded (or truncated: PyTorch has no backward for that)
    run_both(lambda lib, F, nt, c: lib.nested.to_padded_tensor(nt, 0.5, (2, 2, 3)), grad=False)


@pytest.mark.parametrize("i", range(len(SHAPES)))
def test_shape_ops(i):
    grad = i not in (15,)   # (detach: no gradient)
    run_both(SHAPES[i], grad=grad)


def test_conversions_and_metadata():
    for lib, _ in LIBS:
        nt = lib.nested.nested_tensor([lib.ones(2, 3), lib.ones(4, 3)], layout=lib.jagged)
        assert str(nt.int().dtype) == "torch.int32" and str(nt.long().dtype) == "torch.int64"
        assert str(nt.bool().dtype) == "torch.bool" and str(nt.half().dtype) == "torch.float16"
        assert nt.data.is_nested and nt.data.shape[1] == nt.shape[1]
        assert nt.new_zeros(()).shape == () and not nt.new_zeros(()).is_nested
        assert nt.element_size() == 4 and nt.nbytes == 72 and nt.is_floating_point()
    raises_both(lambda lib, F, nt: nt.new_ones((2,)))
    raises_both(lambda lib, F, nt: nt.new_zeros(3))


def test_shape_errors():
    raises_both(lambda lib, F, nt: nt.softmax(0))
    raises_both(lambda lib, F, nt: nt.transpose(0, 1))
    raises_both(lambda lib, F, nt: nt.permute(1, 0, 2))
    raises_both(lambda lib, F, nt: nt.split(1, 0))
    raises_both(lambda lib, F, nt: nt.unbind(1))
    raises_both(lambda lib, F, nt: lib.cat([nt, nt], 0))
    raises_both(lambda lib, F, nt: lib.cat([nt, nt], 1))
    raises_both(lambda lib, F, nt: lib.stack([nt, nt], 0))
    raises_both(lambda lib, F, nt: nt.unsqueeze(0))
    raises_both(lambda lib, F, nt: nt.flatten())
    raises_both(lambda lib, F, nt: nt.numpy())
    raises_both(lambda lib, F, nt: nt.tolist())
    raises_both(lambda lib, F, nt: nt.item())
    raises_both(lambda lib, F, nt: float(nt))


W = np.cos(np.arange(20.0)).reshape(5, 4)

LINALG = [
    lambda lib, F, nt, c: F.linear(nt, lib.tensor(W), lib.tensor(np.arange(5.0))),
    lambda lib, F, nt, c: nt @ lib.tensor(W.T),
    lambda lib, F, nt, c: lib.matmul(nt, lib.tensor(W.T)),
    lambda lib, F, nt, c: lib.bmm(nt, lib.tensor(np.sin(np.arange(40.0)).reshape(2, 4, 5))),
    lambda lib, F, nt, c: nt.transpose(1, 2) @ nt,
    lambda lib, F, nt, c: F.layer_norm(nt, (4,)),
    lambda lib, F, nt, c: F.layer_norm(nt, (4,), lib.tensor(W[0]), lib.tensor(W[1])),
    lambda lib, F, nt, c: lib.nn.functional.dropout(nt, 0.5, training=False),
]


@pytest.mark.parametrize("i", range(len(LINALG)))
def test_linear_algebra(i):
    run_both(LINALG[i])


def test_layer_norm_over_ragged_dim():
    run_both(lambda lib, F, nt, c: F.layer_norm(nt, nt.shape[1:]), grad=False)
    run_ref(lambda lib, F, nt, c: F.layer_norm(nt, nt.shape[1:]),
            lambda lib, F, c: F.layer_norm(c, c.shape))
    def holes(lib, F, nt):
        h = lib.nested.nested_tensor_from_jagged(nt.values(), nt.offsets(), lib.tensor([1, 2]))
        return F.layer_norm(h, h.shape[1:])
    raises_both(holes)


def test_linear_algebra_errors():
    raises_both(lambda lib, F, nt: nt @ nt.transpose(1, 2))
    raises_both(lambda lib, F, nt: F.layer_norm(nt, (3, 4)))


def test_dropout_keeps_structure():
    torch.manual_seed(0)
    ndgrad.manual_seed(0)
    for lib, F in LIBS:
        nt = lib.nested.nested_tensor([lib.ones(2, 4), lib.ones(3, 4)], layout=lib.jagged)
        out = F.dropout(nt, 0.5)
        assert out.is_nested and out.shape[1] == nt.shape[1]
        assert set(np.unique(out.values().numpy())) <= {0.0, 2.0}


@pytest.mark.parametrize("causal", [False, True])
def test_scaled_dot_product_attention(causal):
    """(B, j, H, E) -> transpose(1, 2) -> attention within each sequence -> back."""
    def f(lib, F, nt, comps):
        q = nt.view(2, -1, 2, 2).transpose(1, 2)
        k = (nt * 0.5).view(2, -1, 2, 2).transpose(1, 2)
        v = nt.cos().view(2, -1, 2, 2).transpose(1, 2)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        return out.transpose(1, 2)

    def ref(lib, F, c):   # one sequence alone, (H, S, E)
        q, k, v = (x.view(-1, 2, 2).transpose(0, 1) for x in (c, c * 0.5, c.cos()))
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal).transpose(0, 1)

    for shapes in ([(2, 4), (3, 4)], [(1, 4), (5, 4)]):
        if not causal:   # (PyTorch's CPU has no nested causal kernel: "No viable backend")
            run_both(f, shapes=shapes)
        run_ref(f, ref, shapes=shapes)


def test_sdpa_errors():
    raises_both(lambda lib, F, nt: F.scaled_dot_product_attention(nt, nt, nt.values()))
    raises_both(lambda lib, F, nt: F.scaled_dot_product_attention(
        nt.unsqueeze(1), nt.unsqueeze(1), nt.unsqueeze(1), attn_mask=lib.ones(1)))


# ------------------------------------------------------------------------------ autograd
def test_leaf_grad_is_nested():
    for lib, F in LIBS:
        nt = lib.nested.nested_tensor([lib.ones(2, 3), lib.ones(1, 3)], layout=lib.jagged,
                                      dtype=lib.float64, requires_grad=True)
        out = (nt * nt).sin()
        assert type(out.grad_fn).__name__ == "SinBackward0"
        out.values().sum().backward(retain_graph=True)
        assert nt.grad.is_nested and nt.grad.shape[1] == nt.shape[1]
        np.testing.assert_allclose(nt.grad.values().numpy(), 2 * np.cos(1.0) * np.ones((3, 3)))
        (g,) = lib.autograd.grad(out.sum(), nt)
        assert g.is_nested and g.shape[1] == nt.shape[1]
        np.testing.assert_allclose(g.values().numpy(), nt.grad.values().numpy())


def test_backward_of_reductions_reaches_components():
    run_ref(lambda lib, F, nt, c: F.linear(nt, lib.tensor(W)).relu().sum(1),
            lambda lib, F, c: F.linear(c, lib.tensor(W)).relu().sum(0))
    run_ref(lambda lib, F, nt, c: nt.softmax(1).mean(-1).to_padded_tensor(0.0),
            lambda lib, F, c: F.pad(c.softmax(0).mean(-1), (0, 3 - c.shape[0])))


# ------------------------------------------------------------------------------ strided layout
def run_strided(fn, shapes=((2, 3), (4, 3)), grad=True):
    """fn(lib, F, nt) on strided nested tensors as_nested_tensor(components): the same
    components (or dense result) and gradients under PyTorch and ndgrad."""
    arrays = _arrays(shapes)
    outs, grads = [], []
    for lib, F in LIBS:
        comps = [lib.tensor(a, requires_grad=True) for a in arrays]
        nt = lib.nested.as_nested_tensor(comps)
        out = fn(lib, F, nt)
        parts = list(out.unbind()) if isinstance(out, lib.Tensor) and out.is_nested else \
            list(out) if isinstance(out, tuple) else [out]
        outs.append(parts)
        if grad:
            total = 0
            for i, o in enumerate(parts):
                w = np.cos(np.arange(o.numel(), dtype=np.float64) + i).reshape(tuple(o.shape))
                total = total + (o * lib.tensor(w)).sum()
            total.backward()
            grads.append([c.grad for c in comps])
    _check_same(*outs)
    for gt, gn in zip(*grads):
        np.testing.assert_allclose(gn.numpy(), gt.numpy(), rtol=1e-10, atol=1e-12)


def test_strided_construction_and_repr():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(4, 3)
    nts = [lib.nested.nested_tensor([lib.tensor(a), lib.tensor(b)], requires_grad=True)
           for lib, _ in LIBS]
    t, n = nts
    assert repr(n.layout) == "torch.strided" and n.is_nested and n.is_leaf
    assert repr(n) == repr(t)
    assert repr(n + 1) == repr(t + 1)
    assert repr(n.detach()) == repr(t.detach())
    assert n.dim() == t.dim() == 3 and n.size(0) == 2 and n.size(2) == 3 and n.numel() == 18
    np.testing.assert_array_equal(n._nested_tensor_size().numpy(),
                                  t._nested_tensor_size().numpy())
    np.testing.assert_array_equal(n.values().detach().numpy(), t.values().detach().numpy())
    ones = [lib.nested.nested_tensor([lib.ones(2), lib.ones(3)]) for lib, _ in LIBS]
    assert repr(ones[1]) == repr(ones[0])


def test_strided_errors():
    def both(f):
        raises_both(lambda lib, F, nt: f(lib, nt), shapes=[(2, 3), (4, 3)], layout="strided")
    both(lambda lib, nt: nt.size(1))
    both(lambda lib, nt: nt.size())
    both(lambda lib, nt: nt.shape)
    both(lambda lib, nt: nt.stride())
    both(lambda lib, nt: nt + lib.ones(3, dtype=lib.float64))
    both(lambda lib, nt: nt @ lib.ones(3, 2, dtype=lib.float64))
    both(lambda lib, nt: nt.sum(-1))
    both(lambda lib, nt: nt.unsqueeze(0))
    both(lambda lib, nt: lib.bmm(nt, lib.nested.nested_tensor([lib.ones(3, 2)])))
    both(lambda lib, nt: lib.matmul(nt, lib.nested.nested_tensor([lib.ones(3, 2)])))
    both(lambda lib, nt: nt.softmax(0))
    both(lambda lib, nt: nt + lib.nested.nested_tensor([lib.ones(2, 3), lib.ones(3, 3)]))
    both(lambda lib, nt: nt.transpose(0, 1))
    both(lambda lib, nt: nt.reshape(3, -1, 3))
    both(lambda lib, nt: nt.sum(0, keepdim=True))
    both(lambda lib, nt: lib.nn.functional.linear(nt, lib.ones(5, 4, dtype=lib.float64)))
    both(lambda lib, nt: lib.nn.functional.layer_norm(nt, (3,)))
    for lib, _ in LIBS:   # (PyTorch's message goes on with its list of backends)
        with pytest.raises(NotImplementedError, match="^Could not run 'aten::cumsum' with "
                           "arguments from the 'NestedTensorCPU' backend. This could be"):
            lib.nested.nested_tensor([lib.ones(2), lib.ones(3)]).cumsum(1)
    both(lambda lib, nt: lib.nested.nested_tensor([lib.ones(2), lib.ones(2, 2)]))


STRIDED = [
    lambda lib, F, nt: nt.unbind(),
    lambda lib, F, nt: nt[1],
    lambda lib, F, nt: nt.to_padded_tensor(0.5),
    lambda lib, F, nt: lib.nested.to_padded_tensor(nt, 0.0, (2, 5, 4)),
    lambda lib, F, nt: (nt * 2).sin() + nt / 3 - 1,
    lambda lib, F, nt: nt * nt.cos(),
    lambda lib, F, nt: F.relu(nt) * 2 + F.gelu(nt),
    lambda lib, F, nt: nt.softmax(-1),
    lambda lib, F, nt: nt.softmax(1),
    lambda lib, F, nt: nt.transpose(1, 2),
    lambda lib, F, nt: lib.bmm(nt, nt.transpose(1, 2)),
    lambda lib, F, nt: lib.matmul(nt.transpose(1, 2), nt),
    lambda lib, F, nt: nt.sum(-1, keepdim=True),
    lambda lib, F, nt: nt.reshape(2, -1, 3),
    lambda lib, F, nt: nt.clone().to(lib.float32).to(lib.float64),
    lambda lib, F, nt: F.linear(nt, lib.tensor(W[:, :3]), lib.tensor(W[:, 3])),
    lambda lib, F, nt: F.layer_norm(nt, (3,), lib.tensor(W[0, :3]), lib.tensor(W[1, :3])),
    lambda lib, F, nt: F.dropout(nt, 0.5, training=False),
]


@pytest.mark.parametrize("i", range(len(STRIDED)))
def test_strided_ops(i):
    run_strided(STRIDED[i])


def test_strided_dropout_keeps_structure():
    for lib, F in LIBS:
        nt = lib.nested.nested_tensor([lib.ones(2, 4), lib.ones(3, 2)])
        out = F.dropout(nt, 0.5)
        assert out.is_nested and [tuple(c.shape) for c in out.unbind()] == [(2, 4), (3, 2)]
        assert set(np.unique(out.values().numpy())) <= {0.0, 2.0}


def test_strided_leaf_grad():
    for lib, _ in LIBS:
        nt = lib.nested.nested_tensor([lib.ones(2, 3), lib.ones(1, 3)], dtype=lib.float64,
                                      requires_grad=True)
        (nt * 3).to_padded_tensor(0.0).sum().backward()
        assert nt.grad.is_nested
        assert [tuple(c.shape) for c in nt.grad.unbind()] == [(2, 3), (1, 3)]
        np.testing.assert_allclose(nt.grad.values().numpy(), np.full(9, 3.0))


@pytest.mark.parametrize("fn", [
    lambda lib, F, nt, c: nt.softmax(1).sin(),
    lambda lib, F, nt, c: (nt * nt).mean(1),
    lambda lib, F, nt, c: F.layer_norm(nt, (4,)) * nt,
    lambda lib, F, nt, c: F.scaled_dot_product_attention(
        *(x.view(2, -1, 2, 2).transpose(1, 2) for x in (nt, nt.cos(), nt * 2))),
    lambda lib, F, nt, c: nt.to_padded_tensor(0.0).tanh(),
])
def test_gradgradcheck(fn):
    """Second derivatives through nested ops, float64, against finite differences."""
    comps = [ndgrad.tensor(a, requires_grad=True) for a in _arrays([(2, 4), (3, 4)], seed=1)]

    def f(*cs):
        out = fn(ndgrad, nF, ndgrad.nested.as_nested_tensor(list(cs), layout=ndgrad.jagged), cs)
        return out.values() if out.is_nested else out
    assert ndgrad.autograd.gradcheck(f, comps)
    assert ndgrad.autograd.gradgradcheck(f, comps)


def test_checkpoints_both_ways(tmp_path):
    """torch.save of a jagged nested tensor loads in ndgrad (weights_only, as PyTorch's default)
    and ndgrad.save's loads in PyTorch: the same structure and values."""
    vals = np.arange(18.0).reshape(3, 6)
    made = {}
    for lib, _ in LIBS:
        nt = lib.nested.nested_tensor([lib.tensor(vals[:2]), lib.tensor(vals[2:])],
                                      layout=lib.jagged, requires_grad=True)
        t = lib.nested.nested_tensor_from_jagged(lib.tensor(vals.T.copy()),
                                                 lib.tensor([0, 1, 3]), jagged_dim=2)
        path = tmp_path / f"{lib.__name__}.pt"
        lib.save({"nt": nt, "t": t}, str(path))
        made[lib.__name__] = path
    for (src, dst) in (("torch", ndgrad), ("ndgrad", torch)):
        got = dst.load(str(made[src]))
        ref = torch.load(str(made["torch"])) if dst is ndgrad else ndgrad.load(
            str(made["ndgrad"]))
        for k in ("nt", "t"):
            a, b = (got[k], ref[k]) if dst is ndgrad else (ref[k], got[k])
            _check_same(b, a)   # (PyTorch's first)
        assert got["nt"].requires_grad and got["t"]._ragged_idx == 2
