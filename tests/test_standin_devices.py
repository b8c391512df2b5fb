"""Device semantics as PyTorch's, on the strict stand-in "cuda" device (ndgrad.cuda._standin):
moving, mixing, host copies, factories, torch.cuda queries, checkpoints, sparse tensors; and the
stand-in's own strictness (the proof is only as good as its refusals)."""
import io

import numpy as np
import pytest

import ndgrad as torch
from ndgrad import _backend
from ndgrad.cuda import _standin

pytestmark = pytest.mark.standin


@pytest.fixture
def cuda(standin):   # (conftest.py)
    yield standin


# ---------------------------------------------------------------- the stand-in refuses the host

def test_standin_refuses_implicit_host_conversion():
    xp = _standin.xp
    a = xp.asarray([1.0, 2.0])
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array"):
        np.asarray(a)
    with pytest.raises(TypeError):
        np.exp(a)
    with pytest.raises(TypeError, match="Unsupported type"):
        a + np.ones(2)
    with pytest.raises(TypeError, match="Unsupported type"):
        xp.concatenate([a, np.ones(2)])
    assert type(a.sum()) is _standin.ndarray and a.sum().ndim == 0   # 0-d, not a NumPy scalar
    assert type(a[0]) is _standin.ndarray
    with pytest.raises(TypeError):
        range(xp.asarray(3))    # no __index__, as CuPy
    assert not hasattr(xp, "errstate") and not hasattr(xp, "vectorize")
    assert float(a.sum()) == 3.0 and a.tolist() == [1.0, 2.0] and a.get().tolist() == [1.0, 2.0]


def test_without_standin_cuda_is_absent():
    before = _backend.use_standin(False)
    try:
        if _backend.cuda_available():
            pytest.skip("a real CUDA device is here")
        assert not torch.cuda.is_available() and torch.cuda.device_count() == 0
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            torch.zeros(2, device="cuda")
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            torch.cuda.current_device()
    finally:
        _backend.use_standin(before)


# ---------------------------------------------------------------- tensors on the device

def test_to_and_back(cuda):
    x = torch.arange(6.0).reshape(2, 3)
    y = x.to("cuda")
    assert y.device == cuda and y.is_cuda and y.get_device() == 0 and not x.is_cuda
    assert type(y._data) is _standin.ndarray
    assert y.cpu().device.type == "cpu" and torch.equal(y.cpu(), x)
    assert x.cuda().device == cuda and x.to(cuda).device == cuda
    assert x.to("cuda", non_blocking=True).device == cuda
    assert y.to(device="cuda:0", dtype=torch.float64).dtype == torch.float64
    assert x.to("cpu") is x and y.to("cuda") is y
    assert repr(y) == "tensor([[0., 1., 2.],\n        [3., 4., 5.]], device='cuda:0')"
    assert y.tolist() == x.tolist() and y[1, 2].item() == 5.0 and float(y.sum()) == 15.0
    assert y.type() == "torch.cuda.FloatTensor"


def test_numpy_of_a_device_tensor(cuda):
    y = torch.ones(2, device="cuda")
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy. Use "
                                        "Tensor.cpu\\(\\) to copy the tensor to host memory"):
        y.numpy()


def test_gradients_flow_across_devices(cuda):
    x = torch.randn(3, 2, requires_grad=True)
    y = x.to("cuda")
    (y * y).sum().backward()
    assert x.grad.device.type == "cpu"
    assert torch.allclose(x.grad, 2 * x.detach())
    z = torch.randn(3, device="cuda", requires_grad=True)
    (z.cpu() ** 2).sum().backward()
    assert z.grad.device == cuda


def test_mixed_devices_raise_before_any_change(cuda):
    a = torch.ones(3, device="cuda")
    b = torch.ones(3)
    msg = "Expected all tensors to be on the same device, but found at least two devices"
    for f in (lambda: a + b, lambda: b * a, lambda: torch.matmul(a, b), lambda: torch.cat([a, b]),
              lambda: torch.nn.functional.linear(a, torch.ones(2, 3))):
        with pytest.raises(RuntimeError, match=msg):
            f()
    v = b._version
    with pytest.raises(RuntimeError, match=msg):
        b.add_(a)
    assert b._version == v and torch.equal(b, torch.ones(3))


def test_cpu_scalars_join_device_ops(cuda):
    a = torch.ones(3, device="cuda", requires_grad=True)
    s = torch.tensor(2.0, requires_grad=True)
    out = a * s + torch.tensor(1.0)
    assert out.device == cuda
    out.sum().backward()
    assert s.grad.device.type == "cpu" and s.grad.item() == 3.0 and a.grad.device == cuda


def test_factories_follow_device_and_default_device(cuda):
    t = torch.zeros(2, 3, device="cuda")
    for r in (t.new_zeros(3), t.new_ones(2), t.new_full((2,), 3.0), t.new_empty(2),
              t.new_tensor([1, 2]), torch.zeros_like(t), torch.rand_like(t), torch.randn_like(t),
              torch.randint_like(t, 5), t.clone(), t.detach()):
        assert r.device == cuda
    assert torch.empty_like(t, device="cpu").device.type == "cpu"
    for f in ("uniform_", "normal_", "bernoulli_", "exponential_", "cauchy_", "log_normal_",
              "random_"):
        assert type(getattr(t.clone(), f)()._data) is _standin.ndarray
    torch.manual_seed(3)
    host = torch.randn(4)
    torch.manual_seed(3)
    dev = torch.randn(4, device="cuda")   # host draws, moved: the same numbers as on the CPU
    assert torch.equal(dev.cpu(), host)
    torch.set_default_device("cuda")
    assert torch.get_default_device() == cuda
    assert torch.zeros(2).device == cuda and torch.tensor([1]).device == cuda
    assert torch.arange(3).device == cuda and torch.zeros(2, device="cpu").device.type == "cpu"
    torch.set_default_device("cpu")
    assert torch.zeros(2).device.type == "cpu"


def test_cuda_queries_with_a_device(cuda):
    assert torch.cuda.is_available() and torch.cuda.device_count() == 1
    assert torch.cuda.current_device() == 0
    torch.cuda.synchronize()
    torch.cuda.set_device(0)
    torch.cuda.init()
    assert isinstance(torch.cuda.get_device_name(), str)
    assert isinstance(torch.cuda.get_device_capability(), tuple)
    with torch.cuda.device(0):
        pass
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        torch.cuda.set_device(1)


def test_modules_move_parameters_and_buffers(cuda):
    m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    m.cuda()
    assert all(p.device == cuda for p in m.parameters())
    assert all(b.device == cuda for b in m.buffers())
    out = m(torch.randn(5, 3, device="cuda"))
    out.sum().backward()
    assert all(p.grad.device == cuda for p in m.parameters())
    m.cpu()
    assert all(p.device.type == "cpu" for p in m.parameters())
    assert all(b.device.type == "cpu" for b in m.buffers())


def test_checkpoints_keep_and_map_locations(cuda):
    x = torch.arange(4.0, device="cuda")
    buf = io.BytesIO()
    torch.save({"x": x, "m": torch.nn.Linear(2, 2).cuda().state_dict()}, buf)
    buf.seek(0)
    d = torch.load(buf)
    assert d["x"].device == cuda and d["m"]["weight"].device == cuda
    buf.seek(0)
    d = torch.load(buf, map_location="cpu")
    assert d["x"].device.type == "cpu" and d["x"].tolist() == [0.0, 1.0, 2.0, 3.0]
    _backend.use_standin(False)
    try:
        if not _backend.cuda_available():
            buf.seek(0)
            with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA "
                                                   "device but torch.cuda.is_available"):
                torch.load(buf)
    finally:
        _backend.use_standin(True)


def test_checkpoint_of_device_tensors_loads_in_pytorch(cuda, tmp_path):
    T = pytest.importorskip("torch")
    if T is torch:
        pytest.skip("torch is ndgrad here")
    p = tmp_path / "c.pt"
    torch.save({"w": torch.arange(3.0, device="cuda")}, p)
    got = T.load(p, map_location="cpu")
    assert got["w"].tolist() == [0.0, 1.0, 2.0]


def test_sparse_tensors_on_the_device(cuda):
    i = torch.tensor([[0, 1, 1], [2, 0, 2]])
    v = torch.tensor([3.0, 4.0, 5.0], requires_grad=True)
    s = torch.sparse_coo_tensor(i, v, (2, 3)).to("cuda")
    assert s.device == cuda
    d = torch.randn(3, 2, device="cuda", requires_grad=True)
    out = torch.sparse.mm(s, d)
    out.sum().backward()
    assert out.device == cuda and d.grad.device == cuda and v.grad.device.type == "cpu"
    ref = torch.sparse.mm(s.detach().cpu(), d.detach().cpu())
    assert torch.allclose(out.detach().cpu(), ref)
    c = s.detach().to_sparse_csr()
    assert c.device == cuda and c.crow_indices().device == cuda and (c @ d).device == cuda
    assert s.to_dense().device == cuda and s.coalesce().indices().device == cuda
    assert s.cpu().device.type == "cpu" and s.cpu().coalesce().indices().device.type == "cpu"


def test_grad_scaler_and_autocast_on_the_device(cuda):
    m = torch.nn.Linear(3, 1).cuda()
    opt = torch.optim.SGD(m.parameters(), 0.1)
    sc = torch.amp.GradScaler("cuda")
    with torch.autocast("cuda"):
        loss = m(torch.randn(4, 3, device="cuda")).pow(2).mean()
    sc.scale(loss).backward()
    sc.step(opt)
    sc.update()
    assert all(p.device == cuda for p in m.parameters())


def test_pickle_and_deepcopy_keep_the_device(cuda):
    import copy
    import pickle
    x = torch.arange(3.0).cuda().requires_grad_()
    y = pickle.loads(pickle.dumps(x))
    assert y.device == cuda and y.requires_grad and y.tolist() == [0.0, 1.0, 2.0]
    assert copy.deepcopy(x).device == cuda
    assert copy.deepcopy(torch.nn.Linear(2, 2).cuda()).weight.device == cuda
    assert pickle.loads(pickle.dumps(torch.ones(2))).device.type == "cpu"


def test_sparse_factories_and_lazy_modules_honour_device(cuda):
    s = torch.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2), device="cuda")
    assert s.device == cuda and s.coalesce().indices().device == cuda
    c = torch.sparse_csr_tensor([0, 1, 2], [1, 0], [1.0, 2.0], (2, 2), device="cuda")
    assert c.device == cuda and c.crow_indices().device == cuda
    assert torch.equal(c.to_dense().cpu(), s.to_dense().cpu())
    for m in (torch.nn.LazyLinear(3, device="cuda"), torch.nn.LazyConv2d(2, 3, device="cuda"),
              torch.nn.LazyBatchNorm1d(device="cuda")):
        x = torch.randn(4, 3, 5, 5, device="cuda") if isinstance(m, torch.nn.LazyConv2d) \
            else torch.randn(4, 3, device="cuda")
        m(x)
        assert all(p.device == cuda for p in m.parameters()), m
        assert all(b.device == cuda for b in m.buffers()), m
    m = torch.nn.LazyLinear(2).cuda()
    m(torch.randn(4, 3, device="cuda"))
    assert m.weight.device == cuda
