"""A picture of the autograd graph: Graphviz DOT text, or a self-contained SVG.

    >>> import ndgrad as torch, ndgrad.viz as viz
    >>> loss = model(x).pow(2).mean()
    >>> viz.draw(loss, "graph.svg", params=dict(model.named_parameters()))

Boxes are the grad_fn nodes (named as `repr(t.grad_fn)` names them), blue boxes the leaves that
require grad (their AccumulateGrad: the parameter's name from `params` and its shape), the green
box the output tensor, and, with show_saved=True, orange boxes the tensors each node saved for
backward. Arrows follow the data, from the leaves to the output. The graph is walked with an
explicit stack (no recursion, so a 10^5-node chain draws), and the SVG layout is computed here:
layers by longest distance from the output, ordered within a layer by the mean position of
their consumers. Graphviz's `dot` is used only with engine="graphviz" (and when installed).
"""
from xml.sax.saxutils import escape

from ._tensor import Tensor

__all__ = ["to_dot", "draw"]

_COLORS = {"op": "lightgrey", "leaf": "lightblue", "output": "darkolivegreen1",
           "saved": "orange"}
_SVG_FILL = {"op": "#e6e6e6", "leaf": "#bfe1f2", "output": "#caff70", "saved": "#ffc870"}


def _shape(shape):
    return "(" + ", ".join(str(s) for s in shape) + ")"


def _saved_items(node):
    """(name, shape) of each tensor `node` saved for backward (without unpacking it)."""
    from .autograd.graph import SavedTensor
    saved = getattr(node, "_saved", None)
    if not saved or saved.__class__.__name__ == "_Released":
        return []
    items = saved.items() if isinstance(saved, (dict, SavedTensor)) else (
        (f"saved_{i}", s) for i, s in enumerate(saved))
    out = []
    for name, s in items:
        group = s if isinstance(s, tuple) else (s,)
        for j, one in enumerate(group):
            if not isinstance(one, SavedTensor):
                continue
            label = name if len(group) == 1 else f"{name}[{j}]"
            if one.tensor is not None:
                shape = one.tensor.shape
            elif one.data is not None:
                shape = one.data.shape
            else:
                shape = None
            out.append((label, shape))
    return out


def _graph(output, params=None, show_saved=False):
    """The graph as (nodes, edges): nodes[id] = (kind, label lines); edges (src, dst) point
    along the data flow."""
    from .autograd.graph import AccumulateGrad
    names = {id(t): n for n, t in (params or {}).items()}
    outputs = output if isinstance(output, (tuple, list)) else (output,)
    nodes, edges = {}, []
    ids = {}

    def nid(obj):
        k = ids.get(id(obj))
        if k is None:
            k = ids[id(obj)] = f"n{len(ids)}"
        return k

    keep = []  # hold objects whose ids are used (so ids are not reused while drawing)
    stack = []
    for o in outputs:
        if not isinstance(o, Tensor):
            raise TypeError(f"expected Tensor outputs, got {type(o).__name__}")
        keep.append(o)
        oid = nid(o)
        label = [names.get(id(o), "output"), _shape(o.shape)]
        nodes[oid] = ("output", label)
        fn = o.grad_fn
        if fn is None and o.requires_grad:
            fn = o._get_accumulator()
        if fn is not None:
            edges.append((nid(fn), oid))
            stack.append(fn)
    seen = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        keep.append(node)
        me = nid(node)
        if isinstance(node, AccumulateGrad):
            var = node.variable
            nodes[me] = ("leaf", [names.get(id(var), ""), _shape(var.shape)]
                         if id(var) in names else [_shape(var.shape)])
            continue
        nodes[me] = ("op", [node.name()])
        if show_saved:
            for k, (label, shape) in enumerate(_saved_items(node)):
                sid = f"{me}s{k}"
                nodes[sid] = ("saved", [label] + ([_shape(shape)] if shape is not None else []))
                edges.append((sid, me))
        for child, _ in node.next_functions:
            if child is None:
                continue
            edges.append((nid(child), me))
            if id(child) not in seen:
                stack.append(child)
    # an AccumulateGrad whose label is the bare shape reads better with its name absent
    return nodes, list(dict.fromkeys(edges))


def to_dot(output, params=None, show_saved=False):
    """The autograd graph of `output` as Graphviz DOT source."""
    nodes, edges = _graph(output, params, show_saved)
    lines = ["digraph {",
             '\tgraph [rankdir=TB size="12,12"]',
             '\tnode [align=left fontname=monospace fontsize=10 height=0.2 ranksep=0.1 '
             'shape=box style=filled]']
    for k, (kind, label) in nodes.items():
        text = "\\n".join(s.replace('"', '\\"') for s in label if s)
        lines.append(f'\t{k} [label="{text}" fillcolor={_COLORS[kind]}]')
    for a, b in edges:
        style = " [style=dashed]" if nodes[a][0] == "saved" else ""
        lines.append(f"\t{a} -> {b}{style}")
    lines.append("}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- SVG, laid out here

_CHAR_W, _LINE_H, _PAD, _GAP_X, _GAP_Y = 7.0, 14.0, 8.0, 24.0, 46.0


def _layout(nodes, edges):
    """Layer = longest path to the output (consumers above producers in data-flow terms)."""
    succ = {k: [] for k in nodes}   # data flows k -> succ
    pred = {k: [] for k in nodes}
    for a, b in edges:
        succ[a].append(b)
        pred[b].append(a)
    # topological order from the sinks back (Kahn, on the reversed edges)
    out_deg = {k: len(v) for k, v in succ.items()}
    ready = [k for k, d in out_deg.items() if d == 0]
    order = []
    while ready:
        k = ready.pop()
        order.append(k)
        for p in pred[k]:
            out_deg[p] -= 1
            if out_deg[p] == 0:
                ready.append(p)
    depth = {}
    for k in order:  # every consumer of k is placed before k
        depth[k] = max((depth[s] + 1 for s in succ[k]), default=0)
    layers = {}
    for k in order:
        layers.setdefault(depth[k], []).append(k)
    size = {}
    for k, (_, label) in nodes.items():
        lines = [s for s in label if s] or [""]
        size[k] = (max(len(s) for s in lines) * _CHAR_W + 2 * _PAD,
                   len(lines) * _LINE_H + 2 * _PAD - 4)
    x_center, pos = {}, {}
    nlayers = max(layers) + 1 if layers else 0
    y = _GAP_Y / 2
    row_y = {}
    for d in range(nlayers - 1, -1, -1):  # producers (deepest) at the top
        row_y[d] = y
        y += max(size[k][1] for k in layers[d]) + _GAP_Y
    height = y - _GAP_Y / 2
    width = 0.0
    for d in range(nlayers):  # the output first; each layer ordered by its consumers' places
        row = layers[d]
        if d:
            row.sort(key=lambda k: sum(x_center[s] for s in succ[k]) / max(len(succ[k]), 1))
        x = _GAP_X / 2
        for k in row:
            w, h = size[k]
            pos[k] = (x, row_y[d], w, h)
            x_center[k] = x + w / 2
            x += w + _GAP_X
        width = max(width, x - _GAP_X / 2)
    # center each row in the picture
    for d in range(nlayers):
        row = layers[d]
        right = max(pos[k][0] + pos[k][2] for k in row)
        shift = (width - right - _GAP_X / 2) / 2
        for k in row:
            x0, y0, w, h = pos[k]
            pos[k] = (x0 + shift, y0, w, h)
    return pos, width + _GAP_X / 2, height + _GAP_Y / 2


def _svg(nodes, edges):
    pos, width, height = _layout(nodes, edges)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.1f} {height:.1f}" font-family="monospace" font-size="11">',
           "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
           "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\">"
           "<path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#333\"/></marker></defs>",
           f'<rect width="100%" height="100%" fill="white"/>']
    for a, b in edges:
        xa, ya, wa, ha = pos[a]
        xb, yb, wb, hb = pos[b]
        x1, y1 = xa + wa / 2, ya + ha
        x2, y2 = xb + wb / 2, yb
        if y2 < y1:  # never happens in a layered DAG, but keep arrows readable
            y1, y2 = ya, yb + hb
        my = (y1 + y2) / 2
        dash = ' stroke-dasharray="4 3"' if nodes[a][0] == "saved" else ""
        out.append(f'<g class="edge"><title>{a}-&gt;{b}</title>'
                   f'<path d="M {x1:.1f} {y1:.1f} C {x1:.1f} {my:.1f}, {x2:.1f} {my:.1f}, '
                   f'{x2:.1f} {y2:.1f}" fill="none" stroke="#333"{dash} '
                   f'marker-end="url(#arrow)"/></g>')
    for k, (kind, label) in nodes.items():
        x, y, w, h = pos[k]
        lines = [s for s in label if s]
        texts = "".join(
            f'<text x="{x + w / 2:.1f}" y="{y + _PAD + (i + 0.8) * _LINE_H - 2:.1f}" '
            f'text-anchor="middle">{escape(s)}</text>' for i, s in enumerate(lines))
        out.append(f'<g class="node {kind}"><title>{k}</title>'
                   f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="4" '
                   f'fill="{_SVG_FILL[kind]}" stroke="#333"/>{texts}</g>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def draw(output, path, params=None, show_saved=False, engine="builtin"):
    """Write the autograd graph of `output` to `path` as SVG; returns the SVG text.

    engine="builtin" lays the graph out in Python (no external program); engine="graphviz"
    runs Graphviz's `dot` on to_dot()'s output (it must be installed)."""
    if engine == "builtin":
        svg = _svg(*_graph(output, params, show_saved))
    elif engine == "graphviz":
        import shutil
        import subprocess
        dot = shutil.which("dot")
        if dot is None:
            raise RuntimeError("engine='graphviz' needs Graphviz's `dot` program on PATH; "
                               "use engine='builtin' instead")
        svg = subprocess.run([dot, "-Tsvg"], input=to_dot(output, params, show_saved),
                             capture_output=True, text=True, check=True).stdout
    else:
        raise ValueError(f"engine must be 'builtin' or 'graphviz', got {engine!r}")
    with open(path, "w", encoding="utf-8") as f:
        f.write(svg)
    return svg
