"""torch.fx.graph: Graph, a doubly linked list of Nodes, and the Python code it generates.

The generated `forward` has PyTorch's form: one line per node, `name = target(args)` with
operators written as operators (`add = x + 1`), methods as `x.view(...)`, submodules as
`self.layer(...)`, and each value dropped after its last use (`;  x = None`). Callables that
are not `torch.*`, `operator.*` or builtins, and constants without a literal form, are passed to
the code as globals.
"""
import builtins
import contextlib
import inspect
import keyword
import math
import operator
import re
from collections import defaultdict

from .node import Node, map_arg, _qualified_name, _format_arg, _public_is

__all__ = ["Graph", "PythonCode", "CodeGen"]

_magic_binary = {operator.add: "+", operator.sub: "-", operator.mul: "*",
                 operator.truediv: "/", operator.floordiv: "//", operator.mod: "%",
                 operator.pow: "**", operator.matmul: "@", operator.lshift: "<<",
                 operator.rshift: ">>", operator.and_: "&", operator.or_: "|",
                 operator.xor: "^", operator.eq: "==", operator.ne: "!=", operator.lt: "<",
                 operator.le: "<=", operator.gt: ">", operator.ge: ">="}
_magic_unary = {operator.neg: "-", operator.pos: "+", operator.invert: "~"}

_custom_builtins = {"inf": math.inf, "nan": math.nan, "NoneType": type(None)}


def _snake_case(s):
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", s).lower()


def _target_to_str(target):
    if isinstance(target, str):
        op = target[2:-2] if target.startswith("__") and target.endswith("__") else target
    else:
        op = getattr(target, "__name__", None) or type(target).__name__
        if op.startswith("__") and op.endswith("__"):
            op = op[2:-2]
    return _snake_case(op)


class _Namespace:
    """Unique, legal Python names for the nodes and the globals of the generated code."""

    def __init__(self):
        self._obj_to_name = {}
        self._used_names = set()
        self._base_count = defaultdict(int)

    def create_name(self, candidate, obj):
        if obj is not None and id(obj) in self._obj_to_name:
            return self._obj_to_name[id(obj)][1]
        candidate = re.sub(r"[^0-9a-zA-Z_]+", "_", candidate) or "_unnamed"
        if candidate[0].isdigit():
            candidate = f"_{candidate}"
        match = re.match(r"(.*)_(\d+)$", candidate)
        if match is None:
            base, num = candidate, None
        else:
            base, num = match.group(1), int(match.group(2))
        if num is None:
            num = self._base_count[base]
        while candidate in self._used_names or self._is_illegal_name(candidate, obj):
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[id(obj)] = (obj, candidate)
        return candidate

    def associate_name_with_obj(self, name, obj):
        self._obj_to_name[id(obj)] = (obj, name)

    def _rename_object(self, obj, name):
        self._obj_to_name[id(obj)] = (obj, name)

    @staticmethod
    def _is_illegal_name(name, obj):
        if name in keyword.kwlist:
            return True
        if name in builtins.__dict__:
            return obj is not builtins.__dict__[name]
        if name in _custom_builtins or name in ("torch", "self", "operator", "builtins"):
            return obj is not _custom_builtins.get(name)
        return False


class PythonCode:
    """The generated source and the globals it runs with."""

    def __init__(self, src, globals, _lineno_map=None):
        self.src = src
        self.globals = globals
        self._lineno_map = _lineno_map


class CodeGen:
    """Turns a Graph into Python source (PyTorch's default code generator)."""

    def gen_fn_def(self, free_vars, maybe_return_annotation):
        if len(free_vars) == 0 or free_vars[0] != "self":
            free_vars.insert(0, "self")
        return f"def forward({', '.join(free_vars)}){maybe_return_annotation}:"

    def generate_output(self, output_args):
        return f"return {output_args!r}"

    def process_inputs(self, *args):
        return args

    def process_outputs(self, outputs):
        return outputs

    def _gen_python_code(self, nodes, root_module, namespace):
        import ndgrad
        globals_ = {"torch": ndgrad, "operator": operator, "builtins": builtins,
                    **_custom_builtins}
        free_vars, body = [], []

        def add_global(name_hint, obj):
            if getattr(builtins, getattr(obj, "__name__", ""), None) is obj:
                return obj.__name__
            for k, v in globals_.items():
                if v is obj:
                    return k
            name = namespace.create_name(name_hint, obj)
            globals_[name] = obj
            return name

        def callable_name(fn):
            q = _qualified_name(fn)
            head = q.split(".")[0]
            if head in ("torch", "operator", "builtins"):
                obj = globals_[head] if head != "torch" else ndgrad
                ok = obj
                for part in q.split(".")[1:]:
                    ok = getattr(ok, part, None)
                if _public_is(ok, fn):
                    return q[len("builtins."):] if head == "builtins" else q
            # PyTorch's global for other callables: the qualified name (math.sqrt: math_sqrt)
            return add_global(q if getattr(fn, "__name__", None) else type(fn).__name__, fn)

        def rep(a):
            if isinstance(a, Node):
                return a.name
            if isinstance(a, tuple) and hasattr(a, "_fields"):
                return f"{add_global(type(a).__name__, type(a))}(" + \
                    ", ".join(rep(x) for x in a) + ")"
            if isinstance(a, tuple):
                inner = ", ".join(rep(x) for x in a)
                return f"({inner},)" if len(a) == 1 else f"({inner})"
            if isinstance(a, list):
                return "[" + ", ".join(rep(x) for x in a) + "]"
            if isinstance(a, dict) and type(a) is dict:
                return "{" + ", ".join(f"{rep(k)}: {rep(v)}" for k, v in a.items()) + "}"
            if isinstance(a, slice):
                return f"slice({rep(a.start)}, {rep(a.stop)}, {rep(a.step)})"
            if a is None or a is Ellipsis or isinstance(a, (bool, int, str, bytes)):
                return repr(a)
            if isinstance(a, float):
                if math.isnan(a):
                    return "nan"
                if math.isinf(a):
                    return "inf" if a > 0 else "-inf"
                return repr(a)
            if isinstance(a, complex):
                return repr(a)
            if isinstance(a, ndgrad.dtype):
                return repr(a)
            if callable(a) and not isinstance(a, ndgrad.Tensor):
                return callable_name(a)
            return add_global(type(a).__name__.lower(), a)

        def fmt_args(args, kwargs):
            parts = [rep(a) for a in args] + [f"{k} = {rep(v)}" for k, v in kwargs.items()]
            return ", ".join(parts)

        def fmt_target(base, target):
            r = base
            for e in target.split("."):
                r = f"{r}.{e}" if e.isidentifier() else f'getattr({r}, "{e}")'
            return r

        # the last use of each node, to drop values as soon as they are dead
        node_to_last_use, user_to_last_uses = {}, {}
        for node in reversed(nodes):
            for n in node._input_nodes:
                if n not in node_to_last_use:
                    node_to_last_use[n] = node
                    user_to_last_uses.setdefault(node, []).append(n)

        maybe_return_annotation = [""]
        for node in nodes:
            if node.op == "placeholder":
                target = node.target
                if target.startswith("*"):
                    free_vars.append(target)
                else:
                    free_vars.append(target + (f" = {rep(node.args[0])}" if node.args else ""))
                    raw_name = target.replace("*", "")
                    if raw_name != node.name:
                        body.append(f"{node.name} = {raw_name}")
                continue
            if node.op == "call_method":
                line = (f"{node.name} = {fmt_target(rep(node.args[0]), node.target)}"
                        f"({fmt_args(node.args[1:], node.kwargs)})")
            elif node.op == "call_function":
                t = node.target
                if t in _magic_binary and len(node.args) == 2 and not node.kwargs:
                    line = (f"{node.name} = {rep(node.args[0])} {_magic_binary[t]} "
                            f"{rep(node.args[1])}")
                elif t in _magic_unary and len(node.args) == 1 and not node.kwargs:
                    line = f"{node.name} = {_magic_unary[t]}{rep(node.args[0])}"
                elif t is operator.getitem and len(node.args) == 2 and not node.kwargs:
                    line = f"{node.name} = {rep(node.args[0])}[{rep(node.args[1])}]"
                elif (t is builtins.getattr and len(node.args) == 2
                      and isinstance(node.args[1], str) and node.args[1].isidentifier()
                      and not node.kwargs):
                    line = f"{node.name} = {fmt_target(rep(node.args[0]), node.args[1])}"
                else:
                    line = (f"{node.name} = {callable_name(t)}"
                            f"({fmt_args(node.args, node.kwargs)})")
            elif node.op == "call_module":
                line = (f"{node.name} = {fmt_target(root_module, node.target)}"
                        f"({fmt_args(node.args, node.kwargs)})")
            elif node.op == "get_attr":
                line = f"{node.name} = {fmt_target(root_module, node.target)}"
            elif node.op == "output":
                if node.type is not None:
                    maybe_return_annotation[0] = ""
                body.append(self.generate_output(_Literal(rep(node.args[0]))))
                continue
            else:
                raise NotImplementedError(f"node: {node.op} {node.target}")
            dead = list(user_to_last_uses.get(node, []))
            if not node.users:
                dead.append(node)
            if dead:
                line += ";  " + " = ".join(n.name for n in dead) + " = None"
            body.append(line)
        if not any(n.op == "output" for n in nodes):
            body.append("pass")
        fn_def = self.gen_fn_def(free_vars, maybe_return_annotation[0])
        prologue = self.gen_prologue(fn_def)
        src = "\n\n\n" + prologue + "\n" + "".join("    " + line + "\n" for line in body) + \
            "    "
        return PythonCode(src, globals_)

    def gen_prologue(self, fn_def):
        return fn_def


class _Literal:
    def __init__(self, s):
        self.s = s

    def __repr__(self):
        return self.s



class _InsertPoint:
    def __init__(self, graph, new_insert):
        self.graph = graph
        self.orig_insert, graph._insert = graph._insert, new_insert

    def __enter__(self):
        pass

    def __exit__(self, type, value, tb):
        self.graph._insert = self.orig_insert


class _NodeList:
    def __init__(self, graph, direction="_next"):
        self.graph = graph
        self.direction = direction

    def __len__(self):
        return self.graph._len

    def __iter__(self):
        root = self.graph._root
        cur = getattr(root, self.direction)
        while cur is not root:
            nxt = getattr(cur, self.direction)
            if not cur._erased:
                yield cur
            cur = nxt

    def __reversed__(self):
        return _NodeList(self.graph, "_prev" if self.direction == "_next" else "_next")


class Graph:
    """The instructions of a program, in order (torch.fx.Graph)."""

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._root = Node(self, "", "root", "", (), {})
        self._used_names = {}
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = _Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        self._codegen = CodeGen()

    @property
    def owning_module(self):
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod):
        self._owning_module = mod

    @property
    def nodes(self):
        return _NodeList(self)

    def find_nodes(self, *, op, target=None, sort=True):
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    def graph_copy(self, g, val_map, return_output_node=False):
        """Copy g's nodes into this graph; val_map maps g's nodes to the copies."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return rv if not return_output_node else (rv, node)
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo=None):
        memo = memo if memo else {}
        g = Graph(tracer_cls=self._tracer_cls)
        output_vals = g.graph_copy(self, val_map=memo, return_output_node=True)
        g._codegen = self._codegen
        if output_vals is not None:
            output_val, old_output_node = output_vals
            new_output_node = g.output(output_val, type_expr=getattr(old_output_node, "type",
                                                                     None))
            new_output_node.meta = dict(old_output_node.meta)
        return g

    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):
        """Insert a new Node at the insertion point (the end, unless inserting_before/after)."""
        assert op in ("call_function", "call_method", "get_attr", "call_module",
                      "placeholder", "output")
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        if not isinstance(args, tuple):
            raise AssertionError("args must be a tuple")
        if not isinstance(kwargs, dict):
            raise AssertionError("kwargs must be a dict")
        candidate = name if name is not None else _target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        n = Node(self, name, op, target, args, kwargs, type_expr)
        self._graph_namespace.associate_name_with_obj(name, n)
        self._insert(n)
        self._len += 1
        return n

    def erase_node(self, to_erase):
        """Remove a node that has no users."""
        if len(to_erase.users) > 0:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had "
                               f"{len(to_erase.users)} users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            import warnings
            warnings.warn(f"erase_node({to_erase}) on an already erased node")
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase.args = ()
        to_erase.kwargs = {}

    def inserting_before(self, n=None):
        if n is None:
            return self.inserting_after(self._root)
        assert n.graph == self, "Node to insert before is not in graph."
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n=None):
        if n is None:
            return self.inserting_before(self._root)
        assert n.graph == self, "Node to insert after is not in graph."
        return _InsertPoint(self, n.append)

    def placeholder(self, name, type_expr=None, default_value=inspect.Signature.empty):
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name, type_expr=None):
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_function", the_function, args, kwargs,
                                type_expr=type_expr)

    def node_copy(self, node, arg_transform=lambda x: x):
        """A copy of node (from any graph) in this one, its arguments mapped by
        arg_transform."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result_node = self.create_node(node.op, node.target, args, kwargs, node.name,
                                       node.type)
        result_node.meta = dict(node.meta)
        return result_node

    def output(self, result, type_expr=None):
        return self.create_node(op="output", target="output", args=(result,),
                                type_expr=type_expr)

    def python_code(self, root_module, *, verbose=False, include_stride=False,
                    include_device=False, colored=False):
        """The generated forward's source and globals (PythonCode)."""
        namespace = _Namespace()
        for node in self.nodes:
            namespace.create_name(node.name, node)
        return self._codegen._gen_python_code(list(self.nodes), root_module, namespace)

    def __str__(self):
        placeholder_names = []
        maybe_return_typename = [""]
        node_strs = [node.format_node() for node in self.nodes]
        param_str = ", ".join(placeholder_names)
        s = f"graph({param_str}){maybe_return_typename[0]}:"
        for node_str in node_strs:
            if node_str:
                s += "\n    " + node_str
        return s

    def print_tabular(self):
        """Print the nodes as a table (PyTorch uses the tabulate package; this is a plain
        fixed-width table with the same columns)."""
        headers = ["opcode", "name", "target", "args", "kwargs"]
        rows = [[n.op, n.name, n._pretty_print_target(n.target) if n.op != "output"
                 else n.target, _format_arg(n.args), _format_arg(n.kwargs)]
                for n in self.nodes]
        widths = [max([len(h)] + [len(str(r[i])) for r in rows]) for i, h in enumerate(headers)]
        line = "  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()
        print(line)
        print("  ".join("-" * w for w in widths))
        for r in rows:
            print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())

    def lint(self):
        """Check that the graph is well formed: each argument defined before use, names
        unique, targets present on the owning module."""
        seen_values, seen_names = set(), set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            if node.op not in ("placeholder", "call_method", "call_module", "call_function",
                               "get_attr", "output"):
                raise RuntimeError(f"Node {node} had unknown opcode {node.op}!")
            for arg in node._input_nodes:
                if arg not in seen_values:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before it "
                                       "has been defined! Please check that Nodes in the graph "
                                       "are topologically ordered\n{self}")
            seen_values.add(node)
            if node.name in seen_names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen_names.add(node.name)
        if self.owning_module is not None:
            for node in self.nodes:
                if node.op in ("get_attr", "call_module"):
                    m_itr = self.owning_module
                    for i, atom in enumerate(node.target.split(".")):
                        if not hasattr(m_itr, atom):
                            seen_qualname = ".".join(node.target.split(".")[:i])
                            raise RuntimeError(f"Node {node} target {node.target} references "
                                               f"nonexistent attribute {atom} of "
                                               f"{seen_qualname}")
                        m_itr = getattr(m_itr, atom)

    def eliminate_dead_code(self, is_impure_node=None):
        """Erase the nodes whose values nobody uses (impure ones stay); True if any went."""
        changed = False
        for node in reversed(self.nodes):
            impure = is_impure_node(node) if is_impure_node is not None else node.is_impure()
            if not impure and len(node.users) == 0:
                self.erase_node(node)
                changed = True
        return changed

    def __reduce__(self):
        """Pickled as node records; call targets that pickle cannot find by module and name
        (ndgrad's op functions) travel as their torch-level names."""
        import pickle
        records = []
        for n in self.nodes:
            target = n.target
            if n.op == "call_function":
                try:
                    if pickle.loads(pickle.dumps(target)) is not target:
                        raise pickle.PicklingError
                except Exception:
                    target = _TargetName(_qualified_name(target))
            records.append((n.name, n.op, target, map_arg(n.args, lambda x: _NodeName(x.name)),
                            map_arg(n.kwargs, lambda x: _NodeName(x.name)), n.type))
        return (_rebuild_graph, (records, self._codegen))

    def set_codegen(self, codegen):
        self._codegen = codegen

    def on_generate_code(self, make_transformer):
        return contextlib.nullcontext()


class _NodeName(str):
    pass


class _TargetName(str):
    pass


def _rebuild_graph(records, codegen):
    from .node import map_aggregate
    g = Graph()
    g._codegen = codegen
    nodes = {}
    for name, op, target, args, kwargs, type_expr in records:
        if isinstance(target, _TargetName):
            from ..export import _resolve_target
            fn = _resolve_target(str(target))
            if fn is None:
                raise RuntimeError(f"cannot unpickle the fx call target {target}")
            target = fn

        def load(a):
            return nodes[str(a)] if isinstance(a, _NodeName) else a
        nodes[name] = g.create_node(op, target, map_aggregate(args, load),
                                    map_aggregate(kwargs, load), name, type_expr)
    return g
