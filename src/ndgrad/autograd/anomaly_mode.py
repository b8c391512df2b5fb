"""Anomaly detection (torch.autograd.detect_anomaly / set_detect_anomaly).

When on, every graph node records the stack of the forward call that created it (`node._site`,
also `node.metadata["traceback_"]` as in PyTorch), and the engine checks each backward function's
outputs: NaN raises "Function 'MulBackward0' returned nan values in its 0th output.", and any
error raised in backward comes with a warning that shows the forward traceback, so the user sees
the line of their own code that built the failing node. When off, the cost is one flag check per
node created and per node run.
"""
import functools
import os
import traceback
import warnings

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]


class _State:
    __slots__ = ("enabled", "check_nan")

    def __init__(self):
        self.enabled = False
        self.check_nan = True

    def record(self, node):
        # drop ndgrad's own frames at the top: the user's line is the last one shown
        stack = traceback.extract_stack()
        while stack and stack[-1].filename.startswith(_PKG_DIR):
            stack.pop()
        node._site = stack


_state = _State()


def is_anomaly_enabled():
    return _state.enabled


def is_anomaly_check_nan_enabled():
    return _state.check_nan


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly detection on.

        with torch.autograd.detect_anomaly():
            loss.backward()   # NaN in a backward function -> RuntimeError + forward traceback
    """

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self):
        self.prev = (_state.enabled, _state.check_nan)
        _state.enabled, _state.check_nan = True, self.check_nan
        return self

    def __exit__(self, *exc):
        _state.enabled, _state.check_nan = self.prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self._clone():
                return fn(*args, **kwargs)
        return wrapper

    def _clone(self):
        c = object.__new__(type(self))
        c.check_nan = self.check_nan
        return c


class set_detect_anomaly:
    """set_detect_anomaly(mode, check_nan=True): sets anomaly mode now (usable as a context
    manager that restores the previous mode on exit)."""

    def __init__(self, mode, check_nan=True):
        self.prev = (_state.enabled, _state.check_nan)
        _state.enabled, _state.check_nan = bool(mode), bool(check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _state.enabled, _state.check_nan = self.prev
        return False


def forward_traceback(node):
    """The recorded forward stack of `node`, formatted, or None."""
    site = node._site
    if not isinstance(site, list):  # not recorded in anomaly mode (maybe a plain error site)
        return None
    return "".join(traceback.format_list(site))


def apply_checked(node, grads, create_graph):
    """node.apply under anomaly mode: warn with the forward traceback on error, check NaNs."""
    try:
        outs = node.apply(grads, create_graph)
        if _state.check_nan:
            for i, g in enumerate(outs):
                if g is not None and _has_nan(g):
                    raise RuntimeError(
                        f"Function '{node.name()}' returned nan values in its {i}th output.")
    except Exception as e:
        tb = forward_traceback(node)
        if tb is not None:
            msg = (f"Error detected in {node.name()}. Traceback of forward call that caused the "
                   f"error:\n{tb}")
            warnings.warn(msg, UserWarning, stacklevel=2)
            try:
                e.add_note("Traceback of forward call that caused the error:\n" + tb)
            except AttributeError:  # Python < 3.11
                pass
        raise
    return outs


def _has_nan(t):
    d = t._data
    if d.dtype.kind not in "fc":
        return False
    return bool((d != d).any())
