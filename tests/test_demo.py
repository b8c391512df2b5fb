"""The digits demo end to end, on a reduced number of epochs (no timing assertions)."""
import os
import subprocess
import sys

import pytest

pytest.importorskip("sklearn")
pytest.importorskip("matplotlib")
pytest.importorskip("tqdm")

from ndgrad.examples import digits  # noqa: E402


@pytest.mark.slow
def test_digits_cnn_trains_saves_reloads_and_plots(tmp_path, capsys):
    out = tmp_path / "run"
    res = digits.main(["--epochs", "2", "--seed", "0", "--out", str(out), "--no-progress"])
    acc = res["history"]["acc"]
    assert len(acc) == 2 and acc[-1] >= 0.9
    assert res["history"]["loss"][-1] < res["history"]["loss"][0]
    assert res["reloaded_accuracy"] == acc[-1]
    assert os.path.isfile(res["checkpoint"])
    with open(res["plot"], "rb") as fh:
        assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    printed = capsys.readouterr().out
    assert "(matches)" in printed and printed.count("test accuracy") == 3


@pytest.mark.slow
def test_digits_same_seed_prints_identical_numbers(tmp_path, capsys):
    args = ["--epochs", "1", "--seed", "5", "--batch-size", "64", "--no-progress"]
    digits.main(args + ["--out", str(tmp_path / "a")])
    first = capsys.readouterr().out
    digits.main(args + ["--out", str(tmp_path / "b")])
    second = capsys.readouterr().out
    assert "epoch   1  loss" in first
    assert first.replace(str(tmp_path / "a"), "") == second.replace(str(tmp_path / "b"), "")


@pytest.mark.slow
def test_digits_mlp_and_command_line(tmp_path):
    env = dict(os.environ)
    src = os.path.dirname(os.path.dirname(os.path.abspath(digits.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(src), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, "-m", "ndgrad.examples.digits", "--model", "mlp", "--epochs", "3",
         "--batch-size", "64", "--lr", "0.01", "--out", str(tmp_path)],
        capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    lines = [l for l in proc.stdout.splitlines() if l.startswith("epoch")]
    assert len(lines) == 3
    assert float(lines[-1].split()[-1].rstrip("%")) >= 90.0
    assert "epoch 1/3" in proc.stderr                     # the tqdm bar
    assert (tmp_path / "digits_mlp.pt").is_file() and (tmp_path / "digits_mlp_curves.png").is_file()


def test_bad_arguments_exit_with_usage(capsys):
    with pytest.raises(SystemExit):
        digits.main(["--model", "resnet"])
    assert "invalid choice" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        digits.main(["--epochs", "0"])
    assert "--epochs and --batch-size must be at least 1" in capsys.readouterr().err


def test_demo_writes_into_the_folder_readme_names_and_git_ignores():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    assert digits.parse_args([]).out == "out"
    readme = open(os.path.join(root, "README.md"), encoding="utf-8").read()
    assert "into `out/`, which git ignores" in readme and "saved out/digits_cnn.pt" in readme
    assert "/out/" in open(os.path.join(root, ".gitignore")).read().split()
