"""`torch.torch_version`: `TorchVersion`, the `str` that `torch.__version__` is, comparing with
version strings, tuples and `packaging` Versions as PyTorch's does (`__version__ >= (2, 1)`,
`__version__ >= "2.0"`), by PEP 440's ordering.

PyTorch compares through its vendored `packaging`; ndgrad keeps NumPy its only dependency, so
the PEP 440 parse and order are here (`Version`, the subset TorchVersion needs: release, epoch,
pre/post/dev segments and local labels, ordered as `packaging.version.Version`).
"""
import re
from collections.abc import Iterable

__all__ = ["TorchVersion"]


class InvalidVersion(ValueError):
    """Raised for a string that is not a PEP 440 version (packaging's InvalidVersion)."""


_PATTERN = re.compile(r"""
    ^\s*v?
    (?:(?P<epoch>[0-9]+)!)?
    (?P<release>[0-9]+(?:\.[0-9]+)*)
    (?:[-_\.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_\.]?(?P<pre_n>[0-9]+)?)?
    (?:(?:-(?P<post_n1>[0-9]+))|(?:[-_\.]?(?P<post_l>post|rev|r)[-_\.]?(?P<post_n2>[0-9]+)?))?
    (?:[-_\.]?(?P<dev_l>dev)[-_\.]?(?P<dev_n>[0-9]+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_\.][a-z0-9]+)*))?
    \s*$""", re.VERBOSE | re.IGNORECASE)

_PRE = {"alpha": "a", "a": "a", "beta": "b", "b": "b", "c": "rc", "pre": "rc", "preview": "rc",
        "rc": "rc"}


class Version:
    """A PEP 440 version, ordered as `packaging.version.Version`."""

    __slots__ = ("_text", "epoch", "release", "pre", "post", "dev", "local", "_key")

    def __init__(self, version):
        m = _PATTERN.match(str(version))
        if m is None:
            raise InvalidVersion(f"Invalid version: {str(version)!r}")
        self._text = str(version).strip()
        self.epoch = int(m["epoch"] or 0)
        self.release = tuple(int(p) for p in m["release"].split("."))
        self.pre = (_PRE[m["pre_l"].lower()], int(m["pre_n"] or 0)) if m["pre_l"] else None
        post = m["post_n1"] or m["post_n2"]
        self.post = int(post or 0) if (m["post_n1"] or m["post_l"]) else None
        self.dev = int(m["dev_n"] or 0) if m["dev_l"] else None
        self.local = None if m["local"] is None else ".".join(
            re.split(r"[-_\.]", m["local"].lower()))
        release = list(self.release)
        while len(release) > 1 and release[-1] == 0:   # 2.13 == 2.13.0
            release.pop()
        if self.pre is None and self.post is None and self.dev is not None:
            pre = (-1,)                       # 1.0.dev0 sorts before 1.0a0
        else:
            pre = (1,) if self.pre is None else (0,) + self.pre
        local = (0,) if self.local is None else (1,) + tuple(
            (1, int(p), "") if p.isdigit() else (0, 0, p) for p in self.local.split("."))
        self._key = (self.epoch, tuple(release), pre,
                     (-1,) if self.post is None else (0, self.post),
                     (1,) if self.dev is None else (0, self.dev), local)

    @property
    def public(self):
        return str(self).split("+", 1)[0]

    @property
    def base_version(self):
        return (f"{self.epoch}!" if self.epoch else "") + ".".join(map(str, self.release))

    major = property(lambda self: self.release[0])
    minor = property(lambda self: self.release[1] if len(self.release) > 1 else 0)
    micro = property(lambda self: self.release[2] if len(self.release) > 2 else 0)
    is_prerelease = property(lambda self: self.pre is not None or self.dev is not None)
    is_postrelease = property(lambda self: self.post is not None)
    is_devrelease = property(lambda self: self.dev is not None)

    def __str__(self):
        s = self.base_version
        if self.pre is not None:
            s += f"{self.pre[0]}{self.pre[1]}"
        if self.post is not None:
            s += f".post{self.post}"
        if self.dev is not None:
            s += f".dev{self.dev}"
        if self.local is not None:
            s += f"+{self.local}"
        return s

    def __repr__(self):
        return f"<Version('{self}')>"

    def __hash__(self):
        return hash(self._key)

    def _other(self, other):
        return other._key if isinstance(other, Version) else None

    def __eq__(self, other):
        k = self._other(other)
        return NotImplemented if k is None else self._key == k

    def __lt__(self, other):
        k = self._other(other)
        return NotImplemented if k is None else self._key < k

    def __le__(self, other):
        k = self._other(other)
        return NotImplemented if k is None else self._key <= k

    def __gt__(self, other):
        k = self._other(other)
        return NotImplemented if k is None else self._key > k

    def __ge__(self, other):
        k = self._other(other)
        return NotImplemented if k is None else self._key >= k


class TorchVersion(str):
    """A string with magic powers to compare to both Version and iterables: PyTorch's
    `torch.__version__` type. `TorchVersion('2.13.0') > (2, 1)`, `> '2.1.1'`, `> Version(...)`;
    an unparsable operand falls back to string comparison."""

    __slots__ = ()

    def _convert_to_version(self, inp):
        if isinstance(inp, Version):
            return inp
        if isinstance(inp, str):
            return Version(inp)
        if type(inp).__name__ == "Version" and hasattr(inp, "release"):   # packaging's
            return Version(str(inp))
        if isinstance(inp, Iterable):
            return Version(".".join(str(item) for item in inp))
        raise InvalidVersion(inp)

    def _cmp_wrapper(self, cmp, method):
        try:
            return getattr(Version(self), method)(self._convert_to_version(cmp))
        except BaseException as e:
            if not isinstance(e, InvalidVersion):
                raise
            return getattr(super(), method)(cmp)

    def __hash__(self):
        return str.__hash__(self)


for _method in ("__gt__", "__lt__", "__eq__", "__ge__", "__le__"):
    setattr(TorchVersion, _method,
            lambda x, y, method=_method: x._cmp_wrapper(y, method))
del _method
