# A small VAE on synthetic data: Normal.rsample for the reparameterised sample, closed-form KL
# against the prior with kl_divergence, Normal.log_prob for the reconstruction term; float64, Adam.
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Normal, kl_divergence


class VAE(nn.Module):
    def __init__(self, d=6, h=8, z=2):
        super().__init__()
        self.enc = nn.Linear(d, h)
        self.mu = nn.Linear(h, z)
        self.logvar = nn.Linear(h, z)
        self.dec1 = nn.Linear(z, h)
        self.dec2 = nn.Linear(h, d)
        self.log_sigma_x = nn.Parameter(torch.zeros(d))

    def forward(self, x, eps):
        hid = torch.tanh(self.enc(x))
        q = Normal(self.mu(hid), torch.exp(0.5 * self.logvar(hid)))
        z = q.loc + q.scale * eps                         # the reparameterisation, fixed noise
        recon = self.dec2(torch.tanh(self.dec1(z)))
        prior = Normal(torch.zeros_like(q.loc), torch.ones_like(q.scale))
        kl = kl_divergence(q, prior).sum(-1)
        rec = Normal(recon, torch.exp(self.log_sigma_x)).log_prob(x).sum(-1)
        return (kl - rec).mean(), q


torch.set_default_dtype(torch.float64)
model = VAE()
rng = np.random.default_rng(5)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)) * 0.4))

t = torch.arange(24.0).reshape(4, 6)
x = torch.sin(0.3 * t) + 0.1 * torch.cos(t)
eps = torch.tensor(rng.standard_normal((4, 2)))

opt = torch.optim.Adam(model.parameters(), lr=0.02)
losses = []
for step in range(10):
    opt.zero_grad()
    loss, q = model(x, eps)
    loss.backward()
    opt.step()
    losses.append(loss.item())
    print(f"step {step}: loss {loss.item():.10f}")

# rsample is reparameterised: its gradient with respect to loc is one, whatever the noise drawn
loc = torch.zeros(3, requires_grad=True)
s = Normal(loc, torch.ones(3)).rsample((5,))
s.sum().backward()
print(tuple(s.shape), s.requires_grad, loc.grad)
torch.set_default_dtype(torch.float32)
result = {"losses": losses, "mu_w": model.mu.weight.detach(), "loc_grad": loc.grad}
