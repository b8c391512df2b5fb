"""Keyword forms of every signature, checked against PyTorch's own signatures.

For every overload of every torch function and Tensor method that both libraries have (the
oracle: tests/torch_signatures.py, read from the installed torch wheel's stubs, Python
signatures and docstrings; no hand list of names), a call is synthesized that passes every
parameter by keyword, the optional ones at their defaults (`torch.empty(size=(3, 3), out=None,
dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False, memory_format=
None)`), with values made from the parameter's type and name in a few "worlds" (matrices,
vectors, batches, integers, 0-d, complex...) until PyTorch accepts the call. Then ndgrad must
accept the same call and give the same result as its own positional form of it (same seed),
and the result's shapes and dtypes must be PyTorch's. An overload PyTorch accepts in no world
is not checked (COVERAGE says how many are); one ndgrad computes in neither form is a missing
feature, not a keyword form, and must be listed in UNSUPPORTED with its reason.

Run as a script (`python tests/test_keyword_forms.py`) to print what was checked.
"""
import os
import sys
import warnings

import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import torch_signatures as S  # noqa: E402

# ---------------------------------------------------------------- what is not a keyword form
# (kind, name): the reason it is not checked at all
NOT_CALLS = {
    # identities, addresses, global state, Python protocol methods nobody calls by keyword
    **{("F", n): "global state or not a computation" for n in (
        "compile", "seed", "manual_seed", "initial_seed", "get_rng_state", "set_rng_state",
        "get_default_device", "set_default_device", "get_default_dtype", "set_default_dtype",
        "set_default_tensor_type", "set_printoptions", "set_warn_always", "vmap", "save",
        "load", "use_deterministic_algorithms", "set_float32_matmul_precision",
        "set_num_threads", "set_num_interop_threads", "set_flush_denormal")},
    **{("M", n): "identity, storage or Python protocol" for n in (
        "__hash__", "__dir__", "__iter__", "__repr__", "__format__", "__reduce_ex__",
        "__deepcopy__", "__setstate__", "__array__", "__array_wrap__", "__dlpack_device__",
        "__dlpack__", "data_ptr", "untyped_storage", "storage", "_typed_storage",
        "register_hook", "register_post_accumulate_grad_hook", "backward", "retain_grad",
        "apply_", "map_", "map2_", "as_subclass", "pin_memory", "share_memory_", "module_load",
        "cuda", "xpu", "ipu", "mtia")},
}


def _operator(name):
    return name.startswith("__") and name.endswith("__")


# ---------------------------------------------------------------- values by type and name
WORLDS = (   # (shape, kind) of every tensor argument in that world
    ((3, 3), "float"), ((3,), "float"), ((2, 3, 3), "float"), ((1, 2, 3, 3), "float"),
    ((3, 3), "int"), ((), "float"), ((3,), "int"), ((3, 3), "bool"), ((3, 3), "complex"),
    ((1, 1, 2, 3, 3), "float"), ((), "int"),
)
INTS = {"dim": 0, "dim0": 0, "dim1": 1, "dim2": 1, "k": 1, "n": 2, "diagonal": 0, "groups": 1,
        "chunks": 1, "sections": 1, "split_size": 1, "start": 0, "end": 2, "step": 1,
        "length": 1, "high": 10, "low": 0, "num_samples": 1, "bins": 3, "offset": 0,
        "window_length": 4, "steps": 3, "repeats": 2, "row": 3, "col": 3, "p": 2,
        "start_dim": 0, "end_dim": -1, "index": 0, "source": 0, "destination": 1, "size": 3,
        "axis0": 0, "axis1": 1, "q": 1, "niter": 1, "num_classes": 3, "value": 1,
        "decimals": 1, "sparse_dim": 1, "dense_dim": 0, "upscale_factor": 1,
        "downscale_factor": 1, "output_size": 1, "kernel_size": 1, "dimension": 0,
        "split_size_or_sections": 1, "n_fft": 4, "shifts": 1, "dims": 0, "m": 3,
        "minlength": 0, "padding_idx": 0, "max_norm": 1, "norm_type": 2}
STRINGS = {"reduce": ("prod", "add", "sum", "mean", "amax"), "rounding_mode": ("floor", "trunc"),
           "mode": ("reflect", "constant"), "side": ("left",), "interpolation": ("linear",),
           "indexing": ("ij",), "equation": ("ij->ji", "i->i", "ijk->kji", "ijkl->lkji"),
           "pad_mode": ("reflect",), "compute_mode": ("use_mm_for_euclid_dist_if_necessary",),
           "approximate": ("none",), "driver": (None,), "UPLO": ("L",)}
NAMED = {"as_tuple": True, "layout": "strided", "memory_format": "contiguous_format"}


SHAPES = {"vec": (3,), "vec1": (3,), "vec2": (3,), "batch1": (2, 3, 3), "batch2": (2, 3, 3),
          "mat": (3, 3), "mat1": (3, 3), "mat2": (3, 3), "start": (), "end": (), "length": (),
          "step": (), "weights": (3,)}


def _tensor(world, name, gen):
    shape, kind = WORLDS[world]
    shape = SHAPES.get(name, shape)
    if name in ("start", "end", "length", "step"):
        kind = "int"
    if name in ("boundaries", "sorted_sequence"):
        return torch.tensor([0.1, 0.5, 0.9], dtype=torch.float64)
    if name in ("index", "indices") or kind == "int":
        return torch.randint(0, 2, shape, generator=gen)
    if name in ("mask", "condition") or kind == "bool":
        return torch.rand(shape, generator=gen) > 0.5
    if name in ("value", "fill_value"):
        return torch.tensor(0.5, dtype=torch.float64)
    if kind == "complex":
        return torch.complex(torch.rand(shape, generator=gen, dtype=torch.float64),
                             torch.rand(shape, generator=gen, dtype=torch.float64))
    return torch.rand(shape, generator=gen, dtype=torch.float64) * 0.8 + 0.1


def _size(name, world):
    shape = WORLDS[world][0]
    if name == "dims":
        return tuple(reversed(range(len(shape))))
    if name in ("repeats", "sizes"):
        return (2,) * len(shape)
    if name in ("dim", "stride"):
        return (0,) if name == "dim" else (1,) * len(shape)
    if name in ("split_size", "split_sizes", "indices", "sections"):
        return (1, 2)
    return shape


class NoValue(Exception):
    pass


def value(p, world, gen, optional=False):
    """A PyTorch value for parameter p in `world`: its default when it has one (optional: a
    value made for it instead of a default None)."""
    name, a = p.name, p.annotation.replace(" ", "")
    if p.default is not S.REQUIRED and p.default is not S.UNKNOWN and not (
            optional and p.default is None and p.kind == "pos"):
        return p.default
    if name in NAMED:
        v = NAMED[name]
        return getattr(torch, v) if isinstance(v, str) else v
    if name in STRINGS:
        choices = STRINGS[name]
        return choices[world % len(choices)]
    if a.startswith("tuple[Tensor") or name == "tensors":
        return [_tensor(world, name, gen), _tensor(world, name, gen)]
    if a.startswith("Tensor") or (not a and name in (
            "input", "tensor", "self", "other", "A", "B", "x", "y", "x1", "x2", "a", "b",
            "mean", "std", "weight", "elements", "test_elements", "LU", "pivots")):
        return _tensor(world, name, gen)
    if a.startswith("_dtype") or name == "dtype":
        return torch.float64
    if a.startswith("Sequence[_int") or a.startswith("_size") or (
            not a and name in ("size", "shape", "dims", "sizes")):
        return _size(name, world)
    if a.startswith(("_int", "int", "SymInt")) or (not a and name in INTS):
        return INTS.get(name, 1)
    if a.startswith("_float"):
        return 0.5
    if a.startswith(("Number", "Tensor|Number")):
        return INTS.get(name, 2)
    if a.startswith("_bool"):
        return False
    if a.startswith("DeviceLikeType") or name == "device":
        return "cpu"
    if a.startswith("Generator") or name == "generator":
        return None
    if name in ("data", "obj"):
        return [[0.5, 1.5], [2.5, 3.5]]
    if name == "ndarray":
        return np.arange(6.0).reshape(2, 3)
    if name == "buffer":
        return bytearray(np.arange(4.0).tobytes())
    raise NoValue(f"{name}: {p.annotation}")


def to_ndgrad(v):
    if isinstance(v, torch.Tensor):
        return ndgrad.from_numpy(v.detach().numpy().copy())
    if isinstance(v, torch.dtype):
        return getattr(ndgrad, str(v).split(".")[1])
    if isinstance(v, (torch.layout, torch.memory_format)):
        return getattr(ndgrad, str(v).split(".")[1])
    if isinstance(v, (list, tuple)):
        return type(v)(to_ndgrad(x) for x in v)
    return v


def _fresh(v):
    if isinstance(v, torch.Tensor):
        return v.clone()
    if isinstance(v, list):
        return [_fresh(x) for x in v]
    return v


def summary(r, values=True):
    """A comparable summary of a result: tensors as (shape, dtype name, values)."""
    if isinstance(r, (torch.Tensor, ndgrad.Tensor)):
        if str(r.layout) != "torch.strided":
            r = r.to_dense()
        data = None
        if values:  # (NumPy has no bfloat16 in either library: compare its values widened)
            data = (r.detach().float() if str(r.dtype) == "torch.bfloat16" else r.detach()).numpy()
        return ("T", tuple(r.shape), str(r.dtype).split(".")[-1], data)
    if isinstance(r, (list, tuple)):
        return tuple(summary(x, values) for x in r)
    if isinstance(r, (torch.dtype, ndgrad.dtype)):
        return ("dtype", str(r))
    if isinstance(r, (torch.device, ndgrad.device)):
        return ("device", str(r))
    if isinstance(r, type):      # (a class each library has its own of: storage_type())
        return ("type", r.__name__)
    return r


def same(a, b, values=True):
    if isinstance(a, tuple) and a[:1] == ("T",):
        if not (isinstance(b, tuple) and b[:1] == ("T",)) or a[1:3] != b[1:3]:
            return False
        if values and a[3] is not None and b[3] is not None:
            return np.array_equal(a[3], b[3], equal_nan=a[3].dtype.kind in "fc")
        return True
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(
            same(x, y, values) for x, y in zip(a, b))
    try:
        return bool(a == b) or (a != a and b != b)
    except Exception:
        return type(a) is type(b)


UNINITIALISED = ("empty", "new_empty", "empty_like", "empty_strided", "new_empty_strided",
                 "empty_permuted", "resize_", "new")


def _rnn_packed(mode):
    """Values for the RNN functions' packed overload (data, batch_sizes, hx, params, ...): a
    one-layer run over batch_sizes [2, 1] of 2 features, hidden size 2."""
    def make(gen):
        gates = {"lstm": 4, "gru": 3}.get(mode, 1)
        r = lambda *s: torch.rand(*s, generator=gen, dtype=torch.float64)   # noqa: E731
        h = r(1, 2, 2)
        return dict(data=r(3, 2), batch_sizes=torch.tensor([2, 1]),
                    hx=[h, r(1, 2, 2)] if mode == "lstm" else h,
                    params=[r(2 * gates, 2), r(2 * gates, 2), r(2 * gates), r(2 * gates)],
                    has_biases=True, num_layers=1, dropout=0.0, train=False,
                    bidirectional=False)
    return make


# (kind, name, first parameter) -> gen -> PyTorch values for a keyword call the worlds cannot
# make (arguments whose shapes must fit one another in several ways)
MADE = {("F", n, "data"): _rnn_packed(n) for n in ("lstm", "gru", "rnn_tanh", "rnn_relu")}


def _call(torch_fn, self_t, params, vals, keyword):
    """PyTorch's call with the values `vals` (fresh copies), by keyword or by position."""
    v = {k: _fresh(x) for k, x in vals.items()}
    args = (self_t.clone(),) if self_t is not None else ()
    if not keyword:
        args += tuple(v.pop(p.name) for p in params if p.kind == "pos")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.default_generator.manual_seed(0)   # (torch.manual_seed: 2 ms of device calls)
        return torch_fn(*args, **v)


def check_overload(kind, name, ov, torch_fn, nd_fn):
    """One overload: (status, detail). status: "ok", "uncovered" (PyTorch accepted no
    synthesized call), "unsupported" (ndgrad computes neither form) or "fail"."""
    params = ov.keyword_params
    status = ("uncovered", "no world")
    refused = ""   # (PyTorch's parser refusing one of the stub's keywords: the stub is wrong)
    for world in range(2 * len(WORLDS)):
        # (each world with the defaults, then with values for the optional None parameters:
        # clamp(min=None, max=None) computes nothing)
        gen = torch.Generator().manual_seed(world)
        made = MADE.get((kind, name, params[0].name if params else None))
        try:
            vals = made(gen) if made is not None else {
                p.name: value(p, world % len(WORLDS), gen, world >= len(WORLDS))
                for p in params}
        except NoValue as e:
            return "uncovered", f"no value for {e}"
        world = world % len(WORLDS)
        self_t = _tensor(world, "self", gen) if kind == "M" else None
        try:
            tr = summary(_call(torch_fn, self_t, params, vals, True), values=False)
        except Exception as e:
            status = ("uncovered", refused + f"{type(e).__name__}: {e}"[:200])
            if "keyword argument" in str(e) or "unrecognized keyword" in str(e):
                refused = "keyword argument refused; "
            continue
        try:   # (PyTorch's positional form of the same call, where it is one)
            tp = summary(_call(torch_fn, self_t, params, vals, False), values=False)
        except Exception:
            tp = None

        def nd_call(keyword):
            nv = {k: to_ndgrad(_fresh(v)) for k, v in vals.items()}
            ndgrad.manual_seed(0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                args = (to_ndgrad(self_t),) if kind == "M" else ()
                if keyword:
                    return nd_fn(*args, **nv)
                pos = [nv[p.name] for p in params if p.kind == "pos"]
                kw = {p.name: nv[p.name] for p in params if p.kind == "kw"}
                return nd_fn(*args, *pos, **kw)

        try:
            kr = summary(nd_call(True))
        except Exception as e:
            detail = f"{type(e).__name__}: {e}"[:300]
            try:
                nd_call(False)
            except Exception:
                return "unsupported", detail
            return "fail", f"keyword form raised {detail} (the positional form works)"
        if tp is not None and same(tr, tp, values=False):
            try:
                pr = summary(nd_call(False))
            except Exception as e:
                return "fail", f"the positional form raised {type(e).__name__}: {e}"[:300]
            if not same(kr, pr, name not in UNINITIALISED):
                return "fail", "keyword and positional forms give different results"
        if not same(tr, kr, values=False):
            return "fail", f"shapes/dtypes differ from PyTorch's: {tr!r:.150} vs {kr!r:.150}"
        return "ok", ""
    return status


NAMESPACES = ("linalg", "fft", "special", "nn.functional")


def _namespace(lib, kind):
    for part in kind.split("."):
        lib = getattr(lib, part)
    return lib


def overloads(kind):
    """(name, overload, PyTorch's function, ndgrad's) for kind "F" (torch), "M" (Tensor) or a
    namespace (NAMESPACES)."""
    if kind in ("F", "M"):
        table = S.torch_functions() if kind == "F" else S.tensor_methods()
        holders = (torch, ndgrad) if kind == "F" else (torch.Tensor, ndgrad.Tensor)
    else:
        import importlib
        importlib.import_module("torch." + kind)
        table = S.namespace_functions(_namespace(torch, kind))
        holders = (_namespace(torch, kind), _namespace(ndgrad, kind))
    for name in sorted(table):
        if (kind, name) in NOT_CALLS or (name.startswith("_") and not _operator(name)):
            continue
        if kind == "M" and _operator(name):
            continue   # (operators are called as operators)
        nd_fn = getattr(holders[1], name, None)
        if nd_fn is None:
            continue
        torch_fn = getattr(holders[0], name)
        for ov in table[name]:
            if ov.vararg is not None:
                continue   # (*size: not keyword-callable; its sequence overload is)
            if any("ellipsis" in p.annotation or p.name == "names" for p in ov.params):
                continue   # (named tensors)
            first = ov.keyword_params[0] if ov.keyword_params else None
            if kind == "F" and (any(p.name == "self" for p in ov.keyword_params[1:]) or (
                    first is not None and first.name == "self" and
                    first.annotation.startswith("Tensor"))):
                continue   # (deprecated overloads: add(self, alpha, other); the parser calls
                # a Tensor first argument `input`, whatever a stub says)
            yield name, ov, torch_fn, nd_fn


def _names(fn):
    """The keyword names ndgrad's `fn` takes, or None where its signature does not say (a
    **kwargs or *args that passes them on)."""
    import inspect
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    ps = list(sig.parameters.values())
    if any(p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) for p in ps) and not [
            p for p in ps if p.kind is p.POSITIONAL_OR_KEYWORD]:
        return None
    if any(p.kind is p.VAR_KEYWORD for p in ps):
        return None
    names = {p.name for p in ps if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    from ndgrad.ops import _out
    if getattr(fn, "_ndgrad_out", False) and getattr(fn, "__name__", "") not in _out.NO_OUT:
        names.add("out")   # (the out= wrapper, ndgrad/ops/_out.py, shows its function's signature)
    return names


def static_check(kind, ov, nd_fn, why):
    """For an overload no synthesized call reached: its keyword names against ndgrad's
    signature, where that signature lists them (why: PyTorch's last refusal)."""
    if "keyword argument" in why or "unrecognized keyword" in why or "missing" in why:
        return "uncovered", "PyTorch's parser refuses the stub's keywords: " + why
    names = _names(nd_fn)
    if names is None:
        return "uncovered", "no call, no signature"
    want = {p.name for p in ov.keyword_params}
    if kind == "M":
        names.discard("self")
    missing = sorted(want - names)
    if missing:
        return "fail", f"ndgrad's signature has no {missing} (static check)"
    return "static", ""


def run(kind):
    results = []
    for name, ov, torch_fn, nd_fn in overloads(kind):
        status, detail = check_overload(kind, name, ov, torch_fn, nd_fn)
        if status == "uncovered":
            status, detail = static_check(kind, ov, nd_fn, detail)
        where = {"F": "torch", "M": "Tensor"}.get(kind, "torch." + kind)
        results.append((status, f"{where}.{ov}", detail))
    return results


# ---------------------------------------------------------------- features, not keyword forms
# (qualified overload text prefix) -> why ndgrad computes the call in neither form
UNSUPPORTED = {
    # (the world of integer vectors gives unsorted bin edges: PyTorch counts into them as they
    # come, NumPy refuses them)
    "torch.histogram(input, bins, *": "bin edges that do not increase",
    "Tensor.new(storage)": "typed storages: ndgrad has untyped_storage() for data pointers only",
    "Tensor.chalf(": "complex32: NumPy has no such dtype (chalf raises a TypeError saying so)",
    # (a stub that lists what PyTorch's parser refuses, in no message that names the keyword)
    "Tensor.true_divide(other, *, out=None)": "PyTorch's stub: the method has no out=",
}


def _known(sig):
    return any(sig.startswith(k) for k in UNSUPPORTED)


@pytest.mark.parametrize("kind,least", [("F", 600), ("M", 550), ("linalg", 0), ("fft", 0),
                                        ("special", 0), ("nn.functional", 0)])
def test_keyword_forms(kind, least):
    results = run(kind)
    bad = [f"{sig}: {detail}" for status, sig, detail in results
           if status in ("fail", "unsupported") and not _known(sig)]
    assert not bad, f"{len(bad)} keyword forms fail:\n" + "\n".join(bad)
    checked = sum(status == "ok" for status, _, _ in results)
    assert checked >= least, f"only {checked} overloads checked (COVERAGE fell)"


if __name__ == "__main__":
    for kind in ("F", "M") + NAMESPACES:
        res = run(kind)
        counts = {}
        for status, sig, detail in res:
            counts[status] = counts.get(status, 0) + 1
            if status != "ok" and (len(sys.argv) > 1 or status != "uncovered"):
                print(f"{status:12s} {sig}   {detail[:160]}")
        print(kind, counts)


# ---------------------------------------------------------------- the issue's cases, named

def test_the_issue_keyword_calls():
    for lib in (torch, ndgrad):
        t = lib.arange(6.0).reshape(2, 3).clone()
        assert tuple(lib.empty(size=(2, 3)).shape) == (2, 3)
        assert tuple(lib.randint(10, size=(1,)).shape) == (1,)
        assert tuple(lib.randint(high=10, size=(4,)).shape) == (4,)
        assert tuple(t.new_zeros(size=(4,)).shape) == (4,)
        assert [tuple(p.shape) for p in t.split(split_size=2, dim=1)] == [(2, 2), (2, 1)]
        assert t.view(size=(3, 2))._base is t
        assert tuple(t.expand(size=(2, 2, 3)).shape) == (2, 2, 3)
        assert tuple(t.permute(dims=(1, 0)).shape) == (3, 2)
        assert tuple(t.repeat(repeats=(2, 1)).shape) == (4, 3)
        assert tuple(t.reshape(shape=(6,)).shape) == (6,)
        assert t.to(dtype=lib.float64).dtype == lib.float64
        assert t.sum(dim=0, keepdim=True).tolist() == [[3.0, 5.0, 7.0]]


def test_first_argument_by_keyword_records_the_graph():
    """torch.mul(input=a, other=b) and torch.mul(self=a, ...) are the positional call: the
    same node, the same gradients (the first argument was refused, or lost its history)."""
    a = ndgrad.tensor([1.0, 2.0], requires_grad=True)
    b = ndgrad.tensor([3.0, 4.0], requires_grad=True)
    y = ndgrad.mul(input=a, other=b)
    assert type(y.grad_fn).__name__ == "MulBackward0"
    y.sum().backward()
    assert a.grad.tolist() == [3.0, 4.0] and b.grad.tolist() == [1.0, 2.0]
    v = ndgrad.transpose(input=a.detach().reshape(1, 2), dim0=0, dim1=1)
    assert v._base is not None and tuple(v.shape) == (2, 1)
    assert ndgrad.pow(self=2, exponent=ndgrad.tensor([3.0])).tolist() == [8.0]


def test_python_types_as_dtypes_are_pytorchs():
    """float is double and complex cdouble whatever the default dtype, as PyTorch's parser."""
    for lib in (torch, ndgrad):
        assert str(lib.zeros(2, dtype=float).dtype) == "torch.float64"
        assert str(lib.ones(2).to(float).dtype) == "torch.float64"
        assert str(lib.zeros(2, dtype=complex).dtype) == "torch.complex128"
        assert str(lib.zeros(2, dtype=int).dtype) == "torch.int64"


def test_tensor_to_overloads():
    """Tensor.to's three overloads as PyTorch's parser reads them, positions and keywords
    (`tensor=`, not the stub's `other=`), and its refusals."""
    calls = [lambda L, x: x.to(L.float64, False, True), lambda L, x: x.to("cpu", L.float64),
             lambda L, x: x.to(tensor=x.double()), lambda L, x: x.to(device=None, dtype=L.int32),
             lambda L, x: x.to(x.double(), False, True), lambda L, x: x.to(float)]
    for call in calls:
        assert str(call(ndgrad, ndgrad.ones(2)).dtype) == str(call(torch, torch.ones(2)).dtype)
    for bad in (lambda L, x: x.to(other=x), lambda L, x: x.to(foo=1),
                lambda L, x: x.to(L.float64, dtype=L.int64)):
        with pytest.raises(TypeError) as theirs:
            bad(torch, torch.ones(2))
        with pytest.raises(TypeError) as ours:
            bad(ndgrad, ndgrad.ones(2))
        assert str(ours.value) == str(theirs.value)


def test_dropout2d_of_a_2d_input_warns_and_keeps_its_shape():
    """PyTorch's dropout2d: a 2-d input warns and is feature dropout of dim 1 (elementwise
    here), a 3-d one is taken as (N, C, L); dropout1d/3d add the batch dim of an unbatched
    input. Shapes and warnings as PyTorch's (the draws are PyTorch's only in distribution)."""
    import warnings
    for lib in (torch, ndgrad):
        F = lib.nn.functional
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert tuple(F.dropout2d(lib.ones(3, 4)).shape) == (3, 4)
            assert tuple(lib.nn.Dropout2d()(lib.ones(3, 4)).shape) == (3, 4)
            r = F.dropout2d(lib.ones(8, 6, 5))   # (N, C, L): whole rows of 5 dropped
            assert tuple(r.shape) == (8, 6, 5)
            assert all(len(set(row.tolist())) == 1 for row in r.reshape(-1, 5))
            assert tuple(F.dropout1d(lib.ones(3, 4)).shape) == (3, 4)
            assert tuple(F.dropout3d(lib.ones(2, 3, 4, 5)).shape) == (2, 3, 4, 5)
        assert [str(m.message)[:30] for m in w] == [
            "dropout2d: Received a 2-D inpu", "dropout2d: Received a 2-D inpu",
            "dropout2d: Received a 3D input"]
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        ndgrad.nn.functional.dropout1d(ndgrad.ones(3))


def test_adaptive_avg_pool_to_one_is_the_mean_of_any_input():
    """ATen's shortcut for an output of 1 (the mean over the pooled dims, no check of the
    input's dims), as PyTorch: 2-d input to adaptive_avg_pool2d, 3-d to ..._pool3d."""
    x = np.random.default_rng(0).random((3, 4))
    for pool, shape in (("adaptive_avg_pool2d", (3, 4)), ("adaptive_avg_pool3d", (2, 3, 4))):
        x = np.random.default_rng(0).random(shape)
        ours = getattr(ndgrad.nn.functional, pool)(ndgrad.tensor(x), 1)
        theirs = getattr(torch.nn.functional, pool)(torch.tensor(x), 1)
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy())
