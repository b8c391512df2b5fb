import torch
import schedulefree
from _common import det, init, show
for name in ("AdamWScheduleFree", "SGDScheduleFree", "RAdamScheduleFree"):
    model = init(torch.nn.Linear(3, 2).double())
    opt = getattr(schedulefree, name)(model.parameters(), lr=0.01)
    opt.train()
    for _ in range(3):
        opt.zero_grad()
        ((model(det(4, 3)) - 1) ** 2).mean().backward()
        opt.step()
    opt.eval()
    show(name, model.weight)
