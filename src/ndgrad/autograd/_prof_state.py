"""The profiler's switch, read by the places that dispatch ops (kept apart so that they can
import it without importing the profiler).

Note [Profiler hooks]
~~~~~~~~~~~~~~~~~~~~~
`HUB[0]` is the active profiler hub (autograd/profiler.py), or None. It is read:
- by ops/_registry.py's general path (`_apply`), which every op takes while a profiler is active
  (the hub raises `_registry._TF_MODES`, the counter that already sends ops off their fast
  path while a TorchFunctionMode is active: the fast path pays nothing for the profiler);
- by the Python-level functions' wrappers (_argcheck.torch_errors, tensor_method) and by
  ops/_inplace.inplace, one list read per call;
- by the autograd engine, once per backward pass (a profiled pass runs its nodes on the Tensor
  path, each in its `autograd::engine::evaluate_function:` range);
- by Optimizer.step/zero_grad and the DataLoader's iterator, once per call.
The in-place operators' fast path (`x += y` under no_grad) is swapped for a recording one while
a profiler is active (Tensor's class attributes), so it too pays nothing otherwise.
"""
HUB = [None]
