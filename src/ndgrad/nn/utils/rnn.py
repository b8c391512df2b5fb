"""Packed sequences are not implemented in ndgrad; pad_sequence is."""


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    from ...ops.shape import stack
    from .. import functional as F
    max_len = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        extra = max_len - s.shape[0]
        pads = [0, 0] * (s.ndim - 1) + ([0, extra] if padding_side == "right" else [extra, 0])
        padded.append(F.pad(s, pads, value=padding_value) if extra else s)
    return stack(padded, 0 if batch_first else 1)
