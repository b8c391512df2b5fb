"""PyTorch's CPU random number generator (ATen's CPUGeneratorImpl) and its transforms, on NumPy.

The engine is a 32-bit Mersenne Twister (mt19937) seeded as ATen seeds it: init_genrand of the
seed's low 32 bits, with the first draw regenerating the 624-word state. NumPy ships the same
bit generator (numpy.random.MT19937): its raw stream, given that state through its `state`
setter, is ATen's `random()`; `random64()` joins two draws, the first as the high half.

Every transform below is ATen's (aten/src/ATen/core/TransformationHelper.h,
DistributionsHelper.h, native/cpu/DistributionTemplates.h and the kernels that use them),
written once over NumPy arrays of the raw stream: draws are made in TensorIterator order (a
fresh tensor's is C order; see `iteration_order`), and no Python runs per element. Where ATen's
algorithm is sequential (randperm's Fisher-Yates, the cached Box-Muller value, the rejection
samplers) the comment at each says how the same raw numbers are consumed in the same order.

Floating-point details that decide bits:
- ATen's x86-64 kernels run as the AVX2 build on any machine with AVX2 (the distribution
  kernels have no AVX-512 build), compiled with GCC's default floating-point contraction, so
  `x * (to - from) + from` and friends are fused multiply-adds there (and on aarch64). `_fma32`
  and `_fma64` are exact fused multiply-adds (error-free products and sums, rounded to odd,
  then to nearest: Boldo and Melquiond's emulation), used where ATen's build fuses.
- torch.randn in float32 (16 or more contiguous elements) uses ATen's AVX2 Box-Muller, whose log
  and sincos are the Cephes polynomials of avx_mathfun.h; `_log256`/`_sincos256` evaluate the same
  polynomials in float32 with the same fused steps, so the bits are the same.
- The double-precision transforms call glibc's log, log1p, exp, sin, cos and tan; `_libm` gives
  those functions' results (see there).
The environment variable ATEN_CPU_CAPABILITY=default selects ATen's baseline x86-64 build
(no contraction, the scalar float Box-Muller), as it does for PyTorch.
"""
import os
import platform

import numpy as np  # host: the generator is the host's (draws for devices are moved)

from . import _libm

N = 624                      # mt19937's state words
DEFAULT_SEED = 67280421310721  # c10's default_rng_seed_val: a new Generator()'s seed

_U32 = np.uint64(0xFFFFFFFF)


def _capability():
    """'avx2' (x86-64 with AVX2 and FMA: ATen's AVX2 kernels, contracted multiply-adds),
    'default' (ATen's baseline x86-64 kernels, or ATEN_CPU_CAPABILITY=default) or 'other'
    (aarch64 and the rest: the generic kernels, contracted)."""
    env = os.environ.get("ATEN_CPU_CAPABILITY", "").strip().lower()
    machine = platform.machine().lower()
    if machine not in ("x86_64", "amd64", "i686", "x86"):
        return "other"
    if env == "default":
        return "default"
    feats = {}
    for mod in ("numpy._core._multiarray_umath", "numpy.core._multiarray_umath"):
        try:
            feats = __import__(mod, fromlist=["__cpu_features__"]).__cpu_features__
            break
        except (ImportError, AttributeError):
            continue
    return "avx2" if feats.get("AVX2") and feats.get("FMA3") else "default"


CAPABILITY = _capability()
FUSED = CAPABILITY != "default"   # does ATen's build contract a * b + c into fma?


_fma64, _fma32 = _libm.fma, _libm.fmaf


def madd64(a, b, c):
    """ATen's `a * b + c` in double, fused where its build fuses."""
    return _fma64(a, b, c) if FUSED else np.asarray(a, np.float64) * b + c


def madd32(a, b, c):
    """ATen's `a * b + c` in float, fused where its build fuses."""
    if FUSED:
        return _fma32(a, b, c)
    return (np.asarray(a, np.float32) * np.float32(b)) + np.float32(c)


# ------------------------------------------------------------------ the engine

_KEYS = {}


class _NoEntropy(np.random.bit_generator.ISeedSequence):
    """A seed source for a new MT19937 that skips the OS's entropy and SeedSequence's hashing
    (~100 us a generator): the engine is seeded right after."""

    def generate_state(self, n_words, dtype=np.uint32):
        return np.zeros(n_words, dtype=dtype)  # host: the generator


_NO_ENTROPY = _NoEntropy()


def _init_key(seed):
    """init_genrand(seed & 0xffffffff): ATen's mt19937 seeding (NumPy's legacy integer
    seeding is the same recurrence). A few recent keys are kept: seeding is 624 steps."""
    seed &= 0xFFFFFFFF
    key = _KEYS.get(seed)
    if key is None:
        key = np.random.RandomState(seed).get_state()[1]  # host: the generator
        if len(_KEYS) >= 64:
            _KEYS.pop(next(iter(_KEYS)))
        _KEYS[seed] = key
    return key.copy()


class MT19937Engine:
    """ATen's CPUGeneratorImpl: the mt19937 engine, its seed, and the two cached normal samples
    (the second value of a scalar Box-Muller pair, in double and in float)."""

    __slots__ = ("seed", "_bg", "_fresh", "_odd", "next_double", "next_float")

    def __init__(self, seed=DEFAULT_SEED):
        self._bg = np.random.MT19937(_NO_ENTROPY)  # host: the generator
        self.manual_seed(seed)

    # seeding -----------------------------------------------------------
    def manual_seed(self, seed):
        self.seed = int(seed)
        legacy = getattr(self._bg, "_legacy_seeding", None)
        if legacy is not None:  # (NumPy's init_genrand in C: 2 us, where the state dict is 50)
            legacy(self.seed & 0xFFFFFFFF)
        else:
            self._bg.state = {"bit_generator": "MT19937",
                              "state": {"key": _init_key(self.seed), "pos": N}}
        self._fresh = True     # left_ = 1, next_ = 0 (ATen's state right after seeding)
        self._odd = None       # a (left, next) pair set_state gave that mt19937 never reaches
        self.next_double = None
        self.next_float = None

    def copy_from(self, other):
        self.seed = other.seed
        self._bg.state = other._bg.state
        self._fresh, self._odd = other._fresh, other._odd
        self.next_double, self.next_float = other.next_double, other.next_float

    # raw draws ----------------------------------------------------------
    def _raw(self, n):
        """n raw 32-bit draws (ATen's random()), as uint64."""
        n = int(n)
        if n <= 0:
            return np.empty(0, dtype=np.uint64)  # host: the generator
        self._fresh = False
        if self._odd is not None:
            return self._raw_odd(n)
        return self._bg.random_raw(n)

    def _raw_odd(self, n):
        """Draws from a state set_state gave with left + next != 625: ATen reads state[next:]
        for left - 1 draws and only then regenerates."""
        left, nxt = self._odd
        self._odd = None
        st = self._bg.state
        first = min(n, left - 1)
        st["state"]["pos"] = min(nxt, N)
        self._bg.state = st
        head = self._bg.random_raw(first) if first else np.empty(0, dtype=np.uint64)
        if first < left - 1:              # still inside the odd stretch
            self._odd = (left - first, nxt + first)
            return head
        st = self._bg.state
        st["state"]["pos"] = N            # ATen regenerates on the next draw
        self._bg.state = st
        return np.concatenate([head, self._bg.random_raw(n - first)])  # host: the draws

    def random(self, n):
        """n values of ATen's random(): uint32 as uint64."""
        return self._raw(n)

    def random64(self, n):
        """n values of ATen's random64(): (first << 32) | second, uint64."""
        r = self._raw(2 * n).reshape(-1, 2)
        return (r[:, 0] << np.uint64(32)) | r[:, 1]

    def peek(self, n):
        """The next n raw draws without consuming them."""
        st, fresh, odd = self._bg.state, self._fresh, self._odd
        out = self._raw(n)
        self._bg.state, self._fresh, self._odd = st, fresh, odd
        return out

    def advance(self, n):
        """Consume n raw draws (after peek)."""
        if n > 0:
            self._raw(n)

    # state ----------------------------------------------------------------
    def get_state_bytes(self):
        st = self._bg.state["state"]
        pos = int(st["pos"])
        if self._odd is not None:
            left, nxt = self._odd
        elif self._fresh:
            left, nxt = 1, 0
        elif pos >= N:
            left, nxt = 1, N
        else:
            left, nxt = N + 1 - pos, pos
        rec = np.zeros((), dtype=STATE_DTYPE)  # host: the state bytes
        rec["seed"] = self.seed & 0xFFFFFFFFFFFFFFFF
        rec["left"], rec["seeded"], rec["next"] = left, 1, nxt
        rec["state"] = st["key"].astype(np.uint64)
        if self.next_double is not None:
            rec["normal_is_valid"], rec["normal_y"] = 1, self.next_double
        if self.next_float is not None:
            rec["float_valid"], rec["next_float"] = 1, self.next_float
        return np.frombuffer(rec.tobytes(), dtype=np.uint8).copy()  # host: the state bytes

    def set_state_bytes(self, raw):
        """raw: bytes of STATE_DTYPE.itemsize (the caller checked the size)."""
        rec = np.frombuffer(raw, dtype=STATE_DTYPE)[0]  # host: the state bytes
        left, nxt = int(rec["left"]), int(rec["next"]) & 0xFFFFFFFF
        if not (int(rec["seeded"]) != 0 and 0 < left <= N and nxt <= N):
            raise RuntimeError("Invalid mt19937 state")
        key = rec["state"].astype(np.uint32)  # (ATen copies the 64-bit words into 32 bits)
        self.seed = int(rec["seed"])
        self._fresh, self._odd = False, None
        if left == 1:
            pos = N
            self._fresh = nxt == 0
        elif left + nxt == N + 1:
            pos = nxt
        else:
            pos, self._odd = N, (left, nxt)
        self._bg.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
        self.next_double = float(rec["normal_y"]) if int(rec["normal_is_valid"]) else None
        self.next_float = (np.float32(rec["next_float"]) if int(rec["float_valid"]) & 0xFF
                           else None)


# ATen's CPUGeneratorImplState (CPUGeneratorImpl.cpp): the legacy POD (initial seed, left,
# seeded, next, 624 state words stored as uint64, the old normal_x/normal_y/normal_rho and
# normal_is_valid, which now carry the cached double normal in normal_y) and the cached float.
STATE_DTYPE = np.dtype([  # host: the state bytes
    ("seed", "<u8"), ("left", "<i4"), ("seeded", "<i4"), ("next", "<u8"),
    ("state", "<u8", (N,)), ("normal_x", "<f8"), ("normal_y", "<f8"), ("normal_rho", "<f8"),
    ("normal_is_valid", "<i4"), ("_pad0", "<i4"), ("next_float", "<f4"),
    ("float_valid", "u1"), ("_pad1", "u1", (3,))])
STATE_BYTES = STATE_DTYPE.itemsize   # 5056, as torch.get_rng_state().numel()


# ------------------------------------------------------------------ uniform doubles and floats

_CHUNK = 1 << 16   # elements per step of the large transforms: temporaries stay in cache


def _chunked(n, dt, draw, step=_CHUNK):
    """out[:n] filled by draw(k) in consecutive pieces (each consumes the stream in order)."""
    if n <= step:
        return np.asarray(draw(n), dtype=dt)
    out = np.empty(n, dtype=dt)  # host: the draws
    for a in range(0, n, step):
        k = min(step, n - a)
        out[a:a + k] = draw(k)
    return out


def _unit_double(r64):
    """uniform_real(random64(), 0, 1) for double: the low 53 bits times 2**-53."""
    return (r64 & np.uint64((1 << 53) - 1)).astype(np.float64) * (2.0 ** -53)


def _unit_doubles(eng, n):
    r = eng._raw(2 * n).reshape(-1, 2)
    hi = (r[:, 0] & np.uint64(0x1FFFFF)).astype(np.float64)
    hi *= 2.0 ** -21
    lo = r[:, 1].astype(np.float64)
    lo *= 2.0 ** -53
    hi += lo
    return hi


def unit_doubles(eng, n):
    """n draws of uniform_real_distribution<double>(0, 1): 53 bits of random64() times 2**-53."""
    return _chunked(n, np.float64, lambda k: _unit_doubles(eng, k))


def _unit_floats(eng, n):
    r = eng._raw(n).astype(np.uint32)
    r &= np.uint32(0xFFFFFF)
    f = r.view(np.int32).astype(np.float32)
    f *= np.float32(2.0 ** -24)
    return f


def unit_floats(eng, n):
    """n draws of uniform_real_distribution<float>(0, 1): 24 bits of random() times 2**-24."""
    return _chunked(n, np.float32, lambda k: _unit_floats(eng, k))


def _opmath_float(dt):
    return np.dtype(dt) != np.float64


def uniform(eng, n, dt, low=0.0, high=1.0):
    """uniform_kernel: n draws on [low, high) in numpy dtype dt (float16/32: ATen's float
    opmath; float64: double), clamped to `low` where the cast rounds a value up to `high`."""
    dt = np.dtype(dt)
    unit = low == 0.0 and high == 1.0
    if dt == np.float64:
        def draw(k):
            x = _unit_doubles(eng, k)
            if unit:
                return x
            v = madd64(x, high - low, low)
            return np.where(v == high, low, v)
    else:
        lo, hi = np.float32(low), np.float32(high)
        to_s, from_s = dt.type(high), dt.type(low)

        def draw(k):
            x = _unit_floats(eng, k)
            v = (x if unit else madd32(x, hi - lo, lo)).astype(dt, copy=False)
            return np.where(v == to_s, from_s, v)
    return _chunked(n, dt, draw)


# ------------------------------------------------------------------ normal

def normal_scalar(eng, n, mean=0.0, std=1.0):
    """n draws of at::normal_distribution<double>(mean, std), in order, as ATen's scalar path
    makes them: each fresh pair of uniforms (u1, u2) gives r*cos(2 pi u1) now and caches
    r*sin(2 pi u1) for the next draw, r = sqrt(-2 log1p(-u2)); a value cached by an earlier call
    is used first. Vectorised: the fresh pairs are drawn at once and interleaved (cos, sin)."""
    out = np.empty(n, dtype=np.float64)  # host: the draws
    if n == 0:
        return out
    k = 0
    if eng.next_double is not None:
        out[0] = eng.next_double
        eng.next_double = None
        k = 1
    pairs = (n - k + 1) // 2
    if pairs:
        u = unit_doubles(eng, 2 * pairs).reshape(pairs, 2)
        r = np.sqrt(-2.0 * _libm.log1p(-u[:, 1]))
        theta = (2.0 * np.pi) * u[:, 0]
        c, s = _libm.cos(theta), _libm.sin(theta)
        vals = np.empty((pairs, 2), dtype=np.float64)  # host: the draws
        vals[:, 0] = r * c
        vals[:, 1] = r * s
        vals = vals.reshape(-1)
        out[k:] = vals[:n - k]
        if vals.size > n - k:
            eng.next_double = float(vals[-1])
    return madd64(out, std, mean) if (std != 1.0 or mean != 0.0) else out


def _fill16_double(u, mean, std, out):
    """NormalFill16 for double over rows of 16 uniforms (Box-Muller: the first 8 give the radius
    from log(1 - u), the last 8 the angle), into `out` (rows of 16)."""
    u1 = 1.0 - u[:, :8]
    radius = np.sqrt(-2.0 * _libm.log(u1))
    theta = (2.0 * np.pi) * u[:, 8:]
    np.multiply(radius, _libm.cos(theta), out=out[:, :8])
    np.multiply(radius, _libm.sin(theta), out=out[:, 8:])
    if std != 1.0 or mean != 0.0:
        out[...] = _fma64(out, std, mean)   # std::fma, explicit in the source


# avx_mathfun.h's Cephes constants, as float32
_f32 = np.float32
_LOG_P = [_f32(v) for v in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1,
                            -1.2420140846E-1, 1.4249322787E-1, -1.6668057665E-1,
                            2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1)]
_LOG_Q1, _LOG_Q2 = _f32(-2.12194440e-4), _f32(0.693359375)
_SQRTHF = _f32(0.707106781186547524)
_FOPI = _f32(1.27323954473516)
_DP = (_f32(-0.78515625), _f32(-2.4187564849853515625e-4), _f32(-3.77489497744594108e-8))
_COS_P = (_f32(2.443315711809948E-005), _f32(-1.388731625493765E-003),
          _f32(4.166664568298827E-002))
_SIN_P = (_f32(-1.9515295891E-4), _f32(8.3321608736E-3), _f32(-1.6666654611E-1))
_LOG_P64 = [float(v) for v in _LOG_P]
_COS_P64 = [float(v) for v in _COS_P]
_SIN_P64 = [float(v) for v in _SIN_P]


def _horner32(x64, coefs, fix):
    """Float Horner with fused steps, y = fma(y, x, c) for c in coefs[1:] from y = coefs[0],
    in float64 holding float32 values (each product is exact there, each sum rounds once and
    is then rounded to float32). A double sum that lands exactly on a float32 midpoint could
    round twice: those elements (rare) are listed in `fix` for the exact path. Returns y * x
    (exact, as float64) and y."""
    t = np.multiply(x64, coefs[0])
    y = np.empty(x64.shape, dtype=np.float32)  # host: the draws
    for c in coefs[1:]:
        t += c
        tie = (t.view(np.int64) & 0x1FFFFFFF) == 0x10000000
        if tie.any():
            fix.append(np.flatnonzero(tie))
        y[...] = t
        t[...] = y
        t *= x64
    return t, y


def _fmaf_checked(a64, b, c, fix):
    """RN32(a64 * b + c), a64 and the product exact in float64; midpoint cases go to `fix`."""
    t = a64 * b
    t += c
    tie = (t.view(np.int64) & 0x1FFFFFFF) == 0x10000000
    if tie.any():
        fix.append(np.flatnonzero(tie))
    return t.astype(np.float32)


def _log256(x):
    """avx_mathfun's log256_ps for float32 x in [2**-24, 1], with the multiply-adds the AVX2
    build fuses (the polynomial's Horner steps, y*z + e*q1; e*q2 + x is exact either way)."""
    x0 = x
    bits = x.view(np.int32)
    e = ((bits >> 23) - 126).astype(np.float32)
    x = ((bits & np.int32(-0x7F800001)) | np.int32(0x3F000000)).view(np.float32)
    m = (x < _SQRTHF).astype(np.float32)     # below sqrt(1/2): x = 2x, e = e - 1
    e -= m
    x = x * m + (x - _f32(1))
    z = x * x
    fix = []
    yx, _ = _horner32(x.astype(np.float64), _LOG_P64, fix)
    y = _fmaf_checked(yx.astype(np.float32).astype(np.float64), z.astype(np.float64),
                      (e * _LOG_Q1).astype(np.float64), fix)
    y = y - z * _f32(0.5)
    out = e * _LOG_Q2 + (x + y)
    if fix:
        idx = np.unique(np.concatenate(fix))
        out.reshape(-1)[idx] = _log256_exact(x0.reshape(-1)[idx])
    return out


def _log256_exact(x):
    """log256_ps with every fused step exact (the reference for the elements _log256 lists)."""
    bits = x.view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(np.float32) + _f32(1)
    x = ((bits & np.int32(-0x7F800001)) | np.int32(0x3F000000)).view(np.float32)
    mask = x < _SQRTHF
    tmp = np.where(mask, x, _f32(0))
    x = x - _f32(1)
    e = e - mask.astype(np.float32)
    x = x + tmp
    z = x * x
    y = np.full_like(x, _LOG_P[0])
    for p in _LOG_P[1:]:
        y = _fma32(y, x, p)
    y = y * x
    y = _fma32(y, z, e * _LOG_Q1)
    y = y - z * _f32(0.5)
    x = x + y
    return _fma32(e, _LOG_Q2, x)


def _sincos256(x):
    """avx_mathfun's sincos256_ps for float32 x in [0, 2 pi), fused as the AVX2 build fuses
    (y*DP1 and y*DP2 are exact products, so only the DP3 step and the polynomials differ)."""
    x0 = x
    j = ((x * _FOPI).astype(np.int32) + 1) & ~1
    y = j.astype(np.float32)
    fix = []
    x = x + y * _DP[0]
    x = x + y * _DP[1]
    x = _fmaf_checked(y.astype(np.float64), float(_DP[2]), x.astype(np.float64), fix)
    z = x * x
    z64 = z.astype(np.float64)
    yc, _ = _horner32(z64, _COS_P64, fix)            # ((c0 z + c1) z + c2) z
    yc = _fmaf_checked(yc.astype(np.float32).astype(np.float64), z64,
                       -(z * _f32(0.5)).astype(np.float64), fix) + _f32(1)
    ys, _ = _horner32(z64, _SIN_P64, fix)            # ((s0 z + s1) z + s2) z
    ys = _fmaf_checked(ys.astype(np.float32).astype(np.float64), x.astype(np.float64),
                       x.astype(np.float64), fix)
    # select the polynomial and the signs with integer operations on the bits
    swap = -((j >> 1) & 1)                          # all ones where (j & 2) != 0
    sb, cb = ys.view(np.int32), yc.view(np.int32)
    diff = (sb ^ cb) & swap
    s = (sb ^ diff) ^ ((j & 4) << 29)
    c = (cb ^ diff) ^ ((~(j - 2) & 4) << 29)
    s, c = s.view(np.float32), c.view(np.float32)
    if fix:
        idx = np.unique(np.concatenate(fix))
        es, ec = _sincos256_exact(x0.reshape(-1)[idx])
        s.reshape(-1)[idx], c.reshape(-1)[idx] = es, ec
    return s, c


def _sincos256_exact(x):
    """sincos256_ps with every fused step exact (the reference for the elements listed)."""
    y = x * _FOPI
    j = (y.astype(np.int32) + 1) & ~1
    y = j.astype(np.float32)
    swap_sin = (j & 4) != 0
    poly = (j & 2) == 0
    for dp in _DP:
        x = _fma32(y, dp, x)
    neg_cos = (~(j - 2) & 4) != 0
    z = x * x
    yc = np.full_like(x, _COS_P[0])
    yc = _fma32(yc, z, _COS_P[1])
    yc = _fma32(yc, z, _COS_P[2])
    yc = yc * z
    yc = _fma32(yc, z, -(z * _f32(0.5)))
    yc = yc + _f32(1)
    ys = np.full_like(x, _SIN_P[0])
    ys = _fma32(ys, z, _SIN_P[1])
    ys = _fma32(ys, z, _SIN_P[2])
    ys = ys * z
    ys = _fma32(ys, x, x)
    s = np.where(poly, ys, yc)
    c = np.where(poly, yc, ys)
    return np.where(swap_sin, -s, s), np.where(neg_cos, -c, c)


def _fill16_float(u, mean, std, out):
    """NormalFill16<float> over rows of 16 float32 uniforms: the AVX2 build's (avx_mathfun,
    bit for bit) or, without it, the generic one (the C library's logf/sinf/cosf, std::fma),
    where the float functions are the double ones rounded: about 1.5 % of the draws then differ
    from PyTorch's by a few ulps (glibc's float functions are not correctly rounded)."""
    u1 = _f32(1) - u[:, :8]
    u2 = u[:, 8:]
    if CAPABILITY == "avx2":
        radius = np.sqrt(_f32(-2) * _log256(u1))
        s, c = _sincos256(_f32(2.0 * np.pi) * u2)
    else:
        radius = np.sqrt(_f32(-2) * _libm.logf(u1))
        theta = (2.0 * np.pi * u2.astype(np.float64)).astype(np.float32)
        s, c = _libm.sinf(theta), _libm.cosf(theta)
    np.multiply(radius, c, out=out[:, :8])
    np.multiply(radius, s, out=out[:, 8:])
    if std != 1.0 or mean != 0.0:
        out[...] = _fma32(out, _f32(std), _f32(mean))  # _mm256_fmadd_ps / std::fma


def normal_fill(eng, n, dt, mean=0.0, std=1.0):
    """normal_fill (n >= 16, contiguous): n uniforms, Box-Muller over each full block of 16; when
    n % 16 != 0, 16 more uniforms replace the last 16 values (for float and double the n % 16
    uniforms past the last full block are drawn first and overwritten; float16 and bfloat16
    fill 16 at a time through a float buffer and do not draw them)."""
    dt = np.dtype(dt)
    double = dt == np.float64
    unit = _unit_doubles if double else _unit_floats
    fill = _fill16_double if double else _fill16_float
    full = n // 16
    out = np.empty(n, dtype=np.float64 if double else np.float32)  # host: the draws
    rows = out[:full * 16].reshape(full, 16)
    step = _CHUNK // 16
    for a in range(0, full, step):
        k = min(step, full - a)
        fill(unit(eng, 16 * k).reshape(k, 16), mean, std, rows[a:a + k])
    if n % 16:
        if dt == np.float64 or dt == np.float32:
            # (float16 and bfloat16 draw 16 at a time into a buffer: no draws are overwritten)
            eng.advance((2 if double else 1) * (n % 16))
        tail = np.empty((1, 16), dtype=out.dtype)  # host: the draws
        fill(unit(eng, 16).reshape(1, 16), mean, std, tail)
        out[n - 16:] = tail[0]
    return out.astype(dt, copy=False)


def normal(eng, n, dt, mean=0.0, std=1.0, contiguous=True):
    """normal_kernel: the vectorised fill for 16 or more contiguous elements, else the scalar
    path (double Box-Muller with its cached second value), cast to dt."""
    dt = np.dtype(dt)
    if n >= 16 and contiguous:
        return normal_fill(eng, n, dt, mean, std)
    return normal_scalar(eng, n, mean, std).astype(dt)


# ------------------------------------------------------------------ integers

def random_from_to(eng, n, dt, rng, base):
    """random_(from, to): (v % range) + from, v = random() for ranges below 2**28, else
    random64(); then cast to dt."""
    rng = int(rng)
    v = eng.random64(n) if rng >= 1 << 28 else eng.random(n)
    r = (v % np.uint64(rng)).astype(np.int64)
    return _cast_int(r + np.int64(base) if base else r, dt)


def random_full_64(eng, n, dt):
    """random_(from=-2**63, to=None): random64() as int64."""
    return _cast_int(eng.random64(n).view(np.int64), dt)


def _cast_int(v, dt):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return v != 0
    return v.astype(dt)


def _finfo(dt):
    """np.finfo, or ml_dtypes' for its types (bfloat16, float8)."""
    try:
        return np.finfo(dt)
    except ValueError:
        import ml_dtypes
        return ml_dtypes.finfo(dt)


def random_default(eng, n, dt):
    """random_() with no bounds: integers on [0, max] of the dtype (floats: [0, 2**mantissa])."""
    dt = np.dtype(dt)
    if dt == np.bool_:
        return (eng.random(n) & np.uint64(1)) != 0
    if dt == np.float64:
        return (eng.random64(n) % np.uint64((1 << 53) + 1)).astype(np.float64)
    if dt == np.int64:
        return (eng.random64(n) % np.uint64(1 << 63)).astype(np.int64)
    if dt.name in _DIGITS:
        digits = _DIGITS[dt.name]
        return (eng.random(n) % np.uint64((1 << digits) + 1)).astype(dt)
    bound = int(np.iinfo(dt).max) + 1
    return (eng.random(n) % np.uint64(bound)).astype(dt)


# ------------------------------------------------------------------ Bernoulli and friends

def bernoulli_scalar(eng, n, p):
    """bernoulli_(p) for a number p: bernoulli_distribution<double>, a double uniform < p."""
    return unit_doubles(eng, n) < p


def bernoulli_tensor(eng, p):
    """bernoulli_(p_tensor): p as double compares with double uniforms; any other p dtype with
    float uniforms (bernoulli_distribution<float>)."""
    p = np.asarray(p).reshape(-1)
    if p.dtype == np.float64:
        return unit_doubles(eng, p.size) < p
    return unit_floats(eng, p.size) < p.astype(np.float32)


def exponential(eng, n, lambd):
    """exponential_distribution<double>: -1/lambda * log1p(-u)."""
    return (-1.0 / lambd) * _libm.log1p(-unit_doubles(eng, n))


def geometric(eng, n, p):
    """geometric_distribution<double>: ceil(log(u) / log1p(-p))."""
    u = unit_doubles(eng, n)
    with np.errstate(divide="ignore"):
        return np.ceil(_libm.log(u) / _libm.log1p(np.float64(-p)))


def log_normal(eng, n, mean, std):
    """lognormal_distribution<double>: exp of the scalar normal path's draws."""
    return _libm.exp(normal_scalar(eng, n, mean, std))


def cauchy(eng, n, median, sigma):
    """cauchy_distribution<double>: median + sigma * tan(pi * (u - 0.5))."""
    u = unit_doubles(eng, n)
    return madd64(np.float64(sigma), _libm.tan(np.pi * (u - 0.5)), median)


# ------------------------------------------------------------------ randperm

def randperm(eng, n):
    """randperm_cpu: Fisher-Yates with z_i = random() % (n - i), swapping positions i and
    j_i = i + z_i for i = 0 .. n-2 (from n >= 2**32 / 20, ATen's inside-out variant below).

    Vectorised: position i is final after step i and holds what j_i held just before it: A(m)
    for the previous step m < i with j_m == j_i, or j_i itself when there is none, where A(k)
    is what position k held just before step k: A(m) for the last step m < k with j_m == k, or
    k. Every value is the root of a chain of such links, found for all positions at once (one
    sort for the previous-step links, pointer doubling for the chains)."""
    n = int(n)
    if n <= 1:
        return np.arange(n, dtype=np.int64)
    if n >= 0xFFFFFFFF // 20:
        return _randperm_inside_out(eng, n)
    i = np.arange(n - 1, dtype=np.int64)
    j = i + (eng.random(n - 1) % (n - i).astype(np.uint64)).astype(np.int64)
    prev = _previous_same(j, n)                # previous step with the same target
    moved = j > i
    last_in = np.full(n, -1, dtype=np.int64)  # host: the permutation
    np.maximum.at(last_in, j[moved], i[moved])  # last step m < k that wrote into k
    root = _roots(np.where(last_in[:n - 1] >= 0, last_in[:n - 1], i))   # A(k)
    out = np.empty(n, dtype=np.int64)  # host: the permutation
    out[:n - 1] = np.where(prev >= 0, root[np.maximum(prev, 0)], j)
    out[n - 1] = root[last_in[n - 1]] if last_in[n - 1] >= 0 else n - 1
    return out


def _previous_same(values, n):
    """For each index m: the largest m' < m with values[m'] == values[m], or -1 (values < n)."""
    m = np.arange(values.size, dtype=np.int64)
    key = np.sort(values * n + m)
    t = key // n
    idx = key - t * n
    same = t[1:] == t[:-1]
    prev = np.full(values.size, -1, dtype=np.int64)  # host: the permutation
    prev[idx[1:][same]] = idx[:-1][same]
    return prev


def _roots(link):
    """Follow link[k] (<= k, link[k] == k at a root) to the root, for every k at once."""
    while True:
        nxt = link[link]
        if np.array_equal(nxt, link):
            return link
        link = nxt


def _randperm_inside_out(eng, n):
    """The inside-out Fisher-Yates ATen uses from n >= 2**32 / 20: at step i, z_i =
    random64() % (i + 1), r[i] = r[z_i], r[z_i] = i. Vectorised: position p ends with m, the last
    step with z_m == p, or else with B(p), what p received at its own step: p when z_p == p,
    else the value z_p held then: the previous step m with z_m == z_p, or else B(z_p)."""
    i = np.arange(n, dtype=np.int64)
    z = (eng.random64(n) % (i + 1).astype(np.uint64)).astype(np.int64)
    prev = _previous_same(z, n)
    follow = (z < i) & (prev < 0)
    received = np.where(z == i, i, prev)[_roots(np.where(follow, z, i))]
    last = np.full(n, -1, dtype=np.int64)  # host: the permutation
    np.maximum.at(last, z, i)
    return np.where(last >= 0, last, received)


# ------------------------------------------------------------------ random_(from, to) checks

_DIGITS = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}
_C_NAME = {"float64": "double", "float32": "float", "float16": "c10::Half",
           "bfloat16": "c10::BFloat16", "uint8": "unsigned char", "int8": "signed char",
           "int16": "short", "int32": "int", "int64": "long", "bool": "bool",
           "uint16": "unsigned short", "uint32": "unsigned int", "uint64": "unsigned long"}


def _digits(dt):
    return _DIGITS[np.dtype(dt).name] if np.dtype(dt).name in _DIGITS else 53


def update_from(frm, dt):
    """ATen's update_from: the smallest `from` whose cast to dt does not fall below it."""
    plus1 = int(np.dtype(dt).type(frm + 1))
    if plus1 < frm:
        n = abs(frm + 1).bit_length() - 1
        frm = plus1 + (1 << (n - _digits(dt) + 1))
    return frm


def update_to(to, dt):
    """ATen's update_to: the largest `to` whose cast to dt stays below it."""
    minus1 = int(np.dtype(dt).type(to - 1))
    if minus1 >= to:
        n = abs(to - 1).bit_length() - 1
        to = minus1 - (1 << (n - _digits(dt) + 1))
    return to


def check_from_to(frm, to_inc, dtype):
    """check_from_to_in_range: PyTorch's bounds errors (and its precision warning)."""
    import warnings
    name = dtype.name
    cname = _C_NAME.get(name, name)
    if dtype.is_floating_point:
        info = _finfo(dtype.np)
        lo, hi = float(info.min), float(info.max)
        digits = _DIGITS.get(name, 53)
    elif name == "bool":
        lo, hi, digits = 0, 1, None
    else:
        info = np.iinfo(dtype.np)
        lo, hi, digits = int(info.min), int(info.max), None
    for var, what in ((frm, "from"), (to_inc, "to - 1")):
        if not lo <= var <= hi:
            raise RuntimeError(f"{what} is out of bounds for {cname}")
    if digits is not None:
        for var, what in ((frm, "from"), (to_inc, "to - 1")):
            if var < -(1 << digits) or var > (1 << digits):
                warnings.warn(
                    f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                    f"limitations {cname} can support discrete uniform distribution only within "
                    f"this range. This warning will become an error in version 1.7 release, "
                    f"please fix the code in advance", UserWarning, stacklevel=4)


# ------------------------------------------------------------------ multinomial

def multinomial(eng, probs, n_sample, replacement):
    """torch.multinomial on a host array of probabilities (1-d or 2-d): PyTorch's checks and
    draws (see _creation.multinomial); int64 indices."""
    probs = np.asarray(probs)
    if probs.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if probs.dtype.kind != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_TORCH_NAME.get(probs.dtype.name, probs.dtype.name)}")
    if n_sample <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    k = probs.shape[-1]
    if not replacement and n_sample > k:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if k > 1 << 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    rows = probs.reshape(-1, k)
    if rows.shape[0] == 0:
        return np.empty(probs.shape[:-1] + (n_sample,), dtype=np.int64)
    if not replacement or n_sample == 1:
        with np.errstate(invalid="ignore"):
            ok = (rows.max() < np.inf) & (rows.min() >= 0) if rows.size else True
        if not ok:
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if (rows.sum(axis=1) == 0).any():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        # the exponential race: argmax / top-k of p / q, q ~ Exp(1) in p's dtype
        q = exponential(eng, rows.size, 1.0).astype(rows.dtype).reshape(rows.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            q = (rows / q).astype(rows.dtype)
        if n_sample == 1:
            out = np.argmax(q, axis=1)[:, None]
        else:
            out = np.argsort(-q, axis=1, kind="stable")[:, :n_sample]
        return out.astype(np.int64).reshape(probs.shape[:-1] + (n_sample,))
    acc = np.float32 if rows.dtype.itemsize < 4 else rows.dtype
    vals = rows.astype(acc)
    if not np.isfinite(vals).all() if vals.size else False:
        raise RuntimeError("invalid multinomial distribution (encountering probability entry = "
                           "infinity or NaN)")
    if (vals < 0).any():
        raise RuntimeError("invalid multinomial distribution (encountering probability entry "
                           "< 0)")
    cum = np.cumsum(vals, axis=1, dtype=acc)           # sequential, in the row's type
    total = cum[:, -1:].copy()
    if (total <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    cum = (cum / total).astype(acc)
    cum[:, -1] = 1
    u = unit_doubles(eng, rows.shape[0] * n_sample).reshape(rows.shape[0], n_sample)
    # ATen's binary search (first slot whose cumulative value is >= u), for every draw at once
    left = np.zeros(u.shape, dtype=np.int64)
    right = np.full(u.shape, k, dtype=np.int64)
    r_idx = np.arange(rows.shape[0])[:, None]
    while True:
        live = right > left
        if not live.any():
            break
        mid = left + (right - left) // 2
        go = live & (cum[r_idx, np.minimum(mid, k - 1)].astype(np.float64) < u)
        left = np.where(go, mid + 1, left)
        right = np.where(live & ~go, mid, right)
    return left.reshape(probs.shape[:-1] + (n_sample,))


_TORCH_NAME = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
               "uint8": "Byte", "bool": "Bool"}


# ------------------------------------------------------------------ sequential samplers

class _Stream:
    """The generator's coming double uniforms (53 bits of random64()), peeked on demand and
    not consumed until `commit`."""

    def __init__(self, eng, guess):
        self.eng = eng
        self.own_cached = eng.next_double
        self._normal = None
        self.u = np.empty(0)
        self._ensure(max(int(guess), 64))

    def _ensure(self, m):
        if m > self.u.size:
            m = max(m, 2 * self.u.size)
            r = self.eng.peek(2 * m).reshape(-1, 2)
            self.u = _unit_double((r[:, 0] << np.uint64(32)) | r[:, 1])

    def normal_pair(self, pos):
        """The Box-Muller pair (r cos, r sin) from the uniforms at pos and pos + 1 (computed
        once for every offset of the buffer, the new ones as the buffer grows)."""
        pos = np.asarray(pos)
        if pos.size:
            self._ensure(int(pos.max()) + 2)
        done = self._normal[0].size if self._normal is not None else 0
        if done < self.u.size - 1:
            u1, u2 = self.u[done:-1], self.u[done + 1:]
            r = np.sqrt(-2.0 * _libm.log1p(-u2))
            theta = (2.0 * np.pi) * u1
            new = (r * _libm.cos(theta), r * _libm.sin(theta))
            self._normal = new if self._normal is None else tuple(
                np.concatenate([old, add]) for old, add in zip(self._normal, new))
        return self._normal[0][pos], self._normal[1][pos]

    def at(self, pos):
        pos = np.asarray(pos)
        if pos.size:
            self._ensure(int(pos.max()) + 1)
        return self.u[pos]

    def commit(self, used):
        self.eng.advance(2 * int(used))


def _speculate(eng, n, step, guess, cache0=-1, quantum=1, sd=0.0):
    """Run n samplers of ATen's serial kernels (each element consumes a variable number of
    double uniforms, one element after another) as array code.

    `step(idx, pos, cache, stream) -> (value, end, cache_out)` runs the elements idx to
    completion from their start offsets (in uniforms) and cache states (for the Box-Muller
    normal's cached value: -1 none, -2 the generator's own, else the offset of the pair whose
    sine it holds). `guess(idx, pos0, cache0) -> (pos, cache)` gives the elements' start states
    if each consumes its usual number of draws, the first one starting at the exact state
    (pos0, cache0).

    Each round runs a window of elements from their guessed starts, and from the starts
    `quantum * k` away for |k| <= spread (wide enough for the window, given the standard
    deviation `sd` of one element's count of draws); then follows the one true chain (element i starts
    where element i - 1 ended) through these runs by pointer doubling, as far as the runs
    cover it: those elements are final, and the next round starts exactly after the last.
    A loop over rounds, each settling a run of elements, not over the elements."""
    stream = _Stream(eng, 64)
    value = np.empty(n)
    i0, pos0, c0 = 0, 0, cache0
    width = 64
    cap = 2048 if sd == 0 else 256
    while i0 < n:
        idx = np.arange(i0, min(n, i0 + width))
        m = idx.size
        pos, cache = guess(idx, pos0, c0)
        # element j may start up to about 3 sd sqrt(j) from its guess: its candidates
        spread = np.minimum(64, np.ceil(3.0 * sd * np.sqrt(np.arange(m)) / quantum)).astype(
            np.int64)
        K = 2 * spread + 1
        first = np.concatenate([[0], np.cumsum(K)[:-1]])     # each element's first candidate
        total = int(K.sum())
        owner = np.repeat(np.arange(m), K)
        k_of = np.arange(total) - first[owner] - spread[owner]
        cpos = np.maximum(pos[owner] + quantum * k_of, pos0)
        cpos[0] = pos0
        v, end, cout = step(idx[owner], cpos, cache[owner], stream)
        # candidate c of element j leads to the candidate of j + 1 that starts where c ended
        j = owner
        nxt_j = np.minimum(j + 1, m - 1)
        delta = end - pos[nxt_j]
        kk = delta // quantum
        ok = (j < m - 1) & ((delta % quantum) == 0) & (np.abs(kk) <= spread[nxt_j]) & \
            (cout == cache[nxt_j])
        target = first[nxt_j] + spread[nxt_j] + kk
        ok &= cpos[np.where(ok, target, 0)] == end
        path = _follow(np.where(ok, target, -1), 0, m)
        k = int(np.flatnonzero(path >= 0)[-1])
        nodes = path[:k + 1]
        value[i0:i0 + k + 1] = v[nodes]
        last = nodes[-1]
        pos0, c0 = int(end[last]), int(cout[last])
        i0 += k + 1
        width = min(cap, max(16, 2 * width if k == m - 1 else 2 * (k + 1)))
    stream.commit(pos0)
    return value, c0, stream


def _follow(link, start, m):
    """The first m nodes of the path start, link[start], ... (-1 once it ends), by doubling."""
    size = link.size
    table = np.where(link >= 0, link, size)            # `size`: past the end
    table = np.concatenate([table, [size]])
    t = np.arange(m)
    node = np.full(m, start)
    bit = 0
    while (1 << bit) < m:
        sel = ((t >> bit) & 1) == 1
        node = np.where(sel, table[node], node)
        table = table[table]
        bit += 1
    return np.where(node >= size, -1, node)


def _normals(stream, pos, cache):
    """One at::normal_distribution<double> draw for each (pos, cache) state: the cached value
    if there is one (cache >= 0: the sine of the pair at that offset; -2: the generator's own),
    else a fresh pair (cos now, sine cached). Returns (x, pos, cache)."""
    have = cache != -1
    cos, _ = stream.normal_pair(pos)
    _, sin = stream.normal_pair(np.maximum(cache, 0))
    x = np.where(have, sin, cos)
    own = cache == -2
    if own.any():
        x[own] = stream.own_cached
    return x, np.where(have, pos, pos + 2), np.where(have, -1, pos)


def standard_gamma(eng, alpha, dt):
    """_s_gamma_cpu: sample_gamma for each concentration (in order), Marsaglia and Tsang's
    method with a boost for alpha < 1, from double uniforms and the scalar Box-Muller normal
    (with the generator's cached value), then max(tiny, x) in dt. Distributions.cpp is built
    without contraction, and alpha's own arithmetic is in dt (float for float32 tensors)."""
    dt = np.dtype(dt)
    f = dt.type
    alpha = np.asarray(alpha, dtype=dt).reshape(-1)
    n = alpha.size
    if n == 0:
        return np.empty(0, dtype=dt)
    zero = alpha == 0
    boost = (alpha < 1) & ~zero
    with np.errstate(divide="ignore"):
        inv = (f(1.0) / alpha).astype(np.float64)
    a2 = np.where(boost, alpha + f(1.0), alpha).astype(dt)
    d = (a2 - f(np.float32(1.0) / np.float32(3.0))).astype(np.float64)
    with np.errstate(invalid="ignore"):
        c = 1.0 / np.sqrt(float(np.float32(9.0)) * d)
    k331 = float(np.float32(0.0331))

    def step(idx, pos, cache, stream):
        pos, cache = pos.copy(), cache.copy()
        val = np.zeros(idx.size)
        scale = np.ones(idx.size)
        b = np.flatnonzero(boost[idx])
        if b.size:
            u = stream.at(pos[b])
            pos[b] += 1
            scale[b] = _libm.pow(1.0 - u, inv[idx[b]])
        act = np.flatnonzero(~zero[idx])
        while act.size:
            e = idx[act]
            x, p, cc = _normals(stream, pos[act], cache[act])
            pos[act], cache[act] = p, cc
            y = 1.0 + c[e] * x
            ok = y > 0
            if not ok.all():                 # redraw the normal for these (do ... while)
                act_ok = act[ok]
                x, y = x[ok], y[ok]
                retry = act[~ok]
            else:
                act_ok, retry = act, act[:0]
            if act_ok.size:
                e = idx[act_ok]
                v = y * y * y
                u = 1.0 - stream.at(pos[act_ok])
                pos[act_ok] += 1
                xx = x * x
                accept = u < 1.0 - k331 * xx * xx
                t = np.flatnonzero(~accept)
                if t.size:
                    with np.errstate(divide="ignore", invalid="ignore"):
                        accept[t] = _libm.log(u[t]) < 0.5 * xx[t] + d[e[t]] * (
                            1.0 - v[t] + _libm.log(v[t]))
                done = act_ok[accept]
                val[done] = scale[done] * d[idx[done]] * v[accept]
                act_ok = act_ok[~accept]
            act = np.sort(np.concatenate([act_ok, retry]))
        return val, pos, cache

    def guess(idx, pos0, c0):
        nz = ~zero[idx]
        have = np.empty(idx.size, dtype=bool)
        have[0] = c0 != -1
        flips = np.cumsum(nz[:-1])              # each nonzero element flips the cache
        have[1:] = have[0] ^ (flips % 2 == 1)
        use = nz * (boost[idx] + 1 + 2 * ~have)
        pos = pos0 + np.concatenate([[0], np.cumsum(use[:-1])])
        # the cache an element leaves: the pair it drew (at its start, after the boost draw),
        # none if it used the cached value, unchanged if alpha == 0
        left = np.where(nz & ~have, pos + boost[idx], np.where(nz, -1, -3))
        cache = np.empty(idx.size, dtype=np.int64)
        cache[0] = c0
        prev = np.concatenate([[c0], left[:-1]])
        keep = prev == -3
        if keep.any():                           # alpha == 0 passes its input on
            src = np.where(keep, 0, np.arange(idx.size))
            src = np.maximum.accumulate(src)
            prev = np.where(keep, np.concatenate([[c0], left[:-1]])[src], prev)
            prev[0] = c0
        cache[1:] = prev[1:]
        return pos.astype(np.int64), cache

    own = eng.next_double
    cache0 = -2 if own is not None else -1
    value, c_last, stream = _speculate(eng, n, step, guess, cache0)
    eng.next_double = (own if c_last == -2 else None if c_last == -1 else
                       float(_pair_sine(stream, c_last)))
    out = value.astype(dt)
    return np.maximum(out, _finfo(dt).tiny)



def _pair_sine(stream, p):
    return stream.normal_pair(np.array([p]))[1][0]


def poisson(eng, rate):
    """sample_poisson for each rate (float64 array), in order: Hoermann's transformed
    rejection for rate >= 10 (two uniforms a round), the product of uniforms below, 0 at 0."""
    rate = np.asarray(rate, dtype=np.float64).reshape(-1)
    n = rate.size
    if n == 0:
        return np.empty(0)
    big = rate >= 10
    slam = np.sqrt(rate)
    loglam = _libm.log(np.where(big, rate, 1.0))
    b = 0.931 + 2.53 * slam          # (Distributions.cpp is built without contraction)
    a = -0.059 + 0.02483 * b
    invalpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2)
    log_invalpha = _libm.log(np.where(big, invalpha, 1.0))
    enlam = _libm.exp(-np.where(big, 0.0, rate))

    def step(idx, start, cache, stream):
        pos = start.copy()
        val = np.zeros(idx.size)
        lam = rate[idx]
        live = lam > 0
        hi = lam >= 10
        # product method for 0 < rate < 10, eight uniforms at a time: the running products
        # (multiply.accumulate multiplies left to right, as the loop does) and the first one
        # at or below exp(-rate)
        prod = np.ones(idx.size)
        act = np.flatnonzero(live & ~hi)
        J = 8
        while act.size:
            p0 = pos[act]
            block = stream.at(p0[:, None] + np.arange(J))
            run = np.multiply.accumulate(np.concatenate([prod[act, None], block], axis=1),
                                         axis=1)[:, 1:]
            stop = run <= enlam[idx[act], None]
            first = np.where(stop.any(axis=1), stop.argmax(axis=1), J)
            done = first < J
            val[act] += first
            pos[act] += np.where(done, first + 1, J)
            prod[act] = run[:, -1]
            act = act[~done]
        # transformed rejection for rate >= 10
        act = np.flatnonzero(hi)
        while act.size:
            e = idx[act]
            U = stream.at(pos[act]) - 0.5
            V = stream.at(pos[act] + 1)
            pos[act] += 2
            us = 0.5 - np.abs(U)
            k = np.floor((2 * a[e] / us + b[e]) * U + rate[e] + 0.43)
            accept = (us >= 0.07) & (V <= vr[e])
            reject = ~accept & ((k < 0) | ((us < 0.013) & (V > us)))
            test = ~accept & ~reject
            if test.any():
                t = np.flatnonzero(test)
                et, kt, Vt, ust = e[t], k[t], V[t], us[t]
                lhs = (_libm.log(Vt) + log_invalpha[et]) - _libm.log(a[et] / (ust * ust) + b[et])
                rhs = (-rate[et] + kt * loglam[et]) - _lgamma(kt + 1)
                accept[t] = lhs <= rhs
            val[act[accept]] = k[accept]
            act = act[~accept]
        return val, pos, cache

    small = (rate > 0) & (rate < 10)
    mean = np.where(rate >= 10, 2.2, np.where(small, rate + 1.0, 0.0))
    sd = np.sqrt(np.where(rate >= 10, 0.8, np.where(small, rate, 0.0)).mean())
    quantum = 1 if small.any() else 2

    def guess(idx, pos0, c0):
        cum = np.concatenate([[0.0], np.cumsum(mean[idx][:-1])])
        pos = pos0 + quantum * np.round(cum / quantum)
        return pos.astype(np.int64), np.full(idx.size, -1, dtype=np.int64)

    value, _, _ = _speculate(eng, n, step, guess, quantum=quantum, sd=sd)
    return value


def _lgamma(x):
    """glibc's lgamma at integer-valued x (a loop over the distinct values)."""
    import math
    x = np.asarray(x, dtype=np.float64)
    uniq, inv = np.unique(x, return_inverse=True)
    return np.array([math.lgamma(v) for v in uniq.tolist()])[inv].reshape(x.shape)


_STIRLING = np.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                      0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                      0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                      0.00833056343336287])


def _stirling_tail(k):
    """stirling_approx_tail<double>(k): the table below 10, the series above."""
    k = np.asarray(k, dtype=np.float64)
    kp1sq = (k + 1) * (k + 1)
    series = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    return np.where(k < 10, _STIRLING[np.clip(k, 0, 9).astype(np.int64)], series)


def binomial(eng, count, prob, dt):
    """_s_binomial_cpu: sample_binomial for each (count, prob) in order, in dt's arithmetic
    where ATen's is scalar_t (float for float32 tensors) and double elsewhere: BTRS (two
    uniforms a round) when count * p >= 10, else inversion by geometric jumps, for p or 1 - p
    whichever is at most 1/2. Distributions.cpp is built without contraction."""
    dt = np.dtype(dt)
    f = dt.type
    count = np.asarray(count, dtype=dt).reshape(-1)
    prob = np.asarray(prob, dtype=dt).reshape(-1)
    n = count.size
    if n == 0:
        return np.empty(0, dtype=dt)
    with np.errstate(all="ignore"):
        zero = (count <= 0) | (prob <= 0)
        full = ~zero & (prob >= 1)
        flip = ~zero & ~full & (prob > 0.5)
        nan = ~zero & ~full & ~(prob <= 0.5) & ~flip
        q = np.where(flip, (1.0 - prob.astype(np.float64)).astype(dt), prob).astype(dt)
        live = ~(zero | full | nan)
        use_btrs = live & ((count * q).astype(np.float64) >= 10.0)
        use_inv = live & ~use_btrs
        one = f(1)
        # BTRS constants (scalar_t products where ATen's are)
        stddev = np.sqrt(count * q * (one - q)).astype(np.float64)
        b = 1.15 + 2.53 * stddev
        a = -0.0873 + 0.0248 * b + 0.01 * q.astype(np.float64)
        c = (count * q).astype(np.float64) + 0.5
        v_r = 0.92 - 4.2 / b
        r = (q / (one - q)).astype(np.float64)
        alpha = (2.83 + 5.1 / b) * stddev
        m = np.floor((count + one) * q).astype(np.float64)
        # inversion: log1p(-p) in scalar_t (log1pf for float)
        if dt == np.float64:
            logq = _libm.log1p(np.where(use_inv, -q, 0.0))
        else:
            logq = _libm.log1pf(np.where(use_inv, -q, f(0))).astype(np.float64)
    cnt64 = count.astype(np.float64)

    def step(idx, start, cache, stream):
        pos = start.copy()
        val = np.zeros(idx.size, dtype=dt)
        act = np.flatnonzero(use_inv[idx])
        gsum = np.zeros(idx.size)
        while act.size:                                # geometric jumps, one uniform each
            e = idx[act]
            U = stream.at(pos[act])
            pos[act] += 1
            with np.errstate(divide="ignore"):
                gsum[act] += np.ceil(_libm.log(U) / logq[e])
            stop = gsum[act] > cnt64[e]
            go = act[~stop]
            val[go] = (val[go] + one).astype(dt)
            act = go
        act = np.flatnonzero(use_btrs[idx])
        while act.size:
            e = idx[act]
            U = stream.at(pos[act]) - 0.5
            V = stream.at(pos[act] + 1)
            pos[act] += 2
            us = 0.5 - np.abs(U)
            with np.errstate(divide="ignore", invalid="ignore"):
                k = np.floor((2 * a[e] / us + b[e]) * U + c[e]).astype(dt)
            bad = (k < 0) | (k > count[e])
            ok = ~bad & (us >= 0.07) & (V <= v_r[e])
            test = np.flatnonzero(~bad & ~ok)
            if test.size:
                et, kt, ut, Vt = e[test], k[test], us[test], V[test]
                ct, mt, rt = count[et], m[et], r[et]
                with np.errstate(divide="ignore", invalid="ignore"):
                    lhs = _libm.log(Vt * alpha[et] / (a[et] / (ut * ut) + b[et]))
                    k64 = kt.astype(np.float64)
                    c64 = ct.astype(np.float64)
                    ub = ((mt + 0.5) * _libm.log((mt + 1) / (rt * (c64 - mt + 1)))
                          + (ct + one).astype(np.float64)
                          * _libm.log((c64 - mt + 1) / ((ct - kt) + one).astype(np.float64))
                          + (k64 + 0.5) * _libm.log(rt * ((ct - kt) + one).astype(np.float64)
                                                    / (kt + one).astype(np.float64))
                          + _stirling_tail(mt) + _stirling_tail(c64 - mt)
                          - _stirling_tail(k64) - _stirling_tail((ct - kt).astype(np.float64)))
                ok[test] = lhs <= ub
            val[act[ok]] = k[ok]
            act = act[~ok]
        return val.astype(np.float64), pos, cache

    mean = np.where(use_btrs, 2.4, np.where(use_inv, (count * q).astype(np.float64) + 1, 0.0))
    sd = np.sqrt(np.where(use_btrs, 1.0, np.where(use_inv, (count * q).astype(np.float64),
                                                   0.0)).mean())

    def guess(idx, pos0, c0):
        cum = np.concatenate([[0.0], np.cumsum(mean[idx][:-1])])
        return (pos0 + np.round(cum)).astype(np.int64), np.full(idx.size, -1, dtype=np.int64)

    value, _, _ = _speculate(eng, n, step, guess, sd=sd)
    value = value.astype(dt)
    out = np.where(flip, count - value, value)
    out = np.where(zero, f(0), np.where(full, count, np.where(nan, f(np.nan), out)))
    return out.astype(dt)


def sample_dirichlet(eng, alpha, dt):
    """_s_dirichlet_cpu on a host array (last dim: the categories): gamma draws in double from
    the concentrations cast to double, normalised in double along the last dim, cast to dt and
    kept in [smallest normal, the float just below 1]. Returns (samples, the gamma draws)."""
    dt = np.dtype(dt)
    alpha = np.asarray(alpha)
    g = standard_gamma(eng, alpha.astype(np.float64).reshape(-1), np.float64).reshape(alpha.shape)
    ratio = (g / g.sum(axis=-1, keepdims=True)).astype(dt)
    top = np.nextafter(dt.type(1.0), dt.type(0.0))
    return np.minimum(top, np.maximum(_finfo(dt).tiny, ratio)), g


# ------------------------------------------------------------------ layout

def iteration_order(arr):
    """The axes of `arr`, outermost first, in the order ATen's TensorIterator walks an output
    with these strides (memory order); None when that is C order."""
    if arr.ndim <= 1 or arr.flags.c_contiguous:
        return None
    return sorted(range(arr.ndim),
                  key=lambda d: -abs(arr.strides[d]) if arr.shape[d] > 1 else 0)


def in_order(like, flat):
    """Draws made in the iteration order of array `like` (a tensor's storage, or a shape for a
    fresh C-order tensor), as a host array of its shape."""
    if isinstance(like, tuple):
        return flat.reshape(like)
    perm = iteration_order(like)
    if perm is None:
        return flat.reshape(like.shape)
    out = np.empty(like.shape, dtype=flat.dtype)  # host: the draws, reordered
    out.transpose(perm)[...] = flat.reshape([like.shape[d] for d in perm])
    return out


def dropout_mask(eng, like, p):
    """PyTorch's dropout noise: bernoulli_(1 - p) of a tensor laid out like `like` (an array:
    empty_like keeps a dense layout; or a shape: a fresh tensor), as a bool host array."""
    shape = like if isinstance(like, tuple) else like.shape
    n = 1
    for k in shape:
        n *= k
    return in_order(like, bernoulli_scalar(eng, n, 1.0 - p))


def rrelu_noise(eng, x, lower, upper):
    """rrelu's training noise for the host array x (C order, as ATen walks input.contiguous()):
    1 where x > 0; elsewhere, one at a time, uniform_real_distribution<double>(lower, upper)
    with lower and upper in x's opmath type (float for float32), cast to x's dtype."""
    x = np.asarray(x)
    dt = x.dtype
    op = np.float64 if dt == np.float64 else np.float32
    lo, hi = float(op(lower)), float(op(upper))
    neg = ~(x > 0)
    m = int(neg.sum())
    noise = np.ones(x.shape, dtype=dt)
    if m:
        # (Activation.cpp, where rrelu lives, is built without contraction: no fma here)
        noise[neg] = (unit_doubles(eng, m) * (hi - lo) + lo).astype(op).astype(dt)
    return noise
