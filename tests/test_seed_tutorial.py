"""The autograd tutorial's code, run verbatim with ndgrad as `torch`; its output as PyTorch's."""
import contextlib
import io
import re
import sys

import numpy as np

import ndgrad

TUTORIAL = '''
import torch
x = torch.ones(2, 2, requires_grad=True)
print(x)
y = x + 2
print(y)
print(y.grad_fn)
z = y * y * 3
out = z.mean()

print(z, out)
a = torch.randn(2, 2)
a = ((a * 3) / (a - 1))
print(a.requires_grad)
a.requires_grad_(True)
print(a.requires_grad)
b = (a * a).sum()
print(b.grad_fn)

out.backward()
print(x.grad)

x = torch.randn(3, requires_grad=True)

y = x * 2
while y.data.norm() < 1000:
    y = y * 2

print(y)

gradients = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
y.backward(gradients)

print(x.grad)

print(x.requires_grad)
print((x ** 2).requires_grad)

with torch.no_grad():
\tprint((x ** 2).requires_grad)
'''

NUM = r"-?\d+(\.\d*)?(e[+-]\d+)?"
EXPECTED = [
    r"tensor\(\[\[1\., 1\.\],",
    r"        \[1\., 1\.\]\], requires_grad=True\)",
    r"tensor\(\[\[3\., 3\.\],",
    r"        \[3\., 3\.\]\], grad_fn=<AddBackward0>\)",
    r"<AddBackward0 object at 0x[0-9a-f]+>",
    r"tensor\(\[\[27\., 27\.\],",
    r"        \[27\., 27\.\]\], grad_fn=<MulBackward0>\) tensor\(27\., grad_fn=<MeanBackward0>\)",
    r"False",
    r"True",
    r"<SumBackward0 object at 0x[0-9a-f]+>",
    r"tensor\(\[\[4\.5000, 4\.5000\],",
    r"        \[4\.5000, 4\.5000\]\]\)",
    rf"tensor\(\[ *{NUM}, +{NUM}, +{NUM}\], grad_fn=<MulBackward0>\)",
    rf"tensor\(\[ *{NUM}, +{NUM}, +{NUM}\]\)",
    r"True",
    r"True",
    r"False",
]


def run_tutorial(lib):
    saved = sys.modules.get("torch")
    sys.modules["torch"] = lib
    try:
        scope = {"__name__": "__main__"}
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(TUTORIAL, "tutorial.py", "exec"), scope)
    finally:
        if saved is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = saved
    return buf.getvalue().splitlines(), scope


def test_tutorial_prints_what_pytorch_prints():
    lines, scope = run_tutorial(ndgrad)
    assert len(lines) == len(EXPECTED)
    for line, pattern in zip(lines, EXPECTED):
        assert re.fullmatch(pattern, line), (line, pattern)
    x, y, g = scope["x"], scope["y"], scope["gradients"]
    want = g.numpy().astype(np.float64) * (y.detach().numpy() / x.detach().numpy())
    assert np.allclose(x.grad.numpy(), want, rtol=1e-5)
    assert np.linalg.norm(y.detach().numpy()) >= 1000


def test_deterministic_lines_identical_to_torch():
    import pytest
    torch = pytest.importorskip("torch")
    mine, _ = run_tutorial(ndgrad)
    theirs, _ = run_tutorial(torch)
    for i in (0, 1, 2, 3, 5, 6, 7, 8, 10, 11, 14, 15, 16):
        assert mine[i] == theirs[i]
