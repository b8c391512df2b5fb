"""The backward engine: iterative, with dependency counting (PyTorch's design, in Python).

1. Walk the graph once from the roots (an explicit stack, never recursion) and count, for each
   node, how many edges lead into it.
2. Pop a ready node (every consumer has delivered its gradient), run its formulas on the summed
   incoming gradients, reduce each result to the input's shape (`sum_to`) and dtype, add it into
   the next node's buffer, and decrement that node's count; at zero it is ready.
3. Unless `retain_graph`, free each node's saved tensors as soon as it has run.
"""
from . import grad_mode
from .graph import AccumulateGrad

__all__ = ["run_backward"]


def _walk(root_nodes):
    """Dependency counts for every node reachable from the roots, and a post-order."""
    deps = {}
    visited = set()
    order = []
    stack = [(n, False) for n in root_nodes]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)  # all of its children are already in `order`
            continue
        if node in visited:
            continue
        visited.add(node)
        stack.append((node, True))
        for child, _ in node.next_functions:
            if child is None:
                continue
            deps[child] = deps.get(child, 0) + 1
            if child not in visited:
                stack.append((child, False))
    return deps, order


def _needed_nodes(order, targets):
    """Nodes on some path to a target: only these run when `inputs` is given."""
    needed = set()
    for node in order:  # children come before their parents in post-order
        if node in targets or any(c in needed for c, _ in node.next_functions if c is not None):
            needed.add(node)
    return needed


def run_backward(roots, root_grads, retain_graph, create_graph, targets=None, capture=None):
    """Backpropagate from `roots` [(node, output_nr)] seeded with `root_grads`.

    targets: None to run every node (accumulating into leaves), else the set of nodes that must
    be reached; capture: {(node, output_nr): slot} for autograd.grad-style results, returned as a
    dict slot -> gradient (these nodes themselves are not run unless needed otherwise).
    """
    from ..ops.shape import sum_to  # the engine undoes broadcasting with a registered op

    root_nodes = list(dict.fromkeys(n for n, _ in roots))
    deps, order = _walk(root_nodes)
    needed = None if targets is None else _needed_nodes(order, targets)
    buffers = {}
    owned = set()  # ids of buffer tensors this engine allocated (safe to add into in place)
    for (node, nr), g in zip(roots, root_grads):
        _add_to_buffer(buffers, owned, node, nr, g, create_graph)
    captured = {}
    capture_nodes = {n for n, _ in capture} if capture else ()

    prev = grad_mode._state.enabled
    grad_mode._state.enabled = create_graph
    try:
        ready = [n for n in root_nodes if deps.get(n, 0) == 0 and (needed is None or n in needed)]
        while ready:
            node = ready.pop()
            grads = buffers.pop(node, None)
            outs = None
            if grads is not None:
                grads = _pre_hooks(node, grads)
                run = True
                if node in capture_nodes:
                    for nr, g in enumerate(grads):
                        slot = capture.get((node, nr))
                        if slot is not None:
                            captured[slot] = g
                    # a captured node runs only when other targets lie beyond it
                    run = not isinstance(node, AccumulateGrad) and any(
                        c in needed for c, _ in node.next_functions if c is not None)
                if run:
                    outs = node.apply(grads, create_graph)
                    if node._hooks:
                        outs = _post_hooks(node, outs, grads)
                    if not retain_graph:
                        node.release_saved()
            meta = node._meta
            for i, (child, nr) in enumerate(node.next_functions):
                if child is None or (needed is not None and child not in needed):
                    continue
                if outs is not None:
                    g = outs[i]
                    if g is not None:
                        shape, dtype = meta[i][0], meta[i][1]
                        if g._data.shape != shape:
                            g = sum_to(g, shape)
                        if g.dtype is not dtype:
                            g = g.to(dtype)
                        _add_to_buffer(buffers, owned, child, nr, g, create_graph)
                d = deps[child] - 1
                deps[child] = d
                if d == 0:
                    ready.append(child)
    finally:
        grad_mode._state.enabled = prev
    return captured


def _add_to_buffer(buffers, owned, node, nr, g, create_graph):
    buf = buffers.get(node)
    if buf is None:
        buf = buffers[node] = [None] * node._nout
    prev = buf[nr]
    if prev is None:
        buf[nr] = g
    elif not create_graph and id(prev) in owned and prev.dtype is g.dtype and prev._data.shape == g._data.shape:
        prev._data += g._data
    else:
        s = prev + g
        buf[nr] = s
        if not create_graph:
            owned.add(id(s))


def _pre_hooks(node, grads):
    if node._tensor_hooks:
        for nr, fn in list(node._tensor_hooks.values()):
            if grads[nr] is not None:
                r = fn(grads[nr])
                if r is not None:
                    grads[nr] = r
    if node._retain:
        for nr, ref in node._retain.items():
            t = ref()
            if t is not None and grads[nr] is not None:
                t._accumulate_grad(grads[nr], grad_mode._state.enabled)
    if node._pre_hooks:
        for fn in list(node._pre_hooks.values()):
            r = fn(tuple(grads))
            if r is not None:
                grads = list(r)
    return grads


def _post_hooks(node, outs, grads):
    for fn in list(node._hooks.values()):
        r = fn(tuple(outs), tuple(grads))
        if r is not None:
            outs = list(r)
    return outs
