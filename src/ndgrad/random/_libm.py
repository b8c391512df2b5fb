"""The C library's elementary functions as ATen's CPU random transforms call them, over NumPy
arrays.

PyTorch's kernels call the platform's libm (glibc on Linux) one element at a time. NumPy's own
loops are not always that libm: on AVX-512 machines its float64 log, exp and tan are SIMD
routines that round about one result in a few hundred differently. Each function here gives the
platform libm's result (what Python's `math` module returns, the same libm PyTorch calls):

- log1p is glibc's (fdlibm's) algorithm, written over arrays (`_log1p_fdlibm`).
- For the others, glibc's results are correctly rounded except within a hair of a rounding
  midpoint (their documented worst errors are 0.502-0.52 ulp). Where NumPy agrees with `math`
  on a probe its result is used as it is; otherwise the value is computed in extended precision,
  rounded, and only the elements within a small band around a midpoint (a few per hundred) are
  asked of `math` itself: a loop over that subset, not over the elements.
"""
import math

import numpy as np  # host: the generator is the host's

_EXTENDED = np.finfo(np.longdouble).nmant >= 63

# ------------------------------------------------------------------ exact fused multiply-add

_SPLIT = 134217729.0  # 2**27 + 1 (Veltkamp)


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _two_prod(a, b):
    p = a * b
    t = _SPLIT * a
    ah = t - (t - a)
    al = a - ah
    t = _SPLIT * b
    bh = t - (t - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _round_odd(v, err):
    """v + err rounded to odd, where v = RN(exact) and err = exact - v."""
    fix = (err != 0) & ((np.asarray(v).view(np.int64) & 1) == 0)
    if not np.any(fix):
        return v
    return np.where(fix, np.nextafter(v, np.where(err > 0, np.inf, -np.inf)), v)


def fma(a, b, c):
    """a * b + c with one rounding, in float64: Boldo and Melquiond's emulation (error-free
    product and sums, the low part rounded to odd). Exact without overflow or underflow."""
    a = np.asarray(a, dtype=np.float64)
    if np.ndim(b) == 0:
        if float(b) == 1.0:
            return a + c
        if np.ndim(c) == 0 and float(c) == 0.0:
            return a * b
    p, e = _two_prod(a, np.asarray(b, dtype=np.float64))
    s, t = _two_sum(np.asarray(c, dtype=np.float64), p)
    v, w = _two_sum(t, e)
    return s + _round_odd(v, w)


def fmaf(a, b, c):
    """a * b + c with one rounding, in float32 (a, b, c float32): the product is exact in
    float64 and the sum rounds once there; rounding that to float32 is then exact unless the
    double sum landed exactly on a float32 midpoint, and those (rare) elements are redone with
    an error-free sum rounded to odd."""
    a64 = np.asarray(a, dtype=np.float64)
    p = a64 * (b if np.ndim(b) == 0 else np.asarray(b, dtype=np.float64))
    s = p + (c if np.ndim(c) == 0 else np.asarray(c, dtype=np.float64))
    r = s.astype(np.float32)
    tie = (s.view(np.int64) & 0x1FFFFFFF) == 0x10000000
    if tie.any():
        idx = np.flatnonzero(tie)
        pp = p.reshape(-1)[idx]
        cc = np.broadcast_to(np.asarray(c, dtype=np.float64), s.shape).reshape(-1)[idx]
        ss, tt = _two_sum(pp, cc)
        r.reshape(-1)[idx] = _round_odd(ss, tt).astype(np.float32)
    return r


def _random_probe(kind):
    r = np.random.default_rng(12345).random(4096)  # host: a probe of the libm
    if kind == "unit":            # 1 - u, u uniform on [0, 1)
        return 1.0 - r
    if kind == "neg_unit":
        return -r
    if kind == "angle":
        return 2.0 * np.pi * r
    if kind == "half_angle":
        return np.pi * (r - 0.5)
    return (r - 0.5) * 20.0


_FEW = 4   # arguments up to which the libm is called on each (its ~30 array passes cost more)


class _Libm:
    """One function: the first of `ours` (array versions of the libm's algorithm) or NumPy's
    loop that agrees with the libm on a probe, else the extended-precision value with `math`
    asked near midpoints."""

    def __init__(self, name, band, probe, ours=()):
        self.name, self.band, self.probe, self.ours = name, band, probe, ours
        self.np_f = getattr(np, name)
        self.math_f = getattr(math, name, None)
        self.mode = self.f = None

    def _decide(self):
        x = _random_probe(self.probe)
        ref = np.array([self.math_f(v) for v in x.tolist()])  # host: a probe of the libm
        for f in self.ours + (self.np_f,):
            if np.array_equal(f(x), ref):
                self.mode, self.f = "fixed", f
                return
        self.mode = "extended" if _EXTENDED else "math"

    def __call__(self, x):
        x = np.asarray(x, dtype=np.float64)
        if x.size <= _FEW and self.math_f is not None:   # (a scalar draw's pair: the libm
            return np.array([self.math_f(v) for v in x.reshape(-1).tolist()],  # itself, at
                            dtype=np.float64).reshape(x.shape)  # once) host: a few values
        if self.mode is None:
            self._decide()
        if self.mode == "fixed":
            return self.f(x)
        with np.errstate(all="ignore"):
            if self.mode == "extended":
                yl = self.np_f(x.astype(np.longdouble))
                y = yl.astype(np.float64)
                ulp = np.spacing(np.abs(y))
                frac = np.abs((yl - y).astype(np.float64)) / ulp
                # a result at a power of two has a smaller ulp below it: ask the libm there
                unsure = ~(frac < 0.5 - self.band) | (np.frexp(y)[0] == 0.5)
                unsure &= np.isfinite(y) & (y != 0)
            else:
                y = self.np_f(x)
                unsure = np.isfinite(y)
        idx = np.flatnonzero(unsure)
        if idx.size:
            y = np.array(y, dtype=np.float64)
            y.reshape(-1)[idx] = [self.math_f(v) for v in x.reshape(-1)[idx].tolist()]
        return y


# ------------------------------------------------------------------ log1p (fdlibm / glibc)

# Sun's fdlibm s_log1p.c constants (glibc keeps them; its polynomial is summed in Shimizu's
# order R1 + z2*R2 + z4*R3 + z6*R4).
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_LP = (6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01,
       2.222219843214978396e-01, 1.818357216161805012e-01, 1.531383769920937332e-01,
       1.479819860511658591e-01)


def _high(x):
    return (x.view(np.int64) >> 32).astype(np.int32)


def _with_high(x, hi):
    bits = (x.view(np.int64) & 0xFFFFFFFF) | (hi.astype(np.int64) << 32)
    return bits.view(np.float64)


def _log1p_fdlibm(x, fused):
    """glibc's log1p, branch by branch, over an array (finite x > -1; the rest by NumPy).
    `fused`: as glibc's FMA build (x86-64 with FMA, aarch64) computes it, where GCC contracts
    the polynomial's multiply-adds (z*Lp1 + z2*R2 becomes fma(z, Lp1, z2*R2)) but not
    s*(hfsq + R), which both returns share."""
    mad = fma if fused else (lambda a, b, c: a * b + c)
    x = np.asarray(x, dtype=np.float64)
    shape = x.shape
    x = x.reshape(-1)
    out = np.empty_like(x)
    with np.errstate(all="ignore"):
        hx = _high(x)
        ax = hx & 0x7FFFFFFF
        special = ~np.isfinite(x) | (x <= -1.0)
        tiny = (hx < 0x3FDA827A) & (ax < 0x3E200000) & ~special
        out[special] = np.log1p(x[special])
        xt = x[tiny]
        out[tiny] = np.where(ax[tiny] < 0x3C900000, xt, xt - xt * xt * 0.5)
        rest = ~(special | tiny)
        xr, hr = x[rest], hx[rest]
        direct = (hr < 0x3FDA827A) & ((hr > 0) | (hr <= np.int32(-1076707645)))  # 0xbfd2bec3
        f = xr.copy()                                   # k == 0: f = x, hu = 1
        k = np.zeros(xr.shape, dtype=np.int64)
        c = np.zeros_like(xr)
        hu = np.ones(xr.shape, dtype=np.int64)
        red = ~direct
        if red.any():
            xk = xr[red]
            small = _high(xk) < 0x43400000
            u = np.where(small, 1.0 + xk, xk)
            hu_k = _high(u).astype(np.int64)
            kk = (hu_k >> 20) - 1023
            ck = np.where(small, np.where(kk > 0, 1.0 - (u - xk), xk - (u - 1.0)) / u, 0.0)
            hu_k &= 0x000FFFFF
            low = hu_k < 0x6A09E
            u = _with_high(u, np.where(low, hu_k | 0x3FF00000, hu_k | 0x3FE00000))
            kk = np.where(low, kk, kk + 1)
            hu_k = np.where(low, hu_k, (0x00100000 - hu_k) >> 2)
            f[red], k[red], c[red], hu[red] = u - 1.0, kk, ck, hu_k
        kd = k.astype(np.float64)
        hfsq = 0.5 * f * f
        res = np.empty_like(xr)
        z0 = hu == 0                                    # |f| < 2**-20
        if z0.any():
            fz, kz, cz, hz = f[z0], kd[z0], c[z0], hfsq[z0]
            R = hz * mad(-0.66666666666666666, fz, 1.0)
            v = np.where(kz == 0, fz - R, kz * _LN2_HI - ((R - mad(kz, _LN2_LO, cz)) - fz))
            v = np.where(fz == 0.0, np.where(kz == 0, 0.0, kz * _LN2_HI + mad(kz, _LN2_LO, cz)),
                         v)
            res[z0] = v
        nz = ~z0
        f, kd, c, hfsq = f[nz], kd[nz], c[nz], hfsq[nz]
        s = f / (2.0 + f)
        z = s * s
        z2 = z * z
        z4 = z2 * z2
        z6 = z4 * z2
        R2 = mad(z, _LP[2], _LP[1])
        R3 = mad(z, _LP[4], _LP[3])
        R4 = mad(z, _LP[6], _LP[5])
        R = mad(z, _LP[0], z2 * R2) if fused else z * _LP[0] + z2 * R2
        R = mad(z6, R4, mad(z4, R3, R))
        sR = s * (hfsq + R)
        res[nz] = np.where(kd == 0, f - (hfsq - sR),
                           kd * _LN2_HI - ((hfsq - (sR + mad(kd, _LN2_LO, c))) - f))
        out[rest] = res
    return out.reshape(shape)


log = _Libm("log", 0.02, "unit")
log1p = _Libm("log1p", 0.3, "neg_unit",
              ours=(lambda x: _log1p_fdlibm(x, True), lambda x: _log1p_fdlibm(x, False)))
exp = _Libm("exp", 0.02, "wide")
sin = _Libm("sin", 0.02, "angle")
cos = _Libm("cos", 0.02, "angle")
tan = _Libm("tan", 0.05, "half_angle")


class _Libm2(_Libm):
    """A two-argument libm function (pow), decided and corrected as _Libm."""

    def _decide(self):
        r = np.random.default_rng(6789).random((2, 4096))  # host: a probe of the libm
        x, y = 1.0 - r[0], 1.0 + 20.0 * r[1]
        ref = np.array([self.math_f(a, b) for a, b in zip(x.tolist(), y.tolist())])  # host
        if np.array_equal(self.np_f(x, y), ref):
            self.mode, self.f = "fixed", self.np_f
        else:
            self.mode = "extended" if _EXTENDED else "math"

    def __call__(self, x, y):
        if self.mode is None:
            self._decide()
        x, y = np.broadcast_arrays(np.asarray(x, dtype=np.float64),  # host: the arguments
                                   np.asarray(y, dtype=np.float64))
        if self.mode == "fixed":
            return self.f(x, y)
        with np.errstate(all="ignore"):
            if self.mode == "extended":
                yl = self.np_f(x.astype(np.longdouble), y.astype(np.longdouble))
                out = yl.astype(np.float64)
                frac = np.abs((yl - out).astype(np.float64)) / np.spacing(np.abs(out))
                unsure = ~(frac < 0.5 - self.band) | (np.frexp(out)[0] == 0.5)
                unsure &= np.isfinite(out) & (out != 0)
            else:
                out = self.np_f(x, y)
                unsure = np.isfinite(out)
        idx = np.flatnonzero(unsure)
        if idx.size:
            out = np.array(out, dtype=np.float64)
            xs, ys = x.reshape(-1)[idx].tolist(), y.reshape(-1)[idx].tolist()
            out.reshape(-1)[idx] = [self.math_f(a, b) for a, b in zip(xs, ys)]
        return out


pow = _Libm2("power", 0.03, None)
pow.math_f = math.pow


# Sun's fdlibm s_log1pf.c constants (glibc's log1pf)
_F = np.float32
_LN2_HI_F, _LN2_LO_F = _F(6.9313812256e-01), _F(9.0580006145e-06)
_LPF = tuple(_F(v) for v in (6.6666668653e-01, 4.0000000596e-01, 2.8571429849e-01,
                             2.2222198546e-01, 1.8183572590e-01, 1.5313838422e-01,
                             1.4798198640e-01))


def _log1pf_fdlibm(x):
    """glibc's log1pf (float arithmetic throughout), branch by branch, over a float32 array
    (finite x > -1; the rest by NumPy)."""
    x = np.asarray(x, dtype=np.float32).reshape(-1)
    out = np.empty_like(x)
    with np.errstate(all="ignore"):
        hx = x.view(np.int32)
        ax = hx & 0x7FFFFFFF
        special = ~np.isfinite(x) | (x <= _F(-1))
        tiny = (hx < 0x3ED413D7) & (ax < 0x31000000) & ~special
        out[special] = np.log1p(x[special])
        xt = x[tiny]
        out[tiny] = np.where(ax[tiny] < 0x24800000, xt, xt - xt * xt * _F(0.5))
        rest = ~(special | tiny)
        xr, hr = x[rest], hx[rest]
        direct = (hr < 0x3ED413D7) & ((hr > 0) | (hr <= np.int32(-1097468385)))  # 0xbe95f61f
        f = xr.copy()
        k = np.zeros(xr.shape, dtype=np.int32)
        c = np.zeros_like(xr)
        hu = np.ones(xr.shape, dtype=np.int32)
        red = ~direct
        if red.any():
            xk = xr[red]
            small = xk.view(np.int32) < 0x5A000000
            u = np.where(small, _F(1) + xk, xk)
            hu_k = u.view(np.int32)
            kk = (hu_k >> 23) - 127
            ck = np.where(small, np.where(kk > 0, _F(1) - (u - xk), xk - (u - _F(1))) / u,
                          _F(0))
            hu_k = hu_k & 0x007FFFFF
            low = hu_k < 0x3504F7
            u = np.where(low, hu_k | 0x3F800000, hu_k | 0x3F000000).astype(np.int32).view(
                np.float32)
            kk = np.where(low, kk, kk + 1)
            hu_k = np.where(low, hu_k, (0x00800000 - hu_k) >> 2)
            f[red], k[red], c[red], hu[red] = u - _F(1), kk, ck, hu_k
        kf = k.astype(np.float32)
        hfsq = _F(0.5) * f * f
        res = np.empty_like(xr)
        z0 = hu == 0
        if z0.any():
            fz, kz, cz, hz = f[z0], kf[z0], c[z0], hfsq[z0]
            R = hz * (_F(1) - _F(0.66666666666666666) * fz)
            v = np.where(kz == 0, fz - R, kz * _LN2_HI_F - ((R - (kz * _LN2_LO_F + cz)) - fz))
            v = np.where(fz == 0, np.where(kz == 0, _F(0), kz * _LN2_HI_F + (cz + kz * _LN2_LO_F)),
                         v)
            res[z0] = v
        nz = ~z0
        f, kf, c, hfsq = f[nz], kf[nz], c[nz], hfsq[nz]
        s = f / (_F(2) + f)
        z = s * s
        R = _LPF[6]
        for lp in _LPF[5::-1]:
            R = lp + z * R
        R = z * R
        sR = s * (hfsq + R)
        res[nz] = np.where(kf == 0, f - (hfsq - sR),
                           kf * _LN2_HI_F - ((hfsq - (sR + (kf * _LN2_LO_F + c))) - f))
        out[rest] = res
    return out


def log1pf(x):
    """glibc's log1pf (fdlibm's float algorithm) if it agrees with the C library on a probe
    (through ctypes); otherwise the double log1p rounded to float."""
    global _LOG1PF_OK
    if _LOG1PF_OK is None:
        _LOG1PF_OK = _probe_log1pf()
    x = np.asarray(x, dtype=np.float32)
    if _LOG1PF_OK:
        return _log1pf_fdlibm(x).reshape(x.shape)
    return log1p(x.astype(np.float64)).astype(np.float32)


_LOG1PF_OK = None


def _probe_log1pf():
    try:
        import ctypes
        import ctypes.util
        lib = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        f = lib.log1pf
        f.restype, f.argtypes = ctypes.c_float, [ctypes.c_float]
    except (OSError, AttributeError, TypeError):
        return True
    x = -np.random.default_rng(1).random(2048).astype(np.float32)  # host: a probe of the libm
    ref = np.array([f(float(v)) for v in x.tolist()], dtype=np.float32)
    return bool(np.array_equal(_log1pf_fdlibm(x), ref))


def logf(x):
    """The float libm's logf (glibc's is correctly rounded but for rare cases): the double
    result rounded to float. Used only by ATen's generic (non-AVX2) float Box-Muller."""
    return log(np.asarray(x, dtype=np.float64)).astype(np.float32)


def sinf(x):
    return sin(np.asarray(x, dtype=np.float64)).astype(np.float32)


def cosf(x):
    return cos(np.asarray(x, dtype=np.float64)).astype(np.float32)
