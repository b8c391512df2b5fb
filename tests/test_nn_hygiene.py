"""nn details that must match PyTorch: parameters are initialised as PyTorch does (empty, then
reset_parameters through nn.init), so their versions after construction agree and
reset_parameters exists where PyTorch has it; registration errors word for word."""
import pytest

import ndgrad

torch = pytest.importorskip("torch")

FACTORIES = {
    "Linear": lambda n: n.Linear(2, 3),
    "Bilinear": lambda n: n.Bilinear(2, 2, 3),
    "Embedding": lambda n: n.Embedding(4, 3),
    "Embedding-padding": lambda n: n.Embedding(4, 3, padding_idx=1),
    "LSTM": lambda n: n.LSTM(2, 3),
    "GRUCell": lambda n: n.GRUCell(2, 3),
    "MultiheadAttention": lambda n: n.MultiheadAttention(4, 2, kdim=3, vdim=3),
    "PReLU": lambda n: n.PReLU(3, init=0.1),
    "BatchNorm1d": lambda n: n.BatchNorm1d(3),
    "InstanceNorm1d": lambda n: n.InstanceNorm1d(3, affine=True),
    "LayerNorm": lambda n: n.LayerNorm((3, 2)),
    "LayerNorm-nobias": lambda n: n.LayerNorm(3, bias=False),
    "GroupNorm": lambda n: n.GroupNorm(1, 3),
    "GroupNorm-noaffine": lambda n: n.GroupNorm(1, 3, affine=False),
    "RMSNorm": lambda n: n.RMSNorm(3),
    "TransformerEncoderLayer": lambda n: n.TransformerEncoderLayer(4, 2, 8),
}


@pytest.mark.parametrize("name", list(FACTORIES))
def test_parameter_versions_and_reset_match_torch(name):
    ours, theirs = FACTORIES[name](ndgrad.nn), FACTORIES[name](torch.nn)
    assert ([(k, p._version) for k, p in ours.named_parameters()]
            == [(k, p._version) for k, p in theirs.named_parameters()])
    assert hasattr(ours, "reset_parameters") == hasattr(theirs, "reset_parameters")
    for (k, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        if name not in ("Linear", "Bilinear", "Embedding", "Embedding-padding", "LSTM", "GRUCell",
                        "MultiheadAttention", "TransformerEncoderLayer"):   # not random
            assert p.tolist() == q.tolist(), k
    if name == "Embedding-padding":
        assert ours.weight[1].tolist() == [0.0, 0.0, 0.0]


def _registration_errors(lib):
    out = []
    m = lib.nn.Linear(1, 1)
    for kind in ("buffer", "parameter"):
        register = getattr(m, f"register_{kind}")
        for name in ("a.b", "", 3, "weight", "training"):
            try:
                register(name, None)
                out.append("ok")
            except Exception as e:  # noqa: BLE001 (the type is compared)
                out.append((type(e).__name__, str(e)))

    class Early(lib.nn.Module):
        def __init__(self):
            for kind in ("buffer", "parameter"):
                try:
                    getattr(self, f"register_{kind}")("x", None)
                except AttributeError as e:
                    out.append(str(e))

    Early()
    return out


def test_register_buffer_and_parameter_errors_match_torch():
    assert _registration_errors(ndgrad) == _registration_errors(torch)
