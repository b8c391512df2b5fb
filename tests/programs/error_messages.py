import torch
import torch.nn as nn
import torch.nn.functional as F
cases = [
    lambda: nn.Linear(2, 5)(torch.ones(4, 3)),
    lambda: F.cross_entropy(torch.ones(2, 3), torch.tensor([0.0, 1.0])),
    lambda: torch.ones(2, requires_grad=True).mul(2).backward(),
    lambda: torch.ones(2).sum().backward(),
    lambda: torch.ones(2, requires_grad=True).add_(1),
    lambda: torch.ones(2, 3).t().view(6),
    lambda: torch.stack([torch.ones(3), torch.ones(4)]),
    lambda: torch.cat([torch.ones(2, 2), torch.ones(3, 3)], 1),
    lambda: torch.ones(3)[5],
    lambda: nn.Embedding(3, 2)(torch.tensor([5])),
    lambda: nn.Conv2d(1, 2, 3)(torch.ones(28, 28, 2, 2, 2)),
    lambda: torch.ones(2, 2) @ torch.ones(2, 2, dtype=torch.float64),
    lambda: torch.ones(2, dtype=torch.long).requires_grad_(),
    lambda: torch.ones(2).item(),
    lambda: F.nll_loss(torch.ones(2, 3), torch.tensor([0, 5])),
    lambda: torch.ones(2, 3) + torch.ones(3, 2),
    lambda: torch.ones(2, 3).reshape(4, 2),
    lambda: torch.ones(2, 3).sum(dim=2),
    lambda: torch.ones(2, 3).permute(0),
    lambda: torch.ones(2, 3).transpose(0, 3),
    lambda: torch.ones(2, 3).expand(3, 3),
    lambda: torch.ones(2, 3).squeeze(4),
    lambda: torch.tensor([1, 2]) / torch.tensor([0, 1]) if False else torch.ones(2).masked_fill(torch.tensor([1, 0]), 0.0),
    lambda: torch.gather(torch.ones(2, 3), 1, torch.tensor([[0, 5]])),
    lambda: torch.zeros(3).index_select(0, torch.tensor([0.0])),
    lambda: nn.BatchNorm1d(3)(torch.ones(1, 3)),
    lambda: nn.LSTM(3, 4)(torch.ones(5, 2, 4)),
    lambda: F.mse_loss(torch.ones(2, requires_grad=True), torch.ones(3)),
    lambda: torch.optim.SGD([torch.ones(2, requires_grad=True) * 2], lr=0.1),
    lambda: torch.optim.Adam([], lr=0.1),
    lambda: torch.ones(2, 2).mm(torch.ones(3, 2)),
    lambda: torch.ones(3).dot(torch.ones(4)),
    lambda: torch.bmm(torch.ones(2, 2, 3), torch.ones(3, 3, 2)),
    lambda: torch.ones(2, 3).view(-1, -1),
    lambda: torch.tensor([[1, 2], [3]]),
    lambda: torch.ones(2).backward(torch.ones(3)),
    lambda: torch.autograd.grad(torch.ones(2, requires_grad=True).sum(), torch.ones(2, requires_grad=True)),
    lambda: torch.ones(2, 2)[torch.tensor([True, False, True])],
    lambda: torch.softmax(torch.ones(2, 2), dim=3),
    lambda: torch.ones(3, 4).split([1, 1], 0),
    lambda: torch.ones(2, 3).unflatten(1, (2, 2)),
    lambda: F.binary_cross_entropy(torch.tensor([0.5, 1.5]), torch.tensor([0.0, 1.0])),
    lambda: F.one_hot(torch.tensor([3]), 2),
    lambda: torch.arange(5).float().mean(dtype=torch.long) if False else torch.arange(5).mean(),
    lambda: nn.Linear(3, 2).load_state_dict({"weight": torch.ones(2, 3)}),
    lambda: nn.Module().register_buffer("a.b", torch.ones(1)),
    lambda: torch.randn(2, 3).max(dim=5),
    lambda: torch.ones(4).view(3, -1),
    lambda: torch.zeros(2, 2).scatter_(1, torch.tensor([[0], [3]]), 1.0),
]
for i, c in enumerate(cases):
    try:
        c()
        print(i, "no error")
    except Exception as e:
        print(i, type(e).__name__, str(e).split("\nndgrad:")[0][:300])
result = {}
