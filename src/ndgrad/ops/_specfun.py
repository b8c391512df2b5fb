# Array kernels of the error and log-gamma functions, vectorised on the array module `xp` (NumPy
# and CuPy alike: no per-element Python). They take and return float64 arrays; the ops
# (pointwise.py, special.py, activation.py) cast to the input's dtype, so float32 results are
# float64 values correctly rounded once.
#
# The tables are near-minimax rational approximations fitted in 60-digit arithmetic by
# tools/fit_special.py (its printed error beside each); evaluated in float64 the kernels stay
# within ~2 ulp of the exactly rounded values over the whole real line (tests/test_specfun.py
# checks them against mpmath and PyTorch):
# - erf, erfc: three regions, as in Cody's algorithm. |x| <= 1/2: erf = x + x P(x^2);
#   1/2 < |x| < 4: erfc = exp(-x^2) R(|x|) (R approximates erfcx); |x| >= 4:
#   erfc = exp(-x^2) S(1/x^2) / |x|. exp(-x^2) is exp(-h^2) exp(-(x - h)(x + h)) with h = x
#   rounded to 26 bits, so h^2 is exact and the large exponent carries no rounding error.
#   erfcx (special.py) is R and S / x directly.
# - lgamma: lgamma(2 + s) = s R(s) for |s| <= 1/2 (relative accuracy at the zeros x = 1, 2),
#   the recurrence lgamma(x + 1) = lgamma(x) + log(x) from (0, 8) into [3/2, 5/2), Stirling's
#   series with a fitted tail from 8 on, and for x < 0 the reflection
#   lgamma(x) = log(pi / |sin(pi x)|) - log(-x) - lgamma(-x) with sin(pi x) reduced exactly.
#   Poles (0, -0, negative integers, -inf) give inf, as PyTorch's.
# Each region is computed on its own elements only (an index gather, then a scatter back).
# SciPy's scipy.special is not used even when installed: at about the same speed (erf on 0.5 M
# float64: ~10 ms either way) its gammaln is ~900 ulp off next to lgamma's zero at 1 and its
# erfc loses the subnormal tail (x > 26.5), where these kernels stay within their few ulp.
import math

# ERF_SMALL: [0, 0.25], degrees 9/0, absolute error 2.4e-20
_ERF_SMALL_P = (0.1283791670955126, -0.3761263890318375, 0.11283791670954871,
                -0.026866170645000586, 0.0052239776220337954, -0.00085483265125941,
                0.00012055286324797303, -1.4923008093750746e-05, 1.6371332833332055e-06,
                -1.4621769274657565e-07)
# ERFCX_MID: [0.5, 4], degrees 8/8, absolute error 2.3e-19
_ERFCX_MID_P = (-0.12969999997647005, 0.06250640571405526, 0.13723030360981603,
                0.07583847027382097, 0.012556682624176384, -0.005256388799814347,
                -0.003386597285426784, -0.000786878921695697, -7.648954092772776e-05)
_ERFCX_MID_Q = (2.878211336387751, 3.768273043865545, 2.9427889416279704, 1.5067424771619036,
                0.5212716491695473, 0.12003981792262064, 0.017039334177760882,
                0.0011675925764889487)
# ERFC_ASYM: [0, 0.0625], degrees 6/6, relative error 2.6e-20
_ERFC_ASYM_P = (0.5641895835477563, 17.03630411628513, 178.13913550576805, 788.8353376599789,
                1442.2077429784374, 874.0802834553965, 76.93068012632818)
_ERFC_ASYM_Q = (30.69606283610707, 330.34142814223185, 1542.1978989097197, 3130.582164037383,
                2405.3881342243117, 458.94052316320324)
# LGAMMA1: [-0.25, 0.75], degrees 8/8, relative error 5.4e-21
_LGAMMA1_P = (-0.5772156649015329, -1.3925652982809575, -0.6901388060917489, 0.8555525994515583,
              1.1605757133531664, 0.5288174485111612, 0.10626553272427883, 0.008531127790962907,
              0.00017734744310597342)
_LGAMMA1_Q = (3.837443206055284, 5.96938702609676, 4.828427313602642, 2.1651385398452723,
              0.5304510102435912, 0.06514777290054465, 0.003264516379540267,
              3.8338322946811794e-05)
# LGAMMA2: [-0.25, 0.75], degrees 6/6, relative error 1.2e-19
_LGAMMA2_P = (0.42278433509846713, 0.9302187162399131, 0.7238404163799803, 0.25548111817041985,
              0.041815764600505775, 0.0027899025487510463, 4.922111162272505e-05)
_LGAMMA2_Q = (1.4374981104119045, 0.7749742339426404, 0.19351585725104564, 0.02225781592879422,
              0.0010001269886781492, 1.0355127517636787e-05)
# STIRLING: [0, 0.015625], degrees 5/0, relative error 4.3e-16
_STIRLING_P = (0.0833333333333333, -0.0027777777776105002, 0.0007936506669764336,
               -0.0005952029446487836, 0.0008373083265523037, -0.0016532235943014031)
_ERFCX_MID_C = 0.6297  # erfcx(x) = (C + d(x)) / (x + 1/2) on [1/2, 4], |d| < 0.015

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_LOG_PI = math.log(math.pi)
_SPLIT = 134217729.0  # 2^27 + 1: Dekker's splitter for float64


def _poly(c, t):
    """c[0] + c[1] t + ... (Horner; in place on a fresh array)."""
    r = t * c[-1]
    for a in c[-2:0:-1]:
        r += a
        r *= t
    r += c[0]
    return r


def _ratio(p, q, t):
    """P(t) / (1 + t Q(t))."""
    den = _poly(q, t)
    den *= t
    den += 1.0
    num = _poly(p, t)
    num /= den
    return num


def _flat64(xp, x):
    return xp.asarray(x, dtype="float64").reshape(-1)


def _pieces(xp, x, mask, f_true, f_false):
    """f_true on the elements where mask holds, f_false on the others, as one array. Each
    function sees only its own elements (an index gather: NumPy's boolean indexing and
    `where` take ~4 ns an element on an unsorted mask, indices ~0.5)."""
    it = xp.flatnonzero(mask)
    if it.size == x.size:
        return f_true(x)
    if it.size == 0:
        return f_false(x)
    out = xp.empty_like(x)
    out[it] = f_true(x.take(it))
    i_f = xp.flatnonzero(~mask)
    out[i_f] = f_false(x.take(i_f))
    return out


def _exp_neg_sq(xp, x):
    """exp(-x * x) for 0 <= x <= 30 without the rounding error of x * x in the exponent."""
    c = x * _SPLIT
    hi = c - (c - x)
    lo = x - hi
    lo *= x + hi
    out = xp.exp(-(hi * hi))
    out *= xp.exp(-lo)
    return out


def _erfcx_mid(a):
    """erfcx(a) for 1/2 < a < 4: a small correction to C, so the last roundings dominate."""
    d = _ratio(_ERFCX_MID_P, _ERFCX_MID_Q, a)
    d += _ERFCX_MID_C
    d /= a + 0.5
    return d


def _erfcx_far(a):
    """erfcx(a) for a >= 4 (a may be inf)."""
    v = _ratio(_ERFC_ASYM_P, _ERFC_ASYM_Q, 1.0 / (a * a))
    v /= a
    return v


def _erfcx_big(xp, a):
    """erfcx(a) = exp(a^2) erfc(a) for a > 1/2."""
    return _pieces(xp, a, a < 4.0, _erfcx_mid, _erfcx_far)


def _erf_small(x):
    """erf(x) = x + x P(x^2) for |x| <= 1/2 (NaN stays NaN)."""
    y = _poly(_ERF_SMALL_P, x * x)
    y *= x
    y += x
    return y


def _erf_erfc(xp, x, complement):
    shape = x.shape
    x = _flat64(xp, x)

    def small(v):
        y = _erf_small(v)
        if complement:
            y = 1.0 - y
        return y

    def big(v):
        a = xp.minimum(xp.abs(v), 30.0)  # erfc(30) underflows to 0; inf would give nan below
        r = _erfcx_big(xp, a)
        r *= _exp_neg_sq(xp, a)  # erfc(|v|)
        if complement:  # 2 - r for v < 0, r for v > 0
            out = (v < 0) * 2.0
            out -= xp.copysign(r, -v)
            return out
        r = 1.0 - r
        return xp.copysign(r, v)

    return _pieces(xp, x, xp.abs(x) > 0.5, big, small).reshape(shape)  # (NaN: small)


def erf(xp, x):
    """erf(x) in float64."""
    return _erf_erfc(xp, x, False)


def erfc(xp, x):
    """erfc(x) in float64."""
    return _erf_erfc(xp, x, True)


def erfcx(xp, x):
    """erfcx(x) = exp(x^2) erfc(x) in float64 for x >= 0 (NaN stays NaN)."""
    shape = x.shape
    x = _flat64(xp, x)

    def small(v):
        y = 1.0 - _erf_small(v)
        y *= xp.exp(v * v)  # (|v| <= 1/2: no error to speak of in the exponent)
        return y

    return _pieces(xp, x, x > 0.5, lambda v: _erfcx_big(xp, v), small).reshape(shape)


def _lgamma_r1(xp, y):
    """lgamma(y) for 0 < y < 7/4: lgamma(1 + s) = s R1(s) (-1/4 <= s < 3/4) near its zero at 1,
    with lgamma(y) = lgamma(1 + y) - log(y) below 3/4 (y - 1 is exact: no rounding before R1)."""
    below = y < 0.75
    s = y - (~below)
    v = _ratio(_LGAMMA1_P, _LGAMMA1_Q, s)
    v *= s
    v += 0.0  # (+0 at y = 1, as PyTorch's)
    if below.any():
        v -= below * xp.log(y)
    return v


def _lgamma_r2(xp, y):
    """lgamma(y) for 7/4 <= y < 8: lgamma(2 + s) = s R2(s) (-1/4 <= s < 3/4) near its zero at 2,
    then lgamma(y) = lgamma(y - n) + log((y - 1) ... (y - n)) (y - k is exact)."""
    n = xp.floor(y - 1.75)
    s = y - (n + 2.0)
    v = _ratio(_LGAMMA2_P, _LGAMMA2_Q, s)
    v *= s
    v += 0.0  # (+0 at y = 2)
    top = int(n.max()) if n.size else 0
    if top > 0:
        prod = xp.ones_like(y)
        for k in range(1, top + 1):
            f = (n >= k) * (y - (k + 1))  # y - k - 1 where k <= n, else 0
            f += 1.0  # (exactly y - k: it is representable)
            prod *= f
        v += xp.log(prod)
    return v


def _lgamma_stirling(xp, y):
    """lgamma(y) for y >= 8 (inf allowed): Stirling's series with a fitted tail."""
    w = 1.0 / y
    v = _poly(_STIRLING_P, w * w)
    v *= w
    v += _LOG_SQRT_2PI
    v -= y
    v += (y - 0.5) * xp.log(y)  # (inf from 2.6e305 on, as PyTorch's)
    v[y == xp.inf] = xp.inf
    return v


def _lgamma_pos(xp, y):
    """lgamma(y) for y > 0 (a flat float64 array; inf allowed)."""
    def low(v):
        return _pieces(xp, v, v < 1.75, lambda u: _lgamma_r1(xp, u),
                       lambda u: _lgamma_r2(xp, u))
    return _pieces(xp, y, y < 8.0, low, lambda v: _lgamma_stirling(xp, v))


def _lgamma_neg(xp, x):
    """lgamma(x) for x <= 0, -inf or NaN: inf at the poles (0, -0, the negative integers,
    -inf), else the reflection log(pi / |sin(pi x)|) - log(-x) - lgamma(-x) with sin(pi x)
    reduced exactly."""
    r = x - xp.round(x)  # exact (NaN at -inf)
    refl = (r != 0) & (x < 0) & (x > -xp.inf)  # (NaN: neither)
    out = xp.where(x == x, xp.inf, x)  # (a few elements: where is fine)
    i = xp.flatnonzero(refl)
    if i.size:
        xr, rr = x.take(i), r.take(i)
        ar = xp.abs(rr)
        # log|sin(pi r)|; below 2^-30 log(pi) + log|r| (exact to 1e-18: pi r loses bits once
        # subnormal)
        w = xp.where(ar < 2.0 ** -30, -xp.log(ar), _LOG_PI - xp.log(xp.sin(math.pi * ar)))
        w -= xp.log(-xr)
        w -= _lgamma_pos(xp, -xr)
        out[i] = w
    return out


def lgamma(xp, x):
    """log|Gamma(x)| in float64; inf at the poles."""
    shape = x.shape
    x = _flat64(xp, x)
    return _pieces(xp, x, x > 0, lambda v: _lgamma_pos(xp, v),
                   lambda v: _lgamma_neg(xp, v)).reshape(shape)
