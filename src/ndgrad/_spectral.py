"""torch.stft (and Tensor.stft), composed of ndgrad's differentiable ops (pad, unfold, mul, the
fft module), so gradients of every order come with it.

PyTorch's semantics (torch/functional.py and ATen's SpectralOps.cpp): `center` pads the signal
by n_fft // 2 on both sides with `pad_mode`; a window shorter than n_fft is zero-padded to it,
centred (with `align_to_window` and `center=False` the frames move so that each windowed span
starts at a multiple of hop_length); frames are `1 + (length - n_fft) // hop_length`; `normalized` scales by n_fft ** -0.5; the result is
(batch?, n_fft // 2 + 1 or n_fft, frames). The checks and their messages are PyTorch's.
"""
import os
import sys
import warnings

from ._tensor import Tensor
from .autograd.graph import _type_string

__all__ = ["stft"]

_WARNED = set()  # PyTorch's warnings that it gives once per process (TORCH_WARN_ONCE)

_NO_WINDOW = (
    "A window was not provided. A rectangular window will be applied,which is known to cause "
    "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
    "recommended to reduce spectral leakage.To suppress this warning and use a rectangular "
    "window, explicitly set `window=torch.ones(n_fft, device=<device>)`. (Triggered internally "
    "at /__w/pytorch/pytorch/aten/src/ATen/native/SpectralOps.cpp:835.)")
_NOT_COMPLEX = (
    "stft with return_complex=False is deprecated. In a future pytorch release, stft will "
    "return complex tensors for all inputs, and return_complex=False will raise an error.\n"
    "Note: you can still call torch.view_as_real on the complex output to recover the old "
    "return format. (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/SpectralOps.cpp:874.)")


_PKG = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _warn_once(msg):
    """warnings.warn(msg) once per process, attributed to the first frame outside ndgrad."""
    if msg in _WARNED:
        return
    _WARNED.add(msg)
    level, f = 2, sys._getframe(1)  # (stacklevel 2: the caller)
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_PKG):
        level, f = level + 1, f.f_back
    warnings.warn(msg, UserWarning, stacklevel=level)


def _opt(v):
    return "None" if v is None else str(int(bool(v)))


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """torch.stft: the short-time Fourier transform of a 1-D or (batch, length) signal."""
    from .nn import functional as F
    if center:
        if align_to_window is not None:
            raise RuntimeError("stft align_to_window should only be set when center = false")
        signal_dim = input.dim()
        extended = [1] * (3 - signal_dim) + list(input.shape)
        pad = int(n_fft // 2)
        input = F.pad(input.view(extended), [pad, pad], pad_mode)
        input = input.view(input.shape[-signal_dim:])
    if window is None:
        _warn_once(_NO_WINDOW)
    complex_in = input.is_complex() or (window is not None and window.is_complex())
    rc = return_complex if return_complex is not None else complex_in
    if not rc:
        if return_complex is None:
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will "
                "further require that return_complex=True in a future PyTorch release.")
        _warn_once(_NOT_COMPLEX)
    hop = n_fft // 4 if hop_length is None else hop_length
    wl = n_fft if win_length is None else win_length
    win = "None" if window is None else f"{_type_string(window)}{{{list(window.shape)}}}"
    where = (f"stft({_type_string(input)}{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, "
             f"win_length={wl}, window={win}, normalized={_opt(normalized)}, onesided="
             f"{_opt(onesided)}, return_complex={_opt(return_complex)}, align_to_window="
             f"{_opt(align_to_window)}) : ")
    if input.dtype._category < 2:
        raise RuntimeError(where + "expected a tensor of floating point or complex values")
    if input.dim() not in (1, 2):
        raise RuntimeError(where + "expected a 1D or 2D tensor")
    x = input.unsqueeze(0) if input.dim() == 1 else input
    length = x.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(where + f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(where + f"expected hop_length > 0, but got hop_length={hop}")
    if wl <= 0 or wl > n_fft:
        raise RuntimeError(where + f"expected 0 < win_length <= n_fft, but got win_length={wl}")
    if window is not None and (window.dim() != 1 or window.shape[0] != wl):
        raise RuntimeError(where + "expected a 1D window tensor of size equal to win_length="
                           f"{wl}, but got window with size {list(window.shape)}")
    side = onesided if onesided is not None else not complex_in
    if complex_in and side:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    aligned = bool(align_to_window)
    if wl < n_fft:  # the window, zero-padded to n_fft, centred
        left = (n_fft - wl) // 2
        w = window if window is not None else _ones(x, wl)
        window = F.pad(w, [left, n_fft - wl - left])
        if aligned:  # frames whose windowed span starts at each hop: the signal padded
            x = F.pad(x, [left, n_fft - wl - left])
    frames = x.unfold(-1, n_fft, hop)  # (batch, frames, n_fft)
    if window is not None:
        frames = frames * window
    from . import fft
    norm = "ortho" if normalized else "backward"
    if complex_in or not side:
        out = fft.fft(frames, dim=-1, norm=norm)
    else:
        out = fft.rfft(frames, dim=-1, norm=norm)
    out = out.transpose(1, 2)
    if input.dim() == 1:
        out = out.squeeze(0)
    if not rc:
        from .ops import view_as_real
        return view_as_real(out)
    return out


def _ones(like, n):
    from ._creation import ones
    return ones(n, dtype=like.dtype, device=like.device)  # (PyTorch: the input's options)


Tensor.stft = stft  # (Tensor.stft(n_fft, ...): the same function, self as the signal)
