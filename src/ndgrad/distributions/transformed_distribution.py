"""torch.distributions.transformed_distribution: PyTorch's module of TransformedDistribution (defined in transformed.py)."""
from .transformed import TransformedDistribution

__all__ = ["TransformedDistribution"]
