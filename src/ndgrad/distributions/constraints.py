"""torch.distributions.constraints: each constraint is a small object whose check(value) returns
a bool tensor over the batch (event_dim trailing dimensions are reduced). repr as PyTorch's."""
import ndgrad as _t

__all__ = ["Constraint", "MixtureSameFamilyConstraint", "boolean", "cat", "corr_cholesky",
           "dependent", "dependent_property",
           "greater_than", "greater_than_eq", "independent", "integer_interval", "interval",
           "half_open_interval", "is_dependent", "less_than", "lower_cholesky",
           "lower_triangular", "multinomial", "nonnegative", "nonnegative_integer", "one_hot",
           "positive", "positive_semidefinite", "positive_definite", "positive_integer", "real",
           "real_vector", "simplex", "square", "stack", "symmetric", "unit_interval"]


class Constraint:
    is_discrete = False
    event_dim = 0
    _fields = ()

    def check(self, value):
        raise NotImplementedError

    def __repr__(self):
        args = ", ".join(f"{k}={getattr(self, k)}" for k in self._fields)
        return f"{type(self).__name__[1:]}({args})"


class _Dependent(Constraint):
    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete, self._event_dim = is_discrete, event_dim

    @property
    def is_discrete(self):
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self):
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _Pointwise(Constraint):
    """A constraint given by a pointwise predicate on the value."""

    def __init__(self, test, discrete=False, fields=(), **attrs):
        self._test, self.is_discrete, self._fields = test, discrete, fields
        self.__dict__.update(attrs)

    def check(self, value):
        return self._test(self, value)


def _kind(name, test, discrete=False, fields=()):
    cls = type(name, (_Pointwise,), {})

    def make(*args):
        return cls(test, discrete, fields, **dict(zip(fields, args)))
    make.cls = cls
    return make


_is_int = lambda v: v % 1 == 0  # noqa: E731
_boolean = _kind("_Boolean", lambda c, v: (v == 0) | (v == 1), True)
_integer_interval = _kind("_IntegerInterval", lambda c, v: _is_int(v) & (c.lower_bound <= v)
                          & (v <= c.upper_bound), True, ("lower_bound", "upper_bound"))
_integer_less_than = _kind("_IntegerLessThan", lambda c, v: _is_int(v) & (v <= c.upper_bound),
                           True, ("upper_bound",))
_integer_greater_than = _kind("_IntegerGreaterThan",
                              lambda c, v: _is_int(v) & (v >= c.lower_bound), True,
                              ("lower_bound",))
_real = _kind("_Real", lambda c, v: v == v)
greater_than = _kind("_GreaterThan", lambda c, v: c.lower_bound < v, fields=("lower_bound",))
greater_than_eq = _kind("_GreaterThanEq", lambda c, v: c.lower_bound <= v,
                        fields=("lower_bound",))
less_than = _kind("_LessThan", lambda c, v: v < c.upper_bound, fields=("upper_bound",))
interval = _kind("_Interval", lambda c, v: (c.lower_bound <= v) & (v <= c.upper_bound),
                 fields=("lower_bound", "upper_bound"))
half_open_interval = _kind("_HalfOpenInterval",
                           lambda c, v: (c.lower_bound <= v) & (v < c.upper_bound),
                           fields=("lower_bound", "upper_bound"))


class _IndependentConstraint(Constraint):
    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        self.base_constraint, self.reinterpreted_batch_ndims = (base_constraint,
                                                                reinterpreted_batch_ndims)

    is_discrete = property(lambda self: self.base_constraint.is_discrete)
    event_dim = property(lambda self: self.base_constraint.event_dim
                         + self.reinterpreted_batch_ndims)

    def check(self, value):
        result = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if result.dim() < n:
            expected = self.base_constraint.event_dim + n
            raise ValueError(f"Expected value.dim() >= {expected} but got {value.dim()}")
        return result.reshape(tuple(result.shape[:result.dim() - n]) + (-1,)).all(-1)

    def __repr__(self):
        return f"{type(self).__name__[1:]}({self.base_constraint!r}, " \
               f"{self.reinterpreted_batch_ndims})"


class _EventConstraint(Constraint):
    """A constraint on the trailing event_dim dimensions, given by a function of the value."""

    def check(self, value):
        return self._test(value)


def _Event(name, event_dim, test, discrete=False):
    """One instance of a new class _<name> (so registries can key on the class)."""
    cls = type("_" + name, (_EventConstraint,), dict(
        event_dim=event_dim, is_discrete=discrete, _test=staticmethod(test)))
    return cls()


def _lower(v):
    return (v.tril() == v).reshape(tuple(v.shape[:-2]) + (-1,)).all(-1)


def _lower_chol(v):
    return _lower(v) & (v.diagonal(dim1=-2, dim2=-1) > 0).all(-1)


def _corr_chol(v):
    tol = _t.finfo(v.dtype).eps * v.size(-1) * 10
    row_norm = _t.linalg.norm(v.detach(), dim=-1)
    return _lower_chol(v) & ((row_norm - 1.0).abs() <= tol).all(-1)


def _square(v):
    return _t.full(tuple(v.shape[:-2]), v.shape[-2] == v.shape[-1], dtype=_t.bool)


def _symmetric(v):
    sq = _square(v)
    if not sq.all():
        return sq
    return _t.isclose(v, v.mT, atol=1e-6).all(-2).all(-1)


def _psd(v):
    s = _symmetric(v)
    return s if not s.all() else (_t.linalg.eigvalsh(v) >= 0).all(-1)


def _pd(v):
    s = _symmetric(v)
    return s if not s.all() else _t.linalg.cholesky_ex(v).info == 0


class _Multinomial(Constraint):
    is_discrete, event_dim, _fields = True, 1, ()

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        return (x >= 0).all(-1) & (x.sum(-1) <= self.upper_bound)


class _Cat(Constraint):
    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq, self.dim = list(cseq), dim
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise ValueError("lengths and cseq must have the same number of elements")

    is_discrete = property(lambda self: any(c.is_discrete for c in self.cseq))
    event_dim = property(lambda self: max(c.event_dim for c in self.cseq))

    def check(self, value):
        out, start = [], 0
        for c, n in zip(self.cseq, self.lengths):
            out.append(c.check(value.narrow(self.dim, start, n)))
            start += n
        return _t.cat(out, self.dim)


class _Stack(Constraint):
    def __init__(self, cseq, dim=0):
        self.cseq, self.dim = list(cseq), dim

    is_discrete = property(lambda self: any(c.is_discrete for c in self.cseq))

    @property
    def event_dim(self):
        d = max(c.event_dim for c in self.cseq)
        return d + 1 if self.dim + d < 0 else d

    def check(self, value):
        parts = [value.select(self.dim, i) for i in range(value.size(self.dim))]
        return _t.stack([c.check(p) for c, p in zip(self.cseq, parts)], self.dim)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _boolean()
one_hot = _Event("OneHot", 1, lambda v: ((v == 0) | (v == 1)).all(-1) & (v.sum(-1) == 1), True)
nonnegative_integer = _integer_greater_than(0)
positive_integer = _integer_greater_than(1)
integer_interval = _integer_interval
real = _real()
real_vector = independent(real, 1)
positive = greater_than(0.0)
nonnegative = greater_than_eq(0.0)
unit_interval = interval(0.0, 1.0)
simplex = _Event("Simplex", 1, lambda v: (v >= 0).all(-1) & ((v.sum(-1) - 1).abs() < 1e-6))
lower_triangular = _Event("LowerTriangular", 2, _lower)
lower_cholesky = _Event("LowerCholesky", 2, _lower_chol)
corr_cholesky = _Event("CorrCholesky", 2, _corr_chol)
square = _Event("Square", 2, _square)
symmetric = _Event("Symmetric", 2, _symmetric)
positive_semidefinite = _Event("PositiveSemidefinite", 2, _psd)
positive_definite = _Event("PositiveDefinite", 2, _pd)
multinomial = _Multinomial
cat = _Cat
stack = _Stack


def __getattr__(name):
    if name == "MixtureSameFamilyConstraint":
        from .mixture_same_family import _MixtureSameFamilyConstraint
        return _MixtureSameFamilyConstraint
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"MixtureSameFamilyConstraint"})
