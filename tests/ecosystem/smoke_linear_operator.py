import torch
from linear_operator.operators import DenseLinearOperator, DiagLinearOperator, KroneckerProductLinearOperator
from linear_operator import solve
from _common import det, show
A = det(4, 4)
A = A @ A.mT + 4 * torch.eye(4, dtype=torch.float64)
op = DenseLinearOperator(A)
show("solve", solve(op, det(4, 2)))
show("logdet", op.logdet().item())
show("matmul", torch.matmul(det(2, 4), op))
show("rmatmul", det(2, 4) @ op)
show("diag", (DiagLinearOperator(torch.arange(1.0, 4.0, dtype=torch.float64)) @ det(3, 2)))
K = KroneckerProductLinearOperator(DenseLinearOperator(A[:2, :2]), DenseLinearOperator(A[:2, :2]))
show("kron", K.to_dense())
