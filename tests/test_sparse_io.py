"""Sparse tensors (COO, CSR, CSC) in checkpoints: ndgrad.save pickles them as PyTorch does
(torch._utils._rebuild_sparse_tensor), so each library loads the other's files, in the zip and
the legacy formats, with weights_only=True; a file whose indices lie outside the tensor raises."""
import io
import pickle
import warnings

import numpy as np
import pytest

import ndgrad


def _objs(L):
    T = L.tensor
    coo = L.sparse_coo_tensor(T([[0, 1, 1], [2, 0, 2]]), T([1.0, 2.0, 3.0]), (2, 3))
    return {
        "coo": coo, "coo_coalesced": coo.coalesce(),
        "coo_hybrid": L.sparse_coo_tensor(T([[0, 3]]), T([[1.0, 2.0], [3.0, 4.0]],
                                                         dtype=L.float64), (4, 2)),
        "csr": L.sparse_csr_tensor(T([0, 2, 2, 3]), T([0, 2, 1]),
                                   T([1.0, 2.0, 3.0], dtype=L.float64), (3, 3)),
        "csc": L.sparse_csc_tensor(T([0, 1, 1]), T([1]), T([5]), (2, 2)),
        "dense": L.arange(3.0),
    }


def _check(got, ref):
    assert set(got) == set(ref)
    for k in ref:
        assert repr(got[k]) == repr(ref[k]), k
        assert got[k].layout is not None and repr(got[k].layout) == repr(ref[k].layout)
        if ref[k].layout is not None and repr(ref[k].layout) == "torch.sparse_coo":
            assert got[k].is_coalesced() == ref[k].is_coalesced(), k


def _round(saver, loader, zip_format):
    buf = io.BytesIO()
    saver.save(_objs(saver), buf, _use_new_zipfile_serialization=zip_format)
    buf.seek(0)
    return loader.load(buf, weights_only=True)


@pytest.fixture
def torch():
    t = pytest.importorskip("torch")
    warnings.filterwarnings("ignore", message="Sparse (CSR|invariant)")
    return t


@pytest.mark.parametrize("zip_format", [True, False])
def test_ndgrad_round_trip(zip_format):
    got = _round(ndgrad, ndgrad, zip_format)
    _check(got, _objs(ndgrad))
    np.testing.assert_array_equal(got["csr"].to_dense().numpy(),
                                  _objs(ndgrad)["csr"].to_dense().numpy())


@pytest.mark.parametrize("zip_format", [True, False])
@pytest.mark.parametrize("direction", ["ndgrad->torch", "torch->ndgrad"])
def test_checkpoints_cross_libraries(torch, zip_format, direction):
    saver, loader = (ndgrad, torch) if direction == "ndgrad->torch" else (torch, ndgrad)
    _check(_round(saver, loader, zip_format), _objs(loader))


def test_state_dict_with_a_sparse_buffer_and_pickle(torch):
    m = ndgrad.nn.Module()
    m.register_buffer("adj", _objs(ndgrad)["csr"])
    buf = io.BytesIO()
    ndgrad.save(m.state_dict(), buf)
    buf.seek(0)
    sd = torch.load(buf, weights_only=True)
    assert sd["adj"].layout is torch.sparse_csr
    for obj in _objs(ndgrad).values():           # plain pickle keeps the structure too
        back = pickle.loads(pickle.dumps(obj))
        assert repr(back) == repr(obj)


@pytest.mark.parametrize("zip_format", [True, False])
def test_indices_outside_the_tensor_raise_on_load(torch, zip_format):
    bad = {
        "coo": torch.sparse_coo_tensor(torch.tensor([[0, 5]]), torch.ones(2), (3,),
                                       check_invariants=False),
        "csr": torch.sparse_csr_tensor(torch.tensor([0, 1, 2]), torch.tensor([0, 9]),
                                       torch.ones(2), (2, 2), check_invariants=False),
    }
    for name, t in bad.items():
        buf = io.BytesIO()
        torch.save(t, buf, _use_new_zipfile_serialization=zip_format)
        buf.seek(0)
        with pytest.raises(RuntimeError) as ref, torch.sparse.check_sparse_tensor_invariants():
            torch.load(buf, weights_only=True)      # (PyTorch checks only when asked to)
        buf.seek(0)
        with pytest.raises(RuntimeError) as got:
            ndgrad.load(buf, weights_only=True)
        assert str(got.value) in str(ref.value), (name, got.value, ref.value)


def test_block_sparse_checkpoints_are_refused_with_a_reason(torch):
    buf = io.BytesIO()
    torch.save(torch.ones(4, 4).to_sparse_bsr((2, 2)), buf)
    buf.seek(0)
    with pytest.raises(RuntimeError, match="no layout 'torch.sparse_bsr'"):
        ndgrad.load(buf, weights_only=True)
