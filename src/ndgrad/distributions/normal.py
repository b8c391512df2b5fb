"""torch.distributions.normal: PyTorch's module of Normal (defined in continuous.py)."""
from .continuous import Normal

__all__ = ["Normal"]
