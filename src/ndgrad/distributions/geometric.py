"""torch.distributions.geometric: PyTorch's module of Geometric (defined in discrete.py)."""
from .discrete import Geometric

__all__ = ["Geometric"]
