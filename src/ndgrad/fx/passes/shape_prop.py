"""torch.fx.passes.shape_prop: ShapeProp runs a GraphModule on example inputs and stores
each node's TensorMetadata (shape, dtype, requires_grad, stride, memory_format) in
`node.meta["tensor_meta"]` and the result's type in `node.meta["type"]` (PyTorch's pass)."""
from typing import Any, NamedTuple

from ..interpreter import Interpreter
from ..node import map_aggregate

__all__ = ["TensorMetadata", "ShapeProp"]


class TensorMetadata(NamedTuple):
    shape: Any
    dtype: Any
    requires_grad: bool
    stride: Any
    memory_format: Any
    is_quantized: bool
    qparams: dict


def _extract_tensor_metadata(result, include_contiguity=True):
    import ndgrad
    memory_format = None
    if include_contiguity:
        for query_format in (ndgrad.contiguous_format, ndgrad.channels_last,
                             ndgrad.channels_last_3d):
            try:
                if result.is_contiguous(memory_format=query_format):
                    memory_format = query_format
                    break
            except RuntimeError:
                continue
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, result.stride(),
                          memory_format, False, {})


class ShapeProp(Interpreter):
    """`ShapeProp(gm).propagate(*example_inputs)` fills node.meta["tensor_meta"]."""

    def __init__(self, gm, fake_mode=None):
        super().__init__(gm)
        self.fake_mode = fake_mode

    def run_node(self, n):
        import ndgrad
        result = super().run_node(n)
        found_tensor = False

        def extract_tensor_meta(obj):
            nonlocal found_tensor
            if isinstance(obj, ndgrad.Tensor):
                found_tensor = True
                return _extract_tensor_metadata(obj)
            return obj
        meta = map_aggregate(result, extract_tensor_meta)
        if found_tensor:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        return super().run(*args)
