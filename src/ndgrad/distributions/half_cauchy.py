"""torch.distributions.half_cauchy: PyTorch's module of HalfCauchy (defined in transformed.py)."""
from .transformed import HalfCauchy

__all__ = ["HalfCauchy"]
