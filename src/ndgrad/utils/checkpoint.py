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
import warnings

from .. import _creation
from .._tensor import Tensor
from ..autograd import grad_mode
from ..autograd.function import Function
from ..autograd.graph import saved_tensors_hooks

__all__ = ["checkpoint", "checkpoint_sequential"]

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


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default",
               debug=False, early_stop=True, preserve_rng_state=True, **kwargs):
    """function(*args, **kwargs), without keeping its activations: they are recomputed in
    backward. Gradients are the same as without checkpointing."""
    if use_reentrant is None:
        warnings.warn(WARN_REENTRANT, UserWarning, stacklevel=2)
        use_reentrant = True
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    return _checkpoint_without_reentrant(function, preserve_rng_state, args, kwargs)


# ---------------------------------------------------------------- non-reentrant

class _Frame:
    """One checkpointed call: the recomputed saved tensors, by pack order."""

    def __init__(self, function, args, kwargs, preserve):
        self.function, self.args, self.kwargs = function, args, kwargs
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
        with self.rng, grad_mode.enable_grad(), saved_tensors_hooks(pack, unpack):
            self.function(*args, **self.kwargs)
        self.recomputed = store
        self.args = self.kwargs = None  # the inputs are no longer needed


def _checkpoint_without_reentrant(function, preserve, args, kwargs):
    frame = _Frame(function, args, kwargs, preserve)
    with saved_tensors_hooks(frame.pack, frame.unpack):
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
