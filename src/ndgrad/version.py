"""`torch.version`: the PyTorch release whose API ndgrad gives (2.13.0), with ndgrad's own
version as the local label, as a build's label names its variant in PyTorch ("2.13.0+cpu").
There is no CUDA/ROCm/XPU build: those are None, as in a CPU wheel of PyTorch (CuPy, when
present, is reached through `torch.cuda`, not this module)."""
from .torch_version import TorchVersion

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]

ndgrad_version = "0.1.0"                    # the distribution's version (pyproject.toml)
torch_api_version = "2.13.0"                # the PyTorch release whose API ndgrad follows
__version__ = TorchVersion(f"{torch_api_version}+ndgrad{ndgrad_version}")
debug = False
cuda = None
git_version = "Unknown"
hip = None
rocm = None
xpu = None
