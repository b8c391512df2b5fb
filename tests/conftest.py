"""Say up front which optional test oracles are missing, so skipped tests are not a mystery."""
import importlib.util
import sys

import pytest


def _missing():
    why = {"torch": "the comparisons with PyTorch skip (pip install torch==2.13.0)",
           "scipy": "the special-function accuracy checks against SciPy skip (pip install scipy)",
           "mpi4py": "the multi-process tests skip (pip install \".[distributed]\")"}
    return [f"{name} not installed: {text}" for name, text in why.items()
            if importlib.util.find_spec(name) is None]


def pytest_report_header(config):
    return _missing() or None


def pytest_terminal_summary(terminalreporter):
    for line in _missing():
        terminalreporter.write_line("note: " + line)


@pytest.fixture
def standin():
    """The strict stand-in device (ndgrad._standin) behind "cuda" for one test; the default
    device and the previous setting come back afterwards. Yields torch.device("cuda", 0)."""
    import ndgrad
    from ndgrad import _backend
    before = _backend.use_standin(True)
    try:
        yield ndgrad.device("cuda", 0)
    finally:
        ndgrad.set_default_device(None)
        _backend.use_standin(before)


def pytest_collection_finish(session):
    """PyTorch's test internals (torch.testing._internal.common_utils, which the module_db and
    optim_db tests import) call torch.backends.disable_global_flags() at import: every later
    in-process PyTorch program that sets a cudnn flag would then fail (test_programs*.py).
    Collection has imported them all by now: the flags are settable again."""
    torch = sys.modules.get("torch")
    backends = getattr(torch, "backends", None)
    if backends is not None and hasattr(backends, "flags_frozen"):
        backends.flags_frozen.__globals__["__allow_nonbracketed_mutation_flag"] = True
