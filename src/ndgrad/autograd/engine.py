"""The backward engine: iterative, with dependency counting (PyTorch's design, in Python).

1. Walk the graph once from the roots (an explicit stack, never recursion) and count, for each
   node, how many edges lead into it.
2. Pop a ready node (every consumer has delivered its gradient), run its formulas on the summed
   incoming gradients, reduce each result to the input's shape (`sum_to`) and dtype, add it into
   the next node's buffer, and decrement that node's count; at zero it is ready.
3. Unless `retain_graph`, free each node's saved tensors as soon as it has run.

Without `create_graph`, a node with nothing observing its gradients (no hooks, retain_grad,
capture, anomaly mode) runs its formulas' raw twins on the incoming gradient's array
(`node._array_apply` for one input edge, input 0's or input 1's alone; `node._arrays_apply` for
several) and hands the results on as bare NumPy arrays; whatever needs a Tensor (a leaf's
AccumulateGrad, hooks, sums of several gradients, the Tensor-level apply) wraps them first. When
a one-edge node's gradient goes to a node with no other incoming edge, that node is ready and
would be popped next: it runs next with the gradient in hand (no buffer, count or stack).
"""
from . import grad_mode
from .graph import (AccumulateGrad, RELEASED, NO_RAW, ERR_BACKWARD_TWICE, annotated,
                    backward_twice_error, format_site, user_site)
from .graph import check_hook_value, check_hook_values, check_grad_output, grad_lock
from .graph import bump_version_in_backward, last_backward
from .anomaly_mode import _state as _anomaly, apply_checked
from .forward_ad import _state as _fw_state
from .._backend import numpy as _np
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


_CARRIED = ()  # run_backward's marker: the node's gradient came straight from its one consumer
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
    if targets is None:
        deps, needed = _dependencies(root_nodes), None
    else:
        # Only the nodes on a path to a target run (`needed`). When every path ends at a
        # target (each node without edges is one: autograd.grad of all the leaves a graph
        # has, as in an HVP) that is every node, and the counting pass is enough
        sinks = []
        deps, needed = _dependencies(root_nodes, sinks), None
        for n in sinks:
            if n not in targets:
                deps, needed = _walk(root_nodes, targets)
                break
    buffers = {}  # node -> [summed gradient per output]
    owned = set()  # (node, nr) whose buffer holds a sum this engine made: safe to add into
    for (node, nr), g in zip(roots, root_grads):
        if g.__class__ is _ndarray and node._nout == 1 and node not in buffers:
            buffers[node] = [g]  # (backward()'s implicit gradient: an array, as the paths pass on)
        else:
            _add_to_buffer(buffers, owned, node, nr, g, create_graph)
    captured = {}
    capture_nodes = {n for n, _ in capture} if capture else ()
    if site is NO_RAW:
        site = user_site()
    freed_at = None if retain_graph else site  # named by a later second-backward error

    state = grad_mode._state
    prev = state.enabled, state.in_backward, state.backward_site
    state.enabled, state.in_backward, state.backward_site = create_graph, True, site
    _final_callbacks.append([])
    try:
        ready = [n for n in root_nodes if n not in deps and (needed is None or n in needed)]
        # the array paths below: no graph of the backward, no anomaly mode (and, per node,
        # no capture, hooks or retain_grad)
        plain = not create_graph and not _anomaly.enabled
        leaves = []
        carried = None  # a node whose one incoming gradient skipped the buffers: it is `g`
        carry = carry_g = None  # (a node of several edges: the child it will carry, its grad)
        while carried is not None or ready:
            if carried is None:
                node = ready.pop()
                grads = buffers.pop(node, None)
                outs = g = None  # no stale references: AccumulateGrad counts them (no copy)
                if grads is not None:
                    g = grads[0]
            else:  # (see below: the node the previous one's gradient went to, straight on)
                node = carried
                carried = outs = None
                grads = _CARRIED
            if grads is not None:
                array_apply = node._array_apply
                crest = node._crest  # one edge: input 0's, or input 1's alone (W @ x, W fixed)
                ext = node._ext  # (hooks, retain_grad: graph.py's _NodeExtras, or None)
                if array_apply is None or not plain or not (
                        ext is None or not (ext.tensor_hooks or ext.retain or ext.pre_hooks or
                                            ext.hooks)) or node in capture_nodes:
                    if node.__class__ is AccumulateGrad and g.__class__ is _ndarray and \
                            ext is None and plain and node not in capture_nodes:
                        # a leaf's array gradient, nothing observing it: into .grad without
                        # a Tensor-level apply. The array becomes .grad itself when only this
                        # frame holds it (`g` and getrefcount's argument) and owns its memory
                        grads = None
                        own = _getrefcount(g) == 2 and g.base is None
                        if _accumulate_array(node.variable, g, own):
                            g = None
                            node._freed = freed_at
                            continue
                        grads = [g]  # (hooks, a sparse or differentiable .grad: apply())
                elif crest and (node._c0 is not None or len(crest) > 1):
                    # several edges: the formulas' raw twins give each input's gradient,
                    # arrays handed on as they are (the loop at the end, for arrays)
                    try:
                        outs = node._arrays_apply(g, not retain_graph)
                    except Exception as e:
                        err = _error_in_backward(e, node)
                        if err is None:
                            raise
                        raise err from e
                    if outs is NO_RAW:
                        outs = None
                    else:
                        g = grads = None
                        if not retain_graph:  # (_arrays_apply has released the saved tensors)
                            node._freed = freed_at
                else:
                    # the edge's formula: its plain backward straight from here in the common
                    # case (an array gradient, the saved values in place: OpNode._array_apply's
                    # first test, one frame less per node), else through _array_apply
                    bw = node._bw1 if not crest else node._bw2
                    saved = node._saved
                    r = NO_RAW
                    if bw is not None and g.__class__ is _ndarray and saved is not RELEASED \
                            and _raw.enabled and not _fw_state.levels:
                        dt = g.dtype
                        if dt.kind in "fc":
                            try:
                                r = bw(node, saved, g, dt, not retain_graph)
                            except Exception:  # (_array_apply runs it again and says why)
                                r = NO_RAW
                            if r.__class__ is not _ndarray and r is not NO_RAW:
                                r = node._raw_result(r, g, saved, 1 if crest else 0,
                                                     not retain_graph)
                    if r is NO_RAW:
                        try:
                            r = array_apply(g, not retain_graph) if not crest else \
                                array_apply(g, not retain_graph, 1)
                        except Exception as e:
                            err = _error_in_backward(e, node)
                            if err is None:
                                raise
                            raise err from e
                    if r is not NO_RAW:  # the edge's gradient: an array, a Tensor or None
                        g = r
                        grads = r = None
                        if not retain_graph:  # (_array_apply has released the saved tensors)
                            node._freed = freed_at
                        if crest:
                            i = 1
                            child, nr = crest[0]
                        else:
                            i = 0
                            child = node._c0
                            nr = node._n0
                        if child is None or (needed is not None and child not in needed):
                            continue
                        if g is not None:
                            shape, dtype = node._meta[i]
                            if g.__class__ is _ndarray:
                                if g.shape != shape or g.dtype is not dtype.np:
                                    g = _to_input(node, i, g, shape, dtype, sum_to)
                            elif g._data.shape != shape or g.dtype is not dtype:
                                g = check_grad_output(node, i, g, shape, dtype, sum_to)
                            buf = buffers.get(child)
                            if buf is None and child._nout == 1:
                                if deps[child] == 1:
                                    # this was the child's last edge: it is ready, and the
                                    # stack would pop it next. It runs next with `g` as its
                                    # gradient, no buffer, no count, no trip through `ready`
                                    carried = child
                                    continue
                                buffers[child] = [g]
                            else:
                                _add_to_buffer(buffers, owned, child, nr, g, create_graph)
                            g = None
                        d = deps[child] - 1
                        deps[child] = d
                        if d == 0:
                            ready.append(child)
                        continue
                if outs is None:  # the general path: Tensors, through apply()
                    if grads is _CARRIED:
                        grads = [_make(g) if g.__class__ is _ndarray else g]
                    elif grads[0].__class__ is _ndarray:  # (an array from _array_apply: see above)
                        grads[0] = _make(grads[0])
                    g = None
                    ext = node._ext
                    if ext is not None and (ext.tensor_hooks or ext.retain or ext.pre_hooks):
                        grads = _pre_hooks(node, grads)
                    run = True
                    if node in capture_nodes:
                        for nr, g in enumerate(grads):
                            slot = capture.get((node, nr))
                            if slot is not None:
                                captured[slot] = g
                        g = None
                        # a captured node runs only when other targets lie beyond it
                        run = not isinstance(node, AccumulateGrad) and (any(
                            c in needed for c, _ in node.next_functions if c is not None)
                            if needed is not None else node._c0 is not None or bool(node._crest))
                    if run:
                        try:
                            if _anomaly.enabled:
                                outs = apply_checked(node, grads, create_graph)
                            else:
                                outs = node.apply(grads, create_graph)
                        except Exception as e:
                            err = _error_in_backward(e, node)
                            if err is None:
                                raise
                            raise err from e
                        ext = node._ext
                        if ext is not None and ext.hooks:
                            outs = _post_hooks(node, outs, grads)
                        if not retain_graph:
                            if node._saved:
                                node.release_saved()
                            node._freed = freed_at
            meta = node._meta
            crest = node._crest
            if not crest:  # one edge (y * 2, y.tanh()): the loop below, for i = 0 alone
                child = node._c0
                if child is None or (needed is not None and child not in needed):
                    continue
                if outs is not None:
                    g = outs[0]
                    if g is not None:
                        shape, dtype = meta[0]
                        if g._data.shape != shape or g.dtype is not dtype:
                            g = check_grad_output(node, 0, g, shape, dtype, sum_to)
                        nr = node._n0
                        buf = buffers.get(child)
                        if buf is None:
                            if child._nout == 1:
                                buffers[child] = [g]
                            else:
                                buf = buffers[child] = [None] * child._nout
                                buf[nr] = g
                        else:
                            _add_to_buffer(buffers, owned, child, nr, g, create_graph)
                d = deps[child] - 1
                deps[child] = d
                if d == 0:  # (a leaf too: it runs next either way, as `leaves` below makes it)
                    ready.append(child)
                continue
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
                                g = _to_input(node, i, g, shape, dtype, sum_to)
                            if child.__class__ is AccumulateGrad and deps[child] == 1 and \
                                    plain and child._ext is None and g.__class__ is _ndarray \
                                    and child not in buffers and child not in capture_nodes:
                                # a leaf whose only gradient this is: ready now, and it would
                                # run next (leaves first, below). It accumulates here
                                outs[i] = None  # (then `g` is the only reference, if fresh)
                                own = _getrefcount(g) == 2 and g.base is None
                                if _accumulate_array(child.variable, g, own):
                                    g = None
                                    deps[child] = 0
                                    child._freed = freed_at
                                    continue
                        elif g._data.shape != shape or g.dtype is not dtype:
                            g = check_grad_output(node, i, g, shape, dtype, sum_to)
                        if child._nout == 1 and child not in buffers:
                            if deps[child] == 1 and child.__class__ is not AccumulateGrad:
                                # its only gradient: the child is ready. The last child made
                                # ready here is the one the stack would pop next: it is carried
                                # (below), the one before it goes onto the stack
                                if carry is not None:
                                    buffers[carry] = [carry_g]
                                    ready.append(carry)
                                carry, carry_g = child, g
                                deps[child] = 0
                                continue
                            buffers[child] = [g]
                        else:
                            _add_to_buffer(buffers, owned, child, nr, g, create_graph)
                d = deps[child] - 1
                deps[child] = d
                if d == 0:
                    if child.__class__ is AccumulateGrad:
                        leaves.append(child)
                    else:
                        ready.append(child)
            if carry is not None:
                if leaves:  # (they run first: the carried node goes onto the stack below them)
                    buffers[carry] = [carry_g]
                    ready.append(carry)
                else:
                    carried, g = carry, carry_g
                carry = carry_g = None
            if leaves:  # leaves accumulate as soon as they are ready (PyTorch runs AccumulateGrad
                ready.extend(leaves)  # first): post-accumulate hooks and DDP buckets fire early
                leaves.clear()
        callbacks = _final_callbacks[-1]
        i = 0
        while i < len(callbacks):
            callbacks[i]()
            i += 1
    finally:
        _final_callbacks.pop()
        state.enabled, state.in_backward, state.backward_site = prev
    return captured


def _to_input(node, i, g, shape, dtype, sum_to):
    """check_grad_output for an array gradient: a bias's (the leading dimension of a gradient
    of the input's dtype summed away, as sum_to's forward does it) stays an array; any other
    case is checked and reduced as a Tensor."""
    gs = g.shape
    if shape and len(gs) == len(shape) + 1 and gs[1:] == shape and g.dtype is dtype.np:
        return _add_reduce(g, axis=0)  # (sum_to's forward in this case: an array, as it is)
    return check_grad_output(node, i, _make(g), shape, dtype, sum_to)


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

