"""Changed files and the head-side line ranges they touch.

Three sources: two commits of a mirror, a unified diff sent by a client, and the staged
changes of an operator-registered local repository. For git's own output we ask for
``--raw -z`` and the ``-U0`` patch in one run: the raw records carry exact paths, statuses
and blob ids (no quoting ambiguity), the patch (parsed by ``services/source/diff.py``, the
analyzer's parser too) carries the line ranges.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from services.indexer.git.errors import GIT_FAILED, VALIDATION_FAILED, GitInputError, GitOperationError
from services.indexer.git.paths import LocalRepository, validate_repo_path, validate_rev
from services.indexer.git.runner import run_git
from services.indexer.git.tree import BlobReader
from services.source.diff import LineRange, parse_unified_diff

MAX_DIFF_BYTES = 32 * 1024 * 1024
MAX_DIFF_FILES = 20_000
_STATUS = {"A": "added", "M": "modified", "D": "deleted", "R": "renamed", "C": "copied", "T": "type_changed"}
_NULL_SHA = re.compile(r"^0+$")
_DIFF_FLAGS = ["--no-color", "--no-ext-diff", "--no-textconv", "--find-renames", "--full-index", "--no-abbrev"]


@dataclass
class ChangedFile:
    """One file of a change as the indexer serves it (``GetChanges``): head-side ranges, counts
    and the head-side blob to read its content from."""

    path: str  # head-side path (the old path for deletions)
    status: str  # added | modified | deleted | renamed | copied | type_changed
    old_path: str = ""  # set for renames and copies
    ranges: list[LineRange] = field(default_factory=list)  # head-side lines added or changed
    added: int = 0
    deleted: int = 0
    binary: bool = False
    blob_sha: str = ""  # head-side blob, "" when deleted or unknown (client diffs)
    base_sha: str = ""  # base-side blob (of old_path for renames), "" when added or unknown


def _checked(path: str) -> str:
    try:
        return validate_repo_path(path)
    except GitInputError as exc:
        raise GitInputError(VALIDATION_FAILED, f"diff names an invalid path: {exc.message}") from None


def changes_in_diff(
    text: str | bytes, *, max_bytes: int = MAX_DIFF_BYTES, max_files: int = MAX_DIFF_FILES
) -> list[ChangedFile]:
    """The files of a unified diff (``services/source/diff.py`` parses it) with head-side
    ranges; every path is validated and the size is bounded."""
    if len(text) > max_bytes:
        raise GitInputError(VALIDATION_FAILED, f"diff larger than {max_bytes} bytes")
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    files = parse_unified_diff(text)
    if len(files) > max_files:
        raise GitInputError(VALIDATION_FAILED, f"diff touches more than {max_files} files")
    return [
        ChangedFile(
            path=_checked(f.path),
            status=f.status,
            old_path=_checked(f.old_path) if f.old_path else "",
            ranges=f.added_ranges(),
            added=f.added,
            deleted=f.deleted,
            binary=f.binary,
        )
        for f in files
    ]


def _raw_records(data: bytes) -> tuple[list[tuple[str, str, str, str, str]], bytes]:
    """Split ``--raw -z`` records (status, old path, new path, new sha, old sha) from the patch after them."""
    tokens = data.split(b"\0")
    records: list[tuple[str, str, str, str, str]] = []
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
        shas = ["" if _NULL_SHA.match(sha) else sha for sha in (meta[3], meta[2])]
        records.append((status, old, new, shas[0], shas[1]))
    return records, b"\0".join(tokens[i:])


def _combine(output: bytes) -> list[ChangedFile]:
    records, patch = _raw_records(output)
    by_path = {d.path: d for d in changes_in_diff(patch.lstrip(b"\0"), max_bytes=len(patch) + 1)}
    result: list[ChangedFile] = []
    for status, old, new, sha, base_sha in records:
        parsed = by_path.get(new if status != "D" else old)
        diff = ChangedFile(
            path=old if status == "D" else new,
            status=_STATUS.get(status, "modified"),
            old_path=old if status in ("R", "C") else "",
            blob_sha=sha,
            base_sha=base_sha,
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
) -> list[ChangedFile]:
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
    diff: ChangedFile
    content: bytes | None  # staged blob (first max_blob_bytes), None for deletions
    truncated: bool = False
    base: bytes | None = None  # the blob HEAD has (None when added, unreadable or truncated)


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
            before = reader.read(diff.base_sha) if diff.base_sha else None
            base = before.data if before is not None and not before.truncated else None
            staged.append(StagedFile(diff, blob.data if blob else None, blob.truncated if blob else False, base))
    return staged
