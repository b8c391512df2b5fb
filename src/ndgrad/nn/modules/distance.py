"""torch.nn.modules.distance (the classes live in upsampling.py)."""
from .upsampling import PairwiseDistance, CosineSimilarity

__all__ = ["PairwiseDistance", "CosineSimilarity"]
