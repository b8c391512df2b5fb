import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical, Normal
rng = np.random.default_rng(10)
logits = torch.tensor(rng.standard_normal((4, 3)), requires_grad=True)
d = Categorical(logits=logits)
a = torch.tensor([0, 2, 1, 1])
lp = d.log_prob(a)
ent = d.entropy()
mu = torch.tensor(rng.standard_normal(4), requires_grad=True)
n = Normal(mu, torch.ones(4) * 0.5)
lp2 = n.log_prob(torch.zeros(4))
loss = -(lp * torch.tensor([1., -1., 0.5, 2.])).mean() - 0.01 * ent.mean() - lp2.sum() + torch.distributions.kl_divergence(n, Normal(0.0, 1.0)).sum()
loss.backward()
print(lp, ent, d.probs.sum(-1), lp2, n.mean, n.stddev)
returns = []
R = 0.0
for r in [1.0, 0.0, 1.0, 1.0][::-1]:
    R = r + 0.99 * R
    returns.insert(0, R)
returns = torch.tensor(returns)
returns = (returns - returns.mean()) / (returns.std() + 1e-8)
print(returns)
print(F.smooth_l1_loss(torch.tensor([1., 2.]), torch.tensor([1.5, 0.])))
result = {"g": logits.grad, "gm": mu.grad}
