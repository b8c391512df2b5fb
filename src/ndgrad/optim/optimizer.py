"""Optimizer: parameter groups, per-parameter state, state_dict, zero_grad, hooks
(torch.optim.Optimizer), and the pieces every algorithm shares.

Each algorithm has PyTorch's shape (Note [optimizer structure]):

    class Adam(Optimizer)          checks the hyperparameters; `_init_group` gathers each group's
                                   parameters with gradients and their state (made on first use);
                                   `step` passes them to the functional form
    adam(params, grads, ...)       the functional form (torch.optim.adam.adam): picks a kernel
    _single_tensor_adam(...)       the per-parameter loop, PyTorch's operation order
    _multi_tensor_adam(...)        the same update over lists, on torch._foreach_* (foreach=True)

Note [optimizer structure]
The single-tensor kernels are written once, with Tensor methods, and run two ways. By default
(differentiable=False) every operand is an `ArrayOperand` (optim/_kernels.py): the parameter's or
state's array behind the same in-place methods, rounded as PyTorch's CPU kernels round, with no
Tensor op, no graph and one version bump per tensor at the end (`bump_versions`). With
differentiable=True the same code runs on the Tensors themselves under grad mode, so autograd
records the update as PyTorch's does. The multi-tensor kernels run PyTorch's foreach code on
ndgrad's `torch._foreach_*` (ops/foreach.py). `fused=True` runs the single-tensor loop (ndgrad has
no fused kernels; the flag, its checks and its float32 `step` are kept).
"""
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from copy import deepcopy
import functools
from itertools import chain
import warnings

from .._tensor import Tensor, _make
from ..nn.parameter import Parameter
from .._backend import move, xp_of
from .. import _dtype as D
from ..autograd import grad_mode
from ..autograd._prof_state import HUB as _PROF_HUB
from ..autograd import graph as _graph
from ..ops._fma import _quiet
from ._kernels import STEP_SITE

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]

_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()
_foreach_supported_types = [Tensor, Parameter]


class _RequiredParameter:
    """Singleton marking a hyperparameter without a default."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class RemovableHandle:
    """A handle that removes its hook from the table it was added to (torch.utils.hooks'
    RemovableHandle): `handle.remove()`, or as a context manager."""
    next_id = 0

    def __init__(self, hooks_dict):
        import weakref
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1

    def remove(self):
        hooks_dict = self.hooks_dict_ref()
        if hooks_dict is not None and self.id in hooks_dict:
            del hooks_dict[self.id]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _typename(obj):
    if isinstance(obj, Tensor):
        return "torch." + {"float32": "FloatTensor", "float64": "DoubleTensor",
                           "int64": "LongTensor"}.get(obj.dtype.name, "Tensor")
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", None) else f"{module}.{name}"


# ---------------------------------------------------------------- shared helpers (PyTorch's names)

def _use_grad_for_differentiable(func):
    """step() of PyTorch's own optimizers runs with grad mode set to `differentiable` (off by
    default), whatever the caller's mode. A subclass's own step() is not wrapped: it runs in
    the caller's mode, as in PyTorch."""
    @functools.wraps(func)
    def _use_grad(*args, **kwargs):
        self = args[0]
        prev = grad_mode.is_grad_enabled()
        try:
            grad_mode._state.enabled = bool(self.defaults["differentiable"])
            return func(*args, **kwargs)
        finally:
            grad_mode._state.enabled = prev
    return _use_grad


def _get_value(x):
    """A 0-d tensor's value as a Python number (x itself otherwise)."""
    if isinstance(x, Tensor):
        return x.item()
    return x.item() if hasattr(x, "item") and not isinstance(x, (int, float)) else x


def _stack_if_compiling(x):
    return x


def _disable_dynamo_if_unsupported(single_tensor_fn=None):
    """(PyTorch's torch.compile fallback: nothing is compiled here.)"""
    def wrapper(func):
        return func
    return wrapper


def _get_foreach_kernels_supported_devices():
    return ["cuda", "xpu", "mtia", "privateuseone"]


def _get_fused_kernels_supported_devices():
    return ["mps", "cuda", "xpu", "hpu", "cpu", "mtia", "privateuseone"]


def _default_to_fused_or_foreach(params, differentiable, use_fused=False):
    """PyTorch's defaults: foreach for parameters all on an accelerator, else the for-loop (so
    the single-tensor kernel on the CPU); never for differentiable."""
    if differentiable:
        return False, False
    fused_devices = _get_fused_kernels_supported_devices()
    foreach_devices = _get_foreach_kernels_supported_devices()
    fused = use_fused and all(
        p is None or (type(p) in _foreach_supported_types and p.device.type in fused_devices
                      and p.dtype.is_floating_point) for p in params)
    foreach = not fused and all(
        p is None or (type(p) in _foreach_supported_types and p.device.type in foreach_devices)
        for p in params)
    return fused, foreach


def _device_dtype_check_for_fused(p, cuda_unsupported=False):
    devices = _get_fused_kernels_supported_devices()
    if cuda_unsupported:
        devices.remove("cuda")
    if not (p.device.type in devices and p.dtype.is_floating_point):
        raise RuntimeError(
            "`fused=True` requires all the params to be floating point Tensors of supported "
            f"devices: {devices} but {p.dtype} and {p.device.type}")


def _view_as_real(params, *state_and_grads):
    """Complex tensors of the lists replaced in place by their real views (foreach kernels)."""
    from .. import view_as_real
    for i, p in enumerate(params):
        if p.is_complex():
            params[i] = view_as_real(params[i])
            for s in state_and_grads:
                s[i] = view_as_real(s[i])


def _get_scalar_dtype(is_fused=None):
    """The dtype of the `step` counters: float32 for fused, else the default dtype's width."""
    if is_fused:
        return D.float32
    return D.float64 if D.get_default_dtype() is D.float64 else D.float32


def _get_capturable_supported_devices(supports_xla=True):
    devices = ["cuda", "xpu", "hpu", "privateuseone"]
    if supports_xla:
        devices.append("xla")
    return devices


def _check_capturable(params, state_steps, supports_xla=True, what="params and state_steps"):
    """capturable=True (CUDA-graph capture) needs the parameters on an accelerator: PyTorch's
    step() refuses others with this AssertionError."""
    devices = _get_capturable_supported_devices(supports_xla)
    for p, s in zip(params, state_steps):
        if not (p.device.type == s.device.type and p.device.type in devices):
            raise AssertionError(f"If capturable=True, {what} must be on supported devices: "
                                 f"{devices}.")


def _to_scalar(x):
    """A 1-element hyperparameter Tensor as a 0-d Tensor; anything else as it is."""
    if isinstance(x, Tensor) and x.dim() != 0:
        return x.squeeze()
    return x


def _step_tensor(value=0.0, fused_or_capturable=False, device=None, fused=False):
    """A fresh `step` counter: a 0-d tensor of the scalar dtype on the CPU (on the parameter's
    device and float32 for fused, as PyTorch keeps it)."""
    from .. import tensor, zeros
    if fused_or_capturable:
        return zeros((), dtype=_get_scalar_dtype(is_fused=fused), device=device) + value
    return tensor(value, dtype=_get_scalar_dtype())


def _zeros_like(p, fill=0.0):
    xp = xp_of(p._data)
    return _make(xp.full_like(p._data, fill))


# Common doc strings among optimizers (PyTorch's, which libraries format into their own)
_params_doc = r"""params (iterable): iterable of parameters or named_parameters to optimize
            or iterable of dicts defining parameter groups. When using named_parameters,
            all parameters in all groups should be named"""
_foreach_doc = r"""foreach (bool, optional): whether foreach implementation of optimizer
            is used. If unspecified by the user (so foreach is None), we will try to use
            foreach over the for-loop implementation on CUDA, since it is usually
            significantly more performant. (default: None)"""
_fused_doc = r"""fused (bool, optional): whether the fused implementation is used.
            (default: None)"""
_capturable_doc = r"""capturable (bool, optional): whether this instance is safe to
            capture in a graph. (default: False)"""
_differentiable_doc = r"""differentiable (bool, optional): whether autograd should
            occur through the optimizer step in training. Otherwise, the step()
            function runs in a torch.no_grad() context. (default: False)"""
_maximize_doc = r"""maximize (bool, optional): maximize the objective with respect to the
            params, instead of minimizing (default: False)"""


def register_optimizer_step_pre_hook(hook):
    """A hook(optimizer, args, kwargs) run before every optimizer's step(); it may return
    (new_args, new_kwargs). Returns a handle with remove()."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """A hook(optimizer, args, kwargs) run after every optimizer's step()."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


_HOOK_TABLES = ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                "_optimizer_load_state_dict_pre_hooks", "_optimizer_load_state_dict_post_hooks")


class Optimizer:
    """Base class: Optimizer(params, defaults). Subclasses implement `step(closure=None)`.

        opt = ndgrad.optim.SGD(model.parameters(), lr=0.1)
        opt.zero_grad(); loss.backward(); opt.step()
    """

    def __init__(self, params, defaults):
        self.defaults = defaults
        for name in _HOOK_TABLES:
            setattr(self, name, OrderedDict())
        self._patch_step_function()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)
        self._warned_capturable_if_run_uncaptured = True

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in _HOOK_TABLES:
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)

    def __repr__(self):
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += "\n"
            s += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        s += ")"
        return s

    # ---------------------------------------------------------------- step and its hooks
    def _accelerator_graph_capture_health_check(self):
        """(CUDA-graph capture: nothing to check without graphs.)"""

    _cuda_graph_capture_health_check = _accelerator_graph_capture_health_check

    def _optimizer_step_code(self):
        """Entry point for profilers, called after step()."""

    @staticmethod
    def profile_hook_step(func):
        """step() with the global and the optimizer's own pre and post hooks around it."""
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            hub = _PROF_HUB[0]
            if hub is not None:  # (a profiler: PyTorch's range around the step)
                r = hub.begin(f"Optimizer.step#{args[0].__class__.__name__}.step", user=True)
                try:
                    return run(*args, **kwargs)
                finally:
                    hub.end(r)
            return run(*args, **kwargs)

        def run(*args, **kwargs):
            self = args[0]
            for pre_hook in chain(_global_optimizer_pre_hooks.values(),
                                  self._optimizer_step_pre_hooks.values()):
                result = pre_hook(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise RuntimeError(f"{func} must return None or a tuple of (new_args, "
                                           f"new_kwargs), but got {result}.")
            out = func(*args, **kwargs)
            self._optimizer_step_code()
            for post_hook in chain(self._optimizer_step_post_hooks.values(),
                                   _global_optimizer_post_hooks.values()):
                post_hook(self, args, kwargs)
            return out
        return wrapper

    def _patch_step_function(self):
        """Wrap the class's step() with profile_hook_step once (as PyTorch: on the class, the
        first time an instance is made)."""
        self._zero_grad_profile_name = (
            f"Optimizer.zero_grad#{self.__class__.__name__}.zero_grad")
        hooked = getattr(self.__class__.step, "hooked", None)
        if not hooked:
            self.__class__.step = self.profile_hook_step(self.__class__.step)
            self.__class__.step.hooked = True

    def register_step_pre_hook(self, hook):
        """hook(optimizer, args, kwargs) runs before step(); it may return (args, kwargs)."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook):
        """hook(optimizer, args, kwargs) runs after step()."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    def _add_hook(self, table, hook, prepend):
        handle = RemovableHandle(table)
        table[handle.id] = hook
        if prepend:
            table.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer) runs before state_dict() packs the state."""
        return self._add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) runs on state_dict()'s result; a returned dict replaces
        it."""
        return self._add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) runs before load_state_dict(); a returned dict is loaded
        instead."""
        return self._add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer) runs after load_state_dict()."""
        return self._add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    @staticmethod
    def _group_tensors_by_device_and_dtype(tensorlistlist, with_indices=False):
        from ..utils._foreach_utils import _group_tensors_by_device_and_dtype
        return _group_tensors_by_device_and_dtype(tensorlistlist, with_indices)

    # ---------------------------------------------------------------- state dict
    def state_dict(self):
        """{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}."""
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        mapping = {}
        start = 0

        def pack_group(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            mapping.update({id(p): i for i, p in enumerate(group["params"], start)
                            if id(p) not in mapping})
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v
                        for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(param, value, param_id, param_groups,
                                                 key=None):
        """A loaded state tensor on its parameter's device: floating state in the parameter's
        dtype; `step` as it is (float32 on the device for fused or capturable groups)."""
        fused = capturable = False
        if param_groups is None:
            raise AssertionError("Expected param_groups to be set")
        for pg in param_groups:
            if param_id in pg["params"]:
                fused = pg.get("fused", False)
                capturable = pg.get("capturable", False)
                break
        if key == "step":
            if capturable or fused:
                return _make(move(value._data, param.device).astype(D.float32.np))
            return value
        arr = move(value._data, param.device)
        if param.dtype.is_floating_point:
            arr = arr.astype(param.dtype.np, copy=False)
        return _make(arr.copy() if arr is value._data else arr)

    def load_state_dict(self, state_dict):
        """Load a state_dict() from an optimizer over parameters of the same shapes and order."""
        state_dict = state_dict.copy()
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, param_id=None, param_groups=None, key=None):
            if isinstance(value, Tensor):
                return Optimizer._process_value_according_to_param_policy(
                    param, value, param_id, param_groups, key)
            if isinstance(value, dict):
                return {k: cast(param, v, param_id, param_groups, k) for k, v in value.items()}
            # (PyTorch rebuilds any Iterable with its type, which breaks a string value)
            if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
                return type(value)(cast(param, v, param_id, param_groups) for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v, param_id=k,
                                    param_groups=state_dict["param_groups"])
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)

    # ---------------------------------------------------------------- grads
    def zero_grad(self, set_to_none=True):
        """Reset every parameter's .grad: to None (default) or to zeros in place (with
        torch._foreach_zero_ for foreach or fused optimizers, as PyTorch)."""
        foreach = self.defaults.get("foreach", False) or self.defaults.get("fused", False)
        if not hasattr(self, "_zero_grad_profile_name"):
            self._patch_step_function()
        hub = _PROF_HUB[0]
        if hub is not None:  # (a profiler: PyTorch's range around zero_grad)
            r = hub.begin(self._zero_grad_profile_name, user=True)
            try:
                return self._zero_grad(set_to_none, foreach)
            finally:
                hub.end(r)
        return self._zero_grad(set_to_none, foreach)

    def _zero_grad(self, set_to_none, foreach):
        grouped = defaultdict(list) if foreach else None
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p.grad = None  # the setter records where (autograd.explain)
                    continue
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                if not foreach or g.is_sparse:
                    g.zero_()
                else:
                    grouped[(g.device, g.dtype)].append(g)
        if grouped:
            from ..ops.foreach import _foreach_zero_
            for grads in grouped.values():
                _foreach_zero_(grads)

    def step(self, closure=None):
        raise NotImplementedError

    # ---------------------------------------------------------------- groups
    def add_param_group(self, param_group):
        """Add a dict {'params': [...], <hyperparameter overrides>} to param_groups."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but "
                "the ordering of tensors in sets will change between runs. Please use a list "
                "instead.")
        else:
            param_group["params"] = list(params)

        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) == len(tensors):
                param_group["param_names"] = names
            else:
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")

        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(param))
            if not self.defaults.get("differentiable", None) and not (
                    param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)

        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, this "
                "will cause an error; see github.com/pytorch/pytorch/issues/40967 for more "
                "information", stacklevel=3)

        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                txt = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {txt} to the optimizer")
        if not seen.isdisjoint(id(p) for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # the state is keyed by the Tensor object; Tensor hashes by identity


# ---------------------------------------------------------------- the algorithms' shared steps

def closure_loss(closure):
    """step()'s optional `closure` (re-evaluates the model, returns the loss), run with grad
    enabled (step() itself runs without); None without a closure."""
    if closure is None:
        return None
    with grad_mode.enable_grad():
        return closure()


def dense_params(group, params, grads, message):
    """The group's parameters that have a gradient, each appended to `params` and its gradient
    to `grads` as it comes (the start of PyTorch's _init_group), a sparse gradient refused with
    `message`."""
    for p in group["params"]:
        g = p.grad
        if g is None:
            continue
        params.append(p)
        if g.is_sparse:
            raise RuntimeError(message)
        grads.append(g)
        yield p


def check_lr(lr, message="Invalid learning rate: {}"):
    """A learning rate given as a Tensor must have one element; a negative one is refused."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(message.format(lr))


def check_nonnegative(**values):
    """PyTorch's 'Invalid <name> value: <v>' for each negative hyperparameter, in order."""
    for name, v in values.items():
        if not 0.0 <= v:
            raise ValueError(f"Invalid {name} value: {v}")


def check_betas(betas):
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


def check_fused(optimizer, fused, foreach, differentiable):
    """PyTorch's checks of `fused=True` after the groups are built."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        optimizer._step_supports_amp_scaling = True
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def no_fused(fused, name):
    if fused:
        raise RuntimeError(f"`fused` is not currently supported for {name}")


def set_defaults(optimizer, state, **defaults):
    """__setstate__'s defaults for groups saved before an option existed."""
    Optimizer.__setstate__(optimizer, state)
    for group in optimizer.param_groups:
        for key, value in defaults.items():
            group.setdefault(key, value)


def tensor_steps(optimizer, group, fused=False):
    """Old checkpoints kept `step` as a number: make it PyTorch's 0-d tensor."""
    from .. import tensor
    for p in group["params"]:
        p_state = optimizer.state.get(p, [])
        if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
            value = float(p_state["step"])
            if group.get("capturable") or group.get("fused"):
                p_state["step"] = _step_tensor(value, True, p.device, fused)
            else:
                p_state["step"] = tensor(value, dtype=_get_scalar_dtype())


def pick_kernel(params, differentiable, foreach, fused, single, multi, fused_fn=None,
                lr=None, capturable=False):
    """The kernel the functional form runs, by PyTorch's rules (and its errors)."""
    if fused is None and foreach is None:
        _, foreach = _default_to_fused_or_foreach(params, differentiable, use_fused=False)
        if foreach and isinstance(lr, Tensor) and not capturable:
            foreach = False
    if fused and fused_fn is not None:
        kernel = fused_fn
    else:
        kernel = multi if foreach else single
    return functools.partial(_quietly, kernel)


def _quietly(kernel, *args, **kwargs):
    """A kernel under NumPy's 'ignore' error state: inf and nan arithmetic warns nowhere in
    PyTorch; the user's line of the step found once for its parameters' versions
    (_kernels.STEP_SITE)."""
    outer = STEP_SITE.__dict__.get("site", STEP_SITE)   # (a kernel inside a kernel: restored)
    STEP_SITE.site = _graph.user_site()
    try:
        with _quiet():
            return kernel(*args, **kwargs)
    finally:
        if outer is STEP_SITE:
            del STEP_SITE.site
        else:
            STEP_SITE.site = outer


def foreach_steps_(state_steps):
    """The multi-tensor kernels' `step += 1` (a CPU tensor operand for CPU counters, as
    PyTorch's)."""
    from .. import _foreach_add_, tensor
    if state_steps[0].device.type == "cpu":
        _foreach_add_(state_steps, tensor(1.0), alpha=1.0)
    else:
        _foreach_add_(state_steps, 1)


def foreach_grads(grads, params, maximize, weight_decay):
    """The multi-tensor kernels' gradients: negated for `maximize` (new tensors), plus the L2
    weight decay (into those new tensors, else into new ones: .grad is never written)."""
    from .. import _foreach_neg, _foreach_add_, _foreach_add
    if maximize:
        grads = _foreach_neg(grads)
    if weight_decay != 0:
        if maximize:
            _foreach_add_(grads, params, alpha=weight_decay)
        else:
            grads = _foreach_add(grads, params, alpha=weight_decay)
    return grads


def grouped(tensorlists, has_complex=False, complex_lists=None, with_indices=False):
    """The multi-tensor kernels' groups by device and dtype, each as mutable lists, complex
    tensors of `complex_lists` (indices into tensorlists; default all) viewed as real."""
    groups = Optimizer._group_tensors_by_device_and_dtype(tensorlists, with_indices)
    for lists, indices in groups.values():
        lists = [list(x) for x in lists]
        if has_complex:
            which = range(len(lists)) if complex_lists is None else complex_lists
            _view_as_real(lists[0], *[lists[i] for i in which if i != 0])
        yield (lists, indices) if with_indices else lists
