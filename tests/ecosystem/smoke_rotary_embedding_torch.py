import torch
from rotary_embedding_torch import RotaryEmbedding
from _common import det, show
rot = RotaryEmbedding(dim=8)
q = det(1, 2, 6, 16, dtype=torch.float32)
show("rotate", rot.rotate_queries_or_keys(q))
show("freqs", rot.freqs)
