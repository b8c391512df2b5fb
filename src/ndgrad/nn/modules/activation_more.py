"""More activation modules (torch.nn.Hardshrink, Softshrink, RReLU): wrappers around functional."""
from .module import Module
from .. import functional as F

__all__ = ["Hardshrink", "Softshrink", "RReLU"]


class Hardshrink(Module):
    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Module):
    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class RReLU(Module):
    """Randomized leaky ReLU: random negative slopes in training, their mean in eval."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        s = ", inplace=True" if self.inplace else ""
        return f"lower={self.lower}, upper={self.upper}{s}"
