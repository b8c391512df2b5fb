"""ndgrad.save / ndgrad.load: round trips, sharing, safety against malicious files, and the
archives of ndgrad's earlier format ("ndgrad-1"), which load still reads."""
import collections
import io
import os
import pickle
import zipfile

import numpy as np
import pytest

import ndgrad
from ndgrad import nn, optim
from ndgrad.serialization import add_safe_globals, clear_safe_globals, safe_globals


def _roundtrip(obj, **kw):
    buf = io.BytesIO()
    ndgrad.save(obj, buf)
    buf.seek(0)
    return ndgrad.load(buf, **kw)


def test_tensors_of_every_dtype_and_flags():
    for dt in [ndgrad.float32, ndgrad.float64, ndgrad.int64, ndgrad.int32, ndgrad.bool,
               ndgrad.uint8, ndgrad.float16, ndgrad.complex64]:
        t = ndgrad.arange(6).reshape(2, 3).to(dt)
        out = _roundtrip(t)
        assert out.dtype == dt and out.shape == (2, 3)
        assert np.array_equal(out.numpy(), t.numpy())
    w = ndgrad.randn(3, requires_grad=True)
    out = _roundtrip(w)
    assert out.requires_grad and out.is_leaf and out.grad is None
    nl = _roundtrip(w * 2)                       # a non-leaf comes back as a leaf
    assert nl.is_leaf
    z = _roundtrip(ndgrad.tensor(3.5))
    assert z.shape == () and z.item() == 3.5
    nc = ndgrad.arange(12.).reshape(3, 4).t()   # non-contiguous view
    assert np.array_equal(_roundtrip(nc).numpy(), nc.numpy())


def test_nested_containers_scalars_and_metadata():
    obj = {"a": [1, 2.5, "s", None, True, (3, b"x")], "b": collections.OrderedDict(k=1),
           "c": {1, 2}, "e": 1 + 2j, "dt": ndgrad.float16, "ba": bytearray(b"ab"),
           "dev": ndgrad.device("cpu"), "size": ndgrad.Size([2, 3]),
           "t": [ndgrad.ones(2), {"inner": ndgrad.zeros(1)}], 7: "int key", (1, "k"): 2}
    out = _roundtrip(obj)
    assert out["a"] == obj["a"] and out["c"] == {1, 2} and out["ba"] == bytearray(b"ab")
    assert type(out["b"]) is collections.OrderedDict and out["e"] == 1 + 2j
    assert out["dt"] is ndgrad.float16 and out["dev"] == ndgrad.device("cpu")
    assert isinstance(out["size"], ndgrad.Size) and out["size"] == (2, 3)
    assert out["t"][1]["inner"].shape == (1,)
    assert out[7] == "int key" and out[(1, "k")] == 2
    # what PyTorch's weights_only unpickler refuses, ndgrad's refuses (frozenset, ndarray)
    for other in (frozenset([3]), np.arange(4)):
        with pytest.raises(pickle.UnpicklingError, match="was not an allowed global by default"):
            _roundtrip({"x": other})
        back = _roundtrip({"x": other}, weights_only=False)["x"]
        assert type(back) is type(other) and np.array_equal(np.asarray(list(back) if isinstance(
            back, frozenset) else back), np.asarray(list(other) if isinstance(
                other, frozenset) else other))


def test_shared_tensors_stay_shared():
    w = ndgrad.randn(4, 4)
    out = _roundtrip({"enc": w, "dec": w, "other": w.clone()})
    assert out["enc"] is out["dec"] and out["other"] is not out["enc"]
    buf = io.BytesIO()
    ndgrad.save({"enc": w, "dec": w}, buf)
    arrays = [n for n in zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist()
              if "/data/" in n]
    assert len(arrays) == 1                    # stored once


def test_path_and_file_object(tmp_path):
    t = ndgrad.arange(5.)
    p = tmp_path / "t.pt"
    ndgrad.save(t, p)
    assert np.array_equal(ndgrad.load(p).numpy(), t.numpy())
    ndgrad.save({"x": t}, str(p))
    with open(p, "rb") as fh:
        assert np.array_equal(ndgrad.load(fh)["x"].numpy(), t.numpy())
    assert np.array_equal(ndgrad.load(p, map_location="cpu")["x"].numpy(), t.numpy())
    assert ndgrad.load(p, map_location=lambda s, loc: s)["x"].shape == (5,)


def test_model_and_optimizer_state_dicts_round_trip(tmp_path):
    ndgrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    opt = optim.Adam(model.parameters(), lr=0.01)
    x = ndgrad.randn(5, 3)
    model(x).sum().backward()
    opt.step()
    path = tmp_path / "ckpt.pt"
    ndgrad.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 3}, path)
    ck = ndgrad.load(path)                      # weights_only=True by default
    assert isinstance(ck["model"], collections.OrderedDict) and ck["epoch"] == 3
    model2 = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    model2.load_state_dict(ck["model"])
    opt2 = optim.Adam(model2.parameters(), lr=0.5)
    opt2.load_state_dict(ck["opt"])
    assert opt2.param_groups[0]["lr"] == 0.01
    assert np.allclose(model2(x).detach().numpy(), model(x).detach().numpy())
    for m in (model, model2):
        opt_ = opt if m is model else opt2
        opt_.zero_grad()
        m(x).sum().backward()
        opt_.step()
    for a, b in zip(model.parameters(), model2.parameters()):
        assert np.array_equal(a.detach().numpy(), b.detach().numpy())


def test_parameters_and_whole_modules():
    p = nn.Parameter(ndgrad.ones(2))
    out = _roundtrip({"p": p})
    assert type(out["p"]) is nn.Parameter and out["p"].requires_grad
    frozen = _roundtrip(nn.Parameter(ndgrad.ones(2), requires_grad=False))
    assert type(frozen) is nn.Parameter and not frozen.requires_grad
    # a whole module pickles its class by name: refused by default, allowed with weights_only=False
    model = nn.Linear(2, 3)
    buf = io.BytesIO()
    ndgrad.save(model, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        ndgrad.load(buf)
    buf.seek(0)
    m2 = ndgrad.load(buf, weights_only=False)
    assert isinstance(m2, nn.Linear) and np.array_equal(m2.weight.detach().numpy(),
                                                         model.weight.detach().numpy())


class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


class _EvilEval:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (eval, (f"open({self.marker!r}, 'w').close()",))


@pytest.mark.parametrize("evil", [_Evil, _EvilEval])
@pytest.mark.parametrize("container", ["raw", "zip"])
def test_malicious_file_is_refused_and_nothing_runs(tmp_path, evil, container):
    marker = tmp_path / "pwned"
    payload = pickle.dumps({"weights": [1.0], "x": evil(str(marker))}, protocol=2)
    path = tmp_path / "evil.pt"
    if container == "raw":
        path.write_bytes(payload)
    else:   # a well-formed ndgrad archive with a poisoned data.pkl
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("archive/version", "ndgrad-1")
            zf.writestr("archive/data.pkl", payload)
    with pytest.raises(pickle.UnpicklingError) as info:
        ndgrad.load(path)
    msg = str(info.value)
    assert msg.startswith("Weights only load failed")
    if evil is _Evil:     # os.system pickles as posix.system (nt.system): a blocked module
        assert f"whose module {os.system.__module__} is blocked" in msg
    else:
        assert "GLOBAL eval was not an allowed global by default" in msg
    assert "weights_only" in msg and "corrupted" not in msg
    assert not marker.exists()
    # the same file would indeed run code if loaded unsafely: the test is not vacuous
    if evil is _EvilEval:
        if container == "raw":     # as PyTorch: the first pickle runs, is no magic number
            with pytest.raises(RuntimeError, match="Invalid magic number; corrupt file"):
                ndgrad.load(path, weights_only=False)
        else:
            ndgrad.load(path, weights_only=False)
        assert marker.exists()


def test_malformed_persistent_ids_are_refused(tmp_path):
    class P(pickle.Pickler):
        def persistent_id(self, obj):
            return ("tensor", "../../etc/passwd", "tensor", False, "float32") if obj == 1 else None
    buf = io.BytesIO()
    P(buf, 2).dump([1])
    for version in (None, "ndgrad-1"):
        path = tmp_path / "bad.pt"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("archive/data.pkl", buf.getvalue())
            if version:
                zf.writestr("archive/version", version)
        with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
            ndgrad.load(path)
    # an ndgrad-1 array record that itself holds pickled objects is refused
    ref = pickle.dumps(("tensor", "0", "tensor", False, "float32", None, 0), protocol=2)[2:-1]
    obj_arr = io.BytesIO()
    np.save(obj_arr, np.array([_EvilEval("x")], dtype=object), allow_pickle=True)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("archive/version", "ndgrad-1")
        zf.writestr("archive/data.pkl", b"\x80\x02" + ref + pickle.BINPERSID + pickle.STOP)
        zf.writestr("archive/data/0.npy", obj_arr.getvalue())
    out.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        ndgrad.load(out)


class Config:
    def __init__(self, depth):
        self.depth = depth


def test_add_safe_globals():
    buf = io.BytesIO()
    ndgrad.save({"cfg": Config(3)}, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="test_serialization.Config"):
        ndgrad.load(buf)
    buf.seek(0)
    with safe_globals([Config]):
        assert ndgrad.load(buf)["cfg"].depth == 3
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError):
        ndgrad.load(buf)
    add_safe_globals([Config])
    try:
        buf.seek(0)
        assert ndgrad.load(buf)["cfg"].depth == 3
    finally:
        clear_safe_globals()


def test_build_on_a_tensor_is_refused(tmp_path):
    # a hand-made pickle: a tensor reference, then BUILD to overwrite the tensor's attributes
    ref = pickle.dumps(("tensor", "0", "tensor", False, "float32", None, 1), protocol=2)[2:-1]
    state = pickle.dumps({"_requires_grad": True, "_hooks": {0: 1}}, protocol=2)[2:-1]
    payload = b"\x80\x02" + ref + pickle.BINPERSID + state + pickle.BUILD + pickle.STOP
    arr = io.BytesIO()
    np.save(arr, np.ones(2, np.float32))
    path = tmp_path / "build.pt"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("archive/version", "ndgrad-1")
        zf.writestr("archive/data.pkl", payload)
        zf.writestr("archive/data/0.npy", arr.getvalue())
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed") as info:
        ndgrad.load(path)
    assert "Can only build Tensor, Parameter, OrderedDict" in str(info.value)
    t = ndgrad.load(path, weights_only=False)     # the unsafe path does apply it
    assert t._hooks == {0: 1}


def test_tensors_sharing_memory_stay_shared():
    x = ndgrad.arange(12.).reshape(3, 4)
    det = x.detach()                         # another tensor over the same memory
    obj = {"x": x, "row": x[1], "col": x[:, 2], "t": x.t(), "det": det,
           "alone": ndgrad.arange(100.)[10:12]}
    out = _roundtrip(obj)
    for k in ("row", "col", "t", "det"):
        assert np.array_equal(out[k].numpy(), obj[k].numpy()), k
    assert out["alone"].shape == (2,) and out["alone"].tolist() == [10.0, 11.0]
    out["x"]._data[1, 2] = -1.0                 # a write through one shows in the others
    assert float(out["row"][2]) == -1.0 and float(out["col"][1]) == -1.0
    assert float(out["t"][2, 1]) == -1.0 and float(out["det"][1, 2]) == -1.0
    assert out["det"] is not out["x"]
    buf = io.BytesIO()
    ndgrad.save(obj, buf)
    names = zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist()
    assert len([n for n in names if "/data/" in n]) == 2    # x's memory once, alone once
    # a view that only one tensor uses is saved compactly, not its whole owner
    big = ndgrad.zeros(10000)
    buf = io.BytesIO()
    ndgrad.save(big[:3], buf)
    assert len(buf.getvalue()) < 2000


def _persid_file(tmp_path, view):
    """A crafted archive: one float64 storage of 4 elements and a tensor viewing it."""
    arr = io.BytesIO()
    np.save(arr, np.arange(4.0))
    ref = pickle.dumps(("tensor", "0", "tensor", False, "float64", view, 0), protocol=2)[2:-1]
    path = tmp_path / "view.pt"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("archive/version", "ndgrad-1")
        zf.writestr("archive/data.pkl", b"\x80\x02" + ref + pickle.BINPERSID + pickle.STOP)
        zf.writestr("archive/data/0.npy", arr.getvalue())
    return path


@pytest.mark.parametrize("view", [(0, (5,), (8,)), (-8, (2,), (8,)), (8, (3,), (-8,)),
                                  (0, (2, 2), (8, 24)), (3, (1,), (8,)), (0, (2,), "x"),
                                  (0, (-1,), (8,)), (40, (0,), (8,))])
def test_out_of_bounds_views_are_refused(tmp_path, view):
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        ndgrad.load(_persid_file(tmp_path, view))


def test_in_bounds_crafted_view_loads(tmp_path):
    t = ndgrad.load(_persid_file(tmp_path, (8, (3,), (8,))))
    assert t.tolist() == [1.0, 2.0, 3.0]
    t = ndgrad.load(_persid_file(tmp_path, (24, (2, 2), (-8, -16))))
    assert t.tolist() == [[3.0, 1.0], [2.0, 0.0]]


# A checkpoint written by ndgrad's earlier save ("ndgrad-1": .npy records, tagged persistent ids),
# zlib-compressed and base64-encoded: nn.Linear(2, 3)'s state_dict after manual_seed(0), a
# Parameter, a tensor with two views of it, float16/bool tensors, metadata, an ndarray.
NDGRAD_V1 = (
    "eNq9ll9IFEEcx2dv9+60jML0oejhIuqU/HenHlF2CoVRQ3YKIRESe7dz7ua6u+yu/xUOUzNYKHICX4KefPFJgh4Skt56"
    "z5foTSgqIoKs8Klm9vbKXfak0hwdbnd+3+/MfObvpiDLVQCaLkm3eioi79dLyDPN+0nm9YwoDaL6QaQbkqooQq/OC7Wx"
    "lMu0eHNt6S0DAM0HNpkE3uTrtD45xz14zdhqMIGrrGC/KiAZW3szqiyjjEnqNcjbFV1AOhLOSxkTz+HqLqIMDSGpVzTp"
    "k4kUQ9WxxTRgMXzHCmdllTcb47gDAhN3Wlxa4g1cJYYtJkYFYmkHZEhgwGK0fHEcW6Uar/P9yEQ6nqWCAHUyw/l4Y94G"
    "AQxAdgbDMsjN4NsYslTE6uoQlYkH86IyyE5jyE1TAWfXYm4OA8jCAKmDg2V2HUG7iyIvZ/NtNW1iiCUIQ8gWZGW+Ny9o"
    "tgVcWlVlEg3bUdJxHvfQ8RPMEQ1hKygpdARmaNCQRhGGDG2VvocENChliIbNaAO05C6uotF755g0tkrSA5JsSnTUwxm1"
    "X5PRMBnxC62f83P062EGd2FkBRSN6BSB13V+hExAwm4hoApY5MgsWUwfadgYqKNrojZvBEfBaq7zxQ8nlYMK15qob6hT"
    "tBGGrJV5R1/4neu4ejl1jQGDYCwqICOjR09Hoi3ZpmhNJJpVdVPnlRsqXSekvJ2XDUTKDZHXEHmvaqyJxKtrIhORf057"
    "Rrvbk4mlhWd6/YmVY6X1K99W15IbSmWrm63y45exomyxApvl6K2dYdseGWF7KR9OXq9ZSK4/Hj/r5hlP3j9SlCde4Jl1"
    "9LM7wRPfPg8AuVaa3Swbb7pxUZbG/7LuEjvBQhPlAW3kn+QcyY/a3GwfFvctF2VrKrBNOfqprdniuzZPLaDFzfHp0HJP"
    "UY7mAseko5/cimM8HdstDga4KV49efquKEXi73aNdOqPKLbLQChYpx8pyAQq2OIXfyHl7Ivb8xngNXs/AH6bm30+B6i7"
    "lnVfFfPOZix3uS8GgM/F4fXT49hyDlq3/zgLfA5nr58ef7POFLn9X73+uJ+fHjn+/X/OAZ8DyOun23rK2bBu/8Mg8Nnk"
    "Xj/dTpPORnH7UQj4bC6vny5kf/6TYeCzrFMwGKLxUvJ3hszQ9zB9+wmrT467")


def test_reads_checkpoints_of_ndgrad_before_the_pytorch_format():
    import base64
    import zlib
    raw = zlib.decompress(base64.b64decode(NDGRAD_V1))
    assert zipfile.ZipFile(io.BytesIO(raw)).read("archive/version") == b"ndgrad-1"
    ck = ndgrad.load(io.BytesIO(raw))
    model = nn.Linear(2, 3)
    model.load_state_dict(ck["model"])
    assert np.allclose(model.weight.detach().numpy(), [[0.19369307, -0.32557076],
                                                       [-0.64916146, -0.68373317],
                                                       [0.44303101, 0.58372456]])
    assert np.allclose(model.bias.detach().numpy(), [0.15080576, 0.32455716, 0.06169505])
    assert type(ck["p"]) is nn.Parameter and ck["p"].requires_grad
    assert ck["x"].tolist() == [[0., 1., 2.], [3., 4., 5.]]
    assert ck["row"].tolist() == [3., 4., 5.] and ck["t"].tolist() == [[0., 3.], [1., 4.],
                                                                        [2., 5.]]
    ck["x"]._data[1, 0] = -1.0                        # the views still share memory
    assert ck["row"][0].item() == -1.0 and ck["t"][0, 1].item() == -1.0
    assert ck["half"].dtype == ndgrad.float16 and ck["flag"].tolist() == [True, False]
    assert ck["meta"] == [ndgrad.int32, ndgrad.Size([1, 2]), ndgrad.device("cpu"), {1, 2}, b"b",
                          1 + 1j]
    assert isinstance(ck["np"], np.ndarray) and ck["np"] == 3
    assert type(ck["od"]) is collections.OrderedDict
    # and saving it again writes PyTorch's format
    buf = io.BytesIO()
    ndgrad.save(ck, buf)
    assert zipfile.ZipFile(buf).read("archive/version") == b"3\n"
