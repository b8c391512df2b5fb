"""biject_to and transform_to: from a constraint to a transform onto it from unconstrained
space (biject_to: a bijection; transform_to: any transform, e.g. softmax for the simplex).
Factories are registered by the constraint's class."""
from . import constraints as C
from . import transforms as T

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    def __init__(self):
        self._registry = {}

    def register(self, constraint, factory=None):
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, C.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, C.Constraint):
            raise TypeError(f"Expected constraint to be either a Constraint subclass or "
                            f"instance, but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(
                f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to, transform_to = ConstraintRegistry(), ConstraintRegistry()


def _both(constraint, factory):
    biject_to.register(constraint, factory)
    transform_to.register(constraint, factory)


_both(C.real, lambda c: T.identity_transform)
# greater_than(0) (positive) included: one factory per constraint class, as PyTorch's
_both(C.positive, lambda c: T.ComposeTransform(
    [T.ExpTransform(), T.AffineTransform(c.lower_bound, 1)]))
_both(C.nonnegative, lambda c: T.ComposeTransform(
    [T.ExpTransform(), T.AffineTransform(c.lower_bound, 1)]))
_both(C.less_than(0.0), lambda c: T.ComposeTransform(
    [T.ExpTransform(), T.AffineTransform(c.upper_bound, -1)]))


def _interval(c):
    if isinstance(c.lower_bound, (int, float)) and isinstance(c.upper_bound, (int, float)) \
            and c.lower_bound == 0 and c.upper_bound == 1:
        return T.SigmoidTransform()
    return T.ComposeTransform([T.SigmoidTransform(),
                               T.AffineTransform(c.lower_bound, c.upper_bound - c.lower_bound)])


_both(C.unit_interval, _interval)
_both(C.half_open_interval(0.0, 1.0), _interval)
biject_to.register(C.independent, lambda c: T.IndependentTransform(
    biject_to(c.base_constraint), c.reinterpreted_batch_ndims))
transform_to.register(C.independent, lambda c: T.IndependentTransform(
    transform_to(c.base_constraint), c.reinterpreted_batch_ndims))
biject_to.register(C.simplex, lambda c: T.StickBreakingTransform())
transform_to.register(C.simplex, lambda c: T.SoftmaxTransform())
transform_to.register(C.lower_cholesky, lambda c: T.LowerCholeskyTransform())
transform_to.register(C.positive_definite, lambda c: T.PositiveDefiniteTransform())
_both(C.corr_cholesky, lambda c: T.CorrCholeskyTransform())
biject_to.register(C.cat([C.real]), lambda c: T.CatTransform(
    [biject_to(x) for x in c.cseq], c.dim, c.lengths))
transform_to.register(C.cat([C.real]), lambda c: T.CatTransform(
    [transform_to(x) for x in c.cseq], c.dim, c.lengths))
biject_to.register(C.stack([C.real]), lambda c: T.StackTransform(
    [biject_to(x) for x in c.cseq], c.dim))
transform_to.register(C.stack([C.real]), lambda c: T.StackTransform(
    [transform_to(x) for x in c.cseq], c.dim))
