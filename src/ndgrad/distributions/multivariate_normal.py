"""MultivariateNormal, parameterised by a covariance, a precision or a lower Cholesky factor;
all computations go through the (unbroadcast) Cholesky factor L of the covariance."""
import math

from . import _torch as _t
from .._tensor import Size
from . import constraints as C
from .distribution import Distribution, lazy_property
from .kl import register_kl

__all__ = ["MultivariateNormal"]


def _batch_mahalanobis(L, x):
    """|L^-1 x|^2 over the last dimension, L broadcast against x's batch."""
    n = x.shape[-1]
    batch = _t.broadcast_shapes(L.shape[:-2], x.shape[:-1])
    z = _t.linalg.solve_triangular(L.expand(batch + (n, n)),
                                   x.expand(batch + (n,)).unsqueeze(-1), upper=False)
    return z.squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(P):
    # the Cholesky factor of P with the axes reversed gives L^-T, flipped back and inverted
    Lf = _t.linalg.cholesky(_t.flip(P, (-2, -1)))
    L_inv = _t.flip(Lf, (-2, -1)).mT
    eye = _t.eye(P.shape[-1], dtype=P.dtype)
    return _t.linalg.solve_triangular(L_inv, eye.expand(L_inv.shape), upper=False)


def _one_matrix(covariance_matrix, precision_matrix, scale_tril, error):
    """(name, matrix) of the one matrix parameter given; `error` (PyTorch's type for the
    family) when not exactly one is."""
    given = [(k, v) for k, v in (("covariance_matrix", covariance_matrix),
                                 ("precision_matrix", precision_matrix),
                                 ("scale_tril", scale_tril)) if v is not None]
    if len(given) != 1:
        raise error("Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                    "specified.")
    return given[0]


def _scale_tril_of(name, m):
    """The Cholesky factor of the (scale) matrix, from whichever parameter was given."""
    if name == "scale_tril":
        return m
    if name == "covariance_matrix":
        return _t.linalg.cholesky(m)
    return _precision_to_scale_tril(m)


class _ScaleTrilMatrices:
    """scale_tril, covariance_matrix and precision_matrix of a distribution held as the Cholesky
    factor `_unbroadcasted_scale_tril` of its (scale) matrix, expanded by `_full` to the batch
    (MultivariateNormal, Wishart)."""

    @lazy_property
    def scale_tril(self):
        return self._full(self._unbroadcasted_scale_tril)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return self._full(L @ L.mT)

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        eye = _t.eye(L.shape[-1], dtype=L.dtype, device=L.device)
        L_inv = _t.linalg.solve_triangular(L, eye.expand(L.shape), upper=False)
        return self._full(L_inv.mT @ L_inv)


class MultivariateNormal(_ScaleTrilMatrices, Distribution):
    arg_constraints = {"loc": C.real_vector, "covariance_matrix": C.positive_definite,
                       "precision_matrix": C.positive_definite, "scale_tril": C.lower_cholesky}
    support = C.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        name, m = _one_matrix(covariance_matrix, precision_matrix, scale_tril, ValueError)
        if m.dim() < 2:
            raise ValueError(f"{name} matrix must be at least two-dimensional, with optional "
                             f"leading batch dimensions")
        batch = _t.broadcast_shapes(m.shape[:-2], loc.shape[:-1])
        self.__dict__[name] = m.expand(batch + (-1, -1))
        self.loc = loc.expand(batch + (-1,))
        super().__init__(batch, self.loc.shape[-1:], validate_args=validate_args)
        self._unbroadcasted_scale_tril = _scale_tril_of(name, m)

    def _full(self, m):
        return m.expand(self._batch_shape + self._event_shape + self._event_shape)

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)
    variance = property(lambda self: self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
        self._batch_shape + self._event_shape))

    def rsample(self, sample_shape=Size()):
        eps = _t.randn(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        self._check(value)
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self):
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h.expand(self._batch_shape) if self._batch_shape else h


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event "
                         "shapes cannot be computed")
    pL, qL = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    n = p.event_shape[0]
    half_term1 = q._half_log_det() - p._half_log_det()
    batch = _t.broadcast_shapes(qL.shape[:-2], pL.shape[:-2])
    z = _t.linalg.solve_triangular(qL.expand(batch + (n, n)), pL.expand(batch + (n, n)),
                                   upper=False)
    term2 = z.pow(2).sum((-2, -1))
    term3 = _batch_mahalanobis(qL, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)
