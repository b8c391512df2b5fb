"""torch.signal.windows: SciPy's window functions, as PyTorch computes them (each a few ndgrad
ops on a linspace, so `requires_grad=True` gives a window with a graph, as PyTorch's)."""
from .windows import (bartlett, blackman, cosine, exponential, gaussian, general_cosine,
                      general_hamming, hamming, hann, kaiser, nuttall)

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]
