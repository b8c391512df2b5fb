"""Grad mode: one thread-local flag, read once per op. Each switch is both a context manager and
a decorator, as in torch.autograd.grad_mode."""
import functools
import inspect
import threading

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled"]


class _State(threading.local):
    enabled = True       # class attributes are the per-thread defaults
    inference = False
    in_backward = False  # the engine is running formulas (grad off there is not the user's)
    backward_site = None  # while it runs: the site of the backward()/grad() call
    in_formula = False   # a built-in op's formulas run recorded (create_graph): the ops they
    #                      record have backward_site as their user line, no stack walk needed


_state = _State()


def is_grad_enabled():
    """True when operations are being recorded for autograd."""
    return _state.enabled


def is_inference_mode_enabled():
    return _state.inference


class _DecoratorContextManager:
    """Use as `with no_grad():` or as `@no_grad()` (also `@no_grad` without parentheses)."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise RuntimeError("Cannot decorate classes; it is ambiguous")
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args, **kwargs):
                gen = func(*args, **kwargs)
                try:
                    with self.clone():
                        response = gen.send(None)
                    while True:
                        try:
                            request = yield response
                        except GeneratorExit:
                            with self.clone():
                                gen.close()
                            raise
                        except BaseException as exc:
                            with self.clone():
                                response = gen.throw(exc)
                        else:
                            with self.clone():
                                response = gen.send(request)
                except StopIteration as e:
                    return e.value
            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class no_grad(_DecoratorContextManager):
    """Disable gradient recording inside the block: results have requires_grad=False."""

    def __new__(cls, orig_func=None):
        if cls is no_grad and callable(orig_func):  # bare @no_grad
            return no_grad()(orig_func)
        return super().__new__(cls)

    def __init__(self, orig_func=None):
        self.prev = None

    def __enter__(self):
        self.prev = _state.enabled
        _state.enabled = False

    def __exit__(self, *exc):
        _state.enabled = self.prev


class enable_grad(_DecoratorContextManager):
    """Re-enable gradient recording inside a no_grad block."""

    def __new__(cls, orig_func=None):
        if cls is enable_grad and callable(orig_func):
            return enable_grad()(orig_func)
        return super().__new__(cls)

    def __init__(self, orig_func=None):
        self.prev = None

    def __enter__(self):
        self.prev = _state.enabled
        _state.enabled = True

    def __exit__(self, *exc):
        _state.enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """set_grad_enabled(mode): sets grad mode now (as a function) or for a block / a function."""

    def __init__(self, mode):
        self.prev = _state.enabled
        self.mode = bool(mode)
        _state.enabled = self.mode

    def __call__(self, func):
        _state.enabled = self.prev
        return super().__call__(func)

    def __enter__(self):
        _state.enabled = self.mode

    def __exit__(self, *exc):
        _state.enabled = self.prev

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like no_grad, for code that will never be differentiated (inference_mode(mode=True))."""

    def __new__(cls, mode=True):
        if cls is inference_mode and callable(mode):
            return inference_mode()(mode)
        return super().__new__(cls)

    def __init__(self, mode=True):
        self.mode = mode
        self.prev = None

    def __enter__(self):
        self.prev = (_state.enabled, _state.inference)
        # PyTorch's InferenceMode(enabled): grad mode is `not enabled`, inference mode `enabled`
        # (so inference_mode(False) inside inference mode makes normal, recordable tensors)
        _state.enabled, _state.inference = not self.mode, bool(self.mode)

    def __exit__(self, *exc):
        _state.enabled, _state.inference = self.prev

    def clone(self):
        return self.__class__(self.mode)


_multithreading = [True]
_grad_layout_enforced = [True]


class set_multithreading_enabled(_DecoratorContextManager):
    """set_multithreading_enabled(mode): PyTorch's switch for its multithreaded backward. ndgrad's
    engine runs backward on the calling thread either way; the flag is kept and restored."""

    def __init__(self, mode):
        self.prev = _multithreading[0]
        _multithreading[0] = self.mode = mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _multithreading[0] = self.prev

    def clone(self):
        return self.__class__(self.mode)


def _is_multithreading_enabled():
    return _multithreading[0]


class enforce_grad_layout_policy(_DecoratorContextManager):
    """enforce_grad_layout_policy(enable=True): PyTorch's switch for matching .grad's strides to
    the parameter's. ndgrad's gradients are always laid out like their parameter; the flag is
    kept and restored."""

    def __init__(self, enable=True):
        self.prev = _grad_layout_enforced[0]
        _grad_layout_enforced[0] = self.mode = enable

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _grad_layout_enforced[0] = self.prev

    def clone(self):
        return self.__class__(self.mode)
