import torch
import zuko
from _common import det, init, show
flow = init(zuko.flows.MAF(features=3, context=2, transforms=2, hidden_features=(8,)).double(), 0.1)
x, c = det(4, 3), det(4, 2)
show("log_prob", flow(c).log_prob(x))
show("nsf", init(zuko.flows.NSF(features=2, transforms=1, hidden_features=(8,)).double(), 0.1)().log_prob(det(3, 2)))
loss = -flow(c).log_prob(x).mean()
loss.backward()
show("grad", next(flow.parameters()).grad)
