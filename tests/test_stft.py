"""torch.stft / Tensor.stft: values, options and messages against PyTorch; gradients of first
and second order by finite differences; a known transform where PyTorch is absent."""
import warnings

import numpy as np
import pytest

import ndgrad
from ndgrad.autograd import gradcheck, gradgradcheck

R = np.random.default_rng(0)
X1 = R.standard_normal(40)
X2 = R.standard_normal((3, 40))
HANN6 = np.hanning(6)

CASES = [  # (signal, window, keywords)
    (X1, None, dict(n_fft=8, return_complex=True)),
    (X2, None, dict(n_fft=8, hop_length=3, return_complex=True)),
    (X2, HANN6, dict(n_fft=8, win_length=6, return_complex=True)),
    (X2, HANN6, dict(n_fft=8, win_length=6, return_complex=True, center=False)),
    (X2, HANN6, dict(n_fft=8, win_length=6, hop_length=2, return_complex=True, center=False,
                     align_to_window=True)),
    (X2, None, dict(n_fft=8, win_length=5, hop_length=3, return_complex=True, center=False,
                    align_to_window=True)),
    (X2, None, dict(n_fft=8, win_length=5, return_complex=True)),
    (X2, np.hanning(8), dict(n_fft=8, return_complex=True, onesided=False, normalized=True)),
    (X2, None, dict(n_fft=8, return_complex=False)),
    (X2.astype(np.complex128), None, dict(n_fft=8, return_complex=True)),
    (X2.astype(np.complex128), None, dict(n_fft=8)),
    (X2, np.hanning(8).astype(np.complex128), dict(n_fft=8)),
    (X1, None, dict(n_fft=8, return_complex=True, pad_mode="constant")),
    (X1, None, dict(n_fft=8, return_complex=True, pad_mode="replicate")),
    (X1, None, dict(n_fft=8, return_complex=True, pad_mode="circular")),
    (X1.astype(np.float32), np.hanning(8), dict(n_fft=8, return_complex=True)),  # promotes
    (X1, None, dict(n_fft=40, return_complex=True, center=False)),
    (X1, np.ones(8), dict(n_fft=8, hop_length=1, return_complex=True)),
]

ERRORS = [
    (X1, None, dict(n_fft=50, return_complex=True, center=False)),
    (X1, None, dict(n_fft=0, return_complex=True)),
    (X1, None, dict(n_fft=8, hop_length=0, return_complex=True)),
    (X1, None, dict(n_fft=8, win_length=9, return_complex=True)),
    (X1, None, dict(n_fft=8, win_length=0, return_complex=True)),
    (X1, np.ones(7), dict(n_fft=8, return_complex=True)),
    (X1, np.ones((2, 8)), dict(n_fft=8, return_complex=True, normalized=True, onesided=True)),
    (X1, None, dict(n_fft=8)),
    (R.standard_normal((2, 2, 40)), None, dict(n_fft=8, return_complex=True)),
    (np.arange(40), None, dict(n_fft=8, return_complex=True)),
    (X1, None, dict(n_fft=8, return_complex=True, align_to_window=True)),
    (X1.astype(np.complex64), None, dict(n_fft=8, return_complex=True, onesided=True)),
    (X1, None, dict(n_fft=8, return_complex=True, pad_mode="zeros")),
    (X1[:4], None, dict(n_fft=8, return_complex=True)),
    (np.array(1.0), None, dict(n_fft=4, return_complex=True)),  # 0-d and empty signals
    (np.zeros(0), None, dict(n_fft=4, return_complex=True)),
    (np.zeros((2, 0)), None, dict(n_fft=4, return_complex=True)),
    (np.zeros((2, 0)), None, dict(n_fft=4, return_complex=True, center=False)),
]


def _run(L, x, w, kw, method=False):
    x = L.tensor(x)
    w = None if w is None else L.tensor(w)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method:
            return x.stft(window=w, **kw)
        return L.stft(x, window=w, **kw)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_stft_matches_torch(case):
    torch = pytest.importorskip("torch")
    x, w, kw = CASES[case]
    a, b = _run(ndgrad, x, w, kw), _run(torch, x, w, kw, method=True)
    assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5 if "32" in str(a.dtype) else 1e-10,
                               atol=1e-5 if "32" in str(a.dtype) else 1e-10)


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_stft_errors_match_torch(case):
    torch = pytest.importorskip("torch")
    x, w, kw = ERRORS[case]
    out = []
    for L in (ndgrad, torch):
        with pytest.raises(Exception) as e:
            _run(L, x, w, kw)
        out.append((type(e.value).__name__, str(e.value)))
    assert out[0] == out[1]


def test_stft_warns_as_torch_once_per_process():
    # (PyTorch's TORCH_WARN_ONCE: the messages, once each; a fresh process sees them again)
    from ndgrad.ops import _spectral
    _spectral._WARNED.clear()
    x = ndgrad.tensor(X1)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        ndgrad.stft(x, 8, return_complex=False)
        ndgrad.stft(x, 8, return_complex=False)
    msgs = [str(w.message) for w in got]
    assert len(msgs) == 2 and msgs[0].startswith("A window was not provided.")
    assert msgs[1].startswith("stft with return_complex=False is deprecated.")
    assert all(w.filename == __file__ for w in got)


def test_stft_of_a_sinusoid_peaks_at_its_bin():
    n = 64
    x = ndgrad.tensor(np.cos(2 * np.pi * 5 * np.arange(256) / n))
    s = ndgrad.stft(x, n, hop_length=16, window=ndgrad.hann_window(n, dtype=ndgrad.float64),
                    return_complex=True)
    assert s.shape == (n // 2 + 1, 1 + 256 // 16)
    assert (s.abs()[:, 4:-4].argmax(0) == 5).all()
    full = ndgrad.stft(x, n, hop_length=16, window=ndgrad.ones(n, dtype=ndgrad.float64),
                       return_complex=True, onesided=False)
    np.testing.assert_allclose(full[: n // 2 + 1].numpy(),
                               ndgrad.stft(x, n, 16, window=ndgrad.ones(n, dtype=ndgrad.float64),
                                           return_complex=True).numpy(), atol=1e-12)


@pytest.mark.parametrize("kw", [
    dict(n_fft=8, hop_length=3, return_complex=True),
    dict(n_fft=8, win_length=5, hop_length=2, return_complex=True, center=False,
         align_to_window=True),
    dict(n_fft=6, hop_length=2, return_complex=True, onesided=False, normalized=True,
         pad_mode="constant"),
    dict(n_fft=8, return_complex=False),
])
def test_stft_gradients_first_and_second_order(kw):
    x = ndgrad.tensor(R.standard_normal((2, 20)), requires_grad=True)
    w = ndgrad.tensor(R.uniform(0.5, 1.5, kw.get("win_length", kw["n_fft"])),
                      requires_grad=True)

    def f(x, w):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = ndgrad.stft(x, window=w, **kw)
        return ndgrad.view_as_real(y) if y.is_complex() else y
    assert gradcheck(f, (x, w))
    assert gradgradcheck(f, (x, w))


# ---------------------------------------------------------------- istft

def _spec(L, x=X2, n_fft=8, hop=None, wl=None, **kw):
    w = L.hann_window(wl or n_fft, dtype=L.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return L.stft(L.tensor(x), n_fft, hop, wl, window=w, return_complex=True, **kw), w


ISTFT = [  # (stft keywords, istft keywords beside n_fft/hop/win_length/window)
    (dict(), dict()),
    (dict(), dict(window=None)),
    (dict(), dict(length=60)),
    (dict(), dict(length=30, normalized=True, onesided=True)),
    (dict(onesided=False), dict(return_complex=True)),
    (dict(onesided=False), dict()),
    (dict(hop=3, wl=6), dict()),
    (dict(normalized=True), dict(normalized=True)),
    (dict(x=X1), dict()),
]
ISTFT_ERRORS = [
    lambda L, S, w: L.istft(S.real, 8),
    lambda L, S, w: L.istft(S[:, :0], 8),
    lambda L, S, w: L.istft(S[0, 0], 8),
    lambda L, S, w: L.istft(S, 10),
    lambda L, S, w: L.istft(S, 8, onesided=False),
    lambda L, S, w: L.istft(S, 8, hop_length=9, win_length=8),
    lambda L, S, w: L.istft(S, 8, win_length=9),
    lambda L, S, w: L.istft(S, 8, window=L.ones(7)),
    lambda L, S, w: L.istft(S, 8, window=w, return_complex=True),
    lambda L, S, w: L.istft(S, 8, window=w, center=False),
    lambda L, S, w: L.istft(S, 8, window=L.ones(8, dtype=L.complex128)),
]


@pytest.mark.parametrize("case", range(len(ISTFT)))
def test_istft_matches_torch(case):
    torch = pytest.importorskip("torch")
    skw, ikw = ISTFT[case]
    out = []
    for L in (ndgrad, torch):
        S, w = _spec(L, **skw)
        kw = dict(hop_length=skw.get("hop"), win_length=skw.get("wl"), window=w)
        kw.update(ikw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(L.istft(S, 8, **kw) if L is ndgrad else S.istft(8, **kw))
    a, b = out
    assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", range(len(ISTFT_ERRORS)))
def test_istft_errors_match_torch(case):
    torch = pytest.importorskip("torch")
    out = []
    for L in (ndgrad, torch):
        S, w = _spec(L)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as e:
                ISTFT_ERRORS[case](L, S, w)
        out.append((type(e.value).__name__, str(e.value)))
    assert out[0] == out[1]


def test_istft_inverts_stft_and_pads_a_longer_length():
    S, w = _spec(ndgrad)
    np.testing.assert_allclose(ndgrad.istft(S, 8, window=w).numpy(), X2, atol=1e-12)
    S, w = _spec(ndgrad, hop=3, wl=6)
    np.testing.assert_allclose(ndgrad.istft(S, 8, 3, 6, window=w, length=40).numpy(), X2,
                               atol=1e-12)
    from ndgrad.ops import _spectral
    _spectral._WARNED.discard(_spectral._SHORT)
    S, w = _spec(ndgrad)
    with pytest.warns(UserWarning, match="The length of signal is shorter than the length"):
        y = ndgrad.istft(S, 8, window=w, length=50)
    assert y.shape == (3, 50) and (y[:, 44:] == 0).all()


@pytest.mark.parametrize("ikw", [dict(), dict(onesided=False, return_complex=True),
                                 dict(normalized=True, length=18)])
def test_istft_gradients_first_and_second_order(ikw):
    S, _ = _spec(ndgrad, x=R.standard_normal((2, 16)), onesided=not ikw.get("return_complex"))
    S = S.detach().requires_grad_()
    w = ndgrad.tensor(R.uniform(0.5, 1.5, 8), requires_grad=True)

    def f(S, w):
        y = ndgrad.istft(S, 8, window=w, **ikw)
        return ndgrad.view_as_real(y) if y.is_complex() else y
    assert gradcheck(f, (S, w))
    assert gradgradcheck(f, (S, w))


@pytest.mark.standin
def test_windows_stft_istft_on_the_standin_device(standin):
    # the device's arrays refuse any trip through NumPy: everything stays on cuda:0 and equals
    # the CPU's results, gradients included
    out = []
    for dev in (None, standin):
        x = ndgrad.tensor(X2, device=dev, requires_grad=True)
        ws = [getattr(ndgrad, n)(8, dtype=ndgrad.float64, device=dev) for n in (
            "hann_window", "hamming_window", "blackman_window", "bartlett_window",
            "kaiser_window")]
        S = ndgrad.stft(x, 8, window=ws[0], return_complex=True)
        S2 = ndgrad.stft(x, 8, 2, 6, window=ws[1][:6], return_complex=True, center=False,
                         align_to_window=True)
        y = ndgrad.istft(S, 8, window=ws[0])
        (y.sum() + S2.abs().sum()).backward()
        res = ws + [S, S2, y, x.grad]
        assert all(t.device == (dev or ndgrad.device("cpu")) for t in res)
        out.append([t.detach().cpu().numpy() for t in res])
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
