"""PyTorch's argument errors, worked out after a call has failed.

PyTorch parses every argument before an op runs, so a None or a string where a tensor goes, an
unknown keyword or a failed allocation raise its own TypeError/RuntimeError. ndgrad does not
parse ahead (that would cost every valid call): a failed call lands here, and `bad_args` names
the argument PyTorch would have refused, or returns None (then the original error stands).
Callers: the `defop` functions and the out= layer (ops/_registry.py, _out.py) from the `except`
clause they already have (a valid call pays nothing), and `torch_errors`, the wrapper of the
public plain Python functions (nn.functional's, a few torch-level ones), which costs a valid
call one Python frame (about 0.1 us). The error is raised before any state changes: the
original call failed, and bad_args only reads the arguments.
"""
import functools
import inspect

# parameter names that take a tensor (PyTorch's names; ndgrad's `self` is PyTorch's `input`)
TENSOR_PARAMS = frozenset((
    "input", "self", "other", "tensor", "weight", "mat", "mat1", "mat2", "vec", "vec1", "vec2",
    "batch1", "batch2", "x", "x1", "x2", "y", "target", "A", "B", "end_tensor", "exponent_t",
    "anchor", "positive", "negative", "input1", "input2", "log_probs", "targets", "theta",
    "query", "key", "value", "elements", "test_elements", "sorted_sequence", "index", "src",
    "mask", "condition", "grid", "boundaries", "tensor1", "tensor2", "x_1", "x_2", "mean",
    "real", "imag", "abs", "angle"))
NUMBER_PARAMS = frozenset(("start", "end", "step"))  # PyTorch: "must be Number"
# the names PyTorch's messages give: its C++ function, or the Python function behind a dispatch
_TORCH_NAMES = dict(logsigmoid="log_sigmoid", unique="_unique2")
_DISPATCHED = frozenset(  # nn.functional's, behind PyTorch's boolean_dispatch (or renamed)
    "max_pool1d max_pool2d max_pool3d adaptive_max_pool1d adaptive_max_pool2d "
    "adaptive_max_pool3d fractional_max_pool2d fractional_max_pool3d threshold".split())
# (function, ndgrad's parameter) -> PyTorch's parameter name
_TORCH_PARAMS = {("dot", "other"): "tensor", ("one_hot", "tensor"): "input",
                 ("unsafe_split", "tensor"): "input"}

INT_PARAMS = frozenset(("n", "row", "col"))   # PyTorch: "must be int"
_UNSET = inspect.Parameter.empty
_JUNK = (str, bytes, dict, set, type(None))


def _torch_name(name, p):
    p = _TORCH_PARAMS.get((name, p), p)
    return "input" if p in ("self", "A") else p


def alloc_error(exc):
    """NumPy's MemoryError as PyTorch's allocator error (RuntimeError)."""
    try:
        nbytes = int(exc._total_size)
    except (AttributeError, TypeError, ValueError):
        return None
    return RuntimeError(
        "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
        f"memory: you tried to allocate {nbytes} bytes. Error code 12 (Cannot allocate memory)")


def _tensors_in(args, kwargs):
    from ._tensor import Tensor
    for a in (*args, *kwargs.values()):
        if isinstance(a, Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from (t for t in a if isinstance(t, Tensor))


def device_error(args, kwargs):
    """PyTorch's error for tensors of two devices in one call, or None."""
    first = None
    for t in _tensors_in(args, kwargs):
        d = t.device
        if first is None:
            first = d
        elif d != first:
            return RuntimeError("Expected all tensors to be on the same device, but found at "
                                f"least two devices, {_dev(first)} and {_dev(d)}!")
    return None


def _dev(d):
    return "cuda:0" if d.type == "cuda" and d.index is None else str(d)


def cpu_scalars_moved(args, kwargs):
    """(args, kwargs) with 0-d CPU tensors moved to the device of the others, when that is the
    only device mix (PyTorch lets CPU scalars take part in elementwise ops on any device); None
    otherwise."""
    from ._tensor import Tensor
    target = None
    scalars = False
    for t in _tensors_in(args, kwargs):
        if t.device.type == "cpu":
            if t._data.ndim != 0:
                return None
            scalars = True
        elif target is None:
            target = t.device
        elif t.device != target:
            return None
    if target is None or not scalars:
        return None

    def mv(a):
        return a.to(target) if isinstance(a, Tensor) and a.device.type == "cpu" else a
    return tuple(mv(a) for a in args), {k: mv(v) for k, v in kwargs.items()}


def bad_args(name, params, args, kwargs, exc=None, defaults=None, tensors=(), varkw=False,
             binding_first=False):
    """PyTorch's error for this failed call of `name(*args, **kwargs)`, or None.

    params: the positional parameter names; defaults: {name: default}; tensors: parameter names
    that take a tensor besides TENSOR_PARAMS; varkw: the function takes **kwargs;
    binding_first: a missing argument is reported before a wrong one (a Python function;
    PyTorch's C++ functions parse left to right)."""
    from ._tensor import Tensor
    if isinstance(exc, MemoryError):
        return alloc_error(exc)
    if isinstance(exc, TypeError):   # a device array met a host one (or the reverse)
        err = device_error(args, kwargs)
        if err is not None:
            return err
    name = _TORCH_NAMES.get(name, name)
    if binding_first and name in _DISPATCHED:
        name = "_" + name
    defaults = defaults or {}
    missing = [p for p in params[len(args):] if p not in defaults and p not in kwargs]
    if missing and binding_first:
        return _missing(name, missing)
    for i, a in enumerate(args):
        if i >= len(params):
            break
        p = params[i]
        if isinstance(a, Tensor):
            continue
        if p == "tensors":  # cat, stack, ...: a sequence of tensors
            if not isinstance(a, (list, tuple)):
                return TypeError(f"{name}(): argument 'tensors' (position {i + 1}) must be "
                                 f"tuple of Tensors, not {type(a).__name__}")
            for j, t in enumerate(a):
                if not isinstance(t, Tensor):
                    return TypeError(f"expected Tensor as element {j} in argument {i}, but got "
                                     f"{type(t).__name__}")
            continue
        if isinstance(a, _JUNK) and defaults.get(p, _UNSET) is not a:
            if p in INT_PARAMS:
                return TypeError(f"{name}(): argument '{p}' (position {i + 1}) must be int, "
                                 f"not {type(a).__name__}")
            if p in NUMBER_PARAMS:
                if name in ("arange", "range") and len(args) == 1:
                    p = "end" if name == "arange" else p
                return TypeError(f"{name}(): argument '{p}' (position {i + 1}) must be Number, "
                                 f"not {type(a).__name__}")
            if p == "size":
                return TypeError(f"{name}(): argument 'size' (position {i + 1}) must be tuple "
                                 f"of ints, not {type(a).__name__}")
        if not (p in TENSOR_PARAMS or p in tensors):
            continue
        if a is None and defaults.get(p, _UNSET) is None:
            continue  # an optional tensor
        if a is None or isinstance(a, (str, bytes, dict, set)) or callable(a):
            return TypeError(f"{name}(): argument '{_torch_name(name, p)}' (position {i + 1}) must be "
                             f"Tensor, not {type(a).__name__}")
    if kwargs and not varkw:
        known = set(params) | set(defaults)
        for k in kwargs:
            if k not in known and not (k == "input" and "self" in known):
                return TypeError(f"{name}() got an unexpected keyword argument '{k}'")
    if missing:
        return _missing(name, missing)
    return None


def _missing(name, missing):
    """Python's own binding error, under the public name."""
    q = [f"'{m}'" for m in missing]
    names = q[0] if len(q) == 1 else (" and ".join(q) if len(q) == 2
                                       else ", ".join(q[:-1]) + ", and " + q[-1])
    return TypeError(f"{name}() missing {len(q)} required positional argument"
                     f"{'s' if len(q) > 1 else ''}: {names}")


def check_tensor(name, value, param="input", position=1):
    """PyTorch's TypeError unless `value` is a Tensor (for functions that never fail on one)."""
    from ._tensor import Tensor
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{param}' (position {position}) must be Tensor, "
                        f"not {type(value).__name__}")


def _signature(fn):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params, defaults, varkw = [], {}, False
    for p in sig.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            params.append(p.name)
        if p.kind is p.VAR_KEYWORD:
            varkw = True
        if p.default is not _UNSET:
            defaults[p.name] = p.default
    return tuple(params), defaults, varkw


_SIGS = {}


def reraise(fn, name, args, kwargs, exc, binding_first=False):
    """Raise PyTorch's error for this failed call of `fn` (a Python or defop function) under
    the public `name`, if bad_args finds one (else return: the caller re-raises `exc`)."""
    op = getattr(fn, "_op", None)
    if op is not None:
        params = op.params
        tensors = set(op.inputs) | ({params[0]} if params else set())
        err = bad_args(name, params, args, kwargs, exc, op.defaults, tensors, op.varkw)
    else:
        sig = _SIGS.get(fn, False)
        if sig is False:
            sig = _SIGS[fn] = _signature(fn)
        if sig is None:
            return
        params, defaults, varkw = sig
        err = bad_args(name, params, args, kwargs, exc, defaults, varkw=varkw,
                       binding_first=binding_first)
    if err is not None:
        raise err from None


def torch_errors(fn, name=None, binding_first=False, attr=None):
    """`fn`, raising PyTorch's argument errors (bad_args) when a call fails. attr: PyTorch's
    Python function reads this attribute of its first argument first (AttributeError)."""
    if getattr(fn, "_torch_errors", False) or not inspect.isfunction(fn):
        return fn
    name = name or fn.__name__

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            if attr is not None and args and isinstance(args[0], _JUNK):
                raise AttributeError(f"'{type(args[0]).__name__}' object has no attribute "
                                     f"'{attr}'") from None
            reraise(fn, name, args, kwargs, e, binding_first)
            raise

    checked._torch_errors = True
    checked._binding_first = binding_first
    return checked


def wrap_namespace(ns, names, binding_first=lambda name: False, attrs=None):
    """Wrap the plain Python functions `names` of the namespace dict `ns` with torch_errors."""
    for n in names:
        f = ns.get(n)
        if inspect.isfunction(f) and not hasattr(f, "_op") and not n.startswith("_") and \
                not getattr(f, "_ndgrad_out", False):
            if getattr(f, "_torch_errors", False):
                if f._binding_first == binding_first(n) and f.__name__ == n:
                    continue
                f = f.__wrapped__  # (nn.functional's, here under a torch-level name)
            ns[n] = torch_errors(f, n, binding_first(n), (attrs or {}).get(n))
