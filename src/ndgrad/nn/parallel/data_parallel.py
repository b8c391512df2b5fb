"""DataParallel as PyTorch runs it on a machine without GPUs: the wrapped module, called as is.

PyTorch's DataParallel replicates the module on each visible GPU and splits the batch; with no
accelerator it keeps `module`, sets `device_ids = []` and forwards every call to the module
unchanged. ndgrad has no accelerator, so that is the whole behaviour (state_dict keys get the
`module.` prefix, as PyTorch's).
"""
from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """The functional form; like PyTorch's without an accelerator it cannot pick a device."""
    raise RuntimeError("device type could not be determined")
