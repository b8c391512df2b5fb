"""`torch.fx`: symbolic tracing and graph transformation (PyTorch's API, in Python on ndgrad).

`symbolic_trace(module_or_fn)` records a program as a `Graph` of `Node`s (placeholder, get_attr,
call_function, call_method, call_module, output) by running it on `Proxy` values, and returns a
`GraphModule` whose `forward` is Python code generated from the graph (`.code`, `recompile()`
after edits, `print_readable()`). `Interpreter`/`Transformer` run or rewrite graphs node by
node, `passes.shape_prop.ShapeProp` records each node's tensor metadata and
`subgraph_rewriter.replace_pattern` rewrites matched patterns. call_function targets are ndgrad's
torch-level functions (`torch.relu`, `operator.add`, ...), as PyTorch's symbolic tracing
records; there are no ATen ops here.
"""
from . import _symbolic_trace, experimental  # noqa: F401
from ._symbolic_trace import wrap, symbolic_trace, Tracer, is_fx_tracing, PH  # noqa: F401
from .graph import Graph, PythonCode, CodeGen  # noqa: F401
from .graph_module import GraphModule  # noqa: F401
from .node import Node, map_arg, map_aggregate, has_side_effect  # noqa: F401
from .proxy import Proxy, Attribute, TraceError, TracerBase, GraphAppendingTracer  # noqa: F401
from .interpreter import Interpreter, Transformer  # noqa: F401
from . import node, graph, graph_module, proxy, interpreter, passes  # noqa: F401
from . import subgraph_rewriter  # noqa: F401
from .subgraph_rewriter import replace_pattern  # noqa: F401

__all__ = ["symbolic_trace", "Tracer", "Graph", "GraphModule", "Node", "Proxy", "Interpreter",
           "Transformer", "wrap", "replace_pattern", "has_side_effect", "map_arg",
           "CodeGen", "PythonCode"]
