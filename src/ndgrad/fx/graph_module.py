"""torch.fx.graph_module: GraphModule, an nn.Module whose forward is generated from a Graph.

As PyTorch's: each instance gets its own class (so that `forward` can be replaced per instance),
the submodules, parameters, buffers and tensors the graph's get_attr/call_module nodes name are
copied from `root` (the same objects, not clones: they share storage with the traced module),
and `recompile()` regenerates `forward` from `graph.python_code("self")` after graph edits.
"""
import copy
import itertools
import linecache

from ..nn.modules.module import Module
from .graph import Graph

__all__ = ["GraphModule"]

_next_id = itertools.count()


def _exec_with_source(src, globals_, co_fields=None):
    key = f"<eval_with_key>.{next(_next_id)}"
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    exec(compile(src, key, "exec"), globals_)


def _forward_from_src(src, globals_, co_fields=None):
    globals_copy = dict(globals_)
    _exec_with_source(src, globals_copy, co_fields)
    forward_fn = globals_copy["forward"]
    del globals_copy["forward"]
    return forward_fn


def _copy_attr(from_module, to_module, target):
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    from .._tensor import Tensor
    from ..nn.parameter import Parameter
    if isinstance(orig, Tensor) and not isinstance(orig, Parameter) \
            and field not in from_module._buffers:
        to_module.register_buffer(field, orig)
    else:
        setattr(to_module, field, orig)


def _assign_attr(from_obj, to_module, target):
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    from .._tensor import Tensor
    from ..nn.parameter import Parameter
    if isinstance(from_obj, Tensor) and not isinstance(from_obj, Parameter):
        to_module.register_buffer(field, from_obj)
    else:
        setattr(to_module, field, from_obj)


class GraphModule(Module):
    """An nn.Module generated from an fx Graph: `GraphModule(root, graph, class_name)`,
    root a Module or a dict from qualified names to the attributes the graph uses."""

    def __new__(cls, *args, **kwargs):
        for t in cls.__mro__:
            c = t.__qualname__.split(".")[-1]
            if c != "GraphModuleImpl":
                cls = t
                break

        class GraphModuleImpl(cls):
            pass
        return super().__new__(GraphModuleImpl)

    def __init__(self, root, graph, class_name="GraphModule"):
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            targets_to_copy = []
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but "
                                           "that target was not provided in ``root``!")
                    targets_to_copy.append(node.target)
            targets_to_copy.sort(key=lambda t: t.count("."))
            for target_to_copy in targets_to_copy:
                _assign_attr(root[target_to_copy], self, target_to_copy)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.graph = graph
        self._tracer_cls = None
        if self.graph._tracer_cls and "<locals>" not in self.graph._tracer_cls.__qualname__:
            self._tracer_cls = self.graph._tracer_cls
        self._tracer_extras = getattr(self.graph, "_tracer_extras", None)
        self.meta = {}
        self._replace_hooks = []
        self._erase_node_hooks = []
        self._create_node_hooks = []

    @property
    def graph(self):
        return self._graph

    @graph.setter
    def graph(self, g):
        assert isinstance(g, Graph), f"Expected a Graph instance, but got {type(g)}"
        self._graph = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self):
        if not hasattr(self, "_code"):
            raise RuntimeError("Code has not been generated! Please report a bug to PyTorch")
        return self._code

    def recompile(self):
        """Regenerate forward from self.graph (call after editing the graph)."""
        python_code = self._graph.python_code(root_module="self")
        self._code = python_code.src
        self._lineno_map = python_code._lineno_map
        cls = type(self)
        cls.forward = _forward_from_src(self._code, python_code.globals)
        return python_code

    def print_readable(self, print_output=True, include_stride=False, include_device=False,
                       colored=False, *, fast_sympy_print=False, expanded_def=False):
        """The generated code as a class definition (submodules that are GraphModules
        printed after it)."""
        module_name = self.__class__.__name__
        verbose_python_code = self._graph.python_code(root_module="self", verbose=True)
        module_code = verbose_python_code.src.lstrip("\n")
        module_code = f"class {module_name}(torch.nn.Module):\n" + "\n".join(
            "    " + line if line.strip() else line for line in module_code.split("\n"))
        submodule_code_list = [""]
        for submodule_name, submodule in self.named_children():
            if isinstance(submodule, GraphModule):
                submodule_code_list.append(submodule.print_readable(print_output=False))
        submodule_code = "\n".join(submodule_code_list)
        submodule_code = "\n".join("    " + line if line.strip() else line
                                   for line in submodule_code.split("\n"))
        output = module_code + submodule_code
        if print_output:
            print(output)
        return output

    def __str__(self):
        orig_str = super().__str__()
        print_readable_reminder = ("# To see more debug info, please use "
                                   "`graph_module.print_readable()`")
        return "\n".join([orig_str, self._code, print_readable_reminder])

    def __copy__(self):
        res = GraphModule(self, self.graph)
        res.meta = getattr(self, "meta", {})
        return res

    def __deepcopy__(self, memo):
        res = Module.__new__(Module)
        memo[id(self)] = res
        fake_mod = Module()
        fake_mod.__dict__ = copy.deepcopy(self.__dict__, memo)
        res = GraphModule(fake_mod, fake_mod.__dict__["_graph"],
                          self.__class__.__name__)
        memo[id(self)] = res
        res.meta = copy.deepcopy(getattr(self, "meta", {}), memo)
        return res

    def __reduce__(self):
        dict_without_graph = self.__dict__.copy()
        del dict_without_graph["_graph"]
        return (_deserialize_graph_module, (dict_without_graph, self.graph,
                                            self.__class__.__name__))

    def add_submodule(self, target, m):
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            submod = getattr(mod, item, None)
            if submod is None:
                submod = Module()
                setattr(mod, item, submod)
            if not isinstance(submod, Module):
                return False
            mod = submod
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target):
        atoms = target.split(".")
        path, target_submod = atoms[:-1], atoms[-1]
        mod = self
        for item in path:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                return False
        if not hasattr(mod, target_submod):
            return False
        if not isinstance(getattr(mod, target_submod), Module):
            return False
        delattr(mod, target_submod)
        return True

    def delete_all_unused_submodules(self):
        used = []
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr"):
                fullpath = node.target.split(".")
                used.extend(".".join(fullpath[:i]) for i in range(1, len(fullpath) + 1))
                if node.op == "call_module":
                    try:
                        submod = self.get_submodule(node.target)
                        used.extend(f"{node.target}.{n}" for n, _ in submod.named_modules()
                                    if n)
                    except AttributeError:
                        pass
        to_delete = [name for name, _ in self.named_modules() if name and name not in used]
        for name in to_delete:
            self.delete_submodule(name)


def _deserialize_graph_module(body, graph, class_name):
    fake_mod = Module()
    fake_mod.__dict__.update(body)
    return GraphModule(fake_mod, graph, class_name)
