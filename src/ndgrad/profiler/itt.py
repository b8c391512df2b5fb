"""`torch.profiler.itt`: Intel ITT annotations for VTune. This build has no ITT library:
`is_available()` is False and the range calls do nothing, as PyTorch's without ITT."""
from contextlib import contextmanager

__all__ = ["is_available", "range_push", "range_pop", "mark", "range"]


def is_available():
    return False


def range_push(msg):
    """Open a range named msg (nothing to annotate here)."""


def range_pop():
    """Close the innermost range (nothing to annotate here)."""


def mark(msg):
    """An instant event (nothing to annotate here)."""


@contextmanager
def range(msg, *args, **kwargs):
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
