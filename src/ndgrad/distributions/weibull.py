"""torch.distributions.weibull: PyTorch's module of Weibull (defined in transformed.py)."""
from .transformed import Weibull

__all__ = ["Weibull"]
