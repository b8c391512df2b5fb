"""A pytest plugin for the libraries' own tests (tests/test_ecosystem.py): torch's generator is
seeded before each test, so that a test that draws unseeded random inputs gives the same result
on every run. (ema_pytorch's test_ema_tensor_pytree compares a float32 `lerp_` against a sum
with `allclose`'s default tolerances: about one draw in a hundred fails under PyTorch too.)"""
import pytest


@pytest.fixture(autouse=True)
def _seeded_torch():
    import torch   # (ndgrad, under `python -m ndgrad.run`)
    torch.manual_seed(0)
    yield
