# stdout: differs (it prints grad_fn objects: addresses, and AsStridedBackward0 vs SelectBackward0 after an in-place op through a view)
import torch
base = torch.zeros(4, 3)
w = torch.ones(3, requires_grad=True)
v = base[1]
v.copy_(w * 2)
base[2:, 1] = w[:2] ** 2
base.diagonal().mul_(3)
out = (base * torch.arange(12.).view(4, 3)).sum()
out.backward()
print(base, base.grad_fn, v.grad_fn, w.grad)
a = torch.ones(2, 2, requires_grad=True)
b = a * 1
c = b.view(4)
c[0] = 5
print(b, b.grad_fn.__class__.__name__, b._version, c._version)
b.sum().backward()
print(a.grad)
x = torch.ones(3, requires_grad=True)
y = x.sigmoid()
z = y * 2
try:
    y.mul_(2)
    z.backward(torch.ones(3))
    y.sum().backward()
except RuntimeError as e:
    print(str(e).split("\n")[0])
t = torch.arange(6.).view(2, 3)
u = t.t()
u[0, 1] = 100
print(t, u.is_contiguous(), t.data_ptr() == u.data_ptr(), t.untyped_storage().nbytes() if hasattr(t, "untyped_storage") else 24)
s = torch.ones(3)
s2 = s.detach()
s2.add_(1)
print(s, s2, s._version)
k = torch.ones(2, requires_grad=True)
with torch.no_grad():
    k.mul_(2)
print(k, k.is_leaf, k.grad_fn)
m = torch.zeros(5)
m[torch.tensor([0, 0, 2])] += 1
print(m)
m.index_add_(0, torch.tensor([0, 0, 2]), torch.ones(3))
print(m, m.unsqueeze(0).expand(2, 5).is_contiguous())
result = {"wg": w.grad, "ag": a.grad}
