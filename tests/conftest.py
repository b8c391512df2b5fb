"""Say up front which optional test oracles are missing, so skipped tests are not a mystery."""
import importlib
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
    """The strict stand-in device (ndgrad.cuda._standin) behind "cuda" for one test; the default
    device and the previous setting come back afterwards. Yields torch.device("cuda", 0)."""
    import ndgrad
    from ndgrad import _backend
    before = _backend.use_standin(True)
    try:
        yield ndgrad.device("cuda", 0)
    finally:
        ndgrad.set_default_device(None)
        _backend.use_standin(before)


@pytest.fixture
def two_threads_both():
    """ndgrad and PyTorch (where installed) both on two threads for one test, whatever earlier
    tests set: where a kernel's order or choice depends on the thread count, the comparisons
    need the same count on both sides."""
    import ndgrad
    torch = sys.modules.get("torch") or (importlib.import_module("torch") if
                                         importlib.util.find_spec("torch") else None)
    before = ndgrad.get_num_threads(), torch.get_num_threads() if torch else None
    ndgrad.set_num_threads(2)
    if torch:
        torch.set_num_threads(2)
    yield
    ndgrad.set_num_threads(before[0])
    if torch:
        torch.set_num_threads(before[1])


@pytest.fixture(autouse=True)
def _torch_backends_flags_unfrozen():
    """PyTorch's test databases (torch.testing._internal.common_utils, which the differential
    tests import) freeze torch.backends' flags for the whole process when imported; the programs
    the tests run under PyTorch set them as ordinary programs do (cudnn.deterministic = True)."""
    backends = sys.modules.get("torch.backends")
    if backends is not None and hasattr(backends, "flags_frozen"):
        # (the flag is a global of the function's module, not an attribute of torch.backends)
        backends.flags_frozen.__globals__["__allow_nonbracketed_mutation_flag"] = True
    yield
