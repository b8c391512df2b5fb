"""A plain `pickle` of PyTorch tensors (not torch.save: caches such as cachier's, multiprocessing
queues, objects holding tensors) loads under ndgrad's alias: PyTorch's pickle names
torch._utils._rebuild_tensor_v2 and torch.storage._load_from_bytes (a legacy torch.save stream of
the storage), which ndgrad provides; values, dtypes, shapes, strides of views, Parameters."""
import os
import pickle
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")


def test_pytorch_pickles_load_under_the_alias(tmp_path):
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    objs = {"f32": base, "view": base.t()[1:], "i64": torch.tensor([1, -2, 3]),
            "bool": torch.tensor([True, False]), "f64_0d": torch.tensor(2.5, dtype=torch.float64),
            "param": torch.nn.Parameter(torch.ones(2, 2)), "grad": torch.ones(2).requires_grad_(),
            "nested": [torch.zeros(1), {"k": torch.full((2,), 7)}]}
    path = tmp_path / "objs.pkl"
    path.write_bytes(pickle.dumps(objs))
    prog = textwrap.dedent(f"""
        import pickle, sys
        import ndgrad
        ndgrad.alias_torch()
        import torch
        o = pickle.loads(open({str(path)!r}, "rb").read())
        assert "ndgrad" in torch.__file__
        out = {{k: (str(v.dtype), list(v.shape), v.tolist(), v.requires_grad, type(v).__name__)
               for k, v in o.items() if k != "nested"}}
        out["nested"] = [o["nested"][0].tolist(), o["nested"][1]["k"].tolist()]
        out["view_stride"] = list(o["view"].stride())
        print(repr(out))
    """)
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": os.path.join(src, "src")}
    p = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, env=env,
                       timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    got = eval(p.stdout)
    want = {k: (str(v.dtype), list(v.shape), v.tolist(), v.requires_grad, type(v).__name__)
            for k, v in objs.items() if k != "nested"}
    want["nested"] = [[0.0], [7, 7]]
    want["view_stride"] = list(objs["view"].stride())     # (a view of the pickled storage)
    assert got == want
