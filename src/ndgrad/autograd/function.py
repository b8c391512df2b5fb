"""Custom autograd Functions: user-defined forward and backward (torch.autograd.Function).

As in PyTorch, the `ctx` handed to forward and backward *is* the graph node, so attributes the
user stores on ctx live exactly as long as the graph. Its class is named `<Function>Backward`.
"""
import functools

from . import grad_mode
from .graph import Node, SavedTensor, RELEASED, ERR_BACKWARD_TWICE
from . import forward_ad as _forward_ad
from .forward_ad import _state as _fw_state

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx:
    """The methods available on `ctx` inside forward/backward."""

    def save_for_backward(self, *tensors):
        self._to_save = tensors

    def save_for_forward(self, *tensors):
        self._to_save_fwd = tensors

    def mark_dirty(self, *args):
        self._dirty = args

    def mark_non_differentiable(self, *args):
        self._non_differentiable = args

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self):
        saved = self._saved
        if saved is RELEASED:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        if saved is None:
            return tuple(getattr(self, "_to_save", None) or ())
        return tuple(s.unpack(self) if type(s) is SavedTensor else s for s in saved)

    saved_variables = saved_tensors


class BackwardCFunction(FunctionCtx, Node):
    """Base of the node class made for each Function subclass (it has a __dict__ for ctx.attrs)."""
    _forward_cls = None
    materialize_grads = True

    def __init__(self):
        Node.__init__(self)
        self.needs_input_grad = ()
        self._input_pos = ()
        self._nargs = 0

    def apply(self, grads, create_graph):
        from .._tensor import _make
        from .._backend import xp_of
        if self._saved is RELEASED:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        if self.materialize_grads:
            grads = [g if g is not None or m[1] is None else _make(m[2].zeros(m[0], m[1].np))
                     for g, m in zip(grads, self._out_meta)]
        cls = self._forward_cls
        out = cls.backward(self, *grads)
        if not isinstance(out, tuple):
            out = (out,)
        n = self._nargs
        if len(out) < n or any(g is not None for g in out[n:]):
            raise RuntimeError(
                f"function {type(self).__name__} returned an incorrect number of gradients "
                f"(expected {n}, got {len(out)})")
        result = []
        for pos in self._input_pos:
            result.append(out[pos])
        from .._tensor import Tensor
        for i, g in enumerate(out[:n]):
            if g is not None and i not in self._input_pos_set:
                raise RuntimeError(
                    f"function {type(self).__name__} returned a gradient different than None at "
                    f"position {i + 1}, but the corresponding forward input was not a Variable")
        for i, g in enumerate(result):
            if g is not None and not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
        return result

    def release_saved(self):
        if self._saved:
            self._saved = RELEASED


class _FunctionMeta(type):
    """Gives each Function subclass its own node class, `<Name>Backward`."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        super().__init__(name, bases, attrs)


class Function(metaclass=_FunctionMeta):
    """Subclass with static forward(ctx, *args) and backward(ctx, *grads); call Cls.apply(...)."""

    generate_vmap_rule = False

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD.")

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @classmethod
    def apply(cls, *args, **kwargs):
        from .._tensor import Tensor, _make
        from .._backend import xp_of
        ctx = cls._backward_cls()
        tensor_pos = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        ctx._nargs = len(args)
        record = grad_mode._state.enabled and any(ctx.needs_input_grad)
        custom_setup = cls.setup_context is not Function.setup_context
        prev = grad_mode._state.enabled
        grad_mode._state.enabled = False
        try:
            if custom_setup:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        finally:
            grad_mode._state.enabled = prev
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        dirty = {id(t) for t in getattr(ctx, "_dirty", ())}
        nondiff = {id(t) for t in getattr(ctx, "_non_differentiable", ())}
        inputs_by_id = {id(args[i]): args[i] for i in tensor_pos}
        final = []
        for o in outs:
            if isinstance(o, Tensor):
                if id(o) in dirty:
                    pass  # its in-place op already bumped the version
                elif id(o) in inputs_by_id:
                    # an input returned as-is: the output is a new tensor sharing its storage
                    alias = _make(o._data)
                    alias._vc = o._vc
                    o = alias
            final.append(o)
        if _fw_state.levels:  # forward AD: the Function's jvp gives the outputs' tangents
            _forward_ad._function(cls, ctx, args, final)
        if not record:
            for o in final:
                if isinstance(o, Tensor) and id(o) not in dirty and o.grad_fn is None:
                    pass
            return final[0] if single else tuple(final)
        # the node: one edge per tensor input
        edges, meta = [], []
        for i in tensor_pos:
            t = args[i]
            if t._requires_grad:
                edges.append((t.grad_fn, t._output_nr) if t.grad_fn is not None
                             else (t._get_accumulator(), 0))
                meta.append((t._data.shape, t.dtype))
            else:
                edges.append((None, 0))
                meta.append(None)
        ctx.next_functions = tuple(edges)
        if ctx._site is None:  # where the user called Cls.apply (for error messages)
            from .graph import user_site
            ctx._site = user_site()
        ctx._meta = meta
        ctx._input_pos = tensor_pos
        ctx._input_pos_set = set(tensor_pos)
        out_meta = []
        for nr, o in enumerate(final):
            if isinstance(o, Tensor):
                out_meta.append((o._data.shape, o.dtype, xp_of(o._data)))
                if id(o) in nondiff:
                    continue
                if not (o.dtype.is_floating_point or o.dtype.is_complex):
                    continue
                if id(o) in dirty and o._requires_grad and o.grad_fn is None and \
                        o._base is None:
                    from .._tensor import ERR_LEAF_INPLACE
                    raise RuntimeError(ERR_LEAF_INPLACE)
                o.grad_fn = ctx
                o._output_nr = nr
                o._requires_grad = True
            else:
                out_meta.append(((), None, None))
        ctx._out_meta = out_meta
        ctx._nout_inst = len(final)
        to_save = getattr(ctx, "_to_save", None)
        if to_save:
            out_ids = {id(o): nr for nr, o in enumerate(final) if isinstance(o, Tensor)}
            saved = []
            for t in to_save:
                if t is None:
                    saved.append(None)
                elif not isinstance(t, Tensor):
                    raise TypeError(
                        "save_for_backward can only save variables, but argument "
                        f"{len(saved)} is of type {type(t).__name__}")
                elif id(t) in out_ids and t.grad_fn is ctx:
                    saved.append(SavedTensor(t, True, out_ids[id(t)]))
                else:
                    saved.append(SavedTensor(t))
            ctx._saved = saved
            del ctx._to_save
        else:
            ctx._saved = []
        return final[0] if single else tuple(final)


def _nout(self):
    return getattr(self, "_nout_inst", 1)


BackwardCFunction._nout = property(_nout)
FunctionCtx._out_meta = ()


def once_differentiable(fn):
    """Mark a backward that is not itself differentiable: it runs without recording, and a
    second differentiation through it raises PyTorch's error."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        from .._tensor import Tensor
        with grad_mode.no_grad():
            outputs = fn(ctx, *args)
        if not grad_mode.is_grad_enabled():
            return outputs
        requires = any(isinstance(a, Tensor) and a._requires_grad for a in args)
        if not requires:
            return outputs
        tup = outputs if isinstance(outputs, tuple) else (outputs,)
        err = _DelayedError(
            "trying to differentiate twice a function that was marked with @once_differentiable",
            [a for a in args if isinstance(a, Tensor)])
        wrapped = []
        for o in tup:
            if isinstance(o, Tensor) and (o.dtype.is_floating_point or o.dtype.is_complex):
                o = o.detach()
                o.grad_fn = err
                o._requires_grad = True
            wrapped.append(o)
        return tuple(wrapped) if isinstance(outputs, tuple) else wrapped[0]

    return wrapper


class _DelayedError(Node):
    __slots__ = ("msg",)

    def __init__(self, msg, inputs):
        Node.__init__(self)
        self.msg = msg
        edges, meta = [], []
        for t in inputs:
            if t._requires_grad:
                edges.append((t.grad_fn, t._output_nr) if t.grad_fn is not None
                             else (t._get_accumulator(), 0))
                meta.append((t._data.shape, t.dtype))
            else:
                edges.append((None, 0))
                meta.append(None)
        self.next_functions = tuple(edges)
        self._meta = meta

    def apply(self, grads, create_graph):
        raise RuntimeError(self.msg)


_DelayedError.__name__ = "DelayedError"
