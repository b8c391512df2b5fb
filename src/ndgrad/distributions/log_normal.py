"""torch.distributions.log_normal: PyTorch's module of LogNormal (defined in continuous.py)."""
from .continuous import LogNormal

__all__ = ["LogNormal"]
