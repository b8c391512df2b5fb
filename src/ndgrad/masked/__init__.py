"""torch.masked: reductions and normalizations that see only the elements a boolean mask
selects (strided tensors). Each replaces the masked-out elements with its reduction's identity
(0 for sum, 1 for prod, -inf for amax and softmax, ...) and runs the plain op, as PyTorch's
torch/masked/_ops.py does, so the gradients are the plain ops' (zero at masked-out elements).
mean, var and std count the selected elements; a fully masked-out slice gives nan.
"""
import builtins
import math

from .. import _dtype as D
from .._tensor import Tensor
from ..ops import where as _where_op

__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax",
           "logaddexp", "logsumexp", "mean", "median", "norm", "normalize", "prod", "softmax",
           "softmin", "std", "sum", "var"]

_SMALL_INTS = frozenset((D.uint8, D.bool, D.int8, D.int16, D.int32))


def _identity(op, input, ord=2.0):
    """The reduction identity that replaces the masked-out elements (None: there is none)."""
    dt = input.dtype
    floating = dt.is_floating_point
    if op in ("sum", "cumsum", "norm"):
        return math.inf if op == "norm" and ord == -math.inf else 0
    if op in ("prod", "cumprod"):
        return 1
    if op in ("amax", "argmax", "logaddexp", "logsumexp"):
        return -math.inf if floating or dt.is_complex else D.iinfo(dt).min
    if op in ("amin", "argmin"):
        return math.inf if floating else D.iinfo(dt).max
    if op == "median":
        return math.nan
    raise NotImplementedError(f"identity of {op} on {dt} input")


def _canonical_dim(dim, ndim):
    """dim as a sorted tuple of non-negative dims (None or (): all of them)."""
    if dim == () or dim is None:
        return tuple(range(ndim))
    ndim = builtins.max(ndim, 1)
    out = []
    for d in ((dim,) if isinstance(dim, int) else dim):
        if d in out:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                             f"{ndim - 1}], but got {d})")
        out.append(d % ndim)
    return tuple(sorted(out))


def _input_mask(input, mask):
    """The mask broadcast to the input's shape, as bool."""
    if mask.shape != input.shape:
        if mask.ndim > input.ndim:
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality "
                             "higher than of the input)")
        mask = mask.clone().broadcast_to(input.shape)
    return mask.to(dtype=D.bool)


def _masked(op, input, mask, *args):
    """input with its masked-out elements replaced by op's identity."""
    if mask is None:
        return input
    fill = _identity(op, input, *args)
    from .._creation import tensor
    return _where_op(_input_mask(input, mask), input,
                     tensor(fill, dtype=input.dtype, device=input.device))


def _sum_dtype(input, dtype):
    if dtype is not None:
        return dtype
    return D.int64 if input.dtype in _SMALL_INTS else input.dtype


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The sum of the selected elements over dim (all dims when None)."""
    dtype = _sum_dtype(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    return _masked("sum", input, mask).sum(dims, bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The product of the selected elements over dim (all dims when None)."""
    dtype = _sum_dtype(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    result = _masked("prod", input, mask).to(dtype=dtype)
    for d in reversed(dims):
        result = result.prod(dim=d, keepdim=bool(keepdim))
    return result


def cumsum(input, dim, *, dtype=None, mask=None):
    """The cumulative sum along dim, masked-out elements counting 0."""
    dtype = dtype or input.dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _masked("sum", input, mask).cumsum(d, dtype=dtype).to(dtype=dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    """The cumulative product along dim, masked-out elements counting 1."""
    dtype = dtype or input.dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _masked("prod", input, mask).cumprod(d, dtype=dtype).to(dtype=dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The largest selected element over dim (-inf, or the dtype's minimum, where none is)."""
    dtype = dtype or input.dtype
    m = _masked("amax", input, mask)
    return m.amax(_canonical_dim(dim, m.ndim), bool(keepdim)).to(dtype=dtype)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The smallest selected element over dim (inf, or the dtype's maximum, where none is)."""
    dtype = dtype or input.dtype
    m = _masked("amin", input, mask)
    return m.amin(_canonical_dim(dim, m.ndim), bool(keepdim)).to(dtype=dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The index of the largest selected element along dim."""
    dtype = dtype or input.dtype
    return _masked("argmax", input, mask).argmax(dim, bool(keepdim)).to(dtype=dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The index of the smallest selected element along dim."""
    dtype = dtype or input.dtype
    return _masked("argmin", input, mask).argmin(dim, bool(keepdim)).to(dtype=dtype)


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The mean of the selected elements over dim (nan where none is)."""
    source = "Optional"
    if dtype is None:
        dtype, source = input.dtype, "Input"
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either a "
                         f"floating point or complex dtype. Got: {dtype}")
    from .._creation import ones
    if mask is None:
        count = sum(ones(input.shape, dtype=D.int64, device=input.device), dim, keepdim=keepdim)
        total = sum(input, dim, keepdim=keepdim, dtype=dtype)
    else:
        inmask = _input_mask(input, mask)
        count = inmask.sum(dim=_canonical_dim(dim, input.ndim), keepdim=bool(keepdim))
        total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask)
    return total / count


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    """The median of the selected elements along dim (nanmedian of the masked input)."""
    dtype = dtype or input.dtype
    d = _canonical_dim(dim, input.ndim)[0]
    is_float = input.dtype.is_floating_point
    if not is_float:
        input = input.to(dtype=D.float32)
    output = _masked("median", input, mask).nanmedian(d, keepdim).values
    if is_float:
        return output
    if not output.isnan().any():
        return output.to(dtype=dtype)
    raise ValueError("masked median expects no fully masked out rows if dtype is not floating "
                     "point")


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """log(sum(exp(x))) of the selected elements over dim (-inf where none is)."""
    dtype = dtype or input.dtype
    dims = _canonical_dim(dim, input.ndim)
    return _masked("logsumexp", input, mask).logsumexp(dims, keepdim=keepdim).to(dtype=dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    """log(exp(input) + exp(other)), the masked-out elements of each counting -inf."""
    from ..ops import logaddexp as _logaddexp
    dtype = dtype or input.dtype
    return _logaddexp(_masked("logaddexp", input, input_mask),
                      _masked("logaddexp", other, other_mask)).to(dtype=dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The vector norm of the selected elements over dim."""
    from ..linalg import vector_norm
    dtype = dtype or input.dtype
    m = _masked("norm", input, mask, ord)
    return vector_norm(m, ord, _canonical_dim(dim, input.ndim), bool(keepdim), dtype=dtype)


def _std_var(input, dim, unbiased, correction_opt, keepdim, dtype, mask, take_sqrt):
    if unbiased is not None and correction_opt is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    correction = 1.0
    if unbiased is not None:
        correction = 1.0 if unbiased else 0.0
    if correction_opt is not None:
        correction = float(correction_opt)
    if dtype is None:
        dtype = input.dtype
        if not (dtype.is_floating_point or dtype.is_complex):
            dtype = D.float32
    compute = dtype if (dtype.is_floating_point or dtype.is_complex) else D.float32
    from .._creation import ones
    if mask is None:
        inmask = None
        count = sum(ones(input.shape, dtype=D.int64, device=input.device), dim, keepdim=True)
    else:
        inmask = _input_mask(input, mask)
        count = inmask.sum(dim=_canonical_dim(dim, input.ndim), keepdim=True)
    x = input - sum(input, dim, keepdim=True, dtype=dtype, mask=inmask) / count
    total = sum(x * x.conj(), dim, keepdim=keepdim, dtype=compute, mask=inmask)
    if not keepdim:
        count = count.reshape(total.shape)
    if correction != 0:
        count = (count.to(compute.to_real() if compute.is_complex else compute) - correction)
        count = count.maximum(count.new_zeros([]))
    output = (total / count).to(dtype=dtype)
    return output.sqrt() if take_sqrt else output


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    """The variance of the selected elements over dim (correction 1 by default)."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    """The standard deviation of the selected elements over dim."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


def softmax(input, dim, *, dtype=None, mask=None):
    """softmax along dim over the selected elements (masked-out ones get 0)."""
    from ..nn.functional import softmax as _softmax
    dtype = dtype or input.dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _softmax(_masked("amax", input, mask), d, dtype=dtype)


def log_softmax(input, dim, *, dtype=None, mask=None):
    """log_softmax along dim over the selected elements (masked-out ones get -inf)."""
    from ..nn.functional import log_softmax as _log_softmax
    dtype = dtype or input.dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _log_softmax(_masked("amax", input, mask), d, dtype=dtype)


def softmin(input, dim, *, dtype=None, mask=None):
    """softmin along dim over the selected elements (masked-out ones get 0)."""
    from ..nn.functional import softmin as _softmin
    dtype = dtype or input.dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _softmin(_masked("amin", input, mask), d, dtype=dtype)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    """input (masked-out elements 0) over the ord-norm of its selected elements along dim."""
    dtype = dtype or input.dtype
    masked = _masked("sum", input, mask)
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return masked / nrm.maximum(nrm.new_full([], eps))
