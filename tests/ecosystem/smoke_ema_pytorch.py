import torch
from ema_pytorch import EMA
from _common import det, init, show
net = init(torch.nn.Linear(3, 2).double())
ema = EMA(net, beta=0.9, update_after_step=0, update_every=1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(3):
    opt.zero_grad()
    ((net(det(4, 3)) - 1) ** 2).mean().backward()
    opt.step()
    ema.update()
show("ema", ema.ema_model.weight)
show("out", ema(det(2, 3)))
