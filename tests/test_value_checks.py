"""Values PyTorch refuses (issue 15): Python ints beyond int64, values that do not fit an
explicitly requested dtype, and `.data` of an integer type on a tensor that requires grad."""
import numpy as np
import pytest

import ndgrad

BIG = 2 ** 63


def _cases(lib):
    return {
        "int64_overflow": lambda: lib.tensor([BIG]),
        "scalar_overflow": lambda: lib.tensor(BIG),
        "negative_overflow": lambda: lib.tensor([-BIG - 1]),
        "beyond_uint64": lambda: lib.tensor([2 ** 64]),
        "nested_overflow": lambda: lib.tensor([[1], [BIG]]),
        "mixed_sign_overflow": lambda: lib.tensor([-1, BIG]),
        "bool_and_big": lambda: lib.tensor([True, BIG]),
        "as_tensor_overflow": lambda: lib.as_tensor([BIG]),
        "explicit_int32_overflow": lambda: lib.tensor([BIG], dtype=lib.int32),
        "max_int64": lambda: lib.tensor([BIG - 1]),
        "float_with_big": lambda: lib.tensor([1.5, BIG]),
        "big_as_float": lambda: lib.tensor([[1, 2], [3, 2 ** 70]], dtype=lib.float64),
        "big_as_bool": lambda: lib.tensor([BIG], dtype=lib.bool),
        "big_as_complex": lambda: lib.tensor([BIG], dtype=lib.complex64),
        "too_big_for_float": lambda: lib.tensor([1.5, 10 ** 400]),
        "int32_range": lambda: lib.tensor([2 ** 31], dtype=lib.int32),
        "int8_range": lambda: lib.tensor([200], dtype=lib.int8),
        "uint8_range": lambda: lib.tensor([300], dtype=lib.uint8),
        "uint8_wraps_small_negative": lambda: lib.tensor([-200], dtype=lib.uint8),
        "uint8_negative_limit": lambda: lib.tensor([-256], dtype=lib.uint8),
        "uint8_negative_float": lambda: lib.tensor([-2.0], dtype=lib.uint8),
        "float_to_int64": lambda: lib.tensor([1e19], dtype=lib.int64),
        "inf_to_int64": lambda: lib.tensor([float("inf")], dtype=lib.int64),
        "nan_to_int32": lambda: lib.tensor([float("nan")], dtype=lib.int32),
        "ndarray_wraps": lambda: lib.tensor(np.array([300]), dtype=lib.uint8),
        "full_int64": lambda: lib.full((2,), BIG),
        "full_beyond_uint64": lambda: lib.full((2,), 2 ** 64),
        "full_negative": lambda: lib.full((2,), -BIG - 1),
        "full_uint8": lambda: lib.full((2,), 300, dtype=lib.uint8),
        "full_int32_float": lambda: lib.full((2,), 1e10, dtype=lib.int32),
        "full_half": lambda: lib.full((2,), 70000.0, dtype=lib.float16),
        "full_half_inf": lambda: lib.full((2,), float("inf"), dtype=lib.float16),
        "full_big_float": lambda: lib.full((2,), BIG, dtype=lib.float32),
        "fill_int32": lambda: lib.ones(2, dtype=lib.int32).fill_(2 ** 40),
        "fill_int16": lambda: lib.ones(2, dtype=lib.int16).fill_(2 ** 20),
        "fill_float": lambda: lib.ones(2).fill_(1e300),
        "fill_double": lambda: lib.ones(2, dtype=lib.float64).fill_(1e300),
    }


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 (compared with PyTorch's)
        return type(e).__name__, str(e).split("\n")[0]
    return "ok", str(r.dtype), r.tolist()


@pytest.mark.parametrize("case", sorted(_cases(ndgrad)))
def test_matches_torch(case):
    torch = pytest.importorskip("torch")
    assert _outcome(_cases(ndgrad)[case]) == _outcome(_cases(torch)[case])


def test_overflow_without_torch():
    c = _cases(ndgrad)
    assert _outcome(c["int64_overflow"]) == ("ValueError", "Overflow when unpacking long long")
    assert _outcome(c["nested_overflow"])[0] == "ValueError"
    assert _outcome(c["int32_range"]) == (
        "RuntimeError", "value cannot be converted to type int32 without overflow")
    assert _outcome(c["full_int64"]) == (
        "RuntimeError", "value cannot be converted to type int64_t without overflow")
    assert _outcome(c["max_int64"]) == ("ok", "torch.int64", [BIG - 1])
    assert _outcome(c["uint8_wraps_small_negative"]) == ("ok", "torch.uint8", [56])


def test_fill_refused_leaves_tensor_unchanged():
    t = ndgrad.ones(2, dtype=ndgrad.int32)
    v = t._version
    with pytest.raises(RuntimeError, match="without overflow"):
        t.fill_(2 ** 40)
    assert t.tolist() == [1, 1] and t._version == v


def _data_cases(lib):
    def int_data():
        x = lib.ones(3, requires_grad=True)
        x.data = lib.ones(3, dtype=lib.int64)

    def int_parameter():
        p = lib.nn.Parameter(lib.ones(3))
        p.data = lib.ones(3, dtype=lib.int32)

    def double_data():
        x = lib.ones(3, requires_grad=True)
        x.data = lib.ones(3, dtype=lib.float64)
        (x * 2).sum().backward()
        return x.grad

    def int_data_no_grad():
        x = lib.ones(3)
        x.data = lib.ones(3, dtype=lib.int64)
        return x
    return {"int_data": int_data, "int_parameter": int_parameter, "double_data": double_data,
            "int_data_no_grad": int_data_no_grad}


@pytest.mark.parametrize("case", sorted(_data_cases(ndgrad)))
def test_data_assignment_matches_torch(case):
    torch = pytest.importorskip("torch")
    a = _outcome(_data_cases(ndgrad)[case])
    b = _outcome(_data_cases(torch)[case])
    assert a == b


def test_integer_data_refused_before_any_change():
    x = ndgrad.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="must be floating point or complex dtype"):
        x.data = ndgrad.ones(3, dtype=ndgrad.int64)
    assert x.dtype is ndgrad.float32 and x.tolist() == [1.0] * 3
    (x * 2).sum().backward()
    assert x.grad.dtype is ndgrad.float32
