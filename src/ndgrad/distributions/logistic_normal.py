"""torch.distributions.logistic_normal: PyTorch's module of LogisticNormal (defined in transformed.py)."""
from .transformed import LogisticNormal

__all__ = ["LogisticNormal"]
