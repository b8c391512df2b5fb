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
