"""Fits the coefficients of ndgrad's special-function kernels (src/ndgrad/ops/_specfun.py).

    python tools/fit_special.py          # needs mpmath; prints the tables _specfun.py holds

Each table is a near-minimax rational (or polynomial) approximation, fitted in 60-digit
arithmetic: linearized least squares on Chebyshev nodes, reweighted by the denominator
(Sanathanan-Koerner) and then by the error (Lawson) toward equal ripple. The error printed
beside each table is the largest over a dense grid, in the same arithmetic; the float64
evaluation's own rounding is tested against mpmath and PyTorch in tests/test_specfun.py.
"""
import mpmath as mp

mp.mp.dps = 60


def _nodes(a, b, n):
    return [(a + b) / 2 + (b - a) / 2 * mp.cos(mp.pi * (2 * k + 1) / (2 * n)) for k in range(n)]


def _value(p, q, t):
    num = mp.mpf(0)
    for c in reversed(p):
        num = num * t + c
    den = mp.mpf(0)
    for c in reversed(q):
        den = den * t + c
    return num / (den * t + 1) if q else num


def ratfit(f, a, b, m, n, rel=True, sk=10, lawson=25, weight=None):
    """P_m / Q_n with Q(0) = 1 approximating f on [a, b]; the (relative) error is minimized, or
    the error times weight(x) when a weight is given."""
    a, b = mp.mpf(a), mp.mpf(b)
    xs = _nodes(a, b, 6 * (m + n + 2)) + [a, b]
    fs = [f(x) for x in xs]
    scale = [weight(x) if weight else 1 / abs(v) if rel else mp.mpf(1) for x, v in zip(xs, fs)]
    w = [mp.mpf(1)] * len(xs)    # 1 / |Q| of the previous pass (Sanathanan-Koerner)
    lw = [mp.mpf(1)] * len(xs)   # Lawson's weights
    best = None
    for it in range(sk + lawson):
        rows, rhs = [], []
        for x, v, s, wi, li in zip(xs, fs, scale, w, lw):
            c = s * wi * mp.sqrt(li)
            rows.append([c * x ** j for j in range(m + 1)] + [-c * v * x ** (j + 1)
                                                              for j in range(n)])
            rhs.append(c * v)
        sol, _ = mp.qr_solve(mp.matrix(rows), mp.matrix(rhs))
        p, q = [sol[j] for j in range(m + 1)], [sol[m + 1 + j] for j in range(n)]
        err = [(_value(p, q, x) - v) * s for x, v, s in zip(xs, fs, scale)]
        emax = max(abs(e) for e in err)
        if best is None or emax < best[0]:
            best = (emax, p, q)
        w = [1 / abs(1 + sum(q[j] * x ** (j + 1) for j in range(n))) for x in xs]
        if it >= sk:
            tot = sum(li * abs(e) for li, e in zip(lw, err))
            lw = [li * abs(e) / tot * len(xs) for li, e in zip(lw, err)]
    _, p, q = best
    grid = [a + (b - a) * k / 3000 for k in range(3001)]
    emax = max(abs((_value(p, q, x) - f(x)) * (
        weight(x) if weight else 1 / abs(f(x)) if rel else 1)) for x in grid)
    return [float(c) for c in p], [float(c) for c in q], float(emax)


def _erf_small(z):   # erf(x) = x + x g(x^2), |x| <= 1/2
    if z == 0:
        return 2 / mp.sqrt(mp.pi) - 1
    s = mp.sqrt(z)
    return mp.erf(s) / s - 1


ERFCX_MID_C = 0.6297  # erfcx(x) (x + 1/2) stays within 2.3 % of it on [1/2, 4]


def _erfcx(x):       # erfc(x) = exp(-x^2) erfcx(x), erfcx(x) = (C + d(x)) / (x + 1/2), 1/2 <= x <= 4
    return mp.erfc(x) * mp.exp(x * x) * (x + mp.mpf(1) / 2) - ERFCX_MID_C


def _erfc_asym(u):   # erfc(x) = exp(-x^2) h(1/x^2) / x, x >= 4
    if u == 0:
        return 1 / mp.sqrt(mp.pi)
    x = 1 / mp.sqrt(u)
    return x * mp.erfc(x) * mp.exp(x * x)


def _lgamma1(s):     # lgamma(1 + s) = s r(s), -1/4 <= s <= 3/4
    if s == 0:
        return -mp.euler
    return mp.loggamma(1 + s) / s


def _lgamma2(s):     # lgamma(2 + s) = s r(s), -1/4 <= s <= 3/4
    if s == 0:
        return 1 - mp.euler
    return mp.loggamma(2 + s) / s


def _stirling(z):    # lgamma(x) = (x - 1/2) log x - x + log(2 pi) / 2 + t(1/x^2) / x, x >= 8
    if z == 0:
        return mp.mpf(1) / 12
    x = 1 / mp.sqrt(z)
    return (mp.loggamma(x) - ((x - mp.mpf(1) / 2) * mp.log(x) - x + mp.log(2 * mp.pi) / 2)) * x


def _gelu_k(s):       # float32 GELU: Phi(x) = 1 / (1 + exp(x k(x^2))), k = -logit(Phi(x)) / x
    if s == 0:
        return -4 / mp.sqrt(2 * mp.pi)
    x = mp.sqrt(s)
    p = mp.ncdf(x)
    return -mp.log(p / (1 - p)) / x


def _gelu_k_weight(s):
    """1 / the error of k allowed at x = sqrt(s): float32's own rounding of the exponent up to
    |x| = 2 (Phi's relative error there is about that of x k), then what keeps 1 - Phi(x)
    within float32's rounding for x > 2 (below -2 the kernel takes the float64 tail)."""
    x = mp.sqrt(s)
    if x <= 2:
        return x / (2.0 ** -25 * max(1, abs(x * _gelu_k(s))))
    return x * (1 - mp.ncdf(x)) / 2.0 ** -25


def _gelu_tail(t):   # Phi(-t) = exp(-t^2 / 2) r(t) / 2, 2 <= t <= 15
    a = t / mp.sqrt(2)
    return mp.erfc(a) * mp.exp(a * a)


TABLES = [
    # name, function, interval, degrees (numerator, denominator), relative? or a weight
    ("ERF_SMALL", _erf_small, (0, mp.mpf(1) / 4), (9, 0), False),
    ("ERFCX_MID", _erfcx, (mp.mpf(1) / 2, 4), (8, 8), False),
    ("ERFC_ASYM", _erfc_asym, (0, mp.mpf(1) / 16), (6, 6), True),
    ("LGAMMA1", _lgamma1, (-mp.mpf(1) / 4, mp.mpf(3) / 4), (8, 8), True),
    ("LGAMMA2", _lgamma2, (-mp.mpf(1) / 4, mp.mpf(3) / 4), (6, 6), True),
    ("STIRLING", _stirling, (0, mp.mpf(1) / 64), (5, 0), True),
    ("GELU_K", _gelu_k, (0, mp.mpf(121) / 4), (7, 0), _gelu_k_weight),
    ("GELU_TAIL", _gelu_tail, (2, 15), (4, 4), True),
]


def main():
    for name, f, (a, b), (m, n), rel in TABLES:
        weight = rel if callable(rel) else None
        p, q, err = ratfit(f, a, b, m, n, rel=rel is True, weight=weight)
        kind = "weighted" if weight else "relative" if rel else "absolute"
        print(f"# {name}: [{mp.nstr(a, 6)}, {mp.nstr(b, 6)}], degrees {m}/{n}, {kind} error "
              f"{err:.2g}")
        print(f"_{name}_P = {tuple(p)!r}")
        if q:
            print(f"_{name}_Q = {tuple(q)!r}")


if __name__ == "__main__":
    main()
