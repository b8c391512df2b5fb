"""torch.onnx: importable (programs such as pytorch/examples' word_language_model import it at
the top and export only when asked), with PyTorch's names; `export` raises OnnxExporterError.

ndgrad records a graph of backward nodes, not a graph of ONNX operators: an ONNX export needs a
tracer of the forward that maps each op to ONNX (PyTorch's torch.export / TorchScript), which
ndgrad does not have. The model's weights are portable instead: `torch.save(model.state_dict())`
writes PyTorch's checkpoint format, which PyTorch loads into the same model class and exports.
"""
from . import errors
from .errors import OnnxExporterError

__all__ = ["errors", "export", "is_in_onnx_export", "OnnxExporterError"]

ERR_EXPORT = (
    "torch.onnx.export is not available in ndgrad: it needs a tracer that maps the forward's "
    "operations to ONNX operators (PyTorch's torch.export / TorchScript), and ndgrad records "
    "only the autograd graph. Save the weights with torch.save(model.state_dict(), path), load "
    "them into the same model under PyTorch, and export from there.")


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None,
           output_names=None, opset_version=None, dynamo=True, external_data=True,
           dynamic_shapes=None, custom_translation_table=None, report=False, optimize=True,
           verify=False, profile=False, dump_exported_program=False, artifacts_dir=".",
           export_params=True, keep_initializers_as_inputs=False, dynamic_axes=None,
           training=None, operator_export_type=None, do_constant_folding=True,
           custom_opsets=None, export_modules_as_functions=False, autograd_inlining=True):
    """torch.onnx.export's signature; raises OnnxExporterError (see the module docstring)."""
    raise OnnxExporterError(ERR_EXPORT)


def is_in_onnx_export():
    """Whether an ONNX export is running: never, in ndgrad."""
    return False
