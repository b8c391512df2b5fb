"""PyTorch's OpInfo database (torch.testing._internal.common_methods_invocations.op_db) run
against ndgrad: the support code of tests/test_pytorch_op_db.py.

For one OpInfo, `run_opinfo(op)` walks

- every CPU dtype the OpInfo supports among DTYPES, every sample of its `sample_inputs`
  (keyword forms included), through the function, method and in-place variants: PyTorch's
  result and ndgrad's are compared (type, dtype, shape, values with assert_close's tolerances,
  widened only by the OpInfo's own toleranceOverride decorators);
- its `error_inputs`: ndgrad must raise PyTorch's exception type with a message matching
  PyTorch's regex;
- float64 gradients (when the OpInfo supports autograd): the same random cotangent is pulled
  back through both libraries and the input gradients are compared; a differentiable output
  that ndgrad does not connect to the graph is a lost gradient.

Samples are PyTorch tensors; they become ndgrad tensors through NumPy with their strides
(non-contiguous and expanded samples stay so), nested lists, tuples and dicts included, and the
same PyTorch tensor twice in a sample is the same ndgrad tensor twice. The callables of the
database (torch functions and methods, the database's own lambdas and helpers, partials) are
translated to ndgrad's: a torch function or method by its public name, a Python function of
torch's test code rebuilt with globals and closure cells that read ndgrad where they read
torch.

Each disagreement is a `Finding(key, kind, detail)`: `key` names the op variant
("add.function", "add.method", "add.inplace", "add.grad", "add.errors"), `kind` one of KINDS.
"""
import builtins
import contextlib
import functools
import importlib
import math
import re
import types
import warnings

import numpy as np
import torch
from torch.testing._internal.common_methods_invocations import op_db

import ndgrad

# torch's test utilities freeze torch.backends' flags when imported (disable_global_flags);
# other tests set them (a program's cudnn.deterministic = True), so they are thawed again
torch.backends.flags_frozen.__globals__["__allow_nonbracketed_mutation_flag"] = True

DTYPES = (torch.float64, torch.float32, torch.int64, torch.bool, torch.complex128)

KINDS = {
    "value": "ndgrad returns another value, shape, dtype or type than PyTorch (no error)",
    "error": "ndgrad raises where PyTorch returns",
    "missing": "ndgrad has no such public name",
    "accepts": "ndgrad returns where PyTorch raises",
    "grad": "ndgrad's input gradients differ from PyTorch's",
    "grad-lost": "ndgrad's output does not require grad where PyTorch's does",
    "grad-error": "ndgrad's backward raises where PyTorch's returns",
    "error-type": "both raise, ndgrad another exception type than PyTorch's",
    "error-message": "both raise the same type, ndgrad's message does not match PyTorch's regex",
    "no-error": "ndgrad returns on an error_input PyTorch raises on",
    "gradcheck": "ndgrad's gradients fail its own float64 gradcheck (finite differences)",
}

# Sample values are never compared for these (fresh randomness or uninitialized memory);
# their shapes and dtypes are. Ops that merely *may* draw (wrapper_set_seed in their lambda)
# are compared in full when two PyTorch runs under different seeds agree.
UNINITIALIZED = {op.name for op in op_db if op.has_nondeterministic_output}

# Indices among equal values that PyTorch leaves unspecified (its sorts are not stable unless
# asked, topk/kthvalue/mode pick one of the ties): an index output is accepted when it points
# at the value PyTorch's index points at (the values themselves must agree exactly).
TIE_INDICES = {"sort": -1, "argsort": -1, "msort": None, "topk": -1, "kthvalue": -1,
               "mode": -1}


def _tie_indices(name, s, ours, theirs, tol):
    """None when ndgrad's result differs from PyTorch's only in which of equal elements its
    index output names, else a reason."""
    x = s.input
    if not isinstance(x, torch.Tensor):
        return "not a tensor input"
    args, kw = s.args, s.kwargs
    pos = {"sort": 0, "argsort": 0, "topk": 1, "kthvalue": 1, "mode": 0}.get(name)
    dim = kw.get("dim", args[pos] if pos is not None and len(args) > pos and
                 isinstance(args[pos], int) and not isinstance(args[pos], bool) else -1)
    try:
        mine = to_torch(ours)
    except Exception as e:
        return str(e)
    theirs = plain_torch(theirs)
    mine_t = mine if isinstance(mine, (list, tuple)) else (mine,)
    theirs_t = theirs if isinstance(theirs, (list, tuple)) else (theirs,)
    if len(mine_t) != len(theirs_t):
        return "output count"
    xd = x.detach()
    if xd.ndim == 0:
        xd = xd.reshape(1)
    index_at = {"argsort": 0, "msort": None}.get(name, 1)
    for k, (a, b) in enumerate(zip(mine_t, theirs_t)):
        if not isinstance(b, torch.Tensor) or a.shape != b.shape or a.dtype != b.dtype:
            return "shape or dtype"
        if k != index_at:
            if compare(a, b, tol) is not None and not torch.equal(a, b):
                return "values"
            continue
        ai, bi = a, b
        if ai.ndim < xd.ndim:          # (kthvalue/mode without keepdim)
            d = dim % xd.ndim
            ai, bi = ai.unsqueeze(d), bi.unsqueeze(d)
        if ai.ndim == 0:
            ai, bi = ai.reshape(1), bi.reshape(1)
        try:
            va = xd.gather(dim, ai)
            vb = xd.gather(dim, bi)
        except Exception as e:
            return f"gather: {e}"
        if not torch.equal(va, vb) and not (va.isnan() & vb.isnan()).any():
            return "indices point at other values"
    return None


# Results defined up to the sign or phase of vectors (LAPACK's choice): where the raw results
# differ, what the sample's output_process_fn_grad keeps (|U|, U @ Vh, S, ...) is compared.
NONUNIQUE = {"linalg.svd", "svd", "linalg.eig", "linalg.eigh", "linalg.eigvals", "svd_lowrank",
             "pca_lowrank", "lobpcg"}


class Finding(tuple):
    __slots__ = ()

    def __new__(cls, key, kind, detail):
        return tuple.__new__(cls, (key, kind, detail))

    key = property(lambda self: self[0])
    kind = property(lambda self: self[1])
    detail = property(lambda self: self[2])


class Unconvertible(Exception):
    """A sample holds something ndgrad cannot represent (bfloat16, a sparse layout, ...)."""


class MissingName(AttributeError):
    """ndgrad has no counterpart of a public torch name."""


# ----------------------------------------------------------------------- torch -> ndgrad names

_NAMESPACES = (
    # (torch object, its public path): torch's namespaces in the order a name is looked up
    (torch, "torch"),
    (torch.nn.functional, "torch.nn.functional"),
    (torch.linalg, "torch.linalg"),
    (torch.special, "torch.special"),
    (torch.fft, "torch.fft"),
    (torch.sparse, "torch.sparse"),
    (torch.masked, "torch.masked"),
    (torch.signal.windows, "torch.signal.windows"),
    (torch.nn.init, "torch.nn.init"),
    (torch.Tensor, "torch.Tensor"),
    (torch._C._nn, "torch.nn.functional"),
    (torch._C._linalg, "torch.linalg"),
    (torch._C._special, "torch.special"),
    (torch._C._fft, "torch.fft"),
    (torch._C._VariableFunctions, "torch"),
)


def _build_index():
    index = {}
    for ns, path in _NAMESPACES:
        for name in dir(ns):
            try:
                obj = getattr(ns, name)
            except Exception:
                continue
            if callable(obj) and not isinstance(obj, type):
                index.setdefault(id(obj), (obj, path, name))
    return index


_INDEX = _build_index()


class _Missing:
    """Stands for a torch name ndgrad lacks: calling it (or reading from it) raises."""

    def __init__(self, path):
        self.path = path

    def __call__(self, *args, **kwargs):
        raise MissingName(f"ndgrad has no {self.path}")

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Missing(f"{self.path}.{name}")

    def __repr__(self):
        return f"<missing {self.path}>"


def nd_path(path):
    """The ndgrad object at torch's public dotted path ("torch.linalg.svd" ->
    ndgrad.linalg.svd), or a _Missing."""
    parts = path.split(".")
    obj = ndgrad
    for i, part in enumerate(parts[1:], 1):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            try:
                obj = importlib.import_module("ndgrad." + ".".join(parts[1:i + 1]))
            except ImportError:
                return _Missing(path)
    return obj


class _AtenOps:
    """torch.ops as ndgrad sees it: torch.ops.aten.<name>[.<overload>] is ndgrad's public
    function of that name (torch.<name>, then torch.nn.functional.<name>), or a _Missing."""

    def __init__(self, path="torch.ops"):
        self.path = path

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if self.path == "torch.ops":
            return _AtenOps(f"torch.ops.{name}")
        return _AtenOp(name)


class _AtenOp:
    def __init__(self, name):
        self.name = name
        fn = getattr(ndgrad, name, None)
        if fn is None:
            fn = getattr(ndgrad.nn.functional, name, None)
        if fn is None:     # (ATen-only entry points: ndgrad's torch.ops.aten has them)
            fn = getattr(ndgrad.ops.aten, name, None)
        self.fn = fn if callable(fn) else _Missing(f"torch.ops.aten.{name}")

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __getattr__(self, overload):       # .default, .Tensor, ...
        if overload.startswith("__"):
            raise AttributeError(overload)
        return self


class _TorchView(types.ModuleType):
    """`torch` as the database's code sees it: ndgrad, except torch.ops (ATen's operators by
    name) and the names ndgrad lacks (a _Missing, so that the call reports them)."""

    def __getattr__(self, name):
        if name == "ops":
            return _AtenOps()
        try:
            return getattr(ndgrad, name)
        except AttributeError:
            if name.startswith("__"):
                raise
            return _Missing(f"torch.{name}")


_TORCH = _TorchView("torch")


def _nd_module(mod):
    name = mod.__name__
    if name == "torch.ops" or isinstance(mod, torch._ops._Ops):
        return _AtenOps()
    if name == "torch":
        return _TORCH
    if name == "torch.nn.functional":
        return ndgrad.nn.functional
    if name.startswith("torch.") and not name.startswith(("torch.testing", "torch._C")):
        return nd_path(name)
    return mod


_FUNC_CACHE = {}


def _torch_file(code):
    f = code.co_filename.replace("\\", "/")
    return "/torch/" in f


class _Globals(dict):
    """A function's globals as ndgrad sees them: each name translated on first use."""

    def __init__(self, original):
        super().__init__()
        self._original = original
        self["__builtins__"] = builtins

    def __missing__(self, name):
        value = self._original[name]       # KeyError -> NameError, as Python would
        value = translate(value)
        self[name] = value
        return value


_GLOBALS = {}


def _translate_function(f):
    code = f.__code__
    if not _torch_file(code):
        return f
    g = _GLOBALS.get(id(f.__globals__))
    if g is None:
        g = _GLOBALS[id(f.__globals__)] = (_Globals(f.__globals__), f.__globals__)
    cells = None
    if f.__closure__:
        cells = tuple(types.CellType(translate(c.cell_contents)) if _cell_full(c)
                      else types.CellType() for c in f.__closure__)
    new = types.FunctionType(code, g[0], f.__name__, translate(f.__defaults__), cells)
    new.__kwdefaults__ = translate(f.__kwdefaults__)
    return new


def _cell_full(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def translate(obj):
    """obj with every torch callable, module, dtype, device, ... replaced by ndgrad's.
    Tensors are not translated here (see Converter)."""
    if obj is None or isinstance(obj, (bool, int, float, complex, str, slice, np.ndarray,
                                       np.generic, range, bytes)) or obj is Ellipsis:
        return obj
    if isinstance(obj, torch.dtype):
        return nd_dtype(obj)
    if isinstance(obj, torch.device):
        return ndgrad.device(str(obj))
    if isinstance(obj, torch.Size):
        return ndgrad.Size(obj)
    if isinstance(obj, torch.memory_format):
        return getattr(ndgrad, str(obj).split(".")[-1])
    if isinstance(obj, torch.layout):
        name = str(obj).split(".")[-1]
        if name != "strided":
            raise Unconvertible(f"layout {name}")
        return ndgrad.strided
    if isinstance(obj, types.ModuleType):
        return _nd_module(obj)
    if isinstance(obj, tuple) and type(obj) is not tuple and hasattr(obj, "_fields"):
        return type(obj)(*map(translate, obj))
    if type(obj) in (list, tuple):
        return type(obj)(map(translate, obj))
    if type(obj) is dict:
        return {k: translate(v) for k, v in obj.items()}
    key = id(obj)
    hit = _FUNC_CACHE.get(key)
    if hit is not None and hit[0] is obj:
        return hit[1]
    new = _translate_callable(obj)
    _FUNC_CACHE[key] = (obj, new)
    return new


def _translate_callable(obj):
    hit = _INDEX.get(id(obj))
    if hit is not None and hit[0] is obj:
        return nd_path(f"{hit[1]}.{hit[2]}")
    if isinstance(obj, functools.partial):
        return functools.partial(translate(obj.func), *translate(obj.args),
                                 **translate(obj.keywords))
    if isinstance(obj, types.FunctionType):
        return _translate_function(obj)
    if isinstance(obj, (types.MethodDescriptorType, types.WrapperDescriptorType,
                        types.GetSetDescriptorType)) and getattr(
            obj, "__objclass__", None) in (torch._C.TensorBase, torch.Tensor):
        return nd_path(f"torch.Tensor.{obj.__name__}")
    if isinstance(obj, torch._ops.OpOverloadPacket):
        return _AtenOp(obj.__name__.split(".")[-1])
    if isinstance(obj, torch._ops.OpOverload):
        return _AtenOp(obj.__name__.split(".")[-2])
    if isinstance(obj, types.BuiltinFunctionType) and (getattr(obj, "__module__", "") or ""
                                                       ).startswith("torch"):
        return _Missing(f"torch.{obj.__name__}")
    if isinstance(obj, torch.nn.Module):
        return _translate_module(obj)
    if isinstance(obj, type) and obj.__module__.startswith("torch") and not obj.__module__ \
            .startswith("torch.testing"):
        if issubclass(obj, torch.Tensor):
            return ndgrad.Tensor
        return nd_path(f"{obj.__module__}.{obj.__name__}")
    return obj


def _translate_module(m):
    """A parameter-free torch.nn module (a sample's distance_function=PairwiseDistance()) as
    ndgrad's module of the same class with the same public attributes."""
    if any(True for _ in m.parameters()) or any(True for _ in m.buffers()):
        raise Unconvertible(f"module with parameters {type(m).__name__}")
    cls = nd_path(f"torch.nn.{type(m).__name__}")
    if isinstance(cls, _Missing):
        return cls
    new = cls.__new__(cls)
    ndgrad.nn.Module.__init__(new)
    for k, v in vars(m).items():
        if not k.startswith("_"):
            setattr(new, k, translate(v))
    return new


def nd_dtype(dt):
    name = str(dt).split(".")[-1]
    nd = getattr(ndgrad, name, None)
    if not isinstance(nd, ndgrad.dtype):
        raise Unconvertible(f"dtype {name}")
    return nd


def torch_dtype(dt):
    return getattr(torch, str(dt).split(".")[-1])


# ----------------------------------------------------------------------- samples -> ndgrad

def _np_with_strides(t):
    """A NumPy copy of a strided torch tensor with the same strides (gaps, zero strides)."""
    t = t.detach()
    if t.is_conj():
        t = t.resolve_conj()
    if t.is_neg():
        t = t.resolve_neg()
    if t.dtype == torch.bfloat16:     # (no NumPy bfloat16 in torch: its bits, as ml_dtypes')
        import ml_dtypes
        a = t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    else:
        a = t.numpy()
    if t.is_contiguous() or t.numel() <= 1:
        return a.copy()
    extent = 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride()) if n > 0)
    buf = np.zeros(extent, dtype=a.dtype)
    view = np.lib.stride_tricks.as_strided(
        buf, t.shape, tuple(s * a.itemsize for s in t.stride()))
    np.copyto(view, a) if all(s != 0 for s in t.stride()) else view.__setitem__(..., a)
    return view


class Converter:
    """PyTorch values -> ndgrad values, one ndgrad tensor per PyTorch tensor (by identity)."""

    def __init__(self):
        self.memo = {}          # id(torch tensor) -> (torch tensor, ndgrad tensor)
        self.storages = {}      # storage data_ptr -> (torch storage, ndgrad base)

    def __call__(self, obj):
        if isinstance(obj, torch.Tensor):
            hit = self.memo.get(id(obj))
            if hit is not None:
                return hit[1]
            nd = self.shared(obj)
            self.memo[id(obj)] = (obj, nd)
            return nd
        if type(obj) in (list, tuple):
            return type(obj)(self(o) for o in obj)
        if type(obj) is dict:
            return {k: self(v) for k, v in obj.items()}
        if isinstance(obj, torch.Generator):
            raise Unconvertible("torch.Generator")
        return translate(obj)

    def shared(self, t):
        """t converted; a view of a storage another tensor of the sample shares (out=ind[:1]
        with the index ind[1:]) as a view of one converted storage."""
        if t.layout != torch.strided or t.device.type != "cpu" or not t.numel() or \
                t.dtype in (torch.bfloat16,):
            return self.tensor(t)
        st = t.untyped_storage()
        whole = st.nbytes() > t.numel() * t.element_size() or t.storage_offset()
        if not whole and st.data_ptr() not in self.storages:
            return self.tensor(t)
        hit = self.storages.get(st.data_ptr())
        if hit is None:
            n = st.nbytes() // t.element_size()
            flat = torch.as_strided(t.detach(), (n,), (1,), 0)
            hit = self.storages[st.data_ptr()] = (st, Converter.tensor(flat.clone()))
        base = hit[1]
        if base.dtype != nd_dtype(t.dtype):
            return self.tensor(t)
        with ndgrad.no_grad():
            nd = ndgrad.as_strided(base, tuple(t.shape), tuple(t.stride()), t.storage_offset())
        if t.requires_grad:
            nd.requires_grad_()
        return nd

    @staticmethod
    def tensor(t):
        if t.layout == torch.strided and t.device.type == "cpu" and t.numel() and (
                t.storage_offset() or t.untyped_storage().nbytes() > t.numel() * t.element_size()):
            return Converter._view(t)
        if t.layout != torch.strided:
            raise Unconvertible(f"layout {t.layout}")
        if t.device.type != "cpu":
            raise Unconvertible(f"device {t.device}")
        dtype = nd_dtype(t.dtype)
        if isinstance(t, torch.nn.Parameter):
            raise Unconvertible("Parameter")
        try:
            a = _np_with_strides(t)
        except (ValueError, TypeError, RuntimeError) as e:    # more dims than NumPy's 64
            raise Unconvertible(str(e))
        nd = ndgrad.from_numpy(a)
        if nd.dtype != dtype:
            nd = nd.to(dtype)
        if t.requires_grad:
            nd.requires_grad_()
        return nd

    @staticmethod
    def _view(t):
        with ndgrad.no_grad():
            nd = _storage_view(t)
        if t.requires_grad:
            nd.requires_grad_()
        return nd


def _storage_view(t):
    """t as a (no-grad) ndgrad view of its whole storage, converted: as_strided reaches the
    elements outside the view, as PyTorch's does."""
    n = t.untyped_storage().nbytes() // t.element_size()
    flat = torch.as_strided(t.detach(), (n,), (1,), 0)
    base = Converter.tensor(flat.clone())
    return ndgrad.as_strided(base, tuple(t.shape), tuple(t.stride()), t.storage_offset())


def clone_torch(obj, memo=None):
    """A copy of a sample's tensors (strides kept) for the in-place variant."""
    memo = {} if memo is None else memo
    if isinstance(obj, torch.Tensor):
        if id(obj) not in memo:
            if obj.layout == torch.strided and obj.numel():   # the whole storage, copied
                n = obj.untyped_storage().nbytes() // obj.element_size()
                with torch.no_grad():
                    flat = torch.as_strided(obj.detach(), (n,), (1,), 0).clone()
                    c = flat.as_strided(obj.shape, obj.stride(), obj.storage_offset())
            else:
                c = obj.detach().clone()
            c.requires_grad_(obj.requires_grad)
            memo[id(obj)] = c
        return memo[id(obj)]
    if type(obj) in (list, tuple):
        return type(obj)(clone_torch(o, memo) for o in obj)
    if type(obj) is dict:
        return {k: clone_torch(v, memo) for k, v in obj.items()}
    return obj


# ----------------------------------------------------------------------- results -> torch

def to_torch(obj):
    """An ndgrad result in PyTorch's terms, for assert_close."""
    if isinstance(obj, ndgrad.Tensor):
        a = obj.detach()
        if a.layout != ndgrad.strided:
            a = a.to_dense()
        if a.dtype == ndgrad.bfloat16:
            return torch.from_numpy(np.array(a.view(ndgrad.int16).numpy(), copy=True)).view(
                torch.bfloat16)
        return torch.from_numpy(np.array(a.numpy(), copy=True))
    if isinstance(obj, ndgrad.dtype):
        return torch_dtype(obj)
    if isinstance(obj, ndgrad.Size):
        return torch.Size(obj)
    if isinstance(obj, ndgrad.device):
        return torch.device(str(obj))
    if isinstance(obj, (list, tuple)):
        return [to_torch(o) for o in obj] if isinstance(obj, list) else \
            tuple(to_torch(o) for o in obj)
    if isinstance(obj, dict):
        return {k: to_torch(v) for k, v in obj.items()}
    return obj


def plain_torch(obj):
    """PyTorch's result with tuples (return types) as tuples and tensors detached."""
    if isinstance(obj, torch.Tensor):
        t = obj.detach()
        if t.layout != torch.strided:
            t = t.to_dense()
        return t.resolve_conj().resolve_neg()
    if isinstance(obj, (list, tuple)):
        return [plain_torch(o) for o in obj] if isinstance(obj, list) else \
            tuple(plain_torch(o) for o in obj)
    if isinstance(obj, dict):
        return {k: plain_torch(v) for k, v in obj.items()}
    return obj


def leaves(obj, cls):
    """The objects of type cls in a nested sample or result, in order."""
    out = []
    stack = [obj]
    while stack:
        o = stack.pop()
        if isinstance(o, cls):
            out.append(o)
        elif isinstance(o, (list, tuple)):
            stack.extend(reversed(o))
        elif isinstance(o, dict):
            stack.extend(reversed(list(o.values())))
    return out


# ----------------------------------------------------------------------- comparison

_DEFAULT_TOL = {torch.float16: (1e-3, 1e-5), torch.float32: (1.3e-6, 1e-5),
                torch.float64: (1e-7, 1e-7), torch.complex64: (1.3e-6, 1e-5),
                torch.complex128: (1e-7, 1e-7)}


def op_tolerances(op):
    """{dtype: (rtol, atol)}: the widest toleranceOverride among the OpInfo's decorators."""
    tol = {}
    for dec in op.decorators or ():
        for d in getattr(dec, "decorators", ()) or ():
            d = getattr(d, "d", None)
            if isinstance(d, dict):
                for dt, t in d.items():
                    r, a = tol.get(dt, (0, 0))
                    if isinstance(t, float):        # precisionOverride: an atol
                        tol[dt] = (r, max(a, t))
                    else:                           # toleranceOverride
                        tol[dt] = (max(r, t.rtol), max(a, t.atol))
    return tol


def _tol_for(tol, dtype):
    r, a = _DEFAULT_TOL.get(dtype, (0, 0))
    r2, a2 = tol.get(dtype, (0, 0))
    return max(r, r2), max(a, a2)


def compare(ours, theirs, tol, shape_only=False):
    """None when ndgrad's result `ours` matches PyTorch's `theirs`, else a short reason."""
    try:
        actual = to_torch(ours)
    except Exception as e:          # an ndgrad object we cannot read back
        return f"unreadable result {type(ours).__name__}: {e}"
    expected = plain_torch(theirs)
    if shape_only:
        return _compare_meta(actual, expected)
    if isinstance(expected, tuple) and not isinstance(actual, tuple):
        return f"type {type(ours).__name__} vs tuple"
    msg = _compare_meta(actual, expected)
    if msg:
        return msg
    ta = leaves(actual, torch.Tensor)
    te = leaves(expected, torch.Tensor)
    for k, (a, e) in enumerate(zip(ta, te)):
        rtol, atol = _tol_for(tol, e.dtype)
        try:
            torch.testing.assert_close(a, e, rtol=rtol, atol=atol, equal_nan=True,
                                       check_stride=False)
        except AssertionError as err:
            lines = [l for l in str(err).splitlines() if l.strip()]
            return f"output {k}: " + " ".join(lines[:4])[:300]
    # non-tensor leaves (numbers, bools, dtypes, sizes)
    try:
        torch.testing.assert_close(_no_tensors(actual), _no_tensors(expected), equal_nan=True,
                                   check_dtype=False)
    except (AssertionError, TypeError, ValueError) as err:
        return f"non-tensor result: {_short(err)}"
    return None


def _no_tensors(obj):
    if isinstance(obj, torch.Tensor):
        return 0
    if isinstance(obj, (list, tuple)):
        return [_no_tensors(o) for o in obj]
    if isinstance(obj, dict):
        return {k: _no_tensors(v) for k, v in obj.items()}
    if isinstance(obj, (torch.dtype, torch.device, torch.Size)) or obj is None:
        return repr(obj)
    return obj


def _compare_meta(actual, expected, where="result"):
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, torch.Tensor):
            return f"{where}: {type(actual).__name__} vs Tensor"
        if actual.dtype != expected.dtype:
            return f"{where}: dtype {actual.dtype} vs {expected.dtype}"
        if actual.shape != expected.shape:
            return f"{where}: shape {tuple(actual.shape)} vs {tuple(expected.shape)}"
        return None
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)):
            return f"{where}: {type(actual).__name__} vs {type(expected).__name__}"
        if len(actual) != len(expected):
            return f"{where}: length {len(actual)} vs {len(expected)}"
        for k, (a, e) in enumerate(zip(actual, expected)):
            m = _compare_meta(a, e, f"{where}[{k}]")
            if m:
                return m
        return None
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or set(actual) != set(expected):
            return f"{where}: dict keys differ"
        for k in expected:
            m = _compare_meta(actual[k], expected[k], f"{where}[{k!r}]")
            if m:
                return m
        return None
    if isinstance(expected, bool) != isinstance(actual, bool) or (
            isinstance(expected, (int, float, complex)) and not isinstance(
                actual, (int, float, complex))):
        return f"{where}: {type(actual).__name__} vs {type(expected).__name__}"
    return None


def _short(err):
    text = f"{type(err).__name__}: {err}"
    return " ".join(text.split())[:300]


# ----------------------------------------------------------------------- running

@contextlib.contextmanager
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            yield


def _seed(k):
    torch.manual_seed(k)
    ndgrad.manual_seed(k)


def op_key(op):
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def dtypes_of(op):
    supported = op.supported_dtypes("cpu")
    return [d for d in DTYPES if d in supported]


def numel(sample):
    """The elements of a sample's tensors, all together."""
    return sum(t.numel() for t in leaves((sample.input, sample.args, sample.kwargs),
                                         torch.Tensor))


def samples(op, dtype, requires_grad=False, limit=None, max_numel=None):
    """The OpInfo's samples for dtype on the CPU (seeded), the error of a generator that fails
    in PyTorch itself, and how many samples were left out: those over max_numel elements
    (unless all are), then, past `limit`, all but `limit` spread evenly over the list (the
    first and the last kept)."""
    torch.manual_seed(0)
    with quiet():
        try:
            out = list(op.sample_inputs("cpu", dtype, requires_grad=requires_grad))
        except Exception as e:   # a sample generator that fails in PyTorch itself
            return [], _short(e), 0
    n0 = len(out)
    if max_numel is not None:
        small = [s for s in out if numel(s) <= max_numel]
        out = small or sorted(out, key=numel)[:1]
    if limit is not None and len(out) > limit:
        n = len(out)
        keep = sorted({round(k * (n - 1) / (limit - 1)) for k in range(limit)}) \
            if limit > 1 else [0]
        out = [out[k] for k in keep]
    return out, None, n0 - len(out)


def _call(fn, sample_input, args, kwargs):
    return fn(sample_input, *args, **kwargs)


def _is_random(op):
    code = getattr(op.op, "__code__", None)
    return bool(code and "wrapper_set_seed" in code.co_names)


def _unseeded(fn):
    """A database lambda that calls wrapper_set_seed (seed 42, then the op) rebuilt to call the
    op under the current seed, so two runs under two seeds show whether a sample draws."""
    g = dict(fn.__globals__)
    g["wrapper_set_seed"] = lambda op, *args, **kwargs: op(*args, **kwargs)
    new = types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)
    new.__kwdefaults__ = fn.__kwdefaults__
    return new


def _draws(fn, args):
    """Whether two PyTorch runs of fn (unseeded) under two seeds differ."""
    try:
        _seed(1)
        a = fn(*clone_torch(args))
        _seed(2)
        b = fn(*clone_torch(args))
    except Exception:
        return True
    ta, tb = leaves(plain_torch(a), torch.Tensor), leaves(plain_torch(b), torch.Tensor)
    if len(ta) != len(tb):
        return True
    for x, y in zip(ta, tb):
        if x.shape != y.shape or not torch.equal(x.nan_to_num(), y.nan_to_num()):
            return True
    return False


class Runner:
    """Runs one OpInfo; `findings` collects the disagreements, `stats` counts what ran."""

    def __init__(self, op, max_samples=None, grad_samples=None, max_numel=None):
        self.op = op
        self.key = op_key(op)
        self.max_samples = max_samples
        self.grad_samples = grad_samples
        self.max_numel = max_numel
        self.tol = op_tolerances(op)
        self.random = _is_random(op)
        self.uninit = op.name in UNINITIALIZED
        self.findings = []
        self.stats = {"samples": 0, "calls": 0, "grads": 0, "errors": 0, "skipped": 0,
                      "left out": 0, "gradchecks": 0}
        self._draws = {}
        self.counts = {}            # (variant, kind) -> how many samples disagree so

    def add(self, variant, kind, detail):
        k = (variant, kind)
        n = self.counts.get(k, 0)
        self.counts[k] = n + 1
        if not n:                   # one finding per variant and kind (its first sample)
            self.findings.append(Finding(f"{self.key}.{variant}", kind, detail))

    def draws(self, fn, s):
        """Whether this sample draws random numbers (then only shapes and dtypes compare)."""
        key = id(s)
        if key not in self._draws:
            self._draws[key] = (s, _draws(_unseeded(self.op.op), (s.input, s.args, s.kwargs)))
        return self._draws[key][1]

    # ------------------------------------------------------------------ forward
    def variants(self):
        op = self.op
        out = [("function", op.op)]
        if op.method_variant is not None:
            out.append(("method", op.method_variant))
        if op.inplace_variant is not None:
            out.append(("inplace", op.inplace_variant))
        return out

    def run_forward(self):
        for dtype in dtypes_of(self.op):
            sams, err, left = samples(self.op, dtype, limit=self.max_samples,
                                      max_numel=self.max_numel)
            self.stats["left out"] += left
            for i, s in enumerate(sams):
                self.stats["samples"] += 1
                for variant, fn in self.variants():
                    self.forward_one(variant, fn, s, dtype, i)

    def forward_one(self, variant, fn, s, dtype, i):
        where = f"{dtype} sample {i} ({_describe(s)})"
        inplace = variant == "inplace"
        theirs_in = clone_torch((s.input, s.args, s.kwargs)) if inplace else \
            (s.input, s.args, s.kwargs)
        shape_only = self.uninit
        with quiet():
            _seed(1234)
            try:
                theirs = _call(fn, *theirs_in)
            except Exception as e:
                theirs_exc = e
                theirs = None
            else:
                theirs_exc = None
                if self.random and not shape_only:
                    shape_only = self.draws(fn, s)
            try:
                conv = Converter()
                ours_in = conv((s.input, s.args, s.kwargs))
                nd_fn = translate(fn)
            except Unconvertible as e:
                self.stats["skipped"] += 1
                return
            self.stats["calls"] += 1
            _seed(1234)
            try:
                ours = _call(nd_fn, *ours_in)
            except MissingName as e:
                self.add(variant, "missing", str(e))
                return
            except Exception as e:
                if theirs_exc is None:
                    self.add(variant, "error", f"{where}: {_short(e)}")
                return
        if theirs_exc is not None:
            self.add(variant, "accepts", f"{where}: PyTorch raises {_short(theirs_exc)}")
            return
        if inplace:
            if ours is not ours_in[0]:
                self.add(variant, "value", f"{where}: the in-place variant does not return self")
                return
            msg = compare(ours_in[0], theirs_in[0], self.tol, shape_only)
        else:
            msg = compare(ours, theirs, self.tol, shape_only)
            if msg and self.op.name in TIE_INDICES:
                msg = _tie_indices(self.op.name, s, ours, theirs, self.tol) and msg
            if msg and self.op.name in NONUNIQUE and s.output_process_fn_grad is not None:
                # compare what the OpInfo's own output_process_fn_grad keeps (|U|, |V|, ...)
                with quiet():
                    msg2 = compare(translate(s.output_process_fn_grad)(ours),
                                   s.output_process_fn_grad(theirs), self.tol)
                msg = msg2 and f"{msg}; after output_process_fn_grad: {msg2}"
        if msg:
            self.add(variant, "value", f"{where}: {msg}")

    # ------------------------------------------------------------------ gradients
    def run_grads(self):
        op = self.op
        if not op.supports_autograd or torch.float64 not in op.supported_backward_dtypes("cpu"):
            return
        sams, err, left = samples(op, torch.float64, requires_grad=True,
                                  limit=self.grad_samples, max_numel=self.max_numel)
        self.stats["left out"] += left
        for i, s in enumerate(sams):
            self.grad_one(s, i)

    def grad_one(self, s, i):
        op = self.op
        where = f"float64 sample {i} ({_describe(s)})"
        process = s.output_process_fn_grad or (lambda x: x)
        t_inputs = [t for t in leaves((s.input, s.args, s.kwargs), torch.Tensor)
                    if t.requires_grad]
        if not t_inputs:
            return
        with quiet():
            _seed(1234)
            try:
                t_out = process(op.op(s.input, *s.args, **s.kwargs))
            except Exception:
                return
            t_outs = [o for o in leaves(t_out, torch.Tensor)
                      if o.requires_grad and (o.is_floating_point() or o.is_complex())]
            if not t_outs:
                return
            gen = torch.Generator().manual_seed(99)
            cots = [torch.randn(o.shape, dtype=o.dtype, generator=gen) for o in t_outs]
            try:
                t_grads = torch.autograd.grad(t_outs, t_inputs, cots, allow_unused=True)
            except Exception:
                return
            try:
                conv = Converter()
                n_in = conv((s.input, s.args, s.kwargs))
                nd_fn = translate(op.op)
                nd_process = translate(process)
            except Unconvertible:
                self.stats["skipped"] += 1
                return
            n_inputs = [conv.memo[id(t)][1] for t in t_inputs]
            self.stats["grads"] += 1
            _seed(1234)
            try:
                n_out = nd_process(_call(nd_fn, *n_in))
            except MissingName as e:
                self.add("grad", "missing", str(e))
                return
            except Exception as e:
                self.add("grad", "error", f"{where}: forward: {_short(e)}")
                return
            n_all = [o for o in leaves(n_out, ndgrad.Tensor)]
            t_all = [o for o in leaves(t_out, torch.Tensor)]
            if len(n_all) != len(t_all):
                self.add("grad", "value", f"{where}: {len(n_all)} tensors vs {len(t_all)}")
                return
            n_outs, n_cots = [], []
            k = 0
            for no, to in zip(n_all, t_all):
                if to.requires_grad and (to.is_floating_point() or to.is_complex()):
                    if not no.requires_grad:
                        self.add("grad", "grad-lost", f"{where}: output {k}")
                        return
                    n_outs.append(no)
                    n_cots.append(Converter.tensor(cots[k]))
                    k += 1
            try:
                n_grads = ndgrad.autograd.grad(n_outs, n_inputs, n_cots, allow_unused=True)
            except Exception as e:
                self.add("grad", "grad-error", f"{where}: {_short(e)}")
                return
        shape_only = self.uninit or self.random and self.draws(op.op, s)
        for j, (ng, tg) in enumerate(zip(n_grads, t_grads)):
            if tg is None:
                tg = torch.zeros_like(t_inputs[j])
            if ng is None:
                ng = ndgrad.zeros_like(n_inputs[j])
            msg = compare(ng, tg, self.tol, shape_only)
            if msg:
                self.add("grad", "grad", f"{where}: input {j}: {msg}")
                return

    # ------------------------------------------------------------------ gradcheck
    def run_gradcheck(self, max_numel=16):
        """ndgrad's own float64 gradcheck on the OpInfo's smallest differentiable sample (at
        most max_numel elements; none for ops that draw random numbers)."""
        op = self.op
        if not op.supports_autograd or self.random or self.uninit or \
                torch.float64 not in op.supported_backward_dtypes("cpu"):
            return
        sams, err, _ = samples(op, torch.float64, requires_grad=True)
        sams = [s for s in sams if 0 < numel(s) <= max_numel and any(
            t.requires_grad for t in leaves((s.input, s.args, s.kwargs), torch.Tensor))]
        if not sams:
            return
        s = min(sams, key=numel)
        with quiet():
            try:
                t_out = (s.output_process_fn_grad or (lambda x: x))(
                    op.op(s.input, *s.args, **s.kwargs))
            except Exception:
                return
            outs = leaves(t_out, torch.Tensor)
            if not any(o.requires_grad for o in outs) or not all(
                    torch.isfinite(o).all() for o in outs if o.is_floating_point()
                    or o.is_complex()) or any(
                    o.dtype in (torch.float32, torch.complex64, torch.float16, torch.bfloat16)
                    for o in outs):     # (finite differences need float64 outputs)
                return
            try:
                conv = Converter()
                n_in = conv((s.input, s.args, s.kwargs))
                nd_fn = translate(op.op)
                process = translate(s.output_process_fn_grad or (lambda x: x))
            except Unconvertible:
                return
        diff = [t for t in leaves(n_in, ndgrad.Tensor) if t.requires_grad]
        ids = [id(t) for t in diff]

        def swap(obj, new):
            if isinstance(obj, ndgrad.Tensor) and id(obj) in ids:
                return new[ids.index(id(obj))]
            if type(obj) in (list, tuple):
                return type(obj)(swap(o, new) for o in obj)
            if type(obj) is dict:
                return {k: swap(v, new) for k, v in obj.items()}
            return obj

        live = [k for k, o in enumerate(outs) if o.requires_grad]   # (PyTorch's differentiable)

        def fn(*xs):
            a, args, kwargs = swap(n_in, xs)
            out = leaves(process(nd_fn(a, *args, **kwargs)), ndgrad.Tensor)
            return tuple(out[k] for k in live if k < len(out))
        self.stats["gradchecks"] += 1
        with quiet():
            try:
                ndgrad.autograd.gradcheck(fn, tuple(diff), eps=1e-6, atol=1e-5, rtol=1e-3,
                                          nondet_tol=op.gradcheck_nondet_tol)
            except ndgrad.autograd.GradcheckError as e:
                self.add("grad", "gradcheck", f"float64 sample ({_describe(s)}): {_short(e)}")
            except Exception:   # (a failing call: reported by the function and grad checks)
                pass

    # ------------------------------------------------------------------ error inputs
    def run_errors(self):
        op = self.op
        if op.error_inputs_func is None:
            return
        torch.manual_seed(0)
        try:
            with quiet():
                errs = list(op.error_inputs(torch.device("cpu")))
        except Exception:
            return
        for i, e in enumerate(errs):
            self.error_one(e, i)

    def error_one(self, e, i):
        s = e.sample_input
        where = f"error_input {i} ({_describe(s)})"
        with quiet():
            try:
                conv = Converter()
                n_in = conv((s.input, s.args, s.kwargs))
                nd_fn = translate(self.op.op)
            except Unconvertible:
                self.stats["skipped"] += 1
                return
            # PyTorch itself must raise it (a few error_inputs are device-specific)
            try:
                self.op.op(s.input, *s.args, **s.kwargs)
            except Exception as exc:
                if not isinstance(exc, e.error_type) or not re.search(e.error_regex, str(exc)):
                    return
            else:
                return
            self.stats["errors"] += 1
            try:
                _call(nd_fn, *n_in)
            except MissingName as exc:
                self.add("errors", "missing", str(exc))
                return
            except Exception as exc:
                if not isinstance(exc, e.error_type):
                    self.add("errors", "error-type",
                             f"{where}: {_short(exc)}; PyTorch: {e.error_type.__name__} "
                             f"{e.error_regex!r}")
                elif not re.search(e.error_regex, str(exc)):
                    self.add("errors", "error-message",
                             f"{where}: {_short(exc)}; PyTorch: {e.error_regex!r}")
                return
        self.add("errors", "no-error", f"{where}: PyTorch: {e.error_type.__name__} "
                                       f"{e.error_regex!r}")


def _describe(s):
    def d(o):
        if isinstance(o, torch.Tensor):
            return f"T{tuple(o.shape)}" + ("" if o.layout != torch.strided or o.is_contiguous()
                                           else "nc")
        if isinstance(o, (list, tuple)):
            inner = ", ".join(d(x) for x in o[:4]) + (", ..." if len(o) > 4 else "")
            return ("[%s]" if isinstance(o, list) else "(%s)") % inner
        if isinstance(o, dict):
            return "{" + ", ".join(f"{k}={d(v)}" for k, v in o.items()) + "}"
        r = repr(o)
        return r if len(r) < 30 else r[:27] + "..."
    parts = [d(s.input)] + [d(a) for a in s.args] + [f"{k}={d(v)}" for k, v in s.kwargs.items()]
    return ", ".join(parts)


def run_opinfo(op, max_samples=None, grad_samples=None, max_numel=None, forward=True,
               grads=True, errors=True, gradcheck=True):
    r = Runner(op, max_samples, grad_samples, max_numel)
    if forward:
        r.run_forward()
    if grads:
        r.run_grads()
    if gradcheck:
        r.run_gradcheck()
    if errors:
        r.run_errors()
    return r
