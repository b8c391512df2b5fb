"""torch.func-style composable transforms: grad, grad_and_value, vjp, jvp, jacrev, jacfwd,
hessian, vmap, functional_call.

    >>> import ndgrad as torch
    >>> from ndgrad.func import grad, vmap
    >>> grad(lambda x: (x ** 3).sum())(torch.tensor([1.0, 2.0]))
    tensor([ 3., 12.])
    >>> vmap(torch.dot)(torch.ones(4, 3), torch.ones(4, 3))
    tensor([3., 3., 3., 3.])

How they compose: reverse-mode transforms differentiate a fresh alias of each input and keep the
graph (create_graph) whenever an outer transform may differentiate the result again, so
`grad(grad(f))`, `jacrev(jacrev(f))` work. Forward-mode transforms (`jvp`, `jacfwd`) use dual
tensors (autograd/forward_ad.py); inputs' tangents survive the aliasing, so forward-over-reverse
(`jacfwd(jacrev(f))`, the default `hessian`) works. `vmap` maps the function over the batch
dimension sample by sample and stacks the results (correct for any function, including ones
whose ops mix samples); it nests and is differentiable.
"""
import functools

from .. import _creation
from . import _vmap as _vm
from .._tensor import Tensor
from ..ops import _registry
from ..autograd import grad_mode, forward_ad as fwAD
from ..autograd.functional import (_basis_duals, _collect_tangents, _jacobians_from_columns,
                                  _stack)

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap",
           "functional_call", "stack_module_state", "linearize", "functionalize",
           "debug_unwrap", "replace_all_batch_norm_modules_", "rearrange"]


# ---------------------------------------------------------------- tiny pytrees

def _flatten(tree):
    """Leaves (in order) and a spec to rebuild `tree` from new leaves: tuples, lists, dicts."""
    if isinstance(tree, (tuple, list)):
        leaves, specs = [], []
        for t in tree:
            ls, s = _flatten(t)
            leaves += ls
            specs.append((len(ls), s))
        return leaves, (type(tree), specs)
    if isinstance(tree, dict):
        leaves, specs = [], []
        for k, t in tree.items():
            ls, s = _flatten(t)
            leaves += ls
            specs.append((k, len(ls), s))
        return leaves, (dict, specs)
    return [tree], None


def _unflatten(leaves, spec):
    if spec is None:
        return leaves[0]
    kind, specs = spec
    if kind is dict:
        out, i = {}, 0
        for k, n, s in specs:
            out[k] = _unflatten(leaves[i:i + n], s)
            i += n
        return out
    out, i = [], 0
    for n, s in specs:
        out.append(_unflatten(leaves[i:i + n], s))
        i += n
    return kind(out) if kind in (tuple, list) else kind(*out)


# ---------------------------------------------------------------- aliasing inputs

def _copy_tangents(src, dst):
    fw = src.__dict__.get("_fw_grads")
    if fw:
        for lid, t in fw.items():
            fwAD._set_tangent(dst, lid, t)
    return dst


def _alias_input(x):
    """A tensor with x's value (and tangents) that requires grad, for differentiating."""
    if not isinstance(x, Tensor):
        return x
    if x.requires_grad and grad_mode.is_grad_enabled():
        return x.view_as(x)
    return _copy_tangents(x, x.detach().requires_grad_(True))


def _release(t, keep_graph):
    if not isinstance(t, Tensor) or keep_graph:
        return t
    return _copy_tangents(t, t.detach())


def _keep_graph(leaves):
    return grad_mode.is_grad_enabled() and any(
        isinstance(t, Tensor) and t.requires_grad for t in leaves)


def _check_argnums(argnums, n):
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
        if not -n <= a < n:
            raise RuntimeError(f"Got argnum={a}, but only {n} positional inputs")
    return tuple(a % n for a in nums)


def _diff_args(args, argnums):
    """Alias the differentiated arguments; return new args and their flattened leaves."""
    nums = _check_argnums(argnums, len(args))
    args = list(args)
    diff_leaves, specs = [], []
    for a in nums:
        leaves, spec = _flatten(args[a])
        leaves = [_alias_input(t) for t in leaves]
        args[a] = _unflatten(leaves, spec)
        diff_leaves.append(leaves)
        specs.append(spec)
    return args, nums, diff_leaves, specs


# ---------------------------------------------------------------- grad

def grad_and_value(func, argnums=0, has_aux=False):
    """grad_and_value(f)(*args) -> (gradient of f w.r.t. args[argnums], f(*args))."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        from ..autograd import grad as autograd_grad
        originals = [t for a in _check_argnums(argnums, len(args)) for t in _flatten(args[a])[0]]
        keep = _keep_graph(originals)
        create = keep or bool(fwAD._state.levels)
        with grad_mode.enable_grad():
            new_args, nums, diff_leaves, specs = _diff_args(args, argnums)
            out = func(*new_args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError(
                        "grad_and_value(f)(*args): output of function f should be a tuple: "
                        "(output, aux) if has_aux is True")
                out, aux = out
            if not isinstance(out, Tensor):
                raise RuntimeError(
                    f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                    f"{type(out)}")
            if out.dim() != 0:
                raise RuntimeError(
                    f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                    f"tensor with {out.dim()} dims. Maybe you wanted to use the vjp or jacrev "
                    f"APIs instead?")
            flat = [t for leaves in diff_leaves for t in leaves]
            if out.requires_grad:
                gs = autograd_grad(out, flat, create_graph=create, allow_unused=True)
            else:
                gs = (None,) * len(flat)
        gs = [_creation.zeros_like(x) if g is None else _release(g, keep)
              for g, x in zip(gs, flat)]
        result, i = [], 0
        for leaves, spec in zip(diff_leaves, specs):
            result.append(_unflatten(gs[i:i + len(leaves)], spec))
            i += len(leaves)
        g = tuple(result) if isinstance(argnums, tuple) else result[0]
        value = _release(out, keep)
        if has_aux:
            return g, (value, _release_tree(aux, keep))
        return g, value

    return wrapper


def _release_tree(tree, keep):
    leaves, spec = _flatten(tree)
    return _unflatten([_release(t, keep) for t in leaves], spec)


def grad(func, argnums=0, has_aux=False):
    """grad(f)(*args): the gradient of the scalar f with respect to args[argnums]."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g

    return wrapper


# ---------------------------------------------------------------- vjp / jvp

def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn[, aux]); vjp_fn(cotangents) -> tuple of one gradient per primal."""
    from ..autograd import grad as autograd_grad
    keep = _keep_graph(_flatten(primals)[0])
    with grad_mode.enable_grad():
        leaves, spec = _flatten(primals)
        leaves = [_alias_input(t) for t in leaves]
        new = _unflatten(leaves, spec)
        out = func(*new)
        aux = None
        if has_aux:
            out, aux = out
    out_leaves, out_spec = _flatten(out)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        ct_leaves, ct_spec = _flatten(cotangents)
        if len(ct_leaves) != len(out_leaves):
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree "
                               "structure of outputs to the function")
        create = (keep or bool(fwAD._state.levels) or any(
            isinstance(c, Tensor) and c.requires_grad for c in ct_leaves)) \
            if create_graph is None else create_graph
        pairs = [(o, c) for o, c in zip(out_leaves, ct_leaves) if o.requires_grad]
        with grad_mode.enable_grad():
            if pairs:
                gs = autograd_grad([o for o, _ in pairs], leaves, [c for _, c in pairs],
                                   retain_graph=retain_graph, create_graph=create,
                                   allow_unused=True)
            else:
                gs = (None,) * len(leaves)
        keep_v = keep or any(isinstance(c, Tensor) and c.requires_grad for c in ct_leaves)
        gs = [_creation.zeros_like(x) if g is None else _release(g, keep_v)
              for g, x in zip(gs, leaves)]
        return tuple(_unflatten(gs, spec))

    out_r = _unflatten([_release(t, keep) for t in out_leaves], out_spec)
    if has_aux:
        return out_r, vjp_fn, _release_tree(aux, keep)
    return out_r, vjp_fn


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), J @ tangents) by forward-mode AD."""
    if not isinstance(primals, (tuple, list)):
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid "
            "to call f(*primals).")
    p_leaves, p_spec = _flatten(tuple(primals))
    t_leaves, _ = _flatten(tuple(tangents))
    if len(p_leaves) != len(t_leaves):
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals and tangents to have the same python "
            f"structure. For example, if primals is a tuple of 3 tensors, tangents also must be. "
            f"Got primals with structure {p_spec} and tangents with structure {_flatten(tuple(tangents))[1]}")
    for p, t in zip(p_leaves, t_leaves):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(
                "jvp(f, primals, tangents): Expected primals and tangents to have the same "
                f"shape. Got primal of shape {tuple(p.shape)} and tangent of shape "
                f"{tuple(t.shape)}")
    with fwAD.dual_level():
        duals = [fwAD.make_dual(p, t) for p, t in zip(p_leaves, t_leaves)]
        out = func(*_unflatten(duals, p_spec))
        aux = None
        if has_aux:
            out, aux = out
        o_leaves, o_spec = _flatten(out)
        prim, tan = [], []
        for o in o_leaves:
            p, t = fwAD.unpack_dual(o)
            prim.append(p)
            tan.append(_creation.zeros_like(p) if t is None else t)
        if has_aux:
            aux_leaves, aux_spec = _flatten(aux)
            aux = _unflatten([fwAD.unpack_dual(a).primal if isinstance(a, Tensor) else a
                              for a in aux_leaves], aux_spec)
    res = (_unflatten(prim, o_spec), _unflatten(tan, o_spec))
    return res + (aux,) if has_aux else res


# ---------------------------------------------------------------- Jacobians

def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """jacrev(f)(*args): the Jacobian of f w.r.t. args[argnums] by reverse mode
    (shape output.shape + input.shape)."""

    @functools.wraps(func)
    def wrapper(*args):
        from ..autograd import grad as autograd_grad
        originals = [t for a in _check_argnums(argnums, len(args)) for t in _flatten(args[a])[0]]
        keep = _keep_graph(originals)
        create = keep or bool(fwAD._state.levels)
        with grad_mode.enable_grad():
            new_args, nums, diff_leaves, specs = _diff_args(args, argnums)
            out = func(*new_args)
            aux = None
            if has_aux:
                out, aux = out
            o_leaves, o_spec = _flatten(out)
            flat_in = [t for leaves in diff_leaves for t in leaves]
            per_out = []
            for o in o_leaves:
                rows = []  # one list per input of per-output-element gradients
                flat_o = o.reshape(-1)
                for k in range(o.numel()):
                    if o.requires_grad:
                        gs = autograd_grad(flat_o[k], flat_in, retain_graph=True,
                                           create_graph=create, allow_unused=True)
                    else:
                        gs = (None,) * len(flat_in)
                    rows.append([_creation.zeros_like(x) if g is None else g
                                 for g, x in zip(gs, flat_in)])
                jacs = []
                for j, x in enumerate(flat_in):
                    if o.numel() == 0:
                        jacs.append(_creation.zeros(tuple(o.shape) + tuple(x.shape),
                                                    dtype=x.dtype, device=x.device))
                    else:
                        jacs.append(_release(_stack([r[j] for r in rows]).reshape(
                            tuple(o.shape) + tuple(x.shape)), keep))
                res, i = [], 0
                for leaves, spec in zip(diff_leaves, specs):
                    res.append(_unflatten(jacs[i:i + len(leaves)], spec))
                    i += len(leaves)
                per_out.append(tuple(res) if isinstance(argnums, tuple) else res[0])
        jac = _unflatten(per_out, o_spec)
        if has_aux:
            return jac, _release_tree(aux, keep)
        return jac

    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """jacfwd(f)(*args): the Jacobian of f w.r.t. args[argnums] by forward mode
    (shape output.shape + input.shape)."""

    @functools.wraps(func)
    def wrapper(*args):
        nums = _check_argnums(argnums, len(args))
        args = list(args)
        diff = []
        for a in nums:
            leaves, spec = _flatten(args[a])
            diff.append((a, leaves, spec))
        flat_in = [t for _, leaves, _ in diff for t in leaves]
        keep = _keep_graph(flat_in)
        columns = []
        o_spec = aux = None
        outs_primal = None
        for j, x in enumerate(flat_in):
            for e in range(x.numel()):
                with fwAD.dual_level():
                    duals = _basis_duals(flat_in, j, e)
                    new_args, start = list(args), 0
                    for a, leaves, spec in diff:
                        new_args[a] = _unflatten(duals[start:start + len(leaves)], spec)
                        start += len(leaves)
                    out = func(*new_args)
                    if has_aux:
                        out, aux_d = out
                        if aux is None:
                            al, asp = _flatten(aux_d)
                            aux = _unflatten([fwAD.unpack_dual(t).primal
                                              if isinstance(t, Tensor) else t for t in al], asp)
                    o_leaves, o_spec = _flatten(out)
                    primals = _collect_tangents(o_leaves, columns)
                if outs_primal is None:
                    outs_primal = primals
        if outs_primal is None:  # no input elements at all
            out = func(*args)
            o_leaves, o_spec = _flatten(out[0] if has_aux else out)
            outs_primal = o_leaves
            columns = [[] for _ in o_leaves]
        per_out = []
        for i, o in enumerate(outs_primal):
            jacs = [_release(jac, keep) for jac in _jacobians_from_columns(columns[i], o, flat_in)]
            res, k = [], 0
            for _, leaves, spec in diff:
                res.append(_unflatten(jacs[k:k + len(leaves)], spec))
                k += len(leaves)
            per_out.append(tuple(res) if isinstance(argnums, tuple) else res[0])
        jac = _unflatten(per_out, o_spec)
        return (jac, aux) if has_aux else jac

    return wrapper


def hessian(func, argnums=0):
    """hessian(f)(*args) = jacfwd(jacrev(f)): forward-over-reverse."""
    return jacfwd(jacrev(func, argnums), argnums)


# ---------------------------------------------------------------- vmap

def _fn_name(func):
    return getattr(func, "__name__", repr(func))


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """vmap(f)(*args): f mapped over dimension `in_dims` of its inputs, results stacked along
    `out_dims`. Runs f once on the whole batch, each op by its batch rule (see func/_vmap.py);
    a function that reads values outside ops runs once per sample instead. `chunk_size`
    bounds the samples per run; `randomness` as PyTorch's ('error', 'different', 'same')."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        name = _fn_name(func)
        prefix = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
        if not isinstance(in_dims, (int, tuple)):
            raise ValueError(f"{prefix}: expected `in_dims` to be int or a (potentially nested) "
                             f"tuple matching the structure of inputs, got: {type(in_dims)}.")
        if len(args) == 0:
            raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                             "inputs, or you are trying to vmap over a function with no inputs. "
                             "The latter is unsupported.")
        leaves, spec = _flatten(tuple(args))
        if isinstance(in_dims, int):
            dims = [in_dims] * len(leaves)
        else:
            if len(in_dims) != len(args):
                raise ValueError(
                    f"{prefix}: in_dims is not compatible with the structure of `inputs`. in_dims "
                    f"has {len(in_dims)} entries but inputs has {len(args)}.")
            dims = []
            for d, a in zip(in_dims, args):
                n = len(_flatten(a)[0])
                if isinstance(d, tuple):
                    sub = _flatten(d)[0]
                    if len(sub) != n:
                        raise ValueError(f"{prefix}: in_dims is not compatible with the "
                                         "structure of `inputs`.")
                    dims += sub
                else:
                    dims += [d] * n
        sizes = []
        for leaf, d in zip(leaves, dims):
            if d is None:
                continue
            if not isinstance(d, int):
                raise ValueError(f"{prefix}: in_dims must be int or None, got {type(d)}")
            if not isinstance(leaf, Tensor):
                raise ValueError(
                    f"{prefix}: Got in_dim={d} for an input but the input is of type "
                    f"{type(leaf)}. We cannot vmap over non-Tensor arguments, please use None "
                    "as the respective in_dim")
            nd = leaf.dim()
            if not -max(nd, 1) <= d < max(nd, 1) or nd == 0:
                raise ValueError(
                    f"{prefix}: Got in_dim={d} for some input, but that input is a Tensor of "
                    f"dimensionality {nd} so expected in_dim to satisfy -{nd} <= in_dim < {nd}.")
            sizes.append(leaf.shape[d])
        if not sizes:
            raise ValueError(f"{prefix}: at least one input must be a Tensor mapped over a "
                             "dimension (in_dims not None).")
        if len(set(sizes)) != 1:
            raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                             f"dimension, got sizes {sizes} for the mapped dimension")
        B = sizes[0]
        if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1) \
                and chunk_size != -1:
            raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                             f"{chunk_size})")
        step = B if chunk_size in (None, -1) else chunk_size
        od_spec = out_dims
        pieces = []
        for lo in range(0, B, step) if B else [0]:
            n = min(step, B - lo) if B else 0
            part = [leaf if d is None or (lo == 0 and n == B) else leaf.narrow(d, lo, n)
                    for leaf, d in zip(leaves, dims)]
            outs = None
            if n and _registry._VMAP[0] is None and not any(
                    isinstance(t, _vm._Batched) for t in part):
                try:
                    with _random_mode(randomness, batched=True):
                        outs = _vmap_batched(func, part, dims, spec, n, kwargs, name)
                except _vm.NeedsLoop:
                    outs = None
            if outs is None:
                outs = _vmap_loop(func, part, dims, spec, n, kwargs, name, randomness)
            pieces.append(outs)
        o_spec = pieces[0][1]
        n_out = len(pieces[0][0])
        od = [od_spec] * n_out if isinstance(od_spec, int) or od_spec is None \
            else _flatten(od_spec)[0]
        if len(od) != n_out:
            raise ValueError(f"vmap({name}, ...): out_dims is not compatible with the structure "
                             "of `outputs`.")
        result = []
        for k in range(n_out):
            col = [p[0][k] for p in pieces]
            d = od[k]
            if d is None:
                if col[0][1] is None:
                    raise ValueError(f"vmap({name}, ...): `{name}` can not return a "
                                     "BatchedTensor when out_dim is None")
                result.append(col[0][1])
                continue
            if col[0][0] is None:
                raise ValueError(
                    f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                    f"{type(col[0][1])}. Did you mean to set out_dims= to None for output?")
            st = col[0][0] if len(col) == 1 else _creation_cat([c[0] for c in col])
            nd = st.dim()
            d = d % nd
            if d:
                st = st.movedim(0, d)
            result.append(st)
        return _unflatten(result, o_spec)

    return wrapper


def _creation_cat(ts):
    from ..ops.shape import cat
    return cat(ts, 0)


_RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either "
                 "use the 'same' or 'different' randomness flags on vmap or perform the "
                 "randomness operation out of vmap")


class _random_mode:
    """While vmap runs the function: random draws raise (randomness='error'), or, in the
    batched run, fall back to the per-sample loop (where each sample draws its own numbers,
    or, with 'same', the same ones)."""

    def __init__(self, randomness, batched):
        self.randomness, self.batched = randomness, batched

    def __enter__(self):
        self.orig = _creation._rng
        randomness, batched, orig = self.randomness, self.batched, self.orig

        def guarded(generator):
            if randomness == "error":
                raise RuntimeError(_RANDOM_ERROR)
            if batched:
                raise _vm.NeedsLoop()
            return orig(generator)
        _creation._rng = guarded
        return self

    def __exit__(self, *exc):
        _creation._rng = self.orig
        return False


def _vmap_batched(func, leaves, dims, spec, B, kwargs, name):
    """The batched run: ([(physical output with the batch first, per-sample value)], spec)."""
    out = _vm.run_batched(func, leaves, dims, spec, B, _unflatten, kwargs)
    o_leaves, o_spec = _flatten(out)
    res = []
    for o in o_leaves:
        if isinstance(o, _vm._Batched):
            res.append((o.__dict__["_value"], None))
        elif isinstance(o, Tensor):   # independent of the mapped inputs: the same per sample
            res.append((o.unsqueeze(0).expand((B,) + tuple(o.shape)), o))
        else:   # allowed where out_dims is None
            res.append((None, o))
    return res, o_spec


def _vmap_loop(func, leaves, dims, spec, B, kwargs, name, randomness):
    """The per-sample run: f on each sample, outputs stacked along a new dim 0."""
    results = []
    state = _creation.get_rng_state() if randomness == "same" else None
    for b in range(B):
        if state is not None:
            _creation.set_rng_state(state)
        sample = []
        for leaf, d in zip(leaves, dims):
            if d is None:
                sample.append(leaf)
            else:
                d = d % leaf.dim()
                sample.append(leaf[(slice(None),) * d + (b,)])
        with _random_mode(randomness, batched=False) if randomness == "error" else \
                _nullcontext():
            results.append(func(*_unflatten(sample, spec), **kwargs))
    if not results:
        raise ValueError(f"vmap({name}, ...): the mapped dimension has size 0")
    o0, o_spec = _flatten(results[0])
    per_sample = [_flatten(r)[0] for r in results]
    res = []
    for k in range(len(o0)):
        col = [s[k] for s in per_sample]
        res.append((_stack(col) if isinstance(col[0], Tensor) else None, col[0]))
    return res, o_spec


class _nullcontext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# ---------------------------------------------------------------- functional_call

def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Call `module(*args, **kwargs)` with its parameters and buffers replaced by name."""
    if isinstance(parameter_and_buffer_dicts, (tuple, list)):
        merged = {}
        for d in parameter_and_buffer_dicts:
            dup = set(merged) & set(d)
            if dup:
                raise ValueError(f"{sorted(dup)} appeared in multiple dictionaries; behavior of "
                                 "functional call is ambiguous")
            merged.update(d)
    else:
        merged = dict(parameter_and_buffer_dicts)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize(module, merged, tie_weights, strict):
        return module(*args, **(kwargs or {}))


def _prepare(module, merged, tie_weights, strict):
    """The name -> tensor map to swap in: strict's key check, tied names filled in."""
    merged = dict(merged)
    if strict:
        known = {n for n, _ in module.named_parameters()} | {n for n, _ in module.named_buffers()}
        missing = sorted(known - set(merged))
        unexpected = sorted(set(merged) - known)
        if missing or unexpected:
            parts = []
            if unexpected:
                parts.append("Unexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected))
            if missing:
                parts.append("Missing key(s): " + ", ".join(f"'{k}'" for k in missing))
            raise RuntimeError("Error(s) in reparametrizing for " + type(module).__name__ +
                               ":\n\t" + ".\n\t".join(parts) + ".")
    if tie_weights:
        # a replaced parameter or buffer also replaces every other name bound to the same
        # tensor; tied names given different values are ambiguous, as in PyTorch
        by_id = {}
        for n, p in list(module.named_parameters(remove_duplicate=False)) + \
                list(module.named_buffers(remove_duplicate=False)):
            by_id.setdefault(id(p), set()).add(n)
        for names in by_id.values():
            given = [n for n in sorted(names) if n in merged]
            if len(names) > 1 and given:
                if len({id(merged[n]) for n in given}) != 1:
                    raise ValueError(f"functional_call got multiple values for keys "
                                     f"{sorted(names)}, which are tied. Consider using "
                                     "tie_weights=False")
                for n in names:
                    merged[n] = merged[given[0]]
    return merged


class _reparametrize:
    """Within the block, the module's named parameters and buffers are the given tensors
    (torch.nn.utils.stateless._reparametrize_module). On exit the originals return, and the
    given dict receives the values the module held then (as PyTorch's)."""

    def __init__(self, module, parameters_and_buffers, tie_weights=False, strict=False):
        self.module, self.given = module, parameters_and_buffers
        self.merged = _prepare(module, parameters_and_buffers, tie_weights, strict)
        self.saved = []

    def __enter__(self):
        try:
            for name, value in self.merged.items():
                owner, attr = _owner(self.module, name)
                self.saved.append((name, owner, attr, _swap(owner, attr, value)))
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        saved, self.saved = self.saved, []
        for name, owner, attr, old in reversed(saved):
            current = _swap(owner, attr, old)
            if isinstance(self.given, dict) and name in self.given:
                self.given[name] = current
        return False


def _owner(module, name):
    *path, attr = name.split(".")
    for p in path:
        module = getattr(module, p)
    return module, attr


def _swap(owner, attr, value):
    d = owner.__dict__
    for store in ("_parameters", "_buffers"):
        table = d.get(store)
        if table is not None and attr in table:
            old = table[attr]
            table[attr] = value
            return old
    old = getattr(owner, attr, None)
    object.__setattr__(owner, attr, value)
    return old


# ---------------------------------------------------------------- model ensembling

def stack_module_state(models):
    """({name: stacked parameter}, {name: stacked buffer}) of same-class models, for vmapping
    functional_call over an ensemble. Stacked parameters are new leaves that require grad
    when the models' do."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    cls = type(models[0])
    if not all(type(m) is cls for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(tensors, name):
        req = [t.requires_grad for t in tensors]
        if any(req) and not all(req):
            raise RuntimeError(f"Expected {name} from each model to have the same "
                               ".requires_grad")
        out = _stack([t.detach() for t in tensors])
        return out.requires_grad_() if all(req) else out

    all_params = [dict(m.named_parameters()) for m in models]
    params = {k: stacked([p[k] for p in all_params], k) for k in all_params[0]}
    all_buffers = [dict(m.named_buffers()) for m in models]
    buffers = {k: stacked([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers


# ---------------------------------------------------------------- linearize

def linearize(func, *primals):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) is the Jacobian-vector product of func at
    `primals` (forward mode), checked against the primals' structure, shapes and dtypes."""
    output = func(*primals)
    _, out_spec = _flatten(output)
    flat_primals, p_spec = _flatten(primals)
    shapes = [tuple(p.shape) for p in flat_primals]
    dtypes = [p.dtype for p in flat_primals]

    def jvp_fn(*tangents):
        flat_t, t_spec = _flatten(tangents)
        if t_spec != p_spec:
            raise RuntimeError(f"Expected the tangents {t_spec} to have the same argspec as the "
                               f"primals {p_spec}")
        for i, t in enumerate(flat_t):
            if tuple(t.shape) != shapes[i]:
                raise RuntimeError(f"tangent:{i} with shape {t.shape} in flattened pytree "
                                   f"doesn't match the shape {_size(shapes[i])} of the "
                                   "corresponding primal.")
            if t.dtype != dtypes[i]:
                raise RuntimeError(f"tangent:{i} with dtype {t.dtype} in flattened pytree "
                                   f"doesn't match the dtype {dtypes[i]} of the corresponding "
                                   "primal.")
        _, jv = jvp(func, tuple(primals), tuple(tangents))
        return jv

    return output, jvp_fn


def _size(shape):
    from .._tensor import Size
    return Size(shape)


# ---------------------------------------------------------------- functionalize and helpers

_FUNCTIONALIZE_REMOVE = (
    "functionalize(f, remove='mutations'): received invalid argument for remove={}. Valid "
    "options are:\n     remove='mutations': all inplace and out= operators will be removed "
    "from the program, and replaced with their out-of-place equivalents.\n     "
    "remove='mutations_and_views': In addition to the above, all aliasing operators {{view}} "
    "will be replaced with their non-aliasing counterparts, {{view}}_copy.\n")


def functionalize(func, *, remove="mutations"):
    """func with its mutations removed from the program, as PyTorch's: the observable results
    are func's (outputs, and the mutations of its inputs, which ndgrad's eager ops perform
    directly); with remove='mutations_and_views' no output aliases an input."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(_FUNCTIONALIZE_REMOVE.format(remove))

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        out = func(*args, **kwargs)
        if remove == "mutations":
            return out
        ins = [t for t in _flatten((args, kwargs))[0] if isinstance(t, Tensor)]
        leaves, spec = _flatten(out)

        def shares(t):
            base = t._data
            return any(_np_shares(base, i._data) for i in ins)
        return _unflatten([t.clone() if isinstance(t, Tensor) and shares(t) else t
                           for t in leaves], spec)

    return wrapped


def _np_shares(a, b):
    from .._backend import xp_of
    return type(a) is type(b) and bool(xp_of(a).shares_memory(a, b))


def debug_unwrap(tensor, *, recurse=True):
    """The tensor under a transform's wrapper; ndgrad's transforms hand functions plain
    tensors, so it is the tensor itself."""
    if isinstance(tensor, _vm._Batched):
        return tensor.__dict__["_value"]
    return tensor


def replace_all_batch_norm_modules_(root):
    """In place: every batch norm of `root` stops tracking running statistics (running_mean,
    running_var and num_batches_tracked become None), so it normalises with batch statistics
    under vmap; returns root."""
    from ..nn.modules.normalization import _BatchNorm
    for m in root.modules():
        if isinstance(m, _BatchNorm) and m.track_running_stats:
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root


# ---------------------------------------------------------------- rearrange (einops notation)

class DimensionBindError(Exception):
    """A rearrange pattern whose axis lengths do not fit the tensor."""


def _parse_side(side):
    """'a (h w) ... 1' -> items: a name, a list of names (a group), '...' or 1."""
    items, group = [], None
    for tok in side.replace("(", " ( ").replace(")", " ) ").split():
        if tok == "(":
            if group is not None:
                raise ValueError(f"Nested parentheses are not allowed: {side}")
            group = []
        elif tok == ")":
            if group is None:
                raise ValueError(f"Unmatched parenthesis in: {side}")
            items.append(group)
            group = None
        else:
            item = 1 if tok == "1" else tok
            if tok != "1" and tok != "..." and not tok.isidentifier():
                raise ValueError(f"Invalid axis identifier: {tok}")
            (group if group is not None else items).append(item)
    if group is not None:
        raise ValueError(f"Unmatched parenthesis in: {side}")
    return items


def rearrange(tensor, pattern, **axes_lengths):
    """einops-style rearrange: 'b (h w) c -> b h w c' splits, transposes and merges axes with
    one reshape, one permute and one reshape (axes_lengths gives split sizes)."""
    if isinstance(tensor, (list, tuple)):
        tensor = _stack(list(tensor))
    left_s, arrow, right_s = pattern.partition("->")
    if not arrow:
        raise ValueError("Pattern must contain '->'")
    left, right = _parse_side(left_s), _parse_side(right_s)

    def names(items):
        out = []
        for it in items:
            for n in (it if isinstance(it, list) else [it]):
                if n != 1 and n != "...":
                    out.append(n)
        return out
    ln, rn = names(left), names(right)
    if set(ln) ^ set(rn):
        raise ValueError("Identifiers only on one side of rearrange expression (should be on "
                         f"both): {set(ln) ^ set(rn)}")
    shape = tuple(tensor.shape)
    has_ell = any(it == "..." for it in left)
    n_fixed = len(left) - (1 if has_ell else 0)
    if (has_ell and len(shape) < n_fixed) or (not has_ell and len(shape) != n_fixed):
        raise ValueError(f"Number of dimensions in pattern ({n_fixed}) must be equal to the "
                         f"number of dimensions in the tensor ({len(shape)})")
    ell = [f"...{i}" for i in range(len(shape) - n_fixed)] if has_ell else []

    def expand(items):
        out = []
        for it in items:
            if it == "...":
                out.extend(ell)
            elif isinstance(it, list):
                out.append([e for x in it for e in (ell if x == "..." else [x])])
            else:
                out.append(it)
        return out
    left, right = expand(left), expand(right)
    sizes = dict(axes_lengths)
    elementary = []
    for it, n in zip(left, shape):
        group = it if isinstance(it, list) else [it]
        unknown = [a for a in group if a != 1 and a not in sizes]
        known = 1
        for a in group:
            if a != 1 and a in sizes:
                known *= sizes[a]
        if len(unknown) > 1:
            raise DimensionBindError(f"Could not infer sizes for {set(unknown)}")
        if unknown:
            if known == 0 or n % known:
                raise DimensionBindError("inferred dimension does not evenly fit into larger "
                                         f"dimension: {n} vs {tuple(sizes[a] for a in group if a in sizes) + ('?',)}")
            sizes[unknown[0]] = n // known
        elif known != n:
            raise DimensionBindError(f"Dimension {n} does not match the pattern's {known}")
        elementary += [a for a in group if a != 1]
    x = tensor.reshape(tuple(sizes[a] for a in elementary)) if elementary else tensor.reshape(())
    order = [a for it in right for a in (it if isinstance(it, list) else [it]) if a != 1]
    perm = tuple(elementary.index(a) for a in order)
    if perm != tuple(range(len(perm))):
        x = x.permute(perm)
    out_shape = []
    for it in right:
        group = it if isinstance(it, list) else [it]
        n = 1
        for a in group:
            n *= 1 if a == 1 else sizes[a]
        out_shape.append(n)
    return x.reshape(tuple(out_shape))
