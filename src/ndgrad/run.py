"""Run an unchanged PyTorch program on ndgrad: `import torch` inside it loads ndgrad.

    python -m ndgrad.run script.py [args ...]
    python -m ndgrad.run -m package.module [args ...]
    python -m ndgrad.run -c "import torch; print(torch.ones(2))"

The program sees what `python script.py [args]` (or `python -m module`, `python -c`) would show
it: `sys.argv`, `__name__ == "__main__"`, `sys.path[0]` (the script's folder; the current folder
for -m and -c). Running through this module is the opt-in: the alias applies even where a real
PyTorch is installed, and in the Python processes the program starts (multiprocessing's spawned
workers, subprocesses: NDGRAD_ALIAS_TORCH=1 and a sitecustomize on PYTHONPATH).
"""
import os
import runpy
import sys
import types

USAGE = ("usage: python -m ndgrad.run script.py [args ...]\n"
         "       python -m ndgrad.run -m module [args ...]\n"
         "       python -m ndgrad.run -c command [args ...]")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    if argv[0] in ("-m", "-c") and len(argv) < 2:
        print(f"Argument expected for the {argv[0]} option\n{USAGE}", file=sys.stderr)
        return 2

    from ._alias import alias_torch
    alias_torch()
    # the processes the program starts (multiprocessing's spawned workers, Python
    # subprocesses) alias torch at startup too: _runner_site/sitecustomize.py
    site = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_runner_site")
    os.environ["NDGRAD_ALIAS_TORCH"] = "1"
    old = os.environ.get("PYTHONPATH")
    if site not in (old or "").split(os.pathsep):
        os.environ["PYTHONPATH"] = site + (os.pathsep + old if old else "")

    if argv[0] == "-m":
        sys.argv = [argv[1]] + argv[2:]     # runpy puts the module's file in argv[0]
        sys.path[0:1] = [os.getcwd()]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    elif argv[0] == "-c":
        sys.argv = ["-c"] + argv[2:]
        sys.path[0:1] = [""]
        main_module = types.ModuleType("__main__")
        sys.modules["__main__"] = main_module
        exec(compile(argv[1], "<string>", "exec"), main_module.__dict__)
    else:
        path = argv[0]
        if not os.path.exists(path):
            print(f"{sys.executable}: can't open file {os.path.abspath(path)!r}: "
                  "[Errno 2] No such file or directory", file=sys.stderr)
            return 2
        sys.argv = argv
        sys.path[0:1] = [os.path.dirname(os.path.abspath(path))]
        runpy.run_path(path, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
