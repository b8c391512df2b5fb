# Linear algebra. matmul has one joint formula (its two gradients share the 1-d bookkeeping);
# batch broadcasting is undone by the engine's sum_to. See ops/_registry.py for the language.
import builtins
import math

from .._backend import ndarray as _ndarray
from .._tensor import Tensor, _wrap_dim
from ._registry import defop
from . import _blas, _raw
from .shape import (unsqueeze, squeeze, transpose, t, reshape, permute, expand, _diagonal,
                    _diagonal_backward, diag_embed)
from .indexing import _return_type
from .complex import _cj

__all__ = ["matmul", "mm", "bmm", "mv", "dot", "vdot", "outer", "ger", "addmm", "addmv", "addbmm",
           "baddbmm", "einsum", "tensordot", "kron", "trace", "diag", "tril", "triu", "inv", "det",
           "slogdet", "logdet", "solve", "cholesky", "qr", "svd", "svdvals", "eigh", "eigvalsh",
           "matrix_norm", "cross", "linalg_cross"]


def _mT(x):
    return t(x) if x.ndim == 2 else transpose(x, -1, -2)


def _mH(x):
    """The conjugate transpose: what a formula's transposes are for complex inputs (Note
    [Complex gradients] in ops/complex.py); the transpose alone for real ones."""
    return _mT(x) if x.dtype._category != 3 else _cj(_mT(x))


def _mH_raw(x):
    """_mH on arrays (the raw execution of formulas, ops/_raw.py)."""
    x = x.swapaxes(-1, -2)
    return x.conj() if x.dtype.kind == "c" else x


_mH._raw = _mH_raw


def _prod(shape):
    n = 1
    for x in shape:
        n *= x
    return n


def _matmul_check(a, b):
    """PyTorch's errors for each matmul case (it folds batch dims into rows where it can)."""
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D")
    if a.ndim == 1 and b.ndim == 1:
        if a.shape[0] != b.shape[0]:
            raise RuntimeError(
                "inconsistent tensor size, expected tensor [%d] and src [%d] to have the same "
                "number of elements, but got %d and %d elements respectively"
                % (a.shape[0], b.shape[0], a.shape[0], b.shape[0]))
        return
    k_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if a.shape[-1] == k_b:
        if a.ndim > 2 or b.ndim > 2:  # batch dims that do not broadcast
            from .shape import broadcast_shapes
            broadcast_shapes(a.shape[:-2], b.shape[:-2])
        return
    if b.ndim == 1:
        rows = _prod(a.shape[:-1])
        raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{a.shape[-1]}), "
                           f"vec ({b.shape[0]})")
    if b.ndim == 2:
        rows = _prod(a.shape[:-1])
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{a.shape[-1]} and "
                           f"{b.shape[0]}x{b.shape[1]})")
    from .shape import broadcast_shapes
    batch = _prod(broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    raise RuntimeError(
        f"Expected size for first two dimensions of batch2 tensor to be: [{batch}, {a.shape[-1]}] "
        f"but got: [{batch}, {b.shape[-2]}].")


# ---- PyTorch refuses mixed dtypes in the matmul family (no promotion); each kernel has its own
# message. The hot path pays one dtype identity comparison; the helpers below only build errors.

def _cname(d):
    """The C++ scalar type name PyTorch prints in some messages ("float", "long int", ...)."""
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
            "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}.get(d.name, "c10::" + d._cname)


def _sname(d):
    from ._inplace import _type_name
    return _type_name(d)


def _mm_dtype_error(a, b):
    return RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_cname(a)} != "
                        f"{_cname(b)}")


def _dot_dtype_error(a, b):
    return RuntimeError(f"dot : expected both vectors to have same dtype, but found {_sname(a)} "
                        f"and {_sname(b)}")


def _addmv_dtype_error(self, mat, vec):
    return RuntimeError(f"addmv input tensors must have the same dtype, but got {_sname(self)}, "
                        f"{_sname(mat)}, and {_sname(vec)}")


def _bmm_dtype_error(a, b, kernel="bmm"):
    if a.name == "bool":
        return NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
    return RuntimeError(f"expected scalar type {_sname(a)} but found {_sname(b)}")


def _check_addmm_dtypes(self, mat1, mat2):
    """addmm / addbmm (and linear with a bias): self against mat2 first, then mat1."""
    if self.dtype is not mat2.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{_sname(self.dtype)} and {_sname(mat2.dtype)}")
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                           f"{_sname(mat1.dtype)} and {_sname(mat2.dtype)}")


def _matmul_dtype_error(a, b):
    """torch.matmul's error by the kernel it dispatches to: dot, mv (also for a >= 3-d `a` folded
    into rows), mm (a 2-d `b`), else bmm."""
    da, db = a.dtype, b.dtype
    if a.ndim != 1 or b.ndim != 1:  # shapes are checked first, except by dot
        _matmul_check(a._data, b._data)
    fold = a.ndim <= 2 or a._data.flags.c_contiguous  # PyTorch folds batch dims without a copy
    if b.ndim == 1 and fold:
        return _dot_dtype_error(da, db) if a.ndim == 1 else _addmv_dtype_error(db, da, db)
    if b.ndim == 2 and fold:
        return _mm_dtype_error(da, db)
    return _bmm_dtype_error(da, db)


_GEMM_COPY_MIN = 1 << 16  # elements: a broadcast operand this large is copied before the GEMM


def _matmul_fwd(xp, self, other):
    # A broadcast operand (a zero stride: the gradient of a sum, an expand) is no BLAS layout:
    # NumPy then takes a slower road than a copy plus the BLAS call (bench W5)
    if self.size >= _GEMM_COPY_MIN and 0 in self.strides:
        self = xp.ascontiguousarray(self)
    if other.size >= _GEMM_COPY_MIN and 0 in other.strides:
        other = xp.ascontiguousarray(other)
    if other.ndim == 2 and self.ndim > 2 and self.size and self.flags.c_contiguous and \
            self.shape[-1] == other.shape[0]:
        # batch dims folded into the rows, one GEMM, as PyTorch folds them (NumPy runs one
        # GEMM a matrix: nanoGPT's (16, 64, 128) @ (128, 65) head 253 against 98 us)
        rows = xp.matmul(self.reshape(-1, self.shape[-1]), other)
        return rows.reshape(self.shape[:-1] + other.shape[-1:])
    try:
        return xp.matmul(self, other)
    except ValueError:  # NumPy refuses every shape that PyTorch refuses: reword its error
        _matmul_check(self, other)
        raise


def _matmul_grads(grad, self, other):
    # Only the gradients of inputs that require grad are computed. dot and mv (the 1-d cases of
    # double backward, bench W8) use PyTorch's direct formulas, one or two ops each, not an
    # unsqueeze/mm/squeeze chain.
    a1, b1 = self.ndim == 1, other.ndim == 1
    need_a, need_b = self.requires_grad, other.requires_grad
    if a1 and b1:  # DotBackward0
        return grad * _cj(other) if need_a else None, grad * _cj(self) if need_b else None
    if b1 and self.ndim == 2:  # MvBackward0
        if self.dtype._category == 3:
            return (outer(grad, _cj(other)) if need_a else None,
                    _mv(_mH(self), grad) if need_b else None)
        return outer(grad, other) if need_a else None, _mv_t(self, grad) if need_b else None
    g = grad
    if a1:
        g = unsqueeze(g, -2)
    if b1:
        g = unsqueeze(g, -1)
    a = unsqueeze(self, 0) if a1 else self
    b = unsqueeze(other, -1) if b1 else other
    ga = g @ _mH(b) if need_a else None
    if need_b and a.ndim > 2 and b.ndim == 2:
        # (..., M, K) @ (K, N): the matrix's gradient over all the rows at once, one GEMM, as
        # PyTorch's folded product gives it (not a GEMM a matrix, then their sum)
        rows = math.prod(a.shape[:-1])   # (not -1: a (..., 0) operand is empty)
        gb = _mH(a.reshape(rows, a.shape[-1])) @ g.reshape(rows, g.shape[-1])
    else:
        gb = _mH(a) @ g if need_b else None
    if a1 and ga is not None:
        ga = squeeze(ga, -2)
    if b1 and gb is not None:
        gb = squeeze(gb, -1)
    return ga, gb


def _matmul_op(name, node):
    return defop(name, _matmul_fwd, promote="binary", node_name=node,
                 inputs=("self", "other"), backward=_matmul_grads)


# mm and bmm (equal batches): one formula per input, which the backward runs on the arrays when
# no graph of it is needed (ops/_raw.py; bench W2), and only for the inputs that need it
_mm = defop("mm", _matmul_fwd, promote="binary", node_name="MmBackward0",
            self=lambda grad, other: _mm(grad, _mH(other)),
            other=lambda grad, self: _mm(_mH(self), grad))
_mv = defop("mv", _matmul_fwd, promote="binary", node_name="MvBackward0",
            self=lambda grad, other: outer(grad, _cj(other)),
            other=lambda grad, self: _mv_vec_grad(self, grad))
_dot = defop("dot", _matmul_fwd, promote="binary", node_name="DotBackward0",
             self=lambda grad, other: grad * _cj(other),
             other=lambda grad, self: grad * _cj(self))
_bmm = defop("bmm", _matmul_fwd, promote="binary", node_name="BmmBackward0",
             self=lambda grad, other: _bmm(grad, _mH(other)),
             other=lambda grad, self: _bmm(_mH(self), grad))
_vm = _matmul_op("vm", "SqueezeBackward4")
_matmul = _matmul_op("matmul", "UnsafeViewBackward0")


def _mv_vec_grad(self, grad):
    """mv's gradient for its vector: self^H grad (PyTorch's self.t().mv(grad) for real `self`)."""
    return _mv_t(self, grad) if self.dtype._category != 3 else _mv(_mH(self), grad)


# (real: vec @ self, the forward of _mv_tn that the recorded execution runs; no transposed view)
_mv_vec_grad._raw = lambda self, grad: grad @ self if self.dtype.kind != "c" else \
    _mH_raw(self) @ grad


def _mv_t(self, vec):
    """self.t().mv(vec), PyTorch's formula for mv's vector gradient. When `self` needs no grad
    the transposed view is left out of the graph: one op instead of two (bench W8)."""
    return _mv(t(self), vec) if self.requires_grad else _mv_tn(self, vec)


# (`self` needs no grad here, but forward-over-reverse AD can give it a tangent: hence its formula)
_mv_tn = defop("mv_t", lambda xp, self, vec: xp.matmul(vec, self), promote="binary",
               node_name="MvBackward0", self=lambda grad, vec: outer(vec, grad),
               vec=lambda grad, self: _mv(self, grad))


def _tf_method(name, args):
    from ._argcheck import tf_method
    return tf_method(name, args)


def _matmul_entry(not_tensor=None, record=False):
    """torch.matmul's body. not_tensor(input, other): the answer to an operand that is no tensor
    (the @ operator's NotImplemented, after which Python raises its own TypeError); None: the
    AttributeError stands, for the argument check of the caller (_argcheck). record: while a
    profiler is active, the call is an aten::matmul range (torch.matmul's wrapper records its
    own; Note [Profiler hooks])."""
    plain = _matmul_entry(not_tensor) if record else None

    def matmul(input, other):
        """torch.matmul: dot, mv, mm or broadcast batched matmul by the inputs' dims."""
        if record and _HUB[0] is not None:
            return _HUB[0].call("matmul", plain, (input, other), {})
        try:  # (costs a valid call nothing)
            mixed = input.dtype is not other.dtype
            a, b = input._data.ndim, other._data.ndim
        except AttributeError:
            if not_tensor is None:
                raise
            # an operand that overrides __torch_function__ gets Tensor.matmul, as in PyTorch
            r = _tf_method("matmul", (input, other))
            return not_tensor(input, other) if r is _NO_DISPATCH else r
        if mixed:
            raise _matmul_dtype_error(input, other)
        if a == 2 and b == 2:
            return _mm(input, other)
        if a == 1 and b == 1:
            return _dot(input, other)
        if a == 2 and b == 1:
            return _mv(input, other)
        if a == 1 and b == 2:
            return _vm(input, other)
        return _matmul(input, other)
    return matmul


from ._argcheck import _NO_DISPATCH  # noqa: E402
from ..autograd._prof_state import HUB as _HUB  # noqa: E402


def _method_error(input, other):
    from ._argcheck import argument_error
    raise argument_error("matmul", ("input", "other"), input, other, method=True) from None


matmul = _matmul_entry()
matmul_operator = _matmul_entry(lambda input, other: NotImplemented, True)  # Tensor.__matmul__
matmul_method = _matmul_entry(_method_error, True)  # Tensor.matmul (positions without self)
matmul_method._torch_method = matmul  # (_argcheck.wrap_methods: nothing to wrap)


def _in_out_dtype(name, input, out_dtype, result):
    """PyTorch's out_dtype overloads (mm(input, mat2, out_dtype), ...): kernels of its GPU
    backends only (a CPU tensor gets its dispatcher's NotImplementedError); the product in
    out_dtype, which must be the input's dtype or float32 for a float16 input."""
    if input.device.type == "cpu":
        raise NotImplementedError(
            f"Could not run 'aten::{name}.dtype' with arguments from the 'CPU' backend. This "
            "could be because the operator doesn't exist for this backend, or was omitted "
            "during the selective/custom build process (if using custom build).")
    from .. import _dtype as D
    if out_dtype is not input.dtype and not (
            out_dtype is D.float32 and input.dtype is D.float16):
        raise RuntimeError("out_dtype must be the same as input dtype or fp32 for fp16/bf16 "
                           "inputs")
    return result().to(out_dtype)


def mm(input, mat2, out_dtype=None):
    if input._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if input.dtype is not mat2.dtype:
        raise _matmul_dtype_error(input, mat2)
    if out_dtype is not None:
        return _in_out_dtype("mm", input, out_dtype, lambda: _mm(input, mat2))
    return _mm(input, mat2)


def bmm(input, mat2, out_dtype=None):
    if out_dtype is not None:
        return _in_out_dtype("bmm", input, out_dtype, lambda: bmm(input, mat2))
    if input._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    a, b = input._data.shape, mat2._data.shape
    if a[0] != b[0] or a[2] != b[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a[0]}, {a[2]}] but got: [{b[0]}, {b[1]}].")
    if input.dtype is not mat2.dtype:
        raise _bmm_dtype_error(input.dtype, mat2.dtype)
    return _bmm(input, mat2)


def mv(input, vec):
    if input._data.ndim == 0:  # PyTorch sizes its output from input.size(0) first
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if input._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {vec._data.ndim}, "
                           f"{input._data.ndim}, {vec._data.ndim}")
    if input.dtype is not vec.dtype:
        raise _matmul_dtype_error(input, vec)
    return _mv(input, vec)


def dot(input, tensor):
    other = tensor
    if input._data.ndim != 1 or other._data.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input._data.ndim}D and {other._data.ndim}D tensors")
    if input.dtype is not other.dtype:
        raise _dot_dtype_error(input.dtype, other.dtype)
    return _dot(input, other)


def _dims_str(shape):
    return "x".join(map(str, shape))


# ---------------------------------------------------------------- products

_vdot = defop("vdot", lambda xp, self, other: xp.vdot(self, other), promote="binary",
              self=lambda grad, other: _cj(grad) * other, other=lambda grad, self: grad * self)


def vdot(input, other):
    if input._data.ndim != 1 or other._data.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input._data.ndim}D and {other._data.ndim}D tensors")
    if input.dtype is not other.dtype:  # PyTorch's vdot reports as dot
        raise _dot_dtype_error(input.dtype, other.dtype)
    if input._data.shape != other._data.shape:
        raise RuntimeError(
            "inconsistent tensor size, expected tensor [%d] and src [%d] to have the same number "
            "of elements, but got %d and %d elements respectively" % (
                input._data.shape[0], other._data.shape[0], input._data.shape[0],
                other._data.shape[0]))
    return _vdot(input, other)


def outer(input, vec2):
    if input._data.ndim != 1 or vec2._data.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input._data.ndim}-D"
                           if input._data.ndim != 1 else
                           f"outer: Expected 1-D argument vec2, but got {vec2._data.ndim}-D")
    return unsqueeze(input, 1) * vec2


outer._raw = lambda input, vec2: input[:, None] * vec2  # (formulas on arrays: ops/_raw.py)
ger = outer


def _scaled(x, alpha):
    return x if alpha == 1 else x * alpha


def _coefficient(v, dtype):
    """beta or alpha as ATen's kernels read it for a result of NumPy dtype `dtype`: truncated
    toward zero for integers (addmm(..., beta=1.7) of int64 tensors scales by 1), a bool for
    bool results (then + is or, * is and)."""
    if dtype.kind in "iu":
        return int(v.real) if isinstance(v, complex) else int(v)
    if dtype.kind == "b":
        return bool(v)
    return v


def _coefficients(input, beta, alpha):
    """(beta, alpha) in the input's kind, so that they take no part in the result's dtype."""
    dt = input.dtype.np
    return _coefficient(beta, dt), _coefficient(alpha, dt)


# Note [Few rows against a transposed matrix]
# A linear layer's product x @ W.T, W (N, K) row-major, for a few rows of x (generation's (T, C)
# activations, T up to the block): in the OpenBLAS of NumPy's wheels with its AVX-512 (SkylakeX)
# kernels, the same product formed transposed, (W @ x.T).T, takes 0.45-0.9 of the time for
# float32, 8 to 40 rows, N from 128 to 1024 (256 up below 12 rows) and K from 128 up, on one
# thread and on two, and gives the same bits (docs/performance.md has the table; the test checks
# the bits wherever the route is taken). Outside that box, and under other kernels (Haswell's:
# no gain), NumPy's own call. The result is made row-major again (an (M, N) copy), as the plain
# product's is.
_FEW_ROWS_CORES = frozenset(("SkylakeX",))
_FEW_ROWS = _blas.CORE in _FEW_ROWS_CORES


def few_rows_mm(xp, a, b):
    """xp.matmul(a, b); for two 2-d arrays in the box of Note [Few rows against a transposed
    matrix], as the transposed product."""
    if _FEW_ROWS and type(a) is _ndarray and type(b) is _ndarray and a.ndim == b.ndim == 2 \
            and 8 <= a.shape[0] <= 40 and a.dtype.char == b.dtype.char == "f" and \
            128 <= b.shape[1] <= 1024 and b.shape[0] >= 128 and \
            (a.shape[0] >= 12 or b.shape[1] >= 256) and a.flags.c_contiguous and \
            b.flags.f_contiguous and not b.flags.c_contiguous:
        return xp.ascontiguousarray(xp.matmul(b.T, a.T).T)
    return xp.matmul(a, b)


def _addmm_fwd(xp, self, mat1, mat2, beta=1, alpha=1):
    prod = few_rows_mm(xp, mat1, mat2)
    beta, alpha = _coefficient(beta, prod.dtype), _coefficient(alpha, prod.dtype)
    if beta == 1 and alpha == 1 and prod.dtype == self.dtype:
        prod += self  # (in place into the fresh product: a linear layer's bias, one pass less)
        return prod
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return (prod + xp.zeros_like(self)).astype(prod.dtype, copy=False)
    return (prod + (self if beta == 1 else self * beta)).astype(prod.dtype, copy=False)


addmm_ = defop("addmm", _addmm_fwd, promote="binary",
               self=lambda grad, beta: _scaled(grad, beta),
               mat1=lambda grad, mat1, mat2, alpha: _scaled(_mm_grad(grad, mat2, mat1, 0),
                                                            _cj(alpha)),
               mat2=lambda grad, mat1, mat2, alpha: _scaled(_mm_grad(grad, mat1, mat2, 1),
                                                            _cj(alpha)))


def _transposed(t):
    """A 2-d tensor laid out as a transpose (column-major), like weight.t()."""
    return _transposed_array(t._data)


def _transposed_array(a):
    f = a.flags
    return f.f_contiguous and not f.c_contiguous


def _mm_grad(grad, other, target, i):
    """mm's input gradients in PyTorch's operation order: for an input laid out as a transpose
    the product is formed transposed (so float32 sums round as PyTorch's do)."""
    if i == 0:
        return _mH(other @ _mH(grad)) if _transposed(target) else grad @ _mH(other)
    return _mH(_mH(grad) @ other) if _transposed(target) else _mH(other) @ grad


# addmm's formulas (a linear layer's AddmmBackward0) on arrays when no graph of the backward is
# wanted (ops/_raw.py): the same ops' forwards on the same arrays, in the same order, so the
# same bits; host float32/float64 arrays only (others: the recorded formulas).

def _mm_grad_raw(grad, other, target, i):
    _raw.host_arrays(grad, other, real_float=True)
    mm = _raw._op_caller(_mm._op)
    if i == 0:
        return mm(other, grad.T).T if _transposed_array(target) else mm(grad, other.T)
    return mm(grad.T, other).T if _transposed_array(target) else mm(other.T, grad)


def _scaled_raw(x, alpha):
    if alpha == 1:
        return x
    _raw.host_arrays(x, real_float=True)
    return _raw._op_caller(_mul._op)(x, alpha)


_mm_grad._raw, _scaled._raw = _mm_grad_raw, _scaled_raw


def _check_mm(m1, m2, names=("mat1", "mat2")):
    if m1._data.ndim != 2:
        raise RuntimeError(f"{names[0]} must be a matrix, got {m1._data.ndim}-D tensor")
    if m2._data.ndim != 2:
        raise RuntimeError(f"{names[1]} must be a matrix, got {m2._data.ndim}-D tensor")
    if m1._data.shape[1] != m2._data.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                           f"({_dims_str(m1._data.shape)} and {_dims_str(m2._data.shape)})")


def _check_add_shape(input, shape):
    """`input` must expand to the product's shape (PyTorch's expand message otherwise)."""
    ish = input._data.shape
    lead = len(shape) - len(ish)
    for i, s_ in reversed(list(enumerate(ish))):  # PyTorch reports the last mismatch
        if lead < 0 or (s_ != 1 and s_ != shape[i + lead]):
            raise RuntimeError(
                f"The expanded size of the tensor ({shape[i + lead] if lead >= 0 else 1}) must "
                f"match the existing size ({s_}) at non-singleton dimension {i + max(lead, 0)}.  "
                f"Target sizes: [{', '.join(map(str, shape))}].  Tensor sizes: "
                f"[{', '.join(map(str, ish))}]")


def addmm(input, mat1, mat2, out_dtype=None, *, beta=1, alpha=1):
    if out_dtype is not None:
        return _in_out_dtype("addmm", input, out_dtype,
                             lambda: addmm(input, mat1, mat2, beta=beta, alpha=alpha))
    if input.dtype is not mat1.dtype or mat1.dtype is not mat2.dtype:  # before the shapes
        _check_addmm_dtypes(input, mat1, mat2)
    _check_mm(mat1, mat2)
    _check_add_shape(input, (mat1._data.shape[0], mat2._data.shape[1]))
    return addmm_(input, mat1, mat2, *_coefficients(input, beta, alpha))


def _addmv_fwd(xp, self, mat, vec, beta=1, alpha=1):
    return _addmm_fwd(xp, self, mat, vec, beta, alpha)


addmv_ = defop("addmv", _addmv_fwd, promote="binary",
               self=lambda grad, beta: _scaled(grad, beta),
               mat=lambda grad, vec, alpha: _scaled(unsqueeze(grad, 1) * _cj(vec), _cj(alpha)),
               vec=lambda grad, mat, alpha: _scaled(_mH(mat) @ grad, _cj(alpha)))


def addmv(input, mat, vec, *, beta=1, alpha=1):
    if mat._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input._data.ndim}, "
                           f"{mat._data.ndim}, {vec._data.ndim}")
    if mat._data.shape[1] != vec._data.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input._data.shape[0] if input._data.ndim else 1}), "
                           f"mat ({_dims_str(mat._data.shape)}), vec ({vec._data.shape[0]})")
    _check_add_shape(input, (mat._data.shape[0],))
    if input.dtype is not mat.dtype or mat.dtype is not vec.dtype:
        raise _addmv_dtype_error(input.dtype, mat.dtype, vec.dtype)
    return addmv_(input, mat, vec, *_coefficients(input, beta, alpha))


def _baddbmm_fwd(xp, self, batch1, batch2, beta=1, alpha=1):
    return _addmm_fwd(xp, self, batch1, batch2, beta, alpha)


baddbmm_ = defop("baddbmm", _baddbmm_fwd, promote="binary",
                 self=lambda grad, beta: _scaled(grad, beta),
                 batch1=lambda grad, batch2, alpha: _scaled(grad @ _mH(batch2), _cj(alpha)),
                 batch2=lambda grad, batch1, alpha: _scaled(_mH(batch1) @ grad, _cj(alpha)))


def _check_bmm(b1, b2):
    if b1._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b2._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    a, b = b1._data.shape, b2._data.shape
    if a[0] != b[0] or a[2] != b[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a[0]}, {a[2]}] but got: [{b[0]}, {b[1]}].")


def baddbmm(input, batch1, batch2, out_dtype=None, *, beta=1, alpha=1):
    if out_dtype is not None:
        return _in_out_dtype("baddbmm", input, out_dtype,
                             lambda: baddbmm(input, batch1, batch2, beta=beta, alpha=alpha))
    if input.dtype is not batch1.dtype:  # before the shapes; batch1 against batch2 after them
        raise RuntimeError(f"Input dtypes must be the same, got: input {_cname(input.dtype)}, "
                           f"batch1: {_cname(batch1.dtype)}, batch2: {_cname(batch2.dtype)}")
    _check_bmm(batch1, batch2)
    b1, b2 = batch1._data.shape, batch2._data.shape
    _check_add_shape(input, (b1[0], b1[1], b2[2]))
    if batch1.dtype is not batch2.dtype:
        raise _bmm_dtype_error(batch1.dtype, batch2.dtype, "baddbmm")
    return baddbmm_(input, batch1, batch2, *_coefficients(input, beta, alpha))


def _addbmm_fwd(xp, self, batch1, batch2, beta=1, alpha=1):
    prod = xp.matmul(batch1, batch2).sum(0)
    return _addmm_fwd(xp, self, prod, xp.eye(prod.shape[1], dtype=prod.dtype), beta, alpha)


addbmm_ = defop("addbmm", _addbmm_fwd, promote="binary",
                self=lambda grad, beta: _scaled(grad, beta),
                batch1=lambda grad, batch2, alpha: _scaled(unsqueeze(grad, 0) @ _mH(batch2),
                                                           _cj(alpha)),
                batch2=lambda grad, batch1, alpha: _scaled(_mH(batch1) @ unsqueeze(grad, 0),
                                                           _cj(alpha)))


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    _check_bmm(batch1, batch2)
    b1, b2 = batch1._data.shape, batch2._data.shape
    _check_add_shape(input, (b1[1], b2[2]))
    if input.dtype is not batch1.dtype or batch1.dtype is not batch2.dtype:
        _check_addmm_dtypes(input, batch1, batch2)
    return addbmm_(input, batch1, batch2, *_coefficients(input, beta, alpha))


# ---------------------------------------------------------------- einsum, tensordot, kron

_EINSUM_OPS = {}


def _einsum_fwd_n(n):
    import inspect
    P = inspect.Parameter
    params = [P("xp", P.POSITIONAL_OR_KEYWORD), P("equation", P.POSITIONAL_OR_KEYWORD)]
    params += [P(f"t{i}", P.POSITIONAL_OR_KEYWORD) for i in range(n)]

    def forward(xp, equation, *ops):
        r = xp.einsum(equation, *ops)
        if any(xp.may_share_memory(r, o) for o in ops):  # einsum may return a view
            r = r.copy()
        return r
    forward.__signature__ = inspect.Signature(params)
    return forward


def _einsum_grad_n(n):
    """One joint formula: d/d operand i = einsum(grad, the other operands, conjugated) ->
    operand i's subs."""
    import inspect
    P = inspect.Parameter
    names = ["grad", "equation"] + [f"t{i}" for i in range(n)]

    def backward(grad, equation, *ops):
        ins, out = equation.split("->")
        subs = ins.split(",")
        res = []
        for i in range(n):
            if not ops[i].requires_grad:
                res.append(None)
                continue
            mine = subs[i]  # distinct letters: einsum() took repeated ones as diagonals
            others = [subs[j] for j in range(n) if j != i]
            avail = set(out).union(*others) if others else set(out)
            keep = "".join(c for c in mine if c in avail)
            eq = ",".join([out] + others) + "->" + keep
            # complex operands enter conjugated (Note [Complex gradients] in ops/complex.py)
            g = einsum(eq, grad, *[_cj(ops[j]) for j in range(n) if j != i])
            if keep != mine:
                sizes = {c: s_ for c, s_ in zip(mine, ops[i].shape)}
                shape1 = tuple(sizes[c] if c in keep else 1 for c in mine)
                g = expand(reshape(g, shape1), tuple(sizes[c] for c in mine))
            res.append(g)
        return tuple(res)
    backward.__signature__ = inspect.Signature([P(x, P.POSITIONAL_OR_KEYWORD) for x in names])
    return backward


def _check_einsum(equation, operands):
    """ATen's einsum parser's errors, in its order (NumPy's would say other things): subscripts
    and ellipses of the inputs, the operand count, the output's subscripts, then the sizes."""
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    op, dots, labels = 0, 0, [[]]
    for i, c in enumerate(lhs):
        if c == " ":
            continue
        if c == ".":
            dots += 1
            if dots > 3 or (dots == 3 and "..." not in lhs):
                raise RuntimeError(f"einsum(): found '.' for operand {op} that is not part of "
                                   "any ellipsis")
            continue
        if dots % 3:
            raise RuntimeError(f"einsum(): found '.' for operand {op} that is not part of any "
                               "ellipsis")
        if c == ",":
            op, dots = op + 1, 0
            labels.append([])
            if op >= len(operands):
                raise RuntimeError("einsum(): fewer operands were provided than specified in "
                                   "the equation")
            continue
        if not ("a" <= c <= "z" or "A" <= c <= "Z"):
            raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation "
                               "string, subscripts must be in [a-zA-Z]")
        labels[op].append(c)
    if dots % 3:
        raise RuntimeError(f"einsum(): found '.' for operand {op} that is not part of any "
                           "ellipsis")
    if op + 1 < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    if arrow >= 0:
        seen = set()
        start = arrow + 2
        for i, c in enumerate(equation[start:]):
            if c in " .":
                continue
            if not ("a" <= c <= "z" or "A" <= c <= "Z"):
                raise RuntimeError(f"einsum(): invalid subscript given at index {start + i} in "
                                   "the equation string, subscripts must be in [a-zA-Z]")
            if c in seen:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in "
                                   "the output")
            if not any(c in ls for ls in labels):
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                                   "equation for any input operand")
            seen.add(c)
    sizes = {}
    for k, (ls, t) in enumerate(zip(labels, operands)):
        shape = t._data.shape
        if "..." in lhs.split(",")[k]:
            continue   # (the ellipsis case is _normalize_einsum's)
        if len(ls) != len(shape):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({len(ls)}) does not "
                f"match the number of dimensions ({len(shape)}) for operand {k} and no "
                "ellipsis was given")
        for c, n in zip(ls, shape):
            m = sizes.get(c)
            if m is not None and m != n and m != 1 and n != 1:
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {k} which "
                                   f"does not broadcast with previously seen size {m}")
            if m is None or m == 1:
                sizes[c] = n


def _normalize_einsum(equation, operands):
    if isinstance(equation, str):
        _check_einsum(equation, operands)
    eq = equation.replace(" ", "")
    if "->" in eq:
        ins, out = eq.split("->")
    else:
        ins, out = eq, None
    subs = ins.split(",")
    if len(subs) != len(operands):
        raise RuntimeError(
            f"einsum(): more operands were provided than specified in the equation"
            if len(operands) > len(subs) else
            "einsum(): fewer operands were provided than specified in the equation")
    used = set(c for c in eq if c.isalpha())
    free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in used]
    ell_n = 0
    for sub, op in zip(subs, operands):
        if "..." in sub:
            ell_n = builtins.max(ell_n, op._data.ndim - (len(sub) - 3))
    ell = "".join(free[:ell_n])
    new_subs = []
    for sub, op in zip(subs, operands):
        if "..." in sub:
            k = op._data.ndim - (len(sub) - 3)
            sub = sub.replace("...", ell[ell_n - k:] if k else "")
        if len(sub) != op._data.ndim:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({len(sub)}) does not match "
                f"the number of dimensions ({op._data.ndim}) for operand "
                f"{list(operands).index(op)} and no ellipsis was given")
        new_subs.append(sub)
    if out is None:
        counts = {}
        for sub in new_subs:
            for c in sub:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    return ",".join(new_subs) + "->" + out


def _take_diagonals(eq, operands):
    """A subscript repeated within one operand ("ii") selects a diagonal: take it with the
    (differentiable) diagonal view first, so the einsum op sees distinct subscripts only."""
    ins, out = eq.split("->")
    subs = ins.split(",")
    ops = list(operands)
    for i, sub in enumerate(subs):
        while len(set(sub)) != len(sub):
            c = next(ch for ch in sub if sub.count(ch) > 1)
            p = sub.index(c)
            q = sub.index(c, p + 1)
            ops[i] = _diagonal(ops[i], 0, p, q)
            sub = sub[:p] + sub[p + 1:q] + sub[q + 1:] + c
        subs[i] = sub
    return ",".join(subs) + "->" + out, tuple(ops)


def _einsum_path(eq, operands):
    """The pairs PyTorch contracts, in order, and whether each result goes to the back of the
    list (opt_einsum's path, where opt_einsum is installed and torch.backends.opt_einsum is
    enabled, for more than two operands) or to its front (left to right)."""
    n = len(operands)
    if n > 2:
        from .. import backends
        flags = backends.opt_einsum
        if flags.enabled and flags.is_available():
            import opt_einsum
            path = opt_einsum.contract_path(eq, *[tuple(o.shape) for o in operands],
                                            shapes=True, optimize=flags.strategy or "auto")[0]
            return [tuple(sorted(p)) for p in path], True
    return [(0, 1)] * (n - 1), False


def _check_einsum_dtypes(eq, operands):
    """ATen's einsum contracts the operands pairwise (sumproduct_pair): a pair that sums over
    shared dims goes through bmm, which refuses mixed dtypes (naming its left operand's type
    first); a pair without one is a promoting mul. Which pair comes first, and which side is
    left, follow ATen: opt_einsum's path when it is in use (results appended), else left to
    right (results in front); dims of size 1 count as absent; bmm's operands are swapped when
    every dim only the right one has comes before every dim only the left one has."""
    from .._dtype import promote_types
    ins, out = eq.split("->")
    subs = ins.split(",")
    order = list(out) + sorted({c for sub in subs for c in sub} - set(out),
                               key=lambda c: (c.islower(), c))
    pos = {c: i for i, c in enumerate(order)}
    ops = [({c for c, n in zip(sub, o.shape) if n != 1}, o.dtype)
           for sub, o in zip(subs, operands)]
    counts = {c: sum(c in dims for dims, _ in ops) for c in order}
    path, back = _einsum_path(eq, operands)
    for i, j in path:
        (left, da), (right, db) = ops[i], ops[j]
        del ops[j], ops[i]
        summed = []
        for c in order[len(out):]:
            if c in left and c in right:
                counts[c] -= 1
                if counts[c] == 1:
                    summed.append(c)
                    counts[c] = 0
            elif counts[c] == 1 and (c in left or c in right):
                (left if c in left else right).discard(c)
                counts[c] = 0
        if summed and da is not db:
            lo = [pos[c] for c in order if c not in summed and c in left and c not in right]
            ro = [pos[c] for c in order if c not in summed and c not in left]
            if lo and ro and ro[-1] < lo[0]:
                da, db = db, da
            raise _bmm_dtype_error(da, db)
        result = ((left | right) - set(summed), promote_types(da, db))
        if back:
            ops.append(result)
        else:
            ops.insert(0, result)


def einsum(equation, *operands):
    """torch.einsum(equation, *operands) (also einsum(equation, [operands]))."""
    if not operands:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    eq = _normalize_einsum(equation, operands)
    eq, operands = _take_diagonals(eq, operands)
    n = len(operands)
    if n > 1 and any(o.dtype is not operands[0].dtype for o in operands):
        _check_einsum_dtypes(eq, operands)
    op = _EINSUM_OPS.get(n)
    if op is None:
        op = _EINSUM_OPS[n] = defop("einsum", _einsum_fwd_n(n), promote="binary",
                                    backward=_einsum_grad_n(n),
                                    inputs=tuple(f"t{i}" for i in range(n)))
    return op(eq, *operands)


def tensordot(a, b, dims=2, out=None):
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da = list(range(a._data.ndim - dims, a._data.ndim))
        db = list(range(dims))
    else:
        da, db = dims
        if isinstance(da, int):
            da, db = [da], [db]
        if isinstance(da, Tensor):
            da, db = da.tolist(), db.tolist()
        da = [_wrap_dim(d, a._data.ndim) for d in da]
        db = [_wrap_dim(d, b._data.ndim) for d in db]
    for x, y in zip(da, db):
        sx, sy = a._data.shape[x], b._data.shape[y]
        if sx != sy and sy == 1:        # (a size-1 dim contracts with the other's sum, as
            a = a.sum(x, keepdim=True)  # ATen's tensordot)
        elif sx != sy and sx == 1:
            b = b.sum(y, keepdim=True)
        elif sx != sy:
            shown = x - a._data.ndim if isinstance(dims, int) else x
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a._data.shape[x]} in dim {shown} and second has size "
                               f"{b._data.shape[y]} in dim {y}")
    fa = [d for d in range(a._data.ndim) if d not in da]
    fb = [d for d in range(b._data.ndim) if d not in db]
    sa = [a._data.shape[d] for d in fa]
    sb = [b._data.shape[d] for d in fb]
    k = 1
    for d in da:
        k *= a._data.shape[d]
    m = n = 1  # explicit sizes, not -1: reshape cannot infer a dim of an empty tensor
    for d in sa:
        m *= d
    for d in sb:
        n *= d
    ma = reshape(permute(a, fa + da), (m, k))
    mb = reshape(permute(b, db + fb), (k, n))
    return reshape(ma @ mb, tuple(sa + sb))


def kron(input, other):
    nd = builtins.max(input._data.ndim, other._data.ndim)
    a = reshape(input, (1,) * (nd - input._data.ndim) + input._data.shape)
    b = reshape(other, (1,) * (nd - other._data.ndim) + other._data.shape)
    sa, sb = a._data.shape, b._data.shape
    ea = reshape(a, tuple(x for s_ in sa for x in (s_, 1)))
    eb = reshape(b, tuple(x for s_ in sb for x in (1, s_)))
    return reshape(ea * eb, tuple(x * y for x, y in zip(sa, sb)))


# ---------------------------------------------------------------- trace, diag, tril, triu

def _trace_grad(grad, self_shape):
    k = builtins.min(self_shape)
    return _diagonal_backward(expand(grad, (k,)), self_shape, 0, 0, 1)


_trace = defop("trace", lambda xp, self: xp.asarray(xp.trace(self)).astype(
    self.dtype if self.dtype.kind in "fc" else "int64"), self=_trace_grad)


def trace(input):
    if input._data.ndim != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim "
                           f"{input._data.ndim}")
    return _trace(input)


_diag_copy = defop("diag", lambda xp, self, diagonal: _diag_view_copy(xp, self, diagonal),
                   node_name="DiagonalBackward0_copy",
                   self=lambda grad, self_shape, diagonal: _diagonal_backward(
                       grad, self_shape, diagonal, 0, 1))


def _diag_view_copy(xp, self, diagonal):
    from .shape import _diag_view_fwd
    return _diag_view_fwd(xp, self, diagonal, 0, 1).copy()


def diag(input, diagonal=0):
    nd = input._data.ndim
    if nd == 1:
        return diag_embed(input, diagonal, 0, 1)
    if nd == 2:
        return _diag_copy(input, diagonal)
    raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{nd}D")


tril_ = defop("tril", lambda xp, self, diagonal=0: xp.tril(self, diagonal),
              self=lambda grad, diagonal: tril_(grad, diagonal))
triu_ = defop("triu", lambda xp, self, diagonal=0: xp.triu(self, diagonal),
              self=lambda grad, diagonal: triu_(grad, diagonal))


def tril(input, diagonal=0):
    if diagonal.__class__ is float:  # (an int in PyTorch's parser; NumPy would take it)
        raise TypeError("tril(): argument 'diagonal' (position 2) must be int, not float")
    if input._data.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return tril_(input, diagonal)


def triu(input, diagonal=0):
    if diagonal.__class__ is float:
        raise TypeError("triu(): argument 'diagonal' (position 2) must be int, not float")
    if input._data.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return triu_(input, diagonal)


# ---------------------------------------------------------------- linalg: inverse, det, solve

class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a numerical failure (singular, not positive-definite)."""


LinAlgError.__name__ = LinAlgError.__qualname__ = "_LinAlgError"   # (PyTorch's: torch._C's)


def _check_square(A, fname):
    if A._data.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor A must have at least 2 dimensions.")
    if A._data.shape[-1] != A._data.shape[-2]:
        raise RuntimeError(f"{fname}: A must be batches of square matrices, but they are "
                           f"{A._data.shape[-2]} by {A._data.shape[-1]} matrices")
    if not A.dtype.is_floating_point and not A.dtype.is_complex:
        from ._inplace import _type_name
        raise RuntimeError(f"{fname}: Expected a floating point or complex tensor as input. "
                           f"Got {_type_name(A.dtype)}")


def _singular_check(xp, A, fname):
    """PyTorch's error when LU finds an exactly zero pivot."""
    try:
        return xp.linalg.inv(A)
    except xp.linalg.LinAlgError:
        raise LinAlgError(
            f"{fname}: The diagonal element {_zero_pivot(xp, A)} is zero, the inversion could "
            "not be completed because the input matrix is singular.") from None


def _zero_pivot(xp, A):
    a = A.reshape(-1, A.shape[-2], A.shape[-1])
    for m in a:
        try:
            xp.linalg.inv(m)
        except xp.linalg.LinAlgError:
            u = m.astype("float64").copy()
            n = u.shape[0]
            for k in range(n):
                p = k + int(xp.argmax(xp.abs(u[k:, k])))
                if u[p, k] == 0:
                    return k + 1
                u[[k, p]] = u[[p, k]]
                u[k + 1:] -= xp.outer(u[k + 1:, k] / u[k, k], u[k])
            return n
    return 1


_inv = defop("linalg_inv", lambda xp, self: _singular_check(xp, self, "linalg.inv"),
             node_name="LinalgInvExBackward0",
             self=lambda grad, result: -(_mH(result) @ grad @ _mH(result)))


def inv(A, *, out=None):
    _check_square(A, "linalg.inv")
    return _inv(A)


def _det_grad(grad, self, result):
    if bool((result._data == 0).any()):  # (singular: no inverse; the cofactors by the SVD)
        return _det_grad_singular(grad, self)
    g = unsqueeze(unsqueeze(grad * _cj(result), -1), -1)
    return g * _mH(inv(self))


def _det_grad_singular(grad, self):
    """det's gradient at a singular matrix, as PyTorch's: the cofactor matrix from the SVD
    A = U diag(S) Vh, grad * conj(det U det Vh) U diag(prod_{j != i} S_j) Vh (a product that
    skips S_i, so a zero singular value does not zero its own cofactor)."""
    from .reduction import cumprod
    from .shape import cat, _flip
    U, S, Vh = _svd(self, False)
    alpha = _cj(_det(U) * _det(Vh))
    one = S[..., :1] * 0 + 1
    n = S.shape[-1]
    left = cumprod(cat([one, S[..., :n - 1]], -1), -1)  # prod_{j < i} S_j
    right = _flip(cumprod(cat([one, _flip(S, (S.ndim - 1,))[..., :n - 1]], -1), -1),
                  (S.ndim - 1,))  # prod_{j > i} S_j
    d = left * right * unsqueeze(grad * alpha, -1)
    return (U * unsqueeze(d, -2)) @ Vh


def _det_fwd(xp, self):
    # The product of the LU pivots, as torch computes it: NumPy's det goes through exp(logdet)
    # and turns det([[2, 1], [1, 3]]) into 5.000000000000001.
    n = self.shape[-1]
    batch = int(xp.prod(xp.asarray(self.shape[:-2], dtype="int64")))
    a = self.reshape(batch, n, n).astype(self.dtype, copy=True)
    rows = xp.arange(a.shape[0])
    det = xp.ones(a.shape[0], dtype=a.dtype)
    for k in range(n):
        p = k + xp.argmax(xp.abs(a[:, k:, k]), axis=1)
        det = xp.where(p != k, -det, det)
        row_k = a[rows, k].copy()
        a[rows, k] = a[rows, p]
        a[rows, p] = row_k
        piv = a[:, k, k]
        det = det * piv
        f = a[:, k + 1:, k] * (1 / xp.where(piv == 0, 1, piv))[:, None]   # LAPACK scales
        a[:, k + 1:, k:] -= f[:, :, None] * a[:, k, None, k:]
    return det.reshape(self.shape[:-2])


_det = defop("linalg_det", _det_fwd, node_name="LinalgDetBackward0", self=_det_grad)


def det(A, *, out=None):
    _check_square(A, "linalg.det")
    return _det(A)


slogdet_type = _return_type("linalg_slogdet", ("sign", "logabsdet"))


def _slogdet_fwd(xp, self):
    s_, l_ = xp.linalg.slogdet(self)
    return xp.asarray(s_), xp.asarray(l_)


def _slogdet_grad(grad, self, result):
    # slogdet_backward: g A^{-H}, g the logabsdet's gradient plus i Im(grad_sign conj(sign))
    # for complex inputs (checked against finite differences); a real sign carries no
    # gradient, but its output requires grad, as PyTorch's
    g_sign, g = grad
    if self.dtype.is_complex and g_sign is not None:
        from .complex import imag
        turn = imag(g_sign * _cj(result[0])) * 1j
        g = turn if g is None else g + turn
    if g is None:
        return None
    return unsqueeze(unsqueeze(g, -1), -1) * _mH(inv(self))


_slogdet = defop("linalg_slogdet", _slogdet_fwd, outputs=2,
                 node_name="LinalgSlogdetBackward0", self=_slogdet_grad)


def slogdet(A, *, out=None):
    _check_square(A, "linalg.slogdet")
    s_, l_ = _slogdet(A)
    return slogdet_type(s_, l_)


def logdet(input):
    """torch.logdet: log(det(A)); nan for a negative determinant."""
    _check_square(input, "logdet")
    s_, l_ = slogdet(input)
    if input.dtype.is_complex:      # (ATen: log(sign) + logabsdet)
        from .pointwise import log
        return log(s_) + l_
    if (s_._data < 0).any():
        from .pointwise import where
        return where(s_ < 0, float("nan"), l_)
    return l_


def _as_matrices(xp, A, B):
    """A and the matrix (batch) B broadcast to one batch shape: NumPy 1 takes a B of one dim
    fewer than A for a batch of vectors (NumPy 2 only a 1-d B), and CuPy's linalg.solve
    broadcasts no batch dims at all."""
    if A.shape[:-2] == B.shape[:-2]:
        return A, B
    batch = xp.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    return xp.broadcast_to(A, batch + A.shape[-2:]), xp.broadcast_to(B, batch + B.shape[-2:])


def _solve_fwd(xp, A, B, vec, left=True):
    A, B = _as_matrices(xp, A, B[..., None] if vec else B)
    try:
        if vec:
            return xp.linalg.solve(A, B)[..., 0]
        if not left:  # X A = B  <=>  A^T X^T = B^T
            return xp.swapaxes(xp.linalg.solve(xp.swapaxes(A, -1, -2), xp.swapaxes(B, -1, -2)),
                               -1, -2)
        return xp.linalg.solve(A, B)
    except xp.linalg.LinAlgError:
        raise LinAlgError(
            f"torch.linalg.solve: The solver failed because the input matrix is singular.") \
            from None


def _solve_grads(grad, A, B, vec, left, result):
    if left:
        gB = solve(_mH(A), grad)                      # A^{-H} grad
        gA = None
        if A.requires_grad:
            gA = (-(unsqueeze(gB, -1) * unsqueeze(_cj(result), -2)) if vec
                  else -(gB @ _mH(result)))
    else:
        gB = _mH(solve(A, _mH(grad)))                 # grad A^{-H}
        gA = -(_mH(result) @ gB) if A.requires_grad else None
    return gA, gB if B.requires_grad else None


_solve = defop("linalg_solve", _solve_fwd, promote="binary", node_name="LinalgSolveExBackward0",
               backward=_solve_grads, inputs=("A", "B"))


def _check_solve_dtypes(A, B):
    if A.dtype is not B.dtype:
        from ._inplace import _type_name
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A "
                           f"of type {_type_name(A.dtype)} and B of type {_type_name(B.dtype)} "
                           "instead")


def _check_solve(A, B, left):
    """linalg.solve's (and solve_ex's) argument checks; whether B is a vector (batch)."""
    _check_solve_dtypes(A, B)
    _check_square(A, "linalg.solve")
    n = A._data.shape[-1]
    vec = left and (B._data.ndim == 1 or (B._data.ndim == A._data.ndim - 1
                                          and B._data.shape == A._data.shape[:-1]))
    k = B._data.shape[-1] if vec or not left else B._data.shape[-2]
    if k != n:
        raise RuntimeError(
            f"linalg.solve: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({_dims_str(A._data.shape[-2:])} and "
            f"{_dims_str(B._data.shape[-1:] + (1,) if vec else B._data.shape[-2:])})")
    return vec


def solve(A, B, *, left=True, out=None):
    return _solve(A, B, _check_solve(A, B, left), left)


# ---------------------------------------------------------------- decompositions

def _cholesky_fwd(xp, self, upper):
    try:
        L = xp.linalg.cholesky(self)
    except xp.linalg.LinAlgError:
        raise LinAlgError(_chol_error(xp, self)) from None
    return xp.swapaxes(L, -1, -2).conj().copy() if upper else L   # U = L^H


def _chol_error(xp, A):
    a = A.reshape(-1, A.shape[-2], A.shape[-1])
    for b, m in enumerate(a):
        for k in range(1, m.shape[0] + 1):
            try:
                xp.linalg.cholesky(m[:k, :k])
            except xp.linalg.LinAlgError:
                where = f"(Batch element {b}): " if A.ndim > 2 else ""
                return (f"linalg.cholesky: {where}The factorization could not be completed "
                        f"because the input is not positive-definite (the leading minor of order "
                        f"{k} is not positive-definite).")
    return "linalg.cholesky: The factorization could not be completed because the input is not " \
           "positive-definite."


def _cholesky_grad(grad, result, upper):
    # FunctionsManual's cholesky_backward (conjugate transposes: complex inputs too)
    L = _mH(result) if upper else result
    gL = _mH(grad) if upper else grad
    gA = tril(_mH(L) @ gL)
    gA = 0.5 * (gA + _mH(tril(gA, -1)))
    gA = solve(_mH(L), gA)             # L^{-H} gA
    gA = _mH(solve(_mH(L), _mH(gA)))   # ... L^{-1}
    return gA


_cholesky = defop("linalg_cholesky", _cholesky_fwd, node_name="LinalgCholeskyExBackward0",
                  self=_cholesky_grad)


def cholesky(A, *, upper=False, out=None):
    _check_square(A, "linalg.cholesky")
    return _cholesky(A, upper)


qr_type = _return_type("linalg_qr", ("Q", "R"))


def _qr_fwd(xp, self, mode):
    if mode == "r":
        r = xp.linalg.qr(self, mode="r")
        return xp.zeros((0,), dtype=self.dtype), r
    return xp.linalg.qr(self, mode="complete" if mode == "complete" else "reduced")


def _copyltu(M):
    return tril(M, -1) + _mT(tril(M, -1)) + diag_embed(_diagonal(M, 0, -2 + M.ndim, -1 + M.ndim))


def _qr_grad(grad, self, mode, result):
    Q, R = result
    gQ, gR = grad
    m, n = self.shape[-2], self.shape[-1]
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                           "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
                           "differentiate through linalg.qr.")
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")
    if m < n:
        # A = [X | Y], R = [U | V] with X = Q U the square QR and Y = Q V: V = Q^T Y sends
        # Y gV^T to Q's gradient, and Y gets Q gV
        from .shape import cat
        gV = gR.narrow(-1, m, n - m)
        gQ = gQ + self.narrow(-1, m, n - m) @ _mT(gV)
        gX = _qr_square_grad(gQ, gR.narrow(-1, 0, m), Q, R.narrow(-1, 0, m))
        return cat([gX, Q @ gV], -1)
    return _qr_square_grad(gQ, gR, Q, R)


def _qr_square_grad(gQ, gR, Q, R):
    """The gradient of A = Q R for R square (m >= n): (gQ + Q copyltu(M)) R^{-T}."""
    M = R @ _mT(gR) - _mT(gQ) @ Q
    B = gQ + Q @ _copyltu(M)
    return _mT(solve(R, _mT(B)))   # B R^{-T}


_qr = defop("linalg_qr", _qr_fwd, outputs=2, node_name="LinalgQrBackward0", self=_qr_grad)


def qr(A, mode="reduced", *, out=None):
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' "
                           "(default), 'r', or 'complete'")
    if A._data.ndim < 2:
        raise RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    Q, R = _qr(A, mode)
    return qr_type(Q, R)


svd_type = _return_type("linalg_svd", ("U", "S", "Vh"))


def _svd_fwd(xp, self, full_matrices):
    return xp.linalg.svd(self, full_matrices=full_matrices)


def _svd_backward(gU, gS, gVh, U, S, Vh, full_matrices, m, n):
    """FunctionsManual's svd_backward (distinct singular values; full rank where A is not
    square or complex). full_matrices: the columns past k = min(m, n) are left out, as
    derivatives.yaml narrows them (they do not depend on A)."""
    k = builtins.min(m, n)
    if full_matrices:
        U, Vh = U[..., :k], Vh[..., :k, :]
        gU = None if gU is None else gU[..., :k]
        gVh = None if gVh is None else gVh[..., :k, :]
    if gU is None and gVh is None:
        if gS is None:
            return None
        return U @ (unsqueeze(gS, -1) * Vh) if m >= n else (U * unsqueeze(gS, -2)) @ Vh
    cplx = U.dtype.is_complex
    UhgU = None if gU is None else _mH(U) @ gU
    UhgU = None if UhgU is None else UhgU - _mH(UhgU)
    VhgV = None if gVh is None else Vh @ _mH(gVh)
    VhgV = None if VhgV is None else VhgV - _mH(VhgV)
    if cplx:
        from .complex import imag
        im_u = imag(_diagonal(UhgU, 0, UhgU.ndim - 2, UhgU.ndim - 1)) if UhgU is not None else None
        im_v = imag(_diagonal(VhgV, 0, VhgV.ndim - 2, VhgV.ndim - 1)) if VhgV is not None else None
        a = im_u if im_u is not None else im_v.new_zeros(tuple(im_v.shape))
        b = im_v if im_v is not None else im_u.new_zeros(tuple(im_u.shape))
        if not bool((a + b).abs().le(1e-2 + 1e-2 * b.abs()).all()):
            raise RuntimeError(
                "svd_backward: The singular vectors in the complex case are specified up to "
                "multiplication by e^{i phi}. The specified loss function depends on this "
                "phase term, making it ill-defined.")
    S2 = S * S
    E = unsqueeze(S2, -2) - unsqueeze(S2, -1)
    E = E + diag_embed(S.new_ones(tuple(S.shape)))   # (a zero diagonal divided by 1)
    Sr, Sc = unsqueeze(S, -2), unsqueeze(S, -1)
    if UhgU is not None and VhgV is not None:
        gA = (UhgU * Sr + Sc * VhgV) / E
    elif UhgU is not None:
        gA = UhgU * (Sr / E)
    else:
        gA = Sc * (VhgV / E)
    if gS is not None:
        gA = gA + diag_embed(gS).to(gA.dtype)
    if cplx and UhgU is not None:
        gA = gA + diag_embed(_diagonal(UhgU, 0, UhgU.ndim - 2, UhgU.ndim - 1) / (2.0 * S))
    if m > n and gU is not None:
        gA = U @ gA
        gUSinv = gU / Sr
        gA = (gA + gUSinv - U @ (_mH(U) @ gUSinv)) @ Vh
    elif m < n and gVh is not None:
        gA = gA @ Vh
        SinvgVh = gVh / Sc
        gA = U @ (gA + SinvgVh - (SinvgVh @ _mH(Vh)) @ Vh)
    else:
        gA = U @ (gA @ Vh) if m >= n else (U @ gA) @ Vh
    return gA


def _svd_grad(grad, self, full_matrices, result):
    U, S, Vh = result
    gU, gS, gVh = grad
    m, n = self.shape[-2], self.shape[-1]
    return _svd_backward(gU, gS, gVh, U, S, Vh, full_matrices, m, n)


_svd = defop("linalg_svd", _svd_fwd, outputs=3, node_name="LinalgSvdBackward0", self=_svd_grad)


def _svdvals_grad(grad, self):
    # recompute the vectors with a differentiable svd, so double backward sees them move
    U, S, Vh = _svd(self, False)
    return U @ diag_embed(grad).to(U.dtype) @ Vh


_svdvals = defop("linalg_svdvals",
                 lambda xp, self: xp.linalg.svd(self, full_matrices=False, compute_uv=False),
                 node_name="LinalgSvdBackward0", self=_svdvals_grad)


def svd(A, full_matrices=True, *, driver=None, out=None):
    if A._data.ndim < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    U, S, Vh = _svd(A, full_matrices)
    return svd_type(U, S, Vh)


def svdvals(A, *, driver=None, out=None):
    if A._data.ndim < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    return _svdvals(A)


eigh_type = _return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))


def _eigh_fwd(xp, self, UPLO):
    return xp.linalg.eigh(self, UPLO=UPLO)


def _eigh_backward(gL, gV, L, V):
    inner = diag_embed(gL) if gL is not None else None
    if gV is not None:
        VhgV = _mT(V) @ gV
        VhgV = 0.5 * (VhgV - _mT(VhgV))
        E = unsqueeze(L, -2) - unsqueeze(L, -1)
        E = E + diag_embed(L.new_ones(tuple(L.shape)))
        t_ = VhgV / E
        inner = t_ if inner is None else inner + t_
    return V @ inner @ _mT(V)


def _eigh_grad(grad, result):
    return _eigh_backward(grad[0], grad[1], result[0], result[1])


_eigh = defop("linalg_eigh", _eigh_fwd, outputs=2, node_name="LinalgEighBackward0",
              self=_eigh_grad)


def eigh(A, UPLO="L", *, out=None):
    _check_square(A, "linalg.eigh")
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    L, V = _eigh(A, UPLO)
    return eigh_type(L, V)


def _eigvalsh_grad(grad, self, UPLO):
    L, V = _eigh(self, UPLO)  # differentiable eigenvectors, for double backward
    return V @ diag_embed(grad) @ _mT(V)


_eigvalsh = defop("linalg_eigvalsh", lambda xp, self, UPLO: xp.linalg.eigvalsh(self, UPLO=UPLO),
                  node_name="LinalgEighBackward0", self=_eigvalsh_grad)


def eigvalsh(A, UPLO="L", *, out=None):
    _check_square(A, "linalg.eigh")  # PyTorch's wording
    return _eigvalsh(A, UPLO)


def _ord_str(ord):
    if isinstance(ord, str):
        return ord
    return "%g" % ord if ord not in (float("inf"), float("-inf")) else str(ord)


def check_norm_dtype(dtype, self_dtype, fname):
    """PyTorch's check_linalg_norm_dtype: dtype= must keep complexness and not narrow."""
    from .. import _dtype as D
    from ._inplace import _type_name
    if dtype is None:
        return
    dtype = D.to_dtype(dtype)
    name = _type_name(dtype)
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{fname}: dtype should be floating point or complex, but got {name}")
    if self_dtype.is_complex != dtype.is_complex:
        kind = "complex" if self_dtype.is_complex else "real"
        raise RuntimeError(f"{fname}: dtype should be {kind} for {kind} inputs, but got {name}")
    if D.promote_types(self_dtype, dtype) is not dtype:
        raise RuntimeError(f"{fname}: the dtype of the input ({_type_name(self_dtype)}) "
                           f"should be convertible without narrowing to the specified dtype "
                           f"({name})")


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """torch.linalg.matrix_norm(A, ord='fro', dim=(-2, -1), keepdim=False, *, dtype=None):
    'fro', 'nuc', +-1, +-2, +-inf, as PyTorch composes them."""
    from .reduction import sum as _sum, amax, amin, vector_norm
    from .shape import movedim
    from .. import _dtype as D
    if isinstance(dim, int):
        kind = "str" if isinstance(ord, str) else "int" if isinstance(ord, int) else "float"
        raise TypeError(
            f"linalg_matrix_norm() received an invalid combination of arguments - got (Tensor, "
            f"{kind}, int), but expected one of:\n * (Tensor input, Number ord, tuple of ints dim "
            "= {-2,-1}, bool keepdim = False, *, torch.dtype dtype = None, Tensor out = None)\n"
            " * (Tensor input, str ord = \"fro\", tuple of ints dim = {-2,-1}, bool keepdim = "
            "False, *, torch.dtype dtype = None, Tensor out = None)\n")
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    elif builtins.abs(ord) not in (1, 2, float("inf")):
        raise RuntimeError(f"linalg.matrix_norm: Order {_ord_str(ord)} not supported.")
    if A._data.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        from ._inplace import _type_name
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_type_name(A.dtype)}")
    dim = tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(map(str, dim))}")
    d0, d1 = (_wrap_dim(d, A._data.ndim) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})")
    check_norm_dtype(dtype, A.dtype, "linalg.matrix_norm")
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim, dtype=dtype)
    if ord in ("nuc", 2, -2):
        A_ = A if dtype is None else A.to(D.to_dtype(dtype))
        sv = svdvals(movedim(A_, (d0, d1), (-2, -1)))
        if ord == "nuc":
            r = _sum(sv, -1)
        elif sv._data.shape[-1] == 0 and ord > 0:
            r = _sum(sv, -1)   # (an empty matrix: PyTorch's 0)
        else:
            if sv._data.shape[-1] == 0:
                raise IndexError("amin(): Expected reduction dim -1 to have non-zero size.")
            r = (amax if ord > 0 else amin)(sv, -1)
        if keepdim:
            r = unsqueeze(unsqueeze(r, builtins.min(d0, d1)), builtins.max(d0, d1))
        return r
    if ord in (float("inf"), float("-inf")):
        d0, d1 = d1, d0
    if not keepdim and d0 < d1:
        d1 -= 1
    s_ = vector_norm(A, 1, d0, keepdim, dtype=dtype)
    if s_._data.shape[d1] == 0:
        if ord < 0:
            raise IndexError(f"amin(): Expected reduction dim {d1} to have non-zero size.")
        return _sum(s_, d1, keepdim)   # (an empty matrix: PyTorch's 0)
    return (amax if ord > 0 else amin)(s_, d1, keepdim)


def _cross_fwd(xp, self, other, dim):
    """ATen's cross kernel: each component a1 b2 - a2 b1 with the first product fused into the
    difference, fma(a1, b2, -(a2 b1)), for real floats (NumPy's two roundings differed in a
    quarter of the components); other dtypes as NumPy computes them."""
    if self.dtype.kind != "f" or other.dtype != self.dtype or self.dtype.itemsize < 4:
        return xp.cross(self, other, axis=dim)
    from . import _fma
    a, b = xp.broadcast_arrays(xp.moveaxis(self, dim, -1), xp.moveaxis(other, dim, -1))
    i1, i2 = [1, 2, 0], [2, 0, 1]
    r = _fma.fma(a[..., i1], b[..., i2], -(a[..., i2] * b[..., i1]))
    return xp.moveaxis(r, -1, dim)


_cross = defop("linalg_cross", _cross_fwd, promote="binary",
               self=lambda grad, other, dim: _cross(other, grad, dim),
               other=lambda grad, self, dim: _cross(grad, self, dim))


def linalg_cross(input, other, *, dim=-1):
    from .shape import broadcast_shapes
    if input._data.ndim != other._data.ndim:
        raise RuntimeError(
            f"linalg.cross: inputs must have the same number of dimensions.")
    nd = input._data.ndim
    if nd == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = _wrap_dim(dim, nd)
    if input._data.shape[d] != 3 or other._data.shape[d] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got "
            f"{input._data.shape[d]} and {other._data.shape[d]}")
    dim = d
    broadcast_shapes(input._data.shape, other._data.shape)
    return _cross(input, other, dim)


def cross(input, other, dim=None):
    if dim is None:
        import warnings
        warnings.warn(
            "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass "
            "the dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will "
            "change to agree with that of linalg.cross in a future release.", UserWarning,
            stacklevel=2)
        dim = next((i for i, s_ in enumerate(input._data.shape) if s_ == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return linalg_cross(input, other, dim=dim)


# ---------------------------------------------------------------- more ops (PyTorch parity)
# Registered by ops/__init__.py from MORE_FUNCTIONS (torch.<name>) and MORE_METHODS (Tensor);
# the torch.linalg spellings are exported by ndgrad/linalg.py.

def inner(input, other, *, out=None):
    """torch.inner(input, other): the sum of products over the last dims (a product when one
    of them is 0-d)."""
    if input._data.ndim == 0 or other._data.ndim == 0:
        return input * other
    if input._data.shape[-1] != other._data.shape[-1]:
        raise RuntimeError(
            "inner() the last dimension must match on both input tensors but got shapes "
            f"{list(input._data.shape)} and {list(other._data.shape)}")
    return tensordot(input, other, ([input._data.ndim - 1], [other._data.ndim - 1]))


def _addr_fwd(xp, self, vec1, vec2, beta=1, alpha=1):
    prod = xp.multiply.outer(vec1, vec2)
    beta, alpha = _coefficient(beta, prod.dtype), _coefficient(alpha, prod.dtype)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return xp.broadcast_to(prod, xp.broadcast_shapes(self.shape, prod.shape)).astype(
            prod.dtype, copy=True)
    return prod + (self if beta == 1 else self * beta)


addr_ = defop("addr", _addr_fwd, promote="binary",
              self=lambda grad, beta: None if beta == 0 else (grad if beta == 1 else grad * beta),
              vec1=lambda grad, vec2, alpha: mv(grad, vec2) * alpha,
              vec2=lambda grad, vec1, alpha: mv(_mT(grad), vec1) * alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """torch.addr(input, vec1, vec2, *, beta=1, alpha=1): beta input + alpha outer(vec1, vec2)."""
    for v, n in ((vec1, "vec1"), (vec2, "vec2")):
        if v._data.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {n}, but got {v._data.ndim}-D")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        for v, n in ((beta, "beta"), (alpha, "alpha")):
            if isinstance(v, float):
                raise RuntimeError(f"For integral input tensors, argument {n} must not be a "
                                   "floating point number.")
    return addr_(input, vec1, vec2, *_coefficients(input, beta, alpha))


def matrix_power(A, n, *, out=None):
    """torch.linalg.matrix_power(A, n): A multiplied by itself n times (n < 0: of inv(A));
    repeated squaring, so the gradient flows through matmul."""
    from .._creation import eye
    nd = A._data.ndim
    if nd < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 "
                           "dimensions.")
    if A._data.shape[-1] != A._data.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they "
                           f"are {A._data.shape[-2]} by {A._data.shape[-1]} matrices")
    if n == 0:          # (ATen: a copy of A overwritten by I, so A's graph is kept)
        e = eye(A._data.shape[-1], dtype=A.dtype, device=A.device)
        return A.clone().copy_(expand(e, A._data.shape))
    if n == 1:
        return A.clone()
    if n < 0:
        A, n = inv(A), -n
    result, base = None, A
    while True:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if not n:
            return result
        base = matmul(base, base)


def _expm_np(xp, a):
    """exp(a) of (batched) square matrices: scaling and squaring around a Taylor series."""
    a = xp.asarray(a)
    if a.size == 0:
        return a.copy()
    dtype = a.dtype
    a = a.astype("complex128" if dtype.kind == "c" else "float64")   # (float32: in double)
    norm = float(xp.abs(a).sum(axis=-2).max())
    s = max(0, int(xp.ceil(xp.log2(norm / 0.5))) if norm > 0.5 else 0)
    x = a / (2.0 ** s)
    eye = xp.broadcast_to(xp.eye(a.shape[-1], dtype=a.dtype), a.shape)
    result, term = eye.copy(), eye.copy()
    for k in range(1, 30):
        term = xp.matmul(term, x) / k
        result = result + term
        if float(xp.abs(term).max()) <= 1e-17 * float(xp.abs(result).max()):
            break
    for _ in range(s):
        result = xp.matmul(result, result)
    return result.astype(dtype, copy=False)


def _matrix_exp_grad(grad, self):
    # d exp(A)^H-applied to G: the top-right block of exp([[A^H, G], [0, A^H]])
    from .shape import cat
    from .._creation import zeros_like
    n = self._data.shape[-1]
    ah = _mH(self)
    grad = grad + zeros_like(ah)  # to A's batch shape
    top = cat([ah, grad], -1)
    bottom = cat([zeros_like(ah), ah], -1)
    big = matrix_exp(cat([top, bottom], -2))
    return big[..., :n, n:]


_matrix_exp = defop("linalg_matrix_exp", lambda xp, self: _expm_np(xp, self),
                    node_name="LinalgMatrixExpBackward0", self=_matrix_exp_grad)


def matrix_exp(A):
    """torch.linalg.matrix_exp(A): the matrix exponential (batched)."""
    _check_square(A, "linalg.matrix_exp")
    return _matrix_exp(A)


def _pinv_fwd(xp, self, atol, rtol, hermitian):
    """ATen's: V diag(1/s) U^H from the SVD, or for hermitian=True U diag(1/w) U^H from the
    eigendecomposition of the lower triangle, values with |s| <= max(atol, rtol * max |s|)
    dropped."""
    m, n = self.shape[-2:]
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else max(m, n) * xp.finfo(self.dtype).eps
    if hermitian:
        w, u = xp.linalg.eigh(self, UPLO="L")
        s = xp.abs(w)
    else:
        u, s, vh = xp.linalg.svd(self, full_matrices=False)
    smax = s.max(axis=-1, keepdims=True) if s.shape[-1] else s[..., :1]
    tol = xp.maximum(0.0 if atol is None else atol, rtol * smax)
    keep = s > tol
    inv = xp.where(keep, 1 / xp.where(keep, w if hermitian else s, 1), 0).astype(self.dtype)
    uh = xp.swapaxes(u, -1, -2).conj()
    if hermitian:
        return xp.matmul(u * inv[..., None, :], uh)
    return xp.matmul(xp.swapaxes(vh, -1, -2).conj() * inv[..., None, :], uh)


def _pinv_grad(grad, self, result):
    # FunctionsManual's pinv_backward (conjugate transposes: complex inputs too)
    m, n = self._data.shape[-2:]
    pinv_a, a = result, self
    pinv_ah, gradh = _mH(pinv_a), _mH(grad)
    if m <= n:
        k = matmul(gradh, pinv_a)
        k_pinv_ah = matmul(k, pinv_ah)
        return (-_mH(matmul(pinv_a, k)) + k_pinv_ah - matmul(matmul(a, pinv_a), k_pinv_ah)
                + matmul(matmul(pinv_ah, pinv_a), gradh - matmul(k, a)))
    k = matmul(pinv_a, gradh)
    pinv_ah_k = matmul(pinv_ah, k)
    return (-_mH(matmul(k, pinv_a)) + matmul(matmul(gradh - matmul(a, k), pinv_a), pinv_ah)
            + pinv_ah_k - matmul(matmul(pinv_ah_k, pinv_a), a))


_pinv = defop("linalg_pinv", _pinv_fwd, node_name="LinalgPinvBackward0", self=_pinv_grad)


def _float_input(A, fname):
    if not A.dtype.is_floating_point and not A.dtype.is_complex:
        from ._inplace import _type_name
        raise RuntimeError(f"{fname}: Expected a floating point or complex tensor as input. "
                           f"Got {_type_name(A.dtype)}")


_PINV_SIGS = (
    "(Tensor input, *, Tensor atol = None, Tensor rtol = None, bool hermitian = False, "
    "Tensor out = None)",
    "(Tensor input, *, float atol = None, float rtol = None, bool hermitian = False, "
    "Tensor out = None)",
    "(Tensor input, Tensor rcond, bool hermitian = False, *, Tensor out = None)",
    "(Tensor input, float rcond, bool hermitian = False, *, Tensor out = None)")


def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """torch.linalg.pinv(A, *, atol=None, rtol=None, hermitian=False): the pseudo-inverse,
    singular values below max(atol, rtol * largest) dropped; PyTorch's older overload
    pinv(A, rcond, hermitian=False) is rtol=rcond."""
    if rcond is not None:
        if atol is not None or rtol is not None:
            from ._argcheck import combination_error
            kw = {k: v for k, v in (("atol", atol), ("rtol", rtol)) if v is not None}
            raise combination_error("linalg_pinv", _PINV_SIGS, (A,), {**kw, "rcond": rcond})
        rtol = rcond
    if A._data.ndim < 2:
        raise RuntimeError("linalg.pinv(" + _type_name_of(A)[:-4] + "{[" + ", ".join(
            str(s) for s in A._data.shape) + "]}): expected a tensor with 2 or more dimensions "
            "of float, double, cfloat or cdouble types")
    _float_input(A, "linalg.pinv")
    return _pinv(A, None if atol is None else float(atol), None if rtol is None else float(rtol),
                 hermitian)


def _type_name_of(A):
    from ._inplace import _type_name
    return _type_name(A.dtype) + "Type"


def pinverse(input, rcond=1e-15):
    """torch.pinverse(input, rcond=1e-15): linalg.pinv with rtol=rcond."""
    return pinv(input, rtol=rcond)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """torch.linalg.matrix_rank: the number of singular values above max(atol, rtol * largest)."""
    from .._tensor import _make
    from .._backend import xp_of, numpy as np
    _float_input(A, "linalg.matrix_rank")
    a = A._data
    xp = xp_of(a)
    s = xp.abs(xp.linalg.eigvalsh(a)) if hermitian else xp.linalg.svd(a, compute_uv=False)
    smax = s.max(axis=-1, keepdims=True) if s.shape[-1] else xp.zeros(s.shape[:-1] + (1,))
    # (atol and rtol: numbers or tensors broadcast against the batch, as PyTorch's)
    at = atol._data[..., None] if isinstance(atol, Tensor) else atol
    rt = rtol._data[..., None] if isinstance(rtol, Tensor) else rtol
    if rt is None:
        eps = max(a.shape[-2:]) * np.finfo(a.dtype).eps
        rt = eps if at is None else xp.where(xp.asarray(at) > 0, 0.0, eps)
    tol = xp.maximum(0.0 if at is None else at, rt * smax)
    return _make(xp.asarray((s > tol).sum(axis=-1), dtype="int64"))   # (NumPy: a scalar)


def lstsq(A, B, rcond=None, *, driver=None):
    """torch.linalg.lstsq(A, B, rcond=None, *, driver=None) -> (solution, residuals, rank,
    singular_values). The solution is pinv(A) @ B, differentiable; residuals and
    singular_values are filled for the drivers that compute them, as on PyTorch's CPU."""
    from .._tensor import _make
    from .._backend import xp_of
    rtype = _return_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
    if driver not in (None, "gelsy", "gelsd", "gelss", "gels"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, "
                           "gelsd, gelss)")
    if A._data.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if B._data.ndim < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    vector = B._data.ndim == A._data.ndim - 1
    b = unsqueeze(B, -1) if vector else B
    m, n = A._data.shape[-2:]
    rtol = rcond if rcond is not None and rcond > 0 else None
    solution = matmul(pinv(A, rtol=rtol), b)
    xp = xp_of(A._data)
    real = A.dtype.to_real()
    rank = matrix_rank(A, rtol=rtol) if driver != "gels" else _make(xp.zeros((0,), "int64"))
    sv = _make(xp.zeros((0,), dtype=real.np))
    # (residuals are real and in the solution's graph even when empty, as PyTorch's)
    residuals = (solution.real if solution.dtype.is_complex else solution).reshape(-1)[:0]
    if driver in ("gelsd", "gelss"):
        sv = svdvals(A.detach())
    if driver in ("gelsd", "gelss", "gels") and m > n and bool((rank._data == n).all()):
        r = matmul(A, solution) - b
        residuals = ((r * _cj(r)).real if r.dtype.is_complex else r * r).sum(-2)
    if vector:
        solution = squeeze(solution, -1)
    return rtype(solution, residuals, rank, sv)


def cond(A, p=None, *, out=None):
    """torch.linalg.cond(A, p=None): the condition number; p None/2/-2 from the singular values,
    otherwise norm(A, p) * norm(inv(A), p)."""
    if A._data.ndim < 2:
        raise RuntimeError(f"linalg.cond(ord={p}): The input tensor A must have at least 2 "
                           "dimensions." if isinstance(p, str) else
                           "linalg.cond: The input tensor must have at least 2 dimensions.")
    if p is None or p in (2, -2):
        s = svdvals(A)
        if p == -2:
            return s[..., -1] / s[..., 0]
        return s[..., 0] / s[..., -1]
    _check_square(A, "linalg.cond")
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def multi_dot(tensors, *, out=None):
    """torch.linalg.multi_dot(tensors): the chained matmul (first/last may be 1-d)."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first, last = tensors[0]._data.ndim == 1, tensors[-1]._data.ndim == 1
    if first:
        tensors[0] = unsqueeze(tensors[0], 0)
    if last:
        tensors[-1] = unsqueeze(tensors[-1], -1)
    for i, x in enumerate(tensors):
        if x._data.ndim != 2:
            raise RuntimeError(
                f"multi_dot(): tensor {i} must be 2D but got {x._data.ndim}D"
                if 0 < i < len(tensors) - 1 else
                f"multi_dot(): the {'first' if i == 0 else 'last'} tensor must be 1D or 2D but "
                f"got {x._data.ndim}D")
        if x.dtype is not tensors[0].dtype:
            raise RuntimeError(
                f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                f"{_cname(tensors[0].dtype)} and tensor {i} {_cname(x.dtype)}")
    out = tensors[0]
    for x in tensors[1:]:
        out = mm(out, x)
    if first:
        out = squeeze(out, 0)
    if last:
        out = squeeze(out, -1)
    return out


def _tri_mask(xp, n, upper, unitriangular, dtype):
    m = xp.triu(xp.ones((n, n), dtype=dtype)) if upper else xp.tril(xp.ones((n, n), dtype=dtype))
    if unitriangular:
        m = m - xp.diag(xp.diag(m))
    return m


def _solve_tri_fwd(xp, self, B, upper, left, unitriangular):
    n = self.shape[-1]
    a = self * _tri_mask(xp, n, upper, False, self.dtype)
    if unitriangular:
        a = a - a * xp.eye(n, dtype=a.dtype) + xp.eye(n, dtype=a.dtype)
    a, B = _as_matrices(xp, a, B)
    if left:
        return xp.linalg.solve(a, B)
    return xp.swapaxes(xp.linalg.solve(xp.swapaxes(a, -1, -2), xp.swapaxes(B, -1, -2)), -1, -2)


def _solve_tri_grad(grad, self, result, upper, left, unitriangular):
    # (conjugate transposes: complex inputs too, as FunctionsManual's)
    at = _mH(self)
    gb = solve_triangular(at, grad, upper=not upper, left=left, unitriangular=unitriangular)
    ga = -matmul(gb, _mH(result)) if left else -matmul(_mH(result), gb)
    ga = triu(ga, 1 if unitriangular else 0) if upper else tril(ga, -1 if unitriangular else 0)
    return ga, gb


_solve_triangular = defop("linalg_solve_triangular", _solve_tri_fwd, promote="binary",
                          node_name="LinalgSolveTriangularBackward0",
                          backward=_solve_tri_grad, inputs=("self", "B"))


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """torch.linalg.solve_triangular(A, B, *, upper, left=True, unitriangular=False): X with
    A X = B (left) or X A = B, reading only A's upper or lower triangle."""
    _check_square(A, "linalg.solve_triangular")
    return _solve_triangular(A, B, upper, left, unitriangular)


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):
    """torch.triangular_solve(b, A, upper=True, transpose=False, unitriangular=False) ->
    (solution, cloned_coefficient): deprecated spelling of linalg.solve_triangular."""
    import warnings
    warnings.warn(
        "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will "
        "be removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments "
        "reversed and does not return a copy of one of the inputs.\nX = torch.triangular_solve(B, "
        "A).solution\nshould be replaced with\nX = torch.linalg.solve_triangular(A, B).",
        UserWarning, stacklevel=2)
    rtype = _return_type("triangular_solve", ("solution", "cloned_coefficient"))
    for name, t in (("b", input), ("A", A)):
        if t._data.ndim < 2:
            raise RuntimeError(f"torch.triangular_solve: Expected {name} to have at least 2 "
                               f"dimensions, but it has {t._data.ndim} dimensions instead")
    a = _mT(A) if transpose else A
    x = solve_triangular(a, input, upper=upper != transpose, unitriangular=unitriangular)
    return rtype(x, A.clone())


def cholesky_solve(input, input2, upper=False, *, out=None):
    """torch.cholesky_solve(B, L, upper=False): X with (L L^H) X = B (or U^H U X = B)."""
    for name, t in (("b", input), ("u", input2)):
        if t._data.ndim < 2:
            raise RuntimeError(f"{name} should have at least 2 dimensions, but has "
                               f"{t._data.ndim} dimensions instead")
    lower = _mH(input2) if upper else input2          # A = L L^H (U^H U)
    y = solve_triangular(lower, input, upper=False)
    return solve_triangular(_mH(lower), y, upper=True)


def cholesky_inverse(input, upper=False, *, out=None):
    """torch.cholesky_inverse(L, upper=False): inv(L L^H) (or inv(U^H U))."""
    from .._creation import eye
    if input._data.ndim < 2:
        raise RuntimeError("cholesky_inverse: The input tensor A must have at least 2 dimensions.")
    n = input._data.shape[-1]
    e = expand(eye(n, dtype=input.dtype, device=input.device), input._data.shape)
    return cholesky_solve(e, input, upper)


def _cholesky_deprecated(input, upper=False, *, out=None):
    """torch.cholesky(input, upper=False): deprecated spelling of linalg.cholesky."""
    import warnings
    warnings.warn(
        "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
        "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\n"
        "L = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be "
        "replaced with\nU = torch.linalg.cholesky(A).mH", UserWarning, stacklevel=2)
    if input._data.ndim < 2:
        raise RuntimeError("cholesky: The input tensor A must have at least 2 dimensions.")
    return cholesky(input, upper=upper)


def _trapz_dx(y, dx, dim, cumulative):
    """PyTorch's formulas (Integration.cpp): sum(y) less half the end points, times dx; the
    cumulative form as cumsum(dx / 2 * (left + right))."""
    from .reduction import sum as _sum, cumsum
    d = _wrap_dim(dim, y._data.ndim)
    n = y._data.shape[d]
    if n == 0:
        return _sum(y, d) if not cumulative else y
    if cumulative:
        return cumsum(dx / 2. * (y.narrow(d, 0, n - 1) + y.narrow(d, 1, n - 1)), d)
    ends = y.select(d, 0) + y.select(d, -1)
    return (_sum(y, d) - ends * 0.5) * dx


def _trapz_x(y, x, dim, cumulative):
    """PyTorch's formulas: ((left + right) * dx) summed (or cumulated), then halved; dx the
    differences of x, a 1-d x laid along dim and a lower-dimensional x padded with leading
    unit dims."""
    from .reduction import sum as _sum, cumsum
    d = _wrap_dim(dim, y._data.ndim)
    n = y._data.shape[d]
    if n == 0 and not cumulative:    # (PyTorch: zeros before x is looked at)
        return _sum(y, d)
    if x._data.ndim == 1:
        shape = [1] * y._data.ndim
        shape[d] = x._data.shape[0]
        x = reshape(x, tuple(shape))
    elif x._data.ndim < y._data.ndim:
        x = reshape(x, (1,) * (y._data.ndim - x._data.ndim) + tuple(x._data.shape))
    xn = x._data.shape[d]
    if n == 0 or xn == 0:
        return y
    dx = x.narrow(d, 1, xn - 1) - x.narrow(d, 0, xn - 1)
    mid = (y.narrow(d, 0, n - 1) + y.narrow(d, 1, n - 1)) * dx
    return (cumsum(mid, d) if cumulative else _sum(mid, d)) / 2.


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """torch.trapezoid(y, x=None, *, dx=None, dim=-1): the trapezoidal rule along dim."""
    _trapz_args("trapezoid", y, x, dx)
    if y._data.ndim == 0:  # (PyTorch reads y.size(dim), dim wrapped as for 1-d when x is given)
        d = dim if x is None else _wrap_dim(dim, 0)
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if x is not None:
        return _trapz_x(y, x, dim, False)
    return _trapz_dx(y, 1 if dx is None else dx, dim, False)


def _trapz_args(name, y, x, dx):
    if (x is not None and (dx is not None or not isinstance(x, Tensor))):
        got = ", ".join(["Tensor", type(x).__name__ if not isinstance(x, Tensor) else "Tensor"]
                        + (["dx=" + type(dx).__name__] if dx is not None else []))
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got ({got}), but expected "
            f"one of:\n * (Tensor y, Tensor x, *, int dim = -1)\n * (Tensor y, *, Number dx = 1, "
            "int dim = -1)\n")


def trapz(y, x=None, *, dx=None, dim=-1):
    """torch.trapz: trapezoid's older spelling."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """torch.cumulative_trapezoid(y, x=None, *, dx=None, dim=-1)."""
    _trapz_args("cumulative_trapezoid", y, x, dx)
    if y._data.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if x is not None:
        return _trapz_x(y, x, dim, True)
    return _trapz_dx(y, 1 if dx is None else dx, dim, True)


def _vander_increasing(x, n):
    """The columns 1, x, x^2, ... x^(n-1) (repeated products, so every order of derivative
    exists, at zeros too)."""
    from .._creation import ones_like
    from .shape import stack
    if n == 0:
        return unsqueeze(x, -1)[..., :0]
    cols = [ones_like(x)]
    for _ in range(n - 1):
        cols.append(cols[-1] * x)
    return stack(cols, -1)


def vander(x, N=None, increasing=False):
    """torch.vander(x, N=None, increasing=False): the Vandermonde matrix of the 1-d x."""
    if x._data.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x._data.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if x.dtype.name == "bool" or x.dtype.name in ("uint8", "int8", "int16", "int32"):
        from .. import _dtype as D
        x = x.to(D.int64)
    v = _vander_increasing(x, n)
    return v if increasing else v.flip(-1)


def linalg_vander(x, *, N=None):
    """torch.linalg.vander(x, *, N=None): increasing powers, batched over x's leading dims."""
    if x._data.ndim < 1:
        x = reshape(x, (1,))  # as PyTorch: a 0-d x is read as one point
    n = x._data.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    return _vander_increasing(x, n)


def _indices(name, row, col, offset, dtype, device):
    from .._creation import _xp
    from .._tensor import _make
    from .. import _dtype as D
    xp = _xp(device)
    r, c = getattr(xp, name)(row, offset, col)
    return _make(xp.stack([r, c]).astype(D.to_dtype(dtype or D.int64).np).reshape(2, -1))


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False,
                 requires_grad=False):
    """torch.tril_indices(row, col, offset=0): the 2 x N coordinates of the lower triangle."""
    return _indices("tril_indices", row, col, offset, dtype, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False,
                 requires_grad=False):
    """torch.triu_indices(row, col, offset=0): the 2 x N coordinates of the upper triangle."""
    return _indices("triu_indices", row, col, offset, dtype, device)


def _hist_check(input, name="histogram_cpu"):
    if not input.dtype.is_floating_point:
        from ._inplace import _type_name
        raise NotImplementedError(f'"{name}" not implemented for \'{_type_name(input.dtype)}\'')


def histc(input, bins=100, min=0, max=0, *, out=None):
    """torch.histc(input, bins=100, min=0, max=0): counts in `bins` equal bins over [min, max]
    (the data's range when min == max); elements outside are ignored."""
    from .._tensor import _make
    from .._backend import xp_of
    _hist_check(input)
    a = input._data.reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and a.size:
        lo, hi = float(a.min()), float(a.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    counts, _ = xp_of(a).histogram(a, bins=bins, range=(lo, hi))
    return _make(counts.astype(a.dtype))


def histogram(input, bins, *, range=None, weight=None, density=False, out=None):
    """torch.histogram(input, bins, *, range=None, weight=None, density=False) ->
    (hist, bin_edges)."""
    from .._tensor import _make
    from .._backend import xp_of
    rtype = _return_type("histogram", ("hist", "bin_edges"))
    _hist_check(input, "histogram_cpu")
    a = input._data.reshape(-1)
    b = bins._data if isinstance(bins, Tensor) else bins
    w = None if weight is None else weight._data.reshape(-1)
    rng = None if range is None else (float(range[0]), float(range[1]))
    if rng is None and not isinstance(bins, Tensor) and a.size and bool(a.min() == a.max()):
        rng = (float(a.min()) - 0.5, float(a.max()) + 0.5)
    hist, edges = xp_of(a).histogram(a, bins=b, range=rng, weights=w, density=density)
    return rtype(_make(hist.astype(a.dtype)), _make(edges.astype(a.dtype)))


def cov(input, *, correction=1, fweights=None, aweights=None):
    """torch.cov(input, *, correction=1, fweights=None, aweights=None): the covariance of the
    rows (variables) of a 2-d input over its columns (observations); differentiable. As
    ATen's: the weights keep their own dtype (float32 weights sum in float32), complex inputs
    multiply by the conjugate."""
    from .reduction import sum as _sum
    if input._data.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input._data.ndim} dimensions")
    x = input if input._data.ndim == 2 else reshape(input, (1, -1))
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        from .. import _dtype as D
        x = x.to(D._default[0])
    n = x._data.shape[1]
    for wt, name in ((fweights, "fweights"), (aweights, "aweights")):
        if wt is None:
            continue
        if wt._data.ndim > 1:
            raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                               f"{name} with {wt._data.ndim} dimensions")
        if name == "fweights" and (wt.dtype.is_floating_point or wt.dtype.is_complex
                                   or wt.dtype.name == "bool"):
            raise RuntimeError(f"cov(): expected fweights to have integral dtype but got "
                               f"fweights with {_type_name_of(wt)[:-4]} dtype")
        if name == "aweights" and not wt.dtype.is_floating_point:
            raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got "
                               f"aweights with {_type_name_of(wt)[:-4]} dtype")
        if wt._data.size != n:
            raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                               f"observations in the input but got {wt._data.size} != {n}")
        if n and (wt._data < 0).any():
            raise RuntimeError(f"cov(): {name} cannot be negative")
    w = fweights
    if aweights is not None:
        w = aweights if w is None else w * aweights
    if w is None:
        avg = _sum(x, 1, keepdim=True) / n  # (no NumPy "mean of empty slice" warning)
        norm = n - correction
    else:
        wsum = _sum(w)
        if not bool(wsum._data != 0):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
        avg = _sum(x * w, 1, keepdim=True) / wsum
        if aweights is not None and correction != 0:
            norm = wsum - correction * _sum(w * aweights) / wsum
        else:
            norm = wsum - correction
    if (norm._data.item() if isinstance(norm, Tensor) else norm) <= 0:
        import warnings
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm = norm * 0
    xm = x - avg
    xw = xm if w is None else xm * w
    c = matmul(xm, _mH(xw))
    return squeeze(c / norm)


def corrcoef(input):
    """torch.corrcoef(input): the Pearson correlation coefficients of the rows."""
    from .pointwise import sqrt, clamp
    from .shape import diagonal
    c = cov(input)
    if c._data.ndim == 0:
        return c / c
    d = diagonal(c)
    d = sqrt(d.real if d.dtype.is_complex else d)
    c = c / unsqueeze(d, 1) / unsqueeze(d, 0)
    if c.dtype.is_complex:      # (ATen clips each part: |c| <= 1 is not promised)
        from .complex import complex as _complex
        return _complex(clamp(c.real, -1, 1), clamp(c.imag, -1, 1))
    return clamp(c, -1, 1)


MORE_FUNCTIONS = {f.__name__: f for f in (
    inner, addr, matrix_power, matrix_exp, pinverse, cholesky_solve, cholesky_inverse,
    triangular_solve, trapezoid, trapz, cumulative_trapezoid, vander, tril_indices, triu_indices,
    histc, histogram, cov, corrcoef)}
MORE_FUNCTIONS["cholesky"] = _cholesky_deprecated
MORE_METHODS = {n: MORE_FUNCTIONS[n] for n in (
    "inner", "addr", "matrix_power", "matrix_exp", "pinverse", "cholesky_solve",
    "cholesky_inverse", "triangular_solve", "cholesky", "histc", "histogram", "cov", "corrcoef")}


def _addr_inplace():
    from ._inplace import make_inplace
    return make_inplace(addr)


MORE_METHODS["addr_"] = _addr_inplace()


# LU with partial pivoting (LAPACK's getrf, one column at a time, batched): A = P L U.

def _lu_np(xp, a):
    """(perm, pivots, L, U): A[..., perm, :] = L U; pivots are LAPACK's 1-based row swaps."""
    m, n = a.shape[-2:]
    k = builtins.min(m, n)
    batch = a.shape[:-2]
    if a.size == 0:
        return (xp.zeros(batch + (m,), "int64"), xp.zeros(batch + (k,), "int32"), a.copy(),
                xp.zeros(batch + (m, k), a.dtype), xp.zeros(batch + (k, n), a.dtype))
    lu = a.reshape((-1, m, n)).astype(a.dtype, copy=True)
    b = lu.shape[0]
    rows = xp.arange(b)
    perm = xp.tile(xp.arange(m), (b, 1))
    piv = xp.zeros((b, k), dtype="int32")
    cplx = lu.dtype.kind == "c"
    for j in range(k):
        col = lu[:, j:, j]      # (LAPACK's izamax picks complex pivots by |re| + |im|)
        p = j + xp.argmax(xp.abs(col.real) + xp.abs(col.imag) if cplx else xp.abs(col), axis=1)
        piv[:, j] = p + 1
        rj, rp = lu[rows, j].copy(), lu[rows, p].copy()
        lu[rows, j], lu[rows, p] = rp, rj
        pj, pp = perm[rows, j].copy(), perm[rows, p].copy()
        perm[rows, j], perm[rows, p] = pp, pj
        d = lu[:, j, j]
        safe = xp.where(d == 0, 1, d)
        lu[:, j + 1:, j] = xp.where((d == 0)[:, None], lu[:, j + 1:, j],
                                     lu[:, j + 1:, j] / safe[:, None])
        lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j:j + 1] * lu[:, j:j + 1, j + 1:]
    eye = xp.eye(m, k, dtype=a.dtype)
    L = xp.tril(lu[:, :, :k], -1) + eye
    U = xp.triu(lu[:, :k, :])
    return (perm.reshape(batch + (m,)), piv.reshape(batch + (k,)), lu.reshape(a.shape),
            L.reshape(batch + (m, k)), U.reshape(batch + (k, n)))


def _lu_fwd(xp, self):
    perm, _, _, L, U = _lu_np(xp, self)
    m = self.shape[-1 - 1]
    P = xp.zeros(self.shape[:-2] + (m, m), dtype=self.dtype)
    xp.put_along_axis(P, perm[..., None, :], 1, axis=-2)   # P[perm[i], i] = 1
    return P, L, U


def _lu_grad(grad, result, self):
    """PyTorch's linalg_lu_backward: with A = P L U (L unit lower, U upper),
    gA = P L^-H [(L^H gL).tril(-1) + (gU U^H).triu()] U^-H for square A (conjugate
    transposes: complex inputs too); a wide A adds its
    trailing columns U2 = L^-1 P^T A2, a tall one its trailing rows L2 = P2^T A U^-1."""
    from .._creation import zeros_like
    from .shape import cat
    _, gL, gU = grad
    P, L, U = result
    m, n = self._data.shape[-2:]
    gL = gL if gL is not None else zeros_like(L)
    gU = gU if gU is not None else zeros_like(U)
    if m == n:
        phi = tril(matmul(_mH(L), gL), -1) + triu(matmul(gU, _mH(U)))
        x = solve_triangular(_mH(L), phi, upper=True, unitriangular=True)
        return matmul(P, solve_triangular(_mH(U), x, upper=False, left=False))
    if m < n:
        U1, U2, gU1, gU2 = U[..., :m], U[..., m:], gU[..., :m], gU[..., m:]
        phi = (tril(matmul(_mH(L), gL) - matmul(gU2, _mH(U2)), -1)
               + triu(matmul(gU1, _mH(U1))))
        x = solve_triangular(_mH(L), phi, upper=True, unitriangular=True)
        g1 = solve_triangular(_mH(U1), x, upper=False, left=False)
        g2 = solve_triangular(_mH(L), gU2, upper=True, unitriangular=True)
        return matmul(P, cat([g1, g2], -1))
    L1, L2, gL1, gL2 = L[..., :n, :], L[..., n:, :], gL[..., :n, :], gL[..., n:, :]
    phi = (tril(matmul(_mH(L1), gL1), -1)
           + triu(matmul(gU, _mH(U)) - matmul(_mH(L2), gL2)))
    x = solve_triangular(_mH(L1), phi, upper=True, unitriangular=True)
    g1 = solve_triangular(_mH(U), x, upper=False, left=False)
    g2 = solve_triangular(_mH(U), gL2, upper=False, left=False)
    return matmul(P, cat([g1, g2], -2))


_lu = defop("linalg_lu", _lu_fwd, outputs=3, nondiff_outputs=(0,), node_name="LinalgLuBackward0",
            self=_lu_grad)


def _lu_check(A, fname, kernel="lu_cpu"):
    if A._data.ndim < 2:
        raise RuntimeError(f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(A._data.shape)} instead" if fname == "lu_factor" else
                           f"linalg.{fname}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A._data.shape)} instead")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        from ._inplace import _type_name
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_type_name(A.dtype)}\'')


def lu(A, *, pivot=True, out=None):
    """torch.linalg.lu(A, *, pivot=True) -> (P, L, U) with A = P L U (partial pivoting)."""
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    _lu_check(A, "lu")
    return _return_type("linalg_lu", ("P", "L", "U"))(*_lu(A))


def lu_factor(A, *, pivot=True, out=None):
    """torch.linalg.lu_factor(A, *, pivot=True) -> (LU, pivots): L and U packed in one matrix,
    LAPACK's 1-based int32 pivots; differentiable through linalg.lu."""
    from .._backend import xp_of, numpy as np
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    _lu_check(A, "lu_factor")
    xp = xp_of(A._data)
    with np.errstate(all="ignore"):  # host: error state (nan/inf entries: PyTorch's results)
        _, piv, packed, _, U = _lu_np(xp, A._data)
    diag = xp.diagonal(U, axis1=-2, axis2=-1)
    if diag.size and bool((diag == 0).any()):
        flat = (diag == 0).reshape(-1, diag.shape[-1])
        b = int(xp.argmax(flat.any(axis=1)))
        i = int(xp.argmax(flat[b])) + 1
        prefix = f"(Batch element {b}): " if A._data.ndim > 2 else ""
        raise RuntimeError(
            f"torch.linalg.lu_factor: {prefix}U[{i},{i}] is zero and using it on lu_solve would "
            "result in a division by zero. If you still want to perform the factorization, "
            "consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return _return_type("linalg_lu_factor", ("LU", "pivots"))(*_lu_factor_packed(A, piv))


def _lu_factor_packed(A, piv=None):
    """(LU, pivots): the packed matrix built from linalg.lu's L and U, so that gradients flow."""
    from .._tensor import _make
    from .._backend import xp_of, numpy as np
    if piv is None:
        with np.errstate(all="ignore"):  # host: error state
            piv = _lu_np(xp_of(A._data), A._data)[1]
    _, L, U = lu(A)
    k = builtins.min(A._data.shape[-2:])
    m, n = A._data.shape[-2:]
    eye = expand(_eye_like(L, m, k), L._data.shape)
    lower = L - eye
    if m >= n:
        packed_t = lower + _cat_pad(U, m - k, -2)
    else:
        packed_t = _cat_pad(lower, n - k, -1) + U
    return packed_t, _make(piv)


def _eye_like(t, m, k):
    from .._creation import eye
    return eye(m, k, dtype=t.dtype, device=t.device)


def _cat_pad(t, extra, dim):
    """t with `extra` zero rows (dim=-2) or columns (dim=-1) appended."""
    from .._creation import zeros
    from .shape import cat
    if extra == 0:
        return t
    shape = list(t._data.shape)
    shape[dim] = extra
    return cat([t, zeros(tuple(shape), dtype=t.dtype, device=t.device)], dim)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """torch.linalg.lu_solve(LU, pivots, B, *, left=True, adjoint=False): X with A X = B
    (X A = B when not left; A^H in place of A when adjoint) from lu_factor's output."""
    from .._tensor import _make
    from .._backend import xp_of
    xp = xp_of(LU._data)
    n = LU._data.shape[-1]
    piv = pivots._data.astype("int64") - 1
    perm = xp.tile(xp.arange(n), piv.shape[:-1] + (1,))
    for j in range(piv.shape[-1]):
        pj = piv[..., j]
        a = perm[..., j].copy()
        b = xp.take_along_axis(perm, pj[..., None], -1)[..., 0].copy()
        perm[..., j] = b
        xp.put_along_axis(perm, pj[..., None], a[..., None], -1)
    P = xp.zeros(perm.shape + (n,), dtype=LU._data.dtype)
    xp.put_along_axis(P, perm[..., None, :], 1, axis=-2)
    P = _make(P)
    L, U = LU, LU
    # A = P L U; solves with the triangles of LU (unit lower, upper)
    if left and not adjoint:     # X = U^-1 L^-1 P^T B
        y = solve_triangular(L, matmul(_mT(P), B), upper=False, unitriangular=True)
        return solve_triangular(U, y, upper=True)
    if left:                     # A^H X = B: X = P L^-H U^-H B
        y = solve_triangular(_mH(U), B, upper=False)
        return matmul(P, solve_triangular(_mH(L), y, upper=True, unitriangular=True))
    if not adjoint:              # X A = B: X = B U^-1 L^-1 P^T
        y = solve_triangular(U, B, upper=True, left=False)
        return matmul(solve_triangular(L, y, upper=False, left=False, unitriangular=True),
                      _mT(P))
    # X A^H = B: X = B P L^-H U^-H
    y = solve_triangular(_mH(L), matmul(B, P), upper=True, left=False, unitriangular=True)
    return solve_triangular(_mH(U), y, upper=False, left=False)


# ---------------------------------------------------------------- the _ex variants (info)
# PyTorch's `*_ex` functions return LAPACK's `info` (int32, one per matrix) instead of raising;
# check_errors=True raises the plain function's error, with the _ex name.

def _ndindex(*shape):
    """Every index of a batch shape (the per-matrix loops; any array module)."""
    import itertools
    return itertools.product(*(range(n) for n in shape))


def _info_tensor(info, batch):
    from .._tensor import _make
    return _make(info.astype("int32").reshape(batch))


def _lu_info(xp, a):
    """getrf's info per matrix: the 1-based index of the first exactly zero U[i, i], else 0."""
    _, _, _, _, U = _lu_np(xp, a)
    d = xp.diagonal(U, axis1=-2, axis2=-1) == 0
    return xp.where(d.any(-1), xp.argmax(d, -1) + 1, 0).astype("int32")


def _lu_subst_np(xp, a, b):
    """X = A^-1 B for one matrix by getrf + getrs (forward and back substitution), without
    stopping at a zero pivot: LAPACK's infs and nans for a singular A."""
    perm, _, _, L, U = _lu_np(xp, a)
    y = b[perm].astype(a.dtype, copy=True)
    n = a.shape[-1]
    for i in range(n):
        y[i] -= L[i, :i] @ y[:i]
    for i in range(n - 1, -1, -1):
        y[i] = (y[i] - U[i, i + 1:] @ y[i + 1:]) / U[i, i]
    return y


def _solve_ex_fwd(xp, A, B, vec, left=True):
    info = _lu_info(xp, A) if A.size else xp.zeros(A.shape[:-2], "int32")
    if not info.any():
        return _solve_fwd(xp, A, B, vec, left), info
    a = xp.broadcast_to(A, xp.broadcast_shapes(A.shape[:-2], B.shape[:-2 + vec])
                        + A.shape[-2:]) if B.ndim > 1 else A
    At = a if left else xp.swapaxes(a, -1, -2)
    Bm = B[..., None] if vec else (B if left else xp.swapaxes(B, -1, -2))
    Bm = xp.broadcast_to(Bm, At.shape[:-2] + Bm.shape[-2:])
    out = xp.empty(Bm.shape, xp.result_type(A, B))
    for idx in _ndindex(*At.shape[:-2]):
        out[idx] = _lu_subst_np(xp, At[idx], Bm[idx])
    out = out[..., 0] if vec else (out if left else xp.swapaxes(out, -1, -2))
    return out, info


def _solve_ex_grads(grad, A, B, vec, left, result):
    return _solve_grads(grad[0], A, B, vec, left, result[0])


_solve_ex = defop("linalg_solve_ex", _solve_ex_fwd, promote="binary", outputs=2,
                  nondiff_outputs=(1,), node_name="LinalgSolveExBackward0",
                  backward=_solve_ex_grads, inputs=("A", "B"))


def _raise_info(info, batched, msg):
    """The first failing matrix's error: msg(info value, '(Batch element b): ' or '')."""
    from .._backend import xp_of
    flat = info.reshape(-1)
    b = int(xp_of(flat).argmax(flat != 0))
    raise LinAlgError(msg(int(flat[b]), f"(Batch element {b}): " if batched else ""))


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """torch.linalg.solve_ex(A, B, *, left=True, check_errors=False) -> (result, info)."""
    vec = _check_solve(A, B, left)
    res, info = _solve_ex(A, B, vec, left)
    if check_errors and info._data.any():
        raise LinAlgError("torch.linalg.solve_ex: The solver failed because the input matrix is "
                          "singular.")
    return _return_type("linalg_solve_ex", ("result", "info"))(res, info)


def inv_ex(A, *, check_errors=False, out=None):
    """torch.linalg.inv_ex(A, *, check_errors=False) -> (inverse, info)."""
    from .._backend import xp_of
    _check_square(A, "linalg.inv")
    xp = xp_of(A._data)
    info = _lu_info(xp, A._data) if A._data.size else xp.zeros(A._data.shape[:-2], "int32")
    if check_errors and bool(info.any()):
        _raise_info(info, A._data.ndim > 2, lambda i, where: (
            f"linalg.inv_ex: {where}The diagonal element {i} is zero, the inversion could not "
            "be completed because the input matrix is singular."))
    if not bool(info.any()):
        inverse = _inv(A)
    else:
        from .._creation import eye
        inverse = _solve_ex(A, expand(eye(A._data.shape[-1], dtype=A.dtype, device=A.device),
                                      A._data.shape),
                            False, True)[0]
    return _return_type("linalg_inv_ex", ("inverse", "info"))(
        inverse, _info_tensor(info, A._data.shape[:-2]))


def _potrf_np(xp, a):
    """One matrix by unblocked lower Cholesky (LAPACK's potf2): (L, info); on failure the
    columns before the failing one are factored and its diagonal holds the failed pivot."""
    L = xp.tril(a).astype(a.dtype, copy=True)
    n = a.shape[-1]
    for j in range(n):
        ajj = L[j, j] - xp.vdot(L[j, :j], L[j, :j])
        if not (ajj.real > 0):
            L[j, j] = ajj
            return L, j + 1
        ajj = xp.sqrt(ajj.real)
        L[j, j] = ajj
        L[j + 1:, j] = (L[j + 1:, j] - L[j + 1:, :j] @ L[j, :j].conj()) / ajj
    return L, 0


def _cholesky_ex_fwd(xp, self, upper):
    try:
        L = xp.linalg.cholesky(self)
        info = xp.zeros(self.shape[:-2], "int32")
    except xp.linalg.LinAlgError:
        L = xp.empty_like(self)
        info = xp.zeros(self.shape[:-2], "int32")
        for idx in _ndindex(*self.shape[:-2]):
            L[idx], info[idx] = _potrf_np(xp, self[idx])
    return (xp.swapaxes(L, -1, -2).conj().copy() if upper else L), info


def _cholesky_ex_grad(grad, result, upper):
    return _cholesky_grad(grad[0], result[0], upper)


_cholesky_ex = defop("linalg_cholesky_ex", _cholesky_ex_fwd, outputs=2, nondiff_outputs=(1,),
                     node_name="LinalgCholeskyExBackward0", self=_cholesky_ex_grad)


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """torch.linalg.cholesky_ex(A, *, upper=False, check_errors=False) -> (L, info)."""
    _check_square(A, "linalg.cholesky")
    L, info = _cholesky_ex(A, upper)
    if check_errors and info._data.any():
        _raise_info(info._data, A._data.ndim > 2, lambda i, where: (
            f"linalg.cholesky_ex: {where}The factorization could not be completed because the "
            f"input is not positive-definite (the leading minor of order {i} is not "
            "positive-definite)."))
    return _return_type("linalg_cholesky_ex", ("L", "info"))(L, info)


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """torch.linalg.lu_factor_ex(A, *, pivot=True, check_errors=False) -> (LU, pivots, info)."""
    from .._backend import xp_of, numpy as np
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    _lu_check(A, "lu_factor")  # (PyTorch names lu_factor here)
    xp = xp_of(A._data)
    with np.errstate(all="ignore"):  # host: error state
        info = _lu_info(xp, A._data)
    if check_errors and bool(info.any()):
        flat = info.reshape(-1)
        b = int(xp.argmax(flat != 0))
        i = int(flat[b])
        prefix = f"(Batch element {b}): " if A._data.ndim > 2 else ""
        raise RuntimeError(
            f"torch.linalg.lu_factor_ex: {prefix}U[{i},{i}] is zero and using it on lu_solve "
            "would result in a division by zero. If you still want to perform the "
            "factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, "
            "pivot)")
    packed, piv = _lu_factor_packed(A)
    return _return_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))(
        packed, piv, _info_tensor(info, A._data.shape[:-2]))


# ---------------------------------------------------------------- eig: general matrices

EIG_PHASE_ERROR = ("linalg_eig_backward: The eigenvectors in the complex case are specified up "
                   "to multiplication by e^{i phi}. The specified loss function depends on this "
                   "quantity, so it is ill-defined.")


def _complex_of(xp, a):
    return a.dtype if a.dtype.kind == "c" else xp.result_type(a.dtype, xp.complex64)


def _eig_fwd(xp, self):
    ct = _complex_of(xp, self)
    if self.size == 0:
        return xp.zeros(self.shape[:-1], ct), xp.zeros(self.shape, ct)
    L, V = xp.linalg.eig(self)
    return L.astype(ct), V.astype(ct)


def _eig_backward(gL, gV, L, V):
    """PyTorch's linalg_eig_backward: with E_ij = conj(L_j - L_i) (1 on the diagonal),
    gA = V^-H (diag(gL) + (V^H gV - V^H V diag(re(V^H gV))) / E) V^H."""
    from .._creation import zeros_like
    from .complex import real, imag
    from .pointwise import abs as _abs
    VH = _mH(V)
    if gV is None:
        gA = diag_embed(gL)
    else:
        VhgV = VH @ gV
        d = _diagonal(VhgV, 0, VhgV.ndim - 2, VhgV.ndim - 1)
        if (_abs(imag(d))._data > 1e-2).any():
            raise RuntimeError(EIG_PHASE_ERROR)
        gA = VhgV - VH @ (V * unsqueeze(real(d), -2))
        Lc = _cj(L)
        E = unsqueeze(Lc, -2) - unsqueeze(Lc, -1)
        n = L._data.shape[-1]
        from .._creation import eye
        one = eye(n, dtype=E.dtype, device=E.device)
        E = E * (1 - one) + one
        gA = gA / E
        if gL is not None:
            gA = gA + diag_embed(gL)
    return solve(VH, gA @ VH)


def _eig_grad(grad, result):
    return _eig_backward(grad[0], grad[1], result[0], result[1])


_eig = defop("linalg_eig", _eig_fwd, outputs=2, node_name="LinalgEigBackward0", self=_eig_grad)


def _eigvals_grad(grad, self):
    L, V = _eig(self)  # (PyTorch recomputes the eigenvectors too)
    return _eig_backward(grad, None, L, V)


_eigvals = defop("linalg_eigvals", lambda xp, self: _eig_fwd(xp, self)[0],
                 node_name="LinalgEigBackward0", self=_eigvals_grad)


def _eig_check(A, fname):
    _check_square(A, fname)
    if A._data.size and not bool(xp_isfinite(A._data)):
        raise RuntimeError(f"torch.{fname}: input tensor should not contain infs or NaNs.")


def xp_isfinite(a):
    from .._backend import xp_of
    return xp_of(a).isfinite(a).all()


def _eig_dtype_check(A):
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        from ._inplace import _type_name
        raise RuntimeError(f"Unknown Complex ScalarType for {_type_name(A.dtype)}")


def eig(A, *, out=None):
    """torch.linalg.eig(A) -> (eigenvalues, eigenvectors): complex, for real input too;
    eigenvectors of unit norm (LAPACK's geev)."""
    _eig_dtype_check(A)
    _eig_check(A, "linalg.eig")
    return _return_type("linalg_eig", ("eigenvalues", "eigenvectors"))(*_eig(A))


def eigvals(A, *, out=None):
    """torch.linalg.eigvals(A): the eigenvalues of a general matrix (complex)."""
    _eig_dtype_check(A)
    _eig_check(A, "linalg.eigvals")
    return _eigvals(A)


# ---------------------------------------------------------------- householder_product

def householder_product(A, tau, *, out=None):
    """torch.linalg.householder_product(A, tau): the first n columns of H_1 ... H_k, with
    H_i = I - tau_i v_i v_i^H and v_i column i of A below the diagonal (1 on it); composed of
    differentiable ops."""
    from .._creation import eye
    from ._inplace import _type_name
    fn = "torch.linalg.householder_product"
    if A._data.ndim < 2:
        raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
    m, n = A._data.shape[-2:]
    if m < n:
        raise RuntimeError(f"{fn}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    k = tau._data.shape[-1] if tau._data.ndim else 1
    if n < k:
        raise RuntimeError(f"{fn}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if tau._data.ndim != A._data.ndim - 1 or tau._data.shape[:-1] != A._data.shape[:-2]:
        raise RuntimeError(f"{fn}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau._data.shape[:-1])}")
    if tau.dtype is not A.dtype:
        raise RuntimeError(f"{fn}: tau dtype {_type_name(tau.dtype)} does not match input "
                           f"dtype {_type_name(A.dtype)}")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise NotImplementedError(f'"orgqr_cpu" not implemented for \'{_type_name(A.dtype)}\'')
    return _householder_q(A, tau)[..., :, :n]


def _householder_q(A, tau):
    """The full m x m product H_1 ... H_k of A's Householder reflectors (geqrf's format)."""
    from .._creation import eye
    m, n = A._data.shape[-2:]
    k = tau._data.shape[-1] if tau._data.ndim else 1
    Q = expand(eye(m, dtype=A.dtype, device=A.device), A._data.shape[:-2] + (m, m))
    V = tril(A, -1) + eye(m, n, dtype=A.dtype, device=A.device)
    for i in range(k):
        v = V[..., :, i:i + 1]
        t_ = unsqueeze(unsqueeze(tau[..., i], -1), -1)
        Q = Q - (Q @ v) @ (_mH(v) * t_)
    if k == 0:      # (no reflector: the identity, still in A's and tau's graph as PyTorch's)
        from .reduction import sum as _sum
        Q = Q + (_sum(A, (-2, -1), keepdim=True) + unsqueeze(_sum(tau, -1, keepdim=True), -1)) * 0
    return Q


# ---------------------------------------------------------------- vecdot, diagonal, tensor*

def vecdot(x, y, *, dim=-1, out=None):
    """torch.linalg.vecdot(x, y, *, dim=-1): sum(conj(x) * y, dim), broadcasting."""
    from .reduction import sum as _sum
    from ._inplace import _type_name
    if x._data.ndim == 1 and y._data.ndim == 1:
        _matmul_check(x._data, y._data)  # (dot's error for two vectors)
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x "
                           f"of type {_type_name(x.dtype)} and y of type "
                           f"{_type_name(y.dtype)} instead")
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as "
                           f"input. Got {_type_name(x.dtype)}")
    return _sum(_cj(x) * y, dim)


def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """torch.linalg.diagonal(A, *, offset=0, dim1=-2, dim2=-1): a view of the diagonals."""
    from .shape import diagonal
    return diagonal(A, offset, dim1, dim2)


def tensorinv(A, ind=2, *, out=None):
    """torch.linalg.tensorinv(A, ind=2): the tensor inverse, shape A.shape[ind:] + A.shape[:ind]."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(A._data.shape)
    rows, cols = _prod(shape[:ind]), _prod(shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    M = reshape(A, (rows, cols))
    _check_square(M, "linalg.inv")
    from .._backend import xp_of
    info = int(_lu_info(xp_of(M._data), M._data)) if M._data.size else 0
    if info:
        raise LinAlgError(f"inv: The diagonal element {int(info)} is zero, the inversion could "
                          "not be completed because the input matrix is singular.")
    return reshape(_inv(M), shape[ind:] + shape[:ind])


def tensorsolve(A, B, dims=None, *, out=None):
    """torch.linalg.tensorsolve(A, B, dims=None): X with tensordot(A, X, X.ndim) = B; `dims`
    are A's dimensions moved to the end first."""
    from .shape import movedim
    if dims is not None:
        nd = A._data.ndim
        dd = [_wrap_dim(d, nd) for d in dims]
        A = movedim(A, dd, list(range(nd - len(dd), nd)))
    shape = tuple(A._data.shape)
    k = B._data.ndim
    rows, cols = B._data.size, _prod(shape[k:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:"
                           f"]) == prod(self.shape[:other.ndim]), but got {cols} != {rows}")
    x = solve(reshape(A, (rows, cols)), reshape(B, (rows,)))
    return reshape(x, shape[k:])


# ---------------------------------------------------------------- LDL (Bunch-Kaufman)
# PyTorch has no derivatives for ldl_factor / ldl_solve: their nodes raise its error.
# LAPACK's sytf2 / hetf2 (lower), the unblocked code its sytrf runs for matrices under its block
# size, one matrix at a time: LD holds L's columns below the diagonal and D's 1x1 / 2x2 blocks,
# pivots are 1-based (a 2x2 block's two entries are both -p).

from .pointwise import _no_derivative, mul as _mul  # noqa: E402

_BK_ALPHA = (1 + 17 ** 0.5) / 8


def _cabs1(xp, x):
    return xp.abs(x.real) + xp.abs(x.imag) if x.dtype.kind == "c" else xp.abs(x)


def _sytf2_np(xp, a, herm):
    A = xp.tril(a).astype(a.dtype, copy=True)
    n = a.shape[-1]
    cplx = a.dtype.kind == "c"
    herm = herm and cplx
    cj = (lambda v: v.conj()) if herm else (lambda v: v)
    re = (lambda v: v.real) if herm else (lambda v: v)
    ipiv = xp.zeros(n, "int32")
    info = 0
    k = 0
    while k < n:
        kstep = 1
        absakk = float(abs(A[k, k].real)) if herm else float(_cabs1(xp, A[k, k]))
        if k < n - 1:
            col = _cabs1(xp, A[k + 1:, k])
            imax = k + 1 + int(xp.argmax(col))
            colmax = float(col[imax - k - 1])
        else:
            imax, colmax = k, 0.0
        if max(absakk, colmax) == 0 or absakk != absakk:
            if info == 0:
                info = k + 1
            kp = k
            if herm:
                A[k, k] = A[k, k].real
        else:
            if absakk >= _BK_ALPHA * colmax:
                kp = k
            else:
                row = _cabs1(xp, A[imax, k:imax])
                rowmax = float(row.max())
                if imax < n - 1:
                    rowmax = max(rowmax, float(_cabs1(xp, A[imax + 1:, imax]).max()))
                aii = float(abs(A[imax, imax].real)) if herm else float(_cabs1(xp, A[imax, imax]))
                if absakk >= _BK_ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif aii >= _BK_ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:
                if kp < n - 1:
                    t_ = A[kp + 1:, kk].copy()
                    A[kp + 1:, kk] = A[kp + 1:, kp]
                    A[kp + 1:, kp] = t_
                t_ = cj(A[kk + 1:kp, kk].copy())
                A[kk + 1:kp, kk] = cj(A[kp, kk + 1:kp])
                A[kp, kk + 1:kp] = t_
                if herm:
                    A[kp, kk] = A[kp, kk].conj()
                t_ = re(A[kk, kk])
                A[kk, kk] = re(A[kp, kp])
                A[kp, kp] = t_
                if kstep == 2:
                    if herm:
                        A[k, k] = A[k, k].real
                    t_ = A[k + 1, k].copy()
                    A[k + 1, k] = A[kp, k]
                    A[kp, k] = t_
            elif herm:
                A[k, k] = A[k, k].real
                if kstep == 2:
                    A[k + 1, k + 1] = A[k + 1, k + 1].real
            if kstep == 1:
                if k < n - 1:
                    d11 = 1 / re(A[k, k])
                    x = A[k + 1:, k].copy()
                    A[k + 1:, k + 1:] -= xp.tril(d11 * xp.outer(x, cj(x)))
                    A[k + 1:, k] = x * d11
            elif k < n - 2:
                if herm:
                    d = abs(A[k + 1, k])
                    d11 = A[k + 1, k + 1].real / d
                    d22 = A[k, k].real / d
                    tt = 1 / (d11 * d22 - 1)
                    d21 = A[k + 1, k] / d
                    d = tt / d
                    wk = d * (d11 * A[k + 2:, k] - d21 * A[k + 2:, k + 1])
                    wkp1 = d * (d22 * A[k + 2:, k + 1] - d21.conjugate() * A[k + 2:, k])
                else:
                    d21 = A[k + 1, k]
                    d11 = A[k + 1, k + 1] / d21
                    d22 = A[k, k] / d21
                    t_ = 1 / (d11 * d22 - 1)
                    d21 = t_ / d21
                    wk = d21 * (d11 * A[k + 2:, k] - A[k + 2:, k + 1])
                    wkp1 = d21 * (d22 * A[k + 2:, k + 1] - A[k + 2:, k])
                A[k + 2:, k + 2:] -= xp.tril(xp.outer(A[k + 2:, k], cj(wk))
                                             + xp.outer(A[k + 2:, k + 1], cj(wkp1)))
                A[k + 2:, k] = wk
                A[k + 2:, k + 1] = wkp1
                if herm:
                    idx = xp.arange(k + 2, n)
                    A[idx, idx] = A[idx, idx].real
        if kstep == 1:
            ipiv[k] = kp + 1
        else:
            ipiv[k] = ipiv[k + 1] = -(kp + 1)
        k += kstep
    return A, ipiv, info


def _ldl_factor_fwd(xp, self, hermitian):
    LD = xp.empty_like(self)
    piv = xp.zeros(self.shape[:-1], "int32")
    info = xp.zeros(self.shape[:-2], "int32")
    for idx in _ndindex(*self.shape[:-2]):
        LD[idx], piv[idx], info[idx] = _sytf2_np(xp, self[idx], hermitian)
    return LD, piv, info


_ldl_factor = defop("linalg_ldl_factor_ex", _ldl_factor_fwd, outputs=3, nondiff_outputs=(1, 2),
                    node_name="NotImplemented",
                    self=_no_derivative("linalg_ldl_factor_ex"))


def _ldl_check(A, fname):
    fn = f"torch.linalg.{fname}"
    if A._data.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if A._data.shape[-1] != A._data.shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are "
                           f"{A._data.shape[-2]} by {A._data.shape[-1]} matrices")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        from ._inplace import _type_name
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{_type_name(A.dtype)}")


def _ldl_unknown_info(fname, code):
    # PyTorch 2.13 reports a singular D (info > 0) through an internal assert
    return RuntimeError(
        'false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/native/'
        'BatchLinearAlgebra.cpp":1642, please report a bug to PyTorch. '
        f"torch.linalg.{fname}: Unknown error code: {code}.")


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """torch.linalg.ldl_factor_ex(A, *, hermitian=False, check_errors=False) ->
    (LD, pivots, info): Bunch-Kaufman LDL^T (LDL^H when hermitian) of the lower triangle."""
    _ldl_check(A, "ldl_factor_ex")
    LD, piv, info = _ldl_factor(A, hermitian)
    if check_errors and info._data.any():
        raise _ldl_unknown_info("ldl_factor_ex", int(info._data.reshape(-1)[
            int((info._data.reshape(-1) != 0).argmax())]))
    return _return_type("linalg_ldl_factor_ex", ("LD", "pivots", "info"))(LD, piv, info)


def ldl_factor(A, *, hermitian=False, out=None):
    """torch.linalg.ldl_factor(A, *, hermitian=False) -> (LD, pivots)."""
    _ldl_check(A, "ldl_factor_ex")
    LD, piv, info = _ldl_factor(A, hermitian)
    if info._data.any():
        raise _ldl_unknown_info("ldl_factor", int(info._data.reshape(-1)[
            int((info._data.reshape(-1) != 0).argmax())]))
    return _return_type("linalg_ldl_factor", ("LD", "pivots"))(LD, piv)


def _sytrs_np(xp, A, ipiv, B, herm):
    """LAPACK's sytrs / hetrs (lower): X with A X = B from sytf2's (LD, pivots)."""
    herm = herm and A.dtype.kind == "c"
    cj = (lambda v: v.conj()) if herm else (lambda v: v)
    n = A.shape[-1]
    B = B.astype(xp.result_type(A, B), copy=True)

    def swap(i, j):
        if i != j:
            t_ = B[i].copy()
            B[i] = B[j]
            B[j] = t_
    k = 0
    while k < n:
        if ipiv[k] > 0:
            swap(k, ipiv[k] - 1)
            B[k + 1:] -= xp.outer(A[k + 1:, k], B[k])
            B[k] = B[k] / (A[k, k].real if herm else A[k, k])
            k += 1
        else:
            swap(k + 1, -ipiv[k] - 1)
            B[k + 2:] -= xp.outer(A[k + 2:, k], B[k]) + xp.outer(A[k + 2:, k + 1], B[k + 1])
            akm1k = A[k + 1, k]
            akm1 = A[k, k] / cj(akm1k)
            ak = A[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1
            bkm1 = B[k] / cj(akm1k)
            bk = B[k + 1] / akm1k
            B[k] = (ak * bkm1 - bk) / denom
            B[k + 1] = (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:
        if ipiv[k] > 0:
            B[k] -= cj(A[k + 1:, k]) @ B[k + 1:]
            swap(k, ipiv[k] - 1)
            k -= 1
        else:
            B[k] -= cj(A[k + 1:, k]) @ B[k + 1:]
            B[k - 1] -= cj(A[k + 1:, k - 1]) @ B[k + 1:]
            swap(k, -ipiv[k] - 1)
            k -= 2
    return B


def _ldl_solve_fwd(xp, LD, pivots, B, hermitian):
    batch = xp.broadcast_shapes(LD.shape[:-2], B.shape[:-2])
    LDb = xp.broadcast_to(LD, batch + LD.shape[-2:])
    Pb = xp.broadcast_to(pivots, batch + pivots.shape[-1:])
    Bb = xp.broadcast_to(B, batch + B.shape[-2:])
    out = xp.empty(Bb.shape, xp.result_type(LD, B))
    for idx in _ndindex(*batch):
        out[idx] = _sytrs_np(xp, LDb[idx], Pb[idx], Bb[idx], hermitian)
    return out


_ldl_solve = defop("linalg_ldl_solve", _ldl_solve_fwd, node_name="NotImplemented",
                   LD=_no_derivative("linalg_ldl_solve"), B=_no_derivative("linalg_ldl_solve"))


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """torch.linalg.ldl_solve(LD, pivots, B, *, hermitian=False): X with A X = B from
    ldl_factor's (LD, pivots)."""
    from ._inplace import _type_name
    fn = "torch.linalg.ldl_solve"
    if LD._data.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor LD must have at least 2 dimensions.")
    if LD._data.shape[-1] != LD._data.shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are "
                           f"{LD._data.shape[-2]} by {LD._data.shape[-1]} matrices")
    if B._data.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[-{builtins.max(B._data.ndim, 1)}, {builtins.max(B._data.ndim, 1) - 1}]"
                         f", but got -2)")
    if tuple(pivots._data.shape) != tuple(LD._data.shape[:-1]):
        raise RuntimeError(f"{fn}: Expected LD.shape[:-1] and pivots.shape to be the same, but "
                           f"got pivots with shape {list(pivots._data.shape)} instead")
    if B._data.shape[-2] != LD._data.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for {fn}: each A matrix is "
                           f"{LD._data.shape[-2]} by {LD._data.shape[-1]} but each b matrix is "
                           f"{B._data.shape[-2]} by {B._data.shape[-1]}")
    if B.dtype is not LD.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_type_name(B.dtype)} and A of type {_type_name(LD.dtype)} "
                           "instead.")
    return _ldl_solve(LD, pivots, B, hermitian)


# ---------------------------------------------------------------- geqrf, ormqr, orgqr
# LAPACK's QR in Householder form: geqrf gives R on and above the diagonal, the reflectors' v_i
# below it, and their scales tau; orgqr forms Q from them (householder_product), ormqr
# multiplies by Q without forming it in PyTorch (here Q is formed: the same ops, so gradients
# come from householder_product's and matmul's formulas).

geqrf_type = _return_type("geqrf", ("a", "tau"))


def _geqrf_fwd(xp, self):
    h, tau = xp.linalg.qr(self, mode="raw")   # (h is the transposed, LAPACK-ordered result)
    return xp.ascontiguousarray(xp.swapaxes(h, -1, -2)), tau


def _geqrf_grad(grad, self):
    raise RuntimeError("the derivative for 'geqrf' is not implemented.")


_geqrf = defop("geqrf", _geqrf_fwd, outputs=2, self=_geqrf_grad)


def geqrf(input, *, out=None):
    """torch.geqrf(input) -> (a, tau): QR in LAPACK's Householder form (batched). Its
    gradient is not implemented, as PyTorch's."""
    from ._inplace import _type_name
    if input._data.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f'"geqrf_cpu" not implemented for '
                                  f"'{_type_name(input.dtype)}'")
    a, tau = _geqrf(input)
    return geqrf_type(a, tau)


def orgqr(input, input2, *, out=None):
    """torch.orgqr(input, tau): Q from geqrf's reflectors (linalg.householder_product;
    PyTorch calls tau `input2` here)."""
    return householder_product(input, input2)


def ormqr(input, input2, input3, left=True, transpose=False, *, out=None):
    """torch.ormqr(input, tau, other, left=True, transpose=False): other multiplied by the Q of
    geqrf's reflectors (input, tau): Q @ other (left), other @ Q (not left), Q^H with transpose."""
    from ._inplace import _type_name
    A, tau, C = input, input2, input3
    fn = "torch.ormqr"
    if A._data.ndim < 2:
        raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
    if C._data.ndim < 2:
        raise RuntimeError(f"{fn}: other must have at least 2 dimensions.")
    m = C._data.shape[-2] if left else C._data.shape[-1]
    if A._data.shape[-2] != m:
        raise RuntimeError(f"{fn}: other.shape[{-2 if left else -1}] must be equal to "
                           "input.shape[-2]")
    k = tau._data.shape[-1] if tau._data.ndim else 1
    if k != min(m, A._data.shape[-1]):
        raise RuntimeError(f"{fn}: tau.shape[-1] must be equal to min(other.shape"
                           f"[{-2 if left else -1}], input.shape[-1])")
    for name, t in (("tau", tau), ("other", C)):
        if t.dtype is not A.dtype:
            raise RuntimeError(f"{fn}: Expected input and {name} to have the same dtype, but "
                               f"input has dtype{_type_name(A.dtype)} and {name} has dtype "
                               f"{_type_name(t.dtype)}")
    Q = _householder_q(A, tau)
    if transpose:
        Q = _mH(Q)
    return Q @ C if left else C @ Q


MORE_FUNCTIONS.update(geqrf=geqrf, orgqr=orgqr, ormqr=ormqr)
MORE_METHODS.update(geqrf=geqrf, orgqr=orgqr, ormqr=ormqr)


# ---------------------------------------------------------------- randomized low-rank SVD, PCA
# Halko, Martinsson and Tropp (2009), algorithms 4.4 and 5.1, as torch.svd_lowrank and
# torch.pca_lowrank draw and compute them: the same Gaussian test matrix from the generator, so
# a seeded call gives PyTorch's numbers.

def _lowrank_dense(A):
    """A sparse input as a dense one (ndgrad's sparse products are dense underneath)."""
    return A if str(A.layout) == "torch.strided" else A.to_dense()


def _approximate_basis(A, q, niter, M):
    """An m x q matrix with orthonormal columns spanning (nearly) the range of A - M."""
    from .._creation import randn
    from .. import _dtype
    dtype = A.dtype if (A.dtype.is_floating_point or A.dtype.is_complex) else _dtype.float32
    R = randn(A.shape[-1], q, dtype=dtype, device=A.device)

    def range_of(B, Bm, X):
        Y = matmul(B, X)
        return Y if Bm is None else Y - matmul(Bm, X)
    Q = qr(range_of(A, M, R)).Q
    for _ in range(2 if niter is None else niter):
        Q = qr(range_of(_mH(A), None if M is None else _mH(M), Q)).Q
        Q = qr(range_of(A, M, Q)).Q
    return Q


def _svd_lowrank(A, q=6, niter=2, M=None):
    q = 6 if q is None else q
    A = _lowrank_dense(A)
    m, n = A.shape[-2:]
    if M is not None:
        M = expand(_lowrank_dense(M), tuple(A.shape))
    wide = m < n
    if wide:
        A = _mH(A)
        M = None if M is None else _mH(M)
    Q = _approximate_basis(A, q, niter, M)
    B = matmul(_mH(Q), A)
    if M is not None:
        B = B - matmul(_mH(Q), M)
    U, S, Vh = svd(B, full_matrices=False)
    U, V = matmul(Q, U), _mH(Vh)
    return (V, S, U) if wide else (U, S, V)


def svd_lowrank(A, q=6, niter=2, M=None):
    """torch.svd_lowrank(A, q=6, niter=2, M=None) -> (U, S, V): a randomized SVD of A (or of
    A - M) of rank q, A ~ U diag(S) V^H."""
    return _svd_lowrank(A, q=q, niter=niter, M=M)


def pca_lowrank(A, q=None, center=True, niter=2):
    """torch.pca_lowrank(A, q=None, center=True, niter=2) -> (U, S, V): PCA of the rows of A
    through svd_lowrank of the centered A (q defaults to min(6, m, n))."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not (niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter=niter, M=None)
    if A.is_sparse and A.ndim != 2:
        raise ValueError("pca_lowrank input is expected to be 2-dimensional tensor")
    A = _lowrank_dense(A)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter=niter, M=None)


MORE_FUNCTIONS.update(svd_lowrank=svd_lowrank, pca_lowrank=pca_lowrank)
