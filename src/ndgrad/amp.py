"""Automatic mixed precision: `torch.amp` as far as it means something on NumPy.

`GradScaler` is PyTorch's (scale the loss, unscale the gradients, skip steps whose gradients hold
inf/NaN, grow or back off the scale); on a device without CUDA a "cuda" scaler disables itself
with PyTorch's warning, so the usual training boilerplate runs unchanged. `autocast` is accepted
but never changes dtypes: a "cuda" autocast without CUDA disables itself as in PyTorch, and a CPU
autocast (which in PyTorch computes matmuls in bfloat16, a dtype NumPy lacks) warns once and runs
in the tensors' own precision.
"""
import functools
import math
import warnings

from ._backend import cuda_available

__all__ = ["autocast", "GradScaler", "is_autocast_available", "custom_fwd", "custom_bwd"]


def is_autocast_available(device_type):
    return device_type in ("cpu", "cuda")


class autocast:
    """`with torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None):`"""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        self.fast_dtype = dtype
        self._enabled = bool(enabled)
        if self._enabled and device_type == "cuda" and not cuda_available():
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.")
            self._enabled = False
        elif self._enabled and device_type == "cpu":
            warnings.warn("ndgrad: autocast on CPU runs in the tensors' own dtypes (NumPy has no "
                          "bfloat16); mixed precision is disabled.")
            self._enabled = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return wrapper


def is_autocast_enabled(device_type=None):
    return False


def _autocast_dtype(device_type):
    """torch.get_autocast_dtype: float16 for CUDA; CPU's bfloat16 does not exist in NumPy."""
    from ._dtype import float16
    return float16 if device_type == "cuda" else None


def _cast(value, device_type, dtype):
    import collections.abc
    from ._tensor import Tensor
    if isinstance(value, Tensor):
        eligible = (value.is_floating_point() and value.device.type == device_type
                    and value.dtype.name != "float64")
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes)) or type(value).__module__ == "numpy":
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        it = (_cast(v, device_type, dtype) for v in value)
        return type(value)(it) if isinstance(value, (list, tuple)) else it
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for a custom Function's forward: records on ctx whether autocast was on, and
    with `cast_inputs` runs the forward with autocast off and its floating inputs cast.

        @staticmethod
        @torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)
        def forward(ctx, x): ..."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = _autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        on = is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if on:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs),
                           **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorator for a custom Function's backward: runs it under the autocast state that its
    forward (decorated with custom_fwd) saw."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast,
                      dtype=args[0]._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd


class _OptState:
    READY, UNSCALED, STEPPED = 0, 1, 2


class GradScaler:
    """PyTorch's dynamic loss scaler (`torch.amp.GradScaler`)."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if enabled and device == "cuda" and not cuda_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.")
            self._enabled = False
        if self._enabled:
            if not growth_factor > 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if not backoff_factor < 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = float(init_scale)
        self._scale = None                  # a 0-d float32 tensor once first used
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._per_optimizer = {}            # id(optimizer) -> {"stage", "found_inf"}

    # -- the training-loop API

    def scale(self, outputs):
        if not self._enabled:
            return outputs
        from ._tensor import Tensor
        if isinstance(outputs, Tensor):
            return outputs * self._get_scale_tensor().to(outputs.dtype)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        if isinstance(outputs, dict):
            return {k: self.scale(v) for k, v in outputs.items()}
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def unscale_(self, optimizer):
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] is _OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] is _OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv = 1.0 / float(self._get_scale_tensor().item())
        found = False
        from .autograd.grad_mode import no_grad
        from ._dtype import float16
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if g.dtype == float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    if not bool(g.isfinite().all()):
                        found = True
                    g.mul_(inv)
        state["found_inf"] = found
        state["stage"] = _OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._state(optimizer)
        if state["stage"] is _OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is _OptState.READY:
            self.unscale_(optimizer)
        retval = None
        if not state["found_inf"]:
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = _OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        if not self._enabled:
            return
        scale = self._get_scale_tensor()
        if new_scale is not None:
            from ._tensor import Tensor
            value = float(new_scale.item()) if isinstance(new_scale, Tensor) else float(new_scale)
            scale.fill_(value)
        else:
            found = [s["found_inf"] for s in self._per_optimizer.values()
                     if s["stage"] is not _OptState.READY]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(found):
                scale.mul_(self._backoff_factor)
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    grown = float(scale.item()) * self._growth_factor
                    if math.isfinite(grown):
                        scale.fill_(grown)
                    self._growth_tracker = 0
        self._per_optimizer = {}

    # -- inspection and state

    def is_enabled(self):
        return self._enabled

    def get_scale(self):
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale.fill_(self._init_scale)
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])

    # -- internals

    def _get_scale_tensor(self):
        if self._scale is None:
            from ._creation import full
            from ._dtype import float32
            self._scale = full((), self._init_scale, dtype=float32)
        return self._scale

    def _state(self, optimizer):
        return self._per_optimizer.setdefault(
            id(optimizer), {"stage": _OptState.READY, "found_inf": False})
