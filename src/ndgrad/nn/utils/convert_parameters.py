"""parameters_to_vector / vector_to_parameters."""
from ..._tensor import Tensor


def parameters_to_vector(parameters):
    """Concatenate the flattened parameters into one 1-D tensor (differentiable)."""
    from ...ops.shape import cat
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copy slices of `vec` into the parameters' data (in place, not tracked)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    pointer = 0
    for param in parameters:
        n = param.numel()
        param._data = vec._data[pointer:pointer + n].reshape(param.shape).astype(
            param.dtype.np, copy=True)
        param._bump_version()
        pointer += n
