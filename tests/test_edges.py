"""Numerics at the edges, against PyTorch: float16 reductions and cumulative ops accumulate in
float32 (a sum of 4096 ones is 4096, the norm of [300, 400] is 500), Python numbers stored into
integer tensors raise PyTorch's overflow error or wrap as PyTorch's arithmetic does, and
zero-size inputs (empty batches, empty reduction dims, convolutions without channels) give
PyTorch's results or errors. (tests/test_misuse_probes.py has the error messages of more.)
"""
import warnings

import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")


def _run(f, L):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = f(L)
        except Exception as e:
            return type(e).__name__, str(e).split("\n")[0]
    rs = r if isinstance(r, tuple) else (r,)
    return tuple((tuple(t.shape), str(t.dtype), t.detach().numpy().astype(np.float64))
                 for t in rs)


def _same(a, b, rtol):
    if isinstance(a[0], str) or isinstance(b[0], str):
        return a == b
    return len(a) == len(b) and all(
        x[:2] == y[:2] and np.allclose(x[2], y[2], rtol=rtol, atol=0, equal_nan=True)
        for x, y in zip(a, b))


H = "float16"
HALF = {   # float16 inputs whose float16 accumulation would be far off (or inf)
    "cumsum 4096 ones": lambda L: L.ones(4096, dtype=L.float16).cumsum(0)[-1],
    "norm [300, 400]": lambda L: L.tensor([300., 400.], dtype=L.float16).norm(),
    "vector_norm [300, 400]": lambda L: L.linalg.vector_norm(
        L.tensor([300., 400.], dtype=L.float16)),
    "sum 4096 ones": lambda L: L.ones(4096, dtype=L.float16).sum(),
    "sum dim": lambda L: L.ones(2, 4096, dtype=L.float16).sum(1),
    "nansum": lambda L: L.ones(4096, dtype=L.float16).nansum(),
    "mean of 60000s": lambda L: L.tensor([60000., 60000.], dtype=L.float16).mean(),
    "mean 1.0001": lambda L: L.full((4096,), 1.0001, dtype=L.float16).mean(),
    "var of 60000s": lambda L: L.tensor([60000., 60000.], dtype=L.float16).var(),
    "var arange": lambda L: L.arange(3000, dtype=L.float16).var(),
    "std arange": lambda L: L.arange(3000, dtype=L.float16).std(),
    "var_mean": lambda L: L.var_mean(L.arange(3000, dtype=L.float16)),
    "prod": lambda L: L.full((100,), 1.1, dtype=L.float16).prod(),
    "cumprod": lambda L: L.full((1000,), 1.1, dtype=L.float16).cumprod(0)[-1],
    "logsumexp": lambda L: L.full((1000,), 5., dtype=L.float16).logsumexp(0),
    "logcumsumexp": lambda L: L.ones(4096, dtype=L.float16).logcumsumexp(0)[-1],
    "softmax": lambda L: L.arange(3000, dtype=L.float16).softmax(0)[-1],
    "sum dtype float32": lambda L: L.ones(4096, dtype=L.float16).sum(dtype=L.float32),
}


@pytest.mark.parametrize("name", sorted(HALF))
def test_float16_accumulates_in_float32(name):
    theirs, ours = _run(HALF[name], torch), _run(HALF[name], ndgrad)
    # (one float16 rounding of a float32 result: PyTorch's summation order is its own, so its
    # float32 partial sums may round to a neighbouring float16)
    assert _same(theirs, ours, rtol=2e-3), (theirs, ours)


STORES = {
    "x[0] = 300 (int8)": lambda L: _store(L, "int8", 0, 300),
    "x[:] = 300 (int8)": lambda L: _store(L, "int8", slice(None), 300),
    "x[idx] = 300 (int8)": lambda L: _store(L, "int8", L.tensor([1]), 300),
    "x[0] = 2**40 (int32)": lambda L: _store(L, "int32", 0, 2 ** 40),
    "x[0] = 127.7 (int8)": lambda L: _store(L, "int8", 0, 127.7),
    "x[0] = -1 (uint8)": lambda L: _store(L, "uint8", 0, -1),
    "x[0] = -300 (uint8)": lambda L: _store(L, "uint8", 0, -300),
    "x[0] = 1e300 (int64)": lambda L: _store(L, "int64", 0, 1e300),
    "fill_ 300": lambda L: L.zeros(2, dtype=L.int8).fill_(300),
    "full 300": lambda L: L.full((2,), 300, dtype=L.int8),
    "tensor([300])": lambda L: L.tensor([300], dtype=L.int8),
    "masked_fill 300": lambda L: L.zeros(2, dtype=L.int8).masked_fill(L.tensor([True, False]),
                                                                      300),
    "index_fill 300": lambda L: L.zeros(2, dtype=L.int8).index_fill(0, L.tensor([0]), 300),
    "clamp max 300": lambda L: L.zeros(2, dtype=L.int8).clamp(max=300),
    "where 300": lambda L: L.where(L.tensor([True, False]), L.zeros(2, dtype=L.int8), 300),
    "addcmul value 300": lambda L: L.ones(2, dtype=L.int8).addcmul(
        L.ones(2, dtype=L.int8), L.ones(2, dtype=L.int8), value=300),
    # arithmetic converts the number to the tensor's dtype as C does (a wrap), as PyTorch's
    "+ 300": lambda L: L.tensor([44, 1], dtype=L.int8) + 300,
    "* 300": lambda L: L.tensor([44, 1], dtype=L.int8) * 300,
    "add_ 300": lambda L: L.tensor([44, 1], dtype=L.int8).add_(300),
    "add alpha 2, 300": lambda L: L.tensor([44, 1], dtype=L.int8).add(300, alpha=2),
    "+ 2**70": lambda L: L.ones(2, dtype=L.int64) + 2 ** 70,
}


def _store(L, dtype, key, value):
    x = L.zeros(3, dtype=getattr(L, dtype))
    x[key] = value
    return x


@pytest.mark.parametrize("name", sorted(STORES))
def test_integer_stores(name):
    theirs, ours = _run(STORES[name], torch), _run(STORES[name], ndgrad)
    if name == "+ 2**70":   # (Python's own OverflowError: the type is what matters)
        theirs, ours = theirs[0], ours[0]
    assert _same(theirs, ours, rtol=0), (theirs, ours)


def test_float16_log_softmax_is_float32s_rounded():
    """PyTorch is 3 float16 ulps off here (its Half kernel loses the float32 accuracy on the
    way); ndgrad's is the float32 computation rounded once, which is the better answer."""
    x = torch.arange(3000, dtype=torch.float16)
    exact = x.float().log_softmax(0)[-1].half().item()
    ours = ndgrad.arange(3000, dtype=ndgrad.float16).log_softmax(0)[-1].item()
    assert ours == exact and abs(x.log_softmax(0)[-1].item() - exact) < 1e-3


def test_integer_comparison_with_a_number_beyond_the_dtype():
    """PyTorch is wrong here: it converts 300 to int8 first (44), so int8 44 == 300 is True and
    1 < 300 False; ndgrad compares the values (NumPy's comparison of an int8 array with 300)."""
    x = ndgrad.tensor([44, 1], dtype=ndgrad.int8)
    assert (x == 300).tolist() == [False, False] and (x < 300).tolist() == [True, True]
    t = torch.tensor([44, 1], dtype=torch.int8)
    assert (t == 300).tolist() == [True, False]


def test_integer_store_checks_before_any_change():
    x = ndgrad.tensor([1, 2], dtype=ndgrad.int8)
    for f in (lambda: x.__setitem__(0, 300), lambda: x.fill_(300),
              lambda: x.masked_fill_(ndgrad.tensor([True, True]), 300)):
        with pytest.raises(RuntimeError, match="int8_t without overflow"):
            f()
        assert x.tolist() == [1, 2] and x._version == 0


EMPTY = {
    "amax()": lambda L: L.zeros(0, 3).amax(),
    "amax(0)": lambda L: L.zeros(0, 3).amax(0),
    "amax(1)": lambda L: L.zeros(0, 3).amax(1),
    "aminmax(dim=0)": lambda L: L.zeros(0, 3).aminmax(dim=0),
    "aminmax(dim=1)": lambda L: L.zeros(0, 3).aminmax(dim=1),
    "kthvalue on empty dim": lambda L: L.zeros(3, 0).kthvalue(1, 1),
    "sum(0)": lambda L: L.zeros(0, 3).sum(0),
    "prod(0)": lambda L: L.zeros(0, 3).prod(0),
    "mean(0)": lambda L: L.zeros(0, 3).mean(0),
    "var(0)": lambda L: L.zeros(0, 3).var(0),
    "logsumexp(0)": lambda L: L.zeros(0, 3).logsumexp(0),
    "norm(dim=0)": lambda L: L.zeros(0, 3).norm(dim=0),
    "cat([])": lambda L: L.cat([]),
    "batch_norm train, empty batch": lambda L: L.nn.BatchNorm1d(5)(L.ones(0, 5, 9)),
    "batch_norm eval, empty batch": lambda L: L.nn.BatchNorm2d(3).eval()(L.ones(0, 3, 2, 2)),
    "instance_norm, empty batch": lambda L: L.nn.InstanceNorm1d(3)(L.ones(0, 3, 4)),
    "group_norm, empty batch": lambda L: L.nn.GroupNorm(1, 3)(L.ones(0, 3, 2)),
    "layer_norm, empty batch": lambda L: L.nn.LayerNorm(3)(L.ones(0, 3)),
    "conv2d, empty batch": lambda L: L.nn.functional.conv2d(L.ones(0, 3, 5, 5),
                                                            L.ones(4, 3, 3, 3)),
    "conv2d, no output channels": lambda L: L.nn.functional.conv2d(L.ones(2, 3, 5, 5),
                                                                   L.ones(0, 3, 3, 3)),
    "conv_transpose2d, empty batch": lambda L: L.nn.functional.conv_transpose2d(
        L.ones(0, 3, 5, 5), L.ones(3, 4, 3, 3)),
    "linear, empty batch": lambda L: L.nn.Linear(3, 4)(L.ones(0, 3)),
    "cross_entropy, empty batch": lambda L: L.nn.functional.cross_entropy(
        L.ones(0, 3), L.zeros(0, dtype=L.int64)),
    "max_pool2d, empty batch": lambda L: L.nn.functional.max_pool2d(L.ones(0, 3, 4, 4), 2),
    "lstm, empty batch": lambda L: L.nn.LSTM(3, 4)(L.ones(5, 0, 3))[0],
}


@pytest.mark.parametrize("name", sorted(EMPTY))
def test_zero_size(name):
    theirs, ours = _run(EMPTY[name], torch), _run(EMPTY[name], ndgrad)
    assert _same(theirs, ours, rtol=1e-6), (theirs, ours)


def test_batch_norm_empty_batch_keeps_running_stats_and_graph():
    """ATen's empty-input path: running statistics untouched (num_batches_tracked counts the
    call), the output scaled by weight[0] and shifted by bias[0], zero gradients."""
    for L in (torch, ndgrad):
        m = L.nn.BatchNorm1d(3)
        x = L.ones(0, 3, requires_grad=True)
        y = m(x)
        y.sum().backward()
        assert m.running_mean.tolist() == [0.0] * 3 and m.running_var.tolist() == [1.0] * 3
        assert int(m.num_batches_tracked) == 1
        assert m.weight.grad.tolist() == [0.0] * 3 and tuple(x.grad.shape) == (0, 3)


def test_conv_without_input_channels_keeps_its_output_channels():
    """PyTorch is wrong here: a convolution of an input with 0 channels by a (4, 0, 3, 3) weight
    gives an output of 0 channels (ATen's empty-input backend reshapes the input); its output
    has 4 channels, each the bias (here zero), which ndgrad returns."""
    out = ndgrad.nn.functional.conv2d(ndgrad.ones(2, 0, 5, 5), ndgrad.ones(4, 0, 3, 3),
                                      ndgrad.tensor([1.0, 2.0, 3.0, 4.0]))
    assert tuple(out.shape) == (2, 4, 3, 3)
    assert out[0, :, 0, 0].tolist() == [1.0, 2.0, 3.0, 4.0]
    assert tuple(torch.nn.functional.conv2d(torch.ones(2, 0, 5, 5),
                                            torch.ones(4, 0, 3, 3)).shape) == (2, 0, 3, 3)
