"""Mixed dtypes in bilinear, linalg.multi_dot and batch norm: PyTorch's errors (or its mixed
half/float mode), not silent promotion."""
import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")

f64, f16 = "float64", "float16"


def _o(L, *shape, dt=None):
    return L.ones(*shape, dtype=getattr(L, dt) if dt else None)


CASES = {
    "bilinear_weight": lambda L: L.nn.functional.bilinear(_o(L, 2, 3), _o(L, 2, 4),
                                                          _o(L, 5, 3, 4, dt=f64)),
    "bilinear_bias": lambda L: L.nn.functional.bilinear(_o(L, 2, 3), _o(L, 2, 4), _o(L, 5, 3, 4),
                                                        _o(L, 5, dt=f64)),
    "bilinear_input1": lambda L: L.nn.functional.bilinear(_o(L, 2, 3, dt=f64), _o(L, 2, 4),
                                                          _o(L, 5, 3, 4, dt=f64)),
    "multi_dot": lambda L: L.linalg.multi_dot([_o(L, 2, 3), _o(L, 3, 4, dt=f64)]),
    "multi_dot_3": lambda L: L.linalg.multi_dot([_o(L, 2, 3), _o(L, 3, 4), _o(L, 4, 2, dt=f64)]),
    "bn_input_double_stats_float": lambda L: L.nn.functional.batch_norm(
        _o(L, 2, 3, dt=f64), L.zeros(3), L.ones(3)),
    "bn_stats_double": lambda L: L.nn.functional.batch_norm(
        _o(L, 2, 3), L.zeros(3, dtype=L.float64), L.ones(3, dtype=L.float64)),
    "bn_weight_float_input_double": lambda L: L.nn.functional.batch_norm(
        _o(L, 2, 3, dt=f64), L.zeros(3, dtype=L.float64), L.ones(3, dtype=L.float64),
        weight=_o(L, 3)),
    "bn_weight_first_decides": lambda L: L.nn.functional.batch_norm(
        _o(L, 2, 3), L.zeros(3, dtype=L.float64), L.ones(3, dtype=L.float64), weight=_o(L, 3)),
    "bn_half_with_half_weight": lambda L: L.nn.functional.batch_norm(
        _o(L, 2, 3, dt=f16), L.zeros(3), L.ones(3), weight=_o(L, 3, dt=f16)),
    "bn_training_weight_double": lambda L: L.nn.functional.batch_norm(
        _o(L, 2, 3), None, None, weight=_o(L, 3, dt=f64), training=True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_mixed_dtype_errors_match_pytorch(name):
    msgs = []
    for L in (torch, ndgrad):
        with pytest.raises(RuntimeError) as info:
            CASES[name](L)
        msgs.append(str(info.value).split("\n")[0])
    assert msgs[0] == msgs[1]


def test_half_input_with_float_stats_is_mixed_mode_as_pytorch():
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float16)
    outs = []
    for L in (torch, ndgrad):
        rm, rv = L.zeros(3), L.ones(3)
        y = L.nn.functional.batch_norm(L.tensor(x), rm, rv, training=True)
        outs.append((str(y.dtype), y.float().numpy(), rm.numpy().copy(), str(rm.dtype)))
        y = L.nn.functional.batch_norm(L.tensor(x), rm, rv)
        outs.append((str(y.dtype), y.float().numpy(), rv.numpy().copy(), str(rv.dtype)))
    for r, g in zip(outs[:2], outs[2:]):
        assert r[0] == g[0] == "torch.float16" and r[3] == g[3]
        np.testing.assert_allclose(g[1], r[1], atol=2e-3)
        np.testing.assert_allclose(g[2], r[2], atol=1e-3)
