"""ndgrad.utils: data loading (ndgrad.utils.data) and helpers, as torch.utils."""
import importlib

from . import data


def __getattr__(name):
    # submodules such as ndgrad.utils.checkpoint load on first use, as in torch
    if name.startswith("_"):
        raise AttributeError(name)
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
