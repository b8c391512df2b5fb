"""torch.distributions.half_normal: PyTorch's module of HalfNormal (defined in continuous.py)."""
from .continuous import HalfNormal

__all__ = ["HalfNormal"]
