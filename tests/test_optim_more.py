"""Every optimizer of PyTorch 2.13 against PyTorch itself: float64 and float32 trajectories over
200 steps fed the same gradients, state_dict layout, options and their errors, hooks,
swap_in_optimizer_params_and_state and optim.swa_utils."""
import copy
import importlib
import warnings

import numpy as np
import pytest

import ndgrad
from ndgrad import optim


def _torch():
    return pytest.importorskip("torch")


def _fma_cpu(torch):
    """PyTorch's vectorized CPU kernels use fused multiply-adds on AVX2/AVX512 machines, which
    ndgrad's float32 arithmetic reproduces; elsewhere only closeness is expected."""
    return torch.backends.cpu.get_cpu_capability() in ("AVX2", "AVX512")


def _run(lib, name, kwargs, dtype, steps=200, shapes=((7, 5), (5,)), complex_=False):
    """`steps` updates of parameters of `shapes`; the gradient at each step is p * A + noise_k,
    elementwise ops that both libraries round identically, so any difference is the optimizer's."""
    rng = np.random.default_rng(0)
    dt = getattr(lib, dtype)

    def draw(s):
        a = rng.standard_normal(s)
        return a + 1j * rng.standard_normal(s) if complex_ else a
    params = [lib.tensor(draw(s), dtype=dt, requires_grad=True) for s in shapes]
    coef = [lib.tensor(draw(s), dtype=dt) for s in shapes]
    noise = [[lib.tensor(draw(s), dtype=dt) for s in shapes] for _ in range(steps)]
    opt = getattr(lib.optim, name)(params, **kwargs)
    traj = []
    for k in range(steps):
        with lib.no_grad():
            for p, a, n in zip(params, coef, noise[k]):
                p.grad = p * a + n
        opt.step()
        if k in (0, 1, 9, steps - 1):
            traj.append([p.detach().numpy().copy() for p in params])
    return traj, opt


CASES = [
    ("SGD", dict(lr=0.01)),
    ("SGD", dict(lr=0.01, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.01, momentum=0.9, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, decoupled_weight_decay=True, weight_decay=0.1, maximize=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, amsgrad=True, betas=(0.8, 0.95))),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.9, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.1)),
    ("Adadelta", dict(lr=0.5, weight_decay=0.1)),
    ("Adadelta", dict(rho=0.8, maximize=True)),
    ("Adamax", dict(lr=0.01)),
    ("Adamax", dict(lr=0.01, weight_decay=0.1, betas=(0.8, 0.9), maximize=True)),
    ("NAdam", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, betas=(0.5, 0.9))),
    ("Rprop", dict(lr=0.01)),
    ("Rprop", dict(lr=0.01, etas=(0.3, 1.5), step_sizes=(1e-4, 1), maximize=True)),
    ("ASGD", dict(lr=0.01)),
    ("ASGD", dict(lr=0.01, t0=50, lambd=1e-2, alpha=0.5, weight_decay=0.1)),
    ("Adafactor", dict(lr=0.01)),
    ("Adafactor", dict(lr=0.01, weight_decay=0.1, beta2_decay=-0.5, d=2.0, eps=(1e-3, 1e-3),
                       maximize=True)),
]
IDS = [f"{n}-{i}" for i, (n, _) in enumerate(CASES)]


@pytest.mark.parametrize("name,kwargs", CASES, ids=IDS)
def test_float64_trajectory_matches_torch(name, kwargs):
    torch = _torch()
    ours, _ = _run(ndgrad, name, kwargs, "float64")
    ref, _ = _run(torch, name, kwargs, "float64")
    for a, b in zip(ours, ref):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("name,kwargs", CASES, ids=IDS)
def test_float32_trajectory_follows_torchs_rounding(name, kwargs):
    # PyTorch's operation order and fused multiply-adds: after 200 float32 steps the parameters
    # agree to PyTorch's rounding. The remaining differences are single ulps from PyTorch's
    # vectorized sqrt (not always correctly rounded) and its float32 norms (Adafactor).
    torch = _torch()
    ours, _ = _run(ndgrad, name, kwargs, "float32")
    ref, _ = _run(torch, name, kwargs, "float32")
    assert ours[-1][0].dtype == np.float32
    for a, b in zip(ours, ref):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=3e-5 if name == "Adafactor" else 5e-6,
                                       atol=1e-6)
    if name != "Adafactor" and _fma_cpu(torch):
        final = np.concatenate([(x == y).ravel() for x, y in zip(ours[-1], ref[-1])])
        if name in ("SGD", "Rprop", "ASGD", "Adamax"):
            assert final.all()      # no sqrt on the path: bit for bit
        elif torch.backends.cpu.get_cpu_capability() == "AVX2":
            assert final.mean() >= 0.9, final.mean()
        else:  # PyTorch's AVX512 sqrt differs from the correctly rounded one in more elements
            # (measured: after one step 95-100 % agree, after 200 steps 47-97 %)
            first = np.concatenate([(x == y).ravel() for x, y in zip(ours[0], ref[0])])
            assert first.mean() >= 0.9, first.mean()


@pytest.mark.parametrize("name,kwargs", [("SGD", dict(lr=0.01, momentum=0.9)),
                                         ("Adam", dict(lr=0.01, amsgrad=True)),
                                         ("AdamW", dict(lr=0.01)),
                                         ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)),
                                         ("Adagrad", dict(lr=0.1)), ("Adadelta", dict()),
                                         ("Adamax", dict(lr=0.01)), ("NAdam", dict(lr=0.01)),
                                         ("RAdam", dict(lr=0.01)), ("Rprop", dict(lr=0.01)),
                                         ("ASGD", dict(lr=0.01))])
def test_complex_parameters_are_pairs_of_reals_as_in_torch(name, kwargs):
    torch = _torch()
    ours, _ = _run(ndgrad, name, kwargs, "complex128", steps=20, complex_=True)
    ref, _ = _run(torch, name, kwargs, "complex128", steps=20, complex_=True)
    for a, b in zip(ours, ref):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("name,kwargs", [("Adam", dict(lr=0.01, foreach=True)),
                                         ("Adam", dict(lr=0.01, fused=True)),
                                         ("AdamW", dict(lr=0.01, fused=True, amsgrad=True)),
                                         ("SGD", dict(lr=0.01, momentum=0.9, fused=True)),
                                         ("SGD", dict(lr=0.01, momentum=0.9, foreach=True)),
                                         ("Adagrad", dict(lr=0.1, fused=True)),
                                         ("RMSprop", dict(lr=0.01, foreach=True)),
                                         ("NAdam", dict(lr=0.01, foreach=True)),
                                         ("RAdam", dict(lr=0.01, foreach=True)),
                                         ("Adamax", dict(lr=0.01, foreach=True)),
                                         ("Rprop", dict(lr=0.01, foreach=True)),
                                         ("Adadelta", dict(foreach=True)),
                                         ("Adafactor", dict(foreach=True))])
def test_foreach_and_fused_give_the_same_updates(name, kwargs):
    # PyTorch's multi-tensor and fused kernels compute the same update as its per-tensor loop
    # (up to rounding); ndgrad's one loop stands in for all three and keeps the flag.
    torch = _torch()
    ours, o1 = _run(ndgrad, name, kwargs, "float64", steps=30)
    ref, o2 = _run(torch, name, kwargs, "float64", steps=30)
    for a, b in zip(ours, ref):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)
    assert o1.defaults == o2.defaults


ALL = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
       "Rprop", "ASGD", "Adafactor"]


@pytest.mark.parametrize("name", ALL)
def test_defaults_and_state_dict_layout_match_torch(name):
    torch = _torch()
    kw = dict(lr=0.01, momentum=0.9) if name in ("SGD", "RMSprop") else dict(lr=0.01)
    _, o1 = _run(ndgrad, name, kw, "float32", steps=3)
    _, o2 = _run(torch, name, kw, "float32", steps=3)
    assert o1.defaults == o2.defaults
    s1, s2 = o1.state_dict(), o2.state_dict()
    assert s1["param_groups"] == s2["param_groups"]
    assert s1["state"].keys() == s2["state"].keys()
    for k in s1["state"]:
        assert list(s1["state"][k]) == list(s2["state"][k])
        for key, v in s1["state"][k].items():
            ref = s2["state"][k][key]
            assert isinstance(v, ndgrad.Tensor) == isinstance(ref, torch.Tensor), key
            assert str(v.dtype) == str(ref.dtype), key
            assert tuple(v.shape) == tuple(ref.shape), key
            np.testing.assert_allclose(v.numpy(), ref.numpy(), rtol=1e-5, atol=1e-7)
    assert repr(o1) == repr(o2)


@pytest.mark.parametrize("name", ALL)
def test_torch_state_dict_loads_into_ndgrad_and_resumes(name):
    # a checkpoint written by PyTorch (its state_dict, tensors converted) resumes in ndgrad
    torch = _torch()
    kw = dict(lr=0.01, momentum=0.9) if name in ("SGD", "RMSprop") else dict(lr=0.01)
    _, o2 = _run(torch, name, kw, "float64", steps=5)
    sd = o2.state_dict()
    conv = {"param_groups": copy.deepcopy(sd["param_groups"]),
            "state": {k: {kk: ndgrad.tensor(vv.numpy()) if isinstance(vv, torch.Tensor) else vv
                          for kk, vv in st.items()} for k, st in sd["state"].items()}}
    params = [ndgrad.tensor(p.detach().numpy(), requires_grad=True)
              for g in o2.param_groups for p in g["params"]]
    o1 = getattr(optim, name)(params, **kw)
    o1.load_state_dict(conv)
    grads = [np.linspace(-1, 1, p.numel()).reshape(tuple(p.shape)) for p in params]
    for p, g in zip(params, grads):
        p.grad = ndgrad.tensor(g)
    for g_, p in zip(grads, [p for g in o2.param_groups for p in g["params"]]):
        p.grad = torch.tensor(g_)
    ref_params = [p for g in o2.param_groups for p in g["params"]]
    o3 = getattr(torch.optim, name)(ref_params, **kw)     # PyTorch loading its own checkpoint
    o3.load_state_dict(sd)
    o1.step()
    o3.step()
    for a, b in zip(params, ref_params):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-13)
    for k, v in o1.state[params[0]].items():
        assert str(v.dtype) == str(o3.state[ref_params[0]][k].dtype)


@pytest.mark.parametrize("name,kwargs", [
    ("Adamax", dict(lr=-1)), ("Adamax", dict(eps=-1)), ("Adamax", dict(betas=(1.0, 0.9))),
    ("Adamax", dict(betas=(0.9, -0.1))), ("Adamax", dict(weight_decay=-1)),
    ("NAdam", dict(lr=-1)), ("NAdam", dict(momentum_decay=-1)), ("NAdam", dict(betas=(0.9, 1))),
    ("RAdam", dict(eps=-1)), ("RAdam", dict(weight_decay=-0.5)),
    ("Rprop", dict(lr=-1)), ("Rprop", dict(etas=(1.1, 1.2))), ("Rprop", dict(etas=(0.5, 0.9))),
    ("ASGD", dict(lr=-1)), ("ASGD", dict(weight_decay=-1)),
    ("Adafactor", dict(lr=-1)), ("Adafactor", dict(beta2_decay=0.5)),
    ("Adafactor", dict(eps=(-1, 1e-3))), ("Adafactor", dict(eps=(None, -1))),
    ("Adafactor", dict(d=0.5)), ("Adafactor", dict(weight_decay=-1)),
    ("SparseAdam", dict(lr=0)), ("SparseAdam", dict(eps=0)), ("SparseAdam", dict(betas=(1, 0))),
    ("Muon", dict(lr=-1)), ("Muon", dict(momentum=-1)), ("Muon", dict(weight_decay=-1)),
    ("Muon", dict(adjust_lr_fn="bogus")),
    ("Adam", dict(betas=(0.9, 1))), ("Adam", dict(fused=True, foreach=True)),
    ("Adam", dict(fused=True, differentiable=True)), ("SGD", dict(fused=True, foreach=True)),
    ("Adagrad", dict(fused=True, differentiable=True)),
    ("Adam", dict(lr="tensor2")), ("SGD", dict(lr="tensor2")), ("NAdam", dict(lr="tensor2")),
])
def test_construction_errors_match_torch(name, kwargs):
    torch = _torch()

    def build(lib):
        kw = {k: (lib.tensor([0.1, 0.2]) if v == "tensor2" else v) for k, v in kwargs.items()}
        kw.setdefault("lr", 0.01)
        try:
            getattr(lib.optim, name)([lib.zeros(2, 2, requires_grad=True)], **kw)
        except Exception as e:   # noqa: BLE001 - compared below
            return type(e).__name__, str(e)
        return None
    ref = build(torch)
    assert ref is not None
    assert build(ndgrad) == ref


@pytest.mark.parametrize("name", ["Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop",
                                  "Adadelta", "ASGD", "Rprop"])
def test_capturable_on_cpu_raises_torchs_error(name):
    torch = _torch()

    def err(lib):
        p = lib.ones(2, requires_grad=True)
        p.grad = lib.ones(2)
        opt = getattr(lib.optim, name)([p], capturable=True)
        with pytest.raises(AssertionError) as info:
            opt.step()
        return str(info.value)
    assert err(ndgrad) == err(torch)


def test_tensor_lr_and_betas():
    torch = _torch()

    def run(lib):
        p = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
        q = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
        opt = lib.optim.Adam([p], lr=lib.tensor([0.05]))
        opt2 = lib.optim.Adam([q], lr=0.05, betas=(lib.tensor(0.8), lib.tensor([0.9])))
        for _ in range(5):
            p.grad = p * p
            q.grad = q * q
            opt.step()
            opt2.step()
        return (p.detach().numpy(), q.detach().numpy(),
                [(tuple(b.shape), float(b)) for b in opt2.param_groups[0]["betas"]])
    (a, qa, ba), (b, qb, bb) = run(ndgrad), run(torch)
    np.testing.assert_allclose(a, b, rtol=1e-14)     # a float32 lr: float32 step sizes
    np.testing.assert_allclose(qa, qb, rtol=1e-7)
    assert ba == bb


def test_sparse_adam_refuses_dense_gradients_like_torch():
    torch = _torch()

    def run(lib):
        p = lib.ones(3, requires_grad=True)
        opt = lib.optim.SparseAdam([p], lr=0.1)
        p.grad = lib.ones(3)
        with pytest.raises(RuntimeError) as info:
            opt.step()
        return str(info.value), opt.defaults
    assert run(ndgrad) == run(torch)
    assert run(ndgrad)[0] == ("SparseAdam does not support dense gradients, please consider "
                              "Adam instead")
    with pytest.raises(ValueError, match="SparseAdam does not support complex parameters"):
        optim.SparseAdam([ndgrad.zeros(2, dtype=ndgrad.complex64, requires_grad=True)])


@pytest.mark.parametrize("kwargs", [dict(), dict(nesterov=False, weight_decay=0.0),
                                    dict(adjust_lr_fn="match_rms_adamw", momentum=0.8),
                                    dict(ns_steps=3, lr=0.02)])
@pytest.mark.parametrize("shape", [(6, 4), (3, 8)])
def test_muon_tracks_torch(kwargs, shape):
    # Muon orthogonalizes in bfloat16: ndgrad rounds each intermediate to bfloat16 as PyTorch's
    # kernels do, so trajectories agree to bfloat16's precision, not float32's
    torch = _torch()
    ours, o1 = _run(ndgrad, "Muon", kwargs, "float32", steps=20, shapes=(shape,))
    ref, o2 = _run(torch, "Muon", kwargs, "float32", steps=20, shapes=(shape,))
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a[0], b[0], rtol=2e-3, atol=2e-4)
    assert o1.defaults == o2.defaults
    assert list(o1.state[o1.param_groups[0]["params"][0]]) == ["momentum_buffer"]


def test_muon_errors_match_torch():
    torch = _torch()
    for lib in (ndgrad, torch):
        with pytest.raises(ValueError, match=r"Muon only supports 2D parameters whereas we found "
                                             r"a parameter with size: torch.Size\(\[3\]\)"):
            lib.optim.Muon([lib.zeros(3, requires_grad=True)])
        p = lib.zeros(2, 2, requires_grad=True)
        p.grad = lib.ones(2, 2)
        with pytest.raises(ValueError, match="Number of steps must be less than 100"):
            lib.optim.Muon([p], ns_steps=100).step()


def test_step_hooks_can_replace_arguments_and_global_hooks_run_for_every_optimizer():
    torch = _torch()
    for lib in (ndgrad, torch):
        calls = []
        p = lib.ones(2, requires_grad=True)
        p.grad = lib.ones(2)
        opt = lib.optim.SGD([p], lr=0.1)
        mod = importlib.import_module(lib.__name__ + ".optim.optimizer")
        h_global = mod.register_optimizer_step_pre_hook(
            lambda o, a, k: calls.append("global-pre"))
        h_post = mod.register_optimizer_step_post_hook(
            lambda o, a, k: calls.append("global-post"))
        opt.register_step_pre_hook(lambda o, a, k: ((a[0],), {"closure": lambda: 7.0}))
        opt.register_step_post_hook(lambda o, a, k: calls.append(("post", k["closure"]())))
        assert opt.step() == 7.0
        h_global.remove()
        h_post.remove()
        opt.step()
        assert calls == ["global-pre", ("post", 7.0), "global-post", ("post", 7.0)]
        seen = []
        opt.register_step_post_hook(lambda o, a, k: seen.append((a[0] is o, a[1:], k)))
        opt.step()
        assert [(a, b, list(k)) for a, b, k in seen] == [(True, (), ["closure"])]
        opt.register_step_pre_hook(lambda o, a, k: 3)
        with pytest.raises(RuntimeError, match=r"must return None or a tuple of \(new_args, "
                                               r"new_kwargs\), but got 3."):
            opt.step()


def test_state_dict_hooks_as_torch():
    torch = _torch()
    for lib in (ndgrad, torch):
        p = lib.ones(2, requires_grad=True)
        p.grad = lib.ones(2)
        opt = lib.optim.Adam([p], lr=0.1)
        opt.step()
        calls = []
        opt.register_state_dict_pre_hook(lambda o: calls.append("pre"))
        opt.register_state_dict_pre_hook(lambda o: calls.append("pre-first"), prepend=True)

        def post(o, sd):
            calls.append("post")
            sd = dict(sd)
            sd["extra"] = 1
            return sd
        h = opt.register_state_dict_post_hook(post)
        sd = opt.state_dict()
        assert sd["extra"] == 1 and calls == ["pre-first", "pre", "post"]
        h.remove()
        assert "extra" not in opt.state_dict()

        def load_pre(o, sd):
            sd["param_groups"][0]["lr"] = 0.5
            return sd
        opt.register_load_state_dict_pre_hook(load_pre)
        opt.register_load_state_dict_post_hook(lambda o: calls.append(("loaded",
                                                                       o.param_groups[0]["lr"])))
        opt.load_state_dict(opt.state_dict())
        assert calls[-1] == ("loaded", 0.5)


def test_swap_in_optimizer_params_and_state_as_torch():
    torch = _torch()

    def run(lib):
        p = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        opt = lib.optim.Adam([p], lr=0.1)
        p.grad = lib.ones(2, dtype=lib.float64)
        opt.step()
        sd = opt.state_dict()
        other = lib.tensor([5.0, -5.0], dtype=lib.float64, requires_grad=True)
        other.grad = lib.tensor([0.5, 0.25], dtype=lib.float64)
        swap_sd = {"state": {0: {k: v.clone() for k, v in sd["state"][0].items()}},
                   "param_groups": [dict(sd["param_groups"][0], lr=0.01)]}
        with lib.optim.swap_in_optimizer_params_and_state(opt, {"w": other}, swap_sd):
            assert opt.param_groups[0]["params"][0] is other
            opt.step()
        assert opt.param_groups[0]["params"][0] is p and opt.param_groups[0]["lr"] == 0.1
        errors = []
        for bad in ({"state": [], "param_groups": []},
                    {"state": {}, "param_groups": [{"params": [0, 1]}]},
                    {"state": {3: {}}, "param_groups": [dict(sd["param_groups"][0])]}):
            with pytest.raises(RuntimeError) as info:
                with lib.optim.swap_in_optimizer_params_and_state(opt, {"w": other}, bad):
                    pass
            errors.append(str(info.value))
        return (other.detach().numpy(), swap_sd["state"][0]["exp_avg"].numpy(),
                p.detach().numpy(), errors)
    a, b = run(ndgrad), run(torch)
    for x, y in zip(a[:3], b[:3]):
        np.testing.assert_allclose(x, y, rtol=1e-12)
    assert a[3] == b[3]


# ------------------------------------------------------------------------------ swa_utils

def _swa_model(lib):
    rng = np.random.default_rng(3)
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.ReLU(),
                            lib.nn.Linear(4, 2))
    with lib.no_grad():
        for p in net.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)), dtype=lib.float32))
    return net


@pytest.mark.parametrize("mode", ["swa", "ema_avg_fn", "ema_multi", "swa_avg_fn", "swa_multi",
                                  "use_buffers"])
def test_averaged_model_matches_torch(mode):
    torch = _torch()

    def run(lib):
        su = lib.optim.swa_utils
        net = _swa_model(lib)
        kw = {"swa": {}, "ema_avg_fn": dict(avg_fn=su.get_ema_avg_fn(0.9)),
              "ema_multi": dict(multi_avg_fn=su.get_ema_multi_avg_fn(0.8)),
              "swa_avg_fn": dict(avg_fn=su.get_swa_avg_fn()),
              "swa_multi": dict(multi_avg_fn=su.get_swa_multi_avg_fn()),
              "use_buffers": dict(use_buffers=True, multi_avg_fn=su.get_ema_multi_avg_fn(0.5))
              }[mode]
        avg = su.AveragedModel(net, **kw)
        opt = lib.optim.SGD(net.parameters(), lr=0.1)
        rng = np.random.default_rng(4)
        for _ in range(5):
            x = lib.tensor(rng.standard_normal((8, 3)), dtype=lib.float32)
            opt.zero_grad()
            net(x).square().mean().backward()
            opt.step()
            avg.update_parameters(net)
        x = lib.tensor(rng.standard_normal((4, 3)), dtype=lib.float32)
        avg.eval()
        return ([t.detach().numpy() for t in avg.state_dict().values()],
                list(avg.state_dict()), avg(x).detach().numpy(), int(avg.n_averaged))
    a, b = run(ndgrad), run(torch)
    assert a[1] == b[1] and a[3] == b[3] == 5
    for x, y in zip(a[0] + [a[2]], b[0] + [b[2]]):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)


def test_avg_fn_errors_and_both_fns():
    torch = _torch()
    for lib in (ndgrad, torch):
        su = lib.optim.swa_utils
        for fn in (su.get_ema_avg_fn, su.get_ema_multi_avg_fn):
            with pytest.raises(ValueError, match=r"Invalid decay value 1.5 provided. Please "
                                                 r"provide a value in \[0,1\] range."):
                fn(1.5)
        with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
            su.AveragedModel(lib.nn.Linear(1, 1), avg_fn=su.get_swa_avg_fn(),
                             multi_avg_fn=su.get_swa_multi_avg_fn())


@pytest.mark.parametrize("kw", [dict(swa_lr=0.05), dict(swa_lr=[0.05, 0.2], anneal_epochs=3),
                                dict(swa_lr=0.01, anneal_strategy="linear", anneal_epochs=4),
                                dict(swa_lr=0.02, anneal_epochs=0)])
def test_swalr_matches_torch(kw):
    torch = _torch()

    def run(lib):
        a = lib.zeros(2, requires_grad=True)
        b = lib.zeros(2, requires_grad=True)
        opt = lib.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.3}], lr=0.1)
        sched = lib.optim.swa_utils.SWALR(opt, **kw)
        lrs = []
        for _ in range(8):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr())
        sd = sched.state_dict()
        sched2 = lib.optim.swa_utils.SWALR(opt, swa_lr=1.0)
        sched2.load_state_dict(sd)
        return lrs, sorted(sd), sched2.anneal_func(0.5)
    a, b = run(ndgrad), run(torch)
    np.testing.assert_allclose(a[0], b[0], rtol=1e-12)
    assert a[1] == b[1] and a[2] == b[2]


def test_swalr_errors_match_torch():
    torch = _torch()
    for lib in (ndgrad, torch):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1)
        with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear', "
                                             "instead got exp"):
            lib.optim.swa_utils.SWALR(opt, 0.1, anneal_strategy="exp")
        with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0, "
                                             "got -1"):
            lib.optim.swa_utils.SWALR(opt, 0.1, anneal_epochs=-1)
        with pytest.raises(ValueError, match="swa_lr must have the same length"):
            lib.optim.swa_utils.SWALR(opt, [0.1, 0.2])
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.optim.swa_utils.SWALR(opt, 0.1).get_lr()
        assert "please use `get_last_lr()`" in str(w[-1].message)


def test_update_bn_matches_torch():
    torch = _torch()

    def run(lib):
        net = _swa_model(lib)
        bn = net[1]
        bn.momentum = 0.3
        rng = np.random.default_rng(5)
        data = [(lib.tensor(rng.standard_normal((6, 3)), dtype=lib.float32), 0)
                for _ in range(4)]
        net.eval()
        lib.optim.swa_utils.update_bn(data, net)
        return (bn.running_mean.numpy(), bn.running_var.numpy(), int(bn.num_batches_tracked),
                bn.momentum, net.training)
    a, b = run(ndgrad), run(torch)
    np.testing.assert_allclose(a[0], b[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a[1], b[1], rtol=1e-5, atol=1e-6)
    assert a[2:] == b[2:] == (4, 0.3, False)
    optim.swa_utils.update_bn([ndgrad.ones(2, 1)], ndgrad.nn.Linear(1, 1))   # no BN: a no-op


def test_every_torch_optimizer_name_exists():
    torch = _torch()
    assert sorted(set(torch.optim.__all__) - set(optim.__all__)) == []
    assert sorted(torch.optim.swa_utils.__all__) == sorted(optim.swa_utils.__all__)


def _polynomial_tutorial(lib, steps, grads=None):
    """PyTorch's polynomial_optim tutorial (third-order polynomial fit of sin on 2000 points,
    RMSprop lr=1e-3, MSELoss(reduction='sum')), float32, the same initial weights in both
    libraries; `grads`: gradients to use instead of the library's own (per step)."""
    import math
    x = lib.linspace(-math.pi, math.pi, 2000)
    xx = x.unsqueeze(-1).pow(lib.tensor([1, 2, 3]))
    y = lib.sin(x)
    model = lib.nn.Sequential(lib.nn.Linear(3, 1), lib.nn.Flatten(0, 1))
    with lib.no_grad():
        model[0].weight.copy_(lib.tensor([[0.1, -0.2, 0.05]]))
        model[0].bias.copy_(lib.tensor([0.3]))
    loss_fn = lib.nn.MSELoss(reduction="sum")
    opt = lib.optim.RMSprop(model.parameters(), lr=1e-3)
    losses, seen = [], []
    for t in range(steps):
        if grads is not None:     # the optimizer alone
            for p, g in zip(model.parameters(), grads[t]):
                p.grad = lib.tensor(g)
            opt.step()
            continue
        loss = loss_fn(model(xx), y)
        losses.append(loss.item())
        opt.zero_grad()
        loss.backward()
        seen.append([p.grad.numpy().copy() for p in model.parameters()])
        opt.step()
    return losses, seen, [p.detach().numpy() for p in model.parameters()]


def test_rmsprop_long_float32_trajectory_is_torchs(monkeypatch):
    # Issue 31: the tutorial's float32 RMSprop loss drifted 0.35 % from PyTorch's after 1,400
    # steps. Fed PyTorch's gradients (and PyTorch's MKL sqrt, the one kernel ndgrad rounds
    # differently), ndgrad's RMSprop gives PyTorch's parameters bit for bit over 2,000 steps:
    # the update's operation order is PyTorch's. What remains of the end-to-end drift is the
    # float32 forward and backward: the MSE sum and the weight gradient reduce 2,000 terms in
    # NumPy's and BLAS's order, not PyTorch's (a last-bit difference at step 0), which RMSprop's
    # fixed-step oscillation around the optimum amplifies.
    torch = _torch()
    from ndgrad.ops import _fma

    def mkl_sqrt(x, out=None):
        r = torch.from_numpy(np.ascontiguousarray(x)).sqrt().numpy()
        if out is None:
            return r
        out[...] = r
        return out
    ref_losses, ref_grads, ref_params = _polynomial_tutorial(torch, 2000)
    monkeypatch.setattr(_fma, "sqrt", mkl_sqrt)
    _, _, params = _polynomial_tutorial(ndgrad, 2000, grads=ref_grads)
    for a, b in zip(params, ref_params):
        assert np.array_equal(a, b)
    monkeypatch.undo()
    losses, _, _ = _polynomial_tutorial(ndgrad, 1400)
    assert abs(losses[0] - ref_losses[0]) <= 1e-6 * ref_losses[0]
    for t in (99, 499, 999, 1399):
        assert abs(losses[t] - ref_losses[t]) <= 1e-2 * ref_losses[t], t


def test_functional_forms_and_tensor_lr_schedules_as_torch():
    torch = _torch()
    rng = np.random.default_rng(3)
    p0, g0 = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    out = []
    for L in (ndgrad, torch):
        p, g = L.tensor(p0), L.tensor(g0)
        m, v = L.zeros_like(p), L.zeros_like(p)
        step = L.tensor(0.0)
        adam = importlib.import_module(L.__name__ + ".optim.adam").adam
        functional = importlib.import_module(L.__name__ + ".optim._functional")
        with L.no_grad():
            adam([p], [g], [m], [v], [], [step], amsgrad=False, beta1=0.9, beta2=0.99, lr=0.1,
                 weight_decay=0.0, eps=1e-8, maximize=False)
            functional.sgd([p], [g], [None], weight_decay=0.0, momentum=0.0, lr=0.1,
                           dampening=0.0, nesterov=False, maximize=False)
        out.append((p.numpy().copy(), m.numpy().copy(), step.item()))
        # a Tensor lr stays the same tensor, filled in place by the scheduler
        w = L.zeros(2, requires_grad=True)
        lr = L.tensor(0.5)
        opt = L.optim.SGD([w], lr=lr)
        sched = L.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
        w.grad = L.ones(2)
        opt.step()
        sched.step()
        assert opt.param_groups[0]["lr"] is lr
        out.append((lr.item(), w.detach().numpy().copy(),
                    [float(x) for x in sched.get_last_lr()]))
    for a, b in zip(out[:2], out[2:]):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
