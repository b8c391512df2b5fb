"""The rest of the Tensor API (ops/tensor_api.py) beyond the op table: resizing, storage,
strided views sharing memory, device flags, and removed methods raising PyTorch's errors."""
import warnings

import numpy as np
import pytest

import ndgrad


def _torch():
    return pytest.importorskip("torch")


def test_as_strided_is_a_view_of_the_storage():
    x = ndgrad.arange(12.0)
    v = x[2:].as_strided((2, 3), (3, 1))            # offset defaults to the view's own
    assert v.tolist() == [[2.0, 3.0, 4.0], [5.0, 6.0, 7.0]] and v._base is not None
    x[2] = 100.0
    assert v[0, 0].item() == 100.0                   # shares memory
    torch = _torch()
    tx = torch.arange(12.0)
    assert v.storage_offset() == tx[2:].as_strided((2, 3), (3, 1)).storage_offset() == 2
    with pytest.raises(RuntimeError, match="out of bounds for storage of size 48"):
        x.as_strided((4, 4), (4, 1))
    with pytest.raises(RuntimeError) as e:
        tx.as_strided((4, 4), (4, 1))
    with pytest.raises(RuntimeError) as e2:
        x.as_strided((4, 4), (4, 1))
    assert str(e.value).split("\n")[0] == str(e2.value)


def test_as_strided_inplace_and_version_counter():
    x = ndgrad.arange(6.0)
    x.as_strided_((2, 2), (2, 1))
    assert x.shape == (2, 2) and x.tolist() == [[0.0, 1.0], [2.0, 3.0]]


def test_as_strided_scatter_forward_vs_pytorch():
    torch = _torch()
    a = np.random.default_rng(0).standard_normal(6)
    s = np.ones((2, 2))
    got = ndgrad.as_strided_scatter(ndgrad.tensor(a), ndgrad.tensor(s), (2, 2), (1, 2), 1)
    ref = torch.as_strided_scatter(torch.tensor(a), torch.tensor(s), (2, 2), (1, 2), 1)
    np.testing.assert_array_equal(got.numpy(), ref.numpy())


def test_scatter_family_errors_as_pytorch():
    torch = _torch()
    for lib_call in [lambda L: L.select_scatter(L.zeros(3, 4), L.zeros(3), 0, 0),
                     lambda L: L.slice_scatter(L.zeros(3, 4), L.zeros(3, 3), 1, 0, None, 2),
                     lambda L: L.diagonal_scatter(L.zeros(3, 4), L.zeros(4))]:
        with pytest.raises(RuntimeError) as ref:
            lib_call(torch)
        with pytest.raises(RuntimeError) as got:
            lib_call(ndgrad)
        assert str(got.value) == str(ref.value).split("\n")[0]


def test_resize_keeps_leading_values_and_refuses_grad():
    torch = _torch()
    for lib in (ndgrad, torch):
        t = lib.arange(6.0)
        t.resize_(2, 2)
        assert t.tolist() == [[0.0, 1.0], [2.0, 3.0]]
        t.resize_as_(lib.zeros(3))
        assert tuple(t.shape) == (3,) and t.tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        ndgrad.ones(2, requires_grad=True).resize_(3)
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        torch.ones(2, requires_grad=True).resize_(3)


def test_set_and_is_set_to():
    a, b = ndgrad.arange(4.0), ndgrad.zeros(2)
    b.set_(a)
    assert b.is_set_to(a) and b.tolist() == a.tolist()
    a[0] = 9.0
    assert b[0].item() == 9.0
    b.set_()
    assert b.shape == (0,)


def test_small_methods_match_pytorch():
    torch = _torch()
    for lib in (ndgrad, torch):
        x = lib.arange(12.0).reshape(3, 4)
        assert x.t().dim_order() == (1, 0) and x.dim_order() == (0, 1)
        assert x.const_data_ptr() == x.data_ptr()
        assert x.name is None and not x.is_neg() and x.resolve_neg() is x
        assert not any(getattr(x, f) for f in ("is_mps", "is_xpu", "is_xla", "is_ipu",
                                               "is_mkldnn", "is_vulkan", "is_maia", "is_mtia"))
        assert x.grad_dtype == x.dtype and not x.is_distributed()
        assert x.nonzero_static(size=3).tolist() == [[0, 1], [0, 2], [0, 3]]
        assert x.nonzero_static(size=13, fill_value=-1)[-1].tolist() == [-1, -1]
        assert x.new_empty_strided((2, 2), (1, 2)).stride() == (1, 2)
        y = lib.zeros(3)
        y.map_(lib.tensor([1.0, 2.0, 3.0]), lambda a, b: a + 2 * b)
        assert y.tolist() == [2.0, 4.0, 6.0]
        y.map2_(lib.ones(3), lib.ones(3), lambda a, b, c: a - b - c)
        assert y.tolist() == [0.0, 2.0, 4.0]
        p = lib.nn.Parameter(lib.ones(2))
        assert type(lib.ones(2).as_subclass(lib.nn.Parameter)).__name__ == "Parameter"
        assert x.hardshrink(5.0).tolist()[1] == [0.0, 0.0, 6.0, 7.0]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert x.volatile is False
        assert "volatile was removed" in str(w[0].message)


@pytest.mark.parametrize("name,args", [("solve", "x"), ("lstsq", "x"), ("symeig", ""),
                                       ("eig", ""), ("reinforce", "1")])
def test_removed_methods_raise_pytorchs_error(name, args):
    torch = _torch()
    msgs = []
    for lib in (torch, ndgrad):
        x = lib.eye(3)
        with pytest.raises(RuntimeError) as e:
            getattr(x, name)(*([x] if args == "x" else [1] if args else []))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_deprecated_lu_and_lu_solve():
    torch = _torch()
    a = np.random.default_rng(1).standard_normal((3, 3)) + 3 * np.eye(3)
    b = np.random.default_rng(2).standard_normal((3, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lib in (torch, ndgrad):
            LU, piv = lib.tensor(a).lu()
            x = lib.tensor(b).lu_solve(LU, piv)
            np.testing.assert_allclose(a @ x.numpy(), b, atol=1e-10)


def test_unsupported_devices_raise():
    with pytest.raises(RuntimeError, match="PyTorch is not linked with support for ipu devices"):
        ndgrad.ones(1).ipu()
    with pytest.raises(AssertionError, match="Torch not compiled with XPU enabled"):
        ndgrad.ones(1).xpu()


def test_sparse_api_on_a_dense_tensor_answers_as_pytorch():
    torch = _torch()
    for name in ["coalesce", "is_coalesced", "indices", "values", "crow_indices", "col_indices",
                 "ccol_indices", "row_indices", "_indices", "_values", "_nnz"]:
        msgs = []
        for lib in (torch, ndgrad):
            with pytest.raises((RuntimeError, NotImplementedError)) as e:
                getattr(lib.ones(2, 2), name)()
            msgs.append((type(e.value), str(e.value)[:60]))
        assert msgs[0] == msgs[1], name
    for lib in (torch, ndgrad):
        x = lib.ones(2, 3)
        assert (x.sparse_dim(), x.dense_dim(), x.is_sparse_csr) == (0, 2, False)
        assert tuple(x.adjoint().shape) == (3, 2) and x.conj_physical_() is x
        assert str(x.cfloat().dtype) == "torch.complex64"
        assert str(x.cdouble().dtype) == "torch.complex128"
