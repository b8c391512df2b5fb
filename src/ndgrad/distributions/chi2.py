"""torch.distributions.chi2: PyTorch's module of Chi2 (defined in gamma.py)."""
from .gamma import Chi2

__all__ = ["Chi2"]
