"""torch.distributions.uniform: PyTorch's module of Uniform (defined in continuous.py)."""
from .continuous import Uniform

__all__ = ["Uniform"]
