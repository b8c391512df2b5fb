"""torch.backends: the flags seeding and benchmarking boilerplate sets. NumPy has no cuDNN, MPS,
MKL-DNN, NNPACK or TF32, so those backends report themselves unavailable and their flags are
stored (the defaults are PyTorch's). Each backend is a module, so `import torch.backends.cudnn`
works under the torch alias too.

    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    with torch.backends.cudnn.flags(enabled=False): ...
"""
import contextlib
import sys
import types

__all__ = ["cpu", "cuda", "cudnn", "mha", "mkl", "mkldnn", "mps", "nnpack", "openmp",
           "opt_einsum"]


def _module(name, doc, **attrs):
    mod = types.ModuleType(f"{__name__}.{name}", doc)
    mod.__dict__.update(attrs)
    sys.modules[mod.__name__] = mod
    return mod


def _false(*args, **kwargs):
    return False


def _flag_setter(mod, names, defaults):
    """set_flags(...) returning the previous values, and the flags(...) context (PyTorch's
    torch.backends.<x>.set_flags / flags: a flag not passed to flags() takes its default)."""

    def set_flags(*values):
        old = tuple(getattr(mod, n) for n in names)
        for n, v in zip(names, values):
            if v is not None:
                setattr(mod, n, v)
        return old

    @contextlib.contextmanager
    def flags(*args, **kwargs):
        values = list(args) + list(defaults[len(args):])
        for k, v in kwargs.items():
            values[names.index(k)] = v
        old = set_flags(*values)
        try:
            yield
        finally:
            set_flags(*old)

    mod.set_flags, mod.flags = set_flags, flags


# ---------------------------------------------------------------- cuDNN, MKL-DNN, NNPACK

cudnn = _module("cudnn", "cuDNN: not available (ndgrad computes on NumPy); flags are stored.",
                enabled=True, benchmark=False, deterministic=False, allow_tf32=True,
                benchmark_limit=10, is_available=_false, is_acceptable=_false,
                version=lambda: None)
_flag_setter(cudnn, ["enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32"],
             [False, False, 10, False, True])

mkldnn = _module("mkldnn", "oneDNN: not used by ndgrad; flags are stored.", enabled=True,
                 deterministic=False, is_available=_false)
_flag_setter(mkldnn, ["enabled", "deterministic"], [False, False])


class _Verbose:
    """`with torch.backends.mkldnn.verbose(level):` (no oneDNN to make verbose here)."""

    def __init__(self, enable):
        self.enable = enable

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


mkldnn.verbose, mkldnn.VERBOSE_OFF, mkldnn.VERBOSE_ON = _Verbose, 0, 1

nnpack = _module("nnpack", "NNPACK: not available.", enabled=True, is_available=_false)
_flag_setter(nnpack, ["enabled"], [False])

mkl = _module("mkl", "Intel MKL: ndgrad does not link it (NumPy's BLAS does the math).",
              is_available=_false, verbose=_Verbose, VERBOSE_OFF=0, VERBOSE_ON=1)
openmp = _module("openmp", "OpenMP: ndgrad's kernels are NumPy's; none of ours uses OpenMP.",
                 is_available=_false)
mps = _module("mps", "Apple Metal: not available.", is_available=_false, is_built=_false,
              is_macos13_or_newer=_false, is_macos_or_newer=_false)


# ---------------------------------------------------------------- torch.backends.cuda

class _cuBLASModule:
    """torch.backends.cuda.matmul: the TF32 / reduced-precision flags (stored)."""

    def __init__(self):
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True
        self.allow_fp16_accumulation = False

    @property
    def allow_tf32(self):
        """As PyTorch's: the same switch as set_float32_matmul_precision ("highest" = off)."""
        import ndgrad
        return ndgrad.get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value):
        import ndgrad
        ndgrad.set_float32_matmul_precision("high" if value else "highest")

    def __setattr__(self, name, value):
        if name not in ("allow_tf32", "allow_fp16_reduced_precision_reduction",
                        "allow_bf16_reduced_precision_reduction", "allow_fp16_accumulation",
                        "fp32_precision"):
            raise AttributeError("Unknown attribute " + name)
        object.__setattr__(self, name, value)


def _sdp(backend_name):
    def enabled():
        from .nn.attention import _enabled, SDPBackend
        return _enabled[getattr(SDPBackend, backend_name)]

    def enable(flag):
        from .nn.attention import _enabled, SDPBackend
        _enabled[getattr(SDPBackend, backend_name)] = bool(flag)
    return enabled, enable


flash_sdp_enabled, enable_flash_sdp = _sdp("FLASH_ATTENTION")
mem_efficient_sdp_enabled, enable_mem_efficient_sdp = _sdp("EFFICIENT_ATTENTION")
math_sdp_enabled, enable_math_sdp = _sdp("MATH")
cudnn_sdp_enabled, enable_cudnn_sdp = _sdp("CUDNN_ATTENTION")

cuda = _module("cuda", "CUDA: not built (ndgrad is not compiled with CUDA); flags are stored.",
               is_built=_false, matmul=_cuBLASModule(), flash_sdp_enabled=flash_sdp_enabled,
               enable_flash_sdp=enable_flash_sdp,
               mem_efficient_sdp_enabled=mem_efficient_sdp_enabled,
               enable_mem_efficient_sdp=enable_mem_efficient_sdp,
               math_sdp_enabled=math_sdp_enabled, enable_math_sdp=enable_math_sdp,
               cudnn_sdp_enabled=cudnn_sdp_enabled, enable_cudnn_sdp=enable_cudnn_sdp,
               is_flash_attention_available=_false)


# ---------------------------------------------------------------- CPU, opt_einsum, MHA

def get_cpu_capability():
    """The widest SIMD level NumPy's kernels dispatch to: "AVX512", "AVX2" or "DEFAULT" (x86),
    "SVE256" or "DEFAULT" (ARM), as PyTorch's names."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as feats
    except ImportError:       # NumPy < 2
        from numpy.core._multiarray_umath import __cpu_features__ as feats
    if all(feats.get(f) for f in ("AVX512F", "AVX512BW", "AVX512VL", "AVX512DQ")):
        return "AVX512"
    if feats.get("AVX2") and feats.get("FMA3"):
        return "AVX2"
    return "DEFAULT"


cpu = _module("cpu", "The CPU: its SIMD capability.", get_cpu_capability=get_cpu_capability)


def _opt_einsum_available():
    import importlib.util
    return importlib.util.find_spec("opt_einsum") is not None


opt_einsum = _module("opt_einsum", "opt_einsum contraction-order flags (ndgrad's einsum uses "
                     "NumPy's optimizer; the flags are stored).",
                     is_available=_opt_einsum_available, get_opt_einsum=lambda: None)
opt_einsum.enabled = _opt_einsum_available()
opt_einsum.strategy = "auto" if opt_einsum.enabled else None
_flag_setter(opt_einsum, ["enabled", "strategy"], [None, None])

_fastpath = [True]


def get_fastpath_enabled():
    return _fastpath[0]


def set_fastpath_enabled(value):
    _fastpath[0] = bool(value)


mha = _module("mha", "nn.MultiheadAttention's fast path flag.",
              get_fastpath_enabled=get_fastpath_enabled,
              set_fastpath_enabled=set_fastpath_enabled)
