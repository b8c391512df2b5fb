"""torch-level names of PyTorch's nn ATen operations (losses, embedding_bag, native_* norms, grid sampling)."""
__all__ = []
