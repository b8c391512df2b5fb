"""Reusable per-thread buffers for the temporaries of array kernels.

Note [Scratch slots]
A large fresh array costs a page fault per 4 KiB on first touch (glibc hands blocks above its
mmap threshold back to the system when they are freed): for the (16, 64, 512) float32 arrays of
a GPT step's GELU, about as much as the arithmetic on them. A kernel's temporaries that never
leave it (GELU's x^2, attention's probabilities) are instead views of a buffer kept per thread
and per named slot, grown to the largest size asked for (up to MAX bytes a slot; larger ones
are fresh each time). A kernel holds a slot only while it runs, calls nothing that could take
the same slot meanwhile, and never returns the view. Arrays under MIN bytes are simply fresh.
(nn_ops._scratch is the convolution family's single buffer of the same kind.)
"""
import math
import threading

MAX = 1 << 25  # bytes kept per slot and thread
_LOCAL = threading.local()


MIN = 1 << 17  # bytes: smaller arrays are fresh (the allocator's own pools serve them)


def scratch(xp, shape, dtype, slot):
    """An uninitialised array of `shape` and `dtype` in the calling thread's buffer `slot`."""
    dtype = xp.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < MIN:
        return xp.empty(shape, dtype)
    bufs = getattr(_LOCAL, "bufs", None)
    if bufs is None:
        bufs = _LOCAL.bufs = {}
    buf = bufs.get(slot)
    if buf is None or buf.nbytes < nbytes or type(buf) is not xp.ndarray:
        buf = xp.empty(max(nbytes, 1), dtype=xp.uint8)
        if nbytes <= MAX:
            bufs[slot] = buf
    return buf[:nbytes].view(dtype).reshape(shape)
