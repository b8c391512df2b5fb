import torch
from torchdiffeq import odeint, odeint_adjoint
from _common import show
class F(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.tensor(-0.5, dtype=torch.float64))
    def forward(self, t, y):
        return self.a * y + torch.sin(t)
f = F()
y0 = torch.tensor([1.0, 2.0], dtype=torch.float64)
t = torch.linspace(0, 1, 5, dtype=torch.float64)
for method in ("dopri5", "rk4", "euler"):
    show(method, odeint(f, y0, t, method=method)[-1])
ys = odeint_adjoint(f, y0, t, rtol=1e-8, atol=1e-8)
ys[-1].sum().backward()
show("adjoint grad", f.a.grad.item())
