"""torch.distributions.exponential: PyTorch's module of Exponential (defined in continuous.py)."""
from .continuous import Exponential

__all__ = ["Exponential"]
