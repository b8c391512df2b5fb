"""torch.distributions.cauchy: PyTorch's module of Cauchy (defined in continuous.py)."""
from .continuous import Cauchy

__all__ = ["Cauchy"]
