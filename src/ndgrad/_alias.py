"""`import torch` runs ndgrad: a `sys.meta_path` finder that resolves `torch` to the module
`ndgrad` and `torch.<sub>` to `ndgrad.<sub>`, the same module objects, so `torch.nn.Module is
ndgrad.nn.Module` and isinstance checks hold across both spellings.

Aliased, ndgrad is torch to whoever asks, as libraries built on PyTorch ask:
- `torch.__name__ == "torch"` (and `torch.nn.__name__ == "torch.nn"`, ...), so messages such as
  "module 'torch' has no attribute 'xyz'" name torch. The modules are the same objects as
  ndgrad's, so `ndgrad.__name__` reads "torch" too once aliased: the alias is the request to be
  torch. Unaliased, `import ndgrad` keeps its own name. Each module's `__spec__`, `__package__`
  and `__file__` stay ndgrad's (where the code lives), so relative imports inside ndgrad keep
  resolving without the finder, and `importlib.util.find_spec("torch")` finds ndgrad's spec.
- `torch.__version__` is `torch.version.__version__`, a `TorchVersion` "2.13.0+ndgrad<ver>":
  the PyTorch API ndgrad follows, ndgrad's own version as the local label.
- `importlib.metadata` knows a distribution "torch" (`version("torch")`, `distribution("torch")`,
  `packages_distributions()["torch"]`), whose version is that one and whose files are ndgrad's.

    import ndgrad
    ndgrad.alias_torch()          # explicit opt-in, for notebooks
    import torch.nn.functional as F    # ndgrad.nn.functional

`python -m ndgrad.run script.py` (see `ndgrad/run.py`) installs the same finder before it runs
the script. A PyTorch submodule ndgrad lacks raises ModuleNotFoundError naming the torch module
("No module named 'torch.xyz'"). The alias is never installed implicitly, and it refuses to
install once a real PyTorch is imported in the process: two libraries under one name would mix
their tensors.
"""
import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import os
import re
import sys

__all__ = ["alias_torch"]

_ALIAS, _TARGET = "torch", "ndgrad"


def _target_name(fullname):
    if fullname == _ALIAS:
        return _TARGET
    if fullname.startswith(_ALIAS + "."):
        return _TARGET + fullname[len(_ALIAS):]
    return None


class _ExistingModuleLoader(importlib.abc.Loader):
    """Hands the import system a module that is already loaded (ndgrad's), named as torch's.
    The import system set `__spec__` to the torch-named spec: the module's own comes back, so
    its `__package__` and `__spec__.parent` agree (relative imports inside ndgrad stay quiet)."""

    def __init__(self, module):
        self.module = module
        self.spec = module.__spec__

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        if self.spec is not None:
            module.__spec__ = self.spec
        _rename(module)


def _rename(module):
    """Name an ndgrad module as its torch spelling (`ndgrad.nn` -> `torch.nn`); the name it
    had is kept in `__ndgrad_name__` for unaliasing."""
    name = module.__dict__.get("__ndgrad_name__", module.__name__)
    alias = _alias_name(name)
    if alias is not None:
        module.__ndgrad_name__ = name
        module.__name__ = alias


def _alias_name(name):
    if name == _TARGET:
        return _ALIAS
    if name.startswith(_TARGET + "."):
        return _ALIAS + name[len(_TARGET):]
    return None


class _TorchAliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        name = _target_name(fullname)
        if name is None:
            return None
        module = sys.modules.get(name)
        if module is None:
            try:
                module = importlib.import_module(name)
            except ModuleNotFoundError as exc:
                if exc.name is not None and exc.name != name and not name.startswith(
                        exc.name + "."):
                    raise       # a dependency of an ndgrad module is missing: not ours to rename
                raise ModuleNotFoundError(f"No module named {fullname!r}",
                                          name=fullname) from None
        spec = importlib.machinery.ModuleSpec(fullname, _ExistingModuleLoader(module),
                                              is_package=hasattr(module, "__path__"))
        return spec

    def find_distributions(self, context=importlib.metadata.DistributionFinder.Context()):
        """importlib.metadata's hook: the distribution "torch" is ndgrad's, named torch."""
        if context.name is None or _normalize(context.name) == _ALIAS:
            dist = _torch_distribution()
            if dist is not None:
                yield dist


_finder = _TorchAliasFinder()


def _normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


class _TorchDistribution(importlib.metadata.Distribution):
    """ndgrad's installed distribution (or, run from a source tree, its package folder) as the
    distribution "torch": METADATA names torch at version `torch.version.__version__` and keeps
    ndgrad's other fields (Summary, Requires-Dist: numpy, ...); `files` and `locate_file` are
    ndgrad's; top_level.txt says `torch`, so `packages_distributions()["torch"] == ["torch"]`."""

    def __init__(self, base, root):
        self._base = base          # ndgrad's own Distribution, or None (a source tree)
        self._root = root          # the folder that holds the ndgrad package

    def read_text(self, filename):
        if filename == "METADATA" or filename == "PKG-INFO":
            return self._metadata_text()
        if filename == "top_level.txt":
            return _ALIAS + "\n"
        if filename == "RECORD":
            if self._base is not None and self._base.read_text("RECORD") is not None:
                return self._base.read_text("RECORD")
            return self._record_of_tree()
        if filename == "INSTALLER":
            return "ndgrad\n"
        if self._base is not None:
            return self._base.read_text(filename)
        return None

    def locate_file(self, path):
        if self._base is not None:
            return self._base.locate_file(path)
        import pathlib
        return pathlib.Path(self._root) / path

    def _metadata_text(self):
        from .version import __version__
        base = self._base.read_text("METADATA") if self._base is not None else None
        lines = ["Metadata-Version: 2.1", "Name: torch", f"Version: {__version__}"]
        if base:
            head, _, body = base.partition("\n\n")
            lines += [ln for ln in head.splitlines()
                      if not ln.startswith(("Metadata-Version:", "Name:", "Version:"))
                      and not re.match(r"Requires-Dist:\s*torch\b", ln)]
            text = "\n".join(lines) + "\n\n" + body
        else:
            lines += ["Summary: ndgrad: define-by-run automatic differentiation on NumPy, "
                      "with PyTorch's API", "Requires-Dist: numpy>=1.24"]
            text = "\n".join(lines) + "\n"
        return text

    def _record_of_tree(self):
        package = os.path.join(self._root, _TARGET)
        rows = []
        for folder, dirs, names in os.walk(package):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for n in sorted(names):
                rel = os.path.relpath(os.path.join(folder, n), self._root)
                rows.append(rel.replace(os.sep, "/") + ",,")
        return "\n".join(rows) + "\n"


_dist_cache = []


def _torch_distribution():
    if not _dist_cache:
        root = os.path.dirname(os.path.dirname(os.path.abspath(
            sys.modules[_TARGET].__file__)))
        base = None
        try:
            base = importlib.metadata.distribution(_TARGET)
        except importlib.metadata.PackageNotFoundError:
            pass
        _dist_cache.append(_TorchDistribution(base, root))
    return _dist_cache[0]


def _real_torch_loaded():
    mod = sys.modules.get(_ALIAS)
    return mod is not None and mod is not sys.modules.get(_TARGET)


def alias_torch():
    """Make `import torch` (and every `import torch.<sub>`) load ndgrad from now on.

    An explicit opt-in: it aliases even where a real PyTorch is installed, since calling it is
    the request. Raises RuntimeError when a real PyTorch is already imported in this process.
    Calling it twice is harmless."""
    if _real_torch_loaded():
        raise RuntimeError(
            "ndgrad.alias_torch(): a real PyTorch is already imported in this process "
            f"(sys.modules['torch'] is {sys.modules[_ALIAS]!r}); call alias_torch() before "
            "anything imports torch, or run the program with `python -m ndgrad.run`")
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
    top = importlib.import_module(_TARGET)
    # submodules ndgrad has loaded already resolve at once, without the finder
    for name, module in list(sys.modules.items()):
        if name == _TARGET or name.startswith(_TARGET + "."):
            sys.modules.setdefault(_ALIAS + name[len(_TARGET):], module)
            _rename(module)
    from .version import __version__
    if "__ndgrad_version__" not in top.__dict__:
        top.__ndgrad_version__ = top.__version__
    top.__version__ = __version__


def _unalias_torch():
    """Undo alias_torch() (for tests): remove the finder and the `torch*` entries it made."""
    while _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    for name in [n for n in sys.modules if n == _ALIAS or n.startswith(_ALIAS + ".")]:
        module = sys.modules[name]
        if "__ndgrad_name__" in getattr(module, "__dict__", {}):
            del sys.modules[name]
    for name, module in list(sys.modules.items()):
        if name == _TARGET or name.startswith(_TARGET + "."):
            original = module.__dict__.pop("__ndgrad_name__", None)
            if original is not None:
                module.__name__ = original
    top = sys.modules.get(_TARGET)
    if top is not None and "__ndgrad_version__" in top.__dict__:
        top.__version__ = top.__dict__.pop("__ndgrad_version__")
