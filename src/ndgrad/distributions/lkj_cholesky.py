"""LKJCholesky(dim, concentration): the lower Cholesky factor L of a dim x dim correlation matrix
L L^T with density proportional to det(L L^T)^(concentration - 1) (the LKJ law), sampled with
the onion method of Lewandowski, Kurowicka and Joe (2009)."""
import math

from . import _torch as _t
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from . import constraints as C
from .distribution import Distribution, broadcast_all
from .gamma import Beta

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    arg_constraints = {"concentration": C.positive}
    support = C.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        # Note [LKJ onion sampler]: row i >= 1 of L is (sqrt(y_i) u_i, sqrt(1 - y_i), 0, ...)
        # with u_i uniform on the unit sphere of R^i and y_i ~ Beta(i / 2, eta + (dim-1-i) / 2)
        # (row 0 is (1, 0, ..., 0); its Beta draw is unused). PyTorch 2.13 draws
        # Beta(i - 1/2, ...) instead, which agrees only for i = 1: from the third row on its
        # correlations are too spread out (for dim 3, eta 1 the variance of C_20 is 0.30, not
        # the LKJ law's 1 / (2 eta + dim - 1) = 0.25). Here every row follows the law log_prob
        # describes.
        half_i = 0.5 * _t.arange(dim, dtype=self.concentration.dtype).clamp(min=1)
        tail = self.concentration.unsqueeze(-1) + 0.5 * (dim - 1) - half_i
        self._beta = Beta(half_i, tail)
        super().__init__(self.concentration.shape, (dim, dim), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape)
        new._beta = self._beta.expand(Size(batch_shape) + (self.dim,))
        return new

    def sample(self, sample_shape=Size()):
        with no_grad():
            y = self._beta.sample(sample_shape)[..., None]
            u = _t.randn(self._extended_shape(sample_shape), dtype=y.dtype).tril(-1)
            tiny = _t.finfo(u.dtype).tiny
            u = u / _t.linalg.vector_norm(u, dim=-1, keepdim=True).clamp(min=tiny)
            w = y.sqrt() * u
            diag = (1 - w.pow(2).sum(-1)).clamp(min=tiny).sqrt()
            return w + diag.diag_embed()

    def log_prob(self, value):
        # det(L L^T)^(eta - 1) = prod_i L_ii^(2 eta - 2), and the map L -> L L^T has Jacobian
        # prod_i L_ii^(dim - 1 - i): together prod_{i >= 1} L_ii^(2 eta - 3 + dim - i)
        self._check(value)
        m = self.dim - 1
        powers = 2 * (self.concentration.unsqueeze(-1) - 1) \
            + _t.arange(m - 1, -1, -1, dtype=self.concentration.dtype)
        log_diag = value.diagonal(dim1=-2, dim2=-1)[..., 1:].log()
        a = self.concentration + 0.5 * m
        log_norm = (0.5 * m * math.log(math.pi) + _t.mvlgamma(a - 0.5, p=m)
                    - m * a.lgamma())
        return (powers * log_diag).sum(-1) - log_norm
