"""Unified diffs: the one parser of the indexer (git's own ``-U0`` output) and the analyzer
(a client's ``git diff`` or plain ``diff -u``, a code host's per-file patch).

A diff parses into one ``FileDiff`` per file: head-side path, status, the old path of a rename
or copy, binary or not, and its hunks with their lines. From the hunks come the head-side lines
a change added (``added_lines``, ``added_ranges``), the counts of added and deleted lines, an added
file's whole text (``new_text``) and, applied to a base text, the head-side text (``apply``).

Hunk bodies are consumed by the counts in their ``@@`` header, so a removed line that itself
starts with ``-- `` is never taken for a file header. Paths are returned as the diff names them
(C-quoted names unquoted, ``a/``/``b/`` prefixes removed): callers validate them by their own rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

_HUNK = re.compile(r"^@@@* -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
_FUZZ = 200  # lines a hunk may have moved when the base differs slightly from the one it was made on


class LineRange(NamedTuple):
    start: int  # 1-based, inclusive, in the head (new) version
    end: int


@dataclass
class Hunk:
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    lines: list[str] = field(default_factory=list)  # each starts with " ", "-" or "+"
    new_ends_without_newline: bool = False


@dataclass
class FileDiff:
    path: str  # head-side path (the old path for deletions)
    status: str = "modified"  # added | modified | deleted | renamed | copied
    old_path: str = ""  # set for renames and copies
    hunks: list[Hunk] = field(default_factory=list)
    binary: bool = False

    def added_lines(self) -> set[int]:
        """Head-side line numbers the change added (the lines a review may comment on)."""
        return added_lines(self.hunks)

    def added_ranges(self) -> list[LineRange]:
        """The same lines as ascending runs of consecutive numbers."""
        ranges: list[LineRange] = []
        for line in sorted(self.added_lines()):
            if ranges and ranges[-1].end + 1 == line:
                ranges[-1] = LineRange(ranges[-1].start, line)
            else:
                ranges.append(LineRange(line, line))
        return ranges

    @property
    def added(self) -> int:
        return sum(ln.startswith("+") for h in self.hunks for ln in h.lines)

    @property
    def deleted(self) -> int:
        return sum(ln.startswith("-") for h in self.hunks for ln in h.lines)

    def new_text(self) -> str:
        """Head-side content of an added file (its hunks hold every line)."""
        lines = [ln[1:] for h in self.hunks for ln in h.lines if ln.startswith(("+", " "))]
        ends_open = bool(self.hunks) and self.hunks[-1].new_ends_without_newline
        return "\n".join(lines) + ("" if ends_open or not lines else "\n")


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


def parse_hunks(text: str) -> list[Hunk]:
    """Hunks of one file's patch (a code host's ``patch`` field starts directly with ``@@``)."""
    lines = text.replace("\r\n", "\n").split("\n")
    hunks: list[Hunk] = []
    i = 0
    while i < len(lines):
        if lines[i].startswith("@@"):
            i = _consume_hunk(lines, i, hunks)
        else:
            i += 1
    return hunks


def parse_unified_diff(text: str) -> list[FileDiff]:
    """Every file of a multi-file diff, git-style (``diff --git`` and its extended headers) or
    plain (``---``/``+++`` pairs, any context size)."""
    lines = text.replace("\r\n", "\n").split("\n")
    files: list[FileDiff] = []
    current: FileDiff | None = None
    in_git_header = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("diff --git "):
            old, new = _git_header_paths(line[11:])
            current = FileDiff(path=new, old_path=old)
            files.append(current)
            in_git_header = True
        elif current is not None and in_git_header and _git_extended(current, line):
            pass
        elif line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            old, new = _header_path(line[4:]), _header_path(lines[i + 1][4:])
            if not in_git_header or current is None:
                current = FileDiff(path="")
                files.append(current)
            _apply_file_header(current, old, new, git_style=in_git_header)
            in_git_header = False
            i += 2
            continue
        elif line.startswith("@@") and current is not None:
            i = _consume_hunk(lines, i, current.hunks)
            in_git_header = False
            continue
        i += 1
    for diff in files:
        if diff.status not in ("renamed", "copied"):
            diff.old_path = ""
    return [d for d in files if d.path]


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


def _consume_hunk(lines: list[str], i: int, hunks: list[Hunk]) -> int:
    """Read the hunk whose header is ``lines[i]``; returns the index after it."""
    match = _HUNK.match(lines[i])
    if not match:
        return i + 1
    old_start, old_len, new_start, new_len = match.groups()
    hunk = Hunk(int(old_start), int(old_len or 1), int(new_start), int(new_len or 1))
    hunks.append(hunk)
    old_left, new_left = hunk.old_len, hunk.new_len
    last = ""
    i += 1
    while (old_left > 0 or new_left > 0) and i < len(lines):
        body = lines[i]
        marker = body[:1]
        if marker == "\\":  # "\ No newline at end of file", of the side of the line before
            hunk.new_ends_without_newline = last in ("+", " ")
        elif marker == "+" and new_left > 0:
            new_left -= 1
        elif marker == "-" and old_left > 0:
            old_left -= 1
        elif marker in (" ", "") and old_left > 0 and new_left > 0:
            body = " " + body[1:]  # an editor may have dropped a context line's space
            old_left -= 1
            new_left -= 1
        else:
            break  # truncated or malformed hunk: keep what we have
        if marker != "\\":
            hunk.lines.append(body)
            last = body[:1]
        i += 1
    while i < len(lines) and lines[i].startswith("\\"):
        hunk.new_ends_without_newline = last in ("+", " ")
        i += 1
    return i


def _c_unquote(text: str) -> str:
    """Undo git's C-style quoting of unusual paths ("a\\tb", octal UTF-8 bytes)."""
    body = text[1:-1] if len(text) >= 2 and text[0] == '"' and text[-1] == '"' else text
    out = bytearray()
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                i += 2
                continue
            if body[i + 1 : i + 4].isdigit():
                out.append(int(body[i + 1 : i + 4], 8) & 0xFF)
                i += 4
                continue
        out += ch.encode("utf-8")
        i += 1
    return out.decode("utf-8", "replace")


def _split_quoted(raw: str) -> tuple[str, str]:
    """The leading C-quoted token of ``raw`` (unquoted) and what follows it."""
    end = 1
    while end < len(raw):
        if raw[end] == "\\":
            end += 2
            continue
        if raw[end] == '"':
            return _c_unquote(raw[: end + 1]), raw[end + 1 :].lstrip(" ")
        end += 1
    return _c_unquote(raw + '"'), ""


def _header_path(raw: str) -> str:
    raw = raw.rstrip("\r")
    if raw.startswith('"'):
        return _split_quoted(raw)[0]
    # Plain `diff -u` appends "\t<timestamp>"; git appends a tab only to names with spaces.
    return raw.split("\t", 1)[0]


def _strip_prefix(path: str, prefix: str) -> str:
    return path[len(prefix) :] if path.startswith(prefix) else path


def _git_header_paths(rest: str) -> tuple[str, str]:
    """Paths of "diff --git a/X b/Y", used only when no ---/+++ lines follow (binary, mode)."""
    rest = rest.rstrip("\r")
    if rest.startswith('"'):
        old, tail = _split_quoted(rest)
        return _strip_prefix(old, "a/"), _strip_prefix(_header_path(tail), "b/")
    half = (len(rest) - 1) // 2
    if rest[half] == " " and rest[2:half] == rest[half + 3 :]:
        return rest[2:half], rest[half + 3 :]
    old, _, new = rest.partition(" b/")
    return _strip_prefix(old, "a/"), new


def _git_extended(diff: FileDiff, line: str) -> bool:
    """Apply one extended header line of a git diff; False when the line is not one."""
    line = line.rstrip("\r")
    if line.startswith("new file mode"):
        diff.status = "added"
    elif line.startswith("deleted file mode"):
        diff.status = "deleted"
        diff.path = diff.old_path or diff.path
    elif line.startswith(("rename from ", "copy from ")):
        diff.status = "renamed" if line.startswith("rename") else "copied"
        diff.old_path = _header_path(line.split(" ", 2)[2])
    elif line.startswith(("rename to ", "copy to ")):
        diff.path = _header_path(line.split(" ", 2)[2])
    elif line.startswith("Binary files ") or line == "GIT binary patch":
        diff.binary = True
    else:
        return line.startswith(("old mode", "new mode", "index ", "similarity", "dissimilarity"))
    return True


def _apply_file_header(diff: FileDiff, old: str, new: str, *, git_style: bool) -> None:
    if git_style or (old.startswith("a/") and new.startswith("b/")) or "/dev/null" in (old, new):
        old, new = _strip_prefix(old, "a/"), _strip_prefix(new, "b/")
    if new == "/dev/null":
        diff.status, diff.path, diff.old_path = "deleted", old, ""
    elif old == "/dev/null":
        diff.status, diff.path = "added", new
    else:
        diff.path = new
        if not git_style and old != new:
            diff.status, diff.old_path = "renamed", old
