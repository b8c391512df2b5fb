"""`torch._subclasses`: what libraries import from it. ndgrad has no fake (data-less) tensors:
every tensor holds its values, so `is_fake` answers False and FakeTensorMode cannot be entered."""
from .fake_tensor import FakeTensor, FakeTensorMode, is_fake  # noqa: F401
