"""torch.jit._state: whether TorchScript is enabled (PYTORCH_JIT); always "enabled" here."""
import contextlib


class EnabledProxy:
    enabled = True

    def __bool__(self):
        return self.enabled


_enabled = EnabledProxy()


def disable():
    _enabled.enabled = False


def enable():
    _enabled.enabled = True


@contextlib.contextmanager
def _disable_emit_hooks():
    yield
