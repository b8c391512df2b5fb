"""torch.distributions.pareto: PyTorch's module of Pareto (defined in transformed.py)."""
from .transformed import Pareto

__all__ = ["Pareto"]
