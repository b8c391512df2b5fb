import torch
from lion_pytorch import Lion
from _common import det, init, show
model = init(torch.nn.Linear(3, 2).double())
opt = Lion(model.parameters(), lr=1e-2, weight_decay=1e-2)
for _ in range(3):
    opt.zero_grad()
    ((model(det(4, 3)) - 1) ** 2).mean().backward()
    opt.step()
show("lion", model.weight)
