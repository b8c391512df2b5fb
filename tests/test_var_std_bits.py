"""var, std, var_mean and std_mean bit for bit against PyTorch's CPU kernels: float32
accumulated in double and rounded once (at::acc_type), a complex variance as the sum of its
parts' variances each rounded to the real type, var_mean's mean from a double accumulation
too (PyTorch's Welford mean in double and NumPy's double mean round to the same float32 but
for about one output in a hundred: those compare to one ulp). float64 results follow NumPy's
two-pass variance (PyTorch's Welford differs in the last bits there); a complex std takes the
correctly rounded square root where PyTorch's takes MKL's (see optim/_kernels.sqrt)."""
import warnings
import zlib

import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")

CASES = [((100, 10), 1), ((100, 10), 0), ((7, 1000), 1), ((5000,), None),
         ((8, 3, 16, 16), (0, 2, 3)), ((300, 300), 1), ((3, 1), 1), ((1,), None), ((4, 0), 1)]


@pytest.mark.parametrize("shape,dim", CASES)
@pytest.mark.parametrize("dtype", ["float32", "complex64", "float16"])
@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
def test_like_pytorch(shape, dim, dtype, name):
    if dtype == "complex64" and name.startswith("std"):
        pytest.skip("the square root: MKL's in PyTorch, correctly rounded here")
    r = np.random.default_rng(zlib.crc32(repr((shape, dim, dtype, name)).encode()))
    a = r.standard_normal(shape) * 3 + 1
    if dtype == "complex64":
        a = a + 1j * r.standard_normal(shape)
    a = a.astype(dtype)
    for correction in (1, 0, 2):
        outs = []
        for T in (torch, ndgrad):
            kw = {"correction": correction} if dim is None else {"dim": dim,
                                                                 "correction": correction}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                o = getattr(T, name)(T.tensor(a), **kw)
            outs.append([np.asarray(x.numpy()) for x in (o if isinstance(o, tuple) else (o,))])
        for i, (x, y) in enumerate(zip(*outs)):
            assert x.dtype == y.dtype and x.shape == y.shape
            if i == 0:
                np.testing.assert_array_equal(x, y)
            else:       # (the mean: see above)
                np.testing.assert_allclose(y, x, rtol=2.5e-7 if dtype != "float16" else 1e-3,
                                           atol=1e-30)
                assert ((x != y) & ~(np.isnan(x) & np.isnan(y))).sum() <= max(1, x.size // 50)
