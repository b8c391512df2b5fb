"""torch.onnx.errors."""

__all__ = ["OnnxExporterError"]


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter (ndgrad's export always raises one)."""
