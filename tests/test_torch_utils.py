"""torch.isin, unravel_index, combinations, scalar_tensor, default device, the deprecated svd/qr/
chain_matmul and torch.vmap, against PyTorch."""
import warnings

import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")


def _same(a, b):
    if isinstance(a, (tuple, list)):
        assert type(a).__name__ == type(b).__name__ and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
        return
    assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype)
    np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fn", [
    lambda L: L.isin(L.tensor([[1, 2], [3, 4]]), L.tensor([2, 3])),
    lambda L: L.isin(L.tensor([1, 2, 2]), 2, invert=True),
    lambda L: L.isin(3, L.tensor([1, 3])),
    lambda L: L.unravel_index(L.tensor([4, 1, 5]), (2, 3)),
    lambda L: L.unravel_index(L.tensor(5), (2, 3)),
    lambda L: L.unravel_index(L.tensor([[7, 0]]), (4, 1, 2)),
    lambda L: L.combinations(L.tensor([1, 2, 3])),
    lambda L: L.combinations(L.tensor([1.0, 2.0, 3.0]), r=3, with_replacement=True),
    lambda L: L.combinations(L.tensor([1.0, 2.0]), r=3),
    lambda L: L.scalar_tensor(3),
    lambda L: L.scalar_tensor(3, dtype=L.int64),
    lambda L: L.chain_matmul(L.arange(6.).view(2, 3), L.ones(3, 4), L.arange(4.).view(4, 1)),
])
def test_values_match_pytorch(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(fn(torch), fn(ndgrad))


def test_combinations_gradient_matches_pytorch():
    res = []
    for L in (torch, ndgrad):
        x = L.tensor([1.0, 2.0, 3.0, 4.0], dtype=L.float64, requires_grad=True)
        (L.combinations(x, 3).prod(1).sum()).backward()
        res.append(x.grad.numpy())
    np.testing.assert_allclose(res[1], res[0])


def test_deprecated_svd_and_qr_match_pytorch():
    a = np.random.default_rng(0).standard_normal((4, 3))
    for some in (True, False):
        ref, got = [], []
        for L, out in ((torch, ref), (ndgrad, got)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                x = L.tensor(a, requires_grad=True)
                U, S, V = L.svd(x, some=some)
                assert type(L.svd(x)).__name__ == "svd" and L.svd(x).V.shape == (3, 3)
                (U @ L.diag_embed(S) if some else U[:, :3] @ L.diag_embed(S)).matmul(V.mT) \
                    .sum().backward()
                Q, R = L.qr(x, some=some)
                q2, r2 = x.qr()
                out += [S, (U[:, :3] * S) @ V.mT, (Q @ R), x.grad, q2 @ r2]
        for r, g in zip(ref, got):
            _same(r, g)
    u, s, v = ndgrad.svd(ndgrad.ones(3, 2), compute_uv=False)
    U, S, V = torch.svd(torch.ones(3, 2), compute_uv=False)
    _same((U, S, V), (u, s, v))


def test_errors_match_pytorch():
    for L in (torch, ndgrad):
        with pytest.raises(TypeError, match="expected 'indices' to be integer dtype, but got "
                                            "torch.float32"):
            L.unravel_index(L.tensor([1.5]), (2, 3))
        with pytest.raises(RuntimeError, match=r"Expect a 1D vector, but got shape \[2, 2\]"):
            L.combinations(L.ones(2, 2))


def test_vmap_default_device_and_deprecation_warnings():
    assert ndgrad.vmap(ndgrad.dot)(ndgrad.ones(3, 2), ndgrad.ones(3, 2)).tolist() == [2.0] * 3
    assert str(ndgrad.get_default_device()) == "cpu"
    ndgrad.set_default_device("cpu")
    if not ndgrad.cuda.is_available():   # as PyTorch's CPU build: accepted, refused at use
        ndgrad.set_default_device("cuda")
        try:
            for f in (ndgrad.get_default_device, lambda: ndgrad.zeros(1)):
                with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
                    f()
        finally:
            ndgrad.set_default_device(None)
    ndgrad.functional._warned.clear()
    with pytest.warns(UserWarning, match="torch.qr is deprecated in favor of torch.linalg.qr"):
        ndgrad.qr(ndgrad.eye(2))
    with pytest.warns(UserWarning, match="torch.chain_matmul is deprecated"):
        ndgrad.chain_matmul(ndgrad.eye(2))
