# Linear algebra. matmul has one joint formula (its two gradients share the 1-d bookkeeping);
# batch broadcasting is undone by the engine's sum_to. See ops/_registry.py for the language.
from ._registry import defop
from .shape import unsqueeze, squeeze, transpose

__all__ = ["matmul", "mm", "bmm", "mv", "dot"]


def _mT(x):
    return transpose(x, -1, -2)


def _matmul_check(a, b):
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D")
    if a.ndim == 1 and b.ndim == 1:
        if a.shape[0] != b.shape[0]:
            raise RuntimeError(
                "inconsistent tensor size, expected tensor [%d] and src [%d] to have the same "
                "number of elements, but got %d and %d elements respectively"
                % (a.shape[0], b.shape[0], a.shape[0], b.shape[0]))
    elif a.ndim == 2 and b.ndim == 1:
        if a.shape[1] != b.shape[0]:
            raise RuntimeError(
                f"size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x{a.shape[1]}), "
                f"vec ({b.shape[0]})")
    elif a.ndim == 1 and b.ndim == 2:
        if a.shape[0] != b.shape[0]:
            raise RuntimeError(
                f"size mismatch, got input ({b.shape[1]}), mat ({b.shape[1]}x{b.shape[0]}), "
                f"vec ({a.shape[0]})")
    elif a.shape[-1] != b.shape[-2]:
        if a.ndim == 2 and b.ndim == 2:
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
                f"{b.shape[0]}x{b.shape[1]})")
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{b.shape[0] if b.ndim > 2 else 1}, {a.shape[-1]}] but got: "
            f"[{b.shape[0] if b.ndim > 2 else 1}, {b.shape[-2]}].")


def _matmul_fwd(xp, self, other):
    _matmul_check(self, other)
    return xp.matmul(self, other)


def _matmul_grads(grad, self, other):
    a1, b1 = self.ndim == 1, other.ndim == 1
    if a1 and b1:
        return grad * other, grad * self
    g = grad
    if a1:
        g = unsqueeze(g, -2)
    if b1:
        g = unsqueeze(g, -1)
    a = unsqueeze(self, 0) if a1 else self
    b = unsqueeze(other, -1) if b1 else other
    ga = g @ _mT(b) if self.requires_grad else None
    gb = _mT(a) @ g if other.requires_grad else None
    if a1 and ga is not None:
        ga = squeeze(ga, -2)
    if b1 and gb is not None:
        gb = squeeze(gb, -1)
    return ga, gb


def _matmul_op(name, node):
    return defop(name, _matmul_fwd, promote="binary", node_name=node,
                 inputs=("self", "other"), backward=_matmul_grads)


_mm = _matmul_op("mm", "MmBackward0")
_mv = _matmul_op("mv", "MvBackward0")
_dot = _matmul_op("dot", "DotBackward0")
_bmm = _matmul_op("bmm", "BmmBackward0")
_matmul = _matmul_op("matmul", "UnsafeViewBackward0")


def matmul(input, other):
    """torch.matmul: dot, mv, mm or broadcast batched matmul by the inputs' dims."""
    a, b = input._data.ndim, other._data.ndim
    if a == 2 and b == 2:
        return _mm(input, other)
    if a == 1 and b == 1:
        return _dot(input, other)
    if a == 2 and b == 1:
        return _mv(input, other)
    if a == 3 and b == 3:
        return _bmm(input, other)
    return _matmul(input, other)


def mm(input, mat2):
    if input._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    return _mm(input, mat2)


def bmm(input, mat2):
    if input._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    return _bmm(input, mat2)


def mv(input, vec):
    return _mv(input, vec)


def dot(input, other):
    if input._data.ndim != 1 or other._data.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input._data.ndim}D and {other._data.ndim}D tensors")
    if input.dtype is not other.dtype:
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{input.dtype.name.capitalize()} and {other.dtype.name.capitalize()}")
    return _dot(input, other)
