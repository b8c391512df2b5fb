import io
import numpy as np
import torch
import torch.nn as nn
rng = np.random.default_rng(9)
a = np.ones(3, dtype=np.float32)
t = torch.from_numpy(a)
a[0] = 5
print(t, t.numpy() is not None, torch.as_tensor(a).dtype)
x = torch.tensor([1.0, 2.0, 3.0])
x.add_(torch.ones(3), alpha=2).clamp_(max=4.5)
print(x, x.type(torch.DoubleTensor).dtype, x.type(), x.new_zeros(2, 2).dtype)
y = torch.zeros(2, 3)
y.data.normal_() if False else None
print(y.new_full((2,), 3.0), torch.empty(0).numel(), torch.tensor([]).shape)
@torch.no_grad()
def f(z):
    return z * 2
w = torch.ones(2, requires_grad=True)
print(f(w).requires_grad)
with torch.inference_mode():
    q = w * 3
print(q.requires_grad)
m = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 1)))
print([n for n, _ in m.named_modules()], [n for n, _ in m.named_parameters()])
print(m[2][0], len(m), m[-1])
buf = io.BytesIO()
torch.save(m.state_dict(), buf)
buf.seek(0)
sd = torch.load(buf, weights_only=True)
print(list(sd.keys()))
m2 = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 1)))
r = m2.load_state_dict(sd)
print(r)
try:
    m2.load_state_dict({"0.weight": torch.zeros(3, 2)})
except RuntimeError as e:
    print(str(e).splitlines()[0])
try:
    m2.load_state_dict({**sd, "0.weight": torch.zeros(4, 2)})
except RuntimeError as e:
    print(str(e))
print(torch.tensor([[1, 2], [3, 4]]).sum(0).tolist(), torch.tensor(5).dim(), torch.tensor([1.5]).half().dtype)
g = torch.Generator().manual_seed(3)
perm = torch.randperm(5, generator=g)
print(sorted(perm.tolist()), perm.dtype)
z = torch.tensor([[0.1, 0.9], [0.8, 0.2]])
print(torch.argmax(z, dim=1, keepdim=True), z.max(1).values, z.max(1)[1], z.min(dim=0).indices)
print(z.T @ z, z.mT, z.matmul(z), torch.mm(z, z).trace(), torch.diag(z), torch.diagonal(z))
print(x.view(3, 1).expand(3, 2).reshape(-1), x.unsqueeze(-1).squeeze(), x[None, :, None].shape)
result = {"x": x, "perm_len": len(perm)}
