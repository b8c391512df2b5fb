"""Creation, nn.init, nn modules, optimizers, nn.utils and utils.data on the strict stand-in
device (ndgrad.cuda._standin behind device "cuda") against the CPU.

The stand-in's arrays refuse any implicit trip through NumPy, so a host fallback anywhere in
these paths fails here. Random draws are made on the host generator and moved to the device
once, so with the same seed the device gives the CPU's values exactly.
"""
import copy

import numpy as np
import pytest

import ndgrad
from ndgrad import nn, optim
from ndgrad.nn import functional as F
from ndgrad.nn import init
from ndgrad.nn.utils import prune, parametrizations
from ndgrad.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from ndgrad.utils.data import DataLoader, TensorDataset, default_collate

pytestmark = pytest.mark.standin

CUDA = ndgrad.device("cuda", 0)
CPU = ndgrad.device("cpu")


# the `standin` fixture (conftest.py): the stand-in behind "cuda", no default device (each
# test says where it builds)


def _host(t):
    return t.detach().cpu().numpy()


def _same(ours, ref, what, exact=False, rtol=1e-10):
    """`ours` is on the stand-in with `ref`'s (a CPU tensor's) dtype, shape and values."""
    assert isinstance(ours, ndgrad.Tensor), f"{what}: {type(ours)}"
    assert ours.device == CUDA, f"{what}: on {ours.device}"
    assert type(ours._data) is not np.ndarray, what
    assert ref.device == CPU, what
    assert ours.dtype == ref.dtype and ours.shape == ref.shape, \
        f"{what}: {ours.dtype}{tuple(ours.shape)} vs {ref.dtype}{tuple(ref.shape)}"
    o, r = _host(ours), _host(ref)
    if exact or r.dtype.kind not in "fc":
        np.testing.assert_array_equal(o, r, err_msg=what)
    else:
        np.testing.assert_allclose(o, r, rtol=rtol, atol=rtol / 100, err_msg=what)


# ---------------------------------------------------------------- (a) creation

def _probs(T, **d):
    return T.tensor([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]], **d)


FACTORIES = {
    "tensor": lambda T, **d: T.tensor([[1.5, 2.0], [3.0, -4.0]], **d),
    "tensor_int": lambda T, **d: T.tensor([1, 2, 3], **d),
    "tensor_bool": lambda T, **d: T.tensor([True, False], **d),
    "tensor_dtype": lambda T, **d: T.tensor([1, 2], dtype=T.float32, **d),
    "tensor_numpy": lambda T, **d: T.tensor(np.arange(6.0).reshape(2, 3), **d),
    "as_tensor": lambda T, **d: T.as_tensor([[1, 2], [3, 4]], **d),
    "as_tensor_numpy": lambda T, **d: T.as_tensor(np.arange(4, dtype=np.float32), **d),
    "zeros": lambda T, **d: T.zeros(2, 3, **d),
    "ones": lambda T, **d: T.ones((2, 3), dtype=T.int32, **d),
    "empty": lambda T, **d: T.empty(2, 3, **d).zero_(),
    "full": lambda T, **d: T.full((2, 3), 7.5, **d),
    "full_int": lambda T, **d: T.full((2,), 7, **d),
    "arange": lambda T, **d: T.arange(10, **d),
    "arange_float": lambda T, **d: T.arange(0, 5, 0.5, **d),
    "arange_f32": lambda T, **d: T.arange(-1.0, 1.0, 0.3, dtype=T.float32, **d),
    "range": lambda T, **d: T.range(0, 4, 0.5, **d),
    "linspace": lambda T, **d: T.linspace(-1, 1, 7, **d),
    "linspace_f32": lambda T, **d: T.linspace(0.1, 3.7, 11, dtype=T.float32, **d),
    "linspace_int": lambda T, **d: T.linspace(0, 10, 4, dtype=T.int64, **d),
    "logspace": lambda T, **d: T.logspace(0, 2, 5, **d),
    "logspace_base2": lambda T, **d: T.logspace(-1, 3, 5, base=2.0, **d),
    "eye": lambda T, **d: T.eye(3, **d),
    "eye_rect": lambda T, **d: T.eye(2, 4, **d),
    "rand": lambda T, **d: T.rand(3, 4, **d),
    "rand_complex": lambda T, **d: T.rand(2, dtype=T.complex64, **d),
    "randn": lambda T, **d: T.randn(3, 4, **d),
    "randn_f32": lambda T, **d: T.randn(5, dtype=T.float32, **d),
    "randint": lambda T, **d: T.randint(0, 10, (3, 4), **d),
    "randint_high": lambda T, **d: T.randint(5, (6,), **d),
    "randperm": lambda T, **d: T.randperm(7, **d),
    "normal": lambda T, **d: T.normal(1.0, 2.0, (3, 2), **d),
    "normal_generator": lambda T, **d: T.rand(4, generator=T.Generator().manual_seed(3), **d),
}

# factories of tensor inputs: the input is built on the device under test
LIKE = {
    "zeros_like": lambda T, x: T.zeros_like(x),
    "ones_like": lambda T, x: T.ones_like(x),
    "empty_like": lambda T, x: T.empty_like(x).zero_(),
    "full_like": lambda T, x: T.full_like(x, 2.5),
    "rand_like": lambda T, x: T.rand_like(x),
    "randn_like": lambda T, x: T.randn_like(x),
    "randint_like": lambda T, x: T.randint_like(x, 10),
    "normal_tensors": lambda T, x: T.normal(x, x * 0.5 + 1),
    "normal_mean": lambda T, x: T.normal(x, 0.5),
    "normal_std": lambda T, x: T.normal(0.0, x + 1),
    "bernoulli": lambda T, x: T.bernoulli(x * 0 + 0.5),
    "bernoulli_p": lambda T, x: T.bernoulli(x, 0.3),
    "multinomial": lambda T, x: T.multinomial(_probs(T, device=x.device), 4, replacement=True),
    "multinomial_norep": lambda T, x: T.multinomial(_probs(T, device=x.device), 2),
    "poisson": lambda T, x: T.poisson(x * 3),
    "binomial": lambda T, x: T.binomial(x * 0 + 5, x * 0 + 0.25),
    "tensor_of_tensor": lambda T, x: T.tensor(x),
    "as_tensor_of_tensor": lambda T, x: T.as_tensor(x, dtype=T.float32),
}


def _seeded(fn, *args, **kw):
    ndgrad.manual_seed(1234)
    return fn(ndgrad, *args, **kw)


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_factory_on_device(name, standin):
    fn = FACTORIES[name]
    ref = _seeded(fn)
    _same(_seeded(fn, device="cuda"), ref, f"{name}(device='cuda')", exact=True)
    _same(_seeded(fn, device=CUDA), ref, f"{name}(device=cuda:0)", exact=True)
    ndgrad.set_default_device("cuda")
    try:
        _same(_seeded(fn), ref, f"{name} under set_default_device('cuda')", exact=True)
        cpu = _seeded(fn, device="cpu")    # an explicit CPU device still wins
        assert cpu.device == CPU and type(cpu._data) is np.ndarray, name
    finally:
        ndgrad.set_default_device(None)


@pytest.mark.parametrize("name", sorted(LIKE))
def test_factory_of_a_device_tensor(name, standin):
    fn = LIKE[name]
    x = ndgrad.tensor([[0.1, 0.9, 0.4], [0.7, 0.2, 0.5]], dtype=ndgrad.float64)
    ref = _seeded(fn, x)
    _same(_seeded(fn, x.to("cuda")), ref, name, exact=True)


def test_like_factories_follow_the_input_not_the_default(standin):
    x = ndgrad.ones(2, 2)
    ndgrad.set_default_device("cuda")
    try:
        for f in (ndgrad.zeros_like, ndgrad.ones_like, ndgrad.rand_like, ndgrad.randn_like):
            assert f(x).device == CPU, f.__name__
        assert ndgrad.full_like(x, 3.0).device == CPU
        assert ndgrad.zeros_like(x, device="cuda").device == CUDA
    finally:
        ndgrad.set_default_device(None)


def test_tensor_moves_between_devices(standin):
    x = ndgrad.arange(6.0).reshape(2, 3)
    on = ndgrad.tensor(x, device="cuda")
    _same(on, x, "tensor(cpu, device=cuda)", exact=True)
    back = ndgrad.tensor(on, device="cpu")
    assert back.device == CPU and type(back._data) is np.ndarray
    np.testing.assert_array_equal(back.numpy(), x.numpy())
    assert ndgrad.as_tensor(on) is on
    _same(ndgrad.as_tensor(x, device="cuda"), x, "as_tensor(cpu, device=cuda)", exact=True)


def test_generator_state_round_trip_on_device(standin):
    g = ndgrad.Generator().manual_seed(7)
    state = g.get_state()
    a = ndgrad.randn(5, generator=g, device="cuda")
    g.set_state(state)
    _same(a, ndgrad.randn(5, generator=g), "replayed draw", exact=True)


# ---------------------------------------------------------------- (b) nn.init

INITS = {
    "uniform_": lambda w: init.uniform_(w, -0.5, 2.0),
    "normal_": lambda w: init.normal_(w, 1.0, 0.5),
    "trunc_normal_": lambda w: init.trunc_normal_(w, 0.0, 1.0, -1.0, 1.5),
    "constant_": lambda w: init.constant_(w, 0.25),
    "ones_": init.ones_,
    "zeros_": init.zeros_,
    "eye_": init.eye_,
    "xavier_uniform_": lambda w: init.xavier_uniform_(w, gain=2.0),
    "xavier_normal_": init.xavier_normal_,
    "kaiming_uniform_": lambda w: init.kaiming_uniform_(w, a=0.1),
    "kaiming_normal_": lambda w: init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu"),
    "orthogonal_": lambda w: init.orthogonal_(w, gain=1.5),
    "orthogonal_wide": lambda w: init.orthogonal_(w.t()),
    "sparse_": lambda w: init.sparse_(w, 0.5, std=0.1),
}
INITS_4D = {
    "dirac_": init.dirac_,
    "dirac_groups": lambda w: init.dirac_(w, groups=2),
    "kaiming_uniform_conv": init.kaiming_uniform_,
    "xavier_uniform_conv": init.xavier_uniform_,
    "orthogonal_conv": init.orthogonal_,
}


@pytest.mark.parametrize("name", sorted(INITS) + sorted(INITS_4D))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_init_on_device(name, dtype, standin):
    fn = INITS.get(name) or INITS_4D[name]
    shape = (4, 2, 3, 3) if name in INITS_4D else (5, 3)
    dt = getattr(ndgrad, dtype)
    ref = nn.Parameter(ndgrad.zeros(shape, dtype=dt))
    ours = nn.Parameter(ndgrad.zeros(shape, dtype=dt, device="cuda"))
    v0 = ours._version
    ndgrad.manual_seed(5)
    r = fn(ref)
    ndgrad.manual_seed(5)
    o = fn(ours)
    assert ours._version > v0, name
    assert type(ours._data) is not np.ndarray and ours.is_leaf and ours.requires_grad
    _same(o, r, name)
    _same(ours, ref, name)


# ---------------------------------------------------------------- (c) nn modules

def _seq(T, L=5, N=3, H=4):
    return T.randn(L, N, H, dtype=T.float64)


MODULES = {
    # name: (builder, input maker) -- inputs are made on the CPU with the module's seed
    "Linear": (lambda: nn.Linear(4, 3), lambda: ndgrad.randn(2, 4)),
    "Bilinear": (lambda: nn.Bilinear(3, 2, 4), lambda: (ndgrad.randn(5, 3),
                                                        ndgrad.randn(5, 2))),
    "Conv1d": (lambda: nn.Conv1d(2, 3, 3, padding=1), lambda: ndgrad.randn(2, 2, 7)),
    "Conv2d": (lambda: nn.Conv2d(2, 4, 3, stride=2, padding=1, groups=2),
               lambda: ndgrad.randn(2, 2, 6, 5)),
    "Conv2d_reflect": (lambda: nn.Conv2d(1, 2, 3, padding=1, padding_mode="reflect"),
                       lambda: ndgrad.randn(1, 1, 5, 5)),
    "Conv3d": (lambda: nn.Conv3d(1, 2, 2), lambda: ndgrad.randn(1, 1, 3, 4, 3)),
    "ConvTranspose2d": (lambda: nn.ConvTranspose2d(2, 3, 3, stride=2, output_padding=1),
                        lambda: ndgrad.randn(2, 2, 3, 3)),
    "BatchNorm1d": (lambda: nn.BatchNorm1d(3), lambda: ndgrad.randn(6, 3)),
    "BatchNorm2d": (lambda: nn.BatchNorm2d(2), lambda: ndgrad.randn(3, 2, 4, 4)),
    "BatchNorm2d_eval": (lambda: nn.BatchNorm2d(2).eval(), lambda: ndgrad.randn(3, 2, 4, 4)),
    "LayerNorm": (lambda: nn.LayerNorm([3, 4]), lambda: ndgrad.randn(2, 3, 4)),
    "GroupNorm": (lambda: nn.GroupNorm(2, 4), lambda: ndgrad.randn(2, 4, 3)),
    "Embedding": (lambda: nn.Embedding(10, 3, padding_idx=0),
                  lambda: ndgrad.tensor([[1, 0, 4], [9, 9, 2]])),
    "EmbeddingBag": (lambda: nn.EmbeddingBag(10, 3, mode="mean"),
                     lambda: (ndgrad.tensor([1, 2, 4, 5, 4, 3, 2, 9]),
                              ndgrad.tensor([0, 4]))),
    "EmbeddingBag_max": (lambda: nn.EmbeddingBag(10, 3, mode="max"),
                         lambda: ndgrad.tensor([[1, 2, 4], [4, 3, 9]])),
    "LSTM": (lambda: nn.LSTM(4, 5, num_layers=2), lambda: _seq(ndgrad)),
    "LSTM_bidirectional": (lambda: nn.LSTM(4, 3, bidirectional=True, batch_first=True),
                           lambda: ndgrad.randn(3, 5, 4)),
    "LSTM_proj": (lambda: nn.LSTM(4, 5, proj_size=2), lambda: _seq(ndgrad)),
    "GRU": (lambda: nn.GRU(4, 5, bidirectional=True), lambda: _seq(ndgrad)),
    "RNN": (lambda: nn.RNN(4, 3, nonlinearity="relu"), lambda: _seq(ndgrad)),
    "LSTMCell": (lambda: nn.LSTMCell(4, 3), lambda: ndgrad.randn(2, 4)),
    "GRUCell": (lambda: nn.GRUCell(4, 3), lambda: ndgrad.randn(2, 4)),
    "TransformerEncoderLayer": (
        lambda: nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                           batch_first=True),
        lambda: ndgrad.randn(2, 5, 8)),
    "TransformerDecoderLayer": (
        lambda: nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                           norm_first=True),
        lambda: (ndgrad.randn(4, 2, 8), ndgrad.randn(5, 2, 8))),
    "Transformer": (
        lambda: nn.Transformer(8, 2, num_encoder_layers=1, num_decoder_layers=1,
                               dim_feedforward=16, dropout=0.0),
        lambda: (ndgrad.randn(5, 2, 8), ndgrad.randn(4, 2, 8))),
    "MultiheadAttention": (lambda: nn.MultiheadAttention(8, 2, kdim=6, vdim=5),
                           lambda: (ndgrad.randn(4, 2, 8), ndgrad.randn(3, 2, 6),
                                    ndgrad.randn(3, 2, 5))),
    "MultiheadAttention_bias_kv": (
        lambda: nn.MultiheadAttention(8, 2, add_bias_kv=True, add_zero_attn=True,
                                      batch_first=True),
        lambda: (ndgrad.randn(2, 4, 8),) * 3),
    "AdaptiveLogSoftmaxWithLoss": (
        lambda: nn.AdaptiveLogSoftmaxWithLoss(6, 10, cutoffs=[3, 6], div_value=2.0),
        lambda: (ndgrad.randn(7, 6), ndgrad.tensor([0, 9, 3, 4, 2, 8, 5]))),
    "Dropout_eval": (lambda: nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5)).eval(),
                     lambda: ndgrad.randn(3, 4)),
    "MLP": (lambda: nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8), nn.Tanh(),
                                  nn.LayerNorm(8), nn.Linear(8, 2), nn.LogSoftmax(dim=1)),
            lambda: ndgrad.randn(5, 4)),
    "PReLU": (lambda: nn.PReLU(3), lambda: ndgrad.randn(2, 3, 4)),
    "RMSNorm": (lambda: nn.RMSNorm(4), lambda: ndgrad.randn(2, 4)),
    "InstanceNorm2d": (lambda: nn.InstanceNorm2d(2, affine=True, track_running_stats=True),
                       lambda: ndgrad.randn(2, 2, 4, 4)),
    "Upsample_bilinear": (lambda: nn.Sequential(nn.Conv2d(2, 2, 1),
                                                nn.Upsample(scale_factor=2, mode="bilinear")),
                          lambda: ndgrad.randn(1, 2, 3, 3)),
    "AdaptiveAvgPool2d": (lambda: nn.Sequential(nn.Conv2d(1, 1, 1), nn.AdaptiveAvgPool2d(2)),
                          lambda: ndgrad.randn(1, 1, 5, 5)),
    "Embedding_max_norm": (lambda: nn.Embedding(5, 3, max_norm=1.0),
                           lambda: ndgrad.tensor([1, 2, 1])),
    "TransformerEncoder": (
        lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8, 0.0), 2,
                                      enable_nested_tensor=False),
        lambda: ndgrad.randn(3, 2, 4)),
    "CrossEntropyLoss": (lambda: _Loss(nn.CrossEntropyLoss(weight=ndgrad.tensor([1., 2., 3.]),
                                                           label_smoothing=0.1)),
                         lambda: (ndgrad.randn(4, 3), ndgrad.tensor([0, 2, 1, 2]))),
    "NLLLoss": (lambda: _Loss(nn.NLLLoss(ignore_index=1)),
                lambda: (ndgrad.randn(4, 3), ndgrad.tensor([0, 2, 1, 2]))),
    "BCEWithLogitsLoss": (lambda: _Loss(nn.BCEWithLogitsLoss(pos_weight=ndgrad.ones(3) * 2)),
                          lambda: (ndgrad.randn(4, 3), ndgrad.rand(4, 3))),
    "HuberLoss": (lambda: _Loss(nn.HuberLoss(delta=0.5)),
                  lambda: (ndgrad.randn(4, 3), ndgrad.randn(4, 3))),
    "MaxPool_AvgPool": (lambda: nn.Sequential(nn.Conv2d(2, 2, 1), nn.MaxPool2d(2),
                                              nn.AvgPool2d(2, ceil_mode=True)),
                        lambda: ndgrad.randn(1, 2, 6, 6)),
}


class _Loss(nn.Module):
    """A loss module behind a one-parameter scale, so its input has a gradient to compare."""

    def __init__(self, loss):
        super().__init__()
        self.scale = nn.Linear(1, 1)
        self.loss = loss

    def forward(self, x, *rest):
        return self.loss(x * self.scale.weight.sum(), *rest)


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _outputs(out):
    """The tensors of a module's output (nested tuples, named tuples)."""
    if isinstance(out, ndgrad.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _outputs(o)]
    return []


def _run_module(m, inputs):
    out = m(*inputs)
    outs = [o for o in _outputs(out) if o.dtype.is_floating_point]
    loss = sum((o * (k + 1.0)).sin().sum() for k, o in enumerate(outs))
    loss.backward()
    return outs


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_forward_backward_on_device(name, standin):
    build, make = MODULES[name]
    ndgrad.manual_seed(0)
    ref = build().double()
    inputs = tuple(t.double() if t.dtype.is_floating_point else t for t in _as_tuple(make()))
    ours = copy.deepcopy(ref).to("cuda")
    for n, p in ours.named_parameters():
        assert p.device == CUDA and type(p._data) is not np.ndarray, n
        assert isinstance(p, nn.Parameter) and p.is_leaf, n
    for n, b in ours.named_buffers():
        assert b.device == CUDA, n
    for n, b in ref.named_buffers():
        assert b.device == CPU, n
    dev_inputs = tuple(t.to("cuda") for t in inputs)
    ndgrad.manual_seed(1)
    r_out = _run_module(ref, inputs)
    ndgrad.manual_seed(1)
    o_out = _run_module(ours, dev_inputs)
    assert len(o_out) == len(r_out) > 0
    for k, (o, r) in enumerate(zip(o_out, r_out)):
        _same(o, r, f"{name} output {k}")
    ref_params = dict(ref.named_parameters())
    for n, p in ours.named_parameters():
        if ref_params[n].grad is None:
            assert p.grad is None, n
            continue
        _same(p.grad, ref_params[n].grad, f"{name} grad of {n}")
    ref_buffers = dict(ref.named_buffers())
    for n, b in ours.named_buffers():
        _same(b, ref_buffers[n], f"{name} buffer {n}")
    back = ours.cpu()
    assert all(p.device == CPU and type(p._data) is np.ndarray for p in back.parameters())


BUILT_ON_DEVICE = {
    "Linear": lambda **d: nn.Linear(4, 3, **d),
    "Bilinear": lambda **d: nn.Bilinear(3, 2, 4, **d),
    "Conv2d": lambda **d: nn.Conv2d(2, 4, 3, **d),
    "ConvTranspose1d": lambda **d: nn.ConvTranspose1d(2, 3, 2, **d),
    "BatchNorm1d": lambda **d: nn.BatchNorm1d(3, **d),
    "LayerNorm": lambda **d: nn.LayerNorm(4, **d),
    "GroupNorm": lambda **d: nn.GroupNorm(2, 4, **d),
    "Embedding": lambda **d: nn.Embedding(5, 3, **d),
    "EmbeddingBag": lambda **d: nn.EmbeddingBag(5, 3, **d),
    "PReLU": lambda **d: nn.PReLU(2, **d),
    "LSTM": lambda **d: nn.LSTM(3, 4, bidirectional=True, **d),
    "GRUCell": lambda **d: nn.GRUCell(3, 4, **d),
    "MultiheadAttention": lambda **d: nn.MultiheadAttention(4, 2, kdim=3, vdim=2,
                                                            add_bias_kv=True, **d),
    "Transformer": lambda **d: nn.Transformer(4, 2, 1, 1, 8, **d),
    "AdaptiveLogSoftmaxWithLoss": lambda **d: nn.AdaptiveLogSoftmaxWithLoss(4, 8, [2, 5],
                                                                            **d),
}


@pytest.mark.parametrize("name", sorted(BUILT_ON_DEVICE))
def test_module_built_on_device(name, standin):
    """Modules' device= (and the default device) put every parameter and buffer there, with
    the values the same seed gives on the CPU."""
    build = BUILT_ON_DEVICE[name]
    ndgrad.manual_seed(0)
    ref = build(dtype=ndgrad.float64)
    ndgrad.manual_seed(0)
    ours = build(dtype=ndgrad.float64, device="cuda")
    ndgrad.manual_seed(0)
    ndgrad.set_default_device("cuda")
    try:
        by_default = build(dtype=ndgrad.float64)
    finally:
        ndgrad.set_default_device(None)
    for m in (ours, by_default):
        rs = dict(ref.state_dict())
        os_ = dict(m.state_dict())
        assert set(os_) == set(rs) and rs, name
        for k, v in rs.items():
            _same(os_[k], v, f"{name} {k}", exact=True)


def test_module_cuda_and_cpu_methods(standin):
    m = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    assert m.cuda() is m
    assert all(p.device == CUDA for p in m.parameters())
    assert all(b.device == CUDA for b in m.buffers())
    x = ndgrad.randn(4, 3, device="cuda")
    assert m(x).device == CUDA
    m.cpu()
    assert all(p.device == CPU for p in list(m.parameters()) + list(m.buffers()))


def _packed_lstm(m, x, lengths, enforce_sorted):
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=enforce_sorted)
    out, (h, c) = m(packed)
    padded, out_lengths = pad_packed_sequence(out, batch_first=True, total_length=5)
    return packed, padded, out_lengths, h, c


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_sequences_on_device(enforce_sorted, standin):
    ndgrad.manual_seed(0)
    ref = nn.LSTM(3, 4, bidirectional=True, batch_first=True).double()
    ours = copy.deepcopy(ref).cuda()
    x = ndgrad.randn(3, 5, 3, dtype=ndgrad.float64)
    lengths = [5, 3, 2] if enforce_sorted else [3, 5, 2]
    results = []
    for m, inp in ((ref, x), (ours, x.to("cuda"))):
        packed, padded, out_lengths, h, c = _packed_lstm(m, inp, lengths, enforce_sorted)
        (padded.sum() + h.pow(2).sum() + c.sum()).backward()
        results.append((packed, padded, out_lengths, h, c, m))
    (rp, rpad, rl, rh, rc, rm), (op, opad, ol, oh, oc, om) = results
    _same(op.data, rp.data, "packed data")
    assert op.batch_sizes.device == CPU      # as PyTorch's: batch_sizes stays on the host
    np.testing.assert_array_equal(op.batch_sizes.numpy(), rp.batch_sizes.numpy())
    if not enforce_sorted:
        _same(op.sorted_indices, rp.sorted_indices, "sorted_indices")
        _same(op.unsorted_indices, rp.unsorted_indices, "unsorted_indices")
    assert op.is_cuda and not rp.is_cuda
    _same(opad, rpad, "padded output")
    assert ol.device == CPU
    np.testing.assert_array_equal(ol.numpy(), rl.numpy())
    _same(oh, rh, "h_n")
    _same(oc, rc, "c_n")
    for (n, p), q in zip(om.named_parameters(), rm.parameters()):
        _same(p.grad, q.grad, f"grad of {n}")
    moved = rp.to("cuda")
    _same(moved.data, rp.data, "PackedSequence.to")
    assert moved.cpu().data.device == CPU and moved.batch_sizes.device == CPU
    assert rp.cpu() is rp and moved.cuda() is moved
    cast = rp.cuda(ndgrad.float32)
    _same(cast.data, rp.data.float(), "PackedSequence.cuda(dtype)")
    if not enforce_sorted:
        _same(cast.sorted_indices, rp.sorted_indices, "moved sorted_indices")


def test_pad_sequence_on_device(standin):
    seqs = [ndgrad.randn(n, 2, dtype=ndgrad.float64) for n in (4, 1, 3)]
    for kw in ({}, {"batch_first": True, "padding_value": -1.0}, {"padding_side": "left"}):
        _same(pad_sequence([s.to("cuda") for s in seqs], **kw), pad_sequence(seqs, **kw),
              f"pad_sequence {kw}")


def test_square_subsequent_mask_device(standin):
    ref = nn.Transformer.generate_square_subsequent_mask(4)
    _same(nn.Transformer.generate_square_subsequent_mask(4, device="cuda"), ref, "mask")
    ndgrad.set_default_device("cuda")
    try:
        _same(nn.Transformer.generate_square_subsequent_mask(4), ref, "mask (default)")
    finally:
        ndgrad.set_default_device(None)


def test_adaptive_log_softmax_methods_on_device(standin):
    ndgrad.manual_seed(0)
    ref = nn.AdaptiveLogSoftmaxWithLoss(6, 10, cutoffs=[3, 6]).double()
    ours = copy.deepcopy(ref).cuda()
    x = ndgrad.randn(4, 6, dtype=ndgrad.float64)
    _same(ours.log_prob(x.cuda()), ref.log_prob(x), "log_prob")
    _same(ours.predict(x.cuda()), ref.predict(x), "predict")
    with pytest.raises(RuntimeError, match="Target values should be in"):
        ours(x.cuda(), ndgrad.tensor([0, 1, 2, 10], device="cuda"))


# ---------------------------------------------------------------- (d) optimizers

OPTIMIZERS = {
    "SGD": lambda ps: optim.SGD(ps, lr=0.1),
    "SGD_momentum": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01),
    "SGD_nesterov": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True,
                                         dampening=0),
    "Adam": lambda ps: optim.Adam(ps, lr=0.01),
    "Adam_amsgrad": lambda ps: optim.Adam(ps, lr=0.01, amsgrad=True, weight_decay=0.1),
    "Adam_maximize": lambda ps: optim.Adam(ps, lr=0.01, maximize=True),
    "AdamW": lambda ps: optim.AdamW(ps, lr=0.01),
    "AdamW_amsgrad": lambda ps: optim.AdamW(ps, lr=0.01, amsgrad=True),
    "Adagrad": lambda ps: optim.Adagrad(ps, lr=0.1, lr_decay=0.01, weight_decay=0.1),
    "Adadelta": lambda ps: optim.Adadelta(ps, lr=1.0, weight_decay=0.01),
    "Adamax": lambda ps: optim.Adamax(ps, lr=0.01),
    "ASGD": lambda ps: optim.ASGD(ps, lr=0.01, t0=1),
    "NAdam": lambda ps: optim.NAdam(ps, lr=0.01),
    "NAdam_decoupled": lambda ps: optim.NAdam(ps, lr=0.01, weight_decay=0.1,
                                              decoupled_weight_decay=True),
    "RAdam": lambda ps: optim.RAdam(ps, lr=0.01),
    "RMSprop": lambda ps: optim.RMSprop(ps, lr=0.01),
    "RMSprop_centered": lambda ps: optim.RMSprop(ps, lr=0.01, centered=True, momentum=0.5),
    "Rprop": lambda ps: optim.Rprop(ps, lr=0.01),
    "Adafactor": lambda ps: optim.Adafactor(ps, lr=0.01),
    "LBFGS": lambda ps: optim.LBFGS(ps, lr=0.5, max_iter=4, history_size=3),
    "LBFGS_strong_wolfe": lambda ps: optim.LBFGS(ps, lr=1, max_iter=4,
                                                 line_search_fn="strong_wolfe"),
    "Muon": lambda ps: optim.Muon(ps, lr=0.02),
}


def _problem(dtype):
    ndgrad.manual_seed(3)
    w = nn.Parameter(ndgrad.randn(4, 3, dtype=dtype))
    b = nn.Parameter(ndgrad.randn(3, dtype=dtype))
    x = ndgrad.randn(6, 4, dtype=dtype)
    return w, b, x


def _optimize(name, w, b, x, steps=3):
    params = [w] if name == "Muon" else [w, b]   # Muon takes 2-d parameters only
    opt = OPTIMIZERS[name](params)
    if w.device == CPU:   # on the device foreach is the default kernel, as in PyTorch
        for g in opt.param_groups:
            if "foreach" in g:
                g["foreach"] = True

    def closure():
        opt.zero_grad()
        loss = ((x @ w + b).tanh() - 0.5).pow(2).sum()
        loss.backward()
        return loss
    losses = []
    for _ in range(steps):
        if name.startswith("LBFGS"):
            losses.append(opt.step(closure))
        else:
            losses.append(closure())
            opt.step()
    return opt, losses


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_optimizer_on_device(name, dtype, standin):
    dt = getattr(ndgrad, dtype)
    rw, rb, x = _problem(dt)
    # (a copy first: the stand-in's asarray may share a host array's memory, CuPy's never does)
    ow, ob = (nn.Parameter(p.detach().clone().to("cuda")) for p in (rw, rb))
    ropt, rlosses = _optimize(name, rw, rb, x)
    oopt, olosses = _optimize(name, ow, ob, x.to("cuda"))
    # (the CPU sums the loss in PyTorch's CPU order, ops/_cascade.py, a device in its own: the
    # losses agree to rounding, and so do LBFGS's steps, which it takes by them, and Adafactor's,
    # which it scales by norms of the gradient and the parameter: with OpenBLAS's SkylakeX kernels
    # one of twelve float64 weights differs in its last bit)
    exact = not name.startswith("LBFGS") and name != "Adafactor"
    tol = float(ndgrad.finfo(dt).eps) ** 0.5 / 10
    for o, r in zip(olosses, rlosses):
        np.testing.assert_allclose(_host(o.detach()), _host(r.detach()), err_msg=f"{name} loss",
                                   rtol=4 * float(ndgrad.finfo(dt).eps) if exact else tol)
    _same(ow, rw, f"{name} weight", exact=exact, rtol=tol)
    _same(ob, rb, f"{name} bias", exact=exact, rtol=tol)
    for p, q in ((ow, rw),) if name == "Muon" else ((ow, rw), (ob, rb)):
        rstate, ostate = ropt.state[q], oopt.state[p]
        assert set(ostate) == set(rstate), name
        for k, v in rstate.items():
            if not isinstance(v, ndgrad.Tensor):
                continue
            if name != "ASGD" and (v.device == CPU and v.ndim == 0 and k == "step" or
                                   v.ndim == 0 and ostate[k].device == CPU):
                # scalar counters stay on the host (ASGD's live with the parameter, as PyTorch's)
                assert ostate[k].device == CPU, f"{name} state {k}"
                np.testing.assert_allclose(ostate[k].numpy(), v.numpy(),
                                           rtol=0 if exact else tol)
                continue
            _same(ostate[k], v, f"{name} state {k}", exact=exact, rtol=tol)
    # the CPU optimizer's state loads onto the device parameters (moved there, as PyTorch's)
    again = OPTIMIZERS[name]([ow] if name == "Muon" else [ow, ob])
    again.load_state_dict(ropt.state_dict())
    for p, q in zip(again.param_groups[0]["params"], ropt.param_groups[0]["params"]):
        for k, v in ropt.state[q].items():
            if isinstance(v, ndgrad.Tensor) and v.ndim:
                _same(again.state[p][k], v, f"{name} loaded state {k}", exact=True)


def test_sparse_adam_on_device(standin):
    ndgrad.manual_seed(0)
    ref = nn.Embedding(6, 3, sparse=True).double()
    ours = copy.deepcopy(ref).cuda()
    idx = ndgrad.tensor([[0, 2], [2, 5]])
    ropt, oopt = optim.SparseAdam(ref.parameters(), lr=0.1), optim.SparseAdam(
        ours.parameters(), lr=0.1)
    for _ in range(3):
        for m, opt, i in ((ref, ropt, idx), (ours, oopt, idx.cuda())):
            opt.zero_grad()
            m(i).pow(2).sum().backward()
            opt.step()
    _same(ours.weight, ref.weight, "SparseAdam weight", exact=True)


SCHEDULERS = {
    "StepLR": lambda o: optim.lr_scheduler.StepLR(o, 2, gamma=0.5),
    "CosineAnnealingLR": lambda o: optim.lr_scheduler.CosineAnnealingLR(o, 5),
    "OneCycleLR": lambda o: optim.lr_scheduler.OneCycleLR(o, 1.0, total_steps=6),
    "ReduceLROnPlateau": lambda o: optim.lr_scheduler.ReduceLROnPlateau(o, patience=0),
    "LambdaLR": lambda o: optim.lr_scheduler.LambdaLR(o, lambda e: 0.9 ** e),
    "CyclicLR": lambda o: optim.lr_scheduler.CyclicLR(o, 0.01, 0.1, step_size_up=2),
}


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_lr_scheduler_on_device(name, standin):
    w = nn.Parameter(ndgrad.ones(3, device="cuda"))
    opt = optim.SGD([w], lr=0.1, momentum=0.9)
    sched = SCHEDULERS[name](opt)
    lrs = []
    for _ in range(4):
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        opt.step()
        sched.step(loss) if name == "ReduceLROnPlateau" else sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    assert w.device == CUDA and opt.state[w]["momentum_buffer"].device == CUDA
    wc = nn.Parameter(ndgrad.ones(3))
    optc = optim.SGD([wc], lr=0.1, momentum=0.9)
    schedc = SCHEDULERS[name](optc)
    for k in range(4):
        optc.zero_grad()
        loss = (wc * wc).sum()
        loss.backward()
        optc.step()
        schedc.step(loss) if name == "ReduceLROnPlateau" else schedc.step()
        assert optc.param_groups[0]["lr"] == lrs[k]
    _same(w, wc, name, exact=True)


# ---------------------------------------------------------------- (e) nn.utils

def _with_grads(device):
    ndgrad.manual_seed(2)
    m = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2)).double()
    if device:
        m = m.to(device)
    x = ndgrad.randn(5, 3, dtype=ndgrad.float64, device=device)
    (m(x) * 10).sum().backward()
    return m


@pytest.mark.parametrize("norm_type", [2.0, 1, float("inf"), -float("inf"), 3.5])
def test_clip_grad_norm_on_device(norm_type, standin):
    ref, ours = _with_grads(None), _with_grads("cuda")
    rt = nn.utils.clip_grad_norm_(ref.parameters(), 0.5, norm_type)
    ot = nn.utils.clip_grad_norm_(ours.parameters(), 0.5, norm_type)
    _same(ot, rt, "total norm")
    for p, q in zip(ours.parameters(), ref.parameters()):
        _same(p.grad, q.grad, "clipped grad")
    grads = [p.grad for p in ours.parameters()]
    total = nn.utils.get_total_norm(grads, norm_type)
    _same(total, nn.utils.get_total_norm([q.grad for q in ref.parameters()], norm_type), "norm")
    nn.utils.clip_grads_with_norm_(ours.parameters(), 0.1, total)
    nn.utils.clip_grads_with_norm_(ref.parameters(), 0.1,
                                   nn.utils.get_total_norm([q.grad for q in ref.parameters()],
                                                           norm_type))
    for p, q in zip(ours.parameters(), ref.parameters()):
        _same(p.grad, q.grad, "clip_grads_with_norm_")


def test_clip_grad_value_and_nonfinite_on_device(standin):
    ref, ours = _with_grads(None), _with_grads("cuda")
    nn.utils.clip_grad_value_(ref.parameters(), 0.3)
    nn.utils.clip_grad_value_(ours.parameters(), 0.3)
    for p, q in zip(ours.parameters(), ref.parameters()):
        _same(p.grad, q.grad, "clip_grad_value_")
    p = next(ours.parameters())
    p.grad[0, 0] = float("nan")
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_(ours.parameters(), 1.0, error_if_nonfinite=True)


def test_parameters_to_vector_on_device(standin):
    ref, ours = _with_grads(None), _with_grads("cuda")
    rv = nn.utils.parameters_to_vector(ref.parameters())
    ov = nn.utils.parameters_to_vector(ours.parameters())
    _same(ov, rv, "parameters_to_vector")
    nn.utils.vector_to_parameters(ov * 2, ours.parameters())
    nn.utils.vector_to_parameters(rv * 2, ref.parameters())
    for p, q in zip(ours.parameters(), ref.parameters()):
        _same(p, q, "vector_to_parameters")


PARAMETRIZATIONS = {
    "weight_norm": lambda m: parametrizations.weight_norm(m),
    "weight_norm_dim1": lambda m: parametrizations.weight_norm(m, dim=1),
    "spectral_norm": lambda m: parametrizations.spectral_norm(m),
    "orthogonal_matrix_exp": lambda m: parametrizations.orthogonal(m, "weight", "matrix_exp"),
    "orthogonal_cayley": lambda m: parametrizations.orthogonal(m, "weight", "cayley"),
    "orthogonal_householder": lambda m: parametrizations.orthogonal(m, "weight", "householder"),
    "orthogonal_no_trivialization": lambda m: parametrizations.orthogonal(
        m, "weight", "householder", use_trivialization=False),
    "old_weight_norm": lambda m: nn.utils.weight_norm(m),
    "old_spectral_norm": lambda m: nn.utils.spectral_norm(m),
}


@pytest.mark.parametrize("name", sorted(PARAMETRIZATIONS))
def test_parametrization_on_device(name, standin):
    results = []
    for device in (None, "cuda"):
        ndgrad.manual_seed(4)
        m = nn.Linear(5, 3).double()
        if device:
            m = m.to(device)
        ndgrad.manual_seed(6)
        PARAMETRIZATIONS[name](m)
        x = ndgrad.randn(4, 5, dtype=ndgrad.float64, device=device)
        y = m(x)
        y.pow(2).sum().backward()
        results.append((m, y, m.weight))
    (rm, ry, rw), (om, oy, ow) = results
    _same(oy, ry, f"{name} output")
    _same(ow, rw, f"{name} weight")
    ref = dict(rm.named_parameters())
    for n, p in om.named_parameters():
        _same(p, ref[n], f"{name} {n}")
        _same(p.grad, ref[n].grad, f"{name} grad of {n}")
    rbuf = dict(rm.named_buffers())
    for n, b in om.named_buffers():
        _same(b, rbuf[n], f"{name} buffer {n}")


PRUNES = {
    "l1_unstructured": lambda m: prune.l1_unstructured(m, "weight", amount=0.4),
    "l1_unstructured_count": lambda m: prune.l1_unstructured(m, "weight", amount=3),
    "random_unstructured": lambda m: prune.random_unstructured(m, "weight", amount=0.5),
    "ln_structured": lambda m: prune.ln_structured(m, "weight", amount=0.34, n=2, dim=0),
    "ln_structured_l1_dim1": lambda m: prune.ln_structured(m, "weight", amount=2, n=1, dim=1),
    "random_structured": lambda m: prune.random_structured(m, "weight", amount=1, dim=0),
    "twice": lambda m: (prune.l1_unstructured(m, "weight", amount=0.2),
                        prune.ln_structured(m, "weight", amount=1, n=2, dim=0)),
    "custom_from_mask": lambda m: prune.custom_from_mask(
        m, "bias", mask=(ndgrad.arange(3, device=m.bias.device) % 2)),
    "remove": lambda m: prune.remove(prune.l1_unstructured(m, "weight", amount=0.5),
                                     "weight"),
}


@pytest.mark.parametrize("name", sorted(PRUNES))
def test_prune_on_device(name, standin):
    results = []
    for device in (None, "cuda"):
        ndgrad.manual_seed(4)
        m = nn.Linear(5, 3).double()
        if device:
            m = m.to(device)
        ndgrad.manual_seed(8)
        PRUNES[name](m)
        x = ndgrad.randn(4, 5, dtype=ndgrad.float64, device=device)
        m(x).pow(2).sum().backward()
        results.append(m)
    rm, om = results
    _same(om.weight, rm.weight, f"{name} weight")
    rbuf = dict(rm.named_buffers())
    for n, b in om.named_buffers():
        _same(b, rbuf[n], f"{name} buffer {n}")
    rp = dict(rm.named_parameters())
    for n, p in om.named_parameters():
        _same(p.grad, rp[n].grad, f"{name} grad of {n}")


def test_global_unstructured_on_device(standin):
    results = []
    for device in (None, "cuda"):
        ndgrad.manual_seed(4)
        m = nn.Sequential(nn.Linear(5, 3), nn.Linear(3, 2)).double()
        if device:
            m = m.to(device)
        prune.global_unstructured([(m[0], "weight"), (m[1], "weight"), (m[1], "bias")],
                                  prune.L1Unstructured, amount=0.5)
        results.append(m)
    rm, om = results
    rbuf = dict(rm.named_buffers())
    for n, b in om.named_buffers():
        _same(b, rbuf[n], f"global mask {n}")
    _same(om[0].weight, rm[0].weight, "global weight")


def test_skip_init_on_device(standin):
    m = nn.utils.skip_init(nn.Linear, 3, 2)
    m.cuda()
    for p in m.parameters():
        assert p.device == CUDA
    ndgrad.set_default_device("cuda")
    try:
        m = nn.utils.skip_init(nn.Linear, 3, 2)
    finally:
        ndgrad.set_default_device(None)
    assert all(p.device == CUDA and p.shape in ((2, 3), (2,)) for p in m.parameters())


# ---------------------------------------------------------------- (f) utils.data

def test_dataloader_over_device_tensors(standin):
    x = ndgrad.arange(24.0).reshape(12, 2)
    y = ndgrad.arange(12) % 3
    cpu = list(DataLoader(TensorDataset(x, y), batch_size=5,
                          shuffle=True, generator=ndgrad.Generator().manual_seed(0)))
    dev = list(DataLoader(TensorDataset(x.cuda(), y.cuda()), batch_size=5,
                          shuffle=True, generator=ndgrad.Generator().manual_seed(0)))
    assert len(dev) == len(cpu) == 3
    for (ox, oy), (rx, ry) in zip(dev, cpu):
        _same(ox, rx, "batch x", exact=True)
        _same(oy, ry, "batch y", exact=True)
    # a Subset and a custom collate go the general way
    sub = ndgrad.utils.data.Subset(TensorDataset(x.cuda(), y.cuda()), [3, 1, 7])
    (bx, by), = DataLoader(sub, batch_size=3, collate_fn=lambda b: default_collate(b))
    _same(bx, x[[3, 1, 7]], "subset batch", exact=True)
    _same(by, y[[3, 1, 7]], "subset labels", exact=True)


def test_default_collate_of_device_tensors(standin):
    samples = [{"x": ndgrad.randn(3, device="cuda"), "y": ndgrad.tensor(k, device="cuda"),
                "name": f"s{k}"} for k in range(4)]
    batch = default_collate(samples)
    assert batch["x"].device == CUDA and batch["x"].shape == (4, 3)
    assert batch["y"].device == CUDA and batch["y"].tolist() == [0, 1, 2, 3]
    assert batch["name"] == ["s0", "s1", "s2", "s3"]
    pairs = default_collate([(ndgrad.ones(2, device="cuda"), 1.5), (ndgrad.zeros(2,
                                                                               device="cuda"),
                                                                    2.5)])
    assert pairs[0].device == CUDA and pairs[1].device == CPU
    ndgrad.set_default_device("cuda")
    try:    # host samples land on the default device, as torch.tensor puts them
        b = default_collate([np.ones(2), np.zeros(2)])
        n = default_collate([1, 2, 3])
    finally:
        ndgrad.set_default_device(None)
    assert b.device == CUDA and b.dtype == ndgrad.float64 and n.device == CUDA


def test_pin_memory_and_non_blocking(standin):
    import warnings
    x = ndgrad.randn(8, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")    # an accelerator exists: no warning
        batches = list(DataLoader(TensorDataset(x), batch_size=4, pin_memory=True))
    assert len(batches) == 2
    for k, (b,) in enumerate(batches):
        assert b.device == CPU
        on = b.to("cuda", non_blocking=True)
        _same(on, x[4 * k:4 * k + 4], "non_blocking copy", exact=True)
        assert b.pin_memory().device == CPU
        assert b.cuda(non_blocking=True).device == CUDA
