"""`out=`: PyTorch's output-argument protocol, for every public function that has it.

    torch.add(x, y, out=result)         # result is resized if needed, written, and returned

One wrapper serves them all (`install` puts it around each name of a namespace that PyTorch's
Python API gives an `out=`), so no op carries out-handling code. The protocol, as PyTorch's:
- inputs or `out` that require grad, with grad mode on: "functions with out=... arguments don't
  support automatic differentiation" (checked before anything is computed);
- the result's dtype against out's, by the op's rule (RULES below: castable, identical, or one of
  PyTorch's own messages), checked before `out` changes;
- `out` of another shape is resized (a UserWarning when it had elements), then written in place
  (views of it see the values; its version counter moves), and `out` itself is returned;
- ops with several outputs take a tuple of tensors and return the named tuple `<op>_out`;
- factories (zeros, arange, randn, ...) make their result in out's dtype.
"""
import functools
import warnings

from . import _argcheck
from ..autograd._prof_state import HUB as _HUB
from .. import _dtype as D
from .._backend import xp_of, data_ptr
from .._tensor import Tensor
from ._inplace import _can_cast, _type_name  # (canCast, and Float/Long/... names)

__all__ = ["install", "OUT_FUNCTIONS"]

_CPP = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
        "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
        "bool": "bool", "complex64": "c10::complex<float>",
        "complex128": "c10::complex<double>", "bfloat16": "c10::BFloat16"}


# ---------------------------------------------------------------- the rules per op
# kind: "cast" (the result must be castable to out's dtype), "same" (identical dtypes), "any"
# (every dtype takes the result), "bool" (out must be bool), "dtype" (computed in out's dtype),
# "factory" (made in out's dtype).
# The message is PyTorch's for that op; {R}/{O} are the result's and out's scalar names
# (Float, Long, ...), {r}/{o} their C++ names (float, long int, ...).
_CAST = "result type {R} can't be cast to the desired output type {O}"
_EXACT = "Expected out tensor to have dtype {r}, but got {o} instead"
_FOUND = "Found dtype {O} but expected {R}"
_CAT = "torch.cat(): input types can't be cast to the desired output type {O}"
_SAFE = ("{name}: Expected result to be safely castable from {R} dtype, but got result with "
         "dtype {O}")

RULES = {}


def _rule(kind, names, msg=None, exc=RuntimeError):
    for n in names.split():
        RULES[n] = (kind, msg, exc)


_rule("cast", """absolute acos acosh add addcdiv addcmul addr arccos arccosh arcsin
    arcsinh arctan arctan2 arctanh asin asinh atan atan2 atanh bitwise_and bitwise_left_shift
    bitwise_or bitwise_right_shift bitwise_xor copysign cos cosh deg2rad digamma div
    divide erf erfc erfinv exp exp2 expm1 floor_divide fmax fmin fmod gcd hypot i0 igamma igammac
    kron lcm lerp lgamma log log10 log1p log2 logaddexp logaddexp2 logit maximum minimum mul
    multiply nanmean nansum negative nextafter outer ger polygamma pow rad2deg reciprocal
    remainder rsqrt sigmoid sin sinc sinh sqrt square std sub subtract tan tanh true_divide var
    xlogy""", _CAST)
_rule("cast", "cat concat concatenate stack hstack vstack dstack column_stack row_stack", _CAT,
      TypeError)
_rule("cast", "mean", "mean.dtype_out(): input types can't be cast to the desired output type {O}")
_rule("cast", "matrix_power cholesky_solve cholesky_inverse", _SAFE)
_rule("cast", "max min", "Expected canCast( typeMetaToScalarType(self.dtype()), "
      "typeMetaToScalarType(out.dtype())) to be true, but got false.  (Could this error message "
      "be improved?  If so, please report an enhancement request to PyTorch.)")
_rule("cast", "ldexp", "ldexp can't be cast to the desired output type {O}")
_rule("cast", "logsumexp", "logsumexp(): Expected floating point type for result tensor, but got: {O}")
_rule("any", """eq ne lt le gt ge greater greater_equal less less_equal not_equal logical_and
    logical_or logical_xor logical_not count_nonzero""")
_rule("dtype", "sum prod cumsum cumprod")   # computed in out's dtype
_rule("bool", "signbit isposinf isneginf", "{name} does not support non-boolean outputs.")
_rule("bool", "all any", "{name} only supports bool tensor for result, got: {O}")
_rule("same", """abs neg sign sgn floor ceil trunc fix frac round clamp clip clamp_min clamp_max
    bitwise_not""", _FOUND)
_rule("same", """gather take_along_dim scatter scatter_add scatter_reduce index_add index_copy
    index_fill index_put masked_fill masked_scatter mm bmm mv addmm addmv baddbmm tril triu cross
    inverse aminmax msort triangular_solve norm argmax argmin sort argsort topk kthvalue
    median nanmedian slogdet qr svd lu_unpack lstsq geqrf var_mean std_mean
    histogram histc bincount renorm diff block_diag cartesian_prod lu_solve
    polar complex conj_physical angle embedding softmax log_softmax isin slice_scatter
    frobenius_norm index_reduce""", _EXACT)
_rule("cast", "threshold", _CAST)
# (PyTorch's message names the result type twice for a float input; for an integer one its first
# name is the input's, which this rule does not say)
_rule("cast", "mvlgamma", "mvlgamma: result type {R} can't be cast to the desired output type {R}")
_rule("same", "hardshrink", _FOUND)
_rule("same", "nuclear_norm", "linalg.matrix_norm expected out tensor dtype {R} but got: {O}")
_rule("same", "chain_matmul cholesky lu", _EXACT)
_rule("same", "multinomial", "multinomial expects Long tensor out, got: {O}")
_rule("same", "hash_tensor", _EXACT)
_rule("any", "bernoulli")   # (the draws are written in out's dtype)
_rule("same", "matmul dot vdot", "result dtype {O} does not match input dtype {R}")
_rule("same", "logcumsumexp cummax cummin", "expected scalar_type {R} but found {O}")
_rule("same", "tensordot inner", "tensordot: Expected the output tensor to have dtype {R}, but "
      "got an output tensor with dtype {O}")
_rule("same", "amax amin", "Expected the dtype for input and out to match, but got {R} for "
      "input's dtype and {O} for out's dtype.")
_rule("same", "index_select masked_select", "{name}(): self and result must have the same scalar type")
_rule("same", "take", "take(): self and out expected to have the same dtype, but got self.dtype "
      "= {R} and out.dtype = {O}")
_rule("same", "nonzero", "nonzero: Expected out tensor to have scalar type Long but got scalar type{O}")
_rule("same", "addbmm", "self and mat2 must have the same dtype, but got {O} and {R}")
_rule("same", "nan_to_num", "nan_to_num: dtype of out: {O} should be same as input: {R}")
_rule("same", "float_power", "the output given to float_power has dtype {O} but the operation's "
      "result requires dtype {R}")
_rule("same", "where", "Expected out type to be {R} but got {O}")
_rule("same", "mode", "expected scalar type '{R}' but got '{O}' for values output")
_rule("same", "frexp", "torch.frexp() expects mantissa to have dtype {r} but got {o}")
_rule("same", "quantile nanquantile", "quantile() out tensor must be same dtype as the input tensor")
_rule("heaviside", "heaviside", "heaviside is not yet implemented for tensors with different dtypes.")
_rule("diag", "diag", _EXACT)
_rule("same", "narrow_copy", "Expected self.dtype() == output.dtype() to be true, but got false.  "
      "(Could this error message be improved?  If so, please report an enhancement request to "
      "PyTorch.)")
_rule("same", "searchsorted bucketize", "torch.searchsorted(): output tensor's dtype is wrong, it can "
      "only be Int(int32) or Long(int64) depending on whether out_int32 flag is True, but we got "
      "output tensor's dtype {O} and out_int32 flag is {flag}")
_rule("factory", """zeros ones empty full arange range linspace logspace eye rand randn randint
    randperm normal tril_indices triu_indices scalar_tensor bartlett_window blackman_window
    hamming_window hann_window kaiser_window""")
# PyTorch's Python API has no out= for these, although ATen has an out variant
_NEEDS_DIM = {"median", "nanmedian"}   # their out= overloads are the ones with `dim`
NO_OUT = set("dist relu isnan isinf trace flip roll rot90 diag_embed clone unsafe_split "
             "unique_consecutive det".split())

# linalg / special / fft: the namespace's own rules (PyTorch's linalg out= dtypes must match)
LINALG_RULES = {n: ("same", _EXACT, RuntimeError) for n in """cholesky cholesky_ex cond cross det
    diagonal eig eigh eigvals eigvalsh householder_product inv inv_ex ldl_factor ldl_factor_ex
    ldl_solve lstsq lu lu_factor lu_factor_ex lu_solve matmul matrix_exp matrix_norm matrix_power
    matrix_rank multi_dot norm pinv qr slogdet solve solve_ex solve_triangular svd svdvals
    tensorinv tensorsolve vander vecdot vector_norm""".split()}
_CAST_RULE = ("cast", _CAST, RuntimeError)
SPECIAL_RULES = {n: _CAST_RULE for n in """airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1
    chebyshev_polynomial_t chebyshev_polynomial_u chebyshev_polynomial_v chebyshev_polynomial_w
    digamma entr erf erfc erfcx erfinv exp2 expit expm1 gammainc gammaincc gammaln
    hermite_polynomial_h hermite_polynomial_he i0 i0e i1 i1e laguerre_polynomial_l
    legendre_polynomial_p log1p log_ndtr logit logsumexp modified_bessel_i0 modified_bessel_i1
    modified_bessel_k0 modified_bessel_k1 multigammaln ndtr ndtri polygamma psi
    scaled_modified_bessel_k0 scaled_modified_bessel_k1 shifted_chebyshev_polynomial_t
    shifted_chebyshev_polynomial_u shifted_chebyshev_polynomial_v shifted_chebyshev_polynomial_w
    sinc spherical_bessel_j0 xlog1py xlogy zeta""".split()}
SPECIAL_RULES["round"] = ("same", _FOUND, RuntimeError)
FFT_RULES = {n: ("fft", _CAST, RuntimeError) for n in """fft fft2 fftn hfft hfft2 hfftn ifft ifft2 ifftn ihfft
    ihfft2 ihfftn irfft irfft2 irfftn rfft rfft2 rfftn""".split()}
FFT_RULES.update({n: ("factory", None, RuntimeError) for n in ("fftfreq", "rfftfreq")})

OUT_FUNCTIONS = set(RULES)


# ---------------------------------------------------------------- the protocol

def _names(res, out):
    return dict(R=_type_name(res), O=_type_name(out),
                r=_CPP.get(res.name, res.name), o=_CPP.get(out.name, out.name))


def _check_dtype(name, rule, res, out, extra):
    kind, msg, exc = rule
    if kind == "heaviside" and out._category == 3 and res is not out:   # complex out
        msg = "heaviside is not yet implemented for complex tensors."
    elif kind == "fft" and res._category == 3 and out._category != 3:
        msg = "{name} expects a complex output tensor, but got {O}"
    elif kind == "diag" and not _can_cast(res, out):
        msg = "diag: result type {R} can't be cast to the desired out= type {O}"
    castable = _can_cast(res, out)
    ok = {"cast": castable, "fft": castable, "bool": out is D.bool, "any": True,
          "dtype": True}.get(kind, res is out)
    if not ok:
        raise exc((msg or _CAST).format(name=name, **_names(res, out), **extra))


def _requires_grad(args, kwargs):
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, Tensor):
            if a._requires_grad:
                return True
        elif isinstance(a, (list, tuple)):
            if any(isinstance(t, Tensor) and t._requires_grad for t in a):
                return True
    return False


def _shape_str(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _write(out, result):
    """Resize `out` to the result's shape if needed, then copy the values into it."""
    from ..autograd.grad_mode import no_grad
    shape = tuple(result._data.shape)
    if tuple(out._data.shape) != shape:
        if out._data.size != 0:  # (stacklevel: the user's line, through wrapper or an op's _out)
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{_shape_str(out._data.shape)}, which does not match the required output shape "
                f"{_shape_str(shape)}. This behavior is deprecated, and in a future PyTorch "
                f"release outputs will not be resized unless they have zero elements. You can "
                f"explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
                f"t.resize_(0).", UserWarning, stacklevel=3)
        out._data = xp_of(out._data).empty(shape, dtype=out._data.dtype)
    with no_grad():
        out.copy_(result)
    return out


_OVERLAP_SELF = ("unsupported operation: more than one element of the written-to tensor refers "
                 "to a single memory location. Please clone() the tensor before performing the "
                 "operation.")
_OVERLAP_INPUT = ("unsupported operation: some elements of the input tensor and the written-to "
                  "tensor refer to a single memory location. Please clone() the tensor before "
                  "performing the operation.")
# ops whose out may not touch an input at all (ATen's assert_no_overlap); the others refuse a
# partial overlap only (TensorIterator's: out=input itself is fine)
_NO_OVERLAP = frozenset("gather index_select take masked_select kthvalue".split())


def _check_overlap(name, o, r, args, kwargs):
    """PyTorch's 'unsupported operation' errors for an out tensor that overlaps itself (an
    expanded tensor: when it is not resized) or an input."""
    a = o._data
    xp = xp_of(a)
    if any(st == 0 and n > 1 for st, n in zip(a.strides, a.shape)):
        raise RuntimeError(_OVERLAP_SELF)
    n = r._data.size
    if tuple(a.shape) != tuple(r._data.shape) and n and a.flags.c_contiguous:
        # (PyTorch resizes out in place: when its storage holds the new size from out's
        # offset, the result lands there, over whatever else that storage holds)
        root, b = a, a
        while getattr(b, "base", None) is not None:    # (the memory's owner, through views)
            b = b.base
            if type(b) is type(a):
                root = b
        lo = data_ptr(root)
        start = data_ptr(a)
        if start + n * a.itemsize <= lo + root.nbytes:
            a = xp.lib.stride_tricks.as_strided(a, (n,), (a.itemsize,)) \
                if hasattr(xp, "lib") else a
    if not a.size:
        return
    for t in list(args) + list(kwargs.values()):
        if not isinstance(t, Tensor) or t is o or not t._data.size:
            if isinstance(t, Tensor) and t is o and name in _NO_OVERLAP:
                raise RuntimeError(_OVERLAP_INPUT)
            continue
        b = t._data
        if type(b) is not type(a) or not xp.may_share_memory(a, b):
            continue
        same = data_ptr(a) == data_ptr(b) and a.shape == b.shape and a.strides == b.strides
        if name in _NO_OVERLAP or not same:
            raise RuntimeError(_OVERLAP_INPUT)


def _out_tensors(name, out, n):
    if n == 1:
        if not isinstance(out, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
        return (out,)
    if not isinstance(out, (tuple, list)) or not all(isinstance(t, Tensor) for t in out):
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not "
                        f"{type(out).__name__}")
    if len(out) != n:
        raise TypeError(f"{name}(): argument 'out' must be tuple of {n} Tensors")
    return tuple(out)


def _with_out(fn, name, rule):
    kind = rule[0]

    @functools.wraps(fn)
    def wrapper(*args, out=None, **kwargs):
        if out is None:
            try:
                if _HUB[0] is not None:  # (a profiler is active: Note [Profiler hooks])
                    return _HUB[0].call(name, fn, args, kwargs)
                return fn(*args, **kwargs)
            except Exception as e:  # PyTorch's argument errors, worked out only now
                r = _argcheck.tf_retry(name, wrapper, args, kwargs)
                if r is not _argcheck._NO_DISPATCH:
                    return r
                moved = _argcheck.number_self_moved(name, args, kwargs)
                if moved is not None:
                    return wrapper(*moved[0], **moved[1])
                renamed = None if name in _argcheck.PYTHON_FUNCTIONS else \
                    _argcheck.numpy_names_moved(_argcheck.params_of(fn), kwargs)
                if renamed is not None:   # (sum(x, axis=0): PyTorch's NumPy names)
                    return wrapper(*args, **renamed)
                _argcheck.reraise(fn, name, args, kwargs, e)
                raise
        from ..autograd.grad_mode import is_grad_enabled
        if kind == "dtype" and isinstance(out, Tensor) and kwargs.get("dtype") is None:
            kwargs["dtype"] = out.dtype
        if kind == "factory":
            (o,) = _out_tensors(name, out, 1)
            dt = kwargs.get("dtype")
            if dt is not None and dt is not o.dtype:
                raise RuntimeError(f"dtype {_type_name(dt)} does not match dtype of out "
                                   f"parameter ({_type_name(o.dtype)})")
            kwargs["dtype"] = o.dtype
            kwargs.pop("requires_grad", None)
            return _write(o, fn(*args, **kwargs))
        if is_grad_enabled() and (_requires_grad(args, kwargs) or (
                isinstance(out, Tensor) and out._requires_grad) or (
                isinstance(out, (tuple, list)) and any(
                    isinstance(t, Tensor) and t._requires_grad for t in out))):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                               f"automatic differentiation, but one of the arguments requires "
                               f"grad.")
        if name in _NEEDS_DIM and len(args) < 2 and "dim" not in kwargs:
            raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
        result = fn(*args, **kwargs)
        results = tuple(result) if isinstance(result, tuple) else (result,)
        outs = _out_tensors(name, out, len(results))
        extra = {"flag": kwargs.get("out_int32", False)}
        for i, (o, r) in enumerate(zip(outs, results)):
            # the first output follows the op's rule; indices and the like must match exactly
            _check_dtype(name, rule if i == 0 else ("same", _EXACT, RuntimeError),
                         r.dtype, o.dtype, extra)
        for o, r in zip(outs, results):
            _check_overlap(name, o, r, args, kwargs)
        for o, r in zip(outs, results):
            _write(o, r)
        if len(outs) == 1:
            return outs[0]
        from .. import return_types
        fields = getattr(result, "_fields", None) or tuple(f"out{i}" for i in range(len(outs)))
        return return_types.make(name + "_out", fields)(*outs)
    wrapper._ndgrad_out = True
    op = getattr(fn, "_op", None)
    if op is not None and getattr(op, "fn", None) is fn:
        # a defop function: without out= call apply itself, as fn does (one frame less per
        # call, so the error site is found right above; bench W1)
        from . import _registry
        general, apply, vmap = wrapper, _registry.apply, _registry._VMAP

        @functools.wraps(fn)
        def wrapper(*args, out=None, **kwargs):
            if out is None:
                if vmap[0] is not None:
                    return vmap[0](op, args, kwargs)
                try:
                    return apply(op, args, kwargs)
                except Exception as e:  # PyTorch's argument errors, worked out only now
                    _argcheck.reraise(fn, name, args, kwargs, e)
                    raise
            return general(*args, out=out, **kwargs)
        wrapper._ndgrad_out = True
    return wrapper


def _no_out(fn, name):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if "out" in kwargs:
            raise TypeError(f"{name}() got an unexpected keyword argument 'out'")
        try:
            if _HUB[0] is not None:  # (a profiler is active: Note [Profiler hooks])
                return _HUB[0].call(name, fn, args, kwargs)
            return fn(*args, **kwargs)
        except Exception as e:  # PyTorch's argument errors, worked out only now
            _argcheck.reraise(fn, name, args, kwargs, e)
            raise
    return wrapper


_MADE = {}


def install(namespace, rules=None, default=("cast", _CAST, RuntimeError)):
    """Wrap each function of `namespace` (a module's dict) that PyTorch gives an out=."""
    rules = RULES if rules is None else rules
    names = set(rules) if rules else {n for n, v in namespace.items()
                                     if callable(v) and not n.startswith("_")
                                     and not isinstance(v, type)}
    made = _MADE   # aliases across namespaces (psi/digamma, special.gammaln/lgamma) stay one
    # object; at the top level each name has its own wrapper (clip is not clamp, as in PyTorch)
    for n in sorted(names):
        fn = namespace.get(n)
        if fn is None or not callable(fn) or isinstance(fn, type) or \
                getattr(fn, "_ndgrad_out", False):
            continue
        rule = rules.get(n, default) if rules else default
        key = (id(fn), rule)
        if rules is RULES:  # top level: one wrapper per name, so argument errors say that name
            named = (id(fn), rule, n)
            if named not in made:
                made[named] = _with_out(fn, n, rule)
            made.setdefault(key, made[named])  # (what the other namespaces share)
            namespace[n] = made[named]
            continue
        if key not in made:
            made[key] = _with_out(fn, n, rule)
        namespace[n] = made[key]
    if rules is RULES:
        for n in NO_OUT:
            fn = namespace.get(n)
            if fn is not None and callable(fn) and not getattr(fn, "_ndgrad_out", False):
                w = _no_out(fn, n)
                w._ndgrad_out = True
                namespace[n] = w
