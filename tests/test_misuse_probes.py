"""Misuse probes: about 200 hostile calls a new user makes (wrong shapes, wrong dtypes, values
out of range, empty inputs, bad strings, misuse of autograd and NumPy interop), each run in
PyTorch and in ndgrad: the exception type must be the same, and so must its message (the first
line, memory addresses normalised). Where PyTorch does not raise, ndgrad must not either (and
the result's shape and dtype must be PyTorch's). DIFFERENT lists what still differs, with the
reason; nothing else is tolerated. (tests/test_bad_args.py generates the argument-type errors
of every function; these are the value and usage errors.)
"""
import re
import warnings

import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")


def _t(L, *shape, dtype="float32"):
    return L.zeros(*shape, dtype=getattr(L, dtype))


def _r(L, *shape):
    return L.tensor(np.random.default_rng(0).random(shape), dtype=L.float32)


def _grad_leaf(L):
    return L.ones(3, requires_grad=True)


def _setitem(L, dtype, key, value):
    x = L.zeros(4, dtype=getattr(L, dtype))
    x[key] = value
    return x


def _backward_twice(L):
    x = _grad_leaf(L)
    y = (x * x).sum()
    y.backward()
    y.backward()


def _inplace_leaf(L):
    _grad_leaf(L).add_(1)


def _modified_saved(L):
    x = _grad_leaf(L)
    y = x.exp()
    y.add_(1)
    y.sum().backward()


def _numpy_of_grad(L):
    return _grad_leaf(L).numpy()


def _asarray_of_grad(L):
    return np.asarray(_grad_leaf(L))


def _item_of_many(L):
    return L.ones(2).item()


def _bool_of_many(L):
    return bool(L.ones(2))


def _grad_non_scalar(L):
    (_grad_leaf(L) * 2).backward()


def _grad_of_int(L):
    return L.ones(2, dtype=L.int64).requires_grad_()


def _view_incompatible(L):
    return L.ones(2, 3).t().view(6)


def _index_out(L):
    return L.ones(3)[5]


def _index_float(L):
    return L.ones(3)[L.tensor([0.5])]


def _linear_shape(L):
    return L.nn.Linear(3, 2)(L.ones(4, 5))


def _conv_channels(L):
    return L.nn.Conv2d(3, 2, 3)(L.ones(1, 4, 5, 5))


def _ce_target(L):
    return L.nn.functional.cross_entropy(L.ones(2, 3), L.tensor([0, 5]))


def _ce_float_target_shape(L):
    return L.nn.functional.cross_entropy(L.ones(2, 3), L.ones(3, 3))


def _nll_dtype(L):
    return L.nn.functional.nll_loss(L.ones(2, 3), L.tensor([0.0, 1.0]))


def _bce_range(L):
    return L.nn.functional.binary_cross_entropy(L.tensor([1.5]), L.tensor([1.0]))


def _embedding_index(L):
    return L.nn.Embedding(3, 2)(L.tensor([3]))


def _optim_empty(L):
    return L.optim.SGD([], lr=0.1)


def _optim_lr(L):
    return L.optim.SGD([L.nn.Parameter(L.ones(1))], lr=-1)


def _load_state_missing(L):
    L.nn.Linear(2, 2).load_state_dict({})


def _load_state_shape(L):
    L.nn.Linear(2, 2).load_state_dict({"weight": L.ones(3, 3), "bias": L.ones(2)})


def _module_attr(L):
    return L.nn.Linear(2, 2).nosuch


def _sequential_index(L):
    return L.nn.Sequential(L.nn.ReLU())[3]


def _param_of_int(L):
    return L.nn.Parameter(L.ones(2, dtype=L.int64))


def _dataloader_batch(L):
    from itertools import islice
    ds = L.utils.data.TensorDataset(L.ones(3), L.ones(4))
    return list(islice(L.utils.data.DataLoader(ds), 1))


def _rnn_input(L):
    return L.nn.LSTM(3, 4)(L.ones(2, 5, 6))


def _mha_dims(L):
    return L.nn.MultiheadAttention(5, 2)


def _softmax_no_dim_int(L):
    return L.ones(3, dtype=L.int64).softmax(0)


PROBES = {
    # creation
    "eye(-1)": lambda L: L.eye(-1),
    "eye(2, -1)": lambda L: L.eye(2, -1),
    "zeros(-1)": lambda L: L.zeros(-1),
    "ones(2, -3)": lambda L: L.ones(2, -3),
    "empty(-1)": lambda L: L.empty(-1),
    "full str": lambda L: L.full((2,), "a"),
    "full None": lambda L: L.full((2,), None),
    "arange zero step": lambda L: L.arange(0, 5, 0),
    "arange wrong sign": lambda L: L.arange(0, 5, -1),
    "arange nan": lambda L: L.arange(0, float("nan")),
    "arange inf": lambda L: L.arange(0, float("inf")),
    "linspace negative steps": lambda L: L.linspace(0, 1, -1),
    "logspace negative steps": lambda L: L.logspace(0, 1, -1),
    "randint low>=high": lambda L: L.randint(5, 3, (2,)),
    "randint no size": lambda L: L.randint(5),
    "randn negative": lambda L: L.randn(-2),
    "rand int dtype": lambda L: L.rand(2, dtype=L.int64),
    "randn int dtype": lambda L: L.randn(2, dtype=L.int64),
    "randperm negative": lambda L: L.randperm(-1),
    "tensor ragged": lambda L: L.tensor([[1, 2], [3]]),
    "tensor str": lambda L: L.tensor("abc"),
    "tensor None": lambda L: L.tensor(None),
    "tensor dict": lambda L: L.tensor({"a": 1}),
    "tensor int8 overflow": lambda L: L.tensor([300], dtype=L.int8),
    "tensor requires_grad int": lambda L: L.tensor([1, 2], requires_grad=True),
    "zeros requires_grad int": lambda L: L.zeros(2, dtype=L.int64, requires_grad=True),
    "full int8 overflow": lambda L: L.full((2,), 300, dtype=L.int8),
    "fill_ int8 overflow": lambda L: L.zeros(2, dtype=L.int8).fill_(300),
    "fill_ uint8 -300": lambda L: L.zeros(2, dtype=L.uint8).fill_(-300),
    "fill_ half 1e6": lambda L: L.zeros(2, dtype=L.float16).fill_(1e6),
    "fill_ tensor 1d": lambda L: L.zeros(2).fill_(L.ones(2)),
    "setitem int8 300": lambda L: _setitem(L, "int8", 0, 300),
    "setitem int8 slice 300": lambda L: _setitem(L, "int8", slice(None), 300),
    "setitem int8 index 300": lambda L: _setitem(L, "int8", L.tensor([0]), 300),
    "setitem int32 2**40": lambda L: _setitem(L, "int32", 0, 2 ** 40),
    "setitem int8 127.7": lambda L: _setitem(L, "int8", 0, 127.7),
    "setitem int64 1e300": lambda L: _setitem(L, "int64", 0, 1e300),
    "setitem uint8 -1": lambda L: _setitem(L, "uint8", 0, -1),
    "setitem uint8 -300": lambda L: _setitem(L, "uint8", 0, -300),
    "setitem shape": lambda L: _setitem(L, "float32", slice(0, 2), L.ones(3)),
    "setitem out of range": lambda L: _setitem(L, "float32", 9, 1.0),
    "masked_fill int8 300": lambda L: L.zeros(2, dtype=L.int8).masked_fill(
        L.tensor([True, False]), 300),
    "index_fill int8 300": lambda L: L.zeros(2, dtype=L.int8).index_fill(0, L.tensor([0]), 300),
    "clamp int8 300": lambda L: L.zeros(2, dtype=L.int8).clamp(max=300),
    "where int8 300": lambda L: L.where(L.tensor([True, False]), L.zeros(2, dtype=L.int8), 300),
    "pow int8 300": lambda L: L.pow(L.ones(2, dtype=L.int8), 300),
    "int8 + 300": lambda L: L.ones(2, dtype=L.int8) + 300,
    "int8 * 300": lambda L: L.ones(2, dtype=L.int8) * 300,
    "int8 == 300": lambda L: L.tensor([44], dtype=L.int8) == 300,
    "int8 add_ 300": lambda L: L.ones(2, dtype=L.int8).add_(300),
    "int64 + 2**70": lambda L: L.ones(2, dtype=L.int64) + 2 ** 70,
    "from_numpy object": lambda L: L.from_numpy(np.array([1, "a"], dtype=object)),
    "from_numpy list": lambda L: L.from_numpy([1, 2]),
    "as_tensor ragged": lambda L: L.as_tensor([[1], [1, 2]]),
    # shapes
    "view -1 twice": lambda L: L.ones(6).view(-1, -1),
    "view wrong numel": lambda L: L.ones(6).view(4),
    "view incompatible": _view_incompatible,
    "reshape wrong numel": lambda L: L.ones(6).reshape(5),
    "reshape -2": lambda L: L.ones(6).reshape(-2, 3),
    "expand smaller": lambda L: L.ones(2, 3).expand(3),
    "expand mismatch": lambda L: L.ones(2, 3).expand(2, 4),
    "permute wrong len": lambda L: L.ones(2, 3).permute(0),
    "permute repeated": lambda L: L.ones(2, 3).permute(0, 0),
    "transpose dim": lambda L: L.ones(2, 3).transpose(0, 2),
    "squeeze dim": lambda L: L.ones(2, 3).squeeze(3),
    "unsqueeze dim": lambda L: L.ones(2, 3).unsqueeze(4),
    "flatten dims": lambda L: L.ones(2, 3, 4).flatten(2, 1),
    "unflatten sizes": lambda L: L.ones(6).unflatten(0, (4, 2)),
    "cat empty list": lambda L: L.cat([]),
    "cat shapes": lambda L: L.cat([L.ones(2, 3), L.ones(2, 4)]),
    "cat dim": lambda L: L.cat([L.ones(2), L.ones(2)], dim=1),
    "cat 0-d": lambda L: L.cat([L.tensor(1.0), L.tensor(2.0)]),
    "stack empty": lambda L: L.stack([]),
    "stack shapes": lambda L: L.stack([L.ones(2), L.ones(3)]),
    "split negative": lambda L: L.ones(4).split(-1),
    "split sizes sum": lambda L: L.ones(4).split([1, 2]),
    "chunk zero": lambda L: L.ones(4).chunk(0),
    "narrow out": lambda L: L.ones(4).narrow(0, 2, 5),
    "select out": lambda L: L.ones(4).select(0, 4),
    "repeat fewer": lambda L: L.ones(2, 3).repeat(2),
    "roll dims": lambda L: L.ones(4).roll((1, 2), (0,)),
    "flip dims repeated": lambda L: L.ones(4).flip((0, 0)),
    "diagonal dims": lambda L: L.ones(3, 3).diagonal(0, 0, 0),
    "movedim repeated": lambda L: L.ones(2, 3).movedim((0, 0), (0, 1)),
    "broadcast shapes": lambda L: L.ones(2, 3) + L.ones(4, 3),
    "broadcast_to": lambda L: L.ones(2, 3).broadcast_to((3, 3)),
    "broadcast_shapes": lambda L: L.broadcast_shapes((2, 3), (4, 3)),
    "tile negative": lambda L: L.ones(2).tile((-1,)),
    "index out of range": _index_out,
    "index float tensor": _index_float,
    "index too many": lambda L: L.ones(2)[0, 0],
    "index bool mask shape": lambda L: L.ones(3)[L.tensor([True, False])],
    "gather dims": lambda L: L.ones(2, 3).gather(1, L.zeros(2, dtype=L.int64)),
    "gather index": lambda L: L.ones(2, 3).gather(1, L.tensor([[5], [0]])),
    "gather float index": lambda L: L.ones(2, 3).gather(1, L.zeros(2, 1)),
    "scatter index": lambda L: L.zeros(3).scatter(0, L.tensor([5]), 1.0),
    "scatter reduce str": lambda L: L.zeros(3).scatter_reduce(0, L.tensor([0]), L.ones(1), "x"),
    "index_select index": lambda L: L.ones(3).index_select(0, L.tensor([3])),
    "index_select 2d": lambda L: L.ones(3).index_select(0, L.tensor([[0]])),
    "index_add shape": lambda L: L.zeros(3).index_add(0, L.tensor([0, 1]), L.ones(3)),
    "masked_fill mask dtype": lambda L: L.zeros(2).masked_fill(L.tensor([1, 0]), 1.0),
    "masked_select shape": lambda L: L.zeros(2).masked_select(L.tensor([True, False, True])),
    "take out": lambda L: L.zeros(2).take(L.tensor([5])),
    "topk k": lambda L: L.ones(3).topk(4),
    "kthvalue k": lambda L: L.ones(3).kthvalue(4),
    "kthvalue empty": lambda L: L.zeros(3, 0).kthvalue(1, 1),
    "sort dim": lambda L: L.ones(3).sort(1),
    "searchsorted dims": lambda L: L.searchsorted(L.ones(2, 3), L.ones(3, 2)),
    "bincount negative": lambda L: L.bincount(L.tensor([-1])),
    "bincount float": lambda L: L.bincount(L.tensor([1.0])),
    "unique dim": lambda L: L.ones(3).unique(dim=2),
    "nonzero as_tuple": lambda L: L.nonzero(L.ones(2), as_tuple=True),
    # reductions
    "amax empty": lambda L: L.zeros(0, 3).amax(),
    "amax empty dim": lambda L: L.zeros(0, 3).amax(0),
    "amin empty dim": lambda L: L.zeros(0, 3).amin(0),
    "max empty": lambda L: L.zeros(0).max(),
    "max empty dim": lambda L: L.zeros(0, 3).max(0),
    "min empty": lambda L: L.zeros(0).min(),
    "argmax empty": lambda L: L.zeros(0).argmax(),
    "argmax empty dim": lambda L: L.zeros(0, 3).argmax(0),
    "aminmax empty": lambda L: L.zeros(0).aminmax(),
    "aminmax empty dim": lambda L: L.zeros(0, 3).aminmax(dim=0),
    "median empty dim": lambda L: L.zeros(0, 3).median(0),
    "mode empty dim": lambda L: L.zeros(0, 3).mode(0),
    "quantile empty": lambda L: L.quantile(L.zeros(0), 0.5),
    "quantile q range": lambda L: L.quantile(L.ones(3), 1.5),
    "quantile interpolation": lambda L: L.quantile(L.ones(3), 0.5, interpolation="x"),
    "vector_norm inf empty": lambda L: L.linalg.vector_norm(L.zeros(0, 3), float("inf"), 0),
    "sum dim out": lambda L: L.ones(3).sum(1),
    "sum dims repeated": lambda L: L.ones(3, 3).sum((0, 0)),
    "mean int": lambda L: L.ones(3, dtype=L.int64).mean(),
    "var int": lambda L: L.ones(3, dtype=L.int64).var(),
    "std correction": lambda L: L.ones(3).std(correction=0.5, unbiased=False),
    "cumsum dim": lambda L: L.ones(3).cumsum(2),
    "softmax int": _softmax_no_dim_int,
    "logsumexp int": lambda L: L.ones(3, dtype=L.int64).logsumexp(0),
    "all dims": lambda L: L.ones(3).all(1),
    # pointwise
    "add alpha bool": lambda L: L.ones(2, dtype=L.bool).add(L.ones(2, dtype=L.bool), alpha=2.5),
    "sub bool": lambda L: L.ones(2, dtype=L.bool) - L.ones(2, dtype=L.bool),
    "neg bool": lambda L: -L.ones(2, dtype=L.bool),
    "div rounding": lambda L: L.ones(2).div(2, rounding_mode="x"),
    "int // 0": lambda L: L.ones(2, dtype=L.int64) // 0,
    "int % 0": lambda L: L.ones(2, dtype=L.int64) % 0,
    "int div_ float": lambda L: L.ones(2, dtype=L.int64).div_(2.5),
    "int add_ float": lambda L: L.ones(2, dtype=L.int64).add_(2.5),
    "bitwise float": lambda L: L.ones(2).bitwise_and(L.ones(2)),
    "shift float": lambda L: L.ones(2) << 1,
    "invert float": lambda L: ~L.ones(2),
    "logical str": lambda L: L.logical_and(L.ones(2), "a"),
    "clamp none": lambda L: L.ones(2).clamp(),
    "clamp min>max": lambda L: L.ones(2).clamp(min=L.ones(3)),
    "lerp shapes": lambda L: L.lerp(L.ones(2), L.ones(3), 0.5),
    "pow negative int": lambda L: L.tensor([2]) ** -1,
    "polygamma negative": lambda L: L.polygamma(-1, L.ones(2)),
    "mvlgamma p": lambda L: L.mvlgamma(L.ones(2), 0),
    "round decimals int": lambda L: L.ones(2, dtype=L.int64).round(decimals=1),
    "erfinv int": lambda L: L.ones(2, dtype=L.int64).erfinv_(),
    "sqrt_ int": lambda L: L.ones(2, dtype=L.int64).sqrt_(),
    "complex to real": lambda L: L.ones(2, dtype=L.float32).add_(L.ones(2, dtype=L.complex64)),
    "isclose dtypes": lambda L: L.isclose(L.ones(2), L.ones(2, dtype=L.int64)),
    # linear algebra
    "mm shapes": lambda L: L.mm(L.ones(2, 3), L.ones(4, 2)),
    "mm dtype": lambda L: L.mm(L.ones(2, 2), L.ones(2, 2, dtype=L.float64)),
    "mm 1d": lambda L: L.mm(L.ones(2), L.ones(2, 2)),
    "matmul 0d": lambda L: L.matmul(L.tensor(1.0), L.ones(2)),
    "matmul shapes": lambda L: L.ones(2, 3) @ L.ones(4, 2),
    "bmm 2d": lambda L: L.bmm(L.ones(2, 2), L.ones(2, 2)),
    "dot 2d": lambda L: L.dot(L.ones(2, 2), L.ones(2, 2)),
    "dot sizes": lambda L: L.dot(L.ones(2), L.ones(3)),
    "mv shapes": lambda L: L.mv(L.ones(2, 3), L.ones(2)),
    "inv singular": lambda L: L.linalg.inv(L.zeros(2, 2)),
    "inv nonsquare": lambda L: L.linalg.inv(L.ones(2, 3)),
    "inv int": lambda L: L.linalg.inv(L.ones(2, 2, dtype=L.int64)),
    "det 1d": lambda L: L.det(L.ones(3)),
    "cholesky not pd": lambda L: L.linalg.cholesky(-L.eye(2)),
    "solve shapes": lambda L: L.linalg.solve(L.eye(2), L.ones(3)),
    "svd 1d": lambda L: L.linalg.svd(L.ones(3)),
    "eigh nonsquare": lambda L: L.linalg.eigh(L.ones(2, 3)),
    "qr mode": lambda L: L.linalg.qr(L.eye(2), mode="x"),
    "norm ord str": lambda L: L.linalg.norm(L.ones(2, 2), ord="x"),
    "matrix_norm 1d": lambda L: L.linalg.matrix_norm(L.ones(3)),
    "cross sizes": lambda L: L.linalg.cross(L.ones(2), L.ones(2)),
    "einsum bad subscripts": lambda L: L.einsum("ij,jk->il", L.ones(2, 2), L.ones(2, 2)),
    "einsum operand count": lambda L: L.einsum("ij,jk->ik", L.ones(2, 2)),
    "einsum dims": lambda L: L.einsum("ij->i", L.ones(2)),
    "einsum size mismatch": lambda L: L.einsum("ij,jk->ik", L.ones(2, 3), L.ones(2, 2)),
    "einsum bad char": lambda L: L.einsum("i$->i", L.ones(2, 2)),
    "tensordot dims": lambda L: L.tensordot(L.ones(2, 3), L.ones(2, 3), dims=([0], [1])),
    "kron 0d": lambda L: L.kron(L.tensor(1.0), L.ones(2)),
    "trace 1d": lambda L: L.trace(L.ones(3)),
    "diag 3d": lambda L: L.diag(L.ones(2, 2, 2)),
    "tril 1d": lambda L: L.tril(L.ones(3)),
    "cdist dims": lambda L: L.cdist(L.ones(2, 3), L.ones(2, 4)),
    # random
    "multinomial negative": lambda L: L.multinomial(L.tensor([-1.0, 1.0]), 1),
    "multinomial zero sum": lambda L: L.multinomial(L.tensor([0.0, 0.0]), 1),
    "multinomial too many": lambda L: L.multinomial(L.tensor([1.0, 1.0]), 3),
    "multinomial 3d": lambda L: L.multinomial(L.ones(2, 2, 2), 1),
    "multinomial int": lambda L: L.multinomial(L.tensor([1, 1]), 1),
    "multinomial inf": lambda L: L.multinomial(L.tensor([float("inf"), 1.0]), 1),
    "bernoulli p range": lambda L: L.bernoulli(L.tensor([1.5])),
    "bernoulli_ p range": lambda L: L.zeros(2).bernoulli_(1.5),
    "normal std negative": lambda L: L.normal(0.0, -1.0, (2,)),
    "uniform_ from>to": lambda L: L.zeros(2).uniform_(2, 1),
    "random_ from>=to": lambda L: L.zeros(2).random_(2, 1),
    "exponential_ lambda": lambda L: L.zeros(2).exponential_(-1),
    "geometric_ p": lambda L: L.zeros(2).geometric_(2),
    "poisson negative": lambda L: L.poisson(L.tensor([-1.0])),
    "manual_seed str": lambda L: L.manual_seed("a"),
    "manual_seed negative big": lambda L: L.manual_seed(-2 ** 64),
    "dropout p": lambda L: L.nn.functional.dropout(L.ones(2), 1.5),
    "Dropout p": lambda L: L.nn.Dropout(-0.1),
    # autograd
    "backward twice": _backward_twice,
    "inplace on leaf": _inplace_leaf,
    "modified saved": _modified_saved,
    "numpy of grad": _numpy_of_grad,
    "np.asarray of grad": _asarray_of_grad,
    "item of many": _item_of_many,
    "bool of many": _bool_of_many,
    "backward non-scalar": _grad_non_scalar,
    "requires_grad int": _grad_of_int,
    "grad of no grad": lambda L: L.autograd.grad(L.ones(1).sum(), L.ones(1)),
    "grad unused": lambda L: L.autograd.grad((_grad_leaf(L) * 2).sum(), [_grad_leaf(L)]),
    "backward wrong grad shape": lambda L: (_grad_leaf(L) * 2).backward(L.ones(2)),
    "detach_ view": lambda L: _grad_leaf(L).view(3).detach_() if False else
    L.ones(3).view(3).detach_().requires_grad_().add(1),
    "retain_grad no grad": lambda L: L.ones(2).retain_grad(),
    "register_hook no grad": lambda L: L.ones(2).register_hook(lambda g: g),
    # nn
    "linear shape": _linear_shape,
    "conv channels": _conv_channels,
    "conv kernel too big": lambda L: L.nn.functional.conv2d(L.ones(1, 1, 2, 2), L.ones(1, 1, 3, 3)),
    "conv stride 0": lambda L: L.nn.functional.conv2d(L.ones(1, 1, 4, 4), L.ones(1, 1, 3, 3),
                                                      stride=0),
    "conv 0 out channels": lambda L: L.nn.functional.conv2d(L.ones(2, 3, 5, 5),
                                                            L.zeros(0, 3, 3, 3)),
    "conv groups": lambda L: L.nn.Conv2d(3, 4, 3, groups=2),
    "conv padding same stride": lambda L: L.nn.Conv2d(3, 4, 3, padding="same", stride=2),
    "conv padding str": lambda L: L.nn.Conv2d(3, 4, 3, padding="x"),
    "maxpool kernel 0": lambda L: L.nn.functional.max_pool2d(L.ones(1, 1, 4, 4), 0),
    "maxpool pad": lambda L: L.nn.functional.max_pool2d(L.ones(1, 1, 4, 4), 2, padding=2),
    "avgpool too big": lambda L: L.nn.functional.avg_pool2d(L.ones(1, 1, 2, 2), 3),
    "cross_entropy target": _ce_target,
    "cross_entropy soft shape": _ce_float_target_shape,
    "nll target dtype": _nll_dtype,
    "bce range": _bce_range,
    "bce shapes": lambda L: L.nn.functional.binary_cross_entropy(L.ones(2) / 2, L.ones(3)),
    "mse shapes": lambda L: L.nn.functional.mse_loss(L.ones(2, 1), L.ones(3)),
    "loss reduction": lambda L: L.nn.functional.mse_loss(L.ones(2), L.ones(2), reduction="x"),
    "embedding index": _embedding_index,
    "embedding float": lambda L: L.nn.Embedding(3, 2)(L.tensor([1.0])),
    "one_hot negative": lambda L: L.nn.functional.one_hot(L.tensor([-1])),
    "one_hot classes": lambda L: L.nn.functional.one_hot(L.tensor([3]), 2),
    "one_hot float": lambda L: L.nn.functional.one_hot(L.tensor([1.0])),
    "layer_norm shape": lambda L: L.nn.functional.layer_norm(L.ones(2, 3), (4,)),
    "batch_norm 1 value": lambda L: L.nn.BatchNorm1d(3)(L.ones(1, 3)),
    "batch_norm channels": lambda L: L.nn.BatchNorm1d(3)(L.ones(2, 4)),
    "group_norm groups": lambda L: L.nn.GroupNorm(2, 3),
    "instance_norm spatial 1": lambda L: L.nn.InstanceNorm1d(3)(L.ones(2, 3, 1)),
    "pad negative too big": lambda L: L.nn.functional.pad(L.ones(2), (-3, 0)),
    "pad reflect big": lambda L: L.nn.functional.pad(L.ones(1, 2), (2, 2), mode="reflect"),
    "pad odd length": lambda L: L.nn.functional.pad(L.ones(2), (1,)),
    "pad mode": lambda L: L.nn.functional.pad(L.ones(1, 2), (1, 1), mode="x"),
    "interpolate mode": lambda L: L.nn.functional.interpolate(L.ones(1, 1, 2), scale_factor=2,
                                                              mode="x"),
    "interpolate both": lambda L: L.nn.functional.interpolate(L.ones(1, 1, 2), size=4,
                                                              scale_factor=2),
    "softmax no dim": lambda L: L.nn.functional.softmax(L.ones(2, 2), dim=2),
    "rnn input size": _rnn_input,
    "mha embed heads": _mha_dims,
    "module attr": _module_attr,
    "sequential index": _sequential_index,
    "parameter int": _param_of_int,
    "load_state_dict missing": _load_state_missing,
    "load_state_dict shape": _load_state_shape,
    "optimizer empty": _optim_empty,
    "optimizer lr": _optim_lr,
    "adam betas": lambda L: L.optim.Adam([L.nn.Parameter(L.ones(1))], betas=(1.5, 0.9)),
    "tensordataset sizes": lambda L: L.utils.data.TensorDataset(L.ones(3), L.ones(4)),
    "dataloader batch_size": lambda L: L.utils.data.DataLoader([1, 2], batch_size=0),
    "random_split lengths": lambda L: L.utils.data.random_split(range(3), [2, 2]),
    "clip_grad_norm type": lambda L: L.nn.utils.clip_grad_norm_([], 1.0, norm_type="x"),
    # dtypes and devices
    "to bad dtype": lambda L: L.ones(2).to("float32"),
    "to cuda": lambda L: L.ones(2).to("cuda"),
    "device str": lambda L: L.device("gpu"),
    "device index": lambda L: L.device("cpu", -2),
    "type bad": lambda L: L.ones(2).type("torch.Nothing"),
    "set_default_dtype int": lambda L: L.set_default_dtype(L.int64),
    "promote_types str": lambda L: L.promote_types("a", L.float32),
    "finfo int": lambda L: L.finfo(L.int64),
    "iinfo float": lambda L: L.iinfo(L.float32),
    "view dtype size": lambda L: L.ones(3, dtype=L.float32).view(L.float64),
    "complex view_as_real float": lambda L: L.view_as_real(L.ones(2)),
    "view_as_complex shape": lambda L: L.view_as_complex(L.ones(3)),
}


def _norm(msg):
    msg = str(msg).split("\n")[0]
    return re.sub(r"0x[0-9a-f]+", "0x...", msg)


def outcome(name, lib):
    """('ok', (shape, dtype) of the result) or (exception type, normalised first line)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = PROBES[name](lib)
        except Exception as e:
            return type(e).__name__, _norm(e)
    if hasattr(r, "shape") and hasattr(r, "dtype"):
        return "ok", (tuple(r.shape), str(r.dtype))
    return "ok", type(r).__name__


# probe -> why ndgrad still answers otherwise (PyTorch wrong, or a documented limit)
DIFFERENT = {
}


@pytest.mark.parametrize("name", sorted(PROBES))
def test_misuse_probe(name):
    theirs, ours = outcome(name, torch), outcome(name, ndgrad)
    if name in DIFFERENT:
        assert ours != theirs, f"{name} now agrees: take it off DIFFERENT"
        return
    assert ours == theirs


def test_probe_count():
    assert len(PROBES) >= 200


if __name__ == "__main__":
    same = 0
    for name in sorted(PROBES):
        theirs, ours = outcome(name, torch), outcome(name, ndgrad)
        if theirs == ours:
            same += 1
        else:
            print(f"{'KNOWN ' if name in DIFFERENT else ''}{name}:\n   torch  {theirs}\n   ndgrad {ours}")
    print(f"{same} of {len(PROBES)} agree")
