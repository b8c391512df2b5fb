"""torch.nn.modules.batchnorm: where libraries import the batch-norm classes from (kornia's
`from torch.nn.modules.batchnorm import _BatchNorm`). The classes live in normalization.py."""
from .normalization import _BatchNorm, BatchNorm1d, BatchNorm2d, BatchNorm3d, SyncBatchNorm
from .lazy import _LazyNormBase, LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d

# PyTorch's _NormBase is the common base of _BatchNorm and _InstanceNorm; here _InstanceNorm
# derives from _BatchNorm, so _BatchNorm answers the same isinstance questions.
_NormBase = _BatchNorm

__all__ = ["BatchNorm1d", "LazyBatchNorm1d", "BatchNorm2d", "LazyBatchNorm2d", "BatchNorm3d",
           "LazyBatchNorm3d", "SyncBatchNorm"]
