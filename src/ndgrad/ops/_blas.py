"""NumPy's bundled OpenBLAS, called directly (ctypes, the standard library's): the level-1 axpy,
y += a * x, whose SIMD kernels round each element once, as a fused multiply-add; and its worker
threads' spin after a call (Note [BLAS workers' spin], at the end); and the name of the kernels
it runs (`CORE`: ops/linalg.py's Note [Few rows against a transposed matrix]).

Note [fused axpy]
~~~~~~~~~~~~~~~~~
PyTorch's add(alpha), sub(alpha) and scalar-weight lerp kernels are fused multiply-adds with a
scalar factor (ops/_fma.py), and NumPy has no fma: ndgrad emulates it exactly in about seven
float64 passes. OpenBLAS's saxpy and daxpy on an FMA-capable CPU (its Haswell, Zen, SkylakeX
and later kernels) compute y[i] + a * x[i] with one rounding in their vector loop: one pass,
about 20 x less time than the emulation. Only in their vector loop: OpenBLAS's Haswell kernel
finishes the last n % 32 elements in plain C (two roundings), and it splits an axpy longer than
10^4 elements between its threads, each piece with such a tail. So ndgrad calls it in pieces
of `_PIECE` elements (below OpenBLAS's threading threshold, a multiple of every kernel's
vector loop) and runs the last piece's ragged end in a padded `_PAD`-element buffer, all of
which the vector loop covers. The pieces' calls cost ~1 us each through ctypes (half of a
400 k-element update). Where OpenBLAS's axpby (y = a x + b y, never split between threads)
rounds every element of every length once with b = 1, as its SkylakeX kernels do, one call of
it does the whole array instead (`_whole`: 401 k float32 elements 98 -> 48 us); its Haswell and
Zen kernels do not, and there the pieces stay.

Whether a given build does all that is not assumed: the first call checks each route (axpby
whole, then axpy in pieces) against inputs on which a fused and an unfused multiply-add differ
in every element (`_fused_everywhere`), over lengths and misalignments that reach every path
of the kernels, and takes the first that passes. A library without these functions, another
integer width, an older CPU's kernels (Sandy Bridge's have no FMA) or any element off: no
route, and ops/_fma.py keeps its exact emulation.
"""
import ctypes
import os
import sys
import threading

import numpy as np  # host: the BLAS of NumPy's own build

__all__ = ["openblas_function", "axpy", "WORKER_TIMEOUT", "CORE"]

_PIECE = 8192      # elements a call (OpenBLAS threads axpy above 10^4; a multiple of 64)
_PAD = 64          # the ragged end's buffer (a multiple of every kernel's vector loop)


def openblas_function(*names):
    """The first of these C functions that the OpenBLAS bundled with NumPy's wheel exports (a
    ctypes function), or None."""
    import glob
    here = os.path.dirname(np.__file__)
    for lib in sorted(glob.glob(os.path.join(os.path.dirname(here), "numpy.libs", "*openblas*"))
                      + glob.glob(os.path.join(here, ".dylibs", "*openblas*"))):
        try:
            dll = ctypes.CDLL(lib)
        except OSError:
            continue
        for name in names:
            f = getattr(dll, name, None)
            if f is not None:
                return f
    return None


_ROUTES = {}       # dtype char -> the checked route (a function) or None
_LOCK = threading.Lock()
_local = threading.local()   # each thread's buffer for the ragged end
_I64 = ctypes.c_int64


def _raw(char):
    """The Fortran axpy for float ('s') or double ('d') and its scalar's ctypes type."""
    if sys.byteorder != "little":   # (an int64 count read by an LP64 build: its low word)
        return None, None
    f = openblas_function(*(p + char + s for p, s in (("scipy_", "axpy_64_"), ("", "axpy_64_"),
                                                      ("scipy_", "axpy_"))))
    if f is None:
        return None, None
    scal = ctypes.c_float if char == "s" else ctypes.c_double
    ptr = ctypes.POINTER(_I64)
    f.restype = None
    f.argtypes = [ptr, ctypes.POINTER(scal), ctypes.c_void_p, ptr, ctypes.c_void_p, ptr]
    return f, scal


def _route(f, scal, dtype):
    """y += a * x (y, x contiguous 1-d arrays of `dtype`, y not overlapping x) through the
    Fortran axpy `f`, in pieces of _PIECE elements and a padded ragged end (Note [fused
    axpy])."""
    size, char = dtype.itemsize, dtype.char
    one = ctypes.byref(_I64(1))
    piece = ctypes.byref(_I64(_PIECE))
    pad = ctypes.byref(_I64(_PAD))

    def axpy(a, x, y):
        n = x.size
        xa, ya = x.ctypes.data, y.ctypes.data
        ar = ctypes.byref(scal(a))
        whole = n - n % _PAD
        step = _PIECE * size
        full = whole - whole % _PIECE
        for off in range(0, full * size, step):
            f(piece, ar, xa + off, one, ya + off, one)
        if full < whole:
            f(ctypes.byref(_I64(whole - full)), ar, xa + full * size, one, ya + full * size, one)
        if whole < n:
            t = n - whole
            pad_ = getattr(_local, char, None)   # (the lanes past the end: any values)
            if pad_ is None:
                buf = np.zeros((2, _PAD), dtype)
                pad_ = buf[0], buf[1], buf.ctypes.data, buf.ctypes.data + _PAD * size
                setattr(_local, char, pad_)
            bx, by, bxa, bya = pad_
            bx[:t] = x[whole:]
            by[:t] = y[whole:]
            f(pad, ar, bxa, one, bya, one)
            y[whole:] = by[:t]
    return axpy


def _raw_axpby(char):
    """The CBLAS axpby for float ('s') or double ('d'), y = a * x + b * y, as a ctypes function
    of (n, a, x, incx, b, y, incy), or None."""
    if sys.byteorder != "little":   # (as _raw: an int64 count)
        return None
    f = openblas_function(*(p + char + "axpby" + s for p, s in (
        ("scipy_cblas_", "64_"), ("cblas_", "64_"), ("cblas_", ""))))
    if f is None:
        return None
    scal = ctypes.c_float if char == "s" else ctypes.c_double
    f.restype = None
    f.argtypes = [_I64, scal, ctypes.c_void_p, _I64, scal, ctypes.c_void_p, _I64]
    return f


def _whole(f):
    """y += a * x as one call of the CBLAS axpby `f` with b = 1 (OpenBLAS never splits axpby
    between its threads)."""
    def axpy(a, x, y):
        n = x.size
        if n:
            f(n, a, _address(x), 1, 1.0, _address(y), 1)
    return axpy


def _address(a):
    """The address of a contiguous array's data: through ctypes' buffer view where the array is
    writable (a third of `a.ctypes.data`'s cost, which builds an object a call), else NumPy's."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(a))
    except (TypeError, ValueError):
        return a.ctypes.data


def _fused_everywhere(axpy, dtype):
    """Whether axpy rounds every element once, on inputs where one rounding and two differ in
    every element: a = 1 + 2^-h, x = 1 + 2^-k with h + k the precision p and y = -1, so
    a * x + y is 2^-h + 2^-k + 2^-p exactly, and 2^-h + 2^-k after the product's own rounding
    (a tie, to even)."""
    p = np.finfo(dtype).nmant + 1
    h = p // 2
    a = dtype.type(1 + 2.0 ** -h)
    one = dtype.type(1 + 2.0 ** (h - p))
    want = dtype.type(2.0 ** -h + 2.0 ** (h - p) + 2.0 ** -p)
    for n in list(range(1, 2 * _PAD + 2)) + [_PIECE - 1, _PIECE + 37, 3 * _PIECE, 3 * 10 ** 4 + 5]:
        for skip in (0, 1, 3):    # views off the allocation's alignment
            x = np.full(n + skip, one, dtype)[skip:]
            y = np.full(n + skip, -1, dtype)[skip:]
            axpy(a, x, y)
            if not (y == want).all():
                return False
    return True


def axpy(dtype):
    """y += a * x with one rounding per element for float32 or float64 (a function (a, x, y) on
    contiguous 1-d arrays, y not overlapping x), or None where this NumPy's BLAS cannot be
    shown to round so (Note [fused axpy])."""
    char = dtype.char
    try:
        return _ROUTES[char]
    except KeyError:
        pass
    with _LOCK:
        if char not in _ROUTES:
            route = None
            try:
                blas = {"f": "s", "d": "d"}[char]
                whole = _raw_axpby(blas)
                f, scal = _raw(blas)
                for candidate in ((_whole(whole),) if whole is not None else ()) + (
                        (_route(f, scal, dtype),) if f is not None else ()):
                    with np.errstate(all="ignore"):
                        if _fused_everywhere(candidate, dtype):
                            route = candidate
                            break
            except Exception:   # noqa: BLE001 (any failure of the foreign call: the emulation)
                route = None
            _ROUTES[char] = route
    return _ROUTES[char]


# Note [BLAS workers' spin]
# OpenBLAS's worker threads (NumPy's wheel runs its pthreads build) spin after each threaded
# call until 2^28 clock ticks (about 0.1 s) have passed without work, then sleep. A training
# step alternates GEMMs with element-wise work that ndgrad splits over its own threads
# (ops/_parallel.py): for ~0.1 s after every GEMM a spinning BLAS worker holds a core that
# ndgrad's piece needs, and on a machine with as many cores as threads the piece waits for it.
# (PyTorch runs both kinds of work on one OpenMP pool.) ndgrad starts the workers again with a
# timeout of 2^20 ticks (a few tenths of a millisecond): back-to-back GEMMs (generation's small
# ones) still find them awake, a phase of element-wise work (an optimizer step, a layer norm)
# frees the core. Measured in docs/performance.md (the MLP step: 7.8 -> 6.5 ms). OpenBLAS reads
# the timeout from its environment when it starts its threads: ndgrad sets
# OPENBLAS_THREAD_TIMEOUT for the read alone (openblas_read_env), then stops and restarts the
# workers (blas_thread_shutdown_, blas_thread_init: what OpenBLAS itself does around a fork).
# Left alone: a process whose environment sets OPENBLAS_THREAD_TIMEOUT or GOTO_THREAD_TIMEOUT
# (the user's choice stands), BLAS libraries other than NumPy's bundled OpenBLAS, builds
# without these functions, systems other than Linux (Windows' OpenBLAS runs another thread
# server; macOS's NumPy takes Accelerate), and an import while other Python threads run (one of
# them could be inside a threaded BLAS call, whose workers must not be stopped under it).
# Process-wide, as the timeout is; done once, at import.
_TIMEOUT = 20
_TIMEOUT_ENV = ("OPENBLAS_THREAD_TIMEOUT", "GOTO_THREAD_TIMEOUT")


def _worker_timeout():
    """OpenBLAS's workers restarted with a spin of 2^_TIMEOUT ticks (Note [BLAS workers'
    spin]): the exponent in force, or None where ndgrad left them alone."""
    if any(k in os.environ for k in _TIMEOUT_ENV) or not sys.platform.startswith("linux") or \
            threading.active_count() > 1:
        return None
    fs = [openblas_function(n) for n in ("openblas_read_env", "openblas_thread_timeout",
                                         "blas_thread_shutdown_", "blas_thread_init")]
    if any(f is None for f in fs):
        return None
    read, timeout, shutdown, init = fs
    for f in fs:
        f.argtypes, f.restype = [], ctypes.c_int
    read.restype = None
    key = _TIMEOUT_ENV[0]
    os.environ[key] = str(_TIMEOUT)
    try:
        read()
    finally:
        del os.environ[key]
    if timeout() != _TIMEOUT:
        return None
    shutdown()
    init()
    return _TIMEOUT


try:
    WORKER_TIMEOUT = _worker_timeout()
except Exception:   # noqa: BLE001 (any failure of the foreign calls: the workers as they were)
    WORKER_TIMEOUT = None


def _corename():
    """The kernel family OpenBLAS picked for this CPU (or OPENBLAS_CORETYPE): "SkylakeX",
    "Haswell", ...; None without NumPy's bundled OpenBLAS."""
    f = openblas_function("scipy_openblas_get_corename64_", "openblas_get_corename64_",
                          "openblas_get_corename")
    if f is None:
        return None
    f.argtypes, f.restype = [], ctypes.c_char_p
    name = f()
    return name.decode("ascii", "replace").strip() if name else None


try:
    CORE = _corename()
except Exception:   # noqa: BLE001 (a foreign call that failed: no kernel name)
    CORE = None
