"""torch.distributions.gumbel: PyTorch's module of Gumbel (defined in continuous.py)."""
from .continuous import Gumbel

__all__ = ["Gumbel"]
