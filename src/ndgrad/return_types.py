"""torch.return_types: the named tuples returned by max/min/median/sort/topk/... with `dim` and
by the linalg factorisations. The one place they are made: op modules call `make`.

    >>> torch.max(x, 1)
    torch.return_types.max(
    values=tensor([3., 3.]),
    indices=tensor([1, 0]))

The repr is PyTorch's; the classes live in this module (`ndgrad.return_types.max`, as other
ndgrad classes name ndgrad modules), so they pickle by name and `load(weights_only=True)`
refuses them as PyTorch refuses `torch.return_types.*`.
"""
import sys
from collections import namedtuple

__all__ = ["make"]

_CACHE = {}


def _repr(self):
    fields = ",\n".join(f"{n}={v!r}" for n, v in zip(self._fields, self))
    return f"torch.return_types.{type(self).__name__}(\n{fields})"


def make(name, fields=("values", "indices")):
    """The named-tuple class `return_types.<name>` (created once, then shared)."""
    cls = _CACHE.get(name)
    if cls is None:
        cls = namedtuple(name, fields, module=__name__)
        cls.__repr__ = _repr
        _CACHE[name] = cls
        globals()[name] = cls
        pytree = sys.modules.get(__name__.rpartition(".")[0] + ".utils._pytree")
        if pytree is not None:
            pytree._register_structseq(cls)
    return cls


for _n in ("max", "min", "median", "nanmedian", "mode", "kthvalue", "sort", "topk", "cummax",
           "cummin", "aminmax"):
    make(_n, ("min", "max") if _n == "aminmax" else ("values", "indices"))

# ---------------------------------------------------------------- more ops (PyTorch parity)
for _n, _f in (("frexp", ("mantissa", "exponent")), ("histogram", ("hist", "bin_edges")),
               ("triangular_solve", ("solution", "cloned_coefficient")),
               ("linalg_lstsq", ("solution", "residuals", "rank", "singular_values")),
               ("linalg_lu", ("P", "L", "U")), ("linalg_lu_factor", ("LU", "pivots"))):
    make(_n, _f)
