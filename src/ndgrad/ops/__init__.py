"""The op families, and the Tensor methods and operators built on them."""
from .. import _dtype as D
from ._argcheck import renamed as _renamed
from .._backend import device as _device, xp_of
from .._tensor import Tensor, _make
from . import pointwise, reduction, shape, linalg
from ._inplace import inplace, make_inplace, register_direct, inplace_operator
from ._registry import defop, dunder, _NOT_OPERANDS
from . import _registry
from .complex import conj as _conj
from .pointwise import _check_bool_sub, _sub, _div, _rsub, _rsub_tensor
from .linalg import matmul, mm, bmm, mv, dot, matmul_operator, matmul_method
from .pointwise import (add, sub, rsub, mul, div, true_divide, divide, pow, neg, exp, log, sqrt,
                        tanh, sigmoid, relu, abs, sign, where, eq, ne, lt, le, gt, ge,
                        logical_not, bitwise_and, bitwise_or, bitwise_xor, bitwise_not)
from .reduction import sum, mean, norm
from .shape import (sum_to, sum_to_size, expand, expand_as, broadcast_to, broadcast_shapes,
                    reshape, view, view_as, reshape_as, flatten, transpose, t, permute, squeeze,
                    unsqueeze, clone, contiguous, to_dtype, getitem, index_put, _normalize_key)

swapdims = transpose
swapaxes = _renamed(transpose, "swapaxes", dim0="axis0", dim1="axis1")  # (PyTorch's names)
negative = neg
absolute = abs
multiply = mul
subtract = sub


# ---------------------------------------------------------------- a few more core ops

def _clamp_fwd(xp, self, min=None, max=None):
    return xp.clip(self, min, max).astype(self.dtype, copy=False)


def _clamp_grad(grad, self, min, max):
    mask = None
    if min is not None:
        mask = self >= min
    if max is not None:
        m2 = self <= max
        mask = m2 if mask is None else mask & m2
    return grad * mask


_clamp = defop("clamp", _clamp_fwd, promote="binary", self=_clamp_grad)


def clamp(input, min=None, max=None):
    """torch.clamp(input, min=None, max=None) with scalar or tensor bounds."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return _clamp(input, min, max)


clip = clamp


def _copy_fwd(xp, self, src):
    import numpy
    return xp.broadcast_to(src, self.shape).astype(self.dtype, copy=True)


_copy = defop("copy", _copy_fwd, node_name="CopyBackwards", quiet=True,
              self=lambda grad: grad * 0, src=lambda grad: grad)


def _fill_fwd(xp, self, value):
    return xp.full(self.shape, value, dtype=self.dtype)


_fill = defop("fill", _fill_fwd, node_name="FillBackward0", self=lambda grad: grad * 0,
              value=lambda grad: grad.sum())


def zero_(input):
    return inplace(input, _fill, 0)


def fill_(input, value):
    self = input
    if isinstance(value, Tensor) and value._data.ndim != 0:
        raise RuntimeError(
            "fill_ only supports 0-dimension value tensor but got tensor with "
            f"{value._data.ndim} dimensions.")
    if isinstance(value, (int, float)):
        from .._creation import check_fill_value
        check_fill_value(value, self.dtype)  # PyTorch's overflow error, before any change
    return inplace(self, _fill, value)


def _fill_diagonal_fwd(xp, self, fill_value, wrap):
    out = self.copy()
    xp.fill_diagonal(out, fill_value, wrap=wrap)
    return out


_fill_diagonal = defop("fill_diagonal", _fill_diagonal_fwd, node_name="CopySlices",
                       self=lambda grad, wrap: _fill_diagonal(grad, 0, wrap))


def fill_diagonal_(self, fill_value, wrap=False):
    shape = self._data.shape
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    return inplace(self, _fill_diagonal, fill_value, wrap)


def copy_(self, other, non_blocking=False):  # (PyTorch's Python name of its `src`)
    return inplace(self, _copy, other)


def _reshaping_inplace(fn):
    """t_, transpose_, squeeze_, unsqueeze_: the tensor takes the view's shape and history
    (as PyTorch's TBackward1 etc.); its storage and existing views are untouched."""
    def f(self, *args, **kwargs):
        self._check_inplace()
        r = fn(self, *args, **kwargs)
        self._data = r._data
        if r.grad_fn is not None:
            self.grad_fn = r.grad_fn
            self._output_nr = r._output_nr
        self._bump_version()
        return self
    f.__name__ = fn.__name__ + "_"
    return f


_TO_TAIL = ("non_blocking", "copy")
_TO_OVERLOADS = (   # PyTorch's parser's (its stub calls the tensor `other`; the parser `tensor`)
    ("device", "dtype") + _TO_TAIL, ("dtype",) + _TO_TAIL, ("tensor",) + _TO_TAIL)
_TO_SIGNATURES = tuple(s + ", bool non_blocking = False, bool copy = False, *, "
                       "torch.memory_format memory_format = None)" for s in (
                           "(torch.device device = None, torch.dtype dtype = None",
                           "(torch.dtype dtype", "(Tensor tensor"))


def _to_args(args, kwargs):
    """Tensor.to's (dtype, device, copy) from its three overloads, as PyTorch's parser reads
    them: to(device=None, dtype=None, non_blocking=False, copy=False), to(dtype, non_blocking,
    copy), to(tensor, non_blocking, copy); memory_format by keyword in each."""
    first = args[0] if args else None
    if isinstance(first, Tensor) or (not args and "tensor" in kwargs):
        names = _TO_OVERLOADS[2]
    elif isinstance(first, D.dtype) or (isinstance(first, type) and first is not str) or \
            (args and not isinstance(first, (str, _device, int)) and first is not None):
        names = _TO_OVERLOADS[1]   # (a dtype, or what stands for one: float, numpy's)
    else:
        names = _TO_OVERLOADS[0]
    given = dict(zip(names, args))
    if len(args) > len(names) or [
            k for k in kwargs if k in given or (k not in names and k != "memory_format")]:
        from ._argcheck import combination_error
        raise combination_error("to", _TO_SIGNATURES, args, kwargs)
    given.update(kwargs)
    other = given.get("tensor")
    if other is not None:
        return other.dtype, other.device, given.get("copy", False)
    dtype = given.get("dtype")
    if dtype is not None and not isinstance(dtype, D.dtype):
        dtype = D.to_dtype(dtype)
    return dtype, given.get("device"), given.get("copy", False)


def to(self, *args, **kwargs):
    """Tensor.to(dtype) / to(device) / to(tensor) / to(device, dtype); self when unchanged."""
    if not kwargs and len(args) == 1 and args[0].__class__ is D.dtype:
        dtype, device, copy = args[0], None, False   # (the common call, parsed inline)
    else:
        dtype, device, copy = _to_args(args, kwargs)
    out = self
    if device is not None and _device(device) != self.device:
        from .._backend import to_numpy
        xp = _device(device).xp
        out = _move(self, xp)
    if dtype is not None and D.to_dtype(dtype) is not out.dtype:
        out = to_dtype(out, D.to_dtype(dtype))
    elif copy and out is self:
        out = clone(self)
    fmt = kwargs.get("memory_format") if kwargs else None
    if fmt is not None:    # (PyTorch's to_will_alias: self where the format it suggests is the
        from .._tensor import _format_name          # one asked for; a converted copy laid
        from .._backend import format_contiguous, suggest_format     # out in that format)
        name = _format_name(fmt)
        if name != "preserve_format" and (
                suggest_format(out._data) != name if out is self else
                not format_contiguous(out._data, name)):
            out = clone(out, memory_format=fmt)
    return out


def _move_fwd(xp, self, target):
    from .._backend import to_numpy
    if target.__name__ != "numpy":
        return target.asarray(self)
    return to_numpy(self)  # host: .cpu() / .to("cpu")


_move_op = defop("to_device", _move_fwd, node_name="ToCopyBackward0",
                 self=lambda grad, self: to(grad, self.device))


def _move(self, xp):
    if self.dtype._special and self.dtype._special <= 2 and xp.__name__ != "numpy":
        # (ml_dtypes' types live on the host only: CuPy has no bfloat16 or float8 arrays)
        raise TypeError(f"ndgrad: {self.dtype} tensors cannot move to a CUDA device: CuPy has "
                        f"no {self.dtype.name} type (keep them on the CPU, or use float16)")
    return _move_op(self, xp)


def _unbind_fwd(xp, self, dim):
    return tuple(xp.take(self, i, axis=dim) for i in range(self.shape[dim]))


def unbind(input, dim=0):
    from .._tensor import _wrap_dim
    dim = _wrap_dim(dim, input._data.ndim)
    idx = (slice(None),) * dim
    return tuple(getitem(input, idx + (i,)) for i in range(input._data.shape[dim]))


def _setitem(self, key, value):
    if self.__class__ is not Tensor or isinstance(value, Tensor) and value.__class__ is not Tensor:
        # a Tensor subclass with __torch_function__ (pyro's ProvenanceTensor) gets
        # Tensor.__setitem__ itself, as PyTorch dispatches it, not the index_put under it
        from .. import overrides
        keys = key if isinstance(key, tuple) else (key,)
        relevant = _registry._tf_relevant((self, value) + keys, None)
        if relevant and overrides.has_torch_function(relevant):
            return overrides._dispatch_builtin(Tensor.__setitem__, relevant,
                                               (self, key, value), {})
    if (value.__class__ is int or value.__class__ is float) and self.dtype._category < 2:
        from .._creation import check_fill_value   # (x[0] = 300 of an int8 tensor: PyTorch's
        check_fill_value(value, self.dtype)         # overflow error, not NumPy's wrap)
    key = _normalize_key(key, self)
    if isinstance(value, (list, tuple)):
        from .._creation import tensor
        value = tensor(value, dtype=self.dtype, device=self.device)
    if not shape._has_advanced(key):
        # basic indexing: copy into the view, as PyTorch does (the base's grad_fn: CopySlices)
        region = getitem(self, key)
        copy_(region, shape._check_setitem_value(region, value))
        return
    split = shape._split_ints(key)
    if split is not None:   # (integers first, as PyTorch: into the view they select)
        return _setitem(getitem(self, split[0]), split[1], value)
    shape._check_index_put_dtype(self, key, value)
    inplace(self, index_put, key, value)


_setitem.__name__ = _setitem.__qualname__ = "__setitem__"   # (Tensor.__setitem__, PyTorch's name)


def index_put_(input, indices, values, accumulate=False):
    self = input
    key = tuple(_normalize_key(tuple(indices), self))
    shape._check_index_put_dtype(self, key if key else (), values)
    return inplace(self, index_put, key, values, accumulate)


# ---------------------------------------------------------------- Tensor methods

def _type_conv(dtype):
    def conv(self, memory_format=None):
        return to(self, dtype)
    return conv


def _pow_operator(self, other):
    if isinstance(other, _NOT_OPERANDS):  # (Python's own TypeError, as PyTorch's operator)
        return NotImplemented
    return pow(self, other)


def _rpow(self, other):
    if isinstance(other, _NOT_OPERANDS):
        return NotImplemented
    return pow(other, self)


def _rdiv(self, other):
    return div(other, self)


def _rdiv_method(self, other):
    """Tensor.__rdiv__ called as a function: PyTorch's is `self.reciprocal() * other`, so a
    Number self raises AttributeError (Python's reflected `/` calls __rtruediv__)."""
    if not isinstance(self, Tensor):
        raise AttributeError(f"'{type(self).__name__}' object has no attribute 'reciprocal'")
    return div(other, self)


def _make_rsub_method():
    number, tensor = dunder(_rsub), dunder(_rsub_tensor, name="rsub")

    def __rsub__(self, other):
        """other - self: a Tensor other gets its gradient too (RsubBackward0)."""
        return (tensor if isinstance(other, Tensor) else number)(self, other)
    return __rsub__


def _rmatmul(self, other):
    if not isinstance(other, Tensor):  # (x @ t with x no tensor: Python words the TypeError)
        return NotImplemented
    return matmul(other, self)


def _floordiv(self, other):
    return div(self, other, rounding_mode="floor")


def _rfloordiv(self, other):
    return div(other, self, rounding_mode="floor")


def _and(self, other):
    return bitwise_and(self, other)


def _or(self, other):
    return bitwise_or(self, other)


def _xor(self, other):
    return bitwise_xor(self, other)


def _invert(self):
    return logical_not(self) if self.dtype is D.bool else bitwise_not(self)


def _size_property_T(self):
    nd = self._data.ndim
    return permute(self, tuple(reversed(range(nd))))  # a view for every nd, as PyTorch


def _matrix_property(name):
    """Tensor.mT / mH / H (the last two dims swapped; mH and H also conjugate complex tensors),
    with PyTorch's checks; a 0-d tensor is returned as it is, as PyTorch does."""
    def prop(self):
        nd = self._data.ndim
        if nd == 0:
            return self
        if name == "H" and nd != 2:
            raise RuntimeError(
                f"tensor.H is only supported on matrices (2-D tensors). Got {nd}-D tensor."
                + (" For batches of matrices, consider using tensor.mH" if nd > 2 else ""))
        if nd < 2:
            raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of "
                               f"matrices. Got {nd}-D tensor.")
        r = transpose(self, -2, -1)
        return r if name == "mT" else _conj(r)  # (conj: the tensor itself unless complex)
    return prop


_mT = _matrix_property("mT")


ERR_NO_ATEN_CUDA = (
    "Cannot initialize CUDA without ATen_cuda library. PyTorch splits its backend into two "
    "shared libraries: a CPU library and a CUDA library; this error has occurred because you are "
    "trying to use some CUDA functionality, but the CUDA library has not been loaded by the "
    "dynamic linker for some reason.  The CUDA library MUST be loaded, EVEN IF you don't "
    "directly use any symbols from the CUDA library! One common culprit is a lack of "
    "-Wl,--no-as-needed in your link arguments; many dynamic linkers will delete dynamic library "
    "dependencies if you don't depend on any of their symbols.  You can check if this has "
    "occurred by using ldd on your binary to see if there is a dependency on *_cuda.so library.")


def _type(self, dtype=None, non_blocking=False, **kwargs):
    if dtype is None:
        from ..autograd.graph import _type_string
        return _type_string(self)
    if (getattr(dtype, "is_cuda", False) is True
            or (isinstance(dtype, str) and dtype.startswith("torch.cuda."))):
        from .._backend import cuda_available
        if not cuda_available():
            raise RuntimeError(ERR_NO_ATEN_CUDA)
    if isinstance(dtype, str):
        names = {"torch.FloatTensor": D.float32, "torch.DoubleTensor": D.float64,
                 "torch.LongTensor": D.int64, "torch.IntTensor": D.int32,
                 "torch.BoolTensor": D.bool, "torch.HalfTensor": D.float16,
                 "torch.ByteTensor": D.uint8, "torch.BFloat16Tensor": D.bfloat16,
                 "torch.ShortTensor": D.int16, "torch.CharTensor": D.int8}
        if dtype not in names:   # (PyTorch's type() takes the legacy class names only)
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = names[dtype]
    elif isinstance(dtype, type) and isinstance(getattr(dtype, "dtype", None), D.dtype):
        dtype = dtype.dtype  # a legacy class: x.type(torch.IntTensor)
    return to(self, dtype)


def _type_as(self, other):
    return to(self, other.dtype)


def _new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    from .._creation import tensor
    return tensor(data, dtype=dtype or self.dtype, device=self.device if device is None else device,
                  requires_grad=requires_grad)


def _new_filled(value):
    def f(self, *sizes, size=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False):
        from .._creation import _filled, _sizes
        sizes = _sizes(sizes, size, "new_empty" if value is None else f"new_{_NEW[value]}")
        if len(sizes) > 1 and isinstance(sizes[0], (tuple, list)):
            # PyTorch's positional overload new_ones(size, dtype=None, device=None,
            # requires_grad=False, pin_memory=False)
            sizes, rest = sizes[:1], sizes[1:]
            dtype, device, requires_grad = (rest + (dtype, device, requires_grad)[len(rest):])[:3]
        return _filled(sizes, value or 0, dtype or self.dtype,
                       self.device if device is None else device, requires_grad)
    return f


_NEW = {0: "zeros", 1: "ones"}


def _new_full(self, size, fill_value, *, dtype=None, layout=None, device=None,
              requires_grad=False, pin_memory=False):
    from .._creation import _filled
    return _filled((tuple(size),), fill_value, dtype or self.dtype,
                   self.device if device is None else device, requires_grad)


def _write_values(self, values):
    """Writes `values` (a host draw) into self, moved to self's device once."""
    from ._inplace import _write
    self._check_inplace()
    values = values.astype(self.dtype.np)
    d = self._data
    _write(self, _make(values if type(d) is type(values) else xp_of(d).asarray(values)))


def with_grad_off(f):
    return f()


def _item_dunder(op, swap=False):
    if swap:
        return lambda self, other: op(other, self)
    return lambda self, other: op(self, other)


for _fn, _ufunc in ((add, "add"), (sub, "subtract"), (mul, "multiply"), (div, "true_divide")):
    register_direct(_fn, _ufunc)


def _iop(op):
    return inplace_operator(op)


def _sub_operator(self, other):
    """`self - other` (sub's body, one frame); None or a string: NotImplemented, as PyTorch."""
    try:
        _check_bool_sub(self, other)
        return _sub(self, other, 1)
    except Exception:
        if isinstance(other, _NOT_OPERANDS):
            return NotImplemented
        raise


_registry._OPERATOR_CODES[_sub_operator.__code__] = ("sub", 2)  # (see _tf_dispatch)

METHODS = {
    # arithmetic
    "add": add, "sub": sub, "subtract": sub, "mul": mul, "multiply": mul, "div": div,
    "divide": div, "true_divide": true_divide, "pow": pow, "neg": neg, "negative": neg,
    "exp": exp, "log": log, "sqrt": sqrt, "tanh": tanh, "sigmoid": sigmoid, "relu": relu,
    "abs": abs, "absolute": abs, "sign": sign, "clamp": clamp, "clip": clip,
    # comparisons
    "eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge, "logical_not": logical_not,
    # reductions
    "sum": sum, "mean": mean, "norm": norm,
    # linear algebra
    "matmul": matmul_method, "mm": mm, "bmm": bmm, "mv": mv, "dot": dot,
    # shape
    "reshape": reshape, "view": view, "view_as": view_as, "reshape_as": reshape_as,
    "expand": expand, "expand_as": expand_as, "broadcast_to": broadcast_to,
    "sum_to_size": sum_to_size, "flatten": flatten, "transpose": transpose,
    "swapaxes": swapaxes, "swapdims": transpose, "t": t, "permute": permute,
    "squeeze": squeeze, "unsqueeze": unsqueeze, "contiguous": contiguous, "clone": clone,
    "unbind": unbind, "to": to, "type": _type, "type_as": _type_as,
    "float": _type_conv(D.float32), "double": _type_conv(D.float64),
    "half": _type_conv(D.float16), "long": _type_conv(D.int64), "int": _type_conv(D.int32),
    "short": _type_conv(D.int16), "char": _type_conv(D.int8), "byte": _type_conv(D.uint8),
    "bool": _type_conv(D.bool), "bfloat16": _type_conv(D.bfloat16),
    # in-place
    "zero_": zero_, "fill_": fill_, "copy_": copy_, "index_put_": index_put_,
    "fill_diagonal_": fill_diagonal_, "t_": _reshaping_inplace(t),
    "transpose_": _reshaping_inplace(transpose), "swapaxes_": _reshaping_inplace(swapaxes),
    "swapdims_": _reshaping_inplace(transpose), "squeeze_": _reshaping_inplace(squeeze),
    "unsqueeze_": _reshaping_inplace(unsqueeze),
    "new_tensor": _new_tensor, "new_zeros": _new_filled(0), "new_ones": _new_filled(1),
    "new_empty": _new_filled(None), "new_full": _new_full,
    # operators
    "__add__": dunder(add), "__radd__": dunder(add), "__sub__": _sub_operator,
    "__rsub__": _make_rsub_method(), "__mul__": dunder(mul), "__rmul__": dunder(mul),
    "__truediv__": dunder(_div), "__rtruediv__": _rdiv, "__rdiv__": _rdiv_method,
    "__floordiv__": _floordiv,
    "__rfloordiv__": _rfloordiv, "__pow__": _pow_operator, "__rpow__": _rpow, "__matmul__": matmul_operator,
    "__rmatmul__": _rmatmul, "__neg__": neg, "__pos__": lambda self: self, "__abs__": abs,
    "__eq__": dunder(eq, none=False), "__ne__": dunder(ne, none=True), "__lt__": dunder(lt),
    "__le__": dunder(le), "__gt__": dunder(gt), "__ge__": dunder(ge),
    "__and__": _and, "__or__": _or, "__xor__": _xor, "__invert__": _invert,
    "__rand__": _item_dunder(_and, True), "__ror__": _item_dunder(_or, True),
    "__rxor__": _item_dunder(_xor, True),
    "__getitem__": getitem, "__setitem__": _setitem,
    "__iadd__": _iop(add), "__isub__": _iop(sub), "__imul__": _iop(mul),
    "__itruediv__": _iop(div), "__ipow__": _iop(pow), "__iand__": _iop(bitwise_and),
    "__ior__": _iop(bitwise_or), "__ixor__": _iop(bitwise_xor),
}

# in-place variants of elementwise ops: x.add_(y) == inplace(x, add, y)
for _name in ("add", "sub", "mul", "div", "pow", "neg", "exp", "log", "sqrt", "tanh",
              "sigmoid", "relu", "abs", "sign", "clamp", "clip", "true_divide", "subtract",
              "multiply", "divide"):
    METHODS[_name + "_"] = make_inplace(METHODS[_name])

PROPERTIES = {"T": _size_property_T, "mT": _mT, "H": _matrix_property("H"),
              "mH": _matrix_property("mH")}


def install(methods=None, properties=None):
    """Attach functions as Tensor methods (and properties). Families call this as they load."""
    for name, fn in (methods or {}).items():
        setattr(Tensor, name, fn)
    for name, fn in (properties or {}).items():
        setattr(Tensor, name, property(fn))


install(METHODS, PROPERTIES)

relu_ = METHODS["relu_"]
sigmoid_ = METHODS["sigmoid_"]
tanh_ = METHODS["tanh_"]
exp_ = METHODS["exp_"]
clamp_ = METHODS["clamp_"]
clip_ = METHODS["clip_"]

# ---------------------------------------------------------------- shape, views and indexing (issue 3 B)
from . import indexing  # noqa: E402
from .shape import (unflatten, movedim, moveaxis, narrow, select, unfold, diagonal,  # noqa: E402
                    diag_embed, repeat, tile, repeat_interleave, flip, fliplr, flipud, roll, rot90,
                    cat, concat, concatenate, stack, hstack, vstack, dstack, row_stack,
                    column_stack, atleast_1d, atleast_2d, atleast_3d, split, chunk, tensor_split,
                    unbind, meshgrid)
from .indexing import (index_select, gather, scatter, scatter_add, scatter_reduce,  # noqa: E402
                       index_add, index_copy, index_fill, masked_fill, masked_select,
                       masked_scatter, take, take_along_dim, nonzero, argwhere, sort, argsort,
                       topk, kthvalue, unique, searchsorted, bucketize, bincount)

SHAPE_METHODS = {
    "unflatten": unflatten, "movedim": movedim, "moveaxis": moveaxis, "narrow": narrow,
    "select": select, "unfold": unfold, "diagonal": diagonal, "diag_embed": diag_embed,
    "repeat": repeat, "tile": tile, "repeat_interleave": repeat_interleave, "flip": flip,
    "fliplr": fliplr, "flipud": flipud, "roll": roll, "rot90": rot90,
    "split": shape.split_method,
    "chunk": chunk, "tensor_split": tensor_split, "unbind": unbind,
    "index_put": shape.index_put_method,
}
METHODS.update(SHAPE_METHODS)
METHODS.update(indexing.METHODS)
install(SHAPE_METHODS)
install(indexing.METHODS)

# ---------------------------------------------------------------- elementwise, reductions, activations (issue 3 A)
from . import activation  # noqa: E402
from .pointwise import *  # noqa: E402,F401,F403  (replaces the early clamp/clip above)
from .reduction import *  # noqa: E402,F401,F403
from .activation import softmax, log_softmax, selu, celu, threshold  # noqa: E402,F401
from .pointwise import _invert  # noqa: E402,F401

for _family in (pointwise, reduction, activation):
    METHODS.update(_family.METHODS)
    install(_family.METHODS)
for _name in pointwise._INPLACE:
    globals()[_name + "_"] = METHODS[_name + "_"]

from . import linalg as _linalg_ops  # noqa: E402
from .linalg import (vdot, outer, ger, addmm, addmv, addbmm, baddbmm, einsum,  # noqa: E402
                     tensordot, kron, trace, diag, tril, triu, det, slogdet, logdet, cross)
from .linalg import inv as inverse  # noqa: E402

LINALG_METHODS = {
    "vdot": vdot, "outer": outer, "ger": ger, "addmm": addmm, "addmv": addmv, "addbmm": addbmm,
    "baddbmm": baddbmm, "kron": kron, "trace": trace, "diag": diag, "tril": tril, "triu": triu,
    "det": det, "slogdet": slogdet, "logdet": logdet, "inverse": inverse, "cross": cross,
}
for _n in ("tril", "triu", "addmm", "addmv", "addbmm", "baddbmm"):
    LINALG_METHODS[_n + "_"] = make_inplace(LINALG_METHODS[_n])
METHODS.update(LINALG_METHODS)
install(LINALG_METHODS)

# ---------------------------------------------------------------- more ops (PyTorch parity)
# Each family module ends with a section that lists its new torch functions (MORE_FUNCTIONS) and
# Tensor methods (MORE_METHODS); sampling.py has the random in-place initialisers.
from . import sampling  # noqa: E402
for _family in (pointwise, reduction, shape, _linalg_ops, indexing, sampling):
    globals().update(getattr(_family, "MORE_FUNCTIONS", {}))
    METHODS.update(getattr(_family, "MORE_METHODS", {}))
    install(getattr(_family, "MORE_METHODS", {}))

# ---------------------------------------------------------------- complex numbers (issue 13)
from . import complex as _complex_ops  # noqa: E402
globals().update(_complex_ops.MORE_FUNCTIONS)
METHODS.update(_complex_ops.MORE_METHODS)
install(_complex_ops.MORE_METHODS)
for _n, _p in _complex_ops.PROPERTIES.items():
    setattr(Tensor, _n, _p)

# ---------------------------------------------------------------- the rest of the Tensor API
from . import tensor_api as _tensor_api  # noqa: E402
globals().update(_tensor_api.FUNCTIONS)
METHODS.update(_tensor_api.METHODS)
install(_tensor_api.METHODS, _tensor_api.PROPERTIES)
from . import special as _special_ops  # noqa: E402  (torch.special's kernels; torch.igamma)
globals().update(_special_ops.MORE_FUNCTIONS)
METHODS.update(_special_ops.MORE_METHODS)
install(_special_ops.MORE_METHODS)


def __getattr__(name):
    # torch.ops.<namespace>: the operators torch.library registered under it (library.py)
    if not name.startswith("_"):
        import sys
        lib = sys.modules.get(__name__.rpartition(".")[0] + ".library")
        if lib is None and name == "aten":     # (torch.ops.aten: library.py's, loaded now)
            import importlib
            lib = importlib.import_module(__name__.rpartition(".")[0] + ".library")
        ns = lib._namespace(name) if lib is not None else None
        if ns is not None:
            return ns
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
