"""torch.nn.utils.parametrizations: orthogonal, weight_norm and spectral_norm as
parametrizations (nn.utils.parametrize), with PyTorch's state_dict keys
(`parametrizations.weight.original0/1`, `parametrizations.weight.0._u`, ...)."""
from enum import Enum, auto

import numpy as _np

from ..._backend import xp_of
from ..modules.module import Module
from .. import functional as F
from . import parametrize
from .weight_norm import norm_except_dim, _weight_norm
from ..._tensor import Tensor, _make
from ...autograd.grad_mode import no_grad
from ..._creation import empty

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


# ---------------------------------------------------------------- orthogonal

def _householder_product(A, tau):
    """The first k columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H, v_i the i-th column of A
    below the diagonal with a unit on it (LAPACK's orgqr), composed of differentiable ops."""
    from ...ops import cat
    from ..._creation import eye
    n, k = A.shape[-2], A.shape[-1]
    lower = A.tril(-1)
    unit = eye(n, k, dtype=A.dtype, device=A.device)
    V = lower + unit                                           # (..., n, k) reflectors
    Q = eye(n, dtype=A.dtype, device=A.device).expand(*A.shape[:-2], n, n)
    for i in reversed(range(k)):
        v = V[..., :, i:i + 1]                                # (..., n, 1)
        Q = Q - tau[..., i:i + 1].unsqueeze(-1) * (v @ (v.mH @ Q))
    return Q[..., :, :k]


def _geqrf(A):
    """(reflectors below the diagonal with R on and above it, tau): LAPACK's geqrf, through
    the array module's raw QR (which returns it transposed), batched by a loop."""
    a = A.detach()._data
    xp = xp_of(a)
    lead = a.shape[:-2]
    flat = a.reshape((-1,) + a.shape[-2:])
    hs, taus = [], []
    for m in flat:
        h, tau = xp.linalg.qr(m, mode="raw")
        hs.append(h.T)
        taus.append(tau)
    X = xp.stack(hs).reshape(a.shape) if flat.shape[0] else a.copy()
    tau = xp.stack(taus).reshape(lead + (min(a.shape[-2:]),)) if flat.shape[0] else \
        xp.zeros(lead + (min(a.shape[-2:]),), a.dtype)
    return _make(X.astype(a.dtype)), _make(tau.astype(a.dtype))


def _is_orthogonal(Q):
    from ..._creation import eye
    n, k = Q.shape[-2], Q.shape[-1]
    Id = eye(k, dtype=Q.dtype, device=Q.device)
    eps = 10.0 * n * float(_np.finfo(Q.dtype.np).eps)
    return bool(xp_of(Q._data).allclose((Q.mH @ Q).detach()._data, Id._data, atol=eps,
                                        rtol=1e-5))


def _make_orthogonal(A):
    X, tau = _geqrf(A)
    Q = _householder_product(X, tau)
    return Q * X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex "
                             "tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        from ...ops import cat
        from ... import matrix_exp
        from ..._creation import eye
        from ...linalg import solve
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH                                     # skew-symmetric
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = matrix_exp(A)
            else:
                Id = eye(n, dtype=A.dtype, device=A.device)
                Q = solve(Id - 0.5 * A, Id + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if "base" in self._buffers:
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        with no_grad():
            if Q.shape != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape "
                                 f"{self.shape}. Got a tensor of shape {Q.shape}.")
            Q_init = Q
            n, k = Q.shape[-2], Q.shape[-1]
            transpose = n < k
            if transpose:
                Q = Q.mT
                n, k = k, n
            if "base" not in self._buffers:
                if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                    raise NotImplementedError("It is not possible to assign to the matrix "
                                              "exponential or the Cayley parametrizations when "
                                              "use_trivialization=False.")
                A, tau = _geqrf(Q)
                a = A._data.copy()
                xp = xp_of(a)
                d = xp.sign(xp.diagonal(a, axis1=-2, axis2=-1)).copy()
                d[tau._data == 0.0] *= -1
                idx = xp.arange(d.shape[-1])
                a[..., idx, idx] = d
                A = _make(a)
                return A.mT if transpose else A
            if n == k:
                Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
            else:
                from ...ops import cat
                from ..._creation import randn
                N = randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype, device=Q.device)
                Q = _make_orthogonal(cat([Q, N], dim=-1))
            self.base = Q
            xp = xp_of(Q_init._data)
            neg_Id = xp.zeros(tuple(Q_init.shape), dtype=Q_init.dtype.np)
            idx = xp.arange(min(Q_init.shape[-2:]))
            neg_Id[..., idx, idx] = -1.0
            return _make(neg_Id)


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Keep module.<name> orthogonal (or unitary): Q = map(X) for an unconstrained X, map being
    the matrix exponential, the Cayley map or a product of Householder reflectors."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.shape[-2] == weight.shape[-1]
                          or weight.is_complex() else "householder")
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


# ---------------------------------------------------------------- weight norm

class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """module.<name> = g * v / ||v|| with g = original0, v = original1; a state_dict with the
    old `<name>_g`/`<name>_v` keys still loads."""
    _wn = _WeightNorm(dim)
    parametrize.register_parametrization(module, name, _wn, unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys,
                                 unexpected_keys, error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    from ..modules.module import RemovableHandle
    h = RemovableHandle(module._load_state_dict_pre_hooks)
    module._load_state_dict_pre_hooks[h.id] = _weight_norm_compat_hook
    return module


# ---------------------------------------------------------------- spectral norm

class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = empty(h, dtype=weight.dtype, device=weight.device).normal_(0, 1)
            v = empty(w, dtype=weight.dtype, device=weight.device).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if weight.ndim <= 1:
            raise AssertionError(f"Expected weight to have more than 1 dimension, got "
                                 f"{weight.ndim}")
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        with no_grad():
            for _ in range(n_power_iterations):
                for buf, new in (("_u", lambda: weight_mat.mv(self._v)),
                                 ("_v", lambda: weight_mat.mH.mv(self._u))):
                    t = getattr(self, buf)
                    t._data[...] = F.normalize(new(), dim=0, eps=self.eps)._data
                    t._bump_version()

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = u.vdot(weight_mat.mv(v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """module.<name> divided by its spectral norm, estimated by power iteration (u and v in
    the parametrization's buffers, refined once per training-mode access)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        from .spectral_norm import _default_dim
        dim = _default_dim(module)
    parametrize.register_parametrization(module, name,
                                         _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
