"""torch.backends: the flags seeding boilerplate sets. NumPy has no cuDNN, MPS or TF32, so the
flags are stored and the backends report themselves unavailable."""


class _Flags:
    def __init__(self, **flags):
        self.__dict__.update(flags)

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in vars(self).items())})"


def _unavailable():
    return False


cudnn = _Flags(enabled=True, deterministic=False, benchmark=False, allow_tf32=True,
               is_available=_unavailable)
mps = _Flags(is_available=_unavailable, is_built=_unavailable)
cuda = _Flags(matmul=_Flags(allow_tf32=False, allow_fp16_reduced_precision_reduction=True),
              is_built=_unavailable)
mkldnn = _Flags(enabled=True, is_available=_unavailable)
