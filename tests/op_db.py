"""The op table: each op declared once, with sample inputs; generic tests do the rest.

An OpCase names an op (a function of ndgrad and, by default, of torch with the same name), the
shapes of its tensor arguments per sample, extra positional/keyword arguments, and the input
domain. tests/test_op_db.py runs, for every sample: forward vs PyTorch, float64 gradcheck and
gradgradcheck, and gradients vs PyTorch. Tables of other families live in tests/op_db_*.py and
append to OPS through `register`.
"""
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np


@dataclass
class OpCase:
    name: str                               # id, and the default attribute looked up on both libs
    shapes: Sequence[tuple]                 # one tuple of input shapes per sample
    kwargs: Sequence[dict] = (dict(),)      # keyword variants, crossed with shapes
    args: tuple = ()                        # extra positional args after the tensors
    domain: Any = (-2.0, 2.0)               # sampling interval for float inputs (or one per input)
    fn: Optional[Callable] = None           # fn(lib, *tensors, *args, **kw); default getattr(lib, name)
    grad: bool = True                       # differentiable: run gradcheck / gradgradcheck
    gradgrad: bool = True
    dtypes: Sequence[str] = ("float64",)     # dtypes for the forward comparison
    int_inputs: Sequence[int] = ()          # indices of inputs drawn as int64 (no grad)
    int_range: tuple = (0, 3)
    atol: float = 1e-6
    rtol: float = 1e-5
    make_inputs: Optional[Callable] = None   # make_inputs(rng, shapes) -> list of numpy arrays
    skip_torch: bool = False                # no torch counterpart
    tags: tuple = field(default=())
    # added for the generic runner (all optional, backward compatible)
    gradcheck: bool = True                  # with grad=True: False compares gradients with torch only
    check_node_name: bool = False           # compare type(out.grad_fn).__name__ with PyTorch's
    noncontig: bool = True                  # also run on transposed (non-contiguous) inputs
    table: str = ""                         # module that registered the case (set by register)

    def call(self, lib, tensors, kw):
        if self.fn is not None:
            return self.fn(lib, *tensors, *self.args, **kw)
        return getattr(lib, self.name)(*tensors, *self.args, **kw)

    def domain_of(self, i):
        d = self.domain
        return d[i] if isinstance(d[0], (tuple, list)) else d

    def samples(self, seed=0):
        """Yield (arrays, kwargs, sample_id) with NumPy float64/int64 arrays."""
        rng = np.random.default_rng(seed)
        for si, shapes in enumerate(self.shapes):
            for ki, kw in enumerate(self.kwargs):
                if self.make_inputs is not None:
                    arrays = self.make_inputs(rng, shapes)
                else:
                    arrays = []
                    for i, s in enumerate(shapes):
                        if i in self.int_inputs:
                            arrays.append(rng.integers(*self.int_range, size=s).astype(np.int64))
                        else:
                            lo, hi = self.domain_of(i)
                            arrays.append(rng.uniform(lo, hi, size=s))
                yield arrays, kw, f"{self.name}-s{si}-k{ki}"


OPS = []


def register(*cases):
    table = sys._getframe(1).f_globals.get("__name__")  # the op_db_*.py module registering
    for c in cases:
        c.table = table
    OPS.extend(cases)
    return cases
