"""Bad arguments, generated: for every op of the op table (tests/op_db*.py), every public
torch-level function and every nn.functional function, calls that PyTorch rejects (None or a
string where a tensor goes, an unexpected keyword, a dim out of range, mismatched shapes, an
integer tensor for a float-only kernel), plus named cases (kernel larger than the input,
non-positive stride or size, huge allocations, a custom Function's backward of the wrong shape).

For each case the same call runs in PyTorch and in ndgrad: the exception type must be the same,
and so must the message (memory addresses normalised); ndgrad's input tensors must keep their
values and version counter. A case is generated only when PyTorch raises. What still differs
is listed below in MESSAGE_ONLY (the type matches, the text differs, with the reason) and
XFAIL (with the reason); nothing else is tolerated. Inputs are tiny: the table runs in seconds.

Run as a script (`python tests/test_bad_args.py`) to print how many cases match.
"""
import glob
import importlib
import inspect
import os
import re
import sys
import warnings

import numpy as np
import pytest

import ndgrad

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import op_db  # noqa: E402

for _path in sorted(glob.glob(os.path.join(HERE, "op_db_*.py"))):
    importlib.import_module(os.path.basename(_path)[:-3])

try:
    import torch
except ImportError:  # the whole table compares with PyTorch
    torch = None


# ---------------------------------------------------------------- the cases
# A case is (id, build): build(lib) -> (fn, args, kwargs); the call fn(*args, **kwargs) must
# raise in both libraries alike.

def _tensor(lib, a, dtype=None):
    t = lib.tensor(a)
    return t if dtype is None else t.to(getattr(lib, dtype))


def _op_cases():
    out = []
    seen = set()
    for case in op_db.OPS:
        if case.fn is not None or case.skip_torch or case.make_inputs is not None:
            continue
        if case.name in seen:
            continue
        seen.add(case.name)
        arrays, kw, _ = next(case.samples())
        if any(a.ndim == 0 or a.size == 0 for a in arrays) and len(case.shapes) > 1:
            for arrays2, kw2, _ in case.samples():
                if all(a.ndim and a.size for a in arrays2):
                    arrays, kw = arrays2, kw2
                    break
        name = case.name

        def base(lib, arrays=arrays, kw=kw, name=name):
            return getattr(lib, name), [_tensor(lib, a) for a in arrays], dict(kw)

        def with_arg(i, value, base=base, case=case):
            def build(lib):
                fn, ts, kw = base(lib)
                ts[i] = value
                return fn, ts + list(case.args), kw
            return build

        for i in range(len(arrays)):
            out.append((f"{name}-none{i}", with_arg(i, None)))
            out.append((f"{name}-str{i}", with_arg(i, "x")))

        def badkw(lib, base=base, case=case):
            fn, ts, kw = base(lib)
            kw["foo"] = 1
            return fn, ts + list(case.args), kw
        out.append((f"{name}-kw", badkw))

        if isinstance(kw.get("dim"), int):
            def baddim(lib, base=base, case=case):
                fn, ts, kw = base(lib)
                kw["dim"] = 7
                return fn, ts + list(case.args), kw
            out.append((f"{name}-dim", baddim))

        if len(arrays) >= 2 and arrays[0].shape == arrays[1].shape and arrays[0].ndim:
            def badshape(lib, base=base, case=case):
                fn, ts, kw = base(lib)
                a = ts[1].detach().numpy() if hasattr(ts[1], "detach") else ts[1]
                ts[1] = _tensor(lib, np.concatenate([a, a[..., :1]], axis=-1))
                return fn, ts + list(case.args), kw
            out.append((f"{name}-shape", badshape))

        if "int64" not in case.dtypes:
            def long(lib, base=base, case=case):
                fn, ts, kw = base(lib)
                ts = [t.round().long() if i not in case.int_inputs else t
                      for i, t in enumerate(ts)]
                return fn, ts + list(case.args), kw
            out.append((f"{name}-long", long))
    return out


# functions that change global state, read files, or need no tensor: never called with junk
_STATEFUL = re.compile(
    r"^(set_|manual_seed|seed|initial_seed|load|save|compile|use_deterministic|autocast|"
    r"from_file|get_|is_|are_|cuda|mps|xpu|npu|cpu|vmap|jit|export|sym_|typename|"
    r"broadcast_shapes|promote_types|result_type|can_cast|iinfo|finfo|empty_cache|"
    r"enable_grad|no_grad|inference_mode|device|dtype|default_generator|Generator|"
    r"from_numpy|frombuffer|asarray|as_tensor|tensor$|scalar_tensor|cond|while_loop|"
    r"wait|chain_matmul|meshgrid|block_diag|cartesian_prod|atleast_|broadcast_tensors|"
    r"unravel_index|get_default|fork_rng|random|library|overrides|prims|ops|has_torch_function)")


def _public_functions(mod, tmod):
    names = []
    for n in sorted(getattr(mod, "__all__", None) or dir(mod)):
        if n.startswith("_") or _STATEFUL.match(n):
            continue
        ours, theirs = getattr(mod, n, None), getattr(tmod, n, None)
        if ours is None or theirs is None or inspect.isclass(ours) or inspect.ismodule(ours):
            continue
        if not callable(ours) or not callable(theirs) or inspect.isclass(theirs):
            continue
        names.append(n)
    return names


def _function_cases():
    out = []
    if torch is None:
        return out
    for prefix, mod, tmod in (("torch", ndgrad, torch),
                              ("F", ndgrad.nn.functional, torch.nn.functional)):
        for n in _public_functions(mod, tmod):
            for tag, value in (("none", None), ("str", "x")):
                def build(lib, n=n, value=value, prefix=prefix):
                    m = lib if prefix == "torch" else lib.nn.functional
                    return getattr(m, n), [value], {}
                out.append((f"{prefix}.{n}-{tag}", build))
    return out


def _fn_backward_wrong_shape(lib):
    class F(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return lib.ones(5, dtype=g.dtype)

    def run(x):
        F.apply(x).sum().backward()
    return run, [lib.ones(3, requires_grad=True)], {}


def _named(expr):
    def build(lib):
        return lambda: eval(expr, {"torch": lib, "nn": lib.nn, "F": lib.nn.functional}), [], {}
    return build


NAMED = [
    ("named.maxpool2d-kernel-larger-than-input", _named("nn.MaxPool2d(10)(torch.ones(1, 1, 5, 5))")),
    ("named.maxpool1d-kernel-larger-than-input", _named("nn.MaxPool1d(10)(torch.ones(1, 1, 5))")),
    ("named.avgpool2d-kernel-larger-than-input", _named("nn.AvgPool2d(10)(torch.ones(1, 1, 5, 5))")),
    ("named.conv2d-kernel-larger-than-input", _named("F.conv2d(torch.ones(1, 1, 2, 2), torch.ones(1, 1, 3, 3))")),
    ("named.conv2d-stride-0", _named("nn.Conv2d(1, 1, 3, stride=0)(torch.ones(1, 1, 5, 5))")),
    ("named.conv1d-stride-0", _named("F.conv1d(torch.ones(1, 1, 5), torch.ones(1, 1, 3), stride=0)")),
    ("named.conv2d-channels", _named("F.conv2d(torch.ones(1, 2, 5, 5), torch.ones(1, 1, 3, 3))")),
    ("named.randperm-negative", _named("torch.randperm(-1)")),
    ("named.zeros-negative", _named("torch.zeros(2, -1)")),
    ("named.ones-negative", _named("torch.ones(-3)")),
    ("named.empty-negative", _named("torch.empty(-1)")),
    ("named.randn-negative", _named("torch.randn(-2)")),
    ("named.rand-negative", _named("torch.rand(3, -2)")),
    ("named.full-negative", _named("torch.full((-1,), 2.0)")),
    ("named.arange-step-0", _named("torch.arange(0, 5, 0)")),
    ("named.linspace-negative-steps", _named("torch.linspace(0, 1, -1)")),
    ("named.empty-huge", _named("torch.empty(2**40, 2**20)")),
    ("named.zeros-huge", _named("torch.zeros(2**40, 2**20)")),
    ("named.add-str", _named("torch.ones(3) + 'x'")),
    ("named.mul-str", _named("torch.ones(3) * 'x'")),
    ("named.add-list-str", _named("torch.add(torch.ones(3), 'x')")),
    ("named.linear-none", _named("nn.Linear(2, 3)(None)")),
    ("named.linear-shape", _named("nn.Linear(2, 3)(torch.ones(4, 5))")),
    ("named.softmax-long", _named("torch.softmax(torch.ones(3, dtype=torch.long), 0)")),
    ("named.log_softmax-long", _named("F.log_softmax(torch.ones(3, dtype=torch.long), 0)")),
    ("named.sum-dim", _named("torch.ones(2, 2).sum(5)")),
    ("named.add-shape", _named("torch.ones(3) + torch.ones(4)")),
    ("named.view-bad", _named("torch.ones(6).view(4)")),
    ("named.reshape-bad", _named("torch.ones(6).reshape(4, 2)")),
    ("named.matmul-shape", _named("torch.ones(2, 3) @ torch.ones(4, 5)")),
    ("named.cat-none", _named("torch.cat([torch.ones(2), None])")),
    ("named.function-backward-wrong-shape", _fn_backward_wrong_shape),
]


def _all_cases():
    if torch is None:
        return []
    cases = []
    for cid, build in _op_cases() + _function_cases() + NAMED:
        err = _outcome(torch, build)
        if err is not None:  # PyTorch rejects it: a bad-argument case
            cases.append((cid, build, err))
    return cases


def _outcome(lib, build):
    """The exception the call raises, or None."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (deprecated functions say so)
        return _outcome_loud(lib, build)


def _outcome_loud(lib, build):
    try:
        fn, args, kw = build(lib)
    except Exception as e:  # noqa: BLE001 (building the inputs already rejects them)
        return e
    try:
        fn(*args, **kw)
    except Exception as e:  # noqa: BLE001
        return e
    return None


_ADDR = re.compile(r"0x[0-9a-fA-F]+")


def _norm(msg):
    return _ADDR.sub("0x...", str(msg)).strip()


# ---------------------------------------------------------------- known differences
# The exception type matches, the message does not: id -> reason.
_OVERLOADS = (
    "PyTorch's C++ argument parser, for a function with several overloads (or keyword "
    "arguments it cannot place), prints 'received an invalid combination of arguments' with "
    "every overload's schema; ndgrad names the one argument it refuses (same TypeError)")
OVERLOADED = """
    mm-kw bmm-kw addmm-kw baddbmm-kw trapezoid-kw cumulative_trapezoid-kw round-kw clamp-none0
    clamp-str0 clamp-kw clamp_min-none0 clamp_min-str0 clamp_min-kw clamp_max-none0
    clamp_max-str0 clamp_max-kw div-kw true_divide-none0 true_divide-str0 true_divide-none1
    true_divide-str1 floor_divide-none0 floor_divide-str0 floor_divide-none1 floor_divide-str1
    remainder-none0 remainder-str0 remainder-none1 remainder-str1 remainder-kw fmod-none0
    fmod-str0 fmod-none1 fmod-str1 fmod-kw pow-none0 pow-str0 pow-none1 pow-str1 pow-kw
    float_power-none0 float_power-str0 float_power-none1 float_power-str1 float_power-kw
    copysign-none0 copysign-str0 copysign-none1 copysign-str1 copysign-kw xlogy-none0 xlogy-str0
    xlogy-none1 xlogy-str1 xlogy-kw bitwise_and-none0 bitwise_and-str0 bitwise_and-none1
    bitwise_and-str1 bitwise_and-kw bitwise_or-none0 bitwise_or-str0 bitwise_or-none1
    bitwise_or-str1 bitwise_or-kw bitwise_xor-none0 bitwise_xor-str0 bitwise_xor-none1
    bitwise_xor-str1 bitwise_xor-kw bitwise_left_shift-none0 bitwise_left_shift-str0
    bitwise_left_shift-none1 bitwise_left_shift-str1 bitwise_left_shift-kw moveaxis-none0
    moveaxis-str0 moveaxis-kw torch.add-none torch.add-str torch.addbmm-none torch.addbmm-str
    torch.addcdiv-none torch.addcdiv-str torch.addcmul-none torch.addcmul-str torch.addmm-none
    torch.addmm-str torch.addmv-none torch.addmv-str torch.addr-none torch.addr-str
    torch.all-none torch.all-str torch.any-none torch.any-str torch.baddbmm-none
    torch.baddbmm-str torch.bitwise_and-none torch.bitwise_and-str torch.bitwise_left_shift-none
    torch.bitwise_left_shift-str torch.bitwise_or-none torch.bitwise_or-str
    torch.bitwise_right_shift-none torch.bitwise_right_shift-str torch.bitwise_xor-none
    torch.bitwise_xor-str torch.bmm-none torch.bmm-str torch.bucketize-none torch.bucketize-str
    torch.clamp-none torch.clamp-str torch.clamp_-none torch.clamp_-str torch.clamp_max-none
    torch.clamp_max-str torch.clamp_max_-none torch.clamp_max_-str torch.clamp_min-none
    torch.clamp_min-str torch.clamp_min_-none torch.clamp_min_-str torch.clip-none
    torch.clip-str torch.clip_-none torch.clip_-str torch.conv1d-none torch.conv1d-str
    torch.conv2d-none torch.conv2d-str torch.conv3d-none torch.conv3d-str torch.copysign-none torch.copysign-str torch.div-none
    torch.div-str torch.divide-none torch.divide-str torch.dsplit-none torch.dsplit-str
    torch.eq-none torch.eq-str torch.fill_-none torch.fill_-str torch.float_power-none
    torch.float_power-str torch.floor_divide-none torch.floor_divide-str torch.fmod-none
    torch.fmod-str torch.ge-none torch.ge-str torch.greater-none torch.greater-str
    torch.greater_equal-none torch.greater_equal-str torch.gt-none torch.gt-str
    torch.hsplit-none torch.hsplit-str torch.index_fill-none torch.index_fill-str
    torch.isin-none torch.isin-str torch.le-none torch.le-str torch.lerp-none torch.lerp-str
    torch.less-none torch.less-str torch.less_equal-none torch.less_equal-str
    torch.linspace-none torch.linspace-str torch.logspace-none torch.logspace-str torch.lt-none
    torch.lt-str torch.masked_fill-none torch.masked_fill-str torch.mm-none torch.mm-str
    torch.moveaxis-none torch.moveaxis-str torch.movedim-none torch.movedim-str
    torch.multiply-none torch.multiply-str torch.nanquantile-none torch.nanquantile-str
    torch.narrow-none torch.narrow-str torch.ne-none torch.ne-str torch.not_equal-none
    torch.not_equal-str torch.pow-none torch.pow-str torch.quantile-none torch.quantile-str
    torch.randint-none torch.randint-str torch.randint_like-none torch.randint_like-str
    torch.remainder-none torch.remainder-str torch.rsub-none torch.rsub-str torch.scatter-none
    torch.scatter-str torch.searchsorted-none torch.searchsorted-str torch.spmm-none
    torch.spmm-str torch.std-none torch.std-str torch.std_mean-none torch.std_mean-str
    torch.sub-none torch.sub-str torch.subtract-none torch.subtract-str torch.tensor_split-none
    torch.tensor_split-str torch.true_divide-none torch.true_divide-str torch.var-none
    torch.var-str torch.var_mean-none torch.var_mean-str torch.vsplit-none torch.vsplit-str
    torch.xlogy-none torch.xlogy-str torch.xlogy_-none torch.xlogy_-str F.conv1d-none
    F.conv1d-str F.conv2d-none F.conv2d-str F.conv3d-none F.conv3d-str
""".split()
MESSAGE_ONLY = dict.fromkeys(OVERLOADED, _OVERLOADS)
MESSAGE_ONLY.update({
    "torch.repeat_interleave-none": "PyTorch matches a lone argument to its repeat_interleave("
                                    "repeats) overload; ndgrad names `input`",
    "torch.repeat_interleave-str": "as torch.repeat_interleave-none",
    "torch.sparse_coo_tensor-none": "PyTorch matches a lone argument to its sparse_coo_tensor("
                                    "size) overload; ndgrad reports the missing `values`",
    "torch.sparse_coo_tensor-str": "as torch.sparse_coo_tensor-none",
})
MESSAGE_ONLY.update(dict.fromkeys(
    [f"torch.sparse_{k}_tensor-{c}" for k in ("csr", "csc", "compressed") for c in ("none", "str")],
    "PyTorch's parser lists the overloads of the compressed-tensor factories (with and without "
    "`size`) for a lone argument; ndgrad reports the missing positional arguments (same "
    "TypeError)"))
MESSAGE_ONLY.update(dict.fromkeys(
    ["torch.binomial-none", "torch.binomial-str"],
    "PyTorch's parser refuses the first argument's type before it sees that `prob` is missing; "
    "ndgrad reports the missing argument first (same TypeError)"))
# The exception type differs (or ndgrad does not raise): id -> reason.
XFAIL = {
    "torch.norm-none": "PyTorch's torch.norm is a Python function that reads input.layout first "
                       "(AttributeError); ndgrad's norm sits behind the out= layer and raises "
                       "the C++ functions' argument TypeError",
    "torch.norm-str": "as torch.norm-none",
}


def _compare(cid, build, theirs):
    """None when ndgrad raises the same type with the same message and leaves its inputs alone,
    else the difference in words."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _compare_loud(cid, build, theirs)


def _compare_loud(cid, build, theirs):
    try:
        fn, args, kw = build(ndgrad)
    except Exception as e:  # noqa: BLE001
        ours, snap = e, []
    else:
        snap = [(a, a.detach().numpy().copy(), a._version) for a in args
                if isinstance(a, ndgrad.Tensor)]
        try:
            fn(*args, **kw)
        except Exception as e:  # noqa: BLE001
            ours = e
        else:
            return "ndgrad does not raise"
    for a, values, version in snap:
        if a._version != version:
            return f"an input's _version moved {version} -> {a._version}"
        if not np.array_equal(a.detach().numpy(), values, equal_nan=True):
            return "an input's values changed"
    if type(ours).__module__.startswith("numpy"):
        return f"NumPy exception {type(ours).__name__}: {ours}"
    if type(ours) is not type(theirs):
        return f"type {type(ours).__name__} ({_norm(ours)[:200]!r}) vs " \
               f"{type(theirs).__name__} ({_norm(theirs)[:200]!r})"
    if _norm(ours) != _norm(theirs):
        return f"message {_norm(ours)[:300]!r} vs {_norm(theirs)[:300]!r}"
    return None


CASES = _all_cases()


def _params():
    for cid, build, err in CASES:
        marks = ()
        if cid in XFAIL:
            marks = pytest.mark.xfail(reason=XFAIL[cid], strict=True)
        yield pytest.param(cid, build, err, id=cid, marks=marks)


@pytest.mark.parametrize("cid,build,theirs", list(_params()))
def test_bad_argument(cid, build, theirs):
    diff = _compare(cid, build, theirs)
    if diff is not None and cid in MESSAGE_ONLY and diff.startswith("message "):
        if cid in OVERLOADED:  # the documented difference, and only that one
            assert "received an invalid combination of arguments" in str(theirs)
        return  # documented: the type matches, the text differs
    assert diff is None, diff


def test_table_is_large_and_documented():
    if torch is None:
        pytest.skip("the table compares with PyTorch")
    assert len(CASES) > 500
    ids = {c[0] for c in CASES}
    assert not (set(MESSAGE_ONLY) | set(XFAIL)) - ids, "allow-list entries without a case"
    assert not set(MESSAGE_ONLY) & set(XFAIL)


def test_message_only_entries_still_differ_only_in_text():
    """An allow-listed message deviation must still match the type (else it belongs in XFAIL)."""
    for cid, build, theirs in CASES:
        if cid in MESSAGE_ONLY:
            diff = _compare(cid, build, theirs)
            assert diff is None or diff.startswith("message "), (cid, diff)


if __name__ == "__main__":
    ok = documented = 0
    for cid, build, theirs in CASES:
        d = _compare(cid, build, theirs)
        if d is None:
            ok += 1
        elif cid in MESSAGE_ONLY or cid in XFAIL:
            documented += 1
        if d is not None and "-v" in sys.argv:
            print(f"{cid}: {d}")
    print(f"{ok}/{len(CASES)} cases match exactly; {documented} listed differences; "
          f"{len(CASES) - ok - documented} unlisted")


# ---------------------------------------------------------------- not errors at all

def test_comparison_with_none_is_a_python_bool():
    if torch is None:
        pytest.skip("compares with PyTorch")
    for lib in (torch, ndgrad):
        t = lib.ones(3)
        got = (t == None, t != None, None == t, None != t)  # noqa: E711
        assert got == (False, True, False, True), lib.__name__


def test_operators_refuse_none_and_strings_as_python_does():
    """Tensor + 'x': the operator returns NotImplemented, so Python words the TypeError."""
    if torch is None:
        pytest.skip("compares with PyTorch")
    import operator
    for op in (operator.add, operator.sub, operator.mul, operator.truediv):
        for other in (None, "x"):
            for swap in (False, True):
                msgs = []
                for lib in (torch, ndgrad):
                    t = lib.ones(3)
                    args = (other, t) if swap else (t, other)
                    with pytest.raises(TypeError) as info:
                        op(*args)
                    msgs.append(str(info.value))
                assert msgs[0] == msgs[1], (op, other, swap)
