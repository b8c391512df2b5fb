"""`python -m ndgrad.run` and `ndgrad.alias_torch()`: unchanged PyTorch programs, `import torch`
and all, run on ndgrad. Each case runs in a fresh interpreter, since the alias changes the
process's import system."""
import os
import subprocess
import sys
import textwrap

import pytest

import ndgrad

SRC = os.path.dirname(os.path.dirname(os.path.abspath(ndgrad.__file__)))
PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _python(*args, cwd=None):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=_env(),
                          cwd=cwd, timeout=600)


def _script(tmp_path, src, name="prog.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(src))
    return path


def test_runner_resolves_torch_and_its_submodules_to_ndgrad(tmp_path):
    path = _script(tmp_path, """
        import sys
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        import torch.optim.lr_scheduler
        from torch.utils.data import DataLoader, TensorDataset
        from torch import optim
        import ndgrad
        assert torch is ndgrad and nn is ndgrad.nn and F is ndgrad.nn.functional
        assert torch.optim.lr_scheduler is ndgrad.optim.lr_scheduler and optim is ndgrad.optim
        assert DataLoader is ndgrad.utils.data.DataLoader
        assert sys.modules["torch.nn.functional"] is ndgrad.nn.functional
        # PyTorch's private module names that programs import keep working where ndgrad's
        # files moved into packages (_C/, serialization/, func/, random/)
        import torch._C, torch._weights_only_unpickler, torch.func, torch.random
        assert torch._weights_only_unpickler is ndgrad.serialization._weights_only_unpickler
        assert torch._C.Generator is torch.random.Generator is ndgrad.Generator
        assert torch.func.vmap is ndgrad.func.vmap and callable(torch.serialization.load)
        m = nn.Linear(2, 3)
        assert isinstance(m, ndgrad.nn.Module) and isinstance(m.weight, ndgrad.Tensor)
        assert isinstance(ndgrad.ones(1), torch.Tensor)
        print(__name__, sys.argv)
    """)
    r = _python("-m", "ndgrad.run", str(path), "--lr", "0.1", "x y")
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"__main__ [{str(path)!r}, '--lr', '0.1', 'x y']\n"


def test_runner_sys_path_is_the_scripts_folder(tmp_path):
    (tmp_path / "helper_mod.py").write_text("VALUE = 7\n")
    path = _script(tmp_path, """
        import sys, helper_mod, torch
        print(sys.path[0], helper_mod.VALUE, torch.__name__)
    """)
    r = _python("-m", "ndgrad.run", str(path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(tmp_path), "7", "torch"]


def test_runner_missing_torch_submodule_names_it(tmp_path):
    path = _script(tmp_path, """
        try:
            import torch.definitely_not_a_module
        except ModuleNotFoundError as e:
            print(str(e), e.name)
        try:
            from torch.utils import not_here_either
        except ImportError as e:
            print(type(e).__name__)
    """)
    r = _python("-m", "ndgrad.run", str(path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "No module named 'torch.definitely_not_a_module' torch.definitely_not_a_module",
        "ImportError"]


def test_runner_module_mode_and_command_mode(tmp_path):
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "train.py").write_text(textwrap.dedent("""
        import sys, torch
        if __name__ == "__main__":
            print("main", sys.argv[1:], torch.__name__, torch.ones(2).sum().item())
    """))
    r = _python("-m", "ndgrad.run", "-m", "mypkg.train", "--epochs", "3", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "main ['--epochs', '3'] torch 2.0\n"
    r = _python("-m", "ndgrad.run", "-c", "import sys, torch; print(torch.__name__, sys.argv)",
                "a")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "torch ['-c', 'a']\n"


def test_runner_exit_status_and_errors(tmp_path):
    path = _script(tmp_path, "import sys\nsys.exit(3)\n")
    assert _python("-m", "ndgrad.run", str(path)).returncode == 3
    path = _script(tmp_path, "raise ValueError('boom')\n", "bad.py")
    r = _python("-m", "ndgrad.run", str(path))
    assert r.returncode == 1 and "ValueError: boom" in r.stderr
    r = _python("-m", "ndgrad.run", str(tmp_path / "missing.py"))
    assert r.returncode == 2 and "can't open file" in r.stderr
    r = _python("-m", "ndgrad.run")
    assert r.returncode == 2 and "usage:" in r.stderr


def test_runner_pickles_classes_defined_in_the_script(tmp_path):
    # classes of the running script live in __main__, as under `python script.py`
    path = _script(tmp_path, """
        import pickle, torch
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(2, 1)
        net = pickle.loads(pickle.dumps(Net()))
        print(type(net).__module__, type(net).__name__)
    """)
    r = _python("-m", "ndgrad.run", str(path))
    assert r.returncode == 0, r.stderr
    assert r.stdout == "__main__ Net\n"


def test_alias_torch_in_process_code(tmp_path):
    r = _python("-c", textwrap.dedent("""
        import ndgrad
        ndgrad.alias_torch()
        ndgrad.alias_torch()      # twice is harmless
        import torch, torch.nn.functional as F
        from torch.utils.data import DataLoader
        import torch.optim.lr_scheduler as sched
        print(torch is ndgrad, F is ndgrad.nn.functional, sched is ndgrad.optim.lr_scheduler,
              DataLoader is ndgrad.utils.data.DataLoader)
    """))
    assert r.returncode == 0, r.stderr
    assert r.stdout == "True True True True\n"


def test_alias_torch_refuses_when_real_torch_is_imported():
    pytest.importorskip("torch")
    r = _python("-c", textwrap.dedent("""
        import torch, ndgrad
        try:
            ndgrad.alias_torch()
        except RuntimeError as e:
            print("refused", "already imported" in str(e))
        import sys
        print(sys.modules["torch"] is torch, torch.__name__)
    """))
    assert r.returncode == 0, r.stderr
    assert r.stdout == "refused True\nTrue torch\n"


def test_nothing_is_aliased_without_opt_in():
    torch = pytest.importorskip("torch")
    r = _python("-c", "import ndgrad, torch; print(torch.__name__, torch is ndgrad)")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "torch False\n"
    assert torch.__name__ == "torch"


RUN_UNDER_BOTH = ["train.py", "cnn.py", "data.py", "textcls.py"]


@pytest.mark.parametrize("name", RUN_UNDER_BOTH)
def test_real_programs_print_the_same_under_the_runner(name):
    # the file is run as a script twice: with real PyTorch, then unchanged under ndgrad.run
    pytest.importorskip("torch")
    path = os.path.join(PROGRAMS, name)
    assert "# stdout: differs" not in open(path, encoding="utf-8").read()
    ref = _python(path, cwd=PROGRAMS)
    assert ref.returncode == 0, ref.stderr
    got = _python("-m", "ndgrad.run", path, cwd=PROGRAMS)
    assert got.returncode == 0, got.stderr
    assert got.stdout == ref.stdout
    assert ref.stdout.strip()


def test_aliased_identity_is_torchs(tmp_path):
    # what libraries ask to decide that PyTorch is there: name, version, metadata, spec
    path = _script(tmp_path, """
        import importlib.metadata as md, importlib.util, sys
        import torch, torch.nn.functional as F, ndgrad
        print(torch.__name__, F.__name__, ndgrad.__name__)
        v = torch.__version__
        print(type(v).__name__, isinstance(v, str), v.startswith("2.13.0+ndgrad"),
              v >= (2, 1), v >= "2.0", v < "2.14", v > (2, 13), v < (2, 13, 1), v == "2.13.0")
        print(v == ndgrad.version.__version__, torch.version.cuda, torch.version.hip)
        print(md.version("torch") == v, md.distribution("torch").metadata["Name"],
              md.packages_distributions()["torch"][0], md.metadata("torch")["Version"] == v,
              [r for r in md.requires("torch") or [] if r.startswith("torch")],
              md.files("torch") is not None)
        print(importlib.util.find_spec("torch") is not None,
              importlib.util.find_spec("torch.nn.functional") is not None)
        try:
            torch.not_an_attribute
        except AttributeError as e:
            print(e)
    """)
    r = _python("-m", "ndgrad.run", str(path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "torch torch.nn.functional torch",
        "TorchVersion True True True True True True True False",
        "True None None",
        "True torch torch True [] True",
        "True True",
        "module 'torch' has no attribute 'not_an_attribute'"]


def test_unaliased_ndgrad_keeps_its_name_and_no_torch_distribution():
    r = _python("-c", textwrap.dedent("""
        import importlib.metadata as md, sys
        import ndgrad
        print(ndgrad.__name__, ndgrad.__version__, ndgrad.version.ndgrad_version)
        print(any(getattr(f, "find_distributions", None) and "ndgrad" in type(f).__module__
                  for f in sys.meta_path))
    """))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["ndgrad", "0.1.0", "0.1.0", "False"]


def test_version_matches_pyproject():
    root = os.path.dirname(SRC)
    text = open(os.path.join(root, "pyproject.toml"), encoding="utf-8").read()
    assert f'version = "{ndgrad.version.ndgrad_version}"' in text


VERSIONS = ["2.13.0", "2.13", "2.13.0+cpu", "2.13.0+ndgrad0.1.0", "2.13.0a0", "2.13.0rc1",
            "2.13.0.dev20250101", "2.13.0.post1", "2.13.1", "2.12.99", "1!0.1", "2.13.0b2.dev3",
            "2.13.0+ndgrad0.2", "2.13.0+abc.5", "2.13.0+5", "3", "2.13.0.0", "v2.13.0",
            "2.13.0-1", "2.13.0.post1.dev2", "2.13.0a1.post2"]


def test_version_order_is_packagings():
    torch = pytest.importorskip("torch")
    from torch._vendor.packaging.version import Version as Ref
    from ndgrad.torch_version import Version
    for a in VERSIONS:
        assert str(Version(a)) == str(Ref(a))
        for b in VERSIONS:
            for op in ("__lt__", "__le__", "__eq__", "__ge__", "__gt__"):
                assert getattr(Version(a), op)(Version(b)) == getattr(Ref(a), op)(Ref(b)), (a, op, b)


def test_torch_version_compares_as_pytorchs():
    torch = pytest.importorskip("torch")
    from torch.torch_version import TorchVersion as RefTV
    from ndgrad.torch_version import TorchVersion
    others = ["2.13", "2.13.0", "2.14", "1.0", (2, 13), (2, 13, 0), (2, 12, 9), [3], "parrot",
              "2.13.0+ndgrad0.1.0"]
    for s in ("2.13.0+ndgrad0.1.0", "2.13.0", "parrot"):
        for o in others:
            for op in ("__lt__", "__le__", "__eq__", "__ge__", "__gt__"):
                assert getattr(TorchVersion(s), op)(o) == getattr(RefTV(s), op)(o), (s, op, o)
    assert hash(TorchVersion("2.13.0")) == hash("2.13.0")


def test_torch_dist_metadata_satisfies_requirements(tmp_path):
    # `python -m ndgrad.torch_dist install`: a metadata-only torch that pip's resolver accepts
    r = _python("-m", "ndgrad.torch_dist", "install", "--target", str(tmp_path))
    assert r.returncode == 0, r.stderr
    import importlib.metadata as md
    (folder,) = [p for p in tmp_path.iterdir()]
    assert folder.name == f"torch-{ndgrad.version.__version__}.dist-info"
    dist = md.PathDistribution(folder)
    assert dist.metadata["Name"] == "torch" and dist.version == ndgrad.version.__version__
    assert sorted(str(f) for f in dist.files) == sorted(
        f"{folder.name}/{n}" for n in ("METADATA", "INSTALLER", "top_level.txt", "RECORD"))
    assert not (tmp_path / "torch").exists()            # no module: import torch needs the alias
    r = _python("-m", "ndgrad.torch_dist", "status", "--target", str(tmp_path))
    assert "ndgrad metadata" in r.stdout
    r = _python("-m", "ndgrad.torch_dist", "remove", "--target", str(tmp_path))
    assert r.returncode == 0 and list(tmp_path.iterdir()) == []
