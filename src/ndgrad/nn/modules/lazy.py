"""LazyLinear: a Linear whose in_features is inferred from the first input it sees."""
from .module import Module
from .linear import Linear
from ..parameter import UninitializedParameter
from ...autograd.grad_mode import no_grad

__all__ = ["LazyLinear"]


class LazyLinear(Linear):
    """Its weight and bias are UninitializedParameters until the first forward (or a
    load_state_dict) fixes in_features; then it initialises them as Linear does and turns into
    a Linear."""
    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        Module.__init__(self)
        self.in_features = 0
        self.out_features = out_features
        self.weight = UninitializedParameter(dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)
        else:
            self.register_parameter("bias", None)

    def has_uninitialized_params(self):
        return any(isinstance(p, UninitializedParameter)
                   for p in self._parameters.values() if p is not None)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()

    def forward(self, input):
        self.initialize_parameters(input)
        if self.in_features == 0:  # materialized by load_state_dict
            self.in_features = self.weight.shape[-1]
        self.__class__ = self.cls_to_become
        return Linear.forward(self, input)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                lazy = isinstance(p, UninitializedParameter)
                destination[prefix + name] = p if (keep_vars or lazy) else p.detach()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        for name, p in self._parameters.items():
            key = prefix + name
            if isinstance(p, UninitializedParameter) and key in state_dict:
                src = state_dict[key]
                if not isinstance(src, UninitializedParameter):
                    p.materialize(src.shape)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)
