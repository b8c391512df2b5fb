"""Install libraries that depend on torch without pulling PyTorch in.

    python -m ndgrad.torch_dist install      # then: pip install x-transformers pyro-ppl ...
    python -m ndgrad.torch_dist remove
    python -m ndgrad.torch_dist status

`install` writes a metadata-only distribution `torch-2.13.0+ndgrad<ver>.dist-info` into the
environment's site-packages (or `--target DIR`): a METADATA naming torch at ndgrad's
`torch.version.__version__`, and a RECORD listing only its own files. pip's resolver then sees
a torch that satisfies `torch>=...` requirements up to 2.13.x and installs a library's other
dependencies as usual, never PyTorch. It installs no `torch` module: `import torch` still needs
`python -m ndgrad.run` (or `ndgrad.alias_torch()`); a plain `import torch` fails as before, and
`importlib.util.find_spec("torch")` is None outside the alias. `pip uninstall torch` removes it
as it would any distribution, and a requirement on torch > 2.13 makes pip replace it with a real
PyTorch (what that library asked for); `remove` deletes it.
"""
import argparse
import os
import sys
import sysconfig

from .version import __version__, ndgrad_version

NAME = "torch"


def _dist_info_name():
    return f"{NAME}-{__version__}.dist-info"


def _site_packages():
    return sysconfig.get_paths()["purelib"]


def _existing(target):
    try:
        names = os.listdir(target)
    except FileNotFoundError:
        return []
    return sorted(n for n in names
                  if n.lower().startswith(NAME + "-") and n.endswith(".dist-info"))


def _is_ours(target, name):
    path = os.path.join(target, name, "INSTALLER")
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip() == "ndgrad"
    except OSError:
        return False


def install(target=None):
    target = target or _site_packages()
    for name in _existing(target):
        if not _is_ours(target, name):
            raise SystemExit(f"a real PyTorch is installed in {target} ({name}): "
                             "`pip uninstall torch` first, or use another environment")
        remove(target)
    folder = os.path.join(target, _dist_info_name())
    os.makedirs(folder)
    # it requires ndgrad only where ndgrad is an installed distribution (pip would otherwise
    # look for it on the index)
    import importlib.metadata
    try:
        importlib.metadata.distribution("ndgrad")
        requires = "Requires-Dist: ndgrad\n"
    except importlib.metadata.PackageNotFoundError:
        requires = ""
    files = {
        "METADATA": (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {__version__}\n"
                     f"Summary: metadata only: torch is provided by ndgrad {ndgrad_version} "
                     f"(python -m ndgrad.run)\n{requires}"),
        "INSTALLER": "ndgrad\n",
        "top_level.txt": "",
    }
    for fname, text in files.items():
        with open(os.path.join(folder, fname), "w", encoding="utf-8") as f:
            f.write(text)
    record = [f"{_dist_info_name()}/{fname},," for fname in files] + [
        f"{_dist_info_name()}/RECORD,,"]
    with open(os.path.join(folder, "RECORD"), "w", encoding="utf-8") as f:
        f.write("\n".join(record) + "\n")
    return folder


def remove(target=None):
    import shutil
    target = target or _site_packages()
    removed = []
    for name in _existing(target):
        if _is_ours(target, name):
            shutil.rmtree(os.path.join(target, name))
            removed.append(name)
    return removed


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m ndgrad.torch_dist",
        description="Metadata that lets pip install torch-based libraries on ndgrad.")
    parser.add_argument("command", choices=["install", "remove", "status"])
    parser.add_argument("--target", help="site-packages folder (default: this environment's)")
    args = parser.parse_args(argv)
    target = args.target or _site_packages()
    if args.command == "install":
        print(f"installed {install(target)}")
    elif args.command == "remove":
        removed = remove(target)
        print("removed " + ", ".join(removed) if removed else "nothing to remove")
    else:
        names = _existing(target)
        if not names:
            print(f"no torch distribution in {target}")
        for name in names:
            print(f"{name}: {'ndgrad metadata' if _is_ours(target, name) else 'a real PyTorch'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
