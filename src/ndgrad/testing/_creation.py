"""make_tensor as PyTorch's torch/testing/_creation.py: random tensors over each dtype's default
value interval ([-9, 10) for integers, [-9, 9) for floating and complex, {False, True} for bool),
with PyTorch's argument checks and messages."""
import collections.abc
import functools
import math
import warnings

__all__ = ["make_tensor"]


def _kinds():
    from .. import _dtype as D
    integral = [D.uint8, D.int8, D.int16, D.int32, D.int64]
    floating_or_complex = [D.float16, D.float32, D.float64, D.complex64, D.complex128]
    return [D.bool, *integral], floating_or_complex, [D.complex64, D.complex128]


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A tensor of `shape` filled with random values from [low, high).

        torch.testing.make_tensor(2, 3, dtype=torch.float32, device="cpu", low=-1, high=1)
    """
    from .. import _dtype as D
    from .._creation import randint, empty
    from ..ops import view_as_real
    bool_or_int, float_or_complex, complex_ = _kinds()

    def modify_low_high(low, high, *, lowest_inclusive, highest_exclusive, default_low,
                        default_high):
        low = low if low is not None else default_low
        high = high if high is not None else default_high
        if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
            raise ValueError(f"`low` and `high` cannot be NaN, but got {low=} and {high=}")
        elif low == high and dtype in float_or_complex:
            warnings.warn(
                "Passing `low==high` to `torch.testing.make_tensor` for floating or complex "
                "types is deprecated since 2.1 and will be removed in 2.3. "
                "Use `torch.full(...)` instead.", FutureWarning, stacklevel=3)
        elif low >= high:
            raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
        elif high < lowest_inclusive or low >= highest_exclusive:
            raise ValueError(
                f"The value interval specified by `low` and `high` is [{low}, {high}), "
                f"but {dtype} only supports [{lowest_inclusive}, {highest_exclusive})")
        low = min(max(low, lowest_inclusive), highest_exclusive)
        high = min(max(high, lowest_inclusive), highest_exclusive)
        if dtype in bool_or_int:
            return math.ceil(low), math.ceil(high)
        return low, high

    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got {noncontiguous=} and {memory_format=}")
    if requires_grad and dtype in bool_or_int:
        raise ValueError("`requires_grad=True` is not supported for boolean and integral "
                         f"dtypes, but got {dtype=}")
    noncontiguous = noncontiguous and functools.reduce(lambda x, y: x * y, shape, 1) > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])

    if dtype is D.bool:
        low, high = modify_low_high(low, high, lowest_inclusive=0, highest_exclusive=2,
                                    default_low=0, default_high=2)
        result = randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in bool_or_int:
        info = D.iinfo(dtype)
        low, high = modify_low_high(low, high, lowest_inclusive=info.min,
                                    highest_exclusive=info.max + (dtype is not D.int64),
                                    default_low=-9, default_high=10)
        result = randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in float_or_complex:
        info = D.finfo(dtype)
        low, high = modify_low_high(low, high, lowest_inclusive=info.min,
                                    highest_exclusive=info.max, default_low=-9, default_high=9)
        result = empty(shape, device=device, dtype=dtype)
        target = view_as_real(result) if dtype in complex_ else result
        if high - low >= D.finfo(target.dtype).max:   # uniform_ needs high - low <= max
            target.uniform_(low / 2, high / 2).mul_(2)
        else:
            target.uniform_(low, high)
    else:
        raise TypeError(
            f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor()."
            " To request support, file an issue at: https://github.com/pytorch/pytorch/issues")

    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if dtype in bool_or_int else D.finfo(dtype).tiny
    if dtype in float_or_complex:
        result.requires_grad = requires_grad
    return result
