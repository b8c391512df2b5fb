"""torch.return_types: one implementation (ndgrad/return_types.py) for every op family; the
named tuples print as PyTorch's, unpack, and pickle."""
import copy
import io
import pickle

import pytest

import ndgrad
from ndgrad import return_types

X = [[1.0, 3.0, 2.0], [3.0, 2.0, 5.0]]


def _cases(lib):
    x = lib.tensor(X)
    return {
        "max": lib.max(x, 1),
        "min": lib.min(x, dim=0),
        "sort": lib.sort(x),
        "topk": lib.topk(x, 2),
        "kthvalue": lib.kthvalue(x, 2),
        "linalg_slogdet": lib.linalg.slogdet(lib.tensor([[2.0, 1.0], [1.0, 3.0]])),
    }


@pytest.mark.parametrize("name", list(_cases(ndgrad)))
def test_repr_and_fields_match_pytorch(name):
    torch = pytest.importorskip("torch")
    ours, theirs = _cases(ndgrad)[name], _cases(torch)[name]
    assert repr(ours) == repr(theirs)
    assert type(ours).__name__ == type(theirs).__name__ == name
    for field in ours._fields:
        assert repr(getattr(ours, field)) == repr(getattr(theirs, field))
    assert len(ours) == len(theirs)


def test_every_family_shares_the_one_class():
    from ndgrad.ops import indexing, reduction  # noqa: F401 (they register their types)
    cases = _cases(ndgrad)
    for name, value in cases.items():
        assert type(value) is getattr(return_types, name) is return_types.make(name)
    assert return_types.make("max") is return_types.max


@pytest.mark.parametrize("name", list(_cases(ndgrad)))
def test_pickle_and_copy_round_trip(name):
    value = _cases(ndgrad)[name]
    for again in (pickle.loads(pickle.dumps(value)), copy.deepcopy(value), copy.copy(value)):
        assert type(again) is type(value)
        assert repr(again) == repr(value)


def test_save_load_refused_by_weights_only_like_pytorch():
    value = ndgrad.max(ndgrad.tensor(X), 1)
    buf = io.BytesIO()
    ndgrad.save(value, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL ndgrad.return_types.max"):
        ndgrad.load(buf)
    buf.seek(0)
    assert repr(ndgrad.load(buf, weights_only=False)) == repr(value)
    buf.seek(0)
    with ndgrad.serialization.safe_globals([return_types.max]):
        assert repr(ndgrad.load(buf)) == repr(value)
