"""Checkpoints in PyTorch's format: interop with torch both ways, hostile and corrupt files,
mmap, atomic save. Tests that need torch skip without it."""
import collections
import io
import os
import pickle
import stat
import struct
import sys
import zipfile

import numpy as np
import pytest

import ndgrad
from ndgrad import nn, optim
from ndgrad import serialization as S

ALL_DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8",
              "bool", "complex64", "complex128"]


def _torch():
    return pytest.importorskip("torch")


def _bytes(obj, **kw):
    buf = io.BytesIO()
    ndgrad.save(obj, buf, **kw)
    return buf.getvalue()


def _sample(lib, dt):
    t = lib.arange(6).reshape(2, 3)
    return t.to(getattr(lib, dt)) if dt != "bool" else t % 2 == 0


# ---------------------------------------------------------------- the format itself

def test_archive_layout_is_pytorchs(tmp_path):
    x = ndgrad.arange(6.)
    path = tmp_path / "model.pt"
    ndgrad.save({"x": x, "y": x[2:]}, path)
    zf = zipfile.ZipFile(path)
    names = zf.namelist()
    assert names == ["model/data.pkl", "model/.format_version", "model/.storage_alignment",
                     "model/byteorder", "model/data/0", "model/version",
                     "model/.data/serialization_id"]
    assert zf.read("model/version") == b"3\n" and zf.read("model/byteorder") in (b"little",
                                                                                 b"big")
    assert zf.read("model/.storage_alignment") == b"64"
    assert len(zf.read("model/.data/serialization_id")) == 40
    raw = path.read_bytes()
    info = zf.getinfo("model/data/0")
    assert info.compress_type == zipfile.ZIP_STORED
    nlen, elen = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
    data_off = info.header_offset + 30 + nlen + elen
    assert data_off % 64 == 0                               # aligned, so mmap views are aligned
    # one storage for both tensors
    assert raw[data_off:data_off + 24] == np.arange(6, dtype=np.float32).tobytes()
    pkl = zf.read("model/data.pkl")
    assert pkl[:2] == b"\x80\x02"                            # protocol 2, as torch.save
    for name in (b"torch._utils\n_rebuild_tensor_v2", b"torch\nFloatStorage",
                 b"collections\nOrderedDict"):
        assert name in pkl
    assert ndgrad.load(io.BytesIO(_bytes(x)), weights_only=True).tolist() == x.tolist()
    buf = io.BytesIO()
    ndgrad.save(x, buf)
    assert zipfile.ZipFile(buf).namelist()[0] == "archive/data.pkl"
    buf = io.BytesIO()
    ndgrad.save(x, buf, _disable_byteorder_record=True)
    assert "archive/byteorder" not in zipfile.ZipFile(buf).namelist()
    assert ndgrad.load(io.BytesIO(buf.getvalue())).tolist() == x.tolist()


def test_pickle_protocol_argument():
    out = ndgrad.load(io.BytesIO(_bytes({"a": ndgrad.ones(2), "s": {1}}, pickle_protocol=4)))
    assert out["a"].tolist() == [1.0, 1.0] and out["s"] == {1}
    with pytest.raises(ValueError, match="pickle_protocol"):
        _bytes(1, pickle_protocol=1)


def test_legacy_format_round_trip_and_views():
    x = ndgrad.arange(12.).reshape(3, 4)
    data = _bytes({"x": x, "row": x[1], "i": ndgrad.tensor([1, 2]), "n": 3},
                  _use_new_zipfile_serialization=False)
    assert not data.startswith(b"PK")
    out = ndgrad.load(io.BytesIO(data))
    assert out["x"].tolist() == x.tolist() and out["row"].tolist() == [4., 5., 6., 7.]
    assert out["i"].dtype == ndgrad.int64 and out["n"] == 3
    out["x"]._data[1, 0] = -1
    assert out["row"][0].item() == -1.0


# ---------------------------------------------------------------- interop with torch

@pytest.mark.parametrize("legacy", [False, True])
def test_ndgrad_file_opens_in_torch_weights_only(tmp_path, legacy):
    torch = _torch()
    x = ndgrad.arange(12.).reshape(3, 4)
    obj = {f"t_{dt}": _sample(ndgrad, dt) for dt in ALL_DTYPES}
    obj.update(x=x, row=x[1], col=x[:, 2], tr=x.t(), scalar=ndgrad.tensor(2.5),
               empty=ndgrad.empty(0, 3), p=nn.Parameter(ndgrad.ones(2)),
               frozen=nn.Parameter(ndgrad.ones(1), requires_grad=False),
               leaf=ndgrad.ones(2, requires_grad=True),
               meta=[ndgrad.float16, ndgrad.Size([2, 3]), ndgrad.device("cpu"), b"by", 1 + 2j,
                     {1, 2}, (1, "a"), None, True, 2 ** 70],
               od=collections.OrderedDict(a=1))
    path = tmp_path / "n.pt"
    ndgrad.save(obj, path, _use_new_zipfile_serialization=not legacy)
    out = torch.load(path, weights_only=True)
    for dt in ALL_DTYPES:
        t = out[f"t_{dt}"]
        assert t.dtype == getattr(torch, dt)
        assert np.array_equal(t.numpy(), obj[f"t_{dt}"].numpy())
    for k in ("x", "row", "col", "tr", "scalar", "empty"):
        assert out[k].shape == tuple(obj[k].shape) and np.array_equal(out[k].numpy(),
                                                                      obj[k].numpy()), k
    assert type(out["p"]) is torch.nn.Parameter and out["p"].requires_grad
    assert type(out["frozen"]) is torch.nn.Parameter and not out["frozen"].requires_grad
    assert out["leaf"].requires_grad and out["leaf"].is_leaf
    assert out["meta"] == [torch.float16, torch.Size([2, 3]), torch.device("cpu"), b"by",
                           1 + 2j, {1, 2}, (1, "a"), None, True, 2 ** 70]
    assert type(out["od"]) is collections.OrderedDict
    out["x"][1, 2] = -1.0                          # views share one storage in torch too
    assert out["row"][2].item() == -1.0 and out["col"][1].item() == -1.0
    assert out["tr"][2, 1].item() == -1.0


@pytest.mark.parametrize("legacy", [False, True])
def test_torch_file_opens_in_ndgrad(tmp_path, legacy):
    torch = _torch()
    x = torch.arange(12.).reshape(3, 4)
    obj = {f"t_{dt}": _sample(torch, dt) for dt in ALL_DTYPES}
    obj.update(x=x, row=x[1], col=x[:, 2], tr=x.t(), scalar=torch.tensor(2.5),
               empty=torch.empty(0, 3), p=torch.nn.Parameter(torch.ones(2)),
               leaf=torch.ones(2, requires_grad=True), u16=torch.tensor([1, 2], dtype=torch.uint8),
               meta=[torch.float16, torch.Size([2, 3]), torch.device("cpu"), b"by", 1 + 2j,
                     {1, 2}, (1, "a"), None, True, bytearray(b"z")],
               nested={"a": [{"b": (torch.zeros(1),)}]})
    path = tmp_path / "t.pt"
    torch.save(obj, path, _use_new_zipfile_serialization=not legacy)
    out = ndgrad.load(path)                          # weights_only=True
    for dt in ALL_DTYPES:
        t = out[f"t_{dt}"]
        assert t.dtype == getattr(ndgrad, dt)
        assert np.array_equal(t.numpy(), obj[f"t_{dt}"].numpy())
    for k in ("x", "row", "col", "tr", "scalar", "empty"):
        assert tuple(out[k].shape) == tuple(obj[k].shape)
        assert np.array_equal(out[k].numpy(), obj[k].numpy()), k
    assert type(out["p"]) is nn.Parameter and out["p"].requires_grad
    assert out["leaf"].requires_grad and out["leaf"].is_leaf
    assert out["meta"] == [ndgrad.float16, ndgrad.Size([2, 3]), ndgrad.device("cpu"), b"by",
                           1 + 2j, {1, 2}, (1, "a"), None, True, bytearray(b"z")]
    assert out["nested"]["a"][0]["b"][0].tolist() == [0.0]
    out["x"]._data[1, 2] = -1.0                     # torch's views of one storage share memory
    assert out["row"][2].item() == -1.0 and out["col"][1].item() == -1.0
    assert out["tr"][2, 1].item() == -1.0


def test_torch_untyped_storage_dtypes_and_whole_objects(tmp_path):
    torch = _torch()
    path = tmp_path / "t.pt"
    torch.save({"u": torch.tensor([1, 70000], dtype=torch.int32)}, path)
    assert ndgrad.load(path)["u"].tolist() == [1, 70000]
    torch.save({"b": torch.ones(2, dtype=torch.bfloat16)}, path)
    b = ndgrad.load(path)["b"]
    assert b.dtype is ndgrad.bfloat16 and b.tolist() == [1.0, 1.0]
    torch.save({"e": torch.ones(2).to(torch.float8_e8m0fnu)}, path)
    with pytest.raises(RuntimeError, match="ndgrad has no dtype torch.float8_e8m0fnu"):
        ndgrad.load(path)
    torch.save(torch.nn.Linear(2, 2), path)          # a whole module: refused by default
    with pytest.raises(pickle.UnpicklingError, match="torch.nn.modules.linear.Linear was not an "
                                                     "allowed global by default"):
        ndgrad.load(path)


class SmallCNN:
    @staticmethod
    def build(lib):
        return lib.nn.Sequential(
            lib.nn.Conv2d(3, 4, 3, padding=1), lib.nn.BatchNorm2d(4), lib.nn.ReLU(),
            lib.nn.MaxPool2d(2), lib.nn.Flatten(), lib.nn.Linear(4 * 4 * 4, 5))


def _train_a_little(torch, model):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(0)
    for _ in range(2):                    # moves BatchNorm's running stats and num_batches_tracked
        x = torch.randn(6, 3, 8, 8, generator=g)
        opt.zero_grad()
        model(x).square().mean().backward()
        opt.step()


def test_pytorch_cnn_checkpoint_loads_into_ndgrad_model(tmp_path):
    torch = _torch()
    torch.manual_seed(0)
    tmodel = SmallCNN.build(torch)
    _train_a_little(torch, tmodel)
    tmodel.eval()
    path = tmp_path / "cnn.pt"
    torch.save(tmodel.state_dict(), path)
    state = ndgrad.load(path)
    assert state["1.num_batches_tracked"].dtype == ndgrad.int64
    assert state["1.num_batches_tracked"].item() == 2
    model = SmallCNN.build(ndgrad)
    model.load_state_dict(state)
    model.eval()
    x = np.random.default_rng(1).standard_normal((2, 3, 8, 8)).astype(np.float32)
    expect = tmodel(torch.from_numpy(x)).detach().numpy()
    got = model(ndgrad.tensor(x)).detach().numpy()
    np.testing.assert_allclose(got, expect, rtol=1e-5, atol=1e-5)


def test_ndgrad_cnn_checkpoint_loads_into_pytorch_model(tmp_path):
    torch = _torch()
    ndgrad.manual_seed(0)
    model = SmallCNN.build(ndgrad)
    _train_a_little(ndgrad, model)
    model.eval()
    path = tmp_path / "cnn.pt"
    ndgrad.save(model.state_dict(), path)
    tmodel = SmallCNN.build(torch)
    tmodel.load_state_dict(torch.load(path, weights_only=True))
    tmodel.eval()
    assert tmodel[1].num_batches_tracked.item() == 2
    x = np.random.default_rng(2).standard_normal((2, 3, 8, 8)).astype(np.float32)
    np.testing.assert_allclose(model(ndgrad.tensor(x)).detach().numpy(),
                               tmodel(torch.from_numpy(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-5)


def test_pytorch_adam_state_continues_identically_in_ndgrad(tmp_path):
    torch = _torch()
    torch.manual_seed(0)
    tmodel = torch.nn.Linear(3, 2).double()
    topt = torch.optim.Adam(tmodel.parameters(), lr=0.05, betas=(0.8, 0.9), weight_decay=0.01)
    xs = [np.random.default_rng(i).standard_normal((4, 3)) for i in range(6)]

    def tstep(x):
        topt.zero_grad()
        tmodel(torch.from_numpy(x)).square().sum().backward()
        topt.step()
    for x in xs[:3]:
        tstep(x)
    path = tmp_path / "ckpt.pt"
    torch.save({"model": tmodel.state_dict(), "opt": topt.state_dict(), "epoch": 3}, path)
    ck = ndgrad.load(path)
    assert ck["epoch"] == 3 and ck["opt"]["param_groups"][0]["betas"] == (0.8, 0.9)
    model = nn.Linear(3, 2).double()
    model.load_state_dict(ck["model"])
    opt = optim.Adam(model.parameters(), lr=1.0)
    opt.load_state_dict(ck["opt"])
    for x in xs[3:]:
        tstep(x)
        opt.zero_grad()
        model(ndgrad.tensor(x)).square().sum().backward()
        opt.step()
    for p, tp in zip(model.parameters(), tmodel.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1e-12,
                                   atol=1e-12)


# ---------------------------------------------------------------- hostile files

def _zip_with_pickle(payload, records=()):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.pkl", payload)
        zf.writestr("archive/version", "3\n")
        for name, data in records:
            zf.writestr(f"archive/{name}", data)
    return buf.getvalue()


class _System:
    def __reduce__(self):
        return (os.system, ("true",))


def _refused(data, match):
    with pytest.raises(pickle.UnpicklingError) as info:
        ndgrad.load(io.BytesIO(data))
    msg = str(info.value)
    assert msg.startswith("Weights only load failed") and match in msg, msg
    assert "corrupted" not in msg
    return msg


def test_os_system_is_refused_with_pytorchs_message():
    payload = pickle.dumps({"w": _System()}, protocol=2)
    mod = os.system.__module__
    expect = f"Trying to load unsupported GLOBAL {mod}.system whose module {mod} is blocked."
    msg = _refused(_zip_with_pickle(payload), expect)
    torch = pytest.importorskip("torch")
    with pytest.raises(pickle.UnpicklingError) as info:
        torch.load(io.BytesIO(_zip_with_pickle(payload)), weights_only=True)
    assert expect in str(info.value)
    assert msg.replace("ndgrad.load", "torch.load").split("\n\n")[1] == str(
        info.value).split("\n\n")[1]
    with S.safe_globals([os.system]):                # a blocked module stays blocked
        _refused(_zip_with_pickle(payload), "is blocked")


def _reduce_pickle(module, name, args_pickle):
    return (b"\x80\x02c" + module + b"\n" + name + b"\n" + args_pickle + pickle.REDUCE
            + pickle.STOP)


def test_amplification_tricks_are_refused():
    # frozenset(range(10**9)): range and frozenset are not admitted (as in PyTorch)
    rng = b"c__builtin__\nrange\n" + b"J\x00\xca\x9a;" + b"\x85R"
    _refused(_reduce_pickle(b"__builtin__", b"frozenset", rng + b"\x85"),
             "GLOBAL frozenset was not an allowed global by default")
    # bytearray(10**12): the global is admitted (as in PyTorch) but not with a size
    big = b"\x8a\x05\x00\x10\xa5\xd4\xe8\x85"
    _refused(_zip_with_pickle(_reduce_pickle(b"builtins", b"bytearray", big)),
             "not a size")
    # a tuple DAG as a dict key: its hash would cost 2**40
    dag = b"\x80\x02}" + b")q\x000"                  # (), memoized, popped
    for i in range(40):                                 # t[i+1] = (t[i], t[i])
        dag += b"h" + bytes([i]) + b"h" + bytes([i]) + b"\x86q" + bytes([i + 1]) + b"0"
    dag += b"h\x28K\x01s."                              # {t[40]: 1}
    _refused(_zip_with_pickle(dag), "Unsupported dict key")
    # ints that all hash alike (a hash flood) as dict keys
    flood = b"\x80\x02}(" + b"".join(
        b"\x8a\x09" + (k * (2 ** 61 - 1)).to_bytes(9, "little") + b"N" for k in range(1, 4))
    _refused(_zip_with_pickle(flood + b"u."), "Unsupported dict key")


def test_storage_claims_beyond_the_file_are_refused():
    def storage_pickle(numel, size=(2,), stride=(1,), offset=0):
        size_p = b"".join(b"J" + struct.pack("<i", s) for s in size) + b"\x85" * (len(size) == 1)
        size_p = size_p if len(size) == 1 else b"(" + size_p + b"t"
        stride_p = b"".join(b"J" + struct.pack("<i", s) for s in stride)
        stride_p = stride_p + b"\x85" if len(stride) == 1 else b"(" + stride_p + b"t"
        return (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(" + b"(X\x07\x00\x00\x00storage"
                b"ctorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpu"
                + b"J" + struct.pack("<i", numel) + b"tQ" + b"J" + struct.pack("<i", offset)
                + size_p + stride_p + b"\x89ccollections\nOrderedDict\n)RtR.")
    rec = [("data/0", np.ones(2, np.float32).tobytes())]
    good = ndgrad.load(io.BytesIO(_zip_with_pickle(storage_pickle(2), rec)))
    assert good.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="corrupted or truncated"):    # claims 10**9 elements
        ndgrad.load(io.BytesIO(_zip_with_pickle(storage_pickle(10 ** 9), rec)))
    for size, stride, offset in [((3,), (1,), 0), ((2,), (1,), 1), ((2, 2), (0, 2), 0),
                                 ((2,), (-1,), 0)]:
        _refused(_zip_with_pickle(storage_pickle(2, size, stride, offset), rec), "out of bounds")


def test_zip_bomb_record_is_refused():
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("archive/data.pkl", pickle.dumps([1], protocol=2))
        zf.writestr("archive/version", "3\n")
    data = bytearray(bomb.getvalue())
    # claim a 4 GiB uncompressed size for data.pkl in the central directory
    cd = data.index(b"PK\x01\x02")                       # data.pkl's central directory entry
    data[cd + 24:cd + 28] = struct.pack("<I", 0xFFFFFFF0)
    with pytest.raises(RuntimeError, match="corrupted or truncated") as info:
        ndgrad.load(io.BytesIO(bytes(data)))
    assert "weights_only" not in str(info.value)
    # a compressed but honest record loads
    assert ndgrad.load(io.BytesIO(bomb.getvalue())) == [1]


def test_hostile_build_and_containers():
    # APPEND onto a non-list, SETITEM into a non-dict, NEWOBJ of an unknown class
    _refused(_zip_with_pickle(b"\x80\x02ccollections\nOrderedDict\n)RK\x01a."),
             "Can only append to lists")
    _refused(_zip_with_pickle(b"\x80\x02]K\x01K\x02s."), "Can only SETITEM for dict")
    _refused(_zip_with_pickle(b"\x80\x02ctorch\nFloatStorage\n)\x81."),
             "Can only create new object for nn.Parameter")
    _refused(_zip_with_pickle(b"\x80\x02ctorch\nfloat32\n)R."),
             "Trying to call reduce for unrecognized function")


# ---------------------------------------------------------------- corrupt and truncated files

def _assert_corrupt(data):
    with pytest.raises((RuntimeError, EOFError, pickle.UnpicklingError)) as info:
        ndgrad.load(io.BytesIO(data))
    msg = str(info.value)
    assert "weights_only" not in msg and "Weights only" not in msg, msg
    assert ("corrupted" in msg or "corrupt file" in msg), msg
    return info


@pytest.mark.parametrize("legacy", [False, True])
def test_truncated_files_at_every_offset_are_reported_corrupt(legacy):
    obj = {"w": ndgrad.arange(40.).reshape(5, 8), "b": ndgrad.ones(3), "step": 7,
           "names": ["a", "b"]}
    data = _bytes(obj, _use_new_zipfile_serialization=not legacy)
    offsets = sorted(set(range(0, len(data), 7)) | {1, 2, 3, 4, len(data) - 1, len(data) - 22})
    for n in offsets:
        info = _assert_corrupt(data[:n])
        if not legacy and n >= 4:                       # PyTorch's message for a broken zip
            assert str(info.value).startswith("PytorchStreamReader failed reading zip archive: "
                                              "failed finding central directory")


def test_empty_junk_and_bit_flipped_files():
    info = _assert_corrupt(b"")
    assert info.type is EOFError                          # PyTorch's type for an empty file
    _assert_corrupt(b"hello world, not a checkpoint")
    data = _bytes({"w": ndgrad.arange(40.)})
    zf = zipfile.ZipFile(io.BytesIO(data))
    for name in ("archive/data/0", "archive/data.pkl"):
        info = zf.getinfo(name)
        flipped = bytearray(data)
        nlen, elen = struct.unpack("<HH", data[info.header_offset + 26:info.header_offset + 30])
        flipped[info.header_offset + 30 + nlen + elen + 5] ^= 0x10
        msg = str(_assert_corrupt(bytes(flipped)).value)
        assert "CRC-32" in msg


def test_torch_agrees_these_files_are_broken():
    torch = _torch()
    data = _bytes({"w": ndgrad.ones(4)})
    with pytest.raises(RuntimeError, match="failed finding central directory"):
        torch.load(io.BytesIO(data[:len(data) // 2]), weights_only=True)
    with pytest.raises(RuntimeError, match="failed finding central directory"):
        ndgrad.load(io.BytesIO(data[:len(data) // 2]))


# ---------------------------------------------------------------- mmap

def _backed_by_memmap(arr):
    while arr is not None:
        if isinstance(arr, np.memmap):
            return True
        arr = getattr(arr, "base", None)
    return False


def test_mmap_maps_tensor_data_from_the_file(tmp_path):
    path = tmp_path / "m.pt"
    x = ndgrad.arange(12.).reshape(3, 4)
    ndgrad.save({"x": x, "row": x[1], "tr": x.t(), "e": ndgrad.empty(0), "i": ndgrad.tensor(3)},
                path)
    out = ndgrad.load(path, mmap=True)
    assert _backed_by_memmap(out["x"]._data) and _backed_by_memmap(out["row"]._data)
    assert out["x"].tolist() == x.tolist() and out["tr"].tolist() == x.t().tolist()
    assert out["i"].item() == 3 and out["e"].shape == (0,)
    before = path.read_bytes()
    out["x"].add_(1)                                  # copy-on-write: the file is not changed
    assert out["row"].tolist() == [5., 6., 7., 8.]
    assert path.read_bytes() == before
    plain = ndgrad.load(path)
    assert not _backed_by_memmap(plain["x"]._data)
    with pytest.raises(ValueError, match="f must be a file path in order to use the mmap"):
        ndgrad.load(io.BytesIO(before), mmap=True)
    ndgrad.save(x, path, _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="mmap can only be used with files saved with"):
        ndgrad.load(path, mmap=True)


def test_mmap_of_a_torch_file(tmp_path):
    torch = _torch()
    path = tmp_path / "t.pt"
    torch.save({"w": torch.arange(5.)}, path)
    out = ndgrad.load(path, mmap=True)
    assert _backed_by_memmap(out["w"]._data) and out["w"].tolist() == [0., 1., 2., 3., 4.]


# ---------------------------------------------------------------- atomic save

class _Boom:
    def __reduce__(self):
        raise RuntimeError("boom while pickling")


def test_failed_save_leaves_the_old_file_intact(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    ndgrad.save({"w": ndgrad.ones(3)}, path)
    before = path.read_bytes()
    with pytest.raises(RuntimeError, match="boom while pickling"):
        ndgrad.save({"w": ndgrad.zeros(3), "x": _Boom()}, path)
    assert path.read_bytes() == before

    real = S._as_bytes
    calls = []

    def failing(arr):                 # fail while the records are being written
        calls.append(1)
        if len(calls) == 2:
            raise OSError("disk full")
        return real(arr)
    monkeypatch.setattr(S, "_as_bytes", failing)
    with pytest.raises(OSError, match="disk full"):
        ndgrad.save({"a": ndgrad.zeros(1000), "b": ndgrad.zeros(1000)}, path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["ckpt.pt"]          # no temporary file left
    assert ndgrad.load(path)["w"].tolist() == [1.0, 1.0, 1.0]


def test_save_keeps_mode_and_writes_through_symlinks(tmp_path):
    path = tmp_path / "ckpt.pt"
    ndgrad.save(ndgrad.ones(1), path)
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o666 & ~mask
    os.chmod(path, 0o640)
    ndgrad.save(ndgrad.ones(2), path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    link = tmp_path / "latest.pt"
    link.symlink_to(path)
    ndgrad.save(ndgrad.ones(3), link)
    assert link.is_symlink() and ndgrad.load(path).shape == (3,)


# ---------------------------------------------------------------- the allow-list API

class Cfg:
    def __init__(self, depth):
        self.depth = depth


def test_safe_globals_api():
    S.clear_safe_globals()
    data = _bytes({"cfg": Cfg(2)})
    _refused(data, "test_serialization_torch.Cfg was not an allowed global by default")
    with S.safe_globals([Cfg]):
        assert S.get_safe_globals() == [Cfg]
        assert ndgrad.load(io.BytesIO(data))["cfg"].depth == 2
    assert S.get_safe_globals() == []
    S.add_safe_globals([(Cfg, "test_serialization_torch.Cfg")])
    try:
        assert ndgrad.load(io.BytesIO(data))["cfg"].depth == 2
    finally:
        S.clear_safe_globals()
    assert ndgrad.serialization.get_safe_globals() == []


def test_torch_tensor_attributes_conj_and_neg_views():
    torch = _torch()
    t = torch.ones(2)
    t.note = "kept"
    c = torch.tensor([1 + 2j, 3 - 1j]).conj()            # saved with {"conj": True} metadata
    n = torch._neg_view(torch.tensor([1., 2.]))           # saved with {"neg": True} metadata
    buf = io.BytesIO()
    torch.save({"t": t, "c": c, "n": n}, buf)
    pkl = zipfile.ZipFile(io.BytesIO(buf.getvalue())).read("archive/data.pkl")
    assert b"_rebuild_from_type_v2" in pkl and b"conj" in pkl and b"neg" in pkl
    out = ndgrad.load(io.BytesIO(buf.getvalue()))
    assert out["t"].note == "kept" and out["t"].tolist() == [1.0, 1.0]
    assert out["c"].tolist() == [1 - 2j, 3 + 1j] and out["n"].tolist() == [-1.0, -2.0]


def test_big_endian_checkpoint_loads():
    data = _bytes({"w": ndgrad.arange(4.).double(), "i": ndgrad.tensor([1, 256])})
    zin = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name in zin.namelist():
            rec = zin.read(name)
            if name.endswith("byteorder"):
                rec = b"big" if sys.byteorder == "little" else b"little"
            elif "/data/" in name:
                rec = np.frombuffer(rec, np.int64 if name.endswith("1") else np.float64
                                    ).byteswap().tobytes()
            zf.writestr(name, rec)
    back = ndgrad.load(io.BytesIO(out.getvalue()))
    assert back["w"].tolist() == [0.0, 1.0, 2.0, 3.0] and back["i"].tolist() == [1, 256]
