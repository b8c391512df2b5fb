"""torch.distributions.transforms: invertible maps y = T(x) with log|det dy/dx|, their domains
and codomains (constraints), and an optional one-entry cache (T.inv(T(x)) is x). Formulas are in
ndgrad ops, so they differentiate to any order."""
import math
import weakref

from . import _torch as _t
from .._tensor import Tensor, Size
from ..nn import functional as F
from . import constraints as C
from .utils import tril_matrix_to_vec, vec_to_tril_matrix

__all__ = ["AbsTransform", "AffineTransform", "ComposeTransform",
           "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform",
           "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftplusTransform",
           "TanhTransform", "SoftmaxTransform", "StickBreakingTransform", "Transform",
           "identity_transform"]


def _sum_rightmost(x, n):
    if n <= 0:
        return x
    return x.reshape(tuple(x.shape[:x.dim() - n]) + (-1,)).sum(-1)


class Transform:
    bijective = False
    domain = C.real
    codomain = C.real
    _params = ()

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y = None, None
        self._inv = None
        super().__init__()   # (cooperative, as PyTorch's: pyro's TransformModule is a Module)

    @property
    def event_dim(self):
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        inv = self._inv() if self._inv is not None else None
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = weakref.ref(inv)
        return inv

    @property
    def sign(self):
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return type(self) is type(other) and all(
            getattr(self, k) is getattr(other, k) or _same(getattr(self, k), getattr(other, k))
            for k in self._params)

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape

    def __repr__(self):
        return f"{type(self).__name__}()"


def _same(a, b):
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return bool((_t.as_tensor(a) == _t.as_tensor(b)).all())
    return a == b


class _InverseTransform(Transform):
    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    domain = property(lambda self: self._inv.codomain)
    codomain = property(lambda self: self._inv.domain)
    bijective = property(lambda self: self._inv.bijective)
    sign = property(lambda self: self._inv.sign)
    inv = property(lambda self: self._inv)

    def with_cache(self, cache_size=1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)

    def __repr__(self):
        return f"{type(self).__name__}({self._inv!r})"


def _pointwise(name, codomain, call, inverse, ladj, bijective=True, sign=1, domain=C.real):
    """A parameterless elementwise transform."""
    def log_abs_det_jacobian(self, x, y):
        if ladj is None:
            raise NotImplementedError
        return ladj(x, y)
    body = dict(domain=domain, codomain=codomain, bijective=bijective,
                _call=lambda self, x: call(x), _inverse=lambda self, y: inverse(y),
                log_abs_det_jacobian=log_abs_det_jacobian)
    if sign is not None:
        body["sign"] = sign
    return type(name, (Transform,), body)


def _clipped_sigmoid(x):
    fi = _t.finfo(x.dtype)
    return x.sigmoid().clamp(min=fi.tiny, max=1.0 - fi.eps)


def _logit(y):
    fi = _t.finfo(y.dtype)
    y = y.clamp(min=fi.tiny, max=1.0 - fi.eps)
    return y.log() - (-y).log1p()


ExpTransform = _pointwise("ExpTransform", C.positive, lambda x: x.exp(), lambda y: y.log(),
                          lambda x, y: x)
SigmoidTransform = _pointwise("SigmoidTransform", C.unit_interval, _clipped_sigmoid, _logit,
                              lambda x, y: -F.softplus(-x) - F.softplus(x))
TanhTransform = _pointwise("TanhTransform", C.interval(-1.0, 1.0), lambda x: x.tanh(),
                           lambda y: y.atanh(),
                           lambda x, y: 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x)))
SoftplusTransform = _pointwise("SoftplusTransform", C.positive, lambda x: F.softplus(x),
                               lambda y: (-(-y).expm1()).log() + y,
                               lambda x, y: -F.softplus(-x))
AbsTransform = _pointwise("AbsTransform", C.positive, lambda x: x.abs(), lambda y: y, None,
                          bijective=False, sign=None)
for _cls in (ExpTransform, SigmoidTransform, TanhTransform, SoftplusTransform, AbsTransform):
    _cls.__module__ = __name__


class AffineTransform(Transform):
    bijective = True
    _params = ("loc", "scale", "_event_dim")

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    event_dim = property(lambda self: self._event_dim)
    domain = property(lambda self: C.real if self._event_dim == 0
                      else C.independent(C.real, self._event_dim))
    codomain = domain

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else \
            AffineTransform(self.loc, self.scale, self._event_dim, cache_size)

    @property
    def sign(self):
        if isinstance(self.scale, Tensor):
            return self.scale.sign()
        return (self.scale > 0) - (self.scale < 0)

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = x.shape
        if isinstance(self.scale, Tensor):
            result = self.scale.abs().log()
        else:
            result = _t.full_like(x, math.log(abs(self.scale)))
        if self._event_dim:
            result = _sum_rightmost(result, self._event_dim)
            shape = shape[:-self._event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        return _t.broadcast_shapes(shape, getattr(self.loc, "shape", ()),
                                   getattr(self.scale, "shape", ()))

    inverse_shape = forward_shape


class PowerTransform(Transform):
    domain = codomain = C.positive
    bijective = True
    _params = ("exponent",)

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = _t.broadcast_tensors(_t.as_tensor(exponent))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    sign = property(lambda self: self.exponent.sign())

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return _t.broadcast_shapes(shape, getattr(self.exponent, "shape", ()))

    inverse_shape = forward_shape


class SoftmaxTransform(Transform):
    domain = C.real_vector
    codomain = C.simplex

    def _call(self, x):
        return F.softmax(x, dim=-1)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    inverse_shape = forward_shape


class StickBreakingTransform(Transform):
    """R^K -> the (K+1)-simplex: each coordinate takes a sigmoid share of what is left, shifted
    so that zero maps to the simplex's centre."""
    domain = C.real_vector
    codomain = C.simplex
    bijective = True

    @staticmethod
    def _offset(x):
        k = x.shape[-1]
        return _t.arange(k, 0, -1, dtype=x.dtype).log()    # log(K), ..., log(1)

    def _call(self, x):
        z = _clipped_sigmoid(x - self._offset(x))
        rest = (1 - z).cumprod(-1)
        return F.pad(z, [0, 1], value=1) * F.pad(rest, [1, 0], value=1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        left = (1 - y_crop.cumsum(-1)).clamp(min=_t.finfo(y.dtype).tiny)
        return y_crop.log() - left.log() + self._offset(y_crop)

    def log_abs_det_jacobian(self, x, y):
        x = x - self._offset(x)
        return (-x + F.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] - 1,)


class ReshapeTransform(Transform):
    bijective = True
    _params = ("in_shape", "out_shape")

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape, self.out_shape = Size(in_shape), Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    domain = property(lambda self: C.independent(C.real, len(self.in_shape)))
    codomain = property(lambda self: C.independent(C.real, len(self.out_shape)))

    def _call(self, x):
        return x.reshape(tuple(x.shape[:x.dim() - len(self.in_shape)]) + self.out_shape)

    def _inverse(self, y):
        return y.reshape(tuple(y.shape[:y.dim() - len(self.out_shape)]) + self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        return _t.zeros(tuple(x.shape[:x.dim() - len(self.in_shape)]), dtype=x.dtype)

    def _reshape(self, shape, src, dst):
        if len(shape) < len(src):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(src)
        if tuple(shape[cut:]) != tuple(src):
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {src}")
        return Size(tuple(shape[:cut])) + dst

    def forward_shape(self, shape):
        return self._reshape(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._reshape(shape, self.out_shape, self.in_shape)


class IndependentTransform(Transform):
    _params = ("base_transform", "reinterpreted_batch_ndims")

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)

    domain = property(lambda self: C.independent(self.base_transform.domain,
                                                 self.reinterpreted_batch_ndims))
    codomain = property(lambda self: C.independent(self.base_transform.codomain,
                                                   self.reinterpreted_batch_ndims))
    bijective = property(lambda self: self.base_transform.bijective)
    sign = property(lambda self: self.base_transform.sign)

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                              self.reinterpreted_batch_ndims)

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_transform!r}, " \
               f"{self.reinterpreted_batch_ndims})"


class ComposeTransform(Transform):
    def __init__(self, parts, cache_size=0):
        if cache_size:
            parts = [p.with_cache(cache_size) for p in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else ComposeTransform(self.parts,
                                                                            cache_size)

    def _widen(self, first, last, a, b, parts):
        """The outer constraint of the chain, made independent over enough dimensions."""
        con = getattr(first, a)
        event_dim = getattr(last, b).event_dim
        for p in parts:
            event_dim += getattr(p, a).event_dim - getattr(p, b).event_dim
            event_dim = max(event_dim, getattr(p, a).event_dim)
        return C.independent(con, event_dim - con.event_dim) if event_dim > con.event_dim \
            else con

    @C.dependent_property(is_discrete=False)
    def domain(self):
        if not self.parts:
            return C.real
        return self._widen(self.parts[0], self.parts[-1], "domain", "codomain",
                           reversed(self.parts))

    @C.dependent_property(is_discrete=False)
    def codomain(self):
        if not self.parts:
            return C.real
        return self._widen(self.parts[-1], self.parts[0], "codomain", "domain", self.parts)

    bijective = property(lambda self: all(p.bijective for p in self.parts))

    @property
    def sign(self):
        s = 1
        for p in self.parts:
            s = s * p.sign
        return s

    @property
    def inv(self):
        inv = self._inv() if self._inv is not None else None
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = weakref.ref(inv)
            inv._inv = weakref.ref(self)
        return inv

    def __call__(self, x):
        for p in self.parts:
            x = p(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return _t.zeros_like(x)
        xs = [x]
        for p in self.parts[:-1]:
            xs.append(p(xs[-1]))
        xs.append(y)
        total, event_dim = 0, self.domain.event_dim
        for p, a, b in zip(self.parts, xs[:-1], xs[1:]):
            total = total + _sum_rightmost(p.log_abs_det_jacobian(a, b),
                                           event_dim - p.domain.event_dim)
            event_dim += p.codomain.event_dim - p.domain.event_dim
        return total

    def forward_shape(self, shape):
        for p in self.parts:
            shape = p.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for p in reversed(self.parts):
            shape = p.inverse_shape(shape)
        return shape

    def __repr__(self):
        inner = ",\n    ".join(repr(p) for p in self.parts)
        return f"{type(self).__name__}(\n    {inner}\n)"


identity_transform = ComposeTransform([])


class CumulativeDistributionTransform(Transform):
    bijective = True
    codomain = C.unit_interval
    sign = 1
    _params = ("distribution",)

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)

    domain = property(lambda self: self.distribution.support)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)


class LowerCholeskyTransform(Transform):
    """Unconstrained square matrices -> lower-triangular ones with a positive (exponentiated)
    diagonal."""
    domain = C.independent(C.real, 2)
    codomain = C.lower_cholesky

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """Unconstrained square matrices -> L L^T with L from LowerCholeskyTransform."""
    domain = C.independent(C.real, 2)
    codomain = C.positive_definite

    def _call(self, x):
        low = LowerCholeskyTransform()(x)
        return low @ low.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(_t.linalg.cholesky(y))


class CatTransform(Transform):
    """Applies transforms to consecutive slices (of given lengths) along dim."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.transforms = [t.with_cache(cache_size) for t in tseq]
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise ValueError("lengths and transforms must have the same number of elements")
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    event_dim = property(lambda self: max(t.event_dim for t in self.transforms))
    bijective = property(lambda self: all(t.bijective for t in self.transforms))
    domain = property(lambda self: C.cat([t.domain for t in self.transforms], self.dim,
                                         self.lengths))
    codomain = property(lambda self: C.cat([t.codomain for t in self.transforms], self.dim,
                                           self.lengths))

    def _slices(self, *xs):
        start = 0
        for t, n in zip(self.transforms, self.lengths):
            yield (t,) + tuple(x.narrow(self.dim, start, n) for x in xs)
            start += n

    def _call(self, x):
        return _t.cat([t(a) for t, a in self._slices(x)], self.dim)

    def _inverse(self, y):
        return _t.cat([t.inv(b) for t, b in self._slices(y)], self.dim)

    def log_abs_det_jacobian(self, x, y):
        parts = [_sum_rightmost(t.log_abs_det_jacobian(a, b), self.event_dim - t.event_dim)
                 for t, a, b in self._slices(x, y)]
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        return _t.cat(parts, dim) if dim < 0 else sum(parts)


class StackTransform(Transform):
    """Applies the i-th transform to the i-th slice along dim."""

    def __init__(self, tseq, dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.transforms, self.dim = [t.with_cache(cache_size) for t in tseq], dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    bijective = property(lambda self: all(t.bijective for t in self.transforms))
    domain = property(lambda self: C.stack([t.domain for t in self.transforms], self.dim))
    codomain = property(lambda self: C.stack([t.codomain for t in self.transforms], self.dim))

    def _map(self, f, *xs):
        return _t.stack([f(t, *(x.select(self.dim, i) for x in xs))
                         for i, t in enumerate(self.transforms)], self.dim)

    def _call(self, x):
        return self._map(lambda t, a: t(a), x)

    def _inverse(self, y):
        return self._map(lambda t, b: t.inv(b), y)

    def log_abs_det_jacobian(self, x, y):
        return self._map(lambda t, a, b: t.log_abs_det_jacobian(a, b), x, y)


__all__ += ["LowerCholeskyTransform", "PositiveDefiniteTransform", "CatTransform",
            "StackTransform"]


class CorrCholeskyTransform(Transform):
    """R^(D (D - 1) / 2) -> Cholesky factors of D x D correlation matrices. The vector fills
    the strict lower triangle row by row through tanh, giving partial correlations r_ij in
    (-1, 1); row i is then y_ij = r_ij prod_{k < j} sqrt(1 - r_ik^2) with the rest of the unit
    norm on the diagonal (a signed stick-breaking of each row)."""
    domain = C.real_vector
    codomain = C.corr_cholesky
    bijective = True

    @staticmethod
    def _side(n_vec):
        return round((0.25 + 2 * n_vec) ** 0.5 + 0.5)

    def _call(self, x):
        eps = _t.finfo(x.dtype).eps
        r = vec_to_tril_matrix(x.tanh().clamp(min=-1 + eps, max=1 - eps), diag=-1)
        # prod_{k < j} sqrt(1 - r_ik^2): an exclusive cumulative product along the row
        keep = (1 - r.pow(2)).sqrt()
        left = _t.cat([_t.ones_like(keep[..., :1]), keep[..., :-1]], -1).cumprod(-1)
        return (r + _t.eye(r.shape[-1], dtype=r.dtype, device=r.device)) * left

    @staticmethod
    def _remaining(y):
        """1 - sum_{k < j} y_ik^2, what row i has left before entry j, on the strict lower
        triangle (above it the row is spent and the value is meaningless)."""
        sq = y.pow(2)
        rest = 1 - _t.cat([_t.zeros_like(sq[..., :1]), sq[..., :-1]], -1).cumsum(-1)
        return tril_matrix_to_vec(rest, diag=-1)

    def _inverse(self, y):
        return (tril_matrix_to_vec(y, diag=-1) / self._remaining(y).sqrt()).atanh()

    def log_abs_det_jacobian(self, x, y):
        # d y_ij / d r_ij = sqrt(remaining_ij) (each row's map is triangular), and
        # d r / d x = 1 - tanh(x)^2
        stick = 0.5 * self._remaining(y).log().sum(-1)
        tanh = 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))
        return stick + tanh.sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = self._side(shape[-1])
        if n * (n - 1) // 2 != shape[-1]:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return shape[:-1] + (n, n)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        n = shape[-1]
        return shape[:-2] + (n * (n - 1) // 2,)


__all__ += ["CorrCholeskyTransform"]
