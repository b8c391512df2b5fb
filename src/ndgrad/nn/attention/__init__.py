"""torch.nn.attention: choosing scaled_dot_product_attention's backend.

As on PyTorch's CPU, two kernels: the fused flash kernel (one node, taken where PyTorch's
dispatch checks allow it) and the composite math path. The choice is recorded and restored
exactly as PyTorch's context managers do; `scaled_dot_product_attention` reads the flash and
math flags (nn/functional.py: _flash_cpu), and with neither applicable raises PyTorch's "No
available kernel" error. The other backends' flags are stored (no CUDA kernels here).
"""
import contextlib
import enum
import logging

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS",
           "register_flash_attention_impl", "activate_flash_attention_impl",
           "list_flash_attention_impls", "current_flash_attention_impl",
           "restore_flash_attention_impl"]

WARN_FOR_UNFUSED_KERNELS = False
logger = logging.getLogger(__name__)


class SDPBackend(enum.IntEnum):
    """The scaled_dot_product_attention backends."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __repr__(self):
        return f"<SDPBackend.{self.name}: {self.value}>"

    def __str__(self):
        return f"SDPBackend.{self.name}"


_SELECTABLE = (SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION,
               SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH, SDPBackend.OVERRIDEABLE)
_enabled = dict.fromkeys(_SELECTABLE, True)
_priority = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH,
             SDPBackend.CUDNN_ATTENTION, SDPBackend.OVERRIDEABLE]


def _cur_sdpa_kernel_backends(with_priority=False):
    backends = [b for b in _SELECTABLE if _enabled[b]]
    if with_priority:
        backends.sort(key=_priority.index)
    return backends


def _sdpa_kernel(backends, set_priority=False):
    for b in _SELECTABLE:
        _enabled[b] = b in backends
    if set_priority:
        order = [SDPBackend(int(b)) for b in backends]
        _priority[:] = order + [b for b in _priority if b not in order]


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within the block, scaled_dot_product_attention may use only `backends` (a SDPBackend or
    a list of them; with set_priority, in that order); the previous choice comes back after."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend "
                             f"instances, got {type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(dict.fromkeys(backends))
    previous = _cur_sdpa_kernel_backends(with_priority=set_priority)
    try:
        _sdpa_kernel(backends, set_priority)
        yield {}
    finally:
        _sdpa_kernel(previous, set_priority)


# ---------------------------------------------------------------- flash attention implementations

_FLASH_ATTENTION_IMPLS = {}
_FLASH_ATTENTION_ACTIVE = None


def register_flash_attention_impl(impl, *, register_fn):
    """Register `register_fn` (called on activation; may return a handle with .remove())."""
    _FLASH_ATTENTION_IMPLS[impl] = register_fn


def activate_flash_attention_impl(impl):
    global _FLASH_ATTENTION_ACTIVE
    restore_flash_attention_impl(_raise_warn=False)
    register_fn = _FLASH_ATTENTION_IMPLS.get(impl)
    if register_fn is None:
        raise ValueError(f"Unknown flash attention impl '{impl}'. Available implementations: "
                         f"{list_flash_attention_impls()}")
    handle = register_fn()
    if handle is not None:
        _FLASH_ATTENTION_ACTIVE = (impl, handle)


def list_flash_attention_impls():
    return list(_FLASH_ATTENTION_IMPLS.keys())


def current_flash_attention_impl():
    return None if _FLASH_ATTENTION_ACTIVE is None else _FLASH_ATTENTION_ACTIVE[0]


def restore_flash_attention_impl(_raise_warn=True):
    global _FLASH_ATTENTION_ACTIVE
    handle = None if _FLASH_ATTENTION_ACTIVE is None else _FLASH_ATTENTION_ACTIVE[1]
    if handle is not None:
        handle.remove()
    elif _raise_warn:
        logger.warning("Trying to restore default FA2 impl when no custom impl was activated")
    _FLASH_ATTENTION_ACTIVE = None
