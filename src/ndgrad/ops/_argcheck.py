"""PyTorch's argument errors, worked out after a call has failed.

PyTorch parses every argument before an op runs, so a None or a string where a tensor goes, an
unknown keyword or a failed allocation raise its own TypeError/RuntimeError. ndgrad does not
parse ahead (that would cost every valid call): a failed call lands here, and `bad_args` names
the argument PyTorch would have refused, or returns None (then the original error stands).
Callers: the `defop` functions and the out= layer (ops/_registry.py, ops/_out.py) from the `except`
clause they already have (a valid call pays nothing), and `torch_errors`, the wrapper of the
public plain Python functions (nn.functional's, a few torch-level ones), which costs a valid
call one Python frame (about 0.1 us). The error is raised before any state changes: the
original call failed, and bad_args only reads the arguments.

PyTorch takes a Python number for a Tensor parameter only where the function has a Scalar
overload in that place, or is one of the few that let numbers stand for tensors (add, sub, mul,
div, ...). TENSOR_ONLY lists the parameters that take a Tensor and nothing else (besides the
first argument `input` of every C++ function but NUMBER_INPUT's), OVERLOADS the functions
whose refused argument PyTorch reports as "an invalid combination of arguments". A call that
ndgrad would compute anyway (maximum(t, 2), a list for masked_fill's value) is made to fail
first at the cheapest place there is, and bad_args words the error: `defop(tensor_only=True)`
(maximum, atan2, logical_and, lerp, addcmul, ...: apply's fast path sends a non-Tensor operand
to its general path, which refuses it; a call with tensors pays nothing), or a check in the
op's forward or Python function (comparisons' `self`, masked_fill's value, ...).

Tensor methods count positions without self (`tensor_method`: one frame of the function's own
parameters, or none).
"""
import functools
import inspect
import re

from ..autograd._prof_state import HUB as _HUB

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
_TORCH_NAMES = dict(logsigmoid="log_sigmoid", unique="_unique2", lu="_lu_with_info")
_DISPATCHED = frozenset(  # nn.functional's, behind PyTorch's boolean_dispatch (or renamed)
    "max_pool1d max_pool2d max_pool3d adaptive_max_pool1d adaptive_max_pool2d "
    "adaptive_max_pool3d fractional_max_pool2d fractional_max_pool3d threshold".split())
# (function, ndgrad's parameter) -> PyTorch's parameter name
_TORCH_PARAMS = {("dot", "other"): "tensor", ("one_hot", "tensor"): "input",
                 ("unsafe_split", "tensor"): "input"}

INT_PARAMS = frozenset(("n", "row", "col"))   # PyTorch: "must be int"
# parameters PyTorch parses as int: a float there is "must be int, not float" (NumPy would say
# something of its own, or take it)
INT_NAMES = frozenset(("dim", "dim0", "dim1", "dim2", "k", "n", "bins", "diagonal", "offset",
                       "start_dim", "end_dim", "chunks", "sections", "groups", "num_classes",
                       "row", "col"))
# what PyTorch takes neither as a Tensor nor as a Number (NumPy would take a sequence)
NOT_SCALARS = frozenset((type(None), list, tuple, str, bytes, dict, set))
_UNSET = inspect.Parameter.empty
_JUNK = (str, bytes, dict, set, type(None))


def _table(text):
    """{function: frozenset of parameters} from lines 'name name ...: param param ...'."""
    table = {}
    for line in text.strip().splitlines():
        names, params = line.split(":")
        for n in names.split():
            table[n] = frozenset(params.split())
    return table


# function -> its parameters (PyTorch's names) that take a Tensor and nothing else: no Scalar
# overload there (a number, a list or None is refused alike)
TENSOR_ONLY = _table("""
    matmul vdot inner kron cross allclose isclose equal dist: input other
    maximum minimum fmax fmin atan2 arctan2 hypot nextafter ldexp logaddexp logaddexp2: input other
    logical_and logical_or logical_xor gcd lcm igamma igammac: input other
    mm bmm: input mat2
    mv: input vec
    dot: input tensor
    outer ger: input vec2
    addmm: input mat1 mat2
    addmv: input mat vec
    addr: input vec1 vec2
    addbmm baddbmm: input batch1 batch2
    addcmul addcdiv: input tensor1 tensor2
    heaviside: input values
    polar: abs angle
    complex: real imag
    take gather index_select: input index
    take_along_dim: input indices
    masked_select: input mask
    masked_scatter: input mask source
    index_add index_copy: input index source
    scatter_add: input index src
    histc cummax cummin kthvalue: input
    diff: input prepend append
    cdist cosine_similarity pairwise_distance: x1 x2
    bilinear: input1 input2 weight bias
    linear: input weight bias
    prelu: input weight
    eq ne lt le gt ge greater greater_equal less less_equal not_equal fmod copysign: input
    clamp clip clamp_min clamp_max: input
    where: condition
    lerp: input end
    masked_fill: input mask
    index_fill scatter: input index
    searchsorted: sorted_sequence
    bucketize: boundaries
    trapezoid trapz cumulative_trapezoid: y x
    vander: x
""")

_NONE = frozenset()
_INPUT = frozenset(("input",))
# functions whose first parameter PyTorch takes as a Number too: a Scalar overload, or one of the
# functions its parser lets numbers stand for tensors
NUMBER_INPUT = frozenset("""
    add sub mul div true_divide floor_divide multiply subtract divide remainder pow float_power
    bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift xlogy xlog1py zeta
    bucketize result_type chebyshev_polynomial_t chebyshev_polynomial_u chebyshev_polynomial_v
    chebyshev_polynomial_w shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u
    shifted_chebyshev_polynomial_v shifted_chebyshev_polynomial_w hermite_polynomial_h
    hermite_polynomial_he laguerre_polynomial_l legendre_polynomial_p""".split())

# function -> PyTorch's overloads, as torch.<function> lists them: a refused argument (a number
# in TENSOR_ONLY's parameters; a list, None, a string in any tensor parameter) gets "received an
# invalid combination of arguments" (PyTorch's first line; the overloads follow)
_OUT = ", *, Tensor out = None"
_TENSOR_NUMBER = ("(Tensor input, Tensor other{o})", "(Tensor input, Number other{o})")
_NUMBER_SELF = ("(Tensor input, Tensor other{o})", "(Number self, Tensor other)",
                "(Tensor input, Number other{o})")
_NUMBER_BASE = ("(Tensor input, Tensor exponent{o})", "(Number self, Tensor exponent{o})",
                "(Tensor input, Number exponent{o})")
_TRAPEZOID = ("(Tensor y, Tensor x, *, int dim = -1)", "(Tensor y, *, Number dx = 1, int dim = -1)")
_SORTED = ", *, bool out_int32 = False, bool right = False"
_SCALED = ", *, Number beta = 1, Number alpha = 1, Tensor out = None"
OVERLOADS = {n: tuple(s.format(o=_OUT) for s in sigs) for names, sigs in (
    ("eq ne lt le gt ge greater greater_equal less less_equal not_equal fmod copysign",
     _TENSOR_NUMBER),
    ("remainder bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift",
     _NUMBER_SELF),
    ("xlogy", ("(Tensor input, Tensor other{o})", "(Number self, Tensor other{o})",
               "(Tensor input, Number other{o})")),
    ("true_divide floor_divide", ("(Tensor input, Tensor other{o})",
                                  "(Tensor input, Number other)")),
    ("rsub", ("(Tensor input, Tensor other, *, Number alpha = 1)",
              "(Tensor input, Number other, Number alpha = 1)")),
    ("pow float_power", _NUMBER_BASE),
    ("clamp clip", ("(Tensor input, Tensor min = None, Tensor max = None{o})",
                    "(Tensor input, Number min = None, Number max = None{o})")),
    ("clamp_min", ("(Tensor input, Tensor min{o})", "(Tensor input, Number min{o})")),
    ("clamp_max", ("(Tensor input, Tensor max{o})", "(Tensor input, Number max{o})")),
    ("where", ("(Tensor condition)", "(Tensor condition, Tensor input, Tensor other{o})",
               "(Tensor condition, Number self, Tensor other)",
               "(Tensor condition, Tensor input, Number other)",
               "(Tensor condition, Number self, Number other)")),
    ("lerp", ("(Tensor input, Tensor end, Tensor weight{o})",
              "(Tensor input, Tensor end, Number weight{o})")),
    ("masked_fill", ("(Tensor input, Tensor mask, Tensor value)",
                     "(Tensor input, Tensor mask, Number value)")),
    ("index_fill", ("(Tensor input, int dim, Tensor index, Tensor value)",
                    "(Tensor input, int dim, Tensor index, Number value)")),
    ("scatter", ("(Tensor input, int dim, Tensor index, Tensor src{o})",
                 "(Tensor input, int dim, Tensor index, Tensor src, *, str reduce, Tensor out = "
                 "None)", "(Tensor input, int dim, Tensor index, Number value{o})",
                 "(Tensor input, int dim, Tensor index, Number value, *, str reduce, Tensor out "
                 "= None)")),
    ("searchsorted", (f"(Tensor sorted_sequence, Tensor input{_SORTED}, str side = None, "
                      "Tensor sorter = None, Tensor out = None)",
                      f"(Tensor sorted_sequence, Number self{_SORTED}, str side = None, "
                      "Tensor sorter = None, Tensor out = None)")),
    ("bucketize", (f"(Tensor input, Tensor boundaries{_SORTED}, Tensor out = None)",
                   f"(Number self, Tensor boundaries{_SORTED})")),
    ("trapezoid trapz cumulative_trapezoid", _TRAPEZOID),
    ("result_type", ("(Tensor tensor, Tensor other)", "(Number scalar, Tensor tensor)",
                     "(Tensor tensor, Number other)", "(Number scalar1, Number scalar2)")),
    # (one overload each, besides deprecated ones that PyTorch does not list: a call short of
    # arguments fits none of them)
    ("addmm", (f"(Tensor input, Tensor mat1, Tensor mat2{_SCALED})",
               f"(Tensor input, Tensor mat1, Tensor mat2, torch.dtype out_dtype{_SCALED})")),
    ("baddbmm", (f"(Tensor input, Tensor batch1, Tensor batch2{_SCALED})",
                 f"(Tensor input, Tensor batch1, Tensor batch2, torch.dtype out_dtype{_SCALED})")),
    ("mm bmm", ("(Tensor input, Tensor mat2, *, Tensor out = None)",
                "(Tensor input, Tensor mat2, torch.dtype out_dtype, *, Tensor out = None)")),
    ("addmv", (f"(Tensor input, Tensor mat, Tensor vec{_SCALED})",)),
    ("addr", (f"(Tensor input, Tensor vec1, Tensor vec2{_SCALED})",)),
    ("addbmm", (f"(Tensor input, Tensor batch1, Tensor batch2{_SCALED})",)),
    ("addcmul addcdiv", ("(Tensor input, Tensor tensor1, Tensor tensor2, *, Number value = 1, "
                         "Tensor out = None)",)),
) for n in names.split()}
# ... and their parameters that take a Tensor or a Number (a list or None is refused there)
_OVERLOAD_PARAMS = {n: frozenset(m.group(1) for s in sigs
                                 for m in re.finditer(r"(?:Tensor|Number) (\w+)", s)) - {"out"}
                    for n, sigs in OVERLOADS.items()}


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
    from .._tensor import Tensor
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


def number_self_moved(name, args, kwargs):
    """(args, kwargs) with `self=` as the first argument, for a call of a function with
    PyTorch's Number-first overloads (NUMBER_INPUT: pow(self=2, exponent=t), where the number is
    called `self`) that passed it so; None otherwise (the call's own error stands)."""
    if args or "self" not in kwargs or name not in NUMBER_INPUT:
        return None
    kwargs = dict(kwargs)
    return (kwargs.pop("self"),), kwargs


# PyTorch's argument parser takes NumPy's names for four parameters of every native function
# and Tensor method (python_arg_parser.cpp's numpy_compatibility_arg_names): sum(x, axis=0,
# keepdims=True), add(x1, x2=...). Python functions (nn.functional's) take only their own.
NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim", "x": "input", "a": "input", "x1": "input",
               "x2": "other"}


# torch-level functions PyTorch writes in Python (torch/functional.py): their own names only
PYTHON_FUNCTIONS = frozenset((
    "atleast_1d atleast_2d atleast_3d block_diag broadcast_shapes broadcast_tensors "
    "cartesian_prod cdist chain_matmul einsum lu meshgrid norm split stft istft tensordot "
    "unique unique_consecutive unravel_index align_tensors").split())


def numpy_names_moved(params, kwargs):
    """kwargs with NumPy's names (NUMPY_NAMES) renamed to PyTorch's, for a failed call of a
    function of parameters `params` that has the PyTorch name and not the NumPy one (its first
    parameter, ndgrad's `self` or `input`, stands for PyTorch's `input`); None when there is
    nothing to rename (the call's own error stands)."""
    if not kwargs or params is None or not any(k in NUMPY_NAMES for k in kwargs):
        return None
    out, renamed = {}, False
    for k, v in kwargs.items():
        new = NUMPY_NAMES.get(k)
        if new is not None and k not in params:
            if new == "input" and params and "input" not in params:
                new = params[0]
            if new in params and new not in kwargs and new not in out:
                out[new] = v
                renamed = True
                continue
        out[k] = v
    return out if renamed else None


_METHOD_NUMPY_NAMES = (("axis", "dim"), ("keepdims", "keepdim"), ("x2", "other"))
_NP = type("_NumPyNameUnset", (), {"__repr__": lambda self: "<unset>"})()


def _numpy_names_call(method, name, params, defaults, given, aliases, fn=None):
    """A Tensor method called with NumPy's names: each becomes PyTorch's parameter, unless that
    one was given too (then PyTorch's unexpected-keyword error). A required parameter given
    under neither name: fn's own missing-argument error."""
    kwargs = {p: given[p] for p in params[1:] if given[p] is not defaults.get(p, _UNSET)}
    for a in aliases:
        if given[a] is _NP:
            continue
        c = NUMPY_NAMES[a]
        if c in kwargs:
            raise TypeError(f"{name}() got an unexpected keyword argument '{a}'")
        kwargs[c] = given[a]
    if fn is not None and any(given[p] is _NP for p in params if p not in kwargs):
        return fn(given[params[0]], **kwargs)
    return method(given[params[0]], **kwargs)


def numpy_names_methods(cls, names):
    """Tensor methods defined in Python (the reductions: sum, mean, ...) taking PyTorch's NumPy
    names: one frame with the method's own parameters plus axis=/keepdims= (about 0.1 us)."""
    for n in names:
        f = cls.__dict__.get(n)
        if not inspect.isfunction(f) or hasattr(f, "_torch_method") or \
                hasattr(f, "_numpy_names"):
            continue
        sig = inspect.signature(f)
        names_ = list(sig.parameters)
        aliases = [a for a, c in _METHOD_NUMPY_NAMES if c in names_ and a not in names_]
        if not aliases or any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
            continue
        env = {"fn": f, "NP": _NP, "np_call": _numpy_names_call, "name": n,
               "params": tuple(p for p in names_ if sig.parameters[p].kind
                               is not inspect.Parameter.VAR_POSITIONAL),
               "defaults_all": {p.name: p.default for p in sig.parameters.values()}}
        decl, call, star = [], [], False
        for p in sig.parameters.values():
            given = p.name
            if p.default is not _UNSET:
                env["d_" + p.name] = p.default
                given += "=d_" + p.name
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                decl.append(given)
                call.append(p.name)
            elif p.kind is p.VAR_POSITIONAL:
                decl.append("*" + p.name)
                call.append("*" + p.name)
                star = True
            else:
                if not star:
                    decl.append("*")
                    star = True
                decl.append(given)
                call.append(f"{p.name}={p.name}")
        if not star:
            decl.append("*")
        decl.extend(f"{a}=NP" for a in aliases)
        given = " or ".join(f"{a} is not NP" for a in aliases)
        src = (f"def method({', '.join(decl)}):\n"
               f"    if {given}:\n"
               f"        return np_call(method, name, params, defaults_all, locals(), "
               f"{tuple(aliases)!r})\n"
               f"    return fn({', '.join(call)})\n")
        exec(compile(src, f"<tensor method {n}>", "exec"), env)
        m = functools.wraps(f)(env["method"])
        env["method"] = m
        m.__name__ = m.__qualname__ = n
        m._numpy_names = True
        setattr(cls, n, m)


def params_of(fn):
    """The parameter names of a Python or defop function (cached), or None."""
    op = getattr(fn, "_op", None)
    if op is not None:
        return tuple(op.params) + tuple(k for k in op.defaults if k not in op.params)
    names = _NAMES.get(fn, False)
    if names is False:
        try:
            names = tuple(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            names = None
        _NAMES[fn] = names
    return names


_NAMES = {}


def cpu_scalars_moved(args, kwargs):
    """(args, kwargs) with 0-d CPU tensors moved to the device of the others, when that is the
    only device mix (PyTorch lets CPU scalars take part in elementwise ops on any device); None
    otherwise."""
    from .._tensor import Tensor
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
             binding_first=False, *, method=False):
    """PyTorch's error for this failed call of `name(*args, **kwargs)`, or None.

    params: the positional parameter names; defaults: {name: default}; tensors: parameter names
    that take a tensor besides TENSOR_PARAMS; varkw: the function takes **kwargs;
    binding_first: a missing argument is reported before a wrong one (a Python function;
    PyTorch's C++ functions parse left to right); method: called as a Tensor method (args[0] is
    self, which PyTorch's positions and lists of types leave out)."""
    from .._tensor import Tensor
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
    only = TENSOR_ONLY.get(name, _NONE)
    strict = bool(only) or name in OVERLOADS  # (these refuse a list for any tensor, too)
    # PyTorch's C++ functions take nothing but a Tensor as their first argument `input`, but
    # for NUMBER_INPUT; its Python functions (binding_first) fail their own ways
    first = only if binding_first or name in NUMBER_INPUT else only | _INPUT
    missing = [p for p in params[len(args):] if p not in defaults and p not in kwargs]
    if missing and binding_first:
        return _missing(name, missing)
    for i, a in enumerate(args):
        if i >= len(params):
            break
        p = params[i]
        pos = i if method else i + 1
        if isinstance(a, Tensor):
            continue
        if p == "tensors":  # cat, stack, ...: a sequence of tensors
            err = tensor_sequence_error(name, f"'tensors' (position {pos})", i, a)
            if err is not None:
                return err
            continue
        tensor_only = first if i == 0 else only
        if a.__class__ is float and p in INT_NAMES:
            return TypeError(f"{name}(): argument '{p}' (position {pos}) must be int, not float")
        if isinstance(a, _JUNK) and defaults.get(p, _UNSET) is not a and \
                _torch_name(name, p) not in tensor_only:
            if p in INT_PARAMS:
                return TypeError(f"{name}(): argument '{p}' (position {pos}) must be int, "
                                 f"not {type(a).__name__}")
            if p in NUMBER_PARAMS:
                if name in ("arange", "range") and len(args) == 1:
                    p = "end" if name == "arange" else p
                return TypeError(f"{name}(): argument '{p}' (position {pos}) must be Number, "
                                 f"not {type(a).__name__}")
            if p == "size":
                return TypeError(f"{name}(): argument 'size' (position {pos}) must be tuple "
                                 f"of ints, not {type(a).__name__}")
        err = _tensor_arg(name, p, pos, a, defaults, tensors, tensor_only, strict, args, kwargs,
                          method)
        if err is not None:
            return err
    for k, v in kwargs.items():
        if v.__class__ is float and k in INT_NAMES and k in params:
            return TypeError(f"{name}(): argument '{k}' must be int, not float")
    if strict:  # (elsewhere a keyword's value is left to the function)
        for k, v in kwargs.items():
            if not isinstance(v, Tensor):
                err = _tensor_arg(name, k, None, v, defaults, tensors, only, True, args, kwargs,
                                  method)
                if err is not None:
                    return err
    if kwargs and not varkw:
        known = set(params) | set(defaults)
        for k in kwargs:
            if k not in known and not (k == "input" and "self" in known):
                return TypeError(f"{name}() got an unexpected keyword argument '{k}'")
    if missing:
        return _missing(name, missing)
    return None


def tensor_sequence_error(name, argument, index, a):
    """PyTorch's TypeError for `a` given as a tuple of Tensors (`argument`: how the message names
    it, `index`: the argument's number in the element message), or None when it is one."""
    from .._tensor import Tensor
    if not isinstance(a, (list, tuple)):
        return TypeError(f"{name}(): argument {argument} must be tuple of Tensors, not "
                         f"{type(a).__name__}")
    for j, t in enumerate(a):
        if not isinstance(t, Tensor):
            return TypeError(f"expected Tensor as element {j} in argument {index}, but got "
                             f"{type(t).__name__}")
    return None


def _tensor_arg(name, p, pos, a, defaults, tensors, only, strict, args, kwargs, method):
    """PyTorch's error for `a` (not a Tensor) as the parameter `p`, or None where it takes it.
    None, a string or a callable is refused for every tensor parameter; a number only by a
    TENSOR_ONLY parameter; a list or tuple by the tables' functions (`strict`)."""
    tp = _torch_name(name, p)
    if not (p in TENSOR_PARAMS or p in tensors or tp in only
            or tp in _OVERLOAD_PARAMS.get(name, ())):
        return None
    if a is None and defaults.get(p, _UNSET) is None:
        return None  # an optional tensor
    if not (a is None or isinstance(a, (str, bytes, dict, set)) or callable(a) or tp in only
            or (strict and isinstance(a, (list, tuple)))):
        return None
    kind = "Tensor"
    if name in OVERLOADS:
        sig = _plausible(name, args, kwargs, method)
        if sig is None:
            return invalid_combination(name, args, kwargs, method)
        # one overload takes that many arguments: PyTorch names the argument, as its type there
        positional = [q for q in sig if not q[3]]
        if pos is None:
            match = next((q for q in sig if q[1] == p), None)
        else:
            match = positional[pos - 1] if pos <= len(positional) else None
        if match is None:
            return invalid_combination(name, args, kwargs, method)
        kind, tp = match[0], match[1]
    where = "" if pos is None else f" (position {pos})"
    return TypeError(f"{name}(): argument '{tp}'{where} must be {kind}, not {_typename(a)}")


def _signatures(name, method):
    """OVERLOADS[name] (as the method lists them, with `method`)."""
    sigs = OVERLOADS.get(name, ())
    if method:  # the method's overloads: those with a Tensor input (out_dtype's are no methods),
        # less it and out=
        sigs = [s.replace("Tensor input, ", "").replace(_OUT, "").replace(", Tensor out = None", "")
                for s in sigs if "Tensor input" in s and "out_dtype" not in s]
    return sigs


def _parse(sig):
    """[(type, name, optional, keyword_only)] of one signature of OVERLOADS."""
    params, kwonly = [], False
    for part in sig[1:-1].split(", "):
        if part == "*":
            kwonly = True
            continue
        kind, pname = part.split(" = ")[0].rsplit(" ", 1)
        params.append((kind, pname, " = " in part, kwonly))
    return params


def _plausible(name, args, kwargs, method):
    """The one overload of `name` that takes this many arguments, parsed, or None (none or
    several: PyTorch then lists them all)."""
    n = len(args) - (1 if method else 0) + len(kwargs)
    found = [q for q in map(_parse, _signatures(name, method))
             if sum(not opt for _, _, opt, _ in q) <= n <= len(q)]
    return found[0] if len(found) == 1 else None


_TORCH_TYPES = frozenset(("dtype", "device", "layout", "memory_format", "Size"))


def _typename(a):
    """The type as PyTorch's messages print it (NumPy's types with their module, torch's
    named types with theirs)."""
    t = type(a)
    if t.__module__ == "numpy":
        return f"numpy.{t.__name__}"
    if t.__name__ in _TORCH_TYPES and t.__module__.startswith("ndgrad"):
        return f"torch.{t.__name__}"
    return t.__name__


def invalid_combination(name, args, kwargs, method=False):
    """PyTorch's TypeError for arguments that none of `name`'s overloads (OVERLOADS) takes."""
    return combination_error(name, _signatures(name, method), args[1:] if method else args,
                             kwargs)


def combination_error(name, sigs, args, kwargs, notes=None):
    """PyTorch's "received an invalid combination of arguments" TypeError for a call of `name`
    that none of its signatures `sigs` takes (notes: the "didn't match because ..." line under
    each, where PyTorch prints one)."""
    shown = [_typename(a) for a in args]
    kw = [f"{k}={_typename(v)}" for k, v in kwargs.items()]
    # (PyTorch's spelling: keywords alone come last first, each followed by a comma)
    got = ", ".join(shown + kw) if shown else "".join(f"{k}, " for k in reversed(kw))
    expected = f"expected {sigs[0]}" if len(sigs) == 1 else "expected one of:\n" + "".join(
        f" * {s}\n" + (f"      didn't match because {notes[i]}\n" if notes else "")
        for i, s in enumerate(sigs))
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but "
                     + expected)


def _missing(name, missing):
    """Python's own binding error, under the public name."""
    q = [f"'{m}'" for m in missing]
    names = q[0] if len(q) == 1 else (" and ".join(q) if len(q) == 2
                                       else ", ".join(q[:-1]) + ", and " + q[-1])
    return TypeError(f"{name}() missing {len(q)} required positional argument"
                     f"{'s' if len(q) > 1 else ''}: {names}")


def argument_error(name, params, *args, method=False):
    """bad_args' error for the call `name(*args)` (params: PyTorch's names), for a function that
    finds itself that PyTorch refuses it (a number where only a tensor goes, which the function
    would compute with)."""
    return bad_args(name, params, args, {}, method=method) or \
        TypeError(f"{name}(): invalid arguments")


def check_tensor(name, value, param="input", position=1):
    """PyTorch's TypeError unless `value` is a Tensor (for functions that never fail on one)."""
    from .._tensor import Tensor
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


def reraise(fn, name, args, kwargs, exc, binding_first=False, method=False):
    """Raise PyTorch's error for this failed call of `fn` (a Python or defop function) under
    the public `name`, if bad_args finds one (else return: the caller re-raises `exc`)."""
    op = getattr(fn, "_op", None)
    if op is not None:
        params = op.params
        tensors = set(op.inputs) | ({params[0]} if params else set())
        err = bad_args(name, params, args, kwargs, exc, op.defaults, tensors, op.varkw,
                       method=method)
    else:
        sig = _SIGS.get(fn, False)
        if sig is False:
            sig = _SIGS[fn] = _signature(fn)
        if sig is None:
            return
        params, defaults, varkw = sig
        err = bad_args(name, params, args, kwargs, exc, defaults, varkw=varkw,
                       binding_first=binding_first, method=method)
    if err is not None:
        raise err from None


def tensor_method(fn, name):
    """`fn` as the Tensor method `name`: its argument errors count positions without self, as
    PyTorch's methods do. One frame with fn's own parameters passes them on as they came (about
    25 ns; a *args frame would cost ten times that); a defop function's calls apply itself, as
    fn does (no frame more)."""
    op = getattr(fn, "_op", None)
    if op is not None:
        if op.params and not (op.defaults or op.varkw):
            return _defop_method(fn, name, op)
        sig = inspect.Signature([inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
                                 inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)])
    else:
        sig = inspect.signature(fn)
    env = {"fn": fn, "failed": _method_failed, "name": name, "pos_defaults": [],
           "kw_defaults": {}, "hub": _HUB}
    decl, call, pos, kw = [], [], [], []
    for p in sig.parameters.values():
        given = p.name
        if p.default is not _UNSET:
            env["d_" + p.name] = p.default
            given += "=d_" + p.name
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            decl.append(given)
            call.append(p.name)
            pos.append(p.name)
            env["pos_defaults"].append(p.default)
        elif p.kind is p.VAR_POSITIONAL:
            decl.append("*" + p.name)
            call.append("*" + p.name)
            pos.append("*" + p.name)
        elif p.kind is p.KEYWORD_ONLY:
            if not any(d.startswith("*") for d in decl):
                decl.append("*")
            decl.append(given)
            call.append(f"{p.name}={p.name}")
            kw.append(f"{p.name!r}: {p.name}")
            env["kw_defaults"][p.name] = p.default
        else:
            decl.append("**" + p.name)
            call.append("**" + p.name)
            kw.append("**" + p.name)
    # PyTorch's NumPy names (axis=, keepdims=, x2=) for the parameters this method has
    names = [c.partition("=")[0] for c in call]
    aliases = [a for a, c in _METHOD_NUMPY_NAMES if c in names and a not in names] \
        if not any(d.startswith("**") for d in decl) else []
    alias_check = ""
    if aliases:
        if not any(d.startswith("*") for d in decl):
            decl.append("*")
        decl.extend(f"{a}=NP" for a in aliases)
        # a required dim may come as axis=: it and the required parameters after it default to
        # NP (np_call then passes what was given; a parameter still missing is fn's error)
        first = min((decl.index(NUMPY_NAMES[a]) for a in aliases if NUMPY_NAMES[a] in decl),
                    default=None)
        required = []
        if first is not None:
            for i in range(first, len(decl)):
                if decl[i] == "*" or decl[i].startswith("*"):
                    break
                if "=" not in decl[i]:
                    required.append(decl[i])
                    decl[i] += "=NP"
        env["NP"] = _NP
        env["np_call"] = _numpy_names_call
        env["params"] = tuple(n for n in names if not n.startswith("*"))
        env["defaults_all"] = {**dict(zip(pos, env["pos_defaults"])), **env["kw_defaults"]}
        given = " or ".join([f"{a} is not NP" for a in aliases] +
                            [f"{c} is NP" for c in required])
        env["defaults_all"].update({c: _NP for c in required})
        alias_check = (f"    if {given}:\n"
                       f"        return np_call(method, name, params, defaults_all, locals(), "
                       f"{tuple(aliases)!r}, fn)\n")
    # (while a profiler is active, the call is a range: Note [Profiler hooks]; a defop
    # function's op records itself)
    prof = (f"        if hub[0] is not None:\n"
            f"            return hub[0].call(name, fn, ({''.join(p + ', ' for p in pos)}), "
            f"{{{', '.join(kw)}}})\n") if op is None else ""
    src = (f"def method({', '.join(decl)}):\n"
           f"{alias_check}"
           f"    try:\n"
           f"{prof}"
           f"        return fn({', '.join(call)})\n"
           f"    except Exception as e:\n"
           f"        failed(fn, name, ({', '.join(pos)},), {{{', '.join(kw)}}}, e, "
           f"pos_defaults, kw_defaults)\n"
           f"        raise\n")
    return _made(src, env, fn, name)


def _made(src, env, fn, name, file=None):
    # (no user text: parameter names and repr'd strings.) Named as a file of this package, so
    # that error sites and warnings look past its frame to the user's line
    import os
    where = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                         file or f"<tensor method {name}>")
    exec(compile(src, where, "exec"), env)
    method = functools.wraps(fn)(env[name if file else "method"])
    method.__name__ = method.__qualname__ = name
    method._torch_method = fn
    return method


def _method_failed(fn, name, args, kwargs, exc, pos_defaults, kw_defaults):
    """reraise for a tensor_method, with the arguments as PyTorch lists them: those still at
    their defaults (the very objects) taken as not given."""
    n = len(args)
    while 0 < n <= len(pos_defaults) and args[n - 1] is pos_defaults[n - 1]:
        n -= 1
    kwargs = {k: v for k, v in kwargs.items() if kw_defaults.get(k, _UNSET) is not v}
    reraise(fn, name, args[:n], kwargs, exc, method=True)


_NO_KW = {}  # (never written: apply copies keywords before changing them)
_UNHANDLED = object()


def _defop_method(fn, name, op):
    """tensor_method for the defop function `fn` of positional parameters without defaults:
    fn's own body (its vmap hand-over, apply), with _defop_method_failed for its except."""
    from ._registry import apply, _VMAP
    params = ", ".join(op.params)
    src = (f"def method({params}):\n"
           f"    if vmap[0] is not None:\n"
           f"        return vmap[0](op, ({params},), {{}})\n"
           f"    try:\n"
           f"        return apply(op, ({params},), NO_KW)\n"
           f"    except Exception as e:\n"
           f"        result = failed(fn, name, ({params},), e)\n"
           f"        if result is UNHANDLED:\n"
           f"            raise\n"
           f"        return result\n")
    env = {"fn": fn, "op": op, "name": name, "apply": apply, "vmap": _VMAP, "NO_KW": _NO_KW,
           "failed": _defop_method_failed, "UNHANDLED": _UNHANDLED}
    return _made(src, env, fn, name)


def _defop_method_failed(fn, name, args, exc):
    """What fn does with a failed call (a CPU scalar among device tensors: moved, and the call
    made again), with the method's argument errors; _UNHANDLED: the original error stands."""
    if fn._op.promote is not None and isinstance(exc, TypeError):
        moved = cpu_scalars_moved(args, {})
        if moved is not None:
            return fn(*moved[0], **moved[1])
    reraise(fn, name, args, {}, exc, method=True)
    return _UNHANDLED


def renamed(fn, name, **names):
    """`fn` under PyTorch's parameter names (names: fn's name -> PyTorch's) for the namespace
    where PyTorch calls them so: torch.det(input) is linalg.det(A), Tensor.swapaxes(axis0, axis1)
    is transpose(dim0, dim1). One generated frame with the renamed parameters (their kinds and
    defaults kept) that passes them on by position, or by fn's own keyword."""
    sig = inspect.signature(fn)
    env = {"fn": fn}
    decl, call = [], []
    star = False
    for p in sig.parameters.values():
        new = names.get(p.name, p.name)
        given = new
        if p.default is not _UNSET:
            env["d_" + new] = p.default
            given += "=d_" + new
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            decl.append(given)
            call.append(new)
        elif p.kind is p.VAR_POSITIONAL:
            decl.append("*" + new)
            call.append("*" + new)
            star = True
        elif p.kind is p.KEYWORD_ONLY:
            if not star:
                decl.append("*")
                star = True
            decl.append(given)
            call.append(f"{p.name}={new}")
        else:
            decl.append("**" + new)
            call.append("**" + new)
    src = f"def {name}({', '.join(decl)}):\n    return fn({', '.join(call)})\n"
    f = _made(src, env, fn, name, f"<torch {name}>")
    f.__wrapped__ = fn
    del f._torch_method
    f.__signature__ = inspect.signature(f, follow_wrapped=False)
    return f


def wrap_methods(cls, names):
    """The methods `names` of `cls` (those it defines) through tensor_method."""
    for n in names:
        f = cls.__dict__.get(n)
        if inspect.isfunction(f) and not hasattr(f, "_torch_method"):
            setattr(cls, n, tensor_method(f, n))


_NO_DISPATCH = object()


def tf_retry(name, default, args, kwargs):
    """After a call failed: when an argument overrides __torch_function__ (a non-Tensor such as
    linear_operator's LinearOperator, which the function could not take), its answer, as
    PyTorch dispatches before it parses arguments; else _NO_DISPATCH."""
    from ._registry import _tf_relevant
    relevant = _tf_relevant(args, kwargs)
    if not relevant:
        return _NO_DISPATCH
    from .. import overrides
    if not overrides.has_torch_function(relevant):
        return _NO_DISPATCH
    import sys
    # the torch-level name when it is this function (maybe wrapped again), else the wrapper
    # itself (torch.linalg.svd's, not torch.svd)
    torch = sys.modules[__name__.split(".")[0]]
    public = getattr(torch, name, None)
    f = public
    while f is not None and f is not default:
        f = getattr(f, "__wrapped__", None)
    if f is None:
        public = default
    return overrides._dispatch_builtin(public, relevant, args, kwargs)


def tf_method(name, args, kwargs=None):
    """Tensor.<name>(*args) with an operand that overrides __torch_function__: its answer (the
    function it gets is the Tensor method, as PyTorch's operators and methods pass); else
    _NO_DISPATCH."""
    from ._registry import _tf_relevant
    relevant = _tf_relevant(args, kwargs)
    if not relevant:
        return _NO_DISPATCH
    from .. import overrides
    if not overrides.has_torch_function(relevant):
        return _NO_DISPATCH
    from .._tensor import Tensor
    return overrides._dispatch_builtin(getattr(Tensor, name), relevant, args, kwargs or {})


def torch_errors(fn, name=None, binding_first=False, attr=None):
    """`fn`, raising PyTorch's argument errors (bad_args) when a call fails. attr: PyTorch's
    Python function reads this attribute of its first argument first (AttributeError)."""
    if getattr(fn, "_torch_errors", False) or not inspect.isfunction(fn):
        return fn
    name = name or fn.__name__

    hub = _HUB

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        try:
            if hub[0] is not None:  # (a profiler is active: Note [Profiler hooks])
                return hub[0].call(name, fn, args, kwargs)
            return fn(*args, **kwargs)
        except Exception as e:
            r = tf_retry(name, checked, args, kwargs)
            if r is not _NO_DISPATCH:
                return r
            from .._tensor import Tensor
            moved = number_self_moved(name, args, kwargs)
            if moved is not None:
                return checked(*moved[0], **moved[1])
            if attr is not None and args and not isinstance(args[0], Tensor) and \
                    not hasattr(args[0], attr):
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
