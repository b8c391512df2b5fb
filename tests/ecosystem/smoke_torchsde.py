import torch
import torchsde
from _common import show
class SDE(torch.nn.Module):
    noise_type, sde_type = "diagonal", "ito"
    def f(self, t, y):
        return -y
    def g(self, t, y):
        return 0.1 * torch.ones_like(y)
y0 = torch.ones(3, 2, dtype=torch.float64)
ts = torch.linspace(0, 1, 4, dtype=torch.float64)
bm = torchsde.BrownianInterval(t0=0.0, t1=1.0, size=(3, 2), dtype=torch.float64, entropy=0)
ys = torchsde.sdeint(SDE(), y0, ts, bm=bm, dt=0.05, method="euler")
show("shape", list(ys.shape))
show("drift only", torchsde.sdeint(type("D", (SDE,), {"g": lambda s, t, y: torch.zeros_like(y)})(), y0, ts, dt=0.05, method="euler")[-1])
