"""torch.distributions.bernoulli: PyTorch's module of Bernoulli (defined in discrete.py)."""
from .discrete import Bernoulli

__all__ = ["Bernoulli"]
