"""torch.nn.modules.channelshuffle (the class lives in pooling_more.py)."""
from .pooling_more import ChannelShuffle

__all__ = ["ChannelShuffle"]
