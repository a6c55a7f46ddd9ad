"""Unified diffs as clients send them: ``git diff --cached`` output, or a code host's per-file patch.

Parsing yields, per file, its status, the hunks and the head-side line numbers that were added
(the lines a review may comment on). Applying the hunks to the indexed base text recovers the
head-side content when the client sent only the diff.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_GIT_HEADER = re.compile(r"^diff --git (?:\"?a/)?(.+?)\"? (?:\"?b/)?(.+?)\"?$")
_FUZZ = 200  # lines a hunk may have moved when the base differs slightly from the indexed one


@dataclass
class Hunk:
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    lines: list[str] = field(default_factory=list)  # each starts with " ", "-" or "+"
    new_ends_without_newline: bool = False


def added_lines(hunks: list[Hunk]) -> set[int]:
    out: set[int] = set()
    for h in hunks:
        line = h.new_start
        for ln in h.lines:
            if ln.startswith("+"):
                out.add(line)
                line += 1
            elif ln.startswith(" "):
                line += 1
    return out


@dataclass
class FileDiff:
    path: str
    old_path: str = ""
    status: str = "modified"  # added | modified | deleted | renamed
    hunks: list[Hunk] = field(default_factory=list)
    binary: bool = False

    def added_lines(self) -> set[int]:
        return added_lines(self.hunks)

    def new_text(self) -> str:
        """Head-side content of an added file (its hunks hold every line)."""
        lines = [ln[1:] for h in self.hunks for ln in h.lines if ln.startswith(("+", " "))]
        ends_open = bool(self.hunks) and self.hunks[-1].new_ends_without_newline
        return "\n".join(lines) + ("" if ends_open or not lines else "\n")


def parse_hunks(text: str) -> list[Hunk]:
    """Hunks of one file's patch (a code host's ``patch`` field starts directly with ``@@``)."""
    hunks: list[Hunk] = []
    current: Hunk | None = None
    last_sign = ""
    old_left = new_left = 0  # lines the current hunk's header still promises on each side
    for raw in text.split("\n"):
        match = _HUNK.match(raw)
        if match:
            old_start, old_len, new_start, new_len = match.groups()
            current = Hunk(int(old_start), int(old_len or 1), int(new_start), int(new_len or 1))
            old_left, new_left = current.old_len, current.new_len
            hunks.append(current)
            continue
        if current is None:
            continue
        if raw.startswith("\\ "):  # "\ No newline at end of file"
            if last_sign in ("+", " "):
                current.new_ends_without_newline = True
            continue
        line = " " if raw == "" and (old_left > 0 or new_left > 0) else raw  # a dropped context space
        sign = line[:1]
        if sign not in ("+", "-", " ") or (old_left <= 0 and new_left <= 0):
            continue
        current.lines.append(line)
        last_sign = sign
        old_left -= sign in (" ", "-")
        new_left -= sign in (" ", "+")
    return hunks


def parse_unified_diff(text: str) -> list[FileDiff]:
    """Every file of a multi-file diff (git or plain ``---``/``+++`` headers)."""
    lines = text.replace("\r\n", "\n").split("\n")
    git = any(ln.startswith("diff --git ") for ln in lines)
    blocks: list[list[str]] = []
    for i, line in enumerate(lines):
        if git:
            starts = line.startswith("diff --git ")
        else:
            # "--- x" opens a file only when "+++ y" follows: a removed line "-- x" reads the same.
            starts = line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")
        if starts:
            blocks.append([line])
        elif blocks:
            blocks[-1].append(line)
    return [f for f in (_parse_block(b) for b in blocks) if f is not None]


def _strip_prefix(name: str) -> str:
    name = name.strip().strip('"')
    if name == "/dev/null":
        return ""
    return name[2:] if name.startswith(("a/", "b/")) else name


def _parse_block(block: list[str]) -> FileDiff | None:
    old = new = ""
    status = "modified"
    binary = False
    header = _GIT_HEADER.match(block[0])
    if header:
        old, new = header.group(1), header.group(2)
    body_at = len(block)
    for i, line in enumerate(block):
        if line.startswith("@@"):
            body_at = i
            break
        if line.startswith("new file mode"):
            status = "added"
        elif line.startswith("deleted file mode"):
            status = "deleted"
        elif line.startswith("rename from "):
            old, status = line[len("rename from ") :], "renamed"
        elif line.startswith("rename to "):
            new = line[len("rename to ") :]
        elif line.startswith("--- "):
            name = _strip_prefix(line[4:].split("\t")[0])
            old = name or old
            if not name:
                status = "added"
        elif line.startswith("+++ "):
            name = _strip_prefix(line[4:].split("\t")[0])
            new = name or new
            if not name:
                status = "deleted"
        elif line.startswith(("Binary files", "GIT binary patch")):
            binary = True
    path = old if status == "deleted" else new
    if not path:
        return None
    hunks = parse_hunks("\n".join(block[body_at:]))
    return FileDiff(path=path, old_path=old if old != path else "", status=status, hunks=hunks, binary=binary)


def apply(base: str, hunks: list[Hunk]) -> str | None:
    """Head-side text of ``base`` with ``hunks`` applied, or ``None`` when they do not fit it.

    A hunk is placed at its stated line, else at the nearest offset where its old side matches
    (as ``patch`` does), so a base that moved a little still applies.
    """
    lines = base.split("\n")
    ends_open = not base.endswith("\n")
    if not ends_open:
        lines.pop()
    out: list[str] = []
    cursor = 0  # next base line (0-based) not yet copied
    for h in hunks:
        old_side = [ln[1:] for ln in h.lines if ln[:1] in (" ", "-")]
        new_side = [ln[1:] for ln in h.lines if ln[:1] in (" ", "+")]
        # An empty old side ("-0,0" or "-N,0") inserts after line N.
        hint = h.old_start - 1 if old_side else h.old_start
        start = _locate(lines, old_side, max(hint, 0), cursor)
        if start is None:
            return None
        out.extend(lines[cursor:start])
        out.extend(new_side)
        cursor = start + len(old_side)
        if cursor >= len(lines):
            ends_open = h.new_ends_without_newline
    out.extend(lines[cursor:])
    return "\n".join(out) + ("" if ends_open or not out else "\n")


def _locate(lines: list[str], old_side: list[str], hint: int, floor: int) -> int | None:
    n = len(old_side)
    for delta in range(_FUZZ + 1):
        for at in (hint - delta, hint + delta) if delta else (hint,):
            if at < floor or at + n > len(lines):
                continue
            if lines[at : at + n] == old_side:
                return at
    return None
