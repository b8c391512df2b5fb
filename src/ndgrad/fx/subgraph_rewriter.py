"""torch.fx.subgraph_rewriter: replace_pattern(gm, pattern, replacement).

Both callables are traced; each occurrence of pattern's graph in gm's (same op kinds and
targets, the same constant arguments, pattern inputs matching any value consistently, and no
value computed inside the match used outside it except the output) is replaced by a copy of
replacement's graph. Matches are found from the end of the graph backwards and do not overlap
(PyTorch's rules); patterns with one output, as PyTorch's common use.
"""
from typing import NamedTuple

from .graph_module import GraphModule
from .node import Node, map_arg

__all__ = ["Match", "replace_pattern", "ReplacedPatterns"]


class Match(NamedTuple):
    anchor: Node
    nodes_map: dict


class ReplacedPatterns(NamedTuple):
    anchor: Node
    nodes_map: dict
    replacements: list


def _graph_of(x):
    from ._symbolic_trace import symbolic_trace
    if isinstance(x, GraphModule):
        return x.graph
    return symbolic_trace(x).graph


def _match(pn, gn, nodes_map):
    """Whether pattern node pn matches graph node gn (filling nodes_map)."""
    if pn in nodes_map:
        return nodes_map[pn] is gn
    if pn.op == "placeholder":
        nodes_map[pn] = gn
        return True
    if pn.op != gn.op or pn.target != gn.target:
        return False
    if len(pn.args) != len(gn.args) or set(pn.kwargs) != set(gn.kwargs):
        return False
    nodes_map[pn] = gn

    def match_arg(pa, ga):
        if isinstance(pa, Node):
            if not isinstance(ga, Node):         # a pattern input matches a literal too
                if pa.op != "placeholder":
                    return False
                if pa in nodes_map:
                    return not isinstance(nodes_map[pa], Node) and nodes_map[pa] == ga
                nodes_map[pa] = ga
                return True
            return _match(pa, ga, nodes_map)
        if isinstance(pa, (tuple, list)):
            return type(pa) is type(ga) and len(pa) == len(ga) and \
                all(match_arg(a, b) for a, b in zip(pa, ga))
        return not isinstance(ga, Node) and pa == ga
    ok = all(match_arg(a, b) for a, b in zip(pn.args, gn.args)) and \
        all(match_arg(pn.kwargs[k], gn.kwargs[k]) for k in pn.kwargs)
    if not ok:
        del nodes_map[pn]
    return ok


def _replace_pattern(gm, pattern, replacement):
    graph = gm.graph
    p_graph, r_graph = _graph_of(pattern), _graph_of(replacement)
    p_out = next(n for n in p_graph.nodes if n.op == "output")
    p_anchor = p_out.args[0]
    if not isinstance(p_anchor, Node):
        raise NotImplementedError("replace_pattern: the pattern must return one value")
    p_placeholders = [n for n in p_graph.nodes if n.op == "placeholder"]
    r_placeholders = [n for n in r_graph.nodes if n.op == "placeholder"]
    if len(p_placeholders) != len(r_placeholders):
        raise ValueError("replace_pattern: pattern and replacement take different numbers of "
                         "inputs")
    matches, taken = [], set()
    for gn in reversed(list(graph.nodes)):
        if gn in taken or gn.op in ("placeholder", "output"):
            continue
        nodes_map = {}
        if not _match(p_anchor, gn, nodes_map):
            continue
        inner = [g for p, g in nodes_map.items() if p.op != "placeholder"]
        if any(g in taken for g in inner):
            continue
        inner_set = set(inner)
        if any(u not in inner_set for g in inner if g is not gn for u in g.users):
            continue       # an intermediate value is used outside the match
        taken.update(inner)
        matches.append(Match(anchor=gn, nodes_map=nodes_map))
    matches.reverse()          # replaced in graph order (the new nodes' names as PyTorch's)
    results = []
    for match in matches:
        gn = match.anchor
        val_map = {}
        for pp, rp in zip(p_placeholders, r_placeholders):
            val_map[rp] = match.nodes_map.get(pp)
        for p in p_graph.nodes:              # literals bound to inputs stay literals
            pass
        new_nodes = []
        with graph.inserting_before(gn):
            for rn in r_graph.nodes:
                if rn.op == "placeholder":
                    continue
                if rn.op == "output":
                    out = map_arg(rn.args[0], lambda n: val_map[n])
                    continue
                if rn.op in ("get_attr", "call_module"):
                    raise NotImplementedError("replace_pattern: replacements with attributes "
                                              "or submodules are not supported")
                new = graph.node_copy(rn, lambda n: val_map[n])
                new.name  # noqa: B018
                val_map[rn] = new
                new_nodes.append(new)
        gn.replace_all_uses_with(out)
        for p in reversed(list(p_graph.nodes)):
            g = match.nodes_map.get(p)
            if p.op not in ("placeholder", "output") and g is not None and not g.users:
                graph.erase_node(g)
        results.append(ReplacedPatterns(gn, match.nodes_map, new_nodes))
    gm.recompile()
    return results


def replace_pattern(gm, pattern, replacement):
    """Replace every non-overlapping match of pattern in gm by replacement; the matches."""
    return [Match(anchor=r.anchor, nodes_map=r.nodes_map)
            for r in _replace_pattern(gm, pattern, replacement)]


def replace_pattern_with_filters(gm, pattern, replacement, match_filters=None,
                                 ignore_literals=False, replacement_callback=None,
                                 node_name_match=""):
    if match_filters:
        raise NotImplementedError("replace_pattern_with_filters: match_filters are not "
                                  "supported")
    return _replace_pattern(gm, pattern, replacement)
