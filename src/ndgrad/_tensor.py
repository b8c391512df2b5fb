"""Tensor: an array of the array module plus the autograd state PyTorch keeps on a tensor.

Hot attributes are slots: `_data` (the xp array), `dtype`, `_requires_grad`, `grad_fn` and `_vc`
(the version counter, a list shared by all views of one storage: `_vc[0]` is the version, and
`graph.bump_version` appends `(version, site)` of the latest in-place changes). Rarely set state
(`.grad`, hooks, the base of a view, ...) lives in the instance `__dict__`, created only when set,
with class-level defaults, so making a tensor costs five stores. Op methods (`__add__`, `exp`,
...) are attached by `ndgrad.ops`.
"""
import sys
import warnings
import weakref

from . import _dtype as D
from ._backend import numpy as _np, to_numpy, device_of, CPU, data_ptr as _data_ptr
from ._backend import obeys_layout, in_layout_of, dense_order, xp_of
from .autograd import grad_mode
from . import autograd as _autograd  # (backward() looked up on it at call time)
from .autograd.graph import AccumulateGrad, RemovableHandle, bump_version, user_site, \
    bump_version_in_backward

__all__ = ["Tensor", "Size"]

_BY_NP = D._BY_NP
_new = object.__new__


class _DisabledTorchFunctionImpl:
    """`__torch_function__ = torch._C._disabled_torch_function_impl` on a Tensor subclass turns
    the protocol off for it (nn.Parameter's): functions run as for a plain Tensor. An object,
    not a function, so that as a class attribute it is never bound (PyTorch's is a builtin)."""
    __slots__ = ()
    __name__ = __qualname__ = "_disabled_torch_function_impl"

    def __call__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        return func(*args, **kwargs)

    def __repr__(self):
        return "<built-in function _disabled_torch_function_impl>"


_disabled_torch_function_impl = _DisabledTorchFunctionImpl()


def _dispatching(cls):
    tf = getattr(cls, "__torch_function__", None)
    return tf is not None and getattr(tf, "__func__", tf) is not _disabled_torch_function_impl


def _convert(ret, cls):
    """Tensor results (also inside tuples and lists) as instances of cls (PyTorch's)."""
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        ret = ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        ret = type(ret)(_convert(r, cls) for r in ret) if type(ret) in (tuple, list) else \
            type(ret)(*(_convert(r, cls) for r in ret))
    return ret
_state = grad_mode._state

ERR_REQUIRES_GRAD_DTYPE = "only Tensors of floating point dtype can require gradients"
ERR_NONLEAF_REQUIRES_GRAD = (
    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
    "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().")
ERR_NUMPY_REQUIRES_GRAD = (
    "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
# Note [Inference tensors]: a tensor made under inference_mode is an inference tensor for life
# (`_inference`, set where tensors are made: _make and apply's fast path; views inherit it).
# Outside inference mode it may be read by any op, but not saved for backward, changed in
# place, or made to require grad: PyTorch's three errors below.
ERR_INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`.")
ERR_INFERENCE_INPLACE = ("Inplace update to inference tensor outside InferenceMode is not "
                         "allowed.You can make a clone to get a normal tensor before doing "
                         "inplace update.See https://github.com/pytorch/rfcs/pull/17 for more "
                         "details.")
ERR_INFERENCE_REQUIRES_GRAD = ("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
ERR_LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
WARN_NONLEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more informations. (Triggered internally at "
    "/pytorch/build/aten/src/ATen/core/TensorBody.h:497.)")


class Size(tuple):
    """torch.Size: a tuple of ints that prints as `torch.Size([2, 3])`."""
    __slots__ = ()

    def __repr__(self):
        return f"torch.Size([{', '.join(str(s) for s in self)}])"

    __str__ = __repr__

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return Size(r) if isinstance(item, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other):  # tuple + Size is a Size too, as in torch
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(other + tuple(self))

    def __reduce__(self):
        return (Size, (tuple(self),))


def _make(data, requires_grad=False):
    """Wrap an array in a new Tensor (no copy, no checks): the one constructor ops use."""
    t = _new(Tensor)
    t._data = data
    try:
        t.dtype = _BY_NP[data.dtype]
    except KeyError:
        t.dtype = D.from_numpy_dtype(data.dtype)
    t._requires_grad = requires_grad
    t.grad_fn = None
    t._vc = [0]
    if _state.inference:
        t._inference = True
    return t


class Tensor:
    __slots__ = ("_data", "dtype", "_requires_grad", "grad_fn", "_vc", "__dict__", "__weakref__")

    # defaults of state kept in __dict__ only when set
    _grad = None
    _base = None
    _output_nr = 0
    _hooks = None
    _post_acc_hooks = None
    _retains_grad = False
    _accumulator = None
    _view_fn = None
    _views = None           # root base: WeakSet of its live views (ops/_inplace.py refreshes them)
    _multi_view = None      # (node name, output nr) for outputs of split/chunk/unbind
    _view_nograd = False    # view created in no_grad mode
    _grad_reset = None     # site of `.grad = None` (autograd.explain reads these four)
    _detached_at = None    # site of the detach() that made this tensor
    _nograd_at = None      # (site, mode): made under no_grad/inference_mode from grad inputs
    _inference = False     # made under inference_mode (Note [Inference tensors])
    _reached_by = None     # the last backward() that accumulated into this leaf
    __array_ufunc__ = None      # NumPy defers binary operators to ours
    __array_priority__ = 1000
    is_sparse = False
    is_quantized = False
    is_meta = False
    is_nested = False
    layout = None            # torch.strided (set by ndgrad/sparse/_coo.py, which defines layouts)
    # Note [__torch_function__]: a subclass whose __torch_function__ is not the disabled one
    # (every subclass, unless it opts out as nn.Parameter does) takes over the torch functions
    # and methods called with its instances (overrides.py); _tf marks such classes, so a plain
    # Tensor pays one class-identity test per op.
    _tf = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._tf = _dispatching(cls)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """The default: run func with subclass dispatch off, then give Tensor results the
        subclass's type (as PyTorch's Tensor.__torch_function__)."""
        if kwargs is None:
            kwargs = {}
        if not all(issubclass(cls, t) for t in types):
            return NotImplemented
        from .overrides import DisableTorchFunctionSubclass, get_default_nowrap_functions
        with DisableTorchFunctionSubclass():
            ret = func(*args, **kwargs)
            if func in get_default_nowrap_functions():
                return ret
            return _convert(ret, cls)

    def __new__(cls, *args, **kwargs):
        """torch.Tensor(data) / torch.Tensor(*sizes) / torch.Tensor(torch.Size): the legacy
        constructor (default dtype; a Size argument is a shape, as PyTorch's)."""
        from . import _creation
        if len(args) == 1 and not isinstance(args[0], (int, Size)):
            src = args[0]
            if isinstance(src, Tensor):
                t = _make(src._data)
                t._vc = src._vc
            else:
                t = _creation.tensor(src, dtype=D.get_default_dtype())
        else:   # (no argument: PyTorch's empty 1-D tensor, shape [0])
            t = _creation.empty(*(args or (0,)), dtype=D.get_default_dtype())
        if cls is not Tensor:
            obj = _new(cls)
            obj._data, obj.dtype, obj._requires_grad, obj.grad_fn, obj._vc = (
                t._data, t.dtype, False, None, t._vc)
            return obj
        return t

    def _make_subclass(cls, data, require_grad=False, dispatch_strides=False,
                       dispatch_device=False, device_for_backend_keys=None):
        """Tensor._make_subclass(cls, data, require_grad): a cls instance sharing data's
        storage, a new leaf (PyTorch's static method, which nn.Parameter is built on)."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError("cls must be a type (got " + type(cls).__name__ + ")")
        if not isinstance(data, Tensor):
            raise TypeError(f"_make_subclass(): argument 'data' (position 2) must be Tensor, "
                            f"not {type(data).__name__}")
        requires_grad = require_grad
        obj = _new(cls)
        obj._data, obj.dtype, obj._requires_grad, obj.grad_fn, obj._vc = (
            data._data, data.dtype, False, None, data._vc)
        if requires_grad:
            obj.requires_grad_(True)
        return obj

    _make_subclass = staticmethod(_make_subclass)

    # ---------------------------------------------------------------- metadata
    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    def dim(self):
        return self._data.ndim

    ndimension = dim

    @property
    def ndim(self):
        return self._data.ndim

    def numel(self):
        return self._data.size

    nelement = numel

    def element_size(self):
        return self.dtype.itemsize

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self._data.nbytes

    @property
    def device(self):
        d = self._data
        return CPU if type(d) is _np.ndarray else device_of(d)

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def is_cpu(self):
        return self.device.type == "cpu"

    def get_device(self):
        return -1 if self.device.type == "cpu" else (self.device.index or 0)

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return self.dtype.is_complex

    def stride(self, dim=None):
        a = self._data
        st = tuple(s // a.itemsize for s in a.strides)
        if a.size == 0 and a.ndim and not any(st):   # (NumPy gives a new empty array zero
            n, st = 1, list(st)                     # strides; PyTorch's are contiguous)
            for d in reversed(range(a.ndim)):
                st[d] = n
                n *= max(a.shape[d], 1)
            st = tuple(st)
        return st if dim is None else st[_wrap_dim(dim, a.ndim)]

    def is_contiguous(self, memory_format=None):
        if memory_format is None:
            return bool(self._data.flags.c_contiguous)
        from ._backend import format_contiguous
        return format_contiguous(self._data, _format_name(memory_format))

    def storage_offset(self):
        base = self._base
        if base is None:
            return 0
        return (_data_ptr(self._data) - _data_ptr(base._data)) // self._data.itemsize

    def data_ptr(self):
        return _data_ptr(self._data)

    def untyped_storage(self):
        return UntypedStorage(self)

    @property
    def _cdata(self):
        """PyTorch's address of the C++ tensor: one number per tensor object (pyro compares
        them to tell a parameter from a copy)."""
        return id(self)

    def storage(self):
        """The deprecated TypedStorage view of this tensor's memory (linear_operator tests its
        truth: a storage of no elements is False), with PyTorch's one-time warning."""
        _warn_typed_storage_removal()
        return TypedStorage(self)

    @property
    def _version(self):
        return self._vc[0]

    def _bump_version(self):
        bump_version(self._vc)

    def is_inference(self):
        """True for a tensor made under inference_mode (Note [Inference tensors])."""
        return self._inference

    # ---------------------------------------------------------------- conversions
    def item(self):
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.reshape(-1)[0].item()

    def tolist(self):
        return to_numpy(self._data).tolist()  # host: Python numbers

    def numpy(self, *, force=False):
        if self._requires_grad and not force and grad_mode._state.enabled:
            raise RuntimeError(ERR_NUMPY_REQUIRES_GRAD)   # as PyTorch: allowed under no_grad
        if type(self._data) is not _np.ndarray:
            if not force:
                raise TypeError(
                    "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy "
                    "the tensor to host memory first.")
            return to_numpy(self._data)  # host: numpy(force=True) copies, as PyTorch
        if self.dtype._special == 1 or self.dtype._special == 2:  # (NumPy has no such type)
            raise TypeError(f"Got unsupported ScalarType {self.dtype._cname}")
        return self._data

    def __array__(self, dtype=None, copy=None):
        if self._requires_grad and grad_mode._state.enabled:   # (np.asarray(t) is t.numpy()
            raise RuntimeError(ERR_NUMPY_REQUIRES_GRAD)         # in PyTorch)
        a = to_numpy(self._data)  # host: NumPy asked for the values
        return a if dtype is None else a.astype(dtype, copy=False)

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with "
                f"{'no values' if self._data.size == 0 else 'more than one value'} is ambiguous")
        return bool(self._data.reshape(-1)[0])

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __complex__(self):
        return complex(self.item())

    def __index__(self):
        if self.dtype.is_floating_point or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __hash__(self):
        return id(self)

    def __repr__(self, *, tensor_contents=None):
        from ._tensor_str import tensor_repr
        return tensor_repr(self)

    def __format__(self, spec):
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, proto):
        host = to_numpy(self._data)  # host: pickled bytes; the device travels beside them
        if type(host) is self._data.__class__:
            return (_rebuild_tensor, (host, self._requires_grad))
        return (_rebuild_tensor, (host, self._requires_grad, str(self.device)))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        if not self.is_leaf:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
                "because of a torch.nn.utils.weight_norm usage, see "
                "https://github.com/pytorch/pytorch/pull/103001")
        new = _new(type(self))
        new._data, new.dtype, new._requires_grad, new.grad_fn, new._vc = (
            self._data.copy(), self.dtype, self._requires_grad, None, [0])
        memo[id(self)] = new
        if self._grad is not None:
            import copy
            new._grad = copy.deepcopy(self._grad, memo)
        for k, v in self.__dict__.items():
            if k not in ("_grad", "_accumulator", "_hooks", "_post_acc_hooks", "_base", "_vc",
                         "_views", "_view_fn", "_multi_view", "_view_nograd"):
                import copy
                setattr(new, k, copy.deepcopy(v, memo))
        return new

    # ---------------------------------------------------------------- autograd state
    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(bool(value))

    def requires_grad_(self, requires_grad=True):
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(ERR_NONLEAF_REQUIRES_GRAD)
            return self
        if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError(ERR_REQUIRES_GRAD_DTYPE)
        if requires_grad and self._inference and not _state.inference:
            raise RuntimeError(ERR_INFERENCE_REQUIRES_GRAD)
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def grad(self):
        if self._grad is None and self.grad_fn is not None and not self._retains_grad:
            warnings.warn(WARN_NONLEAF_GRAD, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}")
            if value.dtype is not self.dtype:
                raise RuntimeError(
                    "attempting to assign a gradient with dtype "
                    f"'{_scalar_type_name(value.dtype)}' to a tensor with dtype "
                    f"'{_scalar_type_name(self.dtype)}'. Please ensure that the gradient and the "
                    "tensor have the same dtype")
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor "
                    f"of size '{list(self.shape)}'. Please ensure that the gradient and the "
                    "tensor are the same size")
        elif self._grad is not None:
            self._grad_reset = user_site()  # for autograd.explain (zero_grad(set_to_none=True))
        self._grad = value

    @grad.deleter
    def grad(self):
        if self._grad is not None:
            self._grad_reset = user_site()
        self._grad = None

    @property
    def retains_grad(self):
        return self._retains_grad

    def retain_grad(self):
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        fn = self.grad_fn
        if fn._retain is None:
            fn._retain = {}
        fn._retain[self._output_nr] = weakref.ref(self)
        self._retains_grad = True

    @property
    def data(self):
        t = _make(self._data)
        return t

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        if self._requires_grad and value.dtype._category < 2:  # (issue 15: no integer grads)
            raise RuntimeError("data set to a tensor that requires gradients must be floating "
                               "point or complex dtype")
        self._data = value._data
        self.dtype = value.dtype

    def detach(self):
        """A new tensor sharing storage (and version counter) with this one, outside the graph."""
        t = _make(self._data)
        t._vc = self._vc
        if self._inference:
            t._inference = True  # (a view of the same storage: Note [Inference tensors])
        if self._requires_grad:
            t._detached_at = user_site()  # for autograd.explain
        return t

    def detach_(self):
        if self._base is not None:   # (any view, as PyTorch's is_view())
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
                "called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        self.grad_fn = None
        self._requires_grad = False
        return self

    def register_hook(self, hook):
        """hook(grad) -> None or a replacement gradient, called when this tensor's grad is computed."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn._register_tensor_hook(self._output_nr, hook)
        if self._hooks is None:
            self._hooks = {}
        h = RemovableHandle(self._hooks)
        self._hooks[h.id] = hook
        return h

    def register_post_accumulate_grad_hook(self, hook):
        """hook(tensor) runs after the gradient has been accumulated into this leaf's .grad."""
        if not self._requires_grad:
            raise RuntimeError(
                "cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._post_acc_hooks is None:
            self._post_acc_hooks = {}
        h = RemovableHandle(self._post_acc_hooks)
        self._post_acc_hooks[h.id] = hook
        return h

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate d(self)/d(leaf) into each leaf's .grad (a VJP with `gradient`)."""
        if gradient is None and inputs is None and not create_graph and not retain_graph and \
                self.grad_fn is not None:  # (`loss.backward()`: backward's common case)
            _autograd._backward_implicit(self)
            return
        _autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def _get_accumulator(self):
        ref = self._accumulator
        acc = ref() if ref is not None else None
        if acc is None:
            acc = AccumulateGrad(self)
            self._accumulator = weakref.ref(acc)
        return acc

    def _accumulate_grad(self, g, create_graph, owned=False, fresh=False):
        """Add g into .grad: in place when safe, out of place (recording) under create_graph.

        owned: g is the engine's own fresh tensor, referenced by nothing else (AccumulateGrad
        proves it by reference counts), so it becomes .grad as it is, without a copy.
        fresh: only the engine holds the tensor g (its array may be shared). Versions follow
        PyTorch: a fresh gradient in the right layout is taken as it is (its version carries
        over), any other is copied into a new tensor (copy_: version 1); each later in-place
        accumulation is one more in-place change."""
        old = self._grad
        if g.is_sparse or (old is not None and old.is_sparse):
            return self._accumulate_sparse_grad(old, g)
        if old is None:   # (the layout: AccumulateGrad's contract, _backend.obeys_layout)
            if create_graph:   # a fresh tensor recording the copy, as PyTorch's
                from ._creation import empty_like   # clone_obey_contract (never a view)
                self._grad = t = empty_like(g if g._data.strides == self._data.strides or
                                            dense_order(self._data) is None else self)
                t.copy_(g)
            elif owned and obeys_layout(g._data, self._data):
                self._grad = g
            elif g._data.strides != self._data.strides and \
                    not obeys_layout(g._data, self._data):
                self._grad = t = _make(in_layout_of(xp_of(g._data), g._data, self._data))
                t._vc[0] = 0 if dense_order(self._data) is None else 1   # (a clone; else
                #  new_empty_strided(...).copy_(grad))
            else:
                self._grad = t = _make(g._data.copy(order="K"))
                t._vc[0] = g._vc[0] if fresh and g._data.flags.c_contiguous else 1
        elif create_graph or old._requires_grad:
            self._grad = old + g
        else:
            old._data += g._data
            bump_version_in_backward(old._vc)

    def _accumulate_sparse_grad(self, old, g):
        """A sparse gradient (Embedding(sparse=True)) into .grad, as PyTorch's AccumulateGrad:
        kept sparse (sums of sparse gradients concatenate their entries), added into a dense
        .grad in place, or made dense when a dense gradient joins a sparse one."""
        from .sparse._coo import _sparse_cat, add_into
        if old is None:
            self._grad = g.detach()
        elif old.is_sparse and g.is_sparse:
            self._grad = _sparse_cat(old, g.detach())
        elif g.is_sparse:
            add_into(old._data, g)
            bump_version(old._vc)
        else:
            d = g._data.copy()
            self._grad = _make(add_into(d, old))

    def _check_inplace(self):
        """PyTorch's checks before an in-place op changes this tensor."""
        if self._requires_grad and self.grad_fn is None and _state.enabled:
            raise RuntimeError(ERR_LEAF_INPLACE)

    @property
    def _grad_fn(self):
        return self.grad_fn

    @property
    def output_nr(self):
        return self._output_nr

    def _is_view(self):
        """PyTorch's Tensor._is_view(): a method (libraries call it), True for views."""
        return self._base is not None

    # ---------------------------------------------------------------- misc torch API
    def cpu(self, memory_format=None):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False):
        if device is not None:
            from ._backend import cuda_available
            if not cuda_available():   # (PyTorch's CPU build, before CUDA's lazy init)
                from .accelerator import ERR_NONE
                raise RuntimeError(ERR_NONE)
            return self.to(device if isinstance(device, str) and device.startswith("cuda")
                           else f"cuda:{int(device)}" if not hasattr(device, "type")
                           else device)
        return self.to("cuda")

    def __dlpack__(self, *, stream=-1, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule sharing this tensor's memory (see utils/dlpack.py)."""
        from .utils.dlpack import _export
        return _export(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        """(DLDeviceType, device index) of this tensor's memory."""
        from .utils.dlpack import _device
        return _device(self)


def _is_view(t):
    return t._base is not None


Tensor.is_view = _is_view  # not torch API, but handy for tests


class UntypedStorage:
    """torch.UntypedStorage: the bytes of a tensor's memory (its base's), or new ones
    (`UntypedStorage(n)` zeros, `UntypedStorage([bytes...])`)."""

    def __init__(self, *args, device=None):
        if len(args) == 1 and isinstance(args[0], Tensor):
            t = args[0]
            base = t._base if t._base is not None else t
        else:
            from ._creation import tensor, zeros
            if len(args) == 1 and not isinstance(args[0], (int, _np.integer)):
                base = tensor(list(args[0]), dtype=D.uint8, device=device)
            else:
                base = zeros(args[0] if args else 0, dtype=D.uint8, device=device)
        self._t = base

    def data_ptr(self):
        return self._t.data_ptr()

    def nbytes(self):
        return self._t._data.nbytes

    def size(self):
        return self.nbytes()

    __len__ = size

    def element_size(self):
        return 1

    @property
    def device(self):
        return self._t.device

    def _bytes(self):
        host = to_numpy(self._t._data)  # host: the storage's bytes, read as Python numbers
        return _np.ascontiguousarray(host).reshape(-1).view(_np.uint8)  # host: (see above)

    def tolist(self):
        return self._bytes().tolist()

    def __getitem__(self, i):
        if isinstance(i, slice):     # (a view of those bytes: safetensors slices its file)
            view = UntypedStorage.__new__(UntypedStorage)
            view._t = self._byte_tensor()[i]
            return view
        return self._bytes()[i].tolist()

    def _byte_tensor(self):
        """The storage's bytes as a uint8 tensor sharing its memory (CPU)."""
        t = self._t
        if t.dtype is D.uint8 and t._data.ndim == 1:
            return t
        a = t._data
        if not (isinstance(a, _np.ndarray) and a.flags.c_contiguous):
            return _make(self._bytes())
        return _make(a.reshape(-1).view(_np.uint8))

    def untyped(self):
        return self

    @classmethod
    def from_file(cls, filename, shared=False, nbytes=0, *, size=None):
        """The bytes of a file, mapped into memory: shared=True writes through to the file,
        else copy-on-write (PyTorch's MAP_PRIVATE)."""
        n = nbytes if size is None else size
        mode = "r+" if shared else "c"
        if n:
            arr = _np.memmap(filename, dtype=_np.uint8, mode=mode, shape=(n,))  # host: a file
        else:
            arr = _np.zeros(0, _np.uint8)  # host: a file's bytes
        storage = cls.__new__(cls)
        storage._t = _make(arr.view(_np.ndarray))
        return storage


_TYPED_WARNED = [False]


def _warn_typed_storage_removal():
    if not _TYPED_WARNED[0]:
        _TYPED_WARNED[0] = True
        import warnings
        warnings.warn(
            "TypedStorage is deprecated. It will be removed in the future and UntypedStorage "
            "will be the only storage class. This should only matter to you if you are using "
            "storages directly.  To access UntypedStorage directly, use "
            "tensor.untyped_storage() instead of tensor.storage()", UserWarning, stacklevel=3)


class TypedStorage(UntypedStorage):
    """Tensor.storage(): the elements of the base tensor's memory, of its dtype; or new ones,
    `TypedStorage(n, dtype=...)` or `TypedStorage(sequence, dtype=...)` (the legacy classes,
    torch.FloatStorage(...), fix the dtype)."""
    dtype = property(lambda self: self._t.dtype)
    device = property(lambda self: self._t.device)

    def __init__(self, *args, dtype=None, device=None, wrap_storage=None, _internal=False):
        if len(args) == 1 and isinstance(args[0], Tensor):
            UntypedStorage.__init__(self, args[0])
            return
        from ._creation import tensor, empty
        dt = getattr(type(self), "_legacy_dtype", None) or dtype or D.get_default_dtype()
        if len(args) == 1 and not isinstance(args[0], (int, _np.integer)):
            self._t = tensor(list(args[0]), dtype=dt, device=device)
        else:
            self._t = empty(args[0] if args else 0, dtype=dt, device=device)

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist())
        return (body + "\n" if body else "") + \
            f"[torch.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size " \
            f"{len(self)}]"

    def __len__(self):
        return self._t._data.size

    def size(self):
        return self._t._data.size

    def element_size(self):
        return self._t._data.itemsize

    def tolist(self):
        return self._t.reshape(-1).tolist()

    def __getitem__(self, i):
        return self._t.reshape(-1)[i].item()

    def untyped(self):
        return UntypedStorage(self._t)


def _rebuild_tensor(array, requires_grad, device=None):
    """An unpickled tensor (on `device` when it was pickled from one)."""
    array = _np.array(array)  # host: the unpickled bytes
    if device is not None:
        from ._backend import device as _device
        array = _device(device).xp.asarray(array)
    t = _make(array)  # host: unpickled data
    t._requires_grad = requires_grad
    return t


def _scalar_type_name(d):
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
            "int32": "int", "bool": "bool", "uint8": "unsigned char", "int8": "signed char",
            "int16": "short int"}.get(d.name, d.name)


_FORMATS = frozenset(("contiguous_format", "preserve_format", "channels_last", "channels_last_3d"))


def _format_name(memory_format):
    """The name of a torch.memory_format (None: contiguous_format)."""
    if memory_format is None:
        return "contiguous_format"
    name = getattr(memory_format, "name", None)
    if name not in _FORMATS or type(memory_format).__name__ != "memory_format":
        raise TypeError(f"memory_format must be torch.memory_format, not "
                        f"{type(memory_format).__name__}")
    return name


def _wrap_dim(dim, ndim):
    """Normalize a possibly negative dim, with PyTorch's error when out of range."""
    n = ndim if ndim > 0 else 1
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim
