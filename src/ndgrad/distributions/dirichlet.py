"""torch.distributions.dirichlet: PyTorch's module of Dirichlet (defined in gamma.py)."""
from .gamma import Dirichlet

__all__ = ["Dirichlet"]
