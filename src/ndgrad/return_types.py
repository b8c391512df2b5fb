"""torch.return_types: the named tuples returned by max/min/median/sort/topk/... with `dim`.

    >>> torch.max(x, 1)
    torch.return_types.max(
    values=tensor([3., 3.]),
    indices=tensor([1, 0]))
"""

__all__ = ["make"]

_CACHE = {}


def _repr(self):
    fields = ",\n".join(f"{n}={v!r}" for n, v in zip(self._fields, self))
    return f"torch.return_types.{type(self).__name__}(\n{fields})"


def make(name, fields=("values", "indices")):
    """The named-tuple class `torch.return_types.<name>` (created once)."""
    cls = _CACHE.get(name)
    if cls is None:
        from collections import namedtuple
        cls = namedtuple(name, fields)
        cls.__module__ = "torch.return_types"
        cls.__repr__ = _repr
        cls.__qualname__ = name
        _CACHE[name] = cls
        globals()[name] = cls
    return cls


for _n in ("max", "min", "median", "nanmedian", "mode", "kthvalue", "sort", "topk", "cummax",
           "cummin", "aminmax"):
    make(_n, ("min", "max") if _n == "aminmax" else ("values", "indices"))
