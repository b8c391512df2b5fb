"""torch.distributions.laplace: PyTorch's module of Laplace (defined in continuous.py)."""
from .continuous import Laplace

__all__ = ["Laplace"]
