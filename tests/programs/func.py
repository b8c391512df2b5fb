import numpy as np
import torch

class MyExp(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y

    @staticmethod
    def vmap(info, in_dims, x):
        return MyExp.apply(x), in_dims[0]

class Split(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k: int):
        ctx.k = k
        idx = torch.argmax(x)
        ctx.mark_non_differentiable(idx)
        return x * k, idx

    @staticmethod
    def backward(ctx, g, gidx):
        return g * ctx.k, None

x = torch.tensor([0.5, 1.0, -1.0], dtype=torch.float64, requires_grad=True)
y = MyExp.apply(x)
a, i = Split.apply(y, 3)
print(y.grad_fn.__class__.__name__, a.grad_fn.__class__.__name__, i.requires_grad)
a.sum().backward()
print(x.grad)
print(torch.autograd.gradcheck(MyExp.apply, (x,)))
from torch.func import grad, vmap
print(grad(lambda t: MyExp.apply(t).sum())(x.detach()))
print(vmap(MyExp.apply)(x.detach().reshape(3, 1)))
result = {"g": x.grad}
