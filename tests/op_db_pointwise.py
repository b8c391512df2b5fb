"""Op table: elementwise, comparison/logic, reductions and activations (issue 3, part A).
Run by tests/test_op_db.py (forward, gradcheck/gradgradcheck, gradients vs PyTorch)."""
import math

import numpy as np

from op_db import OpCase, register

INT = ("float64", "float32", "int64")
FLOAT = ("float64", "float32")

U = [((3, 4),), ((),), ((0, 3),), ((2, 1, 3),)]          # unary: matrix, 0-d, empty, 3-d
B = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((), (2, 3)), ((2, 3, 4), (4,)), ((0, 3), (1,))]
T = [((3, 4), (3, 4), (3, 4)), ((3, 1), (1, 4), (4,)), ((), (2,), ()), ((0, 3), (1, 3), ())]


def P(name, shapes, **kw):
    """A case whose grad_fn names are also compared with PyTorch's."""
    kw.setdefault("check_node_name", True)
    return OpCase(name, shapes, **kw)


def _F(name):
    """ndgrad.ops.activation.<name> vs torch.nn.functional.<name>."""
    def fn(L, *a, **k):
        if L.__name__ == "torch":
            return getattr(L.nn.functional, name)(*a, **k)
        from ndgrad.ops import activation
        return getattr(activation, name)(*a, **k)
    return fn


def _special(*values):
    """make_inputs: the given values, tiled with random ones into a (3, 4) matrix."""
    def make(rng, shapes):
        out = []
        for s in shapes:
            a = rng.uniform(-2, 2, size=s)
            flat = a.reshape(-1)
            flat[:len(values)] = values[:flat.size]
            out.append(a)
        return out
    return make


def _rounded(rng, shapes):
    """Small half-integers, so comparisons see ties."""
    return [np.round(rng.uniform(-2, 2, size=s) * 2) / 2 for s in shapes]


_INF, _NAN = math.inf, math.nan

# ---------------------------------------------------------------- unary
register(
    P("abs", U, dtypes=INT),
    P("neg", U, dtypes=INT),
    P("sign", U, dtypes=INT),
    P("sgn", U, dtypes=INT),
    P("exp", U, dtypes=INT),
    P("exp2", U, dtypes=INT),
    P("expm1", U, dtypes=INT),
    P("log", U, dtypes=INT, domain=(0.5, 2.0)),
    P("log2", U, dtypes=INT, domain=(0.5, 2.0)),
    P("log10", U, dtypes=INT, domain=(0.5, 2.0)),
    P("log1p", U, dtypes=INT, domain=(-0.5, 2.0)),
    P("sqrt", U, dtypes=INT, domain=(0.5, 2.0)),
    P("rsqrt", U, dtypes=FLOAT, domain=(0.5, 2.0)),
    P("square", U, dtypes=INT),
    P("reciprocal", U, dtypes=FLOAT, domain=(0.5, 2.0)),
    P("reciprocal_neg", U, fn=lambda L, x: L.reciprocal(x), domain=(-2.0, -0.5)),
    P("sin", U, dtypes=INT),
    P("cos", U, dtypes=INT),
    P("tan", U, dtypes=FLOAT, domain=(-1.2, 1.2)),
    P("asin", U, dtypes=FLOAT, domain=(-0.9, 0.9)),
    P("acos", U, dtypes=FLOAT, domain=(-0.9, 0.9)),
    P("atan", U, dtypes=INT),
    P("sinh", U, dtypes=INT),
    P("cosh", U, dtypes=INT),
    P("tanh", U, dtypes=INT),
    P("asinh", U, dtypes=INT),
    P("acosh", U, dtypes=FLOAT, domain=(1.2, 3.0)),
    P("atanh", U, dtypes=FLOAT, domain=(-0.9, 0.9)),
    P("arcsin", U, domain=(-0.9, 0.9)),
    P("aliases", [((3, 4), (3, 4)), ((), (3,)), ((0, 3), (3,))], domain=[(-2, 2), (0.5, 2)],
      fn=lambda L, x, y: (L.subtract(x, y), L.multiply(x, y), L.divide(x, y), L.negative(x),
                          L.positive(x) * 1, L.arccos(x * 0.4), L.arctan(x), L.arcsinh(x),
                          L.arccosh(x * x + 1.5), L.arctanh(x * 0.4), L.absolute(x))),
    P("arctan2", B),
    P("sigmoid", U, dtypes=INT),
    P("sigmoid_large", [((5,),)], fn=lambda L, x: L.sigmoid(x * 400), dtypes=FLOAT),
    P("logit", U, dtypes=FLOAT, domain=(0.1, 0.9)),
    P("logit_eps", U[:2], kwargs=[dict(eps=0.2), dict(eps=1e-3)], domain=(0.05, 0.95),
      fn=lambda L, x, **k: L.logit(x, **k)),
    P("relu", U, dtypes=INT),
    P("erf", U, dtypes=INT),
    P("erfc", U, dtypes=INT),
    P("erf_wide", [((20,),)], fn=lambda L, x: L.erf(x), domain=(-6.0, 6.0)),
    P("erfinv", U, dtypes=FLOAT, domain=(-0.9, 0.9)),
    P("lgamma", U, dtypes=FLOAT, domain=(0.3, 4.0), rtol=1e-6),
    P("lgamma_neg", [((6,),)], fn=lambda L, x: L.lgamma(x), domain=(-2.9, -2.1), rtol=1e-6),
    P("digamma", U, dtypes=FLOAT, domain=(0.3, 4.0), rtol=1e-6),
    P("digamma_neg", [((6,),)], fn=lambda L, x: L.digamma(x), domain=(-1.9, -1.1), rtol=1e-6),
    P("polygamma", U[:3], kwargs=[dict(n=1), dict(n=2), dict(n=3)],
      fn=lambda L, x, n: L.polygamma(n, x), domain=(0.3, 4.0), rtol=1e-6, gradgrad=False),
    P("polygamma_method", [((5,),)], fn=lambda L, x: x.polygamma(1), domain=(0.5, 3.0),
      rtol=1e-6),
    P("floor", U, dtypes=INT),
    P("ceil", U, dtypes=INT),
    P("trunc", U, dtypes=INT),
    P("fix", U, dtypes=INT),
    P("frac", U, dtypes=FLOAT),
    P("round", U, dtypes=INT),
    P("round_decimals", U[:2], kwargs=[dict(decimals=1), dict(decimals=2), dict(decimals=-1)],
      dtypes=FLOAT, fn=lambda L, x, **k: L.round(x * 10, **k)),
    P("clamp", U, kwargs=[dict(min=-0.5, max=0.5), dict(min=-0.5), dict(max=0.3),
                          dict(min=0.5, max=-0.5)], dtypes=INT),
    P("clamp_positional", U[:1], fn=lambda L, x: L.clamp(x, -1, 1), dtypes=INT),
    P("clip", U, fn=lambda L, x: L.clip(x, -0.5, 0.5)),
    P("clamp_tensor", T[:2], fn=lambda L, x, lo, hi: L.clamp(x, lo, hi - 0.5),
      domain=[(-2, 2), (-2, 0), (0, 2)]),
    P("clamp_tensor_crossed", T[:1], fn=lambda L, x, lo, hi: L.clamp(x, lo, hi)),
    P("clamp_tensor_min", B, fn=lambda L, x, lo: L.clamp(x, min=lo)),
    P("clamp_tensor_max", B, fn=lambda L, x, hi: L.clamp(x, max=hi)),
    P("clamp_min", U[:2], args=(0.2,)),
    P("clamp_max", U[:2], args=(0.2,)),
    P("clamp_min_tensor", B[:3], fn=lambda L, x, y: L.clamp_min(x, y)),
    P("clamp_max_tensor", B[:3], fn=lambda L, x, y: L.clamp_max(x, y)),
    P("clamp_method", U[:1], fn=lambda L, x: x.clamp(min=0.0)),
    P("nan_to_num", [((3, 4),)], make_inputs=_special(_NAN, _INF, -_INF, 1.0),
      kwargs=[dict(), dict(nan=1.5), dict(posinf=5.0, neginf=-5.0)], dtypes=FLOAT),
    P("nan_to_num_plain", U, fn=lambda L, x: L.nan_to_num(x)),
)

# ---------------------------------------------------------------- binary
register(
    P("add", B, dtypes=INT),
    P("add_alpha", B, fn=lambda L, x, y: L.add(x, y, alpha=2.5)),
    P("add_scalar", U, fn=lambda L, x: L.add(x, 3), dtypes=INT),
    P("radd", U, fn=lambda L, x: 1.5 + x, dtypes=INT),
    P("sub", B, dtypes=INT),
    P("sub_alpha", B[:3], fn=lambda L, x, y: L.sub(x, y, alpha=-2)),
    P("rsub", U, fn=lambda L, x: 2.0 - x),
    P("mul", B, dtypes=INT),
    P("mul_scalar", U, fn=lambda L, x: x * 2.5, dtypes=INT),
    P("div", B, dtypes=INT, domain=[(-2, 2), (0.5, 2)]),
    P("div_rounding", B, kwargs=[dict(rounding_mode="trunc"), dict(rounding_mode="floor")],
      dtypes=INT, domain=[(-3, 3), (0.5, 2)], fn=lambda L, x, y, **k: L.div(x, y, **k)),
    P("rdiv", U, fn=lambda L, x: 2.0 / x, domain=(0.5, 2.0)),
    P("true_divide", B, dtypes=INT, domain=[(-2, 2), (0.5, 2)]),
    P("floor_divide", B[:3], dtypes=INT, domain=[(-3, 3), (0.5, 2)], grad=False),
    P("remainder", B, dtypes=INT, domain=[(-3, 3), (0.7, 2)]),
    P("remainder_scalar", U, fn=lambda L, x: L.remainder(x, 0.75), dtypes=FLOAT),
    P("remainder_neg", B[:2], fn=lambda L, x, y: L.remainder(x, -y), domain=[(-3, 3), (0.7, 2)]),
    P("mod_operator", B, fn=lambda L, x, y: x % y, domain=[(-3, 3), (0.7, 2)]),
    P("fmod", B, dtypes=INT, domain=[(-3, 3), (0.7, 2)]),
    P("fmod_scalar", U, fn=lambda L, x: L.fmod(x, -0.75), dtypes=FLOAT),
    P("pow", B, dtypes=FLOAT, domain=[(0.5, 2), (-2, 2)]),
    P("pow_int", [((3, 4), (3, 4))], fn=lambda L, x, y: L.pow(x, y), int_inputs=(0, 1),
      int_range=(0, 4), grad=False),
    P("pow_int_negative", [((3, 4), (3, 4))], fn=lambda L, x, y: L.pow(x, y - 2),
      int_inputs=(0, 1), int_range=(-2, 3), grad=False),
    P("pow_scalar", U, kwargs=[dict(e=2), dict(e=3), dict(e=0.5), dict(e=-1.5), dict(e=0),
                               dict(e=1)], dtypes=FLOAT, domain=(0.5, 2),
      fn=lambda L, x, e: L.pow(x, e)),
    P("pow_operator", U[:2], fn=lambda L, x: x ** 2, dtypes=INT),
    P("rpow", U, fn=lambda L, x: 2.5 ** x, dtypes=INT),
    P("rpow_tensor_base", U[:2], fn=lambda L, x: L.pow(0.5, x)),
    P("float_power", B, domain=[(0.5, 2), (-2, 2)], dtypes=INT),
    P("maximum", B, dtypes=INT),
    P("minimum", B, dtypes=INT),
    P("maximum_ties", [((3, 4), (3, 4))], make_inputs=_rounded, gradcheck=False,
      fn=lambda L, x, y: L.maximum(x, y)),
    P("minimum_ties", [((3, 4), (3, 1))], make_inputs=_rounded, gradcheck=False,
      fn=lambda L, x, y: L.minimum(x, y)),
    P("fmax", B, dtypes=INT),
    P("fmin", B, dtypes=INT),
    P("fmax_nan", [((3, 4), (3, 4))], make_inputs=_special(_NAN, 1.0), gradcheck=False,
      fn=lambda L, x, y: L.fmax(x, y)),
    P("maximum_nan", [((3, 4), (3, 4))], make_inputs=_special(_NAN, 1.0), grad=False,
      fn=lambda L, x, y: L.maximum(x, y)),
    P("atan2", B, dtypes=INT),
    P("hypot", B, dtypes=FLOAT),
    P("lerp", B, kwargs=[dict(w=0.3), dict(w=0.8), dict(w=-0.5)],
      fn=lambda L, x, y, w: L.lerp(x, y, w), dtypes=FLOAT),
    P("lerp_tensor", T, fn=lambda L, x, y, w: L.lerp(x, y, w), domain=[(-2, 2), (-2, 2), (0, 1)]),
    P("addcmul", T, kwargs=[dict(), dict(value=-0.5)],
      fn=lambda L, x, a, b, **k: L.addcmul(x, a, b, **k), dtypes=INT),
    P("addcdiv", T, kwargs=[dict(), dict(value=2)], domain=[(-2, 2), (-2, 2), (0.5, 2)],
      fn=lambda L, x, a, b, **k: L.addcdiv(x, a, b, **k), dtypes=FLOAT),
    P("where", T, fn=lambda L, c, x, y: L.where(c > 0, x, y)),
    P("where_scalar", B[:3], fn=lambda L, c, x: L.where(c > 0, x, 0.5)),
    P("where_method", B[:2], fn=lambda L, x, y: x.where(x > y, y)),
    P("copysign", B, dtypes=INT),
    P("copysign_scalar", U, fn=lambda L, x: L.copysign(x, -1.0), dtypes=INT),
    P("xlogy", B, dtypes=FLOAT, domain=[(-2, 2), (0.5, 2)]),
    P("xlogy_zero", [((3, 4), (3, 4))], make_inputs=lambda rng, s: [
        np.where(rng.uniform(size=s[0]) > 0.5, 0.0, rng.uniform(-2, 2, s[0])),
        rng.uniform(0.5, 2, s[1])], fn=lambda L, x, y: L.xlogy(x, y)),
    P("xlogy_scalar_self", U[:2], fn=lambda L, y: L.xlogy(2.0, y), domain=(0.5, 2)),
    P("xlogy_scalar_other", U[:2], fn=lambda L, x: L.xlogy(x, 3.0)),
)

# ---------------------------------------------------------------- comparison and logic
NG = dict(grad=False, dtypes=INT, make_inputs=_rounded)
register(*[OpCase(n, B, **NG) for n in ("eq", "ne", "lt", "le", "gt", "ge", "greater",
                                         "greater_equal", "less", "less_equal", "not_equal")])
register(
    OpCase("eq_scalar", U, fn=lambda L, x: x == 0.5, **NG),
    OpCase("lt_operator", B, fn=lambda L, x, y: x < y, **NG),
    OpCase("isclose", [((3, 4), (3, 4))], fn=lambda L, x, y: L.isclose(x, x + y * 1e-6),
           grad=False, dtypes=FLOAT),
    OpCase("isclose_kw", [((3, 4), (3, 4))], kwargs=[dict(rtol=0.1, atol=0.5), dict(atol=0.0)],
           fn=lambda L, x, y, **k: L.isclose(x, y, **k), grad=False, make_inputs=_rounded),
    OpCase("isclose_nan", [((3, 4),)], kwargs=[dict(), dict(equal_nan=True)],
           fn=lambda L, x, **k: L.isclose(x, x, **k), grad=False,
           make_inputs=_special(_NAN, _INF)),
    OpCase("allclose", [((3, 4), (3, 4))], kwargs=[dict(), dict(atol=10.0)],
           fn=lambda L, x, y, **k: L.allclose(x, y, **k), grad=False),
    OpCase("allclose_same", [((3, 4),)], fn=lambda L, x: L.allclose(x, x * (1 + 1e-7)),
           grad=False),
    OpCase("equal", [((3, 4), (3, 4))], fn=lambda L, x, y: (L.equal(x, y), L.equal(x, x),
                                                             L.equal(x, x[:1])), grad=False),
    OpCase("logical_and", B, **NG),
    OpCase("logical_or", B, **NG),
    OpCase("logical_xor", B, **NG),
    OpCase("logical_not", U, **NG),
    OpCase("isreal", U, **NG),
    OpCase("isnan", [((3, 4),)], make_inputs=_special(_NAN, _INF, -_INF), grad=False,
           dtypes=INT),
    OpCase("isinf", [((3, 4),)], make_inputs=_special(_NAN, _INF, -_INF), grad=False,
           dtypes=INT),
    OpCase("isfinite", [((3, 4),)], make_inputs=_special(_NAN, _INF, -_INF), grad=False,
           dtypes=INT),
    OpCase("isposinf", [((3, 4),)], make_inputs=_special(_NAN, _INF, -_INF), grad=False,
           dtypes=INT),
    OpCase("isneginf", [((3, 4),)], make_inputs=_special(_NAN, _INF, -_INF), grad=False,
           dtypes=INT),
)
BI = dict(grad=False, int_inputs=(0, 1), int_range=(-8, 8))
register(
    OpCase("bitwise_and", B[:4], **BI),
    OpCase("bitwise_or", B[:4], **BI),
    OpCase("bitwise_xor", B[:4], **BI),
    OpCase("bitwise_not", U, grad=False, int_inputs=(0,), int_range=(-8, 8)),
    OpCase("bitwise_bool", B[:2], fn=lambda L, x, y: (L.bitwise_and(x > 0, y > 0),
                                                      L.bitwise_or(x > 0, y > 0),
                                                      L.bitwise_xor(x > 0, y > 0),
                                                      L.bitwise_not(x > 0)), **BI),
    OpCase("bitwise_operators", B[:2], fn=lambda L, x, y: (x & y, x | y, x ^ y, ~x, ~(x > 0)),
           **BI),
    OpCase("bitwise_left_shift", B[:3], grad=False, int_inputs=(0, 1), int_range=(0, 5)),
    OpCase("bitwise_right_shift", B[:3], grad=False, int_inputs=(0, 1), int_range=(-40, 40),
           fn=lambda L, x, y: L.bitwise_right_shift(x, L.abs(y) // 8)),
    OpCase("shift_operators", B[:2], fn=lambda L, x, y: (x << 2, x >> 1), **BI),
)

# ---------------------------------------------------------------- reductions
ND = [((3, 4),), ((2, 3, 4),)]
Z = [((),)]
E = [((0, 3),)]


def red(name, kwargs_nd, kwargs_0d=(dict(),), kwargs_empty=None, fn=None, **kw):
    """A reduction on 2-d/3-d inputs, on a 0-d input, and (optionally) on an empty one."""
    fn = fn or (lambda L, x, **k: getattr(L, name)(x, **k))
    cases = [P(name, ND, kwargs=list(kwargs_nd), fn=fn, **kw),
             P(name + "_0d", Z, kwargs=list(kwargs_0d), fn=fn, **kw)]
    if kwargs_empty:
        cases.append(P(name + "_empty", E, kwargs=list(kwargs_empty), fn=fn, **kw))
    return cases


DIMS = [dict(), dict(dim=1), dict(dim=-1, keepdim=True), dict(dim=(0, -1)), dict(dim=[0])]
DIMS0 = [dict(), dict(dim=0), dict(dim=-1, keepdim=True)]
register(
    *red("sum", DIMS, DIMS0, [dict(), dict(dim=0), dict(dim=1, keepdim=True)], dtypes=INT),
    P("sum_dtype", ND[:1], fn=lambda L, x: L.sum(x, dtype=L.float64), dtypes=INT),
    P("sum_bool", ND[:1], fn=lambda L, x: (x > 0).sum(1), grad=False),
    *red("nansum", DIMS[:3], DIMS0, [dict(), dict(dim=1)]),
    P("nansum_nan", [((3, 4),)], make_inputs=_special(_NAN, 1.0, _NAN),
      kwargs=[dict(), dict(dim=1)], fn=lambda L, x, **k: L.nansum(x, **k), gradcheck=False),
    *red("mean", DIMS, DIMS0, [dict(dim=1)], dtypes=FLOAT),
    P("mean_dtype", ND[:1], fn=lambda L, x: L.mean(x, 0, dtype=L.float64), dtypes=INT),
    P("nanmean", [((3, 4),), ((),), ((0, 3),)], make_inputs=_special(_NAN, 1.0, _NAN),
      check_node_name=False, kwargs=[dict(), dict(dim=-1)],
      fn=lambda L, x, **k: L.nanmean(x, **k), gradcheck=False),
    P("nanmean_plain", U[:3], kwargs=[dict(), dict(dim=-1)], check_node_name=False,
      fn=lambda L, x, **k: L.nanmean(x, **k)),
    *red("prod", [dict(), dict(dim=1), dict(dim=-1, keepdim=True)], DIMS0, [dict(), dict(dim=1)],
         dtypes=INT),
    P("prod_zeros", [((3, 4),)], make_inputs=lambda rng, s: [
        np.array([[0.0, 2.0, 3.0, 0.5], [1.5, 0.0, 0.0, 2.0], [1.0, 2.0, -1.0, 0.5]])],
      kwargs=[dict(), dict(dim=1), dict(dim=0, keepdim=True)],
      fn=lambda L, x, **k: L.prod(x, **k)),
    P("prod_one_zero", [((4,),)], make_inputs=lambda rng, s: [np.array([0.5, 0.0, 3.0, -2.0])],
      fn=lambda L, x: L.prod(x)),
    *red("max", [dict(), dict(dim=1), dict(dim=-1, keepdim=True)], DIMS0, [dict(dim=1)],
         dtypes=INT),
    *red("min", [dict(), dict(dim=0), dict(dim=1, keepdim=True)], DIMS0, [dict(dim=1)],
         dtypes=INT),
    P("max_method", ND[:1], fn=lambda L, x: x.max(1)),
    P("max_values", ND[:1], fn=lambda L, x: x.max(dim=0).values * 2),
    P("max_binary", B[:3], fn=lambda L, x, y: L.max(x, y)),
    P("min_binary", B[:3], fn=lambda L, x, y: L.min(x, y)),
    P("max_ties", [((2, 3),)], make_inputs=lambda rng, s: [np.array([[1.0, 3.0, 3.0],
                                                                      [2.0, 0.0, 2.0]])],
      kwargs=[dict(), dict(dim=1)], fn=lambda L, x, **k: L.max(x, **k), gradcheck=False),
    P("min_ties_full", [((2, 3),)], make_inputs=lambda rng, s: [np.array([[0.0, 3.0, 0.0],
                                                                           [2.0, 0.0, 2.0]])],
      fn=lambda L, x: L.min(x), gradcheck=False),
    P("max_nan", [((2, 3),)], make_inputs=_special(1.0, _NAN), kwargs=[dict(), dict(dim=1)],
      fn=lambda L, x, **k: L.max(x, **k), gradcheck=False),
    *red("amax", [dict(), dict(dim=1), dict(dim=(0, 1), keepdim=True)], DIMS0, [dict(dim=1)],
         dtypes=INT),
    *red("amin", [dict(), dict(dim=0), dict(dim=-1)], DIMS0, [dict(dim=1)], dtypes=INT),
    P("amax_ties", [((2, 3),)], make_inputs=lambda rng, s: [np.array([[1.0, 3.0, 3.0],
                                                                       [2.0, 0.0, 2.0]])],
      kwargs=[dict(), dict(dim=1), dict(dim=0)], fn=lambda L, x, **k: L.amax(x, **k),
      gradcheck=False),
    *red("argmax", [dict(), dict(dim=1), dict(dim=-1, keepdim=True), dict(keepdim=True)],
         DIMS0, grad=False, dtypes=INT),
    *red("argmin", [dict(), dict(dim=0), dict(dim=1, keepdim=True)], DIMS0, grad=False,
         dtypes=INT),
    *red("var", [dict(), dict(dim=1), dict(dim=(0, 1), keepdim=True), dict(correction=0),
                 dict(dim=1, unbiased=False), dict(dim=1, correction=2)],
         [dict(correction=0)], [dict(dim=1)], dtypes=FLOAT),
    P("var_unbiased_positional", ND[:1], fn=lambda L, x: (L.var(x, 1, False, True),
                                                        L.var(x, False))),
    *red("std", [dict(), dict(dim=1), dict(dim=-1, keepdim=True), dict(correction=0),
                 dict(dim=0, unbiased=False)], [dict(correction=0)], [dict(dim=1)], dtypes=FLOAT),
    *red("var_mean", [dict(), dict(dim=1), dict(dim=0, correction=0, keepdim=True)],
         [dict(correction=0)], [dict(dim=1)], dtypes=FLOAT),
    *red("std_mean", [dict(), dict(dim=1), dict(dim=0, unbiased=False)], [dict(correction=0)],
         [dict(dim=1)], dtypes=FLOAT),
    *red("norm", [dict(), dict(p=1), dict(p=2, dim=1), dict(p=math.inf), dict(p=-math.inf),
                  dict(p=0), dict(p=3, dim=(0, 1)), dict(p=0.5), dict(p="fro", dim=1),
                  dict(p=1, dim=-1, keepdim=True)], DIMS0[:1], [dict(), dict(dim=1)],
         dtypes=FLOAT),
    P("vector_norm", ND, kwargs=[dict(), dict(ord=1), dict(ord=math.inf, dim=1), dict(ord=3),
                                 dict(dim=(0, 1), keepdim=True)],
      fn=lambda L, x, **k: L.linalg.vector_norm(x, **k), dtypes=FLOAT),
    P("vector_norm_0d", Z + E, kwargs=[dict(), dict(ord=1), dict(ord=3, dim=-1)],
      fn=lambda L, x, **k: L.linalg.vector_norm(x, **k)),
    P("linalg_norm_vector", [((5,),), ((2, 3, 4),), ((),), ((2, 0),)],
      kwargs=[dict(), dict(ord=1, dim=-1), dict(ord=math.inf, dim=0)],
      fn=lambda L, x, **k: L.linalg.norm(x, **k)),
    *red("logsumexp", [dict(dim=1), dict(dim=(0, 1)), dict(dim=-1, keepdim=True)],
         [dict(dim=0)], [dict(dim=1), dict(dim=0)], dtypes=INT),
    P("logsumexp_large", [((3, 4),)], fn=lambda L, x: L.logsumexp(x * 1000, 1)),
    P("logsumexp_inf", [((3, 4),)], make_inputs=_special(-_INF, -_INF, -_INF, -_INF),
      fn=lambda L, x: L.logsumexp(x, 1), grad=False),
    *red("cumsum", [dict(dim=0), dict(dim=-1)], [dict(dim=0)], [dict(dim=0), dict(dim=1)],
         dtypes=INT),
    P("cumsum_dtype", ND[:1], fn=lambda L, x: L.cumsum(x, 1, dtype=L.float64), dtypes=INT),
    *red("cumprod", [dict(dim=0), dict(dim=-1)], [dict(dim=0)], [dict(dim=1)], dtypes=INT),
    P("cumprod_zeros", [((3, 4),)], make_inputs=lambda rng, s: [
        np.array([[0.0, 2.0, 3.0, 0.5], [1.5, 0.0, 0.0, 2.0], [1.0, 2.0, 0.0, 0.5]])],
      kwargs=[dict(dim=1), dict(dim=0)], fn=lambda L, x, **k: L.cumprod(x, **k),
      gradgrad=False),
    *red("median", [dict(), dict(dim=1), dict(dim=-1, keepdim=True)], DIMS0, [dict(dim=1)],
         dtypes=INT),
    P("median_even", [((4,),), ((2, 6),)], fn=lambda L, x: L.median(x)),
    P("median_ties", [((2, 4),)], make_inputs=lambda rng, s: [np.array([[1.0, 3.0, 2.0, 4.0],
                                                                         [3.0, 1.0, 0.0, 0.0]])],
      kwargs=[dict(), dict(dim=1), dict(dim=0)], fn=lambda L, x, **k: L.median(x, **k),
      gradcheck=False),
    P("median_nan", [((2, 4),)], make_inputs=_special(1.0, _NAN), kwargs=[dict(), dict(dim=1)],
      fn=lambda L, x, **k: L.median(x, **k), grad=False),
    *red("all", [dict(), dict(dim=1), dict(dim=(0, 1), keepdim=True)], DIMS0, [dict(), dict(dim=1)],
         grad=False, dtypes=("float64", "int64", "bool")),
    *red("any", [dict(), dict(dim=0), dict(dim=-1, keepdim=True)], DIMS0, [dict(), dict(dim=0)],
         grad=False, dtypes=("float64", "int64", "bool")),
    OpCase("all_uint8", ND[:1], fn=lambda L, x: (L.all(x.to(L.uint8)), L.any(x.to(L.uint8), 1)),
           grad=False, int_inputs=(0,), int_range=(0, 3)),
    *red("count_nonzero", [dict(), dict(dim=1), dict(dim=(0, 1))], [dict()], [dict(dim=0)],
         grad=False, make_inputs=_rounded, dtypes=INT),
)

# ---------------------------------------------------------------- activations (nn.functional)
A = [((3, 4),), ((),), ((0, 3),), ((2, 3, 4),)]
register(
    P("softmax", A[:1] + A[3:], kwargs=[dict(dim=1), dict(dim=-1), dict(dim=0)],
      fn=_F("softmax"), dtypes=FLOAT),
    P("softmax_0d", A[1:3], kwargs=[dict(dim=0)], fn=_F("softmax")),
    P("softmax_dtype", A[:1], fn=lambda L, x: _F("softmax")(L, x.float(), 1, dtype=L.float64),
      gradcheck=False, rtol=1e-4),
    P("softmax_large", A[:1], fn=lambda L, x: _F("softmax")(L, x * 1000, 1)),
    P("softmax_method", A[:1], fn=lambda L, x: x.softmax(-1) * 1 + L.softmax(x, 0)),
    P("log_softmax", A[:1] + A[3:], kwargs=[dict(dim=1), dict(dim=0)], fn=_F("log_softmax"),
      dtypes=FLOAT),
    P("log_softmax_0d", A[1:3], kwargs=[dict(dim=0)], fn=_F("log_softmax")),
    P("log_softmax_large", A[:1], fn=lambda L, x: _F("log_softmax")(L, x * 1000, 1)),
    P("log_softmax_method", A[:1], fn=lambda L, x: x.log_softmax(1) + L.log_softmax(x, 0)),
    P("softmin", A[:3], fn=lambda L, x: _F("softmin")(L, x, -1), check_node_name=False),
    P("softplus", A, kwargs=[dict(), dict(beta=2.0), dict(beta=0.5, threshold=1.0)],
      fn=_F("softplus"), dtypes=FLOAT, domain=(-3, 3)),
    P("gelu", A, kwargs=[dict(), dict(approximate="tanh")], fn=_F("gelu"), dtypes=FLOAT,
      domain=(-3, 3)),
    P("silu", A, fn=_F("silu"), dtypes=FLOAT, domain=(-3, 3)),
    P("elu", A, kwargs=[dict(), dict(alpha=0.5)], fn=_F("elu"), dtypes=FLOAT),
    P("selu", A, fn=_F("selu"), dtypes=FLOAT),
    P("celu", A, kwargs=[dict(), dict(alpha=2.0)], fn=_F("celu"), dtypes=FLOAT),
    P("leaky_relu", A, kwargs=[dict(), dict(negative_slope=0.2)], fn=_F("leaky_relu"),
      dtypes=FLOAT),
    P("hardtanh", A, kwargs=[dict(), dict(min_val=-0.5, max_val=1.5)], fn=_F("hardtanh"),
      dtypes=FLOAT),
    P("relu6", A, fn=lambda L, x: _F("relu6")(L, x * 4), dtypes=FLOAT),
    P("hardsigmoid", A, fn=lambda L, x: _F("hardsigmoid")(L, x * 2), dtypes=FLOAT),
    P("hardswish", A, fn=lambda L, x: _F("hardswish")(L, x * 2), dtypes=FLOAT),
    P("mish", A, fn=_F("mish"), dtypes=FLOAT, domain=(-3, 3)),
    P("softsign", A, fn=_F("softsign"), dtypes=FLOAT),
    P("tanhshrink", A, fn=_F("tanhshrink"), dtypes=FLOAT),
    P("logsigmoid", A, fn=_F("logsigmoid"), dtypes=FLOAT),
    P("logsigmoid_large", A[:1], fn=lambda L, x: _F("logsigmoid")(L, x * 500)),
    P("threshold", A, fn=lambda L, x: _F("threshold")(L, x, 0.1, -2.0)),
    OpCase("one_hot", [((5,),), ((2, 3),), ((0,),)], fn=lambda L, x: _F("one_hot")(L, x, 4),
           int_inputs=(0,), int_range=(0, 4), grad=False),
    OpCase("one_hot_infer", [((5,),), ((2, 3),)], fn=lambda L, x: _F("one_hot")(L, x),
           int_inputs=(0,), int_range=(0, 6), grad=False),
)

# ---------------------------------------------------------------- in-place variants
register(
    P("inplace_unary", U[:3], kwargs=[dict(op=o) for o in (
        "exp_", "sin_", "tanh_", "sigmoid_", "abs_", "neg_", "floor_", "clamp_", "erf_",
        "square_", "sqrt_", "reciprocal_")],
      fn=lambda L, x, op: getattr(x.abs() * 1 + 0.5, op)(*((0.6, 1.2) if op == "clamp_"
                                                            else ()))),
    P("inplace_binary", [((3, 4), (3, 4)), ((3, 4), (4,)), ((), ()), ((0, 3), (3,))],
      kwargs=[dict(op=o) for o in (
        "add_", "sub_", "mul_", "div_", "pow_", "atan2_", "hypot_", "lerp_")],
      fn=lambda L, x, y, op: getattr(x.abs() * 1 + 1.0, op)(
          *((y.abs() + 0.5, 0.3) if op == "lerp_" else (y.abs() + 0.5,))),
      check_node_name=False),
)
