"""In-place ops: run the out-of-place op, write the result into the tensor, bump its version.

Under autograd the tensor takes over the new node as its grad_fn (its history is rebased), so
`y.add_(1)` records AddBackward0 on top of y's old history, as PyTorch does. If the node saved
the tensor's old value, it is given a snapshot of it, since the storage is about to change.
In-place on a view also rewrites its base's history (PyTorch's CopySlices): the base becomes
"old base with the view's region replaced", and the view becomes a view of that.
"""
from .. import _dtype as D
from .._tensor import Tensor, _make, ERR_LEAF_INPLACE, ERR_INFERENCE_INPLACE
from ..autograd import grad_mode
from ..autograd.graph import Node, SavedTensor, bump_version
from .._backend import xp_of, numpy as _np, QUIET_RUN as _QRUN, entered as _entered, writeable
from ._registry import defop, _NOT_OPERANDS
from ._fma import number_operand as _number_operand
from ..autograd._prof_state import HUB as _HUB

__all__ = ["inplace", "make_inplace", "inplace_operator", "register_in_storage"]

_state = grad_mode._state
from ..autograd import forward_ad as _forward_ad  # noqa: E402
_fw_state, _fw_tracked = _forward_ad._state, _forward_ad._Tracked

ERR_VIEW_OF_LEAF = ("a view of a leaf Variable that requires grad is being used in an in-place "
                    "operation.")
ERR_NOGRAD_VIEW = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
    "code by moving both the view and the inplace either both inside the no_grad block (if you "
    "don't want the inplace to be tracked) or both outside (if you want the inplace to be "
    "tracked).")
_MULTI_TAIL = (
    "This view is the output of a function that returns multiple views. Such functions do not "
    "allow the output views to be modified inplace. You should replace the inplace operation by "
    "an out-of-place one.")
ERR_MULTI_VIEW = "Output {nr} of {name} is a view and is being modified inplace. " + _MULTI_TAIL
ERR_MULTI_VIEW_NOGRAD = ("A view was created in no_grad mode and is being modified inplace with "
                         "grad mode enabled. " + _MULTI_TAIL)
ERR_MULTI_VIEW_STALE = ("Output {nr} of {name} is a view and its base or another view of its base "
                        "has been modified inplace. " + _MULTI_TAIL)
ERR_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation.")


def _can_cast(src, dst):
    """PyTorch's canCast: no float->integral, no complex->non-complex, no non-bool->bool."""
    if src._category > dst._category:
        return False
    return True


def _type_name(d):
    return d._cname  # (PyTorch's ScalarType name: Float, Long, BFloat16, ...)


def _write(self, result):
    """Copy `result` (a Tensor) into self's storage, then bump the shared version counter."""
    if result.dtype is not self.dtype and not _can_cast(result.dtype, self.dtype):
        raise RuntimeError(f"result type {_type_name(result.dtype)} can't be cast to the desired "
                           f"output type {_type_name(self.dtype)}")
    if result._data.shape != self._data.shape:
        raise RuntimeError(
            f"output with shape [{', '.join(map(str, self._data.shape))}] doesn't match the "
            f"broadcast shape [{', '.join(map(str, result._data.shape))}]")
    data = self._data
    if not writeable(data):
        raise RuntimeError(ERR_OVERLAP)
    if data.ndim:
        data[...] = result._data
    else:
        # a 0-d array: write through the view machinery
        data[()] = result._data
    bump_version(self._vc)  # and remember the user's line, for the version-counter error


def _snapshot(self):
    """A tensor with self's current value and history, for a node that saved self."""
    t = _make(self._data.copy(), self._requires_grad)
    t.grad_fn = self.grad_fn
    if self.grad_fn is not None:
        t._output_nr = self._output_nr
    return t


_DIRECT = {}   # op function -> array-module ufunc name, for the unrecorded fast path


def register_direct(fn, ufunc):
    """`x op= other` with nothing to record may run as `ufunc(x, other, out=x)`."""
    _DIRECT[fn] = ufunc


_IN_STORAGE = {}   # op function -> its unrecorded in-place kernel (register_in_storage)


def register_in_storage(fn, kernel):
    """fn_(x, *args, **kwargs) with nothing to record may run as kernel(x, *args, **kwargs),
    which computes into x's storage the values fn would return (then True), or returns False
    before any write where its case is not the simple one (then the out-of-place fn and a copy
    into x, as for every other op)."""
    _IN_STORAGE[fn] = kernel


def _direct(self, ufunc, other):
    """The fast path of an unrecorded in-place arithmetic op on a floating tensor: compute into
    self's storage (no temporary, no copy). Returns False when the case is not the simple one
    (other dtypes, promotion, shapes that do not broadcast into self): the general path then
    gives PyTorch's result or error."""
    if not self.dtype.is_floating_point:
        return False
    if isinstance(other, Tensor):
        if other.dtype is not self.dtype or other._data.ndim > self._data.ndim:
            return False
        other = other._data
    elif type(other) is not float and type(other) is not int:
        return False
    data = self._data
    xp = xp_of(data)
    other = _number_operand(ufunc, data, other)
    try:
        if xp is _np:
            _into(getattr(_np, ufunc), data, other)
        else:
            getattr(xp, ufunc)(data, other, out=data)
    except (ValueError, TypeError):  # not broadcastable into self, or another device's
        return False                 # array: raised before any write
    bump_version(self._vc)
    return True


def _into(uf, data, other):
    """uf(data, other, out=data) in NumPy's quiet error state, as the ops run (`x /= 0` is inf
    without a warning, as in PyTorch)."""
    if _QRUN is not None:
        try:
            return _QRUN(uf, data, other, data)
        except RuntimeError as exc:
            if not _entered(exc):
                raise
    with _np.errstate(all="ignore"):  # host: only NumPy arrays come here
        return uf(data, other, data)


def inplace_operator(fn):
    """`x op= other` (__iadd__, __isub__, ...): inplace(x, fn, other), whose unrecorded case on a
    host floating tensor and a tensor of its dtype or a Python number (an optimizer's step under
    no_grad: bench W2) takes _direct's road without inplace's general checks."""
    ufunc = _DIRECT.get(fn)
    if ufunc is None:
        def op(self, other):
            if isinstance(other, _NOT_OPERANDS):
                return NotImplemented
            return inplace(self, fn, other)
        return op
    uf = getattr(_np, ufunc)
    ndarray = _np.ndarray

    def op(self, other):  # (self: a Tensor, as the operator's owner)
        if not _state.enabled and not _fw_state.levels and not self._inference and \
                self.dtype.is_floating_point:
            data = self._data
            if data.__class__ is ndarray:
                oc = other.__class__
                if oc is float or oc is int:
                    e = _number_operand(ufunc, data, other)
                elif isinstance(other, Tensor) and other.dtype is self.dtype:
                    e = other._data
                    if e.__class__ is not ndarray or e.ndim > data.ndim:
                        e = None
                else:
                    e = None
                if e is not None and data.flags.writeable:
                    try:
                        _QRUN(uf, data, e, data) if _QRUN is not None else _into(uf, data, e)
                    except ValueError:  # not broadcastable into self: raised before any write
                        return inplace(self, fn, other)  # (PyTorch's message)
                    except RuntimeError as exc:  # (the quiet context is busy: _into's way)
                        if not _entered(exc):
                            raise
                        _into(uf, data, e)
                    bump_version(self._vc, 1)
                    return self
        if isinstance(other, _NOT_OPERANDS):  # (Python's own TypeError, as PyTorch's operator)
            return NotImplemented
        return inplace(self, fn, other)
    op.__name__ = "__i" + ufunc + "__"
    return op


def inplace(self, fn, *args, **kwargs):
    """Run `fn(self, *args, **kwargs)` out of place and make the result self's new value."""
    hub = _HUB[0]
    if hub is not None and not hub.tls.rename:  # (profiling: Note [Profiler hooks])
        return hub.inplace(_inplace, self, fn, args, kwargs)
    return _inplace(self, fn, *args, **kwargs)


def _inplace(self, fn, *args, **kwargs):
    if not isinstance(self, Tensor):
        raise TypeError(f"in-place op on a non-tensor {type(self).__name__}")
    if not writeable(self._data):
        raise RuntimeError(ERR_OVERLAP)
    if self._inference and not _state.inference:
        raise RuntimeError(ERR_INFERENCE_INPLACE)
    if _fw_state.levels and fn.__class__ is not _fw_tracked:  # forward AD: move the tangent too
        return _forward_ad._inplace(self, fn, args, kwargs)
    recording = _state.enabled and (self._requires_grad or any(
        isinstance(a, Tensor) and a._requires_grad for a in args) or any(
        isinstance(a, Tensor) and a._requires_grad for a in kwargs.values()))
    if not recording and _state.enabled and self._view_nograd and self._base._requires_grad:
        _check_view_inplace(self, self._base)
    if not recording:
        ufunc = _DIRECT.get(fn) if len(args) == 1 and not kwargs else None
        if ufunc is None or not _direct(self, ufunc, args[0]):
            kernel = _IN_STORAGE.get(fn)
            if kernel is not None and kernel(self, *args, **kwargs):
                bump_version(self._vc)
            else:
                _write(self, fn(self, *args, **kwargs))
        return self
    if self._requires_grad and self.grad_fn is None:
        raise RuntimeError(ERR_LEAF_INPLACE)
    base = self._base
    if base is not None:
        _check_view_inplace(self, base)
    result = fn(self, *args, **kwargs)
    node = result.grad_fn
    # a node that saved self's old value gets a snapshot of it
    if node is not None and node._saved:
        for k, v in list(node._saved.items()):
            if type(v) is SavedTensor and v.tensor is self:
                snap = SavedTensor(_snapshot(self))
                if node._saved is v:  # (a node that saved one tensor keeps it as _saved)
                    snap.name = k
                    node._saved = snap
                else:
                    node._saved[k] = snap
    if base is not None and self._view_fn is not None:
        _rebase_view(self, base, result)
        _refresh_views(base, self)
        if node is not None and node._saved and "result" in node._saved:
            s = node._saved["result"]  # the saved output now lives in self's storage
            s.data, s.vc, s.version = self._data, self._vc, self._vc[0]
        return self
    _write(self, result)
    if node is not None:
        self.grad_fn = node
        self._output_nr = result._output_nr
        self._requires_grad = True
        saved = node._saved
        if saved and "result" in saved:
            s = saved["result"]
            s.data, s.vc, s.version = self._data, self._vc, self._vc[0]
    _refresh_views(self, None)
    return self


def _check_view_inplace(self, base):
    """PyTorch's checks before an in-place op through a view records a graph."""
    multi = self._multi_view
    if multi is not None:
        if self._view_nograd or not self._requires_grad:
            raise RuntimeError(ERR_MULTI_VIEW_NOGRAD)
        raise RuntimeError(ERR_MULTI_VIEW.format(nr=multi[1], name=multi[0]))
    if self._view_nograd:
        raise RuntimeError(ERR_NOGRAD_VIEW)
    if base._requires_grad and base.grad_fn is None:
        raise RuntimeError(ERR_VIEW_OF_LEAF)


def make_inplace(fn):
    """fn_(input, ...) from the out-of-place fn (`input`: torch.abs_(input=t), PyTorch's name
    in its functions; the method form takes it positionally)."""
    def fn_(input, *args, **kwargs):
        return inplace(input, fn, *args, **kwargs)
    fn_.__name__ = fn.__name__ + "_"
    return fn_


# ---------------------------------------------------------------- views (CopySlices)

def _apply_view_steps(t, steps):
    for f, args, kwargs in steps:
        t = f(t, *args, **kwargs)
    return t


def _region_index(base, steps):
    """The flat (C-order) positions in `base` of the view `steps` select, as an int array of the
    view's shape. Computed on an index map laid out like base, so every step that worked on base
    works here; the backward then needs no views of (possibly differently strided) gradients."""
    d = base._data
    xp = xp_of(d)
    idx = xp.empty_like(d, dtype="int64")
    idx[...] = xp.arange(d.size, dtype="int64").reshape(d.shape)
    prev = _state.enabled
    _state.enabled = False
    try:
        return _apply_view_steps(_make(idx), steps)._data
    finally:
        _state.enabled = prev


def _view_scatter_fwd(xp, self, src, index):
    out = self.copy()
    out.reshape(-1)[index] = src
    return out


def _take_flat(grad, index):
    from .indexing import _take
    return _take(grad, _make(index))


view_scatter = defop("view_scatter", _view_scatter_fwd, node_name="CopySlices",
                     self=lambda grad, index: view_scatter(grad, 0, index),
                     src=lambda grad, index: _take_flat(grad, index))


def _rebase_view(view, base, result):
    """After an in-place op on `view`: base <- base with the view's region replaced by result."""
    new_base = view_scatter(base, result, _region_index(base, view._view_fn))
    _write(base, new_base)
    # base's version was bumped by _write; the view shares the counter
    if new_base.grad_fn is not None:
        base.grad_fn = new_base.grad_fn
        base._output_nr = 0
        base._requires_grad = True
    if base._requires_grad:
        _regenerate(view, base)


def _regenerate(view, base):
    """Give `view` the history of "its view steps applied to base's current history"."""
    fresh = _apply_view_steps(base, view._view_fn)
    view.grad_fn = fresh.grad_fn
    view._output_nr = fresh._output_nr
    view._requires_grad = fresh._requires_grad


def _refresh_views(base, done):
    """After `base`'s storage changed under autograd, no other live view of it may keep its old
    history: regenerate each one's grad_fn from base (PyTorch does this lazily when it sees the
    version counter moved). Outputs of multi-output views get a node that raises PyTorch's error
    when used instead, as PyTorch refuses to regenerate them."""
    views = base._views
    if not views or not base._requires_grad:
        return
    for v in list(views):
        if v is done or v._view_fn is None:
            continue
        multi = v._multi_view
        if multi is not None:
            if v._requires_grad:
                node = _StaleMultiView()
                node._msg = ERR_MULTI_VIEW_STALE.format(nr=multi[1], name=multi[0])
                v.grad_fn = node
                v._output_nr = 0
            continue
        _regenerate(v, base)


class _StaleMultiView(Node):
    """grad_fn of a split/chunk/unbind output whose base was modified in place: using it raises."""
    __slots__ = ("_msg",)

    def apply(self, grads, create_graph):
        raise RuntimeError(self._msg)
