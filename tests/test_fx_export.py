"""torch.fx (symbolic tracing, graph edits, Interpreter/Transformer, ShapeProp) and
torch.export (capture, ExportedProgram, save/load), against eager ndgrad and PyTorch."""
import copy
import io
import math
import pickle

import numpy as np
import pytest

import ndgrad


def build(lib):
    nn, F = lib.nn, lib.nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 8)
            self.fc2 = nn.Linear(8, 3)

        def forward(self, x):
            return self.fc2(F.relu(self.fc1(x)))

    class ConvNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 3, 3, padding=1)
            self.bn = nn.BatchNorm2d(3)
            self.pool = nn.MaxPool2d(2)
            self.head = nn.Sequential(nn.Flatten(), nn.Linear(3 * 2 * 2, 5))

        def forward(self, x):
            x = self.pool(F.relu(self.bn(self.conv(x))))
            return self.head(x).log_softmax(dim=-1)

    class Block(nn.Module):
        """A transformer block: F.* calls, tensor methods, shapes read in Python."""

        def __init__(self, d=8, h=2):
            super().__init__()
            self.h = h
            self.ln1 = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.ln2 = nn.LayerNorm(d)
            self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
            self.scale = nn.Parameter(lib.ones(d))

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
            q = q.view(B, T, self.h, C // self.h).transpose(1, 2)
            k = k.view(B, T, self.h, C // self.h).transpose(1, 2)
            v = v.view(B, T, self.h, C // self.h).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) / math.sqrt(C // self.h)
            att = F.softmax(att, dim=-1)
            y = lib.matmul(att, v).transpose(1, 2).contiguous().view(B, T, C)
            x = x + self.proj(y) * self.scale
            return x + self.mlp(self.ln2(x))

    return {"MLP": (MLP, (2, 4)), "ConvNet": (ConvNet, (2, 1, 4, 4)),
            "Block": (Block, (2, 3, 8))}


MODELS = build(ndgrad)


def make(name, seed=0):
    cls, shape = MODELS[name]
    ndgrad.manual_seed(seed)
    m = cls().double()
    x = ndgrad.randn(*shape, dtype=ndgrad.float64)
    return m, x


def _same_params(m_from, m_to):
    m_to.load_state_dict(copy.deepcopy(m_from.state_dict()))


def _check_outputs_and_grads(eager, traced, x, traced_params):
    """traced(x) equals eager(x), and so do the gradients of the input and parameters."""
    xe = x.clone().requires_grad_()
    xt = x.clone().requires_grad_()
    ye, yt = eager(xe), traced(xt)
    np.testing.assert_allclose(yt.detach().numpy(), ye.detach().numpy(), rtol=1e-12, atol=1e-12)
    w = ndgrad.randn(*ye.shape, dtype=ye.dtype)
    (ye * w).sum().backward()
    (yt * w).sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), xe.grad.numpy(), rtol=1e-10, atol=1e-12)
    eager_params = dict(eager.named_parameters())
    for name, p in traced_params.items():
        np.testing.assert_allclose(p.grad.numpy(), eager_params[name].grad.numpy(),
                                   rtol=1e-10, atol=1e-12)


# --- torch.fx --------------------------------------------------------------------------------

def _node_list(gm):
    return [(n.op, n.target if isinstance(n.target, str) else n.target.__name__)
            for n in gm.graph.nodes]


@pytest.mark.parametrize("name", list(MODELS))
def test_symbolic_trace_matches_eager_and_pytorch_graph(name):
    m, x = make(name)
    m.eval()
    gm = ndgrad.fx.symbolic_trace(m)
    assert isinstance(gm, ndgrad.fx.GraphModule) and isinstance(gm, ndgrad.nn.Module)
    assert type(gm).__name__ == type(m).__name__
    # the GraphModule shares the traced module's parameters
    _check_outputs_and_grads(m, gm, x, dict(gm.named_parameters()))
    assert list(gm.state_dict()) == list(m.state_dict())
    torch = pytest.importorskip("torch")
    tm = build(torch)[name][0]()
    tgm = torch.fx.symbolic_trace(tm)
    assert _node_list(gm) == _node_list(tgm)
    assert [len(n.users) for n in gm.graph.nodes] == [len(n.users) for n in tgm.graph.nodes]
    assert [n.name for n in gm.graph.nodes] == [n.name for n in tgm.graph.nodes]
    assert list(gm.state_dict()) == list(tgm.state_dict())
    # the generated code, line for line, where the targets are not torch functions (PyTorch's
    # F.relu records torch.nn.functional.relu(x, inplace = False), ndgrad's torch.relu(x))
    assert _code_lines(gm) == _code_lines(tgm)


def _code_lines(gm):
    keep = {n.name for n in gm.graph.nodes if n.op != "call_function"
            or getattr(n.target, "__module__", None) in ("_operator", "math", "builtins")}
    return [ln for ln in gm.code.splitlines()
            if ln.strip().split(" = ")[0] in keep or ln.strip().startswith(("def ", "return"))]


def test_graph_module_code_and_printing():
    m, x = make("MLP")
    gm = ndgrad.fx.symbolic_trace(m)
    assert gm.code == ("\n\n\ndef forward(self, x):\n    fc1 = self.fc1(x);  x = None\n"
                       "    relu = torch.relu(fc1);  fc1 = None\n"
                       "    fc2 = self.fc2(relu);  relu = None\n    return fc2\n    ")
    text = gm.print_readable(print_output=False)
    assert text.startswith("class MLP(torch.nn.Module):\n    def forward(self, x):")
    assert str(gm.graph).splitlines()[:3] == [
        "graph():", "    %x : [num_users=1] = placeholder[target=x]",
        "    %fc1 : [num_users=1] = call_module[target=fc1](args = (%x,), kwargs = {})"]
    assert "# To see more debug info" in str(gm)
    gm2 = copy.deepcopy(gm)
    assert gm2.code == gm.code and gm2.fc1.weight is not gm.fc1.weight
    np.testing.assert_allclose(gm2(x).detach().numpy(), m(x).detach().numpy())
    gm3 = pickle.loads(pickle.dumps(gm))
    np.testing.assert_allclose(gm3(x).detach().numpy(), m(x).detach().numpy())
    gm.graph.lint()


def test_graph_edit_relu_to_gelu_and_recompile():
    F = ndgrad.nn.functional
    m, x = make("MLP")
    gm = ndgrad.fx.symbolic_trace(m)
    relus = [n for n in gm.graph.nodes if n.op == "call_function" and n.target is ndgrad.relu]
    assert len(relus) == 1
    relu = relus[0]
    with gm.graph.inserting_after(relu):
        gelu = gm.graph.call_function(F.gelu, (relu.args[0],))
    assert relu.replace_all_uses_with(gelu) == [n for n in gm.graph.nodes if n.name == "fc2"]
    gm.graph.erase_node(relu)
    gm.recompile()
    assert "gelu = torch.nn.functional.gelu(fc1)" in gm.code
    expected = m.fc2(F.gelu(m.fc1(x)))
    np.testing.assert_allclose(gm(x).detach().numpy(), expected.detach().numpy())
    fc1 = next(n for n in gm.graph.nodes if n.name == "fc1")
    with pytest.raises(RuntimeError, match="still had 1 users"):
        gm.graph.erase_node(fc1)
    # dead code goes
    with gm.graph.inserting_after(fc1):
        gm.graph.call_method("sum", (fc1,))
    assert gm.graph.eliminate_dead_code()
    assert [n.op for n in gm.graph.nodes].count("call_method") == 0


def test_tracing_errors_as_pytorch():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (ndgrad, torch):
        def branch(x):
            if x.sum() > 0:
                return x
            return -x

        def loop(x):
            return [t for t in x]

        def length(x):
            return len(x)
        errs = []
        for fn in (branch, loop, length):
            with pytest.raises(Exception) as e:
                lib.fx.symbolic_trace(fn)
            errs.append((type(e.value).__name__, str(e.value)))
        results.append(errs)
    assert results[0] == results[1]
    assert results[0][0][0] == "TraceError"
    assert issubclass(ndgrad.fx.proxy.TraceError, ValueError)


def test_concrete_args_wrap_unpacking_and_is_fx_tracing():
    seen = []

    def f(x, flag):
        seen.append(ndgrad.fx._symbolic_trace.is_fx_tracing())
        a, b = x.chunk(2)
        return a + b if flag else a - b
    gm = ndgrad.fx.symbolic_trace(f, concrete_args={"flag": False})
    assert seen == [True] and not ndgrad.fx._symbolic_trace.is_fx_tracing()
    x = ndgrad.arange(4.)
    np.testing.assert_allclose(gm(x).numpy(), (x[:2] - x[2:]).numpy())
    # wrap: the function is recorded, not traced through
    ns = {"fx": ndgrad.fx, "torch": ndgrad}
    exec(compile("def leaf(x):\n    return x.shape[0] * x\n"
                 "fx.wrap('leaf')\n"
                 "def g(x):\n    return leaf(x) + 1\n", "<wrapped>", "exec"), ns)
    gm = ndgrad.fx.symbolic_trace(ns["g"])
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"][0] is ns["leaf"]
    np.testing.assert_allclose(gm(x).numpy(), (4 * x + 1).numpy())
    assert ns["leaf"](x) is not None          # patched only while tracing


def test_factories_and_functional_calls_on_proxies_as_pytorch():
    """ndgrad's functions check their arguments before dispatching a Proxy through
    __torch_function__: those checks leave no nodes (the graph is PyTorch's)."""
    torch = pytest.importorskip("torch")
    lists = []
    for lib in (ndgrad, torch):
        F = lib.nn.functional

        def f(x, y):
            a = lib.arange(x.size(1)) + lib.zeros_like(x)
            d = F.pad(x, (1, 1))[:, 1:-1] + lib.cat([x, y]).sum() + x.new_ones(x.shape)
            x.size(0)                                  # unused, but the program's: kept
            return lib.where(a > 0, a, d).masked_fill(y > 0, 0.5)
        gm = lib.fx.symbolic_trace(f)
        lists.append(_node_list(gm))
        x, y = lib.randn(2, 3), lib.randn(2, 3)
        assert lib.equal(gm(x, y), f(x, y))
    assert lists[0] == lists[1]


def test_leaf_modules_parameters_and_constants():
    nn = ndgrad.nn

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.w = nn.Parameter(ndgrad.ones(3))
            self.register_buffer("b", ndgrad.full((3,), 2.))

        def forward(self, x):
            return self.lin(x) * self.w + self.b + ndgrad.tensor([1., 2., 3.])

    class AllTraced(ndgrad.fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return False
    m = M()
    gm = ndgrad.fx.symbolic_trace(m)
    ops = [(n.op, n.target) for n in gm.graph.nodes if n.op in ("get_attr", "call_module")]
    assert ops == [("call_module", "lin"), ("get_attr", "w"), ("get_attr", "b"),
                   ("get_attr", "_tensor_constant0")]
    x = ndgrad.randn(2, 3)
    np.testing.assert_allclose(gm(x).detach().numpy(), m(x).detach().numpy())
    graph = AllTraced().trace(m)
    assert "call_module" not in [n.op for n in graph.nodes]
    gm2 = ndgrad.fx.GraphModule(m, graph)
    np.testing.assert_allclose(gm2(x).detach().numpy(), m(x).detach().numpy())


def test_interpreter_transformer_shape_prop():
    F = ndgrad.nn.functional
    m, x = make("ConvNet")
    m.eval()
    gm = ndgrad.fx.symbolic_trace(m)
    out = ndgrad.fx.Interpreter(gm).run(x)
    np.testing.assert_allclose(out.detach().numpy(), m(x).detach().numpy())

    class ReluToSigmoid(ndgrad.fx.Transformer):
        def call_function(self, target, args, kwargs):
            if target is ndgrad.relu:
                target = ndgrad.sigmoid
            return super().call_function(target, args, kwargs)
    gm2 = ReluToSigmoid(gm).transform()
    expected = m.head(m.pool(ndgrad.sigmoid(m.bn(m.conv(x))))).log_softmax(dim=-1)
    np.testing.assert_allclose(gm2(x).detach().numpy(), expected.detach().numpy())
    assert "torch.sigmoid" in gm2.code
    from ndgrad.fx.passes.shape_prop import ShapeProp
    ShapeProp(gm).propagate(x)
    shapes = {n.name: tuple(n.meta["tensor_meta"].shape) for n in gm.graph.nodes
              if "tensor_meta" in n.meta}
    assert shapes["conv"] == (2, 3, 4, 4) and shapes["pool"] == (2, 3, 2, 2)
    assert shapes["log_softmax"] == (2, 5)
    assert gm.graph.find_nodes(op="output")[0].meta["type"] is ndgrad.Tensor


def test_replace_pattern():
    results = []
    for lib in (ndgrad, pytest.importorskip("torch")):
        def f(x, w):
            return lib.relu(lib.add(x, w)) * 2 + lib.relu(lib.add(w, 1.)) + \
                lib.relu(lib.add(x * 2, w))

        def pattern(a, b):
            return lib.relu(lib.add(a, b))

        def replacement(a, b):
            return lib.sigmoid(lib.sub(a, b))
        gm = lib.fx.symbolic_trace(f)
        matches = lib.fx.replace_pattern(gm, pattern, replacement)
        results.append((len(matches), _node_list(gm), [n.args for n in gm.graph.nodes]))
        x, w = np.random.randn(3), np.random.randn(3)
        expected = sig(x - w) * 2 + sig(w - 1.) + sig(2 * x - w)
        np.testing.assert_allclose(gm(lib.tensor(x), lib.tensor(w)).numpy(), expected)
    assert results[0][:2] == results[1][:2] and results[0][0] == 3
    assert str(results[0][2]) == str(results[1][2])


def sig(a):
    return 1 / (1 + np.exp(-a))


# --- torch.export ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(MODELS))
def test_export_module_matches_eager_for_new_inputs(name):
    m, x = make(name)
    m.eval()
    ep = ndgrad.export.export(m, (x,))
    assert isinstance(ep, ndgrad.export.ExportedProgram)
    mod = ep.module()
    x2 = ndgrad.randn(*x.shape, dtype=x.dtype)
    _check_outputs_and_grads(m, mod, x2, dict(mod.named_parameters()))
    assert {n.op for n in ep.graph.nodes} == {"placeholder", "call_function", "output"}
    # the lifted graph takes parameters, buffers and user inputs, as PyTorch's does
    flat = [v for _, v in ep.graph_signature.inputs_to_parameters.items()]
    assert flat == [k for k, _ in m.named_parameters()]
    gm_inputs = [ep.state_dict[t] for t in ep.graph_signature.parameters] + \
        [ep.state_dict[t] for t in ep.graph_signature.buffers] + [x2]
    out = ep.graph_module(*gm_inputs)
    np.testing.assert_allclose(out[0].detach().numpy(), m(x2).detach().numpy())
    ep2 = ep.run_decompositions()
    np.testing.assert_allclose(ep2.module()(x2).detach().numpy(), m(x2).detach().numpy())


def test_export_attention_and_recurrent_modules():
    """nn.MultiheadAttention is traced down to its functional calls; the RNNs, whose forward
    works on arrays, are recorded as one functional_call of their parameters."""
    nn = ndgrad.nn

    class Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.att = nn.MultiheadAttention(8, 2, batch_first=True)
            self.rnn = nn.LSTM(8, 5, batch_first=True)
            self.out = nn.Linear(5, 1)

        def forward(self, x):
            h, _ = self.att(x, x, x, need_weights=False)
            y, (hn, cn) = self.rnn(h)
            return self.out(y[:, -1]) + cn.sum()
    ndgrad.manual_seed(0)
    m = Seq().double()
    x = ndgrad.randn(2, 3, 8, dtype=ndgrad.float64)
    ep = ndgrad.export.export(m, (x,))
    mod = ep.module()
    _check_outputs_and_grads(m, mod, ndgrad.randn(2, 3, 8, dtype=ndgrad.float64),
                             dict(mod.named_parameters()))
    targets = {getattr(n.target, "__name__", None) for n in ep.graph.nodes}
    assert "functional_call" in targets
    assert [s.target for s in ep.graph_signature.input_specs][:-1] == \
        [k for k, _ in m.named_parameters()]
    with pytest.raises(RuntimeError, match="cannot serialize"):
        ndgrad.export.save(ep, io.BytesIO())


def test_export_signature_and_state_dict_as_pytorch():
    torch = pytest.importorskip("torch")
    m, x = make("ConvNet")
    m.eval()
    tm = build(torch)["ConvNet"][0]().double().eval()
    ep = ndgrad.export.export(m, (x,))
    tep = torch.export.export(tm, (torch.from_numpy(x.numpy()),))

    def specs(sig):
        return ([(s.kind.name, getattr(s.arg, "name", None), s.target, s.persistent)
                 for s in sig.input_specs], [s.kind.name for s in sig.output_specs])
    assert specs(ep.graph_signature) == specs(tep.graph_signature)
    assert list(ep.state_dict) == list(tep.state_dict)
    assert ep.state_dict["conv.weight"] is m.conv.weight
    assert ep.graph_signature.user_inputs == tep.graph_signature.user_inputs
    assert ep.graph_signature.parameters == tep.graph_signature.parameters
    assert ep.graph_signature.buffers == tep.graph_signature.buffers
    assert ep.graph_signature.inputs_to_buffers == tep.graph_signature.inputs_to_buffers
    shapes = {n.name: tuple(n.meta["tensor_meta"].shape) for n in ep.graph.nodes
              if n.op == "placeholder"}
    assert shapes == {n.name: tuple(n.meta["val"].shape) for n in tep.graph.nodes
                      if n.op == "placeholder"}
    out = ep.graph.find_nodes(op="output")[0].args[0][0]
    tout = tep.graph.find_nodes(op="output")[0].args[0][0]
    assert out.meta["tensor_meta"].shape == tout.meta["val"].shape == (2, 5)
    assert str(ep).startswith("ExportedProgram:\n    class GraphModule(torch.nn.Module):")
    assert "Graph signature:" in str(ep) and "Range constraints: {}" in str(ep)


def test_export_errors_as_pytorch():
    torch = pytest.importorskip("torch")
    m, x = make("MLP")
    tm = build(torch)["MLP"][0]()
    tx = torch.randn(2, 4)
    ep = ndgrad.export.export(m, (x,))
    tep = torch.export.export(tm, (tx,))
    pairs = [
        (lambda: ep(x), lambda: tep(tx)),
        (lambda: ndgrad.export.export(lambda t: t, (x,)),
         lambda: torch.export.export(lambda t: t, (tx,))),
        (lambda: ep.module()(x, x), lambda: tep.module()(tx, tx)),
        (lambda: ep.module()(ndgrad.randn(3, 4, dtype=ndgrad.float64)),
         lambda: tep.module()(torch.randn(3, 4))),
        (lambda: ndgrad.export.export(m, [x]), lambda: torch.export.export(tm, [tx])),
        (lambda: ndgrad.export.export(m, (x,), dynamic_shapes={"y": {0: ndgrad.export.Dim("b")}}),
         lambda: torch.export.export(tm, (tx,), dynamic_shapes={"y": {0: torch.export.Dim("b")}})),
    ]
    for ours, theirs in pairs:
        with pytest.raises(Exception) as e1:
            ours()
        with pytest.raises(Exception) as e2:
            theirs()
        assert type(e1.value).__name__ == type(e2.value).__name__
        assert str(e2.value).startswith(str(e1.value).split("\n")[0][:60])

    class DataDependent(ndgrad.nn.Module):
        def forward(self, x):
            return x if x.sum() > 0 else -x
    with pytest.raises(RuntimeError, match="data-dependent"):
        ndgrad.export.export(DataDependent(), (x,))

    class Item(ndgrad.nn.Module):
        def forward(self, x):
            return x * x.max().item()
    with pytest.raises(RuntimeError, match="data-dependent"):
        ndgrad.export.export(Item(), (x,))


def test_export_dynamic_shapes():
    Dim = ndgrad.export.Dim
    m, x = make("MLP")
    batch = Dim("batch", min=1, max=16)
    assert repr(batch) == "Dim('batch', min=1, max=16)"
    ep = ndgrad.export.export(m, (x,), dynamic_shapes={"x": {0: batch}})
    x5 = ndgrad.randn(5, 4, dtype=ndgrad.float64)
    np.testing.assert_allclose(ep.module()(x5).detach().numpy(), m(x5).detach().numpy())
    with pytest.raises(AssertionError, match="Guard failed"):
        ep.module()(ndgrad.randn(17, 4, dtype=ndgrad.float64))
    with pytest.raises(AssertionError, match="Guard failed"):
        ep.module()(ndgrad.randn(5, 3, dtype=ndgrad.float64))
    # the block reads x.shape in Python: its dims stay static (with a warning)
    mb, xb = make("Block")
    with pytest.warns(UserWarning, match="depends on the sizes"):
        ep = ndgrad.export.export(mb, (xb,), dynamic_shapes=({0: Dim.AUTO},))
    with pytest.raises(AssertionError, match="Guard failed"):
        ep.module()(ndgrad.randn(3, 3, 8, dtype=ndgrad.float64))
    with pytest.raises(Exception, match="same length"):
        ndgrad.export.export(m, (x,), dynamic_shapes=((batch,),))
    with pytest.raises(Exception, match="within"):
        ndgrad.export.export(m, (ndgrad.randn(20, 4, dtype=ndgrad.float64),),
                             dynamic_shapes={"x": {0: batch}})


def test_export_keeps_module_state_and_training_semantics():
    nn = ndgrad.nn

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm1d(3)
            self.drop = nn.Dropout(0.5)
            self.register_buffer("step", ndgrad.zeros(()), persistent=False)

        def forward(self, x, *, scale=2.0):
            self.step.add_(1)
            return self.drop(self.bn(x)) * scale
    ndgrad.manual_seed(0)
    m = M()
    x = ndgrad.randn(4, 3)
    before = {k: v.clone() for k, v in m.state_dict().items()}
    rng = ndgrad.get_rng_state()
    ep = ndgrad.export.export(m, (x,), {"scale": 3.0})
    # the capture changed nothing: buffers, step, random stream
    for k, v in m.state_dict().items():
        assert ndgrad.equal(v, before[k]), k
    assert m.step.item() == 0 and ndgrad.equal(ndgrad.get_rng_state(), rng)
    assert ep.graph_signature.non_persistent_buffers == ("step",) and "step" in ep.constants
    assert ep.graph_signature.user_inputs == ("x", 3.0)
    with pytest.raises(AssertionError, match="Guard failed: scale == 3.0"):
        ep.module()(x, scale=2.0)
    mod = ep.module()
    m2 = copy.deepcopy(m)
    ndgrad.manual_seed(1)
    y = mod(x, scale=3.0)
    ndgrad.manual_seed(1)
    ref = m2(x, scale=3.0)
    np.testing.assert_allclose(y.detach().numpy(), ref.detach().numpy(), rtol=1e-6)
    assert mod.step.item() == 1 and m.step.item() == 1    # shared buffers, as PyTorch's
    np.testing.assert_allclose(m.bn.running_mean.numpy(), m2.bn.running_mean.numpy(),
                               rtol=1e-6)


def test_export_save_load_round_trip(tmp_path):
    import json
    import zipfile
    m, x = make("Block")
    ep = ndgrad.export.export(m, (x,))
    path = tmp_path / "block.ndgrad-export"
    ndgrad.export.save(ep, path, extra_files={"note": "hi"})
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        program = json.loads(z.read("ndgrad_export/program.json"))
    assert "ndgrad_export/program.json" in names and program["format"] == "ndgrad-export"
    extra = {"note": ""}
    ep2 = ndgrad.export.load(path, extra_files=extra)
    assert extra == {"note": "hi"}
    x2 = ndgrad.randn(*x.shape, dtype=x.dtype)
    mod = ep2.module()
    _check_outputs_and_grads(m, mod, x2, dict(mod.named_parameters()))
    assert [s.kind for s in ep2.graph_signature.input_specs] == \
        [s.kind for s in ep.graph_signature.input_specs]
    buf = io.BytesIO()
    ndgrad.export.save(ep2, buf)
    buf.seek(0)
    np.testing.assert_allclose(ndgrad.export.load(buf).module()(x2).detach().numpy(),
                               m(x2).detach().numpy())
    with pytest.raises(RuntimeError, match="not an ndgrad exported program"):
        ndgrad.export.load(io.BytesIO(b"not a zip"))
    # a target outside ndgrad's functions is refused, not imported
    bad = tmp_path / "bad.zip"
    program["nodes"][1]["op"] = "call_function"
    program["nodes"][1]["target"] = "os.system"
    with zipfile.ZipFile(path) as z, zipfile.ZipFile(bad, "w") as out:
        out.writestr("ndgrad_export/program.json", json.dumps(program))
        out.writestr("ndgrad_export/weights.pt", z.read("ndgrad_export/weights.pt"))
    with pytest.raises(RuntimeError, match="unknown call target 'os.system'"):
        ndgrad.export.load(bad)
    program["nodes"][1]["target"] = "torch.relu"
    program["nodes"][1]["args"] = {"$tuple": [{"$node": "nowhere"}]}
    with zipfile.ZipFile(path) as z, zipfile.ZipFile(bad, "w") as out:
        out.writestr("ndgrad_export/program.json", json.dumps(program))
        out.writestr("ndgrad_export/weights.pt", z.read("ndgrad_export/weights.pt"))
    with pytest.raises(RuntimeError, match="malformed program"):
        ndgrad.export.load(bad)


@pytest.mark.parametrize("case", ["LSTMCell", "BatchNorm2d", "TransformerDecoderLayer",
                                  "Embedding", "CrossEntropyLoss", "Upsample"])
def test_export_more_modules(case):
    nn = ndgrad.nn
    ndgrad.manual_seed(0)
    m, args = {
        "LSTMCell": lambda: (nn.LSTMCell(6, 3), (ndgrad.randn(4, 6),)),
        "BatchNorm2d": lambda: (nn.BatchNorm2d(3), (ndgrad.randn(2, 3, 4, 4),)),
        "TransformerDecoderLayer": lambda: (nn.TransformerDecoderLayer(6, 2, 8, dropout=0.0),
                                            (ndgrad.randn(3, 2, 6), ndgrad.randn(4, 2, 6))),
        "Embedding": lambda: (nn.Embedding(5, 3), (ndgrad.tensor([[0, 4], [1, 2]]),)),
        "CrossEntropyLoss": lambda: (nn.CrossEntropyLoss(label_smoothing=0.1),
                                     (ndgrad.randn(4, 3), ndgrad.tensor([0, 1, 2, 0]))),
        "Upsample": lambda: (nn.Upsample(scale_factor=2, mode="bilinear"),
                             (ndgrad.randn(1, 2, 3, 3),)),
    }[case]()
    ep = ndgrad.export.export(m, args)
    mod = ep.module()
    new = tuple(ndgrad.randn(*a.shape) if a.is_floating_point() else a for a in args)

    def flat(o):
        return [t for x in o for t in flat(x)] if isinstance(o, tuple) else [o]
    for got, want in zip(flat(mod(*new)), flat(m(*new))):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
