# A PyTorch training script written the usual device-agnostic way: it picks "cuda" when
# torch.cuda.is_available(), moves the model and every batch with .to(device), checkpoints with
# map_location. Data and initial weights come from NumPy seeds (the libraries' RNGs differ).
import os
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print("device:", device, file=sys.stderr)
torch.set_default_dtype(torch.float64)   # (the harness restores it)

rng = np.random.default_rng(0)
X = torch.from_numpy(rng.standard_normal((96, 1, 8, 8)))
y = torch.from_numpy((rng.standard_normal(96) > 0).astype(np.int64))
loader = DataLoader(TensorDataset(X, y), batch_size=32, shuffle=False, pin_memory=True)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 4 * 4, 2)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.fc(torch.flatten(x, 1))


model = Net()
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)) * 0.3))
model = model.to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

for epoch in range(3):
    model.train()
    total = 0.0
    for xb, yb in loader:
        xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
        loss = F.cross_entropy(model(xb), yb, label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        total += loss.item() * xb.shape[0]
    sched.step()
    print(f"epoch {epoch}: loss {total / len(X):.10f}")

model.eval()
with torch.no_grad():
    logits = model(X.to(device))
    acc = (logits.argmax(1) == y.to(device)).float().mean().item()
print(f"accuracy {acc:.6f}")
print("logits", logits[:2].cpu().numpy().round(8).tolist())

path = os.path.join(tempfile.mkdtemp(), "ckpt.pt")
torch.save({"model": model.state_dict(), "opt": opt.state_dict()}, path)
state = torch.load(path, map_location=device)
again = Net().to(device)
again.load_state_dict(state["model"])
again.eval()
with torch.no_grad():
    same = torch.equal(again(X.to(device)), logits)
print("reloaded equal:", same)
print("params on device:", all(p.device == device for p in again.parameters()),
      file=sys.stderr)
result = {"loss": total / len(X), "accuracy": acc, "logits": logits.cpu()}
