import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader

class DS(Dataset):
    def __init__(self):
        rng = np.random.default_rng(1)
        self.x = rng.standard_normal((40, 6)).astype(np.float32)
        self.y = rng.integers(0, 3, 40)
    def __len__(self):
        return len(self.x)
    def __getitem__(self, i):
        return {"x": torch.from_numpy(self.x[i]), "y": int(self.y[i]), "name": f"s{i}"}

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.bn = nn.BatchNorm1d(16)
        self.drop = nn.Dropout(0.0)
        self.fc2 = nn.Linear(16, 3)
    def forward(self, x):
        return self.fc2(self.drop(F.relu(self.bn(self.fc1(x)))))

net = Net()
rng = np.random.default_rng(2)
with torch.no_grad():
    for p in net.parameters():
        p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
print(net)
print(sum(p.numel() for p in net.parameters() if p.requires_grad))
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=5)
dl = DataLoader(DS(), batch_size=8, shuffle=False)
for epoch in range(5):
    tot = 0.0
    for batch in dl:
        opt.zero_grad()
        out = net(batch["x"])
        loss = F.cross_entropy(out, batch["y"])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
        tot += loss.item() * batch["x"].size(0)
    sched.step()
    print(f"{epoch} {tot / len(dl.dataset):.4f} {sched.get_last_lr()[0]:.5f}", batch["name"][:2], batch["y"].dtype)
net.eval()
with torch.no_grad():
    preds = net(torch.from_numpy(DS().x)).argmax(dim=1)
print(preds[:10], net.bn.running_mean[:3], net.bn.num_batches_tracked)
result = {"sd": {k: v for k, v in net.state_dict().items()}, "preds": preds}
