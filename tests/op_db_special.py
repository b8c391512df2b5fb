"""Op table: torch.special's differentiable functions (forward and gradients vs PyTorch,
float64 gradcheck and gradgradcheck: tests/test_op_db.py). Accuracy against SciPy, the
non-differentiable functions and the errors: tests/test_special.py."""
import numpy as np

from op_db import OpCase, register

U = [((3, 4),), ((),), ((0, 3),), ((2, 1, 3),)]          # unary: matrix, 0-d, empty, 3-d
B = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((), (2, 3)), ((2, 3, 4), (4,)), ((0, 3), (1,))]


def S(name, shapes=U, fn=None, **kw):
    """A torch.special case (grad_fn names compared with PyTorch's)."""
    kw.setdefault("check_node_name", True)
    if fn is None:
        def fn(L, *a, **k):
            return getattr(L.special, name)(*a, **k)
    return OpCase("special_" + name, shapes, fn=fn, **kw)


def _const(L, v, like):
    return L.tensor(v, dtype=like.dtype)


register(
    S("erfcx", domain=(-3.0, 3.0)),
    S("ndtr", domain=(-3.0, 3.0), check_node_name=False),  # (PyTorch composes: MulBackward1)
    S("log_ndtr", domain=(-6.0, 3.0)),
    S("ndtri", domain=(0.05, 0.95)),
    S("entr", domain=(0.1, 3.0)),
    S("i0e", domain=(-4.0, 4.0)),
    S("i1", domain=(-4.0, 4.0)),
    S("i1e", domain=(-4.0, 4.0)),
    S("xlog1py", B, domain=((-2.0, 2.0), (-0.5, 2.0))),
    S("xlogy", B, domain=((-2.0, 2.0), (0.1, 2.0))),
    S("erfinv", domain=(-0.9, 0.9)),
    S("erf"), S("erfc"), S("expit"), S("exp2"), S("expm1"), S("log1p", domain=(-0.5, 2.0)),
    S("gammaln", domain=(0.2, 4.0)),
    S("digamma", domain=(0.3, 4.0)),
    S("psi", domain=(0.3, 4.0)),
    S("polygamma_2", fn=lambda L, x: L.special.polygamma(2, x), domain=(0.5, 4.0)),
    S("multigammaln", fn=lambda L, x: L.special.multigammaln(x, 3), domain=(1.2, 4.0),
      check_node_name=False),  # (composed of lgamma, as before)
    S("logit", domain=(0.1, 0.9)),
    S("logit_eps", fn=lambda L, x: L.special.logit(x, eps=0.2), domain=(0.05, 0.95),
      gradgrad=False),
    S("sinc", domain=(0.2, 2.0)),
    S("logsumexp", fn=lambda L, x: L.special.logsumexp(x, -1), shapes=[((3, 4),), ((),), ((2, 0),)],
      check_node_name=False),
    S("softmax", fn=lambda L, x: L.special.softmax(x, -1), shapes=[((3, 4),), ((),), ((0, 3),)],
      check_node_name=False),
    S("log_softmax", fn=lambda L, x: L.special.log_softmax(x, 0),
      shapes=[((3, 4),), ((),), ((0, 3),)], check_node_name=False),
    # the inputs PyTorch derives: x of gammainc/gammaincc, q of zeta
    S("gammainc", fn=lambda L, x: L.special.gammainc(_const(L, [[0.7], [2.5], [4.0]], x), x),
      shapes=[((3, 4),), ((),), ((3, 0),)], domain=(0.2, 5.0)),
    S("gammaincc", fn=lambda L, x: L.special.gammaincc(_const(L, 1.7, x), x),
      shapes=[((3, 4),), ((),), ((3, 0),)], domain=(0.2, 5.0)),
    S("zeta", fn=lambda L, q: L.special.zeta(_const(L, [[2.5], [3.0], [4.5]], q), q),
      shapes=[((3, 4),), ((),), ((3, 0),)], domain=(0.5, 3.0)),
)
