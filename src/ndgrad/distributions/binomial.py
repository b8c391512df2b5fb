"""torch.distributions.binomial: PyTorch's module of Binomial (defined in discrete.py)."""
from .discrete import Binomial

__all__ = ["Binomial"]
