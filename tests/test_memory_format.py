"""Memory formats: channels_last and channels_last_3d as PyTorch lays them out, checked against
PyTorch itself (skipped without it) and on their own.

A tensor's format is its array's strides: `is_contiguous(memory_format=)` reads them as c10
does, `contiguous`/`clone`/`to`/`empty`/`*_like` and `Module.to` lay copies out so, the ops
that write their result in their input's format (convolution, batch norm, pooling,
interpolation, group norm) do, and a leaf's `.grad` follows AccumulateGrad's layout contract
(its variable's strides)."""
import itertools

import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")

LIBS = (ndgrad, torch)
FORMATS = ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format")


def _layouts(shape):
    """(name, make(lib)) for tensors of `shape` in several memory layouts: every permutation
    of the dims in memory, a strided slice, a broadcast."""
    n = int(np.prod(shape))
    out = []
    for perm in itertools.permutations(range(len(shape))):
        inverse = tuple(np.argsort(perm))

        def make(T, perm=perm, inverse=inverse):
            base = T.arange(n, dtype=T.float32).reshape(tuple(shape[d] for d in perm))
            return base.permute(*inverse)
        out.append((f"perm{perm}", make))
    if shape[-2] > 1:
        big = list(shape)
        big[-2] *= 2
        out.append(("sliced", lambda T: T.arange(int(np.prod(big)), dtype=T.float32)
                    .reshape(big)[..., ::2, :]))
        if len(shape) == 4:
            out.append(("sliced_cl", lambda T: T.arange(int(np.prod(big)), dtype=T.float32)
                        .reshape(big).contiguous(memory_format=T.channels_last)[..., ::2, :]))
    one = list(shape)
    one[1] = 1
    if n:   # (NumPy gives every view of an empty array zero strides: an expanded one's kept
        out.append(("expanded", lambda T: T.zeros(one).expand(*shape)))   # strides are lost)
    return out


def _fmt(T, name):
    return getattr(T, name)


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:   # noqa: BLE001 (the exception is the outcome compared)
        return ("raises", type(e).__name__, str(e).split("\n")[0])
    if isinstance(r, bool):
        return r
    if isinstance(r, tuple):
        return r
    return ("tensor", tuple(r.shape), _strides(r))


def _strides(t):
    """t.stride(), dims of size 1 as None: no layout rule reads their strides (c10's contiguity
    checks skip them) and NumPy keeps its own values there."""
    return tuple(None if n == 1 else s for n, s in zip(t.shape, t.stride()))


_SHAPES4 = [(2, 3, 4, 5), (0, 3, 4, 5), (2, 1, 4, 5), (2, 3, 1, 1), (1, 3, 1, 1), (2, 3, 4, 1),
            (1, 1, 1, 1), (3, 2, 1, 4)]


@pytest.mark.parametrize("shape", _SHAPES4 + [(2, 3, 2, 4, 5), (2, 3, 1, 1, 1), (2, 3),
                                               (2, 3, 4)])
def test_layouts_like_pytorch(shape):
    """is_contiguous(memory_format=) and the strides of contiguous, clone, to, *_like, for
    every layout of every shape, and PyTorch's errors where a format does not fit the rank."""
    cases = _layouts(shape) if len(shape) <= 4 else _layouts(shape)[::7]
    for name, make in cases:
        got = {}
        for T in LIBS:
            x = make(T)
            rows = [_strides(x), _outcome(lambda: x.is_contiguous()),
                    x.contiguous() is x, x.to(memory_format=T.channels_last) is x
                    if x.ndim == 4 else None]
            for f in FORMATS:
                mf = _fmt(T, f)
                rows += [_outcome(lambda: x.is_contiguous(memory_format=mf)),
                         _outcome(lambda: x.contiguous(memory_format=mf)),
                         _outcome(lambda: x.clone(memory_format=mf)),
                         _outcome(lambda: x.to(memory_format=mf)),
                         _outcome(lambda: T.empty_like(x, memory_format=mf)),
                         _outcome(lambda: T.zeros_like(x, memory_format=mf)),
                         _outcome(lambda: T.randn_like(x, memory_format=mf))]
            rows += [_outcome(lambda: x.clone()), _outcome(lambda: T.empty_like(x)),
                     _outcome(lambda: x.to(T.float64, memory_format=T.channels_last))]
            got[T.__name__] = rows
        assert got["ndgrad"] == got["torch"], name


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 3), (2, 3, 4, 5, 6), (0, 3, 4, 5)])
@pytest.mark.parametrize("fmt", FORMATS)
def test_empty_like_pytorch(shape, fmt):
    got = [_outcome(lambda: T.empty(*shape, memory_format=_fmt(T, fmt))) for T in LIBS]
    assert got[0] == got[1]


def test_contiguous_keeps_self_and_records_a_clone():
    x = ndgrad.randn(2, 3, 4, 5, requires_grad=True)
    y = x.contiguous(memory_format=ndgrad.channels_last)
    assert y.grad_fn.name() == "CloneBackward0" and y.is_contiguous(
        memory_format=ndgrad.channels_last) and not y.is_contiguous()
    assert y.contiguous(memory_format=ndgrad.channels_last) is y
    assert x.contiguous(memory_format=ndgrad.contiguous_format) is x
    y.sum().backward()
    assert x.grad.stride() == x.stride()
    with pytest.raises(TypeError):
        x.is_contiguous(memory_format="channels_last")


def _pair(seed, *shapes):
    r = np.random.default_rng(seed)
    return [r.standard_normal(s).astype(np.float32) for s in shapes]


def _run_op(T, fn, arrays, formats, grads=True):
    """fn(T, *tensors) with each array laid out in its format (None: contiguous) as a leaf;
    the result's stride, its values, and each leaf's .grad stride after backward."""
    ts = []
    for a, f in zip(arrays, formats):
        t = T.tensor(a)
        if f is not None:
            t = t.contiguous(memory_format=getattr(T, f))
        ts.append(t.requires_grad_(grads))
    out = fn(T, *ts)
    first = out[0] if isinstance(out, tuple) else out
    strides = tuple(o.stride() for o in (out if isinstance(out, tuple) else (out,)))
    if grads:
        first.sum().backward()
    values = first.detach().numpy() if T is ndgrad else first.detach().numpy()
    return strides, np.array(values), tuple(t.grad.stride() if grads else None for t in ts)


def _conv(T, x, w):
    return T.nn.functional.conv2d(x, w, padding=1)


def _conv_t(T, x, w):
    return T.nn.functional.conv_transpose2d(x, w, stride=2)


def _bn_train(T, x):
    return T.nn.functional.batch_norm(x, None, None, training=True)


def _bn_eval(T, x):
    c = x.shape[1]
    return T.nn.functional.batch_norm(x, T.zeros(c), T.ones(c), T.ones(c), T.zeros(c))


def _maxpool(T, x):
    return T.nn.functional.max_pool2d(x, 2, return_indices=True)


def _ops2d():
    F = "channels_last"
    x, w, wt = (2, 4, 6, 6), (5, 4, 3, 3), (4, 3, 2, 2)
    return [
        ("conv cl input", _conv, [x, w], [F, None]),
        ("conv cl weight", _conv, [x, w], [None, F]),
        ("conv both", _conv, [x, w], [F, F]),
        ("conv neither", _conv, [x, w], [None, None]),
        ("conv_transpose", _conv_t, [x, wt], [F, None]),
        ("batch_norm train", _bn_train, [x], [F]),
        ("batch_norm eval", _bn_eval, [x], [F]),
        ("max_pool2d", _maxpool, [x], [F]),
        ("avg_pool2d", lambda T, t: T.nn.functional.avg_pool2d(t, 2), [x], [F]),
        ("adaptive_avg_pool2d", lambda T, t: T.nn.functional.adaptive_avg_pool2d(t, 4), [x],
         [F]),
        ("bilinear", lambda T, t: T.nn.functional.interpolate(t, scale_factor=2,
                                                              mode="bilinear"), [x], [F]),
        ("bicubic", lambda T, t: T.nn.functional.interpolate(t, size=(5, 7), mode="bicubic"),
         [x], [F]),
        ("nearest", lambda T, t: T.nn.functional.interpolate(t, scale_factor=3), [x], [F]),
        ("group_norm", lambda T, t: T.nn.functional.group_norm(t, 2), [x], [F]),
        ("relu", lambda T, t: T.relu(t), [x], [F]),
        ("scalar mul", lambda T, t: t * 3, [x], [F]),
        ("conv3d", lambda T, x, w: T.nn.functional.conv3d(x, w), [(2, 3, 4, 4, 4),
                                                                 (2, 3, 2, 2, 2)],
         ["channels_last_3d", None]),
        ("max_pool3d", lambda T, t: T.nn.functional.max_pool3d(t, 2), [(2, 3, 4, 4, 4)],
         ["channels_last_3d"]),
        ("upsample trilinear", lambda T, t: T.nn.functional.interpolate(
            t, scale_factor=2, mode="trilinear"), [(1, 3, 3, 4, 5)], ["channels_last_3d"]),
    ]


@pytest.mark.parametrize("name,fn,shapes,formats", _ops2d(), ids=[c[0] for c in _ops2d()])
def test_ops_keep_the_format_like_pytorch(name, fn, shapes, formats):
    arrays = _pair(0, *shapes)
    ours = _run_op(ndgrad, fn, arrays, formats)
    theirs = _run_op(torch, fn, arrays, formats)
    assert ours[0] == theirs[0], "result strides"
    assert ours[2] == theirs[2], "the leaves' .grad strides"
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-5)


def test_channels_last_upsample_runs_pytorchs_channels_last_kernel():
    """A channels-last input of more than 3 channels takes PyTorch's channels-last kernel
    whatever the output size (its lanes add in another order than the generic kernel's): bit
    for bit (before memory formats were kept, 132 k of 295 k outputs differed here)."""
    torch.set_num_threads(2)
    ndgrad.set_num_threads(2)
    a, = _pair(3, (2, 16, 48, 48))
    outs = []
    for T in LIBS:
        x = T.tensor(a).contiguous(memory_format=T.channels_last)
        outs.append(T.nn.functional.interpolate(x, scale_factor=2, mode="bilinear")
                    .detach().numpy())
    np.testing.assert_array_equal(outs[0], outs[1])


_LEAVES = [
    lambda T: T.randn(4, 3).t(),
    lambda T: T.randn(2, 3, 4, 5).contiguous(memory_format=T.channels_last),
    lambda T: T.randn(2, 4, 3).transpose(0, 2),
    lambda T: T.randn(4, 6)[:, ::2],
    lambda T: T.randn(3, 4)]
_LOSSES = [
    lambda x: (x * 2).sum(), lambda x: x.contiguous().mul(2).sum(), lambda x: x.sum(0).sum(),
    lambda x: (x * x).sum()]


@pytest.mark.parametrize("make", _LEAVES)
@pytest.mark.parametrize("loss", _LOSSES)
def test_leaf_grads_obey_the_layout_contract(make, loss):
    """A leaf's .grad takes the leaf's strides where it is dense (contiguous where it is not),
    with PyTorch's version counts."""
    got = []
    for T in LIBS:
        T.manual_seed(0)
        x = make(T).detach().requires_grad_()
        loss(x).backward()
        g1 = (x.grad.stride(), x.grad._version)
        loss(x).backward()
        got.append((g1, x.grad.stride()))
    assert got[0] == got[1]


def test_leaf_grad_layout_under_create_graph():
    got = []
    for T in LIBS:
        x = T.randn(4, 3).t().detach().requires_grad_()
        (x * x).sum().backward(create_graph=True)
        got.append(x.grad.stride())
    assert got[0] == got[1]


def test_module_to_channels_last():
    got = []
    for T in LIBS:
        m = T.nn.Sequential(T.nn.Conv2d(3, 4, 3), T.nn.BatchNorm2d(4), T.nn.Linear(4, 2))
        m.to(memory_format=T.channels_last)
        got.append([p.stride() for p in m.parameters()] + [b.stride() for b in m.buffers()])
    assert got[0] == got[1]


def test_formats_without_pytorch_semantics():
    """The pure-ndgrad facts the comparisons above rest on."""
    x = ndgrad.arange(120.).reshape(2, 3, 4, 5)
    y = x.contiguous(memory_format=ndgrad.channels_last)
    assert y.stride() == (60, 1, 15, 3) and ndgrad.equal(x, y)
    assert (y + 1).stride() == (60, 1, 15, 3)                   # NumPy's ufuncs keep it
    z = ndgrad.empty(2, 3, 4, 5, 6, memory_format=ndgrad.channels_last_3d)
    assert z.stride() == (360, 1, 90, 18, 3)
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
        ndgrad.randn(2, 3).contiguous(memory_format=ndgrad.channels_last)
