"""A current PyTorch training script: it picks its device through torch.accelerator, trains in
float64 there and prints its losses; then, on an accelerator, one mixed-precision step
(autocast + GradScaler) as the AMP recipe writes it."""
import sys

import torch

acc = torch.accelerator.current_accelerator()
device = acc if acc is not None else torch.device("cpu")
print(f"device: {device.type}", file=sys.stderr)

model = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
model = model.double()
with torch.no_grad():   # (deterministic weights and data: the losses compare with PyTorch's)
    for i, p in enumerate(model.parameters()):
        w = torch.linspace(-0.6, 0.5 + 0.1 * i, p.numel(), dtype=torch.float64)
        p.copy_(w.reshape(p.shape).sin())
model = model.to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
x = torch.linspace(-2, 2, 256, dtype=torch.float64).reshape(64, 4).cos()
y = (x ** 2).sum(1, keepdim=True)
x, y = x.to(device), y.to(device)
losses = []
for step in range(20):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    if step % 5 == 4:
        print(f"step {step + 1}: loss {loss.item():.10f}")
        losses.append(loss.item())
result = {"losses": losses}   # (tests/test_programs_files.py compares it with PyTorch's)

if torch.accelerator.is_available():
    torch.accelerator.synchronize()
    print(f"memory allocated: {torch.accelerator.memory_allocated() > 0}", file=sys.stderr)
    model = model.float()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler(device.type)
    with torch.autocast(device.type, dtype=torch.float16):
        out = model(x.float())
        loss = torch.nn.functional.mse_loss(out, y.float())
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    print(f"amp: out {out.dtype}, loss {loss.dtype}, grad {model[0].weight.grad.dtype}, "
          f"scale {scaler.get_scale()}", file=sys.stderr)
