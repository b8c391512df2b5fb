"""Run torch-based libraries' own test suites under PyTorch and under ndgrad, side by side.

    python bench/ecosystem.py setup  [--root DIR]            # two venvs + the suites
    python bench/ecosystem.py run    [--root DIR] [LIB ...]  # run, print the table
    python bench/ecosystem.py report [--root DIR]            # the table of the last run

`setup` makes DIR/venv-torch (PyTorch 2.13.0 and the libraries, with their dependencies) and
DIR/venv-ndgrad (no PyTorch: ndgrad from this checkout, `python -m ndgrad.torch_dist install`,
then the same libraries and dependencies at the versions venv-torch resolved, `--no-deps`),
and unpacks each library's tests from its sdist into DIR/suites/<lib>. A library whose sdist
ships no tests needs them from its repository: put them at DIR/suites/<lib> (a checkout's
`tests` folder, as listed in SUITES) before `run`; setup says which are missing.

`run` runs each suite with pytest in both environments (`python -m ndgrad.run -m pytest` for
ndgrad), each test with a time limit, and prints per library: the tests collected, passed under
PyTorch, passed under ndgrad, and how many of the PyTorch-passing tests pass under ndgrad (the
issue's measure). Outcomes stay in DIR/results (<lib>.<side>.out). A whole suite takes
minutes to hours (pyro, kornia, torchmetrics are the long ones): the big ones run a
deterministic sample by default (SAMPLE; --sample 1 runs them whole); name libraries to run a
part, and `report --lists` then `run --ids DIR/results/<lib>.gap.txt --side ndgrad` reruns only
the tests that pass on PyTorch and not on ndgrad.
"""
import argparse
import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# library: (distribution, import name, test paths inside DIR/suites/<lib>, pytest extras)
ENV = {"einops": {"EINOPS_TEST_BACKENDS": "torch"}}   # what a suite needs set to run
# Suites too big to run whole on a small machine run a deterministic sample: the tests whose
# node id hashes to 0 modulo k (bench/eco_plugin; the same ids on both sides). --sample 1
# runs them whole.
SAMPLE = {"pyro": 300, "kornia": 100, "torchmetrics": 400, "linear-operator": 50,
          "gpytorch": 25, "skorch": 20, "torchsde": 20, "captum": 15, "torch-optimizer": 4,
          "x-transformers": 4, "zuko": 2}
SUITES = {
    "einops": ("einops", "einops", ["tests"], []),
    "torchdiffeq": ("torchdiffeq", "torchdiffeq", ["tests"], ["-o", "python_files=*_tests.py"]),
    "torchsde": ("torchsde", "torchsde", ["tests"], []),
    "torch-optimizer": ("torch-optimizer", "torch_optimizer", ["tests"], []),
    "schedulefree": ("schedulefree", "schedulefree", ["test_schedulefree.py"], []),
    "entmax": ("entmax", "entmax", ["tests"], []),   # (the package's test_*.py files)
    "lion-pytorch": ("lion-pytorch", "lion_pytorch", ["tests"], []),
    "rotary-embedding-torch": ("rotary-embedding-torch", "rotary_embedding_torch", ["tests"],
                               []),   # (tests/test_rope.py of the repository's commit 741d150)
    "zuko": ("zuko", "zuko", ["tests"], []),
    "pyro": ("pyro-ppl", "pyro", ["tests"], ["-p", "no:warnings"]),
    "gpytorch": ("gpytorch", "gpytorch", ["test"], []),
    "linear-operator": ("linear-operator", "linear_operator", ["test"], []),
    "x-transformers": ("x-transformers", "x_transformers", ["tests"], []),
    "ema-pytorch": ("ema-pytorch", "ema_pytorch", ["tests"], []),
    "skorch": ("skorch", "skorch", ["tests"], []),
    "torchinfo": ("torchinfo", "torchinfo", ["tests/torchinfo_test.py",
                                           "tests/exceptions_test.py"], []),   # (xl: torchvision)
    "torchmetrics": ("torchmetrics", "torchmetrics", ["tests/unittests"], []),
    "captum": ("captum", "captum", ["tests"], []),
    "kornia": ("kornia", "kornia", ["tests"], []),
}

TEST_DEPS = ["pytest", "pytest-timeout", "hypothesis", "expecttest", "parameterized", "scipy",
             "scikit-learn"]


def _py(venv):
    return os.path.join(venv, "bin", "python")


def _run(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, **kw)


def setup(root, libs):
    os.makedirs(root, exist_ok=True)
    vt, vn = os.path.join(root, "venv-torch"), os.path.join(root, "venv-ndgrad")
    dists = [SUITES[lib][0] for lib in libs]
    constraints = os.path.join(REPO, ".ci", "constraints.txt")
    pin = ["-c", constraints] if os.path.exists(constraints) else []
    if not os.path.exists(_py(vt)):
        _run([sys.executable, "-m", "venv", vt])
    _run([_py(vt), "-m", "pip", "install", "-q", *pin, "torch==2.13.0", *TEST_DEPS, *dists])
    freeze = subprocess.run([_py(vt), "-m", "pip", "freeze"], capture_output=True, text=True,
                            check=True).stdout.split()
    keep = [r for r in freeze if not r.lower().startswith(("torch==", "nvidia", "triton"))]
    if not os.path.exists(_py(vn)):
        _run([sys.executable, "-m", "venv", vn])
    _run([_py(vn), "-m", "pip", "install", "-q", "--no-deps", "-e", REPO])
    _run([_py(vn), "-m", "ndgrad.torch_dist", "install"])
    _run([_py(vn), "-m", "pip", "install", "-q", "--no-deps", *keep])
    sdists = os.path.join(root, "sdists")
    os.makedirs(sdists, exist_ok=True)
    missing = []
    for lib in libs:
        dest = os.path.join(root, "suites", lib)
        if os.path.exists(dest):
            continue
        dist, mod, paths, _ = SUITES[lib]
        version = [r.split("==")[1] for r in keep if r.lower().replace("_", "-").startswith(
            dist.lower() + "==")]
        spec = f"{dist}=={version[0]}" if version else dist
        try:
            _run([_py(vt), "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                  "-d", sdists, spec])
        except subprocess.CalledProcessError:
            missing.append(lib)
            continue
        import tarfile
        name = [f for f in os.listdir(sdists) if f.lower().replace("_", "-").startswith(
            dist.lower() + "-")]
        if not name:
            missing.append(lib)
            continue
        with tarfile.open(os.path.join(sdists, name[0])) as tf:
            tf.extractall(os.path.join(sdists, "x"), filter="data")
        top = os.path.join(sdists, "x", name[0].rsplit(".tar", 1)[0])
        found = []
        for p in paths:
            for cand in (os.path.join(top, p), os.path.join(top, mod, p)):
                if os.path.exists(cand):
                    os.makedirs(dest, exist_ok=True)
                    _run(["cp", "-r", cand, os.path.join(dest, os.path.basename(p))])
                    found.append(p)
                    break
        if not found:
            missing.append(lib)
        for p in paths:   # suites that import their tests as a package (torchsde's)
            init = os.path.join(dest, p, "__init__.py")
            if os.path.isdir(os.path.join(dest, p)) and not os.path.exists(init):
                open(init, "w").close()
    if missing:
        print("no tests in the sdists of: " + ", ".join(missing) +
              f"; put their repositories' tests at {root}/suites/<lib>/ (see SUITES)")


def _counts(out_path, xml_path):
    """{test id: outcome} (passed, failed, skipped) from the plugin's file, else a JUnit file."""
    out = {}
    if os.path.exists(out_path):
        with open(out_path, encoding="utf-8") as f:
            for line in f:
                outcome, _, tid = line.rstrip("\n").partition(" ")
                if tid:
                    out[tid] = outcome
        return out
    if not os.path.exists(xml_path):
        return out
    try:
        tree = ET.parse(xml_path)
    except ET.ParseError:
        return out
    for case in tree.iter("testcase"):
        tid = f"{case.get('classname')}::{case.get('name')}"
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
            elif child.tag == "skipped":
                outcome = "skipped"
        out[tid] = outcome
    return out


def _paths(root, lib):
    return (os.path.join(root, "results", f"{lib}.{{}}.out"),
            os.path.join(root, "results", f"{lib}.{{}}.xml"))


def run(root, libs, timeout, per_test_timeout, extra, sides=("torch", "ndgrad"), sample=None,
        ids=None):
    results = os.path.join(root, "results")
    os.makedirs(results, exist_ok=True)
    for lib in libs:
        suite = os.path.join(root, "suites", lib)
        if not os.path.isdir(suite):
            print(f"{lib}: no suite at {suite}; skipped")
            continue
        paths = [p for p in SUITES[lib][2] if os.path.exists(os.path.join(suite, p))]
        k = SAMPLE.get(lib, 1) if sample is None else sample
        if ids is not None:   # (the listed ids, whatever sample they were drawn from)
            k = 1
        else:                 # (the report names the sample the results were run with)
            with open(os.path.join(results, f"{lib}.sample"), "w") as f:
                f.write(str(k))
        for side, venv in (("torch", "venv-torch"), ("ndgrad", "venv-ndgrad")):
            if side not in sides:
                continue      # (the other side's last results stay)
            out, xml = (p.format(side) for p in _paths(root, lib))
            for f in (out, out + ".why"):
                if ids is None and os.path.exists(f):
                    os.remove(f)
            pre = ["-m", "ndgrad.run"] if side == "ndgrad" else []
            cmd = [_py(os.path.join(root, venv)), *pre, "-m", "pytest", *paths, "-q",
                   "-p", "no:cacheprovider", "-p", "ndgrad_eco_select",
                   "--continue-on-collection-errors", f"--timeout={per_test_timeout}",
                   *([] if ids else [f"--junitxml={xml}"]), *SUITES[lib][3], *extra]
            env = {**os.environ, "PYTHONPATH": os.path.join(HERE, "eco_plugin"),
                   "NDGRAD_ECO_SAMPLE": str(k), "NDGRAD_ECO_OUT": out, **ENV.get(lib, {})}
            if ids:
                env["NDGRAD_ECO_IDS"] = ids
            t0 = time.time()
            try:
                subprocess.run(cmd, cwd=suite, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, timeout=timeout, env=env)
            except subprocess.TimeoutExpired:
                print(f"{lib} ({side}): suite timed out after {timeout} s")
            print(f"{lib} ({side}): {time.time() - t0:.0f} s", flush=True)
    report(root, libs)


def report(root, libs, lists=False):
    """The table; with lists, DIR/results/<lib>.torch-pass.txt and <lib>.gap.txt (the tests
    that pass on PyTorch and not on ndgrad: what --ids reruns)."""
    results = os.path.join(root, "results")
    rows, totals = [], [0, 0, 0, 0]
    for lib in libs:
        out, xml = _paths(root, lib)
        t = _counts(out.format("torch"), xml.format("torch"))
        n = _counts(out.format("ndgrad"), xml.format("ndgrad"))
        if not t and not n:
            continue
        t_pass = {k for k, v in t.items() if v == "passed"}
        n_pass = {k for k, v in n.items() if v == "passed"}
        both = len(t_pass & n_pass)
        kfile = os.path.join(results, f"{lib}.sample")
        k = int(open(kfile).read()) if os.path.exists(kfile) else SAMPLE.get(lib, 1)
        rows.append((lib + (f" (1/{k})" if k > 1 else ""), len(t), len(t_pass), len(n_pass),
                     both, 100.0 * both / len(t_pass) if t_pass else 100.0))
        for i, v in enumerate((len(t), len(t_pass), len(n_pass), both)):
            totals[i] += v
        if lists:
            for name, ids in (("torch-pass", t_pass), ("gap", t_pass - n_pass)):
                with open(os.path.join(results, f"{lib}.{name}.txt"), "w") as f:
                    f.writelines(i + "\n" for i in sorted(ids))
    print(f"\n{'library':30} {'tests':>7} {'torch':>7} {'ndgrad':>7} {'both':>7} "
          f"{'ndgrad/torch':>13}")
    for lib, total, tp, np_, both, pct in rows:
        print(f"{lib:30} {total:7d} {tp:7d} {np_:7d} {both:7d} {pct:12.1f}%")
    if rows:
        pct = 100.0 * totals[3] / totals[1] if totals[1] else 100.0
        print(f"{'total':30} {totals[0]:7d} {totals[1]:7d} {totals[2]:7d} {totals[3]:7d} "
              f"{pct:12.1f}%")
    with open(os.path.join(results, "summary.json"), "w") as f:
        json.dump({r[0]: dict(zip(("tests", "torch", "ndgrad", "both", "percent"), r[1:]))
                   for r in rows}, f, indent=1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("command", choices=["setup", "run", "report"])
    ap.add_argument("libs", nargs="*", help="libraries (default: all of SUITES)")
    ap.add_argument("--root", default=os.path.expanduser("~/.cache/ndgrad-ecosystem"))
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per suite and side")
    ap.add_argument("--per-test-timeout", type=int, default=300)
    ap.add_argument("--pytest-args", default="", help="extra pytest arguments (one string)")
    ap.add_argument("--side", choices=["torch", "ndgrad"], help="run one side only")
    ap.add_argument("--sample", type=int, help="run 1/k of each suite (default: SAMPLE)")
    ap.add_argument("--ids", help="rerun only the node ids in this file (results merge into "
                    "the last run's: a test's last outcome counts)")
    ap.add_argument("--lists", action="store_true", help="report: write each library's "
                    "PyTorch-passing ids and the gap (passing on PyTorch, not on ndgrad)")
    args = ap.parse_intermixed_args(argv)
    libs = args.libs or list(SUITES)
    unknown = [lib for lib in libs if lib not in SUITES]
    if unknown:
        ap.error(f"unknown libraries {unknown}; known: {', '.join(SUITES)}")
    if args.command == "setup":
        setup(args.root, libs)
    elif args.command == "run":
        run(args.root, libs, args.timeout, args.per_test_timeout, args.pytest_args.split(),
            (args.side,) if args.side else ("torch", "ndgrad"), args.sample, args.ids)
    else:
        report(args.root, libs, args.lists)


if __name__ == "__main__":
    main()
