"""The newcomer path stays true: two commands in README, CI runs the second, a LICENSE ships."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _read(*parts):
    return open(os.path.join(ROOT, *parts), encoding="utf-8").read()


def test_readme_has_two_commands_and_ci_runs_the_test_one():
    readme = _read("README.md")
    section = readme.split("## Install and run: two commands")[1].split("\n## ")[0]
    commands = re.findall(r"```bash\n(.*?)\n```", section, re.S)
    assert len(commands) == 2
    demo, tests = commands
    assert demo.startswith("pip install") and "python -m ndgrad.examples.digits" in demo
    assert tests.startswith("pip install") and tests.endswith("python -m pytest")
    ci_lines = [ln.strip() for ln in _read(".ci", "run").splitlines()]
    assert ci_lines[-1] == tests          # the last thing CI does is README's command


def test_license_ships_in_the_wheel_metadata():
    assert "MIT License" in _read("LICENSE")
    pyproject = _read("pyproject.toml")
    assert 'license-files = ["LICENSE"]' in pyproject
    deps = re.search(r"^dependencies = \[(.*?)\]", pyproject, re.M).group(1)
    # NumPy, and ml_dtypes for bfloat16/float8 (a NumPy extension needing nothing else)
    assert re.findall(r'"([a-zA-Z0-9_-]+)', deps) == ["numpy", "ml_dtypes"]
