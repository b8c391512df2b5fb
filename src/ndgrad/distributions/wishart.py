"""Wishart(df, covariance_matrix | precision_matrix | scale_tril): the law of X = sum of df outer
products of N(0, Sigma) vectors, extended to real df > p - 1. Every formula goes through the
(unbroadcast) Cholesky factor L of Sigma; samples use the Bartlett decomposition
X = (L A)(L A)^T, A lower triangular with sqrt(chi2(df - i)) on the diagonal and standard
normals below it, so they are reparameterised in df (through Chi2) and in L."""
import math
import numbers
import warnings

from . import _torch as _t
from .._tensor import Size
from . import constraints as C
from .distribution import ExponentialFamily
from .gamma import Chi2
from .multivariate_normal import _ScaleTrilMatrices, _one_matrix, _scale_tril_of

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _multivariate_digamma(a, p):
    """d/da of mvlgamma(a, p) = sum_{i < p} digamma(a - i / 2)."""
    steps = _t.arange(p, dtype=a.dtype) / 2
    return (a.unsqueeze(-1) - steps).digamma().sum(-1)


class Wishart(_ScaleTrilMatrices, ExponentialFamily):
    support = C.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": C.positive_definite,
                "precision_matrix": C.positive_definite, "scale_tril": C.lower_cholesky,
                "df": C.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        name, m = _one_matrix(covariance_matrix, precision_matrix, scale_tril, AssertionError)
        if m.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch = Size(m.shape[:-2])
            self.df = _t.tensor(float(df), dtype=m.dtype, device=m.device)
        else:
            batch = _t.broadcast_shapes(m.shape[:-2], df.shape)
            self.df = df.expand(batch)
        p = m.shape[-1]
        if (self.df <= p - 1).any():
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        self.__dict__[name] = m.expand(batch + (-1, -1))
        if (self.df < p).any():
            warnings.warn("Low df values detected. Singular samples are highly likely to occur "
                          "for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch, m.shape[-2:], validate_args=validate_args)
        self._unbroadcasted_scale_tril = _scale_tril_of(name, m)
        self._dist_chi2 = self._bartlett_chi2()

    def _bartlett_chi2(self):
        """Chi2(df - i) for the i-th diagonal entry of the Bartlett factor."""
        p = self._event_shape[-1]
        dfs = self.df.unsqueeze(-1) - _t.arange(p, dtype=self._unbroadcasted_scale_tril.dtype)
        return Chi2(dfs.expand(self._batch_shape + (p,)))

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(
            new._batch_shape + self._event_shape)
        new._dist_chi2 = new._bartlett_chi2()
        return new

    def _full(self, m):
        return m.expand(self._batch_shape + self._event_shape)

    def _df_matrix(self, x=None):
        """df (or x) as a batch of 1 x 1 matrices."""
        return (self.df if x is None else x).unsqueeze(-1).unsqueeze(-1)

    def _log_det_scale(self):
        """log|Sigma| / 2."""
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


    @property
    def mean(self):
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self._event_shape[-1] - 1
        factor = _t.where(factor > 0, factor, math.nan)
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        # Var(X_ij) = df (S_ij^2 + S_ii S_jj)
        S = self.covariance_matrix
        d = S.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix() * (S.pow(2) + d.unsqueeze(-1) * d.unsqueeze(-2))

    def _bartlett(self, sample_shape):
        diag = self._dist_chi2.rsample(sample_shape).sqrt()
        diag = diag.clamp(min=_t.finfo(diag.dtype).eps)
        below = _t.randn(diag.shape + diag.shape[-1:], dtype=diag.dtype).tril(-1)
        factor = self._unbroadcasted_scale_tril @ (below + diag.diag_embed())
        return factor @ factor.mT

    def _singular(self, x, sample_dims):
        """Per sample index: does any batch member fail to be positive definite?"""
        bad = ~self.support.check(x.detach())
        return bad.reshape(bad.shape[:sample_dims] + (-1,)).any(-1)

    def rsample(self, sample_shape=Size(), max_try_correction=None):
        """Bartlett samples; samples that come out singular (possible when df is close to
        p - 1) are redrawn, up to max_try_correction (default 10) times, with a warning.
        A sample still singular after that is returned as it is. (PyTorch 2.13 tests the
        positive-definite check the wrong way round before its first redraw, so it warns and
        redraws on nearly every call; here only samples that fail the check are redrawn.)"""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = Size(sample_shape)
        x = self._bartlett(sample_shape)
        bad = self._singular(x, len(sample_shape))
        if not bool(bad.any()):
            return x
        warnings.warn("Singular sample detected.", stacklevel=2)
        tail = x.shape[len(sample_shape):]
        x = x.reshape((-1,) + tail)
        bad = bad.reshape(-1)
        for _ in range(max_try_correction):
            where = bad.nonzero().squeeze(-1)
            fresh = self._bartlett(Size((where.numel(),)))
            x = x.index_put((where,), fresh)
            bad = bad.index_put((where,), self._singular(fresh, 1))
            if not bool(bad.any()):
                break
        return x.reshape(sample_shape + tail)

    def log_prob(self, value):
        self._check(value)
        nu, p = self.df, self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        trace = _t.cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(-1)  # tr(S^-1 X)
        log_det_x = _t.linalg.slogdet(value).logabsdet
        return (-nu * (0.5 * p * _LOG_2 + self._log_det_scale()) - _t.mvlgamma(nu / 2, p=p)
                + 0.5 * (nu - p - 1) * log_det_x - 0.5 * trace)

    def entropy(self):
        nu, p = self.df, self._event_shape[-1]
        return ((p + 1) * (0.5 * p * _LOG_2 + self._log_det_scale())
                + _t.mvlgamma(nu / 2, p=p) - 0.5 * (nu - p - 1) * _multivariate_digamma(nu / 2, p)
                + 0.5 * nu * p)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -0.5 * self.precision_matrix, 0.5 * (self.df - p - 1)

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        a = y + 0.5 * (p + 1)
        return a * (p * _LOG_2 - _t.linalg.slogdet(-2 * x).logabsdet) + _t.mvlgamma(a, p=p)
