"""Started by `python -m ndgrad.run`, which puts this folder on PYTHONPATH and sets
NDGRAD_ALIAS_TORCH=1 for the processes the program starts (multiprocessing's spawned workers,
subprocesses of Python): each of them aliases torch to ndgrad at startup, as the program itself
is. Any other sitecustomize on the path then runs as it would have."""
import importlib.machinery as _machinery
import importlib.util as _util
import os as _os
import sys as _sys

if _os.environ.get("NDGRAD_ALIAS_TORCH") == "1":
    try:
        from ndgrad._alias import alias_torch as _alias_torch
        _alias_torch()
    except Exception as _e:   # (never stop a Python from starting)
        print(f"ndgrad.run: could not alias torch in this process: {_e!r}", file=_sys.stderr)


def _chain():
    here = _os.path.dirname(_os.path.abspath(__file__))
    path = [p for p in _sys.path if _os.path.abspath(p or ".") != here]
    spec = _machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is not None and spec.loader is not None:
        module = _util.module_from_spec(spec)
        _sys.modules["sitecustomize"] = module
        spec.loader.exec_module(module)


_chain()
