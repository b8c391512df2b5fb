"""torch.linalg: the linear-algebra namespace (the ops live in ndgrad/ops/linalg.py)."""
from .ops.linalg import (inv, det, slogdet, solve, cholesky, qr, svd, svdvals, eigh, eigvalsh,
                         matrix_norm, matmul, vdot, LinAlgError)
from .ops.linalg import linalg_cross as cross

__all__ = ["inv", "det", "slogdet", "solve", "cholesky", "qr", "svd", "svdvals", "eigh",
           "eigvalsh", "matrix_norm", "matmul", "vdot", "cross", "LinAlgError"]

# ---------------------------------------------------------------- vector norms (issue 3 A)
from .ops.reduction import vector_norm  # noqa: E402


def norm(input, ord=None, dim=None, keepdim=False, *, out=None, dtype=None):
    """torch.linalg.norm: a vector norm over `dim` (int or 1-tuple, or everything when ord and
    dim are None), or a matrix norm over a 2-tuple `dim` (or a 2-d input with `ord`). (PyTorch
    calls its tensor `input` here, `A` in the other linalg functions.)"""
    A = input
    if isinstance(dim, int):
        dim = (dim,)
    if dim is None and ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if dim is None:
        if A.dim() not in (1, 2):
            raise RuntimeError(
                f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                f"Got {A.dim()}D.")
        dim = tuple(range(A.dim()))
    if len(dim) == 1:
        return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    if len(dim) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got "
                       f"{list(dim)}")


__all__ += ["vector_norm", "norm"]

# ---------------------------------------------------------------- more ops (PyTorch parity)
from .ops.linalg import (matrix_power, matrix_exp, pinv, lstsq, matrix_rank, cond,  # noqa: E402
                         multi_dot, solve_triangular)
from .ops.linalg import linalg_vander as vander  # noqa: E402

__all__ += ["matrix_power", "matrix_exp", "pinv", "lstsq", "matrix_rank", "cond", "multi_dot",
            "solve_triangular", "vander"]
from .ops.linalg import lu, lu_factor, lu_solve  # noqa: E402

__all__ += ["lu", "lu_factor", "lu_solve"]
from .ops.linalg import (solve_ex, inv_ex, cholesky_ex, lu_factor_ex, eig, eigvals,  # noqa: E402
                         householder_product, vecdot, tensorinv, tensorsolve, ldl_factor,
                         ldl_factor_ex, ldl_solve)
from .ops.linalg import linalg_diagonal as diagonal  # noqa: E402

__all__ += ["solve_ex", "inv_ex", "cholesky_ex", "lu_factor_ex", "eig", "eigvals",
            "householder_product", "vecdot", "tensorinv", "tensorsolve", "ldl_factor",
            "ldl_factor_ex", "ldl_solve", "diagonal"]

# The shared notes torch.linalg's docstrings are assembled from (the same keys as PyTorch's).
common_notes = {
    "experimental_warning": "This function is \"experimental\" and it may change in a future "
                            "release.",
    "sync_note": "When inputs are on a CUDA device, this function synchronizes that device with "
                 "the CPU.",
    "sync_note_ex": "When the inputs are on a CUDA device, this function synchronizes only when "
                    ":attr:`check_errors`\\ `= True`.",
    "sync_note_has_ex": "When inputs are on a CUDA device, this function synchronizes that device "
                        "with the CPU. For a version of this function that does not synchronize, "
                        "see :func:`{}`.",
}
__all__ += ["common_notes"]


from .ops._registry import named_as_pytorch as _named  # noqa: E402
_named(globals(), __all__, "linalg_")

