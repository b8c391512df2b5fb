"""`import torch` (and `torch.nn`, `torch.distributed`, ...) bound to ndgrad's modules, for
`python -m ndgrad.distributed.run --as-torch`: a PyTorch script then runs on ndgrad unchanged."""
import importlib
import importlib.abc
import importlib.util
import sys


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            if importlib.util.find_spec("ndgrad" + name[5:]) is None:
                return None   # torch.<x> that ndgrad lacks: the import fails as for a typo
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return importlib.import_module("ndgrad" + spec.name[5:])

    def exec_module(self, module):
        pass


def install():
    for k in [k for k in sys.modules if k == "torch" or k.startswith("torch.")]:
        del sys.modules[k]
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.insert(0, _Alias())
