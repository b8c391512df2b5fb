"""torch.nn.modules.pixelshuffle (the classes live in upsampling.py and fold.py)."""
from .upsampling import PixelShuffle
from .fold import PixelUnshuffle

__all__ = ["PixelShuffle", "PixelUnshuffle"]
