"""Differential testing against PyTorch: random small programs of random ops on random broadcast
shapes run in ndgrad and in PyTorch on the same float64 inputs; every intermediate value and
every input's gradient must agree.

A program is a list of instructions over a growing list of values (the inputs first). Each
instruction applies one op to one, two or three earlier values. Reductions keep their dims, so
every value stays broadcastable against the others; an instruction that PyTorch rejects (e.g.
a transpose that breaks broadcasting) must be rejected by ndgrad with the same exception type,
and is then dropped from both programs. Hypothesis runs a fixed set (derandomize=True).
"""
import numpy as np
import pytest

import ndgrad

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies
given, settings = hypothesis.given, hypothesis.settings

# ---------------------------------------------------------------- the op pool
# unary: f(L, x); binary: f(L, x, y); ternary: f(L, x, y, z); dim ops: f(L, x, d) (d wrapped)
UNARY = {
    "neg": lambda L, x: -x,
    "tanh": lambda L, x: L.tanh(x),
    "sigmoid": lambda L, x: L.sigmoid(x),
    "sin": lambda L, x: L.sin(x),
    "cos": lambda L, x: x.cos(),
    "atan": lambda L, x: L.atan(x),
    "asinh": lambda L, x: L.asinh(x),
    "exp_tanh": lambda L, x: L.exp(L.tanh(x)),
    "log_abs": lambda L, x: L.log(L.abs(x) + 1),
    "log1p_sq": lambda L, x: L.log1p(x * x),
    "sqrt": lambda L, x: L.sqrt(x * x + 0.5),
    "rsqrt": lambda L, x: L.rsqrt(x * x + 0.5),
    "square": lambda L, x: L.square(x),
    "reciprocal": lambda L, x: L.reciprocal(x * x + 1),
    "abs": lambda L, x: L.abs(x),
    "relu": lambda L, x: L.relu(x),
    "clamp": lambda L, x: L.clamp(x, -0.8, 0.9),
    "clamp_min": lambda L, x: x.clamp(min=-0.3),
    "erf": lambda L, x: L.erf(x),
    "erfc": lambda L, x: L.erfc(x),
    "expm1": lambda L, x: L.expm1(L.tanh(x)),
    "lgamma": lambda L, x: L.lgamma(x * x + 0.5),
    "digamma": lambda L, x: L.digamma(x * x + 0.5),
    "pow_scalar": lambda L, x: x ** 3,
    "pow_frac": lambda L, x: (x * x + 0.1) ** 0.75,
    "rpow": lambda L, x: 1.5 ** L.tanh(x),
    "scale": lambda L, x: x * 0.5 + 0.25,
    "rsub": lambda L, x: 1.0 - x,
    "rdiv": lambda L, x: 1.0 / (x * x + 1),
    "sinh": lambda L, x: L.sinh(L.tanh(x)),
    "cosh": lambda L, x: L.cosh(L.tanh(x)),
    "logit": lambda L, x: L.logit(L.sigmoid(x) * 0.8 + 0.1),
    "erfinv": lambda L, x: L.erfinv(L.tanh(x) * 0.9),
    "nan_to_num": lambda L, x: L.nan_to_num(x),
    "transpose": lambda L, x: x.transpose(-1, -2) if x.dim() >= 2 else x,
    "unsqueeze0": lambda L, x: x.unsqueeze(0),
}
BINARY = {
    "add": lambda L, x, y: x + y,
    "add_alpha": lambda L, x, y: L.add(x, y, alpha=0.5),
    "sub": lambda L, x, y: x - y,
    "mul": lambda L, x, y: x * y,
    "div": lambda L, x, y: x / (y * y + 1),
    "maximum": lambda L, x, y: L.maximum(x, y),
    "minimum": lambda L, x, y: L.minimum(x, y),
    "fmax": lambda L, x, y: L.fmax(x, y),
    "atan2": lambda L, x, y: L.atan2(x, y * y + 0.5),
    "pow": lambda L, x, y: L.pow(x * x + 0.5, L.tanh(y)),
    "lerp": lambda L, x, y: L.lerp(x, y, 0.3),
    "where": lambda L, x, y: L.where(x > y, x, y * 2),
    "copysign": lambda L, x, y: L.copysign(x, y),
    "xlogy": lambda L, x, y: L.xlogy(x, y * y + 0.5),
    "hypot": lambda L, x, y: L.hypot(x, y + 3.0),
    "remainder": lambda L, x, y: L.remainder(x, y * y + 1),
}
TERNARY = {
    "addcmul": lambda L, x, y, z: L.addcmul(x, y, z, value=0.5),
    "addcdiv": lambda L, x, y, z: L.addcdiv(x, y, z * z + 1),
    "lerp_tensor": lambda L, x, y, z: L.lerp(x, y, L.sigmoid(z)),
    "clamp_tensor": lambda L, x, y, z: L.clamp(x, y - 1, z + 1),
}
DIMOPS = {
    "sum": lambda L, x, d: x.sum(d, keepdim=True),
    "mean": lambda L, x, d: x.mean(d, keepdim=True),
    "prod": lambda L, x, d: L.prod(L.tanh(x), d, keepdim=True),
    "amax": lambda L, x, d: L.amax(x, d, keepdim=True),
    "amin": lambda L, x, d: x.amin(d, keepdim=True),
    "max_dim": lambda L, x, d: x.max(d, keepdim=True).values,
    "min_dim": lambda L, x, d: L.min(x, d, True)[0],
    "logsumexp": lambda L, x, d: L.logsumexp(x, d, keepdim=True),
    "softmax": lambda L, x, d: L.softmax(x, d),
    "log_softmax": lambda L, x, d: L.log_softmax(x, d),
    "cumsum": lambda L, x, d: L.cumsum(x, d),
    "cumprod": lambda L, x, d: L.cumprod(L.tanh(x), d),
    "var": lambda L, x, d: L.var(x, d, keepdim=True, correction=0),
    "norm": lambda L, x, d: L.norm(x + 3.0, dim=d, keepdim=True),
    "norm1": lambda L, x, d: L.norm(x, p=1, dim=d, keepdim=True),
    "median": lambda L, x, d: L.median(x, d, keepdim=True).values,
}
FULL = {
    "sum_all": lambda L, x: x.sum(),
    "mean_all": lambda L, x: x.mean(),
    "max_all": lambda L, x: x.max(),
    "norm_all": lambda L, x: (x + 3.0).norm(),
    "std_all": lambda L, x: x.std() if x.numel() > 1 else x.sum(),
}
POOL = ([("u", n) for n in UNARY] + [("b", n) for n in BINARY] + [("t", n) for n in TERNARY]
        + [("d", n) for n in DIMOPS] + [("f", n) for n in FULL])


# ---------------------------------------------------------------- programs

@st.composite
def programs(draw):
    rank = draw(st.sampled_from([2, 3, 1, 2, 3, 0]))
    base = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    n_in = draw(st.integers(1, 3))
    shapes = []
    for j in range(n_in):
        k = rank if j == 0 else draw(st.integers(0, rank))  # a suffix of base; some dims -> 1
        s = list(base[rank - k:])
        for i in range(len(s)):
            if draw(st.booleans()) and draw(st.booleans()):
                s[i] = 1
        shapes.append(tuple(s))
    n_ops = draw(st.integers(2, 7))
    instrs = []
    for j in range(n_ops):
        kind, name = draw(st.sampled_from(POOL))
        n_vals = n_in + j
        args = tuple(draw(st.integers(0, n_vals - 1)) for _ in range(3))
        instrs.append((kind, name, args, draw(st.integers(-3, 3))))
    return shapes, instrs, draw(st.integers(0, 2 ** 16))


def _apply(L, vals, instr):
    kind, name, args, d = instr
    a, b, c = (vals[i] for i in args)
    if kind == "u":
        return UNARY[name](L, a)
    if kind == "b":
        return BINARY[name](L, a, b)
    if kind == "t":
        return TERNARY[name](L, a, b, c)
    if kind == "f":
        return FULL[name](L, a)
    nd = a.dim()
    return DIMOPS[name](L, a, d % nd if nd else 0)


def _run(torch, shapes, instrs, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-2, 2, size=s) for s in shapes]
    t_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    n_in = [ndgrad.tensor(a, requires_grad=True) for a in arrays]
    t_vals, n_vals = list(t_in), list(n_in)
    for instr in instrs:
        instr = (instr[0], instr[1], tuple(i % len(t_vals) for i in instr[2]), instr[3])
        try:
            t = _apply(torch, t_vals, instr)
            np.broadcast_shapes(*[tuple(v.shape) for v in t_vals + [t]])
        except Exception as e:
            err = type(e)
            if err is ValueError:  # our own broadcast check above
                continue
            with pytest.raises(err):
                _apply(ndgrad, n_vals, instr)
            continue
        n = _apply(ndgrad, n_vals, instr)
        assert tuple(n.shape) == tuple(t.shape), (instr, n.shape, t.shape)
        assert str(n.dtype) == str(t.dtype)
        np.testing.assert_allclose(n.detach().numpy(), t.detach().numpy(), rtol=1e-6,
                                   atol=1e-8, equal_nan=True, err_msg=str(instr))
        t_vals.append(t)
        n_vals.append(n)
    # one scalar from every value, with fixed random weights
    t_loss, n_loss = 0, 0
    for t, n in zip(t_vals, n_vals):
        w = rng.standard_normal(tuple(t.shape))
        t_loss = t_loss + (t * torch.tensor(w)).sum()
        n_loss = n_loss + (n * ndgrad.tensor(w)).sum()
    t_g = torch.autograd.grad(t_loss, t_in, allow_unused=True)
    n_g = ndgrad.autograd.grad(n_loss, n_in, allow_unused=True)
    for i, (a, b) in enumerate(zip(n_g, t_g)):
        a = np.zeros(shapes[i]) if a is None else a.numpy()
        b = np.zeros(shapes[i]) if b is None else b.numpy()
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8, equal_nan=True,
                                   err_msg=f"gradient of input {i}: {instrs}")
    return len(t_vals) - len(t_in)


@settings(max_examples=300, derandomize=True, deadline=None,
          suppress_health_check=list(hypothesis.HealthCheck))
@given(programs())
def test_random_programs_match_pytorch(program):
    torch = pytest.importorskip("torch")
    shapes, instrs, seed = program
    _run(torch, shapes, instrs, seed)


def test_the_op_pool_is_exercised():
    """Every op of the pool runs (in a fixed program) so a broken entry cannot hide."""
    torch = pytest.importorskip("torch")
    ran = 0
    for kind, name in POOL:
        ran += _run(torch, [(3, 3), (1, 3), (3, 1)], [(kind, name, (0, 1, 2), 1)], 7)
    assert ran == len(POOL)
