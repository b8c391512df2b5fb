"""torch.futures: a Future that a communication handle completes.

ndgrad runs in one thread, so a Future is completed either by `set_result` or, for one that
ndgrad.distributed returns (`Work.get_future()`), by waiting on its MPI request; callbacks
chained with `then` run when the value is first needed (`wait`/`value`) or when `done()` sees the
parent finished.
"""

import types as _types

__all__ = ["Future", "collect_all", "wait_all"]

_UNSET = object()


class Future:
    """A value that becomes available later (torch.futures.Future); generic, as PyTorch's
    (`Future[int]` in annotations)."""

    __class_getitem__ = classmethod(_types.GenericAlias)

    def __init__(self, *, devices=None):
        self._value = _UNSET
        self._exc = None
        self._poll = None      # () -> bool: is the value ready (completes it when it is)
        self._force = None     # () -> None: block until the value is set
        self._callbacks = []

    # ------------------------------------------------------------------ completion
    def _pending(self):
        return self._value is _UNSET and self._exc is None

    def _finish(self):
        cbs, self._callbacks = self._callbacks, []
        for cb in cbs:
            cb(self)

    def set_result(self, result):
        if self._value is not _UNSET or self._exc is not None:
            raise RuntimeError("Future can only be marked completed once.")
        self._value = result
        self._finish()

    def set_exception(self, result):
        if not isinstance(result, BaseException):
            raise TypeError("set_exception expects an exception")
        self._exc = result
        self._finish()

    def done(self):
        if self._value is not _UNSET or self._exc is not None:
            return True
        if self._poll is not None:
            return self._poll()
        return False

    def wait(self):
        if self._value is _UNSET and self._exc is None:
            if self._force is None:
                raise RuntimeError("Future.wait() on a Future that nothing will complete")
            self._force()
        if self._exc is not None:
            raise self._exc
        return self._value

    def value(self):
        if self._value is _UNSET and self._exc is None:
            raise RuntimeError("Future.value() called before the Future completed")
        if self._exc is not None:
            raise self._exc
        return self._value

    def then(self, callback):
        """A new Future holding callback(self) once self completes."""
        child = Future()

        def run(parent):
            try:
                child.set_result(callback(parent))
            except Exception as e:  # the child carries the callback's error
                child.set_exception(e)

        def force():
            try:
                self.wait()
            except Exception:  # the callback sees the parent's error through parent.value()
                pass
            if child._value is _UNSET and child._exc is None:
                run(self)

        def poll():
            if self.done():
                if child._value is _UNSET and child._exc is None:
                    run(self)
                return True
            return False

        child._force, child._poll = force, poll
        self.add_done_callback(lambda parent: run(parent) if child._value is _UNSET and
                               child._exc is None else None)
        return child

    def add_done_callback(self, callback):
        if self._value is not _UNSET or self._exc is not None:
            callback(self)
        else:
            self._callbacks.append(callback)

    def __repr__(self):
        return f"<ndgrad.futures.Future object at {hex(id(self))}>"


def collect_all(futures):
    """A Future of the list of `futures`, completed when all of them are."""
    futures = list(futures)
    out = Future()

    def force():
        for f in futures:
            f.wait()
        if out._value is _UNSET:
            out.set_result(futures)

    def poll():
        if all(f.done() for f in futures):
            if out._value is _UNSET:
                out.set_result(futures)
            return True
        return False

    out._force, out._poll = force, poll
    # completed as soon as the last of them is, as PyTorch's (a `then` on it runs then, so
    # callbacks that read value() of the futures in the list find them done)
    left = [len(futures)]

    def one_done(_):
        left[0] -= 1
        if left[0] == 0 and out._pending():
            out.set_result(futures)
    for f in futures:
        f.add_done_callback(one_done)
    if not futures:
        out.set_result(futures)
    return out


def wait_all(futures):
    """Wait for every future; their values, in order."""
    return [f.wait() for f in futures]
