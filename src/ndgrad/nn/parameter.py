"""Parameter: a leaf Tensor that a Module registers when assigned as an attribute."""
from .._tensor import Tensor, _make
from .._creation import empty

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"]


class Parameter(Tensor):
    """torch.nn.Parameter(data=None, requires_grad=True)."""
    from .._tensor import _disabled_torch_function_impl as __torch_function__  # noqa: E501 (no dispatch)

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        if requires_grad and data.dtype._category < 2:   # (_make_subclass's words in PyTorch)
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients")
        return Tensor._make_subclass(cls, data, requires_grad)

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


_UNINIT_MSG = ("Can't access the shape of an uninitialized parameter or buffer. This error usually "
               "happens in `load_state_dict` when trying to load an uninitialized parameter into "
               "an initialized one. Call `forward` to initialize the parameters before accessing "
               "their attributes.")


class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet (lazy modules); `materialize(shape)` gives it
    storage and turns it into a plain Parameter."""
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return Parameter.__new__(cls, empty(0, dtype=dtype, device=device), requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    @property
    def shape(self):
        raise RuntimeError(_UNINIT_MSG)

    def size(self, dim=None):
        raise RuntimeError(_UNINIT_MSG)

    def materialize(self, shape, device=None, dtype=None):
        """Storage of `shape`, in the placeholder's dtype and device (what module.to() made
        them, as PyTorch's) unless given."""
        t = empty(tuple(shape), dtype=dtype if dtype is not None else self.dtype,
                  device=device or self.device)
        self._data, self.dtype = t._data, t.dtype
        self.__class__ = self.cls_to_become

    def __repr__(self):
        return "<UninitializedParameter>"

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = UninitializedParameter(self._requires_grad)
        return memo[id(self)]

    def __reduce_ex__(self, proto):
        return (UninitializedParameter, (self._requires_grad,))


class UninitializedBuffer(Tensor):
    """A buffer whose shape is not known yet (lazy modules); `materialize(shape)` gives it
    storage and turns it into a plain Tensor."""
    from .._tensor import _disabled_torch_function_impl as __torch_function__  # noqa: E501 (no dispatch)
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        b = Tensor._make_subclass(cls, empty(0, dtype=dtype, device=device), requires_grad)
        b.persistent = persistent
        b._is_buffer = True
        return b

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass

    @property
    def shape(self):
        raise RuntimeError(_UNINIT_MSG)

    def size(self, dim=None):
        raise RuntimeError(_UNINIT_MSG)

    def materialize(self, shape, device=None, dtype=None):
        t = empty(tuple(shape), dtype=dtype if dtype is not None else self.dtype,
                  device=device or self.device)
        self._data, self.dtype = t._data, t.dtype
        for name in ("persistent", "_is_buffer"):
            self.__dict__.pop(name, None)
        self.__class__ = self.cls_to_become

    def __repr__(self):
        return "<UninitializedBuffer>"

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = UninitializedBuffer(self._requires_grad)
        return memo[id(self)]
