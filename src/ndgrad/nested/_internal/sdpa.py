"""F.scaled_dot_product_attention on jagged nested tensors (PyTorch's nested/_internal/sdpa.py
semantics): query, key and value of shape (B, H, j, E), ragged in dim 2 (`nt.transpose(1, 2)`
of (B, j, H, E)); each sequence attends within itself. Computed as one dense attention over the
padded batch with the padded keys masked out, then unpadded (no loop over sequences)."""
from ..._backend import numpy as _np
from .nested_tensor import NestedTensor, _like, _rows, to_padded, nested_from_padded

__all__ = ["jagged_scaled_dot_product_attention"]


def _validate(query, key, value, attn_mask):
    if not (isinstance(query, NestedTensor) and isinstance(key, NestedTensor)
            and isinstance(value, NestedTensor)):
        raise ValueError(
            f"Expected query, key, and value to be nested tensors, but got query.is_nested: "
            f"{query.is_nested}, key.is_nested: {key.is_nested}, and value.is_nested: "
            f"{value.is_nested} instead.")
    if query.dtype != key.dtype or query.dtype != value.dtype:
        raise ValueError(
            f"Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{query.dtype}, key.dtype: {key.dtype}, and value.dtype: {value.dtype} instead.")
    if query.device != key.device or query.device != value.device:
        raise ValueError(
            f"Expected query, key, and value to have the same device type, but got "
            f"query.device: {query.device}, key.device: {key.device}, and value.device: "
            f"{value.device} instead.")
    if query.dim() < 3 or key.dim() < 3 or value.dim() < 3:
        raise ValueError(
            f"Expected query, key, and value to all be at least 3 dimensional, but got "
            f"query.dim: {query.dim()}, key.dim: {key.dim()} and value.dim: {value.dim()} "
            "instead.")
    if query._ragged_idx != key._ragged_idx or query._ragged_idx != value._ragged_idx:
        raise ValueError(
            f"Expected query, key, and value to all be ragged on the same dimension, but got "
            f"ragged dims {query._ragged_idx}, {key._ragged_idx}, and {value._ragged_idx}, "
            "respectively.")
    if attn_mask is not None:
        raise ValueError("Masks are not yet supported!")


def jagged_scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                        is_causal=False, scale=None, enable_gqa=False):
    from ...nn import functional as F
    from ... import _creation
    _validate(query, key, value, attn_mask)
    if query.dim() > 3 and key.dim() > 3 and value.dim() > 3 and query._ragged_idx == 1:
        out = F.scaled_dot_product_attention(query._values, key._values, value._values,
                                             dropout_p=dropout_p, is_causal=is_causal,
                                             scale=scale)
        return _like(query, out)
    r = query._ragged_idx
    if query.dim() != 4 or r != 2:
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found.")
    q, k, v = (to_padded(t, 0.0) for t in (query, key, value))    # (B, H, S, E)
    b, pos, _ = _rows(key)
    sk = k.shape[2]
    keep = _np.zeros((key._size[0], sk), dtype=bool)  # host: offsets
    keep[b, pos] = True
    mask = keep[:, None, None, :]
    if is_causal:
        sq = q.shape[2]
        mask = mask & _np.tril(_np.ones((sq, sk), dtype=bool))[None, None]  # host: offsets
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=_creation.tensor(mask, device=q.device),
                                         dropout_p=dropout_p, scale=scale,
                                         enable_gqa=enable_gqa)
    return nested_from_padded(out, query)
