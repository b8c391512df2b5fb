"""Automatic mixed precision: `torch.amp` as PyTorch has it.

`autocast(device_type, dtype)` runs the ops of PyTorch's autocast lists in the lower precision
(float16 on "cuda", bfloat16 on "cpu" by default), those of its float32 lists in float32, the
"promote" ops in the widest floating type of their inputs, and every other op as it is: the
lists are PyTorch's own (aten/src/ATen/autocast_mode.h and .cpp, `_POLICIES` below), one table
per device type. As in PyTorch the state is thread-local, float64 tensors are never cast, a
listed op runs with autocast off inside (its inner ops are not cast again), casts of float32
leaf weights are cached for the region, and backward passes are not autocast.
`GradScaler` is PyTorch's (scale the loss, unscale the gradients, skip steps whose gradients hold
inf/NaN, grow or back off the scale); on a device without CUDA a "cuda" scaler, and a "cuda"
autocast, disable themselves with PyTorch's warnings, so the usual boilerplate runs unchanged.
"""
import functools
import math
import threading
import warnings
import weakref

from ._backend import cuda_available

__all__ = ["autocast", "GradScaler", "is_autocast_available", "custom_fwd", "custom_bwd"]


def is_autocast_available(device_type):
    return device_type in ("cpu", "cuda")


# ---------------------------------------------------------------- PyTorch's op lists
# (PyTorch's op names; ndgrad's own op names map onto them in _NAMES)
_CUDA_LOW = """_convolution conv1d conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d
conv_transpose3d convolution prelu addmm addmv addr matmul einsum mm mv linalg_vecdot linear
addbmm baddbmm bmm chain_matmul linalg_multi_dot _thnn_fused_lstm_cell _thnn_fused_gru_cell
lstm_cell gru_cell rnn_tanh_cell rnn_relu_cell _scaled_dot_product_flash_attention
scaled_dot_product_attention""".split()
_CUDA_FP32 = """acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan pow
softplus layer_norm native_layer_norm rms_norm group_norm frobenius_norm nuclear_norm
cosine_similarity poisson_nll_loss cosine_embedding_loss nll_loss nll_loss2d
hinge_embedding_loss kl_div l1_loss smooth_l1_loss huber_loss mse_loss margin_ranking_loss
multilabel_margin_loss soft_margin_loss triplet_margin_loss multi_margin_loss
binary_cross_entropy_with_logits dist pdist cdist renorm logsumexp upsample_nearest1d
_upsample_nearest_exact1d upsample_nearest2d _upsample_nearest_exact2d upsample_nearest3d
_upsample_nearest_exact3d upsample_linear1d upsample_bilinear2d _upsample_bilinear2d_aa
upsample_trilinear3d upsample_bicubic2d _upsample_bicubic2d_aa""".split()
_FP32_SET_OPT_DTYPE = """prod softmax log_softmax cumprod cumsum linalg_vector_norm
linalg_matrix_norm sum""".split()
_CUDA_PROMOTE = """addcdiv addcmul atan2 bilinear cross dot vdot grid_sampler index_put tensordot
scatter_add""".split()
_CPU_LOW = """conv1d conv2d conv3d bmm mm linalg_vecdot baddbmm addmm _addmm_activation addbmm
linear _convolution matmul conv_tbc mkldnn_rnn_layer conv_transpose1d conv_transpose2d
conv_transpose3d prelu scaled_dot_product_attention _native_multi_head_attention""".split()
_CPU_FP32 = """avg_pool3d binary_cross_entropy grid_sampler polar prod quantile nanquantile stft
cdist grid_sampler_2d _grid_sampler_2d_cpu_fallback grid_sampler_3d trace view_as_complex
cholesky cholesky_inverse cholesky_solve inverse lu_solve orgqr ormqr pinverse max_pool3d
max_unpool2d max_unpool3d adaptive_avg_pool3d reflection_pad1d reflection_pad2d
replication_pad1d replication_pad2d replication_pad3d mse_loss cosine_embedding_loss nll_loss
nll_loss2d hinge_embedding_loss poisson_nll_loss smooth_l1_loss cross_entropy_loss l1_loss
huber_loss margin_ranking_loss soft_margin_loss triplet_margin_loss multi_margin_loss ctc_loss
kl_div multilabel_margin_loss binary_cross_entropy_with_logits fft_fft fft_ifft fft_fft2
fft_ifft2 fft_fftn fft_ifftn fft_rfft fft_irfft fft_rfft2 fft_irfft2 fft_rfftn fft_irfftn
fft_hfft fft_ihfft linalg_cond linalg_matrix_rank linalg_solve linalg_cholesky linalg_svdvals
linalg_eigvals linalg_eigvalsh linalg_inv linalg_householder_product linalg_tensorinv
linalg_tensorsolve fake_quantize_per_tensor_affine geqrf _lu_with_info qr svd
triangular_solve fractional_max_pool2d fractional_max_pool3d adaptive_max_pool3d
multilabel_margin_loss_forward linalg_qr linalg_cholesky_ex linalg_svd linalg_eig linalg_eigh
linalg_lstsq linalg_inv_ex""".split()
_CPU_PROMOTE = "stack cat index_copy".split()
LOW, FP32, SET_OPT_DTYPE, PROMOTE, BANNED = "lower_precision_fp", "fp32", "fp32_set_opt_dtype", \
    "promote", "banned"


def _table(*groups):
    t = {}
    for names, policy in groups:
        t.update((n, policy) for n in names)
    return t


_POLICIES = {
    "cuda": _table((_CUDA_LOW, LOW), (_CUDA_FP32, FP32), (_FP32_SET_OPT_DTYPE, SET_OPT_DTYPE),
                   (_CUDA_PROMOTE, PROMOTE), (["binary_cross_entropy"], BANNED)),
    # (+ einsum, tensordot, chain_matmul, linalg.multi_dot: composite in PyTorch, whose inner
    # bmm/mm are autocast on the CPU; ndgrad's are single functions)
    "cpu": _table((_CPU_LOW + ["einsum", "tensordot", "chain_matmul", "linalg_multi_dot"], LOW),
                  (_CPU_FP32, FP32), (_CPU_PROMOTE, PROMOTE))}
# nn.LSTM/GRU/RNN's stacked run: PyTorch casts it to the lower precision on both devices
# (mkldnn_rnn_layer on the CPU list; _cudnn_rnn through ATen's AutocastRNN.cpp on CUDA)
_POLICIES["cpu"]["_rnn_layers"] = _POLICIES["cuda"]["_rnn_layers"] = LOW

# ndgrad op (defop) names -> PyTorch's, where they differ
_NAMES = {"convolution_transpose": "conv_transpose2d", "prelu_kernel": "prelu",
          "pow_scalar_base": "pow", "pow_tensor": "pow", "prod_dim": "prod", "sum_dim": "sum",
          "fft_c2c": "fft_fft", "fft_r2c": "fft_rfft", "fft_c2r": "fft_irfft",
          "linalg_cross": "cross", "max_pool3d_with_indices": "max_pool3d",
          "nll_loss_index": "nll_loss", "mv_t": "mv"}
# torch-level functions written in Python (not one defop): wrapped the first time an autocast
# region opens (module attribute -> PyTorch's op name). As PyTorch's kernels, they run with
# autocast off inside, listed or not.
_MATMULS = ("mm", "bmm", "matmul", "addmm", "addbmm", "baddbmm", "mv", "addmv", "addr", "dot",
            "vdot")
_PY_FUNCTIONS = {
    "nn.functional": {"conv1d": "conv1d", "conv2d": "conv2d", "conv3d": "conv3d",
                      "conv_transpose1d": "conv_transpose1d",
                      "conv_transpose2d": "conv_transpose2d",
                      "conv_transpose3d": "conv_transpose3d", "prelu": "prelu",
                      "linear": "linear",
                      "layer_norm": "layer_norm", "rms_norm": "rms_norm",
                      "group_norm": "group_norm", "cosine_similarity": "cosine_similarity",
                      "poisson_nll_loss": "poisson_nll_loss",
                      "cosine_embedding_loss": "cosine_embedding_loss",
                      "hinge_embedding_loss": "hinge_embedding_loss", "kl_div": "kl_div",
                      "l1_loss": "l1_loss", "margin_ranking_loss": "margin_ranking_loss",
                      "multilabel_margin_loss": "multilabel_margin_loss",
                      "triplet_margin_loss": "triplet_margin_loss",
                      "multi_margin_loss": "multi_margin_loss", "pdist": "pdist",
                      "cross_entropy": "cross_entropy_loss", "bilinear": "bilinear",
                      "grid_sample": "grid_sampler", "interpolate": "upsample_bilinear2d",
                      "scaled_dot_product_attention": "scaled_dot_product_attention",
                      "ctc_loss": "ctc_loss", "binary_cross_entropy": "binary_cross_entropy"},
    "": {"einsum": "einsum", "chain_matmul": "chain_matmul", "lstm_cell": "lstm_cell",
         "gru_cell": "gru_cell", "rnn_tanh_cell": "rnn_tanh_cell",
         "rnn_relu_cell": "rnn_relu_cell", "dist": "dist", "cdist": "cdist",
         "renorm": "renorm", "tensordot": "tensordot", "quantile": "quantile",
         "nanquantile": "nanquantile", "stft": "stft", "inverse": "inverse",
         "pinverse": "pinverse", "cholesky_solve": "cholesky_solve",
         "cholesky_inverse": "cholesky_inverse", "cholesky": "cholesky", "lu_solve": "lu_solve",
         "triangular_solve": "triangular_solve", "stack": "stack", "cat": "cat",
         "concat": "cat", "concatenate": "cat", "frobenius_norm": "frobenius_norm",
         "nuclear_norm": "nuclear_norm", "index_copy": "index_copy",
         # (the matmul family's Python entries check dtypes before their op: PyTorch casts
         # first)
         **{n: n for n in _MATMULS}},
    "Tensor": dict({n: n for n in _MATMULS}, index_copy="index_copy", __matmul__="matmul",
                   __rmatmul__="matmul"),   # (`a @ b` is aten::matmul in PyTorch)
    "ops.rnn_math": {"_layers": "_rnn_layers"},
    "linalg": {"multi_dot": "linalg_multi_dot", "vecdot": "linalg_vecdot",
               "matrix_norm": "linalg_matrix_norm", "inv": "linalg_inv",
               "matrix_rank": "linalg_matrix_rank", "cond": "linalg_cond",
               "lstsq": "linalg_lstsq", "tensorinv": "linalg_tensorinv",
               "tensorsolve": "linalg_tensorsolve",
               "householder_product": "linalg_householder_product"}}
ERR_BCE = ("torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to "
           "autocast.\nMany models use a sigmoid layer right before the binary cross entropy "
           "layer.\nIn this case, combine the two layers using "
           "torch.nn.functional.binary_cross_entropy_with_logits\nor torch.nn.BCEWithLogitsLoss."
           "  binary_cross_entropy_with_logits and BCEWithLogits are\nsafe to autocast.")


# ---------------------------------------------------------------- thread-local state

class _State(threading.local):
    def __init__(self):
        from ._dtype import bfloat16, float16
        self.enabled = {"cpu": False, "cuda": False}
        self.dtype = {"cpu": bfloat16, "cuda": float16}
        self.cache_enabled = True
        self.nesting = 0
        self.inside = False      # a listed op is running: its inner ops are not autocast
        self.cache = {}          # id(float32 leaf) -> (weakref, its lower-precision copy)


_state = _State()
_hooked = {"regions": 0, "prev": None}   # open regions in all threads; the slot's occupant
_lock = threading.Lock()


def is_autocast_enabled(device_type=None):
    """torch.is_autocast_enabled([device_type]): "cuda" when no device type is given."""
    return bool(_state.enabled.get("cuda" if device_type is None else device_type, False))


def set_autocast_enabled(device_type, enabled=None):
    if enabled is None:   # (the deprecated one-argument form: CUDA)
        device_type, enabled = "cuda", device_type
    _state.enabled[device_type] = bool(enabled)


def get_autocast_dtype(device_type):
    """torch.get_autocast_dtype: float16 for "cuda", bfloat16 for "cpu" unless set."""
    return _state.dtype.get(device_type)


def set_autocast_dtype(device_type, dtype):
    _state.dtype[device_type] = dtype


_autocast_dtype = get_autocast_dtype


def _deprecated(old, new, line, fn):
    """PyTorch's deprecated per-device spellings (torch.get_autocast_cpu_dtype(), ...)."""
    def f(*args):
        warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead. (Triggered "
                      f"internally at /pytorch/torch/csrc/autograd/init.cpp:{line}.)",
                      DeprecationWarning, stacklevel=2)
        return fn(*args)
    f.__name__ = old.split("(")[0]
    return f


get_autocast_cpu_dtype = _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')",
                                     1016, lambda: get_autocast_dtype("cpu"))
get_autocast_gpu_dtype = _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')",
                                     1007, lambda: get_autocast_dtype("cuda"))
is_autocast_cpu_enabled = _deprecated("is_autocast_cpu_enabled()",
                                      "is_autocast_enabled('cpu')", 883,
                                      lambda: is_autocast_enabled("cpu"))
set_autocast_cpu_enabled = _deprecated("set_autocast_cpu_enabled(enabled)",
                                       "set_autocast_enabled('cpu', enabled)", 874,
                                       lambda e: set_autocast_enabled("cpu", e))
set_autocast_cpu_dtype = _deprecated("set_autocast_cpu_dtype(dtype)",
                                     "set_autocast_dtype('cpu', dtype)", 967,
                                     lambda d: set_autocast_dtype("cpu", d))
set_autocast_gpu_dtype = _deprecated("set_autocast_gpu_dtype(dtype)",
                                     "set_autocast_dtype('cuda', dtype)", 952,
                                     lambda d: set_autocast_dtype("cuda", d))


def is_autocast_cache_enabled():
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled):
    _state.cache_enabled = bool(enabled)


def clear_autocast_cache(*args):
    if args:   # (PyTorch's builtin's message)
        raise TypeError(f"torch.clear_autocast_cache() takes no arguments ({len(args)} given)")
    _state.cache.clear()


def autocast_increment_nesting():
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting():
    _state.nesting -= 1
    return _state.nesting


class autocast:
    """`with torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None):`"""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(device_type):
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{device_type}'")
        from ._dtype import bfloat16, float16
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None \
            else cache_enabled
        enabled = bool(enabled)
        if enabled:
            if device_type == "cuda":
                if not cuda_available():
                    warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                                  "autocast.", stacklevel=2)
                    enabled = False
                elif self.fast_dtype is bfloat16:
                    from . import cuda
                    if not cuda.is_bf16_supported():
                        raise RuntimeError("Current CUDA Device does not support bfloat16. "
                                           "Please switch dtype to float16.")
            elif self.fast_dtype not in (bfloat16, float16):
                name = device_type.upper()
                warnings.warn(f"In {name} autocast, but the target dtype is not supported. "
                              f"Disabling autocast.\n{name} Autocast only supports dtypes of "
                              "torch.bfloat16, torch.float16 currently.", stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        st = _state
        self.prev_cache_enabled = st.cache_enabled
        self.prev = st.enabled.get(self.device, False)
        self.prev_fastdtype = st.dtype.get(self.device)
        st.enabled[self.device] = self._enabled
        st.dtype[self.device] = self.fast_dtype
        st.nesting += 1
        st.cache_enabled = self._cache_enabled
        self._hooked = self._enabled   # (a disabled region needs no hook)
        if self._hooked:
            _hook(+1)
        return self

    def __exit__(self, *exc):
        st = _state
        st.nesting -= 1
        if st.nesting == 0:
            st.cache.clear()
        st.enabled[self.device] = self.prev
        st.dtype[self.device] = self.prev_fastdtype
        st.cache_enabled = self.prev_cache_enabled
        if self._hooked:
            _hook(-1)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. Did you "
                "mean to use autocast as a context manager? For example:\n    with "
                "torch.autocast(device_type=...):\n        output = model(input)")

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return wrapper


# ---------------------------------------------------------------- the op hook
# While an autocast region is open in any thread, apply's hook slot (ops/_registry.py's
# `_VMAP`, the one func.vmap uses) holds `_dispatch`; with none open, ops pay nothing.

def _hook(delta):
    from .ops import _registry
    with _lock:
        if delta > 0 and _hooked["regions"] == 0:
            _wrap_py_functions()
            _hooked["prev"] = _registry._VMAP[0]
            _registry._VMAP[0] = _dispatch
        _hooked["regions"] += delta
        if delta < 0 and _hooked["regions"] == 0 and _registry._VMAP[0] is _dispatch:
            _registry._VMAP[0] = _hooked["prev"]


def _run(op, args, kwargs):
    prev = _hooked["prev"]
    if prev is not None:
        return prev(op, args, kwargs)
    return op.call(*args, **kwargs)


def _dispatch(op, args, kwargs):
    st = _state
    if st.inside or not (st.enabled["cuda"] or st.enabled["cpu"]):
        return _run(op, args, kwargs)
    name = op.name.strip("_") if op.name not in _NAMES else _NAMES[op.name]
    return _autocast_call(name, lambda *a, **k: _run(op, a, k), args, kwargs,
                          params=op.params)


def _first_tensor(args, kwargs):
    from ._tensor import Tensor
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, Tensor):
            return a
        if isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, Tensor):
                    return b
    return None


def _autocast_call(name, fn, args, kwargs, composite=False, params=()):
    """fn(*args, **kwargs) under the policy PyTorch's autocast has for op `name` (composite:
    fn is a Python function of ops, run with autocast off inside even when not listed;
    params: its parameter names, where a dtype may come positionally)."""
    st = _state
    from .autograd.grad_mode import _state as grad_state
    t = _first_tensor(args, kwargs)
    if t is None or grad_state.in_backward:
        return fn(*args, **kwargs)
    device = t.device.type
    policy = _POLICIES[device].get(name) if st.enabled.get(device) else None
    if policy is None and not composite:
        return fn(*args, **kwargs)
    from . import _dtype as D
    low = st.dtype.get(device)
    target = None
    if policy == BANNED:
        raise RuntimeError(ERR_BCE)
    if policy == SET_OPT_DTYPE:
        pos = params.index("dtype") if "dtype" in params else -1
        given = kwargs.get("dtype") if pos >= len(args) or pos < 0 else args[pos]
        if not _eligible(args[0] if args else None, device) or given is not None:
            return fn(*args, **kwargs)
        if 0 <= pos < len(args):
            args = args[:pos] + (D.float32,) + args[pos + 1:]
        elif pos >= 0 or not params:
            kwargs = dict(kwargs, dtype=D.float32)
        else:   # (an op without a dtype parameter: dtype=float32 is its input in float32)
            target = D.float32
    elif policy == PROMOTE:
        target = low
        for a in _tensors(args, kwargs):
            if _eligible(a, device) and a.dtype is D.float32:
                target = D.float32
    elif policy is not None:
        target = low if policy == LOW else D.float32
    if target is not None:
        args = tuple(_cast_arg(a, target, device) for a in args)
        kwargs = {k: _cast_arg(v, target, device) for k, v in kwargs.items()}
    st.inside = True
    try:
        return fn(*args, **kwargs)
    finally:
        st.inside = False


def _tensors(args, kwargs):
    from ._tensor import Tensor
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from (b for b in a if isinstance(b, Tensor))


def _eligible(t, device):
    """PyTorch's is_eligible: a floating tensor of the autocast device, not float64."""
    from ._tensor import Tensor
    return isinstance(t, Tensor) and t.dtype.is_floating_point and t.dtype.name != "float64" \
        and t.device.type == device


def _cast_arg(a, target, device):
    from ._tensor import Tensor
    if isinstance(a, Tensor):
        return _cached_cast(a, target, device)
    if isinstance(a, (list, tuple)) and any(isinstance(b, Tensor) for b in a):
        return type(a)(_cast_arg(b, target, device) for b in a)
    return a


def _cached_cast(t, target, device):
    """PyTorch's cached_cast: float32 leaves that require grad are cast once per region."""
    if not _eligible(t, device) or t.dtype is target:
        return t
    st = _state
    if target is st.dtype[device] and t.dtype.name == "float32" and t.requires_grad and \
            t.is_leaf and t._base is None and st.cache_enabled:
        hit = st.cache.get(id(t))
        if hit is not None and hit[0]() is t:
            return hit[1]
        st.inside = True   # (the cast itself is not autocast)
        try:
            c = t.to(target)
        finally:
            st.inside = False
        st.cache[id(t)] = (weakref.ref(t), c)
        return c
    prev, st.inside = st.inside, True
    try:
        return t.to(target)
    finally:
        st.inside = prev


_WRAPPED = []


def _wrap_py_functions():
    """Wrap the torch-level functions of PyTorch's lists that ndgrad writes in Python (the
    first time an autocast region opens: until then nothing pays for it)."""
    if _WRAPPED:
        return
    _WRAPPED.append(True)
    import importlib
    root = importlib.import_module(__name__.rsplit(".", 1)[0])
    for modname, names in _PY_FUNCTIONS.items():
        mod = root if not modname else root.Tensor if modname == "Tensor" else \
            importlib.import_module(f"{root.__name__}.{modname}")
        for attr, opname in names.items():
            f = getattr(mod, attr, None)
            if f is None or getattr(f, "_autocast_wrapped", False):
                continue
            w = _py_wrapper(f, opname)
            for m in {mod, root}:   # (the same function under torch.* too)
                if getattr(m, attr, None) is f:
                    setattr(m, attr, w)


def _py_wrapper(f, opname):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        st = _state
        if _hooked["regions"] and not st.inside and (st.enabled["cuda"] or st.enabled["cpu"]):
            return _autocast_call(opname, f, args, kwargs, composite=True)
        return f(*args, **kwargs)
    wrapper._autocast_wrapped = True
    return wrapper


def _cast(value, device_type, dtype):
    import collections.abc
    from ._tensor import Tensor
    if isinstance(value, Tensor):
        eligible = (value.is_floating_point() and value.device.type == device_type
                    and value.dtype.name != "float64")
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes)) or type(value).__module__ == "numpy":
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        it = (_cast(v, device_type, dtype) for v in value)
        return type(value)(it) if isinstance(value, (list, tuple)) else it
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for a custom Function's forward: records on ctx whether autocast was on, and
    with `cast_inputs` runs the forward with autocast off and its floating inputs cast.

        @staticmethod
        @torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)
        def forward(ctx, x): ..."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = _autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        on = is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if on:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs),
                           **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorator for a custom Function's backward: runs it under the autocast state that its
    forward (decorated with custom_fwd) saw."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast,
                      dtype=args[0]._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd


class _OptState:
    READY, UNSCALED, STEPPED = 0, 1, 2


class GradScaler:
    """PyTorch's dynamic loss scaler (`torch.amp.GradScaler`)."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if enabled and device == "cuda" and not cuda_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.")
            self._enabled = False
        if self._enabled:
            if not growth_factor > 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if not backoff_factor < 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = float(init_scale)
        self._scale = None                  # a 0-d float32 tensor once first used
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._per_optimizer = {}            # id(optimizer) -> {"stage", "found_inf"}

    # -- the training-loop API

    def scale(self, outputs):
        if not self._enabled:
            return outputs
        from ._tensor import Tensor
        if isinstance(outputs, Tensor):
            return outputs * self._get_scale_tensor(outputs.device).to(outputs.dtype)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        if isinstance(outputs, dict):
            return {k: self.scale(v) for k, v in outputs.items()}
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def unscale_(self, optimizer):
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] is _OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] is _OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv = 1.0 / float(self._get_scale_tensor().item())
        found = False
        from .autograd.grad_mode import no_grad
        from ._dtype import float16
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if g.dtype == float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    if not bool(g.isfinite().all()):
                        found = True
                    g.mul_(inv)
        state["found_inf"] = found
        state["stage"] = _OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._state(optimizer)
        if state["stage"] is _OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is _OptState.READY:
            self.unscale_(optimizer)
        retval = None
        if not state["found_inf"]:
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = _OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        if not self._enabled:
            return
        scale = self._get_scale_tensor()
        if new_scale is not None:
            from ._tensor import Tensor
            value = float(new_scale.item()) if isinstance(new_scale, Tensor) else float(new_scale)
            scale.fill_(value)
        else:
            found = [s["found_inf"] for s in self._per_optimizer.values()
                     if s["stage"] is not _OptState.READY]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(found):
                scale.mul_(self._backoff_factor)
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    grown = float(scale.item()) * self._growth_factor
                    if math.isfinite(grown):
                        scale.fill_(grown)
                    self._growth_tracker = 0
        self._per_optimizer = {}

    # -- inspection and state

    def is_enabled(self):
        return self._enabled

    def get_scale(self):
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale.fill_(self._init_scale)
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])

    # -- internals

    def _get_scale_tensor(self, device=None):
        """The 0-d float32 scale, made on the device of the first outputs scaled (PyTorch's
        _lazy_init_scale_growth_tracker)."""
        if self._scale is None:
            from ._creation import full
            from ._dtype import float32
            self._scale = full((), self._init_scale, dtype=float32, device=device)
        return self._scale

    def _state(self, optimizer):
        return self._per_optimizer.setdefault(
            id(optimizer), {"stage": _OptState.READY, "found_inf": False})
