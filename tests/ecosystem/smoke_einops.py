import torch
from einops import rearrange, reduce, repeat, einsum, pack, unpack
from einops.layers.torch import Rearrange, Reduce
from _common import det, show
x = det(2, 3, 4, 5)
show("rearrange", rearrange(x, "b c h w -> b (h w) c"))
show("reduce", reduce(x, "b c h w -> b c", "mean"))
show("repeat", repeat(det(3), "c -> c n", n=2))
show("einsum", einsum(det(2, 3), det(3, 4), "i j, j k -> i k"))
p, ps = pack([det(2, 3), det(2, 4)], "b *")
show("pack", (p.shape, [list(s) for s in ps]))
show("layer", torch.nn.Sequential(Rearrange("b c h w -> b (c h w)"), Reduce("b n -> b", "max"))(x))
