"""DLPack: zero-copy exchange with NumPy and PyTorch, both directions, every dtype both have
(bfloat16 and float8 through ndgrad's own capsules), capsules consumed once, lifetimes."""
import gc

import numpy as np
import pytest

import ndgrad
from ndgrad.utils import dlpack


def test_numpy_both_ways_share_memory():
    a = np.arange(12.0).reshape(3, 4)[:, ::2]   # strided
    t = ndgrad.from_dlpack(a)
    assert t.shape == (3, 2) and t.stride() == (4, 2)
    t[0, 0] = 100.0
    assert a[0, 0] == 100.0
    b = np.from_dlpack(t)
    b[1, 1] = -1.0
    assert t[1, 1].item() == -1.0 and a[1, 1] == -1.0
    for dtype in (np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64, np.float16,
                  np.float32, np.float64, np.complex64, np.complex128):
        x = np.ones(3, dtype=dtype)
        y = ndgrad.from_dlpack(x)
        assert y._data.dtype == x.dtype and np.from_dlpack(y).ctypes.data == x.ctypes.data
    assert ndgrad.ones(2).__dlpack_device__() == (dlpack.DLDeviceType.kDLCPU, 0)


def test_pytorch_both_ways_share_memory():
    torch = pytest.importorskip("torch")
    dtypes = ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "float32",
              "float64", "complex64", "complex128", "bfloat16", "float8_e4m3fn",
              "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "uint16", "uint32",
              "uint64"]
    for name in dtypes:
        src = torch.tensor([[1.0, 2.0, 0.0], [-2.0, 0.5, 3.0]]).to(getattr(torch, name))
        mine = ndgrad.from_dlpack(src)                       # torch -> ndgrad
        assert mine.dtype is getattr(ndgrad, name) and mine.shape == (2, 3)
        assert mine._data.ctypes.data == src.data_ptr()
        np.testing.assert_array_equal(mine._data.astype(np.float64),
                                      src.to(torch.float64).numpy())
        back = torch.from_dlpack(mine)                        # ndgrad -> torch
        assert back.dtype == src.dtype and back.data_ptr() == src.data_ptr()
        t2 = torch.utils.dlpack.from_dlpack(ndgrad.utils.dlpack.to_dlpack(mine.t()))
        assert t2.stride() == (1, 3) and t2.data_ptr() == src.data_ptr()
    src = torch.zeros(4)
    n = ndgrad.from_dlpack(src)
    n.add_(2)
    assert src.tolist() == [2.0] * 4
    mine = ndgrad.zeros(3, dtype=ndgrad.bfloat16)
    theirs = torch.from_dlpack(mine)
    theirs.add_(1.5)
    assert mine.tolist() == [1.5, 1.5, 1.5]
    # read-only storage (an expanded view) exports too, as PyTorch's tensors do
    e = ndgrad.arange(3.0).expand(2, 3)
    te = torch.from_dlpack(e)
    assert te.stride() == (0, 1) and te.tolist() == [[0.0, 1.0, 2.0]] * 2


def test_capsules_and_lifetimes():
    torch = pytest.importorskip("torch")
    cap = torch.utils.dlpack.to_dlpack(torch.arange(3))
    assert ndgrad.utils.dlpack.from_dlpack(cap).tolist() == [0, 1, 2]
    with pytest.raises(RuntimeError, match="can be consumed only once"):
        ndgrad.utils.dlpack.from_dlpack(cap)
    # the producer's memory outlives it while a consumer holds it; the deleter runs after
    src = ndgrad.arange(5, dtype=ndgrad.bfloat16)
    theirs = torch.from_dlpack(src)
    del src
    gc.collect()
    assert theirs.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    held = len(dlpack._EXPORTED)
    del theirs
    gc.collect()
    assert len(dlpack._EXPORTED) == held - 1
    unused = ndgrad.utils.dlpack.to_dlpack(ndgrad.ones(2, dtype=ndgrad.bfloat16))
    n = len(dlpack._EXPORTED)
    del unused      # an unconsumed capsule frees its tensor
    gc.collect()
    assert len(dlpack._EXPORTED) == n - 1
    t = torch.ones(3, dtype=torch.bfloat16)
    mine = ndgrad.from_dlpack(t)
    del t
    gc.collect()
    assert mine.tolist() == [1.0, 1.0, 1.0]


def test_errors_and_options():
    torch = pytest.importorskip("torch")
    x = ndgrad.ones(2, requires_grad=True)
    with pytest.raises(BufferError, match="Can't export tensors that require gradient"):
        x.__dlpack__()
    with pytest.raises(BufferError, match="Can't export tensors that require gradient"):
        torch.ones(2, requires_grad=True).__dlpack__()   # (the same message)
    for lib in (ndgrad, torch):     # (anything else is taken for a capsule, and invalid)
        with pytest.raises(RuntimeError, match="from_dlpack received an invalid capsule"):
            lib.from_dlpack([1, 2])
    a = np.arange(3.0)
    c = ndgrad.from_dlpack(a, copy=True)
    c.add_(1)
    assert a.tolist() == [0.0, 1.0, 2.0]
    assert ndgrad.from_dlpack(a, device="cpu")._data is not None
