"""Graph nodes: the `grad_fn` objects that record how each tensor was computed.

A Node's `next_functions` holds one edge `(node, input_nr)` per differentiable input: the input's
own grad_fn, its AccumulateGrad when it is a leaf that requires grad, or `(None, 0)`.

Note [Saved outputs and cycles]
A node never holds a strong reference to its own output tensor (output -> grad_fn -> node ->
output would be a cycle that only the garbage collector could free). It keeps the output's array
and version counter and builds a fresh Tensor that points back at the node when unpacked, so
reference counting alone frees the graph as soon as the user drops the output.
"""
import itertools

__all__ = ["Node", "AccumulateGrad", "SavedTensor", "RemovableHandle"]

ERR_BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward.")
ERR_VERSION = (
    "one of the variables needed for gradient computation has been modified by an inplace "
    "operation: [{type} {shape}]{which}, is at version {now}; expected version {saved} instead. "
    "Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
    "with torch.autograd.set_detect_anomaly(True, check_nan=False).")

_handle_ids = itertools.count()


class RemovableHandle:
    """Returned by register_hook; `handle.remove()` unregisters the hook."""
    __slots__ = ("_hooks", "id")

    def __init__(self, hooks):
        self._hooks = hooks
        self.id = next(_handle_ids)

    def remove(self):
        if self._hooks is not None:
            self._hooks.pop(self.id, None)
            self._hooks = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _Released:
    """Marks a node whose saved tensors were freed by a backward pass."""
    __slots__ = ()

    def __bool__(self):
        return True


RELEASED = _Released()


class Node:
    """Base class of every grad_fn. Subclasses implement `apply(grads) -> tuple of grads`."""
    __slots__ = ("next_functions", "_saved", "_meta", "_pre_hooks", "_hooks", "_tensor_hooks",
                 "_retain", "_metadata", "_site", "__weakref__")
    _nout = 1  # number of outputs (class-level: per node type)

    def __init__(self):
        self.next_functions = ()
        self._saved = None
        self._meta = None
        self._pre_hooks = self._hooks = self._tensor_hooks = self._retain = None
        self._metadata = None
        self._site = None

    def name(self):
        return type(self).__name__

    @property
    def metadata(self):
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def __call__(self, *grads):
        from . import grad_mode
        if self._saved is RELEASED:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        return self.apply(list(grads), grad_mode.is_grad_enabled())

    def apply(self, grads, create_graph):
        raise NotImplementedError

    def release_saved(self):
        if self._saved:
            self._saved = RELEASED

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) -> None or replacement grad_inputs; runs after the node."""
        if self._hooks is None:
            self._hooks = {}
        h = RemovableHandle(self._hooks)
        self._hooks[h.id] = fn
        return h

    def register_prehook(self, fn):
        """fn(grad_outputs) -> None or replacement grad_outputs; runs before the node."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        h = RemovableHandle(self._pre_hooks)
        self._pre_hooks[h.id] = fn
        return h

    def _register_tensor_hook(self, output_nr, fn):
        if self._tensor_hooks is None:
            self._tensor_hooks = {}
        h = RemovableHandle(self._tensor_hooks)
        self._tensor_hooks[h.id] = (output_nr, fn)
        return h

    @property
    def _saved_tensors(self):
        return self._unpacked_saved()

    def _unpacked_saved(self):
        saved = self._saved
        if saved is RELEASED:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        return {k: (v.unpack(self) if type(v) is SavedTensor else v) for k, v in (saved or {}).items()}

    def __getattr__(self, name):
        # grad_fn._saved_self, grad_fn._saved_other, ... as in PyTorch
        if name.startswith("_saved_"):
            saved = self._unpacked_saved()
            key = name[len("_saved_"):]
            if key in saved:
                return saved[key]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


class AccumulateGrad(Node):
    """The node at each leaf that requires grad: it adds the incoming gradient into `.grad`."""
    __slots__ = ("variable",)

    def __init__(self, variable):
        Node.__init__(self)
        self.variable = variable

    def apply(self, grads, create_graph):
        var = self.variable
        g = grads[0]
        if var._hooks:
            for fn in list(var._hooks.values()):
                r = fn(g)
                if r is not None:
                    g = r
        if g is not None:
            var._accumulate_grad(g, create_graph)
        if var._post_acc_hooks:
            for fn in list(var._post_acc_hooks.values()):
                fn(var)
        return ()


def _op_name(node):
    """'ExpBackward0' -> 'Exp', as PyTorch names the op in its version-counter error."""
    import re
    return re.sub(r"Backward\d*$", "", node.name())


def _type_string(t):
    names = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
             "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
             "complex64": "ComplexFloat", "complex128": "ComplexDouble"}
    return f"torch.{names[t.dtype.name]}Tensor"


class SavedTensor:
    """A tensor saved for backward, with the version it had when saved.

    Inputs are kept as the tensor itself. The node's own output is kept as array + version
    counter, and re-wrapped on unpack (see Note [Saved outputs and cycles])."""
    __slots__ = ("tensor", "data", "vc", "version", "requires_grad", "output_nr", "_hooks_packed")

    def __init__(self, tensor, is_output=False, output_nr=0):
        self.vc = tensor._vc
        self.version = tensor._vc[0]
        self.output_nr = output_nr
        self._hooks_packed = None
        if is_output:
            self.tensor = None
            self.data = tensor._data
            self.requires_grad = tensor._requires_grad
        else:
            self.tensor = tensor
            self.data = None

    def unpack(self, node):
        if self.vc[0] != self.version:
            self._raise_version_error(node)
        t = self.tensor
        if t is not None:
            return t
        from .._tensor import _make
        t = _make(self.data, self.requires_grad)
        t._vc = self.vc
        if self.requires_grad:
            t.grad_fn = node
            t._output_nr = self.output_nr
        return t

    def _raise_version_error(self, node):
        from .._tensor import _make
        if self.tensor is not None:
            t = self.tensor
            src = t.grad_fn
            which = "" if src is None else f", which is output {t._output_nr} of {_op_name(src)}"
        else:
            t = _make(self.data)
            which = f", which is output {self.output_nr} of {_op_name(node)}"
        shape = "[" + ", ".join(str(s) for s in self.data.shape if True) + "]" if self.data is not None \
            else "[" + ", ".join(str(s) for s in t.shape) + "]"
        raise RuntimeError(ERR_VERSION.format(type=_type_string(t), shape=shape, which=which,
                                              now=self.vc[0], saved=self.version))
