"""torch-level names of ops/copies.py: the *_copy family, in-place forms and utilities.

Pure-ndgrad checks (storage independence, gradients, RNG, utilities) run without PyTorch; the
comparisons with PyTorch (values, dtypes, shapes, errors) skip when it is not installed.
"""
import warnings

import numpy as np
import pytest

import ndgrad
from ndgrad.autograd import gradcheck, gradgradcheck


def _torch():
    return pytest.importorskip("torch")


# ---------------------------------------------------------------- the *_copy family
# (name, input builder, args, kwargs): each input is built from the same values in both libraries
def _real(lib, shape=(2, 3)):
    n = int(np.prod(shape))
    return lib.tensor(np.arange(n, dtype=np.float64).reshape(shape) - 2.5)


def _cplx(lib):
    return lib.tensor(np.array([1 + 2j, -3j, 0.5 + 0j]))


COPIES = [
    ("alias_copy", _real, (), {}),
    ("detach_copy", _real, (), {}),
    ("diagonal_copy", _real, (), {}),
    ("diagonal_copy", lambda lib: _real(lib, (2, 3, 4)), (-1, 2, 0), {}),
    ("expand_copy", lambda lib: _real(lib, (3,)), ((2, 3),), {}),
    ("expand_copy", lambda lib: _real(lib, (1, 3)), ([4, -1],), {}),
    ("permute_copy", lambda lib: _real(lib, (2, 3, 4)), ((2, 0, 1),), {}),
    ("select_copy", _real, (1, -1), {}),
    ("slice_copy", lambda lib: _real(lib, (10,)), (0, 2, 8, 3), {}),
    ("slice_copy", _real, (), {"dim": -1, "start": -2}),
    ("slice_copy", lambda lib: _real(lib, (10,)), (0, -30, 100), {}),
    ("split_copy", lambda lib: _real(lib, (5,)), (2,), {}),
    ("split_copy", _real, (2, 1), {}),
    ("split_with_sizes_copy", lambda lib: _real(lib, (5,)), ([2, 3],), {}),
    ("squeeze_copy", lambda lib: _real(lib, (1, 2, 1)), (), {}),
    ("squeeze_copy", lambda lib: _real(lib, (1, 2, 1)), (0,), {}),
    ("squeeze_copy", lambda lib: _real(lib, (1, 2, 1)), ((0, 2),), {}),
    ("t_copy", _real, (), {}),
    ("t_copy", lambda lib: _real(lib, (3,)), (), {}),
    ("transpose_copy", lambda lib: _real(lib, (2, 3, 4)), (0, 2), {}),
    ("unbind_copy", _real, (), {}),
    ("unbind_copy", _real, (1,), {}),
    ("unfold_copy", lambda lib: _real(lib, (7,)), (0, 3, 2), {}),
    ("unsqueeze_copy", _real, (-1,), {}),
    ("view_copy", lambda lib: _real(lib, (6,)), ((3, -1),), {}),
    ("view_copy", lambda lib: _real(lib).t(), ((6,),), {}),   # a copy: any layout
    ("view_as_real_copy", _cplx, (), {}),
    ("view_as_complex_copy", lambda lib: _real(lib, (3, 2)), (), {}),
]
_IDS = [f"{c[0]}-{i}" for i, c in enumerate(COPIES)]


def _as_tuple(r):
    return tuple(r) if isinstance(r, (tuple, list)) else (r,)


@pytest.mark.parametrize("case", COPIES, ids=_IDS)
def test_copy_matches_pytorch(case):
    torch = _torch()
    name, make, args, kwargs = case
    ref = getattr(torch, name)(make(torch), *args, **kwargs)
    got = getattr(ndgrad, name)(make(ndgrad), *args, **kwargs)
    assert type(got) is tuple if isinstance(ref, tuple) else isinstance(got, ndgrad.Tensor)
    for r, g in zip(_as_tuple(ref), _as_tuple(got), strict=True):
        assert tuple(g.shape) == tuple(r.shape) and str(g.dtype) == str(r.dtype)
        np.testing.assert_array_equal(g.numpy(), r.numpy())


@pytest.mark.parametrize("case", COPIES, ids=_IDS)
def test_copy_has_storage_of_its_own(case):
    name, make, args, kwargs = case
    x = make(ndgrad)
    before = x.clone()
    for r in _as_tuple(getattr(ndgrad, name)(x, *args, **kwargs)):
        r.add_(1)             # a view would write into x
    assert ndgrad.equal(x, before)


# the differentiable copies: (name, input shape, args), with 0-d and empty inputs where the op
# takes them
GRAD_CASES = [
    ("alias_copy", (2, 3), ()), ("alias_copy", (), ()), ("alias_copy", (0, 2), ()),
    ("diagonal_copy", (3, 4), (1,)), ("diagonal_copy", (0, 3), ()),
    ("expand_copy", (3,), ((2, 3),)), ("expand_copy", (), ((2, 2),)),
    ("expand_copy", (0,), ((2, 0),)),
    ("permute_copy", (2, 3, 4), ((1, 2, 0),)), ("permute_copy", (), ((),)),
    ("select_copy", (2, 3), (1, 2)),
    ("slice_copy", (7,), (0, 1, 6, 2)), ("slice_copy", (2, 0), (1,)),
    ("squeeze_copy", (1, 3, 1), ()), ("squeeze_copy", (), ()),
    ("t_copy", (2, 3), ()), ("t_copy", (), ()), ("t_copy", (0, 3), ()),
    ("transpose_copy", (2, 3, 4), (0, 2)),
    ("unfold_copy", (6,), (0, 2, 1)), ("unfold_copy", (), (0, 1, 1)),
    ("unsqueeze_copy", (2, 3), (1,)), ("unsqueeze_copy", (), (0,)),
    ("view_copy", (2, 3), ((3, 2),)), ("view_copy", (), ((1,),)), ("view_copy", (0, 2), ((-1,),)),
    ("split_copy", (5, 2), (2,)), ("split_with_sizes_copy", (5,), ([1, 4],)),
    ("unbind_copy", (3, 2), (1,)),
]


@pytest.mark.parametrize("name,shape,args", GRAD_CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in GRAD_CASES])
def test_copy_gradients(name, shape, args):
    x = ndgrad.randn(*shape, dtype=ndgrad.float64, requires_grad=True)

    def f(t):
        return getattr(ndgrad, name)(t, *args)
    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))


def test_complex_view_copy_gradients():
    z = ndgrad.randn(3, dtype=ndgrad.complex128, requires_grad=True)
    assert gradcheck(ndgrad.view_as_real_copy, (z,))
    r = ndgrad.randn(3, 2, dtype=ndgrad.float64, requires_grad=True)
    assert gradcheck(ndgrad.view_as_complex_copy, (r,))
    assert gradgradcheck(ndgrad.view_as_complex_copy, (r,))


def test_detach_copy_leaves_the_graph():
    x = ndgrad.randn(3, requires_grad=True)
    r = ndgrad.detach_copy(x)
    assert not r.requires_grad and r.grad_fn is None
    assert ndgrad.equal(r, x.detach())


def test_sparse_compressed_copies():
    d = ndgrad.tensor([[0.0, 2.0], [3.0, 0.0]])
    csr, csc = d.to_sparse_csr(), d.to_sparse_csc()
    for name, src, method in [("values_copy", csr, "values"), ("crow_indices_copy", csr,
                                                               "crow_indices"),
                              ("col_indices_copy", csr, "col_indices"),
                              ("ccol_indices_copy", csc, "ccol_indices"),
                              ("row_indices_copy", csc, "row_indices")]:
        r = getattr(ndgrad, name)(src)
        ref = getattr(src, method)()
        assert ndgrad.equal(r, ref) and r.dtype is ref.dtype
        r.add_(1)
        assert not ndgrad.equal(getattr(src, method)(), r)   # its own storage


def test_sparse_copies_match_pytorch():
    torch = _torch()
    for lib_case in [("values_copy", "to_sparse_csr"), ("crow_indices_copy", "to_sparse_csr"),
                     ("col_indices_copy", "to_sparse_csr"), ("ccol_indices_copy",
                                                             "to_sparse_csc"),
                     ("row_indices_copy", "to_sparse_csc")]:
        name, conv = lib_case
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # (PyTorch's beta warning for CSR)
            ref = getattr(torch, name)(getattr(torch.eye(3), conv)())
        got = getattr(ndgrad, name)(getattr(ndgrad.eye(3), conv)())
        assert got.tolist() == ref.tolist() and str(got.dtype) == str(ref.dtype)


def test_copies_out():
    x = ndgrad.arange(6.0).view(2, 3)
    o = ndgrad.empty(0)
    assert ndgrad.t_copy(x, out=o) is o and ndgrad.equal(o, x.t())
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got "
                                           "double instead"):
        ndgrad.alias_copy(x, out=ndgrad.empty(0, dtype=ndgrad.float64))
    outs = [ndgrad.empty(0), ndgrad.empty(0)]
    assert ndgrad.unbind_copy(x, out=outs) is None
    assert ndgrad.equal(outs[1], x[1])
    outs = [ndgrad.empty(1, 3), ndgrad.empty(1, 3)]
    assert ndgrad.split_copy(x, 1, out=outs) is None and ndgrad.equal(outs[0], x[:1])
    with pytest.raises(RuntimeError, match="split_copy_Tensor_out\\(\\) expected an out= "
                                           "argument of size 2, got size 1"):
        ndgrad.split_copy(x, 1, out=[ndgrad.empty(1, 3)])
    n = ndgrad.empty(0, dtype=ndgrad.long)
    assert ndgrad.nonzero_static(ndgrad.tensor([0, 1]), size=2, out=n) is n
    assert n.tolist() == [[1], [-1]]


# ---------------------------------------------------------------- in-place forms

def test_inplace_forms_return_their_input_changed():
    x = ndgrad.tensor([-1.0, 2.0])
    assert ndgrad.celu_(x, 2.0) is x
    assert np.allclose(x.numpy(), [2 * np.expm1(-0.5), 2.0])
    x = ndgrad.tensor([-1.0, 2.0])
    assert ndgrad.selu_(x) is x and x[1].item() == pytest.approx(1.0507009873554805 * 2)
    x = ndgrad.tensor([-1.0, 2.0])
    assert ndgrad.threshold_(x, 0.5, 9.0) is x and x.tolist() == [9.0, 2.0]
    x = ndgrad.tensor([1 + 1j])
    assert ndgrad.conj_physical_(x) is x and x.tolist() == [1 - 1j]
    x = ndgrad.ones(2)
    assert ndgrad.addmv_(x, ndgrad.ones(2, 3), ndgrad.ones(3), beta=2, alpha=3) is x
    assert x.tolist() == [11.0, 11.0]
    x = ndgrad.ones(2, requires_grad=True) * 2
    assert ndgrad.detach_(x) is x and not x.requires_grad
    x = ndgrad.arange(6.0)
    assert ndgrad.as_strided_(x, (2, 2), (1, 2), 1) is x and x.tolist() == [[1, 3], [2, 4]]
    x = ndgrad.arange(6.0)
    assert ndgrad.resize_as_(x, ndgrad.ones(2, 2)) is x and x.shape == (2, 2)
    x = ndgrad.ones(3)
    assert ndgrad.dropout_(x, 0.5, False) is x and ndgrad.dropout_(x, 1.0, True) is x
    assert x.tolist() == [0.0, 0.0, 0.0]


def test_fill_makes_a_new_tensor():
    x = ndgrad.ones(3, dtype=ndgrad.long)
    r = ndgrad.fill(x, 2.7)
    assert r.tolist() == [2, 2, 2] and r.dtype is ndgrad.long and x.tolist() == [1, 1, 1]
    v = ndgrad.tensor(4.0, dtype=ndgrad.float64, requires_grad=True)
    a = ndgrad.randn(3, dtype=ndgrad.float64, requires_grad=True)
    assert gradcheck(ndgrad.fill, (a, v))
    ndgrad.fill(a, v).sum().backward()
    assert a.grad.tolist() == [0.0, 0.0, 0.0] and v.grad.item() == 3.0


def test_adjoint_conjugates():
    z = ndgrad.tensor([[1 + 1j, 2.0], [3.0, 4j]])
    assert ndgrad.adjoint(z).tolist() == [[1 - 1j, 3.0], [2.0, -4j]]
    x = ndgrad.randn(2, 3, 4, dtype=ndgrad.float64, requires_grad=True)
    assert ndgrad.adjoint(x).shape == (2, 4, 3) and gradcheck(ndgrad.adjoint, (x,))


def test_rrelu_slopes():
    x = -ndgrad.ones(1000)
    ev = ndgrad.rrelu(x, 0.1, 0.3)
    assert np.allclose(ev.numpy(), -0.2)                   # eval: the mean slope
    tr = ndgrad.rrelu(x, 0.1, 0.3, True).numpy()
    assert (-tr >= 0.1).all() and (-tr <= 0.3).all() and tr.std() > 0.03
    g1, g2 = ndgrad.Generator(), ndgrad.Generator()
    g1.manual_seed(7)
    g2.manual_seed(7)
    a = ndgrad.rrelu(x, 0.1, 0.3, True, g1)
    assert ndgrad.equal(a, ndgrad.rrelu(x, 0.1, 0.3, True, g2))   # the generator's draw
    ndgrad.manual_seed(3)
    b = ndgrad.rrelu(x, 0.1, 0.3, True)
    ndgrad.manual_seed(3)
    assert ndgrad.equal(b, ndgrad.rrelu_(x.clone(), 0.1, 0.3, True))   # the default one's
    pos = ndgrad.ones(4)
    assert ndgrad.rrelu(pos, training=True).tolist() == [1.0] * 4


def test_feature_dropout_drops_whole_channels():
    ndgrad.manual_seed(0)
    x = ndgrad.ones(4, 8, 5)
    r = ndgrad.feature_dropout(x, 0.5, True).numpy()
    per_channel = r.reshape(32, 5)
    assert set(np.unique(per_channel)) <= {0.0, 2.0}
    assert all(len(set(row)) == 1 for row in per_channel.tolist())
    y = ndgrad.ones(4, 8, 5)
    assert ndgrad.feature_dropout_(y, 1.0, True) is y and y.sum().item() == 0.0
    y = ndgrad.ones(4, 8)
    assert ndgrad.feature_alpha_dropout_(y, 0.5, False) is y
    assert ndgrad.alpha_dropout_(y, 0.5, False) is y


def test_embedding_renorm_():
    w = ndgrad.tensor([[3.0, 4.0], [1.0, 0.0], [0.0, 6.0]])
    v = w._version
    assert ndgrad.embedding_renorm_(w, ndgrad.tensor([0, 2, 0]), 1.0, 2.0) is w
    assert np.allclose(w.numpy(), [[0.6, 0.8], [1.0, 0.0], [0.0, 1.0]], atol=1e-6)
    assert w._version > v


def test_inplace_forms_match_pytorch():
    torch = _torch()
    w = [[3.0, 4.0], [1.0, 0.0], [0.0, 6.0]]
    ref = torch.embedding_renorm_(torch.tensor(w), torch.tensor([0, -1]), 1.0, 2.0)
    got = ndgrad.embedding_renorm_(ndgrad.tensor(w), ndgrad.tensor([0, -1]), 1.0, 2.0)
    assert got.tolist() == ref.tolist()                     # bit for bit: ATen's arithmetic
    for lib in (torch, ndgrad):
        lib.manual_seed(0)
    x = [-2.0, -0.5, 0.0, 1.5]
    for name, args in [("celu_", (1.5,)), ("selu_", ()), ("threshold_", (0.0, -7.0)),
                       ("rrelu", (0.2, 0.4)), ("rrelu_", ())]:
        ref = getattr(torch, name)(torch.tensor(x), *args)
        got = getattr(ndgrad, name)(ndgrad.tensor(x), *args)
        assert np.allclose(got.numpy(), ref.numpy()), name
    z = [[1 + 1j, 2.0], [3.0, 4j]]
    assert ndgrad.adjoint(ndgrad.tensor(z)).tolist() == torch.adjoint(torch.tensor(z)).tolist()


# ---------------------------------------------------------------- utilities

def test_layout_and_memory_format_types():
    assert isinstance(ndgrad.strided, ndgrad.layout)
    assert isinstance(ndgrad.sparse_coo, ndgrad.layout)
    assert isinstance(ndgrad.sparse_csr, ndgrad.layout)
    for name in ("contiguous_format", "preserve_format", "channels_last", "channels_last_3d"):
        fmt = getattr(ndgrad, name)
        assert isinstance(fmt, ndgrad.memory_format) and repr(fmt) == f"torch.{name}"
    x = ndgrad.ones(2, 2)
    assert ndgrad.equal(x.clone(memory_format=ndgrad.contiguous_format), x)


def test_small_utilities():
    x = ndgrad.ones(2)
    assert ndgrad.get_device(x) == -1 and ndgrad.is_inference(x) is False
    with ndgrad.inference_mode():
        assert ndgrad.is_inference(ndgrad.ones(2))
    assert ndgrad.is_storage(x.untyped_storage()) and not ndgrad.is_storage(x)
    assert ndgrad.typename(x) == "torch.FloatTensor"
    assert ndgrad.typename(ndgrad.ones(2, dtype=ndgrad.long)) == "torch.LongTensor"
    assert ndgrad.typename(3) == "int" and ndgrad.typename(int) == "int"


def test_warn_always_and_interop_threads():
    was = ndgrad.is_warn_always_enabled()
    try:
        ndgrad.set_warn_always(True)
        assert ndgrad.is_warn_always_enabled() is True
        with pytest.warns(UserWarning, match="The given buffer is not writable"):
            ndgrad.frombuffer(b"abcd", dtype=ndgrad.uint8)      # (shown every time now)
        with pytest.raises(RuntimeError, match="setWarnOnlyOnce expects a bool, but got int"):
            ndgrad.set_warn_always(1)
        assert ndgrad.is_warn_always_enabled() is True      # unchanged by the bad call
    finally:
        ndgrad.set_warn_always(was)
    n = ndgrad.get_num_interop_threads()
    assert isinstance(n, int) and n >= 1
    with pytest.raises(RuntimeError, match="set_num_interop_threads expects a positive integer"):
        ndgrad.set_num_interop_threads(0)
    with pytest.raises(RuntimeError, match="expects an int, but got float"):
        ndgrad.set_num_interop_threads(2.5)
    assert ndgrad.get_num_interop_threads() == n
    from ndgrad.ops import copies
    before = copies._settings["interop_threads"]
    try:
        ndgrad.set_num_interop_threads(3)
        assert ndgrad.get_num_interop_threads() == 3
    finally:    # (later tests compare the default with PyTorch's)
        copies._settings["interop_threads"] = before


def test_set_default_tensor_type():
    try:
        with pytest.warns(UserWarning, match="set_default_tensor_type\\(\\) is deprecated"):
            ndgrad.set_default_tensor_type(ndgrad.DoubleTensor)
        assert ndgrad.get_default_dtype() is ndgrad.float64 and ndgrad.ones(1).dtype is \
            ndgrad.float64
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ndgrad.set_default_tensor_type("torch.FloatTensor")
            assert ndgrad.get_default_dtype() is ndgrad.float32
            with pytest.raises(TypeError, match="^only floating-point types are supported"):
                ndgrad.set_default_tensor_type("torch.LongTensor")
            assert ndgrad.get_default_dtype() is ndgrad.float32
    finally:
        ndgrad.set_default_dtype(ndgrad.float32)


def test_empty_strided_and_permuted():
    t = ndgrad.empty_strided((2, 3), (1, 2), dtype=ndgrad.float64)
    assert t.shape == (2, 3) and t.stride() == (1, 2) and t.dtype is ndgrad.float64
    t = ndgrad.empty_strided((2, 3), (3, 1), requires_grad=True)
    assert t.requires_grad and t.is_leaf
    t = ndgrad.empty_permuted((2, 3, 4), (2, 0, 1))
    assert t.shape == (2, 3, 4) and t.stride() == (3, 1, 6)
    assert ndgrad.empty_permuted((2, 3), (0, 1)).stride() == (3, 1)


def test_frombuffer_shares_memory():
    buf = bytearray(np.arange(4, dtype=np.int32).tobytes())
    t = ndgrad.frombuffer(buf, dtype=ndgrad.int32)
    assert t.tolist() == [0, 1, 2, 3] and t.dtype is ndgrad.int32
    t[0] = 7
    assert buf[0] == 7                              # the tensor writes into the buffer
    buf[4] = 9
    assert t[1].item() == 9                         # and sees the buffer's changes
    assert ndgrad.frombuffer(buf, dtype=ndgrad.int32, count=2, offset=8).tolist() == [2, 3]
    f = ndgrad.frombuffer(bytearray(8), dtype=ndgrad.float32, requires_grad=True)
    assert f.requires_grad and f.is_leaf


def test_nonzero_static():
    x = ndgrad.tensor([[1, 0], [2, 3]])
    assert ndgrad.nonzero_static(x, size=4).tolist() == [[0, 0], [1, 0], [1, 1], [-1, -1]]
    assert ndgrad.nonzero_static(x, size=1, fill_value=9).tolist() == [[0, 0]]
    assert ndgrad.nonzero_static(x, size=0).shape == (0, 2)


# ---------------------------------------------------------------- PyTorch's behaviours and errors
# each expression runs under both libraries (as `torch`): same exception type and message, or
# the same result
SAME = """
torch.alias_copy(None)
torch.diagonal_copy(torch.ones(2, 3), 0, 0, 5)
torch.expand_copy(torch.ones(3), (2, 4))
torch.permute_copy(torch.ones(2, 3), (1,))
torch.select_copy(torch.ones(2, 3), 1, 5)
torch.slice_copy(torch.ones(10), 0, 0, 5, 0)
torch.slice_copy(torch.ones(10), 1)
torch.slice_copy(torch.tensor(1.))
torch.split_with_sizes_copy(torch.ones(5), [2, 2])
torch.squeeze_copy(torch.zeros(1, 2, 1), 3)
torch.t_copy(torch.zeros(2, 2, 2))
torch.unfold_copy(torch.ones(6), 0, 7, 2)
torch.view_copy(torch.ones(6), (4, -1))
torch.view_as_real_copy(torch.ones(2))
torch.view_as_complex_copy(torch.ones(3))
torch.values_copy(torch.ones(2, 2))
torch.indices_copy(torch.ones(2, 2))
torch.crow_indices_copy(torch.ones(2, 2))
torch.ccol_indices_copy(torch.eye(2).to_sparse_csr())
torch.t_copy(torch.ones(2, 3), out=torch.empty(0, dtype=torch.int64))
torch.unbind_copy(torch.ones(2, 3), out=[torch.empty(0)])
torch.split_with_sizes_copy(torch.ones(2, 3), [1, 1], out=[torch.empty(0)])
torch.split_copy(torch.ones(2, 3), 1, out=torch.empty(1, 3))
torch.split_copy(torch.ones(2, 3), 1, out=[torch.empty(0), 3])
torch.fill(torch.ones(3), torch.ones(2))
torch.addmv_(None)
torch.addmv_(None, torch.ones(2, 3), torch.ones(3))
torch.addmv_(torch.ones(2), "x", torch.ones(3))
torch.addmv_(torch.ones(2), torch.ones(2, 3), torch.ones(3), beta=None)
torch.view_copy(None, (6,))
torch.view_copy(torch.ones(6), "x")
torch.view_copy(torch.ones(6), 6)
torch.view_copy(torch.ones(6), size=(2, 3))
torch.view_copy(torch.ones(2, 3), torch.int32)
torch.squeeze_copy(torch.ones(1), None)
torch.fill(None, 1)
torch.fill(torch.ones(2), None)
torch.fill(torch.ones(2), value=None)
torch.fill(torch.ones(2), foo=1)
torch.fill(torch.ones(2), 1, 2)
torch.fill("x")
torch.adjoint(torch.ones(3))
torch.rrelu(torch.ones(3), 0.5, 0.1, True)
torch.rrelu(torch.ones(3, dtype=torch.long))
torch.rrelu_(torch.ones(3, dtype=torch.complex64))
torch.celu_(torch.ones(3, dtype=torch.long))
torch.selu_(torch.ones(3, dtype=torch.bool))
torch.dropout_(torch.ones(3), 1.5, False)
torch.alpha_dropout_(torch.ones(3), -0.5, True)
torch.feature_dropout(torch.ones(2, 3), 2.0, False)
torch.feature_dropout(torch.ones(3), 0.5, True)
torch.feature_dropout(torch.ones(3), 0.5, False)
torch.feature_dropout(torch.ones(0), 0.5, True)
torch.feature_alpha_dropout(torch.ones(3), 0.5, True)
torch.embedding_renorm_(torch.ones(3), torch.tensor([0]), 1.0, 2.0)
torch.embedding_renorm_(torch.ones(2, 2), torch.tensor([0.0]), 1.0, 2.0)
torch.embedding_renorm_(torch.ones(2, 2), torch.tensor([5]), 1.0, 2.0)
torch.nonzero_static(torch.tensor([1, 0, 2]), size=-1)
torch.nonzero_static(torch.ones(2))
torch.nonzero_static(torch.tensor([1, 0, 2]), size=2, out=torch.empty(0))
torch.nonzero_static(torch.tensor(3), size=2)
torch.empty_strided((2, 3), (1,))
torch.empty_strided((2, -3), (1, 2))
torch.empty_permuted((2, 3, 4), (2, 0))
torch.empty_permuted((2, 3, 4), (2, 0, 0))
torch.empty_permuted((2, 3, 4), (2, 0, 5))
torch.frombuffer(bytearray(4))
torch.frombuffer(bytearray(16), dtype=torch.int32, count=5)
torch.frombuffer(bytearray(16), dtype=torch.int32, offset=16)
torch.frombuffer(bytearray(16), dtype=torch.int32, offset=2)
torch.frombuffer(bytearray(0), dtype=torch.int32)
torch.frombuffer(bytearray(16), dtype=torch.int32, count=0)
torch.frombuffer(bytearray(16), dtype=torch.int32, requires_grad=True)
torch.frombuffer(3, dtype=torch.int32)
torch.set_num_interop_threads(-1)
torch.set_num_interop_threads("x")
torch.set_flush_denormal(1)
torch.set_flush_denormal(True)
torch.set_default_tensor_type("torch.LongTensor")
torch.set_default_tensor_type("no_such_module_xyz")
torch.set_default_tensor_type(3)
torch.set_default_tensor_type(torch.float64)
torch.set_default_tensor_type("torch.cuda.FloatTensor")
torch.typename(torch.ones(2, dtype=torch.float64))
torch.typename(None)
torch.get_device(torch.ones(2))
torch.is_inference("x")
torch.is_storage(torch.ones(2))
torch.empty_strided((2, 3), (1, 2)).stride()
torch.empty_permuted((2, 3, 4), (1, 2, 0)).stride()
""".strip().splitlines()


def _outcome(lib, expr):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = eval(expr, {"torch": lib})
        except Exception as e:   # noqa: BLE001 (the exception is what is compared)
            return type(e).__name__, str(e)
    if isinstance(r, lib.Tensor):
        return "tensor", tuple(r.shape), str(r.dtype), r.tolist()
    return "value", repr(r)


@pytest.mark.parametrize("expr", SAME)
def test_behaves_as_pytorch(expr):
    torch = _torch()
    try:
        assert _outcome(ndgrad, expr) == _outcome(torch, expr)
    finally:
        ndgrad.set_default_dtype(ndgrad.float32)
        torch.set_default_dtype(torch.float32)


def test_bad_calls_change_nothing():
    x = ndgrad.ones(3)
    v = x._version
    for call in (lambda: ndgrad.celu_(ndgrad.ones(3, dtype=ndgrad.long)),
                 lambda: ndgrad.dropout_(x, 1.5, True),
                 lambda: ndgrad.rrelu_(x, 0.5, 0.1, True),
                 lambda: ndgrad.fill(x, ndgrad.ones(2))):
        with pytest.raises((RuntimeError, NotImplementedError)):
            call()
    assert x._version == v and x.tolist() == [1.0, 1.0, 1.0]
    w = ndgrad.tensor([[3.0, 4.0], [0.0, 6.0]])
    with pytest.raises(IndexError):
        ndgrad.embedding_renorm_(w, ndgrad.tensor([1, 5]), 1.0, 2.0)   # row 1 is in range
    assert w.tolist() == [[3.0, 4.0], [0.0, 6.0]]
