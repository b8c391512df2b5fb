"""Lint: no module outside ndgrad/_backend.py does array work with NumPy.

Op code gets its array module `xp` from its inputs (ndgrad._backend.xp_of), so NumPy and CuPy
(and the strict stand-in device of the tests) share every line. This test reads every module of
the package and finds each use of NumPy, under any name it is imported as (``import numpy as
np``, ``from .._backend import numpy as _np``, ``from numpy import ...``). Allowed without a
word: NumPy's type system and constants (dtypes, finfo, pi, ...), which CuPy shares. Anything
else, array work, must either

- carry ``# host: <reason>`` on its line (explicit host-side work on small metadata: index
  arithmetic, a host RNG draw moved to the device once, ...), or
- be in a module of HOST_MODULES below, each with its reason (modules whose job is the host:
  printing, files, MPI buffers, ...).

The same holds for the backend's own explicit copy to the host, ``to_numpy``: each call outside
HOST_MODULES says why it needs the host.
"""
import ast
import os

import pytest

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src", "ndgrad")

# NumPy's type system and constants: the same objects in CuPy (cupy.float32 is numpy.float32)
TYPES = frozenset("""
dtype generic number integer signedinteger unsignedinteger floating complexfloating inexact
bool_ bool float16 float32 float64 complex64 complex128 int8 int16 int32 int64 uint8 uint16
uint32 uint64 intp uintp half single double longlong ulonglong csingle cdouble
finfo iinfo issubdtype result_type promote_types can_cast min_scalar_type
pi e inf nan newaxis euler_gamma ndarray ufunc
""".split())

HOST_MODULES = {
    "_backend.py": "the array-module seam itself",
    "cuda/_standin.py": "the stand-in device: wraps NumPy by design",
    "_tensor_str.py": "printing: formats host copies of the values",
    "serialization/__init__.py": "files: checkpoints are written from and read into host memory",
    "serialization/_rebuild.py": "reads PyTorch's checkpoint storages (host bytes) before placing them",
    "serialization/_weights_only_unpickler.py": "unpickling of host data",
    "distributed/device_mesh.py": "a device mesh's rank tables: small host integers",
    "testing/_comparison.py": "assert_close compares host copies, as PyTorch's reports do",
    "autograd/gradcheck.py": "finite-difference Jacobians are assembled on the host",
    "distributed/distributed_c10d.py": "MPI buffers are host arrays (mpi4py)",
    "nn/parallel/distributed.py": "gradient buckets are flattened into host MPI buffers",
    "_dtype.py": "the dtype table maps torch dtypes to NumPy's dtype objects",
    "backends.py": "reads NumPy's build configuration",
    "ops/_blas.py": "calls the BLAS of NumPy's own build on host arrays",
    "ops/_cascade.py": "PyTorch's CPU summation order, followed on host arrays only (a "
                       "device sums with its own kernels)",
    "ops/_upsample_tables.py": "interpolation's index and weight tables: small host arrays "
                               "built from shapes, moved to the device by the kernels",
    "utils/data/_worker.py": "DataLoader workers seed NumPy's global RNG, as PyTorch's do",
    "random/_mt19937.py": "PyTorch's CPU generator: the mt19937 stream and its transforms are the host's "
               "(draws for other devices are moved once)",
    "random/_libm.py": "the host libm's elementary functions, for the host generator's transforms",
    "viz.py": "draws graphs (metadata only)",
    "utils/benchmark/utils/common.py": "statistics of host timings (float32 as PyTorch's "
                                       "Measurement computes them)",
    "utils/benchmark/utils/compare.py": "formats tables of host timings",
    "utils/benchmark/utils/timer.py": "statistics of host timings",
    "utils/benchmark/utils/fuzzer.py": "PyTorch's Fuzzer draws its parameters from NumPy's "
                                       "RandomState, on the host",
}


def _modules():
    for d, _, files in os.walk(ROOT):
        for f in files:
            if f.endswith(".py"):
                p = os.path.join(d, f)
                yield os.path.relpath(p, ROOT).replace(os.sep, "/"), p


def _numpy_names(tree):
    """Names bound to the numpy module, and names imported from it."""
    mods, funcs = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "numpy" or a.name.startswith("numpy."):
                    mods.add((a.asname or a.name).split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            m = node.module or ""
            for a in node.names:
                if m == "numpy" or m.startswith("numpy."):
                    funcs.add(a.asname or a.name)
                elif m.endswith("_backend") and a.name == "numpy":
                    mods.add(a.asname or a.name)
                elif m.endswith("_backend") and a.name == "to_numpy":
                    funcs.add(a.asname or a.name)   # a copy to the host
    return mods, funcs


def violations(rel, path):
    src = open(path, encoding="utf-8").read()
    lines = src.splitlines()
    tree = ast.parse(src)
    mods, funcs = _numpy_names(tree)
    out = []
    for node in ast.walk(tree):
        name = None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id in mods:
            if node.attr in TYPES:
                continue
            name = f"{node.value.id}.{node.attr}"
        elif isinstance(node, ast.Name) and node.id in funcs and node.id not in TYPES:
            name = node.id
        if name is None:
            continue
        line = lines[node.lineno - 1]
        if "# host:" in line:
            continue
        out.append(f"{rel}:{node.lineno}: {name}")
    return out


def test_lint_finds_array_work():   # the lint itself can fail
    tree = "import numpy as np\nx = np.zeros(3)\ny = np.float32\nz = np.ones(2)  # host: ok\n"
    p = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_lint_probe.py")
    with open(p, "w") as f:
        f.write(tree)
    try:
        assert violations("probe", p) == ["probe:2: np.zeros"]
    finally:
        os.remove(p)


@pytest.mark.parametrize("rel,path", sorted(_modules()), ids=lambda x: x if "/" in x or
                         x.endswith(".py") else None)
def test_no_numpy_array_work(rel, path):
    if rel in HOST_MODULES:
        return
    bad = violations(rel, path)
    assert not bad, ("NumPy array work outside the backend (use the inputs' `xp`, or mark an "
                     "explicit host step with '# host: <reason>'):\n" + "\n".join(bad))


def test_host_modules_exist():
    names = {rel for rel, _ in _modules()}
    assert set(HOST_MODULES) <= names
