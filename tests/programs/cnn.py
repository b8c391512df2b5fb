import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
rng = np.random.default_rng(6)
x = torch.from_numpy(rng.standard_normal((2, 3, 9, 9)).astype(np.float32))
net = nn.Sequential(
    nn.Conv2d(3, 6, 3, stride=2, padding=1, groups=3, bias=False), nn.BatchNorm2d(6), nn.ReLU(inplace=True),
    nn.Conv2d(6, 4, 3, padding="same", dilation=2), nn.GroupNorm(2, 4), nn.GELU(),
    nn.AvgPool2d(2, ceil_mode=True), nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(4, 2))
with torch.no_grad():
    for p in net.parameters():
        p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.5))
print(net)
y = net(x)
up = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
up2 = F.interpolate(x, size=(4, 5), mode="nearest")
mp, idx = F.max_pool2d(x, 2, return_indices=True)
ct = nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1)
with torch.no_grad():
    for p in ct.parameters():
        p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.5))
z = ct(x)
loss = y.pow(2).mean() + up.mean() + up2.std() + mp.sum() + z.abs().mean()
loss.backward()
print(y.shape, up.shape, up2.shape, mp.shape, idx.dtype, z.shape)
print(loss)
result = {"y": y, "loss": loss, "grads": [p.grad for p in net.parameters()], "ct": [p.grad for p in ct.parameters()]}
