"""torch.hub: hubconf entry points from a local directory or the GitHub cache, downloads into
PyTorch's cache layout with the hash check (file:// URLs: no network needed)."""
import hashlib
import os
import zipfile

import pytest

import ndgrad
from ndgrad import hub

HUBCONF = '''
"""A test hub."""
dependencies = ["numpy"]
import ndgrad


def tiny(width=3, pretrained=False):
    """A tiny linear model."""
    ndgrad.manual_seed(0)
    return ndgrad.nn.Linear(2, width)


def answer(x=1):
    return 41 + x


_private = lambda: None
NOT_CALLABLE = 3
'''


@pytest.fixture
def repo(tmp_path):
    d = tmp_path / "repo"
    d.mkdir()
    (d / "hubconf.py").write_text(HUBCONF)
    return str(d)


@pytest.fixture
def hub_dir(tmp_path):
    old = hub._hub_dir
    hub.set_dir(str(tmp_path / "hubcache"))
    yield hub.get_dir()
    hub._hub_dir = old


def test_local_load(repo, monkeypatch):
    assert hub.load(repo, "answer", source="local", x=2) == 43
    m = hub.load(repo, "tiny", 5, source="LOCAL")
    assert isinstance(m, ndgrad.nn.Linear) and m.out_features == 5
    with pytest.raises(RuntimeError, match="Cannot find callable NOT_CALLABLE in hubconf"):
        hub.load(repo, "NOT_CALLABLE", source="local")
    with pytest.raises(ValueError, match="model should be a string"):
        hub.load(repo, 3, source="local")
    with pytest.raises(ValueError, match='Unknown source: "ftp"'):
        hub.load(repo, "answer", source="ftp")
    with open(os.path.join(repo, "hubconf.py"), "a") as f:
        f.write("\ndependencies = ['numpy', 'no_such_package_xyz']\n")
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_package_xyz"):
        hub.load(repo, "answer", source="local")


def test_dir_and_env(monkeypatch, tmp_path):
    old = hub._hub_dir
    try:
        hub._hub_dir = None
        monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
        assert hub.get_dir() == str(tmp_path / "th" / "hub")
        monkeypatch.delenv("TORCH_HOME")
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        assert hub.get_dir() == str(tmp_path / "xdg" / "torch" / "hub")
        torch = pytest.importorskip("torch")
        assert hub.get_dir() == torch.hub.get_dir()
        hub.set_dir("~/somewhere")
        assert hub.get_dir() == os.path.expanduser("~/somewhere")
    finally:
        hub._hub_dir = old


def test_github_cache(repo, hub_dir, capsys):
    # a cached repository (as a download leaves it): no network is asked for
    os.makedirs(hub_dir)
    os.rename(repo, os.path.join(hub_dir, "someone_models_v1"))
    assert hub.list("someone/models:v1", trust_repo=True) == ["answer", "tiny"]
    assert "Using cache found in" in capsys.readouterr().err
    assert hub.help("someone/models:v1", "tiny", trust_repo=True) == "A tiny linear model."
    assert hub.load("someone/models:v1", "answer", trust_repo=True) == 42
    with open(os.path.join(hub_dir, "trusted_list")) as f:   # (a cached repository counts
        assert f.read().split() == []                         # as trusted, as in PyTorch)
    with pytest.raises(Exception, match="Untrusted repository"):
        import builtins
        orig = builtins.input
        builtins.input = lambda prompt: "n"
        try:
            hub.load("stranger/models:v1", "answer", trust_repo=False)
        finally:
            builtins.input = orig


def _file_url(path):
    return "file://" + os.path.abspath(path)


def test_download_and_state_dict_cache(tmp_path, hub_dir, capsys):
    src = tmp_path / "src"
    src.mkdir()
    sd = ndgrad.nn.Linear(3, 2).state_dict()
    plain = src / "weights.pth"
    ndgrad.save(sd, str(plain))
    digest = hashlib.sha256(plain.read_bytes()).hexdigest()
    hashed = src / f"weights-{digest[:10]}.pth"
    hashed.write_bytes(plain.read_bytes())
    wrong = src / "weights-deadbeef.pth"
    wrong.write_bytes(plain.read_bytes())

    dst = tmp_path / "copy.bin"
    hub.download_url_to_file(_file_url(plain), str(dst), hash_prefix=digest[:8], progress=False)
    assert dst.read_bytes() == plain.read_bytes()
    with pytest.raises(RuntimeError, match='invalid hash value \\(expected "0000"'):
        hub.download_url_to_file(_file_url(plain), str(tmp_path / "x"), hash_prefix="0000",
                                 progress=False)
    assert not os.path.exists(tmp_path / "x")
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".partial")]

    loaded = hub.load_state_dict_from_url(_file_url(hashed), check_hash=True, progress=False)
    assert set(loaded) == {"weight", "bias"} and ndgrad.equal(loaded["weight"], sd["weight"])
    cached = os.path.join(hub_dir, "checkpoints", hashed.name)
    assert os.path.exists(cached)
    assert f'Downloading: "{_file_url(hashed)}" to {cached}' in capsys.readouterr().out
    hashed.unlink()   # the second call reads the cache
    again = hub.load_state_dict_from_url(_file_url(hashed), check_hash=True)
    assert ndgrad.equal(again["bias"], sd["bias"])
    with pytest.raises(RuntimeError, match="invalid hash value"):
        hub.load_state_dict_from_url(_file_url(wrong), check_hash=True, progress=False)
    named = hub.load_state_dict_from_url(_file_url(plain), file_name="mine.pt",
                                         model_dir=str(tmp_path / "md"), weights_only=True)
    assert os.path.exists(tmp_path / "md" / "mine.pt") and set(named) == {"weight", "bias"}


def test_pytorch_weights_and_legacy_zip(tmp_path, hub_dir):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    lin = torch.nn.Linear(4, 3)
    path = tmp_path / "torch_weights.pt"
    torch.save(lin.state_dict(), str(path))
    sd = hub.load_state_dict_from_url(_file_url(path), progress=False, weights_only=True)
    assert (sd["weight"].numpy() == lin.weight.detach().numpy()).all()
    # a zip holding one checkpoint file (PyTorch < 1.6's model zoo)
    inner = tmp_path / "inner.pt"
    ndgrad.save({"a": ndgrad.ones(2)}, str(inner))
    legacy = tmp_path / "legacy.zip"
    with zipfile.ZipFile(legacy, "w") as z:
        z.write(inner, "inner_legacy.pt")
    with pytest.warns(FutureWarning, match="Falling back to the old format"):
        out = hub.load_state_dict_from_url(_file_url(legacy), progress=False)
    assert out["a"].tolist() == [1.0, 1.0]


def test_safe_extract_refuses_traversal(tmp_path):
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("../escape.txt", "x")
    with zipfile.ZipFile(bad) as z, pytest.raises(ValueError, match="directory traversal"):
        hub._safe_extract_zip(z, tmp_path / "out")
