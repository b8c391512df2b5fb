"""viz: DOT text and the built-in SVG, parsed as XML and checked for labels and edges."""
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import ndgrad
from ndgrad import viz

SVG = "{http://www.w3.org/2000/svg}"


def _mlp():
    rng = np.random.default_rng(0)
    params = {"w1": ndgrad.tensor(rng.standard_normal((4, 3)), requires_grad=True),
              "b1": ndgrad.tensor(np.zeros(3), requires_grad=True),
              "w2": ndgrad.tensor(rng.standard_normal((3, 1)), requires_grad=True)}
    x = ndgrad.tensor(rng.standard_normal((5, 4)))
    h = ndgrad.tanh(x @ params["w1"] + params["b1"])
    loss = (h @ params["w2"]).pow(2).mean()
    return loss, params


def _parse(svg):
    root = ET.fromstring(svg)
    nodes, edges = {}, []
    for g in root.iter(f"{SVG}g"):
        cls = g.get("class", "")
        title = g.find(f"{SVG}title").text
        if cls.startswith("node"):
            nodes[title] = ([t.text for t in g.findall(f"{SVG}text")], cls.split()[1],
                            g.find(f"{SVG}rect"))
        elif cls == "edge":
            a, b = title.split("->")
            edges.append((a, b))
    return nodes, edges


def _by_label(nodes, label):
    return [k for k, (texts, _, _) in nodes.items() if texts and texts[0] == label]


def test_svg_nodes_and_edges(tmp_path):
    loss, params = _mlp()
    path = tmp_path / "g.svg"
    svg = viz.draw(loss, str(path), params=params)
    assert path.read_text() == svg
    nodes, edges = _parse(svg)
    labels = sorted(t[0][0] for t in nodes.values())
    assert labels == sorted(["output", "MeanBackward0", "PowBackward0", "MmBackward0",
                             "TanhBackward0", "AddBackward0", "MmBackward0", "w1", "b1", "w2"])
    (w1,) = _by_label(nodes, "w1")
    assert nodes[w1][0] == ["w1", "(4, 3)"] and nodes[w1][1] == "leaf"
    (out,) = _by_label(nodes, "output")
    assert nodes[out][0] == ["output", "()"]
    (mean,) = _by_label(nodes, "MeanBackward0")
    (tanh,) = _by_label(nodes, "TanhBackward0")
    (add,) = _by_label(nodes, "AddBackward0")
    (b1,) = _by_label(nodes, "b1")
    assert (mean, out) in edges and (add, tanh) in edges and (b1, add) in edges
    assert (w1, tanh) not in edges
    assert len(edges) == 9
    # a readable layout: no two boxes overlap, and every arrow points down the page
    rects = {k: tuple(float(r.get(a)) for a in ("x", "y", "width", "height"))
             for k, (_, _, r) in nodes.items()}
    ks = list(rects)
    for i, a in enumerate(ks):
        for b in ks[i + 1:]:
            xa, ya, wa, ha = rects[a]
            xb, yb, wb, hb = rects[b]
            assert xa + wa <= xb or xb + wb <= xa or ya + ha <= yb or yb + hb <= ya
    for a, b in edges:
        assert rects[a][1] + rects[a][3] <= rects[b][1]


def test_show_saved(tmp_path):
    x = ndgrad.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    nodes, edges = _parse(viz.draw(y, str(tmp_path / "s.svg"), show_saved=True))
    saved = {k: v[0] for k, v in nodes.items() if v[1] == "saved"}
    (exp,) = _by_label(nodes, "ExpBackward0")
    (mul,) = _by_label(nodes, "MulBackward0")
    assert sorted(v[0] for v in saved.values()) == ["other", "result", "self"]
    assert all(v[1] == "(2)" for v in saved.values())
    for k, v in saved.items():
        assert (k, exp if v[0] == "result" else mul) in edges
    # without show_saved, none
    nodes, _ = _parse(viz.draw(y, str(tmp_path / "t.svg")))
    assert not any(v[1] == "saved" for v in nodes.values())


def test_to_dot():
    loss, params = _mlp()
    dot = viz.to_dot(loss, params=params)
    assert dot.startswith("digraph {") and dot.rstrip().endswith("}")
    assert 'label="w1\\n(4, 3)"' in dot
    assert 'label="TanhBackward0"' in dot
    assert dot.count(" -> ") == 9


def test_deep_chain_has_no_recursion_limit(tmp_path):
    x = ndgrad.ones(1, requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0
    nodes, edges = _parse(viz.draw(y, str(tmp_path / "c.svg")))
    assert len(nodes) == 3002 and len(edges) == 3001


def test_multiple_outputs_and_leaf_output(tmp_path):
    x = ndgrad.ones(2, requires_grad=True)
    nodes, edges = _parse(viz.draw((x * 2, x), str(tmp_path / "m.svg"), params={"x": x}))
    assert sorted(v[0][0] for v in nodes.values()) == ["MulBackward0", "output", "x", "x"]


def test_graphviz_engine_needs_dot(tmp_path, monkeypatch):
    import shutil
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="Graphviz"):
        viz.draw(ndgrad.ones(1, requires_grad=True) * 2, str(tmp_path / "x.svg"),
                 engine="graphviz")
    with pytest.raises(ValueError):
        viz.draw(ndgrad.ones(1, requires_grad=True) * 2, str(tmp_path / "x.svg"), engine="x")
