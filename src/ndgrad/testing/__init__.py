"""torch.testing: assert_close (and its deprecated assert_allclose), make_tensor, FileCheck."""
from ._comparison import assert_close, assert_allclose  # noqa: F401
from ._creation import make_tensor  # noqa: F401
from ._filecheck import FileCheck  # noqa: F401

__all__ = ["FileCheck", "assert_allclose", "assert_close", "make_tensor"]
