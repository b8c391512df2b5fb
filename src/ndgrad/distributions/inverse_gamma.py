"""torch.distributions.inverse_gamma: PyTorch's module of InverseGamma (defined in transformed.py)."""
from .transformed import InverseGamma

__all__ = ["InverseGamma"]
