import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
rng = np.random.default_rng(8)
logits = torch.from_numpy(rng.standard_normal((5, 4))).requires_grad_()
target = torch.tensor([0, 3, 1, -100, 2])
l1 = F.cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.1)
l2 = F.nll_loss(F.log_softmax(logits, 1), target.clamp(min=0), reduction="sum")
l3 = F.binary_cross_entropy_with_logits(logits, torch.from_numpy(rng.random((5, 4))), pos_weight=torch.tensor([1., 2., 3., 4.], dtype=torch.float64))
l4 = F.kl_div(F.log_softmax(logits, 1), F.softmax(logits.detach() * 2, 1), reduction="batchmean")
l5 = F.smooth_l1_loss(logits, torch.zeros(5, 4, dtype=torch.float64), beta=0.5) + F.huber_loss(logits, torch.ones(5, 4, dtype=torch.float64), delta=2.0)
tot = l1 + l2 + l3 + l4 + l5
tot.backward()
print(l1, l2, l3, l4, l5)
print(nn.CrossEntropyLoss(weight=torch.tensor([1., 2., 3., 4.], dtype=torch.float64))(logits, target.clamp(min=0)))
p = torch.softmax(logits.detach(), 1)
print(F.cross_entropy(logits.detach(), p))
print(torch.nn.functional.normalize(logits.detach(), dim=1).norm(dim=1))
print(F.gelu(torch.tensor([1.0]), approximate="tanh"), F.silu(torch.tensor([1.0])), F.softplus(torch.tensor([1.0]), beta=2))
result = {"g": logits.grad, "tot": tot}
