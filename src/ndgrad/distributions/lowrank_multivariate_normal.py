"""LowRankMultivariateNormal: a Gaussian with covariance Sigma = W W^T + diag(D), W an n x m factor
(m usually much smaller than n), and its KL pairs with itself and with MultivariateNormal.

Nothing n x n is factorised. With the m x m capacitance matrix C = I + W^T D^-1 W = K K^T,
    log|Sigma| = log|C| + sum(log D)                      (matrix determinant lemma)
    Sigma^-1   = D^-1 - B^T B,   B = K^-1 W^T D^-1        (Woodbury's identity)
so a quadratic form x^T Sigma^-1 x is sum(x^2 / D) - |B x|^2."""
import math

from . import _torch as _t
from .._tensor import Size
from . import constraints as C
from .distribution import Distribution, lazy_property
from .kl import register_kl
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis

__all__ = ["LowRankMultivariateNormal"]


def _capacitance_cholesky(W, D):
    """K with K K^T = I + W^T D^-1 W."""
    eye = _t.eye(W.shape[-1], dtype=W.dtype)
    return _t.linalg.cholesky(eye + (W.mT / D.unsqueeze(-2)) @ W)


def _woodbury_factor(W, D, K):
    """B = K^-1 W^T D^-1, so that Sigma^-1 = D^-1 - B^T B."""
    Dinv_W_T = W.mT / D.unsqueeze(-2)
    batch = _t.broadcast_shapes(K.shape[:-2], Dinv_W_T.shape[:-2])
    return _t.linalg.solve_triangular(K.expand(batch + K.shape[-2:]),
                                      Dinv_W_T.expand(batch + Dinv_W_T.shape[-2:]), upper=False)


def _log_det(W, D, K):
    return 2 * K.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _quad_form(W, D, K, x):
    """x^T Sigma^-1 x over the last dimension, broadcast over the batch."""
    projected = (W.mT @ (x / D).unsqueeze(-1)).squeeze(-1)      # W^T D^-1 x, length m
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(K, projected)


def _sq_frobenius(X):
    return X.pow(2).sum((-2, -1))


class LowRankMultivariateNormal(Distribution):
    arg_constraints = {"loc": C.real_vector, "cov_factor": C.independent(C.real, 2),
                       "cov_diag": C.independent(C.positive, 1)}
    support = C.real_vector
    has_rsample = True
    _also_expand = ("covariance_matrix", "precision_matrix", "scale_tril")

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if cov_factor.shape[-2:-1] != event:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event[0]} x m")
        if cov_diag.shape[-1:] != event:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event}")
        try:
            batch = _t.broadcast_shapes(loc.shape[:-1], cov_factor.shape[:-2],
                                        cov_diag.shape[:-1])
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from e
        self.loc = loc.expand(batch + event)
        self.cov_factor = cov_factor.expand(batch + cov_factor.shape[-2:])
        self.cov_diag = cov_diag.expand(batch + event)
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _capacitance_cholesky(cov_factor, cov_diag)
        super().__init__(batch, event, validate_args=validate_args)

    def _parts(self):
        return self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, \
            self._capacitance_tril

    def _full(self, m):
        return m.expand(self._batch_shape + self._event_shape + self._event_shape)

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)

    @property
    def variance(self):
        W, D, _ = self._parts()
        return (W.pow(2).sum(-1) + D).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        W, D, _ = self._parts()
        return self._full(W @ W.mT + D.diag_embed())

    @lazy_property
    def precision_matrix(self):
        B = _woodbury_factor(*self._parts())
        return self._full(self._unbroadcasted_cov_diag.reciprocal().diag_embed() - B.mT @ B)

    @lazy_property
    def scale_tril(self):
        # Sigma = S (I + V V^T) S with S = D^1/2 and V = S^-1 W: the middle factor has every
        # eigenvalue >= 1, so its Cholesky factor is well conditioned
        W, D, _ = self._parts()
        s = D.sqrt().unsqueeze(-1)
        V = W / s
        inner = _t.linalg.cholesky(V @ V.mT + _t.eye(V.shape[-2], dtype=V.dtype))
        return self._full(s * inner)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        W, D, _ = self._parts()
        eps_factor = _t.randn(shape[:-1] + W.shape[-1:], dtype=self.loc.dtype)
        eps_diag = _t.randn(shape, dtype=self.loc.dtype)
        return self.loc + (W @ eps_factor.unsqueeze(-1)).squeeze(-1) + D.sqrt() * eps_diag

    def log_prob(self, value):
        self._check(value)
        parts = self._parts()
        m = _quad_form(*parts, value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + _log_det(*parts) + m)

    def entropy(self):
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + _log_det(*self._parts()))
        return h.expand(self._batch_shape) if self._batch_shape else h


# KL(p || q) = (log|Sigma_q| - log|Sigma_p| + tr(Sigma_q^-1 Sigma_p) + d^T Sigma_q^-1 d - n) / 2
# with d = mu_q - mu_p; the trace expands through Woodbury (a low-rank q) or through L_q^-1.

def _different_events(p, q, what):
    if p.event_shape != q.event_shape:
        # PyTorch's message, the run of spaces included
        raise ValueError(f"KL-divergence between two {what} Multivariate Normals with"
                         "                          different event shapes cannot be computed")


def _gaussian_kl(n, log_det_p, log_det_q, trace, quad):
    return 0.5 * (log_det_q - log_det_p + trace + quad - n)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p, q):
    _different_events(p, q, "Low Rank")
    (Wp, Dp, Kp), (Wq, Dq, Kq) = p._parts(), q._parts()
    B = _woodbury_factor(Wq, Dq, Kq)
    # tr((Dq^-1 - B^T B)(Wp Wp^T + Dp))
    trace = ((Dp / Dq).sum(-1) + _sq_frobenius(Wp / Dq.sqrt().unsqueeze(-1))
             - _sq_frobenius(B * Dp.sqrt().unsqueeze(-2)) - _sq_frobenius(B @ Wp))
    return _gaussian_kl(p.event_shape[0], _log_det(Wp, Dp, Kp), _log_det(Wq, Dq, Kq), trace,
                        _quad_form(Wq, Dq, Kq, q.loc - p.loc))


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_mvn_lowrank(p, q):
    _different_events(p, q, "(Low Rank)")
    Lp = p._unbroadcasted_scale_tril
    Wq, Dq, Kq = q._parts()
    B = _woodbury_factor(Wq, Dq, Kq)
    # tr((Dq^-1 - B^T B) Lp Lp^T)
    trace = _sq_frobenius(Lp / Dq.sqrt().unsqueeze(-1)) - _sq_frobenius(B @ Lp)
    return _gaussian_kl(p.event_shape[0], 2 * p._half_log_det(), _log_det(Wq, Dq, Kq), trace,
                        _quad_form(Wq, Dq, Kq, q.loc - p.loc))


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_mvn(p, q):
    _different_events(p, q, "(Low Rank)")
    Wp, Dp, Kp = p._parts()
    Lq = q._unbroadcasted_scale_tril
    n = p.event_shape[0]
    batch = _t.broadcast_shapes(Lq.shape[:-2], Wp.shape[:-2], Dp.shape[:-1])
    Lq = Lq.expand(batch + (n, n))
    eye = _t.eye(n, dtype=Lq.dtype).expand(batch + (n, n))
    # tr(Sigma_q^-1 (Wp Wp^T + Dp)) = |Lq^-1 Wp|^2 + sum_j Dp_j |column j of Lq^-1|^2
    Lq_inv_W = _t.linalg.solve_triangular(Lq, Wp.expand(batch + Wp.shape[-2:]), upper=False)
    Lq_inv = _t.linalg.solve_triangular(Lq, eye, upper=False)
    trace = _sq_frobenius(Lq_inv_W) + (Lq_inv.pow(2).sum(-2) * Dp).sum(-1)
    return _gaussian_kl(p.event_shape[0], _log_det(Wp, Dp, Kp), 2 * q._half_log_det(), trace,
                        _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc))
