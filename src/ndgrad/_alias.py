"""`import torch` runs ndgrad: a `sys.meta_path` finder that resolves `torch` to the module
`ndgrad` and `torch.<sub>` to `ndgrad.<sub>`, the same module objects, so `torch.nn.Module is
ndgrad.nn.Module` and isinstance checks hold across both spellings.

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
    """Hands the import system a module that is already loaded (ndgrad's), unchanged."""

    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        pass


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


_finder = _TorchAliasFinder()


def _real_torch_loaded():
    mod = sys.modules.get(_ALIAS)
    return mod is not None and getattr(mod, "__name__", None) != _TARGET


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
    # submodules ndgrad has loaded already resolve at once, without the finder
    for name, module in list(sys.modules.items()):
        if name == _TARGET or name.startswith(_TARGET + "."):
            sys.modules.setdefault(_ALIAS + name[len(_TARGET):], module)


def _unalias_torch():
    """Undo alias_torch() (for tests): remove the finder and the `torch*` entries it made."""
    while _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    for name in [n for n in sys.modules if n == _ALIAS or n.startswith(_ALIAS + ".")]:
        if getattr(sys.modules[name], "__name__", "").split(".")[0] == _TARGET:
            del sys.modules[name]
