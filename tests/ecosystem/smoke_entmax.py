import torch
from entmax import sparsemax, entmax15, entmax_bisect, Entmax15Loss, SparsemaxLoss
from _common import det, show
x = det(3, 5, scale=2.0).requires_grad_()
show("sparsemax", sparsemax(x, dim=-1))
show("entmax15", entmax15(x, dim=-1))
show("bisect", entmax_bisect(x, alpha=1.3, dim=-1))
y = torch.tensor([0, 2, 4])
loss = Entmax15Loss()(x, y).sum() + SparsemaxLoss()(x, y).sum()
loss.backward()
show("grad", x.grad)
