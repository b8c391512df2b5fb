"""torch.distributions.one_hot_categorical: PyTorch's module of OneHotCategorical, OneHotCategoricalStraightThrough (defined in discrete.py)."""
from .discrete import OneHotCategorical, OneHotCategoricalStraightThrough

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]
