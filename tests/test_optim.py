"""Optimizers: step-for-step trajectories against PyTorch (float64), state_dict, errors."""
import copy
import pickle

import numpy as np
import pytest

import ndgrad
from ndgrad import optim


def _problem(lib, seed=0):
    """Two float64 parameters and a non-quadratic loss closure, same numbers in both libraries."""
    rng = np.random.default_rng(seed)
    w0, b0 = rng.standard_normal((3, 4)), rng.standard_normal(3)
    X, y = rng.standard_normal((5, 4)), rng.standard_normal((5, 3))
    w = lib.tensor(w0, dtype=lib.float64, requires_grad=True)
    b = lib.tensor(b0, dtype=lib.float64, requires_grad=True)
    Xt, yt = lib.tensor(X), lib.tensor(y)

    def loss_fn():
        r = Xt @ w.t() + b - yt
        return (r * r).sum() + 0.1 * (w * w * w * w).sum()
    return [w, b], loss_fn


def _run(lib, opt_name, kwargs, steps=25, groups=False):
    params, loss_fn = _problem(lib)
    if groups:
        params = [{"params": [params[0]]}, {"params": [params[1]], "lr": kwargs["lr"] * 0.5}]
    opt = getattr(lib.optim, opt_name)(params, **kwargs)
    sign = -1 if kwargs.get("maximize") else 1   # maximize the negated loss: still converges
    traj = []
    for _ in range(steps):
        opt.zero_grad()
        loss = sign * loss_fn()
        loss.backward()
        opt.step()
        traj.append([p.detach().numpy().copy() for g in opt.param_groups for p in g["params"]])
    return traj, opt


CASES = [
    ("SGD", dict(lr=0.01)),
    ("SGD", dict(lr=0.01, momentum=0.9)),
    ("SGD", dict(lr=0.01, momentum=0.9, dampening=0.3, weight_decay=0.1)),
    ("SGD", dict(lr=0.01, momentum=0.9, nesterov=True, maximize=False)),
    ("SGD", dict(lr=0.01, momentum=0.5, maximize=True)),
    ("Adam", dict(lr=0.05)),
    ("Adam", dict(lr=0.05, betas=(0.8, 0.99), weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.05, maximize=True, eps=1e-6)),
    ("AdamW", dict(lr=0.05)),
    ("AdamW", dict(lr=0.05, weight_decay=0.3, amsgrad=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.9, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, momentum=0.5, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.5, weight_decay=0.1)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
]


@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_trajectory_matches_torch(name, kwargs):
    torch = pytest.importorskip("torch")
    ours, _ = _run(ndgrad, name, kwargs)
    ref, _ = _run(torch, name, kwargs)
    for step, (a, b) in enumerate(zip(ours, ref)):
        for pa, pb in zip(a, b):
            np.testing.assert_allclose(pa, pb, rtol=1e-10, atol=1e-10, err_msg=f"step {step}")


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop"])
def test_param_groups_trajectory_matches_torch(name):
    torch = pytest.importorskip("torch")
    kw = dict(lr=0.02, momentum=0.9) if name != "Adam" else dict(lr=0.02)
    ours, o1 = _run(ndgrad, name, kw, steps=10, groups=True)
    ref, o2 = _run(torch, name, kw, steps=10, groups=True)
    for a, b in zip(ours, ref):
        for pa, pb in zip(a, b):
            np.testing.assert_allclose(pa, pb, rtol=1e-10, atol=1e-10)
    assert [g["lr"] for g in o1.param_groups] == [g["lr"] for g in o2.param_groups]


def test_defaults_and_state_dict_format_match_torch():
    torch = pytest.importorskip("torch")
    for name in ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta"]:
        kw = dict(lr=0.01, momentum=0.9) if name in ("SGD", "RMSprop") else dict(lr=0.01)
        _, o1 = _run(ndgrad, name, kw, steps=2)
        _, o2 = _run(torch, name, kw, steps=2)
        assert o1.defaults == o2.defaults, name
        s1, s2 = o1.state_dict(), o2.state_dict()
        assert s1["param_groups"] == s2["param_groups"], name
        assert s1["state"].keys() == s2["state"].keys()
        for k in s1["state"]:
            assert s1["state"][k].keys() == s2["state"][k].keys(), name
            for key, v in s1["state"][k].items():
                np.testing.assert_allclose(v.numpy(), s2["state"][k][key].numpy(), rtol=1e-10)
                assert str(v.dtype).split(".")[-1] == str(s2["state"][k][key].dtype).split(".")[-1]


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Adagrad", "Adadelta"])
def test_state_dict_round_trip_resumes_identically(name):
    kw = dict(lr=0.01, momentum=0.9) if name == "SGD" else dict(lr=0.01)
    full, _ = _run(ndgrad, name, kw, steps=8)
    # run 4 steps, save, rebuild everything from the saved state, run 4 more
    params, loss_fn = _problem(ndgrad)
    opt = getattr(optim, name)(params, **kw)
    for _ in range(4):
        opt.zero_grad()
        loss_fn().backward()
        opt.step()
    sd = pickle.loads(pickle.dumps(opt.state_dict()))
    values = [p.detach().clone() for p in params]
    params2, loss_fn2 = _problem(ndgrad)
    with ndgrad.no_grad():
        for p, v in zip(params2, values):
            p.copy_(v) if hasattr(p, "copy_") else p._data.__setitem__(Ellipsis, v._data)
    opt2 = getattr(optim, name)(params2, lr=123.0)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == 0.01
    assert opt2.state[params2[0]].keys() == opt.state[params[0]].keys()
    for _ in range(4):
        opt2.zero_grad()
        loss_fn2().backward()
        opt2.step()
    for p, ref in zip(params2, full[-1]):
        np.testing.assert_allclose(p.detach().numpy(), ref, rtol=1e-12, atol=1e-12)


def test_load_state_dict_does_not_alias_and_casts():
    params, loss_fn = _problem(ndgrad)
    opt = optim.Adam(params)
    loss_fn().backward()
    opt.step()
    sd = opt.state_dict()
    p32 = [ndgrad.zeros(3, 4, requires_grad=True), ndgrad.zeros(3, requires_grad=True)]
    opt2 = optim.Adam(p32)
    opt2.load_state_dict(sd)
    st = opt2.state[p32[0]]
    assert st["exp_avg"].dtype == ndgrad.float32
    assert st["step"].dtype == sd["state"][0]["step"].dtype
    sd["state"][0]["exp_avg_sq"]._data[...] = 7
    assert (st["exp_avg_sq"].numpy() != 7).all()


def test_load_state_dict_errors():
    params, _ = _problem(ndgrad)
    opt = optim.SGD(params, lr=0.1)
    sd = opt.state_dict()
    other = optim.SGD([{"params": [params[0]]}, {"params": [params[1]]}], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        other.load_state_dict(sd)
    single = optim.SGD([params[0]], lr=0.1)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        single.load_state_dict(sd)


def test_construction_errors_match_torch():
    torch = pytest.importorskip("torch")
    x = ndgrad.ones(2, requires_grad=True)
    tx = torch.ones(2, requires_grad=True)
    cases = [
        (lambda lib, p: lib.optim.SGD([p * 2], lr=0.1)),                      # non-leaf
        (lambda lib, p: lib.optim.SGD([], lr=0.1)),
        (lambda lib, p: lib.optim.SGD(p, lr=0.1)),                             # bare tensor
        (lambda lib, p: lib.optim.SGD([lib.ones(1, requires_grad=True)], lr=0.1)
         .add_param_group({"params": {p}})),
        (lambda lib, p: lib.optim.SGD([p, 3], lr=0.1)),
        (lambda lib, p: lib.optim.SGD([p], lr=-1)),
        (lambda lib, p: lib.optim.SGD([p], lr=0.1, momentum=-1)),
        (lambda lib, p: lib.optim.SGD([p], lr=0.1, nesterov=True)),
        (lambda lib, p: lib.optim.Adam([p], betas=(1.0, 0.9))),
        (lambda lib, p: lib.optim.Adam([p], eps=-1)),
        (lambda lib, p: lib.optim.RMSprop([p], alpha=-1)),
        (lambda lib, p: lib.optim.Adagrad([p], lr_decay=-1)),
        (lambda lib, p: lib.optim.Adadelta([p], rho=2)),
        (lambda lib, p: lib.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)),
        (lambda lib, p: lib.optim.SGD([p], lr=0.1).add_param_group([p])),
    ]
    for i, case in enumerate(cases):
        with pytest.raises(Exception) as ref:
            case(torch, tx)
        with pytest.raises(type(ref.value)) as ours:
            case(ndgrad, x)
        assert str(ours.value) == str(ref.value), i
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.Adam([x.exp()])


def test_add_param_group_fills_defaults_and_names():
    a, b = ndgrad.ones(2, requires_grad=True), ndgrad.ones(3, requires_grad=True)
    opt = optim.SGD([a], lr=0.1, momentum=0.5)
    opt.add_param_group({"params": b, "lr": 0.01})
    g = opt.param_groups[1]
    assert g["lr"] == 0.01 and g["momentum"] == 0.5 and g["params"] == [b] or g["params"][0] is b
    named = optim.SGD([("w", a)], lr=0.1)
    assert named.param_groups[0]["param_names"] == ["w"]
    with pytest.raises(ValueError, match="with/without names"):
        named.add_param_group({"params": [b]})
    from ndgrad.optim.optimizer import required
    with pytest.raises(ValueError, match="required optimization parameter lr"):
        optim.Optimizer([a], {"lr": required})
    with pytest.raises(TypeError, match="'<' not supported"):   # as PyTorch's SGD
        optim.SGD([a], lr=required)


def test_zero_grad_and_skips_params_without_grad():
    a, b = ndgrad.ones(2, requires_grad=True), ndgrad.ones(2, requires_grad=True)
    opt = optim.SGD([a, b], lr=0.5, momentum=0.9)
    (a * 3).sum().backward()
    opt.step()
    assert b.grad is None and np.array_equal(b.detach().numpy(), [1, 1])
    np.testing.assert_allclose(a.detach().numpy(), [-0.5, -0.5])
    assert b not in opt.state and "momentum_buffer" in opt.state[a]
    opt.zero_grad(set_to_none=False)
    assert np.array_equal(a.grad.numpy(), [0, 0])
    opt.zero_grad()
    assert a.grad is None


def test_step_bumps_version_runs_under_no_grad_and_returns_closure_loss():
    p = ndgrad.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.Adam([p], lr=0.1)
    seen = []

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        seen.append(ndgrad.is_grad_enabled())
        loss.backward()
        return loss
    v = p._version
    loss = opt.step(closure)
    assert seen == [True] and p._version > v and float(loss) == 5.0
    assert p.grad_fn is None and p.requires_grad


def test_float32_params_stay_float32():
    p = ndgrad.ones(3, requires_grad=True)
    for cls in [optim.SGD, optim.Adam, optim.RMSprop, optim.Adagrad, optim.Adadelta]:
        opt = cls([p], lr=0.1)
        (p * p).sum().backward()
        opt.step()
        opt.zero_grad()
        assert p.dtype == ndgrad.float32 and p._data.dtype == np.float32
        assert all(v.dtype == ndgrad.float32 for k, v in opt.state[p].items() if k != "step")


def test_deepcopy_and_repr():
    torch = pytest.importorskip("torch")
    p = ndgrad.ones(3, requires_grad=True)
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    assert repr(opt) == repr(torch.optim.SGD([torch.ones(3, requires_grad=True)], lr=0.1,
                                             momentum=0.9))
    (p * p).sum().backward()
    opt.step()
    opt2 = copy.deepcopy(opt)
    assert len(opt2.state) == 1


@pytest.mark.parametrize("kw", [dict(), dict(line_search_fn="strong_wolfe"),
                                dict(lr=0.5, max_iter=4, history_size=3),
                                dict(line_search_fn="strong_wolfe", history_size=2, max_iter=7)])
def test_lbfgs_matches_torch(kw):
    torch = pytest.importorskip("torch")

    def run(lib):
        params, loss_fn = _problem(lib)
        opt = lib.optim.LBFGS(params, **kw)
        out = []

        def closure():
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            return loss
        for _ in range(3):
            loss = opt.step(closure)
            out.append([loss.item()] + [p.detach().numpy().copy() for p in params])
        return out, opt
    ours, o1 = run(ndgrad)
    ref, o2 = run(torch)
    for a, b in zip(ours, ref):
        assert a[0] == pytest.approx(b[0], rel=1e-9)
        for pa, pb in zip(a[1:], b[1:]):
            np.testing.assert_allclose(pa, pb, rtol=1e-9, atol=1e-10)
    s1, s2 = o1.state[o1._params[0]], o2.state[o2._params[0]]
    assert s1["func_evals"] == s2["func_evals"] and s1["n_iter"] == s2["n_iter"]
    assert ours[-1][0] < ours[0][0]


def test_lbfgs_errors():
    torch = pytest.importorskip("torch")
    for lib in (torch, ndgrad):
        a, b = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        with pytest.raises(ValueError, match="doesn't support per-parameter options"):
            lib.optim.LBFGS([{"params": [a]}, {"params": [b]}])


def test_step_hooks_run_in_order_and_can_be_removed():
    p = ndgrad.ones(2, requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, a, k: calls.append(("pre", float(p[0]))))
    opt.register_step_post_hook(lambda o, a, k: calls.append(("post", float(p[0]))))
    p.sum().backward()
    opt.step()
    assert calls == [("pre", 1.0), ("post", pytest.approx(0.9))]
    h1.remove()
    opt.step()
    assert [c[0] for c in calls] == ["pre", "post", "post"]


@pytest.mark.parametrize("name,kwargs", [("SGD", dict(lr=0.01, momentum=0.9, nesterov=True)),
                                         ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.1)),
                                         ("AdamW", dict(lr=0.05)),
                                         ("RMSprop", dict(lr=0.01, centered=True)),
                                         ("Adagrad", dict(lr=0.1)), ("Adadelta", dict())])
def test_float32_trajectory_close_to_torch(name, kwargs):
    torch = pytest.importorskip("torch")

    def run(lib):
        rng = np.random.default_rng(1)
        w = lib.tensor(rng.standard_normal((3, 4)), dtype=lib.float32, requires_grad=True)
        X = lib.tensor(rng.standard_normal((5, 4)), dtype=lib.float32)
        opt = getattr(lib.optim, name)([w], **kwargs)
        for _ in range(20):
            opt.zero_grad()
            ((X @ w.t()) ** 2).mean().backward()
            opt.step()
        return w.detach().numpy()
    ours = run(ndgrad)
    assert ours.dtype == np.float32
    np.testing.assert_allclose(ours, run(torch), rtol=1e-5, atol=1e-6)


def _subclass_events(lib):
    """A wrapper that skips Optimizer.__init__ (as Lookahead-style libraries do) and a subclass
    with its own step(): what runs, in which grad mode, and what fails, as seen from outside."""
    from collections import defaultdict
    out = []

    class Lookahead(lib.optim.Optimizer):
        def __init__(self, optimizer, k=2):
            self.optimizer = optimizer
            self.k = k
            self.param_groups = self.optimizer.param_groups
            self.state = defaultdict(dict)
            self.defaults = optimizer.defaults

        def step(self, closure=None):
            out.append(("lookahead grad mode", lib.is_grad_enabled()))
            return self.optimizer.step(closure)

    class Plain(lib.optim.Optimizer):
        def __init__(self, params, lr=0.1):
            super().__init__(params, dict(lr=lr))

        def step(self, closure=None):
            out.append(("plain grad mode", lib.is_grad_enabled()))
            for g in self.param_groups:
                for p in g["params"]:
                    if p.grad is not None:
                        p.data.add_(p.grad, alpha=-g["lr"])

    w = lib.ones(3, requires_grad=True)
    w.grad = lib.ones(3)
    la = Lookahead(lib.optim.SGD([w], lr=0.1))
    out.append(("step before zero_grad", la.step(), w.detach().numpy().tolist()))
    la.zero_grad(set_to_none=False)   # patches the class's step, as PyTorch's does
    for what, f in (("step", la.step), ("hook", lambda: la.register_step_pre_hook(print)),
                    ("state_dict", la.state_dict)):
        try:
            f()
            out.append((what, "ok"))
        except AttributeError as e:
            out.append((what, str(e)))
    p = Plain([w])
    calls = []
    p.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    w.grad = lib.ones(3)
    p.step()
    with lib.no_grad():
        p.step()
    out.append(("hooks", calls, w.detach().numpy().tolist()))
    return out


def test_subclass_steps_and_skipped_init_behave_as_torch():
    # PyTorch runs only its own optimizers' step() under no_grad: a subclass's step runs in the
    # caller's mode; a subclass that never calls Optimizer.__init__ has no hook tables
    torch = pytest.importorskip("torch")
    ours, ref = _subclass_events(ndgrad), _subclass_events(torch)
    assert ours == ref
    assert ("plain grad mode", True) in ours and ("plain grad mode", False) in ours


def test_deprecated_overloads_optimizer_libraries_use():
    # PyTorch 2.13 still takes add_(alpha, other), addcmul_(value, t1, t2), addcdiv_(value, ...)
    # (and the torch-level forms), warning once per process at the first one
    import warnings
    torch = pytest.importorskip("torch")
    from ndgrad.ops import tensor_api
    calls = [lambda L, x, o: x.clone().add_(0.5, o), lambda L, x, o: x.add(2, o),
             lambda L, x, o: x.clone().sub_(0.5, o), lambda L, x, o: x.sub(0.25, o),
             lambda L, x, o: x.clone().addcmul_(0.5, o, o), lambda L, x, o: x.addcmul(3, o, o),
             lambda L, x, o: x.clone().addcdiv_(0.5, o, o + 1), lambda L, x, o: x.addcdiv(2, o, o),
             lambda L, x, o: L.add(x, 0.5, o), lambda L, x, o: L.sub(x, 0.5, o),
             lambda L, x, o: L.addcmul(x, 0.5, o, o), lambda L, x, o: L.addcdiv(x, 0.5, o, o)]
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(5), rng.standard_normal(5)
    tensor_api._DEPRECATED_WARNED[0] = False
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for i, f in enumerate(calls):
            ours = f(ndgrad, ndgrad.tensor(a), ndgrad.tensor(b)).numpy()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ref = f(torch, torch.tensor(a), torch.tensor(b)).numpy()
            np.testing.assert_array_equal(ours, ref, err_msg=str(i))
    ours_w = [x for x in w if "deprecated" in str(x.message)]
    assert len(ours_w) == 1 and ours_w[0].filename == __file__
    assert str(ours_w[0].message).startswith(
        "This overload of add_ is deprecated:\n\tadd_(Number alpha, Tensor other)\nConsider "
        "using one of the following signatures instead:\n\tadd_(Tensor other, *, Number alpha "
        "= 1) (Triggered internally at")
