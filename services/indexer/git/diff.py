"""Changed files and the head-side line ranges they touch.

Three sources: two commits of a mirror, a unified diff sent by a client, and the staged
changes of an operator-registered local repository. For git's own output we ask for
``--raw -z`` and the ``-U0`` patch in one run: the raw records carry exact paths, statuses
and blob ids (no quoting ambiguity), the patch carries the line ranges.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import NamedTuple

from services.indexer.git.errors import GIT_FAILED, VALIDATION_FAILED, GitInputError, GitOperationError
from services.indexer.git.paths import LocalRepository, validate_repo_path, validate_rev
from services.indexer.git.runner import run_git
from services.indexer.git.tree import BlobReader

MAX_DIFF_BYTES = 32 * 1024 * 1024
MAX_DIFF_FILES = 20_000
_HUNK = re.compile(r"^@@@* -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_STATUS = {"A": "added", "M": "modified", "D": "deleted", "R": "renamed", "C": "copied", "T": "type_changed"}
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
_NULL_SHA = re.compile(r"^0+$")
_DIFF_FLAGS = ["--no-color", "--no-ext-diff", "--no-textconv", "--find-renames", "--full-index", "--no-abbrev"]


class LineRange(NamedTuple):
    start: int  # 1-based, inclusive, in the head (new) version
    end: int


@dataclass
class FileDiff:
    path: str  # head-side path (the old path for deletions)
    status: str  # added | modified | deleted | renamed | copied | type_changed
    old_path: str = ""  # set for renames and copies
    ranges: list[LineRange] = field(default_factory=list)  # head-side lines added or changed
    added: int = 0
    deleted: int = 0
    binary: bool = False
    blob_sha: str = ""  # head-side blob, "" when deleted or unknown (client diffs)


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


def _checked(path: str) -> str:
    try:
        return validate_repo_path(path)
    except GitInputError as exc:
        raise GitInputError(VALIDATION_FAILED, f"diff names an invalid path: {exc.message}") from None


def _add_line(ranges: list[LineRange], line: int) -> None:
    if ranges and ranges[-1].end + 1 == line:
        ranges[-1] = LineRange(ranges[-1].start, line)
    else:
        ranges.append(LineRange(line, line))


def parse_unified_diff(
    text: str | bytes, *, max_bytes: int = MAX_DIFF_BYTES, max_files: int = MAX_DIFF_FILES
) -> list[FileDiff]:
    """Parse git-style or plain unified diffs (any context size) into per-file head ranges.

    Hunk bodies are consumed by the counts in their ``@@`` header, so a removed line that
    itself starts with "-- " is never mistaken for a file header. Paths are validated.
    """
    if isinstance(text, bytes):
        if len(text) > max_bytes:
            raise GitInputError(VALIDATION_FAILED, f"diff larger than {max_bytes} bytes")
        text = text.decode("utf-8", "replace")
    elif len(text) > max_bytes:
        raise GitInputError(VALIDATION_FAILED, f"diff larger than {max_bytes} bytes")
    lines = text.split("\n")
    files: list[FileDiff] = []
    current: FileDiff | None = None
    in_git_header = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("diff --git "):
            old, new = _git_header_paths(line[11:])
            current = FileDiff(path=_checked(new), status="modified")
            current.old_path = _checked(old)
            files.append(current)
            in_git_header = True
        elif current is not None and in_git_header and _git_extended(current, line):
            pass
        elif line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            old, new = _header_path(line[4:]), _header_path(lines[i + 1][4:])
            if not in_git_header or current is None:
                current = FileDiff(path="", status="modified")
                files.append(current)
            _apply_file_header(current, old, new, git_style=in_git_header)
            in_git_header = False
            i += 2
            continue
        elif line.startswith("@@") and current is not None:
            i = _consume_hunk(lines, i, current)
            in_git_header = False
            continue
        if len(files) > max_files:
            raise GitInputError(VALIDATION_FAILED, f"diff touches more than {max_files} files")
        i += 1
    for diff in files:
        if diff.status not in ("renamed", "copied"):
            diff.old_path = ""
    return [d for d in files if d.path]


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
        diff.old_path = _checked(_header_path(line.split(" ", 2)[2]))
    elif line.startswith(("rename to ", "copy to ")):
        diff.path = _checked(_header_path(line.split(" ", 2)[2]))
    elif line.startswith("Binary files ") or line == "GIT binary patch":
        diff.binary = True
    else:
        return line.startswith(("old mode", "new mode", "index ", "similarity", "dissimilarity"))
    return True


def _apply_file_header(diff: FileDiff, old: str, new: str, *, git_style: bool) -> None:
    if git_style or (old.startswith("a/") and new.startswith("b/")) or "/dev/null" in (old, new):
        old, new = _strip_prefix(old, "a/"), _strip_prefix(new, "b/")
    if new == "/dev/null":
        diff.status, diff.path, diff.old_path = "deleted", _checked(old), ""
    elif old == "/dev/null":
        diff.status, diff.path = "added", _checked(new)
    else:
        diff.path = _checked(new)
        if not git_style and old != new:
            diff.status, diff.old_path = "renamed", _checked(old)


def _consume_hunk(lines: list[str], i: int, diff: FileDiff) -> int:
    match = _HUNK.match(lines[i])
    if not match:
        return i + 1
    old_left = int(match.group(2)) if match.group(2) is not None else 1
    new_left = int(match.group(4)) if match.group(4) is not None else 1
    line_no = int(match.group(3))
    i += 1
    while (old_left > 0 or new_left > 0) and i < len(lines):
        body = lines[i]
        marker = body[:1]
        if marker == "\\":
            pass
        elif marker == "+" and new_left > 0:
            _add_line(diff.ranges, line_no)
            diff.added += 1
            line_no += 1
            new_left -= 1
        elif marker == "-" and old_left > 0:
            diff.deleted += 1
            old_left -= 1
        elif marker in (" ", "") and old_left > 0 and new_left > 0:
            line_no += 1
            old_left -= 1
            new_left -= 1
        else:
            break  # truncated or malformed hunk: keep what we have
        i += 1
    while i < len(lines) and lines[i].startswith("\\"):
        i += 1
    return i


def _raw_records(data: bytes) -> tuple[list[tuple[str, str, str, str]], bytes]:
    """Split ``--raw -z`` records (status, old path, new path, new sha) from the patch after them."""
    tokens = data.split(b"\0")
    records: list[tuple[str, str, str, str]] = []
    i = 0
    while i < len(tokens) and tokens[i].startswith(b":"):
        meta = tokens[i].decode("ascii", "replace").split()
        if len(meta) != 5:
            raise GitOperationError(GIT_FAILED, f"unexpected raw diff record {tokens[i][:80]!r}")
        status = meta[4][:1]
        old = tokens[i + 1].decode("utf-8", "replace")
        new = old
        i += 2
        if status in ("R", "C"):
            new = tokens[i].decode("utf-8", "replace")
            i += 1
        records.append((status, old, new, "" if _NULL_SHA.match(meta[3]) else meta[3]))
    return records, b"\0".join(tokens[i:])


def _combine(output: bytes) -> list[FileDiff]:
    records, patch = _raw_records(output)
    by_path = {d.path: d for d in parse_unified_diff(patch.lstrip(b"\0"), max_bytes=len(patch) + 1)}
    result: list[FileDiff] = []
    for status, old, new, sha in records:
        parsed = by_path.get(new if status != "D" else old)
        diff = FileDiff(
            path=old if status == "D" else new,
            status=_STATUS.get(status, "modified"),
            old_path=old if status in ("R", "C") else "",
            blob_sha=sha,
        )
        if parsed is not None:
            diff.ranges, diff.added, diff.deleted, diff.binary = (
                parsed.ranges,
                parsed.added,
                parsed.deleted,
                parsed.binary,
            )
        result.append(diff)
    return result


def changed_files(
    mirror: str | os.PathLike[str],
    base: str,
    head: str,
    *,
    merge_base: bool = False,
    timeout: float = 120.0,
    max_output: int = MAX_DIFF_BYTES,
) -> list[FileDiff]:
    """Files that differ between ``base`` and ``head`` with head-side changed ranges.

    ``merge_base=True`` diffs from the merge base (``base...head``), i.e. what a pull request
    introduces regardless of later commits on the base branch.
    """
    validate_rev(base)
    validate_rev(head)
    revs = [f"{base}...{head}"] if merge_base else [base, head]
    result = run_git(
        ["diff", "--raw", "-p", "-z", "-U0", *_DIFF_FLAGS, "--end-of-options", *revs],
        git_dir=mirror,
        timeout=timeout,
        max_output=max_output,
    )
    return _combine(result.stdout)


@dataclass
class StagedFile:
    diff: FileDiff
    content: bytes | None  # staged blob (first max_blob_bytes), None for deletions
    truncated: bool = False


def staged_changes(
    repo: LocalRepository,
    *,
    max_blob_bytes: int = 2 * 1024 * 1024,
    timeout: float = 60.0,
    max_output: int = MAX_DIFF_BYTES,
) -> list[StagedFile]:
    """What ``git commit`` would record now: index vs HEAD (vs nothing before the first commit).

    Contents are read from the index's blob ids through one cat-file process (the same bytes
    as ``git show :path``, without spawning git per file or applying textconv filters).
    """
    if repo.bare:
        raise GitInputError(VALIDATION_FAILED, "a bare repository has no staged changes")
    result = run_git(
        ["diff", "--cached", "--raw", "-p", "-z", "-U0", *_DIFF_FLAGS],
        git_dir=repo.git_dir,
        cwd=repo.path,
        timeout=timeout,
        max_output=max_output,
    )
    diffs = _combine(result.stdout)
    staged: list[StagedFile] = []
    with BlobReader(repo.git_dir, max_bytes=max_blob_bytes, timeout=timeout) as reader:
        for diff in diffs:
            blob = reader.read(diff.blob_sha) if diff.blob_sha else None
            staged.append(StagedFile(diff, blob.data if blob else None, blob.truncated if blob else False))
    return staged
