"""RNN/LSTM/GRU, MultiheadAttention and TransformerEncoder against PyTorch."""
import numpy as np
import pytest

import ndgrad
import ndgrad.nn as nn

torch = pytest.importorskip("torch")

from test_nn_layers import _compare, _x, DTYPES  # noqa: E402


RNNS = [
    ("RNN", lambda m: m.RNN(3, 4, num_layers=2, nonlinearity="relu"), [_x(5, 2, 3)]),
    ("RNNbidir", lambda m: m.RNN(3, 4, bidirectional=True, batch_first=True), [_x(2, 5, 3)]),
    ("LSTM", lambda m: m.LSTM(3, 4, num_layers=2, bidirectional=True), [_x(5, 2, 3)]),
    ("LSTMnobias", lambda m: m.LSTM(3, 4, bias=False, batch_first=True), [_x(2, 4, 3)]),
    ("LSTMunbatched", lambda m: m.LSTM(3, 4), [_x(5, 3)]),
    ("GRU", lambda m: m.GRU(3, 4, num_layers=2, batch_first=True), [_x(2, 5, 3)]),
    ("GRUbidir", lambda m: m.GRU(3, 2, bidirectional=True), [_x(4, 1, 3)]),
    ("RNNCell", lambda m: m.RNNCell(3, 4), [_x(2, 3)]),
    ("LSTMCell", lambda m: m.LSTMCell(3, 4), [_x(2, 3)]),
    ("GRUCell", lambda m: m.GRUCell(3, 4), [_x(3)]),
]


@pytest.mark.parametrize("dt", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name,make,inputs", RNNS, ids=[r[0] for r in RNNS])
def test_rnn_matches_torch(name, make, inputs, dt):
    _compare(make(nn), make(torch.nn), inputs, *dt)


def _states(out):
    return out[1] if isinstance(out[1], tuple) else (out[1],)


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_rnn_initial_and_final_states(cls):
    o, t = getattr(nn, cls)(3, 4, num_layers=2), getattr(torch.nn, cls)(3, 4, num_layers=2)
    o.load_state_dict({k: ndgrad.tensor(v.numpy().copy()) for k, v in t.state_dict().items()})
    x, h0, c0 = _x(5, 2, 3), _x(2, 2, 4, seed=1), _x(2, 2, 4, seed=2)
    ho = (ndgrad.tensor(h0, dtype=ndgrad.float32), ndgrad.tensor(c0, dtype=ndgrad.float32))
    ht = (torch.tensor(h0, dtype=torch.float32), torch.tensor(c0, dtype=torch.float32))
    if cls != "LSTM":
        ho, ht = ho[0], ht[0]
    oo = o(ndgrad.tensor(x, dtype=ndgrad.float32), ho)
    ot = t(torch.tensor(x, dtype=torch.float32), ht)
    np.testing.assert_allclose(oo[0].detach().numpy(), ot[0].detach().numpy(), atol=1e-5)
    for a, b in zip(_states(oo), _states(ot)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-5)


def test_rnn_parameter_names_and_repr():
    o = nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True)
    t = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True)
    assert [n for n, _ in o.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert repr(o) == repr(t)
    assert repr(nn.GRU(2, 3, dropout=0.5, num_layers=2)) == \
        repr(torch.nn.GRU(2, 3, dropout=0.5, num_layers=2))
    for a, b in zip(o.parameters(), t.parameters()):  # uniform(-1/sqrt(H), 1/sqrt(H))
        assert a.shape == tuple(b.shape)
        assert np.abs(a.detach().numpy()).max() <= 0.5


MHA = [
    ("MHA", lambda m: m.MultiheadAttention(8, 2), lambda: [_x(5, 3, 8), _x(4, 3, 8, seed=1),
                                                            _x(4, 3, 8, seed=2)], {}),
    ("MHAbf", lambda m: m.MultiheadAttention(6, 3, batch_first=True, bias=False),
     lambda: [_x(2, 5, 6), _x(2, 5, 6, seed=1), _x(2, 5, 6, seed=2)], {}),
    ("MHAkdim", lambda m: m.MultiheadAttention(4, 2, kdim=3, vdim=5),
     lambda: [_x(2, 3, 4), _x(5, 3, 3, seed=1), _x(5, 3, 5, seed=2)], {}),
    ("MHAmasks", lambda m: m.MultiheadAttention(4, 2),
     lambda: [_x(3, 2, 4), _x(3, 2, 4, seed=1), _x(3, 2, 4, seed=2)], {"masks": True}),
]


@pytest.mark.parametrize("dt", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name,make,inputs,kw", MHA, ids=[m[0] for m in MHA])
def test_mha_matches_torch(name, make, inputs, kw, dt):
    o, t = make(nn), make(torch.nn)
    if kw.get("masks"):
        kpm = np.array([[False, False, True], [False, False, False]])
        am = np.triu(np.ones((3, 3), dtype=bool), 1)

        def wrap(mod, lib):
            f = mod.forward
            mod.forward = lambda q, k, v: f(q, k, v, key_padding_mask=lib.tensor(kpm),
                                             attn_mask=lib.tensor(am), average_attn_weights=False)
            return mod
        o, t = wrap(o, ndgrad), wrap(t, torch)
    _compare(o, t, inputs(), *dt)
    # weights (second output) too
    qo = ndgrad.tensor(inputs()[0], dtype=dt[0])
    qt = torch.tensor(inputs()[0], dtype=dt[1])
    if name in ("MHA", "MHAmasks"):
        wo, wt = o(qo, qo, qo)[1], t(qt, qt, qt)[1]
        np.testing.assert_allclose(wo.detach().numpy(), wt.detach().numpy(), atol=dt[2] * 10)


@pytest.mark.parametrize("norm_first,act,bf", [(False, "relu", False), (True, "gelu", True)])
def test_transformer_encoder_matches_torch(norm_first, act, bf):
    kw = dict(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, activation=act,
              batch_first=bf, norm_first=norm_first)
    o = nn.TransformerEncoder(nn.TransformerEncoderLayer(**kw), 2)
    t = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(**kw), 2,
                                    enable_nested_tensor=False)
    assert repr(o) == repr(t)
    _compare(o, t, [_x(3, 4, 8)], ndgrad.float64, torch.float64, 1e-9)


def test_transformer_encoder_layer_with_padding_mask():
    kw = dict(d_model=4, nhead=2, dim_feedforward=8, dropout=0.0)
    o, t = nn.TransformerEncoderLayer(**kw), torch.nn.TransformerEncoderLayer(**kw)
    kpm = np.array([[False, True, True], [False, False, False]])
    fo, ft = o.forward, t.forward
    o.forward = lambda x: fo(x, src_key_padding_mask=ndgrad.tensor(kpm))
    t.forward = lambda x: ft(x, src_key_padding_mask=torch.tensor(kpm))
    _compare(o, t, [_x(3, 2, 4)], ndgrad.float64, torch.float64, 1e-9)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_matches_torch(norm_first):
    kw = dict(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=2,
              dim_feedforward=16, dropout=0.0, norm_first=norm_first)
    o, t = nn.Transformer(**kw), torch.nn.Transformer(**kw)
    assert repr(o) == repr(t)
    mo = nn.Transformer.generate_square_subsequent_mask(3)
    mt = torch.nn.Transformer.generate_square_subsequent_mask(3)
    np.testing.assert_array_equal(mo.numpy(), mt.numpy())
    fo, ft = o.forward, t.forward
    o.forward = lambda s, g: fo(s, g, tgt_mask=mo.double())
    t.forward = lambda s, g: ft(s, g, tgt_mask=mt.double())
    _compare(o, t, [_x(4, 2, 8), _x(3, 2, 8, seed=1)], ndgrad.float64, torch.float64, 1e-9)
