"""PyTorch's own module database (torch.testing._internal.common_modules.module_db) as the
differential test of ndgrad.nn.

For every ModuleInfo and every sample of its module_inputs_func (CPU, float64 and float32,
train and eval mode where they differ), the module is built in both libraries from the same
constructor arguments; ndgrad's own state_dict must have PyTorch's keys, shapes and dtypes,
then PyTorch's parameters and buffers are loaded into it (load_state_dict, strict), and both
run the forward on the same inputs: outputs, the gradients of the inputs and parameters (for
the same random output gradients) and the state_dict after the step (running statistics) must
agree. A module whose PyTorch forward is random (dropout inside, in training mode) compares
shapes and dtypes only. Each float32 sample with 4-d or 5-d inputs runs once more with them
(and then the module's parameters) in channels_last(_3d), as PyTorch's test_modules'
test_memory_format: the outputs' formats must agree. What still differs is listed in KNOWN
with the reason; nothing else is tolerated.

Run as a script (`python tests/test_module_db.py [name ...]`) to print every disagreement.
"""
import copy
import sys
import warnings

import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")
common_modules = pytest.importorskip("torch.testing._internal.common_modules")
MODULE_DB = common_modules.module_db

DTYPES = ("float64", "float32")
TOL = {"float64": dict(rtol=1e-7, atol=1e-9), "float32": dict(rtol=2e-4, atol=2e-5)}

# "<module name> <dtype> <train|eval> <sample index>" (a prefix: "nn.X", "nn.X float32") ->
# why it may differ: PyTorch is wrong there, or what ndgrad lacks
KNOWN = {
    # a channels-last input divided by its per-row statistic (broadcast over W): PyTorch's
    # TensorIterator lays the result out as its first operand, NumPy's ufuncs (order K) as a
    # C-contiguous array when the operands' layouts differ; values agree
    "nn.RMSNorm float32 train 3": "memory format of an op on operands of mixed layouts",
}


# ---------------------------------------------------------------- values across libraries

def _layer(m):
    """ndgrad's Transformer(En|De)coderLayer with the sizes and options of PyTorch's `m`
    (TransformerEncoder's constructor takes a layer; its weights come with the state_dict)."""
    cls = getattr(ndgrad.nn, type(m).__name__)
    act = m.activation
    act = to_nd(act) if not isinstance(act, torch.nn.Module) else \
        getattr(ndgrad.nn, type(act).__name__)()
    return cls(m.self_attn.embed_dim, m.self_attn.num_heads, m.linear1.out_features,
               m.dropout.p, act, m.norm1.eps, m.self_attn.batch_first, m.norm_first,
               m.linear1.bias is not None).to(getattr(ndgrad, str(m.linear1.weight.dtype)[6:]))


def to_nd(v):
    """A PyTorch value (tensors, dtypes, nested sequences and dicts, functions and layers of
    torch.nn) as ndgrad's."""
    if isinstance(v, torch.nn.Module):
        return _layer(v)
    name = getattr(v, "__name__", None)
    if callable(v) and name and getattr(torch.nn.functional, name, None) is v:
        return getattr(ndgrad.nn.functional, name)
    if isinstance(v, torch.Tensor):
        t = ndgrad.from_numpy(v.detach().numpy().copy())
        return t.requires_grad_(True) if v.requires_grad else t
    if isinstance(v, torch.dtype):
        return getattr(ndgrad, str(v).split(".")[1])
    if isinstance(v, torch.nn.utils.rnn.PackedSequence):
        return ndgrad.nn.utils.rnn.PackedSequence(*[to_nd(x) for x in v])
    if isinstance(v, (list, tuple)):
        return type(v)(to_nd(x) for x in v)
    if isinstance(v, dict):
        return {k: to_nd(x) for k, x in v.items()}
    return v


def leaves(v):
    """The tensors of a (nested) output, in order."""
    if isinstance(v, (torch.Tensor, ndgrad.Tensor)):
        return [v]
    if isinstance(v, (list, tuple)):
        return [t for x in v for t in leaves(x)]
    if isinstance(v, dict):
        return [t for x in v.values() for t in leaves(x)]
    return []


def _np(t):
    return t.detach().numpy()


def _meta(t):
    return (tuple(t.shape), str(t.dtype))


def compare(what, theirs, ours, tol, values=True):
    """A list of disagreements between two lists of tensors (None allowed)."""
    if len(theirs) != len(ours):
        return [f"{what}: {len(ours)} tensors, PyTorch {len(theirs)}"]
    out = []
    for i, (a, b) in enumerate(zip(theirs, ours)):
        if (a is None) != (b is None):
            out.append(f"{what}[{i}]: {'None' if b is None else 'a tensor'}, PyTorch "
                       f"{'None' if a is None else 'a tensor'}")
            continue
        if a is None:
            continue
        if _meta(a) != _meta(b):
            out.append(f"{what}[{i}]: {_meta(b)}, PyTorch {_meta(a)}")
            continue
        if values and a.numel():
            x, y = _np(a), _np(b)
            if x.dtype.kind in "fc":
                ok = np.allclose(y, x, equal_nan=True, **tol)
            else:
                ok = np.array_equal(y, x)
            if not ok:
                err = np.nanmax(np.abs(y.astype(np.float64) - x.astype(np.float64)))
                out.append(f"{what}[{i}]: values differ (max abs {err:.3g})")
    return out


# ---------------------------------------------------------------- one sample

def _build(lib, cls_name, ctor, dtype):
    args, kwargs = ctor.args, ctor.kwargs
    if lib is ndgrad:
        args, kwargs = to_nd(args), to_nd(kwargs)
    cls = getattr(lib.nn, cls_name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = cls(*args, **kwargs)
    return m.to(getattr(lib, dtype))


def fresh(v):
    """A copy of a (nested) input: tensors as new leaves (a target computed from other tensors
    is no leaf, which deepcopy refuses)."""
    if isinstance(v, torch.Tensor):
        return v.detach().clone().requires_grad_(v.requires_grad)
    if isinstance(v, torch.nn.utils.rnn.PackedSequence):
        return type(v)(*[fresh(x) for x in v])
    if isinstance(v, (list, tuple)):
        return type(v)(fresh(x) for x in v)
    if isinstance(v, dict):
        return {k: fresh(x) for k, x in v.items()}
    return v


def _forward(m, inp, lib, seed):
    args, kwargs = fresh(inp.args), fresh(inp.kwargs)
    if lib is ndgrad:
        args, kwargs = to_nd(args), to_nd(kwargs)
    lib.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = m(*args, **kwargs)
    return args, kwargs, out


def _differentiable(ts):
    return [t for t in ts if t.requires_grad and t.dtype.is_floating_point]


def run_sample(info, dtype, training, mi):
    """The disagreements of one ModuleInput between the two libraries (a list of strings)."""
    name = info.module_cls.__name__
    if not hasattr(ndgrad.nn, name):
        return [f"ndgrad.nn has no {name}"]
    mt = _build(torch, name, mi.constructor_input, dtype)
    mn = _build(ndgrad, name, mi.constructor_input, dtype)
    mt.train(training)
    mn.train(training)
    problems = []
    if info.is_lazy:   # (parameters exist after a first forward)
        _forward(mt, mi.forward_input, torch, 0)
        _forward(mn, mi.forward_input, ndgrad, 0)
    st, sn = mt.state_dict(), mn.state_dict()
    if list(st) != list(sn):
        return [f"state_dict keys {list(sn)}, PyTorch {list(st)}"]
    problems += compare("state_dict (own init)", list(st.values()), list(sn.values()), None,
                        values=False)
    mn.load_state_dict({k: to_nd(v) for k, v in st.items()})
    # random in PyTorch (dropout, ...): two seeds give two outputs
    probe = copy.deepcopy(mt)
    _, _, o1 = _forward(probe, mi.forward_input, torch, 1)
    targs, tkw, tout = _forward(mt, mi.forward_input, torch, 0)
    random = bool(compare("", leaves(o1), leaves(tout), TOL[dtype]))
    nargs, nkw, nout = _forward(mn, mi.forward_input, ndgrad, 0)
    tol = TOL[dtype]
    problems += compare("output", leaves(tout), leaves(nout), tol, values=not random)
    if problems:
        return problems
    # gradients of the inputs and parameters for the same output gradients
    touts, nouts = _differentiable(leaves(tout)), _differentiable(leaves(nout))
    if touts and len(touts) == len(nouts):
        tin = _differentiable(leaves((targs, tkw))) + list(mt.parameters())
        nin = _differentiable(leaves((nargs, nkw))) + list(mn.parameters())
        tin = [t for t in tin if t.requires_grad]
        nin = [t for t in nin if t.requires_grad]
        gen = np.random.default_rng(0)
        gs = [gen.standard_normal(tuple(t.shape)) for t in touts]
        tg = torch.autograd.grad(touts, tin, [torch.tensor(g, dtype=t.dtype)
                                              for g, t in zip(gs, touts)], allow_unused=True)
        ng = ndgrad.autograd.grad(nouts, nin, [ndgrad.tensor(g, dtype=t.dtype)
                                               for g, t in zip(gs, nouts)], allow_unused=True)
        problems += compare("gradient", list(tg), list(ng), tol, values=not random)
    problems += compare("state_dict after forward", list(mt.state_dict().values()),
                        list(mn.state_dict().values()), tol, values=not random)
    return problems


def _channels_last(v, lib):
    """A (nested) input with its 4-d and 5-d tensors in channels_last(_3d) (their format: the
    result's strides), None when there is none."""
    found = []

    def conv(x):
        if isinstance(x, (torch.Tensor, ndgrad.Tensor)) and x.ndim in (4, 5):
            found.append(x)
            fmt = lib.channels_last if x.ndim == 4 else lib.channels_last_3d
            return x.detach().contiguous(memory_format=fmt).requires_grad_(x.requires_grad)
        if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
            return type(x)(conv(y) for y in x)
        if isinstance(x, dict):
            return {k: conv(y) for k, y in x.items()}
        return x
    out = conv(v)
    return out if found else None


def memory_format_problems(info, dtype, training, mi):
    """PyTorch's test_modules.test_memory_format, against PyTorch: the inputs' 4-d/5-d tensors
    and the module's parameters in channels_last(_3d); each output's contiguity in both formats
    and its values agree."""
    name = info.module_cls.__name__
    problems = []
    for params_too in (False, True) if not info.is_lazy else (False,):
        got = []
        for lib in (torch, ndgrad):
            m = _build(lib, name, mi.constructor_input, dtype)
            m.train(training)
            if lib is ndgrad:
                m.load_state_dict({k: to_nd(v) for k, v in st.items()})
            else:
                st = m.state_dict()
            args, kwargs = fresh(mi.forward_input.args), fresh(mi.forward_input.kwargs)
            if lib is ndgrad:
                args, kwargs = to_nd(args), to_nd(kwargs)
            rank = [t.ndim for t in leaves(args) if t.ndim in (4, 5)]
            args = _channels_last(args, lib)
            if args is None:
                return []
            if params_too:   # (the input's format, as PyTorch's test converts its modules)
                if any(p.ndim in (4, 5) and p.ndim != rank[0] for p in m.parameters()):
                    return problems      # (Module.to raises there, PyTorch's too)
                m.to(memory_format=lib.channels_last if rank[0] == 4 else lib.channels_last_3d)
            lib.manual_seed(0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = leaves(m(*args, **kwargs))
            got.append(out)
        fmts = [[(t.is_contiguous(), t.ndim == 4 and t.is_contiguous(
            memory_format=lib.channels_last), t.ndim == 5 and t.is_contiguous(
            memory_format=lib.channels_last_3d)) for t in outs]
            for lib, outs in zip((torch, ndgrad), got)]
        if fmts[0] != fmts[1]:
            how = "channels_last" if params_too else "as made"
            problems.append(f"memory format (params {how}): outputs' (contiguous, "
                            f"channels_last, channels_last_3d) {fmts[1]}, PyTorch {fmts[0]}")
    return problems


def samples(info, dtype, training):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return info.module_inputs_func(info, device="cpu", dtype=getattr(torch, dtype),
                                       requires_grad=True, training=training)


# samples per (dtype, mode) at most: every module runs, each in both dtypes, its many-sample
# ones on an even spread of their samples (LinearCrossEntropyLoss has 857 combinations of its
# options; the whole database would take minutes)
BUDGET = {"float64": 24, "float32": 6}


def spread(n, k):
    """k indices spread evenly over range(n), first and last included (all when n <= k)."""
    if n <= k:
        return list(range(n))
    return sorted({round(j * (n - 1) / (k - 1)) for j in range(k)})


def run(info, budget=BUDGET):
    """{case id: [disagreements]} for one ModuleInfo."""
    found = {}
    for dtype in DTYPES:
        modes = (True, False) if info.train_and_eval_differ else (True,)
        for training in modes:
            every = samples(info, dtype, training)
            for i in spread(len(every), budget[dtype]):
                mi = every[i]
                cid = f"{info.name} {dtype} {'train' if training else 'eval'} {i}"
                try:
                    problems = run_sample(info, dtype, training, mi)
                    if not problems and dtype == "float32":
                        problems = memory_format_problems(info, dtype, training, mi)
                except Exception as e:   # (PyTorch's own failure counts too: it is visible)
                    problems = [f"raised {type(e).__name__}: {str(e)[:300]}"]
                if problems:
                    found[cid] = problems
    return found


def _known(cid):
    return next((why for k, why in KNOWN.items() if cid == k or cid.startswith(k + " ")), None)


@pytest.mark.parametrize("info", MODULE_DB, ids=[m.name for m in MODULE_DB])
def test_module_db(info):
    found = {cid: p for cid, p in run(info).items() if _known(cid) is None}
    assert not found, "\n".join(f"{cid}: {'; '.join(p)}" for cid, p in found.items())


def test_known_entries_still_disagree():
    """Each KNOWN entry names a module of the database (no stale entries)."""
    names = {m.name for m in MODULE_DB}
    for k in KNOWN:
        assert k.split(" ")[0] in names, k


if __name__ == "__main__":   # (--all: every sample, no budget)
    every = "--all" in sys.argv
    want = [a for a in sys.argv[1:] if a != "--all"]
    total = bad = 0
    for info in MODULE_DB:
        if want and info.name not in want:
            continue
        found = run(info, {"float64": 10 ** 6, "float32": 10 ** 6} if every else BUDGET)
        for cid, p in found.items():
            bad += 1
            print(f"{'KNOWN ' if _known(cid) else ''}{cid}: {'; '.join(p)[:400]}")
    print("disagreements:", bad)
