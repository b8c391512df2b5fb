"""torch.distributions.beta: PyTorch's module of Beta (defined in gamma.py)."""
from .gamma import Beta

__all__ = ["Beta"]
