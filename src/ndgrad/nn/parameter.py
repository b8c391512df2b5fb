"""Parameter: a leaf Tensor that a Module registers when assigned as an attribute."""
from .._tensor import Tensor, _make
from .._creation import empty

__all__ = ["Parameter", "Buffer"]


class Parameter(Tensor):
    """torch.nn.Parameter(data=None, requires_grad=True)."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        return cls._make_subclass(data, requires_grad)

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = Parameter(_make(self._data.copy()), self._requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self.detach(), self._requires_grad))


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


class Buffer:
    """torch.nn.Buffer(data, persistent=True): marks a tensor to be registered as a buffer."""

    def __init__(self, data=None, *, persistent=True):
        self.data = data
        self.persistent = persistent
