"""Stream commit history with per-file line counts from one ``git log`` process.

Format: each commit starts with a NUL-terminated token ``\\x1e<sha>`` followed by four more
NUL-terminated header fields (committer time, author email, author name, subject); ``-z``
numstat records follow, also NUL-terminated. Header fields are taken by position, so a
subject containing our separator bytes cannot desynchronise the parser.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from typing import NamedTuple

from services.indexer.git.errors import GIT_FAILED, GitOperationError
from services.indexer.git.paths import validate_rev
from services.indexer.git.runner import GitStream

_FORMAT = "%x1e%H%x00%ct%x00%ae%x00%an%x00%s"
_HEADER_FIELDS = 4
_READ = 256 * 1024


class FileChange(NamedTuple):
    path: str
    added: int  # 0 for binary files, whose numstat is "-"
    deleted: int


class Commit(NamedTuple):
    sha: str
    author_email: str
    author_name: str
    timestamp: int  # committer time (when the change landed), seconds since the epoch
    subject: str
    files: list[FileChange]


def _tokens(stream: GitStream) -> Iterator[bytes]:
    pending = b""
    while True:
        chunk = os.read(stream.stdout.fileno(), _READ)
        if not chunk:
            break
        pending += chunk
        parts = pending.split(b"\0")
        pending = parts.pop()
        yield from parts
    if pending:
        yield pending


def _count(raw: str) -> int:
    return 0 if raw == "-" else int(raw)


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def read_log(
    mirror: str | os.PathLike[str],
    commit: str = "HEAD",
    max_commits: int = 10_000,
    *,
    include_merges: bool = False,
    detect_renames: bool = False,
    timeout: float = 600.0,
) -> Generator[Commit, None, None]:
    """Newest-first commits reachable from ``commit``, at most ``max_commits``.

    Merges are skipped by default: without ``-m`` git shows no file list for them, and with
    it they would double-count their branch's changes. With ``detect_renames`` a renamed
    file's counts are reported under its new path; otherwise a rename is a delete plus an add.
    Stopping iteration early kills the git process.
    """
    validate_rev(commit)
    args = ["log", f"--format={_FORMAT}", "--numstat", "-z", f"--max-count={max(0, int(max_commits))}"]
    args += ["--find-renames" if detect_renames else "--no-renames"]
    if not include_merges:
        args.append("--no-merges")
    args += ["--end-of-options", commit]
    with GitStream(args, git_dir=mirror, timeout=timeout) as stream:
        yield from _parse(_tokens(stream))
        stream.finish()


def _parse(tokens: Iterator[bytes]) -> Iterator[Commit]:
    current: Commit | None = None
    for token in tokens:
        if token.startswith(b"\x1e"):
            if current is not None:
                yield current
            header = [next(tokens, b"") for _ in range(_HEADER_FIELDS)]
            ts, email, name, subject = (_text(h) for h in header)
            try:
                timestamp = int(ts)
            except ValueError:
                raise GitOperationError(GIT_FAILED, f"unexpected git log header {header!r}") from None
            current = Commit(_text(token[1:]), email, name, timestamp, subject, [])
            continue
        if current is None:
            raise GitOperationError(GIT_FAILED, "git log output did not start with a commit")
        record = token.lstrip(b"\n")
        if not record:
            continue
        try:
            added, deleted, path = record.split(b"\t", 2)
        except ValueError:
            raise GitOperationError(GIT_FAILED, f"unexpected numstat record {record[:80]!r}") from None
        if not path:
            # Rename record: "added\tdeleted\t" then the old and new paths as separate tokens.
            next(tokens, b"")
            path = next(tokens, b"")
        current.files.append(FileChange(_text(path), _count(_text(added)), _count(_text(deleted))))
    if current is not None:
        yield current
