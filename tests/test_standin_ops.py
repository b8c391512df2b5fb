"""Ops outside the op table on the strict stand-in device (ndgrad.cuda._standin behind "cuda"): the
same values as on the CPU, results on cuda:0, and PyTorch's rules where devices meet (host
indices of a device tensor move to it; device indices of a CPU tensor are an error)."""
import numpy as np
import pytest

import ndgrad

pytestmark = pytest.mark.standin

CUDA = ndgrad.device("cuda", 0)


@pytest.fixture(autouse=True)
def _on_standin(standin):   # (conftest.py)
    yield


def _same(ours, ref):
    if isinstance(ref, (tuple, list)):
        assert len(ours) == len(ref)
        for o, r in zip(ours, ref):
            _same(o, r)
        return
    assert ours.device == CUDA, ours.device
    assert ours.dtype == ref.dtype and ours.shape == ref.shape
    np.testing.assert_allclose(ours.detach().cpu().numpy(), ref.detach().numpy(), rtol=1e-12,
                               atol=1e-12, equal_nan=True)


def _both(fn, *arrays):
    """fn on CPU tensors and on device tensors of the same arrays."""
    cpu = [ndgrad.tensor(a) for a in arrays]
    dev = [ndgrad.tensor(a, device="cuda") for a in arrays]
    return fn(*dev), fn(*cpu)


SQUARE = np.array([[[2., 1., 0.], [1., 3., 1.], [0., 1., 4.]],
                   [[1., 2., 3.], [2., 4., 6.], [1., 0., 1.]]])   # the second one singular


@pytest.mark.parametrize("fn", [
    lambda A: ndgrad.linalg.inv_ex(A),
    lambda A: ndgrad.linalg.lu_factor_ex(A),
    lambda A: ndgrad.linalg.lu_factor(A[:1]),
    lambda A: ndgrad.linalg.solve_ex(A, A[..., :1]),
    lambda A: ndgrad.linalg.cholesky_ex(A),
    lambda A: ndgrad.linalg.matrix_rank(A),
    lambda A: ndgrad.linalg.matrix_rank(A[0]),
    lambda A: ndgrad.linalg.lu_solve(*ndgrad.linalg.lu_factor(A[:1]), A[:1]),
    lambda A: ndgrad.linalg.tensorinv(A[0].reshape(3, 3, 1), ind=1),
], ids=["inv_ex", "lu_factor_ex", "lu_factor", "solve_ex", "cholesky_ex", "matrix_rank",
        "matrix_rank_2d", "lu_solve", "tensorinv"])
def test_linalg_info_functions(fn):
    ours, ref = _both(fn, SQUARE)
    _same(tuple(ours) if isinstance(ours, tuple) else ours,
          tuple(ref) if isinstance(ref, tuple) else ref)


def test_lu_factor_error_on_device():
    A = ndgrad.tensor(SQUARE, device="cuda")
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\): U\[3,3\] is zero"):
        ndgrad.linalg.lu_factor(A)
    with pytest.raises(ndgrad.linalg.LinAlgError, match="Batch element 1"):
        ndgrad.linalg.inv_ex(A, check_errors=True)
    with pytest.raises(ndgrad.linalg.LinAlgError, match="The diagonal element 3 is zero"):
        ndgrad.linalg.tensorinv(A[1], ind=1)


@pytest.mark.parametrize("fn", [
    lambda x: ndgrad.histc(x, bins=4),
    lambda x: ndgrad.histc(x, bins=3, min=-1, max=1),
    lambda x: ndgrad.histogram(x, 5),
    lambda x: ndgrad.histogram(x, ndgrad.tensor([-2., 0., 2.], device=x.device)),
    lambda x: ndgrad.unravel_index(x.abs().mul(3).long(), (2, 3)),
    lambda x: ndgrad.special.airy_ai(x * 4),
    lambda x: ndgrad.fft.irfft(ndgrad.fft.rfft(x), n=6),
    lambda x: ndgrad.isin(x, 0.5), lambda x: ndgrad.isin(0.5, x),
    lambda x: ndgrad.isin(x, [0., 1.]),
    lambda x: ndgrad.svd(x.reshape(2, 3), compute_uv=False),
    lambda x: ndgrad.clamp(x, min=ndgrad.tensor(0.0, device=x.device), max=1.0),
    lambda x: ndgrad.remainder(2.5, x + 2),
    lambda x: ndgrad.block_diag(x[:2].reshape(1, 2), x[2:].reshape(2, 2)),
    lambda x: ndgrad.combinations(x[:4], 2),
], ids=["histc", "histc_range", "histogram", "histogram_edges", "unravel_index", "airy_ai",
        "irfft", "isin", "isin_number", "isin_list", "svd_no_uv", "clamp_tensor", "remainder",
        "block_diag", "combinations"])
def test_functions(fn):
    ndgrad.set_default_device("cpu")   # (what an op makes inside follows its inputs)
    x = np.array([-1.5, -0.25, 0.0, 0.5, 0.75, 1.25])
    ours, ref = _both(fn, x)
    _same(ours, ref)


def test_irfft_gradient():
    def grad(device):
        x = ndgrad.tensor([1., -2., 3., 0.5, 2., -1.], dtype=ndgrad.float64, device=device,
                          requires_grad=True)
        w = ndgrad.tensor([1., 2., 3., 4., 5., 6.], dtype=ndgrad.float64, device=device)
        (ndgrad.fft.irfft(ndgrad.fft.rfft(x) * 1j, n=6) * w).sum().backward()
        return x.grad
    _same(grad("cuda"), grad("cpu"))


@pytest.mark.parametrize("fn", [
    lambda **k: ndgrad.tril_indices(4, 3, -1, **k),
    lambda **k: ndgrad.triu_indices(3, 5, 1, **k),
    lambda **k: ndgrad.fft.fftfreq(5, 0.5, **k),
    lambda **k: ndgrad.fft.rfftfreq(6, **k),
], ids=["tril_indices", "triu_indices", "fftfreq", "rfftfreq"])
def test_factories_on_their_device(fn):
    _same(fn(device="cuda"), fn())
    ndgrad.set_default_device("cuda")
    _same(fn(), fn(device="cpu"))
    assert fn(device="cpu").device == ndgrad.device("cpu")


@pytest.mark.parametrize("key", [
    lambda: np.array([2, 0]),
    lambda: [2, 0],
    lambda: ndgrad.tensor([2, 0], device="cpu"),
    lambda: (slice(None), ndgrad.tensor([1, 1], device="cpu")),
    lambda: ndgrad.tensor([True, False, True], device="cpu"),
], ids=["numpy", "list", "cpu_tensor", "tuple", "cpu_mask"])
def test_host_indices_of_a_device_tensor(key):
    x = np.arange(12.).reshape(3, 4)
    ours, ref = _both(lambda t: t[key()], x)
    _same(ours, ref)

    def put(t):
        t = t.clone()
        t[key()] = 7.0
        return t
    ours, ref = _both(put, x)
    _same(ours, ref)


def test_index_put_and_gradient_with_host_indices():
    def run(device):
        x = ndgrad.arange(6., device=device).reshape(2, 3).requires_grad_()
        i = ndgrad.tensor([1, 0, 1], device="cpu")
        y = x.index_put((i,), ndgrad.ones(3, device=device), accumulate=True)
        (y * y).sum().backward()
        return y, x.grad
    _same(run("cuda"), run("cpu"))


def test_device_indices_of_a_cpu_tensor():
    x = ndgrad.arange(6.)
    with pytest.raises(RuntimeError, match=r"indices should be either on cpu or on the same "
                                           r"device as the indexed tensor \(cpu\)"):
        x[ndgrad.tensor([1], device="cuda")]
    ndgrad.set_default_device("cuda")   # a list builds its index where the tensor is
    assert x[[4, 1]].tolist() == [4.0, 1.0]


@pytest.mark.parametrize("fill", [
    lambda t: t.uniform_(-1, 2), lambda t: t.normal_(1, 3), lambda t: t.bernoulli_(0.3),
    lambda t: t.bernoulli_(ndgrad.full(t.shape, 0.7, device=t.device)),
    lambda t: t.exponential_(2.0), lambda t: t.cauchy_(), lambda t: t.log_normal_(),
    lambda t: t.geometric_(0.4), lambda t: t.random_(0, 10),
], ids=["uniform_", "normal_", "bernoulli_", "bernoulli_tensor", "exponential_", "cauchy_",
        "log_normal_", "geometric_", "random_"])
def test_random_fills_land_on_the_device(fill):
    """The host generator draws, the draw moves to the device once: the same numbers as on the
    CPU under the same seed."""
    ndgrad.manual_seed(3)
    ref = fill(ndgrad.zeros(2, 5, dtype=ndgrad.float64))
    ndgrad.manual_seed(3)
    t = ndgrad.zeros(2, 5, dtype=ndgrad.float64, device="cuda")
    ours = fill(t)
    assert ours is t
    _same(ours, ref)


@pytest.mark.parametrize("fn", [
    lambda x: x.new_zeros(2, 3), lambda x: x.new_ones((2,)), lambda x: x.new_empty(4),
    lambda x: x.new_full((2, 2), 3.0), lambda x: x.new_tensor([1.0, 2.0]), lambda x: x.new(2),
    lambda x: x.new([1.0]),
], ids=["new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "new", "new_data"])
def test_new_factories_follow_self(fn):
    """Tensor.new_* make tensors on self's device (not the default one), as in PyTorch."""
    dev = ndgrad.zeros(3, dtype=ndgrad.float64, device="cuda")
    assert fn(dev).device == CUDA and fn(dev).dtype == ndgrad.float64
    ndgrad.set_default_device("cuda")
    assert fn(ndgrad.zeros(3, device="cpu")).device == ndgrad.device("cpu")


@pytest.mark.parametrize("code", [
    "x.sort(1).values", "x.topk(2, 1).values", "x.kthvalue(2, 1).values",
    "x.masked_select(x > 0)", "x.new_zeros(3, 4).masked_scatter(x > 0, x)",
    "x.gather(1, ndgrad.tensor([[0], [1], [2]], device=x.device))",
    "ndgrad.linalg.lu_factor(x[:, :3]).LU", "ndgrad.fft.irfft(ndgrad.fft.rfft(x), n=6)",
])
def test_gradients_with_the_default_device_on_the_cpu(code):
    """Formulas that make tensors (zeros to scatter into, ...) make them on the gradient's
    device: nothing depends on set_default_device."""
    def grad(device):
        x = ndgrad.tensor(np.linspace(-1, 1, 12).reshape(3, 4) ** 3 + np.eye(3, 4), device=device,
                          requires_grad=True)
        y = eval(code)
        (y * y).sum().backward()
        return x.grad
    _same(grad("cuda"), grad("cpu"))


def test_apply_refuses_device_tensors():
    with pytest.raises(TypeError, match="apply_ is only implemented on CPU tensors"):
        ndgrad.zeros(3, device="cuda").apply_(lambda v: v + 1)
    assert ndgrad.zeros(3).apply_(lambda v: v + 1).tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sigmoid_and_silu_same_values(dtype):
    """The small-input formula of the CPU runs on the device too: bit-identical results."""
    x = np.linspace(-100, 30, 37).astype(dtype)
    for fn in (ndgrad.sigmoid, ndgrad.nn.functional.silu):
        ours, ref = _both(fn, x)
        np.testing.assert_array_equal(ours.cpu().numpy(), ref.numpy())
