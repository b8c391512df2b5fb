"""PyTorch's own optimizer database as the oracle (issue 31).

torch.testing._internal.common_optimizers.optim_db holds every optimizer of PyTorch 2.13 with the
configurations its own tests run (optim_inputs_func, with the foreach/differentiable/fused variants
that _get_optim_inputs_including_global_cliquey_kwargs adds) and the misuse each one must refuse
(optim_error_inputs_func). Here every configuration runs in both libraries on the CPU, in float64
and float32, step for step on the same parameters fed the same gradients (plus foreach=True where
the optimizer has a foreach kernel: PyTorch's CPU list leaves it out), and

- the parameters after every step and the final state_dict (every state tensor, its dtype, the
  param_groups) agree bit for bit, with PyTorch's square root put in ndgrad's sqrt seam
  (ops/_fma.sqrt: PyTorch's CPU build takes sqrt from MKL, within 0.75 ulp; ndgrad keeps the
  correctly rounded root), so every other operation is shown to be PyTorch's, order and rounding;
- differentiable=True runs through autograd on non-leaf parameters, and the gradient of the
  final parameters with respect to the initial ones agrees too;
- every error input raises PyTorch's exception type with a message matching PyTorch's regex (the
  warnings warn), at construction or at step() as the database says.

The few places ndgrad does not follow PyTorch's bits are in KNOWN, each with its reason.
"""
import re
import warnings
import zlib

import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")
common = pytest.importorskip("torch.testing._internal.common_optimizers")
# Importing PyTorch's test internals calls torch.backends.disable_global_flags(), after which
# setting torch.backends.cudnn.* raises: that would break later tests that set those flags.
# (torch.backends is a wrapper object; the flag lives in its functions' module globals.)
torch.backends.flags_frozen.__globals__["__allow_nonbracketed_mutation_flag"] = True

STEPS = 6

# (optimizer, predicate on (kwargs, dtype)) -> (rtol, reason). Everything else: bit for bit.
KNOWN = [
    ("Adafactor", lambda kw, dt: True, 1e-5,
     "row/column means and the update's norm are reductions: NumPy sums pairwise, PyTorch's "
     "vectorized kernels in another order (last-bit differences)"),
    ("LBFGS", lambda kw, dt: dt == "float32", 1e-3, "as below; in float32 a step's 20 L-BFGS "
     "iterations end near convergence where the curvature pairs are ill-conditioned: the first "
     "step and the state's layout are compared"),
    ("LBFGS", lambda kw, dt: True, 1e-5,
     "the closure's matmul and sum, and the algorithm's dot products, reduce in another order "
     "than PyTorch's BLAS and kernels; the algorithm itself is PyTorch's statement for "
     "statement (its state is compared in layout, dtypes and counters: its late curvature "
     "pairs are differences of nearly equal numbers)"),
    ("Muon", lambda kw, dt: True, 2e-2,
     "the Newton-Schulz iteration runs in bfloat16 with float32 matmul accumulation: BLAS sums "
     "in another order than PyTorch's bfloat16 GEMM, and bfloat16 rounding amplifies a last-bit "
     "difference to one bfloat16 ulp"),
    ("ASGD", lambda kw, dt: kw.get("foreach"), 1e-6,
     "the foreach kernel computes eta with a float32 tensor pow (PyTorch's vectorized Sleef "
     "powf, 1 ulp) where NumPy's powf rounds correctly"),
    ("*", lambda kw, dt: kw.get("fused"), 1e-4,
     "fused=True runs the single-tensor kernel (ndgrad has no fused kernels): PyTorch's fused "
     "CPU kernels evaluate the update in one loop with other roundings"),
    ("*", lambda kw, dt: kw.get("differentiable"), 1e-5,
     "differentiable=True runs ndgrad's Tensor ops under autograd: their sqrt is the correctly "
     "rounded one (no MKL seam there) and the float32 `beta ** step` of the differentiable "
     "branch is NumPy's powf (PyTorch's is Sleef's, 1 ulp)"),
]


def _known(name, kw, dt):
    for n, pred, rtol, _ in KNOWN:
        if n in (name, "*") and pred(kw, dt):
            return rtol
    return None


def _torch_sqrt(x, out=None):
    r = torch.from_numpy(np.ascontiguousarray(x)).sqrt().numpy()
    if out is None:
        return r
    out[...] = r
    return out


@pytest.fixture
def mkl_sqrt(monkeypatch):
    from ndgrad.ops import _fma
    monkeypatch.setattr(_fma, "sqrt", _torch_sqrt)


def _configs(info, dtype):
    inputs = common._get_optim_inputs_including_global_cliquey_kwargs("cpu", dtype, info)
    configs = [dict(oi.kwargs) for oi in inputs]
    if "foreach" in info.supported_impls:     # PyTorch's CPU list leaves foreach out
        for oi in info.optim_inputs_func("cpu"):
            kw = dict(oi.kwargs, foreach=True)
            if isinstance(kw.get("lr"), torch.Tensor):
                continue       # (a Tensor lr needs capturable with foreach: an error case)
            configs.append(kw)
    return configs


def _lib_value(lib, v):
    if isinstance(v, torch.Tensor) and lib is ndgrad:
        return ndgrad.tensor(v.detach().numpy())
    if isinstance(v, tuple):
        return tuple(_lib_value(lib, x) for x in v)
    return v


def _data(rng, name, dtype):
    shapes = [(5, 4)] if name == "Muon" else [(5, 4), (4,)]
    if name == "SparseAdam":
        shapes = [(6, 3)]
    w = [rng.standard_normal(s) for s in shapes]
    coef = [rng.standard_normal(s) for s in shapes]
    noise = [[rng.standard_normal(s) for s in shapes] for _ in range(STEPS)]
    rows = [np.sort(rng.choice(6, 3, replace=False)) for _ in range(STEPS)]
    return w, coef, noise, rows


def _run(lib, info, kw, dtype):
    """STEPS updates in `lib`; the parameters after each, the final state_dict, the gradient of
    the final parameters' sum with respect to the initial ones (differentiable runs)."""
    name = info.name
    rng = np.random.default_rng(zlib.crc32(f"{name} {sorted(kw.items())}".encode()))
    w0, coef, noise, rows = _data(rng, name, dtype)
    dt = getattr(lib, dtype)
    diff = kw.get("differentiable", False)
    leaves = [lib.tensor(w, dtype=dt, requires_grad=True) for w in w0]
    if diff:
        params = [x.clone() for x in leaves]
        for p in params:
            p.retain_grad()
    else:
        params = leaves
    kwargs = {k: _lib_value(lib, v) for k, v in kw.items()}
    opt = getattr(lib.optim, name)(params, **kwargs)
    coefs = [lib.tensor(c, dtype=dt) for c in coef]
    snaps = []
    for k in range(STEPS):
        if name == "LBFGS":
            X = lib.tensor(np.ascontiguousarray(noise[k][0].T[:3]), dtype=dt)

            def closure():
                opt.zero_grad()
                loss = ((X @ params[0] + params[1] - 1) ** 2).sum() + (params[0] ** 2).sum()
                loss.backward()
                return loss
            opt.step(closure)
        else:
            with lib.no_grad():
                for p, a, n in zip(params, coefs, noise[k]):
                    g = p.detach() * a + lib.tensor(n, dtype=dt)
                    if name == "SparseAdam":
                        idx = lib.tensor(rows[k][None, :])
                        g = lib.sparse_coo_tensor(idx, g[lib.tensor(rows[k])], tuple(p.shape))
                    p.grad = g
            opt.step()
        snaps.append([p.detach().numpy().copy() for p in params])
        if diff and k == 0:   # the gradient through the first step
            first = lib.autograd.grad(sum(p.sum() for p in params), leaves, retain_graph=True)
            grads = [g.numpy().copy() for g in first]
    return snaps, opt.state_dict(), grads if diff else None


def _same(a, b, rtol, what):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (what, a.dtype, b.dtype)
    if rtol is None:
        assert np.array_equal(a, b, equal_nan=True), (what, np.abs(a - b).max())
    else:
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol, err_msg=what)


def _same_value(x, y, rtol, what):
    if isinstance(y, torch.Tensor):
        assert isinstance(x, ndgrad.Tensor), what
        assert str(x.dtype) == str(y.dtype), (what, x.dtype, y.dtype)
        assert tuple(x.shape) == tuple(y.shape), (what, x.shape, y.shape)
        if rtol != "layout":
            _same(x.detach().numpy(), y.detach().numpy(), rtol, what)
    elif isinstance(y, (list, tuple)):
        assert type(x) is type(y) and len(x) == len(y), what
        for i, (u, v) in enumerate(zip(x, y)):
            _same_value(u, v, rtol, f"{what}[{i}]")
    elif isinstance(y, float) and rtol is not None:
        assert isinstance(x, float), (what, x)
        assert rtol == "layout" or abs(x - y) <= rtol * (1 + abs(y)), (what, x, y)
    else:
        assert type(x) is type(y) and x == y, (what, x, y)


def _compare_state_dicts(ours, ref, rtol):
    assert len(ours["param_groups"]) == len(ref["param_groups"])
    for g1, g2 in zip(ours["param_groups"], ref["param_groups"]):
        assert sorted(g1) == sorted(g2), (sorted(g1), sorted(g2))
        for k in g2:
            _same_value(g1[k], g2[k], None, f"param_groups {k}")
    assert sorted(ours["state"]) == sorted(ref["state"])
    for i, s2 in ref["state"].items():
        s1 = ours["state"][i]
        assert sorted(s1) == sorted(s2), (i, sorted(s1), sorted(s2))
        for k in s2:
            _same_value(s1[k], s2[k], rtol, f"state {i} {k}")


INFOS = {info.name: info for info in common.optim_db}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(INFOS))
def test_optim_db_trajectories_and_state(name, dtype, mkl_sqrt):
    info = INFOS[name]
    failures = []
    for kw in _configs(info, getattr(torch, dtype)):
        rtol = _known(name, kw, dtype)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ref = _run(torch, info, kw, dtype)
                ours = _run(ndgrad, info, kw, dtype)
            lbfgs32 = name == "LBFGS" and dtype == "float32"
            for step, (a, b) in enumerate(zip(ours[0][:1] if lbfgs32 else ours[0], ref[0])):
                for j, (x, y) in enumerate(zip(a, b)):
                    _same(x, y, rtol, f"step {step} param {j}")
            if lbfgs32:
                for k in ("n_iter", "func_evals", "al", "old_dirs", "old_stps", "ro"):
                    ours[1]["state"][0].pop(k), ref[1]["state"][0].pop(k)
            _compare_state_dicts(ours[1], ref[1], "layout" if name == "LBFGS" else rtol)
            if ref[2] is not None:
                for j, (x, y) in enumerate(zip(ours[2], ref[2])):
                    _same(x, y, 1e-9 if dtype == "float64" else 1e-4, f"d params / d leaf {j}")
        except AssertionError as e:
            failures.append(f"{kw}: {str(e)[:300]}")
    assert not failures, "\n".join(failures)


def _to_ndgrad(x, memo):
    if id(x) in memo:
        return memo[id(x)]
    if isinstance(x, torch.Tensor):
        if x.layout == torch.sparse_coo:
            x = x.coalesce()
            r = ndgrad.sparse_coo_tensor(ndgrad.tensor(x.indices().numpy()),
                                        ndgrad.tensor(x.values().numpy()), tuple(x.shape))
        else:
            r = ndgrad.tensor(x.detach().numpy())
            if isinstance(x, torch.nn.Parameter):
                r = ndgrad.nn.Parameter(r, requires_grad=x.requires_grad)
            elif x.requires_grad:
                r.requires_grad_(True)
            if x.grad is not None:
                r.grad = _to_ndgrad(x.grad, memo)
    elif isinstance(x, dict):
        r = {k: _to_ndgrad(v, memo) for k, v in x.items()}
    elif isinstance(x, (list, tuple)):
        r = type(x)(_to_ndgrad(v, memo) for v in x)
    else:
        r = x
    memo[id(x)] = r
    return r


def _default_params(lib, name, dtype):
    dt = getattr(lib, dtype)
    w = lib.tensor(np.ones((2, 3)), dtype=dt, requires_grad=True)
    b = lib.tensor(np.ones(3), dtype=dt, requires_grad=True)
    return [w] if name == "Muon" else [w, b]


def _raises(lib, make, step, error_type, regex):
    """PyTorch's exception type (or warning) with a message matching its regex."""
    if issubclass(error_type, Warning):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            make()
        assert any(issubclass(x.category, error_type) and re.search(regex, str(x.message))
                   for x in w), (lib.__name__, [str(x.message) for x in w])
        return
    with pytest.raises(error_type, match=regex):
        opt = make()
        if step:
            opt.step()


@pytest.mark.parametrize("name", sorted(n for n, i in INFOS.items() if i.optim_error_inputs_func))
def test_optim_db_error_inputs(name):
    info = INFOS[name]
    for dtype in (torch.float32,):
        for e in info.optim_error_inputs_func("cpu", dtype):
            oi = e.optimizer_error_input
            step = e.error_on == common.OptimizerErrorEnum.STEP_ERROR
            for lib in (torch, ndgrad):
                if oi.params is None:
                    params = _default_params(lib, name, "float32")
                else:
                    params = oi.params if lib is torch else _to_ndgrad(oi.params, {})
                kwargs = oi.kwargs if lib is torch else _to_ndgrad(oi.kwargs, {})

                def make(params=params, kwargs=kwargs, lib=lib):
                    return getattr(lib.optim, name)(params, **kwargs)
                try:
                    _raises(lib, make, step, e.error_type, e.error_regex)
                except BaseException as exc:
                    raise AssertionError(f"{name} {oi.desc} ({lib.__name__}): {exc!r}") from exc
