"""The internals libraries built on PyTorch read (torch.jit, torch._C, torch.compiler,
torch._dynamo, torch.utils.hooks, torch.overrides, torch.futures generics, private helpers,
constraint classes), each against PyTorch where PyTorch defines an answer."""
import io
import typing
import warnings

import pytest

import ndgrad
import ndgrad.nn as nn


def test_jit_pass_throughs_run_the_python():
    m = nn.Linear(3, 2)
    assert ndgrad.jit.script(m) is m

    def f(x):
        return x * 2
    assert ndgrad.jit.script(f) is f
    seen = []

    def g(x):
        seen.append(ndgrad.jit.is_tracing())
        return x + 1
    assert ndgrad.jit.trace(g, (ndgrad.ones(2),)) is g
    assert seen == [True] and not ndgrad.jit.is_tracing()
    assert ndgrad._C._get_tracing_state() is None
    assert ndgrad.jit.trace(m, ndgrad.ones(1, 3)) is m
    assert not ndgrad.jit.is_scripting()
    fut = ndgrad.jit.fork(lambda a, b: a + b, 2, 3)
    assert ndgrad.jit.wait(fut) == 5
    assert ndgrad.jit.annotate(typing.List[int], [1]) == [1]
    assert ndgrad.jit.isinstance([1, 2], typing.List[int])
    assert not ndgrad.jit.isinstance([1, "a"], typing.List[int])
    assert ndgrad.jit.isinstance({"a": ndgrad.ones(1)}, typing.Dict[str, ndgrad.Tensor])
    assert ndgrad.jit.isinstance(None, typing.Optional[int])
    with pytest.raises(RuntimeError, match="must be a bool or a function"):
        ndgrad.jit.ignore("yes")

    class M(ndgrad.jit.ScriptModule):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)

        @ndgrad.jit.script_method
        def forward(self, x):
            return self.fc(x)

        @ndgrad.jit.export
        def other(self, x):
            return x

        @ndgrad.jit.unused
        def unused(self, x):
            return x
    s = M()
    assert isinstance(s, nn.Module) and s(ndgrad.ones(1, 2)).shape == (1, 2)
    from ndgrad._jit_internal import FunctionModifiers, get_torchscript_modifier
    assert get_torchscript_modifier(M.other) is FunctionModifiers.EXPORT
    assert get_torchscript_modifier(M.unused) is FunctionModifiers.UNUSED


def test_jit_modifiers_match_pytorchs():
    torch = pytest.importorskip("torch")
    from torch._jit_internal import get_torchscript_modifier as ref_mod
    from ndgrad._jit_internal import get_torchscript_modifier as nd_mod
    for deco in ("export", "unused", "ignore"):
        def f(x):
            return x
        def g(x):
            return x
        getattr(torch.jit, deco)(f)
        getattr(ndgrad.jit, deco)(g)
        assert ref_mod(f) == nd_mod(g)
    assert torch._jit_internal._qualified_name(test_jit_modifiers_match_pytorchs) == \
        ndgrad._jit_internal._qualified_name(test_jit_modifiers_match_pytorchs)


def test_jit_save_load_round_trip_and_torchscript_refused(tmp_path):
    m = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    path = tmp_path / "m.pt"
    ndgrad.jit.save(m, str(path), _extra_files={"note": "hi"})
    extra = {"note": ""}
    back = ndgrad.jit.load(str(path), _extra_files=extra)
    assert extra["note"] == "hi"
    x = ndgrad.randn(4, 2)
    assert ndgrad.equal(back(x), m(x))
    torch = pytest.importorskip("torch")
    ts = tmp_path / "ts.pt"
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), str(ts))
    with pytest.raises(RuntimeError, match="TorchScript archive"):
        ndgrad.jit.load(str(ts))


def test_compiler_and_dynamo_are_identity():
    def f(x):
        return x
    for deco in (ndgrad.compiler.disable, ndgrad._dynamo.disable, ndgrad.compiler.allow_in_graph,
                 ndgrad._dynamo.assume_constant_result):
        assert deco(f) is f
    assert ndgrad.compiler.disable()(f) is f and ndgrad._dynamo.disable(recursive=False)(f) is f
    assert not ndgrad.compiler.is_compiling() and not ndgrad._dynamo.is_compiling()
    assert not ndgrad.compiler.is_dynamo_compiling() and not ndgrad.compiler.is_exporting()
    assert ndgrad._dynamo.optimize("eager")(f) is f
    cfg = ndgrad._dynamo.config
    assert cfg.cache_size_limit == 8
    with cfg.patch(cache_size_limit=3):
        assert cfg.cache_size_limit == 3
    assert cfg.cache_size_limit == 8

    @cfg.patch("verbose", True)
    def read():
        return cfg.verbose
    assert read() is True and cfg.verbose is False
    with pytest.raises(AttributeError):
        cfg.no_such_setting
    import importlib
    assert importlib.import_module("ndgrad._dynamo.config") is cfg
    assert isinstance(ndgrad._dynamo.exc.Unsupported("x"), RuntimeError)
    torch = pytest.importorskip("torch")
    assert sorted(k for k in torch._dynamo.config.get_config_copy()
                  if k in cfg.get_config_copy()) == sorted(
        k for k in cfg.get_config_copy() if k in torch._dynamo.config.get_config_copy())
    for k in ("verbose", "cache_size_limit", "suppress_errors", "capture_scalar_outputs"):
        assert getattr(torch._dynamo.config, k) == getattr(cfg, k)


def test_removable_handle_is_one_class_with_pytorchs_api():
    from ndgrad.utils.hooks import RemovableHandle
    m = nn.Linear(2, 2)
    h1 = m.register_forward_hook(lambda *a: None)
    t = ndgrad.ones(2, requires_grad=True)
    h2 = t.register_hook(lambda g: g)
    h3 = (t * 2).grad_fn.register_hook(lambda gi, go: None)
    for h in (h1, h2, h3):
        assert isinstance(h, RemovableHandle)
    assert h2.id > h1.id and h3.id > h2.id
    h1.remove()
    h1.remove()                   # twice is harmless
    assert len(m._forward_hooks) == 0
    with m.register_forward_pre_hook(lambda *a: None):
        assert len(m._forward_pre_hooks) == 1
    assert len(m._forward_pre_hooks) == 0
    from collections import OrderedDict
    d, extra = OrderedDict(), OrderedDict()
    h = RemovableHandle(d, extra_dict=extra)
    d[h.id] = extra[h.id] = 1
    h.remove()
    assert not d and not extra


def test_backward_hook_helper_calls_module_hooks_as_pytorchs():
    torch = pytest.importorskip("torch")
    from ndgrad.utils.hooks import BackwardHook

    def run(lib, hooks_mod):
        lin = lib.nn.Linear(3, 2)
        seen = []
        bh = hooks_mod.BackwardHook(
            lin, [lambda m, gi, go: seen.append(("hook", [g is None for g in gi],
                                                    [tuple(g.shape) for g in go]))],
            [lambda m, go: seen.append(("pre", len(go)))])
        x = lib.ones(4, 3, requires_grad=True)
        (x2,) = bh.setup_input_hook((x,))
        out = bh.setup_output_hook(lin(x2))
        out.sum().backward()
        return seen
    assert run(ndgrad, ndgrad.utils.hooks) == run(torch, torch.utils.hooks)


class _Logged:
    """A non-Tensor type taking over torch functions (as linear_operator's LinearOperator)."""
    calls = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append(func.__name__)
        return "handled"


def test_overrides_protocol_helpers():
    from ndgrad import overrides
    x = ndgrad.ones(2)
    assert not overrides.has_torch_function((x, 1, None))
    assert overrides.has_torch_function((x, _Logged()))
    assert overrides.is_tensor_like(x) and overrides.is_tensor_like(_Logged())
    assert not overrides.is_tensor_like(3)

    def api(a, b):
        return "plain"
    assert overrides.handle_torch_function(api, (_Logged(),), _Logged(), 1) == "handled"
    with ndgrad._C.DisableTorchFunction():
        assert not overrides.has_torch_function((_Logged(),))

    class Refuses:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented
    with pytest.raises(TypeError, match="no implementation found for '.*api' on types that "
                       "implement __torch_function__"):
        overrides.handle_torch_function(api, (Refuses(),), Refuses(), 1)

    class Mode(overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return ("mode", func(*args, **(kwargs or {})))
    with Mode():
        assert overrides.has_torch_function((1,))
        assert overrides.handle_torch_function(api, (), 1, 2) == ("mode", "plain")
    assert not overrides.has_torch_function((1,))
    assert ndgrad.add in overrides.get_overridable_functions()[ndgrad]
    assert overrides.resolve_name(ndgrad.add) == "torch.add"
    assert ndgrad.zeros in overrides.get_ignored_functions()
    assert overrides.get_testing_overrides()[ndgrad.add](1, 2) == -1


def test_future_is_generic_and_private_helpers():
    assert ndgrad.futures.Future[int].__origin__ is ndgrad.futures.Future
    assert ndgrad.jit.Future is ndgrad.Future is ndgrad.futures.Future
    from ndgrad.distributions.utils import _sum_rightmost
    x = ndgrad.arange(24.).reshape(2, 3, 4)
    assert _sum_rightmost(x, 2).tolist() == x.reshape(2, -1).sum(-1).tolist()
    assert _sum_rightmost(x, 0) is x
    with pytest.raises(RuntimeError, match="Expected cond to be True"):
        ndgrad._check(False)
    with pytest.raises(ValueError, match="bad"):
        ndgrad._check_value(False, lambda: "bad")
    ndgrad._check(True)
    assert ndgrad.sym_int(3.7) == 3 and ndgrad.sym_max(2, 5) == 5
    assert ndgrad._shape_as_tensor(x).tolist() == [2, 3, 4]
    assert ndgrad.serialization.MAP_LOCATION is not None
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as e:
        torch._check(False)
    with pytest.raises(RuntimeError) as r:
        ndgrad._check(False)
    assert str(e.value) == str(r.value)


def test_distribution_get_checked_instance():
    D = ndgrad.distributions

    class MyNormal(D.Normal):
        def __init__(self, loc, scale, extra=1):
            super().__init__(loc, scale)

    with pytest.raises(NotImplementedError, match="must also define a custom .expand"):
        MyNormal(0.0, 1.0).expand((3,))

    class Plain(D.Normal):
        pass
    p = Plain(ndgrad.zeros(1), ndgrad.ones(1)).expand((3,))
    assert type(p) is Plain and p.batch_shape == (3,)


def test_constraints_are_pytorchs_classes():
    torch = pytest.importorskip("torch")
    C, R = ndgrad.distributions.constraints, torch.distributions.constraints
    names = ["boolean", "one_hot", "nonnegative_integer", "positive_integer", "real",
             "real_vector", "positive", "nonnegative", "unit_interval", "simplex",
             "lower_triangular", "lower_cholesky", "corr_cholesky", "square", "symmetric",
             "positive_semidefinite", "positive_definite", "dependent"]
    for n in names:
        c, r = getattr(C, n), getattr(R, n)
        assert type(c).__name__ == type(r).__name__ and repr(c) == repr(r), n
        if n != "dependent":
            assert (c.is_discrete, c.event_dim) == (r.is_discrete, r.event_dim), n
    for make in ("greater_than", "greater_than_eq", "less_than"):
        assert repr(getattr(C, make)(1.5)) == repr(getattr(R, make)(1.5))
    for make in ("interval", "half_open_interval", "integer_interval"):
        assert repr(getattr(C, make)(0, 3)) == repr(getattr(R, make)(0, 3))
    assert repr(C.independent(C.real, 2)) == repr(R.independent(R.real, 2))

    # subclassing as pyro does: super().__init__(lower_bound=...)
    class _SoftplusPositive(C._GreaterThan):
        def __init__(self):
            super().__init__(lower_bound=0.0)
    sp = _SoftplusPositive()
    assert repr(sp) == "SoftplusPositive(lower_bound=0.0)"
    assert sp.check(ndgrad.tensor([1.0, -1.0])).tolist() == [True, False]
    values = [[0.0, 1.0, 2.5, -1.0, float("nan")]]
    for n in ("boolean", "nonnegative_integer", "real", "positive", "nonnegative",
              "unit_interval"):
        got = getattr(C, n).check(ndgrad.tensor(values)).tolist()
        want = getattr(R, n).check(torch.tensor(values)).tolist()
        assert got == want, n


def test_state_dict_hooks_and_extra_state_match_pytorch():
    torch = pytest.importorskip("torch")

    def run(lib):
        log = []

        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = lib.nn.Linear(2, 2)
                self.counter = 3

            def get_extra_state(self):
                return {"counter": self.counter}

            def set_extra_state(self, state):
                self.counter = state["counter"]

        net = Net()
        net.register_state_dict_pre_hook(lambda m, prefix, keep: log.append(("pre", prefix)))
        net.fc.register_state_dict_post_hook(
            lambda m, sd, prefix, meta: log.append(("post", prefix, sorted(sd), meta)))
        net._register_state_dict_hook(lambda m, sd, prefix, meta: log.append(("priv", prefix)))
        sd = net.state_dict()
        log.append(("meta", dict(sd._metadata)))
        net.fc._register_load_state_dict_pre_hook(
            lambda sd, prefix, meta, *rest: log.append(("load-pre", prefix, meta)))
        net.fc.register_load_state_dict_pre_hook(
            lambda mod, sd, prefix, *rest: log.append(("load-pre-m", type(mod).__name__)))

        def post(mod, keys):
            log.append(("load-post", type(mod).__name__, list(keys.missing_keys)))
            keys.missing_keys.clear()
        net.register_load_state_dict_post_hook(post)
        other = Net()
        other.counter = 0
        sd2 = dict(sd)
        del sd2["fc.bias"]
        sd2 = type(sd)(sd2)
        sd2._metadata = sd._metadata
        other.register_load_state_dict_post_hook(post)
        res = other.load_state_dict(sd2)
        log.append(("result", list(res.missing_keys), other.counter))
        return log

    assert run(ndgrad) == run(torch)


def test_library_custom_op_with_autograd_and_ops_namespace():
    lib = ndgrad.library

    def scale(x, s):
        return x * s
    op = lib.custom_op("ndgradtest::scale", scale, mutates_args=())
    lib.register_fake("ndgradtest::scale", lambda x, s: x.new_empty(x.shape))

    def setup(ctx, inputs, output):
        ctx.s = inputs[1]

    def backward(ctx, grad):
        return grad * ctx.s * 10, None          # a formula that differs, to see it used
    lib.register_autograd("ndgradtest::scale", backward, setup_context=setup)
    x = ndgrad.ones(3, requires_grad=True)
    y = ndgrad.ops.ndgradtest.scale(x, 2.0)
    assert y.tolist() == [2.0, 2.0, 2.0] and ndgrad.ops.ndgradtest.scale.default is op
    y.sum().backward()
    assert x.grad.tolist() == [20.0, 20.0, 20.0]
    L = lib.Library("ndgradtest2", "DEF")
    L.define("twice(Tensor x) -> Tensor")
    L.impl("twice", lambda x: x * 2, "CPU")
    assert ndgrad.ops.ndgradtest2.twice(ndgrad.ones(1)).tolist() == [2.0]
    with pytest.raises(AttributeError):
        ndgrad.ops.ndgradtest2.missing


def test_flex_attention_matches_sdpa_and_pytorch():
    from ndgrad.nn.attention.flex_attention import flex_attention, create_block_mask
    F = ndgrad.nn.functional
    q = ndgrad.randn(1, 2, 5, 4, dtype=ndgrad.float64)
    k = ndgrad.randn(1, 2, 5, 4, dtype=ndgrad.float64)
    v = ndgrad.randn(1, 2, 5, 4, dtype=ndgrad.float64)

    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx
    mask = create_block_mask(causal, None, None, 5, 5)
    out = flex_attention(q, k, v, block_mask=mask)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert ndgrad.allclose(out, ref)
    torch = pytest.importorskip("torch")
    from torch.nn.attention.flex_attention import flex_attention as tflex

    def bias(score, b, h, q_idx, kv_idx):
        return score + (q_idx - kv_idx) * 0.1
    got = flex_attention(q, k, v, score_mod=bias)
    want = tflex(*(torch.tensor(t.tolist(), dtype=torch.float64) for t in (q, k, v)),
                 score_mod=bias)
    assert abs(got.numpy() - want.numpy()).max() < 1e-10


def test_pytorch_device_types_are_values():
    assert str(ndgrad.device("meta")) == "meta" and ndgrad.device("meta") != ndgrad.device("cpu")
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda, ipu"):
        ndgrad.device("foo")


def test_is_view_is_a_method_as_pytorchs():
    torch = pytest.importorskip("torch")
    for lib in (torch, ndgrad):
        base = lib.ones(4)
        got = (base[1:]._is_view(), base._is_view(), base.view(2, 2)._is_view(),
               base.clone()._is_view())
        assert got == (True, False, True, False), lib
        x = lib.ones(3, requires_grad=True)
        lib.autograd.grad((x * x).sum(), x, create_graph=True)[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (x * x).sum().backward(create_graph=True)
        assert not x.grad._is_view() and x.grad.requires_grad, lib


def test_torch_nn_modules_submodules_as_pytorchs():
    """The nn.modules submodules libraries import from (kornia: batchnorm._BatchNorm), with
    PyTorch's public names and the private helpers of nn.modules.utils answering as PyTorch's."""
    import importlib
    torch = pytest.importorskip("torch")
    assert ndgrad.torch is ndgrad and torch.torch is torch
    assert ndgrad.nn.utils.__name__ == "ndgrad.nn.utils"   # (not nn.modules.utils)
    assert ndgrad.nn.utils.stateless.functional_call and ndgrad.nn.utils.clip_grad_norm_
    for sub in ("batchnorm", "instancenorm", "channelshuffle", "distance", "pixelshuffle",
                "utils"):
        theirs = importlib.import_module(f"torch.nn.modules.{sub}")
        ours = importlib.import_module(f"ndgrad.nn.modules.{sub}")
        assert sorted(ours.__all__) == sorted(theirs.__all__), sub
        for name in theirs.__all__:
            if sub != "utils":
                assert getattr(ours, name) is getattr(ndgrad.nn, name), (sub, name)
    from ndgrad.nn.modules.batchnorm import _BatchNorm, _NormBase
    assert isinstance(ndgrad.nn.BatchNorm2d(3), _BatchNorm)
    assert isinstance(ndgrad.nn.InstanceNorm2d(3), _NormBase)
    mu, tu = ndgrad.nn.modules.utils, torch.nn.modules.utils
    for f in ("_single", "_pair", "_triple", "_quadruple"):
        for arg in (3, (1, 2), [4, 5, 6]):
            assert getattr(mu, f)(arg) == getattr(tu, f)(arg)
        assert getattr(mu, f).__name__ == getattr(tu, f).__name__
    assert mu._reverse_repeat_tuple((1, 2, 3), 2) == tu._reverse_repeat_tuple((1, 2, 3), 2)
    for out in (5, [None, 3], [2, None]):
        assert mu._list_with_default(out, [1, 4, 6, 7]) == tu._list_with_default(out, [1, 4, 6, 7])
    with pytest.raises(ValueError, match="Input dimension should be at least 3"):
        mu._list_with_default([1, 2], [3, 4])
    with pytest.raises(ValueError, match="Input dimension should be at least 3"):
        tu._list_with_default([1, 2], [3, 4])
    sds = []
    for lib in (torch, ndgrad):
        sd = lib.nn.Sequential(lib.nn.Linear(2, 2)).state_dict()
        sd = type(sd)(("module." + k, v) for k, v in sd.items())
        sd._metadata = {"": {}, "module": {"v": 1}, "module.0": {"v": 1}}
        lib.nn.modules.utils.consume_prefix_in_state_dict_if_present(sd, "module.")
        sds.append((list(sd), sd._metadata))
    assert sds[0] == sds[1]


def test_fx_and_fake_tensor_answers_for_eager_code():
    torch = pytest.importorskip("torch")
    from ndgrad._subclasses.fake_tensor import is_fake
    from ndgrad.fx.experimental.proxy_tensor import get_proxy_mode
    assert not is_fake(ndgrad.ones(2)) and not torch._subclasses.fake_tensor.is_fake(torch.ones(2))
    assert get_proxy_mode() is None
    from torch.fx.experimental.proxy_tensor import get_proxy_mode as theirs
    assert theirs() is None

    def f(x):
        return x
    for lib in (ndgrad, torch):
        ns = {"wrap": lib.fx.wrap, "f": f}
        exec(compile("g = wrap(f)", "<library>", "exec"), ns)   # at a module's top level
        assert ns["g"] is f
        with pytest.raises(NotImplementedError, match="wrap must be called at the top level"):
            lib.fx.wrap(f)
    assert not ndgrad.fx._symbolic_trace.is_fx_tracing()
    assert not torch.fx._symbolic_trace.is_fx_tracing()


def test_legacy_constructors_take_a_size_as_a_shape():
    """torch.FloatTensor(t.shape) is an uninitialized tensor of that shape (einops' YOLO
    example, old detection code); a list or tuple is data."""
    torch = pytest.importorskip("torch")
    for name in ("Tensor", "FloatTensor", "DoubleTensor", "LongTensor", "IntTensor"):
        for args in ((torch.Size([2, 3]),), (torch.Size([]),), (torch.Size([0, 4]),), ((2, 3),),
                     ([2, 3],), (2, 3), ()):
            theirs = getattr(torch, name)(*args)
            nd_args = tuple(ndgrad.Size(a) if isinstance(a, torch.Size) else a for a in args)
            ours = getattr(ndgrad, name)(*nd_args)
            assert (tuple(ours.shape), str(ours.dtype)) == (tuple(theirs.shape),
                                                           str(theirs.dtype)), (name, args)
            if not isinstance(args[0] if args else None, torch.Size) and len(args) == 1:
                assert ours.tolist() == theirs.tolist()
    assert tuple(ndgrad.ones(2).new(ndgrad.Size([3, 1])).shape) == (3, 1)
