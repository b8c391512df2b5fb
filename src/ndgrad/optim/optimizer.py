"""Optimizer: parameter groups, per-parameter state, state_dict, zero_grad (torch.optim.Optimizer).

Updates work on the parameters' arrays in place (`p._data`, through `xp` with `out=`), outside
autograd, and bump each parameter's version counter once per step (`_bump_versions`), as
PyTorch's in-place `param.add_` under `no_grad` does. Each algorithm follows PyTorch's
single-tensor code path operation for operation, so float64 trajectories agree to rounding.
"""
from collections import OrderedDict, defaultdict
from copy import deepcopy
import functools
from itertools import chain
import warnings

from .._tensor import Tensor, _make
from .._backend import move, xp_of
from .. import _dtype as D
from ..autograd import grad_mode

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook"]


class _RequiredParameter:
    """Singleton marking a hyperparameter without a default."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj):
    if isinstance(obj, Tensor):
        return "torch." + {"float32": "FloatTensor", "float64": "DoubleTensor",
                           "int64": "LongTensor"}.get(obj.dtype.name, "Tensor")
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", None) else f"{module}.{name}"


def _scalar_dtype():
    return D.float64 if D.get_default_dtype() is D.float64 else D.float32


def _step_tensor(value=0.0):
    """The per-parameter `step` counter PyTorch keeps as a 0-d float tensor (on the CPU, as
    PyTorch's unless capturable or fused)."""
    import numpy as np
    return _make(np.array(value, dtype=_scalar_dtype().np))  # host: a CPU counter, as PyTorch's


def _zeros_like(p, fill=0.0):
    xp = xp_of(p._data)
    return _make(xp.full_like(p._data, fill))


def _grad_array(p, maximize, weight_decay):
    """The gradient array an update uses: p's .grad, negated for `maximize`, plus L2 weight
    decay `grad.add(param, alpha=weight_decay)` (a new array whenever it differs from .grad,
    which is never written)."""
    from ._kernels import add
    g = p._grad
    if g.is_sparse:   # (optimizers without a sparse path use the dense equivalent)
        if weight_decay != 0:
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                               "instead.")
        from .._sparse import add_into
        grad = add_into(p._data * 0, g)
        return -grad if maximize else grad
    grad = g._data
    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = add(grad, p._data, alpha=weight_decay)
    return grad


def _to_scalar(value):
    """A hyperparameter given as a 1-element Tensor (lr=torch.tensor(0.01)) as a NumPy scalar of
    the tensor's dtype: arithmetic with Python numbers then stays in that dtype, as PyTorch's
    arithmetic on the 0-d tensor does (a float32 lr gives float32 step sizes)."""
    if isinstance(value, Tensor):
        return value._data.reshape(())[()]
    return value


def _check_lr(lr):
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")


def _check_adam_args(lr, eps, betas, weight_decay):
    """The argument checks the Adam family shares (Adam, AdamW, Adamax, NAdam, RAdam), in
    PyTorch's order and with its messages."""
    _check_lr(lr)
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def _check_fused(optimizer, fused, foreach, differentiable):
    """PyTorch's checks of `fused=True` (the fused CPU kernels ndgrad's loop stands in for)."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        optimizer._step_supports_amp_scaling = True
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _check_capturable(p, what="params and state_steps", xla=True):
    """capturable=True (CUDA-graph capture) needs the parameters on an accelerator: PyTorch's
    step() refuses CPU parameters with this AssertionError."""
    devices = ["cuda", "xpu", "hpu", "privateuseone"] + (["xla"] if xla else [])
    if p.device.type not in devices:
        raise AssertionError(f"If capturable=True, {what} must be on supported devices: "
                             f"{devices}.")


def _no_fused(fused, name):
    if fused:
        raise RuntimeError(f"`fused` is not currently supported for {name}")


def _advance_step(state):
    """Increment the 0-d `step` tensor in `state`; return the new step as a float."""
    step_t = state["step"]
    step_t._data[()] += 1
    return float(step_t._data)


def _closure_loss(closure):
    """step()'s optional `closure` (re-evaluates the model, returns the loss), run with grad
    enabled since step() itself runs under no_grad; None without a closure."""
    if closure is None:
        return None
    with grad_mode.enable_grad():
        return closure()


def _bump_versions(p, state=None):
    """An update changed `p` (and the tensors in its `state` dict) in place: bump their versions
    as PyTorch's in-place ops under no_grad do. For the parameter, `Tensor._bump_version` also
    records where: the user's line that called step() (the first frame outside ndgrad), which a
    backward() that needed the old values names in its error. The optimizer's own state tensors
    (private buffers that no graph saves in practice) skip the site's stack walk: it would cost
    more than the rest of a small parameter's update."""
    if state:
        for t in state.values():
            if isinstance(t, Tensor):
                t._vc[0] += 1
    p._bump_version()


class _RemovableHandle:
    def __init__(self, table, key):
        self._table, self._key = table, key
        self.id = key

    def remove(self):
        self._table.pop(self._key, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()
_global_hook_id = [0]


def register_optimizer_step_pre_hook(hook):
    """A hook(optimizer, args, kwargs) run before every optimizer's step(); it may return
    (new_args, new_kwargs). Returns a handle with remove()."""
    _global_hook_id[0] += 1
    _global_optimizer_pre_hooks[_global_hook_id[0]] = hook
    return _RemovableHandle(_global_optimizer_pre_hooks, _global_hook_id[0])


def register_optimizer_step_post_hook(hook):
    """A hook(optimizer, args, kwargs) run after every optimizer's step()."""
    _global_hook_id[0] += 1
    _global_optimizer_post_hooks[_global_hook_id[0]] = hook
    return _RemovableHandle(_global_optimizer_post_hooks, _global_hook_id[0])


def _no_grad_step(step):
    @functools.wraps(step)
    def wrapper(*args, **kwargs):
        self = args[0]      # the hooks see step's arguments with self, as PyTorch's do
        for hook in chain(list(_global_optimizer_pre_hooks.values()),
                          list(self._step_pre_hooks.values())):
            result = hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(f"{step} must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {result}.")
        self._opt_called = True     # read by lr_scheduler's step-order warning
        with grad_mode.no_grad():
            out = step(*args, **kwargs)
        for hook in chain(list(self._step_post_hooks.values()),
                          list(_global_optimizer_post_hooks.values())):
            hook(self, args, kwargs)
        return out
    return wrapper


_STATE_DICT_HOOK_TABLES = ("_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                           "_optimizer_load_state_dict_pre_hooks",
                           "_optimizer_load_state_dict_post_hooks")


class Optimizer:
    """Base class: Optimizer(params, defaults). Subclasses implement `step(closure=None)`.

        opt = ndgrad.optim.SGD(model.parameters(), lr=0.1)
        opt.zero_grad(); loss.backward(); opt.step()
    """

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._step_pre_hooks = OrderedDict()
        self._step_post_hooks = OrderedDict()
        self._hook_id = 0
        for name in _STATE_DICT_HOOK_TABLES:
            setattr(self, name, OrderedDict())
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

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:
            cls.step = _no_grad_step(cls.__dict__["step"])

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_step_pre_hooks", OrderedDict())
        self.__dict__.setdefault("_step_post_hooks", OrderedDict())
        self.__dict__.setdefault("_hook_id", 0)
        for name in _STATE_DICT_HOOK_TABLES:
            self.__dict__.setdefault(name, OrderedDict())

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

    # ---------------------------------------------------------------- grads
    def zero_grad(self, set_to_none=True):
        """Reset every parameter's .grad: to None (default) or to zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p.grad = None  # the setter records where (autograd.explain)
                else:
                    if g.grad_fn is not None:
                        p._grad = g.detach()
                        g = p._grad
                    g._data[...] = 0
                    g._bump_version()

    def step(self, closure=None):
        raise NotImplementedError

    # ---------------------------------------------------------------- hooks
    def register_step_pre_hook(self, hook):
        self._hook_id += 1
        self._step_pre_hooks[self._hook_id] = hook
        return _RemovableHandle(self._step_pre_hooks, self._hook_id)

    def register_step_post_hook(self, hook):
        self._hook_id += 1
        self._step_post_hooks[self._hook_id] = hook
        return _RemovableHandle(self._step_post_hooks, self._hook_id)

    def _add_hook(self, table, hook, prepend=False):
        self._hook_id += 1
        table[self._hook_id] = hook
        if prepend:
            table.move_to_end(self._hook_id, last=False)
        return _RemovableHandle(table, self._hook_id)

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

    # ---------------------------------------------------------------- state dict
    def state_dict(self):
        """{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}."""
        for hook in list(self._optimizer_state_dict_pre_hooks.values()):
            hook(self)
        mapping = {}
        start = 0

        def pack_group(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {mapping[id(k)]: v for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for hook in list(self._optimizer_state_dict_post_hooks.values()):
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict):
        """Load a state_dict() from an optimizer over parameters of the same shapes and order."""
        state_dict = state_dict.copy()
        for hook in list(self._optimizer_load_state_dict_pre_hooks.values()):
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

        def cast(param, value, key=None, group=None):
            # (as PyTorch: state moves to its parameter's device, and floating state takes its
            # dtype; a plain `step` counter stays where it is)
            if isinstance(value, Tensor):
                if key == "step":
                    if group is not None and (group.get("fused") or group.get("capturable")):
                        return _make(move(value._data, param.device).astype(D.float32.np))
                    return _make(value._data.copy())
                arr = move(value._data, param.device)
                if param.dtype.is_floating_point:
                    arr = arr.astype(param.dtype.np)
                else:
                    arr = arr.copy()
                return _make(arr.copy() if arr is value._data else arr)
            if isinstance(value, dict):
                return {k: cast(param, v, k, group) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v, key, group) for v in value)
            return value

        group_of = {pid: g for g in saved_groups for pid in g["params"]}
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v, group=group_of.get(k))
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        self.__setstate__({"state": state,
                           "param_groups": [update_group(g, ng)
                                            for g, ng in zip(groups, saved_groups)]})
        for hook in list(self._optimizer_load_state_dict_post_hooks.values()):
            hook(self)

    # the state is keyed by the Tensor object; Tensor hashes by identity
