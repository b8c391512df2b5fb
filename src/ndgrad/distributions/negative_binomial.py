"""torch.distributions.negative_binomial: PyTorch's module of NegativeBinomial (defined in discrete.py)."""
from .discrete import NegativeBinomial

__all__ = ["NegativeBinomial"]
