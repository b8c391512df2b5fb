"""One formula, two executions: derivative formulas run on plain arrays when no graph is needed.

A derivative formula (ops/_registry.py) is written with ndgrad ops, so that with
`create_graph=True` it records its own graph and every op gets higher-order gradients: that is
the *recorded* execution. When `create_graph` is off nothing needs recording, and the same
formula text can run on the arrays themselves (the *raw* execution):

- operators (`grad * other`, `-grad`, `1 - result * result`, `grad / self`, `@`, comparisons)
  act on the arrays directly. For arrays of one floating dtype (and Python scalars, which NumPy
  treats as weak like PyTorch does) the array operators are the forwards of the ops that
  `Tensor`'s operators run (`mul` is `xp.multiply`, `div` is `xp.true_divide`, ...), with the
  same result dtypes;
- a call of a registered op (`tanh_backward(grad, result)`, `_mul3(...)`, `cos(self)`) becomes
  a call of that op's `forward(xp, ...)` on the arrays.

`raw_formula(f)` builds the raw twin of `f` once: a new function object over f's own code, whose
globals (and closure cells) map each op's name to its array-level caller. Only formulas whose
bytecode consists of argument loads, constants, operators, comparisons, branches and calls of
registered ops qualify; anything else (a Tensor method such as `.sum(dim)`, a helper function,
indexing of a Tensor) keeps the recorded execution, as does any call in which the arrays'
dtypes would not promote as PyTorch's (`RawFallback`), so both executions give the same values
and dtypes. `NDGRAD_RECORDED_BACKWARD=1` in the environment (or `set_raw_backward(False)`)
forces the recorded execution everywhere (the op-table tests run both).
"""
import builtins
import dis
import os
import types

from .._backend import numpy as _np, xp_of, _MODULES as _DEVICE_ARRAYS

__all__ = ["raw_formula", "RawFallback", "host_arrays", "set_raw_backward", "raw_backward_enabled", "state"]

_ndarray = _np.ndarray
_generic = _np.generic
_asarray = _np.asarray  # host: NumPy scalars of the CPU path become 0-d arrays


class RawFallback(Exception):
    """The raw execution cannot promise PyTorch's dtypes here: run the recorded formula."""


def host_arrays(*arrays, real_float=False):
    """For a helper's array twin that handles NumPy arrays only (with `real_float`, of float32
    or float64 only): RawFallback for anything else, so the recorded formula runs instead."""
    for a in arrays:
        if a.__class__ is not _ndarray or real_float and (a.dtype.kind != "f" or
                                                          a.dtype.itemsize < 4):
            raise RawFallback


class _State:
    __slots__ = ("enabled",)

    def __init__(self):
        self.enabled = os.environ.get("NDGRAD_RECORDED_BACKWARD", "") in ("", "0")


state = _State()


def set_raw_backward(enabled):
    """Private switch: False forces every formula through the recorded (Tensor) execution."""
    prev = state.enabled
    state.enabled = bool(enabled)
    return prev


def raw_backward_enabled():
    return state.enabled


# bytecode that means the same on arrays as on Tensors (operators, loads, control flow)
_PLAIN = frozenset({
    "RESUME", "NOP", "CACHE", "EXTENDED_ARG", "LOAD_FAST", "STORE_FAST", "LOAD_CONST",
    "RETURN_VALUE", "BINARY_OP", "UNARY_NEGATIVE", "UNARY_POSITIVE", "UNARY_NOT", "COMPARE_OP",
    "IS_OP", "POP_TOP", "COPY", "SWAP", "PUSH_NULL", "PRECALL", "CALL", "KW_NAMES",
    "BUILD_TUPLE", "COPY_FREE_VARS", "LOAD_DEREF", "LOAD_GLOBAL",
    "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_BACKWARD_IF_FALSE",
    "POP_JUMP_BACKWARD_IF_TRUE", "POP_JUMP_FORWARD_IF_NONE", "POP_JUMP_FORWARD_IF_NOT_NONE",
    "POP_JUMP_BACKWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE", "POP_JUMP_IF_FALSE",
    "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE", "JUMP_FORWARD",
    "JUMP_BACKWARD", "JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP", "RETURN_CONST",
    "BINARY_SUBSCR", "CALL_INTRINSIC_1", "TO_BOOL", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR",
    "LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST",
    "UNPACK_SEQUENCE",  # (the tuple a multi-output op returns: of arrays here, of Tensors there)
})
_SCALARS = (int, float, complex, bool, str, type(None))
_SUBSCRIPTABLE = ("grad", "result")  # tuples of arrays for ops with several outputs


def _value_ok(v):
    """A global or closure value the raw twin may use: a constant, a registered op, or a helper
    that names its own array-level twin (`helper._raw`, e.g. complex.py's `_cj`)."""
    return isinstance(v, _SCALARS) or getattr(v, "_op", None) is not None or \
        getattr(v, "_raw", None) is not None


def _raw_value(v):
    if getattr(v, "_op", None) is not None:
        return _op_caller(v._op)
    return getattr(v, "_raw", v)


def raw_formula(f):
    """The raw-array twin of formula `f` (same code object), or None if `f` does not qualify."""
    if f is None or not isinstance(f, types.FunctionType):
        return None
    code = f.__code__
    if code.co_flags & (0x20 | 0x100 | 0x200):  # generators, coroutines
        return None
    if any(isinstance(c, types.CodeType) for c in code.co_consts):  # nested lambdas, genexps
        return None
    glb = f.__globals__
    bi = glb.get("__builtins__", builtins)
    bi = bi if isinstance(bi, dict) else bi.__dict__
    names = {}
    ins = list(dis.get_instructions(code))
    for k, i in enumerate(ins):
        if i.opname not in _PLAIN:
            return None
        if i.opname == "LOAD_GLOBAL":
            name = i.argval
            if name in glb:
                v = glb[name]
            elif name in bi:
                v = bi[name]
            else:
                return None
            if not _value_ok(v):
                return None
            names[name] = _raw_value(v)
        elif i.opname == "BINARY_SUBSCR":
            # only grad[k] / result[k] (the tuples of a multi-output op) by a constant index
            if k < 2 or ins[k - 1].opname != "LOAD_CONST" or \
                    type(ins[k - 1].argval) is not int or ins[k - 2].opname != "LOAD_FAST" or \
                    ins[k - 2].argval not in _SUBSCRIPTABLE:
                return None
    closure = None
    if f.__closure__:
        cells = []
        for name, cell in zip(code.co_freevars, f.__closure__):
            try:
                v = cell.cell_contents
            except ValueError:  # not yet bound
                return None
            if not _value_ok(v):
                return None
            cells.append(types.CellType(_raw_value(v)))
        closure = tuple(cells)
    raw_globals = {"__builtins__": bi}
    raw_globals.update(names)
    g = types.FunctionType(code, raw_globals, f.__name__, f.__defaults__, closure)
    g.__kwdefaults__ = f.__kwdefaults__
    return g


# ---------------------------------------------------------------- ops called inside formulas

_CALLERS = {}  # OpDef -> its array-level caller
NUMBERS = frozenset((int, float, bool, type(None)))  # arguments that are neither arrays nor dtypes


def _op_caller(op):
    """`op` at array level: its forward on the arrays, when they promote as PyTorch's would."""
    call = _CALLERS.get(op)
    if call is not None:
        return call
    forward = op.forward
    promote = op.promote
    single = op.nout == 1
    plain, quiet = op.fwd_plain, op.quiet  # (quiet: NumPy's error state entered here)
    from ._registry import _ERR_VAR as var, _ERR_IGNORE as ignore

    def call(*args, **kwargs):
        if kwargs:
            return other(args, kwargs)
        n = len(args)
        if single and (n == 2 or n == 3 and args[2].__class__ in NUMBERS):
            # the common calls (grad and one saved array, maybe a Python number or None after
            # them: threshold_backward, log_softmax_backward): the checks below, unrolled
            a, b = args[0], args[1]
            if a.__class__ is _ndarray and b.__class__ is _ndarray and (
                    not quiet or var.get() is ignore):  # (in a backward pass: quiet already)
                dt = a.dtype
                if promote is not None and (b.dtype is not dt and b.dtype != dt or
                                            dt.kind not in "fc"):
                    raise RawFallback
                out = plain(_np, *args)
                return out if out.__class__ is _ndarray else _asarray(out)
        dt = None
        for a in args:
            if type(a) is _ndarray:
                if dt is None:
                    dt = a.dtype
                elif a.dtype is not dt and promote is not None and a.dtype != dt:
                    raise RawFallback
            elif isinstance(a, _generic) or type(a) in _DEVICE_ARRAYS:
                return other(args, kwargs)
        if promote is not None and dt is not None and dt.kind not in "fc":
            raise RawFallback  # integer/bool math: PyTorch's promotion rules, not NumPy's
        if quiet and var.get() is not ignore:  # (the engine's pass is quiet already)
            token = var.set(ignore)
            try:
                out = plain(_np, *args)
            finally:
                var.reset(token)
        else:
            out = plain(_np, *args)
        if single:
            return out if type(out) is _ndarray else _asarray(out)
        return tuple(o if type(o) is _ndarray else _asarray(o) for o in out)

    def other(args, kwargs):
        """NumPy scalars (0-d results) become 0-d arrays; CuPy arrays use CuPy."""
        args = tuple(_asarray(a) if isinstance(a, _generic) else a for a in args)
        xp = dt = None
        for a in args:
            if hasattr(a, "dtype") and hasattr(a, "shape"):
                if xp is None:
                    xp = xp_of(a)
                    dt = a.dtype
                elif promote is not None and a.dtype != dt:
                    raise RawFallback
        if promote is not None and (dt is None or dt.kind not in "fc" or (
                kwargs and any(hasattr(v, "dtype") for v in kwargs.values()))):
            raise RawFallback
        xp = xp or _np
        out = forward(xp, *args, **kwargs)
        if single:
            return xp.asarray(out)
        return tuple(xp.asarray(o) for o in out)

    call.__name__ = call.__qualname__ = op.name
    _CALLERS[op] = call
    return call


# ---------------------------------------------------------------- one-call formulas

_NOISE = frozenset({"RESUME", "NOP", "CACHE", "PUSH_NULL", "PRECALL"})
_LOAD_PARAM = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW"})
_LOAD_PARAMS = frozenset({"LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW"})
_LOAD_CONST = frozenset({"LOAD_CONST", "LOAD_SMALL_INT"})


def formula_shape(f):
    """What formula `f`'s code is, when its raw execution can be written out without frames of
    its own (OpNode's plain backward, ops/_registry.py `_plain_backward`): ("param", name) for
    `lambda grad: grad`; else a call tree, ("call", op, args) for a call of a registered op of
    one output and ("helper", fn, args) for a helper with an array twin (`fn` is `helper._raw`,
    e.g. linalg's _mH), called positionally on the formula's parameters ("p", name), constants
    ("c", value) and such calls: relu's `threshold_backward(grad, result, 0)`, mm's
    `_mm(grad, _mH(other))`; and ("op", symbol, operands) for the arithmetic operators and
    comparisons ("neg" for unary minus), which act on the arrays as in the raw twin: mul's
    `grad * other`; ("if", test, then, else) for `if <test>: return <then>` followed by
    `return <else>` (a conditional expression too: add's `grad if alpha == 1 else grad *
    alpha`), the test a helper call or a comparison, each branch a call tree or a parameter
    (tanh's `if _is_complex(result): ...`). None for anything else (its raw twin runs)."""
    code = getattr(f, "__code__", None)
    if code is None or f.__closure__ or code.co_flags & (0x04 | 0x08):  # *args, **kwargs
        return None
    params = code.co_varnames[:code.co_argcount]
    ins = [i for i in dis.get_instructions(code) if i.opname not in _NOISE]
    if len(ins) == 2 and ins[0].opname in _LOAD_PARAM and ins[0].argval in params and \
            ins[1].opname == "RETURN_VALUE":
        return ("param", ins[0].argval)
    jumps = [k for k, i in enumerate(ins) if i.opname in _JUMP_IF_FALSE]
    if not jumps:
        return _call_tree(f, params, ins)
    k = jumps[0]
    then = ins[k + 1:]
    if len(jumps) > 1 or not then or then[-1].opname != "RETURN_VALUE":
        return None
    # `if t: return a` then `return b`: the then part returns right before the jump's target;
    # `a if t else b`: it jumps over the else part to the one return at the end
    end = next(n for n, i in enumerate(then) if i.opname in ("RETURN_VALUE", "JUMP_FORWARD"))
    if end + 1 == len(then) or then[end + 1].offset != ins[k].argval or (
            then[end].opname == "JUMP_FORWARD" and then[end].argval != then[-1].offset):
        return None
    parts = (_call_tree(f, params, ins[:k], test=True),
             _call_tree(f, params, then[:end] + [then[-1]], branch=True),
             _call_tree(f, params, then[end + 1:], branch=True))
    return None if None in parts else ("if",) + parts


_JUMP_IF_FALSE = frozenset({"POP_JUMP_IF_FALSE", "POP_JUMP_FORWARD_IF_FALSE"})


def _call_tree(f, params, ins, test=False, branch=False):
    """formula_shape's call tree of the instructions `ins` (a `return` statement's, or with
    `test` an `if` statement's test, without its jump; `branch`: a return inside an `if`):
    None where they are something else."""
    stack = []
    for i in ins:
        name = i.opname
        if name in _LOAD_PARAM or name in _LOAD_PARAMS:
            names = (i.argval,) if name in _LOAD_PARAM else tuple(i.argval)
            if any(n not in params for n in names):
                return None
            stack += [("p", n) for n in names]
        elif name in _LOAD_CONST:
            stack.append(("c", i.argval))
        elif name == "LOAD_GLOBAL":
            v = f.__globals__.get(i.argval)
            op = getattr(v, "_op", None)
            if op is not None and op.nout == 1:
                stack.append(("fn", "call", op))
            elif getattr(v, "_raw", None) is not None:
                stack.append(("fn", "helper", v._raw))
            else:
                return None
        elif name in ("CALL", "CALL_FUNCTION"):
            n = i.arg
            if len(stack) < n + 1 or stack[-n - 1][0] != "fn":
                return None
            args = tuple(stack[len(stack) - n:])
            if any(a[0] == "fn" for a in args):
                return None
            _, kind, target = stack[-n - 1]
            del stack[-n - 1:]
            stack.append((kind, target, args))
        elif name in _BINARY or name == "BINARY_OP" or name == "COMPARE_OP":
            sym = _BINARY.get(name) or i.argrepr.replace("bool(", "").rstrip(")")
            if sym not in _OPERATORS or len(stack) < 2 or "fn" in (stack[-1][0], stack[-2][0]):
                return None
            b = stack.pop()
            stack[-1] = ("op", sym, (stack[-1], b))
        elif name == "UNARY_NEGATIVE":
            if not stack or stack[-1][0] == "fn":
                return None
            stack[-1] = ("op", "neg", (stack[-1],))
        elif name == "RETURN_VALUE" and not test:
            # (a branch of an `if` may return a parameter as it is: add's `grad if alpha == 1`)
            kinds = ("call", "helper", "op", "p") if branch else ("call", "helper", "op")
            return stack[0] if len(stack) == 1 and stack[0][0] in kinds else None
        else:
            return None
    return stack[0] if test and len(stack) == 1 and stack[0][0] in ("helper", "op") else None


_BINARY = {"BINARY_ADD": "+", "BINARY_SUBTRACT": "-", "BINARY_MULTIPLY": "*",  # (3.10)
           "BINARY_TRUE_DIVIDE": "/", "BINARY_MATRIX_MULTIPLY": "@", "BINARY_POWER": "**"}
_OPERATORS = frozenset(("+", "-", "*", "/", "@", "**", "<", "<=", ">", ">=", "==", "!="))
