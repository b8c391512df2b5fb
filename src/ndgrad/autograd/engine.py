"""The backward engine: iterative, with dependency counting (PyTorch's design, in Python).

`run_backward` runs in three phases:

1. count (`_count`): walk the graph once from the roots (an explicit stack, never recursion)
   and count, for each node, how many edges lead into it;
2. run (`_Backward.tensors`, or `_Backward.arrays`): pop a ready node (every consumer has
   delivered its gradient), run its formulas on the summed incoming gradients, reduce each
   result to the input's shape (`sum_to`) and dtype, add it into the next node's buffer and
   decrement that node's count (`hand_on`); at zero it is ready. Unless `retain_graph`, each
   node's saved tensors are freed as soon as it has run;
3. finish (`_run_callbacks`): the callbacks queued during the pass.

`tensors` is the reference: every node through its Tensor-level `apply`, which create_graph
and anomaly mode need. Without them, `arrays` gives the same results on bare arrays where
nothing observes the gradients; Note [The array path] says why and what it must preserve.
"""
from . import grad_mode
from .graph import (AccumulateGrad, RELEASED, NO_RAW, ERR_BACKWARD_TWICE, annotated,
                    backward_twice_error, format_site, user_site)
from .graph import check_hook_value, check_hook_values, check_grad_output, grad_lock
from .graph import bump_version_in_backward, last_backward
from .anomaly_mode import _state as _anomaly, apply_checked
from .forward_ad import _state as _fw_state
from ._prof_state import HUB as _PROF_HUB
from .._backend import numpy as _np, obeys_layout, in_layout_of, dense_order
import functools
import sys as _sys
_getrefcount = _sys.getrefcount

_ndarray = _np.ndarray
_add_reduce = _np.add.reduce  # host: the array paths carry NumPy arrays only (bias sums)

__all__ = ["run_backward", "queue_callback"]

_final_callbacks = []  # one list per backward pass running (an inner backward gets its own)


def queue_callback(callback):
    """Run callback() when the backward pass now running has finished (PyTorch's
    Variable._execution_engine.queue_callback); DistributedDataParallel waits for its gradient
    all-reduces there. Callbacks may queue further callbacks."""
    if not _final_callbacks:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    _final_callbacks[-1].append(callback)


_DONE = object()  # _walk's stack marker: the node below it has had all its children walked


def _walk(root_nodes, targets):
    """Dependency counts for every node reachable from the roots, and the nodes on some path
    to a target (only these run when `inputs` is given). One depth-first walk: a node is
    needed when it is a target or a child is, decided once all its children are (post-order)."""
    deps = {}
    needed = set()
    visited = set()
    stack = list(root_nodes)
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        if node is _DONE:
            node = pop()
            if node in targets or node._c0 in needed:  # (plain tests: no generator per node)
                needed.add(node)
                continue
            for c, _ in node._crest:
                if c in needed:
                    needed.add(node)
                    break
            continue
        if node in visited:
            continue
        visited.add(node)
        push(node)
        push(_DONE)
        child = node._c0  # the first edge in slots, the others in _crest (graph.py, Note
        if child is not None:  # [Edges in slots])
            deps[child] = deps.get(child, 0) + 1
            if child not in visited:
                push(child)
        crest = node._crest
        if crest:
            for child, _ in crest:
                if child is None:
                    continue
                deps[child] = deps.get(child, 0) + 1
                if child not in visited:
                    push(child)
    return deps, needed


def _dependencies(root_nodes, sinks=None):
    """How many edges lead into each node reachable from the roots (explicit stack, each node
    expanded once). Enough when every node runs; `_walk` also finds the nodes `inputs=` needs.
    sinks: a list that gets the nodes without edges (leaves' AccumulateGrad, mostly)."""
    deps = {}
    roots = set(root_nodes)
    stack = list(root_nodes)
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        child = node._c0  # the first edge in slots, the others in _crest (graph.py, Note
        crest = node._crest  # [Edges in slots]; a trailing (None, 0) is never kept in _crest)
        if child is not None:
            if child in deps:
                deps[child] += 1
            else:
                deps[child] = 1
                if child not in roots:
                    push(child)
        elif not crest and sinks is not None:
            sinks.append(node)
        if crest:
            for child, _ in crest:
                if child is not None:
                    if child in deps:
                        deps[child] += 1
                    else:
                        deps[child] = 1
                        if child not in roots:
                            push(child)
    return deps


_CARRIED = ()  # the node's gradient came straight from its one consumer (Note [The array path])
_SUM_TO = None  # ops.shape.sum_to, imported on first use (the ops import the engine)
_make = None  # _tensor._make (wraps _array_apply's arrays), imported with it
_raw = None  # ops._raw's state (its `enabled`: the raw execution's switch), imported with it


def _sum_to():
    global _SUM_TO, _make, _raw
    from ..ops.shape import sum_to
    from .._tensor import _make  # (the Tensor module imports the engine)
    from ..ops._raw import state as _raw
    _SUM_TO = sum_to
    return sum_to


def run_backward(roots, root_grads, retain_graph, create_graph, targets=None, capture=None,
                 site=NO_RAW):
    """Backpropagate from `roots` [(node, output_nr)] seeded with `root_grads`.

    targets: None to run every node (accumulating into leaves), else the set of nodes that must
    be reached; capture: {(node, output_nr): slot} for autograd.grad-style results, returned as a
    dict slot -> gradient (these nodes themselves are not run unless needed otherwise);
    site: the user's line of the call, when the caller has it already (one stack walk less).
    """
    sum_to = _SUM_TO or _sum_to()  # the engine undoes broadcasting with a registered op
    root_nodes = [roots[0][0]] if len(roots) == 1 else list(dict.fromkeys(n for n, _ in roots))
    deps, needed = _count(root_nodes, targets)                          # 1. count the edges
    if site is NO_RAW:
        site = user_site()
    run = _Backward(deps, needed, capture, retain_graph, create_graph, site, sum_to)
    run.seed(roots, root_grads)

    state = grad_mode._state
    prev = state.enabled, state.in_backward, state.backward_site
    state.enabled, state.in_backward, state.backward_site = create_graph, True, site
    _final_callbacks.append([])
    try:
        ready = [n for n in root_nodes if n not in deps and (needed is None or n in needed)]
        hub = _PROF_HUB[0]  # (a profiler: each node in its range, Note [Profiler hooks])
        if create_graph or _anomaly.enabled or hub is not None:         # 2. run the nodes
            run.tensors(ready, hub)
        else:
            run.arrays(ready)  # the same, on bare arrays where nothing observes them
        _run_callbacks(_final_callbacks[-1])                            # 3. finish
    finally:
        _final_callbacks.pop()
        state.enabled, state.in_backward, state.backward_site = prev
    return run.captured


def _count(root_nodes, targets):
    """Phase 1: how many edges lead into each node, and which nodes must run (None: all)."""
    if targets is None:
        return _dependencies(root_nodes), None
    # Only the nodes on a path to a target run (`needed`). When every path ends at a target
    # (each node without edges is one: autograd.grad of all the leaves a graph has, as in an
    # HVP) that is every node, and the counting pass is enough
    sinks = []
    deps = _dependencies(root_nodes, sinks)
    for n in sinks:
        if n not in targets:
            return _walk(root_nodes, targets)
    return deps, None


def _run_callbacks(callbacks):
    """Phase 3: the callbacks queued during the pass (they may queue more)."""
    i = 0
    while i < len(callbacks):
        callbacks[i]()
        i += 1


# Note [The array path]
# ~~~~~~~~~~~~~~~~~~~~~
# Most backward passes (loss.backward() in a training step) build no graph of the backward, and
# nobody looks at the gradients on their way to the leaves. Then a node's formulas need not run
# on Tensors: each op's formulas have generated twins on arrays (ops/_raw.py), and the engine
# hands bare arrays from node to node (`_Backward.arrays`). That saves, per node, a Tensor per
# gradient, the grad-mode dispatch of every op in its formulas and the apply() frame: most of
# a small op's backward cost (bench W1, W3). Three shortcuts on top of it:
#   - a one-edge node's plain backward (`_bw1`/`_bw2`) is called from the loop itself;
#   - a gradient for a node with no other incoming edge is carried: that node is ready, and the
#     stack would pop it next, so it runs next with the gradient in hand (no buffer, count or
#     trip through `ready`);
#   - a leaf's array gradient goes into .grad directly (no AccumulateGrad.apply), adopted
#     without a copy when reference counts prove that nothing else holds it.
# The Tensor path (`_Backward.tensors`, which create_graph and anomaly mode take) is the
# reference, and the array path must give what it gives: the same nodes run in the same order
# (leaves as soon as they are ready, as PyTorch runs AccumulateGrad first), every gradient is
# reduced to its input's shape and dtype (check_grad_output's rules), saved tensors are released
# as each node runs (with the site that freed them, for a second backward's error), and errors
# name the node's forward site. A node that someone observes (hooks, retain_grad, capture by
# autograd.grad), that has no array twin, or whose twin declines (NO_RAW) runs through the
# Tensor path's `apply` inside the array loop.


class _Backward:
    """One backward pass: what each node still waits for (`deps`), the gradients summed so far
    (`buffers`), and what autograd.grad asked to capture."""
    __slots__ = ("deps", "needed", "buffers", "owned", "capture", "capture_nodes", "captured",
                 "retain_graph", "create_graph", "freed_at", "sum_to")

    def __init__(self, deps, needed, capture, retain_graph, create_graph, site, sum_to):
        self.deps, self.needed, self.sum_to = deps, needed, sum_to
        self.buffers = {}  # node -> [summed gradient per output]
        self.owned = set()  # (node, nr) whose buffer holds a sum this engine made: safe to add into
        self.capture = capture
        self.capture_nodes = {n for n, _ in capture} if capture else ()
        self.captured = {}
        self.retain_graph, self.create_graph = retain_graph, create_graph
        self.freed_at = None if retain_graph else site  # named by a later second-backward error

    def seed(self, roots, root_grads):
        buffers = self.buffers
        for (node, nr), g in zip(roots, root_grads):
            if g.__class__ is _ndarray and node._nout == 1 and node not in buffers:
                buffers[node] = [g]  # (backward()'s implicit gradient: an array, as the paths pass on)
            else:
                _add_to_buffer(buffers, self.owned, node, nr, g, self.create_graph)

    def tensors(self, ready, hub=None):
        """Phase 2, the reference: every node through its Tensor-level apply."""
        buffers, apply, hand_on = self.buffers, self.apply, self.hand_on
        if hub is not None:
            apply = functools.partial(hub.node, apply)
        leaves = []
        while ready:
            node = ready.pop()
            grads = buffers.pop(node, None)
            outs = None  # (no stale references: AccumulateGrad counts them to adopt, not copy)
            if grads is not None:
                outs = apply(node, grads)
            hand_on(node, outs, ready, leaves, False)

    def arrays(self, ready):
        """Phase 2 without create_graph or anomaly mode: the Tensor path's results on bare arrays
        where nothing observes them (Note [The array path])."""
        buffers, deps, needed, capture_nodes = self.buffers, self.deps, self.needed, self.capture_nodes
        freed_at, sum_to, apply, hand_on = self.freed_at, self.sum_to, self.apply, self.hand_on
        release = not self.retain_graph
        leaves = []
        carried = g = None  # a node whose one incoming gradient skipped the buffers: it is `g`
        while carried is not None or ready:
            if carried is None:
                node = ready.pop()
                grads = buffers.pop(node, None)
                g = None if grads is None else grads[0]
            else:
                node, carried, grads = carried, None, _CARRIED
            outs = None
            if grads is not None:
                crest = node._crest  # one edge: input 0's, or input 1's alone (W @ x, W fixed)
                ext = node._ext  # (hooks, retain_grad: graph.py's _NodeExtras, or None)
                if node._array_apply is None or node in capture_nodes or ext is not None and (
                        ext.tensor_hooks or ext.retain or ext.pre_hooks or ext.hooks):
                    if node.__class__ is AccumulateGrad and g.__class__ is _ndarray and \
                            ext is None and node not in capture_nodes:
                        # a leaf's array gradient, nothing observing it. The array becomes
                        # .grad itself when only this frame holds it (`g`, getrefcount's
                        # argument) and owns its memory
                        grads = None
                        own = _getrefcount(g) == 2 and (  # (before the call: its arguments
                            g.base is None or _sole_view(g))  # count)
                        if _accumulate_array(node.variable, g, own):
                            g = None
                            node._freed = freed_at
                            continue
                        grads = [g]  # (hooks, a sparse or differentiable .grad: apply())
                elif crest and (node._c0 is not None or len(crest) > 1):
                    # several edges: the formulas' twins give each input's gradient, as arrays
                    try:
                        outs = node._arrays_apply(g, release)
                    except Exception as e:
                        err = _error_in_backward(e, node)
                        if err is None:
                            raise
                        raise err from e
                    if outs is NO_RAW:
                        outs = None
                    else:
                        g = grads = None
                        if release:  # (_arrays_apply has released the saved tensors)
                            node._freed = freed_at
                else:
                    r = _edge_gradient(node, g, crest, release)
                    if r is not NO_RAW:  # the edge's gradient: an array, a Tensor or None
                        g = r
                        grads = r = None
                        if release:
                            node._freed = freed_at
                        i = 1 if crest else 0
                        child, nr = crest[0] if crest else (node._c0, node._n0)
                        if child is None or (needed is not None and child not in needed):
                            continue
                        if g is not None:
                            shape, dtype = node._meta[i]
                            if g.__class__ is _ndarray:
                                if g.shape != shape or g.dtype is not dtype.np:
                                    g = _to_input(node, i, g, shape, dtype, sum_to)
                            elif g._data.shape != shape or g.dtype is not dtype:
                                g = check_grad_output(node, i, g, shape, dtype, sum_to)
                            if child._nout == 1 and child not in buffers:
                                if deps[child] == 1:  # its last edge: it runs next, with `g`
                                    carried = child
                                    continue
                                buffers[child] = [g]
                            else:
                                _add_to_buffer(buffers, self.owned, child, nr, g, False)
                            g = None
                        d = deps[child] - 1
                        deps[child] = d
                        if d == 0:
                            ready.append(child)
                        continue
                if outs is None:  # the Tensor path, for this node
                    if grads is _CARRIED:
                        grads = [g]
                    g = None  # (AccumulateGrad counts the references to adopt without a copy)
                    outs = apply(node, grads)
            c = hand_on(node, outs, ready, leaves, True)
            if c is not None:
                carried, g = c
                c = None

    def apply(self, node, grads):
        """A node's Tensor-level run: hooks, capture by autograd.grad, apply() (checked in anomaly
        mode), post hooks, the release of its saved tensors. Its gradients, or None if it does
        not run."""
        if grads[0].__class__ is _ndarray:  # (an array from the array path)
            grads[0] = _make(grads[0])
        ext = node._ext
        if ext is not None and (ext.tensor_hooks or ext.retain or ext.pre_hooks):
            grads = _pre_hooks(node, grads)
        if node in self.capture_nodes:
            capture, captured, needed = self.capture, self.captured, self.needed
            for nr, g in enumerate(grads):
                slot = capture.get((node, nr))
                if slot is not None:
                    captured[slot] = g
            g = None
            # a captured node runs only when other targets lie beyond it
            if isinstance(node, AccumulateGrad) or not (
                    any(c in needed for c, _ in node.next_functions if c is not None)
                    if needed is not None else node._c0 is not None or bool(node._crest)):
                return None
        try:
            if _anomaly.enabled:
                outs = apply_checked(node, grads, self.create_graph)
            else:
                outs = node.apply(grads, self.create_graph)
        except Exception as e:
            err = _error_in_backward(e, node)
            if err is None:
                raise
            raise err from e
        ext = node._ext
        if ext is not None and ext.hooks:
            outs = _post_hooks(node, outs, grads)
        if not self.retain_graph:
            if node._saved:
                node.release_saved()
            node._freed = self.freed_at
        return outs

    def hand_on(self, node, outs, ready, leaves, plain):
        """Each edge's gradient from `outs` (None: the node gave none) into its child's buffer;
        a child whose last edge this was becomes ready. plain (the array path): a leaf's array
        gradient accumulates at once, and the child made ready last is returned with its
        gradient, (child, g), to be carried (Note [The array path]); else None."""
        deps, needed, buffers = self.deps, self.needed, self.buffers
        meta = node._meta
        crest = node._crest
        if not crest:  # one edge (y * 2, y.tanh()): the loop below, for i = 0 alone
            child = node._c0
            if child is None or (needed is not None and child not in needed):
                return None
            if outs is not None:
                g = outs[0]
                if g is not None:
                    shape, dtype = meta[0]
                    if g._data.shape != shape or g.dtype is not dtype:
                        g = check_grad_output(node, 0, g, shape, dtype, self.sum_to)
                    nr = node._n0
                    buf = buffers.get(child)
                    if buf is None:
                        if child._nout == 1:
                            buffers[child] = [g]
                        else:
                            buf = buffers[child] = [None] * child._nout
                            buf[nr] = g
                    else:
                        _add_to_buffer(buffers, self.owned, child, nr, g, self.create_graph)
            d = deps[child] - 1
            deps[child] = d
            if d == 0:  # (a leaf too: it runs next either way, as `leaves` below makes it)
                ready.append(child)
            return None
        carry = carry_g = None
        # the first edge is in slots, the others in _crest (graph.py, Note [Edges in slots])
        for i, (child, nr) in enumerate(((node._c0, node._n0),) + crest):
            if child is None or (needed is not None and child not in needed):
                continue
            if outs is not None:
                g = outs[i]
                if g is not None:
                    shape, dtype = meta[i]  # (issue 15: checked)
                    if g.__class__ is _ndarray:  # (from _arrays_apply)
                        if g.shape != shape or g.dtype is not dtype.np:
                            g = _to_input(node, i, g, shape, dtype, self.sum_to)
                        if child.__class__ is AccumulateGrad and deps[child] == 1 and \
                                plain and child._ext is None and g.__class__ is _ndarray \
                                and child not in buffers and child not in self.capture_nodes:
                            # a leaf whose only gradient this is: ready now, and it would
                            # run next (leaves first, below). It accumulates here
                            outs[i] = None  # (then `g` is the only reference, if fresh)
                            own = _getrefcount(g) == 2 and (g.base is None or _sole_view(g))
                            if _accumulate_array(child.variable, g, own):
                                g = None
                                deps[child] = 0
                                child._freed = self.freed_at
                                continue
                    elif g._data.shape != shape or g.dtype is not dtype:
                        g = check_grad_output(node, i, g, shape, dtype, self.sum_to)
                    if child._nout == 1 and child not in buffers:
                        if plain and deps[child] == 1 and child.__class__ is not AccumulateGrad:
                            # its only gradient: the child is ready. The last child made ready
                            # here is the one the stack would pop next: it is carried, the one
                            # before it goes onto the stack
                            if carry is not None:
                                buffers[carry] = [carry_g]
                                ready.append(carry)
                            carry, carry_g = child, g
                            deps[child] = 0
                            continue
                        buffers[child] = [g]
                    else:
                        _add_to_buffer(buffers, self.owned, child, nr, g, self.create_graph)
            d = deps[child] - 1
            deps[child] = d
            if d == 0:
                if child.__class__ is AccumulateGrad:
                    leaves.append(child)
                else:
                    ready.append(child)
        if leaves:  # leaves accumulate as soon as they are ready (PyTorch runs AccumulateGrad
            if carry is not None:  # first): post-accumulate hooks and DDP buckets fire early
                buffers[carry] = [carry_g]  # (the carried node goes onto the stack below them)
                ready.append(carry)
                carry = None
            ready.extend(leaves)
            leaves.clear()
        return None if carry is None else (carry, carry_g)


def _edge_gradient(node, g, crest, release):
    """A one-edge node's gradient for its edge from its array twin (an array, a Tensor or None),
    or NO_RAW when it must run apply(). The plain backward is called directly in the common
    case (an array gradient, the saved values in place: OpNode._array_apply's first test)."""
    bw = node._bw1 if not crest else node._bw2
    saved = node._saved
    if bw is not None and g.__class__ is _ndarray and saved is not RELEASED and _raw.enabled \
            and not _fw_state.levels:
        dt = g.dtype
        if dt.kind in "fc":
            try:
                r = bw(node, saved, g, dt, release)
            except Exception:  # (_array_apply runs it again and says why)
                r = NO_RAW
            if r.__class__ is _ndarray:
                return r
            if r is not NO_RAW:
                r = node._raw_result(r, g, saved, 1 if crest else 0, release)
                if r is not NO_RAW:
                    return r
    try:
        return node._array_apply(g, release) if not crest else node._array_apply(g, release, 1)
    except Exception as e:
        err = _error_in_backward(e, node)
        if err is None:
            raise
        raise err from e


def _to_input(node, i, g, shape, dtype, sum_to):
    """check_grad_output for an array gradient: a bias's (the leading dimension of a gradient
    of the input's dtype summed away, as sum_to's forward does it) stays an array; any other
    case is checked and reduced as a Tensor."""
    gs = g.shape
    if shape and len(gs) == len(shape) + 1 and gs[1:] == shape and g.dtype is dtype.np:
        return _add_reduce(g, axis=0)  # (sum_to's forward in this case: an array, as it is)
    return check_grad_output(node, i, _make(g), shape, dtype, sum_to)


def _sole_view(g):
    """Whether the array g, a view, is all of a base that nothing else holds (g.base, this
    frame's `b` and getrefcount's argument): a weight's gradient formed transposed and
    transposed back (mm's formulas for a `weight.t()` operand). Then g owns that memory as a
    fresh array would, and becomes .grad without a copy, as PyTorch's AccumulateGrad steals a
    gradient whose tensor nothing else holds, a view or not."""
    b = g.base
    return b.base is None and b.__class__ is _ndarray and b.size == g.size and \
        _getrefcount(b) == 3


def _accumulate_array(var, g, own):
    """AccumulateGrad's work for an array gradient `g` of leaf `var` with no hooks (True), or
    False: then apply() does it. own: nothing else holds `g` (it becomes .grad, no copy)."""
    if var._hooks or var._post_acc_hooks:
        return False
    with grad_lock:  # (issue 15: concurrent backward() into one leaf)
        old = var._grad
        if old is None:
            if not own:
                return False
            if g.strides != var._data.strides and not obeys_layout(g, var._data):
                # (a transposed or channels-last leaf: new_empty_strided(...).copy_(g))
                var._grad = t = _make(in_layout_of(_np, g, var._data))
                t._vc[0] = 0 if dense_order(var._data) is None else 1   # (a clone, or
                #  new_empty_strided(...).copy_(g))
            else:
                var._grad = _make(g)
        elif old.is_sparse or old._requires_grad or old._data.__class__ is not _ndarray or \
                old._data.shape != g.shape or old._data.dtype is not g.dtype:
            return False
        else:
            old._data += g
            bump_version_in_backward(old._vc)
    var._reached_by = last_backward[0]
    return True


def _error_in_backward(exc, node):
    """The exception to raise for `exc` from node.apply: it names the user's line that created
    the node (and, for a second backward, the backward() that freed the graph), chained to the
    original. None: re-raise as is (the message already says where)."""
    if getattr(exc, "_ndgrad_where", False):
        return None
    if node._saved is RELEASED and isinstance(exc, RuntimeError) and \
            str(exc).startswith(ERR_BACKWARD_TWICE):
        return backward_twice_error(node)
    msg = (f"{exc}\nndgrad: raised in the backward of {node.name()}, whose forward was called "
           f"at {format_site(node._site)}.")
    try:
        new = type(exc)(msg)
    except Exception:
        new = RuntimeError(msg)
    return annotated(new)


def _add_to_buffer(buffers, owned, node, nr, g, create_graph):
    buf = buffers.get(node)
    if buf is None:
        buf = buffers[node] = [None] * node._nout
    prev = buf[nr]
    if g.__class__ is _ndarray:  # (arrays from _array_apply: see run_backward)
        if prev is g:  # one array down two edges (x + x): one Tensor, summed out of place
            prev = buf[nr] = g = _make(g)
        else:
            g = _make(g)
    if prev.__class__ is _ndarray:
        prev = buf[nr] = _make(prev)
    if prev is None:
        buf[nr] = g
    elif not create_graph and (node, nr) in owned and prev.dtype is g.dtype and \
            prev._data.shape == g._data.shape and not _fw_state.levels:  # (tangents: add out of place)
        prev._data += g._data
        prev._vc[0] += 1  # (an engine-made sum: versions as PyTorch's, no site to remember)
    elif not create_graph and prev is not g and _sole_large(prev, g):
        # PyTorch adds in place into one of two distinct fresh gradients: here into the first
        # one when reference counts prove that only this buffer holds it and its memory (no
        # other buffer, hook, capture or view): no fresh array of the size (bench W4)
        prev._data += g._data
        prev._vc[0] += 1
        owned.add((node, nr))
    else:
        buf[nr] = s = prev + g
        if not create_graph:
            owned.add((node, nr))
            if prev is not g:  # PyTorch adds in place into one of two distinct fresh gradients
                s._vc[0] = 1


_IN_PLACE_MIN = 2048  # elements: below this a fresh sum costs less than the checks


def _sole_large(prev, g):
    """Whether the buffered gradient `prev` may take `g` in place: a large NumPy array of g's
    shape and dtype that only the buffer holds (its Tensor: the buffer's slot, the caller's
    name, the argument; its array: the Tensor, the name, the argument), owning its memory."""
    a = prev._data
    return a.__class__ is _ndarray and a.size >= _IN_PLACE_MIN and prev.dtype is g.dtype and \
        a.shape == g._data.shape and not _fw_state.levels and _getrefcount(prev) == 4 and \
        _getrefcount(a) == 3 and a.base is None and a.flags.writeable


def _pre_hooks(node, grads):
    if node._tensor_hooks:
        for nr, fn in list(node._tensor_hooks.values()):
            if grads[nr] is not None:
                r = fn(grads[nr])
                if r is not None:
                    check_hook_value(fn, grads[nr], r)  # (issue 15: no silent corruption)
                    grads[nr] = r
    if node._retain:
        for nr, ref in node._retain.items():
            t = ref()
            if t is not None and grads[nr] is not None:  # PyTorch's retain_grad hook:
                g = grads[nr]                               # a clone, then out-of-place sums
                with grad_lock:  # (issue 15: concurrent backward())
                    t._grad = g.clone() if t._grad is None else t._grad + g
    if node._pre_hooks:
        for fn in list(node._pre_hooks.values()):
            r = fn(tuple(grads))
            if r is not None:
                check_hook_values(fn, r, grads)
                grads = list(r)
    return grads


def _post_hooks(node, outs, grads):
    n = len(node.next_functions)   # one grad_input per edge, as next_functions lists them
    if len(outs) < n:          # (a node's fast path may return only the first ones)
        outs = list(outs) + [None] * (n - len(outs))
    for fn in list(node._hooks.values()):
        r = fn(tuple(outs), tuple(grads))
        if r is not None:
            check_hook_values(fn, r, outs)
            outs = list(r)
    return outs

