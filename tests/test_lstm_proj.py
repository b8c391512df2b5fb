"""nn.LSTM(proj_size=...) against PyTorch (float64): parameters, outputs, states, gradients,
packed input, errors."""
import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")


def _pair(kw):
    torch.manual_seed(0)
    ref = torch.nn.LSTM(dtype=torch.float64, **kw)
    ours = ndgrad.nn.LSTM(dtype=ndgrad.float64, **kw)
    ours.load_state_dict({k: ndgrad.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})
    return ours, ref


def _close(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kw", [
    dict(input_size=3, hidden_size=5, proj_size=2),
    dict(input_size=3, hidden_size=5, proj_size=2, num_layers=2, bidirectional=True),
    dict(input_size=3, hidden_size=4, proj_size=3, bias=False, batch_first=True),
])
def test_lstm_proj_matches_torch(kw):
    ours, ref = _pair(kw)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in ref.named_parameters()]
    assert repr(ours) == repr(ref)
    x = np.random.default_rng(1).standard_normal((2, 4, 3))
    xo, xt = ndgrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (o, (h, c)), (to, (th, tc)) = ours(xo), ref(xt)
    for a, b in ((o, to), (h, th), (c, tc)):
        _close(a, b)
    (o.sum() + (h * h).sum() + c.sum()).backward()
    (to.sum() + (th * th).sum() + tc.sum()).backward()
    _close(xo.grad, xt.grad)
    for (_, p), (_, tp) in zip(ours.named_parameters(), ref.named_parameters()):
        _close(p.grad, tp.grad)
    D = 2 if kw.get("bidirectional") else 1
    L = kw.get("num_layers", 1)
    h0 = np.random.default_rng(2).standard_normal((L * D, 4 if kw.get("batch_first") else 4,
                                                   kw["proj_size"]))
    c0 = np.random.default_rng(3).standard_normal((L * D, 4, kw["hidden_size"]))
    if not kw.get("batch_first"):
        (o, _), (to, _) = (ours(xo, (ndgrad.tensor(h0), ndgrad.tensor(c0))),
                           ref(xt, (torch.tensor(h0), torch.tensor(c0))))
        _close(o, to)


def test_lstm_proj_packed_and_errors():
    ours, ref = _pair(dict(input_size=2, hidden_size=4, proj_size=3))
    x = np.random.default_rng(4).standard_normal((5, 3, 2))
    lengths = [5, 3, 2]
    po = ndgrad.nn.utils.rnn.pack_padded_sequence(ndgrad.tensor(x), lengths)
    pt = torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), lengths)
    (o, (h, c)), (to, (th, tc)) = ours(po), ref(pt)
    _close(o.data, to.data)
    _close(h, th)
    _close(c, tc)
    for bad in (dict(proj_size=-1), dict(proj_size=4)):
        with pytest.raises(ValueError) as e:
            ndgrad.nn.LSTM(2, 4, **bad)
        with pytest.raises(ValueError) as te:
            torch.nn.LSTM(2, 4, **bad)
        assert str(e.value) == str(te.value)


def test_lstm_proj_double_backward():
    m = ndgrad.nn.LSTM(2, 3, proj_size=2, dtype=ndgrad.float64)
    x = ndgrad.randn(3, 1, 2, dtype=ndgrad.float64, requires_grad=True)
    assert ndgrad.autograd.gradcheck(lambda t: m(t)[0], (x,))
    assert ndgrad.autograd.gradgradcheck(lambda t: m(t)[0], (x,))
