"""The Gamma-based families: Gamma (its sampler with the exact implicit reparameterisation
gradient), Chi2, Dirichlet (normalised Gamma draws), Beta (through Dirichlet) and
FisherSnedecor (a ratio of Gamma draws)."""
from . import _torch as _t
from .._tensor import Size, _make
from .._backend import numpy as _np, to_numpy, xp_of
from ..autograd.grad_mode import is_grad_enabled
from ..ops._registry import defop
from ..ops.pointwise import _digamma_np
from . import constraints as C
from .distribution import Distribution, ExponentialFamily, broadcast_all
from .kl import register_kl

__all__ = ["Gamma", "Chi2", "Beta", "Dirichlet"]

# Note [Gamma reparameterisation]
# A standard Gamma(alpha) sample x = F^-1(u; alpha) has the implicit derivative
#     dx/dalpha = -(dF/dalpha)(x; alpha) / pdf(x; alpha).
# PyTorch evaluates it with a fitted approximation (relative error up to about 4e-3); here it is
# computed exactly (to about 1e-13): for x <= max(alpha + 1, 1) from the power series
#     P(alpha, x) = x^alpha e^-x sum_n x^n / Gamma(alpha + n + 1),
# differentiated term by term, and above that from the continued fraction of the upper
# incomplete gamma function, differentiated in alpha by a complex step (no cancellation).


_MAX_TERMS = 100000   # enough for alpha up to about 1e6; both expansions converge faster


def _gamma_grad_forward(xp, self, output):
    alpha, x = xp.broadcast_arrays(self.astype("float64"), output.astype("float64"))
    shape = alpha.shape
    alpha, x = alpha.reshape(-1), x.reshape(-1)
    out = xp.zeros(alpha.shape)
    with _np.errstate(all="ignore"):  # host: error state
        upper = (x > alpha + 1) & (x > 1)
        lower = xp.nonzero(~upper & (x > 0))[0]
        if lower.size:
            out[lower] = _lower_series(xp, alpha[lower], x[lower])
        upper = xp.nonzero(upper)[0]
        if upper.size:
            out[upper] = _upper_fraction(xp, alpha[upper], x[upper])
    return out.reshape(shape).astype(output.dtype)


def _lower_series(xp, a, v):
    """-(dP/dalpha) / pdf from the power series (each element iterates until it converges)."""
    log_v, psi = xp.log(v), _digamma_np(xp, a) + 1 / a
    term = v / a                          # x^(n+1) Gamma(alpha) / Gamma(alpha + n + 1)
    total = -term * (log_v - psi)
    result = xp.empty_like(total)
    live = xp.arange(a.size)
    for n in range(1, _MAX_TERMS):
        term = term * v / (a + n)
        psi = psi + 1 / (a + n)
        total = total - term * (log_v - psi)
        if n > 5:
            done = ~(term > 1e-17 * xp.abs(total))           # nan counts as done
            if done.any():
                result[live[done]] = total[done]
                keep = ~done
                live, a, v, log_v, psi, term, total = (
                    z[keep] for z in (live, a, v, log_v, psi, term, total))
                if not live.size:
                    return result
    result[live] = total
    return result


def _upper_fraction(xp, a, v):
    """The same from the continued fraction of Gamma(alpha, x) (modified Lentz), with the
    alpha-derivative of the fraction taken by a complex step."""
    step, tiny = 1e-30, 1e-300
    ac = a + 1j * step
    b = v + 1 - ac
    c = xp.full(a.shape, 1 / tiny, dtype="complex128")
    d = 1 / b
    h = d
    fraction = xp.empty_like(h)
    live = xp.arange(a.size)
    for i in range(1, _MAX_TERMS):
        an = -i * (i - ac)
        b = b + 2
        d = an * d + b
        d = xp.where(d == 0, tiny, d)
        c = b + an / c
        c = xp.where(c == 0, tiny, c)
        d = 1 / d
        delta = d * c
        h = h * delta
        # converged: the value within two ulps and the complex-step part as well; nan: done
        done = ~((xp.abs(delta.real - 1) >= 4e-16) | (xp.abs(delta.imag) >= 4e-16 * step))
        if done.any():
            fraction[live[done]] = h[done]
            keep = ~done
            live, ac, b, c, d, h = (z[keep] for z in (live, ac, b, c, d, h))
            if not live.size:
                break
    else:
        fraction[live] = h
    return v * ((xp.log(v) - _digamma_np(xp, a)) * fraction.real + fraction.imag / step)


def _no_gamma_grad_derivative(grad):
    raise NotImplementedError("the derivative for '_standard_gamma_grad' is not implemented.")


_standard_gamma_grad = defop("_standard_gamma_grad", _gamma_grad_forward, quiet=True,
                             self=_no_gamma_grad_derivative, output=_no_gamma_grad_derivative)


def _standard_gamma_forward(xp, self):
    from .. import _creation
    from ..random import _mt19937 as _R
    # the host generator draws (one copy of the concentrations there, one of the draw back);
    # as PyTorch's sampler: never below the smallest normal number, so logs stay finite
    alpha = to_numpy(self)  # host: drawn on the host
    draw = _R.standard_gamma(_creation._rng(None), alpha.reshape(-1), alpha.dtype)
    return xp.asarray(draw.reshape(alpha.shape))  # host: of the host draw


_standard_gamma = defop(
    "_standard_gamma", _standard_gamma_forward,
    self=lambda grad, self, result: grad * _standard_gamma_grad(self, result))

# gamma draws already made (by the Dirichlet sampler), differentiable in the concentration
_gamma_at = defop(
    "_standard_gamma", lambda xp, self, draws: draws, quiet=True,
    self=lambda grad, self, result: grad * _standard_gamma_grad(self, result), draws=None)

def _gamma(concentration, shape):
    x = _standard_gamma(concentration.expand(shape))
    return x.clamp(min=_t.finfo(x.dtype).tiny)


class Gamma(ExponentialFamily):
    arg_constraints = {"concentration": C.positive, "rate": C.positive}
    support = C.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, validate_args=validate_args)

    mean = property(lambda self: self.concentration / self.rate)
    mode = property(lambda self: ((self.concentration - 1) / self.rate).clamp(min=0))
    variance = property(lambda self: self.concentration / self.rate.pow(2))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        x = _gamma(self.concentration, shape) / self.rate.expand(shape)
        return x.clamp(min=_t.finfo(x.dtype).tiny)

    def log_prob(self, value):
        self._check(value)
        c, r = self.concentration, self.rate
        return _t.xlogy(c, r) + _t.xlogy(c - 1, value) - r * value - c.lgamma()

    def cdf(self, value):
        self._check(value)
        return _t.special.gammainc(self.concentration, self.rate * value)

    def entropy(self):
        c = self.concentration
        return c - self.rate.log() + c.lgamma() + (1 - c) * c.digamma()

    _natural_params = property(lambda self: (self.concentration - 1, -self.rate))
    _mean_carrier_measure = 0

    def _log_normalizer(self, x, y):
        return (x + 1).lgamma() + (x + 1) * (-y.reciprocal()).log()


class Chi2(Gamma):
    arg_constraints = {"df": C.positive}
    _also_expand = ("concentration", "rate")

    def __init__(self, df, validate_args=None):
        (df,) = broadcast_all(df)
        super().__init__(0.5 * df, _t.full_like(df, 0.5), validate_args=validate_args)

    df = property(lambda self: self.concentration * 2)


class Dirichlet(Distribution):
    arg_constraints = {"concentration": C.independent(C.positive, 1)}
    support = C.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    _total = property(lambda self: self.concentration.sum(-1, keepdim=True))
    mean = property(lambda self: self.concentration / self._total)

    @property
    def mode(self):
        c = self.concentration
        m = (c - 1).clamp(min=0)
        m = m / m.sum(-1, keepdim=True)
        peak = _t.one_hot(c.argmax(-1), c.size(-1)).to(c.dtype)
        return _t.where((c < 1).all(-1, keepdim=True), peak, m)

    @property
    def variance(self):
        t = self._total
        return self.concentration * (t - self.concentration) / (t.pow(2) * (t + 1))

    def rsample(self, sample_shape=Size()):
        """PyTorch's draws (gamma in double, normalised in double, then cast); the gradient is
        ndgrad's exact one of g / sum(g) through the implicit gamma gradients at those draws."""
        from .. import _creation
        from ..random import _mt19937 as _R
        alpha = self.concentration.expand(self._extended_shape(sample_shape))
        host = to_numpy(alpha._data)  # host: drawn on the host
        values, g = _R.sample_dirichlet(_creation._rng(None), host, host.dtype)
        xp = xp_of(alpha._data)
        out = _make(xp.asarray(values))
        if not (alpha.requires_grad and is_grad_enabled()):
            return out
        g = _gamma_at(alpha, _make(xp.asarray(g.astype(host.dtype))))
        y = g / g.sum(-1, keepdim=True)
        return out + (y - y.detach())

    def log_prob(self, value):
        self._check(value)
        c = self.concentration
        return _t.xlogy(c - 1, value).sum(-1) + c.sum(-1).lgamma() - c.lgamma().sum(-1)

    def entropy(self):
        c, k = self.concentration, self.concentration.size(-1)
        t = c.sum(-1)
        return (c.lgamma().sum(-1) - t.lgamma() - (k - t) * t.digamma()
                - ((c - 1) * c.digamma()).sum(-1))


class Beta(Distribution):
    """Beta(a, b): the first coordinate of Dirichlet([a, b]) (whose checks and messages it
    shares, as PyTorch's)."""
    arg_constraints = {"concentration1": C.positive, "concentration0": C.positive}
    support = C.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        a, b = broadcast_all(concentration1, concentration0)
        self._dirichlet = Dirichlet(_t.stack([a, b], -1), validate_args=validate_args)
        super().__init__(self._dirichlet.batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        new._batch_shape = Size(batch_shape)
        return new

    concentration1 = property(lambda self: self._dirichlet.concentration[..., 0])
    concentration0 = property(lambda self: self._dirichlet.concentration[..., 1])
    _total = property(lambda self: self.concentration1 + self.concentration0)
    mean = property(lambda self: self.concentration1 / self._total)
    mode = property(lambda self: self._dirichlet.mode[..., 0])

    @property
    def variance(self):
        t = self._total
        return self.concentration1 * self.concentration0 / (t.pow(2) * (t + 1))

    def rsample(self, sample_shape=Size()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        self._check(value)
        return self._dirichlet.log_prob(_t.stack([value, 1.0 - value], -1))

    def entropy(self):
        return self._dirichlet.entropy()


@register_kl(Gamma, Gamma)
def _kl_gamma(p, q):
    return (q.concentration * (p.rate / q.rate).log() + q.concentration.lgamma()
            - p.concentration.lgamma()
            + (p.concentration - q.concentration) * p.concentration.digamma()
            + (q.rate - p.rate) * (p.concentration / p.rate))


@register_kl(Beta, Beta)
def _kl_beta(p, q):
    sp, sq = p._total, q._total
    return (q.concentration1.lgamma() + q.concentration0.lgamma() + sp.lgamma()
            - p.concentration1.lgamma() - p.concentration0.lgamma() - sq.lgamma()
            + (p.concentration1 - q.concentration1) * p.concentration1.digamma()
            + (p.concentration0 - q.concentration0) * p.concentration0.digamma()
            + (sq - sp) * sp.digamma())


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet(p, q):
    a, b = p.concentration, q.concentration
    sa = a.sum(-1)
    t1 = sa.lgamma() - b.sum(-1).lgamma()
    t2 = (a.lgamma() - b.lgamma()).sum(-1)
    t3 = ((a - b) * (a.digamma() - sa.unsqueeze(-1).digamma())).sum(-1)
    return t1 - t2 + t3


class FisherSnedecor(Distribution):
    """(X1 / df1) / (X2 / df2) with X1, X2 chi-squared: reparameterised through two Gammas."""
    arg_constraints = {"df1": C.positive, "df2": C.positive}
    support = C.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        super().__init__(self.df1.shape, validate_args=validate_args)

    mean = property(lambda self: _t.where(self.df2 > 2, self.df2 / (self.df2 - 2),
                                          float("nan")))

    @property
    def mode(self):
        m = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return _t.where(self.df1 > 2, m, float("nan"))

    @property
    def variance(self):
        d1, d2 = self.df1, self.df2
        v = 2 * d2.pow(2) * (d1 + d2 - 2) / (d1 * (d2 - 2).pow(2) * (d2 - 4))
        return _t.where(d2 > 4, v, float("nan"))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        x1 = _gamma(0.5 * self.df1, shape) / (0.5 * self.df1)
        x2 = _gamma(0.5 * self.df2, shape) / (0.5 * self.df2)
        tiny = _t.finfo(x2.dtype).tiny
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value):
        self._check(value)
        h1, h2, ratio = self.df1 * 0.5, self.df2 * 0.5, self.df1 / self.df2
        t1 = (h1 + h2).lgamma() - h1.lgamma() - h2.lgamma()
        t2 = h1 * ratio.log() + (h1 - 1) * value.log()
        t3 = (h1 + h2) * (ratio * value).log1p()
        return t1 + t2 - t3


__all__ += ["FisherSnedecor"]
