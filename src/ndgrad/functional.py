"""torch.* functions that live in torch/functional.py or are the ATen names of nn.functional ops.

The ATen ones keep their ATen signatures, which differ from nn.functional's:
torch.dropout(input, p, train), torch.embedding(weight, indices),
torch.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
cudnn_enabled). Everything is composed of ndgrad ops, so it is differentiable.
"""
import builtins

import numpy as np

from .nn import functional as F
from .nn.functional import (conv1d, conv2d, conv_transpose1d, conv_transpose2d,  # noqa: F401
                            avg_pool1d, adaptive_avg_pool1d, bilinear, cosine_similarity,
                            pairwise_distance, pixel_shuffle, rms_norm, conv3d,
                            conv_transpose3d, pixel_unshuffle, prelu, hardshrink)
from ._creation import zeros
from .ops._argcheck import argument_error as _argument_error
from ._tensor import Tensor, _wrap_dim
from . import _dtype as D
from .ops import cat, expand, install, meshgrid, stack, where
from .ops import broadcast_shapes as _broadcast_tensor_shapes

__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "avg_pool1d",
           "adaptive_avg_pool1d", "bilinear", "cosine_similarity", "pairwise_distance",
           "pixel_shuffle", "rms_norm", "dropout", "alpha_dropout", "batch_norm",
           "instance_norm", "layer_norm", "group_norm", "embedding", "max_pool1d", "max_pool2d",
           "detach", "broadcast_tensors", "cartesian_prod", "block_diag", "cdist", "dist", "diff",
           "quantile", "conv3d", "conv_transpose3d", "pixel_unshuffle", "prelu", "hardshrink",
           "max_pool3d", "constant_pad_nd"]


def dropout(input, p, train):
    return F.dropout(input, p, train)


def alpha_dropout(input, p, train):
    return F.alpha_dropout(input, p, train)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    return F.group_norm(input, num_groups, weight, bias, eps)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """ATen's embedding: weight first; a negative padding_idx means none."""
    return F.embedding(indices, weight, None if padding_idx < 0 else padding_idx)


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool3d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def constant_pad_nd(input, pad, value=0):
    """ATen's constant padding (negative pads crop), F.pad's "constant" mode; its own checks."""
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > input.dim():
        raise RuntimeError(
            "Length of pad should be no more than twice the number of dimensions of the input. "
            f"Pad length is {len(pad)}while the input has {input.dim()}dimensions.")
    return F.pad(input, pad, "constant", value)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool2d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def detach(input):
    return input.detach()


def broadcast_tensors(*tensors):
    """The tensors expanded to their common broadcast shape (views)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = _broadcast_tensor_shapes(*(t.shape for t in tensors))
    # as PyTorch: a tensor that already has the shape is returned itself, not a view of it
    return tuple(t if t.shape == shape else expand(t, shape) for t in tensors)


def cartesian_prod(*tensors):
    """Rows of every combination of the 1-d inputs (itertools.product order)."""
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError("Expect a 1D vector, but got shape " + str(list(t.shape)))
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], dim=1)


def block_diag(*tensors):
    """The inputs (scalars, vectors as rows, matrices) along the diagonal of one matrix."""
    mats = []
    for n, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {n} has {t.ndim} dimensions")
        mats.append(t.reshape(1, -1) if t.ndim < 2 else t)
    if not mats:
        return zeros(1, 0)
    from ._dtype import promote_types
    dt = mats[0].dtype
    for m in mats[1:]:
        dt = promote_types(dt, m.dtype)
    cols = sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        r, c = m.shape
        d = m.device
        pieces = [zeros(r, left, dtype=dt, device=d), m.to(dt),
                  zeros(r, cols - left - c, dtype=dt, device=d)]
        rows.append(cat(pieces, dim=1))
        left += c
    return cat(rows, dim=0)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """p-norm distance between each row of x1 and each row of x2 (batched over leading dims)."""
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError("X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return diff.norm(p, dim=-1)


def dist(input, other, p=2):
    """The p-norm of input - other (broadcast)."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):  # (`-` would take them)
        raise _argument_error("dist", ("input", "other"), input, other)
    d = input - other
    if d.dtype._category < 2:
        from .ops._inplace import _type_name
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {_type_name(d.dtype)} instead.")
    return d.norm(p)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """n-th forward difference along dim, after concatenating prepend and append (ATen's: with
    n=0 a copy of the input, prepend and append ignored)."""
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = dim + input.ndim if -input.ndim <= dim < 0 else dim
    for other in (prepend, append):
        if other is None:
            continue
        if other.ndim != input.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        for i in range(other.ndim):
            if i != d and other.shape[i] != input.shape[i]:
                raise RuntimeError(
                    "diff expects the shape of tensor to prepend or append to match that of "
                    f"input except along the differencing dimension; input.size({i}) = "
                    f"{input.shape[i]}, but got tensor.size({i}) = {other.shape[i]}")
    if n == 0:
        return input.clone()
    parts = [t for t in (prepend, input, append) if t is not None]
    x = cat(parts, dim) if len(parts) > 1 else input
    for _ in range(n):
        size = x.shape[dim]
        if size == 0:
            break
        x = x.narrow(dim, 1, size - 1) - x.narrow(dim, 0, size - 1) if x.dtype.name != "bool" \
            else x.narrow(dim, 1, size - 1) != x.narrow(dim, 0, size - 1)
    return x


_QUANTILE_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_args(input, q, interpolation):
    """quantile's and nanquantile's argument checks (PyTorch's messages): the list of q values
    and whether q was a 1-d tensor."""
    if not input.dtype.is_floating_point:
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError("quantile() q must be a scalar or 1D tensor")
        if q.dtype is not input.dtype:
            raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
        qs, vector = [float(v) for v in q.reshape(-1).tolist()], q.ndim == 1
    else:
        qs, vector = [float(q)], False
    for v in qs:
        if not 0 <= v <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {v}")
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if interpolation not in _QUANTILE_MODES:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    return qs, vector


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The q-th quantiles along dim (of the flattened input when dim is None), interpolated
    between the sorted neighbours; a 1-d q adds a leading dim. Differentiable through sort and,
    for a tensor q, through the interpolation weights (ATen's composite quantile)."""
    return _quantile(input, q, dim, keepdim, interpolation, False)


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    """ATen's quantile_compute on ndgrad ops: ranks q * (n - 1) (n the non-NaN count for
    nanquantile; a slice holding a NaN takes its last, NaN, element for quantile), rounded as
    the mode says, the sorted values at the rank's floor lerped toward its ceiling by the
    fractional part (0.5 for midpoint)."""
    from ._creation import tensor
    qs, vector = _quantile_args(input, q, interpolation)
    if dim is None:
        x = input.reshape(-1)
        out_shape = (1,) * input.ndim if keepdim else ()
    else:
        d = _wrap_dim(dim, max(input.ndim, 1))
        x = input.reshape(1) if input.ndim == 0 else input.movedim(d, -1)
        out_shape = tuple(1 if i == d else s for i, s in enumerate(input.shape)) if keepdim \
            else tuple(s for i, s in enumerate(input.shape) if i != d)
    srt = x.sort(-1).values                              # (..., n), NaNs last
    n = srt.shape[-1]
    qt = q.reshape(-1) if isinstance(q, Tensor) else \
        tensor(qs, dtype=input.dtype, device=input.device)
    nq = qt.shape[0]
    ranks = qt.reshape((nq,) + (1,) * srt.ndim)          # (Q, 1, ..., 1)
    srt = srt.unsqueeze(0).expand((nq,) + tuple(srt.shape))
    if ignore_nan:
        count = (~srt.isnan()).sum(-1, keepdim=True).to(input.dtype)
        ranks = ranks * (count - 1)
        ranks = ranks.masked_fill(ranks < 0, 0)
    else:
        nan = srt.isnan().any(-1, keepdim=True)
        ranks = (ranks * (n - 1)).expand(tuple(nan.shape)).masked_fill(nan, n - 1)
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()
    below = ranks.long()
    res = srt.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        weights = ranks.new_full(tuple(ranks.shape), 0.5) if interpolation == "midpoint" \
            else ranks - below
        res = res.lerp(srt.gather(-1, ranks.ceil().long()), weights)
    res = res.reshape((nq,) + out_shape)
    return res if vector else res.squeeze(0)


install({"quantile": quantile})


# ---------------------------------------------------------------- torch.* utilities and
# deprecated aliases that PyTorch programs still use

def isin(elements=None, test_elements=None, *, assume_unique=False, invert=False,
         element=None, test_element=None):
    """Whether each element of `elements` is in `test_elements` (bool tensor, no gradient);
    element= / test_element=: PyTorch's names of a number there, by keyword."""
    if element is not None or test_element is not None:
        from .ops.shape import _overloaded
        elements = _overloaded("isin", elements, element=element)
        test_elements = _overloaded("isin", test_elements, test_element=test_element)
    missing = [n for n, v in (("elements", elements), ("test_elements", test_elements))
               if v is None]
    if missing:
        from .ops._argcheck import _missing
        raise _missing("isin", missing)
    from ._backend import xp_of
    from ._tensor import _make
    from ._creation import as_tensor
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments - at least one of "
                        "'elements' and 'test_elements' must be a Tensor")
    dev = (elements if isinstance(elements, Tensor) else test_elements).device
    e = elements if isinstance(elements, Tensor) else as_tensor(elements, device=dev)
    t = test_elements if isinstance(test_elements, Tensor) else as_tensor(test_elements,
                                                                          device=dev)
    xp = xp_of(e._data)
    return _make(xp.asarray(xp.isin(e._data, t._data, assume_unique=assume_unique,
                                    invert=invert)))


def unravel_index(indices, shape):
    """The coordinates (a tuple of int64 tensors) of flat `indices` in an array of `shape`."""
    from ._tensor import _make
    from ._backend import xp_of
    from ._creation import as_tensor
    if not isinstance(indices, Tensor):
        indices = as_tensor(indices)
    if indices.dtype.is_floating_point or indices.dtype.is_complex or str(indices.dtype) == \
            "torch.bool":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(tuple(shape)))
    flat = indices._data.astype("int64")
    coords = []
    for size in reversed(shape):
        coords.append(flat % size if size else flat * 0)
        flat = flat // size if size else flat
    xp = xp_of(flat)
    return tuple(_make(xp.asarray(c, dtype=np.int64)) for c in reversed(coords))  # (0-d: scalars)


def combinations(input, r=2, with_replacement=False):
    """All length-r combinations of the elements of a 1-d tensor (rows), as itertools does."""
    import itertools
    from ._creation import tensor, empty
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return empty(0, dtype=input.dtype, device=input.device)
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    idx = list(pick(range(input.shape[0]), r))
    if not idx:         # (an empty selection of input: its graph is kept, as PyTorch's)
        return input[empty(0, r, dtype=D.int64, device=input.device)]
    return input[tensor(idx, device=input.device)]


def lu(A, pivot=True, get_infos=False, out=None):
    """Deprecated torch.lu(A, pivot=True, get_infos=False): Tensor.lu's (LU, pivots[, infos])."""
    from .ops.tensor_api import _lu
    if not isinstance(A, Tensor):   # (PyTorch's Python wrapper calls _lu_with_info)
        raise TypeError(f"_lu_with_info(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(A).__name__}")
    return _lu(A, pivot, get_infos)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None,
                  requires_grad=False):
    from ._creation import tensor
    from . import _dtype
    return tensor(float(s) if dtype is None else s, dtype=dtype or _dtype.get_default_dtype(),
                  device=device, requires_grad=requires_grad)


def get_default_device():
    from ._backend import device, CUDA0
    from ._creation import default_device
    d = default_device()
    if d is None:
        return device("cpu")
    d.xp  # noqa: B018  (without the device: PyTorch's "Torch not compiled with CUDA enabled")
    return CUDA0 if d.index is None else d


def set_default_device(device):
    """The device of factory calls without one (thread-local, as PyTorch's)."""
    from ._creation import set_default_device as set_
    set_(device)


_warned = set()


def _warn_once(key, msg):
    if key not in _warned:
        import warnings
        _warned.add(key)
        warnings.warn(msg, stacklevel=3)


def svd(input, some=True, compute_uv=True, *, out=None):
    """Deprecated torch.svd: (U, S, V) with V = Vh^H (linalg.svd returns Vh)."""
    from . import linalg
    from .return_types import make
    from ._creation import zeros as _zeros
    svd_type = make("svd", ("U", "S", "V"))
    if not compute_uv:
        S = linalg.svdvals(input)
        m, n = input.shape[-2], input.shape[-1]
        batch = tuple(input.shape[:-2])
        return svd_type(_zeros(batch + (m, m), dtype=input.dtype, device=S.device), S,
                        _zeros(batch + (n, n), dtype=input.dtype, device=S.device))
    U, S, Vh = linalg.svd(input, full_matrices=False)
    V = Vh.mH
    if not some:
        # as PyTorch: the extra columns of the complete bases carry no gradient
        from .autograd.grad_mode import no_grad
        k = S.shape[-1]
        with no_grad():
            Uf, _, Vhf = linalg.svd(input.detach(), full_matrices=True)
        U = cat([U, Uf[..., k:]], -1)
        V = cat([V, Vhf.mH[..., k:]], -1)
    return svd_type(U, S, V)


def qr(input, some=True, *, out=None):
    """Deprecated torch.qr(A, some): linalg.qr(A, 'reduced' if some else 'complete')."""
    from . import linalg
    from .return_types import make
    _warn_once("qr", "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in "
                     "a future PyTorch release.\nThe boolean parameter 'some' has been replaced "
                     "with a string parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be "
                     "replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if some else "
                     "'complete')")
    Q, R = linalg.qr(input, "reduced" if some else "complete")
    return make("qr", ("Q", "R"))(Q, R)


def chain_matmul(*matrices, out=None):
    """Deprecated torch.chain_matmul: the product of the matrices, left to right."""
    _warn_once("chain_matmul", "torch.chain_matmul is deprecated and will be removed in a future "
                               "PyTorch release. Use torch.linalg.multi_dot instead, which "
                               "accepts a list of two or more tensors rather than multiple "
                               "parameters.")
    if len(matrices) == 0:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for i, m in enumerate(matrices):  # (PyTorch's parser: a tuple of Tensors)
        if not isinstance(m, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(m).__name__}")
    out = matrices[0]
    for m in matrices[1:]:
        out = out.mm(m)
    return out


def _vmap(*args, **kwargs):
    from .func import vmap
    return vmap(*args, **kwargs)


vmap = _vmap
vmap.__name__ = "vmap"
__all__ += ["isin", "unravel_index", "combinations", "scalar_tensor", "get_default_device",
            "set_default_device", "svd", "qr", "chain_matmul", "vmap", "lu"]
install({"svd": svd, "qr": qr})


def broadcast_shapes(*shapes):
    """torch.broadcast_shapes(*shapes) -> Size: the shape the given shapes broadcast to, with
    PyTorch's errors (its Python implementation, torch._refs._broadcast_shapes)."""
    from ._tensor import Size
    shapes = tuple((x,) if isinstance(x, int) else x for x in shapes if x is not None)
    if not shapes:
        return Size([])
    for shape in shapes:
        if not isinstance(shape, (tuple, list)):
            raise RuntimeError("Input shapes should be of type ints, a tuple of ints, or a list "
                               f"of ints, got {shape}")
    common = [1] * builtins.max(len(s) for s in shapes)
    for arg_idx, shape in enumerate(shapes):
        for idx in range(-1, -1 - len(shape), -1):
            if shape[idx] == common[idx]:
                continue
            if common[idx] == 1:
                if shape[idx] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[idx] = shape[idx]
            if shape[idx] != 1 and common[idx] != shape[idx]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {shape[idx]} at {idx}! "
                    f"Mismatching argument at index {arg_idx} had {shape}; but expected shape "
                    f"should be broadcastable to {common}")
    return Size(common)


__all__ += ["broadcast_shapes"]
