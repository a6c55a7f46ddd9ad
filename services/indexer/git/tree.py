"""List a commit's files and read their blobs.

Nothing here touches a work tree: entries come from ``git ls-tree`` and contents from the
object database, so a symlink (mode 120000) is only its target string and a submodule
(mode 160000) only a commit id; neither is ever followed.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Generator, Iterable, Iterator
from typing import NamedTuple

from services.indexer.git.errors import GIT_FAILED, OUTPUT_TOO_LARGE, GitOperationError
from services.indexer.git.paths import validate_rev, validate_sha
from services.indexer.git.runner import GitStream, run_git

MODE_FILE = "100644"
MODE_EXECUTABLE = "100755"
MODE_SYMLINK = "120000"
MODE_SUBMODULE = "160000"
_CHUNK = 1024 * 1024


class TreeEntry(NamedTuple):
    path: str
    mode: str
    blob_sha: str  # for a submodule: the commit it pins
    size: int | None  # None for submodules, which have no blob

    @property
    def is_symlink(self) -> bool:
        return self.mode == MODE_SYMLINK

    @property
    def is_submodule(self) -> bool:
        return self.mode == MODE_SUBMODULE

    @property
    def is_regular(self) -> bool:
        return self.mode in (MODE_FILE, MODE_EXECUTABLE)


def list_tree(
    mirror: str | os.PathLike[str],
    commit: str,
    *,
    timeout: float = 120.0,
    max_entries: int = 1_000_000,
) -> list[TreeEntry]:
    """Every file of ``commit`` recursively, with blob sizes, in git's path order."""
    validate_rev(commit)
    # ~200 bytes per entry is generous for ls-tree -l output; bounds memory on hostile trees.
    result = run_git(
        ["ls-tree", "-r", "-l", "-z", "--full-tree", "--end-of-options", commit],
        git_dir=mirror,
        timeout=timeout,
        max_output=max_entries * 200 + 4096,
    )
    entries: list[TreeEntry] = []
    for record in result.stdout.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        fields = meta.split()
        if len(fields) != 4 or not raw_path:
            raise GitOperationError(GIT_FAILED, f"unexpected ls-tree record {record[:80]!r}")
        mode, _type, sha, size = (f.decode("ascii") for f in fields)
        # Paths are bytes in git; a lossy decode only affects display, blobs are read by sha.
        path = raw_path.decode("utf-8", "replace")
        entries.append(TreeEntry(path, mode, sha, None if size == "-" else int(size)))
        if len(entries) > max_entries:
            raise GitOperationError(OUTPUT_TOO_LARGE, f"tree has more than {max_entries} entries")
    return entries


class Blob(NamedTuple):
    sha: str
    type: str  # "blob" normally; a tree/commit id yields that object's type
    size: int  # full size in the object database
    data: bytes  # at most the reader's max_bytes
    truncated: bool


class BlobReader:
    """Read many objects through ONE ``git cat-file --batch`` process.

    Spawning git per blob dominates indexing time on large trees; one batch process answers
    each request in microseconds. Use as a context manager; not thread-safe.
    """

    def __init__(
        self,
        mirror: str | os.PathLike[str],
        *,
        max_bytes: int = 8 * 1024 * 1024,
        timeout: float = 3600.0,
    ) -> None:
        self.max_bytes = max_bytes
        self._stream = GitStream(["cat-file", "--batch"], git_dir=mirror, timeout=timeout, stdin=True)

    def __enter__(self) -> BlobReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._stream.close()

    def _header(self, sha: str) -> tuple[str, int] | None:
        validate_sha(sha)  # also keeps newlines and "rev:path" syntax out of the batch protocol
        try:
            self._stream.stdin.write(sha.encode("ascii") + b"\n")
            self._stream.stdin.flush()
            line = self._stream.stdout.readline(512)
        except (BrokenPipeError, ValueError):
            line = b""
        if not line.endswith(b"\n"):
            self._stream.check_alive()
            raise GitOperationError(GIT_FAILED, "git cat-file stopped answering")
        parts = line.decode("ascii", "replace").split()
        if len(parts) == 2 and parts[1] in ("missing", "ambiguous"):
            return None
        if len(parts) != 3 or parts[0] != sha:
            raise GitOperationError(GIT_FAILED, f"unexpected cat-file header {line[:120]!r}")
        return parts[1], int(parts[2])

    def _take(self, n: int) -> bytes:
        data = self._stream.stdout.read(n)
        if data is None or len(data) != n:
            self._stream.check_alive()
            raise GitOperationError(GIT_FAILED, "git cat-file output ended early")
        return data

    def iter_chunks(self, sha: str, chunk_size: int = _CHUNK) -> Generator[bytes, None, None]:
        """Stream one object without holding it in memory; None-equivalent (nothing) if missing.

        Abandoning the iterator drains the rest so the next request stays in sync.
        """
        header = self._header(sha)
        if header is None:
            return
        remaining = header[1]
        try:
            while remaining:
                chunk = self._take(min(chunk_size, remaining))
                remaining -= len(chunk)
                yield chunk
        finally:
            while remaining:
                remaining -= len(self._take(min(_CHUNK, remaining)))
            self._take(1)

    def read(self, sha: str, max_bytes: int | None = None) -> Blob | None:
        """The object's content (first ``max_bytes`` of it), or None when it does not exist."""
        limit = self.max_bytes if max_bytes is None else max_bytes
        header = self._header(sha)
        if header is None:
            return None
        obj_type, size = header
        kept = bytearray()
        remaining = size
        while remaining:
            chunk = self._take(min(_CHUNK, remaining))
            remaining -= len(chunk)
            if len(kept) < limit:
                kept += chunk[: limit - len(kept)]
        self._take(1)
        return Blob(sha, obj_type, size, bytes(kept), size > limit)

    def read_many(self, shas: Iterable[str], max_bytes: int | None = None) -> Iterator[tuple[str, Blob | None]]:
        for sha in shas:
            yield sha, self.read(sha, max_bytes)


def modified_entries(
    mirror: str | os.PathLike[str], old: str, new: str, *, timeout: float = 120.0, max_entries: int = 1_000_000
) -> list[TreeEntry] | None:
    """The entries of ``new`` whose mode or blob differ from ``old``, with sizes, when the two
    trees have the same paths; None when a path was added or removed (then list the tree).

    What the change touched, not the whole tree: an incremental index of a large repository
    reads these instead of ``ls-tree`` of every file.
    """
    validate_sha(old)
    validate_sha(new)
    diff = run_git(
        ["diff-tree", "-r", "-z", "--no-renames", "--raw", "--end-of-options", old, new],
        git_dir=mirror,
        timeout=timeout,
        max_output=max_entries * 200 + 4096,
    )
    fields = diff.stdout.split(b"\0")
    changed: list[tuple[str, str, str]] = []  # path, mode, sha
    for meta, raw_path in zip(fields[0::2], fields[1::2], strict=False):
        parts = meta.decode("ascii", "replace").lstrip(":").split()
        if len(parts) != 5:
            raise GitOperationError(GIT_FAILED, f"unexpected diff-tree record {meta[:80]!r}")
        _old_mode, mode, _old_sha, sha, status = parts
        if status[:1] not in ("M", "T"):
            return None
        changed.append((raw_path.decode("utf-8", "replace"), mode, sha))
    if len(changed) > max_entries:
        raise GitOperationError(OUTPUT_TOO_LARGE, f"tree has more than {max_entries} entries")
    sizes = _sizes(mirror, [sha for _path, mode, sha in changed if mode != MODE_SUBMODULE], timeout)
    return [TreeEntry(path, mode, sha, None if mode == MODE_SUBMODULE else sizes[sha]) for path, mode, sha in changed]


def _sizes(mirror: str | os.PathLike[str], shas: list[str], timeout: float) -> dict[str, int]:
    if not shas:
        return {}
    for sha in shas:
        validate_sha(sha)
    sizes: dict[str, int] = {}
    with GitStream(["cat-file", "--batch-check"], git_dir=mirror, timeout=timeout, stdin=True) as stream:

        def feed() -> None:  # from a thread: neither side may block the other on a full pipe
            try:
                stream.stdin.write(b"".join(sha.encode("ascii") + b"\n" for sha in shas))
                stream.stdin.close()
            except (BrokenPipeError, ValueError, OSError):
                pass  # git stopped: the reader reports why

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        try:
            for sha in shas:
                parts = stream.stdout.readline(512).decode("ascii", "replace").split()
                if len(parts) != 3 or parts[0] != sha or not parts[2].isdigit():
                    stream.check_alive()
                    raise GitOperationError(GIT_FAILED, f"unexpected cat-file record {parts!r}")
                sizes[sha] = int(parts[2])
        finally:
            writer.join(timeout=5)
    return sizes
