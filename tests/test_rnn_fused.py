"""The fused LSTM layer (Note [Fused LSTM layer] in ops/nn_ops.py): a float32 nn.LSTM on the CPU
records one MkldnnRnnLayerBackward0 node per layer and direction, as PyTorch's oneDNN path;
values, gradients and double backward against PyTorch; gradcheck and gradgradcheck of the op in
float64, through both of its backwards (the array kernel and the differentiable one)."""
import numpy as np
import pytest

import ndgrad
from ndgrad.ops.nn_ops import lstm_layer

torch = pytest.importorskip("torch")


def _pair(kw, dtype="float32"):
    torch.manual_seed(0)
    ref = torch.nn.LSTM(dtype=getattr(torch, dtype), **kw)
    ours = ndgrad.nn.LSTM(dtype=getattr(ndgrad, dtype), **kw)
    ours.load_state_dict({k: ndgrad.tensor(v.detach().numpy())
                          for k, v in ref.state_dict().items()})
    return ours, ref


def _graph(fn, seen=None):
    """The node names of a graph in a canonical walk (to compare two libraries' graphs)."""
    out, stack, seen = [], [fn], set()
    while stack:
        f = stack.pop()
        if f is None:
            out.append(None)
            continue
        out.append(type(f).__name__)
        if id(f) in seen:
            continue
        seen.add(id(f))
        stack.extend(n for n, _ in reversed(f.next_functions))
    return out


CONFIGS = [
    dict(input_size=3, hidden_size=4),
    dict(input_size=3, hidden_size=4, num_layers=2, bidirectional=True),
    dict(input_size=3, hidden_size=5, num_layers=2, bias=False, batch_first=True),
]


@pytest.mark.parametrize("kw", CONFIGS)
@pytest.mark.parametrize("with_state", [False, True])
def test_lstm_float32_matches_pytorch(kw, with_state):
    ours, ref = _pair(kw)
    r = np.random.default_rng(1)
    x = r.standard_normal((4, 2, 3)).astype(np.float32)
    xo, xt = ndgrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    args_o, args_t = (xo,), (xt,)
    if with_state:
        L = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
        N = 4 if kw.get("batch_first") else 2
        hc = [r.standard_normal((L, N, kw["hidden_size"])).astype(np.float32) for _ in (0, 1)]
        so = tuple(ndgrad.tensor(a, requires_grad=True) for a in hc)
        st = tuple(torch.tensor(a, requires_grad=True) for a in hc)
        args_o, args_t = (xo, so), (xt, st)
    (o, (h, c)), (to, (th, tc)) = ours(*args_o), ref(*args_t)
    assert type(o.grad_fn).__name__ == type(to.grad_fn).__name__
    assert _graph(o.grad_fn) == _graph(to.grad_fn)
    assert _graph(h.grad_fn) == _graph(th.grad_fn)
    for a, b in ((o, to), (h, th), (c, tc)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    (o.sum() + (h * h).sum() + (c * o[-1].sum()).sum()).backward()
    (to.sum() + (th * th).sum() + (tc * to[-1].sum()).sum()).backward()
    pairs = [(xo, xt)] + list(zip(ours.parameters(), ref.parameters()))
    if with_state:
        pairs += list(zip(so, st))
    for a, b in pairs:
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_lstm_float32_double_backward_matches_pytorch():
    kw = dict(input_size=3, hidden_size=4, num_layers=2, bidirectional=True)
    ours, ref = _pair(kw)
    r = np.random.default_rng(2)
    vals = [r.standard_normal(s).astype(np.float32) for s in ((3, 2, 3), (4, 2, 4), (4, 2, 4))]

    def run(T, mod):
        x, h0, c0 = (T.tensor(v, requires_grad=True) for v in vals)
        o, (h, c) = mod(x, (h0, c0))
        gs = T.autograd.grad((o * o).sum() + (h * c).sum(), (x, h0, c0), create_graph=True)
        loss = (gs[0] * gs[0]).sum() + (gs[1] ** 3).sum() + gs[2].sum() * gs[1].sum()
        return [g.detach().numpy() for g in
                T.autograd.grad(loss, [x, h0, c0] + list(mod.parameters()))]

    for a, b in zip(run(ndgrad, ours), run(torch, ref)):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-5)


def _layer_inputs(reverse, seed=3):
    r = np.random.default_rng(seed)
    S, N, I, H = 3, 2, 3, 2
    shapes = [(S, N, I), (4 * H, I), (4 * H, H), (4 * H,), (4 * H,), (N, H), (N, H)]
    return [ndgrad.tensor(r.standard_normal(s), requires_grad=True) for s in shapes], H


@pytest.mark.parametrize("reverse", [False, True])
def test_lstm_layer_gradcheck_gradgradcheck_float64(reverse):
    inputs, H = _layer_inputs(reverse)

    def f(*args):
        return lstm_layer(*args, reverse, (), 2, H, 1, True, False, False, True)[:3]

    assert ndgrad.autograd.gradcheck(f, inputs)
    assert ndgrad.autograd.gradgradcheck(f, inputs)


@pytest.mark.parametrize("reverse", [False, True])
def test_lstm_layer_kernel_and_differentiable_backward_agree(reverse):
    inputs, H = _layer_inputs(reverse, seed=4)
    out, h, c, _ = lstm_layer(*inputs, reverse, (), 2, H, 1, True, False, False, True)
    loss = (out * out).sum() + (h * c).sum() + c.sum()
    kernel = ndgrad.autograd.grad(loss, inputs, retain_graph=True)
    recorded = ndgrad.autograd.grad(loss, inputs, create_graph=True)
    for a, b in zip(kernel, recorded):
        assert a.grad_fn is None and b.grad_fn is not None
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-13)


def test_lstm_float64_keeps_the_per_step_graph_and_gradgradcheck():
    # PyTorch's oneDNN path takes float32 only; a float64 LSTM records per-step ops as there
    kw = dict(input_size=2, hidden_size=2, num_layers=2)
    ours, ref = _pair(kw, "float64")
    x = np.random.default_rng(5).standard_normal((3, 1, 2))
    o, _ = ours(ndgrad.tensor(x))
    to, _ = ref(torch.tensor(x))
    assert type(o.grad_fn).__name__ == type(to.grad_fn).__name__ == "StackBackward0"
    xo = ndgrad.tensor(x, requires_grad=True)
    assert ndgrad.autograd.gradgradcheck(lambda v: ours(v)[0], (xo,))
