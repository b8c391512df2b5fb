"""convert_conv2d/3d_weight_memory_format: the weights of Conv2d/3d and ConvTranspose2d/3d
re-laid out in `memory_format` (a copy in that layout, the Parameter kept), as PyTorch's; the
module is returned."""
from ...autograd.grad_mode import no_grad

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, classes):
    if isinstance(module, classes):
        with no_grad():
            w = module.weight
            w._data = w.detach().clone().contiguous(memory_format=memory_format)._data
            w._bump_version()
    for child in module.children():
        _convert(child, memory_format, classes)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    from ..modules.conv import Conv2d, ConvTranspose2d
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    from ..modules.conv import Conv3d, ConvTranspose3d
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
