"""Tensor repr/str, byte-identical to PyTorch's ``torch/_tensor_str.py``.

The algorithm follows PyTorch's: one formatter per tensor (two for complex tensors: real and
imaginary parts) decides between integer mode (``1.``), fixed point and scientific notation from
the non-zero finite values, and fixes a common column width; rows are then wrapped at
``linewidth`` and tensors with more than ``threshold`` elements are summarized with ``...``,
keeping ``edgeitems`` items at each end of every dimension.  Values are formatted with Python's
own float formatting, as PyTorch does, so rounding, ``nan``/``inf`` and ``-0.`` agree exactly.
"""
import contextlib
import dataclasses
import math

import numpy as np

from ._dtype import get_default_dtype

__all__ = ["tensor_repr", "set_printoptions", "get_printoptions", "printoptions", "PRINT_OPTS"]


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: "bool | None" = None


PRINT_OPTS = _PrinterOptions()

# profile -> (precision, threshold, edgeitems, linewidth)
_PROFILES = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """torch.set_printoptions.  As in PyTorch, an unknown profile is ignored and every call
    resets ``sci_mode`` to its argument (None: chosen automatically per tensor)."""
    if profile in _PROFILES:
        (PRINT_OPTS.precision, PRINT_OPTS.threshold,
         PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth) = _PROFILES[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """The current options, as a dict that can be passed back to set_printoptions()."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Context manager that temporarily changes the print options."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


def _to_numpy(data):
    """The host NumPy array behind a tensor's storage (CuPy arrays are copied with .get())."""
    if isinstance(data, np.ndarray):
        return data
    if hasattr(data, "get"):
        return data.get()
    return np.asarray(data)


class _Formatter:
    """Formats the elements of one real (or integer/bool) array with a common width."""

    def __init__(self, values):
        self.floating = values.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not self.floating:
            if flat.size:  # str() length is largest at one of the extremes
                self.max_width = max(len(str(flat.min().item())), len(str(flat.max().item())))
            return
        nz = flat[np.isfinite(flat) & (flat != 0)]
        if nz.size == 0:
            return
        absv = np.abs(nz).astype(np.float64)
        lo, hi = absv.min(), absv.max()
        self.int_mode = bool(np.all(nz == np.ceil(nz)))
        if PRINT_OPTS.sci_mode is None:
            with np.errstate(over="ignore"):
                self.sci_mode = bool(hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4)
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        # The printed length only grows with the sign and with |x| (or |exponent| in
        # scientific notation), so the widest string comes from an extreme of either sign.
        candidates = [float(x) for part in (nz[nz > 0], nz[nz < 0]) if part.size
                      for x in (part.min(), part.max())]
        p = PRINT_OPTS.precision
        if self.sci_mode:
            lens = [len(f"{v:.{p}e}") for v in candidates]
        elif self.int_mode:  # room for the trailing "." of integer-valued floats
            lens = [len(f"{v:.0f}") + 1 for v in candidates]
        else:
            lens = [len(f"{v:.{p}f}") for v in candidates]
        self.max_width = max(self.max_width, *lens)

    def format(self, value):
        if not self.floating:
            ret = f"{value}"
        elif self.sci_mode:
            ret = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
        elif self.int_mode:
            ret = f"{value:.0f}"
            if not (math.isinf(value) or math.isnan(value)):
                ret += "."
        else:
            ret = f"{value:.{PRINT_OPTS.precision}f}"
        return ret.rjust(self.max_width)


def _format_value(value, fmt_real, fmt_imag):
    if fmt_imag is None:
        return fmt_real.format(value)
    real = fmt_real.format(value.real)
    imag = (fmt_imag.format(value.imag) + "j").lstrip()
    return real + imag if imag[0] in "+-" else real + "+" + imag


def _summarized_data(a):
    """The elements that a summarized print shows (what the formatters are built from)."""
    e = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:  # note: like PyTorch, edgeitems=0 keeps the whole row (a[-0:])
        return np.concatenate((a[:e], a[-e:])) if a.shape[0] > 2 * e else a
    if not e:
        return a[(slice(0, 0),) * a.ndim]
    n = a.shape[0]
    rows = [*range(e), *range(n - e, n)] if n > 2 * e else range(n)
    return np.stack([_summarized_data(a[i]) for i in rows])


def _vector_str(a, indent, summarize, fmt_real, fmt_imag):
    element_length = fmt_real.max_width + 2
    if fmt_imag is not None:
        element_length += fmt_imag.max_width + 1
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    e = PRINT_OPTS.edgeitems

    def fmt(values):
        return [_format_value(v, fmt_real, fmt_imag) for v in values.tolist()]

    if summarize and not e:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        data = fmt(a[:e]) + [" ..."] + fmt(a[-e:])
    else:
        data = fmt(a)
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(a, indent, summarize, fmt_real, fmt_imag):
    if a.ndim == 0:
        return _format_value(a.item(), fmt_real, fmt_imag)
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, fmt_real, fmt_imag)
    e, n = PRINT_OPTS.edgeitems, a.shape[0]

    def sub(rows):
        return [_nested_str(a[i], indent + 1, summarize, fmt_real, fmt_imag) for i in rows]

    if summarize and n > 2 * e:
        slices = sub(range(e)) + ["..."] + sub(range(n - e, n))
    else:
        slices = sub(range(n))
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _tensor_str(a, indent):
    if a.size == 0:
        return "[]"
    summarize = a.size > PRINT_OPTS.threshold
    shown = _summarized_data(a) if summarize else a
    if a.dtype.kind == "c":
        fmts = _Formatter(shown.real), _Formatter(shown.imag)
    else:
        fmts = _Formatter(shown), None
    return _nested_str(a, indent, summarize, *fmts)


def _add_suffixes(tensor_str, suffixes, indent):
    parts = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1  # (sic, as PyTorch)
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _grad_fn_name(grad_fn):
    name = getattr(grad_fn, "name", None)
    name = name() if callable(name) else type(grad_fn).__name__
    return name.rsplit("::", 1)[-1]


def tensor_repr(t):
    """repr(t) / str(t) exactly as PyTorch prints a dense tensor."""
    a = _to_numpy(t._data)
    if t.dtype._special == 1 or t.dtype._special == 2:  # bfloat16, float8: exact in float32
        a = a.astype(np.float32)
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []

    device = getattr(t, "device", None)
    if device is not None and device.type != "cpu":
        suffixes.append(f"device='{device}'")

    dtype_name = t.dtype.name
    default = get_default_dtype().name
    if a.size == 0:
        # Nothing to infer the dtype from, so anything but the default float dtype is shown.
        if a.ndim != 1:
            suffixes.append(f"size={tuple(a.shape)}")
        if dtype_name != default:
            suffixes.append(f"dtype={t.dtype!r}")
        tensor_str = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(a.shape)}")
        default_complex = "complex128" if default == "float64" else "complex64"
        if dtype_name not in (default, default_complex, "int64", "bool"):
            suffixes.append(f"dtype={t.dtype!r}")
        tensor_str = _tensor_str(a, indent)

    grad_fn = getattr(t, "grad_fn", None)
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{_grad_fn_name(grad_fn)}>")
    elif getattr(t, "requires_grad", False):
        suffixes.append("requires_grad=True")

    return _add_suffixes(prefix + tensor_str, suffixes, indent)
