"""torch.nn.modules.instancenorm (the classes live in normalization.py and lazy.py)."""
from .normalization import _InstanceNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .lazy import LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]
