"""torch.__config__: how this build computes (PyTorch's show(), parallel_info(), _cxx_flags()):
here NumPy's version and BLAS, and ndgrad's kernel threads (ops/_parallel.py)."""


def _blas():
    """NumPy's BLAS as it runs: OpenBLAS's own report (its kernels are chosen when it loads, by
    the CPU or OPENBLAS_CORETYPE), else the name NumPy was built with."""
    runtime = _openblas_config()
    if runtime:
        return runtime
    import numpy as np
    try:
        deps = np.show_config(mode="dicts")["Build Dependencies"]  # host: NumPy's build
        blas = deps.get("blas", {})
        return f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except Exception:  # noqa: BLE001 (a report line: NumPy's config format differs by version)
        return "?"


def _openblas_function(*names):
    """The first of these C functions that the OpenBLAS bundled with NumPy's wheel exports (a
    ctypes function), or None."""
    from .ops._blas import openblas_function
    return openblas_function(*names)


def _openblas_config():
    """openblas_get_config() of the OpenBLAS bundled with NumPy's wheel, or None."""
    import ctypes
    f = _openblas_function("scipy_openblas_get_config64_", "scipy_openblas_get_config",
                           "openblas_get_config64_", "openblas_get_config")
    if f is None:
        return None
    f.restype = ctypes.c_char_p
    return f().decode(errors="replace").strip()


def show():
    """A human-readable description of this build's configuration."""
    import platform
    import numpy as np
    from . import __version__
    return (f"ndgrad {__version__}, pure Python on NumPy {np.__version__} "  # host: NumPy's build
            f"(Python {platform.python_version()}):\n"
            f"  - BLAS: {_blas()}\n"
            f"  - CPU capability usage: {_capability()}\n"
            f"  - kernel threads: {_threads()}\n")


def _capability():
    from .backends import get_cpu_capability
    return get_cpu_capability()


def _threads():
    from .ops import _parallel
    return _parallel.threads()


def parallel_info():
    """The parallelization settings, as PyTorch's report lays them out."""
    import os
    t = _threads()
    return (f"ndgrad kernel threads (ops/_parallel.py):\n"
            f"\tget_num_threads() : {t}\n"
            f"\tget_num_interop_threads() : {t}\n"
            f"NumPy's BLAS: {_blas()}\n"
            f"\tOPENBLAS_NUM_THREADS : {os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}\n"
            f"hardware_concurrency() : {os.cpu_count()}\n"
            f"Environment variables:\n"
            f"\tOMP_NUM_THREADS : {os.environ.get('OMP_NUM_THREADS', '[not set]')}\n"
            f"ATen parallel backend: ndgrad's own thread pool\n")


def _cxx_flags():
    """PyTorch's C++ build flags (torch.utils.benchmark reads them): none, pure Python."""
    return ""
