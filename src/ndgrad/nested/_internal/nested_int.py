"""The size of a jagged nested tensor's ragged dimension: PyTorch shows a symbolic int `j1`
(one per offsets tensor, numbered in order of first use), equal only to itself and to the
ragged size of a tensor with the same offsets (torch.nested._internal.nested_int)."""
import weakref

from ...ops.torch_private import SymInt

__all__ = ["NestedInt", "get_tensor_symint"]

ERR_INDETERMINATE = "ge: relation is indeterminate"


def _no_op(name):
    def f(self, *args):
        raise AttributeError(f"'NestedIntNode' object has no attribute '{name}'")
    return f


class NestedInt(SymInt):
    """`j<id>` (times a coefficient: `2*j1`), a torch.SymInt: equal to the same nested int
    only, known to be at least 2 (PyTorch's comparisons), no arithmetic but scaling."""

    def __init__(self, t_id, coeff=1):
        self._id = t_id
        self._coeff = coeff

    def __repr__(self):
        return f"j{self._id}" if self._coeff == 1 else f"{self._coeff}*j{self._id}"

    __str__ = __repr__

    def __eq__(self, other):
        if isinstance(other, NestedInt):
            return self._id == other._id and self._coeff == other._coeff
        if isinstance(other, int):
            return False
        return NotImplemented

    def __ne__(self, other):
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    def __hash__(self):
        return hash(("j", self._id, self._coeff))

    def __mul__(self, other):
        if isinstance(other, int) and not isinstance(other, bool):
            return NestedInt(self._id, self._coeff * other)
        return NotImplemented

    __rmul__ = __mul__

    @property
    def node(self):
        return self

    # a nested int stands for a size >= 2 (PyTorch's NestedIntNode); past that, undecidable
    def __ge__(self, other):
        if isinstance(other, int):
            if other <= 2:
                return True
            raise ValueError(ERR_INDETERMINATE)
        if isinstance(other, NestedInt):
            return self == other
        return NotImplemented

    def __gt__(self, other):
        if isinstance(other, int):
            if other < 2:
                return True
            raise ValueError(ERR_INDETERMINATE)
        return NotImplemented

    def __lt__(self, other):
        if isinstance(other, int):
            if other <= 2:
                return False
            raise ValueError(ERR_INDETERMINATE)
        return NotImplemented

    def __le__(self, other):
        if isinstance(other, int):
            if other < 2:
                return False
            raise ValueError(ERR_INDETERMINATE)
        return NotImplemented

    __int__ = __index__ = _no_op("int_")
    __add__ = __radd__ = _no_op("add")
    __sub__ = __rsub__ = _no_op("sub")
    __floordiv__ = __rfloordiv__ = _no_op("int_floordiv")


_counter = [1]
_registry = {}   # id(tensor) -> NestedInt, dropped with the tensor


def get_tensor_symint(tensor, *, coeff=1):
    """The nested int of an offsets (or lengths) tensor: the same object for the same tensor."""
    key = id(tensor)
    j = _registry.get(key)
    if j is None:
        j = _registry[key] = NestedInt(_counter[0], coeff)
        _counter[0] += 1
        weakref.finalize(tensor, _registry.pop, key, None)
    return j
