"""torch.special: the special functions, under PyTorch's names (re-exports; the ops live in
ops/special.py and ops/pointwise.py).

    >>> import ndgrad as torch
    >>> torch.special.erfcx(torch.tensor([30.0], dtype=torch.float64))
    tensor([0.0188], dtype=torch.float64)
"""
from .ops.pointwise import (erf, erfc, erfinv, lgamma as gammaln, digamma, polygamma, i0,
                            mvlgamma, xlogy, logit, sigmoid as expit, sinc, exp2, expm1, log1p)
from .ops.pointwise import round as _round
from .ops.activation import softmax as _softmax, log_softmax as _log_softmax
from .ops.reduction import logsumexp
from .ops.special import (erfcx, ndtr, log_ndtr, ndtri, entr, xlog1py, gammainc, gammaincc, i0e,
                          i1, i1e, bessel_j0, bessel_j1, bessel_y0, bessel_y1, modified_bessel_i0,
                          modified_bessel_i1, modified_bessel_k0, modified_bessel_k1,
                          scaled_modified_bessel_k0, scaled_modified_bessel_k1,
                          spherical_bessel_j0, airy_ai, zeta, chebyshev_polynomial_t,
                          chebyshev_polynomial_u, chebyshev_polynomial_v, chebyshev_polynomial_w,
                          shifted_chebyshev_polynomial_t, shifted_chebyshev_polynomial_u,
                          shifted_chebyshev_polynomial_v, shifted_chebyshev_polynomial_w,
                          hermite_polynomial_h, hermite_polynomial_he, laguerre_polynomial_l,
                          legendre_polynomial_p)

psi = digamma

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
    "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc",
    "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e",
    "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit",
    "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
    "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy",
    "zeta",
]


def multigammaln(input, p):
    """torch.special.multigammaln(input, p): torch.mvlgamma."""
    return mvlgamma(input, p)


def round(input, *, decimals=0):
    """torch.special.round(input, *, decimals=0): half to even, as torch.round."""
    return _round(input, decimals=decimals) if decimals else _round(input)


def softmax(input, dim, *, dtype=None):
    """torch.special.softmax(input, dim, *, dtype=None)."""
    return _softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """torch.special.log_softmax(input, dim, *, dtype=None)."""
    return _log_softmax(input, dim, dtype=dtype)


from .ops._registry import named_as_pytorch as _named  # noqa: E402
_named(globals(), __all__, "special_")

