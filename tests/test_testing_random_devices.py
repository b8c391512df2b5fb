"""torch.testing, torch.random, and the device namespaces of a machine without a GPU
(torch.cuda as PyTorch's CPU build has it, torch.accelerator, torch.backends), plus amp's
custom_fwd/custom_bwd, autograd's remaining names, utils.checkpoint's helpers and nn.parallel's
functions: each compared with PyTorch's results, error types and messages on the same calls."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ndgrad

try:
    import torch
except ImportError:
    torch = None


def _oracle():
    """PyTorch, the oracle of the comparisons; those tests skip without it."""
    if torch is None:
        pytest.skip("PyTorch is not installed")
    return torch


def _outcome(fn):
    """("OK", value) or (exception type name, message): what a call did."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "OK", fn()
    except Exception as e:     # noqa: BLE001  (any error is part of the compared outcome)
        return type(e).__name__, str(e)


def _same(case):
    """Run `case(module)` with ndgrad and with torch; the outcomes must agree."""
    oracle = _oracle()
    mine, theirs = _outcome(lambda: case(ndgrad)), _outcome(lambda: case(oracle))
    assert mine[0] == theirs[0], (mine, theirs)
    if mine[0] != "OK":
        assert mine[1] == theirs[1]
    return mine, theirs


# ---------------------------------------------------------------- torch.testing.assert_close

AC = [
    lambda T: T.testing.assert_close(T.tensor([1., 2., 3.]), T.tensor([1., 2.5, 3.])),
    lambda T: T.testing.assert_close(T.tensor([1., 2., 3.], dtype=T.float64),
                                     T.tensor([1., 2.5, 3.], dtype=T.float64)),
    lambda T: T.testing.assert_close(T.tensor([[1, 2], [3, 4]]), T.tensor([[1, 2], [3, 5]])),
    lambda T: T.testing.assert_close(T.tensor(1.), T.tensor(2.)),
    lambda T: T.testing.assert_close(T.tensor([1., 2.]), T.tensor([1., 2., 3.])),
    lambda T: T.testing.assert_close(T.tensor([1., 2.]), T.tensor([1., 2.], dtype=T.float64)),
    lambda T: T.testing.assert_close(T.tensor([1., 2.]), T.tensor([1., 2.1], dtype=T.float64),
                                     check_dtype=False),
    lambda T: T.testing.assert_close(T.tensor([1., float("nan")]), T.tensor([1., float("nan")])),
    lambda T: T.testing.assert_close(T.tensor([1., float("nan")]), T.tensor([1., float("nan")]),
                                     equal_nan=True),
    lambda T: T.testing.assert_close(T.tensor([1., 1.000001]), T.tensor([1., 1.])),
    lambda T: T.testing.assert_close(1, 1.0),
    lambda T: T.testing.assert_close(1, 1.0, check_dtype=False),
    lambda T: T.testing.assert_close(1.0, 1.1),
    lambda T: T.testing.assert_close(1.0, 0.0),
    lambda T: T.testing.assert_close([T.tensor(1.), T.tensor(2.)], [T.tensor(1.), T.tensor(3.)]),
    lambda T: T.testing.assert_close({"a": T.tensor(1.), "b": 2}, {"a": T.tensor(1.), "c": 2}),
    lambda T: T.testing.assert_close({"a": T.tensor([1., 2.])}, {"a": T.tensor([1., 2.2])}),
    lambda T: T.testing.assert_close([1, 2], [1, 2, 3]),
    lambda T: T.testing.assert_close(np.array([1., 2.]), np.array([1., 2.1])),
    lambda T: T.testing.assert_close(T.tensor([1.]), T.tensor([1.]), rtol=0.1),
    lambda T: T.testing.assert_close(T.tensor([1., 2.]), T.tensor([1., 2.1]), rtol=0, atol=0),
    lambda T: T.testing.assert_close(T.tensor([1., 2.]), T.tensor([1., 2.1]), rtol=0.1, atol=0),
    lambda T: T.testing.assert_close(True, False),
    lambda T: T.testing.assert_close(None, 1),
    lambda T: T.testing.assert_close(T.tensor([1., 2.]), T.tensor([1., 2.1]), msg="custom"),
    lambda T: T.testing.assert_close(T.tensor([1., 2.]), T.tensor([1., 2.1]),
                                     msg=lambda m: "Header\n" + m),
    lambda T: T.testing.assert_close(T.ones(2, 3).t(), T.ones(3, 2), check_stride=True),
    lambda T: T.testing.assert_close(T.ones(2, 3).t(), T.ones(3, 2)),
    lambda T: T.testing.assert_close(T.tensor([0., 1.]), T.tensor([1., 1.])),
    lambda T: T.testing.assert_close(T.tensor([1., 2.], requires_grad=True), T.tensor([1., 2.])),
    lambda T: T.testing.assert_close(T.tensor([1 + 1j, 2]), T.tensor([1 + 1j, 2.5])),
    lambda T: T.testing.assert_close(T.tensor([True, False]), T.tensor([True, True])),
    lambda T: T.testing.assert_close(T.tensor([3, 250], dtype=T.uint8),
                                     T.tensor([3, 1], dtype=T.uint8)),
    lambda T: T.testing.assert_close(T.tensor([float("inf"), 1.]), T.tensor([1., 1.])),
    lambda T: T.testing.assert_close(T.tensor([[1., 5.], [3., 4.]]),
                                     T.tensor([[1., 2.], [3., 4.5]])),
    lambda T: T.testing.assert_close(np.float32(1.0), np.float32(1.5)),
    lambda T: T.testing.assert_close("a", "b"),
    lambda T: T.testing.assert_close(T.tensor([1., 2.]).to_sparse(),
                                     T.tensor([1., 3.]).to_sparse()),
    lambda T: T.testing.assert_close(T.tensor([1., 2.]).to_sparse(), T.tensor([1., 2.])),
    lambda T: T.testing.assert_close(T.tensor([1., 2.]).to_sparse(), T.tensor([1., 2.]),
                                     check_layout=False),
    lambda T: T.testing.assert_close([[T.tensor(1.)], (2, 3.5)], [[T.tensor(1.)], (2, 3.0)]),
]


@pytest.mark.parametrize("i", range(len(AC)))
def test_assert_close_matches_torch(i):
    _same(AC[i])


def test_assert_close_report_text():
    with pytest.raises(AssertionError) as e:
        ndgrad.testing.assert_close(ndgrad.tensor([1., 2., 3.]), ndgrad.tensor([1., 2.5, 3.]))
    assert str(e.value) == (
        "Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n"
        "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 "
        "allowed)")


def test_assert_allclose_deprecated():
    with pytest.warns(FutureWarning, match="assert_allclose"):
        ndgrad.testing.assert_allclose(ndgrad.tensor([1., 2.]), [1., 2.00001])
    for case in [lambda T: T.testing.assert_allclose(T.tensor([1., 2.]), [1., 2.1]),
                 lambda T: T.testing.assert_allclose([1., float("nan")], [1., float("nan")]),
                 lambda T: T.testing.assert_allclose(T.tensor([1., 2.]),
                                                     T.tensor([1, 2], dtype=T.float64))]:
        _same(case)


# ---------------------------------------------------------------- make_tensor

@pytest.mark.parametrize("name", ["float32", "float64", "float16", "int64", "int8", "uint8",
                                  "bool", "complex64"])
def test_make_tensor_ranges(name):
    dt = getattr(ndgrad, name)
    t = ndgrad.testing.make_tensor(400, dtype=dt, device="cpu")
    assert t.dtype is dt and t.shape == (400,)
    v = t.numpy()
    if name == "bool":
        assert set(np.unique(v)) == {False, True}
    elif name.startswith("complex"):
        assert (-9 <= v.real).all() and (v.real < 9).all() and (-9 <= v.imag).all()
    elif name.startswith("float"):
        assert (-9 <= v).all() and (v < 9).all() and v.min() < -5 and v.max() > 5
    elif name == "uint8":
        assert (0 <= v).all() and (v < 10).all()
    else:
        assert (-9 <= v).all() and (v < 10).all() and v.min() == -9 and v.max() == 9
    lo = ndgrad.testing.make_tensor(2, 3, dtype=dt, device="cpu", low=0, high=1,
                                    exclude_zero=True)
    assert lo.shape == (2, 3) and (lo.numpy() != 0).all()


def test_make_tensor_options():
    mt = ndgrad.testing.make_tensor
    t = mt((3, 4), dtype=ndgrad.float64, device="cpu", requires_grad=True, noncontiguous=True)
    assert t.shape == (3, 4) and not t.is_contiguous() and t.requires_grad
    assert mt(1, dtype=ndgrad.float32, device="cpu", noncontiguous=True).is_contiguous()
    assert (mt(50, dtype=ndgrad.int32, device="cpu", low=3.2, high=5).numpy() >= 4).all()


MT = [
    lambda T: T.testing.make_tensor(3, dtype=T.int64, device="cpu", requires_grad=True),
    lambda T: T.testing.make_tensor(3, dtype=T.float32, device="cpu", low=2, high=1),
    lambda T: T.testing.make_tensor(3, dtype=T.float32, device="cpu", low=float("nan")),
    lambda T: T.testing.make_tensor(3, dtype=T.uint8, device="cpu", low=300, high=400),
    lambda T: T.testing.make_tensor(3, dtype=T.bool, device="cpu", low=1, high=1),
    lambda T: T.testing.make_tensor(2, 2, dtype=T.float32, device="cpu", low=1, high=1).tolist(),
    lambda T: T.testing.make_tensor((2, 2), dtype=T.int16, device="cpu", low=4, high=5).tolist(),
    lambda T: T.testing.make_tensor([2], dtype=T.bool, device="cpu", low=1).tolist(),
]


@pytest.mark.parametrize("i", range(len(MT)))
def test_make_tensor_errors_match_torch(i):
    mine, theirs = _same(MT[i])
    if mine[0] == "OK":
        assert mine == theirs


# ---------------------------------------------------------------- FileCheck

FC_TEXT = "hello world\nfoo bar\nbaz"
FC = [
    lambda F: F().check("zzz").run(FC_TEXT),
    lambda F: F().check("hello").check_not("foo").check("baz").run(FC_TEXT),
    lambda F: F().check("hello").check_not("qux").check("baz").run(FC_TEXT),
    lambda F: F().check("hello").check_next("bar").run(FC_TEXT),
    lambda F: F().check("foo").check_same("bar").run(FC_TEXT),
    lambda F: F().check_count("o", 2, exactly=True).run(FC_TEXT),
    lambda F: F().check_count("o", 4, exactly=True).run(FC_TEXT),
    lambda F: F().check_count("o", 3).check("baz").run(FC_TEXT),
    lambda F: F().check_dag("baz").check_dag("foo").run(FC_TEXT),
    lambda F: F().check_regex("w.r").run(FC_TEXT),
    lambda F: F().run(FC_TEXT),
]


@pytest.mark.parametrize("i", range(len(FC)))
def test_filecheck_matches_torch(i):
    _same(lambda T: FC[i](T.testing.FileCheck))


# ---------------------------------------------------------------- random

def test_rng_state_round_trip():
    ndgrad.manual_seed(5)
    ndgrad.randn(7)
    state = ndgrad.get_rng_state()
    assert state.dtype is ndgrad.uint8 and state.dim() == 1
    a = (ndgrad.rand(5), ndgrad.randn(3), ndgrad.randint(0, 100, (4,)))
    ndgrad.random.set_rng_state(state)
    b = (ndgrad.rand(5), ndgrad.randn(3), ndgrad.randint(0, 100, (4,)))
    assert all(bool((x == y).all()) for x, y in zip(a, b))
    assert ndgrad.initial_seed() == 5 == ndgrad.random.initial_seed()
    assert bool((ndgrad.get_rng_state() == ndgrad.random.get_rng_state()).all())
    g = ndgrad.Generator().manual_seed(9)
    g2 = ndgrad.Generator().set_state(g.get_state())
    assert g2.initial_seed() == 9
    assert bool((ndgrad.rand(4, generator=g) == ndgrad.rand(4, generator=g2)).all())


def test_torch_level_names_are_torch_random():
    for name in ("manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state"):
        assert getattr(ndgrad, name) is getattr(ndgrad.random, name)
    assert ndgrad.random.default_generator is ndgrad.default_generator
    s = ndgrad.seed()
    assert ndgrad.initial_seed() == s
    assert isinstance(ndgrad.random.manual_seed(3), ndgrad.Generator)


RNG = [
    lambda T: T.set_rng_state(T.zeros(5)),
    lambda T: T.set_rng_state([1, 2]),
    lambda T: T.manual_seed(2 ** 64),
    lambda T: T.manual_seed(-2 ** 63 - 1),
    lambda T: T.manual_seed(-1).initial_seed(),
    lambda T: T.manual_seed(2 ** 64 - 1).initial_seed(),
    lambda T: T.manual_seed("3").initial_seed(),
    lambda T: T.Generator().set_state(T.zeros(3)),
    lambda T: T.random.fork_rng(device_type="xyz").__enter__(),
    lambda T: T.random.fork_rng(devices=[0]).__enter__(),
    lambda T: T.random.thread_safe_generator(),
    lambda T: T.get_rng_state().requires_grad,
]


@pytest.mark.parametrize("i", range(len(RNG)))
def test_rng_errors_match_torch(i):
    oracle = _oracle()
    mine, theirs = _outcome(lambda: RNG[i](ndgrad)), _outcome(lambda: RNG[i](oracle))
    assert mine[0] == theirs[0]
    if i == 8:       # the device-type list in the message is each library's own
        assert mine[1].endswith("device type at start of device string: xyz")
    elif mine[0] != "OK":
        assert mine[1] == theirs[1]
    else:
        assert mine == theirs


def test_set_rng_state_wrong_size():
    with pytest.raises(RuntimeError, match="but found the input RNG state size to be 5"):
        ndgrad.set_rng_state(ndgrad.zeros(5, dtype=ndgrad.uint8))


def test_fork_rng_restores_state():
    ndgrad.manual_seed(11)
    before = ndgrad.get_rng_state()
    with ndgrad.random.fork_rng():
        ndgrad.manual_seed(0)
        ndgrad.randn(10)
    assert bool((ndgrad.get_rng_state() == before).all())
    try:
        with ndgrad.random.fork_rng(devices=[]):
            ndgrad.rand(3)
            raise KeyError("x")
    except KeyError:
        pass
    assert bool((ndgrad.get_rng_state() == before).all())
    with ndgrad.random.fork_rng(enabled=False):
        ndgrad.rand(3)
    assert not bool((ndgrad.get_rng_state() == before).all())
    with ndgrad.random.fork_rng(device_type="meta"):
        pass


# ---------------------------------------------------------------- torch.cuda without CUDA

CUDA = [
    lambda T: T.cuda.is_available(), lambda T: T.cuda.device_count(),
    lambda T: T.cuda.is_initialized(), lambda T: T.cuda.init(),
    lambda T: T.cuda.current_device(), lambda T: T.cuda.get_device_name(),
    lambda T: T.cuda.get_device_name(0), lambda T: T.cuda.get_device_properties(0),
    lambda T: T.cuda.get_device_capability(), lambda T: T.cuda.set_device(-1),
    lambda T: T.cuda.set_device("cpu"), lambda T: T.cuda.set_device(None),
    lambda T: T.cuda.synchronize(), lambda T: T.cuda.manual_seed(1),
    lambda T: T.cuda.manual_seed_all(1), lambda T: T.cuda.manual_seed("a"),
    lambda T: T.cuda.seed(), lambda T: T.cuda.seed_all(), lambda T: T.cuda.initial_seed(),
    lambda T: T.cuda.memory_allocated(), lambda T: T.cuda.max_memory_allocated(),
    lambda T: T.cuda.memory_reserved(), lambda T: T.cuda.max_memory_reserved(),
    lambda T: T.cuda.memory_cached(), lambda T: T.cuda.max_memory_cached(),
    lambda T: T.cuda.memory_allocated("cpu"), lambda T: T.cuda.empty_cache(),
    lambda T: T.cuda.memory_summary(), lambda T: dict(T.cuda.memory_stats()),
    lambda T: T.cuda.memory_stats_as_nested_dict(), lambda T: T.cuda.mem_get_info(),
    lambda T: T.cuda.Stream(), lambda T: T.cuda.Event(), lambda T: T.cuda.Event(True),
    lambda T: T.cuda.current_stream(), lambda T: T.cuda.default_stream(),
    lambda T: T.cuda.stream(None).__enter__(), lambda T: T.cuda.device(0).__enter__(),
    lambda T: T.cuda.device("cuda:0").__enter__(), lambda T: T.cuda.device(-1).__enter__(),
    lambda T: T.cuda.device("cpu").__enter__(),
    lambda T: T.cuda.device_of(T.ones(1)).__enter__(), lambda T: T.cuda.get_rng_state(),
    lambda T: T.cuda.get_rng_state_all(),
    lambda T: T.cuda.set_rng_state(T.zeros(5, dtype=T.uint8)),
    lambda T: T.cuda.set_rng_state_all([]), lambda T: T.cuda.FloatTensor(2),
    lambda T: T.cuda.LongTensor([1]), lambda T: isinstance(T.ones(1), T.cuda.FloatTensor),
    lambda T: T.cuda.is_bf16_supported(), lambda T: T.cuda.is_tf32_supported(),
    lambda T: T.cuda.get_arch_list(), lambda T: T.cuda.get_gencode_flags(),
    lambda T: T.cuda.ipc_collect(), lambda T: T.cuda.utilization(),
    lambda T: T.cuda.temperature(), lambda T: T.cuda.list_gpu_processes(),
    lambda T: T.cuda.current_blas_handle(), lambda T: T.cuda.set_stream(None),
    lambda T: T.cuda.get_sync_debug_mode(), lambda T: T.cuda.caching_allocator_alloc(10),
    lambda T: T.cuda.set_per_process_memory_fraction(0.5),
    lambda T: T.cuda.can_device_access_peer(0, 1), lambda T: T.cuda.has_half,
    lambda T: T.cuda.has_magma, lambda T: T.cuda.default_generators,
    lambda T: T.cuda.is_current_stream_capturing(),
    lambda T: T.cuda.StreamContext(None).__enter__(),
    lambda T: T.ones(1, device="cuda"), lambda T: T.ones(1).cuda(),
    lambda T: T.ones(1).type(T.cuda.FloatTensor),
    lambda T: T.ones(1).type("torch.cuda.FloatTensor"), lambda T: T.nn.Linear(2, 2).cuda(),
    lambda T: T.ones(1).is_cuda, lambda T: T.ones(1).get_device(),
    lambda T: T.cuda.amp.autocast().__enter__() is not None,
    lambda T: T.cuda.FloatStorage(2), lambda T: isinstance(T.ones(1), T.cuda.FloatStorage),
    lambda T: (T.cuda.cudaStatus.SUCCESS, T.cuda.cudaStatus.ERROR_NOT_READY),
    lambda T: T.cuda.CUDAGraph(), lambda T: T.cuda.MemPool(), lambda T: T.cuda.graph(None),
    lambda T: T.cuda.graph_pool_handle(), lambda T: T.cuda.make_graphed_callables(None, ()),
    lambda T: T.cuda.use_mem_pool(None).__enter__(),
    lambda T: T.cuda.caching_allocator_enable(True),
    lambda T: T.cuda.host_memory_stats_as_nested_dict(), lambda T: T.cuda.cudart(),
    lambda T: T.cuda.get_stream_from_external(0), lambda T: dict(T.cuda.host_memory_stats()),
]


def test_tensor_cuda_with_an_index_as_a_fresh_cpu_build():
    """`t.cuda(0)` in a fresh PyTorch CPU build (its answer changes once CUDA's lazy init has
    been tried in the process, so the oracle runs in its own process)."""
    code = ("import {m} as T\ntry:\n    T.ones(1).cuda(0)\nexcept Exception as e:\n"
            "    print(type(e).__name__, e)\n")
    src = os.path.dirname(os.path.dirname(os.path.abspath(ndgrad.__file__)))
    outs = []
    for m in ("ndgrad", "torch") if torch is not None else ("ndgrad",):
        outs.append(subprocess.run([sys.executable, "-c", code.format(m=m)], capture_output=True,
                                   text=True, env=dict(os.environ, PYTHONPATH=src)).stdout)
    assert outs[0] == "RuntimeError Cannot access accelerator device when none is available.\n"
    if len(outs) == 2:
        assert outs[0] == outs[1]


@pytest.mark.parametrize("i", range(len(CUDA)))
def test_cuda_matches_cpu_build(i):
    if _oracle().cuda.is_available() or ndgrad.cuda.is_available():
        pytest.skip("a GPU is visible; these mirror PyTorch's CPU build")
    mine, theirs = _same(CUDA[i])
    if mine[0] == "OK":
        assert mine == theirs


def test_cuda_is_a_module_and_warns_as_torch():
    import types
    assert isinstance(ndgrad.cuda, types.ModuleType)
    with pytest.warns(FutureWarning, match="renamed to `torch.cuda.memory_reserved`"):
        ndgrad.cuda.memory_cached()
    with pytest.warns(FutureWarning, match=r"torch.cuda.amp.autocast\(args...\)` is deprecated"):
        ndgrad.cuda.amp.autocast()
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        ndgrad.cuda.set_device(0)
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        ndgrad.cuda.reset_peak_memory_stats()


# ---------------------------------------------------------------- torch.accelerator

ACC = [
    lambda T: T.accelerator.is_available(), lambda T: T.accelerator.current_accelerator(),
    lambda T: T.accelerator.current_accelerator(True), lambda T: T.accelerator.device_count(),
    lambda T: T.accelerator.current_device_index(), lambda T: T.accelerator.current_device_idx(),
    lambda T: T.accelerator.set_device_index(0), lambda T: T.accelerator.set_device_idx(0),
    lambda T: T.accelerator.synchronize(), lambda T: T.accelerator.synchronize(0),
    lambda T: T.accelerator.current_stream(), lambda T: T.accelerator.memory_allocated(),
    lambda T: T.accelerator.max_memory_allocated(), lambda T: T.accelerator.memory_reserved(),
    lambda T: T.accelerator.max_memory_reserved(), lambda T: T.accelerator.memory_stats(),
    lambda T: T.accelerator.empty_cache(), lambda T: T.accelerator.reset_peak_memory_stats(),
    lambda T: T.accelerator.reset_accumulated_memory_stats(),
    lambda T: T.accelerator.get_memory_info(), lambda T: T.accelerator.device_index(0).__enter__(),
    lambda T: T.accelerator.device_index(None).__enter__(),
]


@pytest.mark.parametrize("i", range(len(ACC)))
def test_accelerator_matches_torch(i):
    if _oracle().accelerator.is_available():
        pytest.skip("the oracle has an accelerator")
    mine, theirs = _same(ACC[i])
    if mine[0] == "OK":
        assert mine == theirs


# ---------------------------------------------------------------- torch.backends

BACKENDS = [
    lambda T: (T.backends.cudnn.enabled, T.backends.cudnn.benchmark,
               T.backends.cudnn.deterministic, T.backends.cudnn.allow_tf32,
               T.backends.cudnn.is_available(), T.backends.cudnn.version()),
    lambda T: (T.backends.cuda.matmul.allow_tf32,
               T.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
               T.backends.cuda.is_built(), T.backends.cuda.flash_sdp_enabled(),
               T.backends.cuda.math_sdp_enabled(), T.backends.cuda.mem_efficient_sdp_enabled()),
    lambda T: (T.backends.mps.is_available(), T.backends.mps.is_built(),
               T.backends.mkldnn.enabled),
    lambda T: (T.backends.opt_einsum.is_available(), T.backends.opt_einsum.enabled,
               T.backends.opt_einsum.strategy),
    lambda T: T.backends.cpu.get_cpu_capability(),
    lambda T: T.backends.mha.get_fastpath_enabled(),
]


@pytest.mark.parametrize("i", range(len(BACKENDS)))
def test_backends_match_torch(i):
    mine, theirs = _same(BACKENDS[i])
    assert mine == theirs


def test_tf32_flag_is_the_matmul_precision():
    for lib in (ndgrad,) + ((torch,) if torch is not None else ()):
        try:
            lib.set_float32_matmul_precision("high")
            assert lib.backends.cuda.matmul.allow_tf32
            lib.set_float32_matmul_precision("highest")
            assert not lib.backends.cuda.matmul.allow_tf32
        finally:
            lib.set_float32_matmul_precision("highest")
    try:
        ndgrad.backends.cuda.matmul.allow_tf32 = True
        assert ndgrad.get_float32_matmul_precision() == "high"
    finally:
        ndgrad.set_float32_matmul_precision("highest")


def test_backend_flags_contexts():
    cudnn = ndgrad.backends.cudnn
    cudnn.benchmark = True
    try:
        with cudnn.flags(enabled=False, deterministic=True):
            assert (cudnn.enabled, cudnn.deterministic, cudnn.benchmark) == (False, True, False)
        assert (cudnn.enabled, cudnn.deterministic, cudnn.benchmark) == (True, False, True)
        assert cudnn.set_flags(None, False) == (True, True, 10, False, True)
    finally:
        cudnn.benchmark = False
    with pytest.raises(AttributeError, match="Unknown attribute"):
        ndgrad.backends.cuda.matmul.allow_tf33 = True
    ndgrad.backends.cuda.enable_flash_sdp(False)
    assert not ndgrad.backends.cuda.flash_sdp_enabled()
    ndgrad.backends.cuda.enable_flash_sdp(True)


def test_alias_imports_resolve():
    """Under the torch alias, the new namespaces import as torch's submodules."""
    src = os.path.dirname(os.path.dirname(os.path.abspath(ndgrad.__file__)))
    code = ("import ndgrad; ndgrad.alias_torch()\n"
            "import torch.testing, torch.random, torch.accelerator, torch.cuda, torch.cuda.amp\n"
            "import torch.backends.cudnn as cudnn\n"
            "from torch.testing import assert_close, make_tensor, FileCheck\n"
            "from torch.autograd.gradcheck import gradcheck\n"
            "from torch.nn.parallel import scatter, gather, replicate, parallel_apply\n"
            "from torch.utils.checkpoint import create_selective_checkpoint_contexts\n"
            "assert torch.testing is ndgrad.testing and cudnn is ndgrad.backends.cudnn\n"
            "assert torch.cuda is ndgrad.cuda and torch.random is ndgrad.random\n"
            "print('ok')\n")
    env = dict(os.environ, PYTHONPATH=src)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


# ---------------------------------------------------------------- amp.custom_fwd / custom_bwd

def _scaled_function(T, cast_inputs=None):
    class Square(T.autograd.Function):
        @staticmethod
        @T.amp.custom_fwd(device_type="cpu", cast_inputs=cast_inputs)
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @T.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g
    return Square


@pytest.mark.parametrize("cast", [None, "float32"])
def test_custom_fwd_bwd(cast):
    def run(T):
        x = T.tensor([1., -2., 3.], dtype=T.float64, requires_grad=True)
        f = _scaled_function(T, None if cast is None else getattr(T, cast))
        y = f.apply(x)
        y.sum().backward()
        return y.detach().numpy().tolist(), x.grad.numpy().tolist(), str(y.dtype)
    assert run(ndgrad) == run(_oracle())
    x = ndgrad.tensor([0.5, 1.5], dtype=ndgrad.float64, requires_grad=True)
    assert ndgrad.autograd.gradcheck(_scaled_function(ndgrad).apply, (x,))


def test_custom_fwd_errors_and_cuda_spelling():
    _same(lambda T: T.amp.custom_fwd(lambda ctx, x: x, device_type=3))
    _same(lambda T: T.amp.custom_bwd(device_type=None))
    with pytest.warns(FutureWarning, match="torch.cuda.amp.custom_fwd"):
        deco = ndgrad.cuda.amp.custom_fwd(cast_inputs=ndgrad.float32)
    assert callable(deco)


# ---------------------------------------------------------------- autograd names

def test_autograd_names():
    A = ndgrad.autograd
    assert A.gradcheck is ndgrad.autograd.gradcheck and callable(A.gradcheck)
    assert set(_oracle().autograd.__all__) - {"NestedIOFunction"} <= set(A.__all__)
    _same(lambda T: T.autograd.variable(1))
    from ndgrad.autograd.grad_mode import _is_multithreading_enabled
    A.set_multithreading_enabled(False)
    assert not _is_multithreading_enabled()
    A.set_multithreading_enabled(True)
    with A.set_multithreading_enabled(False):
        assert not _is_multithreading_enabled()
    assert _is_multithreading_enabled()

    # as PyTorch's: constructing the decorator switches the flag already (and it stays off)
    @A.set_multithreading_enabled(False)
    def f():
        return _is_multithreading_enabled()
    assert (_is_multithreading_enabled(), f(), _is_multithreading_enabled()) == (False,) * 3
    A.set_multithreading_enabled(True)
    with A.enforce_grad_layout_policy(False):
        pass
    with A.detect_anomaly():
        assert ndgrad.is_anomaly_enabled()
    A.set_detect_anomaly(False)


# ---------------------------------------------------------------- utils.checkpoint helpers

CKPT = [
    lambda T: T.utils.checkpoint.detach_variable([T.ones(1)]),
    lambda T: [(t.requires_grad, t.grad_fn is None) if isinstance(t, T.Tensor) else t
               for t in T.utils.checkpoint.detach_variable(
                   (T.ones(2, requires_grad=True) * 2, 3, T.ones(1)))],
    lambda T: T.utils.checkpoint.get_device_states(T.ones(1), [T.zeros(2)], 5),
    lambda T: T.utils.checkpoint.set_device_states([], []),
    lambda T: T.utils.checkpoint.create_selective_checkpoint_contexts(3),
    lambda T: T.utils.checkpoint.create_selective_checkpoint_contexts([1]),
    lambda T: [p.name for p in T.utils.checkpoint.CheckpointPolicy],
    lambda T: T.utils.checkpoint.SelectiveCheckpointContext(is_recompute=True).is_recompute,
    lambda T: T.utils.checkpoint.checkpoint(lambda x: x, T.ones(1), use_reentrant=True,
                                            context_fn=lambda: (None, None)),
    lambda T: T.utils.checkpoint.DefaultDeviceType.get_device_type(),
    lambda T: issubclass(T.utils.checkpoint.CheckpointError, RuntimeError),
    lambda T: [type(c).__name__ for c in T.utils.checkpoint.noop_context_fn()],
]


@pytest.mark.parametrize("i", range(len(CKPT)))
def test_checkpoint_helpers_match_torch(i):
    import importlib
    importlib.import_module(_oracle().__name__ + ".utils.checkpoint")
    import ndgrad.utils.checkpoint  # noqa: F401
    mine, theirs = _same(CKPT[i])
    if mine[0] == "OK":
        assert mine == theirs


def test_check_backward_validity_warns():
    ck = ndgrad.utils.checkpoint
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        ck.check_backward_validity((ndgrad.ones(1), 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ck.check_backward_validity((ndgrad.ones(1, requires_grad=True),))


def test_selective_checkpoint_gradients():
    ck = ndgrad.utils.checkpoint

    def policy(ctx, op, *args, **kwargs):
        return ck.CheckpointPolicy.PREFER_RECOMPUTE

    def fn(x, w):
        return (ndgrad.sigmoid(x @ w) * w).sum()

    rng = np.random.default_rng(0)
    x = ndgrad.tensor(rng.standard_normal((3, 3)), requires_grad=True)
    w = ndgrad.tensor(rng.standard_normal((3, 3)), requires_grad=True)
    ck.checkpoint(fn, x, w, use_reentrant=False,
                  context_fn=lambda: ck.create_selective_checkpoint_contexts(policy)).backward()
    gx, gw = x.grad.clone(), w.grad.clone()
    x.grad = w.grad = None
    fn(x, w).backward()
    assert np.allclose(gx.numpy(), x.grad.numpy()) and np.allclose(gw.numpy(), w.grad.numpy())
    with ck.set_checkpoint_early_stop(False), ck.set_checkpoint_debug_enabled(True):
        assert ck._enable_checkpoint_early_stop is False and ck._checkpoint_debug_enabled
    assert ck._enable_checkpoint_early_stop is None and ck._checkpoint_debug_enabled is None


# ---------------------------------------------------------------- nn.parallel without GPUs

PAR = [
    lambda T: T.nn.parallel.scatter(T.arange(6.).reshape(3, 2), ["cpu"]),
    lambda T: T.nn.parallel.scatter((1, "a"), [0, 1]),
    lambda T: T.nn.parallel.scatter({"a": 1}, [0, 1]),
    lambda T: T.nn.parallel.scatter([1, [2]], [0, 1]),
    lambda T: T.nn.parallel.scatter(3, []),
    lambda T: T.nn.parallel.gather([T.ones(2), T.ones(2)], "cpu"),
    lambda T: T.nn.parallel.gather([T.ones(2), T.ones(2)], -1),
    lambda T: T.nn.parallel.gather([1, 2], "cpu"),
    lambda T: T.nn.parallel.gather([{"a": T.ones(1)}, {"a": T.ones(1)}], "cpu"),
    lambda T: T.nn.parallel.gather([None, None], "cpu"),
    lambda T: T.nn.parallel.gather([(None,), (None,)], "cpu"),
    lambda T: T.nn.parallel.gather([{"a": None}, {}], "cpu"),
    lambda T: T.nn.parallel.replicate(T.nn.Linear(2, 2), ["cpu"]),
    lambda T: T.nn.parallel.replicate(T.nn.Linear(2, 2), []),
    lambda T: T.nn.parallel.parallel_apply([T.nn.Linear(2, 2)], [(T.ones(2),)]),
    lambda T: T.nn.parallel.parallel_apply([T.nn.Linear(2, 2)], [T.ones(2)], devices=["cpu"]),
    lambda T: T.nn.parallel.parallel_apply([T.nn.Linear(2, 2)] * 2, [T.ones(2)]),
    lambda T: T.nn.parallel.parallel_apply([], []),
    lambda T: T.nn.parallel.parallel_apply([T.nn.Linear(2, 2)], [T.ones(2)], [{}, {}]),
    lambda T: T.nn.parallel.parallel_apply([T.nn.Linear(2, 2)], [T.ones(2)], None, [0, 1]),
]


@pytest.mark.parametrize("i", range(len(PAR)))
def test_nn_parallel_matches_torch_without_gpu(i):
    if _oracle().cuda.is_available() or ndgrad.cuda.is_available():
        pytest.skip("a GPU is visible")
    mine, theirs = _same(PAR[i])
    if mine[0] == "OK":
        assert mine == theirs


def test_graph_exec_group():
    ck = ndgrad.utils.checkpoint
    w = ndgrad.tensor([0.5, -1.0, 2.0], dtype=ndgrad.float64, requires_grad=True)
    calls = []

    def fn(x):
        calls.append(1)
        return (x.sin() * x).sum()

    with ck.GraphExecGroup() as g:
        assert ck.GraphExecGroup._get_current_group() is g
        with pytest.raises(RuntimeError, match="GraphExecGroup contexts cannot be nested"):
            ck.GraphExecGroup().__enter__()
        out = ck.checkpoint(fn, w, use_reentrant=False)
        out.backward(retain_graph=True)
        first = w.grad.clone()
        out.backward()
    assert ck.GraphExecGroup._get_current_group() is None
    assert len(calls) == 2          # the forward, then one recomputation for both backwards
    expected = (w.detach().sin() + w.detach() * w.detach().cos()).numpy()
    assert np.allclose(first.numpy(), expected) and np.allclose(w.grad.numpy(), 2 * expected)
