"""The operands of the optimizers' single-tensor kernels (Note [optimizer structure] in
optimizer.py): `Arr`, an array behind the Tensor methods the kernels call, rounded as PyTorch's
CPU kernels round (ops/_fma.py: the fused multiply-adds of add_(alpha), addcmul_ and lerp_), and
`F`, the torch functions they call, for Arr and Tensor operands alike.

Complex parameters are updated as pairs of reals (`view_as_real`), as PyTorch's optimizers do.
"""
import threading

from .._backend import xp_of, is_array, numpy as _np
from ..autograd.graph import bump_version_at
from .. import _dtype as D
from .._tensor import Tensor, _make
from ..ops import _fma

__all__ = ["Arr", "F", "operands", "bump_versions", "state_tensor", "sqrt", "as_real",
           "small_groups", "Concat", "flat_parts"]

_HALF = (D.float16, D.bfloat16)


def sqrt(arr, out=None):
    """Square root, correctly rounded. PyTorch's CPU build takes its sqrt from MKL's vector math
    (vsSqrt/vdSqrt: within 0.75 ulp, about 17 % of float32 and 1 % of float64 results one ulp off
    the correctly rounded root): ndgrad keeps the correctly rounded root; tests put PyTorch's in
    its seam (ops/_fma.sqrt, read at each call) to show that every other operation of a
    trajectory is PyTorch's, bit for bit."""
    return _fma.sqrt(arr, out=out)


def as_real(arr):
    """A complex array as a real array with a trailing dimension of 2 (a view), others as they
    are. The trailing unit axis lets the view work on any strides (a gradient may be a
    transposed array)."""
    if arr.dtype.kind == "c":
        return arr[..., None].view(arr.real.dtype)
    return arr


def _a(x):
    """An operand's array (Arr) or the value itself (a Python number)."""
    return x.data if type(x) is Arr else x


class Arr:
    """An array with the Tensor methods of PyTorch's single-tensor optimizer kernels. In-place
    methods change the array and return self; the others return a new Arr. Python numbers are
    rounded to the array's dtype (PyTorch's scalar_t) where a kernel takes them as a scalar."""
    __slots__ = ("data",)

    def __init__(self, data):
        # (NumPy's arithmetic on 0-d arrays gives scalars, which in-place methods cannot
        # change: a 0-d parameter's denominator lost its eps, and a zero gradient made NaN)
        if isinstance(data, _np.generic):
            data = _np.asarray(data)  # host: a NumPy scalar back to a 0-d array (CuPy has none)
        self.data = data

    # ------------------------------------------------------------ metadata
    @property
    def dtype(self):
        return self.data.dtype

    @property
    def shape(self):
        return self.data.shape

    def dim(self):
        return self.data.ndim

    def numel(self):
        return self.data.size

    def size(self, dim=None):
        return self.data.shape if dim is None else self.data.shape[dim]

    def is_complex(self):
        return self.data.dtype.kind == "c"

    def item(self):
        return self.data.item()

    def __float__(self):
        return float(self.data)

    def __bool__(self):
        return bool(self.data)

    # ------------------------------------------------------------ in place
    def add_(self, other, alpha=1):
        _fma.add_(self.data, _a(other), alpha)
        return self

    def sub_(self, other, alpha=1):
        _fma.add_(self.data, _a(other), -alpha)
        return self

    def mul_(self, other):
        self.data *= _a(other)
        return self

    def div_(self, other):
        self.data /= _a(other)
        return self

    def addcmul_(self, tensor1, tensor2, value=1):
        _fma.addcmul_(self.data, _a(tensor1), _a(tensor2), value)
        return self

    def addcdiv_(self, tensor1, tensor2, value=1):
        _fma.addcdiv_(self.data, _a(tensor1), _a(tensor2), value)
        return self

    def lerp_(self, end, weight):
        _fma.lerp_(self.data, _a(end), _a(weight))
        return self

    def sqrt_(self):
        sqrt(self.data, out=self.data)
        return self

    def rsqrt_(self):
        xp = xp_of(self.data)
        xp.divide(1, xp.sqrt(self.data), out=self.data)
        return self

    def square_(self):
        self.data *= self.data
        return self

    def clamp_(self, min=None, max=None):
        xp = xp_of(self.data)
        if min is not None:
            xp.maximum(self.data, min, out=self.data)   # (nan propagates, as PyTorch's clamp)
        if max is not None:
            xp.minimum(self.data, max, out=self.data)
        return self

    def copy_(self, src):
        self.data[...] = _a(src)
        return self

    def zero_(self):
        self.data[...] = 0
        return self

    def __setitem__(self, key, value):
        self.data[_a(key)] = _a(value)

    # ------------------------------------------------------------ new arrays
    def add(self, other, alpha=1):
        return Arr(_fma.add(self.data, _a(other), alpha))

    def sub(self, other, alpha=1):
        return Arr(_fma.add(self.data, _a(other), -alpha))

    def mul(self, other):
        return Arr(self.data * _a(other))

    def div(self, other):
        return Arr(self.data / _a(other))

    def addcmul(self, tensor1, tensor2, value=1):
        return Arr(_fma.addcmul(self.data, _a(tensor1), _a(tensor2), value))

    def lerp(self, end, weight):
        return Arr(_fma.lerp(self.data, _a(end), _a(weight)))

    def sqrt(self):
        return Arr(sqrt(self.data))

    def abs(self):
        return Arr(xp_of(self.data).abs(self.data))

    def sign(self):
        return Arr(xp_of(self.data).sign(self.data))

    def neg(self):
        return Arr(-self.data)

    def clone(self, memory_format=None):
        return Arr(self.data.copy())

    def detach(self):
        return self

    def mean(self, dim=None, keepdim=False):
        return Arr(xp_of(self.data).mean(self.data, axis=dim, keepdims=keepdim))

    def norm(self, p=2):
        xp = xp_of(self.data)
        return Arr(xp.sqrt(xp.sum(xp.square(self.data))))

    def gt(self, other):
        return Arr(self.data > _a(other))

    def lt(self, other):
        return Arr(self.data < _a(other))

    def eq(self, other):
        return Arr(self.data == _a(other))

    def __neg__(self):
        return Arr(-self.data)

    def __add__(self, other):
        return Arr(self.data + _a(other))

    __radd__ = __add__

    def __sub__(self, other):
        return Arr(self.data - _a(other))

    def __rsub__(self, other):
        return Arr(_a(other) - self.data)

    def __mul__(self, other):
        return Arr(self.data * _a(other))

    __rmul__ = __mul__

    def __truediv__(self, other):
        return Arr(self.data / _a(other))

    def __rtruediv__(self, other):
        # PyTorch's `number / tensor` is tensor.reciprocal() * number (two roundings)
        xp = xp_of(self.data)
        return Arr(xp.reciprocal(self.data) * _a(other))

    def __pow__(self, other):
        return Arr(self.data ** _a(other))

    def __rpow__(self, other):
        return Arr(_a(other) ** self.data)

    def __matmul__(self, other):
        return Arr(self.data @ _a(other))

    def __iadd__(self, other):
        self.data += _a(other)
        return self

    def __isub__(self, other):
        self.data -= _a(other)
        return self

    def __imul__(self, other):
        self.data *= _a(other)
        return self

    def __itruediv__(self, other):
        self.data /= _a(other)
        return self

    def __gt__(self, other):
        return Arr(self.data > _a(other))

    def __lt__(self, other):
        return Arr(self.data < _a(other))


class F:
    """The torch functions the kernels call, for Arr and Tensor operands."""

    @staticmethod
    def is_complex(x):
        return x.is_complex()

    @staticmethod
    def view_as_real(x):
        if type(x) is Arr:
            return Arr(as_real(x.data))
        from .. import view_as_real
        return view_as_real(x)

    @staticmethod
    def view_as_complex(x):
        if type(x) is Arr:
            d = x.data
            return Arr(d.view({4: "complex64", 8: "complex128"}[d.dtype.itemsize])[..., 0])
        from .. import view_as_complex
        return view_as_complex(x)

    @staticmethod
    def maximum(a, b, out=None):
        if type(a) is Arr:
            xp = xp_of(a.data)
            if out is None:
                return Arr(xp.maximum(a.data, _a(b)))
            xp.maximum(a.data, _a(b), out=out.data)
            return out
        from .. import maximum
        return maximum(a, b, out=out) if out is not None else maximum(a, b)

    @staticmethod
    def where(cond, a, b):
        if type(cond) is Arr:
            return Arr(xp_of(cond.data).where(cond.data, _a(a), _a(b)))
        from .. import where
        return where(cond, a, b)

    @staticmethod
    def square(x):
        if type(x) is Arr:
            return Arr(x.data * x.data)
        from .. import square
        return square(x)

    @staticmethod
    def norm(x, dim=None, keepdim=False):
        if type(x) is Arr:
            xp = xp_of(x.data)
            return Arr(xp.sqrt(xp.sum(xp.square(x.data), axis=dim, keepdims=keepdim)))
        from .. import norm
        return norm(x, dim=dim, keepdim=keepdim)


def operands(differentiable, *tensors):
    """The kernel's operands for these tensors: the Tensors themselves when the update is
    differentiable or of a half dtype (their ops then round as PyTorch's half kernels: Note
    [Special dtypes] in ops/_registry.py), else each one's array as an Arr (None stays None)."""
    if differentiable or any(t is not None and t.dtype in _HALF for t in tensors):
        return tensors
    return tuple(None if t is None else Arr(t._data) for t in tensors)


def bump_versions(differentiable, param, *state):
    """After an array update: the parameter's version (with the user's line that called step(),
    for autograd's error about modified saved tensors) and its state tensors' versions, as
    PyTorch's in-place ops bump them. (A differentiable update ran Tensor ops that bumped them.)
    The state tensors are private buffers no graph saves: they skip the site's stack walk."""
    if differentiable:
        return
    for t in state:
        if t is not None:
            t._vc[0] += 1
    site = getattr(STEP_SITE, "site", _UNKNOWN)
    if site is _UNKNOWN:
        param._bump_version()
    else:
        bump_version_at(param._vc, site)


# The user's line of the step() running on this thread, found once by optimizer._quietly around
# the kernel: the same frame every parameter's own stack walk would find (the first outside
# ndgrad above the step), one walk instead of one a parameter.
STEP_SITE = threading.local()
_UNKNOWN = object()


def state_tensor(x):
    """A kernel's new state operand (SGD's first momentum buffer) as a Tensor."""
    return _make(x.data) if type(x) is Arr else x


def real_scalar(x):
    """A hyperparameter as a kernel uses it: a 0-d Tensor's value as a NumPy scalar of its
    dtype (arithmetic with it then stays in that dtype, as PyTorch's does with the 0-d tensor),
    anything else as it is."""
    if isinstance(x, Tensor):
        return x._data.reshape(())[()]
    return x



# Note [Small parameters as one array]
# An element-wise update costs ~40 us of Python a parameter whatever its size (a dozen array
# ops through these kernels), and a model has many small parameters: GPT's 36 biases and norm
# weights (23 K elements) took 1.5 ms of AdamW's step, PyTorch's own loop 0.86. Parameters
# under SMALL elements that share a dtype and a step count are updated as one concatenation
# instead (`Concat`: copied in, updated once, copied back), like PyTorch's foreach kernels
# group tensors. Every operation of the kernels is element-wise and rounds each element alone
# (ops/_fma.py's exact fused multiply-adds included), so the bits are those of the
# one-by-one updates.
SMALL = 1 << 14   # elements


def small_groups(params, steps, *state):
    """(groups, rest): lists of the indices of parameters that can update as one concatenation
    (Note [Small parameters as one array]): NumPy float32/float64 arrays under SMALL elements,
    C-contiguous, their gradients and `state` tensors (lists; None entries or lists skipped)
    alike, grouped by dtype and step value, two or more a group; `rest`, the others in order."""
    keys, rest = {}, []
    for i, p in enumerate(params):
        ts = [p] + [lst[i] for lst in state if lst is not None]
        a = p._data
        if type(a) is _np.ndarray and a.dtype.kind == "f" and a.dtype.itemsize >= 4 and \
                a.size < SMALL and all(t is not None and type(t._data) is _np.ndarray and
                                       t._data.dtype == a.dtype and t._data.shape == a.shape and
                                       t._data.flags.c_contiguous for t in ts):
            keys.setdefault((a.dtype.char, float(steps[i]._data)), []).append(i)
        else:
            rest.append(i)
    groups = []
    for idx in keys.values():
        if len(idx) > 1:
            groups.append(idx)
        else:
            rest.append(idx[0])
    return groups, sorted(rest)


def flat_parts(i, params, *state):
    """Whether parameter i can update in flat parts (ops/_parallel.spread cuts a large one
    between threads): a NumPy float32/float64 C-contiguous array, its gradient and `state`
    tensors (lists; None lists skipped) alike. Every operation of the kernels is element-wise,
    so the parts give the whole update's bits."""
    a = params[i]._data
    if type(a) is not _np.ndarray or a.dtype.kind != "f" or a.dtype.itemsize < 4 or \
            not a.flags.c_contiguous:
        return False
    return all(lst[i] is not None and type(lst[i]._data) is _np.ndarray and
               lst[i]._data.dtype == a.dtype and lst[i]._data.shape == a.shape and
               lst[i]._data.flags.c_contiguous for lst in state if lst is not None)


class Concat:
    """The arrays of tensors ts[i] for i in `idx`, for each list of `lists`, concatenated into
    one flat Arr each (None for a None list); `put_back` copies the updated ones back."""

    def __init__(self, idx, *lists):
        self.idx = idx
        self.arrs = [None if lst is None else Arr(_np.concatenate(  # host: small_groups'
            [lst[i]._data.reshape(-1) for i in idx])) for lst in lists]     # NumPy arrays
        self.lists = lists

    def put_back(self, *which):
        """Copy the concatenations at positions `which` of the lists back into their tensors."""
        for k in which:
            flat, lst = self.arrs[k], self.lists[k]
            if flat is None:
                continue
            at = 0
            for i in self.idx:
                a = lst[i]._data
                a.reshape(-1)[...] = flat.data[at:at + a.size]   # (C-contiguous: a view)
                at += a.size
