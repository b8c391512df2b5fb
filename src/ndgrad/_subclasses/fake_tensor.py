"""`torch._subclasses.fake_tensor`: `is_fake` (libraries branch on it before reading values),
the FakeTensor class for isinstance checks, and FakeTensorMode, which refuses to start: tensors
without data are a compiler's tool, and ndgrad runs every op on real arrays."""
from .._tensor import Tensor


class FakeTensor(Tensor):
    """No instance is ever made: the class exists for isinstance checks."""


def is_fake(x):
    """False for every object here: ndgrad has no fake tensors."""
    return isinstance(x, FakeTensor)


class FakeTensorMode:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(
            "torch._subclasses.FakeTensorMode: ndgrad runs every op on real arrays and has no "
            "tensors without data")
