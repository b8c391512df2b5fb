"""torch.random: the default generator's seed and state, and fork_rng.

    with torch.random.fork_rng():
        torch.manual_seed(0); noise = torch.randn(3)    # the outer random stream is untouched
"""
import contextlib

from .._creation import Generator, default_generator

__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed",
           "manual_seed", "seed", "set_rng_state", "thread_safe_generator"]


def set_rng_state(new_state):
    """Set the default generator's state (a uint8 tensor from get_rng_state())."""
    default_generator.set_state(new_state)


def get_rng_state():
    """The default generator's state as a uint8 tensor."""
    return default_generator.get_state()


def manual_seed(seed):
    """Seed the default generator (and, as PyTorch, every CUDA device: none here); returns it."""
    seed = int(seed)
    from .. import cuda
    cuda.manual_seed_all(seed)
    return default_generator.manual_seed(seed)


def seed():
    """Seed the default generator with a nondeterministic number and return it."""
    s = default_generator.seed()
    from .. import cuda
    cuda.manual_seed_all(s)
    return s


def initial_seed():
    return default_generator.initial_seed()


_fork_rng_warned_already = False


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type=None):
    """Restore the CPU random state (and the given devices' states) on exit."""
    if device_type == "meta":
        yield
        return
    from .. import accelerator, cuda
    from .._backend import device as _device
    acc = accelerator.current_accelerator()
    device_type = device_type or (acc.type if acc is not None else "cuda")
    _device(device_type)                      # an unknown type raises torch.device's error
    device_mod = cuda if device_type == "cuda" else None
    if not enabled:
        yield
        return
    if devices is None:
        devices = list(range(device_mod.device_count())) if device_mod else []
    else:
        devices = list(devices)
    cpu_rng_state = get_rng_state()
    device_rng_states = [device_mod.get_rng_state(d) for d in devices]
    try:
        yield
    finally:
        set_rng_state(cpu_rng_state)
        for d, state in zip(devices, device_rng_states):
            device_mod.set_rng_state(state, d)


def thread_safe_generator():
    """In a DataLoader thread worker, that worker's own Generator; otherwise None (the default
    generator). ndgrad's DataLoader workers are processes, so this is None there too."""
    from ..utils.data import get_worker_info
    info = get_worker_info()
    if (info is not None and getattr(info, "worker_method", None) == "thread"
            and getattr(info, "rng", None) is not None):
        return info.rng.torch_generator
    return None
