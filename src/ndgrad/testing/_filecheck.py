"""FileCheck on strings, as torch.testing.FileCheck (LLVM FileCheck's directives): each check
searches the text from where the previous one matched.

    FileCheck().check("def").check_not("goto").check_count("return", 2).run(source)

check_dag, check_regex and check_source_highlighted are TorchScript-graph helpers in PyTorch;
they are supported on strings too (check_dag: matches in any order within a group)."""
import re

__all__ = ["FileCheck"]


def _highlight(text, start, end):
    """The searched text with a `~~~ <--- HERE` marker under [start, end) (up to 3 lines of
    context either side), as PyTorch's SourceRange::highlight."""
    lines = text.split("\n")
    offsets, pos = [], 0
    for line in lines:
        offsets.append(pos)
        pos += len(line) + 1
    row = max(i for i, o in enumerate(offsets) if o <= min(start, len(text)))
    col = start - offsets[row]
    width = max(1, min(end, offsets[row] + len(lines[row])) - start)
    out = lines[max(0, row - 3):row + 1]
    out.append(" " * col + "~" * width + " <--- HERE")
    out += lines[row + 1:row + 4]
    return "\n".join(out) + "\n"


class _Check:
    def __init__(self, kind, text, count=None, exactly=False):
        self.kind, self.text, self.count, self.exactly = kind, text, count, exactly

    @property
    def label(self):
        if self.kind == "CHECK-COUNT":
            return f"CHECK-COUNT-{self.count}"
        return self.kind


class FileCheck:
    """torch.testing.FileCheck: chain checks, then run(text)."""

    def __init__(self):
        self._checks = []
        self._has_run = False

    def _add(self, check):
        self._checks.append(check)
        return self

    def check(self, s):
        return self._add(_Check("CHECK", s))

    def check_not(self, s):
        return self._add(_Check("CHECK-NOT", s))

    def check_same(self, s):
        return self._add(_Check("CHECK-SAME", s))

    def check_next(self, s):
        return self._add(_Check("CHECK-NEXT", s))

    def check_count(self, s, count, exactly=False):
        return self._add(_Check("CHECK-COUNT", str(s), int(count), exactly))

    def check_dag(self, s):
        return self._add(_Check("CHECK-DAG", s))

    def check_regex(self, s):
        return self._add(_Check("CHECK-REGEX", s))

    def check_source_highlighted(self, s):
        return self._add(_Check("CHECK-SOURCE-HIGHLIGHTED", s))

    def run(self, checks_file, test_file=None):
        """Run the checks on a string (or on str(obj), e.g. a graph's text)."""
        self._has_run = True
        text = str(checks_file if test_file is None else test_file)
        if not self._checks:
            raise RuntimeError("No checks have been added to this instance of"
                               "Filecheck! Check for bad input.")
        pos, pending_not, i = 0, [], 0
        checks = self._checks
        while i < len(checks):
            c = checks[i]
            if c.kind == "CHECK-NOT":
                pending_not.append(c)
                i += 1
                continue
            if c.kind == "CHECK-DAG":
                group = []
                while i < len(checks) and checks[i].kind == "CHECK-DAG":
                    group.append(checks[i])
                    i += 1
                end = pos
                for g in group:
                    start, stop = self._find(text, g, pos, g.text)
                    end = max(end, stop)
                self._check_nots(text, pending_not, pos, min(
                    self._find(text, g, pos, g.text)[0] for g in group))
                pending_not, pos = [], end
                continue
            start, stop = self._match(text, c, pos)
            self._check_nots(text, pending_not, pos, start)
            pending_not, pos = [], stop
            i += 1
        self._check_nots(text, pending_not, pos, len(text))

    @staticmethod
    def _fail_find(text, c, pos, what):
        raise RuntimeError(f'Expected to find "{what}" but did not find it\nSearched string:\n'
                           + _highlight(text, pos, pos + len(what)) + f"From {c.label}: {c.text}\n")

    def _find(self, text, c, pos, what):
        if c.kind == "CHECK-REGEX":
            m = re.compile(what).search(text, pos)
            if m is None:
                self._fail_find(text, c, pos, what)
            return m.start(), m.end()
        k = text.find(what, pos)
        if k < 0:
            self._fail_find(text, c, pos, what)
        return k, k + len(what)

    def _check_nots(self, text, nots, start, end):
        for c in nots:
            k = text.find(c.text, start, end)
            if k >= 0:
                self._found_unexpected(text, c, k, c.text)

    @staticmethod
    def _found_unexpected(text, c, k, what):
        raise RuntimeError(f'Expected to not find "{what}" but found it\n'
                           + _highlight(text, k, k + len(what)) + f"From {c.label}: {c.text}\n")

    def _match(self, text, c, pos):
        if c.kind == "CHECK-COUNT":
            start = None
            for _ in range(c.count):
                s, pos = self._find(text, c, pos, c.text)
                start = s if start is None else start
            if c.exactly:
                k = text.find(c.text, pos)
                if k >= 0:
                    self._found_unexpected(text, _Check("CHECK-NOT", c.text), k, c.text)
            return (pos if start is None else start), pos
        start, stop = self._find(text, c, pos, c.text)
        if c.kind in ("CHECK-SAME", "CHECK-NEXT"):
            newlines = text.count("\n", pos, start)
            if c.kind == "CHECK-SAME" and newlines:
                self._found_unexpected(text, c, text.find("\n", pos), "\\n")
            if c.kind == "CHECK-NEXT" and newlines != 1:
                if newlines == 0:
                    raise RuntimeError('Expected to find "\\n" but did not find it\n'
                                       "Searched string:\n" + _highlight(text, pos, start)
                                       + f"From {c.label}: {c.text}\n")
                k = text.find("\n", text.find("\n", pos) + 1)
                self._found_unexpected(text, c, k, "\\n")
        return start, stop
