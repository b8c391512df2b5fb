"""The house keeps its shape (docs/architecture.md): layers import downward at module level.

What is checked, from the source text alone (nothing is imported):
- no module of the package imports the package namespace itself (`import ndgrad`, or a name
  `ndgrad/__init__` defines) at module level: `ndgrad/__init__` imports the submodules, so such
  an import is a circle through the whole package (the examples are programs, not layers);
- the module-level import graph has no circle bigger than a module and its helper (two);
- the top level of the package holds at most 6 private `_*.py` modules, the core, besides
  PyTorch's own private modules of the same name (torch._utils, ...); the rest live in the
  namespace they serve;
- no function of the engine (autograd/engine.py) or of the op registry (ops/_registry.py) is
  longer than 100 lines: each reads as named phases.
Imports inside functions are not edges: they run at call time, once everything is loaded.
"""
import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")
PROGRAMS = ("ndgrad.examples",)


def _modules():
    mods = {}
    for d, _, files in os.walk(os.path.join(SRC, "ndgrad")):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(d, f)
                name = os.path.relpath(path, SRC)[:-3].replace(os.sep, ".")
                mods[name[:-9] if name.endswith(".__init__") else name] = path
    return mods


def _module_level_imports(tree):
    found = []

    def visit(body):
        for n in body:
            if isinstance(n, (ast.Import, ast.ImportFrom)):
                found.append(n)
            elif isinstance(n, (ast.If, ast.Try, ast.With)):
                for part in ("body", "orelse", "finalbody"):
                    visit(getattr(n, part, []))
                for h in getattr(n, "handlers", []):
                    visit(h.body)
    visit(tree.body)
    return found


def _graph():
    """{module: set of modules it imports at module level}, and the package-namespace imports."""
    mods = _modules()
    edges = {m: set() for m in mods}
    namespace = []

    def owner(name):
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name

    for m, path in mods.items():
        base = m if path.endswith("__init__.py") else m.rpartition(".")[0]
        for n in _module_level_imports(ast.parse(open(path, encoding="utf-8").read())):
            if isinstance(n, ast.Import):
                targets = [(a.name, None) for a in n.names if a.name.split(".")[0] == "ndgrad"]
            else:
                if n.level:
                    parts = base.split(".")[:len(base.split(".")) - (n.level - 1)]
                    src = ".".join(parts + ([n.module] if n.module else []))
                else:
                    src = n.module or ""
                if src.split(".")[0] != "ndgrad":
                    continue
                targets = [(src, a.name) for a in n.names]
            for src, name in targets:
                full = f"{src}.{name}" if name else src
                t = full if full in mods else owner(src)
                edges[m].add(t)
                if t == "ndgrad" and m != "ndgrad" and not m.startswith(PROGRAMS):
                    namespace.append((m, name or src))
    return edges, namespace


def _circles(edges):
    """Strongly connected components (Tarjan's, with an explicit stack)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    out.append(sorted(comp))
    return out


def test_no_module_imports_the_package_namespace():
    _, namespace = _graph()
    assert namespace == []


def test_no_import_circle_bigger_than_a_module_and_its_helper():
    edges, _ = _graph()
    assert [c for c in _circles(edges) if len(c) > 2] == []


MAX_PRIVATE_TOP_LEVEL = 6
# private modules that are PyTorch's own modules of that name (torch._utils: what pickles and
# libraries import from it), not ndgrad's core
TORCH_MODULES = ("_config_module.py", "_jit_internal.py", "_utils.py")
LONG = 100
HOT = ("autograd/engine.py", "ops/_registry.py")


def _private_top_level():
    return sorted(f for f in os.listdir(os.path.join(SRC, "ndgrad"))
                  if f.startswith("_") and not f.startswith("__") and f.endswith(".py")
                  and f not in TORCH_MODULES)


def _long_functions(text, limit=LONG):
    return [(n.name, n.end_lineno - n.lineno + 1) for n in ast.walk(ast.parse(text))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.end_lineno - n.lineno + 1 > limit]


def test_top_level_holds_the_core_only():
    private = _private_top_level()
    assert len(private) <= MAX_PRIVATE_TOP_LEVEL, private


def test_engine_and_registry_functions_read_in_phases():
    long = {rel: _long_functions(open(os.path.join(SRC, "ndgrad", rel), encoding="utf-8").read())
            for rel in HOT}
    assert long == {rel: [] for rel in HOT}


# The lower layers (docs/architecture.md): the core, the op registry and op families, the engine.
# At module level they import only each other; what they need of a namespace above them (an
# op family's torch-level names built on nn.functional) they import at call time.
LOWER = ("ndgrad._tensor", "ndgrad._tensor_str", "ndgrad._dtype", "ndgrad._backend",
         "ndgrad.ops", "ndgrad.autograd")
# (sparse/ is not among them: its tensor classes and torch.layout are a layout of the core's
# Tensor, which op families dispatch on)
UPPER = ("ndgrad.nn", "ndgrad.optim", "ndgrad.distributions", "ndgrad.utils", "ndgrad.linalg",
         "ndgrad.fft", "ndgrad.special", "ndgrad.func", "ndgrad.distributed")


def _under(m, prefixes):
    return any(m == p or m.startswith(p + ".") for p in prefixes)


def _upward(edges):
    return sorted((m, t) for m, ts in edges.items() if _under(m, LOWER)
                  for t in ts if _under(t, UPPER))


def test_lower_layers_look_down():
    edges, _ = _graph()
    assert _upward(edges) == []


def test_the_checks_can_fail():
    body = "\n".join(f"    x{i} = {i}" for i in range(LONG))
    assert _long_functions(f"def f():\n{body}\n") == [("f", LONG + 1)]
    assert _long_functions(f"def f():\n{body}\n", limit=LONG + 1) == []
    # a circle of three and a package-namespace import are seen
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c"]]
    tree = ast.parse("import ndgrad\nif True:\n    from . import x\ndef f():\n    import y\n")
    assert [type(n).__name__ for n in _module_level_imports(tree)] == ["Import", "ImportFrom"]
    assert _upward({"ndgrad.ops.x": {"ndgrad.nn.functional"}}) == [
        ("ndgrad.ops.x", "ndgrad.nn.functional")]
