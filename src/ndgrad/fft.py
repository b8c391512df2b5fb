"""torch.fft: discrete Fourier transforms with PyTorch's gradients.

    >>> x = ndgrad.randn(8, dtype=ndgrad.float64, requires_grad=True)
    >>> ndgrad.fft.irfft(ndgrad.fft.rfft(x) * 2, n=8).sum().backward()

Every public transform is PyTorch's composition of three primitives, each a defop whose
derivative is written with the others (so double backward works), as in PyTorch's
derivatives.yaml:

- `_fft_c2c(x, dim, norm, forward)`: complex -> complex; its adjoint is the transform in the
  other direction with the same scaling.
- `_fft_r2c(x, dim, norm, onesided)`: real -> complex (forward sign); onesided keeps the last
  dim's first n // 2 + 1 bins. Its adjoint zero-fills the dropped bins, runs the inverse c2c and
  keeps the real part.
- `_fft_c2r(x, dim, norm, last_dim_size)`: Hermitian complex -> real (inverse sign). Its adjoint
  is the onesided r2c with the bins that stand for two (1 .. n - n // 2 - 1) doubled: the
  Hermitian-symmetry bookkeeping that is easy to get wrong.

`norm` in the primitives is the scaling applied ("none", "sqrt" or "n"); the public `norm`
("backward", "ortho", "forward") maps to it by direction, as PyTorch's norm_from_string. Signals
are zero-padded or trimmed to `n`/`s` first (differentiable narrow/cat).
"""
from . import _dtype as D
from ._backend import numpy as _np, xp_of
from ._tensor import Tensor, _wrap_dim, _make
from .ops._registry import defop
from .ops.complex import conj, real
from .ops.shape import cat, narrow, roll

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift", "Tensor"]

_NP_FORWARD = {"none": "backward", "sqrt": "ortho", "n": "forward"}  # numpy's name, forward sign
_NP_INVERSE = {"none": "forward", "sqrt": "ortho", "n": "backward"}  # ... inverse sign


def _complex_np(d):
    return {"float32": _np.complex64, "float64": _np.complex128}.get(
        d.name if hasattr(d, "name") else _np.dtype(d).name, None)


def _c2c_fwd(xp, self, dim, norm, forward):
    if not dim:
        return self.copy()
    f = xp.fft.fftn if forward else xp.fft.ifftn
    return f(self, axes=dim, norm=(_NP_FORWARD if forward else _NP_INVERSE)[norm]).astype(
        self.dtype, copy=False)


def _r2c_fwd(xp, self, dim, norm, onesided):
    cd = _complex_np(self.dtype)
    if not dim:
        return self.astype(cd)
    f = xp.fft.rfftn if onesided else xp.fft.fftn
    return f(self, axes=dim, norm=_NP_FORWARD[norm]).astype(cd, copy=False)


def _c2r_fwd(xp, self, dim, norm, last_dim_size):
    s = [self.shape[d] for d in dim[:-1]] + [last_dim_size]
    r = xp.fft.irfftn(self, s=s, axes=dim, norm=_NP_INVERSE[norm])
    return r.astype(self.real.dtype, copy=False)


def _c2c_grad(grad, dim, norm, forward):
    return _fft_c2c(grad, dim, norm, not forward)


def _r2c_grad(grad, self_shape, dim, norm, onesided):
    if onesided:
        last = dim[-1]
        missing = self_shape[last] - grad.shape[last]
        if missing > 0:  # the bins the onesided transform dropped get zero gradient
            shape = list(grad.shape)
            shape[last] = missing
            from ._creation import zeros
            grad = cat([grad, zeros(shape, dtype=grad.dtype, device=grad.device)], last)
    return real(_fft_c2c(grad, dim, norm, False))


def _c2r_grad(grad, dim, norm, last_dim_size):
    g = _fft_r2c(grad, dim, norm, True)
    last = dim[-1]
    m = g.shape[last]
    double = last_dim_size - m  # bins 1 .. n - (n // 2 + 1) stand for themselves and a mirror
    if double > 0:
        w = xp_of(grad._data).ones(m, dtype=grad._data.dtype)
        w[1:1 + double] = 2
        g = g * _make(w.reshape((m,) + (1,) * (g.ndim - 1 - last)))
    return g


_fft_c2c = defop("fft_c2c", _c2c_fwd, node_name="FftC2CBackward0", self=_c2c_grad,
                 jvp="linear")
_fft_r2c = defop("fft_r2c", _r2c_fwd, node_name="FftR2CBackward0", self=_r2c_grad,
                 jvp="linear")
_fft_c2r = defop("fft_c2r", _c2r_fwd, node_name="FftC2RBackward0", self=_c2r_grad,
                 jvp="linear")


# ---------------------------------------------------------------- argument handling

def _norm(norm, forward):
    if norm is None or norm == "backward":
        return "none" if forward else "n"
    if norm == "forward":
        return "n" if forward else "none"
    if norm == "ortho":
        return "sqrt"
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _type_name(d):
    from .ops._inplace import _type_name as tn
    return tn(d)


def _as_float_or_complex(x, name=None, real_only=False):
    if not isinstance(x, Tensor):
        raise TypeError(f"fft_{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    d = x.dtype
    if d is D.float16 or (d.is_complex is False and d.itemsize == 2 and d.is_floating_point):
        raise RuntimeError("Unsupported dtype Half")
    if real_only and d.is_complex:
        raise RuntimeError(f"{name} expects a real input tensor, but got {_type_name(d)}")
    if not (d.is_floating_point or d.is_complex):
        x = x.to(D.get_default_dtype())
    return x


def _to_complex(x):
    return x if x.dtype.is_complex else x.to(x.dtype.to_complex())


def _check_n(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _resize(x, dim, n):
    """x zero-padded or trimmed to n along dim."""
    size = x.shape[dim]
    if n == size:
        return x
    if n < size:
        return narrow(x, dim, 0, n)
    shape = list(x.shape)
    shape[dim] = n - size
    from ._creation import zeros
    return cat([x, zeros(shape, dtype=x.dtype, device=x.device)], dim)


def _one_dim(x, dim):
    if x.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, x.ndim)


def _shape_and_dims(x, s, dim):
    """PyTorch's canonicalize_fft_shape_and_dim_args: (sizes, dims), both tuples."""
    nd = x.ndim
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = tuple(_one_dim(x, d) for d in dims)   # (a 0-d input: PyTorch's IndexError)
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = (s,) if isinstance(s, int) else tuple(s)
        if dim is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > nd:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {nd} "
                               "dimensions.")
        if dim is None:
            dims = tuple(range(nd - len(s), nd))
        s = tuple(x.shape[d] if n == -1 else n for n, d in zip(s, dims))
        for n in s:
            _check_n(n)
    else:
        if dim is None:
            dims = tuple(range(nd))
        s = tuple(x.shape[d] for d in dims)
    return s, dims


def _resize_all(x, s, dims):
    for n, d in zip(s, dims):
        x = _resize(x, d, n)
    return x


_MSG_NAME = {"fft2": "fftn", "ifft2": "fftn", "ifftn": "fftn", "rfft2": "rfftn",
             "irfft2": "irfftn", "hfft2": "hfftn", "ihfft2": "ihfftn"}


def _out(r, out):
    """The out= protocol (ndgrad/ops/_out.py) with the FFTs' own messages: PyTorch names the
    primitive (_fft_r2c, _fft_c2c, _fft_c2r) in the autograd refusal and the public function in
    the dtype check; the result is written into `out` in place."""
    if out is None:
        return r
    import sys
    from .ops._out import _write
    from .ops._inplace import _type_name
    caller = sys._getframe(1).f_code.co_name
    name = _MSG_NAME.get(caller, caller)
    if r.dtype.is_complex and not out.dtype.is_complex:
        raise RuntimeError(f"{name} expects a complex output tensor, but got "
                           f"{_type_name(out.dtype)}")
    if not r.dtype.is_complex and not out.dtype.is_floating_point:
        raise RuntimeError(f"{name} expects a floating point output tensor, but got "
                           f"{_type_name(out.dtype)}")
    if r.requires_grad or out.requires_grad:
        prim = {"FftR2CBackward0": "_fft_r2c", "FftC2CBackward0": "_fft_c2c",
                "FftC2RBackward0": "_fft_c2r"}.get(type(r.grad_fn).__name__, "_fft_c2c")
        raise RuntimeError(f"{prim}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    return _write(out, r)


# ---------------------------------------------------------------- complex-to-complex

def _c2c_or_r2c(x, s, dims, norm, forward, nd=False):
    for n in s:
        _check_n(n)
    x = _resize_all(x, s, dims)
    if nd:  # (fftn/ifftn promote a real input to complex; fft/ifft use a two-sided r2c)
        x = _to_complex(x)
    if x.dtype.is_complex:
        return _fft_c2c(x, dims, _norm(norm, forward), forward)
    r = _fft_r2c(x, dims, _norm(norm, forward), False)
    return r if forward else conj(r)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """torch.fft.fft: the 1-d discrete Fourier transform along `dim`."""
    x = _as_float_or_complex(input, "fft")
    d = _one_dim(x, dim)
    return _out(_c2c_or_r2c(x, (x.shape[d] if n is None else n,), (d,), norm, True), out)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """torch.fft.ifft: the 1-d inverse discrete Fourier transform along `dim`."""
    x = _as_float_or_complex(input, "ifft")
    d = _one_dim(x, dim)
    return _out(_c2c_or_r2c(x, (x.shape[d] if n is None else n,), (d,), norm, False), out)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """torch.fft.fftn: the n-d transform over `dim` (all dims by default)."""
    x = _as_float_or_complex(input, "fftn")
    s, dims = _shape_and_dims(x, s, dim)
    return _out(_c2c_or_r2c(x, s, dims, norm, True, True), out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """torch.fft.ifftn: the n-d inverse transform over `dim` (all dims by default)."""
    x = _as_float_or_complex(input, "ifftn")
    s, dims = _shape_and_dims(x, s, dim)
    return _out(_c2c_or_r2c(x, s, dims, norm, False, True), out)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """torch.fft.fft2: fftn over the last two dims."""
    return fftn(input, s, dim, norm, out=out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """torch.fft.ifft2: ifftn over the last two dims."""
    return ifftn(input, s, dim, norm, out=out)


# ---------------------------------------------------------------- real-to-complex (onesided)

def _rfftn(x, s, dims, norm, name, forward):
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    for n in s:
        _check_n(n)
    x = _resize_all(x, s, dims)
    if forward:
        return _fft_r2c(x, dims, _norm(norm, True), True)
    # ihfftn, as PyTorch: the last dim onesided (conj of the forward transform), then the
    # inverse c2c over the others
    r = conj(_fft_r2c(x, dims[-1:], _norm(norm, False), True))
    return _fft_c2c(r, dims[:-1], _norm(norm, False), False) if len(dims) > 1 else r


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """torch.fft.rfft: the transform of a real signal, onesided (n // 2 + 1 bins)."""
    x = _as_float_or_complex(input, "rfft", real_only=True)
    d = _one_dim(x, dim)
    return _out(_rfftn(x, (x.shape[d] if n is None else n,), (d,), norm, "rfft", True), out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """torch.fft.rfftn: the n-d transform of a real signal, onesided in the last dim."""
    x = _as_float_or_complex(input, "rfftn", real_only=True)
    s, dims = _shape_and_dims(x, s, dim)
    return _out(_rfftn(x, s, dims, norm, "rfftn", True), out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """torch.fft.rfft2: rfftn over the last two dims."""
    x = _as_float_or_complex(input, "rfft2", real_only=True)
    s, dims = _shape_and_dims(x, s, dim)
    return _out(_rfftn(x, s, dims, norm, "rfft2", True), out)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """torch.fft.ihfft: the inverse of hfft, onesided: conj(rfft(input)) scaled as an ifft."""
    x = _as_float_or_complex(input, "ihfft", real_only=True)
    d = _one_dim(x, dim)
    return _out(_rfftn(x, (x.shape[d] if n is None else n,), (d,), norm, "ihfft", False), out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """torch.fft.ihfftn: the n-d inverse of hfftn, onesided in the last dim."""
    x = _as_float_or_complex(input, "ihfftn", real_only=True)
    s, dims = _shape_and_dims(x, s, dim)
    return _out(_rfftn(x, s, dims, norm, "ihfftn", False), out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """torch.fft.ihfft2: ihfftn over the last two dims."""
    x = _as_float_or_complex(input, "ihfft2", real_only=True)
    s, dims = _shape_and_dims(x, s, dim)
    return _out(_rfftn(x, s, dims, norm, "ihfft2", False), out)


# ---------------------------------------------------------------- complex-to-real (Hermitian)

def _c2r_shape(x, s, dim, name):
    """(sizes, dims, last_dim_size) for irfftn/hfftn: the last output size defaults to
    2 * (input size - 1)."""
    given = s
    s, dims = _shape_and_dims(x, s, dim) if (s is not None or dim is not None) else \
        _shape_and_dims(x, None, None)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    last = s[-1] if given is not None else 2 * (x.shape[dims[-1]] - 1)
    _check_n(last)
    s = s[:-1] + (last // 2 + 1,)
    return s, dims, last


def _c2r(x, s, dims, last, norm, forward, hermitian):
    x = _resize_all(_to_complex(x), s, dims)
    if hermitian:
        x = conj(x)
    return _fft_c2r(x, dims, _norm(norm, forward), last)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """torch.fft.irfft: the inverse of rfft; n output points (default 2 * (bins - 1))."""
    x = _as_float_or_complex(input, "irfft")
    d = _one_dim(x, dim)
    last = 2 * (x.shape[d] - 1) if n is None else n
    _check_n(last)
    return _out(_c2r(x, (last // 2 + 1,), (d,), last, norm, False, False), out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """torch.fft.irfftn: the n-d inverse of rfftn."""
    x = _as_float_or_complex(input, "irfftn")
    s, dims, last = _c2r_shape(x, s, dim, "irfftn")
    return _out(_c2r(x, s, dims, last, norm, False, False), out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """torch.fft.irfft2: irfftn over the last two dims."""
    return irfftn(input, s, dim, norm, out=out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """torch.fft.hfft: the transform of a Hermitian-symmetric signal given by its first half;
    a real output of n points (default 2 * (input size - 1))."""
    x = _as_float_or_complex(input, "hfft")
    d = _one_dim(x, dim)
    last = 2 * (x.shape[d] - 1) if n is None else n
    _check_n(last)
    return _out(_c2r(x, (last // 2 + 1,), (d,), last, norm, True, True), out)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """torch.fft.hfftn: the n-d hfft."""
    x = _as_float_or_complex(input, "hfftn")
    s, dims, last = _c2r_shape(x, s, dim, "hfftn")
    return _out(_c2r(x, s, dims, last, norm, True, True), out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """torch.fft.hfft2: hfftn over the last two dims."""
    return hfftn(input, s, dim, norm, out=out)


# ---------------------------------------------------------------- helpers

def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """torch.fft.fftfreq(n, d=1.0): the sample frequencies [0, 1, ..., -1] / (d * n)."""
    from ._creation import _xp
    dtype = D.to_dtype(dtype) or D.get_default_dtype()
    xp = _xp(device)
    k = xp.concatenate([xp.arange(0, (n - 1) // 2 + 1), xp.arange(-(n // 2), 0)])
    return _out(_freqs(k, d, n, dtype, requires_grad), out)


def _freqs(k, d, n, dtype, requires_grad):
    r = _make((k / (d * n)).astype(dtype.np))
    return r.requires_grad_() if requires_grad else r


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """torch.fft.rfftfreq(n, d=1.0): the onesided sample frequencies [0, ..., n // 2] / (d * n)."""
    from ._creation import _xp
    dtype = D.to_dtype(dtype) or D.get_default_dtype()
    k = _xp(device).arange(0, n // 2 + 1)
    return _out(_freqs(k, d, n, dtype, requires_grad), out)


def _shift(input, dim, inverse):
    if dim is None:
        dims = tuple(range(input.ndim))
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = tuple(_wrap_dim(d, input.ndim) for d in dims)
    if not dims:
        return input
    shifts = [((input.shape[d] + 1) // 2 if inverse else input.shape[d] // 2) for d in dims]
    return roll(input, shifts, dims)


def fftshift(input, dim=None):
    """torch.fft.fftshift: the zero frequency moved to the centre (a roll by n // 2)."""
    return _shift(input, dim, False)


def ifftshift(input, dim=None):
    """torch.fft.ifftshift: the inverse of fftshift (a roll by (n + 1) // 2)."""
    return _shift(input, dim, True)


from .ops._registry import named_as_pytorch as _named  # noqa: E402
_named(globals(), __all__, "fft_")

