"""Activation modules: thin wrappers around nn.functional."""
from .module import Module
from .. import functional as F

__all__ = ["ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Tanh",
           "Sigmoid", "Softplus", "Softsign", "Tanhshrink", "Hardtanh", "Hardsigmoid",
           "Hardswish", "LogSigmoid", "Softmax", "LogSoftmax", "Softmin", "Threshold", "GLU",
           "PReLU"]


def _inplace_str(inplace):
    return "inplace=True" if inplace else ""


class ReLU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace)


class Hardtanh(Module):
    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        s = ", inplace=True" if self.inplace else ""
        return f"min_val={self.min_val}, max_val={self.max_val}{s}"


class ReLU6(Hardtanh):
    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace)


class LeakyReLU(Module):
    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        s = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{s}"


class ELU(Module):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        s = ", inplace=True" if self.inplace else ""
        return f"alpha={self.alpha}{s}"


class CELU(ELU):
    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class SELU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.selu(input, self.inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace)


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={repr(self.approximate)}"


class SiLU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace)


class Mish(SiLU):
    def forward(self, input):
        return F.mish(input)


class _Simple(Module):
    _fn = None

    def forward(self, input):
        return type(self)._fn(input)


class Tanh(_Simple):
    _fn = staticmethod(F.tanh)


class Sigmoid(_Simple):
    _fn = staticmethod(F.sigmoid)


class Softsign(_Simple):
    _fn = staticmethod(F.softsign)


class Tanhshrink(_Simple):
    _fn = staticmethod(F.tanhshrink)


class LogSigmoid(_Simple):
    _fn = staticmethod(F.logsigmoid)


class Hardsigmoid(SiLU):
    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)


class Hardswish(SiLU):
    def forward(self, input):
        return F.hardswish(input, self.inplace)


class Softplus(Module):
    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Threshold(Module):
    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        s = ", inplace=True" if self.inplace else ""
        return f"threshold={self.threshold}, value={self.value}{s}"


class _DimModule(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_DimModule):
    def forward(self, input):
        return F.softmax(input, self.dim)


class LogSoftmax(_DimModule):
    def forward(self, input):
        return F.log_softmax(input, self.dim)


class Softmin(_DimModule):
    def forward(self, input):
        return F.softmin(input, self.dim)


class GLU(_DimModule):
    def __init__(self, dim=-1):
        super().__init__(dim)

    def forward(self, input):
        return F.glu(input, self.dim)


class PReLU(Module):
    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        from ..parameter import Parameter
        from ..._creation import empty
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(empty((num_parameters,), dtype=dtype, device=device))
        self.reset_parameters()

    def reset_parameters(self):
        from .. import init
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"
