"""torch.export.dynamic_shapes: Dim and the check of a `dynamic_shapes` specification's form.

ndgrad's capture runs the forward on the example inputs; a dim declared dynamic (a `Dim`,
`Dim.AUTO` or `Dim.DYNAMIC`) is left unguarded (within its min/max) by the exported module only
when the forward never read a traced tensor's shape: shapes read in Python (`B, T, C =
x.shape`) are constants of the capture, so then every dim stays guarded at its example size.
"""
import inspect
from enum import Enum

__all__ = ["Dim", "dims", "DimHint", "ShapesCollection"]


class _DimHintType(Enum):
    AUTO = 0
    STATIC = 1
    DYNAMIC = 2


class DimHint:
    def __init__(self, type, min=None, max=None):
        self.type = type
        self.min = min
        self.max = max

    def __repr__(self):
        return f"DimHint({self.type.name})"

    def __call__(self, min=None, max=None):
        return DimHint(self.type, min=min, max=max)

    def __eq__(self, other):
        return isinstance(other, DimHint) and (self.type, self.min, self.max) == \
            (other.type, other.min, other.max)

    def __hash__(self):
        return hash((self.type, self.min, self.max))


class Dim:
    """A named dynamic dimension, `Dim("batch", min=1, max=64)` (PyTorch's)."""
    AUTO = DimHint(_DimHintType.AUTO)
    STATIC = DimHint(_DimHintType.STATIC)
    DYNAMIC = DimHint(_DimHintType.DYNAMIC)

    def __init__(self, name, *, min=None, max=None):
        if not isinstance(name, str):
            raise TypeError(f"Dim name must be a string, got {type(name).__name__}")
        _min = 0 if min is None else min
        _max = None if max is None else max
        if _max is not None and not _max > _min:
            raise ValueError(f"Cannot create Dim with inconsistent min={min}, max={max}")
        if not name.isidentifier():
            raise ValueError(f"Dim name must be a valid identifier, got {name}")
        self.__name__ = name
        self.min = _min
        self.max = _max if _max is not None else float("inf")

    def __repr__(self):
        s = f"Dim('{self.__name__}'"
        if self.min != 0:
            s += f", min={self.min}"
        else:
            s += ", min=0"
        if self.max != float("inf"):
            s += f", max={self.max}"
        return s + ")"


def dims(*names, min=None, max=None):
    """One Dim per name, sharing min and max."""
    return tuple(Dim(name, min=min, max=max) for name in names)


class ShapesCollection:
    """dynamic_shapes given per tensor: `sc[x] = {0: Dim("b")}`; `dynamic_shapes(m, args)`
    returns the specification in the inputs' structure."""

    def __init__(self):
        self._shapes = {}

    def __setitem__(self, t, shape):
        self._shapes[id(t)] = (t, shape)

    def __getitem__(self, t):
        return self._shapes[id(t)][1]

    def __len__(self):
        return len(self._shapes)

    def dynamic_shapes(self, m, args, kwargs=None):
        from ..utils import _pytree as pytree
        from .._tensor import Tensor

        def find(t):
            if isinstance(t, Tensor) and id(t) in self._shapes:
                return self._shapes[id(t)][1]
            return None
        return pytree.tree_map(find, (tuple(args), dict(kwargs or {})))


def _user_error(msg):
    from .._dynamo.exc import UserError
    return UserError(msg)


def _check_dynamic_shapes(fn_sig, args, kwargs, dynamic_shapes):
    """PyTorch's checks of the specification's form; returns {flat input index: {dim: spec}}
    for the dims declared dynamic."""
    from ..utils import _pytree as pytree
    from .._tensor import Tensor
    if dynamic_shapes is None or len(dynamic_shapes) == 0:
        return {}
    bound = fn_sig.bind(*args, **kwargs)
    combined = dict(bound.arguments)
    if isinstance(dynamic_shapes, dict):
        got_keys = list(dynamic_shapes.keys())
        expected = list(combined.keys())
        if sorted(got_keys) != sorted(expected):
            raise _user_error(
                "When `dynamic_shapes` is specified as a dict, its top-level keys must be the "
                f"arg names {expected} of `inputs`, but here they are {got_keys}. "
                "Alternatively, you could also ignore arg names entirely and specify "
                "`dynamic_shapes` as a list/tuple matching `inputs`. For more information about "
                "this error, see: https://pytorch.org/docs/main/generated/exportdb/index.html"
                "#dynamic-shapes-validation")
        ordered = [dynamic_shapes[k] for k in combined]
    elif isinstance(dynamic_shapes, (tuple, list)):
        ordered = list(dynamic_shapes)
        if len(ordered) != len(combined):
            raise _user_error(
                f"Expected dynamic_shapes of a {type(dynamic_shapes).__name__} to have "
                f"{len(combined)} elements (one per input), but got {len(ordered)}")
    else:
        raise _user_error(f"Unexpected dynamic_shape {dynamic_shapes} of Tensor, try None "
                          "instead")
    out = {}
    flat_index = [0]

    def walk(value, spec, path):
        if isinstance(value, Tensor):
            i = flat_index[0]
            flat_index[0] += 1
            if spec is None:
                return
            if isinstance(spec, dict):
                items = list(spec.items())
            elif isinstance(spec, (tuple, list)):
                if len(spec) != value.dim():
                    raise _user_error(
                        f"Expected dynamic shape spec {spec} specified at inputs{path} to have "
                        f"the same length as the actual tensor shape {tuple(value.shape)} "
                        f"(expected {value.dim()}, but got {len(spec)} instead)")
                items = list(enumerate(spec))
            else:
                raise _user_error(f"Unexpected dynamic_shape {spec} of Tensor, try None "
                                  "instead")
            dyn = {}
            for d, s in items:
                if not isinstance(d, int) or not -value.dim() <= d < value.dim():
                    raise _user_error(f"Dimension {d} out of range in dynamic_shapes "
                                      f"at inputs{path} for a tensor of {value.dim()} dims")
                d %= value.dim()
                if s is None or isinstance(s, int) or s == Dim.STATIC:
                    if isinstance(s, int) and not isinstance(s, bool) \
                            and s != value.shape[d]:
                        raise _user_error(f"Expected static dim inputs{path}.shape[{d}] to be "
                                          f"{value.shape[d]}, but got {s}")
                    continue
                if not isinstance(s, (Dim, DimHint)):
                    raise _user_error(f"Unexpected dimension mapped to index {d} in input "
                                      f"tensor shape {s} specified at inputs{path} (expected "
                                      "None, an int, a Dim, Dim.AUTO, Dim.STATIC, or "
                                      f"Dim.DYNAMIC, but got {s!r} instead)")
                lo = s.min if s.min is not None else 0
                hi = s.max if s.max is not None else float("inf")
                if not lo <= value.shape[d] <= hi:
                    raise _user_error(f"Expected input inputs{path}.shape[{d}] = "
                                      f"{value.shape[d]} to be within [{lo}, {hi}] as its "
                                      f"dynamic_shapes declares ({s!r})")
                dyn[d] = (lo, hi)
            if dyn:
                out[i] = dyn
            return
        if isinstance(value, (tuple, list)):
            if spec is not None and not (isinstance(spec, (tuple, list))
                                         and len(spec) == len(value)):
                raise _user_error(f"Expected dynamic_shapes at inputs{path} to be a "
                                  f"{type(value).__name__} of {len(value)} elements, got "
                                  f"{spec!r}")
            for j, v in enumerate(value):
                walk(v, None if spec is None else spec[j], f"{path}[{j}]")
            return
        if isinstance(value, dict):
            if spec is not None and not (isinstance(spec, dict)
                                         and set(spec) == set(value)):
                raise _user_error(f"Expected dynamic_shapes at inputs{path} to be a dict "
                                  f"with keys {list(value)}, got {spec!r}")
            for k, v in value.items():
                walk(v, None if spec is None else spec[k], f"{path}['{k}']")
            return
        for leaf in pytree.tree_leaves(value):
            if isinstance(leaf, Tensor):
                flat_index[0] += 1
    for (name, value), spec in zip(combined.items(), ordered):
        kind = fn_sig.parameters[name].kind
        if kind == inspect.Parameter.VAR_POSITIONAL:
            walk(tuple(value), spec, f"['{name}']")
        elif kind == inspect.Parameter.VAR_KEYWORD:
            walk(dict(value), spec, f"['{name}']")
        else:
            walk(value, spec, f"['{name}']")
    return out
