"""Optimizers on 0-d parameters (a temperature, a log-scale: pyro's params are often scalars)
give PyTorch's values bit for bit. NumPy's arithmetic on 0-d arrays returns scalars, which the
in-place steps of the array kernels could not change: Adam's denominator lost its eps (a zero
gradient made the parameter NaN, others were off by eps)."""
import pytest

import ndgrad

torch = pytest.importorskip("torch")

NAMES = ["Adam", "AdamW", "Adamax", "NAdam", "RAdam", "Adagrad", "Adadelta", "RMSprop",
         "Rprop", "ASGD", "SGD"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_zero_dim_parameters(name, dtype):
    got = []
    for T in (torch, ndgrad):
        out = []
        for g0 in (0.0, 0.25, -1e-3):
            p = T.tensor(0.5, dtype=getattr(T, dtype), requires_grad=True)
            kw = {"lr": 1e-3, **({"momentum": 0.9} if name == "SGD" else {})}
            opt = getattr(T.optim, name)([p], **kw)
            for k in range(3):
                p.grad = T.tensor(g0 * (k + 1), dtype=getattr(T, dtype))
                opt.step()
            out.append(p.item())
        got.append(out)
    assert got[1] == got[0]
