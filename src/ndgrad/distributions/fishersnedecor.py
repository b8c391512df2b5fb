"""torch.distributions.fishersnedecor: PyTorch's module of FisherSnedecor (defined in gamma.py)."""
from .gamma import FisherSnedecor

__all__ = ["FisherSnedecor"]
