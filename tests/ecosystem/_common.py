"""Helpers of the ecosystem smoke programs: deterministic inputs and parameters (no random
stream involved), so PyTorch and ndgrad print the same numbers."""
import torch


def det(*shape, scale=1.0, dtype=torch.float64):
    n = 1
    for s in shape:
        n *= s
    return (torch.arange(n, dtype=dtype).reshape(shape) * 0.37).sin() * scale


def init(module, scale=0.2):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(det(*p.shape, scale=scale, dtype=p.dtype) + 0.01 * i)
    return module


def show(name, value):
    if isinstance(value, torch.Tensor):
        value = value.detach().double().flatten()[:6].tolist()
    if isinstance(value, float):
        value = round(value, 6)
    if isinstance(value, (list, tuple)):
        value = [round(v, 6) if isinstance(v, float) else v for v in value]
    print(f"{name}: {value}")
