"""torch.distributions.studentT: PyTorch's module of StudentT (defined in continuous.py)."""
from .continuous import StudentT

__all__ = ["StudentT"]
