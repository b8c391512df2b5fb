"""PyTorch's own signatures, read from the installed torch wheel (the oracle of the keyword-form
tests): no hand list of parameter names.

- torch.<fn> and Tensor.<method> of ATen: the type stubs the wheel ships,
  `torch/_C/_VariableFunctions.pyi` and `class TensorBase` of `torch/_C/__init__.pyi`
  (generated from native_functions.yaml: every overload, its parameter names, kinds, types
  and defaults, as PyTorch's argument parser takes them);
- the Python-level ones (torch.split, torch.functional's, Tensor.split, Tensor.unique,
  nn.functional's, ...): inspect.signature of PyTorch's function;
- torch.linalg / fft / special (C functions without stubs): the signature line that opens
  each docstring ("linalg.norm(A, ord=None, dim=None, keepdim=False, *, out=None, ...)").

Each overload is a list of Param(name, kind, annotation, default): kind "pos" (positional or
keyword), "kw" (keyword only), "var" (*args); default REQUIRED when there is none, UNKNOWN when
the stub writes `...`.
"""
import ast
import collections
import inspect
import os

REQUIRED = object()
UNKNOWN = object()

Param = collections.namedtuple("Param", "name kind annotation default")


class Overload(collections.namedtuple("Overload", "name params source")):
    @property
    def keyword_params(self):
        """The parameters a caller may pass by keyword."""
        return [p for p in self.params if p.kind != "var"]

    @property
    def vararg(self):
        return next((p for p in self.params if p.kind == "var"), None)

    def __str__(self):
        parts, star = [], False
        for p in self.params:
            if p.kind == "var":
                parts.append(f"*{p.name}")
                star = True
                continue
            if p.kind == "kw" and not star:
                parts.append("*")
                star = True
            d = "" if p.default is REQUIRED else "=..." if p.default is UNKNOWN else \
                f"={p.default!r}"
            parts.append(f"{p.name}{d}")
        return f"{self.name}({', '.join(parts)})"


def _default(node):
    if node is None:
        return REQUIRED
    try:
        v = ast.literal_eval(node)
    except ValueError:
        return UNKNOWN
    return UNKNOWN if v is Ellipsis else v


def _from_args(name, a, source, drop_first=False):
    params = []
    pos = a.posonlyargs + a.args
    defaults = [None] * (len(pos) - len(a.defaults)) + list(a.defaults)
    for x, d in zip(pos, defaults):
        ann = ast.unparse(x.annotation) if x.annotation is not None else ""
        params.append(Param(x.arg, "pos", ann, _default(d)))
    if a.vararg is not None:
        ann = ast.unparse(a.vararg.annotation) if a.vararg.annotation is not None else ""
        params.append(Param(a.vararg.arg, "var", ann, REQUIRED))
    for x, d in zip(a.kwonlyargs, a.kw_defaults):
        ann = ast.unparse(x.annotation) if x.annotation is not None else ""
        params.append(Param(x.arg, "kw", ann, _default(d)))
    if drop_first:
        params = params[1:]
    return Overload(name, params, source)


def _stub(path, cls=None, drop_first=False):
    with open(path) as f:
        tree = ast.parse(f.read())
    body = tree.body
    if cls is not None:
        body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == cls).body
    out = collections.defaultdict(list)
    for n in body:
        if isinstance(n, ast.FunctionDef):
            out[n.name].append(_from_args(n.name, n.args, os.path.basename(path), drop_first))
    return out


def _from_signature(name, fn, drop_first=False):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = []
    kinds = {inspect.Parameter.POSITIONAL_ONLY: "pos",
             inspect.Parameter.POSITIONAL_OR_KEYWORD: "pos",
             inspect.Parameter.KEYWORD_ONLY: "kw", inspect.Parameter.VAR_POSITIONAL: "var"}
    for p in sig.parameters.values():
        if p.kind not in kinds:
            continue
        d = REQUIRED if p.default is inspect.Parameter.empty else p.default
        params.append(Param(p.name, kinds[p.kind], "", d))
    if drop_first:
        params = params[1:]
    return Overload(name, params, "inspect")


def _from_doc(name, fn):
    """The overload written on the first line of fn's docstring, or None."""
    doc = (getattr(fn, "__doc__", None) or "").strip()
    line = doc.split("\n", 1)[0]
    head = line.split("(", 1)
    if len(head) != 2 or not head[0].split(".")[-1] == name:
        return None
    args = head[1].rsplit(")", 1)[0]
    try:
        f = ast.parse(f"def {name}({args}): pass").body[0]
    except SyntaxError:
        return None
    return _from_args(name, f.args, "docstring")


def torch_functions():
    """{name: [Overload]} for the functions of the torch namespace."""
    import torch
    stubs = os.path.join(os.path.dirname(torch.__file__), "_C")
    table = _stub(os.path.join(stubs, "_VariableFunctions.pyi"))
    for name in dir(torch):
        fn = getattr(torch, name)
        if not name.startswith("_") and inspect.isfunction(fn) and \
                fn.__module__.startswith("torch"):
            ov = _from_signature(name, fn)
            if ov is not None:
                table[name] = [ov]   # (the Python function is what torch.<name> calls)
    return dict(table)


def tensor_methods():
    """{name: [Overload]} for the methods of torch.Tensor, without `self`."""
    import torch
    stubs = os.path.join(os.path.dirname(torch.__file__), "_C")
    table = _stub(os.path.join(stubs, "__init__.pyi"), "TensorBase", drop_first=True)
    for name, fn in vars(torch.Tensor).items():
        if inspect.isfunction(fn) and (not name.startswith("_") or name.startswith("__")):
            ov = _from_signature(name, fn, drop_first=True)
            if ov is not None:
                table[name] = [ov]
    return dict(table)


def namespace_functions(module):
    """{name: [Overload]} for torch.linalg / fft / special / nn.functional (`module`): the
    Python functions' signatures, the C functions' docstring lines."""
    table = {}
    for name in dir(module):
        if name.startswith("_"):
            continue
        fn = getattr(module, name)
        if inspect.isfunction(fn):
            ov = _from_signature(name, fn)
        elif callable(fn) and type(fn).__name__ == "builtin_function_or_method":
            ov = _from_doc(name, fn)
        else:
            continue
        if ov is not None:
            table[name] = [ov]
    return table
