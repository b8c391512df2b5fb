# tolerance: rtol=1e-4 atol=1e-5 (float32 through three conv layers)
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
rng = np.random.default_rng(16)

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d(p=0.0)
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)
        self.localization = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=7), nn.MaxPool2d(2, stride=2), nn.ReLU(True),
            nn.Conv2d(8, 10, kernel_size=5), nn.MaxPool2d(2, stride=2), nn.ReLU(True))
        self.fc_loc = nn.Sequential(nn.Linear(10 * 3 * 3, 32), nn.ReLU(True), nn.Linear(32, 3 * 2))
        self.fc_loc[2].weight.data.zero_()
        self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

    def stn(self, x):
        xs = self.localization(x)
        xs = xs.view(-1, 10 * 3 * 3)
        theta = self.fc_loc(xs).view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        return F.grid_sample(x, grid, align_corners=False)

    def forward(self, x):
        x = self.stn(x)
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=False)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)

model = Net()
with torch.no_grad():
    for name, p in model.named_parameters():
        if not name.startswith("fc_loc.2"):
            p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.1))
x = torch.from_numpy(rng.standard_normal((4, 1, 28, 28)).astype(np.float32))
y = torch.tensor([1, 2, 3, 4])
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(1):
    opt.zero_grad()
    loss = F.nll_loss(model(x), y)
    loss.backward()
    opt.step()
print(round(loss.item(), 4))
result = {"loss": loss.item(), "g": [p.grad for p in model.parameters()]}
