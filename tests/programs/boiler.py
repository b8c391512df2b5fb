import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import TensorDataset, DataLoader
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.backends.cudnn.benchmark = True
torch.backends.cudnn.deterministic = True
torch.set_float32_matmul_precision("high")
print(device)
rng = np.random.default_rng(7)
X = torch.from_numpy(rng.standard_normal((32, 4)).astype(np.float32))
Y = torch.from_numpy(rng.standard_normal((32, 1)).astype(np.float32))
dl = DataLoader(TensorDataset(X, Y), batch_size=8, num_workers=0, pin_memory=True)
model = nn.Linear(4, 1).to(device)
with torch.no_grad():
    model.weight.copy_(torch.ones(1, 4)); model.bias.zero_()
opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
for xb, yb in dl:
    xb, yb = xb.to(device, non_blocking=True), yb.to(device)
    with torch.autocast(device_type="cpu", enabled=False):
        loss = nn.functional.mse_loss(model(xb), yb)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
print(round(loss.item(), 4), model.weight.device, next(model.parameters()).is_cuda)
print(model.weight.cpu().detach().numpy().shape, X.numpy().dtype, torch.get_default_dtype())
print(torch.is_tensor(X), torch.numel(X), X.element_size(), X.nbytes, X.itemsize)
result = {"w": model.weight, "loss": loss.item()}
scaler = torch.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
model2 = torch.compile(nn.Linear(4, 1))
with torch.no_grad():
    model2.weight.fill_(0.5); model2.bias.zero_()
opt2 = torch.optim.SGD(model2.parameters(), lr=0.1)
for i, (xb, yb) in enumerate(dl):
    loss = nn.functional.mse_loss(model2(xb), yb)
    if i == 2:
        loss = loss * float("inf")
    opt2.zero_grad()
    scaler.scale(loss).backward()
    scaler.unscale_(opt2)
    r = scaler.step(opt2)
    scaler.update()
    print(i, scaler.get_scale(), r, scaler.state_dict()["_growth_tracker"])
print(scaler.is_enabled(), torch.get_float32_matmul_precision())
result["w2"] = model2.weight
