"""torch._dynamo._trace_wrapped_higher_order_op: TransformGetItemToIndex, the mode under which
`A[q_idx]` with a 0-d tensor index indexes without a host round trip (transformers' mask
functions use it). ndgrad's indexing with a 0-d integer tensor already gives that result, so
the mode passes every call through."""
from ..overrides import TorchFunctionMode

__all__ = ["TransformGetItemToIndex"]


class TransformGetItemToIndex(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))
