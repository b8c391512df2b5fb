"""torch.distributions: the Distribution base with argument validation, constraints, the KL
registry, transforms, and the families (continuous.py, gamma.py, discrete.py, transformed.py and
one module per remaining family). Every
density, entropy and reparameterised sample is written in ndgrad ops, so it differentiates to
any order; draws come from ndgrad's generator, so they differ from PyTorch's for a seed."""
from . import constraints, kl, utils
from .distribution import Distribution, ExponentialFamily
from .kl import kl_divergence, register_kl
from .continuous import (Normal, Uniform, Exponential, Laplace, Cauchy, Gumbel, HalfNormal,
                         LogNormal, StudentT)
from .gamma import Gamma, Chi2, Beta, Dirichlet, FisherSnedecor
from . import gamma
from .discrete import (Bernoulli, Categorical, OneHotCategorical, Geometric, Poisson, Binomial,
                       OneHotCategoricalStraightThrough, NegativeBinomial)
from .multinomial import Multinomial
from .independent import Independent
from . import transforms
from .transforms import *  # noqa: F401,F403
from .multivariate_normal import MultivariateNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .wishart import Wishart
from .lkj_cholesky import LKJCholesky
from .mixture_same_family import MixtureSameFamily
from . import relaxed_bernoulli, relaxed_categorical
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from . import kl_cross  # noqa: F401   (registers the cross-family KL pairs)
from .constraint_registry import biject_to, transform_to
from .transformed import (TransformedDistribution, LogisticNormal, Pareto, Weibull, HalfCauchy,
                          InverseGamma)
from . import continuous_bernoulli, generalized_pareto, kumaraswamy, von_mises
from .continuous_bernoulli import ContinuousBernoulli
from .generalized_pareto import GeneralizedPareto
from .kumaraswamy import Kumaraswamy
from .von_mises import VonMises

__all__ = [
    "Distribution", "ExponentialFamily", "kl_divergence", "register_kl", "constraints",
    "transforms", "biject_to", "transform_to",
    # continuous
    "Normal", "Uniform", "Exponential", "Laplace", "Cauchy", "Gumbel", "HalfNormal", "LogNormal",
    "StudentT", "Gamma", "Chi2", "Beta", "Dirichlet", "FisherSnedecor", "Pareto", "Weibull",
    "HalfCauchy", "InverseGamma", "MultivariateNormal", "LogisticNormal", "RelaxedBernoulli",
    "RelaxedOneHotCategorical", "ContinuousBernoulli", "GeneralizedPareto", "Kumaraswamy",
    "VonMises",
    # discrete
    "Bernoulli", "Categorical", "OneHotCategorical", "OneHotCategoricalStraightThrough",
    "Geometric", "Poisson", "Binomial", "NegativeBinomial", "Multinomial",
    # wrappers
    "Independent", "TransformedDistribution", "MixtureSameFamily",
    # matrix-variate and low-rank
    "LowRankMultivariateNormal", "Wishart", "LKJCholesky",
] + transforms.__all__


def _signature_docstrings():
    # Every public class gets a docstring (its constructor's signature) where it has none:
    # libraries derive their own docs from these (pyro concatenates the torch class's __doc__).
    import inspect
    for name in __all__:
        cls = globals().get(name)
        if isinstance(cls, type) and cls.__doc__ is None:
            try:
                sig = str(inspect.signature(cls))
            except (TypeError, ValueError):
                sig = "(...)"
            cls.__doc__ = f"\n    {name}{sig}\n"


_signature_docstrings()
