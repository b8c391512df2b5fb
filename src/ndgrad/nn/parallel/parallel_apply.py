"""parallel_apply as PyTorch's without an accelerator: the arguments are checked as PyTorch
checks them, then running on a device raises its "no accelerator" error."""
from .scatter_gather import _device_index

__all__ = ["parallel_apply"]


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    """modules[i](*inputs[i], **kwargs_tup[i]) on devices[i], each in its own thread."""
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number "
                             f"of inputs {len(inputs)}")
    if kwargs_tup is not None and len(modules) != len(kwargs_tup):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number "
                             f"of kwargs_tup {len(kwargs_tup)}")
    if devices is not None:
        if len(modules) != len(devices):
            raise AssertionError(f"The number of modules {len(modules)} is not equal to the "
                                 f"number of devices {len(devices)}")
        for d in devices:
            _device_index(d, "Expected a cuda device, but got: {}")
    if len(modules):           # each module's stream: torch.accelerator.current_stream(device)
        from ...accelerator import ERR_NONE
        raise RuntimeError(ERR_NONE)
    raise AssertionError("No available accelerator found.")
