"""torch.fx.experimental: proxy_tensor.get_proxy_mode (no proxy mode is ever active)."""
from . import proxy_tensor  # noqa: F401
