"""torch.jit.annotations: TorchScript's type annotations (Python's typing here)."""
from typing import Any, Dict, List, Optional, Tuple, Union  # noqa: F401
from .._jit_internal import BroadcastingList1, BroadcastingList2, BroadcastingList3  # noqa: F401
