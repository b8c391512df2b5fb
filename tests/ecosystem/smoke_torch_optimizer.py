import torch
import torch_optimizer as optim
from _common import det, init, show
for name in ("AdaBound", "DiffGrad", "Lamb", "RAdam", "Yogi", "AdaBelief", "QHAdam", "SWATS"):
    model = init(torch.nn.Linear(3, 2).double())
    opt = getattr(optim, name)(model.parameters(), lr=0.01)
    for _ in range(3):
        opt.zero_grad()
        loss = ((model(det(4, 3)) - 1) ** 2).mean()
        loss.backward()
        opt.step()
    show(name, model.weight)
