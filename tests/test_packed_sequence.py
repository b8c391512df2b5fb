"""PackedSequence utilities and RNN/LSTM/GRU on packed batches, against PyTorch."""
import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")


def _both(fn):
    return fn(torch), fn(ndgrad)


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(_np(b), _np(a), rtol=tol, atol=tol)


A = np.random.default_rng(0).standard_normal((5, 3, 2))


def test_pack_pad_roundtrip_and_gradients_match_pytorch():
    def run(lib):
        R = lib.nn.utils.rnn
        x = lib.tensor(A, requires_grad=True)
        p = R.pack_padded_sequence(x, [5, 3, 2])
        p2 = R.pack_padded_sequence(x.transpose(0, 1), lib.tensor([2, 5, 3]), batch_first=True,
                                    enforce_sorted=False)
        out, lens = R.pad_packed_sequence(p2, batch_first=True, padding_value=-1.0,
                                          total_length=6)
        (out.sum() * 2 + p.data.pow(2).sum()).backward()
        seqs = [lib.tensor(A[:n, i]) for i, n in enumerate([2, 4, 1])]
        ps = R.pack_sequence(seqs, enforce_sorted=False)
        unpacked = R.unpack_sequence(ps)
        return [p.data, p.batch_sizes, p2.batch_sizes, p2.sorted_indices, p2.unsorted_indices,
                out, lens, x.grad, ps.data, ps.batch_sizes] + unpacked
    ref, got = _both(run)
    assert len(ref) == len(got)
    for r, g in zip(ref, got):
        assert tuple(r.shape) == tuple(g.shape) and str(r.dtype) == str(g.dtype)
        _close(r, g)


def test_packing_errors_match_pytorch():
    cases = [
        (lambda L, x: L.nn.utils.rnn.pack_padded_sequence(x, [2, 5, 3]), RuntimeError,
         "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True"),
        (lambda L, x: L.nn.utils.rnn.pack_padded_sequence(x, [5, 3, 0]), RuntimeError,
         "Length of all samples has to be greater than 0, but found an element in 'lengths' "
         "that is <= 0"),
        (lambda L, x: L.nn.utils.rnn.pack_padded_sequence(x, [5, 3]), RuntimeError,
         r"Expected `len\(lengths\)` to be equal to batch_size, but got 2 \(batch_size=3\)"),
        (lambda L, x: L.nn.utils.rnn.pad_packed_sequence(
            L.nn.utils.rnn.pack_padded_sequence(x, [5, 3, 2]), total_length=2), ValueError,
         "Expected total_length to be at least the length of the longest sequence in input, "
         "but got total_length=2 and max sequence length being 5"),
    ]
    for fn, exc, msg in cases:
        for lib in (torch, ndgrad):
            with pytest.raises(exc, match=msg):
                fn(lib, lib.tensor(A))


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("sorted_", [True, False])
def test_rnn_on_packed_batch_matches_pytorch(mode, batch_first, sorted_):
    rng = np.random.default_rng(1)
    lengths = [6, 4, 4, 1] if sorted_ else [4, 6, 1, 4]
    x_np = rng.standard_normal((4, 6, 3) if batch_first else (6, 4, 3))
    h_np = rng.standard_normal((4, 4, 5))

    def run(lib):
        R = lib.nn.utils.rnn
        lib.manual_seed(0)
        m = getattr(lib.nn, mode)(3, 5, num_layers=2, bidirectional=True,
                                  batch_first=batch_first).double()
        with lib.no_grad():
            for i, p in enumerate(m.parameters()):
                p.copy_(lib.tensor(np.random.default_rng(10 + i).uniform(-0.5, 0.5, p.shape)))
        x = lib.tensor(x_np, requires_grad=True)
        h0 = lib.tensor(h_np, requires_grad=True)
        hx = (h0, h0 * 0.5) if mode == "LSTM" else h0
        packed = R.pack_padded_sequence(x, lib.tensor(lengths), batch_first=batch_first,
                                        enforce_sorted=sorted_)
        out, h = m(packed, hx)
        assert isinstance(out, R.PackedSequence)
        padded, lens = R.pad_packed_sequence(out, batch_first=batch_first)
        hs = h if mode == "LSTM" else (h,)
        loss = padded.pow(2).sum() + sum((k * (i + 1)).sum() for i, k in enumerate(hs))
        loss.backward()
        return [out.data, padded, lens] + list(hs) + [x.grad, h0.grad] + \
            [p.grad for p in m.parameters()]
    ref, got = _both(run)
    for r, g in zip(ref, got):
        _close(r, g, 1e-9)
