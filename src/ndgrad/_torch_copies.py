"""torch-level *_copy functions, in-place forms and small utilities of PyTorch's torch namespace."""
__all__ = []
