"""The ecosystem group (`pytest -m ecosystem`): libraries built on PyTorch, installed `--no-deps`
at the versions pinned in .ci/constraints.txt, run unchanged under `python -m ndgrad.run`.

- Each library's smoke program (tests/ecosystem/smoke_<lib>.py: the library's main entry
  points on deterministic inputs) prints what PyTorch 2.13 printed for it
  (tests/ecosystem/expected/<lib>.txt; regenerate with `python tests/test_ecosystem.py` in an
  environment with PyTorch and the libraries).
- A selection of each library's own tests (files from its sdist, which .ci/run unpacks into
  .ci-cache/ecosystem, or NDGRAD_ECOSYSTEM_SUITES) passes under ndgrad, torch's generator
  seeded before each (tests/ecosystem/_seeded.py: one of them fails on ~1 % of random draws
  under PyTorch too).
A library that is not installed skips. `python bench/ecosystem.py` runs whole suites."""
import importlib.util
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ECO = os.path.join(HERE, "ecosystem")
REPO = os.path.dirname(HERE)
SRC = os.path.join(REPO, "src")

# smoke program -> the module it needs
SMOKE = {
    "einops": "einops", "torchdiffeq": "torchdiffeq", "torchsde": "torchsde",
    "torch_optimizer": "torch_optimizer", "schedulefree": "schedulefree", "entmax": "entmax",
    "lion_pytorch": "lion_pytorch", "rotary_embedding_torch": "rotary_embedding_torch",
    "zuko": "zuko", "pyro": "pyro", "gpytorch": "gpytorch", "linear_operator": "linear_operator",
    "x_transformers": "x_transformers", "ema_pytorch": "ema_pytorch", "skorch": "skorch",
    "torchinfo": "torchinfo", "torchmetrics": "torchmetrics", "captum": "captum",
}
NEEDS_BFLOAT16 = {"einops"}   # their code names torch.bfloat16 on the path the program takes

# own tests: library -> (folder in the suites directory, test files or node ids)
OWN = {
    "linear_operator": ("linear-operator", ["test/operators/test_dense_linear_operator.py",
                                            "test/operators/test_diag_linear_operator.py"]),
    "gpytorch": ("gpytorch", ["test/kernels/test_rbf_kernel.py",
                              "test/examples/test_simple_gp_regression.py"]),
    "ema_pytorch": ("ema-pytorch", ["tests"]),
}

pytestmark = pytest.mark.ecosystem


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + ECO + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _installed(mod):
    return importlib.util.find_spec(mod) is not None


@pytest.mark.parametrize("lib", sorted(SMOKE))
def test_smoke_program_prints_pytorchs_numbers(lib):
    if not _installed(SMOKE[lib]):
        pytest.skip(f"{SMOKE[lib]} is not installed (.ci/run installs the ecosystem group)")
    if lib in NEEDS_BFLOAT16:
        import ndgrad
        if not hasattr(ndgrad, "bfloat16"):
            pytest.xfail("needs torch.bfloat16")
    r = subprocess.run([sys.executable, "-W", "ignore", "-m", "ndgrad.run",
                        os.path.join(ECO, f"smoke_{lib}.py")], capture_output=True, text=True,
                       env=_env(), cwd=ECO, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    with open(os.path.join(ECO, "expected", f"{lib}.txt"), encoding="utf-8") as f:
        assert r.stdout == f.read()


def _suites():
    return os.environ.get("NDGRAD_ECOSYSTEM_SUITES") or os.path.join(REPO, ".ci-cache",
                                                                        "ecosystem")


@pytest.mark.parametrize("lib", sorted(OWN))
def test_own_tests_pass(lib):
    if not _installed(lib):
        pytest.skip(f"{lib} is not installed")
    folder, paths = OWN[lib]
    root = os.path.join(_suites(), folder)
    if not os.path.isdir(root):
        pytest.skip(f"no tests of {lib} at {root} (.ci/run unpacks them from the sdist)")
    env = _env()
    env["PYTHONPATH"] = SRC + os.pathsep + ECO   # (ECO: the _seeded plugin)
    r = subprocess.run([sys.executable, "-m", "ndgrad.run", "-m", "pytest", *paths, "-q",
                        "-p", "no:cacheprovider", "-p", "no:warnings", "-p", "_seeded", "-x"],
                       capture_output=True, text=True, env=env, cwd=root, timeout=1200)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]


def test_transformers_gpt2_and_bert_train_and_generate_as_pytorchs(tmp_path):
    """A small GPT-2 and BERT: PyTorch's saved weights loaded, three AdamW steps, generate."""
    if not _installed("transformers"):
        pytest.skip("transformers is not installed")
    pytest.importorskip("torch")
    demo = os.path.join(ECO, "transformers_demo.py")
    env = dict(os.environ)
    ref = subprocess.run([sys.executable, demo, "save", str(tmp_path)], env=env,
                         capture_output=True, text=True, timeout=900)
    assert ref.returncode == 0, ref.stderr[-2000:]
    want = subprocess.run([sys.executable, demo, "run", str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=900)
    got = subprocess.run([sys.executable, "-m", "ndgrad.run", demo, "run", str(tmp_path)],
                         env=_env(), capture_output=True, text=True, timeout=900)
    assert got.returncode == 0, got.stderr[-3000:]
    import re
    num = re.compile(r"-?\d+\.\d+")
    w, g = want.stdout.splitlines(), got.stdout.splitlines()
    assert len(w) == len(g) == 9   # (GPT-2: 3 steps, logits, generate; BERT: 3 steps, logits)
    for a, b in zip(w, g):
        assert num.sub("#", a) == num.sub("#", b)
        for x, y in zip(num.findall(a), num.findall(b)):
            assert abs(float(x) - float(y)) <= 1e-6 * max(1.0, abs(float(x))), (a, b)


if __name__ == "__main__":   # regenerate the expected outputs (run with PyTorch installed)
    for lib in sorted(SMOKE):
        out = subprocess.run([sys.executable, "-W", "ignore", f"smoke_{lib}.py"], cwd=ECO,
                             capture_output=True, text=True, check=True).stdout
        with open(os.path.join(ECO, "expected", f"{lib}.txt"), "w", encoding="utf-8") as f:
            f.write(out)
        print(lib, len(out.splitlines()), "lines")
