"""Module: the base class of layers, with PyTorch's registration, state-dict and repr rules."""
from collections import OrderedDict, namedtuple
import itertools
import weakref

from ..._tensor import Tensor, _make
from ...autograd.function import Function
from ...autograd import grad_mode
from ... import _dtype as D
from ...autograd.grad_mode import no_grad
from ...autograd.graph import RemovableHandle
from ..parameter import Parameter, Buffer

__all__ = ["Module"]


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class _BackwardHookFunction(Function):
    """Identity on tensors; its graph node is where module backward hooks attach."""

    @staticmethod
    def forward(ctx, *args):
        return tuple(_make(a._data) for a in args)

    @staticmethod
    def backward(ctx, *grads):
        return grads


def _addindent(s_, num_spaces):
    s = s_.split("\n")
    if len(s) == 1:
        return s_
    first = s.pop(0)
    s = [(num_spaces * " ") + line if line.strip() else "" for line in s]
    return first + "\n" + "\n".join(s)


def _check_new_name(module, kind, name):
    """PyTorch's checks on the name of a buffer or parameter being registered."""
    table = f"_{kind}s"
    if table not in module.__dict__:
        raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if hasattr(module, name) and name not in module.__dict__[table]:
        raise KeyError(f"attribute '{name}' already exists")


class Module:
    """Base class for all neural network modules (torch.nn.Module)."""

    training: bool
    dump_patches = False
    _version = 1
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but "
                f"{len(args) + 1} were given" if args else
                f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                f"'{next(iter(kwargs))}'")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = {}
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = {}
        d["_backward_hooks"] = OrderedDict()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_state_dict_hooks"] = OrderedDict()
        d["_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_post_hooks"] = OrderedDict()

    forward = None

    def _forward_unimplemented(self, *input):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function')

    # ---------------------------------------------------------------- call and hooks
    def __call__(self, *args, **kwargs):
        d = self.__dict__
        if not (d["_forward_hooks"] or d["_forward_pre_hooks"] or d.get("_backward_hooks")
                or d.get("_backward_pre_hooks")):
            forward = self.forward  # (PyTorch's fast path: no hooks of any kind)
            if forward is None:
                self._forward_unimplemented()
            return forward(*args, **kwargs)
        for hid, hook in list(d["_forward_pre_hooks"].items()):
            if hid in d["_forward_pre_hooks_with_kwargs"]:
                r = hook(self, args, kwargs)
                if r is not None:
                    args, kwargs = r
            else:
                r = hook(self, args)
                if r is not None:
                    args = r if isinstance(r, tuple) else (r,)
        bw = None
        if (d.get("_backward_hooks") or d.get("_backward_pre_hooks")) and \
                grad_mode.is_grad_enabled():
            bw = {}
            args = self._setup_input_backward_hooks(args, bw)
        result = self.forward(*args, **kwargs)
        for hid, hook in list(d["_forward_hooks"].items()):
            if hid in d["_forward_hooks_with_kwargs"]:
                r = hook(self, args, kwargs, result)
            else:
                r = hook(self, args, result)
            if r is not None:
                result = r
        if bw is not None:
            result = self._setup_output_backward_hooks(result, bw)
        return result

    _call_impl = __call__

    def _setup_input_backward_hooks(self, args, bw):
        """Route the input tensors through an identity node whose post-hook sees grad_input."""
        pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        req = [i for i in pos if args[i].requires_grad]
        bw["n_inputs"] = len(pos)
        if not req:
            return args
        wrapped = _BackwardHookFunction.apply(*[args[i] for i in req])
        if not isinstance(wrapped, tuple):
            wrapped = (wrapped,)
        args = list(args)
        for i, w in zip(req, wrapped):
            args[i] = w
        bw["has_input_node"] = True

        def on_input(grad_inputs, grad_outputs):
            full = [None] * len(pos)
            for i, g in zip(req, grad_inputs):
                full[pos.index(i)] = g
            full = tuple(full)
            for hook in list(self._backward_hooks.values()):
                r = hook(self, full, bw.get("grad_output", ()))
                if r is not None:
                    full = tuple(r)
            return tuple(full[pos.index(i)] for i in req)

        wrapped[0].grad_fn.register_hook(on_input)
        return tuple(args)

    def _setup_output_backward_hooks(self, result, bw):
        """Route the outputs through an identity node whose pre-hook sees grad_output."""
        single = isinstance(result, Tensor)
        outs = (result,) if single else result
        if not isinstance(outs, tuple):
            return result
        req = [i for i, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
        if not req:
            return result
        wrapped = _BackwardHookFunction.apply(*[outs[i] for i in req])
        if not isinstance(wrapped, tuple):
            wrapped = (wrapped,)

        def on_output(grad_outputs):
            go = tuple(grad_outputs)
            for hook in list(self._backward_pre_hooks.values()):
                r = hook(self, go)
                if r is not None:
                    go = tuple(r) if isinstance(r, (tuple, list)) else (r,)
            bw["grad_output"] = go
            if not bw.get("has_input_node"):
                for hook in list(self._backward_hooks.values()):
                    hook(self, (None,) * bw["n_inputs"], go)
            return go

        wrapped[0].grad_fn.register_prehook(on_output)
        outs = list(outs)
        for i, w in zip(req, wrapped):
            outs[i] = w
        return outs[0] if single else tuple(outs)

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) -> None or a replacement grad_input."""
        h = RemovableHandle(self._backward_hooks)
        self._backward_hooks[h.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(h.id, last=False)
        return h

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) -> None or a replacement grad_output."""
        h = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[h.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(h.id, last=False)
        return h

    register_backward_hook = register_full_backward_hook

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        h = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[h.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[h.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(h.id, last=False)
        return h

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        h = RemovableHandle(self._forward_hooks)
        self._forward_hooks[h.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[h.id] = True
        if prepend:
            self._forward_hooks.move_to_end(h.id, last=False)
        return h

    # ---------------------------------------------------------------- registration
    def register_buffer(self, name, tensor, persistent=True):
        _check_new_name(self, "buffer", name)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        _check_new_name(self, "parameter", name)
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        elif param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method.")
        else:
            self._parameters[name] = param

    def add_module(self, name, module):
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {type(name).__name__}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target):
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        p = getattr(mod, name)
        if not isinstance(p, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return p

    def __getattr__(self, name):
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__

        def remove_from(*dicts_or_sets):
            for ds in dicts_or_sets:
                if name in ds:
                    if isinstance(ds, dict):
                        del ds[name]
                    else:
                        ds.discard(name)

        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = d.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_typename(value)}' as child module "
                                    f"'{name}' (torch.nn.Module or None expected)")
                modules[name] = value
            else:
                buffers = d.get("_buffers")
                if isinstance(value, Buffer):
                    self.register_buffer(name, value.data, value.persistent)
                elif buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                        "(torch.Tensor or None expected)")
                    buffers[name] = value
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for k in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(k, ()):
                del self.__dict__[k][name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = list(object.__dir__(self)) + list(self._parameters) + list(self._modules) + \
            list(self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def __setstate__(self, state):
        self.__dict__.update(state)
        # modules pickled before these tables existed (PyTorch fills them in too)
        for name in ("_state_dict_pre_hooks", "_load_state_dict_post_hooks",
                     "_state_dict_hooks", "_load_state_dict_pre_hooks"):
            if name not in self.__dict__:
                self.__dict__[name] = OrderedDict()

    # ---------------------------------------------------------------- iteration
    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def children(self):
        for _, m in self.named_children():
            yield m

    def named_children(self):
        memo = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in memo:
                memo.add(id(m))
                yield name, m

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        # explicit stack, pre-order like PyTorch's recursion
        if memo is None:
            memo = set()
        stack = [(prefix, self)]
        while stack:
            pre, mod = stack.pop()
            if id(mod) in memo:
                continue
            if remove_duplicate:
                memo.add(id(mod))
            yield pre, mod
            kids = [(pre + ("." if pre else "") + n, m) for n, m in mod._modules.items()
                    if m is not None]
            stack.extend(reversed(kids))

    # ---------------------------------------------------------------- modes and transforms
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p._grad is not None:
                if set_to_none:
                    p.grad = None  # the setter records where (autograd.explain)
                else:
                    g = p._grad
                    if g.grad_fn is not None:
                        g = g.detach()
                        p._grad = g
                    g._data[...] = 0
                    g._bump_version()

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn):
        for m in self.children():
            m._apply(fn)
        with no_grad():
            for key, p in self._parameters.items():
                if p is None:
                    continue
                new = fn(p)
                if new is not p:
                    p._data = new._data
                    p.dtype = new.dtype
                    p._bump_version()
                if p._grad is not None:
                    g = fn(p._grad)
                    if g is not p._grad:  # torch sets grad.data: the grad object is kept
                        p._grad._data = g._data
                        p._grad.dtype = g.dtype
            for key, b in self._buffers.items():
                if b is not None:
                    new = fn(b)
                    if new is not b and hasattr(b, "materialize"):
                        # a lazy module's UninitializedBuffer stays one (in the new dtype or
                        # device), as PyTorch's keeps its subclass through .to()
                        b._data, b.dtype = new._data, new.dtype
                        new = b
                    self._buffers[key] = new
        return self

    def to(self, *args, **kwargs):
        dtype = kwargs.get("dtype")
        device = kwargs.get("device")
        fmt = kwargs.get("memory_format")   # (4-d and 5-d tensors take it, as PyTorch's)
        for a in args:
            if isinstance(a, D.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                dtype, device = a.dtype, a.device
            else:
                device = a
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got "
                            f"desired dtype={dtype}")

        def convert(t):
            if device is not None:
                t = t.to(device)
            if dtype is not None and (t.dtype.is_floating_point or t.dtype.is_complex):
                t = t.to(dtype)
            if fmt is not None and t.dim() in (4, 5):
                t = t.to(memory_format=fmt)
            return t
        return self._apply(convert)

    def _cast(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.dtype.is_floating_point else t)

    def double(self):
        return self._cast(D.float64)

    def float(self):
        return self._cast(D.float32)

    def half(self):
        return self._cast(D.float16)

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    # (through _apply, as PyTorch's: a subclass whose own `to` calls `self.cpu()` must not
    # come back to it: gpytorch's NNUtil)
    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def share_memory(self):
        return self

    # ---------------------------------------------------------------- state dict
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        if self._has_extra_state():
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def get_extra_state(self):
        """State beyond parameters and buffers for state_dict (define it with
        set_extra_state in a subclass)."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug.")

    def set_extra_state(self, state):
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug.")

    def _has_extra_state(self):
        return type(self).get_extra_state is not Module.get_extra_state

    # state-dict hooks (PyTorch's registration API; each returns a RemovableHandle)
    def _register_state_dict_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata) after the module's entries are
        saved; a non-None result replaces the state_dict (private: may modify it)."""
        h = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[h.id] = hook
        return h

    def register_state_dict_post_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata) after the module's entries are
        saved (modifies state_dict in place, returns None)."""
        hook._from_public_api = True
        h = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[h.id] = hook
        return h

    def register_state_dict_pre_hook(self, hook):
        """hook(module, prefix, keep_vars) before the module's state_dict is made."""
        h = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[h.id] = hook
        return h

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs) before the module loads (module first when with_module)."""
        h = RemovableHandle(self._load_state_dict_pre_hooks)
        if with_module:
            module_ref = weakref.ref(self)

            def bound(*args, hook=hook):
                return hook(module_ref(), *args)
            bound.hook = hook
            self._load_state_dict_pre_hooks[h.id] = bound
        else:
            self._load_state_dict_pre_hooks[h.id] = hook
        return h

    def register_load_state_dict_pre_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs) before the module loads."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook):
        """hook(module, incompatible_keys) after load_state_dict; it may edit the key lists."""
        h = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[h.id] = hook
        return h

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        if args:
            destination = args[0] if len(args) > 0 else destination
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        return self._state_dict_into(destination, prefix, keep_vars)

    def _state_dict_into(self, destination, prefix, keep_vars):
        # PyTorch's order: pre-hooks, own entries, children (depth first), then the hooks
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if not getattr(hook, "_from_public_api", False) and result is not None:
                destination = result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        persistent = {k: v for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set}
        local = {k: v for k, v in itertools.chain(self._parameters.items(), persistent.items())
                 if v is not None}
        for name, param in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected torch.Tensor or '
                    f"Tensor-like object from checkpoint but received {type(input_param)}")
                continue
            if tuple(input_param.shape) != tuple(param.shape):
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {input_param.shape} "
                    f"from checkpoint, the shape in current model is {param.shape}.")
                continue
            with no_grad():
                param.copy_(input_param)
        extra_state_key = prefix + "_extra_state"
        if self._has_extra_state():
            if extra_state_key in state_dict:
                self.set_extra_state(state_dict[extra_state_key])
            elif strict:
                missing_keys.append(extra_state_key)
        elif strict and extra_state_key in state_dict:
            unexpected_keys.append(extra_state_key)
        if strict:
            for key in state_dict.keys():
                if key.startswith(prefix) and key != prefix + "_extra_state":
                    input_name = key[len(prefix):].split(".", 1)
                    if len(input_name) > 1:
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        if not isinstance(state_dict, dict):
            raise TypeError(
                f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata
        post = []
        stack = [("", self)]
        while stack:
            pre, mod = stack.pop()
            local_metadata = {} if metadata is None else dict(metadata.get(pre[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            mod._load_from_state_dict(state_dict, pre, local_metadata, True, missing_keys,
                                      unexpected_keys, error_msgs)
            kids = [(pre + n + ".", m) for n, m in mod._modules.items() if m is not None]
            stack.extend(reversed(kids))
            post.append(mod)
        incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
        for mod in post:
            for hook in mod._load_state_dict_post_hooks.values():
                out = hook(mod, incompatible)
                if out is not None:
                    raise AssertionError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not"
                        "expected to return new values, if incompatible_keys need to be "
                        "modified,it should be done inplace.")
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                self.__class__.__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # ---------------------------------------------------------------- printing
    def _get_name(self):
        return self.__class__.__name__

    def extra_repr(self):
        return ""

    def __repr__(self):
        extra_lines = []
        extra_repr = self.extra_repr()
        if extra_repr:
            extra_lines = extra_repr.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        return main_str + ")"


def _typename(obj):
    if isinstance(obj, Tensor):
        return "torch." + {"float32": "FloatTensor", "float64": "DoubleTensor",
                           "int64": "LongTensor"}.get(obj.dtype.name, "Tensor")
    return type(obj).__name__
