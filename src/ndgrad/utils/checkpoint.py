"""Activation checkpointing (torch.utils.checkpoint): trade compute for memory.

    out = checkpoint(block, x, use_reentrant=False)

The forward of `block` keeps none of its intermediate activations; backward runs it again to get
them. Two variants, as in PyTorch:
- use_reentrant=False (recommended): the forward runs normally, under saved_tensors_hooks whose
  pack hook stores only an index. The first unpack in backward recomputes the forward (with the
  RNG state of the original call restored) under a second pair of hooks that records the saved
  tensors by the same index, so every node gets its tensor from the recomputation.
- use_reentrant=True: a custom Function (CheckpointFunctionBackward) runs the forward under
  no_grad and, in its backward, reruns it with grad on and backpropagates through that rerun.
"""
import contextlib
import enum
import warnings

from .. import _creation
from .._tensor import Tensor
from ..autograd import grad_mode
from ..autograd.function import Function
from ..autograd.graph import saved_tensors_hooks

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "check_backward_validity", "detach_variable", "get_device_states",
           "set_device_states", "noop_context_fn", "set_checkpoint_early_stop",
           "DefaultDeviceType", "set_checkpoint_debug_enabled", "CheckpointPolicy",
           "SelectiveCheckpointContext", "create_selective_checkpoint_contexts",
           "GraphExecGroup", "SAC_IGNORED_OPS"]

WARN_REENTRANT = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting "
    "in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
    "use_reentrant=False is recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants.")


class _RNG:
    """The default generator's state at the first forward, restored for the recomputation."""

    def __init__(self, preserve):
        self.state = _creation.get_rng_state() if preserve else None

    def __enter__(self):
        if self.state is not None:
            self.outer = _creation.get_rng_state()
            _creation.set_rng_state(self.state)

    def __exit__(self, *exc):
        if self.state is not None:
            _creation.set_rng_state(self.outer)


class CheckpointError(RuntimeError):
    pass


_checkpoint_debug_enabled = None
_enable_checkpoint_early_stop = None


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Within the block, checkpoint's `debug` flag is `enabled` (None: each call's own)."""
    global _checkpoint_debug_enabled
    prev, _checkpoint_debug_enabled = _checkpoint_debug_enabled, enabled
    try:
        yield
    finally:
        _checkpoint_debug_enabled = prev


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Within the block, non-reentrant checkpoint's early stop is `enable` (ndgrad recomputes
    the whole region either way; the gradients are the same)."""
    global _enable_checkpoint_early_stop
    prev, _enable_checkpoint_early_stop = _enable_checkpoint_early_stop, enable
    try:
        yield
    finally:
        _enable_checkpoint_early_stop = prev


def detach_variable(inputs):
    """The tensors of the tuple `inputs` detached, each keeping its requires_grad."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs):
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


class DefaultDeviceType:
    """The device type whose RNG state checkpoint saves besides the CPU's."""

    _default_device_type = None

    @staticmethod
    def set_device_type(device="cuda"):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        if not DefaultDeviceType._default_device_type:
            from .. import accelerator
            acc = accelerator.current_accelerator(True)
            DefaultDeviceType._default_device_type = acc.type if acc else "cpu"
        return DefaultDeviceType._default_device_type


def _tensors_in(args):
    if isinstance(args, Tensor):
        yield args
    elif isinstance(args, (list, tuple)):
        for a in args:
            yield from _tensors_in(a)
    elif isinstance(args, dict):
        for a in args.values():
            yield from _tensors_in(a)


def get_device_states(*args):
    """(device ids, RNG states) of the accelerator devices the tensors in `args` live on: none
    for CPU tensors."""
    ids = [t.get_device() for t in _tensors_in(args) if t.device.type not in ("cpu", "meta")]
    from .. import cuda
    states = []
    for i in ids:
        with cuda.device(i):
            states.append(cuda.get_rng_state())
    return ids, states


def set_device_states(devices, states, *, device_type=None):
    from .. import cuda
    for device, state in zip(devices, states):
        with cuda.device(device):
            cuda.set_rng_state(state)


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


class CheckpointPolicy(enum.Enum):
    """What a selective-checkpoint policy says about an op's outputs."""
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


class SelectiveCheckpointContext:
    """The `ctx` a selective-checkpoint policy function receives."""

    def __init__(self, *, is_recompute, op_output=None):
        self.is_recompute = is_recompute
        self.op_output = op_output


class _SelectiveContext:
    """One of the pair create_selective_checkpoint_contexts returns. ndgrad has no operator
    dispatch to intercept, so every op of the region is recomputed: the policy decides only what
    is cached, and recomputing an op PyTorch would have cached gives the same values (the RNG
    state is restored for the recomputation)."""

    def __init__(self, policy_fn, is_recompute):
        self.policy_fn, self.is_recompute = policy_fn, is_recompute

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """The (forward, recompute) context pair for checkpoint(..., context_fn=...)."""
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:      # ndgrad has no OpOverload objects to name ops by
            raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} "
                             f"of type {type(op)}. ")

        def policy_fn(ctx, op, *args, **kwargs):
            return CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    return _SelectiveContext(policy_fn, False), _SelectiveContext(policy_fn, True)


_graph_exec_group = [None]


class GraphExecGroup:
    """`with GraphExecGroup():` backward calls inside recompute each checkpointed region at
    most once. ndgrad's checkpoint frames keep their recomputed tensors until the graph is freed,
    so that holds in and out of a group; the group itself cannot nest, as in PyTorch."""

    def __enter__(self):
        if _graph_exec_group[0] is not None:
            raise RuntimeError("GraphExecGroup contexts cannot be nested. "
                               f"Already inside group {_graph_exec_group[0]}")
        _graph_exec_group[0] = self
        return self

    def __exit__(self, *args):
        _graph_exec_group[0] = None

    @classmethod
    def _get_current_group(cls):
        return _graph_exec_group[0]


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default",
               debug=False, early_stop=True, preserve_rng_state=True, **kwargs):
    """function(*args, **kwargs), without keeping its activations: they are recomputed in
    backward. Gradients are the same as without checkpointing."""
    if use_reentrant is None:
        warnings.warn(WARN_REENTRANT, UserWarning, stacklevel=2)
        use_reentrant = True
    if context_fn is None:
        context_fn = noop_context_fn
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    if debug and context_fn is not noop_context_fn:
        raise ValueError("debug=True is incompatible with non-default context_fn")
    return _checkpoint_without_reentrant(function, preserve_rng_state, args, kwargs, context_fn)


# ---------------------------------------------------------------- non-reentrant

class _Frame:
    """One checkpointed call: the recomputed saved tensors, by pack order."""

    def __init__(self, function, args, kwargs, preserve, recompute_context):
        self.function, self.args, self.kwargs = function, args, kwargs
        self.recompute_context = recompute_context
        self.rng = _RNG(preserve)
        self.count = 0
        self.recomputed = None

    def pack(self, tensor):
        i = self.count
        self.count += 1
        return i

    def unpack(self, i):
        if self.recomputed is None:
            self.recompute()
        if i not in self.recomputed:
            raise RuntimeError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was "
                "already unpacked once, or the recomputation saved fewer tensors than the "
                "original forward (is the function deterministic?).")
        return self.recomputed[i]

    def recompute(self):
        store = {}
        counter = [0]

        def pack(t):
            d = t.detach()
            d._requires_grad = t._requires_grad  # formulas may ask (matmul's does)
            store[counter[0]] = d
            counter[0] += 1
            return None

        def unpack(_):  # recomputed graphs are never differentiated
            raise RuntimeError("checkpoint: the recomputed graph cannot be backpropagated")

        args = tuple(a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a
                     for a in self.args)
        with self.rng, grad_mode.enable_grad(), saved_tensors_hooks(pack, unpack), \
                self.recompute_context:
            self.function(*args, **self.kwargs)
        self.recomputed = store
        self.args = self.kwargs = None  # the inputs are no longer needed


def _checkpoint_without_reentrant(function, preserve, args, kwargs, context_fn):
    forward_context, recompute_context = context_fn()
    frame = _Frame(function, args, kwargs, preserve, recompute_context)
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        out = function(*args, **kwargs)
    return out


# ---------------------------------------------------------------- reentrant

class CheckpointFunction(Function):
    """The reentrant variant: forward under no_grad, backward reruns the forward."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.rng = _RNG(preserve_rng_state)
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        with grad_mode.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        from ..autograd import backward as autograd_backward
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            d = t.detach()
            d.requires_grad_(t.requires_grad)
            inputs[i] = d
        with ctx.rng, grad_mode.enable_grad():
            outputs = ctx.run_function(*inputs)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        autograd_backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(
            inp.grad if isinstance(inp, Tensor) else None for inp in inputs)


# ---------------------------------------------------------------- sequential

def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run a sequence of modules/functions in `segments` checkpointed chunks (the last chunk is
    not checkpointed, as in PyTorch)."""
    if use_reentrant is None:
        warnings.warn(WARN_REENTRANT, UserWarning, stacklevel=2)
        use_reentrant = True
    if hasattr(functions, "children") and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())
    functions = list(functions)

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, **kwargs)
    return run(end + 1, len(functions) - 1)(input)


def __getattr__(name):
    # SAC_IGNORED_OPS: the ATen operators selective checkpointing never caches (detach and the
    # metadata queries), as torch.ops.aten overloads; made on first use (torch.ops.aten loads
    # the op namespace)
    if name == "SAC_IGNORED_OPS":
        from ..ops import aten
        ops = {aten.detach.default, aten.is_contiguous.default, aten.is_contiguous.memory_format}
        for n in ("dim", "numel", "size", "storage_offset", "stride", "sym_numel", "sym_size",
                  "sym_storage_offset", "sym_stride"):
            ops.add(getattr(aten, n).default)
        globals()[name] = ops
        return ops
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
