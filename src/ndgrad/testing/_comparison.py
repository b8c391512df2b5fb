"""assert_close as PyTorch's torch/testing/_comparison.py: inputs are paired up (nested sequences
and mappings elementwise), each pair is compared by the first pair type that accepts it (None,
booleans, Python/NumPy numbers, tensor-likes), and a failed comparison raises the error of the
pair (AssertionError, TypeError, ValueError) with PyTorch's message."""
import cmath
import collections.abc
import contextlib
import warnings

import numpy as np

__all__ = ["assert_close", "assert_allclose"]


def _precisions():
    from .. import _dtype as D
    return {D.float16: (0.001, 1e-5), D.float32: (1.3e-6, 1e-5), D.float64: (1e-7, 1e-7),
            D.complex64: (1.3e-6, 1e-5), D.complex128: (1e-7, 1e-7)}


class _ErrorMeta(Exception):
    """An error to raise, with the id of the item it came from."""

    def __init__(self, type, msg, *, id=()):
        super().__init__(msg)
        self.type, self.msg, self.id = type, msg, id

    def to_error(self, msg=None):
        if not isinstance(msg, str):
            generated = self.msg
            if self.id:
                generated += ("\n\nThe failure occurred for item "
                              + "".join(str([item]) for item in self.id))
            msg = msg(generated) if callable(msg) else generated
        return self.type(msg)


class _Unsupported(Exception):
    pass


def default_tolerances(*inputs, dtype_precisions=None):
    from .._tensor import Tensor
    from .._dtype import dtype as _dtype
    dtypes = []
    for input in inputs:
        if isinstance(input, Tensor):
            dtypes.append(input.dtype)
        elif isinstance(input, _dtype):
            dtypes.append(input)
        else:
            raise TypeError(
                f"Expected a torch.Tensor or a torch.dtype, but got {type(input)} instead.")
    table = dtype_precisions or _precisions()
    rtols, atols = zip(*[table.get(d, (0.0, 0.0)) for d in dtypes])
    return max(rtols), max(atols)


def _get_tolerances(*inputs, rtol, atol, id=()):
    if (rtol is None) ^ (atol is None):
        raise _ErrorMeta(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                         f"but got no {'rtol' if rtol is None else 'atol'}.", id=id)
    if rtol is not None:
        return rtol, atol
    return default_tolerances(*inputs)


def _mismatch_msg(*, default_identifier, identifier=None, extra=None, abs_diff, abs_diff_idx=None,
                  atol, rel_diff, rel_diff_idx=None, rtol):
    equality = rtol == 0 and atol == 0

    def diff_msg(kind, diff, idx, tol):
        if idx is None:
            msg = f"{kind.title()} difference: {diff}"
        else:
            msg = f"Greatest {kind} difference: {diff} at index {idx}"
        if not equality:
            msg += f" (up to {tol} allowed)"
        return msg + "\n"

    if identifier is None:
        identifier = default_identifier
    elif callable(identifier):
        identifier = identifier(default_identifier)
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff_msg("absolute", abs_diff, abs_diff_idx, atol)
    msg += diff_msg("relative", rel_diff, rel_diff_idx, rtol)
    return msg.strip()


def _scalar_mismatch_msg(actual, expected, *, rtol, atol, identifier=None):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg(default_identifier="Scalars", identifier=identifier,
                         extra=f"Expected {expected} but got {actual}.", abs_diff=abs_diff,
                         atol=atol, rel_diff=rel_diff, rtol=rtol)


def _tensor_mismatch_msg(actual, expected, matches, *, rtol, atol, identifier=None):
    """The statistics PyTorch reports, computed the way it computes them (int64 differences for
    integer tensors, the first greatest difference over the mismatches only)."""
    from .._backend import to_numpy
    m = to_numpy(matches._data).reshape(-1)
    a = to_numpy(actual._data).reshape(-1)
    e = to_numpy(expected._data).reshape(-1)
    if not (actual.dtype.is_floating_point or actual.dtype.is_complex):
        a, e = a.astype(np.int64), e.astype(np.int64)
    total = m.size
    mismatches = total - int(m.sum())
    extra = f"Mismatched elements: {mismatches} / {total} ({mismatches / total:.1%})"
    with np.errstate(all="ignore"):
        abs_diff = np.abs(a - e)
        abs_diff[m] = 0
        rel_diff = abs_diff / np.abs(e)
        if not (actual.dtype.is_floating_point or actual.dtype.is_complex):
            from .._dtype import get_default_dtype   # true division of integers
            rel_diff = rel_diff.astype(get_default_dtype().np)
        rel_diff[m] = 0
    shape = tuple(matches.shape)

    def greatest(d):
        # torch.max over a dim: the first index of the maximum, nan counting as the maximum
        nan = np.isnan(d)
        i = int(np.argmax(nan)) if nan.any() else int(np.argmax(d))
        return d[i].item(), (tuple(int(k) for k in np.unravel_index(i, shape)) if shape else ())

    ad, ai = greatest(abs_diff)
    rd, ri = greatest(rel_diff)
    return _mismatch_msg(default_identifier="Tensor-likes", identifier=identifier, extra=extra,
                         abs_diff=ad, abs_diff_idx=ai, atol=atol, rel_diff=rd, rel_diff_idx=ri,
                         rtol=rtol)


class _Pair:
    def __init__(self, actual, expected, *, id=(), **unknown):
        self.actual, self.expected, self.id = actual, expected, id

    @staticmethod
    def _check_isinstance(*inputs, cls):
        if not all(isinstance(i, cls) for i in inputs):
            raise _Unsupported

    def _fail(self, type, msg):
        raise _ErrorMeta(type, msg, id=self.id)


class _NonePair(_Pair):
    def __init__(self, actual, expected, **options):
        if not (actual is None or expected is None):
            raise _Unsupported
        super().__init__(actual, expected, **options)

    def compare(self):
        if not (self.actual is None and self.expected is None):
            self._fail(AssertionError, f"None mismatch: {self.actual} is not {self.expected}")


class _BooleanPair(_Pair):
    def __init__(self, actual, expected, *, id, **options):
        self._check_isinstance(actual, expected, cls=(bool, np.bool_))
        actual, expected = (bool(x) for x in (actual, expected))
        super().__init__(actual, expected, id=id, **options)

    def compare(self):
        if self.actual is not self.expected:
            self._fail(AssertionError, f"Booleans mismatch: {self.actual} is not {self.expected}")


class _NumberPair(_Pair):
    def __init__(self, actual, expected, *, id=(), rtol=None, atol=None, equal_nan=False,
                 check_dtype=False, **options):
        from .. import _dtype as D
        self._check_isinstance(actual, expected, cls=(int, float, complex, np.number))
        actual, expected = (x.item() if isinstance(x, np.number) else x
                            for x in (actual, expected))
        super().__init__(actual, expected, id=id, **options)
        to_dtype = {int: D.int64, float: D.float64, complex: D.complex128}
        self.rtol, self.atol = _get_tolerances(*[to_dtype[type(x)] for x in (actual, expected)],
                                               rtol=rtol, atol=atol, id=id)
        self.equal_nan, self.check_dtype = equal_nan, check_dtype

    def compare(self):
        a, e = self.actual, self.expected
        if self.check_dtype and type(a) is not type(e):
            self._fail(AssertionError, f"The (d)types do not match: {type(a)} != {type(e)}.")
        if a == e:
            return
        if self.equal_nan and cmath.isnan(a) and cmath.isnan(e):
            return
        abs_diff = abs(a - e)
        if cmath.isfinite(abs_diff) and abs_diff <= self.atol + self.rtol * abs(e):
            return
        self._fail(AssertionError, _scalar_mismatch_msg(a, e, rtol=self.rtol, atol=self.atol))


class _TensorLikePair(_Pair):
    def __init__(self, actual, expected, *, id=(), allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, **options):
        if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
            raise _Unsupported
        if not allow_subclasses and type(actual) is not type(expected):
            raise _Unsupported
        actual, expected = self._to_tensor(actual), self._to_tensor(expected)
        super().__init__(actual, expected, id=id, **options)
        self.rtol, self.atol = _get_tolerances(actual, expected, rtol=rtol, atol=atol, id=id)
        self.equal_nan = equal_nan
        self.check_device, self.check_dtype = check_device, check_dtype
        self.check_layout, self.check_stride = check_layout, check_stride

    @staticmethod
    def _to_tensor(x):
        from .._tensor import Tensor
        from ..sparse._coo import SparseTensor
        if isinstance(x, (Tensor, SparseTensor)):
            return x
        from .._creation import as_tensor
        try:
            return as_tensor(x)
        except Exception:
            raise _Unsupported from None

    def compare(self):
        a, e = self.actual, self.expected
        self._compare_attributes(a, e)
        a, e = self._equalize(a, e)
        self._compare_values(a, e)

    def _compare_attributes(self, a, e):
        def mismatch(name, av, ev):
            self._fail(AssertionError,
                       f"The values for attribute '{name}' do not match: {av} != {ev}.")

        if a.shape != e.shape:
            mismatch("shape", a.shape, e.shape)
        from ..sparse._coo import strided
        if a.layout != e.layout:
            if self.check_layout:
                mismatch("layout", a.layout, e.layout)
        elif a.layout == strided and self.check_stride and a.stride() != e.stride():
            mismatch("stride()", a.stride(), e.stride())
        if self.check_device and a.device != e.device:
            mismatch("device", a.device, e.device)
        if self.check_dtype and a.dtype != e.dtype:
            mismatch("dtype", a.dtype, e.dtype)

    @staticmethod
    def _equalize(a, e):
        from .. import _dtype as D
        from ..sparse._coo import strided
        if a.device != e.device:
            a, e = a.cpu(), e.cpu()
        if a.dtype != e.dtype:
            dt = D.promote_types(a.dtype, e.dtype)
            a, e = a.to(dt), e.to(dt)
        if a.layout != e.layout:
            a = a.to_dense() if a.layout != strided else a
            e = e.to_dense() if e.layout != strided else e
        return a, e

    def _compare_values(self, a, e):
        from ..sparse._coo import strided
        if a.layout != strided:       # sparse COO: indices equal, values close (coalesced)
            a, e = a.coalesce(), e.coalesce()
            if a._nnz() != e._nnz():
                self._fail(AssertionError,
                           "The number of specified values in sparse COO tensors does not match: "
                           f"{a._nnz()} != {e._nnz()}")
            self._close(a._indices(), e._indices(), 0, 0, False,
                        "Sparse COO indices")
            self._close(a._values(), e._values(), self.rtol, self.atol, self.equal_nan,
                        "Sparse COO values")
            return
        self._close(a, e, self.rtol, self.atol, self.equal_nan)

    def _close(self, a, e, rtol, atol, equal_nan, identifier=None):
        from ..autograd.grad_mode import no_grad
        from .. import ops
        with no_grad():
            a, e = a.detach(), e.detach()
            matches = ops.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
            if bool(matches.all()):
                return
            if a.shape == ():
                msg = _scalar_mismatch_msg(a.item(), e.item(), rtol=rtol, atol=atol,
                                           identifier=identifier)
            else:
                msg = _tensor_mismatch_msg(a, e, matches, rtol=rtol, atol=atol,
                                           identifier=identifier)
        self._fail(AssertionError, msg)


def _originate_pairs(actual, expected, *, pair_types, id=(), **options):
    seq, mapping = collections.abc.Sequence, collections.abc.Mapping
    if (isinstance(actual, seq) and not isinstance(actual, str)
            and isinstance(expected, seq) and not isinstance(expected, str)):
        if len(actual) != len(expected):
            raise _ErrorMeta(AssertionError, "The length of the sequences mismatch: "
                             f"{len(actual)} != {len(expected)}", id=id)
        pairs = []
        for i in range(len(actual)):
            pairs.extend(_originate_pairs(actual[i], expected[i], pair_types=pair_types,
                                          id=(*id, i), **options))
        return pairs
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        akeys, ekeys = set(actual.keys()), set(expected.keys())
        if akeys != ekeys:
            raise _ErrorMeta(AssertionError,
                             "The keys of the mappings do not match:\n"
                             f"Missing keys in the actual mapping: {sorted(ekeys - akeys)}\n"
                             f"Additional keys in the actual mapping: {sorted(akeys - ekeys)}",
                             id=id)
        keys = akeys
        with contextlib.suppress(Exception):
            keys = sorted(keys)
        pairs = []
        for k in keys:
            pairs.extend(_originate_pairs(actual[k], expected[k], pair_types=pair_types,
                                          id=(*id, k), **options))
        return pairs
    for pair_type in pair_types:
        try:
            return [pair_type(actual, expected, id=id, **options)]
        except _Unsupported:
            continue
    raise _ErrorMeta(TypeError, "No comparison pair was able to handle inputs of type "
                     f"{type(actual)} and {type(expected)}.", id=id)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Raise AssertionError unless `actual` and `expected` are close
    (|actual - expected| <= atol + rtol * |expected|, tolerances by dtype when omitted).

        torch.testing.assert_close(torch.tensor([1., 2.]), torch.tensor([1., 2.0000001]))
    """
    __tracebackhide__ = True
    try:
        pairs = _originate_pairs(
            actual, expected, pair_types=(_NonePair, _BooleanPair, _NumberPair, _TensorLikePair),
            allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
            check_device=check_device, check_dtype=check_dtype, check_layout=check_layout,
            check_stride=check_stride)
    except _ErrorMeta as meta:
        raise meta.to_error() from None
    for pair in pairs:
        try:
            pair.compare()
        except _ErrorMeta as meta:
            raise meta.to_error(msg) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated since PyTorch 1.12: assert_close with check_dtype=False and looser defaults."""
    warnings.warn(
        "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a "
        "future release. Please use `torch.testing.assert_close()` instead. You can find "
        "detailed upgrade instructions in https://github.com/pytorch/pytorch/issues/61844.",
        FutureWarning, stacklevel=2)
    from .._tensor import Tensor
    from .._creation import tensor
    from .. import _dtype as D
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = default_tolerances(actual, expected, dtype_precisions={
            D.float16: (1e-3, 1e-3), D.float32: (1e-4, 1e-5), D.float64: (1e-5, 1e-8)})
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)
