"""torch.distributions.exp_family: PyTorch's module of ExponentialFamily (defined in distribution.py)."""
from .distribution import ExponentialFamily

__all__ = ["ExponentialFamily"]
