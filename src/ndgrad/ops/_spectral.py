"""torch.stft and torch.istft (and their Tensor methods), composed of ndgrad's differentiable ops
(pad, unfold, mul, the fft module, index_add), so gradients of every order come with them.

PyTorch's semantics (torch/functional.py and ATen's SpectralOps.cpp): `center` pads the signal
by n_fft // 2 on both sides with `pad_mode`; a window shorter than n_fft is zero-padded to it,
centred (with `align_to_window` and `center=False` the frames move so that each windowed span
starts at a multiple of hop_length); frames are `1 + (length - n_fft) // hop_length`; `normalized` scales by n_fft ** -0.5; the result is
(batch?, n_fft // 2 + 1 or n_fft, frames). istft inverts it by overlap-add, divided by the
overlap-added squared window. The checks and their messages are PyTorch's.
"""
from .. import _dtype as D
from .._tensor import Tensor
from ..autograd.graph import _type_string, warn_at_user

__all__ = ["stft", "istft"]

_WARNED = set()  # PyTorch's warnings that it gives once per process (TORCH_WARN_ONCE)

_NO_WINDOW = (
    "A window was not provided. A rectangular window will be applied,which is known to cause "
    "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
    "recommended to reduce spectral leakage.To suppress this warning and use a rectangular "
    "window, explicitly set `window=torch.ones(n_fft, device=<device>)`. (Triggered internally "
    "at /__w/pytorch/pytorch/aten/src/ATen/native/SpectralOps.cpp:835.)")
_NO_WINDOW_ISTFT = (
    "A window was not provided. A rectangular window will be applied.Please provide the same "
    "window used by stft to make the inversion lossless.To suppress this warning and use a "
    "rectangular window, explicitly set `window=torch.ones(n_fft, device=<device>)`. (Triggered "
    "internally at /__w/pytorch/pytorch/aten/src/ATen/native/SpectralOps.cpp:1070.)")
_SHORT = (
    "The length of signal is shorter than the length parameter. Result is being padded with "
    "zeros in the tail. Please check your center and hop_length settings. (Triggered internally "
    "at /__w/pytorch/pytorch/aten/src/ATen/native/SpectralOps.cpp:1199.)")
_NOT_COMPLEX = (
    "stft with return_complex=False is deprecated. In a future pytorch release, stft will "
    "return complex tensors for all inputs, and return_complex=False will raise an error.\n"
    "Note: you can still call torch.view_as_real on the complex output to recover the old "
    "return format. (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/SpectralOps.cpp:874.)")


def _warn_once(msg):
    """warnings.warn(msg) once per process, attributed to the first frame outside ndgrad."""
    if msg in _WARNED:
        return
    _WARNED.add(msg)
    warn_at_user(msg)


def _tostring(t):
    """ATen's Tensor::toString(): torch.FloatTensor, but CPUComplexFloatType for complex ones."""
    if t.is_complex():
        dev = "CUDA" if t.device.type == "cuda" else "CPU"
        return f"{dev}Complex{'Float' if t.dtype is D.complex64 else 'Double'}Type"
    return _type_string(t)


def _opt(v):
    return "None" if v is None else str(int(bool(v)))


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """torch.stft: the short-time Fourier transform of a 1-D or (batch, length) signal."""
    from ..nn import functional as F
    from .._creation import ones
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
    win = "None" if window is None else f"{_tostring(window)}{{{list(window.shape)}}}"
    where = (f"stft({_tostring(input)}{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, "
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
        w = window if window is not None else ones(wl, dtype=x.dtype, device=x.device)  # (input's)
        window = F.pad(w, [left, n_fft - wl - left])
        if aligned:  # frames whose windowed span starts at each hop: the signal padded
            x = F.pad(x, [left, n_fft - wl - left])
    frames = x.unfold(-1, n_fft, hop)  # (batch, frames, n_fft)
    if window is not None:
        frames = frames * window
    from .. import fft
    norm = "ortho" if normalized else "backward"
    if complex_in or not side:
        out = fft.fft(frames, dim=-1, norm=norm)
    else:
        out = fft.rfft(frames, dim=-1, norm=norm)
    out = out.transpose(1, 2)
    if input.dim() == 1:
        out = out.squeeze(0)
    if not rc:
        from . import view_as_real
        return view_as_real(out)
    return out


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """torch.istft: the inverse of stft (overlap-add of the inverse transforms of the frames,
    divided by the overlap-added squared window)."""
    from ..nn import functional as F
    from .. import fft
    from .._creation import zeros, ones, arange
    if window is None:
        _warn_once(_NO_WINDOW_ISTFT)
    hop = n_fft >> 2 if hop_length is None else hop_length
    wl = n_fft if win_length is None else win_length
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    shape = list(input.shape)
    if input.dim() < 2:  # (view_as_real, then its size(-3): PyTorch's wrapped-dim error)
        n = input.dim() + 1
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         "but got -3)")
    n_frames, fft_size = shape[-1], shape[-2]
    win = "None" if window is None else f"{_tostring(window)}{{{list(window.shape)}}}"
    where = (f"istft({_tostring(input)}{shape}, n_fft={n_fft}, hop_length={hop}, win_length="
             f"{wl}, window={win}, center={_opt(center)}, normalized={_opt(normalized)}, "
             f"onesided={_opt(onesided)}, length={'None' if length is None else length}, "
             f"return_complex={_opt(return_complex)}) ")
    if input.numel() == 0:
        raise RuntimeError(where + ": input tensor cannot be empty.")
    if input.dim() not in (2, 3):
        raise RuntimeError(where + ": expected a tensor with 3 or 4 dimensions of complex dtype, "
                           f"but got {input.dim() + 1}")
    side = onesided if onesided is not None else fft_size != n_fft
    if side and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(where + ": expected the frequency dimension (3rd to the last) of the "
                           "input tensor to match n_fft / 2 + 1 when onesided=True, but got "
                           f"{fft_size}")
    if not side and n_fft != fft_size:
        raise RuntimeError(where + ": expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop <= wl:
        raise RuntimeError(where + ": expected 0 < hop_length <= win_length")
    if not 0 < wl <= n_fft:
        raise RuntimeError(where + ": expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != wl):
        raise RuntimeError(where + ": Invalid window shape. window has to be 1D and length of "
                           "`win_length`")
    if window is None:  # (PyTorch: ones in the real dtype of the input)
        w = ones(wl, dtype=D.float64 if input.dtype is D.complex128 else D.float32,
                 device=input.device)
    else:
        w = window
    if wl != n_fft:  # centred in n_fft, zeros around
        left = (n_fft - wl) // 2
        w = F.pad(w, [left, n_fft - wl - left])
    x = input.unsqueeze(0) if input.dim() == 2 else input
    x = x.transpose(1, 2)  # (channel, frames, fft_size)
    norm = "ortho" if normalized else "backward"
    if return_complex:
        if side:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = fft.ifft(x, dim=-1, norm=norm)
    else:
        if window is not None and window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not side:
            x = x.narrow(-1, 0, n_fft // 2 + 1)
        frames = fft.irfft(x, n=n_fft, dim=-1, norm=norm)
    frames = frames * w  # (channel, frames, n_fft)
    total = n_fft + hop * (n_frames - 1)
    index = (arange(n_frames, device=input.device).unsqueeze(1) * hop +
             arange(n_fft, device=input.device)).reshape(-1)
    y = zeros(frames.shape[0], total, dtype=frames.dtype, device=input.device).index_add(
        1, index, frames.reshape(frames.shape[0], -1))
    envelope = zeros(1, total, dtype=w.dtype, device=input.device).index_add(
        1, index, (w * w).expand(n_frames, n_fft).reshape(1, -1))
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else -(n_fft // 2) if center else total
    y = y[:, start:end]
    envelope = envelope[:, start:end]
    if bool((envelope.abs().min() < 1e-11).item()) if envelope.numel() else False:
        raise RuntimeError(where + "window overlap add min: 1\n[ CPUBoolType{} ]")
    y = y / envelope
    if input.dim() == 2:
        y = y.squeeze(0)
    if end > total:
        _warn_once(_SHORT)
        y = F.pad(y, [0, end - total])
    return y


Tensor.stft = stft  # (Tensor.stft(n_fft, ...): the same function, self as the signal)
Tensor.istft = istft
