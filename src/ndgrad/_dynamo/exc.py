"""torch._dynamo.exc: the exception types (never raised by a compiler here)."""


class TorchDynamoException(RuntimeError):
    pass


class InternalTorchDynamoError(TorchDynamoException):
    pass


class Unsupported(TorchDynamoException):
    def __init__(self, msg="", *, case_name=None, real_stack=None):
        super().__init__(msg)
        self.msg = msg


class RestartAnalysis(TorchDynamoException):
    pass


class SkipFrame(TorchDynamoException):
    pass


class TorchRuntimeError(TorchDynamoException):
    pass


class BackendCompilerFailed(TorchDynamoException):
    def __init__(self, backend_fn=None, inner_exception=None):
        self.backend_name = getattr(backend_fn, "__name__", "?")
        self.inner_exception = inner_exception
        super().__init__(f"backend={self.backend_name!r} raised:\n{inner_exception}")


class InvalidBackend(TorchDynamoException):
    def __init__(self, name):
        super().__init__(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for "
                         "available backends.")


class UserError(Unsupported):
    pass


class UncapturedHigherOrderOpError(TorchDynamoException):
    pass


class ObservedException(TorchDynamoException):
    pass
