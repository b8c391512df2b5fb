"""scatter / gather as PyTorch's torch.nn.parallel.scatter_gather on a build without CUDA:
containers are walked the same way, and a tensor that would have to travel to or from a GPU
raises PyTorch's error (there is no GPU to scatter to, and gathering CPU tensors is not
implemented in PyTorch either)."""
from ..._tensor import Tensor
from ...cuda import ERR_NOT_COMPILED

__all__ = ["scatter", "scatter_kwargs", "gather"]


def _device_index(device, message):
    """torch._utils._get_device_index for the GPU-only callers: 'cpu' is refused."""
    from ..._backend import device as _device
    if isinstance(device, str):
        device = _device(device)
    if isinstance(device, _device):
        if device.type == "cpu":
            raise ValueError(message.format(device))
        return device.index
    return device


def _scatter_tensor(target_gpus, dim, tensor):
    for d in target_gpus:
        _device_index(d, "Expected a non cpu device, but got: {}")
    raise AssertionError(ERR_NOT_COMPILED)


def scatter(inputs, target_gpus, dim=0):
    """Slice tensors into roughly equal chunks along `dim`, one per GPU in `target_gpus`;
    other objects are repeated once per GPU."""
    def scatter_map(obj):
        if isinstance(obj, Tensor):
            return _scatter_tensor(target_gpus, dim, obj)
        if isinstance(obj, tuple) and len(obj) > 0 and hasattr(obj, "_fields"):
            return [type(obj)(*args) for args in zip(*map(scatter_map, obj))]
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in target_gpus]

    try:
        return scatter_map(inputs)
    finally:
        scatter_map = None  # noqa: F841  (PyTorch breaks the closure's reference cycle too)


def scatter_kwargs(inputs, kwargs, target_gpus, dim=0):
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(inputs):
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def gather(outputs, target_device, dim=0):
    """Concatenate the per-GPU `outputs` along `dim` on `target_device`."""
    def gather_map(outputs):
        out = outputs[0]
        if isinstance(out, Tensor):
            if not all(o.device.type != "cpu" for o in outputs):
                raise AssertionError("Gather function not implemented for CPU tensors")
            raise AssertionError(ERR_NOT_COMPILED)
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outputs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outputs])) for k in out)
        return type(out)(map(gather_map, zip(*outputs)))

    try:
        return gather_map(outputs)
    finally:
        gather_map = None  # noqa: F841
