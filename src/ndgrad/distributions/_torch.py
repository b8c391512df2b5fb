"""The torch-level names the distributions call (`_t.where`, `_t.linalg.cholesky`, ...), taken
from the layers below them: the distributions sit above the ops, creation and autograd, and the
package namespace (`ndgrad/__init__`) imports the distributions, so they never import it."""
from .. import autograd, linalg, special  # noqa: F401
from ..nn.functional import one_hot  # noqa: F401
from .._dtype import finfo, float, float32, float64, bool, long, get_default_dtype  # noqa: F401
from .._tensor import Tensor  # noqa: F401
from .._creation import (full, arange, zeros_like, randn, rand, eye, tensor, ones_like,  # noqa: F401
                         full_like, as_tensor, zeros, poisson, ones, multinomial, binomial,
                         bernoulli)
from ..autograd.grad_mode import enable_grad, no_grad  # noqa: F401
from ..functional import broadcast_tensors  # noqa: F401
from ..ops.pointwise import where, xlogy, mvlgamma, isclose  # noqa: F401
from ..ops.shape import broadcast_shapes, cat, stack, flip  # noqa: F401
from ..ops.linalg import tril_indices, cholesky_solve  # noqa: F401
