"""DistributedDataParallel: the same model on every rank, gradients averaged during backward.

At construction the parameters and buffers are broadcast from rank 0 and the parameters are
grouped into buckets (reverse registration order, about the order backward produces them; the
first bucket small, the others up to bucket_cap_mb; one dtype per bucket). Each parameter gets a
post-accumulate-grad hook: when the last gradient of a bucket has been accumulated, the bucket is
flattened and its all-reduce started asynchronously (buckets start in index order on every rank,
so the ranks' MPI calls always match), and backward goes on computing the remaining gradients
while the message travels. A callback queued on the engine (Variable._execution_engine
.queue_callback) waits for every bucket before backward() returns and writes the averaged
gradients into .grad.
"""
import contextlib

import numpy as np

from ..._tensor import _make
from ..modules.module import Module
from ...distributed.distributed_c10d import GradBucket

__all__ = ["DistributedDataParallel"]

_FIRST_BUCKET_BYTES = 1024 * 1024

ERR_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. This "
    "error indicates that your module has parameters that were not used in producing loss. You "
    "can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by \n"
    "making sure all `forward` function outputs participate in calculating loss. \n"
    "If you already have done the above, then the distributed data parallel module wasn't able "
    "to locate the output tensors in the return value of your module's `forward` function. "
    "Please include the loss function and the structure of the return value of `forward` of "
    "your module when reporting this issue (e.g. list, dict, iterable).\n"
    "Parameter indices which did not receive grad for rank {rank}: {indices}")


class _Bucket:
    __slots__ = ("index", "params", "pending", "buffer", "future", "sizes", "flat", "views")

    def __init__(self, index, params):
        self.index = index
        self.params = params
        self.sizes = [p.numel() for p in params]
        self.pending = 0
        self.buffer = None
        self.future = None
        self.flat = self.views = None   # gradient_as_bucket_view: the persistent buffer

    def make_views(self):
        """One flat buffer for the bucket; each parameter's gradient becomes a view of it."""
        self.flat = np.zeros(sum(self.sizes), self.params[0]._data.dtype)
        self.views, off = [], 0
        for p, n in zip(self.params, self.sizes):
            self.views.append(self.flat[off:off + n].reshape(p._data.shape))
            off += n


class DistributedDataParallel(Module):
    """Data parallelism over the ranks of a process group (torch.nn.parallel
    .DistributedDataParallel): wrap the model, train as usual, each backward() averages the
    gradients over the ranks."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 init_sync=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None,
                 skip_all_reduce_unused_params=False):
        super().__init__()
        from ...distributed import distributed_c10d as c10d
        self._c10d = c10d
        pg = c10d._group(process_group)  # PyTorch's error before init_process_group
        if pg is None:
            raise RuntimeError("DistributedDataParallel: this rank is not a member of "
                               "process_group")
        if not any(p.requires_grad for p in module.parameters()):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self.module = module
        self.process_group = pg
        self.device_ids = device_ids
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        if bucket_cap_mb is None:
            bucket_cap_mb = 25
        self.bucket_bytes_cap = int(bucket_cap_mb * 1024 * 1024)
        self._params = [p for p in module.parameters() if p.requires_grad]
        self._param_index = {id(p): i for i, p in enumerate(self._params)}
        self._verify_same_model()
        if init_sync:
            self._sync_module_states()
        self._buckets = self._make_buckets()
        if gradient_as_bucket_view:
            for b in self._buckets:
                b.make_views()
        self._bucket_of = {}
        for b in self._buckets:
            for p in b.params:
                self._bucket_of[id(p)] = b
        self._comm_hook = None
        self._comm_state = None
        self._armed = False          # the last forward expects a synchronised backward
        self._unused = ()            # params not reached from the last forward's outputs
        self._unused_ids = set()
        self._reduction_unfinished = None
        self._hook_handles = [p.register_post_accumulate_grad_hook(self._grad_ready)
                              for p in self._params]

    # ------------------------------------------------------------------ construction
    def _verify_same_model(self):
        shapes = [(tuple(p.shape), p.dtype.name) for p in self._params]
        every = [None] * self.process_group.size()
        self._c10d.all_gather_object(every, shapes, group=self.process_group)
        ranks = self.process_group._ranks
        for r, other in zip(ranks, every):
            if len(other) != len(shapes):
                raise RuntimeError(
                    f"DDP expects same model across all ranks, but Rank {self._rank()} has "
                    f"{len(shapes)} params, while rank {r} has inconsistent {len(other)} params.")
            for i, (mine, theirs) in enumerate(zip(shapes, other)):
                if mine != theirs:
                    raise RuntimeError(
                        f"DDP expects same model across all ranks, but Rank {self._rank()} has "
                        f"parameter {i} of shape {list(mine[0])} ({mine[1]}), while rank {r} has "
                        f"{list(theirs[0])} ({theirs[1]}).")

    def _rank(self):
        return self.process_group._ranks[self.process_group.rank()]

    def _sync_module_states(self):
        root = self.process_group._ranks[0]
        tensors = [p.detach() for p in self.module.parameters()]
        tensors += [b for b in self.module.buffers()]
        for t in tensors:
            self._c10d.broadcast(t, src=root, group=self.process_group, _check=False)

    def _make_buckets(self):
        buckets, current, size, cap = [], [], 0, min(_FIRST_BUCKET_BYTES, self.bucket_bytes_cap)
        for p in reversed(self._params):
            nbytes = p.numel() * p.dtype.itemsize
            if current and (size + nbytes > cap or p.dtype is not current[0].dtype):
                buckets.append(_Bucket(len(buckets), current))
                current, size, cap = [], 0, self.bucket_bytes_cap
            current.append(p)
            size += nbytes
        if current:
            buckets.append(_Bucket(len(buckets), current))
        return buckets

    # ------------------------------------------------------------------ forward
    def forward(self, *inputs, **kwargs):
        from ...autograd import grad_mode
        if self._reduction_unfinished is not None:
            msg, self._reduction_unfinished = self._reduction_unfinished, None
            raise RuntimeError(msg)
        sync = grad_mode.is_grad_enabled() and self.require_backward_grad_sync
        if sync and self.broadcast_buffers and self.require_forward_param_sync:
            root = self.process_group._ranks[0]
            for b in self.module.buffers():
                self._c10d.broadcast(b, src=root, group=self.process_group, _check=False)
        out = self.module(*inputs, **kwargs)
        self._armed = sync
        if sync:
            self._prepare_for_backward(out)
        return out

    def _prepare_for_backward(self, out):
        self._next = 0                      # the next bucket to start
        self._polled = 0                    # the first started bucket not known finished
        self._started_backward = False
        for b in self._buckets:
            b.pending = len(b.params)
            b.buffer = b.future = None
        self._ready = set()
        self._unused = ()
        if self.find_unused_parameters:
            reached = _reached_params(out)
            self._unused = [p for p in self._params if id(p) not in reached]
        self._unused_ids = {id(p) for p in self._unused}

    # ------------------------------------------------------------------ backward
    def _grad_ready(self, param):
        if not self._armed:
            return
        if not self._started_backward:
            self._started_backward = True
            from ...autograd import Variable
            Variable._execution_engine.queue_callback(self._finish_backward)
            for p in self._unused:            # they will get no gradient this iteration
                self._mark_ready(p)
        self._mark_ready(param)

    def _mark_ready(self, param):
        if id(param) in self._ready:
            return
        self._ready.add(id(param))
        b = self._bucket_of[id(param)]
        b.pending -= 1
        while self._next < len(self._buckets) and self._buckets[self._next].pending == 0:
            self._start(self._buckets[self._next])
            self._next += 1
        # MPI moves a message on only inside MPI calls: test the started buckets' requests at
        # every gradient, so their transfer progresses while backward computes the others
        while self._polled < self._next and self._buckets[self._polled].future.done():
            self._polled += 1

    def _start(self, b):
        if b.flat is not None:     # gradient_as_bucket_view: gradients already there are kept
            flat = b.flat
            for p, v in zip(b.params, b.views):
                g = p._grad
                if g is None or id(p) in self._unused_ids:
                    if g is not None and g._data is v:  # an unused .grad keeps its value
                        p._grad = _make(v.copy())
                    v[...] = 0
                elif g._data is not v:
                    v[...] = g._data
        else:
            flat = np.empty(sum(b.sizes), b.params[0]._data.dtype)
            off = 0
            for p, n in zip(b.params, b.sizes):
                g = p._grad
                if g is None or id(p) in self._unused_ids:  # an unused parameter: zeros
                    flat[off:off + n] = 0
                else:
                    flat[off:off + n] = g._data.reshape(-1)
                off += n
        bucket = GradBucket(b.index, _make(flat), b.params, b.index == len(self._buckets) - 1)
        if self._comm_hook is None:
            from ...distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
            b.future = allreduce_hook(self.process_group, bucket)
        else:
            b.future = self._comm_hook(self._comm_state, bucket)

    def _finish_backward(self):
        self._armed = False
        missing = []
        if self._next < len(self._buckets):
            missing = [self._param_index[id(p)] for b in self._buckets[self._next:]
                       for p in b.params if id(p) not in self._ready]
        used = None
        if self.find_unused_parameters:
            # which parameters got a gradient on some rank: the others keep .grad as it is
            flags = np.zeros(len(self._params), np.int64)
            for p in self._params:
                if id(p) in self._ready and id(p) not in self._unused_ids:
                    flags[self._param_index[id(p)]] = 1
            self._c10d.all_reduce(_make(flags), op=self._c10d.ReduceOp.MAX,
                                  group=self.process_group, _check=False)
            used = flags
        for b in self._buckets[:self._next]:
            result = b.future.wait()
            data = result._data
            if b.flat is not None:
                if data is not b.flat:       # a comm hook that returned a new tensor
                    b.flat[...] = data.reshape(-1)
                for p, v in zip(b.params, b.views):
                    if used is None or used[self._param_index[id(p)]]:
                        if p._grad is None or p._grad._data is not v:
                            p._grad = _make(v)   # .grad is a view of the bucket from now on
                b.future = b.buffer = None
                continue
            off = 0
            for p, n in zip(b.params, b.sizes):
                if used is None or used[self._param_index[id(p)]]:
                    piece = data[off:off + n].reshape(p._data.shape)
                    if p._grad is None:
                        p._grad = _make(piece.copy())
                    else:
                        p._grad._data[...] = piece
                off += n
            b.future = b.buffer = None
        if missing:
            self._reduction_unfinished = ERR_UNFINISHED.format(rank=self._rank(),
                                                               indices=missing)

    # ------------------------------------------------------------------ API
    @contextlib.contextmanager
    def no_sync(self):
        """Inside, forward/backward accumulate gradients locally; the first synchronised
        backward after it averages the accumulated gradients."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def register_comm_hook(self, state, hook):
        """hook(state, bucket) -> Future of the bucket's reduced gradients, replacing the
        default averaging all-reduce."""
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be "
                               "called once.")
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        self._comm_hook = hook
        self._comm_state = state

    def _register_builtin_comm_hook(self, comm_hook_type):
        """A built-in hook by its BuiltinCommHookType (ALLREDUCE: the default averaging
        all-reduce; FP16_COMPRESS: fp16_compress_hook), on the model's process group."""
        from ...distributed import BuiltinCommHookType
        from ...distributed.algorithms.ddp_comm_hooks import default_hooks
        if comm_hook_type is BuiltinCommHookType.ALLREDUCE:
            hook = default_hooks.allreduce_hook
        elif comm_hook_type is BuiltinCommHookType.FP16_COMPRESS:
            hook = default_hooks.fp16_compress_hook
        else:
            raise TypeError(f"_register_builtin_comm_hook(): incompatible function arguments: "
                            f"expected a BuiltinCommHookType, got {comm_hook_type!r}")
        self.register_comm_hook(self.process_group, hook)

    def _get_ddp_logging_data(self):
        return {"bucket_cap_bytes": self.bucket_bytes_cap, "num_buckets": len(self._buckets)}


def _reached_params(out):
    """ids of the parameters (leaves) that the autograd graph of `out` reaches; `out` may be
    a tensor or lists, tuples and dicts of them."""
    from ..._tensor import Tensor
    from ...autograd.graph import AccumulateGrad
    nodes, reached, stack = [], set(), [out]
    while stack:
        o = stack.pop()
        if isinstance(o, Tensor):
            if o.grad_fn is not None:
                nodes.append(o.grad_fn)
            elif o.requires_grad:
                reached.add(id(o))
        elif isinstance(o, (list, tuple)):
            stack.extend(o)
        elif isinstance(o, dict):
            stack.extend(o.values())
    seen = set()
    while nodes:
        n = nodes.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if isinstance(n, AccumulateGrad):
            reached.add(id(n.variable))
        for child, _ in n.next_functions:
            if child is not None:
                nodes.append(child)
    return reached
