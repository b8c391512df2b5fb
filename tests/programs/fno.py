# A Fourier-neural-operator layer on a 1-d problem: rfft, learnable complex weights on the
# lowest modes, irfft, plus a pointwise Linear; trained with Adam in float64.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class SpectralConv1d(nn.Module):
    def __init__(self, width, modes):
        super().__init__()
        self.modes = modes
        rng = np.random.default_rng(3)
        w = rng.standard_normal((width, width, modes)) + 1j * rng.standard_normal(
            (width, width, modes))
        self.weight = nn.Parameter(torch.tensor(w / width, dtype=torch.cdouble))
        # the same kind of weights kept as real pairs and viewed as complex
        r = rng.standard_normal((width, modes, 2)) * 0.1
        self.scale = nn.Parameter(torch.tensor(r, dtype=torch.float64))

    def forward(self, x):                       # x: (batch, width, n)
        n = x.shape[-1]
        xf = torch.fft.rfft(x)
        low = xf[:, :, :self.modes]
        s = torch.view_as_complex(self.scale)
        mixed = torch.einsum("bim,iom->bom", low, self.weight) + low * s
        out = torch.zeros(x.shape[0], x.shape[1], n // 2 + 1, dtype=torch.cdouble)
        out[:, :, :self.modes] = mixed
        return torch.fft.irfft(out, n=n)


class FNO(nn.Module):
    def __init__(self, width=4, modes=5):
        super().__init__()
        self.lift = nn.Linear(2, width, dtype=torch.float64)
        self.spec = SpectralConv1d(width, modes)
        self.point = nn.Linear(width, width, dtype=torch.float64)
        self.proj = nn.Linear(width, 1, dtype=torch.float64)

    def forward(self, u):                       # u: (batch, n)
        grid = torch.linspace(0, 1, u.shape[-1], dtype=torch.float64).expand_as(u)
        h = self.lift(torch.stack([u, grid], dim=-1))      # (batch, n, width)
        h = h.permute(0, 2, 1)
        h = self.spec(h) + self.point(h.permute(0, 2, 1)).permute(0, 2, 1)
        h = F.gelu(h)
        return self.proj(h.permute(0, 2, 1)).squeeze(-1)


torch.set_default_dtype(torch.float64)
model = FNO()
rng = np.random.default_rng(4)
with torch.no_grad():
    for p in model.parameters():
        if not p.is_complex() and p is not model.spec.scale:
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)) * 0.3))

n = 32
x = torch.linspace(0, 2 * np.pi, n + 1)[:-1]
k = torch.arange(1, 5, dtype=torch.float64).reshape(4, 1)
u = torch.sin(k * x) + 0.5 * torch.cos(2 * k * x)       # 4 input functions
target = torch.cumsum(u, dim=-1) * (2 * np.pi / n)       # learn an antiderivative

opt = torch.optim.Adam(model.parameters(), lr=0.01)
losses = []
for step in range(8):
    opt.zero_grad()
    loss = F.mse_loss(model(u), target)
    loss.backward()
    opt.step()
    losses.append(loss.item())
    print(f"step {step}: loss {loss.item():.10f}")
print(model.spec.weight.dtype, model.spec.weight.grad.dtype, model.spec.weight.grad.shape)
torch.set_default_dtype(torch.float32)
result = {"losses": losses, "w": model.spec.weight.detach(), "lift": model.lift.weight.detach()}
