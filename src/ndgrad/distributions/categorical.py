"""torch.distributions.categorical: PyTorch's module of Categorical (defined in discrete.py)."""
from .discrete import Categorical

__all__ = ["Categorical"]
