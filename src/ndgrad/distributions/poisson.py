"""torch.distributions.poisson: PyTorch's module of Poisson (defined in discrete.py)."""
from .discrete import Poisson

__all__ = ["Poisson"]
