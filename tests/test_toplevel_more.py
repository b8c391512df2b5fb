"""Top-level names PyTorch programs reach for beyond the ops: storages (torch.storage and the
legacy classes), the deterministic debug mode, torch.cond, the exception classes, AVG/SUM,
CharTensor/ShortTensor, set_anomaly_enabled; against PyTorch."""
import warnings

import pytest

import ndgrad

torch = pytest.importorskip("torch")


def _both(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(torch), fn(ndgrad)


@pytest.mark.parametrize("fn", [
    lambda T: (T.FloatStorage([1, 2, 3]).tolist(), str(T.FloatStorage([1, 2]).dtype),
               len(T.LongStorage(4)), T.FloatStorage([1.5, 2])[1]),
    lambda T: (isinstance(T.ones(2).storage(), T.FloatStorage),
               isinstance(T.ones(2).storage(), T.DoubleStorage),
               isinstance(T.ones(2, dtype=T.int64).storage(), T.LongStorage),
               isinstance(T.ones(2).storage(), T.TypedStorage),
               isinstance(T.ones(2).untyped_storage(), T.UntypedStorage),
               T.ones(2).storage_type().__name__, T.ones(2, dtype=T.bool).storage_type().__name__),
    lambda T: (T.UntypedStorage(5).size(), T.UntypedStorage([1, 2, 255]).tolist(),
               T.UntypedStorage(3).element_size(), str(T.UntypedStorage(2).device)),
    lambda T: (str(T.TypedStorage(2).dtype), T.TypedStorage([1, 2], dtype=T.int64).tolist(),
               repr(T.FloatStorage([1, 2]))),
])
def test_storages(fn):
    theirs, ours = _both(fn)
    assert ours == theirs


def test_deterministic_debug_mode():
    def run(T):
        out = []
        for mode in ("warn", "error", "default", 1, 2, 0):
            T.set_deterministic_debug_mode(mode)
            out.append((T.get_deterministic_debug_mode(), T.are_deterministic_algorithms_enabled(),
                        T.is_deterministic_algorithms_warn_only_enabled()))
        for bad in ("x", 5, 1.0):
            with pytest.raises(TypeError) as e:
                T.use_deterministic_algorithms(bad if bad != 5 else 1)
            out.append(str(e.value))
            with pytest.raises((RuntimeError, TypeError)) as e:
                T.set_deterministic_debug_mode(bad)
            out.append((type(e.value).__name__, str(e.value)))
        return out
    theirs, ours = _both(run)
    assert ours == theirs


def test_cond_and_misc():
    def run(T):
        x = T.arange(3.0)
        return (T.cond(T.tensor(True), lambda a: a + 1, lambda a: a - 1, (x,)).tolist(),
                T.cond(False, lambda a: a + 1, lambda a: a - 1, [x]).tolist(),
                T.sym_fresh_size(3), T.is_distributed(x), T.is_vulkan_available(),
                str(T.AVG), repr(T.SUM), int(T.AVG), T.CharTensor([1, 2]).dtype == T.int8,
                T.ShortTensor(3).shape == (3,), T.CharTensor.__name__,
                [c.__name__ for c in T.OutOfMemoryError.__mro__[1:3]],
                T.cuda.OutOfMemoryError is T.OutOfMemoryError,
                [c.__name__ for c in T.AcceleratorError.__mro__[1:3]],
                [c.__name__ for c in T.FatalError.__mro__[1:2]],
                [c.__name__ for c in T.JITException.__mro__[1:2]],
                T.has_lapack, T.has_spectral)
    theirs, ours = _both(run)
    assert ours == theirs


def test_set_anomaly_enabled():
    for T in (torch, ndgrad):
        T.set_anomaly_enabled(True)
        assert T.is_anomaly_enabled()
        T.set_anomaly_enabled(False)
        assert not T.is_anomaly_enabled()


def test_module_cpu_and_cuda_do_not_call_a_subclass_to():
    """gpytorch's NNUtil overrides `to` to call `self.cpu()`; PyTorch's Module.cpu/cuda go
    through _apply, so that does not recurse."""
    for T in (torch, ndgrad):
        class Util(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = T.nn.Linear(2, 2)

            def to(self, device):
                return self.cpu() if str(device) == "cpu" else self.cuda()

            def cpu(self):
                super().cpu()
                return self
        u = Util()
        assert u.to("cpu") is u and u.lin.weight.device.type == "cpu"
        if not T.cuda.is_available():
            with pytest.raises((AssertionError, RuntimeError)):
                T.nn.Linear(1, 1).cuda()


def test_untyped_storage_from_file_slices_and_asarray(tmp_path):
    """safetensors' loading path (with torch >= 2: UntypedStorage.from_file, a byte slice per
    tensor, torch.asarray(slice, dtype=uint8).view(dtype=...))."""
    import numpy as np
    data = np.arange(6, dtype=np.float32).tobytes() + np.array([7, -1], np.int64).tobytes()
    path = tmp_path / "blob.bin"
    path.write_bytes(b"HEAD" + data)
    got = []
    for T in (torch, ndgrad):
        s = T.UntypedStorage.from_file(str(path), shared=False, nbytes=len(data) + 4)
        a = T.asarray(s[4:28], dtype=T.uint8).view(dtype=T.float32).reshape(2, 3)
        b = T.asarray(s[28:44], dtype=T.uint8).view(dtype=T.int64)
        got.append((s.size(), s[0:4].tolist(), a.tolist(), b.tolist(), s.untyped() is s))
    assert got[1] == got[0]


def test_sparse_coo_tensor_of_a_size_alone():
    def run(T):
        a = T.sparse_coo_tensor(size=(5, 3))
        b = T.sparse_coo_tensor((2, 3), dtype=T.float64)
        return (tuple(a.shape), str(a.dtype), tuple(a._indices().shape), tuple(a._values().shape),
                a.is_coalesced(), tuple(b.shape), str(b.dtype), a.to_dense().tolist())
    theirs, ours = _both(run)
    assert ours == theirs
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        ndgrad.sparse_coo_tensor()


def test_save_flushes_a_file_object():
    """PyTorch's writers flush a file object at the end (skorch's HfHubStorage uploads then)."""
    class Sink:
        def __init__(self):
            self.data, self.flushes = b"", 0

        def write(self, b):
            self.data += bytes(b)

        def flush(self):
            self.flushes += 1
    for T in (torch, ndgrad):
        sink = Sink()
        T.save({"w": T.ones(2)}, sink)
        assert sink.flushes >= 1 and sink.data[:2] == b"PK"


def test_setitem_on_a_torch_function_subclass_dispatches_setitem():
    """A subclass's __torch_function__ gets Tensor.__setitem__ itself (pyro's ProvenanceTensor
    unwraps its arguments and calls func(*args)), not the index_put ndgrad runs under it."""
    got = []
    for T in (torch, ndgrad):
        calls = []

        class Tracked(T.Tensor):
            def __new__(cls, data):
                r = data.as_subclass(cls)
                r._t = data
                return r

            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                calls.append(func.__name__)
                args = [a._t if isinstance(a, Tracked) else a for a in args]
                return func(*args, **(kwargs or {}))
        base = T.tensor(2.0)
        d = Tracked(base)
        d[T.tensor(True)] = 0.0
        x = Tracked(T.arange(4.0))
        x[T.tensor([True, False, True, False])] = 5.0
        x[1] = 7.0
        got.append((base.item(), x._t.tolist(), calls.count("__setitem__")))
    assert got[1] == got[0]
