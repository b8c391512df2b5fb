# Linear algebra. matmul has one joint formula (its two gradients share the 1-d bookkeeping);
# batch broadcasting is undone by the engine's sum_to. See ops/_registry.py for the language.
import builtins

from .._tensor import Tensor, _wrap_dim
from ._registry import defop
from .shape import (unsqueeze, squeeze, transpose, reshape, permute, expand, _diagonal,
                    _diagonal_backward, diag_embed)
from .indexing import _return_type

__all__ = ["matmul", "mm", "bmm", "mv", "dot", "vdot", "outer", "ger", "addmm", "addmv", "addbmm",
           "baddbmm", "einsum", "tensordot", "kron", "trace", "diag", "tril", "triu", "inv", "det",
           "slogdet", "logdet", "solve", "cholesky", "qr", "svd", "svdvals", "eigh", "eigvalsh",
           "matrix_norm", "cross", "linalg_cross"]


def _mT(x):
    return transpose(x, -1, -2)


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


def _matmul_fwd(xp, self, other):
    _matmul_check(self, other)
    return xp.matmul(self, other)


def _matmul_grads(grad, self, other):
    a1, b1 = self.ndim == 1, other.ndim == 1
    if a1 and b1:
        return grad * other, grad * self
    g = grad
    if a1:
        g = unsqueeze(g, -2)
    if b1:
        g = unsqueeze(g, -1)
    a = unsqueeze(self, 0) if a1 else self
    b = unsqueeze(other, -1) if b1 else other
    ga = g @ _mT(b) if self.requires_grad else None
    gb = _mT(a) @ g if other.requires_grad else None
    if a1 and ga is not None:
        ga = squeeze(ga, -2)
    if b1 and gb is not None:
        gb = squeeze(gb, -1)
    return ga, gb


def _matmul_op(name, node):
    return defop(name, _matmul_fwd, promote="binary", node_name=node,
                 inputs=("self", "other"), backward=_matmul_grads)


_mm = _matmul_op("mm", "MmBackward0")
_mv = _matmul_op("mv", "MvBackward0")
_dot = _matmul_op("dot", "DotBackward0")
_bmm = _matmul_op("bmm", "BmmBackward0")
_vm = _matmul_op("vm", "SqueezeBackward4")
_matmul = _matmul_op("matmul", "UnsafeViewBackward0")


def matmul(input, other):
    """torch.matmul: dot, mv, mm or broadcast batched matmul by the inputs' dims."""
    a, b = input._data.ndim, other._data.ndim
    if a == 2 and b == 2:
        return _mm(input, other)
    if a == 1 and b == 1:
        return _dot(input, other)
    if a == 2 and b == 1:
        return _mv(input, other)
    if a == 1 and b == 2:
        return _vm(input, other)
    return _matmul(input, other)


def mm(input, mat2):
    if input._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    return _mm(input, mat2)


def bmm(input, mat2):
    if input._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    a, b = input._data.shape, mat2._data.shape
    if a[0] != b[0] or a[2] != b[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a[0]}, {a[2]}] but got: [{b[0]}, {b[1]}].")
    return _bmm(input, mat2)


def mv(input, vec):
    if input._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {vec._data.ndim}, "
                           f"{input._data.ndim}, {vec._data.ndim}")
    return _mv(input, vec)


def dot(input, other):
    if input._data.ndim != 1 or other._data.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input._data.ndim}D and {other._data.ndim}D tensors")
    if input.dtype is not other.dtype:
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{input.dtype.name.capitalize()} and {other.dtype.name.capitalize()}")
    return _dot(input, other)


def _dims_str(shape):
    return "x".join(map(str, shape))


# ---------------------------------------------------------------- products

_vdot = defop("vdot", lambda xp, self, other: xp.vdot(self, other), promote="binary",
              self=lambda grad, other: grad * other, other=lambda grad, self: grad * self)


def vdot(input, other):
    if input._data.ndim != 1 or other._data.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input._data.ndim}D and {other._data.ndim}D tensors")
    if input.dtype is not other.dtype:
        raise RuntimeError(
            "vdot : expected both vectors to have same dtype, but found "
            f"{input.dtype.name.capitalize()} and {other.dtype.name.capitalize()}")
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


ger = outer


def _scaled(x, alpha):
    return x if alpha == 1 else x * alpha


def _addmm_fwd(xp, self, mat1, mat2, beta=1, alpha=1):
    prod = xp.matmul(mat1, mat2)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return (prod + xp.zeros_like(self)).astype(prod.dtype)
    return (prod + (self if beta == 1 else self * beta)).astype(prod.dtype)


addmm_ = defop("addmm", _addmm_fwd, promote="binary",
               self=lambda grad, beta: _scaled(grad, beta),
               mat1=lambda grad, mat2, alpha: _scaled(grad @ _mT(mat2), alpha),
               mat2=lambda grad, mat1, alpha: _scaled(_mT(mat1) @ grad, alpha))


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


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    _check_mm(mat1, mat2)
    _check_add_shape(input, (mat1._data.shape[0], mat2._data.shape[1]))
    return addmm_(input, mat1, mat2, beta, alpha)


def _addmv_fwd(xp, self, mat, vec, beta=1, alpha=1):
    return _addmm_fwd(xp, self, mat, vec, beta, alpha)


addmv_ = defop("addmv", _addmv_fwd, promote="binary",
               self=lambda grad, beta: _scaled(grad, beta),
               mat=lambda grad, vec, alpha: _scaled(unsqueeze(grad, 1) * vec, alpha),
               vec=lambda grad, mat, alpha: _scaled(_mT(mat) @ grad, alpha))


def addmv(input, mat, vec, *, beta=1, alpha=1):
    if mat._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input._data.ndim}, "
                           f"{mat._data.ndim}, {vec._data.ndim}")
    if mat._data.shape[1] != vec._data.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input._data.shape[0] if input._data.ndim else 1}), "
                           f"mat ({_dims_str(mat._data.shape)}), vec ({vec._data.shape[0]})")
    _check_add_shape(input, (mat._data.shape[0],))
    return addmv_(input, mat, vec, beta, alpha)


def _baddbmm_fwd(xp, self, batch1, batch2, beta=1, alpha=1):
    return _addmm_fwd(xp, self, batch1, batch2, beta, alpha)


baddbmm_ = defop("baddbmm", _baddbmm_fwd, promote="binary",
                 self=lambda grad, beta: _scaled(grad, beta),
                 batch1=lambda grad, batch2, alpha: _scaled(grad @ _mT(batch2), alpha),
                 batch2=lambda grad, batch1, alpha: _scaled(_mT(batch1) @ grad, alpha))


def _check_bmm(b1, b2):
    if b1._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b2._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    a, b = b1._data.shape, b2._data.shape
    if a[0] != b[0] or a[2] != b[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a[0]}, {a[2]}] but got: [{b[0]}, {b[1]}].")


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    _check_bmm(batch1, batch2)
    b1, b2 = batch1._data.shape, batch2._data.shape
    _check_add_shape(input, (b1[0], b1[1], b2[2]))
    return baddbmm_(input, batch1, batch2, beta, alpha)


def _addbmm_fwd(xp, self, batch1, batch2, beta=1, alpha=1):
    prod = xp.matmul(batch1, batch2).sum(0)
    return _addmm_fwd(xp, self, prod, xp.eye(prod.shape[1], dtype=prod.dtype), beta, alpha)


addbmm_ = defop("addbmm", _addbmm_fwd, promote="binary",
                self=lambda grad, beta: _scaled(grad, beta),
                batch1=lambda grad, batch2, alpha: _scaled(unsqueeze(grad, 0) @ _mT(batch2), alpha),
                batch2=lambda grad, batch1, alpha: _scaled(_mT(batch1) @ unsqueeze(grad, 0), alpha))


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    _check_bmm(batch1, batch2)
    b1, b2 = batch1._data.shape, batch2._data.shape
    _check_add_shape(input, (b1[1], b2[2]))
    return addbmm_(input, batch1, batch2, beta, alpha)


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
    """One joint formula: d/d operand i = einsum(grad, the other operands) -> operand i's subs."""
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
            g = einsum(eq, grad, *[ops[j] for j in range(n) if j != i])
            if keep != mine:
                sizes = {c: s_ for c, s_ in zip(mine, ops[i].shape)}
                shape1 = tuple(sizes[c] if c in keep else 1 for c in mine)
                g = expand(reshape(g, shape1), tuple(sizes[c] for c in mine))
            res.append(g)
        return tuple(res)
    backward.__signature__ = inspect.Signature([P(x, P.POSITIONAL_OR_KEYWORD) for x in names])
    return backward


def _normalize_einsum(equation, operands):
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


def einsum(equation, *operands):
    """torch.einsum(equation, *operands) (also einsum(equation, [operands]))."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    eq = _normalize_einsum(equation, operands)
    eq, operands = _take_diagonals(eq, operands)
    n = len(operands)
    op = _EINSUM_OPS.get(n)
    if op is None:
        op = _EINSUM_OPS[n] = defop("einsum", _einsum_fwd_n(n), promote="binary",
                                    backward=_einsum_grad_n(n),
                                    inputs=tuple(f"t{i}" for i in range(n)))
    return op(eq, *operands)


def tensordot(a, b, dims=2, out=None):
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
        if a._data.shape[x] != b._data.shape[y]:
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
    ma = reshape(permute(a, fa + da), (-1, k))
    mb = reshape(permute(b, db + fb), (k, -1))
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
    self.dtype if self.dtype.kind == "f" else "int64"), self=_trace_grad)


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
    if input._data.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return tril_(input, diagonal)


def triu(input, diagonal=0):
    if input._data.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return triu_(input, diagonal)


# ---------------------------------------------------------------- linalg: inverse, det, solve

class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a numerical failure (singular, not positive-definite)."""


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
             self=lambda grad, result: -(_mT(result) @ grad @ _mT(result)))


def inv(A, *, out=None):
    _check_square(A, "linalg.inv")
    return _inv(A)


def _det_grad(grad, self, result):
    g = unsqueeze(unsqueeze(grad * result, -1), -1)
    return g * _mT(inv(self))


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


def _slogdet_grad(grad, self):
    g = unsqueeze(unsqueeze(grad[1], -1), -1)
    return g * _mT(inv(self))


_slogdet = defop("linalg_slogdet", _slogdet_fwd, outputs=2, nondiff_outputs=(0,),
                 node_name="LinalgSlogdetBackward0", self=_slogdet_grad)


def slogdet(A, *, out=None):
    _check_square(A, "linalg.slogdet")
    s_, l_ = _slogdet(A)
    return slogdet_type(s_, l_)


def logdet(input):
    """torch.logdet: log(det(A)); nan for a negative determinant."""
    s_, l_ = slogdet(input)
    if (s_._data < 0).any():
        from .pointwise import where
        return where(s_ < 0, float("nan"), l_)
    return l_


def _solve_fwd(xp, A, B, vec, left=True):
    try:
        if vec:
            return xp.linalg.solve(A, B[..., None])[..., 0]
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
        gB = solve(_mT(A), grad)                      # A^{-T} grad
        gA = None
        if A.requires_grad:
            gA = -(unsqueeze(gB, -1) * unsqueeze(result, -2)) if vec else -(gB @ _mT(result))
    else:
        gB = _mT(solve(A, _mT(grad)))                 # grad A^{-T}
        gA = -(_mT(result) @ gB) if A.requires_grad else None
    return gA, gB if B.requires_grad else None


_solve = defop("linalg_solve", _solve_fwd, promote="binary", node_name="LinalgSolveExBackward0",
               backward=_solve_grads, inputs=("A", "B"))


def solve(A, B, *, left=True, out=None):
    _check_square(A, "linalg.solve")
    n = A._data.shape[-1]
    vec = left and (B._data.ndim == 1 or (B._data.ndim == A._data.ndim - 1
                                          and B._data.shape == A._data.shape[:-1]))
    k = B._data.shape[-1] if vec or not left else B._data.shape[-2]
    if k != n:
        raise RuntimeError(
            f"linalg.solve: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({_dims_str(A._data.shape[-2:])} and "
            f"{_dims_str(B._data.shape[-1:] if vec else B._data.shape[-2:])})")
    return _solve(A, B, vec, left)


# ---------------------------------------------------------------- decompositions

def _cholesky_fwd(xp, self, upper):
    try:
        L = xp.linalg.cholesky(self)
    except xp.linalg.LinAlgError:
        raise LinAlgError(_chol_error(xp, self)) from None
    return xp.swapaxes(L, -1, -2).copy() if upper else L


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
    L = _mT(result) if upper else result
    gL = _mT(grad) if upper else grad
    gA = tril(_mT(L) @ gL)
    gA = 0.5 * (gA + _mT(tril(gA, -1)))
    gA = solve(_mT(L), gA)             # L^{-H} gA
    gA = _mT(solve(_mT(L), _mT(gA)))   # ... L^{-1}
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
    if m < n:
        raise NotImplementedError("linalg.qr backward is implemented for m >= n only")
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")
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
    k = builtins.min(m, n)
    if full_matrices and m != n:
        raise RuntimeError(
            "linalg_svd_backward: The derivative of linalg.svd is not implemented when "
            "full_matrices=True and the input is not square. Use full_matrices=False.")
    Sr = unsqueeze(S, -2)            # (..., 1, k): scales columns
    Sc = unsqueeze(S, -1)            # (..., k, 1): scales rows
    inner = diag_embed(gS)
    if gU is not None or gVh is not None:
        V = _mT(Vh)
        UhgU = _mT(U) @ gU
        gV = _mT(gVh)
        VhgV = _mT(V) @ gV
        E = Sr * Sr - Sc * Sc
        eye = diag_embed(S.new_ones(tuple(S.shape)))
        E = E + eye                  # the diagonal of skew(.) is zero anyway
        inner = inner + (UhgU - _mT(UhgU)) / E * Sr + Sc * ((VhgV - _mT(VhgV)) / E)
        gA = U @ inner @ Vh
        if m > k:
            gA = gA + ((gU - U @ UhgU) / Sr) @ Vh
        if n > k:
            gA = gA + (U / Sr) @ _mT(gV - V @ VhgV)
        return gA
    return U @ inner @ Vh


def _svd_grad(grad, self, full_matrices, result):
    U, S, Vh = result
    gU, gS, gVh = grad
    m, n = self.shape[-2], self.shape[-1]
    return _svd_backward(gU, gS, gVh, U, S, Vh, full_matrices, m, n)


_svd = defop("linalg_svd", _svd_fwd, outputs=3, node_name="LinalgSvdBackward0", self=_svd_grad)


def _svdvals_grad(grad, self):
    # recompute the vectors with a differentiable svd, so double backward sees them move
    U, S, Vh = _svd(self, False)
    return U @ diag_embed(grad) @ Vh


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
    _check_square(A, "linalg.eigvalsh")
    return _eigvalsh(A, UPLO)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    from .reduction import sum as _sum
    from .pointwise import sqrt, abs as _abs
    if A._data.ndim < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    if ord == "fro":
        return sqrt(_sum(A * A, dim, keepdim))
    if ord == "nuc":
        d0, d1 = (_wrap_dim(d, A._data.ndim) for d in dim)
        from .shape import movedim
        r = _sum(svdvals(movedim(A, (d0, d1), (-2, -1))), -1)
        if keepdim:
            r = unsqueeze(unsqueeze(r, builtins.min(d0, d1)), builtins.max(d0, d1))
        return r
    if ord in (1, -1, float("inf"), float("-inf")):
        from .reduction import amax, amin
        d0, d1 = (_wrap_dim(d, A._data.ndim) for d in dim)
        if ord in (float("inf"), float("-inf")):
            d0, d1 = d1, d0
        s_ = _sum(_abs(A), d0, True)
        r = (amax if ord > 0 else amin)(s_, d1, True)
        if not keepdim:
            r = squeeze(r, (d0, d1))
        return r
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


_cross = defop("linalg_cross", lambda xp, self, other, dim: xp.cross(self, other, axis=dim),
               promote="binary",
               self=lambda grad, other, dim: _cross(other, grad, dim),
               other=lambda grad, self, dim: _cross(grad, self, dim))


def linalg_cross(input, other, *, dim=-1):
    from .shape import broadcast_shapes
    if input._data.ndim != other._data.ndim:
        raise RuntimeError(
            f"linalg.cross: inputs must have the same number of dimensions.")
    nd = input._data.ndim
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
        dim = next((i for i, s_ in enumerate(input._data.shape) if s_ == 3), -1)
    return linalg_cross(input, other, dim=dim)
