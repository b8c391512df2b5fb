"""Lazy modules: LazyLinear, LazyConv*, LazyConvTranspose*, LazyBatchNorm*, LazyInstanceNorm*,
whose input sizes are inferred from the first input they see (PyTorch's LazyModuleMixin)."""
import itertools

from .module import Module
from .linear import Linear
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d,
                            InstanceNorm2d, InstanceNorm3d)
from ..parameter import UninitializedParameter, UninitializedBuffer
from ..._creation import tensor
from ... import _dtype as D
from ...autograd.grad_mode import no_grad

__all__ = ["LazyLinear", "LazyModuleMixin", "LazyConv1d", "LazyConv2d", "LazyConv3d",
           "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class LazyLinear(Linear):
    """Its weight and bias are UninitializedParameters until the first forward (or a
    load_state_dict) fixes in_features; then it initialises them as Linear does and turns into
    a Linear."""
    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        Module.__init__(self)
        self.in_features = 0
        self.out_features = out_features
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        else:
            self.register_parameter("bias", None)

    def has_uninitialized_params(self):
        return any(isinstance(p, UninitializedParameter)
                   for p in self._parameters.values() if p is not None)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()

    def forward(self, input):
        self.initialize_parameters(input)
        if self.in_features == 0:  # materialized by load_state_dict
            self.in_features = self.weight.shape[-1]
        self.__class__ = self.cls_to_become
        return Linear.forward(self, input)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                lazy = isinstance(p, UninitializedParameter)
                destination[prefix + name] = p if (keep_vars or lazy) else p.detach()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        for name, p in self._parameters.items():
            key = prefix + name
            if isinstance(p, UninitializedParameter) and key in state_dict:
                src = state_dict[key]
                if not isinstance(src, UninitializedParameter):
                    p.materialize(src.shape)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


def _is_lazy(t):
    return isinstance(t, (UninitializedParameter, UninitializedBuffer))


class LazyModuleMixin:
    """A module whose parameters (and buffers) are UninitializedParameters until its first
    forward infers their shapes from the input (initialize_parameters); then it becomes
    cls_to_become. load_state_dict materializes them from the checkpoint's shapes."""
    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(LazyModuleMixin._infer_parameters)

    def has_uninitialized_params(self):
        return any(_is_lazy(t) for t in itertools.chain(self._parameters.values(),
                                                        self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}")

    @staticmethod
    def _infer_parameters(module, args):
        with no_grad():
            module.initialize_parameters(*args)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
        module._finish_lazy()

    def _finish_lazy(self):
        hook = self.__dict__.pop("_initialize_hook", None)
        if hook is not None:
            hook.remove()
        if self.cls_to_become is not None:
            self.__class__ = self.cls_to_become

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if (keep_vars or _is_lazy(p)) else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if (keep_vars or _is_lazy(b)) else b.detach()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        for name, t in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and _is_lazy(t) and not _is_lazy(state_dict[key]):
                with no_grad():
                    t.materialize(state_dict[key].shape)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize "
                           "the modules")


# ---------------------------------------------------------------- convolutions

class _LazyConvXdMixin(LazyModuleMixin):
    def _lazy_init(self, out_channels, bias, dtype, device=None):
        """The _ConvNd built with in_channels=0 turns its weight and bias lazy."""
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups)
            else:
                shape = (self.out_channels, self.in_channels // self.groups)
            self.weight.materialize(shape + tuple(self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input):
        n = self._nd + 1
        if input.ndim not in (n, n + 1):
            raise RuntimeError(f"Expected {n}D (unbatched) or {n + 1}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: "
                               f"{input.shape}")
        return input.shape[1] if input.ndim == n + 1 else input.shape[0]


def _lazy_conv(name, base, transposed):
    if transposed:
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                     groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                     dtype=None):
            # in_channels 0 and no bias: nothing is drawn before the shapes are known
            base.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups,
                          False, dilation, padding_mode, device, dtype)
            self._lazy_init(out_channels, bias, dtype, device)
    else:
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                     groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
            base.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False,
                          padding_mode, device, dtype)
            self._lazy_init(out_channels, bias, dtype, device)

    def _init(self, *args, **kwargs):
        __init__(self, *args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(LazyModuleMixin._infer_parameters)

    doc = (f"A {base.__name__} whose in_channels is inferred from the first input: its weight "
           "and bias are UninitializedParameters until then.")
    return type(name, (_LazyConvXdMixin, base), {
        "__init__": _init, "cls_to_become": base, "__doc__": doc, "__module__": __name__})


LazyConv1d = _lazy_conv("LazyConv1d", Conv1d, False)
LazyConv2d = _lazy_conv("LazyConv2d", Conv2d, False)
LazyConv3d = _lazy_conv("LazyConv3d", Conv3d, False)
LazyConvTranspose1d = _lazy_conv("LazyConvTranspose1d", ConvTranspose1d, True)
LazyConvTranspose2d = _lazy_conv("LazyConvTranspose2d", ConvTranspose2d, True)
LazyConvTranspose3d = _lazy_conv("LazyConvTranspose3d", ConvTranspose3d, True)


# ---------------------------------------------------------------- normalization

class _LazyNormBase(LazyModuleMixin):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):
        # built with 0 features and nothing affine or tracked, then made lazy
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=D.int64, device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


def _lazy_norm(name, base):
    doc = (f"A {base.__name__} whose num_features is inferred from the first input (its "
           "dim 1).")
    return type(name, (_LazyNormBase, base), {
        "cls_to_become": base, "__doc__": doc, "__module__": __name__})


LazyBatchNorm1d = _lazy_norm("LazyBatchNorm1d", BatchNorm1d)
LazyBatchNorm2d = _lazy_norm("LazyBatchNorm2d", BatchNorm2d)
LazyBatchNorm3d = _lazy_norm("LazyBatchNorm3d", BatchNorm3d)
LazyInstanceNorm1d = _lazy_norm("LazyInstanceNorm1d", InstanceNorm1d)
LazyInstanceNorm2d = _lazy_norm("LazyInstanceNorm2d", InstanceNorm2d)
LazyInstanceNorm3d = _lazy_norm("LazyInstanceNorm3d", InstanceNorm3d)
