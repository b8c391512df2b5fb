"""torch.cuda.amp: the deprecated spellings of torch.amp's autocast, GradScaler, custom_fwd and
custom_bwd for device_type "cuda"."""
import functools
import warnings

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


def autocast(enabled=True, dtype=None, cache_enabled=True):
    from .. import amp, _dtype as D
    warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                  "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
    return amp.autocast("cuda", dtype=D.float16 if dtype is None else dtype, enabled=enabled,
                        cache_enabled=cache_enabled)


def GradScaler(init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
               growth_interval=2000, enabled=True):
    from .. import amp
    warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                  "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning,
                  stacklevel=2)
    return amp.GradScaler("cuda", init_scale, growth_factor, backoff_factor, growth_interval,
                          enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    from .. import amp
    warnings.warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.",
                  FutureWarning, stacklevel=2)
    return functools.partial(amp.custom_fwd, device_type="cuda")(fwd=fwd,
                                                                 cast_inputs=cast_inputs)


def custom_bwd(bwd):
    from .. import amp
    warnings.warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_bwd(args..., device_type='cuda')` instead.",
                  FutureWarning, stacklevel=2)
    return functools.partial(amp.custom_bwd, device_type="cuda")(bwd)
