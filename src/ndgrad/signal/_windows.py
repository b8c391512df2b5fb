"""torch's window functions: hann, hamming, blackman, bartlett and kaiser windows.

Each is computed as PyTorch's factory computes it (TensorFactories.cpp): `arange` in the
requested floating dtype, scaled and transformed step by step in that dtype, so float32 windows
agree with PyTorch's to the last bit or two; a periodic window of length N is the symmetric
window of length N + 1 without its last point. Arguments are checked as PyTorch's parser checks
them (its overloads take `periodic` and the shape parameters positionally or by name, each only
after the ones before it).
"""
import math

from .. import _dtype as D
from .._creation import _xp, _finish
from .._tensor import Tensor, _scalar_type_name

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]

_OPTIONS = ("torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
            "bool pin_memory = False, bool requires_grad = False")


def _is_int(v):
    """An int for PyTorch's parser: a Python or NumPy integer, a 0-d integer tensor; not a bool."""
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return True
    if isinstance(v, Tensor):
        return v.ndim == 0 and v.dtype._category == 1
    dt = getattr(v, "dtype", None)
    return getattr(v, "ndim", None) == 0 and getattr(dt, "kind", "") in ("i", "u")


def _is_float(v):
    """A float for PyTorch's parser: any real number but a bool (a 0-d tensor too)."""
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float)) or _is_int(v):
        return True
    if isinstance(v, Tensor):
        return v.ndim == 0 and v.dtype._category == 2
    dt = getattr(v, "dtype", None)
    return getattr(v, "ndim", None) == 0 and getattr(dt, "kind", "") == "f"


def _parse(name, params, args, kwargs):
    """[window_length, periodic, *params] from the call, or PyTorch's TypeError."""
    names = ["window_length", "periodic"] + [p for p, _ in params]
    given = list(args)
    for k in kwargs:
        if k not in names or names.index(k) < len(args):
            given = None
            break
    if given is not None:
        for k in names[len(args):]:
            if k in kwargs:
                if len(given) < names.index(k):  # (an earlier one missing: no overload)
                    given = None
                    break
                given.append(kwargs[k])
    if given is not None and given and not _is_int(given[0]):
        raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(given[0]).__name__}")
    ok = given is not None and 1 <= len(given) <= len(names) and (
        len(given) < 2 or isinstance(given[1], bool)) and all(_is_float(v) for v in given[2:])
    if not ok:
        got = [type(a).__name__ if not isinstance(a, Tensor) else "Tensor" for a in args]
        got += [f"{k}={type(v).__name__ if not isinstance(v, Tensor) else 'Tensor'}"
                for k, v in kwargs.items()]
        sigs = ["int window_length"]
        lines = [f" * (int window_length, *, {_OPTIONS})"]
        for p in ["bool periodic"] + [f"float {n}" for n, _ in params]:
            sigs.append(p)
            lines.append(f" * ({', '.join(sigs)}, *, {_OPTIONS})")
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({', '.join(got)}), but expected one of:\n" + "\n".join(lines) + "\n")
    out = [int(given[0]), given[1] if len(given) > 1 else True]
    for i, (_, default) in enumerate(params):
        v = given[2 + i] if len(given) > 2 + i else default
        out.append(float(v))
    return out


def _window(name, params, args, kwargs, body):
    opts = {k: kwargs.pop(k) for k in ("dtype", "layout", "device", "pin_memory",
                                       "requires_grad") if k in kwargs}
    n, periodic, *values = _parse(name, params, args, kwargs)
    dtype = D.to_dtype(opts.get("dtype")) or D.get_default_dtype()
    device = opts.get("device")
    if dtype.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for "
                                  f"'{'ComplexFloat' if dtype is D.complex64 else 'ComplexDouble'}'")
    if not dtype.is_floating_point:
        dev = "cpu" if device is None else str(device)
        raise RuntimeError(
            f"{name} expects floating point dtypes, got: TensorOptions(dtype="
            f"{_scalar_type_name(dtype)}, device={dev}, layout=Strided (default), "
            "requires_grad=false (default), pinned_memory=false, memory_format=(nullopt))")
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={n}")
    xp = _xp(device)
    if n <= 1:
        arr = xp.ones(n, dtype=dtype.np)
    else:
        m = n + 1 if periodic else n
        arr = body(xp, xp.arange(m, dtype=dtype.np), m, dtype.np.type, *values)[:n]
    return _finish(arr, opts.get("requires_grad", False))


def _hamming(xp, w, n, t, alpha, beta):
    return xp.cos(w * t(math.pi * 2.0 / (n - 1))) * t(-beta) + t(alpha)


def hann_window(*args, **kwargs):
    """torch.hann_window(window_length, periodic=True, *, dtype=None, ...): the Hann window."""
    return _window("hann_window", (), args, kwargs,
                   lambda xp, w, n, t: _hamming(xp, w, n, t, 0.5, 0.5))


def hamming_window(*args, **kwargs):
    """torch.hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, ...)."""
    return _window("hamming_window", (("alpha", 0.54), ("beta", 0.46)), args, kwargs, _hamming)


def _blackman(xp, w, n, t):
    w = w * t(math.pi / (n - 1))
    return xp.cos(w * t(4)) * t(0.08) - xp.cos(w * t(2)) * t(0.5) + t(0.42)


def blackman_window(*args, **kwargs):
    """torch.blackman_window(window_length, periodic=True, *, dtype=None, ...)."""
    return _window("blackman_window", (), args, kwargs, _blackman)


def _bartlett(xp, w, n, t):
    w = w * t(2.0 / (n - 1))
    half = ((n - 1) >> 1) + 1
    w[half:] = t(2) - w[half:]
    return w


def bartlett_window(*args, **kwargs):
    """torch.bartlett_window(window_length, periodic=True, *, dtype=None, ...)."""
    return _window("bartlett_window", (), args, kwargs, _bartlett)


def _kaiser(xp, w, n, t, beta):
    # I0(beta * sqrt(1 - ((k - a) / a)^2)) / I0(beta), a = (n - 1) / 2, in double precision
    # (PyTorch's kernel works in the dtype's math type), then rounded to the dtype
    a = (n - 1) / 2.0
    r = (w.astype("float64") - a) / a
    x = beta * xp.sqrt(xp.maximum(1.0 - r * r, 0.0))
    return (xp.i0(x) / xp.i0(xp.asarray(beta))).astype(w.dtype)


def kaiser_window(*args, **kwargs):
    """torch.kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, ...)."""
    return _window("kaiser_window", (("beta", 12.0),), args, kwargs, _kaiser)
